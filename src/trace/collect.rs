//! Requirements built while the checker explores: memory bounded by the distinct requirements.
//!
//! `fix` used to keep every buggy [`ExecutionGraph`] until the synthesis turned them into
//! [`Requirement`]s; a program with hundreds of thousands of buggy executions then held them all
//! (several GB). A [`Collector`] is fed each buggy graph as the explorer visits it, keeps only
//! the requirements it has not seen (by the same key as [`requirements`](super::requirements):
//! the canonical form of the prefix and the bug) and the distinct bugs (for the error list), and
//! drops the graph. The requirements come out in the same order, with the same `graph_index`,
//! as `requirements` gives for the list of the same graphs: the synthesis sees exactly the
//! same input.

use super::{subsume, Requirement};
use crate::checker::{self, Bug, Control, ExecutionGraph, Limits, Model, Stats};
use crate::ir::{Program, StmtId};
use std::collections::{BTreeMap, HashMap};

/// How many numbers the kept keys may take in all (8 bytes each: 32 MB).
const KEYS_KEPT: usize = 4 << 20;

/// Turns buggy graphs into deduplicated requirements as they arrive.
#[derive(Debug)]
pub struct Collector {
    model: Model,
    /// The requirements kept so far (indices), by the hash of their key. On a hash match the
    /// stored requirement's key (kept in `keys`, or recomputed from the requirement once the
    /// kept keys reach their budget) is compared, so deduplication stays exact while memory
    /// for keys stays bounded.
    seen: HashMap<u64, Vec<usize>>,
    requirements: Vec<Requirement>,
    /// Buggy graphs given so far (the next one's `graph_index`).
    graphs: usize,
    /// Keys of the distinct bugs, and one bug per key, in order of arrival.
    /// (Messages per kind and statement: looked up without copying the message.)
    bug_keys: BTreeMap<(&'static str, StmtId), Vec<String>>,
    bugs: Vec<Bug>,
    /// Buffers for the key of a new graph and of a kept requirement (reused: no allocation
    /// per buggy execution).
    new_key: KeyBuf,
    old_key: KeyBuf,
    /// Buffers for the po ∪ rf clocks of a graph's events (reused).
    clocks: subsume::Clocks,
    /// Buffer for the prefix mask of a bug (reused).
    keep: Vec<bool>,
    /// The key of each requirement met again (a hash match), up to `KEYS_KEPT` numbers in
    /// all: later matches compare with it instead of recomputing it from the requirement.
    keys: Vec<Option<Box<[i64]>>>,
    key_numbers: usize,
    /// Whether bugs implied by another bug of their graph are dropped (rc11 only).
    subsume: bool,
    /// Seconds spent in [`Collector::add`] (the part of the synthesis done during
    /// exploration), read on `clock`.
    spent: f64,
    clock: fn() -> f64,
}

impl Collector {
    pub fn new(model: Model) -> Self {
        Collector {
            model,
            seen: HashMap::new(),
            requirements: Vec::new(),
            graphs: 0,
            bug_keys: BTreeMap::new(),
            bugs: Vec::new(),
            new_key: KeyBuf::default(),
            old_key: KeyBuf::default(),
            clocks: subsume::Clocks::default(),
            keep: Vec::new(),
            keys: Vec::new(),
            key_numbers: 0,
            subsume: true,
            spent: 0.0,
            clock: no_clock,
        }
    }

    /// A collector that keeps a requirement for every bug, including those another bug of the
    /// same graph implies (`subsume`): the unreduced input, for tests and comparisons.
    pub fn exhaustive(model: Model) -> Self {
        Collector {
            subsume: false,
            ..Collector::new(model)
        }
    }

    /// A collector that times its work on `clock` (seconds; differences are used).
    pub fn timed(model: Model, clock: fn() -> f64) -> Self {
        Collector {
            clock,
            ..Collector::new(model)
        }
    }

    /// Adds the requirements of one buggy graph (one per bug, the new ones only).
    pub fn add(&mut self, g: &ExecutionGraph) {
        let started = (self.clock)();
        self.add_graph(g);
        self.spent += (self.clock)() - started;
    }

    fn add_graph(&mut self, g: &ExecutionGraph) {
        let gi = self.graphs;
        self.graphs += 1;
        for bug in &g.bugs {
            let messages = self
                .bug_keys
                .entry((bug.kind.as_str(), bug.stmt))
                .or_default();
            if !messages.contains(&bug.message) {
                messages.push(bug.message.clone());
                self.bugs.push(bug.clone());
            }
        }
        // C11's SC order is not preserved by prefixes (a prefix may have none while the
        // whole execution has one): under `c11` a requirement is the whole execution.
        // Otherwise each bug's po ∪ rf-prefix, and under rc11 which bugs another bug of the
        // same graph implies (`subsume`): those add no requirement.
        let n = g.bugs.len();
        let counts = if self.model == Model::C11 {
            None
        } else {
            subsume::prefixes(g, &mut self.clocks)
        };
        let implied = match (&counts, self.model) {
            (Some(c), Model::Rc11) if self.subsume => subsume::implied(g, &self.clocks, c),
            _ => vec![false; n],
        };
        let mut keep = std::mem::take(&mut self.keep);
        for (i, bug) in g.bugs.iter().enumerate() {
            if implied[i] {
                continue;
            }
            // The key of the restricted graph, read off the whole graph: duplicates (most
            // buggy executions) are never restricted. (Without clocks, the rare graph whose
            // ids do not linearise po ∪ rf, the restriction is built first.)
            let mut built = None;
            let key = match &counts {
                _ if self.model == Model::C11 => self.new_key.compute(g, None, bug),
                Some(c) => {
                    let prefix = Prefix {
                        counts: &c[i],
                        index: self.clocks.index(),
                    };
                    self.new_key.compute(g, Some(prefix), bug)
                }
                None => {
                    let (sub, sub_bug) = g.restrict_with_bug(&g.porf_prefix(&bug.witness), bug);
                    let (sub, sub_bug) = built.insert((sub, sub_bug));
                    self.new_key.compute(sub, None, sub_bug)
                }
            };
            let same = self.seen.entry(hash(key)).or_default();
            let (reqs, keys, old_key) = (&self.requirements, &mut self.keys, &mut self.old_key);
            let numbers = &mut self.key_numbers;
            let found = same.iter().any(|&i| match &keys[i] {
                Some(k) => **k == *key,
                None => {
                    let old = old_key.compute(&reqs[i].graph, None, &reqs[i].bug);
                    // A requirement met again is likely met many times: its key is kept (while
                    // the kept keys take at most `KEYS_KEPT` numbers).
                    if *numbers + old.len() <= KEYS_KEPT {
                        *numbers += old.len();
                        keys[i] = Some(old.into());
                    }
                    old == key
                }
            });
            if !found {
                same.push(reqs.len());
                self.keys.push(None);
                let (mut sub, bug) = match (built, &counts) {
                    (Some(b), _) => b,
                    (None, Some(c)) if self.model != Model::C11 => {
                        self.clocks.mask_into(g, &c[i], &mut keep);
                        debug_assert!(keep == g.porf_prefix(&bug.witness));
                        g.restrict_with_bug(&keep, bug)
                    }
                    // c11: the whole execution.
                    (None, _) => g.restrict_with_bug(&vec![true; g.len()], bug),
                };
                debug_assert_eq!(KeyBuf::default().compute(&sub, None, &bug), key);
                compact(&mut sub);
                self.requirements.push(Requirement {
                    graph_index: gi,
                    graph: sub,
                    bug,
                });
            }
        }
        self.keep = keep;
    }

    /// The requirements kept so far, in order of arrival.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// The distinct bugs (by kind, statement and message) seen so far, in order of arrival.
    pub fn bugs(&self) -> &[Bug] {
        &self.bugs
    }

    /// Seconds spent turning graphs into requirements so far (0 without a clock).
    pub fn spent(&self) -> f64 {
        self.spent
    }

    /// Buggy graphs given so far.
    pub fn graphs(&self) -> usize {
        self.graphs
    }

    pub fn into_requirements(self) -> Vec<Requirement> {
        self.requirements
    }
}

/// A po ∪ rf-prefix of a graph given per thread: the first `counts[t]` events of thread `t`
/// (and the initialisation writes); `index[e]` is event `e`'s index in its thread.
#[derive(Clone, Copy)]
struct Prefix<'a> {
    counts: &'a [u32],
    index: &'a [u32],
}

/// What identifies a requirement: its graph up to event numbering, and its bug — of `g`
/// restricted to `prefix` (the whole graph when `None`), computed without building the
/// restriction: events are named by their thread and index in it, which restriction keeps.
///
/// The graph part carries exactly what [`ExecutionGraph::canonical_key`] writes (per thread its
/// function and its events — kind, order, location, value and the name of the write a read
/// reads —, then each location's mo order by event names), as tagged numbers instead of text:
/// the same equality, without the formatting, which dominated the collection's time.
#[derive(Debug, Default)]
struct KeyBuf {
    index: Vec<u32>,
    counts: Vec<u32>,
    out: Vec<i64>,
}

impl KeyBuf {
    fn compute(&mut self, g: &ExecutionGraph, prefix: Option<Prefix>, bug: &Bug) -> &[i64] {
        let prefix = match prefix {
            Some(p) => p,
            None => {
                self.index.clear();
                self.index.resize(g.len(), 0);
                for tr in &g.threads {
                    for (i, &e) in tr.events.iter().enumerate() {
                        self.index[e] = i as u32;
                    }
                }
                self.counts.clear();
                self.counts
                    .extend(g.threads.iter().map(|t| t.events.len() as u32));
                Prefix {
                    counts: &self.counts,
                    index: &self.index,
                }
            }
        };
        key_into(g, prefix, bug, &mut self.out);
        &self.out
    }
}

fn key_into(g: &ExecutionGraph, p: Prefix, bug: &Bug, k: &mut Vec<i64>) {
    use crate::checker::{EventKind, INIT_THREAD};
    let kept = |e: usize| {
        let t = g.events[e].thread;
        t == INIT_THREAD || p.index[e] < p.counts[t]
    };
    k.clear();
    let name = |k: &mut Vec<i64>, e: usize| {
        let ev = &g.events[e];
        if ev.thread == INIT_THREAD {
            k.extend([0, ev.loc.unwrap_or(0) as i64]);
        } else {
            k.extend([1, ev.thread as i64, p.index[e] as i64]);
        }
    };
    for (tr, &count) in g.threads.iter().zip(p.counts) {
        k.extend([-1, tr.func as i64]);
        for &e in &tr.events[..count as usize] {
            let ev = &g.events[e];
            let (order, loc, value) = (ev.order as i64, ev.loc.unwrap_or(0) as i64, ev.value);
            match ev.kind {
                EventKind::Read => {
                    k.extend([-2, order, loc, value]);
                    match g.rf[e] {
                        Some(w) => name(k, w),
                        None => k.push(2),
                    }
                }
                EventKind::Write | EventKind::Init => k.extend([-3, order, loc, value]),
                EventKind::Fence => k.extend([-4, order]),
                EventKind::Spawn { child } => k.extend([-5, child as i64]),
                EventKind::Join { child } => k.extend([-6, child as i64]),
                EventKind::Choice => k.extend([-7, value]),
                EventKind::Free { first, len } => k.extend([-8, first as i64, len as i64]),
            }
        }
    }
    for ws in &g.mo {
        k.extend([-7, ws.iter().filter(|&&w| kept(w)).count() as i64]);
        for &w in ws.iter().filter(|&&w| kept(w)) {
            name(k, w);
        }
    }
    k.extend([
        -8,
        bug.kind.code(),
        bug.stmt as i64,
        bug.witness.len() as i64,
    ]);
    for &e in &bug.witness {
        name(k, e);
    }
    match bug.race {
        Some((x, y)) => {
            k.push(1);
            name(k, x);
            name(k, y);
        }
        None => k.push(0),
    }
}

/// A fast deterministic hash of a key (collisions are resolved by comparing keys): four
/// independent lanes, so that the multiplications of consecutive numbers overlap.
fn hash(key: &[i64]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let step = |h: u64, x: i64| (h.rotate_left(5) ^ x as u64).wrapping_mul(K);
    let mut lanes = [0u64, 1, 2, 3];
    let chunks = key.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for (h, &x) in lanes.iter_mut().zip(c) {
            *h = step(*h, x);
        }
    }
    let mut h = lanes[0]
        ^ lanes[1].rotate_left(16)
        ^ lanes[2].rotate_left(32)
        ^ lanes[3].rotate_left(48)
        ^ key.len() as u64;
    for &x in rest {
        h = step(h, x);
    }
    step(h, 0)
}

/// Gives back the spare capacity of a kept graph's vectors (it is never extended again).
fn compact(g: &mut ExecutionGraph) {
    g.events.shrink_to_fit();
    g.rf.shrink_to_fit();
    g.rmw.shrink_to_fit();
    g.bugs.shrink_to_fit();
    for m in &mut g.mo {
        m.shrink_to_fit();
    }
    g.mo.shrink_to_fit();
    for t in &mut g.threads {
        t.events.shrink_to_fit();
        t.slots.shrink_to_fit();
    }
    g.threads.shrink_to_fit();
}

/// The outcome of [`explore`]: the explorer's counters and the requirements of every buggy
/// execution.
#[derive(Debug)]
pub struct Explored {
    pub stats: Stats,
    pub requirements: Vec<Requirement>,
    /// The distinct bugs (kind, statement, message), in order of first arrival.
    pub bugs: Vec<Bug>,
    /// Seconds spent building the requirements (on the clock given to [`explore`]), included in
    /// the exploration's time: `fix --timings` counts them as synthesis.
    pub collect_seconds: f64,
}

/// A clock that does not advance: an untimed collector.
fn no_clock() -> f64 {
    0.0
}

/// Explores `prog` and builds the requirements of its buggy executions on the way, without
/// keeping the graphs (see the module doc); the building is timed on `clock`.
pub fn explore(prog: &Program, model: Model, limits: Limits, clock: fn() -> f64) -> Explored {
    explore_within(prog, model, limits, clock, usize::MAX).0
}

/// As [`explore`], but the exploration stops once more than `max_requirements` distinct
/// requirements, or more than [`GRAPHS_PER_REQUIREMENT`] times as many buggy executions, were
/// collected; the flag says whether it stopped there (`stats.stopped` is then set too). The
/// limit counts, not time: the same program always stops at the same execution.
pub fn explore_within(
    prog: &Program,
    model: Model,
    limits: Limits,
    clock: fn() -> f64,
    max_requirements: usize,
) -> (Explored, bool) {
    let mut c = Collector::timed(model, clock);
    let max_graphs = max_requirements.saturating_mul(GRAPHS_PER_REQUIREMENT);
    let mut capped = false;
    let stats = checker::explore(prog, model, limits, |g| {
        if !g.bugs.is_empty() {
            c.add(g);
            if c.requirements.len() > max_requirements || c.graphs > max_graphs {
                capped = true;
                return Control::Stop;
            }
        }
        Control::Continue
    });
    if std::env::var_os("FENSYN_DEBUG").is_some() {
        eprintln!(
            "collect: {} buggy executions -> {} requirements in {:.3} s",
            c.graphs,
            c.requirements.len(),
            c.spent
        );
    }
    let explored = Explored {
        stats,
        collect_seconds: c.spent,
        requirements: c.requirements,
        bugs: c.bugs,
    };
    (explored, capped)
}

/// How many buggy executions [`explore_within`] collects per requirement allowed: collecting
/// is what costs time when many executions share few requirements.
pub const GRAPHS_PER_REQUIREMENT: usize = 10;
