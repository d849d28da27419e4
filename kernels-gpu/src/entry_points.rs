//! The simulator's lookup of every kernel by its entry point's name, over every family: the
//! versions, the shape kernels, the reproducible kernels and the shard kernels (the GPU finds
//! the same names in the PTX).

use crate::params::SimEntry;

/// The simulator's entry point called `name`: a version's, a shape kernel's, a reproducible
/// kernel's or a shard kernel's.
pub fn sim_entry(name: &str) -> Option<SimEntry> {
    crate::versions::sim_entry(name)
        .or_else(|| crate::shapes::sim_entry(name))
        .or_else(|| crate::reproducible::sim_entry(name))
        .or_else(|| crate::shards::sim_entry(name))
}
