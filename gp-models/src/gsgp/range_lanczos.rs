//! Lanczos on `K̂` from a start vector in `range(W)` (the GSGP authors' code, `bfsla1` in
//! github.com/ymohit/fkigp; not in the paper): every Lanczos vector is `q_j = W q̂_j` with no `z₀` part, inner products are
//! `q̂ᵀ S q̂'`, and `K̂ W q̂ = W Â q̂` — i.e. Lanczos on `Â = K_G S + σ²I` in the
//! `S`-inner product, one double product `B(q̂) = (Â q̂, S q̂)` per step.
//!
//! Unlike EFLA with `z₀ = W v̂` (whose redundant representation `W q̂ + c z₀` makes the
//! factorized `β²` a sum of cancelling terms, so that an exhausted Krylov space shows up as
//! `β ≈ √ε` instead of `≈ ε`), here `β² = ŵᵀ S ŵ` of the re-orthogonalized vector itself, so
//! breakdown is detected as reliably as in plain Lanczos.

use faer::{Mat, MatRef};
use gp_linalg::projection;
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

/// `k_max` steps with full re-orthogonalization (one pass, two when the first removed much;
/// see the loop) from `W v̂`; `v̂` must have `v̂ᵀ S v̂ > 0`. Stops early when
/// `β ≤ tol · ‖K̂ q_j‖` (estimated from `α`, `β`) or on a non-finite value.
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
    // Q̂ and P̂ = S Q̂, column-major `m × j`, one column appended per step.
    let mut q: Vec<f64> = Vec::with_capacity(m * k_max);
    let mut p: Vec<f64> = Vec::with_capacity(m * k_max);
    let mut coeffs = Vec::with_capacity(k_max);
    let (mut diagonal, mut off) = (Vec::new(), Vec::new());
    let mut status = LanczosStatus::MaxIterations;
    if !(norm.is_finite() && norm > 0.0) {
        status = LanczosStatus::NonFinite;
    } else {
        q.extend(v_hat.iter().map(|v| v / norm));
        p.extend(s_cur.iter().map(|v| v / norm));
        a_cur.iter_mut().for_each(|v| *v /= norm);
    }
    let (mut a_new, mut s_new) = (vec![0.0; m], vec![0.0; m]);
    let mut beta_prev = 0.0;
    while status == LanczosStatus::MaxIterations && !q.is_empty() && q.len() / m <= k_max {
        let cols = q.len() / m;
        let j = cols - 1;
        let (q_j, p_j) = (&q[j * m..], &p[j * m..]);
        // w = Â q̂_j (the hat part of K̂ q_j); α_j = ⟨q_j, K̂ q_j⟩ = P̂_jᵀ w.
        let mut w = a_cur.clone();
        let alpha = dot(p_j, &w)?;
        if !alpha.is_finite() {
            status = LanczosStatus::NonFinite;
            break;
        }
        diagonal.push(alpha);
        if cols == k_max {
            break;
        }
        // The three-term recurrence first (O(m)); what is left of w along Q̂ is then at
        // rounding level, and one classical Gram–Schmidt pass in the S-inner product removes
        // it. The passes over Q̂ and P̂ (not the products) cost at large m and j: at m = 60K,
        // rank 300 they read ~43 GB per pass over the run.
        axpy(-alpha, q_j, &mut w)?;
        if j > 0 {
            axpy(-beta_prev, &q[(j - 1) * m..j * m], &mut w)?;
        }
        let removed = project_out(&q, &p, m, &mut w, &mut coeffs)?;
        b(&w, &mut a_new, &mut s_new)?;
        let mut beta_sq = dot(&s_new, &w)?;
        // A second pass only if the first removed more than half of ‖w‖²_S = ‖c‖² + β²
        // (the DGKS criterion ‖w'‖ < ‖w‖/√2, "twice is enough"), and then the product again.
        if removed > beta_sq {
            project_out(&q, &p, m, &mut w, &mut coeffs)?;
            b(&w, &mut a_new, &mut s_new)?;
            beta_sq = dot(&s_new, &w)?;
        }
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
        q.extend(w.iter().map(|v| v / beta));
        p.extend(s_new.iter().map(|v| v / beta));
        a_cur
            .iter_mut()
            .zip(&a_new)
            .for_each(|(c, v)| *c = v / beta);
        beta_prev = beta;
    }
    let k = diagonal.len();
    off.truncate(k.saturating_sub(1));
    let p_hat = MatRef::from_column_major_slice(&p[..m * k], m, k).to_owned();
    Ok(RangeLanczos {
        p_hat,
        tridiagonal: SymTridiagonal::new(diagonal, off)?,
        status,
    })
}

/// One classical Gram–Schmidt pass in the `S`-inner product against the `m × j` bases
/// stored column-major in `q` and `p = S q`: `c = P̂ᵀ w`, `w −= Q̂ c`; returns `‖c‖²`.
fn project_out(
    q: &[f64],
    p: &[f64],
    m: usize,
    w: &mut [f64],
    coeffs: &mut Vec<f64>,
) -> Result<f64> {
    let cols = q.len() / m;
    Ok(projection::project_out(
        MatRef::from_column_major_slice(q, m, cols),
        MatRef::from_column_major_slice(p, m, cols),
        w,
        coeffs,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::matmul::matmul;
    use faer::Accum;
    use gp_linalg::{Cholesky, DenseOperator, SymmetricEigen};
    use gp_solvers::factorized::OperatorSystem;
    use rand::{Rng, SeedableRng};

    /// `K_G` (an SE kernel on `m` grid points, plus a small ridge) and `S = WᵀW` for a random
    /// dense `W` with more rows than columns, so `S` is invertible and `Q̂ = S⁻¹P̂` is known.
    fn problem(m: usize) -> (Mat<f64>, Mat<f64>) {
        let kg = Mat::from_fn(m, m, |i, j| {
            let d = (i as f64 - j as f64) / 4.0;
            (-0.5 * d * d).exp() + if i == j { 1e-3 } else { 0.0 }
        });
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let w = Mat::from_fn(2 * m, m, |_, _| rng.random::<f64>() - 0.5);
        let mut s = Mat::zeros(m, m);
        matmul(
            s.as_mut(),
            Accum::Replace,
            w.transpose(),
            w.as_ref(),
            1.0,
            faer::Par::Seq,
        );
        (kg, s)
    }

    /// A full-rank run keeps `Q̂` orthonormal in the `S`-inner product (`P̂ᵀ S⁻¹ P̂ = I`) to
    /// rounding level, and `T` has the eigenvalues of `Â = K_G S + σ²I` (those of the
    /// symmetric `Lᵀ K_G L + σ²I`, `S = L Lᵀ`), although the DGKS criterion runs the second
    /// Gram–Schmidt pass only when the first removed much.
    #[test]
    fn full_rank_run_is_s_orthonormal_and_has_the_spectrum_of_a_hat() {
        let (m, sigma2) = (30, 0.01);
        let (kg, s) = problem(m);
        let (kg_op, s_op) = (
            DenseOperator::new(kg.clone()),
            DenseOperator::new(s.clone()),
        );
        let system = OperatorSystem::new(&kg_op, &s_op, sigma2).unwrap();
        let v_hat: Vec<f64> = (0..m).map(|i| 1.0 + (i as f64 * 0.3).sin()).collect();
        let lz = range_lanczos(&system, &v_hat, m, 1e-13).unwrap();
        assert_eq!(lz.p_hat.ncols(), m);

        let chol = Cholesky::new(s.as_ref()).unwrap();
        let q_hat = chol.solve(lz.p_hat.as_ref()).unwrap();
        let gram = lz.p_hat.transpose() * &q_hat;
        let off = (&gram - Mat::<f64>::identity(m, m)).norm_max();
        assert!(off < 1e-10, "‖P̂ᵀQ̂ − I‖_max = {off:e}");

        let l = chol.factor();
        let sym = l.transpose() * &kg * l + Mat::<f64>::identity(m, m) * sigma2;
        let want = SymmetricEigen::new(sym.as_ref()).unwrap().values;
        let got = SymmetricEigen::new(lz.tridiagonal.to_dense().as_ref())
            .unwrap()
            .values;
        for (g, w) in got.iter().zip(want.iter()) {
            assert!((g - w).abs() < 1e-9 * want[m - 1], "{g} vs {w}");
        }
    }
}
