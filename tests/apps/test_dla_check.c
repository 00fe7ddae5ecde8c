/* The DLA checks' building blocks without a runtime: the norms propagate NaN and Inf (the
 * LAPACKE norms they replace returned -5 for a matrix holding a NaN, so a NaN result
 * passed as a tiny residual), and each dense check refuses a result holding NaN or Inf
 * with RILL_ERR_NUMERIC and a NaN residual while it passes a correct one. */
#include <lapacke.h>
#include <math.h>

#include "dla_internal.h"
#include "test_util.h"

static void test_norms(void)
{
    /* 3 x 2, column-major: rows sums |.| are 3, 7, 11 */
    double a[6] = { 1, -3, 5, 2, 4, -6 };
    CHECK(dla_norm_inf(3, 2, a, 3) == 11.0);
    CHECK(dla_norm_inf(0, 2, a, 3) == 0.0);
    CHECK(dla_all_finite(3, 2, a, 3));

    /* a NaN before, among and after larger finite rows: always NaN */
    for (int k = 0; k < 6; k++) {
        double b[6];
        memcpy(b, a, sizeof(b));
        b[k] = NAN;
        CHECK_MSG(isnan(dla_norm_inf(3, 2, b, 3)), "NaN at %d", k);
        CHECK(!dla_all_finite(3, 2, b, 3));
        b[k] = INFINITY;
        CHECK_MSG(isinf(dla_norm_inf(3, 2, b, 3)), "Inf at %d", k);
        CHECK(!dla_all_finite(3, 2, b, 3));
        b[(k + 3) % 6] = NAN; /* NaN wins over Inf */
        CHECK_MSG(isnan(dla_norm_inf(3, 2, b, 3)), "Inf and NaN at %d", k);
    }
    /* the leading dimension is honoured: padding is not read */
    double p[8] = { 1, -3, 5, NAN, 2, 4, -6, NAN };
    CHECK(dla_norm_inf(3, 2, p, 4) == 11.0);
    CHECK(dla_all_finite(3, 2, p, 4));

    /* symmetric from the lower triangle: [[1 2 4] [2 -3 5] [4 5 6]] -> rows 7, 10, 15 */
    double s[9] = { 1, 2, 4, NAN, -3, 5, NAN, NAN, 6 }; /* the upper is never read */
    CHECK(dla_norm_inf_sym_lower(3, s, 3) == 15.0);
    for (int j = 0; j < 3; j++)
        for (int i = j; i < 3; i++) {
            double t[9];
            memcpy(t, s, sizeof(t));
            t[i + 3 * j] = NAN;
            CHECK_MSG(isnan(dla_norm_inf_sym_lower(3, t, 3)), "NaN at (%d, %d)", i, j);
            t[i + 3 * j] = -INFINITY;
            CHECK_MSG(isinf(dla_norm_inf_sym_lower(3, t, 3)), "Inf at (%d, %d)", i, j);
        }
}

enum { N = 40, NRHS = 3 };

static void test_dpotrf(void)
{
    double *l = malloc(sizeof(double) * N * N), *w = malloc(sizeof(double) * N * N);
    CHECK(l && w);
    rill_dla_dplgsy_dense(N, l, N, N, 7);
    CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', N, l, N) == 0);
    double resid = -1;
    CHECK(dla_check_dpotrf_dense(N, l, w, N, 7, 1, &resid) == RILL_SUCCESS);
    CHECK_MSG(resid >= 0 && resid < RILL_DLA_CHECK_THRESHOLD, "resid %g", resid);

    /* the upper triangle is not the result: NaN there is fine */
    rill_dla_dplgsy_dense(N, l, N, N, 7);
    CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', N, l, N) == 0);
    l[0 + (size_t)(N - 1) * N] = NAN;
    CHECK(dla_check_dpotrf_dense(N, l, w, N, 7, 1, &resid) == RILL_SUCCESS);
    CHECK(resid < RILL_DLA_CHECK_THRESHOLD);

    l[N - 1] = NAN; /* in the factor */
    CHECK(dla_check_dpotrf_dense(N, l, w, N, 7, 1, &resid) == RILL_ERR_NUMERIC);
    CHECK(isnan(resid));
    l[N - 1] = INFINITY;
    CHECK(dla_check_dpotrf_dense(N, l, w, N, 7, 1, &resid) == RILL_ERR_NUMERIC);
    CHECK(isnan(resid));
    free(l);
    free(w);
}

static void test_dgemm(void)
{
    double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
    double *c = malloc(sizeof(double) * N * N), *c0 = malloc(sizeof(double) * N * N);
    CHECK(a && b && c && c0);
    /* C = 0 * A B + 0 * C is 0 */
    memset(c, 0, sizeof(double) * N * N);
    double resid = -1;
    CHECK(dla_check_dgemm_dense(RILL_DLA_NOTRANS, RILL_DLA_NOTRANS, 0.0, N, N, 1, N, N, 2, 0.0, 3,
                                N, N, c, a, b, c0, 1, &resid) == RILL_SUCCESS);
    CHECK_MSG(resid == 0.0, "resid %g", resid);
    c[5] = NAN;
    CHECK(dla_check_dgemm_dense(RILL_DLA_NOTRANS, RILL_DLA_NOTRANS, 0.0, N, N, 1, N, N, 2, 0.0, 3,
                                N, N, c, a, b, c0, 1, &resid) == RILL_ERR_NUMERIC);
    CHECK(isnan(resid));
    c[5] = -INFINITY;
    CHECK(dla_check_dgemm_dense(RILL_DLA_NOTRANS, RILL_DLA_NOTRANS, 0.0, N, N, 1, N, N, 2, 0.0, 3,
                                N, N, c, a, b, c0, 1, &resid) == RILL_ERR_NUMERIC);
    CHECK(isnan(resid));
    /* a finite result against an infinite alpha: the residual is not finite (never a pass) */
    c[5] = 0.0;
    CHECK(dla_check_dgemm_dense(RILL_DLA_NOTRANS, RILL_DLA_NOTRANS, INFINITY, N, N, 1, N, N, 2, 0.0,
                                3, N, N, c, a, b, c0, 1, &resid) == RILL_SUCCESS);
    CHECK_MSG(!isfinite(resid), "resid %g", resid);
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_dposv(void)
{
    double *a = malloc(sizeof(double) * N * N), *x = malloc(sizeof(double) * N * NRHS);
    double *w = malloc(sizeof(double) * N * NRHS);
    CHECK(a && x && w);
    rill_dla_dplgsy_dense(N, a, N, N, 11);
    rill_dla_dplrnt_dense(N, NRHS, x, N, 12);
    CHECK(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', N, NRHS, a, N, x, N) == 0);
    double resid = -1;
    CHECK(dla_check_dposv_dense(N, NRHS, N, 11, 12, x, a, w, 1, &resid) == RILL_SUCCESS);
    CHECK_MSG(resid >= 0 && resid < RILL_DLA_CHECK_THRESHOLD, "resid %g", resid);
    x[N * NRHS - 1] = NAN;
    CHECK(dla_check_dposv_dense(N, NRHS, N, 11, 12, x, a, w, 1, &resid) == RILL_ERR_NUMERIC);
    CHECK(isnan(resid));
    free(a);
    free(x);
    free(w);
}

int main(void)
{
    test_norms();
    test_dpotrf();
    test_dgemm();
    test_dposv();
    printf("test_dla_check: OK\n");
    return 0;
}
