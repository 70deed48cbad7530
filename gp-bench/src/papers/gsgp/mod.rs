//! GSGP / factorized CG for SKI (Yadav, Sheldon & Musco, AISTATS 2021; spec `gsgp.md`).
//!
//! Registered experiments, each comparing SKI (`gp_models::Ski`, CG on
//! `K̃ = W K_G Wᵀ + σ²I`) with GSGP (`gp_models::Gsgp`, factorized CG on `K_G` and the
//! sufficient statistics `S = WᵀW`, `Wᵀy`, `yᵀy`):
//!
//! * [`fig3`]: Figure 3, per-iteration time of the mean solve against `n` (sine data);
//! * [`table1`]: Table 1, GSGP/SKI time and memory ratios (SOUND, radar- and
//!   precipitation-like synthetic stand-ins);
//! * [`fig4`]: Figure 4, error against time on SOUND (mean, log determinant, covariance);
//! * [`large`]: the very-large run, `10^8` (`--full`) streamed 3-D points on a 128K grid (GSGP only).
//!
//! [`common`] holds the hyperparameters, the timed mean runs and the memory metric.

pub mod common;
pub mod fig3;
pub mod fig4;
mod fig4_curves;
pub mod gsgp_side;
pub mod large;
pub mod sound;
pub mod table1;

use super::Paper;

/// The paper and its experiments.
pub fn paper() -> Paper {
    Paper {
        key: "gsgp",
        title: "GSGP — Yadav, Sheldon & Musco, Faster Kernel Interpolation for Gaussian Processes (AISTATS 2021)",
        spec: "shared/specs/gsgp.md",
        pending: "Figure 5 and Figure 7 (radar and precipitation error/time sweeps: the real data are not available offline)",
        quick_budget_seconds: 50.0,
        experiments: vec![
            Box::new(fig3::Figure3),
            Box::new(table1::Table1),
            Box::new(fig4::Figure4),
            Box::new(large::LargeRun),
        ],
    }
}
