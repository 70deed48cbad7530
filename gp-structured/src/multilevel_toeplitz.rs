//! Symmetric multilevel (block) Toeplitz operators: the kernel matrix of a stationary kernel
//! that is *not* separable across dimensions (e.g. an isotropic Matérn in 3-D) on a regular
//! d-dimensional grid, applied by d-dimensional circulant embedding and complex FFTs.
//!
//! # Definition
//!
//! Grid points are named by multi-indices `i = (i_1, …, i_d)`, `0 ≤ i_k < m_k`, flattened in
//! C order (last axis fastest), exactly as [`RegularGrid`](crate::RegularGrid). The matrix is
//!
//! ```text
//! T[a, b] = g[|i_1 − j_1|, …, |i_d − j_d|]      (a ↔ i, b ↔ j)
//! ```
//!
//! with the *generator* `g` given on the non-negative offsets `0..m_1 × … × 0..m_d` (C order,
//! `Π m_k` values). This is the kernel matrix of every stationary kernel `k(δ)` that is even in
//! each coordinate, `k(…, −δ_k, …) = k(…, δ_k, …)` — SE, Matérn and RQ with isotropic or ARD
//! (axis-aligned) length scales — because then `k(x_i − x_j)` depends on `|i_k − j_k|` only.
//! Kernels with rotated anisotropy (a full, non-diagonal metric) are *not* of this form.
//!
//! # Product
//!
//! Along each axis the offsets are embedded in a circulant of length
//! `L_k = circulant_embedding_length(m_k) ≥ 2m_k − 1`, the generator at embedded offset `o_k`
//! being `g` at `min(o_k, L_k − o_k)` when that is `< m_k` and 0 otherwise. `T` is the leading
//! `m_1 × … × m_d` block of this d-level circulant `C`, so `T x = (C [x; 0])[leading block]`
//! and `C = F⁻¹ diag(λ) F` with `F` the d-dimensional DFT. The embedding is even in each axis,
//! so `λ` is real; it is computed once. One product costs one forward and one inverse
//! d-dimensional complex FFT of `L = Π L_k` points (fewer: lines that are all zero on the way
//! in, or not needed on the way out, are skipped).
//!
//! Because `λ` is real, `C (x + i·y) = C x + i·C y` for real `x`, `y`: block products pack two
//! columns into one complex signal and so need half the FFTs.

use std::sync::Arc;

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;
use rustfft::{Fft, FftPlanner};

use crate::error::{Result, StructuredError};
use crate::fft::{circulant_embedding_length, column_chunks, Complex, Pool};
use crate::slice_util::{c_strides, checked_product, col_as_slice, with_out_slice};

/// Lines gathered into one contiguous batch when transforming a non-contiguous axis: 16
/// complex values (256 bytes) are read from each row of a slab, so the strided gather stays
/// cache friendly while the batch buffer stays small.
const LINE_BATCH: usize = 16;

/// A symmetric multilevel Toeplitz matrix `T[a, b] = g[|i − j|]` (offsets taken per axis) on
/// a regular d-dimensional grid, as a [`LinearOperator`] applied in `O(L log L)` by circulant
/// embedding, `L = Π L_k ≈ 2^d Π m_k` (see the [module docs](self)).
///
/// The generator `g` must come from a kernel that is even in each coordinate (isotropic or
/// ARD stationary kernels); see [`from_kernel_fn`](Self::from_kernel_fn). The embedding
/// spectrum and the FFT plans are computed once in the constructor; products take their
/// buffers (`L` complex values) from an internal thread-safe pool, so repeated products
/// allocate nothing.
///
/// Accuracy: one product is off by at most about `ε · log₂L · ‖g‖₁,sym · ‖x‖₂` entrywise,
/// where `‖g‖₁,sym` is the absolute sum of the embedded generator; it does not depend on
/// the conditioning of `T`.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_structured::{LinearOperator, MultilevelToeplitz};
///
/// // An isotropic squared exponential on a 3 × 4 grid with spacings 0.5 and 0.25.
/// let t = MultilevelToeplitz::from_kernel_fn(&[3, 4], &[0.5, 0.25], |d| {
///     (-0.5 * (d[0] * d[0] + d[1] * d[1])).exp()
/// })?;
/// let n = t.dim();
/// let dense = Mat::from_fn(n, n, |a, b| t.entry(a, b));
/// let x = Col::from_fn(n, |i| (i as f64).sin());
/// let y = t.apply(x.as_ref())?;
/// assert!((&y - &dense * &x).norm_max() < 1e-12);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
pub struct MultilevelToeplitz {
    sizes: Vec<usize>,
    /// C-order strides of the grid (and of the generator).
    strides: Vec<usize>,
    generator: Vec<f64>,
    embedding_sizes: Vec<usize>,
    /// C-order strides of the embedding array.
    embedding_strides: Vec<usize>,
    /// Real eigenvalues of the d-level circulant embedding, all `L` of them in C order,
    /// divided by `L` (the normalization of the inverse FFT folded in).
    scaled_spectrum: Vec<f64>,
    /// Per-axis FFT plans of lengths `L_k`.
    forward: Vec<Arc<dyn Fft<f64>>>,
    inverse: Vec<Arc<dyn Fft<f64>>>,
    scratch_len: usize,
    pool: Pool<Workspace>,
}

/// The buffers of one product: the embedded signal, a batch of gathered lines, FFT scratch
/// and contiguous copies of strided input columns.
struct Workspace {
    data: Vec<Complex<f64>>,
    lines: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
    x_buf: Vec<f64>,
    y_buf: Vec<f64>,
}

impl std::fmt::Debug for MultilevelToeplitz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultilevelToeplitz")
            .field("sizes", &self.sizes)
            .field("embedding_sizes", &self.embedding_sizes)
            .finish()
    }
}

impl Clone for MultilevelToeplitz {
    fn clone(&self) -> Self {
        Self {
            sizes: self.sizes.clone(),
            strides: self.strides.clone(),
            generator: self.generator.clone(),
            embedding_sizes: self.embedding_sizes.clone(),
            embedding_strides: self.embedding_strides.clone(),
            scaled_spectrum: self.scaled_spectrum.clone(),
            forward: self.forward.clone(),
            inverse: self.inverse.clone(),
            scratch_len: self.scratch_len,
            // Workspaces are per operator instance; the clone starts with an empty pool.
            pool: Pool::new(),
        }
    }
}

/// Checks the grid sizes and returns `(Π m_k, [L_k], Π L_k)`. Everything that could overflow
/// or make the embedding unallocatable is caught here, before any buffer is allocated.
fn validate_sizes(sizes: &[usize]) -> Result<(usize, Vec<usize>, usize)> {
    if sizes.is_empty() {
        return Err(StructuredError::InvalidArgument {
            name: "sizes",
            reason: "a multilevel Toeplitz matrix needs at least one axis".to_string(),
        });
    }
    if let Some(axis) = sizes.iter().position(|&m| m == 0) {
        return Err(StructuredError::InvalidArgument {
            name: "sizes",
            reason: format!("axis {axis} has size 0 (sizes {sizes:?}); every axis needs a point"),
        });
    }
    let dim = checked_product(sizes, "sizes")?;
    let embedding_sizes = sizes
        .iter()
        .map(|&m| circulant_embedding_length(m))
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| StructuredError::InvalidArgument {
            name: "sizes",
            reason: format!("an axis of sizes {sizes:?} is too large to embed in a circulant"),
        })?;
    let len = checked_product(&embedding_sizes, "sizes")?;
    // The embedded signal is one `Vec<Complex<f64>>` of `len` values; a length past
    // `isize::MAX` bytes could not be allocated (Vec would panic on the capacity).
    let max_len = isize::MAX as usize / std::mem::size_of::<Complex<f64>>();
    if len > max_len {
        return Err(StructuredError::InvalidArgument {
            name: "sizes",
            reason: format!(
                "the circulant embedding of sizes {sizes:?} has {len} points (sizes \
                 {embedding_sizes:?}), more than can be allocated"
            ),
        });
    }
    Ok((dim, embedding_sizes, len))
}

/// The multi-index of flat C-order index `flat` over `sizes`, dotted with `strides`: maps a
/// flat index of one C-order array to the offset of the same multi-index in another.
fn remap(mut flat: usize, sizes: &[usize], strides: &[usize]) -> usize {
    let mut offset = 0;
    for (&m, &s) in sizes.iter().zip(strides).rev() {
        offset += (flat % m) * s;
        flat /= m;
    }
    offset
}

impl MultilevelToeplitz {
    /// The multilevel Toeplitz matrix with grid sizes `sizes = [m_1, …, m_d]` and generator
    /// `generator` (`g[o]` for the offsets `o ∈ 0..m_1 × … × 0..m_d`, C order, `Π m_k`
    /// values): `T[a, b] = g[|i − j|]`.
    ///
    /// Each axis is embedded with the smallest 5-smooth length `L_k ≥ 2m_k − 1`.
    ///
    /// Errors ([`StructuredError::InvalidArgument`]): empty `sizes`, a zero size, `Π m_k` or
    /// the embedding size `Π L_k` overflowing (or too large to allocate), a generator of
    /// length other than `Π m_k`, or a non-finite generator entry.
    pub fn new(sizes: Vec<usize>, generator: Vec<f64>) -> Result<Self> {
        let (dim, embedding_sizes, len) = validate_sizes(&sizes)?;
        if generator.len() != dim {
            return Err(StructuredError::InvalidArgument {
                name: "generator",
                reason: format!(
                    "the generator of sizes {sizes:?} needs {dim} entries (one per offset), got {}",
                    generator.len()
                ),
            });
        }
        let strides = c_strides(&sizes);
        if let Some(flat) = generator.iter().position(|v| !v.is_finite()) {
            let offset: Vec<usize> = strides
                .iter()
                .zip(&sizes)
                .map(|(&s, &m)| (flat / s) % m)
                .collect();
            return Err(StructuredError::InvalidArgument {
                name: "generator",
                reason: format!(
                    "entry {flat} (offset {offset:?}) is {}; the generator must be finite",
                    generator[flat]
                ),
            });
        }

        let mut planner = FftPlanner::<f64>::new();
        let forward: Vec<Arc<dyn Fft<f64>>> = embedding_sizes
            .iter()
            .map(|&l| planner.plan_fft_forward(l))
            .collect();
        let inverse: Vec<Arc<dyn Fft<f64>>> = embedding_sizes
            .iter()
            .map(|&l| planner.plan_fft_inverse(l))
            .collect();
        let scratch_len = forward
            .iter()
            .chain(&inverse)
            .map(|f| f.get_inplace_scratch_len())
            .max()
            .unwrap_or(0);

        let mut op = Self {
            embedding_strides: c_strides(&embedding_sizes),
            sizes,
            strides,
            generator,
            embedding_sizes,
            scaled_spectrum: Vec::new(),
            forward,
            inverse,
            scratch_len,
            pool: Pool::new(),
        };

        // The embedded generator: offset o_k ↦ min(o_k, L_k − o_k) per axis, zero where that
        // is ≥ m_k (the gap that makes the embedding exact for any L_k ≥ 2m_k − 1).
        let mut ws = op.workspace_of_len(len);
        let folded: Vec<Vec<Option<usize>>> = op
            .sizes
            .iter()
            .zip(&op.embedding_sizes)
            .zip(&op.strides)
            .map(|((&m, &l), &s)| {
                (0..l)
                    .map(|o| {
                        let f = o.min(l - o);
                        (f < m).then_some(f * s)
                    })
                    .collect()
            })
            .collect();
        for (flat, z) in ws.data.iter_mut().enumerate() {
            let mut rem = flat;
            let mut g_index = Some(0usize);
            for (axis, &l) in folded.iter().zip(&op.embedding_sizes).rev() {
                g_index = g_index.zip(axis[rem % l]).map(|(a, b)| a + b);
                rem /= l;
            }
            *z = Complex::new(g_index.map_or(0.0, |g| op.generator[g]), 0.0);
        }
        // Full transform (no skipped lines: the embedding fills the whole array). The
        // embedding is even in every axis, so the spectrum is real; the imaginary parts are
        // round-off and dropped.
        let full = op.embedding_sizes.clone();
        for axis in (0..op.dim_count()).rev() {
            op.transform_axis(axis, &full[..axis], &op.forward[axis], &mut ws);
        }
        let inv_len = 1.0 / len as f64;
        op.scaled_spectrum = ws.data.iter().map(|z| z.re * inv_len).collect();
        Ok(op)
    }

    /// The matrix of the stationary kernel `k(δ)` on the grid with `sizes[k]` points spaced
    /// `spacings[k]` apart along axis `k`: `g[o] = k(o ⊙ spacings)`, the offset vector in
    /// input units, so `T[a, b] = k(|x_a − x_b|)` taken per coordinate.
    ///
    /// `k` is only evaluated at non-negative offsets; the result is the kernel matrix when
    /// `k` is even in each coordinate (isotropic or ARD stationary kernels), see the
    /// [module docs](self).
    ///
    /// Errors: those of [`new`](Self::new) (checked before `k` is called, except for a
    /// non-finite kernel value), `spacings` of a different length than `sizes`, or a spacing
    /// that is not finite and positive.
    pub fn from_kernel_fn(
        sizes: &[usize],
        spacings: &[f64],
        k: impl Fn(&[f64]) -> f64,
    ) -> Result<Self> {
        let (dim, _, _) = validate_sizes(sizes)?;
        if spacings.len() != sizes.len() {
            return Err(StructuredError::InvalidArgument {
                name: "spacings",
                reason: format!(
                    "{} spacings for a grid of {} axes",
                    spacings.len(),
                    sizes.len()
                ),
            });
        }
        if let Some(bad) = spacings.iter().find(|h| !(h.is_finite() && **h > 0.0)) {
            return Err(StructuredError::InvalidArgument {
                name: "spacings",
                reason: format!("spacing {bad} is not finite and positive"),
            });
        }
        let mut delta = vec![0.0; sizes.len()];
        let generator = (0..dim)
            .map(|flat| {
                let mut rem = flat;
                for ((d, &m), &h) in delta.iter_mut().zip(sizes).zip(spacings).rev() {
                    *d = (rem % m) as f64 * h;
                    rem /= m;
                }
                k(&delta)
            })
            .collect();
        Self::new(sizes.to_vec(), generator)
    }

    /// The grid sizes `[m_1, …, m_d]`.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The order of the matrix, `Π m_k` (the number of grid points).
    pub fn dim(&self) -> usize {
        self.generator.len()
    }

    /// The per-axis circulant embedding lengths `[L_1, …, L_d]`.
    pub fn embedding_sizes(&self) -> &[usize] {
        &self.embedding_sizes
    }

    /// The generator `g` (C order over the offsets `0..m_1 × … × 0..m_d`).
    pub fn generator(&self) -> &[f64] {
        &self.generator
    }

    /// The entry `T[a, b] = g[|i − j|]` for flat grid indices `a, b < dim()`, in `O(d)`.
    ///
    /// Indices are not checked: larger ones are read modulo `dim()` (as the multi-index
    /// decomposition of [`RegularGrid`](crate::RegularGrid) would), never out of bounds.
    pub fn entry(&self, a: usize, b: usize) -> f64 {
        let mut index = 0;
        for (&s, &m) in self.strides.iter().zip(&self.sizes) {
            index += ((a / s) % m).abs_diff((b / s) % m) * s;
        }
        self.generator[index]
    }

    fn dim_count(&self) -> usize {
        self.sizes.len()
    }

    fn embedding_len(&self) -> usize {
        self.scaled_spectrum.len()
    }

    fn workspace_of_len(&self, len: usize) -> Workspace {
        let max_axis = self.embedding_sizes.iter().copied().max().unwrap_or(1);
        Workspace {
            data: vec![Complex::new(0.0, 0.0); len],
            lines: vec![Complex::new(0.0, 0.0); LINE_BATCH * max_axis],
            scratch: vec![Complex::new(0.0, 0.0); self.scratch_len],
            x_buf: Vec::new(),
            y_buf: Vec::new(),
        }
    }

    /// 1-D FFTs (`fft`, of length `L_axis`) along `axis` of `ws.data`, on the lines whose
    /// indices on the axes before `axis` are below `outer[..]` (the other lines are zero on
    /// the way in or not needed on the way out) and all indices on the axes after it.
    ///
    /// For fixed outer indices the lines form a slab `L_axis × S` (row-major, `S` the
    /// product of the later embedding sizes): contiguous lines (`S = 1`) are transformed in
    /// place, otherwise batches of up to [`LINE_BATCH`] neighbouring columns of the slab are
    /// gathered into a contiguous buffer, transformed together and scattered back.
    fn transform_axis(
        &self,
        axis: usize,
        outer: &[usize],
        fft: &Arc<dyn Fft<f64>>,
        ws: &mut Workspace,
    ) {
        let len = self.embedding_sizes[axis];
        let s = self.embedding_strides[axis];
        let outer_strides = &self.embedding_strides[..axis];
        let slabs: usize = outer.iter().product();
        let Workspace {
            data,
            lines,
            scratch,
            ..
        } = ws;
        for t in 0..slabs {
            let base = remap(t, outer, outer_strides);
            let slab = &mut data[base..base + len * s];
            if s == 1 {
                fft.process_with_scratch(slab, scratch);
                continue;
            }
            for c0 in (0..s).step_by(LINE_BATCH) {
                let b = LINE_BATCH.min(s - c0);
                let batch = &mut lines[..b * len];
                for j in 0..len {
                    let row = &slab[j * s + c0..j * s + c0 + b];
                    for (q, &v) in row.iter().enumerate() {
                        batch[q * len + j] = v;
                    }
                }
                fft.process_with_scratch(batch, scratch);
                for j in 0..len {
                    let row = &mut slab[j * s + c0..j * s + c0 + b];
                    for (q, v) in row.iter_mut().enumerate() {
                        *v = batch[q * len + j];
                    }
                }
            }
        }
    }

    /// `C` applied in place to `ws.data`, which holds a signal supported on the leading
    /// `m_1 × … × m_d` block; on exit that block holds the product (the rest is garbage).
    fn apply_in_place(&self, ws: &mut Workspace) {
        let d = self.dim_count();
        // Forward, last axis first: when axis k is transformed the earlier axes are still
        // zero beyond m_j, so only those lines are transformed.
        for axis in (0..d).rev() {
            self.transform_axis(axis, &self.sizes[..axis], &self.forward[axis], ws);
        }
        for (z, &s) in ws.data.iter_mut().zip(&self.scaled_spectrum) {
            *z *= s;
        }
        // Inverse, first axis first: after axis k only its indices below m_k are needed.
        for axis in 0..d {
            self.transform_axis(axis, &self.sizes[..axis], &self.inverse[axis], ws);
        }
    }

    /// `out_x = T x` and, when given, `out_y = T y`, through one complex signal `x + i·y`.
    fn apply_pair(
        &self,
        x: ColRef<'_, f64>,
        out_x: ColMut<'_, f64>,
        pair: Option<(ColRef<'_, f64>, ColMut<'_, f64>)>,
        ws: &mut Workspace,
    ) {
        let row_len = self.sizes[self.dim_count() - 1];
        let rows = self.dim() / row_len;
        let (row_sizes, row_strides) = (
            &self.sizes[..self.dim_count() - 1],
            &self.embedding_strides[..self.dim_count() - 1],
        );
        let (y, out_y) = match pair {
            Some((y, out_y)) => (Some(y), Some(out_y)),
            None => (None, None),
        };
        let Workspace {
            data, x_buf, y_buf, ..
        } = &mut *ws;
        data.fill(Complex::new(0.0, 0.0));
        let xs = col_as_slice(x, x_buf);
        let ys = y.map(|y| col_as_slice(y, y_buf));
        // Scatter the grid rows (last axis, contiguous in both arrays) into the embedding.
        for r in 0..rows {
            let dst = remap(r, row_sizes, row_strides);
            let dst = &mut data[dst..dst + row_len];
            let src = r * row_len..(r + 1) * row_len;
            match ys {
                Some(ys) => {
                    for ((z, &a), &b) in dst.iter_mut().zip(&xs[src.clone()]).zip(&ys[src]) {
                        *z = Complex::new(a, b);
                    }
                }
                None => {
                    for (z, &a) in dst.iter_mut().zip(&xs[src]) {
                        z.re = a;
                    }
                }
            }
        }
        self.apply_in_place(ws);
        let gather = |part: fn(&Complex<f64>) -> f64, out: &mut [f64]| {
            for r in 0..rows {
                let src = remap(r, row_sizes, row_strides);
                let dst = &mut out[r * row_len..(r + 1) * row_len];
                for (o, z) in dst.iter_mut().zip(&ws.data[src..src + row_len]) {
                    *o = part(z);
                }
            }
        };
        with_out_slice(out_x, |o| gather(|z| z.re, o));
        if let Some(out_y) = out_y {
            with_out_slice(out_y, |o| gather(|z| z.im, o));
        }
    }

    /// Products with the columns of `x`, two at a time (the last one alone if odd).
    fn apply_columns(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let mut ws = self
            .pool
            .take(|| self.workspace_of_len(self.embedding_len()));
        let n = x.ncols();
        for j in (0..n).step_by(2) {
            if j + 1 < n {
                let (mut o0, o1) = out.rb_mut().subcols_mut(j, 2).split_at_col_mut(1);
                let pair = Some((x.col(j + 1), o1.col_mut(0)));
                self.apply_pair(x.col(j), o0.rb_mut().col_mut(0), pair, &mut ws);
            } else {
                self.apply_pair(x.col(j), out.rb_mut().col_mut(j), None, &mut ws);
            }
        }
        self.pool.give(ws);
    }
}

impl LinearOperator for MultilevelToeplitz {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut ws = self
            .pool
            .take(|| self.workspace_of_len(self.embedding_len()));
        self.apply_pair(x, out, None, &mut ws);
        self.pool.give(ws);
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        // Parallel chunks hold an even number of columns (whole pairs), so at most the last
        // chunk has a column without a partner.
        let pairs = x.ncols().div_ceil(2);
        let chunks = column_chunks(pairs);
        if chunks <= 1 {
            self.apply_columns(x, out);
            return;
        }
        let width = 2 * pairs.div_ceil(chunks);
        let mut parts = Vec::with_capacity(chunks);
        let (mut x_rest, mut out_rest) = (x, out);
        while x_rest.ncols() > 0 {
            let w = width.min(x_rest.ncols());
            let (xa, xb) = x_rest.split_at_col(w);
            let (oa, ob) = out_rest.split_at_col_mut(w);
            parts.push((xa, oa));
            (x_rest, out_rest) = (xb, ob);
        }
        parts
            .into_par_iter()
            .for_each(|(xc, oc)| self.apply_columns(xc, oc));
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        Some(Col::from_fn(self.dim(), |_| self.generator[0]))
    }
    fn to_dense(&self) -> Mat<f64> {
        Mat::from_fn(self.dim(), self.dim(), |a, b| self.entry(a, b))
    }
}

/// `Tᵀ = T`: the transpose products are the products.
impl TransposeOperator for MultilevelToeplitz {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matvec(x, out)
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.matmat(x, out)
    }
}
