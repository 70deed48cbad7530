//! Batched preconditioned conjugate gradients (mBCG) with a step interface, per-column
//! statuses, the Lanczos coefficients and optional full re-orthogonalization.

pub(crate) mod kernels;
pub(crate) mod options;
mod reorth;
mod result;
mod state;
mod status;

pub use options::CgOptions;
pub use result::{CgColumn, CgResult, Directions};
pub use state::{cg, CgSolver, CgStep};
pub use status::{Breakdown, ColumnStatus};
