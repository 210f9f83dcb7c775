//! The random program generator: well-typed by construction, sized by a
//! node budget, and inputs drawn away from the singular points of the
//! partial operations (rejection sampling against [`crate::eval`]).
//!
//! The programs cover the first-order language reverse mode, forward mode
//! and the C backend accept: scalar chains, variables used several times (a
//! variable is the most likely leaf, so values are shared), `let` and tuple
//! patterns, tuples and projections, every unary and binary operator, `if`
//! on comparisons and `&&`/`||`/`not` (among them conditionals that guard a
//! partial operation, whose untaken branch is NaN or infinite), and the
//! array builtins `map`, `map2`, `reduce` (closed, or reading free
//! variables: Section 7.1) and `foldl` of reals; with
//! [`Features::extended`] also `scanl`, `scanr`, `shift1L`, `shift1R`,
//! `build`, `ifold`, `length`, indexing, and folds of tuples and arrays.
//! Array builtins nest in each other's bodies up to [`Features::max_nao`]
//! deep. Arrays hold reals, tuples or arrays (`[n][m]R`), of sizes `n`,
//! `m` or either plus or minus a constant.
//!
//! Types are chosen only among those that can be built from the values in
//! scope: an array of size `s` is made from an array of size `s` (by
//! `map`, `map2`, `build`), of size `s - 1` (a scan) or `s + 1` (a
//! shift), so sizes always agree.

use crate::ast::{Apply, GExpr, GTy, GVal, LamStyle, Loop, Program, Size};
use crate::eval::eval;
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
    /// Whether the program may leave the direct macro's language
    /// (docs/direct.md): scans, shifts, `build`, `ifold`, `length`,
    /// indexing, `reduce` and `foldl` of tuples or arrays. Without it the
    /// program lies in that language (`if` and `foldl` of reals included).
    pub extended: bool,
    /// Whether the parameters may be arrays. Without it a program of
    /// [`gen_program`] reads reals and pairs of reals only, so it has no
    /// array operation (NAO 0): the scalar programs of the cost tests.
    pub arrays: bool,
    /// The real operators a program may apply (`None`: every Source
    /// primitive with partials in the table); a test of a
    /// statement about a set of primitives (the cost bounds of seeds/000
    /// Section 5) names that set.
    pub ops: Option<Vec<Prim>>,
    /// Whether the program may hold derivative constructs (`diff`,
    /// `grad`, `grad_rev`, `jvp`, `vjp`, `vjp_rev`) of generated
    /// functions, nested up to two deep (`crate::deriv`).
    pub derivatives: bool,
    /// Whether (with [`Features::extended`]) `ifold` and `build` may count
    /// to a number computed from reals, `floor (min e 6)`: arrays of sizes
    /// known only at run time, and negative counts, which are errors
    /// (docs/semantics.md) and so make the inputs inadmissible; the C
    /// backend's tests run such programs at any inputs, for the same
    /// value or the same error.
    pub counts: bool,
    /// Whether a `let` of a real may be written as a lambda of that real
    /// applied directly, bound to a name and called, or passed to another
    /// lambda and called there (`ast::LamStyle`): the higher-order
    /// programs of the front end's specialisation tests and of forward
    /// mode's. No other path takes them (the fragment is not direct).
    pub higher_order: bool,
    /// Whether the program may hold the redundancies an optimizer removes
    /// (`crate::redundant`): ring identities, projections of built tuples,
    /// `let`s to flatten or drop, conditionals with equal branches, one
    /// computation twice, constant arrays, a fold next to its scan, maps
    /// of maps, zips unzipped: the programs of the optimizer's rule tests.
    pub redundant: bool,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            max_nao: 3,
            open_reduce: false,
            extended: true,
            arrays: true,
            ops: None,
            derivatives: false,
            counts: false,
            higher_order: false,
            redundant: false,
        }
    }
}

/// The real operators of `arity` arguments: every Source primitive with
/// partials in the table (`syntax::derivatives`), so a new one is generated
/// without a change here.
fn real_ops(arity: usize) -> Vec<Prim> {
    Prim::ALL
        .iter()
        .copied()
        .filter(|p| {
            p.arity() == arity && !p.is_target_only() && syntax::derivatives::partials(*p).is_some()
        })
        .collect()
}
/// The roundings of a real to an `Int` (`real (floor e)`, ...).
const ROUND: [Prim; 4] = [Prim::Floor, Prim::Ceil, Prim::Round, Prim::Trunc];
const CMP: [Prim; 4] = [Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge];

pub(crate) type Env = Vec<(String, GTy)>;

pub(crate) struct Gen<'a> {
    pub(crate) rng: &'a mut Rng,
    pub(crate) feat: &'a Features,
    next: usize,
    /// How many derivative constructs enclose the expression being built.
    nest: u32,
}

pub(crate) fn b(e: GExpr) -> Box<GExpr> {
    Box::new(e)
}

/// The values reachable from the variables in scope by projections and by
/// indexing with an index in scope whose range fits the array: each with
/// its type.
pub(crate) fn accessible(env: &Env) -> Vec<(GExpr, GTy)> {
    let indices: Vec<(&str, Size)> = env
        .iter()
        .filter_map(|(n, t)| match t {
            GTy::Index(s) => Some((n.as_str(), *s)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    let mut todo: Vec<(GExpr, GTy)> = env
        .iter()
        .rev()
        .map(|(n, t)| (GExpr::Var(n.clone()), t.clone()))
        .collect();
    while let Some((e, t)) = todo.pop() {
        match &t {
            GTy::Tuple(ts) => {
                for (i, ti) in ts.iter().enumerate() {
                    todo.push((GExpr::Proj(b(e.clone()), i + 1), ti.clone()));
                }
            }
            GTy::Array(el, s) => {
                for (i, si) in &indices {
                    if si.var == s.var && si.offset <= s.offset {
                        todo.push((
                            GExpr::Index(b(e.clone()), b(GExpr::Var(i.to_string()))),
                            (**el).clone(),
                        ));
                    }
                }
            }
            _ => {}
        }
        out.push((e, t));
    }
    out
}

fn leaves(acc: &[(GExpr, GTy)], ty: &GTy) -> Vec<GExpr> {
    acc.iter()
        .filter(|(_, t)| t == ty)
        .map(|(e, _)| e.clone())
        .collect()
}

/// The accessible arrays, by size.
fn arrays_of(acc: &[(GExpr, GTy)], s: Size) -> Vec<(GExpr, GTy)> {
    acc.iter()
        .filter(|(_, t)| matches!(t, GTy::Array(_, z) if *z == s))
        .cloned()
        .collect()
}

fn sizes(acc: &[(GExpr, GTy)]) -> Vec<Size> {
    let mut out: Vec<Size> = acc
        .iter()
        .filter_map(|(_, t)| match t {
            GTy::Array(_, s) => Some(*s),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// An accumulator type of the folds and scans: a real or a tuple of reals.
fn scalarish(t: &GTy) -> bool {
    match t {
        GTy::Real => true,
        GTy::Tuple(ts) => ts.iter().all(|t| *t == GTy::Real),
        _ => false,
    }
}

impl Gen<'_> {
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        self.next += 1;
        format!("{base}{}", self.next)
    }

    pub(crate) fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.below(xs.len())].clone()
    }

    /// The real operators of `arity` arguments this program may apply.
    /// Inside a derivative construct's body, not `lgamma`: its derivative
    /// `digamma` has none in reverse mode, which every route but forward
    /// mode would then refuse (docs/testing.md, "Findings":
    /// `fuzz_digamma_reverse`).
    fn ops(&self, arity: usize) -> Vec<Prim> {
        let all: Vec<Prim> = real_ops(arity)
            .into_iter()
            .filter(|&p| self.nest == 0 || p != Prim::Lgamma)
            .collect();
        match &self.feat.ops {
            Some(allowed) => all.into_iter().filter(|p| allowed.contains(p)).collect(),
            None => all,
        }
    }

    fn ext(&self) -> bool {
        self.feat.extended
    }

    /// Whether an expression of type `ty` can be built in `env` at NAO
    /// `nao`.
    fn can_build(&self, ty: &GTy, env: &Env, nao: u32) -> bool {
        let acc = accessible(env);
        self.buildable(ty, &acc, nao)
    }

    fn buildable(&self, ty: &GTy, acc: &[(GExpr, GTy)], nao: u32) -> bool {
        match ty {
            GTy::Real | GTy::Bool => true,
            GTy::Tuple(ts) => ts.iter().all(|t| self.buildable(t, acc, nao)),
            GTy::Index(_) | GTy::Length(_) => false,
            GTy::Array(e, s) => {
                if acc.iter().any(|(_, t)| t == ty) {
                    return true;
                }
                if nao >= self.feat.max_nao {
                    return false;
                }
                let have = sizes(acc);
                (have.contains(s) && self.buildable(e, acc, nao + 1))
                    || (self.ext() && scalarish(e) && have.contains(&s.plus(-1)))
            }
        }
    }

    /// A type for a `let` or a tuple component, buildable in `env`.
    fn some_ty(&mut self, env: &Env, depth: u32, nao: u32) -> GTy {
        let acc = accessible(env);
        let have = sizes(&acc);
        let exact: Vec<GTy> = acc
            .iter()
            .filter(|(_, t)| matches!(t, GTy::Array(..)))
            .map(|(_, t)| t.clone())
            .collect();
        let choice = self.rng.weighted(&[
            6,
            if have.is_empty() { 0 } else { 3 },
            if exact.is_empty() { 0 } else { 1 },
            if depth < 1 { 2 } else { 0 },
        ]);
        let t = match choice {
            0 => GTy::Real,
            1 => {
                let s = self.pick(&have);
                let s = if self.ext() && self.rng.chance(0.15) {
                    s.plus(1)
                } else {
                    s
                };
                let e = match self.rng.weighted(&[8, 2, 2]) {
                    0 => GTy::Real,
                    1 => GTy::Tuple(vec![GTy::Real, GTy::Real]),
                    _ => GTy::reals(self.pick(&have)),
                };
                GTy::Array(Box::new(e), s)
            }
            2 => self.pick(&exact),
            _ => {
                let k = 2 + self.rng.below(2);
                GTy::Tuple((0..k).map(|_| self.some_ty(env, depth + 1, nao)).collect())
            }
        };
        if self.buildable(&t, &acc, nao) {
            t
        } else {
            GTy::Real
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

    /// A closed expression of a type of reals (the initial value of a
    /// closed `reduce`).
    fn closed_constant(&mut self, ty: &GTy) -> GExpr {
        match ty {
            GTy::Tuple(ts) => GExpr::Tuple(ts.iter().map(|t| self.closed_constant(t)).collect()),
            _ => self.constant(),
        }
    }

    /// An expression of type `ty` of about `size` nodes.
    pub(crate) fn expr(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        syntax::stack::guard(|| self.expr_node(ty, size, env, nao))
    }

    fn expr_node(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let acc = accessible(env);
        let ls = leaves(&acc, ty);
        if !ls.is_empty() && (size <= 1 || self.rng.chance(0.15)) {
            return self.pick(&ls);
        }
        match ty {
            GTy::Real => self.real(size, env, nao),
            GTy::Bool => self.cond(size, env, nao),
            GTy::Array(e, s) => self.array(e, *s, size, env, nao),
            GTy::Tuple(ts) => self.tuple(ts, size, env, nao),
            GTy::Index(_) | GTy::Length(_) => {
                panic!("invariant: the generator never asks for an integer expression")
            }
        }
    }

    fn tuple(&mut self, ts: &[GTy], size: usize, env: &Env, nao: u32) -> GExpr {
        let ty = GTy::Tuple(ts.to_vec());
        let acc = accessible(env);
        let loops = nao < self.feat.max_nao && !sizes(&acc).is_empty() && size >= 5;
        let w = [
            10,
            if size > 4 { 3 } else { 0 },
            if size >= 6 { 2 } else { 0 },
            if self.ext() && loops && scalarish(&ty) {
                3
            } else {
                0
            },
        ];
        match self.rng.weighted(&w) {
            1 => self.let_in(&ty, size, env, nao),
            2 => self.if_(&ty, size, env, nao),
            3 if self.rng.chance(0.3) => self.reduce(&ty, size, env, nao),
            3 => self.fold(&ty, size, env, nao),
            _ => {
                let each = (size.saturating_sub(1) / ts.len()).max(1);
                GExpr::Tuple(ts.iter().map(|t| self.expr(t, each, env, nao)).collect())
            }
        }
    }

    fn real(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        if size <= 1 {
            return self.constant();
        }
        let acc = accessible(env);
        let loops = nao < self.feat.max_nao && !sizes(&acc).is_empty() && size >= 4;
        let w = [
            30,                                    // op2
            16,                                    // op1
            if size >= 4 { 14 } else { 0 },        // let
            if size >= 5 { 4 } else { 0 },         // let tuple
            if size >= 3 { 5 } else { 0 },         // proj
            if loops { 14 + 12 * nao } else { 0 }, // reduce, likelier in bodies
            if size >= 5 { 10 } else { 0 },        // if
            if size >= 4 { 5 } else { 0 },         // guarded partial operation
            if loops { 10 + 8 * nao } else { 0 },  // foldl, ifold
            // Conversions need Int values, outside the direct fragment.
            if size >= 3 && self.feat.extended {
                4
            } else {
                0
            }, // conversion
            if self.derivatives_ok(size) { 30 } else { 0 }, // derivative construct
            if self.feat.redundant && size >= 3 {
                150
            } else {
                0
            }, // crate::redundant
        ];
        match self.rng.weighted(&w) {
            0 => {
                let op = self.pick(&self.ops(2));
                let left = 1 + self.rng.below(size - 1);
                let a = self.expr(&GTy::Real, left, env, nao);
                let bb = self.expr(&GTy::Real, (size - 1 - left).max(1), env, nao);
                let bb = if op == Prim::Div && self.rng.chance(0.5) {
                    positive(bb)
                } else {
                    bb
                };
                let a = if op == Prim::Pow { positive(a) } else { a };
                let bb = if op == Prim::Pow && self.rng.chance(0.5) {
                    self.constant()
                } else {
                    bb
                };
                GExpr::Op2(op, b(a), b(bb))
            }
            1 => {
                // Now and then the function with derivative rules of
                // `ast::RULES` (docs/derivatives.md, section 8).
                let op = if self.feat.extended && self.rng.chance(0.08) {
                    Prim::WithRules
                } else {
                    self.pick(&self.ops(1))
                };
                let a = self.expr(&GTy::Real, size - 1, env, nao);
                let partial = matches!(op, Prim::Log | Prim::Sqrt | Prim::Log1p | Prim::Lgamma);
                let a = if partial && self.rng.chance(0.7) {
                    positive(a)
                } else {
                    a
                };
                GExpr::Op1(op, b(a))
            }
            2 => self.let_in(&GTy::Real, size, env, nao),
            3 => self.let_tuple(&GTy::Real, size, env, nao),
            4 => {
                let other = self.some_ty(env, 1, nao);
                let i = self.rng.below(2);
                let mut ts = vec![other];
                ts.insert(i, GTy::Real);
                let t = self.expr(&GTy::Tuple(ts), size - 1, env, nao);
                GExpr::Proj(b(t), i + 1)
            }
            5 => self.reduce(&GTy::Real, size, env, nao),
            6 => self.if_(&GTy::Real, size, env, nao),
            7 => self.guarded(size, env, nao),
            8 => self.fold(&GTy::Real, size, env, nao),
            9 => self.conversion(size, env, nao),
            10 => self.deriv_real(size, env, nao),
            _ => self.redundant_real(size, env, nao),
        }
    }

    /// `real i`, `real (mod i k)` or `real (i / k)` of an `Int` in scope,
    /// or `real (floor e)` (`ceil`, `round`, `trunc`) of a real.
    fn conversion(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        let ints: Vec<GExpr> = accessible(env)
            .into_iter()
            .filter(|(_, t)| matches!(t, GTy::Index(_) | GTy::Length(_)))
            .map(|(e, _)| e)
            .collect();
        let int = if !ints.is_empty() && self.rng.chance(0.6) {
            let i = self.pick(&ints);
            match self.rng.below(3) {
                0 => i,
                k => {
                    let op = if k == 1 { Prim::Mod } else { Prim::Div };
                    let d = GExpr::Const((2 + self.rng.below(3)) as f64);
                    GExpr::Op2(op, b(i), b(d))
                }
            }
        } else {
            let op = self.pick(&ROUND);
            GExpr::Op1(op, b(self.expr(&GTy::Real, size - 2, env, nao)))
        };
        GExpr::Op1(Prim::Real, b(int))
    }

    /// `reduce f z A` of type `ty` (a real, or with [`Features::extended`]
    /// a tuple of reals).
    fn reduce(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let acc = accessible(env);
        let s = self.pick(&sizes(&acc));
        let (x, y) = (self.fresh("a"), self.fresh("b"));
        let body_size = 3 + self.rng.below(size / 2 + 1);
        let mut body_env: Env = if self.feat.open_reduce {
            env.clone()
        } else {
            Vec::new()
        };
        body_env.push((x.clone(), ty.clone()));
        body_env.push((y.clone(), ty.clone()));
        let body = if *ty == GTy::Real && self.rng.chance(0.2) {
            // `reduce (+) z A` and the other sections.
            let op = self.pick(&[Prim::Add, Prim::Add, Prim::Mul, Prim::Sub, Prim::Div]);
            GExpr::Op2(op, b(GExpr::Var(x.clone())), b(GExpr::Var(y.clone())))
        } else if *ty == GTy::Real && self.rng.chance(0.1) {
            // A `max` or `min` reduction, the accumulator first or second:
            // reverse mode selects its winner (unf's select.rs).
            let op = self.pick(&[Prim::Max, Prim::Min]);
            let (p, q) = (GExpr::Var(x.clone()), GExpr::Var(y.clone()));
            let (p, q) = if self.rng.chance(0.5) { (p, q) } else { (q, p) };
            GExpr::Op2(op, b(p), b(q))
        } else {
            self.expr(ty, body_size, &body_env, nao + 1)
        };
        let init = if self.feat.open_reduce && self.rng.chance(0.5) {
            self.expr(ty, 2, env, nao)
        } else {
            self.closed_constant(ty)
        };
        let arr_ty = GTy::Array(Box::new(ty.clone()), s);
        let arr = self.expr(&arr_ty, (size / 2).max(1), env, nao);
        GExpr::Loop(Loop {
            op: Prim::Reduce,
            params: vec![x, y],
            body: b(body),
            args: vec![init, arr],
        })
    }

    /// `foldl` over an array in scope, or `ifold` over its indices, with an
    /// accumulator of type `ty`.
    fn fold(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let acc = accessible(env);
        let arrays: Vec<(GExpr, GTy)> = acc
            .iter()
            .filter(|(_, t)| matches!(t, GTy::Array(..)))
            .cloned()
            .collect();
        let (arr, arr_ty) = self.pick(&arrays);
        let GTy::Array(el, s) = arr_ty else {
            unreachable!("invariant: filtered to arrays")
        };
        let a = self.fresh("acc");
        let body_size = 3 + self.rng.below(size / 2 + 1);
        let isize = 1 + self.rng.below(3);
        let init = self.expr(ty, isize, env, nao);
        let mut body_env = env.clone();
        body_env.push((a.clone(), ty.clone()));
        if self.ext() && self.feat.counts && self.rng.chance(0.3) {
            return self.counted(a, init, body_env, body_size, ty, env, nao);
        }
        // The direct macro takes `foldl` (with a real accumulator), not
        // `ifold`.
        if !self.ext() || self.rng.chance(0.6) {
            let x = self.fresh("e");
            body_env.push((x.clone(), (*el).clone()));
            let body = if *ty == GTy::Real && *el == GTy::Real && self.rng.chance(0.1) {
                // A running `max` or `min` (unf's select.rs), either order.
                let op = self.pick(&[Prim::Max, Prim::Min]);
                let (p, q) = (GExpr::Var(a.clone()), GExpr::Var(x.clone()));
                let (p, q) = if self.rng.chance(0.5) { (p, q) } else { (q, p) };
                GExpr::Op2(op, b(p), b(q))
            } else {
                self.expr(ty, body_size, &body_env, nao + 1)
            };
            let arr = if self.rng.chance(0.7) {
                arr
            } else {
                self.expr(&GTy::Array(el, s), size / 3, env, nao)
            };
            GExpr::Loop(Loop {
                op: Prim::Foldl,
                params: vec![a, x],
                body: b(body),
                args: vec![init, arr],
            })
        } else {
            // `ifold` over the indices, or a `while` loop whose state
            // carries a counter below the same length (so it ends), and
            // for a real state a condition on the state too (so its trip
            // count depends on the inputs).
            let looping = self.rng.chance(0.4);
            let i = self.fresh(if looping { "k" } else { "i" });
            body_env.push((i.clone(), GTy::Index(s)));
            let body = self.expr(ty, body_size, &body_env, nao + 1);
            let mut args = vec![init, GExpr::Op1(Prim::Length, b(arr))];
            if looping && *ty == GTy::Real && self.rng.chance(0.7) {
                args.push(self.constant());
            }
            GExpr::Loop(Loop {
                op: if looping { Prim::While } else { Prim::Ifold },
                params: vec![a, i],
                body: b(body),
                args,
            })
        }
    }

    /// [`Features::counts`]: `ifold` up to `floor (min e 6)`, or `foldl`
    /// over `build (floor (min e 6)) (fun i -> ..)`, with the accumulator
    /// `a` of type `ty` starting at `init`; `body_env` has the scope and
    /// `a`.
    #[allow(clippy::too_many_arguments)]
    fn counted(
        &mut self,
        a: String,
        init: GExpr,
        mut body_env: Env,
        body_size: usize,
        ty: &GTy,
        env: &Env,
        nao: u32,
    ) -> GExpr {
        let bound_size = 2 + self.rng.below(3);
        let bound = self.expr(&GTy::Real, bound_size, env, nao);
        let count = GExpr::Op1(
            Prim::Floor,
            b(GExpr::Op2(Prim::Min, b(bound), b(GExpr::Const(6.0)))),
        );
        let i = self.fresh("c");
        if self.rng.chance(0.5) {
            body_env.push((i.clone(), GTy::Index(Size::DYNAMIC)));
            let body = self.expr(ty, body_size, &body_env, nao + 1);
            return GExpr::Loop(Loop {
                op: Prim::Ifold,
                params: vec![a, i],
                body: b(body),
                args: vec![init, count],
            });
        }
        let mut elem_env = env.clone();
        elem_env.push((i.clone(), GTy::Index(Size::DYNAMIC)));
        let elem_size = 2 + self.rng.below(4);
        let elem = self.expr(&GTy::Real, elem_size, &elem_env, nao + 1);
        let built = GExpr::Loop(Loop {
            op: Prim::Build,
            params: vec![i],
            body: b(elem),
            args: vec![count],
        });
        let x = self.fresh("e");
        body_env.push((x.clone(), GTy::Real));
        let body = self.expr(ty, body_size, &body_env, nao + 1);
        GExpr::Loop(Loop {
            op: Prim::Foldl,
            params: vec![a, x],
            body: b(body),
            args: vec![init, built],
        })
    }

    /// `if c then a else b` of type `ty`.
    fn if_(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let csize = 3 + self.rng.below(size / 3 + 1);
        let c = self.cond(csize, env, nao);
        let rest = size.saturating_sub(csize + 1).max(2);
        let a = self.expr(ty, rest / 2, env, nao);
        let e = self.expr(ty, rest - rest / 2, env, nao);
        GExpr::If(b(c), b(a), b(e))
    }

    /// A condition: a comparison of reals (or of an index in scope with an
    /// integer), sometimes combined with `&&`, `||`, `not`.
    pub(crate) fn cond(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        let indices: Vec<String> = env
            .iter()
            .filter(|(_, t)| matches!(t, GTy::Index(_)))
            .map(|(n, _)| n.clone())
            .collect();
        let w = [
            10,
            if indices.is_empty() { 0 } else { 4 },
            if size >= 4 { 5 } else { 0 },
            if size >= 3 { 3 } else { 0 },
            3,
        ];
        match self.rng.weighted(&w) {
            1 => {
                let i = self.pick(&indices);
                let k = self.rng.below(3) as f64;
                let op = self.pick(&CMP);
                GExpr::Op2(op, b(GExpr::Var(i)), b(GExpr::Const(k)))
            }
            2 => {
                let op = if self.rng.chance(0.5) {
                    Prim::And
                } else {
                    Prim::Or
                };
                let l = self.cond(size / 2, env, nao);
                let r = self.cond(size / 2, env, nao);
                GExpr::Op2(op, b(l), b(r))
            }
            3 => GExpr::Op1(Prim::Not, b(self.cond(size - 1, env, nao))),
            4 => {
                // == and != are constant away from ties, but must run.
                let op = if self.rng.chance(0.5) {
                    Prim::Eq
                } else {
                    Prim::Ne
                };
                let l = self.expr(&GTy::Real, (size / 2).max(1), env, nao);
                let r = self.constant();
                GExpr::Op2(op, b(l), b(r))
            }
            _ => {
                let op = self.pick(&CMP);
                let l = self.expr(&GTy::Real, (size / 2).max(1), env, nao);
                let r = if self.rng.chance(0.5) {
                    self.constant()
                } else {
                    self.expr(&GTy::Real, (size / 2).max(1), env, nao)
                };
                GExpr::Op2(op, b(l), b(r))
            }
        }
    }

    /// A conditional guarding a partial operation, `if g > c then log g
    /// else e` and its variants: where the guard fails, the untaken branch
    /// is NaN or infinite, and must not leak into the derivative.
    fn guarded(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        let g = self.expr(&GTy::Real, (size / 3).max(1), env, nao);
        let c = GExpr::Const(self.pick(&[0.1, 0.25, 0.5, 1.0]));
        let partial = match self.rng.below(4) {
            0 => GExpr::Op1(Prim::Log, b(g.clone())),
            1 => GExpr::Op1(Prim::Sqrt, b(g.clone())),
            2 => {
                let n = self.expr(&GTy::Real, 2, env, nao);
                GExpr::Op2(Prim::Div, b(n), b(g.clone()))
            }
            _ => {
                let k = GExpr::Const(self.pick(&[0.5, 1.5, 2.5]));
                let k = if self.rng.chance(0.3) {
                    GExpr::Op1(Prim::Neg, b(k))
                } else {
                    k
                };
                GExpr::Op2(Prim::Pow, b(g.clone()), b(k))
            }
        };
        let rest = size.saturating_sub(g.size() * 2 + 3).max(1);
        let partial = if rest > 2 && self.rng.chance(0.4) {
            let other = self.expr(&GTy::Real, rest / 2, env, nao);
            let op = self.pick(&[Prim::Add, Prim::Mul, Prim::Sub]);
            GExpr::Op2(op, b(partial), b(other))
        } else {
            partial
        };
        let other = self.expr(&GTy::Real, rest.div_ceil(2), env, nao);
        if self.rng.chance(0.5) {
            let op = self.pick(&[Prim::Gt, Prim::Ge]);
            GExpr::If(b(GExpr::Op2(op, b(g), b(c))), b(partial), b(other))
        } else {
            let op = self.pick(&[Prim::Lt, Prim::Le]);
            GExpr::If(b(GExpr::Op2(op, b(g), b(c))), b(other), b(partial))
        }
    }

    fn array(&mut self, el: &GTy, s: Size, size: usize, env: &Env, nao: u32) -> GExpr {
        let ty = GTy::Array(Box::new(el.clone()), s);
        let acc = accessible(env);
        let ls = leaves(&acc, &ty);
        let same = arrays_of(&acc, s);
        let can_loop = nao < self.feat.max_nao;
        let body_ok = self.buildable(el, &acc, nao + 1);
        let map_ok = can_loop && !same.is_empty() && body_ok;
        let ext = self.ext();
        let below = arrays_of(&acc, s.plus(-1));
        let scan_ok = ext && can_loop && scalarish(el) && !below.is_empty();
        let above = leaves(&acc, &GTy::Array(Box::new(el.clone()), s.plus(1)));
        let shift_ok =
            ext && (!above.is_empty() || (can_loop && scalarish(el) && !same.is_empty()));
        // Scatter and the histograms take reals of any size in scope.
        let real_sizes: Vec<Size> = acc
            .iter()
            .filter_map(|(_, t)| match t {
                GTy::Array(e, z) if **e == GTy::Real => Some(*z),
                _ => None,
            })
            .collect();
        let hist_ok = ext && *el == GTy::Real && !real_sizes.is_empty();
        if !ls.is_empty() && (size <= 2 || !(map_ok || scan_ok || shift_ok)) {
            return self.pick(&ls);
        }
        let w = [
            if map_ok { 40 } else { 0 },
            if map_ok { 25 } else { 0 },
            if map_ok && ext { 14 } else { 0 },
            if scan_ok { 14 } else { 0 },
            if shift_ok { 16 } else { 0 },
            if size >= 6 { 4 } else { 0 },
            if size >= 4 { 15 } else { 0 },
            if ext && can_loop && size >= 5 { 6 } else { 0 },
            // Likelier inside a derivative construct: reverse (or
            // forward) over a histogram's reverse derivative.
            match (hist_ok && size >= 4, self.nest > 0) {
                (false, _) => 0,
                (true, false) => 8,
                (true, true) => 24,
            },
            if *el == GTy::Real && self.derivatives_ok(size) {
                20
            } else {
                0
            },
            if *el == GTy::Real && self.feat.redundant && map_ok && size >= 3 {
                100
            } else {
                0
            },
        ];
        if w.iter().all(|&x| x == 0) {
            return match ls.first() {
                Some(l) => l.clone(),
                None => panic!(
                    "invariant: only buildable types are asked for ({} in {env:?})",
                    ty.text()
                ),
            };
        }
        match self.rng.weighted(&w) {
            0 => {
                let (arr, arr_ty) = self.pick(&same);
                let GTy::Array(xe, _) = arr_ty.clone() else {
                    unreachable!("invariant: arrays_of gives arrays")
                };
                let x = self.fresh("x");
                let mut body_env = env.clone();
                body_env.push((x.clone(), *xe));
                let body_size = 2 + self.rng.below(size / 2 + 2);
                let body = self.expr(el, body_size, &body_env, nao + 1);
                let arr = if self.rng.chance(0.75) {
                    arr
                } else {
                    self.expr(&arr_ty, size / 3, env, nao)
                };
                GExpr::Loop(Loop {
                    op: Prim::Map,
                    params: vec![x],
                    body: b(body),
                    args: vec![arr],
                })
            }
            1 => {
                let (x, y) = (self.fresh("x"), self.fresh("y"));
                let (ta, tb) = (self.elem_of(&same), self.elem_of(&same));
                let mut body_env = env.clone();
                body_env.push((x.clone(), ta.clone()));
                body_env.push((y.clone(), tb.clone()));
                let body_size = 3 + self.rng.below(size / 2 + 2);
                let body = if *el == GTy::Real
                    && ta == GTy::Real
                    && tb == GTy::Real
                    && self.rng.chance(0.15)
                {
                    let op = self.pick(&[Prim::Add, Prim::Mul, Prim::Sub, Prim::Div]);
                    GExpr::Op2(op, b(GExpr::Var(x.clone())), b(GExpr::Var(y.clone())))
                } else {
                    self.expr(el, body_size, &body_env, nao + 1)
                };
                let a = self.expr(&GTy::Array(Box::new(ta), s), size / 4, env, nao);
                let bb = self.expr(&GTy::Array(Box::new(tb), s), size / 4, env, nao);
                GExpr::Loop(Loop {
                    op: Prim::Map2,
                    params: vec![x, y],
                    body: b(body),
                    args: vec![a, bb],
                })
            }
            2 => {
                let (arr, _) = self.pick(&same);
                let i = self.fresh("i");
                let mut body_env = env.clone();
                body_env.push((i.clone(), GTy::Index(s)));
                let body_size = 2 + self.rng.below(size / 2 + 2);
                let body = self.expr(el, body_size, &body_env, nao + 1);
                GExpr::Loop(Loop {
                    op: Prim::Build,
                    params: vec![i],
                    body: b(body),
                    args: vec![GExpr::Op1(Prim::Length, b(arr))],
                })
            }
            3 => self.scan(el, &below, size, env, nao),
            4 => {
                let op = if self.rng.chance(0.5) {
                    Prim::Shift1L
                } else {
                    Prim::Shift1R
                };
                let inner = if !above.is_empty() && (self.rng.chance(0.5) || same.is_empty()) {
                    self.pick(&above)
                } else if can_loop && scalarish(el) && !same.is_empty() {
                    self.scan(el, &same, size.saturating_sub(1), env, nao)
                } else {
                    self.pick(&above)
                };
                GExpr::Op1(op, b(inner))
            }
            5 => self.if_(&ty, size, env, nao),
            6 => self.let_in(&ty, size, env, nao),
            8 => {
                let op = self.pick(&[
                    Prim::Scatter,
                    Prim::HistAdd,
                    Prim::HistMul,
                    Prim::HistMin,
                    Prim::HistMax,
                ]);
                let z = self.pick(&real_sizes);
                let dest = self.expr(&ty, size / 3, env, nao);
                let vals = self.expr(&GTy::reals(z), size / 3, env, nao);
                let k = 1 + self.rng.below(3) as i64;
                GExpr::Hist(op, b(dest), b(vals), k)
            }
            9 => self.deriv_array(s, size, env, nao),
            10 => match self.redundant_array(s, size, env, nao) {
                Some(e) => e,
                None => self.fold(&ty, size, env, nao),
            },
            // An array accumulated by `foldl` or `ifold` (the state of a
            // recurrence).
            _ => self.fold(&ty, size, env, nao),
        }
    }

    /// Whether a derivative construct may be built here: the feature is
    /// on, fewer than two constructs enclose this point, and the budget
    /// leaves room for a function body.
    fn derivatives_ok(&self, size: usize) -> bool {
        self.feat.derivatives && self.nest < 2 && size >= 6
    }

    /// The sizes of the arrays of reals in scope.
    fn real_sizes(env: &Env) -> Vec<Size> {
        let mut out: Vec<Size> = accessible(env)
            .iter()
            .filter_map(|(_, t)| match t {
                GTy::Array(e, z) if **e == GTy::Real => Some(*z),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// `fun x -> body` for a construct: `x : ty`, the body of `body_ty`
    /// built with one more enclosing construct, and made to read `x` if it
    /// does not (times the sum of `x`'s reals).
    fn deriv_fn(
        &mut self,
        ty: &GTy,
        body_ty: &GTy,
        size: usize,
        env: &Env,
        nao: u32,
    ) -> (String, GExpr) {
        let x = self.fresh("d");
        let mut body_env = env.clone();
        body_env.push((x.clone(), ty.clone()));
        self.nest += 1;
        let body_size = 3 + self.rng.below(size / 2 + 1);
        let body = self.expr(body_ty, body_size, &body_env, nao);
        self.nest -= 1;
        if body.mentions(&x) {
            return (x, body);
        }
        let xs = match ty {
            GTy::Real => GExpr::Var(x.clone()),
            _ => {
                let (s, t) = (self.fresh("s"), self.fresh("t"));
                GExpr::Loop(Loop {
                    op: Prim::Reduce,
                    params: vec![s.clone(), t.clone()],
                    body: b(GExpr::Op2(Prim::Add, b(GExpr::Var(s)), b(GExpr::Var(t)))),
                    args: vec![GExpr::Const(0.0), GExpr::Var(x.clone())],
                })
            }
        };
        let body = match body_ty {
            GTy::Real => GExpr::Op2(Prim::Mul, b(body), b(xs)),
            _ => {
                let e = self.fresh("e");
                GExpr::Loop(Loop {
                    op: Prim::Map,
                    params: vec![e.clone()],
                    body: b(GExpr::Op2(Prim::Mul, b(GExpr::Var(e)), b(xs))),
                    args: vec![body],
                })
            }
        };
        (x, body)
    }

    /// A derivative construct of real value: `diff`, `grad` or `grad_rev`
    /// of a function of a real; `jvp` of one of a real or of an array of
    /// reals (its tangent); `vjp` or `vjp_rev` of a function of a real
    /// returning an array of reals.
    fn deriv_real(&mut self, size: usize, env: &Env, nao: u32) -> GExpr {
        let arrays = Self::real_sizes(env);
        let w = [
            2,
            2,
            4,
            3,
            if arrays.is_empty() { 0 } else { 3 },
            if arrays.is_empty() { 0 } else { 2 },
        ];
        let op = [
            Prim::Diff,
            Prim::Grad,
            Prim::GradRev,
            Prim::Jvp,
            Prim::VjpRev,
            Prim::Vjp,
        ][self.rng.weighted(&w)];
        let ty = if op == Prim::Jvp && !arrays.is_empty() && self.rng.chance(0.5) {
            GTy::reals(self.pick(&arrays))
        } else {
            GTy::Real
        };
        let body_ty = if matches!(op, Prim::Vjp | Prim::VjpRev) {
            GTy::reals(self.pick(&arrays))
        } else {
            GTy::Real
        };
        self.deriv(op, ty, body_ty, size, env, nao)
    }

    /// A derivative construct of type `[s]R`: `grad`, `grad_rev` of a
    /// real function of `[s]R`, or `vjp`, `vjp_rev` of one returning an
    /// array of reals.
    fn deriv_array(&mut self, s: Size, size: usize, env: &Env, nao: u32) -> GExpr {
        let arrays = Self::real_sizes(env);
        let op =
            [Prim::Grad, Prim::GradRev, Prim::VjpRev, Prim::Vjp][self.rng.weighted(&[2, 4, 3, 1])];
        let body_ty = match op {
            Prim::Vjp | Prim::VjpRev if !arrays.is_empty() => GTy::reals(self.pick(&arrays)),
            Prim::Vjp | Prim::VjpRev => GTy::reals(s),
            _ => GTy::Real,
        };
        self.deriv(op, GTy::reals(s), body_ty, size, env, nao)
    }

    /// `op (fun x -> body) at dir` with `x : ty` and a body of `body_ty`.
    fn deriv(
        &mut self,
        op: Prim,
        ty: GTy,
        body_ty: GTy,
        size: usize,
        env: &Env,
        nao: u32,
    ) -> GExpr {
        let (x, body) = self.deriv_fn(&ty, &body_ty, size, env, nao);
        let at = self.expr(&ty, (size / 4).max(1), env, nao);
        let dir = match op {
            Prim::Jvp => Some(b(self.expr(&ty, (size / 4).max(1), env, nao))),
            Prim::Vjp | Prim::VjpRev => Some(b(self.expr(&body_ty, (size / 4).max(1), env, nao))),
            _ => None,
        };
        GExpr::Deriv(crate::deriv::Deriv {
            op,
            x,
            ty,
            body: b(body),
            at: b(at),
            dir,
        })
    }

    /// The element type of one of `arrays`.
    fn elem_of(&mut self, arrays: &[(GExpr, GTy)]) -> GTy {
        match self.pick(arrays).1 {
            GTy::Array(e, _) => *e,
            _ => unreachable!("invariant: arrays_of gives arrays"),
        }
    }

    /// `scanl` or `scanr` over one of `arrays` (all of one size `s`), with
    /// accumulator type `el`: an array of size `s + 1`.
    fn scan(
        &mut self,
        el: &GTy,
        arrays: &[(GExpr, GTy)],
        size: usize,
        env: &Env,
        nao: u32,
    ) -> GExpr {
        let (arr, arr_ty) = self.pick(arrays);
        let GTy::Array(xe, _) = arr_ty else {
            unreachable!("invariant: arrays_of gives arrays")
        };
        let (a, x) = (self.fresh("acc"), self.fresh("e"));
        let left = self.rng.chance(0.5);
        let isize = 1 + self.rng.below(3);
        let init = self.expr(el, isize, env, nao);
        let mut body_env = env.clone();
        body_env.push((a.clone(), el.clone()));
        body_env.push((x.clone(), *xe));
        let body_size = 3 + self.rng.below(size / 2 + 1);
        let body = self.expr(el, body_size, &body_env, nao + 1);
        let (op, params) = if left {
            (Prim::Scanl, vec![a, x])
        } else {
            (Prim::Scanr, vec![x, a])
        };
        GExpr::Loop(Loop {
            op,
            params,
            body: b(body),
            args: vec![init, arr],
        })
    }

    fn let_in(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        // Half the lets of higher-order programs bind a real as a lambda's
        // parameter.
        let lambda = self.feat.higher_order && self.rng.chance(0.5);
        let vty = if lambda {
            GTy::Real
        } else {
            self.some_ty(env, 0, nao)
        };
        let x = self.fresh("v");
        let vsize = 1 + self.rng.below(size / 2);
        let value = self.expr(&vty, vsize, env, nao);
        let mut env2 = env.clone();
        env2.push((x.clone(), vty));
        let body = self.expr(ty, size.saturating_sub(vsize + 1).max(1), &env2, nao);
        if !lambda {
            return GExpr::Let(x, b(value), b(body));
        }
        // A function-typed parameter's annotation names the result type,
        // so only a type without sizes is passed.
        let redundant = if self.feat.redundant && *ty == GTy::Real {
            2
        } else {
            0
        };
        let style = match self.rng.below(3 + redundant) {
            0 => LamStyle::Direct,
            2 if scalarish(ty) => LamStyle::Passed,
            3 => LamStyle::Twice,
            4 => LamStyle::Branched,
            _ => LamStyle::Bound,
        };
        GExpr::Apply(Box::new(Apply {
            style,
            g: self.fresh("g"),
            x,
            ret: ty.clone(),
            arg: value,
            body,
        }))
    }

    fn let_tuple(&mut self, ty: &GTy, size: usize, env: &Env, nao: u32) -> GExpr {
        let k = 2 + self.rng.below(2);
        let ts: Vec<GTy> = (0..k).map(|_| self.some_ty(env, 1, nao)).collect();
        let names: Vec<String> = (0..k).map(|_| self.fresh("w")).collect();
        let vsize = 1 + self.rng.below(size / 2);
        let value = self.expr(&GTy::Tuple(ts.clone()), vsize, env, nao);
        let mut env2 = env.clone();
        env2.extend(names.iter().cloned().zip(ts));
        let body = self.expr(ty, size.saturating_sub(vsize + 1).max(1), &env2, nao);
        GExpr::LetTuple(names, b(value), b(body))
    }
}

/// `e * e + 0.5`: keeps the argument of a partial operation positive.
fn positive(e: GExpr) -> GExpr {
    let sq = GExpr::Op2(Prim::Mul, b(e.clone()), b(e));
    GExpr::Op2(Prim::Add, b(sq), b(GExpr::Const(0.5)))
}

fn gen_params(g: &mut Gen<'_>) -> Vec<(String, GTy)> {
    let k = 1 + g.rng.below(4);
    let (n, m) = (Size::of(0), Size::of(1));
    let mut params: Vec<(String, GTy)> = Vec::new();
    let w: &[u32] = if g.feat.arrays {
        &[5, 4, 2, 2, 1, 1, 1]
    } else {
        &[5, 0, 0, 2]
    };
    for _ in 0..k {
        let ty = match g.rng.weighted(w) {
            0 => GTy::Real,
            1 => GTy::reals(n),
            2 => GTy::reals(m),
            3 => {
                let second = if g.feat.arrays && g.rng.chance(0.5) {
                    GTy::reals(n)
                } else {
                    GTy::Real
                };
                GTy::Tuple(vec![GTy::Real, second])
            }
            4 => GTy::Array(Box::new(GTy::reals(m)), n),
            5 => GTy::Array(Box::new(GTy::Tuple(vec![GTy::Real, GTy::Real])), n),
            _ => GTy::Array(Box::new(GTy::Tuple(vec![GTy::Real, GTy::reals(m)])), n),
        };
        let name = g.fresh(if matches!(ty, GTy::Array(..)) {
            "A"
        } else {
            "x"
        });
        params.push((name, ty));
    }
    params
}

/// A random program of about `size` nodes returning a real, using
/// `features`.
pub fn gen_program(rng: &mut Rng, size: usize, features: &Features) -> Program {
    let mut g = Gen {
        rng,
        feat: features,
        next: 0,
        nest: 0,
    };
    let params = gen_params(&mut g);
    let body = g.expr(&GTy::Real, size.max(2), &params, 0);
    Program {
        params,
        ret: GTy::Real,
        body,
    }
}

/// A random program of about `size` nodes returning an array (`[n]R`
/// mostly; also `[n](R, R)`, `[n][m]R`, `[n+1]R` from a scan, and a tuple
/// `(R, [n]R)`): for the dot-product test between forward and reverse
/// mode.
pub fn gen_vector_program(rng: &mut Rng, size: usize, features: &Features) -> Program {
    let mut g = Gen {
        rng,
        feat: features,
        next: 0,
        nest: 0,
    };
    let mut params = gen_params(&mut g);
    let (n, m) = (Size::of(0), Size::of(1));
    if !params.iter().any(|(_, t)| *t == GTy::reals(n)) {
        params.push(("A0".to_string(), GTy::reals(n)));
    }
    let ext = features.extended;
    let ret = match g.rng.weighted(&[12, 2, 2, if ext { 2 } else { 0 }, 2]) {
        0 => GTy::reals(n),
        1 => GTy::Array(Box::new(GTy::Tuple(vec![GTy::Real, GTy::Real])), n),
        2 => {
            if !params.iter().any(|(_, t)| *t == GTy::reals(m)) {
                params.push(("B0".to_string(), GTy::reals(m)));
            }
            GTy::Array(Box::new(GTy::reals(m)), n)
        }
        3 => GTy::reals(n.plus(1)),
        _ => GTy::Tuple(vec![GTy::Real, GTy::reals(n)]),
    };
    let ret = if g.can_build(&ret, &params, 0) {
        ret
    } else {
        GTy::reals(n)
    };
    let body = g.expr(&ret, size.max(3), &params, 0);
    Program { params, ret, body }
}

/// Random inputs for the parameters: reals in [-2, 2], arrays of 0 to 5
/// elements (one length per size variable; `n` is 0 one time in twelve,
/// `m` at most 3 and 0 one time in twenty).
pub fn gen_inputs(rng: &mut Rng, p: &Program) -> Vec<GVal> {
    let sizes = [
        if rng.chance(0.08) {
            0
        } else {
            1 + rng.below(5)
        },
        if rng.chance(0.05) {
            0
        } else {
            1 + rng.below(3)
        },
    ];
    fn val(rng: &mut Rng, t: &GTy, sizes: &[usize; 2]) -> GVal {
        match t {
            GTy::Array(e, s) => {
                let len = (sizes[s.var] as i64 + s.offset).max(0) as usize;
                GVal::Array((0..len).map(|_| val(rng, e, sizes)).collect())
            }
            GTy::Tuple(ts) => GVal::Tuple(ts.iter().map(|t| val(rng, t, sizes)).collect()),
            _ => GVal::Real((rng.range(-2.0, 2.0) * 1000.0).round() / 1000.0),
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
/// returning something else than a real, the sum of its reals).
pub fn value_at(p: &Program, inputs: &[GVal]) -> Option<f64> {
    fn sum(v: &GVal) -> f64 {
        match v {
            GVal::Real(x) => *x,
            GVal::Array(xs) | GVal::Tuple(xs) => xs.iter().map(sum).sum(),
            _ => 0.0,
        }
    }
    result_at(p, inputs).map(|v| sum(&v))
}

/// The result of `p` at `inputs` if they are admissible.
pub fn result_at(p: &Program, inputs: &[GVal]) -> Option<GVal> {
    let mut env: Vec<(String, GVal)> = p
        .params
        .iter()
        .map(|(n, _)| n.clone())
        .zip(inputs.iter().cloned())
        .collect();
    eval(&p.body, &mut env).ok()
}
