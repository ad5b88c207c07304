//! Diagnostics as rustc and ruff show them: a title `error[race]: ...`, the position
//! `--> file:line:col`, the source lines with carets under what the error is about, and notes.
//!
//! A [`Diagnostic`] is data (what to say and where); [`render`] draws it with the
//! annotate-snippets crate, plain or in colour. [`check_diagnostics`] turns a check's buggy
//! executions into diagnostics: one per distinct error, except that a race is one diagnostic
//! per pair of racing statements (whatever cells or threads its executions involve), with both
//! accesses labelled by their thread and whether they read or write.
//!
//! **Invariants:** rendering is pure and deterministic (no terminal queries: the caller says
//! whether to colour); a label whose span does not fall inside its file's text is dropped and
//! the diagnostic still names its position, so a diagnostic is never lost.

use super::{error_entry, ErrorEntry};
use crate::checker::{EventKind, ExecutionGraph};
use crate::ir::{Program, Span, StmtId};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A source range a diagnostic points at, with its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The file as messages name it (the checked file, or a header).
    pub file: String,
    /// Byte range in that file's text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The range the title is about (carets `^`); the others are context (`-`).
    pub primary: bool,
}

/// One diagnostic: what is wrong, where, and the source ranges involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The kind in brackets: `race`, `assertion`, `syntax`, `input`.
    pub code: Option<String>,
    pub title: String,
    /// The primary position: `(file, line, column)`.
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub labels: Vec<Label>,
    /// Lines after the snippet (`= note: ...`).
    pub notes: Vec<String>,
}

/// The texts of the files labels refer to: `(name, text)` pairs.
pub struct Files<'a> {
    pub files: Vec<(&'a str, &'a str)>,
}

impl<'a> Files<'a> {
    /// The checked file and every header the program read.
    pub fn of_program(name: &'a str, src: &'a str, prog: &'a Program) -> Self {
        let mut files = vec![(name, src)];
        for h in &prog.sources.headers {
            files.push((h.name.as_str(), h.text.as_str()));
        }
        Files { files }
    }

    fn text(&self, name: &str) -> Option<&'a str> {
        self.files.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }
}

/// Draws diagnostics, one after the other, each ending with a blank line.
pub fn render(diags: &[Diagnostic], files: &Files, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for d in diags {
        out.push_str(&renderer.render(&[group(d, files)]));
        out.push_str("\n\n");
    }
    out
}

fn group<'a>(d: &'a Diagnostic, files: &Files<'a>) -> Group<'a> {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let mut title = level.primary_title(d.title.as_str());
    if let Some(code) = &d.code {
        title = title.id(code.as_str());
    }
    let mut g = Group::with_title(title);
    // One snippet per file, the diagnostic's own file first.
    let mut names: Vec<&str> = vec![d.file.as_str()];
    for l in &d.labels {
        if !names.contains(&l.file.as_str()) {
            names.push(&l.file);
        }
    }
    let mut shown = false;
    for name in names {
        let Some(text) = files.text(name) else {
            continue;
        };
        let labels: Vec<&Label> = d
            .labels
            .iter()
            .filter(|l| l.file == name && l.start <= l.end && l.end <= text.len())
            .filter(|l| text.is_char_boundary(l.start) && text.is_char_boundary(l.end))
            .collect();
        if labels.is_empty() {
            continue;
        }
        let mut snippet = Snippet::source(text).path(name);
        for l in labels {
            let kind = if l.primary {
                AnnotationKind::Primary
            } else {
                AnnotationKind::Context
            };
            snippet = snippet.annotation(kind.span(l.start..l.end).label(l.text.as_str()));
        }
        g = g.element(snippet);
        shown = true;
    }
    if !shown {
        g = g.element(
            Origin::path(d.file.as_str())
                .line(d.line)
                .char_column(d.column),
        );
    }
    for n in &d.notes {
        g = g.element(Level::NOTE.message(n.as_str()));
    }
    g
}

/// Statement `s` as a label (its file: the checked one or a header).
fn stmt_label(prog: &Program, main: &str, s: StmtId, text: String, primary: bool) -> Label {
    span_label(prog, main, prog.stmts[s].span, &text, primary)
}

/// Clips every label to the line it starts on (a loop or a block is marked on its first line).
fn clip_labels(labels: &mut [Label], files: &Files) {
    for l in labels.iter_mut() {
        let Some(text) = files.text(&l.file) else {
            continue;
        };
        if l.start >= text.len() || l.end > text.len() || l.start > l.end {
            continue;
        }
        if let Some(nl) = text[l.start..l.end].find('\n') {
            l.end = l.start + text[l.start..l.start + nl].trim_end().len();
        }
        if l.end == l.start && l.start < text.len() {
            // An empty span still gets one caret.
            l.end = l.start + text[l.start..].chars().next().map_or(0, char::len_utf8);
        }
    }
}

/// The label of one access of a race: `T2 (reader) reads `x``.
pub(crate) fn access_text(prog: &Program, g: &ExecutionGraph, e: usize) -> (String, &'static str) {
    let ev = &g.events[e];
    let thread = &g.threads[ev.thread];
    let who = format!("T{} ({})", ev.thread, prog.functions[thread.func].name);
    let loc = ev.loc.map_or("?".to_string(), |l| g.loc_name(prog, l));
    let allocation = ev
        .loc
        .and_then(|l| g.object_of(l))
        .is_some_and(|(_, d)| d.event == e);
    let verb = match ev.kind {
        EventKind::Read => "reads",
        _ if allocation => "allocates",
        _ => "writes",
    };
    (format!("{who} {verb} `{loc}`"), verb)
}

/// What one group of races has in common: the two statements (in source order) and what each
/// does (`reads`, `writes`, `allocates`).
type RaceKey = ((StmtId, &'static str), (StmtId, &'static str));

fn race_key(prog: &Program, g: &ExecutionGraph, (a, b): (usize, usize)) -> Option<RaceKey> {
    let sa = (g.events[a].stmt?, access_text(prog, g, a).1);
    let sb = (g.events[b].stmt?, access_text(prog, g, b).1);
    let pos = |s: StmtId| {
        let sp = prog.stmts[s].span;
        (sp.start, sp.end)
    };
    Some(if (pos(sa.0), sa.1) <= (pos(sb.0), sb.1) {
        (sa, sb)
    } else {
        (sb, sa)
    })
}

/// The diagnostics of a check: one per distinct error of `entries` (in source order, each
/// with the exact number of executions that show it), races grouped by their pair of
/// statements, whose accesses come from the first of the kept executions `buggy` that shows
/// the race. `total` is how many executions were explored (for "in N of M executions").
pub fn check_diagnostics(
    (name, src): (&str, &str),
    prog: &Program,
    buggy: &[&ExecutionGraph],
    entries: Vec<ErrorEntry>,
    total: u64,
) -> Vec<Diagnostic> {
    let files = Files::of_program(name, src, prog);
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut races: Vec<(RaceKey, usize, Vec<String>)> = Vec::new();
    for e in entries {
        let n = e.executions.unwrap_or(0);
        if e.kind == "race" {
            if let Some((key, d)) = race_diagnostic(name, prog, buggy, &e) {
                if let Some((_, at, cells)) = races.iter_mut().find(|(k, _, _)| *k == key) {
                    merge_race(&mut out[*at], cells, &e, n);
                    continue;
                }
                races.push((key, out.len(), vec![race_cell(&e)]));
                out.push(with_count(d, n, total));
                continue;
            }
        }
        out.push(with_count(entry_diagnostic(name, src, prog, &e), n, total));
    }
    for d in &mut out {
        clip_labels(&mut d.labels, &files);
    }
    out
}

fn with_count(mut d: Diagnostic, n: u64, total: u64) -> Diagnostic {
    d.notes.insert(0, count_note(n, total));
    d
}

/// `in 39 of 55 explored executions`.
fn count_note(n: u64, total: u64) -> String {
    format!(
        "in {n} of {}",
        super::executions(total).replace("execution", "explored execution")
    )
}

/// The location a race entry's message names (`x` in "race on `x` between ...").
fn race_cell(e: &ErrorEntry) -> String {
    e.message
        .split('`')
        .nth(1)
        .map_or_else(String::new, str::to_string)
}

/// Adds another cell's race on the same pair of statements to a race diagnostic.
fn merge_race(d: &mut Diagnostic, cells: &mut Vec<String>, e: &ErrorEntry, n: u64) {
    let cell = race_cell(e);
    if !cells.contains(&cell) {
        cells.push(cell.clone());
        d.notes
            .push(format!("also on `{cell}` (in {})", super::executions(n)));
    }
}

/// One bug of execution `g` as a diagnostic (a race with its two accesses).
pub fn bug_diagnostic(
    name: &str,
    src: &str,
    prog: &Program,
    g: &ExecutionGraph,
    bug: &crate::checker::Bug,
) -> Diagnostic {
    let e = error_entry(prog, bug);
    let mut d = match race_diagnostic(name, prog, &[g], &e) {
        Some((_, d)) if e.kind == "race" => d,
        _ => entry_diagnostic(name, src, prog, &e),
    };
    clip_labels(&mut d.labels, &Files::of_program(name, src, prog));
    d
}

/// A race entry as a diagnostic with its two accesses, from the first kept execution that
/// shows it.
fn race_diagnostic(
    name: &str,
    prog: &Program,
    buggy: &[&ExecutionGraph],
    e: &ErrorEntry,
) -> Option<(RaceKey, Diagnostic)> {
    // The same error whatever count `e` carries.
    let same = |x: ErrorEntry| {
        ErrorEntry {
            executions: e.executions,
            ..x
        } == *e
    };
    let (g, (a, b)) = buggy.iter().find_map(|&g| {
        g.bugs
            .iter()
            .find(|b| b.race.is_some() && same(error_entry(prog, b)))
            .and_then(|b| b.race.map(|r| (g, r)))
    })?;
    let key = race_key(prog, g, (a, b))?;
    // The primary access is the one the error is reported at (the later one in the source).
    let at = prog.stmts[key.1 .0].span;
    let (ta, va) = access_text(prog, g, a);
    let (tb, vb) = access_text(prog, g, b);
    let loc = race_cell(e);
    let what = |v: &str| match v {
        "reads" => "a read",
        "allocates" => "its allocation",
        _ => "a write",
    };
    let (first, second) = if va == "reads" && vb != "reads" {
        (vb, va)
    } else {
        (va, vb)
    };
    let title = format!(
        "data race on `{loc}`: {} and {} in different threads, not ordered by happens-before",
        what(first),
        what(second)
    );
    let label = |ev: usize, text: String| {
        let s = g.events[ev].stmt.unwrap_or(0);
        let primary = prog.stmts[s].span == at;
        stmt_label(prog, name, s, text, primary)
    };
    let mut labels = vec![label(a, ta), label(b, tb)];
    if labels.iter().all(|l| l.primary) {
        labels[0].primary = false;
    }
    let (file, line, column) = entry_position(name, e);
    Some((
        key,
        Diagnostic {
            severity: Severity::Error,
            code: Some("race".into()),
            title,
            file,
            line,
            column,
            labels,
            notes: Vec::new(),
        },
    ))
}

fn entry_position(name: &str, e: &ErrorEntry) -> (String, usize, usize) {
    (
        e.file.clone().unwrap_or_else(|| name.to_string()),
        e.line,
        e.column,
    )
}

/// An error entry (not a race) as a diagnostic: the statement at its position, and its
/// related position (the `free` of a use after free) as a second label.
fn entry_diagnostic(name: &str, src: &str, prog: &Program, e: &ErrorEntry) -> Diagnostic {
    let (file, line, column) = entry_position(name, e);
    let stmt = (0..prog.stmts.len()).find(|&s| {
        let sp = prog.stmts[s].span;
        sp.line == e.line
            && sp.column == e.column
            && prog.sources.header(&sp).map(|h| h.name.as_str()) == e.file.as_deref()
    });
    let mut labels: Vec<Label> = stmt
        .map(|s| stmt_label(prog, name, s, String::new(), true))
        .into_iter()
        .collect();
    if let (Some(r), None) = (e.related, &e.file) {
        let what = match e.detail {
            Some("use-after-return") => "its lifetime ended here",
            Some("double-free") => "first freed here",
            _ => "freed here",
        };
        if let Some(start) = offset_of(src, r.line, r.column) {
            let end = start + src[start..].find('\n').unwrap_or(src.len() - start);
            labels.push(Label {
                file: name.to_string(),
                start,
                end,
                text: what.to_string(),
                primary: false,
            });
        }
    }
    let mut notes = Vec::new();
    if let Some(d) = e.detail {
        notes.push(format!("memory error: {d}"));
    }
    Diagnostic {
        severity: Severity::Error,
        code: Some(e.kind.to_string()),
        title: e.message.clone(),
        file,
        line,
        column,
        labels,
        notes,
    }
}

/// The byte offset of a 1-based `line:column` (column in bytes) in `text`.
pub fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let at = (start + column.saturating_sub(1)).min(end);
    text.is_char_boundary(at).then_some(at)
}

/// An input error (exit code 3) at `line:column` of `file` whose text is `src` (when it could
/// be read): the diagnostic with a caret at the position. `kind` is the bracketed code
/// (`syntax`, `unsupported`, `input`).
pub fn input_error(
    file: &str,
    src: Option<&str>,
    (line, column): (usize, usize),
    kind: &str,
    message: &str,
) -> Diagnostic {
    let labels = src
        .and_then(|t| offset_of(t, line, column).map(|at| (t, at)))
        .map(|(t, at)| {
            let end = at
                + t[at..]
                    .chars()
                    .next()
                    .filter(|c| *c != '\n')
                    .map_or(0, char::len_utf8);
            Label {
                file: file.to_string(),
                start: at,
                end,
                text: String::new(),
                primary: true,
            }
        })
        .into_iter()
        .collect();
    Diagnostic {
        severity: Severity::Error,
        code: Some(kind.to_string()),
        title: message.to_string(),
        file: file.to_string(),
        line,
        column,
        labels,
        notes: Vec::new(),
    }
}

/// A span of the program as a label (for callers outside this module).
pub fn span_label(prog: &Program, main: &str, span: Span, text: &str, primary: bool) -> Label {
    let (file, base) = match prog.sources.header(&span) {
        Some(h) => (h.name.clone(), h.base),
        None => (main.to_string(), 0),
    };
    Label {
        file,
        start: span.start.saturating_sub(base),
        end: span.end.saturating_sub(base),
        text: text.to_string(),
        primary,
    }
}
