//! GP-GRIEF (Evans & Nair 2018): Gaussian processes with a kernel made of the `p` leading
//! Nyström eigenfunctions on a Cartesian grid of inducing points, evaluated without forming
//! the `m = Π m̄_i` grid points (§3–4 of the paper).
//!
//! * [`grid`]: [`InducingGrid`], the per-axis grids built from the training inputs;
//! * [`axis`]: [`AxisBasis`], one 1-D kernel eigendecomposition and its scaled eigenfunctions;
//! * [`basis`]: [`GriefBasis`], the Algorithm-1 selection, `Φ`, its derivatives and the
//!   streamed statistics [`GriefStats`].

pub mod axis;
pub mod basis;
pub mod grid;

pub use axis::{AxisBasis, AXIS_JITTER, EIGENVALUE_FLOOR};
pub use basis::{GriefBasis, GriefBasisOptions, GriefStats, LOG_FORM_MIN_DIMS};
pub use grid::{GridOptions, InducingGrid, DEFAULT_POINTS_PER_AXIS};
