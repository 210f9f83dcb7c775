//! `inspect`: seeing what the derivative does.
//!
//! Pure functions over the IRs, one per question a user asks of a
//! gradient (docs/inspect.md):
//!
//! - [`dot`]: a Graphviz picture of any IR: the Source and Target term
//!   graphs with their sharing (a `let`-bound value drawn once, an edge per
//!   use), and Source and Target UNF as the string diagrams of seeds/000
//!   Fig. 6 and 7 (each context entry a wire, each primitive a box);
//! - [`residuals`]: what the reverse pass of a gradient program keeps from
//!   its forward pass, with sizes as formulas in the input sizes, at the
//!   given inputs, and the source position of each value (JAX's
//!   `print_saved_residuals`, with sizes and positions);
//! - [`activity`]: for each parameter, whether the output depends on it,
//!   and when its gradient is structurally zero, why and where;
//! - [`hazards`]: `log`, `sqrt`, `/` and `pow` whose untaken side can turn
//!   the adjoint into NaN (0 · inf), and whether our reverse mode is safe
//!   there.
//!
//! [`activity`] and [`hazards`] are two instances of one forward dataflow
//! analysis over the term IR, [`flow`].
//!
//! Invariant: nothing here panics on a verified module; every function
//! that recurses over a program goes through `syntax::stack::guard`.

pub mod activity;
pub mod dot;
pub mod flow;
pub mod hazards;
pub mod residuals;
pub mod size;

mod position;

pub use position::{Lines, Position, position};
