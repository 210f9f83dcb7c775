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

/// ba's Jacobian as the tool computes it (`vjp_rev` per row, C) against
/// the same Jacobian by forward mode (`jacob`, the reference evaluator),
/// on observations through a rotated camera and one whose rotation is
/// zero (Rodrigues' other branch).
#[test]
fn ba_jacobian_by_reverse_mode_equals_forward_mode() {
    let path = format!("{}/../../gradbench/ba.ad", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the program");
    let program = Program::from_text("ba.ad", text).expect("it compiles");
    let mut still = vec![0.0; 11];
    still[6] = 1.5;
    still[5] = -3.0;
    let turned = matrix(1, 11, 0.4).as_array().expect("rows")[0].clone();
    let cams = Value::array(vec![turned, Value::reals(&still)]);
    let ints = |xs: &[i64]| Value::array(xs.iter().map(|&i| Value::Int(i)).collect());
    let inputs = Inputs::new()
        .with("cams", cams)
        .with("xs", matrix(3, 3, 1.7))
        .with("w", Value::reals(&[0.4, -0.8, 1.2, 0.9]))
        .with("cam", ints(&[0, 1, 0, 1]))
        .with("pt", ints(&[2, 0, 1, 2]))
        .with("feats", matrix(4, 2, 2.9));
    let run = |entry: &str, backend: adrev::Backend| {
        let out = program
            .compile(&Request::new(Kind::Value).entry(entry).backend(backend))
            .expect("compiles")
            .call(&inputs)
            .expect("runs");
        gradbench::convert::flat_reals(&out.value).expect("reals")
    };
    let reverse = run(
        "ba_jacobian",
        adrev::Backend::C(gradbench::tool_config(Some("1"), false).expect("a level")),
    );
    let forward = run("ba_jacobian_forward", adrev::Backend::Eval);
    assert_eq!(reverse.len(), 4 * 2 * 15 + 4);
    assert!(reverse.iter().any(|&x| x.abs() > 1.0), "{reverse:?}");
    assert_all("ba jacobian", &reverse, &forward, 1e-12, close);
}
