// LAPACK and BLAS routines the linear algebra kernels call, for float, double,
// std::complex<float> and std::complex<double> (layout-compatible with Fortran COMPLEX).
//
// Declared here from the documented Fortran interface (reference LAPACK 3.x, gfortran ABI:
// every argument by pointer, one hidden `size_t` length per CHARACTER argument appended at
// the end, 32-bit INTEGER). Linked against Debian's liblapack/libblas (docs/decisions.md).
// Internal to kernels/. All routines are reentrant; matrices are column-major.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/dtype_traits.h"

namespace stablert::kernels::lapack {

using Int = int32_t;  // Fortran INTEGER of the reference build

extern "C" {
#define STABLERT_LAPACK_REAL(T, p)                                                                \
  void p##potrf_(const char* uplo, const Int* n, T* a, const Int* lda, Int* info, size_t);        \
  void p##trsm_(const char* side, const char* uplo, const char* transa, const char* diag,         \
                const Int* m, const Int* n, const T* alpha, const T* a, const Int* lda, T* b,     \
                const Int* ldb, size_t, size_t, size_t, size_t);                                  \
  void p##getrf_(const Int* m, const Int* n, T* a, const Int* lda, Int* ipiv, Int* info);         \
  void p##geqrf_(const Int* m, const Int* n, T* a, const Int* lda, T* tau, T* work,               \
                 const Int* lwork, Int* info);                                                    \
  void p##geqp3_(const Int* m, const Int* n, T* a, const Int* lda, Int* jpvt, T* tau, T* work,    \
                 const Int* lwork, Int* info);                                                    \
  void p##orgqr_(const Int* m, const Int* n, const Int* k, T* a, const Int* lda, const T* tau,    \
                 T* work, const Int* lwork, Int* info);                                           \
  void p##ormqr_(const char* side, const char* trans, const Int* m, const Int* n, const Int* k,   \
                 const T* a, const Int* lda, const T* tau, T* c, const Int* ldc, T* work,         \
                 const Int* lwork, Int* info, size_t, size_t);                                    \
  void p##syevd_(const char* jobz, const char* uplo, const Int* n, T* a, const Int* lda, T* w,    \
                 T* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, size_t,     \
                 size_t);                                                                         \
  void p##gesdd_(const char* jobz, const Int* m, const Int* n, T* a, const Int* lda, T* s, T* u,  \
                 const Int* ldu, T* vt, const Int* ldvt, T* work, const Int* lwork, Int* iwork,   \
                 Int* info, size_t);                                                              \
  void p##gesvd_(const char* jobu, const char* jobvt, const Int* m, const Int* n, T* a,           \
                 const Int* lda, T* s, T* u, const Int* ldu, T* vt, const Int* ldvt, T* work,     \
                 const Int* lwork, Int* info, size_t, size_t);                                    \
  void p##gehrd_(const Int* n, const Int* ilo, const Int* ihi, T* a, const Int* lda, T* tau,      \
                 T* work, const Int* lwork, Int* info);                                           \
  void p##sytrd_(const char* uplo, const Int* n, T* a, const Int* lda, T* d, T* e, T* tau,        \
                 T* work, const Int* lwork, Int* info, size_t);                                   \
  void p##gtsv_(const Int* n, const Int* nrhs, T* dl, T* d, T* du, T* b, const Int* ldb,          \
                Int* info);                                                                       \
  void p##gees_(const char* jobvs, const char* sort, Int (*select)(const T*, const T*),           \
                const Int* n, T* a, const Int* lda, Int* sdim, T* wr, T* wi, T* vs,               \
                const Int* ldvs, T* work, const Int* lwork, Int* bwork, Int* info, size_t,        \
                size_t);                                                                          \
  void p##geev_(const char* jobvl, const char* jobvr, const Int* n, T* a, const Int* lda, T* wr,  \
                T* wi, T* vl, const Int* ldvl, T* vr, const Int* ldvr, T* work, const Int* lwork, \
                Int* info, size_t, size_t);

STABLERT_LAPACK_REAL(float, s)
STABLERT_LAPACK_REAL(double, d)
#undef STABLERT_LAPACK_REAL

// Complex routines: the Hermitian/unitary counterparts (ungqr, heevd, hetrd) and the extra
// real workspaces (rwork) of geqp3, gesdd, gesvd, gees and geev.
#define STABLERT_LAPACK_COMPLEX(C, R, p)                                                          \
  void p##potrf_(const char* uplo, const Int* n, C* a, const Int* lda, Int* info, size_t);        \
  void p##trsm_(const char* side, const char* uplo, const char* transa, const char* diag,         \
                const Int* m, const Int* n, const C* alpha, const C* a, const Int* lda, C* b,     \
                const Int* ldb, size_t, size_t, size_t, size_t);                                  \
  void p##getrf_(const Int* m, const Int* n, C* a, const Int* lda, Int* ipiv, Int* info);         \
  void p##geqrf_(const Int* m, const Int* n, C* a, const Int* lda, C* tau, C* work,               \
                 const Int* lwork, Int* info);                                                    \
  void p##geqp3_(const Int* m, const Int* n, C* a, const Int* lda, Int* jpvt, C* tau, C* work,    \
                 const Int* lwork, R* rwork, Int* info);                                          \
  void p##ungqr_(const Int* m, const Int* n, const Int* k, C* a, const Int* lda, const C* tau,    \
                 C* work, const Int* lwork, Int* info);                                           \
  void p##heevd_(const char* jobz, const char* uplo, const Int* n, C* a, const Int* lda, R* w,    \
                 C* work, const Int* lwork, R* rwork, const Int* lrwork, Int* iwork,              \
                 const Int* liwork, Int* info, size_t, size_t);                                   \
  void p##gesdd_(const char* jobz, const Int* m, const Int* n, C* a, const Int* lda, R* s, C* u,  \
                 const Int* ldu, C* vt, const Int* ldvt, C* work, const Int* lwork, R* rwork,     \
                 Int* iwork, Int* info, size_t);                                                  \
  void p##gesvd_(const char* jobu, const char* jobvt, const Int* m, const Int* n, C* a,           \
                 const Int* lda, R* s, C* u, const Int* ldu, C* vt, const Int* ldvt, C* work,     \
                 const Int* lwork, R* rwork, Int* info, size_t, size_t);                          \
  void p##gehrd_(const Int* n, const Int* ilo, const Int* ihi, C* a, const Int* lda, C* tau,      \
                 C* work, const Int* lwork, Int* info);                                           \
  void p##hetrd_(const char* uplo, const Int* n, C* a, const Int* lda, R* d, R* e, C* tau,        \
                 C* work, const Int* lwork, Int* info, size_t);                                   \
  void p##gtsv_(const Int* n, const Int* nrhs, C* dl, C* d, C* du, C* b, const Int* ldb,          \
                Int* info);                                                                       \
  void p##gees_(const char* jobvs, const char* sort, Int (*select)(const C*), const Int* n, C* a, \
                const Int* lda, Int* sdim, C* w, C* vs, const Int* ldvs, C* work,                 \
                const Int* lwork, R* rwork, Int* bwork, Int* info, size_t, size_t);               \
  void p##geev_(const char* jobvl, const char* jobvr, const Int* n, C* a, const Int* lda, C* w,   \
                C* vl, const Int* ldvl, C* vr, const Int* ldvr, C* work, const Int* lwork,        \
                R* rwork, Int* info, size_t, size_t);

STABLERT_LAPACK_COMPLEX(std::complex<float>, float, c)
STABLERT_LAPACK_COMPLEX(std::complex<double>, double, z)
#undef STABLERT_LAPACK_COMPLEX
}

// Type-dispatched wrappers: Routines<float> calls s*, Routines<double> calls d*.
template <typename T>
struct Routines;

#define STABLERT_LAPACK_ROUTINES(T, p)        \
  template <>                                 \
  struct Routines<T> {                        \
    static constexpr auto potrf = &p##potrf_; \
    static constexpr auto trsm = &p##trsm_;   \
    static constexpr auto getrf = &p##getrf_; \
    static constexpr auto geqrf = &p##geqrf_; \
    static constexpr auto geqp3 = &p##geqp3_; \
    static constexpr auto orgqr = &p##orgqr_; \
    static constexpr auto ormqr = &p##ormqr_; \
    static constexpr auto syevd = &p##syevd_; \
    static constexpr auto gesdd = &p##gesdd_; \
    static constexpr auto gesvd = &p##gesvd_; \
    static constexpr auto gehrd = &p##gehrd_; \
    static constexpr auto sytrd = &p##sytrd_; \
    static constexpr auto gtsv = &p##gtsv_;   \
    static constexpr auto gees = &p##gees_;   \
    static constexpr auto geev = &p##geev_;   \
  };
STABLERT_LAPACK_ROUTINES(float, s)
STABLERT_LAPACK_ROUTINES(double, d)
#undef STABLERT_LAPACK_ROUTINES

// Complex: orgqr, syevd and sytrd name ungqr, heevd and hetrd.
#define STABLERT_LAPACK_COMPLEX_ROUTINES(C, p) \
  template <>                                  \
  struct Routines<C> {                         \
    static constexpr auto potrf = &p##potrf_;  \
    static constexpr auto trsm = &p##trsm_;    \
    static constexpr auto getrf = &p##getrf_;  \
    static constexpr auto geqrf = &p##geqrf_;  \
    static constexpr auto geqp3 = &p##geqp3_;  \
    static constexpr auto orgqr = &p##ungqr_;  \
    static constexpr auto syevd = &p##heevd_;  \
    static constexpr auto gesdd = &p##gesdd_;  \
    static constexpr auto gesvd = &p##gesvd_;  \
    static constexpr auto gehrd = &p##gehrd_;  \
    static constexpr auto sytrd = &p##hetrd_;  \
    static constexpr auto gtsv = &p##gtsv_;    \
    static constexpr auto gees = &p##gees_;    \
    static constexpr auto geev = &p##geev_;    \
  };
STABLERT_LAPACK_COMPLEX_ROUTINES(std::complex<float>, c)
STABLERT_LAPACK_COMPLEX_ROUTINES(std::complex<double>, z)
#undef STABLERT_LAPACK_COMPLEX_ROUTINES

// The real type of T (T itself for float and double), and whether T is complex: the
// kernels' own traits under the names LAPACK code reads best with.
template <typename T>
using Real = Part<T>;
template <typename T>
inline constexpr bool kComplex = kIsComplex<T>;

}  // namespace stablert::kernels::lapack
