//! The NaN hazards lint: `log`, `sqrt`, `/` and `pow` whose derivative is
//! infinite or NaN somewhere, in a place where a side that is not taken
//! still receives an adjoint.
//!
//! The adjoint of a side that does not contribute to the value is 0, and
//! the transposed Jacobian of a singular operation multiplies it by its
//! partial derivative: at a singular point that is `0 · inf` or `0 · NaN`,
//! NaN, although the value is finite (jax#347, #1052, #5798 for
//! `jnp.where`). Three places are told apart:
//!
//! - **inside a branch of `if`**: reverse mode differentiates only the
//!   branch taken (docs/derivatives.md), so the operation never runs where
//!   the branch is not taken: safe, no rewrite needed;
//! - **computed before an `if` and used by one branch only**: it runs
//!   whatever the condition, and where its branch is not taken its
//!   adjoint is 0 · inf: unsafe, move it into the branch;
//! - **under `max` or `min`**: both operands run, the one that loses gets
//!   the adjoint 0: unsafe, write the choice as an `if` on a condition
//!   that does not need the singular value. (A `reduce` or `foldl` whose
//!   function is a bare `max`/`min` of its parameters, directly over a
//!   `map`, runs the map's adjoint at the winner only, unf's `select.rs`
//!   and `picked.rs`: there the finding is conservative, as the facts do
//!   not tell the elements of an array apart.)
//!
//! The dataflow is [`crate::flow`]'s: a fact is the set of singular
//! operations whose value reaches a node through reals (a comparison or
//! a length stops it: no adjoint flows back that way).

use std::collections::BTreeSet;
use std::fmt;

use syntax::{Def, Expr, ExprId, Module, Prim, Ty};

use crate::flow::{self, Domain, Fact, Shape};
use crate::position::{Position, position};

/// The singular operations whose value reaches a node: the [`NEAREST`]
/// latest in the arena (post-order, so the ones computed last before the
/// node). Keeping them all would make a chain of n `log`s quadratic in
/// time and memory; a place reached by more is reported with the nearest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reach(pub BTreeSet<ExprId>);

/// How many singular operations a fact names at most.
pub const NEAREST: usize = 8;

impl Reach {
    fn trim(&mut self) {
        while self.0.len() > NEAREST {
            self.0.pop_first();
        }
    }
}

impl Fact for Reach {
    fn join(&mut self, other: &Reach) {
        self.0.extend(other.0.iter().copied());
        self.trim();
    }
}

/// Where a singular operation sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Inside a branch of the `if` at this node (the innermost).
    InBranch(ExprId),
    /// Computed outside the `if` at this node and used by its branches.
    BeforeIf(ExprId),
    /// Reaching an operand of the `max` or `min` at this node.
    UnderMaxMin(ExprId),
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The singular operation.
    pub op: ExprId,
    /// Where it sits.
    pub place: Place,
}

impl Finding {
    /// Whether reverse mode gives a finite adjoint here whatever the input.
    pub fn safe(&self) -> bool {
        matches!(self.place, Place::InBranch(_))
    }
}

/// The lint's findings on one definition, in program order.
#[derive(Debug, Clone)]
pub struct Report {
    /// The definition's name.
    pub entry: String,
    /// The findings.
    pub findings: Vec<Finding>,
    text: Vec<String>,
}

/// Lints `def` of `m` (core form).
pub fn lint(m: &Module, def: &Def) -> Report {
    let mut parent = vec![None; m.exprs.len()];
    for (i, e) in m.exprs.iter().enumerate() {
        e.for_each_child(|c| {
            if let Some(p) = parent.get_mut(c.index()) {
                *p = Some(ExprId(i as u32));
            }
        });
    }
    let mut d = Lint {
        parent,
        found: BTreeSet::new(),
    };
    flow::analyze(m, def, &mut d);
    // One "safe" finding per operation: the innermost `if` (found first).
    let mut findings: Vec<Finding> = Vec::new();
    let mut guarded: BTreeSet<ExprId> = BTreeSet::new();
    let mut all: Vec<(usize, Finding)> = d.found.into_iter().collect();
    all.sort_by_key(|(order, f)| (m.span(f.op).lo, f.op, *order));
    for (_, f) in all {
        if f.safe() && !guarded.insert(f.op) {
            continue;
        }
        if !findings.contains(&f) {
            findings.push(f);
        }
    }
    let text = findings.iter().map(|f| describe(m, f)).collect();
    Report {
        entry: def.name.to_string(),
        findings,
        text,
    }
}

struct Lint {
    parent: Vec<Option<ExprId>>,
    /// Findings with the order they were found in (inner `if`s first).
    found: BTreeSet<(usize, Finding)>,
}

impl Lint {
    fn record(&mut self, f: Finding) {
        if !self.found.iter().any(|(_, g)| *g == f) {
            let n = self.found.len();
            self.found.insert((n, f));
        }
    }

    fn inside(&self, node: ExprId, root: ExprId) -> bool {
        let mut cur = Some(node);
        while let Some(c) = cur {
            if c == root {
                return true;
            }
            cur = self.parent.get(c.index()).copied().flatten();
        }
        false
    }
}

/// Whether node `id` (`op` applied to `args`) has a partial derivative
/// that is infinite or NaN somewhere.
fn singular(m: &Module, op: Prim, args: &[ExprId]) -> bool {
    match op {
        Prim::Log | Prim::Sqrt => true,
        // A division by a constant other than 0 has the partials 1/c and
        // -x/c^2, finite everywhere.
        Prim::Div => !args
            .get(1)
            .and_then(|&b| literal(m, b))
            .is_some_and(|c| c != 0.0),
        // pow x c with a constant c = 0 or c >= 1 has the finite partial
        // c x^(c-1) (the partial in a constant exponent is not taken);
        // any other exponent makes it infinite at x = 0.
        Prim::Pow => !args
            .get(1)
            .and_then(|&b| literal(m, b))
            .is_some_and(|c| c == 0.0 || c >= 1.0),
        _ => false,
    }
}

/// The value of a numeric literal (`2`, `0.5`, `-1`).
fn literal(m: &Module, id: ExprId) -> Option<f64> {
    match m.exprs.get(id.index())? {
        Expr::Real(x) => Some(*x),
        Expr::Int(k) => Some(*k as f64),
        Expr::Prim {
            op: Prim::Neg,
            args,
        } => literal(m, *args.first()?).map(|x| -x),
        _ => None,
    }
}

impl Domain for Lint {
    type Fact = Reach;

    fn param(&mut self, _: usize, _: &[u32], _: &Ty) -> Reach {
        Reach::default()
    }

    fn scalar(&mut self, m: &Module, id: ExprId, op: Prim, args: &[Reach]) -> Reach {
        if !matches!(m.ty(id), Some(Ty::Real) | None) {
            return Reach::default();
        }
        if matches!(op, Prim::Max | Prim::Min) {
            // Even a value that reaches both operands is flagged: facts
            // do not tell the elements of an array apart, and `max a b`
            // in a fold compares two different ones.
            for a in args {
                for &h in &a.0 {
                    self.record(Finding {
                        op: h,
                        place: Place::UnderMaxMin(id),
                    });
                }
            }
        }
        let mut out = Reach::default();
        for a in args {
            out.join(a);
        }
        if let Expr::Prim { args: ids, .. } = m.expr(id)
            && singular(m, op, ids)
        {
            out.0.insert(id);
            out.trim();
        }
        out
    }

    fn control(&mut self, _: &Module, _: ExprId, _: &Reach) -> Reach {
        Reach::default()
    }

    fn branch(
        &mut self,
        m: &Module,
        id: ExprId,
        _: &Reach,
        then: Shape<Reach>,
        otherwise: Shape<Reach>,
    ) -> Shape<Reach> {
        if let Expr::If {
            then_branch,
            else_branch,
            ..
        } = m.expr(id)
        {
            let facts = [then.flatten(), otherwise.flatten()];
            for (k, b) in [*then_branch, *else_branch].into_iter().enumerate() {
                for &h in &facts[k].0 {
                    let place = if self.inside(h, b) {
                        Place::InBranch(id)
                    } else if facts[1 - k].0.contains(&h) {
                        // Used by both branches: it gets an adjoint
                        // whichever is taken.
                        continue;
                    } else {
                        Place::BeforeIf(id)
                    };
                    self.record(Finding { op: h, place });
                }
            }
        }
        let mut out = then;
        out.join(&otherwise);
        out
    }

    fn unknown(&mut self) -> Reach {
        Reach::default()
    }
}

fn at(m: &Module, id: ExprId) -> Position {
    position(&m.file, m.span(id))
}

/// What goes wrong at the singular point of `op`'s partials.
fn singularity(m: &Module, id: ExprId) -> &'static str {
    match m.expr(id) {
        Expr::Prim { op: Prim::Log, .. } => "its partial 1/x is infinite at x = 0",
        Expr::Prim { op: Prim::Sqrt, .. } => {
            "its partial 1/(2 sqrt x) is infinite at x = 0 and NaN below"
        }
        Expr::Prim { op: Prim::Div, .. } => "its partials 1/y and -x/y^2 are infinite at y = 0",
        _ => "its partial y x^(y-1) is infinite at x = 0",
    }
}

fn describe(m: &Module, f: &Finding) -> String {
    let op = at(m, f.op);
    let why = singularity(m, f.op);
    match f.place {
        Place::InBranch(i) => format!(
            "{op}: in a branch of the `if` at {}; {why}, but reverse mode differentiates \
             only the branch taken: safe, no rewrite needed",
            at(m, i)
        ),
        Place::BeforeIf(i) => format!(
            "{op}: computed before the `if` at {} and used in its branches; where its branch \
             is not taken its adjoint is 0, and {why}: 0 · inf = NaN. Unsafe: rewrite by moving \
             it into the branch that uses it",
            at(m, i)
        ),
        Place::UnderMaxMin(i) => format!(
            "{op}: under the `max`/`min` at {}; both operands are computed and the one that \
             loses gets the adjoint 0, and {why}: 0 · inf = NaN. Unsafe: rewrite the choice \
             as an `if` whose condition does not need this value, with the operation inside \
             its branch",
            at(m, i)
        ),
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.findings.is_empty() {
            return writeln!(
                f,
                "NaN hazards of `{}`: none (no `log`, `sqrt`, `/` or `pow` with a singular \
                 derivative in a branch or under `max`/`min`)",
                self.entry
            );
        }
        writeln!(f, "NaN hazards of `{}`:", self.entry)?;
        for (finding, line) in self.findings.iter().zip(&self.text) {
            let tag = if finding.safe() { "safe  " } else { "UNSAFE" };
            writeln!(f, "  {tag} {line}")?;
        }
        let unsafe_ = self.findings.iter().filter(|x| !x.safe()).count();
        writeln!(
            f,
            "{} finding(s): {} safe, {unsafe_} need a rewrite",
            self.findings.len(),
            self.findings.len() - unsafe_
        )
    }
}
