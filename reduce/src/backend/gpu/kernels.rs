//! Finding, loading and caching kernels on the GPU.
//!
//! By default the kernels come from the PTX embedded in the library, one small module per
//! kernel, compiled by the driver the first time it is launched (see [`super::ptx`]). A
//! directory written by `cargo xtask build-ptx` can stand in for it (a cubin loads without
//! compiling; other PTX for experiments): it must have been built from the same kernel sources.

use super::ptx;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where the kernels come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelSource {
    /// The PTX embedded at build time.
    Embedded,
    /// A cubin or PTX file written by `cargo xtask build-ptx`.
    File { path: PathBuf, cubin: bool },
}

impl std::fmt::Display for KernelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelSource::Embedded => {
                write!(f, "the PTX embedded in the library ({})", ptx::STATUS)
            }
            KernelSource::File { path, .. } => write!(f, "{}", path.display()),
        }
    }
}

/// A loaded kernel and what the driver said about its occupancy.
struct Loaded {
    function: CudaFunction,
    /// Blocks per multiprocessor by (block size, dynamic shared bytes).
    occupancy: HashMap<(u32, usize), u32>,
    /// The most threads per block the driver launches it with (registers decide it).
    max_block: u32,
    registers: u32,
}

pub struct Kernels {
    ctx: Arc<CudaContext>,
    source: KernelSource,
    /// The whole module, for a file source.
    module: Option<Arc<CudaModule>>,
    loaded: Mutex<HashMap<String, Loaded>>,
}

impl Kernels {
    pub fn embedded(ctx: &Arc<CudaContext>) -> Result<Kernels> {
        if let Some(why) = ptx::STATUS.strip_prefix("missing: ") {
            return Err(Error::Kernels(format!(
                "this build of the library has no GPU kernels: {why}"
            )));
        }
        Ok(Kernels {
            ctx: ctx.clone(),
            source: KernelSource::Embedded,
            module: None,
            loaded: Mutex::new(HashMap::new()),
        })
    }

    /// The kernels in `dir` (`kernels_gpu.sm_XY.cubin` for exactly this GPU, else the newest
    /// `kernels_gpu.sm_XY.ptx` it can run), checked against this library's kernel sources.
    pub fn from_dir(ctx: &Arc<CudaContext>, dir: &Path, device_arch: u32) -> Result<Kernels> {
        let (ptx_path, arch) = best_ptx(dir, device_arch).ok_or_else(|| {
            Error::Kernels(format!(
                "no kernels for sm_{device_arch} in {} (build them: cargo xtask build-ptx --arch sm_{device_arch})",
                dir.display()
            ))
        })?;
        let stamp_path = dir.join("kernels_gpu.source-hash");
        let stamp = std::fs::read_to_string(&stamp_path).unwrap_or_default();
        if stamp.trim() != ptx::SOURCE_HASH {
            return Err(Error::Kernels(format!(
                "{} was built from other kernel sources than this program (run `cargo xtask build-ptx`, or rebuild the program)",
                ptx_path.display()
            )));
        }
        let cubin = ptx_path.with_extension("cubin");
        let (module, source) = if arch == device_arch && cubin.is_file() {
            let image = std::fs::read(&cubin)
                .map_err(|e| Error::Kernels(format!("reading {}: {e}", cubin.display())))?;
            let module = ctx
                .load_module(Ptx::from_binary(image))
                .doing(|| format!("loading {}", cubin.display()))?;
            (
                module,
                KernelSource::File {
                    path: cubin,
                    cubin: true,
                },
            )
        } else {
            let text = std::fs::read_to_string(&ptx_path)
                .map_err(|e| Error::Kernels(format!("reading {}: {e}", ptx_path.display())))?;
            let module = ctx
                .load_module(Ptx::from_src(text))
                .doing(|| format!("compiling {}", ptx_path.display()))?;
            (
                module,
                KernelSource::File {
                    path: ptx_path,
                    cubin: false,
                },
            )
        };
        Ok(Kernels {
            ctx: ctx.clone(),
            source,
            module: Some(module),
            loaded: Mutex::new(HashMap::new()),
        })
    }

    pub fn source(&self) -> &KernelSource {
        &self.source
    }

    /// The most threads per block the kernel `name` can be launched with on this GPU (its
    /// registers per thread decide it), loaded on first use.
    pub fn max_block(&self, name: &str) -> Result<u32> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        Ok(self.entry(&mut loaded, name)?.max_block)
    }

    /// The kernel `name`, loaded on first use, and how many blocks of `block` threads with
    /// `shared_bytes` of shared memory one multiprocessor runs at once.
    pub fn get(&self, name: &str, block: u32, shared_bytes: usize) -> Result<(CudaFunction, u32)> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let kernel = self.entry(&mut loaded, name)?;
        if block > kernel.max_block {
            return Err(Error::BlockTooLarge {
                kernel: name.to_string(),
                block,
                max: kernel.max_block,
                registers: kernel.registers,
            });
        }
        let per_sm = match kernel.occupancy.get(&(block, shared_bytes)) {
            Some(&blocks) => blocks,
            None => {
                let blocks = kernel
                    .function
                    .occupancy_max_active_blocks_per_multiprocessor(block, shared_bytes, None)
                    .doing(|| format!("asking the driver for the occupancy of {name}"))?;
                kernel.occupancy.insert((block, shared_bytes), blocks);
                blocks
            }
        };
        Ok((kernel.function.clone(), per_sm))
    }

    /// `name`'s entry of `loaded`, loading the kernel and reading its attributes first if it
    /// has none yet.
    fn entry<'a>(
        &self,
        loaded: &'a mut HashMap<String, Loaded>,
        name: &str,
    ) -> Result<&'a mut Loaded> {
        if !loaded.contains_key(name) {
            let function = self.load(name)?;
            let attribute = |value: std::result::Result<i32, _>, what: &str| {
                value
                    .doing(|| format!("asking the driver for {what} of {name}"))
                    .map(|v: i32| v.max(0) as u32)
            };
            let max_block = attribute(function.max_threads_per_block(), "the largest block")?;
            let registers = attribute(function.num_regs(), "the registers per thread")?;
            loaded.insert(
                name.to_string(),
                Loaded {
                    function,
                    occupancy: HashMap::new(),
                    max_block,
                    registers,
                },
            );
        }
        Ok(loaded.get_mut(name).expect("inserted above"))
    }

    fn load(&self, name: &str) -> Result<CudaFunction> {
        let missing = || {
            Error::Kernels(format!(
                "kernel `{name}` is not in {} (rebuild the kernels: cargo xtask build-ptx)",
                self.source
            ))
        };
        let module = match &self.module {
            Some(module) => module.clone(),
            None => {
                let text = ptx::extract(ptx::EMBEDDED, name).ok_or_else(missing)?;
                self.ctx
                    .load_module(Ptx::from_src(text))
                    .doing(|| format!("compiling kernel `{name}` (the driver rejected its PTX)"))?
            }
        };
        module.load_function(name).map_err(|_| missing())
    }
}

/// `kernels_gpu.sm_XY.ptx` in `dir` with the highest `XY` not above `device`.
fn best_ptx(dir: &Path, device: u32) -> Option<(PathBuf, u32)> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let arch: u32 = name
                .strip_prefix("kernels_gpu.sm_")?
                .strip_suffix(".ptx")?
                .parse()
                .ok()?;
            (arch <= device).then_some((path, arch))
        })
        .max_by_key(|(_, arch)| *arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_newest_ptx_the_gpu_can_run() {
        let dir = std::env::temp_dir().join(format!("reduce-rs-ptx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for arch in ["sm_70", "sm_90", "sm_100"] {
            std::fs::write(dir.join(format!("kernels_gpu.{arch}.ptx")), "").unwrap();
        }
        assert_eq!(best_ptx(&dir, 90).unwrap().1, 90);
        assert_eq!(best_ptx(&dir, 89).unwrap().1, 70);
        assert!(best_ptx(&dir, 61).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
