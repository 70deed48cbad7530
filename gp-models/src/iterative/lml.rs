//! One stochastic evaluation of the log marginal likelihood and its gradient (GPyTorch's
//! recipe): pivoted-Cholesky preconditioner, one batched CG solve on `[y | z₁..z_t]` with
//! the matrix-free kernel operator, SLQ for `log det K̂` from the CG tridiagonals, and the
//! gradient from one matrix-free pass of derivative contractions.

use std::time::Instant;

use faer::{ColRef, Mat, MatRef};
use gp_kernels::{Kernel, KernelOperator};
use gp_linalg::LowRankPlusDiagonal;
use gp_solvers::{
    slq_log_det, solve_with_probes, CgOptions, PivotedCholesky, PivotedCholeskyOptions,
    Preconditioner, ProbeOptions, ProbeSolve, Probes, SlqScaling,
};

use crate::cg_report::{check_breakdown, mean_and_std_error, solve_report};
use crate::core::{LmlEstimate, PhaseTimes};
use crate::error::Result;
use crate::iterative::columns::KernelColumns;
use crate::iterative::derivatives::derivative_quad_forms;
use crate::iterative::options::IterativeOptions;

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// The data of one evaluation: kernel, points (column major for the operator, row major for
/// the derivative pass), centred targets and noise.
pub(crate) struct Problem<'a, K: ?Sized> {
    pub kernel: &'a K,
    pub x: MatRef<'a, f64>,
    pub xs: &'a [f64],
    pub yc: ColRef<'a, f64>,
    pub noise_variance: f64,
}

/// The rank-`rank` pivoted-Cholesky preconditioner `L Lᵀ + σ²I` of `K̂`, or `None` for
/// `rank = 0`.
pub(crate) fn build_preconditioner<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    noise_variance: f64,
    rank: usize,
) -> Result<Option<LowRankPlusDiagonal>> {
    if rank == 0 {
        return Ok(None);
    }
    let columns = KernelColumns::new(kernel, x)?;
    let options = PivotedCholeskyOptions {
        max_rank: rank,
        relative_tolerance: 0.0,
    };
    let pc = PivotedCholesky::new(&columns, &options)?;
    Ok(Some(pc.preconditioner(noise_variance)?))
}

/// The estimate of the log marginal likelihood and its gradient with the probes of `seed`.
pub(crate) fn estimate<K: Kernel + ?Sized>(
    problem: &Problem<'_, K>,
    options: &IterativeOptions,
    seed: u64,
) -> Result<LmlEstimate> {
    options.validate()?;
    let start = Instant::now();
    let mut times = PhaseTimes::default();
    let n = problem.yc.nrows();
    let d = problem.x.ncols();
    let sigma2 = problem.noise_variance;

    let phase = Instant::now();
    let precond = build_preconditioner(
        problem.kernel,
        problem.x,
        sigma2,
        options.preconditioner_rank,
    )?;
    let precond_dyn = precond.as_ref().map(|p| p as &dyn Preconditioner);
    times.preconditioner = phase.elapsed();

    let phase = Instant::now();
    let probe_options = ProbeOptions {
        count: options.estimator.probes,
        seed,
        ..ProbeOptions::default()
    };
    let probes = Probes::generate(n, precond_dyn, &probe_options)?;
    times.probes = phase.elapsed();

    let phase = Instant::now();
    let op = KernelOperator::new(problem.kernel, problem.x, sigma2)?;
    let cg_options = CgOptions {
        tolerance: options.krylov.tolerance,
        max_iterations: options.krylov.max_iterations,
        min_iterations: options
            .krylov
            .min_iterations
            .min(n)
            .min(options.krylov.max_iterations),
        ..CgOptions::default()
    };
    let solve = solve_with_probes(&op, problem.yc.as_mat(), precond_dyn, probes, &cg_options)?;
    check_breakdown(&solve.cg, "the log-likelihood solve on [y | probes]")?;
    times.solve = phase.elapsed();

    let phase = Instant::now();
    let log_det = slq(&solve, n, options)?;
    times.log_det = phase.elapsed();

    let phase = Instant::now();
    let t = solve.probes.count();
    // L = [α | K̂⁻¹Z], R = [α | P⁻¹Z].
    let left = solve.cg.solution.as_ref();
    let mut right = Mat::<f64>::zeros(n, 1 + t);
    right
        .as_mut()
        .subcols_mut(0, 1)
        .copy_from(solve.target_solutions());
    right
        .as_mut()
        .subcols_mut(1, t)
        .copy_from(solve.probes.preconditioned());
    let q = derivative_quad_forms(problem.kernel, problem.xs, d, left, right.as_ref());
    times.derivatives = phase.elapsed();

    let p = problem.kernel.n_params();
    let mut grad = Vec::with_capacity(p + 1);
    let mut grad_std_error = Vec::with_capacity(p + 1);
    for k in 0..p {
        let terms: Vec<f64> = (0..t).map(|i| q[(k, 1 + i)]).collect();
        let (trace, se) = mean_and_std_error(&terms);
        grad.push(0.5 * q[(k, 0)] - 0.5 * trace);
        grad_std_error.push(0.5 * se);
    }
    // ∂K̂/∂ log σ² = σ² I: ½ σ² (αᵀα − tr K̂⁻¹), tr K̂⁻¹ ≈ mean of (K̂⁻¹zᵢ)ᵀ(P⁻¹zᵢ).
    let alpha = left.col(0);
    let alpha_sq = alpha.squared_norm_l2();
    let terms: Vec<f64> = (0..t)
        .map(|i| left.col(1 + i).transpose() * right.col(1 + i))
        .collect();
    let (trace, se) = mean_and_std_error(&terms);
    grad.push(0.5 * sigma2 * (alpha_sq - trace));
    grad_std_error.push(0.5 * sigma2 * se);

    let data_fit = solve.target_quadratic_forms()[0];
    let lml = -0.5 * data_fit - 0.5 * log_det.value - n as f64 * HALF_LN_2PI;
    times.total = start.elapsed();
    Ok(LmlEstimate {
        lml,
        lml_std_error: 0.5 * log_det.std_error,
        grad,
        grad_std_error,
        data_fit,
        log_det,
        solve: solve_report(&solve.cg),
        preconditioner_rank: precond.as_ref().map_or(0, |p| p.rank()),
        times,
    })
}

/// SLQ from the probe columns, with each tridiagonal cut to the Lanczos cap.
fn slq(solve: &ProbeSolve, n: usize, options: &IterativeOptions) -> Result<gp_solvers::Estimate> {
    let cap = options.max_lanczos_iterations.unwrap_or(usize::MAX);
    let columns = solve.probe_columns();
    let tridiagonals = columns
        .iter()
        .map(|c| Ok(c.tridiagonal()?.leading(cap)))
        .collect::<Result<Vec<_>>>()?;
    let weights: Vec<f64> = columns
        .iter()
        .map(|c| match options.estimator.slq_scaling {
            SlqScaling::Dimension if c.rhs_norm == 0.0 => 0.0,
            SlqScaling::Dimension => n as f64,
            SlqScaling::ProbeNorm => c.rhs_precond_norm_sq,
        })
        .collect();
    Ok(slq_log_det(
        &tridiagonals,
        &weights,
        solve.preconditioner_log_det,
    )?)
}
