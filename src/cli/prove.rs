//! Helpers of `fix --prove-optimal` ([`super::prove_minimal`]): the evidence that refutes a
//! variant, located in the input file.

use crate::checker::CheckResult;
use crate::ir::Program;
use crate::report::ProofBug;
use crate::rewrite::{Edit, FileEdits};

/// The offset in the original text of offset `at` of the text `edits` produced, or `None` when
/// `at` lies inside the text an edit wrote.
pub(super) fn original_offset(edits: &[Edit], at: usize) -> Option<usize> {
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
pub(super) fn first_bug(
    prog: &Program,
    variant: &Program,
    edits: &[FileEdits],
    res: &CheckResult,
) -> Option<ProofBug> {
    let bug = res.buggy.first()?.bugs.first()?;
    let span = variant.stmts.get(bug.stmt)?.span;
    let k = variant.sources.file_index(&span);
    let own: &[Edit] = edits.iter().find(|e| e.file == k).map_or(&[], |e| &e.edits);
    let local = span.start - variant.sources.base_of(k);
    let place = original_offset(own, local)
        .map(|o| o + prog.sources.base_of(k))
        .and_then(|o| prog.stmts.iter().find(|s| s.span.start == o))
        .map(|s| (s.span.line, s.span.column));
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
