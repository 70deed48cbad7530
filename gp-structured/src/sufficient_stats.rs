//! The GSGP sufficient statistics `S = WᵀW`, `t = Wᵀy`, `q = yᵀy` and `n`, accumulated in one
//! streaming pass over chunks of points without materializing `W` (`specs/gsgp.md` §2.2).
//!
//! # Algorithm (per-cell moments)
//!
//! The 1-D weights of a point are polynomials of degree `p = w − 1` (3 cubic, 1 linear) in its
//! fractional offset `τ ∈ [0, 1]` within its grid cell, so a product of two weights is a
//! polynomial of degree `2p` and the block `w wᵀ` that a point adds to `S` is a fixed linear
//! function of the `(2p+1)^d` joint moments `Π_l τ_l^{s_l}`. The pass therefore keeps, per
//! grid cell, the sums of these moments (`7^d` for cubic: 343 multiply-adds per point at
//! `d = 3` instead of the 4096 of the direct `w wᵀ` update) plus the `w^d` moments of `y·τ`
//! for `Wᵀy`, in one contiguous record per cell. [`StatsAccumulator::finish`] expands each
//! occupied cell once into the stencil of `S` by `d` small mode products (about 47 000
//! multiply-adds per cell at `d = 3`) and into `t`.
//!
//! So the cost is `O(n·(2w−1)^d + cells·w^{2d}·(2w−1))`: at `d = 3` this beats the direct
//! `O(n·16^d)` update once the data average more than about 12 points per occupied cell, which
//! is the regime where GSGP pays off (`n ≫ m`); with about one point per cell the expansion
//! dominates. The accumulator needs `cells·((2w−1)^d + w^d)` doubles per worker (3.3 kB per
//! cell at `d = 3`), about as much as `S` itself.
//!
//! Exactness: the polynomial coefficients are small dyadic rationals, so the expansion is the
//! exact algebraic identity; the result agrees with forming `W` and multiplying up to
//! floating-point reassociation (tested to `1e-12` relative), and `S` is exactly symmetric.
//!
//! # Parallelism and merging
//!
//! [`SufficientStats::compute`] and [`SufficientStats::from_chunks`] run one accumulator per
//! rayon thread, each pulling chunks (from the rows of an in-memory matrix, or from any `Send`
//! iterator of chunks, e.g. a generator of `10^8` points), then merge. Partial results from
//! several passes or machines combine with [`SufficientStats::merge`] (or
//! [`StatsAccumulator::merge`]), which is an elementwise sum: associative and commutative up to
//! floating-point reassociation.

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::validate::check_finite_col;
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{check_points, expand_weights, InterpolationOptions, Locator};
use crate::slice_util::{c_strides, checked_product};
use crate::stencil_gram::StencilGram;

/// Smallest and largest rows per job of [`SufficientStats::compute`].
const JOB_ROWS: usize = 16_384;
const MAX_JOB_ROWS: usize = 1 << 20;

/// The GSGP sufficient statistics of a data set on a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct SufficientStats {
    grid: RegularGrid,
    opts: InterpolationOptions,
    gram: StencilGram,
    wty: Col<f64>,
    yty: f64,
    n: usize,
}

impl SufficientStats {
    /// Statistics of the rows of `x` (`n × d`) with targets `y` (length `n`), in parallel.
    pub fn compute(
        grid: &RegularGrid,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        opts: InterpolationOptions,
    ) -> Result<Self> {
        check_chunk(grid, x, y)?;
        let n = x.nrows();
        // Jobs of several points per cell (grouping a job's points by cell then reuses each
        // cell's record), but small enough for load balance and scratch memory.
        let workers = rayon::current_num_threads().max(1);
        let cells = StatsAccumulator::new(grid, opts)?.cells;
        let job = cells
            .saturating_mul(16)
            .min(n.div_ceil(2 * workers))
            .clamp(JOB_ROWS, MAX_JOB_ROWS);
        // Job j goes to worker j mod W and the workers' sums are merged in worker order, so
        // the floating-point summation order (and the result, to the last bit) does not
        // depend on thread scheduling; it depends only on the number of rayon threads.
        let jobs = n.div_ceil(job);
        let acc = run_workers(grid, opts, |worker, workers, acc| {
            let mut j = worker;
            while j < jobs {
                let start = j * job;
                let len = job.min(n - start);
                acc.add_chunk(x.subrows(start, len), y.subrows(start, len))?;
                j += workers;
            }
            Ok(())
        })?;
        acc.finish()
    }

    /// Statistics of a stream of chunks `(x_c, y_c)`, consumed in parallel (one accumulator per
    /// rayon thread); the chunks are never all held in memory.
    pub fn from_chunks<I>(grid: &RegularGrid, opts: InterpolationOptions, chunks: I) -> Result<Self>
    where
        I: IntoIterator<Item = (Mat<f64>, Col<f64>)>,
        I::IntoIter: Send,
    {
        // Rounds of one chunk per worker, read in stream order: chunk k of the stream always
        // lands in accumulator k mod W, so the result does not depend on thread scheduling
        // (only on the number of rayon threads). At most W chunks are held at a time.
        let workers = rayon::current_num_threads().max(1);
        let mut accs = (0..workers)
            .map(|_| StatsAccumulator::new(grid, opts))
            .collect::<Result<Vec<_>>>()?;
        let mut source = chunks.into_iter();
        loop {
            let round: Vec<(Mat<f64>, Col<f64>)> = source.by_ref().take(workers).collect();
            if round.is_empty() {
                break;
            }
            accs.par_iter_mut()
                .zip(round.par_iter())
                .map(|(acc, (x, y))| acc.add_chunk(x.as_ref(), y.as_ref()))
                .collect::<Result<Vec<()>>>()?;
        }
        merge_in_order(grid, opts, accs)?.finish()
    }

    /// Statistics of no data (all zero).
    pub fn empty(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        StatsAccumulator::new(grid, opts)?.finish()
    }

    /// Adds the statistics of another data set on the same grid and scheme (`merge(a, b)`).
    pub fn merge(mut self, other: &Self) -> Result<Self> {
        check_compatible(&self.grid, self.opts, &other.grid, other.opts)?;
        self.gram.add_assign(&other.gram)?;
        self.wty += &other.wty;
        self.yty += other.yty;
        self.n += other.n;
        Ok(self)
    }

    /// `S = WᵀW` as a stencil matrix (a [`LinearOperator`](gp_linalg::LinearOperator)).
    pub fn gram(&self) -> &StencilGram {
        &self.gram
    }

    /// `t = Wᵀy` (length `m`).
    pub fn wty(&self) -> ColRef<'_, f64> {
        self.wty.as_ref()
    }

    /// `q = yᵀy`.
    pub fn yty(&self) -> f64 {
        self.yty
    }

    /// Number of points `n`.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// The grid.
    pub fn grid(&self) -> &RegularGrid {
        &self.grid
    }

    /// The interpolation options.
    pub fn options(&self) -> InterpolationOptions {
        self.opts
    }
}

/// Streaming accumulator of per-cell moments; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct StatsAccumulator {
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

impl StatsAccumulator {
    /// An empty accumulator for `grid` (no memory is reserved until the first chunk).
    pub fn new(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
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
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// Adds a chunk of points `x` (`n_c × d`) with targets `y`. On error (wrong shapes, a
    /// non-finite value, a point outside the grid) the accumulator is unchanged.
    pub fn add_chunk(&mut self, x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<()> {
        check_chunk(&self.grid, x, y)?;
        let (nc, d) = (x.nrows(), x.ncols());
        // First locate everything, so that an error leaves `self` untouched.
        let mut cells = Vec::with_capacity(nc);
        let mut taus = Vec::with_capacity(nc * d);
        for i in 0..nc {
            let mut cell = 0;
            for l in 0..d {
                let (start, tau) = self.loc.locate_1d(i, l, x[(i, l)])?;
                cell += start * self.cell_strides[l];
                taus.push(tau);
            }
            cells.push(cell);
        }
        if self.moments.is_empty() {
            self.moments = vec![0.0; self.cells * (self.q_len + self.y_len)];
        }
        let w = self.opts.scheme.stencil_width();
        let q = 2 * w - 1;
        let rec = self.q_len + self.y_len;
        let mut pow_q = vec![0.0; d * q];
        let mut pow_w = vec![0.0; d * w];
        let mut pre_q = vec![0.0; self.q_len / q];
        let mut pre_w = vec![0.0; self.y_len / w];
        // Visit the points grouped by cell, so that each cell's record stays in cache while
        // its points are added (the records of all cells usually do not fit in cache).
        let order = order_by_cell(&cells, self.cells);
        for &i in &order {
            let (cell, tau) = (cells[i], &taus[i * d..(i + 1) * d]);
            for l in 0..d {
                let mut p = 1.0;
                for s in 0..q {
                    pow_q[l * q + s] = p;
                    p *= tau[l];
                }
                pow_w[l * w..(l + 1) * w].copy_from_slice(&pow_q[l * q..l * q + w]);
            }
            let yi = y[i];
            let record = &mut self.moments[cell * rec..(cell + 1) * rec];
            let (mq, my) = record.split_at_mut(self.q_len);
            expand_weights(&pow_q[..(d - 1) * q], q, &mut pre_q);
            let last_q = &pow_q[(d - 1) * q..];
            for (p, chunk) in pre_q.iter().zip(mq.chunks_exact_mut(q)) {
                for (c, l) in chunk.iter_mut().zip(last_q) {
                    *c += p * l;
                }
            }
            expand_weights(&pow_w[..(d - 1) * w], w, &mut pre_w);
            let last_w = &pow_w[(d - 1) * w..];
            for (p, chunk) in pre_w.iter().zip(my.chunks_exact_mut(w)) {
                let py = p * yi;
                for (c, l) in chunk.iter_mut().zip(last_w) {
                    *c += py * l;
                }
            }
            self.yty += yi * yi;
        }
        self.n += nc;
        Ok(())
    }

    /// Adds another accumulator on the same grid and scheme.
    pub fn merge(mut self, other: Self) -> Result<Self> {
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
    pub fn finish(self) -> Result<SufficientStats> {
        let w = self.opts.scheme.stencil_width();
        let sizes = self.grid.sizes().to_vec();
        let mut gram = StencilGram::zeros(&sizes, w - 1)?;
        let mut wty = vec![0.0; self.grid.num_points()];
        if !self.moments.is_empty() {
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
    /// Transposed pair coefficients `Pᵀ` (`q × w²`): entry `[s][a·w + a']` is the coefficient
    /// of `τ^s` in `w_a(τ)·w_{a'}(τ)`.
    pair_t: Vec<f64>,
    /// Transposed weight coefficients `Cᵀ` (`w × w`): entry `[k][a]` = coefficient of `τ^k`
    /// in `w_a(τ)`.
    weight_t: Vec<f64>,
    /// For each multi-pair (C order over dimensions of `a·w + a'`): node offset of `a` and the
    /// stencil entry of `a' − a`.
    scatter_node: Vec<usize>,
    scatter_entry: Vec<usize>,
    /// Node offsets of the `w^d` stencil nodes.
    node_offsets: Vec<usize>,
    k: usize,
}

/// One step of a tensor contraction with axis rotation: `src` has shape `(Q, R)` (the axis
/// being contracted first), `dst` gets shape `(R, NP)`, `dst[r][p] = Σ_s src[s][r]·pt[s][p]`.
/// After `d` steps the axes are back in their original order, each contracted.
fn rotate_contract<const Q: usize, const NP: usize>(src: &[f64], pt: &[f64], dst: &mut Vec<f64>) {
    let r_len = src.len() / Q;
    dst.clear();
    dst.resize(r_len * NP, 0.0);
    for s in 0..Q {
        let mut coef = [0.0; NP];
        coef.copy_from_slice(&pt[s * NP..(s + 1) * NP]);
        let row = &src[s * r_len..(s + 1) * r_len];
        for (t, out) in row.iter().zip(dst.chunks_exact_mut(NP)) {
            let out: &mut [f64; NP] = match out.try_into() {
                Ok(o) => o,
                Err(_) => continue,
            };
            for p in 0..NP {
                out[p] += t * coef[p];
            }
        }
    }
}

impl Expansion {
    fn new(acc: &StatsAccumulator, gram: &StencilGram) -> Self {
        let d = acc.grid.dims();
        let w = acc.opts.scheme.stencil_width();
        let q = 2 * w - 1;
        let r = w - 1;
        let np = w * w;
        let coeffs = acc.opts.scheme.coeffs();
        let mut pair_t = vec![0.0; q * np];
        for a in 0..w {
            for b in 0..w {
                for k1 in 0..w {
                    for k2 in 0..w {
                        pair_t[(k1 + k2) * np + a * w + b] += coeffs[a][k1] * coeffs[b][k2];
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
        let mut scatter_node = Vec::with_capacity(total);
        let mut scatter_entry = Vec::with_capacity(total);
        for idx in 0..total {
            let mut rem = idx;
            let (mut node, mut entry, mut qpow) = (0usize, 0usize, 1usize);
            for l in (0..d).rev() {
                let p = rem % np;
                rem /= np;
                let (a, b) = (p / w, p % w);
                node += a * strides[l];
                entry += (b + r - a) * qpow;
                qpow *= q;
            }
            scatter_node.push(node);
            scatter_entry.push(entry);
        }
        let node_offsets = crate::interpolation::stencil_offsets(strides, w);
        Self {
            d,
            w,
            pair_t,
            weight_t,
            scatter_node,
            scatter_entry,
            node_offsets,
            k: gram.stencil_len(),
        }
    }

    /// Contracts every axis of `src` (`len^d` values) with the transposed matrix `pt`
    /// (`len × rows`); the result (`rows^d`, C order) is left in `a`.
    fn contract(&self, src: &[f64], pt: &[f64], gram: bool, a: &mut Vec<f64>, b: &mut Vec<f64>) {
        a.clear();
        a.extend_from_slice(src);
        for _ in 0..self.d {
            match (self.w, gram) {
                (4, true) => rotate_contract::<7, 16>(a, pt, b),
                (4, false) => rotate_contract::<4, 4>(a, pt, b),
                (_, true) => rotate_contract::<3, 4>(a, pt, b),
                (_, false) => rotate_contract::<2, 2>(a, pt, b),
            }
            std::mem::swap(a, b);
        }
    }

    fn run(&self, acc: &StatsAccumulator, gram: &mut [f64], wty: &mut [f64]) {
        let (w, k) = (self.w, self.k);
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
            let g = &mut gram[phase * s0 * k..];
            let t = &mut wty[phase * s0..];
            g.par_chunks_mut(w * s0 * k)
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
                        for ((v, &sn), &se) in
                            a.iter().zip(&self.scatter_node).zip(&self.scatter_entry)
                        {
                            g[(node + sn) * k + se] += v;
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

/// Indices `0..cells.len()` ordered by cell (counting sort when the cells are few compared
/// with the points, comparison sort otherwise); stable.
fn order_by_cell(cells: &[usize], num_cells: usize) -> Vec<usize> {
    if num_cells <= 4 * cells.len() {
        let mut start = vec![0usize; num_cells + 1];
        for &c in cells {
            start[c + 1] += 1;
        }
        for c in 0..num_cells {
            start[c + 1] += start[c];
        }
        let mut order = vec![0usize; cells.len()];
        for (i, &c) in cells.iter().enumerate() {
            order[start[c]] = i;
            start[c] += 1;
        }
        order
    } else {
        let mut order: Vec<usize> = (0..cells.len()).collect();
        order.sort_by_key(|&i| cells[i]);
        order
    }
}

/// Runs one accumulator per rayon thread; each calls `next` until it returns `None`.
/// Runs `work(worker, workers, acc)` on one accumulator per rayon thread and merges the
/// accumulators in worker order (a fixed summation order).
fn run_workers<G>(
    grid: &RegularGrid,
    opts: InterpolationOptions,
    work: G,
) -> Result<StatsAccumulator>
where
    G: Fn(usize, usize, &mut StatsAccumulator) -> Result<()> + Sync,
{
    let workers = rayon::current_num_threads().max(1);
    let accs = (0..workers)
        .into_par_iter()
        .map(|w| {
            let mut acc = StatsAccumulator::new(grid, opts)?;
            work(w, workers, &mut acc)?;
            Ok(acc)
        })
        .collect::<Result<Vec<_>>>()?;
    merge_in_order(grid, opts, accs)
}

/// Merges accumulators in the order given.
fn merge_in_order(
    grid: &RegularGrid,
    opts: InterpolationOptions,
    accs: Vec<StatsAccumulator>,
) -> Result<StatsAccumulator> {
    let mut total: Option<StatsAccumulator> = None;
    for acc in accs {
        total = Some(match total {
            None => acc,
            Some(t) => t.merge(acc)?,
        });
    }
    match total {
        Some(t) => Ok(t),
        None => StatsAccumulator::new(grid, opts),
    }
}

fn check_chunk(grid: &RegularGrid, x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<()> {
    check_points(grid, x)?;
    if y.nrows() != x.nrows() {
        return Err(StructuredError::InvalidArgument {
            name: "y",
            reason: format!("x has {} rows but y has {} entries", x.nrows(), y.nrows()),
        });
    }
    check_finite_col(y, "targets y")?;
    Ok(())
}

fn check_compatible(
    g1: &RegularGrid,
    o1: InterpolationOptions,
    g2: &RegularGrid,
    o2: InterpolationOptions,
) -> Result<()> {
    if g1 != g2 || o1.scheme != o2.scheme {
        return Err(StructuredError::InvalidArgument {
            name: "other",
            reason: format!(
                "statistics on different grids or schemes cannot be merged \
                 (grid sizes {:?} vs {:?}, {} vs {})",
                g1.sizes(),
                g2.sizes(),
                o1.scheme.name(),
                o2.scheme.name()
            ),
        });
    }
    Ok(())
}
