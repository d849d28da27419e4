//! The versions of the series, as the library names them.

use crate::element::DType;
use crate::error::Error;
use crate::op::OpKind;
use kernels_gpu::policy::VersionInfo;
use std::fmt;

/// One version of the reduction series (v0 … v8), as declared in `kernels-gpu`.
///
/// The library reduces with [`Version::fastest`] (v8) unless told otherwise; every version can
/// be asked for by name, so the teaching series is one call away:
///
/// ```
/// use reduce_rs::{Reducer, Version};
/// let v3 = Version::find("v3")?;
/// assert_eq!(v3.slug(), "add-during-load");
/// let reducer = Reducer::simulator().with_version(v3);
/// assert_eq!(reducer.sum(&[1.0f32, 2.0, 3.0])?, 6.0);
/// # Ok::<(), reduce_rs::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Version(&'static VersionInfo);

impl PartialEq for Version {
    fn eq(&self, other: &Version) -> bool {
        self.0.index == other.0.index
    }
}
impl Eq for Version {}

impl Version {
    /// Every version, in order.
    ///
    /// ```
    /// assert_eq!(reduce_rs::Version::all().count(), 9);
    /// ```
    pub fn all() -> impl Iterator<Item = Version> {
        kernels_gpu::VERSIONS.iter().map(Version)
    }

    /// The library's default: the fastest version, which also carries every operation and type.
    ///
    /// ```
    /// assert_eq!(reduce_rs::Version::fastest().name(), "v8");
    /// ```
    pub fn fastest() -> Version {
        Version(&kernels_gpu::VERSIONS[kernels_gpu::VERSIONS.len() - 1])
    }

    /// The version called `name`: `v5`, `5`, `V5` or its technique (`complete-unroll`,
    /// `complete_unroll`), in any case.
    ///
    /// ```
    /// use reduce_rs::Version;
    /// assert_eq!(Version::find("Unroll_Last_Warp")?.name(), "v4");
    /// assert!(Version::find("v9").is_err());
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn find(name: &str) -> Result<Version, Error> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Version::all()
            .find(|v| wanted == v.name() || wanted == v.0.index.to_string() || wanted == v.slug())
            .ok_or_else(|| Error::UnknownVersion {
                given: name.to_string(),
                valid: Version::all()
                    .map(|v| format!("{} ({})", v.name(), v.slug()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// `v0` … `v8`.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The technique's short name (`add-during-load`).
    pub fn slug(self) -> &'static str {
        self.0.slug
    }

    /// What the version does, in a line.
    pub fn technique(self) -> &'static str {
        self.0.technique
    }

    /// Everything `kernels-gpu` declares about it: launch grid, origin, operator set.
    pub fn info(self) -> &'static VersionInfo {
        self.0
    }

    /// Whether this version is built for `dtype` and `op` (v0–v7: `f32 f64 i32 u32` × `sum min
    /// max`; v8: every type and operation).
    ///
    /// ```
    /// use reduce_rs::{DType, OpKind, Version};
    /// assert!(Version::fastest().supports(DType::Bf16, OpKind::ArgMax));
    /// assert!(!Version::find("v3")?.supports(DType::Bf16, OpKind::Sum));
    /// # Ok::<(), reduce_rs::Error>(())
    /// ```
    pub fn supports(self, dtype: DType, op: OpKind) -> bool {
        self.0.ops.supports(dtype.name(), op.name())
    }

    /// Threads per block when none is chosen, for an input of `len` elements (tuned on the H100).
    pub fn tuned_block(self, len: usize) -> u32 {
        self.0.tuned_block.for_len(len)
    }
}

impl fmt::Debug for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Version({})", self.name())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
