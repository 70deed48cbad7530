//! Symmetric Toeplitz operators applied by circulant embedding and real FFTs, and their
//! restriction to a subset of rows and columns (observations with gaps on a regular grid).
//!
//! A symmetric Toeplitz matrix `T[i, j] = c[|i − j|]` of order `m` is the leading `m × m`
//! block of the symmetric circulant of length `L` whose first column is
//! `[c₀, c₁, …, c_{m−1}, 0, …, 0, c_{m−1}, …, c₁]`, exact for every `L ≥ 2m − 1`
//! ([`circulant_embedding_length`] picks the smallest 5-smooth one). Then
//! `T x = (IFFT(λ ⊙ FFT([x; 0])))[..m]` with `λ = FFT(embedding)` real, computed once.
//! One product costs one forward and one inverse real FFT of length `L` plus `O(L)`.

use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::{check_finite_slice, check_shape};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::fft::{
    circulant_embedding_length, column_chunks, copy_col_into, copy_into_col, FftBuffers, Pool,
    RealFftPair,
};

/// Reusable buffers for [`SymmetricToeplitz::apply_with_workspace`] and
/// [`RestrictedToeplitz::apply_with_workspace`]: the padded signal, its half spectrum and the
/// FFT scratch. Make one with [`SymmetricToeplitz::workspace`]; it fits every operator with
/// the same embedding length.
#[derive(Debug, Clone)]
pub struct ToeplitzWorkspace {
    buf: FftBuffers,
}

impl ToeplitzWorkspace {
    /// The embedding length this workspace was made for.
    pub fn embedding_length(&self) -> usize {
        self.buf.time.len()
    }
}

/// A symmetric Toeplitz matrix `T[i, j] = c[|i − j|]`, given by its first column `c`, as a
/// [`LinearOperator`] applied in `O(m log m)` through a circulant embedding.
///
/// The embedding spectrum and the FFT plans are computed once in the constructor. Products
/// through [`apply_with_workspace`](Self::apply_with_workspace) allocate nothing; the
/// [`LinearOperator`] products take a workspace from an internal pool (thread-safe, one
/// workspace per concurrent caller, reused across calls), so they allocate nothing after
/// the first call either.
///
/// Accuracy: the FFT round-off of one product is at most about `ε · log₂L · ‖c‖₁ · ‖x‖₂` entrywise
/// (`ε` the machine epsilon), independent of the conditioning of `T`.
///
/// ```
/// use faer::col;
/// use gp_structured::toeplitz::SymmetricToeplitz;
/// use gp_structured::LinearOperator;
///
/// let t = SymmetricToeplitz::new(&[2.0, 1.0, 0.5])?;
/// let y = t.apply(col![1.0, 0.0, 0.0].as_ref())?;
/// assert!((y[0] - 2.0).abs() < 1e-14 && (y[1] - 1.0).abs() < 1e-14 && (y[2] - 0.5).abs() < 1e-14);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
pub struct SymmetricToeplitz {
    first_column: Vec<f64>,
    /// Real eigenvalues of the circulant embedding, bins `0..=L/2`, divided by `L` (the
    /// normalization of the inverse FFT folded in).
    scaled_spectrum: Vec<f64>,
    fft: RealFftPair,
    pool: Pool<ToeplitzWorkspace>,
    /// The matrix itself for orders up to [`DENSE_BLOCK_MAX_ORDER`]: blocks of columns are
    /// then multiplied by one GEMM, which beats one FFT pair per column at these sizes.
    dense: Option<Mat<f64>>,
}

/// Largest order for which a [`SymmetricToeplitz`] also keeps its dense matrix (at most
/// 512 KiB) and multiplies blocks of two or more columns by GEMM. Kronecker products apply
/// each factor to blocks of `m / m_l` fibres, where for small factors (the usual 1-D grids
/// of 10–200 points) one GEMM is several times faster than `m / m_l` FFT pairs of length
/// ~2 m_l.
pub const DENSE_BLOCK_MAX_ORDER: usize = 256;

impl std::fmt::Debug for SymmetricToeplitz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymmetricToeplitz")
            .field("dim", &self.dim())
            .field("embedding_length", &self.embedding_length())
            .finish()
    }
}

impl Clone for SymmetricToeplitz {
    fn clone(&self) -> Self {
        Self {
            first_column: self.first_column.clone(),
            scaled_spectrum: self.scaled_spectrum.clone(),
            fft: self.fft.clone(),
            pool: Pool::new(),
            dense: self.dense.clone(),
        }
    }
}

impl SymmetricToeplitz {
    /// The symmetric Toeplitz matrix with first column `first_column`, embedded in a circulant
    /// of the smallest 5-smooth length `L ≥ 2m − 1`.
    ///
    /// Errors: an empty column, a non-finite entry, or an `m` whose embedding length overflows.
    pub fn new(first_column: &[f64]) -> Result<Self> {
        let len = circulant_embedding_length(first_column.len()).ok_or_else(|| {
            StructuredError::InvalidArgument {
                name: "first_column",
                reason: format!(
                    "a Toeplitz matrix of order {} is too large to embed",
                    first_column.len()
                ),
            }
        })?;
        Self::with_embedding_length(first_column, len)
    }

    /// As [`new`](Self::new) with an explicit embedding length `len ≥ 2m − 1` (any such
    /// length is exact; 5-smooth lengths are fastest).
    pub fn with_embedding_length(first_column: &[f64], len: usize) -> Result<Self> {
        let m = first_column.len();
        if m == 0 {
            return Err(StructuredError::InvalidArgument {
                name: "first_column",
                reason: "a Toeplitz matrix needs at least one entry".to_string(),
            });
        }
        check_finite_slice(first_column, "Toeplitz first column")?;
        if len < 2 * m - 1 {
            return Err(StructuredError::InvalidArgument {
                name: "len",
                reason: format!(
                    "the circulant embedding of a Toeplitz matrix of order {m} needs length at least {}, got {len}",
                    2 * m - 1
                ),
            });
        }
        let fft = RealFftPair::new(len);
        let mut embedding = vec![0.0; len];
        embedding[..m].copy_from_slice(first_column);
        for k in 1..m {
            embedding[len - k] = first_column[k];
        }
        // The embedding is symmetric (e[k] = e[L − k]), so its spectrum is real; the imaginary
        // parts are round-off and dropped.
        let inv_len = 1.0 / len as f64;
        let scaled_spectrum = fft
            .spectrum_of(&embedding)
            .iter()
            .map(|z| z.re * inv_len)
            .collect();
        let dense = (m <= DENSE_BLOCK_MAX_ORDER)
            .then(|| Mat::from_fn(m, m, |i, j| first_column[i.abs_diff(j)]));
        Ok(Self {
            first_column: first_column.to_vec(),
            scaled_spectrum,
            fft,
            pool: Pool::new(),
            dense,
        })
    }

    /// The order `m`.
    pub fn dim(&self) -> usize {
        self.first_column.len()
    }

    /// The first column `c` (`T[i, j] = c[|i − j|]`).
    pub fn first_column(&self) -> &[f64] {
        &self.first_column
    }

    /// The length `L` of the circulant embedding.
    pub fn embedding_length(&self) -> usize {
        self.fft.len()
    }

    /// The eigenvalues `λ_k`, `k = 0..=L/2`, of the circulant embedding (real; the others
    /// follow from `λ_{L−k} = λ_k`). They may be negative: the embedding of a positive
    /// definite Toeplitz matrix need not be positive definite.
    pub fn embedding_eigenvalues(&self) -> Vec<f64> {
        let len = self.embedding_length() as f64;
        self.scaled_spectrum.iter().map(|s| s * len).collect()
    }

    /// A workspace for [`apply_with_workspace`](Self::apply_with_workspace).
    pub fn workspace(&self) -> ToeplitzWorkspace {
        ToeplitzWorkspace {
            buf: self.fft.buffers(),
        }
    }

    /// Writes `out = T x` using `ws`; allocates nothing.
    ///
    /// Errors: wrong lengths of `x` or `out`, or a workspace made for another embedding
    /// length.
    pub fn apply_with_workspace(
        &self,
        x: ColRef<'_, f64>,
        out: ColMut<'_, f64>,
        ws: &mut ToeplitzWorkspace,
    ) -> Result<()> {
        let m = self.dim();
        check_shape((x.nrows(), 1), (m, 1), "SymmetricToeplitz::apply (x)")?;
        check_shape((out.nrows(), 1), (m, 1), "SymmetricToeplitz::apply (out)")?;
        self.check_workspace(ws)?;
        self.apply_unchecked(x, out, ws);
        Ok(())
    }

    pub(crate) fn check_workspace(&self, ws: &ToeplitzWorkspace) -> Result<()> {
        if ws.buf.time.len() != self.embedding_length()
            || ws.buf.scratch.len() < self.fft.scratch_len()
        {
            return Err(StructuredError::InvalidArgument {
                name: "ws",
                reason: format!(
                    "the workspace was made for embedding length {}, this operator uses {}",
                    ws.buf.time.len(),
                    self.embedding_length()
                ),
            });
        }
        Ok(())
    }

    fn apply_unchecked(
        &self,
        x: ColRef<'_, f64>,
        out: ColMut<'_, f64>,
        ws: &mut ToeplitzWorkspace,
    ) {
        copy_col_into(x, &mut ws.buf.time);
        self.apply_in_buffer(ws);
        copy_into_col(&ws.buf.time, out);
    }

    /// In place on the workspace: on entry `time[..m]` holds `x` (the rest is ignored), on
    /// exit `time[..m]` holds `T x` (the rest is garbage).
    fn apply_in_buffer(&self, ws: &mut ToeplitzWorkspace) {
        let m = self.dim();
        let buf = &mut ws.buf;
        buf.time[m..].fill(0.0);
        self.fft.forward(buf);
        for (z, &s) in buf.freq.iter_mut().zip(&self.scaled_spectrum) {
            z.re *= s;
            z.im *= s;
        }
        self.fft.inverse(buf);
    }

    fn take_workspace(&self) -> ToeplitzWorkspace {
        self.pool.take(|| self.workspace())
    }

    fn give_workspace(&self, ws: ToeplitzWorkspace) {
        self.pool.give(ws)
    }

    /// Runs `f(x_chunk, out_chunk, ws)` over column chunks of a block, in parallel when the
    /// workspace parallelism setting asks for it, each chunk with a pooled workspace.
    fn for_column_chunks(
        &self,
        x: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
        f: impl Fn(MatRef<'_, f64>, MatMut<'_, f64>, &mut ToeplitzWorkspace) + Sync,
    ) {
        let chunks = column_chunks(x.ncols());
        if chunks <= 1 {
            let mut ws = self.take_workspace();
            f(x, out, &mut ws);
            self.give_workspace(ws);
        } else {
            x.par_col_partition(chunks)
                .zip(out.par_col_partition_mut(chunks))
                .for_each(|(xc, oc)| {
                    let mut ws = self.take_workspace();
                    f(xc, oc, &mut ws);
                    self.give_workspace(ws);
                });
        }
    }
}

impl LinearOperator for SymmetricToeplitz {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut ws = self.take_workspace();
        self.apply_unchecked(x, out, &mut ws);
        self.give_workspace(ws);
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        if let (Some(a), true) = (&self.dense, x.ncols() >= 2) {
            let m = a.nrows() as f64;
            let par = gp_linalg::parallelism_for(2.0 * m * m * x.ncols() as f64);
            matmul(out, Accum::Replace, a.as_ref(), x, 1.0, par);
            // faer leaves the upper vector state dirty; the baseline-SSE loops that run next
            // (the S stencil of GSGP, the FFT path) would pay the transition penalty.
            gp_linalg::simd::clear_upper_vector_state();
            return;
        }
        self.for_column_chunks(x, out, |xc, mut oc, ws| {
            for j in 0..xc.ncols() {
                self.apply_unchecked(xc.col(j), oc.rb_mut().col_mut(j), ws);
            }
        });
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        Some(Col::from_fn(self.dim(), |_| self.first_column[0]))
    }
    fn to_dense(&self) -> Mat<f64> {
        let c = &self.first_column;
        Mat::from_fn(self.dim(), self.dim(), |i, j| c[i.abs_diff(j)])
    }
}

/// `Tᵀ = T`: the transpose products are the products.
impl TransposeOperator for SymmetricToeplitz {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matvec(x, out)
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.matmat(x, out)
    }
}

/// The submatrix `T[rows, cols]` of a symmetric Toeplitz matrix: a Toeplitz operator whose
/// output, input or both are restricted to subsets of the grid positions (observations with
/// gaps on a regular grid).
///
/// Applied by embedding into the full grid: scatter `x` into a zero `m`-vector at `cols`
/// (repeated positions add up), apply `T`, gather the entries at `rows`. Same cost as a
/// product with `T`; allocation-free with [`apply_with_workspace`](Self::apply_with_workspace)
/// and pooled workspaces otherwise.
///
/// ```
/// use std::sync::Arc;
/// use faer::col;
/// use gp_structured::toeplitz::{RestrictedToeplitz, SymmetricToeplitz};
/// use gp_structured::LinearOperator;
///
/// let t = Arc::new(SymmetricToeplitz::new(&[3.0, 2.0, 1.0, 0.5])?);
/// // Observed positions 0, 1 and 3 of a grid of 4 (position 2 is missing).
/// let k = RestrictedToeplitz::observed(t, vec![0, 1, 3])?;
/// let y = k.apply(col![1.0, 0.0, 0.0].as_ref())?;
/// assert!((y[2] - 0.5).abs() < 1e-14);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RestrictedToeplitz {
    toeplitz: Arc<SymmetricToeplitz>,
    /// Output positions; `None` = all `m`.
    rows: Option<Vec<usize>>,
    /// Input positions; `None` = all `m`.
    cols: Option<Vec<usize>>,
}

impl RestrictedToeplitz {
    /// `T[rows, cols]`; `None` keeps every position (`0..m`) on that side.
    ///
    /// Errors: a position `≥ m`.
    pub fn new(
        toeplitz: Arc<SymmetricToeplitz>,
        rows: Option<Vec<usize>>,
        cols: Option<Vec<usize>>,
    ) -> Result<Self> {
        let m = toeplitz.dim();
        for (name, idx) in [("rows", &rows), ("cols", &cols)] {
            if let Some(bad) = idx.as_ref().and_then(|v| v.iter().find(|&&i| i >= m)) {
                return Err(StructuredError::InvalidArgument {
                    name,
                    reason: format!("position {bad} is outside the grid of {m} points"),
                });
            }
        }
        Ok(Self {
            toeplitz,
            rows,
            cols,
        })
    }

    /// `T[positions, positions]`: the kernel matrix of the observed points of a gappy grid.
    pub fn observed(toeplitz: Arc<SymmetricToeplitz>, positions: Vec<usize>) -> Result<Self> {
        Self::new(toeplitz, Some(positions.clone()), Some(positions))
    }

    /// The full Toeplitz operator.
    pub fn toeplitz(&self) -> &Arc<SymmetricToeplitz> {
        &self.toeplitz
    }

    /// The output positions (`None` = all).
    pub fn rows(&self) -> Option<&[usize]> {
        self.rows.as_deref()
    }

    /// The input positions (`None` = all).
    pub fn cols(&self) -> Option<&[usize]> {
        self.cols.as_deref()
    }

    /// Writes `out = T[rows, cols] x` using `ws` (from [`SymmetricToeplitz::workspace`]);
    /// allocates nothing.
    pub fn apply_with_workspace(
        &self,
        x: ColRef<'_, f64>,
        out: ColMut<'_, f64>,
        ws: &mut ToeplitzWorkspace,
    ) -> Result<()> {
        check_shape(
            (x.nrows(), 1),
            (self.ncols(), 1),
            "RestrictedToeplitz::apply (x)",
        )?;
        check_shape(
            (out.nrows(), 1),
            (self.nrows(), 1),
            "RestrictedToeplitz::apply (out)",
        )?;
        self.toeplitz.check_workspace(ws)?;
        self.apply_unchecked(x, out, ws);
        Ok(())
    }

    fn apply_unchecked(
        &self,
        x: ColRef<'_, f64>,
        out: ColMut<'_, f64>,
        ws: &mut ToeplitzWorkspace,
    ) {
        self.apply_restricted(self.rows.as_deref(), self.cols.as_deref(), x, out, ws)
    }

    /// `out = T[rows, cols] x` (`None` = all positions); with the two swapped, the transpose.
    fn apply_restricted(
        &self,
        rows: Option<&[usize]>,
        cols: Option<&[usize]>,
        x: ColRef<'_, f64>,
        mut out: ColMut<'_, f64>,
        ws: &mut ToeplitzWorkspace,
    ) {
        let m = self.toeplitz.dim();
        match cols {
            None => copy_col_into(x, &mut ws.buf.time),
            Some(cols) => {
                let time = &mut ws.buf.time[..m];
                time.fill(0.0);
                for (k, &c) in cols.iter().enumerate() {
                    time[c] += x[k];
                }
            }
        }
        self.toeplitz.apply_in_buffer(ws);
        match rows {
            None => copy_into_col(&ws.buf.time, out),
            Some(rows) => {
                for (k, &r) in rows.iter().enumerate() {
                    out[k] = ws.buf.time[r];
                }
            }
        }
    }
}

impl LinearOperator for RestrictedToeplitz {
    fn nrows(&self) -> usize {
        self.rows.as_ref().map_or(self.toeplitz.dim(), Vec::len)
    }
    fn ncols(&self) -> usize {
        self.cols.as_ref().map_or(self.toeplitz.dim(), Vec::len)
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut ws = self.toeplitz.take_workspace();
        self.apply_unchecked(x, out, &mut ws);
        self.toeplitz.give_workspace(ws);
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.toeplitz.for_column_chunks(x, out, |xc, mut oc, ws| {
            for j in 0..xc.ncols() {
                self.apply_unchecked(xc.col(j), oc.rb_mut().col_mut(j), ws);
            }
        });
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        (self.nrows() == self.ncols()).then(|| {
            let c = self.toeplitz.first_column();
            Col::from_fn(self.nrows(), |k| {
                let r = self.rows.as_ref().map_or(k, |v| v[k]);
                let s = self.cols.as_ref().map_or(k, |v| v[k]);
                c[r.abs_diff(s)]
            })
        })
    }
    fn to_dense(&self) -> Mat<f64> {
        let c = self.toeplitz.first_column();
        Mat::from_fn(self.nrows(), self.ncols(), |i, j| {
            let r = self.rows.as_ref().map_or(i, |v| v[i]);
            let s = self.cols.as_ref().map_or(j, |v| v[j]);
            c[r.abs_diff(s)]
        })
    }
}

/// `T[rows, cols]ᵀ = T[cols, rows]` (`T` is symmetric): the same embedding with the input and
/// output positions swapped.
impl TransposeOperator for RestrictedToeplitz {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut ws = self.toeplitz.take_workspace();
        self.apply_restricted(self.cols.as_deref(), self.rows.as_deref(), x, out, &mut ws);
        self.toeplitz.give_workspace(ws);
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let (rows, cols) = (self.cols.as_deref(), self.rows.as_deref());
        self.toeplitz.for_column_chunks(x, out, |xc, mut oc, ws| {
            for j in 0..xc.ncols() {
                self.apply_restricted(rows, cols, xc.col(j), oc.rb_mut().col_mut(j), ws);
            }
        });
    }
}
