//! Figure 4: error against run time on SOUND for SKI and GSGP at several grid sizes (spec
//! `gsgp.md` §4.6): the posterior mean (SMAE on the 691 held-out points, at several solver
//! tolerances), the log determinant of the likelihood (30 probes) and the 691 × 691 test
//! covariance by a rank-`k` Lanczos (LOVE) cache. Times include the pre-processing (SKI: grid,
//! `W`, `K_G`; GSGP: the sufficient statistics and `K_G`), as in the paper.

use std::time::Instant;

use faer::{Col, Mat, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::gsgp::LogDetFactorKind;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{
    GpModel, Gsgp, LmlEstimate, LmlRequest, LoveOptions, ModelError, PredictRequest, Ski,
    SkiOptions,
};
use serde_json::json;

use super::common::{fmt_count, Method, SOUND};
use super::fig4_curves::{is_reference, our_series, paper_series};
use super::sound::{load_sound, sound_bounds, SoundData};
use crate::error::BenchError;
use crate::experiment::{Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figure4;

/// Per-size settings.
#[derive(Debug, Clone)]
struct Plan {
    /// Keep every `stride`-th SOUND training point.
    stride: usize,
    grids: Vec<usize>,
    mean_tolerances: Vec<f64>,
    log_det_tolerance: f64,
    log_det_max_iterations: usize,
    /// Grids of the log-determinant panel (GSGP's `m`-space SLQ uses a dense eigen square
    /// root of the 1-D Toeplitz factor up to 2048 grid points and the `O(m)` circulant square
    /// root above, so every grid runs).
    log_det_grids: Vec<usize>,
    probes: usize,
    ranks: Vec<usize>,
    reference_rank: usize,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            stride: 20,
            grids: vec![300, 600],
            mean_tolerances: vec![1e-2],
            log_det_tolerance: 1e-2,
            log_det_max_iterations: 30,
            log_det_grids: vec![300, 600],
            probes: 4,
            ranks: vec![10],
            reference_rank: 30,
        },
        RunSize::Quick => Plan {
            stride: 1,
            grids: vec![8000, 60_004],
            mean_tolerances: vec![1e-1, 1e-3, 1e-5],
            log_det_tolerance: 1e-2,
            log_det_max_iterations: 100,
            log_det_grids: vec![1000, 2000, 8000, 60_004],
            probes: 30,
            ranks: vec![25, 100],
            reference_rank: 300,
        },
        RunSize::Full => Plan {
            stride: 1,
            grids: vec![1000, 2000, 5000, 6000, 8000, 10_000, 30_000, 60_004],
            mean_tolerances: vec![1e-1, 1e-2, 1e-3, 1e-5],
            log_det_tolerance: 1e-2,
            log_det_max_iterations: 100,
            log_det_grids: vec![1000, 2000, 5000, 6000, 8000, 10_000, 30_000, 60_004],
            probes: 30,
            ranks: vec![50, 200, 500],
            reference_rank: 1500,
        },
    }
}

/// One grid size of a Fig. 4 panel as read off the paper's plot: `(m, SKI (seconds, error),
/// GSGP (seconds, error))`.
pub type PaperPoint = (usize, (f64, f64), (f64, f64));

/// The paper's Fig. 4 mean panel (spec §4.6): `(m, SKI (s, SMAE), GSGP (s, SMAE))`.
pub const PAPER_MEAN: [PaperPoint; 8] = [
    (1000, (0.075, 1.17), (0.058, 1.17)),
    (2000, (0.09, 1.06), (0.06, 1.06)),
    (5000, (0.26, 0.38), (0.155, 0.38)),
    (6000, (0.31, 0.265), (0.195, 0.265)),
    (8000, (0.37, 0.197), (0.25, 0.197)),
    (10_000, (0.52, 0.195), (0.32, 0.195)),
    (30_000, (0.85, 0.195), (0.83, 0.195)),
    (60_000, (2.3, 0.195), (2.3, 0.195)),
];

/// The paper's Fig. 4 log-det panel: `(m, SKI (s, |error|), GSGP (s, |error|))`.
pub const PAPER_LOG_DET: [PaperPoint; 8] = [
    (1000, (2.4, 2.1e4), (0.3, 2.1e4)),
    (2000, (1.1, 1.55e4), (0.38, 1.55e4)),
    (5000, (4.2, 3.5e3), (1.75, 3.5e3)),
    (6000, (5.3, 1.85e3), (2.0, 1.85e3)),
    (8000, (7.0, 880.0), (3.2, 880.0)),
    (10_000, (8.0, 520.0), (4.7, 520.0)),
    (30_000, (15.5, 440.0), (14.0, 440.0)),
    (60_000, (30.0, 440.0), (32.0, 440.0)),
];

/// The reference code's log determinant for SOUND (spec §6.5).
pub const PAPER_REFERENCE_LOG_DET: f64 = -517_495.271;

fn paper_row(table: &[PaperPoint], m: usize) -> Option<((f64, f64), (f64, f64))> {
    // The paper's 60K grid is our 60 004 (h = 1 plus padding).
    let m = if m == 60_004 { 60_000 } else { m };
    table.iter().find(|r| r.0 == m).map(|r| (r.1, r.2))
}

/// What Figure 4 measures beyond the common interface ([`GpModel`]): fitting on SOUND with
/// the shared options, the rank-`k` LOVE covariance and GSGP's square root of the Toeplitz
/// factor. The mean and the log determinant go through the interface.
///
/// The covariance stays model-specific because the interface's covariance request
/// (`PredictOutput::Covariance` with `VarianceMethod::Love`) also solves for the posterior
/// mean, whose time would then be charged to the covariance panel.
trait Fig4Model: GpModel + Sized {
    /// The method, for labels and the paper's columns.
    const METHOD: Method;

    /// Fits the model on the SOUND training points with `opts`.
    fn fit_sound(data: &SoundData, opts: &SkiOptions) -> Result<Self, BenchError>;

    /// The latent covariance at the rows of `x` from a rank-`rank` LOVE cache.
    fn love_covariance(&self, rank: usize, x: MatRef<'_, f64>) -> Result<Mat<f64>, BenchError>;

    /// How the log determinant represents the square root of the Toeplitz factor (`None`
    /// for a model without one: SKI's SLQ works on `K̃` itself).
    fn log_det_factor(&self) -> Result<Option<String>, BenchError> {
        Ok(None)
    }
}

fn love_options(rank: usize) -> LoveOptions {
    LoveOptions {
        rank,
        ..LoveOptions::default()
    }
}

impl Fig4Model for Ski<SquaredExponential> {
    const METHOD: Method = Method::Ski;

    fn fit_sound(data: &SoundData, opts: &SkiOptions) -> Result<Self, BenchError> {
        let (x, y) = (data.x_train.as_ref(), data.y_train.as_ref());
        Ok(Ski::fit(
            SOUND.kernel()?,
            x,
            y,
            SOUND.noise_variance(),
            opts,
        )?)
    }

    fn love_covariance(&self, rank: usize, x: MatRef<'_, f64>) -> Result<Mat<f64>, BenchError> {
        Ok(self.love(&love_options(rank))?.latent_covariance(x)?)
    }
}

impl Fig4Model for Gsgp<SquaredExponential> {
    const METHOD: Method = Method::Gsgp;

    fn fit_sound(data: &SoundData, opts: &SkiOptions) -> Result<Self, BenchError> {
        let (x, y) = (data.x_train.as_ref(), data.y_train.as_ref());
        let opts = super::gsgp_side::gsgp_options(opts);
        Ok(Gsgp::fit(
            SOUND.kernel()?,
            x,
            y,
            SOUND.noise_variance(),
            &opts,
        )?)
    }

    fn love_covariance(&self, rank: usize, x: MatRef<'_, f64>) -> Result<Mat<f64>, BenchError> {
        Ok(self.love(&love_options(rank))?.latent_covariance(x)?)
    }

    fn log_det_factor(&self) -> Result<Option<String>, BenchError> {
        Ok(Some(
            self.log_det_factor_kinds()?
                .iter()
                .map(|k| match *k {
                    LogDetFactorKind::DenseEigen { rank, .. } => {
                        format!("dense eigen, r = {rank}")
                    }
                    LogDetFactorKind::Circulant { embedding, .. } => {
                        format!("circulant, r = M = {embedding}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ⊗ "),
        ))
    }
}

/// The posterior mean at the rows of `x_test` and the CG iterations of its solve.
fn mean_and_iterations<M: GpModel>(
    model: &M,
    x_test: MatRef<'_, f64>,
) -> Result<(usize, Col<f64>), BenchError> {
    let pred = model.predict_latent(x_test, &PredictRequest::mean())?;
    // The report is absent only for an empty test set, where no solve ran.
    let iterations = pred.mean_solve.as_ref().map_or(0, |r| r.iterations);
    Ok((iterations, pred.mean))
}

/// The log marginal likelihood estimate with the model's own probe seed, no gradient.
fn lml_estimate<M: GpModel>(model: &M) -> Result<LmlEstimate, BenchError> {
    Ok(model.lml(&LmlRequest::default())?)
}

/// The three panels' points and what did not run.
#[derive(Default)]
struct Panels {
    mean: Vec<PanelPoint>,
    log_det: Vec<PanelPoint>,
    covariance: Vec<PanelPoint>,
    failures: Vec<String>,
    refused_log_det: Vec<String>,
}

/// What every grid's measurements compare against.
struct References<'a> {
    data: &'a SoundData,
    plan: &'a Plan,
    seed: u64,
    log_det: f64,
    covariance: &'a Mat<f64>,
}

/// The measurements of one method on grid size `m`: the mean at each tolerance and the
/// rank-`k` covariances on the main grids, the log determinant on the log-determinant
/// grids. Every point is a fresh fit, so its time includes the pre-processing.
fn measure_grid<M: Fig4Model>(
    m: usize,
    refs: &References<'_>,
    progress: &indicatif::ProgressBar,
    out: &mut Panels,
) {
    let (data, p, seed) = (refs.data, refs.plan, refs.seed);
    let method = M::METHOD;
    let x_test = data.x_test.as_ref();
    let main_grid = p.grids.contains(&m);
    let tag = format!("{} m = {}", method.label(), fmt_count(m));
    // Mean at each tolerance (a fresh fit each time: the time includes it).
    for &tol in p.mean_tolerances.iter().filter(|_| main_grid) {
        progress.set_message(format!("{tag}, mean tol {tol:e}"));
        let t0 = Instant::now();
        let res = M::fit_sound(data, &options(m, tol, p, seed))
            .and_then(|model| mean_and_iterations(&model, x_test));
        let seconds = t0.elapsed().as_secs_f64();
        match res {
            Ok((iters, pred)) => out.mean.push(PanelPoint {
                method,
                m,
                setting: format!("tol {tol:e}"),
                seconds,
                error: data.smae(&pred),
                extra: json!({"iterations": iters, "tolerance": tol}),
            }),
            Err(e) => out.failures.push(format!("{tag} mean tol {tol:e}: {e}")),
        }
        progress.inc(1);
    }
    // Log determinant.
    if p.log_det_grids.contains(&m) {
        progress.set_message(format!("{tag}, log det"));
        let t0 = Instant::now();
        let base = options(m, 1e-5, p, seed);
        let opts = SkiOptions {
            krylov: KrylovSettings {
                max_iterations: p.log_det_max_iterations,
                ..base.krylov
            },
            ..base
        };
        let res = M::fit_sound(data, &opts)
            .and_then(|model| Ok((lml_estimate(&model)?, model.log_det_factor()?)));
        let seconds = t0.elapsed().as_secs_f64();
        match res {
            Ok((est, factor)) => out.log_det.push(PanelPoint {
                method,
                m,
                setting: format!("{} probes, tol {:e}", p.probes, p.log_det_tolerance),
                seconds,
                error: (est.log_det.value - refs.log_det).abs(),
                extra: json!({
                    "log_det": est.log_det.value,
                    "log_det_std_error": est.log_det.std_error,
                    "lml": est.lml,
                    "iterations": est.solve.iterations,
                    "factor": factor,
                }),
            }),
            // GSGP's typed refusals (the square roots of the Toeplitz factor would not fit
            // in memory, or its circulant embedding stays indefinite and the dense one does
            // not fit) are reported as not run, with their message.
            Err(BenchError::Model(
                e @ (ModelError::LogDetFactorTooLarge { .. }
                | ModelError::LogDetEmbeddingIndefinite { .. }),
            )) => out.refused_log_det.push(format!("{tag}: {e}")),
            Err(e) => out.failures.push(format!("{tag} log det: {e}")),
        }
        progress.inc(1);
    }
    // Rank-k covariance.
    for &k in p.ranks.iter().filter(|_| main_grid) {
        progress.set_message(format!("{tag}, LOVE rank {k}"));
        let t0 = Instant::now();
        let res = M::fit_sound(data, &options(m, 1e-5, p, seed))
            .and_then(|model| model.love_covariance(k, x_test));
        let seconds = t0.elapsed().as_secs_f64();
        match res {
            Ok(cov) => out.covariance.push(PanelPoint {
                method,
                m,
                setting: format!("rank {k}"),
                seconds,
                error: frobenius_diff(&cov, refs.covariance),
                extra: json!({"rank": k}),
            }),
            Err(e) => out.failures.push(format!("{tag} LOVE rank {k}: {e}")),
        }
        progress.inc(1);
    }
}

fn options(m: usize, prediction_tolerance: f64, plan: &Plan, seed: u64) -> SkiOptions {
    SkiOptions {
        grid: GridSettings {
            sizes: vec![m],
            bounds: Some(sound_bounds(m)),
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            prediction_tolerance,
            variance_tolerance: prediction_tolerance,
            tolerance: plan.log_det_tolerance,
            max_iterations: 5000,
            min_iterations: 20,
        },
        estimator: EstimatorSettings {
            probes: plan.probes,
            seed,
            ..EstimatorSettings::default()
        },
        // Plain CG, the SKI baseline of the GSGP paper.
        preconditioner_rank: 0,
    }
}

/// One point of a panel.
#[derive(Debug, Clone)]
pub(super) struct PanelPoint {
    /// The method.
    pub(super) method: Method,
    /// Grid size.
    pub(super) m: usize,
    /// Tolerance, probes or rank, in words.
    pub(super) setting: String,
    /// Wall time including the fit.
    pub(super) seconds: f64,
    /// The panel's error.
    pub(super) error: f64,
    /// Raw extras for `results.json`.
    pub(super) extra: serde_json::Value,
}

fn frobenius_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2()
}

impl Experiment for Figure4 {
    fn name(&self) -> &'static str {
        "fig4-sound"
    }

    fn title(&self) -> &'static str {
        "Figure 4: error against time on SOUND (mean, log determinant, rank-k covariance)"
    }

    fn paper_reference(&self) -> &'static str {
        "GSGP Fig. 4 (spec gsgp.md §4.6, §6.5), check T16; times include pre-processing"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "SOUND{}; m ∈ {:?}; mean at tolerances {:?}; log det with {} probes, tolerance {}, \
             ≤ {} iterations; LOVE ranks {:?} against rank {} at the largest m",
            if p.stride > 1 {
                format!(" (every {}th training point)", p.stride)
            } else {
                String::new()
            },
            p.grids,
            p.mean_tolerances,
            p.probes,
            p.log_det_tolerance,
            p.log_det_max_iterations,
            p.ranks,
            p.reference_rank
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 3.0,
            RunSize::Quick => 55.0,
            // Measured: 396 s (eight grids × four tolerances for the mean, SLQ with 30 probes
            // for both methods up to m = 60K, covariance ranks up to 500 against rank 1500).
            RunSize::Full => 450.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let mut data = load_sound(ctx.data_dir.path.as_deref(), ctx.seed)?;
        if p.stride > 1 {
            let keep: Vec<usize> = (0..data.x_train.nrows()).step_by(p.stride).collect();
            data.x_train = Mat::from_fn(keep.len(), 1, |i, _| data.x_train[(keep[i], 0)]);
            data.y_train = Col::from_fn(keep.len(), |i| data.y_train[keep[i]]);
        }
        let methods = [Method::Ski, Method::Gsgp];
        let steps = p.grids.len() * methods.len() * (p.mean_tolerances.len() + p.ranks.len())
            + p.log_det_grids.len() * methods.len();
        ctx.progress.set_length(steps as u64 + 2);
        let x_test = data.x_test.as_ref();
        let m_max = p
            .grids
            .iter()
            .chain(&p.log_det_grids)
            .copied()
            .max()
            .unwrap_or(0);

        // References at the largest grid: the log determinant by SKI (tight CG tolerance,
        // the same probes' seed), the covariance by GSGP's high-rank LOVE cache.
        ctx.progress
            .set_message(format!("references at m = {}", fmt_count(m_max)));
        let base = options(m_max, 1e-8, &p, ctx.seed);
        let ref_opts = SkiOptions {
            krylov: KrylovSettings {
                tolerance: 1e-3,
                max_iterations: 3000,
                ..base.krylov
            },
            ..base
        };
        let ref_lml = lml_estimate(&Ski::fit_sound(&data, &ref_opts)?)?;
        ctx.progress.inc(1);
        let ref_cov =
            Gsgp::fit_sound(&data, &ref_opts)?.love_covariance(p.reference_rank, x_test)?;
        ctx.progress.inc(1);
        let mut all_grids: Vec<usize> = p.grids.iter().chain(&p.log_det_grids).copied().collect();
        all_grids.sort_unstable();
        all_grids.dedup();

        let refs = References {
            data: &data,
            plan: &p,
            seed: ctx.seed,
            log_det: ref_lml.log_det.value,
            covariance: &ref_cov,
        };
        let mut panels = Panels::default();
        for &m in &all_grids {
            // Both methods on each grid (the steps above count them), SKI first.
            measure_grid::<Ski<SquaredExponential>>(m, &refs, ctx.progress, &mut panels);
            measure_grid::<Gsgp<SquaredExponential>>(m, &refs, ctx.progress, &mut panels);
        }
        let Panels {
            mean: mean_pts,
            log_det: ld_pts,
            covariance: cov_pts,
            failures,
            refused_log_det,
        } = panels;

        let mut mean_table = Table::new([
            "m",
            "method",
            "tolerance",
            "iterations",
            "time (incl. pre-processing)",
            "test SMAE",
            "paper time",
            "paper SMAE",
        ]);
        for pt in &mean_pts {
            let paper = paper_row(&PAPER_MEAN, pt.m).map(|(s, g)| match pt.method {
                Method::Ski => s,
                Method::Gsgp => g,
            });
            mean_table.row([
                fmt_count(pt.m),
                pt.method.label().to_string(),
                pt.setting.clone(),
                pt.extra["iterations"].to_string(),
                fmt_seconds(pt.seconds),
                format!("{:.4}", pt.error),
                paper.map_or_else(|| "–".into(), |v| fmt_seconds(v.0)),
                paper.map_or_else(|| "–".into(), |v| format!("{:.3}", v.1)),
            ]);
        }
        let mut ld_table = Table::new([
            "m",
            "method",
            "square root of K_G",
            "time (incl. pre-processing)",
            "log det estimate ± s.e.",
            "abs. error vs our reference",
            "paper time",
            "paper abs. error",
        ]);
        for pt in &ld_pts {
            let paper = paper_row(&PAPER_LOG_DET, pt.m).map(|(s, g)| match pt.method {
                Method::Ski => s,
                Method::Gsgp => g,
            });
            ld_table.row([
                fmt_count(pt.m),
                pt.method.label().to_string(),
                pt.extra["factor"]
                    .as_str()
                    .map_or_else(|| "–".into(), str::to_string),
                fmt_seconds(pt.seconds),
                format!(
                    "{:.1} ± {:.1}",
                    pt.extra["log_det"].as_f64().unwrap_or(f64::NAN),
                    pt.extra["log_det_std_error"].as_f64().unwrap_or(f64::NAN)
                ),
                if is_reference(pt, m_max) {
                    "reference".to_string()
                } else {
                    format!("{:.1}", pt.error)
                },
                paper.map_or_else(|| "–".into(), |v| fmt_seconds(v.0)),
                paper.map_or_else(|| "–".into(), |v| format!("{:.0}", v.1)),
            ]);
        }
        let mut cov_table = Table::new([
            "m",
            "method",
            "rank",
            "time (incl. pre-processing)",
            "‖C − C_ref‖_F",
        ]);
        for pt in &cov_pts {
            cov_table.row([
                fmt_count(pt.m),
                pt.method.label().to_string(),
                pt.setting.clone(),
                fmt_seconds(pt.seconds),
                format!("{:.3e}", pt.error),
            ]);
        }

        let mut notes = vec![
            format!("Data: {}.", data.origin.describe()),
            "Hyperparameters σ = 0.01, ℓ = 10.896, s = 0.0026 (hypers.yaml); grids over \
             [1 − 2h, 60 000 + 2h] with m points (m = 60 004 is the paper's 60K with h = 1). SKI \
             runs CG from 0, GSGP its default factorized CG (mean) and its m-space SLQ (log det). \
             Every time includes fitting (pre-processing); one run per point (the paper averages \
             20)."
                .to_string(),
            format!(
                "Log-det error = |estimate − reference|, the reference being SKI's estimate at \
                 m = {} with CG tolerance 1e-3 and the same {} probes (ours: {:.1} ± {:.1}; the \
                 reference code's value for its grid is {PAPER_REFERENCE_LOG_DET}). SKI's SLQ \
                 uses n-dimensional probes, GSGP's r-dimensional ones, so at equal m their \
                 probe noise differs: GSGP's m-space identity log det K̂ = n log σ² + \
                 log det(I_r + Lᵀ S L/σ²) needs a square root L Lᵀ = K_G, the truncated dense \
                 eigen factor (r ≤ m) up to m = 2048 and above it the exact circulant-embedding \
                 square root E C^{{1/2}} (r = M, the embedding length ≥ 2m − 1, O(m) memory; \
                 column \"square root of K_G\").",
                fmt_count(m_max),
                p.probes,
                ref_lml.log_det.value,
                ref_lml.log_det.std_error
            ),
            format!(
                "Covariance error = Frobenius norm of the difference between the 691 × 691 latent \
                 test covariance of the rank-k LOVE cache (start: the average column of W K_G, as \
                 the reference code) and GSGP's rank-{} LOVE covariance at m = {} (the paper \
                 compares the subtracted term with an exact SKI covariance at m = 60K; an exact \
                 691-column solve is too slow for these sizes). The paper's rank-k panel has no \
                 numbers.",
                p.reference_rank,
                fmt_count(m_max)
            ),
        ];
        if p.stride > 1 {
            notes.push(format!(
                "Smoke size: every {}th training point and tiny grids; the numbers prove the \
                 harness only.",
                p.stride
            ));
        }
        for r in &refused_log_det {
            notes.push(format!("Log determinant not run (refused): {r}"));
        }
        for f in &failures {
            notes.push(format!("Failed: {f}"));
        }

        notes.push(format!(
            "The log-det row marked \"reference\" (SKI at m = {}) is the configuration the \
             reference is computed with (same grid and probes): it has no error of its own and is \
             not plotted as a method. The paper's points are drawn as hollow markers beside ours.",
            fmt_count(m_max)
        ));
        let none = |_: &PanelPoint| false;
        let mut mean_series = our_series(&mean_pts, true, &none);
        mean_series.extend(paper_series(&PAPER_MEAN));
        let mut ld_series = our_series(&ld_pts, false, &|pt| is_reference(pt, m_max));
        ld_series.extend(paper_series(&PAPER_LOG_DET));
        let curves = vec![
            Curve {
                file_stem: "fig4-sound-mean".into(),
                title: "Fig. 4: SOUND mean, SMAE against time".into(),
                x_label: "seconds (incl. pre-processing)".into(),
                y_label: "test SMAE".into(),
                log_x: true,
                log_y: true,
                series: mean_series,
            },
            Curve {
                file_stem: "fig4-sound-logdet".into(),
                title: "Fig. 4: SOUND log determinant, |error| against time".into(),
                x_label: "seconds (incl. pre-processing)".into(),
                y_label: "|log det − reference|".into(),
                log_x: true,
                log_y: true,
                series: ld_series,
            },
            Curve {
                file_stem: "fig4-sound-covariance".into(),
                title: "Fig. 4: SOUND rank-k covariance, Frobenius error against time".into(),
                x_label: "seconds (incl. pre-processing)".into(),
                y_label: "‖C − C_ref‖_F".into(),
                log_x: true,
                log_y: true,
                series: our_series(&cov_pts, true, &none),
            },
        ];
        let raw_pts = |pts: &[PanelPoint]| {
            pts.iter()
                .map(|pt| {
                    json!({
                        "method": pt.method.label(), "m": pt.m, "setting": pt.setting,
                        "seconds": pt.seconds, "error": pt.error, "extra": pt.extra,
                    })
                })
                .collect::<Vec<_>>()
        };
        Ok(ExperimentOutput {
            tables: vec![
                NamedTable {
                    title: "Mean: test SMAE against time (paper's beside ours)".into(),
                    table: mean_table,
                },
                NamedTable {
                    title: "Log determinant: |error| against time".into(),
                    table: ld_table,
                },
                NamedTable {
                    title: "Rank-k (LOVE) test covariance: error against time".into(),
                    table: cov_table,
                },
            ],
            notes,
            raw: json!({
                "data": data.origin.describe(),
                "reference": {"m": m_max, "log_det": ref_lml.log_det.value,
                              "log_det_std_error": ref_lml.log_det.std_error,
                              "covariance_rank": p.reference_rank},
                "paper_reference_log_det": PAPER_REFERENCE_LOG_DET,
                "mean": raw_pts(&mean_pts),
                "log_det": raw_pts(&ld_pts),
                "covariance": raw_pts(&cov_pts),
            }),
            curves,
            checks: Vec::new(),
        })
    }
}
