//! `fix --prove-optimal`: every variant of a fix with one fence removed or weakened, re-checked
//! ([`prove_minimal`]), and the evidence that refutes a variant, located in the input file.

use super::repair::reparse;
use crate::checker::{self, CheckOptions, CheckResult, Limits, Model};
use crate::ir::{MemOrder, Program};
use crate::report::{self, ProofBug};
use crate::rewrite::{self, Edit, FileEdits, Position};
use crate::synth;
use crate::trace;

/// Every variant of a fix with one fence removed, or weakened by one lattice step (never
/// below the order a strengthened program fence had), re-checked: the evidence that the fix
/// is minimal (each variant should still have a buggy execution). One buggy execution refutes
/// a variant, so each exploration stops at its first one; a variant without bug is explored
/// in full.
pub fn prove_minimal(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: &Limits,
    solution: &synth::Solution,
    positions: &[Position],
) -> Result<Vec<report::ProofEntry>, String> {
    let chosen: Vec<(trace::Site, MemOrder)> =
        solution.fences.iter().map(|f| (f.site, f.order)).collect();
    let mut entries = Vec::new();
    for (i, f) in solution.fences.iter().enumerate() {
        let floor = f.previous;
        let weaker: Vec<MemOrder> = match f.order {
            MemOrder::SeqCst => vec![MemOrder::AcqRel],
            MemOrder::AcqRel => vec![MemOrder::Acquire, MemOrder::Release],
            _ => vec![],
        };
        let mut variants: Vec<Option<MemOrder>> = vec![None];
        variants.extend(
            weaker
                .into_iter()
                .filter(|o| floor.is_none_or(|p| p.le(*o) && p != *o))
                .map(Some),
        );
        for v in variants {
            let mut set = chosen.clone();
            match (v, floor) {
                (Some(o), _) => set[i].1 = o,
                // Removing a strengthening restores the program fence's own order.
                (None, Some(p)) => set[i].1 = p,
                (None, None) => {
                    set.remove(i);
                }
            }
            let changes = rewrite::orders::changes(solution);
            let edits = super::prove_orders::edits(src, prog, &set, &changes)?;
            let (variant, res) = recheck_variant((name, src, prog), model, lim, &edits)?;
            let pos = positions.get(i).copied().unwrap_or_default();
            entries.push(report::ProofEntry {
                line: pos.line,
                column: pos.column,
                variant: if v.is_some() { "weakened" } else { "removed" },
                order: v.map(|o| o.c_name()),
                executions: res.stats.visited(),
                buggy: res.stats.buggy,
                first_bug: first_bug(prog, &variant, &edits, &res),
            });
        }
    }
    entries.extend(super::prove_orders::access_entries(
        name, src, prog, model, lim, solution,
    )?);
    Ok(entries)
}

/// Writes a variant's `edits` into the unit (`name`, text `src`, program `prog`), parses it
/// again and checks it up to its first buggy execution: the variant and the check.
pub(super) fn recheck_variant(
    (name, src, prog): (&str, &str, &Program),
    model: Model,
    lim: &Limits,
    edits: &[FileEdits],
) -> Result<(Program, CheckResult), String> {
    let files = rewrite::files::apply_all(src, prog, edits)
        .map_err(|e| format!("cannot apply the edits of a variant: {e}"))?;
    let variant =
        reparse(name, src, prog, &files).map_err(|d| format!("a variant does not parse: {d}"))?;
    let res = checker::check(
        &variant,
        &CheckOptions {
            model,
            limits: limits_for_variant(prog, &variant, edits, lim),
            first: true,
            keep_buggy: 1,
        },
    );
    Ok((variant, res))
}

/// The offset in the original text of offset `at` of the text `edits` produced, or `None` when
/// `at` lies inside the text an edit wrote.
fn original_offset(edits: &[Edit], at: usize) -> Option<usize> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    // `shift`: how much longer the edited text is than the original before the current edit.
    let mut shift: isize = 0;
    for e in sorted {
        let new_start = (e.start as isize + shift) as usize;
        if at < new_start {
            break;
        }
        if at < new_start + e.text.len() {
            return None;
        }
        shift += e.text.len() as isize - (e.end - e.start) as isize;
    }
    usize::try_from(at as isize - shift).ok()
}

/// The first bug of a variant's first buggy execution, with its statement's place in the
/// input (the statement of `prog` that starts where the variant's does, once the variant's
/// `edits` of that statement's file are undone).
/// The statement of `prog` that statement `stmt` of `variant` (`prog` rewritten by `edits`)
/// is: the one that starts where it does once the edits of its file are undone; `None` for a
/// statement the edits wrote (a fence).
pub(super) fn original_stmt(
    prog: &Program,
    variant: &Program,
    edits: &[FileEdits],
    stmt: usize,
) -> Option<usize> {
    let span = variant.stmts.get(stmt)?.span;
    let k = variant.sources.file_index(&span);
    let own: &[Edit] = edits.iter().find(|e| e.file == k).map_or(&[], |e| &e.edits);
    let local = span.start - variant.sources.base_of(k);
    let at = original_offset(own, local)? + prog.sources.base_of(k);
    prog.stmts.iter().position(|s| s.span.start == at)
}

/// `lim` for exploring `variant` (`prog` rewritten by `edits`): a bug filter written for
/// `prog`'s statements (`fensyn: ignore` comments) asked about each bug's statement of `prog`,
/// so a silenced error stays silenced in the fixed program and its variants.
pub(super) fn limits_for_variant(
    prog: &Program,
    variant: &Program,
    edits: &[FileEdits],
    lim: &Limits,
) -> Limits {
    let Some(filter) = lim.suppress.clone() else {
        return lim.clone();
    };
    let map: Vec<Option<usize>> = (0..variant.stmts.len())
        .map(|st| original_stmt(prog, variant, edits, st))
        .collect();
    let remapped = move |b: &crate::checker::Bug| {
        map.get(b.stmt).copied().flatten().is_some_and(|st| {
            let mut same = b.clone();
            same.stmt = st;
            (filter.0)(&same)
        })
    };
    Limits {
        suppress: Some(crate::checker::Suppress(std::sync::Arc::new(remapped))),
        ..lim.clone()
    }
}

pub(super) fn first_bug(
    prog: &Program,
    variant: &Program,
    edits: &[FileEdits],
    res: &CheckResult,
) -> Option<ProofBug> {
    let bug = res.buggy.first()?.bugs.first()?;
    let place = original_stmt(prog, variant, edits, bug.stmt)
        .map(|s| (prog.stmts[s].span.line, prog.stmts[s].span.column));
    Some(ProofBug {
        kind: bug.kind.as_str(),
        line: place.map(|p| p.0),
        column: place.map(|p| p.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn offsets_map_back_through_insertions_and_replacements() {
        // "abcdef" -> "abXXcdYf": insert "XX" at 2, replace "e" (4..5) by "Y".
        let edits = [edit(4, 5, "Y"), edit(2, 2, "XX")];
        let orig = "abcdef";
        let new = "abXXcdYf";
        for (i, ch) in new.char_indices() {
            match original_offset(&edits, i) {
                Some(o) => assert_eq!(orig.as_bytes()[o] as char, ch, "offset {i}"),
                None => assert!(matches!(i, 2 | 3 | 6), "offset {i} is not edited text"),
            }
        }
    }
}
