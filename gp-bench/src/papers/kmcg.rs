//! Kernel-machine conjugate gradients (Bartels & Hennig).
//!
//! No experiments are registered yet: they need KMCG, CG with posterior summaries and the inducing-point baselines (dense UCI sets, grids, SOUND), which comes with the KMCG issue.
//! The report says so plainly; it does not pretend.

use super::Paper;

/// The paper, with no experiments yet.
pub fn paper() -> Paper {
    Paper {
        key: "kmcg",
        title: "KMCG — Bartels & Hennig, Conjugate Gradients for Kernel Machines (JMLR 21)",
        spec: "shared/specs/kmcg.md",
        pending: "no experiments implemented yet (the KMCG issue)",
        experiments: Vec::new(),
    }
}
