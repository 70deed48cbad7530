//! Efficiently factorized Lanczos (EFLA, paper Algorithm 7 as corrected in GSGP spec §3.8).

use super::lanczos_basis::{finish, off_diagonal, Basis, FactorizedLanczos, LanczosSetup};
use super::system::{Products, StartVector, WeightSpaceSystem};
use crate::cg::kernels::{axpy, dot, norm2};
use crate::error::Result;
use crate::lanczos::{LanczosOptions, LanczosStatus};

/// Efficiently factorized Lanczos with full re-orthogonalization: the Lanczos process of
/// [`lanczos`](crate::lanczos()) on `K̃ = W K_G Wᵀ + σ² I_n` from `z₀`, at one `K_G` and one
/// `S` product per step (plus one `K_G` product of set-up).
///
/// The basis is kept as `Q = W Q̂ + b̃ dᵀ` (`b̃ = z₀/‖z₀‖`) together with `P̂ = S Q̂`,
/// `L = Q̂ᵀ g̃` and `ŝ = Â q̂_j` for the current vector, so that every factorized inner
/// product is `O(m)` without a product. Step `j`:
///
/// ```text
/// ŵ = ŝ + c_j h̃;  c_w = σ² c_j                                  (K̃ q_j, no product)
/// α_j = P̂_jᵀŵ + c_w L_j + c_j (g̃ᵀŵ + c_w)
/// twice: λ = P̂ᵀŵ + c_w L + (g̃ᵀŵ + c_w) d;  ŵ −= Q̂ λ;  c_w −= dᵀλ   (full re-orthogonalization)
/// (ŝ', p̂') = B(ŵ);  ℓ = g̃ᵀŵ;  β_j = √(p̂'ᵀŵ + 2 c_w ℓ + c_w²)
/// q̂_{j+1} = ŵ/β_j;  c_{j+1} = c_w/β_j;  ŝ = ŝ'/β_j;  P̂_{j+1} = p̂'/β_j;  L_{j+1} = ℓ/β_j
/// ```
///
/// As [`lanczos`](crate::lanczos()), the new vector is orthogonalized against all previous
/// ones (including the current one, which removes `α_j q_j` and `β_{j−1} q_{j−1}`), twice.
/// Corrections to the paper's Algorithm 7 (spec §3.8): the shift is `σ²`, not `σ`; the
/// orthogonalization step is `w − α_j q_j`, not `q_j − α_j q_j`; the start is normalized; the
/// scalar of `K̃ q_j` is `σ² c_j` (the reference code's `bfsla2` drops the factor `c_j`).
///
/// At most `min(max_iterations, m + 1)` vectors are built: `K̃` leaves
/// `span{range(W), z₀}` (dimension ≤ `m + 1`) invariant, so reaching `m + 1` vectors when
/// more were asked for ends with [`LanczosStatus::InvariantSubspace`], as
/// [`lanczos`](crate::lanczos()) on `K̃` would. The process also stops when an off-diagonal
/// is at most `breakdown_tolerance · ‖K̃ q_j‖` ([`LanczosStatus::InvariantSubspace`]) or a
/// value is not finite ([`LanczosStatus::NonFinite`]). The factorized `β² = ⟨w, w⟩` is a sum
/// of terms that cancel when `z₀` lies close to `range(W)`; its relative accuracy is about
/// `ε / (1 − cos θ)` with `θ` the angle between `z₀` and `range(W)`, so an invariant
/// subspace smaller than `m + 1` is detected only down to that level.
///
/// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for a zero
/// start vector (`ρ = 0`), a bad tolerance or a bad `σ²`, and
/// [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `g` does not have
/// length `m`.
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
pub fn efla(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &LanczosOptions,
) -> Result<FactorizedLanczos> {
    let ops = Products::new(system);
    let setup = LanczosSetup::new(&ops, start, options, "efla (g = Wᵀz₀)")?;
    let (m, k_max, g, h) = (setup.m, setup.k_max, &setup.g, &setup.h);
    let sigma2 = ops.sigma2;
    let mut basis = Basis::new(m, k_max);
    let mut p_hat = vec![0.0; m];
    let mut s = vec![0.0; m];
    let (mut w, mut s_new, mut p_new) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    let mut diagonal = Vec::with_capacity(k_max);
    let mut off = Vec::with_capacity(k_max);
    let mut status = LanczosStatus::MaxIterations;
    let mut beta_prev = 0.0;
    for j in 0..k_max {
        let c = basis.d[j];
        // K̃ q_j = W ŵ + c_w b̃.
        w.copy_from_slice(&s);
        axpy(c, h, &mut w);
        let mut cw = sigma2 * c;
        let pj = &p_hat[j * m..(j + 1) * m];
        let alpha = dot(pj, &w) + cw * basis.l[j] + c * (dot(g, &w) + cw);
        if !(alpha.is_finite() && norm2(&w).is_finite() && cw.is_finite()) {
            status = LanczosStatus::NonFinite;
            break;
        }
        diagonal.push(alpha);
        if j + 1 == k_max {
            break;
        }
        for _ in 0..2 {
            basis.coefficients(Some(&p_hat), &w, dot(g, &w), cw);
            basis.subtract(&mut w, &mut cw);
        }
        // The only products of the step.
        ops.b(&w, &mut s_new, &mut p_new)?;
        let ell = dot(g, &w);
        let beta_sq = dot(&p_new, &w) + 2.0 * cw * ell + cw * cw;
        let beta = match off_diagonal(beta_sq, alpha, beta_prev, setup.tol) {
            Ok(beta) => beta,
            Err(s) => {
                status = s;
                break;
            }
        };
        off.push(beta);
        basis.push(&w, cw, ell, beta);
        p_hat.extend(p_new.iter().map(|v| v / beta));
        s.copy_from_slice(&s_new);
        gp_linalg::vector::scale(1.0 / beta, &mut s);
        beta_prev = beta;
    }
    finish(&setup, basis, p_hat, diagonal, off, status)
}
