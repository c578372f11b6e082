//! User agent -> browser, OS, device kind and named bot, once per distinct agent.
//!
//! Browsers, OS and devices come from uap-core's `regexes.yaml` (the
//! Browserscope rules that uap-python, uap-java and the rest share) through
//! the `ua-parser` crate, which leaves the data to us: it is embedded as
//! `assets/uap-core/regexes.json`, a one-to-one conversion of the YAML that
//! the crate's documentation offers as an alternative (serde_json is already
//! a dependency; a YAML parser would only be needed for this). Bots are
//! named by `bots.rs`; an agent that only uap-core calls a spider is named
//! by its product token (`spider_name`).
//!
//! Parsing one agent runs hundreds of prefiltered regexes (tens of
//! microseconds); a log repeats a few thousand agents millions of times, so
//! each worker thread keeps an [`AgentCache`]: one hash lookup per line, the
//! parse once per distinct agent. The cache is bounded (a log of random
//! agents must not grow it without limit): past [`AgentCache::DEFAULT_LIMIT`]
//! entries it starts again empty, which costs time, never a different answer.

use crate::bots::{Bot, BotCategory, Bots};
use crate::needs::{keep_wanted, Needs};
use hashbrown::{HashMap, HashSet};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

const UAP_REGEXES: &str = include_str!("../assets/uap-core/regexes.json");

/// What kind of device sent the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    Desktop,
    Mobile,
    Tablet,
    Bot,
    Other,
}

/// One user agent, classified.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Agent {
    /// uap-core's browser family ("Chrome", "Firefox", "Mobile Safari",
    /// "Googlebot", "Other").
    pub browser: Box<str>,
    /// The browser's major version, as the agent writes it ("120").
    pub browser_major: Option<Box<str>>,
    /// uap-core's OS family ("Windows", "Mac OS X", "iOS", "Android", "Other").
    pub os: Box<str>,
    /// The OS's major[.minor] version ("10", "10.15", "17.2").
    pub os_version: Option<Box<str>>,
    pub device: DeviceKind,
    /// The bot this agent is, named, if any list knows it.
    pub bot: Option<Bot>,
}

impl Agent {
    /// "Chrome 120", or the family alone without a version.
    pub fn browser_label(&self) -> String {
        label(&self.browser, self.browser_major.as_deref())
    }

    /// "Windows 10", "Mac OS X 10.15", or the family alone.
    pub fn os_label(&self) -> String {
        label(&self.os, self.os_version.as_deref())
    }
}

fn label(family: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{family} {v}"),
        None => family.to_owned(),
    }
}

/// The compiled rules, shared by every thread of the process.
pub struct Parsers {
    uap: ua_parser::Extractor<'static>,
    bots: Bots,
}

static PARSERS: OnceLock<Parsers> = OnceLock::new();

/// Compiles every rule on first use (~0.12 s of one core: ~1,200 uap-core
/// regexes and ~1,500 crawler patterns); later calls are free.
pub fn parsers() -> &'static Parsers {
    PARSERS.get_or_init(|| Parsers::compile(None))
}

/// Every rule compiled, if [`parsers`] has been called (and has finished).
pub fn compiled() -> Option<&'static Parsers> {
    PARSERS.get()
}

/// The rules a report classifies its agents with ([`rules_for`]).
pub enum Rules {
    /// Every rule ([`parsers`]).
    All(&'static Parsers),
    /// Those the report's agents could meet ([`Parsers::for_agents`]).
    Met(Box<Parsers>),
}

impl std::ops::Deref for Rules {
    type Target = Parsers;
    fn deref(&self) -> &Parsers {
        match self {
            Rules::All(p) => p,
            Rules::Met(p) => p,
        }
    }
}

/// Agents past which a report compiles every rule: for 2,858 agents (of
/// uap-core's tests and the crawler list's examples) finding and compiling
/// the rules they could meet already took as long as compiling all (a
/// report of them 0.271 s either way, 5 runs), and a search is longer the
/// more agents there are.
pub const FEW_AGENTS: usize = 4096;

/// The rules to classify a report's `agents` (`n` of them) with: every rule
/// if they are compiled already (`--bots exclude|only` classify while the
/// scan runs), if the agents are many ([`FEW_AGENTS`]), or if this process
/// has made a report before (`--follow`'s reports, the Python package's
/// calls: every rule, compiled once, serves them all); else only those the
/// agents could meet.
pub fn rules_for<'a>(agents: impl IntoIterator<Item = &'a [u8]> + Clone, n: usize) -> Rules {
    if let Some(all) = compiled() {
        return Rules::All(all);
    }
    let first = FIRST.swap(false, Ordering::Relaxed);
    if n > FEW_AGENTS || !first {
        return Rules::All(parsers());
    }
    let ahead = AHEAD.lock().unwrap_or_else(|e| e.into_inner()).take();
    match ahead.and_then(|a| a.covering(agents.clone())) {
        Some(rules) => Rules::Met(Box::new(rules)),
        None => Rules::Met(Box::new(Parsers::for_agents(agents))),
    }
}

/// No report has taken its rules yet in this process ([`rules_for`]).
static FIRST: AtomicBool = AtomicBool::new(true);

/// The rules of a set of agents, compiled on a thread of their own.
struct Ahead {
    agents: HashSet<Box<[u8]>>,
    rules: std::thread::JoinHandle<Parsers>,
}

impl Ahead {
    fn start<'a>(agents: impl IntoIterator<Item = &'a [u8]>) -> Ahead {
        let owned: Vec<Box<[u8]>> = agents.into_iter().map(Box::from).collect();
        let set = owned.iter().cloned().collect();
        let rules = std::thread::spawn(move || Parsers::for_agents(owned.iter().map(|a| &a[..])));
        Ahead { agents: set, rules }
    }

    /// The rules, if they were compiled for every one of `agents` (those
    /// of a set classify each agent of it as every rule does, `needs`).
    fn covering<'a>(self, agents: impl IntoIterator<Item = &'a [u8]>) -> Option<Parsers> {
        let mut agents = agents.into_iter();
        agents
            .all(|a| self.agents.contains(a))
            .then(|| self.rules.join().ok())?
    }
}

static AHEAD: Mutex<Option<Ahead>> = Mutex::new(None);

/// Starts compiling, on a thread of its own, the rules that `agents` (`n`
/// of them, counted with repeats) could meet, for the [`rules_for`] to
/// come if its agents are among these (else it compiles its own). The
/// job's merge of two workers' counts calls it with both's agents: the
/// compile (22 ms for the bench log's 84 agents, one core) then runs while
/// clients, visitors and pairs are merged, where it ran alone in the tally
/// after them. Nothing is started
/// when `rules_for` would take every rule, or once a compile is under way.
pub fn compile_ahead<'a>(agents: impl IntoIterator<Item = &'a [u8]>, n: usize) {
    if compiled().is_some() || n > FEW_AGENTS || !FIRST.load(Ordering::Relaxed) {
        return;
    }
    let mut ahead = AHEAD.lock().unwrap_or_else(|e| e.into_inner());
    if ahead.is_none() {
        *ahead = Some(Ahead::start(agents));
    }
}

/// The uap-core rules as `ua-parser` reads them.
fn uap_regexes() -> ua_parser::Regexes<'static> {
    serde_json::from_str(UAP_REGEXES).expect("assets/uap-core/regexes.json parses (tested)")
}

/// The needs ([`Needs`]) of the browser, OS and device rules, read once.
fn uap_needs() -> &'static [Needs; 3] {
    static NEEDS: OnceLock<[Needs; 3]> = OnceLock::new();
    NEEDS.get_or_init(|| {
        let r = uap_regexes();
        [
            Needs::of(r.user_agent_parsers.iter().map(|p| &*p.regex)),
            Needs::of(r.os_parsers.iter().map(|p| &*p.regex)),
            Needs::of(r.device_parsers.iter().map(|p| &*p.regex)),
        ]
    })
}

/// Reads what each rule needs (`needs`), ahead of [`rules_for`].
pub fn read_needs() {
    uap_needs();
    Bots::needs();
}

/// Which rules of each list to compile: browser, OS, device, crawler.
type Wanted = [Vec<bool>; 4];

impl Parsers {
    /// Every rule, or those `keep` wants.
    fn compile(keep: Option<&Wanted>) -> Parsers {
        let mut regexes = uap_regexes();
        if let Some([ua, os, device, _]) = keep {
            keep_wanted(&mut regexes.user_agent_parsers, ua);
            keep_wanted(&mut regexes.os_parsers, os);
            keep_wanted(&mut regexes.device_parsers, device);
        }
        let uap =
            ua_parser::Extractor::try_from(regexes).expect("uap-core regexes compile (tested)");
        Parsers {
            uap,
            bots: Bots::embedded_where(keep.map(|k| &k[3][..])),
        }
    }

    /// The rules one of `agents` could meet, compiled: they classify each of
    /// `agents` as [`parsers`] does (see `needs`), in a fraction of the time
    /// for a log's few agents (84 distinct in the 1 GiB bench log: 22 ms
    /// instead of 96 ms for uap-core's rules alone, timed in place).
    pub fn for_agents<'a>(agents: impl IntoIterator<Item = &'a [u8]> + Clone) -> Parsers {
        let [ua, os, device] = uap_needs();
        let wanted = [ua, os, device, Bots::needs()].map(|n| n.wanted(agents.clone()));
        Parsers::compile(Some(&wanted))
    }
}

/// Classifies one agent without a cache (bytes that are not UTF-8 are read
/// lossily, as a log's agent field may hold anything).
pub fn parse(agent: &[u8]) -> Agent {
    let text = String::from_utf8_lossy(agent);
    parsers().classify(&text)
}

impl Parsers {
    fn classify(&self, ua: &str) -> Agent {
        let (browser, browser_major): (Box<str>, _) = match self.uap.ua.extract(ua) {
            Some(v) => (v.family.as_ref().into(), v.major.map(Into::into)),
            None => ("Other".into(), None),
        };
        let (os, os_version): (Box<str>, _) = match self.uap.os.extract(ua) {
            Some(v) => (
                v.os.as_ref().into(),
                os_version(v.major.as_deref(), v.minor.as_deref()),
            ),
            None => ("Other".into(), None),
        };
        let device = self.uap.dev.extract(ua);
        let device = device.as_ref().map_or("Other", |d| d.device.as_ref());
        let mut bot = self.bots.classify(ua);
        if bot.is_none() && device == "Spider" {
            bot = Some(Bot {
                name: spider_name(ua, &browser),
                category: BotCategory::Other,
            });
        }
        let device = device_kind(device, &os, ua, bot.is_some());
        Agent {
            browser,
            browser_major,
            os,
            os_version,
            device,
            bot,
        }
    }
}

/// The name of a bot only uap-core knows: the agent's first product token
/// ("Tailrank/1.0 (+http://tailrank.com/robot)" -> "Tailrank", where uap-core's
/// family is "robot"), or uap-core's family when the agent starts with
/// "Mozilla" (uap-core then took the bot's token from the comment).
fn spider_name(ua: &str, family: &str) -> Box<str> {
    let token = ua.split(['/', ' ', '(', ';']).next().unwrap_or("");
    if !token.is_empty() && token != "Mozilla" {
        token.into()
    } else if family != "Other" {
        family.into()
    } else {
        "Other bot".into()
    }
}

fn os_version(major: Option<&str>, minor: Option<&str>) -> Option<Box<str>> {
    match (major, minor) {
        (Some(a), Some(b)) => Some(format!("{a}.{b}").into()),
        (Some(a), None) => Some(a.into()),
        _ => None,
    }
}

/// OS families (uap-core's names) of phones and of desktops.
const MOBILE_OS: &[&str] = &[
    "iOS",
    "Android",
    "Windows Phone",
    "BlackBerry OS",
    "KaiOS",
    "Symbian OS",
    "Firefox OS",
];
const DESKTOP_OS: &[&str] = &[
    "Windows",
    "Mac OS X",
    "Linux",
    "Ubuntu",
    "Fedora",
    "Debian",
    "Chrome OS",
    "FreeBSD",
    "OpenBSD",
    "NetBSD",
    "Solaris",
];

/// uap-core names devices ("iPhone", "iPad", "Samsung SM-T970", "Spider"),
/// not kinds: a kind follows from the device and the OS. An Android agent
/// without "Mobile" is a tablet, as Google tells sites to read it.
fn device_kind(device: &str, os: &str, ua: &str, bot: bool) -> DeviceKind {
    if bot || device == "Spider" {
        DeviceKind::Bot
    } else if device.contains("iPad")
        || device.contains("Tablet")
        || (os == "Android" && !ua.contains("Mobile"))
    {
        DeviceKind::Tablet
    } else if MOBILE_OS.contains(&os) || device.contains("iPhone") || device.contains("Smartphone")
    {
        DeviceKind::Mobile
    } else if DESKTOP_OS.contains(&os) {
        DeviceKind::Desktop
    } else {
        DeviceKind::Other
    }
}

/// A worker thread's memo of classified agents (see the module comment).
pub struct AgentCache<'p> {
    map: HashMap<Box<[u8]>, Agent>,
    limit: usize,
    parsers: &'p Parsers,
    /// How many times the cache was emptied for being full.
    pub restarts: u64,
}

impl Default for AgentCache<'static> {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentCache<'static> {
    /// Distinct agents kept before the cache starts again (at about 300
    /// bytes an entry, some 20 MB per thread).
    pub const DEFAULT_LIMIT: usize = 65_536;

    /// A cache of agents classified by every rule ([`parsers`]).
    pub fn new() -> Self {
        Self::with_limit(Self::DEFAULT_LIMIT)
    }

    pub fn with_limit(limit: usize) -> Self {
        AgentCache::with_parsers(parsers(), limit)
    }
}

impl<'p> AgentCache<'p> {
    /// A cache of agents classified by `parsers` (those of
    /// [`Parsers::for_agents`] for the agents it will be asked).
    pub fn with_parsers(parsers: &'p Parsers, limit: usize) -> Self {
        AgentCache {
            map: HashMap::new(),
            limit: limit.max(1),
            parsers,
            restarts: 0,
        }
    }

    /// The agent's classification: one hash lookup when it was seen before.
    pub fn get(&mut self, agent: &[u8]) -> &Agent {
        if self.map.len() >= self.limit && !self.map.contains_key(agent) {
            self.map.clear();
            self.restarts += 1;
        }
        let parsers = self.parsers;
        self.map
            .entry_ref(agent)
            .or_insert_with(|| parsers.classify(&String::from_utf8_lossy(agent)))
    }

    /// Distinct agents held now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rules compiled ahead serve the agents they were compiled for, and
    /// classify them as every rule does; for any other agent they are not
    /// taken.
    #[test]
    fn rules_compiled_ahead_serve_only_their_agents() {
        let seen: [&[u8]; 3] = [
            b"Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)",
            b"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
            b"curl/8.5.0",
        ];
        let rules = Ahead::start(seen).covering(seen[..2].iter().copied());
        let rules = rules.expect("rules for agents among those compiled for");
        for a in &seen[..2] {
            let text = String::from_utf8_lossy(a);
            assert_eq!(rules.classify(&text), parse(a));
        }
        let other: &[u8] = b"Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)";
        let more = seen.iter().copied().chain([other]);
        assert!(Ahead::start(seen).covering(more).is_none());
    }
}
