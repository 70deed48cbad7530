//! Property tests: CG against dense solves on random SPD systems; Ritz values of the CG
//! tridiagonal lie inside the spectrum.

use crate::common;

use common::*;
use gp_linalg::DenseOperator;
use gp_solvers::{cg, CgOptions};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn cg_solves_random_spd_systems(n in 2usize..40, cond_exp in 0.0f64..4.0, seed in 0u64..1000, m in 1usize..4) {
        let ev = log_spectrum(n, 10f64.powf(cond_exp));
        let a = with_spectrum(&ev, seed);
        let b = gaussian(n, m, seed + 1);
        let opts = CgOptions { tolerance: 1e-12, max_iterations: 10 * n, reorthogonalize: true, ..Default::default() };
        let res = cg(&DenseOperator::new(a.clone()), b.as_ref(), None, &opts).unwrap();
        prop_assert!(res.all_converged());
        let exact = dense_solve(&a, &b);
        let cond = 10f64.powf(cond_exp);
        prop_assert!(max_abs_diff(res.solution.as_ref(), exact.as_ref()) <= 1e-9 * cond * exact.norm_max().max(1.0));
        let (lo, hi) = (ev[n - 1], ev[0]);
        for col in &res.columns {
            let eig = col.tridiagonal().unwrap().eigen().unwrap();
            for i in 0..eig.dim() {
                prop_assert!(eig.values[i] >= lo * (1.0 - 1e-8) && eig.values[i] <= hi * (1.0 + 1e-8));
            }
        }
    }
}
