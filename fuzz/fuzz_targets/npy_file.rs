//! cargo-fuzz target `npy_file`: the body is `fuzzing::npy_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::npy_file(data));
