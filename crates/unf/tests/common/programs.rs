//! Random first-order Source programs (proptest strategies) over the
//! parameters `x1, x2 : R` and `A, B : [n]R`, built in core form: the
//! paper's core (Section 3) and, with [`extended`], the constructs of
//! Section 7 and Appendix A (conditionals, `abs`, folds, scans, `ifold`,
//! `build`, indexing, shifts, array literals, arrays of tuples, nested
//! arrays, `reduce` with free variables).

use super::{B, arr};
use proptest::prelude::*;
use syntax::{Expr, ExprId, Name, Prim, Size, Ty};

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
    /// `if a cmp b then c else d`; the condition is also combined with
    /// `not`, `&&` or `||` (selector 1, 2, 3).
    If(Prim, u8, Box<[Recipe; 4]>),
    /// `abs a`.
    Abs(Box<Recipe>),
    /// `foldl (fun (acc, y) -> body) init A` (or B).
    Foldl(bool, Box<Recipe>, Box<Recipe>),
    /// `sum (scanl f init A)` (`scanr (fun (y, acc) -> ..)` when false).
    Scan(bool, Box<Recipe>, Box<Recipe>),
    /// `sum (build (length A) (fun i -> let e = A[i] in body))`.
    Build(Box<Recipe>),
    /// `ifold (fun (acc, i) -> let e = B[i] in body) init (length B)`.
    Ifold(Box<Recipe>, Box<Recipe>),
    /// `A[k]` (B when false), k < 3.
    Index(bool, i64),
    /// `sum (map2 (fun (u, v) -> body) (shift1L A) (shift1R B))`.
    Shifts(Box<Recipe>),
    /// `reduce (fun (u, v) -> u + v * w) 0 A`, w a term of the scope: a
    /// reduce whose function has free variables.
    ReduceFree(Box<Recipe>),
    /// `sum [a, b]`.
    Literal(Box<Recipe>, Box<Recipe>),
    /// `let (s, p) = reduce (fun (p, q) -> (p.1 + q.1, p.2 * q.2)) (0, 1)
    /// (map (fun y -> (y, body)) A) in s + p`: an array of tuples.
    TupleArray(Box<Recipe>),
    /// `sum (map (fun r -> sum r) (map (fun y -> [y, body]) A))`: a nested
    /// array.
    Nested(Box<Recipe>),
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

/// Random programs with the constructs of Section 7 and Appendix A as
/// well as the paper's core.
pub fn extended() -> impl Strategy<Value = Recipe> {
    let leaf = prop_oneof![
        (0usize..8).prop_map(Recipe::Var),
        (-2.0f64..2.0).prop_map(|c| Recipe::Const((c * 4.0).round() / 4.0)),
        (any::<bool>(), 0i64..3).prop_map(|(w, k)| Recipe::Index(w, k)),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let bin = prop_oneof![
            Just(Prim::Add),
            Just(Prim::Sub),
            Just(Prim::Mul),
            Just(Prim::Max),
            Just(Prim::Min)
        ];
        let cmp = prop_oneof![
            Just(Prim::Lt),
            Just(Prim::Gt),
            Just(Prim::Le),
            Just(Prim::Ge)
        ];
        prop_oneof![
            (
                prop_oneof![Just(Prim::Sin), Just(Prim::Tanh), Just(Prim::Neg)],
                inner.clone()
            )
                .prop_map(|(o, a)| Recipe::Un(o, Box::new(a))),
            (bin, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Recipe::Bin(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (
                prop_oneof![
                    Just(Prim::Div),
                    Just(Prim::Log),
                    Just(Prim::Sqrt),
                    Just(Prim::Pow)
                ],
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(o, a, b)| Recipe::Safe(o, Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Recipe::Let(Box::new(a), Box::new(b))),
            (
                cmp,
                0u8..4,
                [inner.clone(), inner.clone(), inner.clone(), inner.clone()]
            )
                .prop_map(|(c, k, rs)| Recipe::If(c, k, Box::new(rs))),
            inner.clone().prop_map(|a| Recipe::Abs(Box::new(a))),
            (any::<bool>(), inner.clone(), inner.clone()).prop_map(|(w, a, b)| Recipe::Foldl(
                w,
                Box::new(a),
                Box::new(b)
            )),
            (any::<bool>(), inner.clone(), inner.clone()).prop_map(|(w, a, b)| Recipe::Scan(
                w,
                Box::new(a),
                Box::new(b)
            )),
            inner.clone().prop_map(|a| Recipe::Build(Box::new(a))),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Recipe::Ifold(Box::new(a), Box::new(b))),
            inner.clone().prop_map(|a| Recipe::Shifts(Box::new(a))),
            inner.clone().prop_map(|a| Recipe::ReduceFree(Box::new(a))),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Recipe::Literal(Box::new(a), Box::new(b))),
            inner.clone().prop_map(|a| Recipe::TupleArray(Box::new(a))),
            inner.clone().prop_map(|a| Recipe::Nested(Box::new(a))),
            (any::<bool>(), inner.clone()).prop_map(|(w, a)| Recipe::SumMap(w, Box::new(a))),
        ]
    })
}

/// `[n+k]T`.
fn sized(k: i64, elem: Ty) -> Ty {
    Ty::Array(Size::Var(Name::new("n"), k), Box::new(elem))
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
            Recipe::If(..)
            | Recipe::Abs(_)
            | Recipe::Foldl(..)
            | Recipe::Scan(..)
            | Recipe::Build(_)
            | Recipe::Ifold(..)
            | Recipe::Index(..)
            | Recipe::Shifts(_)
            | Recipe::ReduceFree(_)
            | Recipe::Literal(..)
            | Recipe::TupleArray(_)
            | Recipe::Nested(_) => self.extension(r, scope),
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

    /// `fun (p1 : T1, ...) -> body`.
    fn lam_typed(&mut self, params: &[(&str, Ty)], body: ExprId) -> ExprId {
        let ps: Vec<syntax::Param> = params
            .iter()
            .map(|(p, t)| syntax::Param {
                name: Name::new(*p),
                ty: Some(t.clone()),
                span: syntax::Span::new(0, 0),
            })
            .collect();
        let ty = Ty::Func(
            params.iter().map(|(_, t)| t.clone()).collect(),
            Box::new(self.b.m.types[body.index()].clone()),
        );
        self.add(Expr::Lambda { params: ps, body }, ty)
    }

    fn add(&mut self, e: Expr, ty: Ty) -> ExprId {
        let id = self.b.m.add(e, syntax::Span::new(0, 0));
        self.b.m.types.push(ty);
        id
    }

    fn int(&mut self, k: i64) -> ExprId {
        self.add(Expr::Int(k), Ty::Int)
    }

    /// `a[i]` of an array of reals.
    fn index(&mut self, a: ExprId, i: ExprId) -> ExprId {
        self.add(Expr::Index { array: a, index: i }, Ty::Real)
    }

    /// `reduce (+) 0 a`.
    fn sum(&mut self, a: ExprId) -> ExprId {
        let plus = self.plus();
        let zero = self.b.real(0.0);
        self.b.op(Prim::Reduce, vec![plus, zero, a])
    }

    /// The extensions of Section 7 and Appendix A.
    fn extension(&mut self, r: &Recipe, scope: &[String]) -> ExprId {
        match r {
            Recipe::If(cmp, k, rs) => {
                let (a, b) = (self.expr(&rs[0], scope), self.expr(&rs[1], scope));
                let c = self.b.prim(*cmp, vec![a, b], Ty::Bool);
                let c = match k {
                    1 => self.b.prim(Prim::Not, vec![c], Ty::Bool),
                    2 | 3 => {
                        let (x1, x2) = (self.b.var("x1", Ty::Real), self.b.var("x2", Ty::Real));
                        let d = self.b.prim(Prim::Lt, vec![x1, x2], Ty::Bool);
                        let op = if *k == 2 { Prim::And } else { Prim::Or };
                        self.b.prim(op, vec![c, d], Ty::Bool)
                    }
                    _ => c,
                };
                let (t, e) = (self.expr(&rs[2], scope), self.expr(&rs[3], scope));
                self.add(
                    Expr::If {
                        cond: c,
                        then_branch: t,
                        else_branch: e,
                    },
                    Ty::Real,
                )
            }
            Recipe::Abs(a) => {
                let a = self.expr(a, scope);
                self.b.op(Prim::Abs, vec![a])
            }
            Recipe::Foldl(which, init, body) => {
                let (acc, y) = (self.name("acc"), self.name("y"));
                let mut inner = scope.to_vec();
                inner.push(acc.clone());
                inner.push(y.clone());
                let e = self.expr(body, &inner);
                let lam = self.b.lam(&[&acc, &y], e);
                let init = self.expr(init, scope);
                let a = self.b.var(if *which { "A" } else { "B" }, arr());
                self.b.op(Prim::Foldl, vec![lam, init, a])
            }
            Recipe::Scan(left, init, body) => {
                let (acc, y) = (self.name("acc"), self.name("y"));
                let mut inner = scope.to_vec();
                inner.push(acc.clone());
                inner.push(y.clone());
                let e = self.expr(body, &inner);
                let lam = if *left {
                    self.b.lam(&[&acc, &y], e)
                } else {
                    self.b.lam(&[&y, &acc], e)
                };
                let init = self.expr(init, scope);
                let a = self.b.var("A", arr());
                let op = if *left { Prim::Scanl } else { Prim::Scanr };
                let sc = self.b.prim(op, vec![lam, init, a], sized(1, Ty::Real));
                self.sum(sc)
            }
            Recipe::Build(body) => {
                let (i, e) = (self.name("i"), self.name("e"));
                let mut inner = scope.to_vec();
                inner.push(e.clone());
                let be = self.expr(body, &inner);
                let a = self.b.var("A", arr());
                let iv = self.b.var(&i, Ty::Int);
                let ai = self.index(a, iv);
                let l = self.b.let_(&e, ai, be);
                let lam = self.lam_typed(&[(&i, Ty::Int)], l);
                let a = self.b.var("A", arr());
                let len = self.b.prim(Prim::Length, vec![a], Ty::Int);
                let bld = self.b.prim(Prim::Build, vec![len, lam], arr());
                self.sum(bld)
            }
            Recipe::Ifold(init, body) => {
                let (acc, i, e) = (self.name("acc"), self.name("i"), self.name("e"));
                let mut inner = scope.to_vec();
                inner.push(acc.clone());
                inner.push(e.clone());
                let be = self.expr(body, &inner);
                let bv = self.b.var("B", arr());
                let iv = self.b.var(&i, Ty::Int);
                let bi = self.index(bv, iv);
                let l = self.b.let_(&e, bi, be);
                let lam = self.lam_typed(&[(&acc, Ty::Real), (&i, Ty::Int)], l);
                let init = self.expr(init, scope);
                let bv = self.b.var("B", arr());
                let len = self.b.prim(Prim::Length, vec![bv], Ty::Int);
                self.b.op(Prim::Ifold, vec![lam, init, len])
            }
            Recipe::Index(which, k) => {
                let a = self.b.var(if *which { "A" } else { "B" }, arr());
                let k = self.int(*k);
                self.index(a, k)
            }
            Recipe::Shifts(body) => {
                let (u, v) = (self.name("u"), self.name("v"));
                let mut inner = scope.to_vec();
                inner.push(u.clone());
                inner.push(v.clone());
                let e = self.expr(body, &inner);
                let lam = self.b.lam(&[&u, &v], e);
                let (a, bb) = (self.b.var("A", arr()), self.b.var("B", arr()));
                let sa = self.b.prim(Prim::Shift1L, vec![a], sized(-1, Ty::Real));
                let sb = self.b.prim(Prim::Shift1R, vec![bb], sized(-1, Ty::Real));
                let m = self
                    .b
                    .prim(Prim::Map2, vec![lam, sa, sb], sized(-1, Ty::Real));
                self.sum(m)
            }
            Recipe::ReduceFree(w) => {
                let (u, v) = (self.name("u"), self.name("v"));
                let w = self.expr(w, scope);
                let (vu, vv) = (self.b.var(&u, Ty::Real), self.b.var(&v, Ty::Real));
                let vw = self.b.op(Prim::Mul, vec![vv, w]);
                let f = self.b.op(Prim::Add, vec![vu, vw]);
                let lam = self.b.lam(&[&u, &v], f);
                let zero = self.b.real(0.0);
                let a = self.b.var("A", arr());
                self.b.op(Prim::Reduce, vec![lam, zero, a])
            }
            Recipe::Literal(a, b) => {
                let (ea, eb) = (self.expr(a, scope), self.expr(b, scope));
                let lit = self.add(
                    Expr::Array(vec![ea, eb]),
                    Ty::Array(Size::Lit(2), Box::new(Ty::Real)),
                );
                self.sum(lit)
            }
            Recipe::TupleArray(body) => {
                let pair = Ty::Tuple(vec![Ty::Real, Ty::Real]);
                let y = self.name("y");
                let mut inner = scope.to_vec();
                inner.push(y.clone());
                let e = self.expr(body, &inner);
                let vy = self.b.var(&y, Ty::Real);
                let t = self.b.tuple(vec![vy, e]);
                let lam = self.b.lam(&[&y], t);
                let a = self.b.var("A", arr());
                let m = self.b.prim(Prim::Map, vec![lam, a], sized(0, pair.clone()));
                let (p, q) = (self.name("p"), self.name("q"));
                let (p1, q1) = (self.b.var(&p, pair.clone()), self.b.var(&q, pair.clone()));
                let (p1, q1) = (self.b.proj(p1, 1), self.b.proj(q1, 1));
                let first = self.b.op(Prim::Add, vec![p1, q1]);
                let (p2, q2) = (self.b.var(&p, pair.clone()), self.b.var(&q, pair.clone()));
                let (p2, q2) = (self.b.proj(p2, 2), self.b.proj(q2, 2));
                let second = self.b.op(Prim::Mul, vec![p2, q2]);
                let f = self.b.tuple(vec![first, second]);
                let f = self.lam_typed(&[(&p, pair.clone()), (&q, pair.clone())], f);
                let (z0, z1) = (self.b.real(0.0), self.b.real(1.0));
                let z = self.b.tuple(vec![z0, z1]);
                let red = self.b.prim(Prim::Reduce, vec![f, z, m], pair);
                let (s1, s2) = (self.name("s"), self.name("s"));
                let (v1, v2) = (self.b.var(&s1, Ty::Real), self.b.var(&s2, Ty::Real));
                let body = self.b.op(Prim::Add, vec![v1, v2]);
                self.b.let_tuple(&[&s1, &s2], red, body)
            }
            Recipe::Nested(body) => {
                let row = Ty::Array(Size::Lit(2), Box::new(Ty::Real));
                let y = self.name("y");
                let mut inner = scope.to_vec();
                inner.push(y.clone());
                let e = self.expr(body, &inner);
                let vy = self.b.var(&y, Ty::Real);
                let lit = self.add(Expr::Array(vec![vy, e]), row.clone());
                let lam = self.b.lam(&[&y], lit);
                let a = self.b.var("A", arr());
                let rows = self.b.prim(Prim::Map, vec![lam, a], sized(0, row.clone()));
                let rname = self.name("row");
                let rv = self.b.var(&rname, row.clone());
                let rs = self.sum(rv);
                let lam = self.lam_typed(&[(&rname, row)], rs);
                let sums = self.b.prim(Prim::Map, vec![lam, rows], arr());
                self.sum(sums)
            }
            _ => unreachable!("not an extension"),
        }
    }

    fn plus(&mut self) -> ExprId {
        let (x, y) = (self.name("r"), self.name("r"));
        let (vx, vy) = (self.b.var(&x, Ty::Real), self.b.var(&y, Ty::Real));
        let f = self.b.op(Prim::Add, vec![vx, vy]);
        self.b.lam(&[&x, &y], f)
    }
}
