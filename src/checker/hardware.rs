//! Hardware memory models over the mapped program: x86-TSO (`tso`) and SPARC PSO (`pso`)
//! (docs/hardware-models.md, shared/docs/memory-models.md §3).
//!
//! A C11 program runs on a machine after a compiler has mapped every access and fence to the
//! machine's instructions. [`mapping`] is that compiler mapping, event by event; the axioms
//! ([`violation`]) consult only the mapped program:
//!
//! * **SC per location** (uniproc): `acyclic(po|loc ∪ rf ∪ mo ∪ fr)`;
//! * **atomicity** as in RC11 (`rmw ∩ fr ; mo = ∅`) and no thin air (`po ∪ rf` acyclic, which
//!   both machines guarantee anyway: they never reorder a read with a later write);
//! * the machine's **global order** `acyclic(ppo ∪ fence ∪ rfe ∪ mo ∪ fr)`, where `ppo` is the
//!   program order the machine preserves between accesses (x86-TSO: all but write → read; PSO:
//!   also not write → write to different locations), `fence` the order the mapped fences
//!   impose (`po ; [full] ∪ [full] ; po`, and for PSO's store barrier `[W] ; po ; [stbar] ∪
//!   [stbar] ; po ; [W]`), and `rfe` reads-from between different threads (a read may see its
//!   own thread's buffered write before the other threads do).
//!
//! These are the standard axiomatic x86-TSO of Owens, Sarkar and Sewell (TPHOLs 2009) in the
//! "herding cats" form of Alglave, Maranget and Tautschnig (TOPLAS 2014), and its PSO variant;
//! the seed paper on stateless model checking under TSO and PSO uses the operational (store
//! buffer) versions, which allow the same executions.
//!
//! Thread creation and join are full barriers (pthread_create / pthread_join synchronise on
//! every machine). Data races are a C-level notion: the hardware models report none (a plain
//! access is an ordinary machine load or store); check under `rc11` for races.

use super::graph::{EventKind, ExecutionGraph, INIT_THREAD};
use super::relation::Rel;
use crate::ir::MemOrder;

/// A machine fensyn can run the mapped program on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Machine {
    /// x86-TSO: per-thread FIFO store buffers.
    Tso,
    /// PSO (SPARC partial store order): a store buffer per thread and location.
    Pso,
    /// ARMv8 (AArch64), multicopy atomic: Pulte et al., POPL 2018 (see [`armv8_order`]).
    Armv8,
}

impl Machine {
    pub fn name(self) -> &'static str {
        match self {
            Machine::Tso => "x86-TSO",
            Machine::Pso => "PSO",
            Machine::Armv8 => "ARMv8",
        }
    }

    /// The instruction a C11 fence of order `o` compiles to on this machine (`None`: nothing).
    pub fn fence_instruction(self, o: MemOrder) -> Option<&'static str> {
        match (self, o) {
            (Machine::Tso, MemOrder::SeqCst) => Some("mfence"),
            (Machine::Tso, _) => None,
            (Machine::Pso, MemOrder::SeqCst) => Some("membar #StoreLoad|#StoreStore (full)"),
            (Machine::Pso, MemOrder::Release | MemOrder::AcqRel) => Some("stbar (store-store)"),
            (Machine::Pso, _) => None,
            (Machine::Armv8, MemOrder::Acquire) => Some("dmb ishld"),
            (Machine::Armv8, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst) => {
                Some("dmb ish")
            }
            (Machine::Armv8, _) => None,
        }
    }
}

/// What one event of the C11 program becomes on the machine: the barriers the compiler puts
/// around the instruction (a locked x86 instruction counts as a full barrier on both sides).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    /// A full barrier before the instruction: everything po-before is ordered before it.
    pub full_before: bool,
    /// A full barrier after it: it is ordered before everything po-after.
    pub full_after: bool,
    /// PSO: a store-store barrier before it (earlier stores are ordered before it).
    pub store_before: bool,
    /// PSO: a store-store barrier after it (it is ordered before later stores).
    pub store_after: bool,
}

const FULL: Mapped = Mapped {
    full_before: true,
    full_after: true,
    store_before: false,
    store_after: false,
};

/// The compiler mapping of event `e` of `g` (`in_rmw`: it is a part of a read-modify-write).
///
/// | C11                        | x86-TSO              | PSO                          |
/// |----------------------------|----------------------|------------------------------|
/// | load (any order)           | `mov`                | `ld`                         |
/// | store na / relaxed         | `mov`                | `st`                         |
/// | store release              | `mov`                | `stbar; st`                  |
/// | store seq_cst              | `mov; mfence`        | `stbar; st; membar`          |
/// | RMW / CAS (any order)      | `lock` instruction (full barrier) | `membar; atomic; membar` |
/// | fence acquire              | nothing              | nothing                      |
/// | fence release / acq_rel    | nothing              | `stbar`                      |
/// | fence seq_cst              | `mfence`             | `membar` (full)              |
/// | thread create / join       | full barrier         | full barrier                 |
pub fn mapping(machine: Machine, g: &ExecutionGraph, e: usize, in_rmw: bool) -> Mapped {
    let ev = &g.events[e];
    if ev.thread == INIT_THREAD {
        return Mapped::default();
    }
    if in_rmw {
        return FULL;
    }
    let o = ev.order;
    match (ev.kind, machine) {
        (EventKind::Spawn { .. } | EventKind::Join { .. }, _) => FULL,
        (EventKind::Fence, _) if o.is_sc() => FULL,
        (EventKind::Fence, Machine::Pso) if o.is_release() => Mapped {
            store_before: true,
            store_after: true,
            ..Mapped::default()
        },
        (EventKind::Write, Machine::Tso) if o.is_sc() => Mapped {
            full_after: true,
            ..Mapped::default()
        },
        (EventKind::Write, Machine::Pso) if o.is_release() => Mapped {
            store_before: true,
            full_after: o.is_sc(),
            ..Mapped::default()
        },
        _ => Mapped::default(),
    }
}

/// The reads-from relation of `g` (write → read).
pub(crate) fn rf_relation(g: &ExecutionGraph) -> Rel {
    let mut rf = Rel::new(g.len());
    for (r, w) in g.rf.iter().enumerate() {
        if let Some(w) = w {
            rf.add(*w, r);
        }
    }
    rf
}

/// The modification order of `g`, transitively closed (every earlier write → later write).
pub(crate) fn mo_relation(g: &ExecutionGraph) -> Rel {
    let mut mo = Rel::new(g.len());
    for ws in &g.mo {
        for i in 0..ws.len() {
            for j in i + 1..ws.len() {
                mo.add(ws[i], ws[j]);
            }
        }
    }
    mo
}

/// The closed program order of `g`: init before everything, per-thread order, spawn → child,
/// child → join.
pub(crate) fn program_order(g: &ExecutionGraph) -> Rel {
    let n = g.len();
    let ev = &g.events;
    let mut po = Rel::new(n);
    let firsts: Vec<usize> = (0..n).filter(|&e| ev[e].thread != INIT_THREAD).collect();
    for (e, event) in ev.iter().enumerate() {
        if event.thread == INIT_THREAD {
            for &f in &firsts {
                po.add(e, f);
            }
        }
    }
    for tr in &g.threads {
        for w in tr.events.windows(2) {
            po.add(w[0], w[1]);
        }
        if let (Some(sp), Some(&first)) = (tr.spawned_by, tr.events.first()) {
            po.add(sp, first);
        }
    }
    for (e, event) in ev.iter().enumerate() {
        if let EventKind::Join { child } = event.kind {
            if let Some(&last) = g.threads[child].events.last() {
                po.add(last, e);
            }
        }
    }
    po.plus()
}

/// The base relations a hardware model needs.
pub struct HwRelations {
    pub po: Rel,
    pub rf: Rel,
    pub mo: Rel,
    pub fr: Rel,
    pub rmw: Rel,
}

impl HwRelations {
    pub fn compute(g: &ExecutionGraph) -> HwRelations {
        let n = g.len();
        let po = program_order(g);
        let rf = rf_relation(g);
        let mo = mo_relation(g);
        let fr = rf.inverse().seq(&mo).filter(|a, b| a != b);
        let mut rmw = Rel::new(n);
        for &(r, w) in &g.rmw {
            rmw.add(r, w);
        }
        HwRelations {
            po,
            rf,
            mo,
            fr,
            rmw,
        }
    }
}

/// Which hardware axiom a graph violates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HwAxiom {
    NoThinAir,
    Atomicity,
    /// `po|loc ∪ rf ∪ mo ∪ fr` has a cycle.
    PerLocation,
    /// The machine's global order `ppo ∪ fence ∪ rfe ∪ mo ∪ fr` has a cycle.
    GlobalOrder,
}

/// SC per location: `po|loc ∪ rf ∪ mo ∪ fr`.
pub fn per_location(g: &ExecutionGraph, r: &HwRelations) -> Rel {
    let ev = &g.events;
    let same_loc = |a: usize, b: usize| {
        ev[a].is_access() && ev[b].is_access() && ev[a].loc.is_some() && ev[a].loc == ev[b].loc
    };
    r.po.filter(same_loc).union(&r.rf).union(&r.mo).union(&r.fr)
}

/// The machine's global order of `g` (not closed): `ppo ∪ fence ∪ rfe ∪ mo ∪ fr` for TSO and
/// PSO, ARMv8's `ob` for ARMv8.
pub fn global_order(machine: Machine, g: &ExecutionGraph, r: &HwRelations) -> Rel {
    if machine == Machine::Armv8 {
        return armv8_order(g, r);
    }
    let n = g.len();
    let ev = &g.events;
    let mut in_rmw = vec![false; n];
    for &(a, b) in &g.rmw {
        in_rmw[a] = true;
        in_rmw[b] = true;
    }
    let mapped: Vec<Mapped> = (0..n).map(|e| mapping(machine, g, e, in_rmw[e])).collect();
    let is_w = |e: usize| ev[e].is_write();
    let is_r = |e: usize| ev[e].is_read();
    let ppo = r.po.filter(|a, b| {
        if ev[a].thread == INIT_THREAD {
            return true;
        }
        if !ev[a].is_access() || !ev[b].is_access() {
            return false;
        }
        if is_w(a) && is_r(b) {
            return false;
        }
        !(machine == Machine::Pso && is_w(a) && is_w(b) && ev[a].loc != ev[b].loc)
    });
    let fence = r.po.filter(|a, b| {
        mapped[b].full_before
            || mapped[a].full_after
            || (mapped[b].store_before && is_w(a))
            || (mapped[a].store_after && is_w(b))
    });
    let rfe =
        r.rf.filter(|w, rd| ev[w].thread == INIT_THREAD || ev[w].thread != ev[rd].thread);
    ppo.union(&fence).union(&rfe).union(&r.mo).union(&r.fr)
}

/// The first hardware axiom `g` violates on `machine`, if any.
pub fn violation(machine: Machine, g: &ExecutionGraph) -> Option<HwAxiom> {
    let r = HwRelations::compute(g);
    if !r.po.union(&r.rf).is_acyclic() {
        return Some(HwAxiom::NoThinAir);
    }
    if !r.rmw.intersect(&r.fr.seq(&r.mo)).is_empty() {
        return Some(HwAxiom::Atomicity);
    }
    if !per_location(g, &r).is_acyclic() {
        return Some(HwAxiom::PerLocation);
    }
    if !global_order(machine, g, &r).is_acyclic() {
        return Some(HwAxiom::GlobalOrder);
    }
    None
}

/// Why `machine` cannot show `g`: a shortest cycle of the violated order (events of `g`), or
/// `None` when the machine can show it.
pub fn forbidding_cycle(machine: Machine, g: &ExecutionGraph) -> Option<Vec<usize>> {
    let r = HwRelations::compute(g);
    let cyc = |rel: &Rel| rel.find_cycle();
    if let Some(c) = cyc(&r.po.union(&r.rf)) {
        return Some(c);
    }
    if let Some(&(a, b)) = g.rmw.iter().find(|&&(a, b)| r.fr.seq(&r.mo).has(a, b)) {
        return Some(vec![a, b]);
    }
    cyc(&per_location(g, &r)).or_else(|| cyc(&global_order(machine, g, &r)))
}

/// ARMv8's ordered-before relation `ob` (not closed) over the mapped program, from the
/// multicopy-atomic axiomatic model of Pulte, Flur, Deacon, French, Sarkar and Sewell,
/// "Simplifying ARM concurrency: multicopy-atomic axiomatic and operational models for ARMv8"
/// (POPL 2018), Fig. 5 (`aarch64.cat`):
///
/// ```text
/// obs = rfe ∪ fre ∪ coe
/// dob = addr ∪ data ∪ ctrl;[W] ∪ (ctrl ∪ addr;po);[ISB];po;[R] ∪ addr;po;[W]
///       ∪ (ctrl ∪ data);coi ∪ (addr ∪ data);rfi
/// aob = rmw ∪ [range(rmw)];rfi;[A ∪ Q]
/// bob = po;[dmb.full];po ∪ [L];po;[A] ∪ [R];po;[dmb.ld];po ∪ [A ∪ Q];po
///       ∪ [W];po;[dmb.st];po;[W] ∪ po;[L] ∪ po;[L];coi
/// ob  = (obs ∪ dob ∪ aob ∪ bob)+        external: ob irreflexive
/// internal: acyclic(po-loc ∪ fr ∪ co ∪ rf)   atomic: rmw ∩ (fre ; coe) = ∅
/// ```
///
/// The mapping is the standard one (C11 → AArch64): loads `ldr`, acquire and seq_cst loads
/// `ldar` (A), stores `str`, release and seq_cst stores `stlr` (L), RMWs exclusive pairs
/// `ld(a)xr`/`st(l)xr` joined by `rmw` (A / L by their halves' orders; a failed CAS is its
/// load), acquire fences `dmb ishld` (dmb.ld), release, acq_rel and seq_cst fences `dmb ish`
/// (dmb.full); thread creation and join act as `dmb ish`. No mapping emits `ldapr` (Q),
/// `dmb ishst` or `isb`, so those terms are empty. `addr`, `data` and `ctrl` are the events'
/// dependencies (see `super::deps`). A fence event stands for the barrier: `a po F po b` is
/// the path `a → F → b`, which closes the same cycles.
pub fn armv8_order(g: &ExecutionGraph, r: &HwRelations) -> Rel {
    let n = g.len();
    let ev = &g.events;
    let mut addr = Rel::new(n);
    let mut data = Rel::new(n);
    let mut ctrl = Rel::new(n);
    for (e, event) in ev.iter().enumerate() {
        if let Some(d) = &event.deps {
            for &x in &d.addr {
                addr.add(x, e);
            }
            for &x in &d.data {
                data.add(x, e);
            }
            for &x in &d.ctrl {
                ctrl.add(x, e);
            }
        }
    }
    let mut range_rmw = vec![false; n];
    for &(_, w) in &g.rmw {
        range_rmw[w] = true;
    }
    let init = |e: usize| ev[e].thread == INIT_THREAD;
    let ext = |a: usize, b: usize| init(a) || init(b) || ev[a].thread != ev[b].thread;
    let is_w = |e: usize| ev[e].is_write();
    let is_r = |e: usize| ev[e].is_read();
    let is_a = |e: usize| !init(e) && is_r(e) && ev[e].order.is_acquire();
    let is_l = |e: usize| !init(e) && is_w(e) && ev[e].order.is_release();
    let dmb_full = |e: usize| {
        !init(e)
            && match ev[e].kind {
                EventKind::Fence => ev[e].order.is_release(),
                EventKind::Spawn { .. } | EventKind::Join { .. } => true,
                _ => false,
            }
    };
    let dmb_ld = |e: usize| ev[e].is_fence() && ev[e].order == MemOrder::Acquire;
    let rfe = r.rf.filter(ext);
    let rfi = r.rf.filter(|a, b| !ext(a, b));
    let coe = r.mo.filter(ext);
    let coi = r.mo.filter(|a, b| !ext(a, b));
    let fre = r.fr.filter(ext);
    let obs = rfe.union(&fre).union(&coe);
    let addr_data = addr.union(&data);
    let dob = addr_data
        .union(&ctrl.restrict(|_| true, is_w))
        .union(&addr.seq(&r.po).restrict(|_| true, is_w))
        .union(&ctrl.union(&data).seq(&coi))
        .union(&addr_data.seq(&rfi));
    let aob = r.rmw.union(&rfi.restrict(|w| range_rmw[w], is_a));
    let po_l = r.po.restrict(|_| true, is_l);
    let bob =
        r.po.restrict(|_| true, dmb_full)
            .union(&r.po.restrict(dmb_full, |_| true))
            .union(&r.po.restrict(is_l, is_a))
            .union(&r.po.restrict(is_r, dmb_ld))
            .union(&r.po.restrict(dmb_ld, |_| true))
            .union(&r.po.restrict(is_a, |_| true))
            .union(&po_l)
            .union(&po_l.seq(&coi));
    obs.union(&dob).union(&aob).union(&bob)
}
