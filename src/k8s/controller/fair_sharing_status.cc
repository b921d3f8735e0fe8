#include "k8s/controller/fair_sharing_status.h"

#include <cmath>
#include <ctime>
#include <string>

#include "fmt/format.h"
#include "model/json_text.h"
#include "model/quantity.h"

namespace tessera::k8s {
namespace {

using Wall = std::chrono::system_clock;

std::string Rfc3339(Wall::time_point t) {
  const std::time_t s = Wall::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Wall::time_point> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s) != 6)
    return std::nullopt;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
    return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return Wall::from_time_t(timegm(&tm));
}

// A quantity Kueue and the API server read: memory in whole bytes, the rest to a thousandth.
std::string Quantity(const std::string& name, double amount) {
  if (name == "memory") return fmt::format("{}", static_cast<int64_t>(std::llround(amount)));
  std::string s = fmt::format("{:.3f}", amount);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

nlohmann::json FairSharingStatus(const LocalQueueUsage& u, Wall::time_point wall_start) {
  if (u.at < 0) return nullptr;
  nlohmann::json consumed = nlohmann::json::object();
  for (const auto& [name, amount] : u.consumed) consumed[name] = Quantity(name, amount);
  const auto at =
      wall_start + std::chrono::duration_cast<Wall::duration>(std::chrono::duration<double>(u.at));
  return {{"weightedShare", 0},
          {"admissionFairSharingStatus",
           {{"consumedResources", consumed}, {"lastUpdate", Rfc3339(at)}}}};
}

std::optional<LocalQueueUsage> ParseFairSharingStatus(const nlohmann::json& status,
                                                      Wall::time_point wall_start) {
  if (!status.is_object()) return std::nullopt;
  auto fs = status.find("fairSharing");
  if (fs == status.end() || !fs->is_object()) return std::nullopt;
  auto afs = fs->find("admissionFairSharingStatus");
  if (afs == fs->end() || !afs->is_object()) return std::nullopt;
  auto consumed = afs->find("consumedResources");
  auto last = afs->find("lastUpdate");
  if (consumed == afs->end() || !consumed->is_object() || last == afs->end() || !last->is_string())
    return std::nullopt;
  std::optional<Wall::time_point> at = ParseRfc3339(last->get<std::string>());
  if (!at) return std::nullopt;
  LocalQueueUsage u;
  u.at = std::chrono::duration<double>(*at - wall_start).count();
  for (const auto& [name, q] : consumed->items()) {
    if (!q.is_string() && !q.is_number()) return std::nullopt;
    auto milli = ParseQuantity(q.is_string() ? q.get<std::string>() : DumpJson(q), /*milli=*/true);
    if (!milli.ok() || *milli < 0) return std::nullopt;
    u.consumed.emplace_back(name, static_cast<double>(*milli) / 1000);
  }
  return u;
}

}  // namespace tessera::k8s
