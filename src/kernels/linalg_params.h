// The parameters of the linear algebra kernels: "cholesky.<T>" and "triangular_solve.<T>"
// (kernels/linalg.cc) and the LAPACK custom calls "lapack_<routine>.<T>"
// (kernels/linalg_custom_calls.cc), all built by plan/lower_linalg.cc. Routines without
// options (getrf, geqrf, geqp3, orgqr, gtsv, gtsv_perturbed) take none.
//
// LAPACK's character options are flags (uplo 'L' is lower = true) or small enums; the
// kernels turn them back into LAPACK's characters.
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::kernels {

struct CholeskyParams {
  static constexpr std::string_view kFamily = "cholesky";
  bool lower = false;  // compute L with a = L L^H from the lower triangle (else U^H U, upper)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("lower", lower);
  }
};

// StableHLO's transpose_a, in the VHLO numbering.
enum class TriangularTranspose : int64_t { kNoTranspose = 1, kTranspose = 2, kAdjoint = 3 };

struct TriangularSolveParams {
  static constexpr std::string_view kFamily = "triangular_solve";
  bool left_side = false;      // solve op(a) x = b (else x op(a) = b)
  bool lower = false;          // read a's lower triangle (else the upper one)
  bool unit_diagonal = false;  // a's diagonal is taken as ones
  TriangularTranspose transpose = TriangularTranspose::kNoTranspose;  // op

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("left_side", left_side);
    visit("lower", lower);
    visit("unit_diagonal", unit_diagonal);
    visit("transpose", transpose);
  }
};

// LAPACK's trans option.
enum class LapackTrans : int64_t { kNo = 0, kTranspose = 1, kConjugateTranspose = 2 };  // 'N', 'T', 'C'
// Which singular vectors gesdd/gesvd compute: all, the first min(m, n), or none.
enum class LapackSvdJob : int64_t { kAll = 0, kSome = 1, kNone = 2 };  // 'A', 'S', 'N'

// "lapack_potrf.<T>": Cholesky factorization.
struct LapackPotrfParams {
  static constexpr std::string_view kFamily = "lapack_potrf";
  bool lower = true;  // uplo 'L' (else 'U')

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("lower", lower);
  }
};

// "lapack_trsm.<T>": triangular solve with several right-hand sides.
struct LapackTrsmParams {
  static constexpr std::string_view kFamily = "lapack_trsm";
  bool left_side = true;       // side 'L' (else 'R')
  bool lower = true;           // uplo 'L' (else 'U')
  LapackTrans trans = LapackTrans::kNo;
  bool unit_diagonal = false;  // diag 'U' (else 'N')

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("left_side", left_side);
    visit("lower", lower);
    visit("trans", trans);
    visit("unit_diagonal", unit_diagonal);
  }
};

// "lapack_syevd.<T>" (heevd for complex T): symmetric/Hermitian eigendecomposition.
struct LapackSyevdParams {
  static constexpr std::string_view kFamily = "lapack_syevd";
  bool compute_vectors = true;  // jobz 'V' (else 'N': eigenvalues only)
  bool lower = true;            // uplo 'L' (else 'U')

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("compute_vectors", compute_vectors);
    visit("lower", lower);
  }
};

// "lapack_gesdd.<T>", "lapack_gesvd.<T>": singular value decomposition.
struct LapackSvdParams {
  static constexpr std::string_view kFamily = "lapack_svd";
  LapackSvdJob job = LapackSvdJob::kSome;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("job", job);
  }
};

// "lapack_gehrd.<T>": Hessenberg reduction of rows/columns low..high (1-based, inclusive).
struct LapackGehrdParams {
  static constexpr std::string_view kFamily = "lapack_gehrd";
  int64_t low = 1;
  int64_t high = 1;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("low", low);
    visit("high", high);
  }
};

// "lapack_sytrd.<T>" (hetrd for complex T): tridiagonal reduction.
struct LapackSytrdParams {
  static constexpr std::string_view kFamily = "lapack_sytrd";
  bool lower = true;  // uplo 'L' (else 'U')

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("lower", lower);
  }
};

// "lapack_gees.<T>": Schur decomposition (unsorted).
struct LapackGeesParams {
  static constexpr std::string_view kFamily = "lapack_gees";
  bool compute_schur_vectors = true;  // jobvs 'V' (else 'N': vs is left zero)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("compute_schur_vectors", compute_schur_vectors);
  }
};

// "lapack_geev.<T>": eigenvalues and left/right eigenvectors of a general matrix.
struct LapackGeevParams {
  static constexpr std::string_view kFamily = "lapack_geev";
  bool compute_left = true;   // jobvl 'V' (else 'N': vl is left zero)
  bool compute_right = true;  // jobvr 'V'

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("compute_left", compute_left);
    visit("compute_right", compute_right);
  }
};

}  // namespace stablert::kernels
