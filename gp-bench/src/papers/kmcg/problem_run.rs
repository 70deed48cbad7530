//! One problem (a dense data set, a grid or SOUND, with a kernel) through every method of
//! the paper's figures, step by step: CG (FOM on `K + σ²I`), KMCG (FOM on `K` as the paper,
//! or Lanczos where only `N × P` numbers fit), textbook CG and KMCG on its directions
//! (Figure 15), and VFE/FITC at each recorded step with `M(P)` nested random inducing
//! inputs (spec §3.1): one `NestedSparsePath` per repetition gives what a refit at every
//! step gives, and the first repetition is refitted from scratch at the timed steps for the
//! time curves (grid inducing inputs, not nested, are refitted at every step). The kernel matrix is any operator (dense, Kronecker,
//! Toeplitz) and the test cross-covariance any `s ↦ sᵀk(X, X*)`.

use std::sync::Arc;
use std::time::Instant;

use faer::{Col, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{DenseOperator, LinearOperator, ShiftedOperator};
use gp_models::inducing::{
    InducingPoints, NestedSparsePath, NestedSparseStep, NestedSubsets, SparseGp, SparseMethod,
};
use gp_models::kmcg::{
    columns_from_basis, dense_test_rows, KmcgBasis, KmcgRun, KmcgRunStatus, KmcgState, TestRow,
};
use gp_models::ModelError;
use gp_solvers::{FomOptions, FomSolver, FomStatus, TextbookCg, TextbookCgOptions};

use super::curves::{Method, MethodCurve, ProblemRun, StepMetrics};
use super::dense::KmcgDense;
use super::exact::ExactReference;
use super::metrics::{eps_ev, eps_f, eps_var, smse};
use crate::error::BenchError;

/// How far and how often a problem runs.
#[derive(Debug, Clone)]
pub struct DenseRunOptions {
    /// How KMCG and CG get their Krylov bases.
    pub krylov: KrylovPlan,
    /// Whether to run textbook CG and KMCG on its directions (Figure 15).
    pub textbook: bool,
    /// Whether the baselines also run once with `M` inducing inputs on a regular grid over
    /// the inputs' range (SOUND's extra run).
    pub grid_inducing: bool,
    /// Inducing inputs of the baselines at step `P` on `N` points.
    pub inducing_count: fn(usize, usize) -> usize,
    /// Largest `P` of the Krylov methods (clamped to `N`).
    pub p_max: usize,
    /// Steps at which the baselines are scored (the Krylov methods are scored at
    /// every step up to `p_max`).
    pub baseline_steps: Vec<usize>,
    /// Seeds of the baselines' repetitions (nested random inducing subsets).
    pub baseline_seeds: Vec<u64>,
    /// Steps at which the first repetition's baselines are also refitted from scratch and
    /// timed (the numbers of every step come from one nested pass per repetition,
    /// [`NestedSparsePath`]; a step not in `baseline_steps` is ignored).
    pub timed_steps: Vec<usize>,
}

/// How KMCG and CG get their Krylov bases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KrylovPlan {
    /// As the paper: KMCG on `K` with this basis (FOM, or Lanczos storing `Q` only), CG by
    /// its own FOM run on `K + σ²I`.
    Separate(KmcgBasis),
    /// One FOM run on `K + σ²I` serves both (the same Krylov space, spec §1.5): CG's
    /// iterate and KMCG's estimate from the same directions, half the products. Both curves
    /// then report the shared run's cumulative time.
    Shared,
}

/// How a prediction is scored.
pub enum Scoring<'a> {
    /// Against the exact GP: `ε_f`, `ε_var`, `ε_ev`.
    Exact(&'a ExactReference),
    /// SMSE of the mean against true test targets (SOUND), in the `ε_f` slot.
    Smse(&'a Col<f64>),
}

/// A problem for [`run_problem`].
pub struct Problem<'a> {
    /// Data set name (the paper's).
    pub dataset: String,
    /// Kernel label.
    pub kernel_label: String,
    /// Whether the data is a stand-in.
    pub stand_in: bool,
    /// The kernel (for the baselines).
    pub kernel: Arc<dyn Kernel>,
    /// Training inputs (for the baselines).
    pub x: MatRef<'a, f64>,
    /// Test inputs.
    pub xs: MatRef<'a, f64>,
    /// `K` (no noise) as an operator.
    pub k: Arc<dyn LinearOperator>,
    /// `s ↦ sᵀk(X, X*)`.
    pub test_row: TestRow<'a>,
    /// `k(x*, x*)`.
    pub kss: Vec<f64>,
    /// Training targets.
    pub y: Vec<f64>,
    /// Noise variance `σ²`.
    pub noise: f64,
    /// How predictions are scored.
    pub scoring: Scoring<'a>,
}

impl Scoring<'_> {
    fn mean_error(&self, mean: &Col<f64>) -> Result<f64, BenchError> {
        match self {
            Self::Exact(e) => eps_f(&e.mean, mean),
            Self::Smse(y) => smse(y, mean),
        }
    }

    fn exact(&self) -> Option<&ExactReference> {
        match self {
            Self::Exact(e) => Some(e),
            Self::Smse(_) => None,
        }
    }
}

fn col(v: &[f64]) -> Col<f64> {
    Col::from_fn(v.len(), |i| v[i])
}

/// The metrics of a KMCG estimate.
fn kmcg_metrics(
    st: &KmcgState,
    scoring: &Scoring<'_>,
    seconds: f64,
) -> Result<StepMetrics, BenchError> {
    let nlz = st.neg_log_evidence();
    let exact = scoring.exact();
    Ok(StepMetrics {
        p: st.steps(),
        eps_f: scoring.mean_error(&col(st.mean()))?,
        eps_var: exact
            .map(|e| eps_var(&e.variance, &col(&st.predictive_variance())))
            .transpose()?,
        eps_ev: exact.map(|e| eps_ev(e.nlz, nlz)),
        nlz_error: exact.map(|e| nlz - e.nlz),
        eps_ev_plotted: None,
        seconds: Some(seconds),
    })
}

fn cg_metrics(
    p: usize,
    mean: &Col<f64>,
    scoring: &Scoring<'_>,
    seconds: f64,
) -> Result<StepMetrics, BenchError> {
    Ok(StepMetrics {
        p,
        eps_f: scoring.mean_error(mean)?,
        eps_var: None,
        eps_ev: None,
        nlz_error: None,
        eps_ev_plotted: None,
        seconds: Some(seconds),
    })
}

/// Runs every method on a dense problem (`K` and `k(X, X*)` formed densely).
///
/// Errors: a kernel or operator failure (not a numerical breakdown, which ends that
/// method's curve as the paper's "crash").
pub fn run_dense(problem: &KmcgDense, options: &DenseRunOptions) -> Result<ProblemRun, BenchError> {
    let kernel = problem.kernel()?;
    let x = problem.x_train.as_ref();
    let xs = problem.x_test.as_ref();
    let kxs = kernel.matrix(x, xs)?;
    let kss = kernel.diag(xs)?;
    let p = Problem {
        dataset: problem.name.to_string(),
        kernel_label: problem.kind.label().to_string(),
        stand_in: problem.is_stand_in(),
        k: Arc::new(DenseOperator::new(kernel.matrix(x, x)?)),
        kernel,
        x,
        xs,
        test_row: dense_test_rows(kxs.as_ref()),
        kss: (0..kss.nrows()).map(|i| kss[i]).collect(),
        y: (0..x.nrows()).map(|i| problem.y_train[i]).collect(),
        noise: problem.hyper.noise_variance,
        scoring: Scoring::Exact(&problem.exact),
    };
    run_problem(&p, options)
}

/// Runs every method on one problem.
///
/// Errors: a kernel or operator failure (not a numerical breakdown, which ends that
/// method's curve as the paper's "crash").
pub fn run_problem(s: &Problem<'_>, options: &DenseRunOptions) -> Result<ProblemRun, BenchError> {
    let p_max = options.p_max.min(s.x.nrows());
    let mut curves = match options.krylov {
        KrylovPlan::Separate(basis) => vec![kmcg_curve(s, p_max, basis)?, cg_curve(s, p_max)?],
        KrylovPlan::Shared => shared_curves(s, p_max)?,
    };
    if options.textbook {
        curves.extend(textbook_curves(s, p_max)?);
    }
    curves.push(baseline_curve(
        s,
        SparseMethod::Vfe,
        Inducing::Random,
        options,
    )?);
    curves.push(baseline_curve(
        s,
        SparseMethod::Fitc,
        Inducing::Random,
        options,
    )?);
    if options.grid_inducing {
        curves.push(baseline_curve(
            s,
            SparseMethod::Vfe,
            Inducing::Grid,
            options,
        )?);
        curves.push(baseline_curve(
            s,
            SparseMethod::Fitc,
            Inducing::Grid,
            options,
        )?);
    }
    Ok(ProblemRun {
        dataset: s.dataset.clone(),
        kernel: s.kernel_label.clone(),
        stand_in: s.stand_in,
        curves,
    })
}

fn kmcg_curve(s: &Problem<'_>, p_max: usize, basis: KmcgBasis) -> Result<MethodCurve, BenchError> {
    let start = Instant::now();
    let rows: TestRow<'_> = Box::new(|v: &[f64]| (s.test_row)(v));
    let mut run = KmcgRun::new(s.k.as_ref(), 0.0, &s.y, s.noise, &s.kss, rows, basis, p_max)?;
    let mut steps = Vec::new();
    while run.step()?.is_some() {
        steps.push(kmcg_metrics(
            run.state(),
            &s.scoring,
            start.elapsed().as_secs_f64(),
        )?);
    }
    let crashed = kmcg_crashed(run.status());
    Ok(MethodCurve {
        method: Method::Kmcg,
        last_good: run.state().steps(),
        crashed,
        runs: 1,
        steps,
    })
}

/// CG's mean at the test points from its iterate `x`: `k(X*, X) x`.
fn cg_mean(s: &Problem<'_>, x: faer::ColRef<'_, f64>) -> Col<f64> {
    let x: Vec<f64> = x.iter().copied().collect();
    col(&(s.test_row)(&x))
}

/// 1 if a KMCG run ended in a breakdown (the paper's "crash"), else 0.
fn kmcg_crashed(status: &KmcgRunStatus) -> usize {
    match status {
        KmcgRunStatus::Estimate(_) => 1,
        KmcgRunStatus::Solver(why) => usize::from(why.contains("Breakdown")),
        _ => 0,
    }
}

/// KMCG and CG from one FOM run on `K + σ²I` ([`KrylovPlan::Shared`]).
fn shared_curves(s: &Problem<'_>, p_max: usize) -> Result<Vec<MethodCurve>, BenchError> {
    let start = Instant::now();
    let shifted = ShiftedOperator::new(s.k.clone(), s.noise)?;
    let rows: TestRow<'_> = Box::new(|v: &[f64]| (s.test_row)(v));
    let mut run = KmcgRun::new(
        &shifted,
        s.noise,
        &s.y,
        s.noise,
        &s.kss,
        rows,
        KmcgBasis::Fom,
        p_max,
    )?;
    let (mut km, mut cg) = (Vec::new(), Vec::new());
    while run.step()?.is_some() {
        let seconds = start.elapsed().as_secs_f64();
        km.push(kmcg_metrics(run.state(), &s.scoring, seconds)?);
        if let Some(fom) = run.fom() {
            let mean = cg_mean(s, fom.solution().as_ref());
            cg.push(cg_metrics(run.state().steps(), &mean, &s.scoring, seconds)?);
        }
    }
    let last = run.state().steps();
    let crashed = kmcg_crashed(run.status());
    Ok(vec![
        MethodCurve {
            method: Method::Kmcg,
            last_good: last,
            crashed,
            runs: 1,
            steps: km,
        },
        MethodCurve {
            method: Method::Cg,
            last_good: last,
            crashed,
            runs: 1,
            steps: cg,
        },
    ])
}

fn cg_curve(s: &Problem<'_>, p_max: usize) -> Result<MethodCurve, BenchError> {
    let start = Instant::now();
    let shifted = ShiftedOperator::new(s.k.clone(), s.noise)?;
    let b = faer::ColRef::from_slice(&s.y);
    let mut fom = FomSolver::new(
        &shifted,
        b,
        &FomOptions {
            max_steps: p_max,
            ..FomOptions::default()
        },
    )?;
    let mut steps = Vec::new();
    while let Some(step) = fom.step()? {
        let mean = cg_mean(s, fom.solution().as_ref());
        steps.push(cg_metrics(
            step.step,
            &mean,
            &s.scoring,
            start.elapsed().as_secs_f64(),
        )?);
    }
    Ok(MethodCurve {
        method: Method::Cg,
        last_good: fom.steps(),
        crashed: usize::from(matches!(fom.status(), FomStatus::Breakdown { .. })),
        runs: 1,
        steps,
    })
}

/// Textbook CG on `K + σ²I` (its own solve) and on `K` (its directions for KMCG).
fn textbook_curves(s: &Problem<'_>, p_max: usize) -> Result<Vec<MethodCurve>, BenchError> {
    let b = faer::ColRef::from_slice(&s.y);
    let opts = TextbookCgOptions {
        max_steps: p_max,
        ..TextbookCgOptions::default()
    };
    let start = Instant::now();
    let shifted = ShiftedOperator::new(s.k.clone(), s.noise)?;
    let mut cg = TextbookCg::new(&shifted, b, &opts)?;
    let mut cg_steps = Vec::new();
    while let Some(step) = cg.step()? {
        let mean = cg_mean(s, cg.solution().as_ref());
        cg_steps.push(cg_metrics(
            step.step,
            &mean,
            &s.scoring,
            start.elapsed().as_secs_f64(),
        )?);
    }
    let cg_curve = MethodCurve {
        method: Method::CgTextbook,
        last_good: cg.steps(),
        crashed: usize::from(matches!(cg.status(), FomStatus::Breakdown { .. })),
        runs: 1,
        steps: cg_steps,
    };
    let start = Instant::now();
    let mut on_k = TextbookCg::new(s.k.as_ref(), b, &opts)?;
    let yty = s.y.iter().map(|v| v * v).sum();
    let mut state = KmcgState::new(s.y.len(), s.noise, yty, &s.kss)?;
    let mut steps = Vec::new();
    let mut crashed = 0;
    while on_k.step()?.is_some() {
        let (d, z) = (on_k.directions(), on_k.products());
        let j = d.ncols() - 1;
        let sj: Vec<f64> = (0..d.nrows()).map(|i| d[(i, j)]).collect();
        let cols = columns_from_basis(d, z, 0.0, &s.y, (s.test_row)(&sj))?;
        if !state.push(&cols)? {
            crashed = 1;
            break;
        }
        steps.push(kmcg_metrics(
            &state,
            &s.scoring,
            start.elapsed().as_secs_f64(),
        )?);
    }
    if matches!(on_k.status(), FomStatus::Breakdown { .. }) {
        crashed = 1;
    }
    Ok(vec![
        cg_curve,
        MethodCurve {
            method: Method::KmcgTextbook,
            last_good: state.steps(),
            crashed,
            runs: 1,
            steps,
        },
    ])
}

/// Where the baselines' inducing inputs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inducing {
    /// The first `M` of a seeded permutation of the training inputs (nested in `M`).
    Random,
    /// `M` points per axis on a regular grid over the training inputs' range (one run).
    Grid,
}

/// The metrics of a sparse GP's predictions and evidence at step `p`.
fn sparse_metrics(
    s: &Problem<'_>,
    method: SparseMethod,
    p: usize,
    step: &NestedSparseStep,
    seconds: Option<f64>,
) -> Result<StepMetrics, BenchError> {
    let exact = s.scoring.exact();
    let ev = step.evidence;
    let var = match exact {
        Some(e) => {
            let predictive = Col::from_fn(step.latent_variance.nrows(), |j| {
                step.latent_variance[j] + s.noise
            });
            Some(eps_var(&e.variance, &predictive)?)
        }
        None => None,
    };
    Ok(StepMetrics {
        p,
        eps_f: s.scoring.mean_error(&step.mean)?,
        eps_var: var,
        eps_ev: exact.map(|e| eps_ev(e.nlz, ev.objective)),
        nlz_error: exact.map(|e| ev.objective - e.nlz),
        eps_ev_plotted: exact
            .filter(|_| method == SparseMethod::Vfe)
            .map(|e| eps_ev(e.nlz, ev.paper_plotted_vfe())),
        seconds,
    })
}

/// A from-scratch fit on `points` with the predictions a step scores, and its wall time;
/// `None` when a factor does not exist (the paper's "crash").
fn refit(
    s: &Problem<'_>,
    y: faer::ColRef<'_, f64>,
    method: SparseMethod,
    points: Result<InducingPoints, ModelError>,
) -> Result<Option<(NestedSparseStep, f64)>, BenchError> {
    let start = Instant::now();
    let fitted = points.and_then(|u| {
        let m = u.len();
        SparseGp::fit(s.kernel.clone(), s.x, y, s.noise, &u, method).map(|model| (model, m))
    });
    let (model, m) = match fitted {
        Ok(fitted) => fitted,
        Err(ModelError::InducingCholesky { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mean = model.predict_mean(s.xs)?;
    let evidence = model.evidence();
    let latent_variance = match s.scoring.exact() {
        Some(_) => model.predict_latent_variance(s.xs)?,
        None => Col::zeros(0),
    };
    let step = NestedSparseStep {
        m,
        mean,
        latent_variance,
        evidence,
    };
    Ok(Some((step, start.elapsed().as_secs_f64())))
}

/// VFE or FITC at each recorded step `P` with `M(P)` inducing inputs, averaged over the
/// repetitions that reached it (the paper's means; a factor that does not exist ends a
/// repetition: its "crash"). Random inducing inputs: each repetition's steps come from one
/// [`NestedSparsePath`] (equal to refitting at every step, to round-off; tested in
/// gp-models), and the first repetition is also refitted from scratch at the timed steps
/// for the time curves. Grid inducing inputs are not nested: refitted at every step.
fn baseline_curve(
    s: &Problem<'_>,
    method: SparseMethod,
    inducing: Inducing,
    options: &DenseRunOptions,
) -> Result<MethodCurve, BenchError> {
    let x = s.x;
    let n = x.nrows();
    let yc = col(&s.y);
    let steps_wanted: Vec<usize> = options
        .baseline_steps
        .iter()
        .copied()
        .filter(|&p| p <= options.p_max.min(n))
        .collect();
    let m_of = |p: usize| (options.inducing_count)(n, p).min(n);
    // Per step: the metrics of each repetition that reached it.
    let mut per_step: Vec<Vec<StepMetrics>> = vec![Vec::new(); steps_wanted.len()];
    let mut last_good = usize::MAX;
    let mut crashed = 0;
    let seeds: &[u64] = match inducing {
        Inducing::Random => &options.baseline_seeds,
        Inducing::Grid => &[0],
    };
    for (repetition, &seed) in seeds.iter().enumerate() {
        let mut reached = 0;
        let mut crash = false;
        if inducing == Inducing::Grid {
            for (slot, &p) in steps_wanted.iter().enumerate() {
                let points = InducingPoints::grid(x, &vec![m_of(p); x.ncols()]);
                let Some((step, seconds)) = refit(s, yc.as_ref(), method, points)? else {
                    crash = true;
                    break;
                };
                per_step[slot].push(sparse_metrics(s, method, p, &step, Some(seconds))?);
                reached = p;
            }
        } else {
            let subsets = NestedSubsets::new(n, seed);
            // M(P) can repeat for neighbouring P (small N): the path takes distinct sizes.
            let mut sizes: Vec<usize> = steps_wanted.iter().map(|&p| m_of(p)).collect();
            sizes.dedup();
            let Some(&m_max) = sizes.last() else {
                continue;
            };
            let path = NestedSparsePath::fit(
                s.kernel.as_ref(),
                x,
                yc.as_ref(),
                s.noise,
                &subsets.take(x, m_max)?,
                &sizes,
                method,
                s.xs,
            )?;
            for (slot, &p) in steps_wanted.iter().enumerate() {
                let m = m_of(p);
                let Some(step) = path.steps().iter().find(|st| st.m == m) else {
                    crash = true;
                    break;
                };
                let timed = repetition == 0 && options.timed_steps.contains(&p);
                let seconds = if timed {
                    refit(s, yc.as_ref(), method, subsets.take(x, m))?.map(|(_, t)| t)
                } else {
                    None
                };
                per_step[slot].push(sparse_metrics(s, method, p, step, seconds)?);
                reached = p;
            }
        }
        crashed += usize::from(crash);
        last_good = last_good.min(reached);
    }
    let steps = steps_wanted
        .iter()
        .zip(&per_step)
        .filter(|(_, runs)| !runs.is_empty())
        .map(|(&p, runs)| average(p, runs))
        .collect();
    Ok(MethodCurve {
        method: match (method, inducing) {
            (SparseMethod::Vfe, Inducing::Random) => Method::Vfe,
            (SparseMethod::Vfe, Inducing::Grid) => Method::VfeGrid,
            (_, Inducing::Random) => Method::Fitc,
            (_, Inducing::Grid) => Method::FitcGrid,
        },
        steps,
        last_good: if last_good == usize::MAX {
            0
        } else {
            last_good
        },
        crashed,
        runs: seeds.len(),
    })
}

fn mean_of(v: impl Iterator<Item = f64>) -> f64 {
    let (s, c) = v.fold((0.0, 0usize), |(s, c), x| (s + x, c + 1));
    s / c.max(1) as f64
}

/// The mean over repetitions of each metric, the median of the times taken.
fn average(p: usize, runs: &[StepMetrics]) -> StepMetrics {
    let opt = |f: fn(&StepMetrics) -> Option<f64>| -> Option<f64> {
        runs.iter()
            .map(f)
            .collect::<Option<Vec<f64>>>()
            .map(|v| mean_of(v.into_iter()))
    };
    let mut times: Vec<f64> = runs.iter().filter_map(|r| r.seconds).collect();
    times.sort_by(f64::total_cmp);
    StepMetrics {
        p,
        eps_f: mean_of(runs.iter().map(|r| r.eps_f)),
        eps_var: opt(|r| r.eps_var),
        eps_ev: opt(|r| r.eps_ev),
        nlz_error: opt(|r| r.nlz_error),
        eps_ev_plotted: opt(|r| r.eps_ev_plotted),
        seconds: times.get(times.len() / 2).copied(),
    }
}
