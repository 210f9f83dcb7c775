//! The printer: a [`Module`] (surface or core form) back to program text.
//!
//! The output parses back to the same module, spans aside (the round-trip
//! tests check it), with two intended exceptions: a `Real` with an integral
//! value prints without a point and reads back as an `Int` (type inference
//! turns it back into a real), and core-only shapes (a call with no
//! arguments) print readably but not reversibly.
//!
//! Layout rules:
//! - parentheses only where fixity requires them (`Prim::fixity`; prefix
//!   `-` binds tighter than `*`, application tighter than that, postfix
//!   `.i` and `a[i]` tightest); `let`, `if` and `fun` are parenthesized
//!   unless nothing follows them up to the end of the enclosing delimited
//!   position ("tail position");
//! - a definition is `def name params : T =` and its body on the next line,
//!   indented by two spaces; a chain of `let`s in a body puts one
//!   `let ... in` per line, and so does a `let` chain that is the body of a
//!   `fun`, indented one step further (up to a fixed depth); everything
//!   else stays on one line;
//! - reals print in the shortest text that reads back to the same f64
//!   ([`real`]); negative constants print `(-2)`, non-finite ones
//!   `(1 / 0)`, `(-1 / 0)`, `(0 / 0)`;
//! - output is deterministic and uses `\n` newlines.
//!
//! A malformed module (an id out of range, or a child id not smaller than
//! its parent's, which could form a cycle) prints `<invalid eN>` in place of
//! the bad node instead of panicking or looping.

use std::fmt::{self, Write as _};

use crate::ir::{Def, Expr, ExprId, Fixity, Module, Name, Param, Pat, Prim, Size, Ty};
use crate::stack;

/// The text of a whole module: its definitions, separated by blank lines.
pub fn module(m: &Module) -> String {
    let mut p = Printer::new(m);
    for (i, def) in m.defs.iter().enumerate() {
        if i > 0 {
            p.out.push('\n');
        }
        let _ = write!(p.out, "def {}", def.name);
        for param in &def.params {
            p.out.push(' ');
            match &param.ty {
                Some(t) => {
                    let _ = write!(p.out, "({} : {t})", param.name);
                }
                None => p.out.push_str(param.name.as_str()),
            }
        }
        if let Some(t) = &def.ret {
            let _ = write!(p.out, " : {t}");
        }
        p.out.push_str(" =\n  ");
        p.indent = 1;
        match rules_sugar(m, def) {
            Some((body, rules)) => {
                p.block(body, None, true);
                for (kind, rule) in rules {
                    let Some(Expr::Lambda { params, body }) = p.node(rule, None) else {
                        continue;
                    };
                    let _ = write!(p.out, "\n  with {kind} ");
                    p.lambda_params(params);
                    if matches!(p.node(*body, Some(rule)), Some(Expr::Let { .. })) {
                        // A `let` chain goes on its own lines, as in a lambda.
                        p.out.push_str(" ->");
                        p.indent = 2;
                        p.newline();
                        p.block(*body, Some(rule), true);
                        p.indent = 1;
                    } else {
                        p.out.push_str(" -> ");
                        p.expr(*body, Some(rule), OPEN, true);
                    }
                }
            }
            None => p.block(def.body, None, true),
        }
        p.out.push('\n');
    }
    p.out
}

/// A definition written `def f params = e with jvp .. with vjp ..` (the
/// parser's `with_rules (fun params -> e) jvp vjp point` with the point
/// the parameters in order): its body `e` and its rules, so the printer
/// writes it back as the user wrote it.
fn rules_sugar(m: &Module, def: &Def) -> Option<(ExprId, Vec<(&'static str, ExprId)>)> {
    // Read as `Printer::node` does: a malformed module (an id out of
    // range, a child not before its parent) is no sugar, not a panic.
    let node = |id: ExprId, parent: ExprId| {
        if id < parent {
            m.exprs.get(id.index())
        } else {
            None
        }
    };
    let Some(Expr::Prim {
        op: Prim::WithRules,
        args,
    }) = m.exprs.get(def.body.index())
    else {
        return None;
    };
    let [f, jvp, vjp, point] = args.as_slice() else {
        return None;
    };
    let Some(Expr::Lambda { params, body }) = node(*f, def.body) else {
        return None;
    };
    let same_params = params.len() == def.params.len()
        && params
            .iter()
            .zip(&def.params)
            .all(|(a, b)| a.name == b.name && a.ty == b.ty);
    let var = |id: ExprId, parent: ExprId, name: &Name| matches!(node(id, parent), Some(Expr::Var(x)) if x == name);
    let point_is_params = match (node(*point, def.body), def.params.as_slice()) {
        (_, [one]) => var(*point, def.body, &one.name),
        (Some(Expr::Tuple(items)), ps) => {
            items.len() == ps.len() && items.iter().zip(ps).all(|(i, p)| var(*i, *point, &p.name))
        }
        _ => false,
    };
    if !same_params || !point_is_params {
        return None;
    }
    let mut rules = Vec::new();
    for (kind, rule) in [("jvp", *jvp), ("vjp", *vjp)] {
        match node(rule, def.body) {
            Some(Expr::Lambda { .. }) => rules.push((kind, rule)),
            Some(Expr::Tuple(items)) if items.is_empty() => {}
            _ => return None,
        }
    }
    if rules.is_empty() {
        return None;
    }
    Some((*body, rules))
}

/// The text of one expression, laid out as a definition's body at
/// indentation zero (a `let` chain takes one line per `let`).
pub fn expr(m: &Module, id: ExprId) -> String {
    let mut p = Printer::new(m);
    p.block(id, None, true);
    p.out
}

/// The text of a type.
pub fn ty(t: &Ty) -> String {
    let mut out = String::new();
    ty_into(&mut out, t, TyCtx::Top);
    out
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&ty(self))
    }
}

/// A compact literal as the nested array it stands for, `[[1.5, 2], [3,
/// 4]]`, which the lexer reads back to the same node: its numbers are
/// finite (the verifier's rule), and if none prints with a point or an
/// exponent the first gets `.0`, so that the literal is not read as one of
/// integers.
pub fn reals(literal: &crate::Reals, out: &mut String) {
    let shape = &literal.shape;
    let (mut any_real, mut first_end) = (false, out.len());
    for (k, &x) in literal.data.iter().enumerate() {
        // `[` for every level that starts at element k, then `, ` after
        // the previous element at the level that continues.
        let mut stride = 1usize;
        let mut opens = 0;
        for &n in shape.iter().rev() {
            stride *= n as usize;
            if k % stride != 0 {
                break;
            }
            opens += 1;
        }
        if k > 0 {
            out.push_str(", ");
        }
        (0..opens).for_each(|_| out.push('['));
        let start = out.len();
        out.push_str(&real(x));
        if k == 0 {
            first_end = out.len();
        }
        any_real |= out[start..].contains(['.', 'e']);
        let mut stride = 1usize;
        for &n in shape.iter().rev() {
            stride *= n as usize;
            if (k + 1) % stride != 0 {
                break;
            }
            out.push(']');
        }
    }
    if !any_real {
        out.insert_str(first_end, ".0");
    }
}

/// The shortest text that reads back as exactly `x`: `18`, `0.1`, `1e-300`,
/// `-2.5`. Of the positional and the scientific layout of the shortest
/// round-trip digits, the shorter is taken (the positional one on a tie).
/// An integral value has no point (`18`, not `18.0`), unless its digits are
/// too many for an `Int` literal (`9.223372036854776e18`). Non-finite values,
/// which have no literal, print as the divisions that make them:
/// `(1 / 0)`, `(-1 / 0)`, `(0 / 0)`.
pub fn real(x: f64) -> String {
    if x.is_nan() {
        return "(0 / 0)".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "(1 / 0)" } else { "(-1 / 0)" }.to_string();
    }
    // `{:e}` gives the shortest digits that round-trip: `1.8e1`, `-1e-300`.
    let sci = format!("{x:e}");
    let (sign, unsigned) = match sci.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", sci.as_str()),
    };
    let (mantissa, exp) = unsigned
        .split_once('e')
        .expect("invariant: `{:e}` of a finite f64 has an exponent");
    let exp: i64 = exp
        .parse()
        .expect("invariant: `{:e}` writes a decimal exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i64;
    let positional = if exp >= 0 {
        if n <= exp + 1 {
            format!("{digits}{}", "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at((exp + 1) as usize);
            format!("{int}.{frac}")
        }
    } else {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    };
    let scientific = format!("{mantissa}e{exp}");
    // Digits alone read back as an `Int`, which must fit in an i64.
    let fits = !positional.bytes().all(|b| b.is_ascii_digit()) || positional.parse::<i64>().is_ok();
    let body = if scientific.len() < positional.len() || !fits {
        scientific
    } else {
        positional
    };
    format!("{sign}{body}")
}

// ---- Expressions ------------------------------------------------------

/// Binding levels, loosest first; infix operators use their binding
/// powers 1..=5 from `Prim::fixity`.
const OPEN: u8 = 0;
const PREFIX: u8 = 6;
const APP: u8 = 7;
const POSTFIX: u8 = 8;
const ATOM: u8 = 9;

/// How many levels of indentation nested `let` chains get; deeper ones
/// stay on one line, so the output grows linearly with the program.
const MAX_INDENT: usize = 12;

struct Printer<'a> {
    m: &'a Module,
    out: String,
    /// The indentation of the current line, in steps of two spaces.
    indent: usize,
}

impl<'a> Printer<'a> {
    fn new(m: &'a Module) -> Printer<'a> {
        Printer {
            m,
            out: String::new(),
            indent: 0,
        }
    }

    /// The node behind `id`, if `id` is a valid child of `parent`.
    fn node(&self, id: ExprId, parent: Option<ExprId>) -> Option<&'a Expr> {
        let m: &'a Module = self.m;
        let in_order = parent.is_none_or(|p| id < p);
        if in_order && id.index() < m.exprs.len() {
            Some(&m.exprs[id.index()])
        } else {
            None
        }
    }

    /// Prints `id` in a body position: a `let` chain one binding per line
    /// at the current indentation, iteratively; `tail` as in `expr`.
    fn block(&mut self, mut id: ExprId, mut parent: Option<ExprId>, tail: bool) {
        loop {
            match self.node(id, parent) {
                Some(Expr::Let {
                    pat,
                    ty,
                    value,
                    body,
                }) => {
                    self.let_header(pat, ty.as_ref());
                    self.expr(*value, Some(id), OPEN, true);
                    self.out.push_str(" in");
                    self.newline();
                    parent = Some(id);
                    id = *body;
                }
                _ => return self.expr(id, parent, OPEN, tail),
            }
        }
    }

    /// A line break followed by the current indentation.
    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn let_header(&mut self, pat: &Pat, ty: Option<&Ty>) {
        self.out.push_str("let ");
        match pat {
            Pat::Var(n) => self.out.push_str(n.as_str()),
            Pat::Tuple(names) => {
                self.out.push('(');
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(n.as_str());
                }
                self.out.push(')');
            }
        }
        if let Some(t) = ty {
            let _ = write!(self.out, " : {t}");
        }
        self.out.push_str(" = ");
    }

    /// How tightly the printed form of `e` binds.
    fn level(e: &Expr) -> u8 {
        match e {
            Expr::Let { .. } | Expr::If { .. } | Expr::Lambda { .. } => OPEN,
            Expr::Proj { .. } | Expr::Index { .. } => POSTFIX,
            Expr::App { .. } => APP,
            Expr::Prim { op, args } => match (op.fixity(), args.len()) {
                (Fixity::Infix(bp), 2) => bp,
                (Fixity::Prefix, 1) => PREFIX,
                _ => APP,
            },
            Expr::Var(_)
            | Expr::Real(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Section(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Reals(_) => ATOM,
        }
    }

    /// Prints `id` where the context binds at `ctx`; `tail` says whether
    /// nothing follows up to the end of the enclosing delimited position.
    fn expr(&mut self, id: ExprId, parent: Option<ExprId>, ctx: u8, tail: bool) {
        stack::guard(|| {
            let Some(e) = self.node(id, parent) else {
                let _ = write!(self.out, "<invalid {id}>");
                return;
            };
            if let Some(text) = self.section_of(e) {
                // The paper's notation: `map2 (*) A B`, `map sin A`.
                self.out.push_str(&text);
                return;
            }
            let level = Self::level(e);
            let parens = if level == OPEN {
                ctx > PREFIX || !tail
            } else {
                level < ctx
            };
            if parens {
                self.out.push('(');
            }
            self.node_text(id, e, tail || parens);
            if parens {
                self.out.push(')');
            }
        })
    }

    /// The text of `e` as a bare operator when it is the eta-expansion of
    /// one: `fun (a, b) -> a op b` is the section `(op)` for an infix
    /// operator, `fun (x) -> sin x` is `sin` for a named builtin. Both read
    /// back (elaboration eta-expands them again).
    fn section_of(&self, e: &Expr) -> Option<String> {
        let Expr::Lambda { params, body } = e else {
            return None;
        };
        let Some(Expr::Prim { op, args }) = self.m.exprs.get(body.index()) else {
            return None;
        };
        let is_param = |(id, p): (&ExprId, &Param)| matches!(self.m.exprs.get(id.index()), Some(Expr::Var(v)) if *v == p.name);
        let distinct = params
            .iter()
            .enumerate()
            .all(|(i, p)| params[..i].iter().all(|q| q.name != p.name));
        if args.len() != params.len() || !distinct || !args.iter().zip(params).all(is_param) {
            return None;
        }
        match op.fixity() {
            Fixity::Infix(_) => Some(format!("({})", op.symbol())),
            Fixity::Named => Some(op.symbol().to_string()),
            Fixity::Prefix => None,
        }
    }

    fn list(&mut self, items: &[ExprId], parent: ExprId) {
        for (i, &item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(item, Some(parent), OPEN, true);
        }
    }

    /// The text of node `id` itself, without surrounding parentheses.
    fn node_text(&mut self, id: ExprId, e: &Expr, tail: bool) {
        let me = Some(id);
        match e {
            Expr::Var(n) => self.out.push_str(n.as_str()),
            Expr::Real(x) => {
                if x.is_finite() && x.is_sign_negative() {
                    let _ = write!(self.out, "({})", real(*x));
                } else {
                    self.out.push_str(&real(*x));
                }
            }
            Expr::Int(n) => match *n {
                i64::MIN => self.out.push_str("(-9223372036854775807 - 1)"),
                n if n < 0 => {
                    let _ = write!(self.out, "({n})");
                }
                n => {
                    let _ = write!(self.out, "{n}");
                }
            },
            Expr::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Expr::Section(op) => {
                let _ = write!(self.out, "({})", op.symbol());
            }
            Expr::Tuple(items) => {
                self.out.push('(');
                self.list(items, id);
                self.out.push(')');
            }
            Expr::Array(items) => {
                self.out.push('[');
                self.list(items, id);
                self.out.push(']');
            }
            Expr::Reals(literal) => reals(literal, &mut self.out),
            Expr::Let {
                pat,
                ty,
                value,
                body,
            } => {
                self.let_header(pat, ty.as_ref());
                self.expr(*value, me, OPEN, true);
                self.out.push_str(" in ");
                self.expr(*body, me, OPEN, tail);
            }
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.out.push_str("if ");
                self.expr(*cond, me, OPEN, true);
                self.out.push_str(" then ");
                self.expr(*then_branch, me, OPEN, true);
                self.out.push_str(" else ");
                self.expr(*else_branch, me, OPEN, tail);
            }
            Expr::Lambda { params, body } => {
                self.out.push_str("fun ");
                self.lambda_params(params);
                let chain = matches!(self.node(*body, me), Some(Expr::Let { .. }));
                if chain && self.indent < MAX_INDENT {
                    // A body that is a `let` chain goes on its own lines.
                    self.out.push_str(" ->");
                    self.indent += 1;
                    self.newline();
                    self.block(*body, me, tail);
                    self.indent -= 1;
                } else {
                    self.out.push_str(" -> ");
                    self.expr(*body, me, OPEN, tail);
                }
            }
            Expr::Proj { tuple, index } => {
                // `3.1` would read back as a real: parenthesize numbers.
                let number = matches!(self.node(*tuple, me), Some(Expr::Int(_) | Expr::Real(_)));
                if number {
                    self.out.push('(');
                }
                self.expr(*tuple, me, POSTFIX, false);
                if number {
                    self.out.push(')');
                }
                let _ = write!(self.out, ".{index}");
            }
            Expr::Index { array, index } => {
                self.expr(*array, me, POSTFIX, false);
                self.out.push('[');
                self.expr(*index, me, OPEN, true);
                self.out.push(']');
            }
            Expr::App { func, args } => {
                self.expr(*func, me, POSTFIX, false);
                if args.is_empty() {
                    self.out.push_str(" ()");
                }
                for &arg in args {
                    self.out.push(' ');
                    self.expr(arg, me, POSTFIX, false);
                }
            }
            Expr::Prim { op, args } => self.prim(id, *op, args, tail),
        }
    }

    fn prim(&mut self, id: ExprId, op: Prim, args: &[ExprId], tail: bool) {
        let me = Some(id);
        match (op.fixity(), args) {
            (Fixity::Infix(bp), &[lhs, rhs]) => {
                let lhs_ctx = if bp == 3 { bp + 1 } else { bp };
                self.expr(lhs, me, lhs_ctx, false);
                let _ = write!(self.out, " {} ", op.symbol());
                self.expr(rhs, me, bp + 1, tail);
            }
            (Fixity::Prefix, &[operand]) => {
                self.out.push('-');
                // `--x` would start a comment: parenthesize a nested minus.
                let nested_minus = matches!(
                    self.node(operand, me),
                    Some(Expr::Prim { op: Prim::Neg, args }) if args.len() == 1
                );
                if nested_minus {
                    self.out.push('(');
                }
                self.expr(operand, me, PREFIX, tail || nested_minus);
                if nested_minus {
                    self.out.push(')');
                }
            }
            (Fixity::Named, _) => {
                self.out.push_str(op.symbol());
                for &arg in args {
                    self.out.push(' ');
                    self.expr(arg, me, POSTFIX, false);
                }
            }
            // An operator with the wrong number of arguments (malformed):
            // print it as its section applied to them.
            (_, _) => {
                let _ = write!(self.out, "({})", op.symbol());
                for &arg in args {
                    self.out.push(' ');
                    self.expr(arg, me, POSTFIX, false);
                }
            }
        }
    }

    fn lambda_params(&mut self, params: &[Param]) {
        match params {
            [] => self.out.push_str("()"),
            [Param { name, ty: None, .. }] => self.out.push_str(name.as_str()),
            _ => {
                self.out.push('(');
                for (i, param) in params.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(param.name.as_str());
                    if let Some(t) = &param.ty {
                        let _ = write!(self.out, " : {t}");
                    }
                }
                self.out.push(')');
            }
        }
    }
}

// ---- Types ------------------------------------------------------------

/// Where a type is printed: at the top (anything goes), as the single
/// parameter of a function type, or as an array's element.
#[derive(Clone, Copy, PartialEq)]
enum TyCtx {
    Top,
    Param,
    Elem,
}

fn ty_into(out: &mut String, t: &Ty, ctx: TyCtx) {
    stack::guard(|| match t {
        Ty::Real => out.push('R'),
        Ty::Int => out.push_str("Int"),
        Ty::Bool => out.push_str("Bool"),
        Ty::Array(size, elem) => {
            out.push('[');
            match size {
                Size::Lit(n) => {
                    let _ = write!(out, "{n}");
                }
                Size::Var(n, 0) => out.push_str(n.as_str()),
                Size::Var(n, k) if *k > 0 => {
                    let _ = write!(out, "{n}+{k}");
                }
                Size::Var(n, k) => {
                    let _ = write!(out, "{n}-{}", k.unsigned_abs());
                }
                Size::Dyn => out.push('_'),
            }
            out.push(']');
            ty_into(out, elem, TyCtx::Elem);
        }
        Ty::Tuple(items) => ty_list(out, items),
        Ty::Func(params, ret) => {
            let parens = ctx != TyCtx::Top;
            if parens {
                out.push('(');
            }
            match params.as_slice() {
                // `((R, R)) -> R` takes one tuple; `(R, R) -> R` takes two.
                [one @ Ty::Tuple(_)] => {
                    out.push('(');
                    ty_into(out, one, TyCtx::Top);
                    out.push(')');
                }
                [one] => ty_into(out, one, TyCtx::Param),
                _ => ty_list(out, params),
            }
            out.push_str(" -> ");
            ty_into(out, ret, TyCtx::Top);
            if parens {
                out.push(')');
            }
        }
    })
}

fn ty_list(out: &mut String, items: &[Ty]) {
    out.push('(');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        ty_into(out, item, TyCtx::Top);
    }
    out.push(')');
}
