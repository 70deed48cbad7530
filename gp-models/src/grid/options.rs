//! [`GridSettings`]: how [`Ski`](crate::Ski) and [`Gsgp`](crate::Gsgp) lay their regular
//! grid over the data. Both models hold one ([`SkiOptions::grid`](crate::SkiOptions::grid),
//! [`GsgpOptions::grid`](crate::GsgpOptions::grid)), so the same settings and data give the
//! same grid in both.

use faer::MatRef;
use gp_structured::{InterpolationOptions, InterpolationScheme, OutOfGrid, RegularGrid};

use crate::core::settings::{OptionField, OptionOwner};
use crate::error::{ModelError, Result};

/// The regular grid of a grid-interpolation model and how points are interpolated on it.
///
/// The grid: `sizes[l]` points in dimension `l` over the bounding box of the training points
/// padded by `padding` cells on each side (or over explicit `bounds`).
///
/// ```
/// use gp_models::grid::GridSettings;
///
/// let grid = GridSettings { sizes: vec![50, 40], ..GridSettings::default() };
/// assert_eq!(grid.resolved_padding(), 2); // cubic interpolation
/// assert_eq!(grid.resolved_sizes(1000, 2)?, vec![50, 40]);
/// // Without sizes: ⌈(n/2)^{1/d}⌉ interior points plus the padding on both sides.
/// assert_eq!(GridSettings::default().resolved_sizes(1000, 1)?, vec![505]);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GridSettings {
    /// Grid points per input dimension, `m_l` (each at least `2·padding + 2` and at least
    /// the stencil width, 4 for cubic). Default empty: chosen from `n` by the GSGP reference
    /// code's rule, `m_l = ⌈(n/2)^{1/d}⌉` interior points plus the padding on both sides
    /// (see [`resolved_sizes`](Self::resolved_sizes)).
    pub sizes: Vec<usize>,
    /// Cells of padding on each side of the data range (default `None`: the scheme's
    /// recommendation, 2 for cubic and 1 for linear, so that every training point and test
    /// points up to one cell outside the data range have their full stencil). Ignored with
    /// explicit `bounds`.
    pub padding: Option<usize>,
    /// Explicit grid bounds `(lo_l, hi_l)` per dimension, both ends grid points (default
    /// `None`: the padded data range). Points whose stencil does not fit are handled by
    /// `out_of_grid`.
    pub bounds: Option<Vec<(f64, f64)>>,
    /// Interpolation scheme (default Keys cubic, `a = −½`, as SKI and GSGP; `4^d` weights
    /// per point).
    pub scheme: InterpolationScheme,
    /// What to do with points whose stencil does not fit in the grid (default
    /// [`OutOfGrid::Error`]: [`ModelError::OutsideGrid`]).
    pub out_of_grid: OutOfGrid,
    /// Memory limit in bytes for the grid-space working set (default `None`: the
    /// `MemAvailable` line of `/proc/meminfo` when readable, else 16 GiB). See
    /// [`SkiMemory`](crate::grid::SkiMemory) and [`gsgp::memory`](crate::gsgp::memory) for
    /// the estimates.
    pub memory_limit: Option<u64>,
}

impl Default for GridSettings {
    fn default() -> Self {
        Self {
            sizes: Vec::new(),
            padding: None,
            bounds: None,
            scheme: InterpolationScheme::Cubic,
            out_of_grid: OutOfGrid::Error,
            memory_limit: None,
        }
    }
}

impl GridSettings {
    /// The padding in cells: `padding`, or the scheme's recommendation.
    pub fn resolved_padding(&self) -> usize {
        self.padding
            .unwrap_or_else(|| self.scheme.recommended_padding())
    }

    /// The interpolation options (scheme and out-of-grid policy).
    pub fn interpolation(&self) -> InterpolationOptions {
        InterpolationOptions {
            scheme: self.scheme,
            out_of_grid: self.out_of_grid,
        }
    }

    /// The grid sizes for `n` points in `d` dimensions: `sizes` if given, otherwise
    /// `⌈(n/2)^{1/d}⌉ + 2·padding + 1` per dimension (at least the stencil width).
    ///
    /// Errors with [`ModelError::InvalidOption`] if `sizes` is given with a length other than
    /// `d`.
    pub fn resolved_sizes(&self, n: usize, d: usize) -> Result<Vec<usize>> {
        self.resolved_sizes_for(n, d, OptionOwner::Ski)
    }

    /// [`resolved_sizes`](Self::resolved_sizes) with errors naming `owner`'s option.
    pub(crate) fn resolved_sizes_for(
        &self,
        n: usize,
        d: usize,
        owner: OptionOwner,
    ) -> Result<Vec<usize>> {
        if !self.sizes.is_empty() {
            if self.sizes.len() != d {
                return Err(ModelError::InvalidOption {
                    name: owner.name(OptionField::GridSizes),
                    reason: format!(
                        "need one grid size per input dimension: the data have {d} dimensions, \
                         {} sizes were given",
                        self.sizes.len()
                    ),
                });
            }
            return Ok(self.sizes.clone());
        }
        let interior = ((n as f64 / 2.0).max(1.0).powf(1.0 / d.max(1) as f64)).ceil() as usize;
        let m = (interior + 2 * self.resolved_padding() + 1).max(self.scheme.stencil_width());
        Ok(vec![m; d])
    }

    /// Checks the settings: finite bounds with `lo < hi`, a positive memory limit. Errors
    /// name the option as `owner` spells it.
    pub(crate) fn validate(&self, owner: OptionOwner) -> Result<()> {
        if let Some(bounds) = &self.bounds {
            if let Some((l, (lo, hi))) = bounds
                .iter()
                .enumerate()
                .find(|(_, (lo, hi))| !(lo.is_finite() && hi.is_finite() && lo < hi))
            {
                return Err(ModelError::InvalidOption {
                    name: owner.name(OptionField::Bounds),
                    reason: format!(
                        "dimension {l}: need finite bounds with lo < hi, got ({lo}, {hi})"
                    ),
                });
            }
        }
        if self.memory_limit == Some(0) {
            return Err(ModelError::InvalidOption {
                name: owner.name(OptionField::MemoryLimit),
                reason: "must be positive (or None for the automatic limit)".into(),
            });
        }
        Ok(())
    }

    /// The grid with the given sizes for the points `x` (explicit bounds, or the data's
    /// bounding box with padding), without a memory check: each model checks its own
    /// estimate first.
    pub(crate) fn grid_with_sizes(
        &self,
        x: MatRef<'_, f64>,
        sizes: &[usize],
        owner: OptionOwner,
    ) -> Result<RegularGrid> {
        let d = x.ncols();
        match &self.bounds {
            Some(bounds) => {
                if bounds.len() != d {
                    return Err(ModelError::InvalidOption {
                        name: owner.name(OptionField::Bounds),
                        reason: format!(
                            "need one (lo, hi) pair per input dimension: {d} dimensions, {} pairs",
                            bounds.len()
                        ),
                    });
                }
                let lo: Vec<f64> = bounds.iter().map(|b| b.0).collect();
                let hi: Vec<f64> = bounds.iter().map(|b| b.1).collect();
                Ok(RegularGrid::from_bounds(&lo, &hi, sizes)?)
            }
            None => Ok(RegularGrid::from_data(x, sizes, self.resolved_padding())?),
        }
    }
}
