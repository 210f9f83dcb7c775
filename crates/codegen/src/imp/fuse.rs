//! Sibling loop fusion on the loop IR (docs/codegen.md, "Sibling loop
//! fusion"), run by `emit` on every function before code motion.
//!
//! `L1; S; L2`, two counted loops from 0 by 1 over the same bound in the
//! same direction, become `D; L1+L2; R` (the second body after the
//! first, its index renamed to the first's; `D` and `R` are `S` split,
//! each in its order) when:
//!
//! - neither loop breaks, not both may fail (an error of `L2`'s would
//!   come before one of `L1`'s in a later iteration), and the bound reads
//!   nothing `L1` writes;
//! - `D` are the declarations and checks of `S` that read nothing `L1` or
//!   `R` writes and cannot fail if `L1` or a statement of `R` before them
//!   can (the evaluator would report that error first), a failed
//!   allocation aside (an error the evaluator does not have); `R` is the
//!   rest (work that needs `L1`'s results, other loops);
//! - `L2` may run before `R`: `R` does not break, writes nothing `L2` or
//!   the bound reads, reads and writes nothing `L2` writes, and `L2`
//!   cannot fail if `R` can;
//! - every variable or memory block written by one loop and read or
//!   written by the other is a block used, in both, only as `p[i]` with
//!   the loop's own index (the same element in the same iteration, which
//!   fusion keeps in order) and through no other variable (a view of it,
//!   or a mutable variable that may hold it);
//! - the pragmas agree: equal, or vector reductions (`omp simd`, the
//!   `reassociate` configuration) whose reductions are then listed
//!   together, or a vector reduction and a loop without a pragma whose
//!   body may run in vector lanes too (it neither fails, allocates nor
//!   breaks, and writes only its own variables and elements `p[i]` of its
//!   own iteration).
//!
//! A loop that shares nothing with a multi-lane loop and its remainder
//! (a reassociated `reduce`) joins their lanes instead (`fuse_lanes.rs`).
//! A loop around one inner loop runs two iterations per trip when the
//! two copies' inner loops fuse by these rules (`fuse_jam.rs`).

use std::collections::{HashMap, HashSet};

use super::ir::*;

#[path = "fuse_lanes.rs"]
mod lanes;

#[path = "fuse_jam.rs"]
mod jam;

/// Fuses sibling loops everywhere in `f`.
pub fn fuse(f: &mut Func) {
    let roots = Roots::of(f);
    let body = std::mem::take(&mut f.body);
    let mut vars = std::mem::take(&mut f.vars);
    f.body = block(&roots, &mut vars, body);
    f.vars = vars;
}

fn block(r: &Roots, vars: &mut Vec<Var>, b: Block) -> Block {
    syntax::stack::guard(|| {
        let mut b: Block = b.into_iter().map(|s| inner(r, vars, s)).collect();
        let mut k = 0;
        while k < b.len() {
            if !try_fuse_at(r, &mut b, k) && !lanes::try_fuse_lanes(r, vars, &mut b, k) {
                k += 1;
            }
        }
        // Last, when the loops that fuse with a loop are in its body.
        b.into_iter()
            .flat_map(|s| match s {
                Stmt::For(l) => jam::try_jam(r, vars, &l).unwrap_or_else(|| vec![Stmt::For(l)]),
                s => vec![s],
            })
            .collect()
    })
}

/// A statement with the blocks inside it fused.
fn inner(r: &Roots, vars: &mut Vec<Var>, s: Stmt) -> Stmt {
    match s {
        Stmt::For(mut l) => {
            l.body = block(r, vars, std::mem::take(&mut l.body));
            Stmt::For(l)
        }
        Stmt::Loop { body } => Stmt::Loop {
            body: block(r, vars, body),
        },
        Stmt::If { cond, then, els } => Stmt::If {
            cond,
            then: block(r, vars, then),
            els: block(r, vars, els),
        },
        Stmt::Region {
            mark,
            body,
            reset_if,
        } => Stmt::Region {
            mark,
            body: block(r, vars, body),
            reset_if,
        },
        Stmt::Parallel {
            threads,
            body,
            workers,
        } => Stmt::Parallel {
            threads,
            body: block(r, vars, body),
            workers,
        },
        s => s,
    }
}

/// A loop of the fusable form: from 0 by 1.
fn simple(s: Option<&Stmt>) -> Option<&For> {
    match s {
        Some(Stmt::For(l)) if l.lo == Some(Expr::I64(0)) && l.step == 1 => Some(l),
        _ => None,
    }
}

/// How many later loops of the same bound `try_fuse_at` tries to fuse a
/// loop with (the nearest first): enough to pass the few loops of other
/// work a gradient puts between two over the same array, few enough that
/// a long block costs little.
const CANDIDATES: usize = 4;

fn try_fuse_at(r: &Roots, b: &mut Block, k: usize) -> bool {
    let Some((hi, dir)) = simple(b.get(k)).map(|l| (l.hi.clone(), l.dir)) else {
        return false;
    };
    let mut tried = 0;
    for j in k + 1..b.len() {
        if !simple(b.get(j)).is_some_and(|l2| l2.hi == hi && l2.dir == dir) {
            continue;
        }
        if fuse_pair(r, b, k, j) {
            return true;
        }
        tried += 1;
        if tried == CANDIDATES {
            break;
        }
    }
    false
}

/// Fuses loops `b[k]` and `b[j]` (of the same bound and direction) if
/// they may be: the statements between that the second loop may run
/// after (`rest`) stay after the fused loop, the others (declarations and
/// checks) move before it.
fn fuse_pair(r: &Roots, b: &mut Block, k: usize, j: usize) -> bool {
    let (Some(l1), Some(l2)) = (simple(b.get(k)), simple(b.get(j))) else {
        return false;
    };
    // A loop left early runs fewer iterations of the other's body.
    if super::verify::contains_break(&l1.body) || super::verify::contains_break(&l2.body) {
        return false;
    }
    let (i1, i2) = (l1.index, l2.index);
    let mut body2 = l2.body.clone();
    rename_block(&mut body2, i2, i1);
    let between = &b[k + 1..j];
    let e1 = Effects::of(r, &l1.body, i1);
    let e2 = Effects::of(r, &body2, i1);
    let mut bound = Vec::new();
    l1.hi.reads(&mut bound);
    if bound.iter().any(|v| e1.writes.contains(v)) {
        return false;
    }
    // Fused, an error of the second loop's in an earlier iteration would
    // come before one of the first's in a later one.
    let l1_fails = super::licm::may_fail(&l1.body);
    if l1_fails && super::licm::may_fail(&body2) {
        return false;
    }
    let Some((before, rest)) =
        split_between(r, between, (&e1, l1_fails, i1), (&e2, &body2), &bound)
    else {
        return false;
    };
    let conflicts: HashSet<VarId> = e1
        .writes
        .iter()
        .filter(|v| e2.reads.contains(v) || e2.writes.contains(v))
        .chain(e2.writes.iter().filter(|v| e1.reads.contains(v)))
        .copied()
        .collect();
    for v in conflicts {
        let ok =
            r.is_block(v) && indexed_only(r, &l1.body, v, i1) && indexed_only(r, &body2, v, i1);
        if !ok {
            return false;
        }
    }
    let Some(pragma) = merged_pragma(r, l1, &l2.pragma, &body2) else {
        return false;
    };
    let Some(Stmt::For(mut fused)) = b.get(k).cloned() else {
        return false;
    };
    fused.pragma = pragma;
    fused.body.extend(body2);
    let mut replacement = before;
    replacement.push(Stmt::For(fused));
    replacement.extend(rest);
    b.splice(k..=j, replacement);
    true
}

/// The statements between a loop and a later one it is fused with, split
/// into those that move before the fused loop (declarations and checks
/// reading nothing the first loop or a statement staying writes, and that
/// cannot fail if the first loop or a statement staying before them can:
/// the errors' order is the evaluator's) and those that stay after it;
/// `None` if the second loop may not run before those that stay.
fn split_between(
    r: &Roots,
    between: &[Stmt],
    (e1, l1_fails, i1): (&Effects, bool, VarId),
    (e2, body2): (&Effects, &[Stmt]),
    bound: &[VarId],
) -> Option<(Vec<Stmt>, Vec<Stmt>)> {
    let allocated = allocated(between);
    let (mut before, mut rest) = (Vec::new(), Vec::new());
    let mut rest_effects = Effects::default();
    let mut rest_fails = false;
    for s in between {
        let es = Effects::of(r, std::slice::from_ref(s), i1);
        let decl = matches!(
            s,
            Stmt::Let { .. } | Stmt::Fail { .. } | Stmt::Alloc { .. } | Stmt::Checked { .. }
        );
        let fails = fails_other_than_alloc(s, &allocated);
        let stays = !decl
            || es
                .reads
                .iter()
                .any(|v| e1.writes.contains(v) || rest_effects.writes.contains(v))
            || (fails && (l1_fails || rest_fails));
        if stays {
            rest_fails |= fails;
            rest_effects.writes.extend(es.writes);
            rest_effects.reads.extend(es.reads);
            rest.push(s.clone());
        } else {
            before.push(s.clone());
        }
    }
    if !rest.is_empty() {
        // The second loop runs before what stays: it must read nothing
        // that writes, write nothing that reads or writes, and not fail
        // if that can; and nothing staying may leave the block.
        let rw = &rest_effects;
        if super::verify::contains_break(&rest)
            || bound.iter().any(|v| rw.writes.contains(v))
            || e2.reads.iter().any(|v| rw.writes.contains(v))
            || e2
                .writes
                .iter()
                .any(|v| rw.writes.contains(v) || rw.reads.contains(v))
            || (rest_fails && super::licm::may_fail(body2))
        {
            return None;
        }
    }
    Some((before, rest))
}

/// The blocks some statements allocate.
fn allocated(b: &[Stmt]) -> HashSet<VarId> {
    b.iter()
        .filter_map(|s| match s {
            Stmt::Alloc { var, .. } => Some(*var),
            _ => None,
        })
        .collect()
}

/// Whether a statement may fail other than by the null check of a block
/// in `allocated` (a failed allocation: no error of the evaluator's).
fn fails_other_than_alloc(s: &Stmt, allocated: &HashSet<VarId>) -> bool {
    match s {
        Stmt::Fail {
            cond: Expr::IsNull(p),
            ..
        } => !matches!(**p, Expr::Var(v) if allocated.contains(&v)),
        s => super::licm::may_fail(std::slice::from_ref(s)),
    }
}

/// The pragma of `l1` fused with a loop of pragma `p2` and body `body2`
/// (its index renamed to `l1`'s), or `None` when they cannot be fused.
fn merged_pragma(
    r: &Roots,
    l1: &For,
    p2: &Option<Pragma>,
    body2: &[Stmt],
) -> Option<Option<Pragma>> {
    let i = l1.index;
    match (&l1.pragma, p2) {
        (a, b) if a == b => Some(a.clone()),
        (Some(Pragma::SimdReduction { .. }), None) if lanes_safe(r, body2, i) => {
            Some(l1.pragma.clone())
        }
        (None, Some(Pragma::SimdReduction { .. })) if lanes_safe(r, &l1.body, i) => {
            Some(p2.clone())
        }
        (
            Some(Pragma::SimdReduction {
                reductions: a,
                width: wa,
            }),
            Some(Pragma::SimdReduction {
                reductions: b,
                width: wb,
            }),
        ) if wa == wb => Some(Some(Pragma::SimdReduction {
            reductions: a.iter().chain(b).cloned().collect(),
            width: *wa,
        })),
        _ => None,
    }
}

/// Whether a loop body of index `i` may run in vector lanes: it neither
/// fails, allocates, breaks nor holds a loop with a pragma, and every
/// variable or block it writes is its own or a block used only as `p[i]`.
fn lanes_safe(r: &Roots, body: &[Stmt], i: VarId) -> bool {
    fn plain(b: &[Stmt], own: &mut HashSet<VarId>) -> bool {
        b.iter().all(|s| match s {
            Stmt::Let { var, .. } => {
                own.insert(*var);
                true
            }
            Stmt::Set { .. } => true,
            Stmt::If { then, els, .. } => plain(then, own) && plain(els, own),
            Stmt::For(l) => {
                own.insert(l.index);
                l.pragma.is_none() && plain(&l.body, own)
            }
            _ => false,
        })
    }
    let mut own = HashSet::new();
    if !plain(body, &mut own) {
        return false;
    }
    Effects::of(r, body, i)
        .writes
        .iter()
        .filter(|v| !own.contains(v))
        .all(|&v| r.is_block(v) && indexed_only(r, body, v, i))
}

/// Where each address variable may point: the blocks (allocations and
/// parameters) of every value it is given, its first and every later one
/// (flow-insensitive, so a mutable variable assigned two blocks, as
/// buffers swapped after each step are, may point into both).
struct Roots {
    of: HashMap<VarId, HashSet<VarId>>,
    blocks: HashSet<VarId>,
}

impl Roots {
    fn of(f: &Func) -> Roots {
        let mut r = Roots {
            of: HashMap::new(),
            blocks: HashSet::new(),
        };
        for &p in &f.params {
            if matches!(f.var(p).ty, Ty::Mem { .. }) {
                r.blocks.insert(p);
                r.of.insert(p, HashSet::from([p]));
            }
        }
        let mut flows = Vec::new();
        r.walk(f, &f.body, &mut flows);
        // Until nothing changes: a value given to a variable adds its
        // blocks to the variable's.
        loop {
            let mut changed = false;
            for (v, e) in &flows {
                let from = r.expr(e);
                let to = r.of.entry(*v).or_default();
                for x in from {
                    changed |= to.insert(x);
                }
            }
            if !changed {
                return r;
            }
        }
    }

    /// Records the blocks and every value given to an address variable.
    fn walk<'b>(&mut self, f: &Func, b: &'b Block, flows: &mut Vec<(VarId, &'b Expr)>) {
        for s in b {
            match s {
                Stmt::Alloc { var, .. } => {
                    self.blocks.insert(*var);
                    self.of.insert(*var, HashSet::from([*var]));
                }
                Stmt::Let {
                    var,
                    init: Some(value),
                }
                | Stmt::Set {
                    place: Place::Var(var),
                    value,
                } if matches!(f.var(*var).ty, Ty::Mem { .. }) => {
                    self.of.entry(*var).or_default();
                    flows.push((*var, value));
                }
                Stmt::For(l) => self.walk(f, &l.body, flows),
                Stmt::Loop { body } | Stmt::Region { body, .. } | Stmt::Parallel { body, .. } => {
                    self.walk(f, body, flows)
                }
                Stmt::If { then, els, .. } => {
                    self.walk(f, then, flows);
                    self.walk(f, els, flows);
                }
                _ => {}
            }
        }
    }

    /// The blocks an address expression may point into.
    fn expr(&self, e: &Expr) -> HashSet<VarId> {
        let mut vars = Vec::new();
        e.reads(&mut vars);
        vars.iter()
            .filter_map(|v| self.of.get(v))
            .flatten()
            .copied()
            .collect()
    }

    fn is_block(&self, v: VarId) -> bool {
        self.blocks.contains(&v)
    }
}

/// What some statements write and read: variables assigned or declared,
/// and the blocks stored into (writes); variables and blocks read.
#[derive(Default)]
struct Effects {
    writes: HashSet<VarId>,
    reads: HashSet<VarId>,
}

impl Effects {
    fn of(r: &Roots, b: &[Stmt], index: VarId) -> Effects {
        let mut e = Effects::default();
        e.block(r, b);
        e.writes.remove(&index);
        e.reads.remove(&index);
        e
    }

    fn read(&mut self, r: &Roots, x: &Expr) {
        let mut vars = Vec::new();
        x.reads(&mut vars);
        for v in vars {
            self.reads.insert(v);
            if let Some(roots) = r.of.get(&v) {
                self.reads.extend(roots.iter().copied());
            }
        }
    }

    fn block(&mut self, r: &Roots, b: &[Stmt]) {
        for s in b {
            match s {
                Stmt::Let { var, init } => {
                    self.writes.insert(*var);
                    if let Some(x) = init {
                        self.read(r, x);
                    }
                }
                Stmt::Set { place, value } => {
                    self.read(r, value);
                    match place {
                        Place::Var(v) | Place::Out(v) => {
                            self.writes.insert(*v);
                        }
                        Place::Elem { mem, index } => {
                            self.read(r, index);
                            self.read(r, mem);
                            self.writes.extend(r.expr(mem));
                        }
                    }
                }
                Stmt::Fail { cond, a, b, .. } => {
                    self.read(r, cond);
                    self.read(r, a);
                    self.read(r, b);
                }
                Stmt::Alloc { var, count, when } => {
                    self.writes.insert(*var);
                    self.read(r, count);
                    if let Some(c) = when {
                        self.read(r, c);
                    }
                }
                Stmt::Checked { var, a, b, .. } => {
                    self.writes.insert(*var);
                    self.read(r, a);
                    self.read(r, b);
                }
                Stmt::For(l) => {
                    self.writes.insert(l.index);
                    if let Some(lo) = &l.lo {
                        self.read(r, lo);
                    }
                    self.read(r, &l.hi);
                    if let Some(Pragma::SimdReduction { reductions, .. }) = &l.pragma {
                        self.writes.extend(reductions.iter().map(|r| r.acc));
                    }
                    self.block(r, &l.body);
                }
                Stmt::Loop { body } => self.block(r, body),
                Stmt::Break => {}
                Stmt::If { cond, then, els } => {
                    self.read(r, cond);
                    self.block(r, then);
                    self.block(r, els);
                }
                Stmt::Region {
                    mark,
                    body,
                    reset_if,
                } => {
                    self.writes.insert(*mark);
                    self.block(r, body);
                    if let Some(c) = reset_if {
                        self.read(r, c);
                    }
                }
                Stmt::Parallel { threads, body, .. } => {
                    self.read(r, threads);
                    self.block(r, body);
                }
            }
        }
    }
}

/// Whether every use of a variable that may point into `block` is `block`
/// itself indexed by `i`: `block[i]`, loaded or stored.
fn indexed_only(r: &Roots, b: &[Stmt], block: VarId, i: VarId) -> bool {
    let points = |v: VarId| r.of.get(&v).is_some_and(|s| s.contains(&block));
    let mut ok = true;
    visit_exprs(b, &mut |e, as_mem_of: Option<&Expr>| {
        if let Expr::Var(v) = e
            && points(*v)
        {
            ok &= *v == block && as_mem_of == Some(&Expr::Var(i));
        }
    });
    ok
}

/// Calls `f` on every expression node of some statements, with the index
/// when the node is the memory of a load or store.
pub(super) fn visit_exprs(b: &[Stmt], f: &mut dyn FnMut(&Expr, Option<&Expr>)) {
    fn expr(e: &Expr, f: &mut dyn FnMut(&Expr, Option<&Expr>)) {
        match e {
            Expr::Load(m, i) => {
                if matches!(**m, Expr::Var(_)) {
                    f(m, Some(i));
                } else {
                    expr(m, f);
                }
                expr(i, f);
            }
            Expr::Var(_) => f(e, None),
            // A table is never written: no dependence between loops.
            Expr::F64(_)
            | Expr::I64(_)
            | Expr::I32(_)
            | Expr::Bool(_)
            | Expr::Null(_)
            | Expr::Table(_) => {}
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::IsNull(a) => expr(a, f),
            Expr::Binary(_, a, c) => {
                expr(a, f);
                expr(c, f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| expr(a, f)),
            Expr::Select(c, a, d) => {
                expr(c, f);
                expr(a, f);
                expr(d, f);
            }
        }
    }
    for s in b {
        match s {
            Stmt::Let { init, .. } => init.iter().for_each(|e| expr(e, f)),
            Stmt::Set { place, value } => {
                match place {
                    Place::Elem { mem, index } => {
                        if matches!(mem, Expr::Var(_)) {
                            f(mem, Some(index));
                        } else {
                            expr(mem, f);
                        }
                        expr(index, f);
                    }
                    Place::Var(_) | Place::Out(_) => {}
                }
                expr(value, f);
            }
            Stmt::Fail { cond, a, b, .. } => [cond, a, b].iter().for_each(|e| expr(e, f)),
            Stmt::Alloc { count, when, .. } => {
                expr(count, f);
                when.iter().for_each(|e| expr(e, f));
            }
            Stmt::Checked { a, b, .. } => [a, b].iter().for_each(|e| expr(e, f)),
            Stmt::For(l) => {
                l.lo.iter().for_each(|e| expr(e, f));
                expr(&l.hi, f);
                visit_exprs(&l.body, f);
            }
            Stmt::Loop { body } => visit_exprs(body, f),
            Stmt::Break => {}
            Stmt::If { cond, then, els } => {
                expr(cond, f);
                visit_exprs(then, f);
                visit_exprs(els, f);
            }
            Stmt::Region { body, reset_if, .. } => {
                visit_exprs(body, f);
                reset_if.iter().for_each(|e| expr(e, f));
            }
            Stmt::Parallel { threads, body, .. } => {
                expr(threads, f);
                visit_exprs(body, f);
            }
        }
    }
}

/// Renames variable `from` to `to` in some statements (reads only: the
/// index of a loop is never assigned in its body).
pub(super) fn rename_block(b: &mut [Stmt], from: VarId, to: VarId) {
    fn expr(e: &mut Expr, from: VarId, to: VarId) {
        match e {
            Expr::Var(v) if *v == from => *v = to,
            Expr::Var(_)
            | Expr::F64(_)
            | Expr::I64(_)
            | Expr::I32(_)
            | Expr::Bool(_)
            | Expr::Null(_)
            | Expr::Table(_) => {}
            Expr::Load(a, c) | Expr::Binary(_, a, c) => {
                expr(a, from, to);
                expr(c, from, to);
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) | Expr::IsNull(a) => expr(a, from, to),
            Expr::Call(_, args) => args.iter_mut().for_each(|a| expr(a, from, to)),
            Expr::Select(c, a, d) => {
                expr(c, from, to);
                expr(a, from, to);
                expr(d, from, to);
            }
        }
    }
    for s in b {
        match s {
            Stmt::Let { init, .. } => init.iter_mut().for_each(|e| expr(e, from, to)),
            Stmt::Set { place, value } => {
                if let Place::Elem { mem, index } = place {
                    expr(mem, from, to);
                    expr(index, from, to);
                }
                expr(value, from, to);
            }
            Stmt::Fail { cond, a, b, .. } => {
                expr(cond, from, to);
                expr(a, from, to);
                expr(b, from, to);
            }
            Stmt::Alloc { count, when, .. } => {
                expr(count, from, to);
                when.iter_mut().for_each(|e| expr(e, from, to));
            }
            Stmt::Checked { a, b, .. } => {
                expr(a, from, to);
                expr(b, from, to);
            }
            Stmt::For(l) => {
                l.lo.iter_mut().for_each(|e| expr(e, from, to));
                expr(&mut l.hi, from, to);
                rename_block(&mut l.body, from, to);
            }
            Stmt::Loop { body } => rename_block(body, from, to),
            Stmt::Parallel { threads, body, .. } => {
                expr(threads, from, to);
                rename_block(body, from, to);
            }
            Stmt::Break => {}
            Stmt::If { cond, then, els } => {
                expr(cond, from, to);
                rename_block(then, from, to);
                rename_block(els, from, to);
            }
            Stmt::Region { body, reset_if, .. } => {
                rename_block(body, from, to);
                reset_if.iter_mut().for_each(|e| expr(e, from, to));
            }
        }
    }
}
