//! MNIST (Sec. 5.2 "Extension", App. C.4, Fig. 7; spec `ncgp.md` §4.4, check E8): softmax
//! with ten latent functions sharing a Matérn-3/2 kernel at the paper's hyperparameters,
//! IterNCGP-CG with recycling (R = ∞) and `j ≤ 1` or `j ≤ 5`.

use faer::{Col, Mat};
use gp_kernels::{Kernel, Matern, MaternNu};
use gp_linalg::DenseOperator;
use gp_models::ncgp::{IterNcgpOptions, SharedOutputs, Softmax};
use gp_solvers::pls::{PlsOptions, RecycleOptions};
use serde_json::json;

use super::common::{kernel_operator, run_stepped, softmax_metrics, Metrics};
use super::median;
use crate::data::mnist::{load_mnist, Mnist, MnistSplit, MNIST_PIXELS};
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::table::{fmt_seconds, Table};

/// The paper's hyperparameters (from its SVGP pre-fit).
const LENGTHSCALE: f64 = 1.550934;
const OUTPUTSCALE: f64 = 0.451591;
const CLASSES: usize = 10;

/// Training and test images used: the first ones of the files (the data directory holds the
/// first 20 000 training images, the paper's subset size).
fn sizes(size: RunSize) -> (usize, usize) {
    match size {
        RunSize::Smoke => (300, 100),
        RunSize::Quick => (2_000, 1_000),
        RunSize::Full => (20_000, 10_000),
    }
}

/// How pixels are scaled before the kernel sees them: the paper does not say (spec §7.9),
/// and at its fixed `ℓ = 1.55` the answer decides how local the kernel is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scaling {
    /// `[0, 1]` (the spec's suggestion).
    UnitInterval,
    /// torchvision's MNIST normalisation `(x − 0.1307) / 0.3081` on `[0, 1]` pixels
    /// (distances × 3.25).
    Torchvision,
}

impl Scaling {
    fn label(self) -> &'static str {
        match self {
            Self::UnitInterval => "[0, 1]",
            Self::Torchvision => "(x − 0.1307)/0.3081",
        }
    }

    fn apply(self, pixel: f64) -> f64 {
        match self {
            Self::UnitInterval => pixel,
            Self::Torchvision => (pixel - 0.1307) / 0.3081,
        }
    }
}

fn head(data: &Mnist, n: usize, scaling: Scaling) -> (Mat<f64>, Vec<usize>) {
    let n = n.min(data.len());
    let x = Mat::from_fn(n, MNIST_PIXELS, |i, j| scaling.apply(data.images[(i, j)]));
    let y = data.labels[..n].iter().map(|&l| usize::from(l)).collect();
    (x, y)
}

/// The median over training points of `k(x, nearest other x) / s`: how far from diagonal
/// the kernel matrix is at the paper's length scale.
fn median_nearest_correlation(k: &Mat<f64>) -> f64 {
    let n = k.nrows();
    let nearest: Vec<f64> = (0..n)
        .map(|j| {
            (0..n)
                .filter(|&i| i != j)
                .map(|i| k[(i, j)])
                .fold(0.0, f64::max)
                / OUTPUTSCALE
        })
        .collect();
    median(&nearest)
}

/// One IterNCGP variant's outcome.
struct VariantRun {
    scaling: Scaling,
    /// See [`median_nearest_correlation`].
    nearest_correlation: f64,
    /// `None`: the converged reference (each solve to its tolerance, `δ = 0.1 %`).
    max_inner: Option<usize>,
    per_step: Vec<Metrics>,
    steps: usize,
    actions: usize,
    seconds: f64,
    converged: bool,
}

/// The experiment.
pub struct MnistClassification;

impl Experiment for MnistClassification {
    fn name(&self) -> &'static str {
        "mnist"
    }

    fn title(&self) -> &'static str {
        "MNIST: IterNCGP-CG with recycling, j ≤ 1 and j ≤ 5, at the paper's hyperparameters"
    }

    fn paper_reference(&self) -> &'static str {
        "IterNCGP Sec. 5.2 (Extension), App. C.4, Fig. 7 (spec ncgp.md §4.4, check E8)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let (n, nt) = sizes(size);
        format!(
            "the first {n} training and {nt} test images (paper: 20 000 and 10 000), pixels in [0, 1] (and \
             torchvision-normalised in --full, with a converged reference run under [0, 1]); Matérn-3/2 \
             ℓ = {LENGTHSCALE}, s = {OUTPUTSCALE}; dense K_x"
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 1.0,
            // Measured 4 s quick. Full: the two [0, 1] runs 134 and 156 s, the converged
            // reference 1353 s (226 actions), the normalised runs 15–19 s, plus the two kernel
            // matrices (2878 s in all on 2026-12-01 beside a GRIEF run, so about half that
            // alone).
            RunSize::Quick => 5.0,
            RunSize::Full => 1800.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let (n, nt) = sizes(ctx.size);
        let Some(dir) = ctx.data_dir.path.as_deref() else {
            return Ok(skipped(
                "no data directory (set GP_DATA_DIR or pass --data-dir)",
            ));
        };
        let train = match load_mnist(MnistSplit::Train, dir) {
            Ok(t) => t,
            Err(BenchError::MissingFile { .. }) | Err(BenchError::MissingDirectory { .. }) => {
                return Ok(skipped("the MNIST files are not in the data directory"));
            }
            Err(e) => return Err(e),
        };
        let test = load_mnist(MnistSplit::Test, dir)?;
        let kernel = Matern::isotropic(
            MaternNu::ThreeHalves,
            MNIST_PIXELS,
            LENGTHSCALE,
            OUTPUTSCALE,
        )?;
        // The normalised run is a diagnostic of the scaling question: --full only, to keep
        // the quick run within its share of the main job.
        let scalings: &[Scaling] = if ctx.size == RunSize::Full {
            &[Scaling::UnitInterval, Scaling::Torchvision]
        } else {
            &[Scaling::UnitInterval]
        };
        ctx.progress
            .set_length(3 * scalings.len() as u64 + u64::from(ctx.size != RunSize::Quick));
        let lik = Softmax::new(CLASSES)?;
        let mut variants = Vec::new();
        for &scaling in scalings {
            let (x, y) = head(&train, n, scaling);
            let (xt, yt) = head(&test, nt, scaling);
            ctx.progress
                .set_message(format!("kernel matrix, pixels {}", scaling.label()));
            let kx_dense = kernel.matrix(x.as_ref(), x.as_ref())?;
            let nearest_correlation = median_nearest_correlation(&kx_dense);
            let kx = DenseOperator::new(kx_dense);
            ctx.progress.inc(1);
            let k = SharedOutputs::new(&kx, CLASSES)?;
            let cross = kernel_operator(&kernel, xt.as_ref(), x.as_ref())?;
            let labels = Col::from_fn(y.len(), |i| y[i] as f64);
            // The paper's two runs, and at --full and --smoke (the test size) under [0, 1] the converged reference: every
            // solve to a relative residual of 1e-3 and δ = 0.1 %, i.e. (to that accuracy) the
            // Laplace approximation's own MAP at these hyperparameters, which bounds what any
            // truncation of it can reach.
            let reference = ctx.size != RunSize::Quick && scaling == Scaling::UnitInterval;
            let runs: &[Option<usize>] = if reference {
                &[Some(1), Some(5), None]
            } else {
                &[Some(1), Some(5)]
            };
            for &max_inner in runs {
                ctx.progress.set_message(format!(
                    "IterNCGP {}, pixels {}",
                    inner_label(max_inner),
                    scaling.label()
                ));
                let options = match max_inner {
                    Some(_) => IterNcgpOptions {
                        max_inner,
                        recycling: Some(RecycleOptions::default()),
                        max_outer: 20,
                        ..IterNcgpOptions::default()
                    },
                    None => IterNcgpOptions {
                        max_inner: None,
                        solver: PlsOptions {
                            rel_tolerance: 1e-3,
                            ..PlsOptions::default()
                        },
                        recycling: Some(RecycleOptions::default()),
                        outer_tolerance: 1e-3,
                        max_outer: 30,
                        ..IterNcgpOptions::default()
                    },
                };
                let stepped = run_stepped(&k, labels.as_ref(), &lik, &options, &mut |post| {
                    softmax_metrics(post, cross.as_ref(), OUTPUTSCALE, &yt)
                })?;
                let per_step = stepped.per_step;
                variants.push(VariantRun {
                    scaling,
                    nearest_correlation,
                    max_inner,
                    per_step,
                    steps: stepped.run.steps.len(),
                    actions: stepped.run.total_actions,
                    seconds: stepped.seconds,
                    converged: stepped.run.stop == gp_models::ncgp::IterNcgpStop::Converged,
                });
                ctx.progress.inc(1);
            }
        }
        Ok(report(n, nt, &variants, ctx.size))
    }
}

/// "j ≤ k", or the converged reference's label.
fn inner_label(max_inner: Option<usize>) -> String {
    max_inner.map_or_else(
        || "converged (reference)".to_string(),
        |j| format!("j ≤ {j}"),
    )
}

/// The output when the data are missing: a note, no checks.
fn skipped(why: &str) -> ExperimentOutput {
    ExperimentOutput {
        tables: Vec::new(),
        notes: vec![format!(
            "Skipped: {why}. MNIST has no synthetic stand-in here."
        )],
        raw: json!({ "skipped": why }),
        curves: Vec::new(),
        checks: Vec::new(),
    }
}

fn report(n: usize, nt: usize, variants: &[VariantRun], size: RunSize) -> ExperimentOutput {
    let mut table = Table::new([
        "pixels",
        "median k(x, nearest)/s",
        "IterNCGP-CG (R = ∞)",
        "Newton steps",
        "actions",
        "time",
        "test accuracy per step",
        "test NLL per step",
        "test ECE (end)",
    ]);
    let mut checks = Vec::new();
    let mut reference_accuracy = None;
    for v in variants {
        let end = v.per_step.last().copied().unwrap_or_default();
        let join = |f: &dyn Fn(&Metrics) -> f64| {
            v.per_step
                .iter()
                .map(|m| format!("{:.4}", f(m)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        table.row([
            v.scaling.label().to_string(),
            format!("{:.2e}", v.nearest_correlation),
            inner_label(v.max_inner),
            v.steps.to_string(),
            v.actions.to_string(),
            fmt_seconds(v.seconds),
            join(&|m| m.accuracy),
            join(&|m| m.nll),
            format!("{:.4}", end.ece),
        ]);
        let Some(max_inner) = v.max_inner else {
            reference_accuracy = Some(end.accuracy);
            continue;
        };
        checks.push(Check::new(
            format!(
                "E8: j ≤ {}, pixels {}, meets δ = 1 % within 3 Newton steps (paper: both runs converge within three; ours: {} steps, {})",
                max_inner,
                v.scaling.label(),
                v.steps,
                if v.converged { "converged" } else { "not converged" }
            ),
            v.converged && v.steps <= 3,
        ));
        // The accuracy expectation is for the paper's 20 000 images; smaller runs only report it.
        if size == RunSize::Full {
            checks.push(Check::new(
                format!(
                    "E8: j ≤ {}, pixels {}, test accuracy {:.4} ≥ 0.95 (the spec's expectation under [0, 1] pixels; the paper gives no number)",
                    max_inner, v.scaling.label(), end.accuracy
                ),
                end.accuracy >= 0.95,
            ));
        }
    }
    let mut notes = Vec::new();
    if let Some(acc) = reference_accuracy {
        let truncated = variants
            .iter()
            .filter(|v| v.scaling == Scaling::UnitInterval)
            .filter_map(|v| {
                let end = v.per_step.last()?;
                v.max_inner
                    .map(|j| format!("{:.4} (j ≤ {j})", end.accuracy))
            })
            .collect::<Vec<_>>()
            .join(" and ");
        notes.push(format!(
            "The converged reference (pixels [0, 1]: every solve to a relative residual of 1e-3, \
             Newton to δ = 0.1 %, so the Laplace approximation's own MAP at the paper's ℓ and s) \
             reaches test accuracy {acc:.4}; the paper's truncated runs end at {truncated}. The \
             reference's accuracy is the model's own at these hyperparameters, so the spec's \
             expectation of ≥ 0.95 under [0, 1] pixels is not reachable by solving more \
             accurately."
        ));
    }
    notes.extend([
            "The first images of the files; the paper states neither its selection rule nor its pixel scaling (spec §7.9), so --full runs both [0, 1] (the spec's suggestion) and torchvision's normalisation; --quick only [0, 1].".to_string(),
            "At the paper's ℓ = 1.55 the kernel is nearly diagonal under either scaling (the median correlation with the nearest other training image is the second column): the model is a kernel-weighted vote dominated by the many distant images under [0, 1], and close to a nearest-neighbour rule with almost uniform probabilities (NLL ≈ log 10) under the normalisation. The SVGP pre-fit that produced ℓ (1 760 Adam steps at lr 0.001 from GPyTorch's ℓ = 0.69) was still climbing, so ℓ is not a converged optimum for either scaling.".to_string(),
            "SVGP (the paper's baseline) is not run: no peer script is in the repository yet.".to_string(),
    ]);
    ExperimentOutput {
        tables: vec![NamedTable {
            title: format!("MNIST, {n} training and {nt} test images"),
            table,
        }],
        notes,
        raw: json!({
            "variants": variants.iter().map(|v| json!({
                "pixels": v.scaling.label(), "median_nearest_correlation": v.nearest_correlation,
                "max_inner": v.max_inner, "steps": v.steps, "actions": v.actions, "seconds": v.seconds,
                "converged": v.converged,
                "accuracy": v.per_step.iter().map(|m| m.accuracy).collect::<Vec<_>>(),
                "nll": v.per_step.iter().map(|m| m.nll).collect::<Vec<_>>(),
                "ece": v.per_step.iter().map(|m| m.ece).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
        curves: Vec::new(),
        checks,
    }
}
