//! cargo-fuzz target `ron_source_unf`: the body is `fuzzing::ron_source_unf`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::ron_source_unf(data));
