//! The names most programs need, in one import: `use gp_models::prelude::*;`.
//!
//! The models, their options and the option parts they share, [`NormalizedY`], the common
//! interface ([`GpModel`], [`PredictRequest`],
//! [`LmlRequest`], [`train()`]) and the error type. Kernels come from `gp_kernels`.

pub use crate::core::{
    train, train_observed, EstimatorSettings, Gaussian, GpModel, KrylovSettings, Likelihood,
    LmlEstimate, LmlRequest, Optimizer, PredictOutput, PredictRequest, Prediction, ProbeSource,
    TrainOptions, TrainResult, TrainStart, VarianceMethod,
};
pub use crate::data::NormalizedY;
pub use crate::error::{ModelError, Result};
pub use crate::grid::GridSettings;
pub use crate::{
    ExactGp, FitOptions, Gsgp, GsgpOptions, InducingPoints, IterativeGp, IterativeOptions, Ski,
    SkiOptions, SparseGp, SparseMethod, SparseOptions,
};
