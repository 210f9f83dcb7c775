//! The number of scalars a value of a type holds, as a polynomial in the
//! size variables of the program's types: `[n+1]R` holds `n + 1`,
//! `[k][d]R` holds `d·k`, `(R, [n]R)` holds `n + 1`.

use std::collections::BTreeMap;
use std::fmt;

use semantics::{SizeEnv, Value};
use syntax::{Name, Size, Ty};

/// A product of size variables with their powers.
type Monomial = BTreeMap<Name, u32>;

/// A polynomial with integer coefficients in the size variables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Poly(BTreeMap<Monomial, i64>);

impl Poly {
    /// The constant `c`.
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        p.add_term(Monomial::new(), c);
        p
    }

    /// `v + k`.
    pub fn var(v: &Name, k: i64) -> Poly {
        let mut p = Poly::constant(k);
        p.add_term(Monomial::from([(v.clone(), 1)]), 1);
        p
    }

    fn add_term(&mut self, m: Monomial, c: i64) {
        let e = self.0.entry(m).or_insert(0);
        *e += c;
        self.0.retain(|_, c| *c != 0);
    }

    /// `self + other`.
    pub fn add(&self, other: &Poly) -> Poly {
        let mut out = self.clone();
        for (m, c) in &other.0 {
            out.add_term(m.clone(), *c);
        }
        out
    }

    /// `self · other`.
    pub fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::default();
        for (ma, ca) in &self.0 {
            for (mb, cb) in &other.0 {
                let mut m = ma.clone();
                for (v, k) in mb {
                    *m.entry(v.clone()).or_insert(0) += k;
                }
                out.add_term(m, ca * cb);
            }
        }
        out
    }

    /// The value with every variable bound in `sizes`; `None` if one is not.
    pub fn eval(&self, sizes: &SizeEnv) -> Option<i64> {
        let mut total = 0i64;
        for (m, c) in &self.0 {
            let mut term = *c;
            for (v, k) in m {
                let x = sizes.get(v)? as i64;
                term = term.checked_mul(x.checked_pow(*k)?)?;
            }
            total = total.checked_add(term)?;
        }
        Some(total)
    }
}

impl fmt::Display for Poly {
    /// Highest degree first: `d·k + 2n + 1`; `0` for the zero polynomial.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("0");
        }
        let degree = |m: &Monomial| m.values().sum::<u32>();
        let mut terms: Vec<(&Monomial, &i64)> = self.0.iter().collect();
        terms.sort_by(|a, b| degree(b.0).cmp(&degree(a.0)).then(a.0.cmp(b.0)));
        for (i, (m, c)) in terms.into_iter().enumerate() {
            let (sign, c) = if *c < 0 { ("-", -c) } else { ("+", *c) };
            if i == 0 {
                if sign == "-" {
                    f.write_str("-")?;
                }
            } else {
                write!(f, " {sign} ")?;
            }
            let vars: Vec<String> = m
                .iter()
                .map(|(v, k)| {
                    if *k == 1 {
                        v.to_string()
                    } else {
                        format!("{v}^{k}")
                    }
                })
                .collect();
            match (c, vars.is_empty()) {
                (c, true) => write!(f, "{c}")?,
                (1, false) => f.write_str(&vars.join("·"))?,
                (c, false) => write!(f, "{c}{}", vars.join("·"))?,
            }
        }
        Ok(())
    }
}

/// The scalars a value of type `ty` holds; `None` when a size is only
/// known at run time (`_`) or the type holds a function.
pub fn scalars(ty: &Ty) -> Option<Poly> {
    match ty {
        Ty::Real | Ty::Int | Ty::Bool => Some(Poly::constant(1)),
        Ty::Array(n, elem) => {
            let len = match n {
                Size::Lit(k) => Poly::constant(i64::try_from(*k).ok()?),
                Size::Var(v, k) => Poly::var(v, *k),
                Size::Dyn => return None,
            };
            Some(len.mul(&scalars(elem)?))
        }
        Ty::Tuple(items) => items
            .iter()
            .try_fold(Poly::constant(0), |acc, t| Some(acc.add(&scalars(t)?))),
        Ty::Func(..) => None,
    }
}

/// The scalars a value holds (a function value counts none).
pub fn count(v: &Value) -> u64 {
    match v {
        Value::Real(_) | Value::Int(_) | Value::Bool(_) => 1,
        Value::Tuple(items) | Value::Array(items) => items.iter().map(count).sum(),
        Value::Closure(_) => 0,
    }
}
