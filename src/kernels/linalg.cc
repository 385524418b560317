// Linear algebra kernels of StableHLO ops: cholesky and triangular_solve, batched, f32, f64,
// complex<f32>, complex<f64>.
//
//   "cholesky.<T>"          in: a [..., n, n]   out: l [..., n, n]   params: CholeskyParams
//       Reads only the requested triangle; the other triangle of the result is zero. A
//       matrix that is not positive definite gives a result of NaNs (XLA:CPU does the same;
//       complex ones are (NaN, NaN) as there).
//   "triangular_solve.<T>"  in: a [..., k, k], b [..., m, n]   out: x [..., m, n]
//       params: TriangularSolveParams (linalg_params.h). Solves op(a) x = b (left side)
//       or x op(a) = b; only the requested triangle of `a` is read.
//
// Both run LAPACK/BLAS (linalg_lapack.h) directly on the row-major data: a row-major matrix
// is the column-major transpose, so the lower triangle of a row-major matrix is the upper
// triangle of the same memory read column-major, and a left-side solve is a right-side one.
// For complex matrices the same holds without conjugation: potrf's U^H U of the transposed
// Hermitian matrix is L L^H of the original with L = U^T, which is U's memory read row-major.
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/families.h"
#include "kernels/linalg_lapack.h"
#include "kernels/linalg_params.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using lapack::Int;

int64_t BatchOf(const BufferView& view, int matrix_rank = 2) {
  int64_t batch = 1;
  for (int i = 0; i + matrix_rank < view.rank(); ++i) batch *= view.dims[static_cast<size_t>(i)];
  return batch;
}

template <typename T>
Status CholeskyKernel(const KernelContext&, const KernelArgs& args) {
  const BufferView& in = args.inputs[0];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const bool lower = args.Params<CholeskyParams>().lower;
  const int64_t n = in.dims.back();
  const int64_t batch = BatchOf(in);
  const T* src = in.as<T>();
  T* dst = out.as<T>();
  if (src != dst) std::memcpy(dst, src, static_cast<size_t>(out.num_elements) * sizeof(T));
  const Int n_v = static_cast<Int>(n);
  const char uplo = lower ? 'U' : 'L';  // the row-major triangle, seen column-major
  for (int64_t b = 0; b < batch; ++b) {
    T* m = dst + b * n * n;
    Int info = 0;
    lapack::Routines<T>::potrf(&uplo, &n_v, m, &n_v, &info, 1);
    if (info != 0) {
      const lapack::Real<T> nan = std::numeric_limits<lapack::Real<T>>::quiet_NaN();
      if constexpr (lapack::kComplex<T>) {
        std::fill(m, m + n * n, T(nan, nan));
      } else {
        std::fill(m, m + n * n, nan);
      }
      continue;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (lower ? j > i : j < i) m[i * n + j] = T(0);
  }
  return OkStatus();
}

template <typename T>
Status TriangularSolveKernel(const KernelContext&, const KernelArgs& args) {
  const BufferView& a = args.inputs[0];
  const BufferView& b = args.inputs[1];
  const BufferView& out = args.outputs[0];
  if (out.num_elements == 0) return OkStatus();
  const TriangularSolveParams& p = args.Params<TriangularSolveParams>();
  const bool left_side = p.left_side, lower = p.lower, unit_diagonal = p.unit_diagonal;
  const int64_t rows = b.dims[b.dims.size() - 2], cols = b.dims.back();
  const int64_t k = a.dims.back();
  const int64_t batch = BatchOf(b);
  std::memcpy(out.data, b.data, static_cast<size_t>(out.num_elements) * sizeof(T));
  if (k == 0) return OkStatus();
  // Row-major B (rows x cols) is column-major B^T (cols x rows): op(A) X = B becomes
  // X^T op(A)^T = B^T with A read column-major as A^T, so the side and the triangle flip
  // while the transpose flag stays.
  const char side = left_side ? 'R' : 'L';
  const char uplo = lower ? 'U' : 'L';
  const char trans = p.transpose == TriangularTranspose::kNoTranspose ? 'N'
                     : p.transpose == TriangularTranspose::kTranspose ? 'T'
                                                                      : 'C';
  const char diag = unit_diagonal ? 'U' : 'N';
  const Int m_v = static_cast<Int>(cols), n_v = static_cast<Int>(rows);
  const Int lda = static_cast<Int>(std::max<int64_t>(1, k)),
            ldb = static_cast<Int>(std::max<int64_t>(1, cols));
  const T one = T(1);
  const T* a_data = a.as<T>();
  T* x = out.as<T>();
  for (int64_t i = 0; i < batch; ++i)
    lapack::Routines<T>::trsm(&side, &uplo, &trans, &diag, &m_v, &n_v, &one, a_data + i * k * k,
                              &lda, x + i * rows * cols, &ldb, 1, 1, 1, 1);
  return OkStatus();
}

}  // namespace

Status RegisterLinalgKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(
      r.Register<CholeskyParams>(KernelKey("cholesky", {DType::kF32}), &CholeskyKernel<float>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<CholeskyParams>(KernelKey("cholesky", {DType::kF64}), &CholeskyKernel<double>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<TriangularSolveParams>(KernelKey("triangular_solve", {DType::kF32}), &TriangularSolveKernel<float>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<TriangularSolveParams>(KernelKey("triangular_solve", {DType::kF64}), &TriangularSolveKernel<double>));
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  STABLERT_RETURN_IF_ERROR(r.Register<CholeskyParams>(KernelKey("cholesky", {DType::kC64}), &CholeskyKernel<C64>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<CholeskyParams>(KernelKey("cholesky", {DType::kC128}), &CholeskyKernel<C128>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<TriangularSolveParams>(KernelKey("triangular_solve", {DType::kC64}), &TriangularSolveKernel<C64>));
  STABLERT_RETURN_IF_ERROR(
      r.Register<TriangularSolveParams>(KernelKey("triangular_solve", {DType::kC128}), &TriangularSolveKernel<C128>));
  return OkStatus();
}

}  // namespace stablert::kernels
