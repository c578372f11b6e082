//! The texts a regex cannot match without, so that a report compiles only
//! the user-agent rules one of its agents could meet.
//!
//! Why: compiling all of uap-core's 1,196 rules and the 1,506 crawler
//! patterns is ~0.12 s of a core (`wf report` on a one-line log: 0.10-0.12 s
//! of user time), 73% of a 16 MB log's run and ~5% of the 1 GiB bench log's
//! CPU, while a log's agents are few (84 distinct in the 1 GiB bench log,
//! 194 in the two real logs here) and each meets few rules: 38 of the 362
//! browser rules, 22 of the 201 OS rules, 34 of the 633 device rules.
//!
//! A rule's needs are read from its syntax (`regex_syntax`'s HIR): a
//! literal is needed, a concatenation needs all its parts, an alternation
//! one of its branches, a repetition of at least one its body; anything else
//! (a class, an assertion, an empty or optional part, a literal that is not
//! ASCII) needs nothing. Every text a regex matches holds what it needs, so
//! a rule none of the agents' texts meets matches none of them, and leaving
//! it out of an ordered list cannot change which rule matches an agent
//! first. That holds for uap-core's rules as `ua-parser` rewrites them (its
//! `\d` and `\w` made ASCII, its `{0,N}` bounds lifted): neither changes a
//! literal or a repetition's least count. Texts are compared without case
//! (the device rules' `i` flag, and stricter never), which is exact for an
//! agent of ASCII bytes; an agent with any other byte meets every rule.

use aho_corasick::AhoCorasick;
use regex_syntax::hir::{Hir, HirKind};

/// What a pattern needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// Nothing: every text meets it.
    Nothing,
    /// The literal of this id (in [`Needs::texts`]).
    Text(usize),
    All(Vec<Need>),
    Any(Vec<Need>),
}

/// The needs of a list of patterns, with one automaton of their texts.
pub struct Needs {
    needs: Vec<Need>,
    finder: AhoCorasick,
    texts: usize,
}

impl Needs {
    /// The needs of `patterns`, in order (a pattern that does not parse
    /// needs nothing: it is kept).
    pub fn of<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Needs {
        let mut texts: Vec<Vec<u8>> = Vec::new();
        let needs = patterns
            .into_iter()
            .map(|p| match regex_syntax::Parser::new().parse(p) {
                Ok(hir) => need(&hir, &mut texts),
                Err(_) => Need::Nothing,
            })
            .collect();
        let finder = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&texts)
            .expect("an automaton of a few thousand short texts builds");
        Needs {
            needs,
            finder,
            texts: texts.len(),
        }
    }

    /// Which patterns one of `agents` could match: `true` for every one
    /// if an agent holds a byte that is not ASCII.
    pub fn wanted<'a>(&self, agents: impl IntoIterator<Item = &'a [u8]>) -> Vec<bool> {
        let mut wanted = vec![false; self.needs.len()];
        let mut seen = vec![false; self.texts];
        for agent in agents {
            if !agent.is_ascii() {
                return vec![true; self.needs.len()];
            }
            seen.iter_mut().for_each(|s| *s = false);
            for m in self.finder.find_overlapping_iter(agent) {
                seen[m.pattern().as_usize()] = true;
            }
            for (w, n) in wanted.iter_mut().zip(&self.needs) {
                *w = *w || met(n, &seen);
            }
        }
        wanted
    }
}

/// Keeps the items of `v` (patterns, in order) that `wanted` wants.
pub(crate) fn keep_wanted<T>(v: &mut Vec<T>, wanted: &[bool]) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        wanted[i - 1]
    });
}

/// What `h` needs; its literals are added to `texts` (lower case, once).
fn need(h: &Hir, texts: &mut Vec<Vec<u8>>) -> Need {
    match h.kind() {
        HirKind::Literal(l) if l.0.is_ascii() && !l.0.is_empty() => {
            let t = l.0.to_ascii_lowercase();
            let id = match texts.iter().position(|x| *x == t) {
                Some(i) => i,
                None => {
                    texts.push(t);
                    texts.len() - 1
                }
            };
            Need::Text(id)
        }
        HirKind::Capture(c) => need(&c.sub, texts),
        HirKind::Repetition(r) if r.min >= 1 => need(&r.sub, texts),
        HirKind::Concat(subs) => {
            let all: Vec<Need> = (subs.iter().map(|s| need(s, texts)))
                .filter(|n| *n != Need::Nothing)
                .collect();
            match all.len() {
                0 => Need::Nothing,
                _ => Need::All(all),
            }
        }
        HirKind::Alternation(subs) => {
            let any: Vec<Need> = subs.iter().map(|s| need(s, texts)).collect();
            match any.contains(&Need::Nothing) {
                true => Need::Nothing,
                false => Need::Any(any),
            }
        }
        _ => Need::Nothing,
    }
}

/// Whether a text holding the literals `seen` meets `n`.
fn met(n: &Need, seen: &[bool]) -> bool {
    match n {
        Need::Nothing => true,
        Need::Text(i) => seen[*i],
        Need::All(v) => v.iter().all(|n| met(n, seen)),
        Need::Any(v) => v.iter().any(|n| met(n, seen)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(patterns: &[&str], agents: &[&str]) -> Vec<bool> {
        Needs::of(patterns.iter().copied()).wanted(agents.iter().map(|a| a.as_bytes()))
    }

    #[test]
    fn a_pattern_is_wanted_when_an_agent_holds_what_it_needs() {
        let p = [
            r"(Firefox)/(\d+)",
            r"^.{0,100}?(?:bot|spider)\.html",
            r"(?:Chrome|CriOS)/(\d+)",
            r"; *(SM-[A-Z0-9]+)",
            r"\d+",
            r"(?i)kindle",
            r"Mobile(?:/\d+)? Safari",
            r"x?l",
        ];
        let got = wanted(
            &p,
            &["Mozilla/5.0 FIREFOX/120.0", "curl/8 (+http://a/BOT.html)"],
        );
        assert_eq!(got, [true, true, false, false, true, true, false, true]);
        // Both texts of a concatenation in one agent, not one in each.
        let got = wanted(&["Mobile(?:/\\d+)? Safari"], &["Mobile x", "Safari y"]);
        assert_eq!(got, [false]);
        // An agent that is not ASCII meets every pattern.
        assert_eq!(wanted(&["Firefox", "Opera"], &["K\u{212a}"]), [true, true]);
    }
}
