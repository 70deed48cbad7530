//! Training with any estimator: Adam on GPyTorch's softplus parameters and the loss
//! `−log p / n`, every step recorded, the exact loss evaluated at the recorded
//! hyperparameters on request (the paper's "exact loss" curves).
//!
//! Memory: every Krylov step allocates and frees a few dozen `n × k` blocks (CG's vectors,
//! the probes, the RR estimates). Under glibc's default malloc, blocks of a few MB and more
//! are mapped afresh and returned to the system each step, so each step pays a page fault per
//! 4 KiB again (about 80 000 per step at n = 278K, 5–10% of an SKI RR-CG step). A long
//! training on glibc runs faster with `MALLOC_MMAP_THRESHOLD_=33554432` and
//! `MALLOC_TRIM_THRESHOLD_=2147483647` in the environment (freed blocks up to 32 MiB kept for
//! reuse); the `gp-bench` binary sets the same at start-up.

use std::cell::Cell;
use std::ops::ControlFlow;
use std::time::Instant;

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
use crate::exact::ExactEvaluator;
use crate::gsgp::Gsgp;
use crate::objective::cholesky::exact_loss;
use crate::objective::estimator::{Estimator, KrylovObjectiveOptions, ObjectiveEstimate};
use crate::objective::evaluate::estimate_reusing;
use crate::objective::groups::ParameterGroups;
use crate::objective::gsgp::gsgp_krylov_estimate;
use crate::objective::krylov::{krylov_estimate, KrylovDepth};
use crate::objective::ski::SkiCovariance;
use crate::objective::softplus::SoftplusParameterization;
use crate::optim::{adam_resumable, AdamOptions, AdamStart, AdamState, MultiStepDecay};
use crate::ski::Ski;

/// Options of [`train_objective`].
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveTrainOptions {
    /// Adam's settings (default: the paper's, lr 0.01, 1500 steps, ×0.1 at 50/70/90%).
    pub adam: AdamOptions,
    /// Settings of the CG and RR-CG estimators. The default computes gradients only
    /// (`with_value: false`): Adam needs no value, and RR-SLQ costs `O(J³)` per probe; the
    /// recorded `estimated_loss` is then `None` for CG and RR-CG.
    pub krylov: KrylovObjectiveOptions,
    /// Floors of the softplus parameterisation (default `None`: GPyTorch's, 0 for the
    /// kernel's hyperparameters and `1e-4` for the noise).
    pub floors: Option<Vec<f64>>,
    /// Seed of the estimator's random draws.
    pub seed: u64,
    /// Evaluate the exact (Cholesky) loss at the hyperparameters of every `k`-th step
    /// (`None`: never; its cost is not counted in the training time).
    pub exact_loss_every: Option<usize>,
    /// Which hyperparameters move, and which move together (default `None`: each one
    /// independently). E.g. [`ParameterGroups::isotropic`] trains one length scale shared
    /// by every dimension, with the output scale fixed if asked (the paper's Fig. 3).
    pub groups: Option<ParameterGroups>,
}

impl Default for ObjectiveTrainOptions {
    fn default() -> Self {
        Self {
            adam: AdamOptions {
                learning_rate: 0.01,
                iterations: 1500,
                learning_rate_decay: Some(MultiStepDecay::paper_gp()),
                ..AdamOptions::default()
            },
            krylov: KrylovObjectiveOptions {
                with_value: false,
                ..KrylovObjectiveOptions::default()
            },
            floors: None,
            seed: 0,
            exact_loss_every: None,
            groups: None,
        }
    }
}

/// One recorded step of [`train_objective`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingStep {
    /// The step (0 is the start).
    pub step: usize,
    /// The log hyperparameters after the step (kernel's, then `log σ²`).
    pub log_params: Vec<f64>,
    /// The estimator's loss `−log p / n` at these hyperparameters, where it has a value.
    pub estimated_loss: Option<f64>,
    /// The exact loss `−log p / n` (when requested for this step).
    pub exact_loss: Option<f64>,
    /// Krylov iterations of the evaluation (0 for direct methods).
    pub work: usize,
}

/// What [`train_objective`] returns.
#[derive(Debug, Clone)]
pub struct ObjectiveTrainResult<K> {
    /// The kernel at the final hyperparameters.
    pub kernel: K,
    /// The final noise variance.
    pub noise_variance: f64,
    /// Every step, from the start.
    pub steps: Vec<TrainingStep>,
    /// Wall time of the estimator's evaluations and Adam (without the exact losses).
    pub training_seconds: f64,
}

/// A training stopped part way, with everything needed to continue it exactly: a resumed
/// run takes the same steps, draws the same random numbers and ends at the same bits as the
/// uninterrupted one ([`train_objective_checkpointed`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingCheckpoint {
    /// [`ObjectiveTrainOptions::seed`] of the run (a checkpoint of another seed is refused).
    pub seed: u64,
    /// Adam's state (on the grouped raw parameters) after the last recorded step.
    pub adam: AdamState,
    /// Position of the estimator's random stream (ChaCha8 words consumed), as a decimal
    /// string (JSON numbers do not hold 128 bits).
    pub rng_word_pos: String,
    /// The estimator's loss at the start (step 0's `estimated_loss`).
    pub start_loss: Option<f64>,
    /// The steps recorded so far, from step 1 (step 0 is added when the run finishes).
    pub steps: Vec<TrainingStep>,
    /// Training time so far, as [`ObjectiveTrainResult::training_seconds`] counts it.
    pub training_seconds: f64,
}

/// What [`Checkpointing::save`] calls with each checkpoint.
pub type SaveCheckpoint<'a> = dyn FnMut(&TrainingCheckpoint) -> Result<()> + 'a;

/// How [`train_objective_checkpointed`] saves and resumes (the default: neither).
#[derive(Default)]
pub struct Checkpointing<'a> {
    /// A checkpoint to continue from (`None`: start afresh).
    pub resume: Option<TrainingCheckpoint>,
    /// Wall seconds between checkpoints handed to `save` (one is due after the first step
    /// that ends at least this long after the previous one; 0: after every step).
    pub every_seconds: f64,
    /// Receives each checkpoint, e.g. to write it to disk (`None`: none are made); an
    /// error stops the training with that error.
    pub save: Option<&'a mut SaveCheckpoint<'a>>,
}

/// Trains the kernel's hyperparameters and the noise by Adam on `−log p / n` estimated by
/// `estimator` (the paper's protocol, spec §5.2): raw parameters `r` with
/// `θ = softplus(r) + floor`, fresh random draws at every step. `observer` sees every step
/// and may stop the run.
///
/// Errors: those of the estimator at the start, a starting hyperparameter not above its
/// floor, and Adam's (a step that keeps failing).
pub fn train_objective<K: Kernel + Clone + 'static>(
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    options: &ObjectiveTrainOptions,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<ObjectiveTrainResult<K>> {
    train_objective_checkpointed(
        kernel,
        noise_variance,
        x,
        y,
        estimator,
        options,
        &mut Checkpointing::default(),
        observer,
    )
}

/// [`train_objective`] that hands a [`TrainingCheckpoint`] to `checkpointing.save` every
/// `checkpointing.every_seconds`, and continues from `checkpointing.resume` when given: a
/// training of hours survives the end of its process and, resumed with the same arguments,
/// ends with the same hyperparameters to the last bit. Steps already taken are not taken
/// again (nor shown to `observer`); the training time adds up over the pieces.
///
/// Errors as [`train_objective`]; a checkpoint of another seed or parameter count, or past
/// the run's last step; the error of `save`.
#[allow(clippy::too_many_arguments)]
pub fn train_objective_checkpointed<K: Kernel + Clone + 'static>(
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    options: &ObjectiveTrainOptions,
    checkpointing: &mut Checkpointing<'_>,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<ObjectiveTrainResult<K>> {
    let p = kernel.n_params();
    let with_params = |log_params: &[f64]| -> Result<(K, f64)> {
        let mut k = kernel.clone();
        k.set_log_params(&log_params[..p])?;
        Ok((k, log_params[p].exp()))
    };
    // The Cholesky estimator's n × n buffers, kept for every step.
    let mut exact_buffers = ExactEvaluator::new();
    let mut evaluate = |log_params: &[f64], rng: &mut ChaCha8Rng| {
        let (k, s2) = with_params(log_params)?;
        estimate_reusing(
            &mut exact_buffers,
            &k,
            s2,
            x,
            y,
            estimator,
            &options.krylov,
            rng,
        )
    };
    let exact = |log_params: &[f64]| -> Result<f64> {
        let (k, s2) = with_params(log_params)?;
        exact_loss(&k, x, y, s2)
    };
    let mut start = kernel.log_params();
    start.push(noise_variance.ln());
    let run = train_core(
        &start,
        y.nrows(),
        options,
        &mut evaluate,
        &exact,
        checkpointing,
        observer,
    )?;
    let (kernel, noise_variance) = with_params(&run.final_log_params)?;
    Ok(ObjectiveTrainResult {
        kernel,
        noise_variance,
        steps: run.steps,
        training_seconds: run.training_seconds,
    })
}

/// [`train_objective`] on a [`Ski`] model's covariance `W K_G Wᵀ + σ²I` with CG or RR-CG
/// ([`Estimator::Cg`], [`Estimator::RrCg`]; others are refused): the interpolation weights
/// are kept, the grid kernel rebuilt at every step, and so is the pivoted-Cholesky
/// preconditioner of [`SkiCovariance::with_options`] (rank and size threshold from
/// `options.krylov`, as for the dense covariance). The exact loss, when requested, is the
/// exact GP's on the training data (dense: small problems only).
///
/// Errors as [`train_objective`], and [`ModelError::InvalidOption`] for a direct or RFF
/// estimator.
pub fn train_objective_ski<K: Kernel + Clone>(
    ski: &Ski<K>,
    estimator: &Estimator,
    options: &ObjectiveTrainOptions,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<ObjectiveTrainResult<K>> {
    let depth = structured_depth(
        estimator,
        "SKI training runs CG or RR-CG on the SKI operator",
    )?;
    let mut evaluate = |log_params: &[f64], rng: &mut ChaCha8Rng| {
        let model = ski.with_log_params(log_params)?;
        let cov = SkiCovariance::with_options(&model, &options.krylov)?;
        krylov_estimate(&cov, model.y.as_mat(), depth, &options.krylov, None, rng)
    };
    let exact = |log_params: &[f64]| -> Result<f64> {
        let model = ski.with_log_params(log_params)?;
        exact_loss(
            model.kernel(),
            ski.train_x(),
            ski.train_y(),
            model.noise_variance(),
        )
    };
    let start = ski.log_params();
    let run = train_core(
        &start,
        ski.n_train(),
        options,
        &mut evaluate,
        &exact,
        &mut Checkpointing::default(),
        observer,
    )?;
    let model = ski.with_log_params(&run.final_log_params)?;
    Ok(ObjectiveTrainResult {
        kernel: model.kernel().clone(),
        noise_variance: model.noise_variance(),
        steps: run.steps,
        training_seconds: run.training_seconds,
    })
}

/// [`train_objective`] on a [`Gsgp`] model with CG or RR-CG in grid space
/// ([`gsgp_krylov_estimate`]; [`Estimator::Cg`], [`Estimator::RrCg`], others are refused):
/// the sufficient statistics are kept, the grid kernel rebuilt at every step, so no step
/// costs anything that depends on `n`. The model keeps no data, so the exact loss (the
/// exact GP's on the training data, dense: small problems only) needs `exact_data`
/// `(x, y)` when [`ObjectiveTrainOptions::exact_loss_every`] asks for it.
///
/// Errors as [`train_objective`], and [`ModelError::InvalidOption`] for a direct or RFF
/// estimator, or an exact loss asked for without `exact_data`.
pub fn train_objective_gsgp<K: Kernel + Clone>(
    gsgp: &Gsgp<K>,
    estimator: &Estimator,
    options: &ObjectiveTrainOptions,
    exact_data: Option<(MatRef<'_, f64>, ColRef<'_, f64>)>,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<ObjectiveTrainResult<K>> {
    let depth = structured_depth(estimator, "GSGP training runs CG or RR-CG in grid space")?;
    if options.exact_loss_every.is_some() && exact_data.is_none() {
        return Err(ModelError::InvalidOption {
            name: "exact_loss_every",
            reason: "a GSGP model keeps only sufficient statistics: pass the training data \
                     as exact_data to evaluate the exact loss, or set exact_loss_every to None"
                .into(),
        });
    }
    let mut evaluate = |log_params: &[f64], rng: &mut ChaCha8Rng| {
        let model = gsgp.with_log_params(log_params)?;
        gsgp_krylov_estimate(&model, depth, &options.krylov, None, rng)
    };
    let exact = |log_params: &[f64]| -> Result<f64> {
        let model = gsgp.with_log_params(log_params)?;
        let (x, y) = exact_data.ok_or_else(|| ModelError::InvalidOption {
            name: "exact_data",
            reason: "needed for the exact loss".into(),
        })?;
        exact_loss(model.kernel(), x, y, model.noise_variance())
    };
    let start = gsgp.log_params();
    let run = train_core(
        &start,
        gsgp.n_train(),
        options,
        &mut evaluate,
        &exact,
        &mut Checkpointing::default(),
        observer,
    )?;
    let model = gsgp.with_log_params(&run.final_log_params)?;
    Ok(ObjectiveTrainResult {
        kernel: model.kernel().clone(),
        noise_variance: model.noise_variance(),
        steps: run.steps,
        training_seconds: run.training_seconds,
    })
}

/// The Krylov depth of a CG or RR-CG estimator, for the structured models' training, which
/// has no other estimator; `what` says so in the error.
fn structured_depth<'a>(estimator: &'a Estimator, what: &str) -> Result<KrylovDepth<'a>> {
    estimator
        .krylov_depth()
        .ok_or_else(|| ModelError::InvalidOption {
            name: "estimator",
            reason: format!("{what}, not {}", estimator.label()),
        })
}

/// What [`train_core`] returns.
struct CoreRun {
    steps: Vec<TrainingStep>,
    final_log_params: Vec<f64>,
    training_seconds: f64,
}

type Evaluate<'a> = dyn FnMut(&[f64], &mut ChaCha8Rng) -> Result<ObjectiveEstimate> + 'a;

/// Adam on the raw parameters of `start` (log hyperparameters, noise last) for the loss
/// `−log p / n` of `evaluate`, checkpointed and resumed as `checkpointing` says.
fn train_core(
    start: &[f64],
    n: usize,
    options: &ObjectiveTrainOptions,
    evaluate: &mut Evaluate<'_>,
    exact: &dyn Fn(&[f64]) -> Result<f64>,
    checkpointing: &mut Checkpointing<'_>,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<CoreRun> {
    let param = match &options.floors {
        Some(f) => SoftplusParameterization::new(f.clone())?,
        None => SoftplusParameterization::gpytorch(start.len().saturating_sub(1)),
    };
    if param.len() != start.len() {
        return Err(ModelError::LengthMismatch {
            context: "softplus floors (the kernel's hyperparameters, then the noise)",
            expected: start.len(),
            found: param.len(),
        });
    }
    let raw0 = param.raw_params(start)?;
    let groups = match &options.groups {
        Some(g) => g.clone(),
        None => ParameterGroups::new((0..raw0.len()).map(Some).collect())?,
    };
    let z0 = groups.initial(&raw0)?;
    let raw_of = |z: &[f64]| groups.expand(z, &raw0);
    let n = n as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let resume = checkpointing.resume.take();
    if let Some(c) = &resume {
        check_checkpoint(c, options, z0.len())?;
        rng.set_word_pos(
            c.rng_word_pos
                .parse()
                .map_err(|_| ModelError::InvalidOption {
                    name: "TrainingCheckpoint::rng_word_pos",
                    reason: format!("`{}` is not a whole number", c.rng_word_pos),
                })?,
        );
    }
    let rng_word_pos = Cell::new(rng.get_word_pos());
    let last_loss = Cell::new(None);
    let last_work = Cell::new(0usize);
    let exact_seconds = Cell::new(0.0f64);
    let earlier_seconds = resume.as_ref().map_or(0.0, |c| c.training_seconds);
    let clock = Instant::now();
    let (resumed_steps, resumed_start_loss) = match &resume {
        Some(c) => (c.steps.clone(), c.start_loss),
        None => (Vec::new(), None),
    };
    let start_loss = Cell::new(resumed_start_loss);
    let first_evaluation = Cell::new(resume.is_none());
    let objective = |z: &[f64]| -> Result<(f64, Vec<f64>)> {
        let raw = raw_of(z);
        let e = evaluate(&param.log_params(&raw), &mut rng);
        rng_word_pos.set(rng.get_word_pos());
        let e = e?;
        last_loss.set(e.lml.map(|l| -l / n));
        last_work.set(e.work);
        // The first evaluation of a fresh run is the start's (a failed start is an error).
        if first_evaluation.replace(false) {
            start_loss.set(last_loss.get());
        }
        let log_grad: Vec<f64> = e.gradient.iter().map(|g| -g / n).collect();
        // Adam needs a finite value only to accept the step; estimators without one
        // report 0.
        Ok((
            e.lml.map_or(0.0, |l| -l / n),
            groups.reduce(&param.raw_gradient(&raw, &log_grad)),
        ))
    };
    let wants_exact = |step: usize| {
        options
            .exact_loss_every
            .is_some_and(|k| k > 0 && step.is_multiple_of(k))
    };
    let timed_exact = |log_params: &[f64]| -> Result<f64> {
        let t = Instant::now();
        let v = exact(log_params);
        exact_seconds.set(exact_seconds.get() + t.elapsed().as_secs_f64());
        v
    };
    let training_seconds = || earlier_seconds + clock.elapsed().as_secs_f64() - exact_seconds.get();
    let mut steps = resumed_steps;
    let mut failure = None;
    let mut last_save = Instant::now();
    let save = &mut checkpointing.save;
    let every_seconds = checkpointing.every_seconds;
    let mut record =
        |point: &crate::optim::TrajectoryPoint, state: &AdamState| -> ControlFlow<()> {
            let log_params = param.log_params(&raw_of(&point.x));
            let exact_value = if wants_exact(point.iteration) {
                match timed_exact(&log_params) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        failure = Some(e);
                        return ControlFlow::Break(());
                    }
                }
            } else {
                None
            };
            let s = TrainingStep {
                step: point.iteration,
                log_params,
                estimated_loss: last_loss.get(),
                exact_loss: exact_value,
                work: last_work.get(),
            };
            let flow = observer(&s);
            steps.push(s);
            if let Some(save) = save.as_mut() {
                if last_save.elapsed().as_secs_f64() >= every_seconds {
                    let checkpoint = TrainingCheckpoint {
                        seed: options.seed,
                        adam: state.clone(),
                        rng_word_pos: rng_word_pos.get().to_string(),
                        start_loss: start_loss.get(),
                        steps: steps.clone(),
                        training_seconds: training_seconds(),
                    };
                    if let Err(e) = save(&checkpoint) {
                        failure = Some(e);
                        return ControlFlow::Break(());
                    }
                    last_save = Instant::now();
                }
            }
            flow
        };
    let adam_start = match &resume {
        Some(c) => AdamStart::Resume(&c.adam),
        None => AdamStart::Point(&z0),
    };
    let result = adam_resumable(objective, adam_start, &options.adam, &mut record)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let training_seconds = training_seconds();
    let start_log = param.log_params(&raw0);
    let start_step = TrainingStep {
        step: 0,
        exact_loss: if wants_exact(0) {
            Some(exact(&start_log)?)
        } else {
            None
        },
        log_params: start_log,
        estimated_loss: start_loss.get(),
        work: 0,
    };
    steps.insert(0, start_step);
    Ok(CoreRun {
        steps,
        final_log_params: param.log_params(&raw_of(&result.x)),
        training_seconds,
    })
}

/// Checks that `c` belongs to a run of `options` over `dim` trained parameters.
fn check_checkpoint(
    c: &TrainingCheckpoint,
    options: &ObjectiveTrainOptions,
    dim: usize,
) -> Result<()> {
    let refuse = |reason: String| {
        Err(ModelError::InvalidOption {
            name: "Checkpointing::resume",
            reason,
        })
    };
    if c.seed != options.seed {
        return refuse(format!(
            "the checkpoint was written by a run with seed {}, this run's seed is {}",
            c.seed, options.seed
        ));
    }
    if c.adam.x.len() != dim {
        return refuse(format!(
            "the checkpoint trains {} parameters, this run {dim}",
            c.adam.x.len()
        ));
    }
    if c.steps.len() != c.adam.iteration {
        return refuse(format!(
            "the checkpoint records {} steps but its optimizer state is at step {}",
            c.steps.len(),
            c.adam.iteration
        ));
    }
    Ok(())
}
