//! cargo-fuzz target `ron_source`: the body is `fuzzing::ron_source`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::ron_source(data));
