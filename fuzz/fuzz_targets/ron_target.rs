//! cargo-fuzz target `ron_target`: the body is `fuzzing::ron_target`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::ron_target(data));
