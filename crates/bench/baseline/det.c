/* ---- det: GradBench's det eval (evals/det/README.md, after cmpad's
 * det_by_minor): the determinant of an ell x ell matrix (row-major) by
 * Laplace expansion along the first row of each minor, recursively, as the
 * eval defines it (ell! terms), and its gradient.
 *
 * The gradient is reverse mode written by hand through the same recursion,
 * the call stack being the tape: det(M) = sum_j s_j M[0][j] det(S_j), with
 * S_j the minor without row 0 and column j and s_j = (-1)^j, so with the
 * adjoint `adj` of det(M), d/dM[0][j] gets adj s_j det(S_j) and det(S_j)'s
 * adjoint is adj s_j M[0][j] -- known before det(S_j) is computed, so one
 * recursion computes the determinant and accumulates the gradient at about
 * twice the primal's cost. GradBench's manual C++ tool instead computes each
 * of the ell^2 cofactors by a separate expansion of its minor (about ell
 * times the primal's work); this baseline is the stricter of the two:
 * the best hand-written gradient of the eval's own algorithm.
 *
 * The generated code computes the same determinant by Gaussian elimination
 * with complete pivoting (gradbench/det.ad says why: the language has no
 * recursion), O(ell^3): primal / baseline and grad / baseline compare two
 * algorithms, grad / primal of each compares the derivatives.
 *
 * A minor at depth m keeps rows ell - m .. ell - 1 (the expansion always
 * removes the minor's first row) and the columns of a linked list: next[ell]
 * is the first kept column, next[c] the kept column after c. Removing a
 * column relinks its predecessor; restoring it undoes that. The 2 x 2
 * minors are written out (the recursion's own two terms: without them the
 * calls for the last two levels dominate). ---- */

static double det_minor(const double *a, int64_t ell, int64_t m, int64_t *next) {
    const double *row = a + (ell - m) * ell;
    int64_t c = next[ell];
    if (m == 1) return row[c];
    if (m == 2) {
        /* The recursion's two terms written out (the same operations). */
        const double *low = row + ell;
        int64_t d = next[c];
        return row[c] * low[d] - row[d] * low[c];
    }
    double s = 0.0, sign = 1.0;
    int64_t prev = ell;
    for (int64_t j = 0; j < m; j++) {
        next[prev] = next[c];
        double sub = det_minor(a, ell, m - 1, next);
        next[prev] = c;
        s += sign * row[c] * sub;
        prev = c;
        c = next[c];
        sign = -sign;
    }
    return s;
}

/* det(M) for the minor of depth m; adds adj * d det(M) / dA into g. */
static double det_minor_grad(const double *a, int64_t ell, int64_t m, int64_t *next, double adj, double *g) {
    int64_t r = (ell - m) * ell;
    int64_t c = next[ell];
    if (m == 1) {
        g[r + c] += adj;
        return a[r + c];
    }
    if (m == 2) {
        /* The recursion's two terms and their adjoints written out. */
        int64_t d = next[c], l = r + ell;
        g[l + d] += adj * a[r + c];
        g[r + c] += adj * a[l + d];
        g[l + c] -= adj * a[r + d];
        g[r + d] -= adj * a[l + c];
        return a[r + c] * a[l + d] - a[r + d] * a[l + c];
    }
    double s = 0.0, sign = 1.0;
    int64_t prev = ell;
    for (int64_t j = 0; j < m; j++) {
        next[prev] = next[c];
        double sub = det_minor_grad(a, ell, m - 1, next, adj * sign * a[r + c], g);
        next[prev] = c;
        s += sign * a[r + c] * sub;
        g[r + c] += adj * sign * sub;
        prev = c;
        c = next[c];
        sign = -sign;
    }
    return s;
}

static void det_columns(int64_t ell, int64_t *next) {
    next[ell] = 0;
    for (int64_t c = 0; c < ell; c++) next[c] = c + 1;
}

static double det_primal(int64_t ell, const double *a, int64_t *next) {
    if (ell == 0) return 1.0;
    det_columns(ell, next);
    return det_minor(a, ell, ell, next);
}

static double det_grad(int64_t ell, const double *a, int64_t *next, double *g) {
    for (int64_t i = 0; i < ell * ell; i++) g[i] = 0.0;
    if (ell == 0) return 1.0;
    det_columns(ell, next);
    return det_minor_grad(a, ell, ell, next, 1.0, g);
}

/* The input as the generated driver reads `det (A : [n][n]R)`: the two
 * lengths, then the reals. With OUT, writes the gradient call's value and
 * gradient (ell * ell reals, row-major) there, as float64. */
static int det_main(FILE *f, long reps, const char *out) {
    int64_t dims[2];
    if (!read_i64s(f, dims, 2) || dims[0] != dims[1] || dims[0] < 0) return 4;
    int64_t ell = dims[0];
    double *a = read_reals(f, ell * ell);
    int64_t *next = malloc(sizeof(int64_t) * (size_t)(ell + 1));
    double *g = malloc(sizeof(double) * (size_t)(ell * ell > 0 ? ell * ell : 1));
    double *wall = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double *cpu = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!a) return 4;
    if (!next || !g || !wall || !cpu) return 70;
    double value = 0;
    TIME_CALLS(sink = det_primal(ell, a, next));
    print_times("primal_ns", wall, reps);
    print_times("primal_cpu_ns", cpu, reps);
    TIME_CALLS(value = det_grad(ell, a, next, g));
    print_times("grad_ns", wall, reps);
    print_times("grad_cpu_ns", cpu, reps);
    double gs = 0, gabs = 0;
    for (int64_t i = 0; i < ell * ell; i++) gs += g[i], gabs += fabs(g[i]);
    printf("check %.17g %.17g %.17g\n", value, gs, gabs);
    int rc = 0;
    if (out) {
        FILE *o = fopen(out, "wb");
        if (!o || fwrite(&value, sizeof value, 1, o) != 1 ||
            fwrite(g, sizeof(double), (size_t)(ell * ell), o) != (size_t)(ell * ell))
            rc = 73;
        if (o && fclose(o)) rc = 73;
    }
    free(a); free(next); free(g); free(wall); free(cpu);
    return rc;
}
