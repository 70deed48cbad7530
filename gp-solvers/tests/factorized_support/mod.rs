//! Small SKI problems built from dense matrices, a dense `WeightSpaceSystem` that counts its
//! products, and the plain (n-space) references for the factorized-solver tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use faer::{Col, ColMut, ColRef, Mat};
use gp_linalg::DenseOperator;
use gp_solvers::factorized::{StartVector, WeightSpaceSystem};
use gp_solvers::{CgOptions, CgSolver};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// The Keys cubic convolution kernel with `a = −0.5` (GSGP spec §1.2).
pub fn keys(t: f64) -> f64 {
    let t = t.abs();
    if t <= 1.0 {
        1.5 * t * t * t - 2.5 * t * t + 1.0
    } else if t < 2.0 {
        -0.5 * t * t * t + 2.5 * t * t - 4.0 * t + 2.0
    } else {
        0.0
    }
}

/// Cubic interpolation weights of points `x` (in grid units, i.e. `x = 3.4` lies between
/// grid nodes 3 and 4) on a 1-D grid of `m` nodes: an `n×m` matrix with 4 entries per row.
pub fn cubic_weights(x: &[f64], m: usize) -> Mat<f64> {
    let mut w = Mat::zeros(x.len(), m);
    for (i, &xi) in x.iter().enumerate() {
        let b = xi.floor() as isize;
        for j in (b - 1)..=(b + 2) {
            if j >= 0 && (j as usize) < m {
                w[(i, j as usize)] = keys(xi - j as f64);
            }
        }
    }
    w
}

/// The SE kernel on a 1-D grid with unit spacing: `s · exp(−(i−j)²/(2ℓ²))`.
pub fn se_grid(m: usize, lengthscale: f64, scale: f64) -> Mat<f64> {
    Mat::from_fn(m, m, |i, j| {
        let d = (i as f64 - j as f64) / lengthscale;
        scale * (-0.5 * d * d).exp()
    })
}

/// `A ⊗ B` (first factor slowest).
pub fn kron(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    let (p, q) = (b.nrows(), b.ncols());
    Mat::from_fn(a.nrows() * p, a.ncols() * q, |i, j| {
        a[(i / p, j / q)] * b[(i % p, j % q)]
    })
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A small SKI problem in dense form.
pub struct Problem {
    pub w: Mat<f64>,
    pub kg: Mat<f64>,
    pub s: Mat<f64>,
    pub sigma2: f64,
    pub y: Col<f64>,
    /// `K̃ = W K_G Wᵀ + σ² I`.
    pub ktilde: Mat<f64>,
}

impl Problem {
    pub fn new(w: Mat<f64>, kg: Mat<f64>, sigma2: f64, y: Col<f64>) -> Self {
        let s = w.transpose() * &w;
        let n = w.nrows();
        let wk = &w * &kg * w.transpose();
        // Exactly symmetric.
        let ktilde = Mat::from_fn(n, n, |i, j| {
            0.5 * (wk[(i, j)] + wk[(j, i)]) + if i == j { sigma2 } else { 0.0 }
        });
        Self {
            w,
            kg,
            s,
            sigma2,
            y,
            ktilde,
        }
    }

    /// 1-D: `n` points uniform in the grid interior (all 4 neighbours on the grid), a smooth
    /// target plus noise, SE grid kernel.
    pub fn cubic_1d(n: usize, m: usize, lengthscale: f64, sigma2: f64, seed: u64) -> Self {
        let mut r = rng(seed);
        let x: Vec<f64> = (0..n)
            .map(|_| r.random_range(1.0..(m as f64 - 2.0)))
            .collect();
        let w = cubic_weights(&x, m);
        let y = Col::from_fn(n, |i| {
            let e: f64 = StandardNormal.sample(&mut r);
            (x[i] / 3.0).sin() + 0.3 * e
        });
        Self::new(w, se_grid(m, lengthscale, 1.0), sigma2, y)
    }

    /// 2-D: a tensor grid `m1 × m2`, weights `w¹ ⊗ w²`, `K_G = K₁ ⊗ K₂`.
    pub fn cubic_2d(
        n: usize,
        m1: usize,
        m2: usize,
        lengthscale: f64,
        sigma2: f64,
        seed: u64,
    ) -> Self {
        let mut r = rng(seed);
        let x1: Vec<f64> = (0..n)
            .map(|_| r.random_range(1.0..(m1 as f64 - 2.0)))
            .collect();
        let x2: Vec<f64> = (0..n)
            .map(|_| r.random_range(1.0..(m2 as f64 - 2.0)))
            .collect();
        let (w1, w2) = (cubic_weights(&x1, m1), cubic_weights(&x2, m2));
        let w = Mat::from_fn(n, m1 * m2, |i, j| w1[(i, j / m2)] * w2[(i, j % m2)]);
        let kg = kron(
            &se_grid(m1, lengthscale, 1.0),
            &se_grid(m2, lengthscale, 1.0),
        );
        let y = Col::from_fn(n, |i| {
            let e: f64 = StandardNormal.sample(&mut r);
            (x1[i] / 2.0).sin() * (x2[i] / 3.0).cos() + 0.2 * e
        });
        Self::new(w, kg, sigma2, y)
    }

    /// A random sparse `W` with 4 non-zeros per row (weights in (0, 1)), SE grid kernel.
    pub fn random_sparse(n: usize, m: usize, lengthscale: f64, sigma2: f64, seed: u64) -> Self {
        let mut r = rng(seed);
        let mut w = Mat::zeros(n, m);
        for i in 0..n {
            let mut cols = Vec::new();
            while cols.len() < 4 {
                let j = r.random_range(0..m);
                if !cols.contains(&j) {
                    cols.push(j);
                }
            }
            for j in cols {
                w[(i, j)] = r.random_range(0.05..1.0);
            }
        }
        let y = Col::from_fn(n, |_| StandardNormal.sample(&mut r));
        Self::new(w, se_grid(m, lengthscale, 1.0), sigma2, y)
    }

    pub fn n(&self) -> usize {
        self.w.nrows()
    }

    pub fn m(&self) -> usize {
        self.w.ncols()
    }

    pub fn system(&self) -> DenseSystem {
        DenseSystem::new(self.kg.clone(), self.s.clone(), self.sigma2)
    }

    /// `(g, ρ) = (Wᵀz, zᵀz)`.
    pub fn start(&self, z: &Col<f64>) -> StartVector {
        StartVector::new(self.w.transpose() * z, z.squared_norm_l2()).expect("start vector")
    }

    pub fn w_op(&self) -> DenseOperator {
        DenseOperator::new(self.w.clone())
    }

    pub fn ktilde_op(&self) -> DenseOperator {
        DenseOperator::new(self.ktilde.clone())
    }
}

/// A dense `WeightSpaceSystem` that counts its `K_G` and `S` products.
pub struct DenseSystem {
    pub kg: Mat<f64>,
    pub s: Mat<f64>,
    pub sigma2: f64,
    pub kg_products: AtomicUsize,
    pub s_products: AtomicUsize,
}

impl DenseSystem {
    pub fn new(kg: Mat<f64>, s: Mat<f64>, sigma2: f64) -> Self {
        Self {
            kg,
            s,
            sigma2,
            kg_products: AtomicUsize::new(0),
            s_products: AtomicUsize::new(0),
        }
    }

    /// `(K_G products, S products)` so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.kg_products.load(Ordering::Relaxed),
            self.s_products.load(Ordering::Relaxed),
        )
    }
}

impl WeightSpaceSystem for DenseSystem {
    fn dim(&self) -> usize {
        self.kg.nrows()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, mut out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.kg_products.fetch_add(1, Ordering::Relaxed);
        out.copy_from(&self.kg * v);
        Ok(())
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, mut out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.s_products.fetch_add(1, Ordering::Relaxed);
        out.copy_from(&self.s * v);
        Ok(())
    }
    fn noise_variance(&self) -> f64 {
        self.sigma2
    }
}

/// Plain CG on a dense SPD matrix from 0: the iterates `x_1..x_k` (fewer if it converges
/// exactly), with tolerance 0.
pub fn cg_iterates(a: &Mat<f64>, b: &Col<f64>, steps: usize) -> Vec<Col<f64>> {
    let op = DenseOperator::new(a.clone());
    let rhs = Mat::from_fn(b.nrows(), 1, |i, _| b[i]);
    let opts = CgOptions {
        tolerance: 0.0,
        max_iterations: steps,
        ..Default::default()
    };
    let mut solver = CgSolver::new(&op, rhs.as_ref(), None, &opts).expect("cg");
    let mut out = Vec::new();
    while solver.step().expect("step").is_some() {
        out.push(solver.solution().col(0).to_owned());
    }
    out
}

/// `‖a − b‖ / ‖b‖`.
pub fn rel_diff(a: &Col<f64>, b: &Col<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2()
}

pub fn mat_rel_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_l2() / b.norm_l2()
}

pub fn col_of(m: &Mat<f64>) -> Col<f64> {
    m.col(0).to_owned()
}

/// `K̃` applied as `W (K_G (Wᵀ v)) + σ² v`: the same operator as the dense `K̃`, rounded
/// differently. Plain CG with it shows how far CG drifts under a change of rounding alone.
pub struct Factored<'a>(pub &'a Problem);

impl gp_linalg::LinearOperator for Factored<'_> {
    fn nrows(&self) -> usize {
        self.0.n()
    }
    fn ncols(&self) -> usize {
        self.0.n()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let p = self.0;
        out.copy_from(&p.w * (&p.kg * (p.w.transpose() * x)) + x * p.sigma2);
    }
}

/// Plain CG on `op` for one right-hand side.
pub fn plain_cg_on(
    op: &dyn gp_linalg::LinearOperator,
    b: &Col<f64>,
    tol: f64,
    max_iterations: usize,
) -> gp_solvers::CgResult {
    let rhs = Mat::from_fn(b.nrows(), 1, |i, _| b[i]);
    let opts = CgOptions {
        tolerance: tol,
        max_iterations,
        ..Default::default()
    };
    gp_solvers::cg(op, rhs.as_ref(), None, &opts).expect("cg")
}

/// Checks that a step interface run to the end (`stepped`, after `steps` calls of `step`)
/// gave the wrapper's result `full` bit for bit.
pub fn assert_same_result(
    stepped: &gp_solvers::FactorizedCgResult,
    steps: usize,
    full: &gp_solvers::FactorizedCgResult,
) {
    assert_eq!(steps, full.iterations);
    assert_eq!(stepped.solution, full.solution);
    assert_eq!(stepped.solution_wt, full.solution_wt);
    assert_eq!(stepped.status, full.status);
    assert_eq!(stepped.record, full.record);
    assert_eq!(stepped.iterates, full.iterates);
}

/// Checks that a solve stopped after three steps (its third iterate `third`, its result
/// `truncated`) is the first three steps of the full solve `full` (run with recorded
/// iterates).
pub fn assert_prefix_of_three(
    third: &gp_solvers::factorized::FactorizedVector,
    truncated: &gp_solvers::FactorizedCgResult,
    full: &gp_solvers::FactorizedCgResult,
) {
    assert_eq!(truncated.status, gp_solvers::Status::Running);
    assert_eq!(truncated.record.alphas, full.record.alphas[..3]);
    assert_eq!(
        truncated.record.residual_norms,
        full.record.residual_norms[..4]
    );
    let iterates = full
        .iterates
        .as_ref()
        .expect("the full solve records its iterates");
    assert_eq!(third, &iterates[2]);
    assert_eq!(&truncated.solution, &iterates[2]);
}
