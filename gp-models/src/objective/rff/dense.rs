//! The RFF objective through the Cholesky factor of the `n × n` matrix `K̃ = ΦΦᵀ + σ²I`
//! (the path for `2F ≥ n`, where `ΦΦᵀ` can have full rank).
//!
//! `α = K̃⁻¹y`, `b = Φᵀα`, `Q = αbᵀ − K̃⁻¹Φ`, `∂L/∂log σ² = ½σ² (αᵀα − tr K̃⁻¹)`, with
//! `K̃⁻¹` formed explicitly (`σ² tr K̃⁻¹ = n − ⟨K̃⁻¹Φ, Φ⟩` would cancel badly).

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{matmul as tri_matmul, BlockStructure};
use faer::{Accum, ColRef, Mat, MatRef};
use gp_linalg::parallelism_for;

use super::factor::Llt;
use super::solve::{dot, q_from, t_times, GradParts, Solved};
use crate::error::Result;

/// Evaluates the terms (and the gradient parts when `gradient`).
pub(crate) fn solve(
    phi: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
    gradient: bool,
) -> Result<Solved> {
    let (n, m) = (phi.nrows(), phi.ncols());
    let mut k = Mat::<f64>::zeros(n, n);
    tri_matmul(
        k.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        phi,
        BlockStructure::Rectangular,
        phi.transpose(),
        BlockStructure::Rectangular,
        1.0,
        parallelism_for((n * n * m) as f64),
    );
    for i in 0..n {
        k[(i, i)] += noise_variance;
    }
    let llt = Llt::factor(k)?;
    let mut alpha = y.to_owned();
    llt.solve_in_place(alpha.as_mat_mut());
    let data_fit = dot(y, alpha.as_ref());
    let log_det = llt.log_det();
    let grad = if gradient {
        let inv = llt.inverse();
        let tr_inv: f64 = (0..n).map(|i| inv[(i, i)]).sum();
        let mut p = Mat::<f64>::zeros(n, m);
        matmul(
            p.as_mut(),
            Accum::Replace,
            inv.as_ref(),
            phi,
            1.0,
            parallelism_for(2.0 * (n * n * m) as f64),
        );
        let b = t_times(phi, alpha.as_ref());
        let log_noise = 0.5 * noise_variance * (dot(alpha.as_ref(), alpha.as_ref()) - tr_inv);
        Some(GradParts {
            q: q_from(p, &alpha, &b),
            log_noise,
        })
    } else {
        None
    };
    Ok(Solved {
        data_fit,
        log_det,
        grad,
    })
}
