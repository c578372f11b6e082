//! The browsers fetching assets at once: what each still has to fetch after
//! its page view.
//!
//! Why a file of its own: the line maker ([`super::lines`]) holds these
//! sessions and picks from them, and the session logic ([`super::session`])
//! fills them from the line maker's random stream; with the types in
//! `session.rs` the two files imported each other.

/// Asset fetches still to come after a page view by one browser.
#[derive(Default)]
pub(super) struct Session {
    pub(super) client: u32,
    /// Article index, or u32::MAX for the home page.
    pub(super) page: u32,
    pub(super) returning: bool,
    pub(super) items: Items,
    /// The next item to fetch.
    pub(super) pos: usize,
}

/// Up to 16 asset items (a STATIC index, or ITEM_IMG or ITEM_PICINFO with an
/// index), in fetch order; more are dropped.
#[derive(Default)]
pub(super) struct Items {
    pub(super) list: [u32; 16],
    pub(super) n: usize,
}

impl Session {
    /// Whether fetches are still to come.
    #[inline]
    pub(super) fn pending(&self) -> bool {
        self.pos < self.items.n
    }
}

impl Items {
    pub(super) fn add(&mut self, x: u32) {
        if self.n < 16 {
            self.list[self.n] = x;
            self.n += 1;
        }
    }
}

/// Browsers fetching assets at once.
pub(super) const SESSIONS: usize = 4;
/// Chance (basis points) that a line continues a picked session rather than starting anew.
pub(super) const SESSION_POP_BP: u32 = 6500;
