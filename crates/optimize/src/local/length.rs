//! `length-of`: the length of an array read from how it is made, so that
//! the array itself need not be: `length (map f A) ~> length A`,
//! `length (map2 f A B) ~> length A`, `length (build n f) ~> n`, also
//! through a `let`-bound array (the facts recorded at its binding).
//! Forward mode's `jacob` computes the function's value for the length of
//! its result alone (the transpose's row count); with this rule the value
//! is dead and goes (GradBench's ht: the whole primal skinning, once per
//! Jacobian). Like `map2-unused`, dropping `B` drops `map2`'s check that
//! the lengths agree (docs/optimize.md, "Where the rules are unsound").

use syntax::{Expr, ExprId, Name, Prim, Span, Ty};

use crate::rules::RuleName;
use crate::simplify::Round;

/// A small integer term of literals, names and lengths of names (the size
/// of a `build`),
/// rebuilt where the length is read: its names are bound before the
/// array, so they are in scope wherever the array is (binders are unique
/// within a definition).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LenTerm {
    Int(i64),
    Var(Name),
    /// `length x` of a variable, with `x`'s type.
    Length(Name, Ty),
    Op(Prim, Box<LenTerm>, Box<LenTerm>),
}

/// How deep a term may be to be copied.
const DEPTH: u32 = 3;

impl Round<'_> {
    fn len_term(&self, id: ExprId, depth: u32) -> Option<LenTerm> {
        match self.m.expr(id) {
            Expr::Int(k) => Some(LenTerm::Int(*k)),
            Expr::Var(v) if self.ty(id) == Ty::Int => Some(LenTerm::Var(v.clone())),
            Expr::Prim {
                op: Prim::Length,
                args,
            } => match self.m.expr(args[0]) {
                Expr::Var(x) => Some(LenTerm::Length(x.clone(), self.ty(args[0]))),
                _ => None,
            },
            Expr::Prim {
                op: op @ (Prim::Add | Prim::Sub | Prim::Mul),
                args,
            } if depth > 0 && args.len() == 2 => Some(LenTerm::Op(
                *op,
                Box::new(self.len_term(args[0], depth - 1)?),
                Box::new(self.len_term(args[1], depth - 1)?),
            )),
            _ => None,
        }
    }

    fn emit_len(&mut self, t: &LenTerm, span: Span) -> ExprId {
        match t {
            LenTerm::Int(k) => self.add(Expr::Int(*k), Ty::Int, span),
            LenTerm::Var(v) => self.add(Expr::Var(v.clone()), Ty::Int, span),
            LenTerm::Length(x, t) => {
                let x = self.add(Expr::Var(x.clone()), t.clone(), span);
                self.add(
                    Expr::Prim {
                        op: Prim::Length,
                        args: vec![x],
                    },
                    Ty::Int,
                    span,
                )
            }
            LenTerm::Op(op, a, b) => {
                let args = vec![self.emit_len(a, span), self.emit_len(b, span)];
                self.add(Expr::Prim { op: *op, args }, Ty::Int, span)
            }
        }
    }

    /// The size of `v` when it is `build n f` with `n` a small term.
    pub(crate) fn build_length(&self, v: ExprId) -> Option<LenTerm> {
        match self.m.expr(v) {
            Expr::Prim {
                op: Prim::Build,
                args,
            } => self.len_term(args[0], DEPTH),
            _ => None,
        }
    }

    /// `length a` from how `a` is made.
    pub(crate) fn length_of(&mut self, id: ExprId, args: &[ExprId]) -> Option<ExprId> {
        if !self.on(RuleName::LengthOf) {
            return None;
        }
        let (a, span) = (args[0], self.m.span(id));
        let term = match self.m.expr(a) {
            Expr::Var(x) => self.facts.get(x).and_then(|f| f.length.clone()),
            _ => self.build_length(a),
        };
        if let Some(t) = term {
            self.fire(RuleName::LengthOf);
            return Some(self.emit_len(&t, span));
        }
        let over = self.size_src(a)?;
        // A variable's own source is recorded only when it is another name.
        if let Some((n, _)) = self.over_var(&over)
            && matches!(self.m.expr(a), Expr::Var(x) if *x == n)
        {
            return None;
        }
        self.fire(RuleName::LengthOf);
        let src = self.emit_over(over, span);
        Some(self.add(
            Expr::Prim {
                op: Prim::Length,
                args: vec![src],
            },
            Ty::Int,
            span,
        ))
    }
}
