//! The loop IR in its own notation (for snapshots, dumps and error
//! messages), and the expression printer both notations share.
//!
//! ```text
//! fn adrev_sum(ctx, p0_d0: i64, p0_l0: mem const f64, out_l0: out f64) {
//!   var t1_acc: f64 = 0.0
//!   for t2_i: i64 in 0 ..< p0_d0 {
//!     let t3_x: f64 = p0_l0[t2_i]
//!     t1_acc := t1_acc + t3_x
//!   }
//!   *out_l0 := t1_acc
//! }
//! ```
//!
//! `let` declares a constant and `var` a variable; `for i in lo ..< hi`
//! counts up (`by s` when the step is not 1) and `for i in hi >.. lo`
//! down from `hi - 1` to `lo`; `for i in .. ..< hi` continues with `i`'s
//! value; `region m { .. }` releases what its body allocated
//! (`region m release if C { .. }` only when `C` holds at its end);
//! `fail #k (a, b) if C`, `checked a + b or fail #k` are the statements
//! that may stop the call; `alloc T[n]` is null when the arena has no
//! room (`alloc T[n] if C`: or when `C` does not hold).
//! `table ad_table_K: f64[2][3] = { .. }` is a table of constants, before
//! the functions; `ad_table_K` in an expression is its address.

use std::fmt::Write;

use super::ir::*;

/// The program in the loop IR's notation.
pub fn program(p: &Program) -> String {
    let mut out = String::new();
    for e in &p.externs {
        let params: Vec<&str> = e.params.iter().map(|s| scalar_name(*s)).collect();
        let _ = writeln!(
            out,
            "extern {}({}) -> {}",
            e.name,
            params.join(", "),
            scalar_name(e.ret)
        );
    }
    for (k, t) in p.tables.iter().enumerate() {
        if !out.is_empty() {
            out.push('\n');
        }
        let dims: String = t.shape.iter().map(|n| format!("[{n}]")).collect();
        let _ = writeln!(out, "table {}: f64{dims} = {{", TableId(k as u32).name());
        table_numbers(&mut out, t, false);
        out.push_str("}\n");
    }
    for f in &p.funcs {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&func(p, f));
    }
    out
}

/// How many numbers a line of a printed table holds.
const TABLE_LINE: usize = 8;

/// A table's numbers, row-major, `TABLE_LINE` to a line, each followed by
/// a comma: in the loop IR's notation, or in C's (`c`) as the initializer
/// of a `static const double` array. Each reads back to the same f64
/// (the shortest such text, `-0.0` included; C's `INFINITY` and `NAN` for
/// the others, as in [`real_lit`]).
pub(super) fn table_numbers(out: &mut String, t: &Table, c: bool) {
    let indent = if c { "    " } else { "  " };
    for line in t.data.chunks(TABLE_LINE) {
        out.push_str(indent);
        for (j, x) in line.iter().enumerate() {
            if j > 0 {
                out.push(' ');
            }
            match (x.is_nan(), x.is_infinite(), c) {
                (true, _, true) => out.push_str("NAN"),
                (true, _, false) => out.push_str("nan"),
                (_, true, true) => out.push_str(if *x > 0.0 { "INFINITY" } else { "-INFINITY" }),
                (_, true, false) => out.push_str(if *x > 0.0 { "inf" } else { "-inf" }),
                _ => {
                    let _ = write!(out, "{x:?}");
                }
            }
            out.push(',');
        }
        out.push('\n');
    }
}

/// One function in the loop IR's notation.
pub fn func(p: &Program, f: &Func) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|v| format!("{}: {}", f.var(*v).name, ty_name(&f.var(*v).ty)))
        .collect();
    let mut w = Lines::default();
    w.line(format!("fn {}(ctx, {}) {{", f.name, params.join(", ")));
    w.depth += 1;
    let cx = Notation::Imp { p, f };
    block(&mut w, &cx, &f.body);
    w.depth -= 1;
    w.line("}");
    w.text
}

fn block(w: &mut Lines, cx: &Notation<'_>, b: &Block) {
    for s in b {
        syntax::stack::guard(|| stmt(w, cx, s));
    }
}

fn nested(w: &mut Lines, cx: &Notation<'_>, head: String, b: &Block) {
    w.line(format!("{head} {{"));
    w.depth += 1;
    block(w, cx, b);
    w.depth -= 1;
}

fn stmt(w: &mut Lines, cx: &Notation<'_>, s: &Stmt) {
    let f = cx.func();
    let e = |e: &Expr| cx.expr(e);
    let name = |v: &VarId| f.var(*v).name.as_str();
    match s {
        Stmt::Let { var, init } => {
            let v = f.var(*var);
            let kw = if v.mutable { "var" } else { "let" };
            let init = init
                .as_ref()
                .map(|x| format!(" = {}", e(x)))
                .unwrap_or_default();
            w.line(format!("{kw} {}: {}{init}", v.name, ty_name(&v.ty)));
        }
        Stmt::Set { place, value } => w.line(format!("{} := {}", cx.place(place), e(value))),
        Stmt::Fail { cond, site, a, b } => {
            w.line(format!("fail #{site} ({}, {}) if {}", e(a), e(b), e(cond)))
        }
        Stmt::Alloc { var, count, when } => {
            let v = f.var(*var);
            let elem = match &v.ty {
                Ty::Mem { elem, .. } => scalar_name(*elem),
                _ => "?",
            };
            let when = when
                .as_ref()
                .map(|c| format!(" if {}", e(c)))
                .unwrap_or_default();
            w.line(format!(
                "let {}: {} = alloc {elem}[{}]{when}",
                v.name,
                ty_name(&v.ty),
                e(count)
            ));
        }
        Stmt::Checked {
            var,
            op,
            a,
            b,
            site,
        } => {
            let sym = match op {
                CheckedOp::Add => "+",
                CheckedOp::Sub => "-",
                CheckedOp::Mul => "*",
            };
            w.line(format!(
                "let {}: i64 = checked {} {sym} {} or fail #{site}",
                name(var),
                e(a),
                e(b)
            ));
        }
        Stmt::For(l) => {
            if let Some(p) = &l.pragma {
                w.line(match p {
                    Pragma::ParallelFor { min } => format!("@parallel(min {min})"),
                    Pragma::SimdReduction { reductions, width } => {
                        let mut r: Vec<String> = reductions
                            .iter()
                            .map(|r| format!("reduce {} {}", r.op, name(&r.acc)))
                            .collect();
                        r.extend(width.map(|w| format!("width {w}")));
                        format!("@simd({})", r.join(", "))
                    }
                });
            }
            let i = format!("{}: {}", name(&l.index), ty_name(&f.var(l.index).ty));
            let lo = l.lo.as_ref().map(e).unwrap_or_else(|| "..".into());
            let range = match l.dir {
                Dir::Up if l.step == 1 => format!("{lo} ..< {}", e(&l.hi)),
                Dir::Up => format!("{lo} ..< {} by {}", e(&l.hi), l.step),
                Dir::Down => format!("{} >.. {lo}", e(&l.hi)),
            };
            nested(w, cx, format!("for {i} in {range}"), &l.body);
            w.line("}");
        }
        Stmt::Loop { body } => {
            nested(w, cx, "loop".into(), body);
            w.line("}");
        }
        Stmt::Break => w.line("break"),
        Stmt::If { cond, then, els } => {
            nested(w, cx, format!("if {}", e(cond)), then);
            if !els.is_empty() {
                w.line("} else {");
                w.depth += 1;
                block(w, cx, els);
                w.depth -= 1;
            }
            w.line("}");
        }
        Stmt::Region {
            mark,
            body,
            reset_if,
        } => {
            let when = reset_if
                .as_ref()
                .map(|c| format!(" release if {}", e(c)))
                .unwrap_or_default();
            nested(w, cx, format!("region {}{when}", name(mark)), body);
            w.line("}");
        }
        Stmt::Parallel {
            threads,
            body,
            workers,
        } => {
            let own = workers
                .map(|site| format!(" own arenas or fail #{site}"))
                .unwrap_or_default();
            nested(w, cx, format!("parallel({}){own}", e(threads)), body);
            w.line("}");
        }
    }
}

/// The name of a scalar type in the loop IR's notation.
pub fn scalar_name(s: Scalar) -> &'static str {
    match s {
        Scalar::F64 => "f64",
        Scalar::I64 => "i64",
        Scalar::Bool => "bool",
        Scalar::I32 => "i32",
    }
}

/// The name of a type in the loop IR's notation.
pub fn ty_name(t: &Ty) -> String {
    match t {
        Ty::Scalar(s) => scalar_name(*s).to_string(),
        Ty::Mem {
            elem,
            writable: true,
        } => format!("mem {}", scalar_name(*elem)),
        Ty::Mem {
            elem,
            writable: false,
        } => format!("mem const {}", scalar_name(*elem)),
        Ty::Out(t) => format!("out {}", ty_name(t)),
        Ty::Mark => "mark".to_string(),
    }
}

/// Indented lines.
#[derive(Default)]
pub(super) struct Lines {
    pub text: String,
    pub depth: usize,
    /// Spaces per level.
    pub width: usize,
}

impl Lines {
    pub fn line(&mut self, l: impl AsRef<str>) {
        let width = if self.width == 0 { 2 } else { self.width };
        for _ in 0..self.depth * width {
            self.text.push(' ');
        }
        self.text.push_str(l.as_ref());
        self.text.push('\n');
    }
}

/// Which notation an expression is printed in: the loop IR's or C's. They
/// differ only in literals, casts and nulls; precedence is C's in both.
pub(super) enum Notation<'a> {
    Imp { p: &'a Program, f: &'a Func },
    C { p: &'a Program, f: &'a Func },
}

/// Binds tighter than every binary operator: unary operators and casts.
const UNARY: u8 = 14;
/// Postfix: loads.
const POSTFIX: u8 = 15;
/// Never needs parentheses.
const ATOM: u8 = 16;

impl Notation<'_> {
    pub fn func(&self) -> &Func {
        match self {
            Notation::Imp { f, .. } | Notation::C { f, .. } => f,
        }
    }

    fn program(&self) -> &Program {
        match self {
            Notation::Imp { p, .. } | Notation::C { p, .. } => p,
        }
    }

    /// A place being stored to.
    pub fn place(&self, p: &Place) -> String {
        match p {
            Place::Var(v) => self.func().var(*v).name.clone(),
            Place::Elem { mem, index } => {
                format!("{}[{}]", self.at(mem, POSTFIX), self.expr(index))
            }
            Place::Out(v) => format!("*{}", self.func().var(*v).name),
        }
    }

    /// An expression.
    pub fn expr(&self, e: &Expr) -> String {
        self.at(e, 0)
    }

    /// An expression in a position that needs precedence `min`.
    fn at(&self, e: &Expr, min: u8) -> String {
        let (text, prec) = syntax::stack::guard(|| self.with_prec(e));
        if prec < min {
            format!("({text})")
        } else {
            text
        }
    }

    fn with_prec(&self, e: &Expr) -> (String, u8) {
        let c = matches!(self, Notation::C { .. });
        match e {
            Expr::Var(v) => (self.func().var(*v).name.clone(), ATOM),
            Expr::F64(x) if c => (real_lit(*x), ATOM),
            Expr::F64(x) => (imp_real(*x), ATOM),
            Expr::I64(i) if c => (int_lit(*i), ATOM),
            Expr::I64(i) if *i < 0 => (format!("({i})"), ATOM),
            Expr::I64(i) => (i.to_string(), ATOM),
            Expr::I32(i) if c && *i < 0 => (format!("({i})"), ATOM),
            Expr::I32(i) if c => (i.to_string(), ATOM),
            Expr::I32(i) => (format!("{i}i32"), ATOM),
            Expr::Bool(b) => (b.to_string(), ATOM),
            Expr::Null(_) if c => ("NULL".into(), ATOM),
            Expr::Null(_) => ("null".into(), ATOM),
            Expr::Load(m, i) => (
                format!("{}[{}]", self.at(m, POSTFIX), self.expr(i)),
                POSTFIX,
            ),
            Expr::Unary(op, a) => {
                let sym = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                };
                // `!(x)` and `-(x)` unless `x` is a name or literal.
                (format!("{sym}{}", self.at(a, ATOM)), UNARY)
            }
            Expr::Binary(op, a, b) => {
                let p = op.precedence();
                let text = format!("{} {} {}", self.at(a, p), op.symbol(), self.at(b, p + 1));
                (text, p)
            }
            Expr::Call(id, args) => {
                let name = self
                    .program()
                    .externs
                    .get(id.0 as usize)
                    .map(|x| x.name.as_str())
                    .unwrap_or("?");
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                (format!("{name}({})", args.join(", ")), ATOM)
            }
            Expr::Select(cond, a, b) => {
                let text = format!(
                    "({} ? {} : {})",
                    self.at(cond, 3),
                    self.at(a, 3),
                    self.at(b, 3)
                );
                (text, ATOM)
            }
            Expr::Cast(to, a) if c => (format!("({}){}", c_scalar(*to), self.at(a, UNARY)), UNARY),
            Expr::Cast(to, a) => (format!("{}({})", scalar_name(*to), self.expr(a)), ATOM),
            Expr::IsNull(a) if c => (format!("!{}", self.at(a, ATOM)), UNARY),
            Expr::IsNull(a) => (format!("is_null({})", self.expr(a)), ATOM),
            Expr::Table(id) => (id.name(), ATOM),
        }
    }
}

/// A real in the loop IR's notation: the shortest text that reads back
/// to the same f64.
fn imp_real(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "(-inf)" }.into()
    } else {
        // Finite reals read the same in C.
        real_lit(x)
    }
}

/// A real constant as a C literal that reads back to the same f64.
fn real_lit(x: f64) -> String {
    if x.is_nan() {
        "NAN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "INFINITY" } else { "(-INFINITY)" }.to_string()
    } else if x.is_sign_negative() {
        format!("({x:?})")
    } else {
        format!("{x:?}")
    }
}

/// An `int64_t` constant as a C literal: plain decimal where C's `int`
/// holds it (the usual conversions then give the `int64_t` value wherever
/// it meets one), `INT64_C` beyond.
fn int_lit(i: i64) -> String {
    if i == i64::MIN {
        "INT64_MIN".to_string()
    } else if i32::try_from(i).is_ok() {
        if i < 0 {
            format!("({i})")
        } else {
            i.to_string()
        }
    } else if i < 0 {
        format!("(-INT64_C({}))", i.unsigned_abs())
    } else {
        format!("INT64_C({i})")
    }
}

/// The C type of a scalar.
pub fn c_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::F64 => "double",
        Scalar::I64 => "int64_t",
        Scalar::Bool => "bool",
        Scalar::I32 => "int",
    }
}
