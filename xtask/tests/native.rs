//! `codegen` and `compile` from the command line: the files they write and
//! the build each option asks for (`--parallel`, `--fast`; the default
//! build computes the evaluator's bits).

use crate::common::{workspace, xtask};

#[test]
fn compile_writes_the_c_the_driver_and_the_library_with_the_flags_asked_for() {
    let dir = "target/tmp/native-default";
    let run = xtask(&["compile", "fixtures/dot/program.ad", "--grad", "-o", dir]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for file in ["program.c", "program.h", "program_driver", "libprogram.so"] {
        assert!(workspace().join(dir).join(file).is_file(), "no {file}");
    }
    let cc: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("$ ")).collect();
    // The program compiled once (-fPIC -c), linked into the driver and the library.
    assert_eq!(cc.len(), 3, "{}", run.stdout);
    assert!(
        cc.iter()
            .all(|l| !l.contains("-fopenmp") && !l.contains("-march=native"))
    );

    let dir = "target/tmp/native-fast";
    let run = xtask(&[
        "compile",
        "fixtures/dot/program.ad",
        "--grad",
        "--parallel",
        "--fast",
        "-o",
        dir,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for flag in ["-fopenmp", "-march=native", "-DAD_VECTOR_MATH"] {
        assert!(run.stdout.contains(flag), "no {flag} in\n{}", run.stdout);
    }
    let c = std::fs::read_to_string(workspace().join(dir).join("program.c")).expect("the C");
    assert!(c.contains("omp parallel"), "no parallel loop");
}

#[test]
fn codegen_writes_the_c_and_its_header() {
    let out = "target/tmp/native-codegen/dot.c";
    let run = xtask(&[
        "codegen",
        "fixtures/dot/50.opt.ron",
        "-o",
        out,
        "--parallel",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let c = std::fs::read_to_string(workspace().join(out)).expect("the C");
    assert!(c.contains("omp parallel"), "no parallel loop");
    assert!(
        workspace()
            .join("target/tmp/native-codegen/dot.h")
            .is_file()
    );
}

#[test]
fn codegen_writes_the_loop_ir_that_print_shows() {
    let dir = "target/tmp/native-codegen-imp";
    let (c, ir) = (format!("{dir}/gmm.c"), format!("{dir}/gmm.imp.ron"));
    let run = xtask(&[
        "codegen",
        "fixtures/gmm/50.opt.ron",
        "-o",
        &c,
        "--loop-ir",
        &ir,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let shown = xtask(&["print", &ir]);
    assert_eq!(shown.code, Some(0), "{}", shown.stderr);
    // The fixture runner's snapshot of the same program's loop IR.
    let want = std::fs::read_to_string(workspace().join("fixtures/gmm/65.grad.imp"))
        .expect("the snapshot");
    assert_eq!(shown.stdout, want);
}
