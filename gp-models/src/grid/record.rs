//! The grid as a saved model stores it: [`GridSettings`] field for field, and the resolved
//! [`RegularGrid`] as per-axis sizes, first points and spacings (gp-structured carries no
//! serde). Used by the SKI and GSGP file formats.

use gp_structured::{GridAxis, InterpolationScheme, OutOfGrid, RegularGrid};
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
use crate::grid::GridSettings;

/// [`GridSettings`] as stored. The field names are those of the version-1 files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GridSettingsRecord {
    grid_sizes: Vec<usize>,
    padding: Option<usize>,
    bounds: Option<Vec<(f64, f64)>>,
    scheme: SchemeRecord,
    out_of_grid: OutOfGridRecord,
    memory_limit: Option<u64>,
}

impl From<&GridSettings> for GridSettingsRecord {
    fn from(g: &GridSettings) -> Self {
        Self {
            grid_sizes: g.sizes.clone(),
            padding: g.padding,
            bounds: g.bounds.clone(),
            scheme: g.scheme.into(),
            out_of_grid: g.out_of_grid.into(),
            memory_limit: g.memory_limit,
        }
    }
}

impl From<GridSettingsRecord> for GridSettings {
    fn from(g: GridSettingsRecord) -> Self {
        Self {
            sizes: g.grid_sizes,
            padding: g.padding,
            bounds: g.bounds,
            scheme: g.scheme.into(),
            out_of_grid: g.out_of_grid.into(),
            memory_limit: g.memory_limit,
        }
    }
}

/// [`InterpolationScheme`] as stored (gp-structured carries no serde).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SchemeRecord {
    Linear,
    Cubic,
}

impl From<InterpolationScheme> for SchemeRecord {
    fn from(s: InterpolationScheme) -> Self {
        match s {
            InterpolationScheme::Linear => Self::Linear,
            InterpolationScheme::Cubic => Self::Cubic,
        }
    }
}

impl From<SchemeRecord> for InterpolationScheme {
    fn from(s: SchemeRecord) -> Self {
        match s {
            SchemeRecord::Linear => Self::Linear,
            SchemeRecord::Cubic => Self::Cubic,
        }
    }
}

/// [`OutOfGrid`] as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutOfGridRecord {
    Error,
    Clamp,
}

impl From<OutOfGrid> for OutOfGridRecord {
    fn from(o: OutOfGrid) -> Self {
        match o {
            OutOfGrid::Error => Self::Error,
            OutOfGrid::Clamp => Self::Clamp,
        }
    }
}

impl From<OutOfGridRecord> for OutOfGrid {
    fn from(o: OutOfGridRecord) -> Self {
        match o {
            OutOfGridRecord::Error => Self::Error,
            OutOfGridRecord::Clamp => Self::Clamp,
        }
    }
}

/// The resolved grid: per axis its number of points, first point and spacing (GSGP files
/// store their grid the same way).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GridRecord {
    sizes: Vec<usize>,
    lo: Vec<f64>,
    spacing: Vec<f64>,
}

impl From<&RegularGrid> for GridRecord {
    fn from(g: &RegularGrid) -> Self {
        Self {
            sizes: g.sizes().to_vec(),
            lo: g.axes().iter().map(GridAxis::lo).collect(),
            spacing: g.axes().iter().map(GridAxis::spacing).collect(),
        }
    }
}

impl GridRecord {
    /// The grid, with gp-structured's checks of each axis (finite start, positive finite
    /// spacing, at least 2 points).
    pub(crate) fn to_grid(&self) -> Result<RegularGrid> {
        let d = self.sizes.len();
        for (context, len) in [
            ("saved grid: first points (one per axis)", self.lo.len()),
            ("saved grid: spacings (one per axis)", self.spacing.len()),
        ] {
            if len != d {
                return Err(ModelError::LengthMismatch {
                    context,
                    expected: d,
                    found: len,
                });
            }
        }
        let axes = (0..d)
            .map(|l| GridAxis::from_spacing(self.lo[l], self.spacing[l], self.sizes[l]))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(RegularGrid::new(axes)?)
    }
}
