//! [`Features::redundant`]: the redundancies an optimizer removes, written
//! into generated programs so that every rule of `optimize` (seeds/000
//! Fig. 12 and the array rules, docs/optimize.md) finds work: the ring
//! identities (`e * 1`, `0 + e`, `0 * e`, `-(-e)`), constant folding,
//! projections of built tuples and `let`s of them, `let`s to flatten,
//! float, forward or drop, conditionals with equal branches or a constant
//! condition, one computation twice (also up to the names of its
//! binders), a fold next to the scan that ends in its value, constant
//! arrays (`map (fun u -> 1) A`) reduced, shifted and scanned, `length` of
//! a made array, identity maps, `map2` of one array twice or with an
//! unused operand, nested maps, gathers from a mapped array, zipped pairs
//! unzipped, reductions of one map, components never read, and reverse
//! mode's two loops over one array with one inner loop in both.
//!
//! Every shape is built from the generator's own expressions, so the
//! evaluator, the types and the shrinker need nothing new, and the
//! programs stay well typed and admissible like every other.
//!
//! [`Features::redundant`]: crate::Features::redundant

use crate::ast::{Apply, GExpr, GTy, LamStyle, Loop, Size};
use crate::generate::{Env, Gen, accessible, b};
use syntax::Prim;

fn c(x: f64) -> GExpr {
    GExpr::Const(x)
}

fn var(x: &str) -> GExpr {
    GExpr::Var(x.to_string())
}

fn op2(op: Prim, x: GExpr, y: GExpr) -> GExpr {
    GExpr::Op2(op, b(x), b(y))
}

fn op1(op: Prim, x: GExpr) -> GExpr {
    GExpr::Op1(op, b(x))
}

fn lam(op: Prim, params: &[&str], body: GExpr, args: Vec<GExpr>) -> GExpr {
    GExpr::Loop(Loop {
        op,
        params: params.iter().map(|p| p.to_string()).collect(),
        body: b(body),
        args,
    })
}

fn let_(x: &str, value: GExpr, body: GExpr) -> GExpr {
    GExpr::Let(x.to_string(), b(value), b(body))
}

/// The accessible arrays of reals of size `s`.
fn real_arrays(env: &Env, s: Option<Size>) -> Vec<(GExpr, Size)> {
    accessible(env)
        .into_iter()
        .filter_map(|(e, t)| match t {
            GTy::Array(el, z) if *el == GTy::Real && s.is_none_or(|s| s == z) => Some((e, z)),
            _ => None,
        })
        .collect()
}

impl Gen<'_> {
    /// `op z A` for a section `(op)`: `reduce (+) 0 A`, `scanl (*) 1 A`.
    fn section(&mut self, lp: Prim, op: Prim, z: f64, arr: GExpr) -> GExpr {
        let (x, y) = (self.fresh("a"), self.fresh("b"));
        let body = op2(op, var(&x), var(&y));
        lam(lp, &[&x, &y], body, vec![c(z), arr])
    }

    /// `map (fun u -> k) A`: `ones_like A`, `zeros_like A`.
    fn constant_like(&mut self, k: f64, arr: GExpr) -> GExpr {
        let u = self.fresh("u");
        lam(Prim::Map, &[&u], c(k), vec![arr])
    }

    /// `fun u -> body`'s parameter and body, `u : R`, the body a real of
    /// about `size` nodes one array operation deeper.
    fn real_fn(&mut self, size: usize, env: &Env, nao: u32) -> (String, GExpr) {
        let u = self.fresh("u");
        let mut inner = env.clone();
        inner.push((u.clone(), GTy::Real));
        let body = self.expr(&GTy::Real, size.max(1), &inner, nao + 1);
        (u, body)
    }

    /// A real in scope or a constant.
    fn leaf(&mut self, env: &Env) -> GExpr {
        let reals: Vec<GExpr> = accessible(env)
            .into_iter()
            .filter(|(_, t)| *t == GTy::Real)
            .map(|(e, _)| e)
            .collect();
        if reals.is_empty() || self.rng.chance(0.25) {
            self.pick(&[c(0.0), c(1.0), c(2.0), c(0.5)])
        } else {
            self.pick(&reals)
        }
    }

    /// A real expression holding one of the redundancies.
    pub(crate) fn redundant_real(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        let arrays = real_arrays(env, None);
        let loops = nao < self.feat.max_nao && !arrays.is_empty();
        let l = |w: u32| if loops { w } else { 0 };
        let w = [
            8,                                          // ring identities
            2,                                          // -(-e)
            2,                                          // literals folded
            6,    // projection of a built tuple or of an if of them
            2,    // let of a tuple pattern to a built tuple
            2,    // let of a built tuple, projected
            4,    // let x = e in x
            3,    // let of a literal or a variable
            2,    // let of a let
            2,    // a let as an operand
            2,    // a dead let
            2,    // if with equal branches
            4,    // if with a constant condition
            4,    // an operation on an if with a branch that simplifies
            3,    // one computation twice
            l(3), // one loop twice, other binder names
            l(3), // one function of the elements in two loops
            l(4), // a fold and its scan
            l(3), // constant arrays reduced and shifted
            l(2), // the length of a made array
            l(3), // two reductions of one map
            l(2), // a component never read
            if self.feat.higher_order { 4 } else { 0 }, // a lambda called twice, or chosen by an if
            l(3), // a build over the columns of histograms
        ];
        let rest = size.saturating_sub(2).max(1);
        let half = (rest / 2).max(1);
        match self.rng.weighted(&w) {
            0 => {
                let e = self.expr(&GTy::Real, rest, env, nao);
                match self.rng.below(8) {
                    0 => op2(Prim::Mul, c(0.0), e),
                    1 => op2(Prim::Mul, e, c(1.0)),
                    2 => op2(Prim::Add, e, c(0.0)),
                    3 => op2(Prim::Sub, c(0.0), e),
                    4 => op2(Prim::Mul, c(1.0), e),
                    5 => op2(Prim::Add, c(0.0), e),
                    6 => op2(Prim::Sub, e, c(0.0)),
                    _ => op2(Prim::Div, e, c(1.0)),
                }
            }
            1 => {
                let e = self.expr(&GTy::Real, rest, env, nao);
                op1(Prim::Neg, op1(Prim::Neg, e))
            }
            2 => match self.rng.below(4) {
                0 => op2(Prim::Mul, c(2.0), c(3.0)),
                1 => op2(Prim::Add, c(1.0), c(1.0)),
                2 => op1(Prim::Sin, c(0.0)),
                _ => op2(Prim::Sub, c(0.5), c(2.0)),
            },
            3 => {
                let (x, y) = (
                    self.expr(&GTy::Real, half, env, nao),
                    self.expr(&GTy::Real, half, env, nao),
                );
                let i = 1 + self.rng.below(2);
                if self.rng.chance(0.5) {
                    return GExpr::Proj(b(GExpr::Tuple(vec![x, y])), i);
                }
                // A projection of a conditional of built tuples: `if-float`.
                let cond = self.cond(3, env, nao);
                let (u, w) = (self.leaf(env), self.leaf(env));
                let (yes, no) = (GExpr::Tuple(vec![x, u]), GExpr::Tuple(vec![w, y]));
                GExpr::Proj(b(GExpr::If(b(cond), b(yes), b(no))), i)
            }
            4 => {
                let (p, q) = (self.fresh("p"), self.fresh("q"));
                let (x, y) = (
                    self.expr(&GTy::Real, half / 2 + 1, env, nao),
                    self.expr(&GTy::Real, half / 2 + 1, env, nao),
                );
                let mut inner = env.clone();
                inner.push((p.clone(), GTy::Real));
                inner.push((q.clone(), GTy::Real));
                let body = self.expr(&GTy::Real, half, &inner, nao);
                GExpr::LetTuple(vec![p, q], b(GExpr::Tuple(vec![x, y])), b(body))
            }
            5 => {
                let t = self.fresh("t");
                let (x, y) = (
                    self.expr(&GTy::Real, half / 2 + 1, env, nao),
                    self.expr(&GTy::Real, half / 2 + 1, env, nao),
                );
                let mut inner = env.clone();
                inner.push((t.clone(), GTy::Tuple(vec![GTy::Real, GTy::Real])));
                let body = self.expr(&GTy::Real, half, &inner, nao);
                let_(&t, GExpr::Tuple(vec![x, y]), body)
            }
            6 => {
                let v = self.fresh("v");
                let e = self.expr(&GTy::Real, rest, env, nao);
                let_(&v, e, var(&v))
            }
            7 => {
                let v = self.fresh("v");
                let value = self.leaf(env);
                let mut inner = env.clone();
                inner.push((v.clone(), GTy::Real));
                let body = self.expr(&GTy::Real, rest, &inner, nao);
                let_(&v, value, body)
            }
            8 => {
                let (x, y) = (self.fresh("v"), self.fresh("v"));
                let value = self.expr(&GTy::Real, half / 2 + 1, env, nao);
                let mut with_y = env.clone();
                with_y.push((y.clone(), GTy::Real));
                let inner = self.expr(&GTy::Real, half / 2 + 1, &with_y, nao);
                let mut with_x = env.clone();
                with_x.push((x.clone(), GTy::Real));
                let body = self.expr(&GTy::Real, half, &with_x, nao);
                let_(&x, let_(&y, value, inner), body)
            }
            9 => {
                let v = self.fresh("v");
                let e = self.expr(&GTy::Real, half, env, nao);
                let other = self.expr(&GTy::Real, half, env, nao);
                let sq = let_(&v, e, op2(Prim::Mul, var(&v), var(&v)));
                op2(Prim::Add, other, sq)
            }
            10 => {
                let v = self.fresh("v");
                let value = self.expr(&GTy::Real, half, env, nao);
                let body = self.expr(&GTy::Real, half, env, nao);
                let_(&v, value, body)
            }
            11 => {
                let cond = self.cond(3, env, nao);
                let e = self.expr(&GTy::Real, rest, env, nao);
                GExpr::If(b(cond), b(e.clone()), b(e))
            }
            12 => {
                let cond = op2(Prim::Lt, c(1.0), c(2.0));
                let (x, y) = (
                    self.expr(&GTy::Real, half, env, nao),
                    self.expr(&GTy::Real, half, env, nao),
                );
                GExpr::If(b(cond), b(x), b(y))
            }
            13 => {
                let k = self.leaf(env);
                let cond = self.cond(3, env, nao);
                let e = self.expr(&GTy::Real, half, env, nao);
                op2(Prim::Mul, k, GExpr::If(b(cond), b(c(0.0)), b(e)))
            }
            14 => {
                let v = self.fresh("v");
                let (a, k) = (self.leaf(env), self.leaf(env));
                let f = self.pick(&[Prim::Sin, Prim::Tanh, Prim::Cos]);
                let again = op2(Prim::Add, op1(f, a.clone()), k);
                let_(&v, op1(f, a), op2(Prim::Mul, var(&v), again))
            }
            15 => {
                // `cse-alpha`.
                let (arr, _) = self.pick(&arrays);
                let (v, w, a) = (self.fresh("v"), self.fresh("v"), self.leaf(env));
                let scaled = |g: &mut Self| {
                    let z = g.fresh("z");
                    let body = op2(Prim::Mul, var(&z), a.clone());
                    let m = lam(Prim::Map, &[&z], body, vec![arr.clone()]);
                    g.section(Prim::Reduce, Prim::Add, 0.0, m)
                };
                let (first, second) = (scaled(self), scaled(self));
                let body = op2(Prim::Add, op2(Prim::Mul, var(&v), var(&w)), var(&v));
                let_(&v, first, let_(&w, second, body))
            }
            16 => {
                // `share-elementwise`.
                let (arr, _) = self.pick(&arrays);
                let (v, a) = (self.fresh("v"), self.leaf(env));
                let (z, y) = (self.fresh("z"), self.fresh("y"));
                let f = self.pick(&[Prim::Sin, Prim::Exp, Prim::Tanh]);
                let first = lam(
                    Prim::Map,
                    &[&z],
                    op1(f, op2(Prim::Mul, var(&z), a.clone())),
                    vec![arr.clone()],
                );
                let second = lam(
                    Prim::Map,
                    &[&y],
                    op2(Prim::Mul, op1(f, op2(Prim::Mul, var(&y), a)), var(&v)),
                    vec![arr],
                );
                let first = self.section(Prim::Reduce, Prim::Add, 0.0, first);
                let second = self.section(Prim::Reduce, Prim::Add, 0.0, second);
                let_(&v, first, op2(Prim::Add, second, var(&v)))
            }
            17 => self.fold_and_scan(&arrays, env),
            18 => {
                let (arr, _) = self.pick(&arrays);
                match self.rng.below(3) {
                    0 => {
                        let ones = self.constant_like(1.0, arr);
                        let shifted = op1(Prim::Shift1L, ones);
                        self.section(Prim::Reduce, Prim::Add, 0.0, shifted)
                    }
                    1 => {
                        let zeros = self.constant_like(0.0, arr);
                        self.section(Prim::Reduce, Prim::Add, 0.0, zeros)
                    }
                    _ => {
                        let ones = self.constant_like(1.0, arr);
                        let shifted = op1(Prim::Shift1R, ones);
                        self.section(Prim::Reduce, Prim::Mul, 1.0, shifted)
                    }
                }
            }
            19 => {
                let (arr, _) = self.pick(&arrays);
                let (u, body) = self.real_fn(half, env, nao);
                let made = lam(Prim::Map, &[&u], body, vec![arr]);
                op1(Prim::Real, op1(Prim::Length, made))
            }
            20 => {
                // `reduce-fusion`.
                let (arr, _) = self.pick(&arrays);
                let (u, body) = self.real_fn(half, env, nao);
                let cc = self.fresh("C");
                let t = self.fresh("t");
                let halved = lam(
                    Prim::Map,
                    &[&t],
                    op2(Prim::Mul, var(&t), c(0.5)),
                    vec![var(&cc)],
                );
                let sum = self.section(Prim::Reduce, Prim::Add, 0.0, var(&cc));
                let prod = self.section(Prim::Reduce, Prim::Mul, 1.0, halved);
                let made = lam(Prim::Map, &[&u], body, vec![arr]);
                let_(&cc, made, op2(Prim::Add, sum, prod))
            }
            21 => {
                // `prune-components`: only the first of two components is
                // read.
                let (arr, _) = self.pick(&arrays);
                let u = self.fresh("u");
                let mut inner = env.clone();
                inner.push((u.clone(), GTy::Real));
                let e1 = self.expr(&GTy::Real, half / 2 + 1, &inner, nao + 1);
                let e2 = self.expr(&GTy::Real, half / 2 + 1, &inner, nao + 1);
                let cc = self.fresh("C");
                let made = lam(Prim::Map, &[&u], GExpr::Tuple(vec![e1, e2]), vec![arr]);
                let firsts = |g: &mut Self| {
                    let t = g.fresh("t");
                    lam(Prim::Map, &[&t], GExpr::Proj(b(var(&t)), 1), vec![var(&cc)])
                };
                let sum = firsts(self);
                let sum = self.section(Prim::Reduce, Prim::Add, 0.0, sum);
                let top = firsts(self);
                let (x, y) = (self.fresh("a"), self.fresh("b"));
                let top = lam(
                    Prim::Reduce,
                    &[&x, &y],
                    op2(Prim::Max, var(&x), var(&y)),
                    vec![c(0.0), top],
                );
                let_(&cc, made, op2(Prim::Mul, sum, top))
            }
            23 => {
                // `hist-interchange`: per column c, a histogram of values
                // reading c, summed.
                let (arr, _) = self.pick(&arrays);
                let (dest, _) = self.pick(&arrays);
                let (count, _) = self.pick(&arrays);
                let (col, t, q) = (self.fresh("c"), self.fresh("t"), self.fresh("q"));
                let scaled = op2(Prim::Mul, var(&t), op1(Prim::Real, var(&col)));
                let vals = lam(Prim::Map, &[&t], scaled, vec![arr]);
                let k = 1 + self.rng.below(3) as i64;
                let hist = GExpr::Hist(Prim::HistAdd, b(dest), b(vals), k);
                let cols = lam(Prim::Build, &[&col], hist, vec![op1(Prim::Length, count)]);
                let sum = self.section(Prim::Reduce, Prim::Add, 0.0, var(&q));
                let sums = lam(Prim::Map, &[&q], sum, vec![cols]);
                self.section(Prim::Reduce, Prim::Add, 0.0, sums)
            }
            _ => {
                // `inline-lambda` (a lambda called twice) and `if-tuple`.
                let style = self.pick(&[LamStyle::Twice, LamStyle::Branched]);
                let x = self.fresh("v");
                let arg = self.expr(&GTy::Real, half, env, nao);
                let mut inner = env.clone();
                inner.push((x.clone(), GTy::Real));
                let body = self.expr(&GTy::Real, half, &inner, nao);
                GExpr::Apply(Box::new(Apply {
                    style,
                    g: self.fresh("g"),
                    x,
                    ret: GTy::Real,
                    arg,
                    body,
                }))
            }
        }
    }

    /// `reduce-from-scan`: a fold of an array and the scan that ends in its
    /// value (or one that does not: another start, a right scan).
    fn fold_and_scan(&mut self, arrays: &[(GExpr, Size)], env: &Env) -> GExpr {
        let (arr, _) = self.pick(arrays);
        let (v, a) = (self.fresh("v"), self.leaf(env));
        let (fold, scan) = match self.rng.below(4) {
            0 => (
                self.section(Prim::Reduce, Prim::Mul, 1.0, arr.clone()),
                self.section(Prim::Scanl, Prim::Mul, 1.0, arr),
            ),
            1 => {
                let step = |g: &mut Self, lp: Prim| {
                    let (p, x) = (g.fresh("p"), g.fresh("x"));
                    let body = op2(
                        Prim::Add,
                        op2(Prim::Mul, var(&p), c(0.5)),
                        op2(Prim::Mul, var(&x), a.clone()),
                    );
                    lam(lp, &[&p, &x], body, vec![c(1.0), arr.clone()])
                };
                (step(self, Prim::Foldl), step(self, Prim::Scanl))
            }
            2 => (
                self.section(Prim::Reduce, Prim::Add, 0.0, arr.clone()),
                self.section(Prim::Scanl, Prim::Add, 1.0, arr),
            ),
            _ => (
                self.section(Prim::Reduce, Prim::Mul, 1.0, arr.clone()),
                self.section(Prim::Scanr, Prim::Mul, 1.0, arr),
            ),
        };
        let scanned = self.section(Prim::Reduce, Prim::Add, 0.0, op1(Prim::Shift1R, scan));
        let_(&v, fold, op2(Prim::Mul, var(&v), scanned))
    }

    /// An array of reals of size `s` holding one of the redundancies, or
    /// `None` where none can be built (no array of reals of size `s` in
    /// scope, or no array operation left).
    pub(crate) fn redundant_array(
        &mut self,
        s: Size,
        size: usize,
        env: &Env,
        nao: u32,
    ) -> Option<GExpr> {
        let same = real_arrays(env, Some(s));
        if same.is_empty() || nao >= self.feat.max_nao {
            return None;
        }
        let ty = GTy::reals(s);
        let deep = nao + 2 <= self.feat.max_nao;
        let w = [
            2,                        // identity map
            3,                        // map2 with a constant array
            2,                        // map2 of one array twice
            2,                        // map2 with an unused operand
            4,                        // scans and shifts of constants
            2,                        // constant arrays of made arrays
            3,                        // nested maps
            4,                        // a gather from a mapped array
            4,                        // zipped, mapped, unzipped
            if deep { 2 } else { 0 }, // one inner loop in two loops
        ];
        let part = (size / 3).max(1);
        let operand = |g: &mut Self| {
            if g.rng.chance(0.6) {
                g.pick(&same).0
            } else {
                g.expr(&ty, part, env, nao)
            }
        };
        Some(match self.rng.weighted(&w) {
            0 => {
                let u = self.fresh("u");
                let arr = operand(self);
                lam(Prim::Map, &[&u], var(&u), vec![arr])
            }
            1 => {
                let (x, y) = (operand(self), operand(self));
                let (u, w) = (self.fresh("u"), self.fresh("w"));
                let (op, k, left) = match self.rng.below(4) {
                    0 => (Prim::Mul, 1.0, false),
                    1 => (Prim::Add, 0.0, false),
                    2 => (Prim::Mul, 0.0, true),
                    _ => (Prim::Add, 0.0, true),
                };
                let body = op2(op, var(&u), var(&w));
                let args = if left {
                    vec![self.constant_like(k, x), y]
                } else {
                    vec![x, self.constant_like(k, y)]
                };
                lam(Prim::Map2, &[&u, &w], body, args)
            }
            2 => {
                let cc = self.fresh("C");
                let (u, w) = (self.fresh("u"), self.fresh("w"));
                let mut inner = env.clone();
                inner.push((u.clone(), GTy::Real));
                inner.push((w.clone(), GTy::Real));
                let extra = self.expr(&GTy::Real, part, &inner, nao + 1);
                let body = op2(Prim::Add, op2(Prim::Mul, var(&u), var(&w)), extra);
                let arr = operand(self);
                let_(
                    &cc,
                    arr,
                    lam(Prim::Map2, &[&u, &w], body, vec![var(&cc), var(&cc)]),
                )
            }
            3 => {
                let (u, body) = self.real_fn(part, env, nao);
                let w = self.fresh("w");
                let (x, y) = (operand(self), operand(self));
                lam(Prim::Map2, &[&u, &w], body, vec![x, y])
            }
            4 => {
                let arr = operand(self);
                match self.rng.below(5) {
                    0 => {
                        let scan = self.section(Prim::Scanl, Prim::Mul, 1.0, arr);
                        op1(Prim::Shift1R, scan)
                    }
                    1 => {
                        let scan = self.section(Prim::Scanl, Prim::Add, 0.0, arr);
                        op1(Prim::Shift1R, scan)
                    }
                    2 => {
                        let ones = self.constant_like(1.0, arr);
                        op1(
                            Prim::Shift1L,
                            self.section(Prim::Scanr, Prim::Mul, 1.0, ones),
                        )
                    }
                    3 => {
                        let zeros = self.constant_like(0.0, arr);
                        op1(
                            Prim::Shift1R,
                            self.section(Prim::Scanl, Prim::Add, 0.0, zeros),
                        )
                    }
                    _ => {
                        let ones = self.constant_like(1.0, arr.clone());
                        let scan = self.section(Prim::Scanl, Prim::Add, 0.0, ones);
                        let (u, w) = (self.fresh("u"), self.fresh("w"));
                        let body = op2(Prim::Add, var(&u), var(&w));
                        lam(
                            Prim::Map2,
                            &[&u, &w],
                            body,
                            vec![op1(Prim::Shift1L, scan), arr],
                        )
                    }
                }
            }
            5 => {
                let arr = operand(self);
                match self.rng.below(3) {
                    0 => {
                        let z = self.fresh("z");
                        let body = op2(Prim::Mul, var(&z), c(2.0));
                        let doubled = lam(Prim::Map, &[&z], body, vec![arr]);
                        self.constant_like(1.0, doubled)
                    }
                    // `const-shape`: the shape of a scan's shift is its
                    // operand's.
                    1 => {
                        let scan = self.section(Prim::Scanl, Prim::Mul, 1.0, arr);
                        self.constant_like(1.0, op1(Prim::Shift1R, scan))
                    }
                    _ => self.constant_like(0.0, arr),
                }
            }
            6 => {
                let (u, outer) = self.real_fn(part, env, nao);
                let (v, inner) = self.real_fn(part, env, nao);
                let arr = operand(self);
                let made = lam(Prim::Map, &[&v], inner, vec![arr]);
                lam(Prim::Map, &[&u], outer, vec![made])
            }
            7 => {
                // `gather-fusion`: elements of a mapped array read in a
                // loop over another.
                let (src, _) = self.pick(&same);
                let over = operand(self);
                let (u, body) = self.real_fn(part, env, nao);
                let (cc, w) = (self.fresh("C"), self.fresh("w"));
                let middle = op2(Prim::Div, op1(Prim::Length, src.clone()), c(2.0));
                let read = GExpr::Index(b(var(&cc)), b(middle));
                let gather = lam(Prim::Map, &[&w], op2(Prim::Mul, var(&w), read), vec![over]);
                let_(&cc, lam(Prim::Map, &[&u], body, vec![src]), gather)
            }
            8 => {
                // `unzip-fusion`: reverse mode's `map2` zips its operands,
                // maps over the pairs and unzips the result.
                let (u, w, p) = (self.fresh("u"), self.fresh("w"), self.fresh("P"));
                let mut inner = env.clone();
                inner.push((u.clone(), GTy::Real));
                inner.push((w.clone(), GTy::Real));
                let e1 = self.expr(&GTy::Real, part, &inner, nao + 1);
                let e2 = self.expr(&GTy::Real, part, &inner, nao + 1);
                let (x, y) = (operand(self), operand(self));
                let pairs = lam(
                    Prim::Map2,
                    &[&u, &w],
                    GExpr::Tuple(vec![e1, e2]),
                    vec![x, y],
                );
                let component = |g: &mut Self, i: usize| {
                    let t = g.fresh("t");
                    lam(Prim::Map, &[&t], GExpr::Proj(b(var(&t)), i), vec![var(&p)])
                };
                let (first, second) = (component(self, 1), component(self, 2));
                let (a, bb) = (self.fresh("a"), self.fresh("b"));
                let sum = lam(
                    Prim::Map2,
                    &[&a, &bb],
                    op2(Prim::Add, var(&a), var(&bb)),
                    vec![first, second],
                );
                let_(&p, pairs, sum)
            }
            _ => self.inner_loop_twice(&same, env),
        })
    }

    /// `share-inner-loop`: reverse mode's two loops over one array, the
    /// forward one computing an inner loop and going on, the backward one
    /// needing the inner loop's value again.
    fn inner_loop_twice(&mut self, same: &[(GExpr, Size)], env: &Env) -> GExpr {
        let (xs, _) = self.pick(same);
        let (inner_arr, _) = self.pick(&real_arrays(env, None));
        let k = self.leaf(env);
        let (x, s1) = (self.fresh("X"), self.fresh("S"));
        let (u, v) = (self.fresh("u"), self.fresh("u"));
        let inner = |g: &mut Self, outer: &str, squared: bool| {
            let z = g.fresh("z");
            let e = op2(
                Prim::Div,
                op2(Prim::Add, op2(Prim::Mul, var(&z), var(outer)), k.clone()),
                c(2.0),
            );
            let body = if squared {
                let a = g.fresh("h");
                let_(&a, e, op2(Prim::Mul, var(&a), var(&a)))
            } else {
                e
            };
            let m = lam(Prim::Map, &[&z], body, vec![inner_arr.clone()]);
            g.section(Prim::Reduce, Prim::Add, 0.0, m)
        };
        let squared = self.rng.chance(0.5);
        let first = inner(self, &u, squared);
        let first = lam(Prim::Map, &[&u], first, vec![var(&x)]);
        let second = inner(self, &v, false);
        let s = self.fresh("s");
        let back = lam(
            Prim::Map2,
            &[&v, &s],
            op2(Prim::Mul, var(&s), second),
            vec![var(&x), var(&s1)],
        );
        let_(&x, xs, let_(&s1, first, back))
    }
}
