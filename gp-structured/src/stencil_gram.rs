//! [`StencilGram`]: a symmetric `m × m` matrix on a regular grid whose non-zeros join grid
//! nodes at most `r` steps apart in every dimension, stored as a dense grid-offset stencil.
//!
//! This is the storage of `S = WᵀW` ([`SufficientStats`](crate::sufficient_stats::SufficientStats)):
//! for cubic weights two nodes share a point only if their multi-indices differ by at most 3 in
//! every dimension (`r = 3`, `7^d` offsets), for linear by at most 1 (`r = 1`, `3^d`).
//! Row `j` stores the `(2r+1)^d` values `S[j, j + Δ]` for the offsets `Δ ∈ {−r..r}^d` in C
//! order (last dimension fastest), with zeros where `j + Δ` leaves the grid.
//!
//! Why a stencil and not CSR: no column indices are stored (8 bytes per entry instead of 16),
//! entry `(j, j+Δ)` has a fixed address so the streaming accumulation and [`merge`] are plain
//! array additions, and the product `S x` reads each row contiguously with fixed offsets. The
//! cost is that every grid node has a full row even when no data are near it; for grids that
//! data cover only sparsely use [`StencilGram::to_csr`], which drops exact zeros.
//!
//! [`merge`]: crate::sufficient_stats::SufficientStats::merge

use faer::{Col, ColMut, ColRef};
use gp_linalg::LinearOperator;
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::slice_util::{c_strides, checked_product, col_as_slice, with_out_slice};

/// A symmetric banded ("stencil") matrix on a regular grid; see the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct StencilGram {
    sizes: Vec<usize>,
    strides: Vec<usize>,
    m: usize,
    radius: usize,
    /// `(2r+1)^d`.
    k: usize,
    /// Flat offset of each stencil entry.
    offsets: Vec<isize>,
    /// Multi-offsets, `k × d`, row-major.
    deltas: Vec<isize>,
    data: Vec<f64>,
}

impl StencilGram {
    /// An all-zero stencil matrix on a grid with the given sizes and stencil radius `r`.
    pub fn zeros(sizes: &[usize], radius: usize) -> Result<Self> {
        if sizes.is_empty() || sizes.contains(&0) {
            return Err(StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("a stencil matrix needs at least one dimension and no empty axis, got {sizes:?}"),
            });
        }
        let m = checked_product(sizes, "sizes")?;
        let d = sizes.len();
        let q = 2 * radius + 1;
        let k = checked_product(&vec![q; d], "radius")?;
        let len = m
            .checked_mul(k)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("{m} nodes × {k} stencil entries overflow usize"),
            })?;
        let strides = c_strides(sizes);
        let mut deltas = Vec::with_capacity(k * d);
        let mut offsets = Vec::with_capacity(k);
        for idx in 0..k {
            let mut rem = idx;
            let mut multi = vec![0isize; d];
            for l in (0..d).rev() {
                multi[l] = (rem % q) as isize - radius as isize;
                rem /= q;
            }
            offsets.push(
                multi
                    .iter()
                    .zip(&strides)
                    .map(|(&dl, &s)| dl * s as isize)
                    .sum(),
            );
            deltas.extend_from_slice(&multi);
        }
        Ok(Self {
            sizes: sizes.to_vec(),
            strides,
            m,
            radius,
            k,
            offsets,
            deltas,
            data: vec![0.0; len],
        })
    }

    /// Grid sizes `m_l`.
    pub fn grid_sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Order `m` of the matrix (number of grid nodes).
    pub fn order(&self) -> usize {
        self.m
    }

    /// Stencil radius `r` (3 for cubic `WᵀW`, 1 for linear).
    pub fn radius(&self) -> usize {
        self.radius
    }

    /// Stencil entries per row, `(2r+1)^d`.
    pub fn stencil_len(&self) -> usize {
        self.k
    }

    /// The multi-offset `Δ` of stencil entry `e` (`e < stencil_len()`).
    pub fn stencil_offset(&self, e: usize) -> Option<&[isize]> {
        let d = self.sizes.len();
        self.deltas.get(e * d..(e + 1) * d)
    }

    /// Raw values, `m × (2r+1)^d`, row `j` = `S[j, j + Δ_e]` for each stencil entry `e`.
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }

    /// Entry `S[i, j]` (zero outside the stencil), or `None` if an index is `≥ m`.
    pub fn entry(&self, i: usize, j: usize) -> Option<f64> {
        if i >= self.m || j >= self.m {
            return None;
        }
        let q = 2 * self.radius + 1;
        let mut e = 0usize;
        for (&s, &ml) in self.strides.iter().zip(&self.sizes) {
            let (a, b) = ((i / s) % ml, (j / s) % ml);
            let delta = b as isize - a as isize;
            if delta.unsigned_abs() > self.radius {
                return Some(0.0);
            }
            e = e * q + (delta + self.radius as isize) as usize;
        }
        Some(self.data[i * self.k + e])
    }

    /// Number of entries that are not exactly zero.
    pub fn nnz(&self) -> usize {
        self.data.par_iter().filter(|v| **v != 0.0).count()
    }

    /// Bytes of the stored values.
    pub fn storage_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f64>()
    }

    /// Adds another stencil matrix of the same shape into this one.
    pub fn add_assign(&mut self, other: &Self) -> Result<()> {
        if self.sizes != other.sizes || self.radius != other.radius {
            return Err(StructuredError::InvalidArgument {
                name: "other",
                reason: format!(
                    "cannot add stencil matrices of grids {:?} (radius {}) and {:?} (radius {})",
                    self.sizes, self.radius, other.sizes, other.radius
                ),
            });
        }
        self.data
            .par_iter_mut()
            .zip(other.data.par_iter())
            .for_each(|(a, b)| *a += b);
        Ok(())
    }

    /// The matrix in CSR form with exact zeros dropped (columns ascending in each row).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..self.m)
            .into_par_iter()
            .map(|j| {
                let mut multi = vec![0usize; self.sizes.len()];
                self.multi_of(j, &mut multi);
                let mut cols = Vec::new();
                let mut vals = Vec::new();
                for e in 0..self.k {
                    let v = self.data[j * self.k + e];
                    if v != 0.0 && self.neighbour_in_grid(&multi, e) {
                        cols.push((j as isize + self.offsets[e]) as usize);
                        vals.push(v);
                    }
                }
                (cols, vals)
            })
            .collect();
        let mut indptr = Vec::with_capacity(self.m + 1);
        indptr.push(0usize);
        let mut indices = Vec::new();
        let mut data = Vec::new();
        for (c, v) in rows {
            indices.extend(c);
            data.extend(v);
            indptr.push(indices.len());
        }
        CsMat::try_new((self.m, self.m), indptr, indices, data).map_err(|(_, _, _, err)| {
            StructuredError::InvalidArgument {
                name: "StencilGram",
                reason: format!("internal error building CSR: {err}"),
            }
        })
    }

    fn multi_of(&self, j: usize, multi: &mut [usize]) {
        for ((mi, &s), &ml) in multi.iter_mut().zip(&self.strides).zip(&self.sizes) {
            *mi = (j / s) % ml;
        }
    }

    fn neighbour_in_grid(&self, multi: &[usize], e: usize) -> bool {
        let d = self.sizes.len();
        multi
            .iter()
            .zip(&self.deltas[e * d..(e + 1) * d])
            .zip(&self.sizes)
            .all(|((&i, &dl), &ml)| {
                let t = i as isize + dl;
                t >= 0 && (t as usize) < ml
            })
    }

    fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        let r = self.radius;
        let k = self.k;
        out.par_chunks_mut(1024).enumerate().for_each(|(c, o)| {
            let mut multi = vec![0usize; self.sizes.len()];
            for (t, oj) in o.iter_mut().enumerate() {
                let j = c * 1024 + t;
                self.multi_of(j, &mut multi);
                let row = &self.data[j * k..(j + 1) * k];
                let interior = multi
                    .iter()
                    .zip(&self.sizes)
                    .all(|(&i, &ml)| i >= r && i + r < ml);
                let mut sum = 0.0;
                if interior {
                    for (v, &off) in row.iter().zip(&self.offsets) {
                        sum += v * x[(j as isize + off) as usize];
                    }
                } else {
                    for (e, (v, &off)) in row.iter().zip(&self.offsets).enumerate() {
                        if self.neighbour_in_grid(&multi, e) {
                            sum += v * x[(j as isize + off) as usize];
                        }
                    }
                }
                *oj = sum;
            }
        });
    }
}

impl LinearOperator for StencilGram {
    fn nrows(&self) -> usize {
        self.m
    }

    fn ncols(&self) -> usize {
        self.m
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.matvec_slice(x, o));
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        let centre = self.k / 2;
        Some(Col::from_fn(self.m, |j| self.data[j * self.k + centre]))
    }
}
