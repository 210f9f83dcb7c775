//! Checking values against types: array sizes, size variables, and the
//! wording of what was expected.
//!
//! A [`SizeEnv`] records the length each size variable stands for. The
//! first array met for `[n]T` binds `n`; every later `[n]T`, `[n+1]T`, ...
//! in the same call (the same value, or another input of the same entry)
//! must agree, and a disagreement names the input that bound the variable.
//! `Size::Dyn` accepts any length.
//!
//! [`ValueError`] is the error of reading or checking one value; it knows
//! nothing of program text (the evaluator wraps it with the span of the
//! parameter it is about).

use std::collections::BTreeMap;

use syntax::{Name, Size, Ty};

/// A value (or the text of one) that is not of the expected type.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// Text that is not in the literal syntax, or a literal of another
    /// type or size than expected, at a 1-based column of the text.
    #[error("column {column}: {message}")]
    Text {
        /// 1-based column (in characters) where the problem starts.
        column: usize,
        /// What was expected and found, lowercase, no trailing period.
        message: String,
    },
    /// A value that does not have the expected type.
    #[error("{}{message}", at_path(path))]
    Value {
        /// Where inside the value, in projection/index syntax (`.2[3]`);
        /// empty for the value itself.
        path: String,
        /// What was expected and found.
        message: String,
    },
}

fn at_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("at {path}: ")
    }
}

/// The lengths bound to size variables during one call (see the module doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeEnv {
    bound: BTreeMap<Name, Binding>,
}

#[derive(Debug, Clone, PartialEq)]
struct Binding {
    value: u64,
    /// The input whose array bound the variable, if known.
    origin: Option<String>,
}

impl SizeEnv {
    /// No variable bound yet.
    pub fn new() -> SizeEnv {
        SizeEnv::default()
    }

    /// The length bound to a size variable so far.
    pub fn get(&self, name: &Name) -> Option<u64> {
        self.bound.get(name).map(|b| b.value)
    }

    /// Checks that an array of `len` elements fits `size`, binding the
    /// size variable if this is its first occurrence. `elem` is the element
    /// type (for the message) and `origin` the input being checked. On
    /// mismatch, returns the message "expected an array of ..., found ...".
    /// Public so that readers of other formats (the `data` crate's dense
    /// arrays) bind sizes with these rules rather than a copy of them.
    pub fn check_len(
        &mut self,
        size: &Size,
        elem: &Ty,
        len: usize,
        origin: Option<&str>,
    ) -> Result<(), String> {
        let len64 = len as u64;
        match size {
            Size::Dyn => Ok(()),
            Size::Lit(k) if *k == len64 => Ok(()),
            Size::Lit(k) => Err(format!(
                "expected an array of {k} {}, found {}",
                noun(elem, *k),
                elements(len)
            )),
            Size::Var(name, offset) => match self.bound.get(name) {
                Some(b) => {
                    let want = b.value as i128 + *offset as i128;
                    if want == len as i128 {
                        return Ok(());
                    }
                    let from = match &b.origin {
                        Some(o) => format!(", as in `{o}`"),
                        None => String::new(),
                    };
                    let how = if *offset == 0 {
                        format!("{name} = {}{from}", b.value)
                    } else {
                        format!("{} with {name} = {}{from}", size_text(size), b.value)
                    };
                    Err(format!(
                        "expected an array of {want} {} ({how}), found {}",
                        noun(elem, want.max(0) as u64),
                        elements(len)
                    ))
                }
                None => {
                    let value = len as i128 - *offset as i128;
                    if value < 0 {
                        let least = offset.unsigned_abs();
                        return Err(format!(
                            "expected an array of at least {least} {} ({}), found {}",
                            noun(elem, least),
                            size_text(size),
                            elements(len)
                        ));
                    }
                    self.bound.insert(
                        name.clone(),
                        Binding {
                            value: value as u64,
                            origin: origin.map(str::to_string),
                        },
                    );
                    Ok(())
                }
            },
        }
    }
}

/// `3 elements`, `1 element`.
fn elements(len: usize) -> String {
    if len == 1 {
        "1 element".to_string()
    } else {
        format!("{len} elements")
    }
}

/// A size as written in a type: `4`, `n`, `n+1`, `n-1`, `_`.
pub(crate) fn size_text(size: &Size) -> String {
    match size {
        Size::Lit(k) => k.to_string(),
        Size::Var(name, 0) => name.to_string(),
        Size::Var(name, k) if *k > 0 => format!("{name}+{k}"),
        Size::Var(name, k) => format!("{name}{k}"),
        Size::Dyn => "_".to_string(),
    }
}

/// The noun for `count` elements of type `ty`: `real`/`reals`, `arrays`, ...
fn noun(ty: &Ty, count: u64) -> &'static str {
    let one = count == 1;
    match ty {
        Ty::Real if one => "real",
        Ty::Real => "reals",
        Ty::Int if one => "integer",
        Ty::Int => "integers",
        Ty::Bool if one => "boolean",
        Ty::Bool => "booleans",
        Ty::Array(..) if one => "array",
        Ty::Array(..) => "arrays",
        Ty::Tuple(items) if items.is_empty() && one => "unit value",
        Ty::Tuple(items) if items.is_empty() => "unit values",
        Ty::Tuple(_) if one => "tuple",
        Ty::Tuple(_) => "tuples",
        Ty::Func(..) if one => "function",
        Ty::Func(..) => "functions",
    }
}

/// What a value of type `ty` is called in messages: `a real`,
/// `an array of n reals`, `a pair`, `a 3-tuple`.
pub fn describe(ty: &Ty) -> String {
    match ty {
        Ty::Real => "a real".to_string(),
        Ty::Int => "an integer".to_string(),
        Ty::Bool => "a boolean".to_string(),
        Ty::Array(Size::Dyn, elem) => format!("an array of {}", noun(elem, 2)),
        Ty::Array(Size::Lit(k), elem) => format!("an array of {k} {}", noun(elem, *k)),
        Ty::Array(size, elem) => format!("an array of {} {}", size_text(size), noun(elem, 2)),
        Ty::Tuple(items) => match items.len() {
            0 => "the unit value `()`".to_string(),
            2 => "a pair".to_string(),
            k => format!("a {k}-tuple"),
        },
        Ty::Func(..) => "a function".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(size: Size) -> Ty {
        Ty::array(size, Ty::Real)
    }

    #[test]
    fn literal_sizes_must_match() {
        let mut env = SizeEnv::new();
        assert!(env.check_len(&Size::Lit(4), &Ty::Real, 4, None).is_ok());
        let msg = env
            .check_len(&Size::Lit(4), &Ty::Real, 3, None)
            .expect_err("3 is not 4");
        assert_eq!(msg, "expected an array of 4 reals, found 3 elements");
    }

    #[test]
    fn variables_bind_once_and_name_their_origin() {
        let mut env = SizeEnv::new();
        let n = Name::new("n");
        env.check_len(&Size::Var(n.clone(), 0), &Ty::Real, 4, Some("A"))
            .expect("first binding");
        assert_eq!(env.get(&n), Some(4));
        assert!(
            env.check_len(&Size::Var(n.clone(), 1), &Ty::Real, 5, Some("B"))
                .is_ok()
        );
        let msg = env
            .check_len(&Size::Var(n.clone(), 0), &Ty::Real, 3, Some("B"))
            .expect_err("3 is not 4");
        assert_eq!(
            msg,
            "expected an array of 4 reals (n = 4, as in `A`), found 3 elements"
        );
    }

    #[test]
    fn offsets_bind_the_variable_below_the_length() {
        let mut env = SizeEnv::new();
        let n = Name::new("n");
        env.check_len(&Size::Var(n.clone(), 1), &Ty::Real, 5, None)
            .expect("n = 4");
        assert_eq!(env.get(&n), Some(4));
        let mut env = SizeEnv::new();
        let msg = env
            .check_len(&Size::Var(n, 1), &Ty::Real, 0, None)
            .expect_err("n would be -1");
        assert_eq!(
            msg,
            "expected an array of at least 1 real (n+1), found 0 elements"
        );
    }

    #[test]
    fn descriptions() {
        assert_eq!(describe(&arr(Size::Lit(4))), "an array of 4 reals");
        assert_eq!(
            describe(&arr(Size::Var(Name::new("n"), -1))),
            "an array of n-1 reals"
        );
        assert_eq!(describe(&arr(Size::Dyn)), "an array of reals");
        assert_eq!(describe(&Ty::Tuple(vec![Ty::Real, Ty::Int])), "a pair");
        assert_eq!(describe(&Ty::Tuple(vec![])), "the unit value `()`");
    }
}
