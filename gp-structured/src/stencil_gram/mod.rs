//! [`StencilGram`]: a symmetric `m × m` matrix on a regular grid whose non-zeros join grid
//! nodes at most `r` steps apart in every dimension, stored as the upper half of a dense
//! grid-offset stencil.
//!
//! This is the storage of `S = WᵀW` ([`SufficientStats`](crate::sufficient_stats::SufficientStats)):
//! for cubic weights two nodes share a point only if their multi-indices differ by at most 3 in
//! every dimension (`r = 3`, `7^d` offsets), for linear by at most 1 (`r = 1`, `3^d`).
//!
//! # Layout
//!
//! Number the `k = (2r+1)^d` offsets `Δ ∈ {−r..r}^d` in C order (last dimension fastest);
//! the centre `Δ = 0` is entry `c = (k − 1)/2`, and the entries after it are exactly the
//! offsets that are lexicographically positive. Row `j` stores the `h = (k + 1)/2` values
//! `S[j, j + Δ_e]` for `e = c, …, k − 1` (the diagonal first), with zeros where `j + Δ`
//! leaves the grid; the other half is `S[j, j − Δ] = S[j − Δ, j]`, stored in row `j − Δ`.
//! In a row the values come as one partial line of `r + 1` (the last-dimension offsets
//! `0..=r` of the centre line), then `((2r+1)^{d−1} − 1)/2` whole lines of `2r + 1`
//! consecutive last-dimension offsets.
//!
//! Why a stencil and not CSR: no column indices are stored (8 bytes per entry instead of 16),
//! entry `(j, j+Δ)` has a fixed address so the streaming accumulation and [`merge`] are plain
//! array additions, and the product `S x` reads each row contiguously with fixed offsets. Why
//! half: the product is limited by streaming the values, and symmetry makes the other half
//! redundant (it also halves the memory: 70 MB instead of 140 MB for the radar-like
//! `80·80·8` cubic grid). The cost is that every grid node has a full row even when no data
//! are near it; for grids that data cover only sparsely use [`StencilGram::to_csr`], which
//! drops exact zeros.
//!
//! # The product
//!
//! * `x` is first copied into a grid padded with `r` zero nodes on every side, and `S x` is
//!   accumulated in a padded grid too. Every stencil neighbour of every node then has an
//!   address, so boundary nodes use the same kernel as interior ones with no bounds tests per
//!   entry (the stored values for neighbours outside the grid are zero, and the padded `x` is
//!   zero there too).
//! * Row `j` adds `Σ_e s_e x[j + Δ_e]` to `out[j]` (its upper half) and `s_e x[j]` to
//!   `out[j + Δ_e]` for each stored off-diagonal `s_e` (the lower half, as a scatter): each
//!   stored value is read once and used twice. The kernel has the line length as a
//!   compile-time constant and sums into independent accumulators.
//! * Rows that are entirely zero (nodes with no data nearby, or whose upper half is empty) are
//!   flagged on the first product after the values change (or by [`StencilGram::prepare`])
//!   and are not read again.
//! * Large stencils are prefetched in software, a few live rows ahead of the row being
//!   multiplied: the hardware prefetchers stop at every 4 KiB page and lose the stream at the
//!   skipped rows, which left the product at less than half the machine's streaming rate.
//! * The padded grid is cut into blocks of `B` consecutive padded nodes, `B` longer than the
//!   largest offset, so a row writes only into its own block and the next. Blocks with even
//!   numbers run in parallel first, then those with odd numbers (each task owns its block and
//!   the next). The order in which the contributions reach an output entry is fixed by the
//!   blocks, so the result is the same bit for bit sequentially, in parallel and for any
//!   thread count.
//!
//! [`merge`]: crate::sufficient_stats::SufficientStats::merge

mod kernels;
mod plan;
mod product;
mod storage;

use std::sync::OnceLock;

// The tests below use these through `use super::*`.
#[cfg(test)]
use gp_linalg::LinearOperator;
#[cfg(test)]
use sprs::CsMat;

use plan::ProductPlan;

/// A symmetric banded ("stencil") matrix on a regular grid, stored as the upper half of its
/// stencil; see the [module docs](self).
///
/// Equality compares the grid, the radius and the stored values.
#[derive(Debug, Clone)]
pub struct StencilGram {
    sizes: Vec<usize>,
    strides: Vec<usize>,
    m: usize,
    radius: usize,
    /// `(2r+1)^d`, the whole stencil.
    k: usize,
    /// `(k + 1)/2`, the stored values per row.
    h: usize,
    /// Flat offset of each stencil entry (all `k`).
    offsets: Vec<isize>,
    /// Multi-offsets, `k × d`, row-major.
    deltas: Vec<isize>,
    /// C strides of the grid padded by `r` nodes on each side, and its number of nodes.
    padded_strides: Vec<usize>,
    padded_len: usize,
    /// Offset in the padded grid of the first entry of each whole line of `2r+1` stored
    /// values (the lines after the centre's partial line).
    padded_line_offsets: Vec<isize>,
    /// Padded nodes per block of the product: more than the largest padded offset of a stored
    /// entry, `r·Σ_l padded_stride_l`.
    block_len: usize,
    data: Vec<f64>,
    /// Which rows are not all zero and where each block's rows start, derived from `data` on
    /// first use by the product; reset whenever `data` may change.
    plan: OnceLock<ProductPlan>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The largest padded offset of a stored entry.
    fn reach(g: &StencilGram) -> usize {
        g.radius * g.padded_strides.iter().sum::<usize>()
    }

    /// A stencil with random values wherever the neighbour is inside the grid (zeros
    /// elsewhere, as the sufficient statistics produce) and every third row empty.
    fn random_stencil(sizes: &[usize], radius: usize, seed: u64) -> StencilGram {
        let mut g = StencilGram::zeros(sizes, radius).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (k, h, d) = (g.k, g.h, sizes.len());
        let mut multi = vec![0usize; d];
        let mut vals = vec![0.0; g.data.len()];
        for j in (0..g.m).filter(|j| j % 3 != 1) {
            g.multi_of(j, &mut multi);
            for e in k / 2..k {
                if g.neighbour_in_grid(&multi, e) {
                    vals[j * h + e - k / 2] = rng.random::<f64>() - 0.5;
                }
            }
        }
        g.values_mut().copy_from_slice(&vals);
        g
    }

    #[test]
    fn all_radii_match_the_csr_product() {
        // Radii 0, 2 and 4 are not produced by the sufficient statistics; 4 takes the kernel
        // without a compile-time line length.
        for (sizes, radius) in [
            (vec![9], 0),
            (vec![7, 6], 2),
            (vec![20, 3], 4),
            (vec![5, 11, 10], 4),
            (vec![12, 9, 8], 1),
            (vec![10, 9, 11], 3),
        ] {
            let g = random_stencil(&sizes, radius, 7);
            let x = random_vec(g.m, 11);
            let mut out = vec![f64::NAN; g.m];
            g.matvec_slice(&x, &mut out);
            assert_csr_product(
                &g.to_csr().unwrap(),
                &x,
                &out,
                &format!("{sizes:?} r={radius}"),
            );
        }
    }

    /// `m` values uniform in `[−0.5, 0.5)` from `seed`.
    fn random_vec(m: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..m).map(|_| rng.random::<f64>() - 0.5).collect()
    }

    /// `out` is `S x` for the CSR form of `S`, entry by entry to `1e-14` of `Σ_j |S_ij x_j|`.
    fn assert_csr_product(csr: &CsMat<f64>, x: &[f64], out: &[f64], case: &str) {
        for (i, row) in csr.outer_iterator().enumerate() {
            let (want, scale) = row.iter().fold((0.0, 0.0), |(s, a), (j, &v)| {
                (s + v * x[j], a + (v * x[j]).abs())
            });
            assert!(
                (out[i] - want).abs() <= 1e-14 * scale,
                "{case} row {i}: {} vs {want}",
                out[i]
            );
        }
    }

    #[test]
    fn dispatched_kernel_equals_the_baseline_build_bit_for_bit() {
        // `rows_into` takes the AVX2 copy on CPUs that have it; the baseline body must give
        // the same bits (same operations in the same order, no fused multiply-add).
        for (sizes, radius) in [(vec![9, 8, 7], 3), (vec![30], 3), (vec![6, 13], 1)] {
            let g = random_stencil(&sizes, radius, 5);
            let x = random_vec(g.m, 3);
            let xp = g.padded_x(&x);
            let live = &g.plan().live;
            let (mut a, mut b) = (vec![0.0; g.padded_len], vec![0.0; g.padded_len]);
            g.rows_into(0..g.m, 0, &xp, live, &mut a);
            g.rows_into_body(0..g.m, 0, &xp, live, &mut b);
            assert!(
                a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{sizes:?}"
            );
        }
    }

    #[test]
    fn blocks_of_any_length_give_the_same_product() {
        // Blocks barely longer than the reach (many blocks, rows of one block writing into
        // the next) and one block for the whole grid; the product must match the CSR one,
        // and the block plan must list every row once.
        for (sizes, radius) in [(vec![9, 8, 7], 3), (vec![40], 3), (vec![6, 13], 1)] {
            let g = random_stencil(&sizes, radius, 9);
            let x = random_vec(g.m, 4);
            let csr = g.to_csr().unwrap();
            for block_len in [reach(&g) + 1, reach(&g) + 7, g.padded_len] {
                let mut gb = g.clone();
                gb.block_len = block_len;
                gb.plan = OnceLock::new();
                let rows = &gb.plan().block_rows;
                assert_eq!((rows[0], *rows.last().unwrap()), (0, g.m));
                assert!(rows.windows(2).all(|w| w[0] <= w[1]));
                let mut out = vec![f64::NAN; g.m];
                gb.matvec_slice(&x, &mut out);
                assert_csr_product(&csr, &x, &out, &format!("{sizes:?} block {block_len}"));
            }
        }
    }

    #[test]
    fn both_halves_read_the_stored_half() {
        let g = random_stencil(&[5, 6, 4], 3, 2);
        let csr = g.to_csr().unwrap();
        let mut count = 0;
        for i in 0..g.m {
            for j in 0..g.m {
                let v = g.entry(i, j).unwrap();
                assert_eq!(v.to_bits(), g.entry(j, i).unwrap().to_bits());
                assert_eq!(v, csr.get(i, j).copied().unwrap_or(0.0));
                count += usize::from(v != 0.0);
            }
        }
        assert_eq!(g.nnz(), count);
        assert_eq!(csr.nnz(), count);
        let diag = g.diagonal().unwrap();
        assert!((0..g.m).all(|j| diag[j] == g.entry(j, j).unwrap()));
        assert_eq!(StencilGram::stored_row_len(3, 3), Some(172));
        assert_eq!(StencilGram::stored_row_len(1, 1), Some(2));
        assert_eq!(g.row_len(), 172);
    }
}
