#include "dra/compute_domain.h"

#include "model/workload.h"

namespace tessera::dra {
namespace {

bool IsChannelClass(const DraModel& dra, const std::string& name) {
  if (name == kChannelClass) return true;
  auto it = dra.classes.find(name);
  if (it == dra.classes.end()) return false;
  for (const CelSelector& s : it->second.selectors)
    if (s.expression.find(kComputeDomainDriver) != std::string::npos &&
        s.expression.find("'channel'") != std::string::npos)
      return true;
  return false;
}

}  // namespace

bool ClaimsComputeDomainChannel(const DraModel& dra, const ClaimSpec& claim) {
  for (const DeviceRequest& r : claim.requests)
    for (const ExactRequest& alt : r.alternatives)
      if (IsChannelClass(dra, alt.device_class)) return true;
  return false;
}

bool KeepInOneClique(PodSet& set, const std::string& group) {
  if (set.topology.present()) return false;
  set.topology.level = kCliqueLabel;
  set.topology.required = true;
  set.topology.group = group;
  return true;
}

}  // namespace tessera::dra
