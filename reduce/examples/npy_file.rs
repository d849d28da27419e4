//! Reduce a `.npy` file (as numpy's `np.save` writes it), read with the `npyz` crate.
//!
//! ```sh
//! python3 -c "import numpy as np; np.save('data.npy', np.arange(1e6, dtype=np.float32))"
//! cargo run --release -p reduce-rs --example npy_file -- data.npy
//! ```
//!
//! Without an argument it writes a small file of its own first.

use npyz::WriterBuilder;
use reduce_rs::Reducer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(std::env::args().nth(1))
}

/// Reduces the file at `given`, or a file of its own (and checks the results) without one.
fn run(given: Option<String>) -> Result<(), Box<dyn std::error::Error>> {
    let checked = given.is_none();
    let path = match given {
        Some(path) => std::path::PathBuf::from(path),
        None => {
            let path =
                std::env::temp_dir().join(format!("reduce-rs-example-{}.npy", std::process::id()));
            let values: Vec<f32> = (0..100_000).map(|i| (i % 1000) as f32 * 0.5).collect();
            let mut writer = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&[100, 1000])
                .writer(std::fs::File::create(&path)?)
                .begin_nd()?;
            writer.extend(values)?;
            writer.finish()?;
            path
        }
    };
    let file = npyz::NpyFile::new(std::io::BufReader::new(std::fs::File::open(&path)?))?;
    println!(
        "{}: shape {:?}, {}",
        path.display(),
        file.shape(),
        file.dtype().descr()
    );
    let data: Vec<f32> = file.into_vec()?;

    let reducer = Reducer::new()?;
    let (sum, max, mean) = (
        reducer.sum(&data)?,
        reducer.max(&data)?,
        reducer.mean(&data)?,
    );
    println!("sum {sum}, max {max:?}, mean {mean:?}");
    if checked {
        assert_eq!(sum, 24_975_000.0);
        assert_eq!(max, Some(499.5));
        std::fs::remove_file(&path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        // Not `main`: under `cargo test`, the arguments are the test harness's.
        super::run(None).unwrap();
    }
}
