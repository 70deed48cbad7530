//! The Laplace approximation by dense Newton: the reference IterNCGP is checked against on
//! small problems (`O((N·C)³)` per step, `(N·C)²` memory).

use faer::linalg::solvers::Solve;
use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::Cholesky;

use super::likelihood::LaplaceLikelihood;
use super::posterior::IterNcgpPosterior;
use super::step::{take_step, StepControl};
use crate::error::{ModelError, Result};

/// Which Newton iteration [`DenseLaplace`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewtonForm {
    /// True Newton, `g⁺ = (W + K⁻¹)⁻¹(W g + ∇) = K (I + W K)⁻¹ (W g + ∇)` with the
    /// likelihood's full negative Hessian `W` (singular for softmax, which this form
    /// handles): valid for any prior covariance (default).
    #[default]
    True,
    /// The regression form IterNCGP solves, `g⁺ = K (K + W⁻¹)⁻¹ (ŷ − m)` with the
    /// pseudo-inverse `W†` for softmax: refused (with
    /// [`ModelError::PseudoInverseInvalid`]) when `K` does not commute with the per-point
    /// centring, because it would converge to a wrong point (spec §3.4).
    Regression,
}

/// Settings of [`DenseLaplace::fit`]: the paper's stopping rule (relative change of
/// `g = f − m` at most 1 %), at most 100 steps, undamped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplaceOptions {
    /// Stop when `‖g_{i+1} − g_i‖ / ‖g_{i+1}‖ ≤ tolerance` (default `0.01`).
    pub tolerance: f64,
    /// Most Newton steps (default 100).
    pub max_steps: usize,
    /// Undamped (default) or backtracking.
    pub step_control: StepControl,
    /// True Newton (default) or the regression form.
    pub form: NewtonForm,
}

impl Default for LaplaceOptions {
    fn default() -> Self {
        Self {
            tolerance: 0.01,
            max_steps: 100,
            step_control: StepControl::Undamped,
            form: NewtonForm::True,
        }
    }
}

/// A Laplace approximation computed densely: the Newton iterates from `f_0 = m`, the
/// mode, and whether the stopping rule was met.
#[derive(Debug, Clone)]
pub struct DenseLaplace {
    /// `f_1, f_2, …` (CN order), one per step.
    pub iterates: Vec<Col<f64>>,
    /// The last iterate.
    pub f: Col<f64>,
    /// The relative change of `g` at each step.
    pub relative_changes: Vec<f64>,
    /// Whether the tolerance was met within `max_steps`.
    pub converged: bool,
}

/// `‖K P z − P K z‖ / ‖K z‖` for `P = I_N ⊗ (I_C − 11ᵀ/C)` and a fixed probe `z`: zero
/// exactly when `K` commutes with the per-point centring on that probe (shared kernels).
pub fn centring_defect(k: MatRef<'_, f64>, outputs: usize) -> f64 {
    let nc = k.nrows();
    let center = |x: &Col<f64>| {
        let mut out = x.clone();
        for p in 0..nc / outputs {
            let mean = (0..outputs).map(|c| x[p * outputs + c]).sum::<f64>() / outputs as f64;
            for c in 0..outputs {
                out[p * outputs + c] -= mean;
            }
        }
        out
    };
    // A deterministic probe with no special structure.
    let z = Col::from_fn(nc, |i| ((i as f64 + 1.0) * 0.754_877_666).fract() - 0.5);
    let kz = k * &z;
    let kpz = k * center(&z);
    let pkz = center(&kz);
    (&kpz - &pkz).norm_l2() / kz.norm_l2().max(f64::MIN_POSITIVE)
}

/// One dense Newton step from `f`: the next iterate's `v` and `K v`, with `f⁺ = m + K v`.
///
/// Errors: a singular system, a likelihood whose curvature is not finite at `f`.
pub fn dense_newton_step<L: LaplaceLikelihood>(
    k: MatRef<'_, f64>,
    prior_mean: ColRef<'_, f64>,
    f: ColRef<'_, f64>,
    y: ColRef<'_, f64>,
    likelihood: &L,
    form: NewtonForm,
) -> Result<(Col<f64>, Col<f64>)> {
    let nc = k.nrows();
    match form {
        NewtonForm::True => {
            // v = (I + W K)⁻¹ (W g + ∇), K v = g⁺.
            let w = likelihood.curvature_dense(f);
            let g = f.to_owned() - prior_mean;
            let rhs = &w * &g + likelihood.gradient(f, y);
            let a = Mat::<f64>::identity(nc, nc) + &w * k;
            let v = a.partial_piv_lu().solve(rhs.as_mat()).col(0).to_owned();
            if v.iter().any(|x| !x.is_finite()) {
                return Err(ModelError::NewtonDiverged {
                    step: 0,
                    reason: "the dense Newton system I + W K is singular".to_string(),
                });
            }
            let kv = k * &v;
            Ok((v, kv))
        }
        NewtonForm::Regression => {
            let winv = likelihood.inverse_curvature(f)?;
            let b = likelihood.pseudo_targets(f, y)? - prior_mean;
            let khat = k.to_owned() + gp_linalg::LinearOperator::to_dense(&winv);
            let v = Cholesky::new(khat.as_ref())?.solve_col(b.as_ref())?;
            let kv = k * &v;
            Ok((v, kv))
        }
    }
}

impl DenseLaplace {
    /// The Laplace posterior at the last iterate `f` in IterNCGP's form: representer weights
    /// `v = K̂⁻¹(ŷ(f) − m)` and the root `Q = L⁻ᵀ` of `K̂⁻¹ = QQᵀ` (`K̂ = K + W(f)⁻¹ = LLᵀ`,
    /// `W†` for softmax), so that [`IterNcgpPosterior::predict`] gives the exact Laplace
    /// latent marginals: the dense reference for predictions, and the subset-of-data
    /// baseline on a subset.
    ///
    /// Errors: as [`dense_newton_step`] in the regression form (a failed Cholesky factor, a
    /// curvature that is not finite).
    pub fn posterior_at_mode<L: LaplaceLikelihood>(
        &self,
        k: MatRef<'_, f64>,
        prior_mean: ColRef<'_, f64>,
        y: ColRef<'_, f64>,
        likelihood: &L,
    ) -> Result<IterNcgpPosterior> {
        let nc = k.nrows();
        let winv = likelihood.inverse_curvature(self.f.as_ref())?;
        let b = likelihood.pseudo_targets(self.f.as_ref(), y)? - prior_mean;
        let khat = k.to_owned() + gp_linalg::LinearOperator::to_dense(&winv);
        let chol = Cholesky::new(khat.as_ref())?;
        let v = chol.solve_col(b.as_ref())?;
        // Q = L⁻ᵀ, from the triangular inverse (n³/3 flops, a third of solving Lᵀ Q = I).
        let mut l_inv = Mat::<f64>::zeros(nc, nc);
        faer::linalg::triangular_inverse::invert_lower_triangular(
            l_inv.as_mut(),
            chol.factor(),
            faer::Par::Seq,
        );
        IterNcgpPosterior::new(v, l_inv.transpose().to_owned(), likelihood.latent_outputs())
    }

    /// Runs Newton from `f_0 = m` on the dense prior covariance `k` (`N·C × N·C`, CN order).
    ///
    /// Errors: invalid targets or options, shapes that do not match,
    /// [`ModelError::PseudoInverseInvalid`] for the regression form with per-class
    /// kernels, [`ModelError::NewtonDiverged`] for an iterate outside the likelihood's
    /// finite range, factorization failures.
    pub fn fit<L: LaplaceLikelihood>(
        k: MatRef<'_, f64>,
        prior_mean: ColRef<'_, f64>,
        y: ColRef<'_, f64>,
        likelihood: &L,
        options: &LaplaceOptions,
    ) -> Result<Self> {
        let c = likelihood.latent_outputs();
        let nc = y.nrows() * c;
        if k.nrows() != nc || k.ncols() != nc || prior_mean.nrows() != nc {
            return Err(ModelError::LengthMismatch {
                context: "DenseLaplace::fit: K (N·C × N·C) and the prior mean (N·C) for N targets",
                expected: nc,
                found: k.nrows(),
            });
        }
        if !(options.tolerance >= 0.0 && options.tolerance.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "LaplaceOptions::tolerance",
                reason: format!("must be finite and ≥ 0, got {}", options.tolerance),
            });
        }
        likelihood.check_targets(y)?;
        if options.form == NewtonForm::Regression && c > 1 {
            let defect = centring_defect(k, c);
            if defect > 1e-10 {
                return Err(ModelError::PseudoInverseInvalid { defect });
            }
        }
        let mut f = prior_mean.to_owned();
        let mut v = Col::<f64>::zeros(nc);
        let mut kv = Col::<f64>::zeros(nc);
        let mut iterates = Vec::new();
        let mut relative_changes = Vec::new();
        let mut converged = false;
        for step in 0..options.max_steps {
            let proposal =
                dense_newton_step(k, prior_mean, f.as_ref(), y, likelihood, options.form).map_err(
                    |e| match e {
                        ModelError::NewtonDiverged { reason, .. } => {
                            ModelError::NewtonDiverged { step, reason }
                        }
                        other => other,
                    },
                )?;
            let accepted = take_step(
                options.step_control,
                step,
                likelihood,
                prior_mean,
                y,
                (v.as_ref(), kv.as_ref()),
                proposal,
            )?;
            let rel = accepted.relative_change(kv.as_ref());
            v = accepted.v;
            kv = accepted.kv;
            f = prior_mean.to_owned() + &kv;
            iterates.push(f.clone());
            relative_changes.push(rel);
            if rel <= options.tolerance {
                converged = true;
                break;
            }
        }
        Ok(Self {
            iterates,
            f,
            relative_changes,
            converged,
        })
    }
}
