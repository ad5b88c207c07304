//! The embedded stateless model checker.
//!
//! [`check`] explores every consistent execution graph of a [`Program`](crate::ir::Program) under
//! a memory [`Model`] (see [`explore`] for the exploration, [`model`] for the axioms) and returns
//! the counts and the buggy graphs.
//!
//! **Architecture invariant:** the checker knows nothing about source text: it sees the IR and
//! reports statements by id. It is deterministic: the same program gives the same graphs in the
//! same order.

pub mod deps;
pub mod explore;
pub mod future;
pub mod graph;
pub mod hardware;
pub mod incremental;
pub mod model;
pub mod relation;

pub use explore::{explore, Control, Goal, Incomplete, Limits, Progress, Stats, DEFAULT_UNROLL};
pub use graph::{Bug, BugKind, Event, EventId, EventKind, ExecutionGraph, ThreadEnd, INIT_THREAD};
pub use hardware::Machine;
pub use model::{Axiom, Model, Relations};

use crate::ir::Program;

/// Options of one `check` run.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub model: Model,
    pub limits: Limits,
    /// Stop at the first buggy execution.
    pub first: bool,
    /// Keep at most this many buggy graphs in the result (all are counted).
    pub keep_buggy: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            model: Model::Rc11,
            limits: Limits::default(),
            first: false,
            keep_buggy: usize::MAX,
        }
    }
}

/// The outcome of exploring a program.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub stats: Stats,
    /// Buggy graphs, in exploration order (at most `keep_buggy`).
    pub buggy: Vec<ExecutionGraph>,
}

impl CheckResult {
    /// True when every execution was explored.
    pub fn complete(&self) -> bool {
        self.stats.incomplete.is_none() && !(self.stats.stopped && self.buggy.is_empty())
    }
}

/// Explores `prog` and collects its buggy executions.
pub fn check(prog: &Program, opts: &CheckOptions) -> CheckResult {
    let mut buggy = Vec::new();
    let stats = explore(prog, opts.model, opts.limits.clone(), |g| {
        if g.bugs.is_empty() {
            return Control::Continue;
        }
        if buggy.len() < opts.keep_buggy {
            buggy.push(g.clone());
        }
        if opts.first {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    CheckResult { stats, buggy }
}
