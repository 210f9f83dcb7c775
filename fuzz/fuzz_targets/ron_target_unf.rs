//! cargo-fuzz target `ron_target_unf`: the body is `fuzzing::ron_target_unf`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::ron_target_unf(data));
