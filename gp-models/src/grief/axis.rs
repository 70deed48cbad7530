//! One axis of the GP-GRIEF basis: the eigendecomposition of the 1-D squared-exponential
//! kernel matrix on the axis' grid and the scaled 1-D Nyström eigenfunctions
//! `F = K_XU Q Λ^{-1/2}` (Evans & Nair 2018, §3–4), with their derivative with respect to
//! `log ℓ`.
//!
//! **The 1-D kernel** has unit variance, `k(x, u) = exp(−½ ((x − u)/ℓ)²)`; the signal variance
//! multiplies the whole basis instead (`Φ(s_f) = s_f Φ`), so it never enters here.
//!
//! **Jitter and floor.** `K = K_UU + 10⁻¹² I` ([`AXIS_JITTER`], the reference code's
//! `dim_noise_var`; relative to `k(x, x) = 1`, so it is scale-aware because the variance is
//! outside). Eigenvalues below `10⁻¹⁴ λ_max` ([`EIGENVALUE_FLOOR`]) are raised to that floor
//! before `λ^{-1/2}` is taken, so a round-off-negative eigenvalue neither gives NaN nor an
//! exploding feature.
//!
//! **Order and signs.** Eigenpairs are sorted by decreasing eigenvalue. Each eigenvector's
//! sign makes its entry of largest magnitude positive; entries within a relative `10⁻⁸` of that
//! magnitude count as tied and the first of them decides (so the mirror-image pairs of a
//! symmetric grid are resolved the same way at every length scale). This makes `F` a
//! continuous function of `ℓ` away from isolated crossings, so finite differences and the
//! derivative agree.
//!
//! **Derivative** (analytic, first-order perturbation theory of the symmetric eigenproblem):
//! with `Ḱ = dK/d log ℓ`, `M = Qᵀ Ḱ Q`, `dλ_k = M_kk`, `dq_k = Σ_{l≠k} q_l M_lk / (λ_k − λ_l)`
//! and `dF = dK_XU Q Λ^{-1/2} + K_XU (dQ Λ^{-1/2} − ½ Q Λ^{-3/2} dΛ)`. It was chosen over
//! finite differences of the eigendecomposition because it is exact (no step to tune) and,
//! for close eigenvalues, it divides round-off by the gap once where a finite difference
//! divides it by the gap and the step. A floored eigenvalue `ε λ_max` has derivative
//! `ε dλ_max`. Exactly equal eigenvalues contribute no rotation. Small eigenpairs are
//! ill-conditioned (so is the eigenvector itself): on a 10-point axis, central differences
//! agree with the derivative to about `10⁻⁸` (relative to the column's largest entry) for
//! `λ_k ≥ 10⁻⁴ λ_max`, `10⁻⁵` near `10⁻⁶ λ_max`, `10⁻²` near `10⁻⁹ λ_max`, and not at all for
//! eigenvalues at the jitter level (`≈ 10⁻¹²`), whose eigenvectors are arbitrary within
//! their near-degenerate cluster. Gradients through such columns (`p` close to `m`) are
//! noise.

use std::sync::OnceLock;

use faer::linalg::matmul::matmul;
use faer::{Accum, ColRef, Mat, MatRef, Par};
use gp_linalg::LinalgError;

use crate::error::{ModelError, Result};

/// Jitter added to the diagonal of each 1-D kernel matrix (unit variance), as in the authors'
/// code (Evans & Nair 2018, §4 reference implementation).
pub const AXIS_JITTER: f64 = 1e-12;

/// Eigenvalues of a 1-D kernel matrix below `EIGENVALUE_FLOOR · λ_max` are raised to that
/// value before `λ^{-1/2}` and `log λ` are taken.
pub const EIGENVALUE_FLOOR: f64 = 1e-14;

/// Entries of an eigenvector within this relative distance of its largest magnitude are tied
/// for the sign convention; the first of them decides.
const SIGN_TIE: f64 = 1e-8;

/// The eigendecomposition of one 1-D kernel matrix and its scaled eigenvectors
/// `G = Q Λ^{-1/2}`, from which `F = K_XU G` (Evans & Nair 2018, §4: the factor `B⁽ⁱ⁾` of
/// Theorem 2 with the eigenvalue scaling folded in).
#[derive(Debug, Clone)]
pub struct AxisBasis {
    points: Vec<f64>,
    lengthscale: f64,
    /// Floored eigenvalues, descending.
    values: Vec<f64>,
    /// The computed eigenvalues of `K_UU + jitter` before the floor, same order.
    raw_values: Vec<f64>,
    /// Eigenvectors as columns, in the order of `values`, signs normalised.
    vectors: Mat<f64>,
    /// `G = Q Λ^{-1/2}`.
    scaled: Mat<f64>,
    /// `dG / d log ℓ`, computed on first use.
    scaled_derivative: OnceLock<Mat<f64>>,
    floored: usize,
}

impl AxisBasis {
    /// Eigendecomposes the 1-D SE kernel matrix with length scale `lengthscale` on the sorted
    /// grid `points`.
    ///
    /// Errors: an empty or non-finite axis, a length scale that is not finite and `> 0`
    /// ([`ModelError::InvalidOption`]), or an eigendecomposition that does not converge.
    pub fn new(points: &[f64], lengthscale: f64) -> Result<Self> {
        check_lengthscale(lengthscale, None)?;
        let m = points.len();
        if m == 0 {
            return Err(ModelError::EmptyData {
                context: "an axis of the GRIEF basis",
                n: 0,
                d: 1,
            });
        }
        if let Some(row) = points.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                context: "an axis of the GRIEF inducing grid",
                row,
                col: 0,
                value: points[row],
            });
        }
        let k = Mat::from_fn(m, m, |a, b| {
            se(points[a], points[b], lengthscale) + if a == b { AXIS_JITTER } else { 0.0 }
        });
        let evd = gp_linalg::eigen::self_adjoint_eigen(k.as_ref())?;
        let s = evd.S().column_vector();
        let u = evd.U();
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
        let raw_values: Vec<f64> = order.iter().map(|&k| s[k]).collect();
        let mut vectors = Mat::from_fn(m, m, |a, j| u[(a, order[j])]);
        for j in 0..m {
            if leading_sign(vectors.col(j)) < 0.0 {
                for a in 0..m {
                    vectors[(a, j)] = -vectors[(a, j)];
                }
            }
        }
        let max = raw_values[0];
        if !(max.is_finite() && max > 0.0) {
            return Err(ModelError::Linalg(LinalgError::NotPositive {
                context: "the largest eigenvalue of a 1-D GRIEF kernel matrix",
                index: 0,
                value: max,
            }));
        }
        let floor = EIGENVALUE_FLOOR * max;
        let floored = raw_values.iter().filter(|&&v| v < floor).count();
        let values: Vec<f64> = raw_values.iter().map(|&v| v.max(floor)).collect();
        let scaled = Mat::from_fn(m, m, |a, j| vectors[(a, j)] / values[j].sqrt());
        Ok(Self {
            points: points.to_vec(),
            lengthscale,
            values,
            raw_values,
            vectors,
            scaled,
            scaled_derivative: OnceLock::new(),
            floored,
        })
    }

    /// The number of grid points `m̄` on this axis.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Always `false`: an axis has at least one point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The grid points of this axis.
    pub fn points(&self) -> &[f64] {
        &self.points
    }

    /// The length scale `ℓ`.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// The eigenvalues of `K_UU + jitter`, descending, floored at `EIGENVALUE_FLOOR · λ_max`.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }

    /// The orthonormal eigenvectors (columns, in the order of
    /// [`eigenvalues`](Self::eigenvalues), signs as in the [module documentation](self)).
    pub fn eigenvectors(&self) -> MatRef<'_, f64> {
        self.vectors.as_ref()
    }

    /// `G = Q Λ^{-1/2}` (`m̄ × m̄`), so that `F = K_XU G`.
    pub fn scaled_eigenvectors(&self) -> MatRef<'_, f64> {
        self.scaled.as_ref()
    }

    /// `dG / d log ℓ` (`m̄ × m̄`), computed on first use (`O(m̄³)`) and cached.
    pub fn scaled_eigenvector_derivatives(&self) -> MatRef<'_, f64> {
        self.scaled_derivative
            .get_or_init(|| self.compute_scaled_derivative())
            .as_ref()
    }

    /// How many eigenvalues were raised to the floor.
    pub fn floored(&self) -> usize {
        self.floored
    }

    /// The cross-covariance `K_XU = [k(x_r, u_a)]` (`b × m̄`) for the coordinates `x`.
    pub fn cross_covariance(&self, x: ColRef<'_, f64>) -> Mat<f64> {
        let l = self.lengthscale;
        let xs: Vec<f64> = x.iter().copied().collect();
        let mut k = Mat::zeros(xs.len(), self.len());
        // Column by column over contiguous slices: the same `se` per entry as an indexed
        // fill, without its per-entry index arithmetic.
        for (a, &u) in self.points.iter().enumerate() {
            for (out, &xr) in k.col_as_slice_mut(a).iter_mut().zip(&xs) {
                *out = se(xr, u, l);
            }
        }
        k
    }

    /// `dK_XU / d log ℓ = K_XU ⊙ ((x − u)/ℓ)²` (`b × m̄`).
    pub fn cross_covariance_derivative(&self, x: ColRef<'_, f64>) -> Mat<f64> {
        self.cross_covariance_and_derivative(x).1
    }

    /// [`cross_covariance`](Self::cross_covariance) and
    /// [`cross_covariance_derivative`](Self::cross_covariance_derivative) together, from one
    /// exponential per entry.
    pub fn cross_covariance_and_derivative(&self, x: ColRef<'_, f64>) -> (Mat<f64>, Mat<f64>) {
        let k = self.cross_covariance(x);
        let l = self.lengthscale;
        let dk = Mat::from_fn(x.nrows(), self.len(), |r, a| {
            let t = (x[r] - self.points[a]) / l;
            k[(r, a)] * t * t
        });
        (k, dk)
    }

    /// The features `F[:, columns] = K_XU Q[:, columns] Λ[columns]^{-1/2}` (`b × c`) at the
    /// coordinates `x`.
    ///
    /// Errors: a column `≥ m̄` ([`ModelError::InvalidOption`]).
    pub fn features(&self, x: ColRef<'_, f64>, columns: &[usize]) -> Result<Mat<f64>> {
        let g = self.select(self.scaled.as_ref(), columns)?;
        Ok(product(self.cross_covariance(x).as_ref(), g.as_ref()))
    }

    /// `dF[:, columns] / d log ℓ` (`b × c`) at the coordinates `x`.
    ///
    /// Errors: a column `≥ m̄` ([`ModelError::InvalidOption`]).
    pub fn feature_derivatives(&self, x: ColRef<'_, f64>, columns: &[usize]) -> Result<Mat<f64>> {
        let g = self.select(self.scaled.as_ref(), columns)?;
        let dg = self.select(self.scaled_eigenvector_derivatives(), columns)?;
        let mut out = product(self.cross_covariance_derivative(x).as_ref(), g.as_ref());
        matmul(
            out.as_mut(),
            Accum::Add,
            self.cross_covariance(x).as_ref(),
            dg.as_ref(),
            1.0,
            Par::Seq,
        );
        Ok(out)
    }

    /// The columns `columns` of `a` (an `m̄ × m̄` matrix of this axis).
    pub(crate) fn select(&self, a: MatRef<'_, f64>, columns: &[usize]) -> Result<Mat<f64>> {
        if let Some(&bad) = columns.iter().find(|&&c| c >= self.len()) {
            return Err(ModelError::InvalidOption {
                name: "columns",
                reason: format!(
                    "column {bad} requested from an axis with {} eigenfunctions; columns must \
                     be below the number of grid points of the axis",
                    self.len()
                ),
            });
        }
        Ok(Mat::from_fn(a.nrows(), columns.len(), |i, j| {
            a[(i, columns[j])]
        }))
    }

    /// `dG = dQ Λ^{-1/2} − ½ Q Λ^{-3/2} dΛ` by first-order perturbation theory.
    fn compute_scaled_derivative(&self) -> Mat<f64> {
        let m = self.len();
        let l = self.lengthscale;
        let dk = Mat::from_fn(m, m, |a, b| {
            let t = (self.points[a] - self.points[b]) / l;
            (-0.5 * t * t).exp() * t * t
        });
        let q = self.vectors.as_ref();
        let qt_dk = product(q.transpose(), dk.as_ref());
        let mm = product(qt_dk.as_ref(), q);
        let floor = EIGENVALUE_FLOOR * self.raw_values[0];
        // dλ of the floored values: ε dλ_max.
        let dvalues: Vec<f64> = (0..m)
            .map(|k| {
                if self.raw_values[k] < floor {
                    EIGENVALUE_FLOOR * mm[(0, 0)]
                } else {
                    mm[(k, k)]
                }
            })
            .collect();
        // Coefficients C[l, k] of dq_k = Σ_l q_l C[l, k].
        let coef = Mat::from_fn(m, m, |r, k| {
            let gap = self.raw_values[k] - self.raw_values[r];
            if r == k || gap == 0.0 {
                0.0
            } else {
                mm[(r, k)] / gap
            }
        });
        let dq = product(q, coef.as_ref());
        Mat::from_fn(m, m, |a, k| {
            let lam = self.values[k];
            dq[(a, k)] / lam.sqrt() - 0.5 * q[(a, k)] * dvalues[k] / (lam * lam.sqrt())
        })
    }
}

/// Checks one length scale (of `axis`, when known): finite and `> 0`.
pub(crate) fn check_lengthscale(value: f64, axis: Option<usize>) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        return Ok(());
    }
    let which = axis.map_or(String::new(), |i| format!(" of axis {i}"));
    Err(ModelError::InvalidOption {
        name: "lengthscales",
        reason: format!(
            "the length scale{which} is {value}; length scales must be finite and strictly \
             positive"
        ),
    })
}

/// The unit-variance SE kernel `exp(−½ ((x − u)/ℓ)²)`.
fn se(x: f64, u: f64, l: f64) -> f64 {
    let t = (x - u) / l;
    (-0.5 * t * t).exp()
}

/// `a b` with faer's sequential matmul.
pub(crate) fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::zeros(a.nrows(), b.ncols());
    matmul(out.as_mut(), Accum::Replace, a, b, 1.0, Par::Seq);
    out
}

/// The sign of the first entry whose magnitude is within `SIGN_TIE` of the largest.
fn leading_sign(v: ColRef<'_, f64>) -> f64 {
    let max = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    v.iter()
        .find(|x| x.abs() >= (1.0 - SIGN_TIE) * max)
        .map_or(1.0, |x| x.signum())
}
