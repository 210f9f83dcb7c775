//! Files of inputs and results, dispatched on their extension: `.npy` (one
//! array), `.npz` (named arrays), `.json` (one value, or an object of
//! named values); any other file given for one value is read as the
//! literal syntax of `--at` text.
//!
//! A tuple (or a tuple inside tuples) in an `.npz` is one member per
//! component, named with the projection path of the language: `x.1`,
//! `x.2`, `x.2.1` (1-based, as in error messages). Arrays of tuples have
//! no NumPy form (use JSON).

use std::path::Path;

use semantics::SizeEnv;
use syntax::Ty;

use crate::dense::{Data, Dense};
use crate::error::DataError;
use crate::json::{Json, read_json, read_json_object, write_json};
use crate::npy::{read_npy, read_npz, write_npz_to};

fn read_bytes(path: &Path) -> Result<Vec<u8>, DataError> {
    std::fs::read(path).map_err(|e| DataError::io("read", path, e))
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Reads the file of one input (`--at NAME=@FILE`) as data of type `ty`
/// for parameter `name`. Sizes are not checked across parameters here
/// (see [`crate::check_args`]).
pub fn read_value_file(path: &Path, name: &str, ty: &Ty) -> Result<Data<'static>, DataError> {
    let file = path.display().to_string();
    let input = |source| DataError::Input {
        name: name.to_string(),
        from: Some(file.clone()),
        source,
    };
    match extension(path).as_str() {
        "npy" => Ok(Data::Dense(read_npy(path)?)),
        "npz" => Err(DataError::file(
            &file,
            "an .npz holds several named arrays: give it with --inputs",
        )),
        "json" => read_json(&read_bytes(path)?, &file)?
            .to_data(ty)
            .map_err(input),
        _ => {
            let bytes = read_bytes(path)?;
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| DataError::file(&file, "not UTF-8 text"))?;
            let v = semantics::parse_value(text, ty).map_err(input)?;
            Ok(Data::from_value(&v, ty, &SizeEnv::new()))
        }
    }
}

/// An inputs file (`--inputs FILE`): named values from a `.json` object
/// or the arrays of an `.npz`, taken out by parameter name and type.
#[derive(Debug, Clone)]
pub struct InputFile {
    file: String,
    entries: Vec<(String, Entry)>,
}

#[derive(Debug, Clone)]
enum Entry {
    Json(Json),
    Dense(Dense<'static>),
}

impl InputFile {
    /// Reads `path` (`.json` or `.npz`).
    pub fn read(path: &Path) -> Result<InputFile, DataError> {
        let file = path.display().to_string();
        let entries = match extension(path).as_str() {
            "json" => read_json_object(&read_bytes(path)?, &file)?
                .into_iter()
                .map(|(n, j)| (n, Entry::Json(j)))
                .collect(),
            "npz" => read_npz(path)?
                .into_iter()
                .map(|(n, d)| (n, Entry::Dense(d)))
                .collect(),
            other => {
                return Err(DataError::file(
                    &file,
                    format!("an inputs file is .json or .npz, not `.{other}`"),
                ));
            }
        };
        Ok(InputFile { file, entries })
    }

    /// A JSON object of named values given as bytes; `file` names them.
    pub fn from_json(bytes: &[u8], file: &str) -> Result<InputFile, DataError> {
        Ok(InputFile {
            file: file.to_string(),
            entries: read_json_object(bytes, file)?
                .into_iter()
                .map(|(n, j)| (n, Entry::Json(j)))
                .collect(),
        })
    }

    /// Named arrays (an `.npz`'s, already read); `file` names them.
    pub fn from_arrays(arrays: Vec<(String, Dense<'static>)>, file: &str) -> InputFile {
        InputFile {
            file: file.to_string(),
            entries: arrays
                .into_iter()
                .map(|(n, d)| (n, Entry::Dense(d)))
                .collect(),
        }
    }

    /// The file's name, for messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The names not taken yet (an `.npz` tuple's members `x.1`, `x.2`
    /// count as `x`), in the file's order: after taking every parameter,
    /// these are the unknown names.
    pub fn names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (n, _) in &self.entries {
            let base = n.split('.').next().unwrap_or(n);
            if !out.contains(&base) {
                out.push(base);
            }
        }
        out
    }

    /// Takes the input for parameter `name` of type `ty`, if the file has
    /// it: `Ok(None)` if it does not, an error if it does not fit the type.
    pub fn take(&mut self, name: &str, ty: &Ty) -> Result<Option<Data<'static>>, DataError> {
        let input = |source| DataError::Input {
            name: name.to_string(),
            from: Some(self.file.clone()),
            source,
        };
        if let Some(pos) = self.entries.iter().position(|(n, _)| n == name) {
            let (_, entry) = self.entries.remove(pos);
            return match entry {
                Entry::Json(j) => j.to_data(ty).map(Some).map_err(input),
                Entry::Dense(d) => Ok(Some(Data::Dense(d))),
            };
        }
        // An .npz tuple: one member per component.
        let Ty::Tuple(tys) = ty else {
            return Ok(None);
        };
        let dotted = format!("{name}.");
        if !self
            .entries
            .iter()
            .any(|(n, e)| matches!(e, Entry::Dense(_)) && n.starts_with(&dotted))
        {
            return Ok(None);
        }
        let mut items = Vec::with_capacity(tys.len());
        for (i, t) in tys.iter().enumerate() {
            let member = format!("{name}.{}", i + 1);
            match self.take(&member, t)? {
                Some(d) => items.push(d),
                None => {
                    return Err(DataError::file(
                        &self.file,
                        format!(
                            "`{name}` is a {}-tuple but the archive has no `{member}`",
                            tys.len()
                        ),
                    ));
                }
            }
        }
        Ok(Some(Data::Tuple(items)))
    }
}

/// The format of a results file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object of named values.
    Json,
    /// An `.npz` of named arrays (tuples as `name.1`, `name.2`, ...).
    Npz,
}

impl Format {
    /// The format a file's extension names (`.json`, `.npz`), if any.
    pub fn of_path(path: &Path) -> Option<Format> {
        match extension(path).as_str() {
            "json" => Some(Format::Json),
            "npz" => Some(Format::Npz),
            _ => None,
        }
    }
}

/// One named result with its type (the type decides the dense form of a
/// value; see [`Data::from_value`]).
#[derive(Debug, Clone, Copy)]
pub struct Output<'x, 'd> {
    /// Its name (`value`, a parameter's name for its gradient, ...).
    pub name: &'x str,
    /// Its type.
    pub ty: &'x Ty,
    /// The result.
    pub data: &'x Data<'d>,
}

/// The arrays an `.npz` holds for the results: one per dense part, tuples
/// split into `name.1`, `name.2`, ...; an error for arrays of tuples.
pub fn npz_members<'d>(outputs: &[Output<'_, 'd>]) -> Result<Vec<(String, Dense<'d>)>, DataError> {
    fn go<'d>(
        name: String,
        ty: &Ty,
        data: &Data<'d>,
        out: &mut Vec<(String, Dense<'d>)>,
    ) -> Result<(), DataError> {
        match (data, ty) {
            (Data::Dense(d), _) => {
                out.push((name, d.clone()));
                Ok(())
            }
            (Data::Tuple(items), Ty::Tuple(tys)) if items.len() == tys.len() => {
                for (i, (it, t)) in items.iter().zip(tys).enumerate() {
                    go(format!("{name}.{}", i + 1), t, it, out)?;
                }
                Ok(())
            }
            (Data::Value(v), _) => match Data::from_value(v, ty, &SizeEnv::new()) {
                Data::Value(_) => Err(DataError::Output {
                    name,
                    message: format!(
                        "a value of type {} has no NumPy form (arrays of tuples do not); write JSON",
                        syntax::print::ty(ty)
                    ),
                }),
                d => go(name, ty, &d, out),
            },
            (Data::Tuple(_), _) => Err(DataError::Output {
                name,
                message: format!("a tuple where {} was expected", syntax::print::ty(ty)),
            }),
        }
    }
    let mut out = Vec::new();
    for o in outputs {
        go(o.name.to_string(), o.ty, o.data, &mut out)?;
    }
    Ok(out)
}

/// Writes named results to `path` in `format`.
pub fn write_results(
    path: &Path,
    format: Format,
    outputs: &[Output<'_, '_>],
) -> Result<(), DataError> {
    let f = std::fs::File::create(path).map_err(|e| DataError::io("create", path, e))?;
    let mut w = std::io::BufWriter::new(f);
    let res = match format {
        Format::Json => {
            let named: Vec<(&str, &Data<'_>)> = outputs.iter().map(|o| (o.name, o.data)).collect();
            write_json(&mut w, &named)
        }
        Format::Npz => {
            let members = npz_members(outputs)?;
            write_npz_to(&mut w, &members)
        }
    };
    res.and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|e| DataError::io("write", path, e))
}
