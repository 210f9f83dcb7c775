//! NumPy `.npy` and `.npz` files (docs/data.md, "NumPy files").
//!
//! Reading: the header is checked here before `npyz` sees it (magic,
//! version, a header of at most [`MAX_HEADER`] bytes that fits the file,
//! a shape whose element count does not overflow and whose data is exactly
//! what the file holds), so a corrupt file is an error naming the file and
//! what is wrong, and a huge declared shape in a tiny file never allocates
//! its declared size. `npyz` then decodes the elements (byte order
//! included). Only float64, int64 and bool arrays in C order are read.
//!
//! Writing: `npyz` writes each array (little-endian, C order) and `zip`
//! stores the members of an `.npz` uncompressed, as `numpy.savez` does.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::path::Path;

use npyz::WriterBuilder;

use crate::dense::{Buffer, Dense, Dtype};
use crate::error::DataError;

/// The longest header read (NumPy's own reader refuses more than 10,000
/// bytes by default; the headers of the arrays read here are < 200).
pub const MAX_HEADER: usize = 1 << 16;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads an `.npy` file.
pub fn read_npy(path: &Path) -> Result<Dense<'static>, DataError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| DataError::io("open", path, e))?;
    let len = f
        .metadata()
        .map_err(|e| DataError::io("read", path, e))?
        .len();
    read_array(std::io::BufReader::new(f), len, len, &file)
}

/// Reads `.npy` bytes; `file` names them in messages.
pub fn read_npy_bytes(bytes: &[u8], file: &str) -> Result<Dense<'static>, DataError> {
    let len = bytes.len() as u64;
    read_array(bytes, len, len, file)
}

/// Reads every array of an `.npz` file, by name (the member's name without
/// `.npy`), in the archive's order.
pub fn read_npz(path: &Path) -> Result<Vec<(String, Dense<'static>)>, DataError> {
    let file = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| DataError::io("open", path, e))?;
    read_npz_from(std::io::BufReader::new(f), &file)
}

/// Reads every array of `.npz` bytes (see [`read_npz`]).
pub fn read_npz_bytes(
    bytes: &[u8],
    file: &str,
) -> Result<Vec<(String, Dense<'static>)>, DataError> {
    read_npz_from(std::io::Cursor::new(bytes), file)
}

fn read_npz_from<R: Read + std::io::Seek>(
    r: R,
    file: &str,
) -> Result<Vec<(String, Dense<'static>)>, DataError> {
    let mut zip = zip::ZipArchive::new(r)
        .map_err(|e| DataError::file(file, format!("not an .npz (zip) archive: {e}")))?;
    let mut out: Vec<(String, Dense<'static>)> = Vec::new();
    for i in 0..zip.len() {
        let member = zip
            .by_index(i)
            .map_err(|e| DataError::file(file, format!("member {}: {e}", i + 1)))?;
        let member_name = member.name().to_string();
        let where_ = format!("{file}, member `{member_name}`");
        let Some(name) = member_name.strip_suffix(".npy") else {
            return Err(DataError::file(
                file,
                format!("member `{member_name}` is not an array (an .npz holds NAME.npy files)"),
            ));
        };
        if out.iter().any(|(n, _)| n == name) {
            return Err(DataError::file(file, format!("two arrays named `{name}`")));
        }
        let declared = member.size();
        // What the member can really expand to: stored members are their
        // size; deflate expands at most 1032-fold. Bounds the
        // preallocation when the declared size lies.
        let bound = match member.compression() {
            zip::CompressionMethod::Stored => member.compressed_size(),
            _ => member.compressed_size().saturating_mul(1032),
        };
        let name = name.to_string();
        let d = read_array(member, declared, bound, &where_)?;
        out.push((name, d));
    }
    Ok(out)
}

/// Reads one array of `len` bytes from `r`; `bound` caps what is
/// allocated ahead of reading.
fn read_array<R: Read>(
    mut r: R,
    len: u64,
    bound: u64,
    file: &str,
) -> Result<Dense<'static>, DataError> {
    let bad = |m: String| DataError::file(file, m);
    let mut pre = [0u8; 8];
    read_exact(&mut r, &mut pre, file, "the magic string and version")?;
    if &pre[..6] != MAGIC {
        return Err(bad(
            "not a NumPy .npy file (it does not start with \\x93NUMPY)".into(),
        ));
    }
    let (major, minor) = (pre[6], pre[7]);
    let len_bytes = match major {
        1 => 2,
        2 | 3 => 4,
        _ => return Err(bad(format!("unknown .npy format version {major}.{minor}"))),
    };
    let mut lb = [0u8; 4];
    read_exact(&mut r, &mut lb[..len_bytes], file, "the header length")?;
    let header_len = u32::from_le_bytes(lb) as usize;
    let prefix = 8 + len_bytes as u64 + header_len as u64;
    if header_len > MAX_HEADER {
        return Err(bad(format!(
            "a header of {header_len} bytes (at most {MAX_HEADER} are read)"
        )));
    }
    if prefix > len {
        return Err(bad(format!(
            "truncated: the header declares {header_len} bytes but the file ends before"
        )));
    }
    let mut header = vec![0u8; header_len];
    read_exact(&mut r, &mut header, file, "the header")?;
    let (dtype, shape) = parse_header(&header).map_err(bad)?;
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&c| usize::try_from(c).is_ok())
        .ok_or_else(|| bad(format!("a shape {shape:?} with too many elements")))?;
    let item = if dtype == Dtype::Bool { 1 } else { 8 };
    let want = count.saturating_mul(item);
    let have = len - prefix;
    if want != have {
        let what = if want > have { "truncated" } else { "corrupt" };
        return Err(bad(format!(
            "{what}: shape {shape:?} needs {want} bytes of data, the file has {have}"
        )));
    }
    let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let count = count as usize;
    let cap = count.min((bound / item).min(usize::MAX as u64) as usize);
    // npyz reads the header again (it is small) and decodes the data.
    let mut head = pre[..8].to_vec();
    head.extend_from_slice(&lb[..len_bytes]);
    head.extend_from_slice(&header);
    let npy = npyz::NpyFile::new(std::io::Cursor::new(head).chain(&mut r))
        .map_err(|e| bad(format!("unreadable header: {e}")))?;
    let buffer = match dtype {
        Dtype::Real => Buffer::Real(Cow::Owned(collect::<f64, _>(npy, count, cap, file)?)),
        Dtype::Int => Buffer::Int(Cow::Owned(collect::<i64, _>(npy, count, cap, file)?)),
        Dtype::Bool => Buffer::Bool(Cow::Owned(collect::<bool, _>(npy, count, cap, file)?)),
    };
    let mut extra = [0u8; 1];
    if r.read(&mut extra)
        .map_err(|e| bad(format!("cannot read: {e}")))?
        != 0
    {
        return Err(bad("corrupt: bytes after the array's data".into()));
    }
    Dense::new(shape, buffer).ok_or_else(|| bad("the data does not fill the shape".into()))
}

fn read_exact<R: Read>(r: &mut R, buf: &mut [u8], file: &str, what: &str) -> Result<(), DataError> {
    r.read_exact(buf).map_err(|e| {
        let m = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            format!("truncated: the file ends inside {what}")
        } else {
            format!("cannot read {what}: {e}")
        };
        DataError::file(file, m)
    })
}

fn collect<T: npyz::Deserialize, R: Read>(
    npy: npyz::NpyFile<R>,
    count: usize,
    cap: usize,
    file: &str,
) -> Result<Vec<T>, DataError> {
    let reader = npy
        .data::<T>()
        .map_err(|e| DataError::file(file, format!("unreadable data: {e}")))?;
    let mut out = Vec::with_capacity(cap);
    for x in reader.take(count) {
        out.push(x.map_err(|e| {
            let m = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "truncated: the data ends early".to_string()
            } else {
                format!("corrupt data: {e}")
            };
            DataError::file(file, m)
        })?);
    }
    if out.len() != count {
        return Err(DataError::file(file, "truncated: the data ends early"));
    }
    Ok(out)
}

/// The deepest nesting of brackets a header may have. `py_literal`'s
/// parser backtracks on unclosed brackets, twice the time per level (a
/// 118-byte header nested 90 deep, found by the `npy_file` fuzz target,
/// did not finish; 18 deep took 36 s), so deeper headers are refused
/// before it sees them. NumPy writes a dictionary holding a tuple (the
/// shape) or, for structured dtypes, lists of tuples: 8 levels leave room.
const MAX_HEADER_NESTING: usize = 8;

/// How deeply brackets nest in `text`, outside quoted strings.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' | '(' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | ')' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

/// The dtype and shape of a header dictionary, or what is wrong with it.
fn parse_header(bytes: &[u8]) -> Result<(Dtype, Vec<u64>), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "a header that is not text".to_string())?;
    let depth = nesting(text);
    if depth > MAX_HEADER_NESTING {
        return Err(format!(
            "a header nested {depth} brackets deep (at most {MAX_HEADER_NESTING})"
        ));
    }
    let value: py_literal::Value = text
        .trim_end()
        .parse()
        .map_err(|e| format!("a header that is not a Python literal: {e}"))?;
    let py_literal::Value::Dict(entries) = value else {
        return Err("a header that is not a dictionary".into());
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_string().is_some_and(|s| s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("a header without '{key}'"))
    };
    let descr = match get("descr")? {
        py_literal::Value::String(s) => s.clone(),
        other => {
            return Err(format!(
                "a structured dtype ({other}); only plain arrays are read"
            ));
        }
    };
    let dtype = dtype_of(&descr)?;
    let shape = match get("shape")? {
        py_literal::Value::Tuple(items) => items
            .iter()
            .map(|v| match v {
                py_literal::Value::Integer(i) => u64::try_from(i).ok(),
                _ => None,
            })
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                format!(
                    "a shape that is not a tuple of sizes: {}",
                    get("shape").map(|v| v.to_string()).unwrap_or_default()
                )
            })?,
        other => return Err(format!("a shape that is not a tuple: {other}")),
    };
    match get("fortran_order")? {
        py_literal::Value::Boolean(false) => {}
        // One dimension reads the same in either order.
        py_literal::Value::Boolean(true) if shape.iter().filter(|&&d| d != 1).count() <= 1 => {}
        py_literal::Value::Boolean(true) => {
            return Err(
                "Fortran (column-major) order; save it in C order (numpy.ascontiguousarray)".into(),
            );
        }
        other => return Err(format!("'fortran_order' is not a boolean: {other}")),
    }
    Ok((dtype, shape))
}

fn dtype_of(descr: &str) -> Result<Dtype, String> {
    let refuse = || {
        format!(
            "dtype `{descr}`: only float64 (`<f8`), int64 (`<i8`) and bool (`|b1`) arrays are read"
        )
    };
    let ts: npyz::TypeStr = descr.parse().map_err(|_| refuse())?;
    match (ts.type_char(), ts.size_field()) {
        (npyz::TypeChar::Float, 8) => Ok(Dtype::Real),
        (npyz::TypeChar::Int, 8) => Ok(Dtype::Int),
        (npyz::TypeChar::Bool, 1) => Ok(Dtype::Bool),
        _ => Err(refuse()),
    }
}

fn descr(dtype: Dtype) -> npyz::DType {
    let s = match dtype {
        Dtype::Real => "<f8",
        Dtype::Int => "<i8",
        Dtype::Bool => "|b1",
    };
    npyz::DType::Plain(s.parse().expect("invariant: a valid type string"))
}

/// Writes one array in the `.npy` format.
pub fn write_npy_to<W: Write>(w: W, d: &Dense<'_>) -> std::io::Result<()> {
    let shape: Vec<u64> = d.shape().iter().map(|&x| x as u64).collect();
    fn go<T: npyz::Serialize + Copy, W: Write>(
        w: W,
        dtype: npyz::DType,
        shape: &[u64],
        xs: &[T],
    ) -> std::io::Result<()> {
        let mut out = npyz::WriteOptions::<T>::new()
            .dtype(dtype)
            .shape(shape)
            .writer(w)
            .begin_nd()?;
        out.extend(xs.iter().copied())?;
        out.finish()
    }
    let dt = descr(d.dtype());
    match d.buffer() {
        Buffer::Real(x) => go(w, dt, &shape, x),
        Buffer::Int(x) => go(w, dt, &shape, x),
        Buffer::Bool(x) => go(w, dt, &shape, x),
    }
}

/// Writes one array to an `.npy` file.
pub fn write_npy(path: &Path, d: &Dense<'_>) -> Result<(), DataError> {
    let f = std::fs::File::create(path).map_err(|e| DataError::io("create", path, e))?;
    let mut w = std::io::BufWriter::new(f);
    write_npy_to(&mut w, d).map_err(|e| DataError::io("write", path, e))?;
    w.flush().map_err(|e| DataError::io("write", path, e))
}

/// Writes named arrays as an `.npz` archive (members stored uncompressed).
pub fn write_npz_to<W: Write + std::io::Seek>(
    w: W,
    arrays: &[(String, Dense<'_>)],
) -> std::io::Result<()> {
    let mut zip = zip::ZipWriter::new(w);
    for (name, d) in arrays {
        let bytes = d.buffer().len() as u64 * if d.dtype() == Dtype::Bool { 1 } else { 8 };
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(bytes >= u32::MAX as u64 / 2);
        zip.start_file(format!("{name}.npy"), opts)
            .map_err(std::io::Error::other)?;
        write_npy_to(&mut zip, d)?;
    }
    zip.finish().map_err(std::io::Error::other)?;
    Ok(())
}
