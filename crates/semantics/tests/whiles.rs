//! `while` and `trips` in the evaluator (docs/semantics.md, "Builtins"):
//! the condition before each application of the body, zero trips, a state
//! of arrays, a long loop in constant stack, and a loop that does not end
//! stopped by the step limit with the loop's span.

use semantics::{Config, Error, Value, eval_def, eval_def_with};
use syntax::SourceFile;

fn compile(text: &str) -> syntax::Module {
    syntax::compile(SourceFile {
        name: "whiles.ad".to_string(),
        text: text.to_string(),
    })
    .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn run(text: &str, args: &[Value]) -> Result<Value, Error> {
    let m = compile(text);
    let def = m.defs.last().expect("a definition").clone();
    eval_def(&m, &def, args)
}

const COLLATZ: &str = "def f (n : Int) : (Int, Int) =\n  while (fun s -> let (x, k) = s in x != 1) (fun s -> let (x, k) = s in (if mod x 2 == 0 then x / 2 else 3 * x + 1, k + 1)) (n, 0)\n";

#[test]
fn the_condition_is_tested_before_every_trip() {
    // Collatz from 6: 6 3 10 5 16 8 4 2 1, eight steps.
    let v = run(COLLATZ, &[Value::Int(6)]).expect("runs");
    assert_eq!(v.to_string(), "(1, 8)");
    // From 1: the condition is false at once, the body never runs.
    let v = run(COLLATZ, &[Value::Int(1)]).expect("runs");
    assert_eq!(v.to_string(), "(1, 0)");
}

#[test]
fn trips_counts_the_applications_of_the_body() {
    let text = "def f (x : R) : Int =\n  trips (fun y -> y > 1) (fun y -> y / 2) x\n";
    assert_eq!(run(text, &[Value::Real(10.0)]), Ok(Value::Int(4)));
    assert_eq!(run(text, &[Value::Real(0.5)]), Ok(Value::Int(0)));
}

#[test]
fn a_state_of_arrays() {
    let text = "def f (A : [n]R) : [n]R =\n  while (fun B -> reduce (+) 0 B < 20) (fun B -> map (fun b -> b * 1.5) B) A\n";
    let v = run(text, &[Value::reals(&[1.0, 2.0, 3.0])]).expect("runs");
    assert_eq!(v.to_string(), "[3.375, 6.75, 10.125]");
}

#[test]
fn a_million_trips_run_in_constant_stack() {
    // A recursion per trip would need far more than the test thread's
    // stack (2 MiB); the loop needs none.
    let text = "def f (n : Int) : (Int, R) =\n  while (fun s -> let (k, x) = s in k < n) (fun s -> let (k, x) = s in (k + 1, x + 0.5)) (0, 0)\n";
    let v = run(text, &[Value::Int(1_000_000)]).expect("runs");
    assert_eq!(v.to_string(), "(1000000, 500000)");
}

#[test]
fn a_loop_that_does_not_end_stops_at_the_step_limit() {
    let text = "def f (x : R) : R =\n  while (fun y -> y == y) (fun y -> y + 1) x\n";
    let m = compile(text);
    let def = m.defs.last().expect("a definition").clone();
    let cfg = Config {
        max_steps: Some(10_000),
    };
    let err = eval_def_with(&m, &def, &[Value::Real(0.0)], &cfg).expect_err("never ends");
    assert!(
        matches!(err, Error::StepLimit { limit: 10_000, .. }),
        "{err}"
    );
}

#[test]
fn a_condition_false_at_once_gives_the_initial_state() {
    let v = run(
        "def f (x : R) : R =\n  while (fun y -> false) (fun y -> y) x\n",
        &[Value::Real(2.0)],
    );
    assert_eq!(v, Ok(Value::Real(2.0)));
}
