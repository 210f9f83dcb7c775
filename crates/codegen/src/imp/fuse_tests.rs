//! Tests of sibling loop fusion on the loop IR: the value and the
//! gradient of `sum (map sin A)` (a reduction and a map over `A`) become
//! one loop, computing the same bits as the two loops, built and run; and
//! each condition of the rule refuses the pair that breaks it.

use super::test_support::*;
use super::*;

/// The variables of [`sum_sin`], by name.
struct Vars {
    n: VarId,
    s: VarId,
    g: VarId,
    i: VarId,
}

/// `(sum (map sin A), map cos A)`, as two loops with the gradient's
/// buffer allocated and checked between them; `change` may edit the
/// statements before the function is finished.
fn sum_sin(name: &str, change: impl FnOnce(&mut Block, &Vars, &mut FuncBuilder)) -> Program {
    let mut p = Program::default();
    let sin = p.extern_id("sin", &[Scalar::F64], Scalar::F64);
    let cos = p.extern_id("cos", &[Scalar::F64], Scalar::F64);
    let mut b = FuncBuilder::new();
    let n = b.param("n", I64);
    let a = b.param("a", INPUT);
    let out_s = b.param("out_s", Ty::Out(Box::new(F64)));
    let out_g = b.param("out_g", Ty::Out(Box::new(MEM)));
    let s = b.var("t1_sum", F64, true);
    let i = b.var("t2_i", I64, false);
    let x = b.var("t3_x", F64, false);
    let g = b.var("t4_buf", MEM, false);
    let j = b.var("t5_i", I64, false);
    let x2 = b.var("t6_x", F64, false);
    let mut stmts = vec![
        let_(s, Expr::F64(0.0)),
        for_up(
            i,
            v(n),
            vec![
                let_(x, Expr::load(v(a), v(i))),
                Stmt::Set {
                    place: Place::Var(s),
                    value: Expr::bin(BinOp::Add, v(s), Expr::Call(sin, vec![v(x)])),
                },
            ],
        ),
        Stmt::Alloc {
            var: g,
            count: v(n),
            when: None,
        },
        Stmt::Fail {
            cond: Expr::IsNull(Box::new(v(g))),
            site: 1,
            a: v(n),
            b: Expr::I64(0),
        },
        for_up(
            j,
            v(n),
            vec![
                let_(x2, Expr::load(v(a), v(j))),
                Stmt::Set {
                    place: Place::Elem {
                        mem: v(g),
                        index: v(j),
                    },
                    value: Expr::Call(cos, vec![v(x2)]),
                },
            ],
        ),
        Stmt::Set {
            place: Place::Out(out_s),
            value: v(s),
        },
        Stmt::Set {
            place: Place::Out(out_g),
            value: v(g),
        },
    ];
    let vars = Vars { n, s, g, i };
    change(&mut stmts, &vars, &mut b);
    for st in stmts {
        b.push(st);
    }
    p.funcs.push(b.finish(name));
    p
}

fn fused(p: &Program) -> Program {
    let mut q = p.clone();
    verify(&q).expect("the program verifies");
    fuse::fuse(&mut q.funcs[0]);
    verify(&q).expect("the program verifies after fusion");
    q
}

fn loops(p: &Program) -> usize {
    p.funcs[0]
        .body
        .iter()
        .filter(|s| matches!(s, Stmt::For(_)))
        .count()
}

#[test]
fn a_reduction_and_a_map_become_one_loop() {
    let before = sum_sin("adrev_before", |_, _, _| {});
    let after = fused(&sum_sin("adrev_after", |_, _, _| {}));
    let want = "\
fn adrev_after(ctx, n: i64, a: mem const f64, out_s: out f64, out_g: out mem f64) {
  var t1_sum: f64 = 0.0
  let t4_buf: mem f64 = alloc f64[n]
  fail #1 (n, 0) if is_null(t4_buf)
  for t2_i: i64 in 0 ..< n {
    let t3_x: f64 = a[t2_i]
    t1_sum := t1_sum + sin(t3_x)
    let t6_x: f64 = a[t2_i]
    t4_buf[t2_i] := cos(t6_x)
  }
  *out_s := t1_sum
  *out_g := t4_buf
}
";
    let text = print::func(&after, &after.funcs[0]);
    assert_eq!(text, want, "{text}");
    let mut functions = c::func(&before, &before.funcs[0]);
    functions.push_str(&c::func(&after, &after.funcs[0]));
    let main = r#"
static void run(int64_t n) {
    double a[16];
    for (int k = 0; k < 16; k++) a[k] = 0.3 * k - 2.0;
    ad_ctx *ctx = adrev_ctx_new();
    double s1, s2; double *g1, *g2;
    int rc1 = adrev_before(ctx, n, a, &s1, &g1);
    int rc2 = adrev_after(ctx, n, a, &s2, &g2);
    printf("%d %a", rc1, s1);
    for (int k = 0; k < n; k++) printf(" %a", g1[k]);
    printf(" | %d %a", rc2, s2);
    for (int k = 0; k < n; k++) printf(" %a", g2[k]);
    printf("\n");
    adrev_ctx_free(ctx);
}
int main(void) {
    run(16);
    run(0);
    return 0;
}
"#;
    let got = run_c("fuse", &functions, main);
    assert_eq!(got.lines().count(), 2, "{got}");
    for l in got.lines() {
        let (x, y) = l.split_once(" | ").expect("two results per line");
        assert_eq!(x, y, "{got}");
    }
}

#[test]
fn another_iterations_element_is_not_fused() {
    // The map first, then the sum reading `g[n - 1 - i]`: an element the
    // map writes in another iteration.
    let p = sum_sin("f", |st, vs, _| {
        let map = st.remove(4);
        let Stmt::For(mut sum) = st.remove(1) else {
            return;
        };
        let mirrored = Expr::bin(
            BinOp::Sub,
            Expr::bin(BinOp::Sub, v(vs.n), Expr::I64(1)),
            v(vs.i),
        );
        sum.body[1] = Stmt::Set {
            place: Place::Var(vs.s),
            value: Expr::bin(BinOp::Add, v(vs.s), Expr::load(v(vs.g), mirrored)),
        };
        st.insert(3, map);
        st.insert(4, Stmt::For(sum));
    });
    assert_eq!(loops(&fused(&p)), 2);
}

#[test]
fn reads_of_the_first_loop_between_them_are_not_moved() {
    let p = sum_sin("f", |st, vs, b| {
        let m = b.var("t7_m", F64, false);
        st.insert(2, let_(m, Expr::bin(BinOp::Mul, v(vs.s), Expr::F64(2.0))));
    });
    assert_eq!(loops(&fused(&p)), 2);
}

#[test]
fn a_check_does_not_move_before_a_loop_that_can_fail() {
    let p = sum_sin("f", |st, vs, _| {
        if let Stmt::For(l) = &mut st[1] {
            l.body.insert(
                0,
                Stmt::Fail {
                    cond: Expr::bin(BinOp::Gt, v(vs.i), Expr::I64(100)),
                    site: 2,
                    a: v(vs.i),
                    b: Expr::I64(0),
                },
            );
        }
    });
    assert_eq!(loops(&fused(&p)), 2);
}

#[test]
fn a_view_of_a_written_block_is_not_fused() {
    // The second loop reads the first loop's output through a view.
    let p = sum_sin("f", |st, vs, b| {
        let h = b.var("t8_buf", MEM, false);
        let view = b.var("t9_view", MEM, false);
        let k = b.var("t10_i", I64, false);
        st.insert(
            0,
            Stmt::Alloc {
                var: h,
                count: Expr::bin(BinOp::Add, v(vs.n), Expr::I64(1)),
                when: None,
            },
        );
        st.insert(
            1,
            Stmt::Fail {
                cond: Expr::IsNull(Box::new(v(h))),
                site: 3,
                a: v(vs.n),
                b: Expr::I64(0),
            },
        );
        st.insert(2, let_(view, Expr::bin(BinOp::Add, v(h), Expr::I64(1))));
        st.insert(
            3,
            for_up(
                k,
                v(vs.n),
                vec![Stmt::Set {
                    place: Place::Elem {
                        mem: v(h),
                        index: v(k),
                    },
                    value: Expr::F64(1.0),
                }],
            ),
        );
        // The sum now reads h[i + 1] as view[i].
        if let Stmt::For(l) = &mut st[5] {
            l.body.push(Stmt::Set {
                place: Place::Var(vs.s),
                value: Expr::bin(BinOp::Add, v(vs.s), Expr::load(v(view), v(vs.i))),
            });
        }
    });
    let q = fused(&p);
    // The writer of `h` stays alone; the two loops after it fuse.
    assert_eq!(loops(&q), 2, "{}", print::func(&q, &q.funcs[0]));
}
