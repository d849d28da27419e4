//! The reader on files written here and by `npyz`: valid files, and every kind of bad one.

use super::npy_bytes::npy;
use super::*;
use std::path::PathBuf;

/// `bytes` written to a file of this name in a fresh temporary folder.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "reduce-rs-file-{}-{}",
        std::process::id(),
        name.replace('.', "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn error(name: &str, bytes: &[u8], dtype: Option<DType>) -> String {
    let path = file(name, bytes);
    let text = match load(&path, dtype, None) {
        Ok(loaded) => panic!("{name}: loaded {} elements: {loaded:?}", loaded.len()),
        Err(e) => format!("{e:#}"),
    };
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    text
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn a_valid_npy_loads_in_its_own_type_and_order() {
    let path = file(
        "ok.npy",
        &npy("<f4", false, "(2, 2)", &floats(&[1.0, 2.0, 3.0, 4.0])),
    );
    let loaded = load(&path, None, None).unwrap();
    assert_eq!((loaded.dtype, loaded.len()), (DType::F32, 4));
    assert_eq!(loaded.shape, [2, 2]);
    assert!(!loaded.fortran_order);
    assert_eq!(loaded.elements::<f32>(), [1.0, 2.0, 3.0, 4.0]);
    let path = file("f.npy", &npy("<i8", true, "(1,)", &7i64.to_le_bytes()));
    let loaded = load(&path, None, None).unwrap();
    assert_eq!((loaded.dtype, loaded.fortran_order), (DType::I64, true));
    assert_eq!(loaded.elements::<i64>(), [7]);
    // A 0-d array is one element; an empty one none.
    let scalar = load(
        &file("s.npy", &npy("<f8", false, "()", &2.5f64.to_le_bytes())),
        None,
        None,
    );
    assert_eq!(scalar.unwrap().elements::<f64>(), [2.5]);
    let empty = load(&file("e.npy", &npy("<u4", false, "(0,)", &[])), None, None).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.len(), 0);
}

#[test]
fn a_shape_whose_product_overflows_is_refused() {
    let data = vec![0u8; 256];
    // 2^62 f32 elements are 2^64 bytes: the byte count wrapped to 0.
    let text = error(
        "huge.npy",
        &npy("<f4", false, "(4611686018427387904,)", &data),
        None,
    );
    assert!(text.contains("4611686018427387904"), "{text}");
    // 2^32 × 2^32 elements: the element count wrapped to 0.
    let text = error(
        "square.npy",
        &npy("<f4", false, "(4294967296, 4294967296)", &data),
        None,
    );
    assert!(text.contains("4294967296"), "{text}");
    // 2^62 + 64 f32: the byte count wrapped to the 256 bytes the file holds.
    let text = error(
        "wraps.npy",
        &npy("<f4", false, "(4611686018427387968,)", &data),
        None,
    );
    assert!(text.contains("256 bytes"), "{text}");
    // A zero dimension makes no elements, but numpy refuses the shape all the same when the
    // other dimensions overflow (the fuzzer's find: `(4295, 96794, 96729794, 967296, 0)`).
    for shape in ["(4294967296, 4294967296, 0)", "(0, 4294967296, 4294967296)"] {
        let text = error("zero.npy", &npy("<f4", false, shape, &[]), None);
        assert!(text.contains("2^64 or more"), "{shape}: {text}");
    }
}

#[test]
fn a_header_that_promises_fewer_or_more_elements_than_the_file_holds_is_refused() {
    let text = error(
        "long.npy",
        &npy("<f4", false, "(3,)", &floats(&[1.0, 2.0, 3.0, 4.0])),
        None,
    );
    assert!(
        text.contains("3 × f32") && text.contains("16 bytes"),
        "{text}"
    );
    assert!(text.contains("more"), "{text}");
    let text = error(
        "short.npy",
        &npy("<f4", false, "(5,)", &floats(&[1.0, 2.0, 3.0, 4.0])),
        None,
    );
    assert!(
        text.contains("truncated") && text.contains("5 × f32"),
        "{text}"
    );
    let text = error("ragged.npy", &npy("<f8", false, "(1,)", &[0u8; 9]), None);
    assert!(text.contains("9 bytes"), "{text}");
}

#[test]
fn raw_files_must_hold_whole_elements() {
    let text = error("seven.bin", &[0u8; 7], Some(DType::F32));
    assert!(text.contains("7 bytes") && text.contains("f32"), "{text}");
    let text = error("empty.bin", &[], Some(DType::F64));
    assert!(text.contains("empty"), "{text}");
    let text = error("untyped.bin", &[0u8; 8], None);
    assert!(text.contains("--dtype"), "{text}");
    let loaded = load(
        &file("two.bin", &floats(&[1.5, -2.0])),
        Some(DType::F32),
        None,
    )
    .unwrap();
    assert_eq!(loaded.elements::<f32>(), [1.5, -2.0]);
}

#[test]
fn malformed_headers_are_one_line_errors() {
    for (name, bytes, says) in [
        ("big.npy", npy(">f4", false, "(1,)", &[0; 4]), "big-endian"),
        (
            "bool.npy",
            npy("|b1", false, "(1,)", &[0; 1]),
            "not supported",
        ),
        ("negative.npy", npy("<f4", false, "(-1,)", &[]), "shape"),
        ("nan.npy", npy("<f4", false, "('a',)", &[]), "shape"),
        (
            "magic.npy",
            b"\x93NUMPX\x01\x00".to_vec(),
            "not a .npy file",
        ),
        (
            "cut.npy",
            npy("<f4", false, "(1,)", &[])[..20].to_vec(),
            "npy",
        ),
        (
            "version.npy",
            {
                let mut b = npy("<f4", false, "(1,)", &[0; 4]);
                b[6] = 9;
                b
            },
            "version",
        ),
    ] {
        let text = error(name, &bytes, None);
        assert!(text.contains(says), "{name}: {text}");
    }
    // A structured dtype: `descr` is a list of fields, not a string.
    let plain = npy("X", false, "(1,)", &[0; 4]);
    let at = plain.windows(3).position(|w| w == b"'X'").unwrap();
    let records = [&plain[..at], b"[('a', '<f4')]".as_slice(), &plain[at + 3..]].concat();
    let text = error("records.npy", &records, None);
    assert!(text.contains("structured"), "{text}");
}

#[test]
fn files_written_by_npyz_read_back_the_same() {
    use npyz::WriterBuilder;
    let values: Vec<f64> = (0..12).map(|i| f64::from(i) - 5.5).collect();
    for (shape, order) in [
        (vec![12u64], npyz::Order::C),
        (vec![3, 4], npyz::Order::C),
        (vec![2, 3, 2], npyz::Order::Fortran),
        (vec![], npyz::Order::C),
    ] {
        let count: u64 = shape.iter().product();
        let mut bytes = Vec::new();
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .order(order)
            .writer(&mut bytes)
            .begin_nd()
            .unwrap();
        writer
            .extend(values[..count as usize].iter().copied())
            .unwrap();
        writer.finish().unwrap();
        let loaded = parse(&bytes, None, true).unwrap();
        assert_eq!(loaded.shape, shape);
        assert_eq!(loaded.fortran_order, order == npyz::Order::Fortran);
        assert_eq!(loaded.elements::<f64>(), values[..count as usize]);
    }
}

#[test]
fn hostile_headers_cost_nothing_but_an_error() {
    // A header length past the end of the file, nesting a recursive parser would overflow
    // the stack on, duplicate and unknown keys, a dimension of 2^64.
    let mut long = npy("<f4", false, "(1,)", &[0; 4]);
    long[8..10].copy_from_slice(&u16::MAX.to_le_bytes());
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    v2.extend_from_slice(&u32::MAX.to_le_bytes());
    let deep = npy(
        "<f4",
        false,
        &format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)),
        &[],
    );
    for (bytes, says) in [
        (long, "truncated"),
        (v2, "truncated"),
        (deep, "nested"),
        (npy("<f4', 'descr': '<f4", false, "(1,)", &[0; 4]), "twice"),
        (
            npy("<f4', 'extra': '1", false, "(1,)", &[0; 4]),
            "unknown key",
        ),
        (npy("<f4", false, "(18446744073709551616,)", &[]), "2^64"),
        (b"\x93NUMPY".to_vec(), "truncated"),
    ] {
        let text = parse(&bytes, None, true).unwrap_err().0;
        assert!(text.contains(says), "{says}: {text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }
    // Text from the header cannot break the error line or reach the terminal raw.
    for (descr, key) in [("<f4", "x\n\u{1b}[2Jy"), ("\u{1b}[31m>f4\r\n", "shape")] {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, '{key}': (1,)}}\n");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0; 4]);
        let text = parse(&bytes, None, true).unwrap_err().0;
        assert!(!text.chars().any(char::is_control), "{text:?}");
    }
    // The magic with --dtype: the header says the type.
    let text = parse(&npy("<f4", false, "(1,)", &[0; 4]), Some(DType::F32), false).unwrap_err();
    assert!(text.0.contains("leave out --dtype"), "{text}");
}
