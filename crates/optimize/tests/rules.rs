//! Each rule of the optimizer preserves the meaning of programs: on
//! generated Target programs (tests/common/gen.rs), first normalised by
//! every *other* rule so that the rule's patterns are exposed, the rule
//! alone is applied to a fixpoint, and the result must verify and evaluate
//! to the same value as the original program. Each rule must also fire on
//! some of the programs, or its test would prove nothing. Some rules need
//! company: `inline-arg` acts only inside `beta` and `split-tuple` (run
//! together), `map2-const` is tested with `map-fusion` off, and `let-let`,
//! `let-var` and `cse` with `inline-once` off, which would otherwise take
//! their patterns away first.
//!
//! The whole optimizer is checked the same way, with Lemma 5.3 on top:
//! after optimization no lambda (other than a builtin's function),
//! application or function-typed variable remains (without the inline
//! budget: a large lambda called several times stays within it).

use crate::common;

use std::cell::Cell;

use optimize::{Config, RuleName, RuleSet, optimize, optimize_report};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRng, TestRunner};
use semantics::cost;

use common::source::redundant_program;
use common::{compile, eval, expectations, same, verified};

/// The number of generated programs per rule.
const CASES: u32 = 96;

/// A generated program, compiled, with its inputs and value.
fn generated(
    seed: u64,
) -> (
    String,
    syntax::Module,
    Vec<(String, semantics::Value)>,
    semantics::Value,
) {
    let text = redundant_program(seed);
    let m = compile(&text);
    let (inputs, _) = expectations(&text, &m);
    let value =
        eval(&m, &inputs).unwrap_or_else(|e| panic!("generated program fails: {e}\n{text}"));
    (text, m, inputs, value)
}

/// The rules a rule only acts through (`inline-arg` places the arguments
/// that `beta` and `split-tuple` bind): on in the isolated run, off in the
/// preparation.
fn companions(rule: RuleName) -> Vec<RuleName> {
    match rule {
        RuleName::InlineArg => vec![RuleName::Beta, RuleName::SplitTuple],
        _ => Vec::new(),
    }
}

/// The rules that would leave the rule nothing to do (`map-fusion` folds
/// the constant array into the lambda before `map2-const` sees it): off in
/// the preparation.
fn rivals(rule: RuleName) -> Vec<RuleName> {
    match rule {
        RuleName::Map2Const => vec![RuleName::MapFusion],
        // A single-use `let` is inlined before it can be flattened, merged
        // or found to be `let x = e in x`.
        RuleName::LetLet | RuleName::LetVar | RuleName::Cse => vec![RuleName::InlineOnce],
        // Two reductions over one array are fused before they are compared.
        RuleName::CseAlpha => vec![RuleName::InlineOnce, RuleName::ReduceFusion],
        // Map-fusion would fuse the projections into their consumers first,
        // and a constant map into the map it reads.
        RuleName::UnzipFusion | RuleName::ConstShape => vec![RuleName::MapFusion],
        // A cheap map used twice is copied into its uses (and reductions
        // of projections fused) before the others see it.
        RuleName::PruneComponents => vec![RuleName::ReduceFusion, RuleName::RecomputeCheap],
        RuleName::ReduceFusion => vec![RuleName::RecomputeCheap],
        RuleName::Map2Same => vec![RuleName::RecomputeCheap],
        RuleName::RecomputeCheap => vec![
            RuleName::ReduceFusion,
            RuleName::PruneComponents,
            RuleName::UnzipFusion,
        ],
        _ => Vec::new(),
    }
}

fn check_rule(rule: RuleName) {
    let fired = Cell::new(0usize);
    // Patterns that need two loops of one shape in one chain are rarer
    // in the generated programs: more programs for those rules. The same
    // programs on every run: the test asserts that the rule fires on some
    // of them, which a fresh draw could miss (a flaky test); fresh random
    // programs are `optimize_preserves_values...`'s and the difftest
    // suite's.
    let cases = match rule {
        RuleName::CseAlpha
        | RuleName::ShareElementwise
        | RuleName::ShareInnerLoop
        | RuleName::ReduceFromScan
        | RuleName::GatherFusion
        | RuleName::PruneComponents
        | RuleName::PruneAccumulator => 4 * CASES,
        _ => CASES,
    };
    let config = RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&any::<u64>(), |seed| {
        let (text, m, inputs, value) = generated(seed);
        let mut prep_rules = RuleSet::all().without(rule);
        let mut only_rules = RuleSet::only(rule);
        for r in companions(rule) {
            prep_rules = prep_rules.without(r);
            only_rules = only_rules.with(r);
        }
        for r in rivals(rule) {
            prep_rules = prep_rules.without(r);
        }
        let others = Config {
            rules: prep_rules,
            ..Config::default()
        };
        let prepared = optimize(&m, &others).map_err(|e| TestCaseError::fail(e.to_string()))?;
        verified(&prepared, "the program normalised by the other rules");
        let only = Config {
            rules: only_rules,
            ..Config::default()
        };
        let (out, report) =
            optimize_report(&prepared, &only).map_err(|e| TestCaseError::fail(e.to_string()))?;
        verified(&out, &format!("the output of rule {rule}"));
        fired.set(fired.get() + report.fired.get(&rule).copied().unwrap_or(0));
        for (what, module) in [("the other rules", &prepared), ("the rule", &out)] {
            let got = eval(module, &inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(
                same(&got, &value),
                "{what} changed the value of\n{text}\nfrom {value:?} to {got:?}:\n{}",
                syntax::print::module(module)
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("rule {rule}: {e}");
    }
    assert!(
        fired.get() > 0,
        "rule {rule} never fired on {cases} generated programs"
    );
}

macro_rules! rule_tests {
    ($($name:ident => $rule:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_rule(RuleName::$rule);
            }
        )*

        #[test]
        fn every_rule_has_a_test() {
            let tested = [$(RuleName::$rule),*];
            for r in RuleName::ALL {
                assert!(tested.contains(r), "no property test for rule {r}");
            }
        }
    };
}

rule_tests! {
    beta => Beta,
    inline_lambda => InlineLambda,
    dead_let => DeadLet,
    forward_var => ForwardVar,
    forward_const => ForwardConst,
    inline_arg => InlineArg,
    inline_once => InlineOnce,
    cse => Cse,
    cse_alpha => CseAlpha,
    share_elementwise => ShareElementwise,
    share_inner_loop => ShareInnerLoop,
    reduce_from_scan => ReduceFromScan,
    proj_tuple => ProjTuple,
    tuple_let => TupleLet,
    split_tuple => SplitTuple,
    let_let => LetLet,
    let_float => LetFloat,
    let_var => LetVar,
    zero_mul => ZeroMul,
    zero_add => ZeroAdd,
    one_mul => OneMul,
    neg_neg => NegNeg,
    const_fold => ConstFold,
    map2_const => Map2Const,
    map2_unused => Map2Unused,
    map_identity => MapIdentity,
    map2_same => Map2Same,
    const_shape => ConstShape,
    reduce_const => ReduceConst,
    shift_const => ShiftConst,
    scan_const => ScanConst,
    length_of => LengthOf,
    map_fusion => MapFusion,
    gather_fusion => GatherFusion,
    unzip_fusion => UnzipFusion,
    recompute_cheap => RecomputeCheap,
    reduce_fusion => ReduceFusion,
    prune_components => PruneComponents,
    prune_accumulator => PruneAccumulator,
    if_same => IfSame,
    if_const => IfConst,
    if_float => IfFloat,
    if_tuple => IfTuple,
    hist_interchange => HistInterchange,
}

proptest! {
    #![proptest_config(RunnerConfig { cases: 256, failure_persistence: None, ..RunnerConfig::default() })]

    /// All rules together: same value, verified output, and nothing
    /// higher-order left (Lemma 5.3).
    #[test]
    fn optimize_preserves_values_and_removes_lambdas(seed in any::<u64>()) {
        let (text, m, inputs, value) = generated(seed);
        let (out, report) = optimize_report(&m, &Config::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        verified(&out, "the optimized program");
        prop_assert!(report.converged, "no fixpoint in {} rounds for\n{text}", report.rounds);
        let got = eval(&out, &inputs).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&got, &value), "optimize changed the value of\n{text}\nfrom {value:?} to {got:?}:\n{}", syntax::print::module(&out));
        if let Err(v) = lemma_5_3_within_budget(&m, &out) {
            prop_assert!(false, "Lemma 5.3 fails on the optimized\n{text}\n{v}");
        }
        // A second run finds nothing left to do.
        let (_, again) = optimize_report(&out, &Config::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(again.fired.is_empty(), "a second run still fires {:?} on\n{}", again.fired, syntax::print::module(&out));
    }
}

/// Lemma 5.3 on `out`, the optimized `m`: no lambda, application or
/// function-typed variable remains. A lambda used several times is copied
/// into its calls only within `Config::inline_budget`, so a large one
/// called twice stays (a first-order program all the same once
/// specialised); then the lemma must hold of `m` optimized without the
/// budget.
fn lemma_5_3_within_budget(m: &syntax::Module, out: &syntax::Module) -> Result<(), String> {
    let def = out.entry(None).expect("a definition");
    if cost::check_lemma_5_3(out, def).is_ok() {
        return Ok(());
    }
    let unbounded = Config {
        inline_budget: usize::MAX,
        ..Config::default()
    };
    let all = optimize(m, &unbounded).map_err(|e| e.to_string())?;
    let def = all.entry(None).expect("a definition");
    cost::check_lemma_5_3(&all, def).map_err(|v| {
        format!(
            "{v:?}\nwithout the inline budget:\n{}",
            syntax::print::module(&all)
        )
    })
}

/// A lambda too large to copy into its two calls within the inline budget
/// (the shape of a program the generator once drew) stays bound; without
/// the budget none remains.
#[test]
fn a_lambda_over_the_inline_budget_stays_and_goes_without_it() {
    let term = "reduce (+) 0 (map (fun u -> u * v + sin (u + v) * cos (u - v) + exp (u * 0.5)) x)";
    let body = [term; 6].join(" + ");
    let text = format!(
        "-- at x = [0.3, -0.2, 0.7]\n\
         def f (x : [n]R) : R =\n  let g = fun (v : R) -> {body} in\n  g 1.5 + g (real (length x))\n"
    );
    let m = compile(&text);
    let (inputs, _) = expectations(&text, &m);
    let value = eval(&m, &inputs).expect("runs");
    let out = optimize(&m, &Config::default()).expect("optimizes");
    let def = out.entry(None).expect("a definition");
    assert!(
        cost::check_lemma_5_3(&out, def).is_err(),
        "the lambda was copied into its calls:\n{}",
        syntax::print::module(&out)
    );
    lemma_5_3_within_budget(&m, &out).expect("no lambda without the budget");
    let got = eval(&out, &inputs).expect("runs");
    assert!(same(&got, &value), "{got:?} against {value:?}");
}

/// A comparison of real literals folds to a truth value, and the `if` on
/// it goes (`const-fold`, then `if-const`). Comparisons of reals once fell
/// to the arm of the real functions, which has no value for them, so only
/// those of integers folded: the generated programs of `difftest`'s
/// `Features::redundant`, which write `if 1 < 2 then ..`, found it.
#[test]
fn comparisons_of_real_literals_fold() {
    let m = compile(
        "def f (x : R) : R =\n  (if 1.5 < 2 then x else sin x) + (if 0.5 >= 2 then x else 2 * x)\n",
    );
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    assert!(
        !out.exprs
            .iter()
            .any(|e| matches!(e, syntax::Expr::If { .. })),
        "an `if` on literals is left:\n{}",
        syntax::print::module(&out)
    );
    assert!(report.fired.contains_key(&RuleName::ConstFold));
    assert!(report.fired.contains_key(&RuleName::IfConst));
    let inputs = vec![("x".to_string(), semantics::Value::Real(0.25))];
    let got = eval(&out, &inputs).expect("runs");
    assert!(same(&got, &semantics::Value::Real(0.75)), "{got:?}");
}
