//! The fixture runner (`testkit::runner`): one test per fixture and check,
//! `fixture::<name>::<check>`. Its own binary because it is a libtest-mimic
//! harness (`harness = false`); here because the command line's checks run
//! this crate's binary. See docs/testing.md, "The fixtures".

fn main() {
    testkit::runner::main(testkit::runner::Env {
        xtask: env!("CARGO_BIN_EXE_xtask").into(),
        scratch: env!("CARGO_TARGET_TMPDIR").into(),
    })
}
