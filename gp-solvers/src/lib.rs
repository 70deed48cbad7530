//! gp-solvers
