//! Random first-order Source programs (proptest strategies) over the
//! parameters `x1, x2 : R` and `A, B : [n]R`, built in core form.

use super::{B, arr};
use proptest::prelude::*;
use syntax::{ExprId, Prim, Ty};

/// A program shape; `build` turns it into core-form nodes.
#[derive(Debug, Clone)]
pub enum Recipe {
    /// The i-th real in scope (modulo their number).
    Var(usize),
    Const(f64),
    Un(Prim, Box<Recipe>),
    Bin(Prim, Box<Recipe>, Box<Recipe>),
    /// `x / (2 + sin y)`, `log (2 + sin x)`, `sqrt (2 + sin x)`,
    /// `pow (1.5 + sin x) (cos y)`: operators on a safe domain.
    Safe(Prim, Box<Recipe>, Box<Recipe>),
    Let(Box<Recipe>, Box<Recipe>),
    /// `let p = (e1, e2) in p.1 op p.2`, or a tuple pattern.
    Pair(Box<Recipe>, Box<Recipe>, bool),
    /// `reduce (+) 0 (map (fun y -> body) A)`; body sees y and the scope.
    SumMap(bool, Box<Recipe>),
    /// `reduce (op) z (map2 (fun (a, b) -> body) A B)`.
    ReduceMap2(Prim, Box<Recipe>),
}

pub fn recipe() -> impl Strategy<Value = Recipe> {
    let leaf = prop_oneof![
        (0usize..8).prop_map(Recipe::Var),
        (-2.0f64..2.0).prop_map(|c| Recipe::Const((c * 4.0).round() / 4.0)),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        let un = prop_oneof![
            Just(Prim::Sin),
            Just(Prim::Cos),
            Just(Prim::Tanh),
            Just(Prim::Neg)
        ];
        let bin = prop_oneof![
            Just(Prim::Add),
            Just(Prim::Sub),
            Just(Prim::Mul),
            Just(Prim::Max),
            Just(Prim::Min)
        ];
        let safe = prop_oneof![
            Just(Prim::Div),
            Just(Prim::Log),
            Just(Prim::Sqrt),
            Just(Prim::Pow)
        ];
        let red = prop_oneof![Just(Prim::Add), Just(Prim::Mul)];
        prop_oneof![
            (un, inner.clone()).prop_map(|(o, a)| Recipe::Un(o, Box::new(a))),
            (bin, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Recipe::Bin(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (safe, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Recipe::Safe(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Recipe::Let(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(a, b, pat)| Recipe::Pair(
                Box::new(a),
                Box::new(b),
                pat
            )),
            (any::<bool>(), inner.clone())
                .prop_map(|(which, a)| Recipe::SumMap(which, Box::new(a))),
            (red, inner).prop_map(|(o, a)| Recipe::ReduceMap2(o, Box::new(a))),
        ]
    })
}

/// Builds `def f (x1 : R) (x2 : R) (A : [n]R) (B : [n]R) : R = recipe`.
pub fn build(r: &Recipe) -> syntax::Module {
    let mut b = B::new();
    let mut g = Gen {
        b: &mut b,
        fresh: 0,
    };
    let scope = vec!["x1".to_string(), "x2".to_string()];
    let body = g.expr(r, &scope);
    b.def(
        "f",
        &[
            ("x1", Ty::Real),
            ("x2", Ty::Real),
            ("A", arr()),
            ("B", arr()),
        ],
        body,
    )
}

struct Gen<'a> {
    b: &'a mut B,
    fresh: usize,
}

impl Gen<'_> {
    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn expr(&mut self, r: &Recipe, scope: &[String]) -> ExprId {
        match r {
            Recipe::Var(i) => self.b.var(&scope[i % scope.len()], Ty::Real),
            Recipe::Const(c) => {
                if *c < 0.0 {
                    let x = self.b.real(-c);
                    self.b.op(Prim::Neg, vec![x])
                } else {
                    self.b.real(*c)
                }
            }
            Recipe::Un(o, a) => {
                let a = self.expr(a, scope);
                self.b.op(*o, vec![a])
            }
            Recipe::Bin(o, a, c) => {
                let a = self.expr(a, scope);
                let c = self.expr(c, scope);
                self.b.op(*o, vec![a, c])
            }
            Recipe::Safe(o, a, c) => {
                let two = self.b.real(if *o == Prim::Pow { 1.5 } else { 2.0 });
                let inner = match o {
                    Prim::Div | Prim::Pow => c,
                    _ => a,
                };
                let s = self.expr(inner, scope);
                let s = self.b.op(Prim::Sin, vec![s]);
                let safe = self.b.op(Prim::Add, vec![two, s]);
                match o {
                    Prim::Div => {
                        let a = self.expr(a, scope);
                        self.b.op(Prim::Div, vec![a, safe])
                    }
                    Prim::Pow => {
                        let e = self.expr(a, scope);
                        let e = self.b.op(Prim::Cos, vec![e]);
                        self.b.op(Prim::Pow, vec![safe, e])
                    }
                    other => self.b.op(*other, vec![safe]),
                }
            }
            Recipe::Let(a, c) => {
                let x = self.name("w");
                let v = self.expr(a, scope);
                let mut inner = scope.to_vec();
                inner.push(x.clone());
                let body = self.expr(c, &inner);
                self.b.let_(&x, v, body)
            }
            Recipe::Pair(a, c, pat) => {
                let (ea, ec) = (self.expr(a, scope), self.expr(c, scope));
                let t = self.b.tuple(vec![ea, ec]);
                if *pat {
                    let (p, q) = (self.name("p"), self.name("q"));
                    let (vp, vq) = (self.b.var(&p, Ty::Real), self.b.var(&q, Ty::Real));
                    let body = self.b.op(Prim::Mul, vec![vp, vq]);
                    self.b.let_tuple(&[&p, &q], t, body)
                } else {
                    let p = self.name("p");
                    let pty = Ty::Tuple(vec![Ty::Real, Ty::Real]);
                    let v1 = self.b.var(&p, pty.clone());
                    let v2 = self.b.var(&p, pty);
                    let (p1, p2) = (self.b.proj(v1, 1), self.b.proj(v2, 2));
                    let body = self.b.op(Prim::Sub, vec![p1, p2]);
                    self.b.let_(&p, t, body)
                }
            }
            Recipe::SumMap(which, body) => {
                let y = self.name("y");
                let mut inner = scope.to_vec();
                inner.push(y.clone());
                let e = self.expr(body, &inner);
                let lam = self.b.lam(&[&y], e);
                let a = self.b.var(if *which { "A" } else { "B" }, arr());
                let m = self.b.prim(Prim::Map, vec![lam, a], arr());
                let plus = self.plus();
                let zero = self.b.real(0.0);
                self.b.op(Prim::Reduce, vec![plus, zero, m])
            }
            Recipe::ReduceMap2(o, body) => {
                let (u, v) = (self.name("u"), self.name("v"));
                let mut inner = scope.to_vec();
                inner.push(u.clone());
                inner.push(v.clone());
                let e = self.expr(body, &inner);
                let lam = self.b.lam(&[&u, &v], e);
                let (a, bb) = (self.b.var("A", arr()), self.b.var("B", arr()));
                let m = self.b.prim(Prim::Map2, vec![lam, a, bb], arr());
                let (x, y) = (self.name("r"), self.name("r"));
                let (vx, vy) = (self.b.var(&x, Ty::Real), self.b.var(&y, Ty::Real));
                let f = self.b.op(*o, vec![vx, vy]);
                let f = self.b.lam(&[&x, &y], f);
                let z = self.b.real(if *o == Prim::Mul { 1.0 } else { 0.0 });
                self.b.op(Prim::Reduce, vec![f, z, m])
            }
        }
    }

    fn plus(&mut self) -> ExprId {
        let (x, y) = (self.name("r"), self.name("r"));
        let (vx, vy) = (self.b.var(&x, Ty::Real), self.b.var(&y, Ty::Real));
        let f = self.b.op(Prim::Add, vec![vx, vy]);
        self.b.lam(&[&x, &y], f)
    }
}
