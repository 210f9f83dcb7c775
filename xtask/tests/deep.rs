//! Deep and long programs through the command line: evaluated, or refused
//! with a short "nesting too deep" diagnostic; never a stack overflow.

use crate::common;

use common::xtask;

fn write(name: &str, text: &str) -> String {
    common::write_program(&format!("deep-{name}"), text)
}

#[test]
fn twenty_thousand_nested_parentheses_evaluate() {
    let n = 20_000;
    let text = format!(
        "def f (x : R) : R =\n  {}x + 1{}\n",
        "(".repeat(n),
        ")".repeat(n)
    );
    let run = xtask(&["eval", &write("parens.ad", &text), "--at", "x=1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "2");
}

#[test]
fn nesting_beyond_the_limit_is_refused_with_a_short_diagnostic() {
    let n = syntax::stack::MAX_DEPTH + 10;
    let text = format!(
        "def f (x : R) : R =\n  {}x{}\n",
        "(".repeat(n),
        ")".repeat(n)
    );
    let run = xtask(&["eval", &write("too-deep.ad", &text), "--at", "x=1"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("nesting too deep"), "{}", run.stderr);
    assert!(
        run.stderr.contains(":2:"),
        "the diagnostic names the line: {}",
        run.stderr
    );
    assert!(
        run.stderr.len() < 1_000,
        "the diagnostic quotes an excerpt, not the line: {} bytes",
        run.stderr.len()
    );
}

#[test]
fn a_long_let_chain_differentiates_alike_by_both_routes() {
    // 5,000 lets keep the debug-build test quick; `cargo xtask bench scale`
    // measures 20,000 in release.
    let n = 5_000;
    let mut text = String::from("def chain (x : R) : R =\n");
    for i in 0..n {
        let prev = if i == 0 {
            "x".to_string()
        } else {
            format!("v{}", i - 1)
        };
        text.push_str(&format!(
            "  let v{i} = {prev} * 0.9999 + 0.001 * sin {prev} in\n"
        ));
    }
    text.push_str(&format!("  v{}\n", n - 1));
    let file = write("chain.ad", &text);
    let unf = xtask(&["grad", &file, "--at", "x=0.5"]);
    assert_eq!(unf.code, Some(0), "{}", unf.stderr);
    let fwd = xtask(&["grad", &file, "--at", "x=0.5", "--via", "forward"]);
    assert_eq!(fwd.code, Some(0), "{}", fwd.stderr);
    let grad = |out: &str| -> f64 {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("grad x = "))
            .expect("a grad line");
        line.parse().expect("a real")
    };
    let (a, b) = (grad(&unf.stdout), grad(&fwd.stdout));
    assert!(
        a > 0.0 && (a - b).abs() <= 1e-9 * a.abs(),
        "unf {a} vs forward {b}"
    );
}

#[test]
fn a_module_too_deep_for_a_ron_file_is_refused_when_written() {
    // A literal nested 300 deep checks and evaluates, but its type nests
    // deeper than a RON file holds (readers stop at 128 levels): writing
    // it is refused with exit 1, not a serializer panic.
    let d = 300;
    let text = format!(
        "def f (x : R) : R =\n  let a = {}2.5{} in x\n",
        "[".repeat(d),
        "]".repeat(d)
    );
    let file = write("ron-too-deep.ad", &text);
    let run = xtask(&["eval", &file, "--at", "x=1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = std::env::temp_dir().join(format!("adrev-deep-{}.ron", std::process::id()));
    let run = xtask(&["parse", &file, "-o", &out.display().to_string()]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot be written as RON: it nests more than 128 levels"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}
