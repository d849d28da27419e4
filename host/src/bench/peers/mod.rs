//! The bench's peers: CUB and the CUDA C++ versions (`bench/cuda`, built with `nvcc`) and
//! PyTorch (`bench/torch`, run by `python3`), timed in the same run by the same method. Each is
//! found ([`locate`]), built or started ([`cuda`], [`torch`]), and its CSV read ([`records`],
//! or reduce_ref's own rows).
//!
//! A peer that cannot run (no `nvcc`, no `python3` or no torch, its source not found, a build
//! that fails) is one `note:` line that says why and how to enable it, once per bench: it
//! leaves its column empty and never makes the bench fail. A peer that ran and got a wrong
//! result is a wrong result (see `rows::Tally`).
//!
//! Nothing here knows the bench's modes: the callers say what to run.

pub mod cuda;
pub mod locate;
pub mod records;
pub mod torch;

use crate::element::DType;
use std::process::Output;

/// A peer, as its notes name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// CUB and the CUDA C++ programs of `bench/cuda`.
    Cub,
    /// PyTorch, `bench/torch`.
    Torch,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::Cub => "CUB",
            Peer::Torch => "PyTorch",
        }
    }

    /// How to make it run (or to stop asking).
    pub fn how_to_enable(self) -> &'static str {
        match self {
            Peer::Cub => {
                "install the CUDA toolkit (nvcc, with CUB) or put its bin/ on the PATH; --no-cub leaves CUB out"
            }
            Peer::Torch => {
                "install PyTorch with CUDA for python3 (pip install torch); --no-torch leaves PyTorch out"
            }
        }
    }

    /// The one line that says this peer is not timed, why, and how to enable it.
    pub fn not_timed(self, why: &str) -> String {
        let how = if why.contains("--peers-dir") {
            // The locating error says how to name the folder already.
            String::new()
        } else {
            format!("; {}", self.how_to_enable())
        };
        format!("note: {} not timed: {why}{how}", self.name())
    }
}

/// Whether the peers' programs (`reduce_shapes`, `reduce_torch.py`) take elements of `dtype`:
/// `f32`, `f64`, `f16`, `bf16`, `i64` and `u64` (their `--dtype` lists).
pub fn peers_take(dtype: DType) -> bool {
    !matches!(dtype, DType::I32 | DType::U32)
}

/// How a peer's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerRun {
    /// Every check passed.
    Ran,
    /// It ran, and a check failed (exit status 2): its CSV is complete and says which row.
    ChecksFailed,
    /// It could not run (usage, CUDA or environment error): why, in one line.
    CouldNotRun(String),
}

impl PeerRun {
    /// What the peers' exit status and stderr say (their convention: 0 every check passed,
    /// 2 a check failed, anything else an error reported in the last line of stderr).
    /// Its warnings (lines starting `WARNING`, such as timed runs that the host enqueued
    /// later than the pre-roll lasted) are printed: they qualify its figures.
    pub fn of(output: &std::io::Result<Output>, program: &str) -> PeerRun {
        if let Ok(output) = output {
            for line in String::from_utf8_lossy(&output.stderr)
                .lines()
                .filter(|l| l.starts_with("WARNING"))
            {
                eprintln!("{program}: {line}");
            }
        }
        match output {
            Ok(output) => PeerRun::of_status(output.status.code(), &output.stderr),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                PeerRun::CouldNotRun(format!("{program} is not on the PATH"))
            }
            Err(e) => PeerRun::CouldNotRun(format!("running {program}: {e}")),
        }
    }

    /// [`PeerRun::of`] from an exit code (`None`: killed by a signal) and stderr.
    pub fn of_status(code: Option<i32>, stderr: &[u8]) -> PeerRun {
        match code {
            Some(0) => PeerRun::Ran,
            Some(2) => PeerRun::ChecksFailed,
            _ => {
                let text = String::from_utf8_lossy(stderr);
                let last = text.lines().rev().find(|l| !l.trim().is_empty());
                PeerRun::CouldNotRun(match (last, code) {
                    (Some(line), _) => line.trim().to_string(),
                    (None, Some(code)) => format!("it exited with status {code}"),
                    (None, None) => "it was killed by a signal".to_string(),
                })
            }
        }
    }
}

/// The GPU pre-roll before each of a peer's timed runs, in µs: longer than ours
/// ([`PREROLL_NS`](crate::timing::PREROLL_NS)), because one PyTorch call can take the host
/// tens of µs to enqueue on a slow host, and a run enqueued after the pre-roll ended would time
/// the host too.
pub const PEER_PREROLL_US: u32 = 200;

/// One reduction a peer times: the arguments `reduce_shapes` and `reduce_torch.py` share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerCase {
    /// `whole`, `rows`, `columns` or `segments`.
    pub kind: &'static str,
    pub op: &'static str,
    pub dtype: &'static str,
    /// The shape's arguments: `--n N`, `--shapes RxC`, `--segments S --mean-len M`.
    pub shape_args: Vec<String>,
}

impl PeerCase {
    /// The command line both programs read, appending their rows to `csv`.
    pub fn args(&self, timing: crate::timing::Timing, csv: &std::path::Path) -> Vec<OsArg> {
        let mut args: Vec<OsArg> = ["--case", self.kind, "--op", self.op, "--dtype", self.dtype]
            .iter()
            .map(|a| OsArg::from(*a))
            .collect();
        args.extend(self.shape_args.iter().map(OsArg::from));
        args.extend(
            [
                "--repeat".to_string(),
                timing.repeat.to_string(),
                "--warmup".to_string(),
                timing.warmup.to_string(),
                "--preroll-us".to_string(),
                PEER_PREROLL_US.to_string(),
                "--csv-append".to_string(),
            ]
            .map(OsArg::from),
        );
        args.push(csv.as_os_str().to_owned());
        args
    }
}

type OsArg = std::ffi::OsString;

/// Notes said once per bench: a peer that could not run for one case is not run again.
#[derive(Debug, Default)]
pub struct Notes {
    said: Vec<Peer>,
}

impl Notes {
    /// Says why `peer` is not timed, the first time only; from then on [`Notes::gave_up`]
    /// says not to run it again.
    pub fn not_timed(&mut self, peer: Peer, why: &str) {
        if !self.said.contains(&peer) {
            self.said.push(peer);
            eprintln!("{}", peer.not_timed(why));
        }
    }

    /// This peer was found unable to run.
    pub fn gave_up(&self, peer: Peer) -> bool {
        self.said.contains(&peer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_follow_the_peers_convention() {
        assert_eq!(PeerRun::of_status(Some(0), b"noise\n"), PeerRun::Ran);
        assert_eq!(
            PeerRun::of_status(Some(2), b"FAIL row 3\n"),
            PeerRun::ChecksFailed
        );
        assert_eq!(
            PeerRun::of_status(
                Some(1),
                b"Traceback ...\nerror: PyTorch is not installed: No module named 'torch'\n\n"
            ),
            PeerRun::CouldNotRun(
                "error: PyTorch is not installed: No module named 'torch'".to_string()
            )
        );
        assert_eq!(
            PeerRun::of_status(Some(127), b""),
            PeerRun::CouldNotRun("it exited with status 127".to_string())
        );
        assert_eq!(
            PeerRun::of_status(None, b""),
            PeerRun::CouldNotRun("it was killed by a signal".to_string())
        );
        let missing = std::process::Command::new("reduce-rs-no-such-program-here").output();
        assert_eq!(
            PeerRun::of(&missing, "python3"),
            PeerRun::CouldNotRun("python3 is not on the PATH".to_string())
        );
    }

    #[test]
    fn a_peer_that_cannot_run_is_one_line_with_the_way_to_enable_it() {
        let line = Peer::Torch.not_timed("python3 is not on the PATH");
        assert!(line.starts_with("note: PyTorch not timed: python3 is not on the PATH; install"));
        assert!(
            line.contains("--no-torch") && !line.contains('\n'),
            "{line}"
        );
        let line = Peer::Cub.not_timed("nvcc is not on the PATH");
        assert!(
            line.contains("CUDA toolkit") && line.contains("--no-cub"),
            "{line}"
        );
        // The locating error carries its own way out.
        let line = Peer::Cub.not_timed("bench/cuda/reduce_ref.cu not found (…): … --peers-dir DIR");
        assert!(!line.contains("CUDA toolkit"), "{line}");
        let mut notes = Notes::default();
        assert!(!notes.gave_up(Peer::Torch));
        notes.not_timed(Peer::Torch, "x");
        assert!(notes.gave_up(Peer::Torch) && !notes.gave_up(Peer::Cub));
    }

    #[test]
    fn a_case_is_one_command_line_for_both_programs() {
        let case = PeerCase {
            kind: "rows",
            op: "sum",
            dtype: "f32",
            shape_args: vec!["--shapes".into(), "8x16".into()],
        };
        let timing = crate::timing::Timing {
            warmup: 1,
            repeat: 5,
        };
        let args: Vec<String> = case
            .args(timing, std::path::Path::new("out/peers.csv"))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "--case rows --op sum --dtype f32 --shapes 8x16 --repeat 5 --warmup 1 --preroll-us 200 --csv-append out/peers.csv"
        );
    }
}
