//! SOUND for KMCG (spec `kmcg.md` §3.6): the training kernel `K_train = P T Pᵀ` with `T`
//! the symmetric Toeplitz SE matrix of the full time grid (1…60 000) and `P` the training
//! positions, the cross-covariance between the training and test points as a restricted
//! Toeplitz operator (FFT circulant embedding, `O(n log n)` per product), the true test
//! targets and SMSE. Data from the GSGP loader ([`crate::papers::gsgp::sound`]), or its
//! labelled stand-in when the files are missing.

use std::path::Path;
use std::sync::Arc;

use faer::{Col, ColRef};
use gp_linalg::LinearOperator;
use gp_structured::{RestrictedToeplitz, SymmetricToeplitz};

use super::hyper::{StructuredHyper, SOUND_HYPER};
use super::metrics::smse;
use crate::data::DataOrigin;
use crate::error::BenchError;
use crate::papers::gsgp::sound::{load_sound, SoundData};

/// SOUND as a structured problem: Toeplitz operators over the time grid.
#[derive(Debug, Clone)]
pub struct SoundProblem {
    /// The train/test data (inputs are 1-based integer time indices).
    pub data: SoundData,
    /// The SE hyperparameters ([`SOUND_HYPER`] for the real problem).
    pub hyper: StructuredHyper,
    toeplitz: Arc<SymmetricToeplitz>,
    train_positions: Vec<usize>,
    test_positions: Vec<usize>,
}

/// 0-based grid positions of 1-based integer time indices.
fn positions(x: faer::MatRef<'_, f64>, what: &'static str) -> Result<Vec<usize>, BenchError> {
    if x.ncols() != 1 {
        return Err(BenchError::InvalidArgument {
            name: what,
            reason: format!(
                "SOUND inputs are 1-D time indices, got {} columns",
                x.ncols()
            ),
        });
    }
    (0..x.nrows())
        .map(|i| {
            let t = x[(i, 0)];
            if t >= 1.0 && t.fract() == 0.0 && t.is_finite() {
                Ok(t as usize - 1)
            } else {
                Err(BenchError::InvalidArgument {
                    name: what,
                    reason: format!("row {i}: {t} is not a positive integer time index"),
                })
            }
        })
        .collect()
}

impl SoundProblem {
    /// Builds the operators for `data` on the grid `1..=max index` with the isotropic SE
    /// kernel of `hyper`: `T_ij = sf² exp(−(i − j)² / (2ℓ²))`.
    ///
    /// Errors: inputs that are not 1-D positive integer time indices, or a Toeplitz
    /// construction failure.
    pub fn new(data: SoundData, hyper: StructuredHyper) -> Result<Self, BenchError> {
        let train_positions = positions(data.x_train.as_ref(), "x_train")?;
        let test_positions = positions(data.x_test.as_ref(), "x_test")?;
        let len = train_positions
            .iter()
            .chain(&test_positions)
            .max()
            .map_or(0, |&m| m + 1);
        let inv = 1.0 / (2.0 * hyper.lengthscale * hyper.lengthscale);
        let column: Vec<f64> = (0..len)
            .map(|k| hyper.signal_variance * (-(k as f64).powi(2) * inv).exp())
            .collect();
        let toeplitz = Arc::new(SymmetricToeplitz::new(&column)?);
        Ok(Self {
            data,
            hyper,
            toeplitz,
            train_positions,
            test_positions,
        })
    }

    /// The real SOUND files from `data_dir` with [`SOUND_HYPER`], or the GSGP stand-in
    /// (same layout, labelled) when they are missing.
    ///
    /// Errors: a malformed file, or those of [`SoundProblem::new`].
    pub fn load(data_dir: Option<&Path>, seed: u64) -> Result<Self, BenchError> {
        Self::new(load_sound(data_dir, seed)?, SOUND_HYPER)
    }

    /// Whether the values are the synthetic stand-in.
    pub fn is_stand_in(&self) -> bool {
        matches!(self.data.origin, DataOrigin::Synthetic(_))
    }

    /// Length of the full time grid (60 000 for SOUND).
    pub fn grid_len(&self) -> usize {
        self.toeplitz.dim()
    }

    /// Training points `N`.
    pub fn n_train(&self) -> usize {
        self.train_positions.len()
    }

    /// Test points `n*`.
    pub fn n_test(&self) -> usize {
        self.test_positions.len()
    }

    /// The full-grid Toeplitz matrix `T`.
    pub fn toeplitz(&self) -> &Arc<SymmetricToeplitz> {
        &self.toeplitz
    }

    /// `K_train = P T Pᵀ` (`N × N`, no noise) as an operator.
    ///
    /// Errors: never for a constructed problem (positions are inside the grid).
    pub fn train_operator(&self) -> Result<RestrictedToeplitz, BenchError> {
        Ok(RestrictedToeplitz::observed(
            self.toeplitz.clone(),
            self.train_positions.clone(),
        )?)
    }

    /// The cross-covariance `k(X*, X) = P* T Pᵀ` (`n* × N`) as an operator: applied to `s`
    /// it gives `sᵀ k(X, x*_j)` for every test point `j`.
    ///
    /// Errors: never for a constructed problem.
    pub fn cross_operator(&self) -> Result<RestrictedToeplitz, BenchError> {
        Ok(RestrictedToeplitz::new(
            self.toeplitz.clone(),
            Some(self.test_positions.clone()),
            Some(self.train_positions.clone()),
        )?)
    }

    /// `sᵀ k(X, x*_j)` for every test point (length `n*`), one FFT product.
    ///
    /// Errors: `s` of a length other than `N`.
    pub fn cross_dot(&self, s: ColRef<'_, f64>) -> Result<Col<f64>, BenchError> {
        Ok(self.cross_operator()?.apply(s)?)
    }

    /// The prior variance `k(x*, x*) = sf²` at every test point (for predictive variances).
    pub fn test_prior_variance(&self) -> f64 {
        self.hyper.signal_variance
    }

    /// SMSE of `pred` against the true test targets (`N − 1` variance, §3.2).
    ///
    /// Errors: `pred` of a length other than `n*`.
    pub fn smse(&self, pred: &Col<f64>) -> Result<f64, BenchError> {
        smse(&self.data.y_test, pred)
    }
}
