//! CG as a projection method with complete re-orthogonalisation ("FOM", Saad 2003,
//! Eq. 5.7): the stable CG behind every headline result of the KMCG paper. Its directions
//! `S` stay `A`-conjugate and the Gram matrix `SᵀAS` numerically SPD long after textbook
//! CG ([`TextbookCg`](crate::TextbookCg)) has lost conjugacy.

mod options;
mod solver;
pub(crate) mod start;
mod status;
mod sweep;

pub use options::FomOptions;
pub use solver::{fom, FomResult, FomSolver, FomStep};
pub use status::{FomBreakdown, FomStatus};
