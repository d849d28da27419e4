//! How long a simulator run takes, said before it starts and shown while it runs. The CPU
//! simulator runs every thread of every block and checks every access, so a size a GPU reduces
//! in milliseconds can take the simulator minutes: the estimate comes from the element count
//! and each version's measured speed, and the progress display advances per version (the
//! library's call is one blocking call per version, so there is nothing finer to show).

use crate::run::Step;
use indicatif::{ProgressBar, ProgressStyle};
use reduce_rs::Version;
use std::time::Duration;

/// Above this estimate, a progress display is shown.
pub const SHOW_PROGRESS: Duration = Duration::from_secs(1);
/// Above this estimate, it is printed before the run starts.
pub const SAY_ESTIMATE: Duration = Duration::from_secs(60);
/// Above this estimate, the run needs `--yes`.
pub const NEEDS_YES: Duration = Duration::from_secs(10 * 60);

/// Simulated elements per second. Measured with `reduce-rs all --backend sim` at 2^20–2^24
/// (f32 and f64; sum, min, argmin) on a 2-core x86-64 machine with other builds beside it
/// (v0–v2 1.9 M/s, v3 3.6 M/s, v4–v5 4.9 M/s, v6 67 M/s, v7 76 M/s, v8 76–200 M/s), then
/// halved so that the estimate errs long: a run that ends early surprises no one. v6–v8 are
/// fast because their grid is sized to the 2 simulated SMs: few blocks, long loops per
/// thread. A version not listed here gets the slowest rate.
fn elements_per_second(version: Version) -> f64 {
    match version.name() {
        "v3" => 1.8e6,
        "v4" | "v5" => 2.4e6,
        "v6" | "v7" | "v8" => 30e6,
        _ => 0.9e6,
    }
}

/// Making a random input and the CPU reference (about 21 ns per element measured), halved
/// likewise.
const HOST_ELEMENTS_PER_SECOND: f64 = 24e6;

/// The estimated time of `versions` on `len` elements, the input and the reference included.
pub fn estimate(versions: &[Version], len: usize) -> Duration {
    let host = len as f64 / HOST_ELEMENTS_PER_SECOND;
    let simulated: f64 = versions.iter().map(|&v| estimate_one(v, len)).sum();
    Duration::from_secs_f64(host + simulated)
}

/// One version's simulated time, in seconds.
fn estimate_one(version: Version, len: usize) -> f64 {
    len as f64 / elements_per_second(version)
}

/// The largest power of two that `versions` take at most `limit` on; `None` when not even
/// 2^10 does.
pub fn largest_under(versions: &[Version], limit: Duration) -> Option<usize> {
    (10..usize::BITS - 1)
        .map(|k| 1usize << k)
        .take_while(|&n| estimate(versions, n) <= limit)
        .last()
}

/// `40 s`, `4 min`, `1.5 h`: an estimate's precision, no more.
pub fn human(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 90.0 {
        format!("{:.0} s", seconds.max(1.0))
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// The elements-per-second figure the estimate used for `version`, for the messages.
pub fn rate_text(version: Version) -> String {
    format!("{:.1} M elements/s", elements_per_second(version) / 1e6)
}

/// The progress display of a simulator run: for several versions a bar that advances as each
/// finishes, for one a spinner; both with the elapsed time against the estimate. Hidden for
/// short runs, and (by indicatif) when stderr is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
    len: usize,
}

impl Progress {
    /// `show`: whether to draw at all (the run is on the simulator).
    pub fn new(versions: &[Version], len: usize, show: bool) -> Progress {
        let total = estimate(versions, len);
        if !show || total <= SHOW_PROGRESS {
            return Progress { bar: None, len };
        }
        let template = if versions.len() > 1 {
            "{spinner} [{bar:20}] {pos}/{len} · {elapsed} of ~{prefix} · {wide_msg}"
        } else {
            "{spinner} {elapsed} of ~{prefix} · {wide_msg}"
        };
        let bar = ProgressBar::new(versions.len() as u64).with_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .progress_chars("=> "),
        );
        bar.set_prefix(human(total));
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress {
            bar: Some(bar),
            len,
        }
    }

    pub fn started(&self, step: Step) {
        let Some(bar) = &self.bar else { return };
        bar.set_message(match step {
            Step::Input => "the input and the CPU reference".to_string(),
            Step::Version(v) => format!(
                "{} {}, about {}",
                v.name(),
                v.slug(),
                human(Duration::from_secs_f64(estimate_one(v, self.len)))
            ),
        });
    }

    /// A version finished: its row is printed above the bar by `f`.
    pub fn finished(&self, f: impl FnOnce()) {
        match &self.bar {
            Some(bar) => {
                bar.suspend(f);
                bar.inc(1);
            }
            None => f(),
        }
    }

    pub fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(names: &[&str]) -> Vec<Version> {
        names.iter().map(|n| Version::find(n).unwrap()).collect()
    }

    #[test]
    fn estimates_grow_with_the_size_and_err_long() {
        let v0 = versions(&["v0"]);
        // v0 measured 2.23 s at 2^22: the estimate is longer, not absurdly so.
        let at_2_22 = estimate(&v0, 1 << 22).as_secs_f64();
        assert!((2.3..10.0).contains(&at_2_22), "{at_2_22}");
        // The case: 2^31 elements would take over half an hour.
        assert!(estimate(&v0, 1 << 31) > NEEDS_YES);
        assert!(estimate(&versions(&["v8"]), 1 << 20) < SHOW_PROGRESS);
        let all: Vec<Version> = Version::all().collect();
        assert!(estimate(&all, 1 << 23) > Duration::from_secs(33));
        assert!(estimate(&all, 1 << 16) < SHOW_PROGRESS);
    }

    #[test]
    fn largest_size_under_a_limit() {
        let v0 = versions(&["v0"]);
        let n = largest_under(&v0, SAY_ESTIMATE).unwrap();
        assert!(estimate(&v0, n) <= SAY_ESTIMATE && estimate(&v0, 2 * n) > SAY_ESTIMATE);
        assert_eq!(largest_under(&v0, Duration::ZERO), None);
    }

    #[test]
    fn durations_read_as_estimates() {
        assert_eq!(human(Duration::from_millis(300)), "1 s");
        assert_eq!(human(Duration::from_secs(40)), "40 s");
        assert_eq!(human(Duration::from_secs(35 * 60)), "35 min");
        assert_eq!(human(Duration::from_secs(5400)), "1.5 h");
    }
}
