//! SARIF 2.1.0 (`--format sarif`): the errors of `check` and `fix` as static-analysis results,
//! and a fix's fence edits as SARIF `fixes`, for code-scanning services and editors. The
//! document is built from the types serde-sarif generates from the SARIF 2.1.0 schema (the
//! test suite validates fensyn's output against that schema, vendored in `tests/data`).
//!
//! One result per distinct error of a file (its kind is the rule: `assertion`, `race`,
//! `deadlock`, `liveness`, `misuse`, `memory`, `ub`), at the failing statement (a liveness
//! bug at its loop). Each result carries:
//!
//! * `relatedLocations`: the other access of a race, the `free` a memory error involves, and
//!   for `fix` the fences the fix places;
//! * `codeFlows` (`check`): the failing execution — the one with the fewest events among
//!   those that show the error — as one `threadFlow` per thread in thread order, each
//!   thread's events in program order with their `executionOrder` (their position in a
//!   linearisation of po ∪ rf) and the events of the error marked `essential`;
//! * `partialFingerprints`: `fensyn/v1`, a hash of the rule, the enclosing function and the
//!   failing statement's text with its white space collapsed (plus `:N` for the N-th result
//!   with the same hash): stable across runs and across edits elsewhere in the file.
//!
//! `fix` attaches to every result of a file the same fix — the whole fence set, which
//! removes all of the file's errors together — as replacements built from the rewriter's own
//! [`Edit`]s: byte ranges of the file as it was read, given both as `byteOffset`/`byteLength`
//! and as lines and columns (columns count Unicode code points: the run says `columnKind:
//! unicodeCodePoints`).
//!
//! Pure, like the rest of `report`: [`FileRun`] holds one file's part, [`log`] builds the
//! document.

use super::ErrorEntry;
use crate::checker::{Bug, ExecutionGraph, INIT_THREAD};
use crate::ir::{Program, StmtId};
use crate::rewrite::{Edit, FileRewrite};
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_sarif::sarif as s;

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
pub const VERSION: &str = "2.1.0";

/// The rules: one per error kind, in `ruleIndex` order.
pub const RULES: &[(&str, &str, &str)] = &[
    (
        "assertion",
        "AssertionFailure",
        "An assertion fails in some execution allowed by the memory model.",
    ),
    (
        "race",
        "DataRace",
        "Two conflicting accesses, one of them non-atomic, are not ordered by happens-before.",
    ),
    (
        "deadlock",
        "Deadlock",
        "A thread waits forever: for a mutex, spinlock or rwlock that nobody releases, at a \
         barrier whose round never completes, or on a condition variable that is signalled \
         only before its wait began (a lost wake-up).",
    ),
    (
        "liveness",
        "LivenessViolation",
        "A thread spins forever in an await or spin loop: every other thread has finished or \
         waits, and the loop's last pass read the latest write of everything it reads, so \
         under fair scheduling nothing it waits for is ever written.",
    ),
    (
        "misuse",
        "SynchronisationMisuse",
        "A synchronisation object is used against its contract: locked, waited on or \
         destroyed when it is not initialised, destroyed while in use, or unlocked by a thread \
         that does not hold it.",
    ),
    (
        "memory",
        "MemoryError",
        "A memory-safety error: an object used after its free or its function's return (or \
         racing with it), a double or invalid free, a read of memory never written, an access \
         out of an object's bounds or through a null pointer (the result's \
         `properties.detail` says which).",
    ),
    (
        "ub",
        "UndefinedBehaviour",
        "Undefined behaviour: division by zero, a bad thread handle, or a call through a \
         pointer to no function.",
    ),
];

/// One file's part of the run (how it travels, as JSON, from the one-file command to the
/// document of the whole call): its results and its notifications.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct FileRun {
    pub results: Vec<s::Result>,
    pub notifications: Vec<s::Notification>,
}

fn message(text: impl Into<String>) -> s::Message {
    s::Message {
        text: Some(text.into()),
        ..s::Message::default()
    }
}

/// `path` as a URI reference: `/` separators, percent-encoded; an absolute path becomes a
/// `file://` URI.
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let absolute = path.starts_with('/');
    let path = path.trim_start_matches("./");
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if absolute {
        format!("file://{out}")
    } else {
        out
    }
}

/// The artifact location of input `path`: relative paths are relative to `%SRCROOT%`, the
/// working directory (see [`log`]).
pub fn artifact(path: &str) -> s::ArtifactLocation {
    let u = uri(path);
    let relative = !u.starts_with("file:");
    s::ArtifactLocation {
        uri: Some(u),
        uri_base_id: relative.then(|| "%SRCROOT%".to_string()),
        ..s::ArtifactLocation::default()
    }
}

/// A location in `file`, with an optional message.
fn location(file: &str, region: s::Region, text: Option<String>) -> s::Location {
    s::Location {
        physical_location: Some(s::PhysicalLocation {
            artifact_location: Some(artifact(file)),
            region: Some(region),
            ..s::PhysicalLocation::default()
        }),
        message: text.map(message),
        ..s::Location::default()
    }
}

/// 1-based line and code-point column of byte offset `at` of `src`.
fn position(src: &str, at: usize) -> (usize, usize) {
    let at = at.min(src.len());
    let at = (0..=at)
        .rev()
        .find(|&i| src.is_char_boundary(i))
        .unwrap_or(0);
    let before = &src[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        src[line_start..at].chars().count() + 1,
    )
}

/// The region of the statement at 1-based `line` and byte `column` (as the front end reports
/// them), with the column in code points.
pub fn point(src: &str, line: usize, column: usize) -> s::Region {
    let line_start = if line <= 1 {
        Some(0)
    } else {
        src.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
    };
    let start_column = match line_start {
        Some(ls) => {
            let at = (ls + column.saturating_sub(1)).min(src.len());
            position(src, at).1
        }
        None => column,
    };
    s::Region {
        start_line: Some(line.max(1) as i64),
        start_column: Some(start_column.max(1) as i64),
        ..s::Region::default()
    }
}

/// The replacement of one edit of `src`.
pub fn replacement(src: &str, e: &Edit) -> s::Replacement {
    let (start_line, start_column) = position(src, e.start);
    let (end_line, end_column) = position(src, e.end);
    s::Replacement {
        deleted_region: s::Region {
            start_line: Some(start_line as i64),
            start_column: Some(start_column as i64),
            end_line: Some(end_line as i64),
            end_column: Some(end_column as i64),
            byte_offset: Some(e.start as i64),
            byte_length: Some(e.end.saturating_sub(e.start) as i64),
            ..s::Region::default()
        },
        inserted_content: Some(s::ArtifactContent {
            text: Some(e.text.clone()),
            ..s::ArtifactContent::default()
        }),
        properties: None,
    }
}

fn rule_index(kind: &str) -> usize {
    RULES.iter().position(|r| r.0 == kind).unwrap_or(0)
}

/// The files of a translation unit by the names messages give them: the main file `main`
/// (text `src`) and the headers of `prog`'s sources.
#[derive(Clone, Copy)]
pub struct UnitFiles<'a> {
    pub main: &'a str,
    pub src: &'a str,
    pub prog: &'a Program,
}

impl<'a> UnitFiles<'a> {
    /// The name and text of the file called `file` (`None`: the main file).
    fn get(&self, file: Option<&'a str>) -> (&'a str, &'a str) {
        let headers = &self.prog.sources.headers;
        let header = file.and_then(|f| headers.iter().find(|h| h.name == f));
        header.map_or((self.main, self.src), |h| {
            (h.name.as_str(), h.text.as_str())
        })
    }

    /// The name and text of file `index` (0: the main file, `k`: header `k - 1`).
    fn by_index(&self, index: usize) -> (&'a str, &'a str) {
        match index
            .checked_sub(1)
            .and_then(|k| self.prog.sources.headers.get(k))
        {
            Some(h) => (h.name.as_str(), h.text.as_str()),
            None => (self.main, self.src),
        }
    }

    /// The file name, its text and the region of statement `st`.
    fn stmt(&self, st: StmtId) -> (&'a str, &'a str, s::Region) {
        let span = self.prog.stmts[st].span;
        let (file, src) = self.by_index(self.prog.sources.file_index(&span));
        (file, src, point(src, span.line, span.column))
    }

    /// The statement an error is reported at (its file, line and column).
    fn stmt_of(&self, e: &ErrorEntry) -> Option<StmtId> {
        let (file, _) = self.get(e.file.as_deref());
        let prog = self.prog;
        (0..prog.stmts.len()).find(|&st| {
            let span = prog.stmts[st].span;
            (span.line, span.column) == (e.line, e.column)
                && prog
                    .sources
                    .name_of(prog.sources.file_index(&span), self.main)
                    == file
        })
    }

    /// The text of statement `st` with its white space collapsed.
    fn stmt_text(&self, st: StmtId) -> String {
        let span = self.prog.stmts[st].span;
        let prog = self.prog;
        let index = prog.sources.file_index(&span);
        let base = index
            .checked_sub(1)
            .and_then(|k| prog.sources.headers.get(k))
            .map_or(0, |h| h.base);
        let (_, src) = self.by_index(index);
        let text = src
            .get(span.start.saturating_sub(base)..span.end.saturating_sub(base))
            .unwrap_or("");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// 64-bit FNV-1a: a hash whose value is fixed by its definition (not by a library version).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The `fensyn/v1` fingerprint of an error of kind `kind` at statement `st` (or, when the
/// statement is not known, at the entry's source line).
fn fingerprint(unit: &UnitFiles, e: &ErrorEntry, st: Option<StmtId>) -> String {
    let (func, text) = match st {
        Some(st) => {
            let f = unit.prog.stmts[st].func;
            (unit.prog.functions[f].name.clone(), unit.stmt_text(st))
        }
        None => {
            let (_, src) = unit.get(e.file.as_deref());
            let line = src.lines().nth(e.line.saturating_sub(1)).unwrap_or("");
            (
                String::new(),
                line.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        }
    };
    let key = format!("{}\0{func}\0{text}", e.label());
    format!("{:016x}", fnv1a(key.as_bytes()))
}

/// Gives each result its `partialFingerprints`, numbering results whose hashes are equal
/// (`:1`, `:2`, ... in result order) so that every result keeps a distinct identity.
fn number_fingerprints(results: &mut [s::Result], hashes: Vec<String>) {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (r, h) in results.iter_mut().zip(hashes) {
        let n = seen.entry(h.clone()).or_insert(0);
        *n += 1;
        r.partial_fingerprints = Some([("fensyn/v1".to_string(), format!("{h}:{n}"))].into());
    }
}

/// The bare result of error `e` at its statement, with its memory error's related position.
fn result(unit: &UnitFiles, e: &ErrorEntry) -> s::Result {
    let (file, src) = unit.get(e.file.as_deref());
    let mut r = s::Result::builder()
        .message(message(e.message.clone()))
        .rule_id(e.kind)
        .rule_index(rule_index(e.kind) as i64)
        .level(s::ResultLevel::Error)
        .locations(vec![location(file, point(src, e.line, e.column), None)])
        .build();
    if let Some(rel) = e.related {
        let what = match e.detail {
            Some("double-free") => "the first free",
            _ => "the end of the object's lifetime",
        };
        r.related_locations = Some(vec![location(
            file,
            point(src, rel.line, rel.column),
            Some(what.to_string()),
        )]);
    }
    if let Some(d) = e.detail {
        let mut bag = s::PropertyBag::default();
        bag.additional_properties.insert("detail".into(), json!(d));
        r.properties = Some(bag);
    }
    r
}

/// One result per error of the unit (located in its file, a header's for an error there),
/// each with `fix` (when there is one) and its fingerprint.
pub fn results(unit: &UnitFiles, errors: &[ErrorEntry], fix: Option<&s::Fix>) -> Vec<s::Result> {
    let mut out: Vec<s::Result> = errors.iter().map(|e| result(unit, e)).collect();
    for r in &mut out {
        r.fixes = fix.map(|f| vec![f.clone()]);
    }
    let hashes = errors
        .iter()
        .map(|e| fingerprint(unit, e, unit.stmt_of(e)))
        .collect();
    number_fingerprints(&mut out, hashes);
    out
}

/// The bug of `g` that error `e` is, if any.
fn bug_of<'g>(prog: &Program, g: &'g ExecutionGraph, e: &ErrorEntry) -> Option<&'g Bug> {
    g.bugs.iter().find(|b| {
        // The same error whatever count `e` carries.
        let entry = super::bug_entries(prog, std::iter::once(*b)).pop();
        entry.is_some_and(|x| {
            ErrorEntry {
                executions: e.executions,
                ..x
            } == *e
        })
    })
}

/// The execution to show for error `e`: of the buggy executions that have it, the one with
/// the fewest events (the first of those), with the bug.
fn shortest<'g>(
    prog: &Program,
    buggy: &[&'g ExecutionGraph],
    e: &ErrorEntry,
) -> Option<(&'g ExecutionGraph, &'g Bug)> {
    buggy
        .iter()
        .filter_map(|&g| bug_of(prog, g, e).map(|b| (g, b)))
        .min_by_key(|(g, _)| g.events.len())
}

/// The other access of a race (the access of the pair that is not at the bug's statement).
fn other_access(g: &ExecutionGraph, b: &Bug) -> Option<StmtId> {
    let (x, y) = b.race?;
    let (sx, sy) = (g.events[x].stmt, g.events[y].stmt);
    if sy == Some(b.stmt) {
        sx
    } else {
        sy.or(sx)
    }
}

/// The failing execution `g` of bug `b` as a code flow: one thread flow per thread (thread
/// order), each thread's events with a statement in program order.
fn code_flow(unit: &UnitFiles, g: &ExecutionGraph, b: &Bug) -> s::CodeFlow {
    let prog = unit.prog;
    let essential: Vec<usize> = b
        .race
        .map(|(x, y)| vec![x, y])
        .unwrap_or_else(|| b.witness.iter().rev().take(1).copied().collect());
    let mut flows = Vec::new();
    for (t, tr) in g.threads.iter().enumerate() {
        if t == INIT_THREAD {
            continue;
        }
        let locations: Vec<s::ThreadFlowLocation> = tr
            .events
            .iter()
            .filter_map(|&e| g.events[e].stmt.map(|st| (e, st)))
            .map(|(e, st)| {
                let (file, _, region) = unit.stmt(st);
                let failing = st == b.stmt && (essential.contains(&e) || b.race.is_none());
                let mut label = super::event_label(prog, g, e);
                if failing {
                    label.push_str(&format!(" — {} fails here", b.kind.as_str()));
                }
                s::ThreadFlowLocation {
                    location: Some(location(file, region, Some(label))),
                    execution_order: Some(e as i64),
                    importance: (failing || essential.contains(&e)).then(|| json!("essential")),
                    ..s::ThreadFlowLocation::default()
                }
            })
            .collect();
        if locations.is_empty() {
            continue;
        }
        let name = &prog.functions[tr.func].name;
        let mut flow = s::ThreadFlow::builder().locations(locations).build();
        flow.id = Some(format!("T{t}"));
        flow.message = Some(message(format!("thread T{t}: {name}()")));
        flows.push(flow);
    }
    let mut cf = s::CodeFlow::builder().thread_flows(flows).build();
    cf.message = Some(message(format!(
        "an execution of {} events in which the {} happens",
        g.events.len(),
        b.kind.as_str()
    )));
    cf
}

/// `check --format sarif` for one file: a result per error (`errors`, with exact counts), with
/// the shortest of the executions `buggy` that shows it as its code flow; a warning when the exploration was cut
/// (`incomplete`: why).
pub fn check_run(
    unit: &UnitFiles,
    errors: &[ErrorEntry],
    buggy: &[&ExecutionGraph],
    incomplete: Option<String>,
) -> FileRun {
    let prog = unit.prog;
    let mut results = results(unit, errors, None);
    for (r, e) in results.iter_mut().zip(errors) {
        let Some((g, b)) = shortest(prog, buggy, e) else {
            continue;
        };
        if let Some(st) = other_access(g, b) {
            let (file, _, region) = unit.stmt(st);
            r.related_locations
                .get_or_insert_with(Vec::new)
                .push(location(
                    file,
                    region,
                    Some("the other access of the race".into()),
                ));
        }
        r.code_flows = Some(vec![code_flow(unit, g, b)]);
    }
    FileRun {
        results,
        notifications: incomplete
            .map(|why| {
                notification(
                    "warning",
                    unit.main,
                    1,
                    1,
                    format!("exploration incomplete: {why}"),
                )
            })
            .into_iter()
            .collect(),
    }
}

/// The fix made of the `edits` of each file of the unit (one artifact change per file, in
/// file order), described by `description`.
pub fn fix(unit: &UnitFiles, edits: &[FileRewrite], description: String) -> s::Fix {
    let mut files: Vec<&FileRewrite> = edits.iter().collect();
    files.sort_by_key(|f| f.file);
    let changes = files
        .into_iter()
        .map(|f| {
            let (file, src) = unit.by_index(f.file);
            let mut edits: Vec<&Edit> = f.edits.iter().collect();
            edits.sort_by_key(|e| (e.start, e.end));
            s::ArtifactChange::builder()
                .artifact_location(artifact(file))
                .replacements(
                    edits
                        .into_iter()
                        .map(|e| replacement(src, e))
                        .collect::<Vec<_>>(),
                )
                .build()
        })
        .collect::<Vec<_>>();
    let mut fix = s::Fix::builder().artifact_changes(changes).build();
    fix.description = Some(message(description));
    fix
}

/// A notification about `file` at `line:column` (1:1 when unknown).
pub fn notification(
    level: &str,
    file: &str,
    line: usize,
    column: usize,
    text: String,
) -> s::Notification {
    let region = s::Region {
        start_line: Some(line.max(1) as i64),
        start_column: Some(column.max(1) as i64),
        ..s::Region::default()
    };
    let mut n = s::Notification::builder().message(message(text)).build();
    n.level = Some(json!(level));
    n.locations = Some(vec![location(file, region, None)]);
    n
}

/// The project's address, when Cargo.toml gives one (`homepage`, else `repository`).
fn information_uri() -> Option<&'static str> {
    [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|u| !u.is_empty())
}

/// The SARIF log of one run over `files`; `src_root` is the working directory (a `file://`
/// URI ending in `/`) that relative artifact URIs are resolved against; `successful`: every
/// file was analysed.
pub fn log(files: Vec<FileRun>, src_root: Option<String>, successful: bool) -> s::Sarif {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for f in files {
        results.extend(f.results);
        notifications.extend(f.notifications);
    }
    let rules: Vec<s::ReportingDescriptor> = RULES
        .iter()
        .map(|&(id, name, text)| {
            let mut d = s::ReportingDescriptor::builder()
                .id(id)
                .name(name)
                .short_description(s::MultiformatMessageString::builder().text(text).build())
                .default_configuration(s::ReportingConfiguration {
                    level: Some(json!("error")),
                    ..s::ReportingConfiguration::default()
                })
                .build();
            d.help_uri = information_uri().map(str::to_string);
            d
        })
        .collect();
    let mut driver = s::ToolComponent::builder()
        .name("fensyn")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    driver.information_uri = information_uri().map(str::to_string);
    let mut invocation = s::Invocation::builder()
        .execution_successful(successful)
        .build();
    invocation.tool_execution_notifications = Some(notifications);
    let mut run = s::Run::builder()
        .tool(s::Tool::builder().driver(driver).build())
        .column_kind(json!("unicodeCodePoints"))
        .results(results)
        .invocations(vec![invocation])
        .build();
    run.original_uri_base_ids = src_root.map(|uri| {
        let base = s::ArtifactLocation {
            uri: Some(uri),
            ..s::ArtifactLocation::default()
        };
        [("%SRCROOT%".to_string(), base)].into()
    });
    s::Sarif::builder()
        .schema(SCHEMA)
        .version(json!(VERSION))
        .runs(vec![run])
        .build()
}

/// `fix --format sarif` for one file. `errors`: the errors the fix removes (or the one an
/// unfixable program keeps); `edits`: the fix's edits, when there is a fix. Every result
/// names the fences of the fix as related locations.
pub fn fix_run(
    unit: &UnitFiles,
    j: &super::FixJson,
    errors: &[ErrorEntry],
    edits: Option<&[FileRewrite]>,
) -> FileRun {
    let file = unit.main;
    let fix = edits.map(|edits| {
        let n = j.fences.len();
        let mut text = format!(
            "{n} fence{} ({} inserted, {} strengthened, weight {}), re-checked under {}:",
            if n == 1 { "" } else { "s" },
            j.inserted,
            j.strengthened,
            j.weight,
            j.model
        );
        for f in &j.fences {
            let at = f.file.as_deref().map_or(String::new(), |h| format!("{h}:"));
            text.push_str(&format!(
                " {} {} at {at}{}:{};",
                f.action, f.order, f.line, f.column
            ));
        }
        text.pop();
        text.push_str(". The fences remove every error of the file together: apply the fix once.");
        fix(unit, edits, text)
    });
    let mut results = results(unit, errors, fix.as_ref());
    if fix.is_some() {
        let fences: Vec<s::Location> = j
            .fences
            .iter()
            .map(|f| {
                let (name, src) = unit.get(f.file.as_deref());
                let what = format!("the fix's fence: {} {}", f.action, f.order);
                location(name, point(src, f.line, f.column), Some(what))
            })
            .collect();
        for r in &mut results {
            r.related_locations
                .get_or_insert_with(Vec::new)
                .extend(fences.iter().cloned());
        }
    }
    let mut run = FileRun {
        results,
        notifications: Vec::new(),
    };
    if let Some(reason) = &j.reason {
        let what = match j.status {
            "unfixable" => "not fixable with fences",
            "incomplete" => "exploration incomplete",
            other => other,
        };
        run.notifications.push(notification(
            "warning",
            file,
            1,
            1,
            format!("{what}: {reason}"),
        ));
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri("./dir/a b.c"), "dir/a%20b.c");
        assert_eq!(uri("/tmp/x.c++"), "file:///tmp/x.c%2B%2B");
        assert_eq!(artifact("a.c").uri_base_id.as_deref(), Some("%SRCROOT%"));
        assert_eq!(artifact("/a.c").uri_base_id, None);
    }

    #[test]
    fn positions_count_code_points() {
        let src = "ab\n\u{e9}x = 1;\n";
        // `x` is byte 2 of line 2 but code point 2.
        assert_eq!(position(src, 5), (2, 2));
        assert_eq!(point(src, 2, 3).start_column, Some(2));
        let r = replacement(
            src,
            &Edit {
                start: 3,
                end: 3,
                text: "f();\n".into(),
            },
        );
        let d = &r.deleted_region;
        assert_eq!((d.start_line, d.start_column), (Some(2), Some(1)));
        assert_eq!(d.byte_length, Some(0));
        assert_eq!(r.inserted_content.unwrap().text.as_deref(), Some("f();\n"));
    }

    #[test]
    fn the_fingerprint_hash_is_fixed() {
        // FNV-1a's published test vectors: the value never depends on a library version.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
