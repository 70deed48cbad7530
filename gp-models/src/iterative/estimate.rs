//! What one stochastic evaluation of the log marginal likelihood returns: the types live in
//! [`core::estimate`](crate::core::estimate), shared by every model.

pub use crate::core::estimate::{LmlEstimate, PhaseTimes, SolveReport};
