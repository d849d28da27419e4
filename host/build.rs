//! Bakes the hash of the kernel sources into the host, so it can refuse PTX built from other
//! sources (xtask writes the same hash next to the PTX).

#[path = "../xtask/src/source_hash.rs"]
mod source_hash;

fn main() {
    let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels-gpu");
    let hash = source_hash::kernel_source_hash(&kernels).expect("hashing kernels-gpu sources");
    println!("cargo::rustc-env=KERNEL_SOURCE_HASH={hash}");
    println!("cargo::rerun-if-changed=../kernels-gpu");
}
