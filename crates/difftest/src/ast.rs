//! The generator's own small typed AST of Source programs: printed to
//! program text (which the tests compile with `syntax::compile`, so the
//! whole front end is exercised), typed here (sizes included), counted for
//! coverage, classified by the fragment of the language it lies in, and
//! rewritten by the shrinker. Its evaluator, with the singular-point
//! checks, is [`crate::eval`].
//!
//! Types are those of the surface language's first-order part: `R`,
//! arrays of any ground type (`[n]R`, `[n][m]R`, `[n](R, R)`) whose size
//! is one of two size variables plus an offset (`[n+1]R` from a scan,
//! `[n-1]R` from a shift), tuples, and the non-differentiable `Int` and
//! `Bool` values of indices, lengths and conditions. Every name is unique
//! in a program.

use crate::deriv::Deriv;
use std::collections::BTreeMap;
use std::fmt::Write;
use syntax::Prim;

/// The size of an array: size variable `var` (0 is `n`, 1 is `m`) plus
/// `offset` (a scan adds one element, a shift drops one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Which size variable.
    pub var: usize,
    /// How many elements more than it.
    pub offset: i64,
}

impl Size {
    /// The size of a `build` counting to a number computed at run time
    /// (`Features::counts`): no array in scope has it, so its index reads
    /// nothing.
    pub const DYNAMIC: Size = Size {
        var: usize::MAX,
        offset: 0,
    };

    /// The size variable itself.
    pub const fn of(var: usize) -> Size {
        Size { var, offset: 0 }
    }

    /// This size plus `k`.
    pub fn plus(self, k: i64) -> Size {
        Size {
            var: self.var,
            offset: self.offset + k,
        }
    }

    /// The size as written in types: `n`, `n+1`, `n-1`.
    pub fn text(self) -> String {
        let v = SIZE_NAMES[self.var];
        match self.offset {
            0 => v.to_string(),
            k if k > 0 => format!("{v}+{k}"),
            k => format!("{v}-{}", -k),
        }
    }
}

/// The names of the size variables.
pub const SIZE_NAMES: [&str; 2] = ["n", "m"];

/// A type of a generated program.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum GTy {
    /// `R`.
    Real,
    /// `Int`, known to lie in `0..size` (the index of `build` and `ifold`).
    Index(Size),
    /// `Int`, equal to a size (`length A`).
    Length(Size),
    /// `Bool` (conditions).
    Bool,
    /// `[size]T`.
    Array(Box<GTy>, Size),
    /// `(T1, ..., Tk)`, k >= 2.
    Tuple(Vec<GTy>),
}

impl GTy {
    /// `[size]R`.
    pub fn reals(size: Size) -> GTy {
        GTy::Array(Box::new(GTy::Real), size)
    }

    /// The type as written in programs.
    pub fn text(&self) -> String {
        match self {
            GTy::Real => "R".to_string(),
            GTy::Index(_) | GTy::Length(_) => "Int".to_string(),
            GTy::Bool => "Bool".to_string(),
            GTy::Array(t, s) => format!("[{}]{}", s.text(), t.text()),
            GTy::Tuple(ts) => {
                let items: Vec<String> = ts.iter().map(GTy::text).collect();
                format!("({})", items.join(", "))
            }
        }
    }

    /// Whether values of the type hold only reals (what a gradient is
    /// taken of, and what flows through `+^`).
    pub fn is_ground_real(&self) -> bool {
        match self {
            GTy::Real => true,
            GTy::Array(t, _) => t.is_ground_real(),
            GTy::Tuple(ts) => ts.iter().all(GTy::is_ground_real),
            _ => false,
        }
    }

    /// How deeply arrays nest in the type (`[n][m]R` is 2).
    pub fn array_depth(&self) -> usize {
        match self {
            GTy::Array(t, _) => 1 + t.array_depth(),
            GTy::Tuple(ts) => ts.iter().map(GTy::array_depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}

/// The function with derivative rules that `Op1(Prim::WithRules, e)`
/// applies to `e` (docs/derivatives.md, section 8): `x sin x` with its
/// exact derivative as both rules, so every route must agree with finite
/// differences of the body. `eval::op1` computes the same value.
pub const RULES: &str = "(fun rx -> rx * sin rx) (fun (rx, rdx) -> (sin rx + rx * cos rx) * rdx) (fun (rx, rct) -> (sin rx + rx * cos rx) * rct)";

/// An expression of a generated program.
#[derive(Debug, Clone, PartialEq)]
pub enum GExpr {
    /// A non-negative constant (a real, or an integer where an `Int` is
    /// compared).
    Const(f64),
    /// A variable.
    Var(String),
    /// `let x = e1 in e2`.
    Let(String, Box<GExpr>, Box<GExpr>),
    /// `let (x1, ..., xk) = e1 in e2`.
    LetTuple(Vec<String>, Box<GExpr>, Box<GExpr>),
    /// `(e1, ..., ek)`.
    Tuple(Vec<GExpr>),
    /// `e.i`, 1-based.
    Proj(Box<GExpr>, usize),
    /// A primitive of one operand: `-`, `not`, a unary real function,
    /// `shift1L`, `shift1R`, `length`, `real`, `floor`, `ceil`, `round`,
    /// `trunc`, and `with_rules`, standing for the function of [`RULES`].
    Op1(Prim, Box<GExpr>),
    /// A primitive of two operands: `+ - * /`, `pow`, `max`, `min`,
    /// `atan2`, a comparison, `&&`, `||`, and `/`, `mod` of an `Int` by a
    /// constant.
    Op2(Prim, Box<GExpr>, Box<GExpr>),
    /// `if c then a else b`.
    If(Box<GExpr>, Box<GExpr>, Box<GExpr>),
    /// `a[i]`.
    Index(Box<GExpr>, Box<GExpr>),
    /// An array builtin with a function argument.
    Loop(Loop),
    /// `scatter dest is vs` or a histogram (`reduce_by_index dest op is
    /// vs`, op of `hist_add`, `hist_mul`, `hist_min`, `hist_max`) of the
    /// reals `vs` into `dest`, with the indices `is = build (length vs)
    /// (fun i -> i / k)`: repeated indices for k > 1, out of range where
    /// `vs` is longer than k times `dest`.
    Hist(Prim, Box<GExpr>, Box<GExpr>, i64),
    /// A derivative construct of a generated function (`crate::deriv`).
    Deriv(Deriv),
    /// A lambda applied to an argument ([`Features::higher_order`]).
    ///
    /// [`Features::higher_order`]: crate::Features::higher_order
    Apply(Box<Apply>),
}

/// How an applied lambda is written: each means `let x = arg in body`, so
/// the evaluator, the types and the shrinker treat it as that `let`, while
/// the front end (inference, specialisation to first order) and the
/// higher-order paths of the modes see a lambda applied directly, bound to
/// a name, or passed to another lambda as a function-typed parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LamStyle {
    /// `((fun (x : R) -> body) arg)`.
    Direct,
    /// `(let g = fun (x : R) -> body in g arg)`.
    Bound,
    /// `((fun (g : R -> T) -> g arg) (fun (x : R) -> body))`.
    Passed,
    /// `(let g = fun (x : R) -> body in (g arg + g arg) * 0.5)`, of a real
    /// body: a bound lambda called twice (doubling and halving are exact).
    /// Only with [`Features::redundant`].
    ///
    /// [`Features::redundant`]: crate::Features::redundant
    Twice,
    /// `(let g = if arg < 0 then (0, fun (x : R) -> body) else (1, fun (x
    /// : R) -> body) in if g.1 < 2 then g.2 arg else 0)`, of a real body:
    /// a lambda in a tuple chosen by a conditional, as reverse mode's
    /// continuations are (`g.1` is 0 or 1, so the test always holds, which
    /// no rule can know). Only with [`Features::redundant`].
    ///
    /// [`Features::redundant`]: crate::Features::redundant
    Branched,
}

/// A lambda `fun (x : R) -> body` of result type `ret`, applied to `arg`;
/// `g` names it where [`LamStyle`] binds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Apply {
    /// How it is written.
    pub style: LamStyle,
    /// The name the lambda is bound to (`Bound`, `Passed`).
    pub g: String,
    /// The parameter (of type `R`).
    pub x: String,
    /// The type of the body.
    pub ret: GTy,
    /// The argument.
    pub arg: GExpr,
    /// The body.
    pub body: GExpr,
}

/// `map`, `map2`, `reduce`, `foldl`, `scanl`, `scanr`, `build`, `ifold`:
/// the builtin, the lambda's parameters and body, and the other operands
/// in the order they are written (`map`: `A`; `map2`: `A B`; the folds and
/// scans: `z A`; `build`: `n`; `ifold`: `z n`).
#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    /// Which builtin.
    pub op: Prim,
    /// The lambda's parameters (one for `map` and `build`, two otherwise).
    pub params: Vec<String>,
    /// The lambda's body.
    pub body: Box<GExpr>,
    /// The other operands.
    pub args: Vec<GExpr>,
}

impl Apply {
    fn write(&self, out: &mut String) {
        let (x, g) = (&self.x, &self.g);
        let lam = format!("(fun ({x} : R) -> {})", self.body.text());
        let arg = self.arg.text();
        let _ = match self.style {
            LamStyle::Direct => write!(out, "({lam} {arg})"),
            LamStyle::Bound => write!(out, "(let {g} = {lam} in {g} {arg})"),
            LamStyle::Passed => write!(
                out,
                "((fun ({g} : R -> {}) -> {g} {arg}) {lam})",
                self.ret.text()
            ),
            LamStyle::Twice => write!(out, "(let {g} = {lam} in ({g} {arg} + {g} {arg}) * 0.5)"),
            LamStyle::Branched => write!(
                out,
                "(let {g} = if {arg} < 0 then (0, {lam}) else (1, {lam}) in if {g}.1 < 2 then {g}.2 {arg} else 0)"
            ),
        };
    }
}

impl Loop {
    /// The operator whose section `(op)` the lambda is, when it is
    /// `fun (x, y) -> x op y` for an arithmetic operator (printed so).
    pub fn section(&self) -> Option<Prim> {
        match (&*self.body, self.params.as_slice()) {
            (GExpr::Op2(op @ (Prim::Add | Prim::Sub | Prim::Mul | Prim::Div), a, b), [x, y])
                if **a == GExpr::Var(x.clone()) && **b == GExpr::Var(y.clone()) =>
            {
                Some(*op)
            }
            _ => None,
        }
    }
}

/// A generated program: one definition `f`.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The parameters.
    pub params: Vec<(String, GTy)>,
    /// The result type: `R`, or another ground type for the dot-product
    /// test.
    pub ret: GTy,
    /// The body.
    pub body: GExpr,
}

/// A value of a generated program.
#[derive(Debug, Clone, PartialEq)]
pub enum GVal {
    /// A real.
    Real(f64),
    /// An integer.
    Int(i64),
    /// A truth value.
    Bool(bool),
    /// An array.
    Array(Vec<GVal>),
    /// A tuple.
    Tuple(Vec<GVal>),
}

impl GVal {
    /// An array of reals.
    pub fn reals(xs: &[f64]) -> GVal {
        GVal::Array(xs.iter().map(|&x| GVal::Real(x)).collect())
    }

    /// The same value in the evaluator's representation.
    pub fn to_value(&self) -> semantics::Value {
        use semantics::Value;
        match self {
            GVal::Real(x) => Value::Real(*x),
            GVal::Int(i) => Value::Int(*i),
            GVal::Bool(b) => Value::Bool(*b),
            GVal::Array(xs) => Value::array(xs.iter().map(GVal::to_value).collect()),
            GVal::Tuple(vs) => Value::tuple(vs.iter().map(GVal::to_value).collect()),
        }
    }
}

/// Which paths a program's constructs are inside the language of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// The direct macro's language (Fig. 5, Sections 7.1 and 7.2, Fig. 16;
    /// docs/direct.md): no index, `length`, shift, scan, `build`, `ifold`,
    /// no comparison of indices, and `reduce` and `foldl` only with a real
    /// accumulator.
    pub direct: bool,
}

impl GExpr {
    /// The direct children (for a loop: its operands, then its body).
    pub fn children(&self) -> Vec<&GExpr> {
        match self {
            GExpr::Const(_) | GExpr::Var(_) => vec![],
            GExpr::Let(_, a, b)
            | GExpr::LetTuple(_, a, b)
            | GExpr::Op2(_, a, b)
            | GExpr::Index(a, b) => vec![a, b],
            GExpr::Tuple(items) => items.iter().collect(),
            GExpr::Proj(a, _) | GExpr::Op1(_, a) => vec![a],
            GExpr::If(c, a, b) => vec![c, a, b],
            GExpr::Loop(l) => l.args.iter().chain([&*l.body]).collect(),
            GExpr::Hist(_, d, v, _) => vec![d, v],
            GExpr::Deriv(d) => d.children(),
            GExpr::Apply(a) => vec![&a.arg, &a.body],
        }
    }

    /// The direct children, mutably, in the order of [`GExpr::children`].
    pub fn children_mut(&mut self) -> Vec<&mut GExpr> {
        match self {
            GExpr::Const(_) | GExpr::Var(_) => vec![],
            GExpr::Let(_, a, b)
            | GExpr::LetTuple(_, a, b)
            | GExpr::Op2(_, a, b)
            | GExpr::Index(a, b) => vec![a, b],
            GExpr::Tuple(items) => items.iter_mut().collect(),
            GExpr::Proj(a, _) | GExpr::Op1(_, a) => vec![a],
            GExpr::If(c, a, b) => vec![c, a, b],
            GExpr::Loop(l) => l.args.iter_mut().chain([&mut *l.body]).collect(),
            GExpr::Hist(_, d, v, _) => vec![d, v],
            GExpr::Deriv(d) => d.children_mut(),
            GExpr::Apply(a) => vec![&mut a.arg, &mut a.body],
        }
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        syntax::stack::guard(|| 1 + self.children().iter().map(|c| c.size()).sum::<usize>())
    }

    /// Whether `name` occurs in this expression.
    pub fn mentions(&self, name: &str) -> bool {
        syntax::stack::guard(|| match self {
            GExpr::Var(n) => n == name,
            _ => self.children().iter().any(|c| c.mentions(name)),
        })
    }

    /// The variables this expression reads that it does not bind.
    pub fn free_vars(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_free(&mut Vec::new(), &mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_free(&self, bound: &mut Vec<String>, out: &mut Vec<String>) {
        syntax::stack::guard(|| self.collect_free_node(bound, out))
    }

    fn collect_free_node(&self, bound: &mut Vec<String>, out: &mut Vec<String>) {
        let k = bound.len();
        match self {
            GExpr::Var(n) => {
                if !bound.contains(n) {
                    out.push(n.clone());
                }
            }
            GExpr::Let(x, v, b) => {
                v.collect_free(bound, out);
                bound.push(x.clone());
                b.collect_free(bound, out);
            }
            GExpr::LetTuple(xs, v, b) => {
                v.collect_free(bound, out);
                bound.extend(xs.iter().cloned());
                b.collect_free(bound, out);
            }
            GExpr::Apply(a) => {
                a.arg.collect_free(bound, out);
                bound.push(a.x.clone());
                a.body.collect_free(bound, out);
            }
            GExpr::Loop(l) => {
                l.args.iter().for_each(|a| a.collect_free(bound, out));
                bound.extend(l.params.iter().cloned());
                l.body.collect_free(bound, out);
            }
            GExpr::Deriv(d) => {
                d.at.collect_free(bound, out);
                if let Some(dir) = &d.dir {
                    dir.collect_free(bound, out);
                }
                bound.push(d.x.clone());
                d.body.collect_free(bound, out);
            }
            _ => self
                .children()
                .iter()
                .for_each(|c| c.collect_free(bound, out)),
        }
        bound.truncate(k);
    }

    /// The expression as program text, fully parenthesized.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        syntax::stack::guard(|| self.write_node(out))
    }

    fn write_node(&self, out: &mut String) {
        match self {
            GExpr::Const(c) => out.push_str(&semantics::format_real(*c)),
            GExpr::Var(n) => out.push_str(n),
            GExpr::Let(x, v, b) => {
                let _ = write!(out, "(let {x} = ");
                v.write(out);
                out.push_str(" in ");
                b.write(out);
                out.push(')');
            }
            GExpr::LetTuple(xs, v, b) => {
                let _ = write!(out, "(let ({}) = ", xs.join(", "));
                v.write(out);
                out.push_str(" in ");
                b.write(out);
                out.push(')');
            }
            GExpr::Tuple(items) => {
                out.push('(');
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out);
                }
                out.push(')');
            }
            GExpr::Proj(e, i) => {
                out.push('(');
                e.write(out);
                let _ = write!(out, ").{i}");
            }
            GExpr::Op1(Prim::WithRules, e) => {
                let _ = write!(out, "(with_rules {RULES} ");
                e.write(out);
                out.push(')');
            }
            GExpr::Op1(op, e) => {
                let name = if *op == Prim::Neg { "-" } else { op.symbol() };
                let _ = write!(out, "({name} ");
                e.write(out);
                out.push(')');
            }
            // A binary primitive named by a word is applied as a function
            // (`pow a b`, `hypot a b`); the others are infix.
            GExpr::Op2(op, a, b) if op.symbol().starts_with(|c: char| c.is_ascii_alphabetic()) => {
                let _ = write!(out, "({} ", op.symbol());
                a.write(out);
                out.push(' ');
                b.write(out);
                out.push(')');
            }
            GExpr::Op2(op, a, b) => {
                out.push('(');
                a.write(out);
                let _ = write!(out, " {} ", op.symbol());
                b.write(out);
                out.push(')');
            }
            GExpr::If(c, a, b) => {
                out.push_str("(if ");
                c.write(out);
                out.push_str(" then ");
                a.write(out);
                out.push_str(" else ");
                b.write(out);
                out.push(')');
            }
            GExpr::Index(a, i) => {
                // `a[i]` indexes only with no space before `[`; a
                // parenthesized array works as well as a variable.
                out.push('(');
                a.write(out);
                out.push('[');
                i.write(out);
                out.push_str("])");
            }
            GExpr::Loop(l) if l.op == Prim::While => write_while(l, out),
            GExpr::Deriv(d) => d.write(out, |e, out| e.write(out)),
            GExpr::Apply(a) => a.write(out),
            GExpr::Hist(op, d, v, k) => {
                match op {
                    Prim::Scatter => out.push_str("(scatter "),
                    _ => out.push_str("(reduce_by_index "),
                }
                d.write(out);
                match op {
                    Prim::HistAdd => out.push_str(" (+)"),
                    Prim::HistMul => out.push_str(" (*)"),
                    Prim::HistMin => out.push_str(" min"),
                    Prim::HistMax => out.push_str(" max"),
                    _ => {}
                }
                out.push_str(" (build (length ");
                v.write(out);
                let _ = write!(out, ") (fun hist_i -> hist_i / {k})) ");
                v.write(out);
                out.push(')');
            }
            GExpr::Loop(l) => {
                let _ = write!(out, "({} ", l.op.symbol());
                if l.op == Prim::Build {
                    l.args[0].write(out);
                    out.push(' ');
                }
                if let Some(op) = l.section() {
                    let _ = write!(out, "({})", op.symbol());
                } else {
                    if l.params.len() == 1 {
                        let _ = write!(out, "(fun {} -> ", l.params[0]);
                    } else {
                        let _ = write!(out, "(fun ({}) -> ", l.params.join(", "));
                    }
                    l.body.write(out);
                    out.push(')');
                }
                let rest = if l.op == Prim::Build {
                    &l.args[1..]
                } else {
                    &l.args[..]
                };
                for a in rest {
                    out.push(' ');
                    a.write(out);
                }
                out.push(')');
            }
        }
    }

    /// The construct's name in coverage tables.
    pub fn construct(&self) -> String {
        match self {
            GExpr::Const(_) => "const".to_string(),
            GExpr::Var(_) => "var".to_string(),
            GExpr::Let(..) => "let".to_string(),
            GExpr::LetTuple(..) => "let-tuple".to_string(),
            GExpr::Tuple(_) => "tuple".to_string(),
            GExpr::Proj(..) => "proj".to_string(),
            GExpr::Op1(Prim::Neg, _) => "neg".to_string(),
            GExpr::Op1(op, _) | GExpr::Op2(op, ..) => op.symbol().to_string(),
            GExpr::If(..) => "if".to_string(),
            GExpr::Index(..) => "index".to_string(),
            GExpr::Loop(l) => l.op.symbol().to_string(),
            GExpr::Hist(op, ..) => op.symbol().to_string(),
            GExpr::Deriv(d) => d.op.symbol().to_string(),
            GExpr::Apply(a) => match a.style {
                LamStyle::Direct => "lambda-applied",
                LamStyle::Bound => "lambda-bound",
                LamStyle::Passed => "lambda-passed",
                LamStyle::Twice => "lambda-twice",
                LamStyle::Branched => "lambda-branched",
            }
            .to_string(),
        }
    }

    /// Counts each construct (by name) into `counts`; returns the depth of
    /// nested array operations (NAO, Section 5.3: a builtin with a
    /// function argument counts one plus its body).
    pub fn count(&self, counts: &mut BTreeMap<String, u64>) -> u32 {
        syntax::stack::guard(|| self.count_node(counts))
    }

    fn count_node(&self, counts: &mut BTreeMap<String, u64>) -> u32 {
        *counts.entry(self.construct()).or_insert(0) += 1;
        if let GExpr::Deriv(d) = self {
            crate::deriv::count_nesting(d, counts);
        }
        if let GExpr::Loop(l) = self {
            if l.section().is_some() {
                *counts.entry("section".to_string()).or_insert(0) += 1;
            }
            let free = l.body.free_vars();
            if free.iter().any(|v| !l.params.contains(v)) {
                *counts
                    .entry(format!("{} (free vars)", l.op.symbol()))
                    .or_insert(0) += 1;
            }
            let args = l.args.iter().map(|a| a.count(counts)).max().unwrap_or(0);
            return args.max(1 + l.body.count(counts));
        }
        self.children()
            .iter()
            .map(|c| c.count(counts))
            .max()
            .unwrap_or(0)
    }
}

impl Program {
    /// The program text: `-- at` lines for the inputs (if given), then the
    /// definition.
    pub fn text(&self, inputs: Option<&[GVal]>) -> String {
        let mut out = String::new();
        if let Some(inputs) = inputs {
            for ((name, _), v) in self.params.iter().zip(inputs) {
                let _ = writeln!(out, "-- at {name} = {}", v.to_value());
            }
        }
        out.push_str(&self.definition("f"));
        out
    }

    /// The definition alone, named `name` (several programs in one module:
    /// the C backend's tests build them with one compile).
    pub fn definition(&self, name: &str) -> String {
        let mut out = format!("def {name}");
        for (name, ty) in &self.params {
            let _ = write!(out, " ({name} : {})", ty.text());
        }
        let _ = write!(out, " : {} =\n  ", self.ret.text());
        out.push_str(&self.body.text());
        out.push('\n');
        out
    }

    /// The definition in the printer's layout (`syntax::print::module` of
    /// the parsed text): how fixture files are written.
    pub fn printed(&self) -> String {
        let text = self.text(None);
        let file = syntax::SourceFile {
            name: "generated.ad".to_string(),
            text: text.clone(),
        };
        match syntax::parse(file) {
            Ok(m) => syntax::print::module(&m),
            Err(_) => text,
        }
    }

    /// The program as a compiled core-form module.
    pub fn compile(&self) -> Result<syntax::Module, syntax::Error> {
        syntax::compile(syntax::SourceFile {
            name: "generated.ad".to_string(),
            text: self.text(None),
        })
    }

    /// Inputs by parameter name, as the evaluator takes them.
    pub fn named_inputs(&self, inputs: &[GVal]) -> Vec<(String, semantics::Value)> {
        self.params
            .iter()
            .zip(inputs)
            .map(|((n, _), v)| (n.clone(), v.to_value()))
            .collect()
    }

    /// Counts the program's constructs into `counts` (also the types of
    /// its values: `array of arrays`, `array of tuples`) and returns its
    /// NAO.
    pub fn count(&self, counts: &mut BTreeMap<String, u64>) -> u32 {
        let mut env = self.params.clone();
        let mut shapes = Vec::new();
        for (_, t) in &self.params {
            shapes.push(t.clone());
        }
        collect_types(&self.body, &mut env, &mut shapes);
        for t in shapes {
            count_shapes(&t, counts);
        }
        self.body.count(counts)
    }

    /// Whether the body holds a derivative construct (`crate::deriv`).
    pub fn has_derivatives(&self) -> bool {
        crate::deriv::has_deriv(&self.body)
    }

    /// The fragments of the language the program lies in.
    pub fn fragment(&self) -> Fragment {
        let mut env = self.params.clone();
        Fragment {
            direct: self.params.iter().all(|(_, t)| t.is_ground_real())
                && self.ret.is_ground_real()
                && in_direct(&self.body, &mut env),
        }
    }
}

fn count_shapes(t: &GTy, counts: &mut BTreeMap<String, u64>) {
    if let GTy::Array(e, _) = t {
        let name = match **e {
            GTy::Array(..) => Some("array of arrays"),
            GTy::Tuple(_) => Some("array of tuples"),
            _ => None,
        };
        if let Some(name) = name {
            *counts.entry(name.to_string()).or_insert(0) += 1;
        }
    }
}

/// The types of the values bound in `e` (by `let` and by lambdas) and of
/// the loops' results.
fn collect_types(e: &GExpr, env: &mut Vec<(String, GTy)>, out: &mut Vec<GTy>) {
    syntax::stack::guard(|| collect_types_node(e, env, out))
}

fn collect_types_node(e: &GExpr, env: &mut Vec<(String, GTy)>, out: &mut Vec<GTy>) {
    let k = env.len();
    match e {
        GExpr::Let(x, v, b) => {
            collect_types(v, env, out);
            if let Some(t) = type_of(v, env) {
                out.push(t.clone());
                env.push((x.clone(), t));
            }
            collect_types(b, env, out);
        }
        GExpr::LetTuple(xs, v, b) => {
            collect_types(v, env, out);
            if let Some(GTy::Tuple(ts)) = type_of(v, env) {
                env.extend(xs.iter().cloned().zip(ts));
            }
            collect_types(b, env, out);
        }
        GExpr::Apply(a) => {
            collect_types(&a.arg, env, out);
            out.push(GTy::Real);
            env.push((a.x.clone(), GTy::Real));
            collect_types(&a.body, env, out);
        }
        GExpr::Loop(l) => {
            l.args.iter().for_each(|a| collect_types(a, env, out));
            if let Some(t) = type_of(e, env) {
                out.push(t);
            }
            if let Some(ps) = loop_params(l, env) {
                env.extend(l.params.iter().cloned().zip(ps));
                collect_types(&l.body, env, out);
            }
        }
        _ => e.children().iter().for_each(|c| collect_types(c, env, out)),
    }
    env.truncate(k);
}

/// A generated `while` loop ([`Loop`] with `params = [acc, k]`, `args =
/// [init, length A]` and, for a real state, a constant `c`):
/// `(while (fun accs -> let (acc, k) = accs in k < length A && acc < c)
/// (fun acct -> let (acc, k) = acct in (body, k + 1)) (init, 0)).1`.
/// The counter bounds the trip count by the length; the lambdas' own
/// parameters are named after `acc` with a suffix no generated name has.
fn write_while(l: &Loop, out: &mut String) {
    let (a, k) = (&l.params[0], &l.params[1]);
    let _ = write!(out, "((while (fun {a}s -> let ({a}, {k}) = {a}s in ({k} < ");
    l.args[1].write(out);
    out.push(')');
    if let Some(c) = l.args.get(2) {
        let _ = write!(out, " && ({a} < ");
        c.write(out);
        out.push(')');
    }
    let _ = write!(out, ") (fun {a}t -> let ({a}, {k}) = {a}t in (");
    l.body.write(out);
    let _ = write!(out, ", {k} + 1)) (");
    l.args[0].write(out);
    out.push_str(", 0)).1)");
}

fn in_direct(e: &GExpr, env: &mut Vec<(String, GTy)>) -> bool {
    syntax::stack::guard(|| in_direct_node(e, env))
}

fn in_direct_node(e: &GExpr, env: &mut Vec<(String, GTy)>) -> bool {
    let k = env.len();
    let ok = match e {
        // Indices are `Int` arrays, which the direct macro does not have.
        // Derivative constructs are expanded before any route; the direct
        // macro's fragment has none.
        // Nor lambdas outside the array builtins.
        GExpr::Index(..) | GExpr::Hist(..) | GExpr::Deriv(_) | GExpr::Apply(_) => false,
        // The direct macro has no Int values: no `length`, no conversions.
        GExpr::Op1(op, a) => {
            !matches!(op, Prim::Shift1L | Prim::Shift1R | Prim::Length)
                && !matches!(
                    syntax::derivatives::sig(*op),
                    Some(syntax::derivatives::Sig::IntToReal | syntax::derivatives::Sig::RealToInt)
                )
                && in_direct(a, env)
        }
        // Comparisons of reals (not of an index) and logic, in conditions.
        GExpr::Op2(Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne, a, b) => {
            type_of(a, env) == Some(GTy::Real) && in_direct(a, env) && in_direct(b, env)
        }
        GExpr::Let(x, v, b) => {
            let ok = in_direct(v, env);
            if let Some(t) = type_of(v, env) {
                env.push((x.clone(), t));
            }
            ok && in_direct(b, env)
        }
        GExpr::LetTuple(xs, v, b) => {
            let ok = in_direct(v, env);
            if let Some(GTy::Tuple(ts)) = type_of(v, env) {
                env.extend(xs.iter().cloned().zip(ts));
            }
            ok && in_direct(b, env)
        }
        GExpr::Loop(l) => {
            let op_ok = match l.op {
                Prim::Map | Prim::Map2 => true,
                Prim::Reduce | Prim::Foldl => type_of(&l.args[0], env) == Some(GTy::Real),
                _ => false,
            };
            let args_ok = l.args.iter().all(|a| in_direct(a, env));
            if let Some(ps) = loop_params(l, env) {
                env.extend(l.params.iter().cloned().zip(ps));
            }
            op_ok && args_ok && in_direct(&l.body, env)
        }
        _ => e.children().iter().all(|c| in_direct(c, env)),
    };
    env.truncate(k);
    ok
}

/// The element type of an array type.
fn elem(t: &GTy) -> Option<(GTy, Size)> {
    match t {
        GTy::Array(e, s) => Some(((**e).clone(), *s)),
        _ => None,
    }
}

/// The types of a loop's lambda parameters.
pub fn loop_params(l: &Loop, env: &mut Vec<(String, GTy)>) -> Option<Vec<GTy>> {
    let arg = |i: usize, env: &mut Vec<(String, GTy)>| type_of(&l.args[i], env);
    Some(match l.op {
        Prim::Map => vec![elem(&arg(0, env)?)?.0],
        Prim::Map2 => vec![elem(&arg(0, env)?)?.0, elem(&arg(1, env)?)?.0],
        Prim::Reduce | Prim::Foldl | Prim::Scanl => vec![arg(0, env)?, elem(&arg(1, env)?)?.0],
        Prim::Scanr => vec![elem(&arg(1, env)?)?.0, arg(0, env)?],
        Prim::Build => match arg(0, env)? {
            GTy::Length(s) => vec![GTy::Index(s)],
            _ => return None,
        },
        Prim::Ifold | Prim::While => match arg(1, env)? {
            GTy::Length(s) => vec![arg(0, env)?, GTy::Index(s)],
            _ => return None,
        },
        _ => return None,
    })
}

/// The type of `e` in `env` (`None` if it is not well typed: the
/// generator never makes such a term, the shrinker may).
pub fn type_of(e: &GExpr, env: &mut Vec<(String, GTy)>) -> Option<GTy> {
    let k = env.len();
    let t = syntax::stack::guard(|| type_in(e, env));
    env.truncate(k);
    t
}

fn type_in(e: &GExpr, env: &mut Vec<(String, GTy)>) -> Option<GTy> {
    match e {
        GExpr::Const(_) => Some(GTy::Real),
        GExpr::Var(n) => env
            .iter()
            .rev()
            .find(|(m, _)| m == n)
            .map(|(_, t)| t.clone()),
        GExpr::Let(x, v, b) => {
            let t = type_of(v, env)?;
            env.push((x.clone(), t));
            type_of(b, env)
        }
        GExpr::LetTuple(xs, v, b) => match type_of(v, env)? {
            GTy::Tuple(ts) if ts.len() == xs.len() => {
                env.extend(xs.iter().cloned().zip(ts));
                type_of(b, env)
            }
            _ => None,
        },
        GExpr::Apply(a) => {
            env.push((a.x.clone(), GTy::Real));
            type_of(&a.body, env)
        }
        GExpr::Tuple(items) => items
            .iter()
            .map(|i| type_of(i, env))
            .collect::<Option<Vec<_>>>()
            .map(GTy::Tuple),
        GExpr::Proj(a, i) => match type_of(a, env)? {
            GTy::Tuple(ts) => ts.get(i.wrapping_sub(1)).cloned(),
            _ => None,
        },
        GExpr::Op1(op, a) => {
            let ta = type_of(a, env)?;
            match op {
                Prim::Not => Some(GTy::Bool),
                Prim::Shift1L | Prim::Shift1R => {
                    elem(&ta).map(|(t, s)| GTy::Array(Box::new(t), s.plus(-1)))
                }
                Prim::Length => elem(&ta).map(|(_, s)| GTy::Length(s)),
                // An `Int` counting a loop (`Features::counts`).
                Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc => {
                    Some(GTy::Length(Size::DYNAMIC))
                }
                _ => Some(GTy::Real),
            }
        }
        GExpr::Op2(op, _, _) => Some(match op {
            Prim::Lt
            | Prim::Le
            | Prim::Gt
            | Prim::Ge
            | Prim::Eq
            | Prim::Ne
            | Prim::And
            | Prim::Or => GTy::Bool,
            _ => GTy::Real,
        }),
        GExpr::If(_, a, _) => type_of(a, env),
        GExpr::Index(a, _) => elem(&type_of(a, env)?).map(|(t, _)| t),
        GExpr::Hist(_, d, _, _) => type_of(d, env),
        GExpr::Deriv(d) => Some(d.result_ty()),
        GExpr::Loop(l) => {
            let ps = loop_params(l, env)?;
            let arg = |i: usize, env: &mut Vec<(String, GTy)>| type_of(&l.args[i], env);
            let size = match l.op {
                Prim::Map | Prim::Map2 => elem(&arg(0, env)?)?.1,
                Prim::Scanl | Prim::Scanr => elem(&arg(1, env)?)?.1.plus(1),
                Prim::Build => match arg(0, env)? {
                    GTy::Length(s) => s,
                    _ => return None,
                },
                _ => Size::of(0),
            };
            env.extend(l.params.iter().cloned().zip(ps));
            let body = type_of(&l.body, env)?;
            match l.op {
                Prim::Map | Prim::Map2 | Prim::Build | Prim::Scanl | Prim::Scanr => {
                    Some(GTy::Array(Box::new(body), size))
                }
                _ => Some(body),
            }
        }
    }
}
