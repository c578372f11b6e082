//! Messages to stderr that never panic.
//!
//! `eprintln!` panics when stderr cannot be written (`wf count nosuch
//! 2>/dev/full` exited 101). A message on stderr is a courtesy: when it cannot be
//! written there is nowhere left to say so, and the exit status still tells
//! what happened. So [`warn!`](crate::warn) takes `eprintln!`'s arguments and
//! drops a write error; [`text`] is `eprint!`'s counterpart.

use std::fmt;
use std::io::{self, Write};

/// Write `args` and a newline to stderr in one write, ignoring errors (what
/// [`warn!`](crate::warn) expands to).
pub fn line(args: fmt::Arguments<'_>) {
    let mut s = fmt::format(args);
    s.push('\n');
    text(&s);
}

/// Write `s` to stderr as it is, ignoring errors (`eprint!` without the panic).
pub fn text(s: &str) {
    let _ = io::stderr().lock().write_all(s.as_bytes());
}

/// `eprintln!` that ignores a failed write to stderr instead of panicking:
/// `wf::warn!("wf: {name}: {e}")`. See [`report::warn`](crate::report::warn).
#[macro_export]
macro_rules! warn {
    () => {
        $crate::report::warn::text("\n")
    };
    ($($arg:tt)*) => {
        $crate::report::warn::line(::std::format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn takes_eprintlns_arguments() {
        let x = 3;
        crate::warn!();
        crate::warn!("plain");
        crate::warn!("{x} and {}", x + 1);
    }
}
