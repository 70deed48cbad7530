//! Lanczos on `K̂` from a start vector in `range(W)` (the GSGP authors' code, `bfsla1` in
//! github.com/ymohit/fkigp; not in the paper): every Lanczos vector is `q_j = W q̂_j` with no `z₀` part, inner products are
//! `q̂ᵀ S q̂'`, and `K̂ W q̂ = W Â q̂` — i.e. Lanczos on `Â = K_G S + σ²I` in the
//! `S`-inner product, one double product `B(q̂) = (Â q̂, S q̂)` per step.
//!
//! Unlike EFLA with `z₀ = W v̂` (whose redundant representation `W q̂ + c z₀` makes the
//! factorized `β²` a sum of cancelling terms, so that an exhausted Krylov space shows up as
//! `β ≈ √ε` instead of `≈ ε`), here `β² = ŵᵀ S ŵ` of the re-orthogonalized vector itself, so
//! breakdown is detected as reliably as in plain Lanczos.

use faer::Mat;
use gp_linalg::vector::{axpy, dot};
use gp_solvers::factorized::WeightSpaceSystem;
use gp_solvers::{LanczosStatus, SymTridiagonal};

use crate::error::Result;

/// The outcome: `P̂ = S Q̂ = WᵀQ` (`m × k`), `T` and the status.
pub(crate) struct RangeLanczos {
    pub(crate) p_hat: Mat<f64>,
    pub(crate) tridiagonal: SymTridiagonal,
    pub(crate) status: LanczosStatus,
}

/// `k_max` steps with full re-orthogonalization (twice) from `W v̂`; `v̂` must have
/// `v̂ᵀ S v̂ > 0`. Stops early when `β ≤ tol · ‖K̂ q_j‖` (estimated from `α`, `β`) or on a
/// non-finite value.
pub(crate) fn range_lanczos(
    system: &dyn WeightSpaceSystem,
    v_hat: &[f64],
    k_max: usize,
    tol: f64,
) -> Result<RangeLanczos> {
    let m = system.dim();
    let b = |v: &[f64], a: &mut [f64], s: &mut [f64]| {
        system.apply_b(
            faer::ColRef::from_slice(v),
            faer::ColMut::from_slice_mut(a),
            faer::ColMut::from_slice_mut(s),
        )
    };
    let (mut a_cur, mut s_cur) = (vec![0.0; m], vec![0.0; m]);
    b(v_hat, &mut a_cur, &mut s_cur)?;
    let norm = dot(v_hat, &s_cur)?.max(0.0).sqrt();
    let mut q: Vec<Vec<f64>> = Vec::with_capacity(k_max);
    let mut p: Vec<Vec<f64>> = Vec::with_capacity(k_max);
    let (mut diagonal, mut off) = (Vec::new(), Vec::new());
    let mut status = LanczosStatus::MaxIterations;
    if !(norm.is_finite() && norm > 0.0) {
        status = LanczosStatus::NonFinite;
    } else {
        q.push(v_hat.iter().map(|v| v / norm).collect());
        p.push(s_cur.iter().map(|v| v / norm).collect());
        a_cur.iter_mut().for_each(|v| *v /= norm);
    }
    let (mut a_new, mut s_new) = (vec![0.0; m], vec![0.0; m]);
    let mut beta_prev = 0.0;
    while status == LanczosStatus::MaxIterations && q.len() <= k_max && !q.is_empty() {
        let j = q.len() - 1;
        // w = Â q̂_j (the hat part of K̂ q_j); α_j = ⟨q_j, K̂ q_j⟩ = P̂_jᵀ w.
        let mut w = a_cur.clone();
        let alpha = dot(&p[j], &w)?;
        if !alpha.is_finite() {
            status = LanczosStatus::NonFinite;
            break;
        }
        diagonal.push(alpha);
        if q.len() == k_max {
            break;
        }
        for _ in 0..2 {
            for (qi, pi) in q.iter().zip(&p) {
                // Bound by memory bandwidth at large m: each pass reads all of Q and P.
                let c = dot(pi, &w)?;
                axpy(-c, qi, &mut w)?;
            }
        }
        b(&w, &mut a_new, &mut s_new)?;
        let beta_sq = dot(&s_new, &w)?;
        if !beta_sq.is_finite() {
            status = LanczosStatus::NonFinite;
            break;
        }
        let beta = beta_sq.max(0.0).sqrt();
        let aq = (beta_prev * beta_prev + alpha * alpha + beta_sq.max(0.0)).sqrt();
        if beta <= tol * aq.max(f64::MIN_POSITIVE) {
            status = LanczosStatus::InvariantSubspace;
            break;
        }
        off.push(beta);
        q.push(w.iter().map(|v| v / beta).collect());
        p.push(s_new.iter().map(|v| v / beta).collect());
        a_cur = a_new.iter().map(|v| v / beta).collect();
        beta_prev = beta;
    }
    let k = diagonal.len();
    off.truncate(k.saturating_sub(1));
    let p_hat = Mat::from_fn(m, k, |i, c| p[c][i]);
    Ok(RangeLanczos {
        p_hat,
        tridiagonal: SymTridiagonal::new(diagonal, off)?,
        status,
    })
}
