//! GSGP / factorized CG for SKI (Yadav, Sheldon & Musco, AISTATS 2021).
//!
//! No experiments are registered yet: they need SKI and GSGP with factorized CG and Lanczos (sine, sound, precipitation and radar experiments), which comes with the GSGP/SKI issue.
//! The report says so plainly; it does not pretend.

use super::Paper;

/// The paper, with no experiments yet.
pub fn paper() -> Paper {
    Paper {
        key: "gsgp",
        title: "GSGP — Yadav, Sheldon & Musco, Faster Kernel Interpolation for Gaussian Processes (AISTATS 2021)",
        spec: "shared/specs/gsgp.md",
        pending: "no experiments implemented yet (the GSGP/SKI issue)",
        experiments: Vec::new(),
    }
}
