//! `wf report --resolve`: the hosts panel's shown rows get their reverse-DNS
//! names through the system resolver; without the flag no lookup is made
//! (the report has no `hostname` at all). 127.0.0.1 is named `localhost` by
//! the hosts file: no network is needed.

mod common;
use common::*;

use std::fs;

const LOG: &str = "\
127.0.0.1 - - [17/Jun/2007:00:00:01 -0700] \"GET / HTTP/1.1\" 200 10 \"-\" \"curl/8\"
127.0.0.1 - - [17/Jun/2007:00:00:02 -0700] \"GET /a HTTP/1.1\" 200 10 \"-\" \"curl/8\"
not.an.address - - [17/Jun/2007:00:00:03 -0700] \"GET /b HTTP/1.1\" 404 10 \"-\" \"curl/8\"
";

fn report(args: &[&str], log: &std::path::Path) -> String {
    let mut c = wf();
    c.arg("report").args(args).arg(log);
    ok_with(c, None)
}

#[test]
fn resolve_names_the_shown_hosts_and_nothing_is_looked_up_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("access.log");
    fs::write(&log, LOG).unwrap();
    let plain = report(&["--json"], &log);
    assert!(!plain.contains("hostname"), "{plain}");
    let json: serde_json::Value =
        serde_json::from_str(&report(&["--json", "--resolve"], &log)).unwrap();
    let hosts = json["hosts"]["data"].as_array().unwrap();
    assert_eq!(hosts[0]["data"], "127.0.0.1");
    assert_eq!(hosts[0]["hostname"], "localhost");
    assert_eq!(hosts[1]["data"], "not.an.address");
    assert_eq!(hosts[1]["hostname"], "", "no name: empty");
    let text = report(&["--resolve", "--top", "1"], &log);
    assert!(text.contains("127.0.0.1 (localhost)"), "{text}");
    let page = tmp.path().join("r.html");
    report(&["--resolve", "-o", page.to_str().unwrap()], &log);
    let page = fs::read_to_string(page).unwrap();
    assert!(page.contains(r#"{"name":"Hostname","numeric":false}"#));
    assert!(page.contains(r#""localhost""#));
}
