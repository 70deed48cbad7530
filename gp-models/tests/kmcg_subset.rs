//! KMCG on a subset `X_M ⊂ X` (`M < N`, spec `kmcg.md` §1.5): the one-call model
//! (`Kmcg::fit_subset`) and the step driver (`KmcgRun::on_subset`) against the dense
//! formulas of Algorithm 2 with `R = k(X, X_M) S`, on small problems.

use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, Matern, MaternNu};
use gp_linalg::DenseOperator;
use gp_models::kmcg::{
    dense_test_rows, Kmcg, KmcgBasis, KmcgOptions, KmcgRun, KrylovMatrix, SubsetProducts,
};
use gp_models::ModelError;

use crate::common::{llt_inverse as spd_inverse, llt_log_det as log_det};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

struct Data {
    kernel: Matern,
    x: Mat<f64>,
    y: Col<f64>,
    xs: Mat<f64>,
    noise: f64,
}

fn data(n: usize) -> Data {
    let kernel = Matern::new(MaternNu::FiveHalves, vec![0.8, 1.2], 1.1).unwrap();
    let x = Mat::from_fn(n, 2, |i, j| {
        let t = i as f64 * 0.618_033_988_7 + j as f64 * 0.37;
        3.0 * (t - t.floor())
    });
    let y = Col::from_fn(n, |i| {
        x[(i, 0)].sin() + 0.4 * x[(i, 1)].cos() + 0.05 * ((i % 5) as f64 - 2.0)
    });
    let xs = Mat::from_fn(7, 2, |i, j| 0.2 + 2.6 * ((i * 5 + j * 3) % 7) as f64 / 7.0);
    Data {
        kernel,
        x,
        y,
        xs,
        noise: 0.05,
    }
}

fn rows(x: MatRef<'_, f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |r, c| x[(idx[r], c)])
}

/// Orthonormal basis of `𝒦_p(A, b)` by Gram–Schmidt, twice per vector.
fn krylov_basis(a: &Mat<f64>, b: &Col<f64>, p: usize) -> Mat<f64> {
    let m = a.nrows();
    let mut q = Mat::<f64>::zeros(m, p);
    let mut v = b.clone();
    for j in 0..p {
        for _ in 0..2 {
            for i in 0..j {
                let h = (q.col(i).transpose() * &v) * 1.0;
                v -= q.col(i) * h;
            }
        }
        let norm = v.norm_l2();
        v /= norm;
        q.col_mut(j).copy_from(&v);
        v = a * &v;
    }
    q
}

/// Algorithm 2's outputs from a basis `S` on the subset, by dense algebra:
/// `A = σ² SᵀK_M S + RᵀR` with `R = k(X, X_M) S`; mean `k(x*, X_M) S A⁻¹ Rᵀy`; latent
/// variance `k** − cᵀ(SᵀK_M S)⁻¹c + σ² cᵀA⁻¹c` with `c = Sᵀk(X_M, x*)`; Eq. 16b.
fn dense_algorithm_2(d: &Data, idx: &[usize], s: &Mat<f64>) -> (Vec<f64>, Vec<f64>, f64) {
    let xm = rows(d.x.as_ref(), idx);
    let kmm = d.kernel.matrix(xm.as_ref(), xm.as_ref()).unwrap();
    let kxm = d.kernel.matrix(d.x.as_ref(), xm.as_ref()).unwrap();
    let kms = d.kernel.matrix(xm.as_ref(), d.xs.as_ref()).unwrap();
    let kss = d.kernel.diag(d.xs.as_ref()).unwrap();
    let sigma = s.transpose() * &kmm * s;
    let r = &kxm * s;
    let a = &sigma * d.noise + r.transpose() * &r;
    let (sigma_inv, a_inv) = (spd_inverse(&sigma), spd_inverse(&a));
    let ry = r.transpose() * &d.y;
    let c = s.transpose() * &kms;
    let mean = c.transpose() * (&a_inv * &ry);
    let t = d.xs.nrows();
    let red = c.transpose() * &sigma_inv * &c;
    let extra = c.transpose() * &a_inv * &c;
    let var = (0..t)
        .map(|i| kss[i] - red[(i, i)] + d.noise * extra[(i, i)])
        .collect();
    let n = d.x.nrows() as f64;
    let p = s.ncols() as f64;
    let w2 = (ry.transpose() * (&a_inv * &ry)) * 1.0;
    let yty = d.y.squared_norm_l2();
    let nlz = 0.5
        * ((yty - w2) / d.noise + log_det(&a) - log_det(&sigma)
            + (n - p) * d.noise.ln()
            + n * LN_2PI);
    ((0..t).map(|i| mean[i]).collect(), var, nlz)
}

fn assert_rel(a: &[f64], b: &[f64], rel: f64, what: &str) {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    for (i, (u, v)) in a.iter().zip(b).enumerate() {
        assert!(
            (u - v).abs() <= rel * scale,
            "{what}[{i}]: {u} vs {v} (rel {rel})"
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: lengths");
}

fn assert_close(a: f64, b: f64, rel: f64, what: &str) {
    assert!(
        (a - b).abs() <= rel * b.abs().max(1.0),
        "{what}: {a} vs {b} (rel {rel})"
    );
}

fn fit_subset(d: &Data, idx: &[usize], options: &KmcgOptions) -> Kmcg<Matern> {
    Kmcg::fit_subset(
        d.kernel.clone(),
        d.x.as_ref(),
        d.y.as_ref(),
        d.noise,
        idx,
        options,
    )
    .unwrap()
}

fn predictions(model: &Kmcg<Matern>, xs: &Mat<f64>) -> (Vec<f64>, Vec<f64>) {
    let (m, v) = model.predict_mean_variance(xs.as_ref()).unwrap();
    (
        (0..m.nrows()).map(|i| m[i]).collect(),
        (0..v.nrows()).map(|i| v[i]).collect(),
    )
}

fn every_basis() -> [(KmcgBasis, KrylovMatrix); 4] {
    [
        (KmcgBasis::Fom, KrylovMatrix::Kernel),
        (KmcgBasis::Fom, KrylovMatrix::KernelPlusNoise),
        (KmcgBasis::Lanczos, KrylovMatrix::Kernel),
        (KmcgBasis::Lanczos, KrylovMatrix::KernelPlusNoise),
    ]
}

/// Spec T2 through the one-call model: `P = M` on the subset is SoR's mean with the DTC
/// variance and evidence, for both solvers and both Krylov matrices.
#[test]
fn fit_subset_with_a_full_basis_is_sor_with_the_dtc_variance_and_evidence() {
    let d = data(40);
    let idx: Vec<usize> = (0..10).map(|i| (i * 7 + 3) % 40).collect();
    // With `P = M` any invertible basis gives the same estimate: the identity.
    let (mean, var, nlz) = dense_algorithm_2(&d, &idx, &Mat::identity(idx.len(), idx.len()));
    for (basis, krylov_matrix) in every_basis() {
        let options = KmcgOptions {
            steps: idx.len(),
            basis,
            krylov_matrix,
        };
        let what = format!("{basis:?} on {krylov_matrix:?}");
        let model = fit_subset(&d, &idx, &options);
        assert_eq!(model.steps(), idx.len(), "{what}: steps");
        assert_eq!(model.subset(), Some(idx.as_slice()));
        let (m, v) = predictions(&model, &d.xs);
        assert_rel(&m, &mean, 1e-8, &format!("{what}: SoR mean"));
        assert_rel(&v, &var, 1e-8, &format!("{what}: DTC variance"));
        assert_close(
            model.neg_log_evidence(),
            nlz,
            1e-8,
            &format!("{what}: DTC nlZ"),
        );
    }
}

/// `P < M`: the estimate on the Krylov space `𝒦_P(K_M, y_M)`, computed densely from an
/// orthonormal basis of that space (the estimate depends on the space only, spec T4).
#[test]
fn fit_subset_with_few_directions_is_the_dense_krylov_estimate_on_the_subset() {
    let d = data(50);
    let idx: Vec<usize> = (0..16).map(|i| (i * 3 + 1) % 50).collect();
    let xm = rows(d.x.as_ref(), &idx);
    let kmm = d.kernel.matrix(xm.as_ref(), xm.as_ref()).unwrap();
    let ym = Col::from_fn(idx.len(), |i| d.y[idx[i]]);
    for p in [1, 3, 5] {
        let s = krylov_basis(&kmm, &ym, p);
        let (mean, var, nlz) = dense_algorithm_2(&d, &idx, &s);
        for (basis, krylov_matrix) in every_basis() {
            let options = KmcgOptions {
                steps: p,
                basis,
                krylov_matrix,
            };
            let what = format!("P = {p}, {basis:?} on {krylov_matrix:?}");
            let model = fit_subset(&d, &idx, &options);
            let (m, v) = predictions(&model, &d.xs);
            assert_rel(&m, &mean, 1e-8, &format!("{what}: mean"));
            assert_rel(&v, &var, 1e-8, &format!("{what}: variance"));
            assert_close(model.neg_log_evidence(), nlz, 1e-8, &format!("{what}: nlZ"));
        }
    }
}

/// The subset of every row, in a shuffled order, is `fit` (`M = N`): the Krylov space is
/// permuted with the rows, the estimate is not.
#[test]
fn fit_subset_of_every_row_in_any_order_is_fit() {
    let d = data(30);
    let idx: Vec<usize> = (0..30).map(|i| (i * 11 + 4) % 30).collect();
    let options = KmcgOptions {
        steps: 8,
        ..KmcgOptions::default()
    };
    let full = Kmcg::fit(
        d.kernel.clone(),
        d.x.as_ref(),
        d.y.as_ref(),
        d.noise,
        &options,
    )
    .unwrap();
    let sub = fit_subset(&d, &idx, &options);
    let (m_full, v_full) = predictions(&full, &d.xs);
    let (m_sub, v_sub) = predictions(&sub, &d.xs);
    assert_rel(&m_sub, &m_full, 1e-9, "mean");
    assert_rel(&v_sub, &v_full, 1e-9, "variance");
    assert_close(sub.neg_log_evidence(), full.neg_log_evidence(), 1e-9, "nlZ");
    assert_eq!(full.subset(), None);
}

/// New hyperparameters refit on the same subset.
#[test]
fn with_log_params_keeps_the_subset() {
    let d = data(40);
    let idx: Vec<usize> = vec![0, 5, 9, 13, 22, 31, 38];
    let options = KmcgOptions {
        steps: 4,
        ..KmcgOptions::default()
    };
    let model = fit_subset(&d, &idx, &options);
    let mut params = model.log_params();
    params[0] += 0.3;
    *params.last_mut().unwrap() -= 0.5;
    let moved = model.with_log_params(&params).unwrap();
    assert_eq!(moved.subset(), Some(idx.as_slice()));
    let direct = Kmcg::fit_subset(
        moved.kernel().clone(),
        d.x.as_ref(),
        d.y.as_ref(),
        moved.noise_variance(),
        &idx,
        &options,
    )
    .unwrap();
    let (a, b) = (predictions(&moved, &d.xs), predictions(&direct, &d.xs));
    assert_rel(&a.0, &b.0, 1e-14, "mean");
    assert_rel(&a.1, &b.1, 1e-14, "variance");
    assert!((moved.noise_variance() - d.noise * (-0.5f64).exp()).abs() < 1e-15);
}

/// The step driver on a subset gives, after each step, the model's predictions at the test
/// points it was given.
#[test]
fn the_subset_step_driver_estimates_what_the_model_predicts() {
    let d = data(45);
    let idx: Vec<usize> = (0..12).map(|i| i * 3 + 2).collect();
    let xm = rows(d.x.as_ref(), &idx);
    let kmm = d.kernel.matrix(xm.as_ref(), xm.as_ref()).unwrap();
    let kxm = d.kernel.matrix(d.x.as_ref(), xm.as_ref()).unwrap();
    let kms = d.kernel.matrix(xm.as_ref(), d.xs.as_ref()).unwrap();
    let kss: Vec<f64> = {
        let diag = d.kernel.diag(d.xs.as_ref()).unwrap();
        (0..diag.nrows()).map(|i| diag[i]).collect()
    };
    let y: Vec<f64> = (0..d.y.nrows()).map(|i| d.y[i]).collect();
    let ym: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    let op = DenseOperator::new(kmm);
    let mut run = KmcgRun::on_subset(
        &op,
        0.0,
        &ym,
        SubsetProducts::new(kxm, &y).unwrap(),
        d.noise,
        &kss,
        dense_test_rows(kms.as_ref()),
        KmcgBasis::Fom,
        6,
    )
    .unwrap();
    for p in 1..=6 {
        let step = run.step().unwrap().expect("a step");
        assert_eq!(step.steps, p);
        let model = fit_subset(
            &d,
            &idx,
            &KmcgOptions {
                steps: p,
                ..KmcgOptions::default()
            },
        );
        let (m, v) = predictions(&model, &d.xs);
        assert_rel(run.state().mean(), &m, 1e-10, &format!("P = {p}: mean"));
        assert_rel(
            &run.state().latent_variance(),
            &v,
            1e-10,
            &format!("P = {p}: variance"),
        );
        assert_close(
            run.state().neg_log_evidence(),
            model.neg_log_evidence(),
            1e-10,
            &format!("P = {p}: nlZ"),
        );
    }
    assert!(run.step().unwrap().is_none(), "the step cap stops the run");
}

#[test]
fn bad_subsets_are_typed_errors() {
    let d = data(20);
    let fit = |idx: &[usize]| {
        Kmcg::fit_subset(
            d.kernel.clone(),
            d.x.as_ref(),
            d.y.as_ref(),
            d.noise,
            idx,
            &KmcgOptions::default(),
        )
    };
    for (idx, says) in [
        (vec![], "empty"),
        (vec![1, 20], "out of range"),
        (vec![3, 4, 3], "twice"),
    ] {
        match fit(&idx) {
            Err(ModelError::InvalidOption { name, reason }) => {
                assert_eq!(name, "subset");
                assert!(reason.contains(says), "{idx:?}: {reason}");
            }
            other => panic!("{idx:?}: expected an invalid subset, got {other:?}"),
        }
    }
    // The driver refuses a subset whose size is not the operator's.
    let xm = rows(d.x.as_ref(), &[0, 1, 2]);
    let op = DenseOperator::new(d.kernel.matrix(xm.as_ref(), xm.as_ref()).unwrap());
    let kx4 = d
        .kernel
        .matrix(d.x.as_ref(), rows(d.x.as_ref(), &[0, 1, 2, 3]).as_ref());
    let y: Vec<f64> = (0..20).map(|i| d.y[i]).collect();
    let run = KmcgRun::on_subset(
        &op,
        0.0,
        &y[..3],
        SubsetProducts::new(kx4.unwrap(), &y).unwrap(),
        d.noise,
        &[],
        Box::new(|_: &[f64]| Vec::new()),
        KmcgBasis::Fom,
        3,
    );
    assert!(matches!(run, Err(ModelError::LengthMismatch { .. })));
    // Targets of the Krylov run of the wrong length.
    let run = KmcgRun::on_subset(
        &op,
        0.0,
        &y[..4],
        SubsetProducts::new(d.kernel.matrix(d.x.as_ref(), xm.as_ref()).unwrap(), &y).unwrap(),
        d.noise,
        &[],
        Box::new(|_: &[f64]| Vec::new()),
        KmcgBasis::Fom,
        3,
    );
    assert!(matches!(run, Err(ModelError::LengthMismatch { .. })));
}
