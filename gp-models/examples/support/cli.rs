//! The command-line flags of the examples (`--name value` pairs), shared by every example
//! through `#[path = "support/cli.rs"] mod cli;`.
#![allow(dead_code)] // each example uses what it needs

/// The value after `name`, if given.
pub fn flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The value after `name` parsed as `T`, or `default` when it is absent or does not parse.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    flag(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}
