// Batched matrix product: "dot.<T>", out[b,m,n] = sum_k lhs(b,m,k) * rhs(b,k,n).
// lhs is stored [B,M,K] or [B,K,M] and rhs [B,K,N] or [B,N,K] (params[0] says which);
// the plan reshapes/transposes dot_general operands into these forms. A straightforward
// loop nest whose inner loop runs over contiguous memory; library GEMMs come later.
#include <cstring>

#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

template <DType D>
Status DotKernel(const KernelContext&, const KernelArgs& args) {
  using T = Storage<D>;
  const BufferView& lhs_view = args.inputs[0];
  const BufferView& rhs_view = args.inputs[1];
  const BufferView& out_view = args.outputs[0];
  const bool lhs_bkm = args.params[0][0] != 0;
  const bool rhs_bnk = args.params[0][1] != 0;
  const int64_t batch = out_view.dims[0];
  const int64_t m_size = out_view.dims[1];
  const int64_t n_size = out_view.dims[2];
  const int64_t k_size = lhs_bkm ? lhs_view.dims[1] : lhs_view.dims[2];
  // Element strides of lhs(m, k) and rhs(k, n) within one batch.
  const int64_t lhs_sm = lhs_bkm ? 1 : k_size, lhs_sk = lhs_bkm ? m_size : 1;
  const int64_t rhs_sk = rhs_bnk ? 1 : n_size, rhs_sn = rhs_bnk ? k_size : 1;
  const T* lhs = lhs_view.as<const T>();
  const T* rhs = rhs_view.as<const T>();
  T* out = out_view.as<T>();
  for (int64_t b = 0; b < batch; ++b) {
    const T* l = lhs + b * m_size * k_size;
    const T* r = rhs + b * k_size * n_size;
    T* o = out + b * m_size * n_size;
    if (!rhs_bnk) {
      // Inner loop over n, contiguous in rhs and out.
      for (int64_t m = 0; m < m_size; ++m) {
        T* row = o + m * n_size;
        for (int64_t n = 0; n < n_size; ++n) row[n] = T(0);
        for (int64_t k = 0; k < k_size; ++k) {
          const T a = l[m * lhs_sm + k * lhs_sk];
          const T* r_row = r + k * rhs_sk;
          for (int64_t n = 0; n < n_size; ++n) row[n] += a * r_row[n];
        }
      }
    } else {
      // Inner loop over k, contiguous in rhs.
      for (int64_t m = 0; m < m_size; ++m) {
        for (int64_t n = 0; n < n_size; ++n) {
          const T* r_row = r + n * rhs_sn;
          T sum = 0;
          for (int64_t k = 0; k < k_size; ++k) sum += l[m * lhs_sm + k * lhs_sk] * r_row[k];
          o[m * n_size + n] = sum;
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status RegisterDotKernels(KernelRegistry& r) {
  return ForEachDType(DTypeList<DType::kF32, DType::kF64>{}, [&]<DType D>() {
    return r.Register(KernelKey("dot", {D}), &DotKernel<D>);
  });
}

}  // namespace stablert::kernels
