//! Checking the inputs of one call together: every parameter's type, and
//! size variables bound consistently across parameters (`semantics`'
//! [`SizeEnv`], the same rules and messages as `--at` text).

use semantics::SizeEnv;
use syntax::Ty;

use crate::dense::Data;
use crate::error::DataError;

/// One input of a call: the parameter's name and type, the data, and the
/// file it came from (for messages).
#[derive(Debug, Clone, Copy)]
pub struct Arg<'x, 'd> {
    /// The parameter's name.
    pub name: &'x str,
    /// The parameter's type.
    pub ty: &'x Ty,
    /// The input.
    pub data: &'x Data<'d>,
    /// The file it was read from, if any.
    pub from: Option<&'x str>,
}

/// Checks the inputs of one call in order, sharing one [`SizeEnv`]; the
/// first disagreement names its parameter, where inside the value it is,
/// what was expected and what was found, and which parameter bound the
/// size. Returns the sizes bound. Which names are known, missing or
/// repeated is the caller's business (it knows the entry).
pub fn check_args(args: &[Arg<'_, '_>]) -> Result<SizeEnv, DataError> {
    let mut sizes = SizeEnv::new();
    for a in args {
        a.data
            .check(a.ty, &mut sizes, Some(a.name))
            .map_err(|source| DataError::Input {
                name: a.name.to_string(),
                from: a.from.map(str::to_string),
                source,
            })?;
    }
    Ok(sizes)
}
