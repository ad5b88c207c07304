//! Backward revisits: how TruSt (Kokologiannakis, Marmanis, Gladstein and Vafeiadis, "Truly
//! Stateless, Optimal Dynamic Partial Order Reduction", POPL 2022) reaches every graph once
//! without waiting reads and without remembering visited graphs.
//!
//! # The algorithm
//!
//! Events are added one at a time, each after its po-predecessor (the lowest thread with an
//! enabled event moves). A read branches on every write it may read *now*. A write `a` branches
//! on its mo positions (forward) and, for every read `r` of its location that is not in `a`'s
//! porf-prefix, on a **backward revisit**: the graph is restricted to the events added before
//! `r` plus `a`'s porf-prefix, `r` reads from `a`, and the exploration goes on from there.
//!
//! A revisit happens only if `r` and every deleted event were **maximally added**: a read reads
//! from the mo-latest write among the events added before it and `a`'s porf-prefix (and took
//! its source's first outcome), a write is mo-latest among them and no read among them reads
//! from it. Of all graphs that restrict to the same revisited graph, exactly one has its
//! deleted part maximal, so each graph is produced once; the paper proves it for every model
//! whose consistency is prefix-closed and in which a maximally added event keeps a graph
//! consistent (SC, TSO, PSO, RC11 without load buffering; we also run ARMv8 and C11 this way,
//! both without load buffering, and the brute-force oracle checks the counts).
//!
//! # How the restricted graph is built
//!
//! Event ids stay a linearisation of po ∪ rf (the incremental views need a read's source
//! before the read), so "added before" is kept separately as a stamp per event ([`Added`]); a
//! revisited read keeps its stamp while its new source gets a later one. The restricted state
//! is rebuilt by **replaying** the kept events, in their old id order: each thread's local code
//! is re-run up to its next kept event, which is added with the same source and mo order as
//! before. This re-derives registers, loop counts, blocked threads and bugs of the smaller graph
//! without storing them per event. The kept events are a porf-prefix of a consistent graph
//! (hence consistent), so only `a` (at each mo position) and `r` are checked.
//!
//! The replay starts from a **snapshot**: up to the first event deleted (or `r`), the kept
//! events are an id-prefix of the graph, and replaying them would rebuild a state this path
//! went through. The explorer keeps the state before a read when it branches (it has it anyway)
//! and a copy at least every `SNAPSHOT_EVERY` events, as a stack along the current path; a
//! revisit starts from the latest one within that prefix and hides the later ones below it
//! (they are no prefix of the restricted graph). A snapshot's threads may have run their local
//! code up to their next event, which the replay would do later: the same registers and bugs.
//! Under `Limits::verify_incremental` every revisit from a snapshot is also replayed from the
//! initial state and the two must agree.

use super::{Explorer, ReadChoice, State, Status};
use crate::checker::graph::{reset, with_room, EventId, EventKind, ExecutionGraph};
use crate::checker::{Control, Incomplete};
use std::rc::Rc;

/// When each event was added (TruSt's `≤G`), and which reads took the second outcome of their
/// source (a weak CAS failing spuriously).
#[derive(Clone, Debug, Default)]
pub(super) struct Added {
    stamp: Vec<u32>,
    alt: Vec<bool>,
    next: u32,
}

impl Added {
    /// A copy to be extended by about `more` events.
    pub(super) fn fork(&self, more: usize) -> Added {
        Added {
            stamp: with_room(&self.stamp, more),
            alt: with_room(&self.alt, more),
            next: self.next,
        }
    }

    /// The stamps of a graph of `init` initialisation writes.
    pub(super) fn new(init: usize) -> Added {
        Added {
            stamp: (0..init as u32).collect(),
            alt: vec![false; init],
            next: init as u32,
        }
    }

    pub(super) fn reserve(&mut self, more: usize) {
        self.stamp.reserve(more);
        self.alt.reserve(more);
    }

    /// Stamps the event just appended as the latest one.
    pub(super) fn push(&mut self, alt: bool) {
        self.stamp.push(self.next);
        self.alt.push(alt);
        self.next += 1;
    }
}

/// A revisit's rebuilt state, the new number of every old thread and the new id of every
/// kept event (see [`Explorer::rebuild`]).
type Rebuilt = (State, Vec<usize>, Vec<EventId>);

/// The write doing a backward revisit.
#[derive(Clone, Copy, Debug)]
pub(super) enum Writer {
    /// The pending store of `thread`, not yet in the graph (its mo position is branched on).
    Store { thread: usize },
    /// The write part of an RMW, in the graph (right after the write its read part read).
    Rmw { write: EventId },
}

/// When `x` is the first write of an allocation ([`crate::ir::Instr::Alloc`]): the number of
/// its cells (events `x ..`, one per location).
fn allocation(g: &ExecutionGraph, x: EventId) -> Option<usize> {
    let loc = g.events[x].loc?;
    let i = loc.checked_sub(g.num_inits())?;
    let d = g.dynamic.get(i)?;
    if d.event != x || d.offset != 0 {
        return None;
    }
    Some(d.len)
}

/// [`candidates`]' working buffers, kept per thread: it runs for every write added, and
/// most of its answers are empty.
#[derive(Default)]
struct Scratch {
    porf: Vec<bool>,
    upto: Vec<usize>,
    stack: Vec<EventId>,
    /// The events outside the porf-prefix, as `stamp << 32 | id`.
    outside: Vec<u64>,
    first_reader: Vec<u32>,
    porf_reader: Vec<bool>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// The reads of `loc` a new write may revisit, latest first, and the write's porf-prefix in
/// `g` (what every one of its revisits keeps besides the events added before the read; empty
/// when there is no read to revisit).
/// `roots`: the write's porf predecessors in `g` (its thread's last event, or the write itself
/// for an RMW's, whose read part is in `g`); `a`: the write when it is in `g`.
pub(super) fn candidates(
    g: &ExecutionGraph,
    added: &Added,
    loc: usize,
    roots: &[EventId],
    a: Option<EventId>,
) -> (Vec<EventId>, Vec<bool>) {
    let n = g.len();
    let reads = (g.num_inits()..n).any(|e| g.events[e].is_read() && g.events[e].loc == Some(loc));
    if !reads {
        return (Vec::new(), Vec::new());
    }
    SCRATCH.with_borrow_mut(|s| {
        g.porf_prefix_into(roots, &mut s.porf, &mut s.upto, &mut s.stack);
        let porf = &s.porf;
        s.outside.clear();
        s.outside.extend(
            (g.num_inits()..n)
                .filter(|&e| !porf[e])
                .map(|e| u64::from(added.stamp[e]) << 32 | e as u64),
        );
        s.outside.sort_unstable_by(|x, y| y.cmp(x));
        let mut found = Vec::new();
        let mut readers_known = false;
        // Each event's maximality does not depend on the read revisited: walk back from the
        // latest event; the first one not maximally added ends the candidates (it would be
        // deleted by any earlier read's revisit).
        for &key in &s.outside {
            let e = (key & u64::from(u32::MAX)) as EventId;
            let ev = &g.events[e];
            if ev.kind == EventKind::Write && !readers_known {
                first_readers(g, added, porf, (&mut s.first_reader, &mut s.porf_reader));
                readers_known = true;
            }
            let readers = (s.first_reader.as_slice(), s.porf_reader.as_slice());
            if !maximal(g, added, porf, readers, a, e) {
                break;
            }
            if ev.is_read() && ev.loc == Some(loc) {
                found.push(e);
            }
        }
        let porf = if found.is_empty() {
            Vec::new()
        } else {
            s.porf.clone()
        };
        (found, porf)
    })
}

/// Per write, the earliest stamp among its readers and whether one is in the prefix `porf`
/// (what a write's maximality asks of its readers, found in one pass).
fn first_readers(
    g: &ExecutionGraph,
    added: &Added,
    porf: &[bool],
    (first_reader, porf_reader): (&mut Vec<u32>, &mut Vec<bool>),
) {
    reset(first_reader, g.len(), u32::MAX);
    reset(porf_reader, g.len(), false);
    for (x, w) in g.rf.iter().enumerate() {
        if let Some(w) = *w {
            first_reader[w] = first_reader[w].min(added.stamp[x]);
            porf_reader[w] |= porf[x];
        }
    }
}

/// Whether `e` was maximally added with respect to the events added no later than it and the
/// revisiting write's porf-prefix (`a` itself excluded). `readers`: per write, the earliest
/// stamp among its readers and whether one of them is in the prefix.
fn maximal(
    g: &ExecutionGraph,
    added: &Added,
    porf: &[bool],
    (first_reader, porf_reader): (&[u32], &[bool]),
    a: Option<EventId>,
    e: EventId,
) -> bool {
    let stamp = added.stamp[e];
    let previous = |x: EventId| Some(x) != a && (added.stamp[x] <= stamp || porf[x]);
    let ev = &g.events[e];
    let latest = |w: EventId| {
        let mo = &g.mo[ev.loc.expect("an access has a location")];
        let pos = mo.iter().position(|&x| x == w).expect("a write is in mo");
        mo[pos + 1..].iter().all(|&x| !previous(x))
    };
    match ev.kind {
        EventKind::Read => {
            if added.alt[e] {
                return false;
            }
            let w = g.rf[e].expect("a read has a source");
            previous(w) && latest(w)
        }
        // No reader of `e` is previous (a read is never `a`, a write).
        EventKind::Write => latest(e) && !(first_reader[e] <= stamp || porf_reader[e]),
        // A choice took its first value.
        EventKind::Choice => !added.alt[e],
        _ => true,
    }
}

impl<F: FnMut(&ExecutionGraph) -> Control> Explorer<'_, F> {
    /// Continues from `next`, whose last event `w` is an RMW's write: revisiting every read `w`
    /// may revisit, then forward (unless `next` is known inconsistent).
    pub(super) fn after_rmw(&mut self, next: State, w: EventId, forward: bool) {
        let loc = next.g.events[w].loc.expect("a write has a location");
        let (revisits, porf) = candidates(&next.g, &next.added, loc, &[w], Some(w));
        if revisits.is_empty() {
            if forward {
                self.run(next);
            }
            return;
        }
        // Revisits first, from `next` itself (no copy of it is kept).
        for r in revisits {
            self.revisit(&next.g, &next.added, &porf, r, Writer::Rmw { write: w });
            if self.should_stop() {
                return;
            }
        }
        if forward {
            self.run(next);
        }
    }

    /// The backward revisit of read `r` of `g` by `a`, whose porf-prefix in `g` is `porf` (from
    /// [`candidates`]): the events added before `r` and that prefix are replayed, then `r`
    /// reads from `a`.
    pub(super) fn revisit(
        &mut self,
        g: &ExecutionGraph,
        added: &Added,
        porf: &[bool],
        r: EventId,
        a: Writer,
    ) {
        self.stats.revisits += 1;
        let limit = added.stamp[r];
        // The write part of every RMW's read part, and which events are write parts (added
        // with their read part).
        let mut rmw_write: Vec<Option<EventId>> = vec![None; g.len()];
        let mut write_part = vec![false; g.len()];
        for &(rd, w) in &g.rmw {
            rmw_write[rd] = Some(w);
            write_part[w] = true;
        }
        // The kept events are replayed in id order: up to the first one deleted (or `r`),
        // the replay would rebuild exactly the states this path went through, so it starts
        // from the latest one kept (a snapshot taken before a read branched).
        let kept = |x: EventId| x != r && (added.stamp[x] < limit || porf[x]);
        let same = (g.num_inits()..g.len())
            .find(|&x| !kept(x) && !write_part[x])
            .unwrap_or(g.len());
        let k = self.snapshots.partition_point(|&(len, _)| len <= same);
        // Below the revisit, states after `same` are no prefix of the graph any more.
        let hidden = self.snapshots.split_off(k);
        let base = self.snapshots.last().map(|(_, st)| Rc::clone(st));
        let parts = (rmw_write.as_slice(), write_part.as_slice());
        if let Some(rebuilt) = self.rebuild(g, added, &kept, parts, base.as_deref()) {
            if self.limits.verify_incremental && base.is_some() {
                // The snapshot must stand for the replayed prefix exactly. Its threads may
                // have run their local code further (up to their next event, as any state
                // the exploration branched from): compare after every thread did.
                let scratch = self.rebuild(g, added, &kept, parts, None);
                let mut key = |(st, threads, ids): &Rebuilt| {
                    let mut st = st.clone();
                    self.run_locals(&mut st);
                    let locals: Vec<_> = st.th.iter().map(|t| (t.pc, &t.regs, &t.status)).collect();
                    let mut bugs: Vec<String> =
                        st.g.bugs.iter().map(|b| format!("{b:?}")).collect();
                    bugs.sort();
                    let g = &st.g;
                    let graph = (&g.events, &g.rf, &g.mo, &g.rmw, &st.added.stamp, &g.threads);
                    format!("{graph:?} {locals:?} {bugs:?} {threads:?} {ids:?}")
                };
                let (want, got) = (scratch.as_ref().map(&mut key), key(&rebuilt));
                assert_eq!(
                    want,
                    Some(got),
                    "a revisit from a snapshot differs from the replay from scratch"
                );
            }
            self.revisited(rebuilt, g, added.stamp[r], r, a);
        }
        self.snapshots.extend(hidden);
    }

    /// [`Self::revisit`]'s restricted graph before `r` reads from its new source: the events
    /// `kept` replayed in their old id order, from `base` (the state of an id-prefix of them)
    /// or from the initial state; with the new thread number of every old thread and the new
    /// id of every kept event. None when the exploration must stop or the kept events cannot
    /// be consistent.
    fn rebuild(
        &mut self,
        g: &ExecutionGraph,
        added: &Added,
        kept: &dyn Fn(EventId) -> bool,
        (rmw_write, write_part): (&[Option<EventId>], &[bool]),
        base: Option<&State>,
    ) -> Option<Rebuilt> {
        let mut threads = vec![usize::MAX; g.threads.len()];
        let mut ids = vec![usize::MAX; g.len()];
        let mut st = match base {
            Some(base) => base.fork(g.len() + 2 - base.g.len()),
            None => {
                let mut st = super::initial_state(self.prog, self.model, &self.limits);
                st.reserve(g.len() + 2);
                st
            }
        };
        let start = if base.is_some() {
            st.g.len()
        } else {
            g.num_inits()
        };
        debug_assert!(st.added.stamp[g.num_inits()..start] == added.stamp[g.num_inits()..start]);
        for (u, t) in threads.iter_mut().enumerate().take(st.th.len()) {
            *t = u;
        }
        for (i, id) in ids.iter_mut().enumerate().take(start) {
            *id = i;
        }
        for x in start..g.len() {
            if write_part[x] || !kept(x) || ids[x] != usize::MAX {
                continue;
            }
            let t = threads[g.events[x].thread];
            if let Some(cells) = allocation(g, x) {
                // The whole object comes back, at the same locations (pointers to it are
                // recomputed equal); its other cells are mapped here, not replayed.
                if !self.local(&mut st, t) {
                    return None;
                }
                let at = g.events[x].loc;
                let last = self.apply_alloc(&mut st, t, at);
                for (k, old) in (x..x + cells).enumerate() {
                    ids[old] = last + 1 + k - cells;
                    st.added.stamp[ids[old]] = added.stamp[old];
                }
                continue;
            }
            let rmw = rmw_write[x].is_some();
            if !self.replay_step(&mut st, g, x, t, &ids, added.alt[x]) {
                return None;
            }
            let id = st.g.len() - 1 - usize::from(rmw);
            ids[x] = id;
            st.added.stamp[id] = added.stamp[x];
            st.added.alt[id] = added.alt[x];
            if let Some(w) = rmw_write[x] {
                ids[w] = id + 1;
                st.added.stamp[id + 1] = added.stamp[w];
            }
            if let EventKind::Spawn { child } = g.events[x].kind {
                threads[child] = st.th.len() - 1;
            }
        }
        st.added.next = added.next;
        // Locations of objects whose allocation was removed stay, empty: a new allocation
        // must not reuse the place of one a kept pointer value may still name.
        let inits = g.num_inits();
        while st.g.mo.len() < g.mo.len() {
            let x = st.g.mo.len();
            st.g.mo.push(Vec::new());
            st.g.dynamic.push(crate::checker::graph::DynLoc {
                event: usize::MAX,
                ..g.dynamic[x - inits]
            });
        }
        Some((st, threads, ids))
    }

    /// Goes on from a revisit's rebuilt graph: `r` (stamped `limit`) reads from `a`.
    fn revisited(
        &mut self,
        rebuilt: Rebuilt,
        g: &ExecutionGraph,
        limit: u32,
        r: EventId,
        a: Writer,
    ) {
        let (mut st, threads, ids) = rebuilt;
        let rt = threads[g.events[r].thread];
        match a {
            Writer::Rmw { write } => {
                // The RMW was checked only as part of a graph it may have been inconsistent
                // with (another RMW read its source): check it in the smaller graph.
                let a = ids[write];
                if self.consistent(&mut st, a) {
                    self.read_from(st, rt, a, limit);
                }
            }
            Writer::Store { thread } => {
                let t = threads[thread];
                if !self.local(&mut st, t) {
                    return;
                }
                let loc = self.pending_loc(&st, t).expect("the revisiting store");
                let positions = self.store_positions(&st, t, loc);
                let mut slot = Some(std::borrow::Cow::Owned(st));
                for (k, &pos) in positions.iter().enumerate() {
                    let mut next = super::take_last(&mut slot, k + 1 == positions.len());
                    let id = self.apply_store(&mut next, t, loc, pos);
                    if self.consistent(&mut next, id) {
                        self.read_from(next, rt, id, limit);
                    }
                    if self.should_stop() {
                        return;
                    }
                }
            }
        }
    }

    /// Runs thread `t`'s local code up to its next event; false when the exploration must
    /// stop (a local loop that never reaches an event).
    fn local(&mut self, st: &mut State, t: usize) -> bool {
        match self.run_local(st, t) {
            Ok(()) => true,
            Err(inc) => {
                self.stats.incomplete = Some::<Incomplete>(inc);
                false
            }
        }
    }

    /// Adds old event `x` of `g` again as thread `t`'s next event in `st`, with the same
    /// source (renamed by `ids`) and outcome (`alt`), or the same place in mo among the
    /// events replayed so far. False when the exploration must stop, or when the replayed
    /// graph cannot be consistent (two kept RMWs read the same write).
    fn replay_step(
        &mut self,
        st: &mut State,
        g: &ExecutionGraph,
        x: EventId,
        t: usize,
        ids: &[EventId],
        alt: bool,
    ) -> bool {
        if !self.local(st, t) {
            return false;
        }
        debug_assert_eq!(st.th[t].status, Status::Running, "replayed thread stopped");
        let old = &g.events[x];
        match old.kind {
            EventKind::Read => {
                let loc = self.pending_loc(st, t).expect("a replayed read");
                debug_assert_eq!(Some(loc), old.loc, "replay diverged");
                let w = ids[g.rf[x].expect("a read has a source")];
                let choice = self.forced_choice(st, t, loc, w, usize::from(alt));
                if choice.wev.is_some() && !st.views.free_for_rmw(w) {
                    // Another kept RMW read the same write: no consistent graph.
                    return false;
                }
                let sc = self.pending_is_sc(st, t);
                self.apply_read(st, t, loc, &choice, sc);
            }
            EventKind::Write => {
                let loc = old.loc.expect("a write has a location");
                let before = g.mo[loc].iter().position(|&y| y == x).expect("in mo");
                let pos = g.mo[loc][..before]
                    .iter()
                    .filter(|&&y| ids[y] != usize::MAX)
                    .count();
                self.apply_store(st, t, loc, pos);
            }
            EventKind::Fence
            | EventKind::Spawn { .. }
            | EventKind::Join { .. }
            | EventKind::Free { .. } => {
                self.apply_other(st, t);
            }
            EventKind::Choice => self.apply_choice(st, t, old.value, alt),
            EventKind::Init => unreachable!("init events are not replayed"),
        }
        true
    }

    /// The way thread `t`'s pending read of `loc` reads from `w` with its `k`-th outcome.
    fn forced_choice(&self, st: &State, t: usize, loc: usize, w: EventId, k: usize) -> ReadChoice {
        let ins = self.instr(st, t);
        let value = st.g.events[w].value;
        let effects = super::read_effects(ins, &st.th[t].regs, value, self.limits.spurious_cas);
        let (read_order, write, sets) = effects.into_iter().nth(k).expect("replayed outcome");
        let (ev, wev) = self.read_events(st, t, loc, read_order, value, write);
        ReadChoice {
            w,
            ev,
            wev,
            by_value: false,
            sets,
            alt: k > 0,
            forward: true,
        }
    }

    /// Thread `t`'s pending read (the revisited one, stamped `stamp`) reads from `a`: each
    /// coherent outcome is explored (an RMW's write part may revisit in turn).
    fn read_from(&mut self, mut st: State, t: usize, a: EventId, stamp: u32) {
        if !self.local(&mut st, t) {
            return;
        }
        let loc = self.pending_loc(&st, t).expect("the revisited read");
        let choices = self.read_choices(&st, t, loc, vec![a]);
        let sc = self.pending_is_sc(&st, t);
        let n = choices.len();
        let mut slot = Some(std::borrow::Cow::Owned(st));
        for (k, choice) in choices.into_iter().enumerate() {
            let mut next = super::take_last(&mut slot, k + 1 == n);
            let (id, last) = self.apply_read(&mut next, t, loc, &choice, sc);
            // The revisited read keeps its place in the order of additions.
            next.added.stamp[id] = stamp;
            if self.consistent(&mut next, last) {
                if choice.wev.is_some() {
                    self.after_rmw(next, last, true);
                } else {
                    self.run(next);
                }
            }
            if self.should_stop() {
                return;
            }
        }
    }
}
