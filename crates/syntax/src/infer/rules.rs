//! The typing rule of `with_rules body jvp vjp point` (docs/types.md,
//! "Builtins"; `crate::rules`): with `body : (T1, ..., Tn) -> U` and
//! `point : P` (`P = T1` when n = 1, `(T1, ..., Tn)` otherwise),
//! `jvp : (T1, ..., Tn, T1, ..., Tn) -> U` (the tangent of the result from
//! the point and its tangent) and `vjp : (T1, ..., Tn, U) -> P` (the
//! cotangent of the point from the point and the result's cotangent); a
//! rule not given is `()`. The result is `U`.

use super::table::{Class, Ctor};
use super::{Cx, TyVar};
use crate::error::Error;
use crate::ir::{Expr, ExprId, Prim};
use crate::rules::Rules;

impl Cx<'_> {
    pub(super) fn with_rules(&mut self, args: &[ExprId]) -> Result<TyVar, Error> {
        let n = match self.m.expr(args[0]) {
            Expr::Lambda { params, .. } if !params.is_empty() => params.len(),
            _ => {
                return Err(Error::Type {
                    span: self.m.span(args[0]),
                    message: "`with_rules` needs a function of at least one parameter first".into(),
                });
            }
        };
        let tp = self.expr(args[3])?;
        let ts: Vec<TyVar> = if n == 1 {
            vec![tp]
        } else {
            let span = self.m.span(args[3]);
            let ts: Vec<TyVar> = (0..n).map(|_| self.t.fresh(span, Class::Any)).collect();
            let want = self.t.known(Ctor::Tuple(ts.clone()));
            self.expect(want, tp, span)?;
            ts
        };
        let u = self.fun_arg(Prim::WithRules, args[0], &ts)?;
        for (slot, arg) in [(1, args[1]), (2, args[2])] {
            if matches!(self.m.expr(arg), Expr::Tuple(items) if items.is_empty()) {
                self.expr(arg)?;
                continue;
            }
            let (what, params, ret, meaning) = if slot == 1 {
                let mut ps = ts.clone();
                ps.extend(ts.iter().copied());
                (
                    "jvp",
                    ps,
                    u,
                    format!(
                        "the {n} parameter{s} and {their} tangent{s}",
                        s = plural(n),
                        their = if n == 1 { "its" } else { "their" }
                    ),
                )
            } else {
                let mut ps = ts.clone();
                ps.push(u);
                (
                    "vjp",
                    ps,
                    tp,
                    format!("the {n} parameter{} and the result's cotangent", plural(n)),
                )
            };
            if let Expr::Lambda { params: got, .. } = self.m.expr(arg)
                && got.len() != params.len()
            {
                return Err(Error::Type {
                    span: self.m.span(arg),
                    message: format!(
                        "the `{what}` rule takes {meaning} ({} arguments), this one takes {}",
                        params.len(),
                        got.len()
                    ),
                });
            }
            let r = self.fun_arg(Prim::WithRules, arg, &params)?;
            let at = Rules::lambda_body(self.m, arg).unwrap_or(arg);
            self.expect(ret, r, self.m.span(at))?;
        }
        Ok(u)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
