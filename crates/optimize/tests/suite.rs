//! The integration tests of `optimize`, compiled as one binary: one link and
//! one executable on disk instead of one per file (CI ran out of disk
//! linking some sixty of them). Each file is a module and keeps its own
//! documentation.

mod common;

mod accumulator;
mod cost;
mod cse_alpha;
mod forms;
mod gather;
mod hist_interchange;
mod literal_lengths;
mod pipeline;
mod recompute_padding;
mod reduce_from_scan;
mod rules;
mod scale;
mod share_scanr;
