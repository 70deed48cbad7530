//! Symmetric tridiagonal matrices: the Lanczos `T`, its eigen-decomposition and the Gauss
//! quadrature rules `e₁ᵀ f(T) e₁` that stochastic Lanczos quadrature is built from.

use faer::Mat;
use gp_linalg::SymmetricEigen;

use crate::error::{Result, SolverError};

/// A symmetric tridiagonal matrix `T` of order `k`: `diagonal` (length `k`) and
/// `off_diagonal` (length `k − 1`, entry `i` at positions `(i, i+1)` and `(i+1, i)`).
///
/// ```
/// use gp_solvers::SymTridiagonal;
///
/// let t = SymTridiagonal::new(vec![2.0, 2.0], vec![1.0])?;
/// let eig = t.eigen()?;
/// assert!((eig.values[0] - 1.0).abs() < 1e-14 && (eig.values[1] - 3.0).abs() < 1e-14);
/// // e₁ᵀ T⁻¹ e₁ = 2/3.
/// assert!((t.quadrature(|l| 1.0 / l)? - 2.0 / 3.0).abs() < 1e-14);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SymTridiagonal {
    diagonal: Vec<f64>,
    off_diagonal: Vec<f64>,
}

impl SymTridiagonal {
    /// Builds `T` from its diagonal and off-diagonal.
    ///
    /// Errors with [`SolverError::ShapeMismatch`] unless
    /// `off_diagonal.len() + 1 == diagonal.len()` (both may be empty), and with a
    /// [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite) for a NaN or infinite
    /// entry.
    pub fn new(diagonal: Vec<f64>, off_diagonal: Vec<f64>) -> Result<Self> {
        let expected = diagonal.len().saturating_sub(1);
        if off_diagonal.len() != expected {
            return Err(SolverError::ShapeMismatch {
                context: "SymTridiagonal::new (off-diagonal length)",
                expected: format!("{expected}"),
                found: format!("{}", off_diagonal.len()),
            });
        }
        gp_linalg::validate::check_finite_slice(&diagonal, "the tridiagonal's diagonal")?;
        gp_linalg::validate::check_finite_slice(&off_diagonal, "the tridiagonal's off-diagonal")?;
        Ok(Self {
            diagonal,
            off_diagonal,
        })
    }

    /// Builds `T` from parts the caller has already checked (`off_diagonal.len() + 1 ==
    /// diagonal.len()` or both empty, every entry finite): the infallible form of
    /// [`new`](Self::new) for the Lanczos processes, which test each entry as they go.
    pub(crate) fn from_checked(diagonal: Vec<f64>, off_diagonal: Vec<f64>) -> Self {
        debug_assert_eq!(off_diagonal.len(), diagonal.len().saturating_sub(1));
        debug_assert!(diagonal.iter().chain(&off_diagonal).all(|v| v.is_finite()));
        Self {
            diagonal,
            off_diagonal,
        }
    }

    /// The Lanczos tridiagonal implied by `k` CG steps (Saad, §6.7.3; Gardner et al. 2018),
    /// from the step lengths `α₁..α_k` and the ratios `β₁..β_{k−1}` (further `β`s are
    /// ignored):
    ///
    /// ```text
    /// T[0,0] = 1/α₁,   T[j,j] = 1/α_{j+1} + β_j/α_j,   T[j−1,j] = √β_j / α_j
    /// ```
    ///
    /// With a preconditioner `P` this is the tridiagonal of `P^{-1/2} A P^{-1/2}` started at
    /// `P^{-1/2} b / ‖P^{-1/2} b‖`.
    ///
    /// Errors with [`SolverError::InvalidCoefficients`] if an `α` is not finite and
    /// positive or a used `β` is negative or not finite, and with
    /// [`SolverError::InvalidCoefficients`] if fewer than `k − 1` `β`s are given.
    pub fn from_cg_coefficients(alphas: &[f64], betas: &[f64]) -> Result<Self> {
        let k = alphas.len();
        if k == 0 {
            return Ok(Self::default());
        }
        if betas.len() + 1 < k {
            return Err(SolverError::InvalidCoefficients {
                reason: format!(
                    "{k} step lengths need {} β values, got {}",
                    k - 1,
                    betas.len()
                ),
            });
        }
        if let Some((i, a)) = alphas
            .iter()
            .enumerate()
            .find(|(_, a)| !(a.is_finite() && **a > 0.0))
        {
            return Err(SolverError::InvalidCoefficients {
                reason: format!("step length α_{} = {a} is not finite and positive", i + 1),
            });
        }
        if let Some((i, b)) = betas[..k - 1]
            .iter()
            .enumerate()
            .find(|(_, b)| !(b.is_finite() && **b >= 0.0))
        {
            return Err(SolverError::InvalidCoefficients {
                reason: format!("β_{} = {b} is not finite and non-negative", i + 1),
            });
        }
        let mut diagonal = Vec::with_capacity(k);
        let mut off_diagonal = Vec::with_capacity(k - 1);
        for j in 0..k {
            let mut d = 1.0 / alphas[j];
            if j > 0 {
                d += betas[j - 1] / alphas[j - 1];
                off_diagonal.push(betas[j - 1].sqrt() / alphas[j - 1]);
            }
            diagonal.push(d);
        }
        Self::new(diagonal, off_diagonal)
    }

    /// Order `k` of `T`.
    pub fn dim(&self) -> usize {
        self.diagonal.len()
    }

    /// Whether `T` is the empty `0×0` matrix.
    pub fn is_empty(&self) -> bool {
        self.diagonal.is_empty()
    }

    /// The diagonal (length `k`).
    pub fn diagonal(&self) -> &[f64] {
        &self.diagonal
    }

    /// The off-diagonal (length `k − 1`).
    pub fn off_diagonal(&self) -> &[f64] {
        &self.off_diagonal
    }

    /// The leading `j×j` block (`j` is clamped to the order): the tridiagonal after `j`
    /// Lanczos steps.
    pub fn leading(&self, j: usize) -> Self {
        let j = j.min(self.dim());
        Self {
            diagonal: self.diagonal[..j].to_vec(),
            off_diagonal: self.off_diagonal[..j.saturating_sub(1)].to_vec(),
        }
    }

    /// `T` as a dense `k×k` matrix.
    pub fn to_dense(&self) -> Mat<f64> {
        let k = self.dim();
        let mut t = Mat::zeros(k, k);
        for i in 0..k {
            t[(i, i)] = self.diagonal[i];
        }
        for (i, &b) in self.off_diagonal.iter().enumerate() {
            t[(i, i + 1)] = b;
            t[(i + 1, i)] = b;
        }
        t
    }

    /// The eigen-decomposition `T = V diag(λ) Vᵀ` (eigenvalues ascending; the Ritz values
    /// and vectors). `T` is small, so it is formed densely.
    pub fn eigen(&self) -> Result<SymmetricEigen> {
        Ok(SymmetricEigen::new(self.to_dense().as_ref())?)
    }

    /// The Gauss quadrature rule `e₁ᵀ f(T) e₁ = Σ_m V[0,m]² f(λ_m)`. Zero for the empty
    /// matrix.
    pub fn quadrature(&self, f: impl Fn(f64) -> f64) -> Result<f64> {
        if self.is_empty() {
            return Ok(0.0);
        }
        let eig = self.eigen()?;
        Ok((0..self.dim())
            .map(|m| {
                let v = eig.vectors[(0, m)];
                v * v * f(eig.values[m])
            })
            .sum())
    }

    /// `e₁ᵀ log(T) e₁`, the SLQ term of one probe.
    ///
    /// Errors with [`SolverError::NonPositiveRitzValue`] if a Ritz value is zero or
    /// negative (the operator is not positive definite, or rounding destroyed it).
    pub fn log_quadrature(&self) -> Result<f64> {
        if self.is_empty() {
            return Ok(0.0);
        }
        let eig = self.eigen()?;
        let k = self.dim();
        if let Some(index) = (0..k).find(|&m| eig.values[m] <= 0.0) {
            return Err(SolverError::NonPositiveRitzValue {
                dim: k,
                index,
                value: eig.values[index],
            });
        }
        Ok((0..k)
            .map(|m| {
                let v = eig.vectors[(0, m)];
                v * v * eig.values[m].ln()
            })
            .sum())
    }
}
