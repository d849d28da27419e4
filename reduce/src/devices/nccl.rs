//! NCCL, loaded at run time from `libnccl.so.2`: the few calls the group logic needs.
//!
//! Why not `cudarc::nccl`: cudarc 0.19's dynamic loader looks for `libnccl.so`, `libnccl.so.13`,
//! `.12`, `.11`, `.10`, `.9` and `.1`, but never for `libnccl.so.2` — the name NCCL 2.x
//! installs itself under (the `libnccl2` package, PyPI's `nvidia-nccl-cu12/13`); `libnccl.so`
//! exists only where the development package is installed. It also panics when it finds
//! none. So this module opens `libnccl.so.2` (then `libnccl.so`) itself with `libloading`, as
//! cudarc does, and says in one line which names it looked for when there is none.
//!
//! NVLink SHARP ("NVLS", multicast objects) stays off: before the library is loaded,
//! `NCCL_NVLS_ENABLE` is set to `0` unless the environment already sets it.

use crate::error::{Error, NcclUnavailable, Result};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

/// The names tried, in order.
pub const LIBRARY_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// NCCL's `ncclResult_t`, kept as an integer (a value this code does not know stays a value).
type NcclResult = c_int;
/// `ncclComm_t`.
pub(crate) type RawComm = *mut c_void;
/// `ncclUniqueId`: 128 opaque bytes that rank 0 creates and every rank passes to its init.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId {
    pub internal: [c_char; 128],
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(…)")
    }
}

/// `ncclDataType_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum DataType {
    Uint8 = 1,
    Uint32 = 3,
    Uint64 = 5,
    Float32 = 7,
    Float64 = 8,
}

/// `ncclRedOp_t`: the one operator this code lets NCCL apply (its `min`/`max` do not follow the
/// library's NaN rules, so those are combined by the library's own kernel).
const NCCL_SUM: c_int = 0;

type GetVersion = unsafe extern "C" fn(*mut c_int) -> NcclResult;
type GetUniqueId = unsafe extern "C" fn(*mut UniqueId) -> NcclResult;
type CommInitRank = unsafe extern "C" fn(*mut RawComm, c_int, UniqueId, c_int) -> NcclResult;
type CommInitAll = unsafe extern "C" fn(*mut RawComm, c_int, *const c_int) -> NcclResult;
type CommDestroy = unsafe extern "C" fn(RawComm) -> NcclResult;
type GetErrorString = unsafe extern "C" fn(NcclResult) -> *const c_char;
type GetLastError = unsafe extern "C" fn(RawComm) -> *const c_char;
type AllReduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    RawComm,
    *mut c_void,
) -> NcclResult;
type AllGather = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    RawComm,
    *mut c_void,
) -> NcclResult;
type Group = unsafe extern "C" fn() -> NcclResult;

/// The loaded library and the entry points this crate calls.
pub struct Nccl {
    /// Which name loaded.
    pub name: &'static str,
    /// `ncclGetVersion`: 22800 for 2.28.0.
    pub version: i32,
    get_unique_id: GetUniqueId,
    comm_init_rank: CommInitRank,
    comm_init_all: CommInitAll,
    comm_destroy: CommDestroy,
    get_error_string: GetErrorString,
    get_last_error: Option<GetLastError>,
    all_reduce: AllReduce,
    all_gather: AllGather,
    group_start: Group,
    group_end: Group,
    /// Kept open for the process's lifetime (the function pointers above point into it).
    _library: libloading::Library,
}

/// NCCL, loaded once per process (or why it could not be).
pub fn nccl() -> Result<&'static Nccl, NcclUnavailable> {
    static NCCL: OnceLock<Result<Nccl, NcclUnavailable>> = OnceLock::new();
    NCCL.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Whether NCCL can be loaded, without panicking: `Ok(version)` (22800 for 2.28.0).
///
/// ```
/// match reduce_rs::devices::nccl_available() {
///     Ok(version) => println!("NCCL {version}"),
///     Err(why) => println!("{why}"),
/// }
/// ```
pub fn nccl_available() -> Result<i32, NcclUnavailable> {
    nccl().map(|n| n.version)
}

/// Sets `NCCL_NVLS_ENABLE=0` unless the environment sets it: no NVLink multicast objects.
pub(crate) fn keep_nvls_off() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // SAFETY: runs once, before this process loads NCCL (the only reader of the
            // variable here); set_var is unsound only against a concurrent getenv in another
            // thread, and the library sets it on its first use of NCCL, before it creates any
            // communicator or thread of its own.
            unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
        }
    });
}

fn load() -> Result<Nccl, NcclUnavailable> {
    keep_nvls_off();
    let mut failures = Vec::new();
    for name in LIBRARY_NAMES {
        // SAFETY: loading NCCL runs its initialisers, which only set up its own state.
        match unsafe { libloading::Library::new(name) } {
            Ok(library) => return bind(name, library),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    Err(NcclUnavailable::NotFound {
        why: failures.join("; "),
    })
}

fn bind(name: &'static str, library: libloading::Library) -> Result<Nccl, NcclUnavailable> {
    fn symbol<F: Copy>(
        library: &libloading::Library,
        name: &'static str,
        symbol: &'static str,
    ) -> Result<F, NcclUnavailable> {
        // SAFETY: each `F` below is the C signature of `symbol` in nccl.h (2.12 … 2.28).
        unsafe { library.get::<F>(symbol.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| NcclUnavailable::MissingSymbol {
                name,
                symbol,
                why: e.to_string(),
            })
    }
    let get_version: GetVersion = symbol(&library, name, "ncclGetVersion")?;
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { get_version(&mut version) };
    Ok(Nccl {
        name,
        version,
        get_unique_id: symbol(&library, name, "ncclGetUniqueId")?,
        comm_init_rank: symbol(&library, name, "ncclCommInitRank")?,
        comm_init_all: symbol(&library, name, "ncclCommInitAll")?,
        comm_destroy: symbol(&library, name, "ncclCommDestroy")?,
        get_error_string: symbol(&library, name, "ncclGetErrorString")?,
        get_last_error: symbol(&library, name, "ncclGetLastError").ok(),
        all_reduce: symbol(&library, name, "ncclAllReduce")?,
        all_gather: symbol(&library, name, "ncclAllGather")?,
        group_start: symbol(&library, name, "ncclGroupStart")?,
        group_end: symbol(&library, name, "ncclGroupEnd")?,
        _library: library,
    })
}

/// `2.28.0` for 22800.
pub fn version_string(version: i32) -> String {
    // Since 2.9: major * 10000 + minor * 100 + patch.
    format!(
        "{}.{}.{}",
        version / 10000,
        (version / 100) % 100,
        version % 100
    )
}

impl Nccl {
    /// `NCCL 2.28.0 (libnccl.so.2)`.
    pub fn describe(&self) -> String {
        format!("NCCL {} ({})", version_string(self.version), self.name)
    }

    /// An [`Error::Nccl`] for `code` returned by `call`, with NCCL's own words.
    fn check(&self, code: NcclResult, call: &str, comm: Option<RawComm>) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: returns a static string for any code.
        let text = unsafe { CStr::from_ptr((self.get_error_string)(code)) }
            .to_string_lossy()
            .into_owned();
        let last = match (self.get_last_error, comm) {
            // SAFETY: the communicator is alive; returns a string NCCL owns.
            (Some(get), Some(comm)) => {
                let ptr = unsafe { get(comm) };
                (!ptr.is_null())
                    .then(|| {
                        unsafe { CStr::from_ptr(ptr) }
                            .to_string_lossy()
                            .into_owned()
                    })
                    .filter(|s| !s.is_empty())
            }
            _ => None,
        };
        Err(Error::Nccl {
            call: call.to_string(),
            code,
            text: match last {
                Some(last) => format!("{text}: {last}"),
                None => text,
            },
        })
    }

    /// A new unique id (rank 0 makes it; every rank passes it to [`Nccl::init_rank`]).
    pub fn unique_id(&self) -> Result<UniqueId> {
        let mut id = UniqueId { internal: [0; 128] };
        // SAFETY: writes the 128-byte id.
        let code = unsafe { (self.get_unique_id)(&mut id) };
        self.check(code, "ncclGetUniqueId", None)?;
        Ok(id)
    }

    /// `ncclCommInitRank`, on the CUDA device current in this thread. Blocks until every rank
    /// of the world has called it.
    pub(crate) fn init_rank(&self, world: usize, id: UniqueId, rank: usize) -> Result<RawComm> {
        let mut comm: RawComm = std::ptr::null_mut();
        // SAFETY: writes one communicator handle.
        let code = unsafe { (self.comm_init_rank)(&mut comm, world as c_int, id, rank as c_int) };
        self.check(code, "ncclCommInitRank", None)?;
        Ok(comm)
    }

    /// `ncclCommInitAll`: one communicator per device of `ordinals`, rank `k` on `ordinals[k]`.
    pub(crate) fn init_all(&self, ordinals: &[usize]) -> Result<Vec<RawComm>> {
        let mut comms: Vec<RawComm> = vec![std::ptr::null_mut(); ordinals.len()];
        let devices: Vec<c_int> = ordinals.iter().map(|&o| o as c_int).collect();
        // SAFETY: `comms` and `devices` hold `ordinals.len()` entries each.
        let code = unsafe {
            (self.comm_init_all)(comms.as_mut_ptr(), devices.len() as c_int, devices.as_ptr())
        };
        self.check(code, "ncclCommInitAll", None)?;
        Ok(comms)
    }

    /// `ncclCommDestroy` (after the work enqueued on it completed).
    pub(crate) fn destroy(&self, comm: RawComm) {
        // SAFETY: `comm` was made by init and is destroyed once (its owner's Drop).
        unsafe { (self.comm_destroy)(comm) };
    }

    /// `ncclGroupStart`.
    pub(crate) fn group_start(&self) -> Result<()> {
        // SAFETY: no arguments.
        let code = unsafe { (self.group_start)() };
        self.check(code, "ncclGroupStart", None)
    }

    /// `ncclGroupEnd`: launches what was enqueued since the matching start.
    pub(crate) fn group_end(&self) -> Result<()> {
        // SAFETY: no arguments.
        let code = unsafe { (self.group_end)() };
        self.check(code, "ncclGroupEnd", None)
    }

    /// `ncclAllReduce` with `ncclSum` of `count` values of `dtype`, enqueued on `stream`.
    ///
    /// # Safety
    /// `send` and `recv` hold `count` values of `dtype` on `comm`'s device, and stay alive until
    /// `stream` has run the collective.
    pub(crate) unsafe fn all_reduce_sum(
        &self,
        (send, recv): (u64, u64),
        count: usize,
        dtype: DataType,
        comm: RawComm,
        stream: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            (self.all_reduce)(
                send as *const c_void,
                recv as *mut c_void,
                count,
                dtype as c_int,
                NCCL_SUM,
                comm,
                stream,
            )
        };
        self.check(code, "ncclAllReduce", Some(comm))
    }

    /// `ncclAllGather` of `count` values of `dtype` from every rank, enqueued on `stream`.
    ///
    /// # Safety
    /// `send` holds `count` values of `dtype` and `recv` `count × ranks` on `comm`'s device,
    /// both alive until `stream` has run the collective.
    pub(crate) unsafe fn all_gather(
        &self,
        (send, recv): (u64, u64),
        count: usize,
        dtype: DataType,
        comm: RawComm,
        stream: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let code = unsafe {
            (self.all_gather)(
                send as *const c_void,
                recv as *mut c_void,
                count,
                dtype as c_int,
                comm,
                stream,
            )
        };
        self.check(code, "ncclAllGather", Some(comm))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_nccl_prints_them() {
        assert_eq!(version_string(22800), "2.28.0");
        assert_eq!(version_string(21903), "2.19.3");
    }

    #[test]
    fn a_missing_library_is_an_error_naming_it_not_a_panic() {
        match nccl_available() {
            Ok(version) => assert!(version >= 20000),
            Err(why) => assert!(why.to_string().contains("libnccl.so.2"), "{why}"),
        }
    }
}
