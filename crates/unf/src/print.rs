//! The printer of both UNF languages, in the paper's notation: `;` for
//! sequencing (`;~` when the right operand is a weakening), `<e, e>` for
//! term pairing, `∘` for internal composition, `J^T p` for transposed
//! Jacobians, indices as subscripts `var_{T;i}`, `proj_{T1;T2;T3}`, and
//! `F p` for the paper's `F(p, J^T p)` stored as one node (`Term::Fused`).
//!
//! Contexts of at most [`INLINE`] entries are spelt out (`R, [n]R`); longer
//! ones are printed by name (`Γ12`) and defined once in a legend at the top
//! (`Γ12 = Γ9, R`), so the output stays linear in the size of the module.
//! `map`/`reduce` show the Source parameter names and their body in UNF.

use crate::ir::{CtxId, Fun, Kind, Module, Op, Prim, Term, TermId, TyId, UTy};
use std::collections::BTreeSet;
use std::fmt::Write;
use syntax::stack::guard;
use syntax::{Expr, Size, Ty};

/// Contexts up to this length are printed in full.
pub const INLINE: usize = 6;

/// The module in the paper's notation.
pub fn print(m: &Module) -> String {
    // In Target UNF, the result type of the input's continuation is ρ.
    let rho = match m.ctxs.get(m.input.index()) {
        Some(crate::ir::Ctx::Snoc(_, k)) => match m.tys.get(k.index()) {
            Some(UTy::Cont(_, ret)) => Some(*ret),
            _ => None,
        },
        _ => None,
    };
    let mut p = Printer {
        m,
        named: BTreeSet::new(),
        rho,
    };
    let mut body = String::new();
    let mut items = Vec::new();
    flatten_seq(m, m.root, &mut items);
    for (i, (t, weak)) in items.iter().enumerate() {
        if i > 0 {
            body.push_str(if *weak { " ;~\n" } else { " ;\n" });
        }
        body.push_str("  ");
        p.term(&mut body, *t, false);
    }
    body.push('\n');
    let mut head = String::new();
    let kind = match m.kind {
        Kind::Source => "source-unf",
        Kind::Target => "target-unf",
    };
    let _ = writeln!(head, "-- {kind} of `{}`", m.entry);
    let input = p.ctx(m.input);
    let output = p.ctx(m.output);
    let _ = writeln!(head, "-- {input} ⊢ e : {output}");
    if m.kind == Kind::Target {
        let names: Vec<String> = m
            .wrt
            .iter()
            .map(|&w| {
                m.entry_def()
                    .and_then(|d| d.params.get(w as usize - 1))
                    .map(|p| p.name.to_string())
                    .unwrap_or_else(|| format!("#{w}"))
            })
            .collect();
        let _ = writeln!(head, "-- ρ: gradient with respect to {}", names.join(", "));
    }
    // The legend: every named context, with the contexts its definition
    // names in turn.
    let mut done = BTreeSet::new();
    let mut legend = Vec::new();
    while let Some(&c) = p.named.iter().find(|c| !done.contains(*c)) {
        done.insert(c);
        if let Some(crate::ir::Ctx::Snoc(parent, ty)) = m.ctxs.get(c.index()) {
            let ps = p.ctx(*parent);
            let ts = p.ty(*ty);
            legend.push((c, format!("{c} = {ps}, {ts}")));
        }
    }
    legend.sort();
    for (_, line) in legend {
        let _ = writeln!(head, "--   {line}");
    }
    head + &body
}

/// The length of a context of the module's table (0 if it does not exist).
fn m_len(m: &Module, c: CtxId) -> usize {
    let mut n = 0;
    let mut cur = c;
    while let Some(crate::ir::Ctx::Snoc(p, _)) = m.ctxs.get(cur.index()) {
        n += 1;
        cur = *p;
    }
    n
}

fn flatten_seq(m: &Module, t: TermId, out: &mut Vec<(TermId, bool)>) {
    // Iterative: a long program is a deep left- or right-nested sequence.
    let mut stack = vec![(t, false)];
    while let Some((t, weak)) = stack.pop() {
        match m.term(t) {
            Term::Seq(first, then) => {
                stack.push((*then, false));
                stack.push((*first, weak));
            }
            Term::Weak(first, then) => {
                stack.push((*then, true));
                stack.push((*first, weak));
            }
            _ => out.push((t, weak)),
        }
    }
}

struct Printer<'a> {
    m: &'a Module,
    named: BTreeSet<CtxId>,
    rho: Option<TyId>,
}

impl Printer<'_> {
    fn ctx(&mut self, c: CtxId) -> String {
        let mut entries = Vec::new();
        let mut cur = c;
        while let Some(crate::ir::Ctx::Snoc(p, t)) = self.m.ctxs.get(cur.index()) {
            if entries.len() == INLINE {
                self.named.insert(c);
                return format!("{c}");
            }
            entries.push(*t);
            cur = *p;
        }
        if entries.is_empty() {
            return "[]".to_string();
        }
        entries.reverse();
        entries
            .iter()
            .map(|&t| self.ty(t))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn ty(&mut self, t: TyId) -> String {
        match self.m.tys.get(t.index()) {
            Some(UTy::Ground(ty)) => ground(ty),
            Some(UTy::Cont(arg, ret)) => {
                let a = self.ctx_product(*arg);
                let r = if Some(*ret) == self.rho {
                    "ρ".to_string()
                } else {
                    self.ty(*ret)
                };
                format!("({a} → {r})")
            }
            None => format!("{t}?"),
        }
    }

    /// A context as the product type `underline(T)`.
    fn ctx_product(&mut self, c: CtxId) -> String {
        let s = self.ctx(c);
        if s.starts_with('Γ') {
            s
        } else if s == "[]" {
            "()".to_string()
        } else {
            s.replace(", ", "×")
        }
    }

    fn term(&mut self, out: &mut String, t: TermId, paren_seq: bool) {
        guard(|| self.term_inner(out, t, paren_seq))
    }

    fn term_inner(&mut self, out: &mut String, t: TermId, paren_seq: bool) {
        let m = self.m;
        match m.term(t) {
            Term::Prim(p) => self.prim(out, p, false),
            Term::Jt(p) => self.prim(out, p, true),
            Term::Fused(p, _) => {
                out.push_str("F ");
                self.prim(out, p, false);
            }
            Term::Seq(..) | Term::Weak(..) => {
                let mut items = Vec::new();
                flatten_seq(m, t, &mut items);
                if paren_seq {
                    out.push('(');
                }
                for (i, (it, weak)) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(if *weak { " ;~ " } else { " ; " });
                    }
                    self.term(out, *it, true);
                }
                if paren_seq {
                    out.push(')');
                }
            }
            Term::Tuple(a, b) => {
                out.push('<');
                self.term(out, *a, false);
                out.push_str(", ");
                self.term(out, *b, false);
                out.push('>');
            }
            Term::Compose(a, b) => {
                self.term(out, *a, true);
                out.push_str(" ∘ ");
                self.term(out, *b, true);
            }
        }
    }

    fn prim(&mut self, out: &mut String, p: &Prim, jt: bool) {
        if jt {
            out.push_str("J^T ");
        }
        match p {
            Prim::Var(ctx, index) => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "var_{{{c};{index}}}");
            }
            Prim::Op(ctx, op) => {
                let c = self.ctx(*ctx);
                match op {
                    Op::Const(x) => {
                        let _ = write!(out, "{}_{{{c};0}}", real(*x));
                    }
                    Op::Reals { node, .. } => {
                        // The numbers in full, as the Source prints them; a
                        // node that is not a literal (an unverified module)
                        // by its id.
                        match self.m.source.exprs.get(node.index()) {
                            Some(Expr::Reals(literal)) if literal.is_well_formed() => {
                                syntax::print::reals(literal, out)
                            }
                            _ => {
                                let _ = write!(out, "reals({node})");
                            }
                        }
                        let _ = write!(out, "_{{{c};0}}");
                    }
                    Op::Unary(o) => {
                        let _ = write!(out, "{}_{{{c};1}}", o.symbol());
                    }
                    Op::Binary(o) => {
                        let _ = write!(out, "({})_{{{c};2}}", o.symbol());
                    }
                    Op::Proj { index, tuple } => {
                        let tt = self.ty(*tuple);
                        let _ = write!(out, "π{index}_{{{c};{tt}}}");
                    }
                    Op::Int(k) => {
                        let _ = write!(out, "{}_{{{c};0}}", real(*k as f64));
                    }
                    Op::Bool(b) => {
                        let _ = write!(out, "{b}_{{{c};0}}");
                    }
                    Op::Builtin { op, args, .. } => {
                        let n = m_len(self.m, *args);
                        let sym = op.symbol();
                        if sym.chars().all(|ch| ch.is_ascii_alphanumeric()) {
                            let _ = write!(out, "{sym}_{{{c};{n}}}");
                        } else {
                            let _ = write!(out, "({sym})_{{{c};{n}}}");
                        }
                    }
                    Op::Index { array } => {
                        let tt = self.ty(*array);
                        let _ = write!(out, "index_{{{c};{tt}}}");
                    }
                }
            }
            Prim::Pair(ctx, ty) => {
                let c = self.ctx(*ctx);
                let tt = self.ty(*ty);
                let _ = write!(out, "pair_{{{c};{tt}}}");
            }
            Prim::Proj(keep, drop, rest) => {
                let (a, b, c) = (self.ctx(*keep), self.ctx(*drop), self.ctx(*rest));
                let _ = write!(out, "proj_{{{a};{b};{c}}}");
            }
            Prim::Map { ctx, fun, .. } => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "{}_{{{c}; ", p.name());
                self.fun(out, fun);
                out.push('}');
            }
            Prim::Reduce { ctx, fun, init, .. } => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "reduce_{{{c}; ");
                self.fun(out, fun);
                out.push_str("; ");
                self.term(out, *init, true);
                out.push('}');
            }
            Prim::Array { ctx, ty, .. } => {
                let c = self.ctx(*ctx);
                let tt = self.ty(*ty);
                let _ = write!(out, "array_{{{c};{tt}}}");
            }
            Prim::Custom { ctx, arg, .. } => {
                let c = self.ctx(*ctx);
                let tt = self.ty(*arg);
                let _ = write!(out, "custom_{{{c};{tt}}}");
            }
            Prim::If {
                ctx,
                then_fun,
                else_fun,
                ..
            } => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "if_{{{c}; ");
                self.fun(out, then_fun);
                out.push_str("; ");
                self.fun(out, else_fun);
                out.push('}');
            }
            Prim::Loop { ctx, fun, .. } => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "{}_{{{c}; ", p.name());
                self.fun(out, fun);
                out.push('}');
            }
            Prim::Trips {
                ctx, cond, body, ..
            } => {
                let c = self.ctx(*ctx);
                let _ = write!(out, "trips_{{{c}; ");
                self.fun(out, cond);
                out.push_str("; ");
                self.fun(out, body);
                out.push('}');
            }
        }
    }

    fn fun(&mut self, out: &mut String, fun: &Fun) {
        let m = self.m;
        let mut named = false;
        if let Some(Expr::Lambda { params, .. }) = m.source.exprs.get(fun.lambda.index()) {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            out.push_str(&names.join(","));
            named = !names.is_empty();
        }
        if !fun.free.is_empty() {
            let free: Vec<String> = fun.free.iter().map(|f| format!("#{f}")).collect();
            let sep = if named { " " } else { "" };
            let _ = write!(out, "{sep}[free {}]", free.join(","));
        }
        out.push_str(".{");
        self.term(out, fun.body, false);
        out.push('}');
    }
}

/// A ground type in the paper's notation (`R`, `[n]R`, `R×R`).
pub fn ground(ty: &Ty) -> String {
    match ty {
        Ty::Real => "R".to_string(),
        Ty::Int => "Int".to_string(),
        Ty::Bool => "Bool".to_string(),
        Ty::Array(n, elem) => format!("[{}]{}", size(n), ground(elem)),
        Ty::Tuple(items) if items.is_empty() => "()".to_string(),
        Ty::Tuple(items) => format!(
            "({})",
            items.iter().map(ground).collect::<Vec<_>>().join("×")
        ),
        Ty::Func(args, ret) => format!(
            "(({}) -> {})",
            args.iter().map(ground).collect::<Vec<_>>().join(", "),
            ground(ret)
        ),
    }
}

fn size(s: &Size) -> String {
    match s {
        Size::Lit(n) => n.to_string(),
        Size::Var(n, 0) => n.to_string(),
        Size::Var(n, k) if *k > 0 => format!("{n}+{k}"),
        Size::Var(n, k) => format!("{n}{k}"),
        Size::Dyn => "_".to_string(),
    }
}

fn real(x: f64) -> String {
    if x < 0.0 {
        format!("({x})")
    } else {
        format!("{x}")
    }
}
