//! Attributes: GNU `__attribute__((...))` (also `__attribute ((...))`) and standard
//! `[[...]]` (C23, C++11; `gnu::` and `clang::` names included) on declarations, functions,
//! struct members and statements.
//!
//! tree-sitter-c cannot parse an attribute after a variable's declarator (`int x
//! __attribute__((aligned(64)));`, the most common place), so attributes are taken out of the
//! text before parsing, like the parentheses of `_Atomic(T)`: every byte of one is replaced by a
//! space except line breaks, so byte offsets, lines and columns — hence spans — are unchanged.
//! Comments, string and character literals and preprocessor lines are left alone (an
//! attribute in a `#define` is refused with the `#define`).
//!
//! An attribute is accepted and ignored only when it cannot change what the program does to
//! memory: alignment and packing (cells are not bytes), optimisation and inlining hints,
//! warnings, visibility and the like ([`IGNORED`]). Any other attribute — `cleanup` (runs code
//! at scope exit), `constructor` / `destructor` (run code around `main`), `mode` and
//! `vector_size` (change the type), ... — is refused at its name: ignoring it would skip part of
//! the program silently.

use super::{DiagKind, Diagnostic, Src};

/// Attributes without effect on the memory accesses a program performs (names without
/// surrounding underscores: `__aligned__` is `aligned`).
const IGNORED: &[&str] = &[
    "access",
    "aligned",
    "alloc_align",
    "alloc_size",
    "always_inline",
    "artificial",
    "assume_aligned",
    "cold",
    "const",
    "deprecated",
    "error",
    "externally_visible",
    "fallthrough",
    "flatten",
    "format",
    "format_arg",
    "gnu_inline",
    "hot",
    "leaf",
    "likely",
    "malloc",
    "may_alias",
    "maybe_unused",
    "no_instrument_function",
    "no_sanitize",
    "no_sanitize_address",
    "no_sanitize_thread",
    "no_sanitize_undefined",
    "no_split_stack",
    "no_stack_protector",
    "noclone",
    "nodiscard",
    "noinline",
    "noipa",
    "nonnull",
    "noplt",
    "noreturn",
    "nothrow",
    "optimize",
    "packed",
    "pure",
    "returns_nonnull",
    "section",
    "sentinel",
    "target",
    "unavailable",
    "unlikely",
    "unused",
    "used",
    "visibility",
    "warn_unused_result",
    "warning",
    "weak",
];

/// The first attribute that is not in [`IGNORED`]: its byte offset and name.
type Refused = Option<(usize, String)>;

/// `text` with every attribute blanked (see the module doc), and the first one refused.
pub(crate) fn blank(text: &str) -> (String, Refused) {
    let mut bytes = text.as_bytes().to_vec();
    let mut refused: Refused = None;
    let mut i = 0;
    let mut line_start = true;
    let mut directive = false;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                // A directive goes on past a line ending in a backslash.
                let continued = i > 0 && bytes[i - 1] == b'\\'
                    || i > 1 && bytes[i - 1] == b'\r' && bytes[i - 2] == b'\\';
                directive &= continued;
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'#' if line_start => directive = true,
            _ => {}
        }
        line_start = false;
        if let Some(end) = skip_literal_or_comment(&bytes, i) {
            i = end;
            continue;
        }
        let found = if directive {
            None
        } else {
            attribute_at(&bytes, i)
        };
        match found {
            Some((end, names)) => {
                if refused.is_none() {
                    refused = names
                        .into_iter()
                        .find(|(_, n)| !IGNORED.contains(&n.as_str()));
                }
                for c in &mut bytes[i..end] {
                    if !matches!(*c, b'\n' | b'\r') {
                        *c = b' ';
                    }
                }
                i = end;
            }
            None => i += 1,
        }
    }
    // Only ASCII bytes were replaced by spaces, so this cannot fail.
    let out = String::from_utf8(bytes).unwrap_or_else(|_| text.to_string());
    (out, refused)
}

/// The diagnostic for an attribute [`blank`] refused (`at` is its byte offset in the source).
pub(crate) fn refused(src: &Src, at: usize, name: &str) -> Diagnostic {
    let before = src.text.get(..at).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let column = at - before.rfind('\n').map_or(0, |p| p + 1) + 1;
    Diagnostic {
        file: src.file.to_string(),
        line,
        column,
        kind: DiagKind::Unsupported,
        message: format!(
            "attribute `{name}` (only attributes without effect on what the program executes are \
             accepted and ignored: aligned, packed, unused, noinline, noreturn, ...)"
        ),
    }
}

/// The end of the comment, string or character literal starting at `i`, if one does.
fn skip_literal_or_comment(b: &[u8], i: usize) -> Option<usize> {
    match (b[i], b.get(i + 1)) {
        (b'/', Some(b'/')) => Some(
            b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p),
        ),
        (b'/', Some(b'*')) => Some(
            b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2),
        ),
        (q @ (b'"' | b'\''), _) => {
            let mut j = i + 1;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        }
        _ => None,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// An attribute starting at `i`: its end and the names it lists (with their offsets).
fn attribute_at(b: &[u8], i: usize) -> Option<(usize, Vec<(usize, String)>)> {
    if i > 0 && is_ident(b[i - 1]) {
        return None;
    }
    if b[i..].starts_with(b"[[") {
        let end = matching(b, i, b'[', b']')?;
        if end < i + 4 || b[end - 2] != b']' {
            return None;
        }
        return Some((end, names(b, i + 2, end - 2, true)));
    }
    let word_end = i + b[i..].iter().take_while(|c| is_ident(**c)).count();
    if !matches!(&b[i..word_end], b"__attribute__" | b"__attribute") {
        return None;
    }
    let open = word_end
        + b[word_end..]
            .iter()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
    if b.get(open) != Some(&b'(') {
        return None;
    }
    let end = matching(b, open, b'(', b')')?;
    // `((list))`: the list lies inside the inner parentheses.
    let inner = open
        + 1
        + b[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
    if b.get(inner) != Some(&b'(') {
        return Some((end, names(b, open + 1, end - 1, false)));
    }
    let inner_end = matching(b, inner, b'(', b')')?;
    Some((end, names(b, inner + 1, inner_end - 1, false)))
}

/// The end (one past the closing bracket) of the bracketed text opening at `i`, skipping
/// literals and comments inside.
fn matching(b: &[u8], i: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        if let Some(end) = skip_literal_or_comment(b, j) {
            j = end;
            continue;
        }
        if b[j] == open {
            depth += 1;
        } else if b[j] == close {
            depth -= 1;
            if depth == 0 {
                return Some(j + 1);
            }
        } else if b[j] == b';' || b[j] == b'{' || b[j] == b'}' {
            return None;
        }
        j += 1;
    }
    None
}

/// The attribute names of the comma-separated list in `b[from..to]`, normalised: surrounding
/// `__` dropped, and for `[[...]]` a `gnu::` / `clang::` / `using gnu:` prefix.
fn names(b: &[u8], from: usize, to: usize, standard: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut item = from;
    let mut j = from;
    while j <= to {
        if j < to {
            if let Some(end) = skip_literal_or_comment(b, j) {
                j = end;
                continue;
            }
        }
        let c = if j < to { b[j] } else { b',' };
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                if let Some(n) = item_name(b, item, j, standard) {
                    out.push(n);
                }
                item = j + 1;
            }
            _ => {}
        }
        j += 1;
    }
    out
}

/// The normalised name of one list item `b[from..to]` (`None` when it is empty).
fn item_name(b: &[u8], from: usize, to: usize, standard: bool) -> Option<(usize, String)> {
    let mut at = from
        + b[from..to]
            .iter()
            .take_while(|c| c.is_ascii_whitespace())
            .count();
    let name = |at: usize| {
        let len = b[at..to].iter().take_while(|c| is_ident(**c)).count();
        String::from_utf8_lossy(&b[at..at + len]).into_owned()
    };
    let mut n = name(at);
    if standard && (n == "gnu" || n == "clang") {
        let rest = &b[at + n.len()..to];
        let skip = rest
            .iter()
            .take_while(|c| c.is_ascii_whitespace() || **c == b':')
            .count();
        if skip > 0 {
            at += n.len() + skip;
            n = name(at);
        }
    }
    if n.is_empty() {
        return (at < to).then(|| (at, String::from_utf8_lossy(&b[at..to]).trim().to_string()));
    }
    let trimmed = n
        .strip_prefix("__")
        .and_then(|s| s.strip_suffix("__"))
        .unwrap_or(&n);
    Some((at, trimmed.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_name(text: &str) -> Option<String> {
        blank(text).1.map(|(_, n)| n)
    }

    /// `text` with each of `parts` replaced by spaces, line breaks kept.
    fn spaced(text: &str, parts: &[&str]) -> String {
        let mut out = text.to_string();
        for p in parts {
            let blank: String = p.chars().map(|c| if c == '\n' { c } else { ' ' }).collect();
            out = out.replacen(p, &blank, 1);
        }
        out
    }

    #[test]
    fn attributes_are_blanked_keeping_offsets_and_lines() {
        let parts = [
            "__attribute__((aligned(64)))",
            "__attribute__ ((noinline,\n  unused))",
            "[[maybe_unused]]",
            "__attribute__((section(\"a;b)\")))",
        ];
        let src = format!(
            "int x {};\n{} void f(void);\nint y {};\nint z {};\n",
            parts[0], parts[1], parts[2], parts[3]
        );
        let (out, refused) = blank(&src);
        assert_eq!(refused, None);
        assert_eq!(out, spaced(&src, &parts));
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn underscored_and_namespaced_names_are_normalised() {
        assert_eq!(
            refused_name("int x __attribute__((__aligned__(8), __unused__));"),
            None
        );
        assert_eq!(refused_name("[[gnu::always_inline]] void f(void);"), None);
        assert_eq!(
            refused_name("[[clang::noinline, nodiscard]] int f(void);"),
            None
        );
        assert_eq!(refused_name("int x __attribute(( aligned ));"), None);
        assert_eq!(refused_name("int x __attribute__(());"), None);
    }

    #[test]
    fn attributes_with_effects_are_refused_at_their_name() {
        let src = "int x;\nvoid f(void) { int v __attribute__((unused, cleanup(g))) = 1; }\n";
        let (_, refused) = blank(src);
        let (at, name) = refused.unwrap();
        assert_eq!(name, "cleanup");
        assert_eq!(&src[at..at + 7], "cleanup");
        for (text, name) in [
            (
                "__attribute__((constructor)) void init(void) {}",
                "constructor",
            ),
            (
                "typedef int v4 __attribute__((vector_size(16)));",
                "vector_size",
            ),
            ("int x __attribute__((__mode__(DI)));", "mode"),
            ("[[gnu::destructor]] void fini(void);", "destructor"),
        ] {
            assert_eq!(refused_name(text).as_deref(), Some(name), "{text}");
        }
    }

    #[test]
    fn comments_literals_and_directives_are_left_alone() {
        for text in [
            "// __attribute__((cleanup(f)))\nint x;\n",
            "/* [[gnu::constructor]] */ int x;\n",
            "const char *s = \"__attribute__((cleanup(f)))\";\n",
            "#define ALIGNED __attribute__((aligned(64)))\nint x;\n",
            "#define A \\\n  __attribute__((constructor))\nint x;\n",
        ] {
            let (out, refused) = blank(text);
            assert_eq!(out, text);
            assert_eq!(refused, None);
        }
        // Not attributes: a subscript, an identifier that merely contains the word.
        for text in ["int x = a[b[0]];", "int my__attribute__((x));"] {
            assert_eq!(blank(text).0, text);
        }
    }
}
