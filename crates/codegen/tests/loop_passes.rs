//! End to end, what the loop IR's later passes and the lowering of
//! histograms take out of the C: a histogram whose `dest` is delayed
//! writes it straight into its result (no buffer of its own, no copy
//! loop), and an argmax's `A[i]` over `i < length A` is not checked; the
//! values and errors stay the evaluator's.

use crate::common;

use codegen::Config;
use common::{agree, args, module, target_module};

const PROGRAMS: &str = r#"
def argmax (A : [n]R) : Int =
  (ifold (fun (st : (R, Int), i : Int) ->
    let (w, j) = st in
    if w > A[i] then st else (A[i], i)) (A[0], 0 - 1) (length A)).2

def shifted (A : [n]R) (I : [k]Int) : Int =
  ifold (fun (acc : Int, i : Int) -> acc + I[i + 1]) 0 (length I)
"#;

const HIST: &str = r#"
def scaled (A : [n]R) (I : [k]Int) (V : [k]R) : [n]R =
  hist_add (map (fun (a : R) -> a * 2) A) I V
"#;

/// How many `for` loops the C function `adrev_<f>` has, and how many
/// bounds checks (`if (i < 0 || i >= n) return ad_fail(..)`) are inside
/// one.
fn loops_and_checks(source: &str, f: &str) -> (usize, usize) {
    let head = format!("int adrev_{f}(");
    let (mut loops, mut inside, mut stack) = (0, 0, Vec::<bool>::new());
    let body = source
        .lines()
        .skip_while(|l| !(l.starts_with(&head) && l.ends_with('{')))
        .skip(1);
    for line in body {
        let t = line.trim();
        if t == "}" && stack.is_empty() {
            break;
        }
        if t.starts_with('}') {
            stack.pop();
        }
        if stack.iter().any(|&l| l) && t.contains(" < 0 || ") && t.contains("ad_fail") {
            inside += 1;
        }
        if t.ends_with('{') {
            loops += usize::from(t.starts_with("for ("));
            stack.push(t.starts_with("for ("));
        }
    }
    (loops, inside)
}

fn same_as_evaluator(m: &syntax::Module, tag: &str, cases: &[(&str, &[&str])]) {
    let built = common::build(m, &Config::default(), tag);
    for (entry, texts) in cases {
        let a = args(m, entry, texts);
        let def = m.def(entry).expect("entry");
        match semantics::eval_def(m, def, &a) {
            Ok(_) => {
                agree(m, &built, entry, &a).unwrap_or_else(|e| panic!("{entry} {texts:?}: {e}"));
            }
            Err(want) => match codegen::run(&built, entry, &a) {
                Err(codegen::Error::Eval(got)) => assert_eq!(got, want, "{entry} {texts:?}"),
                other => panic!("{entry} {texts:?}: evaluator {want:?}, C backend {other:?}"),
            },
        }
    }
}

#[test]
fn an_index_below_the_arrays_length_is_not_checked() {
    let m = module("loop_passes.ad", PROGRAMS);
    let c = codegen::emit(&m, &Config::default()).expect("emits");
    assert_eq!(
        loops_and_checks(&c.source, "argmax"),
        (1, 0),
        "{}",
        c.source
    );
    // `I[i + 1]` can be out of bounds: its check stays.
    assert_eq!(loops_and_checks(&c.source, "shifted").1, 1, "{}", c.source);
    same_as_evaluator(
        &m,
        "loop-passes-bounds",
        &[
            ("argmax", &["[1, 5, 2, 5, -3]"]),
            ("argmax", &["[]"]),
            ("shifted", &["[1]", "[1, 2, 3]"]),
        ],
    );
}

#[test]
fn a_histograms_delayed_dest_is_written_into_its_result() {
    let m = target_module("hist.ad", HIST);
    let c = codegen::emit(&m, &Config::default()).expect("emits");
    // The map into the result, then the elements: one buffer (the map's
    // own and its copy were two, in one loop once fused).
    let allocs = c.source.matches("ad_alloc(ctx").count();
    assert_eq!(allocs, 1, "{}", c.source);
    assert_eq!(loops_and_checks(&c.source, "scaled").0, 2, "{}", c.source);
    same_as_evaluator(
        &m,
        "loop-passes-hist",
        &[
            (
                "scaled",
                &["[1, 2, 3]", "[0, 2, 7, -1, 2]", "[0.5, 1, 2, 3, 4]"],
            ),
            ("scaled", &["[]", "[0]", "[1]"]),
            ("scaled", &["[1, 2]", "[0, 1]", "[1]"]),
        ],
    );
}

const MAX_AND_ARGMAX: &str = r#"
def maxarg (A : [n]R) : (R, Int) =
  (reduce max A[0] A,
   (ifold (fun (st : (R, Int), i : Int) ->
     let (w, j) = st in
     if w > A[i] then st else (A[i], i)) (A[0], 0 - 1) (length A)).2)

def maxsums (A : [n]R) (C : [m]R) : (R, [n]R) =
  (reduce max A[0] A, map (fun (a : R) -> reduce (+) 0 (map (fun (c : R) -> a * c) C)) A)
"#;

/// In the `reassociate` configuration the `reduce max` runs in four lanes
/// and a remainder; the argmax's loop over the same array is fused into
/// them (`imp/fuse_lanes.rs`): every loop of the function then starts
/// from the lanes' index, none from 0, and the values are the
/// evaluator's (the argmax, ties to the last, exactly).
#[test]
fn a_loop_over_the_same_array_runs_in_the_lanes_of_a_reduction() {
    let m = module("max_argmax.ad", MAX_AND_ARGMAX);
    let cfg = Config {
        reassociate: true,
        ..Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emits");
    // The loops of a function's C that start from 0.
    let from_zero = |head: &str| {
        c.source
            .lines()
            .skip_while(|l| !l.starts_with(head))
            .take_while(|l| *l != "}")
            .filter(|l| l.trim_start().starts_with("for (int64_t") && l.contains(" = 0;"))
            .count()
    };
    assert_eq!(from_zero("int adrev_maxarg("), 0, "{}", c.source);
    // A loop that holds a loop of its own is not fused in: it would be
    // written twice, in the lanes and after them (gmm's objective).
    assert!(from_zero("int adrev_maxsums(") > 0, "{}", c.source);
    let built = common::build(&m, &cfg, "loop-passes-lanes");
    for text in [
        "[1, 5, 2, 5, -3, 7, 7, 0, 1]",
        "[3]",
        "[2, 1, 0, -1, -2]",
        "[0, 1, 2, 3, 4, 5, 6, 7]",
        "[]",
    ] {
        let a = args(&m, "maxarg", &[text]);
        let def = m.def("maxarg").expect("entry");
        match semantics::eval_def(&m, def, &a) {
            Ok(want) => {
                let got = codegen::run(&built, "maxarg", &a).expect("runs");
                assert_eq!(got.to_string(), want.to_string(), "{text}");
            }
            Err(want) => match codegen::run(&built, "maxarg", &a) {
                Err(codegen::Error::Eval(got)) => assert_eq!(got, want, "{text}"),
                other => panic!("{text}: evaluator {want:?}, C backend {other:?}"),
            },
        }
    }
    // The values of a reduction beside a map of vector reductions.
    let a = args(&m, "maxsums", &["[1, 2, 3, 4, 5, 6]", "[0.5, 0.25]"]);
    let got = codegen::run(&built, "maxsums", &a).expect("runs");
    assert_eq!(got.to_string(), "(6, [0.75, 1.5, 2.25, 3, 3.75, 4.5])");
}
