//! Activity: for each parameter of a Source program, whether its output
//! depends on it, and when the gradient is structurally zero, why.
//!
//! A parameter (a leaf of it, for a tuple) is
//! - **active** when the output depends on it through reals: a gradient
//!   can flow back to it;
//! - **structurally zero** when the output depends on it only through
//!   values without a derivative: it is compared (`x > 0`), used as an
//!   integer, only its length or shape is read, or it only sets a trip
//!   count or an index. The report names the first place (in program
//!   order) where its derivative is cut;
//! - **unused** when the output does not depend on it at all.
//!
//! At given inputs, an active parameter can still have a zero gradient by
//! structure: every `if` that reads it took the branch that does not.
//! [`analyze_at`] evaluates the program, keeps the branches the evaluation
//! took, and names the `if`.
//!
//! The dataflow is [`crate::flow`]'s; the facts here are sets of
//! parameter leaves ([`Origin`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use semantics::{Probe, Value};
use syntax::fxhash::FxHashSet;
use syntax::{Def, Expr, ExprId, Module, Prim, Span, Ty};

use crate::flow::{self, Domain, Fact, Shape, holds_real};
use crate::position::{Position, position};

/// A leaf of a parameter: the parameter's index and the 1-based path of
/// components inside its tuple type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// 0-based parameter index.
    pub param: usize,
    /// Components inside the parameter's tuple type (empty for a scalar
    /// or an array of scalars).
    pub path: Vec<u32>,
}

/// Why the derivative with respect to a parameter stops at a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cut {
    /// A comparison: its result is a `Bool`.
    Compared,
    /// `&&`, `||`, `not`.
    Logic,
    /// An operation whose result is an `Int`.
    Integer,
    /// `length`: only the length of the array is read.
    Length,
    /// `map`/`map2` whose function ignores its argument: only the arrays'
    /// length is read.
    Shape,
    /// The trip count of a fold, scan, `ifold` or `build`.
    TripCount,
    /// The index of `a[i]`.
    Index,
    /// The condition of an `if`.
    Condition,
    /// At the inputs, the `if` took only the other branch.
    UntakenBranch,
    /// At the inputs, the `if` was never evaluated.
    NeverEvaluated,
    /// The parameter is an `Int` or a `Bool` itself.
    NotReal,
}

impl Cut {
    fn describe(self) -> &'static str {
        match self {
            Cut::Compared => "it is only compared",
            Cut::Logic => "it only enters logic",
            Cut::Integer => "it is only used as an integer",
            Cut::Length => "only its length is read",
            Cut::Shape => "only its shape is read (the function ignores the elements)",
            Cut::TripCount => "it only sets a trip count",
            Cut::Index => "it is only used as an index",
            Cut::Condition => "it only decides a condition",
            Cut::UntakenBranch => "the branch that reads it was not taken at these inputs",
            Cut::NeverEvaluated => "the `if` that reads it was never evaluated at these inputs",
            Cut::NotReal => "it is not a real",
        }
    }
}

/// Where a derivative is cut: the node and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Witness {
    /// The node's span (first, so that the earliest witness wins).
    pub span: (u32, u32),
    /// The node.
    pub node: ExprId,
    /// Why.
    pub cut: Cut,
}

/// The parameters a value depends on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dep {
    /// Through reals: a gradient flows.
    pub diff: BTreeSet<usize>,
    /// At all.
    pub any: BTreeSet<usize>,
    /// For each origin in `any` but not in `diff`, where it was cut.
    pub cut: BTreeMap<usize, Witness>,
}

impl Fact for Dep {
    fn join(&mut self, other: &Dep) {
        self.diff.extend(other.diff.iter().copied());
        self.any.extend(other.any.iter().copied());
        for (o, w) in &other.cut {
            let e = self.cut.entry(*o).or_insert(*w);
            if w < e {
                *e = *w;
            }
        }
        let diff = &self.diff;
        self.cut.retain(|o, _| !diff.contains(o));
    }
}

impl Dep {
    /// The same dependences with the derivative cut at `w`.
    fn cut_at(&self, w: Witness) -> Dep {
        let mut cut = self.cut.clone();
        for o in &self.diff {
            let e = cut.entry(*o).or_insert(w);
            if w < *e {
                *e = w;
            }
        }
        Dep {
            diff: BTreeSet::new(),
            any: self.any.clone(),
            cut,
        }
    }
}

/// What a parameter leaf is to the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// A gradient flows to it.
    Active,
    /// The output depends on it only without a derivative; the first
    /// place where its derivative is cut.
    Zero(Witness),
    /// The output does not depend on it.
    Unused,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The parameter leaf.
    pub origin: Origin,
    /// How it is written: `x`, `x1.2`.
    pub name: String,
    /// Its status for every input.
    pub status: Status,
    /// Its status at the given inputs, when they were given and it is
    /// active in general.
    pub at_inputs: Option<Status>,
}

/// The activity of every parameter leaf of an entry.
#[derive(Debug, Clone)]
pub struct Report {
    /// The entry's name.
    pub entry: String,
    /// One per parameter leaf, in parameter order.
    pub entries: Vec<Entry>,
    /// The positions of the witnesses, rendered.
    positions: BTreeMap<ExprId, Position>,
    /// Whether inputs were given.
    at_inputs: bool,
}

/// The activity of `def`'s parameters for every input.
pub fn analyze(m: &Module, def: &Def) -> Report {
    let mut d = Activity::new(None);
    let out = flow::analyze(m, def, &mut d).flatten();
    let origins = d.origins.clone();
    let entries = origins
        .iter()
        .enumerate()
        .map(|(i, o)| Entry {
            origin: o.clone(),
            name: leaf_name(def, o),
            status: status(&out, i),
            at_inputs: None,
        })
        .collect();
    let mut r = Report {
        entry: def.name.to_string(),
        entries,
        positions: BTreeMap::new(),
        at_inputs: false,
    };
    r.locate(m);
    r
}

/// [`analyze`], and for each active parameter its status at `args` (one
/// value per parameter), found by evaluating the program and keeping the
/// branches its evaluation took.
pub fn analyze_at(m: &Module, def: &Def, args: &[Value]) -> Result<Report, semantics::Error> {
    let mut r = analyze(m, def);
    let probe = Reached::default();
    semantics::eval_def_probed(m, def, args, &semantics::Config::default(), Some(&probe))?;
    let mut d = Activity::new(Some(probe.nodes.into_inner()));
    let out = flow::analyze(m, def, &mut d).flatten();
    for (i, e) in r.entries.iter_mut().enumerate() {
        if e.status == Status::Active {
            e.at_inputs = Some(status(&out, i));
        }
    }
    r.at_inputs = true;
    r.locate(m);
    Ok(r)
}

fn status(out: &Dep, origin: usize) -> Status {
    if out.diff.contains(&origin) {
        Status::Active
    } else if let Some(w) = out.cut.get(&origin) {
        Status::Zero(*w)
    } else {
        Status::Unused
    }
}

/// `x`, or `x.2` for a component of a tuple parameter.
fn leaf_name(def: &Def, o: &Origin) -> String {
    let mut s = def
        .params
        .get(o.param)
        .map(|p| p.name.to_string())
        .unwrap_or_else(|| format!("#{}", o.param + 1));
    for c in &o.path {
        s.push_str(&format!(".{c}"));
    }
    s
}

/// The nodes an evaluation reached.
#[derive(Default)]
struct Reached {
    nodes: RefCell<FxHashSet<ExprId>>,
}

impl Probe for Reached {
    fn node(&self, id: ExprId) {
        self.nodes.borrow_mut().insert(id);
    }

    fn builtin(&self, _: ExprId, _: Prim, _: &[Value]) {}
}

struct Activity {
    origins: Vec<Origin>,
    /// The nodes an evaluation reached, for the status at the inputs.
    reached: Option<FxHashSet<ExprId>>,
}

impl Activity {
    fn new(reached: Option<FxHashSet<ExprId>>) -> Activity {
        Activity {
            origins: Vec::new(),
            reached,
        }
    }
}

fn witness(m: &Module, node: ExprId, cut: Cut) -> Witness {
    let s: Span = m.span(node);
    Witness {
        span: (s.lo, s.hi),
        node,
        cut,
    }
}

impl Domain for Activity {
    type Fact = Dep;

    fn param(&mut self, index: usize, path: &[u32], ty: &Ty) -> Dep {
        let o = self.origins.len();
        self.origins.push(Origin {
            param: index,
            path: path.to_vec(),
        });
        let mut d = Dep::default();
        d.any.insert(o);
        if holds_real(ty) {
            d.diff.insert(o);
        } else {
            d.cut.insert(
                o,
                Witness {
                    span: (u32::MAX, u32::MAX),
                    node: ExprId(u32::MAX),
                    cut: Cut::NotReal,
                },
            );
        }
        d
    }

    fn scalar(&mut self, m: &Module, id: ExprId, op: Prim, args: &[Dep]) -> Dep {
        let mut all = Dep::default();
        for a in args {
            all.join(a);
        }
        if m.ty(id).is_none_or(holds_real) {
            return all;
        }
        let cut = match op {
            Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne => Cut::Compared,
            Prim::And | Prim::Or | Prim::Not => Cut::Logic,
            _ => Cut::Integer,
        };
        all.cut_at(witness(m, id, cut))
    }

    fn control(&mut self, m: &Module, at: ExprId, f: &Dep) -> Dep {
        let cut = match m.expr(at) {
            Expr::Prim {
                op: Prim::Length, ..
            } => Cut::Length,
            Expr::Prim {
                op: Prim::Map | Prim::Map2,
                ..
            } => Cut::Shape,
            Expr::Index { .. } => Cut::Index,
            Expr::If { .. } => Cut::Condition,
            _ => Cut::TripCount,
        };
        f.cut_at(witness(m, at, cut))
    }

    fn branch(
        &mut self,
        m: &Module,
        id: ExprId,
        cond: &Dep,
        then: Shape<Dep>,
        otherwise: Shape<Dep>,
    ) -> Shape<Dep> {
        let c = self.control(m, id, cond);
        let (then_id, else_id) = match m.expr(id) {
            Expr::If {
                then_branch,
                else_branch,
                ..
            } => (*then_branch, *else_branch),
            _ => (id, id),
        };
        let taken = |b: ExprId| self.reached.as_ref().is_none_or(|r| r.contains(&b));
        let (t, e) = (taken(then_id), taken(else_id));
        let mut out: Option<Shape<Dep>> = None;
        let mut untaken = Dep::default();
        for (took, s) in [(t, then), (e, otherwise)] {
            if took {
                match &mut out {
                    Some(o) => o.join(&s),
                    None => out = Some(s),
                }
            } else {
                untaken.join(&s.flatten());
            }
        }
        let why = if t || e {
            Cut::UntakenBranch
        } else {
            Cut::NeverEvaluated
        };
        let mut out = out.unwrap_or_default();
        out.join_leaves(&c);
        out.join_leaves(&untaken.cut_at(witness(m, id, why)));
        out
    }

    fn unknown(&mut self) -> Dep {
        // Everything may flow through what cannot be followed.
        let all: BTreeSet<usize> = (0..self.origins.len()).collect();
        Dep {
            diff: all.clone(),
            any: all,
            cut: BTreeMap::new(),
        }
    }
}

impl Report {
    fn locate(&mut self, m: &Module) {
        for e in &self.entries {
            for s in [Some(&e.status), e.at_inputs.as_ref()]
                .into_iter()
                .flatten()
            {
                if let Status::Zero(w) = s
                    && let Some(span) = m.spans.get(w.node.index())
                {
                    self.positions.insert(w.node, position(&m.file, *span));
                }
            }
        }
    }

    fn describe(&self, s: &Status) -> String {
        match s {
            Status::Active => "active: the output depends on it through reals".to_string(),
            Status::Unused => "unused: the output does not depend on it".to_string(),
            Status::Zero(w) => {
                let at = match self.positions.get(&w.node) {
                    Some(p) => format!(", at {p}"),
                    None => String::new(),
                };
                format!("structurally zero: {}{at}", w.cut.describe())
            }
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "activity of `{}`:", self.entry)?;
        if self.entries.is_empty() {
            return writeln!(f, "  no parameters");
        }
        let width = self.entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
        for e in &self.entries {
            writeln!(f, "  {:<width$}  {}", e.name, self.describe(&e.status))?;
        }
        if self.at_inputs {
            let zero: Vec<&Entry> = self
                .entries
                .iter()
                .filter(|e| matches!(e.at_inputs, Some(Status::Zero(_) | Status::Unused)))
                .collect();
            if zero.is_empty() {
                writeln!(f, "at the inputs: every active parameter stays active")?;
            } else {
                writeln!(f, "at the inputs:")?;
                for e in zero {
                    if let Some(s) = &e.at_inputs {
                        writeln!(f, "  {:<width$}  {}", e.name, self.describe(s))?;
                    }
                }
            }
        }
        Ok(())
    }
}
