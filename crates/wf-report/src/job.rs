//! The report as a scan job: each worker thread parses its chunks' records
//! with the format's parser (wf-formats, the same parsers as `wf sql`) into
//! Arrow columns, a batch of records at a time, and counts each row into its
//! own [`Acc`]; the threads' counts merge once at the end.
//!
//! Only the columns the report reads are built (client, time, request,
//! status, bytes, referrer, user agent, virtual host). A record the format
//! cannot read, or whose time or status is missing or not valid, is a failed
//! line, as GoAccess counts it; blank lines and `#` comments are skipped.
//! User agents go through one [`AgentCache`] per thread.

use std::sync::Arc;

use wf_core::jobs::{Chunk, Job};
use wf_formats::arrow_array::cast::AsArray;
use wf_formats::arrow_array::types::{Int64Type, TimestampMicrosecondType};
use wf_formats::arrow_array::{Array, ArrayRef};
use wf_formats::{Columns, Format, Kind, Parser};

use hashbrown::HashMap;

use crate::acc::{self, Acc};
use crate::agent::AgentCache;
use crate::bots::BotCategory;
use crate::rules;

/// Which requests `--bots` keeps in the panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BotMode {
    /// Humans and bots (GoAccess's default).
    #[default]
    Include,
    /// Humans only.
    Exclude,
    /// Bots only.
    Only,
}

/// A format the report cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub format: String,
    /// The column the report needs and the format lacks.
    pub missing: &'static str,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "format {} has no '{}' column: wf report needs the client (%h, $remote_addr), \
             the request line (%r, $request) and the status (%>s, $status)",
            self.format, self.missing
        )
    }
}

impl std::error::Error for FormatError {}

/// Where each column the report reads is in the parser's projection.
#[derive(Debug, Clone, Copy)]
struct Cols {
    client: usize,
    request: usize,
    status: usize,
    time: Option<usize>,
    bytes: Option<usize>,
    referrer: Option<usize>,
    agent: Option<usize>,
    vhost: Option<usize>,
}

/// The report job.
pub struct ReportJob {
    format: Arc<dyn Format>,
    projection: Vec<usize>,
    kinds: Vec<Kind>,
    cols: Cols,
    bots: BotMode,
}

/// Records parsed into columns before they are counted.
const BATCH: usize = 4096;

impl ReportJob {
    pub fn new(format: Arc<dyn Format>, bots: BotMode) -> Result<Self, FormatError> {
        let fields = format.fields();
        let mut projection = Vec::new();
        let mut find = |names: &[&str]| -> Option<usize> {
            let i = names
                .iter()
                .find_map(|n| fields.iter().position(|f| f.name == *n))?;
            projection.push(i);
            Some(projection.len() - 1)
        };
        let missing = |m| FormatError {
            format: format.name(),
            missing: m,
        };
        let client = find(&["client", "client_ip", "x_forwarded_for"]).ok_or(missing("client"))?;
        let request = find(&["request"]).ok_or(missing("request"))?;
        let status = find(&["status"]).ok_or(missing("status"))?;
        let cols = Cols {
            client,
            request,
            status,
            time: find(&["time"]),
            bytes: find(&["bytes", "bytes_sent"]),
            referrer: find(&["referrer"]),
            agent: find(&["user_agent"]),
            vhost: find(&["vhost", "host", "server_name"]),
        };
        let kinds = projection.iter().map(|&i| fields[i].kind).collect();
        Ok(ReportJob {
            format,
            projection,
            kinds,
            cols,
            bots,
        })
    }

    /// The format has a user agent column (browsers, OS and bots panels).
    pub fn has_agents(&self) -> bool {
        self.cols.agent.is_some()
    }

    /// The format has a virtual host column.
    pub fn has_vhosts(&self) -> bool {
        self.cols.vhost.is_some()
    }
}

/// One worker thread's parser, buffers and counts.
pub struct ReportState {
    parser: Box<dyn Parser>,
    columns: Columns,
    labels: Labels,
    /// Start and end, in the chunk, of each record parsed into `columns`.
    spans: Vec<(usize, usize)>,
    scratch: Scratch,
    pub acc: Acc,
}

/// A buffer reused for every row's keys.
#[derive(Default)]
struct Scratch {
    key: Vec<u8>,
}

impl Job for ReportJob {
    type State = ReportState;

    fn new_state(&self) -> ReportState {
        ReportState {
            parser: self.format.parser(&self.projection),
            columns: Columns::new(&self.kinds),
            labels: Labels::new(),
            spans: Vec::with_capacity(BATCH),
            scratch: Scratch::default(),
            acc: Acc::default(),
        }
    }

    fn process(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let sep = self.format.separator();
        let data = chunk.data;
        let mut start = 0;
        while start < data.len() {
            let end = memchr::memchr(sep, &data[start..]).map_or(data.len(), |e| start + e);
            let mut rec = &data[start..end];
            if rec.last() == Some(&b'\r') {
                rec = &rec[..rec.len() - 1];
            }
            if rec.is_empty() || rec[0] == b'#' {
                st.acc.skipped += 1;
            } else {
                st.acc.lines += 1;
                if st.parser.parse(rec, &mut st.columns) {
                    st.spans.push((start, start + rec.len()));
                    if st.spans.len() == BATCH {
                        self.flush(st, chunk);
                    }
                } else {
                    st.acc.fail(chunk.input, chunk.offset + start as u64);
                }
            }
            start = end + 1;
        }
        self.flush(st, chunk);
    }

    fn merge(&self, into: &mut ReportState, other: ReportState) {
        into.acc.merge(other.acc);
    }
}

/// The columns of one batch, typed.
struct Batch<'a> {
    arrays: &'a [ArrayRef],
    cols: Cols,
}

impl Batch<'_> {
    fn text(&self, col: usize, row: usize) -> Option<&[u8]> {
        let a = self.arrays[col].as_string_view();
        (!a.is_null(row)).then(|| a.value(row).as_bytes())
    }

    fn int(&self, col: usize, row: usize) -> Option<i64> {
        let a = self.arrays[col].as_primitive::<Int64Type>();
        (!a.is_null(row)).then(|| a.value(row))
    }

    fn time(&self, col: usize, row: usize) -> Option<i64> {
        let a = self.arrays[col].as_primitive::<TimestampMicrosecondType>();
        (!a.is_null(row)).then(|| a.value(row))
    }

    fn opt_text(&self, col: Option<usize>, row: usize) -> Option<&[u8]> {
        col.and_then(|c| self.text(c, row))
    }
}

/// One valid request, as read from a row.
struct Hit<'a> {
    client: &'a [u8],
    request: &'a [u8],
    status: u16,
    bytes: u64,
    /// Local time: (UTC microseconds, offset seconds).
    time: Option<(i64, i64)>,
    referrer: Option<&'a [u8]>,
    agent: Option<&'a [u8]>,
    vhost: Option<&'a [u8]>,
}

impl ReportJob {
    /// Counts the rows parsed so far.
    fn flush(&self, st: &mut ReportState, chunk: &Chunk<'_>) {
        let (arrays, rows) = st.columns.take();
        let batch = Batch {
            arrays: &arrays,
            cols: self.cols,
        };
        for (row, &(s, e)) in st.spans.iter().enumerate().take(rows) {
            let Some(hit) = self.hit(&batch, row, &chunk.data[s..e]) else {
                st.acc.fail(chunk.input, chunk.offset + s as u64);
                continue;
            };
            let rows = hit.agent.map(|ua| st.labels.get(ua));
            let parts = Parts {
                acc: &mut st.acc,
                scratch: &mut st.scratch,
            };
            count(parts, rows, &hit, self.bots);
        }
        st.spans.clear();
    }

    /// The row's request, or `None` for a line GoAccess calls failed (no
    /// valid status, a format with a time and no valid time in the line).
    fn hit<'a>(&self, b: &'a Batch<'_>, row: usize, record: &[u8]) -> Option<Hit<'a>> {
        let c = b.cols;
        let status = b.int(c.status, row).filter(|&s| rules::valid_status(s))? as u16;
        let time = match c.time {
            Some(t) => {
                let utc = b.time(t, row)?;
                Some((utc, rules::local_offset(record, utc)))
            }
            None => None,
        };
        Some(Hit {
            client: b.text(c.client, row).unwrap_or(b"-"),
            request: b.text(c.request, row).unwrap_or(b"-"),
            status,
            bytes: c.bytes.and_then(|x| b.int(x, row)).unwrap_or(0).max(0) as u64,
            time,
            referrer: b.opt_text(c.referrer, row),
            agent: b.opt_text(c.agent, row),
            vhost: b.opt_text(c.vhost, row),
        })
    }
}

struct Parts<'a> {
    acc: &'a mut Acc,
    scratch: &'a mut Scratch,
}

/// The rows an agent adds to in the OS, browser and bot panels, as their
/// keys ([`acc::pair`]), made once per distinct agent.
pub(crate) struct AgentRows {
    pub(crate) os: Box<str>,
    pub(crate) browser: Box<str>,
    pub(crate) bot: Option<Box<str>>,
}

/// A thread's agents by their bytes: [`AgentCache`] classifies, this keeps
/// the panel keys made of the classification, so that a line costs one hash
/// lookup and no allocation. Bounded as `AgentCache` is.
pub(crate) struct Labels {
    agents: AgentCache,
    rows: HashMap<Box<[u8]>, AgentRows>,
}

impl Labels {
    pub(crate) fn new() -> Self {
        Labels {
            agents: AgentCache::new(),
            rows: HashMap::new(),
        }
    }

    pub(crate) fn get(&mut self, ua: &[u8]) -> &AgentRows {
        if self.rows.len() >= AgentCache::DEFAULT_LIMIT && !self.rows.contains_key(ua) {
            self.rows.clear();
        }
        let agents = &mut self.agents;
        self.rows
            .entry_ref(ua)
            .or_insert_with(|| agent_rows(agents, ua))
    }
}

fn agent_rows(cache: &mut AgentCache, ua: &[u8]) -> AgentRows {
    let a = cache.get(ua);
    let key = |g: &str, i: &str| {
        let mut s = String::new();
        acc::pair(&mut s, g, i);
        s.into_boxed_str()
    };
    match &a.bot {
        Some(bot) => AgentRows {
            os: key("Crawlers", &bot.name),
            browser: key("Crawlers", &bot.name),
            bot: Some(key(category_label(bot.category), &bot.name)),
        },
        None => AgentRows {
            os: key(&a.os, &a.os_label()),
            browser: key(&a.browser, &a.browser_label()),
            bot: None,
        },
    }
}

pub fn category_label(c: BotCategory) -> &'static str {
    match c {
        BotCategory::AiCrawler => "AI crawlers",
        BotCategory::SearchEngine => "Search engines",
        BotCategory::Other => "Other bots",
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Counts one valid request into every panel (see `rules` for GoAccess's rules).
fn count(p: Parts<'_>, rows: Option<&AgentRows>, h: &Hit<'_>, mode: BotMode) {
    let is_bot = rows.as_ref().is_some_and(|r| r.bot.is_some());
    let acc = p.acc;
    if is_bot {
        acc.bot += 1;
    } else {
        acc.human += 1;
    }
    let keep = match mode {
        BotMode::Include => true,
        BotMode::Exclude => !is_bot,
        BotMode::Only => is_bot,
    };
    if !keep {
        acc.excluded += 1;
        return;
    }
    acc.hits += 1;
    acc.bytes += h.bytes;
    if h.status == 404 {
        acc.not_found_hits += 1;
    }
    let (day, hour) = match h.time {
        Some((utc, off)) => {
            acc.time(utc, off);
            let local = utc + off * 1_000_000;
            let day = local.div_euclid(MICROS_PER_DAY);
            let hour = (local.rem_euclid(MICROS_PER_DAY) / 3_600_000_000) as u8;
            (day, Some(hour))
        }
        None => (i64::MIN, None),
    };
    // GoAccess's visitor: same day, client and agent, over requests not 4xx.
    let visitor = (h.status / 100 != 4).then(|| {
        let k = &mut p.scratch.key;
        acc::visitor_key(k, day, h.client, h.agent.unwrap_or(b""));
        acc.visitor(k)
    });
    let (b, v, pn) = (h.bytes, visitor, &mut acc.panels);
    // Days, hosts and agents: visitors counted from the keys (`Panels`).
    acc::add(&mut pn.days, day, b, None);
    if let Some(hour) = hour {
        acc::add(&mut pn.hours, hour, b, v);
    }
    let req = rules::request(h.request);
    acc::req_key(&mut p.scratch.key, req.method, req.protocol, &req.url);
    let key = &p.scratch.key[..];
    if h.status == 404 {
        acc::add_bytes(&mut pn.not_found, key, b, v);
    } else if let Some(ext) = rules::static_ext(&req.url) {
        acc::add_bytes(&mut pn.static_requests, key, b, v);
        acc::add(&mut pn.extensions, ext, b, v);
    } else {
        acc::add_bytes(&mut pn.requests, key, b, v);
    }
    acc::add_bytes(&mut pn.hosts, h.client, b, None);
    acc::add(&mut pn.status, h.status, b, v);
    if let Some(r) = rows {
        acc::add_str(&mut pn.os, &r.os, b, None);
        acc::add_str(&mut pn.browsers, &r.browser, b, None);
        if let Some(bot) = &r.bot {
            acc::add_str(&mut pn.bots, bot, b, None);
        }
    }
    if let Some(r) = h.referrer {
        let r = rules::decode_url(r);
        acc::add_bytes(&mut pn.referrers, &r, b, v);
        if let Some(site) = rules::referring_site(&r) {
            acc::add_bytes(&mut pn.referring_sites, site, b, v);
        }
    }
    if let Some(vh) = h.vhost {
        acc::add_bytes(&mut pn.vhosts, vh, b, v);
    }
}
