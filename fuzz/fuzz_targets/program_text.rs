//! cargo-fuzz target `program_text`: the body is `fuzzing::program_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::program_text(data));
