//! The clause of `with_rules f jvp vjp p` (a function with derivative
//! rules, `syntax::rules`; docs/derivatives.md, "Custom derivative
//! rules"): the vjp rule is the transposed Jacobian, never the body's.
//!
//! ```text
//! D(with_rules f j v p) = let x, Y1 = D(p) in
//!                         <with_rules f j v x, fun (X, z) -> Y1(X, v(x, z))>
//! ```

use super::emit::{Atom, Emit};
use super::ground::{Cot, materialize};
use super::{Direct, Env, K, Y, call_k, unsupported};
use crate::Error;
use syntax::fxhash::FxHashMap;
use syntax::rules::{Rule, Rules};
use syntax::{Expr, ExprId, Name, Prim};

impl Direct<'_> {
    /// What `check` requires of a `with_rules` node: a vjp rule, and a
    /// point and result built from reals (the macro's values).
    pub(super) fn check_with_rules(&self, e: ExprId) -> Result<ExprId, Error> {
        let r =
            Rules::of(self.m, e).ok_or_else(|| unsupported(self.m.span(e), "with_rules", ""))?;
        r.rule(self.m, e, Rule::Vjp).map_err(|source| Error::Unf {
            source: unf::Error::Source { source },
        })?;
        Ok(r.point)
    }

    pub(super) fn d_with_rules(
        &self,
        b: &mut Emit,
        e: ExprId,
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let r = Rules::of(self.m, e).expect("invariant: `check` saw a with_rules node");
        let vjp = r.vjp.expect("invariant: `check` required a vjp rule");
        let (a, k1) = self.d(b, r.point, env, y, None);
        let span = self.m.span(e);
        b.span = span;
        let none = FxHashMap::default();
        let mut parts = Vec::with_capacity(4);
        for f in [Some(r.body), r.jvp, r.vjp] {
            parts.push(match f {
                Some(f) => b.paste(self.m, f, &none),
                None => b.node(Expr::Tuple(Vec::new())),
            });
        }
        parts.push(b.atom(&a));
        let v = b.prim(Prim::WithRules, parts);
        let res = b.bind_hint(hint, "v", v);
        // The rule's code, with its parameters renamed to names the
        // continuation binds to the point and the cotangent.
        let Expr::Lambda { params, body } = self.m.expr(vjp) else {
            unreachable!("invariant: the verifier checked that a rule is a lambda")
        };
        let names: Vec<Name> = params.iter().map(|p| b.fresh(p.name.as_str())).collect();
        let subst: FxHashMap<Name, Name> = params
            .iter()
            .map(|p| p.name.clone())
            .zip(names.iter().cloned())
            .collect();
        let code = b.detach(self.m, *body, |x| subst.get(x).cloned());
        let uty = self.ty(e);
        let k: K = Box::new({
            let res = res.clone();
            move |b, x, z| {
                if z.is_zero() {
                    return call_k(k1, b, x, Cot::Zero);
                }
                b.span = span;
                let n = names.len() - 1;
                let mut args = Vec::with_capacity(names.len());
                if n == 1 {
                    args.push(b.atom(&a));
                } else {
                    for i in 1..=n as u32 {
                        let t = b.atom(&a);
                        args.push(b.proj(t, i));
                    }
                }
                args.push(materialize(b, &uty, z, &res));
                for (name, arg) in names.into_iter().zip(args) {
                    b.bind_as(name, arg);
                }
                let c = b.paste_detached(code);
                let d = b.bind_hint(None, "d", c);
                call_k(k1, b, x, Cot::Val(d))
            }
        });
        (res, k)
    }
}
