//! The C runtime every generated file starts with: the call context, its
//! arena, failure reporting, checked integer arithmetic and the OpenMP
//! shims. Plain C99 (plus `_Pragma`), no dependency beyond libc and libm.
//!
//! The arena (see note [the arena] in docs/codegen.md) is a list of chunks
//! used as a stack: `ad_alloc` bumps, `ad_mark_get` / `ad_reset` pop back
//! to a mark, and every exported function starts by resetting it to empty.
//! Chunks are kept for the next call, so a function called repeatedly on
//! inputs of one size allocates nothing after the first call. Under
//! AddressSanitizer, memory outside live allocations is poisoned and every
//! allocation is followed by a poisoned red zone, so an overrun of an arena
//! buffer is reported like one of a `malloc` buffer.

/// The runtime: included at the top of every generated `.c` file.
pub const PRELUDE: &str = r#"#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AD_PRAGMA(x) _Pragma(#x)

/* The failure paths are cold. Without the mark gcc's guessed branch
 * probabilities (every `if (..) return ad_fail(..)` a likely exit) can make
 * a deep loop nest look cold, and a cold loop is optimized for size: not
 * vectorized, its values spilled (GMM's gradient: 68 ms without, 46 ms with;
 * docs/codegen.md). */
#if defined(__GNUC__)
#define AD_COLD __attribute__((__cold__))
#define AD_RARE(c) __builtin_expect(!!(c), 0)
#else
#define AD_COLD
#define AD_RARE(c) (c)
#endif

#ifdef AD_VECTOR_MATH
/* Config::vector_math: glibc's libmvec has vector versions of these, which
 * the vectorizer calls when the function is declared `simd`. glibc declares
 * them so only under -ffast-math, which we do not use (it would also allow
 * contraction and reassociation everywhere). `const` keeps calls on one
 * argument shared although sin and cos are then not builtins (built with
 * -fno-builtin-sin -fno-builtin-cos, so that gcc does not merge them into a
 * scalar sincos, which would stop the loop from being vectorized). */
#define AD_SIMD __attribute__((__simd__("notinbranch"), __const__))
AD_SIMD extern double sin(double);
AD_SIMD extern double cos(double);
AD_SIMD extern double tan(double);
AD_SIMD extern double exp(double);
AD_SIMD extern double log(double);
AD_SIMD extern double tanh(double);
#elif defined(__GNUC__)
/* The math functions are compiled as plain calls (-fno-builtin-*, see
 * Config::flags: gcc would fold them on constants with correctly rounded
 * results, and glibc's `tanh`, `tan`, `sin` and `cos` are sometimes an ulp
 * from that). `const` keeps calls on one argument shared. */
#define AD_CONST __attribute__((__const__))
AD_CONST extern double sin(double);
AD_CONST extern double cos(double);
AD_CONST extern double tan(double);
AD_CONST extern double exp(double);
AD_CONST extern double log(double);
AD_CONST extern double tanh(double);
AD_CONST extern double pow(double, double);
AD_CONST extern double log1p(double);
AD_CONST extern double expm1(double);
AD_CONST extern double atan(double);
AD_CONST extern double atan2(double, double);
AD_CONST extern double hypot(double, double);
AD_CONST extern double sinh(double);
AD_CONST extern double cosh(double);
AD_CONST extern double erf(double);
#endif
/* Not in <math.h> under -std=c99; the thread-safe lgamma (the evaluator
 * calls the same, syntax::special). */
extern double lgamma_r(double, int *);

#ifdef _OPENMP
#include <omp.h>
static int ad_max_threads(void) { return omp_get_max_threads(); }
static int ad_thread_num(void) { return omp_get_thread_num(); }
static int ad_num_threads(void) { return omp_get_num_threads(); }
#else
static int ad_max_threads(void) { return 1; }
static int ad_thread_num(void) { return 0; }
static int ad_num_threads(void) { return 1; }
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define AD_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define AD_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define AD_REDZONE 64
#else
#define AD_POISON(p, n) ((void)(p), (void)(n))
#define AD_UNPOISON(p, n) ((void)(p), (void)(n))
#define AD_REDZONE 0
#endif

/* Every buffer starts on a 64-byte boundary (a cache line, an AVX-512 vector). */
#define AD_ALIGN 64
#define AD_CHUNK_MIN ((size_t)1 << 20)

typedef struct ad_chunk {
    struct ad_chunk *next;
    void *mem;    /* what malloc returned */
    char *data;   /* AD_ALIGN-aligned start of the usable bytes */
    size_t cap;   /* usable bytes */
    size_t used;  /* bytes handed out */
} ad_chunk;

struct ad_ctx {
    ad_chunk *first;
    ad_chunk *cur;
    int64_t site;       /* the failure site of the last call, 0 if none */
    int64_t detail[2];  /* its two numbers (an index and a length, ...) */
    char message[256];
    /* The threads' own contexts in parallel loops that allocate or fail
     * (note [parallel loops]), kept from call to call as the chunks are. */
    struct ad_ctx **workers;
    int nworkers;
};

typedef struct ad_ctx ad_ctx;

typedef struct {
    ad_chunk *chunk;
    size_t used;
} ad_mark;

static ad_chunk *ad_chunk_new(size_t cap) {
    ad_chunk *c = (ad_chunk *)malloc(sizeof(ad_chunk));
    if (!c) return NULL;
    c->mem = NULL;
    if (cap > SIZE_MAX - AD_ALIGN || !(c->mem = malloc(cap + AD_ALIGN))) {
        free(c);
        return NULL;
    }
    c->data = (char *)(((uintptr_t)c->mem + AD_ALIGN - 1) & ~(uintptr_t)(AD_ALIGN - 1));
    c->next = NULL;
    c->cap = cap;
    c->used = 0;
    AD_POISON(c->data, cap);
    return c;
}

static void ad_chunk_free(ad_chunk *c) {
    AD_UNPOISON(c->data, c->cap);
    free(c->mem);
    free(c);
}

ad_ctx *adrev_ctx_new(void) {
    ad_ctx *ctx = (ad_ctx *)calloc(1, sizeof(ad_ctx));
    if (!ctx) return NULL;
    ctx->first = ad_chunk_new(AD_CHUNK_MIN);
    if (!ctx->first) {
        free(ctx);
        return NULL;
    }
    ctx->cur = ctx->first;
    return ctx;
}

void adrev_ctx_free(ad_ctx *ctx) {
    if (!ctx) return;
    for (int t = 0; t < ctx->nworkers; t++) adrev_ctx_free(ctx->workers[t]);
    free(ctx->workers);
    ad_chunk *c = ctx->first;
    while (c) {
        ad_chunk *next = c->next;
        ad_chunk_free(c);
        c = next;
    }
    free(ctx);
}

static ad_mark ad_mark_get(ad_ctx *ctx) {
    ad_mark m;
    m.chunk = ctx->cur;
    m.used = ctx->cur->used;
    return m;
}

/* Frees everything allocated since the mark. */
static void ad_reset(ad_ctx *ctx, ad_mark m) {
#if defined(__SANITIZE_ADDRESS__)
    for (ad_chunk *c = m.chunk; c; c = c->next) {
        size_t from = c == m.chunk ? m.used : 0;
        if (c->used > from) AD_POISON(c->data + from, c->used - from);
        if (c == ctx->cur) break;
    }
#endif
    ctx->cur = m.chunk;
    ctx->cur->used = m.used;
}

/* Starts a call: the arena is emptied and the failure cleared. */
static void ad_begin(ad_ctx *ctx) {
    ad_mark start;
    start.chunk = ctx->first;
    start.used = 0;
    ad_reset(ctx, start);
    ctx->site = 0;
    ctx->detail[0] = ctx->detail[1] = 0;
    ctx->message[0] = 0;
}

/* `count` elements of `size` bytes, AD_ALIGN-aligned; NULL if too large. */
static void *ad_alloc(ad_ctx *ctx, int64_t count, size_t size) {
    if (count < 0 || size == 0) return NULL;
    if ((uint64_t)count > (SIZE_MAX / 2 - AD_ALIGN - AD_REDZONE) / size) return NULL;
    size_t bytes = (size_t)count * size;
    size_t need = (bytes + AD_REDZONE + AD_ALIGN - 1) & ~(size_t)(AD_ALIGN - 1);
    if (need == 0) need = AD_ALIGN;
    ad_chunk *c = ctx->cur;
    if (c->cap - c->used < need) {
        if (c->next && c->next->cap >= need) {
            c = c->next;
        } else {
            size_t cap = c->cap * 2;
            if (cap < need) cap = need;
            if (cap < AD_CHUNK_MIN) cap = AD_CHUNK_MIN;
            ad_chunk *fresh = ad_chunk_new(cap);
            if (!fresh) return NULL;
            fresh->next = c->next;
            c->next = fresh;
            c = fresh;
        }
        c->used = 0;
        ctx->cur = c;
    }
    char *p = c->data + c->used;
    c->used += need;
    AD_UNPOISON(p, bytes);
    return p;
}

/* Before a parallel body with workers: contexts for `nt` threads, each
 * emptied (arena and failure) as a call's is; false if they cannot be made. */
static bool ad_workers(ad_ctx *ctx, int nt) {
    if (nt > ctx->nworkers) {
        ad_ctx **ws = (ad_ctx **)realloc(ctx->workers, (size_t)nt * sizeof(ad_ctx *));
        if (!ws) return false;
        ctx->workers = ws;
        for (; ctx->nworkers < nt; ctx->nworkers++) {
            if (!(ws[ctx->nworkers] = adrev_ctx_new())) return false;
        }
    }
    for (int t = 0; t < nt; t++) ad_begin(ctx->workers[t]);
    return true;
}

/* After it: the failure of the first thread that failed, in thread order,
 * becomes the call's (each thread ran one chunk, the chunks in order, and
 * stopped at its first failure: this is the first in iteration order). */
static bool ad_join(ad_ctx *ctx, int nt) {
    for (int t = 0; t < nt; t++) {
        ad_ctx *w = ctx->workers[t];
        if (w->site) {
            ctx->site = w->site;
            ctx->detail[0] = w->detail[0];
            ctx->detail[1] = w->detail[1];
            return true;
        }
    }
    return false;
}

/* The element count `a * b`, saturated so that ad_alloc refuses it. */
static int64_t ad_mulc(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0) return 0;
    if (a > INT64_MAX / b) return INT64_MAX;
    return a * b;
}

/* The first index of chunk `t` of `tn` equal chunks of `0..n`. */
static int64_t ad_split(int64_t n, int64_t t, int64_t tn) {
    return (n / tn) * t + (t < n % tn ? t : n % tn);
}

void adrev_error_info(ad_ctx *ctx, int64_t info[3]) {
    info[0] = ctx->site;
    info[1] = ctx->detail[0];
    info[2] = ctx->detail[1];
}

AD_COLD static int ad_fail(ad_ctx *ctx, int64_t site, int64_t a, int64_t b) {
    ctx->site = site;
    ctx->detail[0] = a;
    ctx->detail[1] = b;
    return (int)site;
}

/* The table's functions that are not one libm call (syntax::derivatives,
 * syntax::special): the same formulas, in the same order of operations,
 * so that the results are bit for bit the evaluator's. */
static double ad_lgamma(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

static double ad_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static double ad_sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }

/* max and min of reals (syntax::derivatives::max, min): the other operand
 * when one is NaN, and of equal operands their bitwise AND (max: +0 of +0
 * and -0) or OR (min: -0), so that both are associative and a reduction in
 * lanes is the left fold bit for bit. Inline: libm's fmax is a call per
 * element (lse's primal spent 56% of its time in __fmax) and returns its
 * first operand on a tie. The common case is one maxsd (`x > y ? x : y`,
 * no branch: kmeans' nearest centroid changes unpredictably); NaN and ties
 * are a rare, predictable branch (a select of three cases compiled to
 * branches that kmeans mispredicted: its primal took twice as long). */
static inline double ad_max(double x, double y) {
    double m = x > y ? x : y;
    if (AD_RARE(y != y || x == y)) {
        uint64_t a, b;
        memcpy(&a, &x, sizeof a);
        memcpy(&b, &y, sizeof b);
        a &= b;
        memcpy(&m, &a, sizeof m);
        if (y != y) m = x;
    }
    return m;
}

static inline double ad_min(double x, double y) {
    double m = x < y ? x : y;
    if (AD_RARE(y != y || x == y)) {
        uint64_t a, b;
        memcpy(&a, &x, sizeof a);
        memcpy(&b, &y, sizeof b);
        a |= b;
        memcpy(&m, &a, sizeof m);
        if (y != y) m = x;
    }
    return m;
}

static const double ad_pi = 3.141592653589793;

static bool ad_at_pole(double x) { return x <= 0.0 && x == floor(x); }

static double ad_digamma(double x) {
    if (isnan(x) || ad_at_pole(x) || x == -INFINITY) return NAN;
    double acc = 0.0;
    if (x < 0.0) {
        acc -= ad_pi / tan(ad_pi * x);
        x = 1.0 - x;
    }
    while (x < 10.0) {
        acc -= 1.0 / x;
        x += 1.0;
    }
    double f = 1.0 / (x * x);
    double series = f * (-1.0 / 12.0
        + f * (1.0 / 120.0
        + f * (-1.0 / 252.0
        + f * (1.0 / 240.0
        + f * (-1.0 / 132.0 + f * (691.0 / 32760.0 + f * (-1.0 / 12.0)))))));
    return acc + (log(x) - 0.5 / x + series);
}

static double ad_trigamma(double x) {
    if (isnan(x) || x == -INFINITY) return NAN;
    if (ad_at_pole(x)) return INFINITY;
    double acc = 0.0, sign = 1.0;
    if (x < 0.0) {
        double s = sin(ad_pi * x);
        acc = ad_pi * ad_pi / (s * s);
        sign = -1.0;
        x = 1.0 - x;
    }
    double shifted = 0.0;
    while (x < 10.0) {
        shifted += 1.0 / (x * x);
        x += 1.0;
    }
    double f = 1.0 / (x * x);
    double series = (1.0
        + f * (1.0 / 6.0
        + f * (-1.0 / 30.0
        + f * (1.0 / 42.0
        + f * (-1.0 / 30.0 + f * (5.0 / 66.0 + f * (-691.0 / 2730.0 + f * (7.0 / 6.0))))))))
        / x;
    double tail = shifted + (series + 0.5 * f);
    return acc + sign * tail;
}

/* Int `/` floors and `mod` has the divisor's sign (syntax::derivatives::
 * eval_int); the caller has excluded b == 0 and INT64_MIN / -1. */
static int64_t ad_div_floor(int64_t a, int64_t b) {
    if (b == -1) return -a;
    int64_t q = a / b, r = a % b;
    return q - ((r != 0 && ((r < 0) != (b < 0))) ? 1 : 0);
}

static int64_t ad_mod_floor(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    return r + ((r != 0 && ((r < 0) != (b < 0))) ? b : 0);
}

static bool ad_add_ovf(int64_t a, int64_t b, int64_t *r) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
    *r = a + b;
    return false;
}

static bool ad_sub_ovf(int64_t a, int64_t b, int64_t *r) {
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) return true;
    *r = a - b;
    return false;
}

static bool ad_mul_ovf(int64_t a, int64_t b, int64_t *r) {
    if (a == 0 || b == 0) {
        *r = 0;
        return false;
    }
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : b < INT64_MAX / a)) {
        return true;
    }
    *r = a * b;
    return false;
}
"#;
