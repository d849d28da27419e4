//! The library's errors: one enum, each variant a sentence a user can act on.

use crate::element::DType;
use crate::op::OpKind;
use cudarc::driver::DriverError;

/// What went wrong. Every variant's message is one line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No GPU to run on (a GPU backend was asked for, or `Reducer::new` found none and the
    /// caller asked for the GPU anyway).
    #[error("no GPU: {0}")]
    NoGpu(#[from] GpuUnavailable),

    /// A CUDA driver call failed.
    #[error("{what}: {source}")]
    Driver {
        /// What the library was doing.
        what: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// A kernel stopped on the GPU (a `trap` from a failed check, or a fault).
    #[error(
        "kernel `{kernel}` failed on the GPU: {source} (the kernels trap on an out-of-bounds access or a wrong launch shape; run the same reduction on the simulator to see where)"
    )]
    KernelFailed {
        /// The kernel's entry point (`reduce_v8_f32_sum`).
        kernel: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// The simulator found a bug in a kernel (a race, an out-of-bounds access, …).
    #[error(transparent)]
    Simulator(#[from] simt::SimError),

    /// A kernel broke a contract that spans launches (found by the simulator, which checks what
    /// a kernel leaves behind for the next launch).
    #[error("kernel `{kernel}` broke its launch contract: {what}")]
    Contract {
        /// The kernel's entry point.
        kernel: String,
        /// What it left wrong.
        what: String,
    },

    /// The version has no kernel for this element type and operation.
    #[error(
        "{version} has no {op} kernel for {dtype} (v0–v7 reduce f32, f64, i32 and u32 with sum, min and max; v8 has every type and operation)"
    )]
    Unsupported {
        /// The version's name (`v5`).
        version: &'static str,
        /// The element type asked for.
        dtype: DType,
        /// The operation asked for.
        op: OpKind,
    },

    /// No version has this name.
    #[error("unknown version `{given}`; valid: {valid}")]
    UnknownVersion {
        /// The name given.
        given: String,
        /// The names there are, as one list.
        valid: String,
    },

    /// The block size is not one the kernels are built for.
    #[error("block size {block} is not supported by {version}; use one of {valid:?}")]
    BlockSize {
        /// The version's name.
        version: &'static str,
        /// The block size asked for.
        block: u32,
        /// The block sizes the version is built for.
        valid: Vec<u32>,
    },

    /// The compiled kernel cannot run blocks this large on this GPU (its registers per thread
    /// times the block's threads exceed what one multiprocessor has).
    #[error(
        "kernel `{kernel}` runs at most {max} threads per block on this GPU ({registers} registers each); {block} were asked for"
    )]
    BlockTooLarge {
        /// The kernel's entry point.
        kernel: String,
        /// The block size asked for.
        block: u32,
        /// The most threads per block the driver launches it with.
        max: u32,
        /// Registers per thread.
        registers: u32,
    },

    /// The input needs more blocks than CUDA allows in one launch.
    #[error(
        "{len} elements need {grid} blocks of {block} threads; CUDA allows at most 2^31 - 1: use a larger block size"
    )]
    GridTooLarge {
        /// The input's length, in elements.
        len: usize,
        /// Threads per block.
        block: u32,
        /// The blocks the input would need.
        grid: u64,
    },

    /// An operation with no value for an empty input was asked to write one to the device.
    #[error(
        "the input is empty: {op} has no value to write to the device (the host methods return None)"
    )]
    Empty {
        /// The operation.
        op: OpKind,
    },

    /// A device input or output that the simulator cannot read, or that lives on another GPU.
    #[error("{0}")]
    WrongDevice(String),

    /// A device output buffer too small for the results.
    #[error("the output holds {len} values but the reduction writes {needed}")]
    OutputTooSmall {
        /// The output's length, in values.
        len: usize,
        /// The values the reduction writes.
        needed: usize,
    },

    /// The shape of a row, column or segment reduction does not fit the input.
    #[error("{0}")]
    Shape(String),

    /// The kernels could not be loaded.
    #[error("{0}")]
    Kernels(String),

    /// NCCL could not be loaded (several GPUs need it).
    #[error(transparent)]
    NcclUnavailable(#[from] NcclUnavailable),

    /// An NCCL call failed.
    #[error("{call} failed: {text} (ncclResult_t {code}; NCCL_DEBUG=WARN says more)")]
    Nccl {
        call: String,
        code: i32,
        text: String,
    },

    /// A group of devices or a rank could not be set up (environment, unique id, shards).
    #[error("{0}")]
    Devices(String),

    /// More memory than the GPU has free.
    #[error("{what} needs {needed_mib} MiB of GPU memory but {free_mib} MiB are free")]
    OutOfMemory {
        /// What needed the memory.
        what: String,
        /// How much it needed, in MiB.
        needed_mib: usize,
        /// How much the GPU had free, in MiB.
        free_mib: usize,
    },
}

/// Why there is no GPU to run on.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuUnavailable {
    /// `libcuda.so` could not be loaded: no NVIDIA driver.
    #[error("no CUDA driver on this machine (libcuda.so could not be loaded)")]
    NoDriver,
    /// The driver is there but sees no GPU.
    #[error("the CUDA driver found no GPU")]
    NoDevice,
    /// The GPU asked for is not one of the driver's.
    #[error("the CUDA driver has no GPU {ordinal} (it has {count})")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many GPUs the driver has.
        count: usize,
    },
    /// The driver failed to initialise.
    #[error("the CUDA driver failed to start: {0}")]
    Driver(DriverError),
}

/// Why NCCL could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NcclUnavailable {
    #[error(
        "NCCL not found: looked for libnccl.so.2 and libnccl.so ({why}); install NCCL 2 (the libnccl2 package, or PyPI's nvidia-nccl-cu12/cu13 with its lib/ folder on LD_LIBRARY_PATH)"
    )]
    NotFound { why: String },
    #[error("{name} has no {symbol}: {why} (NCCL 2.12 or newer is needed)")]
    MissingSymbol {
        name: &'static str,
        symbol: &'static str,
        why: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a driver error with what was being done.
pub(crate) trait DriverContext<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Driver {
            what: what(),
            source,
        })
    }
}
