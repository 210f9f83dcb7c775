/* Hand-written baseline for the benchmarks (docs/performance.md): the primal
 * and the hand-derived reverse-mode gradient of each kernel, written the way
 * a careful C programmer would, single thread, f64, compiled with the same
 * flags as the generated code. Each gradient function returns the value too,
 * as the generated `_grad` entries do.
 *
 * Usage: kernels KERNEL IN REPS [OUT]
 *   IN is an input file in the format of the generated driver (for each
 *   array parameter: its length as int64, then its reals), so that the
 *   baseline and the generated code run on the very same bytes.
 *   Prints `primal_ns T...`, `grad_ns T...` (wall-clock times of REPS timed
 *   calls each, after one untimed call), `primal_cpu_ns C...`, `grad_cpu_ns
 *   C...` (the process's CPU time during the same calls) and
 *   `check VALUE SUM_GRAD SUM_ABS_GRAD` (%.17g).
 *   OUT (det and ba only): where to write the gradient call's whole result,
 *   for the tests' entry-by-entry comparison (det.c, ba.c say how).
 * Output and scratch buffers are allocated once, outside the timed calls
 * (the generated code reuses its arena the same way).
 * det and ba are in det.c and ba.c, included below (the harness writes
 * them next to this file). */
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

/* ---- GMM (ADBench's objective, as fixtures/gmm/program.ad writes it) ----
 * The loop structure of ADBench's hand-written C++ tool, after the peers'
 * hand-written Rust baseline (the project's shared peers directory),
 * generalised to run-time sizes and to the program's parameters:
 * alphas [k], means [k][d], icf [k][t] (t = d (d + 1) / 2: the log-diagonal,
 * then the strict lower triangle column by column), x [n][d], and the
 * scalars wishart_gamma, wishart_m, lgamma_sum. The gradient is with
 * respect to alphas, means and icf. */
typedef struct {
    int64_t k, d, t, n;
    const double *alphas, *means, *icf, *x;
    double gamma, m, lgamma_sum;
    double *q, *sq, *xc, *z, *w, *zb, *xcb, *gq, *gsq; /* scratch */
} gmm_t;

static double gmm_lse(const double *v, int64_t len) {
    double mx = v[0];
    for (int64_t i = 0; i < len; i++) mx = fmax(mx, v[i]);
    double s = 0.0;
    for (int64_t i = 0; i < len; i++) s += exp(v[i] - mx);
    return log(s) + mx;
}

/* out = Q x, Q = diag(qd) + strict lower L (ltri column by column). */
static void gmm_qtimesx(int64_t d, const double *qd, const double *ltri, const double *x, double *out) {
    for (int64_t j = 0; j < d; j++) out[j] = qd[j] * x[j];
    int64_t idx = 0;
    for (int64_t i = 0; i < d; i++)
        for (int64_t j = i + 1; j < d; j++) out[j] += ltri[idx++] * x[i];
}

static void gmm_pre(gmm_t *g) {
    for (int64_t c = 0; c < g->k; c++) {
        g->sq[c] = 0.0;
        for (int64_t j = 0; j < g->d; j++) {
            double v = g->icf[c * g->t + j];
            g->sq[c] += v;
            g->q[c * g->d + j] = exp(v);
        }
    }
}

static double gmm_constants(const gmm_t *g) {
    double d = (double)g->d, nr = (double)g->n, kr = (double)g->k, pi = 3.141592653589793;
    double nw = d + g->m + 1;
    double c = nw * d * (log(g->gamma) - 0.5 * log(2.0)) - (0.25 * d * (d - 1) * log(pi) + g->lgamma_sum);
    return -nr * d * 0.5 * log(2 * pi) - kr * c;
}

static double gmm_primal(gmm_t *g) {
    int64_t d = g->d, k = g->k;
    gmm_pre(g);
    double slse = 0.0;
    for (int64_t i = 0; i < g->n; i++) {
        const double *x = g->x + i * d;
        for (int64_t c = 0; c < k; c++) {
            for (int64_t j = 0; j < d; j++) g->xc[j] = x[j] - g->means[c * d + j];
            gmm_qtimesx(d, g->q + c * d, g->icf + c * g->t + d, g->xc, g->z);
            double sn = 0.0;
            for (int64_t j = 0; j < d; j++) sn += g->z[j] * g->z[j];
            g->w[c] = g->alphas[c] + g->sq[c] - 0.5 * sn;
        }
        slse += gmm_lse(g->w, k);
    }
    double prior = 0.0;
    for (int64_t c = 0; c < k; c++) {
        double frob = 0.0;
        for (int64_t j = 0; j < d; j++) frob += g->q[c * d + j] * g->q[c * d + j];
        for (int64_t j = d; j < g->t; j++) frob += g->icf[c * g->t + j] * g->icf[c * g->t + j];
        prior += 0.5 * g->gamma * g->gamma * frob - g->m * g->sq[c];
    }
    return gmm_constants(g) + slse - (double)g->n * gmm_lse(g->alphas, k) + prior;
}

/* Value and hand-derived gradient (ga [k], gm [k*d], gi [k*t]). */
static double gmm_grad(gmm_t *g, double *ga, double *gm, double *gi) {
    int64_t d = g->d, k = g->k, t = g->t;
    gmm_pre(g);
    memset(ga, 0, sizeof(double) * (size_t)k);
    memset(gm, 0, sizeof(double) * (size_t)(k * d));
    memset(gi, 0, sizeof(double) * (size_t)(k * t));
    memset(g->gq, 0, sizeof(double) * (size_t)(k * d));
    memset(g->gsq, 0, sizeof(double) * (size_t)k);
    double slse = 0.0;
    for (int64_t i = 0; i < g->n; i++) {
        const double *x = g->x + i * d;
        for (int64_t c = 0; c < k; c++) {
            double *xc = g->xc + c * d, *z = g->z + c * d;
            for (int64_t j = 0; j < d; j++) xc[j] = x[j] - g->means[c * d + j];
            gmm_qtimesx(d, g->q + c * d, g->icf + c * t + d, xc, z);
            double sn = 0.0;
            for (int64_t j = 0; j < d; j++) sn += z[j] * z[j];
            g->w[c] = g->alphas[c] + g->sq[c] - 0.5 * sn;
        }
        slse += gmm_lse(g->w, k);
        double mx = g->w[0];
        for (int64_t c = 0; c < k; c++) mx = fmax(mx, g->w[c]);
        double se = 0.0;
        for (int64_t c = 0; c < k; c++) {
            g->w[c] = exp(g->w[c] - mx);
            se += g->w[c];
        }
        for (int64_t c = 0; c < k; c++) {
            double wk = g->w[c] / se;
            const double *z = g->z + c * d, *xc = g->xc + c * d;
            ga[c] += wk;
            g->gsq[c] += wk;
            for (int64_t j = 0; j < d; j++) {
                g->zb[j] = -wk * z[j];
                g->gq[c * d + j] += g->zb[j] * xc[j];
                g->xcb[j] = g->q[c * d + j] * g->zb[j];
            }
            const double *ltri = g->icf + c * t + d;
            double *gl = gi + c * t + d;
            int64_t idx = 0;
            for (int64_t a = 0; a < d; a++)
                for (int64_t b = a + 1; b < d; b++) {
                    gl[idx] += g->zb[b] * xc[a];
                    g->xcb[a] += ltri[idx] * g->zb[b];
                    idx++;
                }
            for (int64_t j = 0; j < d; j++) gm[c * d + j] -= g->xcb[j];
        }
    }
    double lse_a = gmm_lse(g->alphas, k);
    double g2 = g->gamma * g->gamma, prior = 0.0;
    for (int64_t c = 0; c < k; c++) {
        ga[c] -= (double)g->n * exp(g->alphas[c] - lse_a);
        double frob = 0.0;
        for (int64_t j = 0; j < d; j++) frob += g->q[c * d + j] * g->q[c * d + j];
        for (int64_t j = d; j < t; j++) frob += g->icf[c * t + j] * g->icf[c * t + j];
        prior += 0.5 * g2 * frob - g->m * g->sq[c];
        g->gsq[c] -= g->m;
        for (int64_t j = 0; j < d; j++) g->gq[c * d + j] += g2 * g->q[c * d + j];
        for (int64_t j = d; j < t; j++) gi[c * t + j] += g2 * g->icf[c * t + j];
        for (int64_t j = 0; j < d; j++) gi[c * t + j] += g->gq[c * d + j] * g->q[c * d + j] + g->gsq[c];
    }
    return gmm_constants(g) + slse - (double)g->n * lse_a + prior;
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

static int read_i64s(FILE *f, int64_t *v, int count) {
    return fread(v, sizeof(int64_t), (size_t)count, f) == (size_t)count;
}

static double *read_reals(FILE *f, int64_t count) {
    double *a = (double *)malloc((size_t)(count > 0 ? count : 1) * sizeof(double));
    if (a && count > 0 && fread(a, sizeof(double), (size_t)count, f) != (size_t)count) {
        free(a);
        return NULL;
    }
    return a;
}

/* GMM: the inputs of fixtures/gmm/program.ad in the driver's format. */
/* One untimed CALL, then REPS timed ones, their wall-clock and CPU times
 * into wall[] and cpu[] (the kernels with their own input format). */
#define TIME_CALLS(CALL)                                       \
    for (int pass = 0; pass < 2; pass++) {                     \
        for (long r = 0; r < (pass ? reps : 1); r++) {         \
            double c0 = cpu_now_ns(), t0 = now_ns();           \
            CALL;                                              \
            if (pass) {                                        \
                wall[r] = now_ns() - t0;                       \
                cpu[r] = cpu_now_ns() - c0;                    \
            }                                                  \
        }                                                      \
    }

static int gmm_main(FILE *f, long reps) {
    int64_t ka, km[2], ki[2], kx[2];
    if (!read_i64s(f, &ka, 1)) return 4;
    double *alphas = read_reals(f, ka);
    if (!read_i64s(f, km, 2)) return 4;
    double *means = read_reals(f, km[0] * km[1]);
    if (!read_i64s(f, ki, 2)) return 4;
    double *icf = read_reals(f, ki[0] * ki[1]);
    if (!read_i64s(f, kx, 2)) return 4;
    double *x = read_reals(f, kx[0] * kx[1]);
    double scalars[3];
    if (!alphas || !means || !icf || !x || fread(scalars, sizeof(double), 3, f) != 3) return 4;
    gmm_t g;
    g.k = ka;
    g.d = km[1];
    g.t = ki[1];
    g.n = kx[0];
    g.alphas = alphas;
    g.means = means;
    g.icf = icf;
    g.x = x;
    g.gamma = scalars[0];
    g.m = scalars[1];
    g.lgamma_sum = scalars[2];
    size_t kd = (size_t)(g.k * g.d);
    g.q = malloc(sizeof(double) * kd);
    g.sq = malloc(sizeof(double) * (size_t)g.k);
    g.xc = malloc(sizeof(double) * kd);
    g.z = malloc(sizeof(double) * kd);
    g.w = malloc(sizeof(double) * (size_t)g.k);
    g.zb = malloc(sizeof(double) * (size_t)g.d);
    g.xcb = malloc(sizeof(double) * (size_t)g.d);
    g.gq = malloc(sizeof(double) * kd);
    g.gsq = malloc(sizeof(double) * (size_t)g.k);
    double *ga = malloc(sizeof(double) * (size_t)g.k), *gm = malloc(sizeof(double) * kd);
    double *gi = malloc(sizeof(double) * (size_t)(g.k * g.t));
    double *wall = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double *cpu = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!g.q || !g.sq || !g.xc || !g.z || !g.w || !g.zb || !g.xcb || !g.gq || !g.gsq || !ga || !gm || !gi || !wall || !cpu)
        return 70;
    double value = 0;
    TIME_CALLS(sink = gmm_primal(&g));
    print_times("primal_ns", wall, reps);
    print_times("primal_cpu_ns", cpu, reps);
    TIME_CALLS(value = gmm_grad(&g, ga, gm, gi));
    print_times("grad_ns", wall, reps);
    print_times("grad_cpu_ns", cpu, reps);
    double gs = 0, gabs = 0;
    for (int64_t i = 0; i < g.k; i++) gs += ga[i], gabs += fabs(ga[i]);
    for (size_t i = 0; i < kd; i++) gs += gm[i], gabs += fabs(gm[i]);
    for (int64_t i = 0; i < g.k * g.t; i++) gs += gi[i], gabs += fabs(gi[i]);
    printf("check %.17g %.17g %.17g\n", value, gs, gabs);
    free(alphas); free(means); free(icf); free(x);
    free(g.q); free(g.sq); free(g.xc); free(g.z); free(g.w); free(g.zb); free(g.xcb); free(g.gq); free(g.gsq);
    free(ga); free(gm); free(gi); free(wall); free(cpu);
    return 0;
}

/* ---- kmeans (GradBench's kmeans eval, evals/kmeans/README.md: the sum
 * over the points of the squared distance to the nearest centroid) and its
 * gradient with respect to the centroids, derived by hand: each point adds
 * 2 (C_j - P_i) to its nearest centroid j (the first of equal minima; the
 * benchmark's random inputs have no ties). Points [n][d], centroids [k][d],
 * row-major. ---- */
static double kmeans_primal(int64_t n, int64_t k, int64_t d, const double *p, const double *c) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double best = INFINITY;
        for (int64_t j = 0; j < k; j++) {
            double e = 0.0;
            for (int64_t l = 0; l < d; l++) {
                double t = p[i * d + l] - c[j * d + l];
                e += t * t;
            }
            if (e < best) best = e;
        }
        s += best;
    }
    return s;
}

static double kmeans_grad(int64_t n, int64_t k, int64_t d, const double *p, const double *c, double *g) {
    double s = 0.0;
    for (int64_t j = 0; j < k * d; j++) g[j] = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double best = INFINITY;
        int64_t at = 0;
        for (int64_t j = 0; j < k; j++) {
            double e = 0.0;
            for (int64_t l = 0; l < d; l++) {
                double t = p[i * d + l] - c[j * d + l];
                e += t * t;
            }
            if (e < best) best = e, at = j;
        }
        s += best;
        for (int64_t l = 0; l < d; l++) g[at * d + l] += 2.0 * (c[at * d + l] - p[i * d + l]);
    }
    return s;
}

/* The input as the generated driver reads `kmeans (points : [n][d]R)
 * (centroids : [k][d]R)`: each matrix's two lengths, then its reals. */
static int kmeans_main(FILE *f, long reps) {
    int64_t kp[2], kc[2];
    if (!read_i64s(f, kp, 2)) return 4;
    double *p = read_reals(f, kp[0] * kp[1]);
    if (!read_i64s(f, kc, 2)) return 4;
    double *c = read_reals(f, kc[0] * kc[1]);
    if (!p || !c || kp[1] != kc[1]) return 4;
    int64_t n = kp[0], k = kc[0], d = kp[1];
    double *g = malloc(sizeof(double) * (size_t)(k * d > 0 ? k * d : 1));
    double *wall = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double *cpu = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!g || !wall || !cpu) return 70;
    double value = 0;
    TIME_CALLS(sink = kmeans_primal(n, k, d, p, c));
    print_times("primal_ns", wall, reps);
    print_times("primal_cpu_ns", cpu, reps);
    TIME_CALLS(value = kmeans_grad(n, k, d, p, c, g));
    print_times("grad_ns", wall, reps);
    print_times("grad_cpu_ns", cpu, reps);
    double gs = 0, gabs = 0;
    for (int64_t j = 0; j < k * d; j++) gs += g[j], gabs += fabs(g[j]);
    printf("check %.17g %.17g %.17g\n", value, gs, gabs);
    free(p); free(c); free(g); free(wall); free(cpu);
    return 0;
}

#include "det.c"
#include "ba.c"

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s KERNEL IN REPS [OUT]\n", argv[0]);
        return 64;
    }
    const char *k = argv[1];
    long reps = atol(argv[3]);
    const char *out = argc == 5 ? argv[4] : NULL;
    FILE *f = fopen(argv[2], "rb");
    if (!f) return 4;
    if (!strcmp(k, "gmm") || !strcmp(k, "kmeans") || !strcmp(k, "det") || !strcmp(k, "ba")) {
        int rc = !strcmp(k, "gmm")      ? gmm_main(f, reps)
                 : !strcmp(k, "kmeans") ? kmeans_main(f, reps)
                 : !strcmp(k, "det")    ? det_main(f, reps, out)
                                        : ba_main(f, reps, out);
        fclose(f);
        return rc;
    }
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
