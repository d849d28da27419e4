//! Sum (and more) of your own `Vec`, on the GPU if there is one, else on the CPU simulator.
//!
//! ```sh
//! cargo run --release -p reduce-rs --example sum_vec
//! ```

use reduce_rs::{BackendInfo, Reducer};

fn main() -> Result<(), reduce_rs::Error> {
    let reducer = Reducer::new()?;
    match reducer.backend() {
        BackendInfo::Gpu { name, .. } => println!("reducing on {name}"),
        BackendInfo::Simulator { .. } => println!("no GPU here: reducing on the CPU simulator"),
    }

    let data: Vec<f32> = (0..1_000_000)
        .map(|i| ((i % 1000) as f32 - 499.5) / 1000.0)
        .collect();
    let sum = reducer.sum(&data)?;
    let max = reducer.max(&data)?;
    let (at, _) = reducer.argmin(&data)?.expect("the data is not empty");
    let mean = reducer.mean(&data)?;
    println!("sum {sum}, max {max:?}, first minimum at {at}, mean {mean:?}");

    assert!(sum.abs() < 1e-2, "the data sums to 0");
    assert_eq!(max, Some(0.4995));
    assert_eq!(at, 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
