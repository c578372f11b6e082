//! Page views followed by their asset fetches: a few browsers at once.

use super::browsers::{Items, Session, SESSIONS};
use super::lines::{Gen, NO_BYTES};
use super::vocab::*;

/// Items that are not STATIC indexes: a picture (with its index into
/// `Pools::images` under ITEM_MASK) or the page's picture info.
const ITEM_IMG: u32 = 1 << 24;
const ITEM_PICINFO: u32 = 2 << 24;
const ITEM_MASK: u32 = (1 << 24) - 1;

impl<'a> Gen<'a> {
    /// A page view by browser `client` of article `page` (u32::MAX: the home
    /// page) starts a session of asset fetches, in a random slot.
    pub(super) fn start_session(&mut self, client: u32, page: u32, returning: bool) {
        let mut items = Items::default();
        if !returning || self.r.bp(3000) {
            self.site_assets(&mut items);
        }
        if page != u32::MAX {
            self.article_pictures(page, &mut items);
        } else if self.r.bp(4000) {
            self.home_pictures(&mut items);
        }
        let k = self.r.below(SESSIONS as u32) as usize;
        self.sess[k] = Session {
            client,
            page,
            returning,
            items,
            pos: 0,
        };
    }

    /// The style sheet, script, icons and thumbnail that a page view fetches
    /// unless the browser has them cached.
    fn site_assets(&mut self, items: &mut Items) {
        items.add(if self.r.bp(7000) { S_SERIF } else { S_SANS });
        if self.r.bp(8000) {
            items.add(S_JS);
        }
        if self.r.bp(5000) {
            items.add(S_FEEDPNG);
        }
        if self.r.bp(2500) {
            items.add(S_POTD);
        }
        if self.r.bp(1000) {
            items.add(S_RSSLOGO);
        }
        if self.r.bp(3000) {
            items.add(S_FAVICON);
        } else if self.r.bp(500) {
            items.add(S_OFAVICON);
        }
        if self.r.bp(4000) {
            // The current picture-of-the-day thumbnail changes every few days.
            let k = (self.secs / 300_000) as u32 % (STATIC.len() as u32 - S_THUMB0);
            items.add(S_THUMB0 + k);
        }
    }

    /// Most of the pictures of article `page`, sometimes their picture info.
    fn article_pictures(&mut self, page: u32, items: &mut Items) {
        let a = &self.p.articles[page as usize];
        for i in 0..a.nimg {
            if self.r.bp(9000) {
                items.add(ITEM_IMG | (a.img0 + i));
            }
        }
        if self.r.bp(3000) {
            items.add(ITEM_PICINFO);
        }
    }

    /// The home page shows recent pictures.
    fn home_pictures(&mut self, items: &mut Items) {
        let p = self.p;
        for _ in 0..self.r.below(4) {
            let a = &p.articles[p.articles.len() - 1 - self.r.below(20) as usize];
            if a.nimg > 0 {
                items.add(ITEM_IMG | a.img0);
            }
        }
    }

    /// The next asset fetch of session `k`.
    pub(super) fn asset(&mut self, k: usize) {
        let p = self.p;
        let sess = &mut self.sess[k];
        let item = sess.items.list[sess.pos];
        sess.pos += 1;
        let (client, page, returning) = (sess.client, sess.page, sess.returning);
        let c = &p.browsers[client as usize];
        let page_uri: &[u8] = if page == u32::MAX {
            b"/ongoing/"
        } else {
            p.s(p.articles[page as usize].uri)
        };
        let (mut r1, mut r2): (&[u8], &[u8]) = (SITE, page_uri);
        let (u1, u2, status, bytes): (&[u8], &[u8], u16, u32) = match item & !ITEM_MASK {
            ITEM_IMG => {
                let (u, _, b) = p.images[(item & ITEM_MASK) as usize];
                let (st, nb) = self.status_for_cached(returning);
                (p.s(u), b"", st, if nb { NO_BYTES } else { b })
            }
            ITEM_PICINFO => {
                let st = if self.r.bp(9990) { 200 } else { 500 };
                let b = if st == 200 {
                    200 + self.r.below(300)
                } else {
                    538
                };
                (
                    b"/ongoing/picInfo.xml?o=http://www.tbray.org",
                    page_uri,
                    st,
                    b,
                )
            }
            _ => {
                let (st, nb) = self.status_for_cached(returning);
                (r1, r2) = self.static_referrer(item, page_uri);
                let b = STATIC[item as usize].1;
                (
                    p.s(p.statics[item as usize]),
                    b"",
                    st,
                    if nb { NO_BYTES } else { b },
                )
            }
        };
        self.emit(c, b"GET", u1, u2, status, bytes, r1, r2);
    }

    /// Who refers to static file `item` fetched for a page: the page, the style
    /// sheet that shows a picture, or nobody for a favicon.
    fn static_referrer(&mut self, item: u32, page_uri: &'a [u8]) -> (&'a [u8], &'a [u8]) {
        if item == S_FEEDPNG || item == S_POTD || item >= S_THUMB0 {
            if self.r.bp(3000) {
                let css: &[u8] = if item == S_FEEDPNG {
                    b"/ongoing/serif.css"
                } else {
                    b"/ongoing/sans.css"
                };
                return (SITE, css);
            }
        } else if item == S_FAVICON && self.r.bp(5000) {
            return (b"-", b"");
        }
        (SITE, page_uri)
    }

    #[inline]
    fn status_for_cached(&mut self, returning: bool) -> (u16, bool) {
        if returning && self.r.bp(8000) {
            (304, true)
        } else {
            (200, false)
        }
    }
}
