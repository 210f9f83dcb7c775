//! `.npy` and `.npz`: reading files written by hand from the format's
//! specification, round trips through the writer, and every kind of bad
//! file refused with a message naming the file and the problem.

use std::borrow::Cow;

use data::{Buffer, Data, DataError, Dense, read_npy_bytes, read_npz_bytes};
use semantics::Value;

use crate::common::{dir, f64s, npy, ty};

fn err(bytes: &[u8]) -> String {
    match read_npy_bytes(bytes, "x.npy") {
        Ok(d) => panic!("accepted: {d:?}"),
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with("x.npy: "), "{m}");
            m
        }
    }
}

#[test]
fn hand_written_files_read_in_c_order() {
    let xs = [1.0, 2.5, -0.0, 1e-300, f64::INFINITY, 7.0];
    let d = read_npy_bytes(&npy("<f8", false, "(2, 3)", &f64s(&xs)), "x.npy").expect("f8");
    assert_eq!(d.shape(), &[2, 3]);
    assert_eq!(d.buffer(), &Buffer::Real(Cow::Owned(xs.to_vec())));
    assert_eq!(d.to_value().to_string(), "[[1, 2.5, -0], [1e-300, inf, 7]]");
    // Big-endian reals are byte-swapped.
    let be: Vec<u8> = xs.iter().flat_map(|x| x.to_be_bytes()).collect();
    let d = read_npy_bytes(&npy(">f8", false, "(6,)", &be), "x.npy").expect(">f8");
    assert_eq!(d.buffer(), &Buffer::Real(Cow::Owned(xs.to_vec())));
    // int64, bool, a 0-d scalar, an empty array.
    let is: Vec<u8> = [3i64, -4].iter().flat_map(|x| x.to_le_bytes()).collect();
    let d = read_npy_bytes(&npy("<i8", false, "(2,)", &is), "x.npy").expect("i8");
    assert_eq!(d.buffer(), &Buffer::Int(Cow::Owned(vec![3, -4])));
    let d = read_npy_bytes(&npy("|b1", false, "(3,)", &[1, 0, 1]), "x.npy").expect("b1");
    assert_eq!(
        d.buffer(),
        &Buffer::Bool(Cow::Owned(vec![true, false, true]))
    );
    let d = read_npy_bytes(&npy("<f8", false, "()", &f64s(&[4.0])), "x.npy").expect("0-d");
    assert_eq!(d.shape(), &[] as &[usize]);
    assert_eq!(d.to_value(), Value::Real(4.0));
    let d = read_npy_bytes(&npy("<f8", false, "(0, 5)", &[]), "x.npy").expect("empty");
    assert_eq!(d.shape(), &[0, 5]);
    // Fortran order of one dimension is C order.
    read_npy_bytes(&npy("<f8", true, "(3,)", &f64s(&[1.0, 2.0, 3.0])), "x.npy").expect("1-d F");
}

#[test]
fn bad_files_are_refused_with_what_is_wrong() {
    let good = npy("<f8", false, "(2, 2)", &f64s(&[1.0, 2.0, 3.0, 4.0]));
    // Truncated anywhere: in the magic, the header, the data.
    for cut in [3, 9, 20, good.len() - 1] {
        let m = err(&good[..cut]);
        assert!(m.contains("truncated"), "cut at {cut}: {m}");
    }
    let mut long = good.clone();
    long.push(0);
    assert!(err(&long).contains("corrupt: shape [2, 2] needs 32 bytes of data, the file has 33"));
    assert!(err(b"PK\x03\x04 not an npy").contains("not a NumPy .npy file"));
    let mut v9 = good.clone();
    v9[6] = 9;
    assert!(err(&v9).contains("unknown .npy format version 9.0"));
    assert!(err(&npy("<f4", false, "(2,)", &[0; 8])).contains("dtype `<f4`: only float64"));
    assert!(err(&npy("<i4", false, "(2,)", &[0; 8])).contains("dtype `<i4`"));
    assert!(err(&npy("|O", false, "(1,)", &[0; 8])).contains("dtype `|O`"));
    let m = err(&npy("<f8", true, "(2, 2)", &f64s(&[1.0, 2.0, 3.0, 4.0])));
    assert!(m.contains("Fortran (column-major) order"), "{m}");
    // A huge declared shape in a tiny file: an error, not an allocation.
    let m = err(&npy("<f8", false, "(1000000000000,)", &[0; 8]));
    assert!(
        m.contains("truncated: shape [1000000000000] needs 8000000000000 bytes"),
        "{m}"
    );
    let m = err(&npy(
        "<f8",
        false,
        "(4294967296, 4294967296, 4294967296)",
        &[],
    ));
    assert!(m.contains("too many elements"), "{m}");
    // A header that declares more than the file has, or more than is read.
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(err(&huge).contains("a header of 4294967295 bytes"));
    let mut lying = good.clone();
    lying[8] = 0xff;
    lying[9] = 0x7f;
    assert!(err(&lying).contains("truncated: the header declares"));
    assert!(
        err(&npy("<f8", false, "[2]", &f64s(&[1.0, 2.0]))).contains("a shape that is not a tuple")
    );
    assert!(err(&npy("<f8", false, "(-2,)", &[])).contains("not a tuple of sizes"));
    let m = err(&npy("|b1", false, "(2,)", &[1, 7]));
    assert!(m.contains("corrupt data"), "{m}");
    let mut garbage = npy("<f8", false, "(1,)", &f64s(&[1.0]));
    garbage[10] = b'@';
    assert!(err(&garbage).contains("not a Python literal"));
    // A header nested as deep as its length allows: an error, no overflow
    // and no exponential backtracking (refused before it is parsed).
    let deep = npy("<f8", false, &"(".repeat(60_000), &[]);
    let m = err(&deep);
    assert!(m.contains("a header nested 60001 brackets deep"), "{m}");
    let mut renamed = npy("<f8", false, "(1,)", &f64s(&[1.0]));
    renamed[12] = b'@';
    assert!(err(&renamed).contains("a header without 'descr'"));
}

#[test]
fn files_round_trip_through_the_writer() {
    let d = dir("npy-round-trip");
    let xs = [0.1, -2.0, 3e300, f64::NAN, f64::NEG_INFINITY, 5e-324];
    let dense = Dense::reals(vec![3, 2], &xs).expect("dense");
    let path = d.join("x.npy");
    data::write_npy(&path, &dense).expect("write");
    let back = data::read_npy(&path).expect("read");
    assert_eq!(back.shape(), &[3, 2]);
    let Buffer::Real(b) = back.buffer() else {
        panic!("reals")
    };
    assert!(b.iter().zip(&xs).all(|(a, x)| a.to_bits() == x.to_bits()));
    // The writer's bytes are the format's, as written by hand.
    let ints = Dense::new(vec![2], Buffer::Int(Cow::Owned(vec![7, -1]))).expect("ints");
    let mut bytes = Vec::new();
    data::write_npy_to(&mut bytes, &ints).expect("write");
    let again = read_npy_bytes(&bytes, "mem").expect("read back");
    assert_eq!(again, ints);
}

#[test]
fn npz_results_and_inputs_round_trip_with_tuples_split() {
    let d = dir("npz-round-trip");
    let path = d.join("out.npz");
    let t = ty("(R, [n]R, ([2]Int, Bool))");
    let v = semantics::parse_value("(1.5, [1, 2, 3], ([4, 5], true))", &t).expect("value");
    let value = Data::from_value(&v, &t, &semantics::SizeEnv::new());
    let m = ty("[n][m]R");
    let grad = Data::Dense(Dense::reals(vec![2, 2], &[1.0, 2.0, 3.0, 4.0]).expect("dense"));
    let outputs = [
        data::Output {
            name: "value",
            ty: &t,
            data: &value,
        },
        data::Output {
            name: "A",
            ty: &m,
            data: &grad,
        },
    ];
    data::write_results(&path, data::Format::Npz, &outputs).expect("write");
    let names: Vec<String> = data::read_npz(&path)
        .expect("read")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["value.1", "value.2", "value.3.1", "value.3.2", "A"]);
    let mut inputs = data::InputFile::read(&path).expect("inputs");
    assert_eq!(inputs.names(), ["value", "A"]);
    let back = inputs.take("value", &t).expect("fits").expect("present");
    assert_eq!(back.to_value(), v);
    let a = inputs.take("A", &m).expect("fits").expect("present");
    assert_eq!(a, grad);
    assert!(inputs.names().is_empty());
    assert!(inputs.take("B", &m).expect("absent is fine").is_none());
    // A tuple with a component missing.
    let mut partial = data::InputFile::from_arrays(
        vec![(
            "p.1".into(),
            Dense::scalar(&Value::Real(1.0)).expect("scalar"),
        )],
        "p.npz",
    );
    let m = partial
        .take("p", &ty("(R, R)"))
        .expect_err("p.2 is missing")
        .to_string();
    assert_eq!(m, "p.npz: `p` is a 2-tuple but the archive has no `p.2`");
    // Arrays of tuples have no NumPy form.
    let at = ty("[n](R, R)");
    let pairs = Data::Value(semantics::parse_value("[(1, 2)]", &at).expect("pairs"));
    let e = data::npz_members(&[data::Output {
        name: "P",
        ty: &at,
        data: &pairs,
    }])
    .expect_err("no NumPy form");
    assert!(
        e.to_string()
            .starts_with("result `P`: a value of type [n](R, R) has no NumPy form"),
        "{e}"
    );
}

/// An archive of deflated members, as numpy.savez_compressed writes.
fn deflated(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in members {
            z.start_file(*name, opts).expect("start");
            z.write_all(bytes).expect("write");
        }
        z.finish().expect("finish");
    }
    buf.into_inner()
}

#[test]
fn compressed_and_bad_archives() {
    let x = npy("<f8", false, "(3,)", &f64s(&[1.0, 2.0, 3.0]));
    let good = deflated(&[("x.npy", x.clone())]);
    let arrays = read_npz_bytes(&good, "a.npz").expect("a deflated archive");
    assert_eq!(arrays.len(), 1);
    assert_eq!(arrays[0].0, "x");
    assert_eq!(arrays[0].1.to_value().to_string(), "[1, 2, 3]");
    let bytes = deflated(&[("x.npy", x.clone()), ("readme.txt", b"hello".to_vec())]);
    let e = read_npz_bytes(&bytes, "a.npz").expect_err("a member that is not an array");
    assert_eq!(
        e.to_string(),
        "a.npz: member `readme.txt` is not an array (an .npz holds NAME.npy files)"
    );
    let bytes = deflated(&[
        ("x.npy", x),
        ("y.npy", npy("<f8", false, "(9,)", &f64s(&[1.0]))),
    ]);
    let e = read_npz_bytes(&bytes, "a.npz").expect_err("y is truncated");
    assert!(
        e.to_string()
            .starts_with("a.npz, member `y.npy`: truncated: shape [9] needs 72 bytes"),
        "{e}"
    );
    let e = read_npz_bytes(b"not a zip at all", "b.npz").expect_err("not a zip");
    assert!(matches!(e, DataError::File { .. }));
    assert!(
        e.to_string()
            .starts_with("b.npz: not an .npz (zip) archive"),
        "{e}"
    );
    // A truncated archive.
    let e = read_npz_bytes(&bytes[..bytes.len() / 2], "c.npz").expect_err("truncated zip");
    assert!(e.to_string().starts_with("c.npz: "), "{e}");
}
