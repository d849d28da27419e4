//! # Pre-roll: keeps the GPU busy while the host enqueues a timed run
//!
//! Not a reduction. CUDA events time the GPU's queue: if the GPU is idle when the host records
//! the start event, the event fires at once and the kernel starts only when the host has
//! finished launching it, so the CPU's launch path (several µs through any driver API) is
//! counted as kernel time. The host launches this one-thread kernel, which spins for a given
//! number of nanoseconds on `%globaltimer`, just before each timed run: the start event and
//! the launches then queue behind it, and the events time the GPU alone.

use crate::device::global_timer_ns;

pub fn spin(nanoseconds: u64) {
    let start = global_timer_ns();
    while global_timer_ns().wrapping_sub(start) < nanoseconds {}
}

/// The pre-roll's entry point; launched with one thread.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn spin_ns(nanoseconds: u64) {
    spin(nanoseconds)
}
