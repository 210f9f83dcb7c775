//! The library's errors, rendered (`adrev::diag`): the command line only
//! prints them and picks the exit status (1 for the user's, 2 for internal).

pub use adrev::diag::Error as CliError;
