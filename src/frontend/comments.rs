//! The comments of a source file that speak to fensyn (`// fensyn: ...`), and the one the
//! front end reads itself: `// fensyn: unroll N` on a loop.
//!
//! A directive comment targets a line, as a linter's `noqa` does:
//!
//! * a comment on a line holding code targets that line;
//! * a comment alone on its line targets the next line that holds code, skipping blank lines,
//!   lines holding only comments and lines holding only a fence statement (`fix` may write a
//!   fence between the comment and its line).
//!
//! The scan is lexical: comments inside string and character literals are not comments, and a
//! `/* ... */` comment may span lines (it targets like a comment on its first line).
//! **Invariant:** the scan depends on the text only, so a file gives the same directives
//! however it is reached (named, found in a directory, included as a header).
//!
//! `// fensyn: unroll N` (N ≥ 1) targets a loop statement (`for`, `while`, `do`, or the label
//! of a loop made by a backward `goto`): that loop is
//! unrolled N times whatever `--unroll` says, and an execution cut there is *accepted*: it
//! does not make the exploration incomplete ([`Program::loop_bounds`]). A directive whose line
//! holds no loop is an error at the comment, never ignored (the user meant to accept a bound).

use super::{DiagKind, Diagnostic};
use crate::ir::{Instr, Program};
use std::collections::BTreeMap;

/// A comment of the text: where it starts, its text (without `//`, `/*`, `*/`), and whether
/// code precedes it on its line.
struct Comment {
    line: usize,
    column: usize,
    text: String,
    after_code: bool,
}

/// The comments of `text` and, per line (index 0 = line 1), whether the line holds code.
fn lex(text: &str) -> (Vec<Comment>, Vec<bool>) {
    let b = text.as_bytes();
    let mut comments = Vec::new();
    let mut code = vec![false];
    let (mut i, mut line, mut line_start) = (0, 1usize, 0usize);
    let newline = |code: &mut Vec<bool>, line: &mut usize| {
        *line += 1;
        code.push(false);
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                newline(&mut code, &mut line);
                i += 1;
                line_start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |k| i + k);
                comments.push(Comment {
                    line,
                    column: i - line_start + 1,
                    text: text[i + 2..end].to_string(),
                    after_code: code[line - 1],
                });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k);
                comments.push(Comment {
                    line,
                    column: i - line_start + 1,
                    text: text[i + 2..end].to_string(),
                    after_code: code[line - 1],
                });
                for &c in &b[i..end] {
                    if c == b'\n' {
                        newline(&mut code, &mut line);
                    }
                }
                if let Some(k) = text[i..end].rfind('\n') {
                    line_start = i + k + 1;
                }
                i = (end + 2).min(b.len());
            }
            q @ (b'"' | b'\'') => {
                code[line - 1] = true;
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    code[line - 1] = true;
                }
                i += 1;
            }
        }
    }
    (comments, code)
}

/// A comment starting with `fensyn:`: where it is (1-based; the column of its `//` or `/*`),
/// its text (without the comment markers), and the line it targets (`None`: no code after it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub line: usize,
    pub column: usize,
    pub text: String,
    pub target: Option<usize>,
}

/// The `fensyn:` comments of `text` (one file), with their targets.
pub fn directives(text: &str) -> Vec<Directive> {
    let (comments, code) = lex(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for c in comments {
        if !c.text.trim_start().starts_with("fensyn:") {
            continue;
        }
        let target = if c.after_code || code[c.line - 1] {
            Some(c.line)
        } else {
            (c.line + 1..=code.len())
                .find(|&l| code[l - 1] && !lines.get(l - 1).is_some_and(|t| fence_only(t)))
        };
        out.push(Directive {
            line: c.line,
            column: c.column,
            text: c.text,
            target,
        });
    }
    out
}

/// The word after `fensyn:` in a directive's text and what follows it, with the offset of the
/// rest in the text; `None` when the word is not `word` (`ignored` is not `ignore`).
pub fn directive_args<'t>(text: &'t str, word: &str) -> Option<(&'t str, usize)> {
    let rest = text.trim_start().strip_prefix("fensyn:")?.trim_start();
    let after = rest.strip_prefix(word)?;
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-') {
        return None;
    }
    Some((after, text.len() - after.len()))
}

/// The bound of a `fensyn: unroll N` text: `None` when it is another directive; `Err` (offset
/// in the text, message) when N is missing, not a number or 0. Words after N are a comment.
fn parse_unroll(text: &str) -> Option<Result<u32, (usize, String)>> {
    let (after, at) = directive_args(text, "unroll")?;
    let arg = after.trim_start();
    let at = at + (after.len() - arg.len());
    let word = arg.split_whitespace().next().unwrap_or("");
    let bad = |what: &str| {
        Some(Err((
            at,
            format!("`fensyn: unroll N` needs a number of iterations from 1 up, {what}"),
        )))
    };
    match word.parse::<u32>() {
        Ok(0) => bad("got 0"),
        Ok(n) => Some(Ok(n)),
        Err(_) if word.is_empty() => bad("got nothing"),
        Err(_) => bad(&format!("got `{word}`")),
    }
}

/// The loops of `prog` by the line of their statement: (file index, line) → loop ids.
fn loops_by_line(prog: &Program) -> BTreeMap<(usize, usize), Vec<usize>> {
    let mut out: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for f in &prog.functions {
        for (pc, i) in f.body.iter().enumerate() {
            if let Instr::LoopEnter { id } = i {
                let span = prog.stmts[f.stmt_of[pc]].span;
                let key = (prog.sources.file_index(&span), span.line);
                let ids = out.entry(key).or_default();
                if !ids.contains(id) {
                    ids.push(*id);
                }
            }
        }
    }
    out
}

/// Reads the `// fensyn: unroll N` comments of the main file `src` (named `file`) and of the
/// headers of `prog` into [`Program::loop_bounds`]. A malformed directive, or one whose line
/// holds no loop, is an error at the comment; one on a loop that ends by itself after a fixed
/// number of iterations (explored whole, no bound needed) leaves a note.
pub fn apply_loop_bounds(file: &str, src: &str, prog: &mut Program) -> Result<(), Diagnostic> {
    let loops = loops_by_line(prog);
    let mut notes = Vec::new();
    let texts = std::iter::once((file, src)).chain(
        prog.sources
            .headers
            .iter()
            .map(|h| (h.name.as_str(), h.text.as_str())),
    );
    for (index, (name, text)) in texts.enumerate() {
        let lines: Vec<&str> = text.lines().collect();
        for d in directives(text) {
            let error = |column: usize, message: String| Diagnostic {
                file: name.to_string(),
                line: d.line,
                column,
                kind: DiagKind::Error,
                message,
            };
            let n = match parse_unroll(&d.text) {
                None => continue,
                Some(Ok(n)) => n,
                // The comment's opening `//` or `/*` is two columns.
                Some(Err((at, message))) => return Err(error(d.column + 2 + at, message)),
            };
            if let Some(ids) = d.target.and_then(|t| loops.get(&(index, t))) {
                for &id in ids {
                    prog.loop_bounds.insert(id, n);
                }
                continue;
            }
            let target = d
                .target
                .and_then(|t| lines.get(t - 1))
                .copied()
                .unwrap_or("");
            if !starts_a_loop(target) {
                return Err(error(
                    d.column,
                    "`fensyn: unroll N` is not on a loop: put it on the line of a `for`, \
                     `while` or `do` (or of the label a backward `goto` jumps to), or alone on \
                     the line before it"
                        .to_string(),
                ));
            }
            notes.push(crate::ir::Note {
                span: crate::ir::Span {
                    start: 0,
                    end: 0,
                    line: d.line,
                    column: d.column,
                },
                message: "`fensyn: unroll` has no effect here: this loop ends after a fixed \
                          number of iterations, and every one is explored"
                    .to_string(),
                warning: false,
                file: Some(name.to_string()),
            });
        }
    }
    prog.notes.extend(notes);
    Ok(())
}

/// Whether a line of code starts a loop statement (`for`, `while`, `do`, maybe after the `}`
/// that closes a block).
fn starts_a_loop(line: &str) -> bool {
    let code = line.trim_start().trim_start_matches('}').trim_start();
    ["for", "while", "do"].iter().any(|k| {
        code.strip_prefix(k)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// Whether a line holds only a fence statement (and maybe a comment after it):
/// `atomic_thread_fence(...);`, `std::atomic_thread_fence(...);`, `__atomic_thread_fence(...);`.
fn fence_only(line: &str) -> bool {
    let code = line.split("/*").next().unwrap_or("");
    let code = code.split("//").next().unwrap_or("").trim();
    let call = code.trim_start_matches("std::");
    (call.starts_with("atomic_thread_fence(") || call.starts_with("__atomic_thread_fence("))
        && code.ends_with(");")
        && code.matches(';').count() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<(usize, Option<usize>)> {
        directives(text)
            .into_iter()
            .map(|d| (d.line, d.target))
            .collect()
    }

    #[test]
    fn a_lone_comment_skips_fence_lines() {
        let text = "// fensyn: ignore[race]\n\
                    \tatomic_thread_fence(memory_order_acquire); /* fensyn: read ready */\n\
                    \thits++;\n";
        assert_eq!(targets(text), [(1, Some(3)), (2, Some(2))]);
        assert!(fence_only(
            "  __atomic_thread_fence(__ATOMIC_RELEASE); // x"
        ));
        assert!(!fence_only(
            "atomic_thread_fence(memory_order_release); x++;"
        ));
    }

    #[test]
    fn strings_are_not_comments_and_block_comments_count_their_lines() {
        assert!(targets("char *s = \"// fensyn: unroll 2\";\n").is_empty());
        let text = "/* one\n   two */\n// fensyn: unroll 2\nwhile (x) y++;\n// fensyn: x\n";
        assert_eq!(targets(text), [(3, Some(4)), (5, None)]);
    }

    #[test]
    fn unroll_takes_a_positive_number_and_words_after_it() {
        assert_eq!(parse_unroll(" fensyn: unroll 4"), Some(Ok(4)));
        assert_eq!(parse_unroll(" fensyn: unroll 2 (reviewed)"), Some(Ok(2)));
        assert_eq!(parse_unroll(" fensyn: unrolled 2"), None);
        assert_eq!(parse_unroll(" fensyn: ignore"), None);
        for (bad, at, said) in [
            (" fensyn: unroll", 15, "got nothing"),
            (" fensyn: unroll 0", 16, "got 0"),
            (" fensyn: unroll four", 16, "got `four`"),
        ] {
            let (offset, message) = parse_unroll(bad).unwrap().unwrap_err();
            assert_eq!(offset, at, "{bad}");
            assert!(message.ends_with(said), "{message}");
        }
    }

    /// Each loop statement takes the bound of the directive on its line or alone above it;
    /// the others keep `--unroll`.
    #[test]
    fn loop_bounds_go_to_the_loop_of_their_line() {
        let src = "#include <stdatomic.h>\n\
                   atomic_int x;\n\
                   int main(void) {\n\
                   \tfor (int i = 0; i < 9; i++) // fensyn: unroll 2\n\
                   \t\tatomic_store(&x, i);\n\
                   \t// fensyn: unroll 5\n\
                   \tdo {\n\
                   \t\tatomic_fetch_add(&x, 1);\n\
                   \t} while (atomic_load(&x) < 20);\n\
                   \twhile (atomic_load(&x) < 30)\n\
                   \t\tatomic_fetch_add(&x, 1);\n\
                   \treturn 0;\n\
                   }\n";
        let prog = crate::frontend::parse_c("t.c", src).unwrap();
        // The counted `for` is explored whole (it has no loop id): a note says the comment
        // does nothing there.
        let bounds: Vec<(usize, u32)> = prog.loop_bounds.clone().into_iter().collect();
        assert_eq!(bounds, [(0, 5)]);
        assert!(prog
            .notes
            .iter()
            .any(|n| n.span.line == 4 && n.message.contains("no effect")));
        let src = src.replace("i < 9", "i < atomic_load(&x)");
        let prog = crate::frontend::parse_c("t.c", &src).unwrap();
        let bounds: Vec<u32> = prog.loop_bounds.values().copied().collect();
        assert_eq!(bounds, [2, 5]);
        assert_eq!(loops_by_line(&prog).len(), 3);
        let e = crate::frontend::parse_c("t.c", &src.replace("unroll 5", "unroll 0")).unwrap_err();
        assert_eq!((e.line, e.column), (6, 20), "{e}");
        assert!(starts_a_loop("\t} while (x);") && starts_a_loop("do {"));
        assert!(!starts_a_loop("int done = 0;") && !starts_a_loop("format(x);"));
    }
}
