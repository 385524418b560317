// Vector steps of the scan kernels (kernels/scan.h) on the host's ISA (dispatch.h), for f32,
// f64, s32 and s64 values and the bodies add, mul, max, min (s64: no mul). Each lane is
// one independent fold; every lane sees exactly the scalar steps of scalar_ops.h in the
// same order (max/min with max_min-inl.h's NaN, signed-zero and denormal rules), so the
// results are the same bits at every ISA level as the scalar loops.
// Pure functions over caller memory; thread-safe. Failure: none (valid extents).
#pragma once

#include <cstdint>

namespace stablert::kernels::simd {

enum class ScanBody { kAdd, kMul, kMax, kMin };

// One tile of w lanes (rows <= 16; row r of lane k at x[r * xs + k], y[r * ys + k]):
// forward, y_r = ((init + x_0) + x_1) ... + x_r, and *total row* = y_{rows-1};
// reverse, y_r = (((init + x_r) + x_{r+1}) ... + x_{rows-1}) (each suffix folded in
// ascending order), total = y_0. With e (w lanes) every y_r is then y_r + e (the total is
// taken before). "+" is the body; y may be x (same strides).
void ScanTile(ScanBody body, bool reverse, const float* x, int64_t xs, float* y, int64_t ys, int64_t rows,
              int64_t w, float init, const float* e, float* total);
void ScanTile(ScanBody body, bool reverse, const double* x, int64_t xs, double* y, int64_t ys, int64_t rows,
              int64_t w, double init, const double* e, double* total);
void ScanTile(ScanBody body, bool reverse, const int32_t* x, int64_t xs, int32_t* y, int64_t ys, int64_t rows,
              int64_t w, int32_t init, const int32_t* e, int32_t* total);
void ScanTile(ScanBody body, bool reverse, const int64_t* x, int64_t xs, int64_t* y, int64_t ys, int64_t rows,
              int64_t w, int64_t init, const int64_t* e, int64_t* total);

// y_r = y_r + e for r < rows, lanes k < w; y holds results of ScanTile (float max/min rely on
// their operands being flushed, scan_simd.cc).
void ScanCarry(ScanBody body, float* y, int64_t ys, int64_t rows, int64_t w, const float* e);
void ScanCarry(ScanBody body, double* y, int64_t ys, int64_t rows, int64_t w, const double* e);
void ScanCarry(ScanBody body, int32_t* y, int64_t ys, int64_t rows, int64_t w, const int32_t* e);
void ScanCarry(ScanBody body, int64_t* y, int64_t ys, int64_t rows, int64_t w, const int64_t* e);

// A running max (kMax) or min (kMin; other bodies: false, nothing written) of one
// contiguous line of n: y_i = fold of (init, x_0, ..., x_i) (reverse: of (init, x_i, ...,
// x_{n-1})). Max and min are associative and commutative on integers and, flushed, on
// floats without NaNs, so this equals the grouped scan there. Floats: returns false when
// init or an element is NaN, having written y only in whole blocks before the first NaN
// block (the caller computes the line on the grouped path; x must not overlap y then).
// Lines of at least scan::kMinBytesToStream are written with non-temporal stores where
// aligned, fenced before it returns.
bool ScanRunning(ScanBody body, bool reverse, const float* x, float* y, int64_t n, float init);
bool ScanRunning(ScanBody body, bool reverse, const double* x, double* y, int64_t n, double init);
bool ScanRunning(ScanBody body, bool reverse, const int32_t* x, int32_t* y, int64_t n, int32_t init);
bool ScanRunning(ScanBody body, bool reverse, const int64_t* x, int64_t* y, int64_t n, int64_t init);

// The grouped scan of one contiguous line of n elements (scan.h: tiles of 16, the totals
// scanned the same way), y_i as ScanLines computes it (forward; reverse: suffixes): the
// same bits. `stream`: outputs written with non-temporal stores where aligned (the caller
// fences with TransposeStreamFence). y may be x. Not for s64 mul (nothing is written).
// `floor` (nullptr: x): the lowest address of the input that a reverse scan may request
// ahead of its walk (prefetch only; the line before x when lines are walked last first).
void ScanLine(ScanBody body, bool reverse, const float* x, float* y, int64_t n, float init, bool stream,
              const float* floor = nullptr);
void ScanLine(ScanBody body, bool reverse, const double* x, double* y, int64_t n, double init, bool stream,
              const double* floor = nullptr);
void ScanLine(ScanBody body, bool reverse, const int32_t* x, int32_t* y, int64_t n, int32_t init, bool stream,
              const int32_t* floor = nullptr);
void ScanLine(ScanBody body, bool reverse, const int64_t* x, int64_t* y, int64_t n, int64_t init, bool stream,
              const int64_t* floor = nullptr);

// Part of a forward ScanLine: writes y[begin, end) only, the same bits as ScanLine of the
// whole line; the tiles before `begin` are read and folded to their totals (no writes), so
// two threads can scan two parts of one line at once. begin: a multiple of 256 (16 tiles of
// 16) at most n / 256 * 256; end: n, or such a multiple. Not for s64 mul. The kernels do
// not split lines this way: one call already scans at DRAM bandwidth, and the second part's
// fold reads ~60% more (docs/decisions.md, "Scans: the forward level 1 in lanes");
// scan_kernel_benchmark --split-probe F measures a split at F n.
void ScanLinePart(ScanBody body, const float* x, float* y, int64_t n, float init, bool stream, int64_t begin,
                  int64_t end);
void ScanLinePart(ScanBody body, const double* x, double* y, int64_t n, double init, bool stream, int64_t begin,
                  int64_t end);
void ScanLinePart(ScanBody body, const int32_t* x, int32_t* y, int64_t n, int32_t init, bool stream,
                  int64_t begin, int64_t end);
void ScanLinePart(ScanBody body, const int64_t* x, int64_t* y, int64_t n, int64_t init, bool stream,
                  int64_t begin, int64_t end);

}  // namespace stablert::kernels::simd
