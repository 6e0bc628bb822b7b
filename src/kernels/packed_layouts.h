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

// F16, panels of 16 rows ("F16x16"), column-major inside the panel: for each column k in
// 0..n-1, 32 bytes hold the halves of rows 0..15 at that column (row i at half 16k + i), so
// one 256-bit load takes a column of all 16 rows. Any n (F16 blocks are one element); a
// panel is 32 * n bytes. The halves are the file's bits; rows past the matrix are +0.0.
inline constexpr int64_t kF16PanelRows = 16;
size_t f16x16_panel_bytes(int64_t n);
void pack_f16x16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

}  // namespace cohort::kernels
