//! gp-models
