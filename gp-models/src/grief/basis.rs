//! The GP-GRIEF basis `Φ = K_XU Q S_pᵀ Λ_p^{-1/2}` (Evans & Nair 2018, §3–4): the `p`
//! eigenfunctions of the Nyström kernel on a Cartesian grid with the largest eigenvalues,
//! selected by Algorithm 1 and evaluated by Theorem 2 without forming the `m = Π m̄_i` grid.
//!
//! **Ordering.** Dimension 1 is the outermost Kronecker factor (grid point `(a_1, …, a_d)` has
//! global index `Σ_i a_i Π_{j>i} m̄_j`). Column `j` of `Φ` belongs to the `j`-th largest
//! eigenvalue `λ_{p,j} = Π_i λ⁽ⁱ⁾[idx_{j,i}]` of `K_UU`; exactly tied eigenvalues are ordered by
//! increasing multi-index (lexicographic), which is also the rule that decides which of them
//! are kept at the cut ([`gp_structured::top_eigen`]). Rows of `Φ` are the rows of `X`.
//!
//! **Product form.** Column `j` is the tensor product of 1-D scaled eigenfunctions,
//! `Φ[:, j] = ⊙_i F⁽ⁱ⁾[:, idx_{j,i}]` with `F⁽ⁱ⁾ = K_XU⁽ⁱ⁾ Q⁽ⁱ⁾ Λ⁽ⁱ⁾^{-1/2}` (Theorem 2 with the
//! eigenvalue scaling distributed over the factors, computed by
//! [`gp_structured::khatri_rao_kronecker`]). Each `|F⁽ⁱ⁾[r, a]| ≤ 1` because
//! `Σ_a F⁽ⁱ⁾[r, a]² = K_xU K_UU⁻¹ K_Ux ≤ k(x, x) = 1`, so the product cannot overflow for
//! any `d` or `m`; it can only underflow towards 0. From [`LOG_FORM_MIN_DIMS`] dimensions on,
//! [`GriefBasis::phi_block`] uses the log-domain form (sum of `ln |F|`, product of signs,
//! one `exp` at the end), which keeps full relative precision until the final value.
//! Neither `m` nor `λ_p` is ever formed (only `ln m` and `ln λ_p`), so a grid of `10^300`
//! points needs no special case.
//!
//! **Signal variance** is not part of the basis: a kernel with variance `s_f²` has basis
//! `s_f Φ`, i.e. weights `w = s_f² 1` on this `Φ`.
//!
//! **Selection and derivatives.** `idx` is fixed when the basis is built;
//! [`GriefBasis::phi_derivatives_block`] differentiates with respect to `log ℓ_i` with `idx`
//! frozen. The selection is piecewise constant in `ℓ`, so anything built on `Φ` jumps where
//! the top-`p` set changes; rebuild the basis between optimisation steps, not inside one.

use faer::linalg::matmul::matmul;
use faer::{Accum, ColRef, Mat, MatRef, Par};
use gp_linalg::validate::{check_finite_col, check_finite_mat};
use gp_structured::khatri_rao_kronecker::{
    khatri_rao_kronecker_columns, khatri_rao_kronecker_columns_log,
};
use gp_structured::{top_eigenvalues, RowKhatriRao, TopEigenOptions};

use super::axis::{check_lengthscale, product, AxisBasis, EIGENVALUE_FLOOR};
use super::grid::InducingGrid;
use crate::error::{ModelError, Result};
use crate::grief::stats::GriefStats;

/// From this many dimensions on, [`GriefBasis::phi_block`] uses the log-domain form.
pub const LOG_FORM_MIN_DIMS: usize = 30;

/// Options of [`GriefBasis::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GriefBasisOptions {
    /// When the requested `p` exceeds the number of grid points `m`: `false` (default) makes
    /// it an error, `true` keeps all `m` eigenfunctions (the reference code's behaviour;
    /// [`GriefBasis::len`] reports the `p' = min(p, m)` actually kept).
    pub cap_to_grid: bool,
}

/// The GP-GRIEF basis (Evans & Nair 2018, §3–4): a grid, one length scale per dimension, the
/// per-axis eigendecompositions and the Algorithm-1 selection of the `p'` largest eigenvalues
/// of `K_UU`. See the [module documentation](self) for the ordering conventions.
#[derive(Debug, Clone)]
pub struct GriefBasis {
    grid: InducingGrid,
    axes: Vec<AxisBasis>,
    /// `ln λ_p`, descending.
    log_values: Vec<f64>,
    /// Row-major `p' × d` multi-indices.
    indices: Vec<usize>,
    /// Per axis: the distinct selected 1-D indices, ascending.
    uniq: Vec<Vec<usize>>,
    /// Row-major `p' × d`: position of `indices[j, i]` in `uniq[i]`.
    positions: Vec<usize>,
    /// Per axis: `G[:, uniq]` and, on demand, `dG[:, uniq]`.
    scaled: Vec<Mat<f64>>,
}

impl GriefBasis {
    /// Builds the basis: eigendecomposes each 1-D SE kernel matrix (unit variance, length
    /// scale `lengthscales[i]`), then selects the `p` largest eigenvalues of their Kronecker
    /// product by Algorithm 1 (Evans & Nair 2018, §4).
    ///
    /// Errors ([`ModelError::InvalidOption`] unless noted): `p = 0`; `p > m` when
    /// `options.cap_to_grid` is `false`; a length scale that is not finite and `> 0`; a
    /// number of length scales other than `d` ([`ModelError::LengthMismatch`]).
    pub fn new(
        grid: InducingGrid,
        lengthscales: &[f64],
        p: usize,
        options: &GriefBasisOptions,
    ) -> Result<Self> {
        check_lengthscales(grid.dims(), lengthscales)?;
        if p == 0 {
            return Err(ModelError::InvalidOption {
                name: "p",
                reason: "the GRIEF basis needs at least one eigenfunction; use p ≥ 1 (the paper \
                         uses p = min(1000, 10^⌊log10 n⌋))"
                    .to_string(),
            });
        }
        if let Some(m) = grid.size() {
            if p > m && !options.cap_to_grid {
                return Err(ModelError::InvalidOption {
                    name: "p",
                    reason: format!(
                        "{p} eigenfunctions requested but the grid has only {m} points \
                         (sizes {:?}), so K_UU has only {m} eigenvalues; use p ≤ {m}, more grid \
                         points, or GriefBasisOptions::cap_to_grid to keep all {m}",
                        grid.sizes()
                    ),
                });
            }
        }
        let axes = axis_bases(&grid, lengthscales)?;
        let spectra: Vec<&[f64]> = axes.iter().map(AxisBasis::eigenvalues).collect();
        let top = top_eigenvalues(
            &spectra,
            p,
            &TopEigenOptions {
                relative_floor: EIGENVALUE_FLOOR,
            },
        )?;
        Self::from_selection(
            grid,
            axes,
            top.indices().to_vec(),
            top.log_values().to_vec(),
        )
    }

    /// The basis at new length scales with this basis' selection kept: the same multi-indices
    /// (the `j`-th largest 1-D eigenpair of each axis), not re-selected by Algorithm 1, so
    /// that `Φ` is smooth in the length scales (the selection policy of spec `grief.md` P3:
    /// the log marginal likelihood jumps only where the selection is redone). The columns
    /// keep their order, so [`log_eigenvalues`](Self::log_eigenvalues) need no longer be
    /// descending, nor the `p'` largest at the new length scales.
    ///
    /// Errors: as [`new`](Self::new) for the length scales.
    pub fn with_lengthscales_frozen(&self, lengthscales: &[f64]) -> Result<Self> {
        Self::with_indices(self.grid.clone(), lengthscales, self.indices.clone())
    }

    /// The basis on `grid` at `lengthscales` with a given selection: `indices` holds the
    /// multi-indices of the eigenfunctions, row-major `p' × d` (entry `(j, i)` the position
    /// of the 1-D eigenpair of axis `i` in descending order), as [`indices`](Self::indices)
    /// returns them. For a basis saved with its selection, or kept across length scales
    /// ([`with_lengthscales_frozen`](Self::with_lengthscales_frozen)).
    ///
    /// Errors: as [`new`](Self::new) for the length scales; [`ModelError::InvalidOption`]
    /// (`indices`) for an empty selection, a length that is not a multiple of `d`, an index
    /// beyond its axis or a repeated multi-index.
    pub fn with_indices(
        grid: InducingGrid,
        lengthscales: &[f64],
        indices: Vec<usize>,
    ) -> Result<Self> {
        let axes = axis_bases(&grid, lengthscales)?;
        let d = axes.len();
        let bad = |reason: String| ModelError::InvalidOption {
            name: "indices",
            reason,
        };
        if indices.is_empty() || !indices.len().is_multiple_of(d) {
            return Err(bad(format!(
                "{} entries do not make a non-empty list of multi-indices of {d} entries each",
                indices.len()
            )));
        }
        for row in indices.chunks(d) {
            if let Some((i, &k)) = row.iter().enumerate().find(|&(i, &k)| k >= axes[i].len()) {
                return Err(bad(format!(
                    "multi-index {row:?} asks for eigenpair {k} of axis {i}, which has {}",
                    axes[i].len()
                )));
            }
        }
        let mut rows: Vec<&[usize]> = indices.chunks(d).collect();
        rows.sort_unstable();
        if let Some(w) = rows.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(format!(
                "multi-index {:?} is selected twice; each eigenfunction once",
                w[0]
            )));
        }
        let log_values = indices
            .chunks(d)
            .map(|idx| {
                idx.iter()
                    .zip(&axes)
                    .map(|(&k, axis)| axis.eigenvalues()[k].ln())
                    .sum()
            })
            .collect();
        Self::from_selection(grid, axes, indices, log_values)
    }

    /// The basis of the axes' decompositions and a selection (`p' × d` multi-indices,
    /// row-major, with their `ln λ`).
    fn from_selection(
        grid: InducingGrid,
        axes: Vec<AxisBasis>,
        indices: Vec<usize>,
        log_values: Vec<f64>,
    ) -> Result<Self> {
        let d = axes.len();
        let pp = log_values.len();
        let mut uniq = Vec::with_capacity(d);
        let mut positions = vec![0; pp * d];
        let mut scaled = Vec::with_capacity(d);
        for (i, axis) in axes.iter().enumerate() {
            let mut u: Vec<usize> = (0..pp).map(|j| indices[j * d + i]).collect();
            u.sort_unstable();
            u.dedup();
            for j in 0..pp {
                positions[j * d + i] = u.partition_point(|&v| v < indices[j * d + i]);
            }
            scaled.push(axis.select(axis.scaled_eigenvectors(), &u)?);
            uniq.push(u);
        }
        Ok(Self {
            grid,
            axes,
            log_values,
            indices,
            uniq,
            positions,
            scaled,
        })
    }

    /// The number of eigenfunctions kept, `p' = min(p, m)`.
    pub fn len(&self) -> usize {
        self.log_values.len()
    }

    /// Always `false` (`p ≥ 1`).
    pub fn is_empty(&self) -> bool {
        self.log_values.is_empty()
    }

    /// The number of dimensions `d`.
    pub fn dims(&self) -> usize {
        self.axes.len()
    }

    /// The inducing grid.
    pub fn grid(&self) -> &InducingGrid {
        &self.grid
    }

    /// The length scales, one per dimension.
    pub fn lengthscales(&self) -> Vec<f64> {
        self.axes.iter().map(AxisBasis::lengthscale).collect()
    }

    /// The decomposition of axis `i`, or `None` if `i ≥ d`.
    pub fn axis(&self, i: usize) -> Option<&AxisBasis> {
        self.axes.get(i)
    }

    /// `ln λ_p`: the logarithms of the `p'` selected eigenvalues of `K_UU`, descending.
    pub fn log_eigenvalues(&self) -> &[f64] {
        &self.log_values
    }

    /// The multi-indices of the selected eigenvalues, row-major `p' × d`.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The multi-index of column `j`, or `None` if `j ≥ p'`.
    pub fn index(&self, j: usize) -> Option<&[usize]> {
        let d = self.dims();
        (j < self.len()).then(|| &self.indices[j * d..(j + 1) * d])
    }

    /// `ln m = Σ ln m̄_i`.
    pub fn log_grid_size(&self) -> f64 {
        self.grid.log_size()
    }

    /// How many 1-D eigenvalues (over all axes) were raised to the floor.
    pub fn floored(&self) -> usize {
        self.axes.iter().map(AxisBasis::floored).sum()
    }

    /// `Φ` at the rows of `x` (`b × p'`): the product form below [`LOG_FORM_MIN_DIMS`]
    /// dimensions, the log-domain form from there on.
    ///
    /// Errors: `x` without `d` columns ([`ModelError::LengthMismatch`]) or with a non-finite
    /// entry ([`ModelError::NonFinite`]).
    pub fn phi_block(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        if self.dims() >= LOG_FORM_MIN_DIMS {
            self.phi_block_log(x)
        } else {
            self.phi_block_product(x)
        }
    }

    /// `Φ` at the rows of `x` by the product of the `d` factors `F⁽ⁱ⁾` (Theorem 2).
    ///
    /// Errors: as [`phi_block`](Self::phi_block).
    pub fn phi_block_product(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check_points(x)?;
        if x.nrows() == 0 {
            return Ok(Mat::zeros(0, self.len()));
        }
        let (kr, q, sel) = self.theorem2_parts(x)?;
        Ok(khatri_rao_kronecker_columns(&kr, &q, &sel)?)
    }

    /// `Φ` at the rows of `x` in the log domain: `sign · exp(Σ_i ln |F⁽ⁱ⁾|)` (Theorem 2, the
    /// paper's numerically stable form).
    ///
    /// Errors: as [`phi_block`](Self::phi_block).
    pub fn phi_block_log(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.check_points(x)?;
        if x.nrows() == 0 {
            return Ok(Mat::zeros(0, self.len()));
        }
        let (kr, q, sel) = self.theorem2_parts(x)?;
        Ok(khatri_rao_kronecker_columns_log(&kr, &q, &sel)?.to_values())
    }

    /// `dΦ / d log ℓ_i` at the rows of `x` for every axis `i` (`d` matrices of `b × p'`), with
    /// the selection frozen: `dΦ[:, j] = Π_{k≠i} F⁽ᵏ⁾[:, idx_{jk}] · dF⁽ⁱ⁾[:, idx_{ji}]`, by
    /// prefix and suffix products (no division by `F`).
    ///
    /// This holds `d` blocks of `b × p'`; when only their contraction with one matrix is
    /// needed (a gradient), [`contract_derivatives`](Self::contract_derivatives) forms the
    /// same columns one at a time instead.
    ///
    /// Errors: as [`phi_block`](Self::phi_block).
    pub fn phi_derivatives_block(&self, x: MatRef<'_, f64>) -> Result<Vec<Mat<f64>>> {
        let (b, d, pp) = (x.nrows(), self.dims(), self.len());
        let mut out: Vec<Mat<f64>> = (0..d).map(|_| Mat::zeros(b, pp)).collect();
        self.for_each_derivative_column(x, |i, j, column| {
            out[i].col_as_slice_mut(j).copy_from_slice(column);
        })?;
        Ok(out)
    }

    /// `⟨H, dΦ / d log ℓ_i⟩ = Σ_{r,j} H[r, j] · dΦ[r, j] / d log ℓ_i` for every axis `i`, at
    /// the rows of `x` (`b × d`) and for `H` of `b × p'`, with the selection frozen: the
    /// chain rule from a gradient with respect to the basis block (such as
    /// [`ThetaGradient::basis_gradient_into`](crate::grief::ThetaGradient::basis_gradient_into))
    /// to the length scales. Each derivative column is formed once and consumed at once
    /// (`O(b p' d)` flops, `O(b d)` memory), so the `d` blocks of
    /// [`phi_derivatives_block`](Self::phi_derivatives_block) are never held.
    ///
    /// Errors: as [`phi_block`](Self::phi_block), and [`ModelError::LengthMismatch`] if `H`
    /// is not `b × p'`.
    pub fn contract_derivatives(&self, x: MatRef<'_, f64>, h: MatRef<'_, f64>) -> Result<Vec<f64>> {
        if h.nrows() != x.nrows() || h.ncols() != self.len() {
            return Err(ModelError::LengthMismatch {
                context: "entries of the matrix contracted with dΦ (rows of X × eigenfunctions)",
                expected: x.nrows() * self.len(),
                found: h.nrows() * h.ncols(),
            });
        }
        let mut grad = vec![0.0; self.dims()];
        self.for_each_derivative_column(x, |i, j, column| {
            grad[i] += h.col(j).iter().zip(column).map(|(a, b)| a * b).sum::<f64>();
        })?;
        Ok(grad)
    }

    /// Calls `visit(i, j, dΦ[:, j] / d log ℓ_i)` for every column `j` and axis `i` at the
    /// (checked) rows of `x`: the prefix and suffix products of
    /// [`phi_derivatives_block`](Self::phi_derivatives_block), one column in a reused buffer.
    fn for_each_derivative_column(
        &self,
        x: MatRef<'_, f64>,
        mut visit: impl FnMut(usize, usize, &[f64]),
    ) -> Result<()> {
        self.check_points(x)?;
        let (b, d, pp) = (x.nrows(), self.dims(), self.len());
        let mut f = Vec::with_capacity(d);
        let mut df = Vec::with_capacity(d);
        for (i, axis) in self.axes.iter().enumerate() {
            let (kxu, dkxu) = axis.cross_covariance_and_derivative(x.col(i));
            f.push(product(kxu.as_ref(), self.scaled[i].as_ref()));
            let dg = axis.select(axis.scaled_eigenvector_derivatives(), &self.uniq[i])?;
            let mut dfi = product(kxu.as_ref(), dg.as_ref());
            matmul(
                dfi.as_mut(),
                Accum::Add,
                dkxu.as_ref(),
                self.scaled[i].as_ref(),
                1.0,
                Par::Seq,
            );
            df.push(dfi);
        }
        // prefix[k] = Π_{k' < k} F⁽ᵏ'⁾[:, idx_{jk'}] (column k of a b × d buffer); the suffix
        // product runs backwards.
        let mut prefix = Mat::<f64>::ones(b, d);
        let mut suffix = vec![0.0; b];
        let mut column = vec![0.0; b];
        for j in 0..pp {
            let pos = &self.positions[j * d..(j + 1) * d];
            for k in 1..d {
                let (done, rest) = prefix.as_mut().split_at_col_mut(k);
                let prev = done.as_ref().col(k - 1);
                let factor = f[k - 1].col(pos[k - 1]);
                rest.col_mut(0)
                    .iter_mut()
                    .zip(prev.iter().zip(factor.iter()))
                    .for_each(|(o, (a, c))| *o = a * c);
            }
            suffix.fill(1.0);
            for i in (0..d).rev() {
                let pre = prefix.col_as_slice(i);
                let dfi = df[i].col_as_slice(pos[i]);
                for ((o, (a, c)), v) in column.iter_mut().zip(pre.iter().zip(&suffix)).zip(dfi) {
                    *o = a * c * v;
                }
                visit(i, j, &column);
                let fi = f[i].col_as_slice(pos[i]);
                suffix.iter_mut().zip(fi).for_each(|(s, v)| *s *= v);
            }
        }
        Ok(())
    }

    /// The sufficient statistics `ΦᵀΦ`, `Φᵀy`, `yᵀy`, `n` of the training data, streamed over
    /// blocks of `block_rows` rows so that `Φ` is never held whole (`O(block_rows · p')`
    /// memory besides `A`).
    ///
    /// Errors: no points ([`ModelError::EmptyData`]), `x` without `d` columns or `y` of another
    /// length ([`ModelError::LengthMismatch`]), non-finite data ([`ModelError::NonFinite`]),
    /// `block_rows = 0` ([`ModelError::InvalidOption`]).
    pub fn stats(
        &self,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        block_rows: usize,
    ) -> Result<GriefStats> {
        let n = x.nrows();
        if n == 0 {
            return Err(ModelError::EmptyData {
                context: "GRIEF sufficient statistics",
                n,
                d: x.ncols(),
            });
        }
        if y.nrows() != n {
            return Err(ModelError::LengthMismatch {
                context: "GRIEF training targets (one per row of X)",
                expected: n,
                found: y.nrows(),
            });
        }
        if block_rows == 0 {
            return Err(ModelError::InvalidOption {
                name: "block_rows",
                reason: "the row blocks of the streamed statistics need at least one row"
                    .to_string(),
            });
        }
        self.check_points(x)?;
        check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
        let mut stats = GriefStats::new(self.len());
        let mut start = 0;
        while start < n {
            let rows = block_rows.min(n - start);
            let phi = self.phi_block(x.subrows(start, rows))?;
            stats.accumulate_lower(phi.as_ref(), y.subrows(start, rows))?;
            start += rows;
        }
        gp_linalg::gram::mirror_lower(stats.a.as_mut())?;
        Ok(stats)
    }

    /// The inputs of Theorem 2 for checked points `x`: the Khatri–Rao factors `K_XU⁽ⁱ⁾`, the
    /// Kronecker factors `G⁽ⁱ⁾ = Q⁽ⁱ⁾ Λ⁽ⁱ⁾^{-1/2}` and the selection.
    #[allow(clippy::type_complexity)]
    fn theorem2_parts(
        &self,
        x: MatRef<'_, f64>,
    ) -> Result<(RowKhatriRao, Vec<MatRef<'_, f64>>, Vec<&[usize]>)> {
        let factors: Vec<Mat<f64>> = self
            .axes
            .iter()
            .enumerate()
            .map(|(i, a)| a.cross_covariance(x.col(i)))
            .collect();
        let kr = RowKhatriRao::new(factors)?;
        let q = self
            .axes
            .iter()
            .map(AxisBasis::scaled_eigenvectors)
            .collect();
        let sel = self.indices.chunks(self.dims()).collect();
        Ok((kr, q, sel))
    }

    /// `x` must have `d` columns and finite entries.
    fn check_points(&self, x: MatRef<'_, f64>) -> Result<()> {
        if x.ncols() != self.dims() {
            return Err(ModelError::LengthMismatch {
                context: "columns of the points given to the GRIEF basis (one per grid dimension)",
                expected: self.dims(),
                found: x.ncols(),
            });
        }
        check_finite_mat(x, "the points given to the GRIEF basis")
            .map_err(ModelError::from_finite_check)
    }
}

/// The 1-D decompositions of every axis of `grid` at `lengthscales` (one per axis, each
/// finite and positive).
fn axis_bases(grid: &InducingGrid, lengthscales: &[f64]) -> Result<Vec<AxisBasis>> {
    check_lengthscales(grid.dims(), lengthscales)?;
    grid.axes()
        .iter()
        .zip(lengthscales)
        .map(|(points, &l)| AxisBasis::new(points, l))
        .collect()
}

/// `d` length scales, each finite and positive.
fn check_lengthscales(d: usize, lengthscales: &[f64]) -> Result<()> {
    if lengthscales.len() != d {
        return Err(ModelError::LengthMismatch {
            context: "GRIEF length scales (one per grid dimension)",
            expected: d,
            found: lengthscales.len(),
        });
    }
    for (i, &l) in lengthscales.iter().enumerate() {
        check_lengthscale(l, Some(i))?;
    }
    Ok(())
}
