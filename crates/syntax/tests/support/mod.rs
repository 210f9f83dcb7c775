//! Test support: a generator of well-typed programs and a reference
//! evaluator, both independent of the compiler's own passes.

#![allow(dead_code)]

pub mod eval;

/// The types the generator works with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum T {
    R,
    I,
    B,
    /// `[n]R`
    A,
    /// `(R, R)`
    P,
}

/// A deterministic generator of well-typed programs (drawing from the
/// tests' one RNG, `testkit::Rng`).
pub struct Gen {
    rng: testkit::Rng,
    fresh: u32,
    /// Whether to apply lambdas.
    apps: bool,
    /// Whether to use `diff`.
    diffs: bool,
    /// Whether a helper definition `g (a : R) (V : [m]R) : R` exists.
    helper: bool,
}

impl Gen {
    pub fn new(seed: u64, apps: bool, diffs: bool) -> Gen {
        Gen {
            // Nearby seeds give unrelated streams.
            rng: testkit::Rng::for_case(seed, 0),
            fresh: 0,
            apps,
            diffs,
            helper: false,
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
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
            2 if self.apps => {
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
            T::R => match self.pick(10) {
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
                8 if self.helper => {
                    let a = self.expr(T::R, env, d);
                    let v = self.expr(T::A, env, d);
                    format!("(g {a} {v})")
                }
                _ if self.diffs => {
                    let z = self.name("z");
                    let a = self.expr(T::R, env, d);
                    env.push((z.clone(), T::R));
                    let body = self.expr(T::R, env, d);
                    env.pop();
                    format!("(diff (fun {z} -> {body}) {a})")
                }
                _ => self.leaf(T::R, env),
            },
            T::I => match self.pick(5) {
                0 => format!("(length {})", self.expr(T::A, env, d)),
                1 => format!("({} + 1)", self.expr(T::I, env, d)),
                2 => format!(
                    "({} * {})",
                    self.expr(T::I, env, d),
                    self.expr(T::I, env, d)
                ),
                3 => {
                    let (s, i) = (self.name("s"), self.name("i"));
                    let z = self.expr(T::I, env, d);
                    env.push((s.clone(), T::I));
                    env.push((i.clone(), T::I));
                    let body = self.expr(T::I, env, d);
                    env.truncate(env.len() - 2);
                    format!("(ifold (fun ({s}, {i}) -> {body}) {z} 3)")
                }
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
            T::A => match self.pick(6) {
                5 => {
                    let a = self.leaf(T::A, env);
                    let i = self.name("i");
                    env.push((i.clone(), T::I));
                    let body = self.expr(T::R, env, d);
                    env.pop();
                    format!("(build (length {a}) (fun {i} -> {a}[{i}] + {body}))")
                }
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

    /// A definition `f (x : R) (k : Int) (A : [n]R) (B : [n]R) (p : (R, R))`.
    pub fn program(&mut self, depth: u32) -> String {
        // Sometimes a helper definition first, which the entry may call.
        let mut helper = String::new();
        if self.pick(2) == 0 {
            let mut env = vec![("a".to_string(), T::R), ("V".to_string(), T::A)];
            let body = self.expr(T::R, &mut env, depth.min(3));
            helper = format!("def g (a : R) (V : [m]R) : R =\n  {body}\n");
            self.helper = true;
        }
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
            "{helper}def f (x : R) (k : Int) (A : [n]R) (B : [n]R) (p : (R, R)) : {ret_ty} =\n  {body}\n"
        )
    }
}
