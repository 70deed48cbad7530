//! The integration tests of `gp-kernels`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod common;

mod bad_input;
mod extreme_values;
mod gradients;
mod operator;
mod rff;
mod values;
