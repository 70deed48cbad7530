//! The product `S x`: the padded input and output, the blocks of the parallel product and
//! the operator traits.

use faer::{Col, ColMut, ColRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;

use super::StencilGram;
use crate::slice_util::{col_as_slice, with_out_slice};

/// Stored values per parallel task of the product at least (about 0.5 MB): large enough that
/// task overhead is negligible, small enough for load balance on a few cores. A block is
/// also longer than the stencil's reach (see the module docs).
pub(super) const PAR_CHUNK_VALUES: usize = 1 << 16;

/// How far ahead of the row being multiplied the product prefetches stored values (in bytes,
/// rounded to whole rows, at least one row): 16 KiB. Without it the hardware prefetchers,
/// which stop at 4 KiB page boundaries and are thrown off by the skipped all-zero rows, left
/// the product at 12 GB/s on one thread against 27 GB/s for a plain sum (radar-like 80×80×8
/// grid, `stencil_bench --case 4`, whole stencil: one thread 8.4 → 3.4 ms; 4 to 8 rows ahead
/// measured alike, 16 worse).
pub(super) const PREFETCH_BYTES: usize = 16 << 10;

/// Stencils smaller than this (bytes of stored values) are not prefetched: they stay in the
/// caches between the products of an iterative solve, and the prefetch instructions cost
/// (a 10×10×10 cubic stencil: 0.032 → 0.047 ms per product with them).
pub(super) const PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Below this many stored values (8 MB, e.g. 6 000 nodes at `d = 3` cubic) the product runs
/// on the calling thread: the work (about 0.2 ms or less) does not amortise waking the pool
/// (measured: 1 000 nodes at `d = 3` are no faster on two threads).
const PAR_MIN_VALUES: usize = 1 << 20;

impl StencilGram {
    /// `x` embedded in a grid with `r` zero nodes added on each side of every dimension, so
    /// that every stencil neighbour of every node has an address and those outside the grid
    /// read zero. Its size is at most `m·(2r+1)^d` (the stencil), in practice a small
    /// fraction of it (`46·46·38` for a `40·40·32` grid).
    pub(super) fn padded_x(&self, x: &[f64]) -> Vec<f64> {
        let mut xp = vec![0.0; self.padded_len];
        self.for_each_grid_line(|t, p, last| xp[p..p + last].copy_from_slice(&x[t..t + last]));
        xp
    }

    /// Calls `f(first node, its padded index, line length)` for every grid line along the
    /// last dimension.
    pub(super) fn for_each_grid_line(&self, mut f: impl FnMut(usize, usize, usize)) {
        let d = self.sizes.len();
        let last = self.sizes[d - 1];
        let mut multi = vec![0usize; d];
        for t in (0..self.m).step_by(last) {
            self.multi_of(t, &mut multi);
            f(t, self.padded_index(&multi), last);
        }
    }

    /// `out = S x` for contiguous slices (`x.len() == out.len() == m`); see the module docs
    /// for the blocks and why the result does not depend on the thread count.
    pub(super) fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        let plan = self.plan();
        let xp = self.padded_x(x);
        let mut yp = vec![0.0; self.padded_len];
        let b = self.block_len;
        let parallel = self.data.len() >= PAR_MIN_VALUES && rayon::current_num_threads() > 1;
        for phase in 0..2 {
            let Some(ys) = yp.get_mut(phase * b..) else {
                break;
            };
            // Task `c` owns blocks `2c + phase` and `2c + phase + 1`, and multiplies the rows
            // of the first.
            let task = |(c, y): (usize, &mut [f64])| {
                let block = 2 * c + phase;
                let rows = plan.block_rows[block]..plan.block_rows[block + 1];
                self.rows_into(rows, block * b, &xp, &plan.live, y);
            };
            if parallel {
                ys.par_chunks_mut(2 * b).enumerate().for_each(task);
            } else {
                ys.chunks_mut(2 * b).enumerate().for_each(task);
            }
        }
        self.for_each_grid_line(|t, p, last| out[t..t + last].copy_from_slice(&yp[p..p + last]));
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
        Some(Col::from_fn(self.m, |j| self.data[j * self.h]))
    }
}

/// `WᵀW` is symmetric: the transpose product is the product.
impl TransposeOperator for StencilGram {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matvec(x, out)
    }
}
