//! `reduce` in the fast configurations (note [rebracketing],
//! `codegen/src/assoc.rs`): a parallel or reassociated `reduce` folds each
//! chunk from `z` and combines the chunks with `f`, which is the left fold
//! only for an associative `f` whose unit is `z` (or an idempotent `f`).
//! The language defines `reduce` as the left fold for every `f`
//! (docs/semantics.md), so every configuration must compute it: these
//! programs, whose `f` is not associative or whose `z` is not the unit,
//! gave other numbers under `parallel` (`reduce (+) 1` over two chunks
//! adds 1 three times) before they were kept sequential.

use crate::common;

use codegen::Config;
use semantics::Value;

/// `f` not associative, `z` not the unit, a tuple with one component of
/// each kind; and the recognised reductions, which stay rebracketed.
const PROGRAM: &str = "\
def nonassoc (A : [n]R) : R =
  reduce (fun (p, q) -> p * 0.5 + q) 0 A

def unitless (A : [n]R) : R =
  reduce (+) 1 A

def mixed (A : [n]R) : (R, R) =
  reduce (fun (p, q) -> (p.1 + q.1, p.2 * 0.5 + q.2)) (0, 0) (map (fun x -> (x, x)) A)

def recognised (A : [n]R) : (R, R, (R, R), [n]R) =
  (reduce (+) 0 A,
   reduce (fun (a, b) -> max a b) (-5) A,
   reduce (fun (p, q) -> let (s, t) = p in (s + q.1, q.2 * t)) (0, 1) (map (fun x -> (x, 1 + x * 0.01)) A),
   map (fun x -> x * 2) A)
";

const SEQUENTIAL: [&str; 3] = ["nonassoc", "unitless", "mixed"];

fn inputs() -> Vec<Vec<Value>> {
    let xs: Vec<f64> = (0..37).map(|i| ((i as f64) * 0.61).sin()).collect();
    [0, 1, 2, 5, 37]
        .iter()
        .map(|&n| vec![Value::reals(&xs[..n])])
        .collect()
}

/// The C text of one definition's function.
fn function<'c>(source: &'c str, name: &str) -> &'c str {
    let start = source
        .find(&format!("int adrev_{name}(ad_ctx"))
        .unwrap_or_else(|| panic!("no function {name}"));
    let rest = &source[start..];
    let end = rest.find("\n}\n").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

#[test]
fn reductions_that_are_not_rebracketable_stay_sequential() {
    let m = common::module("rebracket.ad", PROGRAM);
    let parallel = common::parallel_from_two();
    let fast = Config {
        reassociate: true,
        ..Config::default()
    };
    let par = codegen::emit(&m, &parallel).expect("emits").source;
    let lanes = codegen::emit(&m, &fast).expect("emits").source;
    for name in SEQUENTIAL {
        assert!(
            !function(&par, name).contains("omp parallel num_threads"),
            "{name} got a parallel reduction"
        );
        assert!(
            !function(&lanes, name).contains("+= 4"),
            "{name} got reduction lanes"
        );
    }
    assert!(function(&par, "recognised").contains("omp parallel num_threads"));
    assert!(function(&lanes, "recognised").contains("+= 4"));
}

#[test]
fn every_configuration_computes_the_left_fold() {
    let m = common::module("rebracket.ad", PROGRAM);
    let configs = [
        ("default", Config::default()),
        ("parallel", common::parallel_from_two()),
        (
            "reassociate",
            Config {
                reassociate: true,
                ..Config::default()
            },
        ),
    ];
    for (tag, cfg) in &configs {
        let built = common::build(&m, cfg, &format!("rebracket-{tag}"));
        for args in inputs() {
            for def in &m.defs {
                let name = def.name.as_str();
                let got = common::agree(&m, &built, name, &args)
                    .unwrap_or_else(|e| panic!("{tag}, n = {}: {e}", args[0]));
                // The default configuration, and the sequential reductions
                // in every configuration, are the evaluator's bits.
                if *tag == "default" || SEQUENTIAL.contains(&name) {
                    let want = semantics::eval_def(&m, def, &args).expect("evaluates");
                    assert_eq!(
                        want.to_string(),
                        got.to_string(),
                        "{tag}: `{name}` is not bit-identical"
                    );
                }
            }
        }
    }
}
