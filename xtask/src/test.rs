//! `cargo xtask test`: every test of the project, as CI runs them — the workspace's
//! (`cargo test`: every kernel on the simulator; the GPU tests run where there is a GPU), then
//! the Python package's: built and installed from `python/` into a fresh virtual environment
//! as `pip install ./python` installs it for a user, and its pytest suite run against that
//! installation (NumPy arrays on the simulator, or on GPU 0; PyTorch and CuPy arrays where
//! they are installed and see a GPU).

use anyhow::{Context, Result, bail};
use std::path::Path;
use std::process::Command;

/// Runs `command`, failing with what it was for if it fails.
fn run(what: &str, command: &mut Command) -> Result<()> {
    eprintln!("\n== {what}");
    let status = command
        .status()
        .with_context(|| format!("starting {what} ({command:?})"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

pub fn test(root: &Path, python: bool, cargo_args: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(
        "cargo test (the workspace, on the simulator)",
        Command::new(&cargo)
            .current_dir(root)
            .arg("test")
            .args(cargo_args),
    )?;
    if !python {
        eprintln!("\n(the Python package's tests skipped: --no-python)");
        return Ok(());
    }
    test_python(root)
}

fn test_python(root: &Path) -> Result<()> {
    let interpreter = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let venv = root.join("target/python-venv");
    // A fresh environment each time: the package is installed as a user installs it.
    if venv.exists() {
        std::fs::remove_dir_all(&venv)
            .with_context(|| format!("removing the old {}", venv.display()))?;
    }
    run(
        "a fresh Python virtual environment (target/python-venv)",
        Command::new(&interpreter).args(["-m", "venv"]).arg(&venv),
    )
    .with_context(|| {
        format!("the Python tests need {interpreter} with venv (set PYTHON, or pass --no-python)")
    })?;
    let bin = venv.join("bin");
    run(
        "pip install numpy pytest",
        Command::new(bin.join("python"))
            .args(["-m", "pip", "install", "--quiet", "numpy", "pytest"]),
    )?;
    // Built by maturin (pyproject.toml) with the stable toolchain python/ pins, in its own
    // target directory: exactly what `pip install ./python` does for a user.
    let mut install = Command::new(bin.join("python"));
    install
        .current_dir(root)
        .args(["-m", "pip", "install", "--quiet", "./python"]);
    // This task runs under the workspace's nightly: none of that may reach the package's build.
    for variable in [
        "RUSTUP_TOOLCHAIN",
        "CARGO",
        "RUSTC",
        "RUSTC_WRAPPER",
        "CARGO_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
    ] {
        install.env_remove(variable);
    }
    run(
        "pip install ./python (the wheel, built from the checkout)",
        &mut install,
    )?;
    // pytest from the repository root: the tests import the installed package, never the
    // source folder python/reduce_rs (which has no native module).
    run(
        "pytest python/tests (against the installed package)",
        Command::new(bin.join("pytest"))
            .current_dir(root)
            .args(["-q", "python/tests"]),
    )
}
