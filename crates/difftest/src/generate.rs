//! The random program generator: well-typed by construction, sized by a
//! node budget, and inputs drawn away from the singular points of the
//! partial operations (rejection sampling against [`crate::ast::eval`]).
//!
//! The programs cover what reverse mode accepts today (Section 3 plus
//! tuples): scalar chains, variables used several times (a variable is the
//! most likely leaf), `let` and tuple patterns, tuples and projections,
//! every unary and binary operator, and `map`, `map2`, `reduce` whose
//! bodies use several operations and nest further array operations over
//! the arrays in scope, up to [`Features::max_nao`] deep. Parameters mix
//! reals, arrays of two sizes and tuples.

use crate::ast::{GExpr, GTy, GVal, Program, eval};
use crate::rng::Rng;
use syntax::Prim;

/// Which constructs a generated program may use.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// The deepest nesting of array operations (NAO).
    pub max_nao: u32,
    /// Whether the function and initial value of `reduce` may read
    /// variables of the program (Section 7.1).
    pub open_reduce: bool,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            max_nao: 3,
            open_reduce: false,
        }
    }
}

const OP1: [Prim; 9] = [
    Prim::Neg,
    Prim::Sin,
    Prim::Cos,
    Prim::Tan,
    Prim::Exp,
    Prim::Log,
    Prim::Sqrt,
    Prim::Tanh,
    Prim::Abs,
];
const OP2: [Prim; 7] = [
    Prim::Add,
    Prim::Sub,
    Prim::Mul,
    Prim::Div,
    Prim::Pow,
    Prim::Max,
    Prim::Min,
];

type Env = Vec<(String, GTy)>;

struct Gen<'a> {
    rng: &'a mut Rng,
    feat: &'a Features,
    next: usize,
}

impl Gen<'_> {
    fn fresh(&mut self, base: &str) -> String {
        self.next += 1;
        format!("{base}{}", self.next)
    }

    fn vars_of<'e>(&self, env: &'e Env, ty: &GTy) -> Vec<&'e str> {
        env.iter()
            .filter(|(_, t)| t == ty)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// The array types some variable in scope has (arrays are only ever
    /// made from other arrays, so these are the ones that can be built).
    fn arrays(&self, env: &Env) -> Vec<usize> {
        let mut out = Vec::new();
        for (_, t) in env {
            collect_arrays(t, &mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    /// A type for a `let` or a tuple component, buildable in `env`.
    fn some_ty(&mut self, env: &Env, depth: u32) -> GTy {
        let arrays = self.arrays(env);
        let choice = self.rng.weighted(&[
            6,
            if arrays.is_empty() { 0 } else { 3 },
            if depth < 1 { 2 } else { 0 },
        ]);
        match choice {
            0 => GTy::Real,
            1 => GTy::Array(arrays[self.rng.below(arrays.len())]),
            _ => {
                let k = 2 + self.rng.below(2);
                GTy::Tuple((0..k).map(|_| self.some_ty(env, depth + 1)).collect())
            }
        }
    }

    fn constant(&mut self) -> GExpr {
        let c = match self.rng.below(4) {
            0 => 1.0,
            1 => 2.0,
            2 => 0.5,
            _ => (self.rng.range(0.1, 3.0) * 100.0).round() / 100.0,
        };
        GExpr::Const(c)
    }

    /// An expression of type `ty` of about `size` nodes.
    fn expr(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let vars = self.vars_of(env, ty);
        if !vars.is_empty() && (size <= 1 || self.rng.chance(0.15)) {
            return GExpr::Var(vars[self.rng.below(vars.len())].to_string());
        }
        match ty {
            GTy::Real => self.real(size, env, nao),
            GTy::Array(s) => self.array(*s, size, env, nao),
            GTy::Tuple(ts) => {
                if size > 4 && self.rng.chance(0.2) {
                    return self.let_in(ty, size, env, nao);
                }
                let each = (size.saturating_sub(1) / ts.len()).max(1);
                GExpr::Tuple(ts.iter().map(|t| self.expr(t, each, env, nao)).collect())
            }
        }
    }

    fn real(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        if size <= 1 {
            return self.constant();
        }
        let arrays = self.arrays(env);
        let can_reduce = nao < self.feat.max_nao && !arrays.is_empty() && size >= 4;
        let w = [
            30,                                         // op2
            16,                                         // op1
            if size >= 4 { 14 } else { 0 },             // let
            if size >= 5 { 4 } else { 0 },              // let tuple
            if size >= 3 { 5 } else { 0 },              // proj
            if can_reduce { 16 + 14 * nao } else { 0 }, // reduce, likelier in bodies
        ];
        match self.rng.weighted(&w) {
            0 => {
                let op = OP2[self.rng.below(OP2.len())];
                let left = 1 + self.rng.below(size - 1);
                let a = self.expr(&GTy::Real, left, env, nao);
                let b = self.expr(&GTy::Real, (size - 1 - left).max(1), env, nao);
                let b = if matches!(op, Prim::Div) && self.rng.chance(0.5) {
                    positive(b)
                } else {
                    b
                };
                let a = if matches!(op, Prim::Pow) {
                    positive(a)
                } else {
                    a
                };
                let b = if matches!(op, Prim::Pow) && self.rng.chance(0.5) {
                    self.constant()
                } else {
                    b
                };
                GExpr::Op2(op, Box::new(a), Box::new(b))
            }
            1 => {
                let op = OP1[self.rng.below(OP1.len())];
                let a = self.expr(&GTy::Real, size - 1, env, nao);
                let a = if matches!(op, Prim::Log | Prim::Sqrt) && self.rng.chance(0.7) {
                    positive(a)
                } else {
                    a
                };
                GExpr::Op1(op, Box::new(a))
            }
            2 => self.let_in(&GTy::Real, size, env, nao),
            3 => self.let_tuple(&GTy::Real, size, env, nao),
            4 => {
                let other = self.some_ty(env, 1);
                let i = self.rng.below(2);
                let mut ts = vec![other];
                ts.insert(i, GTy::Real);
                let t = self.expr(&GTy::Tuple(ts), size - 1, env, nao);
                GExpr::Proj(Box::new(t), i + 1)
            }
            _ => {
                let s = arrays[self.rng.below(arrays.len())];
                let (x, y) = (self.fresh("a"), self.fresh("b"));
                let body_size = 3 + self.rng.below(size / 2 + 1);
                let mut body_env: Env = if self.feat.open_reduce {
                    env.clone()
                } else {
                    Vec::new()
                };
                body_env.push((x.clone(), GTy::Real));
                body_env.push((y.clone(), GTy::Real));
                let body = self.expr(&GTy::Real, body_size, &body_env, nao + 1);
                let init = if self.feat.open_reduce && self.rng.chance(0.5) {
                    self.expr(&GTy::Real, 2, env, nao)
                } else {
                    self.constant()
                };
                let arr = self.expr(&GTy::Array(s), (size / 2).max(1), env, nao);
                GExpr::Reduce(x, y, Box::new(body), Box::new(init), Box::new(arr))
            }
        }
    }

    fn array(&mut self, s: usize, size: usize, env: &Env, nao: u32) -> GExpr {
        let vars = self.vars_of(env, &GTy::Array(s));
        let can_map = nao < self.feat.max_nao;
        if size <= 2 || !can_map {
            if !vars.is_empty() {
                return GExpr::Var(vars[self.rng.below(vars.len())].to_string());
            }
            // A projection of a tuple variable holding such an array.
            for (n, t) in env {
                if let GTy::Tuple(ts) = t
                    && let Some(i) = ts.iter().position(|t| *t == GTy::Array(s))
                {
                    return GExpr::Proj(Box::new(GExpr::Var(n.clone())), i + 1);
                }
            }
        }
        let w = [
            if can_map { 40 } else { 0 },
            if can_map { 25 } else { 0 },
            if size >= 4 { 15 } else { 0 },
            1,
        ];
        match self.rng.weighted(&w) {
            0 => {
                let x = self.fresh("x");
                let mut body_env = env.clone();
                body_env.push((x.clone(), GTy::Real));
                let body_size = 2 + self.rng.below(size / 2 + 2);
                let body = self.expr(&GTy::Real, body_size, &body_env, nao + 1);
                let arr = self.expr(&GTy::Array(s), size / 3, env, nao);
                GExpr::Map(x, Box::new(body), Box::new(arr))
            }
            1 => {
                let (x, y) = (self.fresh("x"), self.fresh("y"));
                let mut body_env = env.clone();
                body_env.push((x.clone(), GTy::Real));
                body_env.push((y.clone(), GTy::Real));
                let body_size = 3 + self.rng.below(size / 2 + 2);
                let body = self.expr(&GTy::Real, body_size, &body_env, nao + 1);
                let a = self.expr(&GTy::Array(s), size / 4, env, nao);
                let b = self.expr(&GTy::Array(s), size / 4, env, nao);
                GExpr::Map2(x, y, Box::new(body), Box::new(a), Box::new(b))
            }
            2 => self.let_in(&GTy::Array(s), size, env, nao),
            _ => match vars.first() {
                Some(v) => GExpr::Var(v.to_string()),
                None => {
                    let x = self.fresh("x");
                    let mut body_env = env.clone();
                    body_env.push((x.clone(), GTy::Real));
                    let body = self.expr(&GTy::Real, 2, &body_env, nao + 1);
                    let arr = self.expr(&GTy::Array(s), 1, env, nao);
                    GExpr::Map(x, Box::new(body), Box::new(arr))
                }
            },
        }
    }

    fn let_in(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let vty = self.some_ty(env, 0);
        let x = self.fresh("v");
        let vsize = 1 + self.rng.below(size / 2);
        let value = self.expr(&vty, vsize, env, nao);
        let mut env2 = env.clone();
        env2.push((x.clone(), vty));
        let body = self.expr(ty, size.saturating_sub(vsize + 1).max(1), &env2, nao);
        GExpr::Let(x, Box::new(value), Box::new(body))
    }

    fn let_tuple(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let k = 2 + self.rng.below(2);
        let ts: Vec<GTy> = (0..k).map(|_| self.some_ty(env, 1)).collect();
        let names: Vec<String> = (0..k).map(|_| self.fresh("w")).collect();
        let vsize = 1 + self.rng.below(size / 2);
        let value = self.expr(&GTy::Tuple(ts.clone()), vsize, env, nao);
        let mut env2 = env.clone();
        env2.extend(names.iter().cloned().zip(ts));
        let body = self.expr(ty, size.saturating_sub(vsize + 1).max(1), &env2, nao);
        GExpr::LetTuple(names, Box::new(value), Box::new(body))
    }
}

fn collect_arrays(t: &GTy, out: &mut Vec<usize>) {
    match t {
        GTy::Array(s) => out.push(*s),
        GTy::Tuple(ts) => ts.iter().for_each(|t| collect_arrays(t, out)),
        GTy::Real => {}
    }
}

/// `e * e + 0.5`: keeps the argument of a partial operation positive.
fn positive(e: GExpr) -> GExpr {
    let sq = GExpr::Op2(Prim::Mul, Box::new(e.clone()), Box::new(e));
    GExpr::Op2(Prim::Add, Box::new(sq), Box::new(GExpr::Const(0.5)))
}

/// A random program of about `size` nodes using `features`.
pub fn gen_program(rng: &mut Rng, size: usize, features: &Features) -> Program {
    let mut g = Gen {
        rng,
        feat: features,
        next: 0,
    };
    let k = 1 + g.rng.below(4);
    let mut params: Vec<(String, GTy)> = Vec::new();
    for _ in 0..k {
        let ty = match g.rng.weighted(&[5, 4, 2, 2]) {
            0 => GTy::Real,
            1 => GTy::Array(0),
            2 => GTy::Array(1),
            _ => {
                let second = if g.rng.chance(0.5) {
                    GTy::Array(0)
                } else {
                    GTy::Real
                };
                GTy::Tuple(vec![GTy::Real, second])
            }
        };
        let name = g.fresh(if matches!(ty, GTy::Array(_)) {
            "A"
        } else {
            "x"
        });
        params.push((name, ty));
    }
    let env = params.clone();
    let body = g.expr(&GTy::Real, size.max(2), &env, 0);
    Program {
        params,
        ret: GTy::Real,
        body,
    }
}

/// A random program of about `size` nodes returning an array `[n]R` (for
/// the dot-product test between forward and reverse mode).
pub fn gen_vector_program(rng: &mut Rng, size: usize, features: &Features) -> Program {
    let mut p = gen_program(rng, size, features);
    if !p.params.iter().any(|(_, t)| *t == GTy::Array(0)) {
        p.params.push(("A0".to_string(), GTy::Array(0)));
    }
    let mut g = Gen {
        rng,
        feat: features,
        next: 1000,
    };
    let env = p.params.clone();
    p.ret = GTy::Array(0);
    p.body = g.expr(&GTy::Array(0), size.max(3), &env, 0);
    p
}

/// Random inputs for the parameters: reals in [-2, 2], arrays of 0 to 4
/// elements (one length per size variable).
pub fn gen_inputs(rng: &mut Rng, p: &Program) -> Vec<GVal> {
    let sizes = [
        if rng.chance(0.08) {
            0
        } else {
            1 + rng.below(4)
        },
        1 + rng.below(3),
    ];
    fn val(rng: &mut Rng, t: &GTy, sizes: &[usize; 2]) -> GVal {
        let real = |rng: &mut Rng| (rng.range(-2.0, 2.0) * 1000.0).round() / 1000.0;
        match t {
            GTy::Real => GVal::Real(real(rng)),
            GTy::Array(s) => GVal::Array((0..sizes[*s]).map(|_| real(rng)).collect()),
            GTy::Tuple(ts) => GVal::Tuple(ts.iter().map(|t| val(rng, t, sizes)).collect()),
        }
    }
    p.params.iter().map(|(_, t)| val(rng, t, &sizes)).collect()
}

/// Inputs at which every partial operation of `p` is applied away from its
/// singular points and every value is moderate, after at most `tries`
/// draws; with the program's value there.
pub fn admissible_inputs(rng: &mut Rng, p: &Program, tries: usize) -> Option<(Vec<GVal>, f64)> {
    for _ in 0..tries {
        let inputs = gen_inputs(rng, p);
        if let Some(v) = value_at(p, &inputs) {
            return Some((inputs, v));
        }
    }
    None
}

/// The value of `p` at `inputs` if they are admissible (for a program
/// returning an array, the sum of its elements).
pub fn value_at(p: &Program, inputs: &[GVal]) -> Option<f64> {
    let mut env: Vec<(String, GVal)> = p
        .params
        .iter()
        .map(|(n, _)| n.clone())
        .zip(inputs.iter().cloned())
        .collect();
    match eval(&p.body, &mut env) {
        Ok(GVal::Real(v)) => Some(v),
        Ok(GVal::Array(xs)) => Some(xs.iter().sum()),
        _ => None,
    }
}
