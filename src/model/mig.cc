#include "model/mig.h"

#include <array>
#include <bit>

namespace tessera {
namespace {

// NVIDIA's MIG placement table (the "Supported MIG Profiles" tables of the MIG user guide): the
// same shape for every family, the memory per slice differs.
constexpr uint8_t kStarts1 = 0b0111'1111;   // 1g: slices 0..6
constexpr uint8_t kStarts2 = 0b0101'0101;   // 1g double memory: 0, 2, 4, 6
constexpr uint8_t kStarts2g = 0b0001'0101;  // 2g: 0, 2, 4
constexpr uint8_t kStarts3g = 0b0001'0001;  // 3g: 0, 4
constexpr uint8_t kStarts0 = 0b0000'0001;   // 4g, 7g: 0

constexpr std::array<MigProfile, 6> kA100_40{{{"1g.5gb", 1, 1, kStarts1},
                                              {"1g.10gb", 1, 2, kStarts2},
                                              {"2g.10gb", 2, 2, kStarts2g},
                                              {"3g.20gb", 3, 4, kStarts3g},
                                              {"4g.20gb", 4, 4, kStarts0},
                                              {"7g.40gb", 7, 8, kStarts0}}};
constexpr std::array<MigProfile, 6> k80{{{"1g.10gb", 1, 1, kStarts1},
                                         {"1g.20gb", 1, 2, kStarts2},
                                         {"2g.20gb", 2, 2, kStarts2g},
                                         {"3g.40gb", 3, 4, kStarts3g},
                                         {"4g.40gb", 4, 4, kStarts0},
                                         {"7g.80gb", 7, 8, kStarts0}}};
constexpr std::array<MigProfile, 6> k96{{{"1g.12gb", 1, 1, kStarts1},
                                         {"1g.24gb", 1, 2, kStarts2},
                                         {"2g.24gb", 2, 2, kStarts2g},
                                         {"3g.47gb", 3, 4, kStarts3g},
                                         {"4g.47gb", 4, 4, kStarts0},
                                         {"7g.94gb", 7, 8, kStarts0}}};
constexpr std::array<MigProfile, 6> kH200{{{"1g.18gb", 1, 1, kStarts1},
                                           {"1g.35gb", 1, 2, kStarts2},
                                           {"2g.35gb", 2, 2, kStarts2g},
                                           {"3g.71gb", 3, 4, kStarts3g},
                                           {"4g.71gb", 4, 4, kStarts0},
                                           {"7g.141gb", 7, 8, kStarts0}}};

bool Has(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

}  // namespace

std::span<const MigProfile> MigProfilesFor(int64_t memory_mib, std::string_view product,
                                           std::string_view* family) {
  auto pick = [&](std::span<const MigProfile> p, std::string_view f) {
    if (family != nullptr) *family = f;
    return p;
  };
  const bool a100 = Has(product, "A100"), h100 = Has(product, "H100"), h200 = Has(product, "H200");
  const bool known_model = a100 || h100 || h200 || product.empty();
  if (!known_model) return {};
  if (memory_mib > 0) {
    if (memory_mib >= 38000 && memory_mib <= 42000 && !h100 && !h200)
      return pick(kA100_40, "A100-40GB");
    if (memory_mib >= 78000 && memory_mib <= 84000 && !h200) return pick(k80, "80GB");
    if (memory_mib >= 90000 && memory_mib <= 100000 && !a100 && !h200)
      return pick(k96, "H100-94GB");
    if (memory_mib >= 135000 && memory_mib <= 150000 && !a100) return pick(kH200, "H200-141GB");
    return {};
  }
  if (a100 && Has(product, "40GB")) return pick(kA100_40, "A100-40GB");
  if ((a100 || h100) && Has(product, "80GB")) return pick(k80, "80GB");
  if (h100 && (Has(product, "94GB") || Has(product, "96GB"))) return pick(k96, "H100-94GB");
  if (h200) return pick(kH200, "H200-141GB");
  return {};
}

int MigChooseStart(uint8_t mask, const MigProfile& p) {
  // Best fit: the start after which the device keeps the most room for the largest profiles,
  // counted as free aligned runs of 8, 4, 2 and 1 slices, weighted by size.
  int best = -1, best_score = -1;
  for (int s = 0; s < 8; ++s) {
    if (!(p.starts >> s & 1u)) continue;
    const uint8_t take = MigSlices(p, s);
    if (mask & take) continue;
    const uint8_t after = mask | take;
    int score = 0;
    for (int run : {8, 4, 2, 1})
      for (int at = 0; at + run <= 8; at += run) {
        const auto block = static_cast<uint8_t>(((1u << run) - 1u) << at);
        if (!(after & block)) score += run * run;
      }
    if (score > best_score) {
      best = s;
      best_score = score;
    }
  }
  return best;
}

int MigCapacity(uint8_t mask, const MigProfile& p) {
  int n = 0;
  for (int s = 0; s < 8; ++s) {
    if (!(p.starts >> s & 1u)) continue;
    const uint8_t take = MigSlices(p, s);
    if (mask & take) continue;
    mask |= take;
    ++n;
  }
  return n;
}

}  // namespace tessera
