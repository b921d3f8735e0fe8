// A seeded random source whose every draw is defined here, so that one seed gives the same run
// on every compiler and standard library (std:: distributions are implementation-defined).
// std::mt19937_64's output sequence is fixed by the standard; the mapping to [0, n) is Lemire's
// multiply-and-reject method.
//
// Thread-safety: one Rng per thread (or per run).
#pragma once

#include <cstdint>
#include <random>

namespace tessera::fgd {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(engine_()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(engine_()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Fisher-Yates, as Go's rand.Shuffle walks it (from the back).
  template <typename T>
  void Shuffle(T& v) {
    for (size_t i = v.size(); i > 1; --i) {
      const size_t j = static_cast<size_t>(Below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace tessera::fgd
