//! The generated code built with AddressSanitizer and
//! UndefinedBehaviorSanitizer (arena buffers poisoned outside their
//! allocations) runs a handful of programs, the run-time errors among
//! them, and the sanitizers find nothing: any report makes the driver exit
//! abnormally, which `codegen::run` turns into an internal error.

use crate::common;

use codegen::Config;
use common::{agree, agree_or_same_error, args, module};

const PROGRAMS: &str = r#"
def prod_grad (A : [n]R) : (R, [n]R) =
  let s = scanl (*) 1 A in
  let r = scanr (*) 1 (shift1L A) in
  (s[length A], map2 (*) r (shift1R s))

def lse_grad (A : [n]R) : (R, [n]R) =
  let e = map exp A in
  let s = reduce (+) 0 e in
  (log s, map (fun x -> x / s) e)

def nested (A : [n]R) (i : Int) : ([n]R, R) =
  let M = build (length A) (fun r -> map (fun y -> y * A[r]) (scanl (+) 0 (shift1L A))) in
  (M[i], reduce (+) 0 (map (fun row -> reduce (*) 1 row) M))

def vec_fold (A : [n]R) : [n+1][n]R =
  scanl (fun (acc, x) -> map2 (fun (a, b) -> a * x + b) acc A) (map (fun a -> 1) A) A

def shifted (A : [n]R) : [n-1]R =
  map2 (-) (shift1L (map (fun x -> x * x) A)) (shift1R A)

def ints (k : Int) : Int =
  ifold (fun (acc, i) -> acc * 3 + i) 1 k
"#;

#[test]
fn sanitizers_find_nothing() {
    let m = module("sanitize.ad", PROGRAMS);
    let cfg = Config {
        sanitize: true,
        ..Config::default()
    };
    let built = common::build(&m, &cfg, "sanitize");
    assert!(built.commands[0].contains("-fsanitize=address,undefined"));
    let ok: &[(&str, &[&str])] = &[
        ("prod_grad", &["[1, 2, 3, 4]"]),
        ("prod_grad", &["[0.5]"]),
        ("lse_grad", &["[0.5, 1.5, -1, 2]"]),
        ("lse_grad", &["[]"]),
        ("nested", &["[1, 2, 3]", "2"]),
        ("vec_fold", &["[1, 2, 3]"]),
        ("vec_fold", &["[]"]),
        ("shifted", &["[1, 2, 3, 4, 5]"]),
        ("shifted", &["[7]"]),
        ("ints", &["5"]),
    ];
    for (entry, texts) in ok {
        agree(&m, &built, entry, &args(&m, entry, texts))
            .unwrap_or_else(|e| panic!("{entry} {texts:?}: {e}"));
    }
    // Failures leave through the same paths without leaks or overruns.
    let failing: &[(&str, &[&str])] = &[
        ("nested", &["[1, 2, 3]", "3"]),
        ("ints", &["60"]),
        ("shifted", &["[]"]),
    ];
    for (entry, texts) in failing {
        agree_or_same_error(&m, &built, entry, &args(&m, entry, texts))
            .unwrap_or_else(|e| panic!("{entry} {texts:?}: {e}"));
        assert!(codegen::run(&built, entry, &args(&m, entry, texts)).is_err());
    }
}

#[test]
fn an_overrun_of_an_arena_buffer_is_caught() {
    // The oracle for the test above: the same build flags do report a
    // write past the end of an arena buffer. The hand-written C below uses
    // the runtime the generated code uses.
    let m = module(
        "overrun.ad",
        "def f (A : [n]R) : [n]R =\n  map (fun x -> x + 1) A\n",
    );
    let cfg = Config {
        sanitize: true,
        ..Config::default()
    };
    let mut c = codegen::emit(&m, &cfg).expect("emits");
    let marker = "    *out_l0 = ";
    let at = c.source.find(marker).expect("the result is written");
    let line_end = at + c.source[at..].find('\n').expect("a line");
    let ptr = c.source[at + marker.len()..line_end]
        .trim_end_matches(';')
        .to_string();
    c.source
        .insert_str(at, &format!("    ((double *){ptr})[p0_d0] = 0;\n"));
    let built = codegen::build(&c, &common::dir("overrun"), &cfg).expect("builds");
    let res = codegen::run(&built, "f", &args(&m, "f", &["[1, 2, 3]"]));
    match res {
        Err(codegen::Error::Internal { message, .. }) => {
            assert!(message.contains("AddressSanitizer"), "{message}");
        }
        other => panic!("the overrun went unnoticed: {other:?}"),
    }
}
