//! What a sweep leaves on disk: `bench.csv` and `bench.json` (the header and every row) and one
//! SVG chart per type, drawn by [`chart`] from the rows' first-pass GB/s.

use super::chart::{self, Series};
use super::rows::{Header, Impl, Row, Subject};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Writes `rows` to the CSV file `path`, one line a row after the header of field names.
pub fn write_csv<R: Serialize>(path: &Path, rows: &[R]) -> Result<()> {
    let write = || -> Result<()> {
        let mut writer = csv::Writer::from_path(path)?;
        for row in rows {
            writer.serialize(row)?;
        }
        writer.flush()?;
        Ok(())
    };
    write().with_context(|| format!("writing {}", path.display()))
}

/// Writes `bench.csv`, `bench.json` and `bench_<dtype>.svg` into `out`; returns their paths.
pub fn write_results(out: &Path, header: &Header, rows: &[Row]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let csv_path = out.join("bench.csv");
    write_csv(&csv_path, rows)?;
    written.push(csv_path);

    let json_path = out.join("bench.json");
    /// The file's layout: the header first, fields in the order declared.
    #[derive(Serialize)]
    struct Results<'a> {
        header: &'a Header,
        rows: &'a [Row],
    }
    let json = serde_json::to_string_pretty(&Results { header, rows })
        .context("encoding the results as JSON")?;
    std::fs::write(&json_path, json + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    written.push(json_path);

    for dtype in &header.dtypes {
        let svg_path = out.join(format!("bench_{dtype}.svg"));
        let title = format!(
            "{dtype} sum: first-pass bandwidth against N — {}",
            header.device
        );
        chart::write_svg(&svg_path, &title, &chart_series(rows, dtype))?;
        written.push(svg_path);
    }
    Ok(written)
}

/// The chart's lines for one type: every Rust version, CUB, and the read-only ceiling (the
/// CUDA C++ rows stay in the table and files, or the chart would have twice the lines).
pub fn chart_series(rows: &[Row], dtype: &str) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for row in rows
        .iter()
        .filter(|r| r.dtype.name() == dtype && r.implementation() != Impl::Cuda)
    {
        let Some(gbps) = row.first_pass_gbps else {
            continue;
        };
        let name = match &row.subject {
            Subject::ReadOnly => "read-only (ceiling)".to_string(),
            Subject::Cub => "CUB DeviceReduce::Sum".to_string(),
            Subject::Reproducible => "reduce-rs reproducible".to_string(),
            other => other.to_string(),
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((row.n, gbps)),
            None => series.push(Series {
                name,
                points: vec![(row.n, gbps)],
                ceiling: row.subject == Subject::ReadOnly,
            }),
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::rows::fill_derived;
    use crate::bench::rows::fixtures::{synthetic_header, synthetic_order, synthetic_rows};

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("reduce-rs-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn results_are_written_as_csv_json_and_svg() {
        let dir = temp_dir("write");
        let order = synthetic_order();
        let mut rows = synthetic_rows();
        fill_derived(&mut rows, &order);
        let written = write_results(&dir, &synthetic_header(), &rows).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["bench.csv", "bench.json", "bench_f32.svg"]);

        let mut reader = csv::Reader::from_path(dir.join("bench.csv")).unwrap();
        let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        for column in [
            "dtype",
            "n",
            "version",
            "impl",
            "first_pass_gbps",
            "pct_of_read_only",
            "to_scalar_us",
            "speedup_vs_v0",
            "speedup_vs_prev",
            "check",
        ] {
            assert!(
                headers.iter().any(|h| h == column),
                "no {column} in {headers:?}"
            );
        }
        assert_eq!(reader.records().count(), rows.len());

        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("bench.json")).unwrap())
                .unwrap();
        assert_eq!(json["header"]["device"], "Test GPU");
        assert_eq!(json["header"]["repeat"], 20);
        assert!(json["header"]["rotation"].as_str().unwrap().contains("L2"));
        assert!(
            json["header"]["cub"]
                .as_str()
                .unwrap()
                .contains("own input")
        );
        assert_eq!(json["rows"].as_array().unwrap().len(), rows.len());
        assert!(
            json["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["impl"] == "cub")
        );

        let svg = std::fs::read_to_string(dir.join("bench_f32.svg")).unwrap();
        for name in [
            "v0",
            "v3",
            "v8",
            "CUB DeviceReduce::Sum",
            "read-only (ceiling)",
            "Test GPU",
        ] {
            assert!(svg.contains(name), "{name} not in the chart");
        }
        assert!(!svg.contains("cuda-v3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_output_names_the_file() {
        let dir = temp_dir("unwritable");
        let blocker = dir.join("file");
        std::fs::write(&blocker, "").unwrap();
        let error = write_results(&blocker, &synthetic_header(), &synthetic_rows()).unwrap_err();
        let text = format!("{error:#}");
        assert!(
            text.starts_with("writing ") && text.contains("bench.csv"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn chart_series_are_versions_cub_and_the_ceiling() {
        let series = chart_series(&synthetic_rows(), "f32");
        let names: Vec<(&str, bool, usize)> = series
            .iter()
            .map(|s| (s.name.as_str(), s.ceiling, s.points.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("read-only (ceiling)", true, 2),
                ("v0", false, 2),
                ("v3", false, 2),
                ("v8", false, 2),
                ("CUB DeviceReduce::Sum", false, 1)
            ]
        );
        assert!(chart_series(&synthetic_rows(), "f64").is_empty());
    }
}
