//! Access-order candidates (`fix --by orders|both`): the atomic accesses whose memory order a fix
//! may strengthen, and how a strengthening changes a requirement's graph.
//!
//! A strengthened access is a [`Site::Existing`] of its statement, like a strengthened program
//! fence: the statement's order is raised. In the graph it changes the order of the access's
//! own events and nothing else (po, rf and mo stay), which is exact: the consistent graphs of the
//! program with the stronger order are those of the program as written whose changed events are
//! consistent with the stronger order, and every relation (sw, hb, psc) only grows with the
//! order (monotone, as fences are).
//!
//! A statement is a candidate when it holds exactly one atomic memory instruction (a load, store,
//! read-modify-write or compare-and-swap; plain accesses may sit beside it and are never
//! changed — a non-atomic access is never made atomic) and no fence. Statements the front end
//! copied (an inlined function's body, once per call) share their span; they are one candidate,
//! named by the first of them.
//!
//! A compare-and-swap's order is its success order; its failure order (a failed CAS is a plain
//! read event) is never changed, so every pair stays valid (the failure order is no stronger
//! than the success order, which only grows).

use super::{Assignment, Candidate, Site};
use crate::checker::ExecutionGraph;
use crate::ir::{Instr, MemOrder, Program, StmtId};
use std::collections::BTreeMap;

/// What kind of atomic access a candidate statement holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Load,
    Store,
    Rmw,
    Cas,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Rmw => "rmw",
            AccessKind::Cas => "cas",
        }
    }

    /// The orders an access of this kind can have, weakest first (C11 §7.17.7: a load is
    /// never release, a store never acquire).
    pub fn orders(self) -> &'static [MemOrder] {
        use MemOrder::*;
        match self {
            AccessKind::Load => &[Relaxed, Acquire, SeqCst],
            AccessKind::Store => &[Relaxed, Release, SeqCst],
            AccessKind::Rmw | AccessKind::Cas => &[Relaxed, Acquire, Release, AcqRel, SeqCst],
        }
    }

    /// The orders an access of this kind with order `base` can be strengthened to.
    pub fn stronger(self, base: MemOrder) -> Vec<MemOrder> {
        self.orders()
            .iter()
            .copied()
            .filter(|&o| o != base && base.le(o))
            .collect()
    }

    /// The orders one lattice step below `o` that an access of this kind can have.
    pub fn one_step_weaker(self, o: MemOrder) -> Vec<MemOrder> {
        self.orders()
            .iter()
            .copied()
            .filter(|&w| w != o && w.le(o))
            .filter(|&w| {
                !self
                    .orders()
                    .iter()
                    .any(|&m| m != w && m != o && w.le(m) && m.le(o))
            })
            .collect()
    }
}

/// One access a fix may strengthen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessSite {
    /// The candidate's statement (the first of the statements sharing its span).
    pub stmt: StmtId,
    pub kind: AccessKind,
    /// Its order as written (a CAS: the success order).
    pub order: MemOrder,
}

/// The access candidates of a program, and which statement of the program stands for which.
#[derive(Clone, Debug, Default)]
pub struct AccessSites {
    /// Every statement of a candidate (copies included) → its candidate.
    by_stmt: BTreeMap<StmtId, AccessSite>,
}

/// No access may change (`fix --by fences`), for callers that need a reference.
pub static NO_ACCESSES: AccessSites = AccessSites {
    by_stmt: BTreeMap::new(),
};

impl AccessSites {
    /// No access may change (`fix --by fences`).
    pub fn none() -> AccessSites {
        AccessSites::default()
    }

    /// The candidate accesses of `prog`.
    pub fn of(prog: &Program) -> AccessSites {
        // Per statement: its atomic memory instructions (kind, order, address) and whether it
        // has a fence. Two accesses of one kind and order at different addresses are two
        // (`while (load(&a) && load(&b))`), and such a statement is no candidate.
        type Found = (Vec<(AccessKind, MemOrder, crate::ir::Addr)>, bool);
        let mut found: BTreeMap<StmtId, Found> = BTreeMap::new();
        for f in &prog.functions {
            for (pc, ins) in f.body.iter().enumerate() {
                let st = f.stmt_of[pc];
                let access = match ins {
                    Instr::Load { order, .. } if order.is_atomic() => {
                        Some((AccessKind::Load, *order))
                    }
                    Instr::Store { order, .. } if order.is_atomic() => {
                        Some((AccessKind::Store, *order))
                    }
                    Instr::Rmw { order, .. } => Some((AccessKind::Rmw, *order)),
                    Instr::Cas { order, .. } => Some((AccessKind::Cas, *order)),
                    Instr::Fence { .. } => {
                        found.entry(st).or_default().1 = true;
                        None
                    }
                    _ => None,
                };
                if let Some((kind, order)) = access {
                    let addr = ins.access().map(|(a, _)| a.clone());
                    let Some(a) = addr.map(|addr| (kind, order, addr)) else {
                        continue;
                    };
                    let e = &mut found.entry(st).or_default().0;
                    // An instruction copied within one statement (a loop's condition lowered
                    // twice) is the same access.
                    if !e.contains(&a) {
                        e.push(a);
                    }
                }
            }
        }
        let mut first: BTreeMap<(usize, usize), StmtId> = BTreeMap::new();
        let mut by_stmt = BTreeMap::new();
        for (st, (accesses, fence)) in found {
            let ([(kind, order, _)], false) = (accesses.as_slice(), fence) else {
                continue;
            };
            let Some(s) = prog.stmts.get(st) else {
                continue;
            };
            let canon = *first.entry((s.span.start, s.span.end)).or_insert(st);
            by_stmt.insert(
                st,
                AccessSite {
                    stmt: canon,
                    kind: *kind,
                    order: *order,
                },
            );
        }
        // Copies must agree with the candidate they are named by (same access, same order).
        let canon: BTreeMap<StmtId, AccessSite> = by_stmt
            .values()
            .filter(|a| by_stmt.get(&a.stmt) == Some(a))
            .map(|a| (a.stmt, *a))
            .collect();
        by_stmt.retain(|_, a| canon.get(&a.stmt) == Some(a));
        AccessSites { by_stmt }
    }

    pub fn is_empty(&self) -> bool {
        self.by_stmt.is_empty()
    }

    /// The candidate statement `st` belongs to.
    pub fn get(&self, st: StmtId) -> Option<AccessSite> {
        self.by_stmt.get(&st).copied()
    }

    /// Whether `st` names a candidate (is the statement a [`Site::Existing`] stands for).
    pub fn is_candidate(&self, st: StmtId) -> bool {
        self.get(st).is_some_and(|a| a.stmt == st)
    }

    /// The candidates, in statement order.
    pub fn candidates(&self) -> impl Iterator<Item = AccessSite> + '_ {
        self.by_stmt
            .values()
            .filter(|a| self.is_candidate(a.stmt))
            .copied()
    }

    /// The candidates the events of `g` pass (statements of atomic accesses in it).
    pub fn passed(&self, g: &ExecutionGraph) -> std::collections::BTreeSet<StmtId> {
        g.events
            .iter()
            .filter(|ev| ev.is_access() && ev.order.is_atomic())
            .filter_map(|ev| self.get(ev.stmt?))
            .map(|a| a.stmt)
            .collect()
    }

    /// The candidate sites of the accesses that `reqs`' graphs pass, with their stronger
    /// orders.
    pub fn candidate_sites(&self, graphs: &[&ExecutionGraph]) -> Vec<Candidate> {
        let mut passed = std::collections::BTreeSet::new();
        for g in graphs {
            passed.extend(self.passed(g));
        }
        passed
            .into_iter()
            .filter_map(|st| {
                let a = self.get(st)?;
                let orders = a.kind.stronger(a.order);
                (!orders.is_empty()).then_some(Candidate {
                    site: Site::Existing(st),
                    base: Some(a.order),
                    orders,
                })
            })
            .collect()
    }

    /// Raises the orders of the access events of `g` as `a` says (`g` already holds `a`'s
    /// fences; events of the original graph are `g`'s by `map`).
    pub(super) fn apply(&self, g: &mut ExecutionGraph, a: &Assignment) {
        if self.is_empty() {
            return;
        }
        let mut in_rmw = BTreeMap::new();
        for &(r, w) in &g.rmw {
            in_rmw.insert(r, true);
            in_rmw.insert(w, false);
        }
        for (e, ev) in g.events.iter_mut().enumerate() {
            if !ev.is_access() || !ev.order.is_atomic() || ev.slot.is_some() {
                continue;
            }
            let Some(site) = ev.stmt.and_then(|st| self.get(st)) else {
                continue;
            };
            let Some(o) = a.get(Site::Existing(site.stmt)) else {
                continue;
            };
            let new = match (site.kind, in_rmw.get(&e)) {
                (AccessKind::Load | AccessKind::Store, _) => o,
                (AccessKind::Rmw | AccessKind::Cas, Some(&read)) => {
                    let (r, w) = crate::checker::explore::split_rmw_order(o);
                    if read {
                        r
                    } else {
                        w
                    }
                }
                // A failed compare-and-swap keeps its failure order.
                (AccessKind::Cas, None) => continue,
                // A read-modify-write's events always come in pairs.
                (AccessKind::Rmw, None) => continue,
            };
            ev.order = ev.order.join(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemOrder::*;

    #[test]
    fn orders_by_kind() {
        assert_eq!(AccessKind::Load.stronger(Relaxed), vec![Acquire, SeqCst]);
        assert_eq!(AccessKind::Store.stronger(Relaxed), vec![Release, SeqCst]);
        assert_eq!(AccessKind::Cas.stronger(Acquire), vec![AcqRel, SeqCst]);
        assert_eq!(AccessKind::Store.one_step_weaker(SeqCst), vec![Release]);
        assert_eq!(AccessKind::Rmw.one_step_weaker(SeqCst), vec![AcqRel]);
        assert_eq!(
            AccessKind::Rmw.one_step_weaker(AcqRel),
            vec![Acquire, Release]
        );
        assert_eq!(AccessKind::Load.one_step_weaker(Acquire), vec![Relaxed]);
        assert!(AccessKind::Load.one_step_weaker(Relaxed).is_empty());
    }
}
