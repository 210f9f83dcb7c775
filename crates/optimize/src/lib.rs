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
mod fuse;
mod hash;

mod local;
mod quiet;
pub mod rules;
mod simplify;

use std::collections::BTreeMap;

use syntax::{Expr, Module, Pat, Span, Ty};

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
    /// The tallest expression (in nodes from root to leaf) that
    /// `inline-once` and `inline-arg` move into a use; a taller one stays
    /// bound by a `let`, so that long chains stay chains of `let`s.
    /// Function values are moved whatever their height (their calls are
    /// where they disappear, Lemma 5.3).
    pub inline_height: usize,
    /// Run `syntax::verify` on the output (a failure is
    /// [`Error::Internal`]). The verifier re-infers every type, which costs
    /// about as much as the optimization itself on large programs.
    pub verify: bool,
    /// Keep the functions with derivative rules (`with_rules`) rather
    /// than replace each by its body (`syntax::rules::erase`): for a
    /// program that will be differentiated again, such as the gradient
    /// `grad_rev` splices into a program (docs/derivatives.md, section 8).
    pub keep_rules: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_rounds: 32,
            rules: RuleSet::all(),
            inline_budget: 200,
            inline_height: 8,
            verify: true,
            keep_rules: false,
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

/// Like [`optimize`], taking the module by value: a caller that has no
/// further use for its input spares the optimizer a copy of it (the CLI's
/// `optimize` stage; on a 20,000-`let` gradient the copy is half a million
/// nodes).
pub fn optimize_owned(m: Module, cfg: &Config) -> Result<Module, Error> {
    check_input(&m)?;
    run(m, cfg).map(|(m, _)| m)
}

/// Like [`optimize`], also saying which rules fired how often.
pub fn optimize_report(m: &Module, cfg: &Config) -> Result<(Module, Report), Error> {
    check_input(m)?;
    run(m.clone(), cfg)
}

/// The rounds, the compaction and the verification, on a checked input.
fn run(mut m: Module, cfg: &Config) -> Result<(Module, Report), Error> {
    // Nothing differentiates an optimized program again (unless the
    // caller says it will): a function with derivative rules is its body
    // from here on (`syntax::rules::erase`).
    if !cfg.keep_rules {
        syntax::rules::erase(&mut m);
    }
    let mut cur = m;
    let mut names = None;
    let mut report = Report::default();
    // `inline-once` sits out the first round, in which `cse` merges equal
    // values: merging raises the use counts that `inline-once` relies on
    // (two single-use `let`s of `exp v` are one `let` used twice). See
    // note [phases].
    let first = Config {
        rules: cfg.rules.without(RuleName::InlineOnce),
        ..cfg.clone()
    };
    // Note [late gathers].
    let mut late = false;
    // The censuses of a skipped first round, for the next round.
    let mut censuses = None;
    while report.rounds < cfg.max_rounds.max(1) {
        let phase = if report.rounds == 0 { &first } else { cfg };
        // Note [unchanged nodes]: the first round may hand on the input's
        // unchanged nodes, since a round that builds every node anew
        // always follows it.
        let share =
            report.rounds == 0 && cfg.max_rounds > 1 && cfg.rules.contains(RuleName::InlineOnce);
        // Note [quiet first round]: a first round that provably fires
        // nothing and hands every node on is not run; its census goes to
        // the next round.
        let quiet = if share {
            quiet::first_round_is_identity(&cur)
        } else {
            None
        };
        let (next, next_names, mut fired, deferred) = match quiet {
            Some(occs) => {
                #[cfg(debug_assertions)]
                check_quiet(&cur, phase, late);
                censuses = Some(occs);
                (cur, names, BTreeMap::new(), false)
            }
            None => simplify::round(cur, names, phase, late, share, censuses.take()),
        };
        report.rounds += 1;
        cur = next;
        names = next_names;
        // The rules that need every use of a binding at once;
        // `share-elementwise` and `share-inner-loop` only on a program the
        // others have settled, so that they judge the dependencies between
        // loops that remain, and `reduce-from-scan` too, so that it does
        // not keep alive a scan the others would remove (reverse mode's
        // `scanl (+) 0 A` for the adjoint of a sum is dead once
        // simplified). (A round that only moved single-use values settled
        // the program too: see note [phases].)
        let settled = fired.keys().all(|&r| r == RuleName::InlineOnce);
        let rules = if settled {
            phase.rules
        } else {
            phase
                .rules
                .without(RuleName::ShareElementwise)
                .without(RuleName::ShareInnerLoop)
                .without(RuleName::ReduceFromScan)
        };
        fuse::run(&mut cur, &mut names, rules, &mut fired);
        if !fired.is_empty() {
            // The program changed: the censuses of the skipped round are
            // not its censuses.
            censuses = None;
        }
        if fired.is_empty() {
            if report.rounds == 1 && cfg.rules.contains(RuleName::InlineOnce) {
                // A fixpoint without `inline-once`: now with it.
                continue;
            }
            if deferred && !late {
                late = true;
                continue;
            }
            report.converged = true;
            break;
        }
        // A round that only moved single-use values into their uses
        // simplified them there under every rule: nothing is left for
        // another round (see note [phases]).
        let only_inlined = fired.keys().all(|&r| r == RuleName::InlineOnce);
        for (rule, n) in fired {
            *report.fired.entry(rule).or_insert(0) += n;
        }
        if only_inlined && deferred && !late {
            late = true;
        } else if only_inlined {
            report.converged = true;
            break;
        }
    }
    compact::compact(&mut cur);
    refresh_sizes(&mut cur)?;
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

/// Debug builds: runs the first round that note [quiet first round] skips,
/// and checks that it would have fired nothing and changed nothing.
#[cfg(debug_assertions)]
fn check_quiet(m: &Module, phase: &Config, late: bool) {
    let (out, names, fired, deferred) = simplify::round(m.clone(), None, phase, late, true, None);
    let same = out == *m || format!("{out:?}") == format!("{m:?}");
    assert!(
        same && names.is_none() && fired.is_empty() && !deferred,
        "invariant: a first round judged quiet fires nothing (fired {fired:?}, same module: {same})"
    );
}

/// Re-infers the types of a module holding a `build`. A rewrite keeps
/// the type of the node it replaces, but the size of `build n f` is known
/// only when `n` is `length A` for an array `A` of known size: inlining
/// `let k = length A in build k f` makes an unknown size `[_]` known
/// (`[n]`), binding `length A` to a variable makes a known one unknown,
/// and the types of the nodes around follow. Inference on the rewritten
/// program gives the types the verifier expects (it compares them).
fn refresh_sizes(m: &mut Module) -> Result<(), Error> {
    let has_build = m.exprs.iter().any(|e| {
        matches!(
            e,
            Expr::Prim {
                op: syntax::Prim::Build,
                ..
            }
        )
    });
    if !has_build {
        return Ok(());
    }
    syntax::infer(m).map_err(|e| Error::Internal {
        span: e.span(),
        message: format!("type inference fails on the optimized program: {e}"),
    })
}

/// The paper's G from a gradient program: the definition `entry` (or the
/// last) of a reverse-mode output returns `(value, g_1, ..., g_k)`; the
/// result returns `(g_1, ..., g_k)` (or `g_1` alone when k = 1), the value
/// computed only as far as the gradients need it once optimized. Section 5
/// states its forms and its bound (Theorem 5.4) for this G.
pub fn gradient_only(m: &Module, entry: Option<&str>) -> Result<Module, Error> {
    let pos = match entry {
        Some(name) => m.defs.iter().position(|d| d.name.as_str() == name),
        None => m.defs.len().checked_sub(1),
    };
    let Some(pos) = pos else {
        return Err(Error::NotCoreForm {
            span: Span::GENERATED,
            message: "no such definition".to_string(),
        });
    };
    let def = m.defs[pos].clone();
    let body_ty = m.types.get(def.body.index()).cloned();
    let Some(Ty::Tuple(parts)) = body_ty else {
        return Err(Error::NotCoreForm {
            span: def.name_span,
            message: format!("`{}` does not return (value, gradients...)", def.name),
        });
    };
    if parts.len() < 2 {
        return Err(Error::NotCoreForm {
            span: def.name_span,
            message: format!("`{}` returns no gradient", def.name),
        });
    }
    let mut out = m.clone();
    let span = m.span(def.body);
    let r = m.name_gen().fresh("r");
    let whole = Ty::Tuple(parts.clone());
    let mut items = Vec::new();
    for (i, t) in parts.iter().enumerate().skip(1) {
        let var = out.add(Expr::Var(r.clone()), span);
        out.types.push(whole.clone());
        let proj = out.add(
            Expr::Proj {
                tuple: var,
                index: i as u32 + 1,
            },
            span,
        );
        out.types.push(t.clone());
        items.push(proj);
    }
    let (result, ret) = if items.len() == 1 {
        (items[0], parts[1].clone())
    } else {
        let ret = Ty::Tuple(parts[1..].to_vec());
        let tuple = out.add(Expr::Tuple(items), span);
        out.types.push(ret.clone());
        (tuple, ret)
    };
    let body = out.add(
        Expr::Let {
            pat: Pat::Var(r),
            ty: None,
            value: def.body,
            body: result,
        },
        span,
    );
    out.types.push(ret.clone());
    out.defs[pos].body = body;
    out.defs[pos].ret = Some(ret);
    compact::compact(&mut out);
    Ok(out)
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

// Note [late gathers]
// ~~~~~~~~~~~~~~~~~~~~
// `gather-fusion` of an array read by an `ifold` at its counter (reverse
// mode's argmin over a map) computes each element in the fold instead of
// writing the array. Done early, it takes away a loop that the sharing
// rules (`cse-alpha`, `share-inner-loop`) would have merged with the
// primal's: `fixtures/select_nearest` computes the distances for its
// value and for the argmin's adjoint, and with the fusion first computed
// them twice over (its counted cost 2516 moves against 1766). So that
// case of the rule fires only in rounds after the others have reached a
// fixpoint without it (`late`), where an array still read by the fold
// alone has no other reader to share with: a round reports that it
// would have fired (`deferred`), and the run goes on with it allowed
// instead of stopping.

// Note [phases]
// ~~~~~~~~~~~~~~
// Rules interact through the census: `inline-once` moves a value into its
// only use, which is right only while the use is the only one. `cse` can
// create uses: the adjoint of `exp (cos x)` recomputes `exp v` that the
// primal bound to `v_2`, and once `cse` replaces the recomputation by
// `v_2`, `v_2` has two uses. Had `inline-once` fired first, both copies of
// `exp v` would have been inlined and could no longer be merged. So the
// first round runs every rule but `inline-once`, and the later rounds every
// rule. (A round after the first can still find new equal values, made
// equal by that round's rewrites, after `inline-once` has moved one of
// them: the program is then right but keeps a duplicate. Running the first
// phase to a fixpoint instead costs a round on every program, for a rare
// gain.)
//
// A round that fired `inline-once` and nothing else ends the run without a
// confirming round: the values it moved were simplified at their uses,
// under every rule, in that round, and moving a value neither adds nor
// removes a use of any name, so the census of a next round would see the
// same program. (The property tests check that a second run of the
// optimizer fires nothing.)
