//! `fensyn robust FILE [--model M]`: robustness against sequential consistency.
//!
//! A program is robust under a model M when every M-consistent execution is also SC-consistent
//! (`po ∪ rf ∪ mo ∪ fr` acyclic): then M adds no behaviour to the interleavings, whatever the
//! program asserts. The explorer runs with [`Goal::Sc`], which makes an execution's only bug
//! "not SC" (witnessed by a shortest `po ∪ rf ∪ mo ∪ fr` cycle); the smallest non-SC execution
//! shown is the po ∪ rf-prefix of such a cycle with the fewest events (every execution that
//! contains that prefix is non-SC). `fensyn fix --goal sc` repairs the same bugs with fences.

use super::{clear_progress, display_path, limits, load, FileArgs, Format, Out};
use super::{EXIT_BUG, EXIT_INCOMPLETE, EXIT_OK};
use crate::checker::{self, Control, ExecutionGraph, Goal, Limits};
use crate::report;
use serde::Serialize;

/// The JSON of `fensyn robust --format json`.
#[derive(Serialize)]
struct RobustJson<'a> {
    file: &'a str,
    model: checker::Model,
    /// Every execution was explored (no limit hit, no loop cut).
    complete: bool,
    robust: bool,
    executions: u64,
    blocked: u64,
    bounded: u64,
    /// Executions that are not sequentially consistent.
    non_sc: u64,
    /// The smallest non-SC execution prefix, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    smallest: Option<SmallestJson>,
}

#[derive(Serialize)]
struct SmallestJson {
    /// Events of the prefix (without initialisation writes).
    events: usize,
    message: String,
    line: usize,
    column: usize,
}

pub(super) fn cmd_robust(common: &FileArgs, out: Out, err: Out) -> i32 {
    if let Err(code) =
        super::needs_graphs(common, "robust looks for executions that are not SC", err)
    {
        return code;
    }
    let (src, prog) = match load(common, err) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let name = display_path(&common.file);
    // One thread: the smallest non-SC prefix is kept across every execution, in order.
    let lim = Limits {
        goal: Goal::Sc,
        ..limits(common)
    };
    let (stats, smallest) = smallest_non_sc(&prog, common.model, lim);
    clear_progress();
    let complete = stats.incomplete.is_none() && stats.bounded == 0;
    let robust = stats.buggy == 0;
    match common.format {
        Format::Json => {
            let j = robust_json(&name, &prog, common.model, &stats, smallest.as_ref());
            let text = serde_json::to_string_pretty(&j).unwrap_or_default();
            let _ = writeln!(out, "{text}");
        }
        Format::Text | Format::Dot | Format::Sarif => {
            let shown = (name.as_str(), src.as_str(), &prog);
            robust_text(shown, common, &stats, smallest.as_ref(), (out, err));
        }
    }
    if !robust {
        EXIT_BUG
    } else if !complete {
        EXIT_INCOMPLETE
    } else {
        EXIT_OK
    }
}

/// Explores `prog` with [`Goal::Sc`] on one thread: the statistics and the smallest non-SC
/// prefix (events, prefix graph with its bug), kept across every execution in order.
fn smallest_non_sc(
    prog: &crate::ir::Program,
    model: checker::Model,
    lim: Limits,
) -> (checker::Stats, Option<(usize, ExecutionGraph)>) {
    let mut smallest: Option<(usize, ExecutionGraph)> = None;
    let stats = checker::explore(prog, model, lim, |g| {
        if let Some(bug) = g.bugs.first() {
            let keep = g.porf_prefix(&bug.witness);
            let (mut sub, b) = g.restrict_with_bug(&keep, bug);
            sub.bugs = vec![b];
            let size = sub
                .events
                .iter()
                .filter(|e| e.thread != checker::INIT_THREAD)
                .count();
            if smallest.as_ref().is_none_or(|(s, _)| size < *s) {
                smallest = Some((size, sub));
            }
        }
        Control::Continue
    });
    (stats, smallest)
}

fn robust_json<'a>(
    name: &'a str,
    prog: &crate::ir::Program,
    model: checker::Model,
    stats: &checker::Stats,
    smallest: Option<&(usize, ExecutionGraph)>,
) -> RobustJson<'a> {
    RobustJson {
        file: name,
        model,
        complete: stats.incomplete.is_none() && stats.bounded == 0,
        robust: stats.buggy == 0,
        executions: stats.executions,
        blocked: stats.blocked,
        bounded: stats.bounded,
        non_sc: stats.buggy,
        smallest: smallest.map(|(size, g)| {
            let b = &g.bugs[0];
            let span = prog.stmts[b.stmt].span;
            SmallestJson {
                events: *size,
                message: b.message.clone(),
                line: span.line,
                column: span.column,
            }
        }),
    }
}

/// The text (or, with `--format dot`, the drawing on `out` and the verdict on `err`).
fn robust_text(
    (name, src, prog): (&str, &str, &crate::ir::Program),
    common: &FileArgs,
    stats: &checker::Stats,
    smallest: Option<&(usize, ExecutionGraph)>,
    (out, err): (Out, Out),
) {
    let robust = stats.buggy == 0;
    if let Some((size, g)) = smallest {
        let b = &g.bugs[0];
        let span = prog.stmts[b.stmt].span;
        if common.format == Format::Dot {
            let _ = write!(out, "{}", report::execution_dot(prog, g, common.model));
        } else {
            let _ = writeln!(
                out,
                "{name}:{}:{}: non-sc: {}\n\nsmallest non-SC execution ({size} events):\n{}",
                span.line,
                span.column,
                b.message,
                report::render_execution(prog, src, g)
            );
        }
    }
    let verdict = match (&stats.incomplete, robust) {
                (Some(why), true) => format!(
                    "robustness unknown ({})",
                    report::incomplete_text(why)
                ),
                (_, true) => "robust: every execution is sequentially consistent".into(),
                (_, false) => format!(
                    "not robust: {} execution{} not sequentially consistent (fix with `fensyn fix --goal sc`)",
                    stats.buggy,
                    if stats.buggy == 1 { " is" } else { "s are" }
                ),
            };
    // With --format dot stdout holds only the graph: the verdict goes to stderr.
    let summary: Out = if common.format == Format::Dot {
        err
    } else {
        out
    };
    let _ = writeln!(
        summary,
        "{name}: {} under {}, {} blocked: {verdict}",
        report::executions(stats.executions),
        common.model,
        stats.blocked
    );
    if stats.bounded > 0 {
        let _ = writeln!(
            summary,
            "{name}: warning: {} cut at the loop bound; raise --unroll to explore further",
            report::executions(stats.bounded)
        );
    }
}
