//! The integration tests of `gp-structured`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod circulant;
mod grid;
mod interpolation;
mod khatri_rao;
mod kronecker;
mod kronecker_transpose;
mod multilevel_toeplitz;
mod stencil_gram;
mod sufficient_stats;
mod toeplitz_root;
mod top_eigen;
