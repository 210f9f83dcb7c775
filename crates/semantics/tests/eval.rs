//! The evaluator on hand-built core-form modules: binding, closures,
//! tuples, conditionals, the entry API and its input checks, malformed
//! modules (errors, never panics) and deep programs.

use crate::common;

use common::{B, arr, reals_n};
use semantics::{Config, Error, Value, eval_def, eval_def_with, eval_entry};
use syntax::{Expr, ExprId, Name, Pat, Prim, Size, Span, Ty};

#[test]
fn let_and_tuple_patterns() {
    // let (a, b) = (1, 2.5) in let c = a - b in c * c
    let mut b = B::new();
    let one = b.real(1.0);
    let two = b.real(2.5);
    let pair = b.tuple(&[one, two]);
    let a = b.var("a");
    let bb = b.var("b");
    let diff = b.prim(Prim::Sub, &[a, bb]);
    let c = b.var("c");
    let c2 = b.var("c");
    let sq = b.prim(Prim::Mul, &[c, c2]);
    let inner = b.let_("c", diff, sq);
    let e = b.let_tuple(&["a", "b"], pair, inner);
    assert_eq!(b.run(e), Ok(Value::Real(2.25)));
}

#[test]
fn tuple_pattern_of_the_wrong_size() {
    let mut b = B::new();
    let one = b.real(1.0);
    let two = b.real(2.0);
    let three = b.real(3.0);
    let triple = b.tuple(&[one, two, three]);
    let a = b.var("a");
    let e = b.let_tuple(&["a", "b"], triple, a);
    let err = b.run(e).expect_err("2 names, 3 components");
    assert_eq!(
        err.to_string(),
        "a pattern of 2 names cannot bind a 3-tuple"
    );
    assert_eq!(err.span(), b.m.span(e));
}

#[test]
fn projections() {
    let mut b = B::new();
    let x = b.real(1.5);
    let y = b.reals(&[2.0, 3.0]);
    let t = b.tuple(&[x, y]);
    let p2 = b.proj(t, 2);
    assert_eq!(b.run(p2), Ok(Value::reals(&[2.0, 3.0])));
    let mut b = B::new();
    let x = b.real(1.5);
    let y = b.real(2.5);
    let t = b.tuple(&[x, y]);
    let p3 = b.proj(t, 3);
    let err = b.run(p3).expect_err("no third component");
    assert_eq!(err.to_string(), "projection .3 of a 2-tuple");
    assert_eq!(err.span(), b.m.span(p3));
}

#[test]
fn only_the_taken_branch_is_evaluated() {
    // if c then 1 else [1][5], for both values of c.
    for c in [true, false] {
        let mut b = B::new();
        let cond = b.boolean(c);
        let one = b.real(1.0);
        let arr = b.reals(&[1.0]);
        let five = b.int(5);
        let bad = b.index(arr, five);
        let e = b.if_(cond, one, bad);
        let res = b.run(e);
        if c {
            assert_eq!(res, Ok(Value::Real(1.0)));
        } else {
            let err = res.expect_err("the else branch indexes out of bounds");
            assert_eq!(err.span(), b.m.span(bad));
        }
    }
}

#[test]
fn closures_capture_their_environment() {
    // let x = 1 in let f = fun y -> x + y in let x = 10 in f x  = 1 + 10
    let mut b = B::new();
    let one = b.real(1.0);
    let x = b.var("x");
    let y = b.var("y");
    let add = b.prim(Prim::Add, &[x, y]);
    let f = b.lam(&["y"], add);
    let ten = b.real(10.0);
    let fv = b.var("f");
    let x2 = b.var("x");
    let call = b.app(fv, &[x2]);
    let inner = b.let_("x", ten, call);
    let mid = b.let_("f", f, inner);
    let e = b.let_("x", one, mid);
    assert_eq!(b.run(e), Ok(Value::Real(11.0)));
}

#[test]
fn higher_order_application() {
    // (fun f -> f (f x)) (fun y -> y * y) at x = 2 (seeds/002, Example 182.9)
    let mut b = B::new();
    let f1 = b.var("f");
    let f2 = b.var("f");
    let x = b.var("x");
    let inner = b.app(f2, &[x]);
    let outer = b.app(f1, &[inner]);
    let twice = b.lam(&["f"], outer);
    let y1 = b.var("y");
    let y2 = b.var("y");
    let sq_body = b.prim(Prim::Mul, &[y1, y2]);
    let sq = b.lam(&["y"], sq_body);
    let body = b.app(twice, &[sq]);
    let i = b.def("t", &[("x", Ty::Real)], Some(Ty::Real), body);
    let def = b.m.defs[i].clone();
    assert_eq!(
        eval_def(&b.m, &def, &[Value::Real(2.0)]),
        Ok(Value::Real(16.0))
    );
}

#[test]
fn curried_closures_and_k_ary_calls() {
    // let add = fun a -> fun b -> a - b in (add 2) 3; and (fun (a, b) -> a - b) 2 3
    let mut b = B::new();
    let a = b.var("a");
    let bb = b.var("b");
    let sub = b.prim(Prim::Sub, &[a, bb]);
    let inner = b.lam(&["b"], sub);
    let add = b.lam(&["a"], inner);
    let addv = b.var("add");
    let two = b.real(2.0);
    let partial = b.app(addv, &[two]);
    let three = b.real(3.0);
    let call = b.app(partial, &[three]);
    let e = b.let_("add", add, call);
    assert_eq!(b.run(e), Ok(Value::Real(-1.0)));

    let mut b = B::new();
    let f = b.op_lam(Prim::Sub);
    let two = b.real(2.0);
    let three = b.real(3.0);
    let call = b.app(f, &[two, three]);
    assert_eq!(b.run(call), Ok(Value::Real(-1.0)));
}

#[test]
fn wrong_number_of_arguments() {
    let mut b = B::new();
    let f = b.op_lam(Prim::Sub);
    let two = b.real(2.0);
    let call = b.app(f, &[two]);
    let err = b.run(call).expect_err("one argument for two parameters");
    assert_eq!(
        err.to_string(),
        "a function of 2 parameters applied to 1 argument"
    );
    assert_eq!(err.span(), b.m.span(call));
    // map with a function of two parameters.
    let mut b = B::new();
    let f = b.op_lam(Prim::Sub);
    let a = b.reals(&[1.0]);
    let e = b.prim(Prim::Map, &[f, a]);
    let err = b
        .run(e)
        .expect_err("map applies its function to one argument");
    assert!(
        matches!(
            err,
            Error::Arity {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.span(), b.m.span(e));
}

#[test]
fn applying_a_non_function() {
    let mut b = B::new();
    let x = b.real(2.0);
    let y = b.real(3.0);
    let call = b.app(x, &[y]);
    let err = b.run(call).expect_err("a real is not a function");
    assert_eq!(
        err.to_string(),
        "only functions can be applied, found a real"
    );
}

#[test]
fn a_function_result_prints_as_function() {
    let mut b = B::new();
    let x = b.var("x");
    let f = b.lam(&["x"], x);
    let v = b.run(f).expect("a closure");
    assert_eq!(v.to_string(), "<function>");
    assert!(matches!(v, Value::Closure(_)));
}

/// `def dot_ (A : [n]R) (B : [n]R) : R = reduce (+) 0 (map2 (*) A B)`.
fn dot_module() -> B {
    let mut b = B::new();
    let add = b.op_lam(Prim::Add);
    let zero = b.real(0.0);
    let mul = b.op_lam(Prim::Mul);
    let a = b.var("A");
    let bv = b.var("B");
    let prods = b.prim(Prim::Map2, &[mul, a, bv]);
    let body = b.prim(Prim::Reduce, &[add, zero, prods]);
    b.def(
        "dot_",
        &[("A", reals_n()), ("B", reals_n())],
        Some(Ty::Real),
        body,
    );
    b
}

fn input(name: &str, v: Value) -> (String, Value) {
    (name.to_string(), v)
}

#[test]
fn entry_by_parameter_name() {
    let b = dot_module();
    let res = eval_entry(
        &b.m,
        None,
        &[
            input("B", Value::reals(&[5.0, 6.0, 7.0, 8.0])),
            input("A", Value::reals(&[1.0, 2.0, 3.0, 4.0])),
        ],
    );
    assert_eq!(res, Ok(Value::Real(70.0)));
    assert_eq!(
        eval_entry(
            &b.m,
            Some("dot_"),
            &[input("A", Value::reals(&[])), input("B", Value::reals(&[]))]
        ),
        Ok(Value::Real(0.0))
    );
}

#[test]
fn entry_input_errors() {
    let b = dot_module();
    let a = || input("A", Value::reals(&[1.0, 2.0]));
    let bb = || input("B", Value::reals(&[3.0, 4.0]));
    let err = eval_entry(&b.m, None, &[a()]).expect_err("B is missing");
    assert_eq!(err.to_string(), "missing input `B`");
    assert_eq!(err.span(), b.m.defs[0].params[1].span);
    let err = eval_entry(&b.m, None, &[a(), bb(), input("C", Value::Real(1.0))])
        .expect_err("C is no parameter");
    assert_eq!(err.to_string(), "`dot_` has no parameter `C`");
    let err = eval_entry(&b.m, None, &[a(), bb(), a()]).expect_err("A twice");
    assert_eq!(err.to_string(), "input `A` given twice");
    let err = eval_entry(&b.m, Some("nope"), &[]).expect_err("no such definition");
    assert_eq!(err.to_string(), "no definition named `nope`");
    let err = eval_entry(&b.m, None, &[a(), input("B", Value::Real(1.0))])
        .expect_err("B is not an array");
    assert_eq!(
        err.to_string(),
        "input `B`: expected an array of n reals, found a real"
    );
    assert_eq!(err.span(), b.m.defs[0].params[1].span);
}

#[test]
fn inputs_bind_size_variables_consistently() {
    let b = dot_module();
    let err = eval_entry(
        &b.m,
        None,
        &[
            input("A", Value::reals(&[1.0, 2.0, 3.0, 4.0])),
            input("B", Value::reals(&[1.0, 2.0, 3.0])),
        ],
    )
    .expect_err("4 and 3 elements for the same n");
    assert_eq!(
        err.to_string(),
        "input `B`: expected an array of 4 reals (n = 4, as in `A`), found 3 elements"
    );
}

#[test]
fn eval_def_checks_arity_and_result_type() {
    let b = dot_module();
    let def = b.m.defs[0].clone();
    let err = eval_def(&b.m, &def, &[Value::reals(&[1.0])]).expect_err("one argument of two");
    assert!(
        matches!(
            err,
            Error::Arity {
                expected: 2,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    // A definition whose body does not have its declared type.
    let mut b = B::new();
    let x = b.var("x");
    let i = b.def("f", &[("x", Ty::Real)], Some(Ty::Bool), x);
    let def = b.m.defs[i].clone();
    let err = eval_def(&b.m, &def, &[Value::Real(1.0)]).expect_err("a real is not a boolean");
    assert_eq!(
        err.to_string(),
        "the result of `f` does not have its declared type: expected a boolean, found a real"
    );
}

#[test]
fn result_sizes_follow_the_inputs() {
    // def s (A : [n]R) : [n+1]R = scanl (+) 0 A
    let mut b = B::new();
    let f = b.op_lam(Prim::Add);
    let z = b.real(0.0);
    let a = b.var("A");
    let body = b.prim(Prim::Scanl, &[f, z, a]);
    let ret = arr(Size::Var(Name::new("n"), 1), Ty::Real);
    b.def("s", &[("A", reals_n())], Some(ret), body);
    let res = eval_entry(&b.m, None, &[input("A", Value::reals(&[1.0, 2.0, 3.0]))]);
    assert_eq!(res, Ok(Value::reals(&[0.0, 1.0, 3.0, 6.0])));
}

#[test]
fn malformed_modules_give_errors_not_panics() {
    // An unbound variable.
    let mut b = B::new();
    let x = b.var("nowhere");
    let err = b.run(x).expect_err("unbound");
    assert_eq!(
        err.to_string(),
        "internal error: unbound variable `nowhere`"
    );
    assert_eq!(err.span(), b.m.span(x));
    // A child that does not come before its parent.
    let mut b = B::new();
    let one = b.real(1.0);
    let e = b.prim(Prim::Neg, &[one]);
    b.m.exprs[e.index()] = Expr::Prim {
        op: Prim::Neg,
        args: vec![e],
    };
    let err = b.run(e).expect_err("a cycle");
    assert!(matches!(err, Error::Internal { .. }), "{err}");
    // An id out of range.
    let mut b = B::new();
    let one = b.real(1.0);
    let e = b.prim(Prim::Neg, &[one]);
    b.m.exprs[e.index()] = Expr::Prim {
        op: Prim::Neg,
        args: vec![ExprId(99)],
    };
    assert!(matches!(b.run(e), Err(Error::Internal { .. })));
    let mut b = B::new();
    assert!(matches!(b.run(ExprId(7)), Err(Error::Internal { .. })));
    // A primitive with the wrong number of operands.
    let mut b = B::new();
    let one = b.real(1.0);
    let e = b.prim(Prim::Add, &[one]);
    assert!(matches!(b.run(e), Err(Error::Internal { .. })));
    // A surface-form operator section.
    let mut b = B::new();
    let e = b.add(Expr::Section(Prim::Add));
    let err = b.run(e).expect_err("surface form");
    assert!(err.to_string().contains("operator section `(+)`"), "{err}");
    // A non-boolean condition.
    let mut b = B::new();
    let c = b.real(1.0);
    let t = b.real(2.0);
    let f = b.real(3.0);
    let e = b.if_(c, t, f);
    let err = b.run(e).expect_err("a real condition");
    assert_eq!(
        err.to_string(),
        "the condition of `if` must be a boolean, found a real"
    );
    assert_eq!(err.span(), b.m.span(c));
}

#[test]
fn a_looping_ill_typed_module_stops_at_the_step_limit() {
    // (fun f -> f f) (fun f -> f f)
    let mut b = B::new();
    let f1 = b.var("f");
    let f2 = b.var("f");
    let self_app = b.app(f1, &[f2]);
    let omega1 = b.lam(&["f"], self_app);
    let g1 = b.var("f");
    let g2 = b.var("f");
    let self_app2 = b.app(g1, &[g2]);
    let omega2 = b.lam(&["f"], self_app2);
    let e = b.app(omega1, &[omega2]);
    let i = b.def("omega", &[], None, e);
    let def = b.m.defs[i].clone();
    let cfg = Config {
        max_steps: Some(10_000),
    };
    let err = eval_def_with(&b.m, &def, &[], &cfg).expect_err("it loops");
    assert_eq!(err.to_string(), "evaluation stopped after 10000 steps");
}

/// Runs `f` on a thread with a 2 MiB stack, like the test harness's default.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn a thread")
        .join()
        .expect("the thread finishes without panicking")
}

#[test]
fn a_20000_let_chain_evaluates_on_a_small_stack() {
    let res = on_small_stack(|| {
        // let x0 = 1 in let x1 = x0 + 1 in ... in x19999, built inside out.
        let depth = 20_000;
        let mut b = B::new();
        // The values first (post-order needs children before parents), then the chain.
        let mut values = vec![b.real(1.0)];
        for i in 1..depth {
            let prev = b.var(&format!("x{}", i - 1));
            let one = b.real(1.0);
            values.push(b.prim(Prim::Add, &[prev, one]));
        }
        let mut body = b.var(&format!("x{}", depth - 1));
        for i in (0..depth).rev() {
            body = b.let_(&format!("x{i}"), values[i], body);
        }
        b.run(body)
            .map(|v| v.to_string())
            .map_err(|e| e.to_string())
    });
    assert_eq!(res, Ok("20000".to_string()));
}

#[test]
fn deep_non_tail_nesting_evaluates_on_a_small_stack() {
    let res = on_small_stack(|| {
        // 1 + (1 + (... + (let y = 0 in y)))), and the same inside `let` values.
        let depth = 20_000;
        let mut b = B::new();
        let zero = b.real(0.0);
        let y = b.var("y");
        let mut e = b.let_("y", zero, y);
        for i in 0..depth {
            let one = b.real(1.0);
            e = b.prim(Prim::Add, &[one, e]);
            if i % 2 == 0 {
                let z = b.var(&format!("z{i}"));
                e = b.let_(&format!("z{i}"), e, z);
            }
        }
        b.run(e).map(|v| v.to_string()).map_err(|e| e.to_string())
    });
    assert_eq!(res, Ok("20000".to_string()));
}

#[test]
fn a_million_element_map2_and_reduce() {
    let n = 1_000_000;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let ones = vec![1.0; n];
    let b = dot_module();
    let res = eval_entry(
        &b.m,
        None,
        &[
            input("A", Value::reals(&a)),
            input("B", Value::reals(&ones)),
        ],
    );
    // 0 + 1 + ... + (n-1), exact in f64.
    assert_eq!(res, Ok(Value::Real((n * (n - 1) / 2) as f64)));
}

#[test]
fn binders_of_both_forms() {
    // A module whose `let` binds a tuple pattern of k names works with names that
    // other nodes do not use.
    let mut b = B::new();
    let one = b.real(1.0);
    let two = b.real(2.0);
    let t = b.tuple(&[one, two]);
    let q = b.var("q");
    let e = b.add(Expr::Let {
        pat: Pat::Tuple(vec![Name::new("p"), Name::new("q")]),
        ty: Some(Ty::Tuple(vec![Ty::Real, Ty::Real])),
        value: t,
        body: q,
    });
    assert_eq!(b.run(e), Ok(Value::Real(2.0)));
    assert_eq!(b.m.span(e), Span::new(e.index(), e.index() + 1));
}
