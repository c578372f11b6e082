//! `read` against a plain reading: every record parsed alone, in order, on
//! this thread, at several thread counts, chunk sizes and batch sizes.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use wf_core::scan::{Input, ScanOptions, Source};

use super::*;
use crate::{Columns, FormatOptions, Kind};

fn input(path: &Path) -> Input {
    let size = std::fs::metadata(path).unwrap().len();
    Input {
        name: path.display().to_string(),
        source: Source::File {
            path: path.to_path_buf(),
            size,
        },
        span: None,
    }
}

fn table(spec: &str, path: &Path, threads: usize, chunk: u64) -> Table {
    let inputs = vec![input(path)];
    let format = sample::format_of(spec, &inputs, &[], &FormatOptions::default()).unwrap();
    let opts = ScanOptions {
        threads,
        chunk_size: chunk,
        ..ScanOptions::default()
    };
    Table::new(format, inputs, opts)
}

/// Web-log lines with malformed and blank ones among them, some with `\r`.
fn log_text() -> Vec<u8> {
    let mut s = Vec::new();
    for i in 0..3000u32 {
        let line = match i % 97 {
            13 => "not a log line".to_string(),
            14 => String::new(),
            _ => format!(
                "10.0.{}.{} - u{} [10/Oct/2023:13:{:02}:{:02} +0200] \"GET /p/{} HTTP/1.1\" {} {} \"-\" \"agent {}\"",
                i % 7,
                i % 250,
                i % 3,
                i / 60 % 60,
                i % 60,
                i % 41,
                200 + i % 5,
                i * 3,
                i % 11
            ),
        };
        s.extend_from_slice(line.as_bytes());
        s.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
    }
    s
}

/// Each record parsed alone: (offset, one-row arrays of every format column).
fn plain(t: &Table, data: &[u8]) -> Vec<(i64, Vec<ArrayRef>)> {
    let fields = t.format().fields();
    let all: Vec<usize> = (0..fields.len()).collect();
    let kinds: Vec<Kind> = fields.iter().map(|f| f.kind).collect();
    let mut parser = t.format().parser(&all);
    let mut out = Vec::new();
    let mut pos = 0;
    for line in data.split_inclusive(|&b| b == b'\n') {
        let rec = line.strip_suffix(b"\n").unwrap_or(line);
        let rec = rec.strip_suffix(b"\r").unwrap_or(rec);
        let mut cols = Columns::new(&kinds);
        if !rec.is_empty() && parser.parse(rec, &mut cols) {
            out.push((pos as i64, cols.take().0));
        }
        pos += line.len();
    }
    out
}

/// Every row of the batches by `_offset` (the last column), with the rest of
/// its columns as one-row arrays.
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
            let cols = (0..n - 1).map(|c| b.column(c).slice(r, 1)).collect();
            out.push((off.value(r), cols));
        }
    }
    out.sort_by_key(|(o, _)| *o);
    out
}

fn temp_file(name: &str, data: &[u8]) -> tempfile::TempPath {
    let mut f = tempfile::Builder::new().suffix(name).tempfile().unwrap();
    std::io::Write::write_all(&mut f, data).unwrap();
    f.into_temp_path()
}

#[test]
fn read_gives_the_rows_of_a_plain_reading_at_every_threads_chunk_and_batch_size() {
    let data = log_text();
    let path = temp_file(".log", &data);
    let want = plain(&table("combined", &path, 1, 1 << 20), &data);
    assert_eq!(want.len(), 3000 - 2 * 31);
    for (threads, chunk, batch_rows) in [
        (1, 1 << 20, BATCH_ROWS),
        (2, 4096, 7),
        (3, 1000, 1),
        (4, 65536, 500),
    ] {
        let t = Arc::new(table("combined", &path, threads, chunk));
        let nformat = t.format().fields().len();
        let mut projection: Vec<usize> = (0..nformat).collect();
        projection.push(t.projection(Some(&["_offset".into()])).unwrap()[0]);
        let batches = read(t.clone(), projection, batch_rows);
        let got: Vec<RecordBatch> = batches.map(|b| b.unwrap()).collect();
        assert!(got.iter().all(|b| b.num_rows() <= batch_rows));
        let got = rows(&got);
        assert_eq!(got.len(), want.len(), "-j {threads} chunk {chunk}");
        for ((o, cols), (wo, wcols)) in got.iter().zip(&want) {
            assert_eq!(o, wo);
            for (a, b) in cols.iter().zip(wcols) {
                assert_eq!(a.as_ref(), b.as_ref(), "row at byte {o}, -j {threads}");
            }
        }
        let report = t.report().lock().unwrap().clone();
        assert_eq!(report.malformed(), 31, "-j {threads}");
        assert_eq!(report.stats.blank, 31);
        assert_eq!(report.bytes(), data.len() as u64);
        assert!(report.errors().is_empty() && report.complete);
    }
}

#[test]
fn finish_reports_what_the_scan_found_and_a_dropped_read_stops() {
    let data = log_text();
    let path = temp_file(".log", &data);
    let t = Arc::new(table("combined", &path, 2, 4096));
    let projection = t
        .projection(Some(&["status".into(), "_line".into()]))
        .unwrap();
    let mut batches = read(t.clone(), projection, 100);
    assert_eq!(batches.schema().field(1).name(), "_line");
    let first = batches.next().unwrap().unwrap();
    assert!(first.num_rows() > 0);
    // Taken no further: the scan stops, and says it read less than all.
    let report = batches.finish();
    assert!(report.reported);
    let all = read(t.clone(), vec![0], 100);
    let n: usize = all.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(n, 3000 - 2 * 31);
}

#[test]
fn projection_names_columns_and_refuses_unknown_and_repeated_ones() {
    let path = temp_file(".log", &log_text());
    let t = table("common", &path, 1, 1 << 20);
    let n = t.format().fields().len();
    assert_eq!(t.projection(None).unwrap(), (0..n).collect::<Vec<_>>());
    let p = t
        .projection(Some(&["_file".into(), "status".into()]))
        .unwrap();
    assert_eq!(p[0], n);
    assert_eq!(t.schema().field(p[1]).name(), "status");
    let err = t
        .projection(Some(&["nope".into()]))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("no column named \"nope\" (columns: client, "),
        "{err}"
    );
    let err = t
        .projection(Some(&["status".into(), "status".into()]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "column \"status\" is asked for more than once"
    );
}

#[test]
fn csv_with_quoted_line_breaks_is_read_whole_and_serially() {
    let mut data = b"id,note\n".to_vec();
    for i in 0..500 {
        data.extend_from_slice(format!("{i},\"a\nb {i}\"\n").as_bytes());
    }
    let path = temp_file(".csv", &data);
    for threads in [1, 3] {
        let t = Arc::new(table("csv", &path, threads, 64));
        let mut batches = read(t.clone(), vec![0, 1], 33);
        let mut ids = Vec::new();
        for b in &mut batches {
            let b = b.unwrap();
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(id.values().iter().copied());
        }
        let report = batches.finish();
        assert_eq!(ids, (0..500).collect::<Vec<i64>>());
        assert_eq!(report.serial_files, vec![path.display().to_string()]);
        assert_eq!(report.malformed(), 0);
    }
}

#[test]
fn a_value_past_the_inferred_type_stops_the_read_and_is_named() {
    let mut data = b"n\n".to_vec();
    for i in 0..2000 {
        data.extend_from_slice(format!("{i}\n").as_bytes());
    }
    data.extend_from_slice(b"x1\n");
    let path = temp_file(".csv", &data);
    let t = Arc::new(table("csv", &path, 2, 4096));
    let last = read(t, vec![0], 64).last().unwrap();
    let e = last.unwrap_err();
    assert!(matches!(e, ReadError::Record(_)));
    let msg = e.to_string();
    assert!(msg.contains("line 2002 (byte"), "{msg}");
    assert!(
        msg.contains("column n: \"x1\" is not of its type int"),
        "{msg}"
    );
}

#[test]
fn an_unreadable_sample_is_an_input_error_of_its_kind() {
    let missing = Input {
        name: "gone.csv".into(),
        source: Source::File {
            path: "/nonexistent/gone.csv".into(),
            size: 0,
        },
        span: None,
    };
    let err = sample::format_of("csv", &[missing], &[], &FormatOptions::default()).unwrap_err();
    match err {
        OpenError::Input(e) => {
            assert_eq!(e.kind, Some(std::io::ErrorKind::NotFound));
            assert!(e.to_string().starts_with("gone.csv: "), "{e}");
        }
        e => panic!("{e:?}"),
    }
}
