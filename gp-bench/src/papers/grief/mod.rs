//! GP-GRIEF (Evans & Nair, ICML 2018; spec `grief.md`). Registered: Table 1 on the paper's
//! own folds (GRIEF-II, GRIEF-I and the exact GP, [`table1_folds`]), the same under the
//! paper's initialisation on the whole data set ([`table1_paper_init`]), the scaling checks 9–12
//! ([`scaling`]), the Fig. 2 kernel reconstruction with the convergence in m (checks 13 and
//! 15, [`fig2`]), the Fig. 1 toy problem (check 14, [`fig1`]), and the earlier exact-GP baseline on seeded folds of `wine` (embedded) and
//! `autompg` ([`uci_exact`]).

pub mod fig1;
pub mod fig2;
pub mod fold;
pub mod grief_fold;
pub mod scaling;
pub mod table1;
pub mod table1_folds;
pub mod table1_paper_init;
pub mod timing_criteria;
pub mod uci_exact;

use super::Paper;

/// The paper and its experiments.
pub fn paper() -> Paper {
    Paper {
        key: "grief",
        title: "GP-GRIEF — Evans & Nair, Scalable Gaussian Processes with Grid-Structured Eigenfunctions (ICML 2018)",
        spec: "shared/specs/grief.md",
        pending: "",
        quick_budget_seconds: 45.0, // 40.6 s measured (2-core machine, quiet)
        experiments: vec![
            Box::new(uci_exact::UciExact),
            Box::new(table1_folds::Table1Folds),
            Box::new(table1_paper_init::Table1PaperInit),
            Box::new(scaling::Scaling),
            Box::new(fig2::Figure2),
            Box::new(fig1::Figure1),
        ],
    }
}
