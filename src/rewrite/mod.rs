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
//! * strengthening a program fence replaces its memory-order argument only, in the spelling
//!   the program used (`memory_order_X`, `std::memory_order_X` or `std::memory_order::X`);
//! * a fence next to the unbraced body of an `if`/`else`/loop is written inside a new block
//!   together with that statement, in the file's brace style and indentation (`braces`).
//!
//! Fences are spelled like the file spells them ([`Spelling`]: C's
//! `atomic_thread_fence(memory_order_X);`; in C++ the qualification and order spelling the
//! file already uses, or what its `using namespace std;` allows). A fix that inserts a fence into
//! a file that does not include `<stdatomic.h>` (C) / `<atomic>` (C++) also adds that include
//! ([`include`]). Each fence can carry a comment naming in words what it orders and what it
//! pairs with ([`reason::Words`]); comments carry no line numbers, so they stay true when the
//! file is edited.
//!
//! A fence lands in the file that holds its statement: the main file or one of the user's
//! headers ([`files`]). Edits are per file, with offsets relative to that file's text; each
//! file's indentation, braces, spelling and include come from that file's own text.
//!
//! Line endings follow the file (LF or CRLF). Edits are sorted and must not overlap; applying
//! them is a single pass.
//!
//! **Architecture invariant:** `rewrite` is the only stage that produces source text.

mod braces;
pub mod files;
pub mod include;
pub mod orders;
pub mod placement;
pub mod reason;
pub mod removal;
pub mod spelling;

pub use files::{FileEdits, FileRewrite, Frame};
pub use reason::Reason;
pub use spelling::Spelling;

use crate::ir::{Lang, MemOrder, Program, SlotPlace, Span};
use crate::synth::Solution;
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
    Overlap {
        at: usize,
    },
    OutOfRange {
        at: usize,
    },
    NoOrderArgument {
        line: usize,
    },
    /// The statement on `line` holds no single atomic operation call whose order
    /// `rewrite::orders` can write.
    NoAccessCall {
        line: usize,
    },
    /// The rewritten text no longer parses (tree-sitter reports an error at `line`).
    Unparsable {
        line: usize,
    },
    /// The fence on `line` is not a statement of its own that `relax` can delete.
    NoFenceStatement {
        line: usize,
    },
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
            RewriteError::NoAccessCall { line } => write!(
                f,
                "the access on line {line} is not one atomic operation call whose order can be written"
            ),
            RewriteError::Unparsable { line } => write!(
                f,
                "the rewritten file does not parse any more (near line {line})"
            ),
            RewriteError::NoFenceStatement { line } => write!(
                f,
                "the fence on line {line} is not a statement of its own that can be deleted"
            ),
        }
    }
}

impl std::error::Error for RewriteError {}

/// Where a fence edit lands in the original file (1-based), for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    /// The file: 0 for the main file, `k` for header `k - 1` ([`files`]).
    pub file: usize,
}

/// The C spelling of a fence statement.
pub fn fence_text(order: MemOrder) -> String {
    format!("atomic_thread_fence(memory_order_{});", order.c_name())
}

/// The default spelling of a fence statement in `lang` (for a file that says nothing about
/// its own; see [`Spelling::detect`]).
pub fn fence_text_in(lang: Lang, order: MemOrder) -> String {
    Spelling::default_for(lang).fence(order)
}

/// Parses `src` with the grammar of `lang`, as the front end does (`_Atomic(T)` and
/// attributes prepared, byte offsets unchanged: node ranges slice `src` itself).
pub(crate) fn parse_tree(src: &str, lang: Lang) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    let language: tree_sitter::Language = match lang {
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
    };
    parser.set_language(&language).ok()?;
    parser.parse(crate::frontend::parse_text(src, lang), None)
}

/// The memory-order argument `order` spelled like the argument `old` it replaces:
/// `std::memory_order::X`, `memory_order::X`, `std::memory_order_X` or `memory_order_X`, or in a
/// builtin fence (`builtin`: `__atomic_thread_fence`) `__ATOMIC_X` — a number there stays a
/// number (GCC's value of the order), and any other argument (a macro) becomes `__ATOMIC_X`.
pub(crate) fn order_like(old: &str, order: MemOrder, builtin: bool) -> String {
    let compact: String = old.chars().filter(|c| !c.is_whitespace()).collect();
    let number = !compact.is_empty() && compact.bytes().all(|b| b.is_ascii_digit());
    if builtin && number {
        return spelling::builtin_value(order).to_string();
    }
    if compact.starts_with("__ATOMIC_") || (builtin && !compact.contains("memory_order")) {
        return spelling::builtin_order(order);
    }
    let name = order.c_name();
    let std = if compact.starts_with("std::") {
        "std::"
    } else {
        ""
    };
    let rest = compact.strip_prefix("std::").unwrap_or(&compact);
    if rest.starts_with("memory_order::") {
        format!("{std}memory_order::{name}")
    } else {
        format!("{std}memory_order_{name}")
    }
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

/// The edit inserting or strengthening one fence of `frame`'s file (offsets of its text), and
/// where it lands in that file. An inserted fence is spelled as `spelling` says and followed by
/// `comment` (if any) on its line; a strengthened fence's edit replaces its order argument only.
pub fn fence_edit(
    frame: &Frame,
    prog: &Program,
    site: Site,
    order: MemOrder,
    spelling: &Spelling,
    comment: Option<&str>,
) -> Result<(Edit, Position), RewriteError> {
    let src = frame.text;
    let fence = || match comment {
        Some(c) => format!("{} {c}", spelling.fence(order)),
        None => spelling.fence(order),
    };
    let pos = |span: &Span| Position {
        line: span.line,
        column: span.column,
        file: frame.index,
    };
    match site {
        Site::Existing(stmt) => {
            let s = &prog.stmts[stmt];
            let span = frame.local(
                s.order_span
                    .ok_or(RewriteError::NoOrderArgument { line: s.span.line })?,
            );
            let whole = frame.local(s.span);
            check_range(src, span.start)?;
            check_range(src, span.end)?;
            let call = &src[whole.start.min(span.start)..span.start];
            let builtin = call.contains("__atomic_thread_fence");
            Ok((
                Edit {
                    start: span.start,
                    end: span.end,
                    text: order_like(&src[span.start..span.end.max(span.start)], order, builtin),
                },
                pos(&s.span),
            ))
        }
        Site::Slot(slot) => match &prog.slots[slot].place {
            SlotPlace::Before { stmt } => {
                let span = frame.local(prog.stmts[*stmt].span);
                check_range(src, span.start)?;
                Ok((line_or_inline(src, span.start, None, &fence()), pos(&span)))
            }
            SlotPlace::BlockEnd { after, close } => {
                let close = frame.local(*close);
                check_range(src, close.start)?;
                let indent = match after {
                    Some(a) => indent_before(src, frame.local(prog.stmts[*a].span).start)
                        .map(str::to_string)
                        .unwrap_or_default(),
                    None => format!(
                        "{}{}",
                        indent_before(src, close.start).unwrap_or(""),
                        indent_unit(src)
                    ),
                };
                let edit = line_or_inline(src, close.start, Some(&indent), &fence());
                Ok((edit, pos(&close)))
            }
        },
    }
}

/// `text` on a new line before the line of `at` when only whitespace precedes `at` there
/// (indented like `at`, or by `indent`), else inline just before `at`.
fn line_or_inline(src: &str, at: usize, indent: Option<&str>, text: &str) -> Edit {
    let nl = newline(src);
    match indent_before(src, at) {
        Some(own) => {
            let start = line_start(src, at);
            Edit {
                start,
                end: start,
                text: format!("{}{text}{nl}", indent.unwrap_or(own)),
            }
        }
        None => Edit {
            start: at,
            end: at,
            text: format!("{text} "),
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

/// The edits for a whole fence solution, per file, and where each fence lands (in the order
/// given), without comments: fences spelled like their file, and the missing include when a
/// fence is inserted.
///
/// Fences next to an unbraced `if`/`else`/loop body are written together with that statement
/// inside a new block (each on its own line, in the file's brace style and indentation), so
/// the body still holds exactly the statements it held before plus the fences.
pub fn fence_edits(
    src: &str,
    prog: &Program,
    fences: &[(Site, MemOrder)],
) -> Result<(Vec<FileEdits>, Vec<Position>), RewriteError> {
    files::Parsed::new(src, prog).build(prog, fences, &[])
}

/// One fence of a fix, as the rewriter writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub site: Site,
    pub order: MemOrder,
    /// For a strengthened program fence: its order before.
    pub previous: Option<MemOrder>,
    /// Why it is there, in words (for its comment).
    pub words: Option<reason::Words>,
}

/// The fences of a solution with why each is there, in the solution's order.
pub fn plan(sol: &Solution, prog: &Program) -> Vec<Planned> {
    sol.fences
        .iter()
        .map(|f| Planned {
            site: f.site,
            order: f.order,
            previous: f.previous,
            words: reason::words(prog, sol, f),
        })
        .collect()
}

/// The rewritten files of a fix.
#[derive(Clone, Debug)]
pub struct Rewritten {
    /// The changed files, main file first, then headers in include order.
    pub files: Vec<FileRewrite>,
    /// Where each fence lands in the original files, in the order given.
    pub positions: Vec<Position>,
}

/// Writes `fences` into the files of `prog`'s unit (`src` is the main file's text):
/// [`fence_edits`] plus, with `comments`, a comment after each fence naming why it is there
/// (`/* fensyn: publish data before flag; pairs with the acquire fence in consumer() */`, no
/// line numbers; a strengthened fence's comment, `/* fensyn: was release; … */`, is a
/// separate insertion after its statement, so the order edit stays an argument-only edit).
///
/// Checks what it produces: the edits may not overlap, and when a file parses without errors
/// (tree-sitter), so must its result.
pub fn rewrite(
    src: &str,
    prog: &Program,
    fences: &[Planned],
    comments: bool,
) -> Result<Rewritten, RewriteError> {
    rewrite_with(src, prog, fences, &[], comments)
}

/// [`rewrite`] with more edits (`extra`, per file, never adding a line: `rewrite::orders`'
/// memory-order replacements) applied with the fences'.
pub fn rewrite_with(
    src: &str,
    prog: &Program,
    fences: &[Planned],
    extra: &[files::FileEdits],
    comments: bool,
) -> Result<Rewritten, RewriteError> {
    let unit = files::Parsed::new(src, prog);
    let chosen: Vec<(Site, MemOrder)> = fences.iter().map(|f| (f.site, f.order)).collect();
    let notes: Vec<Option<String>> = fences
        .iter()
        .map(|f| comments.then(|| comment(&unit, prog, f)))
        .collect();
    let (mut edits, positions) = unit.build(prog, &chosen, &notes)?;
    orders::merge(&mut edits, extra);
    let files = files::apply_all(src, prog, &edits)?;
    for f in &files {
        let lang = prog.lang;
        if unit.root(f.file).is_some_and(|r| !r.has_error()) {
            if let Some(new) = parse_tree(&f.text, lang) {
                if let Some(line) = first_error_line(new.root_node()) {
                    return Err(RewriteError::Unparsable { line });
                }
            }
        }
    }
    Ok(Rewritten { files, positions })
}

/// The comment of fence `f`: what it orders and what it pairs with, in words ([`reason::words_text`]).
fn comment(unit: &files::Parsed, prog: &Program, f: &Planned) -> String {
    let func = |at: usize| unit.function_at(prog, at).map(|(_, name)| name);
    let why = f
        .words
        .as_ref()
        .map_or(String::new(), |w| reason::words_text(w, f.order, &func));
    let text = match (f.previous, why.is_empty()) {
        (Some(p), false) => format!("was {}; {why}", p.c_name()),
        (Some(p), true) => format!("was {}", p.c_name()),
        (None, false) => why,
        (None, true) => "inserted".into(),
    };
    format!("/* fensyn: {text} */")
}

/// The 1-based line of the first ERROR or MISSING node, if any.
fn first_error_line(root: tree_sitter::Node) -> Option<usize> {
    if !root.has_error() {
        return None;
    }
    let mut stack = vec![root];
    let mut first: Option<usize> = None;
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            let l = n.start_position().row + 1;
            first = Some(first.map_or(l, |f| f.min(l)));
        }
        if n.has_error() {
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
    }
    first.or(Some(1))
}

/// The edits of `fences` (all in `frame`'s file; with `notes[i]`, when given, as fence `i`'s
/// comment) and where each fence lands. `root` is the file's tree, `spelling` how it spells
/// fences.
fn build(
    frame: &Frame,
    prog: &Program,
    (root, spelling): (Option<tree_sitter::Node>, &Spelling),
    fences: &[(Site, MemOrder)],
    notes: &[Option<&str>],
) -> Result<(Vec<Edit>, Vec<Position>), RewriteError> {
    let src = frame.text;
    let unbraced = root
        .map(|r| braces::unbraced_bodies(src, r))
        .unwrap_or_default();
    // Per unbraced statement (by span): fences before it and after it.
    let mut wrapped: std::collections::BTreeMap<(usize, usize), (Vec<String>, Vec<String>)> =
        Default::default();
    let mut edits = Vec::new();
    let mut positions = Vec::new();
    for (i, &(site, order)) in fences.iter().enumerate() {
        let note = notes.get(i).copied().flatten();
        let anchor = match site {
            Site::Slot(slot) => match &prog.slots[slot].place {
                SlotPlace::Before { stmt } => Some((prog.stmts[*stmt].span, true)),
                SlotPlace::BlockEnd {
                    after: Some(stmt), ..
                } => Some((prog.stmts[*stmt].span, false)),
                SlotPlace::BlockEnd { after: None, .. } => None,
            },
            Site::Existing(_) => None,
        };
        let local = anchor.map(|(span, before)| (frame.local(span), before));
        match local {
            Some((span, before)) if unbraced.contains_key(&(span.start, span.end)) => {
                let entry = wrapped.entry((span.start, span.end)).or_default();
                let list = if before { &mut entry.0 } else { &mut entry.1 };
                list.push(match note {
                    Some(c) => format!("{} {c}", spelling.fence(order)),
                    None => spelling.fence(order),
                });
                positions.push(Position {
                    line: span.line,
                    column: span.column,
                    file: frame.index,
                });
            }
            _ => {
                let (e, p) = fence_edit(frame, prog, site, order, spelling, note)?;
                edits.push(e);
                positions.push(p);
                // A strengthened fence's comment goes after its statement.
                if let (Site::Existing(stmt), Some(c)) = (site, note) {
                    let end = frame.local(prog.stmts[stmt].span).end;
                    check_range(src, end)?;
                    if src[..end].ends_with(';') {
                        // First in the list: an insertion at the same point (a fence before
                        // the next statement on this line) then comes after the comment.
                        edits.insert(
                            0,
                            Edit {
                                start: end,
                                end,
                                text: format!(" {c}"),
                            },
                        );
                    }
                }
            }
        }
    }
    let allman = root.is_some_and(braces::allman);
    let (openings, closings) = braces::wrap_edits(src, &unbraced, allman, wrapped)?;
    edits.extend(openings);
    edits.splice(0..0, closings);
    // Builtin fences need no header; nor does a header read after the unit included it.
    let inserts = fences.iter().any(|(s, _)| matches!(s, Site::Slot(_))) && !spelling.builtin;
    let want = include::header(prog.lang);
    let known = frame.system_before.iter().any(|h| h == want);
    // A user header included here brings it when the unit had it once that header was read.
    let provides = |name: &str| {
        prog.sources
            .headers
            .iter()
            .any(|h| h.path.ends_with(name) && h.system_after.iter().any(|s| s == want))
    };
    if let (true, false, Some(root)) = (inserts, known, root) {
        edits.extend(include::include_edit(
            src,
            root,
            prog.lang,
            newline(src),
            &provides,
        ));
    }
    Ok((edits, positions))
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
    // `a/` + a relative path, as git and `patch -p1` expect (an absolute path loses its `/`).
    let path = path.trim_start_matches("./").trim_start_matches('/');
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
    fn orders_keep_the_spelling_they_replace() {
        use MemOrder::*;
        assert_eq!(
            order_like("memory_order_acquire", SeqCst, false),
            "memory_order_seq_cst"
        );
        assert_eq!(
            order_like("std::memory_order_acquire", SeqCst, false),
            "std::memory_order_seq_cst"
        );
        assert_eq!(
            order_like("std::memory_order::acquire", AcqRel, false),
            "std::memory_order::acq_rel"
        );
        assert_eq!(
            order_like("std :: memory_order :: release", SeqCst, false),
            "std::memory_order::seq_cst"
        );
        assert_eq!(
            order_like("memory_order::release", SeqCst, false),
            "memory_order::seq_cst"
        );
        // Builtin fences: GCC's names, numbers stay numbers, a macro becomes a name.
        assert_eq!(
            order_like("__ATOMIC_ACQUIRE", SeqCst, true),
            "__ATOMIC_SEQ_CST"
        );
        assert_eq!(
            order_like("__ATOMIC_RELEASE", AcqRel, false),
            "__ATOMIC_ACQ_REL"
        );
        assert_eq!(order_like("2", SeqCst, true), "5");
        assert_eq!(order_like(" 3 ", AcqRel, true), "4");
        assert_eq!(order_like("MO_ACQ", Release, true), "__ATOMIC_RELEASE");
        assert_eq!(
            order_like("memory_order_acquire", SeqCst, true),
            "memory_order_seq_cst"
        );
        assert_eq!(
            fence_text_in(Lang::Cpp, Release),
            "std::atomic_thread_fence(std::memory_order_release);"
        );
        assert_eq!(fence_text_in(Lang::C, Release), fence_text(Release));
    }

    #[test]
    fn parse_errors() {
        let t = parse_tree("int x = 1;\nint y = ;\n", Lang::C).unwrap();
        assert_eq!(first_error_line(t.root_node()), Some(2));
        let t = parse_tree("int x = 1;\n", Lang::C).unwrap();
        assert_eq!(first_error_line(t.root_node()), None);
    }

    #[test]
    fn diff_has_git_headers() {
        let d = unified_diff("a\nb\n", "a\nc\nb\n", "./dir/f.c");
        assert!(d.starts_with("--- a/dir/f.c\n+++ b/dir/f.c\n"), "{d}");
        assert!(d.contains("+c\n"));
        assert_eq!(unified_diff("same\n", "same\n", "f.c"), "");
    }
}
