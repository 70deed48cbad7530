//! GP-GRIEF Table 1 under the paper's initialisation, read literally: "we initialize the base
//! kernel hyperparameters, θ, by maximizing the marginal likelihood of an exact GP constructed
//! on min(n, 1000) points randomly selected from the dataset" (§6). On the sixteen sets with
//! n < 2000 that subset is (nearly) the whole data set, so each fold's test rows shape θ, which
//! GRIEF-I then keeps. The same folds, methods and criteria 16–17 as [`super::table1_folds`]
//! (which draws the subset from the training part), plus the exact GP at the initialisation's
//! θ and, from a fold cache, the test-clean numbers beside these.

use super::grief_fold::InitRows;
use super::table1_folds::{Variant, SMALL_SETS};
use crate::error::BenchError;
use crate::experiment::{Experiment, ExperimentOutput, RunContext, RunSize};
use crate::fold_cache::FoldCache;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table1PaperInit;

/// Its variant of the Table 1 run.
const PAPER_INIT: Variant = Variant {
    name: "table1-paper-init",
    title:
        "Table 1 under the paper's initialisation (test rows seen): GP-GRIEF-II, GP-GRIEF-I and \
            the exact GP on the paper's folds",
    cache_experiment: "grief/table1-paper-init",
    init_rows: InitRows::WholeDataSet,
    full_sets: SMALL_SETS,
};

impl Experiment for Table1PaperInit {
    fn name(&self) -> &'static str {
        PAPER_INIT.name
    }

    fn title(&self) -> &'static str {
        PAPER_INIT.title
    }

    fn title_at(&self, size: RunSize) -> String {
        PAPER_INIT.title_at(size)
    }

    fn paper_reference(&self) -> &'static str {
        "GP-GRIEF Table 1 and the initialisation sentence of §6 (Evans & Nair 2018; spec grief.md \
         §3.3, P14, §4.4 criteria 16–17)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        PAPER_INIT.describe_size(size)
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        PAPER_INIT.estimate_seconds(size)
    }

    fn estimate_seconds_with_folds(&self, size: RunSize, folds: Option<usize>) -> f64 {
        PAPER_INIT.estimate_seconds_with_folds(size, folds)
    }

    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        seed: u64,
        seeds: usize,
    ) -> f64 {
        PAPER_INIT.estimate_seconds_remaining(size, folds, sets, fold_cache, seed, seeds)
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        PAPER_INIT.run(ctx)
    }
}
