//! The sweep's plan: which (type, size) cases fit in the GPU's free memory, and over how many
//! copies of its input each case rotates so that no run reads what an earlier one left in L2.

use super::rows::size_label;
use crate::element::DType;

/// A copy of the input is read again only after this many bytes of other copies, and this
/// much is written to flush L2 after small uploads.
pub use crate::timing::ROTATION_BYTES;
/// GPU memory left free: the driver, the loaded module, the second process that times CUB.
pub const MEMORY_MARGIN: usize = crate::timing::ROTATION_MARGIN;

/// The seed of the input every bench reduces (random, as `reduce-rs v5`'s default).
pub const SEED: u64 = 1;

/// One (type, size) of the sweep and the input copies it rotates over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    pub dtype: DType,
    pub n: usize,
    pub copies: usize,
    /// No run reads data an earlier run of this case may have left in L2.
    pub l2_cold: bool,
}

impl Planned {
    pub fn bytes(&self) -> usize {
        self.n * self.dtype.size()
    }

    /// Fewer than `ROTATION_BYTES` of copies: the upload may still sit in L2, so flush it.
    pub fn needs_flush(&self) -> bool {
        self.copies * self.bytes() < ROTATION_BYTES
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub cases: Vec<Planned>,
    pub skipped: Vec<String>,
}

/// Which cases fit in `free_memory` and how many copies each gets: ⌈`ROTATION_BYTES` / input⌉,
/// at most one per run (`runs`), at least one, as many as fit beside the partials, the L2
/// flush buffer and `MEMORY_MARGIN`. Cases where not even one copy fits are skipped.
pub fn plan(
    dtypes: &[DType],
    sizes: &[usize],
    runs: usize,
    block: u32,
    free_memory: usize,
) -> Plan {
    let mut plan = Plan::default();
    for &dtype in dtypes {
        for &n in sizes {
            let Some(bytes) = n.checked_mul(dtype.size()) else {
                plan.skipped
                    .push(format!("{dtype} {}: too large to address", size_label(n)));
                continue;
            };
            // v0–v2's first pass writes one partial per `block` elements, into two buffers.
            let partials = 2 * (n.div_ceil(block as usize) + 1) * dtype.size();
            let reserved = MEMORY_MARGIN + ROTATION_BYTES + partials;
            let fit = free_memory.saturating_sub(reserved) / bytes.max(1);
            if fit == 0 {
                plan.skipped.push(format!(
                    "{dtype} {}: needs {} MiB (input, partials, {} MiB margin and L2 flush) but {} MiB are free",
                    size_label(n),
                    (bytes + reserved) >> 20,
                    (MEMORY_MARGIN + ROTATION_BYTES) >> 20,
                    free_memory >> 20
                ));
                continue;
            }
            let wanted = ROTATION_BYTES.div_ceil(bytes.max(1)).min(runs).max(1);
            let copies = wanted.min(fit);
            plan.cases.push(Planned {
                dtype,
                n,
                copies,
                l2_cold: copies >= runs || copies * bytes >= ROTATION_BYTES,
            });
        }
    }
    plan
}

/// The header's account of the rotation, for the report and `bench.json`.
pub fn rotation_text() -> String {
    format!(
        "inputs rotated over K copies (≥{} MiB in all) so the 50 MB L2 cache holds none of them between runs: \
         each run reads the next copy, continuing across versions; where that would be more copies than runs, \
         one copy per run and {} MiB written after the upload to flush L2. K per size in column `copies`",
        ROTATION_BYTES >> 20,
        ROTATION_BYTES >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::options::SIZES_DEFAULT;
    use crate::size::parse_sizes;

    #[test]
    fn plan_rotates_small_inputs_and_skips_what_does_not_fit() {
        let sizes = parse_sizes(SIZES_DEFAULT).unwrap().0;
        let runs = 230;
        let plan = plan(&[DType::F32, DType::F64], &sizes, runs, 256, 80 << 30);
        assert!(plan.skipped.is_empty());
        let copies = |dtype, n| {
            plan.cases
                .iter()
                .find(|c| c.dtype == dtype && c.n == n)
                .unwrap()
                .copies
        };
        // 4 KiB: 65536 copies would make 256 MiB; one per run is enough (then L2 is flushed).
        assert_eq!(copies(DType::F32, 1 << 10), runs);
        // 4 MiB: 64 copies, 256 MiB.
        assert_eq!(copies(DType::F32, 1 << 20), 64);
        assert_eq!(copies(DType::F64, 1 << 20), 32);
        // 64 MiB: 4 copies; 1 GiB: one.
        assert_eq!(copies(DType::F32, 1 << 24), 4);
        assert_eq!(copies(DType::F32, 1 << 28), 1);
        for case in &plan.cases {
            assert!(case.l2_cold, "{case:?}");
            assert!(
                case.copies * case.bytes() >= ROTATION_BYTES || case.copies >= runs,
                "{case:?}"
            );
            assert_eq!(
                case.needs_flush(),
                case.copies * case.bytes() < ROTATION_BYTES
            );
        }

        // 3 GiB free: 2^28 f64 (2 GiB) does not fit beside the margin and the flush buffer;
        // 2^28 f32 (1 GiB) and both 2^26 do, with the one copy that 256 MiB and more need.
        let tight = super::plan(
            &[DType::F32, DType::F64],
            &[1 << 26, 1 << 28],
            runs,
            256,
            3 << 30,
        );
        assert_eq!(tight.cases.len(), 3, "{tight:?}");
        assert_eq!(tight.skipped.len(), 1);
        assert!(
            tight.skipped[0].contains("f64 2^28") && tight.skipped[0].contains("are free"),
            "{}",
            tight.skipped[0]
        );

        // Room for fewer copies than wanted: marked as not L2-cold.
        let small = super::plan(
            &[DType::F32],
            &[1 << 22],
            runs,
            256,
            MEMORY_MARGIN + ROTATION_BYTES + (40 << 20),
        );
        assert_eq!(small.cases[0].copies, 2);
        assert!(!small.cases[0].l2_cold);
    }
}
