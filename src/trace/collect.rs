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

use super::Requirement;
use crate::checker::{self, Bug, Control, ExecutionGraph, Limits, Model, Stats};
use crate::ir::{Program, StmtId};
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

/// Turns buggy graphs into deduplicated requirements as they arrive.
#[derive(Debug)]
pub struct Collector {
    model: Model,
    /// The requirements kept so far (indices), by the hash of their key. Only the hash is
    /// stored: on a hash match the stored requirement's key is recomputed and compared, so
    /// deduplication stays exact while memory holds no key strings.
    seen: HashMap<u64, Vec<usize>>,
    requirements: Vec<Requirement>,
    /// Buggy graphs given so far (the next one's `graph_index`).
    graphs: usize,
    /// Keys of the distinct bugs, and one bug per key, in order of arrival.
    bug_keys: BTreeSet<(&'static str, StmtId, String)>,
    bugs: Vec<Bug>,
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
            bug_keys: BTreeSet::new(),
            bugs: Vec::new(),
            spent: 0.0,
            clock: no_clock,
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
            if self
                .bug_keys
                .insert((bug.kind.as_str(), bug.stmt, bug.message.clone()))
            {
                self.bugs.push(bug.clone());
            }
            // C11's SC order is not preserved by prefixes (a prefix may have none while the
            // whole execution has one): under `c11` a requirement is the whole execution.
            let keep = if self.model == Model::C11 {
                vec![true; g.len()]
            } else {
                g.porf_prefix(&bug.witness)
            };
            let (mut sub, bug) = g.restrict_with_bug(&keep, bug);
            let key = key(&sub, &bug);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            key.hash(&mut h);
            let same = self.seen.entry(h.finish()).or_default();
            let reqs = &self.requirements;
            if !same
                .iter()
                .any(|&i| self::key(&reqs[i].graph, &reqs[i].bug) == key)
            {
                same.push(reqs.len());
                compact(&mut sub);
                self.requirements.push(Requirement {
                    graph_index: gi,
                    graph: sub,
                    bug,
                });
            }
        }
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

/// What identifies a requirement: its graph up to event numbering, and its bug.
fn key(g: &ExecutionGraph, bug: &Bug) -> (String, String) {
    (
        g.canonical_key(),
        format!("{:?}", (bug.kind, bug.stmt, &bug.witness, bug.race)),
    )
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
    let mut c = Collector::timed(model, clock);
    let stats = checker::explore(prog, model, limits, |g| {
        if !g.bugs.is_empty() {
            c.add(g);
        }
        Control::Continue
    });
    Explored {
        stats,
        collect_seconds: c.spent,
        requirements: c.requirements,
        bugs: c.bugs,
    }
}
