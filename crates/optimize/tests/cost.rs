//! Theorem 5.4 on the optimized gradients of Example 1.1 and Example 5.5
//! at the sizes of their stated inputs (a snapshot of each cost report:
//! static and dynamic costs of the source and of its gradient, NAO, the
//! ratio and the bound), and the cost model on optimized programs: every
//! optimized generated program in the restricted language of Fig. 11 (most
//! of them) has a static cost that equals the cost counted in an evaluation when it has
//! no `if`, and bounds it otherwise; optimization never makes a program
//! dearer to run.

use crate::common;

use expect_test::{Expect, expect};
use optimize::{Config, RuleName, optimize, optimize_report};
use semantics::cost;
use syntax::Expr;

use common::source::redundant_program;
use common::{args_of, compile, expectations, fixture_program, program_text};

/// The report of Theorem 5.4 for a source fixture and its hand-written
/// reverse-mode output, optimized.
fn report(fixture: &str, rev: &str, snapshot: Expect) {
    let text = fixture_program(fixture);
    let source = compile(&text);
    let (inputs, _) = expectations(&text, &source);
    let args = args_of(&source, &inputs);
    let gradient = optimize(&compile(&program_text(rev)), &Config::default()).expect("optimizes");
    let r = cost::report(
        &source,
        source.entry(None).expect("a definition"),
        &gradient,
        gradient.entry(None).expect("a definition"),
        &args,
    )
    .expect("the costs are defined");
    assert!(r.holds(), "Theorem 5.4 fails on {fixture}:\n{r}");
    assert_eq!(r.gradient_static.as_ref().ok(), Some(&r.gradient_dynamic));
    assert_eq!(r.source_static, Ok(r.source_dynamic));
    snapshot.assert_eq(&r.to_string());
}

#[test]
fn theorem_5_4_ex1_1() {
    report(
        "ex1_1",
        "ex1_1_rev",
        expect![[r#"
            source    static  (moves 13, adds 0, mults 2, nlops 0)
            source    dynamic (moves 13, adds 0, mults 2, nlops 0)
            gradient  static  (moves 26, adds 1, mults 4, nlops 0)
            gradient  dynamic (moves 26, adds 1, mults 4, nlops 0)
            p = NAO(e) = 0
            ratio 2.067 (bound 4 * 3^p = 4): holds
        "#]],
    );
}

#[test]
fn theorem_5_4_prod() {
    report(
        "prod",
        "prod_rev",
        expect![[r#"
            source    static  (moves 30, adds 0, mults 4, nlops 0)
            source    dynamic (moves 30, adds 0, mults 4, nlops 0)
            gradient  static  (moves 104, adds 0, mults 11, nlops 0)
            gradient  dynamic (moves 104, adds 0, mults 11, nlops 0)
            p = NAO(e) = 1
            ratio 3.382 (bound 4 * 3^p = 12): holds
        "#]],
    );
}

#[test]
fn theorem_5_4_sum() {
    report(
        "sum",
        "sum_rev",
        expect![[r#"
            source    static  (moves 30, adds 4, mults 0, nlops 0)
            source    dynamic (moves 30, adds 4, mults 0, nlops 0)
            gradient  static  (moves 43, adds 4, mults 0, nlops 0)
            gradient  dynamic (moves 43, adds 4, mults 0, nlops 0)
            p = NAO(e) = 1
            ratio 1.382 (bound 4 * 3^p = 12): holds
        "#]],
    );
}

#[test]
fn theorem_5_4_dot() {
    report(
        "dot",
        "dot_rev",
        expect![[r#"
            source    static  (moves 59, adds 4, mults 4, nlops 0)
            source    dynamic (moves 59, adds 4, mults 4, nlops 0)
            gradient  static  (moves 61, adds 4, mults 4, nlops 0)
            gradient  dynamic (moves 61, adds 4, mults 4, nlops 0)
            p = NAO(e) = 1
            ratio 1.030 (bound 4 * 3^p = 12): holds
        "#]],
    );
}

#[test]
fn example_1_1_gradient_by_hand() {
    // let w1 = x1 * x2 in (w1 * x1, w1 + x2 * x1, x1 * x1, 0): a let, four
    // products of leaves (5 moves, a mult each), the sum of a variable and
    // a product (3 + 1 moves, an add), and the 0.
    let text = program_text("ex1_1_rev");
    let g = optimize(&compile(&text), &Config::default()).expect("optimizes");
    let (inputs, _) = expectations(&text, &g);
    let def = g.entry(None).expect("a definition");
    let (_, c) = cost::dynamic_cost(&g, def, &args_of(&g, &inputs)).expect("evaluates");
    assert_eq!(c, cost::Cost::new(1 + 4 * 5 + 4 + 1, 1, 4, 0));
}

/// The number of generated programs of the cost test.
const COST_CASES: u64 = 128;

/// What the cost model says of one optimized program.
enum Outcome {
    /// Static and dynamic costs agree, and the program got no dearer.
    Checked,
    /// Outside Fig. 11's restricted language: no static cost.
    Unrestricted,
    /// Dearer after `reduce-fusion` or `recompute-cheap`, which trade a
    /// pass over an array for a few more moves (docs/cost.md) and may
    /// compute a map's body once per reduction it feeds, or after
    /// `share-elementwise` or `share-inner-loop`, whose shared array costs
    /// its allocation's moves where the array is empty.
    Traded,
}

/// The generated programs' cost on optimized programs: the same programs
/// on every run. Programs outside Fig. 11's restricted language (a
/// `while`, an `ifold` whose count is not a literal, an array whose length
/// the types do not give) have no static cost, and `reduce-fusion` and
/// `recompute-cheap` may trade a pass over an array for a few more moves
/// (90 against 89, docs/cost.md: a random draw of the optimizer's former
/// generator made CI fail on about one run in six) and compute a map's
/// body once per reduction it feeds (12 multiplications against 9), as
/// the sharing rules cost an allocation at an empty array (11 moves
/// against 9): both are counted, and must stay the exception.
#[test]
fn optimized_programs_have_their_static_cost() {
    let (mut unrestricted, mut traded) = (0, 0);
    for k in 0..COST_CASES {
        let seed = difftest::Rng::for_case(20261129, k).next_u64();
        let text = redundant_program(seed);
        match check_static_cost(&text).unwrap_or_else(|e| panic!("case {k}: {e}\n{text}")) {
            Outcome::Checked => {}
            Outcome::Unrestricted => unrestricted += 1,
            Outcome::Traded => traded += 1,
        }
    }
    eprintln!("{COST_CASES} programs: {unrestricted} without a static cost, {traded} traded");
    assert!(
        unrestricted <= COST_CASES / 4 && traded <= COST_CASES / 16,
        "of {COST_CASES} optimized programs, {unrestricted} have no static cost and {traded} \
         got dearer"
    );
}

/// Checks the cost model on the optimized `text`.
fn check_static_cost(text: &str) -> Result<Outcome, String> {
    let m = compile(text);
    let (inputs, _) = expectations(text, &m);
    let args = args_of(&m, &inputs);
    let (out, report) = optimize_report(&m, &Config::default()).map_err(|e| e.to_string())?;
    let printed = || syntax::print::module(&out);
    let def = out.entry(None).expect("a definition");
    let sizes = cost::sizes_at(def, &args).map_err(|e| e.to_string())?;
    let st = match cost::static_cost(&out, def, &sizes) {
        Ok(st) => st,
        Err(semantics::Error::NotRestricted { .. } | semantics::Error::UnknownSize { .. }) => {
            return Ok(Outcome::Unrestricted);
        }
        Err(e) => return Err(format!("{e}\n{}", printed())),
    };
    let (_, dynamic) = cost::dynamic_cost(&out, def, &args).map_err(|e| e.to_string())?;
    let has_if = out.exprs.iter().any(|e| matches!(e, Expr::If { .. }));
    if has_if && !dynamic.le(st) {
        return Err(format!(
            "dynamic {dynamic} above static {st} for\n{}",
            printed()
        ));
    }
    if !has_if && st != dynamic {
        return Err(format!(
            "static {st} vs dynamic {dynamic} for\n{}",
            printed()
        ));
    }
    // Optimizing never makes the program dearer to run, but for the
    // moves the fusions trade.
    let src_def = m.entry(None).expect("a definition");
    let (_, before) = cost::dynamic_cost(&m, src_def, &args).map_err(|e| e.to_string())?;
    if dynamic.total() <= before.total() {
        return Ok(Outcome::Checked);
    }
    let trading = [
        RuleName::ReduceFusion,
        RuleName::RecomputeCheap,
        RuleName::ShareElementwise,
        RuleName::ShareInnerLoop,
    ]
    .iter()
    .any(|r| report.fired.contains_key(r));
    if trading {
        return Ok(Outcome::Traded);
    }
    Err(format!(
        "optimized {dynamic} dearer than {before} for\n{}",
        printed()
    ))
}
