//! The typing rule of every builtin (docs/types.md, "Builtins").
//!
//! Second-order builtins infer their data arguments first and then check the
//! function argument against the parameter types those determine, so that
//! a lambda's body is inferred knowing its parameters' types.

use super::table::{Class, Ctor, SizeNorm, SizeTerm, SizeVal};
use super::{Cx, TyVar};
use crate::derivatives::{self, Sig};
use crate::error::Error;
use crate::ir::{Expr, ExprId, Prim, Span};

impl Cx<'_> {
    pub(super) fn prim(&mut self, op: Prim, args: &[ExprId], span: Span) -> Result<TyVar, Error> {
        if args.len() != op.arity() {
            return Err(Error::Type {
                span,
                message: format!(
                    "`{op}` takes {} argument{}, {} given",
                    op.arity(),
                    if op.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
            });
        }
        let sp = |i: usize| self.m.span(args[i]);
        // The arithmetic primitives type by their class in the table.
        if let Some(sig) = derivatives::sig(op) {
            let (arg, ret) = match sig {
                Sig::Numeric => {
                    let a = self.expr(args[0])?;
                    self.numeric(a, sp(0))?;
                    for (i, &b) in args.iter().enumerate().skip(1) {
                        let b = self.expr(b)?;
                        self.expect(a, b, sp(i))?;
                    }
                    return Ok(a);
                }
                Sig::Real => (Ctor::Real, Ctor::Real),
                Sig::IntToReal => (Ctor::Int, Ctor::Real),
                Sig::RealToInt => (Ctor::Real, Ctor::Int),
                Sig::Int => (Ctor::Int, Ctor::Int),
            };
            for (i, &a) in args.iter().enumerate() {
                let ta = self.expr(a)?;
                self.want(arg.clone(), ta, sp(i))?;
            }
            return Ok(self.t.known(ret));
        }
        match op {
            Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => {
                let (a, b) = (self.expr(args[0])?, self.expr(args[1])?);
                if matches!(op, Prim::Eq | Prim::Ne) {
                    self.classed(a, Class::Eq, sp(0))?;
                } else {
                    self.numeric(a, sp(0))?;
                }
                self.expect(a, b, sp(1))?;
                Ok(self.t.known(Ctor::Bool))
            }
            Prim::And | Prim::Or | Prim::Not => {
                for (i, &a) in args.iter().enumerate() {
                    let ta = self.expr(a)?;
                    self.want(Ctor::Bool, ta, sp(i))?;
                }
                Ok(self.t.known(Ctor::Bool))
            }
            Prim::Map => {
                let ta = self.expr(args[1])?;
                let (n, t) = self.array_of(ta, sp(1))?;
                let u = self.fun_arg(op, args[0], &[t])?;
                Ok(self.t.known(Ctor::Array(n, u)))
            }
            Prim::Map2 => {
                let ta = self.expr(args[1])?;
                let (n, t) = self.array_of(ta, sp(1))?;
                let tb = self.expr(args[2])?;
                let (_, u) = self.array_of(tb, sp(2))?;
                let want = self.t.known(Ctor::Array(n, u));
                self.expect(want, tb, sp(2))?;
                let v = self.fun_arg(op, args[0], &[t, u])?;
                Ok(self.t.known(Ctor::Array(n, v)))
            }
            Prim::Reduce => {
                let tz = self.expr(args[1])?;
                let ta = self.expr(args[2])?;
                let (_, t) = self.array_of(ta, sp(2))?;
                self.expect(t, tz, sp(1))?;
                let r = self.fun_arg(op, args[0], &[t, t])?;
                self.expect(t, r, sp(0))?;
                Ok(t)
            }
            Prim::Foldl | Prim::Scanl | Prim::Scanr => {
                let s = self.expr(args[1])?;
                let ta = self.expr(args[2])?;
                let (n, t) = self.array_of(ta, sp(2))?;
                let params = if op == Prim::Scanr { [t, s] } else { [s, t] };
                let r = self.fun_arg(op, args[0], &params)?;
                self.expect(s, r, sp(0))?;
                if op == Prim::Foldl {
                    Ok(s)
                } else {
                    let n1 = SizeTerm {
                        var: n.var,
                        offset: n.offset + 1,
                    };
                    Ok(self.t.known(Ctor::Array(n1, s)))
                }
            }
            Prim::Shift1L | Prim::Shift1R => {
                let ta = self.expr(args[0])?;
                let (n, t) = self.array_of(ta, sp(0))?;
                // `[n+1]T -> [n]T`; a shift of an array known to be empty is empty.
                let m = match self.t.norm(n) {
                    SizeNorm::Lit(0) => n,
                    _ => SizeTerm {
                        var: n.var,
                        offset: n.offset - 1,
                    },
                };
                Ok(self.t.known(Ctor::Array(m, t)))
            }
            Prim::Length => {
                let ta = self.expr(args[0])?;
                self.array_of(ta, sp(0))?;
                Ok(self.t.known(Ctor::Int))
            }
            Prim::Build => {
                let tn = self.expr(args[0])?;
                self.want(Ctor::Int, tn, sp(0))?;
                let size = self.build_size(args[0], span)?;
                let int = self.t.known(Ctor::Int);
                let t = self.fun_arg(op, args[1], &[int])?;
                Ok(self.t.known(Ctor::Array(size, t)))
            }
            Prim::Ifold => {
                let s = self.expr(args[1])?;
                let tn = self.expr(args[2])?;
                self.want(Ctor::Int, tn, sp(2))?;
                let int = self.t.known(Ctor::Int);
                let r = self.fun_arg(op, args[0], &[s, int])?;
                self.expect(s, r, sp(0))?;
                Ok(s)
            }
            Prim::While | Prim::Trips => {
                // `(S -> Bool) (S -> S) S`: the state first, then the
                // condition against it, then the body, which must keep the
                // state's type (sizes included).
                // A mismatch points at what the lambda returns.
                let result_span = |i: usize| match self.m.expr(args[i]) {
                    Expr::Lambda { body, .. } => self.m.span(*body),
                    _ => self.m.span(args[i]),
                };
                let (sc, sb) = (result_span(0), result_span(1));
                let s = self.expr(args[2])?;
                let c = self.fun_arg(op, args[0], &[s])?;
                self.want(Ctor::Bool, c, sc)?;
                let r = self.fun_arg(op, args[1], &[s])?;
                self.expect(s, r, sb)?;
                Ok(if op == Prim::While {
                    s
                } else {
                    self.t.known(Ctor::Int)
                })
            }
            Prim::Diff => {
                let tx = self.expr(args[1])?;
                self.want(Ctor::Real, tx, sp(1))?;
                let r = self.fun_arg(op, args[0], &[tx])?;
                self.want(Ctor::Real, r, sp(0))?;
                Ok(tx)
            }
            Prim::Grad | Prim::GradRev => {
                let tx = self.expr(args[1])?;
                let r = self.fun_arg(op, args[0], &[tx])?;
                self.want(Ctor::Real, r, sp(0))?;
                self.ground.push((tx, sp(1), op));
                self.check_ground()?;
                Ok(tx)
            }
            Prim::Jvp => {
                let tx = self.expr(args[1])?;
                let tdx = self.expr(args[2])?;
                self.expect(tx, tdx, sp(2))?;
                let u = self.fun_arg(op, args[0], &[tx])?;
                Ok(self.t.known(Ctor::Tuple(vec![u, u])))
            }
            Prim::Vjp | Prim::VjpRev => {
                let tx = self.expr(args[1])?;
                let tdy = self.expr(args[2])?;
                let u = self.fun_arg(op, args[0], &[tx])?;
                self.expect(u, tdy, sp(2))?;
                Ok(self.t.known(Ctor::Tuple(vec![u, tx])))
            }
            Prim::Jacob => {
                let tx = self.expr(args[1])?;
                let (n, r) = self.array_of(tx, sp(1))?;
                self.want(Ctor::Real, r, sp(1))?;
                let ty = self.fun_arg(op, args[0], &[tx])?;
                let (m, r2) = self.array_of(ty, sp(0))?;
                self.want(Ctor::Real, r2, sp(0))?;
                let row = self.t.known(Ctor::Array(n, r));
                Ok(self.t.known(Ctor::Array(m, row)))
            }
            Prim::Scatter
            | Prim::HistAdd
            | Prim::HistMul
            | Prim::HistMin
            | Prim::HistMax
            | Prim::HistAddRows
            | Prim::WinnerScatter
            | Prim::WinnerMin
            | Prim::WinnerMax
            | Prim::Gather
            | Prim::GatherWon
            | Prim::PickDest
            | Prim::DHistMulDest
            | Prim::DHistMulVals => self.hist(op, args),
            Prim::WithRules => self.with_rules(args),
            // The arithmetic primitives were typed above by their class.
            _ => Err(Error::Type {
                span,
                message: format!("`{op}` has no typing class in the table of primitives"),
            }),
        }
    }

    /// Scatter, the histograms and their partials (docs/types.md,
    /// "Builtins"): a destination `[m]T`, indices `[n]Int`, values `[n]T`;
    /// for `hist_add_rows`, T is a row `[d]U` of numbers.
    fn hist(&mut self, op: Prim, args: &[ExprId]) -> Result<TyVar, Error> {
        let sp = |i: usize| self.m.span(args[i]);
        let td = self.expr(args[0])?;
        let (m, t) = self.array_of(td, sp(0))?;
        match op {
            Prim::Scatter | Prim::WinnerScatter => {}
            Prim::HistAdd | Prim::HistMul | Prim::HistMin | Prim::HistMax => {
                self.numeric(t, sp(0))?
            }
            Prim::HistAddRows => {
                let (_, u) = self.array_of(t, sp(0))?;
                self.numeric(u, sp(0))?
            }
            _ => self.want(Ctor::Real, t, sp(0))?,
        }
        if op == Prim::PickDest {
            let tw = self.expr(args[1])?;
            let int = self.t.known(Ctor::Int);
            let want = self.t.known(Ctor::Array(m, int));
            self.expect(want, tw, sp(1))?;
            return Ok(td);
        }
        let ti = self.expr(args[1])?;
        let (n, i) = self.array_of(ti, sp(1))?;
        self.want(Ctor::Int, i, sp(1))?;
        let int = self.t.known(Ctor::Int);
        match op {
            Prim::Gather => Ok(self.t.known(Ctor::Array(n, t))),
            Prim::WinnerScatter => Ok(self.t.known(Ctor::Array(m, int))),
            Prim::GatherWon => {
                let tw = self.expr(args[2])?;
                let want = self.t.known(Ctor::Array(m, int));
                self.expect(want, tw, sp(2))?;
                Ok(self.t.known(Ctor::Array(n, t)))
            }
            _ => {
                let tv = self.expr(args[2])?;
                let want = self.t.known(Ctor::Array(n, t));
                self.expect(want, tv, sp(2))?;
                Ok(match op {
                    Prim::WinnerMin | Prim::WinnerMax => self.t.known(Ctor::Array(m, int)),
                    Prim::DHistMulVals => self.t.known(Ctor::Array(n, t)),
                    _ => td,
                })
            }
        }
    }

    /// Infers the function argument of a builtin against the parameter
    /// types the other arguments determine; returns its result type.
    pub(super) fn fun_arg(
        &mut self,
        op: Prim,
        f: ExprId,
        params: &[TyVar],
    ) -> Result<TyVar, Error> {
        if let Expr::Lambda { params: ps, .. } = self.m.expr(f)
            && ps.len() != params.len()
        {
            let n = params.len();
            return Err(Error::Type {
                span: self.m.span(f),
                message: format!(
                    "`{op}` needs a function of {n} argument{}, this one takes {}",
                    if n == 1 { "" } else { "s" },
                    ps.len()
                ),
            });
        }
        let tf = self.expr_fun(f, params)?;
        let span = self.m.span(f);
        let (have, ret) = self.func_of(tf, params.len(), span)?;
        for (&want, got) in params.iter().zip(have) {
            if let Err(clash) = self.t.unify(want, got) {
                // Name the whole function type the builtin needed.
                let want_fn = self.t.known(Ctor::Func(params.to_vec(), ret));
                return Err(self.clash(clash, want_fn, tf, span));
            }
        }
        Ok(ret)
    }

    /// `found` must be the scalar `ctor`.
    fn want(&mut self, ctor: Ctor, found: TyVar, span: Span) -> Result<(), Error> {
        let want = self.t.known(ctor);
        self.expect(want, found, span)
    }

    fn numeric(&mut self, v: TyVar, span: Span) -> Result<(), Error> {
        self.classed(v, Class::Num, span)
    }

    /// `v` must be of the class: an unknown takes it on, a known type must
    /// be in it.
    fn classed(&mut self, v: TyVar, class: Class, span: Span) -> Result<(), Error> {
        let c = self.t.fresh(span, class);
        match self.t.unify(c, v) {
            Ok(()) => Ok(()),
            Err(_) => Err(Error::Type {
                span,
                message: format!("expected {}, found `{}`", class.describe(), self.t.show(v)),
            }),
        }
    }

    /// The size of `build n f`: `n` itself when it is a literal, the size of
    /// `A` when it is `length A`, else a fresh unknown (docs/types.md).
    fn build_size(&mut self, n: ExprId, span: Span) -> Result<SizeTerm, Error> {
        match self.m.expr(n) {
            Expr::Int(k) if *k >= 0 => Ok(self.t.known_size(SizeVal::Lit(*k))),
            Expr::Prim {
                op: Prim::Length,
                args,
            } if args.len() == 1 => {
                let a = args[0];
                match self.expr_ty.iter().rev().find(|(id, _)| *id == a) {
                    Some(&(_, ta)) => Ok(self.array_of(ta, span)?.0),
                    None => Ok(self.t.fresh_size(span)),
                }
            }
            _ => Ok(self.t.fresh_size(span)),
        }
    }
}
