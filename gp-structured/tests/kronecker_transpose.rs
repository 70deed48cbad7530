//! The transpose of a Kronecker product (`Kronecker::transposable`, `TransposeOperator`)
//! against the transpose of the formed dense product.
//!
//! Tolerances: as in `kronecker.rs`, mode products are sums of products, exact up to
//! `≈ d · n_max · ε` relative; the Toeplitz and circulant factors add the round-off of one
//! real FFT pair. We use `1e-12` relative to `Π_l ‖A_l‖_max · n_l · ‖x‖_max`.

use std::sync::Arc;

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::{DenseOperator, LinearOperator};
use gp_structured::kronecker::TransposableKronecker;
use gp_structured::{Circulant, Kronecker, StructuredError, SymmetricToeplitz, TransposeOperator};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_mat(rng: &mut ChaCha8Rng, r: usize, c: usize) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0))
}

/// The standard Kronecker product of all factors, first outermost.
fn dense_kron_all(factors: &[Mat<f64>]) -> Mat<f64> {
    let mut out = Mat::from_fn(1, 1, |_, _| 1.0);
    for b in factors {
        let (rb, cb) = (b.nrows(), b.ncols());
        out = Mat::from_fn(out.nrows() * rb, out.ncols() * cb, |i, j| {
            out[(i / rb, j / cb)] * b[(i % rb, j % cb)]
        });
    }
    out
}

fn tol(factors: &[Mat<f64>], x: MatRef<'_, f64>) -> f64 {
    let scale: f64 = factors
        .iter()
        .map(|f| f.norm_max() * f.nrows().max(f.ncols()) as f64)
        .product();
    1e-12 * scale * x.norm_max().max(1e-300)
}

/// Which kind of factor to build.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Dense(usize, usize),
    Toeplitz(usize),
    Circulant(usize),
}

/// The factors as operators (transposable) and as dense matrices.
fn build(rng: &mut ChaCha8Rng, kinds: &[Kind]) -> (Vec<Arc<dyn TransposeOperator>>, Vec<Mat<f64>>) {
    let mut ops: Vec<Arc<dyn TransposeOperator>> = Vec::new();
    let mut mats = Vec::new();
    for &kind in kinds {
        match kind {
            Kind::Dense(r, c) => {
                let a = random_mat(rng, r, c);
                mats.push(a.clone());
                ops.push(Arc::new(DenseOperator::new(a)));
            }
            Kind::Toeplitz(m) => {
                let c: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
                let t = SymmetricToeplitz::new(&c).unwrap();
                mats.push(t.to_dense());
                ops.push(Arc::new(t));
            }
            Kind::Circulant(m) => {
                let c: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
                let t = Circulant::new(&c).unwrap();
                mats.push(t.to_dense());
                ops.push(Arc::new(t));
            }
        }
    }
    (ops, mats)
}

/// Factor lists with d = 1, 2, 3: rectangular and square dense, Toeplitz and (non-symmetric)
/// circulant factors.
fn cases() -> Vec<Vec<Kind>> {
    use Kind::*;
    vec![
        vec![Dense(3, 5)],
        vec![Dense(4, 4)],
        vec![Circulant(5)],
        vec![Dense(2, 3), Dense(4, 1)],
        vec![Dense(3, 3), Dense(2, 2)],
        vec![Dense(1, 4), Circulant(3)],
        vec![Toeplitz(4), Dense(3, 2)],
        vec![Dense(2, 3), Dense(3, 1), Dense(2, 4)],
        vec![Dense(2, 2), Dense(3, 3), Dense(4, 4)],
        vec![Circulant(4), Dense(2, 5), Toeplitz(3)],
        vec![Dense(1, 1), Circulant(6), Dense(3, 2)],
    ]
}

#[test]
fn transpose_matches_dense_transpose() {
    let mut rng = ChaCha8Rng::seed_from_u64(20261123);
    for kinds in cases() {
        let (ops, mats) = build(&mut rng, &kinds);
        let kron = Kronecker::transposable(ops).unwrap();
        let dense = dense_kron_all(&mats);
        let dense_t = dense.transpose().to_owned();
        let (m, n) = (dense.nrows(), dense.ncols());
        assert_eq!(kron.shape(), (m, n), "{kinds:?}");
        assert_eq!(kron.num_factors(), kinds.len());

        // Forward product, for reference.
        let x = random_mat(&mut rng, n, 2);
        let t = tol(&mats, x.as_ref());
        assert!((kron.apply_block(x.as_ref()).unwrap() - &dense * &x).norm_max() <= t);

        // apply_transpose (one column).
        let z = random_mat(&mut rng, m, 3);
        let t = tol(&mats, z.as_ref());
        let y = kron.apply_transpose(z.col(0)).unwrap();
        let y_ref = &dense_t * z.col(0);
        assert_eq!(y.nrows(), n);
        assert!((&y - &y_ref).norm_max() <= t, "{kinds:?}");

        // apply_transpose_into and matvec_transpose.
        let mut y2 = Col::<f64>::zeros(n);
        kron.apply_transpose_into(z.col(1), y2.as_mut()).unwrap();
        assert!((&y2 - &dense_t * z.col(1)).norm_max() <= t, "{kinds:?}");
        let mut y3 = Col::<f64>::zeros(n);
        kron.matvec_transpose(z.col(2), y3.as_mut());
        assert!((&y3 - &dense_t * z.col(2)).norm_max() <= t, "{kinds:?}");

        // matmat_transpose and apply_transpose_block on a block of columns.
        let yb = kron.apply_transpose_block(z.as_ref()).unwrap();
        assert!((&yb - &dense_t * &z).norm_max() <= t, "{kinds:?}");
        let mut yb2 = Mat::<f64>::zeros(n, 3);
        kron.matmat_transpose(z.as_ref(), yb2.as_mut());
        assert!((&yb2 - &dense_t * &z).norm_max() <= t, "{kinds:?}");

        // The `Aᵀ` view: shape, products, formed matrix.
        let kt = kron.transposed();
        assert_eq!(kt.shape(), (n, m));
        assert!((kt.apply_block(z.as_ref()).unwrap() - &dense_t * &z).norm_max() <= t);
        let scale = dense.norm_max().max(1e-300);
        assert!(
            (kt.to_dense() - &dense_t).norm_max() <= 1e-12 * scale,
            "{kinds:?}"
        );

        // Transposing twice gives the product back (the view of the view, and the transpose
        // of the view).
        let ktt = kt.transposed();
        assert_eq!(ktt.shape(), (m, n));
        let t = tol(&mats, x.as_ref());
        let fwd = &dense * &x;
        assert!((ktt.apply_block(x.as_ref()).unwrap() - &fwd).norm_max() <= t);
        assert!((kt.apply_transpose_block(x.as_ref()).unwrap() - &fwd).norm_max() <= t);
        assert!((ktt.to_dense() - kron.to_dense()).norm_max() <= 1e-12 * scale);
    }
}

#[test]
fn transposable_forward_matches_plain_kronecker() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for kinds in cases() {
        let (ops, _) = build(&mut rng, &kinds);
        let plain_ops: Vec<Arc<dyn LinearOperator>> = ops
            .iter()
            .map(|a| a.clone() as Arc<dyn LinearOperator>)
            .collect();
        let plain = Kronecker::new(plain_ops).unwrap();
        let kron = Kronecker::transposable(ops).unwrap();
        let x = random_mat(&mut rng, kron.ncols(), 2);
        let y = kron.apply_block(x.as_ref()).unwrap();
        // Same factors, same mode products: the same numbers.
        assert_eq!(y, plain.apply_block(x.as_ref()).unwrap());
        assert_eq!(kron.diagonal(), plain.diagonal());
        let converted: Kronecker = kron.clone().into();
        assert_eq!(converted.shape(), plain.shape());
        assert_eq!(converted.apply_block(x.as_ref()).unwrap(), y);
    }
}

#[test]
fn mixed_factor_literals_infer() {
    // A mixed `vec!` literal coerces to the constructors' trait objects, for both kinds.
    let t = SymmetricToeplitz::new(&[2.0, 0.5]).unwrap();
    let d = DenseOperator::new(Mat::from_fn(2, 3, |i, j| (i + j) as f64));
    let plain = Kronecker::new(vec![Arc::new(t.clone()), Arc::new(d.clone())]).unwrap();
    let kron: TransposableKronecker =
        Kronecker::transposable(vec![Arc::new(t), Arc::new(d)]).unwrap();
    assert_eq!(plain.to_dense(), kron.to_dense());
    assert_eq!(
        kron.transposed().to_dense(),
        kron.to_dense().transpose().to_owned()
    );
    assert_eq!(kron.factors().len(), 2);
}

/// An operator with a shape and no entries (products write zeros), to build sizes that
/// cannot be allocated.
struct ShapeOnly(usize, usize);

impl LinearOperator for ShapeOnly {
    fn nrows(&self) -> usize {
        self.0
    }
    fn ncols(&self) -> usize {
        self.1
    }
    fn matvec(&self, _x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        out.fill(0.0);
    }
    fn matmat(&self, _x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        out.rb_mut().fill(0.0);
    }
}

impl TransposeOperator for ShapeOnly {
    fn matvec_transpose(&self, _x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        out.fill(0.0);
    }
}

#[test]
fn transposable_invalid_inputs_are_errors() {
    assert!(matches!(
        Kronecker::transposable(vec![]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    assert!(matches!(
        Kronecker::transposable(vec![Arc::new(DenseOperator::new(Mat::zeros(2, 0)))]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    // (2³³ × 1) ⊗ (1 × 2³³): the forward intermediates have at most 2³³ entries, but the
    // transpose passes through (2³³ × 2³³)-sized ones, which overflow on 64-bit targets.
    let big = 1usize << 33.min(usize::BITS - 1);
    let plain = Kronecker::new(vec![
        Arc::new(ShapeOnly(big, 1)),
        Arc::new(ShapeOnly(1, big)),
    ]);
    assert!(plain.is_ok());
    if usize::BITS == 64 {
        assert!(matches!(
            Kronecker::transposable(vec![
                Arc::new(ShapeOnly(big, 1)),
                Arc::new(ShapeOnly(1, big))
            ]),
            Err(StructuredError::InvalidArgument { .. })
        ));
    }
    // Wrong shapes through the checked entry points are errors, not panics.
    let kron = Kronecker::transposable(vec![
        Arc::new(DenseOperator::new(Mat::zeros(2, 3))),
        Arc::new(DenseOperator::new(Mat::zeros(1, 2))),
    ])
    .unwrap();
    assert!(kron.apply_transpose(Col::<f64>::zeros(6).as_ref()).is_err());
    assert!(kron
        .apply_transpose_block(Mat::<f64>::zeros(3, 2).as_ref())
        .is_err());
    let mut out = Col::<f64>::zeros(5);
    assert!(kron
        .apply_transpose_into(Col::<f64>::zeros(2).as_ref(), out.as_mut())
        .is_err());
    assert_eq!(
        kron.apply_transpose(Col::<f64>::zeros(2).as_ref())
            .unwrap()
            .nrows(),
        6
    );
}
