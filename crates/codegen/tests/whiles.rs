//! `while` and `trips` in C (`whiles.rs`): bit for bit the evaluator's
//! values, through the driver process and the library, for a state of
//! scalars, a state holding arrays, zero trips, a loop nested in another
//! loop's body (the arena reset per trip), and the gradient programs
//! reverse mode writes for them (`trips` and an `ifold`).

use crate::common;

use codegen::Config;
use semantics::Value;

const PROGRAM: &str = "
def newton (a : R) : (R, Int) =
  while (fun s -> let (x, k) = s in k < 100 && x * x != a) (fun s -> let (x, k) = s in (0.5 * (x + a / x), k + 1)) (a, 0)

def count (x : R) : Int =
  trips (fun y -> y > 1) (fun y -> y / 2) x

def scale (A : [n]R) (c : R) : ([n]R, Int) =
  while (fun s -> let (B, k) = s in reduce (+) 0 B < 20 && k < 100) (fun s -> let (B, k) = s in (map (fun b -> sin b * c + b) B, k + 1)) (A, 0)

def nested (A : [n]R) : [n]R =
  map (fun a -> while (fun y -> y < 10) (fun y -> y * 1.5 + reduce (+) 0 (map (fun b -> b * b) A)) a) A
";

#[test]
fn while_loops_are_bit_identical_to_the_evaluator() {
    let m = common::module("whiles.ad", PROGRAM);
    let built = common::build(&m, &Config::default(), "whiles");
    let mut cases: Vec<(&str, Vec<Value>)> = Vec::new();
    for a in [4.0, 2.0, 0.3, 1e-3, -1.0] {
        cases.push(("newton", vec![Value::Real(a)]));
    }
    for x in [10.0, 0.5, 1e300, f64::NAN] {
        cases.push(("count", vec![Value::Real(x)]));
    }
    for (a, c) in [
        (vec![1.0, 2.0, 3.0], 1.5),
        (vec![], 2.0),
        (vec![30.0], 0.1),
        (vec![0.25; 9], 0.7),
    ] {
        cases.push(("scale", vec![Value::reals(&a), Value::Real(c)]));
    }
    for a in [vec![0.5, -2.0, 3.0], vec![], vec![20.0]] {
        cases.push(("nested", vec![Value::reals(&a)]));
    }
    for (entry, args) in cases {
        common::assert_bit_identical(&m, &built, entry, &args, &format!("{entry} at {args:?}"));
    }
}

#[test]
fn gradients_of_while_loops_are_bit_identical_to_the_evaluator() {
    let text = "def f (A : [n]R) (c : R) : R =\n  let (B, k) = while (fun s -> let (B, k) = s in reduce (+) 0 B < 20 && k < 100) (fun s -> let (B, k) = s in (map (fun b -> sin b * c + b) B, k + 1)) (A, 0) in\n  reduce (+) 0 (map (fun b -> b * b) B)\n";
    let m = common::module("while_grad.ad", text);
    let def = m.defs.last().expect("f").clone();
    let g = reverse::gradient(&m, &def, &reverse::Config::default()).expect("differentiates");
    let o = optimize::optimize(&g, &optimize::Config::default()).expect("optimizes");
    let built = common::build(&o, &Config::default(), "while_grad");
    let name = o.defs.last().expect("the gradient").name.to_string();
    for (a, c) in [
        (vec![1.0, 2.0, 3.0], 1.5),
        (vec![], 2.0),
        (vec![0.25; 9], 0.7),
    ] {
        let args = vec![Value::reals(&a), Value::Real(c)];
        common::assert_bit_identical(&o, &built, &name, &args, &format!("at {args:?}"));
    }
}
