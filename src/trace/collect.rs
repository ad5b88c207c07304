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
use std::collections::BTreeSet;

/// Turns buggy graphs into deduplicated requirements as they arrive.
#[derive(Debug)]
pub struct Collector {
    model: Model,
    /// Keys of the requirements kept so far.
    seen: BTreeSet<(String, String)>,
    requirements: Vec<Requirement>,
    /// Buggy graphs given so far (the next one's `graph_index`).
    graphs: usize,
    /// Keys of the distinct bugs, and one bug per key, in order of arrival.
    bug_keys: BTreeSet<(&'static str, StmtId, String)>,
    bugs: Vec<Bug>,
}

impl Collector {
    pub fn new(model: Model) -> Self {
        Collector {
            model,
            seen: BTreeSet::new(),
            requirements: Vec::new(),
            graphs: 0,
            bug_keys: BTreeSet::new(),
            bugs: Vec::new(),
        }
    }

    /// Adds the requirements of one buggy graph (one per bug, the new ones only).
    pub fn add(&mut self, g: &ExecutionGraph) {
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
            let (sub, bug) = g.restrict_with_bug(&keep, bug);
            let key = (
                sub.canonical_key(),
                format!("{:?}", (bug.kind, bug.stmt, &bug.witness, bug.race)),
            );
            if self.seen.insert(key) {
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

    /// Buggy graphs given so far.
    pub fn graphs(&self) -> usize {
        self.graphs
    }

    pub fn into_requirements(self) -> Vec<Requirement> {
        self.requirements
    }
}

/// The outcome of [`explore`]: the explorer's counters and the requirements of every buggy
/// execution.
#[derive(Debug)]
pub struct Explored {
    pub stats: Stats,
    pub requirements: Vec<Requirement>,
    /// The distinct bugs (kind, statement, message), in order of first arrival.
    pub bugs: Vec<Bug>,
}

/// Explores `prog` and builds the requirements of its buggy executions on the way, without
/// keeping the graphs (see the module doc).
pub fn explore(prog: &Program, model: Model, limits: Limits) -> Explored {
    let mut c = Collector::new(model);
    let stats = checker::explore(prog, model, limits, |g| {
        if !g.bugs.is_empty() {
            c.add(g);
        }
        Control::Continue
    });
    Explored {
        stats,
        requirements: c.requirements,
        bugs: c.bugs,
    }
}
