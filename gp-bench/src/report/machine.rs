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

/// The CPU as `/proc/cpuinfo` describes it: the model name, then the family and model
/// numbers and the widest vector extension (cloud CPUs of different generations can share a
/// model name such as "AMD EPYC" while their speed differs 2–4×), e.g.
/// `AMD EPYC (family 25, model 1; AVX2)`. `unknown` where there is no `/proc/cpuinfo`.
pub fn cpu_description() -> String {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return "unknown".into();
    };
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let model_name = field("model name").unwrap_or_else(|| "unknown".into());
    let flags = field("flags").unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let simd = if has("avx512f") {
        "AVX-512"
    } else if has("avx2") {
        "AVX2"
    } else {
        "no AVX2"
    };
    match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => {
            format!("{model_name} (family {family}, model {model}; {simd})")
        }
        _ => format!("{model_name} ({simd})"),
    }
}

impl MachineInfo {
    /// Reads the current machine's description.
    pub fn detect() -> Self {
        let cpu = cpu_description();
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
