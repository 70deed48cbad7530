//! Summary statistics of repeated runs (folds, seeds).

/// Mean and standard deviation with ddof = 0 (the GRIEF spec's decision for Table 1's folds;
/// also RTGPS's seeds). `(0, 0)` for no values.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}
