//! From the preprocessed text back to the user's files: the spans of a lowered [`Program`]
//! (computed on the text tree-sitter parsed) become spans of the files the user wrote (see
//! [`Sources`] for how a header's spans are numbered), and the headers and the main file's
//! macro uses are recorded for the reports and the rewriter.

use super::Unit;
use crate::ir::{Header, MacroUse, Program, SlotPlace, Sources, Span};

/// The base of every file's spans: 0 for the main file, then each header past the previous.
fn bases(unit: &Unit) -> Vec<usize> {
    let mut v = Vec::with_capacity(unit.files.len());
    let mut next = 0;
    for f in &unit.files {
        v.push(next);
        next += f.text.len() + 1;
    }
    v
}

/// The user's span of the parsed text's span `s`.
fn map(unit: &Unit, bases: &[usize], s: Span) -> Span {
    let (file, start, end) = if s.start == s.end {
        let (f, o) = unit.end(s.end);
        (f, o, o)
    } else {
        let (f, start) = unit.start(s.start);
        let (g, end) = unit.end(s.end);
        (f, start, if g == f && end >= start { end } else { start })
    };
    let (line, column) = unit.files[file as usize].line_col(start);
    let base = bases[file as usize];
    Span {
        start: base + start,
        end: base + end,
        line,
        column,
    }
}

/// Maps every span of `p` to the user's files and records where they point.
pub(crate) fn map_program(p: &mut Program, unit: &Unit) {
    let bases = bases(unit);
    let m = |s: &mut Span| *s = map(unit, &bases, *s);
    for g in &mut p.globals {
        m(&mut g.span);
    }
    for l in &mut p.layouts {
        for c in &mut l.cells {
            m(&mut c.span);
        }
    }
    for f in &mut p.functions {
        m(&mut f.span);
    }
    for s in &mut p.stmts {
        m(&mut s.span);
        if let Some(o) = &mut s.order_span {
            m(o);
        }
    }
    for s in &mut p.slots {
        if let SlotPlace::BlockEnd { close, .. } = &mut s.place {
            m(close);
        }
    }
    for n in &mut p.notes {
        // A note about a header's text names the header (the span's line and column are
        // the header's own).
        let (file, _) = unit.start(n.span.start);
        if file != 0 && n.file.is_none() {
            n.file = Some(unit.files[file as usize].name.clone());
        }
        m(&mut n.span);
    }
    p.sources = Sources {
        options: p.sources.options.clone(),
        headers: unit
            .files
            .iter()
            .zip(&bases)
            .skip(1)
            .filter(|(f, _)| !f.builtin)
            .map(|(f, &base)| Header {
                name: f.name.clone(),
                path: f.path.clone(),
                base,
                text: f.text.clone(),
                system_before: f.system_before.clone(),
                system_after: f
                    .system_after
                    .clone()
                    .unwrap_or_else(|| f.system_before.clone()),
            })
            .collect(),
        macro_uses: unit
            .regions
            .iter()
            .map(|r| MacroUse {
                start: bases[r.file as usize] + r.use_start,
                end: bases[r.file as usize] + r.use_end,
                note: unit.expansion_note(r.out_start).unwrap_or_default(),
            })
            .collect(),
    };
}
