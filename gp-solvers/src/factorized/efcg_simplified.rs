//! Simplified EFCG for an initial residual in `range(W)` (paper Algorithm 4; GSGP spec §3.5).

use faer::{Col, ColRef};

use super::cg_result::{FactorizedCgResult, Recorder};
use super::efcg::update_direction;
use super::options::FactorizedCgOptions;
use super::system::{check_system, Products, WeightSpaceSystem};
use super::vector::{s_norm_estimate, squared_norm_bound, FactorizedVector};
use crate::cg::kernels::{axpy, dot};
use crate::error::{check_shape, Result};

/// CG on `K̃ = W K_G Wᵀ + σ² I_n` for a right-hand side (initial residual) `r₀ = W r̂₀` in
/// the range of `W`: every Krylov vector is then `W v̂` with no `z₀` part, so neither `W`
/// nor any data-space quantity is needed — only `K_G`, `S` and `r̂₀`.
///
/// One double product `B(r̂) = (Â r̂, S r̂)` per iteration plus one at the start:
///
/// ```text
/// (v̂, û) = B(r̂₀);  p̂ = r̂₀;  ẑ = v̂;  ŝ = û;  ‖r‖² = ûᵀr̂
/// loop:  α = ‖r‖² / ŝᵀẑ;  x̂ += α p̂;  S x̂ += α ŝ;  r̂ −= α ẑ
///        (v̂, û) = B(r̂);  ‖r_new‖² = ûᵀr̂;  β = ‖r_new‖²/‖r‖²
///        p̂ = r̂ + β p̂;  ŝ = û + β ŝ;  ẑ = v̂ + β ẑ
/// ```
///
/// (`p̂` and `x̂` are kept in addition to the paper's `Wᵀx` update so that the solution is
/// also available as `W x̂`.) From `x₀ = 0` the iterates equal those of [`cg`](crate::cg())
/// on `K̃ x = W r̂₀`. Uses (GSGP spec §3.5, §3.10):
///
/// * covariance-type solves with right-hand sides `W ŷ` (e.g. `ŷ = K_G w_*`): `r̂₀ = ŷ`;
/// * the posterior mean from `x₀ = y/σ²`: `r₀ = −W K_G Wᵀy/σ²`, so `r̂₀ = −K_G t/σ²`
///   (`t = Wᵀy`) and `Wᵀz̃ = solution_wt + t/σ²`; set
///   [`reference_norm`](FactorizedCgOptions::reference_norm) to `‖y‖` to stop as the
///   reference code does. These iterates differ from CG started at 0 (only the converged
///   answers agree).
///
/// The result's [`solution`](FactorizedCgResult::solution) is `W x̂` (coefficient 0 — any
/// `z₀` passed to [`FactorizedVector::expand`] is ignored) and
/// [`solution_wt`](FactorizedCgResult::solution_wt) is `Wᵀ(x − x₀) = S x̂`. The default
/// reference norm is `‖W r̂₀‖ = √(r̂₀ᵀ S r̂₀)`.
///
/// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `r̂₀`
/// does not have length `m`, a non-finite error for NaN or infinite entries, and
/// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for bad options or a
/// bad `σ²`.
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
pub fn efcg_simplified(
    system: &dyn WeightSpaceSystem,
    r0_hat: ColRef<'_, f64>,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    options.validate()?;
    let m = check_system(system, None, "efcg_simplified")?;
    check_shape((r0_hat.nrows(), 1), (m, 1), "efcg_simplified (r̂₀)")?;
    gp_linalg::validate::check_finite_col(r0_hat, "the initial residual r̂₀")?;
    let ops = Products::new(system);
    let mut r: Vec<f64> = r0_hat.iter().copied().collect();
    let (mut v, mut u) = (vec![0.0; m], vec![0.0; m]);
    ops.b(&r, &mut v, &mut u)?;
    let rr0 = dot(&u, &r);
    // ‖S‖ estimate for the rounding bound of the squared norms (no extra product).
    let s_norm = s_norm_estimate(&r, &u);
    let mut rec = Recorder::new(options, rr0, || {
        squared_norm_bound(&r, 0.0, &u, &[], 0.0, s_norm)
    });
    let mut x = vec![0.0; m];
    let mut sx = vec![0.0; m];
    if rec.running() {
        let mut p = r.clone();
        let mut z = v.clone();
        let mut s = u.clone();
        while rec.running() {
            let curvature = dot(&s, &z);
            let Some(alpha) = rec.step_length(curvature) else {
                break;
            };
            axpy(alpha, &p, &mut x);
            axpy(alpha, &s, &mut sx);
            axpy(-alpha, &z, &mut r);
            rec.record_iterate(&x, 0.0);
            ops.b(&r, &mut v, &mut u)?;
            let rr_new = dot(&u, &r);
            let bound = || squared_norm_bound(&r, 0.0, &u, &[], 0.0, s_norm);
            let Some(beta) = rec.complete_step(alpha, rr_new, bound) else {
                break;
            };
            update_direction(&mut p, &r, beta);
            update_direction(&mut s, &u, beta);
            update_direction(&mut z, &v, beta);
        }
    }
    let wt = Col::from_fn(m, |i| sx[i]);
    Ok(rec.finish(FactorizedVector::from_slice(&x, 0.0), wt))
}
