//! User agents and bots on real agent strings: the browsers people use, the
//! bots issue 38 names, and every example the crawler list carries.

use wf_report::agent::{parse, AgentCache, DeviceKind, Parsers};
use wf_report::bots::{BotCategory, Bots};

/// (agent, browser family, major, OS family, OS version, device kind)
const BROWSERS: &[(&str, &str, &str, &str, &str, DeviceKind)] = &[
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Chrome", "120", "Windows", "10", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Chrome", "120", "Mac OS X", "10.15", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Chrome", "120", "Linux", "", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
        "Chrome Mobile", "120", "Android", "10", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        "Chrome", "120", "Android", "13", DeviceKind::Tablet,
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1",
        "Chrome Mobile iOS", "120", "iOS", "17.2", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
        "Firefox", "121", "Windows", "10", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:121.0) Gecko/20100101 Firefox/121.0",
        "Firefox", "121", "Mac OS X", "10.15", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
        "Firefox", "121", "Ubuntu", "", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Android 14; Mobile; rv:121.0) Gecko/121.0 Firefox/121.0",
        "Firefox Mobile", "121", "Android", "14", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15",
        "Firefox iOS", "121", "iOS", "17.2", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15",
        "Safari", "17", "Mac OS X", "10.15", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
        "Mobile Safari", "17", "iOS", "17.2", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (iPad; CPU OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
        "Mobile Safari", "17", "iOS", "17.2", DeviceKind::Tablet,
    ),
    (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0",
        "Edge", "120", "Windows", "10", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0",
        "Edge", "120", "Mac OS X", "10.15", DeviceKind::Desktop,
    ),
    (
        "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36 EdgA/120.0.0.0",
        "Edge Mobile", "120", "Android", "10", DeviceKind::Mobile,
    ),
    (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/120.2210.150 Mobile/15E148 Safari/605.1.15",
        "Edge Mobile", "120", "iOS", "17.2", DeviceKind::Mobile,
    ),
    (
        "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
        "IE", "6", "Windows", "XP", DeviceKind::Desktop,
    ),
];

use BotCategory::{AiCrawler, SearchEngine};

/// (agent, bot name, category): the bots issue 38 names, in the agents they send.
const BOTS: &[(&str, &str, BotCategory)] = &[
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", SearchEngine),
    (
        "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.199 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Googlebot", SearchEngine,
    ),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
        "bingbot", SearchEngine,
    ),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot", SearchEngine),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "GPTBot", AiCrawler),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.3; +https://openai.com/searchbot",
        "OAI-SearchBot", AiCrawler,
    ),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot",
        "ChatGPT-User", AiCrawler,
    ),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
        "ClaudeBot", AiCrawler,
    ),
    ("Mozilla/5.0 (compatible; anthropic-ai/1.0; +http://www.anthropic.com/bot.html)", "anthropic-ai", AiCrawler),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
        "PerplexityBot", AiCrawler,
    ),
    ("CCBot/2.0 (https://commoncrawl.org/faq/)", "CCBot", AiCrawler),
    (
        "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
        "Bytespider", AiCrawler,
    ),
    ("Mozilla/5.0 (compatible; Google-Extended/1.0; +http://www.google.com/bot.html)", "Google-Extended", AiCrawler),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        "Applebot", SearchEngine,
    ),
    ("Mozilla/5.0 (compatible; Applebot-Extended/0.1; +http://www.apple.com/go/applebot)", "Applebot-Extended", AiCrawler),
    (
        "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
        "meta-externalagent", AiCrawler,
    ),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36",
        "Amazonbot", AiCrawler,
    ),
];

#[test]
fn browsers_os_and_devices_of_common_agents() {
    let mut wrong = Vec::new();
    for &(ua, browser, major, os, os_version, device) in BROWSERS {
        let a = parse(ua.as_bytes());
        let got = (
            &*a.browser,
            a.browser_major.as_deref().unwrap_or(""),
            &*a.os,
            a.os_version.as_deref().unwrap_or(""),
            a.device,
        );
        if got != (browser, major, os, os_version, device) || a.bot.is_some() {
            wrong.push(format!("{ua}\n  got {got:?} bot {:?}", a.bot));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_bots_of_the_issue_are_named() {
    let mut wrong = Vec::new();
    for &(ua, name, category) in BOTS {
        let a = parse(ua.as_bytes());
        let got = a.bot.as_ref().map(|b| (&*b.name, b.category));
        if got != Some((name, category)) || a.device != DeviceKind::Bot {
            wrong.push(format!("{ua}\n  got {got:?} {:?}", a.device));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every example agent of crawler-user-agents and of the supplement is a
/// bot, and most are named by their own entry (the rest by an entry whose
/// match starts earlier: see bots.rs).
#[test]
fn every_example_of_the_lists_is_a_bot() {
    let bots = Bots::embedded();
    let examples = Bots::examples();
    assert!(examples.len() > 2000, "{} examples", examples.len());
    let missed: Vec<_> = examples
        .iter()
        .filter(|(_, ua)| bots.classify(ua).is_none())
        .collect();
    assert!(missed.is_empty(), "not seen as bots: {missed:#?}");
}

/// Bots that neither list has, which uap-core calls spiders, are named by
/// their product token, not by uap-core's family ("Other", "robot").
#[test]
fn bots_only_uap_core_knows_are_named_by_their_token() {
    for (ua, name) in [
        ("Tailrank/1.0 (+http://tailrank.com/robot)", "Tailrank"),
        (
            "FeedDemon/2.5 (http://www.newsgator.com/; Microsoft Windows XP)",
            "FeedDemon",
        ),
    ] {
        let a = parse(ua.as_bytes());
        let got = a.bot.as_ref().map(|b| (&*b.name, b.category));
        assert_eq!(got, Some((name, BotCategory::Other)), "{ua}");
        assert_eq!(a.device, DeviceKind::Bot);
    }
}

/// A bot is named as it names itself, not by the text of the pattern that
/// found it: a pattern matching a URL (`yandex\.com\/bots`, 43 Yandex bots)
/// names each by the product token of its comment, one matching inside a
/// word (`exabot` in Alexabot) by that word, and a match running past the
/// name is cut at its version or `;` (all were shown as the pattern's text:
/// "yandex.com/bots", "ContextualBot/1.0; +http://outcomes.net").
#[test]
fn bots_are_named_as_they_name_themselves() {
    let bots = Bots::embedded();
    for (ua, name) in [
        ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"),
        (
            "Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)",
            "YandexImages",
        ),
        (
            "Mozilla/5.0 (compatible; YandexBot/3.0; MirrorDetector; +http://yandex.com/bots)",
            "YandexBot",
        ),
        (
            "Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)",
            "Pinterestbot",
        ),
        (
            "Mozilla/5.0 (compatible; Alexabot/1.0; +http://www.alexa.com/help/certifyscan; certifyscan@alexa.com)",
            "Alexabot",
        ),
        ("Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)", "Exabot"),
        (
            "Mozilla/5.0 (compatible; DotBot/1.1; http://www.opensiteexplorer.org/dotbot, help@moz.com)",
            "DotBot",
        ),
        ("Mozilla/5.0 (compatible; ContextualBot/1.0; +http://outcomes.net)", "ContextualBot"),
        ("Mozilla/5.0 (compatible; Spider; +https://www.spider.com/)", "Spider"),
        // A pattern's own name is its match, not the name of the bot its
        // example is: `sitebot`, not "Whoiswebsitebot".
        ("Mozilla/5.0 (compatible; sitebot/1.0)", "sitebot"),
        ("Archive-It/1.0", "Archive-It"),
        (
            "Mozilla/5.0 (compatible; Whoiswebsitebot/0.1; +http://www.whoiswebsite.net)",
            "Whoiswebsitebot",
        ),
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"),
    ] {
        let got = bots.classify(ua).map(|b| b.name);
        assert_eq!(got.as_deref(), Some(name), "{ua}");
    }
}

#[test]
fn humans_are_not_bots() {
    let bots = Bots::embedded();
    for &(ua, ..) in BROWSERS {
        assert_eq!(bots.classify(ua), None, "{ua}");
    }
}

#[test]
fn odd_agents_do_not_panic() {
    for ua in [
        &b""[..],
        b"-",
        b"\xff\xfe\x00 Mozilla/5.0 \xc3",
        &[b'a'; 10_000][..],
    ] {
        let a = parse(ua);
        assert!(!a.browser.is_empty() && !a.os.is_empty());
    }
    assert_eq!(parse(b"-").bot, None);
}

/// The cache answers as the plain parse does, hit or miss, and when it is
/// restarted for being full.
#[test]
fn cache_equals_uncached_parse() {
    let mut agents: Vec<String> = BROWSERS.iter().map(|b| b.0.to_owned()).collect();
    agents.extend(BOTS.iter().map(|b| b.0.to_owned()));
    agents.extend(Bots::examples().into_iter().map(|(_, ua)| ua).step_by(7));
    let plain: Vec<_> = agents.iter().map(|ua| parse(ua.as_bytes())).collect();
    let mut big = AgentCache::new();
    let mut tiny = AgentCache::with_limit(5);
    for round in 0..3 {
        for (i, ua) in agents.iter().enumerate() {
            // Reversed on odd rounds so that hits and misses interleave differently.
            let i = if round % 2 == 1 {
                agents.len() - 1 - i
            } else {
                i
            };
            let ua = if round % 2 == 1 { &agents[i] } else { ua };
            assert_eq!(big.get(ua.as_bytes()), &plain[i], "{ua}");
            assert_eq!(tiny.get(ua.as_bytes()), &plain[i], "{ua}");
        }
    }
    assert_eq!(big.restarts, 0);
    assert!(big.len() <= agents.len());
    assert!(tiny.restarts > 0 && tiny.len() <= 5);
}

/// The agents of uap-core's tests, of both bot lists' examples and of the
/// tables above.
fn corpus() -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Case {
        user_agent_string: String,
    }
    let mut agents: Vec<String> = BROWSERS.iter().map(|b| b.0.to_owned()).collect();
    agents.extend(BOTS.iter().map(|b| b.0.to_owned()));
    agents.extend(Bots::examples().into_iter().map(|(_, ua)| ua));
    for json in [
        include_str!("data/uap-core/test_ua.json"),
        include_str!("data/uap-core/test_os.json"),
    ] {
        let cases: Vec<Case> = serde_json::from_str(json).expect("test data parses");
        agents.extend(cases.into_iter().map(|c| c.user_agent_string));
    }
    agents.sort();
    agents.dedup();
    agents
}

/// The rules a set of agents could meet (`needs`) classify each of them as
/// every rule does: all of uap-core's test agents and the lists' examples
/// at once (3,000-odd), and one at a time, each with its own few rules.
#[test]
fn the_rules_agents_could_meet_classify_them_as_every_rule_does() {
    let agents = corpus();
    assert!(agents.len() > 3000, "{}", agents.len());
    let every = |ua: &str| parse(ua.as_bytes());
    let met = Parsers::for_agents(agents.iter().map(|a| a.as_bytes()));
    let mut cache = AgentCache::with_parsers(&met, AgentCache::DEFAULT_LIMIT);
    for ua in &agents {
        assert_eq!(cache.get(ua.as_bytes()), &every(ua), "{ua}");
    }
    for ua in agents.iter().step_by(25) {
        let own = Parsers::for_agents([ua.as_bytes()]);
        let mut cache = AgentCache::with_parsers(&own, 4);
        assert_eq!(cache.get(ua.as_bytes()), &every(ua), "{ua} alone");
    }
}
