//! The illustrations of IterNCGP Sec. 3 (App. C.1): Fig. 2's exact Newton steps as a
//! sequence of GP regressions on 1-D data (consecutive posteriors are close, which motivates
//! recycling), and Figs. 3 and 8's posterior mean and covariance of the first Newton step
//! after `j ∈ {1, 10, 19}` unit-vector or CG actions against the exact ones, on the 2-D data.
//! The paper shows these as pictures only; the tables here give the distances the pictures
//! convey, and the raw JSON keeps the fields so that the pictures can be drawn.

use std::ops::ControlFlow;

use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{Cholesky, DenseOperator};
use gp_models::ncgp::{
    iterncgp, Bernoulli, DenseLaplace, IterNcgpOptions, IterNcgpPosterior, IterNcgpStop,
    LaplaceLikelihood, LaplaceOptions, SharedOutputs,
};
use gp_solvers::pls::{PlsOptions, Policy, ResidualPolicy, UnitVectorPolicy};
use gp_structured::GridAxis;
use serde_json::{json, Value};

use super::common::run_stepped_with;
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::synthetic::binary::{
    binary_classification, binary_classification_1d, BinaryData, BINARY_1D_RANGE, BINARY_2D_BOX,
    BINARY_LENGTHSCALE,
};
use crate::synthetic::grid::grid_points;
use crate::table::Table;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct NewtonIllustration;

/// Training points of the 1-D data (C.1).
const FIG2_N: usize = 50;
/// Prior outputscale of the 1-D data (C.1).
const FIG2_OUTPUTSCALE: f64 = 5.0;
/// Test points of Fig. 2's 1-D grid.
const FIG2_GRID_POINTS: usize = 200;
/// The 1-D grid: the data range `[−3, 5]` with half a length scale of margin on each side,
/// where the posterior reverts to the prior.
const FIG2_GRID_RANGE: (f64, f64) = (-3.5, 5.5);
/// Most Newton steps of Fig. 2 (exact Newton on this problem takes a handful).
const FIG2_MAX_OUTER: usize = 50;
/// Training points of the 2-D data of Figs. 3 and 8 (C.1).
const FIG3_N: usize = 100;
/// Prior outputscale of Figs. 3 and 8 (C.1).
const FIG3_OUTPUTSCALE: f64 = 10.0;
/// The solver iterations shown in Figs. 3 and 8.
const FIG3_SHOWN: [usize; 3] = [1, 10, 19];
/// The errors are tracked for `j = 1, …, FIG3_MAX_J` (the largest shown).
const FIG3_MAX_J: usize = 19;
/// The paper's CG iterations to the inner tolerance in step 0 (C.1, on its own draw).
const PAPER_CG_ITERATIONS: usize = 19;

/// Grid sizes: the mean on a `mean_side²` grid over the data box (Fig. 3), the dense
/// covariance on a coarser `cov_side²` grid (Fig. 8: a `cov_side² × cov_side²` matrix).
#[derive(Debug, Clone, Copy)]
struct Plan {
    mean_side: usize,
    cov_side: usize,
}

/// Every size runs the paper's data sizes (`N = 50` and `100` take well under a second); the
/// smoke size only uses coarser test grids.
fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            mean_side: 15,
            cov_side: 8,
        },
        RunSize::Quick | RunSize::Full => Plan {
            mean_side: 30,
            cov_side: 12,
        },
    }
}

/// `count ≥ 2` equally spaced points from `lo` to `hi` inclusive (a grid axis's points).
fn linspace(lo: f64, hi: f64, count: usize) -> Result<Vec<f64>, BenchError> {
    Ok(GridAxis::new(lo, hi, count)?.points())
}

/// `‖a − b‖₂ / ‖b‖₂` (for matrices, the Frobenius norm).
fn rel_col(a: &Col<f64>, b: &Col<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2().max(1e-300)
}

/// [`rel_col`] for matrices (Frobenius norm).
fn rel_mat(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2().max(1e-300)
}

/// Options of an *exact* solve per Newton step with unit vectors ("j ≤ N"): all `n` actions
/// and no early stop. The tolerances are zero so the solver does not stop at relative
/// residual 1e-5 with a root `Q` of fewer than `n` columns — the covariance would then not
/// be the exact one (the mean would be within 1e-5). No recycling: each step starts from
/// the prior, as Fig. 2's independent GP regressions.
fn exact_options(n: usize, max_outer: usize) -> IterNcgpOptions {
    IterNcgpOptions {
        max_inner: Some(n),
        solver: PlsOptions {
            abs_tolerance: 0.0,
            rel_tolerance: 0.0,
            ..PlsOptions::default()
        },
        recycling: None,
        max_outer,
        ..IterNcgpOptions::default()
    }
}

/// Column 0 of a latent-marginal matrix (`C = 1`).
fn first_column(m: MatRef<'_, f64>) -> Col<f64> {
    Col::from_fn(m.nrows(), |i| m[(i, 0)])
}

/// One Newton step of Fig. 2 on the 1-D grid.
struct NewtonStep {
    /// Unit-vector actions taken (`N` for an exact solve).
    inner: usize,
    /// The run's `‖g_{i+1} − g_i‖ / ‖g_{i+1}‖` at the training inputs.
    relative_change: f64,
    /// Posterior mean on the grid.
    mean: Col<f64>,
    /// Posterior standard deviation on the grid.
    std: Col<f64>,
    /// `‖m_i − m_{i−1}‖_∞` on the grid (step 0: against the prior mean 0).
    mean_change: f64,
    /// `max |σ_i − σ_{i−1}|` on the grid (step 0: against the prior `√s`).
    std_change: f64,
    /// `‖f_{i+1} − f^{dense}_{i+1}‖ / ‖f^{dense}_{i+1}‖` against dense Newton's iterate
    /// (`None` past dense Newton's last step).
    dense_rel: Option<f64>,
}

/// Fig. 2: the data, the grid and every Newton step's posterior.
struct Fig2 {
    data: BinaryData,
    grid: Vec<f64>,
    steps: Vec<NewtonStep>,
    /// Pseudo targets `ŷ(f_i)` of the last step `i` (its GP regression's targets, noise
    /// `W(f_i)⁻¹`), at the training inputs.
    pseudo_targets: Col<f64>,
    /// Whether the run met the outer tolerance.
    converged: bool,
    /// Dense Newton's steps to the same tolerance.
    dense_steps: usize,
}

impl Fig2 {
    /// `‖m_L − m_{L−1}‖_∞ / ‖m_0 − 0‖_∞`: the last step's change relative to the first.
    fn last_over_first(&self) -> f64 {
        match (self.steps.first(), self.steps.last()) {
            (Some(a), Some(b)) if self.steps.len() >= 2 => b.mean_change / a.mean_change,
            _ => f64::NAN,
        }
    }

    /// The largest distance to dense Newton's iterate over the steps both took.
    fn worst_dense(&self) -> f64 {
        self.steps
            .iter()
            .filter_map(|s| s.dense_rel)
            .fold(0.0, f64::max)
    }
}

/// Runs exact Newton as IterNCGP with unit vectors and `j ≤ N` on the 1-D data of `seed`,
/// and predicts every step's posterior on the grid.
fn fig2(seed: u64) -> Result<Fig2, BenchError> {
    let data = binary_classification_1d(FIG2_N, FIG2_OUTPUTSCALE, seed)?;
    // The model prior is the generating one (zero mean, same RBF), as in the paper.
    let kernel = SquaredExponential::new(vec![BINARY_LENGTHSCALE], FIG2_OUTPUTSCALE)?;
    let k = kernel.matrix(data.x.as_ref(), data.x.as_ref())?;
    let op = DenseOperator::new(k.clone());
    let shared = SharedOutputs::new(&op, 1)?;
    let grid = linspace(FIG2_GRID_RANGE.0, FIG2_GRID_RANGE.1, FIG2_GRID_POINTS)?;
    let xg = Mat::from_fn(grid.len(), 1, |i, _| grid[i]);
    let cross = DenseOperator::new(kernel.matrix(xg.as_ref(), data.x.as_ref())?);
    let prior_variance = Col::from_fn(grid.len(), |_| FIG2_OUTPUTSCALE);

    let stepped = run_stepped_with(
        &shared,
        data.y.as_ref(),
        &Bernoulli,
        &mut UnitVectorPolicy::new(),
        &exact_options(FIG2_N, FIG2_MAX_OUTER),
        // N = 50: every step's posterior is kept (a few kB).
        &mut |post| Ok(post.clone()),
    )?;
    // Dense Newton with the same stopping rule: its iterates are the `f_{i+1}` that exact
    // inner solves must reproduce (Prop. A.1: a Newton step is a GP regression).
    let zeros = Col::<f64>::zeros(FIG2_N);
    let dense = DenseLaplace::fit(
        k.as_ref(),
        zeros.as_ref(),
        data.y.as_ref(),
        &Bernoulli,
        &LaplaceOptions::default(),
    )?;

    let mut steps: Vec<NewtonStep> = Vec::with_capacity(stepped.per_step.len());
    for (i, (post, record)) in stepped.per_step.iter().zip(&stepped.run.steps).enumerate() {
        let marg = post.predict(&cross, prior_variance.as_ref(), None)?;
        let mean = first_column(marg.mean.as_ref());
        let std = Col::from_fn(grid.len(), |t| marg.variance[(t, 0)].max(0.0).sqrt());
        let (mean_change, std_change) = match steps.last() {
            Some(prev) => (
                (&mean - &prev.mean).norm_max(),
                (&std - &prev.std).norm_max(),
            ),
            None => (
                mean.norm_max(),
                std.iter()
                    .map(|s| (s - FIG2_OUTPUTSCALE.sqrt()).abs())
                    .fold(0.0, f64::max),
            ),
        };
        let f_next = k.as_ref() * post.weights();
        steps.push(NewtonStep {
            inner: record.inner_iterations,
            relative_change: record.relative_change,
            mean,
            std,
            mean_change,
            std_change,
            dense_rel: dense.iterates.get(i).map(|d| rel_col(&f_next, d)),
        });
    }
    // The last step started from f_{L} = K v_{L−1} (f_0 = 0 if it is the first).
    let last = stepped.per_step.len();
    let f_start = match last.checked_sub(2).and_then(|i| stepped.per_step.get(i)) {
        Some(post) => k.as_ref() * post.weights(),
        None => zeros.clone(),
    };
    let pseudo_targets = Bernoulli.pseudo_targets(f_start.as_ref(), data.y.as_ref())?;
    Ok(Fig2 {
        data,
        grid,
        steps,
        pseudo_targets,
        converged: stepped.run.stop == IterNcgpStop::Converged,
        dense_steps: dense.iterates.len(),
    })
}

fn fig2_report(fig: &Fig2) -> (Table, Vec<Check>) {
    let mut table = Table::new([
        "Newton step i",
        "unit-vector actions j",
        "‖g_{i+1} − g_i‖ / ‖g_{i+1}‖ (training)",
        "‖m_i − m_{i−1}‖_∞ (grid)",
        "max |σ_i − σ_{i−1}| (grid)",
        "rel. distance of f_{i+1} to dense Newton",
    ]);
    for (i, s) in fig.steps.iter().enumerate() {
        table.row([
            i.to_string(),
            s.inner.to_string(),
            format!("{:.2e}", s.relative_change),
            format!("{:.3e}", s.mean_change),
            format!("{:.3e}", s.std_change),
            s.dense_rel
                .map_or_else(|| "–".into(), |r| format!("{r:.1e}")),
        ]);
    }
    let ratio = fig.last_over_first();
    let worst = fig.worst_dense();
    let compared = fig.steps.iter().filter(|s| s.dense_rel.is_some()).count();
    let checks = vec![
        Check::new(
            format!(
                "Fig. 2: exact Newton converges (outer tolerance 1 %) and the last step moves \
                 the grid mean by ≤ 1 % of the first step's move ({} steps; ratio {ratio:.2e})",
                fig.steps.len()
            ),
            fig.converged && ratio <= 0.01,
        ),
        Check::new(
            format!(
                "Fig. 2 / Prop. A.1: IterNCGP with unit vectors and j ≤ N reproduces dense \
                 Newton's iterates (rel ≤ 1e-8 over {compared} steps; worst {worst:.1e}; dense \
                 Newton: {} steps)",
                fig.dense_steps
            ),
            compared > 0 && compared == fig.steps.len().min(fig.dense_steps) && worst <= 1e-8,
        ),
    ];
    (table, checks)
}

fn fig2_curve(fig: &Fig2, seed: u64) -> Curve {
    let on_grid = |values: &Col<f64>| -> Vec<(f64, f64)> {
        fig.grid
            .iter()
            .copied()
            .zip(values.iter().copied())
            .collect()
    };
    let mut series: Vec<Series> = fig
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| Series {
            name: format!("mean after Newton step i = {i}"),
            points: on_grid(&s.mean),
            style: SeriesStyle::Line,
        })
        .collect();
    if let Some(last) = fig.steps.last() {
        let band = |sign: f64| {
            Col::from_fn(last.mean.nrows(), |t| {
                last.mean[t] + sign * 2.0 * last.std[t]
            })
        };
        series.push(Series {
            name: "last step: mean + 2σ".into(),
            points: on_grid(&band(1.0)),
            style: SeriesStyle::Line,
        });
        series.push(Series {
            name: "last step: mean − 2σ".into(),
            points: on_grid(&band(-1.0)),
            style: SeriesStyle::Line,
        });
    }
    // The true latent function at the training inputs, in input order (50 points on [−3, 5]
    // resolve a length scale of 1, so a line through them shows the function).
    let mut truth: Vec<(f64, f64)> = (0..fig.data.f.nrows())
        .map(|i| (fig.data.x[(i, 0)], fig.data.f[i]))
        .collect();
    truth.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.push(Series {
        name: "true latent f at the training inputs".into(),
        points: truth,
        style: SeriesStyle::Line,
    });
    Curve {
        file_stem: "illustration_newton_steps".into(),
        title: format!(
            "Fig. 2: latent posterior after each exact Newton step (unit vectors, j ≤ N = {}), \
             1-D binary s = {}, seed {seed}",
            FIG2_N, FIG2_OUTPUTSCALE
        ),
        x_label: "x".into(),
        y_label: "latent f".into(),
        log_x: false,
        log_y: false,
        series,
    }
}

/// The beliefs `(v, Q)` of Newton step 0 after `j = 1, …, FIG3_MAX_J` actions and at the end
/// of the solve.
struct Step0 {
    /// Index `j − 1`; a solve that ended before `FIG3_MAX_J` repeats its last belief.
    beliefs: Vec<IterNcgpPosterior>,
    /// The belief at the end of the solve.
    last: IterNcgpPosterior,
    /// Actions the solve took.
    iterations: usize,
}

/// Runs Newton step 0 only, from `f₀ = 0`, with `policy` and `options`, keeping the beliefs
/// after the first [`FIG3_MAX_J`] actions.
fn step0(
    shared: &SharedOutputs<'_>,
    y: &Col<f64>,
    policy: &mut dyn Policy,
    options: &IterNcgpOptions,
) -> Result<Step0, BenchError> {
    let mut kept: Vec<(Col<f64>, Mat<f64>)> = Vec::with_capacity(FIG3_MAX_J);
    let run = iterncgp(
        shared,
        Col::zeros(y.nrows()).as_ref(),
        y.as_ref(),
        &Bernoulli,
        policy,
        &IterNcgpOptions {
            max_outer: 1,
            ..*options
        },
        &mut |p| {
            if p.outer == 0 && (1..=FIG3_MAX_J).contains(&p.inner) {
                kept.push((p.weights.to_owned(), p.root.to_owned()));
            }
            ControlFlow::Continue(())
        },
    )?;
    let mut beliefs = kept
        .into_iter()
        .map(|(v, q)| IterNcgpPosterior::new(v, q, 1))
        .collect::<Result<Vec<_>, _>>()?;
    // A solve that met its tolerance before j = FIG3_MAX_J stays at its last belief.
    while beliefs.len() < FIG3_MAX_J {
        beliefs.push(run.posterior.clone());
    }
    Ok(Step0 {
        beliefs,
        last: run.posterior,
        iterations: run.steps.first().map_or(0, |s| s.inner_iterations),
    })
}

/// The test grids and the kernel matrices the errors need.
struct Fig3Grids {
    mean_axes: [Vec<f64>; 2],
    /// `K(X_mean, X)` and the prior variances there.
    mean_cross: DenseOperator,
    mean_prior: Col<f64>,
    /// `K(X_cov, X)` and `K(X_cov, X_cov)`.
    cov_cross: Mat<f64>,
    cov_prior: Mat<f64>,
}

/// Mean on the mean grid and covariance `K⋄⋄ − (K⋄Q)(K⋄Q)ᵀ` on the covariance grid.
fn mean_and_cov(
    post: &IterNcgpPosterior,
    grids: &Fig3Grids,
) -> Result<(Col<f64>, Mat<f64>), BenchError> {
    let marg = post.predict(&grids.mean_cross, grids.mean_prior.as_ref(), None)?;
    let kq = grids.cov_cross.as_ref() * post.root();
    let cov = &grids.cov_prior - &kq * kq.transpose();
    Ok((first_column(marg.mean.as_ref()), cov))
}

/// One policy's distance to the exact step-0 posterior for `j = 1, …, FIG3_MAX_J`.
struct PolicyErrors {
    /// Relative mean error on the mean grid (Fig. 3), index `j − 1`.
    mean: Vec<f64>,
    /// Relative covariance error on the covariance grid (Fig. 8), index `j − 1`.
    cov: Vec<f64>,
    /// Relative `K̂`-norm error of the representer weights, `‖v_j − v*‖_K̂ / ‖v*‖_K̂`, index
    /// `j − 1`: the error each policy's projection minimises over its actions' span, so it
    /// cannot grow with `j` (filled from the dense solve by [`energy_errors`]).
    energy: Vec<f64>,
    /// Means on the mean grid at the shown `j` ([`FIG3_SHOWN`]).
    shown_means: Vec<Col<f64>>,
    /// Actions the solve took.
    iterations: usize,
}

impl PolicyErrors {
    fn at(values: &[f64], j: usize) -> f64 {
        j.checked_sub(1)
            .and_then(|i| values.get(i))
            .copied()
            .unwrap_or(f64::NAN)
    }

    fn mean_at(&self, j: usize) -> f64 {
        Self::at(&self.mean, j)
    }

    fn cov_at(&self, j: usize) -> f64 {
        Self::at(&self.cov, j)
    }

    fn energy_at(&self, j: usize) -> f64 {
        Self::at(&self.energy, j)
    }

    /// The `K̂`-norm errors of `j = 1..=last` never grow (by more than rounding).
    fn energy_non_increasing(&self, last: usize) -> bool {
        let first = self.energy_at(1);
        (1..last).all(|j| self.energy_at(j + 1) <= self.energy_at(j) + 1e-12 * first)
    }
}

fn policy_errors(
    step: &Step0,
    grids: &Fig3Grids,
    truth: &(Col<f64>, Mat<f64>),
) -> Result<PolicyErrors, BenchError> {
    let (mut mean, mut cov, mut shown_means) = (Vec::new(), Vec::new(), Vec::new());
    for (i, post) in step.beliefs.iter().enumerate() {
        let (m, c) = mean_and_cov(post, grids)?;
        mean.push(rel_col(&m, &truth.0));
        cov.push(rel_mat(&c, &truth.1));
        if FIG3_SHOWN.contains(&(i + 1)) {
            shown_means.push(m);
        }
    }
    Ok(PolicyErrors {
        mean,
        cov,
        energy: Vec::new(),
        shown_means,
        iterations: step.iterations,
    })
}

/// Figs. 3 and 8: both policies against the exact step-0 posterior on the 2-D data.
struct Fig3 {
    data: BinaryData,
    grids: Fig3Grids,
    cov_side: usize,
    true_mean: Col<f64>,
    unit: PolicyErrors,
    cg: PolicyErrors,
    /// The CG actions `s_j = r_{j−1} = b − K̂ v_{j−1}` at the shown `j` (the paper's marker
    /// sizes are `|s|`).
    cg_actions: Vec<Col<f64>>,
    /// Unit-vector actions of the exact reference (should be `N`).
    reference_iterations: usize,
    /// The reference against a dense Cholesky solve of step 0: mean and covariance.
    reference_vs_dense: (f64, f64),
}

/// Newton step 0 solved densely.
struct DenseStep0 {
    /// Posterior mean on the mean grid.
    mean: Col<f64>,
    /// Posterior covariance on the covariance grid.
    cov: Mat<f64>,
    /// The step's system matrix `K̂ = K + W(0)⁻¹`.
    khat: Mat<f64>,
    /// Its right-hand side `b = ŷ(0)` (zero prior mean).
    b: Col<f64>,
    /// The exact representer weights `v* = K̂⁻¹ b`.
    weights: Col<f64>,
}

/// `‖v_j − v*‖_K̂ / ‖v*‖_K̂` for every belief of `step` (`j = 1, 2, …`).
fn energy_errors(step: &Step0, khat: &Mat<f64>, exact: &Col<f64>) -> Vec<f64> {
    let norm = |e: &Col<f64>| (e.transpose() * (khat * e)).max(0.0).sqrt();
    let scale = norm(exact);
    step.beliefs
        .iter()
        .map(|post| norm(&(post.weights() - exact)) / scale)
        .collect()
}

/// The dense step-0 posterior `m = K⋄ K̂⁻¹ b`, `Σ = K⋄⋄ − K⋄ K̂⁻¹ K⋄ᵀ`, `K̂ = K + W(0)⁻¹`,
/// `b = ŷ(0)`: an independent check that the unit-vector reference is the exact one.
fn dense_step0(
    k: &Mat<f64>,
    y: &Col<f64>,
    grids: &Fig3Grids,
    mean_cross: &Mat<f64>,
) -> Result<DenseStep0, BenchError> {
    let n = y.nrows();
    let f0 = Col::<f64>::zeros(n);
    // The logistic likelihood's W is diagonal (one latent function).
    let w = Bernoulli.curvature_dense(f0.as_ref());
    let khat = Mat::from_fn(n, n, |i, j| {
        k[(i, j)] + if i == j { 1.0 / w[(i, i)] } else { 0.0 }
    });
    let b = Bernoulli.pseudo_targets(f0.as_ref(), y.as_ref())?;
    let chol = Cholesky::new(khat.as_ref())?;
    let weights = chol.solve_col(b.as_ref())?;
    let mean = mean_cross * &weights;
    let solved = chol.solve(grids.cov_cross.transpose())?;
    let cov = &grids.cov_prior - &grids.cov_cross * &solved;
    Ok(DenseStep0 {
        mean,
        cov,
        khat,
        b,
        weights,
    })
}

fn fig3(seed: u64, plan: Plan) -> Result<Fig3, BenchError> {
    // Fig. 4's data and seed convention in `binary` (s = 10 on the run's seed).
    let data = binary_classification(FIG3_N, FIG3_OUTPUTSCALE, seed)?;
    let kernel = SquaredExponential::new(vec![BINARY_LENGTHSCALE; 2], FIG3_OUTPUTSCALE)?;
    let k = kernel.matrix(data.x.as_ref(), data.x.as_ref())?;
    let op = DenseOperator::new(k.clone());
    let shared = SharedOutputs::new(&op, 1)?;

    let axes = |side: usize| -> Result<[Vec<f64>; 2], BenchError> {
        Ok([
            linspace(BINARY_2D_BOX[0].0, BINARY_2D_BOX[0].1, side)?,
            linspace(BINARY_2D_BOX[1].0, BINARY_2D_BOX[1].1, side)?,
        ])
    };
    let mean_axes = axes(plan.mean_side)?;
    let mean_points = grid_points(&mean_axes);
    let cov_points = grid_points(&axes(plan.cov_side)?);
    let mean_cross = kernel.matrix(mean_points.as_ref(), data.x.as_ref())?;
    let grids = Fig3Grids {
        mean_axes,
        mean_cross: DenseOperator::new(mean_cross.clone()),
        mean_prior: Col::from_fn(mean_points.nrows(), |_| FIG3_OUTPUTSCALE),
        cov_cross: kernel.matrix(cov_points.as_ref(), data.x.as_ref())?,
        cov_prior: kernel.matrix(cov_points.as_ref(), cov_points.as_ref())?,
    };

    // The paper's "true" posterior: IterNCGP-Chol with j ≤ N = 100 (the exact solve).
    let unit = step0(
        &shared,
        &data.y,
        &mut UnitVectorPolicy::new(),
        &exact_options(FIG3_N, 1),
    )?;
    let truth = mean_and_cov(&unit.last, &grids)?;
    // CG as in every IterNCGP-CG run: to the inner tolerance 1e-5.
    let cg = step0(
        &shared,
        &data.y,
        &mut ResidualPolicy,
        &IterNcgpOptions {
            recycling: None,
            ..IterNcgpOptions::default()
        },
    )?;
    let mut unit_errors = policy_errors(&unit, &grids, &truth)?;
    let mut cg_errors = policy_errors(&cg, &grids, &truth)?;

    let DenseStep0 {
        mean: dense_mean,
        cov: dense_cov,
        khat,
        b,
        weights,
    } = dense_step0(&k, &data.y, &grids, &mean_cross)?;
    unit_errors.energy = energy_errors(&unit, &khat, &weights);
    cg_errors.energy = energy_errors(&cg, &khat, &weights);
    let cg_actions = FIG3_SHOWN
        .iter()
        .map(
            |&j| match j.checked_sub(2).and_then(|i| cg.beliefs.get(i)) {
                // s_j = r_{j−1} = b − K̂ v_{j−1}; v_0 = 0.
                Some(post) => &b - khat.as_ref() * post.weights(),
                None => b.clone(),
            },
        )
        .collect();
    Ok(Fig3 {
        reference_vs_dense: (
            rel_col(&truth.0, &dense_mean),
            rel_mat(&truth.1, &dense_cov),
        ),
        reference_iterations: unit.iterations,
        data,
        grids,
        cov_side: plan.cov_side,
        true_mean: truth.0,
        unit: unit_errors,
        cg: cg_errors,
        cg_actions,
    })
}

fn fig3_report(fig: &Fig3) -> (Table, Vec<Check>) {
    let mut table = Table::new([
        "j",
        "unit vectors: rel. mean error (Fig. 3)",
        "CG: rel. mean error (Fig. 3)",
        "unit vectors: rel. covariance error (Fig. 8)",
        "CG: rel. covariance error (Fig. 8)",
        "unit vectors: rel. K̂-norm error of v",
        "CG: rel. K̂-norm error of v",
    ]);
    for &j in &FIG3_SHOWN {
        table.row([
            j.to_string(),
            format!("{:.3e}", fig.unit.mean_at(j)),
            format!("{:.3e}", fig.cg.mean_at(j)),
            format!("{:.3e}", fig.unit.cov_at(j)),
            format!("{:.3e}", fig.cg.cov_at(j)),
            format!("{:.3e}", fig.unit.energy_at(j)),
            format!("{:.3e}", fig.cg.energy_at(j)),
        ]);
    }
    let (u10, c10) = (fig.unit.mean_at(10), fig.cg.mean_at(10));
    let (uv, cg) = (&fig.unit, &fig.cg);
    let j = FIG3_MAX_J;
    let checks = vec![
        Check::new(
            format!(
                "Fig. 3: after j = 10 actions CG's posterior mean is closer to the exact one \
                 than the unit vectors' (rel. error {c10:.3e} vs {u10:.3e}): CG targets all the \
                 data, unit vectors only the points visited"
            ),
            c10 < u10,
        ),
        // The property the mean error has: each policy's weights are the K̂-orthogonal
        // projection of v* onto the (nested) span of its actions, so their K̂-norm error
        // cannot grow with j (up to rounding). The mean error on the grid (the table's
        // column) has no such guarantee: a subset-of-data mean can move away from the
        // full-data one as points are added.
        Check::new(
            format!(
                "Fig. 3: for both policies the K̂-norm error of the representer weights, which \
                 each action minimises over the actions' span, does not grow over j = 1..{j} \
                 (unit vectors {:.3e} → {:.3e}; CG {:.3e} → {:.3e}; slack 1e-12 × the first \
                 error for rounding)",
                uv.energy_at(1),
                uv.energy_at(j),
                cg.energy_at(1),
                cg.energy_at(j),
            ),
            uv.energy_non_increasing(j) && cg.energy_non_increasing(j),
        ),
        // An identity up to rounding: Σ_j − Σ_true = K⋄(K̂⁻¹ − C_j)K⋄ᵀ is PSD and shrinks in
        // the Loewner order as C_j grows, so its Frobenius norm cannot grow.
        Check::new(
            format!(
                "Fig. 8: for both policies the covariance error at j = {j} is below that at \
                 j = 1 (unit vectors {:.3e} → {:.3e}; CG {:.3e} → {:.3e})",
                uv.cov_at(1),
                uv.cov_at(j),
                cg.cov_at(1),
                cg.cov_at(j),
            ),
            uv.cov_at(j) < uv.cov_at(1) && cg.cov_at(j) < cg.cov_at(1),
        ),
    ];
    (table, checks)
}

fn fig3_curves(fig: &Fig3, seed: u64) -> Vec<Curve> {
    let by_j = |values: &[f64]| -> Vec<(f64, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &e)| ((i + 1) as f64, e))
            .collect()
    };
    let curve = |stem: &str, what: String, unit: &[f64], cg: &[f64]| Curve {
        file_stem: stem.into(),
        title: format!(
            "{what} of Newton step 0 after j actions vs the exact solve, 2-D binary s = {}, \
             N = {}, seed {seed}",
            FIG3_OUTPUTSCALE, FIG3_N
        ),
        x_label: "solver iterations j".into(),
        y_label: "relative error".into(),
        log_x: false,
        log_y: true,
        series: vec![
            Series {
                name: "unit vectors (IterNCGP-Chol)".into(),
                points: by_j(unit),
                style: SeriesStyle::Line,
            },
            Series {
                name: "CG residuals (IterNCGP-CG)".into(),
                points: by_j(cg),
                style: SeriesStyle::Line,
            },
        ],
    };
    vec![
        curve(
            "illustration_fig3_mean_error",
            format!(
                "Fig. 3: posterior-mean error ({0} × {0} grid)",
                fig.grids.mean_axes[0].len()
            ),
            &fig.unit.mean,
            &fig.cg.mean,
        ),
        curve(
            "illustration_fig8_covariance_error",
            format!(
                "Fig. 8: posterior-covariance error (Frobenius, {0} × {0} grid)",
                fig.cov_side
            ),
            &fig.unit.cov,
            &fig.cg.cov,
        ),
    ]
}

fn col_json(c: &Col<f64>) -> Value {
    json!(c.iter().copied().collect::<Vec<f64>>())
}

fn fig2_json(fig: &Fig2, seed: u64) -> Value {
    json!({
        "seed": seed,
        "n": FIG2_N,
        "outputscale": FIG2_OUTPUTSCALE,
        "x": (0..fig.data.x.nrows()).map(|i| fig.data.x[(i, 0)]).collect::<Vec<_>>(),
        "y": col_json(&fig.data.y),
        "f": col_json(&fig.data.f),
        "grid": fig.grid,
        "converged": fig.converged,
        "dense_newton_steps": fig.dense_steps,
        "last_pseudo_targets": col_json(&fig.pseudo_targets),
        "steps": fig.steps.iter().map(|s| json!({
            "inner_iterations": s.inner,
            "relative_change": s.relative_change,
            "mean_change_inf": s.mean_change,
            "std_change_max": s.std_change,
            "rel_to_dense_newton": s.dense_rel,
            "mean": col_json(&s.mean),
            "std": col_json(&s.std),
        })).collect::<Vec<_>>(),
    })
}

fn fig3_json(fig: &Fig3, seed: u64) -> Value {
    let shown = |e: &PolicyErrors| -> Value {
        FIG3_SHOWN
            .iter()
            .zip(&e.shown_means)
            .map(|(j, m)| (j.to_string(), col_json(m)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let x = &fig.data.x;
    json!({
        "seed": seed,
        "n": FIG3_N,
        "outputscale": FIG3_OUTPUTSCALE,
        "x": (0..x.nrows()).map(|i| [x[(i, 0)], x[(i, 1)]]).collect::<Vec<_>>(),
        "y": col_json(&fig.data.y),
        "f": col_json(&fig.data.f),
        "mean_grid": {
            "x1": fig.grids.mean_axes[0],
            "x2": fig.grids.mean_axes[1],
            "order": "row-major: x2 varies fastest",
        },
        "covariance_grid_side": fig.cov_side,
        "true_mean": col_json(&fig.true_mean),
        "reference_unit_vector_iterations": fig.reference_iterations,
        "reference_vs_dense_cholesky": {
            "mean": fig.reference_vs_dense.0,
            "covariance": fig.reference_vs_dense.1,
        },
        "unit_vectors": {
            "mean_error": fig.unit.mean,
            "covariance_error": fig.unit.cov,
            "weights_khat_norm_error": fig.unit.energy,
            "means": shown(&fig.unit),
            // Action j is e_{j−1}: the data point of index j − 1.
            "action_index": FIG3_SHOWN.iter().map(|j| (j.to_string(), json!(j - 1))).collect::<serde_json::Map<_, _>>(),
        },
        "cg": {
            "iterations_to_tolerance": fig.cg.iterations,
            "paper_iterations_to_tolerance": PAPER_CG_ITERATIONS,
            "mean_error": fig.cg.mean,
            "covariance_error": fig.cg.cov,
            "weights_khat_norm_error": fig.cg.energy,
            "means": shown(&fig.cg),
            "actions": FIG3_SHOWN.iter().zip(&fig.cg_actions).map(|(j, s)| (j.to_string(), col_json(s))).collect::<serde_json::Map<_, _>>(),
        },
    })
}

impl Experiment for NewtonIllustration {
    fn name(&self) -> &'static str {
        "illustration"
    }

    fn title(&self) -> &'static str {
        "Newton steps as GP regressions (Fig. 2) and unit-vector vs CG actions (Figs. 3, 8)"
    }

    fn paper_reference(&self) -> &'static str {
        "IterNCGP Sec. 3, App. C.1, Figs. 2, 3 and 8 (spec ncgp.md §4.1)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "Fig. 2: 1-D, N = {FIG2_N}, {FIG2_GRID_POINTS} grid points; Figs. 3/8: 2-D, \
             N = {FIG3_N}, mean on a {0} × {0} grid, covariance on a {1} × {1} grid",
            p.mean_side, p.cov_side
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        // Measured: 0.07–0.17 s at --quick on the 2-core machine (dev profile); the smoke
        // size only has coarser test grids.
        match size {
            RunSize::Smoke => 0.1,
            RunSize::Quick | RunSize::Full => 0.2,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        ctx.progress.set_length(2);
        ctx.progress
            .set_message(format!("Fig. 2, 1-D N = {FIG2_N}"));
        let f2 = fig2(ctx.seed)?;
        ctx.progress.inc(1);
        ctx.progress
            .set_message(format!("Figs. 3/8, 2-D N = {FIG3_N}"));
        let f3 = fig3(ctx.seed, p)?;
        ctx.progress.inc(1);

        let (fig2_table, mut checks) = fig2_report(&f2);
        let (fig3_table, fig3_checks) = fig3_report(&f3);
        checks.extend(fig3_checks);
        let mut curves = vec![fig2_curve(&f2, ctx.seed)];
        curves.extend(fig3_curves(&f3, ctx.seed));

        let notes = vec![
            format!(
                "Fig. 2 data: App. C.1 1-D generator, N = {FIG2_N} inputs uniform on [{}, {}] \
                 (the paper says \"sampled between −3 and 5\"; uniform assumed, spec §4.1), \
                 f ~ GP(0, {FIG2_OUTPUTSCALE}·RBF(ℓ = 1)), y ~ Bernoulli(σ(f)), seed {}; the \
                 model prior is the generating one. Each Newton step is solved exactly by \
                 IterNCGP with unit-vector actions, j ≤ N and inner tolerance 0 (all N \
                 actions: a Cholesky solve), no recycling, outer tolerance 1 %. Grid: \
                 {FIG2_GRID_POINTS} points on [{}, {}]; step 0's changes are against the prior \
                 (mean 0, σ = √{FIG2_OUTPUTSCALE}).",
                BINARY_1D_RANGE.0, BINARY_1D_RANGE.1, ctx.seed, FIG2_GRID_RANGE.0, FIG2_GRID_RANGE.1
            ),
            format!(
                "Figs. 3/8 data: binary's 2-D generator with s = {FIG3_OUTPUTSCALE} on seed {} \
                 (the draw of binary's Fig. 4), N = {FIG3_N}. Newton step 0 only, from f₀ = 0 \
                 (W = I/4, ŷ = 4(y − ½)). \"True\" posterior: unit vectors with j ≤ N = {FIG3_N} \
                 ({} actions; against a dense Cholesky solve: mean rel. {:.1e}, covariance rel. \
                 {:.1e}). CG runs to the inner tolerance 1e-5 and took {} iterations (paper: \
                 {PAPER_CG_ITERATIONS} on its own draw){}. Mean error: ‖m_j − m_true‖₂ / \
                 ‖m_true‖₂ on a {ms} × {ms} grid over [−3, 5] × [−4, 1]; covariance error: \
                 ‖Σ_j − Σ_true‖_F / ‖Σ_true‖_F of the latent covariance K⋄⋄ − K⋄QQᵀK⋄ᵀ on a \
                 {cs} × {cs} grid over the same box. The raw JSON holds the true mean and the means at \
                 j = 1, 10, 19 for both policies on the grid, and CG's actions there (the \
                 paper's marker sizes).",
                ctx.seed,
                f3.reference_iterations,
                f3.reference_vs_dense.0,
                f3.reference_vs_dense.1,
                f3.cg.iterations,
                if f3.cg.iterations < FIG3_MAX_J {
                    "; later j repeat its converged belief"
                } else {
                    ""
                },
                ms = p.mean_side,
                cs = p.cov_side,
            ),
            "The paper gives no numbers for Figs. 2, 3 and 8 (pictures only); the checks are \
             the statements of the text: consecutive Newton posteriors are close and the \
             sequence converges (Fig. 2), CG actions approach the true posterior faster than \
             unit vectors (Fig. 3), and more actions mean a better posterior. The last holds \
             for the covariance by construction (Σ_j − Σ_true is PSD and shrinks as C_j grows) \
             and for the mean in the norm the solver minimises: the weights v_j are the \
             K̂-orthogonal projection of the exact ones onto the actions' span, so their \
             K̂-norm error cannot grow (checked). The mean error on the grid has no such \
             guarantee: after j unit vectors the mean is the subset-of-data mean of the first \
             j points, which can move away from the full-data mean as points are added (on \
             seed 0 its error at j = 19 exceeds that at j = 1; an independent dense \
             subset-of-data solve gives the same numbers). An earlier version of this report \
             checked the grid mean error and failed there."
                .into(),
        ];
        let raw = json!({
            "fig2": fig2_json(&f2, ctx.seed),
            "fig3": fig3_json(&f3, ctx.seed),
        });
        Ok(ExperimentOutput {
            tables: vec![
                NamedTable {
                    title: format!(
                        "Fig. 2: exact Newton steps as GP regressions (1-D, N = {FIG2_N}, \
                         s = {FIG2_OUTPUTSCALE}): change of the latent posterior on the grid \
                         per step"
                    ),
                    table: fig2_table,
                },
                NamedTable {
                    title: format!(
                        "Figs. 3 and 8: Newton step 0 after j actions against the exact solve \
                         (2-D, N = {FIG3_N}, s = {FIG3_OUTPUTSCALE}; CG reached the inner \
                         tolerance after {} iterations, paper: {PAPER_CG_ITERATIONS})",
                        f3.cg.iterations
                    ),
                    table: fig3_table,
                },
            ],
            notes,
            raw,
            curves,
            checks,
        })
    }
}
