// Shared by `xtask` (which stamps the PTX it builds) and by the library's `build.rs` (which
// embeds the shipped PTX only when its stamp is the hash of the kernel sources beside it).

/// FNV-1a over the relative path and contents of every Rust file under `kernels-gpu/src` plus
/// its `Cargo.toml`, in sorted order (a document beside the kernels does not make the PTX
/// stale). Not cryptographic: it only has to notice edits.
pub fn kernel_source_hash(kernels_dir: &std::path::Path) -> std::io::Result<String> {
    fn collect(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                collect(&path, files)?;
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        Ok(())
    }
    let mut files = vec![kernels_dir.join("Cargo.toml")];
    collect(&kernels_dir.join("src"), &mut files)?;
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let relative = file
            .strip_prefix(kernels_dir)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        for byte in relative
            .bytes()
            .chain([0])
            .chain(std::fs::read(&file)?)
            .chain([0])
        {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Ok(format!("{hash:016x}"))
}
