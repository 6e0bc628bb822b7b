// Internal to kernels/: the packed panel layouts (TypeOps::Packed), ISA-neutral byte
// formats made once at load by scalar packers. Each ISA's packed gemm reads them; a layout
// is chosen so that one vector load holds the same columns of all the panel's rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tensor/quant_blocks.h"

namespace cohort::kernels {

// Q4_0, panels of 8 rows ("Q4_0x8"). Per block of 32 columns, 144 bytes:
//   d[8]     f16 scale of rows 0..7
//   qs[128]  4 groups g of 32 bytes; in group g, bytes 4i..4i+3 belong to row i: byte 4i+m
//            holds code q[i][8g+m] in its low nibble and q[i][8g+4+m] in its high nibble.
// Codes are the file's (value = d * (q - 8)); rows past the matrix are zero blocks.
//
// Q4_0, panels of 16 rows ("Q4_0x16", the AVX-512 tables'): the Q4_0x8 arrangement with 16
// rows. Per block of 32 columns, 288 bytes: d[16] (f16 scales of rows 0..15), then 4 groups g
// of 64 bytes, bytes 4i..4i+3 of group g row i's (low nibble q[i][8g+m], high q[i][8g+4+m]).
// One 512-bit load thus holds 8 columns of all 16 rows, row i in int32 lane i.
//
// Q4_1, Q5_0 and Q5_1 in the same panels of 8 or 16 rows ("Q4_1x8", ..., "Q5_1x16"): per
// block of 32 columns (kRows rows), what the file's block has beyond Q4_0's comes between the
// scales and the codes, so every one of them is the same bytes as the file's kRows blocks:
//   d[kRows]      f16 scale of each row
//   m[kRows]      f16 min of each row (Q4_1, Q5_1: value = d * q + m)
//   qh[4 kRows]   the codes' fifth bits (Q5_0, Q5_1), row i at 4i: byte m holds in bit g the
//                 fifth bit of column 8g + m and in bit 4 + g that of column 8g + 4 + m
//                 (Q5_Kx16's arrangement: group g's bits reach bit 4 of each byte by a shift
//                 left by 4 - g, the low nibbles' columns, or right by g, the high ones')
//   qs[16 kRows]  the codes' low 4 bits as Q4_0's groups
// Values as in the file (Q5_0: d * (q - 16)); rows past the matrix are all zero.
template <int64_t kPanelRows, bool kMins, bool kFiveBits>
struct Block32Panel {
  static_assert(kPanelRows == 8 || kPanelRows == 16);
  static constexpr int64_t kRows = kPanelRows;
  static constexpr bool kMin = kMins, kFive = kFiveBits;
  static constexpr size_t kMinsAt = 2 * kRows;
  static constexpr size_t kFifthAt = kMinsAt + (kMin ? 2 * kRows : 0);
  static constexpr size_t kCodesAt = kFifthAt + (kFive ? 4 * kRows : 0);
  static constexpr size_t kGroupBytes = 4 * kRows;
  static constexpr size_t kBlockBytes = kCodesAt + 4 * kGroupBytes;
  // The activations' block (the type's vec_dot_type): Q8_1, whose s carries the mins' term,
  // where the weights have mins.
  using ActBlock = std::conditional_t<kMin, BlockQ8_1, BlockQ8_0>;
};
template <int64_t kRows>
using Q4_0Panel = Block32Panel<kRows, false, false>;
template <int64_t kRows>
using Q4_1Panel = Block32Panel<kRows, true, false>;
template <int64_t kRows>
using Q5_0Panel = Block32Panel<kRows, false, true>;
template <int64_t kRows>
using Q5_1Panel = Block32Panel<kRows, true, true>;
inline constexpr int64_t kQ4_0PanelRows = 8;
inline constexpr int64_t kQ4_0x16PanelRows = 16;
inline constexpr size_t kQ4_0x8BlockBytes = Q4_0Panel<8>::kBlockBytes;
inline constexpr size_t kQ4_0x16BlockBytes = Q4_0Panel<16>::kBlockBytes;
static_assert(kQ4_0x8BlockBytes == 144 && kQ4_0x16BlockBytes == 288 &&
              Q4_1Panel<16>::kBlockBytes == 16 * 20 && Q5_0Panel<16>::kBlockBytes == 16 * 22 &&
              Q5_1Panel<16>::kBlockBytes == 16 * 24);
// Bytes of one panel of layout L (a Block32Panel) of rows of n elements, and the packer of
// n_rows <= L::kRows rows of the file's blocks of its type (TypeOps::Packed's contract);
// ref/pack_block32.cpp instantiates them for the eight layouts above.
// Defined there, not here: an inline template instantiated in an AVX-512 file would be a weak
// symbol compiled for AVX-512 that any caller could bind to (x86/simd_avx512.h).
template <class L>
size_t block32_panel_bytes(int64_t n);
template <class L>
void pack_block32_panel(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

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

// Q8_0, panels of 16 rows ("Q8_0x16", the AVX-512 tables'). Per block of 32 columns, 544
// bytes: d[16] (f16 scales of rows 0..15), then 8 groups g of 64 bytes, bytes 4i..4i+3 of
// group g row i's codes q[i][4g..4g+3] stored as q + 128 (q ^ 0x80: an unsigned byte, as
// vpdpbusd multiplies its first operand; the tile takes 128 x the activations' sum off).
// Rows past the matrix have zero scales (and codes 0x80, value 0).
inline constexpr int64_t kQ8_0x16PanelRows = 16;
inline constexpr size_t kQ8_0x16BlockBytes = 32 + 8 * 64;
size_t q8_0x16_panel_bytes(int64_t n);
void pack_q8_0x16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q4_K, panels of 8 rows ("Q4_Kx8"). Per super-block of 256 columns, 1184 bytes (the file's 8
// blocks take 1152: +2.8%):
//   d[8]       f16 super-block scale of rows 0..7
//   dmin[8]    f16 super-block min scale of rows 0..7
//   scales[64] sub-block j (32 columns), row i at 8j + i: the 6-bit scale as a byte
//   mins[64]   pair k of sub-blocks (2k, 2k + 1), row i at 16k + 2i + s: the 6-bit min of
//              sub-block 2k + s as a byte (widened to int16, a row's two mins sit in one
//              int32 lane, ready for madd with the pair of activation sums)
//   qs[1024]   sub-block j at 128j, in the Q4_0x8 group arrangement: 4 groups g of 32
//              bytes; byte 4i + m of group g holds code q[i][32j + 8g + m] in its low nibble
//              and q[i][32j + 8g + 4 + m] in its high nibble.
// Value = d * scale * q - dmin * min, as in the file; rows past the matrix are all zero.
inline constexpr int64_t kQ4_KPanelRows = 8;
inline constexpr size_t kQ4_Kx8ScalesOffset = 32;
inline constexpr size_t kQ4_Kx8MinsOffset = 96;
inline constexpr size_t kQ4_Kx8QsOffset = 160;
inline constexpr size_t kQ4_Kx8BlockBytes = kQ4_Kx8QsOffset + 1024;
size_t q4_kx8_panel_bytes(int64_t n);
void pack_q4_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q5_K, panels of 8 rows ("Q5_Kx8", the AVX2 tables'). Per super-block of 256 columns, 1440
// bytes (the file's 8 blocks take 1408: +2.3%): Q4_Kx8's d, dmin, scales and mins, then
// sub-block j at 160 + 160j as qh[32] (row i at 4i, bits as Q5_Kx16's below) and qs[128]
// (the codes' low 4 bits in Q4_Kx8's arrangement).
inline constexpr size_t kQ5_Kx8SubBlockBytes = 32 + 128;
inline constexpr size_t kQ5_Kx8BlockBytes = kQ4_Kx8QsOffset + 8 * kQ5_Kx8SubBlockBytes;
size_t q5_kx8_panel_bytes(int64_t n);
void pack_q5_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q4_K, panels of 16 rows ("Q4_Kx16", the AVX-512 tables'). Per super-block of 256 columns,
// 2368 bytes (the file's 16 blocks take 2304: +2.8%), 37 cache lines: the Q4_Kx8 arrangement
// with 16 rows.
//   d[16], dmin[16]  f16 super-block scale and min scale of rows 0..15
//   mins[128]        pair k of sub-blocks (2k, 2k + 1), row i at 32k + 2i + s: the 6-bit min of
//                    sub-block 2k + s as a byte (widened to int16, a row's two mins fill one
//                    int32 lane, ready for madd with the pair of activation sums)
//   scales[128]      sub-block j's 6-bit scale of row i at 16j + i (one 128-bit load widens
//                    to the 16 int32 lanes)
//   qs[2048]         sub-block j at 256j, in the Q4_0x16 group arrangement (4 groups of 64
//                    bytes, row i at 4i: low nibble column 8g + m, high nibble 8g + 4 + m)
// Value = d * scale * q - dmin * min, as in the file; rows past the matrix are all zero.
// Why the scales sit before the codes: with each sub-block's 16 scales before its 256 code
// bytes (272-byte steps, stops 28-31), 7 of a block's 8 sub-blocks' 64-byte code loads each
// straddled two cache lines, and on the Zen 5 VM of stop 32 the one-token tile read 61-66%
// of a plain read out of memory (decode_layers_bench --type q4_K -t 2); here every code load
// is one whole line of a 64-byte-aligned panel.
inline constexpr int64_t kQ4_Kx16PanelRows = 16;
inline constexpr size_t kQ4_Kx16MinsOffset = 64;
inline constexpr size_t kQ4_Kx16ScalesOffset = 192;
inline constexpr size_t kQ4_Kx16QsOffset = 320;
inline constexpr size_t kQ4_Kx16BlockBytes = kQ4_Kx16QsOffset + 2048;
size_t q4_kx16_panel_bytes(int64_t n);
void pack_q4_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q5_K, panels of 16 rows ("Q5_Kx16", the AVX-512 tables'). Per super-block of 256 columns,
// 2880 bytes (the file's 16 blocks take 2816: +2.3%), 45 cache lines: Q4_Kx16's d, dmin, mins
// and scales, then sub-block j at 320 + 320j as
//   qh[64]   row i at 4i: byte m holds in bit g the fifth bit of column 8g + m and in bit
//            4 + g that of column 8g + 4 + m (g = 0..3): group g's bits reach bit 4 of each
//            byte by a shift left by 4 - g (the low nibbles' columns) or right by g (the high)
//   qs[256]  the codes' low 4 bits in Q4_Kx16's arrangement
// Value = d * scale * q - dmin * min with q = low | fifth << 4, as in the file; rows past the
// matrix are all zero.
inline constexpr size_t kQ5_Kx16SubBlockBytes = 64 + 256;
inline constexpr size_t kQ5_Kx16BlockBytes = kQ4_Kx16QsOffset + 8 * kQ5_Kx16SubBlockBytes;

// Where a super-block's sub-blocks sit in Q4_Kx8, Q4_Kx16, Q5_Kx8 and Q5_Kx16 (kRows rows;
// kFiveBits: Q5_K), for the packer and the tiles alike: sub-block j at kQsOffset + kSubBytes j,
// its 16 kRows code bytes kCodesAt in (after Q5_K's 4 kRows bytes of fifth bits).
template <int64_t kRows, bool kFiveBits>
struct KQuantSubBlocks {
  static_assert(kRows == 8 || kRows == 16);
  static constexpr bool kFive = kFiveBits;
  static constexpr size_t kQsOffset = kRows == 16 ? kQ4_Kx16QsOffset : kQ4_Kx8QsOffset;
  static constexpr size_t kCodesAt = kFive ? 4 * kRows : 0;
  static constexpr size_t kSubBytes = kCodesAt + 16 * kRows;
  static constexpr size_t kBlockBytes = kQsOffset + 8 * kSubBytes;
};
static_assert(KQuantSubBlocks<8, false>::kBlockBytes == kQ4_Kx8BlockBytes &&
              KQuantSubBlocks<16, false>::kBlockBytes == kQ4_Kx16BlockBytes &&
              KQuantSubBlocks<8, true>::kBlockBytes == kQ5_Kx8BlockBytes &&
              KQuantSubBlocks<16, true>::kBlockBytes == kQ5_Kx16BlockBytes);
size_t q5_kx16_panel_bytes(int64_t n);
void pack_q5_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q6_K, panels of 8 rows ("Q6_Kx8"). Per super-block of 256 columns, 1680 bytes (exactly the
// file's 8 blocks), in the order a tile reads them (one sequential stream):
//   d[8]        f16 super-block scale of rows 0..7
//   scales[128] pair k of sub-blocks (2k, 2k + 1) of 16 columns, row i at 16k + 2i + s: the
//               int8 scale of sub-block 2k + s
//   then for each chunk c of 32 columns, 192 bytes (kQ6_Kx8StepBytes) from
//   q6_kx8_step(c):
//     ql[128]   the low 4 bits of the codes, in the Q4_0x8 group arrangement (byte 32g +
//               4i + m: code q[i][32c + 8g + m] low, code q[i][32c + 8g + 4 + m] high)
//     qh[64]    the high 2 bits, two planes p of 32 bytes; byte 4i + m of plane p serves
//               groups 2p + s (s = 0, 1) of ql: its bits 4s..4s+1 are the high bits of the
//               code in the low nibble of that group's byte 4i + m, bits 4s+2..4s+3 those
//               of the code in the high nibble.
// Codes q in [0, 63] as in the file: value = d * scale * (q - 32); rows past the matrix are
// all zero (their codes 0, scales 0).
inline constexpr int64_t kQ6_KPanelRows = 8;
inline constexpr size_t kQ6_Kx8ScalesOffset = 16;
inline constexpr size_t kQ6_Kx8StepsOffset = 144;
inline constexpr size_t kQ6_Kx8StepBytes = 192;
inline constexpr size_t kQ6_Kx8QhInStep = 128;
inline constexpr size_t kQ6_Kx8BlockBytes = kQ6_Kx8StepsOffset + 8 * kQ6_Kx8StepBytes;
// Where chunk c's ql bytes start in a block (its qh bytes kQ6_Kx8QhInStep further on).
constexpr size_t q6_kx8_step(int c) { return kQ6_Kx8StepsOffset + kQ6_Kx8StepBytes * c; }
size_t q6_kx8_panel_bytes(int64_t n);
void pack_q6_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q3_K, panels of 8 rows ("Q3_Kx8", the AVX2 tables'). Per super-block of 256 columns, 912
// bytes (the file's 8 blocks take 880: +3.6%), Q6_Kx8's order with Q3_Kx16's code planes:
//   d[8]        f16 super-block scale of rows 0..7
//   scales[128] as Q6_Kx8's: pair k of sub-blocks, row i at 16k + 2i + s, the int8 scale (6
//               bits - 32) of sub-block 2k + s
//   then for each chunk c of 32 columns, 96 bytes from q3_kx8_step(c): ql[64] (two planes p
//   of 32 bytes) and qh[32], row i at 4i, the bits as Q3_Kx16's below.
// Codes u = q + 4 in [0, 7]: value = d * scale * (u - 4); rows past the matrix are all zero.
inline constexpr size_t kQ3_Kx8ScalesOffset = 16;
inline constexpr size_t kQ3_Kx8StepsOffset = 144;
inline constexpr size_t kQ3_Kx8StepBytes = 96;
inline constexpr size_t kQ3_Kx8QhInStep = 64;
inline constexpr size_t kQ3_Kx8BlockBytes = kQ3_Kx8StepsOffset + 8 * kQ3_Kx8StepBytes;
constexpr size_t q3_kx8_step(int c) { return kQ3_Kx8StepsOffset + kQ3_Kx8StepBytes * c; }
size_t q3_kx8_panel_bytes(int64_t n);
void pack_q3_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q6_K, panels of 16 rows ("Q6_Kx16", the AVX-512 tables'). Per super-block of 256 columns,
// 3360 bytes (the file's 16 blocks), in the order a tile reads them (one sequential stream):
//   d[16]        f16 super-block scale of rows 0..15
//   then for each chunk c of 32 columns, 416 bytes from q6_kx16_step(c):
//     scales[32] sub-block 2c + s of 16 columns, row i at 16s + i: its int8 scale (one
//                128-bit load widens to the 16 int32 lanes)
//     ql[256], qh[128]  the Q6_Kx8 arrangement with 16 rows (groups g of 64 bytes, row i at
//                4i; two qh planes of 64 bytes)
// Why the scales sit in each chunk: read from a table at the block's start, as Q6_Kx8 does,
// they made two streams of one block, and one thread out of memory on the Zen 4 VM read 20
// GB/s instead of the AVX2 tile's 29 (decode_layers_bench --type q6_K).
inline constexpr int64_t kQ6_Kx16PanelRows = 16;
inline constexpr size_t kQ6_Kx16StepsOffset = 32;
inline constexpr size_t kQ6_Kx16StepBytes = 416;
inline constexpr size_t kQ6_Kx16QlInStep = 32;
inline constexpr size_t kQ6_Kx16QhInStep = kQ6_Kx16QlInStep + 256;
inline constexpr size_t kQ6_Kx16BlockBytes = kQ6_Kx16StepsOffset + 8 * kQ6_Kx16StepBytes;
constexpr size_t q6_kx16_step(int c) { return kQ6_Kx16StepsOffset + kQ6_Kx16StepBytes * c; }
size_t q6_kx16_panel_bytes(int64_t n);
void pack_q6_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q3_K, panels of 16 rows ("Q3_Kx16", the AVX-512 tables'). Per super-block of 256 columns,
// 1824 bytes (the file's 16 blocks take 1760: +3.6%), Q6_Kx16's order with 3-bit codes:
//   d[16]        f16 super-block scale of rows 0..15
//   then for each chunk c of 32 columns, 224 bytes from q3_kx16_step(c):
//     scales[32] sub-block 2c + s of 16 columns, row i at 16s + i: its scale (6 bits - 32)
//     ql[128]    the codes' low 2 bits, two planes p of 64 bytes; byte 4i + m of plane p
//                holds at bits 4s + 2h .. 4s + 2h + 1 those of column 8g + 4h + m, g = 2p + s
//     qh[64]     the codes' third bits: byte 4i + m holds at bit 2g + h that of column 8g +
//                4h + m (g = 0..3, h = 0..1)
// Codes u = q + 4 in [0, 7] (the file's q in [-4, 3]): value = d * scale * (u - 4); rows past
// the matrix are all zero (their codes 0, scales 0).
inline constexpr int64_t kQ3_Kx16PanelRows = 16;
inline constexpr size_t kQ3_Kx16StepsOffset = 32;
inline constexpr size_t kQ3_Kx16StepBytes = 224;
inline constexpr size_t kQ3_Kx16QlInStep = 32;
inline constexpr size_t kQ3_Kx16QhInStep = kQ3_Kx16QlInStep + 128;
inline constexpr size_t kQ3_Kx16BlockBytes = kQ3_Kx16StepsOffset + 8 * kQ3_Kx16StepBytes;
constexpr size_t q3_kx16_step(int c) { return kQ3_Kx16StepsOffset + kQ3_Kx16StepBytes * c; }
size_t q3_kx16_panel_bytes(int64_t n);
void pack_q3_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// Q2_K, panels of 16 rows ("Q2_Kx16", the AVX-512 tables') or 8 ("Q2_Kx8", the AVX2 tables').
// Per super-block of 256 columns, 84 bytes a row (exactly the file's blocks: 1344 bytes, 21
// cache lines, for 16 rows), Q4_Kx16's order: the scales before the codes, so that every
// 64-byte code load of Q2_Kx16 is one whole line of a 64-byte-aligned panel.
//   d[kRows], dmin[kRows]  f16 super-block scale and min scale of each row
//   mins[8 kRows]          pair k of sub-blocks (2k, 2k + 1) of 16 columns, row i at kRows k +
//                          i: the 4-bit min of sub-block 2k in the low nibble, of 2k + 1 in
//                          the high one
//   scales[8 kRows]        the same for the 4-bit scales (pair c: chunk c's two sub-blocks)
//   qs[64 kRows]           chunk c of 32 columns at 8 kRows c: two planes h of 4 kRows bytes;
//                          byte 4i + m of plane h holds at bits 2G, 2G + 1 the 2-bit code of
//                          column 32c + 8G + 4h + m of row i (group G = 0..3 of the chunk's 8
//                          columns; sub-block 2c + G / 2)
// Value = d * scale * q - dmin * min, as in the file; rows past the matrix are all zero. A
// group's codes sit at one bit position in both planes, so a one-token tile takes them in place
// (v & 3 << 2G, 4^G x each code, no shift) and divides the group's sum by 4^G once.
template <int64_t kPanelRows>
struct Q2KPanel {
  static_assert(kPanelRows == 8 || kPanelRows == 16);
  static constexpr int64_t kRows = kPanelRows;
  static constexpr size_t kMinsOffset = 4 * kRows;
  static constexpr size_t kScalesOffset = kMinsOffset + 8 * kRows;
  static constexpr size_t kQsOffset = kScalesOffset + 8 * kRows;
  static constexpr size_t kPlaneBytes = 4 * kRows;
  static constexpr size_t kChunkBytes = 2 * kPlaneBytes;
  static constexpr size_t kBlockBytes = kQsOffset + 8 * kChunkBytes;
  // Where plane h of chunk c starts.
  static constexpr size_t plane_offset(int c, int h) {
    return kQsOffset + kChunkBytes * static_cast<size_t>(c) + kPlaneBytes * static_cast<size_t>(h);
  }
};
static_assert(Q2KPanel<16>::kBlockBytes == 16 * 84 && Q2KPanel<8>::kBlockBytes == 8 * 84);
size_t q2_kx8_panel_bytes(int64_t n);
void pack_q2_kx8(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);
size_t q2_kx16_panel_bytes(int64_t n);
void pack_q2_kx16(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

// F16, panels of 64 rows ("F16x64"): 4 sub-panels of 16 rows, their columns interleaved so
// that a one-token product reads the panel as ONE sequential stream while it keeps 4
// independent sub-panel sums in flight. For each pair j of columns (2j, 2j + 1), 256 bytes:
// sub-panel s's 64-byte line at 64s holds column 2j (32 bytes: rows 16s..16s+15, row 16s + i
// at half i) then column 2j + 1. So one 256-bit load takes a column of a sub-panel's 16
// rows, and f16x64_offset(s, k) is where sub-panel s's column k starts. Any n (F16 blocks are
// one element; an odd n's last pair has a +0.0 second column); a panel is 256 * ceil(n / 2)
// bytes. The halves are the file's bits; rows past the matrix are +0.0.
//
// Why one stream: on the Zen 4 VM of stop 22 a one-thread read of 4 separate 64 KiB panels
// walked together (the F16x16 layout before) took 27 GB/s with the decode's conversions and
// FMAs, the same work on this interleaved stream 32.5, a plain read 33 (kernels_bench
// --benchmark_filter=read_pattern measures these on any machine).
inline constexpr int64_t kF16PanelRows = 64;
inline constexpr int64_t kF16SubRows = 16;
inline constexpr int kF16SubPanels = 4;
inline constexpr size_t kF16ColBytes = kF16SubRows * 2;  // one column of a sub-panel
inline constexpr size_t kF16PairBytes = 2 * kF16ColBytes * kF16SubPanels;
constexpr size_t f16x64_offset(int64_t s, int64_t k) {
  return static_cast<size_t>(k / 2) * kF16PairBytes + static_cast<size_t>(s) * 2 * kF16ColBytes +
         static_cast<size_t>(k % 2) * kF16ColBytes;
}
size_t f16x64_panel_bytes(int64_t n);
void pack_f16x64(const void* src, size_t src_stride, int64_t n_rows, int64_t n, void* dst);

}  // namespace cohort::kernels
