//! Batched preconditioned conjugate gradients (mBCG) with a step interface, per-column
//! statuses, the Lanczos coefficients and optional full re-orthogonalization.

pub(crate) mod columns;
pub(crate) mod kernels;
pub(crate) mod options;
mod passes;
mod reorth;
mod result;
mod state;

pub use crate::krylov::Breakdown;
/// The status of one column of a CG run: the shared [`krylov::Status`](crate::krylov::Status)
/// under its former name.
pub use crate::krylov::Status as ColumnStatus;
pub use options::CgOptions;
pub use result::{CgColumn, CgResult, Directions};
pub use state::{cg, CgSolver, CgStep};
