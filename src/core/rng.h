// Small, fast, seedable PRNG (xoshiro256**, seeded through splitmix64). Same seed, same
// sequence on every platform: synthetic models and sampling depend on that.
#pragma once

#include <cstdint>

namespace cohort {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0x5eed) {
    for (auto& s : s_) s = splitmix(seed);
  }
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  float uniform_f32(float lo, float hi) { return lo + static_cast<float>(uniform()) * (hi - lo); }
  // Standard normal (Box-Muller; one value per call, simple over fast).
  float normal();

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace cohort
