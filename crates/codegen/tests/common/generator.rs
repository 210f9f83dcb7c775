//! A seeded generator of well-typed programs mixing every construct the C
//! backend compiles; used by the generated-program tests.

#![allow(dead_code)]

/// `i` clamped into `0..=hi` (integer `min`/`max` are not in the language).
pub fn clamp(i: &str, hi: &str) -> String {
    format!("(if ({i}) < 0 then 0 else if ({i}) > ({hi}) then ({hi}) else ({i}))")
}

/// The tests' one random number generator (SplitMix64).
pub use testkit::Rng;

/// The static size of an array expression: a base (`n`, or a unique
/// dynamic size) and an offset, so that `map2` and `if` only combine
/// arrays whose sizes the type checker can equate.
#[derive(Clone, PartialEq, Debug)]
pub struct Tag(pub String, pub i64);

#[derive(Clone, Debug)]
pub enum T {
    R,
    I,
    A(Tag),
}

pub struct Gen {
    pub rng: Rng,
    pub fresh: usize,
}

impl Gen {
    pub fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    pub fn pick<'e>(
        &mut self,
        env: &'e [(String, T)],
        want: fn(&T) -> bool,
    ) -> Option<&'e (String, T)> {
        let cands: Vec<&(String, T)> = env.iter().filter(|(_, t)| want(t)).collect();
        if cands.is_empty() {
            None
        } else {
            Some(cands[self.rng.below(cands.len())])
        }
    }

    pub fn real(&mut self, env: &[(String, T)], d: usize) -> String {
        let choice = if d == 0 {
            self.rng.below(2)
        } else {
            self.rng.below(13)
        };
        match choice {
            0 => match self.pick(env, |t| matches!(t, T::R)) {
                Some((n, _)) => n.clone(),
                None => "x".into(),
            },
            1 => ["0.5", "(-1.25)", "2", "3", "0.1", "1"][self.rng.below(6)].into(),
            2 => {
                let a = self.real(env, d - 1);
                match self.rng.below(7) {
                    0 => format!("sin ({a})"),
                    1 => format!("cos ({a})"),
                    2 => format!("exp ({a} * 0.1)"),
                    3 => format!("tanh ({a})"),
                    4 => format!("abs ({a})"),
                    5 => format!("sqrt (abs ({a}))"),
                    _ => format!("log (abs ({a}) + 1)"),
                }
            }
            3 => {
                let (a, b) = (self.real(env, d - 1), self.real(env, d - 1));
                match self.rng.below(7) {
                    0 => format!("({a} + {b})"),
                    1 => format!("({a} - {b})"),
                    2 => format!("({a} * {b})"),
                    3 => format!("({a} / (abs ({b}) + 1))"),
                    4 => format!("max ({a}) ({b})"),
                    5 => format!("min ({a}) ({b})"),
                    _ => format!("pow (abs ({a}) + 0.5) 1.5"),
                }
            }
            4 => {
                let c = self.boolean(env, d - 1);
                let (a, b) = (self.real(env, d - 1), self.real(env, d - 1));
                format!("(if {c} then {a} else {b})")
            }
            5 => {
                let v = self.name("v");
                let (value, t) = self.any(env, d - 1);
                let mut env2 = env.to_vec();
                env2.push((v.clone(), t));
                let body = self.real(&env2, d - 1);
                format!("(let {v} = {value} in {body})")
            }
            6 => {
                let (a, _) = self.array(env, d - 1);
                match self.rng.below(3) {
                    0 => format!("reduce (+) 0 ({a})"),
                    1 => format!("reduce (*) 1 (map (fun y -> 1 + y * 0.01) ({a}))"),
                    _ => format!("reduce (fun (p, q) -> max p q) (-100) ({a})"),
                }
            }
            7 => {
                let (a, _) = self.array(env, d - 1);
                let (acc, y) = (self.name("acc"), self.name("y"));
                let z = self.real(env, d - 1);
                let mut env2 = env.to_vec();
                env2.push((acc.clone(), T::R));
                env2.push((y.clone(), T::R));
                let body = self.real(&env2, d - 1);
                format!("foldl (fun ({acc}, {y}) -> {acc} * 0.5 + {body}) ({z}) ({a})")
            }
            8 => {
                let (a, _) = self.array(env, d - 1);
                let i = self.int(env, d - 1);
                let r = self.real(env, d - 1);
                let v = self.name("arr");
                format!(
                    "(let {v} = {a} in if length {v} > 0 then {v}[{}] else {r})",
                    clamp(&i, &format!("length {v} - 1"))
                )
            }
            9 => {
                let (p, q) = (self.name("p"), self.name("q"));
                let (a, b) = (self.real(env, d - 1), self.real(env, d - 1));
                let mut env2 = env.to_vec();
                env2.push((p.clone(), T::R));
                env2.push((q.clone(), T::R));
                let body = self.real(&env2, d - 1);
                if self.rng.below(2) == 0 {
                    format!("(let ({p}, {q}) = ({a}, {b}) in {body})")
                } else {
                    format!("(({a}, {b}).{})", 1 + self.rng.below(2))
                }
            }
            10 => {
                let (acc, i) = (self.name("acc"), self.name("i"));
                let z = self.real(env, d - 1);
                let n = self.int(env, d - 1);
                let mut env2 = env.to_vec();
                env2.push((acc.clone(), T::R));
                env2.push((i.clone(), T::I));
                let body = self.real(&env2, d - 1);
                format!(
                    "ifold (fun ({acc}, {i}) -> {acc} * 0.5 + {body}) ({z}) ({})",
                    clamp(&n, "4")
                )
            }
            11 => {
                // A pair accumulator.
                let (a, _) = self.array(env, d - 1);
                let (p, y) = (self.name("p"), self.name("y"));
                format!(
                    "(foldl (fun ({p}, {y}) -> ({p}.2, {p}.1 * 0.5 + {y})) (1, 2) ({a})).{}",
                    1 + self.rng.below(2)
                )
            }
            _ => {
                // A row of a matrix, summed.
                let (a, _) = self.array(env, d - 1);
                let (v, y, z, r, s) = (
                    self.name("m"),
                    self.name("y"),
                    self.name("z"),
                    self.name("row"),
                    self.name("src"),
                );
                format!(
                    "(let {s} = {a} in let {v} = map (fun {y} -> map (fun {z} -> {z} * {y} + 1) {s}) {s} in reduce (+) 0 (map (fun {r} -> reduce (+) 0 {r}) {v}))"
                )
            }
        }
    }

    pub fn int(&mut self, env: &[(String, T)], d: usize) -> String {
        let choice = if d == 0 {
            self.rng.below(2)
        } else {
            self.rng.below(5)
        };
        match choice {
            0 => match self.pick(env, |t| matches!(t, T::I)) {
                Some((n, _)) => n.clone(),
                None => "k".into(),
            },
            1 => ["0", "1", "2", "3"][self.rng.below(4)].into(),
            2 => {
                let (a, _) = self.array(env, d - 1);
                format!("length ({a})")
            }
            3 => {
                let (a, b) = (self.int(env, d - 1), self.int(env, d - 1));
                format!("({a} {} {b})", ["+", "-"][self.rng.below(2)])
            }
            _ => {
                let c = self.boolean(env, d - 1);
                let (a, b) = (self.int(env, d - 1), self.int(env, d - 1));
                format!("(if {c} then {a} else {b})")
            }
        }
    }

    pub fn boolean(&mut self, env: &[(String, T)], d: usize) -> String {
        match if d == 0 { 0 } else { self.rng.below(4) } {
            0 => {
                let (a, b) = (
                    self.real(env, d.saturating_sub(1)),
                    self.real(env, d.saturating_sub(1)),
                );
                format!(
                    "({a} {} {b})",
                    ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6)]
                )
            }
            1 => {
                let (a, b) = (self.int(env, d - 1), self.int(env, d - 1));
                format!("({a} {} {b})", ["<", "==", "!="][self.rng.below(3)])
            }
            2 => {
                let (a, b) = (self.boolean(env, d - 1), self.boolean(env, d - 1));
                format!("({a} {} {b})", ["&&", "||"][self.rng.below(2)])
            }
            _ => format!("not ({})", self.boolean(env, d - 1)),
        }
    }

    pub fn array(&mut self, env: &[(String, T)], d: usize) -> (String, Tag) {
        let choice = if d == 0 { 0 } else { self.rng.below(11) };
        match choice {
            0 => match self.pick(env, |t| matches!(t, T::A(_))) {
                Some((n, T::A(tag))) => (n.clone(), tag.clone()),
                _ => ("A".into(), Tag("n".into(), 0)),
            },
            1 => {
                let (a, tag) = self.array(env, d - 1);
                let y = self.name("y");
                let mut env2 = env.to_vec();
                env2.push((y.clone(), T::R));
                let body = self.real(&env2, d - 1);
                (format!("map (fun {y} -> {body}) ({a})"), tag)
            }
            2 => {
                let (a, tag) = self.array(env, d - 1);
                let same = env
                    .iter()
                    .filter(|(_, t)| matches!(t, T::A(t2) if *t2 == tag))
                    .map(|(n, _)| n.clone())
                    .collect::<Vec<_>>();
                let v = self.name("arr");
                let b = if !same.is_empty() && self.rng.below(2) == 0 {
                    same[self.rng.below(same.len())].clone()
                } else {
                    format!("map (fun w -> w * 2 - 1) {v}")
                };
                let (y, z) = (self.name("y"), self.name("z"));
                let mut env2 = env.to_vec();
                env2.push((y.clone(), T::R));
                env2.push((z.clone(), T::R));
                let body = self.real(&env2, d - 1);
                (
                    format!("(let {v} = {a} in map2 (fun ({y}, {z}) -> {body}) {v} ({b}))"),
                    tag,
                )
            }
            3 | 4 => {
                let (a, Tag(base, off)) = self.array(env, d - 1);
                let z = self.real(env, d - 1);
                let (acc, y) = (self.name("acc"), self.name("y"));
                let f = if choice == 3 {
                    format!("scanl (fun ({acc}, {y}) -> {acc} * 0.5 + {y})")
                } else {
                    format!("scanr (fun ({y}, {acc}) -> {y} - {acc} * 0.5)")
                };
                (format!("{f} ({z}) ({a})"), Tag(base, off + 1))
            }
            5 => {
                let (a, Tag(base, off)) = self.array(env, d - 1);
                let f = ["shift1L", "shift1R"][self.rng.below(2)];
                (format!("{f} ({a})"), Tag(base, off - 1))
            }
            6 => {
                let n = self.int(env, d - 1);
                let i = self.name("i");
                let mut env2 = env.to_vec();
                env2.push((i.clone(), T::I));
                let body = self.real(&env2, d - 1);
                let tag = Tag(self.name("dyn"), 0);
                (
                    format!("build ({}) (fun {i} -> {body})", clamp(&n, "5")),
                    tag,
                )
            }
            7 => {
                let (a, tag) = self.array(env, d - 1);
                let c = self.boolean(env, d - 1);
                let v = self.name("arr");
                (
                    format!("(let {v} = {a} in if {c} then {v} else map (fun w -> w + 1) {v})"),
                    tag,
                )
            }
            8 => {
                let items: Vec<String> = (0..3).map(|_| self.real(env, d - 1)).collect();
                (format!("[{}]", items.join(", ")), Tag("lit3".into(), 0))
            }
            9 => {
                let v = self.name("v");
                let (value, t) = self.any(env, d - 1);
                let mut env2 = env.to_vec();
                env2.push((v.clone(), t));
                let (body, tag) = self.array(&env2, d - 1);
                (format!("(let {v} = {value} in {body})"), tag)
            }
            _ => {
                // A row of an array of arrays.
                let (a, tag) = self.array(env, d - 1);
                let i = self.int(env, d - 1);
                let (v, r, z, s) = (
                    self.name("m"),
                    self.name("r"),
                    self.name("z"),
                    self.name("src"),
                );
                (
                    format!(
                        "(let {s} = {a} in let {v} = build (length {s} + 1) (fun {r} -> map (fun {z} -> {z} + 1) {s}) in {v}[{}])",
                        clamp(&i, &format!("length {v} - 1"))
                    ),
                    tag,
                )
            }
        }
    }

    pub fn any(&mut self, env: &[(String, T)], d: usize) -> (String, T) {
        match self.rng.below(3) {
            0 => (self.real(env, d), T::R),
            1 => (self.int(env, d), T::I),
            _ => {
                let (a, tag) = self.array(env, d);
                (a, T::A(tag))
            }
        }
    }
}
