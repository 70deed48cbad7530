//! `gp-bench datasets`: every data set gp-bench knows, where it was found, its size, and
//! whether it is real or a synthetic stand-in; and the synthetic generators.

use super::catalog::{load_known, CATALOG};
use super::checksum::{ChecksumStatus, Checksums};
use super::mnist::{load_mnist, MnistSplit, MNIST_DIR, MNIST_PIXELS};
use super::uci::{
    load_uci_files, uci_paths, UCI_ALIASES, UCI_CATALOG, UCI_DATA_FILE, UCI_DIR, UCI_MASK_FILE,
};
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

/// The checksum verdict of several files of one folder: `ok` when all verify, else each
/// file's status; `file missing` without a data directory. A missing or malformed
/// `SHA256SUMS` is reported, never taken as `ok`.
fn checksum_cell(sums: Option<&Result<Checksums, BenchError>>, files: &[String]) -> String {
    let sums = match sums {
        None => return "file missing".into(),
        Some(Ok(s)) => s,
        Some(Err(e)) => return format!("not verified: {e}"),
    };
    let statuses: Vec<(&String, ChecksumStatus)> =
        files.iter().map(|f| (f, sums.verify(f))).collect();
    if statuses.iter().all(|(_, s)| s.is_ok()) {
        return "ok".into();
    }
    statuses
        .iter()
        .map(|(f, s)| format!("{f}: {s}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `where` cell of a set when there is no data directory at all.
fn no_data_dir(what: &str) -> String {
    format!("{what}: no data directory (give --data-dir or set GP_DATA_DIR)")
}

/// One row per UCI set of the data directory's README: the shape found (and the documented
/// one when they differ), the papers that use it (and their names for it), where it was
/// found, and whether both files match `uci/SHA256SUMS`.
///
/// A missing or unreadable set is reported in its row, not as an error.
pub fn uci_datasets(data_dir: &DataDir) -> Table {
    let mut t = Table::new(["name", "n × d", "used by", "where", "checksum"]);
    let dir = data_dir.path.as_deref();
    let sums = dir.map(|d| Checksums::read(&d.join(UCI_DIR)));
    for k in UCI_CATALOG {
        let aliases: Vec<&str> = UCI_ALIASES
            .iter()
            .filter(|(_, target)| *target == k.name)
            .map(|(alias, _)| *alias)
            .collect();
        let used_by = if aliases.is_empty() {
            k.used_by.to_string()
        } else {
            format!("{} (as {})", k.used_by, aliases.join(", "))
        };
        let documented = format!("{} × {}", k.n, k.d);
        let Some(dir) = dir else {
            t.row([
                k.name.to_string(),
                documented,
                used_by,
                no_data_dir(&format!("{UCI_DIR}/{}", k.name)),
                "file missing".into(),
            ]);
            continue;
        };
        let (data_path, mask_path) = uci_paths(k.name, dir);
        let folder = dir.join(UCI_DIR).join(k.name).display().to_string();
        let (size, place) = match load_uci_files(k.name, &data_path, &mask_path) {
            Ok(set) if set.data.len() == k.n && set.data.dim() == k.d => (documented, folder),
            Ok(set) => (
                format!(
                    "{} × {} (documented {documented})",
                    set.data.len(),
                    set.data.dim()
                ),
                folder,
            ),
            Err(BenchError::MissingFile { path, .. }) => {
                (documented, format!("{} is missing", path.display()))
            }
            Err(e) => (documented, format!("unreadable: {e}")),
        };
        let files = [UCI_DATA_FILE, UCI_MASK_FILE].map(|f| format!("{}/{f}", k.name));
        t.row([
            k.name.to_string(),
            size,
            used_by,
            place,
            checksum_cell(sums.as_ref(), &files),
        ]);
    }
    t
}

/// One row per MNIST split: images × pixels found, the paper that uses it, where it was
/// found, and whether both files match `mnist/SHA256SUMS`.
pub fn mnist_files(data_dir: &DataDir) -> Table {
    let mut t = Table::new(["name", "n × d", "used by", "where", "checksum"]);
    let dir = data_dir.path.as_deref();
    let sums = dir.map(|d| Checksums::read(&d.join(MNIST_DIR)));
    for split in MnistSplit::ALL {
        let (images, labels) = split.file_names();
        let documented = format!("{} × {MNIST_PIXELS}", split.documented_len());
        let (size, place) = match dir.map(|d| (d, load_mnist(split, d))) {
            None => (documented, no_data_dir(MNIST_DIR)),
            Some((d, Ok(m))) => {
                let size = if m.len() == split.documented_len() {
                    documented
                } else {
                    format!("{} × {MNIST_PIXELS} (documented {documented})", m.len())
                };
                (size, d.join(MNIST_DIR).display().to_string())
            }
            Some((_, Err(BenchError::MissingFile { path, .. }))) => {
                (documented, format!("{} is missing", path.display()))
            }
            Some((_, Err(e))) => (documented, format!("unreadable: {e}")),
        };
        let checksum = checksum_cell(sums.as_ref(), &[images.to_string(), labels.to_string()]);
        t.row([
            format!("mnist {}", split.label()),
            size,
            "IterNCGP (MNIST)".into(),
            place,
            checksum,
        ]);
    }
    t
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
