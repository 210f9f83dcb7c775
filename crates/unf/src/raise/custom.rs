//! UNF^-1 of `custom` (a function with derivative rules, `syntax::rules`;
//! docs/derivatives.md, "Custom derivative rules"): the value is the
//! Source `with_rules` node again (fresh copies of its functions, at the
//! point), and `J^T custom` is the vjp rule written out at the point and
//! the cotangent: `let x = p in let ct = z in e2`.

use super::{Abs, Point, Raise, State, at, internal, pushed, truncate};
use crate::error::Error;
use crate::ir::{CtxId, TyId};
use syntax::fxhash::FxHashMap;
use syntax::rules::{Rule, Rules};
use syntax::{Expr, ExprId, Prim as P, Ty};

impl Raise<'_> {
    fn rules_of(&self, node: ExprId) -> Result<Rules, Error> {
        Rules::of(&self.m.source, node)
            .ok_or_else(|| internal(self.b.span, "`custom` names a node that is not with_rules"))
    }

    /// `custom` on `s = T·P`: `T·P·U`.
    pub(super) fn custom(
        &mut self,
        ctx: CtxId,
        ret: TyId,
        node: ExprId,
        s: State,
    ) -> Result<State, Error> {
        self.b.retype = true;
        let n = self.ctx_len(ctx);
        let p = self.materialize(at(&s, n))?;
        let r = self.rules_of(node)?;
        let src = &self.m.source;
        let none = FxHashMap::default();
        let mut parts = Vec::with_capacity(4);
        for f in [Some(r.body), r.jvp, r.vjp] {
            parts.push(match f {
                Some(f) => self.b.paste(src, f, &none),
                None => self.b.add(Expr::Tuple(Vec::new()), Ty::Tuple(Vec::new())),
            });
        }
        parts.push(self.b.use_val(p));
        let ty = self.t.ground_ty(ret).cloned().unwrap_or(Ty::Real);
        let e = self.b.prim(P::WithRules, parts, ty);
        let v = self.b.bind(e, "c");
        Ok(pushed(s, Abs::Val(v)))
    }

    /// `J^T custom` on the cotangent context `s = T·P·U` at the primal
    /// point: `T·P`, the vjp rule's result added into P's cotangent.
    pub(super) fn jt_custom(
        &mut self,
        ctx: CtxId,
        node: ExprId,
        s: State,
        primal: Point<'_>,
    ) -> Result<State, Error> {
        self.b.retype = true;
        let n = self.ctx_len(ctx);
        let z = at(&s, n + 1);
        let mut s = truncate(s, n + 1);
        let Some(z) = self.cot_value(z)? else {
            return Ok(s);
        };
        let p = self.materialize(primal.at(n))?;
        let r = self.rules_of(node)?;
        let src = &self.m.source;
        let vjp = r.rule(src, node, Rule::Vjp)?;
        let Expr::Lambda { params, body } = src.expr(vjp) else {
            return Err(internal(self.b.span, "a vjp rule that is not a lambda"));
        };
        let k = params.len() - 1;
        let mut vals = if k == 1 {
            vec![p]
        } else {
            self.b.unpack(p, "x")
        };
        vals.push(z);
        let mut subst = FxHashMap::default();
        for (param, v) in params.iter().zip(vals) {
            let e = self.b.use_val(v);
            let name = self.b.bind_name(e, param.name.as_str());
            subst.insert(param.name.clone(), name);
        }
        let cot = self.b.paste(src, *body, &subst);
        let d = self.b.bind(cot, "d");
        let sum = self.add(at(&s, n), Abs::Val(d))?;
        s.set_mut(n, sum);
        Ok(s)
    }
}
