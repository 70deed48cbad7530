//! A Monte-Carlo estimate with its per-probe terms.

/// A stochastic estimate: the mean of per-probe terms (plus a constant), with its standard
/// error.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// The per-probe terms whose mean (plus [`offset`](Self::offset)) is the estimate.
    pub per_probe: Vec<f64>,
    /// A deterministic part added to the mean (for example `log det P`), 0 otherwise.
    pub offset: f64,
    /// Standard error of the mean, `sd(per_probe) / √t` (NaN for fewer than two probes).
    pub std_error: f64,
}

impl Estimate {
    /// The estimate `offset + mean(per_probe)` with the standard error of the mean,
    /// `sd(per_probe)/√t` (sample standard deviation, divisor `t − 1`); NaN for fewer than two
    /// terms, and value `offset` for none.
    ///
    /// Models that average their own per-probe terms (Hutchinson traces, SLQ terms) build
    /// their estimates with this, so that every estimate of the workspace has the same
    /// definition.
    ///
    /// ```
    /// use gp_solvers::Estimate;
    ///
    /// let e = Estimate::from_terms(vec![1.0, 2.0, 3.0], 10.0);
    /// assert_eq!(e.value, 12.0);
    /// assert!((e.std_error - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
    /// assert!(Estimate::from_terms(vec![1.0], 0.0).std_error.is_nan());
    /// ```
    pub fn from_terms(per_probe: Vec<f64>, offset: f64) -> Self {
        let t = per_probe.len() as f64;
        let mean = if per_probe.is_empty() {
            0.0
        } else {
            per_probe.iter().sum::<f64>() / t
        };
        let std_error = if per_probe.len() < 2 {
            f64::NAN
        } else {
            let var = per_probe
                .iter()
                .map(|v| (v - mean) * (v - mean))
                .sum::<f64>()
                / (t - 1.0);
            (var / t).sqrt()
        };
        Self {
            value: offset + mean,
            per_probe,
            offset,
            std_error,
        }
    }
}
