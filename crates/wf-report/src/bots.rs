//! Named bots: which crawler a user agent is, and of which kind.
//!
//! The data is not ours. `assets/crawler-user-agents/crawler-user-agents.json`
//! (monperrus/crawler-user-agents, MIT, 1,504 patterns with tags) says that a
//! user agent is a bot and of what kind (`search-engine`, `ai-crawler`, ...);
//! `assets/bots-supplement.json`, ours and small, is consulted first and holds
//! only what that list gets wrong for the report (see the file's descriptions):
//! Applebot-Extended (the list calls it Applebot) and Amazonbot's category.
//!
//! The list has no names, only patterns, so a bot's name is what its pattern
//! matches in the pattern's own examples (`Googlebot\/` -> `Googlebot`,
//! `[cC]laude[bB]ot` -> `ClaudeBot`, see `name_of`): one name per pattern,
//! whatever version or spelling the agent sends; but where the match is in
//! a URL or inside a word, the agent's own name (`own_name`): the pattern
//! `yandex\.com\/bots` finds 43 Yandex bots by their URL, and showed all of
//! them as "yandex.com/bots". Several patterns can match one agent (`bingbot` also
//! matches the URL in AdIdxBot's agent); the one whose match starts first in
//! the agent wins, the longer on a tie: on the list's own 2,123 examples
//! that picks the example's own entry 2,113 times, against 2,095 for the
//! first pattern in list order.
//!
//! Matching goes through `regex-filtered` (the prefilter `ua-parser` is built
//! on: an Aho-Corasick pass over literal atoms picks the few regexes worth
//! running), and only once per distinct agent (`agent::AgentCache`).

use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;

use crate::needs::{keep_wanted, Needs};

const CRAWLERS: &str = include_str!("../assets/crawler-user-agents/crawler-user-agents.json");
const SUPPLEMENT: &str = include_str!("../assets/bots-supplement.json");

/// What a bot is for, in the report's panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BotCategory {
    /// Crawls for a search index (Googlebot, bingbot, Applebot).
    SearchEngine,
    /// Crawls for AI training or answers (GPTBot, ClaudeBot, CCBot, ...).
    AiCrawler,
    /// Any other bot: monitors, SEO tools, feed fetchers, HTTP libraries.
    Other,
}

impl BotCategory {
    /// From the list's tags: `ai-crawler` first (OAI-SearchBot and
    /// PerplexityBot carry both tags), then `search-engine`.
    fn from_tags(tags: &[String]) -> Self {
        if tags.iter().any(|t| t == "ai-crawler") {
            BotCategory::AiCrawler
        } else if tags.iter().any(|t| t == "search-engine") {
            BotCategory::SearchEngine
        } else {
            BotCategory::Other
        }
    }
}

/// A named bot.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Bot {
    pub name: Box<str>,
    pub category: BotCategory,
}

/// One entry of crawler-user-agents.json (fields the report does not use
/// are ignored); the supplement adds `name` and `category`.
#[derive(Deserialize)]
struct Entry {
    pattern: String,
    #[serde(default)]
    instances: Vec<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    category: Option<BotCategory>,
}

impl<'de> Deserialize<'de> for BotCategory {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(BotCategory::from_tags(&[s]))
    }
}

/// The compiled lists.
pub struct Bots {
    supplement: Vec<(Regex, Bot)>,
    crawlers: regex_filtered::Regexes,
    named: Vec<Bot>,
}

/// Longest name kept from a pattern's match (some patterns match URLs).
const MAX_NAME: usize = 48;

impl Bots {
    /// Compiles the embedded lists (about 1,500 regexes: done once per
    /// process, see `agent::parsers`).
    pub fn embedded() -> Self {
        Self::embedded_where(None)
    }

    /// The crawler list's entries.
    fn crawlers() -> Vec<Entry> {
        serde_json::from_str(CRAWLERS)
            .expect("assets/crawler-user-agents/crawler-user-agents.json parses (tested)")
    }

    /// The needs of the crawler list's patterns (`needs`), read once.
    pub(crate) fn needs() -> &'static Needs {
        static NEEDS: OnceLock<Needs> = OnceLock::new();
        NEEDS.get_or_init(|| Needs::of(Self::crawlers().iter().map(|e| &e.pattern[..])))
    }

    /// The embedded lists, of the crawler list only the patterns `keep`
    /// wants (all without it): a pattern left out matches none of the
    /// agents asked (`agent::Parsers::for_agents`), and the others keep
    /// their order, so an agent's bot is the same. The supplement (a few
    /// patterns) is kept whole.
    pub fn embedded_where(keep: Option<&[bool]>) -> Self {
        let supplement: Vec<Entry> =
            serde_json::from_str(SUPPLEMENT).expect("assets/bots-supplement.json parses (tested)");
        let mut crawlers = Self::crawlers();
        if let Some(keep) = keep {
            keep_wanted(&mut crawlers, keep);
        }
        let supplement = supplement
            .into_iter()
            .map(|e| {
                let re = Regex::new(&e.pattern).expect("supplement patterns compile (tested)");
                let category = e.category.unwrap_or(BotCategory::from_tags(&e.tags));
                let name = e.name.clone().unwrap_or_else(|| name_of(&re, &e));
                (
                    re,
                    Bot {
                        name: name.into(),
                        category,
                    },
                )
            })
            .collect();
        let set = crawlers
            .iter()
            .try_fold(regex_filtered::Builder::new(), |b, e| b.push(&e.pattern))
            .expect("crawler-user-agents patterns compile (tested)")
            .build()
            .expect("crawler-user-agents prefilter builds (tested)");
        let named = crawlers
            .iter()
            .zip(set.regexes())
            .map(|(e, re)| Bot {
                name: name_of(re, e).into(),
                category: BotCategory::from_tags(&e.tags),
            })
            .collect();
        Bots {
            supplement,
            crawlers: set,
            named,
        }
    }

    /// The bot this agent is, if either list knows it.
    pub fn classify(&self, agent: &str) -> Option<Bot> {
        if let Some((_, bot)) = self.supplement.iter().find(|(re, _)| re.is_match(agent)) {
            return Some(bot.clone());
        }
        let (start, len, i) = self
            .crawlers
            .matching(agent)
            .filter_map(|(i, re)| re.find(agent).map(|m| (m.start(), usize::MAX - m.len(), i)))
            .min()?;
        let bot = &self.named[i];
        match own_name(agent, start..start + (usize::MAX - len)) {
            Some(name) => Some(Bot {
                name: name.into(),
                category: bot.category,
            }),
            None => Some(bot.clone()),
        }
    }

    /// Every example agent both lists carry, with the entry that gave it:
    /// test data that comes with the data.
    pub fn examples() -> Vec<(String, String)> {
        let mut out = Vec::new();
        for src in [SUPPLEMENT, CRAWLERS] {
            let entries: Vec<Entry> = serde_json::from_str(src).expect("embedded lists parse");
            for e in entries {
                out.extend(e.instances.into_iter().map(|i| (e.pattern.clone(), i)));
            }
        }
        out
    }
}

/// A pattern's name: what it matches in its examples, trimmed of
/// punctuation, the most frequent spelling (then the one with more capitals:
/// `[cC]laude[bB]ot` has one example of each, `claudebot` and `ClaudeBot`);
/// the pattern without its backslashes if it has no example.
fn name_of(re: &Regex, e: &Entry) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    // What the match is, not the name an example gives itself around it
    // (`own_name`): that is one bot's (`sitebot` in Whoiswebsitebot's
    // example), and the pattern's name is shown for the others it matches.
    for m in e.instances.iter().filter_map(|i| re.find(i)) {
        let name = clean(m.as_str());
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => seen.push((name, 1)),
        }
    }
    let capitals = |n: &str| n.chars().filter(char::is_ascii_uppercase).count();
    let best = seen
        .iter()
        .rev()
        .max_by_key(|(n, count)| (*count, capitals(n)))
        .map(|(n, _)| n.clone());
    let name = best.unwrap_or_else(|| clean(&e.pattern.replace('\\', "")));
    if name.is_empty() {
        e.pattern.clone()
    } else {
        name
    }
}

/// A match cut before a version (`/1.0`, `-0.3`), a `;` or a comment's `(`:
/// `ContextualBot/1.0; +http://outcomes.net` -> `ContextualBot`.
fn clean(raw: &str) -> String {
    let raw = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
    let b = raw.as_bytes();
    let cut = (0..b.len())
        .find(|&i| {
            b[i] == b';'
                || b[i] == b'('
                || (matches!(b[i], b'/' | b'-') && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        })
        .unwrap_or(b.len());
    let trimmed = raw[..cut].trim_matches(|c: char| !c.is_alphanumeric());
    trimmed.chars().take(MAX_NAME).collect()
}

/// The name the agent gives itself where a pattern matched `m` of it
/// inside a URL or inside a word: the pattern `yandex\.com\/bots` matches
/// the URL of YandexBot, YandexImages and 40 more (named each by its own
/// product token, `YandexBot/3.0` -> `YandexBot`), `exabot` the word
/// `Alexabot`. `None` where the match is a word of its own (`Googlebot/2.1`):
/// the pattern's name then.
fn own_name(agent: &str, m: std::ops::Range<usize>) -> Option<String> {
    let b = agent.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    let token_start = b[..m.start]
        .iter()
        .rposition(|&c| c == b' ' || c == b';' || c == b'(')
        .map_or(0, |p| p + 1);
    let token = agent[token_start..].trim_start_matches('+');
    if token.starts_with("http://") || token.starts_with("https://") || token.starts_with("www.") {
        return product_before(&agent[..token_start]);
    }
    let (Some(&first), Some(&before)) = (b.get(m.start), m.start.checked_sub(1).map(|i| &b[i]))
    else {
        return None;
    };
    if !(word(first) && word(before)) {
        return None;
    }
    let s = b[..m.start]
        .iter()
        .rposition(|&c| !word(c))
        .map_or(0, |p| p + 1);
    let e = b[m.start..]
        .iter()
        .position(|&c| !word(c))
        .map_or(b.len(), |p| m.start + p);
    let name = clean(&agent[s..e]);
    (!name.is_empty()).then_some(name)
}

/// The product a bot's comment names before a URL (`(compatible;
/// YandexBot/3.0; MirrorDetector; +http://...` -> `YandexBot`): its first
/// `Name/version`, else its first part after `compatible`; `None` outside
/// a comment that starts `compatible` (`Speedy Spider (Entireweb;
/// Beta/1.2; http://...)` names no product there).
fn product_before(head: &str) -> Option<String> {
    let open = head.rfind('(')?;
    if head[open..].contains(')') {
        return None;
    }
    let mut parts = head[open + 1..].split(';').map(str::trim);
    if !parts.next()?.eq_ignore_ascii_case("compatible") {
        return None;
    }
    let parts: Vec<&str> = parts.filter(|p| !p.is_empty()).collect();
    let versioned = parts.iter().find(|p| {
        p.split_once('/')
            .is_some_and(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
    });
    let name = clean(versioned.or(parts.first())?);
    (!name.is_empty() && !name.contains(' ')).then_some(name)
}
