#include "kernels/onednn_common.h"

#include <omp.h>

#include <cstdlib>
#include <memory>
#include <new>

namespace stablert::kernels::onednn {

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = [] {
    OneDnnThreadScope single;
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

OneDnnThreadScope::OneDnnThreadScope() {
  thread_local bool single = false;
  if (!single) {
    omp_set_num_threads(1);
    single = true;
  }
}

Status FromDnnlError(const dnnl::error& error, const std::string& what) {
  if (error.status == dnnl_out_of_memory) return ResourceExhausted("oneDNN: out of memory in " + what);
  return Internal("oneDNN " + what + ": " + error.what() + " (status " + std::to_string(static_cast<int>(error.status)) +
                  ")");
}

StatusOr<dnnl::memory::data_type> DnnlType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return dnnl::memory::data_type::f32;
    case DType::kBF16: return dnnl::memory::data_type::bf16;
    case DType::kF16: return dnnl::memory::data_type::f16;
    default: return Unimplemented("oneDNN does not take " + std::string(DTypeName(dtype)));
  }
}

void CapIsa(env::Isa level) {
  dnnl::cpu_isa cap = dnnl::cpu_isa::all;
  switch (level) {
    case env::Isa::kBest: return;
    case env::Isa::kAvx512: cap = dnnl::cpu_isa::avx512_core; break;
    case env::Isa::kAvx2: cap = dnnl::cpu_isa::avx2; break;
    case env::Isa::kSse4: cap = dnnl::cpu_isa::sse41; break;
  }
  try {
    dnnl::set_max_cpu_isa(cap);
  } catch (const dnnl::error&) {
    // Already fixed by an earlier primitive or setting: the first one stands.
  }
}

void* ThreadScratch(size_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    buffer.reset(std::aligned_alloc(64, rounded));
    if (buffer == nullptr) {
      capacity = 0;
      throw std::bad_alloc();
    }
    capacity = rounded;
  }
  return buffer.get();
}

}  // namespace stablert::kernels::onednn
