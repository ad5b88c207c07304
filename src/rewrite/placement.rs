//! Where a fence cannot be written: never inside the text of a macro use.
//!
//! A fence lands in the file that holds its statement, the main file or a header of the user's
//! (see [`super::files`]; the system headers fensyn knows are never read, so no span points
//! into them). A slot or a strengthened fence whose position falls inside a macro use (of any
//! file) would land inside the use's text, and every position inside a use maps back to the
//! use's start. Such a slot is written before or after the statement holding the use when that
//! is the same program point for the thread ([`relocate`]): no memory access, fence or thread
//! operation of the use runs between the use's start and the slot (the fence is written at
//! the use's start), or between the slot and the first slot after the use (the fence is moved
//! there). Otherwise — a fence needed between two statements of one use, or inside a loop or
//! branch of its replacement — it is reported with the reason instead of being written.

use super::Planned;
use crate::ir::{Expr, Instr, MacroUse, Program, SlotId, SlotPlace, Span};
use crate::synth::Solution;
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

/// `solution` with every fence at a slot inside a macro use moved to the equivalent slot
/// after the use's statement (see the module's doc), fences that land on one slot merged (the
/// join of their orders); or why a fence cannot be written.
pub fn relocate(prog: &Program, solution: &Solution) -> Result<Solution, String> {
    let mut out = solution.clone();
    out.fences.clear();
    for f in &solution.fences {
        let site = relocate_site(prog, f.site)?;
        match out.fences.iter_mut().find(|g| g.site == site) {
            Some(g) => {
                g.order = g.order.join(f.order);
                g.needed_by.extend(f.needed_by.iter().cloned());
            }
            None => out.fences.push(crate::synth::Fence { site, ..f.clone() }),
        }
    }
    Ok(out)
}

/// [`relocate`] for the planned fences of a fix (their reasons are those of the sites the
/// synthesis chose; merged fences keep the first one's).
pub fn relocate_planned(prog: &Program, planned: &[Planned]) -> Result<Vec<Planned>, String> {
    let mut out: Vec<Planned> = Vec::new();
    for p in planned {
        let site = relocate_site(prog, p.site)?;
        match out.iter_mut().find(|q| q.site == site) {
            Some(q) => q.order = q.order.join(p.order),
            None => out.push(Planned { site, ..p.clone() }),
        }
    }
    Ok(out)
}

/// Where a fence at `site` is written: `site`, or the equivalent slot after the macro use
/// holding it; or why it cannot be written.
pub fn relocate_site(prog: &Program, site: Site) -> Result<Site, String> {
    match (site, slot_of(site).and_then(|s| inside_use(prog, s))) {
        (Site::Slot(s), Some(u)) => equivalent_slot(prog, s, u)
            .map(Site::Slot)
            .ok_or_else(|| between(prog, s, u)),
        _ => match unwritable(prog, site) {
            Some(why) => Err(why),
            None => Ok(site),
        },
    }
}

/// The macro use whose text holds slot `s`'s position, unless that is simply before the
/// statement holding the use: a block end inside the use, or a statement starting inside it,
/// or one starting at the use while other statements come from it (the fence would be written
/// at the use's start; [`equivalent_slot`] decides whether that is the same point).
fn inside_use(prog: &Program, s: SlotId) -> Option<&MacroUse> {
    let uses = &prog.sources.macro_uses;
    match &prog.slots.get(s)?.place {
        SlotPlace::BlockEnd { close, .. } => uses
            .iter()
            .find(|u| u.start <= close.start && close.end <= u.end && close.start < u.end),
        SlotPlace::Before { stmt } => {
            let span = prog.stmts.get(*stmt)?.span;
            let u = uses
                .iter()
                .find(|u| u.start <= span.start && span.start < u.end)?;
            let within = |t: &Span| u.start <= t.start && t.end <= u.end;
            let others = prog
                .stmts
                .iter()
                .enumerate()
                .any(|(k, t)| k != *stmt && within(&t.span));
            (others || span.start > u.start).then_some(u)
        }
    }
}

/// The slot outside use `u` that is the same program point as slot `s` in every function
/// whose code passes `s`: `s` itself when nothing observable of the use runs before it (the
/// fence is written at the use's start), else the first slot after the use when nothing
/// observable runs between `s` and it.
fn equivalent_slot(prog: &Program, s: SlotId, u: &MacroUse) -> Option<SlotId> {
    let in_u = |stmt: usize| {
        prog.stmts
            .get(stmt)
            .is_some_and(|t| u.start <= t.span.start && t.span.end <= u.end)
    };
    let at_start = match &prog.slots[s].place {
        SlotPlace::Before { stmt } => prog.stmts[*stmt].span.start == u.start,
        SlotPlace::BlockEnd { close, .. } => close.start == u.start,
    };
    let mut backward = at_start;
    let mut forward: Option<Option<SlotId>> = None;
    let mut seen = false;
    for f in &prog.functions {
        for pc in (0..f.body.len()).filter(|&pc| f.body[pc] == Instr::Slot(s)) {
            seen = true;
            // Backward: out of the use's statements without passing anything observable.
            backward &= (0..pc).rev().find_map(|i| match &f.body[i] {
                Instr::Slot(_) => None,
                _ if !in_u(f.stmt_of[i]) => Some(true),
                ins if transparent(ins) => None,
                _ => Some(false),
            }) != Some(false);
            // Forward: to the first slot that is not inside the use.
            let next = (pc + 1..f.body.len()).find_map(|i| match &f.body[i] {
                Instr::Slot(t)
                    if inside_use(prog, *t).is_none()
                        && !slot_in(prog, *t, u)
                        && unwritable(prog, Site::Slot(*t)).is_none() =>
                {
                    Some(Some(*t))
                }
                Instr::Slot(_) => None,
                ins if transparent(ins) => None,
                _ => Some(None),
            });
            let next = next.flatten();
            forward = match forward {
                None => Some(next),
                Some(prev) if prev == next => Some(prev),
                Some(_) => Some(None),
            };
        }
    }
    if !seen {
        return None;
    }
    if backward {
        return Some(s);
    }
    forward.flatten()
}

/// Whether slot `t`'s position is in use `u`'s text.
fn slot_in(prog: &Program, t: SlotId, u: &MacroUse) -> bool {
    let span = match &prog.slots[t].place {
        SlotPlace::Before { stmt } => prog.stmts[*stmt].span,
        SlotPlace::BlockEnd { close, .. } => *close,
    };
    u.start <= span.start && span.end <= u.end && span.start < u.end
}

/// Instructions that neither touch memory nor synchronise nor branch: a fence may move across
/// them. A branch on a non-zero constant (`do { ... } while (0)`'s) never jumps.
fn transparent(ins: &Instr) -> bool {
    match ins {
        Instr::Assign { .. }
        | Instr::LoopEnter { .. }
        | Instr::LoopIter { .. }
        | Instr::ThreadId { .. }
        | Instr::Nondet { .. }
        | Instr::Slot(_) => true,
        Instr::BranchIfZero {
            cond: Expr::Const(c),
            ..
        } => *c != 0,
        _ => false,
    }
}

/// Why a fence at slot `s`, inside use `u`, cannot be written.
fn between(prog: &Program, s: SlotId, u: &MacroUse) -> String {
    let span = match &prog.slots[s].place {
        SlotPlace::Before { stmt } => prog.stmts[*stmt].span,
        SlotPlace::BlockEnd { close, .. } => *close,
    };
    let file = prog
        .sources
        .header(&span)
        .map_or(String::new(), |h| format!("{}:", h.name));
    format!(
        "a fence is needed between statements of the macro use at line {}{}:{} ({}); write it \
         in the macro's definition",
        file, span.line, span.column, u.note
    )
}

fn slot_of(site: Site) -> Option<SlotId> {
    match site {
        Site::Slot(s) => Some(s),
        Site::Existing(_) => None,
    }
}
