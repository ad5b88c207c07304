//! Why a fence is there: the two statements it orders, for the comment the rewriter puts next to
//! it (`/* fensyn: orders line 12 before line 14 */`) and for `fensyn explain`.
//!
//! A fence `f` of a solution is needed by the requirements in `Fence::needed_by`. In such a
//! requirement's graph, with the whole solution's fences inserted, the bug closes a cycle of
//! program order and communication (`com = rf ∪ mo ∪ fr`, and for a race the racing pair both
//! ways) — the critical cycle the fence cuts. The fence sits on the cycle's program-order step
//! in its thread: the statements it orders are an access `a` before `f` and an access `b` after
//! `f` in `f`'s thread such that the cycle leaves the thread from `b` by a `com` edge and comes
//! back into it at `a` by a `com` edge (`a -po-> b -com-> … -com-> a`). Of several such pairs the
//! nearest one to the fence is chosen (smallest total distance in the thread, then the closer
//! `a`). The first requirement (in `needed_by` order) and the first fence event (a slot in a
//! loop is passed several times) that have such a pair decide; without one the reason is the
//! bug of the first requirement.

use crate::checker::relation::Rel;
use crate::checker::{EventId, ExecutionGraph, Relations, ReleaseSeq, INIT_THREAD};
use crate::ir::{Program, SlotPlace, StmtId};
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

/// The function definition around byte `at`: its start and its name.
pub(crate) fn enclosing_function(
    src: &str,
    root: tree_sitter::Node,
    at: usize,
) -> Option<(usize, String)> {
    let mut n = root.descendant_for_byte_range(at, at)?;
    while n.kind() != "function_definition" {
        n = n.parent()?;
    }
    let mut d = n.child_by_field_name("declarator")?;
    while d.kind() != "function_declarator" {
        d = d.child_by_field_name("declarator")?;
    }
    let name = d.child_by_field_name("declarator")?;
    Some((n.start_byte(), src[name.byte_range()].to_string()))
}

/// Where the fence at `site` is written (a span offset of the unit, see [`crate::ir::Sources`]).
pub(crate) fn site_offset(prog: &Program, site: Site) -> Option<usize> {
    match site {
        Site::Slot(s) => match &prog.slots.get(s)?.place {
            SlotPlace::Before { stmt } => Some(prog.stmts[*stmt].span.start),
            SlotPlace::BlockEnd { close, .. } => Some(close.start),
        },
        Site::Existing(st) => Some(prog.stmts.get(st)?.span.start),
    }
}

/// `line N`, or `line N of f.c` for a statement of another file than the fence's.
pub fn line_text((line, file): (usize, Option<String>)) -> String {
    match file {
        Some(f) => format!("line {line} of {f}"),
        None => format!("line {line}"),
    }
}

/// `orders line A before line B`, each line given by `line` (with the file's name when it
/// is not the fence's, [`line_text`]). `func` gives the function definition around a span
/// offset (its start and name): a statement outside the function definition that holds the
/// fence (in a helper fensyn inlined) is followed by `(in NAME)`; when both are in one
/// function and B does not come after A, the fence orders A before B of a later pass through
/// the code (a loop's next iteration, the function's next call).
pub fn orders_text(
    prog: &Program,
    func: &dyn Fn(usize) -> Option<(usize, String)>,
    site: Site,
    before: StmtId,
    after: StmtId,
    line: &dyn Fn(StmtId) -> (usize, Option<String>),
) -> String {
    let home = site_offset(prog, site).and_then(func);
    let fb = func(prog.stmts[before].span.start);
    let fa = func(prog.stmts[after].span.start);
    let place = |f: &Option<(usize, String)>| match (f, &home) {
        (Some((start, name)), Some((h, _))) if start != h => format!(" (in {name})"),
        _ => String::new(),
    };
    let (a, b) = (line(before), line(after));
    // Two statements on one line: by their source positions.
    let behind =
        b.0 < a.0 || (b.0 == a.0 && prog.stmts[after].span.start <= prog.stmts[before].span.start);
    let later = if fa == fb && a.1 == b.1 && behind {
        " of a later pass"
    } else {
        ""
    };
    format!(
        "orders {}{} before {}{}{later}",
        line_text(a),
        place(&fb),
        line_text(b),
        place(&fa)
    )
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

/// The communication edges between threads (rf, mo, fr, and the racing pair both ways), and
/// the transitive closure of po ∪ com.
fn relations(g: &ExecutionGraph, race: Option<(EventId, EventId)>) -> (Rel, Rel) {
    // Only po, rf, mo and fr are read: the release-sequence rule does not matter.
    let r = Relations::compute(g, ReleaseSeq::Rmw);
    let mut com = r.rf.union(&r.mo).union(&r.fr);
    if let Some((x, y)) = race {
        com.add(x, y);
        com.add(y, x);
    }
    let closure = r.po.union(&com).plus();
    let th = |e: EventId| g.events[e].thread;
    (com.filter(|a, b| th(a) != th(b)), closure)
}

/// The pair of accesses (event ids of `g`) the fence event `f` orders on a cycle, if any;
/// `com` and `closure` come from [`relations`].
fn ordered_pair(
    g: &ExecutionGraph,
    f: EventId,
    com: &Rel,
    closure: &Rel,
) -> Option<(EventId, EventId)> {
    let t = g.events[f].thread;
    if t == INIT_THREAD {
        return None;
    }
    let evs = &g.threads[t].events;
    let k = evs.iter().position(|&e| e == f)?;
    let access = |e: EventId| g.events[e].is_access() && g.events[e].stmt.is_some();
    let inv = com.inverse();
    // The cycle leaves the thread at `b` and comes back at `a`.
    let returns = |a: EventId, b: EventId| {
        com.succs(b)
            .any(|c| inv.succs(a).any(|c2| c == c2 || closure.has(c, c2)))
    };
    let mut best: Option<(usize, usize, EventId, EventId)> = None;
    for (i, &a) in evs[..k].iter().enumerate() {
        if !access(a) {
            continue;
        }
        for (j, &b) in evs.iter().enumerate().skip(k + 1) {
            if !access(b) || !returns(a, b) {
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
        let events = fence_events(&g, f.site);
        if events.is_empty() {
            continue;
        }
        let (com, closure) = relations(&g, race);
        for fe in events {
            if let Some((a, b)) = ordered_pair(&g, fe, &com, &closure) {
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
