//! `gp-bench reproduce`: runs a paper's registered experiments with a progress bar each and
//! writes `report.md`, `results.json` and one SVG per curve into `<out>/<paper>/`; for every
//! paper at once it also writes `<out>/README.md` linking each report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::data::DataDir;
use crate::error::BenchError;
use crate::experiment::{RunContext, RunSize};
use crate::fold_cache::FoldCache;
use crate::papers::Paper;
use crate::report::{
    check_writable_dir, markdown, render_svg, replace_dir, staging_dir, write_atomic,
    ExperimentRecord, MachineInfo, PaperRun,
};

/// Settings of a reproduction run.
#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    /// Size of the run.
    pub size: RunSize,
    /// Seed of every random choice.
    pub seed: u64,
    /// Where real data sets are looked for.
    pub data_dir: DataDir,
    /// Output root; each paper writes into `<out_root>/<key>/`.
    pub out_root: PathBuf,
    /// Draw progress bars (on standard error, only when it is a terminal).
    pub show_progress: bool,
    /// The first `K` folds only, in the experiments that cross-validate (`--folds`).
    pub folds: Option<usize>,
    /// These data sets only, in the experiments that cross-validate (`--sets`).
    pub sets: Option<Vec<String>>,
    /// Finished folds kept and reloaded (`--fold-cache`).
    pub fold_cache: Option<FoldCache>,
    /// Folds run at the same time (`--jobs`).
    pub jobs: usize,
    /// Also the parts that take hours (`--large`, with `--full`).
    pub large: bool,
    /// Seeds per data set in the experiments that repeat over seeds (`--seeds`).
    pub seeds: usize,
}

/// The summed wall-time estimate of the papers' experiments at `size`, in seconds, with
/// `--folds K` (`folds`) and `--sets` (`sets`) where an experiment cross-validates, and
/// over `seeds` seeds from `seed` where an experiment repeats over seeds (`--seeds`), and
/// without the folds `fold_cache` already holds for them.
pub fn estimate_seconds(
    papers: &[Paper],
    size: RunSize,
    folds: Option<usize>,
    sets: Option<&[String]>,
    fold_cache: Option<&FoldCache>,
    seed: u64,
    seeds: usize,
) -> f64 {
    papers
        .iter()
        .flat_map(|p| &p.experiments)
        .map(|e| e.estimate_seconds_remaining(size, folds, sets, fold_cache, seed, seeds))
        .sum()
}

fn bar(multi: &MultiProgress, show: bool, prefix: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let style =
        ProgressStyle::with_template("{prefix:>22} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    multi.add(ProgressBar::new(0).with_style(style).with_prefix(prefix))
}

/// Runs every experiment of `paper` and writes its folder. A failing experiment does not
/// stop the others: its error is recorded in the report (check [`PaperRun::all_ok`]). The
/// files are written into a hidden staging folder beside `<out_root>/<key>/` that replaces
/// it whole at the end, so an interrupted run leaves the previous folder intact.
///
/// Errors: only a report file that cannot be written.
pub fn run_paper(
    paper: &Paper,
    options: &ReproduceOptions,
    multi: &MultiProgress,
) -> Result<PaperRun, BenchError> {
    let out_dir = options.out_root.join(paper.key);
    let staged = staging_dir(&out_dir)?;
    let result = run_paper_into(paper, options, multi, &staged, &out_dir);
    match result {
        Ok(run) => {
            replace_dir(&staged, &out_dir)?;
            Ok(run)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(e)
        }
    }
}

/// [`run_paper`]'s work: runs the experiments and writes every file into `staged`; the run
/// records `out_dir` as its folder.
fn run_paper_into(
    paper: &Paper,
    options: &ReproduceOptions,
    multi: &MultiProgress,
    staged: &Path,
    out_dir: &Path,
) -> Result<PaperRun, BenchError> {
    let start = Instant::now();
    let machine = MachineInfo::detect();
    let mut records = Vec::with_capacity(paper.experiments.len());
    for exp in &paper.experiments {
        let progress = bar(
            multi,
            options.show_progress,
            format!("{}/{}", paper.key, exp.name()),
        );
        let ctx = RunContext {
            size: options.size,
            seed: options.seed,
            data_dir: &options.data_dir,
            progress: &progress,
            folds: options.folds,
            sets: options.sets.as_deref(),
            fold_cache: options.fold_cache.as_ref(),
            jobs: options.jobs.max(1),
            large: options.large,
            seeds: options.seeds.max(1),
        };
        let t0 = Instant::now();
        let outcome = exp.run(&ctx).map_err(|e| e.to_string());
        let elapsed_seconds = t0.elapsed().as_secs_f64();
        progress.finish_with_message(if outcome.is_ok() { "done" } else { "FAILED" });
        let mut plots = Vec::new();
        if let Ok(out) = &outcome {
            for curve in &out.curves {
                let file = format!("{}.svg", curve.file_stem);
                write_atomic(&staged.join(&file), render_svg(curve)?.as_bytes())?;
                plots.push(file);
            }
        }
        records.push(ExperimentRecord {
            name: exp.name().to_string(),
            title: exp.title_at(options.size),
            paper_reference: exp.paper_reference().to_string(),
            size_description: exp.describe_size(options.size),
            elapsed_seconds,
            outcome,
            plots,
        });
    }
    let run = PaperRun {
        key: paper.key.to_string(),
        title: paper.title.to_string(),
        spec: paper.spec.to_string(),
        pending: paper.pending.to_string(),
        records,
        machine,
        size: options.size,
        seed: options.seed,
        data_dir: options.data_dir.describe(),
        out_dir: out_dir.to_path_buf(),
        elapsed_seconds: start.elapsed().as_secs_f64(),
        budget_seconds: (options.size == RunSize::Quick).then_some(paper.quick_budget_seconds),
    };
    let json = serde_json::to_string_pretty(&run.to_json())?;
    write_atomic(&staged.join("results.json"), json.as_bytes())?;
    write_atomic(
        &staged.join("report.md"),
        markdown::paper_report(&run).as_bytes(),
    )?;
    Ok(run)
}

/// Writes `<out_root>/README.md` linking every paper's report.
///
/// Errors: [`BenchError::Write`].
pub fn write_index(out_root: &Path, runs: &[PaperRun]) -> Result<PathBuf, BenchError> {
    let path = out_root.join("README.md");
    write_atomic(&path, markdown::index(runs).as_bytes())?;
    Ok(path)
}

/// Runs several papers in order (then writes the index when there is more than one) and
/// returns their runs. The output root is checked to be writable first, before anything
/// runs.
///
/// Errors: an output root that cannot be written ([`check_writable_dir`]), a report file
/// that cannot be written.
pub fn run_papers(
    papers: &[Paper],
    options: &ReproduceOptions,
) -> Result<Vec<PaperRun>, BenchError> {
    check_writable_dir(&options.out_root)?;
    let multi = MultiProgress::new();
    let mut runs = Vec::with_capacity(papers.len());
    for p in papers {
        runs.push(run_paper(p, options, &multi)?);
    }
    if papers.len() > 1 {
        write_index(&options.out_root, &runs)?;
    }
    Ok(runs)
}
