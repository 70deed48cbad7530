//! SKI gives the same bits on any number of threads: the interpolation's transpose product
//! sums a fixed number of row blocks, not one per thread.

use crate::ski_support;

use faer::Col;
use gp_kernels::SquaredExponential;
use gp_models::Ski;
use ski_support::{data, test_points, tight};

/// Runs `f` on a rayon pool of `threads` threads.
fn on_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn bits(c: &Col<f64>) -> Vec<u64> {
    c.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn ski_mean_does_not_depend_on_the_thread_count() {
    // 10 000 points: three row blocks of 4096 would be available, so a per-thread block count
    // would change the summation order of Wᵀ v between the pools.
    let (x, y) = data(10_000, 1, 5.0, 31);
    let xt = test_points(40, 1, 0.1, 4.9, 32);
    let mean = |threads| {
        on_pool(threads, || {
            let kernel = SquaredExponential::new(vec![0.5], 1.0).unwrap();
            let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &tight(vec![200])).unwrap();
            ski.predict_mean(xt.as_ref()).unwrap()
        })
    };
    let one = bits(&mean(1));
    for threads in [2, 3] {
        assert_eq!(one, bits(&mean(threads)), "{threads} threads");
    }
}
