//! The paper's numbers (spec Appendix C) as data, and their lookup.

/// Which quantity a paper value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `ε_f`, relative error of the predictive mean.
    EpsF,
    /// `ε_var`, relative error of the predictive variance (incl. σ²).
    EpsVar,
    /// `ε_ev`, relative error of `−log p(y)` (VFE rows in the paper's mis-signed plotted
    /// convention `nlZ_DTC − trace`).
    EpsEv,
    /// `ε_ev` of VFE with the textbook sign `nlZ_DTC + trace` (grids only).
    EpsEvVfeTextbookSign,
    /// SMSE against the true test targets (SOUND).
    Smse,
}

/// The paper's kernel of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperKernel {
    /// Squared exponential (ARD on the dense sets).
    Se,
    /// Matérn-5/2 ARD.
    Matern52,
}

/// One number of Appendix C: the mean over the paper's 10 seeds at step `p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperValue {
    /// The quantity.
    pub metric: Metric,
    /// The kernel.
    pub kernel: PaperKernel,
    /// The data set as the appendix names it (`ABALONE`, `1000x1000`, `SOUND`).
    pub dataset: &'static str,
    /// The method as the appendix names it (`KMCG`, `CG (full reorth.)`, `VFE`, ...).
    pub method: &'static str,
    /// Step `P`.
    pub p: usize,
    /// The value.
    pub value: f64,
    /// How many of the 10 runs reached the step, when fewer did.
    pub runs: Option<u32>,
}

/// The paper's value, if Appendix C has one.
pub fn paper_value(
    metric: Metric,
    kernel: PaperKernel,
    dataset: &str,
    method: &str,
    p: usize,
) -> Option<&'static PaperValue> {
    super::paper_values::PAPER_VALUES.iter().find(|v| {
        v.metric == metric
            && v.kernel == kernel
            && v.dataset == dataset
            && v.method == method
            && v.p == p
    })
}
