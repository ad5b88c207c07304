//! Deleting a program fence (`relax`, when a fence is not needed at any order).
//!
//! The fence is an expression statement (`atomic_thread_fence(o);`). Alone on its line — only
//! whitespace before it, only whitespace or a comment after it (a comment there is about the
//! fence) — the whole line goes, line break included. Sharing its line with other code, the
//! statement goes with the blanks that separate it from that code. A statement that is the body of an `if`, `else`, loop
//! or label (not an item of a block) becomes the empty statement `;`, so the code around it
//! keeps its meaning and still parses. Only a statement that is exactly a call of a fence
//! function is deleted (a macro use that expands to a fence is not: it may hold more).

use super::files::{FileEdits, Parsed};
use super::{Edit, RewriteError};
use crate::ir::{Program, StmtId};

/// The edits deleting the fence statements `stmts`, per file.
pub fn fence_removals(
    src: &str,
    prog: &Program,
    stmts: &[StmtId],
) -> Result<Vec<FileEdits>, RewriteError> {
    let unit = Parsed::new(src, prog);
    let mut out: Vec<FileEdits> = Vec::new();
    for &st in stmts {
        let (file, edit) = removal(&unit, prog, st)?;
        super::orders::merge(
            &mut out,
            &[FileEdits {
                file,
                edits: vec![edit],
            }],
        );
    }
    Ok(out)
}

/// The edit deleting fence statement `st`, and its file.
fn removal(unit: &Parsed, prog: &Program, st: StmtId) -> Result<(usize, Edit), RewriteError> {
    let s = &prog.stmts[st];
    let err = || RewriteError::NoFenceStatement { line: s.span.line };
    let k = prog.sources.file_index(&s.span);
    let frame = unit.frames.get(k).ok_or_else(err)?;
    let span = frame.local(s.span);
    let root = unit.root(k).ok_or_else(err)?;
    let mut node = root
        .descendant_for_byte_range(span.start, span.end.max(span.start))
        .ok_or_else(err)?;
    while node.kind() != "expression_statement" {
        node = node.parent().ok_or_else(err)?;
    }
    let text = frame.text;
    if !is_fence_call(text, node) {
        return Err(err());
    }
    let (start, end) = (node.start_byte(), node.end_byte());
    let in_block = node
        .parent()
        .is_some_and(|p| matches!(p.kind(), "compound_statement" | "translation_unit"));
    if !in_block {
        let edit = Edit {
            start,
            end,
            text: ";".into(),
        };
        return Ok((k, edit));
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    let before = &text[line_start..start];
    let after = text[end..line_end].trim();
    let comment_only = after.starts_with("//")
        || (after.starts_with("/*") && after.ends_with("*/") && after.matches("*/").count() == 1);
    let edit = if before.trim().is_empty() && (after.is_empty() || comment_only) {
        Edit {
            start: line_start,
            end: line_end,
            text: String::new(),
        }
    } else if !before.trim().is_empty() {
        // Code before it on the line: the blanks between that code and the fence go.
        let from = line_start + before.trim_end_matches([' ', '\t']).len();
        Edit {
            start: from,
            end,
            text: String::new(),
        }
    } else {
        let blanks = text[end..]
            .find(|c: char| c != ' ' && c != '\t')
            .map_or(text.len(), |i| end + i);
        Edit {
            start,
            end: blanks,
            text: String::new(),
        }
    };
    Ok((k, edit))
}

/// Whether expression statement `node` is exactly a call of a fence function (not a macro use
/// that expands to a fence and maybe more: deleting it could delete more than the fence).
fn is_fence_call(text: &str, node: tree_sitter::Node) -> bool {
    let Some(call) = node
        .named_child(0)
        .filter(|c| c.kind() == "call_expression")
    else {
        return false;
    };
    let Some(f) = call.child_by_field_name("function") else {
        return false;
    };
    let name = text[f.start_byte()..f.end_byte()].trim();
    let last = name.rsplit("::").next().unwrap_or(name).trim();
    matches!(
        last,
        "atomic_thread_fence" | "__atomic_thread_fence" | "__sync_synchronize"
    )
}
