//! Which folds may update their array accumulator in place.
//!
//! A fold whose accumulator holds arrays writes each step's result to a
//! second set of buffers and swaps (`folds.rs`, `fold_arrays`), because
//! in general the new accumulator may read any part of the old one. When
//! the function is *aligned* — every scalar of its result reads the old
//! accumulator only at the same position — the step can write straight
//! into the accumulator: `map2 (+) u v`, reverse mode's
//! `map2 (fun (u, v) -> let (a, b) = u in let (c, d) = v in (a + c, map2
//! (+) b d)) U V`, tuples of these. This is the accumulation of the
//! gradient contributions of a `map` (GMM's sum over points of
//! per-component gradients): no second buffer, no copy per step.
//!
//! The check is syntactic, over the lambda's body, with each name bound to
//! the position (tuple path, relative to the current element) of the
//! accumulator it stands for. Every array of the result must also be
//! *anchored*: the accumulator itself at that position, or a `map`/`map2`
//! one of whose sources is — so that its length is the accumulator's
//! (`map2` checks the other source against it) and writing it in place
//! stays inside the buffers.

use std::collections::HashMap;

use syntax::{Expr, ExprId, Module, Name, Pat, Prim, stack};

use crate::layout::has_array;
use crate::val::Func;

/// Whether `f`, a fold's function `fun (acc, x) -> ..`, is aligned in its
/// accumulator.
pub(crate) fn aligned(m: &Module, f: &Func) -> bool {
    let Expr::Lambda { params, body } = m.expr(f.lambda) else {
        return false;
    };
    let [acc, _] = params.as_slice() else {
        return false;
    };
    let mut env = HashMap::new();
    env.insert(acc.name.clone(), Vec::new());
    Check { m }.check(*body, &[], &env)
}

/// A position in the accumulator: tuple components, 1-based.
type Path = Vec<u32>;

/// Names standing for parts of the accumulator at the current element.
type Env = HashMap<Name, Path>;

struct Check<'m> {
    m: &'m Module,
}

impl Check<'_> {
    fn has_array(&self, id: ExprId) -> bool {
        self.m.ty(id).is_none_or(has_array)
    }

    /// Whether the tree under `id` mentions a name of `env`.
    fn mentions(&self, id: ExprId, env: &Env) -> bool {
        let mut todo = vec![id];
        while let Some(i) = todo.pop() {
            if let Expr::Var(x) = self.m.expr(i)
                && env.contains_key(x)
            {
                return true;
            }
            self.m.expr(i).for_each_child(|c| todo.push(c));
        }
        false
    }

    /// The position `id` stands for, when it is a name of `env` or a
    /// projection of one.
    fn path(&self, id: ExprId, env: &Env) -> Option<Path> {
        match self.m.expr(id) {
            Expr::Var(x) => env.get(x).cloned(),
            Expr::Proj { tuple, index } => {
                let mut p = self.path(*tuple, env)?;
                p.push(*index);
                Some(p)
            }
            _ => None,
        }
    }

    /// The position all of a scalar expression's reads of the accumulator
    /// are at (`None` when it reads none, or several, or a whole part).
    fn scalar_path(&self, id: ExprId, env: &Env) -> Option<Path> {
        let mut found: Option<Path> = None;
        let mut todo = vec![id];
        while let Some(i) = todo.pop() {
            if let Some(p) = self.path(i, env) {
                if found.as_ref().is_some_and(|f| *f != p) {
                    return None;
                }
                found = Some(p);
                continue;
            }
            match self.m.expr(i) {
                Expr::Lambda { .. } | Expr::Let { .. } => {
                    if self.mentions(i, env) {
                        return None;
                    }
                }
                e => e.for_each_child(|c| todo.push(c)),
            }
        }
        found
    }

    /// Whether `id`, written at position `out`, reads the accumulator only
    /// at `out` and is anchored (see the module doc).
    fn check(&self, id: ExprId, out: &[u32], env: &Env) -> bool {
        stack::guard(|| {
            if !self.mentions(id, env) {
                return !self.has_array(id);
            }
            if let Some(p) = self.path(id, env) {
                return p == out;
            }
            match self.m.expr(id) {
                Expr::Tuple(items) => items.iter().enumerate().all(|(i, &item)| {
                    let mut o = out.to_vec();
                    o.push(i as u32 + 1);
                    self.check(item, &o, env)
                }),
                Expr::Let {
                    pat, value, body, ..
                } => {
                    let mut inner = env.clone();
                    let bound = if let Some(p) = self.path(*value, env) {
                        Some(p)
                    } else if !self.mentions(*value, env) {
                        None
                    } else if !self.has_array(*value) {
                        match self.scalar_path(*value, env) {
                            Some(p) => Some(p),
                            None => return false,
                        }
                    } else {
                        return false;
                    };
                    if let Some(p) = bound {
                        match pat {
                            Pat::Var(x) => {
                                inner.insert(x.clone(), p);
                            }
                            Pat::Tuple(xs) => {
                                for (i, x) in xs.iter().enumerate() {
                                    let mut q = p.clone();
                                    q.push(i as u32 + 1);
                                    inner.insert(x.clone(), q);
                                }
                            }
                        }
                    }
                    self.check(*body, out, &inner)
                }
                Expr::If {
                    cond,
                    then_branch,
                    else_branch,
                } => {
                    !self.mentions(*cond, env)
                        && self.check(*then_branch, out, env)
                        && self.check(*else_branch, out, env)
                }
                Expr::Prim {
                    op: Prim::Map | Prim::Map2,
                    args,
                } => {
                    let Expr::Lambda { params, body } = self.m.expr(args[0]) else {
                        return false;
                    };
                    if params.len() != args.len() - 1 || self.mentions(args[0], env) {
                        return false;
                    }
                    let mut inner = Env::new();
                    let mut anchored = false;
                    for (p, &a) in params.iter().zip(&args[1..]) {
                        match self.path(a, env) {
                            Some(q) if q == out => {
                                anchored = true;
                                inner.insert(p.name.clone(), Vec::new());
                            }
                            Some(_) => return false,
                            None if self.mentions(a, env) => return false,
                            None => {}
                        }
                    }
                    anchored && self.check(*body, &[], &inner)
                }
                Expr::Prim { op, args } if op.function_arg().is_none() && !self.has_array(id) => {
                    args.iter().all(|&a| self.check(a, out, env))
                }
                _ => false,
            }
        })
    }
}
