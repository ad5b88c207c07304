//! One type per memory model behind [`MemoryModel`]: the model's axioms on full relations and
//! the explorer's incremental hooks (see the module docs of [`super`]).

use super::{sc_order_exists, Axiom, Model, Relations, ReleaseSeq};
use crate::checker::graph::ExecutionGraph;
use crate::checker::hardware::{self, HwAxiom, Machine};
use crate::checker::incremental::Views;

/// The consistency of one memory model: its axioms on a whole graph, and the hooks through
/// which the explorer checks a growing graph incrementally (event ids a po ∪ rf order, one
/// event — or an RMW's two — added per step, the graph before the step consistent).
///
/// The explorer keeps, besides the graph and its [`Views`], one bit: whether every event added
/// so far is a seq_cst access (`all_sc`). Under `--equiv rf|value` it checks by SC witness and
/// calls none of the incremental hooks.
pub trait MemoryModel: Sync {
    /// The user-facing name of the model.
    fn model(&self) -> Model;

    /// Which writes continue a release sequence (§1): C++20's rule unless the model says
    /// otherwise. The explorer's views ([`Views::new`]) and [`Relations::compute`] follow it.
    fn release_sequence(&self) -> ReleaseSeq {
        ReleaseSeq::Rmw
    }

    /// The first axiom of the model that `g` (with relations `r`, computed with the model's
    /// [`MemoryModel::release_sequence`]) violates, or `None`.
    fn violation_with(&self, g: &ExecutionGraph, r: &Relations) -> Option<Axiom>;

    /// As [`MemoryModel::violation_with`], computing the relations the model needs.
    fn violation(&self, g: &ExecutionGraph) -> Option<Axiom> {
        self.violation_with(g, &Relations::compute(g, self.release_sequence()))
    }

    /// Whether every axiom is preserved by taking po ∪ rf-prefixes. When not, the explorer
    /// prunes partial graphs by [`MemoryModel::prefix_violation`] only and applies
    /// [`MemoryModel::violation`] to each complete execution.
    fn prefix_closed(&self) -> bool {
        true
    }

    /// The first violated axiom among those preserved by taking po ∪ rf-prefixes (every
    /// axiom of a prefix-closed model).
    fn prefix_violation(&self, g: &ExecutionGraph) -> Option<Axiom> {
        self.violation(g)
    }

    /// Whether the model's axioms read the events' dependencies (see `deps`).
    fn needs_dependencies(&self) -> bool {
        false
    }

    /// Whether complete executions are checked for data races (not on hardware, where a
    /// plain access is an ordinary machine load or store).
    fn has_races(&self) -> bool {
        true
    }

    /// Explorer hook, on the initial graph (initialisation writes only): set up what the
    /// views must keep for [`MemoryModel::step_consistent`]. `may_leave_sc`: the program has
    /// an access or fence that is not a seq_cst access.
    fn init_views(&self, _views: &mut Views, _may_leave_sc: bool) {}

    /// Explorer hook, when the event just added to `g` is the first that is not a seq_cst
    /// access (`all_sc` turns false; `views` already has the event).
    fn left_sc(&self, _views: &mut Views, _g: &ExecutionGraph) {}

    /// Explorer hook: the coherence frontier of thread `t`'s next access to `loc`, as a
    /// position in `g.mo[loc]` — a read may read only from writes at or after it, a write is
    /// placed after it. `sc_step`: every event of `g` and the pending access are seq_cst
    /// accesses.
    fn frontier(
        &self,
        views: &Views,
        g: &ExecutionGraph,
        t: usize,
        loc: usize,
        sc_step: bool,
    ) -> usize;

    /// Explorer hook: whether `g` — a consistent graph extended by one event (or an RMW)
    /// within the frontier, and whose RMWs read distinct writes — is consistent, as far as
    /// the prefix-closed axioms go. `all_sc`: every event of `g` is a seq_cst access.
    fn step_consistent(&self, views: &Views, g: &ExecutionGraph, all_sc: bool) -> bool;
}

/// No thin air and atomicity, the axioms the language-level models share.
fn thin_air_or_atomicity(r: &Relations) -> Option<Axiom> {
    if !r.po.union(&r.rf).is_acyclic() {
        return Some(Axiom::NoThinAir);
    }
    if !r.rmw.intersect(&r.fr.seq(&r.mo)).is_empty() {
        return Some(Axiom::Atomicity);
    }
    None
}

/// RC11's and C11's coherence: `hb` irreflexive and `hb ; eco` irreflexive.
fn coherence(r: &Relations) -> Option<Axiom> {
    (!r.hb.is_irreflexive() || !r.hb.seq(&r.eco).is_irreflexive()).then_some(Axiom::Coherence)
}

/// The coherence frontier of thread `t`'s next access to `loc` from its hb-prefix.
fn hb_frontier(views: &Views, g: &ExecutionGraph, t: usize, loc: usize) -> usize {
    let clock = views.pre_clock(g, t);
    views.frontier(g, &clock, loc)
}

/// `rc11` (§2): coherence, atomicity, psc acyclic, no thin air.
///
/// Incrementally: coherence by the hb frontier, psc kept by the views (from the start when the
/// program may leave seq_cst accesses, else started when it does); while every event is a
/// seq_cst access RC11 is SC (Lahav et al., PLDI 2017), checked by the SC frontier without psc.
pub struct Rc11;

impl MemoryModel for Rc11 {
    fn model(&self) -> Model {
        Model::Rc11
    }

    fn violation_with(&self, g: &ExecutionGraph, r: &Relations) -> Option<Axiom> {
        thin_air_or_atomicity(r)
            .or_else(|| coherence(r))
            .or_else(|| (!r.psc(g).is_acyclic()).then_some(Axiom::Psc))
    }

    fn init_views(&self, views: &mut Views, may_leave_sc: bool) {
        if may_leave_sc {
            views.track_psc();
        }
    }

    fn left_sc(&self, views: &mut Views, g: &ExecutionGraph) {
        // (Kept from the start unless the program looked all seq_cst.)
        if views.psc_cyclic().is_none() {
            views.start_psc(g);
        }
    }

    #[inline]
    fn frontier(
        &self,
        views: &Views,
        g: &ExecutionGraph,
        t: usize,
        loc: usize,
        sc_step: bool,
    ) -> usize {
        if sc_step {
            views.sc_frontier(g, t, loc)
        } else {
            hb_frontier(views, g, t, loc)
        }
    }

    #[inline]
    fn step_consistent(&self, views: &Views, _g: &ExecutionGraph, all_sc: bool) -> bool {
        all_sc || !views.psc_cyclic().expect("rc11 tracks psc")
    }
}

/// `c11` (§3, the thesis's Figure 3.6): RC11's coherence, atomicity and no thin air, and a
/// total order on the seq_cst events ([`sc_order_exists`]) — not prefix-closed, so checked on
/// complete executions only. Incrementally: the hb frontier; nothing else per step.
pub struct C11;

impl MemoryModel for C11 {
    fn model(&self) -> Model {
        Model::C11
    }

    /// C++11's rule in the RC11 paper's `po|loc` form (the thesis's footnote states C++11's
    /// own mo-contiguous wording, which differs only when another thread's plain store
    /// interrupts the sequence in mo; see docs/memory-models.md §3).
    fn release_sequence(&self) -> ReleaseSeq {
        ReleaseSeq::SameThread
    }

    fn violation_with(&self, g: &ExecutionGraph, r: &Relations) -> Option<Axiom> {
        self.prefix_violation_with(r)
            .or_else(|| (!sc_order_exists(g, r)).then_some(Axiom::ScOrder))
    }

    fn prefix_closed(&self) -> bool {
        false
    }

    fn prefix_violation(&self, g: &ExecutionGraph) -> Option<Axiom> {
        self.prefix_violation_with(&Relations::compute(g, self.release_sequence()))
    }

    #[inline]
    fn frontier(&self, views: &Views, g: &ExecutionGraph, t: usize, loc: usize, _: bool) -> usize {
        hb_frontier(views, g, t, loc)
    }

    #[inline]
    fn step_consistent(&self, _: &Views, _: &ExecutionGraph, _: bool) -> bool {
        true
    }
}

impl C11 {
    fn prefix_violation_with(&self, r: &Relations) -> Option<Axiom> {
        thin_air_or_atomicity(r).or_else(|| coherence(r))
    }
}

/// `sc` (§3): `acyclic(po ∪ rf ∪ mo ∪ fr)` and atomicity; memory orders are ignored.
/// Incrementally the SC frontier (of the new event's backward po ∪ rf ∪ mo ∪ fr closure) is the
/// whole check.
pub struct Sc;

impl MemoryModel for Sc {
    fn model(&self) -> Model {
        Model::Sc
    }

    fn violation_with(&self, _: &ExecutionGraph, r: &Relations) -> Option<Axiom> {
        thin_air_or_atomicity(r).or_else(|| {
            let all = r.po.union(&r.rf).union(&r.mo).union(&r.fr);
            (!all.is_acyclic()).then_some(Axiom::SeqCst)
        })
    }

    #[inline]
    fn frontier(&self, views: &Views, g: &ExecutionGraph, t: usize, loc: usize, _: bool) -> usize {
        views.sc_frontier(g, t, loc)
    }

    #[inline]
    fn step_consistent(&self, _: &Views, _: &ExecutionGraph, _: bool) -> bool {
        true
    }
}

/// The hardware models `tso`, `pso` and `armv8` (see [`hardware`]), over the program as
/// compilers map it to the machine: no hb, no races. Incrementally: every source and position
/// is tried (frontier 0) and the full axioms, which are prefix-closed, decide each step.
pub struct Hardware(pub Machine);

impl MemoryModel for Hardware {
    fn model(&self) -> Model {
        match self.0 {
            Machine::Tso => Model::Tso,
            Machine::Pso => Model::Pso,
            Machine::Armv8 => Model::Armv8,
        }
    }

    /// The machine's axioms on its own relations (`r` is not used).
    fn violation_with(&self, g: &ExecutionGraph, _: &Relations) -> Option<Axiom> {
        self.violation(g)
    }

    fn violation(&self, g: &ExecutionGraph) -> Option<Axiom> {
        hardware::violation(self.0, g).map(|a| match a {
            HwAxiom::NoThinAir => Axiom::NoThinAir,
            HwAxiom::Atomicity => Axiom::Atomicity,
            HwAxiom::PerLocation => Axiom::PerLocation,
            HwAxiom::GlobalOrder => Axiom::MachineOrder,
        })
    }

    fn needs_dependencies(&self) -> bool {
        self.0 == Machine::Armv8
    }

    fn has_races(&self) -> bool {
        false
    }

    #[inline]
    fn frontier(&self, _: &Views, _: &ExecutionGraph, _: usize, _: usize, _: bool) -> usize {
        0
    }

    fn step_consistent(&self, _: &Views, g: &ExecutionGraph, _: bool) -> bool {
        self.violation(g).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::graph::{Event, EventKind};
    use crate::ir::MemOrder;
    use clap::ValueEnum;

    #[test]
    fn every_model_has_its_own_semantics() {
        for &m in Model::value_variants() {
            assert_eq!(m.semantics().model(), m);
            assert_eq!(m.semantics().has_races(), !m.is_hardware(), "{m}");
            assert_eq!(m.semantics().prefix_closed(), m != Model::C11, "{m}");
        }
    }

    /// Store buffering with seq_cst accesses, both reads reading the initial values.
    fn sb_sc() -> ExecutionGraph {
        let mut g = ExecutionGraph::for_tests(2, 2);
        for (t, (mine, other)) in [(0, 1), (1, 0)].into_iter().enumerate() {
            let ev = |kind, loc| Event {
                thread: t,
                kind,
                loc: Some(loc),
                order: MemOrder::SeqCst,
                value: 0,
                stmt: None,
                slot: None,
                deps: None,
            };
            let w = g.push(ev(EventKind::Write, mine));
            g.mo[mine].push(w);
            let r = g.push(ev(EventKind::Read, other));
            g.rf[r] = Some(other); // the initialisation write of `other`
        }
        g
    }

    #[test]
    fn store_buffering_violates_each_language_model_s_sc_axiom() {
        let g = sb_sc();
        assert_eq!(Rc11.violation(&g), Some(Axiom::Psc));
        assert_eq!(Sc.violation(&g), Some(Axiom::SeqCst));
        assert_eq!(C11.violation(&g), Some(Axiom::ScOrder));
        // C11's SC order is not prefix-closed: the prefix check leaves it to the end.
        assert_eq!(C11.prefix_violation(&g), None);
        assert_eq!(Model::C11.prefix_violation(&g), None);
        assert_eq!(Model::Rc11.prefix_violation(&g), Some(Axiom::Psc));
        for m in [Model::Rc11, Model::C11, Model::Sc] {
            let r = m.relations(&g);
            assert_eq!(m.violation_with(&g, &r), m.violation(&g), "{m}");
        }
    }
}
