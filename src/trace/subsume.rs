//! Requirements of one buggy execution that another of its requirements implies (rc11).
//!
//! A requirement `r1` is *implied* by `r2` when every fence assignment that fixes `r2` also
//! fixes `r1`: the synthesis may then drop `r1` without changing which assignments fix every
//! requirement, so the optimum (and the cost of every candidate) is the same. Within one
//! buggy graph `G` this is decided exactly from the prefixes alone, for rc11:
//!
//! * **Prefix inclusion.** Let `P2 ⊆ P1` be two po ∪ rf-prefixes of `G` (each thread's part a
//!   po-prefix). With the fences of an assignment `A` inserted, `P2_A` embeds in `P1_A`: same
//!   events, the fences of the slots `P2` keeps (a thread's kept slots are a prefix of the
//!   slots `P1` keeps), and po, rf, mo, rmw and the event attributes of `P2_A` are those of
//!   `P1_A` restricted to the image. Every rc11 relation (hb, eco, psc, ...) is built from
//!   these without negation, so it only grows from `P2_A` to `P1_A`: an axiom violated by
//!   `P2_A` (a cycle, a non-empty intersection) is violated by `P1_A`, and an hb edge of `P2_A`
//!   is one of `P1_A`.
//! * **Which order fixes a race.** A race requirement is fixed when its graph with fences is
//!   inconsistent or its accesses are hb-ordered. hb ⊆ (po ∪ rf)+ (sw is made of po, rf and
//!   rmw ⊆ po steps) and po ∪ rf is acyclic in a consistent graph (and fences do not change
//!   that): when `a` is po ∪ rf-before `b`, only `hb(a, b)` can order them.
//!
//! * **Races that only inconsistency fixes.** If moreover `(b, a)` is in eco (read off rf and
//!   mo, which fences do not change: `b` reads from a write mo-before `a`, or is mo-before
//!   it, ...), `hb(a, b)` would close a `hb ; eco` cycle: the race is fixed exactly when its
//!   graph becomes inconsistent, like an assertion. (A lost update in a racy counter is one.)
//!
//! * **An access racing with the end of its object** (a memory error whose `race` is
//!   `(access, end)`) is fixed only by `hb(access, end)` (or inconsistency): it is a race with
//!   one order, and only inconsistency fixes it when the end is po ∪ rf-before the access.
//!
//! Hence `r2` implies `r1` when `P2 ⊆ P1` and either `r2` is fixed only by inconsistency
//! (every bug but a race, and the races above), or both are races, `r2`'s accesses `a2` before
//! `b2` in po ∪ rf, and `r1`'s accesses `x1, y1` (in some order) satisfy `po?(x1, a2)` and
//! `po?(b2, y1)`: then `hb(a2, b2)` gives `hb(x1, y1)`.
//!
//! The bugs of a graph are taken in the order (prefix size, index); one is dropped when a bug
//! kept before it implies it. Every dropped requirement is thus implied by a kept one (or by
//! a duplicate of a kept one from an earlier graph: the same graph up to numbering, so the
//! same fixing assignments), and the kept ones fix exactly what all of them fix. Only the
//! synthesis's input shrinks: the bugs reported (`Collector::bugs`) are all of them.
//!
//! The prefixes are computed as per-thread counts from a po ∪ rf vector clock of every event
//! (the graph's ids linearise po ∪ rf); a graph where they do not is left as it is.

use crate::checker::{BugKind, EventKind, ExecutionGraph, INIT_THREAD};

/// Reused buffers: a vector clock per event (`threads` counts each), and per event its index
/// in its thread.
#[derive(Debug, Default)]
pub(super) struct Clocks {
    threads: usize,
    vc: Vec<u32>,
    index: Vec<u32>,
    /// Per write, its position in its location's modification order.
    mo_pos: Vec<u32>,
}

impl Clocks {
    /// Fills the clocks of `g`: `vc[e][t]` is how many events of thread `t` are po ∪ rf-before
    /// `e` or `e` itself. `false` when `g`'s ids do not linearise po ∪ rf.
    fn compute(&mut self, g: &ExecutionGraph) -> bool {
        let (n, nt) = (g.len(), g.threads.len());
        self.threads = nt;
        self.vc.clear();
        self.vc.resize(n * nt, 0);
        self.index.clear();
        self.index.resize(n, 0);
        for tr in &g.threads {
            for (i, &e) in tr.events.iter().enumerate() {
                self.index[e] = i as u32;
            }
        }
        self.mo_pos.clear();
        self.mo_pos.resize(n, 0);
        for ws in &g.mo {
            for (i, &w) in ws.iter().enumerate() {
                self.mo_pos[w] = i as u32;
            }
        }
        for (e, ev) in g.events.iter().enumerate() {
            if ev.thread == INIT_THREAD {
                continue;
            }
            let t = ev.thread;
            let tr = &g.threads[t];
            let i = self.index[e] as usize;
            if tr.events.get(i) != Some(&e) {
                return false;
            }
            // The po-predecessor (or the spawn for a thread's first event), whose clock is
            // copied, then the write read and the joined thread's last event (or its spawn),
            // merged.
            let before = if i > 0 {
                Some(tr.events[i - 1])
            } else {
                tr.spawned_by
            };
            let mut merge = [g.rf[e], None];
            if let EventKind::Join { child } = ev.kind {
                let c = &g.threads[child];
                merge[1] = c.events.last().copied().or(c.spawned_by);
            }
            // (An initialisation write's clock is zero: merging it changes nothing.)
            if let Some(p) = before {
                if p >= e {
                    return false;
                }
                // (A loop: `copy_within` calls memcpy, slow for a few numbers.)
                for k in 0..nt {
                    self.vc[e * nt + k] = self.vc[p * nt + k];
                }
            }
            for p in merge.into_iter().flatten() {
                if p >= e {
                    return false;
                }
                let (lo, hi) = self.vc.split_at_mut(e * nt);
                let from = &lo[p * nt..(p + 1) * nt];
                for (x, &y) in hi[..nt].iter_mut().zip(from) {
                    *x = (*x).max(y);
                }
            }
            self.vc[e * nt + t] = i as u32 + 1;
        }
        true
    }

    /// Per event of the last graph, its index in its thread.
    pub(super) fn index(&self) -> &[u32] {
        &self.index
    }

    fn of(&self, e: usize) -> &[u32] {
        &self.vc[e * self.threads..(e + 1) * self.threads]
    }

    /// The prefix with per-thread `counts` (from [`prefixes`]), with the initialisation
    /// writes, as a mask (what [`ExecutionGraph::porf_prefix`] gives) in `out`.
    pub(super) fn mask_into(&self, g: &ExecutionGraph, counts: &[u32], out: &mut Vec<bool>) {
        out.clear();
        out.extend(
            g.events
                .iter()
                .zip(&self.index)
                .map(|(ev, &i)| ev.thread == INIT_THREAD || i < counts[ev.thread]),
        );
    }
}

/// How a requirement can be fixed, as far as implication needs it.
#[derive(Clone, Copy)]
enum Fix {
    /// Only by making its graph inconsistent.
    Inconsistent,
    /// A race whose accesses are ordered `a` before `b` in po ∪ rf (only `hb(a, b)` orders
    /// them), or not (`None`); `true` when only `hb` in the race's own order fixes it (an
    /// access racing with its object's free: only the access before the free).
    Race((usize, usize), Option<(usize, usize)>, bool),
}

/// The prefixes (per-thread counts) of `g`'s bugs and, per bug, whether another bug of `g`
/// implies it (see the module doc). `None` when `g`'s ids do not linearise po ∪ rf.
pub(super) fn prefixes(g: &ExecutionGraph, clocks: &mut Clocks) -> Option<Vec<Vec<u32>>> {
    if !clocks.compute(g) {
        return None;
    }
    let nt = g.threads.len();
    Some(
        g.bugs
            .iter()
            .map(|bug| {
                let mut c = vec![0u32; nt];
                for &w in &bug.witness {
                    if g.events[w].thread == INIT_THREAD {
                        continue;
                    }
                    for (x, &y) in c.iter_mut().zip(clocks.of(w)) {
                        *x = (*x).max(y);
                    }
                }
                c
            })
            .collect(),
    )
}

/// Per bug of `g` (with its prefix counts from [`prefixes`]): whether it is implied by an
/// earlier one (in the order prefix size, index) of the same graph.
pub(super) fn implied(g: &ExecutionGraph, clocks: &Clocks, counts: &[Vec<u32>]) -> Vec<bool> {
    let before = |a: usize, b: usize| -> bool {
        a == b || {
            let (ta, tb) = (g.events[a].thread, g.events[b].thread);
            ta == tb && ta != INIT_THREAD && clocks.index[a] < clocks.index[b]
        }
    };
    // `a` is po ∪ rf-before `b` (or is `b`).
    let porf = |a: usize, b: usize| -> bool {
        let t = g.events[a].thread;
        t == INIT_THREAD || g.events[b].thread != INIT_THREAD && clocks.of(b)[t] > clocks.index[a]
    };
    // `(b, a)` is in eco = (rf ∪ mo ∪ fr)+ of `a` and `b`'s location (read off rf and mo,
    // which fences do not change, and which a prefix holding `a` and `b` keeps).
    let mo_before = |w: usize, v: usize| clocks.mo_pos[w] < clocks.mo_pos[v];
    let eco = |b: usize, a: usize| -> bool {
        let (eb, ea) = (&g.events[b], &g.events[a]);
        if eb.loc.is_none() || eb.loc != ea.loc {
            return false;
        }
        match (eb.is_write(), ea.is_write()) {
            // mo
            (true, true) => mo_before(b, a),
            // fr: b reads from a write mo-before a
            (false, true) => g.rf[b].is_some_and(|w| w != a && mo_before(w, a)),
            // mo? ; rf
            (true, false) => g.rf[a].is_some_and(|w| w == b || mo_before(b, w)),
            (false, false) => false,
        }
    };
    let fix: Vec<Fix> = g
        .bugs
        .iter()
        .map(|bug| match (bug.kind, bug.race) {
            (kind, Some((x, y))) => {
                let directed = kind != BugKind::Race;
                let ordered = if porf(x, y) {
                    Some((x, y))
                } else if porf(y, x) {
                    Some((y, x))
                } else {
                    None
                };
                match ordered {
                    // hb(a, b) with eco(b, a) breaks coherence: only inconsistency fixes it.
                    Some((a, b)) if eco(b, a) => Fix::Inconsistent,
                    // The end of a lifetime before the access: no order fixes it.
                    Some((a, _)) if directed && a == y => Fix::Inconsistent,
                    _ if directed => Fix::Race((x, y), Some((x, y)), true),
                    _ => Fix::Race((x, y), ordered, false),
                }
            }
            _ => Fix::Inconsistent,
        })
        .collect();
    let size: Vec<u32> = counts.iter().map(|c| c.iter().sum()).collect();
    let implies = |j: usize, i: usize| {
        counts[j].iter().zip(&counts[i]).all(|(a, b)| a <= b)
            && match (fix[j], fix[i]) {
                (Fix::Inconsistent, _) => true,
                (Fix::Race(_, Some((a2, b2)), _), Fix::Race((x1, y1), _, directed)) => {
                    (before(x1, a2) && before(b2, y1))
                        || (!directed && before(y1, a2) && before(b2, x1))
                }
                _ => false,
            }
    };
    // In the order (prefix size, index), each bug against the bugs kept before it (a dropped
    // bug must be implied by one that stays).
    let mut order: Vec<usize> = (0..g.bugs.len()).collect();
    order.sort_by_key(|&i| (size[i], i));
    let mut out = vec![false; g.bugs.len()];
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        if kept.iter().any(|&j| implies(j, i)) {
            out[i] = true;
        } else {
            kept.push(i);
        }
    }
    out
}
