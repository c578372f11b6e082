//! uap-core's own expectations (its tests/test_ua.yaml and test_os.yaml,
//! in tests/data/uap-core as JSON, family and versions only) met through
//! `agent::parse`: the vendored regexes.json is a faithful conversion and the
//! Agent carries what uap-core says.

use serde::Deserialize;
use wf_report::agent::parse;

#[derive(Deserialize)]
struct Case {
    user_agent_string: String,
    family: String,
    major: Option<String>,
    #[serde(default)]
    minor: Option<String>,
}

fn cases(json: &str) -> Vec<Case> {
    serde_json::from_str(json).expect("test data parses")
}

#[test]
fn browsers_as_uap_core_expects() {
    let cases = cases(include_str!("data/uap-core/test_ua.json"));
    assert!(cases.len() > 1400);
    let wrong: Vec<_> = cases
        .iter()
        .filter_map(|c| {
            let a = parse(c.user_agent_string.as_bytes());
            let got = (&*a.browser, a.browser_major.as_deref());
            let want = (c.family.as_str(), c.major.as_deref());
            (got != want).then(|| format!("{}\n  got {got:?} want {want:?}", c.user_agent_string))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn operating_systems_as_uap_core_expects() {
    let cases = cases(include_str!("data/uap-core/test_os.json"));
    assert!(cases.len() > 400);
    let wrong: Vec<_> = cases
        .iter()
        .filter_map(|c| {
            let a = parse(c.user_agent_string.as_bytes());
            let want_version = match (&c.major, &c.minor) {
                (Some(a), Some(b)) => Some(format!("{a}.{b}")),
                (Some(a), None) => Some(a.clone()),
                _ => None,
            };
            let got = (&*a.os, a.os_version.as_deref());
            let want = (c.family.as_str(), want_version.as_deref());
            (got != want).then(|| format!("{}\n  got {got:?} want {want:?}", c.user_agent_string))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
