//! gp-structured
