//! Summary statistics of repeated runs (folds, seeds).

/// Mean and standard deviation with ddof = 0 (the GRIEF spec's decision for Table 1's folds;
/// also RTGPS's seeds). `(0, 0)` for no values.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Ranks of `values` from 1, ties given the mean of the ranks they span.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation of two equally long samples (Pearson's on average ranks, so
/// ties are handled); `NaN` for fewer than two values or a constant sample.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || a.len() < 2 {
        return f64::NAN;
    }
    let (ra, rb) = (average_ranks(a), average_ranks(b));
    let (ma, _) = mean_std(&ra);
    let (mb, _) = mean_std(&rb);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma) * (x - ma)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb) * (y - mb)).sum();
    cov / (va * vb).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_std_uses_ddof_zero() {
        assert_eq!(mean_std(&[1.0, 3.0]), (2.0, 1.0));
        assert_eq!(mean_std(&[]), (0.0, 0.0));
    }

    #[test]
    fn spearman_of_monotone_ties_and_reversed_samples() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(spearman(&x, &[10.0, 20.0, 25.0, 100.0]), 1.0);
        assert_eq!(spearman(&x, &[4.0, 3.0, 2.0, 1.0]), -1.0);
        // Ties take the mean rank: ranks (1, 2, 3, 4) against (1, 2.5, 2.5, 4), covariance
        // 4.5, variances 5 and 4.5.
        let r = spearman(&x, &[1.0, 5.0, 5.0, 9.0]);
        assert!((r - 4.5 / (5.0f64 * 4.5).sqrt()).abs() < 1e-12, "{r}");
        assert!(spearman(&x, &[2.0; 4]).is_nan());
        assert!(spearman(&[1.0], &[1.0]).is_nan());
    }
}
