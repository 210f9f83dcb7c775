//! `forward`: forward-mode automatic differentiation by source
//! transformation.
//!
//! In: a module in core form (`syntax::ir`: every builtin a `Prim`, binders
//! unique within a definition, `types` filled). Out: an ordinary Target
//! module, in core form again, that the reference evaluator runs; there is
//! no run-time derivative operator.
//!
//! The heart is the macro D of seeds/002 (Definition 182.6) on the whole
//! higher-order language, extended to arrays by dF~'s rules (seeds/001,
//! Fig. 6): `D R = (R, R)`, D is the identity on variables and commutes with
//! every constructor and builtin, and at a real-valued scalar operation it
//! emits the operation clause with the partial derivatives of
//! `table.rs`. On top of it:
//! - [`expand`] replaces the derivative constructs `diff`, `grad`, `jvp`,
//!   `vjp`, `jacob` by code around `D f`, innermost first, so nesting is D
//!   applied twice and never confuses perturbations (Remark 182.17);
//! - [`jvp`], [`grad_program`], [`jacobian_program`], [`hessian_program`]
//!   build a whole-program derivative of an entry definition.
//!
//! Invariants of every output: no derivative construct is left; every node
//! is typed (`types` parallel to `exprs`); every node has one parent; every
//! binder is unique within its definition; nodes created from a primal node
//! carry its span. See docs/forward.md for the calling conventions, the
//! derivative table and the vectorised (dF~) mode.

mod build;
mod dual;
mod error;
mod expand;
mod hist;
mod partials;
mod program;
mod rev;
mod rules;
mod shape;
mod table;

pub use error::Error;
pub use rev::Reverse;

use syntax::{Def, Module, Ty};

/// How the one-hot seeds of a gradient or a Jacobian are pushed through
/// the program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// One forward pass per scalar of the input (Definition 182.6 as it
    /// stands), the passes written as a `build` over the seed index so the
    /// loop is in the program (dF~'s `grad`/`jacob`, Fig. 5).
    #[default]
    Passes,
    /// dF~'s vectorised form: all k seeds in one pass, `D R = (R, [k]R)`.
    /// Every seed-independent computation (the primal values and the partial
    /// derivatives) is done once, outside the loops over the k directions:
    /// the loop-invariant code motion of dF~ Section 4, by construction.
    Vectorised,
}

/// Options of the transformations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// How `grad`, `jacob` (constructs and programs) run their seeds.
    /// `diff`, `jvp` and `vjp` always use one direction per pass.
    pub mode: Mode,
    /// The deliberately broken macro of Exercise 182.8: the operation clause
    /// keeps only the `i = 1` summand. Reachable only from tests (see note
    /// [mutant] below); never set it elsewhere.
    #[doc(hidden)]
    pub mutant_first_summand_only: bool,
}

/// `D τ`: the type of the dual of a value of type `τ` (one direction).
/// `D R = (R, R)`; `Int` and `Bool` are their own duals; tuples, arrays
/// (`D [n]T = [n](D T)`, arrays of dual numbers as in dF~) and functions
/// (`D ((T1, ..., Tk) -> U) = (D T1, ..., D Tk) -> D U`) are mapped
/// componentwise.
pub fn dual_ty(ty: &Ty) -> Ty {
    dual::Rep::Scalar.dual_ty(ty)
}

/// Expands every derivative construct of `m` (innermost first) with the
/// default configuration. The result has no construct left.
pub fn expand(m: &Module) -> Result<Module, Error> {
    expand::expand_module(m, &Config::default(), None)
}

/// [`expand`] with options.
pub fn expand_with(m: &Module, cfg: &Config) -> Result<Module, Error> {
    expand::expand_module(m, cfg, None)
}

/// [`expand_with`], with reverse mode for `grad_rev` and `vjp_rev` given by
/// the driver (this crate does not depend on the reverse-mode pipeline):
/// each is closed into a definition, differentiated by `rev` and spliced
/// back as Source code (docs/forward.md, "Reverse mode inside the
/// language"). Without it ([`expand`]) those two are an error.
pub fn expand_with_reverse(m: &Module, cfg: &Config, rev: &dyn Reverse) -> Result<Module, Error> {
    expand::expand_module(m, cfg, Some(rev))
}

/// The Jacobian-vector product of `entry`: a module with one definition
/// `<entry>_jvp (x1 : T1) ... (xn : Tn) (dx1 : T1) ... (dxn : Tn) : (U, U)`
/// (the tangent parameters are named `d<name>`, or fresh names if those are
/// taken) returning the entry's value and its directional derivative along
/// the tangents. `Int`/`Bool` tangents are ignored; `Int`/`Bool` parts of
/// the result's tangent are `0`/`false`.
pub fn jvp(m: &Module, entry: &Def) -> Result<Module, Error> {
    program::jvp(m, entry, &Config::default())
}

/// [`jvp`] with options.
pub fn jvp_with(m: &Module, entry: &Def, cfg: &Config) -> Result<Module, Error> {
    program::jvp(m, entry, cfg)
}

/// The gradient of a real-valued `entry`: a module with one definition
/// `<entry>_grad` with the entry's parameters, returning the flat tuple
/// `(value, g_1, ..., g_k)` where `g_i : T_i` is the gradient with respect
/// to the i-th parameter named in `wrt` (all parameters in order when
/// `None`); just `value` when k = 0 (there are no 1-tuples). Gradients with
/// respect to `Int`/`Bool` slots are `0`/`false`. The same calling
/// convention as the reverse-mode pipeline.
pub fn grad_program(m: &Module, entry: &Def, wrt: Option<&[String]>) -> Result<Module, Error> {
    program::grad(m, entry, wrt, &Config::default())
}

/// [`grad_program`] with options (e.g. `Mode::Vectorised`).
pub fn grad_program_with(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    cfg: &Config,
) -> Result<Module, Error> {
    program::grad(m, entry, wrt, cfg)
}

/// The Jacobian of `entry : (T1, ..., Tn) -> U` (jacfwd): a module with one
/// definition `<entry>_jacobian` with the entry's parameters, returning
/// `(value, J_1, ..., J_k)` for the parameters named in `wrt` (all when
/// `None`), where `J_i` has the shape of `U` with every real replaced by a
/// value of type `T_i`: the gradient of that output real with respect to
/// parameter i. For `U = [m]R` and `T_i = [n]R`, `J_i : [m][n]R` and
/// `J_i[r][c] = ∂y_r / ∂x_c`: row r is the gradient of output r.
pub fn jacobian_program(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    cfg: &Config,
) -> Result<Module, Error> {
    program::jacobian(m, entry, wrt, cfg)
}

/// The Hessian of a real-valued `entry` (forward over forward: the forward
/// Jacobian of [`grad_program`]): a module with one definition
/// `<entry>_hessian` with the entry's parameters, returning
/// `(value, g_1, ..., g_k, H_11, H_12, ..., H_1k, H_21, ..., H_kk)` where
/// `H_ij` has the shape of `T_i` with every real replaced by a value of type
/// `T_j`: `H_ij[a][b] = ∂² f / ∂x_i[a] ∂x_j[b]`. For one parameter
/// `x : [n]R` that is `(value, g, H)` with `H : [n][n]R`.
pub fn hessian_program(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    cfg: &Config,
) -> Result<Module, Error> {
    program::hessian(m, entry, wrt, cfg)
}

// Note [mutant]
// ~~~~~~~~~~~~~
// Exercise 182.8 asks for a mutation test: a variant of the macro whose
// operation clause keeps only the i = 1 summand of Σ_i ∂_i op * dx_i must
// fail the acceptance test `x1 * x2 + x1` at seed (0, 1). A test can only
// show that if the broken variant is reachable from outside the crate, so
// it is a field of the public `Config`, hidden from the documentation; it
// is read in one place, the operation clause (`dual.rs`), and nothing but
// tests sets it.
