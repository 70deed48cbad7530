//! `W(f)⁻¹`, the noise of the regression problem one Newton step solves, as an operator.

use faer::{Col, ColMut, ColRef, Mat};
use gp_linalg::LinearOperator;

/// The inverse negative Hessian of the log likelihood at a latent vector (CN order): the
/// "observation noise" `W⁻¹` of the Newton step's regression problem, applied in `O(N·C)`.
#[derive(Debug, Clone, PartialEq)]
pub enum InverseCurvature {
    /// `diag(d)`: Gaussian (`σ²`), Poisson (`e^{−f}`), Bernoulli (`1/(σ(1 − σ))`).
    Diagonal(Col<f64>),
    /// The softmax pseudo-inverse `blockdiag(P diag(1/π_n) P)`, `P = I − 11ᵀ/C`, per point
    /// `u ← w − mean(w); u ← u ⊘ π; u ← u − mean(u)` (Lemma A.7).
    SoftmaxPseudoInverse {
        /// `1/π_{n,c}`, `N × C`.
        inverse_probabilities: Mat<f64>,
    },
}

impl InverseCurvature {
    /// `W⁻¹ w` as a new vector.
    pub fn apply_col(&self, w: ColRef<'_, f64>) -> Col<f64> {
        let mut out = Col::zeros(w.nrows());
        self.matvec(w, out.as_mut());
        out
    }
}

impl LinearOperator for InverseCurvature {
    fn nrows(&self) -> usize {
        match self {
            Self::Diagonal(d) => d.nrows(),
            Self::SoftmaxPseudoInverse {
                inverse_probabilities,
            } => inverse_probabilities.nrows() * inverse_probabilities.ncols(),
        }
    }

    fn ncols(&self) -> usize {
        self.nrows()
    }

    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        match self {
            Self::Diagonal(d) => {
                for i in 0..d.nrows() {
                    out[i] = d[i] * x[i];
                }
            }
            Self::SoftmaxPseudoInverse {
                inverse_probabilities: inv,
            } => {
                let c = inv.ncols();
                let scale = 1.0 / c as f64;
                for n in 0..inv.nrows() {
                    let base = n * c;
                    let mean: f64 = (0..c).map(|k| x[base + k]).sum::<f64>() * scale;
                    let mut mean_u = 0.0;
                    for k in 0..c {
                        let u = (x[base + k] - mean) * inv[(n, k)];
                        out[base + k] = u;
                        mean_u += u;
                    }
                    mean_u *= scale;
                    for k in 0..c {
                        out[base + k] -= mean_u;
                    }
                }
            }
        }
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        match self {
            Self::Diagonal(d) => Some(d.clone()),
            Self::SoftmaxPseudoInverse { .. } => None,
        }
    }
}
