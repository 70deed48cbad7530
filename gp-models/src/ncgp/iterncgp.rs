//! Algorithm 1 of Tatzel et al.: Newton steps, each one GP regression solved by the
//! probabilistic linear solver, with the solver's actions recycled across steps.

use std::ops::ControlFlow;

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::LinearOperator;
use gp_solvers::pls::{
    virtual_solver_run, PlsOptions, PlsStatus, Policy, ProbabilisticSolver, RecycleBuffers,
    RecycleOptions,
};

use super::likelihood::LaplaceLikelihood;
use super::posterior::IterNcgpPosterior;
use super::shared_outputs::SharedOutputs;
use super::step::{take_step, StepControl};
use crate::error::{ModelError, Result};

/// Settings of [`iterncgp`]; the defaults are the paper's (App. B.2): outer tolerance 1 %,
/// inner tolerances `1e-5`, recycling without compression, undamped steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterNcgpOptions {
    /// Most new actions per Newton step ("j ≤ k" in the paper); `None`: until the inner
    /// tolerance (or the solver's default budget of `10 N·C`).
    pub max_inner: Option<usize>,
    /// The inner solver's tolerances, breakdown test and `K Q` tracking
    /// (`max_iterations` is replaced by `max_inner` and the remaining budget).
    pub solver: PlsOptions,
    /// Recycle the actions across Newton steps (Algorithm 3), compressing to
    /// `RecycleOptions::rank` columns; `None` restarts every step from the prior
    /// ("IterNCGP-Chol" in Fig. 1). Default: recycling, no compression.
    pub recycling: Option<RecycleOptions>,
    /// Stop when `‖g_{i+1} − g_i‖ / ‖g_{i+1}‖ ≤ outer_tolerance`, `g = f − m` (default
    /// `0.01`; the Poisson experiment uses `0.001`).
    pub outer_tolerance: f64,
    /// Most Newton steps (default 100).
    pub max_outer: usize,
    /// Most new actions over the whole run (the Poisson experiment's budget of 100); `None`
    /// (default): no cap.
    pub action_budget: Option<usize>,
    /// Undamped (default, the paper) or backtracking steps.
    pub step_control: StepControl,
}

impl Default for IterNcgpOptions {
    fn default() -> Self {
        Self {
            max_inner: None,
            solver: PlsOptions::default(),
            recycling: Some(RecycleOptions::default()),
            outer_tolerance: 0.01,
            max_outer: 100,
            action_budget: None,
            step_control: StepControl::Undamped,
        }
    }
}

/// What an observer sees after every inner iteration (and once at `inner = 0`, right after
/// the recycled belief is built): the belief of Newton step `outer` after `inner` new
/// actions, from which anytime predictions and metrics are computed
/// ([`IterNcgpPosterior::predict`]).
#[derive(Debug, Clone, Copy)]
pub struct InnerProgress<'a> {
    /// The Newton step `i` (0-based).
    pub outer: usize,
    /// New actions in this step, `j`.
    pub inner: usize,
    /// New actions over the run so far.
    pub total_actions: usize,
    /// Products with `K` so far (actions, residuals, Newton updates).
    pub k_products: usize,
    /// `‖r‖` of the inner solve.
    pub residual_norm: f64,
    /// The representer weights `v_j`: latent mean `m(·) + K(·, X) v_j`.
    pub weights: ColRef<'a, f64>,
    /// The root `Q` of `C_j = QQᵀ`: latent covariance `K(·,·) − K(·,X) Q Qᵀ K(X,·)`.
    pub root: MatRef<'a, f64>,
    /// Columns of the recycling buffers.
    pub buffer_width: usize,
}

/// One Newton step of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonStepRecord {
    /// New actions taken in this step.
    pub inner_iterations: usize,
    /// How the inner solve ended.
    pub solver_status: PlsStatus,
    /// Columns of the recycled belief the step started from.
    pub recycled_columns: usize,
    /// Recycled eigenpairs dropped (compression or the floor).
    pub dropped: usize,
    /// `‖g_{i+1} − g_i‖ / ‖g_{i+1}‖`.
    pub relative_change: f64,
    /// The accepted step length (1 when undamped).
    pub step_length: f64,
    /// `log p(y | f_{i+1})`.
    pub log_likelihood: f64,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IterNcgpStop {
    /// The relative change of `g` met the outer tolerance.
    Converged,
    /// `max_outer` Newton steps were taken.
    MaxOuter,
    /// The action budget is spent.
    BudgetSpent,
    /// The observer asked to stop.
    Observer,
}

/// The result of [`iterncgp`].
#[derive(Debug, Clone)]
pub struct IterNcgpRun {
    /// The last inner loop's posterior `GP(m_{i,j}, K_{i,j})` (the paper's choice, spec §7.6):
    /// its mean at the training inputs is `f`, its covariance uses `W(f_i)` of the step's
    /// start.
    pub posterior: IterNcgpPosterior,
    /// The last iterate `f = m + K v` (`N·C`, CN order).
    pub f: Col<f64>,
    /// One record per Newton step.
    pub steps: Vec<NewtonStepRecord>,
    /// Why the run ended.
    pub stop: IterNcgpStop,
    /// New actions over the run.
    pub total_actions: usize,
    /// Products with `K` over the run.
    pub k_products: usize,
    /// The recycling buffers at the end (empty without recycling).
    pub buffers: RecycleBuffers,
}

fn check_options(options: &IterNcgpOptions) -> Result<()> {
    if !(options.outer_tolerance >= 0.0 && options.outer_tolerance.is_finite()) {
        return Err(ModelError::InvalidOption {
            name: "IterNcgpOptions::outer_tolerance",
            reason: format!("must be finite and ≥ 0, got {}", options.outer_tolerance),
        });
    }
    if options.max_outer == 0 {
        return Err(ModelError::InvalidOption {
            name: "IterNcgpOptions::max_outer",
            reason: "need at least one Newton step".to_string(),
        });
    }
    Ok(())
}

/// IterNCGP (Algorithm 1): approximate Newton for the Laplace approximation of a GP with a
/// non-Gaussian likelihood, each step `K̂(f_i) v = ŷ(f_i) − m` solved by the probabilistic
/// linear solver with `policy`'s actions, the belief recycled across steps.
///
/// `k` is the prior covariance of the `C` latent functions (one kernel shared by the
/// classes, [`SharedOutputs`]), `prior_mean` the prior mean at the training inputs (`N·C`, CN
/// order; the run starts at `f_0 = m`), `y` the `N` targets. `observer` sees every inner
/// iteration and may stop the run.
///
/// Errors: invalid targets or options, shapes that do not match, a solver error, and
/// [`ModelError::NewtonDiverged`] when an iterate leaves the likelihood's finite range
/// (the undamped overshoot; see [`StepControl`]).
pub fn iterncgp<L: LaplaceLikelihood>(
    k: &SharedOutputs<'_>,
    prior_mean: ColRef<'_, f64>,
    y: ColRef<'_, f64>,
    likelihood: &L,
    policy: &mut dyn Policy,
    options: &IterNcgpOptions,
    observer: &mut dyn FnMut(&InnerProgress<'_>) -> ControlFlow<()>,
) -> Result<IterNcgpRun> {
    check_options(options)?;
    let c = likelihood.latent_outputs();
    if k.outputs() != c {
        return Err(ModelError::InvalidOption {
            name: "iterncgp (k)",
            reason: format!(
                "the prior has {} latent functions per point, the {} likelihood {c}",
                k.outputs(),
                likelihood.name()
            ),
        });
    }
    let n = k.points();
    if y.nrows() != n || prior_mean.nrows() != n * c {
        return Err(ModelError::LengthMismatch {
            context: "iterncgp: targets (N) and prior mean (N·C) against the prior's N points",
            expected: n,
            found: if y.nrows() != n {
                y.nrows()
            } else {
                prior_mean.nrows() / c.max(1)
            },
        });
    }
    likelihood.check_targets(y)?;
    let nc = n * c;
    let mut f = prior_mean.to_owned();
    let mut v = Col::<f64>::zeros(nc);
    let mut kv = Col::<f64>::zeros(nc);
    let mut buffers = RecycleBuffers::empty(nc);
    let mut steps = Vec::new();
    let (mut total_actions, mut k_products) = (0usize, 0usize);
    let mut posterior = IterNcgpPosterior::new(Col::zeros(nc), Mat::zeros(nc, 0), c)?;
    let mut stop = IterNcgpStop::MaxOuter;
    let diverged = |step: usize, e: ModelError| match e {
        ModelError::NewtonDiverged { reason, .. } => ModelError::NewtonDiverged { step, reason },
        other => other,
    };
    'outer: for i in 0..options.max_outer {
        let winv = likelihood
            .inverse_curvature(f.as_ref())
            .map_err(|e| diverged(i, e))?;
        let yhat = likelihood
            .pseudo_targets(f.as_ref(), y)
            .map_err(|e| diverged(i, e))?;
        let b = &yhat - prior_mean;
        let (recycled, recycled_columns, dropped) = match options.recycling {
            Some(rec) if !buffers.is_empty() => {
                let old = std::mem::replace(&mut buffers, RecycleBuffers::empty(nc));
                let r = virtual_solver_run(old, &winv, &rec)?;
                let (cols, dropped) = (r.root.ncols(), r.dropped);
                (Some(r), cols, dropped)
            }
            _ => (None, 0, 0),
        };
        policy.start_solve(recycled.is_some());
        let remaining = options
            .action_budget
            .map(|b| b.saturating_sub(total_actions));
        let inner_cap = match (options.max_inner, remaining) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let solver_options = PlsOptions {
            max_iterations: inner_cap.or(options.solver.max_iterations),
            ..options.solver
        };
        let mut solver = ProbabilisticSolver::new(k, &winv, b.as_ref(), recycled, solver_options)?;
        let mut stopped_by_observer = false;
        let mut report = |solver: &ProbabilisticSolver<'_>, total: usize, products: usize| {
            observer(&InnerProgress {
                outer: i,
                inner: solver.iteration(),
                total_actions: total,
                k_products: products,
                residual_norm: solver.residual_norm(),
                weights: solver.solution(),
                root: solver.root(),
                buffer_width: solver.buffers().len(),
            })
        };
        if report(&solver, total_actions, k_products + solver.k_products()).is_break() {
            stopped_by_observer = true;
        }
        while !stopped_by_observer && solver.status() == PlsStatus::Running {
            let before = solver.iteration();
            solver.step(policy)?;
            if solver.iteration() > before {
                let products = k_products + solver.k_products();
                if report(&solver, total_actions + solver.iteration(), products).is_break() {
                    stopped_by_observer = true;
                }
            }
        }
        let inner_iterations = solver.iteration();
        total_actions += inner_iterations;
        let status = solver.status();
        // f_{i+1} − m = K v: from the tracked K Q when there is one, else one product.
        let kv_new = match solver.k_solution() {
            Some(kv) => kv,
            None => {
                let mut out = Col::zeros(nc);
                k.matvec(solver.solution(), out.as_mut());
                k_products += 1;
                out
            }
        };
        k_products += solver.k_products();
        let (v_new, root, new_buffers) = solver.into_parts();
        let accepted = take_step(
            options.step_control,
            i,
            likelihood,
            prior_mean,
            y,
            (v.as_ref(), kv.as_ref()),
            (v_new, kv_new),
        )?;
        let relative_change = accepted.relative_change(kv.as_ref());
        v = accepted.v;
        kv = accepted.kv;
        f = prior_mean.to_owned() + &kv;
        let log_likelihood = likelihood.log_likelihood(f.as_ref(), y);
        if options.recycling.is_some() {
            buffers = new_buffers;
        }
        posterior = IterNcgpPosterior::new(v.clone(), root, c)?;
        steps.push(NewtonStepRecord {
            inner_iterations,
            solver_status: status,
            recycled_columns,
            dropped,
            relative_change,
            step_length: accepted.step_length,
            log_likelihood,
        });
        if stopped_by_observer {
            stop = IterNcgpStop::Observer;
            break 'outer;
        }
        if relative_change <= options.outer_tolerance {
            stop = IterNcgpStop::Converged;
            break 'outer;
        }
        if options.action_budget.is_some_and(|b| total_actions >= b) {
            stop = IterNcgpStop::BudgetSpent;
            break 'outer;
        }
    }
    Ok(IterNcgpRun {
        posterior,
        f,
        steps,
        stop,
        total_actions,
        k_products,
        buffers,
    })
}
