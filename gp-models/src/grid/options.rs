//! The settings SKI and GSGP share and the grid they describe: both models build the same
//! grid from the same fields (sizes, padding or bounds, scheme) and check the same solver
//! settings, so [`SkiOptions`](crate::SkiOptions) and [`GsgpOptions`](crate::GsgpOptions)
//! lend their fields to one [`GridOptions`] instead of one model converting its options into
//! the other's. Errors name the option of the model they came from ([`OptionNames`]).

use faer::MatRef;
use gp_structured::{InterpolationScheme, RegularGrid};

use crate::error::{ModelError, Result};

/// The names of the shared options, as errors cite them (`SkiOptions::probes`, ...).
#[derive(Debug)]
pub(crate) struct OptionNames {
    pub probes: &'static str,
    pub cg_tolerance: &'static str,
    pub prediction_tolerance: &'static str,
    pub max_cg_iterations: &'static str,
    pub bounds: &'static str,
    pub memory_limit: &'static str,
    pub grid_sizes: &'static str,
}

/// The grid and solver settings common to SKI and GSGP, borrowed from either's options.
#[derive(Debug)]
pub(crate) struct GridOptions<'a> {
    pub grid_sizes: &'a [usize],
    pub padding: Option<usize>,
    pub bounds: Option<&'a [(f64, f64)]>,
    pub scheme: InterpolationScheme,
    pub probes: usize,
    pub cg_tolerance: f64,
    pub prediction_tolerance: f64,
    pub max_cg_iterations: usize,
    pub memory_limit: Option<u64>,
    /// Which model's option names the errors cite.
    pub names: &'static OptionNames,
}

impl GridOptions<'_> {
    /// The padding in cells: `padding`, or the scheme's recommendation.
    pub fn resolved_padding(&self) -> usize {
        self.padding
            .unwrap_or_else(|| self.scheme.recommended_padding())
    }

    /// The grid sizes for `n` points in `d` dimensions: `grid_sizes` if given, otherwise
    /// `⌈(n/2)^{1/d}⌉ + 2·padding + 1` per dimension (at least the stencil width).
    ///
    /// Errors with [`ModelError::InvalidOption`] if `grid_sizes` is given with a length other
    /// than `d`.
    pub fn resolved_grid_sizes(&self, n: usize, d: usize) -> Result<Vec<usize>> {
        if !self.grid_sizes.is_empty() {
            if self.grid_sizes.len() != d {
                return Err(ModelError::InvalidOption {
                    name: self.names.grid_sizes,
                    reason: format!(
                        "need one grid size per input dimension: the data have {d} dimensions, \
                         {} sizes were given",
                        self.grid_sizes.len()
                    ),
                });
            }
            return Ok(self.grid_sizes.to_vec());
        }
        let interior = ((n as f64 / 2.0).max(1.0).powf(1.0 / d.max(1) as f64)).ceil() as usize;
        let m = (interior + 2 * self.resolved_padding() + 1).max(self.scheme.stencil_width());
        Ok(vec![m; d])
    }

    /// Checks the settings: at least one probe, finite non-negative tolerances, at least one
    /// CG iteration, finite bounds with `lo < hi`, a positive memory limit.
    ///
    /// Errors with [`ModelError::InvalidOption`].
    pub fn validate(&self) -> Result<()> {
        let bad = |name, reason: String| Err(ModelError::InvalidOption { name, reason });
        if self.probes == 0 {
            return bad(
                self.names.probes,
                "need at least one probe vector (two for standard errors)".into(),
            );
        }
        for (name, tol) in [
            (self.names.cg_tolerance, self.cg_tolerance),
            (self.names.prediction_tolerance, self.prediction_tolerance),
        ] {
            if !(tol.is_finite() && tol >= 0.0) {
                return bad(name, format!("must be finite and non-negative, got {tol}"));
            }
        }
        if self.max_cg_iterations == 0 {
            return bad(self.names.max_cg_iterations, "must be at least 1".into());
        }
        if let Some(bounds) = self.bounds {
            if let Some((l, (lo, hi))) = bounds
                .iter()
                .enumerate()
                .find(|(_, (lo, hi))| !(lo.is_finite() && hi.is_finite() && lo < hi))
            {
                return bad(
                    self.names.bounds,
                    format!("dimension {l}: need finite bounds with lo < hi, got ({lo}, {hi})"),
                );
            }
        }
        if self.memory_limit == Some(0) {
            return bad(
                self.names.memory_limit,
                "must be positive (or None for the automatic limit)".into(),
            );
        }
        Ok(())
    }

    /// The grid with the given sizes for the points `x` (explicit bounds, or the data's
    /// bounding box with padding), without a memory check: each model checks its own
    /// estimate first.
    pub fn grid_with_sizes(&self, x: MatRef<'_, f64>, sizes: &[usize]) -> Result<RegularGrid> {
        let d = x.ncols();
        match self.bounds {
            Some(bounds) => {
                if bounds.len() != d {
                    return Err(ModelError::InvalidOption {
                        name: self.names.bounds,
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
