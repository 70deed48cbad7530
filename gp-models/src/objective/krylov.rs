//! The CG and RR-CG estimators on any covariance that offers `K̂ = K + σ²I` as an operator
//! and contractions with its derivatives.

use faer::{Mat, MatRef};
use gp_linalg::LinearOperator;
use gp_solvers::rr_cg::{rr_cg, rr_slq_log_det, sample_draws, RrCgOptions};
use gp_solvers::truncation::{Fixed, TruncationLaw};
use gp_solvers::{slq_log_det_from_cg, CgColumn, Preconditioner, ProbeOptions, Probes};
use rand::RngCore;

use crate::error::{ModelError, Result};
use crate::objective::estimator::{KrylovObjectiveOptions, ObjectiveEstimate};

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// A covariance `K̂(θ) = K(θ) + σ²I` as the Krylov estimators need it.
pub trait KrylovCovariance {
    /// `K̂` as an operator (`n × n`).
    fn operator(&self) -> &dyn LinearOperator;

    /// The preconditioner `P ≈ K̂`, if any.
    fn preconditioner(&self) -> Option<&dyn Preconditioner>;

    /// The noise variance `σ²`.
    fn noise_variance(&self) -> f64;

    /// `Q[k, c] = L[:, c]ᵀ (∂K/∂θ_k) R[:, c]` for the kernel's log hyperparameters `θ_k`
    /// (`p × r`; the noise is handled by the caller).
    fn kernel_derivative_contractions(
        &self,
        left: MatRef<'_, f64>,
        right: MatRef<'_, f64>,
    ) -> Result<Mat<f64>>;

    /// `Σ_c w_c L[:, c]ᵀ (∂K/∂θ_k) R[:, c]` for every kernel log hyperparameter `θ_k`: what
    /// the gradient needs (`w = [1, −1/t, …]`). The default sums
    /// [`kernel_derivative_contractions`](Self::kernel_derivative_contractions); a
    /// covariance with a cheaper route overrides it.
    fn kernel_derivative_weighted(
        &self,
        left: MatRef<'_, f64>,
        right: MatRef<'_, f64>,
        weights: &[f64],
    ) -> Result<Vec<f64>> {
        Ok(weighted_rows(
            self.kernel_derivative_contractions(left, right)?.as_ref(),
            weights,
        ))
    }
}

/// `Σ_c w_c Q[k, c]` for every row `k` of `Q`.
pub(crate) fn weighted_rows(q: MatRef<'_, f64>, weights: &[f64]) -> Vec<f64> {
    (0..q.nrows())
        .map(|k| weights.iter().enumerate().map(|(c, w)| w * q[(k, c)]).sum())
        .collect()
}

/// How the depth of the Krylov estimator is chosen.
#[derive(Debug, Clone, Copy)]
pub enum KrylovDepth<'a> {
    /// Plain truncated CG with this many iterations.
    Fixed(usize),
    /// Russian roulette: `draws` depths from `law`.
    Random {
        /// The truncation law.
        law: &'a dyn TruncationLaw,
        /// Independent draws (≥ 2).
        draws: usize,
    },
    /// Russian roulette with given depths (for tests and enumeration; ≥ 2 of them).
    Given {
        /// The truncation law the weights come from.
        law: &'a dyn TruncationLaw,
        /// The depths.
        depths: &'a [usize],
    },
}

/// The truncation law and the draws of `depth`: two draws of a fixed depth (held in
/// `fixed`, all weights 1), the law's samples, or the given depths.
///
/// Errors with [`ModelError::InvalidOption`] for fewer than two draws (the unbiased
/// gradient needs two independent solves of `K̂⁻¹y`) and a fixed depth of 0.
pub(crate) fn depth_draws<'a>(
    depth: KrylovDepth<'a>,
    fixed: &'a mut Option<Fixed>,
    rng: &mut dyn RngCore,
) -> Result<(&'a dyn TruncationLaw, Vec<usize>)> {
    let (law, draws): (&dyn TruncationLaw, Vec<usize>) = match depth {
        KrylovDepth::Fixed(j) => (fixed.insert(Fixed::new(j)?), vec![j, j]),
        KrylovDepth::Random { law, draws } => (law, sample_draws(law, draws, rng)),
        KrylovDepth::Given { law, depths } => (law, depths.to_vec()),
    };
    if draws.len() < 2 {
        return Err(ModelError::InvalidOption {
            name: "RR-CG draws",
            reason: format!(
                "the unbiased gradient needs two independent draws of J, got {}",
                draws.len()
            ),
        });
    }
    Ok((law, draws))
}

/// One CG or RR-CG evaluation of `log p(y | X, θ)` and its gradient (spec §2.3):
///
/// ```text
/// g_k = ½ [ â₁ᵀ (∂K̂/∂θ_k) â₂ − (1/t) Σ_i Ẑ_iᵀ (∂K̂/∂θ_k) P⁻¹z_i ],
/// ```
///
/// with `â₁, â₂` two independent RR estimates of `K̂⁻¹y` and `Ẑ` the mean RR estimate of
/// `K̂⁻¹Z` (for plain CG all three are the truncated CG iterates). The value uses the mean
/// RR data fit and the RR-SLQ (plain SLQ for CG) log-determinant plus `log det P`. Probes
/// are `N(0, P)` with a preconditioner, Rademacher without, drawn from `rng` (`probes`
/// overrides them).
pub fn krylov_estimate<C: KrylovCovariance + ?Sized>(
    covariance: &C,
    y: MatRef<'_, f64>,
    depth: KrylovDepth<'_>,
    options: &KrylovObjectiveOptions,
    probes: Option<Probes>,
    rng: &mut dyn RngCore,
) -> Result<ObjectiveEstimate> {
    let op = covariance.operator();
    let n = op.nrows();
    if y.nrows() != n || y.ncols() != 1 {
        return Err(ModelError::LengthMismatch {
            context: "the targets of a Krylov objective (one per training point)",
            expected: n,
            found: y.nrows(),
        });
    }
    let precond = covariance.preconditioner();
    let probes = match probes {
        Some(p) => p,
        None => {
            let seed = rng.next_u64();
            let opts = ProbeOptions {
                count: options.probes,
                seed,
                ..ProbeOptions::default()
            };
            Probes::generate(n, precond, &opts)?
        }
    };
    let t = probes.count();
    let mut fixed_law = None;
    let (law, draws) = depth_draws(depth, &mut fixed_law, rng)?;
    let mut rhs = Mat::<f64>::zeros(n, 1 + t);
    rhs.as_mut().subcols_mut(0, 1).copy_from(y);
    rhs.as_mut().subcols_mut(1, t).copy_from(probes.matrix());
    let rr_options = RrCgOptions {
        tolerance: options.tolerance,
        ..RrCgOptions::default()
    };
    let out = rr_cg(op, rhs.as_ref(), precond, law, &draws, &rr_options)?;
    let (first, second) = out.independent_halves()?;
    let mean = out.mean_estimate();

    // L = [â₁ | Ẑ], R = [â₂ | P⁻¹Z].
    let mut left = Mat::<f64>::zeros(n, 1 + t);
    left.as_mut()
        .subcols_mut(0, 1)
        .copy_from(first.as_ref().subcols(0, 1));
    left.as_mut()
        .subcols_mut(1, t)
        .copy_from(mean.as_ref().subcols(1, t));
    let mut right = Mat::<f64>::zeros(n, 1 + t);
    right
        .as_mut()
        .subcols_mut(0, 1)
        .copy_from(second.as_ref().subcols(0, 1));
    right
        .as_mut()
        .subcols_mut(1, t)
        .copy_from(probes.preconditioned());
    let mut weights = vec![-1.0 / t as f64; 1 + t];
    weights[0] = 1.0;
    let mut gradient: Vec<f64> = covariance
        .kernel_derivative_weighted(left.as_ref(), right.as_ref(), &weights)?
        .into_iter()
        .map(|v| 0.5 * v)
        .collect();
    // ∂K̂/∂log σ² = σ² I.
    let sigma2 = covariance.noise_variance();
    let quad = left.col(0).transpose() * right.col(0);
    let trace = (1..=t)
        .map(|c| left.col(c).transpose() * right.col(c))
        .sum::<f64>()
        / t as f64;
    gradient.push(0.5 * sigma2 * (quad - trace));

    let mut terms = None;
    if options.with_value {
        let fit = y.col(0).transpose() * mean.col(0);
        let log_det_p = match precond {
            Some(p) => p.log_det()?,
            None => 0.0,
        };
        let columns = &out.columns[1..];
        let ld = depth_log_det(columns, depth, law, &draws, n, log_det_p, options)?;
        terms = Some((fit, ld));
    }
    Ok(krylov_objective_estimate(
        terms,
        n,
        gradient,
        out.iterations,
    ))
}

/// The SLQ log determinant (truncated CG: [`KrylovDepth::Fixed`]) or the RR-SLQ one
/// (RR-CG) from the probe columns of a CG run on an operator of order `dim`, plus `offset`.
pub(crate) fn depth_log_det(
    columns: &[CgColumn],
    depth: KrylovDepth<'_>,
    law: &dyn TruncationLaw,
    draws: &[usize],
    dim: usize,
    offset: f64,
    options: &KrylovObjectiveOptions,
) -> Result<f64> {
    Ok(match depth {
        KrylovDepth::Fixed(_) => {
            slq_log_det_from_cg(columns, dim, offset, options.slq_scaling)?.value
        }
        _ => rr_slq_log_det(columns, law, draws, dim, offset, options.slq_scaling)?.value,
    })
}

/// The estimate from the gradient and, where the value was computed, the data fit and the
/// log determinant (`terms`) of an `n`-point model.
pub(crate) fn krylov_objective_estimate(
    terms: Option<(f64, f64)>,
    n: usize,
    gradient: Vec<f64>,
    work: usize,
) -> ObjectiveEstimate {
    ObjectiveEstimate {
        lml: terms.map(|(fit, ld)| -0.5 * fit - 0.5 * ld - n as f64 * HALF_LN_2PI),
        data_fit: terms.map(|(fit, _)| fit),
        log_det: terms.map(|(_, ld)| ld),
        gradient,
        work,
    }
}
