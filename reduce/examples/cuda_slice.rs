//! Reduce a `CudaSlice` that your own cudarc code filled, on your own stream: no copy of the
//! input, and the sum left on the GPU for your next kernel without a synchronisation.
//!
//! ```sh
//! cargo run --release -p reduce-rs --example cuda_slice
//! ```
//!
//! Without a GPU it says so and stops (a CUDA buffer needs a GPU; see `sum_vec` for data on the
//! host, which also runs on the simulator).

use cudarc::driver::CudaContext;
use reduce_rs::ops::{ArgMax, Sum};
use reduce_rs::{Reducer, gpu_available};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if let Err(why) = gpu_available() {
        println!("no GPU here ({why}): a CudaSlice needs one; see the sum_vec example");
        return Ok(());
    }
    // Your context and stream, and data your own code put on the GPU.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let data: Vec<f32> = (0..1 << 20).map(|i| (i % 100) as f32).collect();
    let exact: u64 = (0..1u64 << 20).map(|i| i % 100).sum(); // every partial sum is exact in f32
    let on_gpu = stream.clone_htod(&data)?;

    // One Reducer for your stream; create it once and keep it.
    let reducer = Reducer::on_stream(stream.clone())?;

    // The result back on the host (this waits for the stream).
    let total = reducer.sum(&on_gpu)?;
    println!("sum = {total}");
    assert_eq!(total, exact as f32);

    // The result left on the GPU: nothing waits until you read it.
    let mut total_on_gpu = stream.alloc_zeros::<f32>(1)?;
    reducer.reduce_into(Sum, &on_gpu, &mut total_on_gpu)?;
    let best = reducer.reduce_to_device(ArgMax, &on_gpu.slice(1000..2000))?;
    let (total_back, best_back) = (stream.clone_dtoh(&total_on_gpu)?, stream.clone_dtoh(&best)?);
    println!(
        "sum on the GPU = {}, argmax of [1000, 2000) = {:?}",
        total_back[0], best_back[0]
    );
    assert_eq!(total_back[0], exact as f32);
    assert_eq!((best_back[0].index, best_back[0].value), (99, 99.0));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
