//! Randomized truncations for bias-free GP learning (Potapczynski et al., ICML 2021).
//!
//! Spec `shared/specs/rtgps.md`. The experiments: the training comparison of Figs. 3, 5 and
//! S3 (H10) and the bias of Figure 1 (H1, H2, H4, H5, H7).

pub mod bias;
pub mod data;
pub mod toy;
pub mod training;

use super::Paper;

/// The paper and its experiments.
pub fn paper() -> Paper {
    let experiments: Vec<Box<dyn crate::experiment::Experiment>> = vec![
        Box::new(bias::BiasFigure),
        Box::new(training::TrainingComparison),
    ];
    Paper {
        key: "rtgps",
        title: "RR-CG and SS-RFF — Potapczynski et al., Bias-Free Scalable Gaussian Processes via Randomized Truncations (ICML 2021)",
        spec: "shared/specs/rtgps.md",
        pending: "Figure 2 (H9), Figs. 4/S2 (SS-RFF training, H11), H8, Tables S1/S2 on PolTele/Elevators/Bike (H12) and the larger rows",
        experiments,
    }
}
