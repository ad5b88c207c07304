//! `check`: explores every execution of a parsed unit and keeps its buggy graphs.
//!
//! The equivalence is the one asked for, or by default rf where it is sound (else graph). A
//! default rf check first explores on one thread with a dead-end budget ([`probe_rf`]) and
//! falls back to graphs past it; [`Report::rf_gave_up`] says so, for the caller to tell.
//!
//! **Invariant:** deterministic (the probe is sequential and counted), whatever `jobs` is.

use super::{Options, Unit};
use crate::checker::{self, CheckOptions, Limits};
use crate::frontend::{DiagKind, Diagnostic};
use crate::ir::Program;
use crate::report::ExploredAs;

/// The result of [`check`](super::check): the exploration and how it was explored.
#[derive(Clone, Debug)]
pub struct Report {
    /// The statistics and the buggy graphs kept (at most [`Options::keep_buggy`]).
    pub result: checker::CheckResult,
    /// The equivalence and model the exploration used (the model differs from the one asked
    /// for when rf explores an all-seq_cst program under sc).
    pub explored_as: ExploredAs,
    /// `Some(dead ends)` when the default rf exploration gave up and graphs were explored.
    pub rf_gave_up: Option<u64>,
}

impl Report {
    /// Whether some execution is buggy.
    pub fn is_buggy(&self) -> bool {
        !self.result.buggy.is_empty()
    }

    /// Whether the verdict covers fewer executions than the program has (a limit was hit,
    /// or loops were cut at the unroll bound).
    pub fn is_incomplete(&self) -> bool {
        self.result.stats.incomplete.is_some() || self.result.stats.bounded > 0
    }
}

/// The equivalence and model a check explores `unit` with (`asked`: `None` for rf where it is
/// sound, else graph); an equivalence the model cannot use is an input error at the statement
/// that needs another.
pub fn explored_as(
    unit: &Unit,
    model: checker::Model,
    asked: Option<checker::Equiv>,
) -> Result<ExploredAs, Diagnostic> {
    let prog = &unit.program;
    match checker::resolve_equiv(prog, model, asked) {
        Ok((model, equiv)) => Ok(ExploredAs { equiv, model }),
        Err(e) => {
            let (line, column) = e
                .stmt
                .map(|s| (prog.stmts[s].span.line, prog.stmts[s].span.column))
                .unwrap_or((1, 1));
            Err(Diagnostic {
                file: unit.source.name.clone(),
                line,
                column,
                kind: DiagKind::Error,
                message: e.message,
            })
        }
    }
}

/// Explores `unit` as `opts` asks (see the module documentation).
pub fn check(unit: &Unit, opts: &Options) -> Result<Report, Diagnostic> {
    let prog = &unit.program;
    let scope = explored_as(unit, opts.model, opts.equiv)?;
    let mut run = CheckOptions {
        model: scope.model,
        limits: Limits {
            equiv: scope.equiv,
            ..opts.limits.clone()
        },
        first: opts.first,
        keep_buggy: opts.keep_buggy,
    };
    if opts.equiv.is_some() || scope.equiv != checker::Equiv::Rf {
        let result = checker::check(prog, &run);
        return Ok(Report {
            result,
            explored_as: scope,
            rf_gave_up: None,
        });
    }
    let (result, explored_as, rf_gave_up) = match probe_rf(prog, &run) {
        Probe::Done(res) => (res, scope, None),
        Probe::Continue => (checker::check(prog, &run), scope, None),
        Probe::GaveUp(dead_ends) => {
            run.model = opts.model;
            run.limits.equiv = checker::Equiv::Graph;
            let graphs = ExploredAs {
                equiv: checker::Equiv::Graph,
                model: opts.model,
            };
            (checker::check(prog, &run), graphs, Some(dead_ends))
        }
    };
    Ok(Report {
        result,
        explored_as,
        rf_gave_up,
    })
}

/// Executions a default `--equiv rf` check first explores on one thread, watching its dead
/// ends (see [`probe_rf`]).
const RF_PROBE_EXECUTIONS: u64 = 20_000;

/// Dead ends (beyond ten per execution) after which that first part gives up on rf.
const RF_DEAD_END_BUDGET: u64 = 10_000;

/// What the first part of a default `--equiv rf` check found.
enum Probe {
    /// It explored everything (or reached the user's own limit): the result.
    Done(checker::CheckResult),
    /// It explored [`RF_PROBE_EXECUTIONS`] executions without trouble: explore as asked.
    Continue,
    /// Its dead ends grew out of proportion (this many): explore graphs instead.
    GaveUp(u64),
}

/// The default equivalence is rf where it applies, and rf runs the canonical-order explorer,
/// whose reads wait for writes: on some programs its dead ends grow exponentially where
/// TruSt's graphs have none (indexer(12): no end with rf, 8 graphs in 2 ms). So a default rf
/// check first explores on one thread with a dead-end budget; past it, `check` explores
/// graphs instead and says so. Sequential and counted, so the choice is deterministic.
fn probe_rf(prog: &Program, opts: &CheckOptions) -> Probe {
    let cap = opts
        .limits
        .max_executions
        .map_or(RF_PROBE_EXECUTIONS, |m| m.min(RF_PROBE_EXECUTIONS));
    let probe = CheckOptions {
        limits: Limits {
            jobs: 1,
            max_executions: Some(cap),
            give_up_after: Some(RF_DEAD_END_BUDGET),
            ..opts.limits.clone()
        },
        ..opts.clone()
    };
    let res = checker::check(prog, &probe);
    if res.stats.gave_up {
        return Probe::GaveUp(res.stats.dead_ends);
    }
    let probe_cap_hit = matches!(
        res.stats.incomplete,
        Some(checker::Incomplete::MaxExecutions(_))
    ) && opts.limits.max_executions != Some(cap);
    if probe_cap_hit {
        Probe::Continue
    } else {
        Probe::Done(res)
    }
}
