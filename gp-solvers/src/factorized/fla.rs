//! Factorized Lanczos (FLA, paper Algorithm 6 as corrected in GSGP spec §3.7).

use super::lanczos_basis::{finish, off_diagonal, Basis, FactorizedLanczos, LanczosSetup};
use super::system::{Products, StartVector, WeightSpaceSystem};
use crate::cg::kernels::{dot, norm2};
use crate::error::Result;
use crate::lanczos::{LanczosOptions, LanczosStatus};

/// Factorized Lanczos with full re-orthogonalization: the Lanczos process of
/// [`lanczos`](crate::lanczos()) on `K̃ = W K_G Wᵀ + σ² I_n` from `z₀`, with the basis kept
/// as `Q = W Q̂ + b̃ dᵀ` (`b̃ = z₀/‖z₀‖`).
///
/// Products with `K̃` become `𝒜(q̂, c) = (Â q̂ + c h̃, σ² c)` and inner products go through
/// `S`. This is the straightforward version: it caches no `S` product, so a step costs one
/// `K_G` and four `S` products (`K̃ q_j`; `S ŵ` for `α_j` and the first re-orthogonalization
/// pass; again for the second pass; again for `β_j`), and the result's
/// [`wt_basis`](FactorizedLanczos::wt_basis) costs `k` more. [`efla`](super::efla()) needs
/// one `K_G` and one `S` product per step.
///
/// Corrections to the paper's Algorithm 6 (spec §3.7): the new vector is
/// `K̃ q_j − β_{j−1} q_{j−1}` (here: `K̃ q_j` orthogonalized against every previous vector,
/// which removes both terms), not the paper's swapped roles; the start is normalized.
///
/// Stopping rules, the cap `min(max_iterations, m + 1)` and errors as for
/// [`efla`](super::efla()).
pub fn fla(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &LanczosOptions,
) -> Result<FactorizedLanczos> {
    let ops = Products::new(system);
    let setup = LanczosSetup::new(&ops, start, options, "fla (g = Wᵀz₀)")?;
    let (m, k_max, g, h) = (setup.m, setup.k_max, &setup.g, &setup.h);
    let mut basis = Basis::new(m, k_max);
    let (mut w, mut sw, mut scratch) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    let mut diagonal = Vec::with_capacity(k_max);
    let mut off = Vec::with_capacity(k_max);
    let mut status = LanczosStatus::MaxIterations;
    let mut beta_prev = 0.0;
    for j in 0..k_max {
        let c = basis.d[j];
        // (ŵ, c_w) = 𝒜(q̂_j, c_j).
        let mut cw = ops.factorized(basis.col(j), c, h, &mut w, &mut scratch)?;
        // α_j = ⟨q_j, w⟩ with its own S product.
        ops.s(&w, &mut sw)?;
        let gw = dot(g, &w);
        let alpha = dot(basis.col(j), &sw) + cw * basis.l[j] + c * (gw + cw);
        if !(alpha.is_finite() && norm2(&w).is_finite() && cw.is_finite()) {
            status = LanczosStatus::NonFinite;
            break;
        }
        diagonal.push(alpha);
        if j + 1 == k_max {
            break;
        }
        for pass in 0..2 {
            if pass > 0 {
                ops.s(&w, &mut sw)?;
            }
            basis.coefficients(None, &sw, dot(g, &w), cw);
            basis.subtract(&mut w, &mut cw);
        }
        // β_j = ‖w‖ with its own S product.
        ops.s(&w, &mut sw)?;
        let ell = dot(g, &w);
        let beta_sq = dot(&sw, &w) + 2.0 * cw * ell + cw * cw;
        let beta = match off_diagonal(beta_sq, alpha, beta_prev, setup.tol) {
            Ok(beta) => beta,
            Err(s) => {
                status = s;
                break;
            }
        };
        off.push(beta);
        basis.push(&w, cw, ell, beta);
        beta_prev = beta;
    }
    // WᵀQ needs S Q̂: one S product per column.
    let k = diagonal.len();
    let mut p_hat = vec![0.0; m * k];
    for (j, out) in p_hat.chunks_exact_mut(m.max(1)).enumerate().take(k) {
        ops.s(basis.col(j), out)?;
    }
    finish(&setup, basis, p_hat, diagonal, off, status)
}
