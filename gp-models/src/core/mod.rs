//! The ground every model stands on: the common model interface ([`GpModel`]), the
//! likelihood ([`Likelihood`], [`Gaussian`]), prediction requests ([`PredictRequest`]) and
//! their results ([`Prediction`]), the log-marginal-likelihood estimate ([`LmlEstimate`])
//! and its request ([`LmlRequest`]), one generic [`train`](crate::train()) with an observer,
//! the option parts the iterative models share ([`KrylovSettings`], [`EstimatorSettings`])
//! and short summaries of models.
//!
//! A new model is a module that implements [`GpModel`]: it gets training, the generic
//! reproductions and every function written against the trait for free.

pub mod estimate;
pub(crate) mod io;
pub mod likelihood;
pub mod model;
pub mod predict;
pub mod settings;
pub mod start;
pub mod summary;
pub mod train;

pub use estimate::{LmlEstimate, LmlRequest, PhaseTimes, ProbeSource, SolveReport};
pub use likelihood::{Gaussian, Likelihood, LOG_NOISE_NAME};
pub use model::{GpModel, TrainingObjective};
pub use predict::{
    LatentPrediction, PredictOutput, PredictRequest, Prediction, UnconvergedSolve, VarianceMethod,
    VarianceSource, LOVE_AUTO_MIN_TRAIN, LOVE_DEFAULT_RANK,
};
pub use settings::{
    EstimatorSettings, KrylovSettings, DEFAULT_PREDICTION_TOLERANCE, DEFAULT_VARIANCE_TOLERANCE,
};
pub use start::DataScales;
pub use train::{
    train, train_observed, Optimizer, StartUsed, TrainOptions, TrainProgress, TrainReport,
    TrainResult, TrainRun, TrainStart,
};
