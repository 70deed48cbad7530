//! IterNCGP: computation-aware Newton for non-conjugate GPs (Tatzel et al.).
//!
//! No experiments are registered yet: they need IterNCGP with the probabilistic linear solver, recycling and the Laplace baseline (binary, Poisson, Gaussian-mixture multi-class, MNIST), which comes with the IterNCGP issue.
//! The report says so plainly; it does not pretend.

use super::Paper;

/// The paper, with no experiments yet.
pub fn paper() -> Paper {
    Paper {
        key: "ncgp",
        title: "IterNCGP — Tatzel, Wenger, Schneider & Hennig, Accelerating Non-Conjugate Gaussian Processes by Trading Off Computation for Uncertainty",
        spec: "shared/specs/ncgp.md",
        pending: "no experiments implemented yet (the IterNCGP issue)",
        experiments: Vec::new(),
    }
}
