//! Tests of the reuse of dead blocks (`reuse.rs`): a loop reading `a[i]`
//! and writing `b[i]` writes into `a` when `a` dies in it, computing the
//! same bits (built and run); each condition the pass checks, broken
//! once, leaves the function as it was.

use super::test_support::*;
use super::*;

/// What the second loop of [`twice`] does beyond `t = a[j]; b[j] = t + 1`.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// Nothing: `a` dies in the loop.
    Dies,
    /// `a` is read after the loop.
    ReadAfter,
    /// The loop reads `a[0]`, not `a[j]`.
    OtherElement,
    /// The loop writes `b[j]` before it reads `a[j]`.
    WrittenFirst,
    /// `b` has one element more than `a`.
    OtherCount,
    /// `a`'s address is copied into another variable.
    Copied,
}

/// `a = alloc n; for i < n { a[i] := x[i] * 2 }; b = alloc n; for j < n
/// { t = a[j]; b[j] := t + 1 }; out := b`, changed as `variant` says.
fn twice(name: &str, variant: Variant) -> Program {
    use Variant::*;
    let mut p = Program::default();
    let mut fb = FuncBuilder::new();
    let n = fb.param("n", I64);
    let x = fb.param("x", INPUT);
    let out = fb.param("out", Ty::Out(Box::new(MEM)));
    let a = fb.var("t1_buf", MEM, false);
    let i = fb.var("t2_i", I64, false);
    let b = fb.var("t3_buf", MEM, false);
    let j = fb.var("t4_i", I64, false);
    let t = fb.var("t5_x", F64, false);
    let copy = fb.var("t6_view", MEM, false);
    let elem = |mem: VarId, index: Expr| Place::Elem { mem: v(mem), index };
    let alloc = |var: VarId, count: Expr, site: u32| {
        [
            Stmt::Alloc {
                var,
                count: count.clone(),
                when: None,
            },
            Stmt::Fail {
                cond: Expr::IsNull(Box::new(v(var))),
                site,
                a: count,
                b: Expr::I64(0),
            },
        ]
    };
    let b_count = if variant == OtherCount {
        Expr::bin(BinOp::Add, v(n), Expr::I64(1))
    } else {
        v(n)
    };
    let read = let_(
        t,
        Expr::load(
            v(a),
            if variant == OtherElement {
                Expr::I64(0)
            } else {
                v(j)
            },
        ),
    );
    let write = Stmt::Set {
        place: elem(b, v(j)),
        value: Expr::bin(BinOp::Add, v(t), Expr::F64(1.0)),
    };
    let body = if variant == WrittenFirst {
        vec![
            Stmt::Set {
                place: elem(b, v(j)),
                value: Expr::load(v(x), v(j)),
            },
            read,
            write,
        ]
    } else {
        vec![read, write]
    };
    let mut stmts: Vec<Stmt> = alloc(a, v(n), 1).into();
    stmts.push(for_up(
        i,
        v(n),
        vec![Stmt::Set {
            place: elem(a, v(i)),
            value: Expr::bin(BinOp::Mul, Expr::load(v(x), v(i)), Expr::F64(2.0)),
        }],
    ));
    if variant == Copied {
        stmts.push(let_(copy, v(a)));
    }
    stmts.extend(alloc(b, b_count, 2));
    stmts.push(for_up(j, v(n), body));
    if variant == ReadAfter {
        stmts.push(Stmt::If {
            cond: Expr::bin(BinOp::Gt, v(n), Expr::I64(0)),
            then: vec![Stmt::Set {
                place: elem(b, Expr::I64(0)),
                value: Expr::load(v(a), Expr::I64(0)),
            }],
            els: vec![],
        });
    }
    stmts.push(Stmt::Set {
        place: Place::Out(out),
        value: v(b),
    });
    for s in stmts {
        fb.push(s);
    }
    p.funcs.push(fb.finish(name));
    p
}

fn reused(p: &Program) -> Program {
    let mut q = p.clone();
    verify(&q).expect("the program verifies");
    reuse::reuse(&mut q.funcs[0]);
    verify(&q).expect("the program verifies after reuse");
    q
}

fn allocs(p: &Program) -> usize {
    p.funcs[0]
        .body
        .iter()
        .filter(|s| matches!(s, Stmt::Alloc { .. }))
        .count()
}

#[test]
fn a_block_that_dies_in_the_loop_takes_its_results() {
    let before = twice("adrev_before", Variant::Dies);
    let after = reused(&twice("adrev_after", Variant::Dies));
    assert_eq!(
        allocs(&after),
        1,
        "{}",
        print::func(&after, &after.funcs[0])
    );
    let printed = print::func(&after, &after.funcs[0]);
    assert!(!printed.contains("t3_buf"), "{printed}");
    let mut functions = c::func(&before, &before.funcs[0]);
    functions.push_str(&c::func(&after, &after.funcs[0]));
    let main = r#"
static void run(int64_t n) {
    double x[17];
    for (int k = 0; k < 17; k++) x[k] = 0.37 * k - 2.1 + 1.0 / (k + 3);
    ad_ctx *c1 = adrev_ctx_new(), *c2 = adrev_ctx_new();
    double *g1, *g2;
    int rc1 = adrev_before(c1, n, x, &g1);
    int rc2 = adrev_after(c2, n, x, &g2);
    printf("%d", rc1);
    for (int k = 0; k < n; k++) printf(" %a", g1[k]);
    printf(" | %d", rc2);
    for (int k = 0; k < n; k++) printf(" %a", g2[k]);
    printf("\n");
    adrev_ctx_free(c1);
    adrev_ctx_free(c2);
}
int main(void) {
    run(17);
    run(5);
    run(1);
    run(0);
    return 0;
}
"#;
    assert_halves_agree(&run_c("reuse", &functions, main), 4);
}

#[test]
fn a_block_still_needed_is_not_reused() {
    for (variant, what) in [
        (Variant::ReadAfter, "read after the loop"),
        (Variant::OtherElement, "another iteration's element read"),
        (
            Variant::WrittenFirst,
            "the new block written before the read",
        ),
        (Variant::OtherCount, "another count"),
        (Variant::Copied, "its address copied"),
    ] {
        let p = twice("adrev_kept", variant);
        let after = reused(&p);
        assert_eq!(after.funcs[0].body, p.funcs[0].body, "{what}");
    }
}
