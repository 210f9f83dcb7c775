//! The library's API on small programs.

use adrev::{Inputs, Kind, Program, Request};
use semantics::Value;

#[test]
fn a_gradient_by_name() {
    let p = Program::from_text("prod.ad", "def prod_ (A : [n]R) : R = reduce (*) 1 A")
        .expect("compiles");
    let g = p.compile(&Request::new(Kind::Grad)).expect("a gradient");
    let out = g
        .call(&Inputs::new().with("A", Value::reals(&[1.0, 2.0, 3.0, 4.0])))
        .expect("runs");
    assert_eq!(
        out.gradient("A"),
        Some(&Value::reals(&[24.0, 12.0, 8.0, 6.0]))
    );
}

#[path = "../examples/gmm_many.rs"]
mod gmm_many;

#[test]
fn example_gmm_many_runs() {
    // The example's own code, on a few calls: the first point is the
    // fixture's, whose gradient is ADBench's expected one.
    let out = gmm_many::run(3, adrev::Backend::Eval).unwrap_or_else(|e| panic!("{}", e.message()));
    assert_eq!(out.len(), 3);
    let text = std::fs::read_to_string(gmm_many::GMM).expect("the fixture");
    let p = Program::load(gmm_many::GMM).expect("loads");
    let def = p.entry(None).expect("an entry");
    let exp = semantics::Expectations::parse(&text);
    let want = exp
        .grad(def, "alphas")
        .expect("a -- grad alphas line")
        .expect("reads");
    assert!(out[0].1.approx_eq_default(&want), "{} vs {want}", out[0].1);
    // The points move, so do the values.
    assert!(out[0].0 != out[2].0);
}

fn dot() -> Program {
    Program::from_text(
        "dot.ad",
        "def dot_ (A : [n]R) (B : [n]R) : R = reduce (+) 0 (map2 (*) A B)",
    )
    .expect("compiles")
}

#[test]
fn a_wrong_input_names_the_parameter_and_the_shapes() {
    let g = dot().compile(&Request::new(Kind::Grad)).expect("compiles");
    let e = g
        .call(
            &Inputs::new()
                .with("A", Value::reals(&[1.0, 2.0]))
                .with("B", Value::reals(&[1.0, 2.0, 3.0])),
        )
        .expect_err("sizes disagree");
    assert!(!e.is_internal());
    let m = e.message();
    assert!(
        m.contains("`B`") && m.contains('3') && m.contains('2'),
        "{m}"
    );
    let e = g
        .call(&Inputs::new().with("A", Value::reals(&[1.0])))
        .expect_err("B is missing");
    assert!(
        e.message().contains("no value for the parameter `B`"),
        "{}",
        e.message()
    );
    let e = g
        .call(
            &Inputs::new()
                .with("A", Value::Real(1.0))
                .with("B", Value::Real(1.0)),
        )
        .expect_err("not arrays");
    assert!(e.message().contains("`A`"), "{}", e.message());
}

#[test]
fn wrt_selects_and_orders_the_gradients_by_name() {
    let p = dot();
    let req = Request::new(Kind::Grad).wrt(adrev::Wrt::names(["B"]));
    let out = p
        .compile(&req)
        .expect("compiles")
        .call(&Inputs::from_literals([("A", "[1, 2]"), ("B", "[3, 4]")]))
        .expect("runs");
    assert_eq!(
        out.gradients,
        vec![("B".to_string(), Value::reals(&[1.0, 2.0]))]
    );
    let e = p
        .compile(&Request::new(Kind::Grad).wrt(adrev::Wrt::names(["C"])))
        .expect_err("no such parameter");
    assert!(e.message().contains("no parameter `C`"), "{}", e.message());
}

#[test]
fn every_verification_policy_computes_the_same_gradient() {
    use adrev::Verify;
    let p = dot();
    let inputs = Inputs::from_literals([("A", "[1, 2, 3]"), ("B", "[4, 5, 6]")]);
    let outs: Vec<_> = [Verify::EveryPass, Verify::Boundaries, Verify::Off]
        .into_iter()
        .map(|v| {
            p.compile(&Request::new(Kind::Grad).verify(v))
                .and_then(|c| c.call(&inputs))
                .expect("runs")
        })
        .collect();
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn the_stages_are_the_pipelines_boundaries() {
    let stages = dot().stages(None, &adrev::Wrt::All).expect("every stage");
    let files: Vec<&str> = stages.iter().map(|s| s.file).collect();
    assert_eq!(
        files,
        [
            "10.source.ron",
            "20.source-unf.ron",
            "30.target-unf.ron",
            "40.target.ron",
            "50.opt.ron"
        ]
    );
    for s in &stages {
        let header = syntax::read_header(&s.ron).expect("an envelope");
        assert_eq!(header.ir, s.ir, "{}", s.stage);
        assert!(!s.text.is_empty());
    }
}

#[test]
fn timing_runs_at_least_as_often_as_asked() {
    let g = dot().compile(&Request::new(Kind::Grad)).expect("compiles");
    let inputs = Inputs::from_literals([("A", "[1, 2]"), ("B", "[3, 4]")]);
    let timing = adrev::Timing {
        runs: 5,
        min_time: std::time::Duration::ZERO,
    };
    let (out, times) = g.time(&inputs, timing).expect("runs");
    assert_eq!(times.len(), 5);
    assert_eq!(out, g.call(&inputs).expect("runs"));
}

#[test]
fn a_jvp_and_a_hessian_by_name() {
    let p = Program::from_text("f.ad", "def f (x : R) (y : R) : R = x * x * y").expect("compiles");
    let jvp = p.compile(&Request::new(Kind::Jvp)).expect("compiles");
    let out = jvp
        .call(
            &Inputs::from_literals([("x", "3"), ("y", "2")])
                .tangent("x", adrev::Given::Text("1".into()))
                .tangent("y", adrev::Given::Text("0".into())),
        )
        .expect("runs");
    assert_eq!(out.tangent, Some(Value::Real(12.0)));
    let h = p.compile(&Request::new(Kind::Hessian)).expect("compiles");
    let out = h
        .call(&Inputs::from_literals([("x", "3"), ("y", "2")]))
        .expect("runs");
    assert_eq!(out.hessian_block("x", "x"), Some(&Value::Real(4.0)));
    assert_eq!(out.hessian_block("x", "y"), Some(&Value::Real(6.0)));
    assert_eq!(out.hessian_block("y", "y"), Some(&Value::Real(0.0)));
}

#[test]
fn programs_and_compiled_requests_may_move_between_threads() {
    // A binding keeps them in objects another thread may drop.
    fn send<T: Send>() {}
    send::<Program>();
    send::<adrev::Compiled>();
    send::<adrev::Request>();
}

/// The request's forward options reach the program's own `jacob`: with
/// `Mode::Vectorised` the value program is the vectorised expansion (what
/// `forward::expand_with` writes in that mode, not the one-pass-per-seed
/// default) and computes the same Jacobian.
#[test]
fn the_requests_forward_mode_expands_the_programs_jacob() {
    let text = "def f (x : [3]R) : [2][3]R =\n  jacob (fun v -> [v[0] * sin v[1], v[2] / v[0]]) x";
    let p = Program::from_text("jac.ad", text).expect("compiles");
    let inputs = Inputs::new().with("x", Value::reals(&[1.5, -0.5, 2.0]));
    let passes = p.compile(&Request::new(Kind::Value)).expect("compiles");
    let mut request = Request::new(Kind::Value);
    request.forward.mode = forward::Mode::Vectorised;
    let vectorised = p.compile(&request).expect("compiles");
    let source = p.module().expect("a module");
    for (compiled, mode) in [
        (&passes, forward::Mode::Passes),
        (&vectorised, forward::Mode::Vectorised),
    ] {
        let cfg = forward::Config {
            mode,
            ..forward::Config::default()
        };
        let want = forward::expand_with(source, &cfg).expect("expands");
        assert_eq!(compiled.module(), Some(&want), "{mode:?}");
    }
    assert_ne!(passes.module(), vectorised.module());
    let a = passes.call(&inputs).expect("runs").value;
    let b = vectorised.call(&inputs).expect("runs").value;
    assert!(a.approx_eq_default(&b), "{a} vs {b}");
}
