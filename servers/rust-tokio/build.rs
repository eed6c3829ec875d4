//! Records, at build time, the versions /health reports: the rustc that
//! compiled this binary (Rust has no runtime separate from its compiler) and
//! the tokio, axum and hyper versions pinned in Cargo.lock.

use std::{env, fs, path::Path, process::Command};

fn main() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=LOADLAB_RUSTC_VERSION={version}");

    let manifest_dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock = fs::read_to_string(Path::new(&manifest_dir).join("Cargo.lock")).unwrap_or_default();
    for krate in ["tokio", "axum", "hyper"] {
        let version = locked_version(&lock, krate).unwrap_or_else(|| "unknown".to_owned());
        println!("cargo:rustc-env=LOADLAB_{}_VERSION={version}", krate.to_uppercase());
    }
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}

/// The version of `name` in a Cargo.lock (`name = "x"` then `version = "y"`).
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let next = lines.next()?.trim();
            return next
                .strip_prefix("version = \"")
                .and_then(|rest| rest.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}
