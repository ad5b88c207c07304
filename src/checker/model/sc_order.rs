//! `c11`'s SC axiom: whether a total order `to` on the seq_cst events exists (the thesis's
//! Figure 3.6 with C++11's fence rules, [atomics.order] §29.3p3–p7).
//!
//! The order is built by a depth-first search placing at each step a unit (a seq_cst event, or
//! an RMW's read and write parts together) whose hb / mo predecessors are placed, checking the
//! placed unit's conditions against what is placed before it; failed states (placed set, last
//! seq_cst write per location) are memoised. Every condition of a unit is decided by the set
//! of units before it and the last seq_cst write per location at that point, so the memo is
//! exact. Executions have few seq_cst events; the search is exponential only in the worst case.

use super::Relations;
use crate::checker::graph::{ExecutionGraph, INIT_THREAD};
use std::collections::HashSet;

/// Whether the seq_cst events of `g` can be totally ordered as the thesis's C11 model requires
/// (its Figure 3.6), with C++11's fence rules:
///
/// * (coto) `to` contains hb and mo between seq_cst events;
/// * (rfto1) a seq_cst read of a seq_cst write reads the last seq_cst write to its location
///   before it; (rfto2) a seq_cst read of a non-seq_cst write `w` has no last seq_cst write
///   before it that `w` happens before;
/// * (tofen) a seq_cst write read after a seq_cst fence of the reading thread is the last
///   seq_cst write to the location before the fence;
/// * C++11 §29.3p4–p6: a read after a seq_cst fence `X` sees the last seq_cst write to its
///   location before `X`, or an mo-later one (p4); a seq_cst read after (in `to`) a fence `X`
///   sees every write to its location sequenced before `X`, or an mo-later one (p5); a read
///   sequenced after a fence `Y` that `to` puts after a fence `X` sees every write to its
///   location sequenced before `X`, or an mo-later one (p6). (The thesis's (tofen) alone would
///   not let seq_cst fences forbid store buffering, which its own tool fixes with them.)
/// * C++11 §29.3p7: an atomic write sequenced after a fence `Y` that `to` puts after a fence
///   `X` is mo-after every atomic write to its location sequenced before `X` (what lets two
///   seq_cst fences forbid 2+2W).
///
/// An RMW's two parts are one action (placed together).
pub fn sc_order_exists(g: &ExecutionGraph, r: &Relations) -> bool {
    let units = units(g);
    if units.is_empty() {
        return true;
    }
    if units.len() > 63 {
        // Beyond the search's bitmask: only the other axioms are checked.
        return true;
    }
    Search::new(g, r, units).run()
}

/// Whether `e` is a seq_cst access or fence of a thread (initialisation writes are not in `to`).
fn is_sc(g: &ExecutionGraph, e: usize) -> bool {
    let ev = &g.events[e];
    ev.thread != INIT_THREAD && ev.order.is_sc() && (ev.is_access() || ev.is_fence())
}

/// The units of `to`: each seq_cst event alone, except an RMW whose read and write parts are
/// both seq_cst, which is one unit `[read, write]`.
fn units(g: &ExecutionGraph) -> Vec<Vec<usize>> {
    let mut units = Vec::new();
    for e in (0..g.len()).filter(|&e| is_sc(g, e)) {
        let as_write = g.rmw.iter().find(|&&(_, w)| w == e);
        if as_write.is_some_and(|&(rd, _)| is_sc(g, rd)) {
            continue; // joined to its read part
        }
        match g.rmw.iter().find(|&&(rd, _)| rd == e) {
            Some(&(_, w)) if is_sc(g, w) => units.push(vec![e, w]),
            _ => units.push(vec![e]),
        }
    }
    units
}

/// The search state that does not change while placing: the units, their (coto)
/// predecessors, and per seq_cst fence the accesses of its thread around it.
struct Search<'g> {
    g: &'g ExecutionGraph,
    r: &'g Relations,
    units: Vec<Vec<usize>>,
    /// (coto): the units that must precede each unit, as a bit set.
    pred: Vec<u64>,
    /// Per unit that is a seq_cst fence: the reads sequenced after it.
    reads_after: Vec<Vec<usize>>,
    /// Per unit that is a seq_cst fence: the writes sequenced before it.
    writes_before: Vec<Vec<usize>>,
    /// Per unit that is a seq_cst fence: the atomic writes sequenced after it.
    writes_after: Vec<Vec<usize>>,
}

impl<'g> Search<'g> {
    fn new(g: &'g ExecutionGraph, r: &'g Relations, units: Vec<Vec<usize>>) -> Search<'g> {
        let n = units.len();
        let mut pred = vec![0u64; n];
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let before = |x: usize, y: usize| r.hb.has(x, y) || r.mo.has(x, y);
                if units[a]
                    .iter()
                    .any(|&x| units[b].iter().any(|&y| before(x, y)))
                {
                    pred[b] |= 1 << a;
                }
            }
        }
        let mut s = Search {
            g,
            r,
            pred,
            reads_after: vec![Vec::new(); n],
            writes_before: vec![Vec::new(); n],
            writes_after: vec![Vec::new(); n],
            units,
        };
        s.fill_fence_neighbours();
        s
    }

    /// The reads and writes of each seq_cst fence's thread before and after it (computed once:
    /// the search asks for them at every placement).
    fn fill_fence_neighbours(&mut self) {
        let ev = &self.g.events;
        for (u, unit) in self.units.iter().enumerate() {
            let &[f] = unit.as_slice() else { continue };
            if !ev[f].is_fence() {
                continue;
            }
            let evs = &self.g.threads[ev[f].thread].events;
            let idx = evs.iter().position(|&x| x == f).unwrap_or(0);
            let (before, after) = (&evs[..idx], &evs[idx + 1..]);
            self.writes_before[u] = before
                .iter()
                .copied()
                .filter(|&x| ev[x].is_write())
                .collect();
            self.reads_after[u] = after.iter().copied().filter(|&x| ev[x].is_read()).collect();
            self.writes_after[u] = after
                .iter()
                .copied()
                .filter(|&x| ev[x].is_write() && ev[x].order.is_atomic())
                .collect();
        }
    }

    /// `w` is `v` or mo-after it: a read of `w` "sees" `v` or a later modification.
    fn sees(&self, w: usize, v: usize) -> bool {
        w == v || self.r.mo.has(v, w)
    }

    /// The units in `placed` (only fences have neighbours recorded).
    fn placed_units(&self, placed: u64) -> impl Iterator<Item = usize> + '_ {
        (0..self.units.len()).filter(move |&v| placed >> v & 1 == 1)
    }

    /// §29.3p5 / p6: a read of `w` (at `x`) placed, or sequenced after a fence placed, after the
    /// fences in `placed` sees every write to `x` sequenced before those fences.
    fn sees_earlier_fences(&self, x: usize, w: usize, placed: u64) -> bool {
        let ev = &self.g.events;
        self.placed_units(placed).all(|v| {
            self.writes_before[v]
                .iter()
                .all(|&a| ev[a].loc != Some(x) || self.sees(w, a))
        })
    }

    /// §29.3p7: a write `b` sequenced after a fence placed after the fences in `placed` is
    /// mo-after every atomic write to its location sequenced before those fences.
    fn mo_after_earlier_fences(&self, b: usize, placed: u64) -> bool {
        let ev = &self.g.events;
        let ordered =
            |a: usize| ev[a].loc != ev[b].loc || !ev[a].order.is_atomic() || self.r.mo.has(a, b);
        self.placed_units(placed)
            .all(|v| self.writes_before[v].iter().all(|&a| ordered(a)))
    }

    /// The conditions on unit `u`'s own reads: (rfto1), (rfto2), §29.3p5.
    fn reads_ok(&self, u: usize, placed: u64, last: &[usize]) -> bool {
        let ev = &self.g.events;
        self.units[u].iter().all(|&e| {
            let (true, Some(x), Some(w)) = (ev[e].is_read(), ev[e].loc, self.g.rf[e]) else {
                return true;
            };
            let c = last[x];
            let rfto = if is_sc(self.g, w) {
                c == w // (rfto1)
            } else {
                c == usize::MAX || !self.r.hb.has(w, c) // (rfto2)
            };
            rfto && self.sees_earlier_fences(x, w, placed) // §29.3p5
        })
    }

    /// The conditions on the accesses of fence `u`'s thread around it, `u` placed after the
    /// units in `placed`: (tofen), §29.3p4, p6 and p7.
    fn fence_ok(&self, u: usize, placed: u64, last: &[usize]) -> bool {
        let ev = &self.g.events;
        let reads_ok = self.reads_after[u].iter().all(|&rd| {
            let (Some(x), Some(w)) = (ev[rd].loc, self.g.rf[rd]) else {
                return true;
            };
            let c = last[x];
            !(is_sc(self.g, w) && c != w) // (tofen)
                && (c == usize::MAX || self.sees(w, c)) // §29.3p4
                && self.sees_earlier_fences(x, w, placed) // §29.3p6
        });
        reads_ok
            && self.writes_after[u]
                .iter()
                .all(|&b| self.mo_after_earlier_fences(b, placed))
    }

    /// Whether unit `u` may come next, after the units in `placed` (last seq_cst write per
    /// location in `last`).
    fn may_place(&self, u: usize, placed: u64, last: &[usize]) -> bool {
        placed >> u & 1 == 0
            && self.pred[u] & !placed == 0
            && self.reads_ok(u, placed, last)
            && self.fence_ok(u, placed, last)
    }

    /// The last seq_cst write per location after placing unit `u` on `last`.
    fn after(&self, u: usize, last: &[usize]) -> Vec<usize> {
        let mut next = last.to_vec();
        for &e in &self.units[u] {
            if let (true, Some(x)) = (self.g.events[e].is_write(), self.g.events[e].loc) {
                next[x] = e;
            }
        }
        next
    }

    /// Iterative depth-first search: a stack of (placed, last, next unit to try).
    fn run(&self) -> bool {
        let n = self.units.len();
        let mut failed: HashSet<(u64, Vec<usize>)> = HashSet::new();
        let mut stack: Vec<(u64, Vec<usize>, usize)> =
            vec![(0, vec![usize::MAX; self.g.num_locs()], 0)];
        while let Some((placed, last, next)) = stack.pop() {
            if placed.count_ones() as usize == n {
                return true;
            }
            let child = (next..n)
                .filter(|&u| self.may_place(u, placed, &last))
                .map(|u| (u, (placed | 1 << u, self.after(u, &last))))
                .find(|(_, child)| !failed.contains(child));
            match child {
                Some((u, (p, l))) => {
                    stack.push((placed, last, u + 1));
                    stack.push((p, l, 0));
                }
                None => {
                    failed.insert((placed, last));
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::graph::{Event, EventKind};
    use crate::checker::model::Model;
    use crate::ir::MemOrder;

    /// 2+2W: T0 writes x then y, T1 writes y then x, relaxed, with a fence of `fence` order
    /// between each thread's writes; `x_first` / `y_first`: T0's write is mo-first at x / T1's
    /// write mo-first at y (both false: each thread's first write is mo-last, the outcome
    /// only §29.3p7 forbids).
    fn two_plus_two_w(fence: MemOrder, x_first: bool, y_first: bool) -> ExecutionGraph {
        let (x, y) = (0, 1);
        let mut g = ExecutionGraph::for_tests(2, 2);
        let mut writes = [[0; 2]; 2]; // per thread: first write, second write
        for (t, (a, b)) in [(x, y), (y, x)].into_iter().enumerate() {
            let ev = |kind, loc, order| Event {
                thread: t,
                kind,
                loc,
                order,
                value: 0,
                stmt: None,
                slot: None,
                deps: None,
            };
            writes[t][0] = g.push(ev(EventKind::Write, Some(a), MemOrder::Relaxed));
            g.push(ev(EventKind::Fence, None, fence));
            writes[t][1] = g.push(ev(EventKind::Write, Some(b), MemOrder::Relaxed));
        }
        // x: T0's first write and T1's second; y: T1's first write and T0's second.
        let order = |first: bool, early: usize, late: usize| {
            if first {
                [early, late]
            } else {
                [late, early]
            }
        };
        g.mo[x].extend(order(x_first, writes[0][0], writes[1][1]));
        g.mo[y].extend(order(y_first, writes[1][0], writes[0][1]));
        g
    }

    #[test]
    fn two_seq_cst_fences_order_the_writes_around_them_in_mo() {
        let exists = |g: &ExecutionGraph| sc_order_exists(g, &Model::C11.relations(g));
        // Only the outcome where both first writes are mo-last has no order of the fences.
        for (x_first, y_first) in [(true, true), (true, false), (false, true)] {
            assert!(exists(&two_plus_two_w(MemOrder::SeqCst, x_first, y_first)));
        }
        assert!(!exists(&two_plus_two_w(MemOrder::SeqCst, false, false)));
        // Weaker fences are not in `to`: nothing to order.
        assert!(exists(&two_plus_two_w(MemOrder::AcqRel, false, false)));
    }
}
