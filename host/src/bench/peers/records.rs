//! The CSV every peer but reduce_ref writes (`reduce_shapes`, `reduce_torch.py`,
//! `allreduce_torch.py`): `impl,case,op,dtype,rows,cols,n,ms,gbps,check`, read by the
//! columns' names.

use anyhow::{Context, Result, anyhow};
use std::path::Path;

/// One row of a peer's CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRow {
    /// `torch`, `cub`, `cuda`, `torch-nccl`, `read`, …
    pub implementation: String,
    pub case: String,
    pub op: String,
    pub dtype: String,
    /// Rows of a matrix, segments, or (several GPUs) the GPUs.
    pub rows: usize,
    /// Columns, or (several GPUs) elements per GPU.
    pub cols: usize,
    pub n: usize,
    pub ms: f64,
    pub gbps: f64,
    /// `PASS`, `FAIL`, or a word of the peer's own (`nan-propagated`, …).
    pub check: String,
}

/// The position of the column `name` in a peer CSV's header; its absence is an error that
/// names it and shows the header.
pub fn column_of(headers: &csv::StringRecord, name: &str) -> Result<usize> {
    headers
        .iter()
        .position(|h| h.trim() == name)
        .ok_or_else(|| {
            anyhow!(
                "no `{name}` column in its header `{}`",
                headers.iter().collect::<Vec<_>>().join(",")
            )
        })
}

/// The rows of `text`; a missing column is an error that names it.
pub fn parse(text: &str) -> Result<Vec<PeerRow>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let column = |name: &str| column_of(&headers, name);
    let [imp, case, op, dtype, rows, cols, n, ms, gbps, check] = [
        "impl", "case", "op", "dtype", "rows", "cols", "n", "ms", "gbps", "check",
    ]
    .map(column);
    let (imp, case, op, dtype, rows, cols, n, ms, gbps, check) = (
        imp?, case?, op?, dtype?, rows?, cols?, n?, ms?, gbps?, check?,
    );
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record?;
        let field = |i: usize| record.get(i).unwrap_or("").trim().to_string();
        let number = |i: usize| field(i).parse::<f64>().unwrap_or(f64::NAN);
        let count = |i: usize| field(i).parse::<usize>().unwrap_or(0);
        out.push(PeerRow {
            implementation: field(imp),
            case: field(case),
            op: field(op),
            dtype: field(dtype),
            rows: count(rows),
            cols: count(cols),
            n: count(n),
            ms: number(ms),
            gbps: number(gbps),
            check: field(check),
        });
    }
    Ok(out)
}

/// The rows of the CSV at `path`; none when the file is not there (no peer wrote it).
pub fn read(path: &Path) -> Result<Vec<PeerRow>> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text).with_context(|| format!("reading {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(anyhow!(e).context(format!("reading {}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_column_name() {
        let rows = parse(
            "check,impl,case,op,dtype,rows,cols,n,ms,gbps\n\
             PASS,torch,rows,sum,f32,8,16,128,0.004,2.5\n\
             FAIL,torch-nccl,allreduce,sum+allreduce,f32,2,1024,2048,x,0\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (
                rows[0].implementation.as_str(),
                rows[0].rows,
                rows[0].cols,
                rows[0].ms
            ),
            ("torch", 8, 16, 0.004)
        );
        assert_eq!((rows[1].check.as_str(), rows[1].cols), ("FAIL", 1024));
        assert!(rows[1].ms.is_nan());
        let error = parse("impl,case\ntorch,rows\n").unwrap_err();
        assert!(format!("{error:#}").contains("no `op` column"), "{error:#}");
        let nowhere = std::env::temp_dir().join("reduce-rs-no-such-peers.csv");
        assert!(read(&nowhere).unwrap().is_empty());
    }
}
