//! `gather-fusion` and `length-of` on the shapes they are for (GradBench's
//! ht: a mesh computed whole and read at a few vertices; `jacob`'s value
//! computed for its length alone): the optimized program computes the same
//! value, counted by the cost model's evaluation it is cheaper (it maps over
//! the read elements, not the array), and a read in a deeper loop keeps
//! the array (it may read each element many times).

use crate::common;

use optimize::{Config, optimize_report};
use semantics::cost;

use common::{args_of, compile, eval, expectations, same, verified};

/// Optimizes the program `text`: its value before and after must agree;
/// returns the counted costs before and after and how often `rule` fired.
fn run(text: &str, rule: optimize::RuleName) -> (cost::Cost, cost::Cost, usize) {
    let m = compile(text);
    let (inputs, expected) = expectations(text, &m);
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    let before = eval(&m, &inputs).expect("the program runs");
    let after = eval(&out, &inputs).expect("the optimized program runs");
    assert!(same(&before, &after), "{before:?} against {after:?}");
    if let Some(v) = expected {
        assert!(same(&after, &v), "{after:?} against the expected {v:?}");
    }
    let cost_of = |m: &syntax::Module| {
        let def = m.entry(None).expect("a definition");
        cost::dynamic_cost(m, def, &args_of(m, &inputs))
            .expect("counted")
            .1
    };
    let fired = report.fired.get(&rule).copied().unwrap_or(0);
    (cost_of(&m), cost_of(&out), fired)
}

fn total(c: &cost::Cost) -> u64 {
    c.moves + c.adds + c.mults + c.nlops
}

#[test]
fn a_gather_computes_only_the_elements_it_reads() {
    // Two of eight elements read: sin is taken twice, not eight times.
    let text = "-- at A = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]\n\
                -- at C = [6, 1]\n\
                def f (A : [n]R) (C : [m]Int) : [m]R =\n\
                \x20 let X = map (fun a -> sin a * 2) A in\n\
                \x20 map (fun c -> X[c] / 2 + 1) C\n";
    let (before, after, fired) = run(text, optimize::RuleName::GatherFusion);
    assert!(fired > 0, "gather-fusion did not fire");
    assert_eq!(before.nlops, 8);
    assert_eq!(after.nlops, 2, "one sin per read element");
    assert!(total(&after) < total(&before));
}

#[test]
fn a_read_in_a_nested_loop_keeps_the_array() {
    // Every element read once per row: computed once, not once per row.
    let text = "-- at A = [0.1, 0.2, 0.3]\n\
                -- at B = [1, 2, 3, 4]\n\
                def f (A : [n]R) (B : [m]R) : [m][n]R =\n\
                \x20 let X = map (fun a -> sin a) A in\n\
                \x20 map (fun b -> build (length A) (fun j -> X[j] * b)) B\n";
    let (before, after, fired) = run(text, optimize::RuleName::GatherFusion);
    assert_eq!(fired, 0, "gather-fusion fired on reads in a nested loop");
    assert_eq!(before.nlops, 3);
    assert_eq!(after.nlops, 3);
}

#[test]
fn a_length_does_not_compute_the_array() {
    // `jacob`'s shape: the value computed for its length alone.
    let text = "-- at A = [0.1, 0.2, 0.3]\n\
                -- value = 6\n\
                def f (A : [n]R) : Int =\n\
                \x20 let Y = map (fun a -> exp a) A in\n\
                \x20 let Z = build (2 * length Y) (fun i -> if i < length Y then Y[i] else 0 - Y[i - length Y]) in\n\
                \x20 length Z\n";
    let (before, after, fired) = run(text, optimize::RuleName::LengthOf);
    assert!(fired > 0, "length-of did not fire");
    assert_eq!(before.nlops, 3);
    assert_eq!(after.nlops, 0, "no exp computed for a length");
}
