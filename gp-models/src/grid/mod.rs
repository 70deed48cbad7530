//! What the grid-interpolation models [`Ski`](crate::Ski) and [`Gsgp`](crate::Gsgp) share:
//! both approximate the kernel matrix by `W K_G Wᵀ` on a regular grid, so the grid, the grid
//! kernel, the stencil priors, the LOVE cache and the memory limit are the same for both;
//! only how they solve with `K̂ = W K_G Wᵀ + σ²I` differs (CG on `W`, or factorized solvers
//! on the sufficient statistics). Keeping these pieces here lets neither model reach into the
//! other.
//!
//! * [`kernel`]: [`GridKernel`], `K_G` as a Kronecker product of Toeplitz factors, and the
//!   prior covariances `W_a K_G W_bᵀ` of interpolated points from the stencils' 1-D forms;
//! * `stencil`: `W*ᵀ` of a few test points as a dense block;
//! * [`love`]: [`LoveCache`], [`LoveOptions`], [`LoveStart`];
//! * [`memory`]: [`SkiMemory`], the memory report, and the limit it is checked against;
//! * [`options`]: [`GridSettings`], the grid both models lay over the data.

pub mod kernel;
pub mod love;
pub mod memory;
pub mod options;
pub(crate) mod record;
pub(crate) mod stencil;

pub use kernel::GridKernel;
pub use love::{LoveCache, LoveOptions, LoveStart};
pub use memory::{SkiMemory, DEFAULT_MEMORY_CAP};
pub use options::GridSettings;
