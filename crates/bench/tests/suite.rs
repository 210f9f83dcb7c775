//! The benchmark harness's tests, one binary.

mod kernels;
