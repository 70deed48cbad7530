//! IterNCGP: computation-aware Newton for non-conjugate GPs (Tatzel, Wenger, Schneider &
//! Hennig), spec `shared/specs/ncgp.md`. The paper has no result tables: its results are
//! figures and statements in the text, which the experiments here check (spec §5.2).

use super::Paper;

// Experiment modules (one file each).
mod common;
mod gmm;
mod mnist;
mod ski;

/// The paper and its experiments.
pub fn paper() -> Paper {
    let experiments: Vec<Box<dyn crate::experiment::Experiment>> = vec![
        // Registered experiments.
        Box::new(gmm::GaussianMixture),
        Box::new(ski::SkiClassification),
        Box::new(mnist::MnistClassification),
    ];
    Paper {
        key: "ncgp",
        title: "IterNCGP — Tatzel, Wenger, Schneider & Hennig, Accelerating Non-Conjugate Gaussian Processes by Trading Off Computation for Uncertainty",
        spec: "shared/specs/ncgp.md",
        pending: "",
        experiments,
    }
}
