// Helpers for kernel tests: typed host arrays, running one kernel by key, independent
// (slow) rounding references for f16/bf16, and comparisons with tolerances.
// Used only by tests.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/shape.h"
#include "kernels/half.h"
#include "kernels/registry.h"

namespace stablert::kernels::testing {

struct Array {
  DType dtype = DType::kInvalid;
  Dims dims;
  std::vector<uint8_t> bytes;

  Array() = default;
  Array(DType d, Dims shape) : dtype(d), dims(std::move(shape)) {
    bytes.assign(static_cast<size_t>(ElementCount(dims) * DTypeByteSize(dtype)), 0);
  }
  int64_t size() const { return ElementCount(dims); }
  BufferView View() const {
    BufferView view;
    view.data = const_cast<uint8_t*>(bytes.data());
    view.dtype = dtype;
    view.dims = dims;
    view.num_elements = size();
    return view;
  }
};

// An array of `dtype` and `dims` holding the bytes of `values` (as many as the array holds).
template <typename T>
Array ArrayOf(DType dtype, Dims dims, const std::vector<T>& values) {
  Array a(dtype, std::move(dims));
  if (!a.bytes.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());  // never memcpy(null, ...)
  return a;
}

// Element `i` of `a`, read as a T.
template <typename T>
T ElementAt(const Array& a, int64_t i) {
  T v;
  std::memcpy(&v, a.bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// f16/bf16 rounding written independently of kernels/half.h: f16 through the compiler's
// _Float16, bf16 by choosing the nearer neighbour (ties to even).
inline uint16_t ReferenceF16Bits(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
inline uint16_t ReferenceBF16Bits(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t lower = bits >> 16;
  uint32_t magnitude = lower & 0x7fff;
  if (magnitude == 0x7f80) return static_cast<uint16_t>(lower);  // infinity
  double value = std::fabs(static_cast<double>(f));
  double lo = std::fabs(static_cast<double>(std::bit_cast<float>(lower << 16)));
  double hi = magnitude + 1 == 0x7f80 ? std::ldexp(1.0, 128)
                                      : std::fabs(static_cast<double>(std::bit_cast<float>((lower + 1) << 16)));
  double down = value - lo, up = hi - value;
  if (down < up || (down == up && (lower & 1) == 0)) return static_cast<uint16_t>(lower);
  return static_cast<uint16_t>(lower + 1);
}
inline double F16BitsToDouble(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<double>(h);
}
inline double BF16BitsToDouble(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

// Element access. Floats read/write as double (writes round like XLA: to float first,
// then to the 16-bit format); integers as int64 (unsigned values zero-extended into the
// bit pattern; writes truncate).
inline double GetDouble(const Array& a, int64_t i) {
  const uint8_t* p = &a.bytes[static_cast<size_t>(i * DTypeByteSize(a.dtype))];
  switch (a.dtype) {
    case DType::kF16: { uint16_t b; std::memcpy(&b, p, 2); return F16BitsToDouble(b); }
    case DType::kBF16: { uint16_t b; std::memcpy(&b, p, 2); return BF16BitsToDouble(b); }
    case DType::kF32: { float f; std::memcpy(&f, p, 4); return f; }
    case DType::kF64: { double d; std::memcpy(&d, p, 8); return d; }
    default: ADD_FAILURE() << "GetDouble on " << DTypeName(a.dtype); return 0;
  }
}
inline void SetDouble(Array& a, int64_t i, double v) {
  uint8_t* p = &a.bytes[static_cast<size_t>(i * DTypeByteSize(a.dtype))];
  switch (a.dtype) {
    case DType::kF16: { uint16_t b = ReferenceF16Bits(static_cast<float>(v)); std::memcpy(p, &b, 2); return; }
    case DType::kBF16: { uint16_t b = ReferenceBF16Bits(static_cast<float>(v)); std::memcpy(p, &b, 2); return; }
    case DType::kF32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
    case DType::kF64: std::memcpy(p, &v, 8); return;
    default: ADD_FAILURE() << "SetDouble on " << DTypeName(a.dtype);
  }
}
inline int64_t GetInt(const Array& a, int64_t i) {
  const uint8_t* p = &a.bytes[static_cast<size_t>(i * DTypeByteSize(a.dtype))];
  switch (a.dtype) {
    case DType::kPred: case DType::kU8: return *p;
    case DType::kS8: return static_cast<int8_t>(*p);
    case DType::kS16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kU16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::kS32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kS64: case DType::kU64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    default: ADD_FAILURE() << "GetInt on " << DTypeName(a.dtype); return 0;
  }
}
inline void SetInt(Array& a, int64_t i, int64_t v) {
  uint8_t* p = &a.bytes[static_cast<size_t>(i * DTypeByteSize(a.dtype))];
  std::memcpy(p, &v, static_cast<size_t>(DTypeByteSize(a.dtype)));  // little-endian truncation
}

// Runs the CPU kernel `key` (after its prepare function, if it has one). Fails the test
// if it is missing or returns an error.
// `params` must be the parameter struct the kernel was registered with (as the runtime
// checks when it loads a plan); none for kernels that take none. A kernel that declares a
// workspace gets one of the size it asks for.
inline void RunKernel(const std::string& key, const std::vector<const Array*>& inputs,
                      const std::vector<Array*>& outputs, const KernelParams& params = {}) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << "no kernel " << key;
  ASSERT_EQ(entry->params, params.type()) << key << " takes other parameters than " << params.family();
  std::vector<BufferView> in, out;
  for (const Array* a : inputs) in.push_back(a->View());
  for (Array* a : outputs) out.push_back(a->View());
  KernelArgs args{in, out, params.get()};
  std::vector<std::byte> workspace;
  if (entry->workspace != nullptr) {
    workspace.resize(static_cast<size_t>(entry->workspace(args)) + 64);
    const size_t skew = (64 - reinterpret_cast<uintptr_t>(workspace.data()) % 64) % 64;
    args.workspace = std::span<std::byte>(workspace.data() + skew, workspace.size() - 64);
  }
  KernelState state;
  if (entry->prepare != nullptr) {
    auto prepared = entry->prepare(args);
    ASSERT_TRUE(prepared.ok()) << key << ": " << prepared.status().ToString();
    state = std::move(prepared->state);
    args.state = state.get();
  }
  Status status = entry->fn(KernelContext{}, args);
  ASSERT_TRUE(status.ok()) << key << ": " << status.ToString();
}

// Runs kernel `key` prepared once, then called `threads` times as the executor calls a step
// split over `threads` threads (KernelContext{t, threads}, each call with its own workspace),
// one call after another. `params` must outlive the call.
inline void RunKernelSplit(const std::string& key, const void* params, const std::vector<BufferView>& inputs,
                           const std::vector<Array*>& outputs, int threads) {
  const KernelRegistry::Entry* entry = CpuKernels().Lookup(key);
  ASSERT_NE(entry, nullptr) << "no kernel " << key;
  std::vector<BufferView> out;
  for (Array* a : outputs) out.push_back(a->View());
  KernelArgs args{inputs, out, params};
  KernelState state;
  if (entry->prepare != nullptr) {
    auto prepared = entry->prepare(args);
    ASSERT_TRUE(prepared.ok()) << key << ": " << prepared.status().ToString();
    state = std::move(prepared->state);
    args.state = state.get();
  }
  const auto bytes = entry->workspace != nullptr ? static_cast<size_t>(entry->workspace(args)) : size_t{0};
  for (int t = 0; t < threads; ++t) {
    std::vector<std::byte> workspace(bytes + 64);
    KernelArgs call = args;
    call.workspace = std::span<std::byte>(workspace.data(), bytes);
    Status status = entry->fn(KernelContext{t, threads}, call);
    ASSERT_TRUE(status.ok()) << key << ": " << status.ToString();
  }
}

// Arguments of a direct kernel call with the parameter struct `params` (which must outlive
// the arguments).
template <ParamStruct P>
KernelArgs ArgsWith(std::span<const BufferView> inputs, std::span<const BufferView> outputs, const P& params) {
  return KernelArgs{inputs, outputs, &params};
}

inline std::string Key(std::string_view op, DType dtype) { return KernelKey(op, {dtype}); }

// Threads this process has now (Linux: entries of /proc/self/task); -1 if unknown.
inline int ProcessThreadCount() {
  std::error_code error;
  int count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++count;
  return error ? -1 : count;
}

// Interesting values of each kind, for cross-checks.
inline std::vector<double> SpecialFloats(DType dtype) {
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-3, 100.0,
                                -1000.25, 65504.0, inf, -inf, nan, -nan, 0.1, 7.0, -7.0, 2.0, 3.0};
  if (dtype == DType::kF32 || dtype == DType::kBF16) {
    values.push_back(3.4e38);
    values.push_back(1e-40);  // subnormal in f32
    values.push_back(1e30);
  }
  if (dtype == DType::kF64) {
    values.push_back(1e300);
    values.push_back(4.9e-324);
  }
  if (dtype == DType::kF16) values.push_back(6e-8);  // subnormal in f16
  return values;
}

inline std::vector<int64_t> SpecialInts(DType dtype) {
  const int bits = DTypeBitWidth(dtype);
  const bool is_signed = DTypeKindOf(dtype) == DTypeKind::kSigned;
  std::vector<int64_t> values = {0, 1, 2, 3, 5, 7, bits - 1, bits, bits + 1, 100};
  if (is_signed) {
    int64_t min = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    for (int64_t v : {int64_t{-1}, int64_t{-2}, int64_t{-3}, int64_t{-7}, min, max, min + 1, max - 1}) values.push_back(v);
  } else {
    uint64_t max = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
    for (uint64_t v : {max, max - 1, max / 2, max / 2 + 1}) values.push_back(static_cast<int64_t>(v));
  }
  return values;
}

// Floats match when both are NaN, or equal (with the same sign for zeros), or within
// `rel` relative / `abs` absolute error.
inline bool FloatsMatch(double got, double want, double rel, double abs = 0) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (want == got) return want != 0 || std::signbit(want) == std::signbit(got);
  if (std::isinf(want) || std::isinf(got)) return false;
  return std::fabs(got - want) <= std::max(abs, rel * std::fabs(want));
}

// Relative tolerance for results rounded to `dtype` after computing in higher precision.
inline double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF16: return 2e-3;
    case DType::kBF16: return 1.6e-2;
    case DType::kF32: return 2e-6;
    default: return 1e-14;
  }
}

}  // namespace stablert::kernels::testing
