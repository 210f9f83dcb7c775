//! Tests of loop-invariant code motion on the loop IR: on a loop nest in
//! the shape of GMM's (a scratch block per point, a shape check, an index
//! check per element), what moves and what stays, the verifier after the
//! pass, and the C before and after built together and run on inputs
//! that succeed, that fail an invariant check, that fail a per-element
//! check and that run no iteration: the same failure site or the same
//! bits every time.

use super::test_support::*;
use super::*;

fn fail(cond: Expr, site: u32, a: Expr) -> Stmt {
    Stmt::Fail {
        cond,
        site,
        a,
        b: Expr::I64(0),
    }
}

/// `p` verified, its function's loop invariants moved, verified again,
/// and printed.
fn hoisted(p: &mut Program) -> String {
    verify(p).expect("the program verifies");
    let (q, f) = (p.clone(), &mut p.funcs[0]);
    licm::hoist(&q, f);
    verify(p).expect("the program verifies after the pass");
    print::func(p, &p.funcs[0])
}

/// `points(n, m, len, A)`: for each of `n` points, a scratch block of
/// `2m` holding `x * x` and `x` for the point's `m` elements of `A` (each
/// index checked against `len`), then the sum of their products, summed
/// over the points.
fn points(name: &str) -> Program {
    let mut p = Program::default();
    let mulc = p.extern_id("ad_mulc", &[Scalar::I64, Scalar::I64], Scalar::I64);
    let mut b = FuncBuilder::new();
    let n = b.param("n", I64);
    let m = b.param("m", I64);
    let len = b.param("len", I64);
    let a = b.param("a", INPUT);
    let out = b.param("out", Ty::Out(Box::new(F64)));
    let acc = b.var("t1_acc", F64, true);
    let i = b.var("t2_i", I64, false);
    let mark = b.var("t3_mark", Ty::Mark, false);
    let c = b.var("t4_count", I64, false);
    let s = b.var("t5_buf", MEM, false);
    let base = b.var("t6_base", I64, false);
    let j = b.var("t7_j", I64, false);
    let k = b.var("t8_k", I64, false);
    let x = b.var("t9_x", F64, false);
    let t = b.var("t10_part", F64, true);
    let j2 = b.var("t11_j", I64, false);
    let y = b.var("t12_y", F64, false);
    let upper = |s: VarId| Expr::bin(BinOp::Add, v(s), v(m));
    b.push(fail(Expr::bin(BinOp::Lt, v(n), Expr::I64(0)), 1, v(n)));
    b.push(fail(Expr::bin(BinOp::Lt, v(m), Expr::I64(0)), 2, v(m)));
    b.push(let_(acc, Expr::F64(0.0)));
    let fill = vec![
        let_(k, Expr::bin(BinOp::Add, v(base), v(j))),
        Stmt::Fail {
            cond: Expr::bin(
                BinOp::Or,
                Expr::bin(BinOp::Lt, v(k), Expr::I64(0)),
                Expr::bin(BinOp::Ge, v(k), v(len)),
            ),
            site: 5,
            a: v(k),
            b: v(len),
        },
        let_(x, Expr::load(v(a), v(k))),
        Stmt::Set {
            place: Place::Elem {
                mem: v(s),
                index: v(j),
            },
            value: Expr::bin(BinOp::Mul, v(x), v(x)),
        },
        Stmt::Set {
            place: Place::Elem {
                mem: upper(s),
                index: v(j),
            },
            value: v(x),
        },
    ];
    let sum = vec![
        let_(
            y,
            Expr::bin(
                BinOp::Mul,
                Expr::load(v(s), v(j2)),
                Expr::load(upper(s), v(j2)),
            ),
        ),
        Stmt::Set {
            place: Place::Var(t),
            value: Expr::bin(BinOp::Add, v(t), v(y)),
        },
    ];
    let region = vec![
        let_(c, Expr::Call(mulc, vec![v(m), Expr::I64(2)])),
        Stmt::Alloc {
            var: s,
            count: v(c),
            when: None,
        },
        fail(Expr::IsNull(Box::new(v(s))), 3, v(c)),
        fail(Expr::bin(BinOp::Gt, v(m), Expr::I64(1000)), 4, v(m)),
        let_(base, Expr::bin(BinOp::Mul, v(i), v(m))),
        for_up(j, v(m), fill),
        let_(t, Expr::F64(0.0)),
        for_up(j2, v(m), sum),
        Stmt::Set {
            place: Place::Var(acc),
            value: Expr::bin(BinOp::Add, v(acc), v(t)),
        },
    ];
    b.push(for_up(
        i,
        v(n),
        vec![Stmt::Region {
            mark,
            body: region,
            reset_if: None,
        }],
    ));
    b.push(Stmt::Set {
        place: Place::Out(out),
        value: v(acc),
    });
    p.funcs.push(b.finish(name));
    p
}

#[test]
fn invariants_leave_the_loop_and_the_rest_stays() {
    let mut p = points("adrev_points");
    let text = hoisted(&mut p);
    let want = "\
fn adrev_points(ctx, n: i64, m: i64, len: i64, a: mem const f64, out: out f64) {
  fail #1 (n, 0) if n < 0
  fail #2 (m, 0) if m < 0
  var t1_acc: f64 = 0.0
  let t4_count: i64 = ad_mulc(m, 2)
  let t5_buf: mem f64 = alloc f64[t4_count] if n > 0
  fail #3 (t4_count, 0) if n > 0 && is_null(t5_buf)
  fail #4 (m, 0) if n > 0 && m > 1000
  for t2_i: i64 in 0 ..< n {
    let t6_base: i64 = t2_i * m
    for t7_j: i64 in 0 ..< m {
      let t8_k: i64 = t6_base + t7_j
      fail #5 (t8_k, len) if t8_k < 0 || t8_k >= len
      let t9_x: f64 = a[t8_k]
      t5_buf[t7_j] := t9_x * t9_x
      (t5_buf + m)[t7_j] := t9_x
    }
    var t10_part: f64 = 0.0
    for t11_j: i64 in 0 ..< m {
      let t12_y: f64 = t5_buf[t11_j] * (t5_buf + m)[t11_j]
      t10_part := t10_part + t12_y
    }
    t1_acc := t1_acc + t10_part
  }
  *out := t1_acc
}
";
    assert_eq!(text, want, "{text}");
}

#[test]
fn a_check_after_one_that_stays_stays() {
    // The shape check after the per-point index check can fail only after
    // it: it must not move before the loop.
    let mut p = points("adrev_points");
    if let Stmt::For(l) = &mut p.funcs[0].body[3]
        && let Stmt::Region { body, .. } = &mut l.body[0]
    {
        let shape = body.remove(3);
        let i = VarId(6);
        body.insert(0, fail(Expr::bin(BinOp::Gt, v(i), Expr::I64(5)), 6, v(i)));
        body.insert(1, shape);
    }
    let text = hoisted(&mut p);
    assert!(
        text.contains("\n    fail #4 (m, 0) if m > 1000\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  let t5_buf: mem f64 = alloc f64[t4_count] if n > 0\n"),
        "{text}"
    );
}

#[test]
fn hoisted_c_computes_and_fails_as_before() {
    let before = points("adrev_before");
    let mut after = points("adrev_after");
    let q = after.clone();
    licm::hoist(&q, &mut after.funcs[0]);
    let mut functions = c::func(&before, &before.funcs[0]);
    functions.push_str(&c::func(&after, &after.funcs[0]));
    let main = r#"
static void run(int64_t n, int64_t m, int64_t len) {
    double a[64];
    for (int k = 0; k < 64; k++) a[k] = sin(0.7 * k + 0.1);
    ad_ctx *ctx = adrev_ctx_new();
    double r1 = 0.0, r2 = 0.0;
    int rc1 = adrev_before(ctx, n, m, len, a, &r1);
    int rc2 = adrev_after(ctx, n, m, len, a, &r2);
    printf("%d %a | %d %a\n", rc1, rc1 ? 0.0 : r1, rc2, rc2 ? 0.0 : r2);
    adrev_ctx_free(ctx);
}
int main(void) {
    run(4, 8, 64);    /* succeeds */
    run(2, 2000, 64); /* the shape check */
    run(0, 2000, 64); /* no iteration: nothing fails */
    run(3, 5, 12);    /* an index check inside */
    run(5, 0, 64);    /* empty scratch blocks */
    return 0;
}
"#;
    let got = run_c("licm", &functions, main);
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), 5, "{got}");
    for l in &lines {
        let (x, y) = l.split_once(" | ").expect("two results per line");
        assert_eq!(x, y, "{got}");
    }
    let rcs: Vec<&str> = lines
        .iter()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(rcs, ["0", "4", "0", "5", "0"], "{got}");
}

#[test]
fn nothing_moves_past_a_break() {
    // A loop that may stop in its first iteration before the shape check
    // never runs the check.
    let mut p = points("adrev_points");
    if let Stmt::For(l) = &mut p.funcs[0].body[3]
        && let Stmt::Region { body, .. } = &mut l.body[0]
    {
        body.insert(
            0,
            Stmt::If {
                cond: Expr::bin(BinOp::Gt, Expr::Var(VarId(1)), Expr::I64(500)),
                then: vec![Stmt::Break],
                els: vec![],
            },
        );
    }
    let text = hoisted(&mut p);
    assert!(
        text.contains("\n    fail #4 (m, 0) if m > 1000\n"),
        "{text}"
    );
}
