//! The stochastic log marginal likelihood of a [`Gsgp`] model and its gradient, from the
//! sufficient statistics only.
//!
//! ```text
//! log p(y) = −½ yᵀK̂⁻¹y − ½ log det K̂ − (n/2) log 2π
//! yᵀK̂⁻¹y   = tᵀx̂ + c q                         (α = K̂⁻¹y = W x̂ + c y, the mean solve)
//! log det K̂ = n log σ² + log det(I_r + Lᵀ S L/σ²)   (Sylvester, L Lᵀ = K_G; SLQ in ℝ^r)
//! ```
//!
//! The data-fit term reuses the mean solve (EFCG from `z₀ = y`, to the prediction
//! tolerance); the log determinant is the `m`-space identity of [`log_det`](super::log_det)
//! with `r`-dimensional Rademacher probes (CG on the symmetrized operator to
//! `cg_tolerance`). The gradient uses `∂K̂/∂θ = W (∂K_G/∂θ) Wᵀ` and the push-through
//! identity `Wᵀ K̂⁻¹ W = S Â⁻¹` (`Â = K_G S + σ²I`):
//!
//! ```text
//! ∂/∂θ   = ½ (Wᵀα)ᵀ (∂K_G/∂θ) (Wᵀα) − ½ tr(Wᵀ K̂⁻¹ W ∂K_G/∂θ)
//! tr(Wᵀ K̂⁻¹ W D) ≈ (1/t) Σ_j u_jᵀ D ξ_j,   u_j = Wᵀ K̂⁻¹ W ξ_j   (ξ_j ∈ ℝᵐ Rademacher)
//! ∂/∂ log σ² = ½ σ² (‖α‖² − tr K̂⁻¹),   σ² tr K̂⁻¹ = n − tr(Wᵀ K̂⁻¹ W K_G)
//! ```
//!
//! where each `u_j` is one simplified-EFCG solve (right-hand side `W ξ_j` in `range(W)`,
//! paper Alg. 4). Everything is an `m`-space computation: no cost depends on `n`.

use std::sync::Arc;
use std::time::Instant;

use faer::Mat;
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::{cg, slq_log_det_from_cg, CgOptions, ProbeOptions, Probes};
use rayon::prelude::*;

use crate::cg_report::{check_breakdown, mean_and_std_error, solve_report};
use crate::core::{LmlEstimate, PhaseTimes, SolveReport};
use crate::error::{ModelError, Result};
use crate::gsgp::log_det::{LogDetFactor, LogDetFactorKind, LogDetSettings, SymmetrizedOperator};
use crate::gsgp::model::Gsgp;
use crate::gsgp::solve::factorized_report;

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Offset between the seeds of the log-determinant and the trace probes.
const TRACE_SEED_OFFSET: u64 = 0x9E37_79B9_7F4A_7C15;

impl<K: Kernel> Gsgp<K> {
    /// The factor `L` of the log determinant, built on first use.
    pub(crate) fn log_det_factor(&self) -> Result<&LogDetFactor> {
        let cached = self.log_det_factor.get_or_init(|| {
            let settings = LogDetSettings {
                dense_factor_max: self.options.log_det_dense_factor_max,
                probes: self.options.estimator.probes,
                memory_limit: self.options.grid.memory_limit,
            };
            // The unit-scale 1-D kernels at lags beyond the grid, for circulant embeddings
            // longer than `2 m_l` (the grid kernel's columns stop at lag `m_l − 1`).
            let separable = self.kernel.separable_factors();
            let axes = self.grid().axes();
            let lag = |l: usize, j: usize| -> f64 {
                match (
                    separable.as_ref().and_then(|s| s.factors.get(l)),
                    axes.get(l),
                ) {
                    (Some(k), Some(a)) => k.eval(&[a.point(0)], &[a.point(j)]),
                    _ => f64::NAN,
                }
            };
            let lag_ref: Option<&dyn Fn(usize, usize) -> f64> = separable
                .is_some()
                .then_some(&lag as &dyn Fn(usize, usize) -> f64);
            LogDetFactor::new(&self.grid_kernel, self.stats.gram(), &settings, lag_ref)
                .map(Arc::new)
        });
        match cached {
            Ok(f) => Ok(f.as_ref()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The dimension `r = Π_l r_l` of the probes of the log determinant (the order of the
    /// symmetrized operator `I_r + Lᵀ S L/σ²`, see [`gsgp::log_det`](crate::gsgp::log_det)):
    /// `r_l ≤ m_l` for a dense eigen factor, the embedding length `M_l ≥ 2m_l − 1` for a
    /// circulant one ([`log_det_factor_kinds`](Self::log_det_factor_kinds)). Building the
    /// factor on first use costs the dense eigendecompositions of the small Toeplitz factors
    /// and a few real FFTs for the large ones.
    ///
    /// Errors: [`ModelError::LogDetFactorTooLarge`],
    /// [`ModelError::LogDetEmbeddingIndefinite`], [`ModelError::Linalg`] if an
    /// eigendecomposition does not converge.
    pub fn log_det_dim(&self) -> Result<usize> {
        Ok(self.log_det_factor()?.rank())
    }

    /// How the square root of each Toeplitz factor is represented in the log determinant
    /// (one entry per dimension; see [`gsgp::log_det`](crate::gsgp::log_det) and
    /// [`GsgpOptions::log_det_dense_factor_max`](crate::GsgpOptions::log_det_dense_factor_max)).
    ///
    /// Errors as [`log_det_dim`](Self::log_det_dim).
    pub fn log_det_factor_kinds(&self) -> Result<Vec<LogDetFactorKind>> {
        Ok(self.log_det_factor()?.kinds().to_vec())
    }

    /// The estimate of the log marginal likelihood (gradient fields empty) with the probes of
    /// [`GsgpOptions::estimator.seed`](crate::EstimatorSettings::seed) (the same model and seed give the same
    /// estimate). See the [module documentation](self) for the formulas.
    ///
    /// Errors: [`ModelError::CgBreakdown`], [`ModelError::Solver`] (a non-positive Ritz
    /// value), those of [`log_det_dim`](Self::log_det_dim).
    pub fn lml_estimate(&self) -> Result<LmlEstimate> {
        let probes = self.draw(self.log_det_dim()?, self.options.estimator.seed)?;
        self.estimate(probes, None)
    }

    /// The estimate of the log marginal likelihood with caller-chosen probes of dimension
    /// [`log_det_dim`](Self::log_det_dim) (`E[zzᵀ] = I`; for example `√r e_i` for all `i`,
    /// which makes the log determinant exact up to the CG tolerance).
    ///
    /// Errors: [`ModelError::LengthMismatch`] for probes of the wrong dimension, and those of
    /// [`lml_estimate`](Self::lml_estimate).
    pub fn lml_estimate_with_probes(&self, probes: Probes) -> Result<LmlEstimate> {
        self.estimate(probes, None)
    }

    /// The estimate of the log marginal likelihood and its gradient (in the order of
    /// [`param_names`](Self::param_names)) with the probes of the options' seed.
    ///
    /// Errors as [`lml_and_grad_estimate_with_probes`](Self::lml_and_grad_estimate_with_probes).
    pub fn lml_and_grad_estimate(&self) -> Result<LmlEstimate> {
        self.lml_and_grad_estimate_with_seed(self.options.estimator.seed)
    }

    /// As [`lml_and_grad_estimate`](Self::lml_and_grad_estimate) with `t` Rademacher probes
    /// of each kind drawn from `seed` (`t` = [`GsgpOptions::estimator.probes`](crate::EstimatorSettings::probes)).
    ///
    /// Errors as [`lml_and_grad_estimate_with_probes`](Self::lml_and_grad_estimate_with_probes).
    pub fn lml_and_grad_estimate_with_seed(&self, seed: u64) -> Result<LmlEstimate> {
        let log_det = self.draw(self.log_det_dim()?, seed)?;
        let trace = self.draw(
            self.grid().num_points(),
            seed.wrapping_add(TRACE_SEED_OFFSET),
        )?;
        self.estimate(log_det, Some(trace))
    }

    /// The estimate and its gradient with caller-chosen probes: `log_det_probes` of dimension
    /// [`log_det_dim`](Self::log_det_dim) for the log determinant, `trace_probes` of dimension
    /// `m` (grid points) for the Hutchinson traces of the gradient (`E[ξξᵀ] = I`; `√m e_i`
    /// for all `i` makes them exact up to the CG tolerance).
    ///
    /// Errors: [`ModelError::LengthMismatch`] for probes of the wrong dimension,
    /// [`ModelError::CgBreakdown`], [`ModelError::Solver`], [`ModelError::UnsupportedKernel`]
    /// if the kernel's hyperparameters are not `[log ℓ_0, …, log ℓ_{d−1}, log σ_f²]`, and
    /// those of [`log_det_dim`](Self::log_det_dim).
    pub fn lml_and_grad_estimate_with_probes(
        &self,
        log_det_probes: Probes,
        trace_probes: Probes,
    ) -> Result<LmlEstimate> {
        self.estimate(log_det_probes, Some(trace_probes))
    }

    pub(crate) fn draw(&self, dim: usize, seed: u64) -> Result<Probes> {
        let opts = ProbeOptions {
            count: self.options.estimator.probes,
            seed,
            ..ProbeOptions::default()
        };
        Ok(Probes::generate(dim, None, &opts)?)
    }

    pub(crate) fn estimate(
        &self,
        probes: Probes,
        trace_probes: Option<Probes>,
    ) -> Result<LmlEstimate> {
        let start = Instant::now();
        let mut times = PhaseTimes::default();
        let n = self.n_train();
        let m = self.grid().num_points();
        let sigma2 = self.noise_variance;
        let factor = self.log_det_factor()?;
        let r = factor.rank();
        if probes.dim() != r {
            return Err(ModelError::LengthMismatch {
                context: "GSGP log-determinant probes (dimension log_det_dim())",
                expected: r,
                found: probes.dim(),
            });
        }
        if let Some(tp) = &trace_probes {
            if tp.dim() != m {
                return Err(ModelError::LengthMismatch {
                    context: "GSGP trace probes (one row per grid point)",
                    expected: m,
                    found: tp.dim(),
                });
            }
        }
        let derivatives = if trace_probes.is_some() {
            self.grid_kernel.derivatives()?
        } else {
            Vec::new()
        };

        let phase = Instant::now();
        let mean = self.mean_cache()?;
        let op = SymmetrizedOperator {
            factor,
            noise_variance: sigma2,
        };
        let cg_options = CgOptions {
            tolerance: self.options.krylov.tolerance,
            max_iterations: self.options.krylov.max_iterations,
            min_iterations: self
                .options
                .krylov
                .min_iterations
                .min(r)
                .min(self.options.krylov.max_iterations),
            ..CgOptions::default()
        };
        let res = cg(&op, probes.matrix(), None, &cg_options)?;
        check_breakdown(&res, "the GSGP log-determinant solve on I + LᵀSL/σ²")?;
        times.solve = phase.elapsed();

        let phase = Instant::now();
        let log_det = slq_log_det_from_cg(
            &res.columns,
            r,
            n as f64 * sigma2.ln(),
            self.options.estimator.slq_scaling,
        )?;
        times.log_det = phase.elapsed();
        let mut report = merge_reports(&mean.report, &solve_report(&res));

        let phase = Instant::now();
        let mut grad = Vec::new();
        let mut grad_std_error = Vec::new();
        if let Some(tp) = trace_probes {
            let z = tp.matrix();
            let t = z.ncols();
            let opts = self.factorized_options(self.options.krylov.tolerance, 0);
            let solved = (0..t)
                .into_par_iter()
                .map(|j| {
                    self.solve_range_w(z.col(j), &opts, "the GSGP gradient solves Wᵀ K̂⁻¹ W ξ", j)
                })
                .collect::<Result<Vec<_>>>()?;
            report = merge_reports(&report, &factorized_report(solved.iter().map(|(_, r)| r)));
            let u = Mat::from_fn(m, t, |i, j| solved[j].0[i]);
            let wa = mean.wt_alpha.as_ref();
            let mut kg_terms = Vec::new();
            for (k, dk) in derivatives.iter().enumerate() {
                let dz = dk.apply_block(z)?;
                let da = dk.apply(wa)?;
                let fit = wa.transpose() * &da;
                let terms: Vec<f64> = (0..t).map(|j| u.col(j).transpose() * dz.col(j)).collect();
                let (trace, se) = mean_and_std_error(&terms);
                grad.push(0.5 * fit - 0.5 * trace);
                grad_std_error.push(0.5 * se);
                // ∂K_G/∂ log σ_f² = K_G: its terms also give tr(Wᵀ K̂⁻¹ W K_G).
                if k + 1 == derivatives.len() {
                    kg_terms = terms;
                }
            }
            // σ² tr K̂⁻¹ = n − tr(Wᵀ K̂⁻¹ W K_G).
            let noise_terms: Vec<f64> = kg_terms.iter().map(|v| n as f64 - v).collect();
            let (sigma2_trace, se) = mean_and_std_error(&noise_terms);
            grad.push(0.5 * (sigma2 * mean.alpha_sq_norm - sigma2_trace));
            grad_std_error.push(0.5 * se);
        }
        times.derivatives = phase.elapsed();

        let data_fit = mean.data_fit;
        let lml = -0.5 * data_fit - 0.5 * log_det.value - n as f64 * HALF_LN_2PI;
        times.total = start.elapsed();
        Ok(LmlEstimate {
            lml,
            lml_std_error: 0.5 * log_det.std_error,
            grad,
            grad_std_error,
            data_fit,
            log_det,
            solve: report,
            preconditioner_rank: 0,
            times,
        })
    }
}

/// The reports of two solves as one (columns of `a`, then of `b`).
fn merge_reports(a: &SolveReport, b: &SolveReport) -> SolveReport {
    let mut per = a.iterations_per_column.clone();
    per.extend_from_slice(&b.iterations_per_column);
    SolveReport {
        iterations: a.iterations.max(b.iterations),
        iterations_per_column: per,
        converged: a.converged && b.converged,
        max_relative_residual: a.max_relative_residual.max(b.max_relative_residual),
    }
}
