// Kernels of the LAPACK custom calls JAX's CPU lowering emits (`lapack_<p><routine>_ffi`),
// batched, f32/f64/complex<f32>/complex<f64>. Each runs the LAPACK routine of the same name on
// every matrix of the batch and reports LAPACK's `info` where the custom call has an info result;
// JAX's lowering turns a non-zero info into NaNs itself.
//
// Matrices arrive column-major, as the custom calls' layouts ask: the lowering
// (plan/lower_linalg.cc) transposes them, so a matrix view has dims [..., cols, rows].
// Vectors (tau, pivots, eigenvalues, ...) and info arrays are dense [..., k] / [...].
// Character-valued attributes arrive as flags and enums (linalg_params.h).
//
//   "lapack_potrf.<T>"  in: a            out: a, info           params: LapackPotrfParams
//   "lapack_trsm.<T>"   in: a, b         out: b                 params: LapackTrsmParams
//   "lapack_getrf.<T>"  in: a            out: a, ipiv, info     (ipiv 1-based, i32)
//   "lapack_geqrf.<T>"  in: a            out: a, tau
//   "lapack_geqp3.<T>"  in: a, jpvt      out: a, jpvt, tau      (jpvt 1-based, i32)
//   "lapack_orgqr.<T>"  in: a, tau       out: a                 (ungqr for complex)
//   "lapack_syevd.<T>"  in: a            out: v, w (real), info params: LapackSyevdParams (heevd)
//   "lapack_gesdd.<T>", "lapack_gesvd.<T>"
//                       in: a            out: a, s (real), u, vt, info  params: LapackSvdParams
//   "lapack_gehrd.<T>"  in: a            out: a, tau, info      params: LapackGehrdParams
//   "lapack_sytrd.<T>"  in: a            out: a, d, e (real), tau, info  params: LapackSytrdParams
//                                                                           (hetrd)
//   "lapack_gtsv.<T>"   in: dl, d, du, b out: dl, d, du, b, info
//   "lapack_gees.<T>"   in: a            out: t, vs, wr, wi, sdim, info (real T)
//                                        out: t, vs, w, sdim, info      (complex T)
//                       params: LapackGeesParams
//   "lapack_geev.<T>"   in: a            out: wr, wi, vl, vr, info (real T; vectors complex)
//                                        out: w, vl, vr, info      (complex T)
//                       params: LapackGeevParams; a matrix with a non-finite entry gives info -4
//                       without calling LAPACK, as jaxlib does.
//   "lapack_gtsv_perturbed.<T>"  in: dl, d, du, b   out: x   (jaxlib's
//                       tridiagonal_solve_perturbed_ffi: see SolvePerturbed)
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/families.h"
#include "kernels/linalg_lapack.h"
#include "kernels/linalg_params.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

using lapack::Int;
using lapack::kComplex;
using lapack::Real;

// A batch of column-major matrices in a view with dims [..., cols, rows].
struct Matrices {
  int64_t batch = 1, rows = 0, cols = 0;
  explicit Matrices(const BufferView& view) {
    const size_t r = view.dims.size();
    rows = view.dims[r - 1];
    cols = view.dims[r - 2];
    for (size_t i = 0; i + 2 < r; ++i) batch *= view.dims[i];
  }
  int64_t size() const { return rows * cols; }
  Int ld() const { return static_cast<Int>(std::max<int64_t>(1, rows)); }
};

int64_t LastDim(const BufferView& view) { return view.dims.empty() ? 1 : view.dims.back(); }

template <typename T>
T* CopyIn(const BufferView& in, const BufferView& out) {
  if (out.num_elements > 0 && in.data != out.data)
    std::memcpy(out.data, in.data, static_cast<size_t>(out.num_elements) * sizeof(T));
  return out.as<T>();
}

void ZeroInfo(const BufferView& info) {
  if (info.num_elements > 0)
    std::memset(info.data, 0, static_cast<size_t>(info.num_elements) * sizeof(int32_t));
}

// LAPACK's optimal workspace size from a query's first work element.
template <typename T>
Int WorkSize(T query) {
  return std::max<Int>(1, static_cast<Int>(std::real(query)) + 1);
}

// LAPACK's characters for the options.
char Job(bool compute) { return compute ? 'V' : 'N'; }
char Uplo(bool lower) { return lower ? 'L' : 'U'; }
char Trans(LapackTrans trans) {
  return trans == LapackTrans::kNo ? 'N' : trans == LapackTrans::kTranspose ? 'T' : 'C';
}
char SvdJob(LapackSvdJob job) { return job == LapackSvdJob::kAll ? 'A' : job == LapackSvdJob::kSome ? 'S' : 'N'; }

template <typename T>
Status Potrf(const KernelContext&, const KernelArgs& args) {
  Matrices m(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  int32_t* info = args.outputs[1].as<int32_t>();
  const char uplo = Uplo(args.Params<LapackPotrfParams>().lower);
  const Int n = static_cast<Int>(m.rows), lda = m.ld();
  for (int64_t b = 0; b < m.batch; ++b) {
    Int status = 0;
    if (n > 0) lapack::Routines<T>::potrf(&uplo, &n, a + b * m.size(), &lda, &status, 1);
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status Trsm(const KernelContext&, const KernelArgs& args) {
  Matrices am(args.inputs[0]), bm(args.inputs[1]);
  const T* a = args.inputs[0].as<T>();
  T* x = CopyIn<T>(args.inputs[1], args.outputs[0]);
  if (bm.size() == 0 || am.size() == 0) return OkStatus();
  const LapackTrsmParams& p = args.Params<LapackTrsmParams>();
  const char side = p.left_side ? 'L' : 'R', uplo = Uplo(p.lower), trans = Trans(p.trans),
             diag = p.unit_diagonal ? 'U' : 'N';
  const Int m = static_cast<Int>(bm.rows), n = static_cast<Int>(bm.cols), lda = am.ld(),
            ldb = bm.ld();
  const T one = T(1);
  for (int64_t b = 0; b < bm.batch; ++b)
    lapack::Routines<T>::trsm(&side, &uplo, &trans, &diag, &m, &n, &one, a + b * am.size(), &lda,
                              x + b * bm.size(), &ldb, 1, 1, 1, 1);
  return OkStatus();
}

template <typename T>
Status Getrf(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  int32_t* ipiv = args.outputs[1].as<int32_t>();
  int32_t* info = args.outputs[2].as<int32_t>();
  const Int m = static_cast<Int>(mm.rows), n = static_cast<Int>(mm.cols), lda = mm.ld();
  const int64_t k = std::min(mm.rows, mm.cols);
  for (int64_t b = 0; b < mm.batch; ++b) {
    Int status = 0;
    if (k > 0) lapack::Routines<T>::getrf(&m, &n, a + b * mm.size(), &lda, ipiv + b * k, &status);
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status Geqrf(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  T* tau = args.outputs[1].as<T>();
  const int64_t k = std::min(mm.rows, mm.cols);
  if (k == 0) return OkStatus();
  const Int m = static_cast<Int>(mm.rows), n = static_cast<Int>(mm.cols), lda = mm.ld();
  T query{};
  Int lwork = -1, status = 0;
  lapack::Routines<T>::geqrf(&m, &n, nullptr, &lda, nullptr, &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b)
    lapack::Routines<T>::geqrf(&m, &n, a + b * mm.size(), &lda, tau + b * k, work.data(), &lwork,
                               &status);
  return OkStatus();
}

template <typename T>
Status Geqp3(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  int32_t* jpvt = CopyIn<int32_t>(args.inputs[1], args.outputs[1]);
  T* tau = args.outputs[2].as<T>();
  const int64_t k = std::min(mm.rows, mm.cols);
  if (mm.size() == 0) return OkStatus();
  const Int m = static_cast<Int>(mm.rows), n = static_cast<Int>(mm.cols), lda = mm.ld();
  T query{};
  Int lwork = -1, status = 0;
  std::vector<Real<T>> rwork(static_cast<size_t>(2 * std::max<int64_t>(1, mm.cols)));
  auto call = [&](T* a_b, Int* jpvt_b, T* tau_b, T* work, Int* lw) {
    if constexpr (kComplex<T>) {
      lapack::Routines<T>::geqp3(&m, &n, a_b, &lda, jpvt_b, tau_b, work, lw, rwork.data(), &status);
    } else {
      lapack::Routines<T>::geqp3(&m, &n, a_b, &lda, jpvt_b, tau_b, work, lw, &status);
    }
  };
  call(nullptr, nullptr, nullptr, &query, &lwork);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b)
    call(a + b * mm.size(), jpvt + b * mm.cols, tau + b * k, work.data(), &lwork);
  return OkStatus();
}

template <typename T>
Status Orgqr(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  const T* tau = args.inputs[1].as<T>();
  const int64_t k = LastDim(args.inputs[1]);
  if (mm.size() == 0) return OkStatus();
  const Int m = static_cast<Int>(mm.rows), n = static_cast<Int>(mm.cols), k_v = static_cast<Int>(k),
            lda = mm.ld();
  T query{};
  Int lwork = -1, status = 0;
  lapack::Routines<T>::orgqr(&m, &n, &k_v, nullptr, &lda, nullptr, &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b)
    lapack::Routines<T>::orgqr(&m, &n, &k_v, a + b * mm.size(), &lda, tau + b * k, work.data(),
                               &lwork, &status);
  return OkStatus();
}

template <typename T>
Status Syevd(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  Real<T>* w = args.outputs[1].as<Real<T>>();
  int32_t* info = args.outputs[2].as<int32_t>();
  ZeroInfo(args.outputs[2]);
  if (mm.size() == 0) return OkStatus();
  const LapackSyevdParams& p = args.Params<LapackSyevdParams>();
  const char jobz = Job(p.compute_vectors), uplo = Uplo(p.lower);
  const Int n = static_cast<Int>(mm.rows), lda = mm.ld();
  T query{};
  Real<T> rquery{};
  Int iquery = 0, lwork = -1, lrwork = -1, liwork = -1, status = 0;
  std::vector<T> work;
  std::vector<Real<T>> rwork;
  std::vector<Int> iwork;
  auto call = [&](T* a_b, Real<T>* w_b, T* work_p, Real<T>* rwork_p, Int* iwork_p) {
    if constexpr (kComplex<T>) {
      lapack::Routines<T>::syevd(&jobz, &uplo, &n, a_b, &lda, w_b, work_p, &lwork, rwork_p, &lrwork,
                                 iwork_p, &liwork, &status, 1, 1);
    } else {
      lapack::Routines<T>::syevd(&jobz, &uplo, &n, a_b, &lda, w_b, work_p, &lwork, iwork_p, &liwork,
                                 &status, 1, 1);
    }
  };
  call(nullptr, nullptr, &query, &rquery, &iquery);
  lwork = WorkSize(query);
  lrwork = WorkSize(rquery);
  liwork = std::max<Int>(1, iquery);
  work.resize(static_cast<size_t>(lwork));
  rwork.resize(static_cast<size_t>(lrwork));
  iwork.resize(static_cast<size_t>(liwork));
  for (int64_t b = 0; b < mm.batch; ++b) {
    call(a + b * mm.size(), w + b * n, work.data(), rwork.data(), iwork.data());
    info[b] = status;
  }
  return OkStatus();
}

template <typename T, bool kDivideAndConquer>
Status Svd(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]), um(args.outputs[2]), vtm(args.outputs[3]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  Real<T>* s = args.outputs[1].as<Real<T>>();
  T* u = args.outputs[2].as<T>();
  T* vt = args.outputs[3].as<T>();
  int32_t* info = args.outputs[4].as<int32_t>();
  ZeroInfo(args.outputs[4]);
  if (mm.size() == 0) return OkStatus();
  const char job = SvdJob(args.Params<LapackSvdParams>().job);
  const Int m = static_cast<Int>(mm.rows), n = static_cast<Int>(mm.cols), lda = mm.ld();
  const Int ldu = mm.ld(), ldvt = vtm.ld();
  const int64_t k = std::min(mm.rows, mm.cols);
  // u and vt are written only as far as `job` asks; the rest keeps zeros.
  if (args.outputs[2].num_elements > 0)
    std::memset(static_cast<void*>(u), 0,
                static_cast<size_t>(args.outputs[2].num_elements) * sizeof(T));
  if (args.outputs[3].num_elements > 0)
    std::memset(static_cast<void*>(vt), 0,
                static_cast<size_t>(args.outputs[3].num_elements) * sizeof(T));
  // LAPACK wants ldu >= m and ldvt >= the rows it writes even when u/vt are not referenced.
  T u_dummy{}, vt_dummy{};
  T* u_ptr = um.size() > 0 ? u : &u_dummy;
  T* vt_ptr = vtm.size() > 0 ? vt : &vt_dummy;
  T query{};
  Int lwork = -1, status = 0;
  const int64_t mx = std::max(mm.rows, mm.cols), mn = std::max<int64_t>(1, k);
  std::vector<Int> iwork(static_cast<size_t>(8 * mn));
  // Complex routines' real workspace, sized as LAPACK documents it.
  size_t rwork_size = 1;
  if constexpr (kComplex<T>) {
    rwork_size =
        !kDivideAndConquer ? static_cast<size_t>(5 * mn)
        : job == 'N'
            ? static_cast<size_t>(7 * mn)
            : static_cast<size_t>(std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn));
  }
  std::vector<Real<T>> rwork(rwork_size);
  auto call = [&](T* a_b, Real<T>* s_b, T* u_b, T* vt_b, T* work_p) {
    if constexpr (kDivideAndConquer && kComplex<T>) {
      lapack::Routines<T>::gesdd(&job, &m, &n, a_b, &lda, s_b, u_b, &ldu, vt_b, &ldvt, work_p,
                                 &lwork, rwork.data(), iwork.data(), &status, 1);
    } else if constexpr (kDivideAndConquer) {
      lapack::Routines<T>::gesdd(&job, &m, &n, a_b, &lda, s_b, u_b, &ldu, vt_b, &ldvt, work_p,
                                 &lwork, iwork.data(), &status, 1);
    } else if constexpr (kComplex<T>) {
      lapack::Routines<T>::gesvd(&job, &job, &m, &n, a_b, &lda, s_b, u_b, &ldu, vt_b, &ldvt, work_p,
                                 &lwork, rwork.data(), &status, 1, 1);
    } else {
      lapack::Routines<T>::gesvd(&job, &job, &m, &n, a_b, &lda, s_b, u_b, &ldu, vt_b, &ldvt, work_p,
                                 &lwork, &status, 1, 1);
    }
  };
  call(nullptr, nullptr, nullptr, nullptr, &query);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b) {
    T* ub = um.size() > 0 ? u_ptr + b * um.size() : u_ptr;
    T* vtb = vtm.size() > 0 ? vt_ptr + b * vtm.size() : vt_ptr;
    call(a + b * mm.size(), s + b * k, ub, vtb, work.data());
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status Gehrd(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  T* tau = args.outputs[1].as<T>();
  int32_t* info = args.outputs[2].as<int32_t>();
  ZeroInfo(args.outputs[2]);
  if (mm.size() == 0) return OkStatus();
  const Int n = static_cast<Int>(mm.rows), lda = mm.ld();
  const LapackGehrdParams& p = args.Params<LapackGehrdParams>();
  const Int ilo = static_cast<Int>(p.low), ihi = static_cast<Int>(p.high);
  const int64_t tau_step = LastDim(args.outputs[1]);
  // gehrd writes n-1 scalar factors; the result holds tau_step (= n-1) of them.
  std::vector<T> tau_tmp(static_cast<size_t>(std::max<int64_t>(1, mm.rows)));
  T query{};
  Int lwork = -1, status = 0;
  lapack::Routines<T>::gehrd(&n, &ilo, &ihi, nullptr, &lda, nullptr, &query, &lwork, &status);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b) {
    lapack::Routines<T>::gehrd(&n, &ilo, &ihi, a + b * mm.size(), &lda, tau_tmp.data(), work.data(),
                               &lwork, &status);
    std::copy_n(tau_tmp.data(), tau_step, tau + b * tau_step);
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status Sytrd(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  Real<T>* d = args.outputs[1].as<Real<T>>();
  Real<T>* e = args.outputs[2].as<Real<T>>();
  T* tau = args.outputs[3].as<T>();
  int32_t* info = args.outputs[4].as<int32_t>();
  ZeroInfo(args.outputs[4]);
  if (mm.size() == 0) return OkStatus();
  const char uplo = Uplo(args.Params<LapackSytrdParams>().lower);
  const Int n = static_cast<Int>(mm.rows), lda = mm.ld();
  const int64_t e_step = LastDim(args.outputs[2]), tau_step = LastDim(args.outputs[3]);
  std::vector<Real<T>> e_tmp(static_cast<size_t>(std::max<int64_t>(1, mm.rows)));
  std::vector<T> tau_tmp(e_tmp.size());
  T query{};
  Int lwork = -1, status = 0;
  lapack::Routines<T>::sytrd(&uplo, &n, nullptr, &lda, nullptr, nullptr, nullptr, &query, &lwork,
                             &status, 1);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b) {
    lapack::Routines<T>::sytrd(&uplo, &n, a + b * mm.size(), &lda, d + b * n, e_tmp.data(),
                               tau_tmp.data(), work.data(), &lwork, &status, 1);
    std::copy_n(e_tmp.data(), e_step, e + b * e_step);
    std::copy_n(tau_tmp.data(), tau_step, tau + b * tau_step);
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status Gtsv(const KernelContext&, const KernelArgs& args) {
  T* dl = CopyIn<T>(args.inputs[0], args.outputs[0]);
  T* d = CopyIn<T>(args.inputs[1], args.outputs[1]);
  T* du = CopyIn<T>(args.inputs[2], args.outputs[2]);
  Matrices bm(args.inputs[3]);
  T* x = CopyIn<T>(args.inputs[3], args.outputs[3]);
  int32_t* info = args.outputs[4].as<int32_t>();
  ZeroInfo(args.outputs[4]);
  const int64_t n = LastDim(args.inputs[1]);
  if (n == 0 || bm.size() == 0) return OkStatus();
  const Int n_v = static_cast<Int>(n), nrhs = static_cast<Int>(bm.cols), ldb = bm.ld();
  for (int64_t b = 0; b < bm.batch; ++b) {
    Int status = 0;
    // dl[0] is outside the matrix: LAPACK's sub-diagonal starts at dl[1].
    lapack::Routines<T>::gtsv(&n_v, &nrhs, dl + b * n + 1, d + b * n, du + b * n, x + b * bm.size(),
                              &ldb, &status);
    info[b] = status;
  }
  return OkStatus();
}

// Makes a small back-substitution pivot safe to divide by, the way LAPACK's xLAGTS does: a
// pivot below 1 in magnitude whose row would overflow when divided is moved away from zero
// by `perturb` (doubling each time, with the pivot's sign), or the pivot and the row are
// scaled up when the pivot is only tiny.
template <typename T>
void PerturbPivot(Real<T> perturb, T& pivot, std::vector<T>& row) {
  using R = Real<T>;
  const R one(1);
  const R tiny = std::numeric_limits<R>::min();
  const R small = one / std::numeric_limits<R>::max();
  const R safe_min = small < tiny ? tiny : small * (one + std::numeric_limits<R>::epsilon());
  const R big = one / safe_min;
  R magnitude = std::abs(pivot);
  if (magnitude >= one) return;
  perturb = std::copysign(std::max(std::abs(perturb), safe_min), std::real(pivot));
  R row_max = 0;
  for (const T& v : row) row_max = std::max(row_max, static_cast<R>(std::abs(v)));
  while (magnitude < one) {
    if (magnitude < safe_min) {
      if (magnitude == R(0) || row_max * safe_min > magnitude) {
        pivot += perturb;
        perturb *= R(2);
      } else {
        pivot *= big;
        for (T& v : row) v *= big;
        return;
      }
    } else if (row_max > magnitude * big) {
      pivot += perturb;
      perturb *= R(2);
    } else {
      return;
    }
    magnitude = std::abs(pivot);
  }
}

// jaxlib's `tridiagonal_solve_perturbed_ffi`: Gaussian elimination with row pivoting on the
// tridiagonal matrix (dl[i] = A[i][i-1], d, du[i] = A[i][i+1]), the forward solve done while
// factoring, then back substitution with pivots perturbed by eps * max|U| (PerturbPivot), so
// singular systems give finite solutions (inverse iteration). b and x are column-major.
template <typename T>
void SolvePerturbed(int64_t n, int64_t k, const T* dl, const T* d, const T* du, const T* b, T* x) {
  using R = Real<T>;
  if (n == 0) return;
  std::vector<T> row(static_cast<size_t>(k));
  auto x_at = [&](int64_t i, int64_t j) -> T& { return x[j * n + i]; };
  auto b_at = [&](int64_t i, int64_t j) { return b[j * n + i]; };
  const R eps = std::numeric_limits<R>::epsilon();
  if (n == 1) {
    T pivot = d[0];
    for (int64_t j = 0; j < k; ++j) row[j] = b_at(0, j);
    PerturbPivot<T>(eps * std::abs(pivot), pivot, row);
    for (int64_t j = 0; j < k; ++j) x_at(0, j) = row[j] / pivot;
    return;
  }
  // U's diagonal and two superdiagonals (row exchanges make the second one non-zero).
  std::vector<T> u0(static_cast<size_t>(n)), u1(u0.size()), u2(u0.size());
  u0[0] = d[0];
  u1[0] = du[0];
  R max_u = std::max<R>(std::abs(u0[0]), std::abs(u1[0]));
  R scale1 = std::abs(u0[0]) + std::abs(u1[0]);
  for (int64_t j = 0; j < k; ++j) x_at(0, j) = b_at(0, j);
  for (int64_t i = 0; i + 1 < n; ++i) {
    const T sub = dl[i + 1];
    u0[i + 1] = d[i + 1];
    R scale2 = std::abs(sub) + std::abs(u0[i + 1]);
    if (i + 2 < n) scale2 += std::abs(du[i + 1]);
    if (sub == T(0)) {
      scale1 = scale2;
      u1[i + 1] = du[i + 1];
      u2[i] = T(0);
      for (int64_t j = 0; j < k; ++j) x_at(i + 1, j) = b_at(i + 1, j);
    } else {
      const R piv1 = u0[i] == T(0) ? R(0) : std::abs(u0[i]) / scale1;
      const R piv2 = std::abs(sub) / scale2;
      if (piv2 <= piv1) {
        scale1 = scale2;
        const T factor = sub / u0[i];
        u0[i + 1] -= factor * u1[i];
        u1[i + 1] = du[i + 1];
        u2[i] = T(0);
        for (int64_t j = 0; j < k; ++j) x_at(i + 1, j) = b_at(i + 1, j) - factor * x_at(i, j);
      } else {
        // Exchange rows i and i+1.
        const T factor = u0[i] / sub;
        const T old_u1 = u1[i];
        u0[i] = sub;
        u0[i + 1] = old_u1 - factor * d[i + 1];
        u1[i] = d[i + 1];
        if (i + 2 < n) {
          u2[i] = du[i + 1];
          u1[i + 1] = -factor * du[i + 1];
        }
        for (int64_t j = 0; j < k; ++j) {
          const T xi = x_at(i, j);
          x_at(i + 1, j) = xi - factor * b_at(i + 1, j);
          x_at(i, j) = b_at(i + 1, j);
        }
        scale1 = std::abs(u0[i + 1]) + std::abs(u1[i + 1]);
      }
    }
    if (i + 2 < n) max_u = std::max<R>({max_u, std::abs(u0[i]), std::abs(u1[i]), std::abs(u2[i])});
  }
  max_u = std::max<R>(max_u, std::abs(u0[n - 1]));
  const R perturb = eps * max_u;
  for (int64_t i = n - 1; i >= 0; --i) {
    T pivot = u0[i];
    for (int64_t j = 0; j < k; ++j) {
      T v = x_at(i, j);
      if (i + 1 < n) v -= u1[i] * x_at(i + 1, j);
      if (i + 2 < n) v -= u2[i] * x_at(i + 2, j);
      row[j] = v;
    }
    PerturbPivot<T>(i == n - 1 ? perturb : std::copysign(perturb, std::real(pivot)), pivot, row);
    const T inverse = T(1) / pivot;
    for (int64_t j = 0; j < k; ++j) x_at(i, j) = row[j] * inverse;
  }
}

template <typename T>
Status GtsvPerturbed(const KernelContext&, const KernelArgs& args) {
  Matrices bm(args.inputs[3]);
  const int64_t n = LastDim(args.inputs[1]);
  T* x = args.outputs[0].as<T>();
  for (int64_t b = 0; b < bm.batch && bm.size() > 0; ++b)
    SolvePerturbed<T>(n, bm.cols, args.inputs[0].as<T>() + b * n, args.inputs[1].as<T>() + b * n,
                      args.inputs[2].as<T>() + b * n, args.inputs[3].as<T>() + b * bm.size(),
                      x + b * bm.size());
  return OkStatus();
}

template <typename T>
Status Gees(const KernelContext&, const KernelArgs& args) {
  Matrices mm(args.inputs[0]);
  T* a = CopyIn<T>(args.inputs[0], args.outputs[0]);
  T* vs = args.outputs[1].as<T>();
  // Real: wr, wi, sdim, info; complex: w, sdim, info.
  const size_t sdim_index = kComplex<T> ? 3 : 4;
  T* w = args.outputs[2].as<T>();
  T* wi = kComplex<T> ? nullptr : args.outputs[3].as<T>();
  int32_t* sdim = args.outputs[sdim_index].as<int32_t>();
  int32_t* info = args.outputs[sdim_index + 1].as<int32_t>();
  ZeroInfo(args.outputs[sdim_index]);
  ZeroInfo(args.outputs[sdim_index + 1]);
  if (mm.size() == 0) return OkStatus();
  const char jobvs = Job(args.Params<LapackGeesParams>().compute_schur_vectors), sort = 'N';
  const Int n = static_cast<Int>(mm.rows), lda = mm.ld();
  if (jobvs == 'N')
    std::memset(static_cast<void*>(vs), 0,
                static_cast<size_t>(args.outputs[1].num_elements) * sizeof(T));
  T query{};
  Int lwork = -1, status = 0, selected = 0;
  std::vector<Real<T>> rwork(static_cast<size_t>(std::max<int64_t>(1, mm.rows)));
  auto call = [&](T* a_b, T* w_b, T* wi_b, T* vs_b, T* work_p) {
    if constexpr (kComplex<T>) {
      lapack::Routines<T>::gees(&jobvs, &sort, nullptr, &n, a_b, &lda, &selected, w_b, vs_b, &lda,
                                work_p, &lwork, rwork.data(), nullptr, &status, 1, 1);
    } else {
      lapack::Routines<T>::gees(&jobvs, &sort, nullptr, &n, a_b, &lda, &selected, w_b, wi_b, vs_b,
                                &lda, work_p, &lwork, nullptr, &status, 1, 1);
    }
  };
  call(nullptr, nullptr, nullptr, nullptr, &query);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  for (int64_t b = 0; b < mm.batch; ++b) {
    call(a + b * mm.size(), w + b * n, wi ? wi + b * n : nullptr, vs + b * mm.size(), work.data());
    sdim[b] = selected;
    info[b] = status;
  }
  return OkStatus();
}

// Real geev packs a complex conjugate pair (wi[j] > 0) as columns j (real part) and j+1
// (imaginary part); the result holds the complex vectors, the pair's second one conjugated.
template <typename R>
void UnpackEigenvectors(int64_t n, const R* wi, const R* packed, std::complex<R>* out) {
  for (int64_t j = 0; j < n; ++j) {
    const R* col = packed + j * n;
    if (wi[j] == R(0) || j + 1 >= n) {
      for (int64_t i = 0; i < n; ++i) out[j * n + i] = std::complex<R>(col[i], 0);
      continue;
    }
    const R* next = col + n;
    for (int64_t i = 0; i < n; ++i) {
      out[j * n + i] = std::complex<R>(col[i], next[i]);
      out[(j + 1) * n + i] = std::complex<R>(col[i], -next[i]);
    }
    ++j;
  }
}

template <typename T>
Status Geev(const KernelContext&, const KernelArgs& args) {
  using C = std::complex<Real<T>>;
  Matrices mm(args.inputs[0]);
  const T* x = args.inputs[0].as<T>();
  // Real: wr, wi, vl, vr, info; complex: w, vl, vr, info.
  const size_t vl_index = kComplex<T> ? 1 : 2;
  T* w = args.outputs[0].as<T>();
  T* wi = kComplex<T> ? nullptr : args.outputs[1].as<T>();
  C* vl = args.outputs[vl_index].as<C>();
  C* vr = args.outputs[vl_index + 1].as<C>();
  int32_t* info = args.outputs[vl_index + 2].as<int32_t>();
  ZeroInfo(args.outputs[vl_index + 2]);
  for (size_t i : {vl_index, vl_index + 1})
    if (args.outputs[i].num_elements > 0)
      std::memset(static_cast<void*>(args.outputs[i].data), 0,
                  static_cast<size_t>(args.outputs[i].num_elements) * sizeof(C));
  if (mm.size() == 0) return OkStatus();
  const LapackGeevParams& p = args.Params<LapackGeevParams>();
  const char jobvl = Job(p.compute_left), jobvr = Job(p.compute_right);
  const Int n = static_cast<Int>(mm.rows), lda = mm.ld();
  std::vector<T> copy(static_cast<size_t>(mm.size())), left(copy.size()), right(copy.size());
  std::vector<Real<T>> rwork(static_cast<size_t>(2 * mm.rows));
  T query{};
  Int lwork = -1, status = 0;
  auto call = [&](T* a_b, T* w_b, T* wi_b, T* vl_b, T* vr_b, T* work_p) {
    if constexpr (kComplex<T>) {
      lapack::Routines<T>::geev(&jobvl, &jobvr, &n, a_b, &lda, w_b, vl_b, &lda, vr_b, &lda, work_p,
                                &lwork, rwork.data(), &status, 1, 1);
    } else {
      lapack::Routines<T>::geev(&jobvl, &jobvr, &n, a_b, &lda, w_b, wi_b, vl_b, &lda, vr_b, &lda,
                                work_p, &lwork, &status, 1, 1);
    }
  };
  call(nullptr, nullptr, nullptr, nullptr, nullptr, &query);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  const int64_t n2 = mm.size();
  for (int64_t b = 0; b < mm.batch; ++b) {
    const T* xb = x + b * n2;
    std::copy_n(xb, n2, copy.data());
    bool finite = true;
    for (int64_t i = 0; i < n2 && finite; ++i)
      finite = std::isfinite(std::real(copy[i])) && std::isfinite(std::imag(copy[i]));
    if (!finite) {
      info[b] = -4;
      continue;
    }
    T* wi_b = wi ? wi + b * n : nullptr;
    if constexpr (kComplex<T>) {
      call(copy.data(), w + b * n, nullptr, vl + b * n2, vr + b * n2, work.data());
    } else {
      call(copy.data(), w + b * n, wi_b, left.data(), right.data(), work.data());
      if (status == 0) {
        if (jobvl == 'V') UnpackEigenvectors<T>(n, wi_b, left.data(), vl + b * n2);
        if (jobvr == 'V') UnpackEigenvectors<T>(n, wi_b, right.data(), vr + b * n2);
      }
    }
    info[b] = status;
  }
  return OkStatus();
}

template <typename T>
Status RegisterFor(KernelRegistry& r, DType dtype) {
  auto key = [&](const char* name) { return KernelKey(name, {dtype}); };
  STABLERT_RETURN_IF_ERROR(r.Register<LapackPotrfParams>(key("lapack_potrf"), &Potrf<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackTrsmParams>(key("lapack_trsm"), &Trsm<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_getrf"), &Getrf<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_geqrf"), &Geqrf<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_geqp3"), &Geqp3<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_orgqr"), &Orgqr<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackSyevdParams>(key("lapack_syevd"), &Syevd<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackSvdParams>(key("lapack_gesdd"), &Svd<T, true>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackSvdParams>(key("lapack_gesvd"), &Svd<T, false>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackGehrdParams>(key("lapack_gehrd"), &Gehrd<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackSytrdParams>(key("lapack_sytrd"), &Sytrd<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_gtsv"), &Gtsv<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackGeesParams>(key("lapack_gees"), &Gees<T>));
  STABLERT_RETURN_IF_ERROR(r.Register<LapackGeevParams>(key("lapack_geev"), &Geev<T>));
  STABLERT_RETURN_IF_ERROR(r.Register(key("lapack_gtsv_perturbed"), &GtsvPerturbed<T>));
  return OkStatus();
}

}  // namespace

Status RegisterLinalgCustomCallKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(RegisterFor<float>(r, DType::kF32));
  STABLERT_RETURN_IF_ERROR(RegisterFor<double>(r, DType::kF64));
  STABLERT_RETURN_IF_ERROR(RegisterFor<std::complex<float>>(r, DType::kC64));
  STABLERT_RETURN_IF_ERROR(RegisterFor<std::complex<double>>(r, DType::kC128));
  return OkStatus();
}

}  // namespace stablert::kernels
