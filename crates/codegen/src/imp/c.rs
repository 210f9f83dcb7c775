//! The loop IR printed as C99: the last step of code generation.
//!
//! Every statement is one line (or a block), with four spaces per level;
//! a region is its mark, its body at the same level and its release; a
//! `break` first releases the regions it leaves. Constants are `const`
//! scalars, memory is a pointer (`const` when not writable), a result
//! parameter a pointer to its value. The runtime (`runtime.rs`) supplies
//! `ad_ctx`, `ad_alloc`, `ad_fail`, the marks and `AD_PRAGMA`.

use super::ir::*;
use super::print::{Lines, Notation, c_scalar};

/// The program's tables of constants as C: `static const double
/// ad_table_K[N] = { .. };`, one number per element, so the C compiler's
/// time grows with the numbers and not with statements (docs/codegen.md,
/// "Tables of constants").
pub fn tables(p: &Program) -> String {
    let mut out = String::new();
    for (k, t) in p.tables.iter().enumerate() {
        let dims: String = t.shape.iter().map(|n| format!("[{n}]")).collect();
        out.push_str(&format!(
            "/* {dims} */\nstatic const double {}[{}] = {{\n",
            TableId(k as u32).name(),
            t.data.len()
        ));
        super::print::table_numbers(&mut out, t, true);
        out.push_str("};\n\n");
    }
    out
}

/// The C definition of a function.
pub fn func(p: &Program, f: &Func) -> String {
    let mut w = Lines {
        width: 4,
        ..Lines::default()
    };
    w.line(format!("{} {{", prototype(f)));
    w.depth += 1;
    w.line("ad_begin(ctx);");
    let mut cx = Printer {
        n: Notation::C { p, f },
        regions: Vec::new(),
        ctx: "ctx",
        stop: None,
        parallels: 0,
    };
    cx.block(&mut w, &f.body);
    w.line("return 0;");
    w.depth -= 1;
    w.line("}");
    w.text
}

/// `int NAME(ad_ctx *ctx, PARAMS)`.
pub fn prototype(f: &Func) -> String {
    let mut params = vec!["ad_ctx *ctx".to_string()];
    params.extend(
        f.params
            .iter()
            .map(|v| declarator(&f.var(*v).ty, &f.var(*v).name)),
    );
    format!("int {}({})", f.name, params.join(", "))
}

/// The C declaration of a variable of type `t` named `name` (no `const`
/// on scalars: that is the caller's).
fn declarator(t: &Ty, name: &str) -> String {
    match t {
        Ty::Scalar(s) => format!("{} {name}", c_scalar(*s)),
        Ty::Mem { elem, writable } => {
            let c = if *writable { "" } else { "const " };
            format!("{c}{} *{name}", c_scalar(*elem))
        }
        Ty::Out(inner) => declarator(inner, &format!("*{name}")),
        Ty::Mark => format!("const ad_mark {name}"),
    }
}

struct Printer<'a> {
    n: Notation<'a>,
    /// The regions open at the statement: their marks and release
    /// conditions, with `None` entries for the loops between them.
    regions: Vec<Option<(VarId, Option<&'a Expr>)>>,
    /// The context allocations and failures go to: `ctx`, or inside a
    /// parallel body with workers the thread's own, `ad_w`.
    ctx: &'static str,
    /// Inside a parallel body with workers: the label at its end, where a
    /// thread goes once it has failed (a `return` may not leave an
    /// OpenMP region).
    stop: Option<String>,
    /// How many parallel bodies with workers are printed so far (their
    /// labels' numbers).
    parallels: usize,
}

impl<'a> Printer<'a> {
    fn block(&mut self, w: &mut Lines, b: &'a Block) {
        for s in b {
            syntax::stack::guard(|| self.stmt(w, s));
        }
    }

    fn name(&self, v: VarId) -> &str {
        &self.n.func().var(v).name
    }

    fn release(&self, w: &mut Lines, mark: VarId, cond: Option<&Expr>) {
        let (m, ctx) = (self.name(mark), self.ctx);
        match cond {
            Some(c) => w.line(format!("if ({}) ad_reset({ctx}, {m});", self.n.expr(c))),
            None => w.line(format!("ad_reset({ctx}, {m});")),
        }
    }

    /// How a failure at `site` with details `a`, `b` stops: the call
    /// returns, or a thread with its own context records it and stops.
    fn fail(&self, site: u32, a: &str, b: &str) -> String {
        match &self.stop {
            None => format!("return ad_fail(ctx, {site}, {a}, {b});"),
            Some(l) => format!("{{ ad_fail({}, {site}, {a}, {b}); goto {l}; }}", self.ctx),
        }
    }

    fn body(&mut self, w: &mut Lines, head: String, b: &'a Block, is_loop: bool) {
        w.line(if head.is_empty() {
            "{".to_string()
        } else {
            format!("{head} {{")
        });
        w.depth += 1;
        if is_loop {
            self.regions.push(None);
        }
        self.block(w, b);
        if is_loop {
            self.regions.pop();
        }
        w.depth -= 1;
        w.line("}");
    }

    fn stmt(&mut self, w: &mut Lines, s: &'a Stmt) {
        let f = self.n.func();
        match s {
            Stmt::Let { var, init } => {
                let v = f.var(*var);
                let c = if !v.mutable && matches!(v.ty, Ty::Scalar(_)) {
                    "const "
                } else {
                    ""
                };
                let d = declarator(&v.ty, &v.name);
                match init {
                    Some(e) => w.line(format!("{c}{d} = {};", self.n.expr(e))),
                    None => w.line(format!("{c}{d};")),
                }
            }
            Stmt::Set { place, value } => {
                w.line(format!("{} = {};", self.n.place(place), self.n.expr(value)))
            }
            Stmt::Fail { cond, site, a, b } => w.line(format!(
                "if ({}) {}",
                self.n.expr(cond),
                self.fail(*site, &self.n.expr(a), &self.n.expr(b))
            )),
            Stmt::Alloc { var, count, when } => {
                let v = f.var(*var);
                let Ty::Mem { elem, .. } = &v.ty else {
                    return;
                };
                let (t, p, n) = (c_scalar(*elem), &v.name, self.n.expr(count));
                let call = format!("({t} *)ad_alloc({}, {n}, sizeof({t}))", self.ctx);
                match when {
                    None => w.line(format!("{t} *{p} = {call};")),
                    Some(c) => w.line(format!("{t} *{p} = {} ? {call} : NULL;", self.n.expr(c))),
                }
            }
            Stmt::Checked {
                var,
                op,
                a,
                b,
                site,
            } => {
                let k = self.name(*var);
                let fun = match op {
                    CheckedOp::Add => "ad_add_ovf",
                    CheckedOp::Sub => "ad_sub_ovf",
                    CheckedOp::Mul => "ad_mul_ovf",
                };
                w.line(format!("int64_t {k};"));
                w.line(format!(
                    "if ({fun}({}, {}, &{k})) {}",
                    self.n.expr(a),
                    self.n.expr(b),
                    self.fail(*site, "0", "0")
                ));
            }
            Stmt::For(l) => {
                let hi = self.n.expr(&l.hi);
                match &l.pragma {
                    Some(Pragma::ParallelFor { min }) => w.line(format!(
                        "AD_PRAGMA(omp parallel for schedule(static) if ({hi} >= {min}))"
                    )),
                    Some(Pragma::SimdReduction { reductions, width }) => {
                        let len = width.map(|w| format!(" simdlen({w})")).unwrap_or_default();
                        let clauses: Vec<String> = reductions
                            .iter()
                            .map(|r| format!(" reduction({}:{})", r.op, self.name(r.acc)))
                            .collect();
                        w.line(format!("AD_PRAGMA(omp simd{len}{})", clauses.concat()))
                    }
                    None => {}
                }
                let iv = f.var(l.index);
                let (i, t) = (&iv.name, declarator(&iv.ty, &iv.name));
                let head = match (l.dir, &l.lo) {
                    (Dir::Up, lo) => {
                        let init = lo.as_ref().map(|lo| format!("{t} = {}", self.n.expr(lo)));
                        let (test, next) = if l.step == 1 {
                            (format!("{i} < {hi}"), format!("{i}++"))
                        } else {
                            (
                                format!("{i} + {} <= {hi}", l.step),
                                format!("{i} += {}", l.step),
                            )
                        };
                        format!("for ({}; {test}; {next})", init.unwrap_or_default())
                    }
                    (Dir::Down, lo) => {
                        let last = match &l.hi {
                            Expr::Binary(BinOp::Add | BinOp::Sub, ..) => format!("({hi}) - 1"),
                            _ => format!("{hi} - 1"),
                        };
                        let init = lo.as_ref().map(|_| format!("{t} = {last}"));
                        let lo = lo
                            .as_ref()
                            .map(|e| self.n.expr(e))
                            .unwrap_or_else(|| "0".into());
                        format!("for ({}; {i} >= {lo}; {i}--)", init.unwrap_or_default())
                    }
                };
                self.body(w, head, &l.body, true);
            }
            Stmt::Loop { body } => self.body(w, "for (;;)".into(), body, true),
            Stmt::Break => {
                let open: Vec<(VarId, Option<&Expr>)> = self
                    .regions
                    .iter()
                    .rev()
                    .take_while(|r| r.is_some())
                    .flatten()
                    .copied()
                    .collect();
                for (mark, cond) in open {
                    self.release(w, mark, cond);
                }
                w.line("break;");
            }
            Stmt::If { cond, then, els } => {
                w.line(format!("if ({}) {{", self.n.expr(cond)));
                w.depth += 1;
                self.block(w, then);
                w.depth -= 1;
                if !els.is_empty() {
                    w.line("} else {");
                    w.depth += 1;
                    self.block(w, els);
                    w.depth -= 1;
                }
                w.line("}");
            }
            Stmt::Region {
                mark,
                body,
                reset_if,
            } => {
                w.line(format!(
                    "const ad_mark {} = ad_mark_get({});",
                    self.name(*mark),
                    self.ctx
                ));
                self.regions.push(Some((*mark, reset_if.as_ref())));
                self.block(w, body);
                self.regions.pop();
                self.release(w, *mark, reset_if.as_ref());
            }
            Stmt::Parallel {
                threads,
                body,
                workers: None,
            } => {
                w.line(format!(
                    "AD_PRAGMA(omp parallel num_threads({}))",
                    self.n.expr(threads)
                ));
                self.body(w, String::new(), body, false);
            }
            Stmt::Parallel {
                threads,
                body,
                workers: Some(site),
            } => self.parallel_workers(w, threads, body, *site),
        }
    }
}

impl<'a> Printer<'a> {
    /// A parallel body whose threads have their own contexts (note
    /// [parallel loops]): the contexts are made (or emptied) first, each
    /// thread allocates from and fails into its own, `goto`ing the end
    /// of the body on failure, and afterwards the first thread that
    /// failed, in thread order, is the call's failure (`ad_join`).
    fn parallel_workers(&mut self, w: &mut Lines, threads: &'a Expr, body: &'a Block, site: u32) {
        let nt = self.n.expr(threads);
        let label = format!("ad_stop_{}", self.parallels);
        self.parallels += 1;
        w.line("{");
        w.depth += 1;
        w.line(format!("const int ad_nt = {nt};"));
        w.line(format!(
            "if (!ad_workers(ctx, ad_nt)) return ad_fail(ctx, {site}, ad_nt, 0);"
        ));
        w.line("AD_PRAGMA(omp parallel num_threads(ad_nt))");
        w.line("{");
        w.depth += 1;
        w.line("ad_ctx *const ad_w = ctx->workers[ad_thread_num()];");
        let saved = (self.ctx, self.stop.replace(label.clone()));
        self.ctx = "ad_w";
        self.block(w, body);
        (self.ctx, self.stop) = saved;
        w.line(format!("{label}:;"));
        w.depth -= 1;
        w.line("}");
        w.line("if (ad_join(ctx, ad_nt)) return (int)ctx->site;");
        w.depth -= 1;
        w.line("}");
    }
}
