//! The experiment registry's building blocks: an [`Experiment`] has a name, the paper's
//! reference numbers (in its tables), sizes for `--smoke`, `--quick` and `--full`, and a run
//! function returning tables, raw JSON figures and curves for SVG plots.

use std::fmt;

use indicatif::ProgressBar;
use serde_json::Value;

use crate::data::DataDir;
use crate::error::BenchError;
use crate::fold_cache::FoldCache;
use crate::table::Table;

/// How large a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSize {
    /// Tiny sizes that prove the harness end to end in seconds, even in a debug build.
    Smoke,
    /// Small sizes: every registered experiment together in under 3 minutes on 2 cores.
    Quick,
    /// The paper's sizes (hours are acceptable).
    Full,
}

impl RunSize {
    /// `smoke`, `quick` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Smoke => "smoke",
            Self::Quick => "quick",
            Self::Full => "full",
        }
    }
}

impl fmt::Display for RunSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an experiment gets to run.
#[derive(Debug)]
pub struct RunContext<'a> {
    /// The size of the run.
    pub size: RunSize,
    /// The seed of every random choice (splits, subsets, generators, restarts).
    pub seed: u64,
    /// Where real data sets are looked for.
    pub data_dir: &'a DataDir,
    /// The experiment's progress bar: set its length, advance it, and put the current size
    /// in its message. Hidden in tests.
    pub progress: &'a ProgressBar,
    /// Run only the first `K` folds of each data set (`--folds K`) in experiments that
    /// cross-validate; `None`: the size's number.
    pub folds: Option<usize>,
    /// Run only these data sets (`--sets a,b`) in experiments that cross-validate; `None`:
    /// the size's sets.
    pub sets: Option<&'a [String]>,
    /// Where finished folds are kept and reloaded (`--fold-cache DIR`), in the experiments
    /// that cross-validate; `None`: every fold runs.
    pub fold_cache: Option<&'a FoldCache>,
    /// Folds run at the same time (`--jobs J`, at least 1), each with sequential dense
    /// algebra when more than one runs ([`crate::jobs::run_concurrently`]).
    pub jobs: usize,
    /// With `--full`: also the parts that take hours and tens of GiB (`--large`; RTGPS's
    /// larger Tables S1/S2 rows). Experiments without such parts ignore it.
    pub large: bool,
    /// Seeds per data set (`--seeds K`, at least 1: `seed, seed + 1, …, seed + K − 1`) in the
    /// experiments that repeat over seeds and report their mean (RTGPS's `uci-table`, whose
    /// paper values are means of 3 seeds); the others use `seed` alone.
    pub seeds: usize,
}

/// The sets of `planned` that `--sets` (`wanted`) keeps, in `planned`'s order; all of them
/// when `wanted` is `None`. Experiments whose sets are plain names share it (GRIEF's Table 1,
/// RTGPS's Tables S1/S2).
///
/// Errors: [`BenchError::InvalidArgument`] for a name that is not one of the run's sets,
/// listing them.
pub fn selected_sets(
    planned: &[&'static str],
    wanted: Option<&[String]>,
) -> Result<Vec<&'static str>, BenchError> {
    let Some(wanted) = wanted else {
        return Ok(planned.to_vec());
    };
    if let Some(unknown) = wanted.iter().find(|w| !planned.contains(&w.as_str())) {
        return Err(BenchError::InvalidArgument {
            name: "--sets",
            reason: format!(
                "`{unknown}` is not a data set of this run; its sets: {}",
                planned.join(", ")
            ),
        });
    }
    Ok(planned
        .iter()
        .copied()
        .filter(|p| wanted.iter().any(|w| w == p))
        .collect())
}

/// A table with a title, for the report.
#[derive(Debug, Clone)]
pub struct NamedTable {
    /// Heading above the table.
    pub title: String,
    /// The table.
    pub table: Table,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesStyle {
    /// Our measurements: a line through the points, with a dot on each.
    #[default]
    Line,
    /// The paper's numbers: hollow markers only, no line (drawn beside ours).
    PaperPoints,
}

/// One named line of a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// The points `(x, y)`.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub style: SeriesStyle,
}

/// A figure: one or more series against a common x axis, drawn as an SVG line plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// File stem of the SVG (`<stem>.svg`), unique within a paper.
    pub file_stem: String,
    /// Caption.
    pub title: String,
    /// x-axis label: the quantity and its unit (`seconds`), never `log10 …`; set
    /// [`Curve::log_x`] for a logarithmic axis instead.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic x axis (only used when every x is positive); the points hold the values
    /// themselves, not their logarithms.
    pub log_x: bool,
    /// Logarithmic y axis (only used when every y is positive).
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
}

/// One pass/fail check of an experiment against a target (the paper's number or the spec's
/// criterion), counted in the index ("k of n checks met").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What is checked, in words.
    pub name: String,
    /// Whether the target was met.
    pub met: bool,
}

impl Check {
    /// A check named `name` with outcome `met`.
    pub fn new(name: impl Into<String>, met: bool) -> Self {
        Self {
            name: name.into(),
            met,
        }
    }
}

/// Everything an experiment produced.
#[derive(Debug, Clone, Default)]
pub struct ExperimentOutput {
    /// Tables for the report, with the paper's number beside ours where it has one.
    pub tables: Vec<NamedTable>,
    /// Remarks for the report: stand-ins used, subsampling, deviations from the paper.
    pub notes: Vec<String>,
    /// Every raw figure, for `results.json`.
    pub raw: Value,
    /// Curves, each written as an SVG plot.
    pub curves: Vec<Curve>,
    /// The pass/fail checks judged at this size (empty when none applies).
    pub checks: Vec<Check>,
}

/// One experiment of a paper.
pub trait Experiment: Send + Sync {
    /// Short identifier, unique within the paper (`uci-exact`).
    fn name(&self) -> &'static str;
    /// Heading in the report.
    fn title(&self) -> &'static str;
    /// The heading for a run at `size`, naming the sizes that actually ran (default:
    /// [`Experiment::title`]).
    fn title_at(&self, size: RunSize) -> String {
        let _ = size;
        self.title().to_string()
    }
    /// What in the paper this reproduces (table, figure, section).
    fn paper_reference(&self) -> &'static str;
    /// The sizes used at `size`, in words.
    fn describe_size(&self, size: RunSize) -> String;
    /// A rough wall-time estimate in seconds on the 2-core reference machine.
    fn estimate_seconds(&self, size: RunSize) -> f64;
    /// The estimate when `--folds K` keeps the first `K` folds (default: `--folds` does not
    /// apply, [`Experiment::estimate_seconds`]); experiments that cross-validate scale it.
    fn estimate_seconds_with_folds(&self, size: RunSize, folds: Option<usize>) -> f64 {
        let _ = folds;
        self.estimate_seconds(size)
    }
    /// The estimate of what is left to run: as
    /// [`estimate_seconds_with_folds`](Experiment::estimate_seconds_with_folds), for the
    /// data sets `sets` only (`--sets`; `None`: all), over `seeds` seeds from `seed` where
    /// the experiment repeats over seeds (`--seeds`), and without the folds a fold cache
    /// already holds for the run's settings and seeds (default: none of these applies).
    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&crate::fold_cache::FoldCache>,
        seed: u64,
        seeds: usize,
    ) -> f64 {
        let _ = (sets, fold_cache, seed, seeds);
        self.estimate_seconds_with_folds(size, folds)
    }
    /// Runs the experiment.
    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError>;
}
