// Linear algebra kernels against scalar references: cholesky and triangular_solve (row-major,
// every attribute combination, only the requested triangle read, NaNs for a matrix that is
// not positive definite) and the LAPACK custom-call kernels (column-major) checked through
// the identities their results satisfy.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/linalg_params.h"

namespace stablert::kernels {
namespace {

using testing::Array;
using testing::RunKernel;

Array F64(Dims dims, const std::vector<double>& values) {
  Array a(DType::kF64, std::move(dims));
  std::memcpy(a.bytes.data(), values.data(), values.size() * sizeof(double));
  return a;
}
const double* Data(const Array& a) { return reinterpret_cast<const double*>(a.bytes.data()); }

std::vector<double> Random(int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = dist(gen);
  return v;
}

// Row-major n x n symmetric positive definite matrices: M M^T + n I.
std::vector<double> Spd(int64_t batch, int64_t n, unsigned seed) {
  std::vector<double> m = Random(batch * n * n, seed), out(m.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = i == j ? static_cast<double>(n) : 0.0;
        for (int64_t k = 0; k < n; ++k) s += m[b * n * n + i * n + k] * m[b * n * n + j * n + k];
        out[b * n * n + i * n + j] = s;
      }
  return out;
}

// Textbook Cholesky (lower), row-major.
std::vector<double> ReferenceCholesky(const double* a, int64_t n) {
  std::vector<double> l(static_cast<size_t>(n * n), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    l[j * n + j] = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / l[j * n + j];
    }
  }
  return l;
}

TEST(LinalgKernels, CholeskyReadsOnlyItsTriangleAndMatchesReference) {
  const int64_t batch = 3, n = 5;
  std::vector<double> spd = Spd(batch, n, 1);
  for (bool lower : {true, false}) {
    std::vector<double> input = spd;
    // Garbage in the triangle that must not be read.
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (lower ? j > i : j < i)
            input[b * n * n + i * n + j] = 1e6 + static_cast<double>(i + j);
    Array in = F64({batch, n, n}, input), out(DType::kF64, {batch, n, n});
    RunKernel("cholesky.f64", {&in}, {&out}, CholeskyParams{.lower = lower});
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> l = ReferenceCholesky(spd.data() + b * n * n, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = lower ? l[i * n + j] : l[j * n + i];  // upper factor is L^T
          EXPECT_NEAR(Data(out)[b * n * n + i * n + j], want, 1e-12)
              << lower << " " << b << " " << i << "," << j;
        }
    }
  }
}

TEST(LinalgKernels, CholeskyOfNonPositiveDefiniteMatrixIsNaN) {
  // Batch: positive definite, indefinite, negative diagonal.
  Array in = F64({3, 2, 2}, {4, 2, 2, 5, 1, 2, 2, 1, -1, 0, 0, 1}), out(DType::kF64, {3, 2, 2});
  RunKernel("cholesky.f64", {&in}, {&out}, CholeskyParams{.lower = true});
  EXPECT_DOUBLE_EQ(Data(out)[0], 2.0);
  EXPECT_DOUBLE_EQ(Data(out)[1], 0.0);
  EXPECT_DOUBLE_EQ(Data(out)[2], 1.0);
  EXPECT_DOUBLE_EQ(Data(out)[3], 2.0);
  for (int i = 4; i < 12; ++i) EXPECT_TRUE(std::isnan(Data(out)[i])) << i;
}

TEST(LinalgKernels, TriangularSolveEveryVariantSatisfiesItsEquation) {
  const int64_t batch = 2, m = 4, n = 3;
  for (int left = 0; left <= 1; ++left)
    for (int lower = 0; lower <= 1; ++lower)
      for (int unit = 0; unit <= 1; ++unit)
        for (int64_t transpose = 1; transpose <= 3; ++transpose) {
          const int64_t k = left ? m : n;
          std::vector<double> a = Random(batch * k * k, 2), b = Random(batch * m * n, 3);
          // The triangle that is read, with a strong diagonal; garbage elsewhere.
          std::vector<double> dense(a.size(), 0.0);
          for (int64_t bi = 0; bi < batch; ++bi)
            for (int64_t i = 0; i < k; ++i)
              for (int64_t j = 0; j < k; ++j) {
                size_t at = static_cast<size_t>(bi * k * k + i * k + j);
                bool in_triangle = lower ? j <= i : j >= i;
                if (i == j) a[at] += 4.0;
                if (!in_triangle) {
                  a[at] = 1e6;
                  continue;
                }
                dense[at] = (i == j && unit) ? 1.0 : a[at];
              }
          Array a_in = F64({batch, k, k}, a), b_in = F64({batch, m, n}, b),
                x(DType::kF64, {batch, m, n});
          RunKernel("triangular_solve.f64", {&a_in, &b_in}, {&x},
                    TriangularSolveParams{.left_side = left != 0,
                                          .lower = lower != 0,
                                          .unit_diagonal = unit != 0,
                                          .transpose = static_cast<TriangularTranspose>(transpose)});
          for (int64_t bi = 0; bi < batch; ++bi) {
            auto op = [&](int64_t i, int64_t j) {  // op(A)[i][j]
              return transpose == 1 ? dense[bi * k * k + i * k + j] : dense[bi * k * k + j * k + i];
            };
            const double* xb = Data(x) + bi * m * n;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double s = 0;
                if (left)
                  for (int64_t t = 0; t < k; ++t) s += op(i, t) * xb[t * n + j];
                else
                  for (int64_t t = 0; t < k; ++t) s += xb[i * n + t] * op(t, j);
                EXPECT_NEAR(s, b[bi * m * n + i * n + j], 1e-10)
                    << "left " << left << " lower " << lower << " unit " << unit << " transpose "
                    << transpose;
              }
          }
        }
}

TEST(LinalgKernels, ComplexCholeskyMatchesHermitianFactor) {
  // A = L L^H with L = [[2, 0], [1+i, 3]]: A = [[4, 2-2i], [2+2i, 11]].
  using C = std::complex<double>;
  std::vector<C> a = {C(4, 0), C(99, 99), C(2, 2), C(11, 0)};  // lower triangle read only
  Array in(DType::kC128, {2, 2}), out(DType::kC128, {2, 2});
  std::memcpy(in.bytes.data(), a.data(), sizeof(C) * 4);
  RunKernel("cholesky.complex<f64>", {&in}, {&out}, CholeskyParams{.lower = true});
  const C* l = reinterpret_cast<const C*>(out.bytes.data());
  EXPECT_NEAR(std::abs(l[0] - C(2, 0)), 0, 1e-12);
  EXPECT_NEAR(std::abs(l[1]), 0, 1e-12);
  EXPECT_NEAR(std::abs(l[2] - C(1, 1)), 0, 1e-12);
  EXPECT_NEAR(std::abs(l[3] - C(3, 0)), 0, 1e-12);
}

// Column-major helpers for the custom-call kernels: element (i, j) of an m-row matrix.
double At(const double* a, int64_t m, int64_t i, int64_t j) { return a[j * m + i]; }

TEST(LinalgCustomCallKernels, GetrfFactorsWithPivots) {
  const int64_t n = 4;
  std::vector<double> a = Random(n * n, 4);
  Array in = F64({n, n}, a), lu(DType::kF64, {n, n}), ipiv(DType::kS32, {n}), info(DType::kS32, {});
  RunKernel("lapack_getrf.f64", {&in}, {&lu, &ipiv, &info});
  EXPECT_EQ(testing::GetInt(info, 0), 0);
  // Apply the (1-based) row swaps to A, then compare with L U.
  std::vector<double> pa = a;
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = testing::GetInt(ipiv, i) - 1;
    for (int64_t j = 0; j < n; ++j) std::swap(pa[j * n + i], pa[j * n + p]);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t t = 0; t <= std::min(i, j); ++t)
        s += (t == i ? 1.0 : At(Data(lu), n, i, t)) * At(Data(lu), n, t, j);
      EXPECT_NEAR(s, At(pa.data(), n, i, j), 1e-12);
    }
}

TEST(LinalgCustomCallKernels, SyevdGivesEigenpairs) {
  const int64_t n = 5;
  std::vector<double> a = Spd(1, n, 5);  // symmetric: row- and column-major alike
  Array in = F64({n, n}, a), v(DType::kF64, {n, n}), w(DType::kF64, {n}), info(DType::kS32, {});
  RunKernel("lapack_syevd.f64", {&in}, {&v, &w, &info},
            LapackSyevdParams{.compute_vectors = true, .lower = true});
  EXPECT_EQ(testing::GetInt(info, 0), 0);
  for (int64_t j = 0; j < n; ++j) {
    if (j > 0) {
      EXPECT_LE(Data(w)[j - 1], Data(w)[j]);
    }
    for (int64_t i = 0; i < n; ++i) {
      double av = 0;
      for (int64_t t = 0; t < n; ++t) av += a[i * n + t] * At(Data(v), n, t, j);
      EXPECT_NEAR(av, Data(w)[j] * At(Data(v), n, i, j), 1e-10);
    }
  }
}

TEST(LinalgCustomCallKernels, GesddReconstructs) {
  const int64_t m = 5, n = 3;
  std::vector<double> a = Random(m * n, 6);
  Array in = F64({n, m}, a);  // column-major [cols, rows]
  Array out(DType::kF64, {n, m}), s(DType::kF64, {n}), u(DType::kF64, {n, m}),
      vt(DType::kF64, {n, n}), info(DType::kS32, {});
  RunKernel("lapack_gesdd.f64", {&in}, {&out, &s, &u, &vt, &info}, LapackSvdParams{.job = LapackSvdJob::kSome});
  EXPECT_EQ(testing::GetInt(info, 0), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double r = 0;
      for (int64_t t = 0; t < n; ++t)
        r += At(Data(u), m, i, t) * Data(s)[t] * At(Data(vt), n, t, j);
      EXPECT_NEAR(r, At(a.data(), m, i, j), 1e-12);
    }
}

TEST(LinalgCustomCallKernels, PerturbedTridiagonalSolve) {
  // Non-singular with pivoting: the solution satisfies the system.
  const int64_t n = 4;
  std::vector<double> dl = {0, 2, 1e-3, 5}, d = {1e-9, 3, 4, 1}, du = {1, 1e-7, 2, 0};
  std::vector<double> b = {1, 2, 3, 4};
  Array dl_in = F64({n}, dl), d_in = F64({n}, d), du_in = F64({n}, du), b_in = F64({1, n}, b),
        x(DType::kF64, {1, n});
  RunKernel("lapack_gtsv_perturbed.f64", {&dl_in, &d_in, &du_in, &b_in}, {&x});
  for (int64_t i = 0; i < n; ++i) {
    double s = d[i] * Data(x)[i];
    if (i > 0) s += dl[i] * Data(x)[i - 1];
    if (i + 1 < n) s += du[i] * Data(x)[i + 1];
    EXPECT_NEAR(s, b[i], 1e-9) << i;
  }
  // The zero matrix gives a finite (perturbed) solution.
  Array zeros = F64({3}, {0, 0, 0}), ones = F64({1, 3}, {1, 1, 1}), y(DType::kF64, {1, 3});
  RunKernel("lapack_gtsv_perturbed.f64", {&zeros, &zeros, &zeros, &ones}, {&y});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isfinite(Data(y)[i])) << i;
}

}  // namespace
}  // namespace stablert::kernels
