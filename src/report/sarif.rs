//! SARIF 2.1.0 (`--format sarif`): the errors of `check` and `fix` as static-analysis results,
//! and a fix's fence edits as SARIF `fixes`, for code-scanning services and editors.
//!
//! One result per distinct error of a file (its kind is the rule: `assertion`, `race`,
//! `deadlock`, `liveness`, `misuse`, `memory`, `ub`), at the failing statement (a liveness
//! bug at its loop; a memory error names the `free` involved as a related location). `fix` attaches to every result of a file the
//! same fix — the whole fence set, which removes all of the file's errors together — as
//! replacements built from the rewriter's own [`Edit`]s: byte ranges of the file as it was
//! read, given both as `byteOffset`/`byteLength` and as lines and columns (columns count
//! Unicode code points: the run says `columnKind: unicodeCodePoints`).
//!
//! Pure, like the rest of `report`: [`FileRun`] holds one file's part, [`log`] builds the
//! document. The structs derive `Deserialize` too so that a file's part can travel as JSON.

use super::ErrorEntry;
use crate::rewrite::{Edit, FileRewrite};
use serde::{Deserialize, Serialize};

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

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub text: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactLocation {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub uri_base_id: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    pub start_column: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub byte_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub byte_length: Option<usize>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    pub deleted_region: Region,
    pub inserted_content: Message,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactChange {
    pub artifact_location: ArtifactLocation,
    pub replacements: Vec<Replacement>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    pub description: Message,
    pub artifact_changes: Vec<ArtifactChange>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: String,
    pub rule_index: usize,
    pub level: String,
    pub message: Message,
    pub locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub related_locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub fixes: Vec<Fix>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub properties: Option<ResultProperties>,
}

/// A result's property bag: which memory error it is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ResultProperties {
    pub detail: String,
}

/// A tool execution notification: why a file was not (completely) analysed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// `error` (the file could not be analysed) or `warning` (incomplete, unfixable).
    pub level: String,
    pub message: Message,
    pub locations: Vec<Location>,
}

/// One file's part of the run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct FileRun {
    pub results: Vec<SarifResult>,
    pub notifications: Vec<Notification>,
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
pub fn artifact(path: &str) -> ArtifactLocation {
    let u = uri(path);
    let relative = !u.starts_with("file:");
    ArtifactLocation {
        uri: u,
        uri_base_id: relative.then(|| "%SRCROOT%".to_string()),
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
pub fn point(src: &str, line: usize, column: usize) -> Region {
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
    Region {
        start_line: line,
        start_column,
        ..Region::default()
    }
}

/// The replacement of one edit of `src`.
pub fn replacement(src: &str, e: &Edit) -> Replacement {
    let (start_line, start_column) = position(src, e.start);
    let (end_line, end_column) = position(src, e.end);
    Replacement {
        deleted_region: Region {
            start_line,
            start_column,
            end_line: Some(end_line),
            end_column: Some(end_column),
            byte_offset: Some(e.start),
            byte_length: Some(e.end.saturating_sub(e.start)),
        },
        inserted_content: Message {
            text: e.text.clone(),
        },
    }
}

fn rule_index(kind: &str) -> usize {
    RULES.iter().position(|r| r.0 == kind).unwrap_or(0)
}

/// The files of a translation unit by the names messages give them: the main file `main`
/// (text `src`) and the headers of `sources`.
#[derive(Clone, Copy)]
pub struct UnitFiles<'a> {
    pub main: &'a str,
    pub src: &'a str,
    pub sources: &'a crate::ir::Sources,
}

impl<'a> UnitFiles<'a> {
    /// The name and text of the file called `file` (`None`: the main file).
    fn get(&self, file: Option<&'a str>) -> (&'a str, &'a str) {
        let header = file.and_then(|f| self.sources.headers.iter().find(|h| h.name == f));
        header.map_or((self.main, self.src), |h| {
            (h.name.as_str(), h.text.as_str())
        })
    }

    /// The name and text of file `index` (0: the main file, `k`: header `k - 1`).
    fn by_index(&self, index: usize) -> (&'a str, &'a str) {
        match index
            .checked_sub(1)
            .and_then(|k| self.sources.headers.get(k))
        {
            Some(h) => (h.name.as_str(), h.text.as_str()),
            None => (self.main, self.src),
        }
    }
}

/// One result per error of the unit (located in its file, a header's for an error there),
/// each with `fix` (when there is one).
pub fn results(unit: &UnitFiles, errors: &[ErrorEntry], fix: Option<&Fix>) -> Vec<SarifResult> {
    errors
        .iter()
        .map(|e| (e, unit.get(e.file.as_deref())))
        .map(|(e, (file, src))| SarifResult {
            rule_id: e.kind.to_string(),
            rule_index: rule_index(e.kind),
            level: "error".into(),
            message: Message {
                text: e.message.clone(),
            },
            locations: vec![Location {
                physical_location: PhysicalLocation {
                    artifact_location: artifact(file),
                    region: point(src, e.line, e.column),
                },
            }],
            related_locations: e
                .related
                .iter()
                .map(|r| Location {
                    physical_location: PhysicalLocation {
                        artifact_location: artifact(file),
                        region: point(src, r.line, r.column),
                    },
                })
                .collect(),
            fixes: fix.into_iter().cloned().collect(),
            properties: e.detail.map(|d| ResultProperties { detail: d.into() }),
        })
        .collect()
}

/// The fix made of the `edits` of each file of the unit (one artifact change per file, in
/// file order), described by `description`.
pub fn fix(unit: &UnitFiles, edits: &[FileRewrite], description: String) -> Fix {
    let mut files: Vec<&FileRewrite> = edits.iter().collect();
    files.sort_by_key(|f| f.file);
    Fix {
        description: Message { text: description },
        artifact_changes: files
            .into_iter()
            .map(|f| {
                let (file, src) = unit.by_index(f.file);
                let mut edits: Vec<&Edit> = f.edits.iter().collect();
                edits.sort_by_key(|e| (e.start, e.end));
                ArtifactChange {
                    artifact_location: artifact(file),
                    replacements: edits.into_iter().map(|e| replacement(src, e)).collect(),
                }
            })
            .collect(),
    }
}

/// A notification about `file` at `line:column` (1:1 when unknown).
pub fn notification(
    level: &str,
    file: &str,
    line: usize,
    column: usize,
    text: String,
) -> Notification {
    Notification {
        level: level.into(),
        message: Message { text },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: artifact(file),
                region: Region {
                    start_line: line.max(1),
                    start_column: column.max(1),
                    ..Region::default()
                },
            },
        }],
    }
}

/// A reporting descriptor: one rule.
#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub short_description: Message,
    pub default_configuration: RuleConfiguration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
}

#[derive(Serialize, Clone, Debug)]
pub struct RuleConfiguration {
    pub level: &'static str,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Driver {
    pub name: &'static str,
    pub version: &'static str,
    pub semantic_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information_uri: Option<&'static str>,
    pub rules: Vec<Rule>,
}

#[derive(Serialize, Clone, Debug)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    pub execution_successful: bool,
    pub tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize, Clone, Debug)]
pub struct UriBase {
    pub uri: String,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_uri_base_ids: Option<std::collections::BTreeMap<&'static str, UriBase>>,
    pub column_kind: &'static str,
    pub results: Vec<SarifResult>,
    pub invocations: Vec<Invocation>,
}

/// The whole document.
#[derive(Serialize, Clone, Debug)]
pub struct Log {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run>,
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
pub fn log(files: Vec<FileRun>, src_root: Option<String>, successful: bool) -> Log {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for f in files {
        results.extend(f.results);
        notifications.extend(f.notifications);
    }
    let rules = RULES
        .iter()
        .map(|&(id, name, text)| Rule {
            id,
            name,
            short_description: Message { text: text.into() },
            default_configuration: RuleConfiguration { level: "error" },
            help_uri: information_uri().map(str::to_string),
        })
        .collect();
    Log {
        schema: SCHEMA,
        version: VERSION,
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "fensyn",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: information_uri(),
                    rules,
                },
            },
            original_uri_base_ids: src_root
                .map(|uri| [("%SRCROOT%", UriBase { uri })].into_iter().collect()),
            column_kind: "unicodeCodePoints",
            results,
            invocations: vec![Invocation {
                execution_successful: successful,
                tool_execution_notifications: notifications,
            }],
        }],
    }
}

/// `check --format sarif` for one file: a result per error; a warning when the exploration
/// was cut (`incomplete`: why).
pub fn check_run(unit: &UnitFiles, errors: &[ErrorEntry], incomplete: Option<String>) -> FileRun {
    let file = unit.main;
    FileRun {
        results: results(unit, errors, None),
        notifications: incomplete
            .map(|why| {
                notification(
                    "warning",
                    file,
                    1,
                    1,
                    format!("exploration incomplete: {why}"),
                )
            })
            .into_iter()
            .collect(),
    }
}

/// `fix --format sarif` for one file. `errors`: the errors the fix removes (or the one an
/// unfixable program keeps); `edits`: the fix's edits, when there is a fix.
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
    let mut run = FileRun {
        results: results(unit, errors, fix.as_ref()),
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
        assert_eq!(point(src, 2, 3).start_column, 2);
        let r = replacement(
            src,
            &Edit {
                start: 3,
                end: 3,
                text: "f();\n".into(),
            },
        );
        assert_eq!(
            (r.deleted_region.start_line, r.deleted_region.start_column),
            (2, 1)
        );
        assert_eq!(r.deleted_region.byte_length, Some(0));
        assert_eq!(r.inserted_content.text, "f();\n");
    }
}
