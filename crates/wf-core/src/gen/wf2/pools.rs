//! Pools: everything a line is made of, built once per run from the seed.

use super::names::{client_host, external_referrer, make_slug, mangled_link};
use super::time::{civil_from_days, days_from_civil};
use super::vocab::*;
use crate::gen::random::{ranked_alias, Alias, R};
use crate::gen::strs::Strs;

/// An article: its uri, page bytes and pictures (`nimg` from `img0` in
/// [`Pools::images`]).
pub(super) struct Article {
    pub(super) uri: u32,
    pub(super) bytes: u32,
    pub(super) img0: u32,
    pub(super) nimg: u32,
}

/// A picture: its uri, its -big uri, its bytes.
type Image = (u32, u32, u32);

/// A client: host and agent (indexes of strings), HTTP/1.0 or 1.1.
pub(super) struct Client {
    pub(super) host: u32,
    pub(super) agent: u32,
    pub(super) http10: bool,
}

/// The strings of the log with their popularity (`*_pop`: alias tables over the
/// pool beside them).
pub(super) struct Pools {
    strs: Strs,
    pub(super) articles: Vec<Article>,
    pub(super) art_pop: Alias,
    pub(super) art_crawl: Alias,
    pub(super) images: Vec<Image>,
    pub(super) statics: Vec<u32>,
    pub(super) categories: Vec<u32>,
    pub(super) bad: Vec<u32>,
    pub(super) bad_pop: Alias,
    pub(super) browsers: Vec<Client>,
    pub(super) browser_pop: Alias,
    pub(super) feeders: Vec<Client>,
    pub(super) feeder_pop: Alias,
    pub(super) crawlers: Vec<Client>,
    pub(super) crawler_pop: Alias,
    pub(super) refs: Vec<u32>,
    pub(super) ref_pop: Alias,
    /// Feed URI preferred by each feeder client: index into FEEDS.
    pub(super) feed_of: Vec<u8>,
    pub(super) words: Vec<u32>,
}

impl Pools {
    /// Build every pool from the seed. The steps draw from one random stream, in
    /// this order: changing the order changes the bytes.
    pub(super) fn build(seed: u64) -> Pools {
        let mut b = Builder {
            r: R::new(seed, 0x9001),
            strs: Strs::default(),
            s: String::new(),
        };
        let (articles, images, ages) = b.articles();
        let (art_pop, art_crawl) = b.article_ranks(&ages);
        let statics = STATIC
            .iter()
            .map(|(p, _)| b.strs.push(p.as_bytes()))
            .collect();
        let categories = CATEGORIES
            .iter()
            .map(|c| b.strs.push(format!("/ongoing/What/{c}/").as_bytes()))
            .collect();
        let words = b.push_all(WORDS);
        let (bad, bad_pop) = b.not_found(&articles, &art_pop);
        let browser_agents = b.push_all(BROWSER_AGENTS);
        let feed_agents = b.push_all(FEED_AGENTS);
        let (browsers, browser_pop) = b.browsers(&browser_agents);
        let (feeders, feeder_pop, feed_of) = b.feeders(&feed_agents);
        let (crawlers, crawler_pop) = b.crawlers();
        let (refs, ref_pop) = b.referrers();
        Pools {
            strs: b.strs,
            articles,
            art_pop,
            art_crawl,
            images,
            statics,
            categories,
            bad,
            bad_pop,
            browsers,
            browser_pop,
            feeders,
            feeder_pop,
            crawlers,
            crawler_pop,
            refs,
            ref_pop,
            feed_of,
            words,
        }
    }

    #[inline]
    pub(super) fn s(&self, i: u32) -> &[u8] {
        self.strs.get(i as usize)
    }
}

/// What the pools are built with: the seed's random stream, the strings so far
/// and a scratch string.
struct Builder {
    r: R,
    strs: Strs,
    s: String,
}

impl Builder {
    fn push_all(&mut self, xs: &[&str]) -> Vec<u32> {
        xs.iter().map(|x| self.strs.push(x.as_bytes())).collect()
    }

    /// Articles dated 2003-01-01 .. 2007-06-16 with slugs from the vocabulary, in
    /// date order, each with its pictures; and each article's age in days.
    fn articles(&mut self) -> (Vec<Article>, Vec<Image>, Vec<i64>) {
        let day_lo = days_from_civil(2003, 1, 1);
        let day_hi = days_from_civil(2007, 6, 16);
        let n_art = 2600;
        let mut days: Vec<i64> = (0..n_art)
            .map(|_| day_lo + self.r.below((day_hi - day_lo + 1) as u32) as i64)
            .collect();
        days.sort_unstable();
        let mut seen = std::collections::HashSet::new();
        let mut articles = Vec::with_capacity(n_art);
        let mut images = Vec::new();
        let mut ages = Vec::new();
        for &day in &days {
            let (y, m, d) = civil_from_days(day);
            let prefix = format!("/ongoing/When/{}x/{y:04}/{m:02}/{d:02}/", y / 10);
            let slug = loop {
                let slug = make_slug(&mut self.r);
                if seen.insert(format!("{prefix}{slug}")) {
                    break slug;
                }
            };
            let uri = self.strs.push(format!("{prefix}{slug}").as_bytes());
            let nimg = if self.r.bp(5500) {
                0
            } else {
                self.r.range(1, 6)
            };
            let img0 = images.len() as u32;
            for _ in 0..nimg {
                images.push(self.image(&prefix));
            }
            let r = &mut self.r;
            let bytes = 3_000 + r.below(9_000) + r.below(4) * r.below(12_000);
            articles.push(Article {
                uri,
                bytes,
                img0,
                nimg,
            });
            ages.push(day_hi - day);
        }
        (articles, images, ages)
    }

    /// One picture of the article whose URIs start with `prefix`.
    fn image(&mut self, prefix: &str) -> Image {
        let r = &mut self.r;
        let name = match r.below(4) {
            0 => format!("IMGP{:04}", r.below(10_000)),
            1 => format!("IMG_{:04}", r.below(10_000)),
            2 => r.pick(WORDS).to_string(),
            _ => format!("{}{}", r.pick(WORDS), r.pick(WORDS)),
        };
        let ext = if r.bp(6000) { "png" } else { "jpg" };
        let u = self.strs.push(format!("{prefix}{name}.{ext}").as_bytes());
        let big = self
            .strs
            .push(format!("{prefix}-big/{name}.jpg").as_bytes());
        let r = &mut self.r;
        (
            u,
            big,
            r.range(4_000, 40_000) + r.below(4) * r.below(60_000),
        )
    }

    /// Popularity ranks for readers (random, but newer articles tend to rank
    /// higher) and for crawlers (a shuffle of those).
    fn article_ranks(&mut self, ages: &[i64]) -> (Alias, Alias) {
        let r = &mut self.r;
        let mut order: Vec<usize> = (0..ages.len()).collect();
        let keys: Vec<u64> = ages
            .iter()
            .map(|&age| r.below(1000) as u64 * (age as u64 + 90))
            .collect();
        order.sort_by_key(|&i| (keys[i], i));
        let art_pop = ranked_alias(&order, 4);
        r.shuffle(&mut order);
        let art_crawl = ranked_alias(&order, 2);
        (art_pop, art_crawl)
    }

    /// 404s: fixed junk plus mangled links to popular articles, skewed.
    fn not_found(&mut self, articles: &[Article], art_pop: &Alias) -> (Vec<u32>, Alias) {
        let mut bad = self.push_all(FIXED_404);
        for _ in 0..1800 {
            let a = &articles[art_pop.sample(self.r.u())];
            let u = String::from_utf8(self.strs.get(a.uri as usize).to_vec()).unwrap();
            mangled_link(&mut self.r, &mut self.s, &u);
            bad.push(self.strs.push(self.s.as_bytes()));
        }
        self.r.shuffle(&mut bad);
        let bad_pop = Alias::zipf(bad.len(), 4);
        (bad, bad_pop)
    }

    /// Browsing clients, each keeping one of the browser `agents`.
    fn browsers(&mut self, agents: &[u32]) -> (Vec<Client>, Alias) {
        let agent_pop = Alias::zipf(agents.len(), 4);
        let browsers: Vec<Client> = (0..160_000)
            .map(|_| self.ordinary_client(agents, &agent_pop, 400))
            .collect();
        let browser_pop = Alias::zipf(browsers.len(), 3);
        (browsers, browser_pop)
    }

    /// A client with a made-up host, one of `agents` (by `agent_pop`), and HTTP/1.0
    /// with a chance of `http10_bp` / 10000.
    fn ordinary_client(&mut self, agents: &[u32], agent_pop: &Alias, http10_bp: u32) -> Client {
        client_host(&mut self.r, &mut self.s);
        Client {
            host: self.strs.push(self.s.as_bytes()),
            agent: agents[agent_pop.sample(self.r.u())],
            http10: self.r.bp(http10_bp),
        }
    }

    /// Feed readers: the aggregators, then clients each keeping one of the feed
    /// reader `agents`; and the feed each prefers (an index into FEEDS).
    fn feeders(&mut self, agents: &[u32]) -> (Vec<Client>, Alias, Vec<u8>) {
        let agent_pop = Alias::zipf(agents.len(), 4);
        let mut feeders = Vec::new();
        let mut feed_of = Vec::new();
        for (host, agent) in AGGREGATORS {
            let agent = agent.replace('#', &self.r.range(2, 900).to_string());
            feeders.push(Client {
                host: self.strs.push(host.as_bytes()),
                agent: self.strs.push(agent.as_bytes()),
                http10: false,
            });
            feed_of.push(if self.r.bp(7000) { 0 } else { 1 });
        }
        for _ in 0..40_000 {
            feeders.push(self.ordinary_client(agents, &agent_pop, 600));
            feed_of.push(match self.r.below(100) {
                0..=79 => 0,
                80..=92 => 1,
                93..=96 => 2,
                97 => 3,
                _ => 4,
            });
        }
        let feeder_pop = Alias::zipf(feeders.len(), 4);
        (feeders, feeder_pop, feed_of)
    }

    /// Crawler clients, by the weights in CRAWLERS.
    fn crawlers(&mut self) -> (Vec<Client>, Alias) {
        let r = &mut self.r;
        let cw: Vec<f64> = CRAWLERS.iter().map(|c| c.3 as f64).collect();
        let cw = Alias::new(&cw);
        let mut crawlers = Vec::new();
        for _ in 0..3_000 {
            let (tmpl, agent, http10, _) = CRAWLERS[cw.sample(r.u())];
            let n = match tmpl.find('#') {
                Some(_) if tmpl.starts_with("crawl-") || tmpl.starts_with("livebot") => {
                    format!("{}-{}", r.below(256), r.range(1, 254))
                }
                Some(_) if tmpl.starts_with("220") => {
                    format!("{}.{}", r.below(256), r.range(1, 254))
                }
                _ => format!("{:02}", r.below(100_000)),
            };
            crawlers.push(Client {
                host: self.strs.push(tmpl.replace('#', &n).as_bytes()),
                agent: self.strs.push(agent.as_bytes()),
                http10,
            });
        }
        let crawler_pop = Alias::zipf(crawlers.len(), 4);
        (crawlers, crawler_pop)
    }

    /// External referrers: aggregators and planets first (most popular), then a
    /// long tail of searches, blogs and webmail.
    fn referrers(&mut self) -> (Vec<u32>, Alias) {
        let mut refs = self.push_all(&[
            "http://www.google.com/reader/view/",
            "http://planetsun.org/",
            "http://planetjava.org/",
            "http://planet.intertwingly.net/",
            "http://www.netvibes.com/",
            "http://programming.reddit.com/",
            "http://www.techmeme.com/",
            "http://del.icio.us/popular/",
            "http://www.textuality.com/",
            "http://slashdot.org/",
            "http://www.xml.com/",
            "http://news.ycombinator.com/",
        ]);
        for _ in 0..60_000 {
            external_referrer(&mut self.r, &mut self.s);
            refs.push(self.strs.push(self.s.as_bytes()));
        }
        let ref_pop = Alias::zipf(refs.len(), 4);
        (refs, ref_pop)
    }
}
