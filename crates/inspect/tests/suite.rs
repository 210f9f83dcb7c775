//! The integration tests of `inspect`, one binary.
