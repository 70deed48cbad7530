//! The stored half stencil: construction, shape, entries, conversion to CSR and the grid
//! geometry of the offsets.

use std::sync::OnceLock;

use rayon::prelude::*;
use sprs::CsMat;

use super::product::PAR_CHUNK_VALUES;
use super::StencilGram;
use crate::error::{Result, StructuredError};
use crate::slice_util::{c_strides, checked_product};

impl PartialEq for StencilGram {
    fn eq(&self, other: &Self) -> bool {
        // The other fields are functions of these; the cache is not part of the value.
        self.sizes == other.sizes && self.radius == other.radius && self.data == other.data
    }
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
        let h = k.div_ceil(2);
        let len = m
            .checked_mul(h)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("{m} nodes × {h} stored stencil entries overflow usize"),
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
        let padded_sizes: Vec<usize> = sizes.iter().map(|&s| s + 2 * radius).collect();
        let padded_len = checked_product(&padded_sizes, "sizes")?;
        let padded_strides = c_strides(&padded_sizes);
        // Whole lines after the centre line `(k/q)/2`.
        let centre_line = (k / q) / 2;
        let padded_line_offsets = (centre_line + 1..k / q)
            .map(|line| {
                deltas[line * q * d..(line * q + 1) * d]
                    .iter()
                    .zip(&padded_strides)
                    .map(|(&dl, &s)| dl * s as isize)
                    .sum()
            })
            .collect();
        let reach = radius * padded_strides.iter().sum::<usize>();
        let block_len = (reach + 1).max(PAR_CHUNK_VALUES.div_ceil(h));
        Ok(Self {
            sizes: sizes.to_vec(),
            strides,
            m,
            radius,
            k,
            h,
            offsets,
            deltas,
            padded_strides,
            padded_len,
            padded_line_offsets,
            block_len,
            data: vec![0.0; len],
            plan: OnceLock::new(),
        })
    }

    /// The stencil matrix with the given stored values (layout of
    /// [`values`](Self::values): `m × row_len()`, row `j`'s diagonal first), for example
    /// values saved from another [`StencilGram`] of the same sizes and radius.
    ///
    /// Errors ([`StructuredError::InvalidArgument`]): the errors of [`zeros`](Self::zeros),
    /// `values` of a length other than `m · row_len()`, a non-finite value, or a non-zero
    /// value for a neighbour outside the grid (the layout keeps those zero, and the product
    /// would silently ignore them, so such a file is damaged rather than a different matrix).
    pub fn from_values(sizes: &[usize], radius: usize, values: Vec<f64>) -> Result<Self> {
        let mut g = Self::zeros(sizes, radius)?;
        if values.len() != g.data.len() {
            return Err(StructuredError::InvalidArgument {
                name: "values",
                reason: format!(
                    "a stencil matrix on a {sizes:?} grid with radius {radius} stores {} values \
                     ({} nodes × {}), got {}",
                    g.data.len(),
                    g.m,
                    g.h,
                    values.len()
                ),
            });
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(StructuredError::InvalidArgument {
                name: "values",
                reason: format!(
                    "stored stencil value {i} (row {}, entry {}) is {}",
                    i / g.h,
                    i % g.h,
                    values[i]
                ),
            });
        }
        let centre = g.k / 2;
        let mut multi = vec![0usize; sizes.len()];
        for (j, row) in values.chunks_exact(g.h).enumerate() {
            // Only rows near a boundary can have neighbours outside; the test is cheap
            // next to reading the file.
            g.multi_of(j, &mut multi);
            if let Some(t) = row
                .iter()
                .enumerate()
                .position(|(t, &v)| v != 0.0 && !g.neighbour_in_grid(&multi, centre + t))
            {
                return Err(StructuredError::InvalidArgument {
                    name: "values",
                    reason: format!(
                        "stored stencil value {} (row {j}, entry {t}) joins grid node {multi:?} \
                         to a neighbour outside the grid and must be zero, got {}",
                        j * g.h + t,
                        row[t]
                    ),
                });
            }
        }
        g.data = values;
        Ok(g)
    }

    /// Values stored per row, `((2r+1)^d + 1)/2`, for `d` dimensions and radius `r`; `None`
    /// if `(2r+1)^d` overflows `usize`. (Memory estimates use it before any grid exists.)
    pub fn stored_row_len(dims: usize, radius: usize) -> Option<usize> {
        let q = radius.checked_mul(2)?.checked_add(1)?;
        q.checked_pow(u32::try_from(dims).ok()?)
            .map(|k| k.div_ceil(2))
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

    /// Entries of the whole stencil of a row, `(2r+1)^d` (half of them are stored, see
    /// [`row_len`](Self::row_len)).
    pub fn stencil_len(&self) -> usize {
        self.k
    }

    /// Values stored per row, `((2r+1)^d + 1)/2`: the diagonal and the offsets after it.
    pub fn row_len(&self) -> usize {
        self.h
    }

    /// The multi-offset `Δ` of stencil entry `e` (`e < stencil_len()`, C order); stored value
    /// `t` of a row is entry `e = stencil_len()/2 + t`.
    pub fn stencil_offset(&self, e: usize) -> Option<&[isize]> {
        let d = self.sizes.len();
        self.deltas.get(e * d..(e + 1) * d)
    }

    /// Raw values, `m × row_len()`: value `t` of row `j` is `S[j, j + Δ_e]` for the stencil
    /// entry `e = stencil_len()/2 + t` (see the [module docs](super)).
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        // The caller may change which rows are empty.
        self.plan = OnceLock::new();
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
        Some(self.stored(i, j, e))
    }

    /// `S[i, i + Δ_e]` for the neighbour `j = i + Δ_e`, from row `i` when `e` is in the
    /// stored half, else from row `j` (entry `k − 1 − e`, the offset `−Δ_e`).
    fn stored(&self, i: usize, j: usize, e: usize) -> f64 {
        let c = self.k / 2;
        if e >= c {
            self.data[i * self.h + (e - c)]
        } else {
            self.data[j * self.h + (self.k - 1 - e - c)]
        }
    }

    /// Number of entries of the matrix that are not exactly zero (both halves).
    pub fn nnz(&self) -> usize {
        let h = self.h;
        let (all, diagonal) = self
            .data
            .par_chunks(h)
            .map(|row| {
                let all = row.iter().filter(|v| **v != 0.0).count();
                (all, usize::from(row[0] != 0.0))
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        // Every stored off-diagonal value stands for two entries.
        2 * all - diagonal
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
        self.plan = OnceLock::new();
        Ok(())
    }

    /// The matrix in CSR form with exact zeros dropped (columns ascending in each row; both
    /// halves).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..self.m)
            .into_par_iter()
            .map(|i| {
                let mut multi = vec![0usize; self.sizes.len()];
                self.multi_of(i, &mut multi);
                let mut cols = Vec::new();
                let mut vals = Vec::new();
                for e in 0..self.k {
                    if !self.neighbour_in_grid(&multi, e) {
                        continue;
                    }
                    let j = (i as isize + self.offsets[e]) as usize;
                    let v = self.stored(i, j, e);
                    if v != 0.0 {
                        cols.push(j);
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

    pub(super) fn multi_of(&self, j: usize, multi: &mut [usize]) {
        for ((mi, &s), &ml) in multi.iter_mut().zip(&self.strides).zip(&self.sizes) {
            *mi = (j / s) % ml;
        }
    }

    pub(super) fn neighbour_in_grid(&self, multi: &[usize], e: usize) -> bool {
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
}
