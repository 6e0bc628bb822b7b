#include "tensor/dtype.h"

#include <array>
#include <cctype>
#include <string>

#include "core/check.h"

namespace cohort {
namespace {

struct Entry {
  uint32_t id;
  DTypeInfo info;
};

// Block sizes are the GGUF on-disk layouts (see tensor/quant_blocks.h for the structs).
constexpr Entry kEntries[] = {
    {0, {"f32", 1, 4, true}},
    {1, {"f16", 1, 2, true}},
    {2, {"q4_0", 32, 18, true}},
    {3, {"q4_1", 32, 20, true}},
    {6, {"q5_0", 32, 22, true}},
    {7, {"q5_1", 32, 24, true}},
    {8, {"q8_0", 32, 34, true}},
    {9, {"q8_1", 32, 36, false}},
    {10, {"q2_K", 256, 84, true}},
    {11, {"q3_K", 256, 110, true}},
    {12, {"q4_K", 256, 144, true}},
    {13, {"q5_K", 256, 176, true}},
    {14, {"q6_K", 256, 210, true}},
    {15, {"q8_K", 256, 292, false}},
    {30, {"bf16", 1, 2, true}},
    // Known to GGUF but not implemented: listed so inspect can name them.
    {16, {"iq2_xxs", 256, 66, false}},
    {17, {"iq2_xs", 256, 74, false}},
    {18, {"iq3_xxs", 256, 98, false}},
    {19, {"iq1_s", 256, 50, false}},
    {20, {"iq4_nl", 32, 18, false}},
    {21, {"iq3_s", 256, 110, false}},
    {22, {"iq2_s", 256, 82, false}},
    {23, {"iq4_xs", 256, 136, false}},
    {24, {"i8", 1, 1, false}},
    {25, {"i16", 1, 2, false}},
    {26, {"i32", 1, 4, false}},
    {27, {"i64", 1, 8, false}},
    {28, {"f64", 1, 8, false}},
    {29, {"iq1_m", 256, 56, false}},
    {34, {"tq1_0", 256, 54, false}},
    {35, {"tq2_0", 256, 66, false}},
};

const std::array<std::optional<DTypeInfo>, kDTypeTableSize>& table() {
  static const auto t = [] {
    std::array<std::optional<DTypeInfo>, kDTypeTableSize> a{};
    for (const Entry& e : kEntries) a[e.id] = e.info;
    return a;
  }();
  return t;
}

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t id) {
  if (id >= kDTypeTableSize) return std::nullopt;
  return table()[id];
}

const DTypeInfo& dtype_info(DType t) {
  const auto& e = table()[static_cast<uint32_t>(t)];
  COHORT_CHECK(e.has_value());
  return *e;
}

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Entry& e : kEntries) {
    std::string n(e.info.name);
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n == lower) return static_cast<DType>(e.id);
  }
  return std::nullopt;
}

}  // namespace cohort
