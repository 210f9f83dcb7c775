//! Helpers of the tests: the workspace's root and comparisons of values
//! (the fixture runner's, `testkit`).

pub use testkit::values::{close, reals};
pub use testkit::workspace;
