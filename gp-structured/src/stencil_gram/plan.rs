//! What the product derives once from the values and the grid: the rows that are not all
//! zero and the rows where each block of the product starts.

use rayon::prelude::*;

use super::product::PAR_CHUNK_VALUES;
use super::StencilGram;

/// What the product derives once from the values and the grid.
#[derive(Debug, Clone)]
pub(super) struct ProductPlan {
    /// Rows with a non-zero stored value.
    pub(super) live: Vec<bool>,
    /// First row of each block of `block_len` padded nodes (one more entry than blocks).
    pub(super) block_rows: Vec<usize>,
}

impl StencilGram {
    /// Does now the one pass over the values that the first product would otherwise do:
    /// finding the all-zero rows, which the product skips. Call it where set-up time belongs
    /// (a model's construction), so that the first product costs what the others do (for
    /// the radar-like `80·80·8` stencil the pass is about as long as a product). The result
    /// is kept until the values change.
    pub fn prepare(&self) {
        self.plan();
    }

    /// The product's plan, computed on first use (one pass over the values) and kept until
    /// the values change. The product skips rows that are all zero without reading them:
    /// the nodes with no data nearby (the padding ring of a data-fitted grid, regions the
    /// data do not cover).
    pub(super) fn plan(&self) -> &ProductPlan {
        self.plan.get_or_init(|| {
            let h = self.h;
            let mut live = vec![false; self.m];
            let chunk = PAR_CHUNK_VALUES.div_ceil(h);
            live.par_chunks_mut(chunk)
                .zip(self.data.par_chunks(chunk * h))
                .for_each(|(flags, rows)| {
                    for (f, row) in flags.iter_mut().zip(rows.chunks_exact(h)) {
                        *f = row.iter().any(|v| *v != 0.0);
                    }
                });
            // Rows in increasing order have increasing padded indices.
            let blocks = self.padded_len.div_ceil(self.block_len);
            let mut block_rows = Vec::with_capacity(blocks + 1);
            block_rows.push(0);
            let (d, last) = (self.sizes.len(), self.sizes[self.sizes.len() - 1]);
            let mut multi = vec![0usize; d];
            let mut row = 0;
            for b in 1..blocks {
                let start = b * self.block_len;
                // Whole grid lines first, then nodes.
                while row < self.m {
                    self.multi_of(row, &mut multi);
                    multi[d - 1] = last - 1;
                    if self.padded_index(&multi) >= start {
                        break;
                    }
                    row = (row / last + 1) * last;
                }
                while row < self.m {
                    self.multi_of(row, &mut multi);
                    if self.padded_index(&multi) >= start {
                        break;
                    }
                    row += 1;
                }
                block_rows.push(row.min(self.m));
            }
            block_rows.push(self.m);
            ProductPlan { live, block_rows }
        })
    }

    /// Index in the zero-padded grid of the node with multi-index `multi`.
    pub(super) fn padded_index(&self, multi: &[usize]) -> usize {
        multi
            .iter()
            .zip(&self.padded_strides)
            .map(|(&i, &s)| (i + self.radius) * s)
            .sum()
    }
}
