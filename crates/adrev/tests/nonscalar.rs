//! Reverse mode of results that are not a real: a VJP and a reverse
//! Jacobian (one VJP per output real) agree with the forward Jacobian on
//! every fixture with a non-real result (fixtures/nonscalar), and the
//! forward Jacobian agrees with central finite differences; `Auto` picks
//! the mode by sizes and says which.

use crate::common::{close, reals, workspace};
use adrev::{Backend, Given, Inputs, JacobianMode, Kind, Outputs, Program, Request, Route};
use semantics::Value;

fn programs() -> Vec<(String, Program)> {
    let dir = workspace().join("fixtures/nonscalar");
    let mut out: Vec<(String, Program)> = std::fs::read_dir(&dir)
        .expect("fixtures/nonscalar exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ad"))
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            let program = Program::load(&p).unwrap_or_else(|e| panic!("{}", e.message()));
            (name.unwrap_or_default(), program)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5, "only {} programs", out.len());
    out
}

fn jacobian(p: &Program, mode: JacobianMode, backend: Backend) -> Outputs {
    let req = Request::new(Kind::Jacobian { mode }).backend(backend);
    let compiled = p
        .compile(&req)
        .unwrap_or_else(|e| panic!("{}", e.message()));
    compiled
        .call(&p.default_inputs())
        .unwrap_or_else(|e| panic!("{}", e.message()))
}

/// `value` with real number `j` (depth first) replaced by `x`.
fn set_real(v: &Value, j: usize, x: f64, i: &mut usize) -> Value {
    match v {
        Value::Real(r) => {
            *i += 1;
            Value::Real(if *i - 1 == j { x } else { *r })
        }
        Value::Array(items) => Value::array(items.iter().map(|e| set_real(e, j, x, i)).collect()),
        Value::Tuple(items) => Value::tuple(items.iter().map(|e| set_real(e, j, x, i)).collect()),
        other => other.clone(),
    }
}

/// A cotangent shaped like `y`: 1, -2, 3, ... (no symmetry to hide a
/// transposed block behind).
fn cotangent(y: &Value) -> Value {
    let n = reals(y).len();
    (0..n).fold(y.clone(), |v, j| {
        let s = if j % 2 == 0 { 1.0 } else { -2.0 };
        set_real(&v, j, s * (j + 1) as f64 / 2.0, &mut 0)
    })
}

#[test]
fn a_reverse_jacobian_equals_the_forward_one() {
    for (name, p) in programs() {
        let fwd = jacobian(&p, JacobianMode::Forward, Backend::Eval);
        let rev = jacobian(&p, JacobianMode::Reverse, Backend::Eval);
        assert_eq!(rev.jacobian_mode, Some(JacobianMode::Reverse), "{name}");
        assert_eq!(fwd.jacobian.len(), rev.jacobian.len(), "{name}");
        for ((n, a), (m, b)) in fwd.jacobian.iter().zip(&rev.jacobian) {
            assert_eq!(n, m, "{name}");
            close(a, b, 1e-12).unwrap_or_else(|e| panic!("{name} jacobian {n}: {e}"));
        }
    }
}

#[test]
fn a_vjp_by_every_route_is_the_cotangent_times_the_forward_jacobian() {
    for (name, p) in programs() {
        let fwd = jacobian(&p, JacobianMode::Forward, Backend::Eval);
        let ct = cotangent(&fwd.value);
        let cts = reals(&ct);
        for route in [Route::Unf, Route::Direct, Route::Forward] {
            let req = Request::new(Kind::Vjp).route(route);
            let out = p
                .compile(&req)
                .and_then(|c| c.call(&p.default_inputs().cotangent(Given::Value(ct.clone()))))
                .unwrap_or_else(|e| panic!("{name} {route:?}: {}", e.message()));
            close(&out.value, &fwd.value, 0.0).unwrap_or_else(|e| panic!("{name}: {e}"));
            for ((n, block), (m, g)) in fwd.jacobian.iter().zip(&out.gradients) {
                assert_eq!(n, m);
                // Block n holds, at each real j of the result, the gradient
                // of y_j: sum_j ct_j * block[j] is the VJP.
                let rows = reals(block);
                let width = reals(g).len();
                let want: Vec<f64> = (0..width)
                    .map(|c| (0..cts.len()).map(|j| cts[j] * rows[j * width + c]).sum())
                    .collect();
                let want = Value::reals(&want);
                close(&Value::reals(&reals(g)), &want, 1e-12)
                    .unwrap_or_else(|e| panic!("{name} {route:?} vjp {n}: {e}"));
            }
        }
    }
}

#[test]
fn the_forward_jacobian_agrees_with_finite_differences() {
    for (name, p) in programs() {
        let fwd = jacobian(&p, JacobianMode::Forward, Backend::Eval);
        let value = p
            .compile(&Request::new(Kind::Value))
            .unwrap_or_else(|e| panic!("{}", e.message()));
        let def = value.entry().clone();
        let args = p
            .default_inputs()
            .resolve(&def)
            .unwrap_or_else(|e| panic!("{}", e.message()));
        for (k, (pname, x)) in args.iter().enumerate() {
            let block = reals(fwd.jacobian_block(pname).expect("a block per parameter"));
            let xs = reals(x);
            let at = |j: usize, h: f64| {
                let mut a = args.clone();
                a[k].1 = set_real(x, j, xs[j] + h, &mut 0);
                let out = value.call(&Inputs::from_values(a)).expect("runs");
                reals(&out.value)
            };
            for j in 0..xs.len() {
                let h = 1e-6 * xs[j].abs().max(1.0);
                let (plus, minus) = (at(j, h), at(j, -h));
                for (r, (a, b)) in plus.iter().zip(&minus).enumerate() {
                    let fd = (a - b) / (2.0 * h);
                    let ad = block[r * xs.len() + j];
                    assert!(
                        (fd - ad).abs() <= 1e-6 * (1.0 + ad.abs()),
                        "{name}: d y{r} / d {pname}[{j}]: AD {ad}, FD {fd}"
                    );
                }
            }
        }
    }
}

#[test]
fn auto_picks_reverse_for_fewer_outputs_than_inputs_and_says_so() {
    for (name, p) in programs() {
        let auto = jacobian(&p, JacobianMode::Auto, Backend::Eval);
        let n_out = reals(&auto.value).len();
        let n_in: usize = auto
            .jacobian
            .iter()
            .map(|(_, b)| reals(b).len() / n_out.max(1))
            .sum();
        let want = if n_out < n_in {
            JacobianMode::Reverse
        } else {
            JacobianMode::Forward
        };
        assert_eq!(
            auto.jacobian_mode,
            Some(want),
            "{name}: {n_in} in, {n_out} out"
        );
    }
}

#[test]
fn the_c_backend_computes_the_same_reverse_jacobian() {
    let p = Program::load(workspace().join("fixtures/nonscalar/stats.ad")).expect("loads");
    let eval = jacobian(&p, JacobianMode::Reverse, Backend::Eval);
    let c = jacobian(
        &p,
        JacobianMode::Reverse,
        Backend::C(codegen::Config::default()),
    );
    assert_eq!(eval, c);
}

#[test]
fn a_vjp_without_a_cotangent_says_what_to_give() {
    let p = Program::load(workspace().join("fixtures/nonscalar/polar.ad")).expect("loads");
    let c = p.compile(&Request::new(Kind::Vjp)).expect("compiles");
    let e = c.call(&p.default_inputs()).expect_err("no cotangent");
    assert!(!e.is_internal());
    assert!(e.message().contains("cotangent"), "{}", e.message());
    let e = c
        .call(&p.default_inputs().cotangent(Given::Text("[1, 2]".into())))
        .expect_err("a cotangent of the wrong type");
    assert!(e.message().contains("cotangent"), "{}", e.message());
}
