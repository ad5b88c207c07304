//! Memory models: derived relations and per-model consistency (shared/docs/memory-models.md §1–3).
//!
//! [`Relations::compute`] derives po, rf, mo, rmw, fr, eco, rs, sw and hb of a graph exactly as
//! §1 defines them, with release sequences by the model's rule ([`ReleaseSeq`]: C++20's for
//! `rc11` and `sc`, the RC11 paper's `po|loc` form of C++11's for `c11`;
//! [`Model::relations`]). Each model's consistency is one type behind the [`MemoryModel`]
//! trait (`semantics.rs`), reached from the user-facing [`Model`] by [`Model::semantics`]. The
//! trait owns the model's axioms on full relations ([`MemoryModel::violation_with`], the
//! reference that trace, synth and the tests use through [`Model::violation`]), whether they are
//! prefix-closed ([`MemoryModel::prefix_closed`], [`MemoryModel::prefix_violation`]), and the
//! explorer's incremental hooks, so that the explorer never branches on the model: what the
//! views keep from the start and when the first non-seq_cst event arrives
//! ([`MemoryModel::init_views`], [`MemoryModel::left_sc`]: RC11's psc), the coherence
//! frontier of a thread's next access ([`MemoryModel::frontier`]) and the verdict on each step
//! ([`MemoryModel::step_consistent`]). The models:
//!
//! * `rc11` ([`Rc11`]; RC11, Lahav et al. PLDI 2017, with C++20's release sequences; §2):
//!   coherence `irreflexive(hb ; eco?)`, atomicity `rmw ∩ (fr ; mo) = ∅`, SC
//!   `acyclic(psc_base ∪ psc_F)`, no thin air `acyclic(po ∪ rf)`. Incrementally: the hb
//!   frontier and the psc the views keep; while every event is a seq_cst access, the SC
//!   frontier alone (RC11 is SC there).
//! * `c11` ([`C11`]; §3, the thesis's C11 model, Figure 3.6): RC11's coherence, atomicity and
//!   no thin air, and instead of psc the existence of a total order `to` on the seq_cst events
//!   that contains hb and mo between them (coto), in which every seq_cst read reads from the
//!   last seq_cst write to its location before it, or from a non-seq_cst write not hb-before
//!   that last write (rfto1, rfto2), in which a seq_cst write read after a seq_cst fence of
//!   the reading thread is the last seq_cst write to the location before the fence (tofen),
//!   and which satisfies C++11's fence rules §29.3p4–p7 (p7: two seq_cst fences ordered in
//!   `to` order the writes before the first and after the second in mo). An RMW is one action
//!   of `to` (its read and write parts are adjacent). The order is searched for (see
//!   [`sc_order_exists`]). Unlike RC11's axioms this condition is not preserved by taking
//!   prefixes, so the explorer applies it to complete executions only.
//! * `sc` ([`Sc`]; §3): `acyclic(po ∪ rf ∪ mo ∪ fr)` and atomicity; memory orders are
//!   ignored. Incrementally: the SC frontier is the whole check.
//! * `tso`, `pso`, `armv8` ([`Hardware`] of a [`Machine`]; §3): the hardware models of
//!   [`super::hardware`], over the program as compilers map it to the machine (no hb; no data
//!   races). Incrementally: frontier 0 and the full axioms on every step.
//!
//! Coherence failures are the thesis's "weak" violations (its six co-* constraints), psc cycles
//! its "strong" ones (the (tosc)/(tofen) total order).
//!
//! The explorer calls the hooks through `&'static dyn MemoryModel`: a virtual call per step is
//! lost in the step's own work (measured against the former `match`: no difference).

use super::graph::{ExecutionGraph, INIT_THREAD};
use super::hardware::Machine;
use super::relation::Rel;
use std::fmt;

mod sc_order;
mod semantics;

pub use sc_order::sc_order_exists;

pub use semantics::{Hardware, MemoryModel, Rc11, Sc, C11};

/// A memory model fensyn can check against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// RC11 (repaired C11), the default, as in GenMC.
    Rc11,
    /// The thesis's C11 model (its Figure 3.6): a total order on seq_cst events.
    C11,
    /// Sequential consistency: interleavings only.
    Sc,
    /// x86-TSO, on the program as compilers map it to x86 (docs/hardware-models.md).
    Tso,
    /// PSO (partial store order), on the program as mapped to SPARC PSO.
    Pso,
    /// ARMv8 (Pulte et al., POPL 2018), on the program as mapped to AArch64, restricted to
    /// executions without load buffering (po ∪ rf acyclic).
    Armv8,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Rc11 => "rc11",
            Model::C11 => "c11",
            Model::Sc => "sc",
            Model::Tso => "tso",
            Model::Pso => "pso",
            Model::Armv8 => "armv8",
        }
    }

    /// The machine of a hardware model (`None` for the language-level models).
    pub fn machine(self) -> Option<Machine> {
        match self {
            Model::Tso => Some(Machine::Tso),
            Model::Pso => Some(Machine::Pso),
            Model::Armv8 => Some(Machine::Armv8),
            Model::Rc11 | Model::C11 | Model::Sc => None,
        }
    }

    /// Whether the model's axioms read the events' dependencies (see `deps`).
    pub fn needs_dependencies(self) -> bool {
        self.semantics().needs_dependencies()
    }

    /// Whether the model is a hardware model: it has no data races (see `hardware`).
    pub fn is_hardware(self) -> bool {
        self.machine().is_some()
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The axiom an inconsistent graph violates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axiom {
    /// `hb ; eco?` has a cycle: a "weak" violation.
    Coherence,
    /// An RMW does not read from its immediate mo-predecessor.
    Atomicity,
    /// `psc` has a cycle: a "strong" violation.
    Psc,
    /// `po ∪ rf` has a cycle.
    NoThinAir,
    /// `po ∪ rf ∪ mo ∪ fr` has a cycle (model `sc`).
    SeqCst,
    /// No total order on the seq_cst events satisfies (coto), (rfto1), (rfto2) and (tofen)
    /// (model `c11`): a "strong" violation.
    ScOrder,
    /// `po|loc ∪ rf ∪ mo ∪ fr` has a cycle (hardware models: SC per location).
    PerLocation,
    /// The machine's global order `ppo ∪ fence ∪ rfe ∪ mo ∪ fr` has a cycle (hardware models).
    MachineOrder,
}

impl Axiom {
    pub fn describe(self) -> &'static str {
        match self {
            Axiom::Coherence => "coherence (hb ; eco? irreflexive)",
            Axiom::Atomicity => "atomicity (rmw ∩ fr ; mo = ∅)",
            Axiom::Psc => "SC order (psc acyclic)",
            Axiom::NoThinAir => "no thin air (po ∪ rf acyclic)",
            Axiom::SeqCst => "sequential consistency (po ∪ rf ∪ mo ∪ fr acyclic)",
            Axiom::ScOrder => "C11 SC order (a total order `to` on seq_cst events)",
            Axiom::PerLocation => "SC per location (po|loc ∪ rf ∪ mo ∪ fr acyclic)",
            Axiom::MachineOrder => {
                "the machine's global order (ppo ∪ fence ∪ rfe ∪ mo ∪ fr acyclic)"
            }
        }
    }
}

/// Which writes continue a release sequence (docs/memory-models.md §1). Both rules are monotone
/// and prefix-closed; [`ReleaseSeq::Rmw`] gives fewer sw edges, so a fence set that fixes a
/// program under it also fixes it under [`ReleaseSeq::SameThread`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReleaseSeq {
    /// C++20 (P0982R1), what `rc11` (and `sc`, for its data races) uses:
    /// `rs = [W ⊒ rlx] ; (rf ; rmw)*` — only RMWs continue a release sequence.
    Rmw,
    /// The RC11 paper's (PLDI 2017) reading of C++11, kept by `c11`:
    /// `rs = [W] ; po|loc? ; [W ⊒ rlx] ; (rf ; rmw)*` — a later atomic store of the same
    /// thread to the same location continues it too.
    SameThread,
}

/// The base and derived relations of one graph.
#[derive(Clone, Debug)]
pub struct Relations {
    pub po: Rel,
    pub rf: Rel,
    pub mo: Rel,
    pub rmw: Rel,
    pub fr: Rel,
    pub eco: Rel,
    pub sw: Rel,
    pub hb: Rel,
}

impl Relations {
    /// Derives every relation of shared/docs/memory-models.md §1 for `g`, with release
    /// sequences as `rs` says (a model's own: [`Model::relations`]).
    pub fn compute(g: &ExecutionGraph, rs: ReleaseSeq) -> Relations {
        let n = g.len();
        let ev = &g.events;
        // po: init before everything, program order within threads, spawn/join edges.
        let po = super::hardware::program_order(g);
        let rf = super::hardware::rf_relation(g);
        let mo = super::hardware::mo_relation(g);
        let mut rmw = Rel::new(n);
        for &(r, w) in &g.rmw {
            rmw.add(r, w);
        }
        let fr = rf.inverse().seq(&mo).filter(|a, b| a != b);
        let eco = rf.union(&mo).union(&fr).plus();

        // rs = [W ⊒ rlx] ; (rf ; rmw)* (C++20), or with `[W] ; po|loc?` in front (RC11 2017,
        // `c11`). Here and in sw's fence parts po is a thread's own program order: thread
        // creation and joins are in hb (through `po` below), but a parent's release write
        // does not head a release sequence through its children's writes, nor does a fence
        // synchronise through another thread's accesses (what `incremental` computes, and
        // the oracle tests check).
        let thread_po = po.filter(|a, b| ev[a].thread == ev[b].thread);
        let is_w = |e: usize| ev[e].is_write();
        let atomic_w = |e: usize| is_w(e) && ev[e].order.is_atomic();
        let rs0 = match rs {
            ReleaseSeq::Rmw => Rel::identity_on(n, atomic_w),
            ReleaseSeq::SameThread => {
                let same_loc = |a: usize, b: usize| ev[a].loc.is_some() && ev[a].loc == ev[b].loc;
                thread_po.filter(same_loc).opt().restrict(is_w, atomic_w)
            }
        };
        let rf_rmw = rf.seq(&rmw);
        let rs = rs0.union(&rs0.seq(&rf_rmw.plus()));
        // sw = [E ⊒ rel] ; ([F] ; po)? ; rs ; rf ; [R ⊒ rlx] ; (po ; [F])? ; [E ⊒ acq]
        let rel_side = Rel::identity_on(n, |e| ev[e].order.is_release())
            .union(&thread_po.restrict(|a| ev[a].is_fence() && ev[a].order.is_release(), |_| true));
        let acq_side = Rel::identity_on(n, |e| ev[e].order.is_acquire())
            .union(&thread_po.restrict(|_| true, |b| ev[b].is_fence() && ev[b].order.is_acquire()));
        let rf_atomic = rf.restrict(|_| true, |r| ev[r].is_read() && ev[r].order.is_atomic());
        let sw = rel_side.seq(&rs).seq(&rf_atomic).seq(&acq_side);
        let hb = po.union(&sw).plus();
        Relations {
            po,
            rf,
            mo,
            rmw,
            fr,
            eco,
            sw,
            hb,
        }
    }

    /// RC11's partial SC relation `psc = psc_base ∪ psc_F` (§2, axiom 3).
    pub fn psc(&self, g: &ExecutionGraph) -> Rel {
        let n = g.len();
        let ev = &g.events;
        let is_sc = |e: usize| ev[e].order.is_sc() && (ev[e].is_access() || ev[e].is_fence());
        let is_fsc = |e: usize| ev[e].is_fence() && ev[e].order.is_sc();
        let same_loc = |a: usize, b: usize| ev[a].loc.is_some() && ev[a].loc == ev[b].loc;
        let po_nloc = self.po.filter(|a, b| !same_loc(a, b));
        let hb_loc = self.hb.filter(same_loc);
        let scb = self
            .po
            .union(&po_nloc.seq(&self.hb).seq(&po_nloc))
            .union(&hb_loc)
            .union(&self.mo)
            .union(&self.fr);
        let hb_opt = self.hb.opt();
        let left = Rel::identity_on(n, is_sc).union(&hb_opt.restrict(is_fsc, |_| true));
        let right = Rel::identity_on(n, is_sc).union(&hb_opt.restrict(|_| true, is_fsc));
        let psc_base = left.seq(&scb).seq(&right);
        let psc_f = self
            .hb
            .union(&self.hb.seq(&self.eco).seq(&self.hb))
            .restrict(is_fsc, is_fsc);
        psc_base.union(&psc_f)
    }
}

impl Model {
    /// The model's consistency: its axioms and the explorer's incremental hooks.
    pub fn semantics(self) -> &'static dyn MemoryModel {
        static TSO: Hardware = Hardware(Machine::Tso);
        static PSO: Hardware = Hardware(Machine::Pso);
        static ARMV8: Hardware = Hardware(Machine::Armv8);
        match self {
            Model::Rc11 => &Rc11,
            Model::C11 => &C11,
            Model::Sc => &Sc,
            Model::Tso => &TSO,
            Model::Pso => &PSO,
            Model::Armv8 => &ARMV8,
        }
    }

    /// Which writes continue a release sequence under the model (§1).
    pub fn release_sequence(self) -> ReleaseSeq {
        self.semantics().release_sequence()
    }

    /// The relations of `g` as the model derives them (its release sequences).
    pub fn relations(self, g: &ExecutionGraph) -> Relations {
        Relations::compute(g, self.release_sequence())
    }

    /// The first axiom of the model that `g` violates, or `None` if `g` is consistent.
    pub fn violation(self, g: &ExecutionGraph) -> Option<Axiom> {
        self.semantics().violation(g)
    }

    /// As [`Model::violation`], reusing already computed relations.
    pub fn violation_with(self, g: &ExecutionGraph, r: &Relations) -> Option<Axiom> {
        self.semantics().violation_with(g, r)
    }

    /// The first violated axiom that is preserved by taking po ∪ rf-prefixes: for `c11`, all
    /// but the SC order (which the explorer checks on complete executions only); for the other
    /// models, every axiom.
    pub fn prefix_violation(self, g: &ExecutionGraph) -> Option<Axiom> {
        self.semantics().prefix_violation(g)
    }

    pub fn is_consistent(self, g: &ExecutionGraph) -> bool {
        self.violation(g).is_none()
    }
}

/// Returns the data races of a graph: pairs of accesses to the same location from different
/// threads, at least one a write and at least one non-atomic, unordered by hb.
pub fn races(g: &ExecutionGraph, r: &Relations) -> Vec<(usize, usize)> {
    let ev = &g.events;
    let mut out = Vec::new();
    for a in 0..g.len() {
        if !ev[a].is_access() || ev[a].thread == INIT_THREAD {
            continue;
        }
        for b in a + 1..g.len() {
            let (x, y) = (&ev[a], &ev[b]);
            if !y.is_access()
                || y.thread == INIT_THREAD
                || x.thread == y.thread
                || x.loc != y.loc
                || !(x.is_write() || y.is_write())
                || (x.order.is_atomic() && y.order.is_atomic())
            {
                continue;
            }
            if !r.hb.has(a, b) && !r.hb.has(b, a) {
                out.push((a, b));
            }
        }
    }
    out
}
