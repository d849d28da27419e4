//! Tests of the simulator with hand-written kernels: plain closures that call simt's device
//! functions and reach memory through the views in [`kernel`], as kernels-gpu's device module
//! does. Each detection has a deliberately broken kernel and, next to it, the corrected one.

mod barriers;
mod correct;
mod global;
mod kernel;
mod lifecycle;
mod shared;
mod warps;
