//! The verifier: generated well-typed programs pass it (and type inference
//! is idempotent on them), and each kind of corruption is caught.
//!
//! Programs are generated as text from a small typed grammar, so that they
//! are well typed by construction (an oracle independent of inference),
//! then compiled through the whole front end.

use proptest::prelude::*;
use syntax::{
    Expr, ExprId, Module, Name, Pat, SourceFile, Ty, check_first_order, compile, infer, print,
    specialize, verify,
};

/// The types the generator works with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum T {
    R,
    I,
    B,
    /// `[n]R`
    A,
    /// `(R, R)`
    P,
}

/// A deterministic generator of well-typed programs (xorshift64*).
struct Gen {
    state: u64,
    fresh: u32,
    /// Whether to use derivative constructs and applied lambdas.
    higher_order: bool,
}

impl Gen {
    fn new(seed: u64, higher_order: bool) -> Gen {
        // One splitmix64 step, so that nearby seeds give unrelated streams;
        // xorshift needs a non-zero state.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Gen {
            state: if z == 0 { 1 } else { z },
            fresh: 0,
            higher_order,
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn var(&mut self, t: T, env: &[(String, T)]) -> Option<String> {
        let vars: Vec<&String> = env
            .iter()
            .filter(|(_, u)| *u == t)
            .map(|(x, _)| x)
            .collect();
        if vars.is_empty() {
            None
        } else {
            Some(vars[self.pick(vars.len())].clone())
        }
    }

    fn leaf(&mut self, t: T, env: &[(String, T)]) -> String {
        if self.pick(3) > 0
            && let Some(x) = self.var(t, env)
        {
            return x;
        }
        match t {
            T::R => format!("{}.5", self.pick(4)),
            T::I => format!("{}", self.pick(3)),
            T::B => ["true", "false"][self.pick(2)].into(),
            T::A => self.var(T::A, env).unwrap_or_else(|| "A".into()),
            T::P => {
                let (a, b) = (self.leaf(T::R, env), self.leaf(T::R, env));
                format!("({a}, {b})")
            }
        }
    }

    fn expr(&mut self, t: T, env: &mut Vec<(String, T)>, depth: u32) -> String {
        if depth == 0 {
            return self.leaf(t, env);
        }
        let d = depth - 1;
        // Forms that produce any type.
        match self.pick(8) {
            0 => {
                let u = [T::R, T::I, T::A, T::P][self.pick(4)];
                let v = self.expr(u, env, d);
                let x = self.name("v");
                env.push((x.clone(), u));
                let body = self.expr(t, env, d);
                env.pop();
                return format!("(let {x} = {v} in {body})");
            }
            1 => {
                let c = self.expr(T::B, env, d);
                let (a, b) = (self.expr(t, env, d), self.expr(t, env, d));
                return format!("(if {c} then {a} else {b})");
            }
            2 if self.higher_order => {
                let a = self.expr(T::R, env, d);
                let y = self.name("y");
                env.push((y.clone(), T::R));
                let body = self.expr(t, env, d);
                env.pop();
                return format!("((fun ({y} : R) -> {body}) {a})");
            }
            _ => {}
        }
        match t {
            T::R => match self.pick(9) {
                0 => format!(
                    "({} + {})",
                    self.expr(T::R, env, d),
                    self.expr(T::R, env, d)
                ),
                1 => format!(
                    "({} * {})",
                    self.expr(T::R, env, d),
                    self.expr(T::R, env, d)
                ),
                2 => format!("(sin {})", self.expr(T::R, env, d)),
                3 => format!("({}).{}", self.expr(T::P, env, d), 1 + self.pick(2)),
                4 => format!("{}[{}]", self.leaf(T::A, env), self.expr(T::I, env, d)),
                5 => format!("(sum {})", self.expr(T::A, env, d)),
                6 => {
                    let (s, x) = (self.name("s"), self.name("x"));
                    let a = self.expr(T::A, env, d);
                    env.push((s.clone(), T::R));
                    env.push((x.clone(), T::R));
                    let body = self.expr(T::R, env, d);
                    env.truncate(env.len() - 2);
                    format!("(foldl (fun ({s}, {x}) -> {body}) 0 {a})")
                }
                7 => {
                    let p = self.expr(T::P, env, d);
                    let (u, v) = (self.name("u"), self.name("v"));
                    env.push((u.clone(), T::R));
                    env.push((v.clone(), T::R));
                    let body = self.expr(T::R, env, d);
                    env.truncate(env.len() - 2);
                    format!("(let ({u}, {v}) = {p} in {body})")
                }
                _ if self.higher_order => {
                    let z = self.name("z");
                    let a = self.expr(T::R, env, d);
                    env.push((z.clone(), T::R));
                    let body = self.expr(T::R, env, d);
                    env.pop();
                    format!("(diff (fun {z} -> {body}) {a})")
                }
                _ => self.leaf(T::R, env),
            },
            T::I => match self.pick(3) {
                0 => format!("(length {})", self.expr(T::A, env, d)),
                1 => format!("({} + 1)", self.expr(T::I, env, d)),
                _ => self.leaf(T::I, env),
            },
            T::B => match self.pick(3) {
                0 => format!(
                    "({} > {})",
                    self.expr(T::R, env, d),
                    self.expr(T::R, env, d)
                ),
                1 => format!(
                    "({} && {})",
                    self.expr(T::B, env, d),
                    self.expr(T::B, env, d)
                ),
                _ => format!("(not {})", self.expr(T::B, env, d)),
            },
            T::A => match self.pick(5) {
                0 => {
                    let x = self.name("x");
                    let a = self.expr(T::A, env, d);
                    env.push((x.clone(), T::R));
                    let body = self.expr(T::R, env, d);
                    env.pop();
                    format!("(map (fun {x} -> {body}) {a})")
                }
                1 => format!(
                    "(map2 (*) {} {})",
                    self.expr(T::A, env, d),
                    self.expr(T::A, env, d)
                ),
                2 => format!("(shift1L (scanl (+) 0 {}))", self.expr(T::A, env, d)),
                3 => format!("(zeros_like {})", self.expr(T::A, env, d)),
                _ => self.leaf(T::A, env),
            },
            T::P => format!("({}, {})", self.expr(T::R, env, d), self.expr(T::R, env, d)),
        }
    }

    fn program(&mut self, depth: u32) -> String {
        let ret = [T::R, T::I, T::B, T::A, T::P][self.pick(5)];
        let mut env = vec![
            ("x".to_string(), T::R),
            ("k".to_string(), T::I),
            ("A".to_string(), T::A),
            ("B".to_string(), T::A),
            ("p".to_string(), T::P),
        ];
        let body = self.expr(ret, &mut env, depth);
        let ret_ty = match ret {
            T::R => "R",
            T::I => "Int",
            T::B => "Bool",
            T::A => "[n]R",
            T::P => "(R, R)",
        };
        format!(
            "def f (x : R) (k : Int) (A : [n]R) (B : [n]R) (p : (R, R)) : {ret_ty} =\n  {body}\n"
        )
    }
}

fn compiled(seed: u64, depth: u32, higher_order: bool) -> (String, Module) {
    let text = Gen::new(seed, higher_order).program(depth);
    match compile(SourceFile {
        name: "gen.ad".into(),
        text: text.clone(),
    }) {
        Ok(m) => (text, m),
        Err(e) => panic!("a generated program does not compile: {e:?}\n{text}"),
    }
}

fn messages(m: &Module) -> Vec<String> {
    match verify(m) {
        Ok(()) => Vec::new(),
        Err(es) => es.iter().map(ToString::to_string).collect(),
    }
}

/// The names a definition binds (parameters, lets, lambda parameters).
fn binders(m: &Module) -> Vec<(ExprId, Name)> {
    let mut out = Vec::new();
    for (i, e) in m.exprs.iter().enumerate() {
        match e {
            Expr::Let {
                pat: Pat::Var(x), ..
            } => out.push((ExprId(i as u32), x.clone())),
            Expr::Lambda { params, .. } => {
                out.extend(params.iter().map(|p| (ExprId(i as u32), p.name.clone())))
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Generated programs verify; inference is idempotent on them; the
    /// specialised program verifies and is first-order when the program
    /// has no derivative construct.
    #[test]
    fn generated_programs_verify(seed in any::<u64>(), depth in 1u32..6, higher_order in any::<bool>()) {
        let (text, m) = compiled(seed, depth, higher_order);
        prop_assert!(messages(&m).is_empty(), "{text}\n{:?}", messages(&m));
        let mut again = m.clone();
        infer(&mut again).expect("infer succeeds on its own output");
        prop_assert_eq!(&again, &m);
        let s = specialize(&m).expect("specialises");
        prop_assert!(messages(&s).is_empty(), "{text}\n{}\n{:?}", print::module(&s), messages(&s));
        let derivatives = s.exprs.iter().any(|e| matches!(e, Expr::Prim { op, .. } if op.is_derivative_construct()));
        prop_assert_eq!(check_first_order(&s, &s.defs[0]).is_ok(), !derivatives, "{}", print::module(&s));
    }

    /// A child id moved forward (to its parent or beyond) is caught.
    #[test]
    fn forward_child_ids_are_caught(seed in any::<u64>(), depth in 1u32..5, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, depth, false);
        let parents: Vec<usize> = (0..m.exprs.len()).filter(|&i| !m.exprs[i].children().is_empty()).collect();
        prop_assume!(!parents.is_empty());
        let p = parents[pick % parents.len()];
        let target = ExprId((p + pick % 3) as u32);
        let mut first = true;
        m.exprs[p] = m.exprs[p].map_children(|c| if std::mem::take(&mut first) { target } else { c });
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.contains("not before its parent") || s.contains("out of range")), "{text}\n{ms:?}");
    }

    /// A binder renamed to a name already bound in the definition is caught.
    #[test]
    fn duplicate_binders_are_caught(seed in any::<u64>(), depth in 2u32..6, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, depth, false);
        let bs = binders(&m);
        let taken = Name::new("x");
        if bs.is_empty() {
            // No let or lambda: duplicate a parameter of the definition.
            m.defs[0].params[1].name = taken;
        } else {
            let (id, _) = bs[pick % bs.len()].clone();
            match &mut m.exprs[id.index()] {
                Expr::Let { pat: Pat::Var(x), .. } => *x = taken,
                Expr::Lambda { params, .. } => params[0].name = taken,
                _ => unreachable!("binders() returns lets and lambdas"),
            }
        }
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.contains("`x` is bound twice")), "{text}\n{ms:?}");
    }

    /// A stored type that is not the inferred one is caught.
    #[test]
    fn wrong_stored_types_are_caught(seed in any::<u64>(), depth in 1u32..6, pick in any::<usize>()) {
        let (text, mut m) = compiled(seed, depth, false);
        let i = pick % m.types.len();
        let wrong = match &m.types[i] {
            Ty::Real => Ty::Int,
            other => Ty::Tuple(vec![other.clone(), Ty::Real]),
        };
        m.types[i] = wrong;
        let ms = messages(&m);
        prop_assert!(ms.iter().any(|s| s.starts_with(&format!("e{i}: stored type"))), "{text}\n{ms:?}");
    }
}

#[test]
fn other_corruptions_are_caught() {
    let (_, m) = compiled(7, 4, false);
    let has = |m: &Module, what: &str| messages(m).iter().any(|s| s.contains(what));
    assert!(messages(&m).is_empty());

    // Tables of the wrong length.
    let mut bad = m.clone();
    bad.types.pop();
    assert!(has(&bad, "the type table has"));
    let mut bad = m.clone();
    bad.spans.push(Default::default());
    assert!(has(&bad, "the span table has"));

    // A shared node (two parents) and an unreachable one.
    let mut bad = m.clone();
    let leaf = bad
        .exprs
        .iter()
        .position(|e| e.children().is_empty())
        .expect("a leaf");
    let ty = bad.types[leaf].clone();
    let copy = bad.add(
        Expr::Tuple(vec![ExprId(leaf as u32), ExprId(leaf as u32)]),
        Default::default(),
    );
    bad.types.push(Ty::Tuple(vec![ty.clone(), ty]));
    assert!(has(&bad, "the node has parents"));
    assert!(has(&bad, &format!("{copy}: the node is unreachable")));

    // Surface-only nodes and wrong arities.
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Section(syntax::Prim::Add);
    assert!(has(&bad, "operator section `(+)` in core form"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("sin"));
    assert!(has(&bad, "unresolved builtin `sin`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("f"));
    assert!(has(&bad, "reference to the definition `f`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Var(Name::new("nowhere"));
    assert!(has(&bad, "free variable `nowhere`"));
    let mut bad = m.clone();
    bad.exprs[leaf] = Expr::Prim {
        op: syntax::Prim::Neg,
        args: vec![],
    };
    assert!(has(&bad, "`-` takes 1 arguments, has 0"));
}

#[test]
fn projection_and_literal_corruptions_are_caught() {
    let m = compile(SourceFile {
        name: "t.ad".into(),
        text: "def f (p : (R, R)) (A : [n]R) : R = p.2 + A[0]".into(),
    })
    .expect("compiles");
    assert!(messages(&m).is_empty());
    let proj = m
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Proj { .. }))
        .expect("a projection");
    let mut bad = m.clone();
    if let Expr::Proj { index, .. } = &mut bad.exprs[proj] {
        *index = 3;
    }
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("tuple index 3 out of range for `(R, R)`"))
    );
    // The index literal must stay an `Int`; as a `Real` it no longer types.
    let lit = m
        .exprs
        .iter()
        .position(|e| matches!(e, Expr::Int(0)))
        .expect("the index");
    let mut bad = m.clone();
    bad.exprs[lit] = Expr::Real(0.0);
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("type inference fails: expected `Int`, found `R`"))
    );
    // A missing parameter type.
    let mut bad = m.clone();
    bad.defs[0].params[0].ty = None;
    assert!(
        messages(&bad)
            .iter()
            .any(|s| s.contains("parameter `p` of `f` has no type"))
    );
}
