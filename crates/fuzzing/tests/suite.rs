//! The integration tests of `fuzzing`, compiled as one binary.

mod corpus;
mod smoke;
