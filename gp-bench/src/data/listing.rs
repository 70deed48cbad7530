//! `gp-bench datasets`: every data set gp-bench knows, where it was found, its size, and
//! whether it is real or a synthetic stand-in; and the synthetic generators.

use super::catalog::{load_known, CATALOG};
use super::DataDir;
use crate::error::BenchError;
use crate::table::Table;

/// One row per known real data set: found (path, actual size) or missing (then the
/// synthetic stand-in of the documented size is used).
///
/// Errors: none for a missing file; a file that exists but cannot be parsed is reported in
/// its row, not as an error.
pub fn known_datasets(data_dir: &DataDir) -> Result<Table, BenchError> {
    let mut t = Table::new(["name", "kind", "where", "n × d", "description"]);
    for k in CATALOG {
        let (kind, place, size) = match load_known(k.name, data_dir.path.as_deref()) {
            Ok(l) => {
                let size = format!("{} × {}", l.data.len(), l.data.dim());
                let mismatch = l.data.len() != k.n || l.data.dim() != k.d;
                let kind = if mismatch {
                    format!("real (documented {} × {})", k.n, k.d)
                } else {
                    "real".to_string()
                };
                let place = match &l.data.origin {
                    super::DataOrigin::File(p) => p.display().to_string(),
                    other => other.describe(),
                };
                (kind, place, size)
            }
            Err(BenchError::MissingFile { .. }) => (
                "synthetic stand-in (file not found)".to_string(),
                format!(
                    "{} not in {}",
                    k.files.join(" + "),
                    data_dir.path.as_ref().map_or_else(
                        || "any data directory".to_string(),
                        |p| p.display().to_string()
                    )
                ),
                format!("{} × {}", k.n, k.d),
            ),
            Err(e) => (
                "unreadable: synthetic stand-in".to_string(),
                e.to_string(),
                format!("{} × {}", k.n, k.d),
            ),
        };
        t.row([
            k.name.to_string(),
            kind,
            place,
            size,
            k.description.to_string(),
        ]);
    }
    Ok(t)
}

/// The synthetic generators of [`crate::synthetic`] and the papers that use them.
pub fn generators() -> Table {
    let mut t = Table::new(["generator", "function", "used by", "what"]);
    for (name, func, paper, what) in [
        (
            "sine",
            "synthetic::sine::gsgp_sine",
            "GSGP Fig. 3",
            "x ~ U(−1,1) sorted, y = sin(2πx + 0.25u − 0.125), 30 test points",
        ),
        (
            "gp-prior",
            "synthetic::gp_prior_draw",
            "all",
            "exact draw from a GP prior by Cholesky (jitter ladder)",
        ),
        (
            "gp-prior-grid",
            "synthetic::grid::kronecker_prior_draw",
            "KMCG, GSGP",
            "exact draw on a tensor grid by Kronecker eigendecomposition",
        ),
        (
            "kmcg-grid",
            "synthetic::grid::kmcg_grid",
            "KMCG Fig. 7",
            "G points per axis in [−G/4, G/4] with N(0, 1e-6) jitter, SE draw + noise",
        ),
        (
            "poisson",
            "synthetic::poisson::poisson_counts",
            "IterNCGP Fig. 5",
            "counts ~ Poisson(exp f), f ~ GP(0, 5·RBF(0.1)) on 100 points",
        ),
        (
            "mixture",
            "synthetic::mixture::gaussian_mixture",
            "IterNCGP Fig. 6",
            "C = 10 Gaussian classes in 3-D, random means and covariances",
        ),
        (
            "grief-recon",
            "synthetic::reconstruction::grief_reconstruction",
            "GP-GRIEF Fig. 2",
            "uniform in [−√3, √3]^100, half train / half test",
        ),
        (
            "stand-in",
            "data::catalog::stand_in",
            "any missing real set",
            "same n × d, smooth sine-sum target + N(0, 0.01) noise",
        ),
    ] {
        t.row([name, func, paper, what]);
    }
    t
}
