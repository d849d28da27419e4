//! Uses reduce-rs as a dependency: sums a `Vec<f32>` and, where there is a GPU, a cudarc
//! `CudaSlice<f32>` filled on this program's own stream. Without a GPU it runs on the CPU
//! simulator. It checks the sums and exits with an error when one is wrong.

use reduce_rs::cudarc::driver::CudaContext;
use reduce_rs::{Reducer, gpu_available};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // "shipped": the library embeds the PTX it ships, so building it needed no nightly.
    println!(
        "reduce-rs kernels: {}",
        reduce_rs::backend::gpu::ptx::STATUS
    );

    // 1000 × (0 + 1 + … + 99): every partial sum is an integer below 2^24, exact in f32.
    let data: Vec<f32> = (0..100_000).map(|i| (i % 100) as f32).collect();
    let expected = 4_950_000.0;

    let reducer = Reducer::new()?; // the GPU if there is one, else the simulator
    let sum = reducer.sum(&data)?;
    println!(
        "Vec<f32> sum on {:?}: {sum} (expected {expected})",
        reducer.backend()
    );
    if sum != expected {
        return Err(format!("Vec<f32> sum {sum}, expected {expected}").into());
    }

    match gpu_available() {
        Err(why) => println!("CudaSlice<f32>: skipped, no GPU ({why})"),
        Ok(_) => {
            let stream = CudaContext::new(0)?.new_stream()?;
            let on_gpu = stream.clone_htod(&data)?;
            let sum = Reducer::on_stream(stream)?.sum(&on_gpu)?;
            println!("CudaSlice<f32> sum on the GPU: {sum} (expected {expected})");
            if sum != expected {
                return Err(format!("CudaSlice<f32> sum {sum}, expected {expected}").into());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_are_right() {
        super::main().unwrap();
    }
}
