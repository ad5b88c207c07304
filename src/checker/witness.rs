//! Sequentially consistent witnesses for the coarser equivalences (`--equiv rf|value`).
//!
//! Under `--equiv rf` the explorer does not branch on coherence order: a partial graph is a
//! set of events with po and rf only, and it stands for every graph with that po and rf. Under
//! `--equiv value` some reads are further constrained only by the value they read. Such a
//! partial graph exists under SC iff some interleaving of its events makes every read read
//! from its source (or read its value): a **witness**. This module keeps one witness per
//! partial graph and extends it with each new event:
//!
//! * a write, fence, spawn or join is appended at the end (nothing before it can be disturbed);
//! * a read is inserted at the latest position after its po-predecessor where the last write
//!   to its location satisfies it; an RMW's read and write are inserted together where, in
//!   addition, no later read of the location comes before the next write to it;
//! * when that fails, a search over interleavings (reads, fences, spawns and joins are taken
//!   greedily as soon as they are enabled and satisfied, which loses no witness; branching only
//!   on writes; failed states memoised) finds a witness or proves there is none.
//!
//! Having a witness is prefix-closed (a witness restricted to a po ∪ rf-prefix is a witness),
//! so the explorer can cut a partial graph as soon as it has none. A complete graph's witness
//! gives it a real coherence order (the order of its writes) and, for value-constrained reads,
//! a real source ([`Witness::apply`]): the graph handed to the visitor is an SC execution.

use super::graph::{EventId, EventKind, ExecutionGraph, INIT_THREAD};
use std::collections::HashSet;

type Memo = HashSet<(Vec<usize>, Vec<EventId>), foldhash::fast::FixedState>;

/// One SC interleaving of a partial graph, plus how each of its reads is constrained.
#[derive(Clone, Debug, Default)]
pub struct Witness {
    /// The non-initialisation events of the graph, in an SC order.
    order: Vec<EventId>,
    /// Per event id: the read must read its own `value` (from any write), not exactly `rf`.
    by_value: Vec<bool>,
}

impl Witness {
    pub fn new(g: &ExecutionGraph) -> Witness {
        Witness {
            order: Vec::new(),
            by_value: vec![false; g.len()],
        }
    }

    /// Records whether event `e` (just pushed to the graph) is constrained by value only.
    pub fn note(&mut self, e: EventId, by_value: bool) {
        if self.by_value.len() <= e {
            self.by_value.resize(e + 1, false);
        }
        self.by_value[e] = by_value;
    }

    /// Whether read `e` is constrained by its value only.
    pub fn by_value(&self, e: EventId) -> bool {
        is_by_value(&self.by_value, e)
    }

    /// Extends the witness with `e`, the last event of `g` (for an RMW, its write part: the
    /// read part is the event before it). Returns false when `g` has no SC witness. `hb` is
    /// happens-before-or-equal on `g`'s events (any relation contained in po ∪ rf will do:
    /// it only speeds up refutations).
    pub fn extend(
        &mut self,
        g: &ExecutionGraph,
        e: EventId,
        hb: &dyn Fn(EventId, EventId) -> bool,
    ) -> bool {
        let rmw_read = g.rmw.last().filter(|&&(_, w)| w == e).map(|&(r, _)| r);
        let first = rmw_read.unwrap_or(e);
        let ev = &g.events[first];
        if ev.kind != EventKind::Read {
            self.order.push(e);
            return true;
        }
        let loc = ev.loc.unwrap_or(0);
        // The earliest position: after the po-predecessor (or the spawn of the thread).
        let tr = &g.threads[ev.thread];
        let pred = match g.index_in_thread(first) {
            Some(i) if i > 0 => Some(tr.events[i - 1]),
            _ => tr.spawned_by,
        };
        if !self.by_value(first)
            && self.obviously_incoherent(g, first, rmw_read.is_some(), pred, hb)
        {
            return false;
        }
        let lo = pred
            .and_then(|p| self.order.iter().position(|&x| x == p))
            .map_or(0, |p| p + 1);
        // Scan: `last` is the latest write to `loc` before position p.
        let mut last: EventId = loc;
        let mut best = None;
        let mut rmw_reads = vec![false; g.len()];
        for &(r, _) in &g.rmw {
            rmw_reads[r] = true;
        }
        for p in 0..=self.order.len() {
            // Never between the read and the write of an RMW (they are adjacent).
            let splits = p > 0 && rmw_reads[self.order[p - 1]];
            if p >= lo && !splits && satisfies(g, &self.by_value, first, last) {
                let clean = rmw_read.is_none() || self.next_is_write(g, loc, p);
                if clean {
                    best = Some(p);
                }
            }
            if let Some(&x) = self.order.get(p) {
                let xe = &g.events[x];
                if xe.is_write() && xe.loc == Some(loc) {
                    last = x;
                }
            }
        }
        if let Some(p) = best {
            match rmw_read {
                Some(r) => {
                    self.order.insert(p, e);
                    self.order.insert(p, r);
                }
                None => self.order.insert(p, e),
            }
            return true;
        }
        // Keep the witness up to the source (it stays a valid schedule) and search for the
        // rest; only if that fails, search from scratch.
        let keep = match self.by_value(first) {
            false => g.rf[first].and_then(|w| self.order.iter().position(|&x| x == w)),
            // By value: up to the latest write of the value read.
            true => self.order.iter().rposition(|&x| {
                let xe = &g.events[x];
                xe.is_write() && xe.loc == Some(loc) && xe.value == ev.value
            }),
        };
        let found = keep
            .and_then(|k| search(g, &self.by_value, &self.order[..=k]))
            .or_else(|| search(g, &self.by_value, &[]));
        match found {
            Some(order) => {
                self.order = order;
                true
            }
            None => false,
        }
    }

    /// Cheap refutations of a read `r` with an exact source `w` (`rmw`: the read of an RMW;
    /// `pred`: its po-predecessor or spawn; `hb`: happens-before-or-equal on the graph's
    /// events), so that the search runs
    /// mostly on graphs that have a witness: another RMW already read `w` (atomicity), or some
    /// other write to the location is hb-after `w` and hb-before `r` (hb is contained in
    /// po ∪ rf, which every interleaving respects, so that write falls between them).
    fn obviously_incoherent(
        &self,
        g: &ExecutionGraph,
        r: EventId,
        rmw: bool,
        pred: Option<EventId>,
        hb: &dyn Fn(EventId, EventId) -> bool,
    ) -> bool {
        let Some(w) = g.rf[r] else { return false };
        let Some(loc) = g.events[r].loc else {
            return false;
        };
        if rmw
            && g.rmw
                .iter()
                .any(|&(r2, _)| r2 != r && g.rf[r2] == Some(w) && !self.by_value(r2))
        {
            return true;
        }
        let Some(pred) = pred else { return false };
        g.mo[loc].iter().any(|&x| x != w && hb(w, x) && hb(x, pred))
    }

    /// Whether the first access to `loc` at or after position `p` is a write (or there is none).
    fn next_is_write(&self, g: &ExecutionGraph, loc: usize, p: usize) -> bool {
        for &x in &self.order[p..] {
            let xe = &g.events[x];
            if xe.loc == Some(loc) && xe.is_access() {
                return xe.is_write();
            }
        }
        true
    }

    /// Gives the complete graph `g` the coherence order of the witness and, for reads
    /// constrained by value, the write the witness lets them read.
    pub fn apply(&self, g: &mut ExecutionGraph) {
        let locs = g.mo.len();
        let mut last: Vec<EventId> = (0..locs).collect();
        for m in g.mo.iter_mut() {
            m.truncate(1);
        }
        for &x in &self.order {
            let ev = &g.events[x];
            let Some(loc) = ev.loc else { continue };
            match ev.kind {
                EventKind::Read if self.by_value(x) => g.rf[x] = Some(last[loc]),
                EventKind::Write => {
                    g.mo[loc].push(x);
                    last[loc] = x;
                }
                _ => {}
            }
        }
    }
}

/// Whether read `e` is constrained by its value only (`by_value` is indexed by event).
fn is_by_value(by_value: &[bool], e: EventId) -> bool {
    by_value.get(e).copied().unwrap_or(false)
}

/// Whether read `r` is satisfied when `last` is the latest write to its location: it reads
/// `last` exactly, or (by value) `last` wrote the value it read.
fn satisfies(g: &ExecutionGraph, by_value: &[bool], r: EventId, last: EventId) -> bool {
    if is_by_value(by_value, r) {
        g.events[last].value == g.events[r].value
    } else {
        g.rf[r] == Some(last)
    }
}

/// Finds an SC interleaving of `g` (see the module docs) that starts with `prefix` (a prefix
/// of a valid interleaving of a subgraph), or proves there is none.
fn search(g: &ExecutionGraph, by_value: &[bool], prefix: &[EventId]) -> Option<Vec<EventId>> {
    let mut rmw_of = vec![None; g.len()];
    for &(r, w) in &g.rmw {
        rmw_of[r] = Some(w);
    }
    let mut exact_readers = vec![Vec::new(); g.len()];
    for (r, src) in g.rf.iter().enumerate() {
        if let Some(w) = src {
            if !is_by_value(by_value, r) {
                exact_readers[*w].push(r);
            }
        }
    }
    let mut s = Search {
        g,
        by_value,
        rmw_of,
        exact_readers,
        pos: vec![0; g.threads.len()],
        last: (0..g.mo.len()).collect(),
        done: vec![false; g.len()],
        order: Vec::new(),
        failed: Memo::default(),
    };
    for e in 0..g.len() {
        if g.events[e].thread == INIT_THREAD {
            s.done[e] = true;
        }
    }
    for &e in prefix {
        s.schedule(g.events[e].thread, e);
    }
    s.dfs().then_some(s.order)
}

struct Search<'a> {
    g: &'a ExecutionGraph,
    by_value: &'a [bool],
    /// Per read of an RMW: its write.
    rmw_of: Vec<Option<EventId>>,
    /// Per write: the reads that must read exactly it.
    exact_readers: Vec<Vec<EventId>>,
    /// Per thread: how many of its events are scheduled.
    pos: Vec<usize>,
    /// Per location: the latest write scheduled.
    last: Vec<EventId>,
    done: Vec<bool>,
    order: Vec<EventId>,
    /// States (positions, latest writes) known to have no completion.
    failed: Memo,
}

/// What the next event of a thread is, for the search.
enum Step {
    /// Not enabled yet (its spawn or joined thread is not done), or the thread is done.
    Blocked,
    /// A fence, spawn, join or satisfied read: taken greedily.
    Free,
    /// A read not satisfied now.
    Unsatisfied,
    /// A write, or an RMW whose read is satisfied now: branched on.
    Write,
}

impl Search<'_> {
    fn rmw_write_of(&self, r: EventId) -> Option<EventId> {
        self.rmw_of[r]
    }

    fn satisfied(&self, r: EventId) -> bool {
        let loc = self.g.events[r].loc.unwrap_or(0);
        satisfies(self.g, self.by_value, r, self.last[loc])
    }

    fn step(&self, t: usize) -> Step {
        let tr = &self.g.threads[t];
        let Some(&e) = tr.events.get(self.pos[t]) else {
            return Step::Blocked;
        };
        if self.pos[t] == 0 {
            if let Some(sp) = tr.spawned_by {
                if !self.done[sp] {
                    return Step::Blocked;
                }
            }
        }
        let ev = &self.g.events[e];
        match ev.kind {
            EventKind::Join { child } => {
                let c = &self.g.threads[child];
                if self.pos[child] == c.events.len() && c.events.iter().all(|&x| self.done[x]) {
                    Step::Free
                } else {
                    Step::Blocked
                }
            }
            EventKind::Read => {
                if !self.satisfied(e) {
                    Step::Unsatisfied
                } else if self.rmw_write_of(e).is_some() {
                    Step::Write
                } else {
                    Step::Free
                }
            }
            EventKind::Write => Step::Write,
            _ => Step::Free,
        }
    }

    fn take(&mut self, t: usize) -> usize {
        let e = self.g.threads[t].events[self.pos[t]];
        let mut taken = 1;
        self.schedule(t, e);
        if let Some(w) = self.rmw_write_of(e) {
            self.schedule(t, w);
            taken = 2;
        }
        taken
    }

    fn schedule(&mut self, t: usize, e: EventId) {
        self.pos[t] += 1;
        self.done[e] = true;
        self.order.push(e);
        let ev = &self.g.events[e];
        if ev.kind == EventKind::Write {
            self.last[ev.loc.unwrap_or(0)] = e;
        }
    }

    fn dfs(&mut self) -> bool {
        // Greedy part: free steps never hurt (they change no memory).
        let mark = self.order.len();
        let saved_last = self.last.clone();
        let saved_pos = self.pos.clone();
        loop {
            let mut progress = false;
            for t in 0..self.g.threads.len() {
                while let Step::Free = self.step(t) {
                    self.take(t);
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        if (0..self.g.threads.len()).all(|t| self.pos[t] == self.g.threads[t].events.len()) {
            return true;
        }
        let key = (self.pos.clone(), self.last.clone());
        if !self.failed.contains(&key) {
            for t in 0..self.g.threads.len() {
                if !matches!(self.step(t), Step::Write) {
                    continue;
                }
                if self.overwrites_needed_write(t) {
                    continue;
                }
                let before = (self.order.len(), self.last.clone(), self.pos.clone());
                self.take(t);
                if self.dfs() {
                    return true;
                }
                for &x in &self.order[before.0..] {
                    self.done[x] = false;
                }
                self.order.truncate(before.0);
                self.last = before.1;
                self.pos = before.2;
            }
            self.failed.insert(key);
        }
        for &x in &self.order[mark..] {
            self.done[x] = false;
        }
        self.order.truncate(mark);
        self.last = saved_last;
        self.pos = saved_pos;
        false
    }

    /// Whether thread `t`'s next write would overwrite a write that an unscheduled read must
    /// read exactly (that read could then never be satisfied).
    fn overwrites_needed_write(&self, t: usize) -> bool {
        let e = self.g.threads[t].events[self.pos[t]];
        let w = self.rmw_write_of(e).unwrap_or(e);
        let loc = self.g.events[w].loc.unwrap_or(0);
        let cur = self.last[loc];
        self.exact_readers[cur]
            .iter()
            .any(|&r| r != e && !self.done[r])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::graph::Event;
    use crate::ir::MemOrder;

    fn graph(locs: usize, threads: usize) -> ExecutionGraph {
        ExecutionGraph::for_tests(locs, threads)
    }

    fn ev(thread: usize, kind: EventKind, loc: usize, value: i64) -> Event {
        Event {
            thread,
            kind,
            loc: Some(loc),
            order: MemOrder::SeqCst,
            value,
            stmt: None,
            slot: None,
            deps: None,
        }
    }

    fn write(g: &mut ExecutionGraph, w: &mut Witness, t: usize, loc: usize, v: i64) -> bool {
        let id = g.push(ev(t, EventKind::Write, loc, v));
        g.mo[loc].push(id);
        w.note(id, false);
        w.extend(g, id, &|_, _| false)
    }

    fn read(g: &mut ExecutionGraph, w: &mut Witness, t: usize, from: EventId, v: bool) -> bool {
        let loc = g.events[from].loc.unwrap_or(0);
        let value = g.events[from].value;
        let id = g.push(ev(t, EventKind::Read, loc, value));
        g.rf[id] = Some(from);
        w.note(id, v);
        w.extend(g, id, &|_, _| false)
    }

    #[test]
    fn store_buffering_has_no_witness_when_both_reads_see_zero() {
        // T0: x = 1; r = y    T1: y = 1; s = x    (r = s = 0 is not SC)
        let mut g = graph(2, 2);
        let mut w = Witness::new(&g);
        assert!(write(&mut g, &mut w, 0, 0, 1));
        assert!(read(&mut g, &mut w, 0, 1, false));
        assert!(write(&mut g, &mut w, 1, 1, 1));
        assert!(!read(&mut g, &mut w, 1, 0, false));
    }

    #[test]
    fn search_reorders_writes_when_the_cheap_insertion_fails() {
        // T0: x = 1    T1: x = 2    T2: a = x (2); b = x (1): needs x = 2 before x = 1.
        let mut g = graph(1, 3);
        let mut w = Witness::new(&g);
        assert!(write(&mut g, &mut w, 0, 0, 1));
        let w1 = g.len() - 1;
        assert!(write(&mut g, &mut w, 1, 0, 2));
        let w2 = g.len() - 1;
        assert!(read(&mut g, &mut w, 2, w2, false));
        assert!(read(&mut g, &mut w, 2, w1, false));
        w.apply(&mut g);
        assert_eq!(g.mo[0], vec![0, w2, w1]);
        // A third read of 2 after reading 1 is impossible: each write happens once.
        assert!(!read(&mut g, &mut w, 2, w2, false));
    }

    #[test]
    fn value_constrained_reads_may_read_any_write_of_their_value() {
        // T0: x = 1    T1: x = 1    T2: a = x (1 from T1); b = x (0): no witness by rf, but
        // by value a = 1 can come from either write... still b = 0 needs init last: impossible.
        let mut g = graph(1, 3);
        let mut w = Witness::new(&g);
        assert!(write(&mut g, &mut w, 0, 0, 1));
        assert!(write(&mut g, &mut w, 1, 0, 1));
        let w2 = g.len() - 1;
        assert!(read(&mut g, &mut w, 2, w2, true));
        assert!(!read(&mut g, &mut w, 2, 0, true));
    }
}
