//! The log determinant of the SKI matrix from the sufficient statistics alone.
//!
//! By Sylvester's determinant identity, for any factor `L` with `L Lᵀ = K_G` (`m × r`):
//!
//! ```text
//! log det(σ² I_n + W K_G Wᵀ) = n log σ² + log det(I_n + W L Lᵀ Wᵀ / σ²)
//!                            = n log σ² + log det(I_r + Lᵀ S L / σ²)        (S = WᵀW)
//! ```
//!
//! (equivalently `log det(K_G S + σ² I_m) + (n − m) log σ²`, Yadav et al. 2021, Fact 2 and
//! App. A.2). The operator
//! `H = I_r + Lᵀ S L / σ²` is symmetric positive definite with eigenvalues `≥ 1`, needs only
//! `S` and `L`, and its log determinant is estimated by stochastic Lanczos quadrature with
//! `r`-dimensional Rademacher probes (CG on `H`, tridiagonals from the CG coefficients). So no
//! `n`-dimensional probe (and no second pass over the data) is needed, unlike the paper's
//! method (§5 of the paper runs SLQ on `K̂` itself with `n`-vector probes); the tests
//! validate this `m`-space variant against the dense log determinant.
//!
//! The identity holds for *any* `L` with `L Lᵀ = K_G`, of any number of columns `r`, so
//! `L = √s ⊗_l F_l` with one square root `F_l F_lᵀ = T_l` (`m_l × r_l`, `r = Π_l r_l`) per
//! unit-scale Toeplitz factor, each of one of two kinds
//! ([`LogDetFactorKind`], chosen per factor by
//! [`GsgpOptions::log_det_dense_factor_max`](crate::GsgpOptions::log_det_dense_factor_max)):
//!
//! * **dense eigen factor** (`m_l ≤` that option, default 2048): `F_l = Q_l Λ_l^{1/2}` from
//!   the symmetric eigendecomposition `T_l = Q_l Λ_l Q_lᵀ` (dense, `O(m_l³)` time and
//!   `O(m_l²)` memory once per hyperparameter setting), keeping the eigenvalues above
//!   `m_l · ε · λ_max` (the others are round-off of a numerically singular factor and change
//!   `K_G` only at round-off level). This truncation makes `r_l ≤ m_l`, often much smaller for
//!   smooth kernels on fine grids, and a product costs `O(m_l r_l)` per fibre;
//! * **circulant square root** (larger `m_l`): `T_l = E C_l Eᵀ` for a symmetric circulant
//!   embedding `C_l` of order `M_l ≥ 2m_l − 1` (its first column holds the 1-D kernel at the
//!   circular lags, `E = [I 0]`), and `F_l = E C_l^{1/2}` (`r_l = M_l`) with `C_l^{1/2}` the
//!   symmetric circulant with eigenvalues `√λ` (`λ` = the real FFT of `C_l`'s first column).
//!   Then `F_l F_lᵀ = E C_l Eᵀ = T_l` *exactly*, not approximately: the only change is that
//!   eigenvalues `λ_k ∈ [−M ε λ_max, 0)`, round-off of a semi-definite embedding, are set to 0,
//!   which moves the entries of `T_l` by at most `2 M ε λ_max`. It needs `O(M_l)` memory and
//!   a product costs two real FFTs of length `M_l` per fibre. An embedding that is clearly
//!   indefinite (a kernel that has not decayed over the embedded lags) is lengthened with the
//!   kernel's own values at further lags; if that fails the dense factor is used when it fits
//!   in memory, else the estimate is refused with
//!   [`ModelError::LogDetEmbeddingIndefinite`].
//!   See [`gp_structured::toeplitz_root`] for the embedding and why the kernel's lags are used.
//!
//! **Probe noise.** Both kinds are exact square roots, so they give the same `H` up to an
//! orthogonal change of basis and the same log determinant, but not the same SLQ variance,
//! which grows with the off-diagonal mass of `log H` in the basis the Rademacher probes live
//! in. The eigenbasis of `T_l` nearly diagonalizes `H` when `S` is close to a multiple of the
//! identity (data in every grid cell), so the dense factor's standard error is small; the
//! circulant factor's basis (nodes of the embedding circle) does not, and its standard error
//! is larger when the kernel spans many grid cells. Measured with 30 probes on 20 000 uniform
//! 1-D points, σ² = 0.01: `m = 2048`, `ℓ ≈ 1.7 h`: ±3.4 (dense) against ±31 (circulant);
//! `m = 256`, `ℓ ≈ 0.2 h`: ±4.0 against ±0.9. On SOUND at `m = 8000` the circulant factor's
//! ±56 is still half of SKI's ±108 with `n`-dimensional probes. The dense factor is slower
//! (at `m = 2048` its build takes seconds and each product streams `m_l r_l` entries) but
//! usually needs fewer probes, hence the default threshold.
//!
//! One product with `H` costs one `S` product (with a CSR copy of `S`, exact zeros dropped)
//! and two Kronecker products `L v`, `Lᵀ u` with these factors, mode by mode
//! ([`gp_structured::kronecker::kronecker_matmat`]): independent of `n`. The memory is checked before the factors are built
//! ([`ModelError::LogDetFactorTooLarge`]):
//! `24 m_l²` bytes per dense factor (matrix, eigenvectors, workspace), `64 M_l` per circulant
//! one (its column and half spectrum, FFT buffers and gathered fibres), `16 nnz(S) + 8(m + 1)`
//! for the CSR copy of `S`, and `8 (4t + 8) (r − m)` for the `r`-vectors of the probe solves
//! (`t` probes) beyond the `m`-vectors [`gsgp_memory`](super::gsgp_memory) already counts
//! (nothing when `r ≤ m`, as with dense factors only).

use faer::linalg::matmul::matmul;
use faer::{Accum, ColMut, ColRef, Mat, MatMut, MatRef, Par};
use gp_linalg::{LinearOperator, SparseOperator, TransposeOperator, Transposed};
use gp_structured::kronecker::kronecker_matmat;
use gp_structured::toeplitz_root::{find_embedding, CirculantRoot};
use gp_structured::StencilGram;
use rayon::prelude::*;

use crate::error::{ModelError, Result};
use crate::grid::memory::resolve_limit;
use crate::grid::GridKernel;

/// Bytes per dense-factor entry `m_l²` of the estimate (matrix, eigenvectors, workspace).
const DENSE_BYTES_PER_ENTRY: u128 = 24;

/// Bytes per embedding entry `M_l` of a circulant factor in the estimate: the root's first
/// column and half spectrum (16), pooled FFT buffers and the gathered input and output
/// fibres of the concurrent products (48).
const CIRCULANT_BYTES_PER_ENTRY: u128 = 64;

/// How the square root `F_l` (`F_l F_lᵀ = T_l`) of one Toeplitz factor of `K_G` is
/// represented (see the [module documentation](self)); reported by
/// [`Gsgp::log_det_factor_kinds`](crate::Gsgp::log_det_factor_kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogDetFactorKind {
    /// `Q Λ^{1/2}` from the dense eigendecomposition of `T_l`, eigenvalues at round-off level
    /// dropped.
    DenseEigen {
        /// The order `m_l` of `T_l`.
        size: usize,
        /// The number `r_l ≤ m_l` of eigenvalues kept.
        rank: usize,
        /// Whether `m_l` is above
        /// [`GsgpOptions::log_det_dense_factor_max`](crate::GsgpOptions::log_det_dense_factor_max)
        /// but its circulant embedding stayed indefinite, so the dense factor was used instead.
        fallback: bool,
    },
    /// `E C^{1/2}` from a nonnegative circulant embedding `C` of `T_l`.
    Circulant {
        /// The order `m_l` of `T_l`.
        size: usize,
        /// The embedding length `M_l = r_l ≥ 2m_l − 1`.
        embedding: usize,
    },
}

impl LogDetFactorKind {
    /// The number of columns `r_l` of the factor.
    pub fn rank(&self) -> usize {
        match *self {
            Self::DenseEigen { rank, .. } => rank,
            Self::Circulant { embedding, .. } => embedding,
        }
    }
}

/// What [`LogDetFactor::new`] needs from the options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogDetSettings {
    /// Largest factor order that gets a dense eigen factor.
    pub dense_factor_max: usize,
    /// Probes per estimate (for the memory estimate).
    pub probes: usize,
    /// The memory limit (see [`resolve_limit`]).
    pub memory_limit: Option<u64>,
}

/// One square root `F_l` (`m_l × r_l`).
enum Factor {
    Dense(Mat<f64>),
    Circulant(CirculantRoot),
}

impl LinearOperator for Factor {
    fn nrows(&self) -> usize {
        match self {
            Self::Dense(f) => f.nrows(),
            Self::Circulant(c) => c.nrows(),
        }
    }

    fn ncols(&self) -> usize {
        match self {
            Self::Dense(f) => f.ncols(),
            Self::Circulant(c) => c.ncols(),
        }
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        match self {
            // Sequential: the probe columns already run in parallel (`SymmetrizedOperator`).
            Self::Dense(f) => matmul(out, Accum::Replace, f.as_ref(), x, 1.0, Par::Seq),
            Self::Circulant(c) => c.matmat(x, out),
        }
    }
}

impl TransposeOperator for Factor {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat_transpose(x.as_mat(), out.as_mat_mut());
    }

    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        match self {
            Self::Dense(f) => matmul(out, Accum::Replace, f.transpose(), x, 1.0, Par::Seq),
            Self::Circulant(c) => c.matmat_transpose(x, out),
        }
    }
}

/// The per-factor decision before anything large is built.
enum Plan {
    Dense { fallback: bool },
    Circulant { spectrum: Vec<f64> },
}

/// The factor `L = ⊗_l F_l` (`F_l` is `m_l × r_l`, the output scale folded into `F_0`), and
/// `S` in CSR form (exact zeros dropped), whose products are much cheaper than the
/// stencil's on small grids where most nodes are near the boundary.
pub(crate) struct LogDetFactor {
    factors: Vec<Factor>,
    kinds: Vec<LogDetFactorKind>,
    gram_csr: SparseOperator,
}

impl LogDetFactor {
    /// The factor of `grid_kernel` (see the [module documentation](self)) and the CSR copy
    /// of `gram`, after checking that the factors, the probe vectors and the copy fit in the
    /// memory limit. `lag(l, j)`, when given, is the unit-scale 1-D kernel of dimension `l`
    /// at `j` grid spacings (also `j ≥ m_l`), used to lengthen indefinite circulant
    /// embeddings.
    pub(crate) fn new(
        grid_kernel: &GridKernel,
        gram: &StencilGram,
        settings: &LogDetSettings,
        lag: Option<&dyn Fn(usize, usize) -> f64>,
    ) -> Result<Self> {
        let sizes: Vec<usize> = (0..)
            .map_while(|l| grid_kernel.first_column(l).map(<[f64]>::len))
            .collect();
        let csr_bytes = (gram.nnz() as u128)
            .saturating_mul(16)
            .saturating_add(8 * (gram.order() as u128 + 1));
        let (limit_bytes, limit_source) =
            resolve_limit(settings.memory_limit, "GsgpOptions::grid.memory_limit");
        let probe_vectors = 4u128
            .saturating_mul(settings.probes as u128)
            .saturating_add(8);
        // Longest embedding worth trying: its own entries and (for d = 1) its probe vectors.
        let max_len = (limit_bytes as u128
            / CIRCULANT_BYTES_PER_ENTRY.saturating_add(probe_vectors.saturating_mul(8)))
        .min(usize::MAX as u128) as usize;

        let mut plans = Vec::with_capacity(sizes.len());
        for (l, &ml) in sizes.iter().enumerate() {
            if ml <= settings.dense_factor_max {
                plans.push(Plan::Dense { fallback: false });
                continue;
            }
            let c = grid_kernel.first_column(l).unwrap_or(&[]);
            let axis_lag = lag.map(|f| move |j: usize| f(l, j));
            let axis_lag_ref = axis_lag.as_ref().map(|f| f as &dyn Fn(usize) -> f64);
            let search = find_embedding(c, axis_lag_ref, max_len)?;
            match search.spectrum {
                Some(spectrum) => plans.push(Plan::Circulant { spectrum }),
                None => {
                    let dense_bytes = DENSE_BYTES_PER_ENTRY
                        .saturating_mul((ml as u128).saturating_mul(ml as u128));
                    if dense_bytes.saturating_add(csr_bytes) > limit_bytes as u128 {
                        return Err(ModelError::LogDetEmbeddingIndefinite {
                            dim: l,
                            size: ml,
                            embedding: search.length,
                            min_eigenvalue: search.min_eigenvalue,
                            max_eigenvalue: search.max_eigenvalue,
                            dense_bytes,
                            limit_bytes,
                            limit_source,
                        });
                    }
                    plans.push(Plan::Dense { fallback: true });
                }
            }
        }

        let m = sizes
            .iter()
            .fold(1u128, |a, &s| a.saturating_mul(s as u128));
        let mut r_bound = 1u128;
        let mut factor_bytes = 0u128;
        for (plan, &ml) in plans.iter().zip(&sizes) {
            let (cols, bytes) = match plan {
                Plan::Dense { .. } => (
                    ml as u128,
                    DENSE_BYTES_PER_ENTRY.saturating_mul((ml as u128).saturating_mul(ml as u128)),
                ),
                Plan::Circulant { spectrum } => (
                    spectrum.len() as u128,
                    CIRCULANT_BYTES_PER_ENTRY.saturating_mul(spectrum.len() as u128),
                ),
            };
            r_bound = r_bound.saturating_mul(cols);
            factor_bytes = factor_bytes.saturating_add(bytes);
        }
        let probe_bytes = r_bound
            .saturating_sub(m)
            .saturating_mul(8)
            .saturating_mul(probe_vectors);
        let estimated_bytes = factor_bytes
            .saturating_add(probe_bytes)
            .saturating_add(csr_bytes);
        if estimated_bytes > limit_bytes as u128 {
            return Err(ModelError::LogDetFactorTooLarge {
                sizes,
                estimated_bytes,
                limit_bytes,
                limit_source,
            });
        }

        let mut factors = Vec::with_capacity(sizes.len());
        let mut kinds = Vec::with_capacity(sizes.len());
        for (l, (&ml, plan)) in sizes.iter().zip(plans).enumerate() {
            let scale = if l == 0 { grid_kernel.scale() } else { 1.0 };
            match plan {
                Plan::Dense { fallback } => {
                    let c = grid_kernel.first_column(l).unwrap_or(&[]);
                    let f = dense_factor(c, scale.sqrt())?;
                    kinds.push(LogDetFactorKind::DenseEigen {
                        size: ml,
                        rank: f.ncols(),
                        fallback,
                    });
                    factors.push(Factor::Dense(f));
                }
                Plan::Circulant { spectrum } => {
                    let root = CirculantRoot::new(ml, &spectrum, scale)?;
                    kinds.push(LogDetFactorKind::Circulant {
                        size: ml,
                        embedding: root.embedding_len(),
                    });
                    factors.push(Factor::Circulant(root));
                }
            }
        }
        let gram_csr = SparseOperator::new(gram.to_csr()?)?;
        Ok(Self {
            factors,
            kinds,
            gram_csr,
        })
    }

    /// The order `r = Π_l r_l` of `H`.
    pub(crate) fn rank(&self) -> usize {
        self.factors.iter().map(Factor::ncols).product()
    }

    /// The kind of each factor.
    pub(crate) fn kinds(&self) -> &[LogDetFactorKind] {
        &self.kinds
    }

    /// `L v` (`transpose = false`, `v ∈ ℝ^r`) or `Lᵀ v` (`v ∈ ℝ^m`), by Kronecker mode
    /// products.
    fn apply(&self, v: &[f64], transpose: bool) -> Vec<f64> {
        let transposed: Vec<Transposed<'_, Factor>> =
            self.factors.iter().map(Transposed::new).collect();
        let ops: Vec<&dyn LinearOperator> = if transpose {
            transposed
                .iter()
                .map(|t| t as &dyn LinearOperator)
                .collect()
        } else {
            self.factors
                .iter()
                .map(|f| f as &dyn LinearOperator)
                .collect()
        };
        let rows = ops.iter().map(|a| a.nrows()).product();
        let mut out = vec![0.0; rows];
        // The shapes agree by construction (`v` has the factors' column count), so the
        // checked product cannot fail; an empty result would only hide a logic error.
        let done = kronecker_matmat(
            &ops,
            MatRef::from_column_major_slice(v, v.len(), 1),
            MatMut::from_column_major_slice_mut(&mut out, rows, 1),
        );
        debug_assert!(done.is_ok(), "{done:?}");
        out
    }
}

/// `√scale · Q Λ^{1/2}` from the dense eigendecomposition of the Toeplitz matrix with first
/// column `c`, eigenvalues `≤ m ε λ_max` dropped.
fn dense_factor(c: &[f64], sqrt_scale: f64) -> Result<Mat<f64>> {
    let ml = c.len();
    let t = Mat::from_fn(ml, ml, |i, j| c[i.abs_diff(j)]);
    let evd = gp_linalg::eigen::self_adjoint_eigen(t.as_ref())?;
    let values = evd.S().column_vector();
    let vectors = evd.U();
    let max = (0..ml).map(|i| values[i]).fold(0.0f64, f64::max);
    let floor = ml as f64 * f64::EPSILON * max;
    let kept: Vec<usize> = (0..ml).filter(|&i| values[i] > floor).collect();
    Ok(Mat::from_fn(ml, kept.len(), |i, k| {
        vectors[(i, kept[k])] * (values[kept[k]].sqrt() * sqrt_scale)
    }))
}

/// `H = I_r + Lᵀ S L / σ²` (symmetric positive definite, eigenvalues `≥ 1`).
pub(crate) struct SymmetrizedOperator<'a> {
    pub(crate) factor: &'a LogDetFactor,
    pub(crate) noise_variance: f64,
}

impl LinearOperator for SymmetrizedOperator<'_> {
    fn nrows(&self) -> usize {
        self.factor.rank()
    }

    fn ncols(&self) -> usize {
        self.factor.rank()
    }

    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        // Columns in parallel (one product with `S` is cheap and serial for small grids).
        let cols: Vec<Vec<f64>> = (0..x.ncols())
            .into_par_iter()
            .map(|j| {
                let mut o = vec![0.0; self.nrows()];
                self.matvec(x.col(j), ColMut::from_slice_mut(&mut o));
                o
            })
            .collect();
        for (j, c) in cols.iter().enumerate() {
            for (i, v) in c.iter().enumerate() {
                out[(i, j)] = *v;
            }
        }
    }

    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let v: Vec<f64> = x.iter().copied().collect();
        let lv = self.factor.apply(&v, false);
        let mut slv = vec![0.0; lv.len()];
        self.factor
            .gram_csr
            .matvec(ColRef::from_slice(&lv), ColMut::from_slice_mut(&mut slv));
        let lt = self.factor.apply(&slv, true);
        let inv = 1.0 / self.noise_variance;
        for (i, (vi, li)) in v.iter().zip(&lt).enumerate() {
            out[i] = vi + inv * li;
        }
    }
}
