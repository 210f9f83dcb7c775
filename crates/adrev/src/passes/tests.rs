//! The verification policy of [`run`] seen from inside: a pass that breaks
//! its output on purpose (a test-only step given to [`run_with`]) is an
//! internal error naming the pass, while a program the pass refuses stays
//! the user's error. The command line's half (exit status 2 and 1) is in
//! xtask/tests/errors.rs.

use super::*;
use crate::{Ir, Program};

const PROD: &str = "def prod_ (A : [n]R) : R = reduce (*) 1 A";

/// The Source module and context of `text`'s last definition, verified
/// after every pass.
fn source(text: &str) -> (Module, Context) {
    let program = Program::from_text("t.ad", text).expect("the test program loads");
    let Ir::Source(m) = program.ir() else {
        panic!("a `.ad` program is a Source module");
    };
    let entry = program.entry(None).expect("an entry").name.to_string();
    (m.clone(), Context::new(entry))
}

/// Runs `pass` and, when it is `broken`, drops the last entry of its
/// output's type table: a Target module the verifier must refuse.
fn breaking(broken: Pass) -> impl FnMut(Pass, Flow, &Context) -> Result<Flow> {
    move |pass, flow, cx| match run_one(pass, flow, cx)? {
        Flow::Target(mut m) if pass == broken => {
            m.types.pop();
            Ok(Flow::Target(m))
        }
        other => Ok(other),
    }
}

const DIRECT: [Pass; 2] = [Pass::FirstOrder, Pass::Direct];

#[test]
fn a_pass_whose_output_fails_the_verifier_is_an_internal_error_naming_it() {
    let (m, cx) = source(PROD);
    let err = run_with(&DIRECT, Flow::Source(m), &cx, breaking(Pass::Direct))
        .err()
        .expect("the broken output must be refused");
    assert!(err.is_internal(), "{err:?}");
    let msg = err.message();
    assert!(
        msg.contains("after pass `reverse-direct`, the output fails the verifier")
            && msg.contains("type table"),
        "{msg}"
    );
    assert!(err.to_string().starts_with("internal error: "), "{err}");
}

#[test]
fn the_same_pass_unbroken_passes_and_with_verification_off_is_not_checked() {
    let (m, cx) = source(PROD);
    let good = run_with(&DIRECT, Flow::Source(m.clone()), &cx, run_one);
    assert!(good.is_ok(), "{:?}", good.err());
    // The policy is what catches the break: off, the broken module goes
    // through unverified.
    let off = Context {
        verify: Verify::Off,
        ..cx
    };
    let out = run_with(&DIRECT, Flow::Source(m), &off, breaking(Pass::Direct))
        .and_then(Flow::into_module)
        .expect("nothing verifies");
    assert_eq!(out.types.len() + 1, out.exprs.len());
}

#[test]
fn a_program_the_pass_refuses_is_the_users_error() {
    // The direct macro does not take `build` (docs/direct.md).
    let (m, cx) = source(
        "def f (A : [n]R) (x : R) : R =\n  foldl (fun (acc, e) -> acc * e + x) x (build (length A) (fun i -> 2))",
    );
    let err = run_with(&DIRECT, Flow::Source(m), &cx, breaking(Pass::Direct))
        .err()
        .expect("the direct macro refuses `build`");
    assert!(!err.is_internal(), "{err:?}");
    assert!(err.message().contains("t.ad:"), "{}", err.message());
}

/// After expansion, the Source flowing on holds reverse mode's Target-only
/// primitives (here a histogram's `gather` and `dhist_mul_vals`, from
/// `grad_rev` over `grad_rev`): the passes after expansion are verified as
/// modules, as expansion itself is, not refused as Source (`stage unf` on
/// fixtures/hist_rr/10.source.ron was an internal error).
#[test]
fn the_passes_after_expansion_take_reverse_modes_target_primitives() {
    let (m, cx) = source(
        "def f (d : [m]R) (is : [n]Int) (v : [n]R) : R =\n  sum (grad_rev (fun w -> sum (grad_rev (fun u -> sum (reduce_by_index d (*) is u)) w)) v)",
    );
    let passes = [Pass::Expand, Pass::FirstOrder, Pass::Lower];
    let out = run_with(&passes, Flow::Source(m), &cx, run_one);
    assert!(matches!(out, Ok(Flow::SourceUnf(..))), "{:?}", out.err());
}
