//! Expectation comments of example and fixture files (language.md,
//! "Expectation comments"):
//!
//! ```text
//! -- at x1 = 2            an input of the entry definition
//! -- value = 12           the entry's value at those inputs
//! -- grad x1 = 12         the gradient with respect to one parameter
//! ```
//!
//! Only comment lines before the first `def` count; a comment line of
//! another shape is prose. The values are kept as text and typed against
//! the entry's parameter and result types when they are used
//! ([`Expectations::inputs`], [`Expectations::value`],
//! [`Expectations::grad`]), so that `3` can be a real or an integer.

use serde::{Deserialize, Serialize};
use syntax::{Def, Module, Span, Ty};

use crate::error::Error;
use crate::literal::parse_input;
use crate::shape::SizeEnv;
use crate::value::Value;

/// The facts a program file states about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// `-- at NAME = VALUE`: inputs of the entry, in the order written.
    pub at: Vec<(String, String)>,
    /// `-- value = VALUE`: the entry's value at those inputs.
    pub value: Option<String>,
    /// `-- grad NAME = VALUE`: the gradient with respect to each parameter named.
    pub grads: Vec<(String, String)>,
}

impl Expectations {
    /// Reads the expectation comments of a program's text. Never fails:
    /// a line that is not of one of the three shapes is prose. If `value`
    /// is stated twice, the last one counts.
    pub fn parse(text: &str) -> Expectations {
        let mut out = Expectations::default();
        for line in text.lines() {
            let line = line.trim();
            if keyword(line, "def").is_some() {
                break;
            }
            let Some(comment) = line.strip_prefix("--") else {
                continue;
            };
            let comment = comment.trim();
            if let Some((name, value)) = named_fact(comment, "at") {
                out.at.push((name, value));
            } else if let Some((name, value)) = named_fact(comment, "grad") {
                out.grads.push((name, value));
            } else if let Some(rest) = keyword(comment, "value")
                && let Some(value) = rest.strip_prefix('=')
                && !value.trim().is_empty()
            {
                out.value = Some(value.trim().to_string());
            }
        }
        out
    }

    /// The `at` inputs typed against the parameters of `def`, by name,
    /// with size variables bound consistently across them. Names that are
    /// no parameter, and missing or repeated inputs, are left for
    /// `eval_entry` to report.
    pub fn inputs(&self, def: &Def) -> Result<Vec<(String, Value)>, Error> {
        let mut sizes = SizeEnv::new();
        self.at
            .iter()
            .map(|(name, text)| {
                let value = read(def, name, text, &mut sizes)?;
                Ok((name.clone(), value))
            })
            .collect()
    }

    /// The expected value, typed against the result type of `def` (or, if
    /// none is declared, the inferred type of its body in `m`).
    pub fn value(&self, m: &Module, def: &Def) -> Option<Result<Value, Error>> {
        let text = self.value.as_ref()?;
        let ty = def.ret.as_ref().or_else(|| m.ty(def.body));
        let Some(ty) = ty else {
            return Some(Err(Error::Internal {
                span: def.name_span,
                message: format!("the result type of `{}` is not known", def.name),
            }));
        };
        Some(
            parse_input(text, ty, &mut SizeEnv::new(), None).map_err(|source| Error::Input {
                span: def.name_span,
                name: "value".to_string(),
                source,
            }),
        )
    }

    /// The expected gradient with respect to parameter `name`, typed as
    /// that parameter (sizes consistent with the `at` inputs).
    pub fn grad(&self, def: &Def, name: &str) -> Option<Result<Value, Error>> {
        let (_, text) = self.grads.iter().find(|(n, _)| n == name)?;
        let mut sizes = SizeEnv::new();
        for (at_name, at_text) in &self.at {
            if let Err(e) = read(def, at_name, at_text, &mut sizes) {
                return Some(Err(e));
            }
        }
        Some(read(def, name, text, &mut sizes))
    }
}

/// Reads `text` as the value of parameter `name` of `def`.
fn read(def: &Def, name: &str, text: &str, sizes: &mut SizeEnv) -> Result<Value, Error> {
    let param = def.params.iter().find(|p| p.name.as_str() == name);
    let Some(param) = param else {
        return Err(Error::UnknownInput {
            span: def.name_span,
            def: def.name.to_string(),
            name: name.to_string(),
        });
    };
    let ty: &Ty = param.ty.as_ref().ok_or_else(|| Error::Internal {
        span: param.span,
        message: format!("parameter `{name}` has no type"),
    })?;
    parse_input(text, ty, sizes, Some(name)).map_err(|source| Error::Input {
        span: if param.span == Span::default() {
            def.name_span
        } else {
            param.span
        },
        name: name.to_string(),
        source,
    })
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

/// `rest` if `text` is `word` followed by something that is not part of an identifier.
fn keyword<'t>(text: &'t str, word: &str) -> Option<&'t str> {
    let rest = text.strip_prefix(word)?;
    if rest.starts_with(is_ident_char) {
        return None;
    }
    Some(rest.trim_start())
}

/// `KEYWORD NAME = VALUE` → `(NAME, VALUE)`.
fn named_fact(text: &str, word: &str) -> Option<(String, String)> {
    let rest = keyword(text, word)?;
    let (name, value) = rest.split_once('=')?;
    let name = name.trim();
    let value = value.trim();
    let mut chars = name.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(is_ident_char);
    (ident && !value.is_empty()).then(|| (name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_before_the_first_def() {
        let text = "-- seeds/000, Example 1.1: a term at x = 2 is prose.\n\
                    -- at x1 = 2\n\
                    --at A = [1, 2]\n\
                    -- value = 12\n\
                    -- grad x1 = 12\n\
                    -- grad A = [0.5, 1]\n\
                    -- at every point the answer is 2\n\
                    -- valued = 3\n\
                    def f (x1 : R) (A : [n]R) : R =\n\
                    -- at y = 3\n\
                      x1\n";
        let e = Expectations::parse(text);
        assert_eq!(
            e.at,
            vec![
                ("x1".to_string(), "2".to_string()),
                ("A".to_string(), "[1, 2]".to_string())
            ]
        );
        assert_eq!(e.value.as_deref(), Some("12"));
        assert_eq!(
            e.grads,
            vec![
                ("x1".to_string(), "12".to_string()),
                ("A".to_string(), "[0.5, 1]".to_string())
            ]
        );
    }

    #[test]
    fn no_facts() {
        assert_eq!(
            Expectations::parse("def f : R = 1\n"),
            Expectations::default()
        );
        assert_eq!(
            Expectations::parse("-- definitely prose\n-- value\ndefine\n"),
            Expectations::default()
        );
    }
}

#[cfg(test)]
mod typed_tests {
    use super::*;
    use syntax::{ExprId, Name, Param, Size};

    fn param(name: &str, ty: Ty) -> Param {
        Param {
            name: Name::new(name),
            ty: Some(ty),
            span: Span::new(1, 2),
        }
    }

    fn dot_def() -> Def {
        let n = || Size::Var(Name::new("n"), 0);
        Def {
            name: Name::new("dot_"),
            name_span: Span::new(0, 1),
            params: vec![param("A", Ty::array(n(), Ty::Real)), param("k", Ty::Int)],
            ret: Some(Ty::Real),
            body: ExprId(0),
        }
    }

    #[test]
    fn values_are_typed_at_use() {
        let e = Expectations::parse(
            "-- at A = [1, 2]\n-- at k = 3\n-- value = 70\n-- grad A = [5, 6]\ndef x = 1\n",
        );
        let def = dot_def();
        let inputs = e.inputs(&def).expect("the inputs read");
        assert_eq!(
            inputs,
            vec![
                ("A".to_string(), Value::reals(&[1.0, 2.0])),
                ("k".to_string(), Value::Int(3))
            ]
        );
        let m = Module::default();
        assert_eq!(e.value(&m, &def), Some(Ok(Value::Real(70.0))));
        assert_eq!(e.grad(&def, "A"), Some(Ok(Value::reals(&[5.0, 6.0]))));
        assert_eq!(e.grad(&def, "k"), None);
    }

    #[test]
    fn a_gradient_of_another_size_than_its_input() {
        let e = Expectations::parse("-- at A = [1, 2]\n-- grad A = [5, 6, 7]\n");
        let err = e
            .grad(&dot_def(), "A")
            .expect("stated")
            .expect_err("3 elements where A has 2");
        assert_eq!(
            err.to_string(),
            "input `A`: column 1: expected an array of 2 reals (n = 2, as in `A`), found 3 elements"
        );
    }

    #[test]
    fn unknown_names_and_bad_text() {
        let def = dot_def();
        let e = Expectations::parse("-- at B = 1\n");
        assert_eq!(
            e.inputs(&def).expect_err("B is no parameter").to_string(),
            "`dot_` has no parameter `B`"
        );
        let e = Expectations::parse("-- at k = 2.5\n");
        assert_eq!(
            e.inputs(&def).expect_err("k is an Int").to_string(),
            "input `k`: column 1: expected an integer, found `2.5`"
        );
    }
}
