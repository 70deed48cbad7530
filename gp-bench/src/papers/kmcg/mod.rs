//! Kernel-machine conjugate gradients (Bartels & Hennig).
//!
//! [`fig_hyper`] re-optimises the dense sets' hyperparameters as the paper did and shows them
//! beside the authors'; three experiments reproduce the paper's figures: [`fig_dense`] (Figs. 4–6, 9, 11–15 and
//! claims C1–C6 on the dense data sets), [`fig_grid`] (Figs. 7, 10; C7, C8 on Kronecker grids)
//! and [`fig_sound`] (Fig. 8; C9 with Toeplitz products). They share [`problem_run`] (every
//! method on one problem, step by step), [`problem_cache`] (one problem at a time through the
//! fold cache, `--sets`, `--jobs`), [`curves`] (the per-step records), [`claims`],
//! [`report_tables`] and the paper's numbers ([`paper_table`], [`paper_values`]).
//!
//! The data, reference and metric layer:
//! [`hyper`] (Appendix A/B values and the kernels), [`dense`] (the §3.3 protocol on the eight
//! dense sets), [`toy`] (the TOY generator and the PRECIPITATION stand-in), [`exact`] (the
//! exact-GP reference), [`grid_reference`] (the exact GP on Kronecker grids and its
//! structured operators), [`sound`] (the SOUND Toeplitz operators and SMSE) and [`metrics`]
//! (ε_f, ε_var, ε_ev, SMSE, the inducing-count rules, the recording schedule, the seeds).

pub mod claims;
pub mod curves;
pub mod dense;
pub mod exact;
pub mod fig_dense;
pub mod fig_grid;
pub mod fig_hyper;
pub mod fig_sound;
pub mod grid_reference;
pub mod hyper;
pub mod metrics;
pub mod paper_table;
pub mod paper_values;
pub mod problem_cache;
pub mod problem_run;
pub mod report_tables;
pub mod sound;
pub mod toy;

use super::Paper;

/// The paper and its experiments.
pub fn paper() -> Paper {
    Paper {
        key: "kmcg",
        title: "KMCG — Bartels & Hennig, Conjugate Gradients for Kernel Machines (JMLR 21)",
        spec: "shared/specs/kmcg.md",
        pending: "",
        quick_budget_seconds: 30.0,
        experiments: vec![
            Box::new(fig_hyper::Hyperparameters),
            Box::new(fig_dense::DenseFigures),
            Box::new(fig_grid::GridFigures),
            Box::new(fig_sound::SoundFigure),
        ],
    }
}
