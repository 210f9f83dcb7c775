//! `optimize`: Target → Target. Partial evaluation and the optimisations
//! of seeds/000 Section 5 (Fig. 12). (The cost model of Fig. 11 and the
//! checks of Lemma 5.1, Lemma 5.3 and Theorem 5.4 are `semantics::cost`.)
//!
//! In: a typed core-form module (the output of reverse mode, forward mode,
//! or any Target program). Out: a typed core-form module that computes the
//! same values: the continuation lambdas of reverse mode beta-reduced and
//! inlined, constants and variables forwarded, dead code dropped, `let`s
//! normalised, and the algebraic, array and conditional identities of
//! Fig. 12 applied. The rules are data ([`RuleName`], [`rules`]); the
//! engine applies them in rounds, each round one linear pass over the
//! program (see `simplify.rs`), until a round fires nothing or
//! [`Config::max_rounds`] is reached.
//!
//! Invariants of the output: every binder is unique within its definition,
//! operands precede their users in the arena (compacted), every node has
//! its type, and the output passes the same verifier as the input
//! (checked when [`Config::verify`] is on, as it is by default). The types
//! are maintained by the rewrites themselves (a rewrite preserves meaning,
//! hence the type of the node it replaces) rather than re-inferred: the
//! verifier's last check is that re-inference reproduces them exactly.

mod census;
mod compact;

mod local;
pub mod rules;
mod simplify;

use std::collections::BTreeMap;

use syntax::{Expr, Module, Span};

pub use rules::{RuleInfo, RuleName, RuleSet, rules};

/// How the optimizer runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The most rounds to run; each round is one pass over the program.
    pub max_rounds: usize,
    /// The rules that may fire.
    pub rules: RuleSet,
    /// A lambda used more than once is copied into each call when the
    /// number of uses times its size (in nodes) is at most this.
    pub inline_budget: usize,
    /// Run `syntax::verify` on the output (a failure is
    /// [`Error::Internal`]). The verifier re-infers every type, which costs
    /// about as much as the optimization itself on large programs.
    pub verify: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_rounds: 32,
            rules: RuleSet::all(),
            inline_budget: 200,
            verify: true,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The rounds run, the last one included.
    pub rounds: usize,
    /// Whether the last round fired no rule (a fixpoint was reached).
    pub converged: bool,
    /// How often each rule fired, over all rounds.
    pub fired: BTreeMap<RuleName, usize>,
}

/// An input the optimizer cannot work on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The module is not in typed core form.
    #[error("the optimizer needs a typed core-form program: {message}")]
    NotCoreForm {
        /// The offending node, or `Span::GENERATED` for the whole module.
        span: Span,
        /// What is missing.
        message: String,
    },
    /// The optimizer produced a module its verifier rejects: a bug here.
    #[error("internal error after pass 'optimize': {message}")]
    Internal {
        /// Where.
        span: Span,
        /// What the verifier said.
        message: String,
    },
}

impl Error {
    /// Where the error is.
    pub fn span(&self) -> Span {
        match self {
            Error::NotCoreForm { span, .. } | Error::Internal { span, .. } => *span,
        }
    }
}

/// Optimizes a Target module with the rules `cfg` allows.
pub fn optimize(m: &Module, cfg: &Config) -> Result<Module, Error> {
    optimize_report(m, cfg).map(|(m, _)| m)
}

/// Like [`optimize`], also saying which rules fired how often.
pub fn optimize_report(m: &Module, cfg: &Config) -> Result<(Module, Report), Error> {
    check_input(m)?;
    let mut cur = m.clone();
    let mut names = None;
    let mut report = Report::default();
    while report.rounds < cfg.max_rounds.max(1) {
        let (next, next_names, fired) = simplify::round(cur, names, cfg);
        report.rounds += 1;
        cur = next;
        names = next_names;
        if fired.is_empty() {
            report.converged = true;
            break;
        }
        for (rule, n) in fired {
            *report.fired.entry(rule).or_insert(0) += n;
        }
    }
    compact::compact(&mut cur);
    if cfg.verify
        && let Err(errors) = syntax::verify(&cur)
    {
        let first = &errors[0];
        return Err(Error::Internal {
            span: first.span,
            message: format!(
                "{first}{}",
                match errors.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                }
            ),
        });
    }
    Ok((cur, report))
}

/// Applies one rule, to a fixpoint (bounded by `cfg.max_rounds`), and no
/// other: the per-rule tests check each rule on its own this way.
pub fn apply_rule(m: &Module, rule: RuleName, cfg: &Config) -> Result<Module, Error> {
    let cfg = Config {
        rules: RuleSet::only(rule),
        ..cfg.clone()
    };
    optimize(m, &cfg)
}

/// The shape the engine relies on: types filled, no surface-only nodes,
/// lambda parameters typed.
fn check_input(m: &Module) -> Result<(), Error> {
    if !m.exprs.is_empty() && !m.is_typed() {
        return Err(Error::NotCoreForm {
            span: Span::GENERATED,
            message: "the types are missing".to_string(),
        });
    }
    for (i, e) in m.exprs.iter().enumerate() {
        let span = m.spans.get(i).copied().unwrap_or(Span::GENERATED);
        match e {
            Expr::Section(op) => {
                return Err(Error::NotCoreForm {
                    span,
                    message: format!("operator section `({op})` left unelaborated"),
                });
            }
            Expr::Lambda { params, .. } if params.iter().any(|p| p.ty.is_none()) => {
                return Err(Error::NotCoreForm {
                    span,
                    message: "a lambda parameter has no type".to_string(),
                });
            }
            _ => {}
        }
        let mut bad_child = false;
        e.for_each_child(|c| bad_child |= c.index() >= i);
        if bad_child {
            return Err(Error::NotCoreForm {
                span,
                message: "an operand does not precede its user".to_string(),
            });
        }
    }
    for def in &m.defs {
        if def.body.index() >= m.exprs.len() {
            return Err(Error::NotCoreForm {
                span: def.name_span,
                message: format!("the body of `{}` is out of range", def.name),
            });
        }
    }
    Ok(())
}
