//! The protocol: a `hello` session as GradBench's `hello` eval runs it,
//! and bad messages, each answered `success: false` while the tool goes on.

use serde_json::json;

use crate::tool::Tool;

#[test]
fn hello_session_alternates_square_and_double() {
    let mut t = Tool::start("hello");
    t.define("hello");
    // GradBench's hello eval: x = 1, then four times y = square x, x = double y.
    let mut x = 1.0_f64;
    for _ in 0..4 {
        let r = t
            .send(json!({"kind": "evaluate", "module": "hello", "function": "square", "input": x}));
        assert_eq!(r["success"], true, "{r}");
        let y = r["output"].as_f64().expect("a number");
        assert_eq!(y, x * x);
        let r = t
            .send(json!({"kind": "evaluate", "module": "hello", "function": "double", "input": y}));
        x = r["output"].as_f64().expect("a number");
        assert_eq!(x, 2.0 * y);
        let a = t.send(json!({"kind": "analysis", "of": r["id"], "valid": true}));
        assert_eq!(a, json!({"id": a["id"]}));
    }
    assert_eq!(x, 32768.0);
}

#[test]
fn runs_at_least_min_runs_and_min_seconds() {
    let mut t = Tool::start("lse");
    t.define("lse");
    let r = t.evaluate_raw(
        "lse",
        "primal",
        json!({"x": [1, 2], "min_runs": 7, "min_seconds": 0}),
    );
    assert_eq!(r["timings"].as_array().map(Vec::len), Some(7), "{r}");
    let r = t.evaluate_raw(
        "lse",
        "primal",
        json!({"x": [1, 2], "min_runs": 1, "min_seconds": 0.01}),
    );
    let total: u64 = r["timings"]
        .as_array()
        .expect("timings")
        .iter()
        .map(|t| t["nanoseconds"].as_u64().expect("ns"))
        .sum();
    assert!(total >= 10_000_000, "{total} ns in {r}");
}

/// Each bad message, and a piece of what the error must say.
#[test]
fn bad_messages_get_an_error_and_the_tool_goes_on() {
    let mut t = Tool::start("lse");
    let cases: Vec<(String, &str)> = vec![
        ("not json".into(), "not JSON"),
        ("[1, 2]".into(), "not a JSON object"),
        (r#"{"kind": "define", "module": "lse"}"#.into(), "no `id`"),
        (r#"{"id": 100, "kind": "fly"}"#.into(), "unknown message kind `fly`"),
        (r#"{"id": 101, "kind": "define"}"#.into(), "no `module`"),
        (r#"{"id": 102, "kind": "define", "module": 3}"#.into(), "`module` must be a string"),
        (r#"{"id": 103, "kind": "define", "module": "nope"}"#.into(), "unknown module `nope`"),
        (
            r#"{"id": 104, "kind": "evaluate", "module": "lse", "function": "primal", "input": {"x": [1]}}"#.into(),
            "not defined",
        ),
        (r#"{"id": 105, "kind": "analysis", "of": 1}"#.into(), "`valid`"),
    ];
    for (line, says) in &cases {
        let r = t.send_line(line);
        assert_eq!(r["success"], false, "{line}: {r}");
        let error = r["error"].as_str().expect("an error message");
        assert!(
            error.contains(says),
            "{line}: `{error}` does not say `{says}`"
        );
    }
    t.define("lse");
    let evaluate_cases = [
        ("primal", json!({"y": [1]}), "input.x is missing"),
        ("primal", json!({"x": "abc"}), "input.x must be an array"),
        (
            "primal",
            json!({"x": [1, "b"]}),
            "input.x[1] must be a number",
        ),
        (
            "primal",
            json!({"x": [1], "min_runs": 0}),
            "min_runs must be a positive integer",
        ),
        ("primal", json!([1, 2]), "input must be an object"),
        ("cube", json!({"x": [1]}), "no function `cube`"),
    ];
    for (function, input, says) in evaluate_cases {
        let r = t.evaluate_raw("lse", function, input.clone());
        assert_eq!(r["success"], false, "{input}: {r}");
        let error = r["error"].as_str().expect("an error message");
        assert!(
            error.contains(says),
            "{input}: `{error}` does not say `{says}`"
        );
    }
    // Still answering.
    let out = t.evaluate("lse", "primal", json!({"x": [0, 0]}));
    assert!((out.as_f64().expect("a number") - 2f64.ln()).abs() < 1e-15);
}

/// The debug mode: `--sanitize` builds with AddressSanitizer and
/// UndefinedBehaviorSanitizer (reported in `start`'s flags) and computes
/// the normal build's gradient (to 1e-12: the fast configuration's vector
/// math and reassociated sums may round differently in another build).
#[test]
fn the_sanitized_tool_gives_the_same_gradient() {
    let input = json!({"x": [1.5, -2, 0.25, 7], "min_runs": 1, "min_seconds": 0});
    let mut plain = Tool::start("lse");
    plain.define("lse");
    let expected = plain.evaluate_raw("lse", "gradient", input.clone());
    let mut t = Tool::start_with("lse", &["--sanitize"]);
    let started = t.send(json!({"kind": "start", "eval": "lse"}));
    let flags = started["config"]["flags"].to_string();
    assert!(flags.contains("-fsanitize=address,undefined"), "{started}");
    t.define("lse");
    let r = t.evaluate_raw("lse", "gradient", input);
    assert_eq!(r["success"], true, "{r}");
    let (got, want) = (r["output"].as_array(), expected["output"].as_array());
    let (got, want) = (got.expect("an array"), want.expect("an array"));
    assert_eq!(got.len(), want.len(), "{r}");
    for (g, w) in got.iter().zip(want) {
        let (g, w) = (g.as_f64().expect("a number"), w.as_f64().expect("a number"));
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1e-300),
            "{g} against {w}"
        );
    }
}

#[test]
fn a_bad_argument_is_refused_with_the_usage() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_adrev-gradbench"))
        .arg("--sanitise")
        .output()
        .expect("the tool runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unexpected argument `--sanitise`"), "{err}");
    assert!(err.contains("[--sanitize]"), "{err}");
}
