//! Loop-invariant code motion (`hoist.rs`): checks and scratch buffers that
//! do not depend on a loop are emitted before it, and the program still
//! reports exactly the evaluator's errors (the same error, in the same
//! cases: none for a loop that does not run, the earlier one when a
//! per-element error comes first) and computes its values, also under the
//! sanitizers.

use crate::common;

use codegen::Config;
use common::{agree, args, module};

const PROGRAMS: &str = r#"
def rows (X : [n][d]R) (m : [k]R) : [n]R =
  map (fun x -> reduce (+) 0 (map2 (*) x m)) X

def first_error (X : [n][d]R) (m : [k]R) (I : [n]Int) : [n]R =
  map2 (fun (x, j) -> m[j] * reduce (+) 0 (map2 (*) x m)) X I

def nested (X : [n][d]R) (Q : [q][e]R) (m : [k]R) : [n]R =
  map (fun x -> reduce (+) 0 (map (fun r -> reduce (+) 0 (map2 (*) r m)) Q) + reduce (+) 0 x) X

def scratch (X : [n][d]R) (m : [d]R) : [n]R =
  map (fun x ->
    let y = map2 (fun (a, b) -> a * b + 1) x m in
    reduce (+) 0 y * reduce (fun (a, b) -> max a b) (-1000) y) X
"#;

/// Runs each case in the evaluator and in C: both succeed with the same
/// value or fail with the same error (`fails` says which is expected).
fn check(m: &syntax::Module, built: &codegen::Built, cases: &[(&str, &[&str], bool)]) {
    for (entry, texts, fails) in cases {
        let a = args(m, entry, texts);
        let def = m.def(entry).expect("entry");
        let want = semantics::eval_def(m, def, &a);
        assert_eq!(
            want.is_err(),
            *fails,
            "{entry} {texts:?}: evaluator {want:?}"
        );
        match want {
            Ok(_) => {
                agree(m, built, entry, &a).unwrap_or_else(|e| panic!("{entry} {texts:?}: {e}"));
            }
            Err(want) => match codegen::run(built, entry, &a) {
                Err(codegen::Error::Eval(got)) => {
                    assert_eq!(got, want, "{entry} {texts:?}");
                    assert_eq!(got.to_string(), want.to_string());
                }
                other => panic!("{entry} {texts:?}: evaluator {want:?}, C backend {other:?}"),
            },
        }
    }
}

const CASES: &[(&str, &[&str], bool)] = &[
    // The size check of the inner `map2` is the same for every row.
    ("rows", &["[[1, 2], [3, 4], [5, 6]]", "[0.5, 2]"], false),
    ("rows", &["[[1, 2], [3, 4]]", "[0.5, 2, 3]"], true),
    ("rows", &["[[], []]", "[1]"], true),
    // No row: the check must not fire.
    ("rows", &["[]", "[0.5, 2, 3]"], false),
    ("rows", &["[[], []]", "[]"], false),
    // The first row's index error comes before the size check.
    (
        "first_error",
        &["[[1, 2], [3, 4]]", "[1, 2, 3]", "[5, 0]"],
        true,
    ),
    // The first row's index is fine: the size check of the first row.
    (
        "first_error",
        &["[[1, 2], [3, 4]]", "[1, 2, 3]", "[0, 7]"],
        true,
    ),
    (
        "first_error",
        &["[[1, 2], [3, 4]]", "[1, 2]", "[0, 7]"],
        true,
    ),
    (
        "first_error",
        &["[[1, 2], [3, 4]]", "[1, 2]", "[1, 0]"],
        false,
    ),
    ("first_error", &["[]", "[1, 2, 3]", "[]"], false),
    // A check two loops deep: fires only if both loops run.
    ("nested", &["[[1], [2]]", "[[1, 2]]", "[3]"], true),
    ("nested", &["[[1], [2]]", "[]", "[3]"], false),
    ("nested", &["[]", "[[1, 2]]", "[3]"], false),
    (
        "nested",
        &["[[1], [2]]", "[[1, 2], [3, 4]]", "[3, 5]"],
        false,
    ),
    // A scratch buffer per row.
    (
        "scratch",
        &["[[1, 2, 3], [4, 5, 6]]", "[0.5, -1, 2]"],
        false,
    ),
    ("scratch", &["[[], []]", "[]"], false),
    ("scratch", &["[]", "[1, 2]"], false),
    ("scratch", &["[[1, 2]]", "[1, 2, 3]"], true),
];

#[test]
fn hoisted_checks_report_the_evaluators_errors() {
    let m = module("hoisting.ad", PROGRAMS);
    let built = common::build(&m, &Config::default(), "hoisting");
    check(&m, &built, CASES);
}

#[test]
fn hoisted_code_is_clean_under_the_sanitizers() {
    let m = module("hoisting.ad", PROGRAMS);
    let cfg = Config {
        sanitize: true,
        ..Config::default()
    };
    let built = common::build(&m, &cfg, "hoisting-sanitize");
    check(&m, &built, CASES);
}

/// The loops of one generated function: for every line inside at least one
/// `for` loop, the line.
fn lines_in_loops(source: &str, function: &str) -> Vec<String> {
    let start = source
        .find(&format!("int adrev_{function}("))
        .expect("the function is emitted");
    let mut depth_stack: Vec<bool> = Vec::new();
    let mut out = Vec::new();
    for line in source[start..].lines().skip(1) {
        let t = line.trim();
        if t == "}" && depth_stack.is_empty() {
            break;
        }
        if t.starts_with('}') {
            depth_stack.pop();
        }
        if depth_stack.iter().any(|&l| l) && !t.ends_with('{') {
            out.push(t.to_string());
        }
        if t.ends_with('{') {
            depth_stack.push(t.starts_with("for ("));
        }
    }
    out
}

#[test]
fn invariant_checks_and_buffers_leave_the_loops() {
    let m = module("hoisting.ad", PROGRAMS);
    let c = codegen::emit(&m, &Config::default()).expect("emits");
    // `rows` and `nested` fail only by sizes that no loop changes.
    for f in ["rows", "nested"] {
        let inside = lines_in_loops(&c.source, f);
        assert!(!inside.is_empty(), "{f} has loops");
        let bad: Vec<&String> = inside.iter().filter(|l| l.contains("ad_fail")).collect();
        assert!(bad.is_empty(), "{f}: checks left in loops: {bad:?}");
    }
    // `scratch` allocates its row buffer once, and takes no arena mark.
    let inside = lines_in_loops(&c.source, "scratch");
    let bad: Vec<&String> = inside
        .iter()
        .filter(|l| l.contains("ad_alloc") || l.contains("ad_mark") || l.contains("ad_reset"))
        .collect();
    assert!(bad.is_empty(), "scratch: arena use left in loops: {bad:?}");
    // `first_error` keeps its size check after the index check, in the loop.
    let inside = lines_in_loops(&c.source, "first_error");
    assert_eq!(
        inside.iter().filter(|l| l.contains("ad_fail")).count(),
        2,
        "{inside:?}"
    );
}
