/* Hand-written baseline for the benchmarks (docs/performance.md): the primal
 * and the hand-derived reverse-mode gradient of each kernel, written the way
 * a careful C programmer would, single thread, f64, compiled with the same
 * flags as the generated code. Each gradient function returns the value too,
 * as the generated `_grad` entries do.
 *
 * Usage: kernels KERNEL IN REPS
 *   IN is an input file in the format of the generated driver (for each
 *   array parameter: its length as int64, then its reals), so that the
 *   baseline and the generated code run on the very same bytes.
 *   Prints `primal_ns T...`, `grad_ns T...` (wall-clock times of REPS timed
 *   calls each, after one untimed call), `primal_cpu_ns C...`, `grad_cpu_ns
 *   C...` (the process's CPU time during the same calls) and
 *   `check VALUE SUM_GRAD SUM_ABS_GRAD` (%.17g).
 * Output and scratch buffers are allocated once, outside the timed calls
 * (the generated code reuses its arena the same way). */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- sum ---- */
static double sum_primal(int64_t n, const double *a) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i];
    return s;
}

static double sum_grad(int64_t n, const double *a, double *g) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += a[i];
        g[i] = 1.0;
    }
    return s;
}

/* ---- prod: prefix products forward, suffix products backward ---- */
static double prod_primal(int64_t n, const double *a) {
    double p = 1.0;
    for (int64_t i = 0; i < n; i++) p *= a[i];
    return p;
}

static double prod_grad(int64_t n, const double *a, double *g) {
    double p = 1.0;
    for (int64_t i = 0; i < n; i++) {
        g[i] = p;
        p *= a[i];
    }
    double s = 1.0;
    for (int64_t i = n - 1; i >= 0; i--) {
        g[i] *= s;
        s *= a[i];
    }
    return p;
}

/* ---- dot: gradient with respect to both arguments ---- */
static double dot_primal(int64_t n, const double *a, const double *b) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double dot_grad(int64_t n, const double *a, const double *b, double *ga, double *gb) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += a[i] * b[i];
        ga[i] = b[i];
        gb[i] = a[i];
    }
    return s;
}

/* ---- sin x * exp x, summed: one pass, each function once ---- */
static double sinexp_primal(int64_t n, const double *a) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += sin(a[i]) * exp(a[i]);
    return s;
}

static double sinexp_grad(int64_t n, const double *a, double *g) {
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double s = sin(a[i]), c = cos(a[i]), e = exp(a[i]);
        acc += s * e;
        g[i] = c * e + s * e;
    }
    return acc;
}

/* ---- logsumexp (as written in the fixture: no max shift) ---- */
static double logsumexp_primal(int64_t n, const double *a) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += exp(a[i]);
    return log(s);
}

static double logsumexp_grad(int64_t n, const double *a, double *g) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        g[i] = exp(a[i]);
        s += g[i];
    }
    double inv = 1.0 / s;
    for (int64_t i = 0; i < n; i++) g[i] *= inv;
    return log(s);
}

/* ---- the harness ---- */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double *read_array(FILE *f, int64_t *n) {
    if (fread(n, sizeof *n, 1, f) != 1 || *n < 0) return NULL;
    double *a = (double *)malloc((size_t)(*n ? *n : 1) * sizeof(double));
    if (a && *n && fread(a, sizeof(double), (size_t)*n, f) != (size_t)*n) {
        free(a);
        return NULL;
    }
    return a;
}

static double cpu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile double sink;

static void print_times(const char *key, const double *t, long reps) {
    printf("%s", key);
    for (long r = 0; r < reps; r++) printf(" %.0f", t[r]);
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s KERNEL IN REPS\n", argv[0]);
        return 64;
    }
    const char *k = argv[1];
    long reps = atol(argv[3]);
    FILE *f = fopen(argv[2], "rb");
    if (!f) return 4;
    int64_t n = 0, m = 0;
    double *a = read_array(f, &n), *b = NULL;
    int two = strcmp(k, "dot") == 0;
    if (two) b = read_array(f, &m);
    fclose(f);
    if (!a || (two && (!b || m != n))) {
        fprintf(stderr, "bad input for %s\n", k);
        return 4;
    }
    double *g = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    double *g2 = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!g || !g2) return 70;
    double value = 0;
    double *wall = (double *)malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double *cpu = (double *)malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!wall || !cpu) return 70;
    /* One untimed call of each, then REPS timed ones. */
    for (int pass = 0; pass < 2; pass++) {
        for (long r = 0; r < (pass ? reps : 1); r++) {
            double c0 = cpu_now_ns(), t0 = now_ns(), v = 0;
            if (!strcmp(k, "sum")) v = sum_primal(n, a);
            else if (!strcmp(k, "prod")) v = prod_primal(n, a);
            else if (!strcmp(k, "dot")) v = dot_primal(n, a, b);
            else if (!strcmp(k, "sinexp")) v = sinexp_primal(n, a);
            else if (!strcmp(k, "logsumexp")) v = logsumexp_primal(n, a);
            else {
                fprintf(stderr, "no kernel %s\n", k);
                return 64;
            }
            sink = v;
            if (pass) {
                wall[r] = now_ns() - t0;
                cpu[r] = cpu_now_ns() - c0;
            }
        }
    }
    print_times("primal_ns", wall, reps);
    print_times("primal_cpu_ns", cpu, reps);
    for (int pass = 0; pass < 2; pass++) {
        for (long r = 0; r < (pass ? reps : 1); r++) {
            double c0 = cpu_now_ns(), t0 = now_ns();
            if (!strcmp(k, "sum")) value = sum_grad(n, a, g);
            else if (!strcmp(k, "prod")) value = prod_grad(n, a, g);
            else if (!strcmp(k, "dot")) value = dot_grad(n, a, b, g, g2);
            else if (!strcmp(k, "sinexp")) value = sinexp_grad(n, a, g);
            else value = logsumexp_grad(n, a, g);
            sink = g[n ? n - 1 : 0];
            if (pass) {
                wall[r] = now_ns() - t0;
                cpu[r] = cpu_now_ns() - c0;
            }
        }
    }
    print_times("grad_ns", wall, reps);
    print_times("grad_cpu_ns", cpu, reps);
    free(wall);
    free(cpu);
    double gs = 0, ga = 0;
    for (int64_t i = 0; i < n; i++) {
        gs += g[i];
        ga += fabs(g[i]);
        if (two) {
            gs += g2[i];
            ga += fabs(g2[i]);
        }
    }
    printf("check %.17g %.17g %.17g\n", value, gs, ga);
    free(a);
    free(b);
    free(g);
    free(g2);
    return 0;
}
