//! Line generation: one block of lines from its seed, one line of a kind at a time.

use super::browsers::{Session, SESSIONS, SESSION_POP_BP};
use super::pools::{Client, Pools};
use super::time::{civil_from_days, MONTHS};
use super::vocab::*;
use super::LINES_PER_BLOCK;
use crate::gen::random::{splitmix, R};

/// Bytes of a response without a body: printed `-`.
pub(super) const NO_BYTES: u32 = u32::MAX;

/// What every block of one output shares.
pub(super) struct Cfg<'a> {
    pub(super) pools: &'a Pools,
    pub(super) seed: u64,
    /// A line is made odd when a draw is below this.
    pub(super) odd_thresh: u64,
}

/// The maker of one block: its random stream, where the lines go, the browsers
/// fetching assets and the current time stamp.
pub(super) struct Gen<'a> {
    pub(super) p: &'a Pools,
    pub(super) r: R,
    pub(super) out: &'a mut Vec<u8>,
    /// A few browsers fetching assets at once, so their lines interleave.
    pub(super) sess: [Session; SESSIONS],
    pub(super) secs: u64,
    day: u64,
    /// "[dd/Mon/yyyy:hh:mm:ss -0700]"
    date: [u8; 28],
    scratch: Vec<u8>,
}

impl Cfg<'_> {
    /// Append block `b` (LINES_PER_BLOCK lines spanning [t0_ms, t0_ms + dur_ms)) to `out`.
    pub(super) fn block(&self, b: u64, t0_ms: u64, dur_ms: u64, out: &mut Vec<u8>) {
        let mut g = Gen {
            p: self.pools,
            r: R::new(self.seed, b.wrapping_add(1)),
            out,
            sess: Default::default(),
            secs: u64::MAX,
            day: u64::MAX,
            date: *b"[01/Jan/2007:00:00:00 -0700]",
            scratch: Vec::new(),
        };
        // Random gaps between lines, scaled to the block's duration.
        let mut cum = [0u32; LINES_PER_BLOCK];
        let mut acc = 0u32;
        for c in cum.iter_mut() {
            acc += 1 + (g.r.u() >> 53) as u32;
            *c = acc;
        }
        for &c in cum.iter() {
            let t = t0_ms + dur_ms * (c as u64) / (acc as u64 + 1);
            g.set_time(t / 1000);
            let odd = self.odd_thresh != 0 && g.r.u() < self.odd_thresh;
            let start = g.out.len();
            g.line();
            if odd {
                g.oddify(start);
            }
        }
    }
}

impl<'a> Gen<'a> {
    fn set_time(&mut self, secs: u64) {
        if secs == self.secs {
            return;
        }
        self.secs = secs;
        let day = secs / 86_400;
        if day != self.day {
            self.day = day;
            let (y, m, d) = civil_from_days(day as i64);
            put2(&mut self.date[1..3], d);
            self.date[4..7].copy_from_slice(MONTHS[m as usize - 1]);
            let y = y as u32;
            put2(&mut self.date[8..10], y / 100);
            put2(&mut self.date[10..12], y % 100);
        }
        let sod = (secs % 86_400) as u32;
        put2(&mut self.date[13..15], sod / 3600);
        put2(&mut self.date[16..18], sod / 60 % 60);
        put2(&mut self.date[19..21], sod % 60);
    }

    /// One well-formed line.
    fn line(&mut self) {
        let k = self.r.below(SESSIONS as u32) as usize;
        if self.sess[k].pending() && self.r.bp(SESSION_POP_BP) {
            self.asset(k);
            return;
        }
        let x = self.r.below(10_000);
        match x {
            0..=5199 => self.feed(),
            5200..=6799 => self.article_view(),
            6800..=6999 => self.home_view(),
            7000..=8199 => self.crawl(),
            8200..=8499 => self.not_found(),
            8500..=8549 => self.hotlink(),
            8550..=8599 => self.head(),
            8600..=8619 => self.post(),
            8620..=8624 => self.server_error(),
            8625..=9149 => self.category_view(),
            9150..=9599 => self.image_direct(),
            _ => self.article_view(),
        }
    }

    fn browser(&mut self) -> u32 {
        self.p.browser_pop.sample(self.r.u()) as u32
    }

    fn feed(&mut self) {
        let p = self.p;
        let ci = p.feeder_pop.sample(self.r.u());
        let c = &p.feeders[ci];
        let (uri, st, b) = FEEDS[p.feed_of[ci] as usize];
        let (status, bytes) = match st {
            200 if p.feed_of[ci] == 0 => match self.r.below(1000) {
                0..=699 => (304, NO_BYTES),
                700..=992 => (200, self.feed_bytes()),
                993..=996 => (206, self.r.range(2_000, 60_000)),
                _ => (200, self.feed_bytes()),
            },
            200 => {
                if self.r.bp(6500) {
                    (304, NO_BYTES)
                } else {
                    (200, b)
                }
            }
            _ => (st, b - self.r.below(3) * 5),
        };
        self.emit(c, b"GET", uri.as_bytes(), b"", status, bytes, b"-", b"");
    }

    fn feed_bytes(&self) -> u32 {
        // The feed changes a few times a day.
        let v = splitmix(self.secs / 20_000);
        60_000 + (v % 15_000) as u32
    }

    fn article_view(&mut self) {
        let p = self.p;
        let ai = p.art_pop.sample(self.r.u());
        let ci = self.browser();
        let c = &p.browsers[ci as usize];
        let a = &p.articles[ai];
        let returning = self.r.bp(3000);
        let (status, bytes) = if returning && self.r.bp(3000) {
            (304, NO_BYTES)
        } else {
            (200, a.bytes)
        };
        let (r1, r2) = self.page_referrer();
        self.emit(c, b"GET", p.s(a.uri), b"", status, bytes, r1, r2);
        if self.r.bp(5500) {
            self.start_session(ci, ai as u32, returning);
        }
    }

    fn home_view(&mut self) {
        let p = self.p;
        let ci = self.browser();
        let c = &p.browsers[ci as usize];
        let returning = self.r.bp(5000);
        let (status, bytes) = if returning && self.r.bp(3000) {
            (304, NO_BYTES)
        } else {
            (200, 41_000 + (splitmix(self.secs / 20_000) % 9000) as u32)
        };
        let (r1, r2) = if self.r.bp(6000) {
            (&b"-"[..], &b""[..])
        } else {
            (p.s(p.refs[p.ref_pop.sample(self.r.u())]), &b""[..])
        };
        self.emit(c, b"GET", b"/ongoing/", b"", status, bytes, r1, r2);
        if self.r.bp(5000) {
            self.start_session(ci, u32::MAX, returning);
        }
    }

    fn category_view(&mut self) {
        let p = self.p;
        let ci = self.browser();
        let c = &p.browsers[ci as usize];
        let (uri, status, bytes) = if self.r.bp(7000) {
            let u = p.s(p.categories[self.r.below(p.categories.len() as u32) as usize]);
            (u, 200, 8_000 + self.r.below(30_000))
        } else {
            // A month index under When/.
            let a = &p.articles[self.r.below(p.articles.len() as u32) as usize];
            let u = p.s(a.uri);
            (&u[..27], 200, 5_000 + self.r.below(20_000))
        };
        let (r1, r2) = self.page_referrer();
        self.emit(c, b"GET", uri, b"", status, bytes, r1, r2);
    }

    /// Referrer for a page view: none, the blog itself, or an external site.
    fn page_referrer(&mut self) -> (&'a [u8], &'a [u8]) {
        let p: &'a Pools = self.p;
        let x = self.r.below(100);
        match x {
            0..=39 => (b"-", b""),
            40..=49 => (SITE, b"/ongoing/"),
            50..=64 => (SITE, p.s(p.articles[p.art_pop.sample(self.r.u())].uri)),
            _ => (p.s(p.refs[p.ref_pop.sample(self.r.u())]), b""),
        }
    }

    fn crawl(&mut self) {
        let p = self.p;
        let c = &p.crawlers[p.crawler_pop.sample(self.r.u())];
        let x = self.r.below(100);
        let (u, status, bytes): (&[u8], u16, u32) = match x {
            0..=71 => {
                let a = &p.articles[p.art_crawl.sample(self.r.u())];
                if self.r.bp(8500) {
                    (p.s(a.uri), 200, a.bytes)
                } else {
                    (p.s(a.uri), 304, NO_BYTES)
                }
            }
            72..=77 => (b"/robots.txt", 200, 151),
            78..=83 => {
                let cat = p.s(p.categories[self.r.below(p.categories.len() as u32) as usize]);
                if self.r.bp(5000) {
                    (&cat[..cat.len() - 1], 301, 300 + cat.len() as u32)
                } else {
                    (cat, 200, 8_000 + self.r.below(30_000))
                }
            }
            84..=88 => {
                let a = &p.articles[self.r.below(p.articles.len() as u32) as usize];
                let u = p.s(a.uri);
                (&u[..27], 200, 5_000 + self.r.below(20_000))
            }
            89..=95 => {
                let (u, big, b) = p.images[self.r.below(p.images.len() as u32) as usize];
                if self.r.bp(5000) {
                    (p.s(big), 301, 320 + self.r.below(25))
                } else {
                    (p.s(u), 200, b)
                }
            }
            96 => (b"/ongoing/ongoing.atom", 200, self.feed_bytes()),
            _ => {
                let u = p.s(p.bad[p.bad_pop.sample(self.r.u())]);
                (u, 404, 260 + u.len() as u32)
            }
        };
        self.emit(c, b"GET", u, b"", status, bytes, b"-", b"");
    }

    fn not_found(&mut self) {
        let p = self.p;
        let c = &p.browsers[self.browser() as usize];
        let u = p.s(p.bad[p.bad_pop.sample(self.r.u())]);
        let (r1, r2) = if self.r.bp(6000) {
            (&b"-"[..], &b""[..])
        } else {
            self.page_referrer()
        };
        self.emit(c, b"GET", u, b"", 404, 260 + u.len() as u32, r1, r2);
    }

    /// Image search hot-linking a -big picture: forbidden.
    fn hotlink(&mut self) {
        let p = self.p;
        let c = &p.browsers[self.browser() as usize];
        let ai = p.art_pop.sample(self.r.u());
        let a = &p.articles[ai];
        let (u, big) = if a.nimg > 0 {
            let (_, big, _) = p.images[(a.img0 + self.r.below(a.nimg)) as usize];
            (p.s(big), true)
        } else {
            (
                p.s(p.images[self.r.below(p.images.len() as u32) as usize].1),
                false,
            )
        };
        let mut sc = std::mem::take(&mut self.scratch);
        sc.clear();
        sc.extend_from_slice(b"http://images.google.");
        sc.extend_from_slice(match self.r.below(4) {
            0 => b"ca",
            1 => b"de",
            _ => b"com",
        });
        sc.extend_from_slice(b"/imgres?imgurl=http://www.tbray.org");
        sc.extend_from_slice(u);
        if big {
            sc.extend_from_slice(b"&imgrefurl=http://www.tbray.org");
            sc.extend_from_slice(p.s(a.uri));
        }
        sc.extend_from_slice(b"&h=600&w=800&sz=");
        push_u32(&mut sc, self.r.range(40, 900));
        sc.extend_from_slice(b"&hl=en&start=");
        push_u32(&mut sc, self.r.below(5) * 20);
        sc.extend_from_slice(b"&frame=small");
        let st = if self.r.bp(8500) { 403 } else { 200 };
        let bytes = if st == 403 {
            300 + u.len() as u32 / 2
        } else {
            self.r.range(50_000, 300_000)
        };
        self.emit(c, b"GET", u, b"", st, bytes, &sc, b"");
        self.scratch = sc;
    }

    fn head(&mut self) {
        let p = self.p;
        let c = &p.feeders[p.feeder_pop.sample(self.r.u())];
        let u: &[u8] = if self.r.bp(6000) {
            b"/ongoing/ongoing.atom"
        } else {
            p.s(p.articles[p.art_pop.sample(self.r.u())].uri)
        };
        let st = if self.r.bp(5000) { 200 } else { 304 };
        self.emit(c, b"HEAD", u, b"", st, NO_BYTES, b"-", b"");
    }

    /// Trackback and comment spam.
    fn post(&mut self) {
        let p = self.p;
        let c = &p.browsers[self.browser() as usize];
        let a = &p.articles[p.art_crawl.sample(self.r.u())];
        let (st, b) = match self.r.below(10) {
            0..=5 => (200, a.bytes),
            6..=8 => (404, 260 + p.s(a.uri).len() as u32),
            _ => (500, 538),
        };
        self.emit(c, b"POST", p.s(a.uri), b"", st, b, b"-", b"");
    }

    fn server_error(&mut self) {
        let p = self.p;
        let c = &p.browsers[self.browser() as usize];
        let a = &p.articles[p.art_pop.sample(self.r.u())];
        self.emit(c, b"GET", p.s(a.uri), b"", 500, 538, b"-", b"");
    }

    /// Someone following an image link directly (search results, mail, other blogs).
    fn image_direct(&mut self) {
        let p = self.p;
        let c = &p.browsers[self.browser() as usize];
        let a = &p.articles[p.art_pop.sample(self.r.u())];
        let (u, status, bytes) = if a.nimg > 0 {
            let (u, _, b) = p.images[(a.img0 + self.r.below(a.nimg)) as usize];
            if self.r.bp(500) {
                (p.s(u), 206, self.r.range(1_000, b))
            } else {
                (p.s(u), 200, b)
            }
        } else {
            (
                p.s(p.statics[S_FAVICON as usize]),
                200,
                STATIC[S_FAVICON as usize].1,
            )
        };
        let (r1, r2) = self.page_referrer();
        self.emit(c, b"GET", u, b"", status, bytes, r1, r2);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn emit(
        &mut self,
        c: &Client,
        method: &[u8],
        u1: &[u8],
        u2: &[u8],
        status: u16,
        bytes: u32,
        r1: &[u8],
        r2: &[u8],
    ) {
        let p = self.p;
        let (host, agent, http10) = (p.s(c.host), p.s(c.agent), c.http10);
        let o = &mut *self.out;
        o.extend_from_slice(host);
        o.extend_from_slice(b" - - ");
        o.extend_from_slice(&self.date);
        o.extend_from_slice(b" \"");
        o.extend_from_slice(method);
        o.push(b' ');
        o.extend_from_slice(u1);
        o.extend_from_slice(u2);
        o.extend_from_slice(if http10 {
            b" HTTP/1.0\" "
        } else {
            b" HTTP/1.1\" "
        });
        let st = status as u32;
        o.extend_from_slice(&[
            b'0' + (st / 100) as u8,
            b'0' + (st / 10 % 10) as u8,
            b'0' + (st % 10) as u8,
            b' ',
        ]);
        if bytes == NO_BYTES {
            o.push(b'-');
        } else {
            push_u32(o, bytes);
        }
        o.extend_from_slice(b" \"");
        o.extend_from_slice(r1);
        o.extend_from_slice(r2);
        o.extend_from_slice(b"\" \"");
        o.extend_from_slice(agent);
        o.extend_from_slice(b"\"\n");
    }
}

fn put2(dst: &mut [u8], v: u32) {
    dst[0] = b'0' + (v / 10 % 10) as u8;
    dst[1] = b'0' + (v % 10) as u8;
}

#[inline]
fn push_u32(o: &mut Vec<u8>, mut v: u32) {
    let mut buf = [0u8; 10];
    let mut i = 10;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    o.extend_from_slice(&buf[i..]);
}
