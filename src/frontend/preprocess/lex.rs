//! Preprocessing tokens (C11 §6.4, C++ [lex.pptoken]) of one file, with their byte ranges in
//! the file's text.
//!
//! Line splices (`\` before a line break) are removed before tokenising, as in translation
//! phase 2, but every token keeps the raw range it covers, so a token split by a splice maps
//! back to its first and last raw bytes. Comments are white space. A lone `'` or `"` (an
//! apostrophe in a skipped block or an `#error` message) is a one-byte token of kind
//! [`Kind::Other`], never an error: only what the preprocessor keeps is checked later.

/// What a preprocessing token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    /// A pp-number (`42`, `0x2aUL`, `1e+5`).
    Number,
    /// A character constant, with its prefix.
    Char,
    /// A string literal, with its prefix.
    Str,
    Punct,
    /// Any other byte (`@`, `$`, a lone quote).
    Other,
}

/// A preprocessing token of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    pub(crate) kind: Kind,
    /// Its spelling, without line splices.
    pub(crate) text: String,
    /// Its raw byte range in the file.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The first token of a logical line (a `#` here starts a directive).
    pub(crate) bol: bool,
    /// White space or a comment precedes it on its line.
    pub(crate) space: bool,
}

impl Tok {
    pub(crate) fn is(&self, punct: &str) -> bool {
        self.kind == Kind::Punct && self.text == punct
    }
}

/// Punctuators, longest first within each first byte (C and C++; digraphs are not
/// recognised).
const PUNCTS: &[&str] = &[
    "...", "<<=", ">>=", "->*", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "::", ".*", "[", "]", "(", ")", "{", "}",
    ".", "&", "*", "+", "-", "~", "!", "/", "%", "<", ">", "^", "|", "?", ":", ";", "=", ",", "#",
];

/// An unterminated `/* ...` comment, at its start.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unterminated(pub(crate) usize);

/// The text with line splices removed, and the raw offset of every byte kept.
fn splice(text: &str) -> (Vec<u8>, Vec<usize>) {
    let raw = text.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut at = Vec::with_capacity(raw.len() + 1);
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\' {
            let skip = match (raw.get(i + 1), raw.get(i + 2)) {
                (Some(b'\n'), _) => 2,
                (Some(b'\r'), Some(b'\n')) => 3,
                _ => 0,
            };
            if skip > 0 {
                i += skip;
                continue;
            }
        }
        bytes.push(raw[i]);
        at.push(i);
        i += 1;
    }
    at.push(raw.len());
    (bytes, at)
}

/// `$` is an identifier character, as GCC and Clang take it (Relacy's `v($)`).
fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// Tokenises `text`.
pub(crate) fn lex(text: &str) -> Result<Vec<Tok>, Unterminated> {
    let (b, at) = splice(text);
    let mut toks = Vec::new();
    let (mut bol, mut space) = (true, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            bol = true;
            space = false;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            space = true;
            continue;
        }
        if b[i..].starts_with(b"/*") {
            let Some(k) = b[i + 2..].windows(2).position(|w| w == b"*/") else {
                return Err(Unterminated(at[i]));
            };
            i += k + 4;
            space = true;
            continue;
        }
        let (kind, j) = token_at(&b, i);
        let spelled = String::from_utf8_lossy(&b[i..j]).into_owned();
        toks.push(Tok {
            kind,
            text: spelled,
            start: at[i],
            end: at[j - 1] + 1,
            bol,
            space,
        });
        bol = false;
        space = false;
        i = j;
    }
    Ok(toks)
}

/// The kind and end of the token starting at `i` (not white space or a comment).
fn token_at(b: &[u8], i: usize) -> (Kind, usize) {
    let c = b[i];
    let quote_at = |j: usize| matches!(b.get(j), Some(b'\'' | b'"'));
    // Encoding prefixes of character and string literals: L, u, U, u8.
    let prefix = match (c, b.get(i + 1), b.get(i + 2)) {
        (b'u', Some(b'8'), _) if quote_at(i + 2) => 2,
        (b'L' | b'u' | b'U', _, _) if quote_at(i + 1) => 1,
        _ => 0,
    };
    if prefix > 0 || c == b'\'' || c == b'"' {
        let q = b[i + prefix];
        if let Some(end) = quoted_end(b, i + prefix, q) {
            return (if q == b'"' { Kind::Str } else { Kind::Char }, end);
        }
        if prefix == 0 {
            return (Kind::Other, i + 1);
        }
    }
    if is_ident_start(c) {
        let mut j = i;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        return (Kind::Ident, j);
    }
    if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
        return (Kind::Number, number_end(b, i));
    }
    for p in PUNCTS {
        if b[i..].starts_with(p.as_bytes()) {
            return (Kind::Punct, i + p.len());
        }
    }
    // One UTF-8 character (or byte).
    let mut j = i + 1;
    while j < b.len() && (b[j] & 0xC0) == 0x80 {
        j += 1;
    }
    (Kind::Other, j)
}

/// The end of the literal quoted by `q` at `i`, if it is closed on its line.
fn quoted_end(b: &[u8], i: usize, q: u8) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return None,
            x if x == q => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// The end of the pp-number at `i`: digits, letters, `_`, `.`, digit separators and signs
/// after an exponent letter.
fn number_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        let x = b[j];
        let exp_sign = matches!(x, b'+' | b'-') && matches!(b[j - 1], b'e' | b'E' | b'p' | b'P');
        let separator = x == b'\'' && b.get(j + 1).is_some_and(|&n| is_ident(n));
        if is_ident(x) || x == b'.' || exp_sign || separator {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// Whether `text` is exactly one preprocessing token (what `##` must produce).
pub(crate) fn single_token(text: &str) -> Option<Kind> {
    match lex(text) {
        Ok(t) if t.len() == 1 && t[0].start == 0 && t[0].end == text.len() => Some(t[0].kind),
        _ => None,
    }
}
