//! Kernel-machine conjugate gradients (Bartels & Hennig).
//!
//! No experiments are registered yet: they need KMCG, CG with posterior summaries and the inducing-point baselines (dense UCI sets, grids, SOUND), which comes with the KMCG issue.
//! The report says so plainly; it does not pretend.
//!
//! The data, reference and metric layer the experiments will use is here already:
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
pub mod grid_reference;
pub mod hyper;
pub mod metrics;
pub mod paper_table;
pub mod paper_values;
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
        pending: "SOUND (Fig. 8) is not registered yet",
        experiments: vec![
            Box::new(fig_dense::DenseFigures),
            Box::new(fig_grid::GridFigures),
        ],
    }
}
