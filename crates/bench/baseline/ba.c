/* ---- ba: bundle adjustment (ADBench's ba, GradBench's evals/ba; the
 * program is gradbench/ba.ad). A camera is [r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2]:
 * a Rodrigues rotation r, the centre C, the focal length f, the principal
 * point (u0, v0) and radial distortion (k1, k2). Observation i sees point
 * X = xs[pt[i]] from camera cams[cam[i]] at feature feat_i with weight w_i:
 *   Xo = X - C, Xc = rot(r, Xo), q = (Xc0 / Xc2, Xc1 / Xc2),
 *   L = 1 + k1 |q|^2 + k2 |q|^4, proj = f L q + (u0, v0),
 *   err_i = w_i (proj - feat_i), and the weight error 1 - w_i^2,
 * with rot(r, X) = X cos t + (u x X) sin t + u (u . X)(1 - cos t),
 * t = |r|, u = r / t, and X + r x X when r = 0 (as the program).
 *
 * The Jacobian is derived by hand, the chain rule written out per
 * observation (as ADBench's manual tool does), into GradBench's sparse
 * output: CSR with 2p + p rows (two reprojection rows per observation, then
 * one weight row each) and 11 n + 3 m + p columns; a reprojection row's 15
 * entries are its camera's 11 columns, its point's 3 and its weight's. The
 * row starts and columns are written in the timed call too, as the manual
 * tool's sparse matrix is (the generated code's timed call writes the dense
 * 2 x 15 blocks; the tool scatters them afterwards, untimed).
 *
 * Derivatives of one observation (G = w f dL(q)q/dq dq/dXc, 2 x 3):
 *   d err / d X = G R, d err / d C = -G R, R = d rot / d Xo
 *     = cos t I + sin t [u]x + (1 - cos t) u u^T (I + [r]x when r = 0);
 *   d err / d r = G d Xc / d r, with (r != 0)
 *     d Xc / d r = (d Xc / d t) u^T + (d Xc / d u)(I - u u^T) / t,
 *     d Xc / d t = -sin t Xo + cos t (u x Xo) + sin t (u . Xo) u,
 *     d Xc / d u = -sin t [Xo]x + (1 - cos t)((u . Xo) I + u Xo^T),
 *   and d Xc / d r = -[Xo]x when r = 0;
 *   d err / d f = w L q, d err / d (u0, v0) = w I, d err / d k1 = w f |q|^2 q,
 *   d err / d k2 = w f |q|^4 q, d err / d w = proj - feat;
 *   d (1 - w^2) / d w = -2 w. ---- */

#define BA_NCAM 11
#define BA_ROW (BA_NCAM + 3 + 1)

/* a x b */
static void ba_cross(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The reprojection error of one observation. */
static void ba_reproj(const double *cam, const double *x, double w, const double *feat, double *err) {
    double xo[3] = {x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]}, xc[3], uxo[3];
    const double *r = cam;
    double sq = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    if (sq != 0) {
        double t = sqrt(sq), ct = cos(t), st = sin(t), ti = 1.0 / t;
        double u[3] = {r[0] * ti, r[1] * ti, r[2] * ti};
        ba_cross(u, xo, uxo);
        double tmp = (u[0] * xo[0] + u[1] * xo[1] + u[2] * xo[2]) * (1.0 - ct);
        for (int k = 0; k < 3; k++) xc[k] = xo[k] * ct + uxo[k] * st + u[k] * tmp;
    } else {
        ba_cross(r, xo, uxo);
        for (int k = 0; k < 3; k++) xc[k] = xo[k] + uxo[k];
    }
    double q0 = xc[0] / xc[2], q1 = xc[1] / xc[2];
    double rsq = q0 * q0 + q1 * q1;
    double l = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq;
    err[0] = w * (q0 * l * cam[6] + cam[7] - feat[0]);
    err[1] = w * (q1 * l * cam[6] + cam[8] - feat[1]);
}

/* The 2 x 15 Jacobian of one observation's error, row-major: for each of
 * the two rows, the camera's 11 entries, the point's 3, the weight's. */
static void ba_reproj_jacobian(const double *cam, const double *x, double w, const double *feat, double *j) {
    const double *r = cam;
    double xo[3] = {x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]}, xc[3], uxo[3];
    double rot[3][3], dr[3][3]; /* d Xc / d Xo and d Xc / d r */
    double sq = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    if (sq != 0) {
        double t = sqrt(sq), ct = cos(t), st = sin(t), ti = 1.0 / t;
        double u[3] = {r[0] * ti, r[1] * ti, r[2] * ti};
        ba_cross(u, xo, uxo);
        double uxo_dot = u[0] * xo[0] + u[1] * xo[1] + u[2] * xo[2];
        double tmp = uxo_dot * (1.0 - ct);
        for (int k = 0; k < 3; k++) xc[k] = xo[k] * ct + uxo[k] * st + u[k] * tmp;
        /* [u]x and [Xo]x: cross(a, .) as a matrix. */
        double ux[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
        double xx[3][3] = {{0, -xo[2], xo[1]}, {xo[2], 0, -xo[0]}, {-xo[1], xo[0], 0}};
        double dt[3], du[3][3];
        for (int a = 0; a < 3; a++) {
            dt[a] = -st * xo[a] + ct * uxo[a] + st * uxo_dot * u[a];
            for (int b = 0; b < 3; b++) {
                double id = a == b ? 1.0 : 0.0;
                rot[a][b] = ct * id + st * ux[a][b] + (1.0 - ct) * u[a] * u[b];
                du[a][b] = -st * xx[a][b] + (1.0 - ct) * (uxo_dot * id + u[a] * xo[b]);
            }
        }
        /* d u / d r = (I - u u^T) / t. */
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double s = 0.0;
                for (int c = 0; c < 3; c++) s += du[a][c] * ((c == b ? 1.0 : 0.0) - u[c] * u[b]);
                dr[a][b] = dt[a] * u[b] + s * ti;
            }
    } else {
        ba_cross(r, xo, uxo);
        for (int k = 0; k < 3; k++) xc[k] = xo[k] + uxo[k];
        double rx[3][3] = {{1, -r[2], r[1]}, {r[2], 1, -r[0]}, {-r[1], r[0], 1}};
        double xx[3][3] = {{0, -xo[2], xo[1]}, {xo[2], 0, -xo[0]}, {-xo[1], xo[0], 0}};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                rot[a][b] = rx[a][b];
                dr[a][b] = -xx[a][b];
            }
    }
    double z = 1.0 / xc[2];
    double q[2] = {xc[0] * z, xc[1] * z};
    double rsq = q[0] * q[0] + q[1] * q[1];
    double k1 = cam[9], k2 = cam[10], f = cam[6];
    double l = 1.0 + k1 * rsq + k2 * rsq * rsq;
    double dl = 2.0 * (k1 + 2.0 * k2 * rsq); /* d L / d q_b = dl q_b */
    /* d q / d Xc */
    double dq[2][3] = {{z, 0.0, -q[0] * z}, {0.0, z, -q[1] * z}};
    for (int a = 0; a < 2; a++) {
        double *row = j + a * BA_ROW;
        /* G[a] = w f d(L q_a)/dq dq/dXc */
        double dd[2] = {l * (a == 0) + q[a] * dl * q[0], l * (a == 1) + q[a] * dl * q[1]};
        double g[3];
        for (int c = 0; c < 3; c++) g[c] = w * f * (dd[0] * dq[0][c] + dd[1] * dq[1][c]);
        for (int b = 0; b < 3; b++) {
            double gr = g[0] * rot[0][b] + g[1] * rot[1][b] + g[2] * rot[2][b];
            row[b] = g[0] * dr[0][b] + g[1] * dr[1][b] + g[2] * dr[2][b];
            row[3 + b] = -gr;
            row[BA_NCAM + b] = gr;
        }
        row[6] = w * l * q[a];
        row[7] = a == 0 ? w : 0.0;
        row[8] = a == 1 ? w : 0.0;
        row[9] = w * f * rsq * q[a];
        row[10] = w * f * rsq * rsq * q[a];
        row[BA_NCAM + 3] = (a == 0 ? q[0] * l * f + cam[7] - feat[0] : q[1] * l * f + cam[8] - feat[1]);
    }
}

typedef struct {
    int64_t n, m, p;
    const double *cams, *xs, *w, *feats;
    const int64_t *cam, *pt;
} ba_t;

static void ba_objective(const ba_t *b, double *reproj, double *werr) {
    for (int64_t i = 0; i < b->p; i++)
        ba_reproj(b->cams + BA_NCAM * b->cam[i], b->xs + 3 * b->pt[i], b->w[i], b->feats + 2 * i, reproj + 2 * i);
    for (int64_t i = 0; i < b->p; i++) werr[i] = 1.0 - b->w[i] * b->w[i];
}

/* The Jacobian in CSR: rows [3p + 1], cols and vals [30 p + p]. */
static void ba_jacobian(const ba_t *b, int64_t *rows, int64_t *cols, double *vals) {
    int64_t wcol = BA_NCAM * b->n + 3 * b->m;
    for (int64_t i = 0; i < b->p; i++) {
        int64_t at = 2 * BA_ROW * i, c = BA_NCAM * b->cam[i], x = BA_NCAM * b->n + 3 * b->pt[i];
        ba_reproj_jacobian(b->cams + c, b->xs + 3 * b->pt[i], b->w[i], b->feats + 2 * i, vals + at);
        for (int a = 0; a < 2; a++) {
            int64_t *col = cols + at + a * BA_ROW;
            rows[2 * i + a] = at + a * BA_ROW;
            for (int k = 0; k < BA_NCAM; k++) col[k] = c + k;
            for (int k = 0; k < 3; k++) col[BA_NCAM + k] = x + k;
            col[BA_NCAM + 3] = wcol + i;
        }
    }
    int64_t base = 2 * BA_ROW * b->p;
    for (int64_t i = 0; i < b->p; i++) {
        rows[2 * b->p + i] = base + i;
        cols[base + i] = wcol + i;
        vals[base + i] = -2.0 * b->w[i];
    }
    rows[3 * b->p] = base + b->p;
}

static int64_t *ba_read_ints(FILE *f, int64_t count) {
    int64_t *a = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (a && count > 0 && fread(a, sizeof(int64_t), (size_t)count, f) != (size_t)count) {
        free(a);
        return NULL;
    }
    return a;
}

/* The input as the generated driver reads `ba_objective (cams : [nc][11]R)
 * (xs : [np][3]R) (w : [p]R) (cam : [p]Int) (pt : [p]Int) (feats : [p][2]R)`:
 * each parameter's lengths, then its elements. With OUT, writes the
 * Jacobian call's CSR there: rows (3p + 1 int64), cols (31p int64), vals
 * (31p float64). The check's value is 0 (the Jacobian has none); its sums
 * are over vals. */
static int ba_main(FILE *f, long reps, const char *out) {
    int64_t dc[2], dx[2], dw, dcam, dpt, df[2];
    ba_t b;
    if (!read_i64s(f, dc, 2) || dc[1] != BA_NCAM) return 4;
    b.cams = read_reals(f, dc[0] * BA_NCAM);
    if (!read_i64s(f, dx, 2) || dx[1] != 3) return 4;
    b.xs = read_reals(f, dx[0] * 3);
    if (!read_i64s(f, &dw, 1)) return 4;
    b.w = read_reals(f, dw);
    if (!read_i64s(f, &dcam, 1) || dcam != dw) return 4;
    b.cam = ba_read_ints(f, dcam);
    if (!read_i64s(f, &dpt, 1) || dpt != dw) return 4;
    b.pt = ba_read_ints(f, dpt);
    if (!read_i64s(f, df, 2) || df[0] != dw || df[1] != 2) return 4;
    b.feats = read_reals(f, dw * 2);
    if (!b.cams || !b.xs || !b.w || !b.cam || !b.pt || !b.feats) return 4;
    b.n = dc[0], b.m = dx[0], b.p = dw;
    for (int64_t i = 0; i < b.p; i++)
        if (b.cam[i] < 0 || b.cam[i] >= b.n || b.pt[i] < 0 || b.pt[i] >= b.m) return 4;
    size_t p = (size_t)(b.p > 0 ? b.p : 1), nnz = (size_t)(2 * BA_ROW + 1) * p;
    double *reproj = malloc(sizeof(double) * 2 * p), *werr = malloc(sizeof(double) * p);
    int64_t *rows = malloc(sizeof(int64_t) * (3 * p + 1)), *cols = malloc(sizeof(int64_t) * nnz);
    double *vals = malloc(sizeof(double) * nnz);
    double *wall = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    double *cpu = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    if (!reproj || !werr || !rows || !cols || !vals || !wall || !cpu) return 70;
    TIME_CALLS(ba_objective(&b, reproj, werr); sink = reproj[0]);
    print_times("primal_ns", wall, reps);
    print_times("primal_cpu_ns", cpu, reps);
    TIME_CALLS(ba_jacobian(&b, rows, cols, vals); sink = vals[0]);
    print_times("grad_ns", wall, reps);
    print_times("grad_cpu_ns", cpu, reps);
    size_t used = (size_t)(2 * BA_ROW + 1) * (size_t)b.p;
    double gs = 0, gabs = 0;
    for (size_t i = 0; i < used; i++) gs += vals[i], gabs += fabs(vals[i]);
    printf("check 0 %.17g %.17g\n", gs, gabs);
    int rc = 0;
    if (out) {
        FILE *o = fopen(out, "wb");
        size_t nr = (size_t)(3 * b.p + 1);
        if (!o || fwrite(rows, sizeof(int64_t), nr, o) != nr || fwrite(cols, sizeof(int64_t), used, o) != used ||
            fwrite(vals, sizeof(double), used, o) != used)
            rc = 73;
        if (o && fclose(o)) rc = 73;
    }
    free((void *)b.cams); free((void *)b.xs); free((void *)b.w); free((void *)b.cam); free((void *)b.pt);
    free((void *)b.feats); free(reproj); free(werr); free(rows); free(cols); free(vals); free(wall); free(cpu);
    return rc;
}
