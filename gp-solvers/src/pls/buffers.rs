//! The recycling buffers `S`, `T = K S` and the virtual solver run of Algorithm 3.

use faer::linalg::matmul::matmul;
use faer::{Accum, ColRef, Mat, MatRef, Par};
use gp_linalg::{LinearOperator, SymmetricEigen};

use crate::error::{check_shape, invalid, Result};

/// The actions `S` (`n × B`) of earlier solves and their products `T = K S` with the
/// operator `K` that does not change between solves (recycled across Newton steps: only
/// `W⁻¹` changes, so `T` stays valid).
#[derive(Debug, Clone, PartialEq)]
pub struct RecycleBuffers {
    s: Mat<f64>,
    t: Mat<f64>,
}

impl RecycleBuffers {
    /// Empty buffers for an `n × n` system.
    pub fn empty(n: usize) -> Self {
        Self {
            s: Mat::zeros(n, 0),
            t: Mat::zeros(n, 0),
        }
    }

    /// Buffers from actions `S` and their products `T = K S` (the caller vouches for `T`).
    ///
    /// Errors: [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `S` and
    /// `T` differ in shape; non-finite entries
    /// ([`SolverError::Linalg`](crate::SolverError::Linalg)).
    pub fn new(s: Mat<f64>, t: Mat<f64>) -> Result<Self> {
        check_shape(
            t.shape(),
            s.shape(),
            "recycle buffers (T = K S has the shape of S)",
        )?;
        gp_linalg::validate::check_finite_mat(s.as_ref(), "the recycled actions S")?;
        gp_linalg::validate::check_finite_mat(t.as_ref(), "the recycled products T = K S")?;
        Ok(Self { s, t })
    }

    /// The actions `S` (`n × B`).
    pub fn actions(&self) -> MatRef<'_, f64> {
        self.s.as_ref()
    }

    /// The products `T = K S` (`n × B`).
    pub fn products(&self) -> MatRef<'_, f64> {
        self.t.as_ref()
    }

    /// The order `n` of the system.
    pub fn n(&self) -> usize {
        self.s.nrows()
    }

    /// The number of stored actions `B`.
    pub fn len(&self) -> usize {
        self.s.ncols()
    }

    /// Whether no action is stored.
    pub fn is_empty(&self) -> bool {
        self.s.ncols() == 0
    }

    /// Appends one action and its product with `K` (lengths checked by the solver).
    pub(crate) fn push(&mut self, s: ColRef<'_, f64>, t: ColRef<'_, f64>) {
        push_column(&mut self.s, s);
        push_column(&mut self.t, t);
    }
}

/// Appends a column to `m` (`n × c` → `n × (c + 1)`; `col` has `n` entries).
pub(crate) fn push_column(m: &mut Mat<f64>, col: ColRef<'_, f64>) {
    let (n, c) = (m.nrows(), m.ncols());
    m.resize_with(n, c + 1, |i, _| col[i]);
}

/// Options of [`virtual_solver_run`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecycleOptions {
    /// Keep at most this many eigenpairs of `M` (the largest): compression to `R` columns.
    /// `None` (default) keeps all.
    pub rank: Option<usize>,
    /// Drop eigenpairs of `M` with `λ ≤ relative_floor · λ_max` (default `1e-12`): nearly
    /// dependent recycled actions make `M` numerically singular, and `λ^{-1/2}` of a
    /// rounding-level eigenvalue would amplify noise (spec §7.3; the reference code's `κ`).
    pub relative_floor: f64,
}

impl Default for RecycleOptions {
    fn default() -> Self {
        Self {
            rank: None,
            relative_floor: 1e-12,
        }
    }
}

/// The belief rebuilt by [`virtual_solver_run`].
#[derive(Debug, Clone)]
pub struct Recycled {
    /// `Q₀` (`n × R'`): `C₀ = Q₀Q₀ᵀ = S_R (S_Rᵀ K̂ S_R)⁻¹ S_Rᵀ`.
    pub root: Mat<f64>,
    /// `K Q₀ = T U Λ^{-1/2}` (`n × R'`), for a solver that tracks `K Q` instead of
    /// recomputing `K v` ([`PlsOptions::track_kq`](super::PlsOptions::track_kq)).
    pub k_root: Mat<f64>,
    /// The buffers rotated to the kept eigenvectors, `S U`, `T U` (`T = K S` still holds).
    pub buffers: RecycleBuffers,
    /// Eigenpairs dropped: beyond `rank` or below the floor.
    pub dropped: usize,
}

/// Algorithm 3 (Tatzel et al. 2023): the belief of a solver run with all the recycled
/// actions, on the system `K + W⁻¹` with a new `winv`, without a product with `K`:
///
/// ```text
/// M = Sᵀ(T + W⁻¹S)  (symmetrised),   M = U Λ Uᵀ  (descending),
/// keep the R largest with λ > relative_floor·λ_max,
/// S ← S U,  T ← T U,  Q₀ = S Λ^{-1/2}
/// ```
///
/// After the rotation `Sᵀ K̂ S = Λ` (the actions are `K̂`-conjugate) and `C₀ = Q₀Q₀ᵀ` is
/// the IterGP precision estimate of the kept re-weighted actions. The buffers are always
/// rotated (the reference code rotates only when it drops columns; the belief is the same).
///
/// Errors: `winv` of another order than the buffers
/// ([`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch)), a relative floor
/// outside `[0, 1)` ([`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)),
/// an eigendecomposition failure ([`SolverError::Linalg`](crate::SolverError::Linalg)).
pub fn virtual_solver_run(
    buffers: RecycleBuffers,
    winv: &dyn LinearOperator,
    options: &RecycleOptions,
) -> Result<Recycled> {
    let (n, b) = (buffers.n(), buffers.len());
    check_shape(winv.shape(), (n, n), "W⁻¹ of the recycled system (n × n)")?;
    if !(options.relative_floor >= 0.0 && options.relative_floor < 1.0) {
        return Err(invalid(
            "RecycleOptions::relative_floor",
            format!("must lie in [0, 1), got {}", options.relative_floor),
        ));
    }
    if b == 0 {
        return Ok(Recycled {
            root: Mat::zeros(n, 0),
            k_root: Mat::zeros(n, 0),
            buffers,
            dropped: 0,
        });
    }
    let RecycleBuffers { s, t } = buffers;
    // K̂ S = T + W⁻¹ S.
    let mut ks = Mat::<f64>::zeros(n, b);
    winv.matmat(s.as_ref(), ks.as_mut());
    ks += &t;
    let mut m = Mat::<f64>::zeros(b, b);
    matmul(
        m.as_mut(),
        Accum::Replace,
        s.transpose(),
        ks.as_ref(),
        1.0,
        Par::Seq,
    );
    let m = Mat::from_fn(b, b, |i, j| 0.5 * (m[(i, j)] + m[(j, i)]));
    let eig = SymmetricEigen::new(m.as_ref())?;
    let largest = eig.values[b - 1];
    let floor = options.relative_floor * largest.max(0.0);
    let cap = options.rank.unwrap_or(b).min(b);
    let kept: Vec<usize> = (0..b)
        .rev()
        .filter(|&k| eig.values[k] > floor && eig.values[k] > 0.0)
        .take(cap)
        .collect();
    let r = kept.len();
    let u = Mat::from_fn(b, r, |i, j| eig.vectors[(i, kept[j])]);
    let mut s_rot = Mat::<f64>::zeros(n, r);
    let mut t_rot = Mat::<f64>::zeros(n, r);
    matmul(
        s_rot.as_mut(),
        Accum::Replace,
        s.as_ref(),
        u.as_ref(),
        1.0,
        Par::Seq,
    );
    matmul(
        t_rot.as_mut(),
        Accum::Replace,
        t.as_ref(),
        u.as_ref(),
        1.0,
        Par::Seq,
    );
    let root = Mat::from_fn(n, r, |i, j| s_rot[(i, j)] / eig.values[kept[j]].sqrt());
    let k_root = Mat::from_fn(n, r, |i, j| t_rot[(i, j)] / eig.values[kept[j]].sqrt());
    Ok(Recycled {
        root,
        k_root,
        buffers: RecycleBuffers { s: s_rot, t: t_rot },
        dropped: b - r,
    })
}
