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
    assert_halves_agree(&run_c("fuse", &functions, main), 2);
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

/// `let t7_m = t1_sum * 2` between the loops (a read of the first
/// loop's result); `read` makes the map add it to each element.
fn reads_sum(read: bool) -> Program {
    sum_sin("f", |st, vs, b| {
        let m = b.var("t7_m", F64, false);
        st.insert(2, let_(m, Expr::bin(BinOp::Mul, v(vs.s), Expr::F64(2.0))));
        if read && let Stmt::For(l) = &mut st[5] {
            l.body.push(Stmt::Set {
                place: Place::Elem {
                    mem: v(vs.g),
                    index: v(l.index),
                },
                value: v(m),
            });
        }
    })
}

#[test]
fn reads_of_the_first_loop_between_them_stay_after_the_fused_loop() {
    let q = fused(&reads_sum(false));
    let text = print::func(&q, &q.funcs[0]);
    assert_eq!(loops(&q), 1, "{text}");
    assert!(
        text.contains("  }\n  let t7_m: f64 = t1_sum * 2.0\n"),
        "{text}"
    );
}

#[test]
fn a_second_loop_reading_what_stays_is_not_fused() {
    assert_eq!(loops(&fused(&reads_sum(true))), 2);
}

/// Between the sum and the map, a loop over `A` keeping a running
/// maximum `t7_top` (no pragma, carried from one iteration to the next,
/// as an argmax is); `write_a_block` makes it also write `g[0]`, which
/// the map writes, and `fails` makes it and the map fail on some
/// elements.
fn loop_between(write_a_block: bool, fails: bool) -> Program {
    sum_sin("f", |st, vs, b| {
        simd_sum(st, vs);
        let top = b.var("t7_top", F64, true);
        let k = b.var("t8_i", I64, false);
        let x = Expr::load(Expr::Var(VarId(1)), v(k));
        let mut body = vec![set(
            top,
            Expr::Select(
                Box::new(Expr::bin(BinOp::Gt, v(top), x.clone())),
                Box::new(v(top)),
                Box::new(x.clone()),
            ),
        )];
        let fail = |i: VarId, site| Stmt::Fail {
            cond: Expr::bin(BinOp::Gt, v(i), Expr::I64(100)),
            site,
            a: v(i),
            b: Expr::I64(0),
        };
        if fails {
            body.insert(0, fail(k, 2));
        }
        if write_a_block {
            body.push(Stmt::Set {
                place: Place::Elem {
                    mem: v(vs.g),
                    index: Expr::I64(0),
                },
                value: v(top),
            });
        }
        st.insert(2, let_(top, Expr::F64(0.0)));
        st.insert(5, for_up(k, v(vs.n), body));
        if fails && let Stmt::For(l) = &mut st[6] {
            l.body.insert(0, fail(l.index, 3));
        }
    })
}

#[test]
fn an_independent_loop_between_them_runs_after_the_fused_loop() {
    let before = loop_between(false, false);
    let q = fused(&before);
    let text = print::func(&q, &q.funcs[0]);
    assert_eq!(loops(&q), 2, "{text}");
    let Some(Stmt::For(first)) = q.funcs[0].body.iter().find(|s| matches!(s, Stmt::For(_))) else {
        panic!("{text}");
    };
    // The sum and the map in the first loop; the maximum's loop after.
    assert_eq!(first.body.len(), 4, "{text}");
    let main = r#"
int main(void) {
    double a[16];
    for (int k = 0; k < 16; k++) a[k] = 0.3 * k - 2.0;
    ad_ctx *ctx = adrev_ctx_new();
    double s1, s2; double *g1, *g2;
    int rc1 = adrev_before(ctx, 16, a, &s1, &g1);
    int rc2 = adrev_after(ctx, 16, a, &s2, &g2);
    printf("%d %a", rc1, s1);
    for (int k = 0; k < 16; k++) printf(" %a", g1[k]);
    printf(" | %d %a", rc2, s2);
    for (int k = 0; k < 16; k++) printf(" %a", g2[k]);
    printf("\n");
    adrev_ctx_free(ctx);
    return 0;
}
"#;
    let mut b = before.clone();
    b.funcs[0].name = "adrev_before".into();
    let mut a = q.clone();
    a.funcs[0].name = "adrev_after".into();
    let mut functions = c::func(&b, &b.funcs[0]);
    functions.push_str(&c::func(&a, &a.funcs[0]));
    let got = run_c("fuse-between", &functions, main);
    let (x, y) = got.trim().split_once(" | ").expect("two results");
    assert_eq!(x, y, "{got}");
}

#[test]
fn a_loop_between_them_writing_what_the_second_writes_stays_between() {
    assert_eq!(loops(&fused(&loop_between(true, false))), 3);
}

#[test]
fn a_failing_second_loop_does_not_pass_a_loop_that_can_fail() {
    // The sum cannot fail, the map may after the loop between may: the
    // map's error would come first; and the loop between and the map
    // both may fail (an error of the map's in an earlier iteration would
    // come first).
    assert_eq!(loops(&fused(&loop_between(false, true))), 3);
}

/// The sum's loop fails at `i > 100`; `check` adds a size check between
/// the loops.
fn failing_sum(check: bool) -> Program {
    sum_sin("f", |st, vs, _| {
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
        if check {
            let size = Stmt::Fail {
                cond: Expr::bin(BinOp::Gt, v(vs.n), Expr::I64(1000)),
                site: 3,
                a: v(vs.n),
                b: Expr::I64(0),
            };
            st.insert(4, size);
        }
    })
}

#[test]
fn a_check_does_not_move_before_a_loop_that_can_fail() {
    // It stays after the fused loop: the map cannot fail.
    let q = fused(&failing_sum(true));
    let text = print::func(&q, &q.funcs[0]);
    assert_eq!(loops(&q), 1, "{text}");
    assert!(
        text.contains("  }\n  fail #3 (n, 0) if n > 1000\n"),
        "{text}"
    );
}

#[test]
fn a_check_stays_between_loops_that_both_can_fail() {
    let mut p = failing_sum(true);
    if let Some(Stmt::For(l)) = p.funcs[0].body.get_mut(5) {
        let i = l.index;
        l.body.insert(
            0,
            Stmt::Fail {
                cond: Expr::bin(BinOp::Gt, v(i), Expr::I64(200)),
                site: 4,
                a: v(i),
                b: Expr::I64(0),
            },
        );
    }
    assert_eq!(loops(&fused(&p)), 2);
}

#[test]
fn a_failed_allocation_may_move_before_a_loop_that_can_fail() {
    // The buffer's null check between the loops is no error of the
    // evaluator's: it may be reported first.
    assert_eq!(loops(&fused(&failing_sum(false))), 1);
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
    // The sum stays alone (it reads `h` through the view); the writer of
    // `h` and the map fuse.
    assert_eq!(loops(&q), 2, "{}", print::func(&q, &q.funcs[0]));
}

/// The sum as a vector reduction (`reassociate`).
fn simd_sum(st: &mut Block, vs: &Vars) {
    if let Stmt::For(l) = &mut st[1] {
        l.pragma = Some(Pragma::SimdReduction {
            reductions: vec![Reduction {
                op: "+".into(),
                acc: vs.s,
            }],
            width: None,
        });
    }
}

#[test]
fn a_vector_reduction_takes_in_a_map_that_runs_in_lanes() {
    let q = fused(&sum_sin("f", |st, vs, _| simd_sum(st, vs)));
    assert_eq!(loops(&q), 1, "{}", print::func(&q, &q.funcs[0]));
    let text = c::func(&q, &q.funcs[0]);
    assert!(
        text.contains("AD_PRAGMA(omp simd reduction(+:t1_sum))"),
        "{text}"
    );
}

#[test]
fn two_vector_reductions_list_both() {
    let p = sum_sin("f", |st, vs, b| {
        simd_sum(st, vs);
        // The map becomes a second vector reduction, into `t7_prod`.
        let prod = b.var("t7_prod", F64, true);
        st.insert(0, let_(prod, Expr::F64(1.0)));
        if let Stmt::For(l) = &mut st[5] {
            l.body[1] = set(
                prod,
                Expr::bin(BinOp::Mul, v(prod), Expr::load(v(vs.g), v(l.index))),
            );
            l.pragma = Some(Pragma::SimdReduction {
                reductions: vec![Reduction {
                    op: "*".into(),
                    acc: prod,
                }],
                width: None,
            });
        }
    });
    let q = fused(&p);
    assert_eq!(loops(&q), 1, "{}", print::func(&q, &q.funcs[0]));
    let text = c::func(&q, &q.funcs[0]);
    assert!(
        text.contains("AD_PRAGMA(omp simd reduction(+:t1_sum) reduction(*:t7_prod))"),
        "{text}"
    );
}

#[test]
fn a_vector_reduction_does_not_take_in_a_loop_carrying_a_scalar() {
    let p = sum_sin("f", |st, vs, b| {
        simd_sum(st, vs);
        // The map also keeps a running maximum: not lane-safe.
        let top = b.var("t7_top", F64, true);
        st.insert(0, let_(top, Expr::F64(0.0)));
        if let Stmt::For(l) = &mut st[5] {
            let x = Expr::load(v(vs.g), v(l.index));
            l.body.push(set(top, Expr::bin(BinOp::Add, v(top), x)));
        }
    });
    assert_eq!(loops(&fused(&p)), 2);
}

/// A first loop writing `p[i] := 1` through a mutable address `p`, given
/// a new block (`alias`: the gradient's block `g` too), before the sum.
fn through_mutable(alias: bool) -> Program {
    sum_sin("f", |st, vs, b| {
        let h = b.var("t8_buf", MEM, false);
        let p = b.var("t9_p", MEM, true);
        let k = b.var("t10_i", I64, false);
        let write = for_up(
            k,
            v(vs.n),
            vec![Stmt::Set {
                place: Place::Elem {
                    mem: v(p),
                    index: v(k),
                },
                value: Expr::F64(1.0),
            }],
        );
        let mut pre = vec![
            Stmt::Alloc {
                var: h,
                count: v(vs.n),
                when: None,
            },
            Stmt::Let {
                var: p,
                init: Some(v(h)),
            },
        ];
        if alias {
            // After the loops: `p` may hold the map's block all along
            // (the analysis does not follow the order).
            st.insert(5, set(p, v(vs.g)));
        }
        pre.push(write);
        for (k, s) in pre.into_iter().enumerate() {
            st.insert(k, s);
        }
    })
}

#[test]
fn mutable_addresses_alias_only_the_blocks_they_are_given() {
    // `p` holds `t8_buf` only: its loop fuses with the sum and the map.
    let q = fused(&through_mutable(false));
    assert_eq!(loops(&q), 1, "{}", print::func(&q, &q.funcs[0]));
    // `p` may hold the map's block too: the map stays apart from the
    // loop writing through `p`.
    let q = fused(&through_mutable(true));
    assert_eq!(loops(&q), 2, "{}", print::func(&q, &q.funcs[0]));
}
