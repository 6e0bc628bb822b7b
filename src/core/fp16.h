// IEEE half (binary16) and bfloat16 conversions, bit-exact, scalar. SIMD code converts
// with F16C; these are the reference and the fallback.
#pragma once

#include <cstdint>
#include <cstring>

namespace cohort {

inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return bits_to_f32(sign);
    // Subnormal: value = mant * 2^-24.
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_f32(sign | 0x7f800000u | (mant << 13));
  return bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest even, with overflow to inf and NaN kept NaN.
inline uint16_t f32_to_fp16(float f) {
  const uint32_t x = f32_to_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: scale so that the integer part is the half mantissa.
    float a = bits_to_f32(abs) * 16777216.0f;  // * 2^24
    // Round half to even via the FPU's default rounding.
    float r = a + 8388608.0f - 8388608.0f;  // nearest-even to an integer for a < 2^23
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  uint32_t rounded = abs + 0xfffu + mant_odd;  // round to nearest even at bit 13
  rounded -= 0x38000000u;                      // rebias exponent 127 -> 15
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

inline float bf16_to_f32(uint16_t b) { return bits_to_f32(static_cast<uint32_t>(b) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t x = f32_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace cohort
