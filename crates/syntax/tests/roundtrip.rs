//! Print → parse round trips: every fixture program, and random surface
//! modules covering every expression form, come back as the same module
//! (spans aside), and printing is idempotent.

use crate::common;

use common::{parse, same_module};
use proptest::prelude::*;
use syntax::{
    Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty, print,
};

#[test]
fn types_at_the_depth_limit_survive_the_ron_envelope() {
    let d = syntax::parser::MAX_TYPE_DEPTH;
    let shapes: [fn(usize) -> String; 4] = [
        |k| format!("{}R", "[n]".repeat(k)),
        |k| format!("{}R{}", "(R, ".repeat(k), ")".repeat(k)),
        |k| format!("{}R", "R -> ".repeat(k)),
        |k| format!("{}R{}", "((R, R) -> ".repeat(k), ")".repeat(k)),
    ];
    for shape in shapes {
        let program = |k| {
            let t = shape(k);
            format!("def f (x : {t}) : {t} = let y : {t} = x in (fun (z : {t}) -> z) y")
        };
        // The deepest instance of the shape that the parser accepts.
        let k = (0..=d)
            .rev()
            .find(|&k| parse(&program(k)).is_ok())
            .expect("shallow types parse");
        // Parentheses count as a level, so some shapes get half the depth.
        assert!(k >= d / 2 - 1, "{}", shape(k));
        assert!(matches!(
            parse(&program(k + 1)),
            Err(syntax::Error::TooDeep { .. })
        ));
        let m = parse(&program(k)).unwrap_or_else(|e| panic!("{e:?}"));
        let ron = syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m)
            .expect("the module writes as RON");
        let read = syntax::from_ron::<Module>(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &ron);
        assert_eq!(read, Ok(m), "{}", shape(k));
    }
}

// ---- Random surface modules ------------------------------------------

/// A surface expression as a plain tree, built into an arena afterwards.
#[derive(Debug, Clone)]
enum T {
    Var(String),
    Int(i64),
    Real(f64),
    Bool(bool),
    Section(Prim),
    Let(Pat, Option<Ty>, Box<T>, Box<T>),
    Tuple(Vec<T>),
    Array(Vec<T>),
    Proj(Box<T>, u32),
    Index(Box<T>, Box<T>),
    If(Box<T>, Box<T>, Box<T>),
    Lambda(Vec<(String, Option<Ty>)>, Box<T>),
    App(Box<T>, Vec<T>),
    Prim(Prim, Vec<T>),
}

const INFIX: &[Prim] = &[
    Prim::Add,
    Prim::Sub,
    Prim::Mul,
    Prim::Div,
    Prim::Lt,
    Prim::Le,
    Prim::Gt,
    Prim::Ge,
    Prim::Eq,
    Prim::Ne,
    Prim::And,
    Prim::Or,
];

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "x", "y", "A", "acc", "x'", "_t", "_", "map", "sin", "fst", "f1", "define", "lets", "iff",
        "then_", "fun2", "R", "n",
    ])
    .prop_map(String::from)
}

/// Reals that print with a point or an exponent (an integral real prints
/// as digits and reads back as an `Int`, by design).
fn real() -> impl Strategy<Value = f64> {
    let special = prop::sample::select(vec![0.1, 1e-300, 1.5e300, 2.5, 0.5, 3.25e-7, 1e21, 5e-324]);
    let any = any::<f64>().prop_filter("a finite, non-negative real", |x| {
        x.is_finite() && x.is_sign_positive()
    });
    prop_oneof![special, any].prop_filter("prints as a real", |x| {
        !print::real(*x).bytes().all(|b| b.is_ascii_digit())
    })
}

fn size() -> impl Strategy<Value = Size> {
    prop_oneof![
        any::<u64>().prop_map(Size::Lit),
        (prop::sample::select(vec!["n", "m", "k1"]), -3i64..=3)
            .prop_map(|(n, k)| Size::Var(Name::new(n), k)),
        Just(Size::Dyn),
    ]
}

fn ty() -> impl Strategy<Value = Ty> {
    let leaf = prop_oneof![Just(Ty::Real), Just(Ty::Int), Just(Ty::Bool)];
    leaf.prop_recursive(4, 16, 3, |inner| {
        prop_oneof![
            (size(), inner.clone()).prop_map(|(s, t)| Ty::array(s, t)),
            prop_oneof![Just(vec![]), prop::collection::vec(inner.clone(), 2..4)]
                .prop_map(Ty::Tuple),
            (prop::collection::vec(inner.clone(), 0..3), inner)
                .prop_map(|(ps, r)| Ty::Func(ps, Box::new(r))),
        ]
    })
}

fn params() -> impl Strategy<Value = Vec<(String, Option<Ty>)>> {
    prop::collection::vec((name(), prop::option::of(ty())), 0..3)
}

fn pat() -> impl Strategy<Value = Pat> {
    prop_oneof![
        name().prop_map(|n| Pat::Var(Name::new(n))),
        prop::collection::vec(name(), 2..4)
            .prop_map(|ns| Pat::Tuple(ns.into_iter().map(Name::new).collect())),
    ]
}

fn expr() -> impl Strategy<Value = T> {
    let leaf = prop_oneof![
        name().prop_map(T::Var),
        prop_oneof![0i64..100, 0i64..=i64::MAX].prop_map(T::Int),
        real().prop_map(T::Real),
        any::<bool>().prop_map(T::Bool),
        prop::sample::select(INFIX).prop_map(T::Section),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        let b = |t: T| Box::new(t);
        prop_oneof![
            (pat(), prop::option::of(ty()), inner.clone(), inner.clone())
                .prop_map(move |(p, t, v, e)| T::Let(p, t, b(v), b(e))),
            prop_oneof![Just(vec![]), prop::collection::vec(inner.clone(), 2..4)]
                .prop_map(T::Tuple),
            prop::collection::vec(inner.clone(), 0..4).prop_map(T::Array),
            (inner.clone(), 1u32..5).prop_map(move |(e, i)| T::Proj(b(e), i)),
            (inner.clone(), inner.clone()).prop_map(move |(a, i)| T::Index(b(a), b(i))),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(move |(c, x, y)| T::If(
                b(c),
                b(x),
                b(y)
            )),
            (params(), inner.clone()).prop_map(move |(ps, e)| T::Lambda(ps, b(e))),
            (inner.clone(), prop::collection::vec(inner.clone(), 1..4))
                .prop_map(move |(f, args)| T::App(b(f), args)),
            (prop::sample::select(INFIX), inner.clone(), inner.clone())
                .prop_map(|(op, x, y)| T::Prim(op, vec![x, y])),
            (prop::sample::select(INFIX), inner.clone(), inner.clone())
                .prop_map(|(op, x, y)| T::Prim(op, vec![x, y])),
            inner.prop_map(|x| T::Prim(Prim::Neg, vec![x])),
        ]
    })
}

type DefTree = (String, Vec<(String, Option<Ty>)>, Option<Ty>, T);

fn module() -> impl Strategy<Value = Vec<DefTree>> {
    prop::collection::vec((name(), params(), prop::option::of(ty()), expr()), 1..4)
}

fn param_list(ps: &[(String, Option<Ty>)]) -> Vec<Param> {
    ps.iter()
        .map(|(n, t)| Param {
            name: Name::new(n.as_str()),
            ty: t.clone(),
            span: Span::default(),
        })
        .collect()
}

fn build(m: &mut Module, t: &T) -> ExprId {
    let e = match t {
        T::Var(n) => Expr::Var(Name::new(n.as_str())),
        T::Int(n) => Expr::Int(*n),
        T::Real(x) => Expr::Real(*x),
        T::Bool(v) => Expr::Bool(*v),
        T::Section(op) => Expr::Section(*op),
        T::Let(pat, ty, value, body) => {
            let value = build(m, value);
            let body = build(m, body);
            Expr::Let {
                pat: pat.clone(),
                ty: ty.clone(),
                value,
                body,
            }
        }
        T::Tuple(items) => Expr::Tuple(items.iter().map(|i| build(m, i)).collect()),
        T::Array(items) => Expr::Array(items.iter().map(|i| build(m, i)).collect()),
        T::Proj(e, index) => Expr::Proj {
            tuple: build(m, e),
            index: *index,
        },
        T::Index(a, i) => {
            let array = build(m, a);
            let index = build(m, i);
            Expr::Index { array, index }
        }
        T::If(c, x, y) => {
            let cond = build(m, c);
            let then_branch = build(m, x);
            let else_branch = build(m, y);
            Expr::If {
                cond,
                then_branch,
                else_branch,
            }
        }
        T::Lambda(ps, body) => Expr::Lambda {
            params: param_list(ps),
            body: build(m, body),
        },
        T::App(f, args) => {
            let func = build(m, f);
            let args = args.iter().map(|a| build(m, a)).collect();
            Expr::App { func, args }
        }
        T::Prim(op, args) => Expr::Prim {
            op: *op,
            args: args.iter().map(|a| build(m, a)).collect(),
        },
    };
    m.add(e, Span::default())
}

fn build_module(defs: &[DefTree]) -> Module {
    let mut m = Module::new(SourceFile::default());
    for (name, ps, ret, body) in defs {
        let body = build(&mut m, body);
        m.defs.push(Def {
            name: Name::new(name.as_str()),
            name_span: Span::default(),
            params: param_list(ps),
            ret: ret.clone(),
            body,
        });
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_modules_round_trip(defs in module()) {
        let m = build_module(&defs);
        let text = print::module(&m);
        let back = match parse(&text) {
            Ok(back) => back,
            Err(e) => return Err(TestCaseError::fail(format!("{text}\ndoes not parse: {e:?}"))),
        };
        prop_assert_eq!(same_module(&m, &back), Ok(()), "printed:\n{}", text);
        prop_assert_eq!(print::module(&back), text);
    }

    #[test]
    fn random_types_round_trip(t in ty()) {
        let text = print::ty(&t);
        prop_assert_eq!(syntax::parse_ty(&text), Ok(t), "printed: {}", text);
    }

    #[test]
    fn reals_read_back_exactly(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        let text = print::real(x);
        if x.is_finite() {
            let back: f64 = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert_eq!(back.to_bits(), x.to_bits(), "{}", text);
            // Shortest: no fewer significant digits would do.
            let digits = format!("{:e}", x.abs());
            prop_assert!(text.len() <= digits.len() + usize::from(x.is_sign_negative()), "{} vs {}", text, digits);
            // And the expression printer's reading of it, through the parser.
            if x.is_sign_positive() {
                let m = parse(&format!("def f = {text}")).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                let got = match m.expr(m.defs[0].body) {
                    Expr::Real(r) => *r,
                    Expr::Int(n) => *n as f64,
                    other => return Err(TestCaseError::fail(format!("{other:?}"))),
                };
                prop_assert_eq!(got.to_bits(), x.to_bits());
            }
        } else {
            prop_assert!(text.starts_with('(') && text.ends_with(')'));
        }
    }
}
