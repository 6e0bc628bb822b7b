// Internal to kernels/: the packed panel layouts (TypeOps::Packed), ISA-neutral byte
// formats made once at load by scalar packers. Each ISA's packed gemm reads them; a layout
// is chosen so that one vector load holds the same columns of all the panel's rows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cohort::kernels {

// Q4_0, panels of 8 rows ("Q4_0x8"). Per block of 32 columns, 144 bytes:
//   d[8]     f16 scale of rows 0..7
//   qs[128]  4 groups g of 32 bytes; in group g, bytes 4i..4i+3 belong to row i: byte 4i+m
//            holds code q[i][8g+m] in its low nibble and q[i][8g+4+m] in its high nibble.
// Codes are the file's (value = d * (q - 8)); rows past the matrix are zero blocks.
inline constexpr int64_t kQ4_0PanelRows = 8;
inline constexpr size_t kQ4_0x8BlockBytes = 16 + 128;
size_t q4_0x8_panel_bytes(int64_t n);
void pack_q4_0x8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q8_0, panels of 8 rows ("Q8_0x8"). Per block of 32 columns, 272 bytes:
//   d[8]     f16 scale of rows 0..7
//   qs[256]  8 groups g of 32 bytes; in group g, bytes 4i..4i+3 are row i's codes
//            q[i][4g..4g+3] (int8, as in the file: value = d * q; -128 kept).
// One 32-byte group thus holds 4 columns of all 8 rows, row i in int32 lane i. Rows past
// the matrix are zero blocks (zero scales and codes).
inline constexpr int64_t kQ8_0PanelRows = 8;
inline constexpr int kQ8_0x8Groups = 8;
inline constexpr size_t kQ8_0x8BlockBytes = 16 + 32 * kQ8_0x8Groups;
size_t q8_0x8_panel_bytes(int64_t n);
void pack_q8_0x8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

}  // namespace cohort::kernels
