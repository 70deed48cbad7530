//! The stochastic log marginal likelihood of a [`Ski`] model and its gradient.
//!
//! One batched CG solve with `K̂ = W K_G Wᵀ + σ²I` on `[y | z₁..z_t]` (probes `z`
//! Rademacher by default) gives `α = K̂⁻¹y`, `uᵢ = K̂⁻¹zᵢ` and the Lanczos tridiagonals `Tᵢ`:
//!
//! ```text
//! log p(y) ≈ −½ yᵀα − ½ (1/t) Σᵢ ‖zᵢ‖² e₁ᵀ log(Tᵢ) e₁ − (n/2) log 2π
//! ∂/∂θ     ≈ ½ αᵀ(∂K̂/∂θ)α − ½ (1/t) Σᵢ uᵢᵀ (∂K̂/∂θ) zᵢ
//! ```
//!
//! with `∂K̂/∂θ = W (∂K_G/∂θ) Wᵀ` for the kernel's hyperparameters, so both contractions
//! are grid-space products: with `A = Wᵀ[α | U]` and `B = Wᵀ[α | Z]` (`m × (t+1)`, one
//! interpolation pass each) every hyperparameter costs one Kronecker product
//! `(∂K_G/∂θ) B` and `t + 1` dot products of length `m`. `∂K_G/∂ log ℓ_l` is a Kronecker
//! product with the Toeplitz derivative of factor `l`, `∂K_G/∂ log σ_f² = K_G`, and
//! `∂K̂/∂ log σ² = σ² I`.

use std::time::Instant;

use faer::Mat;
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_solvers::{
    slq_log_det_from_cg, solve_with_probes, CgOptions, Preconditioner, ProbeOptions, Probes,
};

use crate::cg_report::{check_breakdown, mean_and_std_error, solve_report};
use crate::core::{LmlEstimate, PhaseTimes};
use crate::error::{ModelError, Result};
use crate::ski::model::Ski;

/// Where the probes of an estimate come from.
pub(crate) enum ProbeInput {
    /// Drawn from this seed for the model's preconditioner.
    Seed(u64),
    /// Chosen by the caller (refused when the model is preconditioned).
    Given(Probes),
}

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

impl<K: Kernel> Ski<K> {
    /// The estimate of the log marginal likelihood and its gradient with the probes of
    /// [`SkiOptions::estimator.seed`](crate::EstimatorSettings::seed) (the same model and seed give the same
    /// estimate).
    ///
    /// Errors as [`lml_and_grad_estimate_with_probes`](Self::lml_and_grad_estimate_with_probes).
    pub fn lml_and_grad_estimate(&self) -> Result<LmlEstimate> {
        self.lml_and_grad_estimate_with_seed(self.options.estimator.seed)
    }

    /// As [`lml_and_grad_estimate`](Self::lml_and_grad_estimate) with `t` probes drawn from
    /// `seed` (`t` = [`SkiOptions::estimator.probes`](crate::EstimatorSettings::probes)):
    /// Rademacher without a preconditioner, `N(0, P)` with one.
    ///
    /// Errors as [`lml_and_grad_estimate_with_probes`](Self::lml_and_grad_estimate_with_probes),
    /// and those of [`preconditioner`](Self::preconditioner).
    pub fn lml_and_grad_estimate_with_seed(&self, seed: u64) -> Result<LmlEstimate> {
        self.estimate(ProbeInput::Seed(seed), true)
    }

    /// The estimate with caller-chosen probes (`n × t`, `E[zzᵀ] = I` for unbiased
    /// estimates; for example `√n e_i` for all `i`, which makes the traces and the SLQ
    /// log determinant exact up to the CG tolerance). See the
    /// [module documentation](crate::ski::lml) for the formulas. The gradient is in the
    /// order of [`param_names`](Self::param_names).
    ///
    /// Errors: [`ModelError::InvalidOption`] when the model is preconditioned
    /// ([`SkiOptions::preconditioner_rank`](crate::SkiOptions::preconditioner_rank) `> 0`:
    /// its estimates need probes with `E[zzᵀ] = P`, drawn by the model itself),
    /// [`ModelError::LengthMismatch`] for probes with the wrong number of rows,
    /// [`ModelError::CgBreakdown`], [`ModelError::Solver`] for a non-positive Ritz value,
    /// [`ModelError::UnsupportedKernel`] if the kernel's hyperparameters are not
    /// `[log ℓ_0, …, log ℓ_{d−1}, log σ_f²]`.
    pub fn lml_and_grad_estimate_with_probes(&self, probes: Probes) -> Result<LmlEstimate> {
        self.estimate(ProbeInput::Given(probes), true)
    }

    /// The estimate of the log marginal likelihood only (the gradient fields are empty),
    /// with the probes of the seed.
    ///
    /// Errors as [`lml_and_grad_estimate_with_seed`](Self::lml_and_grad_estimate_with_seed),
    /// except for the hyperparameter layout.
    pub fn lml_estimate(&self) -> Result<LmlEstimate> {
        self.estimate(ProbeInput::Seed(self.options.estimator.seed), false)
    }

    /// [`SkiOptions::estimator.probes`](crate::EstimatorSettings::probes) probes drawn from
    /// `seed` for the preconditioner `precond` (Rademacher without one, `N(0, P)` with one).
    fn draw_probes(&self, seed: u64, precond: Option<&dyn Preconditioner>) -> Result<Probes> {
        let opts = ProbeOptions {
            count: self.options.estimator.probes,
            seed,
            ..ProbeOptions::default()
        };
        Ok(Probes::generate(self.n_train(), precond, &opts)?)
    }

    pub(crate) fn estimate(&self, input: ProbeInput, with_grad: bool) -> Result<LmlEstimate> {
        let start = Instant::now();
        let mut times = PhaseTimes::default();
        let n = self.n_train();

        let phase = Instant::now();
        let precond = self.preconditioner()?;
        let precond_dyn = precond.map(|p| p as &dyn Preconditioner);
        times.preconditioner = phase.elapsed();

        let phase = Instant::now();
        let probes = match input {
            ProbeInput::Seed(seed) => self.draw_probes(seed, precond_dyn)?,
            ProbeInput::Given(_) if precond.is_some() => {
                return Err(ModelError::InvalidOption {
                    name: "SkiOptions::preconditioner_rank",
                    reason: "a preconditioned SKI estimate draws its own probes from N(0, P) of \
                             its pivoted-Cholesky preconditioner P, so caller-chosen probes \
                             cannot be used; set the rank to 0 to pass probes, or give a seed"
                        .into(),
                });
            }
            ProbeInput::Given(probes) => probes,
        };
        times.probes = phase.elapsed();
        if probes.dim() != n {
            return Err(ModelError::LengthMismatch {
                context: "SKI probes (one row per training point)",
                expected: n,
                found: probes.dim(),
            });
        }
        let derivatives = if with_grad {
            self.grid_kernel.derivatives()?
        } else {
            Vec::new()
        };
        let sigma2 = self.noise_variance;

        let phase = Instant::now();
        let op = self.operator();
        let cg_options = CgOptions {
            tolerance: self.options.krylov.tolerance,
            max_iterations: self.options.krylov.max_iterations,
            min_iterations: self
                .options
                .krylov
                .min_iterations
                .min(n)
                .min(self.options.krylov.max_iterations),
            ..CgOptions::default()
        };
        let solve = solve_with_probes(&op, self.y.as_mat(), precond_dyn, probes, &cg_options)?;
        check_breakdown(&solve.cg, "the SKI log-likelihood solve on [y | probes]")?;
        times.solve = phase.elapsed();

        let phase = Instant::now();
        let log_det = slq_log_det_from_cg(
            solve.probe_columns(),
            n,
            solve.preconditioner_log_det,
            self.options.estimator.slq_scaling,
        )?;
        times.log_det = phase.elapsed();

        let phase = Instant::now();
        let t = solve.probes.count();
        let left = solve.cg.solution.as_ref();
        let mut grad = Vec::new();
        let mut grad_std_error = Vec::new();
        if with_grad {
            let mut right = Mat::<f64>::zeros(n, 1 + t);
            right
                .as_mut()
                .subcols_mut(0, 1)
                .copy_from(solve.target_solutions());
            right
                .as_mut()
                .subcols_mut(1, t)
                .copy_from(solve.probes.preconditioned());
            // A = Wᵀ[α | U], B = Wᵀ[α | Z]: the contractions uᵀ W D Wᵀ z = (Wᵀu)ᵀ D (Wᵀz).
            let a = self.w.transposed().apply_block(left)?;
            let b = self.w.transposed().apply_block(right.as_ref())?;
            for dk in &derivatives {
                let db = dk.apply_block(b.as_ref())?;
                let q: Vec<f64> = (0..1 + t)
                    .map(|c| a.col(c).transpose() * db.col(c))
                    .collect();
                let (trace, se) = mean_and_std_error(&q[1..]);
                grad.push(0.5 * q[0] - 0.5 * trace);
                grad_std_error.push(0.5 * se);
            }
            // ∂K̂/∂ log σ² = σ² I: ½ σ² (αᵀα − tr K̂⁻¹).
            let alpha_sq = left.col(0).squared_norm_l2();
            let terms: Vec<f64> = (0..t)
                .map(|i| left.col(1 + i).transpose() * right.col(1 + i))
                .collect();
            let (trace, se) = mean_and_std_error(&terms);
            grad.push(0.5 * sigma2 * (alpha_sq - trace));
            grad_std_error.push(0.5 * sigma2 * se);
        }
        times.derivatives = phase.elapsed();

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
            preconditioner_rank: precond.map_or(0, |p| p.rank()),
            times,
        })
    }
}
