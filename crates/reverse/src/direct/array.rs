//! The clauses of Figure 5 for the array operations `map2` and `reduce`
//! (and `map`, Fig. 4's `map2` of one array), and the gradient of a
//! function's body that they need (Fig. 5's `∇_Γ e1`, `∇_{x} e1`, `∇_{y} e1`).
//!
//! The body's gradient is the macro itself applied to the body, in the
//! context of its free variables and parameters, with the identity as Y:
//! `∇_{Γ,x,y} e1 = π2 D^{Γ,x,y}_{Γ,x,y;Id}(e1)(0, z)`. It is written as one
//! lambda returning the tuple of the non-zero components, mapped over the
//! arrays once (Fig. 5's `map2 (a,b. ∇_Γ e1[a/x,b/y]) A B`, an array of
//! tuples), rather than one pass per component. For `map` and `map2` the
//! body's backward pass is seeded with the element of the result's
//! cotangent Z instead of 1, which saves Fig. 5's `map2 * Z`.
//!
//! `reduce` is the left fold `f(...f(f(z, a1), a2)..., an)` (docs/semantics.md):
//!
//! ```text
//! A0 = shift1R (scanl f z A)            accumulators before each element
//! D  = map (∇ f) (zip A0 A)             (∂_x f, ∂_y f, ∂_w f for free w) per step
//! S  = scanr (*) 1 (D.x)                S[i] = ∂_x f at steps i..n, multiplied
//! W  = shift1L S                        products after each step
//! Abar_i = D.y_i * W_i * z,  zbar = S[0] * z,  wbar = Σ_i D.w_i * W_i * z
//! ```
//!
//! Fig. 5 writes `A1 = shift1L (map2 ∇_x ...)` then `scanr`; scanning first
//! gives the same products for n ≥ 1, the right (empty) array for n = 0,
//! and S[0], the cotangent of the initial value, which Fig. 5 omits (its
//! Section 3 requires a closed initial value).

use super::emit::{Atom, Emit};
use super::ground::{self, Cot, materialize, plus_fn, scale, times, zero};
use super::{Cots, Direct, Env, K, Y, add_into, call_k, pop};
use syntax::{Expr, ExprId, Name, Prim, Size, Ty};

/// Which entry of the body's context a component of its gradient is for.
#[derive(Debug, Clone)]
enum Who {
    /// A free variable of the function: the name of the output holding it.
    Free(Name),
    /// The i-th parameter of the function (0-based).
    Param(usize),
}

/// The gradient of a function's body, as a lambda of the output.
struct BodyGrad {
    /// `fun (x, z) -> ...` (one array), `fun (p, z) -> ...` (p a pair of
    /// elements), or `fun p -> ...` when seeded with 1.
    lam: ExprId,
    /// The non-zero components the lambda returns, in order, with their
    /// types; one component is returned bare, several as a tuple.
    comps: Vec<(Who, Ty)>,
}

impl BodyGrad {
    /// The array of the component for `who`, given the mapped array `g`.
    fn component(&self, b: &mut Emit, g: &Atom, want: impl Fn(&Who) -> bool) -> Option<Atom> {
        let j = self.comps.iter().position(|(w, _)| want(w))?;
        if self.comps.len() == 1 {
            return Some(g.clone());
        }
        let u = b.fresh("g");
        let ue = b.var(&u);
        let body = b.proj(ue, j as u32 + 1);
        let f = b.lambda(&[u], body);
        let ge = b.atom(g);
        let e = b.prim(Prim::Map, vec![f, ge]);
        Some(b.bind("g", e))
    }

    fn param(&self, b: &mut Emit, g: &Atom, i: usize) -> Cot {
        match self.component(b, g, |w| matches!(w, Who::Param(j) if *j == i)) {
            Some(a) => Cot::Val(a),
            None => Cot::Zero,
        }
    }

    fn frees(&self) -> Vec<(Name, Ty)> {
        self.comps
            .iter()
            .filter_map(|(w, t)| match w {
                Who::Free(n) => Some((n.clone(), t.clone())),
                Who::Param(_) => None,
            })
            .collect()
    }
}

/// How the body's backward pass is seeded.
#[derive(Clone, Copy, PartialEq)]
enum Seed {
    /// With the element of the result's cotangent, an extra parameter `z`.
    Param,
    /// With 1.
    One,
}

/// `reduce (+^) 0_G arr`: the sum of an array of cotangents of type G,
/// shaped like the witness `w`.
fn sum(b: &mut Emit, ty: &Ty, arr: &Atom, w: &Atom) -> Atom {
    let f = plus_fn(b, ty);
    let z = zero(b, ty, Some(w));
    let a = b.atom(arr);
    let e = b.prim(Prim::Reduce, vec![f, z, a]);
    b.bind("d", e)
}

/// `map2 (fun (u, v) -> (u, v)) a c`.
fn zip(b: &mut Emit, a: &Atom, c: &Atom) -> Atom {
    let (u, v) = (b.fresh("u"), b.fresh("v"));
    let (ue, ve) = (b.var(&u), b.var(&v));
    let pair = b.node(Expr::Tuple(vec![ue, ve]));
    let f = b.lambda(&[u, v], pair);
    let (ae, ce) = (b.atom(a), b.atom(c));
    let e = b.prim(Prim::Map2, vec![f, ae, ce]);
    b.bind("p", e)
}

impl Direct<'_> {
    /// `map (x. e) A`, as Fig. 5's map2 clause with one array: the
    /// continuation adds `Σ_i ∇_Γ e(A_i) Z_i` into the free variables and
    /// passes `map2 (x, z. ∇_x e(x) z) A Z` to Y1.
    pub(super) fn d_map(
        &self,
        b: &mut Emit,
        e: ExprId,
        args: &[ExprId],
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (a, k1) = self.d(b, args[1], env, y, None);
        b.span = self.m.span(e);
        let f = self.copy(b, args[0], env);
        let ae = b.atom(&a);
        let v = b.prim(Prim::Map, vec![f, ae]);
        let r = b.bind_hint(hint, "v", v);
        let g = self.grad_body(b, args[0], env, Seed::Param);
        let span = self.m.span(e);
        let k: K = Box::new(move |b, mut x, z| {
            let (Some(g), Cot::Val(z)) = (g, z) else {
                return call_k(k1, b, x, Cot::Zero);
            };
            b.span = span;
            let (lam, ae, ze) = (g.lam, b.atom(&a), b.atom(&z));
            let ge = b.prim(Prim::Map2, vec![lam, ae, ze]);
            let garr = b.bind("g", ge);
            add_frees(b, &mut x, &g, &garr, None);
            let abar = g.param(b, &garr, 0);
            call_k(k1, b, x, abar)
        });
        (r, k)
    }

    /// Fig. 5's `map2 (x,y.e1) e2 e3`: the continuation adds
    /// `reduce +^ 0 (map2 (x,y. ∇_Γ e1 * z) A B Z)` into the free variables
    /// and passes the arrays of `∇_x e1 * z` and `∇_y e1 * z` to Y2.
    pub(super) fn d_map2(
        &self,
        b: &mut Emit,
        e: ExprId,
        args: &[ExprId],
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (a, k1) = self.d(b, args[1], env, y, None);
        let t = b.fresh("t");
        b.slot_ty.insert(t.clone(), self.ty(args[1]));
        let (c, k2) = self.d(b, args[2], env, pop(t.clone(), k1), None);
        b.span = self.m.span(e);
        let f = self.copy(b, args[0], env);
        let (ae, ce) = (b.atom(&a), b.atom(&c));
        let v = b.prim(Prim::Map2, vec![f, ae, ce]);
        let r = b.bind_hint(hint, "v", v);
        let g = self.grad_body(b, args[0], env, Seed::Param);
        let span = self.m.span(e);
        let k: K = Box::new(move |b, mut x, z| {
            let (Some(g), Cot::Val(z)) = (g, z) else {
                return call_k(k2, b, x, Cot::Zero);
            };
            b.span = span;
            let p = zip(b, &a, &c);
            let (lam, pe, ze) = (g.lam, b.atom(&p), b.atom(&z));
            let ge = b.prim(Prim::Map2, vec![lam, pe, ze]);
            let garr = b.bind("g", ge);
            add_frees(b, &mut x, &g, &garr, None);
            let abar = g.param(b, &garr, 0);
            let cbar = g.param(b, &garr, 1);
            if !abar.is_zero() {
                x.insert(t, abar);
            }
            call_k(k2, b, x, cbar)
        });
        (r, k)
    }

    /// Fig. 5's `reduce (x,y.e1) e2 e3` (see the module documentation), and
    /// Fig. 16's `foldl (x,y.e1) e2 e3`, the same left fold whose elements
    /// may be of any ground type (`op`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn d_reduce(
        &self,
        b: &mut Emit,
        e: ExprId,
        op: Prim,
        args: &[ExprId],
        env: &Env,
        y: Y,
        hint: Option<Name>,
    ) -> (Atom, K) {
        let (z0, k1) = self.d(b, args[1], env, y, None);
        let t = b.fresh("t");
        b.slot_ty.insert(t.clone(), Ty::Real);
        let (a, k2) = self.d(b, args[2], env, pop(t.clone(), k1), None);
        b.span = self.m.span(e);
        let elem_ty = ground::elem(&self.ty(args[2])).clone();
        let f = self.copy(b, args[0], env);
        let (z0e, ae) = (b.atom(&z0), b.atom(&a));
        let v = b.prim(op, vec![f, z0e, ae]);
        let r = b.bind_hint(hint, "v", v);
        let g = self.grad_body(b, args[0], env, Seed::One);
        // The function again, for the scan of the backward pass.
        let f_scan = self.copy(b, args[0], env);
        let span = self.m.span(e);
        let k: K = Box::new(move |b, mut x, z| {
            let Cot::Val(z) = z else {
                return call_k(k2, b, x, Cot::Zero);
            };
            b.span = span;
            // D, when the body's gradient is not zero.
            let d = g.map(|g| {
                let (z0e, ae) = (b.atom(&z0), b.atom(&a));
                let scan = b.prim(Prim::Scanl, vec![f_scan, z0e, ae]);
                let scan = b.bind("s", scan);
                let se = b.atom(&scan);
                let a0 = b.un(Prim::Shift1R, se);
                let a0 = b.bind("s", a0);
                let p = zip(b, &a0, &a);
                let pe = b.atom(&p);
                let de = b.prim(Prim::Map, vec![g.lam, pe]);
                let d = b.bind("g", de);
                (g, d)
            });
            let dx = match &d {
                Some((g, d)) => g.param(b, d, 0),
                None => Cot::Zero,
            };
            let dx = match dx {
                Cot::Val(dx) => dx,
                _ => {
                    let zeros = zero(b, &Ty::array(Size::Dyn, Ty::Real), Some(&a));
                    b.bind("g", zeros)
                }
            };
            // S = scanr (*) 1 Dx, W = shift1L S.
            let (u, w) = (b.fresh("u"), b.fresh("v"));
            let (ue, we) = (b.var(&u), b.var(&w));
            let prod = b.bin(Prim::Mul, ue, we);
            let mul = b.lambda(&[u, w], prod);
            let (one, dxe) = (b.real(1.0), b.atom(&dx));
            let s = b.prim(Prim::Scanr, vec![mul, one, dxe]);
            let s = b.bind("s", s);
            let se = b.atom(&s);
            let wv = b.un(Prim::Shift1L, se);
            let wv = b.bind("s", wv);
            // zbar = S[0] * z.
            let se = b.atom(&s);
            let i0 = b.node(Expr::Int(0));
            let s0 = b.node(Expr::Index {
                array: se,
                index: i0,
            });
            let zbar = times(b, ground::Partial::Term(s0), &z);
            x.insert(t, Cot::Val(zbar));
            let Some((g, d)) = d else {
                return call_k(k2, b, x, Cot::Zero);
            };
            add_frees(b, &mut x, &g, &d, Some((&wv, &z)));
            let abar = match g.param(b, &d, 1) {
                Cot::Val(dy) => Cot::Val(scaled(b, &elem_ty, &dy, &wv, &z)),
                _ => Cot::Zero,
            };
            call_k(k2, b, x, abar)
        });
        (r, k)
    }

    /// The gradient of the body of the lambda `lam` with respect to its free
    /// variables and parameters, as a lambda (see [`BodyGrad`]); `None`
    /// when every component is zero.
    fn grad_body(&self, b: &mut Emit, lam: ExprId, env: &Env, seed: Seed) -> Option<BodyGrad> {
        let Expr::Lambda { params, body } = self.m.expr(lam) else {
            unreachable!("invariant: `check` accepted only lambdas here");
        };
        let frees: Vec<Name> = self
            .free_vars(lam)
            .iter()
            .map(|n| {
                env.get(n)
                    .cloned()
                    .expect("invariant: core-form programs have no free variables")
            })
            .collect();
        let mut env = env.clone();
        let mut outs = Vec::with_capacity(params.len());
        let mut lam_params = Vec::new();
        b.open();
        if params.len() == 1 {
            let out = b.fresh(params[0].name.as_str());
            lam_params.push(out.clone());
            outs.push(out);
        } else {
            let pair = b.fresh("p");
            lam_params.push(pair.clone());
            for (i, p) in params.iter().enumerate() {
                let out = b.fresh(p.name.as_str());
                let pe = b.var(&pair);
                let e = b.proj(pe, i as u32 + 1);
                b.bind_as(out.clone(), e);
                outs.push(out);
            }
        }
        for (p, out) in params.iter().zip(&outs) {
            let ty =
                p.ty.clone()
                    .expect("invariant: `check` accepted typed parameters");
            b.slot_ty.insert(out.clone(), ty);
            env = env.insert(p.name.clone(), out.clone());
        }
        let seed_cot = match seed {
            Seed::One => Cot::Val(Atom::Real(1.0)),
            Seed::Param => {
                let z = b.fresh("z");
                lam_params.push(z.clone());
                Cot::Val(Atom::Var(z))
            }
        };
        let identity: Y = Box::new(|_, x| x);
        let (_, k) = self.d(b, *body, &env, identity, None);
        let mut x: Cots = call_k(k, b, Cots::new(), seed_cot);
        let mut comps = Vec::new();
        let mut items = Vec::new();
        let whos = frees
            .iter()
            .map(|n| (Who::Free(n.clone()), n.clone()))
            .chain(
                outs.iter()
                    .enumerate()
                    .map(|(i, n)| (Who::Param(i), n.clone())),
            );
        for (who, name) in whos {
            let c = x.remove(&name).unwrap_or(Cot::Zero);
            if c.is_zero() {
                continue;
            }
            let ty = b.slot_ty[&name].clone();
            items.push(materialize(b, &ty, c, &Atom::Var(name)));
            comps.push((who, ty));
        }
        let result = match items.len() {
            0 => b.real(0.0),
            1 => items[0],
            _ => b.node(Expr::Tuple(items)),
        };
        let body = b.close(result);
        if comps.is_empty() {
            return None;
        }
        let lam = b.lambda(&lam_params, body);
        Some(BodyGrad { lam, comps })
    }

    /// The free variables of a lambda (or of any expression), in order of
    /// first occurrence.
    pub(super) fn free_vars(&self, lam: ExprId) -> Vec<Name> {
        syntax::visit::free_in_order(self.m, lam)
    }

    /// A copy of the Source subtree `e` into the output, every binder
    /// renamed fresh and every free variable read through `env`.
    pub(super) fn copy(&self, b: &mut Emit, e: ExprId, env: &Env) -> ExprId {
        let copy = b.detach(self.m, e, |x| env.get(x).cloned());
        b.paste_detached(copy.unannotated())
    }
}

/// Adds the free variables' components of a body gradient into X: the sum
/// over the array `g` of the component, each element first multiplied by
/// `W_i * z` when `scale` is given (reduce).
fn add_frees(b: &mut Emit, x: &mut Cots, g: &BodyGrad, garr: &Atom, by: Option<(&Atom, &Atom)>) {
    for (name, ty) in g.frees() {
        let Some(arr) = g.component(b, garr, |w| matches!(w, Who::Free(n) if *n == name)) else {
            continue;
        };
        let arr = match by {
            Some((wv, z)) => scaled(b, &ty, &arr, wv, z),
            None => arr,
        };
        let total = sum(b, &ty, &arr, &Atom::Var(name.clone()));
        add_into(b, x, &name, Cot::Val(total));
    }
}

/// `map2 (fun (d, w) -> d * (w * z)) D W` for cotangents d of type `ty`.
fn scaled(b: &mut Emit, ty: &Ty, d: &Atom, wv: &Atom, z: &Atom) -> Atom {
    let (u, w) = (b.fresh("u"), b.fresh("w"));
    b.open();
    let we = b.var(&w);
    let s = times(b, ground::Partial::Term(we), z);
    let r = scale(b, ty, &Atom::Var(u.clone()), &s);
    let body = b.atom(&r);
    let body = b.close(body);
    let f = b.lambda(&[u, w], body);
    let (de, wve) = (b.atom(d), b.atom(wv));
    let e = b.prim(Prim::Map2, vec![f, de, wve]);
    b.bind("d", e)
}
