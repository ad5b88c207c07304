//! RC11's SC axiom (psc acyclic) kept up to date as events are added, instead of recomputed.
//!
//! The explorer adds each event `e` after all its po ∪ rf-predecessors, so `e` is hb-maximal
//! and po-maximal when it arrives: hb, po, mo, rf and fr among the events already there do not
//! change (a write inserted in the middle of mo keeps the order of the others). Every edge
//! psc gains is therefore made of a path through `e`, and there are only three kinds
//! (docs/memory-models.md §2, psc = psc_base ∪ psc_F):
//!
//! * **into `e`**, when `e` is a seq_cst access or fence: `u → e` for `u ∈ start(x)`,
//!   `x scb y`, `e ∈ end(y)` (for an access `y = e`; for a fence also every `y` hb-before it),
//!   and for a fence psc_F's `F → e` (`F hb e`, or `F hb a eco b hb e`);
//! * **out of `e`**, when `e` is a seq_cst access: `e → end(y)` for `y` mo- or fr-after `e`
//!   (nothing is po-, hb- or hb|loc-after `e` yet; a fence has no outgoing edge);
//! * **between old events**: `F → v` for every seq_cst fence `F` hb-before `e` and every `v`
//!   in `end(y)` or, through psc_F, a seq_cst fence hb-after a `y` or a reader of `y`, for `y`
//!   mo- or fr-after `e` (`F hb e scb y` and `F hb e eco b hb F'`).
//!
//! Here `start(x)` is `x` if seq_cst plus the seq_cst fences hb-before-or-equal to `x`, and
//! `end(y)` is `y` if seq_cst plus the seq_cst fences hb-after-or-equal to `y`. Adding those
//! edges to an acyclic psc makes a cycle exactly when `e` now reaches itself or some `v` above
//! reaches some `F` above: two searches over the seq_cst events. An event is a few passes over
//! the graph (the per-thread prefixes its clock names), where recomputing psc's rows is
//! quadratic. Cycles never go away as events are added, so the verdict is sticky.
//!
//! Initialisation writes are never seq_cst, nothing is hb-before them and nothing psc needs
//! starts or ends there, so they are left out, as [`Views::psc_acyclic`] does.
//!
//! Only reachability matters, so the edges into `e` are kept to one per thread: the po-latest
//! of its psc predecessors there. po is part of scb, so every seq_cst event has an edge to the
//! next seq_cst event of its thread (recorded when that one was added, by induction): an
//! omitted edge `u → e` is implied by `u →* u' → e`. Likewise the candidates for `x` (whose
//! hb-predecessors are joined) are kept as the po-latest per thread, since hb includes po. An
//! event then costs a few passes over the threads and short walks back along them, not passes
//! over every event hb-before it.

use super::{slot, Views};
use crate::checker::graph::{reset, Event, EventId, EventKind, ExecutionGraph, INIT_THREAD};
use crate::ir::Loc;

/// The psc graph of the seq_cst events of a partial graph, and whether it has a cycle.
#[derive(Clone, Debug, Default)]
pub struct Psc {
    /// The psc successors of every event, as bit rows over event ids (empty for the events
    /// that are not seq_cst).
    succ: BitRows,
    /// The seq_cst fences, in id order.
    fences: Vec<EventId>,
    /// psc has a cycle (then nothing more is recorded: the graph is inconsistent for good).
    cyclic: bool,
    /// Whether some seq_cst access was added (else every psc edge joins two fences).
    sc_access: bool,
    /// For every event: one more than the index in its thread of the latest seq_cst event
    /// po-before or equal to it in its thread, 0 when there is none.
    last_sc: Vec<u32>,
    /// The joins, in id order (few: they stand for the spawn and join edges of po).
    joins: Vec<EventId>,
}

thread_local! {
    /// The working buffers of [`Psc::add`], shared by every psc graph of the thread (states
    /// are copied often; their buffers would start empty and grow again each time).
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Working buffers of [`Psc::add`] (see where each is used for what it holds): reused from
/// one event to the next, so that an event costs no allocation. Not part of any state.
#[derive(Debug, Default)]
struct Scratch {
    kz: Vec<usize>,
    top: Vec<usize>,
    top_sc: Vec<u32>,
    pk: Vec<usize>,
    work: Vec<(usize, usize)>,
    spawner_seen: Vec<bool>,
    joined: Vec<bool>,
    c_clock: Vec<u32>,
    eco_bounds: Vec<(usize, usize)>,
    bound: Vec<usize>,
    pos: Vec<usize>,
    reach: Vec<u32>,
    eco_reach: Vec<u32>,
    best: Vec<u32>,
    out: Vec<EventId>,
    before: Vec<EventId>,
    readers: Readers,
    /// The readers of the new event's mo / fr successors.
    ys_readers: Vec<EventId>,
    ends: Vec<u64>,
    targets: Vec<u64>,
    seen: Vec<u64>,
    stack: Vec<EventId>,
}

/// One bit row over event ids per event, stored flat with one stride, so that a copy is one
/// allocation. Rows and their width only grow, as the graph does.
#[derive(Clone, Debug, Default)]
struct BitRows {
    /// Words per row.
    stride: usize,
    bits: Vec<u64>,
}

impl BitRows {
    /// Rows for `n` events, each wide enough for `n` bits.
    fn grow(&mut self, n: usize) {
        let need = n.div_ceil(64);
        if need > self.stride {
            let stride = need.max(2 * self.stride);
            let rows = self.bits.len().checked_div(self.stride).unwrap_or(0);
            let mut bits = vec![0; rows * stride];
            for r in 0..rows {
                bits[r * stride..r * stride + self.stride].copy_from_slice(self.row(r));
            }
            *self = BitRows { stride, bits };
        }
        if self.bits.len() < n * self.stride {
            self.bits.resize(n * self.stride, 0);
        }
    }

    fn row(&self, a: EventId) -> &[u64] {
        &self.bits[a * self.stride..(a + 1) * self.stride]
    }

    fn row_mut(&mut self, a: EventId) -> &mut [u64] {
        &mut self.bits[a * self.stride..(a + 1) * self.stride]
    }

    /// A copy with room for `more` rows.
    fn fork(&self, more: usize) -> BitRows {
        BitRows {
            stride: self.stride,
            bits: crate::checker::graph::with_room(&self.bits, more * self.stride),
        }
    }
}

/// Sets bit `b` of a row wide enough for it.
fn set_in(bits: &mut [u64], b: usize) {
    bits[b / 64] |= 1u64 << (b % 64);
}

fn set(bits: &mut Vec<u64>, b: usize) {
    let w = b / 64;
    if bits.len() <= w {
        bits.resize(w + 1, 0);
    }
    bits[w] |= 1u64 << (b % 64);
}

fn has(bits: &[u64], b: usize) -> bool {
    bits.get(b / 64).is_some_and(|&x| x >> (b % 64) & 1 == 1)
}

/// `dst |= src`, `dst` being at least as long as `src`'s bits need.
fn or_into(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= *s;
    }
}

fn is_sc(ev: &Event) -> bool {
    ev.thread != INIT_THREAD && ev.order.is_sc() && (ev.is_access() || ev.is_fence())
}

/// `(a, b) ∈ po|≠loc` given `a po b`: unless both access the same location.
fn other_loc(a: &Event, b: &Event) -> bool {
    a.loc.is_none() || a.loc != b.loc
}

/// The readers of every write, as one compressed list.
#[derive(Debug, Default)]
pub(super) struct Readers {
    start: Vec<u32>,
    list: Vec<EventId>,
}

impl Readers {
    pub(super) fn new(g: &ExecutionGraph) -> Readers {
        let mut readers = Readers::default();
        readers.fill(g);
        readers
    }

    /// Refills with the readers of `g`'s writes, keeping the allocations.
    fn fill(&mut self, g: &ExecutionGraph) {
        let n = g.len();
        reset(&mut self.start, n + 2, 0);
        for w in g.rf.iter().flatten() {
            self.start[*w + 2] += 1;
        }
        for i in 0..n {
            self.start[i + 2] += self.start[i + 1];
        }
        // `start[w + 1]` is where `w`'s readers go, and ends where the next one's start.
        reset(&mut self.list, self.start[n + 1] as usize, 0);
        for (r, w) in g.rf.iter().enumerate() {
            if let Some(w) = *w {
                let at = &mut self.start[w + 1];
                self.list[*at as usize] = r;
                *at += 1;
            }
        }
        self.start.pop();
    }

    pub(super) fn of(&self, w: EventId) -> &[EventId] {
        &self.list[self.start[w] as usize..self.start[w + 1] as usize]
    }
}

/// What the events po-after an event, within some prefix of its thread, look like: used to
/// tell whether the event is po|≠loc-before one of them.
#[derive(Clone, Copy, PartialEq)]
enum Later {
    Nothing,
    /// Every later event accesses this location.
    Only(Loc),
    /// Later events at two locations, or one without a location.
    Mixed,
}

impl Later {
    fn see(self, ev: &Event) -> Later {
        match (self, ev.loc) {
            (Later::Nothing, Some(x)) => Later::Only(x),
            (Later::Only(y), Some(x)) if x == y => self,
            _ => Later::Mixed,
        }
    }

    /// Some later event is po|≠loc-after `ev`.
    fn other_than(self, ev: &Event) -> bool {
        match self {
            Later::Nothing => false,
            Later::Only(y) => ev.loc != Some(y),
            Later::Mixed => true,
        }
    }
}

/// A vector clock being joined.
fn join(acc: &mut Vec<u32>, c: &[u32]) {
    if acc.len() < c.len() {
        acc.resize(c.len(), 0);
    }
    for (a, b) in acc.iter_mut().zip(c) {
        *a = (*a).max(*b);
    }
}

impl Psc {
    /// A copy to be extended by about `more` events.
    pub(super) fn fork(&self, more: usize) -> Psc {
        Psc {
            succ: self.succ.fork(more),
            fences: self.fences.clone(),
            cyclic: self.cyclic,
            sc_access: self.sc_access,
            last_sc: crate::checker::graph::with_room(&self.last_sc, more),
            joins: self.joins.clone(),
        }
    }

    /// Whether psc has a cycle.
    pub fn cyclic(&self) -> bool {
        self.cyclic
    }

    /// Records event `e`, the last one of `g`, whose views are already in `v`.
    pub fn add(&mut self, g: &ExecutionGraph, v: &Views, e: EventId) {
        self.succ.grow(g.len());
        let ev = &g.events[e];
        let e_sc = is_sc(ev);
        self.note(g, v, e);
        if self.cyclic {
            return;
        }
        let ys = mo_after(g, e);
        // An event that is not seq_cst adds edges only between fences before it and what is
        // mo- or fr-after it: most have nothing after them (they read or are the latest write).
        if !e_sc && ys.is_empty() {
            return;
        }
        SCRATCH.with_borrow_mut(|s| self.add_with(g, v, (e, ys), s));
    }

    /// [`Psc::add`] past its quick exits, for `e` and its mo / fr successors `ys`, with the
    /// working buffers `s`.
    fn add_with(
        &mut self,
        g: &ExecutionGraph,
        v: &Views,
        (e, ys): (EventId, &[EventId]),
        s: &mut Scratch,
    ) {
        let ev = &g.events[e];
        let e_sc = is_sc(ev);
        s.before.clear();
        let hb = |a: EventId, b: EventId| hb_strict(v, g, a, b);
        s.before
            .extend(self.fences.iter().copied().filter(|&f| hb(f, e)));
        if e_sc || !s.before.is_empty() {
            // Readers are asked for by the edges between old events (`before`) through e's
            // mo / fr successors (the readers of those few writes: one pass over rf), and by
            // psc_F's predecessors of a seq_cst fence (the readers of every write).
            s.ys_readers.clear();
            if !s.before.is_empty() && !ys.is_empty() {
                s.ys_readers
                    .extend((0..g.len()).filter(|&r| g.rf[r].is_some_and(|w| ys.contains(&w))));
            }
            if e_sc && ev.is_fence() {
                s.readers.fill(g);
            }
            self.add_edges(g, v, (e, ys), s);
        }
    }

    /// [`Psc::add`]'s edges for `e` (mo / fr successors `ys`): out of it, between old events
    /// and, for a seq_cst `e`, into it; then whether they close a cycle. `s.before` holds the
    /// seq_cst fences hb-before `e`, `s.ys_readers` the readers of `ys` when `before` is not
    /// empty, and `s.readers` the readers of every write for a seq_cst fence `e`.
    fn add_edges(
        &mut self,
        g: &ExecutionGraph,
        v: &Views,
        (e, ys): (EventId, &[EventId]),
        s: &mut Scratch,
    ) {
        let ev = &g.events[e];
        let hb = |a: EventId, b: EventId| hb_strict(v, g, a, b);
        // end(y) for the mo / fr successors y of e, and psc_F's fences after their readers.
        reset(&mut s.ends, self.succ.stride, 0);
        for &y in ys {
            if is_sc(&g.events[y]) {
                set(&mut s.ends, y);
            }
        }
        for &f in &self.fences {
            if ys.iter().any(|&y| hb(y, f)) {
                set(&mut s.ends, f);
            }
        }
        s.targets.clone_from(&s.ends);
        if !s.before.is_empty() {
            for &f in &self.fences {
                if !has(&s.targets, f) && s.ys_readers.iter().any(|&r| hb(r, f)) {
                    set(&mut s.targets, f);
                }
            }
            for &f in &s.before {
                or_into(self.succ.row_mut(f), &s.targets);
            }
        }
        if is_sc(ev) {
            if ev.is_access() {
                self.succ.row_mut(e).copy_from_slice(&s.ends);
            }
            self.sc_access |= ev.is_access();
            // With no seq_cst access, a fence's psc predecessors are fences, and every fence
            // hb-before it is one (psc_F): when all are, they are the answer.
            if ev.is_fence() && !self.sc_access && self.fences.iter().all(|&f| v.hb_eq(g, f, e)) {
                s.out.clear();
                s.out.extend_from_slice(&self.fences);
            } else {
                self.predecessors(g, v, e, s);
            }
            for &u in &s.out {
                set_in(self.succ.row_mut(u), e);
            }
            if ev.is_fence() {
                self.fences.push(e);
            }
            if self.reaches(self.succ.row(e), &[e], s) {
                self.cyclic = true;
                return;
            }
        }
        if !s.before.is_empty() {
            let (targets, before) = (
                std::mem::take(&mut s.targets),
                std::mem::take(&mut s.before),
            );
            self.cyclic = self.reaches(&targets, &before, s);
            (s.targets, s.before) = (targets, before);
        }
    }

    /// Records `e`'s latest seq_cst po-predecessor-or-self and whether it is a join.
    fn note(&mut self, g: &ExecutionGraph, v: &Views, e: EventId) {
        let ev = &g.events[e];
        let i = v.index[e] as usize;
        let prev = match i.checked_sub(1) {
            Some(p) => self.last_sc[g.threads[ev.thread].events[p]],
            None => 0,
        };
        self.last_sc.resize(g.len(), 0);
        self.last_sc[e] = if is_sc(ev) { i as u32 + 1 } else { prev };
        if matches!(ev.kind, EventKind::Join { .. }) {
            self.joins.push(e);
        }
    }

    /// Whether some event of `from` reaches (in zero or more psc steps) one of `to`
    /// (`s.seen` and `s.stack` are working buffers).
    fn reaches(&self, from: &[u64], to: &[EventId], s: &mut Scratch) -> bool {
        if from.iter().all(|&w| w == 0) {
            return false;
        }
        s.seen.clear();
        s.seen.extend_from_slice(from);
        s.stack.clear();
        s.stack.extend(super::ones(from));
        while let Some(a) = s.stack.pop() {
            if to.contains(&a) {
                return true;
            }
            for b in super::ones(self.succ.row(a)) {
                if !has(&s.seen, b) {
                    set(&mut s.seen, b);
                    s.stack.push(b);
                }
            }
        }
        false
    }

    /// The psc predecessors of the seq_cst event `e` (the last of `g`), into `s.out`: per
    /// thread the po-latest one (the module's note says why that is enough). They are the
    /// seq_cst events among the candidates for `x` in `start(x) ; scb ; end(y)` (`y = e`, or
    /// for a fence `y` hb-before `e`), the seq_cst fences hb-before a candidate, and for a
    /// fence psc_F's fences.
    fn predecessors(&self, g: &ExecutionGraph, v: &Views, e: EventId, s: &mut Scratch) {
        let readers = &s.readers;
        let nt = g.threads.len();
        let fence = g.events[e].is_fence();
        z_prefix(g, v, e, &mut s.kz);
        reset(&mut s.top, nt, 0);
        reset(&mut s.top_sc, nt, 0);
        po_prefix(
            g,
            v,
            e,
            &self.joins,
            (&mut s.pk, &mut s.work, &mut s.spawner_seen),
        );
        mark_joined(g, v, &self.joins, &s.kz, &mut s.joined);
        if let EventKind::Join { child } = g.events[e].kind {
            s.joined[child] = true;
        }
        let mut c = Cands {
            g,
            v,
            e,
            last_sc: &self.last_sc,
            top: &mut s.top,
            top_sc: &mut s.top_sc,
        };
        for (u, &k) in s.pk.iter().enumerate() {
            c.prefix(u, k);
        }
        let z = Z {
            kz: &s.kz,
            joined: &s.joined,
            te: g.events[e].thread,
        };
        if fence {
            // po-predecessors of the events hb-before e: all but each prefix's last event,
            // which is one when its po-successor is in Z ∪ {e} through a spawn or a join.
            for (u, &k) in s.kz.iter().enumerate() {
                c.prefix(
                    u,
                    if z.last_continues(g, u) {
                        k
                    } else {
                        k.saturating_sub(1)
                    },
                );
            }
        }
        strict_c_clock(g, v, e, &z, &mut s.c_clock);
        if !s.c_clock.is_empty() {
            c_candidates(&mut c, &self.joins, &s.c_clock, &mut s.pk, &mut s.joined);
        }
        mo_fr_candidates(&mut c, &s.kz, (&mut s.bound, &mut s.pos), &mut s.eco_bounds);
        hb_loc_candidates(&mut c, &s.kz);
        self.collect(
            &c,
            &s.eco_bounds,
            readers,
            &mut s.reach,
            &mut s.eco_reach,
            &mut s.best,
        );
        s.out.clear();
        for (u, &b) in s.best.iter().enumerate() {
            if b > 0 {
                s.out.push(g.threads[u].events[b as usize - 1]);
            }
        }
    }

    /// Per thread, into `best` (one more than an index, 0 for none): the latest psc
    /// predecessor of `c.e`, a seq_cst candidate or a seq_cst fence hb-before one, or for a
    /// fence hb-before `c.e` or reaching it through psc_F's `hb ; eco ; hb`.
    fn collect(
        &self,
        c: &Cands,
        eco_bounds: &[(usize, usize)],
        readers: &Readers,
        reach: &mut Vec<u32>,
        eco_reach: &mut Vec<u32>,
        best: &mut Vec<u32>,
    ) {
        let (g, v, e) = (c.g, c.v, c.e);
        reach.clear();
        for (u, &k) in c.top.iter().enumerate() {
            if k > 0 {
                join(reach, v.clock(g.threads[u].events[k - 1]));
            }
        }
        let fence = g.events[e].is_fence();
        eco_reach.clear();
        if fence {
            for (x, &(wq, rq)) in eco_bounds.iter().enumerate() {
                for (i, &w) in g.mo[x][..wq.max(rq)].iter().enumerate() {
                    if i > 0 && i < wq {
                        join(eco_reach, v.clock(w));
                    }
                    if i < rq {
                        for &r in readers.of(w) {
                            join(eco_reach, v.clock(r));
                        }
                    }
                }
            }
        }
        let below = |c: &[u32], f: EventId| {
            c.get(slot(g.events[f].thread))
                .is_some_and(|&k| v.index[f] < k)
        };
        best.clear();
        best.extend_from_slice(c.top_sc);
        for &f in &self.fences {
            let (u, i) = (g.events[f].thread, v.index[f] + 1);
            if best[u] >= i {
                continue;
            }
            let psc_f = fence && (v.hb_eq(g, f, e) || below(eco_reach, f));
            if below(reach, f) || psc_f {
                best[u] = i;
            }
        }
    }
}

/// The candidates for `x` found so far, per thread as its po-latest ones: the first `top[u]`
/// events of thread `u` are po-before-or-equal to a candidate (their hb-predecessors are
/// what the candidates' are), and `top_sc[u]` is one more than the index of its latest
/// seq_cst candidate (0: none).
struct Cands<'a> {
    g: &'a ExecutionGraph,
    v: &'a Views,
    e: EventId,
    last_sc: &'a [u32],
    top: &'a mut [usize],
    top_sc: &'a mut [u32],
}

impl Cands<'_> {
    /// The first `k` events of thread `u` are candidates.
    fn prefix(&mut self, u: usize, k: usize) {
        if k == 0 {
            return;
        }
        self.top[u] = self.top[u].max(k);
        let last = self.g.threads[u].events[k - 1];
        self.top_sc[u] = self.top_sc[u].max(self.last_sc[last]);
    }

    /// Event `a` is a candidate (initialisation writes and `e` itself are not).
    fn event(&mut self, a: EventId) {
        let ev = &self.g.events[a];
        if ev.thread == INIT_THREAD || a == self.e {
            return;
        }
        let i = self.v.index[a] as usize;
        self.top[ev.thread] = self.top[ev.thread].max(i + 1);
        if is_sc(ev) {
            self.top_sc[ev.thread] = self.top_sc[ev.thread].max(i as u32 + 1);
        }
    }
}

/// Z, the events hb-before `e`, as a prefix length per thread, with the threads joined in
/// Z ∪ {e}.
struct Z<'a> {
    kz: &'a [usize],
    joined: &'a [bool],
    te: usize,
}

impl Z<'_> {
    /// Whether the last event of thread `u`'s prefix in Z has a po-successor in Z ∪ {e}
    /// outside the thread: the first event of a thread it spawned, or a join of `u`.
    fn last_continues(&self, g: &ExecutionGraph, u: usize) -> bool {
        let (k, tr) = (self.kz[u], &g.threads[u].events);
        let spawned_in_z = |child: usize| self.kz[child] > 0 || child == self.te;
        k.checked_sub(1).is_some_and(
            |i| matches!(g.events[tr[i]].kind, EventKind::Spawn { child } if spawned_in_z(child)),
        ) || (k > 0 && k == tr.len() && self.joined[u])
    }
}

/// How many events of thread `t` the clock `clock` covers (at most all of them).
fn covered(g: &ExecutionGraph, clock: &[u32], t: usize) -> usize {
    clock
        .get(slot(t))
        .map_or(0, |&k| k as usize)
        .min(g.threads[t].events.len())
}

/// Z as a prefix length per thread, into `kz`.
fn z_prefix(g: &ExecutionGraph, v: &Views, e: EventId, kz: &mut Vec<usize>) {
    let te = g.events[e].thread;
    kz.clear();
    kz.extend((0..g.threads.len()).map(|u| {
        if u == te {
            v.index[e] as usize
        } else {
            covered(g, v.clock(e), u)
        }
    }));
}

/// The po-predecessors of `e`, per thread a prefix length, into `pk`: its thread's events
/// before it, its spawners' events up to the spawn, and every thread joined among those
/// (whole). `work` and `spawner_seen` are working buffers.
fn po_prefix(
    g: &ExecutionGraph,
    v: &Views,
    e: EventId,
    joins: &[EventId],
    (pk, work, spawner_seen): (&mut Vec<usize>, &mut Vec<(usize, usize)>, &mut Vec<bool>),
) {
    let nt = g.threads.len();
    let te = g.events[e].thread;
    reset(pk, nt, 0);
    reset(spawner_seen, nt, false);
    work.clear();
    work.push((te, v.index[e] as usize));
    let push_spawner = |work: &mut Vec<(usize, usize)>, seen: &mut Vec<bool>, u: usize| {
        if !std::mem::replace(&mut seen[u], true) {
            if let Some(sp) = g.threads[u].spawned_by {
                work.push((g.events[sp].thread, v.index[sp] as usize + 1));
            }
        }
    };
    push_spawner(work, spawner_seen, te);
    while let Some((u, k)) = work.pop() {
        if k <= pk[u] {
            continue;
        }
        let old = std::mem::replace(&mut pk[u], k);
        for &j in joins {
            let i = v.index[j] as usize;
            if let EventKind::Join { child } = g.events[j].kind {
                if g.events[j].thread == u && (old..k).contains(&i) {
                    work.push((child, g.threads[child].events.len()));
                }
            }
        }
        push_spawner(work, spawner_seen, u);
    }
}

/// Marks in `joined` the threads joined among the first `k[u]` events of every thread `u`.
fn mark_joined(
    g: &ExecutionGraph,
    v: &Views,
    joins: &[EventId],
    k: &[usize],
    joined: &mut Vec<bool>,
) {
    reset(joined, g.threads.len(), false);
    for &j in joins {
        if let EventKind::Join { child } = g.events[j].kind {
            if (v.index[j] as usize) < k[g.events[j].thread] {
                joined[child] = true;
            }
        }
    }
}

/// For `po|≠loc ; hb ; po|≠loc`: into `c_clock`, the events hb-before some `d` that is
/// po|≠loc-before `e` (or, for a fence, before an event hb-before `e`), as a clock (`d`'s
/// own thread lowered to the events strictly before it). Empty when there is no such `d`.
fn strict_c_clock(g: &ExecutionGraph, v: &Views, e: EventId, z: &Z, c_clock: &mut Vec<u32>) {
    let ev = &g.events[e];
    c_clock.clear();
    let strict = |c_clock: &mut Vec<u32>, d: EventId| {
        let own = slot(g.events[d].thread);
        let before = c_clock.get(own).copied().unwrap_or(0);
        join(c_clock, v.clock(d));
        if c_clock.len() <= own {
            c_clock.resize(own + 1, 0);
        }
        c_clock[own] = before.max(v.index[d]);
    };
    let own = &g.threads[ev.thread].events[..v.index[e] as usize];
    match own.iter().rev().find(|&&d| other_loc(&g.events[d], ev)) {
        Some(&d) => strict(c_clock, d),
        None => {
            if let Some(sp) = g.threads[ev.thread].spawned_by {
                strict(c_clock, sp);
            }
        }
    }
    if !ev.is_fence() {
        return;
    }
    for (u, &k) in z.kz.iter().enumerate() {
        let mut later = if z.last_continues(g, u) {
            Later::Mixed
        } else {
            Later::Nothing
        };
        for &d in g.threads[u].events[..k].iter().rev() {
            let dev = &g.events[d];
            if later.other_than(dev) {
                strict(c_clock, d);
                break;
            }
            later = later.see(dev);
        }
    }
}

/// The candidates of `po|≠loc ; hb ; po|≠loc`: per thread, the events of C (the clock
/// `c_clock`) po|≠loc-before another event of C, a prefix of C's events there (all of them
/// when the thread is joined in C). `kc` and `joined` are working buffers.
fn c_candidates(
    c: &mut Cands,
    joins: &[EventId],
    c_clock: &[u32],
    kc: &mut Vec<usize>,
    joined: &mut Vec<bool>,
) {
    let g = c.g;
    kc.clear();
    kc.extend((0..g.threads.len()).map(|u| covered(g, c_clock, u)));
    mark_joined(g, c.v, joins, kc, joined);
    for (u, t) in g.threads.iter().enumerate() {
        if joined[u] {
            c.prefix(u, kc[u]);
            continue;
        }
        // The latest event with a later one at another location: it and all before it.
        let mut later = Later::Nothing;
        for (i, &a) in t.events[..kc[u]].iter().enumerate().rev() {
            let aev = &g.events[a];
            if later.other_than(aev) {
                c.prefix(u, i + 1);
                break;
            }
            later = later.see(aev);
        }
    }
}

/// The candidates of `mo ; fr`: the writes mo-before a write (e, or for a fence the mo-latest
/// write at each location in Z) and their readers. For a fence, also psc_F's bounds on mo
/// (per location, writes before `.0` and readers of writes before `.1` are eco-before an
/// event of Z) into `eco_bounds`. `buffers` are working buffers.
fn mo_fr_candidates(
    c: &mut Cands,
    kz: &[usize],
    (bound, pos): (&mut Vec<usize>, &mut Vec<usize>),
    eco_bounds: &mut Vec<(usize, usize)>,
) {
    let g = c.g;
    let ev = &g.events[c.e];
    let nl = g.num_locs();
    reset(eco_bounds, nl, (0, 0));
    reset(bound, nl, 0);
    if ev.is_fence() {
        // Every write's position in mo.
        reset(pos, g.len(), 0);
        for m in &g.mo {
            for (i, &w) in m.iter().enumerate() {
                pos[w] = i;
            }
        }
        for a in prefixes(g, kz) {
            let aev = &g.events[a];
            let Some(x) = aev.loc else { continue };
            if aev.is_write() {
                let p = pos[a];
                bound[x] = bound[x].max(p);
                eco_bounds[x].0 = eco_bounds[x].0.max(p);
                eco_bounds[x].1 = eco_bounds[x].1.max(p);
            } else if let Some(w) = g.rf[a] {
                let p = pos[w];
                eco_bounds[x].0 = eco_bounds[x].0.max(p + 1);
                eco_bounds[x].1 = eco_bounds[x].1.max(p);
            }
        }
    } else if ev.kind == EventKind::Write {
        let x = ev.loc.expect("a write has a location");
        bound[x] = g.mo[x].iter().position(|&m| m == c.e).unwrap_or(0);
    } else {
        return;
    }
    // The writes before `bound[x]` in each location's mo (but the initialisation write), and
    // the readers of all of them, found in one pass over rf (`pos` now marks them).
    reset(pos, g.len(), 0);
    for (x, &b) in bound.iter().enumerate() {
        for (i, &w) in g.mo[x][..b].iter().enumerate() {
            pos[w] = 1;
            if i > 0 {
                c.event(w);
            }
        }
    }
    for (r, w) in g.rf.iter().enumerate() {
        if w.is_some_and(|w| pos[w] == 1) {
            c.event(r);
        }
    }
}

/// The candidates of `hb|loc`: for an access, the events hb-before it at its location (per
/// thread the latest, and the latest seq_cst one); for a fence, the last event of a thread's
/// prefix in Z that is hb-before an event of another thread in Z at its location (the
/// events before it in Z are candidates already).
fn hb_loc_candidates(c: &mut Cands, kz: &[usize]) {
    let (g, v) = (c.g, c.v);
    let ev = &g.events[c.e];
    let tr = |u: usize| &g.threads[u].events[..kz[u]];
    if !ev.is_fence() {
        for (u, &k) in kz.iter().enumerate() {
            latest_at_loc(c, u, k, ev.loc);
        }
        return;
    }
    let latest_at = |u: usize, x: Option<Loc>| tr(u).iter().rev().find(|&&b| g.events[b].loc == x);
    for u in 0..kz.len() {
        let Some(&a) = tr(u).last() else { continue };
        let x = g.events[a].loc;
        if x.is_none() || c.top[u] >= kz[u] {
            continue;
        }
        let later_elsewhere = (0..kz.len())
            .any(|t2| t2 != u && latest_at(t2, x).is_some_and(|&b| hb_strict(v, g, a, b)));
        if later_elsewhere {
            c.event(a);
        }
    }
}

/// The events of the first `k[u]` of every thread `u`.
fn prefixes<'a>(g: &'a ExecutionGraph, k: &'a [usize]) -> impl Iterator<Item = EventId> + 'a {
    g.threads
        .iter()
        .zip(k)
        .flat_map(|(t, &k)| t.events[..k].iter().copied())
}

/// `a` strictly hb-before `b` (both added); never an initialisation write, which psc ignores.
fn hb_strict(v: &Views, g: &ExecutionGraph, a: EventId, b: EventId) -> bool {
    a != b && g.events[a].thread != INIT_THREAD && v.hb_eq(g, a, b)
}

/// The writes mo-after `e` (a write), or after the write `e` reads (a read): its mo or fr
/// successors.
pub(super) fn mo_after(g: &ExecutionGraph, e: EventId) -> &[EventId] {
    let ev = &g.events[e];
    let Some(x) = ev.loc else { return &[] };
    let of = match ev.kind {
        EventKind::Write => Some(e),
        EventKind::Read => g.rf[e],
        _ => None,
    };
    match of.and_then(|w| g.mo[x].iter().position(|&m| m == w)) {
        Some(p) => &g.mo[x][p + 1..],
        None => &[],
    }
}

/// The hb|loc candidates of thread `u` for an access at `x` hb-after its first `k` events:
/// the latest event at `x` among them, and the latest seq_cst one, unless candidates already
/// dominate them. Walks back over the events after the candidates, then from one seq_cst
/// event of the thread to the one before.
fn latest_at_loc(c: &mut Cands, u: usize, k: usize, x: Option<Loc>) {
    let (g, t) = (c.g, &c.g.threads[u].events[..k]);
    let mut i = k;
    while i > c.top[u] {
        i -= 1;
        let ev = &g.events[t[i]];
        if ev.loc == x {
            c.event(t[i]);
            if is_sc(ev) {
                return;
            }
            break;
        }
    }
    // No seq_cst event at `x` from `i` on: the latest before `i`, if after the seq_cst
    // candidates.
    let mut j = i.checked_sub(1).map_or(0, |p| c.last_sc[t[p]] as usize);
    while j > c.top_sc[u] as usize {
        let a = t[j - 1];
        if g.events[a].loc == x {
            c.event(a);
            return;
        }
        j = (j - 1)
            .checked_sub(1)
            .map_or(0, |p| c.last_sc[t[p]] as usize);
    }
}
