//! What a report says about the machine and the build.

use serde_json::{json, Value};

/// The machine, thread counts and versions a run used.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineInfo {
    /// CPU model (`/proc/cpuinfo` on Linux; `unknown` elsewhere).
    pub cpu: String,
    /// Logical CPUs available to the process.
    pub logical_cpus: usize,
    /// Threads of the rayon pool.
    pub rayon_threads: usize,
    /// Dense linear algebra parallelism setting of `gp-linalg`.
    pub linalg_parallelism: String,
    /// Operating system and architecture.
    pub os: String,
    /// `release` or `debug` (whether debug assertions are on).
    pub profile: &'static str,
    /// Version of gp-bench (the workspace version of every gpscale crate).
    pub version: &'static str,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
}

impl MachineInfo {
    /// Reads the current machine's description.
    pub fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|m| m.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Self {
            cpu,
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rayon_threads: rayon::current_num_threads(),
            linalg_parallelism: format!("{:?}", gp_linalg::parallelism_setting()),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            version: env!("CARGO_PKG_VERSION"),
            started_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "cpu": self.cpu,
            "logical_cpus": self.logical_cpus,
            "rayon_threads": self.rayon_threads,
            "linalg_parallelism": self.linalg_parallelism,
            "os": self.os,
            "profile": self.profile,
            "gpscale_version": self.version,
            "started_unix": self.started_unix,
        })
    }

    /// As `(field, value)` rows for the report's run table.
    pub fn rows(&self) -> Vec<(String, String)> {
        vec![
            ("CPU".into(), self.cpu.clone()),
            (
                "threads".into(),
                format!(
                    "{} logical CPUs, rayon pool {}, dense linear algebra {}",
                    self.logical_cpus, self.rayon_threads, self.linalg_parallelism
                ),
            ),
            ("OS".into(), self.os.clone()),
            (
                "build".into(),
                format!("gpscale {} ({} profile)", self.version, self.profile),
            ),
            ("started (Unix time)".into(), self.started_unix.to_string()),
        ]
    }
}
