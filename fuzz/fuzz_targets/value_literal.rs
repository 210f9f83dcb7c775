//! cargo-fuzz target `value_literal`: the body is `fuzzing::value_literal`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::value_literal(data));
