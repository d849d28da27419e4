//! The kernels as the library carries them: the PTX built from `kernels-gpu`, embedded at build
//! time (see `build.rs`), and the small modules the driver compiles from it on demand.
//!
//! The driver compiles PTX to machine code when a module is loaded, and all of the kernels at
//! once take seconds. So each kernel is loaded as a module of its own, the first time it is
//! launched: the PTX's preamble (`.version`, `.target`, the shared-memory declaration) and that
//! one `.entry`. A program that only sums `f32` compiles one kernel.

/// The embedded PTX (empty if the kernel sources changed and could not be rebuilt).
pub const EMBEDDED: &str = include_str!(env!("REDUCE_PTX_PATH"));

/// Where the embedded PTX came from: `shipped`, `rebuilt`, or `missing: why`.
pub const STATUS: &str = env!("REDUCE_PTX_STATUS");

/// The hash of the kernel sources this library was built with (what `cargo xtask build-ptx`
/// stamps next to the PTX it writes).
pub const SOURCE_HASH: &str = env!("REDUCE_KERNEL_SOURCE_HASH");

/// A module holding only `entry` (and everything the whole PTX declares before its first
/// entry), or `None` if `ptx` has no such entry point.
pub fn extract(ptx: &str, entry: &str) -> Option<String> {
    let first_entry = ptx.find(".visible .entry ")?;
    let preamble = &ptx[..first_entry];
    let header = format!(".visible .entry {entry}(");
    let start = ptx.find(&header)?;
    // An entry's body ends at the first `}` at the start of a line.
    let end = start + ptx[start..].find("\n}")? + 2;
    let mut module = String::with_capacity(preamble.len() + end - start + 1);
    module.push_str(preamble);
    module.push_str(&ptx[start..end]);
    module.push('\n');
    Some(module)
}

/// Every entry point's name in `ptx`.
pub fn entry_names(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.match_indices(".visible .entry ")
        .filter_map(|(at, marker)| {
            let rest = &ptx[at + marker.len()..];
            rest.find('(').map(|end| &rest[..end])
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n.version 7.8\n.target sm_70\n.address_size 64\n\n\t// .globl\ta\n.extern .shared .align 16 .b8 smem[];\n\n.visible .entry a(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\t// .globl\tb\n.visible .entry b(\n)\n{\n\t{ nested }\n\tret;\n}\n";

    #[test]
    fn extracts_one_entry_with_the_preamble() {
        let b = extract(PTX, "b").unwrap();
        assert!(b.starts_with("//\n.version 7.8\n.target sm_70"));
        assert!(b.contains(".extern .shared"));
        assert!(b.contains(".visible .entry b(") && b.contains("{ nested }"));
        assert!(!b.contains(".visible .entry a("));
        assert!(b.trim_end().ends_with('}'));
        let a = extract(PTX, "a").unwrap();
        assert!(a.contains("ret;") && !a.contains("entry b"));
        assert!(extract(PTX, "c").is_none());
        assert_eq!(entry_names(PTX).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn the_embedded_ptx_has_the_library_kernels() {
        if !STATUS.starts_with("missing") {
            let names: Vec<&str> = entry_names(EMBEDDED).collect();
            assert!(names.contains(&"reduce_v8_f32_sum"), "{STATUS}");
            assert!(names.contains(&"reduce_v8_bf16_argmax"));
            let module = extract(EMBEDDED, "reduce_v8_f32_sum").unwrap();
            assert_eq!(module.matches(".visible .entry").count(), 1);
            // The several-GPU kernels, self-contained like every entry (no calls out).
            for name in ["shard_f32_sum", "shard_bf16_mean", "combine_f64_argmax"] {
                let module = extract(EMBEDDED, name).unwrap_or_else(|| panic!("{name}"));
                assert!(!module.contains("call."), "{name} calls a function");
            }
        }
    }
}
