//! Randomized truncations for bias-free GP learning (Potapczynski et al., ICML 2021).
//!
//! No experiments are registered yet: they need RR-CG and SS-RFF training and their CG/RFF baselines (UCI Table S1/S2, bias figures), which comes with the RR-CG/SS-RFF issue.
//! The report says so plainly; it does not pretend.

pub mod data;
pub mod toy;

use super::Paper;

/// The paper, with no experiments yet.
pub fn paper() -> Paper {
    Paper {
        key: "rtgps",
        title: "RR-CG and SS-RFF — Potapczynski et al., Bias-Free Scalable Gaussian Processes via Randomized Truncations (ICML 2021)",
        spec: "shared/specs/rtgps.md",
        pending: "no experiments implemented yet (the RR-CG/SS-RFF issue)",
        experiments: Vec::new(),
    }
}
