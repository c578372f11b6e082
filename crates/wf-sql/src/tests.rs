//! The Python package's path (`open`, then `wf_formats::read`) against the
//! query's (`collect`): the same rows on the same input.

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use wf_core::scan::{InputSpec, ScanSettings};

use super::*;

/// Each row by `_offset` (the last column), its other columns as one-row arrays.
fn rows(batches: &[RecordBatch]) -> Vec<(i64, Vec<ArrayRef>)> {
    let mut out = Vec::new();
    for b in batches {
        let n = b.num_columns();
        let off = b
            .column(n - 1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        for r in 0..b.num_rows() {
            out.push((
                off.value(r),
                (0..n - 1).map(|c| b.column(c).slice(r, 1)).collect(),
            ));
        }
    }
    out.sort_by_key(|(o, _)| *o);
    out
}

fn log(path: &std::path::Path) {
    let mut s = String::new();
    for i in 0..2500u32 {
        if i % 89 == 5 {
            s.push_str("garbage line\n");
            continue;
        }
        s.push_str(&format!(
            "10.1.{}.{} - - [01/Feb/2024:00:{:02}:{:02} +0000] \"GET /a/{} HTTP/1.1\" {} {} \"http://r/{}\" \"ua {}\"\n",
            i % 9, i % 200, i / 60 % 60, i % 60, i % 17, 200 + i % 4, i, i % 5, i % 3
        ));
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn read_gives_the_rows_the_query_gives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.log");
    log(&path);
    let spec = || TableSpec {
        name: "logs".into(),
        format: "auto".into(),
        inputs: InputSpec {
            paths: vec![path.clone()],
            ..InputSpec::default()
        }
        .collect()
        .inputs,
    };
    let query = "SELECT * EXCLUDE (_file, _line) FROM logs";
    for (threads, chunk, batch_rows) in [(1, 1 << 20, 100_000), (2, 4096, 7), (3, 1000, 333)] {
        let settings = ScanSettings {
            threads: Some(threads),
            chunk_size: Some(chunk),
            ..ScanSettings::default()
        };
        let opts = SqlOptions::new(settings.options().unwrap(), FormatOptions::default());
        let c = collect(query, vec![spec()], &opts, &mut |_| {}).unwrap();
        let want = rows(&c.batches);
        let opened = open(spec(), &opts.format, opts.scan.clone(), &mut |_| {}).unwrap();
        let mut names: Vec<String> = (opened.table.format().fields().iter())
            .map(|f| f.name.clone())
            .collect();
        names.push("_offset".into());
        let mut r = opened.read(Some(&names), batch_rows).unwrap();
        let got: Vec<RecordBatch> = (&mut r.batches).map(|b| b.unwrap()).collect();
        assert_eq!(r.batches.schema(), c.schema, "-j {threads}");
        let (report, errors) = r.finish();
        assert!(errors.is_empty());
        assert_eq!(
            report.malformed(),
            c.runs[0].report.lock().unwrap().malformed()
        );
        assert_eq!(report.malformed(), 29);
        let got = rows(&got);
        assert_eq!(got.len(), want.len());
        assert_eq!(got.len(), 2500 - 29);
        for ((o, cols), (wo, wcols)) in got.iter().zip(&want) {
            assert_eq!(o, wo);
            for (a, b) in cols.iter().zip(wcols) {
                assert_eq!(a.as_ref(), b.as_ref(), "byte {o}, -j {threads}");
            }
        }
    }
}

#[test]
fn an_unreadable_sample_is_a_typed_input_error() {
    let spec = TableSpec {
        name: "logs".into(),
        format: "csv".into(),
        inputs: vec![Input {
            name: "gone.csv".into(),
            source: Source::File {
                path: "/nonexistent/gone.csv".into(),
                size: 0,
            },
            span: None,
        }],
    };
    let opts = SqlOptions::default();
    let err = collect("SELECT 1", vec![spec], &opts, &mut |_| {})
        .err()
        .unwrap();
    match &err {
        SqlError::Input(e) => assert_eq!(e.kind, Some(std::io::ErrorKind::NotFound)),
        e => panic!("{e:?}"),
    }
    assert!(err.to_string().starts_with("gone.csv: "), "{err}");
}

#[test]
fn table_spec_parse_splits_name_and_path() {
    let (name, path) = TableSpec::parse("users=/tmp/u=1.csv").unwrap();
    assert_eq!(
        (name.as_str(), path),
        ("users", PathBuf::from("/tmp/u=1.csv"))
    );
    let err = TableSpec::parse("users.csv").unwrap_err().to_string();
    assert_eq!(err, "--table users.csv: expected NAME=PATH");
}
