//! The program as a newcomer meets it: `help`, `--version`, the refusals of wrong values, the
//! notes on the simulator, the `all` table and `list`, run as a separate process (on the
//! simulator, so anywhere).

#[path = "../src/file/npy_bytes.rs"]
mod npy_bytes;

use npy_bytes::npy;
use reduce_rs::{GpuUnavailable, gpu_available};
use std::process::{Command, Output};

fn reduce_rs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reduce-rs"))
        .args(args)
        .env("COLUMNS", "80")
        .env_remove("REDUCE_PTX_DIR")
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn notes(output: &Output) -> Vec<String> {
    stderr(output)
        .lines()
        .filter(|l| l.starts_with("note:"))
        .map(String::from)
        .collect()
}

#[test]
fn help_is_a_command_and_fits_the_terminal() {
    for word in ["help", "HELP"] {
        let output = reduce_rs(&[word]);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(text.contains("Usage: reduce-rs"), "{text}");
        for option in ["--dtype", "--op", "--backend", "--yes"] {
            let described = text
                .lines()
                .skip_while(|l| !l.trim_start().starts_with(option))
                .nth(1)
                .is_some_and(|l| !l.trim().is_empty());
            assert!(described, "{option} has no description:\n{text}");
        }
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "wider than 80: `{line}`");
        }
    }
}

#[test]
fn version_prints_the_name_and_version() {
    let output = reduce_rs(&["--version"]);
    assert!(output.status.success());
    assert_eq!(
        stdout(&output).trim(),
        format!("reduce-rs {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_words_list_every_command_and_version() {
    let output = reduce_rs(&["v9"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    for word in [
        "list",
        "all",
        "bench",
        "help",
        "v0 (baseline)",
        "v8 (single-pass)",
    ] {
        assert!(text.contains(word), "{word} missing:\n{text}");
    }
}

#[test]
fn negative_and_too_large_numbers_say_so() {
    for args in [
        ["v5", "--n", "-1"],
        ["v5", "--repeat", "-3"],
        ["v5", "--warmup", "-1"],
        ["v5", "--seed", "-1"],
    ] {
        let output = reduce_rs(&args);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(text.contains("must be a non-negative"), "{args:?}: {text}");
        assert!(!text.contains("-- -"), "{args:?}: {text}");
    }
    let text = stderr(&reduce_rs(&["v5", "--n", "2^64"]));
    assert!(text.contains("too large"), "{text}");
}

#[test]
fn words_take_any_case() {
    assert!(reduce_rs(&["LIST"]).status.success());
    let output = reduce_rs(&[
        "V5",
        "--backend",
        "SIM",
        "--n",
        "1K",
        "--dtype",
        "F64",
        "--op",
        "Max",
        "--pattern",
        "Formula",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("1024 × f64 (formula"));
}

#[test]
fn the_simulator_names_the_options_it_ignores_in_one_note() {
    let output = reduce_rs(&[
        "v5",
        "--backend",
        "sim",
        "--n",
        "1000",
        "--repeat",
        "5",
        "--warmup",
        "1",
        "--ptx-dir",
        "nowhere",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        notes(&output),
        [
            "note: --repeat, --warmup and --ptx-dir are ignored: the simulator neither times runs nor loads PTX"
        ]
    );
    let quiet = reduce_rs(&["v5", "--backend", "sim", "--n", "1000"]);
    assert!(notes(&quiet).is_empty(), "{:?}", notes(&quiet));
}

#[test]
fn without_a_driver_one_note_says_why_and_what_changes() {
    match gpu_available() {
        Err(GpuUnavailable::NoDriver | GpuUnavailable::NoDevice) => {}
        _ => return eprintln!("a GPU is there: the fallback note does not apply"),
    }
    let output = reduce_rs(&["v8"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let notes = notes(&output);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("running on the CPU simulator") && notes[0].contains("2^20"),
        "{notes:?}"
    );
    let sized = reduce_rs(&["v8", "--n", "1000"]);
    assert_eq!(self::notes(&sized).len(), 1);
    assert!(!self::notes(&sized)[0].contains("2^20"));
}

#[test]
fn all_shows_each_versions_value() {
    // 1000 formula elements: 0 - 500 … 999 - 500, which sum to -500 exactly.
    let output = reduce_rs(&[
        "all",
        "--backend",
        "sim",
        "--n",
        "1000",
        "--pattern",
        "formula",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let header = text.lines().find(|l| l.starts_with("ver ")).unwrap();
    assert!(header.contains("value"), "{header}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('v') && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
        .collect();
    assert_eq!(rows.len(), 9, "{text}");
    for row in rows {
        assert!(row.contains("-500.0") && row.ends_with("PASS"), "{row}");
    }
}

#[test]
fn long_simulator_runs_are_refused_before_they_start() {
    // About 20 minutes by the estimate: refused at once, with the estimate and a size that fits.
    let started = std::time::Instant::now();
    let output = reduce_rs(&["all", "--backend", "sim", "--n", "2^28"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains("would take the simulator about") && text.contains("--yes"),
        "{text}"
    );
    assert!(text.contains("smaller --n (2^"), "{text}");
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn list_fits_the_terminal() {
    let output = reduce_rs(&["list"]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.contains("v8  single-pass"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: `{line}`");
    }
}

#[test]
fn devices_split_the_input_and_check_the_result() {
    for (op, dtype) in [
        ("argmax", "f32"),
        ("sum", "i64"),
        ("mean", "bf16"),
        ("min", "u32"),
    ] {
        let output = reduce_rs(&[
            "v8",
            "--devices",
            "3",
            "--backend",
            "sim",
            "--n",
            "10007",
            "--op",
            op,
            "--dtype",
            dtype,
        ]);
        let text = stdout(&output);
        assert!(
            output.status.success(),
            "{op} {dtype}: {text}{}",
            stderr(&output)
        );
        assert!(
            text.contains("split    10007 elements over 3 simulated devices: 3336 + 3336 + 3335"),
            "{text}"
        );
        assert!(text.contains(": PASS"), "{text}");
        assert!(text.contains("the same bits on every device"), "{text}");
    }
    // The reproducible mode: 1 and 2 (and 3) devices give the same bits.
    for dtype in ["f32", "f64", "bf16"] {
        let output = reduce_rs(&[
            "v8",
            "--devices",
            "3",
            "--backend",
            "sim",
            "--n",
            "20011",
            "--dtype",
            dtype,
            "--reproducible",
        ]);
        let text = stdout(&output);
        assert!(
            output.status.success(),
            "{dtype}: {text}{}",
            stderr(&output)
        );
        assert!(
            text.contains("the same bits as one device's reproducible sum of the whole input"),
            "{text}"
        );
    }
    let refused = reduce_rs(&["v5", "--devices", "2", "--backend", "sim"]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("reduce-rs v8 --devices"));
}

#[test]
fn several_gpus_without_nccl_name_the_library_in_one_line() {
    if gpu_available().is_err() || reduce_rs::devices::nccl_available().is_ok() {
        return; // needs a GPU machine without NCCL
    }
    let output = reduce_rs(&["v8", "--devices", "2", "--backend", "gpu", "--n", "1000"]);
    assert!(!output.status.success());
    let text = stderr(&output);
    assert!(text.contains("libnccl.so.2"), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
}

/// `bytes` as a file `name` in a fresh temporary folder of this test.
fn temp_file(test: &str, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("reduce-rs-cli-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn files_whose_header_lies_about_the_shape_are_refused_in_one_line() {
    let data = vec![0u8; 256];
    for (name, bytes, dtype, says) in [
        // 2^62 f32: the byte count wrapped to 0, and the file was read as empty.
        (
            "huge.npy",
            npy("<f4", false, "(4611686018427387904,)", &data),
            None,
            "4611686018427387904",
        ),
        // 2^32 × 2^32: the element count wrapped to 0.
        (
            "square.npy",
            npy("<f4", false, "(4294967296, 4294967296)", &data),
            None,
            "4294967296",
        ),
        // 2^62 + 64 f32: the byte count wrapped to the 256 bytes the file holds.
        (
            "wraps.npy",
            npy("<f4", false, "(4611686018427387968,)", &data),
            None,
            "256 bytes",
        ),
        // 2^40 f32: 4 TiB the reader tried to allocate.
        (
            "tera.npy",
            npy("<f4", false, "(1099511627776,)", &data),
            None,
            "1099511627776",
        ),
        // Fewer elements than the file holds.
        ("short.npy", npy("<f4", false, "(3,)", &data), None, "more"),
        ("seven.bin", vec![0u8; 7], Some("f32"), "7 bytes"),
        ("empty.bin", Vec::new(), Some("f32"), "empty"),
    ] {
        let path = temp_file("lies", name, &bytes);
        let path = path.to_str().unwrap();
        let mut args = vec!["v8", "--backend", "sim", "--input", path];
        if let Some(dtype) = dtype {
            args.extend(["--dtype", dtype]);
        }
        let output = reduce_rs(&args);
        let text = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{name}: {text}{}",
            stdout(&output)
        );
        assert!(
            !stdout(&output).contains("PASS"),
            "{name}: {}",
            stdout(&output)
        );
        let errors: Vec<&str> = text.lines().filter(|l| !l.starts_with("note:")).collect();
        assert_eq!(errors.len(), 1, "{name}: {text}");
        assert!(
            errors[0].starts_with("error: ") && errors[0].contains(path),
            "{name}: {text}"
        );
        assert!(errors[0].contains(says), "{name}: `{says}` not in {text}");
    }
}

#[test]
fn a_valid_file_is_reduced() {
    let data: Vec<u8> = (1..=6).flat_map(|v: i32| v.to_le_bytes()).collect();
    let npy_path = temp_file("valid", "m.npy", &npy("<i4", false, "(2, 3)", &data));
    let output = reduce_rs(&[
        "v8",
        "--backend",
        "sim",
        "--input",
        npy_path.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("PASS"), "{}", stdout(&output));
    let bin = temp_file("valid", "m.bin", &data);
    let output = reduce_rs(&[
        "v8",
        "--backend",
        "sim",
        "--input",
        bin.to_str().unwrap(),
        "--dtype",
        "i32",
        "--op",
        "max",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn commands_have_their_own_options_and_refuse_the_others_in_one_line() {
    // `run v5` is `v5`.
    let args = ["--backend", "sim", "--n", "1000", "--pattern", "formula"];
    let bare = reduce_rs(&[&["v5"][..], &args].concat());
    let run = reduce_rs(&[&["run", "v5"][..], &args].concat());
    assert!(run.status.success(), "{}", stderr(&run));
    let result = |o: &Output| {
        stdout(o)
            .lines()
            .find(|l| l.trim_start().starts_with("result"))
            .map(String::from)
    };
    assert_eq!(result(&bare), result(&run));
    assert!(result(&run).is_some_and(|l| l.contains("PASS")));
    // Each command's help, within the terminal.
    for (command, option) in [
        ("bench", "--sizes"),
        ("run", "--schedule-seed"),
        ("list", ""),
    ] {
        let output = reduce_rs(&["help", command]);
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        let text = stdout(&output);
        assert!(
            text.contains(&format!("Usage: reduce-rs {command}")),
            "{text}"
        );
        assert!(text.contains(option), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "wider than 80: `{line}`");
        }
    }
    for args in [
        &["v5", "--sizes", "2^20"][..],
        &["bench", "--n", "1000"],
        &["bench", "--op", "max"],
        &["bench", "--devices", "2", "--shapes", "table"],
        &["bench", "--ranks", "--devices", "2"],
        &["bench", "--simulate", "2"],
        &["bench", "--splits", "4"],
        &["bench", "--ranks", "--simulate", "2", "--repeat", "3"],
        &["bench", "--accuracy", "--dtypes", "f64"],
        &["v8", "--input", "data.npy", "--seed", "3"],
        &["v8", "--devices", "2", "--block", "256"],
        &["v8", "--columns"],
        &["list", "--n", "5"],
    ] {
        let output = reduce_rs(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let text = stderr(&output);
        assert_eq!(text.trim().lines().count(), 1, "{args:?}: {text}");
        assert!(text.starts_with("error: "), "{args:?}: {text}");
    }
    let zero = reduce_rs(&["bench", "--shapes", "table", "--splits", "16,0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        stderr(&zero).contains("`0` is not a split"),
        "{}",
        stderr(&zero)
    );
}

#[test]
fn bench_without_a_gpu_is_one_line_and_exit_status_2() {
    if gpu_available().is_ok() {
        return eprintln!("a GPU is there: bench runs");
    }
    let out = std::env::temp_dir().join(format!("reduce-rs-cli-bench-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for args in [
        &["bench", "--out", out][..],
        &["bench", "--shapes", "table", "--out", out],
        &["bench", "--accuracy", "--out", out],
        &["bench", "--devices", "2", "--out", out],
        &["bench", "--ranks", "--out", out],
        &["bench", "--peers-dir", "/nowhere", "--out", out],
    ] {
        let output = reduce_rs(args);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{args:?}: {text}");
        assert!(
            text.starts_with("error: ") && text.contains("GPU"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn bench_ranks_on_simulated_ranks_checks_every_call_without_timing() {
    let out = std::env::temp_dir().join(format!("reduce-rs-cli-ranks-{}", std::process::id()));
    let output = reduce_rs(&[
        "bench",
        "--ranks",
        "--simulate",
        "3",
        "--sizes",
        "1000,2^12+1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    assert!(text.contains("3 simulated ranks"), "{text}");
    for (op, per_gpu) in [
        ("kernel", 1000),
        ("sum+allreduce", 1000),
        ("argmax+gather", 4097),
    ] {
        let row = text
            .lines()
            .find(|l| l.contains(&format!(" {op} ")) && l.contains(&format!(" {per_gpu} ")))
            .unwrap_or_else(|| panic!("no {op} row at {per_gpu}:\n{text}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        // impl op gpus per_gpu n µs µs_min GB/s late check: nothing timed, every check passed.
        assert_eq!(
            cells[..5],
            [
                "reduce-rs",
                op,
                "3",
                &per_gpu.to_string(),
                &(3 * per_gpu).to_string()
            ],
            "{row}"
        );
        assert_eq!(cells[5..], ["-", "-", "-", "-", "PASS"], "{row}");
    }
    let csv = std::fs::read_to_string(out.join("ranks.csv")).expect("ranks.csv");
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "{csv}");
    assert!(
        csv.contains("reduce-rs,argmax+gather,3,4097,12291,,,,PASS"),
        "{csv}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn rows_in_the_reproducible_mode_run_the_reproducible_row_kernels() {
    for (columns, kernel) in [
        (false, "reproducible_rows_split_f32_sum"),
        (true, "reproducible_columns_f32_sum"),
    ] {
        // Two rows of 80 KB: long enough to be cut over blocks (`SPLIT_ROW_BYTES`).
        let mut args = vec![
            "v8",
            "--rows",
            "2",
            "--n",
            "40000",
            "--backend",
            "sim",
            "--reproducible",
        ];
        if columns {
            args.push("--columns");
        }
        let output = reduce_rs(&args);
        let text = stdout(&output);
        assert!(output.status.success(), "{text}{}", stderr(&output));
        assert!(text.contains(&format!("kernel {kernel}")), "{text}");
        assert!(text.contains("reproducible: f32 sum runs"), "{text}");
        assert!(text.contains("PASS"), "{text}");
    }
}

#[test]
fn the_launch_line_names_what_each_kernel_splits() {
    // 400 rows of 128 `f32`: 4 lanes of a warp a row (enough rows to keep a third of the
    // simulator's lanes busy at 4, `FEW_LANES_DIVISOR`); 2 rows of 80 KB: blocks a row; the
    // columns of 700 × 1024: bands of rows.
    for (extra, kernel, split) in [
        (
            &["--rows", "400", "--n", "51200"][..],
            "rows_warp_f32_sum",
            "4 lanes per row",
        ),
        (
            &["--rows", "2", "--n", "40000"][..],
            "rows_split_f32_sum",
            "blocks per row",
        ),
        (
            &["--rows", "700", "--n", "716800", "--columns"][..],
            "columns_f32_sum",
            "bands",
        ),
    ] {
        let mut args = vec!["v8", "--backend", "sim"];
        args.extend_from_slice(extra);
        let output = reduce_rs(&args);
        let text = stdout(&output);
        assert!(output.status.success(), "{text}{}", stderr(&output));
        let line = text
            .lines()
            .find(|line| line.contains(&format!("kernel {kernel}")))
            .unwrap_or_else(|| panic!("no launch line of {kernel}: {text}"));
        assert!(line.contains(split), "{line}");
    }
}
