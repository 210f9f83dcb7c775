//! Tests of tables of constants: a table's C reads back every f64 bit for
//! bit (the signed zero, the least subnormal, the largest finite, numbers
//! of 17 digits, the infinities); both notations print it; it reads back
//! from RON; the verifier refuses a table whose length is not its
//! shape's, an empty one, an id of no table and a store into one.

use std::sync::Arc;

use super::test_support::*;
use super::*;

/// Numbers whose printing is easy to get wrong.
const HARD: [f64; 10] = [
    -0.0,
    5e-324,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    0.30000000000000004,
    2.2250738585072014e-308,
    0.1,
    -1.0 / 3.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// `pick(k)`: element `k` of a table of shape [2][5] holding [`HARD`].
fn pick() -> Program {
    let mut p = Program::default();
    let data: Arc<[f64]> = HARD.into();
    let t = p.table_id(&[2, 5], &data);
    assert_eq!(p.table_id(&[2, 5], &data), t, "the same literal, one table");
    let mut b = FuncBuilder::new();
    let k = b.param("p0", I64);
    let out = b.param("out_l0", Ty::Out(Box::new(F64)));
    b.push(Stmt::Set {
        place: Place::Out(out),
        value: Expr::load(Expr::Table(t), v(k)),
    });
    p.funcs.push(b.finish("adrev_pick"));
    p
}

#[test]
fn a_table_reads_back_bit_for_bit_in_c() {
    let p = pick();
    verify(&p).expect("the program verifies");
    let main = r#"
#include <string.h>
int main(void) {
    ad_ctx *ctx = adrev_ctx_new();
    for (int64_t k = 0; k < 10; k++) {
        double x;
        unsigned long long bits;
        adrev_pick(ctx, k, &x);
        memcpy(&bits, &x, sizeof bits);
        printf("%016llx\n", bits);
    }
    adrev_ctx_free(ctx);
    return 0;
}
"#;
    let source = format!("{}{}", c::tables(&p), c::func(&p, &p.funcs[0]));
    assert!(
        source.contains("static const double ad_table_0[10] = {"),
        "{source}"
    );
    let got = run_c("table", &source, main);
    let bits: Vec<u64> = got
        .lines()
        .map(|l| u64::from_str_radix(l, 16).expect("test I/O"))
        .collect();
    let want: Vec<u64> = HARD.iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, want, "{source}");
}

#[test]
fn a_table_prints_in_both_notations_and_reads_back_from_ron() {
    let p = pick();
    let text = print::program(&p);
    assert!(
        text.contains("table ad_table_0: f64[2][5] = {\n  -0.0, 5e-324, 1.7976931348623157e308,"),
        "{text}"
    );
    assert!(text.contains("\n  inf, -inf,\n}\n"), "{text}");
    assert!(
        text.contains("*out_l0 := ad_table_0[p0]"),
        "the address is the table's name: {text}"
    );
    let c = c::tables(&p);
    assert!(c.contains("INFINITY, -INFINITY,\n};"), "{c}");
    let back = from_ron(&to_ron(&p).expect("a RON file")).expect("reads back");
    let bits = |p: &Program| -> Vec<u64> { p.tables[0].data.iter().map(|x| x.to_bits()).collect() };
    assert_eq!(bits(&back), bits(&p));
    assert_eq!(back.tables[0].shape, [2, 5]);
}

/// `pick` with its table changed by `f` must fail the verifier with a
/// message containing `want`.
fn refused(want: &str, f: impl FnOnce(&mut Program)) {
    let mut p = pick();
    f(&mut p);
    let e = verify(&p).expect_err(want);
    assert!(e.to_string().contains(want), "`{e}` does not say `{want}`");
}

#[test]
fn a_table_of_the_wrong_length_is_refused() {
    refused(
        "loop IR of `ad_table_0`, statement -: a table of shape [2, 4] holds 10 numbers",
        |p| p.tables[0].shape = vec![2, 4],
    );
    refused("a table of shape [3, 5] holds 10 numbers", |p| {
        p.tables[0].shape = vec![3, 5]
    });
    // A product that overflows is no length.
    refused("a table of shape [4294967296, 4294967296, 10]", |p| {
        p.tables[0].shape = vec![1 << 32, 1 << 32, 10]
    });
    refused("a table without a shape", |p| p.tables[0].shape.clear());
    refused("an empty table", |p| {
        p.tables[0] = Table {
            shape: vec![0],
            data: Arc::from(Vec::new()),
        }
    });
}

#[test]
fn a_table_that_is_missing_or_written_is_refused() {
    refused("table 1 is not in the list", |p| {
        if let Stmt::Set { value, .. } = &mut p.funcs[0].body[0] {
            *value = Expr::load(Expr::Table(TableId(1)), Expr::I64(0));
        }
    });
    refused("a store through Mem { elem: F64, writable: false }", |p| {
        p.funcs[0].body.insert(
            0,
            Stmt::Set {
                place: Place::Elem {
                    mem: Expr::Table(TableId(0)),
                    index: Expr::I64(0),
                },
                value: Expr::F64(1.0),
            },
        );
    });
}
