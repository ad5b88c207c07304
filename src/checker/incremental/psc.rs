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

use super::{slot, Views};
use crate::checker::graph::{Event, EventId, EventKind, ExecutionGraph, INIT_THREAD};
use crate::ir::Loc;

/// The psc graph of the seq_cst events of a partial graph, and whether it has a cycle.
#[derive(Clone, Debug, Default)]
pub struct Psc {
    /// The psc successors of every event, as bit rows over event ids (empty for the events
    /// that are not seq_cst, and trimmed: a row is only as long as its last bit needs).
    succ: Vec<Vec<u64>>,
    /// The seq_cst fences, in id order.
    fences: Vec<EventId>,
    /// psc has a cycle (then nothing more is recorded: the graph is inconsistent for good).
    cyclic: bool,
    /// Whether some seq_cst access was added (else every psc edge joins two fences).
    sc_access: bool,
    /// Buffers [`Psc::predecessors`] reuses from one event to the next.
    scratch: Scratch,
}

/// Working buffers of [`Psc::predecessors`] (see there for what each holds): kept between
/// calls so that an event costs no allocation. Not part of the state: a copy starts empty.
#[derive(Debug, Default)]
struct Scratch {
    kz: Vec<usize>,
    xs: Vec<u64>,
    pk: Vec<usize>,
    work: Vec<(usize, usize)>,
    spawner_seen: Vec<bool>,
    joined: Vec<bool>,
    c_clock: Vec<u32>,
    kc: Vec<usize>,
    joined_c: Vec<bool>,
    last_at: Vec<Option<EventId>>,
    eco_bounds: Vec<(usize, usize)>,
    bound: Vec<usize>,
    reach: Vec<u32>,
    eco_reach: Vec<u32>,
    out: Vec<EventId>,
}

impl Clone for Scratch {
    fn clone(&self) -> Scratch {
        Scratch::default()
    }
}

/// `v` cleared and refilled with `n` copies of `x`, keeping its allocation.
fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
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

fn or_into(dst: &mut Vec<u64>, src: &[u64]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
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
pub(super) struct Readers {
    start: Vec<u32>,
    list: Vec<EventId>,
}

impl Readers {
    pub(super) fn new(g: &ExecutionGraph) -> Readers {
        let n = g.len();
        let mut start = vec![0u32; n + 1];
        for w in g.rf.iter().flatten() {
            start[*w + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0; start[n] as usize];
        for (r, w) in g.rf.iter().enumerate() {
            if let Some(w) = *w {
                list[fill[w] as usize] = r;
                fill[w] += 1;
            }
        }
        Readers { start, list }
    }

    /// No readers recorded: for a caller that never asks (`of` would panic).
    fn none() -> Readers {
        Readers {
            start: Vec::new(),
            list: Vec::new(),
        }
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
            succ: crate::checker::graph::with_room(&self.succ, more),
            fences: self.fences.clone(),
            cyclic: self.cyclic,
            sc_access: self.sc_access,
            scratch: Scratch::default(),
        }
    }

    /// Whether psc has a cycle.
    pub fn cyclic(&self) -> bool {
        self.cyclic
    }

    /// Records event `e`, the last one of `g`, whose views are already in `v`.
    pub fn add(&mut self, g: &ExecutionGraph, v: &Views, e: EventId) {
        self.succ.resize(g.len(), Vec::new());
        if self.cyclic {
            return;
        }
        let ev = &g.events[e];
        let e_sc = is_sc(ev);
        let ys = mo_after(g, e);
        // An event that is not seq_cst adds edges only between fences before it and what is
        // mo- or fr-after it: most have nothing after them (they read or are the latest write).
        if !e_sc && ys.is_empty() {
            return;
        }
        let hb = |a: EventId, b: EventId| hb_strict(v, g, a, b);
        let before: Vec<EventId> = self.fences.iter().copied().filter(|&f| hb(f, e)).collect();
        if !e_sc && before.is_empty() {
            return;
        }
        // Readers are asked for by the edges between old events (`before`) and by the
        // predecessors of a seq_cst write or fence (mo ; fr, psc_F), not of a read.
        let readers = if !before.is_empty() || (e_sc && !ev.is_read()) {
            Readers::new(g)
        } else {
            Readers::none()
        };
        // end(y) for the mo / fr successors y of e, and psc_F's fences after their readers.
        let mut ends: Vec<u64> = Vec::new();
        for &y in ys {
            if is_sc(&g.events[y]) {
                set(&mut ends, y);
            }
        }
        for &f in &self.fences {
            if ys.iter().any(|&y| hb(y, f)) {
                set(&mut ends, f);
            }
        }
        let mut targets = ends.clone();
        if !before.is_empty() {
            for &f in &self.fences {
                if !has(&targets, f) && ys.iter().any(|&y| readers.of(y).iter().any(|&r| hb(r, f)))
                {
                    set(&mut targets, f);
                }
            }
            for &f in &before {
                or_into(&mut self.succ[f], &targets);
            }
        }
        if e_sc {
            if ev.is_access() {
                self.succ[e] = ends;
            }
            self.sc_access |= ev.is_access();
            // With no seq_cst access, a fence's psc predecessors are fences, and every fence
            // hb-before it is one (psc_F): when all are, they are the answer.
            let mut scratch = std::mem::take(&mut self.scratch);
            if ev.is_fence() && !self.sc_access && self.fences.iter().all(|&f| v.hb_eq(g, f, e)) {
                scratch.out.clear();
                scratch.out.extend_from_slice(&self.fences);
            } else {
                self.predecessors(g, v, e, &readers, &mut scratch);
            }
            for &u in &scratch.out {
                set(&mut self.succ[u], e);
            }
            self.scratch = scratch;
            if ev.is_fence() {
                self.fences.push(e);
            }
            if self.succ[e].iter().any(|&w| w != 0) && self.reaches(&self.succ[e], &[e]) {
                self.cyclic = true;
                return;
            }
        }
        if !before.is_empty() && self.reaches(&targets, &before) {
            self.cyclic = true;
        }
    }

    /// Whether some event of `from` reaches (in zero or more psc steps) one of `to`.
    fn reaches(&self, from: &[u64], to: &[EventId]) -> bool {
        let mut seen: Vec<u64> = from.to_vec();
        let mut stack: Vec<EventId> = super::ones(from).collect();
        while let Some(a) = stack.pop() {
            if to.contains(&a) {
                return true;
            }
            for b in super::ones(&self.succ[a]) {
                if !has(&seen, b) {
                    set(&mut seen, b);
                    stack.push(b);
                }
            }
        }
        false
    }

    /// The psc predecessors of the seq_cst event `e` (the last of `g`), into `s.out`.
    fn predecessors(
        &self,
        g: &ExecutionGraph,
        v: &Views,
        e: EventId,
        readers: &Readers,
        s: &mut Scratch,
    ) {
        let Scratch {
            kz,
            xs,
            pk,
            work,
            spawner_seen,
            joined,
            c_clock,
            kc,
            joined_c,
            last_at,
            eco_bounds,
            bound,
            reach,
            eco_reach,
            out,
        } = s;
        let ev = &g.events[e];
        let te = ev.thread;
        let fence = ev.is_fence();
        let nt = g.threads.len();
        let tr = |u: usize| &g.threads[u].events;
        let clock =
            |x: EventId, u: usize| -> usize { v.clock(x).get(slot(u)).map_or(0, |&c| c as usize) };
        // Z: the events hb-before e, as a prefix length per thread.
        kz.clear();
        kz.extend((0..nt).map(|u| {
            if u == te {
                v.index[e] as usize
            } else {
                clock(e, u).min(tr(u).len())
            }
        }));
        let kz: &[usize] = kz;
        // `x` of scb ; (y = e, or for a fence y hb-before e): the candidates for start(x).
        xs.clear();

        // po: e's po-prefix (its thread's events before it, the spawners' prefixes, the
        // joined threads), per thread a prefix length.
        reset(pk, nt, 0);
        work.clear();
        work.push((te, v.index[e] as usize));
        reset(spawner_seen, nt, false);
        let mut push_spawner = |work: &mut Vec<(usize, usize)>, u: usize| {
            if !std::mem::replace(&mut spawner_seen[u], true) {
                if let Some(sp) = g.threads[u].spawned_by {
                    work.push((g.events[sp].thread, v.index[sp] as usize + 1));
                }
            }
        };
        push_spawner(work, te);
        while let Some((u, k)) = work.pop() {
            if k <= pk[u] {
                continue;
            }
            let old = std::mem::replace(&mut pk[u], k);
            for &a in &tr(u)[old..k] {
                if let EventKind::Join { child } = g.events[a].kind {
                    work.push((child, tr(child).len()));
                }
            }
            push_spawner(work, u);
        }
        for a in prefixes(g, pk) {
            set(xs, a);
        }
        // The joins among Z ∪ {e}, by joined thread.
        reset(joined, nt, false);
        let mark_joins = |joined: &mut Vec<bool>, x: EventId| {
            if let EventKind::Join { child } = g.events[x].kind {
                joined[child] = true;
            }
        };
        for a in prefixes(g, kz) {
            mark_joins(joined, a);
        }
        mark_joins(joined, e);
        let joined: &[bool] = joined;
        let first_in_z = |u: usize| kz[u] > 0 || u == te;
        // Whether the last event of thread `u`'s prefix in Z has a po-successor in Z ∪ {e}
        // outside the thread: the first event of a thread it spawned, or a join of `u`.
        let last_continues = |u: usize| {
            let k = kz[u];
            k.checked_sub(1).is_some_and(|i| {
                matches!(g.events[tr(u)[i]].kind, EventKind::Spawn { child } if first_in_z(child))
            }) || (k > 0 && k == tr(u).len() && joined[u])
        };
        if fence {
            // po-predecessors of the events hb-before e: all but each prefix's last event,
            // which is one when it spawned a thread that started in Z or its thread was
            // joined in Z (or it is po-before e, already in).
            for (u, &k) in kz.iter().enumerate() {
                for &a in &tr(u)[..k.saturating_sub(1)] {
                    set(xs, a);
                }
                if let Some(&last) = k.checked_sub(1).map(|i| &tr(u)[i]) {
                    if last_continues(u) {
                        set(xs, last);
                    }
                }
            }
        }

        // po|≠loc ; hb ; po|≠loc: the events po|≠loc-before those hb-before some d that is
        // po|≠loc-before e (or, for a fence, before an event hb-before e). C, the events
        // hb-before such a d, is a clock.
        c_clock.clear();
        let strict = |c_clock: &mut Vec<u32>, d: EventId| {
            // d's clock with its own thread's entry lowered to the events strictly before d.
            let own = slot(g.events[d].thread);
            let before = c_clock.get(own).copied().unwrap_or(0);
            join(c_clock, v.clock(d));
            if c_clock.len() <= own {
                c_clock.resize(own + 1, 0);
            }
            c_clock[own] = before.max(v.index[d]);
        };
        let own = &tr(te)[..v.index[e] as usize];
        match own.iter().rev().find(|&&d| other_loc(&g.events[d], ev)) {
            Some(&d) => strict(c_clock, d),
            None => {
                if let Some(sp) = g.threads[te].spawned_by {
                    strict(c_clock, sp);
                }
            }
        }
        if fence {
            for (u, &k) in kz.iter().enumerate() {
                let prefix = &tr(u)[..k];
                let mut later = if last_continues(u) {
                    Later::Mixed
                } else {
                    Later::Nothing
                };
                for &d in prefix.iter().rev() {
                    let dev = &g.events[d];
                    if later.other_than(dev) {
                        strict(c_clock, d);
                        break;
                    }
                    later = later.see(dev);
                }
            }
        }
        if !c_clock.is_empty() {
            kc.clear();
            kc.extend((0..nt).map(|u| {
                c_clock
                    .get(slot(u))
                    .map_or(0, |&c| c as usize)
                    .min(tr(u).len())
            }));
            reset(joined_c, nt, false);
            for a in prefixes(g, kc) {
                mark_joins(joined_c, a);
            }
            for u in 0..nt {
                let mut later = Later::Nothing;
                for &a in tr(u)[..kc[u]].iter().rev() {
                    let aev = &g.events[a];
                    if joined_c[u] || later.other_than(aev) {
                        set(xs, a);
                    }
                    later = later.see(aev);
                }
            }
        }

        // hb|loc: events hb-before e at its location; for a fence, events hb-before another
        // event at their location, both in Z.
        let nl = g.num_locs();
        reset(last_at, nt * nl, None);
        for a in prefixes(g, kz) {
            let u = g.events[a].thread;
            if let Some(x) = g.events[a].loc {
                if !fence && Some(x) == ev.loc {
                    set(xs, a);
                }
                if let Some(prev) = last_at[u * nl + x].replace(a) {
                    if fence {
                        set(xs, prev);
                    }
                }
            }
        }
        if fence {
            for x in 0..nl {
                for u in 0..nt {
                    let Some(a) = last_at[u * nl + x] else {
                        continue;
                    };
                    let later_elsewhere = (0..nt).any(|t2| {
                        t2 != u && last_at[t2 * nl + x].is_some_and(|b| hb_strict(v, g, a, b))
                    });
                    if later_elsewhere {
                        set(xs, a);
                    }
                }
            }
        }

        // mo ; fr: the writes mo-before a write (e, or for a fence the mo-latest write at
        // each location in Z) and their readers.
        let mo_before = |xs: &mut Vec<u64>, x: Loc, bound: usize| {
            for (i, &w) in g.mo[x][..bound].iter().enumerate() {
                if i > 0 {
                    set(xs, w);
                }
                for &r in readers.of(w) {
                    set(xs, r);
                }
            }
        };
        // psc_F for a fence: eco-predecessors of the events in Z, by location as bounds on
        // mo (writes before `wq`, readers of writes before `rq`).
        reset(eco_bounds, nl, (0, 0));
        if fence {
            reset(bound, nl, 0);
            for a in prefixes(g, kz) {
                let aev = &g.events[a];
                let Some(x) = aev.loc else { continue };
                let pos = |w: EventId| g.mo[x].iter().position(|&m| m == w).unwrap_or(0);
                if aev.is_write() {
                    let p = pos(a);
                    bound[x] = bound[x].max(p);
                    eco_bounds[x].0 = eco_bounds[x].0.max(p);
                    eco_bounds[x].1 = eco_bounds[x].1.max(p);
                } else if let Some(w) = g.rf[a] {
                    let p = pos(w);
                    eco_bounds[x].0 = eco_bounds[x].0.max(p + 1);
                    eco_bounds[x].1 = eco_bounds[x].1.max(p);
                }
            }
            for (x, &b) in bound.iter().enumerate() {
                mo_before(xs, x, b);
            }
        } else if ev.kind == EventKind::Write {
            let x = ev.loc.expect("a write has a location");
            let p = g.mo[x].iter().position(|&m| m == e).unwrap_or(0);
            mo_before(xs, x, p);
        }

        // start(x): the seq_cst events among the xs, and the seq_cst fences hb-before-or-
        // equal to one of them (one joined clock).
        out.clear();
        reach.clear();
        for x in super::ones(xs) {
            if x == e || g.events[x].thread == INIT_THREAD {
                continue;
            }
            if is_sc(&g.events[x]) {
                out.push(x);
            }
            join(reach, v.clock(x));
        }
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
        for &f in &self.fences {
            if out.contains(&f) {
                continue;
            }
            let psc_f = fence && (v.hb_eq(g, f, e) || below(eco_reach, f));
            if below(reach, f) || psc_f {
                out.push(f);
            }
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
