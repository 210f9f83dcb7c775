//! Tests of unroll and jam (`fuse_jam.rs`): rows accumulated into one
//! vector (`acc[j] += a[i][j] z_i`, reverse mode's `Q^T z` in GMM) run
//! two rows per trip through one inner loop and compute the same bits,
//! built and run; a loop whose copies' inner loops cannot fuse is left
//! as it was.

use super::test_support::*;
use super::*;

/// `acc = 0; for i < n { let zi = z[i] * 2; for j < m { acc[j] := acc[j]
/// + a[i * m + j] * zi } }`, `acc` the result; `other` reads `acc[0]`
/// instead of `acc[j]` (another iteration's element).
fn rows(name: &str, other: bool) -> Program {
    let mut p = Program::default();
    let mut b = FuncBuilder::new();
    let n = b.param("n", I64);
    let m = b.param("m", I64);
    let a = b.param("a", INPUT);
    let z = b.param("z", INPUT);
    let out = b.param("out", Ty::Out(Box::new(MEM)));
    let acc = b.var("t1_acc", MEM, false);
    let k = b.var("t2_i", I64, false);
    let i = b.var("t3_i", I64, false);
    let zi = b.var("t4_z", F64, false);
    let j = b.var("t5_i", I64, false);
    let x = b.var("t6_x", F64, false);
    let y = b.var("t7_y", F64, false);
    let elem = |mem: VarId, index: Expr| Place::Elem { mem: v(mem), index };
    let read = if other { Expr::I64(0) } else { v(j) };
    let stmts = vec![
        Stmt::Alloc {
            var: acc,
            count: v(m),
            when: None,
        },
        Stmt::Fail {
            cond: Expr::IsNull(Box::new(v(acc))),
            site: 1,
            a: v(m),
            b: Expr::I64(0),
        },
        for_up(
            k,
            v(m),
            vec![Stmt::Set {
                place: elem(acc, v(k)),
                value: Expr::F64(0.0),
            }],
        ),
        for_up(
            i,
            v(n),
            vec![
                let_(
                    zi,
                    Expr::bin(BinOp::Mul, Expr::load(v(z), v(i)), Expr::F64(2.0)),
                ),
                for_up(
                    j,
                    v(m),
                    vec![
                        let_(x, Expr::load(v(acc), read)),
                        let_(
                            y,
                            Expr::load(
                                v(a),
                                Expr::bin(BinOp::Add, Expr::bin(BinOp::Mul, v(i), v(m)), v(j)),
                            ),
                        ),
                        Stmt::Set {
                            place: elem(acc, v(j)),
                            value: Expr::bin(BinOp::Add, v(x), Expr::bin(BinOp::Mul, v(y), v(zi))),
                        },
                    ],
                ),
            ],
        ),
        Stmt::Set {
            place: Place::Out(out),
            value: v(acc),
        },
    ];
    for st in stmts {
        b.push(st);
    }
    p.funcs.push(b.finish(name));
    p
}

/// The top-level loops of the function: (step, first index given, loops
/// at the top of its body).
fn shape(p: &Program) -> Vec<(u32, bool, usize)> {
    p.funcs[0]
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::For(l) => Some((
                l.step,
                l.lo.is_some(),
                l.body.iter().filter(|s| matches!(s, Stmt::For(_))).count(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn rows_accumulated_into_one_vector_run_two_per_trip() {
    let before = rows("adrev_before", false);
    let after = fused(&rows("adrev_after", false));
    // The zeroing loop; two rows per trip through one inner loop; the
    // remainder, a row per trip.
    assert_eq!(
        shape(&after),
        vec![(1, true, 0), (2, false, 1), (1, false, 1)],
        "{}",
        print::func(&after, &after.funcs[0])
    );
    let mut functions = c::func(&before, &before.funcs[0]);
    functions.push_str(&c::func(&after, &after.funcs[0]));
    let main = r#"
static void run(int64_t n, int64_t m) {
    double a[77], z[11];
    for (int k = 0; k < 77; k++) a[k] = 0.37 * k - 9.1 + 1.0 / (k + 3);
    for (int k = 0; k < 11; k++) z[k] = 1.3 - 0.29 * k;
    ad_ctx *ctx = adrev_ctx_new();
    double *g1, *g2;
    int rc1 = adrev_before(ctx, n, m, a, z, &g1);
    int rc2 = adrev_after(ctx, n, m, a, z, &g2);
    printf("%d", rc1);
    for (int k = 0; k < m; k++) printf(" %a", g1[k]);
    printf(" | %d", rc2);
    for (int k = 0; k < m; k++) printf(" %a", g2[k]);
    printf("\n");
    adrev_ctx_free(ctx);
}
int main(void) {
    run(11, 7);
    run(8, 7);
    run(3, 7);
    run(0, 7);
    run(5, 0);
    return 0;
}
"#;
    assert_halves_agree(&run_c("jam", &functions, main), 5);
}

#[test]
fn rows_reading_another_element_are_left_as_they_were() {
    let p = rows("adrev_rows", true);
    let after = fused(&p);
    assert_eq!(after.funcs[0].body, p.funcs[0].body);
    // The copies of the failed attempt leave no variables behind.
    assert_eq!(after.funcs[0].vars.len(), p.funcs[0].vars.len());
}
