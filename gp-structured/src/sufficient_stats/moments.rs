//! The cell-moment path of the statistics pass (for many points per grid cell): per worker,
//! the `(2w−1)^d + w^d` moment sums of every grid cell, expanded into the stencil of `S` and
//! into `t` once per occupied cell at the end. See the [parent module](super).

use faer::{Col, ColRef, MatRef};
use rayon::prelude::*;

use super::{check_chunk, check_compatible, prefault, SufficientStats};
use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{locate_rows, InterpolationOptions, InterpolationScheme, Locator};
use crate::slice_util::{c_strides, checked_product};
use crate::stencil_gram::StencilGram;

mod kernel;

use kernel::{add_moments, PackedPoints};

/// Streaming accumulator of per-cell moments; see the [module docs](super).
#[derive(Debug, Clone)]
pub(super) struct MomentAccumulator {
    grid: RegularGrid,
    opts: InterpolationOptions,
    loc: Locator,
    /// Cells per dimension (`m_l − w + 1`) and their C strides.
    cell_strides: Vec<usize>,
    cells: usize,
    /// Moments per cell: `(2w−1)^d` for `S`, then `w^d` for `t`.
    q_len: usize,
    y_len: usize,
    /// Lazily allocated `cells × (q_len + y_len)`.
    moments: Vec<f64>,
    yty: f64,
    n: usize,
}

impl MomentAccumulator {
    /// An empty accumulator for `grid` (no memory is reserved until the first chunk).
    pub(super) fn new(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        let loc = Locator::new(grid, opts)?;
        let w = opts.scheme.stencil_width();
        let d = grid.dims();
        let cell_sizes: Vec<usize> = grid.sizes().iter().map(|&m| m - w + 1).collect();
        let cells = checked_product(&cell_sizes, "grid")?;
        let q_len = checked_product(&vec![2 * w - 1; d], "grid")?;
        let y_len = checked_product(&vec![w; d], "grid")?;
        cells
            .checked_mul(q_len + y_len)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "grid",
                reason: format!("{cells} cells × {} moments overflow usize", q_len + y_len),
            })?;
        // The final stencil (m × (2w−1)^d values) must be representable too.
        grid.num_points()
            .checked_mul(q_len)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "grid",
                reason: format!(
                    "{} nodes × {q_len} stencil entries overflow usize",
                    grid.num_points()
                ),
            })?;
        Ok(Self {
            grid: grid.clone(),
            opts,
            loc,
            cell_strides: c_strides(&cell_sizes),
            cells,
            q_len,
            y_len,
            moments: Vec::new(),
            yty: 0.0,
            n: 0,
        })
    }

    /// Points accumulated so far.
    pub(super) fn num_points(&self) -> usize {
        self.n
    }

    /// Number of grid cells (`Π (m_l − w + 1)`).
    pub(super) fn cells(&self) -> usize {
        self.cells
    }

    /// Adds a chunk of points `x` (`n_c × d`) with targets `y`. On error (wrong shapes, a
    /// non-finite value, a point outside the grid) the accumulator is unchanged. `first` is
    /// the index of the chunk's first row in error messages.
    pub(super) fn add_rows(
        &mut self,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        first: usize,
    ) -> Result<()> {
        check_chunk(&self.grid, x, y)?;
        let (nc, d) = (x.nrows(), x.ncols());
        // First locate everything, so that an error leaves `self` untouched.
        let mut cells = vec![0; nc];
        let mut taus = vec![0.0; nc * d];
        locate_rows(
            &self.loc,
            x,
            first,
            &self.cell_strides,
            &mut cells,
            &mut taus,
        )?;
        if self.moments.is_empty() {
            self.moments = vec![0.0; self.cells * (self.q_len + self.y_len)];
            prefault(&mut self.moments);
        }
        // The points in cell order, packed, so that each cell's record stays in cache while
        // its points are added (the records of all cells usually do not fit in cache) and the
        // points are read sequentially.
        let pts = PackedPoints::sorted(d, &cells, &taus, |i| y[i], self.cells);
        let (moments, yty) = (&mut self.moments, &mut self.yty);
        let (q_len, y_len) = (self.q_len, self.y_len);
        match self.opts.scheme {
            InterpolationScheme::Cubic => add_moments::<4, 7>(&pts, moments, q_len, y_len, yty),
            InterpolationScheme::Linear => add_moments::<2, 3>(&pts, moments, q_len, y_len, yty),
        }
        self.n += nc;
        Ok(())
    }

    /// Adds another accumulator on the same grid and scheme.
    pub(super) fn merge(mut self, other: Self) -> Result<Self> {
        check_compatible(&self.grid, self.opts, &other.grid, other.opts)?;
        if self.moments.is_empty() {
            self.moments = other.moments;
        } else if !other.moments.is_empty() {
            self.moments
                .par_iter_mut()
                .zip(other.moments.par_iter())
                .for_each(|(a, b)| *a += b);
        }
        self.yty += other.yty;
        self.n += other.n;
        Ok(self)
    }

    /// Expands the per-cell moments into `S = WᵀW` and `t = Wᵀy`.
    pub(super) fn finish(self) -> Result<SufficientStats> {
        let w = self.opts.scheme.stencil_width();
        let sizes = self.grid.sizes().to_vec();
        let mut gram = StencilGram::zeros(&sizes, w - 1)?;
        let mut wty = vec![0.0; self.grid.num_points()];
        if !self.moments.is_empty() {
            prefault(gram.values_mut());
            Expansion::new(&self, &gram).run(&self, gram.values_mut(), &mut wty);
        }
        Ok(SufficientStats {
            grid: self.grid,
            opts: self.opts,
            gram,
            wty: Col::from_fn(wty.len(), |j| wty[j]),
            yty: self.yty,
            n: self.n,
        })
    }
}

/// Precomputed tables for expanding one cell's moments.
struct Expansion {
    d: usize,
    w: usize,
    /// Transposed pair coefficients `Pᵀ` (`q × w(w+1)/2`): entry `[s][u]` is the coefficient
    /// of `τ^s` in `w_a(τ)·w_{a'}(τ)` for the `u`-th unordered pair `a ≤ a'` (the product is
    /// symmetric in the pair, so contracting over unordered pairs does 1.6× fewer operations
    /// per axis, ≈ 3× fewer at `d = 3`, and gives the same values).
    pair_t: Vec<f64>,
    /// Transposed weight coefficients `Cᵀ` (`w × w`): entry `[k][a]` = coefficient of `τ^k`
    /// in `w_a(τ)`.
    weight_t: Vec<f64>,
    /// The multi-pairs (C order over dimensions of `a·w + a'`) whose offset `a' − a` is in
    /// the stored half of the stencil: index of its unordered multi-pair in the contracted
    /// moments, node offset of `a` and the stored position of `a' − a` in the row of `a`.
    /// (The mirrored pair carries the same value and is not stored.)
    scatter: Vec<(usize, usize, usize)>,
    /// Node offsets of the `w^d` stencil nodes.
    node_offsets: Vec<usize>,
    /// Stored values per row of `S`.
    h: usize,
}

gp_linalg::simd_dispatch! {
    /// One step of a tensor contraction with axis rotation: `src` has shape `(Q, R)` (the
    /// axis being contracted first), `dst` gets shape `(R, NP)`,
    /// `dst[r][p] = Σ_s src[s][r]·pt[s][p]`. After `d` steps the axes are back in their
    /// original order, each contracted. AVX2 build where the CPU has it (no FMA: same bits).
    fn rotate_contract<const Q: usize, const NP: usize>(
        src: &[f64],
        pt: &[f64],
        dst: &mut Vec<f64>,
    ) = rotate_contract_body, avx2 via rotate_contract_avx2;
}

#[inline(always)]
fn rotate_contract_body<const Q: usize, const NP: usize>(
    src: &[f64],
    pt: &[f64],
    dst: &mut Vec<f64>,
) {
    let r_len = src.len() / Q;
    dst.clear();
    dst.resize(r_len * NP, 0.0);
    for s in 0..Q {
        let mut coef = [0.0; NP];
        coef.copy_from_slice(&pt[s * NP..(s + 1) * NP]);
        let row = &src[s * r_len..(s + 1) * r_len];
        for (t, out) in row.iter().zip(dst.as_chunks_mut::<NP>().0) {
            for p in 0..NP {
                out[p] += t * coef[p];
            }
        }
    }
}

impl Expansion {
    fn new(acc: &MomentAccumulator, gram: &StencilGram) -> Self {
        let d = acc.grid.dims();
        let w = acc.opts.scheme.stencil_width();
        let q = 2 * w - 1;
        let r = w - 1;
        let np = w * w;
        // Unordered pairs a ≤ b, numbered in order; `unordered[a·w + b]` for any order.
        let nu = w * (w + 1) / 2;
        let mut unordered = vec![0; np];
        let mut u = 0;
        for a in 0..w {
            for b in a..w {
                unordered[a * w + b] = u;
                unordered[b * w + a] = u;
                u += 1;
            }
        }
        let coeffs = acc.opts.scheme.coeffs();
        let mut pair_t = vec![0.0; q * nu];
        for a in 0..w {
            for b in a..w {
                for k1 in 0..w {
                    for k2 in 0..w {
                        pair_t[(k1 + k2) * nu + unordered[a * w + b]] +=
                            coeffs[a][k1] * coeffs[b][k2];
                    }
                }
            }
        }
        let mut weight_t = vec![0.0; w * w];
        for a in 0..w {
            for k in 0..w {
                weight_t[k * w + a] = coeffs[a][k];
            }
        }
        let strides = acc.grid.strides();
        let total = np.pow(d as u32);
        let centre = gram.stencil_len() / 2;
        let mut scatter = Vec::with_capacity(total / 2 + 1);
        for idx in 0..total {
            let mut rem = idx;
            let (mut node, mut entry, mut pair) = (0usize, 0usize, 0usize);
            let (mut qpow, mut upow) = (1usize, 1usize);
            for l in (0..d).rev() {
                let p = rem % np;
                rem /= np;
                let (a, b) = (p / w, p % w);
                node += a * strides[l];
                entry += (b + r - a) * qpow;
                pair += unordered[p] * upow;
                qpow *= q;
                upow *= nu;
            }
            if entry >= centre {
                scatter.push((pair, node, entry - centre));
            }
        }
        let node_offsets = crate::interpolation::stencil_offsets(strides, w);
        Self {
            d,
            w,
            pair_t,
            weight_t,
            scatter,
            node_offsets,
            h: gram.row_len(),
        }
    }

    /// Contracts every axis of `src` (`len^d` values) with the transposed matrix `pt`
    /// (`len × rows`); the result (`rows^d`, C order) is left in `a`.
    fn contract(&self, src: &[f64], pt: &[f64], gram: bool, a: &mut Vec<f64>, b: &mut Vec<f64>) {
        a.clear();
        a.extend_from_slice(src);
        for _ in 0..self.d {
            match (self.w, gram) {
                (4, true) => rotate_contract::<7, 10>(a, pt, b),
                (4, false) => rotate_contract::<4, 4>(a, pt, b),
                (_, true) => rotate_contract::<3, 3>(a, pt, b),
                (_, false) => rotate_contract::<2, 2>(a, pt, b),
            }
            std::mem::swap(a, b);
        }
    }

    fn run(&self, acc: &MomentAccumulator, gram: &mut [f64], wty: &mut [f64]) {
        let (w, h) = (self.w, self.h);
        let sizes = acc.grid.sizes();
        let s0 = acc.grid.strides()[0];
        let cells0 = sizes[0] - w + 1;
        let cells_per_slab = acc.cells / cells0;
        let rec = acc.q_len + acc.y_len;
        let cell_sizes: Vec<usize> = sizes.iter().map(|&m| m - w + 1).collect();
        let strides = acc.grid.strides();
        // Slabs of cells with first index i touch nodes with first index i..i+w−1; slabs whose
        // first indices differ by ≥ w touch disjoint node ranges, so each phase is parallel.
        for phase in 0..w.min(cells0) {
            let g = &mut gram[phase * s0 * h..];
            let t = &mut wty[phase * s0..];
            g.par_chunks_mut(w * s0 * h)
                .zip(t.par_chunks_mut(w * s0))
                .enumerate()
                .for_each(|(c, (g, t))| {
                    let i = phase + c * w;
                    if i >= cells0 {
                        return;
                    }
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    for cr in 0..cells_per_slab {
                        let cell = i * cells_per_slab + cr;
                        let record = &acc.moments[cell * rec..(cell + 1) * rec];
                        if record[0] == 0.0 {
                            continue; // no points in this cell
                        }
                        // Node (relative to the slab start) of the cell's first stencil node.
                        let mut rem = cr;
                        let mut node = 0;
                        for l in (1..self.d).rev() {
                            node += (rem % cell_sizes[l]) * strides[l];
                            rem /= cell_sizes[l];
                        }
                        let (mq, my) = record.split_at(acc.q_len);
                        self.contract(mq, &self.pair_t, true, &mut a, &mut b);
                        for &(pair, sn, se) in &self.scatter {
                            g[(node + sn) * h + se] += a[pair];
                        }
                        self.contract(my, &self.weight_t, false, &mut a, &mut b);
                        for (v, &off) in a.iter().zip(&self.node_offsets) {
                            t[node + off] += v;
                        }
                    }
                });
        }
    }
}

/// Runs `work(worker, workers, acc)` on one accumulator per rayon thread and merges the
/// accumulators in worker order (a fixed summation order).
pub(super) fn run_workers<G>(
    grid: &RegularGrid,
    opts: InterpolationOptions,
    work: G,
) -> Result<MomentAccumulator>
where
    G: Fn(usize, usize, &mut MomentAccumulator) -> Result<()> + Sync,
{
    let workers = rayon::current_num_threads().max(1);
    let accs = (0..workers)
        .into_par_iter()
        .map(|w| {
            let mut acc = MomentAccumulator::new(grid, opts)?;
            work(w, workers, &mut acc)?;
            Ok(acc)
        })
        .collect::<Result<Vec<_>>>()?;
    merge_in_order(grid, opts, accs)
}

/// Merges accumulators in the order given.
pub(super) fn merge_in_order(
    grid: &RegularGrid,
    opts: InterpolationOptions,
    accs: Vec<MomentAccumulator>,
) -> Result<MomentAccumulator> {
    let mut total: Option<MomentAccumulator> = None;
    for acc in accs {
        total = Some(match total {
            None => acc,
            Some(t) => t.merge(acc)?,
        });
    }
    match total {
        Some(t) => Ok(t),
        None => MomentAccumulator::new(grid, opts),
    }
}
