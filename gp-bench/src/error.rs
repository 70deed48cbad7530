//! The error type of `gp-bench`.

use std::path::PathBuf;

use thiserror::Error;

/// What can go wrong while loading or generating data, running an experiment or writing a
/// report.
#[derive(Debug, Error)]
pub enum BenchError {
    /// From the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] gp_linalg::LinalgError),
    /// From a kernel.
    #[error(transparent)]
    Kernel(#[from] gp_kernels::KernelError),
    /// From a model.
    #[error(transparent)]
    Model(#[from] gp_models::ModelError),
    /// From an iterative solver.
    #[error(transparent)]
    Solver(#[from] gp_solvers::SolverError),
    /// From the structured-algebra layer.
    #[error(transparent)]
    Structured(#[from] gp_structured::StructuredError),
    /// A command-line argument or option is out of range.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A data file does not exist or cannot be opened.
    #[error("cannot open data file {}: {reason}; expected {layout}", path.display())]
    MissingFile {
        /// The path that was tried.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
        /// The layout the file should have.
        layout: String,
    },
    /// A directory given explicitly does not exist.
    #[error("data directory {} does not exist ({origin})", path.display())]
    MissingDirectory {
        /// The directory.
        path: PathBuf,
        /// Where the path came from (`--data-dir`, `GP_DATA_DIR`).
        origin: String,
    },
    /// A directory given explicitly is a file (or something else that is not a directory).
    #[error("data directory {} is not a directory ({origin})", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
        /// Where the path came from (`--data-dir`, `GP_DATA_DIR`).
        origin: String,
    },
    /// A CSV row has a different number of cells than the header.
    #[error("{}: line {line} has {found} cells but the header has {expected}", path.display())]
    RaggedRow {
        /// The file.
        path: PathBuf,
        /// 1-based line number in the file (the header is line 1).
        line: u64,
        /// Cells in the header.
        expected: usize,
        /// Cells in the row.
        found: usize,
    },
    /// A CSV cell is not a number.
    #[error("{}: line {line}, column `{column}`: `{value}` is not a number", path.display())]
    NonNumeric {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// Column name from the header.
        column: String,
        /// The cell's text.
        value: String,
    },
    /// A CSV cell is NaN or infinite.
    #[error("{}: line {line}, column `{column}`: `{value}` is not finite (NaN and infinities are not allowed)", path.display())]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// Column name from the header.
        column: String,
        /// The cell's text.
        value: String,
    },
    /// The requested target column is not in the header.
    #[error("{}: no column named `{name}` (the header has: {headers})", path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The requested name.
        name: String,
        /// The header, comma separated.
        headers: String,
    },
    /// A CSV file is malformed in a way not covered above (no header, bad quoting, an
    /// unreadable byte, fewer than two columns, no data rows).
    #[error("{}: {reason}", path.display())]
    BadCsv {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A gzip-compressed data file cannot be decompressed: not gzip at all, a corrupt
    /// deflate stream, a checksum that does not match, or a file cut short.
    #[error("{}: cannot decompress (not gzip, corrupt or truncated): {reason}", path.display())]
    BadGzip {
        /// The file.
        path: PathBuf,
        /// The decoder's reason.
        reason: String,
    },
    /// An IDX file (MNIST) is malformed: a wrong magic number or dimensions, a header count
    /// that does not match the bytes present, or a value out of range.
    #[error("{}: bad IDX file: {reason}", path.display())]
    BadIdx {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A `SHA256SUMS` file cannot be read or has a line not in `sha256sum` format.
    #[error("{}: bad checksum list: {reason}", path.display())]
    BadChecksumList {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A data set has the wrong shape for what it is used for.
    #[error("data set `{name}`: {reason}")]
    BadData {
        /// The data set.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A data set name is not known.
    #[error("unknown data set `{name}`; known: {known}")]
    UnknownDataset {
        /// The requested name.
        name: String,
        /// The known names, comma separated.
        known: String,
    },
    /// Writing a report file failed.
    #[error("cannot write {}: {reason}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// Drawing a plot failed.
    #[error("cannot draw plot `{name}`: {reason}")]
    Plot {
        /// The plot.
        name: String,
        /// The backend's reason.
        reason: String,
    },
    /// Serializing the raw results failed.
    #[error("cannot serialize results: {0}")]
    Json(#[from] serde_json::Error),
}
