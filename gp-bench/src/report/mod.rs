//! Reports: markdown (`report.md`), raw figures (`results.json`) and SVG plots, written
//! atomically (a temporary file, then a rename) so an interrupted run never leaves a
//! half-written file behind.

pub mod atomic;
pub mod machine;
pub mod markdown;
pub mod plot;
pub mod record;

pub use atomic::{check_writable_dir, replace_dir, staging_dir, write_atomic};
pub use machine::MachineInfo;
pub use plot::render_svg;
pub use record::{ExperimentRecord, PaperRun};
