//! Where the peers' sources are: the repository's `bench/` folder (`bench/cuda/*.cu`,
//! `bench/torch/*.py`), wherever the program runs, and `nvcc`.
//!
//! The rule, in order:
//! 1. `--peers-dir DIR`, else `$REDUCE_BENCH_DIR`: that folder only (a name the user gave that
//!    does not hold the file is said, not passed over);
//! 2. `bench/` beside the executable (a program copied to another machine with its `bench/`);
//! 3. `bench/` in the current directory (the repository's root);
//! 4. `bench/` of the repository the program was built in (`CARGO_MANIFEST_DIR/../bench`), last.
//!
//! The first folder that holds the file wins; when none does, the error says where it looked
//! and how to name the folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable that names the peers' folder when `--peers-dir` is not given.
pub const DIR_ENV: &str = "REDUCE_BENCH_DIR";

/// Where this program was built: its repository's `bench/`.
fn build_time_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("bench")
}

/// The folders the peers' sources are looked for in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerDirs {
    /// Named by the user: `(folder, how it was named)`.
    Named(PathBuf, &'static str),
    /// The defaults, in order.
    Defaults(Vec<PathBuf>),
}

impl PeerDirs {
    /// The rule above from its inputs: `--peers-dir`, `$REDUCE_BENCH_DIR`, the executable's
    /// path, the current directory and the build-time folder.
    pub fn new(
        flag: Option<&Path>,
        env: Option<OsString>,
        exe: Option<&Path>,
        cwd: Option<&Path>,
        built: &Path,
    ) -> PeerDirs {
        if let Some(dir) = flag {
            return PeerDirs::Named(dir.to_path_buf(), "--peers-dir");
        }
        if let Some(dir) = env.filter(|v| !v.is_empty()) {
            return PeerDirs::Named(PathBuf::from(dir), DIR_ENV);
        }
        let mut defaults: Vec<PathBuf> = Vec::new();
        let beside = exe.and_then(Path::parent).map(|dir| dir.join("bench"));
        let here = cwd.map(|dir| dir.join("bench"));
        for dir in beside.into_iter().chain(here).chain([built.to_path_buf()]) {
            if !defaults.contains(&dir) {
                defaults.push(dir);
            }
        }
        PeerDirs::Defaults(defaults)
    }

    /// The rule for this process: `flag`, the environment, this executable, the current
    /// directory, the build-time folder.
    pub fn of_process(flag: Option<&Path>) -> PeerDirs {
        let exe = std::env::current_exe().ok();
        let cwd = std::env::current_dir().ok();
        PeerDirs::new(
            flag,
            std::env::var_os(DIR_ENV),
            exe.as_deref(),
            cwd.as_deref(),
            &build_time_dir(),
        )
    }

    /// `relative` (`torch/reduce_torch.py`) in the first folder that holds it; the error is one
    /// line that says where it looked and how to name the folder.
    pub fn find(&self, relative: &str) -> Result<PathBuf, String> {
        match self {
            PeerDirs::Named(dir, how) => {
                let path = dir.join(relative);
                if path.is_file() {
                    Ok(path)
                } else {
                    Err(format!(
                        "{relative} is not in {} (named by {how}): name the repository's bench/ folder",
                        dir.display()
                    ))
                }
            }
            PeerDirs::Defaults(dirs) => {
                if let Some(path) = dirs.iter().map(|d| d.join(relative)).find(|p| p.is_file()) {
                    return Ok(path);
                }
                let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                Err(format!(
                    "bench/{relative} not found (looked in {}): run from the repository, copy its bench/ folder beside the program, or name it with --peers-dir DIR or {DIR_ENV}",
                    looked.join(", ")
                ))
            }
        }
    }
}

/// `nvcc` on the PATH, else in `$CUDA_HOME/bin`, `$CUDA_PATH/bin` or `/usr/local/cuda/bin`
/// (where the CUDA toolkit installs it without putting it on the PATH, as on the device
/// machine); the error says where it looked.
pub fn find_nvcc() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let toolkits = ["CUDA_HOME", "CUDA_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("bin"))
        .chain([PathBuf::from("/usr/local/cuda/bin")]);
    std::env::split_paths(&path)
        .chain(toolkits)
        .map(|dir| dir.join("nvcc"))
        .find(|nvcc| nvcc.is_file())
        .ok_or_else(|| {
            "nvcc is not on the PATH (nor in $CUDA_HOME/bin or /usr/local/cuda/bin)".to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder with `files` (relative paths) in it.
    fn tree(name: &str, files: &[&str]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("reduce-rs-peers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for file in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        root
    }

    const TORCH: &str = "torch/reduce_torch.py";

    #[test]
    fn a_named_folder_wins_and_is_not_passed_over() {
        let named = tree("named", &["bench/torch/reduce_torch.py"]);
        let elsewhere = tree("named-elsewhere", &["bench/torch/reduce_torch.py"]);
        let dirs = PeerDirs::new(
            Some(&named.join("bench")),
            Some("/nowhere".into()),
            Some(&elsewhere.join("reduce-rs")),
            Some(&elsewhere),
            &elsewhere.join("bench"),
        );
        assert_eq!(dirs.find(TORCH), Ok(named.join("bench").join(TORCH)));
        // The environment variable when there is no flag.
        let env = PeerDirs::new(
            None,
            Some(named.join("bench").into()),
            None,
            None,
            &elsewhere,
        );
        assert_eq!(env.find(TORCH), Ok(named.join("bench").join(TORCH)));
        // A named folder without the file: said, with the name, not looked for elsewhere.
        let wrong = PeerDirs::new(None, Some(elsewhere.clone().into()), None, None, &named);
        let error = wrong.find(TORCH).unwrap_err();
        assert!(
            error.contains(DIR_ENV) && error.contains("is not in"),
            "{error}"
        );
        assert!(!error.contains('\n'));
        // An empty variable is no name.
        let empty = PeerDirs::new(None, Some("".into()), None, None, &named.join("bench"));
        assert_eq!(empty, PeerDirs::Defaults(vec![named.join("bench")]));
    }

    #[test]
    fn defaults_are_beside_the_program_then_here_then_where_it_was_built() {
        let beside = tree("beside", &["bin/bench/cuda/reduce_ref.cu"]);
        let here = tree(
            "here",
            &["bench/cuda/reduce_ref.cu", "bench/torch/reduce_torch.py"],
        );
        let built = tree(
            "built",
            &["bench/cuda/reduce_ref.cu", "bench/torch/allreduce_torch.py"],
        );
        let dirs = PeerDirs::new(
            None,
            None,
            Some(&beside.join("bin").join("reduce-rs")),
            Some(&here),
            &built.join("bench"),
        );
        let PeerDirs::Defaults(order) = &dirs else {
            panic!("{dirs:?}")
        };
        assert_eq!(
            order,
            &[
                beside.join("bin/bench"),
                here.join("bench"),
                built.join("bench")
            ]
        );
        assert_eq!(
            dirs.find("cuda/reduce_ref.cu"),
            Ok(beside.join("bin/bench/cuda/reduce_ref.cu"))
        );
        assert_eq!(dirs.find(TORCH), Ok(here.join("bench").join(TORCH)));
        assert_eq!(
            dirs.find("torch/allreduce_torch.py"),
            Ok(built.join("bench/torch/allreduce_torch.py"))
        );
        // Nowhere: one line naming every folder and the two ways to name one.
        let error = dirs.find("cuda/reduce_shapes.cu").unwrap_err();
        for part in ["bin/bench", "here", "built", "--peers-dir", DIR_ENV] {
            assert!(error.contains(part), "{part}: {error}");
        }
        assert!(!error.contains('\n'));
    }

    #[test]
    fn a_copied_program_without_the_repository_says_so() {
        // The build-time folder is gone (the program was copied to another machine).
        let lone = tree("lone", &[]);
        let dirs = PeerDirs::new(
            None,
            None,
            Some(&lone.join("reduce-rs")),
            Some(&lone),
            &lone.join("gone/bench"),
        );
        let error = dirs.find(TORCH).unwrap_err();
        assert!(
            error.starts_with("bench/torch/reduce_torch.py not found"),
            "{error}"
        );
        // Beside the program and here are the same folder: listed once.
        assert_eq!(
            dirs,
            PeerDirs::Defaults(vec![lone.join("bench"), lone.join("gone/bench")])
        );
    }
}
