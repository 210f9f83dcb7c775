//! Tests of the loop IR: a function using every statement verifies,
//! prints in both notations, reads back from RON, and its C, built and
//! run, computes what Rust computes on the same inputs, bit for bit; each
//! rule of the verifier refuses the program that breaks it.

use super::test_support::*;
use super::*;

/// An allocation and its check, as the lowering writes them.
fn alloc(b: &mut FuncBuilder, var: VarId, count: Expr, site: u32) {
    b.push(Stmt::Alloc {
        var,
        count: count.clone(),
        when: None,
    });
    b.push(Stmt::Fail {
        cond: Expr::IsNull(Box::new(v(var))),
        site,
        a: count,
        b: Expr::I64(0),
    });
}

/// `sines(A)`: `B[i] = sin(A[i]) * A[i]` written downwards while summing
/// them, then the sum halved three times in an unbounded loop whose trips
/// each allocate a scratch block in a region and count with a checked
/// addition; returns the sum and `B`.
fn sines() -> Program {
    let mut p = Program::default();
    let sin = p.extern_id("sin", &[Scalar::F64], Scalar::F64);
    let mut b = FuncBuilder::new();
    let n = b.param("p0_d0", I64);
    let a = b.param("p0_l0", INPUT);
    let out_s = b.param("out_l0", Ty::Out(Box::new(F64)));
    let out_d = b.param("out_d0", Ty::Out(Box::new(I64)));
    let out_b = b.param("out_l1", Ty::Out(Box::new(MEM)));
    let buf = b.var("t1_buf", MEM, false);
    let acc = b.var("t2_acc", F64, true);
    let i = b.var("t3_i", I64, false);
    let x = b.var("t4_x", F64, false);
    let y = b.var("t5_y", F64, false);
    let k = b.var("t6_k", I64, true);
    let mark = b.var("t7_mark", Ty::Mark, false);
    let tmp = b.var("t8_buf", MEM, false);
    let go = b.var("t9_go", BOOL, false);
    let k1 = b.var("t10_k", I64, false);
    b.push(Stmt::Fail {
        cond: Expr::bin(BinOp::Lt, v(n), Expr::I64(0)),
        site: 1,
        a: v(n),
        b: Expr::I64(0),
    });
    alloc(&mut b, buf, v(n), 2);
    b.push(let_(acc, Expr::F64(0.0)));
    let body = b.block(|b| {
        b.push(let_(x, Expr::load(v(a), v(i))));
        b.push(let_(
            y,
            Expr::bin(BinOp::Mul, Expr::Call(sin, vec![v(x)]), v(x)),
        ));
        b.push(Stmt::Set {
            place: Place::Elem {
                mem: v(buf),
                index: v(i),
            },
            value: v(y),
        });
        b.push(set(acc, Expr::bin(BinOp::Add, v(acc), v(y))));
    });
    b.push(Stmt::For(Box::new(For {
        index: i,
        lo: Some(Expr::I64(0)),
        hi: v(n),
        dir: Dir::Down,
        step: 1,
        pragma: None,
        body,
    })));
    b.push(let_(k, Expr::I64(0)));
    let region = b.block(|b| {
        alloc(b, tmp, Expr::I64(2), 3);
        b.push(let_(go, Expr::bin(BinOp::Lt, v(k), Expr::I64(3))));
        b.push(Stmt::If {
            cond: Expr::Unary(UnOp::Not, Box::new(v(go))),
            then: vec![Stmt::Break],
            els: vec![],
        });
        b.push(Stmt::Set {
            place: Place::Elem {
                mem: Expr::bin(BinOp::Add, v(tmp), Expr::I64(1)),
                index: Expr::I64(0),
            },
            value: Expr::bin(BinOp::Mul, v(acc), Expr::F64(0.5)),
        });
        b.push(set(acc, Expr::load(v(tmp), Expr::I64(1))));
        b.push(Stmt::Checked {
            var: k1,
            op: CheckedOp::Add,
            a: v(k),
            b: Expr::I64(1),
            site: 4,
        });
        b.push(set(k, v(k1)));
    });
    b.push(Stmt::Loop {
        body: vec![Stmt::Region {
            mark,
            body: region,
            reset_if: None,
        }],
    });
    b.push(Stmt::Set {
        place: Place::Out(out_s),
        value: v(acc),
    });
    b.push(Stmt::Set {
        place: Place::Out(out_d),
        value: v(n),
    });
    b.push(Stmt::Set {
        place: Place::Out(out_b),
        value: v(buf),
    });
    p.funcs.push(b.finish("adrev_sines"));
    p
}

#[test]
fn every_statement_verifies_and_prints() {
    let p = sines();
    verify(&p).expect("the program verifies");
    let text = print::program(&p);
    let want = "\
extern sin(f64) -> f64

fn adrev_sines(ctx, p0_d0: i64, p0_l0: mem const f64, out_l0: out f64, out_d0: out i64, out_l1: out mem f64) {
  fail #1 (p0_d0, 0) if p0_d0 < 0
  let t1_buf: mem f64 = alloc f64[p0_d0]
  fail #2 (p0_d0, 0) if is_null(t1_buf)
  var t2_acc: f64 = 0.0
  for t3_i: i64 in p0_d0 >.. 0 {
    let t4_x: f64 = p0_l0[t3_i]
    let t5_y: f64 = sin(t4_x) * t4_x
    t1_buf[t3_i] := t5_y
    t2_acc := t2_acc + t5_y
  }
  var t6_k: i64 = 0
  loop {
    region t7_mark {
      let t8_buf: mem f64 = alloc f64[2]
      fail #3 (2, 0) if is_null(t8_buf)
      let t9_go: bool = t6_k < 3
      if !t9_go {
        break
      }
      (t8_buf + 1)[0] := t2_acc * 0.5
      t2_acc := t8_buf[1]
      let t10_k: i64 = checked t6_k + 1 or fail #4
      t6_k := t10_k
    }
  }
  *out_l0 := t2_acc
  *out_d0 := p0_d0
  *out_l1 := t1_buf
}
";
    assert_eq!(text, want, "{text}");
    let c = c::func(&p, &p.funcs[0]);
    for line in [
        "int adrev_sines(ad_ctx *ctx, int64_t p0_d0, const double *p0_l0, double *out_l0, int64_t *out_d0, double **out_l1) {",
        "    for (int64_t t3_i = p0_d0 - 1; t3_i >= 0; t3_i--) {",
        "        if (!t9_go) {",
        "            ad_reset(ctx, t7_mark);",
        "        const ad_mark t7_mark = ad_mark_get(ctx);",
        "        if (ad_add_ovf(t6_k, 1, &t10_k)) return ad_fail(ctx, 4, 0, 0);",
    ] {
        assert!(c.lines().any(|l| l == line), "no line `{line}` in\n{c}");
    }
}

#[test]
fn programs_read_back_from_ron() {
    let p = sines();
    let text = to_ron(&p).expect("the module writes as RON");
    assert_eq!(from_ron(&text).expect("the dump reads back"), p);
    let other = syntax::envelope::to_ron("target", 1, &p).expect("the module writes as RON");
    assert!(from_ron(&other).is_err());
}

/// The C of `sines`, built and run on four numbers, against the same
/// arithmetic in Rust (whose `sin` is the C library's).
#[test]
fn printed_c_computes_what_rust_computes() {
    let p = sines();
    let main = r#"
int main(void) {
    const double a[4] = {0.5, -1.25, 3.0, 1e-3};
    ad_ctx *ctx = adrev_ctx_new();
    double s; int64_t n; double *b;
    int rc = adrev_sines(ctx, 4, a, &s, &n, &b);
    printf("%d %lld %a", rc, (long long)n, s);
    for (int i = 0; i < 4; i++) printf(" %a", b[i]);
    printf("\n");
    adrev_ctx_free(ctx);
    return 0;
}
"#;
    let got = run_c("sines", &c::func(&p, &p.funcs[0]), main);
    let a = [0.5f64, -1.25, 3.0, 1e-3];
    let mut acc = 0.0;
    let mut b = [0.0; 4];
    for i in (0..4).rev() {
        b[i] = a[i].sin() * a[i];
        acc += b[i];
    }
    for _ in 0..3 {
        acc *= 0.5;
    }
    let parse = |t: &str| hexf(t);
    let fields: Vec<&str> = got.split_whitespace().collect();
    assert_eq!(&fields[..2], ["0", "4"], "{got}");
    assert_eq!(parse(fields[2]).to_bits(), acc.to_bits(), "{got}");
    for i in 0..4 {
        assert_eq!(parse(fields[3 + i]).to_bits(), b[i].to_bits(), "{got}");
    }
}

/// `sines` changed by `f` must fail the verifier with a message
/// containing `want`.
fn refused(want: &str, f: impl FnOnce(&mut Func)) {
    let mut p = sines();
    f(&mut p.funcs[0]);
    let e = verify(&p).expect_err(want);
    assert!(e.to_string().contains(want), "`{e}` does not say `{want}`");
}

fn var_named(f: &Func, name: &str) -> VarId {
    VarId(
        f.vars
            .iter()
            .position(|v| v.name == name)
            .expect("well-formed test data") as u32,
    )
}

#[test]
fn use_before_declaration_is_refused() {
    refused("`t2_acc` is used where it is not declared", |f| {
        f.body.swap(3, 4)
    });
    refused("`t2_acc` is used where it is not declared", |f| {
        f.body.remove(3);
    });
}

#[test]
fn variables_out_of_scope_are_refused() {
    refused("`t4_x` is used where it is not declared", |f| {
        let x = var_named(f, "t4_x");
        f.body.insert(5, set(var_named(f, "t2_acc"), v(x)));
    });
}

#[test]
fn declarations_twice_and_names_twice_are_refused() {
    refused("`t2_acc` is declared twice", |f| {
        let s = f.body[3].clone();
        f.body.insert(4, s);
    });
    refused("two variables are named `t4_x`", |f| {
        f.vars[4].name = "t4_x".into()
    });
}

#[test]
fn type_mismatches_are_refused() {
    refused("has type Scalar(I64), expected Scalar(F64)", |f| {
        f.body[3] = let_(var_named(f, "t2_acc"), Expr::I64(0));
    });
    refused("Add of Scalar(F64) and Scalar(I64)", |f| {
        let acc = var_named(f, "t2_acc");
        f.body
            .insert(4, set(acc, Expr::bin(BinOp::Add, v(acc), Expr::I64(1))));
    });
    refused("a loop bound has type Scalar(F64)", |f| {
        if let Stmt::For(l) = &mut f.body[4] {
            l.hi = Expr::F64(4.0);
        }
    });
    refused("`sin` takes 1 arguments, given 2", |f| {
        if let Stmt::For(l) = &mut f.body[4] {
            l.body[1] = let_(
                VarId(9),
                Expr::Call(ExternId(0), vec![Expr::F64(1.0), Expr::F64(2.0)]),
            );
        }
    });
}

#[test]
fn constants_and_read_only_memory_are_not_written() {
    refused("constant `t1_buf` has no value", |f| {
        f.body[1] = Stmt::Let {
            var: VarId(5),
            init: None,
        };
    });
    refused("constant `p0_d0` is assigned", |f| {
        f.body.push(set(VarId(0), Expr::I64(1)))
    });
    refused("a store through Mem { elem: F64, writable: false }", |f| {
        f.body.push(Stmt::Set {
            place: Place::Elem {
                mem: v(VarId(1)),
                index: Expr::I64(0),
            },
            value: Expr::F64(0.0),
        })
    });
}

/// Declares `t11_keep`, a null address variable before the loop of
/// `sines`, and returns it with the body of the loop's region.
fn keep_and_region(f: &mut Func) -> (VarId, &mut Stmt) {
    let keep = VarId(f.vars.len() as u32);
    f.vars.push(Var {
        name: "t11_keep".into(),
        ty: MEM,
        mutable: true,
    });
    f.body.insert(
        6,
        Stmt::Let {
            var: keep,
            init: Some(Expr::Null(MEM)),
        },
    );
    let Stmt::Loop { body } = &mut f.body[7] else {
        panic!("the loop of `sines` moved")
    };
    (keep, &mut body[0])
}

#[test]
fn memory_does_not_outlive_its_region() {
    // The scratch block of a trip returned as the result.
    refused(
        "`out_l1` is given memory released before the call returns",
        |f| {
            let (out, tmp) = (var_named(f, "out_l1"), var_named(f, "t8_buf"));
            if let (_, Stmt::Region { body, .. }) = keep_and_region(f) {
                body.push(Stmt::Set {
                    place: Place::Out(out),
                    value: v(tmp),
                });
            }
        },
    );
    // ... or kept in a variable declared before the region, even through a view.
    refused(
        "`t11_keep` is given memory released before it goes out of scope",
        |f| {
            let tmp = var_named(f, "t8_buf");
            let view = VarId(f.vars.len() as u32 + 1);
            let (keep, region) = keep_and_region(f);
            if let Stmt::Region { body, .. } = region {
                body.push(let_(view, Expr::bin(BinOp::Add, v(tmp), Expr::I64(1))));
                body.push(set(keep, v(view)));
            }
            f.vars.push(Var {
                name: "t12_view".into(),
                ty: MEM,
                mutable: false,
            });
        },
    );
    // A region released only on later trips may keep its first trip's blocks.
    let mut p = sines();
    let f = &mut p.funcs[0];
    let (out, tmp) = (var_named(f, "out_l1"), var_named(f, "t8_buf"));
    let (keep, region) = keep_and_region(f);
    if let Stmt::Region { body, reset_if, .. } = region {
        body.push(set(keep, v(tmp)));
        *reset_if = Some(Expr::Bool(false));
    }
    f.body.push(Stmt::Set {
        place: Place::Out(out),
        value: v(keep),
    });
    verify(&p).expect("the program verifies");
}

#[test]
fn breaks_and_parallel_bodies_are_checked() {
    refused("`break` outside a loop", |f| f.body.push(Stmt::Break));
    refused("an allocation in a parallel body", |f| {
        let s = f.body.remove(1);
        f.body.insert(
            1,
            Stmt::Parallel {
                threads: Expr::I32(2),
                body: vec![s],
                workers: None,
            },
        );
    });
    refused("a failure in a parallel body", |f| {
        if let Stmt::For(l) = &mut f.body[4] {
            l.pragma = Some(Pragma::ParallelFor { min: 2 });
            l.body.push(Stmt::Fail {
                cond: Expr::Bool(false),
                site: 5,
                a: Expr::I64(0),
                b: Expr::I64(0),
            });
        }
    });
    refused("`break` out of a parallel body", |f| {
        if let Stmt::Loop { body } = &mut f.body[6] {
            body.insert(
                0,
                Stmt::Parallel {
                    threads: Expr::I32(2),
                    body: vec![Stmt::Break],
                    workers: Some(5),
                },
            );
        }
    });
    refused("failure site 0", |f| {
        f.body.insert(
            0,
            Stmt::Parallel {
                threads: Expr::I32(2),
                body: vec![],
                workers: Some(0),
            },
        );
    });
}

#[test]
fn parallel_bodies_with_workers_may_allocate_and_fail() {
    let mut p = sines();
    let f = &mut p.funcs[0];
    let scratch = VarId(f.vars.len() as u32);
    f.vars.push(Var {
        name: "scratch".into(),
        ty: Ty::Mem {
            elem: Scalar::F64,
            writable: true,
        },
        mutable: false,
    });
    f.body.insert(
        0,
        Stmt::Parallel {
            threads: Expr::I32(2),
            body: vec![
                Stmt::Alloc {
                    var: scratch,
                    count: Expr::I64(4),
                    when: None,
                },
                Stmt::Fail {
                    cond: Expr::IsNull(Box::new(Expr::Var(scratch))),
                    site: 5,
                    a: Expr::I64(4),
                    b: Expr::I64(0),
                },
            ],
            workers: Some(6),
        },
    );
    verify(&p).expect("a parallel body with workers may allocate and fail");
    let c = super::c::func(&p, &p.funcs[0]);
    assert!(
        c.contains("if (!ad_workers(ctx, ad_nt)) return ad_fail(ctx, 6, ad_nt, 0);"),
        "{c}"
    );
    assert!(c.contains("ad_alloc(ad_w, "), "{c}");
    assert!(
        c.contains("{ ad_fail(ad_w, 5, 4, 0); goto ad_stop_0; }"),
        "{c}"
    );
    assert!(
        c.contains("if (ad_join(ctx, ad_nt)) return (int)ctx->site;"),
        "{c}"
    );
}
