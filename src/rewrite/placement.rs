//! Where a fence cannot be written: fensyn writes into the main file only, and never inside
//! the text of a macro use.
//!
//! A slot whose statement lies in a header (its span is past the main file, see
//! [`crate::ir::Sources`]) needs an edit of the header; a slot or a strengthened fence whose
//! position falls strictly inside a macro use of the main file would land inside the use's
//! text; and when several statements come from one macro use, a fence before one of them
//! would be written before the whole use, which orders other statements too. Each is
//! reported with the reason instead of being written.

use crate::ir::{Program, SlotPlace, Span};
use crate::trace::Site;

/// Why a fence at `site` of `prog` cannot be written, if it cannot.
pub fn unwritable(prog: &Program, site: Site) -> Option<String> {
    let (span, stmt) = match site {
        Site::Slot(s) => match &prog.slots.get(s)?.place {
            SlotPlace::Before { stmt } => (prog.stmts.get(*stmt)?.span, Some(*stmt)),
            SlotPlace::BlockEnd { close, .. } => (*close, None),
        },
        Site::Existing(stmt) => {
            let s = prog.stmts.get(stmt)?;
            (s.order_span.unwrap_or(s.span), None)
        }
    };
    let sources = &prog.sources;
    if let Some(h) = sources.header(&span) {
        return Some(format!(
            "a fence is needed in {}:{}:{}, and fensyn writes fences into the main file only",
            h.name, span.line, span.column
        ));
    }
    let inside = |at: usize| sources.macro_use_around(at);
    if let Some(u) = inside(span.start).or_else(|| inside(span.end)) {
        return Some(format!(
            "a fence is needed inside the macro use at line {}:{} ({}); write it in the \
             macro's definition",
            span.line, span.column, u.note
        ));
    }
    let shares_use = |s: Span| {
        sources
            .macro_uses
            .iter()
            .any(|u| u.start == s.start && s.end <= u.end)
    };
    if let Some(stmt) = stmt {
        let others = prog
            .stmts
            .iter()
            .filter(|s| s.span.start == span.start && shares_use(s.span))
            .count();
        if others > 1 && shares_use(prog.stmts[stmt].span) {
            let u = sources.macro_uses.iter().find(|u| u.start == span.start);
            let note = u.map_or("", |u| u.note.as_str());
            return Some(format!(
                "a fence is needed between statements of the macro use at line {}:{} ({}); \
                 write it in the macro's definition",
                span.line, span.column, note
            ));
        }
    }
    None
}
