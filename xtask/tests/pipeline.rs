//! `pipeline` writes every boundary file; replacing a stage by an external
//! program that runs the built-in stage in another process gives identical
//! files; a replacement that writes garbage is caught by the verifier;
//! `check` says what each boundary file holds.

use crate::common;

use common::xtask;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("adrev-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const FILES: [&str; 4] = [
    "10.source.ron",
    "20.source-unf.ron",
    "30.target-unf.ron",
    "40.target.ron",
];

#[test]
fn replacing_a_stage_by_the_same_stage_in_another_process_changes_nothing() {
    let (a, b) = (temp_dir("builtin"), temp_dir("replaced"));
    let run = xtask(&[
        "pipeline",
        "fixtures/dot/program.ad",
        "--dump",
        a.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let replacement = format!("reverse={} stage reverse", env!("CARGO_BIN_EXE_xtask"));
    let run = xtask(&[
        "pipeline",
        "fixtures/dot/program.ad",
        "--dump",
        b.to_str().expect("utf-8 path"),
        "--replace",
        &replacement,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for f in FILES {
        let x = std::fs::read(a.join(f)).expect("built-in output exists");
        let y = std::fs::read(b.join(f)).expect("replaced output exists");
        assert!(!x.is_empty());
        assert_eq!(x, y, "{f} differs");
    }
}

#[test]
fn a_replacement_that_writes_another_ir_is_refused() {
    let dir = temp_dir("bad-replacement");
    // `stage unf` writes Source UNF where reverse must write Target UNF.
    let replacement = format!("reverse={} stage unf", env!("CARGO_BIN_EXE_xtask"));
    let run = xtask(&[
        "pipeline",
        "fixtures/dot/program.ad",
        "--dump",
        dir.to_str().expect("utf-8 path"),
        "--replace",
        &replacement,
    ]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("replacement of stage `reverse`"),
        "{}",
        run.stderr
    );
}

#[test]
fn every_boundary_evaluates_like_the_source_program() {
    let dir = temp_dir("boundaries");
    let run = xtask(&[
        "pipeline",
        "fixtures/dot/program.ad",
        "--dump",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let at = ["--at", "A=[1, 2, 3, 4]", "--at", "B=[5, 6, 7, 8]"];
    let value = |file: &str| {
        let path = dir.join(file);
        let mut args = vec!["eval", path.to_str().expect("utf-8 path")];
        args.extend(at);
        let run = xtask(&args);
        assert_eq!(run.code, Some(0), "{file}: {}", run.stderr);
        run.stdout.trim().to_string()
    };
    assert_eq!(value("10.source.ron"), "70");
    assert_eq!(value("20.source-unf.ron"), "70");
    // The Target UNF and Target programs compute the value and the gradient.
    assert_eq!(
        value("30.target-unf.ron"),
        "(70, [5, 6, 7, 8], [1, 2, 3, 4])"
    );
    assert_eq!(value("40.target.ron"), "(70, [5, 6, 7, 8], [1, 2, 3, 4])");
}

#[test]
fn check_says_what_every_boundary_file_holds() {
    let sig = "def ex1_1 (x1 : R) (x2 : R) (x3 : R) : R";
    let expected = [
        ("10.source.ron", sig.to_string()),
        ("20.source-unf.ron", format!("source-unf: {sig}")),
        (
            "30.target-unf.ron",
            format!("target-unf: {sig}, differentiated with respect to x1, x2, x3"),
        ),
        (
            "40.target.ron",
            "def ex1_1_grad (x1 : R) (x2 : R) (x3 : R) : (R, R, R, R)".to_string(),
        ),
    ];
    for (file, line) in expected {
        let run = xtask(&["check", &format!("fixtures/ex1_1/{file}")]);
        assert_eq!(run.code, Some(0), "{file}: {}", run.stderr);
        assert_eq!(run.stdout.trim(), line, "{file}");
    }
    let run = xtask(&["check", "fixtures/ex1_1/30.target-unf.ron", "--entry", "g"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("a UNF file holds one definition, `ex1_1`"),
        "{}",
        run.stderr
    );
}

/// The `forward` stage on a program whose `grad_rev` reads an array inside
/// a loop: reverse mode's output (a scatter-add, whose transpose is the
/// Target primitive `gather`) is spliced in by expansion, and the stage's
/// verification accepts it; the written file evaluates to the exact
/// directional derivative (d/da0 of sum (grad f a) = 6 a0 = 6 at a0 = 1).
#[test]
fn the_forward_stage_takes_reverse_mode_spliced_in_by_grad_rev() {
    let file = common::write_program(
        "forward-stage-grad-rev.ad",
        "def f (a : [3]R) : R = sum (map (fun i -> a[i] * a[i] * a[i]) [0, 2])\n\
         def main (a : [3]R) : R = sum (grad_rev f a)\n",
    );
    let out = format!("{file}.forward.ron");
    let run = xtask(&["forward", &file, "-o", &out]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let run = xtask(&["eval", &out, "--at", "a=[1, 2, 3]", "--at", "da=[1, 0, 0]"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.trim_end(), "(30, 6)", "{}", run.stderr);
}
