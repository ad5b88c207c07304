//! Intermediate traces: buggy execution graphs with candidate fences (thesis §6.3.1).
//!
//! For every bug of every buggy graph we keep a [`Requirement`]: the smallest part of the graph
//! the bug depends on (the po ∪ rf-prefix of the failing assertion, or of the two racing
//! accesses) together with the bug. A fence [`Assignment`] *fixes* a requirement when the graph
//! with those fences inserted is inconsistent under the model (shared/docs/memory-models.md §4:
//! a "weak" violation when coherence fails, a "strong" one when psc is cyclic) or, for a race,
//! when the two accesses become hb-ordered.
//!
//! Working on the prefix is what makes this exact: a bug exists in the program with fences iff
//! its prefix, with the fences, is consistent (consistent prefixes extend to complete
//! executions), and fences placed after the prefix cannot change it.
//!
//! Everything here is monotone: more fences, or stronger ones, never turn a fixed requirement
//! back into a buggy one. The synthesis relies on that.
//!
//! **Architecture invariant:** this module knows graphs and slots, not source text.

pub mod collect;
pub mod orders;
mod subsume;

use crate::checker::{Axiom, Bug, BugKind, ExecutionGraph, Model};
use crate::ir::{MemOrder, Program, SlotId, StmtId};
use std::collections::{BTreeMap, BTreeSet};

/// Where a fence can go: a new fence at a slot, or an existing statement whose order is
/// strengthened — a program fence, or (`fix --by orders|both`) an atomic access
/// ([`orders::AccessSites`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Site {
    Slot(SlotId),
    Existing(StmtId),
}

/// A choice of fence orders: new fences at slots and new orders for existing fences.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Assignment {
    pub orders: BTreeMap<Site, MemOrder>,
}

impl Assignment {
    pub fn get(&self, s: Site) -> Option<MemOrder> {
        self.orders.get(&s).copied()
    }
    pub fn set(&mut self, s: Site, o: MemOrder) {
        self.orders.insert(s, o);
    }
    pub fn without(&self, s: Site) -> Assignment {
        let mut a = self.clone();
        a.orders.remove(&s);
        a
    }
}

/// How an assignment fixes a requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// Coherence fails through fence-created synchronisation (thesis: a weak cycle).
    Weak,
    /// The SC order psc becomes cyclic (thesis: a strong cycle).
    Strong,
    /// Another axiom fails (sc model, atomicity, thin air).
    Other,
    /// A race whose accesses become ordered by happens-before.
    RaceOrdered,
}

impl Violation {
    pub fn as_str(self) -> &'static str {
        match self {
            Violation::Weak => "weak",
            Violation::Strong => "strong",
            Violation::Other => "other",
            Violation::RaceOrdered => "race-ordered",
        }
    }
}

/// One bug of one buggy graph, restricted to the events it depends on.
#[derive(Clone, Debug)]
pub struct Requirement {
    /// Index of the buggy graph it came from (in the order given to [`requirements`]).
    pub graph_index: usize,
    /// The po ∪ rf-prefix the bug depends on.
    pub graph: ExecutionGraph,
    pub bug: Bug,
}

impl Requirement {
    /// Whether `a` fixes this requirement under `model`, and how.
    pub fn fixed_by(&self, a: &Assignment, model: Model) -> Option<Violation> {
        self.fixed_by_with(a, model, &orders::AccessSites::none())
    }

    /// This graph with `a`'s fences inserted and `a`'s access orders (of `acc`) raised, and
    /// where each original event went.
    fn with_assignment(
        &self,
        a: &Assignment,
        acc: &orders::AccessSites,
    ) -> (ExecutionGraph, Vec<usize>) {
        let (mut g, map) = self
            .graph
            .with_fences(&|s| a.get(Site::Slot(s)), &|st| a.get(Site::Existing(st)));
        acc.apply(&mut g, a);
        (g, map)
    }

    /// [`Requirement::fixed_by`] where `a` may also strengthen the accesses of `acc`.
    pub fn fixed_by_with(
        &self,
        a: &Assignment,
        model: Model,
        acc: &orders::AccessSites,
    ) -> Option<Violation> {
        if model != Model::Rc11 {
            return self.fixed_by_relations_with(a, model, acc);
        }
        // RC11: the explorer's incremental check on the whole graph (quadratic), instead of
        // recomputing every relation (cubic); `fixed_by_relations` is the reference (tests
        // compare the two).
        let (g, map) = self.with_assignment(a, acc);
        let (axiom, views) = crate::checker::incremental::Views::rc11_verdict(&g);
        match axiom {
            Some(Axiom::Coherence) => return Some(Violation::Weak),
            Some(Axiom::Psc) => return Some(Violation::Strong),
            Some(_) => return Some(Violation::Other),
            None => {}
        }
        if let Some((x, y)) = self.bug.race {
            let (x, y) = (map[x], map[y]);
            let race = self.bug.kind == BugKind::Race;
            if views.hb_eq(&g, x, y) || race && views.hb_eq(&g, y, x) {
                return Some(Violation::RaceOrdered);
            }
        }
        None
    }

    /// [`Requirement::fixed_by`] on the relations recomputed from the axioms (every model).
    pub fn fixed_by_relations(&self, a: &Assignment, model: Model) -> Option<Violation> {
        self.fixed_by_relations_with(a, model, &orders::AccessSites::none())
    }

    /// [`Requirement::fixed_by_relations`] where `a` may also strengthen the accesses of `acc`.
    pub fn fixed_by_relations_with(
        &self,
        a: &Assignment,
        model: Model,
        acc: &orders::AccessSites,
    ) -> Option<Violation> {
        let (g, map) = self.with_assignment(a, acc);
        let rels = model.relations(&g);
        if let Some(ax) = model.violation_with(&g, &rels) {
            return Some(match ax {
                Axiom::Coherence => Violation::Weak,
                Axiom::Psc | Axiom::ScOrder => Violation::Strong,
                _ => Violation::Other,
            });
        }
        if let Some((x, y)) = self.bug.race {
            let (x, y) = (map[x], map[y]);
            let race = self.bug.kind == BugKind::Race;
            if rels.hb.has(x, y) || race && rels.hb.has(y, x) {
                return Some(Violation::RaceOrdered);
            }
        }
        None
    }

    /// The thesis's intermediate trace (§6.3.1): this graph with a candidate fence of `order` at
    /// every slot its threads passed, and every program fence raised to at least `order`.
    pub fn intermediate(&self, order: MemOrder) -> ExecutionGraph {
        self.graph.with_fences(&|_| Some(order), &|_| Some(order)).0
    }

    /// A weak cycle: with acq_rel fences everywhere, a cycle of `hb ; eco?` (coherence), hb
    /// as `model` derives it.
    pub fn weak_cycle(&self, model: Model) -> Option<Vec<usize>> {
        let g = self.intermediate(MemOrder::AcqRel);
        let r = model.relations(&g);
        r.hb.union(&r.hb.seq(&r.eco)).find_cycle()
    }

    /// A strong cycle: with seq_cst fences everywhere, a cycle of RC11's psc, hb as `model`
    /// derives it.
    pub fn strong_cycle(&self, model: Model) -> Option<Vec<usize>> {
        let g = self.intermediate(MemOrder::SeqCst);
        let r = model.relations(&g);
        r.psc(&g).find_cycle()
    }

    /// The slots passed in this requirement's graph, with where: `(thread, events before)`.
    pub fn slot_positions(&self) -> BTreeMap<SlotId, Vec<(usize, usize)>> {
        let mut out: BTreeMap<SlotId, Vec<(usize, usize)>> = BTreeMap::new();
        for (t, tr) in self.graph.threads.iter().enumerate() {
            for &(s, k) in &tr.slots {
                out.entry(s).or_default().push((t, k));
            }
        }
        out
    }

    /// The program fence statements present in this requirement's graph, with their orders.
    pub fn existing_fences(&self) -> BTreeMap<StmtId, MemOrder> {
        let mut out = BTreeMap::new();
        for ev in &self.graph.events {
            if let (true, Some(st)) = (ev.is_fence(), ev.stmt) {
                out.insert(st, ev.order);
            }
        }
        out
    }
}

/// Builds the requirements of a set of buggy graphs: one per bug, deduplicated (many graphs
/// share the prefix their bug depends on). [`collect::Collector`] does the same one graph at a
/// time, during exploration.
pub fn requirements(buggy: &[ExecutionGraph], model: Model) -> Vec<Requirement> {
    let mut c = collect::Collector::new(model);
    for g in buggy {
        c.add(g);
    }
    c.into_requirements()
}

/// [`requirements`] without dropping the requirements another bug of the same graph implies
/// (see `trace/subsume.rs`): one per distinct bug prefix. For tests and comparisons.
pub fn all_requirements(buggy: &[ExecutionGraph], model: Model) -> Vec<Requirement> {
    let mut c = collect::Collector::exhaustive(model);
    for g in buggy {
        c.add(g);
    }
    c.into_requirements()
}

/// A place a fence can go, with the order it has now (for a program fence) and the orders a
/// solution may give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub site: Site,
    /// The order of an existing program fence; `None` for a new slot.
    pub base: Option<MemOrder>,
    /// Orders a solution may choose, weakest first.
    pub orders: Vec<MemOrder>,
}

/// Where each slot sits in each requirement: `(requirement, [(thread, events before)])`.
type SlotSignature = Vec<(usize, Vec<(usize, usize)>)>;

/// The candidate sites of a set of requirements and the orders each can take.
///
/// Slots that sit at the same positions in every requirement graph are interchangeable: only
/// the first (in slot order, i.e. source order) is kept. Slots never passed in any requirement
/// cannot help and are left out. Existing fences can be raised to any stronger order.
pub fn candidate_sites(prog: &Program, reqs: &[Requirement]) -> Vec<Candidate> {
    let mut signature: BTreeMap<SlotId, SlotSignature> = BTreeMap::new();
    let mut existing: BTreeMap<StmtId, MemOrder> = BTreeMap::new();
    for (ri, r) in reqs.iter().enumerate() {
        for (s, pos) in r.slot_positions() {
            signature.entry(s).or_default().push((ri, pos));
        }
        existing.extend(r.existing_fences());
    }
    let mut seen_sig = BTreeSet::new();
    let mut out = Vec::new();
    for (s, sig) in signature {
        if s < prog.slots.len() && seen_sig.insert(sig) {
            out.push(Candidate {
                site: Site::Slot(s),
                base: None,
                orders: MemOrder::FENCE_ORDERS.to_vec(),
            });
        }
    }
    for (st, base) in existing {
        let stronger: Vec<MemOrder> = MemOrder::FENCE_ORDERS
            .iter()
            .copied()
            .filter(|&o| o != base && base.le(o))
            .collect();
        if !stronger.is_empty() {
            out.push(Candidate {
                site: Site::Existing(st),
                base: Some(base),
                orders: stronger,
            });
        }
    }
    out
}
