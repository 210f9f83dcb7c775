//! A generator of random well-typed Target programs, written as text (so
//! that the front end types them), shaped to give every rule of the
//! optimizer something to do: lambdas applied and let-bound, tuples
//! built and projected, conditionals, the ring identities, constant
//! arrays, scans and shifts, nested maps.
//!
//! A program is `def f (x : R) (y : R) (A : [n]R) (B : [n]R) : (R, [n]R)`
//! with its inputs in `-- at` comments; arrays have 1 to 4 elements (the
//! paper's shifts need a non-empty array), reals are small, and no
//! operation can fail or overflow (no division but by 1 or 2, no `exp`).

/// A deterministic generator from a seed (the tests' one RNG,
/// `testkit::Rng`).
pub struct Gen {
    rng: testkit::Rng,
    fresh: usize,
}

/// The variables in scope.
#[derive(Clone, Default)]
struct Scope {
    scalars: Vec<String>,
    arrays: Vec<String>,
}

impl Gen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: testkit::Rng::new(seed),
            fresh: 0,
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn real(&mut self) -> String {
        let v = (self.pick(401) as f64 - 200.0) / 100.0;
        format!("{v}")
    }

    /// A whole program with its inputs.
    pub fn program(&mut self) -> String {
        let n = 1 + self.pick(4);
        let arr = |g: &mut Gen| {
            let items: Vec<String> = (0..n).map(|_| g.real()).collect();
            format!("[{}]", items.join(", "))
        };
        let (x, y) = (self.real(), self.real());
        let (a, b) = (arr(self), arr(self));
        let scope = Scope {
            scalars: vec!["x".into(), "y".into()],
            arrays: vec!["A".into(), "B".into()],
        };
        let s = self.scalar(&scope, 4);
        let v = self.array(&scope, 3);
        format!(
            "-- at x = {x}\n-- at y = {y}\n-- at A = {a}\n-- at B = {b}\n\
             def f (x : R) (y : R) (A : [n]R) (B : [n]R) : (R, [n]R) =\n  ({s}, {v})\n"
        )
    }

    fn leaf(&mut self, scope: &Scope) -> String {
        match self.pick(6) {
            0 => "0".into(),
            1 => "1".into(),
            2 => ["2", "0.5", "3"][self.pick(3)].into(),
            _ => scope.scalars[self.pick(scope.scalars.len())].clone(),
        }
    }

    fn array_leaf(&mut self, scope: &Scope) -> String {
        scope.arrays[self.pick(scope.arrays.len())].clone()
    }

    fn scalar(&mut self, scope: &Scope, depth: usize) -> String {
        if depth == 0 {
            return self.leaf(scope);
        }
        let d = depth - 1;
        match self.pick(27) {
            0 => self.leaf(scope),
            1 => {
                let op = ["+", "-", "*"][self.pick(3)];
                format!("({} {op} {})", self.scalar(scope, d), self.scalar(scope, d))
            }
            2 => format!("(-(-{}))", self.scalar(scope, d)),
            3 => {
                let f = ["sin", "cos", "tanh"][self.pick(3)];
                format!("({f} {})", self.scalar(scope, d))
            }
            4 => {
                let v = self.name("v");
                let value = self.scalar(scope, d);
                let mut inner = scope.clone();
                inner.scalars.push(v.clone());
                format!("(let {v} = {value} in {})", self.scalar(&inner, d))
            }
            5 => {
                let v = self.name("v");
                let value = self.leaf(scope);
                let mut inner = scope.clone();
                inner.scalars.push(v.clone());
                format!("(let {v} = {value} in {})", self.scalar(&inner, d))
            }
            6 => {
                let (p, q) = (self.name("p"), self.name("q"));
                let (a, b) = (self.scalar(scope, d), self.scalar(scope, d));
                let mut inner = scope.clone();
                inner.scalars.push(p.clone());
                inner.scalars.push(q.clone());
                format!(
                    "(let ({p}, {q}) = ({a}, {b}) in {})",
                    self.scalar(&inner, d)
                )
            }
            7 => {
                let t = self.name("t");
                let (a, b) = (self.scalar(scope, d), self.scalar(scope, d));
                let mut inner = scope.clone();
                inner.scalars.push(format!("{t}.1"));
                inner.scalars.push(format!("{t}.2"));
                format!("(let {t} = ({a}, {b}) in {})", self.scalar(&inner, d))
            }
            8 => format!(
                "({}, {}).{}",
                self.scalar(scope, d),
                self.scalar(scope, d),
                1 + self.pick(2)
            ),
            9 => format!(
                "(if {} < {} then {} else {})",
                self.scalar(scope, d),
                self.scalar(scope, d),
                self.scalar(scope, d),
                self.scalar(scope, d)
            ),
            10 => format!(
                "(if {} then {} else {})",
                ["true", "false", "1 < 2", "not (2 < 1)"][self.pick(4)],
                self.scalar(scope, d),
                self.scalar(scope, d)
            ),
            11 => {
                let same = self.scalar(scope, d);
                format!(
                    "(if {} < {} then {same} else {same})",
                    self.scalar(scope, d),
                    self.scalar(scope, d)
                )
            }
            12 => {
                let u = self.name("u");
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                let body = self.scalar(&inner, d);
                format!("((fun ({u} : R) -> {body}) {})", self.scalar(scope, d))
            }
            13 => {
                let (f, u, w) = (self.name("f"), self.name("u"), self.name("w"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                inner.scalars.push(w.clone());
                let body = self.scalar(&inner, d);
                let call = |g: &mut Gen| {
                    format!(
                        "{f} {} {}",
                        g.scalar(scope, d.min(1)),
                        g.scalar(scope, d.min(1))
                    )
                };
                let uses = if self.pick(2) == 0 {
                    call(self)
                } else {
                    format!("({} + {})", call(self), call(self))
                };
                format!("(let {f} = fun ({u} : R, {w} : R) -> {body} in {uses})")
            }
            14 => {
                let e = self.scalar(scope, d);
                match self.pick(6) {
                    0 => format!("(0 * {e})"),
                    1 => format!("({e} * 1)"),
                    2 => format!("({e} + 0)"),
                    3 => format!("(0 - {e})"),
                    4 => format!("(1 * {e})"),
                    _ => format!("({e} / 1)"),
                }
            }
            15 => ["(2 * 3)", "(1 + 1)", "(sin 0)", "(0.5 - 2)"][self.pick(4)].into(),
            16 => match self.pick(3) {
                0 => format!("(reduce (+) 0 {})", self.array(scope, d)),
                1 => format!("(sum {})", self.array(scope, d)),
                _ => format!("(reduce (*) 1 {})", self.array(scope, d.min(1))),
            },
            17 => {
                let v = self.name("v");
                format!("(let {v} = {} in {v})", self.scalar(scope, d))
            }
            18 => {
                let v = self.name("v");
                format!(
                    "({} + (let {v} = {} in {v} * {v}))",
                    self.scalar(scope, d),
                    self.scalar(scope, d)
                )
            }
            19 => {
                let (p, u1, u2) = (self.name("p"), self.name("u"), self.name("u"));
                let mut s1 = scope.clone();
                s1.scalars.push(u1.clone());
                let mut s2 = scope.clone();
                s2.scalars.push(u2.clone());
                // Shallow components: an `if` of this shape nested in a
                // component would leave a binding in the branch, which
                // `if-tuple` does not split.
                let e = 0;
                format!(
                    "(let {p} = if {} < {} then ({}, fun ({u1} : R) -> {}) else ({}, fun ({u2} : R) -> {}) in {p}.1 + {p}.2 {})",
                    self.scalar(scope, e),
                    self.scalar(scope, e),
                    self.scalar(scope, e),
                    self.scalar(&s1, e),
                    self.scalar(scope, e),
                    self.scalar(&s2, e),
                    self.leaf(scope)
                )
            }
            20 => format!(
                "({} * (if {} < {} then 0 else {}))",
                self.leaf(scope),
                self.scalar(scope, d),
                self.scalar(scope, d),
                self.scalar(scope, d)
            ),
            21 => {
                let c = self.name("C");
                let value = self.array(scope, d);
                let u = self.name("u");
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                match self.pick(3) {
                    0 => format!("(let {c} = {value} in reduce (+) 0 {c})"),
                    // Two reductions of one map: `reduce-fusion`.
                    1 => {
                        let body = self.scalar(&inner, d.min(2));
                        format!(
                            "(let {c} = map (fun ({u} : R) -> {body}) {value} in \
                             reduce (+) 0 {c} + reduce (*) 1 (map (fun (t : R) -> t * 0.5) {c}))"
                        )
                    }
                    // Only one component read: `prune-components` (and
                    // `reduce-fusion`).
                    _ => {
                        let (e1, e2) =
                            (self.scalar(&inner, d.min(1)), self.scalar(&inner, d.min(1)));
                        format!(
                            "(let {c} = map (fun ({u} : R) -> ({e1}, {e2})) {value} in \
                             reduce (+) 0 (map (fun (t : (R, R)) -> t.1) {c}) * \
                             reduce (fun (a : R, b : R) -> max a b) 0 (map (fun (t : (R, R)) -> t.1) {c}))"
                        )
                    }
                }
            }
            22 => format!("({})[0]", self.array(scope, d)),
            23 => {
                let arr = self.array(scope, d);
                match self.pick(3) {
                    0 => format!("(reduce (+) 0 (shift1L (ones_like {arr})))"),
                    1 => format!("(reduce (+) 0 (zeros_like {arr}))"),
                    _ => format!("(reduce (*) 1 (shift1R (ones_like {arr})))"),
                }
            }
            24 => {
                // A continuation applied once, as reverse mode writes them.
                let (k, u) = (self.name("k"), self.name("u"));
                let leaf = self.leaf(scope);
                let arg = self.scalar(scope, d);
                format!("(let {k} = fun ({u} : R) -> {u} * {leaf} in {k} {arg})")
            }
            25 => {
                // The length of a made array: `length-of`.
                let arr = if self.pick(2) == 0 {
                    self.array_leaf(scope)
                } else {
                    self.array(scope, d)
                };
                format!("(if length {arr} == 0 then 0 else {})", self.leaf(scope))
            }
            _ if self.pick(4) == 0 => {
                // One expensive function of the elements in two loops,
                // the second after the first: `share-elementwise`.
                let (v, a) = (self.name("v"), self.leaf(scope));
                let arr = self.array_leaf(scope);
                format!(
                    "(let {v} = reduce (+) 0 (map (fun (z : R) -> sin (z * {a})) {arr}) in \
                     reduce (+) 0 (map (fun (y : R) -> sin (y * {a}) * {v}) {arr}) + {v})"
                )
            }
            _ if self.pick(3) == 0 => {
                // A fold and the prefix scan that ends in its value (or
                // one that does not: another start, a right scan):
                // `reduce-from-scan`.
                let (v, a) = (self.name("v"), self.leaf(scope));
                let arr = self.array_leaf(scope);
                let (fold, scan) = match self.pick(4) {
                    0 => ("reduce (*) 1".to_string(), "scanl (*) 1".to_string()),
                    1 => (
                        format!("foldl (fun (p : R, x : R) -> p * 0.5 + x * {a}) 1"),
                        format!("scanl (fun (q : R, y : R) -> q * 0.5 + y * {a}) 1"),
                    ),
                    2 => ("reduce (+) 0".to_string(), "scanl (+) 1".to_string()),
                    _ => ("reduce (*) 1".to_string(), "scanr (*) 1".to_string()),
                };
                format!("(let {v} = {fold} {arr} in {v} * reduce (+) 0 (shift1R ({scan} {arr})))")
            }
            _ if self.pick(2) == 0 => {
                // The same loop twice, up to the names of its binders:
                // `cse-alpha`.
                let (v, w, a) = (self.name("v"), self.name("v"), self.leaf(scope));
                let arr = self.array_leaf(scope);
                format!(
                    "(let {v} = reduce (+) 0 (map (fun (z : R) -> z * {a}) {arr}) in \
                     let {w} = reduce (+) 0 (map (fun (y : R) -> y * {a}) {arr}) in {v} * {w} + {v})"
                )
            }
            _ => {
                // The same computation twice, as reverse mode repeats the
                // primal's operations in the adjoint.
                let (v, a) = (self.name("v"), self.leaf(scope));
                let f = ["sin", "tanh", "cos"][self.pick(3)];
                format!(
                    "(let {v} = {f} {a} in {v} * ({f} {a} + {}))",
                    self.leaf(scope)
                )
            }
        }
    }

    fn array(&mut self, scope: &Scope, depth: usize) -> String {
        if depth == 0 {
            return self.array_leaf(scope);
        }
        let d = depth - 1;
        match self.pick(17) {
            0 => self.array_leaf(scope),
            1 => {
                let u = self.name("u");
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                let body = self.scalar(&inner, d);
                format!("(map (fun ({u} : R) -> {body}) {})", self.array(scope, d))
            }
            2 => {
                let (u, w) = (self.name("u"), self.name("w"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                inner.scalars.push(w.clone());
                let body = self.scalar(&inner, d);
                if self.pick(2) == 0 {
                    // One array on both sides: `map2-same`.
                    let c = self.name("C");
                    return format!(
                        "(let {c} = {} in map2 (fun ({u} : R, {w} : R) -> {u} * {w} + {body}) {c} {c})",
                        self.array(scope, d)
                    );
                }
                format!(
                    "(map2 (fun ({u} : R, {w} : R) -> {body}) {} {})",
                    self.array(scope, d),
                    self.array(scope, d)
                )
            }
            3 => {
                let (a, b) = (self.array(scope, d), self.array(scope, d));
                match self.pick(4) {
                    0 => format!("(map2 (*) {a} (ones_like {b}))"),
                    1 => format!("(map2 (+) {a} (zeros_like {b}))"),
                    2 => format!("(map2 (*) (zeros_like {a}) {b})"),
                    _ => format!("(map2 (+) (zeros_like {a}) {b})"),
                }
            }
            4 => {
                let u = self.name("u");
                format!("(map (fun ({u} : R) -> {u}) {})", self.array(scope, d))
            }
            5 => {
                let (u, w) = (self.name("u"), self.name("w"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                let body = self.scalar(&inner, d);
                format!(
                    "(map2 (fun ({u} : R, {w} : R) -> {body}) {} {})",
                    self.array(scope, d),
                    self.array(scope, d)
                )
            }
            6 => {
                let a = self.array(scope, d);
                match self.pick(5) {
                    0 => format!("(shift1R (scanl (*) 1 {a}))"),
                    1 => format!("(shift1R (scanl (+) 0 {a}))"),
                    2 => format!("(scanr (*) 1 (shift1L {a}))"),
                    3 => format!("(shift1L (scanr (*) 1 (ones_like {a})))"),
                    _ => format!("(shift1R (scanl (+) 0 (zeros_like {a})))"),
                }
            }
            7 => {
                let a = self.array(scope, d);
                let u = self.name("u");
                match self.pick(3) {
                    0 => format!("(ones_like {a})"),
                    1 => format!("(zeros_like {a})"),
                    _ => format!("(map (fun ({u} : R) -> 1) (map (fun (z : R) -> z * 2) {a}))"),
                }
            }
            8 => {
                let c = self.name("C");
                let value = self.array(scope, d);
                let mut inner = scope.clone();
                inner.arrays.push(c.clone());
                format!("(let {c} = {value} in {})", self.array(&inner, d))
            }
            9 => format!(
                "(if {} < {} then {} else {})",
                self.scalar(scope, d.min(1)),
                self.scalar(scope, d.min(1)),
                self.array(scope, d),
                self.array(scope, d)
            ),
            10 => {
                let (u, v) = (self.name("u"), self.name("u"));
                let mut s1 = scope.clone();
                s1.scalars.push(u.clone());
                let mut s2 = scope.clone();
                s2.scalars.push(v.clone());
                format!(
                    "(map (fun ({u} : R) -> {}) (map (fun ({v} : R) -> {}) {}))",
                    self.scalar(&s1, d),
                    self.scalar(&s2, d),
                    self.array(scope, d)
                )
            }
            11 => {
                let a = self.array(scope, d);
                format!("(map2 (+) (shift1L (scanl (+) 0 (ones_like {a}))) {a})")
            }
            12 => {
                let (t, u) = (self.name("t"), self.name("u"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                format!(
                    "(let {t} = ({}, fun ({u} : R) -> {}) in map {t}.2 {})",
                    self.scalar(scope, d),
                    self.scalar(&inner, d),
                    self.array(scope, d)
                )
            }
            13 => {
                let a = self.array(scope, d);
                format!(
                    "(map2 (fun (a : R, b : R) -> a * b) {a} (shift1L (scanr (*) 1 (ones_like {a}))))"
                )
            }
            16 => {
                // An array read element by element in a loop over
                // another: `gather-fusion`.
                let (c, u, w) = (self.name("C"), self.name("u"), self.name("w"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                let body = self.scalar(&inner, d);
                let value = self.array(scope, d);
                let over = self.array(scope, d);
                format!(
                    "(let {c} = map (fun ({u} : R) -> {body}) {value} in \
                     map (fun ({w} : R) -> {w} * {c}[0] + {c}[length {c} - 1]) {over})"
                )
            }
            15 => {
                // Reverse mode's two loops over one array: the forward one
                // computes an inner loop and goes on (`let a = .. in a * a`),
                // the backward one needs the inner loop's value again.
                let (x, s1) = (self.name("X"), self.name("S"));
                let (u, v, z1, z2) = (
                    self.name("u"),
                    self.name("u"),
                    self.name("z"),
                    self.name("z"),
                );
                let xs = self.array(scope, d.min(1));
                let b = self.array_leaf(scope);
                let k = self.leaf(scope);
                let first = if self.pick(2) == 0 {
                    // The inner loop fused with what follows it.
                    format!("map (fun ({z1} : R) -> let a = ({z1} * {u} + {k}) / 2 in a * a) {b}")
                } else {
                    format!("map (fun ({z1} : R) -> ({z1} * {u} + {k}) / 2) {b}")
                };
                format!(
                    "(let {x} = {xs} in let {s1} = map (fun ({u} : R) -> reduce (+) 0 ({first})) {x} in \
                     map2 (fun ({v} : R, s : R) -> s * reduce (+) 0 (map (fun ({z2} : R) -> ({z2} * {v} + {k}) / 2) {b})) {x} {s1})"
                )
            }
            _ => {
                // Zipped, mapped, unzipped: the shape of reverse mode's map2.
                let (p, u, w) = (self.name("P"), self.name("u"), self.name("w"));
                let mut inner = scope.clone();
                inner.scalars.push(u.clone());
                inner.scalars.push(w.clone());
                let (e1, e2) = (self.scalar(&inner, d.min(1)), self.scalar(&inner, d.min(1)));
                format!(
                    "(let {p} = map2 (fun ({u} : R, {w} : R) -> ({e1}, {e2})) {} {} in \
                     map2 (+) (map (fun (t : (R, R)) -> t.1) {p}) (map (fun (t : (R, R)) -> t.2) {p}))",
                    self.array(scope, d),
                    self.array(scope, d)
                )
            }
        }
    }
}
