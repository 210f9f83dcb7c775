//! cargo-fuzz target `gradbench_protocol`: the body is `fuzzing::gradbench_protocol`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::gradbench_protocol(data));
