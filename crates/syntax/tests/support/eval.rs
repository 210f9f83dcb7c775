//! A reference evaluator for core-form programs, written for tests only:
//! call-by-value, straight from the rules of language.md, with no sharing
//! of code with the compiler. Derivative constructs are not evaluated.

use std::collections::HashMap;

use syntax::{Expr, ExprId, Module, Name, Pat, Prim};

/// A value.
#[derive(Clone, Debug)]
pub enum V {
    R(f64),
    I(i64),
    B(bool),
    /// An array or a tuple.
    A(Vec<V>),
    T(Vec<V>),
    /// A lambda and the environment it was made in.
    F(ExprId, Env),
}

/// Values compare with NaN equal to itself (the programs are compared, not
/// the arithmetic).
impl PartialEq for V {
    fn eq(&self, other: &V) -> bool {
        match (self, other) {
            (V::R(a), V::R(b)) => a == b || (a.is_nan() && b.is_nan()),
            (V::I(a), V::I(b)) => a == b,
            (V::B(a), V::B(b)) => a == b,
            (V::A(a), V::A(b)) | (V::T(a), V::T(b)) => a == b,
            _ => false,
        }
    }
}

pub type Env = HashMap<Name, V>;

/// A run-time error (a size or an index out of range, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Fail(pub String);

type Res = Result<V, Fail>;

fn fail<T>(s: &str) -> Result<T, Fail> {
    Err(Fail(s.into()))
}

/// Calls definition `def` of `m` on `args`.
pub fn call(m: &Module, def: usize, args: Vec<V>) -> Res {
    let d = &m.defs[def];
    let env: Env = d.params.iter().map(|p| p.name.clone()).zip(args).collect();
    eval(m, d.body, &env)
}

fn real(v: &V) -> Result<f64, Fail> {
    match v {
        V::R(x) => Ok(*x),
        _ => fail("expected a real"),
    }
}

fn int(v: &V) -> Result<i64, Fail> {
    match v {
        V::I(x) => Ok(*x),
        _ => fail("expected an int"),
    }
}

fn boolean(v: &V) -> Result<bool, Fail> {
    match v {
        V::B(x) => Ok(*x),
        _ => fail("expected a bool"),
    }
}

fn items(v: &V) -> Result<&Vec<V>, Fail> {
    match v {
        V::A(xs) => Ok(xs),
        _ => fail("expected an array"),
    }
}

pub fn apply(m: &Module, f: &V, args: Vec<V>) -> Res {
    let V::F(lambda, env) = f else {
        return fail("expected a function");
    };
    let Expr::Lambda { params, body } = m.expr(*lambda) else {
        return fail("not a lambda");
    };
    let mut env = env.clone();
    if params.len() != args.len() {
        return fail("arity");
    }
    for (p, a) in params.iter().zip(args) {
        env.insert(p.name.clone(), a);
    }
    eval(m, *body, &env)
}

pub fn eval(m: &Module, id: ExprId, env: &Env) -> Res {
    match m.expr(id) {
        Expr::Var(x) => env
            .get(x)
            .cloned()
            .ok_or_else(|| Fail(format!("unbound {x}"))),
        Expr::Real(x) => Ok(V::R(*x)),
        Expr::Int(k) => Ok(V::I(*k)),
        Expr::Bool(b) => Ok(V::B(*b)),
        Expr::Let {
            pat, value, body, ..
        } => {
            let v = eval(m, *value, env)?;
            let mut env = env.clone();
            match pat {
                Pat::Var(x) => {
                    env.insert(x.clone(), v);
                }
                Pat::Tuple(xs) => match v {
                    V::T(vs) if vs.len() == xs.len() => {
                        for (x, v) in xs.iter().zip(vs) {
                            env.insert(x.clone(), v);
                        }
                    }
                    _ => return fail("destructuring"),
                },
            }
            eval(m, *body, &env)
        }
        Expr::Tuple(xs) => Ok(V::T(
            xs.iter()
                .map(|&x| eval(m, x, env))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Array(xs) => Ok(V::A(
            xs.iter()
                .map(|&x| eval(m, x, env))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Reals(lit) => {
            // Row-major: the outermost dimension splits the numbers first.
            fn rows(shape: &[u64], data: &[f64]) -> V {
                match shape {
                    [_] => V::A(data.iter().map(|&x| V::R(x)).collect()),
                    [n, inner @ ..] => V::A(
                        data.chunks(data.len() / *n as usize)
                            .map(|r| rows(inner, r))
                            .collect(),
                    ),
                    [] => V::T(Vec::new()),
                }
            }
            Ok(rows(&lit.shape, &lit.data))
        }
        Expr::Proj { tuple, index } => match eval(m, *tuple, env)? {
            V::T(vs) => vs
                .get(*index as usize - 1)
                .cloned()
                .ok_or_else(|| Fail("projection".into())),
            _ => fail("expected a tuple"),
        },
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => {
            if boolean(&eval(m, *cond, env)?)? {
                eval(m, *then_branch, env)
            } else {
                eval(m, *else_branch, env)
            }
        }
        Expr::Lambda { .. } => Ok(V::F(id, env.clone())),
        Expr::App { func, args } => {
            let f = eval(m, *func, env)?;
            let args = args
                .iter()
                .map(|&a| eval(m, a, env))
                .collect::<Result<_, _>>()?;
            apply(m, &f, args)
        }
        Expr::Index { array, index } => {
            let a = eval(m, *array, env)?;
            let i = int(&eval(m, *index, env)?)?;
            let xs = items(&a)?;
            usize::try_from(i)
                .ok()
                .and_then(|i| xs.get(i).cloned())
                .ok_or_else(|| Fail("index out of bounds".into()))
        }
        Expr::Prim { op, args } => {
            let vs: Vec<V> = args
                .iter()
                .map(|&a| eval(m, a, env))
                .collect::<Result<_, _>>()?;
            prim(m, *op, &vs)
        }
        Expr::Section(_) => fail("section"),
    }
}

fn arith(op: Prim, a: &V, b: &V) -> Res {
    match (a, b) {
        (V::R(x), V::R(y)) => Ok(V::R(match op {
            Prim::Add => x + y,
            Prim::Sub => x - y,
            Prim::Mul => x * y,
            _ => return fail("arith"),
        })),
        (V::I(x), V::I(y)) => Ok(V::I(match op {
            Prim::Add => x.wrapping_add(*y),
            Prim::Sub => x.wrapping_sub(*y),
            Prim::Mul => x.wrapping_mul(*y),
            _ => return fail("arith"),
        })),
        _ => fail("arith operands"),
    }
}

fn compare(op: Prim, a: &V, b: &V) -> Res {
    let ord = match (a, b) {
        (V::R(x), V::R(y)) => x.partial_cmp(y),
        (V::I(x), V::I(y)) => Some(x.cmp(y)),
        (V::B(x), V::B(y)) => Some(x.cmp(y)),
        _ => return fail("compare"),
    };
    use std::cmp::Ordering::*;
    Ok(V::B(match op {
        Prim::Lt => ord == Some(Less),
        Prim::Le => matches!(ord, Some(Less | Equal)),
        Prim::Gt => ord == Some(Greater),
        Prim::Ge => matches!(ord, Some(Greater | Equal)),
        Prim::Eq => ord == Some(Equal),
        Prim::Ne => ord != Some(Equal),
        _ => return fail("compare"),
    }))
}

fn prim(m: &Module, op: Prim, v: &[V]) -> Res {
    let r = |f: fn(f64) -> f64| -> Res { Ok(V::R(f(real(&v[0])?))) };
    match op {
        Prim::Add | Prim::Sub | Prim::Mul => arith(op, &v[0], &v[1]),
        Prim::Div | Prim::Mod if matches!(v[0], V::I(_)) => match (&v[0], &v[1]) {
            (V::I(a), V::I(b)) => match syntax::derivatives::eval_int(op, *a, *b) {
                Some(Ok(q)) => Ok(V::I(q)),
                _ => fail("integer division"),
            },
            _ => fail("integer division operands"),
        },
        Prim::Div => Ok(V::R(real(&v[0])? / real(&v[1])?)),
        Prim::Mod => fail("mod of reals"),
        Prim::Real => match &v[0] {
            V::I(n) => Ok(V::R(syntax::derivatives::to_real(*n))),
            _ => fail("real"),
        },
        Prim::Floor | Prim::Ceil | Prim::Round | Prim::Trunc => {
            match syntax::derivatives::to_int(op, real(&v[0])?) {
                Some(Ok(n)) => Ok(V::I(n)),
                _ => fail("no Int value"),
            }
        }
        Prim::Neg => match &v[0] {
            V::R(x) => Ok(V::R(-x)),
            V::I(x) => Ok(V::I(x.wrapping_neg())),
            _ => fail("neg"),
        },
        Prim::Sin => r(f64::sin),
        Prim::Cos => r(f64::cos),
        Prim::Tan => r(f64::tan),
        Prim::Exp => r(f64::exp),
        Prim::Log => r(f64::ln),
        Prim::Sqrt => r(f64::sqrt),
        Prim::Tanh => r(f64::tanh),
        Prim::Abs => r(f64::abs),
        Prim::Pow => Ok(V::R(real(&v[0])?.powf(real(&v[1])?))),
        Prim::Max => Ok(V::R(real(&v[0])?.max(real(&v[1])?))),
        Prim::Min => Ok(V::R(real(&v[0])?.min(real(&v[1])?))),
        Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => {
            compare(op, &v[0], &v[1])
        }
        Prim::And => Ok(V::B(boolean(&v[0])? && boolean(&v[1])?)),
        Prim::Or => Ok(V::B(boolean(&v[0])? || boolean(&v[1])?)),
        Prim::Not => Ok(V::B(!boolean(&v[0])?)),
        Prim::Map => Ok(V::A(
            items(&v[1])?
                .iter()
                .map(|x| apply(m, &v[0], vec![x.clone()]))
                .collect::<Result<_, _>>()?,
        )),
        Prim::Map2 => {
            let (a, b) = (items(&v[1])?, items(&v[2])?);
            if a.len() != b.len() {
                return fail("map2 sizes");
            }
            Ok(V::A(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| apply(m, &v[0], vec![x.clone(), y.clone()]))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Prim::Reduce | Prim::Foldl => {
            let mut acc = v[1].clone();
            for x in items(&v[2])? {
                acc = apply(m, &v[0], vec![acc, x.clone()])?;
            }
            Ok(acc)
        }
        Prim::Scanl => {
            let mut acc = v[1].clone();
            let mut out = vec![acc.clone()];
            for x in items(&v[2])? {
                acc = apply(m, &v[0], vec![acc, x.clone()])?;
                out.push(acc.clone());
            }
            Ok(V::A(out))
        }
        Prim::Scanr => {
            let mut acc = v[1].clone();
            let mut out = vec![acc.clone()];
            for x in items(&v[2])?.iter().rev() {
                acc = apply(m, &v[0], vec![x.clone(), acc])?;
                out.push(acc.clone());
            }
            out.reverse();
            Ok(V::A(out))
        }
        Prim::Shift1L => Ok(V::A(items(&v[0])?.iter().skip(1).cloned().collect())),
        Prim::Shift1R => {
            let xs = items(&v[0])?;
            Ok(V::A(xs[..xs.len().saturating_sub(1)].to_vec()))
        }
        Prim::Length => Ok(V::I(items(&v[0])?.len() as i64)),
        Prim::Build => {
            let n = int(&v[0])?;
            Ok(V::A(
                (0..n.max(0))
                    .map(|i| apply(m, &v[1], vec![V::I(i)]))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Prim::Ifold => {
            let mut acc = v[1].clone();
            for i in 0..int(&v[2])?.max(0) {
                acc = apply(m, &v[0], vec![acc, V::I(i)])?;
            }
            Ok(acc)
        }
        _ if op.is_derivative_construct() => fail("derivative constructs are not evaluated here"),
        // The table's other real functions (the derivative primitives, the
        // special functions, ...).
        _ => {
            let xs = v.iter().map(real).collect::<Result<Vec<_>, _>>()?;
            match syntax::derivatives::eval(op, &xs) {
                Some(x) => Ok(V::R(x)),
                None => fail("a primitive without a real value"),
            }
        }
    }
}
