//! Per-step records of every method on one problem.

use serde::{Deserialize, Serialize};

/// The methods of the paper's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Method {
    /// CG with complete re-orthogonalisation (FOM) on `K + σ²I`.
    Cg,
    /// KMCG on FOM directions (run on `K`).
    Kmcg,
    /// VFE (Titsias) with `M(P)` random inducing inputs (nested subsets of the training
    /// inputs).
    Vfe,
    /// FITC with `M(P)` random inducing inputs.
    Fitc,
    /// VFE with `M` inducing inputs on a regular grid over the inputs' range (SOUND).
    VfeGrid,
    /// FITC with `M` inducing inputs on a regular grid (SOUND).
    FitcGrid,
    /// Textbook CG (normalised directions, no re-orthogonalisation) on `K + σ²I`.
    CgTextbook,
    /// KMCG on textbook-CG directions (run on `K`).
    KmcgTextbook,
}

impl Method {
    /// The row label of Appendix C.
    pub fn paper_label(self) -> &'static str {
        match self {
            Self::Cg => "CG (full reorth.)",
            Self::Kmcg => "KMCG",
            Self::Vfe => "VFE",
            Self::Fitc => "FITC",
            Self::VfeGrid => "VFE regular grid (1 run, seed 12355)",
            Self::FitcGrid => "FITC regular grid (1 run, seed 12355)",
            Self::CgTextbook => "CG textbook",
            Self::KmcgTextbook => "KMCG on textbook CG",
        }
    }

    /// Our label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Cg => "CG (FOM)",
            Self::Kmcg => "KMCG",
            Self::Vfe => "VFE",
            Self::Fitc => "FITC",
            Self::VfeGrid => "VFE (grid inducing)",
            Self::FitcGrid => "FITC (grid inducing)",
            Self::CgTextbook => "CG (textbook)",
            Self::KmcgTextbook => "KMCG on textbook CG",
        }
    }
}

/// The metrics of one method at one step `P` (averaged over repetitions for the
/// baselines).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Steps `P`.
    pub p: usize,
    /// `ε_f` (relative error of the mean against the exact GP's).
    pub eps_f: f64,
    /// `ε_var` (of the predictive variance incl. σ²); `None` for CG.
    pub eps_var: Option<f64>,
    /// `ε_ev` (of `−log p(y)`); `None` for CG. VFE: the textbook sign `nlZ_DTC + trace`.
    pub eps_ev: Option<f64>,
    /// `nlZ_hat − nlZ` (its sign is claim C5's).
    pub nlz_error: Option<f64>,
    /// VFE only: `ε_ev` with the paper's plotted (mis-signed) `nlZ_DTC − trace`.
    pub eps_ev_plotted: Option<f64>,
    /// Time in seconds: cumulative for CG/KMCG; for the baselines a from-scratch fit and
    /// prediction at this step (the first repetition's, at the run's timed steps; `None`
    /// at the other steps, whose numbers come from one nested pass).
    pub seconds: Option<f64>,
}

/// One method's record on one problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodCurve {
    /// The method.
    pub method: Method,
    /// Its metrics at the recorded steps, increasing `P`.
    pub steps: Vec<StepMetrics>,
    /// The last step every repetition reached (a breakdown or a failed Cholesky ends a run:
    /// the paper's "crash"), and the number of repetitions that crashed.
    pub last_good: usize,
    /// Repetitions that ended in a crash.
    pub crashed: usize,
    /// Repetitions run.
    pub runs: usize,
}

impl MethodCurve {
    /// The metrics at step `p`, if recorded.
    pub fn at(&self, p: usize) -> Option<&StepMetrics> {
        self.steps.iter().find(|s| s.p == p)
    }
}

/// All methods on one data set and kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProblemRun {
    /// Data set (the paper's upper-case name).
    pub dataset: String,
    /// Kernel label (`SE`, `Matérn`).
    pub kernel: String,
    /// Whether real data or a labelled stand-in.
    pub stand_in: bool,
    /// The curves.
    pub curves: Vec<MethodCurve>,
}

impl ProblemRun {
    /// The curve of a method.
    pub fn curve(&self, m: Method) -> Option<&MethodCurve> {
        self.curves.iter().find(|c| c.method == m)
    }
}
