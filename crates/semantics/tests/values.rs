//! Properties of values: printing reads back, printing is the shortest
//! form, and the evaluator never panics on any module.

use proptest::prelude::*;
use semantics::{Config, Value, eval_def_with, format_real, parse_value};
use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, Span, Ty};

/// Any f64, every bit pattern equally likely (so NaNs, infinities,
/// subnormals and both zeros all occur).
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        any::<f64>(),
        (-1e6..1e6f64),
        (-1000i64..1000).prop_map(|i| i as f64),
    ]
}

/// The significant digits of a decimal numeral: no sign, point, exponent,
/// leading or trailing zeros (`"1.250e-3"` → `"125"`).
fn significant(text: &str) -> String {
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reals_read_back_bit_for_bit(x in any_f64()) {
        let text = format_real(x);
        let back = parse_value(&text, &Ty::Real).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let y = back.as_real().ok_or_else(|| TestCaseError::fail("not a real"))?;
        if x.is_nan() {
            prop_assert!(y.is_nan(), "{} read back as {}", text, y);
        } else {
            prop_assert_eq!(x.to_bits(), y.to_bits(), "{} read back as {:?}", text, y);
        }
    }

    #[test]
    fn reals_print_with_the_fewest_digits(x in any_f64()) {
        prop_assume!(x.is_finite());
        // Rust's `{:?}` also writes the shortest round-tripping digits
        // (in another layout): both must have the same significant digits.
        let ours = format_real(x);
        let theirs = format!("{x:?}");
        prop_assert_eq!(significant(&ours), significant(&theirs), "{} vs {}", ours, theirs);
        prop_assert!(!ours.contains('+') && !ours.ends_with(".0"), "{}", ours);
    }

    #[test]
    fn values_read_back((ty, v) in typed_value()) {
        let text = v.to_string();
        let back = parse_value(&text, &ty).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back.to_string(), text.clone());
        prop_assert!(back.approx_eq(&v, 0.0, 0.0), "{}", text);
        prop_assert_eq!(v.check_ty(&ty), Ok(()));
    }

    #[test]
    fn any_module_gives_a_value_or_an_error(exprs in prop::collection::vec(any_expr(), 1..24), body in 0u32..30) {
        let n = exprs.len();
        // Mostly well-formed trees: most children come before their
        // parent; the ids 28 and 29 stay as they are (out of range).
        let exprs: Vec<Expr> = exprs
            .iter()
            .enumerate()
            .map(|(i, e)| e.map_children(|c| if c.0 >= 28 || i == 0 { c } else { ExprId(c.0 % i as u32) }))
            .collect();
        let body = if body >= 28 { body } else { body % n as u32 };
        let m = Module {
            exprs,
            spans: (0..n).map(|i| Span::new(i, i + 1)).collect(),
            ..Module::default()
        };
        let def = Def {
            name: Name::new("f"),
            name_span: Span::new(0, 1),
            params: vec![
                Param { name: Name::new("x"), ty: Some(Ty::Real), span: Span::new(0, 1) },
                Param { name: Name::new("a"), ty: Some(Ty::array(Size::Dyn, Ty::Real)), span: Span::new(0, 1) },
            ],
            ret: None,
            body: ExprId(body),
        };
        let mut m = m;
        m.defs.push(def.clone());
        let cfg = Config { max_steps: Some(20_000) };
        // Whatever the module, evaluation returns (it never panics), and an
        // error points into the module or is marked generated.
        let res = eval_def_with(&m, &def, &[Value::Real(0.5), Value::reals(&[1.0, 2.0, 3.0])], &cfg);
        if let Err(e) = res {
            let span = e.span();
            prop_assert!(span.is_generated() || span.hi as usize <= n.max(1), "{e} at {span:?}");
        }
    }
}

fn leaf_ty() -> impl Strategy<Value = Ty> {
    prop_oneof![Just(Ty::Real), Just(Ty::Int), Just(Ty::Bool)]
}

fn any_ty() -> impl Strategy<Value = Ty> {
    leaf_ty().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Ty::array(Size::Dyn, t)),
            prop::collection::vec(inner, 2..4).prop_map(Ty::Tuple),
            Just(Ty::Tuple(vec![])),
        ]
    })
}

fn value_of(ty: &Ty) -> BoxedStrategy<Value> {
    match ty {
        Ty::Real => any_f64().prop_map(Value::Real).boxed(),
        Ty::Int => any::<i64>().prop_map(Value::Int).boxed(),
        Ty::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Ty::Array(_, elem) => prop::collection::vec(value_of(elem), 0..4)
            .prop_map(Value::array)
            .boxed(),
        Ty::Tuple(items) => items
            .iter()
            .map(value_of)
            .collect::<Vec<_>>()
            .prop_map(Value::tuple)
            .boxed(),
        Ty::Func(..) => Just(Value::unit()).boxed(),
    }
}

fn typed_value() -> impl Strategy<Value = (Ty, Value)> {
    any_ty().prop_flat_map(|ty| {
        let values = value_of(&ty);
        (Just(ty), values)
    })
}

fn name() -> impl Strategy<Value = Name> {
    prop_oneof![Just("x"), Just("y"), Just("a"), Just("f")].prop_map(Name::new)
}

fn id() -> impl Strategy<Value = ExprId> {
    (0u32..30).prop_map(ExprId)
}

fn ids(max: usize) -> impl Strategy<Value = Vec<ExprId>> {
    prop::collection::vec(id(), 0..=max)
}

/// Any expression node, with children anywhere (possibly out of range or
/// after their parent) and names that may be unbound.
fn any_expr() -> impl Strategy<Value = Expr> {
    let param = name().prop_map(|n| Param {
        name: n,
        ty: None,
        span: Span::GENERATED,
    });
    prop_oneof![
        name().prop_map(Expr::Var),
        any_f64().prop_map(Expr::Real),
        (-3i64..6).prop_map(Expr::Int),
        any::<bool>().prop_map(Expr::Bool),
        (name(), id(), id()).prop_map(|(n, value, body)| Expr::Let {
            pat: Pat::Var(n),
            ty: None,
            value,
            body
        }),
        (prop::collection::vec(name(), 2..3), id(), id()).prop_map(|(ns, value, body)| Expr::Let {
            pat: Pat::Tuple(ns),
            ty: None,
            value,
            body
        }),
        ids(3).prop_map(Expr::Tuple),
        ids(3).prop_map(Expr::Array),
        (
            prop::collection::vec(0u64..3, 0..3),
            prop::collection::vec(any::<f64>(), 0..5)
        )
            .prop_map(|(shape, data)| Expr::Reals(syntax::Reals {
                shape,
                data: data.into()
            })),
        (id(), 0u32..4).prop_map(|(tuple, index)| Expr::Proj { tuple, index }),
        (id(), id(), id()).prop_map(|(cond, then_branch, else_branch)| Expr::If {
            cond,
            then_branch,
            else_branch
        }),
        (prop::collection::vec(param, 0..3), id())
            .prop_map(|(params, body)| Expr::Lambda { params, body }),
        (id(), ids(3)).prop_map(|(func, args)| Expr::App { func, args }),
        (prop::sample::select(Prim::ALL), ids(3)).prop_map(|(op, args)| Expr::Prim { op, args }),
        prop::sample::select(Prim::ALL).prop_map(Expr::Section),
        (id(), id()).prop_map(|(array, index)| Expr::Index { array, index }),
    ]
}

/// A value is a tag and a word: arrays and tuples are one pointer
/// (`semantics::Items`), so reverse mode's stored arrays cost 16 bytes an
/// element (docs/semantics.md, "Memory per loop iteration").
#[test]
fn a_value_is_two_words() {
    assert_eq!(std::mem::size_of::<Value>(), 16);
}
