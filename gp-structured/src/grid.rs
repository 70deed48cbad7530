//! Regular tensor grids: per-dimension equally spaced axes and the flat (C-order) index.
//!
//! # Index order
//!
//! A grid point is named by its multi-index `(i_1, …, i_d)`, `0 ≤ i_l < m_l`. Its flat index
//! is C order over the multi-index, **the last dimension varying fastest**:
//!
//! ```text
//! flat = ((i_1·m_2 + i_2)·m_3 + i_3)·… = Σ_l i_l · Π_{k>l} m_k
//! ```
//!
//! which is the row/column order of the standard Kronecker product `K_1 ⊗ K_2 ⊗ … ⊗ K_d`
//! (dimension 1 is the outermost factor). Interpolation weights, the sufficient statistics
//! and grid kernel matrices all use this order.
//!
//! # Padding rule of [`RegularGrid::from_data`]
//!
//! The data range of each dimension is covered by `m_l − 1 − 2k` cells and `k` extra cells
//! are added on each side, so the axis is `lo = min − k·h`, `hi = max + k·h` with
//! `h = (max − min)/(m_l − 1 − 2k)`. Cubic convolution uses the nodes `b−1 … b+2` around the
//! cell `b` of a point, so a point needs **one** full cell between it and each end of the axis;
//! the recommended `k = 2` ([`InterpolationScheme::recommended_padding`]) keeps one further
//! cell of margin so that rounding at the data extremes and test points up to one cell outside
//! the training range still get their full stencil. Linear interpolation needs no cell beyond
//! the data; its recommendation is `k = 1` for the same margin. (The GSGP reference code uses
//! no padding and drops the missing neighbours, so rows near the boundary no longer sum to 1;
//! GSGP's reference code, github.com/ymohit/fkigp, builds such grids.)
//!
//! [`InterpolationScheme::recommended_padding`]: crate::interpolation::InterpolationScheme::recommended_padding

use faer::{Mat, MatRef};

use crate::error::{Result, StructuredError};
use crate::slice_util::{c_strides, checked_product};

/// One equally spaced axis: the points `lo + i·h`, `i = 0 … m−1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridAxis {
    lo: f64,
    h: f64,
    m: usize,
}

impl GridAxis {
    /// `m` equally spaced points from `lo` to `hi`, both included (as `numpy.linspace`).
    ///
    /// Needs finite `lo < hi` and `m ≥ 2`.
    pub fn new(lo: f64, hi: f64, m: usize) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
            return Err(StructuredError::InvalidArgument {
                name: "lo, hi",
                reason: format!("an axis needs finite bounds with lo < hi, got [{lo}, {hi}]"),
            });
        }
        if m < 2 {
            return Err(StructuredError::InvalidArgument {
                name: "m",
                reason: format!("an axis needs at least 2 points, got {m}"),
            });
        }
        Self::from_spacing(lo, (hi - lo) / (m - 1) as f64, m)
    }

    /// `m` points starting at `lo` with spacing `h > 0`.
    pub fn from_spacing(lo: f64, h: f64, m: usize) -> Result<Self> {
        if !lo.is_finite() || !h.is_finite() || h <= 0.0 {
            return Err(StructuredError::InvalidArgument {
                name: "lo, h",
                reason: format!("an axis needs a finite start and a finite spacing h > 0, got lo = {lo}, h = {h}"),
            });
        }
        if m < 2 {
            return Err(StructuredError::InvalidArgument {
                name: "m",
                reason: format!("an axis needs at least 2 points, got {m}"),
            });
        }
        Ok(Self { lo, h, m })
    }

    /// An axis of `m` points over the data range `[min, max]` padded by `pad_cells` cells on
    /// each side (the rule in the [module docs](self)).
    ///
    /// A zero-width range (a constant column) is widened to `[min − ½, min + ½]`.
    /// Needs `m ≥ 2·pad_cells + 2`.
    pub fn from_data_range(min: f64, max: f64, m: usize, pad_cells: usize) -> Result<Self> {
        if !(min.is_finite() && max.is_finite()) || min > max {
            return Err(StructuredError::InvalidArgument {
                name: "min, max",
                reason: format!("the data range must be finite with min ≤ max, got [{min}, {max}]"),
            });
        }
        let inner = m
            .checked_sub(1 + 2 * pad_cells)
            .filter(|&c| c >= 1)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "m",
                reason: format!(
                    "{m} points cannot cover the data with {pad_cells} padding cells per side; \
                     need m ≥ {}",
                    2 * pad_cells + 2
                ),
            })?;
        let (min, max) = if max > min {
            (min, max)
        } else {
            (min - 0.5, min + 0.5)
        };
        let h = (max - min) / inner as f64;
        Self::from_spacing(min - pad_cells as f64 * h, h, m)
    }

    /// First point.
    pub fn lo(&self) -> f64 {
        self.lo
    }

    /// Last point, `lo + (m−1)·h`.
    pub fn hi(&self) -> f64 {
        self.lo + (self.m - 1) as f64 * self.h
    }

    /// Spacing `h`.
    pub fn spacing(&self) -> f64 {
        self.h
    }

    /// Number of points `m`.
    pub fn num_points(&self) -> usize {
        self.m
    }

    /// The `i`-th point `lo + i·h` (not range-checked: any `i` gives the extended lattice).
    pub fn point(&self, i: usize) -> f64 {
        self.lo + i as f64 * self.h
    }

    /// All points of the axis.
    pub fn points(&self) -> Vec<f64> {
        (0..self.m).map(|i| self.point(i)).collect()
    }
}

/// A regular tensor grid `G = axis_1 × … × axis_d` with the flat C order of the
/// [module docs](self) (last dimension fastest, the order of `K_1 ⊗ … ⊗ K_d`).
#[derive(Debug, Clone, PartialEq)]
pub struct RegularGrid {
    axes: Vec<GridAxis>,
    sizes: Vec<usize>,
    strides: Vec<usize>,
    m: usize,
}

impl RegularGrid {
    /// A grid from its axes (at least one); the total number of points must fit in `usize`.
    pub fn new(axes: Vec<GridAxis>) -> Result<Self> {
        if axes.is_empty() {
            return Err(StructuredError::InvalidArgument {
                name: "axes",
                reason: "a grid needs at least one axis".into(),
            });
        }
        let sizes: Vec<usize> = axes.iter().map(|a| a.m).collect();
        let m = checked_product(&sizes, "axes")?;
        let strides = c_strides(&sizes);
        Ok(Self {
            axes,
            sizes,
            strides,
            m,
        })
    }

    /// A grid with explicit bounds `[lo_l, hi_l]` (endpoints included) and sizes `m_l`.
    pub fn from_bounds(lo: &[f64], hi: &[f64], sizes: &[usize]) -> Result<Self> {
        if lo.len() != sizes.len() || hi.len() != sizes.len() {
            return Err(StructuredError::InvalidArgument {
                name: "lo, hi, sizes",
                reason: format!(
                    "need one bound pair per size, got {} lower, {} upper bounds and {} sizes",
                    lo.len(),
                    hi.len(),
                    sizes.len()
                ),
            });
        }
        let axes = (0..sizes.len())
            .map(|l| GridAxis::new(lo[l], hi[l], sizes[l]))
            .collect::<Result<Vec<_>>>()?;
        Self::new(axes)
    }

    /// A grid over the bounding box of the rows of `x` (`n × d`, `n ≥ 1`), with `sizes[l]`
    /// points in dimension `l` and `pad_cells` cells of padding on each side (the rule in the
    /// [module docs](self); use `InterpolationScheme::recommended_padding()`).
    pub fn from_data(x: MatRef<'_, f64>, sizes: &[usize], pad_cells: usize) -> Result<Self> {
        if x.nrows() == 0 {
            return Err(StructuredError::InvalidArgument {
                name: "x",
                reason: "cannot build a grid from zero points".into(),
            });
        }
        if x.ncols() != sizes.len() {
            return Err(StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!(
                    "x has {} columns (dimensions) but {} grid sizes were given",
                    x.ncols(),
                    sizes.len()
                ),
            });
        }
        gp_linalg::validate::check_finite_mat(x, "grid data x")?;
        let axes = (0..sizes.len())
            .map(|l| {
                let col = x.col(l);
                let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
                for &v in col.iter() {
                    min = min.min(v);
                    max = max.max(v);
                }
                GridAxis::from_data_range(min, max, sizes[l], pad_cells)
            })
            .collect::<Result<Vec<_>>>()?;
        Self::new(axes)
    }

    /// Number of dimensions `d`.
    pub fn dims(&self) -> usize {
        self.axes.len()
    }

    /// Total number of grid points `m = Π m_l`.
    pub fn num_points(&self) -> usize {
        self.m
    }

    /// The axes.
    pub fn axes(&self) -> &[GridAxis] {
        &self.axes
    }

    /// Points per dimension `m_l`.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// C-order strides: `strides[l] = Π_{k>l} m_k`.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Flat index of a multi-index (checked against the sizes).
    pub fn flat_index(&self, multi: &[usize]) -> Result<usize> {
        if multi.len() != self.dims() || multi.iter().zip(&self.sizes).any(|(&i, &m)| i >= m) {
            return Err(StructuredError::InvalidArgument {
                name: "multi",
                reason: format!(
                    "{multi:?} is not a multi-index of a grid of sizes {:?}",
                    self.sizes
                ),
            });
        }
        Ok(multi.iter().zip(&self.strides).map(|(i, s)| i * s).sum())
    }

    /// Multi-index of a flat index `< m`.
    pub fn multi_index(&self, flat: usize) -> Result<Vec<usize>> {
        if flat >= self.m {
            return Err(StructuredError::InvalidArgument {
                name: "flat",
                reason: format!(
                    "flat index {flat} is out of range for a grid of {} points",
                    self.m
                ),
            });
        }
        Ok(self
            .strides
            .iter()
            .zip(&self.sizes)
            .map(|(s, m)| (flat / s) % m)
            .collect())
    }

    /// Coordinates of the grid point with the given flat index.
    pub fn point(&self, flat: usize) -> Result<Vec<f64>> {
        let multi = self.multi_index(flat)?;
        Ok(multi
            .iter()
            .zip(&self.axes)
            .map(|(&i, a)| a.point(i))
            .collect())
    }

    /// All grid points as the rows of an `m × d` matrix, in flat order (dense; meant for
    /// tests and small grids).
    pub fn points(&self) -> Mat<f64> {
        Mat::from_fn(self.m, self.dims(), |j, l| {
            self.axes[l].point((j / self.strides[l]) % self.sizes[l])
        })
    }
}
