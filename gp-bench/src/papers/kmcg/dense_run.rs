//! One dense problem (data set × kernel) through every method of the paper's figures, step
//! by step: CG (FOM on `K + σ²I`), KMCG (FOM on `K`, as the paper), textbook CG and KMCG on
//! its directions (Figure 15), and VFE/FITC refitted from scratch at each recorded step with
//! `M = ⌈√(N P)⌉` nested random inducing inputs (spec §3.1).

use std::sync::Arc;
use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::Kernel;
use gp_linalg::{DenseOperator, LinearOperator, ShiftedOperator};
use gp_models::inducing::{NestedSubsets, SparseGp, SparseMethod};
use gp_models::kmcg::{
    columns_from_basis, dense_test_rows, KmcgBasis, KmcgRun, KmcgRunStatus, KmcgState,
};
use gp_solvers::{FomOptions, FomSolver, FomStatus, TextbookCg, TextbookCgOptions};

use super::curves::{Method, MethodCurve, ProblemRun, StepMetrics};
use super::dense::KmcgDense;
use super::exact::ExactReference;
use super::metrics::{eps_ev, eps_f, eps_var, inducing_count_dense};
use crate::error::BenchError;

/// How far and how often a dense problem runs.
#[derive(Debug, Clone)]
pub struct DenseRunOptions {
    /// Largest `P` of the Krylov methods (clamped to `N`).
    pub p_max: usize,
    /// Steps at which the baselines are refitted and scored (the Krylov methods are scored at
    /// every step up to `p_max`).
    pub baseline_steps: Vec<usize>,
    /// Seeds of the baselines' repetitions (nested random inducing subsets).
    pub baseline_seeds: Vec<u64>,
}

struct Shared<'a> {
    problem: &'a KmcgDense,
    kernel: Arc<dyn Kernel>,
    k: Arc<dyn LinearOperator>,
    kxs: Mat<f64>,
    kss: Vec<f64>,
    y: Vec<f64>,
    noise: f64,
}

fn col(v: &[f64]) -> Col<f64> {
    Col::from_fn(v.len(), |i| v[i])
}

/// The metrics of a KMCG estimate against the exact reference.
fn kmcg_metrics(
    st: &KmcgState,
    exact: &ExactReference,
    seconds: f64,
) -> Result<StepMetrics, BenchError> {
    let nlz = st.neg_log_evidence();
    Ok(StepMetrics {
        p: st.steps(),
        eps_f: eps_f(&exact.mean, &col(st.mean()))?,
        eps_var: Some(eps_var(&exact.variance, &col(&st.predictive_variance()))?),
        eps_ev: Some(eps_ev(exact.nlz, nlz)),
        nlz_error: Some(nlz - exact.nlz),
        eps_ev_plotted: None,
        seconds,
    })
}

fn cg_metrics(
    p: usize,
    mean: &Col<f64>,
    exact: &ExactReference,
    seconds: f64,
) -> Result<StepMetrics, BenchError> {
    Ok(StepMetrics {
        p,
        eps_f: eps_f(&exact.mean, mean)?,
        eps_var: None,
        eps_ev: None,
        nlz_error: None,
        eps_ev_plotted: None,
        seconds,
    })
}

/// Runs every method on one problem.
///
/// Errors: a kernel or operator failure (not a numerical breakdown, which ends that
/// method's curve as the paper's "crash").
pub fn run_problem(
    problem: &KmcgDense,
    options: &DenseRunOptions,
) -> Result<ProblemRun, BenchError> {
    let kernel = problem.kernel()?;
    let x = problem.x_train.as_ref();
    let xs = problem.x_test.as_ref();
    let k = kernel.matrix(x, x)?;
    let shared = Shared {
        problem,
        kxs: kernel.matrix(x, xs)?,
        kss: {
            let d = kernel.diag(xs)?;
            (0..d.nrows()).map(|i| d[i]).collect()
        },
        y: (0..x.nrows()).map(|i| problem.y_train[i]).collect(),
        noise: problem.hyper.noise_variance,
        k: Arc::new(DenseOperator::new(k)),
        kernel,
    };
    let p_max = options.p_max.min(x.nrows());
    let curves = vec![
        kmcg_curve(&shared, p_max)?,
        cg_curve(&shared, p_max)?,
        textbook_curves(&shared, p_max)?,
        baseline_curve(&shared, SparseMethod::Vfe, options)?,
        baseline_curve(&shared, SparseMethod::Fitc, options)?,
    ];
    let mut flat = Vec::new();
    for c in curves {
        flat.extend(c);
    }
    Ok(ProblemRun {
        dataset: problem.name.to_string(),
        kernel: problem.kind.label().to_string(),
        stand_in: problem.is_stand_in(),
        curves: flat,
    })
}

fn kmcg_curve(s: &Shared<'_>, p_max: usize) -> Result<Vec<MethodCurve>, BenchError> {
    let start = Instant::now();
    let mut run = KmcgRun::new(
        s.k.as_ref(),
        0.0,
        &s.y,
        s.noise,
        &s.kss,
        dense_test_rows(s.kxs.as_ref()),
        KmcgBasis::Fom,
        p_max,
    )?;
    let mut steps = Vec::new();
    while run.step()?.is_some() {
        steps.push(kmcg_metrics(
            run.state(),
            &s.problem.exact,
            start.elapsed().as_secs_f64(),
        )?);
    }
    let crashed = match run.status() {
        KmcgRunStatus::Estimate(_) => 1,
        KmcgRunStatus::Solver(why) => usize::from(why.contains("Breakdown")),
        _ => 0,
    };
    Ok(vec![MethodCurve {
        method: Method::Kmcg,
        last_good: run.state().steps(),
        crashed,
        runs: 1,
        steps,
    }])
}

fn cg_curve(s: &Shared<'_>, p_max: usize) -> Result<Vec<MethodCurve>, BenchError> {
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
        let mean = s.kxs.transpose() * fom.solution();
        steps.push(cg_metrics(
            step.step,
            &mean,
            &s.problem.exact,
            start.elapsed().as_secs_f64(),
        )?);
    }
    Ok(vec![MethodCurve {
        method: Method::Cg,
        last_good: fom.steps(),
        crashed: usize::from(matches!(fom.status(), FomStatus::Breakdown { .. })),
        runs: 1,
        steps,
    }])
}

/// Textbook CG on `K + σ²I` (its own solve) and on `K` (its directions for KMCG).
fn textbook_curves(s: &Shared<'_>, p_max: usize) -> Result<Vec<MethodCurve>, BenchError> {
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
        let mean = s.kxs.transpose() * cg.solution();
        cg_steps.push(cg_metrics(
            step.step,
            &mean,
            &s.problem.exact,
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
    let rows = dense_test_rows(s.kxs.as_ref());
    let mut steps = Vec::new();
    let mut crashed = 0;
    while on_k.step()?.is_some() {
        let (d, z) = (on_k.directions(), on_k.products());
        let j = d.ncols() - 1;
        let sj: Vec<f64> = (0..d.nrows()).map(|i| d[(i, j)]).collect();
        let cols = columns_from_basis(d, z, 0.0, &s.y, rows(&sj))?;
        if !state.push(&cols)? {
            crashed = 1;
            break;
        }
        steps.push(kmcg_metrics(
            &state,
            &s.problem.exact,
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

/// VFE or FITC refitted at each recorded step, averaged over the repetitions that reached
/// it (the paper's means; a failed Cholesky ends a repetition: its "crash").
fn baseline_curve(
    s: &Shared<'_>,
    method: SparseMethod,
    options: &DenseRunOptions,
) -> Result<Vec<MethodCurve>, BenchError> {
    let x = s.problem.x_train.as_ref();
    let xs = s.problem.x_test.as_ref();
    let yc = col(&s.y);
    let n = x.nrows();
    let exact = &s.problem.exact;
    let steps_wanted: Vec<usize> = options
        .baseline_steps
        .iter()
        .copied()
        .filter(|&p| p <= options.p_max.min(n))
        .collect();
    // Per step: the metrics of each repetition that reached it.
    let mut per_step: Vec<Vec<StepMetrics>> = vec![Vec::new(); steps_wanted.len()];
    let mut last_good = usize::MAX;
    let mut crashed = 0;
    for &seed in &options.baseline_seeds {
        let subsets = NestedSubsets::new(n, seed);
        let mut reached = 0;
        let mut crash = false;
        for (slot, &p) in steps_wanted.iter().enumerate() {
            let m = inducing_count_dense(n, p).min(n);
            let start = Instant::now();
            let fitted = subsets
                .take(x, m)
                .and_then(|u| SparseGp::fit(s.kernel.clone(), x, yc.as_ref(), s.noise, &u, method));
            let model = match fitted {
                Ok(model) => model,
                Err(gp_models::ModelError::InducingCholesky { .. }) => {
                    crash = true;
                    break;
                }
                Err(e) => return Err(e.into()),
            };
            let mean = model.predict_mean(xs)?;
            let var = model.predict_variance(xs)?;
            let ev = model.evidence();
            let seconds = start.elapsed().as_secs_f64();
            per_step[slot].push(StepMetrics {
                p,
                eps_f: eps_f(&exact.mean, &mean)?,
                eps_var: Some(eps_var(&exact.variance, &var)?),
                eps_ev: Some(eps_ev(exact.nlz, ev.objective)),
                nlz_error: Some(ev.objective - exact.nlz),
                eps_ev_plotted: (method == SparseMethod::Vfe)
                    .then(|| eps_ev(exact.nlz, ev.paper_plotted_vfe())),
                seconds,
            });
            reached = p;
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
    Ok(vec![MethodCurve {
        method: if method == SparseMethod::Vfe {
            Method::Vfe
        } else {
            Method::Fitc
        },
        steps,
        last_good: if last_good == usize::MAX {
            0
        } else {
            last_good
        },
        crashed,
        runs: options.baseline_seeds.len(),
    }])
}

fn mean_of(v: impl Iterator<Item = f64>) -> f64 {
    let (s, c) = v.fold((0.0, 0usize), |(s, c), x| (s + x, c + 1));
    s / c.max(1) as f64
}

/// The mean over repetitions of each metric, the median of the times.
fn average(p: usize, runs: &[StepMetrics]) -> StepMetrics {
    let opt = |f: fn(&StepMetrics) -> Option<f64>| -> Option<f64> {
        runs.iter()
            .map(f)
            .collect::<Option<Vec<f64>>>()
            .map(|v| mean_of(v.into_iter()))
    };
    let mut times: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    times.sort_by(f64::total_cmp);
    StepMetrics {
        p,
        eps_f: mean_of(runs.iter().map(|r| r.eps_f)),
        eps_var: opt(|r| r.eps_var),
        eps_ev: opt(|r| r.eps_ev),
        nlz_error: opt(|r| r.nlz_error),
        eps_ev_plotted: opt(|r| r.eps_ev_plotted),
        seconds: times[times.len() / 2],
    }
}
