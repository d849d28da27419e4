//! The GPU backend: loads the kernels (cubin, or PTX for the driver to compile) with `cudarc`,
//! launches every pass of a version, times it with CUDA events and reads the result back.

use crate::element::HostElement;
use crate::versions::{LaunchShape, Version};
use anyhow::{Context, Result, anyhow, bail};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, DriverError,
    LaunchConfig, PushKernelArg, sys,
};
use cudarc::nvrtc::Ptx;
use kernels_gpu::element::ReduceOp;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the GPU cannot be used; `auto` falls back to the simulator on these.
#[derive(Debug, thiserror::Error)]
pub enum GpuUnavailable {
    #[error("no CUDA driver on this machine (libcuda.so could not be loaded)")]
    NoDriver,
    #[error("the CUDA driver found no GPU")]
    NoDevice,
    #[error("the CUDA driver failed to start: {0}")]
    Driver(DriverError),
}

/// Checks for a driver and a device without panicking (cudarc panics when it cannot load
/// `libcuda.so`, so ask first).
pub fn probe() -> Result<(), GpuUnavailable> {
    // SAFETY: only tries to open the library by name; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuUnavailable::NoDriver);
    }
    match CudaContext::device_count() {
        Ok(0) => Err(GpuUnavailable::NoDevice),
        Ok(_) => Ok(()),
        Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NO_DEVICE => Err(GpuUnavailable::NoDevice),
        Err(e) => Err(GpuUnavailable::Driver(e)),
    }
}

#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub multiprocessors: u32,
    pub compute_capability: (u32, u32),
    pub max_shared_per_block: usize,
    pub free_memory: usize,
    pub total_memory: usize,
}

impl DeviceInfo {
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Which file the kernels came from.
#[derive(Clone, Debug)]
pub struct KernelSource {
    pub path: PathBuf,
    /// A cubin runs as is; PTX is compiled by the driver at load time.
    pub is_cubin: bool,
}

pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// The pre-roll kernel (kernels-gpu/src/spin.rs).
    spin: CudaFunction,
    pub info: DeviceInfo,
    pub source: KernelSource,
}

/// Repetitions for timing.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: u32,
    pub repeat: u32,
}

/// One version run on the GPU.
#[derive(Clone, Debug)]
pub struct GpuRun<T> {
    pub value: T,
    pub passes: Vec<(usize, LaunchShape)>,
    /// Median over the timed repetitions, CUDA events.
    pub first_pass_ms: f64,
    pub to_scalar_ms: f64,
    pub repeat: u32,
    /// Every repetition gave the same bits.
    pub deterministic: bool,
}

/// GPU time the pre-roll spins: more than the host needs to enqueue a timed run.
const PREROLL_NS: u64 = 50_000;

/// Where `cargo xtask build-ptx` puts the kernels, relative to the workspace root.
pub const PTX_DIR: &str = "target/ptx";

impl Gpu {
    /// Opens GPU 0 and loads the kernels from `ptx_dir` (default: `target/ptx` under the
    /// current directory, then under the workspace this host was built in).
    pub fn open(ptx_dir: Option<&Path>) -> Result<Gpu> {
        probe()?;
        let ctx = CudaContext::new(0).context("opening GPU 0")?;
        let attribute = |a| ctx.attribute(a).map(|v| v as u32);
        let (free_memory, total_memory) = ctx
            .mem_get_info()
            .context("reading the GPU's memory size")?;
        let info = DeviceInfo {
            name: ctx.name().context("reading the GPU's name")?,
            multiprocessors: attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )?,
            compute_capability: (
                attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            max_shared_per_block: attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )? as usize,
            free_memory,
            total_memory,
        };
        let (module, source) = load_kernels(&ctx, &info, ptx_dir)?;
        let stream = ctx.default_stream();
        let spin = module.load_function("spin_ns").with_context(|| {
            format!(
                "kernel `spin_ns` is not in {} (rebuild it: cargo xtask build-ptx)",
                source.path.display()
            )
        })?;
        Ok(Gpu {
            ctx,
            stream,
            module,
            spin,
            info,
            source,
        })
    }

    pub fn upload<T: HostElement>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let bytes = size_of_val(host);
        let (free, _) = self.ctx.mem_get_info()?;
        if bytes > free {
            bail!(
                "the input needs {} MiB of GPU memory but only {} MiB are free",
                bytes >> 20,
                free >> 20
            );
        }
        self.stream
            .clone_htod(host)
            .with_context(|| format!("copying {} MiB of input to the GPU", bytes >> 20))
    }

    fn function(&self, name: &str) -> Result<CudaFunction> {
        self.module.load_function(name).with_context(|| {
            format!(
                "kernel `{name}` is not in {} (rebuild it: cargo xtask build-ptx)",
                self.source.path.display()
            )
        })
    }

    /// Reduces `inputs` (copies of equal length; run `r` reads `inputs[r % len]`, so that small
    /// inputs are not timed out of the L2 cache) with `version`: every pass, timed
    /// `timing.repeat` times after `timing.warmup` untimed runs.
    pub fn reduce<T: HostElement, Op: ReduceOp<T>>(
        &self,
        version: &Version,
        block: u32,
        inputs: &[CudaSlice<T>],
        timing: Timing,
    ) -> Result<GpuRun<T>> {
        let len = inputs.first().map_or(0, CudaSlice::len);
        if inputs.is_empty() || inputs.iter().any(|i| i.len() != len) {
            bail!("reduce needs one or more inputs of the same length");
        }
        let name = version.entry_point(T::NAME, Op::NAME, block);
        let function = self.function(&name)?;
        let shared_bytes = version.shape(0, block, size_of::<T>(), 1)?.shared_bytes;
        if shared_bytes > self.info.max_shared_per_block {
            bail!(
                "{name} needs {shared_bytes} bytes of shared memory per block; this GPU allows {}",
                self.info.max_shared_per_block
            );
        }
        // The blocks that run at once, given this kernel's registers and shared memory.
        let per_sm =
            function.occupancy_max_active_blocks_per_multiprocessor(block, shared_bytes, None)?;
        let resident = u64::from(per_sm) * u64::from(self.info.multiprocessors);
        let passes = version.passes(len, block, size_of::<T>(), resident)?;
        let partials_len = passes[0].1.grid as usize;
        let mut ping = self.stream.alloc_zeros::<T>(partials_len)?;
        let mut pong = self.stream.alloc_zeros::<T>(partials_len)?;
        let mut retired = self.stream.alloc_zeros::<u32>(1)?;
        let events = [
            self.timing_event()?,
            self.timing_event()?,
            self.timing_event()?,
        ];

        let mut first_pass = Vec::new();
        let mut to_scalar = Vec::new();
        let mut value: Option<T> = None;
        let mut deterministic = true;
        for run in 0..timing.warmup + timing.repeat {
            self.preroll()?;
            events[0].record(&self.stream)?;
            for (pass, &(len, shape)) in passes.iter().enumerate() {
                let result = match pass {
                    0 => self.launch(
                        &function,
                        shape,
                        &inputs[run as usize % inputs.len()].slice(..),
                        len,
                        &mut ping,
                        &mut retired,
                    ),
                    odd if odd % 2 == 1 => self.launch(
                        &function,
                        shape,
                        &ping.slice(..len),
                        len,
                        &mut pong,
                        &mut retired,
                    ),
                    _ => self.launch(
                        &function,
                        shape,
                        &pong.slice(..len),
                        len,
                        &mut ping,
                        &mut retired,
                    ),
                };
                result.with_context(|| {
                    format!("launching {name} ({} × {})", shape.grid, shape.block)
                })?;
                if pass == 0 {
                    events[1].record(&self.stream)?;
                }
            }
            events[2].record(&self.stream)?;
            self.stream
                .synchronize()
                .map_err(|e| kernel_failed(&name, e))?;
            let output = if passes.len() % 2 == 1 { &ping } else { &pong };
            let bits = self.stream.clone_dtoh(&output.slice(0..1))?[0];
            match value {
                None => value = Some(bits),
                Some(first) => deterministic &= first.same_bits(bits),
            }
            if run >= timing.warmup {
                first_pass.push(f64::from(events[0].elapsed_ms(&events[1])?));
                to_scalar.push(f64::from(events[0].elapsed_ms(&events[2])?));
            }
        }
        Ok(GpuRun {
            value: value.ok_or_else(|| anyhow!("no run (warmup + repeat is 0)"))?,
            passes,
            first_pass_ms: median(&mut first_pass),
            to_scalar_ms: median(&mut to_scalar),
            repeat: timing.repeat,
            deterministic,
        })
    }

    /// Median time (ms) of the read-only kernel over `inputs` (rotated as in [`Self::reduce`]):
    /// the bandwidth ceiling every version is compared with. It uses v8's grid.
    pub fn read_probe<T: HostElement>(
        &self,
        inputs: &[CudaSlice<T>],
        timing: Timing,
    ) -> Result<f64> {
        let len = inputs.first().map_or(0, CudaSlice::len);
        let block = 256;
        let function = self.function(&format!("read_probe_{}_b{block}", T::NAME))?;
        let per_sm = function.occupancy_max_active_blocks_per_multiprocessor(block, 0, None)?;
        let resident = u64::from(per_sm) * u64::from(self.info.multiprocessors);
        let shape = LaunchShape {
            shared_bytes: 0,
            ..crate::versions::VERSIONS[8].shape(len, block, size_of::<T>(), resident)?
        };
        let mut sink = self.stream.alloc_zeros::<T>(1)?;
        let mut counter = self.stream.alloc_zeros::<u32>(1)?;
        let (start, end) = (self.timing_event()?, self.timing_event()?);
        let mut samples = Vec::new();
        for run in 0..timing.warmup + timing.repeat {
            let input = &inputs[run as usize % inputs.len()];
            self.preroll()?;
            start.record(&self.stream)?;
            self.launch(
                &function,
                shape,
                &input.slice(..),
                len,
                &mut sink,
                &mut counter,
            )?;
            end.record(&self.stream)?;
            self.stream
                .synchronize()
                .map_err(|e| kernel_failed("read_probe", e))?;
            if run >= timing.warmup {
                samples.push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        Ok(median(&mut samples))
    }

    /// Keeps the GPU busy for `PREROLL_NS` while the host records the start event and
    /// enqueues the timed launches behind it, so the events time the GPU and not the CPU's
    /// launch path (see kernels-gpu/src/spin.rs).
    fn preroll(&self) -> Result<()> {
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = self.stream.launch_builder(&self.spin);
        args.arg(&PREROLL_NS);
        // SAFETY: `spin_ns(nanoseconds: u64)` takes exactly this one argument and touches no
        // memory.
        unsafe { args.launch(config) }.context("launching the pre-roll kernel spin_ns")?;
        Ok(())
    }

    fn timing_event(&self) -> Result<CudaEvent> {
        Ok(self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
    }

    /// One launch with the parameter list every kernel has.
    fn launch<T: HostElement>(
        &self,
        function: &CudaFunction,
        shape: LaunchShape,
        input: &CudaView<'_, T>,
        len: usize,
        partials: &mut CudaSlice<T>,
        retired: &mut CudaSlice<u32>,
    ) -> Result<(), DriverError> {
        let partials_len = partials.len();
        let config = LaunchConfig {
            grid_dim: (shape.grid, 1, 1),
            block_dim: (shape.block, 1, 1),
            shared_mem_bytes: shape.shared_bytes as u32,
        };
        let mut args = self.stream.launch_builder(function);
        args.arg(input)
            .arg(&len)
            .arg(partials)
            .arg(&partials_len)
            .arg(retired);
        // SAFETY: every entry point of kernels-gpu takes exactly
        // (input: *const T, len: usize, partials: *mut T, partials_len: usize, retired: *mut u32)
        // with T the element type its name says (`entry_point` builds the name from T). `input`
        // holds at least `len` elements and `partials` `partials_len` ≥ gridDim elements
        // (`Version::passes` sizes both); `retired` is zeroed at allocation and the single-pass
        // kernel sets it back to 0; the dynamic shared memory is the version table's
        // `shared_bytes`, which covers the kernels' `shared_array!`s (the simulator checks that
        // at every launch, and the simulator tests launch every version through this table).
        unsafe { args.launch(config) }?;
        Ok(())
    }
}

fn kernel_failed(name: &str, error: DriverError) -> anyhow::Error {
    anyhow!(
        "kernel `{name}` failed on the GPU: {error} (a kernel that detects a bad access or launch shape stops with `trap`; \
         run the same version with --backend sim to see where)"
    )
}

fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// Finds the kernels for this GPU (`kernels_gpu.sm_XY.ptx`, the highest XY the GPU runs), checks
/// they were built from the sources this host was built with, and loads the cubin beside the
/// PTX when there is one for exactly this GPU, else the PTX.
fn load_kernels(
    ctx: &Arc<CudaContext>,
    info: &DeviceInfo,
    ptx_dir: Option<&Path>,
) -> Result<(Arc<CudaModule>, KernelSource)> {
    let dirs: Vec<PathBuf> = match ptx_dir {
        Some(dir) => vec![dir.to_path_buf()],
        None => vec![
            PathBuf::from(PTX_DIR),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(PTX_DIR),
        ],
    };
    let device = info.compute_capability.0 * 10 + info.compute_capability.1;
    let (ptx_path, arch) = match fresh_ptx(&dirs, device) {
        Ok(found) => found,
        // Under `cargo run` in the workspace (and not pointed at a directory), rebuild the
        // kernels rather than refuse: the usual case is a kernel edited since the last build.
        Err(why) if ptx_dir.is_none() && std::env::var_os("CARGO").is_some() => {
            eprintln!(
                "note: {why}; rebuilding them: cargo xtask build-ptx --arch {}",
                info.arch()
            );
            rebuild_kernels(&info.arch())?;
            fresh_ptx(&dirs, device).map_err(|why| anyhow!("{why}"))?
        }
        Err(why) => bail!("{why}"),
    };
    let cubin_path = ptx_path.with_extension("cubin");
    if arch == device && cubin_path.is_file() {
        let cubin = std::fs::read(&cubin_path)
            .with_context(|| format!("reading {}", cubin_path.display()))?;
        match ctx.load_module(Ptx::from_binary(cubin)) {
            Ok(module) => {
                return Ok((
                    module,
                    KernelSource {
                        path: cubin_path,
                        is_cubin: true,
                    },
                ));
            }
            Err(e) => eprintln!(
                "note: the driver refused {} ({e}); compiling the PTX instead",
                cubin_path.display()
            ),
        }
    }
    let ptx = std::fs::read_to_string(&ptx_path)
        .with_context(|| format!("loading PTX from {}", ptx_path.display()))?;
    eprintln!(
        "note: compiling {} KiB of PTX for {} (no cubin for it; `cargo xtask build-ptx` makes one where ptxas is installed)",
        ptx.len() / 1024,
        info.arch()
    );
    let module = ctx.load_module(Ptx::from_src(ptx)).with_context(|| {
        format!(
            "loading PTX from {}: the driver rejected it",
            ptx_path.display()
        )
    })?;
    Ok((
        module,
        KernelSource {
            path: ptx_path,
            is_cubin: false,
        },
    ))
}

/// The first of `dirs` holding kernels for `device` built from this host's kernel sources;
/// otherwise why not (missing, or stale, naming the file and what to run).
fn fresh_ptx(dirs: &[PathBuf], device: u32) -> Result<(PathBuf, u32), String> {
    let expected = env!("KERNEL_SOURCE_HASH");
    let mut stale = None;
    for dir in dirs {
        let Some((ptx, arch)) = best_ptx(dir, device) else {
            continue;
        };
        let stamp = std::fs::read_to_string(ptx.with_extension("source-hash")).unwrap_or_default();
        if stamp.trim() == expected {
            return Ok((ptx, arch));
        }
        stale.get_or_insert(ptx);
    }
    let arch = format!("sm_{device}");
    Err(match stale {
        Some(ptx) => format!(
            "{} was built from other kernel sources than this host program (run `cargo xtask build-ptx --arch {arch}`, or rebuild the host)",
            ptx.display()
        ),
        None => format!(
            "no kernels for {arch} in {} (build them: cargo xtask build-ptx --arch {arch})",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    })
}

/// Runs `cargo xtask build-ptx` in the workspace this host was built from.
fn rebuild_kernels(arch: &str) -> Result<()> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(&workspace)
        .args(["xtask", "build-ptx", "--arch", arch])
        .status()
        .with_context(|| format!("running cargo xtask build-ptx in {}", workspace.display()))?;
    if !status.success() {
        bail!("cargo xtask build-ptx failed (see above)");
    }
    Ok(())
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
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn refuses_ptx_built_from_other_sources_and_names_the_fix() {
        let dir = std::env::temp_dir().join(format!("reduce-rs-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dirs = [dir.clone()];
        let missing = fresh_ptx(&dirs, 90).unwrap_err();
        assert!(
            missing.contains("no kernels for sm_90") && missing.contains("cargo xtask build-ptx"),
            "{missing}"
        );

        std::fs::write(dir.join("kernels_gpu.sm_90.ptx"), "").unwrap();
        std::fs::write(
            dir.join("kernels_gpu.sm_90.source-hash"),
            "0000000000000000",
        )
        .unwrap();
        let stale = fresh_ptx(&dirs, 90).unwrap_err();
        assert!(
            stale.contains("other kernel sources") && stale.contains("cargo xtask build-ptx"),
            "{stale}"
        );

        std::fs::write(
            dir.join("kernels_gpu.sm_90.source-hash"),
            env!("KERNEL_SOURCE_HASH"),
        )
        .unwrap();
        assert_eq!(fresh_ptx(&dirs, 90).unwrap().1, 90);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn picks_the_newest_ptx_the_gpu_can_run() {
        let dir = std::env::temp_dir().join(format!("reduce-rs-ptx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for arch in ["sm_80", "sm_90", "sm_100"] {
            std::fs::write(dir.join(format!("kernels_gpu.{arch}.ptx")), "").unwrap();
        }
        assert_eq!(best_ptx(&dir, 90).unwrap().1, 90);
        assert_eq!(best_ptx(&dir, 89).unwrap().1, 80);
        assert!(best_ptx(&dir, 75).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
