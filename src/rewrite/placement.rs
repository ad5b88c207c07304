//! Where a fence cannot be written: never inside the text of a macro use.
//!
//! A fence lands in the file that holds its statement, the main file or a header of the user's
//! (see [`super::files`]; the system headers fensyn knows are never read, so no span points
//! into them). A slot or a strengthened fence whose position falls strictly inside a macro use
//! (of any file) would land inside the use's text; and when several statements come from one
//! macro use, a fence before one of them would be written before the whole use, which orders
//! other statements too. Each is reported with the reason instead of being written.

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
    let file = |span: &Span| {
        sources
            .header(span)
            .map_or(String::new(), |h| format!("{}:", h.name))
    };
    let inside = |at: usize| sources.macro_use_around(at);
    if let Some(u) = inside(span.start).or_else(|| inside(span.end)) {
        return Some(format!(
            "a fence is needed inside the macro use at line {}{}:{} ({}); write it in the \
             macro's definition",
            file(&span),
            span.line,
            span.column,
            u.note
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
                "a fence is needed between statements of the macro use at line {}{}:{} ({}); \
                 write it in the macro's definition",
                file(&span),
                span.line,
                span.column,
                note
            ));
        }
    }
    None
}
