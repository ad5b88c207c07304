//! Renderings of the access orders a fix changes (`fix --by orders|both`) and of `relax`.

use crate::ir::{MemOrder, Program, StmtId};
use crate::synth::orders::AccessChange;
use crate::trace::Violation;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One access of `fensyn fix --format json` whose order changes (`accesses`).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct AccessJson {
    /// `load`, `store`, `rmw` or `cas` (a compare-and-swap: its success order).
    pub kind: &'static str,
    pub line: usize,
    pub column: usize,
    /// The header the access is in (absent: the checked file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub previous: &'static str,
    pub order: &'static str,
    /// How the change fixes the bugs it is needed for (as a fence's `cycles`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycles: Vec<&'static str>,
}

/// Where statement `st` is: line, column and the header it is in (`None`: the main file).
fn position(prog: &Program, st: StmtId) -> (usize, usize, Option<String>) {
    let span = prog.stmts[st].span;
    let k = prog.sources.file_index(&span);
    let file = (k > 0).then(|| prog.sources.name_of(k, "").to_string());
    (span.line, span.column, file)
}

/// The `accesses` of a fix's JSON.
pub fn access_entries(prog: &Program, changes: &[AccessChange]) -> Vec<AccessJson> {
    changes
        .iter()
        .map(|a| {
            let (line, column, file) = position(prog, a.stmt);
            let cycles: BTreeSet<&'static str> =
                a.needed_by.iter().map(|(_, v)| v.as_str()).collect();
            AccessJson {
                kind: a.kind.name(),
                line,
                column,
                file,
                previous: a.previous.c_name(),
                order: a.order.c_name(),
                cycles: cycles.into_iter().collect(),
            }
        })
        .collect()
}

/// The text lines of a fix's access changes (`  mp.c:12:5: store relaxed -> release (creates
/// synchronisation)`).
pub fn access_lines(name: &str, prog: &Program, changes: &[AccessChange]) -> String {
    let mut out = String::new();
    for a in changes {
        let (line, column, file) = position(prog, a.stmt);
        let how: BTreeSet<&str> = a
            .needed_by
            .iter()
            .map(|(_, v)| match v {
                Violation::Weak => "creates synchronisation (weak cycle)",
                Violation::Strong => "joins the seq_cst order (strong cycle)",
                Violation::RaceOrdered => "orders the racing accesses",
                Violation::Other => "forbids the execution",
            })
            .collect();
        let how: Vec<&str> = how.into_iter().collect();
        let _ = writeln!(
            out,
            "  {}:{line}:{column}: {} {} -> {}{}",
            file.as_deref().unwrap_or(name),
            a.kind.name(),
            a.previous.c_name(),
            a.order.c_name(),
            if how.is_empty() {
                String::new()
            } else {
                format!(" ({})", how.join(", "))
            }
        );
    }
    out
}

/// `N access order(s)` for the summary line.
pub fn count_text(n: usize) -> String {
    format!("{n} access order{}", if n == 1 { "" } else { "s" })
}

/// A table row of `relax`: the access, its order before and after.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct RelaxRow {
    /// `load`, `store`, `rmw`, `cas` or `fence`.
    pub kind: &'static str,
    pub line: usize,
    pub column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub before: &'static str,
    /// `none` for a fence the relaxation removes.
    pub after: &'static str,
    /// A compare-and-swap's failure order before and after (it follows the success order
    /// down: never stronger than it, never release).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_before: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_after: Option<&'static str>,
    /// Exhaustive checks made for this access.
    pub checks: usize,
}

impl RelaxRow {
    pub fn new(
        prog: &Program,
        st: StmtId,
        kind: &'static str,
        (before, after): (MemOrder, Option<MemOrder>),
        checks: usize,
    ) -> RelaxRow {
        let (line, column, file) = position(prog, st);
        RelaxRow {
            kind,
            line,
            column,
            file,
            before: before.c_name(),
            after: after.map_or("none", MemOrder::c_name),
            failure_before: None,
            failure_after: None,
            checks,
        }
    }

    /// The row with a compare-and-swap's failure order before and after.
    pub fn with_failure(self, (before, after): (MemOrder, MemOrder)) -> RelaxRow {
        RelaxRow {
            failure_before: Some(before.c_name()),
            failure_after: Some(after.c_name()),
            ..self
        }
    }
}

/// `relax`'s table: one row per access or fence, its order before and after (a
/// compare-and-swap's as `success/failure`).
pub fn relax_table(name: &str, rows: &[RelaxRow]) -> String {
    let mut out = String::new();
    let order = |o: &str, f: Option<&str>| match f {
        Some(f) => format!("{o}/{f}"),
        None => o.to_string(),
    };
    let at = |r: &RelaxRow| {
        format!(
            "{}:{}:{}",
            r.file.as_deref().unwrap_or(name),
            r.line,
            r.column
        )
    };
    let w = rows.iter().map(|r| at(r).len()).max().unwrap_or(0).max(6);
    let _ = writeln!(
        out,
        "{:<w$} {:<6} {:<16} {:<16} checks",
        "access", "kind", "before", "after"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<w$} {:<6} {:<16} {:<16} {}",
            at(r),
            r.kind,
            order(r.before, r.failure_before),
            order(r.after, r.failure_after),
            r.checks
        );
    }
    out
}
