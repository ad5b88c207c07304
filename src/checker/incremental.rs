//! Incremental consistency: what the explorer needs to know about a partial graph to add one
//! more event, without recomputing every relation.
//!
//! The explorer adds events in a po ∪ rf-respecting order, and `hb` only ever points from an
//! event to events added after it (po, spawn and join edges do; an sw edge ends at a read or an
//! acquire fence, added after the write it synchronises with). So the happens-before
//! predecessors of an event are fixed when it is added, and are kept as a **vector clock**:
//! `vc[e][u]` is how many events of thread `u` (slot 0 is the initialisation) are hb-before or
//! equal to `e`; `a` is hb-before `e` iff `index(a) < vc[e][thread(a)]` (hb-predecessors are
//! po-downward closed). sw is added with **message views**: the clock a release write carries
//! (its own clock if it is a release write, joined with that of a release fence before it and,
//! along the release sequence, with the message of the write an RMW read — under C++20's rule,
//! [`ReleaseSeq::Rmw`]; `c11`'s [`ReleaseSeq::SameThread`] also joins the latest release write
//! of the thread to the same location), joined into an acquire read, or remembered by a
//! relaxed read for a later acquire fence.
//!
//! **Coherence** (`hb ; eco?` irreflexive) of a consistent graph extended by one access `e` to
//! location `x` fails exactly when `e` would be eco-before something hb-before it. In a coherent
//! graph the *coherence position* (a write: itself; a read: the write it reads) of a thread's
//! accesses to `x` never decreases along po, so it is enough to look at the last access to `x`
//! of every thread within `e`'s hb-prefix: the greatest of their positions in `mo` is the
//! **frontier**. A read may read from any write mo-at-or-after the frontier; a write may be
//! inserted anywhere after it. (The sw edges into an acquire read only add hb-predecessors whose
//! positions are at or before the write it reads, so the frontier is computed from the read's
//! po-predecessors.) **Atomicity**: an RMW may not read from a write another RMW already read,
//! and a write may not be inserted between an RMW and the write it read.
//!
//! For `sc` the same frontier is taken over the backward closure of `po ∪ rf ∪ mo ∪ fr` from the
//! new event (a breadth-first search), since there is no hb. RC11's SC axiom (psc acyclic) is
//! kept up to date event by event when asked for ([`Views::track_psc`], module `psc`): the
//! edges a new event adds all go through it, so only they are computed, and a cycle is looked
//! for only through them. [`Views::psc_acyclic`] computes the same verdict from scratch (psc's
//! rows of the seq_cst events, from the clocks, without closing any relation); the unit tests
//! compare the two with the recomputed relations.

use super::graph::{with_room, EventId, EventKind, ExecutionGraph, INIT_THREAD};
use super::model::ReleaseSeq;
use crate::ir::Loc;
mod psc;

fn slot(thread: usize) -> usize {
    if thread == INIT_THREAD {
        0
    } else {
        thread + 1
    }
}

/// The backward `po ∪ rf ∪ mo ∪ fr` closure being grown by [`Views::sc_frontier`].
struct ScReach<'g> {
    g: &'g ExecutionGraph,
    views: &'g Views,
    /// Per thread, how many of its first events are reached.
    reached: Vec<usize>,
    /// Per location, how many of its first writes in mo are reached.
    mo_reached: Vec<usize>,
    /// Threads and locations whose reached part grew since they were last scanned.
    threads: Vec<usize>,
    locs: Vec<Loc>,
}

impl ScReach<'_> {
    /// `e` (an event of `g`) is reached, hence its po-prefix.
    fn event(&mut self, e: EventId) {
        let ev = &self.g.events[e];
        if ev.thread == INIT_THREAD {
            // Nothing is before an initialisation write, and it is mo-first.
            return;
        }
        let u = ev.thread;
        let k = self.views.index[e] as usize + 1;
        if k > self.reached[u] {
            self.reached[u] = k;
            self.threads.push(u);
        }
    }

    /// The write `w` (an event of `g`, reached) is: so are the writes mo-before it.
    fn write(&mut self, w: EventId) {
        let y = self.g.events[w].loc.expect("a write has a location");
        let p = self.g.mo[y]
            .iter()
            .position(|&z| z == w)
            .expect("a write is in mo");
        if p + 1 > self.mo_reached[y] {
            self.mo_reached[y] = p + 1;
            self.locs.push(y);
        }
    }
}

/// The event whose clock the `k`-th event of thread `t` starts from: its po-predecessor, or
/// for a thread's first event the spawn that created it (`None` for main's first event).
fn start_from(g: &ExecutionGraph, t: usize, k: usize) -> Option<EventId> {
    let tr = &g.threads[t];
    k.checked_sub(1).map(|i| tr.events[i]).or(tr.spawned_by)
}

/// A clock starting a thread: every event is hb-after every initialisation write (slot 0).
fn after_init(clock: &mut [u32]) {
    if clock[0] == 0 {
        clock[0] = u32::MAX;
    }
}

/// Joins clock `other` into `acc` (as long as `acc`, or shorter).
fn join_into(acc: &mut [u32], other: &[u32]) {
    for (a, b) in acc.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

/// The set bits of a bit row, in increasing order.
fn ones(row: &[u64]) -> impl Iterator<Item = usize> + '_ {
    row.iter().enumerate().flat_map(|(i, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let b = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                i * 64 + b
            })
        })
    })
}

/// The initialisation writes of `g` and its threads without events: the start of a copy of
/// `g` grown event by event with [`push_prefix`].
fn init_prefix(g: &ExecutionGraph) -> ExecutionGraph {
    let inits = g.num_inits();
    ExecutionGraph {
        events: g.events[..inits].to_vec(),
        threads: g
            .threads
            .iter()
            .map(|t| super::graph::ThreadTrace {
                func: t.func,
                spawned_by: t.spawned_by,
                events: Vec::with_capacity(t.events.len()),
                slots: Vec::new(),
                end: t.end,
            })
            .collect(),
        rf: vec![None; inits],
        // mo grows with the writes added (psc's incremental check reads the writes mo-after
        // each new event among those already there).
        mo: g
            .mo
            .iter()
            .map(|m| m.iter().copied().filter(|&w| w < inits).collect())
            .collect(),
        rmw: g.rmw.clone(),
        bugs: Vec::new(),
        inits,
        dynamic: g.dynamic.clone(),
    }
}

/// The position of write `e` of `g` in mo among the writes with smaller ids (those added
/// before it, ids being a po ∪ rf order).
fn mo_position(g: &ExecutionGraph, e: EventId) -> usize {
    let x = g.events[e].loc.expect("a write has a location");
    g.mo[x]
        .iter()
        .take_while(|&&y| y != e)
        .filter(|&&y| y < e)
        .count()
}

/// Adds event `e` of `g` to `h`, a copy of `g` holding the events before `e`: same source, and
/// for a write its place in mo among the writes already there.
fn push_prefix(h: &mut ExecutionGraph, g: &ExecutionGraph, e: EventId) {
    let ev = &g.events[e];
    if ev.is_write() {
        let x = ev.loc.expect("a write has a location");
        let p = mo_position(g, e);
        h.mo[x].insert(p, e);
    }
    let id = h.push(ev.clone());
    debug_assert_eq!(id, e);
    h.rf[id] = g.rf[e];
}

/// Per-event views of a partial graph, grown with [`Views::add`].
///
/// Every clock is a row of `width` counters in one flat array per kind (slot 0 = the
/// initialisation, slot t + 1 = thread t: how many of its events are hb-before or equal to the
/// event), so that copying the views of a state is a few `memcpy`s, with no per-event
/// allocation or reference count. A message row of zeros carries nothing.
#[derive(Clone, Debug)]
pub struct Views {
    /// Which writes continue a release sequence (the model's rule).
    release_seq: ReleaseSeq,
    /// Counters per clock row: the thread slots so far (grown, and every row re-laid, when a
    /// thread with a higher slot adds its first event).
    width: usize,
    /// hb vector clock of every event.
    vc: Vec<u32>,
    /// Index of every event in its thread (init events: 0).
    index: Vec<u32>,
    /// The message view of every atomic write.
    msg: Vec<u32>,
    /// Per thread (row `t`): join of the message views of its atomic reads so far (what an
    /// acquire fence it adds next synchronises with). Only a thread's latest event needs it,
    /// so it is one row per thread, not per event (less to copy per state).
    reads_msg: Vec<u32>,
    /// Per thread (row `t`): the clock of its latest release fence so far.
    rel_fence: Vec<u32>,
    /// Per write: whether an RMW read it (no other RMW may).
    rmw_read: Vec<bool>,
    /// RC11's psc, kept up to date event by event when asked for ([`Views::track_psc`]).
    psc: Option<psc::Psc>,
}

impl Views {
    /// The hb clock of event `e` (`width` counters).
    fn clock(&self, e: EventId) -> &[u32] {
        &self.vc[e * self.width..(e + 1) * self.width]
    }

    /// Makes rows at least `w` counters wide, re-laying every row.
    fn widen(&mut self, w: usize) {
        if w <= self.width {
            return;
        }
        let w = w.max(self.width * 2);
        let old = self.width;
        let relay = |rows: &mut Vec<u32>| {
            let n = rows.len() / old.max(1);
            // Keep the room reserved for more rows (`reserve`, `fork`).
            let mut wide = Vec::with_capacity(rows.capacity() / old.max(1) * w);
            wide.resize(n * w, 0);
            for (dst, src) in wide.chunks_exact_mut(w).zip(rows.chunks_exact(old.max(1))) {
                dst[..old].copy_from_slice(&src[..old]);
            }
            *rows = wide;
        };
        relay(&mut self.vc);
        relay(&mut self.msg);
        relay(&mut self.reads_msg);
        relay(&mut self.rel_fence);
        self.width = w;
    }

    /// Keep RC11's psc graph up to date from now on (call before any event is added): then
    /// [`Views::psc_cyclic`] answers the SC axiom without recomputing psc.
    pub fn track_psc(&mut self) {
        debug_assert!(
            self.index.iter().all(|&i| i == 0),
            "only init events so far"
        );
        self.psc = Some(psc::Psc::default());
    }

    /// Whether psc has a cycle, when it is tracked ([`Views::track_psc`]).
    pub fn psc_cyclic(&self) -> Option<bool> {
        self.psc.as_ref().map(psc::Psc::cyclic)
    }

    /// A copy to be extended by about `more` events (see [`with_room`]).
    pub fn fork(&self, more: usize) -> Views {
        let w = self.width;
        Views {
            release_seq: self.release_seq,
            width: w,
            vc: with_room(&self.vc, more * w),
            index: with_room(&self.index, more),
            msg: with_room(&self.msg, more * w),
            reads_msg: self.reads_msg.clone(),
            rel_fence: self.rel_fence.clone(),
            rmw_read: with_room(&self.rmw_read, more),
            psc: self.psc.as_ref().map(|p| p.fork(more)),
        }
    }

    /// Room for `more` events.
    pub fn reserve(&mut self, more: usize) {
        let w = self.width;
        self.vc.reserve(more * w);
        self.index.reserve(more);
        self.msg.reserve(more * w);
        self.rmw_read.reserve(more);
    }

    /// RC11 consistency (with C++20's release sequences) of a complete graph whose event ids
    /// are a po ∪ rf order (as the
    /// explorer builds them, fences inserted by `with_fences` included), checked the way the
    /// explorer checks each step: hb by vector clocks, coherence by the frontier rule of every
    /// access, then psc on the seq_cst rows. Quadratic, where recomputing the relations
    /// (`model::Relations`) is cubic. Atomicity and no-thin-air are not checked (they hold for
    /// any graph the explorer visited, with or without extra fences). Returns the axiom that
    /// fails, if any, and the views (for hb queries on `g`).
    pub fn rc11_verdict(g: &ExecutionGraph) -> (Option<super::model::Axiom>, Views) {
        use super::model::Axiom;
        let inits = g.num_inits();
        let mut h = init_prefix(g);
        let mut views = Views::new(&h, ReleaseSeq::Rmw);
        views.track_psc();
        views.reserve(g.len());
        for e in inits..g.len() {
            let ev = &g.events[e];
            if let Some(x) = ev.loc.filter(|_| ev.is_access()) {
                // The coherence frontier of the accesses hb-before `e` (its po-predecessors'
                // clock: an acquire's own sw only adds writes at or before its source), as a
                // position in the mo of the writes added so far (ids are a po ∪ rf order).
                let pre = views.pre_clock(&h, ev.thread);
                let f = views.frontier(&h, &pre, x);
                let ok = match ev.kind {
                    EventKind::Read => g.rf[e]
                        .and_then(|w| h.mo[x].iter().position(|&y| y == w))
                        .is_some_and(|p| p >= f),
                    // An allocation's first write is mo-first, like an initialisation.
                    _ => mo_position(g, e) > f || g.mo[x].first() == Some(&e),
                };
                if !ok {
                    return (Some(Axiom::Coherence), views);
                }
            }
            push_prefix(&mut h, g, e);
            views.add(&h, e);
        }
        if views.psc_cyclic() == Some(true) {
            return (Some(Axiom::Psc), views);
        }
        (None, views)
    }

    /// Starts keeping RC11's psc for a graph whose events are already added (see
    /// [`Views::track_psc`]): the explorer does not need psc while every event is a seq_cst
    /// access (RC11 is SC there), and starts it when the first other event arrives. The events
    /// are added again one by one, in id order, to a growing copy of `g`.
    pub fn start_psc(&mut self, g: &ExecutionGraph) {
        let mut p = psc::Psc::default();
        let mut h = init_prefix(g);
        for e in g.num_inits()..g.len() {
            push_prefix(&mut h, g, e);
            p.add(&h, self, e);
        }
        self.psc = Some(p);
    }

    /// The views of a graph that holds only initialisation writes, for a model whose release
    /// sequences follow `release_seq`.
    pub fn new(g: &ExecutionGraph, release_seq: ReleaseSeq) -> Views {
        let n = g.len();
        // Room for the initialisation and three threads before any row is re-laid.
        let width = 4;
        let mut vc = vec![0; n * width];
        for row in vc.chunks_exact_mut(width) {
            row[0] = n as u32;
        }
        Views {
            release_seq,
            width,
            vc,
            index: vec![0; n],
            msg: vec![0; n * width],
            reads_msg: Vec::new(),
            rel_fence: Vec::new(),
            rmw_read: vec![false; n],
            psc: None,
        }
    }

    /// `a` is hb-before or equal to `b` (both already added).
    pub fn hb_eq(&self, g: &ExecutionGraph, a: EventId, b: EventId) -> bool {
        if g.events[a].thread == INIT_THREAD {
            return true;
        }
        let s = slot(g.events[a].thread);
        self.clock(b).get(s).is_some_and(|&c| self.index[a] < c)
    }

    /// Whether event `x` is hb-before (or equal to) an event whose clock is `clock`.
    pub fn hb_before_clock(&self, g: &ExecutionGraph, x: EventId, clock: &[u32]) -> bool {
        if g.events[x].thread == INIT_THREAD {
            return true;
        }
        clock
            .get(slot(g.events[x].thread))
            .is_some_and(|&c| self.index[x] < c)
    }

    /// The clock an event of thread `t` about to be added starts from: its po-predecessor's,
    /// or for the first event of a spawned thread the spawn's (main starts after the
    /// initialisation). Joins add the joined thread's last event separately.
    pub fn pre_clock(&self, g: &ExecutionGraph, t: usize) -> Vec<u32> {
        let mut v = vec![0u32; self.width.max(slot(t) + 1)];
        if let Some(p) = start_from(g, t, g.threads[t].events.len()) {
            v[..self.width].copy_from_slice(self.clock(p));
        }
        after_init(&mut v);
        v
    }

    /// Records event `e`, the last one added to `g` (with its rf and rmw already set).
    pub fn add(&mut self, g: &ExecutionGraph, e: EventId) {
        let ev = &g.events[e];
        let t = ev.thread;
        self.widen(slot(t) + 1);
        let w = self.width;
        let index = g.threads[t].events.len() as u32 - 1;
        // The new rows are appended first and computed in place (no temporary clocks).
        let row = |e: EventId| e * w..(e + 1) * w;
        let new = row(e);
        debug_assert_eq!(self.vc.len(), new.start, "events are added in id order");
        match start_from(g, t, index as usize) {
            Some(p) => self.vc.extend_from_within(row(p)),
            None => self.vc.resize(new.end, 0),
        }
        after_init(&mut self.vc[new.clone()]);
        // This thread's rows hold what its previous event left (none: zeros).
        let own = row(t);
        if self.reads_msg.len() < own.end {
            self.reads_msg.resize(own.end, 0);
            self.rel_fence.resize(own.end, 0);
        }
        if index == 0 {
            self.reads_msg[own.clone()].fill(0);
            self.rel_fence[own.clone()].fill(0);
        }
        if let EventKind::Join { child } = ev.kind {
            if let Some(&last) = g.threads[child].events.last() {
                let (old, v) = self.vc.split_at_mut(new.start);
                join_into(v, &old[row(last)]);
            }
        }
        match ev.kind {
            EventKind::Read => {
                if let Some(src) = g.rf[e] {
                    if ev.order.is_atomic() {
                        let m = &self.msg[row(src)];
                        if ev.order.is_acquire() {
                            join_into(&mut self.vc[new.clone()], m);
                        }
                        join_into(&mut self.reads_msg[own.clone()], m);
                    }
                }
            }
            EventKind::Fence if ev.order.is_acquire() => {
                join_into(&mut self.vc[new.clone()], &self.reads_msg[own.clone()])
            }
            _ => {}
        }
        self.vc[new.start + slot(t)] = index + 1;
        if ev.is_fence() && ev.order.is_release() {
            self.rel_fence[own.clone()].copy_from_slice(&self.vc[new.clone()]);
        }
        // The message of an atomic write: its own clock if it is a release write (under
        // `SameThread` else that of the latest release write to the location before it in its
        // thread: po|loc is part of that release sequence), the latest release fence before
        // it, and — for the write part of an RMW — the message of the write the RMW read.
        self.msg.resize(new.end, 0);
        let rmw_src = g
            .rmw
            .iter()
            .rev()
            .find(|&&(_, x)| x == e)
            .and_then(|&(r, _)| g.rf[r]);
        if ev.kind == EventKind::Write && ev.order.is_atomic() {
            let head = if ev.order.is_release() {
                Some(new.clone())
            } else if self.release_seq == ReleaseSeq::SameThread {
                self.last_release_write(g, t, ev.loc, index).map(row)
            } else {
                None
            };
            let msg = &mut self.msg[new.clone()];
            join_into(msg, &self.rel_fence[own.clone()]);
            if let Some(head) = head {
                join_into(msg, &self.vc[head]);
            }
            if let Some(src) = rmw_src {
                let (old, msg) = self.msg.split_at_mut(new.start);
                join_into(msg, &old[row(src)]);
            }
        }
        if let Some(src) = rmw_src {
            self.rmw_read[src] = true;
        }
        self.index.push(index);
        self.rmw_read.push(false);
        if let Some(mut p) = self.psc.take() {
            p.add(g, self, e);
            self.psc = Some(p);
        }
    }
    /// The latest write of thread `t` to `loc` with a release order, before index `before`
    /// (the head of the release sequence a relaxed write continues under `SameThread`).
    fn last_release_write(
        &self,
        g: &ExecutionGraph,
        t: usize,
        loc: Option<Loc>,
        before: u32,
    ) -> Option<EventId> {
        let x = loc?;
        g.threads[t].events[..before as usize]
            .iter()
            .rev()
            .copied()
            .find(|&a| {
                let ev = &g.events[a];
                ev.loc == Some(x) && ev.kind == EventKind::Write && ev.order.is_release()
            })
    }

    /// The write an access stands for in coherence order: a write itself, a read its source.
    fn coherence_write(g: &ExecutionGraph, a: EventId) -> Option<EventId> {
        if g.events[a].is_write() {
            Some(a)
        } else {
            g.rf[a]
        }
    }

    /// The position in `mo[x]` of the mo-greatest coherence write among the accesses to `x`
    /// hb-before an event whose clock is `clock` (0: only the initialisation write).
    pub fn frontier(&self, g: &ExecutionGraph, clock: &[u32], x: Loc) -> usize {
        let mut candidates: Vec<EventId> = Vec::new();
        for (t, tr) in g.threads.iter().enumerate() {
            let limit = clock
                .get(slot(t))
                .map_or(0, |&c| c as usize)
                .min(tr.events.len());
            // The last access to `x` among the thread's first `limit` events.
            let last = tr.events[..limit]
                .iter()
                .rev()
                .copied()
                .find(|&a| g.events[a].loc == Some(x));
            if let Some(w) = last.and_then(|a| Self::coherence_write(g, a)) {
                candidates.push(w);
            }
        }
        Self::max_position(g, x, &candidates)
    }

    fn max_position(g: &ExecutionGraph, x: Loc, candidates: &[EventId]) -> usize {
        if candidates.is_empty() {
            return 0;
        }
        g.mo[x]
            .iter()
            .rposition(|w| candidates.contains(w))
            .unwrap_or(0)
    }

    /// The `sc` frontier: the mo-greatest write to `x` from which the new event of thread `t`
    /// can be reached by `po ∪ rf ∪ mo ∪ fr` (a read must read at or after it, a write be
    /// inserted after it).
    pub fn sc_frontier(&self, g: &ExecutionGraph, t: usize, x: Loc) -> usize {
        // What reaches the new event backwards is closed under po and mo: per thread a prefix
        // of its events, per location the writes before some mo position. Each grows only,
        // and each event or write is looked at once when its prefix grows past it.
        let mut r = ScReach {
            g,
            views: self,
            reached: vec![0; g.threads.len()],
            mo_reached: vec![0; g.mo.len()],
            threads: Vec::new(),
            locs: Vec::new(),
        };
        let tr = &g.threads[t];
        if let Some(&p) = tr.events.last().or(tr.spawned_by.as_ref()) {
            r.event(p);
        }
        let mut scanned = vec![0usize; g.threads.len()];
        let mut mo_scanned = vec![0usize; g.mo.len()];
        let mut fr_scanned = vec![0usize; g.mo.len()];
        // Built the first time a write's fr-predecessors are needed.
        let mut readers = None;
        loop {
            if let Some(u) = r.threads.pop() {
                while scanned[u] < r.reached[u] {
                    let i = scanned[u];
                    scanned[u] += 1;
                    let e = g.threads[u].events[i];
                    if i == 0 {
                        if let Some(sp) = g.threads[u].spawned_by {
                            r.event(sp);
                        }
                    }
                    let ev = &g.events[e];
                    match ev.kind {
                        EventKind::Join { child } => {
                            if let Some(&last) = g.threads[child].events.last() {
                                r.event(last);
                            }
                        }
                        EventKind::Read => {
                            if let Some(w) = g.rf[e] {
                                r.event(w);
                            }
                        }
                        EventKind::Write => r.write(e),
                        _ => {}
                    }
                }
            } else if let Some(y) = r.locs.pop() {
                // The writes before the latest reached one (mo), and their readers (fr).
                let upto = r.mo_reached[y];
                for p in mo_scanned[y]..upto {
                    r.event(g.mo[y][p]);
                }
                mo_scanned[y] = mo_scanned[y].max(upto);
                let fr_upto = upto.saturating_sub(1);
                if fr_scanned[y] < fr_upto {
                    let readers = readers.get_or_insert_with(|| psc::Readers::new(g));
                    for p in fr_scanned[y]..fr_upto {
                        for &rd in readers.of(g.mo[y][p]) {
                            r.event(rd);
                        }
                    }
                    fr_scanned[y] = fr_upto;
                }
            } else {
                break;
            }
        }
        r.mo_reached[x].saturating_sub(1)
    }

    /// Whether `w` may be the source of an RMW (no other RMW read it already).
    pub fn free_for_rmw(&self, w: EventId) -> bool {
        !self.rmw_read[w]
    }

    /// Whether a write may be inserted at position `pos` of `mo[x]` without separating an RMW
    /// from the write it read.
    pub fn may_insert_at(&self, g: &ExecutionGraph, x: Loc, pos: usize) -> bool {
        let mo = &g.mo[x];
        match mo.get(pos) {
            Some(&next) => !g
                .rmw
                .iter()
                .any(|&(r, w)| w == next && g.rf[r] == Some(mo[pos - 1])),
            None => true,
        }
    }

    /// Whether RC11's psc (`psc_base ∪ psc_F`, docs/memory-models.md §2) of `g` is acyclic,
    /// from scratch (the reference for the incremental [`Views::psc_cyclic`]),
    /// computed exactly as [`super::model::Relations::psc`] defines it but only on the rows of
    /// the seq_cst events (psc relates nothing else) and with hb read from the clocks: no
    /// relation is closed, and the work is quadratic in the number of events (the full check
    /// is cubic). The other RC11 axioms hold by construction (see the module documentation).
    ///
    /// For a seq_cst event `a`, `psc(a)` is `R(⋃ scb(L(a)))` ∪ (for a fence)
    /// `[Fsc] ∩ (hb(a) ∪ hb;eco;hb(a))`, where `L(a)` is `a` and, for a fence, its
    /// hb-successors, and `R(D)` is the seq_cst events of `D` and the seq_cst fences with an
    /// hb-predecessor in `D`; `scb = po ∪ po|≠loc;hb;po|≠loc ∪ hb|loc ∪ mo ∪ fr`.
    pub fn psc_acyclic(&self, g: &ExecutionGraph) -> bool {
        let n = g.len();
        let ev = &g.events;
        let is_sc = |e: usize| {
            ev[e].thread != INIT_THREAD
                && ev[e].order.is_sc()
                && (ev[e].is_access() || ev[e].is_fence())
        };
        let sc: Vec<EventId> = (0..n).filter(|&e| is_sc(e)).collect();
        if sc.is_empty() {
            return true;
        }
        let fences: Vec<EventId> = sc.iter().copied().filter(|&e| ev[e].is_fence()).collect();
        let w = n.div_ceil(64);
        let range = |a: usize| a * w..(a + 1) * w;
        let set = |bits: &mut [u64], b: usize| bits[b / 64] |= 1u64 << (b % 64);
        let has = |bits: &[u64], b: usize| bits[b / 64] >> (b % 64) & 1 == 1;
        let or_into = |dst: &mut [u64], src: &[u64]| {
            for (d, s) in dst.iter_mut().zip(src) {
                *d |= *s;
            }
        };
        // Strict hb, from the clocks: the events of thread `u` hb-before `b` are the first
        // `vc[b][u]` of the thread (init events have no row: nothing psc needs starts there).
        let mut hb = vec![0u64; n * w];
        for (b, event) in ev.iter().enumerate() {
            if event.thread == INIT_THREAD {
                continue;
            }
            for (u, tr) in g.threads.iter().enumerate() {
                let k = self.clock(b).get(slot(u)).map_or(0, |&c| c as usize);
                for &a in &tr.events[..k.min(tr.events.len())] {
                    if a != b {
                        set(&mut hb[range(a)], b);
                    }
                }
            }
        }
        let mut loc_mask = vec![0u64; g.num_locs() * w];
        for (e, event) in ev.iter().enumerate() {
            if let Some(x) = event.loc {
                set(&mut loc_mask[x * w..(x + 1) * w], e);
            }
        }
        // po (closed, init rows left empty), in one backward pass: events are added in a
        // po-respecting order, so every po-successor of an event has a greater id. Immediate
        // successors: the next event of the thread, a spawned thread's first event, and after
        // a thread's last event the joins of that thread.
        let mut joins: Vec<Vec<EventId>> = vec![Vec::new(); g.threads.len()];
        for (e, event) in ev.iter().enumerate() {
            if let EventKind::Join { child } = event.kind {
                joins[child].push(e);
            }
        }
        let mut po = vec![0u64; n * w];
        let mut next: Vec<EventId> = Vec::new();
        for a in (0..n).rev() {
            let t = ev[a].thread;
            if t == INIT_THREAD {
                continue;
            }
            next.clear();
            let i = self.index[a] as usize;
            match g.threads[t].events.get(i + 1) {
                Some(&s) => next.push(s),
                None => next.extend(&joins[t]),
            }
            if let EventKind::Spawn { child } = ev[a].kind {
                next.extend(g.threads[child].events.first());
            }
            for &s in &next {
                debug_assert!(a < s, "po-successors are added later");
                let (head, tail) = po.split_at_mut(s * w);
                let dst = &mut head[range(a)];
                or_into(dst, &tail[..w]);
                set(dst, s);
            }
        }
        // po|≠loc: po to events at another location (or none).
        let mut pn = po.clone();
        for a in 0..n {
            if let Some(x) = ev[a].loc {
                for (d, m) in pn[range(a)].iter_mut().zip(&loc_mask[x * w..(x + 1) * w]) {
                    *d &= !*m;
                }
            }
        }
        // mo and fr successors of an event, and the readers of every write.
        let readers = psc::Readers::new(g);
        let mo_after = |e: usize| psc::mo_after(g, e);
        // hb ; po|≠loc, per event, computed when first needed.
        let mut hb_pn = vec![0u64; n * w];
        let mut hb_pn_done = vec![false; n];
        let mut scb = |c: usize, dst: &mut [u64]| {
            or_into(dst, &po[range(c)]);
            let mut add_hb_pn = |c2: usize, dst: &mut [u64]| {
                if !std::mem::replace(&mut hb_pn_done[c2], true) {
                    let mut acc = vec![0u64; w];
                    for d2 in ones(&hb[range(c2)]) {
                        or_into(&mut acc, &pn[range(d2)]);
                    }
                    hb_pn[range(c2)].copy_from_slice(&acc);
                }
                or_into(dst, &hb_pn[range(c2)]);
            };
            // po|≠loc ; hb ; po|≠loc. Every po|≠loc-successor of `c` is the first one in its
            // thread or hb-after it (a spawn or join has no location), so that one's
            // hb ; po|≠loc contains the others'. Past the thread's end, take them all.
            let t = ev[c].thread;
            let first = g.threads[t].events[self.index[c] as usize + 1..]
                .iter()
                .copied()
                .find(|&c2| ev[c2].loc.is_none() || ev[c2].loc != ev[c].loc);
            match first {
                Some(c2) => add_hb_pn(c2, dst),
                None => {
                    for c2 in ones(&pn[range(c)]) {
                        add_hb_pn(c2, dst);
                    }
                }
            }
            if let Some(x) = ev[c].loc {
                for ((d, h), m) in dst
                    .iter_mut()
                    .zip(&hb[range(c)])
                    .zip(&loc_mask[x * w..(x + 1) * w])
                {
                    *d |= *h & *m;
                }
            }
            if ev[c].is_write() || ev[c].is_read() {
                for &m in mo_after(c) {
                    set(dst, m);
                }
            }
        };
        // The hb-predecessors of every seq_cst fence.
        let hb_pred: Vec<Vec<u64>> = fences
            .iter()
            .map(|&f| {
                let mut col = vec![0u64; w];
                for d in (0..n).filter(|&d| has(&hb[range(d)], f)) {
                    set(&mut col, d);
                }
                col
            })
            .collect();
        let meets = |a: &[u64], b: &[u64]| a.iter().zip(b).any(|(x, y)| x & y != 0);
        let mut sc_mask = vec![0u64; w];
        for &e in &sc {
            set(&mut sc_mask, e);
        }
        let mut succ: Vec<Vec<EventId>> = vec![Vec::new(); n];
        for &a in &sc {
            let is_fence = ev[a].is_fence();
            let mut d = vec![0u64; w];
            scb(a, &mut d);
            if is_fence {
                for c in ones(&hb[range(a)]) {
                    scb(c, &mut d);
                }
            }
            let mut out = vec![0u64; w];
            for (o, (x, m)) in out.iter_mut().zip(d.iter().zip(&sc_mask)) {
                *o = x & m;
            }
            for (k, &f) in fences.iter().enumerate() {
                if meets(&d, &hb_pred[k]) {
                    set(&mut out, f);
                }
            }
            if is_fence {
                // psc_F: hb ∪ hb ; eco ; hb between seq_cst fences.
                let mut eco = vec![0u64; w];
                for c in ones(&hb[range(a)]) {
                    let mut targets: Vec<EventId> = mo_after(c).to_vec();
                    if ev[c].is_write() {
                        targets.push(c);
                    } else if !ev[c].is_read() {
                        targets.clear();
                    }
                    for t in targets {
                        if t != c {
                            set(&mut eco, t);
                        }
                        for &r in readers.of(t) {
                            set(&mut eco, r);
                        }
                    }
                }
                for (k, &f) in fences.iter().enumerate() {
                    if has(&hb[range(a)], f) || meets(&eco, &hb_pred[k]) {
                        set(&mut out, f);
                    }
                }
            }
            succ[a] = sc.iter().copied().filter(|&b| has(&out, b)).collect();
        }
        // Acyclicity of psc on the seq_cst events (a self-loop is a cycle).
        let mut color = vec![0u8; n]; // 0 unvisited, 1 on the stack, 2 done
        for &root in &sc {
            if color[root] != 0 {
                continue;
            }
            let mut stack: Vec<(EventId, usize)> = vec![(root, 0)];
            color[root] = 1;
            while let Some(&mut (a, ref mut i)) = stack.last_mut() {
                if let Some(&b) = succ[a].get(*i) {
                    *i += 1;
                    match color[b] {
                        1 => return false,
                        0 => {
                            color[b] = 1;
                            stack.push((b, 0));
                        }
                        _ => {}
                    }
                } else {
                    color[a] = 2;
                    stack.pop();
                }
            }
        }
        true
    }

    /// Data races of a complete graph: accesses to one location from different threads, at
    /// least one a write and one non-atomic, unordered by hb.
    pub fn races(&self, g: &ExecutionGraph) -> Vec<(EventId, EventId)> {
        let ev = &g.events;
        let mut out = Vec::new();
        // Most programs checked are all atomic: no race, and no need to sort by location.
        if !ev
            .iter()
            .any(|e| e.loc.is_some() && !e.order.is_atomic() && e.thread != INIT_THREAD)
        {
            return out;
        }
        let mut by_loc: Vec<Vec<EventId>> = vec![Vec::new(); g.num_locs()];
        for (e, event) in ev.iter().enumerate() {
            if let (Some(x), false) = (event.loc, event.thread == INIT_THREAD) {
                by_loc[x].push(e);
            }
        }
        for acc in by_loc {
            if !acc.iter().any(|&a| !ev[a].order.is_atomic()) {
                continue;
            }
            for (i, &a) in acc.iter().enumerate() {
                for &b in &acc[i + 1..] {
                    let (p, q) = (&ev[a], &ev[b]);
                    if p.thread == q.thread
                        || !(p.is_write() || q.is_write())
                        || (p.order.is_atomic() && q.order.is_atomic())
                    {
                        continue;
                    }
                    if !self.hb_eq(g, a, b) && !self.hb_eq(g, b, a) {
                        out.push((a, b));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::graph::Event;
    use crate::checker::model::Relations;
    use crate::ir::MemOrder::{self, *};

    /// One event of a hand-written graph: (thread, kind, location, order).
    type Spec = (usize, EventKind, Option<Loc>, MemOrder);

    /// One way to place an added event: its rf source or its position in mo.
    type Choice = Box<dyn Fn(&mut ExecutionGraph, EventId)>;

    fn r(t: usize, x: Loc, o: MemOrder) -> Spec {
        (t, EventKind::Read, Some(x), o)
    }
    fn w(t: usize, x: Loc, o: MemOrder) -> Spec {
        (t, EventKind::Write, Some(x), o)
    }
    fn f(t: usize, o: MemOrder) -> Spec {
        (t, EventKind::Fence, None, o)
    }

    /// Adds `specs[i..]` in order, branching over every write a read may read (added before
    /// it) and every position of a write in mo, and compares `psc_acyclic` with the psc of the
    /// relations recomputed with release sequences `rs` at every step, and the views' hb with
    /// theirs. Counts (acyclic, cyclic) steps and, in `counts[2]`, the hb pairs seen.
    fn walk(g: &ExecutionGraph, v: &Views, specs: &[Spec], rs: ReleaseSeq, counts: &mut [u64; 3]) {
        let Some((&(t, kind, loc, order), rest)) = specs.split_first() else {
            return;
        };
        let ev = Event {
            thread: t,
            kind,
            loc,
            order,
            value: 0,
            stmt: None,
            slot: None,
            deps: None,
        };
        let mut choices: Vec<Choice> = Vec::new();
        match (kind, loc) {
            (EventKind::Read, Some(x)) => {
                for &src in &g.mo[x] {
                    choices.push(Box::new(move |g, e| g.rf[e] = Some(src)));
                }
            }
            (EventKind::Write, Some(x)) => {
                for pos in 1..=g.mo[x].len() {
                    choices.push(Box::new(move |g, e| g.mo[x].insert(pos, e)));
                }
            }
            _ => choices.push(Box::new(|_, _| {})),
        }
        for choose in choices {
            let mut g = g.clone();
            let e = g.push(ev.clone());
            choose(&mut g, e);
            let mut v = v.clone();
            v.add(&g, e);
            let rels = Relations::compute(&g, rs);
            for a in 0..g.len() {
                for b in g.num_locs()..g.len() {
                    let want = a == b || rels.hb.has(a, b);
                    assert_eq!(v.hb_eq(&g, a, b), want, "hb({a}, {b}) under {rs:?}: {g:?}");
                    counts[2] += u64::from(a != b && want);
                }
            }
            let expected = rels.psc(&g).is_acyclic();
            assert_eq!(v.psc_acyclic(&g), expected, "{g:?}");
            assert_eq!(v.psc_cyclic(), Some(!expected), "incremental psc: {g:?}");
            // Started on the whole graph at once (`start_psc`): the same verdict.
            let mut late = v.clone();
            late.psc = None;
            late.start_psc(&g);
            assert_eq!(late.psc_cyclic(), Some(!expected), "started psc: {g:?}");
            counts[usize::from(!expected)] += 1;
            walk(&g, &v, rest, rs, counts);
        }
    }

    /// [`walk`] from the initial graph with release sequences `rs`.
    fn walk_all(threads: usize, locs: usize, specs: &[Spec], rs: ReleaseSeq) -> [u64; 3] {
        let g = ExecutionGraph::for_tests(locs, threads);
        let mut v = Views::new(&g, rs);
        v.track_psc();
        let mut counts = [0; 3];
        walk(&g, &v, specs, rs, &mut counts);
        counts
    }

    /// [`walk_all`] under both release-sequence rules; the psc verdicts of the C++20 run.
    fn check(threads: usize, locs: usize, specs: &[Spec]) -> [u64; 2] {
        walk_all(threads, locs, specs, ReleaseSeq::SameThread);
        let [acyclic, cyclic, _] = walk_all(threads, locs, specs, ReleaseSeq::Rmw);
        assert!(
            acyclic > 0 && cyclic > 0,
            "both verdicts: {acyclic} {cyclic}"
        );
        [acyclic, cyclic]
    }

    /// A release write, a relaxed write of the same thread to the same location, and an
    /// acquire read of it: under `c11`'s rule the second write continues the release sequence
    /// (an sw edge), under C++20's it does not. The views agree with the relations either way.
    #[test]
    fn message_views_follow_the_release_sequence_rule() {
        let (x, y) = (0, 1);
        let specs = [
            w(0, x, Relaxed),
            w(0, y, Release),
            w(0, y, Relaxed),
            r(1, y, Acquire),
            r(1, x, Relaxed),
        ];
        let [.., old] = walk_all(2, 2, &specs, ReleaseSeq::SameThread);
        let [.., new] = walk_all(2, 2, &specs, ReleaseSeq::Rmw);
        assert!(new < old, "fewer hb pairs under C++20: {new} vs {old}");
        // A release fence before the relaxed write restores the edge under C++20.
        let mut fenced = specs.to_vec();
        fenced.insert(2, f(0, Release));
        let [.., a] = walk_all(2, 2, &fenced, ReleaseSeq::SameThread);
        let [.., b] = walk_all(2, 2, &fenced, ReleaseSeq::Rmw);
        assert_eq!(a, b, "a release fence heads the sequence under both rules");
    }

    #[test]
    fn psc_agrees_with_the_recomputed_relations() {
        let (x, y, z) = (0, 1, 2);
        // Store buffering through seq_cst fences with relaxed accesses: psc_F (hb ; eco ; hb).
        check(
            2,
            2,
            &[
                w(0, x, Relaxed),
                f(0, SeqCst),
                w(1, y, Relaxed),
                f(1, SeqCst),
                r(0, y, Relaxed),
                r(1, x, Relaxed),
            ],
        );
        // po|≠loc ; hb ; po|≠loc: seq_cst accesses around a release/acquire (or plain) hand-off.
        check(
            3,
            3,
            &[
                w(0, x, SeqCst),
                w(0, y, Release),
                r(1, y, Acquire),
                r(1, z, SeqCst),
                w(2, z, SeqCst),
                w(1, y, NonAtomic),
                r(2, x, SeqCst),
            ],
        );
        // hb|loc: two seq_cst reads of one location ordered by a hand-off, and fences on both
        // sides of a mixed chain.
        check(
            3,
            3,
            &[
                w(2, x, SeqCst),
                r(0, x, SeqCst),
                w(0, y, Release),
                r(1, y, Acquire),
                r(1, x, SeqCst),
                f(2, SeqCst),
                w(1, z, Relaxed),
                r(2, z, Relaxed),
                f(0, SeqCst),
            ],
        );
        // Fences related only through psc_F's eco (an rf edge between plain accesses, which
        // does not synchronise), and back through psc_base.
        check(
            2,
            2,
            &[
                w(0, y, Relaxed),
                f(0, SeqCst),
                w(0, x, NonAtomic),
                r(1, x, NonAtomic),
                f(1, SeqCst),
                w(1, y, Relaxed),
            ],
        );
        // psc_F through eco's mo ; rf (a third thread's relaxed write, read by the other).
        check(
            3,
            2,
            &[
                w(0, y, Relaxed),
                f(0, SeqCst),
                w(0, x, Relaxed),
                w(1, x, Relaxed),
                r(2, x, Relaxed),
                f(2, SeqCst),
                w(2, y, Relaxed),
            ],
        );
        // Several seq_cst events per thread among relaxed ones: the incremental psc keeps one
        // edge into each event per thread (the po-latest), the others being implied by po.
        check(
            3,
            3,
            &[
                w(0, x, SeqCst),
                w(1, y, SeqCst),
                r(2, z, SeqCst),
                w(0, z, Relaxed),
                r(1, x, SeqCst),
                r(0, y, SeqCst),
                f(2, SeqCst),
                w(2, x, Relaxed),
                r(1, z, Relaxed),
                r(2, y, SeqCst),
            ],
        );
        // psc_base between seq_cst accesses and a fence on either side (no second fence).
        check(
            2,
            2,
            &[
                w(0, y, SeqCst),
                w(0, x, SeqCst),
                w(1, x, Relaxed),
                f(1, SeqCst),
                r(1, y, Relaxed),
            ],
        );
    }
}
