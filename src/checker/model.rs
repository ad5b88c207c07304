//! Memory models: derived relations and per-model consistency (shared/docs/memory-models.md §1–3).
//!
//! [`Relations::compute`] derives po, rf, mo, rmw, fr, eco, rs, sw and hb of a graph exactly as
//! §1 defines them; [`Model::violation`] checks a model's axioms on them:
//!
//! * `rc11` (RC11, Lahav et al. PLDI 2017; §2): coherence `irreflexive(hb ; eco?)`, atomicity
//!   `rmw ∩ (fr ; mo) = ∅`, SC `acyclic(psc_base ∪ psc_F)`, no thin air `acyclic(po ∪ rf)`.
//! * `sc` (§3): `acyclic(po ∪ rf ∪ mo ∪ fr)` and atomicity; memory orders are ignored.
//!
//! Coherence failures are the thesis's "weak" violations (its six co-* constraints), psc cycles
//! its "strong" ones (the (tosc)/(tofen) total order).

use super::graph::{EventKind, ExecutionGraph, INIT_THREAD};
use super::relation::Rel;
use std::fmt;

/// A memory model fensyn can check against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// RC11 (repaired C11), the default, as in GenMC.
    Rc11,
    /// Sequential consistency: interleavings only.
    Sc,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Rc11 => "rc11",
            Model::Sc => "sc",
        }
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
}

impl Axiom {
    pub fn describe(self) -> &'static str {
        match self {
            Axiom::Coherence => "coherence (hb ; eco? irreflexive)",
            Axiom::Atomicity => "atomicity (rmw ∩ fr ; mo = ∅)",
            Axiom::Psc => "SC order (psc acyclic)",
            Axiom::NoThinAir => "no thin air (po ∪ rf acyclic)",
            Axiom::SeqCst => "sequential consistency (po ∪ rf ∪ mo ∪ fr acyclic)",
        }
    }
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
    /// Derives every relation of shared/docs/memory-models.md §1 for `g`.
    pub fn compute(g: &ExecutionGraph) -> Relations {
        let n = g.len();
        let ev = &g.events;
        // po: init before everything, program order within threads, spawn/join edges.
        let mut po_base = Rel::new(n);
        for (e, event) in ev.iter().enumerate() {
            if event.thread == INIT_THREAD {
                for (f, other) in ev.iter().enumerate() {
                    if other.thread != INIT_THREAD {
                        po_base.add(e, f);
                    }
                }
            }
        }
        for tr in &g.threads {
            for w in tr.events.windows(2) {
                po_base.add(w[0], w[1]);
            }
            if let (Some(sp), Some(&first)) = (tr.spawned_by, tr.events.first()) {
                po_base.add(sp, first);
            }
        }
        for (e, event) in ev.iter().enumerate() {
            if let EventKind::Join { child } = event.kind {
                if let Some(&last) = g.threads[child].events.last() {
                    po_base.add(last, e);
                }
            }
        }
        let po = po_base.plus();

        let mut rf = Rel::new(n);
        for (r, w) in g.rf.iter().enumerate() {
            if let Some(w) = w {
                rf.add(*w, r);
            }
        }
        let mut mo = Rel::new(n);
        for ws in &g.mo {
            for i in 0..ws.len() {
                for j in i + 1..ws.len() {
                    mo.add(ws[i], ws[j]);
                }
            }
        }
        let mut rmw = Rel::new(n);
        for &(r, w) in &g.rmw {
            rmw.add(r, w);
        }
        let fr = rf.inverse().seq(&mo).filter(|a, b| a != b);
        let eco = rf.union(&mo).union(&fr).plus();

        // rs = [W] ; po|loc? ; [W ⊒ rlx] ; (rf ; rmw)*
        let is_w = |e: usize| ev[e].is_write();
        let same_loc = |a: usize, b: usize| ev[a].loc.is_some() && ev[a].loc == ev[b].loc;
        let po_loc = po.filter(same_loc);
        let rs0 = po_loc
            .opt()
            .restrict(is_w, |e| is_w(e) && ev[e].order.is_atomic());
        let rf_rmw = rf.seq(&rmw);
        let rs = rs0.union(&rs0.seq(&rf_rmw.plus()));
        // sw = [E ⊒ rel] ; ([F] ; po)? ; rs ; rf ; [R ⊒ rlx] ; (po ; [F])? ; [E ⊒ acq]
        let rel_side = Rel::identity_on(n, |e| ev[e].order.is_release())
            .union(&po.restrict(|a| ev[a].is_fence() && ev[a].order.is_release(), |_| true));
        let acq_side = Rel::identity_on(n, |e| ev[e].order.is_acquire())
            .union(&po.restrict(|_| true, |b| ev[b].is_fence() && ev[b].order.is_acquire()));
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
    /// The first axiom of the model that `g` violates, or `None` if `g` is consistent.
    pub fn violation(self, g: &ExecutionGraph) -> Option<Axiom> {
        let r = Relations::compute(g);
        self.violation_with(g, &r)
    }

    /// As [`Model::violation`], reusing already computed relations.
    pub fn violation_with(self, g: &ExecutionGraph, r: &Relations) -> Option<Axiom> {
        if !r.po.union(&r.rf).is_acyclic() {
            return Some(Axiom::NoThinAir);
        }
        if !r.rmw.intersect(&r.fr.seq(&r.mo)).is_empty() {
            return Some(Axiom::Atomicity);
        }
        match self {
            Model::Rc11 => {
                if !r.hb.is_irreflexive() || !r.hb.seq(&r.eco).is_irreflexive() {
                    return Some(Axiom::Coherence);
                }
                if !r.psc(g).is_acyclic() {
                    return Some(Axiom::Psc);
                }
                None
            }
            Model::Sc => {
                let all = r.po.union(&r.rf).union(&r.mo).union(&r.fr);
                (!all.is_acyclic()).then_some(Axiom::SeqCst)
            }
        }
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
