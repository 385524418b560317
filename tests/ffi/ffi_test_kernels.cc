// FFI handlers for tests/jax/test_ffi.py, written against the ffi.h jaxlib ships (as a user
// kernel would be) and registered by the test for both the `cpu` and `stablert` platforms,
// so the same call runs on XLA:CPU and on StableRT.
#include <algorithm>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

int64_t g_calls = 0;  // StablertTestCountCall's calls (a side effect a test can observe)

// Counts its calls; its result (a copy of x) may be left unread.
ffi::Error CountCall(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  ++g_calls;
  std::copy(x.typed_data(), x.typed_data() + x.element_count(), y->typed_data());
  return ffi::Error::Success();
}

// y = x * scale (f32, any shape).
ffi::Error Scale(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float scale) {
  const size_t n = x.element_count();
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < n; ++i) out[i] = in[i] * scale;
  return ffi::Error::Success();
}

template <typename T>
void Axpy(const ffi::AnyBuffer& x, const ffi::AnyBuffer& y, ffi::Result<ffi::AnyBuffer>& out, double alpha) {
  const size_t n = x.element_count();
  const T* a = x.typed_data<T>();
  const T* b = y.typed_data<T>();
  T* c = out->typed_data<T>();
  for (size_t i = 0; i < n; ++i) c[i] = static_cast<T>(static_cast<T>(alpha) * a[i] + b[i]);
}

// out = alpha * x + y for f32, f64, s32, s64, u8 and c64 (x, y and out of one type and shape).
ffi::Error AxpyAny(ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::Result<ffi::AnyBuffer> out, double alpha) {
  if (x.element_type() != y.element_type() || x.element_type() != out->element_type())
    return ffi::Error::InvalidArgument("axpy: operand and result types differ");
  if (x.element_count() != y.element_count() || x.element_count() != out->element_count())
    return ffi::Error::InvalidArgument("axpy: operand and result sizes differ");
  switch (x.element_type()) {
    case ffi::F32: Axpy<float>(x, y, out, alpha); break;
    case ffi::F64: Axpy<double>(x, y, out, alpha); break;
    case ffi::S32: Axpy<int32_t>(x, y, out, alpha); break;
    case ffi::S64: Axpy<int64_t>(x, y, out, alpha); break;
    case ffi::U8: Axpy<uint8_t>(x, y, out, alpha); break;
    case ffi::C64: Axpy<std::complex<float>>(x, y, out, alpha); break;
    default: return ffi::Error::InvalidArgument("axpy: unsupported element type");
  }
  return ffi::Error::Success();
}

// Every attribute kind: writes the values it received, as f64, into `out` (17 elements).
ffi::Error Attributes(ffi::Result<ffi::Buffer<ffi::F64>> out, int8_t i8, int16_t i16, int32_t i32, int64_t i64,
                      uint8_t u8, uint16_t u16, uint32_t u32, uint64_t u64, float f32, double f64, bool flag,
                      std::string_view name, ffi::Span<const int64_t> ints, ffi::Span<const float> floats,
                      ffi::Dictionary config) {
  if (out->element_count() != 17) return ffi::Error::InvalidArgument("attributes: out must have 17 elements");
  double* o = out->typed_data();
  o[0] = i8; o[1] = i16; o[2] = i32; o[3] = static_cast<double>(i64);
  o[4] = u8; o[5] = u16; o[6] = u32; o[7] = static_cast<double>(u64);
  o[8] = f32; o[9] = f64; o[10] = flag ? 1 : 0;
  double name_code = 0;
  for (char c : name) name_code = name_code * 31 + static_cast<unsigned char>(c);
  o[11] = name_code;
  double s = 0;
  for (int64_t v : ints) s += static_cast<double>(v);
  o[12] = s + 1000 * static_cast<double>(ints.size());
  s = 0;
  for (float v : floats) s += v;
  o[13] = s + 1000 * static_cast<double>(floats.size());
  auto a = config.get<int64_t>("a");
  if (a.has_error()) return a.error();
  auto b = config.get<double>("b");
  if (b.has_error()) return b.error();
  auto label = config.get<std::string_view>("label");
  if (label.has_error()) return label.error();
  o[14] = static_cast<double>(*a);
  o[15] = *b;
  o[16] = static_cast<double>(label->size());
  return ffi::Error::Success();
}

// Two results of different types: the row sums of x [..., n] and the count of x's
// positive elements (s32 scalar).
ffi::Error RowSumAndCount(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> sums,
                          ffi::ResultBuffer<ffi::S32> positive) {
  auto dims = x.dimensions();
  const int64_t n = dims.size() == 0 ? 1 : dims[dims.size() - 1];
  const int64_t rows = n == 0 ? 0 : static_cast<int64_t>(x.element_count()) / n;
  const float* in = x.typed_data();
  int32_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      acc += in[r * n + j];
      count += in[r * n + j] > 0;
    }
    sums->typed_data()[r] = acc;
  }
  positive->typed_data()[0] = count;
  return ffi::Error::Success();
}

// Writes `value` into element 0 of y and nothing else: used with y aliasing x
// (input_output_aliases), so the rest of y must hold x on entry.
ffi::Error SetFirst(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float value) {
  if (y->element_count() > 0) y->typed_data()[0] = value;
  return ffi::Error::Success();
}

// Fails with InvalidArgument whose message carries `code`.
ffi::Error Fail(ffi::Buffer<ffi::F32>, ffi::ResultBuffer<ffi::F32>, int32_t code) {
  return ffi::Error::InvalidArgument("test handler failed on purpose with code " + std::to_string(code));
}

// y = x + the ordinal of the device the call runs on (f32, any shape): which device ran each
// shard of a partitioned call.
ffi::Error AddDeviceOrdinal(int32_t ordinal, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i] + static_cast<float>(ordinal);
  return ffi::Error::Success();
}

// y[i] = x[i] * x[i] + 1 (f32, any shape), computed by `tasks` tasks scheduled on the
// runtime's thread pool (ffi::ThreadPool), each squaring one contiguous chunk; waits for all.
ffi::Error SquareOnThreadPool(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                              int32_t tasks) {
  const int64_t n = static_cast<int64_t>(x.element_count());
  if (tasks < 1) return ffi::Error::InvalidArgument("tasks must be positive");
  std::mutex mutex;
  std::condition_variable done;
  int32_t left = tasks;
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int32_t t = 0; t < tasks; ++t) {
    pool.Schedule([&, t] {
      for (int64_t i = n * t / tasks; i < n * (t + 1) / tasks; ++i) out[i] = in[i] * in[i] + 1;
      std::lock_guard<std::mutex> lock(mutex);
      if (--left == 0) done.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return left == 0; });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestSquareOnThreadPool, SquareOnThreadPool,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int32_t>("tasks"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestAddDeviceOrdinal, AddDeviceOrdinal,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestScale, Scale,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>(
                                  "scale"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestCountCall, CountCall,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());

extern "C" __attribute__((visibility("default"))) int64_t stablert_test_calls() { return g_calls; }

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestAxpy, AxpyAny,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<double>("alpha"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestAttributes, Attributes,
                              ffi::Ffi::Bind()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Attr<int8_t>("i8")
                                  .Attr<int16_t>("i16")
                                  .Attr<int32_t>("i32")
                                  .Attr<int64_t>("i64")
                                  .Attr<uint8_t>("u8")
                                  .Attr<uint16_t>("u16")
                                  .Attr<uint32_t>("u32")
                                  .Attr<uint64_t>("u64")
                                  .Attr<float>("f32")
                                  .Attr<double>("f64")
                                  .Attr<bool>("flag")
                                  .Attr<std::string_view>("name")
                                  .Attr<ffi::Span<const int64_t>>("ints")
                                  .Attr<ffi::Span<const float>>("floats")
                                  .Attr<ffi::Dictionary>("config"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestRowSumAndCount, RowSumAndCount,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestFail, Fail,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<int32_t>(
                                  "code"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(StablertTestSetFirst, SetFirst,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>(
                                  "value"));
