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
pub mod tally;
pub mod witness;

pub use explore::{
    explore, Control, Equiv, Goal, Incomplete, Limits, Progress, Stats, Suppress, DEFAULT_UNROLL,
};
pub use graph::{
    Bug, BugKind, DynLoc, Event, EventId, EventKind, ExecutionGraph, MemoryError, ThreadEnd,
    INIT_THREAD,
};
pub use hardware::Machine;
pub use model::{Axiom, Model, Relations, ReleaseSeq};
pub use tally::{ErrorCount, Tally};

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
    /// Every distinct error with the exact number of executions that show it, and the
    /// shortest buggy execution, over all buggy executions (not bounded by `keep_buggy`).
    pub tally: Box<Tally>,
}

impl CheckResult {
    /// True when every execution was explored.
    pub fn complete(&self) -> bool {
        self.stats.incomplete.is_none() && !(self.stats.stopped && self.buggy.is_empty())
    }
}

/// Why `--equiv rf|value` cannot be used: the first statement that needs the finer model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EquivError {
    /// The statement (None: the model itself is the reason).
    pub stmt: Option<crate::ir::StmtId>,
    pub message: String,
}

/// The model and equivalence to explore with when `equiv` is asked for (`None`: rf where it
/// is sound, else graph) under `model`. The coarser equivalences are implemented for `sc`. A program whose
/// accesses and fences are all atomic and seq_cst has the same consistent graphs under `rc11`
/// as under `sc` (Lahav et al., PLDI 2017), so it is explored as `sc` then.
pub fn resolve_equiv(
    prog: &Program,
    model: Model,
    equiv: Option<Equiv>,
) -> Result<(Model, Equiv), EquivError> {
    // What keeps the coarser equivalences out (None: they apply): another model, or under
    // rc11 the first access or fence that is not seq_cst.
    let allocates = prog.functions.iter().find_map(|f| {
        f.body
            .iter()
            .position(|ins| {
                matches!(
                    ins,
                    crate::ir::Instr::Alloc { .. } | crate::ir::Instr::Nondet { .. }
                )
            })
            .map(|pc| f.stmt_of[pc])
    });
    let obstacle = match model {
        // The SC witness keeps per-location state for the globals only.
        Model::Sc if allocates.is_some() => Some(allocates),
        Model::Sc => None,
        Model::Rc11 => first_non_sc(prog).map(Some),
        _ => Some(None),
    };
    match equiv {
        // rf, not value, by default: value's witness search can be exponential where many
        // writes store the same value (lastzero(11): 1.9 s against 0.07 s for rf).
        None if obstacle.is_none() => Ok((Model::Sc, Equiv::Rf)),
        None | Some(Equiv::Graph) => Ok((model, Equiv::Graph)),
        Some(e) => match obstacle {
            None => Ok((Model::Sc, e)),
            Some(Some(stmt)) if model == Model::Sc => Err(EquivError {
                stmt: Some(stmt),
                message: format!(
                    "--equiv {} is not implemented for programs that allocate objects (local \
                     arrays, structs or variables whose address is taken) or choose values \
                     (`__VERIFIER_nondet_*`): use --equiv graph",
                    e.as_str()
                ),
            }),
            Some(Some(stmt)) => Err(EquivError {
                stmt: Some(stmt),
                message: format!(
                    "--equiv {} needs sequential consistency: use --model sc, or a program whose \
                     accesses and fences are all seq_cst atomics under rc11 (this one is not)",
                    e.as_str()
                ),
            }),
            Some(None) => Err(EquivError {
                stmt: None,
                message: format!(
                    "--equiv {} is implemented for --model sc and rc11, not {model}",
                    e.as_str()
                ),
            }),
        },
    }
}

/// The first memory access or fence of `prog` that is not a seq_cst atomic (`None`: all are).
fn first_non_sc(prog: &Program) -> Option<crate::ir::StmtId> {
    prog.functions.iter().find_map(|f| {
        f.body
            .iter()
            .position(|ins| ins.seq_cst() == Some(false))
            .map(|pc| f.stmt_of[pc])
    })
}

/// The default number of exploration threads: the available cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Explores `prog` and collects its buggy executions.
pub fn check(prog: &Program, opts: &CheckOptions) -> CheckResult {
    if opts.limits.jobs > 1 && opts.limits.max_executions.is_none() {
        let (stats, buggy, tally) = explore::explore_parallel(
            prog,
            opts.model,
            opts.limits.clone(),
            opts.first,
            opts.keep_buggy,
        );
        return CheckResult {
            stats,
            buggy,
            tally: Box::new(tally),
        };
    }
    let mut buggy = Vec::new();
    let mut tally = Tally::default();
    let stats = explore(prog, opts.model, opts.limits.clone(), |g| {
        if g.bugs.is_empty() {
            return Control::Continue;
        }
        tally.add(prog, g);
        if buggy.len() < opts.keep_buggy {
            buggy.push(g.clone());
        }
        if opts.first {
            Control::Stop
        } else {
            Control::Continue
        }
    });
    CheckResult {
        stats,
        buggy,
        tally: Box::new(tally),
    }
}
