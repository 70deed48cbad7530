//! Multi-class classification on the Gaussian mixture (Sec. 5.2, App. C.3; Figs. 6, 10;
//! spec `ncgp.md` §4.3, checks E4–E7): IterNCGP-CG with recycling, `R ∈ {∞, 10}`, `j ≤ 5`,
//! against subset-of-data Laplace (dense Cholesky of `K̂` every Newton step), and the same
//! `R = 10` run on a SKI prior whose grid kernel is multilevel Toeplitz (the target).

use std::time::Instant;

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::{Kernel, Matern, MaternNu};
use gp_linalg::LinearOperator;
use gp_models::grid::GridSettings;
use gp_models::ncgp::{
    buffer_bytes, dense_system_bytes, DenseLaplace, IterNcgpOptions, IterNcgpPosterior,
    LaplaceOptions, NewtonForm, SharedOutputs, SkiPrior, Softmax,
};
use gp_models::SkiOptions;
use gp_solvers::pls::{PlsOptions, RecycleOptions};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::common::{
    kernel_operator, run_stepped, softmax_metrics, softmax_metrics_with_prior, Metrics,
};
use super::median;
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::papers::gsgp::common::{fmt_bytes, peak_rss_bytes, reset_peak_rss};
use crate::synthetic::mixture::{gaussian_mixture, MixtureOptions};
use crate::table::{fmt_seconds, Table};

/// The paper's kernel: Matérn-3/2, `ℓ = 0.05`, `s = 0.05`, shared by the ten classes.
const LENGTHSCALE: f64 = 0.05;
const OUTPUTSCALE: f64 = 0.05;
const CLASSES: usize = 10;
/// Inner iterations per Newton step (`j ≤ 5`).
const MAX_INNER: usize = 5;
/// Grid spacing of the SKI prior (decided by the accuracy/time trade-off measured in the
/// quick run; see the report's notes).
const SKI_SPACING: f64 = LENGTHSCALE;
/// Compression rank of the SKI run (as the target's exact-kernel run: R = 10).
const SKI_RANK: usize = 10;

/// Sizes of one run.
struct Plan {
    per_class_train: usize,
    per_class_test: usize,
    sod_sizes: Vec<usize>,
    seeds: u64,
    /// Grid spacing of the SKI run.
    ski_spacing: f64,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            per_class_train: 30,
            per_class_test: 10,
            sod_sizes: vec![50, 100],
            seeds: 1,
            ski_spacing: 2.0 * LENGTHSCALE,
        },
        RunSize::Quick => Plan {
            per_class_train: 300,
            per_class_test: 50,
            // SoD-500 alone took 7–13 s (the dense 5000² K̂ and its inverse factor): the main
            // job's 3-minute budget keeps the quick run to the paper's smallest size.
            sod_sizes: vec![100, 250],
            seeds: 1,
            ski_spacing: SKI_SPACING,
        },
        // The paper's sizes; one seed (the paper: 5) to fit a session.
        RunSize::Full => Plan {
            per_class_train: 10_000,
            per_class_test: 1_000,
            sod_sizes: vec![250, 500, 1000, 2000],
            seeds: 1,
            ski_spacing: SKI_SPACING,
        },
    }
}

/// Test metrics of a posterior on the split's test points.
fn evaluate(
    posterior: &IterNcgpPosterior,
    kernel: &Matern,
    x_train: MatRef<'_, f64>,
    data: &Split,
) -> Result<Metrics, BenchError> {
    let cross = kernel_operator(kernel, data.x_test.as_ref(), x_train)?;
    softmax_metrics(posterior, cross.as_ref(), OUTPUTSCALE, &data.y_test)
}

/// One method's outcome on one seed.
#[derive(Debug, Clone)]
struct MethodRun {
    /// Test metrics at the end of each Newton step.
    per_step: Vec<Metrics>,
    final_metrics: Metrics,
    steps: usize,
    actions: usize,
    seconds: f64,
    peak_width: usize,
    memory_bytes: f64,
    /// The process's peak resident set during the run (VmHWM reset at its start), if the
    /// kernel allowed the reset.
    peak_rss: Option<u64>,
}

fn labels_col(labels: &[usize]) -> Col<f64> {
    Col::from_fn(labels.len(), |i| labels[i] as f64)
}

/// The options of every IterNCGP run here: CG actions, `j ≤ 5`, recycling compressed to
/// `rank` columns (`None`: ∞), tracked `K Q`.
fn iter_options(rank: Option<usize>) -> IterNcgpOptions {
    IterNcgpOptions {
        max_inner: Some(MAX_INNER),
        recycling: Some(RecycleOptions {
            rank,
            ..RecycleOptions::default()
        }),
        // One product with K per action instead of two (K v = (KQ)(Qᵀb), spec §2.8): the
        // same iterates to rounding, half the kernel evaluations of a matrix-free K.
        solver: PlsOptions {
            track_kq: true,
            ..PlsOptions::default()
        },
        ..IterNcgpOptions::default()
    }
}

/// IterNCGP-CG on the exact kernel (dense or matrix free), compressed to `rank` columns.
fn run_iterncgp(
    kernel: &Matern,
    data: &Split,
    rank: Option<usize>,
) -> Result<MethodRun, BenchError> {
    let rss_reset = reset_peak_rss();
    let kx = kernel_operator(kernel, data.x_train.as_ref(), data.x_train.as_ref())?;
    let cross = kernel_operator(kernel, data.x_test.as_ref(), data.x_train.as_ref())?;
    let prior = Col::from_fn(data.x_test.nrows(), |_| OUTPUTSCALE);
    run_on_prior(
        kx.as_ref(),
        cross.as_ref(),
        prior.as_ref(),
        data,
        rank,
        rss_reset,
        0.0,
    )
}

/// IterNCGP-CG on the SKI prior `W K_G Wᵀ` (a multilevel Toeplitz `K_G`: the isotropic
/// Matérn is not separable) over a grid of spacing `spacing` covering the training and test
/// points; the grid's setup time is part of the run's time.
fn run_iterncgp_ski(
    kernel: &Matern,
    data: &Split,
    spacing: f64,
    rank: Option<usize>,
) -> Result<(MethodRun, Vec<usize>), BenchError> {
    let rss_reset = reset_peak_rss();
    let start = Instant::now();
    let options = ski_options(data, spacing);
    let sizes = options.grid.sizes.clone();
    let prior = SkiPrior::new(kernel, data.x_train.as_ref(), &options)?;
    let setup = start.elapsed().as_secs_f64();
    let kx = prior.operator();
    let cross = prior.cross(data.x_test.as_ref())?;
    let prior_var = prior.prior_variances(data.x_test.as_ref())?;
    let run = run_on_prior(
        &kx,
        &cross,
        prior_var.as_ref(),
        data,
        rank,
        rss_reset,
        setup,
    )?;
    Ok((run, sizes))
}

/// A grid of spacing at most `spacing` over the bounding box of the training and test points
/// padded by two cells (the cubic stencil), so that no test point falls outside.
fn ski_options(data: &Split, spacing: f64) -> SkiOptions {
    let d = data.x_train.ncols();
    let mut bounds = Vec::with_capacity(d);
    let mut sizes = Vec::with_capacity(d);
    for j in 0..d {
        let column = data
            .x_train
            .col(j)
            .iter()
            .chain(data.x_test.col(j).iter())
            .copied();
        let (lo, hi) = column.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let cells = ((hi - lo) / spacing).ceil() as usize + 4;
        let h = (hi - lo) / (cells - 4) as f64;
        bounds.push((lo - 2.0 * h, hi + 2.0 * h));
        sizes.push(cells + 1);
    }
    SkiOptions {
        grid: GridSettings {
            sizes,
            bounds: Some(bounds),
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    }
}

/// IterNCGP-CG on the prior covariance `kx` with test metrics from the cross-covariance and
/// the prior variances at the test points. `setup` seconds are added to the run's time.
fn run_on_prior(
    kx: &dyn LinearOperator,
    cross: &dyn LinearOperator,
    prior_variances: ColRef<'_, f64>,
    data: &Split,
    rank: Option<usize>,
    rss_reset: bool,
    setup: f64,
) -> Result<MethodRun, BenchError> {
    let n = data.x_train.nrows();
    let k = SharedOutputs::new(kx, CLASSES)?;
    let y = labels_col(&data.y_train);
    let lik = Softmax::new(CLASSES)?;
    let stepped = run_stepped(&k, y.as_ref(), &lik, &iter_options(rank), &mut |post| {
        softmax_metrics_with_prior(post, cross, prior_variances, &data.y_test)
    })?;
    let peak_rss = if rss_reset { peak_rss_bytes() } else { None };
    let per_step = stepped.per_step;
    let final_metrics = per_step.last().copied().unwrap_or_default();
    let (run, seconds, peak_width) = (stepped.run, stepped.seconds, stepped.peak_width);
    Ok(MethodRun {
        per_step,
        final_metrics,
        steps: run.steps.len(),
        actions: run.total_actions,
        seconds: seconds + setup,
        peak_width,
        // S, T and Q, each N·C per column.
        memory_bytes: buffer_bytes(n, CLASSES, peak_width, 3),
        peak_rss,
    })
}

/// Subset-of-data Laplace: dense Newton (the regression form with `W†`, a Cholesky of `K̂`
/// per step) on a random subset of `size` training points.
fn run_sod(kernel: &Matern, data: &Split, size: usize, seed: u64) -> Result<MethodRun, BenchError> {
    let n = data.x_train.nrows();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let keep = &order[..size.min(n)];
    let rss_reset = reset_peak_rss();
    let x_sub = Mat::from_fn(keep.len(), data.x_train.ncols(), |i, j| {
        data.x_train[(keep[i], j)]
    });
    let y_sub = Col::from_fn(keep.len(), |i| data.y_train[keep[i]] as f64);
    let start = Instant::now();
    let kx = kernel.matrix(x_sub.as_ref(), x_sub.as_ref())?;
    let nc = keep.len() * CLASSES;
    let k = Mat::from_fn(nc, nc, |a, b| {
        if a % CLASSES == b % CLASSES {
            kx[(a / CLASSES, b / CLASSES)]
        } else {
            0.0
        }
    });
    let lik = Softmax::new(CLASSES)?;
    let zeros = Col::zeros(nc);
    let fit = DenseLaplace::fit(
        k.as_ref(),
        zeros.as_ref(),
        y_sub.as_ref(),
        &lik,
        &LaplaceOptions {
            form: NewtonForm::Regression,
            ..LaplaceOptions::default()
        },
    )?;
    let posterior = fit.posterior_at_mode(k.as_ref(), zeros.as_ref(), y_sub.as_ref(), &lik)?;
    let seconds = start.elapsed().as_secs_f64();
    let final_metrics = evaluate(&posterior, kernel, x_sub.as_ref(), data)?;
    Ok(MethodRun {
        per_step: vec![final_metrics],
        final_metrics,
        steps: fit.iterates.len(),
        actions: 0,
        seconds,
        peak_width: 0,
        memory_bytes: dense_system_bytes(keep.len(), CLASSES),
        peak_rss: if rss_reset { peak_rss_bytes() } else { None },
    })
}

/// Training and test data of one seed.
struct Split {
    x_train: Mat<f64>,
    y_train: Vec<usize>,
    x_test: Mat<f64>,
    y_test: Vec<usize>,
}

/// The mixture is fixed (mixture seed 0, as the paper keeps it across runs); the seed draws
/// the samples.
fn split(plan: &Plan, seed: u64) -> Result<Split, BenchError> {
    let base = MixtureOptions {
        classes: CLASSES,
        dim: 3,
        per_class: plan.per_class_train,
        mixture_seed: 0,
        sample_seed: seed,
    };
    let train = gaussian_mixture(&base)?;
    let test = gaussian_mixture(&MixtureOptions {
        per_class: plan.per_class_test,
        sample_seed: seed + 10_000,
        ..base
    })?;
    Ok(Split {
        x_train: train.x,
        y_train: train.labels,
        x_test: test.x,
        y_test: test.labels,
    })
}

/// The experiment.
pub struct GaussianMixture;

impl Experiment for GaussianMixture {
    fn name(&self) -> &'static str {
        "gmm"
    }

    fn title(&self) -> &'static str {
        "Gaussian-mixture classification: IterNCGP-CG (R = ∞, 10; exact and SKI prior) against subset-of-data Laplace"
    }

    fn paper_reference(&self) -> &'static str {
        "IterNCGP Sec. 5.2, App. C.3, Figs. 6 and 10 (spec ncgp.md §4.3, checks E4–E7)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "C = 10 classes in 3-D, {} training and {} test points per class (paper: 10⁴ and 10³), \
             {} seeds; Matérn-3/2 ℓ = s = 0.05; IterNCGP j ≤ 5 on the exact kernel and on a SKI prior \
             (grid spacing {:.3}); SoD sizes {:?}",
            p.per_class_train, p.per_class_test, p.seeds, p.ski_spacing, p.sod_sizes
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            // Measured 5–6 s (one seed, SoD-100 and SoD-250, the SKI run 1.3 s).
            RunSize::Quick => 6.0,
            RunSize::Full => 1800.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let kernel = Matern::isotropic(MaternNu::ThreeHalves, 3, LENGTHSCALE, OUTPUTSCALE)?;
        ctx.progress
            .set_length(p.seeds * (3 + p.sod_sizes.len() as u64));
        let mut runs: Vec<(String, Vec<MethodRun>)> = Vec::new();
        let names: Vec<String> = [
            "IterNCGP-CG R = ∞".to_string(),
            "IterNCGP-CG R = 10".to_string(),
            format!("IterNCGP-CG R = {SKI_RANK}, SKI prior"),
        ]
        .into_iter()
        .chain(p.sod_sizes.iter().map(|s| format!("SoD {s}")))
        .collect();
        for name in &names {
            runs.push((name.clone(), Vec::new()));
        }
        let mut grid_sizes = Vec::new();
        for s in 0..p.seeds {
            let seed = ctx.seed + s;
            let data = split(&p, seed)?;
            // R = 10 first, so that its peak memory is not a leftover of R = ∞'s buffers.
            ctx.progress
                .set_message(format!("seed {seed}: IterNCGP R = 10"));
            runs[1].1.push(run_iterncgp(&kernel, &data, Some(10))?);
            ctx.progress.inc(1);
            ctx.progress
                .set_message(format!("seed {seed}: IterNCGP R = ∞"));
            runs[0].1.push(run_iterncgp(&kernel, &data, None)?);
            ctx.progress.inc(1);
            ctx.progress
                .set_message(format!("seed {seed}: IterNCGP on SKI"));
            let (ski_run, sizes) = run_iterncgp_ski(&kernel, &data, p.ski_spacing, Some(SKI_RANK))?;
            runs[2].1.push(ski_run);
            grid_sizes = sizes;
            ctx.progress.inc(1);
            for (i, &size) in p.sod_sizes.iter().enumerate() {
                ctx.progress.set_message(format!("seed {seed}: SoD {size}"));
                runs[3 + i].1.push(run_sod(&kernel, &data, size, seed)?);
                ctx.progress.inc(1);
            }
        }
        Ok(report(&p, &runs, &grid_sizes, ctx.size))
    }
}

fn report(
    p: &Plan,
    runs: &[(String, Vec<MethodRun>)],
    grid_sizes: &[usize],
    size: RunSize,
) -> ExperimentOutput {
    let n = p.per_class_train * CLASSES;
    let mut table = Table::new([
        "method",
        "Newton steps",
        "new actions",
        "test accuracy",
        "test NLL",
        "test ECE",
        "time (median)",
        "memory (S, T, Q or K̂)",
        "peak RSS",
    ]);
    let mut raw = Vec::new();
    for (name, rs) in runs {
        let med = |f: &dyn Fn(&MethodRun) -> f64| median(&rs.iter().map(f).collect::<Vec<_>>());
        table.row([
            name.clone(),
            format!("{:.1}", med(&|r| r.steps as f64)),
            format!("{:.0}", med(&|r| r.actions as f64)),
            format!("{:.4}", med(&|r| r.final_metrics.accuracy)),
            format!("{:.4}", med(&|r| r.final_metrics.nll)),
            format!("{:.4}", med(&|r| r.final_metrics.ece)),
            fmt_seconds(med(&|r| r.seconds)),
            format!("{:.1} MB", med(&|r| r.memory_bytes) / 1e6),
            rs.first()
                .and_then(|r| r.peak_rss)
                .map_or("n/a".to_string(), fmt_bytes),
        ]);
        raw.push(json!({
            "method": name,
            "runs": rs.iter().map(|r| json!({
                "steps": r.steps, "actions": r.actions, "seconds": r.seconds,
                "accuracy": r.final_metrics.accuracy, "nll": r.final_metrics.nll,
                "ece": r.final_metrics.ece, "peak_width": r.peak_width, "peak_rss": r.peak_rss,
                "per_step_nll": r.per_step.iter().map(|m| m.nll).collect::<Vec<_>>(),
                "per_step_accuracy": r.per_step.iter().map(|m| m.accuracy).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }));
    }
    let (inf, ten, ski) = (&runs[0].1, &runs[1].1, &runs[2].1);
    let sods = &runs[3..];
    let mut checks = Vec::new();
    // E4: R = 10 and R = ∞ agree at every Newton step; buffers stay ≤ R + 5.
    let mut worst = (0.0f64, 0.0f64, 0.0f64);
    for (a, b) in inf.iter().zip(ten) {
        for (ma, mb) in a.per_step.iter().zip(&b.per_step) {
            worst.0 = worst.0.max((ma.accuracy - mb.accuracy).abs());
            worst.1 = worst.1.max((ma.nll - mb.nll).abs());
            worst.2 = worst.2.max((ma.ece - mb.ece).abs());
        }
    }
    checks.push(Check::new(
        format!(
            "E4: R = 10 matches R = ∞ at every Newton step (max |Δacc| {:.4} ≤ 0.005, |ΔNLL| {:.4} ≤ 0.01, |ΔECE| {:.4} ≤ 0.01)",
            worst.0, worst.1, worst.2
        ),
        worst.0 <= 0.005 && worst.1 <= 0.01 && worst.2 <= 0.01,
    ));
    let widest = ten.iter().map(|r| r.peak_width).max().unwrap_or(0);
    checks.push(Check::new(
        format!("E4: buffers with R = 10 stay ≤ R + 5 = 15 columns (widest {widest})"),
        widest <= 15,
    ));
    // E5: SoD meets δ = 1 % after exactly two Newton steps.
    let sod_steps: Vec<usize> = sods
        .iter()
        .flat_map(|(_, rs)| rs.iter().map(|r| r.steps))
        .collect();
    checks.push(Check::new(
        format!("E5: every SoD run converges in exactly 2 Newton steps (steps {sod_steps:?})"),
        sod_steps.iter().all(|&s| s == 2),
    ));
    // E6: IterNCGP's final test NLL below every SoD's; accuracy ≥ the largest SoD's − 0.002.
    let iter_nll = median(
        &inf.iter()
            .chain(ten)
            .map(|r| r.final_metrics.nll)
            .collect::<Vec<_>>(),
    );
    let best_sod_nll = sods
        .iter()
        .map(|(_, rs)| median(&rs.iter().map(|r| r.final_metrics.nll).collect::<Vec<_>>()))
        .fold(f64::INFINITY, f64::min);
    checks.push(Check::new(
        format!("E6: IterNCGP's median test NLL {iter_nll:.4} < the best SoD's {best_sod_nll:.4}"),
        iter_nll < best_sod_nll,
    ));
    if let Some((name, rs)) = sods.last() {
        let sod_acc = median(
            &rs.iter()
                .map(|r| r.final_metrics.accuracy)
                .collect::<Vec<_>>(),
        );
        let iter_acc = median(
            &inf.iter()
                .chain(ten)
                .map(|r| r.final_metrics.accuracy)
                .collect::<Vec<_>>(),
        );
        checks.push(Check::new(
            format!(
                "E6: IterNCGP's median test accuracy {iter_acc:.4} ≥ {name}'s {sod_acc:.4} − 0.002"
            ),
            iter_acc >= sod_acc - 0.002,
        ));
    }
    // E6's ECE claim holds only at the paper's size (spec E6: down-scaled runs are
    // under-confident for every method).
    if size == RunSize::Full {
        let iter_ece = median(
            &inf.iter()
                .chain(ten)
                .map(|r| r.final_metrics.ece)
                .collect::<Vec<_>>(),
        );
        let best_sod_ece = sods
            .iter()
            .map(|(_, rs)| median(&rs.iter().map(|r| r.final_metrics.ece).collect::<Vec<_>>()))
            .fold(f64::INFINITY, f64::min);
        checks.push(Check::new(
            format!(
                "E6: IterNCGP's median test ECE {iter_ece:.4} < the best SoD's {best_sod_ece:.4}"
            ),
            iter_ece < best_sod_ece,
        ));
    }
    // The targets: R = 10 on the exact kernel within 15 min and 1 GiB at the paper's
    // size with accuracy ≥ SoD-2000's; the SKI run within 0.005 of its accuracy (and ≤ 60 s
    // at the paper's size).
    let acc = |rs: &[MethodRun]| {
        median(
            &rs.iter()
                .map(|r| r.final_metrics.accuracy)
                .collect::<Vec<_>>(),
        )
    };
    let secs = |rs: &[MethodRun]| median(&rs.iter().map(|r| r.seconds).collect::<Vec<_>>());
    let (acc_ten, acc_ski) = (acc(ten), acc(ski));
    checks.push(Check::new(
        format!(
            "Target: the SKI prior (grid {grid_sizes:?}, spacing {:.3}) within 0.005 of the exact kernel's test accuracy at R = 10 ({acc_ski:.4} vs {acc_ten:.4})",
            p.ski_spacing
        ),
        (acc_ski - acc_ten).abs() <= 0.005,
    ));
    if size == RunSize::Full {
        let peak = ten.iter().filter_map(|r| r.peak_rss).max();
        checks.push(Check::new(
            format!(
                "Target: exact kernel, R = 10, N = 10⁵: {:.0} s ≤ 900 s and peak RSS {} ≤ 1 GiB",
                secs(ten),
                peak.map_or("not measured".to_string(), fmt_bytes)
            ),
            secs(ten) <= 900.0 && peak.is_some_and(|b| b <= 1 << 30),
        ));
        if let Some((name, rs)) = sods.last() {
            checks.push(Check::new(
                format!(
                    "Target: exact kernel, R = 10, test accuracy {acc_ten:.4} ≥ {name}'s {:.4}",
                    acc(rs)
                ),
                acc_ten >= acc(rs),
            ));
        }
        checks.push(Check::new(
            format!(
                "Target: the SKI run at N = 10⁵ in {:.1} s ≤ 60 s",
                secs(ski)
            ),
            secs(ski) <= 60.0,
        ));
    }
    // E7: the memory arithmetic at the paper's size (S, T, Q of width R + j = 15 at
    // N = 10⁵, C = 10) against K̂ of SoD-2000 and of the full data.
    let paper_buffers = buffer_bytes(100_000, CLASSES, 15, 3);
    let sod_2000 = dense_system_bytes(2000, CLASSES);
    let full = dense_system_bytes(100_000, CLASSES);
    checks.push(Check::new(
        format!(
            "E7 / U15: at N = 10⁵, C = 10, R = 10, j ≤ 5 the buffers take {:.0} MB ≤ 360 MB, against {:.1} GB for SoD-2000's K̂ and {:.0} GB for the full K̂ (paper: 3.2 GB, 8000 GB)",
            paper_buffers / 1e6, sod_2000 / 1e9, full / 1e9
        ),
        paper_buffers <= 360e6 && (sod_2000 - 3.2e9).abs() < 1.0 && (full - 8.0e12).abs() < 1.0,
    ));
    let mut notes = vec![
        format!(
            "Scaled down: N = {n} training points (paper 10⁵); the spec's prototype (§8) found every method strongly \
             under-confident at these sizes (ECE ≈ 0.7–0.8), so ECE is compared only at the paper's size, which {}.",
            if size == RunSize::Full { "this run does" } else { "this run does not reach" }
        ),
        "Times exclude the metrics (as the paper's). IterNCGP tracks K Q (one product with K per action); K_x is \
         dense up to 3.3 GB and matrix-free above (N = 10⁵: the Matérn kernel re-evaluated in tiles at every \
         product, no N × N storage). SoD builds and factorizes the dense K̂ of its subset at every Newton step."
            .to_string(),
        "The paper states no numbers for these curves (figures only); the checks are the spec's E4–E7.".to_string(),
    ];
    notes.push(format!(
        "The SKI run: K_x ≈ W K_G Wᵀ with cubic interpolation on a {grid_sizes:?} grid (spacing ≤ {:.3} = {:.1} ℓ) over \
         the training and test points; the isotropic Matérn is not separable, so K_G is multilevel Toeplitz (products by a \
         3-D FFT of its circulant embedding). Its time includes building the grid and weights; its test marginals use \
         the SKI cross-covariance and prior variances.",
        p.ski_spacing,
        p.ski_spacing / LENGTHSCALE
    ));
    notes.push(
        "SVGP (GPyTorch) is not run: no peer script is in the repository yet (E6 compares against SoD only, spec §7.13)."
            .to_string(),
    );
    let curve = Curve {
        file_stem: "gmm_nll_per_step".to_string(),
        title: "Test NLL at the end of each Newton step (first seed)".to_string(),
        x_label: "Newton step".to_string(),
        y_label: "test NLL".to_string(),
        log_x: false,
        log_y: false,
        series: runs[..2]
            .iter()
            .map(|(name, rs)| Series {
                name: name.clone(),
                points: rs
                    .first()
                    .map(|r| {
                        r.per_step
                            .iter()
                            .enumerate()
                            .map(|(i, m)| (i as f64 + 1.0, m.nll))
                            .collect()
                    })
                    .unwrap_or_default(),
                style: SeriesStyle::Line,
            })
            .collect(),
    };
    ExperimentOutput {
        tables: vec![NamedTable {
            title: format!("Median over seeds, N = {n}, C = 10"),
            table,
        }],
        notes,
        raw: json!({ "methods": raw }),
        curves: vec![curve],
        checks,
    }
}
