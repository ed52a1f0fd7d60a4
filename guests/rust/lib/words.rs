//! Splits text into words separated by white space, as Go's `bytes.Fields`
//! does (Unicode white space; invalid UTF-8 is part of a word), one word at a
//! time and without allocating: the reference guests `split` and `wordkey`
//! share it.
//!
//! White space is `char::is_whitespace` (the Unicode White_Space property),
//! the same set as Go's `unicode.IsSpace`: ASCII `\t \n \v \f \r` and space,
//! U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F and
//! U+3000.
//!
//! Build: as an rlib by `guests/rust/build.sh`; test natively with
//! `rustc --edition 2021 --test words.rs -o /tmp/words && /tmp/words`.

/// The width of the UTF-8 sequence starting with `c` if it is valid at
/// `s[i..]`, and the character; `None` for an invalid byte.
#[inline]
fn decode(s: &[u8], i: usize) -> Option<(char, usize)> {
    let c = s[i];
    let n = match c {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let seq = s.get(i..i + n)?;
    let ch = core::str::from_utf8(seq).ok()?.chars().next()?;
    Some((ch, n))
}

/// The width of the white-space character at `s[i]`, or 0 if there is none.
#[inline]
fn space(s: &[u8], i: usize) -> usize {
    let c = s[i];
    if c < 0x80 {
        return matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') as usize;
    }
    match decode(s, i) {
        Some((ch, n)) if ch.is_whitespace() => n,
        _ => 0,
    }
}

/// The first word of `s` at or after byte `i`, and the index just after it;
/// `None` when no word is left. The word is a view into `s`.
///
/// ```
/// let s = "a  bc\u{3000}d".as_bytes();
/// let mut i = 0;
/// let mut words = Vec::new();
/// while let Some((w, next)) = words::next(s, i) {
///     words.push(w);
///     i = next;
/// }
/// assert_eq!(words, [&b"a"[..], b"bc", b"d"]);
/// ```
pub fn next(s: &[u8], mut i: usize) -> Option<(&[u8], usize)> {
    while i < s.len() {
        let n = space(s, i);
        if n == 0 {
            break;
        }
        i += n;
    }
    if i >= s.len() {
        return None;
    }
    let start = i;
    while i < s.len() {
        if space(s, i) != 0 {
            break;
        }
        i += if s[i] < 0x80 { 1 } else { decode(s, i).map_or(1, |(_, n)| n) };
    }
    Some((&s[start..i], i))
}

/// The first word of `s`, or `None` if `s` holds only white space.
pub fn first(s: &[u8]) -> Option<&[u8]> {
    next(s, 0).map(|(w, _)| w)
}

/// An iterator over the words of `s`.
pub fn iter(s: &[u8]) -> Words<'_> {
    Words { s, i: 0 }
}

/// The words of a byte string; see [`iter`].
pub struct Words<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (w, i) = next(self.s, self.i)?;
        self.i = i;
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &[u8]) -> Vec<&[u8]> {
        iter(s).collect()
    }

    #[test]
    fn splits_like_go_fields() {
        assert_eq!(split(b"  the quick\tbrown\n"), [&b"the"[..], b"quick", b"brown"]);
        assert!(split(b"").is_empty());
        assert!(split(b" \t\x0b\x0c\r\n").is_empty());
        assert_eq!(split("straße café".as_bytes()), ["straße".as_bytes(), "café".as_bytes()]);
        for sp in [
            '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}',
            '\u{3000}',
        ] {
            let s = format!("a{}b", sp);
            assert_eq!(split(s.as_bytes()), [&b"a"[..], b"b"], "{:?}", sp);
        }
        // Not white space: U+200B, the ASCII separators 0x1c-0x1f.
        assert_eq!(split("a\u{200b}b".as_bytes()).len(), 1);
        assert_eq!(split(b"a\x1cb").len(), 1);
        // Invalid UTF-8 is part of a word; a truncated U+00A0 is not space.
        assert_eq!(split(b"a\xff b\xc2"), [&b"a\xff"[..], b"b\xc2"]);
        assert_eq!(first(b"  x y"), Some(&b"x"[..]));
        assert_eq!(first(b"   "), None);
    }
}
