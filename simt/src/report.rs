//! Wording shared by the error reports.

use core::fmt;

/// The kernel and block a report is about.
#[derive(Clone, Copy)]
pub(crate) struct Where<'a> {
    pub kernel: &'a str,
    pub block: u32,
}

/// "thread 16 (warp 0, lane 16)"
pub(crate) struct ThreadName(pub u32);

impl fmt::Display for ThreadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        write!(f, "thread {t} (warp {}, lane {})", t / 32, t % 32)
    }
}

/// "wrote" or "read".
pub(crate) fn verb(write: bool) -> &'static str {
    if write { "wrote" } else { "read" }
}

/// "read" or "write".
pub(crate) fn noun(write: bool) -> &'static str {
    if write { "write" } else { "read" }
}

/// Why two accesses of the same block in the same epoch are not ordered.
pub(crate) fn unordered_why(same_warp: bool) -> &'static str {
    if same_warp {
        "with no sync_threads or sync_warp between them"
    } else {
        "with no sync_threads between them (they are in different warps, so sync_warp cannot order them)"
    }
}

/// A set of thread indices (ascending) as ranges: "thread 5", "threads 0-31, 40 (33 threads)".
pub(crate) fn thread_set(threads: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &t in threads {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == t => *end = t,
            _ => ranges.push((t, t)),
        }
    }
    let list = ranges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    match threads.len() {
        1 => format!("thread {list}"),
        n => format!("threads {list} ({n} threads)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_sets_are_compressed_into_ranges() {
        assert_eq!(thread_set(&[5]), "thread 5");
        assert_eq!(
            thread_set(&[0, 1, 2, 3, 7, 9, 10]),
            "threads 0-3, 7, 9-10 (7 threads)"
        );
        assert_eq!(ThreadName(37).to_string(), "thread 37 (warp 1, lane 5)");
    }
}
