//! The new columns of [`KmcgState`](super::KmcgState) from a stored Krylov basis.
//!
//! A solver that keeps its directions `S` and products `Z = (K_M + cI) S` (FOM with
//! complete re-orthogonalisation keeps both) gives, for the newest direction `s_j`,
//! `SᵀK_M s_j = ½(Sᵀz_j + Zᵀs_j) − c Sᵀs_j` (symmetrised, as the reference code does) and,
//! when `M = N`, `R = K S = Z − cS`. The shift `c` lets one FOM run on `K + σ²I` serve both
//! CG (its iterate) and KMCG (spec §1.5, shift invariance: `𝒦(K, y) = 𝒦(K + σ²I, y)`);
//! `c = 0` is the paper's run on `K`. All four inner products of a column pair come from one
//! sweep over `S` and `Z`, since at large `N` the sweeps, not the flops, cost.

use faer::{Mat, MatRef};
use rayon::prelude::*;

use super::state::KmcgColumns;
use crate::error::{ModelError, Result};

/// Below this many basis entries (`M · j`) the sweep runs on one thread.
const PARALLEL_ENTRIES: usize = 1 << 18;

/// `(s_iᵀs, s_iᵀz, z_iᵀs, z_iᵀz)` for every column `i` of `S` and `Z`.
fn column_dots(s: MatRef<'_, f64>, z: MatRef<'_, f64>, sj: &[f64], zj: &[f64]) -> Vec<[f64; 4]> {
    let one = |i: usize| {
        let (si, zi) = (s.col(i), z.col(i));
        let mut acc = [0.0; 4];
        for r in 0..sj.len() {
            let (a, b) = (si[r], zi[r]);
            acc[0] += a * sj[r];
            acc[1] += a * zj[r];
            acc[2] += b * sj[r];
            acc[3] += b * zj[r];
        }
        acc
    };
    let cols = s.ncols();
    if s.nrows() * cols >= PARALLEL_ENTRIES {
        (0..cols).into_par_iter().map(one).collect()
    } else {
        (0..cols).map(one).collect()
    }
}

fn check_basis(s: MatRef<'_, f64>, z: MatRef<'_, f64>, m: usize) -> Result<()> {
    for (found, context) in [
        (s.nrows(), "columns_from_basis: rows of S"),
        (z.nrows(), "columns_from_basis: rows of Z"),
    ] {
        if found != m {
            return Err(ModelError::LengthMismatch {
                context,
                expected: m,
                found,
            });
        }
    }
    if z.ncols() != s.ncols() || s.ncols() == 0 {
        return Err(ModelError::LengthMismatch {
            context: "columns_from_basis: columns of Z (as many as S, at least one)",
            expected: s.ncols().max(1),
            found: z.ncols(),
        });
    }
    Ok(())
}

fn col_vec(m: MatRef<'_, f64>, j: usize) -> Vec<f64> {
    (0..m.nrows()).map(|r| m[(r, j)]).collect()
}

/// `SᵀK_M s_j` (symmetrised) and the four dots per column, for the newest column `j`.
fn gram_column(dots: &[[f64; 4]], shift: f64) -> Vec<f64> {
    dots.iter()
        .map(|d| 0.5 * (d[1] + d[2]) - shift * d[0])
        .collect()
}

/// The columns for the newest direction (the last column of `S`, `Z = (K + cI) S`) when
/// `M = N`: `R = Z − cS`. `y` are the training targets, `test_row` is `s_jᵀ k(X, X*)`
/// (computed by the caller however the structure allows; empty without test points).
///
/// Errors: `S`, `Z` and `y` of different lengths, or an empty basis.
pub fn columns_from_basis(
    s: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    shift: f64,
    y: &[f64],
    test_row: Vec<f64>,
) -> Result<KmcgColumns> {
    check_basis(s, z, y.len())?;
    let j = s.ncols() - 1;
    let (sj, zj) = (col_vec(s, j), col_vec(z, j));
    let dots = column_dots(s, z, &sj, &zj);
    let c = shift;
    let product_gram = dots
        .iter()
        .map(|d| d[3] - c * (d[1] + d[2]) + c * c * d[0])
        .collect();
    let product_dot_y = zj
        .iter()
        .zip(&sj)
        .zip(y)
        .map(|((z, s), y)| (z - c * s) * y)
        .sum();
    Ok(KmcgColumns {
        gram: gram_column(&dots, shift),
        product_gram,
        product_dot_y,
        test_row,
    })
}

/// KMCG on a subset `X_M ⊂ X` (`M < N`): the directions live on `X_M`, and each one costs
/// an extra product `r_j = k(X, X_M) s_j` (`O(NM)`), kept in `R` for `RᵀR`.
#[derive(Debug, Clone)]
pub struct SubsetProducts {
    cross: Mat<f64>,
    y: Vec<f64>,
    /// `R`, column-major, `N × j`.
    r: Vec<f64>,
}

impl SubsetProducts {
    /// `cross = k(X, X_M)` (`N × M`) and the `N` training targets.
    ///
    /// Errors: `y` of a length other than `N`, non-finite entries.
    pub fn new(cross: Mat<f64>, y: &[f64]) -> Result<Self> {
        if y.len() != cross.nrows() {
            return Err(ModelError::LengthMismatch {
                context: "SubsetProducts::new: targets against the rows of k(X, X_M)",
                expected: cross.nrows(),
                found: y.len(),
            });
        }
        gp_linalg::validate::check_finite_mat(cross.as_ref(), "k(X, X_M)")
            .map_err(ModelError::from_finite_check)?;
        Ok(Self {
            cross,
            y: y.to_vec(),
            r: Vec::new(),
        })
    }

    /// Points in the subset (`M`).
    pub fn subset_size(&self) -> usize {
        self.cross.ncols()
    }

    /// Training points (`N`).
    pub fn n(&self) -> usize {
        self.cross.nrows()
    }

    /// The `N` training targets.
    pub fn targets(&self) -> &[f64] {
        &self.y
    }

    /// The columns for the newest direction: `S`, `Z = (K_M + cI) S` on the subset
    /// (`M` rows), and `s_jᵀk(X_M, X*)`.
    ///
    /// Errors: `S`, `Z` without `M` rows, an empty basis, a basis that skipped a direction
    /// (every direction must pass through here once, in order).
    pub fn columns(
        &mut self,
        s: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        shift: f64,
        test_row: Vec<f64>,
    ) -> Result<KmcgColumns> {
        check_basis(s, z, self.subset_size())?;
        let j = s.ncols() - 1;
        let (sj, zj) = (col_vec(s, j), col_vec(z, j));
        let (product_gram, product_dot_y) = self.push_direction(j, &sj)?;
        let dots = column_dots(s, z, &sj, &zj);
        Ok(KmcgColumns {
            gram: gram_column(&dots, shift),
            product_gram,
            product_dot_y,
            test_row,
        })
    }

    /// Appends `r_j = k(X, X_M) s_j` for direction `j` (0-based) and returns the new column
    /// of `RᵀR` and `r_jᵀy`: the part of a step that depends on the subset, whatever solver
    /// made `s_j` (FOM's `S` or Lanczos' `Q`).
    ///
    /// Errors: `s_j` without `M` entries, a direction skipped or seen twice.
    pub fn push_direction(&mut self, j: usize, sj: &[f64]) -> Result<(Vec<f64>, f64)> {
        let (n, m) = (self.n(), self.subset_size());
        if sj.len() != m {
            return Err(ModelError::LengthMismatch {
                context: "SubsetProducts::push_direction: entries of the direction (M)",
                expected: m,
                found: sj.len(),
            });
        }
        if self.r.len() != n * j {
            return Err(ModelError::LengthMismatch {
                context: "SubsetProducts: directions seen before the newest one",
                expected: self.r.len() / n.max(1),
                found: j,
            });
        }
        let sj_mat = MatRef::from_column_major_slice(sj, m, 1);
        let rj = &self.cross * sj_mat;
        self.r.extend((0..n).map(|i| rj[(i, 0)]));
        let rmat = MatRef::from_column_major_slice(&self.r, n, j + 1);
        let product_gram = (0..=j)
            .map(|i| (0..n).map(|row| rmat[(row, i)] * rj[(row, 0)]).sum())
            .collect();
        let product_dot_y = (0..n).map(|row| rj[(row, 0)] * self.y[row]).sum();
        Ok((product_gram, product_dot_y))
    }
}
