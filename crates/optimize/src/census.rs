//! Occurrence analysis: how often, and where, each bound name of a
//! definition is used. Computed once per round, before the simplifier
//! runs, in one pass over the definition's tree.
//!
//! Binders are unique within a definition (core form), so one map from
//! names to [`Occ`] describes every binder at once. The simplifier only
//! ever *removes* occurrences of names it read here, or moves them out of
//! lambdas (beta-reduction), so the counts stay upper bounds of the true
//! counts during the round; names it makes up itself have no entry and are
//! treated as used many times, under a lambda.

use syntax::{Expr, ExprId, Module, Name, Pat};

use crate::hash::FxHashMap;

/// What the census knows of one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Occ {
    /// The number of occurrences.
    pub count: u32,
    /// Whether some occurrence is inside a lambda that is inside the
    /// binder's scope (moving a value there may evaluate it many times).
    pub under_lambda: bool,
    /// Occurrences as the function of a call, or as the function argument
    /// of a builtin: the uses a lambda can be inlined into.
    pub calls: u32,
    /// Occurrences as the tuple of a projection.
    pub projections: u32,
    /// Occurrences as the array of `map (fun t -> t.i)`, an unzipping
    /// projection (each also counted as a use of `x.i`).
    pub proj_maps: u32,
    /// Occurrences as the array of an index `x[i]` directly inside the
    /// function of a `map` or `map2` one lambda below the binder: the
    /// element reads of a gather (`map (fun c -> .. x[c] ..) C`), each
    /// evaluated once per element of that loop's array.
    pub gathered: u32,
    /// Occurrences as the array of an index `x[i]` directly inside the
    /// function of an `ifold` one lambda below the binder, `i` that
    /// function's counter: each element read once per iteration, no two
    /// iterations reading the same element.
    pub counter_reads: u32,
    /// The lambda depth of the binder (0 for free names).
    pub depth: u32,
}

impl Occ {
    /// The entry of a name the census did not see: used many times.
    pub const UNKNOWN: Occ = Occ {
        count: u32::MAX,
        under_lambda: true,
        calls: 0,
        projections: 0,
        proj_maps: 0,
        gathered: 0,
        counter_reads: 0,
        depth: 0,
    };
}

/// The position of a node in its parent, as far as the census cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    Call,
    ProjMap,
    Proj,
    /// The array of an index.
    Indexed,
    /// The array of an index at the counter of the `ifold` whose function
    /// is the innermost lambda.
    Counter,
    Other,
}

/// The name under which the census counts the uses of `x.index`.
pub(crate) fn component(x: &Name, index: u32) -> Name {
    Name::new(format!("{x}.{index}"))
}

/// The occurrences of every name bound in the tree under `root`.
/// `capacity` is a guess of the number of names, to spare rehashing.
pub(crate) fn census(m: &Module, root: ExprId, capacity: usize) -> FxHashMap<Name, Occ> {
    let mut c = Census {
        m,
        occ: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
        counters: FxHashMap::default(),
        destructured: Vec::new(),
    };
    c.walk(root, 0, Position::Other);
    // `let (a, b) = t` uses `t.i` where its `x_i` is used: a component
    // bound to a dead name is never read.
    for (t, depth, xs) in std::mem::take(&mut c.destructured) {
        for (i, x) in xs.iter().enumerate() {
            if c.occ.get(x).is_some_and(|o| o.count > 0) {
                c.record(&component(&t, i as u32 + 1), depth, Position::Other);
            }
        }
    }
    c.occ
}

struct Census<'m> {
    m: &'m Module,
    occ: FxHashMap<Name, Occ>,
    /// The counters of `ifold`s' functions, with the depth of the
    /// function's body: an occurrence at that depth has the function as
    /// its innermost lambda.
    counters: FxHashMap<Name, u32>,
    /// The `let (x1, .., xn) = t` met, with their depth.
    destructured: Vec<(Name, u32, Vec<Name>)>,
}

impl Census<'_> {
    fn bind(&mut self, name: &Name, depth: u32) {
        self.occ.insert(
            name.clone(),
            Occ {
                depth,
                ..Occ::default()
            },
        );
    }

    fn record(&mut self, x: &Name, depth: u32, ctx: Position) {
        self.record_in(x, depth, ctx, false);
    }

    /// `in_map`: the innermost lambda around the occurrence is the
    /// function of a `map` or `map2`.
    fn record_in(&mut self, x: &Name, depth: u32, ctx: Position, in_map: bool) {
        let o = match self.occ.get_mut(x) {
            Some(o) => o,
            None => {
                // Free names (definition parameters) get an entry too; the
                // simplifier never asks about them. A component `t.i` is
                // bound where `t` is.
                let bound_at = x
                    .as_str()
                    .rsplit_once('.')
                    .and_then(|(t, _)| self.occ.get(&Name::new(t)))
                    .map_or(0, |o| o.depth);
                self.occ.entry(x.clone()).or_insert(Occ {
                    depth: bound_at,
                    ..Occ::default()
                })
            }
        };
        o.count = o.count.saturating_add(1);
        o.under_lambda |= depth > o.depth;
        match ctx {
            Position::Call => o.calls += 1,
            Position::ProjMap => o.proj_maps += 1,
            Position::Proj => o.projections += 1,
            Position::Indexed if in_map && depth == o.depth + 1 => o.gathered += 1,
            Position::Counter if depth == o.depth + 1 => o.counter_reads += 1,
            Position::Indexed | Position::Counter | Position::Other => {}
        }
    }

    /// The index `i` when `op args` is `map (fun t -> t.i) _`.
    fn proj_map(&self, op: syntax::Prim, args: &[ExprId]) -> Option<u32> {
        if op != syntax::Prim::Map {
            return None;
        }
        let Expr::Lambda { params, body } = self.m.expr(args[0]) else {
            return None;
        };
        match (params.as_slice(), self.m.expr(*body)) {
            ([p], Expr::Proj { tuple, index }) if matches!(self.m.expr(*tuple), Expr::Var(t) if *t == p.name) => {
                Some(*index)
            }
            _ => None,
        }
    }

    /// Visits the tree under `root` with an explicit stack (programs are
    /// deeper than the call stack); a binder is recorded when its node is
    /// visited, before any occurrence in its scope. Each entry carries
    /// whether the innermost lambda around it is the function of a `map`
    /// or `map2` (for a lambda node: whether it is one).
    fn walk(&mut self, root: ExprId, depth: u32, ctx: Position) {
        let mut todo = vec![(root, depth, ctx, false)];
        while let Some((id, depth, ctx, in_map)) = todo.pop() {
            // A child inherits `in_map`, except a lambda, which starts its
            // own (a map's function or not).
            let inherit = |c: ExprId, map_fn: bool| match self.m.expr(c) {
                Expr::Lambda { .. } => map_fn,
                _ => in_map,
            };
            match self.m.expr(id) {
                Expr::Var(x) => self.record_in(x, depth, ctx, in_map),
                Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Section(_) => {}
                Expr::Let {
                    pat, value, body, ..
                } => {
                    match pat {
                        Pat::Var(x) => self.bind(x, depth),
                        Pat::Tuple(xs) => xs.iter().for_each(|x| self.bind(x, depth)),
                    }
                    todo.push((*body, depth, Position::Other, inherit(*body, false)));
                    match (pat, self.m.expr(*value)) {
                        // `let (a, b) = t` uses `t` like `t.1` and `t.2` do.
                        (Pat::Tuple(xs), Expr::Var(t)) => {
                            self.record(t, depth, Position::Proj);
                            self.destructured.push((t.clone(), depth, xs.clone()));
                        }
                        _ => todo.push((*value, depth, Position::Other, inherit(*value, false))),
                    }
                }
                Expr::Lambda { params, body } => {
                    for p in params {
                        self.bind(&p.name, depth + 1);
                    }
                    // `in_map` of a lambda says whether it is a map's
                    // function; its body's innermost lambda is itself.
                    let body_in_map = in_map && !matches!(self.m.expr(*body), Expr::Lambda { .. });
                    todo.push((*body, depth + 1, Position::Other, body_in_map));
                }
                Expr::App { func, args } => {
                    for &a in args.iter().rev() {
                        todo.push((a, depth, Position::Other, inherit(a, false)));
                    }
                    todo.push((*func, depth, Position::Call, inherit(*func, false)));
                }
                Expr::Prim { op, args } => {
                    // `map (fun t -> t.i) x`: an unzipping projection of x.
                    if let Some(i) = self.proj_map(*op, args)
                        && let Expr::Var(x) = self.m.expr(args[1])
                    {
                        self.record(x, depth, Position::ProjMap);
                        self.record(&component(x, i), depth, Position::Other);
                        todo.push((args[0], depth, Position::Call, true));
                        continue;
                    }
                    if *op == syntax::Prim::Ifold
                        && let Expr::Lambda { params, .. } = self.m.expr(args[0])
                        && let [_, i] = params.as_slice()
                    {
                        self.counters.insert(i.name.clone(), depth + 1);
                    }
                    let fun_pos = op.function_args();
                    let maps = matches!(op, syntax::Prim::Map | syntax::Prim::Map2);
                    for (i, &a) in args.iter().enumerate().rev() {
                        let ctx = if fun_pos.contains(&i) {
                            Position::Call
                        } else {
                            Position::Other
                        };
                        todo.push((a, depth, ctx, inherit(a, maps && i == 0)));
                    }
                }
                Expr::Proj { tuple, index } => {
                    // A projection of a variable also counts as a use of the
                    // component, under the name `x.i` (no real name has a dot).
                    if let Expr::Var(x) = self.m.expr(*tuple) {
                        self.record(&component(x, *index), depth, ctx);
                    }
                    todo.push((*tuple, depth, Position::Proj, in_map));
                }
                Expr::Index { array, index } => {
                    let at_counter = matches!(self.m.expr(*index),
                        Expr::Var(i) if self.counters.get(i) == Some(&depth));
                    let pos = if at_counter {
                        Position::Counter
                    } else {
                        Position::Indexed
                    };
                    todo.push((*index, depth, Position::Other, in_map));
                    todo.push((*array, depth, pos, in_map));
                }
                other => other
                    .for_each_child(|c| todo.push((c, depth, Position::Other, inherit(c, false)))),
            }
        }
    }
}
