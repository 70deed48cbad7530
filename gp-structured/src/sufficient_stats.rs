//! The GSGP sufficient statistics `S = WᵀW`, `t = Wᵀy`, `q = yᵀy` and `n`, accumulated in one
//! streaming pass over chunks of points without materializing `W` (Yadav et al. 2021, §3).
//!
//! `S` is stored as a [`StencilGram`]: the upper half of a `(2w−1)^d`-entry stencil,
//! `((2w−1)^d + 1)/2` values per grid node (`w = 4` cubic, 2 linear; 172 per node at `d = 3`
//! cubic), so it is symmetric by construction. Two algorithms fill it ([`StatsPath`]); both
//! give the same statistics up to floating-point reassociation (tested to `1e-12` relative),
//! and [`StatsPath::Auto`] (the default) picks one by the rule below.
//!
//! # Cell moments ([`StatsPath::CellMoments`]): many points per cell
//!
//! The 1-D weights of a point are polynomials of degree `p = w − 1` (3 cubic, 1 linear) in its
//! fractional offset `τ ∈ [0, 1]` within its grid cell, so a product of two weights is a
//! polynomial of degree `2p` and the block `w wᵀ` that a point adds to `S` is a fixed linear
//! function of the `(2p+1)^d` joint moments `Π_l τ_l^{s_l}`. The pass therefore keeps, per
//! grid cell, the sums of these moments (`7^d` for cubic: 343 multiply-adds per point at
//! `d = 3` instead of the 4096 of the direct `w wᵀ` update) plus the `w^d` moments of `y·τ`
//! for `Wᵀy`, in one contiguous record per cell. Each chunk's points are located, packed
//! (`τ`, `y`) in cell order by a counting sort, and added to their records up to 64 points of
//! a cell at a time, each row of the record loaded once per batch (AVX2 build where the CPU
//! has it; the sums are those of adding point by point, bit for bit). At the end each
//! occupied cell is expanded once into the stencil of `S` by `d` small mode products over the
//! `w(w+1)/2` unordered node pairs per axis (about 15 000 multiply-adds per cell at `d = 3`;
//! the node pairs whose offset falls in the stored half are added) and into `t`.
//!
//! Cost `O(n·(2w−1)^d + cells·(w(w+1)/2)^d·(2w−1))`; memory: one record of
//! `(2w−1)^d + w^d` doubles per grid cell **per rayon worker** (3.3 kB per cell at `d = 3`),
//! plus `S`.
//!
//! # Point scatter ([`StatsPath::PointScatter`]): few points per cell, fine grids
//!
//! Each point's block `w wᵀ` (the Kronecker product of its `d` per-dimension `w × w`
//! blocks) is added straight into **one shared** stencil: the lines of `w` consecutive stencil
//! entries of its `w^{2d−1}` that fall in the stored half (about half of the 1 024 lines of 4
//! at `d = 3` cubic), plus `w^d` for `t`.
//! Points are located in parallel into a buffer (cell index, `τ`, `y`) of at most
//! `clamp(bytes(S)/8/80, 2^16, 2^24)` points (80 bytes per point at `d = 3` while a full
//! buffer is sorted; a single streamed chunk larger than that is buffered whole, and
//! [`SufficientStats::compute`] feeds the rows in blocks of that size). A full buffer, and
//! the rest at the end, is sorted by cell (ties by arrival) and scattered **by output row**:
//!
//! * the rows of `S` are cut into *pencils*: the `m_{d−1}` nodes of one line along the last
//!   dimension (contiguous in memory; for `d = 1`, segments of the single line). One rayon task
//!   owns a pencil and adds to its rows the contributions of the points of the `w^{d−1}`
//!   pencils of cells whose stencils reach it. Tasks write disjoint rows, so there are no
//!   locks, atomics or per-worker copies; each point is read by the `w^{d−1}` tasks it
//!   reaches;
//! * a task's rows (110 kB for a 400×400×40 grid; longer pencils are done in segments of
//!   at most 256 kB) stay in the core's L2 cache while they are updated, and the stencil is
//!   streamed through memory once per flush.
//!
//! (An input-ordered variant, which scattered slabs of the first dimension, even slabs in
//! parallel and then odd ones, was measured 1.3–1.4× slower in CPU time on 10⁵–10⁶-node
//! grids: its rows in use did not fit in L2.)
//!
//! Cost `O(n·w^{2d})` arithmetic plus one pass over the stencil per flush; memory: `S`, `t`
//! and the buffer (at most 1/8 of `S`, or 5 MiB for small grids), nothing per worker. The
//! stencil is written once in parallel when it is allocated (see `prefault`), so its pages are
//! faulted in by all threads and once each; at the radar scale of Table 1 (6.4M nodes,
//! 17.6 GB) the kernel's zeroing of those pages is about 40% of the pass's CPU time.
//!
//! # Which path ([`StatsPath::Auto`])
//!
//! With `ρ = n / cells` the expected number of points per grid cell
//! ([`StatsPlan::points_per_cell`]), `Auto` takes the cell moments when
//! `ρ ≥` [`MOMENT_MIN_POINTS_PER_CELL`] **and** the moment records of all workers plus the
//! stencil fit in half of the physical memory (`MemTotal` of `/proc/meminfo`; 16 GiB assumed
//! when it cannot be read — a property of the machine, so the choice does not change from run
//! to run), and the point scatter otherwise. For [`SufficientStats::from_chunks`], `n` is
//! estimated from the first chunk's rows times the iterator's `size_hint` (chunks of equal
//! size are assumed); when the stream's length is unknown the moments are taken if they fit
//! in memory. [`SufficientStats::plan`] reports the choice and its memory;
//! [`compute_with_path`] and [`from_chunks_with_path`] force a path. The threshold was
//! measured with the `stats_bench` example of this crate (see [`MOMENT_MIN_POINTS_PER_CELL`]).
//!
//! # Exactness, determinism and merging
//!
//! The polynomial coefficients are small dyadic rationals, so the moment expansion is an exact
//! algebraic identity; both paths agree with forming `W` and multiplying up to floating-point
//! reassociation, and `S` is exactly symmetric on both (the two mirrored entries of every
//! point's block are equal products and are summed in the same order).
//!
//! Both passes are deterministic: the same input, chunking and number of rayon threads give
//! the same bits. The cell moments assign work statically (job `j` to worker `j mod W`, merged
//! in worker order), so their result depends on the number of threads; the point scatter's
//! summation order (buffer flushes, then cells and arrival order for every row) depends only
//! on the grid and the data, so its result is the same for every number of threads.
//!
//! Partial results from several passes or machines combine with [`SufficientStats::merge`]
//! (or [`StatsAccumulator::merge`]), an elementwise sum: associative and commutative up to
//! floating-point reassociation.
//!
//! [`compute_with_path`]: SufficientStats::compute_with_path
//! [`from_chunks_with_path`]: SufficientStats::from_chunks_with_path

mod moments;
mod scatter;

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::validate::check_finite_col;
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{check_points, InterpolationOptions, InterpolationScheme};
use crate::slice_util::checked_product;
use crate::stencil_gram::StencilGram;

use moments::{merge_in_order, run_workers, MomentAccumulator};
use scatter::ScatterAccumulator;

/// Smallest and largest rows per job of [`SufficientStats::compute`] on the cell-moment path.
const JOB_ROWS: usize = 16_384;
const MAX_JOB_ROWS: usize = 1 << 20;

/// Expected points per grid cell from which [`StatsPath::Auto`] takes the cell moments
/// (when they also fit in memory; see the [module docs](self)).
///
/// Measured with the `stats_bench` example on the 2-core reference machine (2 rayon threads),
/// `d = 3` cubic, `10^6` uniform points, wall time of the fastest of three passes, cell
/// moments / point scatter: 30³ grid (51 points per cell) 0.19 / 0.89 s; 40³ (20) 0.39 /
/// 0.96 s; 49³ (10) 0.68 / 0.96 s; 60³ (5.4) 1.19 / 1.04 s; 72³ (3.0) 2.10 / 1.11 s: the
/// crossover is near 7 points per cell. At `d = 2` the moments win further down (300², 11
/// per cell, 0.11 / 0.14 s). (Before the moment kernel was rebuilt the crossover was near 33
/// points per cell and this threshold 30.) Since the scatter's line tables (same bits, 1.4× faster
/// at 100×100×80, quiet, side by side) the `d = 3` crossover is near 11 points per cell (40³ 0.29 / 0.48 s; 44³ (14.5)
/// 0.37 / 0.47 s; 49³ 0.52 / 0.48 s; 60³ 0.87 / 0.55 s; 72³ 1.70 / 0.61 s), while at `d = 2`
/// the moments still win at 6 points per cell (400²: 0.13 / 0.15 s; 300² 0.08 / 0.11 s), so
/// the threshold stays 8: at `d = 3` between 8 and 11 points per cell it costs at most about
/// 10%.
pub const MOMENT_MIN_POINTS_PER_CELL: f64 = 8.0;

/// Memory assumed when `/proc/meminfo` cannot be read: 16 GiB (half of it is the budget).
const DEFAULT_PHYSICAL_MEMORY: u64 = 16 << 30;

/// Which algorithm the statistics pass uses; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StatsPath {
    /// Choose by the expected points per cell and the memory (default).
    #[default]
    Auto,
    /// Per-cell moment sums per worker, expanded once per cell: best for many points per
    /// cell; needs one moment record per grid cell and worker.
    CellMoments,
    /// Each point's block scattered into one shared stencil: best for few points per cell;
    /// needs only `S`, `t` and a bounded point buffer.
    PointScatter,
}

impl StatsPath {
    /// Name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::CellMoments => "cell moments",
            Self::PointScatter => "point scatter",
        }
    }
}

/// What a statistics pass will do on a grid: the path [`StatsPath::Auto`] resolves to and
/// the memory the pass needs ([`SufficientStats::plan`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatsPlan {
    /// [`StatsPath::CellMoments`] or [`StatsPath::PointScatter`], never `Auto`.
    pub path: StatsPath,
    /// Expected points per grid cell `n / cells`, when `n` is known.
    pub points_per_cell: Option<f64>,
    /// Bytes of the result: the stencil of `S` and `t`.
    pub output_bytes: u128,
    /// Bytes of the working storage besides the result: the moment records of all rayon
    /// workers, or the point buffer (for `n` points, at most its capacity).
    pub scratch_bytes: u128,
}

impl StatsPlan {
    /// `output_bytes + scratch_bytes`: the peak of the pass.
    pub fn peak_bytes(&self) -> u128 {
        self.output_bytes + self.scratch_bytes
    }
}

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
    /// Statistics of the rows of `x` (`n × d`) with targets `y` (length `n`), in parallel, on
    /// the path chosen by [`StatsPath::Auto`].
    pub fn compute(
        grid: &RegularGrid,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        opts: InterpolationOptions,
    ) -> Result<Self> {
        Self::compute_with_path(grid, x, y, opts, StatsPath::Auto)
    }

    /// [`compute`](Self::compute) on a given path (`Auto` chooses as `compute` does).
    pub fn compute_with_path(
        grid: &RegularGrid,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        opts: InterpolationOptions,
        path: StatsPath,
    ) -> Result<Self> {
        check_chunk(grid, x, y)?;
        let n = x.nrows();
        match resolve(path, grid.sizes(), opts.scheme, Some(n)) {
            StatsPath::PointScatter => {
                let mut acc = ScatterAccumulator::new(grid, opts)?;
                let block = acc.capacity();
                let mut start = 0;
                while start < n {
                    let len = block.min(n - start);
                    acc.add_rows(x.subrows(start, len), y.subrows(start, len), start)?;
                    start += len;
                }
                acc.finish()
            }
            _ => {
                // Jobs of several points per cell (grouping a job's points by cell then
                // reuses each cell's record), but small enough for load balance and scratch.
                let workers = rayon::current_num_threads().max(1);
                let cells = MomentAccumulator::new(grid, opts)?.cells();
                let job = cells
                    .saturating_mul(16)
                    .min(n.div_ceil(2 * workers))
                    .clamp(JOB_ROWS, MAX_JOB_ROWS);
                // Job j goes to worker j mod W and the workers' sums are merged in worker
                // order, so the floating-point summation order (and the result, to the last
                // bit) does not depend on thread scheduling; only on the number of threads.
                let jobs = n.div_ceil(job);
                let acc = run_workers(grid, opts, |worker, workers, acc| {
                    let mut j = worker;
                    while j < jobs {
                        let start = j * job;
                        let len = job.min(n - start);
                        acc.add_rows(x.subrows(start, len), y.subrows(start, len), start)?;
                        j += workers;
                    }
                    Ok(())
                })?;
                acc.finish()
            }
        }
    }

    /// Statistics of a stream of chunks `(x_c, y_c)` on the path chosen by
    /// [`StatsPath::Auto`]; the chunks are never all held in memory.
    ///
    /// Cell moments: one accumulator per rayon thread, chunk `k` of the stream going to
    /// accumulator `k mod W` (at most `W` chunks held at a time). Point scatter: the chunks
    /// are located in parallel into the point buffer, which is scattered whenever it is full.
    pub fn from_chunks<I>(grid: &RegularGrid, opts: InterpolationOptions, chunks: I) -> Result<Self>
    where
        I: IntoIterator<Item = (Mat<f64>, Col<f64>)>,
        I::IntoIter: Send,
    {
        Self::from_chunks_with_path(grid, opts, chunks, StatsPath::Auto)
    }

    /// [`from_chunks`](Self::from_chunks) on a given path (`Auto` chooses as `from_chunks`
    /// does).
    pub fn from_chunks_with_path<I>(
        grid: &RegularGrid,
        opts: InterpolationOptions,
        chunks: I,
        path: StatsPath,
    ) -> Result<Self>
    where
        I: IntoIterator<Item = (Mat<f64>, Col<f64>)>,
        I::IntoIter: Send,
    {
        let mut source = chunks.into_iter();
        let first = source.next();
        let path = match path {
            StatsPath::Auto => {
                let rows = first.as_ref().map_or(0, |(x, _)| x.nrows());
                let estimate = estimate_points(rows, source.size_hint(), grid, opts.scheme);
                resolve(StatsPath::Auto, grid.sizes(), opts.scheme, estimate)
            }
            p => p,
        };
        let source = first.into_iter().chain(source);
        match path {
            StatsPath::PointScatter => {
                let mut acc = ScatterAccumulator::new(grid, opts)?;
                for (x, y) in source {
                    let first = acc.num_points();
                    acc.add_rows(x.as_ref(), y.as_ref(), first)?;
                }
                acc.finish()
            }
            _ => {
                // Rounds of one chunk per worker, read in stream order: chunk k of the stream
                // always lands in accumulator k mod W, so the result does not depend on
                // thread scheduling (only on the number of rayon threads).
                let workers = rayon::current_num_threads().max(1);
                let mut accs = (0..workers)
                    .map(|_| MomentAccumulator::new(grid, opts))
                    .collect::<Result<Vec<_>>>()?;
                let mut source = source;
                loop {
                    let round: Vec<(Mat<f64>, Col<f64>)> = source.by_ref().take(workers).collect();
                    if round.is_empty() {
                        break;
                    }
                    accs.par_iter_mut()
                        .zip(round.par_iter())
                        .map(|(acc, (x, y))| acc.add_rows(x.as_ref(), y.as_ref(), 0))
                        .collect::<Result<Vec<()>>>()?;
                }
                merge_in_order(grid, opts, accs)?.finish()
            }
        }
    }

    /// The path [`StatsPath::Auto`] takes for `n` points (`None`: unknown) on a grid with
    /// `sizes` and `scheme`, and the memory of the pass, with the current rayon thread count
    /// (see the [module docs](self)).
    pub fn plan(sizes: &[usize], scheme: InterpolationScheme, n: Option<usize>) -> StatsPlan {
        Self::plan_with_path(sizes, scheme, n, StatsPath::Auto)
    }

    /// [`plan`](Self::plan) for a given path (`Auto`: as `plan`), e.g. the memory the cell
    /// moments would need on a grid where `Auto` takes the point scatter.
    pub fn plan_with_path(
        sizes: &[usize],
        scheme: InterpolationScheme,
        n: Option<usize>,
        path: StatsPath,
    ) -> StatsPlan {
        plan_for(path, sizes, scheme, n, rayon::current_num_threads())
    }

    /// Statistics from their parts, as [`grid`](Self::grid), [`options`](Self::options),
    /// [`gram`](Self::gram), [`wty`](Self::wty), [`yty`](Self::yty) and
    /// [`num_points`](Self::num_points) return them (for example read back from a file), so
    /// that a model built on them needs no pass over the data.
    ///
    /// Only what can be checked without the data is: the stencil must be on `grid` with the
    /// radius of `opts.scheme` (`stencil_width − 1`), `wty` must have one finite value per
    /// grid node, `yty` must be finite and non-negative and `n ≥ 1`. That `S` is `WᵀW` for
    /// some data is not checked.
    ///
    /// Errors: [`StructuredError::InvalidArgument`] for each failed check;
    /// [`StructuredError::Linalg`] for a non-finite `wty`.
    pub fn from_parts(
        grid: RegularGrid,
        opts: InterpolationOptions,
        gram: StencilGram,
        wty: Col<f64>,
        yty: f64,
        n: usize,
    ) -> Result<Self> {
        let radius = opts.scheme.stencil_width() - 1;
        if gram.grid_sizes() != grid.sizes() || gram.radius() != radius {
            return Err(StructuredError::InvalidArgument {
                name: "gram",
                reason: format!(
                    "a stencil on a {:?} grid with radius {} does not fit {} interpolation on \
                     a {:?} grid (radius {radius})",
                    gram.grid_sizes(),
                    gram.radius(),
                    opts.scheme.name(),
                    grid.sizes()
                ),
            });
        }
        if wty.nrows() != grid.num_points() {
            return Err(StructuredError::InvalidArgument {
                name: "wty",
                reason: format!(
                    "Wᵀy needs one value per grid node ({}), got {}",
                    grid.num_points(),
                    wty.nrows()
                ),
            });
        }
        check_finite_col(wty.as_ref(), "Wᵀy")?;
        if !(yty.is_finite() && yty >= 0.0) {
            return Err(StructuredError::InvalidArgument {
                name: "yty",
                reason: format!("yᵀy must be finite and non-negative, got {yty}"),
            });
        }
        if n == 0 {
            return Err(StructuredError::InvalidArgument {
                name: "n",
                reason: "statistics from parts need at least one point".into(),
            });
        }
        Ok(Self {
            grid,
            opts,
            gram,
            wty,
            yty,
            n,
        })
    }

    /// Statistics of no data (all zero).
    pub fn empty(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        MomentAccumulator::new(grid, opts)?.finish()
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

/// Streaming accumulator of the statistics on one of the two paths (see the
/// [module docs](self)); for building a pass by hand (several streams, several machines).
#[derive(Debug, Clone)]
pub struct StatsAccumulator {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Moments(Box<MomentAccumulator>),
    Scatter(Box<ScatterAccumulator>),
}

impl StatsAccumulator {
    /// An empty accumulator for `grid` on the path [`StatsPath::Auto`] takes for a stream of
    /// unknown length (the cell moments when they fit in memory). No memory is reserved until
    /// the first chunk.
    pub fn new(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        Self::with_path(grid, opts, StatsPath::Auto)
    }

    /// An empty accumulator on the given path (`Auto`: as [`new`](Self::new)).
    pub fn with_path(
        grid: &RegularGrid,
        opts: InterpolationOptions,
        path: StatsPath,
    ) -> Result<Self> {
        let inner = match resolve(path, grid.sizes(), opts.scheme, None) {
            StatsPath::PointScatter => {
                Inner::Scatter(Box::new(ScatterAccumulator::new(grid, opts)?))
            }
            _ => Inner::Moments(Box::new(MomentAccumulator::new(grid, opts)?)),
        };
        Ok(Self { inner })
    }

    /// The path of this accumulator (never `Auto`).
    pub fn path(&self) -> StatsPath {
        match self.inner {
            Inner::Moments(_) => StatsPath::CellMoments,
            Inner::Scatter(_) => StatsPath::PointScatter,
        }
    }

    /// Points accumulated so far.
    pub fn num_points(&self) -> usize {
        match &self.inner {
            Inner::Moments(a) => a.num_points(),
            Inner::Scatter(a) => a.num_points(),
        }
    }

    /// Adds a chunk of points `x` (`n_c × d`) with targets `y`. On error (wrong shapes, a
    /// non-finite value, a point outside the grid) the accumulator is unchanged.
    pub fn add_chunk(&mut self, x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<()> {
        match &mut self.inner {
            Inner::Moments(a) => a.add_rows(x, y, 0),
            Inner::Scatter(a) => a.add_rows(x, y, 0),
        }
    }

    /// Adds another accumulator on the same grid and scheme. Two accumulators on different
    /// paths merge into a point-scatter one (the moments are expanded first).
    pub fn merge(self, other: Self) -> Result<Self> {
        let inner = match (self.inner, other.inner) {
            (Inner::Moments(a), Inner::Moments(b)) => Inner::Moments(Box::new(a.merge(*b)?)),
            (Inner::Scatter(a), Inner::Scatter(b)) => Inner::Scatter(Box::new(a.merge(*b)?)),
            (Inner::Scatter(a), Inner::Moments(b)) | (Inner::Moments(b), Inner::Scatter(a)) => {
                Inner::Scatter(Box::new(a.merge_stats(b.finish()?)?))
            }
        };
        Ok(Self { inner })
    }

    /// The statistics: `S = WᵀW`, `t = Wᵀy`, `yᵀy` and `n`.
    pub fn finish(self) -> Result<SufficientStats> {
        match self.inner {
            Inner::Moments(a) => a.finish(),
            Inner::Scatter(a) => a.finish(),
        }
    }
}

/// `(2w−1)^d`, after checking that the stencil of the grid (`m·(2w−1)^d` values) can be
/// indexed.
fn stencil_len_checked(grid: &RegularGrid, opts: InterpolationOptions) -> Result<usize> {
    let w = opts.scheme.stencil_width();
    let k = checked_product(&vec![2 * w - 1; grid.dims()], "grid")?;
    grid.num_points()
        .checked_mul(k)
        .ok_or_else(|| StructuredError::InvalidArgument {
            name: "grid",
            reason: format!(
                "{} nodes × {k} stencil entries overflow usize",
                grid.num_points()
            ),
        })?;
    Ok(k)
}

/// `n` for [`from_chunks`](SufficientStats::from_chunks) from the first chunk's rows and
/// the `size_hint` of the rest of the stream: exact bound → rows × (1 + chunks); otherwise
/// only when the lower bound already shows a dense stream.
fn estimate_points(
    rows: usize,
    hint: (usize, Option<usize>),
    grid: &RegularGrid,
    scheme: InterpolationScheme,
) -> Option<usize> {
    match hint {
        (_, Some(hi)) => Some(rows.saturating_mul(hi.saturating_add(1))),
        (lo, None) => {
            let lower = rows.saturating_mul(lo.saturating_add(1));
            let cells = cell_count(grid.sizes(), scheme);
            (lower as f64 >= MOMENT_MIN_POINTS_PER_CELL * cells as f64).then_some(lower)
        }
    }
}

/// Where each cell's points start when `cells` (a cell index per point, each below
/// `num_cells`) is put in cell order: `num_cells + 1` offsets, the last one `cells.len()`.
/// Both paths' counting sorts start from these.
fn cell_offsets(cells: &[usize], num_cells: usize) -> Vec<usize> {
    let mut start = vec![0usize; num_cells + 1];
    for &c in cells {
        start[c + 1] += 1;
    }
    for c in 0..num_cells {
        start[c + 1] += start[c];
    }
    start
}

/// Grid cells `Π (m_l − w + 1)` (saturating).
fn cell_count(sizes: &[usize], scheme: InterpolationScheme) -> u128 {
    let w = scheme.stencil_width();
    sizes
        .iter()
        .map(|&m| (m + 1).saturating_sub(w) as u128)
        .fold(1u128, |a, c| a.saturating_mul(c))
}

/// Physical memory (`MemTotal`), or [`DEFAULT_PHYSICAL_MEMORY`].
fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(DEFAULT_PHYSICAL_MEMORY, |kb| kb.saturating_mul(1024))
}

/// The plan for `path` (`Auto` resolved by the rule of the module docs) with `threads`
/// workers.
fn plan_for(
    path: StatsPath,
    sizes: &[usize],
    scheme: InterpolationScheme,
    n: Option<usize>,
    threads: usize,
) -> StatsPlan {
    let d = sizes.len();
    let w = scheme.stencil_width();
    let m = sizes
        .iter()
        .fold(1u128, |a, &s| a.saturating_mul(s as u128));
    let k = ((2 * w - 1) as u128).saturating_pow(d as u32);
    // The stored half of the stencil of `S`, and `t`.
    let h = k.div_ceil(2);
    let output_bytes = m.saturating_mul(h).saturating_add(m).saturating_mul(8);
    let cells = cell_count(sizes, scheme);
    let record = k.saturating_add((w as u128).saturating_pow(d as u32));
    let moment_bytes = (threads.max(1) as u128)
        .saturating_mul(cells)
        .saturating_mul(record)
        .saturating_mul(8);
    let m_usize = usize::try_from(m).unwrap_or(usize::MAX);
    let h_usize = usize::try_from(h).unwrap_or(usize::MAX);
    let capacity = scatter::buffer_points(m_usize, h_usize, d);
    let buffered = n.map_or(capacity, |n| n.min(capacity)) as u128;
    let scatter_bytes = buffered * scatter::point_bytes(d) as u128;
    let points_per_cell = n.map(|n| n as f64 / cells.max(1) as f64);
    let path = match path {
        StatsPath::Auto => {
            let budget = u128::from(physical_memory() / 2);
            let fits = moment_bytes.saturating_add(output_bytes) <= budget;
            let dense = points_per_cell.is_none_or(|rho| rho >= MOMENT_MIN_POINTS_PER_CELL);
            if fits && dense {
                StatsPath::CellMoments
            } else {
                StatsPath::PointScatter
            }
        }
        p => p,
    };
    let scratch_bytes = match path {
        StatsPath::CellMoments => moment_bytes,
        _ => scatter_bytes,
    };
    StatsPlan {
        path,
        points_per_cell,
        output_bytes,
        scratch_bytes,
    }
}

/// The concrete path for `path` (see [`plan_for`]).
fn resolve(
    path: StatsPath,
    sizes: &[usize],
    scheme: InterpolationScheme,
    n: Option<usize>,
) -> StatsPath {
    match path {
        StatsPath::Auto => plan_for(path, sizes, scheme, n, rayon::current_num_threads()).path,
        p => p,
    }
}

/// Writes zeros over a freshly zeroed allocation, in parallel. Large zeroed allocations are
/// mapped lazily to a shared zero page, so a first read-modify-write of each page takes two
/// page faults (the read, then a copy on write), single-threaded in the order of the
/// updates; writing first takes one per page, spread over the threads (measured: the point
/// scatter on a 100×100×80 grid went from about 5 s to 3 s). One value per 4 KiB page is
/// enough (the kernel clears the whole page at the fault), which saves streaming the whole
/// allocation through memory once more. The value goes through `black_box` so that the
/// writes are not optimized away as redundant with the allocation.
fn prefault(values: &mut [f64]) {
    const PAGE_VALUES: usize = 4096 / std::mem::size_of::<f64>();
    advise_huge_pages(values);
    let zero = std::hint::black_box(0.0);
    values.par_chunks_mut(1 << 16).for_each(|c| {
        for v in c.iter_mut().step_by(PAGE_VALUES) {
            *v = zero;
        }
        if let Some(last) = c.last_mut() {
            *last = zero;
        }
    });
}

/// Asks Linux to back the 2 MiB-aligned part of `values` with transparent huge pages, where the
/// system allows it on request (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`): a
/// stencil of a gigabyte then takes about 500 faults instead of 260 000. Advice only: a
/// refusal (or another platform) leaves the 4 KiB pages, with the same results.
fn advise_huge_pages(values: &mut [f64]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = values.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let (first, last) = (start.div_ceil(HUGE) * HUGE, end / HUGE * HUGE);
        if last > first {
            // SAFETY: `[first, last)` lies inside `values`, which this function borrows
            // mutably; MADV_HUGEPAGE changes only how the kernel backs those pages (their
            // contents are kept), so no Rust-visible memory changes. The result is advice:
            // failure is ignored on purpose.
            #[allow(unsafe_code)]
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
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
