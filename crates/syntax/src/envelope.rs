//! The RON envelope every IR file travels in (architecture.md, "The stage
//! contract"): the name of the IR, a format version, and the module.
//!
//! Each crate that defines an IR owns its name and version and calls these
//! helpers; xtask and the tests use the same ones, so a file written by one
//! is always readable by the other.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A RON file that could not be read as the IR that was asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvelopeError {
    /// The text is not RON, is truncated, or does not have the IR's shape.
    #[error("{line}:{col}: {message}")]
    Malformed {
        /// 1-based line in the RON text.
        line: usize,
        /// 1-based column in the RON text.
        col: usize,
        /// What the RON reader said.
        message: String,
    },
    /// A well-formed envelope of another IR.
    #[error("this file holds the `{found}` IR, but `{expected}` was expected")]
    WrongIr {
        /// The IR the reader wanted.
        expected: String,
        /// The IR the file says it holds.
        found: String,
    },
    /// A module nested more deeply than a RON file holds: the reader
    /// (this one's and RON's default) stops at 128 levels, so the writer
    /// refuses what could not be read back.
    #[error(
        "cannot be written as RON: it nests more than {limit} levels deep (an array literal or \
         type nested that deep), and RON files are read to {limit} levels"
    )]
    TooDeep {
        /// The levels of nesting a RON file may have.
        limit: usize,
    },
    /// The serializer failed otherwise (an internal error: the IR types are
    /// plain data).
    #[error("internal error: the module does not serialize as RON: {0}")]
    Unwritable(String),
    /// The right IR in a format version this build does not read.
    #[error("this file is `{ir}` format {found}, but this build reads format {expected}")]
    WrongVersion {
        /// The IR.
        ir: String,
        /// The version this build writes and reads.
        expected: u32,
        /// The version in the file.
        found: u32,
    },
}

#[derive(Serialize)]
struct EnvelopeOut<'a, T> {
    ir: &'a str,
    format: u32,
    module: &'a T,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvelopeIn<T> {
    #[allow(dead_code)]
    ir: String,
    #[allow(dead_code)]
    format: u32,
    module: T,
}

/// What a file says about itself, read without reading the module.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Header {
    /// The IR's name, for example `source`.
    pub ir: String,
    /// Its format version.
    pub format: u32,
}

fn malformed(err: ron::error::SpannedError) -> EnvelopeError {
    let message = match err.code {
        // The reader's own text advises raising its limit, which is advice
        // for the programmer calling it, not for the user of the file.
        ron::Error::ExceededRecursionLimit => {
            format!("nested too deeply: the reader stops at {RECURSION_LIMIT} levels of nesting")
        }
        code => code.to_string(),
    };
    EnvelopeError::Malformed {
        line: err.position.line,
        col: err.position.col,
        message,
    }
}

/// The levels of nesting RON's reader and writer take by default, which
/// are this module's: what one writes the other reads.
const RECURSION_LIMIT: usize = 128;

/// Writes `module` as the IR named `ir`, in pretty RON with `\n` newlines;
/// refuses a module nested more deeply than a reader takes.
pub fn to_ron<T: Serialize>(ir: &str, format: u32, module: &T) -> Result<String, EnvelopeError> {
    let config = ron::ser::PrettyConfig::new()
        .new_line("\n".to_string())
        .indentor("  ".to_string())
        .struct_names(false)
        // One line per node and per table entry: readable, and diffs of
        // blessed snapshots show which node changed.
        .depth_limit(3);
    let out = EnvelopeOut { ir, format, module };
    let options = ron::Options::default().with_recursion_limit(RECURSION_LIMIT);
    let mut text = options
        .to_string_pretty(&out, config)
        .map_err(|e| match e {
            ron::Error::ExceededRecursionLimit => EnvelopeError::TooDeep {
                limit: RECURSION_LIMIT,
            },
            // The IR types are plain data: maps with string keys, no
            // custom serializers; nothing else can fail.
            other => EnvelopeError::Unwritable(other.to_string()),
        })?;
    text.push('\n');
    Ok(text)
}

/// Reads the header of any envelope.
///
/// The envelopes this module writes start with `(ir: "NAME", format: N,`;
/// those are read from their first bytes, without parsing the module (a
/// RON reader would parse, and throw away, all of it: on a 100 MB file
/// that is seconds). Any other text goes through the RON reader, whose
/// error then says where it is malformed.
pub fn read_header(text: &str) -> Result<Header, EnvelopeError> {
    match quick_header(text) {
        Some(header) => Ok(header),
        None => ron::de::from_str::<Header>(text).map_err(malformed),
    }
}

/// The header of `(ir: "NAME", format: N, ...`, with any whitespace
/// between the tokens; `None` for anything else (comments, escapes in the
/// name, fields in another order), which the RON reader then handles.
fn quick_header(text: &str) -> Option<Header> {
    let rest = text.trim_start().strip_prefix('(')?;
    let rest = rest.trim_start().strip_prefix("ir")?;
    let rest = rest.trim_start().strip_prefix(':')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find(['"', '\\'])?;
    let (ir, rest) = rest.split_at(end);
    let rest = rest.strip_prefix('"')?;
    let rest = rest.trim_start().strip_prefix(',')?;
    let rest = rest.trim_start().strip_prefix("format")?;
    let rest = rest.trim_start().strip_prefix(':')?;
    let rest = rest.trim_start();
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let format = rest[..digits].parse().ok()?;
    rest[digits..].trim_start().strip_prefix(',')?;
    Some(Header {
        ir: ir.to_string(),
        format,
    })
}

/// Reads a file that must hold the IR named `ir` at version `format`.
pub fn from_ron<T: DeserializeOwned>(
    ir: &str,
    format: u32,
    text: &str,
) -> Result<T, EnvelopeError> {
    let header = read_header(text)?;
    if header.ir != ir {
        return Err(EnvelopeError::WrongIr {
            expected: ir.to_string(),
            found: header.ir,
        });
    }
    if header.format != format {
        return Err(EnvelopeError::WrongVersion {
            ir: ir.to_string(),
            expected: format,
            found: header.format,
        });
    }
    let env: EnvelopeIn<T> = ron::de::from_str(text).map_err(malformed)?;
    Ok(env.module)
}
