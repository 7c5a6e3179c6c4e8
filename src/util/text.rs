//! Text gpuledger prints: one line per message, no control characters, and bounded in length.
//!
//! Messages quote what they were given — a path from the repository (a directory name may hold a
//! newline), a renderer's error output, an API server's reason — so a message could otherwise carry
//! terminal escapes, a fake workflow command on a line of its own, or megabytes of someone else's
//! text. [`line`] makes any such text one printable line of bounded length; [`printable`] keeps the
//! line structure of a report that gpuledger laid out itself and replaces every other control
//! character.

/// `1 GPU`, `2 GPUs`, `0 GPUs`: a count with its noun in the right number (the noun's plural is
/// the noun and `s`).
pub fn count(n: impl Into<u128>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The longest message gpuledger prints or stores for a reason, in characters.
pub const MAX_MESSAGE_CHARS: usize = 2000;

/// `s` as one line: newlines become ` ⏎ `, other control characters `?`, and text beyond `max`
/// characters is cut with a note of how much was left out.
pub fn line(s: &str, max: usize) -> String {
    // Redacted before it is cut, so no prefix of a secret survives the cut.
    let s = crate::util::redact::redact(s);
    let mut out = String::with_capacity(s.len().min(max * 4));
    let mut chars = s.trim_end().chars();
    for (n, c) in chars.by_ref().enumerate() {
        if n == max {
            let more = 1 + chars.count();
            out.push_str(&format!("… ({more} more characters)"));
            return out;
        }
        match c {
            '\n' => out.push_str(" ⏎ "),
            '\r' => {}
            '\t' => out.push(' '),
            c if c.is_control() || is_bidi(c) => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to `max` characters (lines kept), with a note of how much was left out.
pub fn bounded(s: &str, max: usize) -> String {
    let s = crate::util::redact::redact(s);
    let mut chars = s.chars();
    let head: String = chars.by_ref().take(max).collect();
    match chars.count() {
        0 => head,
        more => format!("{head}… ({more} more characters)"),
    }
}

/// `s` with its lines kept and every other control character (escape, carriage return, bell,
/// bidirectional overrides) replaced by `?`.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let unprintable = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi(c);
    if !s.chars().any(unprintable) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .map(|c| if unprintable(c) { '?' } else { c })
            .collect(),
    )
}

/// [`printable`], but keeping SGR sequences (`ESC [ 1 ; 31 m`: bold, colour, reset), which only
/// style the text they precede: the terminal table's own colour. Any other escape (cursor
/// movement, a title, a hyperlink) is still replaced. The table writer has already replaced the
/// escapes in text from repositories and clusters, so what is kept is the writer's.
pub fn printable_styled(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('\u{1b}') {
        let (before, at) = rest.split_at(i);
        out.push_str(&printable(before));
        let sgr = at
            .strip_prefix("\u{1b}[")
            .and_then(|t| t.find('m').map(|m| (t, m)))
            .filter(|(t, m)| {
                t.get(..*m)
                    .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit() || c == ';'))
            });
        match sgr {
            Some((t, m)) => {
                let len = 2 + m + 1;
                out.push_str(at.get(..len).unwrap_or_default());
                rest = t.get(m + 1..).unwrap_or_default();
            }
            None => {
                out.push('?');
                rest = at.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(&printable(rest));
    out
}

/// Unicode bidirectional controls, which reorder what a terminal or a browser shows.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styling_survives_and_every_other_escape_does_not() {
        assert_eq!(
            printable_styled("\u{1b}[1mbold\u{1b}[0m \u{1b}[1;31mred\u{1b}[0m"),
            "\u{1b}[1mbold\u{1b}[0m \u{1b}[1;31mred\u{1b}[0m"
        );
        assert_eq!(
            printable_styled("a\u{1b}[2Jb\u{1b}]0;title\u{7}\u{1b}[31"),
            "a?[2Jb?]0;title??[31"
        );
    }

    #[test]
    fn a_message_is_one_bounded_printable_line() {
        assert_eq!(
            line("a\nb\r\n::error::x\x1b[2J", 100),
            "a ⏎ b ⏎ ::error::x?[2J"
        );
        assert_eq!(line(&"é".repeat(10), 4), "éééé… (6 more characters)");
        assert_eq!(line("short", 5), "short");
        assert_eq!(bounded("ab\ncd", 3), "ab\n… (2 more characters)");
        assert_eq!(bounded("ab", 3), "ab");
        assert_eq!(printable("a\tb\nc\x1b]0;t\x07\u{202E}"), "a\tb\nc?]0;t??");
    }
}
