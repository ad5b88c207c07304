//! Why a fence is there: the two statements it orders, for `fensyn explain` ([`Reason`]), and
//! the same in words that stay true when the file is edited, for the comment the rewriter puts
//! next to it ([`Words`]: `/* fensyn: publish data before flag; pairs with the acquire fence in
//! consumer() */`): the two accesses (what they do and to which location) and what the fence
//! pairs with in the thread its cycle goes through next (a fence, or an acquire/release access
//! of the program), with the function that holds it. Comments carry no line numbers.
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
use crate::ir::{MemOrder, Program, SlotPlace, StmtId};
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

/// The first requirement's fenced graph in which a fence event of `f` orders a pair on a cycle:
/// the graph, its cross-thread `com` edges and `po ∪ com` closure, and the pair `(a, b)`.
struct Found {
    g: ExecutionGraph,
    com: Rel,
    closure: Rel,
    fence: EventId,
    a: EventId,
    b: EventId,
}

fn find_pair(sol: &Solution, f: &Fence) -> Option<Found> {
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
                if g.events[a].stmt.is_some() && g.events[b].stmt.is_some() {
                    return Some(Found {
                        g,
                        com,
                        closure,
                        fence: fe,
                        a,
                        b,
                    });
                }
            }
        }
    }
    None
}

/// Why `f` (a fence of `sol`) is needed; `None` when no requirement needs it.
pub fn reason(sol: &Solution, f: &Fence) -> Option<Reason> {
    if let Some(x) = find_pair(sol, f) {
        if let (Some(before), Some(after)) = (x.g.events[x.a].stmt, x.g.events[x.b].stmt) {
            return Some(Reason::Orders { before, after });
        }
    }
    let &(ri, _) = f.needed_by.first()?;
    sol.requirements
        .get(ri)
        .map(|r| Reason::Bug { stmt: r.bug.stmt })
}

/// What an access does to memory, as a fence's comment names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// Both halves of a read-modify-write.
    Update,
}

/// One access a fence orders, or that it pairs with: what it does, to which location, how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub kind: AccessKind,
    /// The location's name in messages ([`ExecutionGraph::loc_name`]).
    pub loc: String,
    pub order: MemOrder,
}

/// What a fence synchronises with on the other side of its cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partner {
    /// A fence (inserted by the same fix, or the program's own) with its order.
    Fence { order: MemOrder },
    /// An access strong enough to be the other end (an acquire load, a release store, ...).
    Access(Access),
    /// The same fence, run by another thread (one function run by several threads).
    Itself,
}

/// Why a fence is there, in words that do not depend on line numbers: for a fence comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Words {
    /// The fence orders access `before` before access `after` of its thread; `partner` is what
    /// it pairs with in the thread the cycle goes through next, and `at` where that is written
    /// (a span offset of the unit, to name its function).
    Orders {
        before: Access,
        after: Access,
        partner: Option<(Partner, Option<usize>)>,
        /// `after` comes before `before` in the source: it is that of a later pass through the
        /// code (a loop's next iteration, the function's next call).
        later: bool,
    },
    /// No ordered pair was found: the fence is needed against this bug (its kind, e.g. `race`,
    /// and the span offset of its statement).
    Bug { kind: &'static str, at: usize },
}

/// [`Words`] for fence `f` of `sol`.
pub fn words(prog: &Program, sol: &Solution, f: &Fence) -> Option<Words> {
    if let Some(x) = find_pair(sol, f) {
        let g = &x.g;
        let (before, after) = (access(prog, g, x.a)?, access(prog, g, x.b)?);
        let partner = partner(prog, &x).map(|(p, e)| {
            let ev = &g.events[e];
            let same = ev.is_fence()
                && match f.site {
                    Site::Slot(s) => ev.slot == Some(s),
                    Site::Existing(st) => ev.stmt == Some(st) && ev.slot.is_none(),
                };
            if same {
                (Partner::Itself, None)
            } else {
                (p, event_offset(prog, g, e))
            }
        });
        let (sa, sb) = (g.events[x.a].stmt?, g.events[x.b].stmt?);
        let later = prog.stmts[sb].span.start <= prog.stmts[sa].span.start;
        return Some(Words::Orders {
            before,
            after,
            partner,
            later,
        });
    }
    let &(ri, _) = f.needed_by.first()?;
    let r = sol.requirements.get(ri)?;
    Some(Words::Bug {
        kind: r.bug.kind.as_str(),
        at: prog.stmts.get(r.bug.stmt)?.span.start,
    })
}

/// The access event `e` of `g` described (an RMW's halves are an update).
fn access(prog: &Program, g: &ExecutionGraph, e: EventId) -> Option<Access> {
    let ev = &g.events[e];
    let update = g.rmw.iter().any(|&(r, w)| r == e || w == e);
    let kind = match (update, ev.is_read()) {
        (true, _) => AccessKind::Update,
        (false, true) => AccessKind::Read,
        (false, false) => AccessKind::Write,
    };
    Some(Access {
        kind,
        loc: plain_name(&g.loc_name(prog, ev.loc?)),
        order: ev.order,
    })
}

/// A location's name without what carries a line number or a function: an allocated object's
/// `malloc@12.next` is `next` (`malloc@12[3].next` is `[3].next`, a whole object `malloc@12`
/// is `*malloc`), a local's `main::flag` is `flag`.
fn plain_name(name: &str) -> String {
    if let Some(k) = name.find('@') {
        let rest = name[k + 1..].trim_start_matches(|c: char| c.is_ascii_digit());
        return match rest.strip_prefix('.') {
            Some(field) => field.to_string(),
            None if rest.is_empty() => format!("*{}", &name[..k]),
            None => rest.to_string(),
        };
    }
    match name.split_once("::") {
        Some((func, local)) if !func.is_empty() && !local.contains("::") => local.to_string(),
        _ => name.to_string(),
    }
}

/// Where event `e` is written: its statement's span offset, or its slot's for an inserted fence.
fn event_offset(prog: &Program, g: &ExecutionGraph, e: EventId) -> Option<usize> {
    let ev = &g.events[e];
    match (ev.slot, ev.stmt) {
        (Some(s), _) => site_offset(prog, Site::Slot(s)),
        (None, Some(st)) => site_offset(prog, Site::Existing(st)),
        _ => None,
    }
}

/// What the fence of `x` pairs with: in the thread the cycle enters from `b` (at `c`), a fence
/// po-after `c` (and before `c2`, where the cycle leaves that thread back towards `a`, when
/// it is the same thread); without one, `c` when it is an acquire read or `c2` when it is a
/// release write (or either when seq_cst).
fn partner(prog: &Program, x: &Found) -> Option<(Partner, EventId)> {
    let g = &x.g;
    let inv = x.com.inverse();
    let th = |e: EventId| g.events[e].thread;
    let pos = |e: EventId| g.threads[th(e)].events.iter().position(|&y| y == e);
    let mut fallback = None;
    for c in x.com.succs(x.b) {
        for c2 in inv.succs(x.a) {
            if !(c == c2 || x.closure.has(c, c2)) || th(c) == th(x.fence) {
                continue;
            }
            let evs = &g.threads[th(c)].events;
            let Some(from) = pos(c) else { continue };
            let to = match (th(c2) == th(c), pos(c2)) {
                (true, Some(k)) if k >= from => k,
                (true, _) => continue,
                (false, _) => evs.len(),
            };
            let fence = evs[from..to].iter().find(|&&e| g.events[e].is_fence());
            if let Some(&e) = fence {
                let order = g.events[e].order;
                return Some((Partner::Fence { order }, e));
            }
            let strong = |e: EventId, want: fn(MemOrder) -> bool| {
                let ev = &g.events[e];
                ev.is_access() && ev.order != MemOrder::NonAtomic && want(ev.order)
            };
            let end = if strong(c, MemOrder::is_acquire) && g.events[c].is_read() {
                Some(c)
            } else if th(c2) == th(c) && strong(c2, MemOrder::is_release) && g.events[c2].is_write()
            {
                Some(c2)
            } else {
                None
            };
            if fallback.is_none() {
                fallback = end.and_then(|e| Some((Partner::Access(access(prog, g, e)?), e)));
            }
        }
    }
    fallback
}

/// The comment text for `words` (without `/* fensyn: … */`), for a fence of order `order`;
/// `func` names the function around a span offset.
pub fn words_text(
    words: &Words,
    order: MemOrder,
    func: &dyn Fn(usize) -> Option<String>,
) -> String {
    let in_func = |at: Option<usize>| {
        at.and_then(func)
            .map_or(String::new(), |f| format!(" in {f}()"))
    };
    match words {
        Words::Bug { kind, at } => format!("needed against the {kind}{}", in_func(Some(*at))),
        Words::Orders {
            before,
            after,
            partner,
            later,
        } => {
            let mut text = pair_text(before, after, order);
            if *later {
                text.push_str(" (next pass)");
            }
            match partner {
                Some((Partner::Itself, _)) => {
                    text.push_str("; pairs with itself in another thread")
                }
                Some((p, at)) => {
                    text.push_str("; pairs with ");
                    text.push_str(&partner_text(p));
                    text.push_str(&in_func(*at));
                }
                None => {}
            }
            text
        }
    }
}

/// `publish data before flag`, `read flag before data`, `write x before reading y`.
fn pair_text(a: &Access, b: &Access, order: MemOrder) -> String {
    use AccessKind::*;
    let verb = match (a.kind, b.kind) {
        (Write, Write) if order.is_release() && order != MemOrder::SeqCst => "publish",
        (Write, _) => "write",
        (Read, _) => "read",
        (Update, _) => "update",
    };
    let second = if a.kind == b.kind {
        b.loc.clone()
    } else {
        let gerund = match b.kind {
            Read => "reading",
            Write => "writing",
            Update => "updating",
        };
        format!("{gerund} {}", b.loc)
    };
    format!("{verb} {} before {second}", a.loc)
}

/// `the acquire fence`, `the acquire load of flag`, `the release store to flag`.
fn partner_text(p: &Partner) -> String {
    match p {
        Partner::Fence { order } => format!("the {} fence", order.c_name()),
        Partner::Access(a) => {
            let what = match a.kind {
                AccessKind::Read => format!("load of {}", a.loc),
                AccessKind::Write => format!("store to {}", a.loc),
                AccessKind::Update => format!("update of {}", a.loc),
            };
            format!("the {} {what}", a.order.c_name())
        }
        Partner::Itself => "itself".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(kind: AccessKind, loc: &str, order: MemOrder) -> Access {
        Access {
            kind,
            loc: loc.into(),
            order,
        }
    }

    #[test]
    fn comments_name_accesses_and_partner_in_words() {
        use AccessKind::*;
        use MemOrder::*;
        let func = |at: usize| (at == 7).then(|| "consumer".to_string());
        let orders = |a, b, partner, later| Words::Orders {
            before: a,
            after: b,
            partner,
            later,
        };
        // Message passing: the release side publishes, the acquire side reads.
        let w = orders(
            acc(Write, "data", Relaxed),
            acc(Write, "flag", Relaxed),
            Some((Partner::Fence { order: Acquire }, Some(7))),
            false,
        );
        assert_eq!(
            words_text(&w, Release, &func),
            "publish data before flag; pairs with the acquire fence in consumer()"
        );
        // Two writes under a seq_cst fence are not "published".
        assert_eq!(
            words_text(&w, SeqCst, &func),
            "write data before flag; pairs with the acquire fence in consumer()"
        );
        // Store buffering, one function run by two threads, across loop passes.
        let w = orders(
            acc(Write, "x", Relaxed),
            acc(Read, "y", Relaxed),
            Some((Partner::Itself, None)),
            true,
        );
        assert_eq!(
            words_text(&w, SeqCst, &func),
            "write x before reading y (next pass); pairs with itself in another thread"
        );
        // An RMW, and a partner that is the program's own acquire load (function unknown).
        let w = orders(
            acc(Update, "lock", Relaxed),
            acc(Read, "counter", Relaxed),
            Some((Partner::Access(acc(Read, "flag", Acquire)), Some(3))),
            false,
        );
        assert_eq!(
            words_text(&w, Acquire, &func),
            "update lock before reading counter; pairs with the acquire load of flag"
        );
        let w = orders(
            acc(Read, "a", Relaxed),
            acc(Update, "b", Relaxed),
            Some((Partner::Access(acc(Write, "b", Release)), Some(7))),
            false,
        );
        assert_eq!(
            words_text(&w, Acquire, &func),
            "read a before updating b; pairs with the release store to b in consumer()"
        );
        let w = orders(
            acc(Read, "y", Relaxed),
            acc(Read, "x", Relaxed),
            None,
            false,
        );
        assert_eq!(words_text(&w, Acquire, &func), "read y before x");
        let w = Words::Bug {
            kind: "assertion",
            at: 7,
        };
        assert_eq!(
            words_text(&w, SeqCst, &func),
            "needed against the assertion in consumer()"
        );
    }

    #[test]
    fn names_without_lines_or_functions() {
        assert_eq!(plain_name("malloc@50._seq"), "_seq");
        assert_eq!(plain_name("malloc@12[3].next"), "[3].next");
        assert_eq!(plain_name("new@4"), "*new");
        assert_eq!(plain_name("main::flag"), "flag");
        assert_eq!(plain_name("main::args[1].tid"), "args[1].tid");
        assert_eq!(plain_name("box.full_"), "box.full_");
        assert_eq!(plain_name("data[0]"), "data[0]");
    }
}
