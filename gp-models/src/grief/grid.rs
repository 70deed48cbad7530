//! The grid of inducing points of GP-GRIEF: a Cartesian product of `d` one-dimensional grids
//! (Evans & Nair 2018, §4). The grid is never expanded: only its axes and `ln m = Σ ln m̄_i`
//! are kept, so `m = Π m̄_i` may be `10^33` or `10^300`.
//!
//! [`InducingGrid::from_data`] follows the authors' reference implementation: along axis `i`
//! with `n_i` distinct training values the grid has `m̄_i = max(min(m̄, n_i), 1)` points; when
//! `m̄_i = n_i` they are the sorted distinct values (binary and categorical columns keep their
//! levels, a constant column gets one point), otherwise `m̄` evenly spaced points over
//! `[min, max]`; [`GridOptions::beyond_domain`] optionally moves the two outer points beyond
//! the data.

use faer::MatRef;
use gp_linalg::validate::check_finite_mat;

use crate::error::{ModelError, Result};

/// The paper's number of grid points per dimension, `m̄ = 10` (Evans & Nair 2018, §6).
pub const DEFAULT_POINTS_PER_AXIS: usize = 10;

/// How [`InducingGrid::from_data`] places the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridOptions {
    /// The number of points per axis `m̄` (at least 1); an axis with fewer distinct values gets
    /// one point per distinct value. Default [`DEFAULT_POINTS_PER_AXIS`].
    pub points_per_axis: usize,
    /// A fraction `f ≥ 0` of the data range by which the grid reaches beyond the data, so
    /// that test points slightly outside the training range stay inside it. As in the
    /// reference code, an axis of `m̄_i ≥ 2` points and non-zero range keeps `m̄_i` points:
    /// the two outer ones at `min − f·(max − min)` and `max + f·(max − min)`, the `m̄_i − 2`
    /// inner ones evenly spaced over `[min, max]` (`m̄_i − 2 < n_i`, so never on the distinct
    /// values; a binary column gets just the two outer points). `0` (default) turns it off;
    /// constant axes are never widened.
    pub beyond_domain: f64,
}

impl Default for GridOptions {
    fn default() -> Self {
        Self {
            points_per_axis: DEFAULT_POINTS_PER_AXIS,
            beyond_domain: 0.0,
        }
    }
}

impl GridOptions {
    /// Checks the options on their own (as [`InducingGrid::from_data`] does first).
    ///
    /// Errors: [`ModelError::InvalidOption`] for `points_per_axis = 0` or a negative or
    /// non-finite `beyond_domain`.
    pub fn validate(&self) -> Result<()> {
        if self.points_per_axis == 0 {
            return Err(ModelError::InvalidOption {
                name: "points_per_axis",
                reason: "the grid needs at least one point per axis; use m̄ ≥ 1 (the paper uses 10)"
                    .to_string(),
            });
        }
        let f = self.beyond_domain;
        if !(f.is_finite() && f >= 0.0) {
            return Err(ModelError::InvalidOption {
                name: "beyond_domain",
                reason: format!(
                    "the widening fraction must be finite and ≥ 0, got {f}; use 0 for a grid \
                     over the data range"
                ),
            });
        }
        Ok(())
    }
}

/// A Cartesian grid of inducing points `U = u⁽¹⁾ × … × u⁽ᵈ⁾` (Evans & Nair 2018, §4), stored as
/// its `d` sorted, strictly increasing axes. Dimension 1 is the outermost Kronecker factor:
/// the grid point with multi-index `(a_1, …, a_d)` has global index `Σ_i a_i Π_{j>i} m̄_j`.
#[derive(Debug, Clone, PartialEq)]
pub struct InducingGrid {
    axes: Vec<Vec<f64>>,
}

impl InducingGrid {
    /// The reference rule (see the [module documentation](self)) applied to the training
    /// points `x` (`n × d`, one point per row).
    ///
    /// Errors: no points or no columns ([`ModelError::EmptyData`]), a non-finite coordinate
    /// ([`ModelError::NonFinite`]), `points_per_axis = 0` or a negative or non-finite
    /// `beyond_domain` ([`ModelError::InvalidOption`]).
    pub fn from_data(x: MatRef<'_, f64>, options: &GridOptions) -> Result<Self> {
        let (n, d) = (x.nrows(), x.ncols());
        if n == 0 || d == 0 {
            return Err(ModelError::EmptyData {
                context: "building the GRIEF inducing grid",
                n,
                d,
            });
        }
        options.validate()?;
        let f = options.beyond_domain;
        check_finite_mat(x, "the points of the GRIEF inducing grid")
            .map_err(ModelError::from_finite_check)?;
        let axes = (0..d)
            .map(|i| {
                let mut values: Vec<f64> = x.col(i).iter().copied().collect();
                values.sort_by(f64::total_cmp);
                values.dedup();
                axis_from_distinct(values, options.points_per_axis, f)
            })
            .collect();
        Ok(Self { axes })
    }

    /// A grid with the given axes, each sorted strictly increasing.
    ///
    /// Errors: no axes, an empty axis ([`ModelError::EmptyData`]), a non-finite point
    /// ([`ModelError::NonFinite`]) or an axis that is not strictly increasing
    /// ([`ModelError::InvalidOption`]).
    pub fn from_axes(axes: Vec<Vec<f64>>) -> Result<Self> {
        if axes.is_empty() {
            return Err(ModelError::EmptyData {
                context: "building a GRIEF inducing grid from explicit axes",
                n: 0,
                d: 0,
            });
        }
        for (i, axis) in axes.iter().enumerate() {
            if axis.is_empty() {
                return Err(ModelError::EmptyData {
                    context: "building a GRIEF inducing grid from explicit axes (an empty axis)",
                    n: 0,
                    d: axes.len(),
                });
            }
            if let Some(row) = axis.iter().position(|v| !v.is_finite()) {
                return Err(ModelError::NonFinite {
                    context: "an axis of the GRIEF inducing grid",
                    row,
                    col: i,
                    value: axis[row],
                });
            }
            if let Some(k) = axis.windows(2).position(|w| w[0] >= w[1]) {
                return Err(ModelError::InvalidOption {
                    name: "axes",
                    reason: format!(
                        "axis {i} is not strictly increasing at position {k} ({} then {}); \
                         sort each axis and remove repeated points",
                        axis[k],
                        axis[k + 1]
                    ),
                });
            }
        }
        Ok(Self { axes })
    }

    /// The number of dimensions `d`.
    pub fn dims(&self) -> usize {
        self.axes.len()
    }

    /// The axes, `axes()[i]` the `m̄_i` sorted points of dimension `i`.
    pub fn axes(&self) -> &[Vec<f64>] {
        &self.axes
    }

    /// The points of axis `i`, or `None` if `i ≥ d`.
    pub fn axis(&self, i: usize) -> Option<&[f64]> {
        self.axes.get(i).map(Vec::as_slice)
    }

    /// The points per axis `m̄_i`.
    pub fn sizes(&self) -> Vec<usize> {
        self.axes.iter().map(Vec::len).collect()
    }

    /// `ln m = Σ_i ln m̄_i`, the logarithm of the number of grid points (finite for any `d`).
    pub fn log_size(&self) -> f64 {
        self.axes.iter().map(|a| (a.len() as f64).ln()).sum()
    }

    /// The number of grid points `m = Π m̄_i`, or `None` if it does not fit in a `usize`.
    pub fn size(&self) -> Option<usize> {
        self.axes
            .iter()
            .try_fold(1usize, |acc, a| acc.checked_mul(a.len()))
    }
}

/// One axis from its sorted distinct values (at least one).
fn axis_from_distinct(distinct: Vec<f64>, points: usize, widen: f64) -> Vec<f64> {
    let size = points.min(distinct.len()).max(1);
    let (min, max) = (distinct[0], distinct[distinct.len() - 1]);
    if widen > 0.0 && size >= 2 && max > min {
        let pad = widen * (max - min);
        let mut axis = Vec::with_capacity(size);
        axis.push(min - pad);
        axis.extend(linspace(min, max, size - 2));
        axis.push(max + pad);
        return axis;
    }
    if size == distinct.len() {
        distinct
    } else {
        linspace(min, max, size)
    }
}

/// `size` evenly spaced points from `lo` to `hi` (NumPy's `linspace`: `[lo]` when `size = 1`).
fn linspace(lo: f64, hi: f64, size: usize) -> Vec<f64> {
    if size <= 1 {
        return vec![lo; size];
    }
    let step = (hi - lo) / (size - 1) as f64;
    (0..size)
        .map(|k| {
            if k + 1 == size {
                hi
            } else {
                lo + step * k as f64
            }
        })
        .collect()
}
