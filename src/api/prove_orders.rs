//! `fix --by orders|both --prove-optimal`: the evidence that each access a fix strengthens is
//! needed at its order — every variant with one changed access one lattice step weaker (down
//! to its order as written, never below) and everything else of the fix kept, re-checked up
//! to its first buggy execution.

use super::prove;
use crate::checker::{Limits, Model};
use crate::ir::{MemOrder, Program};
use crate::report::ProofEntry;
use crate::rewrite::{self, orders::OrderChange, FileEdits};
use crate::synth::Solution;
use crate::trace::Site;

/// The edits of a fix with fences `fences` and access changes `changes`.
pub(super) fn edits(
    src: &str,
    prog: &Program,
    fences: &[(Site, MemOrder)],
    changes: &[OrderChange],
) -> Result<Vec<FileEdits>, String> {
    let (mut edits, _) = rewrite::fence_edits(src, prog, fences)
        .map_err(|e| format!("cannot place the fences of a variant: {e}"))?;
    let extra = rewrite::orders::order_edits(src, prog, changes)
        .map_err(|e| format!("cannot write the orders of a variant: {e}"))?;
    rewrite::orders::merge(&mut edits, &extra);
    Ok(edits)
}

/// One entry per variant of `solution`'s access changes.
pub(super) fn access_entries(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: &Limits,
    solution: &Solution,
) -> Result<Vec<ProofEntry>, String> {
    let fences: Vec<(Site, MemOrder)> = solution.fences.iter().map(|f| (f.site, f.order)).collect();
    let changes = rewrite::orders::changes(solution);
    let mut entries = Vec::new();
    for (i, a) in solution.accesses.iter().enumerate() {
        let weaker = a.kind.one_step_weaker(a.order);
        for w in weaker.into_iter().filter(|w| a.previous.le(*w)) {
            let mut set = changes.clone();
            if w == a.previous {
                set.remove(i);
            } else {
                set[i].order = w;
            }
            let edits = edits(src, prog, &fences, &set)?;
            let (variant, res) = prove::recheck_variant((name, src, prog), model, lim, &edits)?;
            let span = prog.stmts[a.stmt].span;
            entries.push(ProofEntry {
                line: span.line,
                column: span.column,
                variant: "access-weakened",
                order: Some(w.c_name()),
                executions: res.stats.visited(),
                buggy: res.stats.buggy,
                first_bug: prove::first_bug(prog, &variant, &edits, &res),
            });
        }
    }
    Ok(entries)
}
