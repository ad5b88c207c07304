//! Reports: text and JSON renderings of check and fix results, and DOT drawings of executions.
//!
//! Every function here is pure: it turns values into strings. The `cli` decides where they go.
//! The JSON shapes are the CLI contract in docs/cli.md; fields are only ever added, never renamed.

pub mod hardware;

use crate::checker::{Bug, EventKind, ExecutionGraph, Model, Stats, INIT_THREAD};
use crate::ir::Program;
use crate::rewrite::Position;
use crate::synth::{Mode, Solution};
use crate::trace::{Site, Violation};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;

pub mod diagnostic;
pub mod explain;
pub mod orders;
pub mod sarif;

/// One error as the JSON contract shows it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct ErrorEntry {
    pub kind: &'static str,
    /// For kind `memory`: which error (`use-after-free`, `double-free`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'static str>,
    pub message: String,
    pub line: usize,
    pub column: usize,
    /// The header the error is in (absent: the checked file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// A second position the error involves (the `free` of a use after free, the first
    /// `free` of a double free).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<RelatedPosition>,
    /// `check`: how many executions show the error, exactly (every buggy execution is
    /// counted, however many there are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executions: Option<u64>,
}

impl ErrorEntry {
    /// The kind as text reports show it: `race`, `memory[use-after-free]`.
    pub fn label(&self) -> String {
        match self.detail {
            Some(d) => format!("{}[{d}]", self.kind),
            None => self.kind.to_string(),
        }
    }

    /// The related position as text reports append it to the message (empty without one):
    /// `; freed at mp.c:12:5`.
    pub fn related_text(&self, file: &str) -> String {
        let Some(r) = self.related else {
            return String::new();
        };
        let what = match self.detail {
            Some("use-after-return") => "lifetime ended",
            Some("double-free") => "first freed",
            _ => "freed",
        };
        format!("; {what} at {file}:{}:{}", r.line, r.column)
    }
}

/// A source position an error refers to besides its own.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct RelatedPosition {
    pub line: usize,
    pub column: usize,
}

/// The distinct errors of a set of buggy graphs, in source order.
pub fn error_entries(prog: &Program, buggy: &[ExecutionGraph]) -> Vec<ErrorEntry> {
    bug_entries(prog, buggy.iter().flat_map(|g| &g.bugs))
}

/// The distinct errors of a check, each with the exact number of executions that show it
/// (`executions`), in source order.
pub fn counted_entries(prog: &Program, tally: &crate::checker::Tally) -> Vec<ErrorEntry> {
    let mut counted: Vec<(ErrorEntry, u64)> = Vec::new();
    for e in &tally.errors {
        let entry = error_entry(prog, &e.bug);
        // Two errors at one position (one macro use) are one entry.
        match counted.iter_mut().find(|(x, _)| *x == entry) {
            Some((_, n)) => *n += e.executions,
            None => counted.push((entry, e.executions)),
        }
    }
    let mut out: Vec<ErrorEntry> = counted
        .into_iter()
        .map(|(e, n)| ErrorEntry {
            executions: Some(n),
            ..e
        })
        .collect();
    out.sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
    out
}

/// The distinct errors of a set of bugs, in source order.
pub fn bug_entries<'a>(prog: &Program, bugs: impl IntoIterator<Item = &'a Bug>) -> Vec<ErrorEntry> {
    let set: BTreeSet<ErrorEntry> = bugs.into_iter().map(|b| error_entry(prog, b)).collect();
    let mut v: Vec<ErrorEntry> = set.into_iter().collect();
    v.sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
    v
}

/// "1 execution", "N executions": counts in messages.
pub fn executions(n: u64) -> String {
    format!("{n} execution{}", if n == 1 { "" } else { "s" })
}

pub(crate) fn error_entry(prog: &Program, b: &Bug) -> ErrorEntry {
    let span = prog.stmts[b.stmt].span;
    ErrorEntry {
        kind: b.kind.as_str(),
        detail: b.kind.detail(),
        message: b.message.clone(),
        line: span.line,
        column: span.column,
        related: b.related.map(|s| {
            let span = prog.stmts[s].span;
            RelatedPosition {
                line: span.line,
                column: span.column,
            }
        }),
        file: prog.sources.header(&span).map(|h| h.name.clone()),
        executions: None,
    }
}

/// `fensyn check --format json`.
#[derive(Serialize)]
pub struct CheckJson<'a> {
    pub file: &'a str,
    pub model: Model,
    /// What one execution stands for (`--equiv`): `graph`, `rf` or `value`.
    pub equiv: crate::checker::Equiv,
    /// The model the executions were explored under when it differs from `model` (an rc11
    /// program whose accesses are all seq_cst is explored as sc under `--equiv rf|value`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explored_as: Option<Model>,
    pub complete: bool,
    pub executions: u64,
    pub blocked: u64,
    /// Executions cut at the loop bound (`--unroll`); when non-zero, `complete` is false.
    pub bounded: u64,
    /// Executions cut only at bounds the source accepts (`// fensyn: unroll N`): they leave
    /// `complete` true. Present only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub bounded_accepted: u64,
    pub buggy: u64,
    pub errors: Vec<ErrorEntry>,
    /// `--on-hardware`: which errors the compiled program can show on the machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_hardware: Option<hardware::OnHardwareJson>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How a check's executions were counted: the equivalence, and the model they were explored
/// under (which may be `sc` for an rc11 program whose accesses are all seq_cst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExploredAs {
    pub equiv: crate::checker::Equiv,
    pub model: Model,
}

impl ExploredAs {
    /// What the text report adds after "N executions under MODEL".
    pub fn note(&self, model: Model) -> String {
        use crate::checker::Equiv;
        let per = match self.equiv {
            Equiv::Graph => return String::new(),
            Equiv::Rf => "one per reads-from class",
            Equiv::Value => "one per value class",
        };
        if self.model == model {
            format!(" ({per})")
        } else {
            format!(
                " (explored as {}: every access is seq_cst; {per})",
                self.model
            )
        }
    }
}

/// Statement `s`'s line as the reports name it: `12`, or `ring.h:12` in a header.
pub(crate) fn stmt_ref(prog: &Program, s: crate::ir::StmtId) -> String {
    prog.stmt_ref(s)
}

/// Statement `s`'s source line (from its header when it is in one), as [`source_line`].
fn stmt_text(prog: &Program, src: &str, s: crate::ir::StmtId, width: usize) -> String {
    let span = prog.stmts[s].span;
    let text = prog.sources.header(&span).map_or(src, |h| h.text.as_str());
    source_line(text, span.line, width)
}

/// Source line `line`, trimmed, shortened to at most `width` characters.
fn source_line(src: &str, line: usize, width: usize) -> String {
    let text = src.lines().nth(line.saturating_sub(1)).unwrap_or("").trim();
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(width - 1).collect();
        s.push('…');
        s
    }
}

fn event_label(prog: &Program, g: &ExecutionGraph, e: usize) -> String {
    let ev = &g.events[e];
    let loc = |l: Option<usize>| l.map_or("?".to_string(), |l| g.loc_name(prog, l));
    match ev.kind {
        EventKind::Init => format!("init {} = {}", loc(ev.loc), ev.value),
        EventKind::Read => format!("R{} {} = {}", ev.order.short(), loc(ev.loc), ev.value),
        EventKind::Write => match ev.loc.and_then(|l| g.object_of(l)) {
            // An allocation's first write: the cell's initial value, or none.
            Some((_, d)) if d.event == e => {
                if prog.layouts[d.layout].indeterminate {
                    format!("alloc {} (uninitialised)", loc(ev.loc))
                } else {
                    format!("alloc {} = {}", loc(ev.loc), ev.value)
                }
            }
            _ => format!("W{} {} = {}", ev.order.short(), loc(ev.loc), ev.value),
        },
        EventKind::Fence => format!("F{}", ev.order.short()),
        EventKind::Spawn { child } => format!("spawn T{child}"),
        EventKind::Join { child } => format!("join T{child}"),
        EventKind::Choice => format!("choose {}", ev.value),
        EventKind::Free { first, .. } => {
            let object = g.object_name(prog, first);
            match g.object_of(first) {
                Some((_, d)) if prog.layouts[d.layout].kind.is_heap() => format!("free {object}"),
                _ => format!("end of {object}"),
            }
        }
    }
}

/// Names an event for rf/mo annotations: `T1:7` (thread and source line) or `init`.
fn event_ref(prog: &Program, g: &ExecutionGraph, e: usize) -> String {
    let ev = &g.events[e];
    if ev.thread == INIT_THREAD {
        return "init".into();
    }
    let line = ev.stmt.map_or("0".to_string(), |s| stmt_ref(prog, s));
    format!("T{}:{}", ev.thread, line)
}

/// Widest table [`render_columns`] draws; wider executions are drawn thread by thread.
const MAX_TABLE_WIDTH: usize = 120;
/// Widest cell of the table.
const MAX_CELL: usize = 34;

/// A buggy execution as text: side by side, one column per thread, one row per event in the
/// order the events were added (a linearisation of po ∪ rf), each cell the source line and the
/// event with its rf source or mo position, then the source lines it mentions; when that is
/// too wide, thread by thread.
pub fn render_execution(prog: &Program, src: &str, g: &ExecutionGraph) -> String {
    render_columns(prog, src, g).unwrap_or_else(|| render_blocks(prog, src, g))
}

/// The short rf / mo note of an event: `← T1:12`, `mo 2/3`.
fn event_note(prog: &Program, g: &ExecutionGraph, e: usize) -> String {
    let ev = &g.events[e];
    if let Some(w) = g.rf[e] {
        return format!("← {}", event_ref(prog, g, w));
    }
    match (ev.kind, ev.loc) {
        (EventKind::Write, Some(l)) => {
            let pos = g.mo[l].iter().position(|&w| w == e).unwrap_or(0);
            format!("mo {pos}/{}", g.mo[l].len() - 1)
        }
        _ => String::new(),
    }
}

fn render_columns(prog: &Program, src: &str, g: &ExecutionGraph) -> Option<String> {
    let shown = |e: usize| {
        let ev = &g.events[e];
        ev.thread != INIT_THREAD && (ev.is_access() || ev.is_fence())
    };
    let threads: Vec<usize> = (0..g.threads.len())
        .filter(|&t| g.threads[t].events.iter().any(|&e| shown(e)))
        .collect();
    if threads.is_empty() || threads.len() > 5 {
        return None;
    }
    let cell = |e: usize| {
        let line = g.events[e]
            .stmt
            .map_or("0".to_string(), |s| stmt_ref(prog, s));
        let note = event_note(prog, g, e);
        let text = format!("{line:>3} {} {note}", event_label(prog, g, e));
        text.trim_end().to_string()
    };
    let headers: Vec<String> = threads
        .iter()
        .map(|&t| format!("T{t} ({})", prog.functions[g.threads[t].func].name))
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    let rows: Vec<(usize, String)> = (0..g.len())
        .filter(|&e| shown(e))
        .filter_map(|e| {
            let col = threads.iter().position(|&t| t == g.events[e].thread)?;
            Some((col, cell(e)))
        })
        .collect();
    for (col, text) in &rows {
        widths[*col] = widths[*col].max(text.chars().count());
    }
    if widths.iter().any(|&w| w > MAX_CELL)
        || widths.iter().map(|w| w + 3).sum::<usize>() > MAX_TABLE_WIDTH
    {
        return None;
    }
    let mut out = String::new();
    let line_of = |cells: Vec<String>| {
        let mut l = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            let _ = write!(l, "{c:<w$}", w = widths[i]);
            if i + 1 < cells.len() {
                l.push_str(" │ ");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line_of(headers.clone()));
    let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
    let _ = writeln!(out, "{}", line_of(rule).replace(" │ ", "─┼─"));
    for (col, text) in rows {
        let mut cells = vec![String::new(); threads.len()];
        cells[col] = text;
        let _ = writeln!(out, "{}", line_of(cells));
    }
    // The source lines the table mentions.
    // Main file first, then each header, by line.
    let key = |s: crate::ir::StmtId| {
        let span = prog.stmts[s].span;
        let base = prog.sources.header(&span).map_or(0, |h| h.base);
        (base, span.line, s)
    };
    let mut lines: Vec<(usize, usize, crate::ir::StmtId)> = (0..g.len())
        .filter(|&e| shown(e))
        .filter_map(|e| g.events[e].stmt.map(key))
        .collect();
    lines.sort_unstable();
    lines.dedup_by_key(|k| (k.0, k.1));
    let _ = writeln!(out);
    for (_, _, s) in lines {
        let l = stmt_ref(prog, s);
        let _ = writeln!(out, "  {l:>4} | {}", stmt_text(prog, src, s, 90));
    }
    out.push_str(&bug_lines(prog, g));
    Some(out)
}

/// The per-thread form of [`render_execution`]: each thread's events with their source lines.
fn render_blocks(prog: &Program, src: &str, g: &ExecutionGraph) -> String {
    let mut out = String::new();
    for (t, tr) in g.threads.iter().enumerate() {
        let fname = &prog.functions[tr.func].name;
        let _ = writeln!(out, "  T{t} ({fname}):");
        if !tr
            .events
            .iter()
            .any(|&e| g.events[e].is_access() || g.events[e].is_fence())
        {
            let _ = writeln!(out, "         (no shared-memory events)");
        }
        for &e in &tr.events {
            let ev = &g.events[e];
            if matches!(ev.kind, EventKind::Spawn { .. } | EventKind::Join { .. }) {
                continue;
            }
            let line = ev.stmt.map_or("0".to_string(), |s| stmt_ref(prog, s));
            let text = ev
                .stmt
                .map_or(String::new(), |s| stmt_text(prog, src, s, 44));
            let mut label = event_label(prog, g, e);
            if let Some(w) = g.rf[e] {
                let _ = write!(label, "  (reads from {})", event_ref(prog, g, w));
            }
            if ev.kind == EventKind::Write {
                if let Some(l) = ev.loc {
                    let pos = g.mo[l].iter().position(|&w| w == e).unwrap_or(0);
                    let _ = write!(label, "  (mo #{pos} of {})", g.mo[l].len() - 1);
                }
            }
            let _ = writeln!(out, "    {line:>4} | {text:<44} {}", label);
        }
    }
    out.push_str(&bug_lines(prog, g));
    out
}

/// The bugs under a drawn execution, one line each (a race with its two accesses: who reads
/// or writes, on which line), without repeats.
fn bug_lines(prog: &Program, g: &ExecutionGraph) -> String {
    let mut lines: Vec<String> = Vec::new();
    for b in &g.bugs {
        let line = match b.race.filter(|_| b.kind.as_str() == "race") {
            Some((x, y)) => {
                let at = |e: usize| {
                    let (who, _) = diagnostic::access_text(prog, g, e);
                    let l = g.events[e].stmt.map_or("?".into(), |s| stmt_ref(prog, s));
                    format!("{who} (line {l})")
                };
                format!("  -> data race: {} and {}", at(x), at(y))
            }
            None => format!("  -> {} (line {})", b.message, stmt_ref(prog, b.stmt)),
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// How text reports are drawn: in colour or not; `quiet`: only the diagnostics (no failing
/// execution, no counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextStyle {
    pub color: bool,
    pub quiet: bool,
}

/// Every execution the checker visited: complete, stopped at a wait, or cut at a loop bound.
pub fn explored(stats: &Stats) -> u64 {
    stats.visited()
}

/// `fensyn check` as text: the diagnostics, the first failing execution and what the counts
/// count.
#[allow(clippy::too_many_arguments)]
pub fn check_text(
    file: &str,
    prog: &Program,
    src: &str,
    model: Model,
    scope: &ExploredAs,
    res: &crate::checker::CheckResult,
    style: &TextStyle,
) -> String {
    let (stats, buggy) = (&res.stats, &res.buggy);
    // Every distinct error with its exact count; a race's accesses from the shortest
    // execution, else the first kept one, that shows it.
    let graphs: Vec<&ExecutionGraph> = res.tally.shortest.iter().chain(buggy).collect();
    let entries = counted_entries(prog, &res.tally);
    let diags = diagnostic::check_diagnostics((file, src), prog, &graphs, entries, explored(stats));
    let files = diagnostic::Files::of_program(file, src, prog);
    let mut out = diagnostic::render(&diags, &files, style.color);
    if style.quiet {
        return out;
    }
    if let Some(g) = res.tally.shortest.as_ref().or(buggy.first()) {
        let _ = writeln!(out, "shortest failing execution:");
        out.push_str(&render_execution(prog, src, g));
        out.push('\n');
    }
    let hangs = res
        .tally
        .errors
        .iter()
        .any(|e| matches!(e.bug.kind.as_str(), "deadlock" | "liveness"));
    let _ = writeln!(out, "{}", counts_text(file, (model, scope), stats, hangs));
    if stats.bounded > 0 {
        let (bound, raise) = if prog.has_recursion_cut() {
            ("the loop or recursion bound", "--unroll or --recursion")
        } else {
            ("the loop bound", "--unroll")
        };
        let _ = writeln!(
            out,
            "{file}: warning: {} cut at {bound}; raise {raise} to explore further",
            executions(stats.bounded)
        );
    }
    out
}

/// The closing line of a check: how many executions fail out of how many were explored, and
/// what the explored ones were (complete, pruned at a wait, cut at the loop bound), so that no
/// two numbers read as a contradiction:
/// `sb.c: 39 of 71 executions under rc11 fail (55 complete, 16 pruned at a wait)`.
///
/// `hangs`: a deadlock or liveness error was found (they are among the executions that ended
/// with a thread waiting); otherwise those are executions an `assume` or a wait pruned (lock
/// waits are never counted: a thread waiting for a mutex is explored once it gets it).
pub fn counts_text(
    file: &str,
    (model, scope): (Model, &ExploredAs),
    stats: &Stats,
    hangs: bool,
) -> String {
    let total = explored(stats);
    let mut parts = Vec::new();
    if stats.blocked > 0 || stats.bounded > 0 || stats.bounded_accepted > 0 {
        parts.push(format!("{} complete", stats.executions));
    }
    if stats.blocked > 0 {
        parts.push(if hangs {
            format!(
                "{} ended with a thread waiting, the deadlock or liveness errors among them",
                stats.blocked
            )
        } else {
            format!(
                "{} pruned at an `assume` or a wait, not deadlocks",
                stats.blocked
            )
        });
    }
    if stats.bounded > 0 {
        parts.push(format!("{} cut at the loop bound", stats.bounded));
    }
    if stats.bounded_accepted > 0 {
        parts.push(format!(
            "{} cut at a bound the source accepts (`fensyn: unroll`)",
            stats.bounded_accepted
        ));
    }
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    let under = format!("under {model}{}", scope.note(model));
    let head = match &stats.incomplete {
        Some(why) => format!("incomplete ({}): ", incomplete_text(why)),
        None => String::new(),
    };
    if stats.buggy == 0 {
        format!(
            "{file}: {head}no bugs in {} {under}{detail}",
            executions(total)
        )
    } else {
        format!(
            "{file}: {head}{} of {} {under} fail{detail}",
            stats.buggy,
            executions(total),
        )
    }
}

pub fn incomplete_text(why: &crate::checker::Incomplete) -> String {
    match why {
        crate::checker::Incomplete::MaxExecutions(n) => format!("stopped after {n} executions"),
        crate::checker::Incomplete::Timeout => "timeout".into(),
        crate::checker::Incomplete::LoopBound { unroll, cut } => format!(
            "{} cut at the loop bound (--unroll {unroll}); no bug found below it",
            executions(*cut)
        ),
        crate::checker::Incomplete::LocalLoop { thread, func } => {
            format!("thread T{thread} ({func}) loops without touching shared memory")
        }
    }
}

/// One fence of `fensyn fix --format json`.
#[derive(Serialize, Clone, Debug)]
pub struct FenceJson {
    pub action: &'static str,
    pub order: &'static str,
    pub line: usize,
    pub column: usize,
    /// The header the fence is in (absent: the checked file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For a strengthened fence: its order before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<&'static str>,
    /// How the fence fixes the bugs it is needed for: "weak", "strong", "race-ordered".
    pub cycles: Vec<&'static str>,
    /// Under a hardware model (`--model tso|pso`): the machine instruction the fence compiles
    /// to ("none" when it emits nothing there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<&'static str>,
}

#[derive(Serialize, Clone, Copy, Debug)]
pub struct Verified {
    pub executions: u64,
    pub buggy: u64,
    /// Executions of the fixed program cut at the loop bound: the fix is verified up to it.
    pub bounded: u64,
    /// What one re-checked execution stands for (`--equiv`; synthesis always uses graphs).
    pub equiv: crate::checker::Equiv,
}

/// CPU seconds spent in each stage of `fensyn fix` (JSON `timings`, for a fixed
/// program): exploring the input (`check`), computing the fences (`synth`: requirements and
/// the 0/1 program, the thesis's "TF"), rewriting and re-checking the fixed program
/// (`recheck`), the `--prove-optimal` variants (`prove`, 0 without it), and the whole command
/// from reading the file to printing (`total`). Timings vary between runs, so they are only
/// printed when `fix --timings` asks for them; nothing else in the output depends on them.
#[derive(Serialize, Clone, Copy, Debug, Default)]
pub struct Timings {
    pub check: f64,
    pub synth: f64,
    pub recheck: f64,
    pub prove: f64,
    pub total: f64,
}

/// `fensyn fix --format json`.
#[derive(Serialize)]
pub struct FixJson<'a> {
    pub file: &'a str,
    pub model: Model,
    pub mode: Mode,
    pub status: &'static str,
    pub fences: Vec<FenceJson>,
    pub inserted: usize,
    pub strengthened: usize,
    pub weight: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verified>,
    pub executions: u64,
    pub buggy: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For a fixed program: the files the fix changes, as messages name them (the checked
    /// file first, then headers in include order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The cost model minimised (`count`, `weight`, `x86`, `armv8`).
    pub cost: &'static str,
    /// Under `x86` / `armv8`: the price of the fences (see `synth::Cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<u32>,
    /// With `--prove-optimal`: every variant of the fix with one fence dropped or weakened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Vec<ProofEntry>>,
    /// `--mode auto` ran out of time in the optimal search and used the fast mode.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fell_back: bool,
    /// For an unfixable program: one access whose stronger order would forbid the execution
    /// (a suggestion outside the fence-only fix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<SuggestionJson>,
    /// For a fixed program: the optimal mode's solver rounds (hitting-set iterations) or the
    /// fast mode's rounds (buggy executions fixed one after the other, `synth::fast`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
    /// Optimal mode past `--collect-limit`: the requirements collected before the rest were
    /// found in rounds (`iterations`); `executions` and `buggy` then count the collection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lazy_after: Option<usize>,
    /// For a fixed program with `--timings`: seconds per stage (see [`Timings`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    /// `fix --by` (absent for the default, `fences`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'static str>,
    /// The accesses whose orders the fix strengthens (`--by orders|both`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accesses: Vec<orders::AccessJson>,
}

/// `suggestion` of an unfixable result: the access at `line:column` with `order` instead of
/// `previous`.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct SuggestionJson {
    pub line: usize,
    pub column: usize,
    pub order: &'static str,
    pub previous: &'static str,
}

/// One variant checked by `fix --prove-optimal`: the fix with the fence at `line:column`
/// removed or weakened to `order`, and what the checker found in it.
///
/// One buggy execution refutes a variant, so its exploration stops at the first one:
/// `executions` counts the executions explored up to and including it (all of them when the
/// variant has no bug), and `buggy` is 1 (a bug was found; there may be more) or 0.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct ProofEntry {
    pub line: usize,
    pub column: usize,
    /// `removed`, or `weakened` (to `order`); `access-weakened` for an access a fix by orders
    /// strengthened, one step back towards its order as written (to `order`).
    pub variant: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<&'static str>,
    pub executions: u64,
    pub buggy: u64,
    /// The first bug of the first buggy execution (the `executions`-th explored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_bug: Option<ProofBug>,
}

/// The bug that refutes a `--prove-optimal` variant: its kind and, when the statement maps
/// back to the input file (it is not inside rewritten text), where it is there.
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct ProofBug {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

/// The text form of the `--prove-optimal` evidence.
pub fn proof_text(file: &str, entries: &[ProofEntry]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{file}: optimality evidence: every variant with one fence dropped or weakened by one \
         step, re-checked up to its first buggy execution"
    );
    for e in entries {
        let what = match e.order {
            Some(o) => format!("weakened to {o}"),
            None => "removed".to_string(),
        };
        let verdict = match (&e.first_bug, e.buggy > 0) {
            (Some(b), _) => {
                let at = match (b.line, b.column) {
                    (Some(l), Some(c)) => format!(" at {file}:{l}:{c}"),
                    _ => String::new(),
                };
                let what = match b.kind {
                    "assertion" => "failed assertion",
                    "race" => "data race",
                    "ub" => "undefined behaviour",
                    "non_sc" => "not sequentially consistent",
                    other => other,
                };
                format!("still buggy (execution {}: {what}{at})", e.executions)
            }
            (None, true) => format!("still buggy: execution {} is buggy", e.executions),
            (None, false) => format!(
                "NO BUG in {} executions: the fix is not minimal",
                e.executions
            ),
        };
        // `fix --by orders|both`: a changed access (`access-weakened`), else a fence.
        let noun = if e.variant.starts_with("access") {
            "access"
        } else {
            "fence"
        };
        let _ = writeln!(
            out,
            "  {file}:{}:{}: {noun} {what}: {verdict}",
            e.line, e.column
        );
    }
    let minimal = entries.iter().all(|e| e.buggy > 0);
    let _ = writeln!(
        out,
        "{file}: {}",
        if minimal {
            "no fence of the fix can be dropped or weakened"
        } else {
            "a fence of the fix can be dropped or weakened: the fix is not minimal"
        }
    );
    out
}

/// The JSON entries of a solution's fences; `positions[i]` is where fence `i` lands (in the
/// files of `sources`).
pub fn fence_entries(
    sol: &Solution,
    positions: &[Position],
    sources: &crate::ir::Sources,
) -> Vec<FenceJson> {
    sol.fences
        .iter()
        .zip(positions)
        .map(|(f, p)| {
            let cycles: BTreeSet<&'static str> =
                f.needed_by.iter().map(|(_, v)| v.as_str()).collect();
            FenceJson {
                action: match f.site {
                    Site::Slot(_) => "insert",
                    Site::Existing(_) => "strengthen",
                },
                order: f.order.c_name(),
                line: p.line,
                column: p.column,
                file: (p.file > 0).then(|| sources.name_of(p.file, "").to_string()),
                previous: f.previous.map(|o| o.c_name()),
                cycles: cycles.into_iter().collect(),
                instruction: None,
            }
        })
        .collect()
}

/// A one-paragraph text summary of a fix, for stderr.
pub fn fix_summary(
    (file, sources): (&str, &crate::ir::Sources),
    sol: &Solution,
    positions: &[Position],
    verified: Verified,
) -> String {
    let mut out = String::new();
    let n = sol.fences.len();
    let (one, many) = match verified.equiv {
        crate::checker::Equiv::Graph => ("execution", "executions"),
        crate::checker::Equiv::Rf => ("reads-from class", "reads-from classes"),
        crate::checker::Equiv::Value => ("value class", "value classes"),
    };
    // A fix by orders alone names its access orders, not "0 fences".
    let fences = format!("{n} fence{}", if n == 1 { "" } else { "s" });
    let what = match (n, sol.accesses.len()) {
        (_, 0) => format!(
            "{fences} ({} inserted, {} strengthened",
            sol.inserted, sol.strengthened
        ),
        (0, m) => format!("{} (", orders::count_text(m)),
        (_, m) => format!(
            "{fences} and {} ({} inserted, {} strengthened",
            orders::count_text(m),
            sol.inserted,
            sol.strengthened
        ),
    };
    let sep = if n == 0 && !sol.accesses.is_empty() {
        ""
    } else {
        ", "
    };
    let _ = writeln!(
        out,
        "{file}: fixed with {what}{sep}weight {}); re-checked: {} {}, {} buggy",
        sol.weight,
        verified.executions,
        if verified.executions == 1 { one } else { many },
        verified.buggy
    );
    if verified.bounded > 0 {
        let _ = writeln!(
            out,
            "  verified up to the loop bound only: {} executions of the fixed program were cut",
            verified.bounded
        );
    }
    for (f, p) in sol.fences.iter().zip(positions) {
        let how: BTreeSet<&str> = f
            .needed_by
            .iter()
            .map(|(_, v)| match v {
                Violation::Weak => "creates synchronisation (weak cycle)",
                Violation::Strong => "orders seq_cst fences (strong cycle)",
                Violation::RaceOrdered => "orders the racing accesses",
                Violation::Other => "forbids the execution",
            })
            .collect();
        let action = match f.site {
            Site::Slot(_) => format!("insert {}", f.order.c_name()),
            Site::Existing(_) => format!(
                "strengthen {} -> {}",
                f.previous.map(|o| o.c_name()).unwrap_or("?"),
                f.order.c_name()
            ),
        };
        // The fast mode keeps an earlier round's fence that no kept requirement names.
        let why = if how.is_empty() {
            "kept from an earlier round".to_string()
        } else {
            how.into_iter().collect::<Vec<_>>().join("; ")
        };
        let _ = writeln!(
            out,
            "  {}:{}:{}: {action}: {why}",
            sources.name_of(p.file, file),
            p.line,
            p.column,
        );
    }
    out
}

/// The report of an unfixable program: the bug as a diagnostic at its position, why no fence
/// set forbids its execution, and that execution (`g`, whose only bug is `bug`) in thread
/// columns.
pub fn unfixable_text(
    name: &str,
    (prog, src): (&Program, &str),
    g: &ExecutionGraph,
    bug: &crate::checker::Bug,
    (reason, color): (&str, bool),
) -> String {
    let mut d = diagnostic::bug_diagnostic(name, src, prog, g, bug);
    d.notes.push(format!("not fixable with fences: {reason}"));
    let files = diagnostic::Files::of_program(name, src, prog);
    format!(
        "{}the execution no fence set can forbid:\n{}",
        diagnostic::render(&[d], &files, color),
        render_execution(prog, src, g)
    )
}

/// An execution graph in Graphviz DOT: one cluster per thread, po, rf, mo and sw edges (sw as
/// `model` derives it; the drawing of `explain`, without a fix).
pub fn execution_dot(prog: &Program, g: &ExecutionGraph, model: crate::checker::Model) -> String {
    explain::explain_dot(prog, g, None, model)
}
