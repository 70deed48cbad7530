//! The integration tests of `gp-linalg`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod common;

mod cholesky;
mod eigen;
mod gram;
mod growing_cholesky;
mod jitter_ladder;
mod operators;
mod proptest_ops;
mod triangular;
mod vector;
mod woodbury;
