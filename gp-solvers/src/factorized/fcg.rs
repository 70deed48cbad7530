//! Factorized CG (FCG, paper Algorithm 2; GSGP spec §3.3).

use super::cg_result::{FactorizedCgResult, Recorder};
use super::efcg::update_direction;
use super::options::FactorizedCgOptions;
use super::system::{check_system, Products, StartVector, WeightSpaceSystem};
use super::vector::{inner_with_s, squared_norm_bound, w_transpose_from, FactorizedVector};
use crate::cg::kernels::axpy;
use crate::error::Result;

/// Factorized conjugate gradients: plain CG on `K̃ = W K_G Wᵀ + σ² I_n` for the right-hand
/// side `z₀` (from `x = 0`), with every iterate kept as `W v̂ + c z₀`.
///
/// Products with `K̃` become `𝒜(v̂, c) = (Â v̂ + c h, σ² c)` (`Â = K_G S + σ² I`,
/// `h = K_G g`) and inner products go through `S` (Claims 3 and 4 of the paper). In exact
/// arithmetic the iterates, step lengths and iteration counts equal those of
/// [`cg`](crate::cg()) on `K̃` (Proposition 1). This is the straightforward version: every
/// factorized inner product makes its own `S` product, so an iteration costs one `K_G` and
/// three `S` products, plus one `K_G` product of set-up (`h`) and one `S` product at the end
/// (`Wᵀx`). [`efcg`](super::efcg()) needs one of each per iteration.
///
/// To start from `x₀ ≠ 0`, pass the data of `z₀ = b − K̃ x₀`, set
/// [`reference_norm`](FactorizedCgOptions::reference_norm) to `‖b‖` and add `x₀` to the
/// expanded solution.
///
/// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for bad
/// options or a bad `σ²`, and [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch)
/// if `g` does not have length `m`. Numerical breakdowns end the solve with a
/// [`FactorizedStatus::Breakdown`](super::FactorizedStatus::Breakdown).
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
pub fn fcg(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    options.validate()?;
    let m = check_system(system, Some(start), "fcg (g = Wᵀz₀)")?;
    let ops = Products::new(system);
    let g = start.g_slice();
    let rho = start.rho();
    // ρ ≥ 0 is checked by `StartVector::new`.
    let mut rec = Recorder::new(options, rho, || 0.0);
    let mut x = vec![0.0; m];
    let mut cx = 0.0;
    let mut s_tmp = vec![0.0; m];
    if rec.running() {
        let mut h = vec![0.0; m];
        ops.kg(g, &mut h)?;
        let mut r = vec![0.0; m];
        let mut cr = 1.0;
        let mut p = vec![0.0; m];
        let mut cp = 1.0;
        let mut a = vec![0.0; m];
        while rec.running() {
            // (â, c_a) = 𝒜(p̂, c_p): one K_G and one S product.
            let ca = ops.factorized(&p, cp, &h, &mut a, &mut s_tmp)?;
            // pᵀK̃p = ⟨p, K̃p⟩ with its own S product.
            ops.s(&a, &mut s_tmp)?;
            let curvature = inner_with_s(&p, cp, &a, &s_tmp, ca, g, rho);
            let Some(alpha) = rec.step_length(curvature) else {
                break;
            };
            axpy(alpha, &p, &mut x);
            cx += alpha * cp;
            axpy(-alpha, &a, &mut r);
            cr -= alpha * ca;
            rec.record_iterate(&x, cx);
            // ‖r‖² = ⟨r, r⟩.
            ops.s(&r, &mut s_tmp)?;
            let rr_new = inner_with_s(&r, cr, &r, &s_tmp, cr, g, rho);
            // No ‖S‖ estimate: FCG keeps no product of a known vector with S at hand.
            let bound = || squared_norm_bound(&r, cr, &s_tmp, g, rho, 0.0);
            let Some(beta) = rec.complete_step(alpha, rr_new, bound) else {
                break;
            };
            update_direction(&mut p, &r, beta);
            cp = cr + beta * cp;
        }
    }
    ops.s(&x, &mut s_tmp)?;
    let wt = w_transpose_from(&s_tmp, cx, g);
    Ok(rec.finish(FactorizedVector::from_slice(&x, cx), wt))
}
