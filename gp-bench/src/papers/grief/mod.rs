//! GP-GRIEF (Evans & Nair, ICML 2018; spec `grief.md`). Registered now: the exact-GP
//! baseline column of Table 1 on `wine` (embedded) and on the UCI-style sets of the data
//! directory that have a comparable Table 1 row (`autompg`), with GRIEF-I and GRIEF-II
//! rows that say they are not implemented yet; the scaling checks 9–12 ([`scaling`]) and the
//! Fig. 2 kernel reconstruction with the convergence in m (checks 13 and 15, [`fig2`]).

pub mod fig2;
pub mod fold;
pub mod scaling;
pub mod table1;
pub mod uci_exact;

use super::Paper;

/// The paper and its experiments.
pub fn paper() -> Paper {
    Paper {
        key: "grief",
        title: "GP-GRIEF — Evans & Nair, Scalable Gaussian Processes with Grid-Structured Eigenfunctions (ICML 2018)",
        spec: "shared/specs/grief.md",
        pending: "GP-GRIEF-I and GP-GRIEF-II (GP-GRIEF issue); Fig. 1",
        experiments: vec![
            Box::new(uci_exact::UciExact),
            Box::new(scaling::Scaling),
            Box::new(fig2::Figure2),
        ],
    }
}
