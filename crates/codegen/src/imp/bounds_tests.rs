//! Tests of the removal of bounds checks that cannot fire: the check of
//! a loop's own index against the loop's bound goes, in the loop and in
//! loops nested in it; a check against another bound, of another
//! variable, under a bound that is assigned, or of an index plus one
//! stays; the verifier accepts the result.

use super::test_support::*;
use super::*;

fn check(i: VarId, n: Expr, site: u32) -> Stmt {
    Stmt::Fail {
        cond: Expr::bin(
            BinOp::Or,
            Expr::bin(BinOp::Lt, v(i), Expr::I64(0)),
            Expr::bin(BinOp::Ge, v(i), n.clone()),
        ),
        site,
        a: v(i),
        b: n,
    }
}

/// `sums(n, m, a)`: `acc += a[i] + a[j] + a[k]` over `i < n`, `j < m`,
/// with `k = i + 1`, every index checked against `n`, and one check of
/// `j` against `n`; `bound_assigned` makes the inner bound a variable the
/// body assigns.
fn sums(bound_assigned: bool) -> (Program, String) {
    let mut p = Program::default();
    let mut b = FuncBuilder::new();
    let n = b.param("n", I64);
    let m = b.param("m", I64);
    let a = b.param("a", INPUT);
    let out = b.param("out", Ty::Out(Box::new(F64)));
    let acc = b.var("t1_acc", F64, true);
    let i = b.var("t2_i", I64, false);
    let j = b.var("t3_j", I64, false);
    let k = b.var("t4_k", I64, false);
    let hi = b.var("t5_hi", I64, true);
    b.push(let_(acc, Expr::F64(0.0)));
    b.push(let_(hi, v(m)));
    let add = |x: Expr| set(acc, Expr::bin(BinOp::Add, v(acc), Expr::load(v(a), x)));
    let mut inner = vec![
        check(i, v(n), 2),
        add(v(i)),
        check(j, v(n), 3),
        add(v(j)),
        let_(k, Expr::bin(BinOp::Add, v(i), Expr::I64(1))),
        check(k, v(n), 4),
        add(v(k)),
    ];
    let inner_hi = if bound_assigned {
        inner.push(set(hi, Expr::bin(BinOp::Sub, v(hi), Expr::I64(1))));
        inner.insert(0, check(j, v(hi), 5));
        v(hi)
    } else {
        inner.insert(0, check(j, v(m), 5));
        v(m)
    };
    b.push(for_up(
        i,
        v(n),
        vec![check(i, v(n), 1), for_up(j, inner_hi, inner)],
    ));
    b.push(Stmt::Set {
        place: Place::Out(out),
        value: v(acc),
    });
    p.funcs.push(b.finish("adrev_sums"));
    verify(&p).expect("the program verifies");
    bounds::elide(&mut p.funcs[0]);
    verify(&p).expect("the program verifies after the pass");
    let text = print::func(&p, &p.funcs[0]);
    (p, text)
}

#[test]
fn a_loop_index_against_its_bound_is_not_checked() {
    let (_, text) = sums(false);
    let want = "\
fn adrev_sums(ctx, n: i64, m: i64, a: mem const f64, out: out f64) {
  var t1_acc: f64 = 0.0
  var t5_hi: i64 = m
  for t2_i: i64 in 0 ..< n {
    for t3_j: i64 in 0 ..< m {
      t1_acc := t1_acc + a[t2_i]
      fail #3 (t3_j, n) if t3_j < 0 || t3_j >= n
      t1_acc := t1_acc + a[t3_j]
      let t4_k: i64 = t2_i + 1
      fail #4 (t4_k, n) if t4_k < 0 || t4_k >= n
      t1_acc := t1_acc + a[t4_k]
    }
  }
  *out := t1_acc
}
";
    assert_eq!(text, want, "{text}");
}

#[test]
fn a_bound_the_body_assigns_keeps_its_checks() {
    let (_, text) = sums(true);
    assert!(
        text.contains("fail #5 (t3_j, t5_hi) if t3_j < 0 || t3_j >= t5_hi"),
        "{text}"
    );
    assert!(!text.contains("fail #1"), "{text}");
    assert!(!text.contains("fail #2"), "{text}");
}
