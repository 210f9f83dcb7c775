//! cargo-fuzz target `json_value`: the body is `fuzzing::json_value`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::json_value(data));
