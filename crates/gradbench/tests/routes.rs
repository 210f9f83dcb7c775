//! Forward mode against reverse mode on the eval programs themselves: the
//! gradient the tool answers with (reverse mode, C) against forward mode
//! (one pass per input real, the reference evaluator), through the
//! library, on small inputs.

use adrev::{Inputs, Kind, Program, Request, Route, Wrt};
use semantics::Value;

use crate::oracle::{assert_all, close};

fn both(file: &str, entry: &str, wrt: &[&str], args: Vec<(&str, Value)>) {
    let path = format!("{}/../../gradbench/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the program");
    let program = Program::from_text(file, text).expect("it compiles");
    let inputs = args
        .into_iter()
        .fold(Inputs::new(), |i, (n, v)| i.with(n, v));
    let request = |route| {
        Request::new(Kind::Grad)
            .entry(entry)
            .wrt(Wrt::names(wrt.iter().copied()))
            .route(route)
    };
    let reverse = program
        .compile(&request(Route::Unf).backend(adrev::Backend::C(
            gradbench::tool_config(Some("1"), false).expect("a level"),
        )))
        .expect("reverse mode")
        .call(&inputs)
        .expect("runs");
    let forward = program
        .compile(&request(Route::Forward))
        .expect("forward mode")
        .call(&inputs)
        .expect("runs");
    for name in wrt {
        let r = gradbench::convert::flat_reals(reverse.gradient(name).expect("gradient"))
            .expect("reals");
        let f = gradbench::convert::flat_reals(forward.gradient(name).expect("gradient"))
            .expect("reals");
        assert_all(&format!("{file} {name}"), &r, &f, 1e-12, close);
    }
}

fn matrix(rows: usize, cols: usize, seed: f64) -> Value {
    Value::array(
        (0..rows)
            .map(|i| {
                Value::reals(
                    &(0..cols)
                        .map(|j| ((i * cols + j) as f64 * 0.7 + seed).sin())
                        .collect::<Vec<_>>(),
                )
            })
            .collect(),
    )
}

#[test]
fn lse_llsq_ode_det_reverse_equals_forward() {
    let x = Value::reals(&[0.3, -0.2, 0.9, 0.1]);
    both("lse.ad", "lse", &["x"], vec![("x", x.clone())]);
    both(
        "llsq.ad",
        "llsq",
        &["x"],
        vec![("x", x.clone()), ("n", Value::Int(9))],
    );
    both(
        "ode.ad",
        "ode_last",
        &["x"],
        vec![("x", x), ("s", Value::Int(3))],
    );
    both("det.ad", "det", &["A"], vec![("A", matrix(6, 6, 0.3))]);
}

#[test]
fn gmm_and_lstm_reverse_equal_forward() {
    both(
        "gmm.ad",
        "gmm",
        &["alpha", "mu", "q", "l"],
        vec![
            ("alpha", Value::reals(&[0.1, -0.4, 0.3])),
            ("mu", matrix(3, 3, 0.2)),
            ("q", matrix(3, 3, 1.1)),
            ("l", matrix(3, 3, 2.3)),
            ("x", matrix(4, 3, 0.5)),
            ("gamma", Value::Real(1.3)),
            ("m", Value::Int(1)),
        ],
    );
    both(
        "lstm.ad",
        "lstm",
        &["main_params", "extra_params"],
        vec![
            ("main_params", matrix(4, 8, 0.1)),
            ("extra_params", matrix(3, 2, 0.4)),
            ("state", matrix(4, 2, 0.7)),
            ("sequence", matrix(5, 2, 0.9)),
        ],
    );
}
