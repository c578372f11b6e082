//! Compressed inputs, made with the real tools (gzip, pigz, bgzip, zstd, pzstd,
//! bzip2, xz, lzma; pigz -i writes one member, bgzip BGZF blocks that are
//! decoded in parts, pzstd independent frames, also decoded in parts):
//! every job gives the same answer as on the plain file, at several thread
//! counts and chunk sizes; a truncated or corrupt file is named with its
//! compressed offset, the rest is processed, and the exit status is 2.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tools, their file suffix and extra arguments; `None` if not installed.
const TOOLS: &[(&str, &str, &[&str])] = &[
    ("gzip", "gz", &[]),
    ("pigz", "i.gz", &["-i"]),
    ("bgzip", "bgz", &[]),
    ("zstd", "zst", &["-q"]),
    ("pzstd", "pzst", &["-q", "-p", "2"]),
    ("bzip2", "bz2", &[]),
    ("xz", "xz", &[]),
    ("lzma", "lzma", &[]),
];

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// `plain` compressed by `tool` into `dir` (`-c`, keeping the original).
fn compress(tool: &str, ext: &str, extra: &[&str], plain: &Path, dir: &Path) -> PathBuf {
    let out = dir.join(format!(
        "{}.{ext}",
        plain.file_name().unwrap().to_string_lossy()
    ));
    let o = Command::new(tool)
        .args(extra)
        .arg("-c")
        .arg(plain)
        .output()
        .expect(tool);
    assert!(
        o.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(&out, o.stdout).unwrap();
    out
}

fn json_of(args: &[&str], paths: &[PathBuf]) -> String {
    let mut c = wf();
    c.args(args).arg("--json").args(paths);
    ok(c)
}

/// Each tool's output of a log with odd lines: count and wf2 answers equal the
/// plain file's at -j 1/2/3 and small and large chunks.
#[test]
fn every_format_gives_the_plain_answers() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "3M", "0.05", 21);
    for (tool, ext, extra) in TOOLS {
        if !have(tool) {
            eprintln!("skipping {tool}: not installed");
            continue;
        }
        let z = compress(tool, ext, extra, &plain, t.path());
        for job in ["count", "wf2"] {
            let want = json_of(&[job], std::slice::from_ref(&plain));
            for (j, c) in [("1", "64K"), ("2", "1K"), ("3", "8M")] {
                let got = json_of(&[job, "-j", j, "--chunk-size", c], std::slice::from_ref(&z));
                let got = got.replace(&z.display().to_string(), &plain.display().to_string());
                assert_eq!(got, want, "{tool} {job} -j {j} --chunk-size {c}");
            }
        }
    }
}

/// gzip members concatenated (as log rotation makes) and zstd frames
/// concatenated: the whole file is read, in parts (at member or frame starts)
/// when the job allows, with the same answers at every -j and part size.
#[test]
fn multi_member_and_multi_frame_files_are_read_whole() {
    let t = tempfile::tempdir().unwrap();
    let a = generated_log(t.path(), "500K", "0.0", 3);
    let b = generated_log(t.path(), "700K", "0.0", 4);
    let mut both = std::fs::read(&a).unwrap();
    both.extend(std::fs::read(&b).unwrap());
    let plain = t.path().join("both.log");
    std::fs::write(&plain, &both).unwrap();
    for (tool, ext) in [
        ("gzip", "gz"),
        ("zstd", "zst"),
        ("bzip2", "bz2"),
        ("xz", "xz"),
    ] {
        if !have(tool) {
            continue;
        }
        let za = compress(tool, ext, &["-q"], &a, t.path());
        let zb = compress(tool, ext, &["-q"], &b, t.path());
        let mut cat = std::fs::read(&za).unwrap();
        cat.extend(std::fs::read(&zb).unwrap());
        let multi = t.path().join(format!("both.log.{ext}"));
        std::fs::write(&multi, cat).unwrap();
        for job in ["count", "wf2"] {
            let want = json_of(&[job], std::slice::from_ref(&plain));
            for (j, c) in [("1", "1K"), ("2", "4K"), ("3", "64K"), ("2", "8M")] {
                let args = [job, "-j", j, "--chunk-size", c];
                let got = json_of(&args, std::slice::from_ref(&multi));
                let got = got.replace(&multi.display().to_string(), &plain.display().to_string());
                assert_eq!(got, want, "{tool} multi-member {args:?}");
            }
        }
    }
}

/// A directory mixing plain and compressed files counts like the plain files.
#[test]
fn a_mixed_directory_counts_like_plain_files() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    let dir = t.path().join("mixed");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let mut total = 0u64;
    for (k, (tool, ext, extra)) in TOOLS.iter().enumerate() {
        let p = generated_log(&src, &format!("{}K", 100 + 50 * k), "0.02", k as u64);
        total += std::fs::read(&p)
            .unwrap()
            .iter()
            .filter(|&&c| c == b'\n')
            .count() as u64;
        if have(tool) {
            compress(tool, ext, extra, &p, &dir);
        } else {
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    }
    let mut c = wf();
    c.args(["count", "-j", "3"]).arg(&dir);
    let out = ok(c);
    assert!(out.starts_with(&format!("{total} records")), "{out}");
}

/// `--decompress never` counts the compressed bytes' newlines; `always`
/// refuses a plain file, naming it.
#[test]
fn decompress_never_and_always() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "200K", "0.0", 5);
    let z = compress("gzip", "gz", &[], &plain, t.path());
    let raw = std::fs::read(&z).unwrap();
    let newlines = raw.iter().filter(|&&c| c == b'\n').count();
    let records = newlines + (raw.last() != Some(&b'\n')) as usize;
    let mut c = wf();
    c.args(["count", "--decompress", "never"]).arg(&z);
    let out = ok(c);
    assert!(out.starts_with(&format!("{records} records")), "{out}");
    let mut c = wf();
    c.args(["count", "--decompress", "always"])
        .arg(&z)
        .arg(&plain);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&plain.display().to_string()), "{err}");
}

/// A truncated or corrupted file of each format: exit 2, the file and a
/// compressed offset named, the other input still counted.
#[test]
fn truncated_and_corrupt_files_are_named() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "400K", "0.0", 6);
    let lines = std::fs::read(&plain)
        .unwrap()
        .iter()
        .filter(|&&c| c == b'\n')
        .count();
    for (tool, ext, extra) in TOOLS {
        if !have(tool) {
            continue;
        }
        let z = compress(tool, ext, extra, &plain, t.path());
        let bytes = std::fs::read(&z).unwrap();
        let cut = t.path().join(format!("cut.{ext}"));
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let bad = t.path().join(format!("bad.{ext}"));
        let mut b = bytes.clone();
        let mid = b.len() / 2;
        for x in &mut b[mid..mid + 64] {
            *x ^= 0x55;
        }
        std::fs::write(&bad, &b).unwrap();
        for broken in [&cut, &bad] {
            let mut c = wf();
            c.args(["count", "-j", "2"]).arg(broken).arg(&plain);
            let o = run(c, None);
            let err = String::from_utf8_lossy(&o.stderr);
            let what = format!("{tool} {}", broken.display());
            assert_eq!(o.status.code(), Some(2), "{what}: {err}");
            assert!(err.contains(&broken.display().to_string()), "{what}: {err}");
            assert!(err.contains("compressed byte"), "{what}: {err}");
            let out = String::from_utf8_lossy(&o.stdout);
            let n: usize = out.split_whitespace().next().unwrap().parse().unwrap();
            // The plain file whole, and what decoded before the damage was
            // found (damaged data can decode to other bytes, newlines among
            // them, until its check fails: said on stderr).
            assert!(n >= lines, "{what}: {n} records: {out}");
            if broken == &cut {
                assert!(n <= 2 * lines, "{what}: {n} records: {out}");
            } else {
                assert!(err.contains("some may not be the data's"), "{what}: {err}");
            }
            // At least the lines the tool's own decoder gives of it (when
            // they are not garbage), but for the last 32 KiB read asked of
            // the decoder (~150 lines here): zstd's had given none of a file
            // damaged at its middle, its first 8 MiB read failing whole.
            let peer = Command::new(tool).arg("-dc").arg(broken).output().unwrap();
            let peer = peer.stdout.iter().filter(|&&c| c == b'\n').count();
            if peer <= lines {
                assert!(
                    n - lines + 150 >= peer,
                    "{what}: {n} records, {tool} -dc: {peer}"
                );
            }
        }
    }
}

/// `wf gen ... -o x.gz` and `-o x.zst` write what the real tools decode to the
/// plain output.
#[test]
fn gen_writes_gzip_and_zstd() {
    let t = tempfile::tempdir().unwrap();
    let plain = t.path().join("p.log");
    let gen = |out: &Path| {
        let mut c = wf();
        c.args(["gen", "wf2", "--size", "300K", "--seed", "9", "-o"])
            .arg(out);
        ok(c);
    };
    gen(&plain);
    for (tool, ext) in [("gzip", "gz"), ("zstd", "zst")] {
        if !have(tool) {
            continue;
        }
        let z = t.path().join(format!("p.log.{ext}"));
        gen(&z);
        let o = Command::new(tool)
            .args(["-d", "-c"])
            .arg(&z)
            .output()
            .unwrap();
        assert!(o.status.success(), "{tool} -d");
        assert_eq!(o.stdout, std::fs::read(&plain).unwrap(), "{tool}");
    }
}

/// A compressed stream on stdin is decoded like a file (and read as it is
/// with `--decompress never`); `wf sql` reads compressed files and stdin too.
#[test]
#[cfg(feature = "sql")]
fn compressed_stdin_and_sql() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "600K", "0.05", 8);
    let z = compress("gzip", "gz", &[], &plain, t.path());
    let gz = std::fs::read(&z).unwrap();
    for job in ["count", "wf2"] {
        let want = json_of(&[job], std::slice::from_ref(&plain));
        let mut c = wf();
        c.args([job, "--json", "-j", "2", "--chunk-size", "4K"]);
        let got = ok_with(c, Some(&gz));
        let name = plain.display().to_string();
        assert_eq!(got.replace("<stdin>", &name), want, "{job} from stdin");
    }
    let mut c = wf();
    c.args(["count", "--decompress", "never"]);
    let raw = ok_with(c, Some(&gz));
    let n = gz.iter().filter(|&&c| c == b'\n').count() + (gz.last() != Some(&b'\n')) as usize;
    assert!(raw.starts_with(&format!("{n} records")), "{raw}");
    let q = "SELECT count(*) AS n, sum(bytes) AS b, sum(_offset) AS o FROM logs";
    let sql = |args: &[&str], paths: &[PathBuf], stdin: Option<&[u8]>| {
        let mut c = wf();
        c.args(["sql", "--format", "combined", "--json"])
            .args(args)
            .arg(q)
            .args(paths);
        ok_with(c, stdin)
    };
    let want = sql(&[], std::slice::from_ref(&plain), None);
    assert_eq!(
        sql(&["-j", "3"], std::slice::from_ref(&z), None),
        want,
        "sql on .gz"
    );
    assert_eq!(sql(&[], &[], Some(&gz)), want, "sql on gzip stdin");
}

/// `--stats` says how many compressed bytes were decoded to how many, and the
/// decoders' share of the cpu time.
#[test]
fn stats_show_the_decoding() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "1M", "0.0", 8);
    let size = std::fs::metadata(&plain).unwrap().len();
    let z = compress("gzip", "gz", &[], &plain, t.path());
    let zsize = std::fs::metadata(&z).unwrap().len();
    let mut c = wf();
    c.args(["count", "--stats"]).arg(&z);
    let o = run(c, None);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let want = format!("compressed:     {zsize} bytes, decoded to {size} bytes");
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("decoding:"), "{err}");
    let mut c = wf();
    c.args(["count", "--stats"]).arg(&plain);
    let err = String::from_utf8_lossy(&run(c, None).stderr).to_string();
    assert!(!err.contains("compressed:"), "{err}");
}

/// `wf sql` over a corrupt compressed file and a good one: the rows of the
/// good one and of what decoded before the damage, the file named, exit 2.
#[test]
#[cfg(feature = "sql")]
fn sql_reads_on_past_a_corrupt_compressed_file() {
    let t = tempfile::tempdir().unwrap();
    let plain = generated_log(t.path(), "400K", "0.0", 9);
    let lines = std::fs::read(&plain)
        .unwrap()
        .iter()
        .filter(|&&c| c == b'\n')
        .count();
    let z = compress("gzip", "gz", &[], &plain, t.path());
    let mut b = std::fs::read(&z).unwrap();
    let mid = b.len() / 2;
    b.truncate(mid);
    let cut = t.path().join("cut.gz");
    std::fs::write(&cut, &b).unwrap();
    let mut c = wf();
    c.args([
        "sql",
        "--format",
        "combined",
        "--csv",
        "SELECT count(*) AS n FROM logs",
    ])
    .arg(&cut)
    .arg(&plain);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&cut.display().to_string()), "{err}");
    assert!(err.contains("compressed byte"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let n: usize = out.lines().nth(1).unwrap().trim().parse().unwrap();
    assert!(n > lines && n < 2 * lines, "{n} rows: {out}");
}

/// A BGZF file made here (no bgzip needed): members of at most 60,000 bytes of
/// `text`, each with its `BC` size field, then the empty end-of-file member.
/// Returns the file and where each member starts.
fn bgzf(text: &[u8]) -> (Vec<u8>, Vec<usize>) {
    use std::io::Write;
    let mut out = Vec::new();
    let mut starts = Vec::new();
    let mut member = |block: &[u8], out: &mut Vec<u8>| {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(block).unwrap();
        let cdata = e.finish().unwrap();
        let mut crc = flate2::Crc::new();
        crc.update(block);
        starts.push(out.len());
        let bsize = (18 + cdata.len() + 8 - 1) as u16;
        out.extend_from_slice(&[
            0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0,
        ]);
        out.extend_from_slice(&bsize.to_le_bytes());
        out.extend_from_slice(&cdata);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(block.len() as u32).to_le_bytes());
    };
    for block in text.chunks(60_000) {
        member(block, &mut out);
    }
    member(b"", &mut out);
    (out, starts)
}

fn count_json(args: &[&str], path: &Path) -> (Option<i32>, serde_json::Value, String) {
    let mut c = wf();
    c.args(["count", "--json", "--no-progress"])
        .args(args)
        .arg(path);
    let o = run(c, None);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (
        o.status.code(),
        v,
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn numbered(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("line {i:06}\n").into_bytes())
        .collect()
}

/// Zero bytes after the last member (tape blocks, some rotations) are padding,
/// as `gzip -d` takes them: a single member, several members, and BGZF.
#[test]
fn gzip_zero_padding_is_accepted_as_gzip_does() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let text = numbered(20_000);
    let one = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(&text).unwrap();
        e.finish().unwrap()
    };
    let (two_halves, _) = bgzf(&text);
    let halves: Vec<u8> = text
        .chunks(text.len() / 2)
        .flat_map(|h| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(h).unwrap();
            e.finish().unwrap()
        })
        .collect();
    for (name, mut bytes) in [("one.gz", one), ("bgzf.gz", two_halves), ("two.gz", halves)] {
        bytes.extend(std::iter::repeat_n(0u8, 4096));
        let f = t.path().join(name);
        std::fs::write(&f, &bytes).unwrap();
        for args in [&[][..], &["--chunk-size", "16K"][..]] {
            let (code, v, err) = count_json(args, &f);
            assert_eq!(code, Some(0), "{name} {args:?}: {err}");
            assert_eq!(v["records"], 20_000, "{name} {args:?}");
            assert_eq!(v["bytes"], text.len(), "{name} {args:?}");
        }
    }
}

/// xz streams as `xz -d` reads them: zero padding after a stream is
/// accepted; garbage after the last stream is an error (exit 2, named)
/// after every line of the streams was read (the last ~20 KB were lost,
/// where `xz -dc` gives them).
#[test]
fn xz_padding_is_accepted_and_garbage_loses_no_line() {
    if !have("xz") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let text = numbered(400_000);
    let plain = t.path().join("n.log");
    std::fs::write(&plain, &text).unwrap();
    let xz = std::fs::read(compress("xz", "xz", &["-q", "-3"], &plain, t.path())).unwrap();
    let padded = t.path().join("padded.log.xz");
    std::fs::write(&padded, [&xz[..], &[0u8; 8][..]].concat()).unwrap();
    let (code, v, err) = count_json(&[], &padded);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["records"], 400_000);
    // Padding of 3 bytes is no padding (`xz -dc`: corrupt): named, exit 2.
    let odd = t.path().join("odd.log.xz");
    std::fs::write(&odd, [&xz[..], &[0u8; 3][..]].concat()).unwrap();
    let (code, _, err) = count_json(&[], &odd);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("padding is not a multiple of 4"), "{err}");
    let junk = t.path().join("junk.log.xz");
    std::fs::write(&junk, [&xz[..], b"garbage here"].concat()).unwrap();
    let (code, v, err) = count_json(&[], &junk);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(v["records"], 400_000, "{err}");
    assert!(
        err.contains("junk.log.xz") && err.contains("garbage appended"),
        "{err}"
    );
}

/// A legacy `.lzma` file holds one stream: bytes after it (a second file
/// concatenated, garbage) are an error, named, exit 2, after every line of
/// the stream, as `xz -dc` says "corrupt" there. Two files concatenated
/// counted the first's records only, exit 0.
#[test]
fn bytes_after_an_lzma_stream_are_an_error() {
    if !have("xz") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let text = numbered(100_000);
    let plain = t.path().join("n.log");
    std::fs::write(&plain, &text).unwrap();
    let lzma = std::fs::read(compress("lzma", "lzma", &["-q", "-3"], &plain, t.path())).unwrap();
    let one = t.path().join("one.log.lzma");
    std::fs::write(&one, &lzma).unwrap();
    let (code, v, err) = count_json(&[], &one);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["records"], 100_000, "{err}");
    for (name, tail) in [
        ("twice", &lzma[..]),
        ("junk", &b"garbage\n"[..]),
        ("zeros", &[0u8; 8][..]),
    ] {
        let f = t.path().join(format!("{name}.log.lzma"));
        std::fs::write(&f, [&lzma[..], tail].concat()).unwrap();
        for args in [&[][..], &["-j", "1", "--chunk-size", "4K"][..]] {
            let (code, v, err) = count_json(args, &f);
            assert_eq!(code, Some(2), "{name} {args:?}: {err}");
            assert_eq!(v["records"], 100_000, "{name} {args:?}: {err}");
            assert!(
                err.contains(&format!("{name}.log.lzma"))
                    && err.contains("after the end of the .lzma stream"),
                "{name}: {err}"
            );
        }
    }
}

/// A gzip member whose deflate data is damaged: what is read of it before the
/// damage falls short of what `gzip -dc` gives by at most one 256 KiB piece,
/// from a file and from stdin (a read that fails hands out nothing of it: the
/// file's parts lost 557,056 good bytes of a member, stdin 9,961 to 11,178
/// records with the chunk size), and from a file it is the same at every
/// chunk size. (From a pipe, where a piece ends depends on how much the pipe
/// held when the decoder read: not the same from run to run.)
#[test]
fn a_damaged_deflate_block_loses_the_same_little_at_every_chunk_size() {
    if !have("gzip") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let text = numbered(400_000);
    let half = text.len() / 2;
    let gz = |b: &[u8]| {
        let mut c = Command::new("gzip");
        c.arg("-c");
        ok_bytes(c, Some(b))
    };
    let (m1, m2) = (gz(&text[..half]), gz(&text[half..]));
    let f = t.path().join("damaged.log.gz");
    // A flipped byte in the second member that breaks its deflate data (not
    // only its checksum), found by trying bytes from its middle on.
    let found = (0..200).find_map(|k| {
        let mut bytes = [&m1[..], &m2[..]].concat();
        bytes[m1.len() + m2.len() / 2 + k * 97] ^= 0x55;
        std::fs::write(&f, &bytes).unwrap();
        let (_, _, err) = count_json(&[], &f);
        err.contains("corrupt deflate stream").then_some(bytes)
    });
    let bytes = found.expect("a damaged deflate block");
    let mut c = Command::new("gzip");
    c.arg("-dc").arg(&f);
    let by_gzip = c.output().unwrap().stdout.len() as u64;
    for stdin in [false, true] {
        let mut seen = Vec::new();
        for size in ["1K", "64K", "1M", "8M"] {
            let mut c = wf();
            c.args(["count", "--json", "--no-progress", "--chunk-size", size]);
            c.arg(if stdin { Path::new("-") } else { &f });
            let o = run(c, stdin.then_some(&bytes[..]));
            assert_eq!(o.status.code(), Some(2), "{size} stdin {stdin}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            seen.push((v["records"].clone(), v["bytes"].as_u64().unwrap()));
        }
        assert!(
            stdin || seen.windows(2).all(|w| w[0] == w[1]),
            "stdin {stdin}: {seen:?}"
        );
        for &(_, read) in &seen {
            assert!(
                read + (256 << 10) + 12 >= by_gzip,
                "stdin {stdin}: {read} of {by_gzip}"
            );
        }
    }
}

/// A corrupt member of a BGZF or multi-member gzip file: decoding goes on at the
/// next member that checks out; the damaged compressed range is named; exit 2.
#[test]
fn a_corrupt_member_is_skipped_and_its_range_named() {
    let t = tempfile::tempdir().unwrap();
    let text = numbered(40_000); // 480,000 bytes: 8 BGZF members
    let (mut bytes, starts) = bgzf(&text);
    assert!(starts.len() > 6);
    bytes[starts[3] + 100] ^= 0xff;
    let f = t.path().join("damaged.bgz");
    std::fs::write(&f, &bytes).unwrap();
    let range = format!("{}..{}", starts[3], starts[4]);
    for args in [
        &[][..],
        &["-j", "1"][..],
        &["-j", "2", "--chunk-size", "64K"][..],
    ] {
        let (code, v, err) = count_json(args, &f);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(f.to_str().unwrap()) && err.contains(&range),
            "{args:?}: {err}"
        );
        let records = v["records"].as_u64().unwrap();
        // All but the member's 5,000 lines and the two they cut, give or take
        // what the member decoded to before its damage was found.
        assert!(
            (40_000 - 5_002..40_000).contains(&records),
            "{args:?}: {records}"
        );
    }
}

/// `zstd --long` data needs a larger window than the decoders allow by
/// default: the error names the option, and the option allows it.
#[test]
fn zstd_long_windows_need_and_take_the_window_option() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let text = numbered(10_000);
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.window_log(28).unwrap();
    e.long_distance_matching(true).unwrap();
    e.write_all(&text).unwrap();
    let f = t.path().join("long.zst");
    std::fs::write(&f, e.finish().unwrap()).unwrap();
    let (code, _, err) = count_json(&[], &f);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--zstd-window-log-max"), "{err}");
    for args in [
        &["--zstd-window-log-max", "28"][..],
        &["--zstd-window-log-max", "31", "-j", "1"][..],
    ] {
        let (code, v, err) = count_json(args, &f);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert_eq!(v["records"], 10_000);
    }
    let (code, _, err) = count_json(&["--zstd-window-log-max", "32"], &f);
    assert_eq!(code, Some(2), "{err}");
}

/// `wf pangram` (which copies a compressed input to a temporary file first)
/// searches what a cut compressed file decodes to, up to its last whole
/// line, as `count` reads it, and names the file and where it stopped
/// (it found nothing in it: the copy was dropped whole). From stdin too.
#[test]
fn pangram_searches_what_a_cut_file_decodes_to() {
    let t = tempfile::tempdir().unwrap();
    let text: String = (0..40_000)
        .map(|i| format!("The quick brown fox {i} jumps over the lazy dog; pack my box\n"))
        .collect();
    let plain = t.path().join("book.txt");
    std::fs::write(&plain, &text).unwrap();
    let z = compress("gzip", "gz", &[], &plain, t.path());
    let bytes = std::fs::read(&z).unwrap();
    let cut = t.path().join("cut.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let pangram = |path: Option<&Path>, stdin: Option<&[u8]>| {
        let mut c = wf();
        c.args(["pangram", "--all", "--json"]).args(path);
        let o = run(c, stdin);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            err,
        )
    };
    let (code, out, err) = pangram(Some(&cut), None);
    assert_eq!(code, Some(2), "{err}");
    let at: usize = err
        .split("bytes ")
        .nth(1)
        .and_then(|r| r.split("..").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        at > 100_000 && text.as_bytes()[at - 1] == b'\n',
        "{at}: {err}"
    );
    let prefix = t.path().join("prefix.txt");
    std::fs::write(&prefix, &text[..at]).unwrap();
    let (_, want, _) = pangram(Some(&prefix), None);
    let name = |s: &str| s.replace("prefix.txt", "X").replace("cut.gz", "X");
    assert!(want.lines().count() > 1000, "{want}");
    assert_eq!(name(&out), name(&want));
    let (code, piped, err) = pangram(None, Some(&bytes[..bytes.len() / 2]));
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(piped.lines().count(), want.lines().count());
}
