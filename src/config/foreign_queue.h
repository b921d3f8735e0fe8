// A KAI Scheduler or Volcano queue as read from its manifest, before conversion to Kueue's kinds
// (config/foreign_queues.h).
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

// One resource of a foreign queue. Amounts in Tessera's units: cpu in thousandths, memory in
// bytes, anything else in whole units.
struct ForeignQueueResource {
  std::string name;                      // "cpu", "memory", "nvidia.com/gpu", ...
  std::optional<int64_t> deserved;       // KAI quota, Volcano deserved
  bool deserved_unlimited = false;       // KAI quota -1
  std::optional<int64_t> limit;          // KAI limit, Volcano capability; absent: unlimited
  std::optional<int64_t> guarantee;      // Volcano guarantee (never lent)
  std::optional<int64_t> lending_limit;  // KAI lendingLimit
};

struct ForeignQueue {
  enum class Origin { kKai, kVolcano };
  Origin origin = Origin::kKai;
  std::string name;
  std::string parent;  // KAI spec.parentQueue, Volcano spec.parent; "" for a top-level queue
  std::string file;
  int line = 0;
  std::vector<ForeignQueueResource> resources;
  std::optional<double> weight;  // KAI overQuotaWeight, Volcano weight
  // Fields read but without a Kueue equivalent: (field path, why).
  std::vector<std::pair<std::string, std::string>> unmapped;

  std::string Describe() const;  // "KAI Queue NAME" or "Volcano Queue NAME"
};

}  // namespace tessera
