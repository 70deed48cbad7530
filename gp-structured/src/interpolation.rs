//! Interpolation schemes (linear, Keys cubic convolution with `a = −½`), the out-of-grid
//! policy, and locating points in a [`RegularGrid`].
//!
//! A point `x` gets, per dimension `l`, a *stencil* of `w` consecutive grid nodes
//! (`w = 2` linear, `w = 4` cubic) starting at node `start_l`, with 1-D weights
//! `w^{(l)}_0 … w^{(l)}_{w−1}`; its row of the interpolation matrix `W` is the Kronecker
//! product `w^{(1)} ⊗ … ⊗ w^{(d)}` placed at the flat indices
//! `Σ_l (start_l + a_l)·stride_l` (C order, see [`crate::grid`]). So a row has exactly
//! `w^d` entries (2^d or 4^d), some of which may be exact zeros when a point lies on a node.
//!
//! # Where a point may lie, and the out-of-grid policy
//!
//! With `s = (x − lo)/h` the position in grid units, the full stencil fits when
//! `s ∈ [1, m−2]` (cubic: nodes `b−1 … b+2` with `b = ⌊s⌋`) or `s ∈ [0, m−1]` (linear).
//! Points outside this region are handled by [`OutOfGrid`]: by default they are an error
//! ([`StructuredError::OutsideGrid`]), because silently dropping or clamping stencil nodes
//! changes the model; [`OutOfGrid::Clamp`] is the explicit alternative (the coordinate is
//! moved to the nearest end of the region, so the row still sums to 1). Positions within
//! `1e-9` cells of the region are snapped onto it in both modes, so data on the boundary of
//! an explicitly bounded grid are not rejected because of rounding.

use faer::MatRef;
use rayon::prelude::*;

use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;

/// Tolerance (in grid cells) within which a position just outside the valid region is snapped.
const SNAP_CELLS: f64 = 1e-9;

/// The 1-D interpolation kernel, combined over dimensions by tensor product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InterpolationScheme {
    /// Linear (hat-function) interpolation: 2 nodes per dimension, `2^d` per point.
    Linear,
    /// Keys (1981) cubic convolution with `a = −½`: 4 nodes per dimension, `4^d` per point;
    /// reproduces polynomials of degree ≤ 2 exactly.
    #[default]
    Cubic,
}

/// Polynomial coefficients (powers `τ^0 … τ^3`) of the cubic weights of stencil nodes
/// `b−1, b, b+1, b+2` as functions of `τ = s − b ∈ [0, 1]` (Keys, `a = −½`).
const CUBIC_COEFFS: [[f64; 4]; 4] = [
    [0.0, -0.5, 1.0, -0.5],
    [1.0, 0.0, -2.5, 1.5],
    [0.0, 0.5, 2.0, -1.5],
    [0.0, 0.0, -0.5, 0.5],
];

/// Coefficients of the linear weights of nodes `b, b+1`.
const LINEAR_COEFFS: [[f64; 4]; 2] = [[1.0, -1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]];

impl InterpolationScheme {
    /// Nodes per dimension in a stencil: 2 (linear) or 4 (cubic).
    pub fn stencil_width(self) -> usize {
        match self {
            Self::Linear => 2,
            Self::Cubic => 4,
        }
    }

    /// Cells of padding per side recommended for [`RegularGrid::from_data`]: 2 for cubic,
    /// 1 for linear (one cell more than the minimum; see [`crate::grid`]).
    pub fn recommended_padding(self) -> usize {
        match self {
            Self::Linear => 1,
            Self::Cubic => 2,
        }
    }

    /// Smallest number of points per axis the scheme can use (its stencil width).
    pub fn min_axis_points(self) -> usize {
        self.stencil_width()
    }

    /// Name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Cubic => "cubic",
        }
    }

    /// The 1-D kernel `u(t)` at normalized distance `t = |x − g|/h`: `max(1 − t, 0)` for
    /// linear; for cubic `1.5t³ − 2.5t² + 1` on `[0, 1]`, `−0.5t³ + 2.5t² − 4t + 2` on
    /// `(1, 2)` and 0 beyond.
    pub fn kernel(self, t: f64) -> f64 {
        let t = t.abs();
        match self {
            Self::Linear => (1.0 - t).max(0.0),
            Self::Cubic => {
                if t <= 1.0 {
                    (1.5 * t - 2.5) * t * t + 1.0
                } else if t < 2.0 {
                    ((-0.5 * t + 2.5) * t - 4.0) * t + 2.0
                } else {
                    0.0
                }
            }
        }
    }

    /// Polynomial coefficients (`τ^0 … τ^3`) of the weight of each stencil node as a function
    /// of the fractional offset `τ ∈ [0, 1]`; `stencil_width()` rows.
    pub(crate) fn coeffs(self) -> &'static [[f64; 4]] {
        match self {
            Self::Linear => &LINEAR_COEFFS,
            Self::Cubic => &CUBIC_COEFFS,
        }
    }

    /// Writes the `stencil_width()` weights for fractional offset `tau` into `out` (inlined
    /// always, so that the SIMD builds of the interpolation loops compile it again).
    #[inline(always)]
    pub(crate) fn weights_1d(self, tau: f64, out: &mut [f64]) {
        match self {
            Self::Linear => {
                out[0] = 1.0 - tau;
                out[1] = tau;
            }
            Self::Cubic => {
                for (o, c) in out.iter_mut().zip(CUBIC_COEFFS.iter()) {
                    *o = ((c[3] * tau + c[2]) * tau + c[1]) * tau + c[0];
                }
            }
        }
    }
}

/// What to do with a point whose stencil does not fit in the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutOfGrid {
    /// Return [`StructuredError::OutsideGrid`] naming the point and dimension (default).
    #[default]
    Error,
    /// Move the coordinate to the nearest end of the valid region (constant extrapolation
    /// along that dimension); the row keeps `w^d` entries and sums to 1.
    Clamp,
}

/// Options for building interpolation weights and sufficient statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InterpolationOptions {
    /// Linear or cubic (default cubic, as in SKI/GSGP).
    pub scheme: InterpolationScheme,
    /// Out-of-grid policy (default: error).
    pub out_of_grid: OutOfGrid,
}

/// Precomputed per-grid data for locating points: origin, inverse spacing, valid region.
#[derive(Debug, Clone)]
pub(crate) struct Locator {
    pub(crate) scheme: InterpolationScheme,
    policy: OutOfGrid,
    lo: Vec<f64>,
    inv_h: Vec<f64>,
    /// Largest valid stencil start per dimension (`m_l − w`).
    max_start: Vec<usize>,
    /// Valid region of `s` per dimension.
    s_min: f64,
    s_max: Vec<f64>,
}

impl Locator {
    /// Checks that the grid is large enough for the scheme.
    pub(crate) fn new(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        let scheme = opts.scheme;
        let w = scheme.stencil_width();
        if let Some((l, &m)) = grid
            .sizes()
            .iter()
            .enumerate()
            .find(|(_, &m)| m < scheme.min_axis_points())
        {
            return Err(StructuredError::InvalidArgument {
                name: "grid",
                reason: format!(
                    "{} interpolation needs at least {} points per axis, axis {l} has {m}",
                    scheme.name(),
                    scheme.min_axis_points()
                ),
            });
        }
        let (s_min, off) = match scheme {
            InterpolationScheme::Linear => (0.0, 1.0),
            InterpolationScheme::Cubic => (1.0, 2.0),
        };
        Ok(Self {
            scheme,
            policy: opts.out_of_grid,
            lo: grid.axes().iter().map(|a| a.lo()).collect(),
            inv_h: grid.axes().iter().map(|a| 1.0 / a.spacing()).collect(),
            max_start: grid.sizes().iter().map(|&m| m - w).collect(),
            s_min,
            s_max: grid.sizes().iter().map(|&m| m as f64 - off).collect(),
        })
    }

    /// Locates coordinate `v` of point `point` in dimension `l`: returns the stencil start
    /// node and the fractional offset `τ ∈ [0, 1]`. (Always inlined, so that the AVX2 build
    /// of [`locate_rows`] rounds with one instruction instead of a call to `floor`.)
    #[inline(always)]
    pub(crate) fn locate_1d(&self, point: usize, l: usize, v: f64) -> Result<(usize, f64)> {
        let s = (v - self.lo[l]) * self.inv_h[l];
        let (s_min, s_max) = (self.s_min, self.s_max[l]);
        // `!(a <= b)` also catches NaN; non-finite coordinates are never clamped.
        let inside = s >= s_min - SNAP_CELLS && s <= s_max + SNAP_CELLS;
        if !inside && (self.policy == OutOfGrid::Error || !v.is_finite()) {
            return Err(self.outside(point, l, v));
        }
        let s = s.clamp(s_min, s_max);
        // b = ⌊s⌋ restricted to the valid bases; the stencil starts at b (linear) or b−1.
        let shift = s_min as usize;
        let b = (s.floor() as usize).clamp(shift, self.max_start[l] + shift);
        let tau = s - b as f64;
        Ok((b - shift, tau))
    }
}

impl Locator {
    /// The error for coordinate `v` of `point` in dimension `l` outside the grid.
    #[cold]
    fn outside(&self, point: usize, l: usize, v: f64) -> StructuredError {
        let inv = 1.0 / self.inv_h[l];
        StructuredError::OutsideGrid {
            point,
            dim: l,
            value: v,
            lo: self.lo[l] + self.s_min * inv,
            hi: self.lo[l] + self.s_max[l] * inv,
            scheme: self.scheme.name(),
        }
    }
}

gp_linalg::simd_dispatch! {
    /// Locates the rows of `x`: the flat index `Σ_l start_l·strides_l` of each point's stencil
    /// start into `cells`, its offsets `τ` (`d` per point) into `taus`; errors name point
    /// `first + i` (the first failing coordinate in row order). AVX2 build where the CPU has
    /// it (same operations: same bits).
    pub(crate) fn locate_rows(
        loc: &Locator,
        x: MatRef<'_, f64>,
        first: usize,
        strides: &[usize],
        cells: &mut [usize],
        taus: &mut [f64],
    ) -> Result<()> = locate_rows_body, avx2 via locate_rows_avx2;
}

#[inline(always)]
fn locate_rows_body(
    loc: &Locator,
    x: MatRef<'_, f64>,
    first: usize,
    strides: &[usize],
    cells: &mut [usize],
    taus: &mut [f64],
) -> Result<()> {
    let d = x.ncols();
    for (i, (cell, tau)) in cells.iter_mut().zip(taus.chunks_exact_mut(d)).enumerate() {
        let mut flat = 0;
        for (l, t) in tau.iter_mut().enumerate() {
            let (start, offset) = loc.locate_1d(first + i, l, x[(i, l)])?;
            flat += start * strides[l];
            *t = offset;
        }
        *cell = flat;
    }
    Ok(())
}

/// A permutation that orders the rows of `x` by the flat index of their stencil start
/// (grid cell), for memory locality in every later pass (`W v`, `Wᵀ v`, statistics).
///
/// Returns `perm` with `perm[k]` = the original row placed at position `k`; apply it with
/// [`permute_rows`] to `x` and to `y`. The sort is stable. Errors as for building `W`.
pub fn cell_order(
    grid: &RegularGrid,
    x: MatRef<'_, f64>,
    opts: InterpolationOptions,
) -> Result<Vec<usize>> {
    check_points(grid, x)?;
    let loc = Locator::new(grid, opts)?;
    let strides = grid.strides();
    let keys = (0..x.nrows())
        .into_par_iter()
        .map(|i| {
            let mut key = 0usize;
            for (l, &stride) in strides.iter().enumerate() {
                let (start, _) = loc.locate_1d(i, l, x[(i, l)])?;
                key += start * stride;
            }
            Ok(key)
        })
        .collect::<Result<Vec<usize>>>()?;
    let mut perm: Vec<usize> = (0..x.nrows()).collect();
    perm.par_sort_by_key(|&i| keys[i]);
    Ok(perm)
}

/// The rows of `x` in the order `perm` (`out[k, :] = x[perm[k], :]`).
pub fn permute_rows(x: MatRef<'_, f64>, perm: &[usize]) -> Result<faer::Mat<f64>> {
    if perm.len() != x.nrows() || perm.iter().any(|&p| p >= x.nrows()) {
        return Err(StructuredError::InvalidArgument {
            name: "perm",
            reason: format!(
                "a permutation of {} rows needs {} indices below {}, got {} indices",
                x.nrows(),
                x.nrows(),
                x.nrows(),
                perm.len()
            ),
        });
    }
    Ok(faer::Mat::from_fn(x.nrows(), x.ncols(), |k, l| {
        x[(perm[k], l)]
    }))
}

/// Checks that `x` has one column per grid dimension.
pub(crate) fn check_points(grid: &RegularGrid, x: MatRef<'_, f64>) -> Result<()> {
    if x.ncols() != grid.dims() {
        return Err(StructuredError::InvalidArgument {
            name: "x",
            reason: format!(
                "points have {} coordinates but the grid has {} dimensions",
                x.ncols(),
                grid.dims()
            ),
        });
    }
    Ok(())
}

/// C-order flat offsets of the `w^d` stencil nodes relative to the stencil start, over the
/// given dimensions.
pub(crate) fn stencil_offsets(strides: &[usize], w: usize) -> Vec<usize> {
    let mut offs = vec![0usize];
    for &s in strides {
        offs = offs
            .iter()
            .flat_map(|&o| (0..w).map(move |a| o + a * s))
            .collect();
    }
    offs
}

/// Tensor (Kronecker) product of per-dimension weight vectors of length `w` stored
/// consecutively in `weights` (`d·w` values), written into `out` (`w^d` values, C order).
#[inline]
pub(crate) fn expand_weights(weights: &[f64], w: usize, out: &mut [f64]) -> usize {
    out[0] = 1.0;
    let mut len = 1;
    for wl in weights.chunks_exact(w) {
        for k in (0..len).rev() {
            let v = out[k];
            for a in (0..w).rev() {
                out[k * w + a] = v * wl[a];
            }
        }
        len *= w;
    }
    len
}
