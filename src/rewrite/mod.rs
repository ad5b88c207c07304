//! Source rewriting: turns a fence solution into byte-range edits and applies them.
//!
//! An [`Edit`] is a byte range of the original text plus its replacement (ruff's model). Edits
//! are computed only from the spans the front end recorded for statements and slots, so the
//! rewriter never searches the text for where a statement is:
//!
//! * a new fence at `SlotPlace::Before { stmt }` becomes a new line before the statement, with the
//!   statement's indentation — or, when the statement does not start its line, the fence is put
//!   inline just before it;
//! * a new fence at `SlotPlace::BlockEnd { close, .. }` becomes a new line before the closing
//!   brace, indented like the block's last statement;
//! * strengthening a program fence replaces its memory-order argument only.
//!
//! Line endings follow the file (LF or CRLF). Edits are sorted and must not overlap; applying
//! them is a single pass.
//!
//! **Architecture invariant:** `rewrite` is the only stage that produces source text.

use crate::ir::{MemOrder, Program, SlotPlace, Span};
use crate::trace::Site;
use std::fmt;

/// Replace `source[start..end]` by `text`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RewriteError {
    Overlap { at: usize },
    OutOfRange { at: usize },
    NoOrderArgument { line: usize },
}

impl fmt::Display for RewriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteError::Overlap { at } => write!(f, "overlapping edits at byte {at}"),
            RewriteError::OutOfRange { at } => write!(f, "edit outside the file at byte {at}"),
            RewriteError::NoOrderArgument { line } => {
                write!(
                    f,
                    "the fence on line {line} has no memory-order argument to edit"
                )
            }
        }
    }
}

impl std::error::Error for RewriteError {}

/// Where a fence edit lands in the original file (1-based), for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The C spelling of a fence statement.
pub fn fence_text(order: MemOrder) -> String {
    format!("atomic_thread_fence(memory_order_{});", order.c_name())
}

fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The whitespace before `at` on its line, if only whitespace precedes it.
fn indent_before(src: &str, at: usize) -> Option<&str> {
    let ls = line_start(src, at);
    let prefix = &src[ls..at];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(prefix)
}

fn newline(src: &str) -> &'static str {
    if src.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// The indentation unit the file uses (a tab, or the smallest run of leading spaces).
fn indent_unit(src: &str) -> String {
    let mut best: Option<usize> = None;
    for line in src.lines() {
        if line.starts_with('\t') {
            return "\t".into();
        }
        let n = line.len() - line.trim_start_matches(' ').len();
        if n > 0 && n < line.len() {
            best = Some(best.map_or(n, |b| b.min(n)));
        }
    }
    " ".repeat(best.unwrap_or(4))
}

/// The edit inserting or strengthening one fence, and where it lands in the original file.
pub fn fence_edit(
    src: &str,
    prog: &Program,
    site: Site,
    order: MemOrder,
) -> Result<(Edit, Position), RewriteError> {
    let nl = newline(src);
    let pos = |span: &Span| Position {
        line: span.line,
        column: span.column,
    };
    match site {
        Site::Existing(stmt) => {
            let s = &prog.stmts[stmt];
            let span = s
                .order_span
                .ok_or(RewriteError::NoOrderArgument { line: s.span.line })?;
            Ok((
                Edit {
                    start: span.start,
                    end: span.end,
                    text: format!("memory_order_{}", order.c_name()),
                },
                pos(&s.span),
            ))
        }
        Site::Slot(slot) => match &prog.slots[slot].place {
            SlotPlace::Before { stmt } => {
                let span = prog.stmts[*stmt].span;
                check_range(src, span.start)?;
                let text = fence_text(order);
                Ok(match indent_before(src, span.start) {
                    Some(indent) => (
                        Edit {
                            start: line_start(src, span.start),
                            end: line_start(src, span.start),
                            text: format!("{indent}{text}{nl}"),
                        },
                        pos(&span),
                    ),
                    None => (
                        Edit {
                            start: span.start,
                            end: span.start,
                            text: format!("{text} "),
                        },
                        pos(&span),
                    ),
                })
            }
            SlotPlace::BlockEnd { after, close } => {
                check_range(src, close.start)?;
                let text = fence_text(order);
                let indent = match after {
                    Some(a) => indent_before(src, prog.stmts[*a].span.start)
                        .map(str::to_string)
                        .unwrap_or_default(),
                    None => format!(
                        "{}{}",
                        indent_before(src, close.start).unwrap_or(""),
                        indent_unit(src)
                    ),
                };
                Ok(match indent_before(src, close.start) {
                    Some(_) => {
                        let at = line_start(src, close.start);
                        (
                            Edit {
                                start: at,
                                end: at,
                                text: format!("{indent}{text}{nl}"),
                            },
                            pos(close),
                        )
                    }
                    None => (
                        Edit {
                            start: close.start,
                            end: close.start,
                            text: format!("{text} "),
                        },
                        pos(close),
                    ),
                })
            }
        },
    }
}

fn check_range(src: &str, at: usize) -> Result<(), RewriteError> {
    if at > src.len() || !src.is_char_boundary(at) {
        Err(RewriteError::OutOfRange { at })
    } else {
        Ok(())
    }
}

/// Applies edits (in any order) in one pass. Insertions at the same point keep their given order.
pub fn apply(src: &str, edits: &[Edit]) -> Result<String, RewriteError> {
    let mut sorted: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
    sorted.sort_by_key(|(i, e)| (e.start, e.end, *i));
    let mut out = String::with_capacity(src.len() + 64 * edits.len());
    let mut cursor = 0;
    for (_, e) in sorted {
        if e.start < cursor {
            return Err(RewriteError::Overlap { at: e.start });
        }
        if e.end > src.len() || e.start > e.end {
            return Err(RewriteError::OutOfRange { at: e.end });
        }
        check_range(src, e.start)?;
        check_range(src, e.end)?;
        out.push_str(&src[cursor..e.start]);
        out.push_str(&e.text);
        cursor = e.end;
    }
    out.push_str(&src[cursor..]);
    Ok(out)
}

/// A unified diff with `a/` and `b/` paths, usable by `git apply` and `patch -p1`. Empty when
/// the texts are equal.
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    if old == new {
        return String::new();
    }
    let path = path.trim_start_matches("./");
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_sorts_and_rejects_overlap() {
        let src = "abcdef";
        let e1 = Edit {
            start: 4,
            end: 4,
            text: "X".into(),
        };
        let e2 = Edit {
            start: 1,
            end: 2,
            text: "Y".into(),
        };
        assert_eq!(apply(src, &[e1.clone(), e2.clone()]).unwrap(), "aYcdXef");
        let e3 = Edit {
            start: 1,
            end: 5,
            text: String::new(),
        };
        assert!(matches!(
            apply(src, &[e2, e3]),
            Err(RewriteError::Overlap { .. })
        ));
        assert!(
            apply(src, &[e1.clone(), e1]).is_ok(),
            "two insertions at one point"
        );
    }

    #[test]
    fn indentation_detection() {
        assert_eq!(indent_unit("int x;\n\tfoo;\n"), "\t");
        assert_eq!(indent_unit("a\n  b\n    c\n"), "  ");
        assert_eq!(indent_before("  x = 1;", 2), Some("  "));
        assert_eq!(indent_before("y; x = 1;", 3), None);
    }

    #[test]
    fn diff_has_git_headers() {
        let d = unified_diff("a\nb\n", "a\nc\nb\n", "./dir/f.c");
        assert!(d.starts_with("--- a/dir/f.c\n+++ b/dir/f.c\n"), "{d}");
        assert!(d.contains("+c\n"));
        assert_eq!(unified_diff("same\n", "same\n", "f.c"), "");
    }
}
