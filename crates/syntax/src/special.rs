//! The special functions of the table that Rust's standard library lacks:
//! `erf` and `lgamma` from the C library that the C backend calls too (so
//! the evaluator and compiled code agree bit for bit), and `digamma` and
//! `trigamma`, which libm lacks, written here and in the C runtime
//! (`codegen::runtime`, `ad_digamma`, `ad_trigamma`) with the same
//! algorithm and the same order of operations.
//!
//! Algorithm (both functions): for `x < 0` the reflection formula moves
//! the point to `1 - x > 1`; the recurrence `ψ(x) = ψ(x + 1) - 1 / x`
//! (`ψ'(x) = ψ'(x + 1) + 1 / x²`) moves it to `x >= 10`; there the
//! asymptotic series in `1 / x²` (Abramowitz and Stegun 6.3.18, 6.4.12),
//! to the term in `x^-14`, is below 1e-16 relative. At the poles (0, -1,
//! -2, ...) `digamma` is NaN (the limits from either side differ) and
//! `trigamma` is +inf.

use std::f64::consts::PI;

/// Where a pole of digamma and trigamma lies: 0, -1, -2, ...
fn at_pole(x: f64) -> bool {
    x <= 0.0 && x == x.floor()
}

/// ψ(x), the derivative of `lgamma`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || at_pole(x) || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    let mut x = x;
    let mut acc = 0.0;
    if x < 0.0 {
        // ψ(x) = ψ(1 - x) - π / tan(π x)
        acc -= PI / (PI * x).tan();
        x = 1.0 - x;
    }
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (-1.0 / 12.0
            + f * (1.0 / 120.0
                + f * (-1.0 / 252.0
                    + f * (1.0 / 240.0
                        + f * (-1.0 / 132.0 + f * (691.0 / 32760.0 + f * (-1.0 / 12.0)))))));
    acc + (x.ln() - 0.5 / x + series)
}

/// ψ′(x), the derivative of `digamma`.
pub fn trigamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if at_pole(x) {
        return f64::INFINITY;
    }
    let mut x = x;
    let mut acc = 0.0;
    let mut sign = 1.0;
    if x < 0.0 {
        // ψ′(x) = π² / sin²(π x) - ψ′(1 - x)
        let s = (PI * x).sin();
        acc = PI * PI / (s * s);
        sign = -1.0;
        x = 1.0 - x;
    }
    let mut shifted = 0.0;
    while x < 10.0 {
        shifted += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = (1.0
        + f * (1.0 / 6.0
            + f * (-1.0 / 30.0
                + f * (1.0 / 42.0
                    + f * (-1.0 / 30.0
                        + f * (5.0 / 66.0 + f * (-691.0 / 2730.0 + f * (7.0 / 6.0))))))))
        / x;
    let tail = shifted + (series + 0.5 * f);
    acc + sign * tail
}

pub use libm::{erf, lgamma};

/// The C library's `erf` and `lgamma_r`, the functions the C backend's code
/// calls. Rust's standard library has neither on stable (`f64::erf` and
/// `f64::ln_gamma` are unstable), and a port (the `libm` crate) would not
/// be bit for bit glibc's.
#[allow(unsafe_code)]
mod libm {
    // Reason for `unsafe`: calling two pure functions of the C library
    // (linked into every Rust program on this target) that take and
    // return plain values; `lgamma_r` writes only the sign through the
    // pointer we own, and is the thread-safe form of `lgamma`.
    unsafe extern "C" {
        #[link_name = "erf"]
        fn c_erf(x: f64) -> f64;
        #[link_name = "lgamma_r"]
        fn c_lgamma_r(x: f64, sign: *mut i32) -> f64;
    }

    /// The error function.
    pub fn erf(x: f64) -> f64 {
        // SAFETY: a pure C function of one double.
        unsafe { c_erf(x) }
    }

    /// `log |Γ(x)|`.
    pub fn lgamma(x: f64) -> f64 {
        let mut sign = 0i32;
        // SAFETY: a pure C function; `sign` is a live local it writes once.
        unsafe { c_lgamma_r(x, &mut sign) }
    }
}
