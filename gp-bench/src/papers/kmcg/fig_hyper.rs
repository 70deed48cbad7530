//! The dense sets' hyperparameters re-optimised as the paper did (spec §3.4): GPML's
//! `minimize` with 100 evaluations of the exact marginal likelihood from `ℓ_i = 1`, `sf = 1`,
//! `σ² = 1e-3`, here L-BFGS capped at 100 evaluations on our training fold, beside the
//! authors' values (Appendix A) that the other experiments hold fixed. The check: our
//! optimum's `−log p(y)` on our fold is no worse than the authors' values give on it.

use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};
use gp_linalg::JitterLadder;
use gp_models::{train, ExactGp, FitOptions, LbfgsOptions, Optimizer, TrainOptions, TrainStart};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::dense::KmcgDense;
use super::hyper::{DenseSet, KernelKind};
use super::problem_cache::DenseProblems;
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::fold_cache::FoldCache;
use crate::table::Table;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hyperparameters;

/// Function evaluations of the optimiser (the paper's `minimize(…, −100, …)`).
const EVALUATIONS: usize = 100;

fn sets(size: RunSize) -> Vec<DenseSet> {
    match size {
        RunSize::Smoke => vec![DenseSet::Toy],
        RunSize::Quick => vec![DenseSet::Mpg, DenseSet::Toy],
        RunSize::Full => DenseSet::ALL.to_vec(),
    }
}

fn short(v: &[f64]) -> String {
    let shown: Vec<String> = v.iter().take(6).map(|x| format!("{x:.3}")).collect();
    if v.len() > 6 {
        format!("{}, … ({} in all)", shown.join(", "), v.len())
    } else {
        shown.join(", ")
    }
}

/// The problems of a run at `size` as the fold cache keys them (bump the version when the
/// code changes a result).
fn problems(size: RunSize) -> DenseProblems {
    DenseProblems {
        experiment: "kmcg/hyperparameters",
        sets: sets(size),
        kinds: KernelKind::ALL.to_vec(),
        settings: format!(
            "kmcg hyperparameters v1; L-BFGS <= {EVALUATIONS} evaluations from l = 1, sf2 = 1, noise 1e-3"
        ),
        cost: |set| (set.rows().div_ceil(2) as f64).powi(3),
    }
}

/// What one optimisation found.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Fit {
    nlz: f64,
    lengthscales: Vec<f64>,
    sf2: f64,
    noise: f64,
    stop: String,
}

/// L-BFGS with at most [`EVALUATIONS`] evaluations from `kernel` (ℓ = 1, sf² = 1) and
/// σ² = 1e-3 on the problem's training fold, without jitter (as GPML).
fn optimise<K: Kernel + Clone + Send + Sync>(kernel: K, p: &KmcgDense) -> Result<Fit, BenchError> {
    let d = kernel.input_dim();
    let options = FitOptions {
        jitter: JitterLadder::none(),
        ..FitOptions::default()
    };
    let gp = ExactGp::fit_with_options(
        kernel,
        p.x_train.as_ref(),
        p.y_train.as_ref(),
        1e-3,
        &options,
    )?;
    let trained = train(
        &gp,
        &TrainOptions {
            optimizer: Optimizer::Lbfgs(LbfgsOptions {
                max_evaluations: EVALUATIONS,
                ..LbfgsOptions::default()
            }),
            start: TrainStart::Model,
            ..TrainOptions::default()
        },
    )?;
    let model = &trained.model;
    let params = model.kernel().log_params();
    let run = &trained.report.runs[trained.report.best_run];
    Ok(Fit {
        nlz: -model.log_marginal_likelihood(),
        lengthscales: params[..d].iter().map(|v| v.exp()).collect(),
        sf2: params[d].exp(),
        noise: model.noise_variance(),
        stop: match &run.outcome {
            Ok(r) => format!("{}, {:?}", r.evaluations, r.reason),
            Err(e) => format!("failed: {e}"),
        },
    })
}

impl Experiment for Hyperparameters {
    fn name(&self) -> &'static str {
        "hyperparameters"
    }

    fn title(&self) -> &'static str {
        "Dense sets: hyperparameters re-optimised (100 evaluations) beside the authors' (Appendix A)"
    }

    fn paper_reference(&self) -> &'static str {
        "§3.4 (GPML minimize, 100 evaluations; spec Appendix A)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        format!(
            "{} × SE-ARD and Matérn-5/2 ARD; L-BFGS, ≤ {EVALUATIONS} evaluations from ℓ = 1, sf² = 1, σ² = 1e-3",
            sets(size).iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
        )
    }

    /// `--full`: AILERONS measured 1920 s (SE) and 2140 s (Matérn), 100 evaluations each,
    /// with another run on the second core; the other sets scaled by `N³`.
    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 1.0,
            RunSize::Quick => 3.0,
            RunSize::Full => 17_000.0,
        }
    }

    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        _seed: u64,
        _seeds: usize,
    ) -> f64 {
        problems(size).remaining_seconds(
            self.estimate_seconds_with_folds(size, folds),
            sets,
            fold_cache,
        )
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let done = problems(ctx.size).run(ctx, |p| {
            let d = p.hyper.dim();
            match p.kind {
                KernelKind::SeArd => optimise(SquaredExponential::new(vec![1.0; d], 1.0)?, p),
                KernelKind::Matern52Ard => {
                    optimise(Matern::new(MaternNu::FiveHalves, vec![1.0; d], 1.0)?, p)
                }
            }
        })?;
        let mut table = Table::new([
            "data set",
            "kernel",
            "source",
            "sf²",
            "σ²",
            "lengthscales",
            "−log p(y) on our fold",
            "evaluations, stop",
        ]);
        let mut raw = Vec::new();
        let mut met = 0;
        let mut shown = 0;
        let mut detail = Vec::new();
        for (p, fit) in done.problems.iter().zip(&done.results) {
            let Some(fit) = fit.clone() else {
                continue;
            };
            let (ours_nlz, ours_ls, ours_sf2, noise, stop) =
                (fit.nlz, fit.lengthscales, fit.sf2, fit.noise, fit.stop);
            let label = if p.is_stand_in() {
                "ours (stand-in data)"
            } else {
                "ours"
            };
            table.row([
                p.name.to_string(),
                p.kind.label().to_string(),
                label.to_string(),
                format!("{ours_sf2:.4}"),
                format!("{noise:.4e}"),
                short(&ours_ls),
                format!("{ours_nlz:.2}"),
                stop,
            ]);
            table.row([
                p.name.to_string(),
                p.kind.label().to_string(),
                "authors (Appendix A)".to_string(),
                format!("{:.4}", p.hyper.signal_variance),
                format!("{:.4e}", p.hyper.noise_variance),
                short(p.hyper.lengthscales),
                format!(
                    "{:.2} (theirs on their fold: {:.2})",
                    p.exact.nlz,
                    p.paper_values().nlz
                ),
                "—".to_string(),
            ]);
            let ok = ours_nlz <= p.exact.nlz + 1e-6 * p.exact.nlz.abs().max(1.0);
            met += usize::from(ok);
            detail.push(format!(
                "{} {}: {ours_nlz:.2} vs {:.2}",
                p.name,
                p.kind.label(),
                p.exact.nlz
            ));
            shown += 1;
            raw.push(json!({
                "dataset": p.name, "kernel": p.kind.label(), "ours": { "sf2": ours_sf2, "noise": noise,
                "lengthscales": ours_ls, "nlz": ours_nlz }, "authors_nlz_on_our_fold": p.exact.nlz,
                "authors_nlz_on_their_fold": p.paper_values().nlz,
            }));
        }
        let n = shown;
        Ok(ExperimentOutput {
            tables: vec![NamedTable { title: "Hyperparameters: ours (re-optimised) and the authors'".into(), table }],
            notes: done.note(ctx.fold_cache).into_iter().chain([
                "The figures use the authors' values held fixed on our split (spec §6 item 10); this table shows \
                 what re-optimising on our split gives. GPML's minimize and our L-BFGS differ in their line \
                 searches, so 100 evaluations do not reach the same point."
                    .into(),
                "TOY: the generator follows the authors' code (noise variance 0.02); re-optimising finds σ² ≈ \
                 0.017, while the authors' fitted σ² = 0.0045 and their −log p(y) = −157 suggest their stored \
                 draw had noise near 0.0045 (`toy_with_noise` makes such a draw); TOY's absolute ε values are \
                 therefore not comparable to the paper's, its orderings are."
                    .into(),
            ]).collect(),
            raw: json!(raw),
            curves: Vec::new(),
            checks: vec![Check::new(
                format!(
                    "our optimum's −log p(y) on our fold ≤ the authors' values' ({met} of {n}: {})",
                    detail.join("; ")
                ),
                met == n,
            )],
        })
    }
}
