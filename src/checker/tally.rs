//! Exact per-error counts over every buggy execution, and the shortest failing execution.
//!
//! A check keeps a bounded number of buggy graphs (`CheckOptions::keep_buggy`, for synthesis
//! and display), but its list of distinct errors must not depend on that bound: a [`Tally`]
//! sees every buggy execution the exploration counts and keeps, per distinct error, the number
//! of executions that show it, and the buggy execution with the fewest events.
//!
//! Invariants: two bugs are the same error when they have the same kind, message, statement
//! position (span start: one position per source location, across files) and related
//! position, which is what reports show of an error; an execution counts once per distinct
//! error it shows. Errors are listed in the order first found; the shortest execution is the
//! first found among those with the fewest events (exploration order is deterministic, and
//! [`Tally::merge`] is applied in that order), so results are deterministic.

use super::{Bug, ExecutionGraph};
use crate::ir::Program;
use std::collections::HashMap;

/// One distinct error and how many executions show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorCount {
    /// The error as first found.
    pub bug: Bug,
    /// The executions that show it (each once, however many times it fails in one).
    pub executions: u64,
}

/// What identifies an error in reports: kind, message, position, related position.
type Key = (i64, String, usize, Option<usize>);

/// Counts per distinct error, and the shortest buggy execution; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Distinct errors in the order first found.
    pub errors: Vec<ErrorCount>,
    /// The buggy execution with the fewest events (the first such).
    pub shortest: Option<ExecutionGraph>,
    index: HashMap<Key, usize>,
}

fn key(prog: &Program, b: &Bug) -> Key {
    let at = |s: crate::ir::StmtId| prog.stmts.get(s).map_or(usize::MAX, |st| st.span.start);
    (
        b.kind.code(),
        b.message.clone(),
        at(b.stmt),
        b.related.map(at),
    )
}

/// The events of `g` that are not initialisation writes.
fn size(g: &ExecutionGraph) -> usize {
    g.len() - g.num_inits()
}

impl Tally {
    /// Counts buggy execution `g` (a graph without bugs is ignored).
    pub fn add(&mut self, prog: &Program, g: &ExecutionGraph) {
        if g.bugs.is_empty() {
            return;
        }
        let mut seen: Vec<usize> = Vec::new();
        for b in &g.bugs {
            let k = key(prog, b);
            let i = match self.index.get(&k) {
                Some(&i) => i,
                None => {
                    self.errors.push(ErrorCount {
                        bug: b.clone(),
                        executions: 0,
                    });
                    self.index.insert(k, self.errors.len() - 1);
                    self.errors.len() - 1
                }
            };
            if !seen.contains(&i) {
                seen.push(i);
                self.errors[i].executions += 1;
            }
        }
        if self.shortest.as_ref().is_none_or(|s| size(g) < size(s)) {
            self.shortest = Some(g.clone());
        }
    }

    /// Adds `later`'s counts (a tally of executions explored after this one's).
    pub fn merge(&mut self, prog: &Program, later: Tally) {
        for e in later.errors {
            let k = key(prog, &e.bug);
            match self.index.get(&k) {
                Some(&i) => self.errors[i].executions += e.executions,
                None => {
                    self.index.insert(k, self.errors.len());
                    self.errors.push(e);
                }
            }
        }
        if let Some(g) = later.shortest {
            if self.shortest.as_ref().is_none_or(|s| size(&g) < size(s)) {
                self.shortest = Some(g);
            }
        }
    }
}
