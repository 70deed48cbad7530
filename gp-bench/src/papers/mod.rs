//! The paper registry: one module per paper, each returning a [`Paper`] with its
//! experiments. Adding an experiment means implementing
//! [`Experiment`] in the paper's module and pushing it into
//! that paper's list.

pub mod grief;
pub mod gsgp;
pub mod kmcg;
pub mod ncgp;
pub mod rtgps;

use crate::error::BenchError;
use crate::experiment::Experiment;

/// A paper and its registered experiments.
pub struct Paper {
    /// Short key used on the command line and as the report folder (`grief`).
    pub key: &'static str,
    /// Title, authors and venue.
    pub title: &'static str,
    /// The implementation spec listing the paper's experiments.
    pub spec: &'static str,
    /// What is not implemented yet, in words (empty when nothing is missing).
    pub pending: &'static str,
    /// The experiments, in report order.
    pub experiments: Vec<Box<dyn Experiment>>,
    /// Wall-time budget of the paper's `--quick` run on the 2-core reference machine, in
    /// seconds; the papers' budgets sum to [`QUICK_BUDGET_SECONDS`], the main job's.
    pub quick_budget_seconds: f64,
}

/// The main job's (`reproduce all --quick`) wall-time budget on the 2-core reference
/// machine: 3 minutes, split over the papers by [`Paper::quick_budget_seconds`].
pub const QUICK_BUDGET_SECONDS: f64 = 180.0;

impl std::fmt::Debug for Paper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paper")
            .field("key", &self.key)
            .field(
                "experiments",
                &self
                    .experiments
                    .iter()
                    .map(|e| e.name())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Every paper, in a fixed order.
pub fn registry() -> Vec<Paper> {
    vec![
        gsgp::paper(),
        grief::paper(),
        kmcg::paper(),
        ncgp::paper(),
        rtgps::paper(),
    ]
}

/// The keys of every paper.
pub const PAPER_KEYS: [&str; 5] = ["gsgp", "grief", "kmcg", "ncgp", "rtgps"];

/// The paper with this key.
///
/// Errors: [`BenchError::InvalidArgument`] listing the keys.
pub fn find(key: &str) -> Result<Paper, BenchError> {
    registry()
        .into_iter()
        .find(|p| p.key == key)
        .ok_or_else(|| BenchError::InvalidArgument {
            name: "paper",
            reason: format!("unknown paper `{key}`; known: {}", PAPER_KEYS.join(", ")),
        })
}
