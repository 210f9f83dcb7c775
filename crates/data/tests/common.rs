//! Helpers: types from their text, and `.npy` bytes written by hand from
//! the format's specification (independent of the writer under test).

#![allow(dead_code)]

use std::path::PathBuf;

use syntax::Ty;

/// The type written as text (`[n][m]R`), through the front end.
pub fn ty(text: &str) -> Ty {
    let program = format!("def f (x : {text}) : () = ()\n");
    let m = syntax::compile(syntax::SourceFile {
        name: "ty.ad".into(),
        text: program,
    })
    .unwrap_or_else(|e| panic!("{text}: {e}"));
    m.defs[0].params[0].ty.clone().expect("typed")
}

/// `.npy` bytes (format 1.0): magic, version, a header padded with spaces
/// to a multiple of 64 bytes ending in a newline, then `data`.
pub fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

/// Little-endian bytes of reals.
pub fn f64s(xs: &[f64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A fresh scratch directory.
pub fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("data-tests").join(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}
