//! `data`: values in and out at scale.
//!
//! In: NumPy `.npy` / `.npz` files, JSON, the literal syntax in a file;
//! the parameter types of an entry (`syntax::Ty`). Out: [`Data`] typed by
//! those types (dense buffers wherever the type is arrays of a scalar),
//! checked across parameters with the evaluator's size rules
//! ([`check_args`]), and results written as JSON or `.npz`.
//! docs/data.md describes the mappings.
//!
//! - `dense.rs`: [`Dense`] (a shape and one flat f64/i64/bool buffer,
//!   owned or borrowed), [`Data`], conversions to and from
//!   `semantics::Value`, checking against a type;
//! - `npy.rs`: `.npy` / `.npz` with `npyz` and `zip`;
//! - `json.rs`: JSON with `serde_json`;
//! - `files.rs`: files by extension, inputs files, results files;
//! - `args.rs`: the inputs of one call checked together.
//!
//! Invariants: nothing here panics on any file; every error names the
//! file or the parameter and says what is wrong; a declared size is never
//! allocated before the file is known to hold that much data.
//! This crate depends on `syntax` and `semantics` only (never on a
//! backend or the driver).

mod args;
mod dense;
mod error;
mod files;
mod json;
mod npy;

pub use args::{Arg, check_args};
pub use dense::{Buffer, Data, Dense, Dtype};
pub use error::DataError;
pub use files::{Format, InputFile, Output, npz_members, read_value_file, write_results};
pub use json::{Json, read_json, read_json_object, write_json, write_json_value};
pub use npy::{
    MAX_HEADER, read_npy, read_npy_bytes, read_npz, read_npz_bytes, write_npy, write_npy_to,
    write_npz_to,
};
