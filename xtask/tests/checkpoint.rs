//! `grad --checkpoint sqrt` (docs/derivatives.md, "Checkpointing"): the
//! gradient of a long loop in bounded memory, the same numbers as storing
//! every state. At 3·10^5 steps the stored states need more heap than the
//! budget below leaves (100 MB less the 64 MB margin): without checkpoints
//! the gradient is refused, with them it is computed in a few MB
//! (docs/scale.md, "Checkpointing", has the measurements).

use crate::common;
use crate::memory::{LOOP, assert_out_of_memory, limited, write};

const BUDGET: (&str, &str) = ("ADREV_MEMORY_LIMIT", "100M");

#[test]
fn a_checkpointed_gradient_fits_a_budget_the_stored_one_does_not() {
    let file = write("checkpoint.ad", LOOP);
    let args = |scheme| {
        [
            "grad",
            file.as_str(),
            "--at",
            "x=0.3",
            "--at",
            "n=300000",
            "--checkpoint",
            scheme,
        ]
    };
    let stored = limited(None, &[BUDGET], &args("off"));
    // At `ifold`, the reverse sweep's array of cotangents: the budget
    // counts the heap the run holds (semantics::memory::Counting), the same
    // on every run. When it counted the resident size, a clean clone's CI
    // run met the periodic check in the loop's body (2:24) instead.
    assert_out_of_memory(&stored, "checkpoint.ad:2:3", "ADREV_MEMORY_LIMIT");
    assert!(
        stored.stderr.contains("evaluating `scanr`: needed "),
        "{}",
        stored.stderr
    );
    let checkpointed = limited(None, &[BUDGET], &args("sqrt"));
    assert_eq!(checkpointed.code, Some(0), "{}", checkpointed.stderr);
    // The same lines as the stored gradient without a budget.
    let reference = common::xtask(&args("off"));
    assert_eq!(reference.code, Some(0), "{}", reference.stderr);
    assert!(
        reference.stdout.starts_with("value = "),
        "{}",
        reference.stdout
    );
    assert_eq!(checkpointed.stdout, reference.stdout);
}

#[test]
fn an_unknown_scheme_is_a_usage_error() {
    let file = write("scheme.ad", LOOP);
    let run = common::xtask(&[
        "grad",
        &file,
        "--at",
        "x=0.3",
        "--at",
        "n=3",
        "--checkpoint",
        "binomial",
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("sqrt"),
        "names the schemes: {}",
        run.stderr
    );
}
