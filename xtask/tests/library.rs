//! The commands over the library (`adrev`): `vjp`, `jacobian` by either
//! mode and by sizes, data files in and out, C options, and one route per
//! request (`compile --grad` builds what `grad` runs).

use crate::common::{workspace, xtask};

#[test]
fn vjp_and_a_reverse_jacobian_from_the_command_line() {
    let file = "fixtures/nonscalar/polar.ad";
    let run = xtask(&["vjp", file, "--cotangent", "(1, 0)"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // d(r cos t)/dr = cos 0.7, d(r cos t)/dt = -r sin 0.7.
    let (c, s) = (0.7f64.cos(), 0.7f64.sin());
    assert!(
        run.stdout
            .contains(&format!("vjp r = {}", semantics::format_real(c))),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("vjp t = {}", semantics::format_real(-2.0 * s))),
        "{}",
        run.stdout
    );
    let fwd = xtask(&["jacobian", file, "--via", "forward"]);
    let rev = xtask(&["jacobian", file, "--via", "reverse", "--backend", "c"]);
    assert_eq!(fwd.code, Some(0), "{}", fwd.stderr);
    assert_eq!(fwd.stdout, rev.stdout, "{}", rev.stderr);
    let auto = xtask(&["jacobian", "fixtures/nonscalar/moments.ad"]);
    assert!(auto.stdout.ends_with("mode = reverse\n"), "{}", auto.stdout);
    let auto = xtask(&["jacobian", file]);
    assert!(auto.stdout.ends_with("mode = forward\n"), "{}", auto.stdout);
}

#[test]
fn a_vjp_needs_a_cotangent_of_the_results_shape() {
    let run = xtask(&[
        "vjp",
        "fixtures/nonscalar/polar.ad",
        "--cotangent",
        "[1, 2]",
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("cotangent"), "{}", run.stderr);
}

#[test]
fn results_as_json_and_npz_and_inputs_from_files() {
    let dir = workspace().join("target/tmp/library-data");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let json = dir.join("in.json");
    std::fs::write(&json, r#"{"A": [1, 2, 3], "B": [4, 5, 6]}"#).expect("written");
    let run = xtask(&[
        "grad",
        "fixtures/dot/program.ad",
        "--inputs",
        json.to_str().expect("utf-8"),
        "--output",
        "json",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let flat: String = run.stdout.split_whitespace().collect();
    assert_eq!(
        flat,
        r#"{"value":32.0,"grad.A":[4.0,5.0,6.0],"grad.B":[1.0,2.0,3.0]}"#
    );
    // The same through an .npz written by the command and an .npy input.
    let npy = dir.join("A.npy");
    let a = data::Dense::reals(vec![3], &[1.0, 2.0, 3.0]).expect("a dense array");
    data::write_npy(&npy, &a).expect("written");
    let out = dir.join("out.npz");
    let run = xtask(&[
        "grad",
        "fixtures/dot/program.ad",
        "--at",
        &format!("A=@{}", npy.display()),
        "--at",
        "B=[4, 5, 6]",
        "--backend",
        "c",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let arrays = data::read_npz(&out).expect("an npz");
    let names: Vec<&str> = arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["value", "grad.A", "grad.B"]);
    assert_eq!(
        arrays[1].1.to_value(),
        semantics::Value::reals(&[4.0, 5.0, 6.0])
    );
    // An input file naming no parameter says so.
    std::fs::write(&json, r#"{"A": [1, 2, 3], "C": [4, 5, 6]}"#).expect("written");
    let run = xtask(&[
        "grad",
        "fixtures/dot/program.ad",
        "--inputs",
        json.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("no parameter `C`"), "{}", run.stderr);
}

#[test]
fn c_options_need_the_c_backend_and_reach_it() {
    let run = xtask(&["grad", "fixtures/dot/program.ad", "--sanitize"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("--backend c"), "{}", run.stderr);
    let reference = xtask(&["grad", "fixtures/sin_exp/program.ad"]);
    for extra in [&["--sanitize"][..], &["--fast"], &["--parallel"]] {
        let mut args = vec!["grad", "fixtures/sin_exp/program.ad", "--backend", "c"];
        args.extend_from_slice(extra);
        let run = xtask(&args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout.lines().count(), reference.stdout.lines().count());
    }
    let run = xtask(&[
        "vjp",
        "fixtures/nonscalar/stats.ad",
        "--cotangent",
        "(1, [1, 0, 2])",
        "--backend",
        "c",
        "--sanitize",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn compile_grad_builds_what_grad_runs_with_respect_to_wrt() {
    let dir = "target/tmp/library-compile";
    let run = xtask(&[
        "compile",
        "fixtures/gmm/program.ad",
        "--grad",
        "--wrt",
        "alphas,means,icf",
        "-o",
        dir,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let h = std::fs::read_to_string(workspace().join(dir).join("program.h")).expect("the header");
    // The gradient of the model only: three gradients, not seven.
    let proto = h
        .lines()
        .find(|l| l.contains("gmm_grad:"))
        .expect("the entry's prototype");
    assert!(proto.ends_with("-> (R, [k]R, [k][d]R, [k][t]R)"), "{proto}");
    // And the very program `grad` runs: the library's optimized gradient.
    let text = std::fs::read_to_string(workspace().join("fixtures/gmm/program.ad")).expect("read");
    let program = adrev::Program::from_text("fixtures/gmm/program.ad", text).expect("compiles");
    let req = adrev::Request::new(adrev::Kind::ValueAndGrad)
        .wrt(adrev::Wrt::names(["alphas", "means", "icf"]));
    let compiled = program.compile(&req).expect("compiles");
    let cfg = codegen::Config {
        shared_library: true,
        ..codegen::Config::default()
    };
    let c = codegen::emit(compiled.module().expect("a module"), &cfg).expect("emits");
    let written = std::fs::read_to_string(workspace().join(dir).join("program.c")).expect("the C");
    assert!(
        written == c.source,
        "compile --grad wrote another program than grad runs"
    );
}

#[test]
fn codegen_names_the_header_after_its_output() {
    let out = "target/tmp/library-codegen/kernel.c";
    let run = xtask(&["codegen", "fixtures/dot/50.opt.ron", "-o", out]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c = std::fs::read_to_string(workspace().join(out)).expect("the C");
    assert!(
        c.contains("#include \"kernel.h\""),
        "{}",
        &c[..c.len().min(400)]
    );
    assert!(
        workspace()
            .join("target/tmp/library-codegen/kernel.h")
            .is_file()
    );
}

/// The `json_value` fuzz target's find (`fuzz/regressions/json_value/
/// float_one_ulp_off`) through the command line: serde_json without
/// `float_roundtrip` read `1e-30` as 9.999999999999999e-31 (and
/// `123456789.12345679` one ulp off too). The oracle is Rust's own
/// correctly rounded parser and the shortest round-trip printer.
#[test]
fn json_inputs_reach_eval_correctly_rounded() {
    let decimals = ["1", "2.5", "-0.0", "1e-30", "-1", "123456789.12345679"];
    let reals: Vec<f64> = decimals
        .iter()
        .map(|d| d.parse().expect("a decimal"))
        .collect();
    let printed: Vec<String> = reals.iter().map(|&r| semantics::format_real(r)).collect();
    let expected = format!("[{}]\n", printed.join(", "));
    assert!(expected.contains(", 1e-30, "), "{expected}");
    let dir = workspace().join("target/tmp/library-json-exact");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let program = dir.join("identity.ad");
    std::fs::write(&program, "def f (A : [n]R) : [n]R =\n  A\n").expect("written");
    let array = format!("[{}]", decimals.join(", "));
    let inputs = dir.join("in.json");
    std::fs::write(&inputs, format!(r#"{{"A": {array}}}"#)).expect("written");
    let value = dir.join("A.json");
    std::fs::write(&value, &array).expect("written");
    let program = program.to_str().expect("utf-8");
    for args in [
        ["--inputs".to_string(), inputs.display().to_string()],
        ["--at".to_string(), format!("A=@{}", value.display())],
    ] {
        let run = xtask(&["eval", program, &args[0], &args[1]]);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, expected, "{args:?}");
    }
}
