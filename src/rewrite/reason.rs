//! Why a fence is there: the two statements it orders, for the comment the rewriter puts next to
//! it (`/* fensyn: orders line 12 before line 14 */`) and for `fensyn explain`.
//!
//! A fence `f` of a solution is needed by the requirements in `Fence::needed_by`. In such a
//! requirement's graph, with the whole solution's fences inserted, the bug closes a cycle of
//! program order and communication (`po ∪ rf ∪ mo ∪ fr`, and for a race the racing pair in both
//! directions) — the critical cycle the fence cuts. The fence sits on that cycle's program-order
//! step in its thread: the statements it orders are the nearest access before `f` and the
//! nearest access after `f` in `f`'s thread such that the cycle returns from the later one to
//! the earlier one (nearest: smallest total distance in the thread, then the closer earlier
//! access). The first requirement (in `needed_by` order) and the first fence event (a slot in a
//! loop is passed several times) that have such a pair decide; without one the reason is the
//! bug of the first requirement.

use crate::checker::relation::Rel;
use crate::checker::{EventId, ExecutionGraph, Relations, INIT_THREAD};
use crate::ir::StmtId;
use crate::synth::{Fence, Solution};
use crate::trace::{Requirement, Site};

/// Why one fence of a solution is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The fence orders statement `before` before statement `after` (both in its thread).
    Orders { before: StmtId, after: StmtId },
    /// No ordered pair was found: the fence is needed against the bug at `stmt`.
    Bug { stmt: StmtId },
}

/// `r`'s graph with the fences of `sol` inserted, and the map from old to new event ids.
pub fn fenced_graph(r: &Requirement, sol: &Solution) -> (ExecutionGraph, Vec<EventId>) {
    let a = &sol.assignment;
    r.graph
        .with_fences(&|s| a.get(Site::Slot(s)), &|st| a.get(Site::Existing(st)))
}

/// The events of `g` that stand for the fence at `site`.
pub fn fence_events(g: &ExecutionGraph, site: Site) -> Vec<EventId> {
    (0..g.len())
        .filter(|&e| {
            let ev = &g.events[e];
            ev.is_fence()
                && match site {
                    Site::Slot(s) => ev.slot == Some(s),
                    Site::Existing(st) => ev.stmt == Some(st) && ev.slot.is_none(),
                }
        })
        .collect()
}

/// The cycle relation: po ∪ rf ∪ mo ∪ fr, plus the racing pair both ways; returned as its
/// transitive closure.
fn cycle_closure(g: &ExecutionGraph, race: Option<(EventId, EventId)>) -> Rel {
    let r = Relations::compute(g);
    let mut rel = r.po.union(&r.rf).union(&r.mo).union(&r.fr);
    if let Some((x, y)) = race {
        rel.add(x, y);
        rel.add(y, x);
    }
    rel.plus()
}

/// The pair of accesses (event ids of `g`) the fence event `f` orders on a cycle, if any.
pub fn ordered_pair(
    g: &ExecutionGraph,
    f: EventId,
    race: Option<(EventId, EventId)>,
) -> Option<(EventId, EventId)> {
    let t = g.events[f].thread;
    if t == INIT_THREAD {
        return None;
    }
    let evs = &g.threads[t].events;
    let k = evs.iter().position(|&e| e == f)?;
    let access = |e: EventId| g.events[e].is_access() && g.events[e].stmt.is_some();
    let closure = cycle_closure(g, race);
    let mut best: Option<(usize, usize, EventId, EventId)> = None;
    for (i, &a) in evs[..k].iter().enumerate() {
        if !access(a) {
            continue;
        }
        for (j, &b) in evs.iter().enumerate().skip(k + 1) {
            if !access(b) || !closure.has(b, a) {
                continue;
            }
            let key = (j - i, k - i, a, b);
            if best.is_none_or(|cur| (key.0, key.1) < (cur.0, cur.1)) {
                best = Some(key);
            }
        }
    }
    best.map(|(_, _, a, b)| (a, b))
}

/// Why `f` (a fence of `sol`) is needed; `None` when no requirement needs it.
pub fn reason(sol: &Solution, f: &Fence) -> Option<Reason> {
    for &(ri, _) in &f.needed_by {
        let Some(r) = sol.requirements.get(ri) else {
            continue;
        };
        let (g, map) = fenced_graph(r, sol);
        let race = r.bug.race.map(|(x, y)| (map[x], map[y]));
        for fe in fence_events(&g, f.site) {
            if let Some((a, b)) = ordered_pair(&g, fe, race) {
                if let (Some(before), Some(after)) = (g.events[a].stmt, g.events[b].stmt) {
                    return Some(Reason::Orders { before, after });
                }
            }
        }
    }
    let &(ri, _) = f.needed_by.first()?;
    sol.requirements
        .get(ri)
        .map(|r| Reason::Bug { stmt: r.bug.stmt })
}
