/* Uses the C ABI of an installed pydp_core (C99): prints `name value` lines, then checks error codes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pydp/capi.h"

static int failures = 0;

static void expect(const char* what, int got, int want) {
    if (got != want) {
        printf("FAIL %s: got %d (%s), want %d\n", what, got, pydp_strerror(got), want);
        ++failures;
    }
}

static void print_array(const char* name, const double* x, size_t n) {
    size_t i;
    printf("%s", name);
    for (i = 0; i < n; ++i) printf(" %.17g", x[i]);
    printf("\n");
}

int main(void) {
    static const int families[5] = {PYDP_LAPLACE, PYDP_GAUSSIAN, PYDP_LOGISTIC, PYDP_SUBBOTIN, PYDP_SUBBOTIN};
    static const double orders[5] = {0.0, 0.0, 0.0, 1.5, 3.0};
    uint8_t key[32];
    uint64_t words[8];
    double x[5], y[5], v;
    pydp_rng *rng = NULL, *child = NULL, *unused = NULL;
    int i;

    printf("version %s\n", pydp_version());
    for (i = 0; i < 5; ++i) {
        double s = 0.0, d = 0.0, ld = 0.0, e = 0.0;
        expect("minimal_scale", pydp_minimal_scale(families[i], orders[i], 1.0, 1e-6, 2.0, &s), PYDP_OK);
        expect("privacy_profile", pydp_privacy_profile(families[i], orders[i], 0.5, 3.0, 1.0, &d), PYDP_OK);
        expect("log_privacy_profile", pydp_log_privacy_profile(families[i], orders[i], 0.5, 3.0, 1.0, &ld), PYDP_OK);
        expect("epsilon_for_delta", pydp_epsilon_for_delta(families[i], orders[i], 1e-7, 3.0, 1.0, &e), PYDP_OK);
        printf("calibration %d %.17g %.17g %.17g %.17g %.17g\n", families[i], orders[i], s, d, ld, e);
    }

    for (i = 0; i < 32; ++i) key[i] = (uint8_t)i;
    expect("rng_new", pydp_rng_new(key, 0, &rng), PYDP_OK);
    expect("fill_u64", pydp_rng_fill_u64(rng, words, 8), PYDP_OK);
    printf("words");
    for (i = 0; i < 8; ++i) printf(" %llu", (unsigned long long)words[i]);
    printf("\n");
    expect("normal", pydp_rng_normal(rng, 1.0, 2.0, x, 5, 1), PYDP_OK);
    print_array("normal", x, 5);
    expect("laplace", pydp_rng_laplace(rng, 0.0, 1.5, x, 5, 0), PYDP_OK);
    print_array("laplace", x, 5);
    expect("logistic", pydp_rng_logistic(rng, -1.0, 0.5, x, 5, 2), PYDP_OK);
    print_array("logistic", x, 5);
    expect("subbotin", pydp_rng_subbotin(rng, 1.5, 0.0, 2.0, x, 5, 1), PYDP_OK);
    print_array("subbotin", x, 5);
    expect("exponential", pydp_rng_exponential(rng, 3.0, x, 5, 1), PYDP_OK);
    print_array("exponential", x, 5);
    expect("uniform", pydp_rng_uniform(rng, -2.0, 5.0, x, 5, 1), PYDP_OK);
    print_array("uniform", x, 5);
    expect("gamma", pydp_rng_gamma(rng, 0.7, 2.0, x, 5, 1), PYDP_OK);
    print_array("gamma", x, 5);
    expect("spawn", pydp_rng_spawn(rng, 3, &child), PYDP_OK);
    expect("child fill_u64", pydp_rng_fill_u64(child, words, 4), PYDP_OK);
    printf("child_words");
    for (i = 0; i < 4; ++i) printf(" %llu", (unsigned long long)words[i]);
    printf("\n");

    /* A secure generator from the operating system: two of them differ. */
    {
        pydp_rng *a = NULL, *b = NULL;
        uint64_t wa = 0, wb = 0;
        expect("rng_new_os", pydp_rng_new_os(&a), PYDP_OK);
        expect("rng_new_os", pydp_rng_new_os(&b), PYDP_OK);
        pydp_rng_fill_u64(a, &wa, 1);
        pydp_rng_fill_u64(b, &wb, 1);
        if (wa == wb) {
            printf("FAIL two OS-keyed generators gave the same word\n");
            ++failures;
        }
        pydp_rng_free(a);
        pydp_rng_free(b);
    }

    /* Exact releases from plan parameters (the Python plans' values, checked by tests/support/downstream.py):
     * calibrate_laplace_release(epsilon=1): t = 65536, grid 2^-16; calibrate_subbotin_release(r=1.5,
     * epsilon=1, delta=1e-6): s = 78425, 44 weight bits, grid 2^-15. */
    {
        pydp_rng* rel = NULL;
        double in[5] = {0.0, 1.5, -2.25, 100.0, 3.0}, o[5];
        expect("release rng", pydp_rng_new(key, 1, &rel), PYDP_OK);
        expect("release_laplace", pydp_release_laplace(rel, 65536, 1, -16, -INFINITY, INFINITY, in, o, 5, 1), PYDP_OK);
        print_array("release_laplace", o, 5);
        expect("release_lattice", pydp_release_lattice(rel, PYDP_SUBBOTIN, 1.5, 78425, 44, 0, -15, -1.0, 50.0, in, o, 5, 2),
               PYDP_OK);
        print_array("release_lattice", o, 5);
        expect("release NaN", pydp_release_gaussian(rel, 1, 0, -16, -INFINITY, INFINITY, in, o, 5, 1), PYDP_ERR_INVALID);
        if (pydp_last_error()[0] == '\0') {
            printf("FAIL no message after an error\n");
            ++failures;
        }
        pydp_rng_free(rel);
    }
    /* Release plans calibrated in C (the Python plans, checked by tests/support/downstream.py). */
    {
        pydp_grid_plan plan;
        expect("calibrate_laplace_release", pydp_calibrate_laplace_release(1.0, 0.0, 1.0, 16, &plan), PYDP_OK);
        printf("plan_laplace %llu %llu %d %llu %.17g\n", (unsigned long long)plan.num, (unsigned long long)plan.den,
               plan.grid_exponent, (unsigned long long)plan.shift, plan.delta_achieved);
        expect("calibrate_gaussian_release", pydp_calibrate_gaussian_release(0.5, 1e-8, 3.0, 12, &plan), PYDP_OK);
        printf("plan_gaussian %llu %llu %d %llu %.17g\n", (unsigned long long)plan.num, (unsigned long long)plan.den,
               plan.grid_exponent, (unsigned long long)plan.shift, plan.delta_achieved);
        {
            pydp_lattice_plan lp;
            expect("calibrate_lattice_release", pydp_calibrate_lattice_release(PYDP_SUBBOTIN, 1.5, 1.0, 1e-6, 1.0, -1, 0, &lp),
                   PYDP_OK);
            printf("plan_lattice %llu %d %d %llu %.17g\n", (unsigned long long)lp.s, lp.weight_bits, lp.grid_exponent,
                   (unsigned long long)lp.shift, lp.delta_achieved);
            expect("calibrate lattice Gaussian", pydp_calibrate_lattice_release(PYDP_GAUSSIAN, 0.0, 1.0, 1e-6, 1.0, -1, 0, &lp),
                   PYDP_ERR_INVALID);
            /* The pure-DP Logistic (delta = 0): its plan, certified epsilon and a release on stream 3. */
            {
                pydp_rng* pr = NULL;
                double pin[5] = {0.0, 1.5, -2.25, 100.0, 3.0}, pout[5], eps_achieved = 0.0;
                expect("calibrate pure Logistic", pydp_calibrate_lattice_release(PYDP_LOGISTIC, 0.0, 1.0, 0.0, 1.0, -1, 0, &lp),
                       PYDP_OK);
                expect("pure Logistic epsilon", pydp_pure_logistic_epsilon(lp.s, lp.weight_bits, lp.shift, &eps_achieved), PYDP_OK);
                printf("plan_pure_logistic %llu %d %d %llu %.17g\n", (unsigned long long)lp.s, lp.weight_bits, lp.grid_exponent,
                       (unsigned long long)lp.shift, eps_achieved);
                expect("pure Logistic rng", pydp_rng_new(key, 3, &pr), PYDP_OK);
                expect("release_pure_logistic",
                       pydp_release_pure_logistic(pr, lp.s, lp.weight_bits, lp.grid_exponent, -1.0, 50.0, pin, pout, 5, 2), PYDP_OK);
                print_array("release_pure_logistic", pout, 5);
                pydp_rng_free(pr);
                expect("calibrate pure Logistic epsilon 0",
                       pydp_calibrate_lattice_release(PYDP_LOGISTIC, 0.0, 0.0, 0.0, 1.0, -1, 0, &lp), PYDP_ERR_INVALID);
            }
        }
        expect("calibrate Gaussian delta 0", pydp_calibrate_gaussian_release(1.0, 0.0, 1.0, 16, &plan), PYDP_ERR_NO_FINITE_SCALE);
        expect("calibrate NULL plan", pydp_calibrate_laplace_release(1.0, 0.0, 1.0, 16, NULL), PYDP_ERR_NULL);
    }
    /* Vector plans (one query of 3 coordinates, sensitivity 1.5 in l1 and in l_inf) and two vectors released
     * (the Python plans and releases, checked by tests/support/downstream.py). */
    {
        pydp_vector_plan vp;
        pydp_rng* vr = NULL;
        double vin[6] = {0.0, 1.5, -2.25, 100.0, 3.0, -7.5}, vout[6];
        int norm;
        for (norm = PYDP_NORM_L1; norm <= PYDP_NORM_LINF; ++norm) {
            expect("calibrate_laplace_vector", pydp_release_calibrate_laplace_vector(0.8, 0.0, 1.5, norm, 3, 16, &vp), PYDP_OK);
            printf("plan_laplace_vector %d %llu %llu %d %llu %.17g\n", norm, (unsigned long long)vp.num,
                   (unsigned long long)vp.den, vp.grid_exponent, (unsigned long long)vp.shift, vp.delta_achieved);
        }
        expect("vector rng", pydp_rng_new(key, 2, &vr), PYDP_OK);
        expect("release_vector", pydp_release_vector(vr, &vp, -INFINITY, INFINITY, vin, vout, 2, 1), PYDP_OK);
        print_array("release_vector", vout, 6);
        expect("release_vector NULL plan", pydp_release_vector(vr, NULL, -INFINITY, INFINITY, vin, vout, 2, 1), PYDP_ERR_NULL);
        expect("calibrate_laplace_vector dimension 0", pydp_release_calibrate_laplace_vector(0.8, 0.0, 1.5, PYDP_NORM_L1, 0, 16, &vp),
               PYDP_ERR_INVALID);
        expect("calibrate_laplace_vector NaN", pydp_release_calibrate_laplace_vector(NAN, 0.0, 1.5, PYDP_NORM_L1, 3, 16, &vp),
               PYDP_ERR_INVALID);
        {
            double ld = 0.0, alpha = 0.0;
            expect("calibrate_gaussian_vector", pydp_release_calibrate_gaussian_vector(0.5, 1e-8, 3.0, 50, 12, &vp), PYDP_OK);
            printf("plan_gaussian_vector %llu %llu %d %llu %.17g\n", (unsigned long long)vp.num, (unsigned long long)vp.den,
                   vp.grid_exponent, (unsigned long long)vp.shift, vp.delta_achieved);
            expect("calibrate_gaussian_vector delta 0", pydp_release_calibrate_gaussian_vector(0.5, 0.0, 3.0, 50, 12, &vp),
                   PYDP_ERR_NO_FINITE_SCALE);
            expect("zcdp_log_delta", pydp_zcdp_log_delta(0.5, 3.0, &ld, &alpha), PYDP_OK);
            printf("zcdp %.17g %.17g\n", ld, alpha);
            expect("zcdp_log_delta NaN", pydp_zcdp_log_delta(NAN, 3.0, &ld, &alpha), PYDP_ERR_INVALID);
        }
        pydp_rng_free(vr);
    }
    /* A PLD: 100 compositions of the Poisson-subsampled Gaussian (scale 1, rate 0.02), grid step 1e-3. */
    {
        pydp_pld *one = NULL, *many = NULL;
        double lo = 0.0, up = 0.0, lo2 = 0.0, up2 = 0.0;
        expect("pld_from_noise", pydp_pld_from_noise(PYDP_GAUSSIAN, 0.0, 1.0, 1.0, 0.02, PYDP_ADD_REMOVE, 1e-3, &one), PYDP_OK);
        expect("pld_self_compose", pydp_pld_self_compose(one, 100, &many), PYDP_OK);
        expect("pld_delta", pydp_pld_delta(many, 1.0, &lo, &up), PYDP_OK);
        expect("pld_epsilon", pydp_pld_epsilon(many, 1e-5, &lo2, &up2), PYDP_OK);
        printf("pld %.17g %.17g %.17g %.17g\n", lo, up, lo2, up2);
        expect("pld NaN", pydp_pld_delta(many, NAN, &lo, &up), PYDP_ERR_INVALID);
        expect("pld NULL", pydp_pld_compose(one, NULL, &many), PYDP_ERR_NULL);
        pydp_pld_free(many);
        pydp_pld_free(one);
    }
    if (pydp_abi_version() != PYDP_ABI_VERSION) {
        printf("FAIL ABI version %d, header %d\n", pydp_abi_version(), PYDP_ABI_VERSION);
        ++failures;
    }

    /* Errors: codes, and outputs left untouched. */
    v = 42.0;
    expect("null out", pydp_minimal_scale(PYDP_GAUSSIAN, 0.0, 1.0, 1e-5, 1.0, NULL), PYDP_ERR_NULL);
    expect("nan epsilon", pydp_minimal_scale(PYDP_GAUSSIAN, 0.0, NAN, 1e-5, 1.0, &v), PYDP_ERR_INVALID);
    expect("inf epsilon", pydp_minimal_scale(PYDP_GAUSSIAN, 0.0, INFINITY, 1e-5, 1.0, &v), PYDP_ERR_INVALID);
    expect("delta 1", pydp_minimal_scale(PYDP_LAPLACE, 0.0, 1.0, 1.0, 1.0, &v), PYDP_ERR_INVALID);
    expect("negative sensitivity", pydp_minimal_scale(PYDP_LAPLACE, 0.0, 1.0, 0.1, -1.0, &v), PYDP_ERR_INVALID);
    expect("gaussian delta 0", pydp_minimal_scale(PYDP_GAUSSIAN, 0.0, 1.0, 0.0, 1.0, &v), PYDP_ERR_NO_FINITE_SCALE);
    expect("unknown family", pydp_minimal_scale(17, 0.0, 1.0, 1e-5, 1.0, &v), PYDP_ERR_INVALID);
    expect("subbotin r < 1", pydp_minimal_scale(PYDP_SUBBOTIN, 0.5, 1.0, 1e-5, 1.0, &v), PYDP_ERR_INVALID);
    expect("subbotin r nan", pydp_privacy_profile(PYDP_SUBBOTIN, NAN, 1.0, 1.0, 1.0, &v), PYDP_ERR_INVALID);
    expect("zero scale", pydp_privacy_profile(PYDP_LAPLACE, 0.0, 1.0, 0.0, 1.0, &v), PYDP_ERR_INVALID);
    expect("negative delta", pydp_epsilon_for_delta(PYDP_LAPLACE, 0.0, -0.1, 1.0, 1.0, &v), PYDP_ERR_INVALID);
    if (v != 42.0) {
        printf("FAIL an output was written on failure\n");
        ++failures;
    }
    expect("null key", pydp_rng_new(NULL, 0, &unused), PYDP_ERR_NULL);
    expect("reserved stream", pydp_rng_new(key, UINT64_MAX, &unused), PYDP_ERR_INVALID);
    expect("reserved spawn", pydp_rng_spawn(rng, UINT64_MAX, &unused), PYDP_ERR_INVALID);
    expect("null rng", pydp_rng_normal(NULL, 0.0, 1.0, y, 5, 1), PYDP_ERR_NULL);
    expect("null out array", pydp_rng_normal(rng, 0.0, 1.0, NULL, 5, 1), PYDP_ERR_NULL);
    expect("empty null out", pydp_rng_normal(rng, 0.0, 1.0, NULL, 0, 1), PYDP_OK);
    expect("negative scale", pydp_rng_normal(rng, 0.0, -1.0, y, 5, 1), PYDP_ERR_INVALID);
    expect("nan loc", pydp_rng_laplace(rng, NAN, 1.0, y, 5, 1), PYDP_ERR_INVALID);
    expect("gamma shape 0", pydp_rng_gamma(rng, 0.0, 1.0, y, 5, 1), PYDP_ERR_INVALID);
    expect("subbotin r 0.5", pydp_rng_subbotin(rng, 0.5, 0.0, 1.0, y, 5, 1), PYDP_ERR_INVALID);
    expect("uniform inf width", pydp_rng_uniform(rng, -1e308, 1e308, y, 5, 1), PYDP_ERR_INVALID);
    if (unused != NULL) {
        printf("FAIL a generator was returned on failure\n");
        ++failures;
    }
    if (strcmp(pydp_strerror(PYDP_ERR_NULL), "a required pointer argument is NULL") != 0) ++failures;
    pydp_rng_free(NULL);
    pydp_rng_free(child);
    pydp_rng_free(rng);
    printf("failures %d\n", failures);
    return failures == 0 ? 0 : 1;
}
