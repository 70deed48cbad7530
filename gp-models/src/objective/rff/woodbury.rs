//! The RFF objective through the `2F × 2F` matrix `A = σ²I + ΦᵀΦ` (Woodbury identity and
//! matrix determinant lemma).
//!
//! With `b = A⁻¹Φᵀy`: `α = K̃⁻¹y = (y − Φb)/σ²`, `Φᵀα = b`, `K̃⁻¹Φ = ΦA⁻¹` and
//! `tr K̃⁻¹ = (n − 2F)/σ² + tr A⁻¹`, so `Q = αbᵀ − ΦA⁻¹` and
//! `∂L/∂log σ² = ½ (σ² αᵀα − (n − 2F) − σ² tr A⁻¹)`.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{matmul as tri_matmul, BlockStructure};
use faer::{Accum, Col, ColRef, Mat, MatRef};
use gp_linalg::{parallelism, parallelism_for};

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
    // Lower triangle of A = σ²I + ΦᵀΦ (the factorization reads only that).
    let mut a = Mat::<f64>::zeros(m, m);
    tri_matmul(
        a.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        phi.transpose(),
        BlockStructure::Rectangular,
        phi,
        BlockStructure::Rectangular,
        1.0,
        parallelism_for((n * m * m) as f64),
    );
    for i in 0..m {
        a[(i, i)] += noise_variance;
    }
    let llt = Llt::factor(a)?;
    let mut b = t_times(phi, y);
    llt.solve_in_place(b.as_mat_mut());
    // α = (y − Φb)/σ².
    let mut alpha = y.to_owned();
    matmul(
        alpha.as_mat_mut(),
        Accum::Add,
        phi,
        b.as_mat(),
        -1.0,
        parallelism(),
    );
    let alpha: Col<f64> = alpha / faer::Scale(noise_variance);
    let data_fit = dot(y, alpha.as_ref());
    let log_det = (n as f64 - m as f64) * noise_variance.ln() + llt.log_det();
    let grad = if gradient {
        // ΦA⁻¹ = (A⁻¹Φᵀ)ᵀ: solve with the transposed view of a copy of Φ.
        let mut p = phi.to_owned();
        llt.solve_in_place(p.as_mut().transpose_mut());
        let log_noise = 0.5
            * (noise_variance * dot(alpha.as_ref(), alpha.as_ref())
                - (n as f64 - m as f64)
                - noise_variance * llt.trace_inverse());
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
