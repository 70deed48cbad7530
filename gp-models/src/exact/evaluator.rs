//! The exact log marginal likelihood and its gradient at hyperparameters that change from
//! call to call (the Cholesky estimator of training), with the `n × n` buffers kept
//! between calls.

use faer::{ColRef, MatRef};
use gp_kernels::dense::points_row_major;
use gp_kernels::Kernel;
use gp_linalg::JitterLadder;

use crate::error::Result;
use crate::exact::lml::{ExactTerms, Workspace};
use crate::validate::check_training_data;

/// Evaluates the exact GP at one kernel and noise per call, reusing the Gram matrix, the
/// factor, the inverse and faer's scratch of the previous call. Each value is bit for bit
/// what [`ExactGp::fit`](crate::ExactGp::fit) followed by
/// [`lml_and_grad`](crate::ExactGp::lml_and_grad) gives (the same functions on the same
/// inputs; only where the buffers come from differs). The price is memory: it holds three
/// `n × n` matrices between calls, where a fit and its gradient held at most two at a time
/// (2.2 GB instead of 1.5 GB at `n = 9600`).
pub(crate) struct ExactEvaluator {
    workspace: Workspace,
}

impl ExactEvaluator {
    /// No buffers yet (the first call allocates them).
    pub fn new() -> Self {
        Self {
            workspace: Workspace::new(),
        }
    }

    /// The exact terms at `kernel` and `noise_variance` for the data `x`, `y`.
    ///
    /// Errors: those of [`ExactGp::fit`](crate::ExactGp::fit) (bad data or noise, a matrix
    /// that stays indefinite after the default jitter ladder), and
    /// [`ModelError::DenseTooLarge`](crate::ModelError::DenseTooLarge) when the three
    /// `n × n` buffers (Gram, factor, inverse) would not fit in memory.
    pub fn evaluate<K: Kernel>(
        &mut self,
        kernel: &K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
    ) -> Result<ExactTerms> {
        check_training_data(kernel, x, y, noise_variance)?;
        let xs = points_row_major(kernel, x, "the training points X")?;
        self.workspace.evaluate(
            kernel,
            (&xs, x.ncols()),
            y,
            noise_variance,
            &JitterLadder::default(),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ExactGp;
    use faer::{Col, Mat};
    use gp_kernels::{Matern, MaternNu, SquaredExponential};

    /// The terms through a freshly fitted model, as the Cholesky estimator computed them
    /// before it kept its buffers.
    fn through_the_model<K: Kernel + Clone>(
        kernel: &K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise: f64,
    ) -> ExactTerms {
        let gp = ExactGp::fit(kernel.clone(), x, y, noise).unwrap();
        let (lml, gradient) = gp.lml_and_grad();
        ExactTerms {
            lml,
            data_fit: y.transpose() * gp.alpha(),
            log_det: gp.cholesky().log_det(),
            gradient,
        }
    }

    fn bits(t: &ExactTerms) -> Vec<u64> {
        [t.lml, t.data_fit, t.log_det]
            .iter()
            .chain(&t.gradient)
            .map(|v| v.to_bits())
            .collect()
    }

    #[test]
    fn reused_buffers_give_the_bits_of_a_fresh_fit() {
        let data = |n: usize| {
            let x = Mat::from_fn(n, 2, |i, k| ((i * 37 + k * 11) % 53) as f64 / 9.0);
            let y = Col::from_fn(n, |i| (i as f64 / 5.0).sin() + 0.1 * (i % 3) as f64);
            (x, y)
        };
        let (x, y) = data(90);
        let (x_small, y_small) = data(40);
        // Three points repeated 30 times, a long lengthscale and a tiny noise: the third
        // matrix is numerically indefinite and needs jitter.
        let x_dup = Mat::from_fn(90, 2, |i, k| x[(i % 3, k)]);
        let mut exact = ExactEvaluator::new();
        let se = |l: f64, s: f64| SquaredExponential::new(vec![l, 2.0 * l], s).unwrap();
        let cases: Vec<(Mat<f64>, Col<f64>, SquaredExponential, f64)> = vec![
            (x.clone(), y.clone(), se(0.7, 1.3), 0.05),
            (x.clone(), y.clone(), se(1.9, 0.4), 0.3),
            (x_dup, y.clone(), se(30.0, 1.0), 1e-300),
            // A smaller n: the kept buffers are the wrong size and are replaced.
            (x_small.clone(), y_small.clone(), se(0.5, 2.0), 0.01),
            (x.clone(), y.clone(), se(0.7, 1.3), 0.05),
        ];
        let (xj, yj, kj, nj) = &cases[2];
        let needs = ExactGp::fit(kj.clone(), xj.as_ref(), yj.as_ref(), *nj).unwrap();
        assert!(
            needs.jitter() > 0.0,
            "case 2 should exercise the jitter ladder"
        );
        for (i, (xi, yi, kernel, noise)) in cases.iter().enumerate() {
            let kept = exact
                .evaluate(kernel, xi.as_ref(), yi.as_ref(), *noise)
                .unwrap();
            let fresh = through_the_model(kernel, xi.as_ref(), yi.as_ref(), *noise);
            assert_eq!(bits(&kept), bits(&fresh), "case {i}");
        }
        // Another kernel type through the same buffers.
        let matern = Matern::new(MaternNu::FiveHalves, vec![0.8, 1.1], 1.2).unwrap();
        let kept = exact
            .evaluate(&matern, x.as_ref(), y.as_ref(), 0.02)
            .unwrap();
        let fresh = through_the_model(&matern, x.as_ref(), y.as_ref(), 0.02);
        assert_eq!(bits(&kept), bits(&fresh), "Matérn");
    }

    #[test]
    fn bad_input_is_refused_and_the_buffers_stay_usable() {
        let x = Mat::from_fn(30, 1, |i, _| i as f64 / 7.0);
        let y = Col::from_fn(30, |i| (i as f64).cos());
        let kernel = SquaredExponential::new(vec![1.0], 1.0).unwrap();
        let mut exact = ExactEvaluator::new();
        assert!(exact
            .evaluate(&kernel, x.as_ref(), y.as_ref(), -1.0)
            .is_err());
        let short = Col::from_fn(29, |i| i as f64);
        assert!(exact
            .evaluate(&kernel, x.as_ref(), short.as_ref(), 0.1)
            .is_err());
        let kept = exact
            .evaluate(&kernel, x.as_ref(), y.as_ref(), 0.1)
            .unwrap();
        let fresh = through_the_model(&kernel, x.as_ref(), y.as_ref(), 0.1);
        assert_eq!(bits(&kept), bits(&fresh));
    }
}
