//! A generator of random first-order Source programs (the input of
//! reverse mode), as text with their inputs in `-- at` comments: scalar
//! programs (`let`s, tuples, `+ - * /`, `sin cos tan tanh exp log sqrt
//! abs`, `pow max min`) over three reals, each operator where its value
//! is defined (`log (1 + abs e)`, `e / (2 + sin e')`, `pow` of a base
//! `1 + abs e` or to an integral power),
//! and, when asked, array programs (`map`, `map2`, `reduce` with `+` or
//! `*`) over a real and two arrays of 1 to 4 elements. (No `if`: reverse
//! mode does not take it yet.)

/// A deterministic generator from a seed (the tests' one random number
/// generator, `testkit::Rng`).
pub struct SourceGen {
    rng: testkit::Rng,
    fresh: usize,
    arrays: bool,
}

impl SourceGen {
    /// A generator for `seed`; `arrays` allows array operations.
    pub fn new(seed: u64, arrays: bool) -> SourceGen {
        SourceGen {
            rng: testkit::Rng::new(seed),
            fresh: 0,
            arrays,
        }
    }

    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    fn name(&mut self) -> String {
        self.fresh += 1;
        format!("v{}", self.fresh)
    }

    fn real(&mut self) -> String {
        format!("{}", (self.pick(301) as f64 - 150.0) / 100.0)
    }

    /// A whole program.
    pub fn program(&mut self) -> String {
        if self.arrays {
            let n = 1 + self.pick(4);
            let arr = |g: &mut SourceGen| {
                let items: Vec<String> = (0..n).map(|_| g.real()).collect();
                format!("[{}]", items.join(", "))
            };
            let (x, a, b) = (self.real(), arr(self), arr(self));
            let main = self.scalar(&["x".to_string()], 3, true);
            // Mostly programs that read every input (Theorem 5.4 needs it).
            let body = match self.pick(4) {
                0 => main,
                _ => format!("{main} + x * {}", self.reduction(&["x".to_string()], 2)),
            };
            format!(
                "-- at x = {x}\n-- at A = {a}\n-- at B = {b}\n\
                 def f (x : R) (A : [n]R) (B : [n]R) : R =\n  {body}\n"
            )
        } else {
            let (x, y, z) = (self.real(), self.real(), self.real());
            let vars = ["x".to_string(), "y".to_string(), "z".to_string()];
            let n = 2 + self.pick(5);
            let body = self.chain(&vars, n);
            format!(
                "-- at x = {x}\n-- at y = {y}\n-- at z = {z}\n\
                 def f (x : R) (y : R) (z : R) : R =\n{body}"
            )
        }
    }

    /// A chain of `let`s ending in a scalar.
    fn chain(&mut self, vars: &[String], n: usize) -> String {
        let mut vars = vars.to_vec();
        let mut out = String::new();
        for _ in 0..n {
            let v = self.name();
            let e = self.scalar(&vars, 2, false);
            out.push_str(&format!("  let {v} = {e} in\n"));
            vars.push(v);
        }
        let last = self.scalar(&vars, 2, false);
        out.push_str(&format!("  {last}\n"));
        out
    }

    fn leaf(&mut self, vars: &[String]) -> String {
        match self.pick(5) {
            0 => ["2", "0.5", "1"][self.pick(3)].to_string(),
            _ => vars[self.pick(vars.len())].clone(),
        }
    }

    fn scalar(&mut self, vars: &[String], depth: usize, arrays: bool) -> String {
        if depth == 0 {
            return self.leaf(vars);
        }
        let d = depth - 1;
        let kinds = if arrays { 12 } else { 10 };
        match self.pick(kinds) {
            0 | 1 => {
                let op = ["+", "-", "*"][self.pick(3)];
                format!(
                    "({} {op} {})",
                    self.scalar(vars, d, arrays),
                    self.scalar(vars, d, arrays)
                )
            }
            2 => {
                let f = ["sin", "cos", "tanh"][self.pick(3)];
                format!("({f} {})", self.scalar(vars, d, arrays))
            }
            3 => {
                let v = self.name();
                let value = self.scalar(vars, d, arrays);
                let mut inner = vars.to_vec();
                inner.push(v.clone());
                format!("(let {v} = {value} in {})", self.scalar(&inner, d, arrays))
            }
            4 => format!(
                "({}, {}).{}",
                self.scalar(vars, d, arrays),
                self.scalar(vars, d, arrays),
                1 + self.pick(2)
            ),
            5 => format!("({} - {})", self.leaf(vars), self.scalar(vars, d, arrays)),
            6 => self.leaf(vars),
            7 => format!("({} * {})", self.leaf(vars), self.scalar(vars, d, arrays)),
            8 => {
                let f = ["tan", "abs", "exp", "sqrt", "log"][self.pick(5)];
                let arg = self.scalar(vars, d, arrays);
                match f {
                    // Arguments where the derivative is finite.
                    "sqrt" | "log" => format!("({f} (1 + abs {arg}))"),
                    "exp" => format!("(exp (sin {arg}))"),
                    _ => format!("({f} {arg})"),
                }
            }
            9 => {
                let (a, b) = (self.scalar(vars, d, arrays), self.scalar(vars, d, arrays));
                match self.pick(4) {
                    0 => format!("({a} / (2 + sin {b}))"),
                    // A base where any exponent is defined, or an
                    // integral exponent for any base.
                    1 if self.pick(2) == 0 => format!("(pow (1 + abs {a}) {b})"),
                    1 => format!("(pow {a} {})", ["2", "3"][self.pick(2)]),
                    2 => format!("(max {a} {b})"),
                    _ => format!("(min {a} {b})"),
                }
            }
            _ => self.reduction(vars, d),
        }
    }

    /// A real from an array.
    fn reduction(&mut self, vars: &[String], depth: usize) -> String {
        let arr = self.array(vars, depth);
        match self.pick(3) {
            0 => format!("(reduce (+) 0 {arr})"),
            1 => format!("(reduce (*) 1 {arr})"),
            _ => format!("(sum {arr})"),
        }
    }

    fn array(&mut self, vars: &[String], depth: usize) -> String {
        let leaf = ["A", "B"][self.pick(2)].to_string();
        if depth == 0 {
            return leaf;
        }
        let d = depth - 1;
        let u = self.name();
        let mut inner = vars.to_vec();
        inner.push(u.clone());
        match self.pick(4) {
            0 => leaf,
            1 => format!(
                "(map (fun ({u} : R) -> {}) {})",
                self.scalar(&inner, d.min(1), false),
                self.array(vars, d)
            ),
            2 => {
                let w = self.name();
                inner.push(w.clone());
                format!(
                    "(map2 (fun ({u} : R, {w} : R) -> {}) {} {})",
                    self.scalar(&inner, d.min(1), false),
                    self.array(vars, d),
                    self.array(vars, d)
                )
            }
            _ => format!("(map2 (*) {} {})", self.array(vars, d), self.array(vars, d)),
        }
    }
}
