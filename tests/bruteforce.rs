//! An independent brute-force oracle for the model checker (`fensyn::checker::explore`).
//!
//! The oracle shares nothing with `src/checker` except the data types used to print a graph
//! (`ExecutionGraph::canonical_key`), and `Expr::eval` of the IR for thread-local arithmetic.
//! It works in three steps, straight from shared/docs/memory-models.md §1–2:
//!
//! 1. **Values.** For every location a finite set of values that a read of it can return: start
//!    with the initial value; run every thread function with its reads returning every value of
//!    the current sets; add every value written; repeat until nothing new appears or, for a
//!    loop-free program, for as many rounds as an execution can have writes. (Sound: a
//!    consistent graph has an acyclic po ∪ rf, so a write's value depends on a chain of distinct
//!    earlier writes, and round k covers every write whose chain has length ≤ k.)
//! 2. **Thread runs.** Every thread's complete local runs: its event sequence with values (reads
//!    take every value of the set; an RMW or successful CAS is a read and a write joined by
//!    `rmw`, a failed CAS only a read), ending by finishing, failing (assertion or division by
//!    zero), blocking (false `assume`), being cut at the loop bound (a `LoopIter` reached more
//!    than `unroll` times since the last `LoopEnter` of its loop), or getting stuck at a `Join`
//!    of a thread that did not finish (each `Join` branches on "child finished" and "child did
//!    not finish"; the combination step keeps only runs that agree).
//! 3. **Graphs.** Every combination of runs, every rf choice (read → same-location write with the
//!    same value, init included) and every mo permutation per location (init first) is built and
//!    kept if the oracle's own axioms of the model accept it (atomicity included; release
//!    sequences run through `rf ; rmw` chains only — C++20's rule — except under `c11`, where
//!    a later store of the head's thread to its location continues them too). Its key is
//!    `sym_key` (`ExecutionGraph::canonical_key` with allocated locations named by thread,
//!    allocation and offset, and without values) and it is buggy if a thread failed, it has a
//!    data race, a deadlock or a memory error. Blocked and bounded graphs are compared too,
//!    and the explorer's `Stats` against the oracle's classification of them; for a graph
//!    both have, how its threads ended, its values (pointers across the two numberings) and
//!    its memory errors (detail and message).
//!
//! **Allocation** (issue 20) is modelled on its own too: an `Alloc` gives the thread's k-th
//! object the locations `dyn_loc(thread, k, ·)` (fresh, each first written by the allocating
//! thread, mo-first; every object's red zone just past it never allocated), so a thread's runs
//! know their own addresses; an access to (or free of) another thread's object branches on what
//! that thread allocated, checked when runs are combined. `memory_bugs` applies the issue's
//! rules (use after free / return, racing with the end, double free, uninitialised read);
//! out-of-bounds and invalid frees stop the thread, as null dereferences do.
//!
//! The relations are bit matrices with a hand-written transitive closure; the axioms are written
//! from the doc, not from `src/checker/model.rs`. The explorer's own axioms are only ever called
//! to explain a disagreement in a failure message.

// Relations are indexed by event id throughout.
#![allow(clippy::needless_range_loop)]

use fensyn::checker::graph::ThreadTrace;
use fensyn::checker::{
    explore, Bug, BugKind, Control, DynLoc, Equiv, Event, EventKind, ExecutionGraph, Limits,
    MemoryError, Model, Stats, ThreadEnd, DEFAULT_UNROLL, INIT_THREAD,
};
use fensyn::ir::spin::SpinInfo;
use fensyn::ir::{
    Addr, BinOp, Dealloc, Expr, FuncId, Function, Global, Instr, Layout, MemOrder, ObjectKind,
    Program, RmwOp, Slot, SlotPlace, Span, Stmt, StmtKind, SyncRole, Width, MAX_OBJECT_CELLS,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::time::Instant;

// ---------------------------------------------------------------------------------------------
// Relations: rows of bits, at most 128 events.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, PartialEq, Eq)]
struct Rel {
    rows: Vec<u128>,
}

impl Rel {
    fn empty(n: usize) -> Rel {
        assert!(n <= 128, "the oracle handles at most 128 events (got {n})");
        Rel { rows: vec![0; n] }
    }
    fn n(&self) -> usize {
        self.rows.len()
    }
    fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= 1u128 << b;
    }
    fn has(&self, a: usize, b: usize) -> bool {
        (self.rows[a] >> b) & 1 == 1
    }
    fn union(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a | b).collect(),
        }
    }
    /// Relational composition `self ; o`.
    fn seq(&self, o: &Rel) -> Rel {
        let mut out = Rel::empty(self.n());
        for a in 0..self.n() {
            let mut bits = self.rows[a];
            let mut acc = 0u128;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                acc |= o.rows[b];
            }
            out.rows[a] = acc;
        }
        out
    }
    /// Transitive closure (Warshall).
    fn plus(&self) -> Rel {
        let mut r = self.clone();
        let n = r.n();
        for k in 0..n {
            let rk = r.rows[k];
            for i in 0..n {
                if r.has(i, k) {
                    r.rows[i] |= rk;
                }
            }
        }
        r
    }
    fn acyclic(&self) -> bool {
        let c = self.plus();
        (0..c.n()).all(|i| !c.has(i, i))
    }
    fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for a in 0..self.n() {
            for b in 0..self.n() {
                if self.has(a, b) {
                    v.push((a, b));
                }
            }
        }
        v
    }
}

// ---------------------------------------------------------------------------------------------
// Event classification (own definitions of the order lattice, §1).
// ---------------------------------------------------------------------------------------------

fn is_read(e: &Event) -> bool {
    e.kind == EventKind::Read
}
fn is_write(e: &Event) -> bool {
    matches!(e.kind, EventKind::Write | EventKind::Init)
}
fn is_fence(e: &Event) -> bool {
    e.kind == EventKind::Fence
}
fn is_access(e: &Event) -> bool {
    is_read(e) || is_write(e)
}
/// The location of a memory access (fences, spawns and joins have none).
fn access_loc(e: &Event) -> Option<usize> {
    if is_access(e) {
        e.loc
    } else {
        None
    }
}
fn same_loc(a: &Event, b: &Event) -> bool {
    access_loc(a).is_some() && access_loc(a) == access_loc(b)
}
fn ord_rel(o: MemOrder) -> bool {
    matches!(o, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
}
fn ord_acq(o: MemOrder) -> bool {
    matches!(o, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst)
}
fn ord_atomic(o: MemOrder) -> bool {
    o != MemOrder::NonAtomic
}
/// `E^sc`: seq_cst accesses and fences.
fn is_sc(e: &Event) -> bool {
    e.order == MemOrder::SeqCst && (is_access(e) || is_fence(e))
}
fn is_sc_fence(e: &Event) -> bool {
    is_fence(e) && e.order == MemOrder::SeqCst
}

// ---------------------------------------------------------------------------------------------
// Derived relations and the axioms.
// ---------------------------------------------------------------------------------------------

/// po: init before everything, per-thread order, spawn → child, child → join; closed.
fn program_order(g: &ExecutionGraph) -> Rel {
    let n = g.events.len();
    let mut po = Rel::empty(n);
    for i in 0..n {
        if g.events[i].thread == INIT_THREAD {
            for j in 0..n {
                if g.events[j].thread != INIT_THREAD {
                    po.add(i, j);
                }
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
    for j in 0..n {
        if let EventKind::Join { child } = g.events[j].kind {
            if let Some(&last) = g.threads[child].events.last() {
                po.add(last, j);
            }
        }
    }
    po.plus()
}

/// `rs(h, w)`: `w` is in the release sequence headed by the write `h` (§1). Under C++20's
/// rule (P0982R1; every model but `c11`) the sequence of an atomic write is itself and, from
/// each write in it, the write part of an RMW reading that write: `[W ⊒ rlx] ; (rf ; rmw)*`.
/// `c11` keeps the RC11 paper's `[W] ; po|loc? ; [W ⊒ rlx] ; (rf ; rmw)*`: an atomic write
/// of the head's thread to its location after it also continues it. Computed as a fixed
/// point of "an RMW reading a member adds its write", not by relational closure.
fn release_sequences(
    g: &ExecutionGraph,
    same_thread_po: &dyn Fn(usize, usize) -> bool,
    rf: &Rel,
    rmw: &Rel,
    model: Model,
) -> Rel {
    let ev = &g.events;
    let n = ev.len();
    let mut rs = Rel::empty(n);
    for h in (0..n).filter(|&h| is_write(&ev[h])) {
        // Members not reached through an RMW.
        for w in (0..n).filter(|&w| is_write(&ev[w]) && ord_atomic(ev[w].order)) {
            let same_thread_later =
                model == Model::C11 && same_thread_po(h, w) && same_loc(&ev[h], &ev[w]);
            if w == h || same_thread_later {
                rs.add(h, w);
            }
        }
        loop {
            let mut grew = false;
            for (src, r) in rf.pairs() {
                if !rs.has(h, src) {
                    continue;
                }
                for w in 0..n {
                    if rmw.has(r, w) && !rs.has(h, w) {
                        rs.add(h, w);
                        grew = true;
                    }
                }
            }
            if !grew {
                break;
            }
        }
    }
    rs
}

struct Derived {
    po: Rel,
    rf: Rel,
    mo: Rel,
    rmw: Rel,
    fr: Rel,
    eco: Rel,
    hb: Rel,
}

fn derive(g: &ExecutionGraph, po: &Rel, model: Model) -> Derived {
    let n = g.events.len();
    let ev = &g.events;
    let mut rf = Rel::empty(n);
    for (r, w) in g.rf.iter().enumerate() {
        if let Some(w) = *w {
            rf.add(w, r);
        }
    }
    let mut mo = Rel::empty(n);
    for ws in &g.mo {
        for i in 0..ws.len() {
            for j in i + 1..ws.len() {
                mo.add(ws[i], ws[j]);
            }
        }
    }
    // fr = rf⁻¹ ; mo \ id
    let mut fr = Rel::empty(n);
    for (w, r) in rf.pairs() {
        for w2 in 0..n {
            if mo.has(w, w2) && r != w2 {
                fr.add(r, w2);
            }
        }
    }
    let eco = rf.union(&mo).union(&fr).plus();
    let mut rmw = Rel::empty(n);
    for &(r, w) in &g.rmw {
        rmw.add(r, w);
    }
    // Here and in sw's fence parts, po is a thread's own program order: thread creation
    // orders the parent before the child (it is part of hb), but a parent's write or fence
    // does not head a release sequence or a fence synchronisation through its children's
    // events.
    let same = |a: usize, b: usize| po.has(a, b) && ev[a].thread == ev[b].thread;
    let rs = release_sequences(g, &same, &rf, &rmw, model);
    // sw = [E ⊒ rel] ; ([F] ; po)? ; rs ; rf ; [R ⊒ rlx] ; (po ; [F])? ; [E ⊒ acq]
    let mut sw = Rel::empty(n);
    for r in 0..n {
        if !is_read(&ev[r]) || !ord_atomic(ev[r].order) {
            continue;
        }
        let Some(w) = g.rf[r] else { continue };
        // Heads of release sequences ending in w.
        let heads: Vec<usize> = (0..n).filter(|&h| rs.has(h, w)).collect();
        let mut sources = BTreeSet::new();
        for &h in &heads {
            if ord_rel(ev[h].order) {
                sources.insert(h);
            }
            for f in 0..n {
                if is_fence(&ev[f]) && ord_rel(ev[f].order) && same(f, h) {
                    sources.insert(f);
                }
            }
        }
        let mut targets = BTreeSet::new();
        if ord_acq(ev[r].order) {
            targets.insert(r);
        }
        for f in 0..n {
            if is_fence(&ev[f]) && ord_acq(ev[f].order) && same(r, f) {
                targets.insert(f);
            }
        }
        for &a in &sources {
            for &b in &targets {
                sw.add(a, b);
            }
        }
    }
    let hb = po.union(&sw).plus();
    Derived {
        po: po.clone(),
        rf,
        mo,
        rmw,
        fr,
        eco,
        hb,
    }
}

/// Atomicity (§2, axiom 2; also required by `sc`): `rmw ∩ (fr ; mo) = ∅`.
fn atomicity_holds(d: &Derived) -> bool {
    let fr_mo = d.fr.seq(&d.mo);
    d.rmw.pairs().into_iter().all(|(r, w)| !fr_mo.has(r, w))
}

/// The axioms RC11 and C11 share: no thin air (§2, 4), coherence (1) and atomicity (2).
fn base_violation(g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    // 4. No thin air.
    if !d.po.union(&d.rf).acyclic() {
        return Some("no-thin-air");
    }
    // 1. Coherence: hb ; eco? irreflexive.
    for a in 0..n {
        for b in 0..n {
            if d.hb.has(a, b) && (a == b || d.eco.has(b, a)) {
                return Some("coherence");
            }
        }
    }
    // 2. Atomicity.
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    None
}

/// The first RC11 axiom (§2) that fails, if any.
fn rc11_violation(g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    let ev = &g.events;
    if let Some(v) = base_violation(g, d) {
        return Some(v);
    }
    // 3. psc acyclic.
    let mut po_nloc = Rel::empty(n);
    let mut hb_loc = Rel::empty(n);
    for a in 0..n {
        for b in 0..n {
            if d.po.has(a, b) && !same_loc(&ev[a], &ev[b]) {
                po_nloc.add(a, b);
            }
            if d.hb.has(a, b) && same_loc(&ev[a], &ev[b]) {
                hb_loc.add(a, b);
            }
        }
    }
    let scb =
        d.po.union(&po_nloc.seq(&d.hb).seq(&po_nloc))
            .union(&hb_loc)
            .union(&d.mo)
            .union(&d.fr);
    // ([E^sc] ∪ [F^sc] ; hb?)  and  ([E^sc] ∪ hb? ; [F^sc])
    let mut left = Rel::empty(n);
    let mut right = Rel::empty(n);
    for a in 0..n {
        if is_sc(&ev[a]) {
            left.add(a, a);
            right.add(a, a);
        }
        if is_sc_fence(&ev[a]) {
            for b in 0..n {
                if d.hb.has(a, b) {
                    left.add(a, b);
                }
                if d.hb.has(b, a) {
                    right.add(b, a);
                }
            }
        }
    }
    let psc_base = left.seq(&scb).seq(&right);
    let hb_eco_hb = d.hb.seq(&d.eco).seq(&d.hb);
    let mut psc = psc_base;
    for a in 0..n {
        for b in 0..n {
            if is_sc_fence(&ev[a]) && is_sc_fence(&ev[b]) && (d.hb.has(a, b) || hb_eco_hb.has(a, b))
            {
                psc.add(a, b);
            }
        }
    }
    if !psc.acyclic() {
        return Some("psc");
    }
    None
}

/// SC (§3): acyclic(po ∪ rf ∪ mo ∪ fr), and atomicity.
fn sc_violation(_g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    if !d.po.union(&d.rf).union(&d.mo).union(&d.fr).acyclic() {
        return Some("sc");
    }
    None
}

/// C++11 §29.3p7 on a candidate order `to` of the seq_cst events: for seq_cst fences `X`
/// before `Y` in `to`, an atomic write `A` sequenced before `X` and an atomic write `B` to the
/// same location sequenced after `Y`, `B` comes after `A` in the modification order.
fn fence_fence_mo_holds(g: &ExecutionGraph, d: &Derived, to: &[usize]) -> bool {
    let ev = &g.events;
    let n = ev.len();
    let sb = |a: usize, b: usize| ev[a].thread == ev[b].thread && d.po.has(a, b);
    let atomic_write =
        |e: usize| is_write(&ev[e]) && ev[e].thread != INIT_THREAD && ord_atomic(ev[e].order);
    for (i, &x) in to.iter().enumerate() {
        for &y in to[i + 1..].iter() {
            if !(is_sc_fence(&ev[x]) && is_sc_fence(&ev[y])) {
                continue;
            }
            for a in (0..n).filter(|&a| atomic_write(a) && sb(a, x)) {
                for b in (0..n).filter(|&b| atomic_write(b) && sb(y, b)) {
                    if ev[a].loc == ev[b].loc && !d.mo.has(a, b) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// The thesis's C11 (§3, its Figure 3.6), checked naively: RC11's no-thin-air, coherence and
/// atomicity, and some permutation of the seq_cst events (an RMW's two parts adjacent) that
/// satisfies (coto), (rfto1), (rfto2), (tofen) and C++11's fence rules §29.3p4–p7 literally.
fn c11_violation(g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    let ev = &g.events;
    if let Some(v) = base_violation(g, d) {
        return Some(v);
    }
    let sc: Vec<usize> = (0..n)
        .filter(|&e| ev[e].thread != INIT_THREAD && is_sc(&ev[e]))
        .collect();
    assert!(
        sc.len() <= 8,
        "oracle: too many seq_cst events for the c11 permutation check"
    );
    let rmw: Vec<(usize, usize)> = d.rmw.pairs();
    let ok = |to: &[usize]| -> bool {
        let pos = |e: usize| to.iter().position(|&x| x == e);
        for &a in to {
            for &b in to {
                if (d.hb.has(a, b) || d.mo.has(a, b)) && pos(a) > pos(b) {
                    return false;
                }
            }
        }
        for &(r, w) in &rmw {
            if let (Some(i), Some(j)) = (pos(r), pos(w)) {
                if j != i + 1 {
                    return false;
                }
            }
        }
        // The last seq_cst write to `x` strictly before position `i`.
        let last_before = |i: usize, x: Option<usize>| {
            to[..i]
                .iter()
                .rev()
                .copied()
                .find(|&c| ev[c].is_write() && ev[c].loc == x)
        };
        for (i, &r) in to.iter().enumerate() {
            if !ev[r].is_read() {
                continue;
            }
            let w = (0..n).find(|&w| d.rf.has(w, r)).unwrap();
            let c = last_before(i, ev[r].loc);
            if is_sc(&ev[w]) && ev[w].thread != INIT_THREAD {
                if c != Some(w) {
                    return false;
                }
            } else if let Some(c) = c {
                if d.hb.has(w, c) {
                    return false;
                }
            }
        }
        let rf_of = |r: usize| (0..n).find(|&w| d.rf.has(w, r)).unwrap();
        let sees = |w: usize, v: usize| w == v || d.mo.has(v, w);
        let same_thread_po = |a: usize, b: usize| ev[a].thread == ev[b].thread && d.po.has(a, b);
        for (i, &x) in to.iter().enumerate() {
            if !is_sc_fence(&ev[x]) {
                continue;
            }
            for b in 0..n {
                if !(ev[b].is_read() && same_thread_po(x, b)) {
                    continue;
                }
                // C++11 §29.3p4.
                if let Some(wl) = last_before(i, ev[b].loc) {
                    if !sees(rf_of(b), wl) {
                        return false;
                    }
                }
            }
            for a in 0..n {
                if !(ev[a].is_write() && ev[a].thread != INIT_THREAD && same_thread_po(a, x)) {
                    continue;
                }
                // §29.3p5: seq_cst reads after x in `to`.
                for &b in &to[i + 1..] {
                    if ev[b].is_read() && ev[b].loc == ev[a].loc && !sees(rf_of(b), a) {
                        return false;
                    }
                }
                // §29.3p6: reads sequenced after a fence y after x in `to`.
                for &y in &to[i + 1..] {
                    if !is_sc_fence(&ev[y]) {
                        continue;
                    }
                    for b in 0..n {
                        if ev[b].is_read()
                            && ev[b].loc == ev[a].loc
                            && same_thread_po(y, b)
                            && !sees(rf_of(b), a)
                        {
                            return false;
                        }
                    }
                }
            }
        }
        if !fence_fence_mo_holds(g, d, to) {
            return false;
        }
        // (tofen)
        for r in 0..n {
            if !ev[r].is_read() {
                continue;
            }
            let w = (0..n).find(|&w| d.rf.has(w, r)).unwrap();
            if !(is_sc(&ev[w]) && ev[w].thread != INIT_THREAD) {
                continue;
            }
            for (i, &f) in to.iter().enumerate() {
                if is_sc_fence(&ev[f])
                    && ev[f].thread == ev[r].thread
                    && d.po.has(f, r)
                    && last_before(i, ev[r].loc) != Some(w)
                {
                    return false;
                }
            }
        }
        true
    };
    // Every permutation (Heap's algorithm).
    let mut perm = sc.clone();
    let k = perm.len();
    let mut c = vec![0usize; k];
    if ok(&perm) {
        return None;
    }
    let mut i = 0;
    while i < k {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            if ok(&perm) {
                return None;
            }
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    Some("c11-sc-order")
}

/// The barriers the compiler puts around an event on a machine (docs/hardware-models.md, the
/// mapping table), as `(orders everything before it, orders it before everything after,
/// orders earlier stores before it, orders it before later stores)`.
fn machine_barriers(pso: bool, g: &ExecutionGraph, e: usize) -> (bool, bool, bool, bool) {
    let ev = &g.events[e];
    if ev.thread == INIT_THREAD {
        return (false, false, false, false);
    }
    let locked = g.rmw.iter().any(|&(r, w)| r == e || w == e);
    let o = ev.order;
    match ev.kind {
        // Thread creation and join, locked RMWs and seq_cst fences: full barriers.
        EventKind::Spawn { .. } | EventKind::Join { .. } => (true, true, false, false),
        _ if locked => (true, true, false, false),
        EventKind::Fence if o == MemOrder::SeqCst => (true, true, false, false),
        // PSO: a release or acq_rel fence is `stbar`; x86: nothing.
        EventKind::Fence if pso && ord_rel(o) => (false, false, true, true),
        // x86: seq_cst store = mov; mfence. PSO: release = stbar; st, seq_cst = stbar; st; membar.
        EventKind::Write if o == MemOrder::SeqCst => (false, true, pso, false),
        EventKind::Write if pso && ord_rel(o) => (false, false, true, false),
        _ => (false, false, false, false),
    }
}

/// x86-TSO (`pso` false) or PSO over the mapped program: atomicity, no thin air, SC per
/// location `acyclic(po|loc ∪ rf ∪ mo ∪ fr)` and `acyclic(ppo ∪ barriers ∪ rfe ∪ mo ∪ fr)`,
/// where ppo drops write→read pairs (and for PSO write→write pairs to different locations).
fn machine_violation(pso: bool, g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    let ev = &g.events;
    if !d.po.union(&d.rf).acyclic() {
        return Some("no-thin-air");
    }
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    let mut uniproc = d.rf.union(&d.mo).union(&d.fr);
    for a in 0..n {
        for b in 0..n {
            if d.po.has(a, b) && same_loc(&ev[a], &ev[b]) {
                uniproc.add(a, b);
            }
        }
    }
    if !uniproc.acyclic() {
        return Some("sc-per-location");
    }
    let bars: Vec<(bool, bool, bool, bool)> = (0..n).map(|e| machine_barriers(pso, g, e)).collect();
    let mut ghb = d.mo.union(&d.fr);
    for (w, r) in d.rf.pairs() {
        if ev[w].thread != ev[r].thread {
            ghb.add(w, r);
        }
    }
    for a in 0..n {
        for b in 0..n {
            if !d.po.has(a, b) {
                continue;
            }
            // Preserved program order between accesses: not W → R; on PSO not W → W to
            // different locations either. Init writes precede everything.
            let both_accesses = is_access(&ev[a]) && is_access(&ev[b]);
            let w_r = is_write(&ev[a]) && is_read(&ev[b]);
            let w_w_other = pso && is_write(&ev[a]) && is_write(&ev[b]) && ev[a].loc != ev[b].loc;
            let kept = ev[a].thread == INIT_THREAD || (both_accesses && !w_r && !w_w_other);
            let fenced = bars[a].1
                || bars[b].0
                || (bars[b].2 && is_write(&ev[a]))
                || (bars[a].3 && is_write(&ev[b]));
            if kept || fenced {
                ghb.add(a, b);
            }
        }
    }
    if !ghb.acyclic() {
        return Some("machine-order");
    }
    None
}

/// ARMv8 (Pulte et al., POPL 2018, its `aarch64.cat`) over the program mapped to AArch64:
/// acquire / seq_cst loads are `ldar` (A), release / seq_cst stores `stlr` (L), acquire fences
/// `dmb ishld`, other fences (and thread create / join) `dmb ish`. Internal: acyclic(po-loc ∪
/// rf ∪ co ∪ fr); atomicity; external: `ob = (obs ∪ dob ∪ aob ∪ bob)+` irreflexive. The
/// explorer never builds a po ∪ rf cycle, so that is required here too.
fn armv8_violation(g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    let ev = &g.events;
    if !d.po.union(&d.rf).acyclic() {
        return Some("no-thin-air");
    }
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    let mut internal = d.rf.union(&d.mo).union(&d.fr);
    for a in 0..n {
        for b in 0..n {
            if d.po.has(a, b) && same_loc(&ev[a], &ev[b]) {
                internal.add(a, b);
            }
        }
    }
    if !internal.acyclic() {
        return Some("internal");
    }
    let init = |e: usize| ev[e].thread == INIT_THREAD;
    let same_thread = |a: usize, b: usize| !init(a) && !init(b) && ev[a].thread == ev[b].thread;
    let acq = |e: usize| !init(e) && is_read(&ev[e]) && ord_acq(ev[e].order);
    let rel = |e: usize| !init(e) && is_write(&ev[e]) && ord_rel(ev[e].order);
    let full = |e: usize| match ev[e].kind {
        EventKind::Fence => ord_rel(ev[e].order),
        EventKind::Spawn { .. } | EventKind::Join { .. } => true,
        _ => false,
    };
    let ld_fence = |e: usize| is_fence(&ev[e]) && ev[e].order == MemOrder::Acquire;
    let dep = |e: usize, which: usize| -> Vec<usize> {
        ev[e]
            .deps
            .as_ref()
            .map(|x| match which {
                0 => x.addr.clone(),
                1 => x.data.clone(),
                _ => x.ctrl.clone(),
            })
            .unwrap_or_default()
    };
    let rmw_write = |e: usize| g.rmw.iter().any(|&(_, w)| w == e);
    let mut ob = Rel::empty(n);
    for a in 0..n {
        for b in 0..n {
            // obs: external rf, fr and co.
            if !same_thread(a, b) && (d.rf.has(a, b) || d.fr.has(a, b) || d.mo.has(a, b)) {
                ob.add(a, b);
            }
            // bob.
            if d.po.has(a, b)
                && (full(a)
                    || full(b)
                    || (rel(a) && acq(b))
                    || (is_read(&ev[a]) && ld_fence(b))
                    || ld_fence(a)
                    || acq(a)
                    || rel(b))
            {
                ob.add(a, b);
            }
        }
    }
    for e in 0..n {
        let (addr, data, ctrl) = (dep(e, 0), dep(e, 1), dep(e, 2));
        for &r in addr.iter().chain(&data) {
            ob.add(r, e); // addr ∪ data
        }
        if is_write(&ev[e]) {
            for &r in &ctrl {
                ob.add(r, e); // ctrl ; [W]
            }
        }
        for w in 0..n {
            // addr ; po ; [W]
            if d.po.has(e, w) && is_write(&ev[w]) {
                for &r in &addr {
                    ob.add(r, w);
                }
            }
            // (ctrl ∪ data) ; coi  and  (addr ∪ data) ; rfi
            if same_thread(e, w) && d.mo.has(e, w) {
                for &r in ctrl.iter().chain(&data) {
                    ob.add(r, w);
                }
            }
            if same_thread(e, w) && d.rf.has(e, w) {
                for &r in addr.iter().chain(&data) {
                    ob.add(r, w);
                }
            }
        }
    }
    for (r, w) in d.rmw.pairs() {
        ob.add(r, w); // aob: rmw
    }
    for (w, r) in d.rf.pairs() {
        if rmw_write(w) && same_thread(w, r) && acq(r) {
            ob.add(w, r); // aob: [range(rmw)] ; rfi ; [A]
        }
    }
    for l in 0..n {
        if !rel(l) {
            continue;
        }
        for w in 0..n {
            if same_thread(l, w) && d.mo.has(l, w) {
                for a in 0..n {
                    if d.po.has(a, l) {
                        ob.add(a, w); // po ; [L] ; coi
                    }
                }
            }
        }
    }
    if !ob.acyclic() {
        return Some("external");
    }
    None
}

fn violation(model: Model, g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    match model {
        Model::Armv8 => armv8_violation(g, d),
        Model::Rc11 => rc11_violation(g, d),
        Model::C11 => c11_violation(g, d),
        Model::Sc => sc_violation(g, d),
        Model::Tso => machine_violation(false, g, d),
        Model::Pso => machine_violation(true, g, d),
    }
}

/// Data races: accesses to the same location from different non-init threads, at least one a
/// write, at least one non-atomic, unordered by hb.
fn races(g: &ExecutionGraph, d: &Derived) -> Vec<(usize, usize)> {
    let ev = &g.events;
    let n = ev.len();
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let (x, y) = (&ev[a], &ev[b]);
            if is_access(x)
                && is_access(y)
                && x.thread != INIT_THREAD
                && y.thread != INIT_THREAD
                && x.thread != y.thread
                && x.loc == y.loc
                && (is_write(x) || is_write(y))
                && (!ord_atomic(x.order) || !ord_atomic(y.order))
                && !d.hb.has(a, b)
                && !d.hb.has(b, a)
            {
                out.push((a, b));
            }
        }
    }
    out
}

fn failed_threads(g: &ExecutionGraph) -> Vec<usize> {
    (0..g.threads.len())
        .filter(|&t| matches!(g.threads[t].end, Some(ThreadEnd::Failed(_))))
        .collect()
}

/// Whether read `r` read the last write of its location in mo.
fn reads_mo_last(g: &ExecutionGraph, r: usize) -> bool {
    let Some(l) = g.events[r].loc else {
        return false;
    };
    let src = g.rf[r].expect("a read has a source");
    g.mo[l].last() == Some(&src)
}

/// Threads waiting forever on a synchronisation object (see `fensyn::ir::SyncRole`): blocked,
/// with a last event that reads a `Wait` cell and read the last write to it (nobody releases
/// the lock or completes the barrier round any more); and threads with an `Acquire` load (not
/// an RMW) of a condition variable's `Signals` cell that read the last write to it (the wait
/// registered after the last signal: a lost wake-up; not for a thread that failed).
///
/// Only in a graph where no thread was cut at the loop bound and every blocked thread's last
/// read outside a read-modify-write read the last write of its location: a thread blocked on
/// an older write stands for other graphs (where it reads a newer one), and so do the threads
/// waiting for it.
fn deadlocked_threads(g: &ExecutionGraph, roles: &[Option<SyncRole>]) -> Vec<usize> {
    let role_of = |e: usize| {
        g.events[e]
            .loc
            .and_then(|l| roles.get(l).copied().flatten())
    };
    let stale = g.threads.iter().any(|tr| match tr.end {
        Some(ThreadEnd::Bounded | ThreadEnd::BoundAccepted) => true,
        Some(ThreadEnd::Blocked) => {
            let last_plain_read = tr.events.iter().rev().find(|&&r| {
                g.events[r].kind == EventKind::Read && g.rmw.iter().all(|&(rr, _)| rr != r)
            });
            last_plain_read.is_some_and(|&r| !reads_mo_last(g, r))
        }
        _ => false,
    });
    if stale {
        return Vec::new();
    }
    let mut out = Vec::new();
    if g.threads.iter().any(|t| t.end == Some(ThreadEnd::Exited)) {
        return out; // the program ended: nobody waits
    }
    // A thread blocked by an assume of the program, not waiting on a lock or barrier (`Wait`)
    // or sleeping in a condition wait (`Signals`): the execution is excluded.
    let excluded = g.threads.iter().any(|tr| {
        tr.end == Some(ThreadEnd::Blocked)
            && !tr
                .events
                .iter()
                .rev()
                .find(|&&r| {
                    g.events[r].kind == EventKind::Read && g.rmw.iter().all(|&(rr, _)| rr != r)
                })
                .is_some_and(|&r| matches!(role_of(r), Some(SyncRole::Wait | SyncRole::Signals)))
    });
    if excluded {
        return out;
    }
    for (t, tr) in g.threads.iter().enumerate() {
        let blocked_on_wait = tr.end == Some(ThreadEnd::Blocked)
            && tr.events.last().is_some_and(|&r| {
                g.events[r].kind == EventKind::Read
                    && role_of(r) == Some(SyncRole::Wait)
                    && reads_mo_last(g, r)
            });
        let failed = matches!(tr.end, Some(ThreadEnd::Failed(_)));
        let lost_wakeup = !failed
            && tr.events.iter().any(|&r| {
                g.events[r].kind == EventKind::Read
                    && g.events[r].order == MemOrder::Acquire
                    && role_of(r) == Some(SyncRole::Signals)
                    && g.rmw.iter().all(|&(rr, _)| rr != r)
                    && reads_mo_last(g, r)
            });
        if blocked_on_wait || lost_wakeup {
            out.push(t);
        }
    }
    out
}

/// Threads spinning forever (issue 23's liveness, as the explorer checks it with
/// `Limits::liveness`): in a graph where every thread finished, waits at a join, is blocked or
/// was cut at the loop bound, a thread blocked in a loop (`spin_from`: where its last pass
/// began) whose last pass read the mo-last write of every location it read and no
/// synchronisation cell. Only when every other blocked thread is settled too: a looping
/// thread's pass read only mo-last writes, and a thread blocked by an `assume` outside a loop
/// waits on a lock, barrier or condition (its last read outside an RMW is of a `Wait` or
/// `Signals` cell) and read the mo-last write there — a thread blocked by the program's own
/// `assume` excludes the execution. A thread cut at the bound loops forever when its last
/// pass repeated (`repeat_from`, see `cut_looping`); then no blocked thread may wait on
/// anything such a pass writes.
fn looping_threads(
    g: &ExecutionGraph,
    (spin_from, repeat_from): (&[Option<usize>], &[Option<usize>]),
    roles: &[Option<SyncRole>],
    used: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let ended = |e: Option<ThreadEnd>| {
        matches!(
            e,
            Some(
                ThreadEnd::Finished
                    | ThreadEnd::Stuck
                    | ThreadEnd::Blocked
                    | ThreadEnd::Bounded
                    | ThreadEnd::BoundAccepted
            )
        )
    };
    if !g.threads.iter().all(|tr| ended(tr.end)) {
        return Vec::new();
    }
    let role_of = |r: usize| {
        g.events[r]
            .loc
            .and_then(|l| roles.get(l).copied().flatten())
    };
    let waits_on_sync = |r: usize| matches!(role_of(r), Some(SyncRole::Wait | SyncRole::Signals));
    let Some((mut out, written)) = cut_looping(g, repeat_from, &role_of, used) else {
        return Vec::new();
    };
    let untouched = |r: usize| g.events[r].loc.is_none_or(|l| !written.contains(&l));
    for (t, tr) in g.threads.iter().enumerate() {
        if tr.end != Some(ThreadEnd::Blocked) {
            continue;
        }
        match spin_from[t] {
            Some(from) => {
                let pass: Vec<usize> = tr.events[from..]
                    .iter()
                    .copied()
                    .filter(|&e| g.events[e].kind == EventKind::Read)
                    .collect();
                // A zero-net-effect pass's own writes (RMWs giving the location back as they
                // found it) do not count as newer than what the pass read.
                let own = &tr.events[from..];
                let settled = |r: usize| {
                    let l = g.events[r].loc.expect("a read has a location");
                    let src = g.rf[r].expect("a read has a source");
                    let at = g.mo[l].iter().position(|&w| w == src).expect("src in mo");
                    g.mo[l][at + 1..].iter().all(|w| own.contains(w)) && untouched(r)
                };
                if !pass.iter().all(|&r| settled(r)) {
                    return Vec::new();
                }
                if !pass.iter().any(|&r| waits_on_sync(r)) {
                    out.push(t);
                }
            }
            None => {
                let last = tr.events.iter().rev().copied().find(|&r| {
                    g.events[r].kind == EventKind::Read && g.rmw.iter().all(|&(rr, _)| rr != r)
                });
                if !last.is_some_and(|r| waits_on_sync(r) && reads_mo_last(g, r) && untouched(r)) {
                    return Vec::new();
                }
            }
        }
    }
    out
}

/// The threads cut at the loop bound whose last pass repeats forever, and the locations those
/// passes write; `None` when a cut thread's loop may still end. A pass (from `repeat_from` to
/// the thread's end) repeats when it holds only reads, writes and fences, reads no
/// synchronisation cell of any role, and each read read the mo-last write of a location the
/// pass does not write, or belongs to a statement whose read values are never used (`used`).
fn cut_looping(
    g: &ExecutionGraph,
    repeat_from: &[Option<usize>],
    role_of: &dyn Fn(usize) -> Option<SyncRole>,
    used: &dyn Fn(usize) -> bool,
) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut out = Vec::new();
    let mut written = Vec::new();
    for (t, tr) in g.threads.iter().enumerate() {
        if !matches!(tr.end, Some(ThreadEnd::Bounded | ThreadEnd::BoundAccepted)) {
            continue;
        }
        let pass = &tr.events[repeat_from[t]?..];
        let kinds_ok = pass.iter().all(|&e| {
            matches!(
                g.events[e].kind,
                EventKind::Read | EventKind::Write | EventKind::Fence
            )
        });
        if !kinds_ok {
            return None;
        }
        let writes: Vec<usize> = pass
            .iter()
            .filter(|&&e| g.events[e].kind == EventKind::Write)
            .filter_map(|&e| g.events[e].loc)
            .collect();
        for &r in pass
            .iter()
            .filter(|&&e| g.events[e].kind == EventKind::Read)
        {
            let l = g.events[r].loc?;
            let settled = if writes.contains(&l) {
                g.events[r].stmt.is_some_and(|s| !used(s))
            } else {
                reads_mo_last(g, r)
            };
            if !settled || role_of(r).is_some_and(|role| role != SyncRole::State) {
                return None;
            }
        }
        out.push(t);
        written.extend(writes);
    }
    Some((out, written))
}

/// The oracle's verdict on any graph: `Err(axiom)` or `Ok(buggy)`.
fn judge(model: Model, g: &ExecutionGraph) -> Result<bool, &'static str> {
    let po = program_order(g);
    let d = derive(g, &po, model);
    if let Some(v) = violation(model, g, &d) {
        return Err(v);
    }
    // The hardware models run the mapped program: no data races.
    let hardware = matches!(model, Model::Tso | Model::Pso | Model::Armv8);
    Ok(!failed_threads(g).is_empty() || (!hardware && !races(g, &d).is_empty()))
}

// ---------------------------------------------------------------------------------------------
// Thread runs.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Finished,
    Failed,
    /// Waiting forever at a join of a thread that did not finish normally.
    Stuck,
    /// A false `assume`.
    Blocked,
    /// A loop iteration started more than `unroll` times since the loop was entered.
    Bounded,
    /// As `Bounded`, at a loop whose bound the source sets and accepts
    /// (`Program::loop_bounds`, from `// fensyn: unroll N`).
    BoundAccepted,
    /// `exit`: the program ended.
    Exited,
    /// A read of an allocated cell no run has written yet (a value set of an earlier round):
    /// kept only so that `max_writes` sees its prefix, never part of a graph.
    Starved,
}

#[derive(Clone, Debug)]
struct OEvent {
    kind: EventKind,
    loc: Option<usize>,
    order: MemOrder,
    value: i64,
    /// The write part of an RMW, whose read part is the previous event of the run.
    rmw: bool,
    /// The first write of an allocated cell (its allocation).
    alloc: bool,
    /// For the read of a load or RMW: its statement (whether its value is used is asked of
    /// `SpinInfo::read_value_used`, for the liveness of loops cut at the bound).
    stmt: Option<usize>,
    /// Dependencies (ARMv8), as indices of earlier events of the same run: the reads the
    /// address, the value written, and the control flow up to this event depend on.
    addr: BTreeSet<usize>,
    data: BTreeSet<usize>,
    ctrl: BTreeSet<usize>,
}

impl OEvent {
    fn new(kind: EventKind, loc: Option<usize>, order: MemOrder, value: i64) -> OEvent {
        OEvent {
            kind,
            loc,
            order,
            value,
            rmw: false,
            alloc: false,
            stmt: None,
            addr: BTreeSet::new(),
            data: BTreeSet::new(),
            ctrl: BTreeSet::new(),
        }
    }
}

/// The registers an expression reads.
fn regs_of(e: &Expr, out: &mut BTreeSet<usize>) {
    match e {
        Expr::Const(_) => {}
        Expr::Reg(r) => {
            out.insert(*r);
        }
        Expr::Unary(_, a) => regs_of(a, out),
        Expr::Binary(_, a, b) => {
            regs_of(a, out);
            regs_of(b, out);
        }
    }
}

/// The orders of the read and write parts of an RMW of order `o` (written from the brief and
/// RC11's convention, not taken from `split_rmw_order`): the read part carries the acquire half,
/// the write part the release half; seq_cst makes both parts seq_cst.
fn rmw_parts(o: MemOrder) -> (MemOrder, MemOrder) {
    use MemOrder::*;
    match o {
        Relaxed => (Relaxed, Relaxed),
        Acquire => (Acquire, Relaxed),
        Release => (Relaxed, Release),
        AcqRel => (Acquire, Release),
        SeqCst => (SeqCst, SeqCst),
        NonAtomic => panic!("oracle: a non-atomic RMW"),
    }
}

#[derive(Clone, Debug)]
struct Run {
    events: Vec<OEvent>,
    end: End,
    /// Joins met: (child, whether the child must have finished).
    joins: Vec<(usize, bool)>,
    /// Threads spawned (main only): (function, argument), thread ids 1, 2, ... in this order.
    spawns: Vec<(FuncId, i64, usize)>,
    /// Per register, the reads (run indices) its value was computed from.
    reg_deps: Vec<BTreeSet<usize>>,
    /// The reads every later event is control dependent on.
    ctrl: BTreeSet<usize>,
    /// The objects this thread allocated, in order (the k-th is at `dyn_loc(tid, k, 0)`).
    allocs: Vec<OAlloc>,
    /// What the run assumes of other threads' objects: `(thread, k, offset, need)` (checked
    /// when runs are combined, like `joins`).
    needs: Vec<(usize, usize, usize, Need)>,
    /// For a run that failed on a memory error: which.
    fail: Option<Fail>,
    /// For a run blocked in a loop (by the spin rule, or at an await loop's `assume`): where
    /// its last pass began (an index into `events`).
    spin_from: Option<usize>,
    /// For a run cut at the bound of a loop whose last pass came back to the head with the
    /// same strongly live values but was no spin: where that pass began.
    repeat_from: Option<usize>,
    /// Zero-net-effect passes (`ir::spin`) whose writes chain (several RMWs on one location):
    /// for a run blocked after one, the `(read, write)` pairs (run indices) that must be rf
    /// edges in a graph of the run; for each such pass a run went on after, pairs of which
    /// at least one must not be an rf edge (else the run should have blocked there).
    zne_chain: Vec<(usize, usize)>,
    zne_not: Vec<Vec<(usize, usize)>>,
}

// ---------------------------------------------------------------------------------------------
// Objects allocated at run time, numbered by the oracle on its own.
// ---------------------------------------------------------------------------------------------

/// Where the oracle puts allocated objects: cell `off` of the `k`-th object thread `t`
/// allocated (in its program order) is location `dyn_loc(t, k, off)`. A thread's run thus
/// knows the addresses of its objects without knowing the other threads' runs, and the value
/// sets of step 1 stay per location across rounds (the numbering does not depend on the
/// interleaving). Nothing lies between objects: an object's red zone (the location just
/// past it, issue 20) and anything further are never allocated. A graph numbers the
/// allocated cells of its runs densely after the globals (`skeleton`), and keys name them by
/// (thread, k, offset) (`loc_names`), so neither the oracle's numbering nor the explorer's
/// (the order its path allocated in) shows in a comparison. (Far above the front end's
/// function pointer values, `FN_BASE` = 2^40.)
const DYN_BASE: usize = 1 << 56;
const THREAD_SHIFT: u32 = 30;
const OBJECT_SHIFT: u32 = 18;

fn dyn_loc(t: usize, k: usize, off: usize) -> usize {
    DYN_BASE + (t << THREAD_SHIFT) + (k << OBJECT_SHIFT) + off
}

/// `(thread, k, offset)` of an oracle location at or above `DYN_BASE`.
fn dyn_decode(l: i64) -> Option<(usize, usize, usize)> {
    let l = usize::try_from(l).ok()?.checked_sub(DYN_BASE)?;
    let k_mask = (1 << (THREAD_SHIFT - OBJECT_SHIFT)) - 1;
    Some((
        l >> THREAD_SHIFT,
        (l >> OBJECT_SHIFT) & k_mask,
        l & ((1 << OBJECT_SHIFT) - 1),
    ))
}

/// An object a run allocated: its layout and its number of cells (the layout's times the
/// count).
#[derive(Clone, Copy, Debug)]
struct OAlloc {
    layout: usize,
    len: usize,
}

/// What a run assumes of cell `off` of another thread's object (the explorer sees the object
/// in the graph; the oracle's runs are computed one thread at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// The cell exists: the object has more than `off` cells.
    Cell,
    /// `off` is its red zone: an object of exactly `off` cells.
    RedZone,
    /// Neither a cell nor the red zone.
    Nothing,
    /// Not the red zone.
    NotRedZone,
    /// A valid deallocation of it by the given function.
    FreeOk(Dealloc),
    /// An invalid one.
    FreeBad(Dealloc),
}

/// The memory error a run failed on.
#[derive(Clone, Debug)]
enum Fail {
    Memory(MemoryError, String),
    /// Just past the end of thread `.0`'s `.1`-th object (named and sized by that thread's run).
    RedZone(usize, usize),
    /// An invalid `by` of cell `.3` of thread `.1`'s `.2`-th object.
    BadFree(Dealloc, usize, usize, usize),
}

/// Whether `need` holds of cell `off` of object `obj` (`None`: the thread allocated no such
/// object).
fn need_holds(prog: &Program, obj: Option<&OAlloc>, off: usize, need: Need) -> bool {
    let cell = obj.is_some_and(|o| off < o.len);
    let zone = obj.is_some_and(|o| off == o.len);
    match need {
        Need::Cell => cell,
        Need::RedZone => zone,
        Need::Nothing => !cell && !zone,
        Need::NotRedZone => !zone,
        Need::FreeOk(by) => bad_free(prog, obj, off, by).is_none(),
        Need::FreeBad(by) => bad_free(prog, obj, off, by).is_some(),
    }
}

/// Why `by` (`free`, `delete`, `delete[]`) of cell `off` of `obj` is invalid, if it is (issue
/// 20: only the start of a heap object allocated by the matching function may be freed; the
/// messages are the explorer's).
fn bad_free(prog: &Program, obj: Option<&OAlloc>, off: usize, by: Dealloc) -> Option<String> {
    let by_s = by.as_str();
    let Some(o) = obj.filter(|o| off < o.len) else {
        return Some(format!("{by_s} of a pointer to no heap object"));
    };
    let lay = &prog.layouts[o.layout];
    let name = &lay.name;
    if !lay.kind.is_heap() {
        Some(format!("{by_s} of `{name}`, which is not a heap object"))
    } else if off != 0 {
        Some(format!(
            "{by_s} of a pointer {off} cells into `{name}` (not its start)"
        ))
    } else if lay.kind != by.ends() {
        Some(format!(
            "{by_s} of `{name}`, which was allocated by {} (mismatched deallocation)",
            lay.kind.allocator()
        ))
    } else {
        None
    }
}

/// The message of an access just past the end of `o`.
fn red_zone_message(prog: &Program, o: &OAlloc) -> String {
    format!(
        "out-of-bounds access (just past the end of `{}`, {} cells)",
        prog.layouts[o.layout].name, o.len
    )
}

/// The name of cell `off` of an object of layout `layout` and `len` cells in messages: the
/// layout cell's name, and for an array allocation (`len` more than the layout's cells) the
/// element's index after the object's name (`malloc@12[3].next`, as `Layout::name` says).
fn cell_name(prog: &Program, layout: usize, off: usize, len: usize) -> String {
    let lay = &prog.layouts[layout];
    let n = lay.cells.len();
    let cell = &lay.cells[off % n].name;
    if len > n {
        let rest = cell.strip_prefix(lay.name.as_str()).unwrap_or("");
        format!("{}[{}]{rest}", lay.name, off / n)
    } else {
        cell.clone()
    }
}

/// Where an address leads, for a thread's run.
enum Target {
    /// An existing location: a global, or a cell of an object of this thread.
    Loc(usize),
    /// Cell `off` of thread `t`'s `k`-th object (`loc`), whose size only that thread's run
    /// knows; `in_bounds`: within the bounds the address gives; `oob`: the error if the
    /// location does not exist.
    Foreign {
        loc: usize,
        t: usize,
        k: usize,
        off: usize,
        in_bounds: bool,
        oob: Option<(MemoryError, String)>,
    },
    /// No location: the thread fails (with a memory error, or undefined behaviour).
    Fault(Option<(MemoryError, String)>),
}

impl Run {
    /// The reads the value of `e` depends on.
    fn deps_of(&self, e: &Expr) -> BTreeSet<usize> {
        let mut regs = BTreeSet::new();
        regs_of(e, &mut regs);
        regs.iter()
            .flat_map(|&r| self.reg_deps[r].iter().copied())
            .collect()
    }
    fn addr_deps(&self, a: &Addr) -> BTreeSet<usize> {
        match a {
            Addr::Fixed(_) => BTreeSet::new(),
            Addr::Computed { ptr, .. } => self.deps_of(ptr),
            Addr::Within { ptr, base, .. } => {
                let mut d = self.deps_of(ptr);
                d.extend(self.deps_of(base));
                d
            }
        }
    }
    /// Appends an access with its address / data dependencies and the current control ones.
    fn push_access(&mut self, mut e: OEvent, addr: &Addr, data: Option<&Expr>) {
        e.addr = self.addr_deps(addr);
        e.data = data.map(|d| self.deps_of(d)).unwrap_or_default();
        e.ctrl = self.ctrl.clone();
        self.events.push(e);
    }
    fn branch_on(&mut self, cond: &Expr) {
        let d = self.deps_of(cond);
        self.ctrl.extend(d);
    }
}

/// Per location (globals, and allocated cells at `dyn_loc`), the values a read may return.
type Dom = BTreeMap<usize, BTreeSet<i64>>;

const STEP_CAP: usize = 100_000;
const EVENT_CAP: usize = 60;

struct Walker<'a> {
    prog: &'a Program,
    func: FuncId,
    is_main: bool,
    /// The thread's id (main 0, the k-th child spawned k).
    tid: usize,
    dom: &'a Dom,
    unroll: u32,
    out: Vec<Run>,
    /// The program's loop heads, strongly live registers and spin-safe locations (the IR's
    /// facts the spin rule of `ir::spin` is stated with; the rule itself is applied here).
    spin: SpinInfo,
    /// Whether passes with zero-net-effect RMWs count as spins (models `rc11` and `sc`).
    zne: bool,
}

/// A run's loops: iterations started since each loop was entered, and the spin rule's record
/// of the last arrival at its head (pc, strongly live values, events + spawns + joins so far).
#[derive(Clone, Default)]
struct Loops {
    count: BTreeMap<usize, u32>,
    spins: BTreeMap<usize, (usize, Vec<i64>, usize, usize)>,
    /// The last pass that came back to its loop's head with the same strongly live values
    /// (and no spawn or join) but was no spin: (loop id, where it began).
    repeat: Option<(usize, usize)>,
}

impl Walker<'_> {
    /// The spin rule of `ir::spin`, checked by the oracle on its own runs: arriving at a loop
    /// head with the same strongly live values as at the previous arrival, with only fences,
    /// reads of spin-safe locations and (with `zne`) zero-net-effect RMWs in between, blocks
    /// the run (`Some`: where the spinning pass began, and the rf edges the pass's chained
    /// RMWs need, which only a graph decides); any other arrival is recorded.
    fn spun(
        &self,
        pc: usize,
        regs: &[i64],
        run: &Run,
        loops: &mut Loops,
    ) -> Option<(usize, Vec<(usize, usize)>)> {
        let (id, live) = self.spin.head(self.func, pc)?;
        let live: Vec<i64> = live.iter().map(|&r| regs[r]).collect();
        let n = run.events.len();
        let others = run.spawns.len() + run.joins.len();
        if loops.repeat.is_some_and(|r| r.0 == id) {
            loops.repeat = None;
        }
        if let Some((at, before, seen, seen_others)) = loops.spins.get(&id) {
            let from = *seen;
            let same = *at == pc && *before == live && *seen_others == others;
            if same {
                // Going on after this pass means it was no spin: a repeat (a run that blocks
                // on a chained pass is another run).
                loops.repeat = Some((id, from));
            }
            if let Some(chain) = self.zne_pass(run, from).filter(|_| same) {
                if chain.is_empty() {
                    return Some((from, chain));
                }
                loops.spins.insert(id, (pc, live, n, others));
                return Some((from, chain));
            }
        }
        loops.spins.insert(id, (pc, live, n, others));
        None
    }

    /// Whether the run's events from `from` on may form a spin pass: fences, reads of
    /// spin-safe globals and, with `zne`, RMW writes that give each location they write back
    /// the value its first RMW read (on a location with no non-atomic access and, for
    /// several writes, no read but an RMW's, after main's first spawn). `Some`: the rf edges
    /// (read, write) that must hold for the RMWs of one location to chain.
    fn zne_pass(&self, run: &Run, from: usize) -> Option<Vec<(usize, usize)>> {
        let mut writes: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for (i, e) in run.events.iter().enumerate().skip(from) {
            match e.kind {
                EventKind::Fence => {}
                EventKind::Read => {
                    let l = e.loc?;
                    if !self.spin.spin_safe(l, e.order != MemOrder::NonAtomic) {
                        return None;
                    }
                }
                EventKind::Write if self.zne && e.rmw && i > from => {
                    writes.entry(e.loc?).or_default().push((i - 1, i));
                }
                _ => return None,
            }
        }
        let mut chain = Vec::new();
        for (l, ws) in &writes {
            let first = run.events[ws[0].0].value;
            let last = run.events[ws[ws.len() - 1].1].value;
            if first != last || !self.spin.zne_safe(*l, ws.len() > 1) {
                return None;
            }
            chain.extend(ws.windows(2).map(|p| (p[1].0, p[0].1)));
        }
        Some(chain)
    }

    /// The spin rule at an arrival at `pc`: `true` when the run stopped (blocked). A pass
    /// whose RMWs must chain forks: one run blocks, needing the chain, and this one goes on,
    /// needing the chain broken.
    fn arrive(&mut self, pc: usize, regs: &[i64], run: &mut Run, loops: &mut Loops) -> bool {
        let Some((from, chain)) = self.spun(pc, regs, run, loops) else {
            return false;
        };
        let mut blocked = run.clone();
        blocked.spin_from = Some(from);
        if chain.is_empty() {
            self.stop(blocked, End::Blocked);
            return true;
        }
        blocked.zne_chain = chain.clone();
        self.stop(blocked, End::Blocked);
        run.zne_not.push(chain);
        false
    }
}

thread_local! {
    /// Whether the oracle counts threads spinning forever as bugs (`looping_threads`), as the
    /// explorer does with `Limits::liveness`. Off for the coarse equivalences: the liveness
    /// verdict reads mo, which a reads-from class does not fix (see `compare_coarse`).
    static LIVENESS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    /// Whether weak CASes may fail spuriously, in both the oracle and the explorer (set by the
    /// tests that compare with spurious failures enabled).
    static SPURIOUS_CAS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The work the oracle may do (thread runs, run combinations, candidate graphs) before it
    /// gives up, and the work done: see [`with_budget`]. Unlimited unless a caller sets it.
    static BUDGET: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((u64::MAX, 0)) };
}

/// The number in environment variable `k` (campaign sizes, seeds, limits), if set and valid.
fn env_number<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok()?.parse().ok()
}

/// Counts `n` units of the oracle's work; false once the budget is spent (the enumeration then
/// stops early and its result is incomplete).
fn spend(n: u64) -> bool {
    BUDGET.with(|b| {
        let (limit, done) = b.get();
        let done = done.saturating_add(n);
        b.set((limit, done));
        done <= limit
    })
}

fn over_budget() -> bool {
    BUDGET.with(|b| b.get().1 > b.get().0)
}

/// `f()` with the oracle limited to `limit` units of work; `None` if it ran out (then what `f`
/// returned may rest on an incomplete enumeration and is dropped).
fn with_budget<T>(limit: u64, f: impl FnOnce() -> T) -> Option<T> {
    BUDGET.with(|b| b.set((limit, 0)));
    let out = f();
    let over = over_budget();
    BUDGET.with(|b| b.set((u64::MAX, 0)));
    (!over).then_some(out)
}

/// Where an access goes: a fixed location, or a computed pointer value (location + 1) that
/// must lie in the bounds the address gives (an array, an object, or anything for a plain
/// pointer) and address a location that exists (a global, or a cell of an allocated object);
/// else the thread fails: a division by zero is undefined behaviour, null a null dereference,
/// the red zone just past an object is out of bounds of that object, and anything else is
/// out of bounds of the array or object the address gives (or of all memory, for a plain
/// pointer: memory that is not allocated). `tid` and
/// `allocs`: the accessing thread and its objects. Atomicity belongs to the access: an atomic
/// access to a location declared plain, or a plain access to one declared atomic, is an
/// ordinary access of its own kind.
fn target(a: &Addr, regs: &[i64], prog: &Program, tid: usize, allocs: &[OAlloc]) -> Target {
    let (p, lo, hi) = match a {
        Addr::Fixed(l) => return Target::Loc(*l),
        Addr::Computed { ptr, lo, hi } => match ptr.eval(regs) {
            Ok(p) => (p, *lo as i64, (*hi).min(i64::MAX as usize) as i64),
            Err(_) => return Target::Fault(None),
        },
        Addr::Within { ptr, base, len } => match (ptr.eval(regs), base.eval(regs)) {
            (Ok(p), Ok(b)) => (p, b - 1, (b - 1).saturating_add(*len as i64)),
            _ => return Target::Fault(None),
        },
    };
    if p == 0 {
        let msg = "null pointer dereference".to_string();
        return Target::Fault(Some((MemoryError::NullDereference, msg)));
    }
    let (l, lo, hi) = (p - 1, lo.max(0), hi.max(0));
    let in_bounds = l >= lo && l < hi;
    // Out of the array or object the address gives, or (a plain pointer) of every object.
    let msg = if hi < i64::MAX {
        format!(
            "out-of-bounds access (index {} of {} elements)",
            p - (lo + 1),
            hi - lo
        )
    } else {
        "invalid pointer (it addresses no object of the program)".to_string()
    };
    let oob = Some((MemoryError::OutOfBounds, msg));
    if (0..prog.globals.len() as i64).contains(&l) {
        return if in_bounds {
            Target::Loc(l as usize)
        } else {
            Target::Fault(oob)
        };
    }
    let Some((t, k, off)) = dyn_decode(l) else {
        return Target::Fault(oob);
    };
    if t != tid {
        let loc = l as usize;
        return Target::Foreign {
            loc,
            t,
            k,
            off,
            in_bounds,
            oob,
        };
    }
    match allocs.get(k) {
        Some(o) if off < o.len && in_bounds => Target::Loc(l as usize),
        Some(o) if off == o.len => {
            Target::Fault(Some((MemoryError::OutOfBounds, red_zone_message(prog, o))))
        }
        _ => Target::Fault(oob),
    }
}

/// The value an RMW writes when it read `old` (C's operators on the two's-complement values,
/// written here from the C standard and GCC's documentation, not taken from `RmwOp::apply`).
fn rmw_value(op: RmwOp, old: i64, operand: i64, width: Width) -> i64 {
    let full = match op {
        RmwOp::Xchg => operand,
        RmwOp::Add => old.wrapping_add(operand),
        RmwOp::Sub => old.wrapping_sub(operand),
        RmwOp::And => old & operand,
        RmwOp::Or => old | operand,
        RmwOp::Xor => old ^ operand,
        // GCC: "{ tmp = *ptr; *ptr = ~(tmp & val); return tmp; }".
        RmwOp::Nand => !(old & operand),
    };
    // Reduced modulo 2^bits into the type's range (C11 7.17.7.5: atomic arithmetic wraps).
    if width.bits >= 64 {
        return full;
    }
    let m = 1i128 << width.bits;
    let v = i128::from(full).rem_euclid(m);
    let v = if width.signed && v >= m / 2 { v - m } else { v };
    v as i64
}

impl Walker<'_> {
    fn stop(&mut self, mut run: Run, end: End) {
        run.end = end;
        // A run costs its events (what it keeps in memory).
        if spend(run.events.len() as u64 + 1) {
            self.out.push(run);
        }
    }

    /// Fails a copy of `run` (with a memory error, or none: undefined behaviour) assuming
    /// `need` of another thread's object, if any.
    fn fail(&mut self, run: &Run, fail: Option<Fail>, need: Option<(usize, usize, usize, Need)>) {
        let mut r = run.clone();
        r.fail = fail;
        r.needs.extend(need);
        self.stop(r, End::Failed);
    }

    /// The location of an access by `run`, or `None` when the thread fails there. An access
    /// to another thread's object depends on how that thread allocated it: the alternatives
    /// where it fails (the red zone; no such location) are runs of their own, each assuming
    /// what it needs of the object, and `run` goes on assuming the cell exists.
    fn access(&mut self, a: &Addr, regs: &[i64], run: &mut Run) -> Option<usize> {
        match target(a, regs, self.prog, self.tid, &run.allocs) {
            Target::Loc(l) => Some(l),
            Target::Fault(m) => {
                self.fail(run, m.map(|(e, s)| Fail::Memory(e, s)), None);
                None
            }
            Target::Foreign {
                loc,
                t,
                k,
                off,
                in_bounds,
                oob,
            } => {
                self.fail(
                    run,
                    Some(Fail::RedZone(t, k)),
                    Some((t, k, off, Need::RedZone)),
                );
                let rest = if in_bounds {
                    Need::Nothing
                } else {
                    Need::NotRedZone
                };
                let fail = oob.map(|(e, s)| Fail::Memory(e, s));
                self.fail(run, fail, Some((t, k, off, rest)));
                if !in_bounds {
                    return None;
                }
                run.needs.push((t, k, off, Need::Cell));
                Some(loc)
            }
        }
    }

    fn go(
        &mut self,
        mut pc: usize,
        mut regs: Vec<i64>,
        mut run: Run,
        mut steps: usize,
        mut loops: Loops,
    ) {
        let prog = self.prog;
        let dom = self.dom;
        let f = &prog.functions[self.func];
        loop {
            if !spend(1) {
                return;
            }
            steps += 1;
            assert!(
                steps < STEP_CAP,
                "oracle: local loop in `{}` (more than {STEP_CAP} steps)",
                f.name
            );
            assert!(
                run.events.len() <= EVENT_CAP,
                "oracle: `{}` has runs with more than {EVENT_CAP} events",
                f.name
            );
            let Some(ins) = f.body.get(pc) else {
                return self.stop(run, End::Finished);
            };
            match ins {
                Instr::Assign { dst, val } => match val.eval(&regs) {
                    Ok(v) => {
                        regs[*dst] = v;
                        run.reg_deps[*dst] = run.deps_of(val);
                        pc += 1;
                    }
                    Err(_) => return self.stop(run, End::Failed),
                },
                Instr::Assert { cond, .. } | Instr::Check { cond, .. } => match cond.eval(&regs) {
                    Ok(0) | Err(_) => return self.stop(run, End::Failed),
                    Ok(_) => {
                        run.branch_on(cond);
                        pc += 1
                    }
                },
                Instr::BranchIfZero { cond, target } => match cond.eval(&regs) {
                    Ok(0) => {
                        run.branch_on(cond);
                        pc = *target;
                        if self.arrive(pc, &regs, &mut run, &mut loops) {
                            return;
                        }
                    }
                    Ok(_) => {
                        run.branch_on(cond);
                        pc += 1
                    }
                    Err(_) => return self.stop(run, End::Failed),
                },
                Instr::Jump { target } => {
                    pc = *target;
                    if self.arrive(pc, &regs, &mut run, &mut loops) {
                        return;
                    }
                }
                Instr::ThreadId { dst } => {
                    regs[*dst] = self.tid as i64;
                    run.reg_deps[*dst] = BTreeSet::new();
                    pc += 1;
                }
                Instr::Slot(_) => pc += 1,
                Instr::Return => return self.stop(run, End::Finished),
                Instr::Exit => return self.stop(run, End::Exited),
                // Past the recursion bound: cut, as a loop past the unroll bound.
                Instr::Cut => return self.stop(run, End::Bounded),
                Instr::Alloc { dst, layout, count } => {
                    // `count` elements of the layout's cells (one without a count); none gives
                    // null; a negative or too large size is an error of the execution.
                    let n = match count.as_ref().map(|c| c.eval(&regs)) {
                        None => 1,
                        Some(Ok(n)) => n,
                        Some(Err(_)) => return self.stop(run, End::Failed),
                    };
                    let lay = &prog.layouts[*layout];
                    let cells = lay.cells.len() as i64;
                    if n < 0 || n.saturating_mul(cells) > MAX_OBJECT_CELLS {
                        return self.stop(run, End::Failed);
                    }
                    regs[*dst] = 0;
                    if n > 0 {
                        // Fresh locations, each first written (non-atomically) with its
                        // cell's initial value by this thread.
                        let k = run.allocs.len();
                        let len = (n * cells) as usize;
                        for off in 0..len {
                            let init = lay.cells[off % lay.cells.len()].init;
                            let mut w = OEvent::new(
                                EventKind::Write,
                                Some(dyn_loc(self.tid, k, off)),
                                MemOrder::NonAtomic,
                                init,
                            );
                            w.alloc = true;
                            run.events.push(w);
                        }
                        run.allocs.push(OAlloc {
                            layout: *layout,
                            len,
                        });
                        regs[*dst] = dyn_loc(self.tid, k, 0) as i64 + 1;
                    }
                    run.reg_deps[*dst] = BTreeSet::new();
                    pc += 1;
                }
                Instr::Free { ptr, by } => {
                    let Ok(p) = ptr.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    pc += 1;
                    if p == 0 {
                        continue; // freeing null frees nothing
                    }
                    let l = p - 1;
                    let free = |first: usize| {
                        let kind = EventKind::Free { first, len: 0 };
                        OEvent::new(kind, None, MemOrder::NonAtomic, 0)
                    };
                    if *by == Dealloc::ScopeEnd {
                        // The end of a local object: the front end frees only those.
                        let first = match dyn_decode(l) {
                            Some((t, k, _)) => dyn_loc(t, k, 0),
                            None => l as usize,
                        };
                        run.events.push(free(first));
                        continue;
                    }
                    let bad = |m: String| Some(Fail::Memory(MemoryError::InvalidFree, m));
                    if (0..prog.globals.len() as i64).contains(&l) {
                        let m = format!(
                            "{} of `{}`, which is not a heap object",
                            by.as_str(),
                            prog.globals[l as usize].name
                        );
                        self.fail(&run, bad(m), None);
                        return;
                    }
                    let Some((t, k, off)) = dyn_decode(l) else {
                        let m = format!("{} of a pointer to no heap object", by.as_str());
                        self.fail(&run, bad(m), None);
                        return;
                    };
                    if t == self.tid {
                        if let Some(m) = bad_free(prog, run.allocs.get(k), off, *by) {
                            self.fail(&run, bad(m), None);
                            return;
                        }
                    } else {
                        let fail = Some(Fail::BadFree(*by, t, k, off));
                        self.fail(&run, fail, Some((t, k, off, Need::FreeBad(*by))));
                        run.needs.push((t, k, off, Need::FreeOk(*by)));
                    }
                    run.events.push(free(dyn_loc(t, k, 0)));
                }
                Instr::ObjectCells { dst, ptr } => {
                    // The cells from the pointer to the end of its object (0 for null or a
                    // location not allocated at run time).
                    let n = match ptr.eval(&regs).ok().and_then(|p| dyn_decode(p - 1)) {
                        Some((t, k, off)) => {
                            assert!(
                                t == self.tid,
                                "oracle: the size of another thread's object is not modelled"
                            );
                            run.allocs
                                .get(k)
                                .map_or(0, |o| o.len.saturating_sub(off) as i64)
                        }
                        None => 0,
                    };
                    regs[*dst] = n;
                    run.reg_deps[*dst] = BTreeSet::new();
                    pc += 1;
                }
                Instr::Nondet { dst, lo, hi } => {
                    // One run per value, each recording its choice.
                    for v in *lo..=*hi {
                        let mut regs2 = regs.clone();
                        regs2[*dst] = v;
                        let mut run2 = run.clone();
                        run2.events.push(OEvent::new(
                            EventKind::Choice,
                            None,
                            MemOrder::NonAtomic,
                            v,
                        ));
                        run2.reg_deps[*dst] = BTreeSet::new();
                        self.go(pc + 1, regs2, run2, steps, loops.clone());
                    }
                    return;
                }
                Instr::Assume { cond } => match cond.eval(&regs) {
                    Ok(0) => {
                        // An await loop's `assume`: its only pass began at the loop's entry.
                        let id = self.spin.awaits(self.func, pc);
                        run.spin_from = id.and_then(|id| loops.spins.get(&id)).map(|s| s.2);
                        return self.stop(run, End::Blocked);
                    }
                    Ok(_) => {
                        run.branch_on(cond);
                        pc += 1
                    }
                    Err(_) => return self.stop(run, End::Failed),
                },
                Instr::LoopEnter { id } => {
                    loops.count.remove(id);
                    loops.spins.remove(id);
                    if loops.repeat.is_some_and(|r| r.0 == *id) {
                        loops.repeat = None;
                    }
                    pc += 1;
                    self.arrive(pc, &regs, &mut run, &mut loops);
                }
                Instr::LoopIter { id } => {
                    let (bound, end) = match self.prog.loop_bounds.get(id) {
                        Some(&n) => (n, End::BoundAccepted),
                        None => (self.unroll, End::Bounded),
                    };
                    let k = loops.count.entry(*id).or_insert(0);
                    *k += 1;
                    if *k > bound {
                        let mut run = run;
                        run.repeat_from = loops.repeat.filter(|r| r.0 == *id).map(|r| r.1);
                        return self.stop(run, end);
                    }
                    pc += 1;
                }
                Instr::Load { dst, loc: a, order } => {
                    let Some(loc) = &self.access(a, &regs, &mut run) else {
                        return;
                    };
                    let Some(values) = dom.get(loc) else {
                        return self.stop(run, End::Starved);
                    };
                    for &v in values {
                        let mut regs2 = regs.clone();
                        regs2[*dst] = v;
                        let mut run2 = run.clone();
                        let mut e = OEvent::new(EventKind::Read, Some(*loc), *order, v);
                        e.stmt = Some(self.prog.functions[self.func].stmt_of[pc]);
                        run2.push_access(e, a, None);
                        run2.reg_deps[*dst] = BTreeSet::from([run2.events.len() - 1]);
                        self.go(pc + 1, regs2, run2, steps, loops.clone());
                    }
                    return;
                }
                Instr::Rmw {
                    dst,
                    loc: a,
                    op,
                    val,
                    order,
                    width,
                } => {
                    let Some(loc) = &self.access(a, &regs, &mut run) else {
                        return;
                    };
                    let Some(values) = dom.get(loc) else {
                        return self.stop(run, End::Starved);
                    };
                    // The operand is evaluated before the access.
                    let Ok(operand) = val.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    let (ro, wo) = rmw_parts(*order);
                    for &v in values {
                        let mut regs2 = regs.clone();
                        regs2[*dst] = v;
                        let mut run2 = run.clone();
                        let mut e = OEvent::new(EventKind::Read, Some(*loc), ro, v);
                        e.stmt = Some(self.prog.functions[self.func].stmt_of[pc]);
                        run2.push_access(e, a, None);
                        let read = run2.events.len() - 1;
                        let mut w = OEvent::new(
                            EventKind::Write,
                            Some(*loc),
                            wo,
                            rmw_value(*op, v, operand, *width),
                        );
                        w.rmw = true;
                        run2.push_access(w, a, Some(val));
                        run2.reg_deps[*dst] = BTreeSet::from([read]);
                        self.go(pc + 1, regs2, run2, steps, loops.clone());
                    }
                    return;
                }
                Instr::Cas {
                    ok,
                    old,
                    loc: a,
                    expected,
                    desired,
                    order,
                    fail_order,
                    weak,
                } => {
                    let Some(loc) = &self.access(a, &regs, &mut run) else {
                        return;
                    };
                    let Some(values) = dom.get(loc) else {
                        return self.stop(run, End::Starved);
                    };
                    // Both arguments are evaluated before the access.
                    let (Ok(exp), Ok(des)) = (expected.eval(&regs), desired.eval(&regs)) else {
                        return self.stop(run, End::Failed);
                    };
                    // A weak CAS may also fail when it reads the expected value (with
                    // spurious failures enabled): `succeed` false for that branch.
                    let spurious = *weak && SPURIOUS_CAS.with(|s| s.get());
                    let mut outcomes = Vec::new();
                    for &v in values {
                        outcomes.push((v, v == exp));
                        if v == exp && spurious {
                            outcomes.push((v, false));
                        }
                    }
                    for (v, succeed) in outcomes {
                        let mut regs2 = regs.clone();
                        regs2[*old] = v;
                        regs2[*ok] = i64::from(succeed);
                        let mut run2 = run.clone();
                        if succeed {
                            let (ro, wo) = rmw_parts(*order);
                            run2.push_access(
                                OEvent::new(EventKind::Read, Some(*loc), ro, v),
                                a,
                                None,
                            );
                            let mut w = OEvent::new(EventKind::Write, Some(*loc), wo, des);
                            w.rmw = true;
                            run2.push_access(w, a, Some(desired));
                        } else {
                            run2.push_access(
                                OEvent::new(EventKind::Read, Some(*loc), *fail_order, v),
                                a,
                                None,
                            );
                        }
                        let read = run2.events.len() - if succeed { 2 } else { 1 };
                        run2.reg_deps[*old] = BTreeSet::from([read]);
                        run2.reg_deps[*ok] = BTreeSet::from([read]);
                        self.go(pc + 1, regs2, run2, steps, loops.clone());
                    }
                    return;
                }
                Instr::Store { loc: a, val, order } => {
                    let Some(loc) = &self.access(a, &regs, &mut run) else {
                        return;
                    };
                    let Ok(v) = val.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    run.push_access(
                        OEvent::new(EventKind::Write, Some(*loc), *order, v),
                        a,
                        Some(val),
                    );
                    pc += 1;
                }
                Instr::Fence { order } => {
                    run.events
                        .push(OEvent::new(EventKind::Fence, None, *order, 0));
                    pc += 1;
                }
                Instr::Spawn { func, arg, dst } => {
                    assert!(self.is_main, "oracle: only main may spawn threads");
                    let Ok(a) = arg.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    let child = run.spawns.len() + 1;
                    run.spawns.push((*func, a, child));
                    run.events.push(OEvent::new(
                        EventKind::Spawn { child },
                        None,
                        MemOrder::NonAtomic,
                        0,
                    ));
                    if let Some(d) = dst {
                        regs[*d] = child as i64;
                        run.reg_deps[*d] = BTreeSet::new();
                    }
                    pc += 1;
                }
                Instr::Join { tid, dst } => {
                    assert!(self.is_main, "oracle: only main may join threads");
                    assert!(dst.is_none(), "oracle: join results are not modelled");
                    let Ok(c) = tid.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    if c <= 0 || c as usize > run.spawns.len() {
                        // Not a thread handle, or main's own (a handle read from memory may
                        // be anything): undefined behaviour.
                        return self.stop(run, End::Failed);
                    }
                    let c = c as usize;
                    // The child did not finish normally (failed, blocked, cut at the loop
                    // bound or stuck itself): this thread waits forever.
                    let mut stuck = run.clone();
                    stuck.joins.push((c, false));
                    self.stop(stuck, End::Stuck);
                    // The child finished.
                    run.joins.push((c, true));
                    run.events.push(OEvent::new(
                        EventKind::Join { child: c },
                        None,
                        MemOrder::NonAtomic,
                        0,
                    ));
                    pc += 1;
                }
            }
        }
    }
}

fn thread_runs(
    prog: &Program,
    func: FuncId,
    arg: Option<i64>,
    tid: usize,
    dom: &Dom,
    unroll: u32,
    zne: bool,
) -> Vec<Run> {
    let f = &prog.functions[func];
    let mut regs = vec![0i64; f.reg_names.len()];
    if let (Some(p), Some(a)) = (f.param, arg) {
        regs[p] = a;
    }
    let mut w = Walker {
        prog,
        func,
        is_main: tid == 0,
        tid,
        dom,
        unroll,
        out: Vec::new(),
        spin: SpinInfo::new(prog),
        zne,
    };
    let run = Run {
        events: Vec::new(),
        end: End::Finished,
        joins: Vec::new(),
        spawns: Vec::new(),
        reg_deps: vec![BTreeSet::new(); f.reg_names.len()],
        ctrl: BTreeSet::new(),
        allocs: Vec::new(),
        needs: Vec::new(),
        fail: None,
        spin_from: None,
        repeat_from: None,
        zne_chain: Vec::new(),
        zne_not: Vec::new(),
    };
    w.go(0, regs, run, 0, Loops::default());
    w.out
}

struct AllRuns {
    main: Vec<Run>,
    children: HashMap<(FuncId, i64, usize), Vec<Run>>,
}

/// The most write events an execution built from these runs can have: main's writes plus, for
/// each thread it spawns, the most writes of any run of that thread.
fn max_writes(main: &[Run], children: &HashMap<(FuncId, i64, usize), Vec<Run>>) -> usize {
    let writes = |r: &Run| {
        r.events
            .iter()
            .filter(|e| e.kind == EventKind::Write)
            .count()
    };
    main.iter()
        .map(|m| {
            writes(m)
                + m.spawns
                    .iter()
                    .map(|s| children[s].iter().map(writes).max().unwrap_or(0))
                    .sum::<usize>()
        })
        .max()
        .unwrap_or(0)
}

/// Runs of every thread, with read values from the per-location value sets.
///
/// Round k's sets hold every value a write can have when its chain of value dependencies
/// (po ∪ rf paths between writes) has length ≤ k. The rounds stop at a fixpoint, or once k is at
/// least `max_writes` of round k's runs: a dependency chain visits distinct writes (po ∪ rf is
/// acyclic), and an execution with more than k writes would have a po ∪ rf-prefix with k + 1
/// writes all of whose reads see round-k values, i.e. prefixes of round-k runs with more than
/// `max_writes` ≥ k + 1 writes in total. E.g. `x = x + 1` or a fetch_add never reaches a
/// fixpoint, but its real values have short chains.
fn all_runs(prog: &Program, unroll: u32, zne: bool) -> AllRuns {
    let mut dom: Dom = prog
        .globals
        .iter()
        .enumerate()
        .map(|(l, g)| (l, BTreeSet::from([g.init])))
        .collect();
    for round in 0..=40 {
        let main = thread_runs(prog, prog.main, None, 0, &dom, unroll, zne);
        let mut children = HashMap::new();
        for r in &main {
            for &(f, a, tid) in &r.spawns {
                children
                    .entry((f, a, tid))
                    .or_insert_with(|| thread_runs(prog, f, Some(a), tid, &dom, unroll, zne));
            }
        }
        let mut next = dom.clone();
        for r in main.iter().chain(children.values().flatten()) {
            for e in &r.events {
                if e.kind == EventKind::Write {
                    next.entry(e.loc.unwrap()).or_default().insert(e.value);
                }
            }
        }
        if next == dom || round >= max_writes(&main, &children) || over_budget() {
            return AllRuns { main, children };
        }
        dom = next;
    }
    panic!("oracle: the value sets do not converge");
}

// ---------------------------------------------------------------------------------------------
// Graph enumeration.
// ---------------------------------------------------------------------------------------------

/// All permutations of `v`.
fn permutations(v: &[usize]) -> Vec<Vec<usize>> {
    if v.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..v.len() {
        let mut rest = v.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// Advances an odometer with the given digit bases; false when it wrapped around.
fn advance(digits: &mut [usize], bases: &[usize]) -> bool {
    for i in 0..digits.len() {
        digits[i] += 1;
        if digits[i] < bases[i] {
            return true;
        }
        digits[i] = 0;
    }
    false
}

/// A memory bug of the oracle's (only its kind and message are compared).
fn memory_bug(thread: usize, e: MemoryError, message: String) -> Bug {
    Bug {
        kind: BugKind::Memory(e),
        stmt: 0,
        thread,
        message,
        witness: Vec::new(),
        race: None,
        related: None,
    }
}

/// The graph skeleton (events and threads, no rf/mo yet) of one combination of runs, whose
/// objects' cells get the locations after the globals (thread by thread, object by object),
/// each with an empty mo, and an entry in `dynamic` whose event is its allocation write; the
/// memory errors threads failed on are its bugs.
fn skeleton(prog: &Program, main: &Run, kids: &[&Run]) -> ExecutionGraph {
    let init: Vec<i64> = prog.globals.iter().map(|g| g.init).collect();
    let mut g = ExecutionGraph::with_init(&init);
    let funcs: Vec<FuncId> = std::iter::once(prog.main)
        .chain(main.spawns.iter().map(|s| s.0))
        .collect();
    let runs: Vec<&Run> = std::iter::once(main).chain(kids.iter().copied()).collect();
    // Object (thread, k) → its first location in the graph.
    let mut firsts: Vec<Vec<usize>> = Vec::new();
    for r in &runs {
        let mut fs = Vec::new();
        for o in &r.allocs {
            fs.push(g.mo.len());
            for offset in 0..o.len {
                g.mo.push(Vec::new());
                g.dynamic.push(DynLoc {
                    layout: o.layout,
                    cell: offset % prog.layouts[o.layout].cells.len(),
                    offset,
                    len: o.len,
                    event: usize::MAX,
                });
            }
        }
        firsts.push(fs);
    }
    let compact = |l: usize| -> usize {
        match dyn_decode(l as i64) {
            None => l,
            Some((t, k, off)) => {
                let o = &runs[t].allocs[k];
                assert!(off < o.len, "oracle: an access to no cell in a graph");
                firsts[t][k] + off
            }
        }
    };
    for (t, r) in runs.iter().enumerate() {
        let bug = r.fail.as_ref().map(|f| match f {
            Fail::Memory(e, m) => (*e, m.clone()),
            Fail::RedZone(u, k) => {
                let msg = red_zone_message(prog, &runs[*u].allocs[*k]);
                (MemoryError::OutOfBounds, msg)
            }
            Fail::BadFree(by, u, k, off) => {
                let msg = bad_free(prog, runs[*u].allocs.get(*k), *off, *by)
                    .expect("a failed free assumed invalid");
                (MemoryError::InvalidFree, msg)
            }
        });
        if let Some((e, m)) = bug {
            g.bugs.push(memory_bug(t, e, m));
        }
    }
    for (t, r) in runs.iter().enumerate() {
        g.threads.push(ThreadTrace {
            func: funcs[t],
            spawned_by: None,
            events: Vec::new(),
            slots: Vec::new(),
            end: Some(match r.end {
                End::Finished => ThreadEnd::Finished,
                End::Failed => ThreadEnd::Failed(0),
                End::Stuck => ThreadEnd::Stuck,
                End::Blocked => ThreadEnd::Blocked,
                End::Bounded => ThreadEnd::Bounded,
                End::BoundAccepted => ThreadEnd::BoundAccepted,
                End::Exited => ThreadEnd::Exited,
                End::Starved => unreachable!("a starved run in a graph"),
            }),
        });
    }
    let mut spawn_ev = vec![None; runs.len()];
    for (t, r) in runs.iter().enumerate() {
        for e in &r.events {
            let prev = g.threads[t].events.last().copied();
            // Run indices → graph ids (earlier events of this thread are already pushed).
            let ids = |s: &BTreeSet<usize>| -> Vec<usize> {
                s.iter().map(|&i| g.threads[t].events[i]).collect()
            };
            let deps = fensyn::checker::deps::Deps {
                addr: ids(&e.addr),
                data: ids(&e.data),
                ctrl: ids(&e.ctrl),
            };
            let kind = match e.kind {
                EventKind::Free { first, .. } => match dyn_decode(first as i64) {
                    Some((u, k, _)) if runs.get(u).is_some_and(|r| k < r.allocs.len()) => {
                        EventKind::Free {
                            first: firsts[u][k],
                            len: runs[u].allocs[k].len,
                        }
                    }
                    _ => EventKind::Free { first, len: 0 },
                },
                k => k,
            };
            let id = g.push(Event {
                thread: t,
                kind,
                loc: e.loc.map(compact),
                order: e.order,
                value: e.value,
                stmt: e.stmt,
                slot: None,
                deps: (!deps.is_empty()).then(|| std::sync::Arc::new(deps)),
            });
            if let EventKind::Spawn { child } = e.kind {
                spawn_ev[child] = Some(id);
            }
            if e.rmw {
                g.rmw
                    .push((prev.expect("an RMW write without its read"), id));
            }
            if e.alloc {
                let l = g.events[id].loc.unwrap();
                g.dynamic[l - g.inits].event = id;
            }
        }
    }
    for (t, s) in spawn_ev.into_iter().enumerate() {
        g.threads[t].spawned_by = s;
    }
    g
}

/// Every consistent execution of `prog` under `model`: canonical key → (buggy, graph).
fn oracle(prog: &Program, model: Model) -> BTreeMap<String, (bool, ExecutionGraph)> {
    oracle_with(prog, model, DEFAULT_UNROLL)
}

/// The graphs the graph explorer visits: every consistent graph but those with a **stale
/// wait** (lock-aware exploration, `checker/explore/wait.rs`): a thread blocked whose last
/// event is a read of a `Wait` cell (a lock word, a barrier round; not an RMW's read) that
/// did not read the cell's mo-last write. Such a graph is neither complete nor a deadlock;
/// the explorer does not visit it unless the program can call `exit` (then it may be a
/// complete execution). The coarse equivalences (`--equiv rf|value`) visit every graph:
/// [`oracle_unfiltered`].
fn oracle_with(
    prog: &Program,
    model: Model,
    unroll: u32,
) -> BTreeMap<String, (bool, ExecutionGraph)> {
    let mut out = oracle_unfiltered(prog, model, unroll);
    let exits = prog
        .functions
        .iter()
        .any(|f| f.body.iter().any(|i| matches!(i, Instr::Exit)));
    if !exits {
        out.retain(|_, (_, g)| !has_stale_wait(prog, g));
    }
    out
}

/// Whether a blocked thread of `g` waits on an older value of a `Wait` cell (see
/// [`oracle_with`]).
fn has_stale_wait(prog: &Program, g: &ExecutionGraph) -> bool {
    let wait = |l: usize| {
        let cell = match l.checked_sub(g.inits) {
            None => prog.globals.get(l),
            Some(i) => g
                .dynamic
                .get(i)
                .and_then(|x| prog.layouts.get(x.layout)?.cells.get(x.cell)),
        };
        cell.and_then(|c| c.sync.as_ref())
            .is_some_and(|c| c.role == SyncRole::Wait)
    };
    g.threads.iter().any(|tr| {
        tr.end == Some(ThreadEnd::Blocked)
            && tr.events.last().is_some_and(|&r| {
                g.events[r].kind == EventKind::Read
                    && g.rmw.iter().all(|&(rr, _)| rr != r)
                    && g.events[r].loc.is_some_and(wait)
                    && !reads_mo_last(g, r)
            })
    })
}

/// Every consistent graph of `prog` (complete, blocked or cut at the bound), by key.
fn oracle_unfiltered(
    prog: &Program,
    model: Model,
    unroll: u32,
) -> BTreeMap<String, (bool, ExecutionGraph)> {
    let runs = all_runs(prog, unroll, matches!(model, Model::Rc11 | Model::Sc));
    let spin = SpinInfo::new(prog);
    let mut out: BTreeMap<String, (bool, ExecutionGraph)> = BTreeMap::new();
    for main in runs.main.iter().filter(|r| r.end != End::Starved) {
        // Candidate runs of each child, agreeing with main's joins.
        let mut cands: Vec<Vec<&Run>> = Vec::new();
        for (i, spawn) in main.spawns.iter().enumerate() {
            let c = i + 1;
            let list: Vec<&Run> = runs.children[spawn]
                .iter()
                .filter(|r| {
                    r.end != End::Starved
                        && main
                            .joins
                            .iter()
                            .filter(|j| j.0 == c)
                            .all(|&(_, fin)| (r.end == End::Finished) == fin)
                })
                .collect();
            cands.push(list);
        }
        if cands.iter().any(|l| l.is_empty()) {
            continue;
        }
        let bases: Vec<usize> = cands.iter().map(|l| l.len()).collect();
        let mut digits = vec![0; bases.len()];
        loop {
            if !spend(1) {
                return out;
            }
            let kids: Vec<&Run> = digits
                .iter()
                .enumerate()
                .map(|(i, &d)| cands[i][d])
                .collect();
            // What each run assumes of the others' objects must hold.
            let runs = || std::iter::once(main).chain(kids.iter().copied());
            let all: Vec<&Run> = runs().collect();
            let needs_hold = runs().flat_map(|r| &r.needs).all(|&(t, k, off, need)| {
                let obj = all.get(t).and_then(|r| r.allocs.get(k));
                need_holds(prog, obj, off, need)
            });
            // Cheap pre-filter: every value read must be written by the combination (or be the
            // initial value); `graphs_of_combination` would find no rf source otherwise.
            let written: BTreeSet<(usize, i64)> = runs()
                .flat_map(|r| &r.events)
                .filter(|e| e.kind == EventKind::Write)
                .map(|e| (e.loc.unwrap(), e.value))
                .chain(prog.globals.iter().enumerate().map(|(l, g)| (l, g.init)))
                .collect();
            if needs_hold
                && runs()
                    .flat_map(|r| &r.events)
                    .filter(|e| e.kind == EventKind::Read)
                    .all(|e| written.contains(&(e.loc.unwrap(), e.value)))
            {
                graphs_of_combination(prog, (model, &spin), main, &kids, &mut out);
            }
            if !advance(&mut digits, &bases) {
                break;
            }
        }
    }
    out
}

fn graphs_of_combination(
    prog: &Program,
    (model, spin): (Model, &SpinInfo),
    main: &Run,
    kids: &[&Run],
    out: &mut BTreeMap<String, (bool, ExecutionGraph)>,
) {
    let mut g = skeleton(prog, main, kids);
    let spin_from: Vec<Option<usize>> = std::iter::once(main)
        .chain(kids.iter().copied())
        .map(|r| r.spin_from)
        .collect();
    let repeat_from: Vec<Option<usize>> = std::iter::once(main)
        .chain(kids.iter().copied())
        .map(|r| r.repeat_from)
        .collect();
    // Which statements' read values matter (asked for a run that repeats).
    let used = |s: usize| spin.read_value_used(s);
    let n = g.events.len();
    // BRUTEFORCE_NO_PREFILTER=1 checks the RMW pre-filter below against the axioms.
    let no_prefilter = std::env::var_os("BRUTEFORCE_NO_PREFILTER").is_some();
    let po = program_order(&g);
    let nlocs = g.mo.len();
    // Every location's mo-first write: a global's init, an allocated cell's allocation write
    // (the cell does not exist before it).
    let head: Vec<usize> = (0..nlocs)
        .map(|l| match l.checked_sub(g.inits) {
            None => l,
            Some(i) => g.dynamic[i].event,
        })
        .collect();
    let reads: Vec<usize> = (0..n).filter(|&e| is_read(&g.events[e])).collect();
    let sources: Vec<Vec<usize>> = reads
        .iter()
        .map(|&r| {
            (0..n)
                .filter(|&w| {
                    is_write(&g.events[w])
                        && g.events[w].loc == g.events[r].loc
                        && g.events[w].value == g.events[r].value
                })
                .collect()
        })
        .collect();
    if sources.iter().any(|s| s.is_empty()) {
        return;
    }
    let writes: Vec<Vec<usize>> = (0..nlocs)
        .map(|l| {
            (0..n)
                .filter(|&w| g.events[w].kind == EventKind::Write && g.events[w].loc == Some(l))
                .collect()
        })
        .collect();
    // The candidates: every rf choice times every mo order (writes! per location).
    let candidates = sources
        .iter()
        .map(|s| s.len() as u64)
        .chain(
            writes
                .iter()
                .map(|ws| (1..=ws.len() as u64).fold(1u64, |a, i| a.saturating_mul(i))),
        )
        .fold(1u64, |a, k| a.saturating_mul(k));
    if !spend(candidates) {
        return;
    }
    let mo_perms: Vec<Vec<Vec<usize>>> = writes
        .iter()
        .enumerate()
        .map(|(l, ws)| {
            let ws: Vec<usize> = ws.iter().copied().filter(|&w| w != head[l]).collect();
            permutations(&ws)
        })
        .collect();
    let rf_bases: Vec<usize> = sources.iter().map(|s| s.len()).collect();
    let mo_bases: Vec<usize> = mo_perms.iter().map(|p| p.len()).collect();
    let mut rf_digits = vec![0; reads.len()];
    loop {
        for (i, &r) in reads.iter().enumerate() {
            g.rf[r] = Some(sources[i][rf_digits[i]]);
        }
        // Cheap pre-filter: po ∪ rf must be acyclic under both models.
        let mut porf = po.clone();
        for &r in &reads {
            porf.add(g.rf[r].unwrap(), r);
        }
        if porf.acyclic() && zne_chains_hold(&g, main, kids) {
            let mut mo_digits = vec![0; nlocs];
            loop {
                for l in 0..nlocs {
                    let mut ws = vec![head[l]];
                    ws.extend(&mo_perms[l][mo_digits[l]]);
                    g.mo[l] = ws;
                }
                // Cheap pre-filter: an RMW's write must immediately follow its read's source in
                // mo. Otherwise either a write lies between them (atomicity fails) or the RMW
                // write is mo-before its source, and then `r po w ; w mo src ; src rf r` is a
                // cycle that both models reject (RC11 coherence: hb ; eco; SC: po ∪ rf ∪ mo).
                let immediate = g.rmw.iter().all(|&(r, w)| {
                    let ws = &g.mo[g.events[w].loc.unwrap()];
                    let src = g.rf[r].unwrap();
                    let i = ws.iter().position(|&x| x == src).unwrap();
                    ws.get(i + 1) == Some(&w)
                });
                let d = if immediate || no_prefilter {
                    Some(derive(&g, &po, model))
                } else {
                    None
                };
                if let Some(d) = d.filter(|d| violation(model, &g, d).is_none()) {
                    assert!(
                        immediate,
                        "oracle: the RMW pre-filter is unsound:\n{}",
                        g.canonical_key()
                    );
                    let roles: Vec<Option<SyncRole>> = prog
                        .globals
                        .iter()
                        .chain(
                            g.dynamic
                                .iter()
                                .map(|x| &prog.layouts[x.layout].cells[x.cell]),
                        )
                        .map(|x| x.sync.as_ref().map(|c| c.role))
                        .collect();
                    // The hardware models run the mapped program: no data races.
                    let hardware = matches!(model, Model::Tso | Model::Pso | Model::Armv8);
                    let mut g2 = g.clone();
                    g2.bugs.extend(memory_bugs(prog, &g, &d, hardware));
                    let buggy = !failed_threads(&g).is_empty()
                        || (!hardware && !races(&g, &d).is_empty())
                        || !deadlocked_threads(&g, &roles).is_empty()
                        || (LIVENESS.with(|l| l.get())
                            && !looping_threads(&g, (&spin_from, &repeat_from), &roles, &used)
                                .is_empty())
                        || !g2.bugs.is_empty();
                    let key = sym_key(&g);
                    if let Some((b, g0)) = out.get(&key) {
                        assert_eq!(*b, buggy, "oracle produced one key twice:\n{key}");
                        assert_eq!(
                            thread_values(g0),
                            thread_values(&g),
                            "oracle produced one key with other values:\n{key}"
                        );
                    }
                    out.insert(key, (buggy, g2));
                }
                if !advance(&mut mo_digits, &mo_bases) {
                    break;
                }
            }
        }
        if !advance(&mut rf_digits, &rf_bases) {
            break;
        }
    }
}

/// Whether the graph's rf agrees with what its runs assumed of zero-net-effect passes whose
/// RMWs chain (`Run::zne_chain`, `Run::zne_not`): a run blocked after such a pass needs every
/// RMW of the pass to read the one before it on its location, and a run that went on after
/// one needs some of them not to.
fn zne_chains_hold(g: &ExecutionGraph, main: &Run, kids: &[&Run]) -> bool {
    std::iter::once(main)
        .chain(kids.iter().copied())
        .enumerate()
        .all(|(t, run)| {
            let ids = &g.threads[t].events;
            let edge = |&(r, w): &(usize, usize)| g.rf[ids[r]] == Some(ids[w]);
            run.zne_chain.iter().all(edge) && run.zne_not.iter().all(|c| !c.iter().all(edge))
        })
}

/// The memory errors of a complete consistent graph besides the threads' own failures (the
/// rules of issue 20 and docs/supported.md, not the explorer's code): an access to a cell of
/// an object (not the allocation's own write) hb-after the end of its lifetime uses the object
/// after its end, and one
/// unordered with the end by hb races with it (`use-after-free` for a heap object,
/// `use-after-return` for a function's local one; not under the hardware models, which have
/// no C-level hb); every end of an object already ended (earlier in the graph's event order)
/// is a double free, under every model; a read of a cell of an indeterminate layout
/// (`malloc`ed memory, a C scalar local without initialiser; not a synchronisation cell,
/// which has misuse checks of its own) that reads its allocation write is uninitialised.
fn memory_bugs(prog: &Program, g: &ExecutionGraph, d: &Derived, hardware: bool) -> Vec<Bug> {
    let inits = g.inits;
    let name = |l: usize| {
        let x = &g.dynamic[l - inits];
        cell_name(prog, x.layout, x.offset, x.len)
    };
    let mut bugs = Vec::new();
    let mut ended = BTreeSet::new();
    for (f, fev) in g.events.iter().enumerate() {
        let EventKind::Free { first, len } = fev.kind else {
            continue;
        };
        if len == 0 {
            continue; // the end of no object (a local object never has this)
        }
        let lay = &prog.layouts[g.dynamic[first - inits].layout];
        if !ended.insert(first) {
            let msg = format!("double free of `{}`", lay.name);
            bugs.push(memory_bug(fev.thread, MemoryError::DoubleFree, msg));
        }
        if hardware {
            continue;
        }
        let (after, end, kind) = if lay.kind.is_heap() {
            ("it was freed", "its free", MemoryError::UseAfterFree)
        } else {
            (
                "the end of its lifetime",
                "the end of its lifetime",
                MemoryError::UseAfterReturn,
            )
        };
        for (a, ev) in g.events.iter().enumerate() {
            let Some(l) = access_loc(ev).filter(|l| (first..first + len).contains(l)) else {
                continue;
            };
            if ev.thread == INIT_THREAD || a == f || d.hb.has(a, f) {
                continue;
            }
            if g.dynamic[l - inits].event == a {
                continue; // the allocation's own write: not an access of the program
            }
            let msg = if d.hb.has(f, a) {
                format!("access to `{}` after {after}", name(l))
            } else {
                format!("access to `{}` races with {end}", name(l))
            };
            bugs.push(memory_bug(ev.thread, kind, msg));
        }
    }
    for (r, ev) in g.events.iter().enumerate() {
        let Some(l) = ev.loc.filter(|&l| is_read(ev) && l >= inits) else {
            continue;
        };
        let x = &g.dynamic[l - inits];
        let lay = &prog.layouts[x.layout];
        if !lay.indeterminate || lay.cells[x.cell].sync.is_some() || g.rf[r] != Some(x.event) {
            continue;
        }
        let msg = match lay.kind {
            ObjectKind::Local => format!("read of `{}`, which was never initialised", name(l)),
            k => format!(
                "read of `{}`, which was never written since {} allocated it",
                name(l),
                match k {
                    ObjectKind::Malloc => "malloc",
                    ObjectKind::New => "new",
                    _ => "new[]",
                }
            ),
        };
        bugs.push(memory_bug(ev.thread, MemoryError::UninitialisedRead, msg));
    }
    bugs
}

/// Names for a graph's allocated locations that do not depend on the allocator's numbering:
/// cell `off` of the `k`-th object thread `t` allocated (in program order) is `(t, k, off)`.
/// Read from `ExecutionGraph::dynamic` (each cell's allocation write), so that it names the
/// explorer's graphs (numbered in the order its path allocated) and the oracle's alike.
struct LocNames {
    inits: usize,
    /// Per allocated location (`inits + i`): its name (`None`: not allocated — a red zone,
    /// or an allocation a revisit removed).
    cells: Vec<Option<(usize, usize, usize)>>,
    /// `(t, k)` → the object's first location.
    firsts: BTreeMap<(usize, usize), usize>,
}

impl LocNames {
    fn of(g: &ExecutionGraph) -> LocNames {
        let allocated = |x: &DynLoc| x.event != usize::MAX && x.offset < x.len;
        let mut starts = Vec::new();
        for (i, x) in g.dynamic.iter().enumerate() {
            if allocated(x) && x.offset == 0 {
                let t = g.events[x.event].thread;
                let pos = g.threads[t].events.iter().position(|&e| e == x.event);
                starts.push((
                    t,
                    pos.expect("an allocation write of its thread"),
                    g.inits + i,
                ));
            }
        }
        starts.sort_unstable();
        let mut firsts = BTreeMap::new();
        let mut by_first = HashMap::new();
        for (j, &(t, _, l)) in starts.iter().enumerate() {
            let k = starts[..j].iter().filter(|s| s.0 == t).count();
            firsts.insert((t, k), l);
            by_first.insert(l, (t, k));
        }
        let cells = g
            .dynamic
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let (t, k) = by_first.get(&(g.inits + i - x.offset))?;
                allocated(x).then_some((*t, *k, x.offset))
            })
            .collect();
        LocNames {
            inits: g.inits,
            cells,
            firsts,
        }
    }

    /// The location's name in keys, and a sort key for it.
    fn name(&self, l: usize) -> (String, (usize, usize, usize, usize)) {
        match l.checked_sub(self.inits) {
            None => (l.to_string(), (0, l, 0, 0)),
            Some(i) => match self.cells.get(i).copied().flatten() {
                Some((t, k, o)) => (format!("a{t}.{k}+{o}"), (1, t, k, o)),
                None => (format!("?{l}"), (2, l, 0, 0)),
            },
        }
    }
}

/// The oracle's key of a graph, for the oracle's and the explorer's graphs alike: like
/// `ExecutionGraph::canonical_key` (each thread's events, rf, mo), with allocated locations
/// named by `LocNames` and without the values read and written (a nondeterministic choice's
/// value stays): those follow from the rest, since a thread's run is determined by the values
/// it reads and its choices, and a read's value is its source's (`values_differ` compares
/// them, across the two numberings).
fn sym_key(g: &ExecutionGraph) -> String {
    let names = LocNames::of(g);
    let loc = |l: Option<usize>| names.name(l.unwrap_or(0)).0;
    let mut index = vec![0; g.events.len()];
    for tr in &g.threads {
        for (i, &e) in tr.events.iter().enumerate() {
            index[e] = i;
        }
    }
    let src = |e: usize| {
        let ev = &g.events[e];
        if ev.thread == INIT_THREAD {
            format!("init{}", loc(ev.loc))
        } else {
            format!("{}.{}", ev.thread, index[e])
        }
    };
    let mut s = String::new();
    for (t, tr) in g.threads.iter().enumerate() {
        let _ = write!(s, "T{t}[f{}]:", tr.func);
        for &e in &tr.events {
            let ev = &g.events[e];
            let o = ev.order.short();
            let _ = match ev.kind {
                EventKind::Read => write!(
                    s,
                    " R{o}({})<-{}",
                    loc(ev.loc),
                    g.rf[e].map(src).unwrap_or_default()
                ),
                EventKind::Write | EventKind::Init => write!(s, " W{o}({})", loc(ev.loc)),
                EventKind::Fence => write!(s, " F{o}"),
                EventKind::Spawn { child } => write!(s, " spawn{child}"),
                EventKind::Join { child } => write!(s, " join{child}"),
                EventKind::Choice => write!(s, " choose{}", ev.value),
                EventKind::Free { first, len } => write!(s, " free{}+{len}", loc(Some(first))),
            };
        }
        s.push('\n');
    }
    let mut mo: Vec<_> =
        g.mo.iter()
            .enumerate()
            .filter(|(_, ws)| !ws.is_empty())
            .map(|(l, ws)| {
                let (name, order) = names.name(l);
                let ws: Vec<String> = ws.iter().map(|&w| src(w)).collect();
                (order, format!("mo{name}: {}\n", ws.join(" ")))
            })
            .collect();
    mo.sort();
    for (_, line) in mo {
        s.push_str(&line);
    }
    s
}

/// Where the values of the oracle's graph `o` and the explorer's `e` with one key differ, if
/// they do: each value of `o` that is a pointer into an object (the oracle's numbering,
/// `dyn_loc`) must be the pointer to the same cell (or one past the end) of the same object
/// (thread, k) in `e`'s numbering; any other value must be equal.
fn values_differ(o: &ExecutionGraph, e: &ExecutionGraph) -> Option<String> {
    let names = LocNames::of(e);
    for (t, (to, te)) in o.threads.iter().zip(&e.threads).enumerate() {
        for (i, (&a, &b)) in to.events.iter().zip(&te.events).enumerate() {
            let (va, vb) = (o.events[a].value, e.events[b].value);
            let want = match dyn_decode(va.wrapping_sub(1)) {
                Some((u, k, off)) => names.firsts.get(&(u, k)).map(|f| (f + off) as i64 + 1),
                None => Some(va),
            };
            if want != Some(vb) {
                return Some(format!(
                    "thread {t}, event {i}: the oracle's value {va} ({:?}) is {want:?} in the \
                     explorer's numbering, the explorer's is {vb}",
                    dyn_decode(va.wrapping_sub(1))
                ));
            }
        }
    }
    None
}

/// Each thread's event values.
fn thread_values(g: &ExecutionGraph) -> Vec<Vec<i64>> {
    g.threads
        .iter()
        .map(|t| t.events.iter().map(|&e| g.events[e].value).collect())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The explorer side and the comparison.
// ---------------------------------------------------------------------------------------------

struct Explored {
    graphs: BTreeMap<String, (bool, ExecutionGraph)>,
    duplicates: Vec<String>,
    executions: u64,
    stats: Stats,
}

fn explorer(prog: &Program, model: Model) -> Explored {
    explorer_with(prog, model, DEFAULT_UNROLL)
}

fn explorer_with(prog: &Program, model: Model, unroll: u32) -> Explored {
    let mut graphs = BTreeMap::new();
    let mut duplicates = Vec::new();
    let limits = Limits {
        unroll: Some(unroll),
        spurious_cas: SPURIOUS_CAS.with(|s| s.get()),
        // Every step is also checked against the full axioms.
        verify_incremental: true,
        liveness: true,
        ..Limits::default()
    };
    let stats = explore(prog, model, limits, |g| {
        let key = sym_key(g);
        if graphs
            .insert(key.clone(), (!g.bugs.is_empty(), g.clone()))
            .is_some()
        {
            duplicates.push(key);
        }
        Control::Continue
    });
    assert!(
        stats.incomplete.is_none(),
        "explorer incomplete: {:?}",
        stats.incomplete
    );
    Explored {
        graphs,
        duplicates,
        executions: stats.executions,
        stats,
    }
}

/// The oracle's classification of complete graphs, as `Stats` counts them: (executions,
/// blocked, bounded, buggy, bounded at an accepted bound). Bounded if a thread was cut at the
/// loop bound, else accepted if one was cut at a bound the source accepts, else blocked if a
/// thread blocked on a false assume, else a normal execution; buggy counts across them all.
fn classify_all<'a>(graphs: impl Iterator<Item = &'a (bool, ExecutionGraph)>) -> [u64; 5] {
    let mut c = [0u64; 5];
    for (buggy, g) in graphs {
        let has = |e: ThreadEnd| g.threads.iter().any(|t| t.end == Some(e));
        if has(ThreadEnd::Bounded) {
            c[2] += 1;
        } else if has(ThreadEnd::BoundAccepted) {
            c[4] += 1;
        } else if has(ThreadEnd::Blocked) && !has(ThreadEnd::Exited) {
            c[1] += 1;
        } else {
            c[0] += 1;
        }
        if *buggy {
            c[3] += 1;
        }
    }
    c
}

/// [`classify_all`] without the accepted bounds: (executions, blocked, bounded, buggy).
fn classify<'a>(graphs: impl Iterator<Item = &'a (bool, ExecutionGraph)>) -> [u64; 4] {
    let [executions, blocked, bounded, buggy, _] = classify_all(graphs);
    [executions, blocked, bounded, buggy]
}

/// How each thread ended, with the bug index of a failure erased.
fn ends(g: &ExecutionGraph) -> Vec<Option<ThreadEnd>> {
    g.threads
        .iter()
        .map(|t| match t.end {
            Some(ThreadEnd::Failed(_)) => Some(ThreadEnd::Failed(0)),
            e => e,
        })
        .collect()
}

/// A graph's memory errors, as reports show them (detail and message), sorted.
fn memory_errors(g: &ExecutionGraph) -> Vec<(&'static str, String)> {
    let mut v: Vec<_> = g
        .bugs
        .iter()
        .filter_map(|b| Some((b.kind.detail()?, b.message.clone())))
        .collect();
    v.sort();
    v
}

fn describe_bugs_oracle(g: &ExecutionGraph, model: Model) -> String {
    let po = program_order(g);
    let d = derive(g, &po, model);
    format!(
        "failed threads {:?}, races {:?}",
        failed_threads(g),
        races(g, &d)
    )
}

/// Compares the oracle and the explorer on one program and model; returns the number of
/// executions, or a description of every disagreement.
fn compare(name: &str, prog: &Program, model: Model) -> Result<usize, String> {
    compare_with(name, prog, model, DEFAULT_UNROLL).map(|c| (c[0] + c[1] + c[2]) as usize)
}

/// As `compare`, with a loop bound; returns the oracle's `[executions, blocked, bounded, buggy]`.
fn compare_with(name: &str, prog: &Program, model: Model, unroll: u32) -> Result<[u64; 4], String> {
    let want = oracle_with(prog, model, unroll);
    let got = explorer_with(prog, model, unroll);
    let mut msg = String::new();
    if !got.duplicates.is_empty() {
        let _ = writeln!(
            msg,
            "{} graph(s) visited more than once, e.g.:\n{}",
            got.duplicates.len(),
            got.duplicates[0]
        );
    }
    let st = &got.stats;
    if st.visited() as usize != got.graphs.len() + got.duplicates.len() {
        let _ = writeln!(
            msg,
            "stats: executions {} + blocked {} + bounded {} but {} visits",
            st.executions,
            st.blocked,
            st.bounded,
            got.graphs.len() + got.duplicates.len()
        );
    }
    let want_counts = classify_all(want.values());
    let got_counts = [
        st.executions,
        st.blocked,
        st.bounded,
        st.buggy,
        st.bounded_accepted,
    ];
    if want_counts != got_counts {
        let _ = writeln!(
            msg,
            "stats [executions, blocked, bounded, buggy, accepted]: oracle {want_counts:?}, \
             explorer {got_counts:?}"
        );
    }
    let missing: Vec<&String> = want
        .keys()
        .filter(|k| !got.graphs.contains_key(*k))
        .collect();
    let extra: Vec<&String> = got
        .graphs
        .keys()
        .filter(|k| !want.contains_key(*k))
        .collect();
    for k in missing.iter().take(4) {
        let g = &want[*k].1;
        let _ = writeln!(
            msg,
            "MISSING from the explorer (oracle: consistent, buggy = {}; explorer's own axioms \
             say {:?}):\n{k}",
            want[*k].0,
            model.violation(g)
        );
    }
    for k in extra.iter().take(4) {
        let g = &got.graphs[*k].1;
        let _ = writeln!(
            msg,
            "EXTRA in the explorer (oracle's axioms on it: {:?}; thread ends {:?}):\n{k}",
            judge(model, g),
            g.threads.iter().map(|t| t.end).collect::<Vec<_>>()
        );
    }
    let mut mismatched = 0;
    for (k, (b, g)) in &want {
        if let Some((b2, g2)) = got.graphs.get(k) {
            if ends(g) != ends(g2) {
                mismatched += 1;
                if mismatched <= 4 {
                    let _ = writeln!(
                        msg,
                        "THREAD ENDS MISMATCH: oracle {:?}, explorer {:?}:\n{k}",
                        ends(g),
                        ends(g2)
                    );
                }
            }
            if b != b2 {
                mismatched += 1;
                if mismatched <= 4 {
                    let _ = writeln!(
                        msg,
                        "BUGGY MISMATCH: oracle {b} ({}), explorer {b2} ({:?}):\n{k}",
                        describe_bugs_oracle(g, model),
                        g2.bugs.iter().map(|b| &b.message).collect::<Vec<_>>()
                    );
                }
            }
            let (m, m2) = (memory_errors(g), memory_errors(g2));
            if m != m2 {
                mismatched += 1;
                if mismatched <= 4 {
                    let _ = writeln!(
                        msg,
                        "MEMORY ERRORS MISMATCH: oracle {m:?}, explorer {m2:?}:\n{k}"
                    );
                }
            }
            if let Some(d) = values_differ(g, g2) {
                mismatched += 1;
                if mismatched <= 4 {
                    let _ = writeln!(msg, "VALUES MISMATCH: {d}:\n{k}");
                }
            }
        }
    }
    if msg.is_empty() {
        let [executions, blocked, bounded, buggy, _] = want_counts;
        Ok([executions, blocked, bounded, buggy])
    } else {
        Err(format!(
            "== {name} under {model}: oracle {} graphs, explorer {} ({} missing, {} extra, {} \
             buggy/end mismatches)\n{msg}",
            want.len(),
            got.graphs.len(),
            missing.len(),
            extra.len(),
            mismatched
        ))
    }
}

fn parse(name: &str, src: &str) -> Program {
    let lang = fensyn::ir::Lang::from_path(std::path::Path::new(name));
    match fensyn::frontend::parse(name, src, lang) {
        Ok(p) => p,
        Err(d) => panic!("{name} does not parse: {d}"),
    }
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/litmus")
}

fn fixture(file: &str) -> Program {
    let path = fixture_dir().join(file);
    let src = std::fs::read_to_string(&path).unwrap();
    parse(&path.display().to_string(), &src)
}

/// Runs `compare` on each program under both models; fails with every disagreement at once.
fn check_all(progs: &[(String, Program)]) {
    let mut failures = Vec::new();
    for (name, prog) in progs {
        for model in [Model::Rc11, Model::Sc] {
            let t = Instant::now();
            match compare(name, prog, model) {
                Ok(n) => eprintln!("{name} [{model}]: {n} executions agree ({:?})", t.elapsed()),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests over the C front end.
// ---------------------------------------------------------------------------------------------

/// The C litmus fixtures, sorted.
fn litmus_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".c"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

#[test]
fn litmus_fixtures_agree_with_the_oracle() {
    let files = litmus_files();
    let progs: Vec<(String, Program)> = files.iter().map(|f| (f.clone(), fixture(f))).collect();
    check_all(&progs);
}

#[test]
fn published_counts() {
    for (file, n) in [
        ("sb.c", 4),
        ("sb_sc.c", 3),
        ("lb.c", 3),
        ("iriw.c", 16),
        ("2+2w.c", 4),
    ] {
        let prog = fixture(file);
        assert_eq!(
            oracle(&prog, Model::Rc11).len(),
            n,
            "oracle count of {file}"
        );
        let got = explorer(&prog, Model::Rc11);
        assert_eq!(got.executions, n as u64, "explorer count of {file}");
        assert_eq!(got.graphs.len(), n, "explorer distinct graphs of {file}");
    }
}

/// GenMC's published litmus counts under rc11 / sc (its test suite): SB 4/3, 2+2W 4/3, LB 3/3,
/// IRIW with seq_cst writes and acquire reads 16/15, and MP with release/acquire 3/3; from the
/// explorer and from the oracle, under both models (and c11, which agrees with rc11 here).
#[test]
fn published_counts_under_every_model() {
    let file = |f: &str| std::fs::read_to_string(fixture_dir().join(f)).unwrap();
    let iriw_sc_acq = file("iriw.c")
        .replace(
            "atomic_store_explicit(&x, 1, memory_order_relaxed)",
            "atomic_store_explicit(&x, 1, memory_order_seq_cst)",
        )
        .replace(
            "atomic_store_explicit(&y, 1, memory_order_relaxed)",
            "atomic_store_explicit(&y, 1, memory_order_seq_cst)",
        )
        .replace("memory_order_relaxed", "memory_order_acquire");
    assert!(!iriw_sc_acq.contains("memory_order_relaxed"));
    let cases: Vec<(&str, String, u64, u64)> = vec![
        ("sb", file("sb.c"), 4, 3),
        ("2+2w", file("2+2w.c"), 4, 3),
        ("lb", file("lb.c"), 3, 3),
        ("iriw sc writes, acq reads", iriw_sc_acq, 16, 15),
        ("mp rel/acq", file("mp_relacq.c"), 3, 3),
    ];
    for (name, src, rc11, sc) in cases {
        let prog = fensyn::frontend::parse_c(name, &src).unwrap();
        for (model, want) in [(Model::Rc11, rc11), (Model::C11, rc11), (Model::Sc, sc)] {
            let got = explorer(&prog, model);
            assert_eq!(got.executions, want, "explorer: {name} under {model}");
            assert_eq!(
                oracle(&prog, model).len() as u64,
                want,
                "oracle: {name} under {model}"
            );
        }
    }
}

/// Textbook outcomes (execution counts) of litmus variants, from the oracle and the explorer.
#[test]
fn known_litmus_counts() {
    let inline = |name: &str| {
        inline_programs()
            .into_iter()
            .find(|p| p.0 == name)
            .unwrap()
            .1
    };
    let file = |f: &str| std::fs::read_to_string(fixture_dir().join(f)).unwrap();
    let cases: Vec<(&str, String, Model, usize)> = vec![
        // A release fence before the flag and an acquire fence after it synchronise.
        (
            "mp rel/acq fences",
            mp_fences("release", "acquire"),
            Model::Rc11,
            3,
        ),
        (
            "mp acq_rel fences",
            mp_fences("acq_rel", "acq_rel"),
            Model::Rc11,
            3,
        ),
        // Fences on the wrong sides do not.
        (
            "mp acq/rel fences",
            mp_fences("acquire", "release"),
            Model::Rc11,
            4,
        ),
        // SB needs a seq_cst fence on both sides (psc_F).
        (
            "sb sc/sc fences",
            sb_fences("seq_cst", "seq_cst"),
            Model::Rc11,
            3,
        ),
        (
            "sb sc/rel fences",
            sb_fences("seq_cst", "release"),
            Model::Rc11,
            4,
        ),
        (
            "sb acq_rel fences",
            sb_fences("acq_rel", "acq_rel"),
            Model::Rc11,
            4,
        ),
        // RC11 allows SB with seq_cst stores and relaxed loads.
        (
            "sb sc stores, rlx loads",
            sb_orders("seq_cst", "relaxed"),
            Model::Rc11,
            4,
        ),
        (
            "sb rel/acq",
            sb_orders("release", "acquire"),
            Model::Rc11,
            4,
        ),
        (
            "iriw + sc fences",
            inline("iriw_sc_fences"),
            Model::Rc11,
            15,
        ),
        ("rwc + sc fences", inline("rwc_sc_fences"), Model::Rc11, 7),
        ("lb with three threads", inline("lb3_cycle"), Model::Rc11, 7),
        ("wrc relaxed", file("wrc.c"), Model::Rc11, 8),
        ("wrc rel/acq", inline("wrc_relacq"), Model::Rc11, 7),
        ("sb under sc", file("sb.c"), Model::Sc, 3),
        ("iriw under sc", file("iriw.c"), Model::Sc, 15),
        ("2+2w under sc", file("2+2w.c"), Model::Sc, 3),
        ("mp under sc", file("mp.c"), Model::Sc, 3),
    ];
    for (name, src, model, n) in cases {
        let prog = parse(&format!("{name}.c"), &src);
        assert_eq!(
            oracle(&prog, model).len(),
            n,
            "oracle count of {name} under {model}"
        );
        let got = explorer(&prog, model);
        assert_eq!(
            got.executions, n as u64,
            "explorer count of {name} under {model}"
        );
    }
}

/// Release sequences follow each model's rule (docs/memory-models.md §1): C++20's — only
/// RMWs continue one — under rc11 and for sc's data races, the RC11 paper's `po|loc` one under
/// c11. Counts derived by hand (see the fixtures' comments): in `release_seq_store.c` T2's
/// acquire load reads y = 0, 1 or 2; after reading 2 its relaxed load of x reads 1, or, when
/// nothing synchronises (rc11), also 0 — the one buggy execution. In the inline
/// `release_sequence` the same hand-off guards a plain `data`: under rc11 reading 2 lets the
/// plain read see 0 or 1, both racing; under sc it sees 1 but still races (no hb); under c11
/// it sees 1 without a race.
#[test]
fn release_sequences_follow_each_model_s_rule() {
    let inline = inline_programs()
        .into_iter()
        .find(|p| p.0 == "release_sequence")
        .unwrap()
        .1;
    let inline = parse("release_sequence.c", &inline);
    let cases: Vec<(&str, Program, Model, u64, u64)> = vec![
        ("store", fixture("release_seq_store.c"), Model::Rc11, 4, 1),
        ("store", fixture("release_seq_store.c"), Model::C11, 3, 0),
        ("store", fixture("release_seq_store.c"), Model::Sc, 3, 0),
        ("rmw", fixture("release_seq_rmw.c"), Model::Rc11, 3, 0),
        ("rmw", fixture("release_seq_rmw.c"), Model::C11, 3, 0),
        ("rmw", fixture("release_seq_rmw.c"), Model::Sc, 3, 0),
        ("plain data", inline.clone(), Model::Rc11, 4, 2),
        ("plain data", inline.clone(), Model::C11, 3, 0),
        ("plain data", inline, Model::Sc, 3, 1),
    ];
    for (name, prog, model, n, buggy) in cases {
        let o = classify(oracle(&prog, model).values());
        assert_eq!([o[0], o[3]], [n, buggy], "oracle: {name} under {model}");
        let st = explorer(&prog, model).stats;
        assert_eq!(
            [st.executions, st.buggy],
            [n, buggy],
            "explorer: {name} under {model}"
        );
    }
}

const HEADER: &str = "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n";

fn order_name(o: &str) -> String {
    format!("memory_order_{o}")
}

/// Message passing through relaxed accesses with a fence on each side.
fn mp_fences(fw: &str, fr: &str) -> String {
    format!(
        "{HEADER}atomic_int data;\natomic_int flag;\nint r1, r2;\n\
         void *writer(void *arg) {{\n\
             atomic_store_explicit(&data, 42, memory_order_relaxed);\n\
             atomic_thread_fence({fw});\n\
             atomic_store_explicit(&flag, 1, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         void *reader(void *arg) {{\n\
             r1 = atomic_load_explicit(&flag, memory_order_relaxed);\n\
             atomic_thread_fence({fr});\n\
             r2 = atomic_load_explicit(&data, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t w, r;\n\
             pthread_create(&w, NULL, writer, NULL);\n\
             pthread_create(&r, NULL, reader, NULL);\n\
             pthread_join(w, NULL);\n\
             pthread_join(r, NULL);\n\
             assert(!(r1 == 1 && r2 == 0));\n\
             return 0;\n}}\n",
        fw = order_name(fw),
        fr = order_name(fr)
    )
}

/// `atomic_thread_fence(o);`, or nothing for `none`.
fn fence_stmt(o: &str) -> String {
    if o == "none" {
        String::new()
    } else {
        format!("atomic_thread_fence({});", order_name(o))
    }
}

/// 2+2W with relaxed writes and a fence (or none) between each thread's two writes.
fn two_plus_two_w_fences(f1: &str, f2: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\n\
         void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
           {f1} atomic_store_explicit(&y, 2, memory_order_relaxed); return NULL; }}\n\
         void *t2(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
           {f2} atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
         int main(void) {{\n pthread_t p1, p2;\n\
         pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
         pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
         int fx = atomic_load_explicit(&x, memory_order_relaxed);\n\
         int fy = atomic_load_explicit(&y, memory_order_relaxed);\n\
         assert(!(fx == 1 && fy == 1));\n return 0;\n}}\n",
        f1 = fence_stmt(f1),
        f2 = fence_stmt(f2)
    )
}

/// The R shape with relaxed accesses and a fence (or none) in the middle of each thread:
/// T1 writes x then y, T2 writes y then reads x; forbidden with two seq_cst fences is
/// `y = 1` mo-before `y = 2` with T2 reading x = 0.
fn r_shape_fences(f1: &str, f2: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\nint a;\n\
         void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
           {f1} atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
         void *t2(void *arg) {{ atomic_store_explicit(&y, 2, memory_order_relaxed);\n\
           {f2} a = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
         int main(void) {{\n pthread_t p1, p2;\n\
         pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
         pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
         int fy = atomic_load_explicit(&y, memory_order_relaxed);\n\
         assert(!(fy == 2 && a == 0));\n return 0;\n}}\n",
        f1 = fence_stmt(f1),
        f2 = fence_stmt(f2)
    )
}

/// C++11's fence rules under c11 (§29.3p4–p7), against rc11, by hand: 2+2W has 4 executions
/// (two mo orders per location), one with both first writes mo-last; two seq_cst fences
/// forbid it by p7 (either order of the fences in `to` puts one location's writes in the
/// wrong mo order), one fence or acq_rel fences do not. The R shape (4 executions: two mo
/// orders of y times x = 0 or 1) loses `y = 1 mo-before y = 2 ∧ a = 0` with two seq_cst
/// fences: one order of the fences contradicts p6 (a must see x = 1), the other p7. IRIW
/// with seq_cst fences between the reads keeps its 16 executions under c11 (thesis, Figure
/// 6.14) and has 15 under rc11. Under rc11 psc_F gives the same answers for 2+2W and R.
#[test]
fn c11_fence_rules_agree_with_the_oracle() {
    let iriw = inline_programs()
        .into_iter()
        .find(|p| p.0 == "iriw_sc_fences")
        .unwrap()
        .1;
    let cases: Vec<(&str, String, u64, u64)> = vec![
        (
            "2+2w sc/sc",
            two_plus_two_w_fences("seq_cst", "seq_cst"),
            3,
            3,
        ),
        (
            "2+2w sc/none",
            two_plus_two_w_fences("seq_cst", "none"),
            4,
            4,
        ),
        (
            "2+2w acq_rel",
            two_plus_two_w_fences("acq_rel", "acq_rel"),
            4,
            4,
        ),
        ("r sc/sc", r_shape_fences("seq_cst", "seq_cst"), 3, 3),
        ("r none/sc", r_shape_fences("none", "seq_cst"), 4, 4),
        ("r sc/none", r_shape_fences("seq_cst", "none"), 4, 4),
        ("iriw sc fences", iriw, 16, 15),
    ];
    for (name, src, c11, rc11) in cases {
        let prog = parse(&format!("{name}.c"), &src);
        for (model, n) in [(Model::C11, c11), (Model::Rc11, rc11)] {
            assert_eq!(
                oracle(&prog, model).len() as u64,
                n,
                "oracle count of {name} under {model}"
            );
            if let Err(e) = compare(name, &prog, model) {
                panic!("{e}");
            }
        }
    }
}

/// Store buffering with a fence between each thread's store and load.
fn sb_fences(f1: &str, f2: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
         void *t1(void *arg) {{\n\
             atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
             atomic_thread_fence({f1});\n\
             a = atomic_load_explicit(&y, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         void *t2(void *arg) {{\n\
             atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
             atomic_thread_fence({f2});\n\
             b = atomic_load_explicit(&x, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t p1, p2;\n\
             pthread_create(&p1, NULL, t1, NULL);\n\
             pthread_create(&p2, NULL, t2, NULL);\n\
             pthread_join(p1, NULL);\n\
             pthread_join(p2, NULL);\n\
             assert(!(a == 0 && b == 0));\n\
             return 0;\n}}\n",
        f1 = order_name(f1),
        f2 = order_name(f2)
    )
}

/// Store buffering with the given store and load orders in both threads.
fn sb_orders(st: &str, ld: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
         void *t1(void *arg) {{\n\
             atomic_store_explicit(&x, 1, {st});\n\
             a = atomic_load_explicit(&y, {ld});\n\
             return NULL;\n}}\n\
         void *t2(void *arg) {{\n\
             atomic_store_explicit(&y, 1, memory_order_seq_cst);\n\
             b = atomic_load_explicit(&x, {ld});\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t p1, p2;\n\
             pthread_create(&p1, NULL, t1, NULL);\n\
             pthread_create(&p2, NULL, t2, NULL);\n\
             pthread_join(p1, NULL);\n\
             pthread_join(p2, NULL);\n\
             assert(!(a == 0 && b == 0));\n\
             return 0;\n}}\n",
        st = order_name(st),
        ld = order_name(ld)
    )
}

const FENCE_ORDERS: [&str; 4] = ["acquire", "release", "acq_rel", "seq_cst"];

#[test]
fn fences_of_every_order_agree_with_the_oracle() {
    let mut progs = Vec::new();
    for fw in FENCE_ORDERS {
        for fr in FENCE_ORDERS {
            progs.push((
                format!("mp_fence_{fw}_{fr}"),
                parse("mp.c", &mp_fences(fw, fr)),
            ));
            progs.push((
                format!("sb_fence_{fw}_{fr}"),
                parse("sb.c", &sb_fences(fw, fr)),
            ));
        }
    }
    for st in ["relaxed", "release", "seq_cst"] {
        for ld in ["relaxed", "acquire", "seq_cst"] {
            progs.push((format!("sb_{st}_{ld}"), parse("sb.c", &sb_orders(st, ld))));
        }
    }
    check_all(&progs);
}

/// psc across thread creation and joins: seq_cst events of `main` before the spawns and after
/// the joins, relaxed accesses around seq_cst fences in the children (RC11's psc is kept
/// incrementally, and a new event's po-prefix runs through spawns and joins).
fn spawn_join_psc(first: &str, fence: &str, last: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\natomic_int z;\nint a, b, c, d;\n\
         void *t1(void *arg) {{\n\
             atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
             atomic_thread_fence({fence});\n\
             a = atomic_load_explicit(&y, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         void *t2(void *arg) {{\n\
             atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
             atomic_thread_fence({fence});\n\
             b = atomic_load_explicit(&z, {last});\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t p1, p2;\n\
             atomic_store_explicit(&z, 1, {first});\n\
             pthread_create(&p1, NULL, t1, NULL);\n\
             pthread_create(&p2, NULL, t2, NULL);\n\
             atomic_store_explicit(&z, 2, {last});\n\
             pthread_join(p1, NULL);\n\
             atomic_thread_fence({fence});\n\
             c = atomic_load_explicit(&y, {last});\n\
             pthread_join(p2, NULL);\n\
             d = atomic_load_explicit(&x, {first});\n\
             assert(!(a == 0 && b == 1));\n\
             return 0;\n}}\n",
        first = order_name(first),
        fence = order_name(fence),
        last = order_name(last)
    )
}

#[test]
fn psc_through_spawns_and_joins_agrees_with_the_oracle() {
    let mut progs = Vec::new();
    for first in ["relaxed", "seq_cst"] {
        for fence in ["acq_rel", "seq_cst"] {
            for last in ["relaxed", "seq_cst"] {
                progs.push((
                    format!("spawn_join_psc_{first}_{fence}_{last}"),
                    parse("sj.c", &spawn_join_psc(first, fence, last)),
                ));
            }
        }
    }
    check_all(&progs);
}

/// Small programs exercising plain races, joins, three threads, `&&` and failures.
fn inline_programs() -> Vec<(&'static str, String)> {
    vec![
        (
            "plain_race",
            format!(
                "{HEADER}int x;\nint r;\n\
                 void *t1(void *arg) {{ x = 1; return NULL; }}\n\
                 void *t2(void *arg) {{ r = x; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "plain_ordered_by_join",
            format!(
                "{HEADER}int x = 5;\n\
                 void *t1(void *arg) {{ x = x + 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n x = 7;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n\
                 assert(x == 8);\n return 0;\n}}\n"
            ),
        ),
        (
            "plain_read_before_join",
            format!(
                "{HEADER}int x;\n\
                 void *t1(void *arg) {{ x = 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n int v = x;\n pthread_join(p1, NULL);\n\
                 assert(v == 0 || v == 1);\n return 0;\n}}\n"
            ),
        ),
        (
            "mp_plain_data_relacq",
            format!(
                "{HEADER}int data;\natomic_int flag;\nint r;\n\
                 void *w(void *arg) {{ data = 42; atomic_store_explicit(&flag, 1, memory_order_release); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   int f = atomic_load_explicit(&flag, memory_order_acquire);\n\
                   r = f && data == 42;\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, rd, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "mp_plain_data_relaxed",
            format!(
                "{HEADER}int data;\natomic_int flag;\nint r;\n\
                 void *w(void *arg) {{ data = 42; atomic_store_explicit(&flag, 1, memory_order_relaxed); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   int f = atomic_load_explicit(&flag, memory_order_relaxed);\n\
                   r = f && data == 42;\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, rd, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "and_with_loads",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\n\
                 void *t1(void *arg) {{\n\
                   atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_release);\n return NULL; }}\n\
                 void *t2(void *arg) {{\n\
                   assert(!(atomic_load_explicit(&y, memory_order_acquire) == 1 && \
                 atomic_load_explicit(&x, memory_order_relaxed) == 0));\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "three_writers_one_reader",
            format!(
                "{HEADER}atomic_int x;\nint a, b;\n\
                 void *w1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *w2(void *arg) {{ atomic_store_explicit(&x, 2, memory_order_release); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   a = atomic_load_explicit(&x, memory_order_acquire);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed);\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, w1, NULL);\n pthread_create(&p2, NULL, w2, NULL);\n\
                 pthread_create(&p3, NULL, rd, NULL);\n atomic_store_explicit(&x, 3, memory_order_seq_cst);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 int f = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 assert(f != 1 || a != 2);\n return 0;\n}}\n"
            ),
        ),
        (
            "wrc_relacq",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_acquire);\n\
                   atomic_store_explicit(&y, 1, memory_order_release); return NULL; }}\n\
                 void *t3(void *arg) {{ b = atomic_load_explicit(&y, memory_order_acquire);\n\
                   c = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 assert(!(a == 1 && b == 1 && c == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "release_sequence",
            format!(
                "{HEADER}atomic_int x;\nint data;\nint r;\n\
                 void *t1(void *arg) {{ data = 1;\n\
                   atomic_store_explicit(&x, 1, memory_order_release);\n\
                   atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_acquire);\n\
                   r = v == 2 && data == 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "failed_child_main_stuck",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\n\
                 void *t1(void *arg) {{ assert(atomic_load_explicit(&x, memory_order_relaxed) == 1);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   int v = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "seq_cst_by_default",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store(&x, 1); a = atomic_load(&y); return NULL; }}\n\
                 void *t2(void *arg) {{ y = 1; b = x; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 0 && b == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "sc_fence_and_sc_access",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_seq_cst);\n\
                   a = atomic_load_explicit(&y, memory_order_seq_cst); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 0 && b == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "iriw_sc_fences",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c, d;\n\
                 void *w1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *w2(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *r1(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 void *r2(void *arg) {{ c = atomic_load_explicit(&y, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   d = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3, p4;\n\
                 pthread_create(&p1, NULL, w1, NULL);\n pthread_create(&p2, NULL, w2, NULL);\n\
                 pthread_create(&p3, NULL, r1, NULL);\n pthread_create(&p4, NULL, r2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 pthread_join(p3, NULL);\n pthread_join(p4, NULL);\n\
                 assert(!(a == 1 && b == 0 && c == 1 && d == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "lb3_cycle",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\natomic_int z;\n\
                 void *t1(void *arg) {{ int a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int b = atomic_load_explicit(&y, memory_order_relaxed);\n\
                   atomic_store_explicit(&z, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t3(void *arg) {{ int c = atomic_load_explicit(&z, memory_order_relaxed);\n\
                   atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 return 0;\n}}\n"
            ),
        ),
        (
            "main_runs_alongside",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ a = atomic_load_explicit(&y, memory_order_acquire);\n\
                   atomic_store_explicit(&x, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 2, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 atomic_store_explicit(&y, 1, memory_order_release);\n\
                 int m = atomic_load_explicit(&x, memory_order_acquire);\n\
                 pthread_join(p2, NULL);\n int m2 = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n assert(!(m == 1 && a == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "spawn_after_write",
            format!(
                "{HEADER}int data;\natomic_int x;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int d = data;\n\
                   int v = atomic_load_explicit(&x, memory_order_relaxed);\n assert(d == 1); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n data = 1;\n\
                 pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p2, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "thread_without_events",
            format!(
                "{HEADER}atomic_int x;\n\
                 void *t1(void *arg) {{ int k = 3;\n assert(k == 3); return NULL; }}\n\
                 void *t2(void *arg) {{ int k = 4;\n assert(k == 3); return NULL; }}\n\
                 void *t3(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p3, NULL, t3, NULL);\n\
                 atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "or_and_conditional_with_loads",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{\n\
                   a = atomic_load_explicit(&x, memory_order_relaxed) || atomic_load_explicit(&y, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed) ? atomic_load_explicit(&x, memory_order_relaxed) : 5;\n\
                   return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n assert(b != 0);\n return 0;\n}}\n"
            ),
        ),
        (
            "rwc_sc_fences",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 void *t3(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   c = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 assert(!(a == 1 && b == 0 && c == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "w_rw_sc_mixed",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_seq_cst);\n\
                   atomic_store_explicit(&y, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 2, memory_order_seq_cst);\n\
                   atomic_thread_fence(memory_order_acq_rel);\n\
                   a = atomic_load_explicit(&x, memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_acquire); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 int fy = atomic_load_explicit(&y, memory_order_relaxed);\n return 0;\n}}\n"
            ),
        ),
        (
            "corr_same_thread",
            format!(
                "{HEADER}atomic_int x;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 int m = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 2 && b == 1));\n return 0;\n}}\n"
            ),
        ),
    ]
}

#[test]
fn inline_programs_agree_with_the_oracle() {
    let progs: Vec<(String, Program)> = inline_programs()
        .into_iter()
        .map(|(n, src)| (n.to_string(), parse(&format!("{n}.c"), &src)))
        .collect();
    check_all(&progs);
}

/// Small C programs whose objects are allocated at run time (`malloc`ed nodes published or
/// freed by another thread, local arrays, address-taken and uninitialised locals, compound
/// literals, locals escaping their function), each with the memory errors (details) the
/// oracle must find in some execution under rc11: the oracle and the explorer agree on them
/// under rc11 and sc, and the oracle finds exactly those errors.
fn allocating_programs() -> Vec<(&'static str, String, &'static [&'static str])> {
    let heap = "#include <stdlib.h>\nstruct node { int val; struct node *next; };\n\
                _Atomic(struct node *) top;\n";
    vec![
        (
            "malloc_publish_release",
            format!(
                "{HEADER}{heap}void *w(void *a) {{ struct node *n = malloc(sizeof *n); \
                 n->val = 42; n->next = NULL; \
                 atomic_store_explicit(&top, n, memory_order_release); return NULL; }}\n\
                 void *r(void *a) {{ struct node *n = \
                 atomic_load_explicit(&top, memory_order_acquire); \
                 if (n) assert(n->val == 42); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, r, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n free(top);\n return 0;\n}}\n"
            ),
            &[],
        ),
        (
            "malloc_publish_relaxed",
            format!(
                "{HEADER}{heap}void *w(void *a) {{ struct node *n = malloc(sizeof *n); \
                 n->val = 42; atomic_store_explicit(&top, n, memory_order_relaxed); \
                 return NULL; }}\n\
                 void *r(void *a) {{ struct node *n = \
                 atomic_load_explicit(&top, memory_order_relaxed); \
                 if (n) assert(n->val == 42); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, r, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n free(top);\n return 0;\n}}\n"
            ),
            &["uninitialised-read"],
        ),
        (
            "free_by_child_then_read",
            format!(
                "{HEADER}{heap}void *f(void *a) {{ free(a); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n int *b = calloc(2, sizeof(int));\n\
                 pthread_create(&p1, NULL, f, b);\n pthread_join(p1, NULL);\n\
                 return b[1];\n}}\n"
            ),
            &["use-after-free"],
        ),
        (
            "double_free_by_two_threads",
            format!(
                "{HEADER}{heap}void *f(void *a) {{ free(a); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n int *b = malloc(sizeof(int));\n\
                 pthread_create(&p1, NULL, f, b);\n pthread_create(&p2, NULL, f, b);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
            &["double-free"],
        ),
        (
            "local_array_passed_and_joined",
            format!(
                "{HEADER}void *t1(void *arg) {{ int *b = arg; b[0] = 1; b[1] = 2; return NULL; }}\n\
                 int main(void) {{\n int buf[2] = {{ 0 }};\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, buf);\n pthread_join(p1, NULL);\n\
                 assert(buf[0] + buf[1] == 3);\n return 0;\n}}\n"
            ),
            &[],
        ),
        (
            "local_array_read_before_join",
            format!(
                "{HEADER}void *t1(void *arg) {{ int *b = arg; b[1] = 2; return NULL; }}\n\
                 int main(void) {{\n int buf[2] = {{ 0 }};\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, buf);\n int v = buf[1];\n\
                 pthread_join(p1, NULL);\n return v;\n}}\n"
            ),
            &[],
        ),
        (
            "escaped_local_read_after_return",
            format!(
                "{HEADER}int *gp;\nint r;\n\
                 void *t1(void *arg) {{ int x = 1; gp = &x; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n\
                 int *q = gp;\n if (q) r = *q;\n return 0;\n}}\n"
            ),
            &["use-after-return"],
        ),
        (
            "escaped_local_races_with_return",
            format!(
                "{HEADER}_Atomic(int *) gp;\n\
                 void *t1(void *arg) {{ int x = 1; atomic_store(&gp, &x); return NULL; }}\n\
                 void *t2(void *arg) {{ int *q = atomic_load(&gp); if (q) *q = 2; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
            &["use-after-return"],
        ),
        (
            "uninitialised_local",
            format!(
                "{HEADER}void *t1(void *arg) {{ int *p = arg; *p = 1; return NULL; }}\n\
                 int main(void) {{\n int x;\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, &x);\n int v = x;\n\
                 pthread_join(p1, NULL);\n return v;\n}}\n"
            ),
            &["uninitialised-read"],
        ),
        (
            "compound_literal_shared",
            format!(
                "{HEADER}void *t1(void *arg) {{ int *p = arg; assert(p[1] == 4); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, (int[]){{ 3, 4 }});\n\
                 pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
            &[],
        ),
        (
            "local_index_out_of_bounds",
            format!(
                "{HEADER}atomic_int idx;\n\
                 void *t1(void *arg) {{ atomic_store(&idx, 2); return NULL; }}\n\
                 int main(void) {{\n int a[2] = {{ 0 }};\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n a[atomic_load(&idx)] = 1;\n\
                 pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
            &["out-of-bounds"],
        ),
        (
            "objects_per_thread",
            format!(
                "{HEADER}_Atomic(int *) gp;\n\
                 void *t1(void *arg) {{ int a[2] = {{ 5, 6 }}; atomic_store(&gp, &a[1]); \
                 int v = a[0]; return NULL; }}\n\
                 void *t2(void *arg) {{ int b[1] = {{ 7 }}; int *q = atomic_load(&gp); \
                 if (q) b[0] = *q; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
            &["use-after-return"],
        ),
    ]
}

#[test]
fn allocating_programs_agree_with_the_oracle() {
    let mut failures = Vec::new();
    for (name, src, details) in allocating_programs() {
        let prog = parse(&format!("{name}.c"), &src);
        assert!(
            prog.functions
                .iter()
                .any(|f| f.body.iter().any(|i| matches!(i, Instr::Alloc { .. }))),
            "{name} allocates nothing"
        );
        for model in [Model::Rc11, Model::Sc] {
            match compare(name, &prog, model) {
                Ok(n) => eprintln!("{name} [{model}]: {n} executions agree"),
                Err(e) => failures.push(e),
            }
            if model != Model::Rc11 {
                continue;
            }
            let found: BTreeSet<&str> = oracle(&prog, model)
                .values()
                .flat_map(|(_, g)| g.bugs.iter().filter_map(|b| b.kind.detail()))
                .collect();
            let want: BTreeSet<&str> = details.iter().copied().collect();
            if found != want {
                failures.push(format!(
                    "{name} [{model}]: memory errors {found:?}, not {want:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Hand-built IR (independent of the front end): thread arguments, loops, division by zero in a
// stored value.
// ---------------------------------------------------------------------------------------------

fn c(v: i64) -> Expr {
    Expr::Const(v)
}
fn r(i: usize) -> Expr {
    Expr::Reg(i)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn function(name: &str, nregs: usize, param: Option<usize>, body: Vec<Instr>) -> Function {
    Function {
        name: name.to_string(),
        span: Span::default(),
        param,
        result: None,
        reg_names: (0..nregs).map(|i| format!("r{i}")).collect(),
        stmt_of: vec![0; body.len()],
        body,
    }
}

fn ir_program(globals: &[(&str, bool, i64)], functions: Vec<Function>, main: FuncId) -> Program {
    ir_program_with(globals, functions, main, Vec::new())
}

/// As `ir_program`, with the layouts of the objects it allocates.
fn ir_program_with(
    globals: &[(&str, bool, i64)],
    functions: Vec<Function>,
    main: FuncId,
    layouts: Vec<Layout>,
) -> Program {
    let prog = Program {
        notes: vec![],
        globals: globals
            .iter()
            .map(|&(name, atomic, init)| Global {
                name: name.to_string(),
                atomic,
                init,
                sync: None,
                span: Span::default(),
            })
            .collect(),
        functions,
        main,
        stmts: vec![Stmt {
            func: main,
            kind: StmtKind::Local,
            span: Span::default(),
            order_span: None,
        }],
        slots: vec![Slot {
            func: main,
            place: SlotPlace::BlockEnd {
                after: None,
                close: Span::default(),
            },
        }],
        lang: fensyn::ir::Lang::C,
        defines: vec![],
        layouts,
        sources: Default::default(),
        loop_bounds: Default::default(),
    };
    prog.validate().unwrap();
    prog
}

fn ir_programs() -> Vec<(String, Program)> {
    use MemOrder::*;
    let load = |dst, loc, order| Instr::Load {
        dst,
        loc: Addr::Fixed(loc),
        order,
    };
    let store = |loc, val, order| Instr::Store {
        loc: Addr::Fixed(loc),
        val,
        order,
    };
    let spawn = |func, arg, dst| Instr::Spawn {
        func,
        arg,
        dst: Some(dst),
    };
    let join = |reg| Instr::Join {
        tid: r(reg),
        dst: None,
    };
    let mut out = Vec::new();
    // One function run by two threads, told apart by their argument; main reads after joins.
    {
        let worker = function(
            "worker",
            2,
            Some(0),
            vec![
                store(0, r(0), Relaxed),
                load(1, 1, Acquire),
                store(1, bin(BinOp::Add, r(0), c(10)), Release),
            ],
        );
        let main = function(
            "main",
            4,
            None,
            vec![
                spawn(0, c(1), 0),
                spawn(0, c(2), 1),
                join(0),
                join(1),
                load(2, 0, Relaxed),
                load(3, 1, SeqCst),
                Instr::Assert {
                    cond: bin(BinOp::Ne, r(2), c(0)),
                    text: "r2 != 0".into(),
                },
                Instr::Slot(0),
            ],
        );
        out.push((
            "ir_thread_args".to_string(),
            ir_program(&[("x", true, 0), ("y", true, 0)], vec![worker, main], 1),
        ));
    }
    // A bounded loop with a branch on a loaded value and a Return in the middle.
    {
        let looper = function(
            "looper",
            2,
            None,
            vec![
                // r0 = 0; while (r0 < 2) { r1 = load x; if (r1 == 5) return; store x r0+1; r0++ }
                Instr::Assign { dst: 0, val: c(0) },
                Instr::BranchIfZero {
                    cond: bin(BinOp::Lt, r(0), c(2)),
                    target: 9,
                },
                load(1, 0, Relaxed),
                Instr::BranchIfZero {
                    cond: bin(BinOp::Eq, r(1), c(5)),
                    target: 5,
                },
                Instr::Return,
                store(0, bin(BinOp::Add, r(0), c(1)), Relaxed),
                Instr::Assign {
                    dst: 0,
                    val: bin(BinOp::Add, r(0), c(1)),
                },
                Instr::Jump { target: 1 },
                Instr::Return,
                Instr::Fence { order: AcqRel },
            ],
        );
        let main = function(
            "main",
            2,
            None,
            vec![
                spawn(0, c(0), 0),
                store(0, c(5), Release),
                join(0),
                load(1, 0, NonAtomic),
            ],
        );
        out.push((
            "ir_loop".to_string(),
            ir_program(&[("x", false, 0)], vec![looper, main], 1),
        ));
    }
    // Division by zero inside a stored value: the thread must fail (IR: "Evaluation can fail
    // only by division by zero"; the thread stops).
    {
        let t = function(
            "t",
            1,
            None,
            vec![
                load(0, 0, Relaxed),
                store(1, bin(BinOp::Div, c(10), r(0)), Relaxed),
            ],
        );
        let main = function(
            "main",
            1,
            None,
            vec![spawn(0, c(0), 0), store(0, c(2), Relaxed)],
        );
        out.push((
            "ir_div_zero_in_store".to_string(),
            ir_program(&[("x", true, 0), ("y", true, 0)], vec![t, main], 1),
        ));
    }
    // Division by zero in a spawn argument (when main reads x = 0) and a join handle that is
    // not a thread (undefined behaviour).
    {
        let t = function("t", 1, Some(0), vec![store(0, r(0), Relaxed)]);
        let main = function(
            "main",
            3,
            None,
            vec![
                spawn(0, c(1), 0),
                load(1, 0, Relaxed),
                spawn(0, bin(BinOp::Div, c(6), r(1)), 2),
                join(2),
                Instr::Join {
                    tid: c(7),
                    dst: None,
                },
            ],
        );
        out.push((
            "ir_bad_spawn_and_join".to_string(),
            ir_program(&[("x", true, 0)], vec![t, main], 1),
        ));
    }
    out
}

#[test]
fn hand_built_ir_agrees_with_the_oracle() {
    let progs: Vec<(String, Program)> = ir_programs()
        .into_iter()
        .filter(|p| p.0 != "ir_div_zero_in_store")
        .collect();
    check_all(&progs);
}

/// Division by zero in the value of a store: the C statement `q = 10 / v;` lowers to
/// `Store { q, 10 / %t }`; when `v == 0` the thread must fail (undefined behaviour), as it does
/// when the division sits in an `Assign` (see `division_by_zero_in_a_local`). Main does not join
/// the thread, so this is independent of `a_failing_child_joined_by_main_is_visited`.
#[test]
fn division_by_zero_in_a_stored_value_fails_the_thread() {
    let src = format!(
        "{HEADER}atomic_int x;\nint q;\n\
         void *t1(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed);\n\
           q = 10 / v; return NULL; }}\n\
         int main(void) {{\n pthread_t p1;\n\
         pthread_create(&p1, NULL, t1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
         return 0;\n}}\n"
    );
    let mut progs = vec![(
        "division_by_zero_in_store.c".to_string(),
        parse("division_by_zero_in_store.c", &src),
    )];
    progs.extend(
        ir_programs()
            .into_iter()
            .filter(|p| p.0 == "ir_div_zero_in_store"),
    );
    check_all(&progs);
}

/// A child that fails (assertion or division by zero) while main waits in `pthread_join` for
/// it: main must get stuck and the execution must be visited (it is buggy).
fn failing_child_programs() -> Vec<(&'static str, String)> {
    vec![
        (
            "child_assert_fails_on_a_load",
            format!(
                "{HEADER}atomic_int x;\n\
                 void *t1(void *arg) {{ assert(atomic_load_explicit(&x, memory_order_relaxed) == 1); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "child_assert_fails_without_events",
            format!(
                "{HEADER}\n\
                 void *t1(void *arg) {{ int k = 0;\n assert(k); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "division_by_zero_in_a_local",
            format!(
                "{HEADER}atomic_int x;\nint q;\n\
                 void *t1(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   int w = 10 / v;\n q = w; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n int f = q;\n return 0;\n}}\n"
            ),
        ),
    ]
}

#[test]
fn a_failing_child_joined_by_main_is_visited() {
    let progs: Vec<(String, Program)> = failing_child_programs()
        .into_iter()
        .map(|(n, src)| (n.to_string(), parse(&format!("{n}.c"), &src)))
        .collect();
    check_all(&progs);
}

// ---------------------------------------------------------------------------------------------
// Read-modify-writes, compare-and-swap, assume and loop bounds (hand-built IR, so the tests do
// not depend on the front end's progress).
// ---------------------------------------------------------------------------------------------

fn rmw(dst: usize, loc: usize, op: RmwOp, val: Expr, order: MemOrder) -> Instr {
    Instr::Rmw {
        dst,
        loc: Addr::Fixed(loc),
        op,
        val,
        order,
        width: Width::FULL,
    }
}

#[allow(clippy::too_many_arguments)]
fn cas(
    ok: usize,
    old: usize,
    loc: usize,
    expected: Expr,
    desired: Expr,
    order: MemOrder,
    fail_order: MemOrder,
) -> Instr {
    Instr::Cas {
        ok,
        old,
        loc: Addr::Fixed(loc),
        expected,
        desired,
        order,
        fail_order,
        weak: false,
    }
}

fn assume(cond: Expr) -> Instr {
    Instr::Assume { cond }
}

fn assert_ir(cond: Expr) -> Instr {
    Instr::Assert {
        cond,
        text: "ir".into(),
    }
}

/// Main spawning `funcs` (function ids 0..) with arguments 1, 2, ... into registers 0.., then
/// joining them in order, then running `tail` (its registers start after the handles).
fn spawn_join_main(nthreads: usize, tail_regs: usize, tail: Vec<Instr>) -> Function {
    let mut body = Vec::new();
    for t in 0..nthreads {
        body.push(Instr::Spawn {
            func: t,
            arg: c(t as i64 + 1),
            dst: Some(t),
        });
    }
    for t in 0..nthreads {
        body.push(Instr::Join {
            tid: r(t),
            dst: None,
        });
    }
    body.extend(tail);
    function("main", nthreads + tail_regs, None, body)
}

/// A program of its functions, main last, with atomic globals unless named `data*`.
fn prog_of(globals: &[&str], mut funcs: Vec<Function>, main: Function) -> Program {
    funcs.push(main);
    let m = funcs.len() - 1;
    let globals: Vec<(&str, bool, i64)> = globals
        .iter()
        .map(|&g| (g, !g.starts_with("data"), 0))
        .collect();
    ir_program(&globals, funcs, m)
}

/// A layout for hand-built heap programs: cells named `name` + suffix.
fn layout(name: &str, kind: ObjectKind, cells: &[&str], indeterminate: bool) -> Layout {
    Layout {
        name: name.to_string(),
        kind,
        cells: cells
            .iter()
            .map(|c| Global {
                name: format!("{name}{c}"),
                atomic: false,
                init: 0,
                sync: None,
                span: Span::default(),
            })
            .collect(),
        indeterminate,
    }
}

/// Hand-built programs with heap objects (independent of the front end's lowering of
/// `malloc`/`new`): publishing a node, freeing it under a reader, double, invalid and
/// mismatched frees (own objects and another thread's), red zones, arrays with a count, each
/// with the memory errors (details) the oracle must find in some execution under rc11, and
/// whether to compare under the hardware models too.
fn heap_programs() -> Vec<(&'static str, Program, &'static [&'static str], bool)> {
    use MemOrder::*;
    // Layout 0: a `malloc`ed node {next, val} (indeterminate); 1: a `new`ed int; 2: a
    // `calloc`ed int array element; 3: a local int.
    let layouts = vec![
        layout("malloc@1", ObjectKind::Malloc, &[".next", ".val"], true),
        layout("new@2", ObjectKind::New, &[""], false),
        layout("malloc@3", ObjectKind::Malloc, &[""], true),
        layout("f::x", ObjectKind::Local, &[""], false),
    ];
    let at = |ptr: Expr| Addr::Computed {
        ptr,
        lo: 0,
        hi: usize::MAX,
    };
    let plus = |reg: usize, k: i64| bin(BinOp::Add, r(reg), c(k));
    let alloc = |dst, layout| Instr::Alloc {
        dst,
        layout,
        count: None,
    };
    let free = |ptr, by| Instr::Free { ptr, by };
    let load = |dst, loc, order| Instr::Load { dst, loc, order };
    let store = |loc, val, order| Instr::Store { loc, val, order };
    let branch_to_end = |cond, body_len: usize| Instr::BranchIfZero {
        cond,
        target: body_len,
    };
    // Global 0: `top` (atomic), 1: `data`.
    let prog = |mut funcs: Vec<Function>, main: Function| {
        funcs.push(main);
        let m = funcs.len() - 1;
        let globals = [("top", true, 0), ("data", false, 0)];
        ir_program_with(&globals, funcs, m, layouts.clone())
    };
    let main_of = |n: usize, arg: Expr| {
        let mut body: Vec<Instr> = (0..n)
            .map(|t| Instr::Spawn {
                func: t,
                arg: arg.clone(),
                dst: Some(t),
            })
            .collect();
        body.extend((0..n).map(|t| Instr::Join {
            tid: r(t),
            dst: None,
        }));
        function("main", n + 1, None, body)
    };
    // A writer that allocates a node, fills `val`, publishes it (`order`) and then runs `tail`.
    let writer = |order, tail: Vec<Instr>| {
        let mut body = vec![
            alloc(0, 0),
            store(at(plus(0, 1)), c(42), NonAtomic),
            store(Addr::Fixed(0), r(0), order),
        ];
        body.extend(tail);
        function("writer", 2, Some(1), body)
    };
    // A reader that loads `top` (`order`) and, when it is a node, runs `then` on it (r0).
    let reader = |order, then: Vec<Instr>| {
        let mut body = vec![load(0, Addr::Fixed(0), order)];
        let end = 2 + then.len();
        body.push(branch_to_end(r(0), end));
        body.extend(then);
        function("reader", 3, Some(2), body)
    };
    let read_val = || {
        vec![
            load(1, at(plus(0, 1)), NonAtomic),
            assert_ir(bin(BinOp::Eq, r(1), c(42))),
        ]
    };
    let two = |w, rd| prog(vec![w, rd], main_of(2, c(0)));
    // Main allocating (layout, count) into r(n) and spawning the n `funcs` with it, joining
    // them, then running `tail` (with one function, the object is r1).
    let owner = |layout, count: Option<Expr>, funcs: Vec<Function>, tail: Vec<Instr>| {
        let n = funcs.len();
        let mut body = vec![Instr::Alloc {
            dst: n,
            layout,
            count,
        }];
        body.extend((0..n).map(|t| Instr::Spawn {
            func: t,
            arg: r(n),
            dst: Some(t),
        }));
        body.extend((0..n).map(|t| Instr::Join {
            tid: r(t),
            dst: None,
        }));
        body.extend(tail);
        prog(funcs, function("main", n + 4, None, body))
    };
    let freer = |by| function("freer", 1, Some(0), vec![free(r(0), by)]);
    vec![
        (
            "publish_node_release",
            two(writer(Release, vec![]), reader(Acquire, read_val())),
            &[][..],
            true,
        ),
        (
            "publish_node_relaxed",
            two(writer(Relaxed, vec![]), reader(Relaxed, read_val())),
            &["uninitialised-read"][..],
            true,
        ),
        (
            "free_after_publish",
            two(
                writer(Release, vec![free(r(0), Dealloc::Free)]),
                reader(Acquire, read_val()),
            ),
            &["use-after-free"][..],
            false,
        ),
        (
            "free_by_child_then_use",
            owner(
                0,
                None,
                vec![freer(Dealloc::Free)],
                vec![
                    store(at(plus(1, 1)), c(1), NonAtomic),
                    load(2, at(plus(1, 1)), NonAtomic),
                ],
            ),
            &["use-after-free"][..],
            false,
        ),
        (
            "double_free_racing",
            owner(
                0,
                None,
                vec![freer(Dealloc::Free), freer(Dealloc::Free)],
                vec![],
            ),
            &["double-free"][..],
            true,
        ),
        (
            "free_interior_own",
            prog(
                vec![],
                function(
                    "main",
                    1,
                    None,
                    vec![alloc(0, 0), free(plus(0, 1), Dealloc::Free)],
                ),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "free_red_zone_own",
            prog(
                vec![],
                function(
                    "main",
                    1,
                    None,
                    vec![alloc(0, 0), free(plus(0, 2), Dealloc::Free)],
                ),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "free_global",
            prog(
                vec![],
                function("main", 1, None, vec![free(c(2), Dealloc::Free)]),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "free_local",
            prog(
                vec![],
                function(
                    "main",
                    1,
                    None,
                    vec![alloc(0, 3), free(r(0), Dealloc::Free)],
                ),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "free_new_object",
            prog(
                vec![],
                function(
                    "main",
                    1,
                    None,
                    vec![alloc(0, 1), free(r(0), Dealloc::Free)],
                ),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "delete_array_of_new",
            owner(1, None, vec![freer(Dealloc::DeleteArray)], vec![]),
            &["invalid-free"][..],
            false,
        ),
        (
            "free_interior_foreign",
            two(
                writer(Release, vec![]),
                reader(Acquire, vec![free(plus(0, 1), Dealloc::Free)]),
            ),
            &["invalid-free"][..],
            false,
        ),
        (
            "red_zone_foreign",
            two(
                writer(Release, vec![]),
                reader(Acquire, vec![load(1, at(plus(0, 2)), Relaxed)]),
            ),
            &["out-of-bounds"][..],
            true,
        ),
        (
            "delete_after_join",
            owner(
                1,
                None,
                vec![function(
                    "setter",
                    1,
                    Some(0),
                    vec![store(at(r(0)), c(5), NonAtomic)],
                )],
                vec![
                    load(2, at(r(1)), NonAtomic),
                    assert_ir(bin(BinOp::Eq, r(2), c(5))),
                    free(r(1), Dealloc::Delete),
                ],
            ),
            &[][..],
            true,
        ),
        (
            "array_with_a_count",
            owner(
                2,
                Some(c(3)),
                vec![function(
                    "setter",
                    1,
                    Some(0),
                    vec![store(
                        Addr::Within {
                            ptr: plus(0, 2),
                            base: r(0),
                            len: 3,
                        },
                        c(7),
                        Relaxed,
                    )],
                )],
                vec![
                    // 2 cells from element 1 to the end; a count of 0 is null.
                    Instr::ObjectCells {
                        dst: 2,
                        ptr: plus(1, 1),
                    },
                    assert_ir(bin(BinOp::Eq, r(2), c(2))),
                    Instr::Alloc {
                        dst: 3,
                        layout: 2,
                        count: Some(c(0)),
                    },
                    assert_ir(bin(BinOp::Eq, r(3), c(0))),
                    // Element 1 was never written; element 3 is the red zone.
                    load(2, at(plus(1, 1)), Relaxed),
                    load(2, at(plus(1, 3)), Relaxed),
                ],
            ),
            &["uninitialised-read", "out-of-bounds"][..],
            true,
        ),
    ]
}

#[test]
fn heap_programs_agree_with_the_oracle() {
    let mut failures = Vec::new();
    for (name, prog, details, hardware) in heap_programs() {
        let models: &[Model] = if hardware {
            &[Model::Rc11, Model::Sc, Model::Tso, Model::Armv8]
        } else {
            &[Model::Rc11, Model::Sc]
        };
        for &model in models {
            match compare(name, &prog, model) {
                Ok(n) => eprintln!("{name} [{model}]: {n} executions agree"),
                Err(e) => failures.push(e),
            }
            if model == Model::Rc11 {
                let found: BTreeSet<&str> = oracle(&prog, model)
                    .values()
                    .flat_map(|(_, g)| g.bugs.iter().filter_map(|b| b.kind.detail()))
                    .collect();
                let want: BTreeSet<&str> = details.iter().copied().collect();
                if found != want {
                    failures.push(format!(
                        "{name} [{model}]: memory errors {found:?}, not {want:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Hand-built programs with RMWs, CAS, assume and loop markers, each with its expected
/// `[executions, blocked, bounded, buggy]` counts under RC11 where derived by hand (`None`:
/// compared with the oracle only).
fn rmw_programs() -> Vec<(&'static str, Program, Option<[u64; 4]>)> {
    use MemOrder::*;
    let load = |dst, loc, order| Instr::Load {
        dst,
        loc: Addr::Fixed(loc),
        order,
    };
    let store = |loc, val, order| Instr::Store {
        loc: Addr::Fixed(loc),
        val,
        order,
    };
    let eq = |a, b| bin(BinOp::Eq, a, b);
    let mut out = Vec::new();

    // Two relaxed fetch_adds on one counter; main reads after the joins. The second RMW must
    // read the first one's write (atomicity), so 2 executions (one per order), both with sum 2.
    for (name, order) in [
        ("fetch_add_rlx_counter", Relaxed),
        ("fetch_add_sc_counter", SeqCst),
    ] {
        let w = function("w", 1, None, vec![rmw(0, 0, RmwOp::Add, c(1), order)]);
        let main = spawn_join_main(2, 1, vec![load(2, 0, Relaxed), assert_ir(eq(r(2), c(2)))]);
        out.push((
            name,
            prog_of(&["x"], vec![w.clone(), w], main),
            Some([2, 0, 0, 0]),
        ));
    }
    // Every RMW operation, two small programs (the oracle enumerates every read value, so each
    // keeps the value sets small); the old values flow through registers into later writes.
    for (name, a, b, c2) in [
        (
            "rmw_ops_xchg_sub_and",
            (RmwOp::Xchg, 6, AcqRel),
            (RmwOp::Sub, 1, Release),
            (RmwOp::And, 3, Acquire),
        ),
        (
            "rmw_ops_or_xor_add",
            (RmwOp::Or, 4, Relaxed),
            (RmwOp::Xor, 5, SeqCst),
            (RmwOp::Add, 2, Acquire),
        ),
        (
            "rmw_ops_nand_xchg_nand",
            (RmwOp::Nand, 6, Relaxed),
            (RmwOp::Xchg, 3, AcqRel),
            (RmwOp::Nand, 5, Release),
        ),
    ] {
        let t1 = function(
            "t1",
            2,
            None,
            vec![
                rmw(0, 0, a.0, c(a.1), a.2),
                rmw(1, 0, b.0, c(b.1), b.2),
                store(1, bin(BinOp::Add, r(0), r(1)), Relaxed),
            ],
        );
        let t2 = function("t2", 1, None, vec![rmw(0, 0, c2.0, c(c2.1), c2.2)]);
        let main = spawn_join_main(2, 1, vec![load(2, 0, Relaxed)]);
        // Three RMWs in a chain: 3 orders of t2's RMW relative to t1's two.
        out.push((
            name,
            prog_of(&["x", "y"], vec![t1, t2], main),
            Some([3, 0, 0, 0]),
        ));
    }
    // A CAS race from 0: exactly one thread wins. The loser reads the winner's write (it cannot
    // read the initial 0: its CAS would succeed and two RMWs would read the same write).
    {
        let t = |name: &str, flag: usize| {
            function(
                name,
                3,
                Some(0),
                vec![
                    cas(1, 2, 0, c(0), r(0), AcqRel, Acquire),
                    store(flag, r(1), Relaxed),
                ],
            )
        };
        let main = spawn_join_main(
            2,
            2,
            vec![
                load(2, 1, Relaxed),
                load(3, 2, Relaxed),
                assert_ir(eq(bin(BinOp::Add, r(2), r(3)), c(1))),
            ],
        );
        out.push((
            "cas_race_one_winner",
            prog_of(&["x", "won1", "won2"], vec![t("t1", 1), t("t2", 2)], main),
            Some([2, 0, 0, 0]),
        ));
    }
    // A CAS whose expected value comes from an earlier load (a typical retry step), relaxed
    // success and seq_cst failure orders, racing with a plain store.
    {
        let t1 = function(
            "t1",
            3,
            None,
            vec![
                load(0, 0, Relaxed),
                cas(1, 2, 0, r(0), bin(BinOp::Add, r(0), c(5)), Relaxed, SeqCst),
            ],
        );
        let t2 = function("t2", 1, None, vec![store(0, c(1), Release)]);
        let main = spawn_join_main(2, 1, vec![load(2, 0, Acquire)]);
        out.push((
            "cas_from_loaded_value",
            prog_of(&["x"], vec![t1, t2], main),
            None,
        ));
    }
    // An exchange-based spinlock around a plain increment, `while (xchg(&l, 1)) ;` turned into
    // an assume: the thread that reads 1 blocks (and main, joining it, waits forever).
    // Normal: either thread enters first (2); blocked: the other's exchange reads the holder's
    // 1 (2). With acquire/release the critical sections are hb-ordered: no race, data == 2.
    for (name, acq, rel, counts) in [
        ("xchg_lock", Acquire, Release, Some([2, 2, 0, 0])),
        ("xchg_lock_acq_rel_rmw", AcqRel, Release, Some([2, 2, 0, 0])),
        // Relaxed: the critical sections race (every normal execution is buggy).
        ("xchg_lock_relaxed", Relaxed, Relaxed, None),
    ] {
        let w = function(
            "w",
            2,
            None,
            vec![
                rmw(0, 0, RmwOp::Xchg, c(1), acq),
                assume(eq(r(0), c(0))),
                load(1, 1, NonAtomic),
                store(1, bin(BinOp::Add, r(1), c(1)), NonAtomic),
                store(0, c(0), rel),
            ],
        );
        let main = spawn_join_main(2, 1, vec![load(2, 1, NonAtomic), assert_ir(eq(r(2), c(2)))]);
        out.push((
            name,
            prog_of(&["l", "data"], vec![w.clone(), w], main),
            counts,
        ));
    }
    // A CAS lock (`while (!cas(&l, 0, 1)) ;` as an assume on the success flag).
    {
        let w = function(
            "w",
            3,
            None,
            vec![
                cas(0, 1, 0, c(0), c(1), Acquire, Relaxed),
                assume(r(0)),
                load(2, 1, NonAtomic),
                store(1, bin(BinOp::Add, r(2), c(1)), NonAtomic),
                store(0, c(0), Release),
            ],
        );
        let main = spawn_join_main(2, 1, vec![load(2, 1, NonAtomic), assert_ir(eq(r(2), c(2)))]);
        out.push((
            "cas_lock",
            prog_of(&["l", "data"], vec![w.clone(), w], main),
            Some([2, 2, 0, 0]),
        ));
    }
    // Release sequence through an RMW: T1 writes data and releases x = 1; T2's relaxed
    // fetch_add continues T1's release sequence; T3's acquire load that reads 2 (only the RMW
    // that read T1's store writes 2) synchronises with T1, so its read of data is race-free and
    // sees 1. With a plain relaxed store of 2 instead of the RMW, or a relaxed store in T1, the
    // sequence is broken: T3 races.
    for (name, t1_order, via_rmw) in [
        ("release_sequence_rmw", Release, true),
        ("release_sequence_rmw_rlx_head", Relaxed, true),
        ("release_sequence_plain_store", Release, false),
    ] {
        let t1 = function(
            "t1",
            1,
            None,
            vec![store(1, c(1), NonAtomic), store(0, c(1), t1_order)],
        );
        let t2 = if via_rmw {
            function("t2", 1, None, vec![rmw(0, 0, RmwOp::Add, c(1), Relaxed)])
        } else {
            function(
                "t2",
                1,
                None,
                vec![load(0, 0, Relaxed), store(0, c(2), Relaxed)],
            )
        };
        let t3 = function(
            "t3",
            2,
            None,
            vec![
                load(0, 0, Acquire),
                Instr::BranchIfZero {
                    cond: eq(r(0), c(2)),
                    target: 4,
                },
                load(1, 1, NonAtomic),
                assert_ir(eq(r(1), c(1))),
            ],
        );
        let main = spawn_join_main(3, 0, vec![]);
        let prog = prog_of(&["x", "data"], vec![t1, t2, t3], main);
        out.push((name, prog, None));
    }
    // assume on a loaded value: the child blocks when it reads 0, and main, joining it, waits.
    {
        let t = function(
            "t",
            1,
            None,
            vec![load(0, 0, Acquire), assume(eq(r(0), c(1)))],
        );
        let main = function(
            "main",
            1,
            None,
            vec![
                Instr::Spawn {
                    func: 0,
                    arg: c(0),
                    dst: Some(0),
                },
                store(0, c(1), Release),
                Instr::Join {
                    tid: r(0),
                    dst: None,
                },
                store(0, c(2), Relaxed),
            ],
        );
        out.push((
            "assume_on_load",
            prog_of(&["x"], vec![t], main),
            Some([1, 1, 0, 0]),
        ));
    }
    // assume(false) in main itself, and a failing assertion in a blocked execution (buggy and
    // blocked at once).
    {
        let t = function(
            "t",
            1,
            None,
            vec![load(0, 0, Relaxed), assert_ir(eq(r(0), c(0)))],
        );
        let main = function(
            "main",
            1,
            None,
            vec![
                Instr::Spawn {
                    func: 0,
                    arg: c(0),
                    dst: Some(0),
                },
                store(0, c(1), Relaxed),
                assume(c(0)),
                store(0, c(2), Relaxed),
            ],
        );
        // The child reads 0 (fine) or 1 (fails); main always blocks.
        out.push((
            "assume_false_in_main",
            prog_of(&["x"], vec![t], main),
            Some([0, 2, 0, 1]),
        ));
    }
    // A join of a blocked child never returns (main stuck): 1 blocked graph.
    {
        let t = function("t", 1, None, vec![store(0, c(1), Relaxed), assume(c(0))]);
        let main = spawn_join_main(1, 0, vec![store(0, c(2), Relaxed)]);
        out.push((
            "join_of_blocked_child",
            prog_of(&["x"], vec![t], main),
            Some([0, 1, 0, 0]),
        ));
    }
    // An await loop lowered as an ordinary loop: `while (load(f) == 0) ;`. A pass that reads
    // 0 only reads and leaves nothing live changed: a spin (`ir::spin`), so the child reads 1
    // at once (1 execution) or blocks after one pass (1 blocked), whatever the bound.
    // With a pass counter the code after the loop reads (`n++` in the body, `assert(n < 100)`
    // after it) no pass is a spin: the child reads 0 k times and then 1 (k = 0..8 iterations:
    // 9 executions), or 0 nine times and is cut when the 9th iteration starts (1 bounded
    // graph, main stuck joining it).
    for (name, counted, counts) in [
        ("await_loop_spins", false, [1, 1, 0, 0]),
        ("await_loop_bounded", true, [9, 0, 1, 0]),
    ] {
        let mut body = vec![
            Instr::Assign { dst: 1, val: c(0) },
            Instr::LoopEnter { id: 0 },
            load(0, 0, Acquire),
            Instr::BranchIfZero {
                cond: eq(r(0), c(0)),
                target: 7,
            },
            Instr::LoopIter { id: 0 },
            Instr::Assign {
                dst: 1,
                val: bin(BinOp::Add, r(1), c(1)),
            },
            Instr::Jump { target: 2 },
            load(0, 1, NonAtomic),
            assert_ir(eq(r(0), c(7))),
        ];
        if counted {
            body.push(assert_ir(bin(BinOp::Lt, r(1), c(100))));
        }
        let t = function("t", 2, None, body);
        let main = function(
            "main",
            1,
            None,
            vec![
                Instr::Spawn {
                    func: 0,
                    arg: c(0),
                    dst: Some(0),
                },
                store(1, c(7), NonAtomic),
                store(0, c(1), Release),
                Instr::Join {
                    tid: r(0),
                    dst: None,
                },
            ],
        );
        out.push((name, prog_of(&["f", "data"], vec![t], main), Some(counts)));
    }
    // A counting loop (2 iterations) of fetch_adds in two threads: within the
    // bound, every interleaving of the four RMWs on the counter: 4!/(2!2!) = 6 executions.
    {
        let t = function(
            "t",
            2,
            None,
            vec![
                Instr::Assign { dst: 0, val: c(0) },
                Instr::LoopEnter { id: 0 },
                Instr::BranchIfZero {
                    cond: bin(BinOp::Lt, r(0), c(2)),
                    target: 7,
                },
                Instr::LoopIter { id: 0 },
                rmw(1, 0, RmwOp::Add, c(1), Relaxed),
                Instr::Assign {
                    dst: 0,
                    val: bin(BinOp::Add, r(0), c(1)),
                },
                Instr::Jump { target: 2 },
            ],
        );
        let main = spawn_join_main(2, 1, vec![load(2, 0, Relaxed), assert_ir(eq(r(2), c(4)))]);
        out.push((
            "fetch_add_loop",
            prog_of(&["x"], vec![t.clone(), t], main),
            Some([6, 0, 0, 0]),
        ));
    }
    // Store buffering through exchanges (RMWs never make SB sequentially consistent unless sc).
    for (name, order, counts) in [
        ("sb_xchg_rlx", Relaxed, Some([4, 0, 0, 1])),
        ("sb_xchg_sc", SeqCst, Some([3, 0, 0, 0])),
    ] {
        let t = |name: &str, mine: usize, other: usize| {
            function(
                name,
                2,
                None,
                vec![
                    rmw(0, mine, RmwOp::Xchg, c(1), order),
                    load(1, other, order),
                    store(mine + 2, r(1), Relaxed),
                ],
            )
        };
        let main = spawn_join_main(
            2,
            2,
            vec![
                load(2, 2, Relaxed),
                load(3, 3, Relaxed),
                assert_ir(bin(BinOp::Or, r(2), r(3))),
            ],
        );
        out.push((
            name,
            prog_of(
                &["x", "y", "a", "b"],
                vec![t("t1", 0, 1), t("t2", 1, 0)],
                main,
            ),
            counts,
        ));
    }
    // GCC's nand: x = 12, one `fetch_nand(&x, 10)` leaves ~(12 & 10) = ~8 = -9 and returns 12
    // (an assertion in main checks both, so a wrong value makes the execution buggy).
    {
        let t = function(
            "t",
            1,
            None,
            vec![
                rmw(0, 0, RmwOp::Nand, c(10), Relaxed),
                store(1, r(0), Relaxed),
            ],
        );
        let main = spawn_join_main(
            1,
            2,
            vec![
                load(1, 0, Relaxed),
                load(2, 1, Relaxed),
                assert_ir(bin(BinOp::And, eq(r(1), c(-9)), eq(r(2), c(12)))),
            ],
        );
        let prog = ir_program(&[("x", true, 12), ("y", true, 0)], vec![t, main], 1);
        out.push(("rmw_nand_value", prog, Some([1, 0, 0, 0])));
    }
    out.extend(mixed_atomicity_programs());
    out
}

/// Atomicity belongs to the access, not to the location (RC11, and what GCC's builtins and
/// casts like `*(int *)&a[i]` do): plain accesses to locations declared atomic and atomic ones
/// to locations declared plain, through computed addresses (which once checked the declared
/// kind) and fixed ones, with `[executions, blocked, bounded, buggy]` derived by hand.
fn mixed_atomicity_programs() -> Vec<(&'static str, Program, Option<[u64; 4]>)> {
    use MemOrder::*;
    let at = |loc: usize| Addr::Computed {
        ptr: c(loc as i64 + 1),
        lo: 0,
        hi: 2,
    };
    let eq = |a, b| bin(BinOp::Eq, a, b);
    let mut out = Vec::new();
    // Two relaxed fetch_adds on an atomic counter, read plainly after the joins: hb-ordered,
    // no race; one execution per mo order of the RMWs, both reading 2.
    {
        let w = function("w", 1, None, vec![rmw(0, 0, RmwOp::Add, c(1), Relaxed)]);
        let read = Instr::Load {
            dst: 2,
            loc: at(0),
            order: NonAtomic,
        };
        let main = spawn_join_main(2, 1, vec![read, assert_ir(eq(r(2), c(2)))]);
        out.push((
            "mixed_plain_read_after_join",
            prog_of(&["x", "y"], vec![w.clone(), w], main),
            Some([2, 0, 0, 0]),
        ));
    }
    // The same plain read while the writer runs: it reads 0 or 1, racing either way.
    {
        let t = function("t", 1, None, vec![store_at(Addr::Fixed(0), c(1), Relaxed)]);
        let main = function(
            "main",
            2,
            None,
            vec![
                Instr::Spawn {
                    func: 0,
                    arg: c(0),
                    dst: Some(0),
                },
                Instr::Load {
                    dst: 1,
                    loc: at(0),
                    order: NonAtomic,
                },
                Instr::Join {
                    tid: r(0),
                    dst: None,
                },
            ],
        );
        out.push((
            "mixed_plain_read_racing",
            prog_of(&["x", "y"], vec![t], main),
            Some([2, 0, 0, 2]),
        ));
    }
    // Atomic RMWs on a location declared plain (`__atomic_fetch_add(&data, 1, ...)`): they do
    // not race with each other, and main's plain read after the joins sees 2.
    {
        let w = function(
            "w",
            1,
            None,
            vec![Instr::Rmw {
                dst: 0,
                loc: at(0),
                op: RmwOp::Add,
                val: c(1),
                order: Relaxed,
                width: Width::FULL,
            }],
        );
        let main = spawn_join_main(
            2,
            1,
            vec![
                Instr::Load {
                    dst: 2,
                    loc: Addr::Fixed(0),
                    order: NonAtomic,
                },
                assert_ir(eq(r(2), c(2))),
            ],
        );
        out.push((
            "mixed_atomic_rmw_on_plain",
            prog_of(&["data", "data2"], vec![w.clone(), w], main),
            Some([2, 0, 0, 0]),
        ));
    }
    // Message passing through a flag declared plain, written and read with atomic orders.
    // Release/acquire: reading the flag 0 (1 execution) or 1, then data must be 1 (1): no bug.
    // Relaxed: reading 1 leaves data 0 or 1, racing in both (3 executions, 2 buggy).
    for (name, w, r_, counts) in [
        (
            "mixed_mp_plain_flag_rel_acq",
            Release,
            Acquire,
            [2, 0, 0, 0],
        ),
        (
            "mixed_mp_plain_flag_relaxed",
            Relaxed,
            Relaxed,
            [3, 0, 0, 2],
        ),
    ] {
        let t1 = function(
            "t1",
            1,
            None,
            vec![
                store_at(Addr::Fixed(1), c(1), NonAtomic),
                store_at(at(0), c(1), w),
            ],
        );
        let t2 = function(
            "t2",
            2,
            None,
            vec![
                Instr::Load {
                    dst: 0,
                    loc: Addr::Fixed(0),
                    order: r_,
                },
                Instr::BranchIfZero {
                    cond: eq(r(0), c(1)),
                    target: 4,
                },
                Instr::Load {
                    dst: 1,
                    loc: Addr::Fixed(1),
                    order: NonAtomic,
                },
                assert_ir(eq(r(1), c(1))),
            ],
        );
        let main = spawn_join_main(2, 0, vec![]);
        out.push((
            name,
            prog_of(&["data_flag", "data"], vec![t1, t2], main),
            Some(counts),
        ));
    }
    out
}

fn store_at(loc: Addr, val: Expr, order: MemOrder) -> Instr {
    Instr::Store { loc, val, order }
}

#[test]
fn rmw_cas_assume_and_loops_agree_with_the_oracle() {
    let progs: Vec<(String, Program)> = rmw_programs()
        .into_iter()
        .map(|(n, p, _)| (n.to_string(), p))
        .collect();
    check_all(&progs);
}

/// Counts derived by hand (see `rmw_programs`), from both the oracle and the explorer's stats.
#[test]
fn rmw_cas_assume_and_loop_counts() {
    let mut failures = Vec::new();
    for (name, prog, counts) in rmw_programs() {
        let Some(want) = counts else { continue };
        let oracle_counts = classify(oracle(&prog, Model::Rc11).values());
        let st = explorer(&prog, Model::Rc11).stats;
        let got = [st.executions, st.blocked, st.bounded, st.buggy];
        if oracle_counts != want || got != want {
            failures.push(format!(
                "{name}: [executions, blocked, bounded, buggy] expected {want:?}, oracle \
                 {oracle_counts:?}, explorer {got:?}"
            ));
        }
    }
    // The release sequences: only the intact one is bug-free.
    for (name, prog, _) in rmw_programs() {
        if let Some(want_bug) = match name {
            "release_sequence_rmw" => Some(false),
            "release_sequence_rmw_rlx_head" | "release_sequence_plain_store" => Some(true),
            _ => None,
        } {
            let b = classify(oracle(&prog, Model::Rc11).values())[3];
            let st = explorer(&prog, Model::Rc11).stats;
            if (b > 0) != want_bug || (st.buggy > 0) != want_bug {
                failures.push(format!(
                    "{name}: buggy executions: oracle {b}, explorer {}, expected {}",
                    st.buggy,
                    if want_bug { "some" } else { "none" }
                ));
            }
        }
    }
    // A smaller loop bound cuts the counted await loop earlier: unroll 2 gives 3 executions
    // (0, 1 or 2 iterations) + 1 cut; the spinning one has its counts at every bound.
    for (name, spins) in [("await_loop_bounded", false), ("await_loop_spins", true)] {
        let (_, prog, _) = rmw_programs().into_iter().find(|p| p.0 == name).unwrap();
        spin_and_bound_counts(&mut failures, name, &prog, spins);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The counts of `await_loop_bounded` / `await_loop_spins` at unroll 1 and 2, by the oracle
/// and the explorer, and their agreement.
fn spin_and_bound_counts(failures: &mut Vec<String>, name: &str, prog: &Program, spins: bool) {
    for unroll in [1, 2] {
        let want = if spins {
            [1, 1, 0, 0]
        } else {
            [unroll as u64 + 1, 0, 1, 0]
        };
        let o = classify(oracle_with(prog, Model::Rc11, unroll).values());
        let st = explorer_with(prog, Model::Rc11, unroll).stats;
        let got = [st.executions, st.blocked, st.bounded, st.buggy];
        if o != want || got != want {
            failures.push(format!(
                "{name}, unroll {unroll}: expected {want:?}, oracle {o:?}, explorer {got:?}"
            ));
        }
        if let Err(e) = compare_with(name, prog, Model::Rc11, unroll) {
            failures.push(e);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random small IR programs (deterministic generator).
// ---------------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// The position just after the instruction that reads into `reg` (0 if none: a parameter).
fn read_position(body: &[Instr], reg: usize) -> usize {
    body.iter()
        .position(|i| match i {
            Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => *dst == reg,
            Instr::Cas { old, .. } => *old == reg,
            _ => false,
        })
        .map_or(0, |p| p + 1)
}

/// A random loop-free program: 1–4 children of 1–4 memory instructions each (loads, stores of
/// constants or of a loaded value or the thread argument plus one, RMWs and CASes of every order
/// on atomic locations, fences; now and then an access of the other kind than its location is
/// declared — a plain access to an atomic location, an atomic one (RMW and CAS included) to a
/// plain location — since atomicity belongs to the access), spawned and joined (in a random
/// order) by main, which also
/// accesses memory between them and may assert on what it read. Some children assert on what
/// they read; those are not joined. Some children `assume` something about a value they read
/// (and may block, leaving main stuck at its join), and some pass loop markers (the random
/// programs run with an unroll bound of 1, so a second iteration of one loop without a new
/// entry cuts the thread).
fn random_program(rng: &mut Rng) -> Program {
    use MemOrder::*;
    let nlocs = 2 + rng.below(2);
    let atomic: Vec<bool> = (0..nlocs).map(|l| l == 0 || rng.below(3) != 0).collect();
    let access = |rng: &mut Rng, regs: &mut usize, loaded: &mut Vec<usize>| -> Instr {
        let loc = rng.below(nlocs);
        let k = rng.below(12);
        // The kind of this access: its location's, or once in six times the other one.
        let atomic_access = atomic[loc] != (rng.below(6) == 0);
        if k >= 9 && atomic_access {
            // An RMW (k = 9, 10) or a CAS (k = 11): an atomic access.
            let dst = *regs;
            *regs += 2;
            loaded.push(dst);
            let order = rng.pick(&[Relaxed, Acquire, Release, AcqRel, SeqCst]);
            if k < 11 {
                // Add and Sub (covered by `rmw_programs`) would make the oracle's value sets
                // grow with every round; these keep them within 0..=3.
                let op = rng.pick(&[RmwOp::Xchg, RmwOp::And, RmwOp::Or, RmwOp::Xor]);
                return Instr::Rmw {
                    dst,
                    loc: Addr::Fixed(loc),
                    op,
                    val: c(1 + rng.below(2) as i64),
                    order,
                    width: Width::FULL,
                };
            }
            let expected = if loaded.len() > 1 && rng.below(3) == 0 {
                r(loaded[loaded.len() - 2])
            } else {
                c(rng.below(2) as i64)
            };
            return Instr::Cas {
                ok: dst + 1,
                old: dst,
                loc: Addr::Fixed(loc),
                expected,
                desired: c(1 + rng.below(2) as i64),
                order,
                fail_order: rng.pick(&[Relaxed, Acquire, SeqCst]),
                weak: rng.below(2) == 0,
            };
        }
        // Now and then a computed address: `loc + (v & 1)` for a value `v` read before,
        // which may be out of bounds (undefined behaviour) or land on a location declared with
        // the other atomicity (an ordinary access of the instruction's kind).
        let computed = !loaded.is_empty() && rng.below(5) == 0;
        let addr = |rng: &mut Rng, loaded: &Vec<usize>| {
            if computed {
                Addr::Computed {
                    ptr: bin(
                        BinOp::Add,
                        c(loc as i64 + 1),
                        bin(BinOp::BitAnd, r(rng.pick(loaded)), c(1)),
                    ),
                    lo: 0,
                    hi: nlocs,
                }
            } else {
                Addr::Fixed(loc)
            }
        };
        let k = k % 9;
        if k < 4 {
            let order = if atomic_access {
                rng.pick(&[Relaxed, Acquire, SeqCst])
            } else {
                NonAtomic
            };
            let loc = addr(rng, loaded);
            let dst = *regs;
            *regs += 1;
            loaded.push(dst);
            Instr::Load { dst, loc, order }
        } else if k < 8 {
            let order = if atomic_access {
                rng.pick(&[Relaxed, Release, SeqCst])
            } else {
                NonAtomic
            };
            let val = if !loaded.is_empty() && rng.below(3) == 0 {
                bin(BinOp::Add, r(rng.pick(loaded)), c(1))
            } else {
                c(1 + rng.below(2) as i64)
            };
            Instr::Store {
                loc: addr(rng, loaded),
                val,
                order,
            }
        } else {
            Instr::Fence {
                order: rng.pick(&[Acquire, Release, AcqRel, SeqCst]),
            }
        }
    };
    let nthreads = 1 + rng.below(4);
    let mut functions = Vec::new();
    let mut may_fail = Vec::new();
    let mut args = Vec::new();
    for t in 0..nthreads {
        let len = 1 + rng.below([4, 4, 3, 2][nthreads - 1]);
        // Some children take their argument (register 0) and may store it plus one.
        let param = rng.below(3) == 0;
        let (mut regs, mut loaded) = if param { (1, vec![0]) } else { (0, Vec::new()) };
        let mut body: Vec<Instr> = (0..len)
            .map(|_| access(rng, &mut regs, &mut loaded))
            .collect();
        // Some children assume something about a value they read (and may block).
        if !loaded.is_empty() && rng.below(4) == 0 {
            let reg = rng.pick(&loaded);
            let at = read_position(&body, reg);
            body.insert(
                at,
                Instr::Assume {
                    cond: bin(BinOp::Ne, r(reg), c(rng.below(2) as i64)),
                },
            );
        }
        // Loop iterations and entries without a loop (the random programs run with an unroll
        // bound of 1): a second iteration of one loop cuts the thread unless the loop was
        // entered again in between.
        if rng.below(5) == 0 {
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(body.len() + 1);
                let id = rng.below(2);
                let ins = if rng.below(3) == 0 {
                    Instr::LoopEnter { id }
                } else {
                    Instr::LoopIter { id }
                };
                body.insert(at, ins);
            }
        }
        // Some children assert on a value they read; main never joins those (a failing child
        // that main joins is covered by `a_failing_child_joined_by_main_is_visited`).
        let fails = loaded.len() > usize::from(param) && rng.below(4) == 0;
        if fails {
            let reg = *loaded.last().unwrap();
            let at = body.len() - rng.below(2).min(body.len() - 1);
            let at = at.max(read_position(&body, reg));
            body.insert(
                at,
                Instr::Assert {
                    cond: bin(BinOp::Ne, r(reg), c(rng.below(2) as i64)),
                    text: "child".into(),
                },
            );
        }
        may_fail.push(fails);
        args.push(5 + t as i64);
        functions.push(function(
            &format!("t{t}"),
            regs.max(1),
            param.then_some(0),
            body,
        ));
    }
    // Main: registers 0..nthreads hold the handles.
    let (mut regs, mut loaded) = (nthreads, Vec::new());
    let mut body = Vec::new();
    let mut main_accesses = rng.below(4);
    for t in 0..nthreads {
        body.push(Instr::Spawn {
            func: t,
            arg: c(args[t]),
            dst: Some(t),
        });
        if main_accesses > 0 && rng.below(2) == 0 {
            body.push(access(rng, &mut regs, &mut loaded));
            main_accesses -= 1;
        }
    }
    let mut order: Vec<usize> = (0..nthreads).filter(|&t| !may_fail[t]).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    for t in order {
        body.push(Instr::Join {
            tid: r(t),
            dst: None,
        });
        if main_accesses > 0 && rng.below(2) == 0 {
            body.push(access(rng, &mut regs, &mut loaded));
            main_accesses -= 1;
        }
    }
    if !loaded.is_empty() && rng.below(2) == 0 {
        let at = rng
            .below(body.len() + 1)
            .max(read_position(&body, loaded[0]));
        body.insert(
            at,
            Instr::Assert {
                cond: bin(BinOp::Ne, r(loaded[0]), c(rng.below(3) as i64)),
                text: "random".into(),
            },
        );
    }
    functions.push(function("main", regs, None, body));
    let globals: Vec<(String, bool, i64)> = (0..nlocs)
        .map(|l| (format!("g{l}"), atomic[l], 0))
        .collect();
    let globals: Vec<(&str, bool, i64)> =
        globals.iter().map(|g| (g.0.as_str(), g.1, g.2)).collect();
    ir_program(&globals, functions, nthreads)
}

/// Compares the explorer with the oracle on `count` random programs from `rng` (loop bound 1)
/// under each of `models`, after calling `before(i)` for program `i`; records disagreements in
/// `failures` and returns the oracle's summed `[executions, blocked, bounded, buggy]`.
fn random_campaign(
    label: &str,
    rng: &mut Rng,
    count: u64,
    models: &[Model],
    failures: &mut Vec<String>,
    mut before: impl FnMut(u64),
) -> [u64; 4] {
    let mut total = [0u64; 4];
    for i in 0..count {
        let prog = random_program(rng);
        before(i);
        for &model in models {
            let name = format!("{label} #{i}");
            // A panic of the explorer's own checks (`verify_incremental`) is a disagreement
            // too: report the program instead of stopping the campaign.
            let result = std::panic::catch_unwind(|| compare_with(&name, &prog, model, 1))
                .unwrap_or_else(|_| Err(format!("{name} under {model}: the explorer panicked\n")));
            match result {
                Ok(n) => (0..4).for_each(|k| total[k] += n[k]),
                Err(e) => failures.push(format!("{e}program: {:#?}", prog.functions)),
            }
        }
    }
    total
}

/// Fails with the number of disagreements and the first three of them.
fn assert_agreement(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn random_programs_agree_with_the_oracle() {
    // BRUTEFORCE_RANDOM=<count> and BRUTEFORCE_SEED=<n> run a longer campaign.
    let env = env_number::<u64>;
    let mut rng = Rng(env("BRUTEFORCE_SEED").unwrap_or(0x5eed_f00d_1234_5678) | 1);
    let count = env("BRUTEFORCE_RANDOM").unwrap_or(300);
    let t = Instant::now();
    let mut failures = Vec::new();
    let total = random_campaign(
        "random",
        &mut rng,
        count,
        &[Model::Rc11, Model::Sc],
        &mut failures,
        // Every other program with spurious weak-CAS failures.
        |i| SPURIOUS_CAS.with(|s| s.set(i % 2 == 1)),
    );
    SPURIOUS_CAS.with(|s| s.set(false));
    eprintln!(
        "{count} random programs agree, [executions, blocked, bounded, buggy] = {total:?} ({:?})",
        t.elapsed()
    );
    assert_agreement(&failures);
}

/// The c11 model on random programs (those with at most 8 seq_cst events in every run, so
/// that the oracle can try every order of them) and on the litmus fixtures.
#[test]
fn c11_agrees_with_the_oracle() {
    let mut rng = Rng(0x0c11_0c11_5eed_7777);
    let mut compared = 0;
    let mut failures = Vec::new();
    for i in 0..400 {
        let prog = random_program(&mut rng);
        let sc_instrs: usize = prog
            .functions
            .iter()
            .flat_map(|f| &f.body)
            .filter(|ins| match ins {
                Instr::Load { order, .. } | Instr::Store { order, .. } | Instr::Fence { order } => {
                    order.is_sc()
                }
                Instr::Rmw { order, .. } | Instr::Cas { order, .. } => order.is_sc(),
                _ => false,
            })
            .count();
        // Each instruction runs at most twice (loop bound 1 plus its exit), an RMW is two
        // events: a conservative bound on the seq_cst events of a run.
        if sc_instrs > 4 {
            continue;
        }
        compared += 1;
        if let Err(e) = compare_with(&format!("c11 random #{i}"), &prog, Model::C11, 1) {
            failures.push(e);
        }
    }
    let mut files: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".c"))
        .collect();
    files.sort();
    for f in files {
        let prog = fixture(&f);
        if let Err(e) = compare_with(&f, &prog, Model::C11, DEFAULT_UNROLL) {
            failures.push(e);
        }
    }
    assert!(compared > 100, "only {compared} random programs compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Random programs with only seq_cst accesses (and no fences): the explorer checks them with
/// the SC axioms (RC11 gives such programs SC semantics); every step is verified against the
/// full RC11 axioms, and the counts against the oracle's RC11 enumeration.
#[test]
fn all_seq_cst_random_programs_agree_with_the_oracle() {
    let mut rng = Rng(0x0005_c5c5_ab12_9931);
    let mut failures = Vec::new();
    for i in 0..300 {
        let mut prog = random_program(&mut rng);
        for g in &mut prog.globals {
            g.atomic = true;
        }
        for f in &mut prog.functions {
            for ins in &mut f.body {
                match ins {
                    Instr::Load { order, .. }
                    | Instr::Store { order, .. }
                    | Instr::Rmw { order, .. } => *order = MemOrder::SeqCst,
                    Instr::Cas {
                        order, fail_order, ..
                    } => {
                        *order = MemOrder::SeqCst;
                        *fail_order = MemOrder::SeqCst;
                    }
                    Instr::Fence { .. } => *ins = Instr::Assume { cond: c(1) },
                    _ => {}
                }
            }
        }
        if let Err(e) = compare_with(&format!("all-sc random #{i}"), &prog, Model::Rc11, 1) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The algorithm fixtures (loops, awaits, RMWs, CAS, locks written by hand) against the
/// oracle, with a small loop bound to keep the enumeration small. (Split from the other
/// directories below so that the two longest comparisons run in parallel.)
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn algorithm_fixtures_agree_with_the_oracle() {
    let checked = fixture_dirs_agree_with_the_oracle(&["algorithms"]);
    assert!(
        checked >= 5 || filtered(),
        "only {checked} fixtures compared"
    );
}

/// The other C fixtures with few executions against the oracle: control flow, spin loops, locks, the
/// CDSChecker dialect, functions, data, builtins, and the C twins of C++ fixtures. The C++
/// fixtures themselves are not enumerated again: `tests/fixtures.rs` checks that each has the
/// counts and fix of its C twin, which is compared with the oracle here or in its own
/// directory's test when it is small enough and allocates nothing.
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn control_and_other_c_fixtures_agree_with_the_oracle() {
    let dirs = [
        "control",
        "loops",
        "locks",
        "dialect",
        "dialect/c",
        "functions",
        "data",
        "cpp/c",
        "builtins",
    ];
    let checked = fixture_dirs_agree_with_the_oracle(&dirs);
    assert!(
        checked >= 5 || filtered(),
        "only {checked} fixtures compared"
    );
}

/// The test-harness fixtures (locals escaping their function, local buffers and lock
/// structs, thread-local storage: objects allocated at run time) against the oracle, which
/// models allocation on its own.
#[test]
fn harness_fixtures_agree_with_the_oracle() {
    let checked = fixture_dirs_agree_with_the_oracle(&["harness"]);
    assert!(
        checked >= 5 || filtered(),
        "only {checked} fixtures compared"
    );
}

/// The heap fixtures of issue 20 (`fixtures/heap`: `malloc`/`free`, `new`/`delete`, the
/// Treiber stack, Michael-Scott queues, the MCS lock, hazard pointers, one program per memory
/// error) against the oracle, when the directory exists.
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn heap_fixtures_agree_with_the_oracle() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/heap");
    let checked = fixture_dirs_agree_with_the_oracle(&["heap", "heap/c"]);
    assert!(
        !dir.exists() || checked >= 5 || filtered(),
        "only {checked} fixtures compared"
    );
}

/// The class and union fixtures of issue 22 (`fixtures/classes`: C++ classes lowered to
/// structs and inlined member functions, a union lock word) and their C twins against the
/// oracle: the C++ programs themselves, not only their twins.
#[test]
fn class_fixtures_agree_with_the_oracle() {
    let checked = fixture_dirs_agree_with_the_oracle(&["classes", "classes/c"]);
    assert!(
        checked >= 2 || filtered(),
        "only {checked} fixtures compared"
    );
}

/// Whether `BRUTEFORCE_FIXTURE` restricts the fixture comparisons (to debug one).
fn filtered() -> bool {
    std::env::var_os("BRUTEFORCE_FIXTURE").is_some()
}

/// Why the oracle cannot enumerate `prog`, if it cannot: it runs threads spawned and joined by
/// `main` only, without join results (the explorer's graphs of those are compared in
/// `tests/fixtures.rs` with their expectations).
fn beyond_the_oracle(prog: &Program) -> Option<&'static str> {
    for (i, f) in prog.functions.iter().enumerate() {
        for ins in &f.body {
            match ins {
                Instr::Spawn { .. } if i != prog.main => return Some("a thread spawns threads"),
                Instr::Join { .. } if i != prog.main => return Some("a thread joins threads"),
                Instr::Join { dst: Some(_), .. } => return Some("a join result is used"),
                _ => {}
            }
        }
    }
    None
}

/// The most events (initialisation writes included) a graph the oracle builds may have: its
/// relations are 128-bit rows, and larger graphs take it long.
const MAX_ORACLE_EVENTS: usize = 100;

/// The explorer's counts of `prog` and the most events of any of its graphs.
/// The explorer's counts with every wait explored as a plain read (`Limits::plain_waits`: the
/// blocked graphs on locks released later included, which the oracle enumerates before it
/// drops them), and the largest graph's event count.
fn explorer_size(prog: &Program, model: Model, unroll: u32) -> (Stats, usize) {
    explorer_size_upto(prog, model, unroll, u64::MAX)
}

/// As [`explorer_size`], stopping once `cap` graphs are visited (then the counts are those of
/// the first `cap`).
fn explorer_size_upto(prog: &Program, model: Model, unroll: u32, cap: u64) -> (Stats, usize) {
    let (mut events, mut visits) = (0, 0);
    let limits = Limits {
        unroll: Some(unroll),
        spurious_cas: SPURIOUS_CAS.with(|s| s.get()),
        plain_waits: true,
        ..Limits::default()
    };
    let stats = explore(prog, model, limits, |g| {
        events = events.max(g.events.len());
        visits += 1;
        if visits >= cap {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    (stats, events)
}

/// Whether the fixture `name` (its path) takes the oracle minutes or more: its counts are
/// pinned by its expectations (and its twin) instead.
fn too_slow_for_the_oracle(name: &str) -> bool {
    // The bakery's ticket numbers (max + 1) make the oracle's value domain grow with
    // every round, and the Chase-Lev deque's many reads of `top` / `bottom` (each with
    // every value of its domain) multiply the thread runs: their enumerations take
    // minutes. The lock guards' fixture (and its C twin) has more lock/unlock
    // interleavings than the oracle enumerates in reasonable time, and so have the
    // builtin spin and ticket locks (their spinning runs take the oracle tens of
    // seconds each; it agreed with their hand counts under RC11 when they were
    // written). Their counts are pinned by their expectations (and the C++ twins by matching each other) instead.
    // The condition variable, recursive mutex and shared mutex fixtures of C++ (and
    // their C twins in fixtures/sync) are beyond the oracle too: see
    // `SYNC_TOO_BIG_FOR_THE_ORACLE`.
    // The C twin of the C++ lambda fixture with a condition wait in a predicate loop
    // (main's mutex, condition variable and flag are locals) is too: like `cond_while`.
    // So is the dialect's mailbox (a condition wait in a loop over heap items: the
    // oracle runs out of memory); its C++ program and C twin must match each other.
    let sync_twin = [
        "mailbox_cv",
        "cond_wait_pred",
        "recursive_mutex",
        "shared_mutex",
        "lambda_ref_cond",
    ]
    .iter()
    .any(|f| name.contains(f));
    // The harness's scratch buffers: its workers' fetch_adds grow the value sets of
    // the shared counters every round, as the bakery's tickets do, and every read of
    // a buffer cell takes every value (minutes).
    // The Michael-Scott queues recycling nodes through a free list (fixtures/heap): the
    // free list's CAS loop and the queue's re-reads of Head, Tail and `next` each take
    // every value of their sets (minutes).
    // The class fixtures with spinning barriers, the seqlock's four-load reader and the
    // union lock word's RMWs take the oracle minutes too (over 150 s each): their counts
    // are pinned by their expectations and by their C twins, which must match them.
    // The dialect's every-operation fixture: main's chain of a dozen RMWs on one
    // counter grows its value set with every RMW, and every later read takes every
    // value (the oracle runs out of memory); its count is hand-derived in the file.
    let slow = [
        "dialect/located_ops",
        "classes/barrier",
        "classes/c/barrier",
        "classes/seqlock",
        "classes/c/seqlock",
        "union_rwlock",
        "bakery",
        "scratch_buffers",
        "msqueue_freelist",
        "chase_lev",
        "lock_guard",
        "spinlock",
        "ticket_fast_types",
        // Retry loops of fetch_add/fetch_sub pairs: each unrolled retry grows the
        // counter's value set (over 120 s each); zne_observed, the same rule on a
        // smaller counter, is compared.
        "zne_rwlock",
        "zne_counter_retry",
    ];
    slow.iter().any(|s| name.contains(s)) || sync_twin
}

/// Compares every fixture of `dirs` (below `fixtures/`) with few executions with the oracle;
/// returns how many it compared.
fn fixture_dirs_agree_with_the_oracle(dirs: &[&str]) -> usize {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut checked = 0;
    for &dir in dirs {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "c" || e == "cpp"))
            .collect();
        files.sort();
        for path in files {
            let src = std::fs::read_to_string(&path).unwrap();
            let name = path.display().to_string();
            if too_slow_for_the_oracle(&name) {
                eprintln!("not compared: {name}: too big for the oracle");
                continue;
            }
            // BRUTEFORCE_FIXTURE=text compares only the fixtures whose path contains it.
            if let Some(only) = std::env::var_os("BRUTEFORCE_FIXTURE") {
                if !name.contains(only.to_string_lossy().as_ref()) {
                    continue;
                }
            }
            let prog = parse(&name, &src);
            if let Some(why) = beyond_the_oracle(&prog) {
                eprintln!("not compared: {name}: {why}");
                continue;
            }
            // The oracle enumerates every combination of runs, rf and mo: keep to programs
            // with few executions and events (the larger algorithms are covered by their
            // expectations).
            let (st, events) = explorer_size(&prog, Model::Rc11, 2);
            if st.visited() > 60 || events > MAX_ORACLE_EVENTS {
                eprintln!("not compared: {name}: too many executions or events");
                continue;
            }
            let t = Instant::now();
            for model in [Model::Rc11, Model::Sc] {
                if let Err(e) = compare_with(&name, &prog, model, 2) {
                    panic!("{e}");
                }
            }
            eprintln!("{name}: agrees under rc11 and sc ({:?})", t.elapsed());
            // The hardware models too (RMWs, CAS, mutexes and the __sync full barriers exercise
            // their barriers) on the C fixtures with the fewest executions (the oracle's time
            // grows fast with them, and the C++ fixtures are twins of C ones).
            if !["control", "loops", "algorithms", "locks", "builtins"].contains(&dir) {
                checked += 1;
                continue;
            }
            for model in [Model::Tso, Model::Pso, Model::Armv8] {
                let st = explorer_size(&prog, model, 2).0;
                if st.visited() > 30 {
                    continue;
                }
                if let Err(e) = compare_with(&name, &prog, model, 2) {
                    panic!("{e}");
                }
            }
            checked += 1;
        }
    }
    checked
}

/// The fixtures of `fixtures/goto` (litmus tests in the label-and-goto style of tests converted
/// to C, a retry loop made by a backward goto, a state machine over an enum): the oracle finds
/// exactly the executions, cut executions and buggy ones their expectations state, at the
/// loop bound the expectations give (`--unroll`), and the explorer agrees with it under rc11
/// and sc.
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn goto_fixtures_agree_with_the_oracle_and_their_expectations() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/goto");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for path in files {
        let name = path.display().to_string();
        let exp: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(path.with_extension("expect.json")).unwrap(),
        )
        .unwrap();
        let args: Vec<&str> = exp["args"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let unroll = args
            .iter()
            .position(|a| *a == "--unroll")
            .and_then(|i| args.get(i + 1))
            .map_or(DEFAULT_UNROLL, |n| n.parse().unwrap());
        let prog = parse(&name, &std::fs::read_to_string(&path).unwrap());
        let t = Instant::now();
        let [executions, _, bounded, buggy] =
            compare_with(&name, &prog, Model::Rc11, unroll).unwrap_or_else(|e| panic!("{e}"));
        let check = &exp["check"];
        assert_eq!(
            (executions, bounded, buggy),
            (
                check["executions"].as_u64().unwrap(),
                check["bounded"].as_u64().unwrap_or(0),
                check["buggy"].as_u64().unwrap()
            ),
            "{name}: the oracle's executions, cut ones and buggy ones"
        );
        compare_with(&name, &prog, Model::Sc, unroll).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{name}: {executions} executions agree ({:?})", t.elapsed());
    }
}

/// Fixtures of `fixtures/sync/` the oracle cannot enumerate: it tries every value of every read
/// of a thread's run, and a condition wait in a predicate loop reads the mutex word, the waiter
/// count and the signal counter a dozen times (millions of runs); so do two recursive locks
/// and two rounds of a barrier; and a few take more than a minute. Their counts are derived
/// by hand in their headers. So are the lock-aware benchmarks' fixtures, three and four
/// threads taking a mutex (90 and 24 executions; the oracle enumerates the hundreds of
/// blocked graphs the explorer skips before dropping them).
const SYNC_TOO_BIG_FOR_THE_ORACLE: &[&str] = &[
    "barrier_rounds.c",
    "lockinc_loop.c",
    "reads_lock.c",
    "misuse_cond_destroy_waiting.c",
    "c11_cnd_queue.c",
    "cond_broadcast.c",
    "cond_lost_wakeup.c",
    "cond_timedwait.c",
    "cond_while.c",
    "recursive_mutex.c",
    "relock_deadlock.c",
    "rwlock_readers.c",
];

/// The synchronisation-object fixtures (barriers, condition variables, rwlocks, spinlocks,
/// C11 mutexes, misuse): the explorer finds exactly the oracle's graphs, their thread ends
/// and their bugs (deadlocks, lost wake-ups, misuse) under rc11 and sc, and the smallest under
/// the hardware models too. The expectations of these `fixtures/sync/*.expect.json` are the
/// oracle's counts.
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn sync_fixtures_agree_with_the_oracle() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sync");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .filter(|p| {
            let file = p.file_name().unwrap().to_string_lossy();
            !SYNC_TOO_BIG_FOR_THE_ORACLE.contains(&file.as_ref())
        })
        .collect();
    files.sort();
    let mut checked = 0;
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let prog = parse(&name, &src);
        for model in [Model::Rc11, Model::Sc] {
            match compare_with(&name, &prog, model, 2) {
                Ok(c) => eprintln!("{name} [{model}]: {c:?} agree"),
                Err(e) => panic!("{e}"),
            }
        }
        for model in [Model::Tso, Model::Pso, Model::Armv8] {
            let st = explorer_size(&prog, model, 2).0;
            if st.visited() <= 6 {
                if let Err(e) = compare_with(&name, &prog, model, 2) {
                    panic!("{e}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} fixtures compared");
}

/// A program whose globals are synchronisation cells of the given roles (`None`: a plain
/// atomic).
fn sync_program(
    cells: &[(&str, Option<SyncRole>)],
    funcs: Vec<Function>,
    main: Function,
) -> Program {
    let mut p = prog_of(&cells.iter().map(|c| c.0).collect::<Vec<_>>(), funcs, main);
    for (g, (_, role)) in p.globals.iter_mut().zip(cells) {
        g.sync = role.map(|role| fensyn::ir::SyncCell {
            kind: fensyn::ir::SyncKind::Mutex,
            role,
            object: g.name.clone(),
        });
    }
    p
}

/// The deadlock rules on small hand-built programs, against the oracle's own implementation
/// and known counts: a blocked read of a `Wait` cell's last write, a registration (`Acquire`
/// load of a `Signals` cell) after the last signal, and no report in graphs that are not
/// settled (a thread blocked on an older write).
#[test]
fn deadlock_rules_agree_with_the_oracle() {
    use MemOrder::*;
    let load = |dst, loc, order| Instr::Load {
        dst,
        loc: Addr::Fixed(loc),
        order,
    };
    // 1. T1 registers a wait, T2 signals: the registration reads the initial value (the
    //    signal comes after it) or the signal, the last write — a lost wake-up.
    let waiter = function("w", 1, None, vec![load(0, 0, Acquire), Instr::Return]);
    let signaller = function(
        "s",
        1,
        None,
        vec![rmw(0, 0, RmwOp::Add, c(1), Relaxed), Instr::Return],
    );
    let lost = sync_program(
        &[("sig", Some(SyncRole::Signals))],
        vec![waiter, signaller],
        spawn_join_main(2, 0, vec![]),
    );
    // 2. Two threads take a lock word and never release it: the loser's CAS reads the
    //    winner's write, the last one — a deadlock in both orders.
    let locker = |name: &str, me: i64| {
        function(
            name,
            2,
            None,
            vec![
                cas(0, 1, 0, c(0), c(me), Acquire, Relaxed),
                assume(r(0)),
                Instr::Return,
            ],
        )
    };
    let stuck = sync_program(
        &[("m", Some(SyncRole::Wait))],
        vec![locker("a", 1), locker("b", 2)],
        spawn_join_main(2, 0, vec![]),
    );
    // 3. The first thread releases the word, the second never does. First thread first: the
    //    second takes the word (complete); blocking on the first's lock write, an older write,
    //    is a stale wait (not visited, see `oracle_with`). Second thread first: the first
    //    blocks on the last write, a deadlock.
    let release = Instr::Store {
        loc: Addr::Fixed(0),
        val: c(0),
        order: Release,
    };
    let releaser = function(
        "r",
        2,
        None,
        vec![
            cas(0, 1, 0, c(0), c(1), Acquire, Relaxed),
            assume(r(0)),
            release.clone(),
            Instr::Return,
        ],
    );
    let released = sync_program(
        &[("m", Some(SyncRole::Wait))],
        vec![releaser, locker("b", 2)],
        spawn_join_main(2, 0, vec![]),
    );
    // 4. A cascade: the holder waits for a flag (a plain atomic) that a third thread sets,
    //    then releases. When the holder read the flag's older value, the thread waiting for
    //    the lock read its last write, but the graph is not settled: no deadlock. When the
    //    other thread took the lock first, the holder blocks on its last write: a deadlock.
    //    When the holder read the flag and released, the other thread takes the lock (its
    //    wait on the holder's lock write would be stale: not visited).
    let holder = function(
        "h",
        3,
        None,
        vec![
            cas(0, 1, 0, c(0), c(1), Acquire, Relaxed),
            assume(r(0)),
            load(2, 1, Acquire),
            assume(r(2)),
            release,
            Instr::Return,
        ],
    );
    let setter = function(
        "f",
        0,
        None,
        vec![
            Instr::Store {
                loc: Addr::Fixed(1),
                val: c(1),
                order: Release,
            },
            Instr::Return,
        ],
    );
    let cascade = sync_program(
        &[("m", Some(SyncRole::Wait)), ("flag", None)],
        vec![holder, locker("b", 2), setter],
        spawn_join_main(3, 0, vec![]),
    );
    let cases: [(&str, Program, [u64; 4]); 4] = [
        ("lost wake-up", lost, [2, 0, 0, 1]),
        ("stuck lock", stuck, [0, 2, 0, 2]),
        ("released lock", released, [1, 1, 0, 1]),
        ("cascade", cascade, [1, 2, 0, 1]),
    ];
    let mut failures = Vec::new();
    for (name, prog, want) in cases {
        match compare_with(name, &prog, Model::Rc11, 2) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!("{name}: {got:?}, expected {want:?}")),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[path = "common/families.rs"]
mod families;

#[path = "bruteforce/fixes.rs"]
mod fixes;

/// The parametric benchmark families at sizes the oracle can enumerate: the explorer finds
/// exactly the oracle's graphs (executions, blocked, cut) under sc and rc11.
#[test]
fn benchmark_families_agree_with_the_oracle() {
    let cases = [
        ("fib_bench(1)", families::fib_bench(1), 2),
        ("casrot(4)", families::casrot(4), 2),
        ("peterson(1)", families::peterson(1), 2),
        ("dekker(1)", families::dekker(1), 2),
        ("lastzero(3)", families::lastzero(3), 5),
    ];
    for (name, src, unroll) in cases {
        let prog = parse(name, &src);
        for model in [Model::Sc, Model::Rc11] {
            let counts = compare_with(name, &prog, model, unroll)
                .unwrap_or_else(|e| panic!("{name} under {model}: {e}"));
            eprintln!("{name} {model}: {counts:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hardware models (tso, pso) against the oracle's own x86-TSO / PSO axioms.
// ---------------------------------------------------------------------------------------------

/// The litmus fixtures and random programs under `tso` and `pso`: the explorer (checking the
/// full hardware axioms at every step) against the oracle's independent axioms.
#[test]
fn hardware_models_agree_with_the_oracle() {
    let mut failures = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut compared = 0;
    for dir in ["litmus", "hardware"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "c"))
            .collect();
        files.sort();
        for path in files {
            let name = path.display().to_string();
            let prog = parse(&name, &std::fs::read_to_string(&path).unwrap());
            // The oracle enumerates every combination of runs, rf and mo: keep to programs
            // with few executions (the mutual exclusion programs of the TSO/PSO paper with
            // more are covered by tests/hardware.rs).
            let mut small = true;
            for model in [Model::Tso, Model::Pso] {
                let st = explorer_with(&prog, model, 2).stats;
                small &= st.visited() <= 80;
            }
            if !small {
                eprintln!("skipping {name}: too many executions for the oracle");
                continue;
            }
            for model in [Model::Tso, Model::Pso] {
                if let Err(e) = compare_with(&name, &prog, model, 2) {
                    failures.push(e);
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} fixtures compared");
    let mut rng = Rng(0x7505_0950_feed_0042);
    let total = random_campaign(
        "hw random",
        &mut rng,
        150,
        &[Model::Tso, Model::Pso],
        &mut failures,
        |_| {},
    );
    eprintln!("hardware random programs: [executions, blocked, bounded, buggy] = {total:?}");
    assert!(total[0] > 300, "random programs too small: {total:?}");
    assert_agreement(&failures);
}

/// The textbook outcomes on x86-TSO and PSO (Owens et al.; the TSO/PSO seed paper): SB is
/// allowed on both, MP and 2+2W are forbidden on TSO and allowed on PSO, IRIW and WRC are
/// forbidden on both (both are multi-copy atomic), and `p: x=1; r=x || q: x=2` has exactly
/// 3 executions under TSO (the seed's Fig. 5 and its three chronological traces).
#[test]
fn hardware_litmus_counts() {
    let file = |f: &str| std::fs::read_to_string(fixture_dir().join(f)).unwrap();
    let forwarding = format!(
        "{HEADER}atomic_int x; int r;\n\
         void *p(void *a) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); \
         r = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
         void *q(void *a) {{ atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
         int main(void) {{ pthread_t a, b; pthread_create(&a, NULL, p, NULL); \
         pthread_create(&b, NULL, q, NULL); pthread_join(a, NULL); pthread_join(b, NULL); \
         return 0; }}\n"
    );
    // (name, source, [sc, tso, pso] executions, [sc, tso, pso] buggy)
    let cases: Vec<(&str, String, [u64; 3], [u64; 3])> = vec![
        ("sb", file("sb.c"), [3, 4, 4], [0, 1, 1]),
        ("mp", file("mp.c"), [3, 3, 4], [0, 0, 1]),
        ("2+2w", file("2+2w.c"), [3, 3, 4], [0, 0, 1]),
        ("iriw", file("iriw.c"), [15, 15, 15], [0, 0, 0]),
        ("wrc", file("wrc.c"), [7, 7, 7], [0, 0, 0]),
        ("lb", file("lb.c"), [3, 3, 3], [0, 0, 0]),
        ("forwarding", forwarding, [3, 3, 3], [0, 0, 0]),
        // MP with a release store: `stbar; st` on PSO keeps the data before the flag.
        ("mp release", file("mp_rel.c"), [3, 3, 3], [0, 0, 0]),
    ];
    for (name, src, execs, buggy) in cases {
        let prog = fensyn::frontend::parse_c(name, &src).unwrap();
        for (i, model) in [Model::Sc, Model::Tso, Model::Pso].into_iter().enumerate() {
            let want = oracle(&prog, model);
            let want_buggy = want.values().filter(|(b, _)| *b).count() as u64;
            assert_eq!(want.len() as u64, execs[i], "oracle: {name} under {model}");
            assert_eq!(want_buggy, buggy[i], "oracle buggy: {name} under {model}");
            let got = explorer(&prog, model);
            assert_eq!(got.executions, execs[i], "explorer: {name} under {model}");
            assert_eq!(
                got.stats.buggy, buggy[i],
                "explorer buggy: {name} under {model}"
            );
        }
    }
}

/// ARMv8 against the oracle's own reading of the POPL 2018 model (and its own dependency
/// tracking): the litmus fixtures, the hardware fixtures and random programs (whose computed
/// addresses, branches and stored values give address, control and data dependencies).
#[test]
fn armv8_agrees_with_the_oracle() {
    let mut failures = Vec::new();
    let mut progs: Vec<(String, Program)> = Vec::new();
    for dir in ["litmus", "hardware"] {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(dir);
        let mut files: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "c"))
            .collect();
        files.sort();
        for p in files {
            let name = p.display().to_string();
            progs.push((
                name.clone(),
                parse(&name, &std::fs::read_to_string(&p).unwrap()),
            ));
        }
    }
    let mut compared = 0;
    for (name, prog) in &progs {
        // Programs with many executions take the oracle too long (see
        // hardware_models_agree_with_the_oracle).
        let st = explorer_size(prog, Model::Armv8, 2).0;
        if st.visited() > 80 {
            continue;
        }
        if let Err(e) = compare_with(name, prog, Model::Armv8, 2) {
            failures.push(e);
        }
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} fixtures compared");
    let mut rng = Rng(0x0a58_0a58_dead_beef);
    let total = random_campaign(
        "armv8 random",
        &mut rng,
        150,
        &[Model::Armv8],
        &mut failures,
        |_| {},
    );
    eprintln!("armv8 random programs: [executions, blocked, bounded, buggy] = {total:?}");
    assert!(total[0] > 300, "random programs too small: {total:?}");
    assert_agreement(&failures);
}

/// Textbook ARMv8 outcomes (Pulte et al. POPL 2018; the herd ARMv8 litmus results): SB, MP,
/// 2+2W, relaxed IRIW and WRC are allowed; IRIW+addrs is forbidden (multicopy atomicity);
/// MP with release / acquire is forbidden; a release fence is `dmb ish` and forbids SB.
#[test]
fn armv8_litmus_counts() {
    let file = |f: &str| std::fs::read_to_string(fixture_dir().join(f)).unwrap();
    let hw = |f: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/hardware")
                .join(f),
        )
        .unwrap()
    };
    let iriw_acq = file("iriw.c").replace(
        "a = atomic_load_explicit(&x, memory_order_relaxed)",
        "a = atomic_load_explicit(&x, memory_order_acquire)",
    );
    let iriw_acq = iriw_acq.replace(
        "c = atomic_load_explicit(&y, memory_order_relaxed)",
        "c = atomic_load_explicit(&y, memory_order_acquire)",
    );
    // (name, source, [rc11, armv8] executions, [rc11, armv8] buggy)
    let cases: Vec<(&str, String, [u64; 2], [u64; 2])> = vec![
        ("sb", file("sb.c"), [4, 4], [1, 1]),
        ("mp", file("mp.c"), [4, 4], [1, 1]),
        ("2+2w", file("2+2w.c"), [4, 4], [1, 1]),
        ("iriw", file("iriw.c"), [16, 16], [1, 1]),
        ("wrc", file("wrc.c"), [8, 8], [1, 1]),
        ("mp rel/acq", file("mp_relacq.c"), [3, 3], [0, 0]),
        ("sb release fences", file("sb_fence_rel.c"), [4, 3], [1, 0]),
        ("iriw+addrs", hw("iriw_addrs.c"), [16, 15], [1, 0]),
        // The MoCA seed's example with acquire first loads: ldar orders the second load.
        ("iriw acquire", iriw_acq, [16, 15], [1, 0]),
        // Control dependencies do not order loads on ARMv8 (only an isb would).
        ("iriw+ctrls", hw("moca_iriw.c"), [9, 9], [1, 1]),
    ];
    for (name, src, execs, buggy) in cases {
        let prog = fensyn::frontend::parse_c(name, &src).unwrap();
        for (i, model) in [Model::Rc11, Model::Armv8].into_iter().enumerate() {
            let want = oracle(&prog, model);
            let want_buggy = want.values().filter(|(b, _)| *b).count() as u64;
            assert_eq!(want.len() as u64, execs[i], "oracle: {name} under {model}");
            assert_eq!(want_buggy, buggy[i], "oracle buggy: {name} under {model}");
            let got = explorer(&prog, model);
            assert_eq!(got.executions, execs[i], "explorer: {name} under {model}");
            assert_eq!(
                got.stats.buggy, buggy[i],
                "explorer buggy: {name} under {model}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Coarser equivalences (`--equiv rf|value`) and parallel exploration against the oracle.
// ---------------------------------------------------------------------------------------------

/// The reads-from class of a graph: its canonical key without the coherence order.
fn rf_key(g: &ExecutionGraph) -> String {
    let k = g.canonical_key();
    k[..k.find("mo0:").unwrap_or(k.len())].to_string()
}

/// The value class of a graph as `--equiv value` defines it: per thread, the values read, and
/// the source of every read whose source can decide happens-before (an atomic acquire read,
/// the read of an RMW, or any atomic read when the program has an acquire fence) when the
/// program has non-atomic accesses.
fn value_class(prog: &Program, g: &ExecutionGraph) -> String {
    let instrs = || prog.functions.iter().flat_map(|f| f.body.iter());
    let non_atomic = instrs().any(|i| i.access().is_some_and(|(_, atomic)| !atomic));
    let acquire_fence = instrs().any(|i| matches!(i, Instr::Fence { order } if order.is_acquire()));
    let mut s = String::new();
    for (t, tr) in g.threads.iter().enumerate() {
        let _ = write!(s, "T{t}:");
        for &e in &tr.events {
            let ev = &g.events[e];
            if ev.kind != EventKind::Read {
                continue;
            }
            let rmw = g.rmw.iter().any(|&(r, _)| r == e);
            let sync = ev.order.is_atomic() && (ev.order.is_acquire() || rmw || acquire_fence);
            let _ = write!(s, " {}{}", ev.value, if rmw { "+" } else { "" });
            if non_atomic && sync {
                let src = g.rf[e].map(|w| match g.index_in_thread(w) {
                    Some(i) => format!("{}.{i}", g.events[w].thread),
                    None => format!("init{:?}", g.events[w].loc),
                });
                let _ = write!(s, "<{src:?}");
            }
        }
        s.push('\n');
    }
    s
}

/// Under SC, `--equiv rf` visits exactly one graph per reads-from class of the oracle's SC
/// graphs and `--equiv value` one per value class; every graph visited is itself one of the
/// oracle's SC graphs (the witness gives it a real coherence order and sources); and the
/// counts, bugs included, are those of the classes. `--jobs 2` and `--jobs 3` give the same
/// counts and the same buggy graphs in the same order as one thread, for every equivalence.
fn compare_coarse(name: &str, prog: &Program) -> Result<(), String> {
    if std::env::var("COARSE_GRAPH_TOO").is_ok() {
        compare_with(name, prog, Model::Sc, 2)?;
    }
    // Without liveness: whether a spinning thread's reads read the latest writes depends on
    // mo, which differs between the graphs of one class (the explorer reports it when the
    // class's witness shows it; see README, liveness).
    LIVENESS.with(|l| l.set(false));
    let oracle_graphs = oracle_unfiltered(prog, Model::Sc, 2);
    LIVENESS.with(|l| l.set(true));
    for (equiv, key) in [
        (
            Equiv::Rf,
            &(|_: &Program, g: &ExecutionGraph| rf_key(g))
                as &dyn Fn(&Program, &ExecutionGraph) -> String,
        ),
        (Equiv::Value, &value_class),
    ] {
        let mut want: BTreeMap<String, &(bool, ExecutionGraph)> = BTreeMap::new();
        for v in oracle_graphs.values() {
            want.entry(key(prog, &v.1)).or_insert(v);
        }
        let want_counts = classify(want.values().copied());
        let mut seen = BTreeSet::new();
        let mut msg = String::new();
        let limits = Limits {
            unroll: Some(2),
            equiv,
            spurious_cas: SPURIOUS_CAS.with(|s| s.get()),
            verify_incremental: true,
            ..Limits::default()
        };
        let stats = explore(prog, Model::Sc, limits.clone(), |g| {
            let k = key(prog, g);
            if !seen.insert(k.clone()) {
                let _ = writeln!(msg, "{equiv:?}: class visited twice:\n{k}");
            }
            match oracle_graphs.get(&sym_key(g)) {
                None => {
                    let _ = writeln!(msg, "{equiv:?}: not an SC graph:\n{}", g.canonical_key());
                }
                Some((buggy, og)) if *buggy == g.bugs.is_empty() => {
                    let _ =
                        writeln!(
                        msg,
                        "{equiv:?}: bugs {:?}, oracle: {} / on its own graph {}\n{}\n{:?}\n{:?}",
                        g.bugs,
                        describe_bugs_oracle(g, Model::Sc),
                        describe_bugs_oracle(og, Model::Sc),
                        g.canonical_key(),
                        g.events.iter().map(|e| (e.thread, e.kind, e.order)).collect::<Vec<_>>(),
                        og.events.iter().map(|e| (e.thread, e.kind, e.order)).collect::<Vec<_>>(),
                    );
                }
                Some(_) => {}
            }
            Control::Continue
        });
        let got = [stats.executions, stats.blocked, stats.bounded, stats.buggy];
        if got != want_counts {
            let _ = writeln!(msg, "{equiv:?}: counts {got:?}, oracle {want_counts:?}");
            // Classes whose graphs disagree on having a bug.
            for (k, first) in &want {
                for (buggy, g) in oracle_graphs.values() {
                    if key(prog, g) == *k && *buggy != first.0 {
                        let _ = writeln!(
                            msg,
                            "mixed class:\n{}{}\nvs\n{}{}",
                            first.1.canonical_key(),
                            describe_bugs_oracle(&first.1, Model::Sc),
                            g.canonical_key(),
                            describe_bugs_oracle(g, Model::Sc)
                        );
                        break;
                    }
                }
            }
        }
        let missing: Vec<_> = want.keys().filter(|k| !seen.contains(*k)).collect();
        if !missing.is_empty() {
            let _ = writeln!(msg, "{equiv:?}: missed classes {missing:?}");
        }
        // Parallel runs: identical counts and buggy graphs.
        let opts = |jobs| fensyn::checker::CheckOptions {
            model: Model::Sc,
            limits: Limits {
                jobs,
                verify_incremental: false,
                ..limits.clone()
            },
            ..Default::default()
        };
        let one = fensyn::checker::check(prog, &opts(1));
        for jobs in [2, 3] {
            let par = fensyn::checker::check(prog, &opts(jobs));
            let keys = |r: &fensyn::checker::CheckResult| -> Vec<String> {
                r.buggy.iter().map(|g| g.canonical_key()).collect()
            };
            if par.stats.executions != one.stats.executions
                || par.stats.blocked != one.stats.blocked
                || par.stats.buggy != one.stats.buggy
                || keys(&par) != keys(&one)
            {
                let _ = writeln!(
                    msg,
                    "{equiv:?} --jobs {jobs}: {:?} vs one thread {:?}",
                    par.stats, one.stats
                );
            }
        }
        if !msg.is_empty() {
            return Err(format!("{name}:\n{msg}"));
        }
    }
    Ok(())
}

#[test]
fn coarse_equivalences_and_jobs_agree_with_the_oracle() {
    let mut failures = Vec::new();
    for f in &litmus_files() {
        if let Err(e) = compare_coarse(f, &fixture(f)) {
            failures.push(e);
        }
    }
    for (name, prog, _) in rmw_programs() {
        if let Err(e) = compare_coarse(name, &prog) {
            failures.push(e);
        }
    }
    let env = env_number::<u64>;
    let mut rng = Rng(env("BRUTEFORCE_SEED").unwrap_or(0x0e90_e95e_ed42_4242) | 1);
    for i in 0..env("BRUTEFORCE_RANDOM").unwrap_or(200) {
        let prog = random_program(&mut rng);
        // Every other program with spurious weak-CAS failures.
        SPURIOUS_CAS.with(|s| s.set(i % 2 == 1));
        let name = format!("random #{i}");
        let result = std::panic::catch_unwind(|| compare_coarse(&name, &prog))
            .unwrap_or_else(|_| Err(format!("{name}: the explorer panicked\n")));
        if let Err(e) = result {
            failures.push(format!("{e}program: {:#?}", prog.functions));
        }
    }
    SPURIOUS_CAS.with(|s| s.set(false));
    assert_agreement(&failures);
}

// ---------------------------------------------------------------------------------------------
// Nondeterministic values (`__VERIFIER_nondet_*`, `--nondet`): each value is its own run in
// the oracle, a choice event in the explorer (whose revisits must not visit a graph twice).
// ---------------------------------------------------------------------------------------------

#[test]
fn nondeterministic_values_agree_with_the_oracle() {
    let src = |body: &str| {
        format!(
            "#include <pthread.h>\n#include <stdatomic.h>\n#include <assert.h>\n\
             atomic_int x, y;\n{body}"
        )
    };
    let programs = [
        (
            "nondet_store",
            src("void *t(void *a) { int v = __VERIFIER_nondet_int();
  atomic_store_explicit(&x, v, memory_order_relaxed); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL);
  int r = atomic_load_explicit(&x, memory_order_relaxed); int b = __VERIFIER_nondet_bool();
  assert(r != 2 || b); pthread_join(h, NULL); return 0; }"),
        ),
        (
            "nondet_after_revisited_read",
            src(
                "void *t1(void *a) { int r = atomic_load_explicit(&x, memory_order_relaxed);
  int c = __VERIFIER_nondet_int(); atomic_store_explicit(&y, r + c, memory_order_relaxed);
  return NULL; }
void *t2(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed);
  int s = atomic_load_explicit(&y, memory_order_relaxed); assert(s != 3); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL); return 0; }",
            ),
        ),
    ];
    let defines: Vec<(String, i64)> = fensyn::frontend::nondet_defines((0, 2)).to_vec();
    let progs: Vec<(String, Program)> = programs
        .iter()
        .map(|(n, s)| {
            let p =
                fensyn::frontend::parse_with(&format!("{n}.c"), s, fensyn::ir::Lang::C, &defines)
                    .unwrap_or_else(|d| panic!("{n}: {d}"));
            (n.to_string(), p)
        })
        .collect();
    check_all(&progs);
}
