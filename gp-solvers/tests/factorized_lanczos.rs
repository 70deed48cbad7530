//! Factorized Lanczos (FLA, EFLA; GSGP spec §3.6–§3.8) against plain Lanczos with full
//! re-orthogonalization on the dense SKI operator `K̃ = W K_G Wᵀ + σ² I`.

use crate::factorized_support;

use factorized_support::*;
use faer::Mat;
use gp_solvers::factorized::{efla, fla, FactorizedLanczos, StartVector, WeightSpaceSystem};
use gp_solvers::{lanczos, LanczosOptions, LanczosStatus, SymTridiagonal};

type Solver = fn(
    &dyn WeightSpaceSystem,
    &StartVector,
    &LanczosOptions,
) -> gp_solvers::Result<FactorizedLanczos>;

const SOLVERS: [(&str, Solver); 2] = [("fla", fla), ("efla", efla)];

fn opts(k: usize) -> LanczosOptions {
    LanczosOptions {
        max_iterations: k,
        ..Default::default()
    }
}

/// Largest entry difference relative to the largest entry of `b`.
fn t_diff(a: &SymTridiagonal, b: &SymTridiagonal) -> f64 {
    let (a, b) = (a.to_dense(), b.to_dense());
    (&a - &b).norm_max() / b.norm_max()
}

#[test]
fn tridiagonal_and_basis_equal_plain_lanczos() {
    for (k, p) in [
        Problem::cubic_1d(300, 60, 1.0, 0.1, 8),
        Problem::cubic_1d(250, 50, 6.0, 1e-3, 7),
        Problem::cubic_2d(250, 7, 8, 2.0, 0.02, 2),
        Problem::random_sparse(200, 50, 1.0, 0.1, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let steps = 30;
        let plain = lanczos(&p.ktilde_op(), p.y.as_ref(), &opts(steps)).unwrap();
        assert_eq!(plain.steps(), steps);
        for (name, solver) in SOLVERS {
            let res = solver(&p.system(), &p.start(&p.y), &opts(steps)).unwrap();
            assert_eq!(res.status, LanczosStatus::MaxIterations, "{name}");
            assert_eq!(res.steps(), steps);
            assert!((res.start_norm - p.y.norm_l2()).abs() < 1e-12 * p.y.norm_l2());
            let d = t_diff(&res.tridiagonal, &plain.tridiagonal);
            assert!(d < 1e-10, "problem {k}, {name}: T differs by {d:e}");
            // q₁ = z₀/‖z₀‖.
            assert_eq!(res.q_hat.col(0).norm_l2(), 0.0);
            assert!((res.q_coeffs[0] * p.y.norm_l2() - 1.0).abs() < 1e-14);
            let q = res.expand_basis(&p.w_op(), p.y.as_ref()).unwrap();
            // Once an off-diagonal β_j is tiny (an almost invariant subspace, here the
            // σ² cluster of an ill-conditioned K̃), q_{j+1} = w/β_j is fixed by rounding, in
            // any implementation; the columns before it are well determined.
            let t_max = plain.tridiagonal.to_dense().norm_max();
            let determined = plain
                .tridiagonal
                .off_diagonal()
                .iter()
                .position(|&b| b < 1e-6 * t_max)
                .map_or(steps, |j| j + 1);
            assert!(determined >= 15, "problem {k}: {determined}");
            let dq = (q.subcols(0, determined) - plain.q.subcols(0, determined)).norm_max();
            assert!(dq < 1e-8, "problem {k}, {name}: Q differs by {dq:e}");
            let qtq = q.transpose() * &q;
            let orth = (&qtq - Mat::<f64>::identity(steps, steps)).norm_max();
            assert!(orth < 1e-10, "{name}: ‖QᵀQ − I‖ = {orth:e}");
            let t = q.transpose() * &p.ktilde * &q;
            assert!((&t - res.tridiagonal.to_dense()).norm_max() < 1e-10 * t.norm_max());
            // WᵀQ without W.
            let wtq = p.w.transpose() * &q;
            assert!(mat_rel_diff(&res.wt_basis, &wtq) < 1e-10, "{name}: WᵀQ");
            // Columns in factorized form.
            let c5 = res
                .column(5)
                .unwrap()
                .expand(&p.w_op(), p.y.as_ref())
                .unwrap();
            assert!((&c5 - q.col(5)).norm_max() < 1e-14);
            assert!(res.column(steps).is_none());
        }
    }
}

#[test]
fn stops_when_the_krylov_space_is_exhausted() {
    // K̃ leaves span{range(W), y} (dimension m + 1 = 11) invariant.
    let p = Problem::cubic_1d(100, 10, 1.0, 0.1, 40);
    let plain = lanczos(&p.ktilde_op(), p.y.as_ref(), &opts(30)).unwrap();
    assert_eq!(plain.status, LanczosStatus::InvariantSubspace);
    // In ℝⁿ, rounding may add a 12th vector (a noise direction from the σ² eigenspace)
    // before the breakdown test fires; the factorized vectors cannot leave the space.
    assert!((11..=12).contains(&plain.steps()), "{}", plain.steps());
    let plain_t = plain.tridiagonal.leading(11);
    for (name, solver) in SOLVERS {
        let res = solver(&p.system(), &p.start(&p.y), &opts(30)).unwrap();
        assert_eq!(res.status, LanczosStatus::InvariantSubspace, "{name}");
        assert_eq!(res.steps(), 11);
        let d = t_diff(&res.tridiagonal, &plain_t);
        assert!(d < 1e-10, "{name}: {d:e}");
        // The Ritz values are then the eigenvalues of K̃ on that space.
        let ritz = res.tridiagonal.eigen().unwrap().values;
        let exact = plain_t.eigen().unwrap().values;
        for i in 0..11 {
            assert!((ritz[i] - exact[i]).abs() < 1e-10 * exact[10]);
        }
        // Asking for exactly m + 1 vectors is not an early stop.
        let res = solver(&p.system(), &p.start(&p.y), &opts(11)).unwrap();
        assert_eq!(res.status, LanczosStatus::MaxIterations);
        assert_eq!(res.steps(), 11);
    }
}

#[test]
fn efla_uses_one_kg_and_one_s_product_per_step() {
    let p = Problem::cubic_1d(200, 40, 2.0, 0.1, 41);
    let k = 20;
    let sys = p.system();
    let res = efla(&sys, &p.start(&p.y), &opts(k)).unwrap();
    assert_eq!(res.steps(), k);
    // h = K_G g̃ once; one B = (K_G, S) for each of the k − 1 new vectors.
    assert_eq!(sys.counts(), (k, k - 1));
    let sys = p.system();
    fla(&sys, &p.start(&p.y), &opts(k)).unwrap();
    // FLA: K̃q (1 K_G + 1 S) and α (1 S) for each of the k vectors, the second
    // re-orthogonalization pass and β (2 S) per new vector, and WᵀQ = S Q̂ at the end.
    assert_eq!(sys.counts(), (k + 1, 2 * k + 2 * (k - 1) + k));
}

#[test]
fn zero_steps_give_an_empty_basis() {
    let p = Problem::cubic_1d(50, 10, 1.0, 0.1, 42);
    for (_, solver) in SOLVERS {
        let res = solver(&p.system(), &p.start(&p.y), &opts(0)).unwrap();
        assert_eq!(res.steps(), 0);
        assert_eq!(res.status, LanczosStatus::MaxIterations);
        assert_eq!(res.q_hat.shape(), (10, 0));
        assert_eq!(res.wt_basis.shape(), (10, 0));
        assert!(res.tridiagonal.is_empty());
    }
}
