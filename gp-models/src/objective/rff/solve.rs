//! The two ways to evaluate the RFF objective, `K̃ = ΦΦᵀ + σ²I`, and what they return.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColRef, Mat, MatRef};
use gp_linalg::parallelism;

use super::{dense, woodbury};
use crate::error::Result;

/// How the RFF objective factors `K̃ = ΦΦᵀ + σ²I` (`n × n`, `Φ` is `n × 2F`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RffPath {
    /// [`Woodbury`](Self::Woodbury) when `2F < n`, [`Dense`](Self::Dense) otherwise: the
    /// cheaper of the two, and the one without the cancellation of the Woodbury data-fit
    /// term when `ΦΦᵀ` has full rank.
    #[default]
    Auto,
    /// The `2F × 2F` matrix `A = σ²I + ΦᵀΦ`: `log|K̃| = (n − 2F) log σ² + log|A|`,
    /// `yᵀK̃⁻¹y = (yᵀy − (Φᵀy)ᵀA⁻¹Φᵀy)/σ²`, in `O(n F² + F³)`. Valid for any `F` (the
    /// identities hold for every `F`), but slower than the dense path once `2F ≥ n`.
    Woodbury,
    /// The Cholesky factor of the `n × n` matrix `K̃`, in `O(n² F + n³)`.
    Dense,
}

impl RffPath {
    /// The path actually taken for `num_basis = 2F` columns and `n` points (never
    /// [`Auto`](Self::Auto)).
    pub fn resolve(self, num_basis: usize, n: usize) -> Self {
        match self {
            RffPath::Auto if num_basis < n => RffPath::Woodbury,
            RffPath::Auto => RffPath::Dense,
            other => other,
        }
    }
}

/// The two terms and, when asked for, what the gradient needs.
pub(crate) struct Solved {
    /// `yᵀK̃⁻¹y`.
    pub data_fit: f64,
    /// `log|K̃|`.
    pub log_det: f64,
    /// The gradient parts, if asked for.
    pub grad: Option<GradParts>,
}

/// `Q = ∂L/∂Φ = αbᵀ − K̃⁻¹Φ` (`α = K̃⁻¹y`, `b = Φᵀα`) and `∂L/∂log σ² = ½σ²(αᵀα − tr K̃⁻¹)`.
pub(crate) struct GradParts {
    /// `∂L/∂Φ` (`n × 2F`).
    pub q: Mat<f64>,
    /// `∂L/∂log σ²`.
    pub log_noise: f64,
}

/// Evaluates the terms by `path` (resolved).
pub(crate) fn solve(
    path: RffPath,
    phi: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
    gradient: bool,
) -> Result<Solved> {
    match path.resolve(phi.ncols(), phi.nrows()) {
        RffPath::Woodbury => woodbury::solve(phi, y, noise_variance, gradient),
        _ => dense::solve(phi, y, noise_variance, gradient),
    }
}

/// `Q = αbᵀ − P` in place of `p` (`P = K̃⁻¹Φ`).
pub(crate) fn q_from(mut p: Mat<f64>, alpha: &Col<f64>, b: &Col<f64>) -> Mat<f64> {
    let alpha: Vec<f64> = alpha.iter().copied().collect();
    for j in 0..p.ncols() {
        let bj = b[j];
        for (pi, ai) in p.col_as_slice_mut(j).iter_mut().zip(&alpha) {
            *pi = ai * bj - *pi;
        }
    }
    p
}

/// `Mᵀv` (`M` is `n × k`).
pub(crate) fn t_times(m: MatRef<'_, f64>, v: ColRef<'_, f64>) -> Col<f64> {
    let mut out = Col::<f64>::zeros(m.ncols());
    matmul(
        out.as_mat_mut(),
        Accum::Replace,
        m.transpose(),
        v.as_mat(),
        1.0,
        parallelism(),
    );
    out
}

/// `vᵀw`.
pub(crate) fn dot(v: ColRef<'_, f64>, w: ColRef<'_, f64>) -> f64 {
    v.transpose() * w
}
