//! Test helpers: a builder of core-form Source modules, and a small
//! evaluator of the Target programs `raise` writes.
#![allow(dead_code)]

pub mod programs;

use std::collections::HashMap;
use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty};

pub fn arr() -> Ty {
    Ty::Array(Size::Var(Name::new("n"), 0), Box::new(Ty::Real))
}

/// Builds a core-form module bottom-up.
pub struct B {
    pub m: Module,
}

impl B {
    pub fn new() -> B {
        B {
            m: Module::new(SourceFile {
                name: "test.ad".into(),
                text: String::new(),
            }),
        }
    }
    fn add(&mut self, e: Expr, ty: Ty) -> ExprId {
        let id = self.m.add(e, Span::new(0, 0));
        self.m.types.push(ty);
        id
    }
    pub fn var(&mut self, x: &str, ty: Ty) -> ExprId {
        self.add(Expr::Var(Name::new(x)), ty)
    }
    pub fn real(&mut self, c: f64) -> ExprId {
        self.add(Expr::Real(c), Ty::Real)
    }
    pub fn op(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.add(Expr::Prim { op, args }, Ty::Real)
    }
    pub fn prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty) -> ExprId {
        self.add(Expr::Prim { op, args }, ty)
    }
    pub fn let_(&mut self, x: &str, value: ExprId, body: ExprId) -> ExprId {
        let ty = self.m.types[body.index()].clone();
        self.add(
            Expr::Let {
                pat: Pat::Var(Name::new(x)),
                ty: None,
                value,
                body,
            },
            ty,
        )
    }
    pub fn let_tuple(&mut self, xs: &[&str], value: ExprId, body: ExprId) -> ExprId {
        let ty = self.m.types[body.index()].clone();
        let pat = Pat::Tuple(xs.iter().map(|x| Name::new(*x)).collect());
        self.add(
            Expr::Let {
                pat,
                ty: None,
                value,
                body,
            },
            ty,
        )
    }
    pub fn tuple(&mut self, items: Vec<ExprId>) -> ExprId {
        let ty = Ty::Tuple(
            items
                .iter()
                .map(|i| self.m.types[i.index()].clone())
                .collect(),
        );
        self.add(Expr::Tuple(items), ty)
    }
    pub fn proj(&mut self, t: ExprId, index: u32) -> ExprId {
        let Ty::Tuple(items) = self.m.types[t.index()].clone() else {
            panic!()
        };
        self.add(
            Expr::Proj { tuple: t, index },
            items[index as usize - 1].clone(),
        )
    }
    pub fn lam(&mut self, params: &[&str], body: ExprId) -> ExprId {
        let ps: Vec<Param> = params
            .iter()
            .map(|p| Param {
                name: Name::new(*p),
                ty: Some(Ty::Real),
                span: Span::new(0, 0),
            })
            .collect();
        let ty = Ty::Func(
            vec![Ty::Real; params.len()],
            Box::new(self.m.types[body.index()].clone()),
        );
        self.add(Expr::Lambda { params: ps, body }, ty)
    }
    pub fn def(mut self, name: &str, params: &[(&str, Ty)], body: ExprId) -> Module {
        let ret = self.m.types[body.index()].clone();
        self.m.defs.push(Def {
            name: Name::new(name),
            name_span: Span::new(0, 0),
            params: params
                .iter()
                .map(|(n, t)| Param {
                    name: Name::new(*n),
                    ty: Some(t.clone()),
                    span: Span::new(0, 0),
                })
                .collect(),
            ret: Some(ret),
            body,
        });
        self.m
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum V {
    R(f64),
    I(i64),
    B(bool),
    A(Vec<V>),
    T(Vec<V>),
    F(Vec<Name>, ExprId, HashMap<Name, V>),
}

impl V {
    pub fn r(&self) -> f64 {
        match self {
            V::R(x) => *x,
            other => panic!("not a real: {other:?}"),
        }
    }
    pub fn reals(&self) -> Vec<f64> {
        match self {
            V::A(xs) => xs.iter().map(V::r).collect(),
            V::R(x) => vec![*x],
            other => panic!("not an array: {other:?}"),
        }
    }
}

pub fn run(m: &Module, args: &[V]) -> V {
    let def = m.defs.last().expect("a definition");
    let mut env = HashMap::new();
    for (p, a) in def.params.iter().zip(args) {
        env.insert(p.name.clone(), a.clone());
    }
    eval(m, def.body, &env)
}

fn call(m: &Module, f: &V, args: Vec<V>) -> V {
    let V::F(ps, body, env) = f else { panic!() };
    let mut env = env.clone();
    for (p, a) in ps.iter().zip(args) {
        env.insert(p.clone(), a);
    }
    eval(m, *body, &env)
}

pub fn eval(m: &Module, e: ExprId, env: &HashMap<Name, V>) -> V {
    syntax::stack::guard(|| match m.expr(e) {
        Expr::Var(x) => env.get(x).cloned().unwrap_or_else(|| panic!("unbound {x}")),
        Expr::Real(c) => V::R(*c),
        Expr::Int(i) => V::I(*i),
        Expr::Bool(b) => V::B(*b),
        Expr::Let {
            pat, value, body, ..
        } => {
            let v = eval(m, *value, env);
            let mut env = env.clone();
            match pat {
                Pat::Var(x) => {
                    env.insert(x.clone(), v);
                }
                Pat::Tuple(xs) => {
                    let V::T(vs) = v else { panic!() };
                    for (x, v) in xs.iter().zip(vs) {
                        env.insert(x.clone(), v);
                    }
                }
            }
            eval(m, *body, &env)
        }
        Expr::Tuple(items) => V::T(items.iter().map(|i| eval(m, *i, env)).collect()),
        Expr::Proj { tuple, index } => {
            let V::T(vs) = eval(m, *tuple, env) else {
                panic!()
            };
            vs[*index as usize - 1].clone()
        }
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => {
            if eval(m, *cond, env) == V::B(true) {
                eval(m, *then_branch, env)
            } else {
                eval(m, *else_branch, env)
            }
        }
        Expr::Lambda { params, body } => V::F(
            params.iter().map(|p| p.name.clone()).collect(),
            *body,
            env.clone(),
        ),
        Expr::Prim { op, args } => {
            let a: Vec<V> = args.iter().map(|x| eval(m, *x, env)).collect();
            prim(m, *op, a)
        }
        other => panic!("unsupported {other:?}"),
    })
}

fn prim(m: &Module, op: Prim, a: Vec<V>) -> V {
    let r = |i: usize| a[i].r();
    match op {
        Prim::Add => match (&a[0], &a[1]) {
            (V::I(x), V::I(y)) => V::I(x + y),
            _ => V::R(r(0) + r(1)),
        },
        Prim::Sub => V::R(r(0) - r(1)),
        Prim::Mul => V::R(r(0) * r(1)),
        Prim::Div => V::R(r(0) / r(1)),
        Prim::Neg => V::R(-r(0)),
        Prim::Sin => V::R(r(0).sin()),
        Prim::Cos => V::R(r(0).cos()),
        Prim::Tan => V::R(r(0).tan()),
        Prim::Exp => V::R(r(0).exp()),
        Prim::Log => V::R(r(0).ln()),
        Prim::Sqrt => V::R(r(0).sqrt()),
        Prim::Tanh => V::R(r(0).tanh()),
        Prim::Abs => V::R(r(0).abs()),
        Prim::Pow => V::R(r(0).powf(r(1))),
        Prim::Max => V::R(r(0).max(r(1))),
        Prim::Min => V::R(r(0).min(r(1))),
        Prim::Lt => V::B(r(0) < r(1)),
        Prim::Le => V::B(r(0) <= r(1)),
        Prim::Gt => V::B(r(0) > r(1)),
        Prim::Ge => V::B(r(0) >= r(1)),
        Prim::Eq => V::B(r(0) == r(1)),
        Prim::Map => {
            let V::A(xs) = &a[1] else { panic!() };
            V::A(xs.iter().map(|x| call(m, &a[0], vec![x.clone()])).collect())
        }
        Prim::Map2 => {
            let (V::A(xs), V::A(ys)) = (&a[1], &a[2]) else {
                panic!()
            };
            assert_eq!(xs.len(), ys.len(), "map2 sizes");
            V::A(
                xs.iter()
                    .zip(ys)
                    .map(|(x, y)| call(m, &a[0], vec![x.clone(), y.clone()]))
                    .collect(),
            )
        }
        Prim::Reduce => {
            let V::A(xs) = &a[2] else { panic!() };
            xs.iter()
                .fold(a[1].clone(), |acc, x| call(m, &a[0], vec![acc, x.clone()]))
        }
        Prim::Scanl => {
            let V::A(xs) = &a[2] else { panic!() };
            let mut acc = a[1].clone();
            let mut out = vec![acc.clone()];
            for x in xs {
                acc = call(m, &a[0], vec![acc, x.clone()]);
                out.push(acc.clone());
            }
            V::A(out)
        }
        Prim::Scanr => {
            let V::A(xs) = &a[2] else { panic!() };
            let mut acc = a[1].clone();
            let mut out = vec![acc.clone()];
            for x in xs.iter().rev() {
                acc = call(m, &a[0], vec![x.clone(), acc]);
                out.push(acc.clone());
            }
            out.reverse();
            V::A(out)
        }
        Prim::Shift1L => {
            let V::A(xs) = &a[0] else { panic!() };
            V::A(xs.iter().skip(1).cloned().collect())
        }
        Prim::Shift1R => {
            let V::A(xs) = &a[0] else { panic!() };
            let n = xs.len().saturating_sub(1);
            V::A(xs[..n].to_vec())
        }
        other => panic!("unsupported prim {other:?}"),
    }
}

/// `def chain (a : R) (x : R) : R = let x1 = x * a + sin x in ... in x_n`.
pub fn chain(n: usize) -> syntax::Module {
    let mut b = B::new();
    let mut values = Vec::new();
    for i in 1..=n {
        let prev = if i == 1 {
            "x".to_string()
        } else {
            format!("x{}", i - 1)
        };
        let p1 = b.var(&prev, Ty::Real);
        let a = b.var("a", Ty::Real);
        let m = b.op(Prim::Mul, vec![p1, a]);
        let p2 = b.var(&prev, Ty::Real);
        let s = b.op(Prim::Sin, vec![p2]);
        values.push(b.op(Prim::Add, vec![m, s]));
    }
    let mut body = b.var(&format!("x{n}"), Ty::Real);
    for i in (1..=n).rev() {
        body = b.let_(&format!("x{i}"), values[i - 1], body);
    }
    b.def("chain", &[("a", Ty::Real), ("x", Ty::Real)], body)
}
