//! Runs `check` or `fix` over every input of one call and assembles the report.
//!
//! Per input file: find its configuration ([`config::Finder`]), merge it with the command line
//! into [`Settings`], run the one-file command into a buffer, and add the buffer to the report:
//!
//! * `text`, `dot`: the buffers one after the other (for `check` text, a blank line between
//!   two files' sections); streamed to stdout file by file;
//! * `json`: always a JSON array of the files' objects, in processing order, one file too; a
//!   file that could not be analysed (unreadable, syntax error, unsupported, bad
//!   configuration, internal error) is an object with its `error` ([`FileError`]);
//! * `sarif`: one SARIF log with one run; each file adds its results and notifications; a file
//!   that could not be analysed adds an error notification with the diagnostic.
//!
//! Files are processed in sorted order ([`files::collect`]). A file found in a directory
//! that does not define `main` (or `user_main`) is not a translation unit: it is skipped and
//! counted in a note on stderr (no report entry), as headers are not taken at all. A bad file (unreadable, syntax
//! error, bad configuration) is reported and the others still run. The exit code is the most
//! severe of the files' codes ([`severity`]).
//!
//! **Invariant:** the report goes to stdout or `--output FILE` only; diagnostics go to stderr.

use super::compdb;
use super::config::{self, Config, Settings};
use super::files;
use super::{FileArgs, Format, EXIT_INPUT, EXIT_INTERNAL};
use crate::report::sarif;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The exit codes from least to most severe: a single code for several files is the most
/// severe of theirs. Failures to analyse come first (input errors, then internal errors), then
/// results that need work by hand (unfixable), then unknown results (incomplete), then bugs
/// found or fixes not written, then success.
pub const SEVERITY: [i32; 6] = [0, 1, 4, 2, 5, 3];

/// The rank of an exit code in [`SEVERITY`] (unknown codes rank highest).
pub fn severity(code: i32) -> usize {
    SEVERITY
        .iter()
        .position(|&c| c == code)
        .unwrap_or(SEVERITY.len())
}

/// The more severe of two exit codes.
pub fn worse(a: i32, b: i32) -> i32 {
    if severity(b) > severity(a) {
        b
    } else {
        a
    }
}

/// The options shared by `check` and `fix` that are not per-file settings.
pub struct Batch<'a> {
    pub paths: &'a [PathBuf],
    /// The path is `-`: the source is standard input, named this.
    pub stdin: Option<PathBuf>,
    pub format: Format,
    pub output: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub no_config: bool,
    /// Separate text sections by a blank line (`check`; `fix` prints diffs, which concatenate).
    pub separate_sections: bool,
    /// `--pre-commit`: the named files are treated as found in a directory (a pre-commit
    /// hook passes every staged file): `exclude` applies to them and a file without `main`
    /// is skipped with a note instead of being an error.
    pub pre_commit: bool,
}

/// Stderr that also keeps what one file wrote, for SARIF notifications.
struct Tee {
    captured: Vec<u8>,
}

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.captured.extend_from_slice(buf);
        std::io::stderr().write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Where the report goes: stdout as it is produced, or a buffer written to `--output` at
/// the end.
struct Sink {
    buffer: Option<Vec<u8>>,
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) {
        match &mut self.buffer {
            Some(b) => b.extend_from_slice(bytes),
            None => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(bytes);
                let _ = out.flush();
            }
        }
    }
}

/// The JSON entry of a file that could not be analysed: `{"file", "error": {"kind",
/// "message", "line", "column"}}` (kind `input` for exit code 3, `internal` for 5).
#[derive(serde::Serialize)]
struct FileError<'a> {
    file: &'a str,
    error: ErrorJson,
}

#[derive(serde::Serialize)]
struct ErrorJson {
    kind: &'static str,
    message: String,
    line: usize,
    column: usize,
}

/// The JSON entry of `file`, which could not be analysed: `said` is what it wrote on stderr
/// (its first diagnostic gives the position and the message).
fn error_entry(file: &str, kind: &'static str, said: &str) -> String {
    let (line, column, first) = super::render::rendered_error(file, said).unwrap_or_else(|| {
        let first = said
            .lines()
            .find(|l| !l.contains(": note: ") && !l.contains(": warning: "))
            .unwrap_or_default();
        (1, 1, first.to_string())
    });
    let message = if let Some(rest) = first.strip_prefix("error[") {
        // `error[KIND]: message`, as the diagnostics render it.
        rest.split_once("]: ")
            .map_or(rest, |(_, m)| m)
            .trim()
            .to_string()
    } else {
        first
            .strip_prefix(file)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|rest| {
                // `LINE:COLUMN: message`, or `message` alone.
                let mut parts = rest.splitn(3, ':');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(l), Some(c), Some(m))
                        if l.parse::<usize>().is_ok() && c.parse::<usize>().is_ok() =>
                    {
                        m.trim().to_string()
                    }
                    _ => rest.trim().to_string(),
                }
            })
            .unwrap_or_else(|| first.trim().to_string())
    };
    let message = message
        .strip_prefix("error: ")
        .map_or(message.clone(), str::to_string);
    let entry = FileError {
        file,
        error: ErrorJson {
            kind,
            message,
            line,
            column,
        },
    };
    serde_json::to_string_pretty(&entry).unwrap_or_default()
}

/// What the run on one file ended with: its exit code and, where the code alone does not say
/// it (`relax`'s exit 1 is a relaxation to apply or a bug), the outcome the summary names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub code: i32,
    pub outcome: Option<&'static str>,
}

impl From<i32> for Done {
    fn from(code: i32) -> Done {
        Done {
            code,
            outcome: None,
        }
    }
}

/// The one-file command: its arguments, its merged settings, stdout (a buffer) and stderr;
/// returns its exit code (and outcome).
pub type OneFile<'a> = dyn FnMut(&FileArgs, &Settings, &mut dyn Write, &mut dyn Write) -> Done + 'a;

/// Runs `one` on every input; `cli` holds the settings given on the command line. Returns
/// the exit code.
pub fn run(batch: &Batch, cli: &Config, one: &mut OneFile) -> i32 {
    let mut stderr = std::io::stderr();
    let mut code = 0;
    let inputs = inputs_of(batch);
    let mut report = Report::new(batch);
    for e in &inputs.errors {
        let said = format!("{}: error: {}", e.path, e.message);
        let _ = writeln!(stderr, "{said}");
        report.json_items.push(error_entry(&e.path, "input", &said));
        code = worse(code, EXIT_INPUT);
    }
    if output_is_input(batch, &inputs) {
        return EXIT_INPUT;
    }
    let mut finder = config::Finder::new(batch.config, batch.no_config);
    let mut reported_configs: Vec<PathBuf> = Vec::new();
    let mut compdbs = compdb::Databases::default();
    let mut skipped: Vec<String> = Vec::new();
    let mut excluded: Vec<String> = Vec::new();
    let mut done: Vec<Done> = Vec::new();
    for file in &inputs.files {
        let name = file.to_string_lossy().into_owned();
        let found = finder.for_file(file);
        let cfg = match &found {
            None => None,
            Some((path, loaded)) => match loaded.as_ref() {
                Ok(c) => Some(c),
                Err(e) => {
                    // Said once per configuration file; every file it governs is skipped.
                    if !reported_configs.contains(path) {
                        let _ = writeln!(stderr, "{e}");
                        reported_configs.push(path.clone());
                    }
                    let _ = writeln!(
                        stderr,
                        "{name}:1:1: error: not analysed: its configuration {} is invalid",
                        e.path
                    );
                    code = worse(code, EXIT_INPUT);
                    done.push(EXIT_INPUT.into());
                    report.bad_config(&name, e);
                    continue;
                }
            },
        };
        // Standard input is never searched for: `exclude` and the skip of library files
        // apply to files found in a directory or passed by a pre-commit hook.
        let searched = batch.stdin.is_none() && (inputs.walked(file) || batch.pre_commit);
        if searched && cfg.is_some_and(|c| c.excludes(file)) {
            excluded.push(name);
            continue;
        }
        let settings = Settings::for_file(cli, cfg, file);
        let args = file_args(batch, file, &settings, &mut compdbs);
        if searched && !translation_unit(&args) {
            skipped.push(name);
            continue;
        }
        let mut out = Vec::new();
        let mut err = Tee {
            captured: Vec::new(),
        };
        let d = one(&args, &settings, &mut out, &mut err);
        let c = d.code;
        super::progress::next_file();
        done.push(d);
        code = worse(code, c);
        report.add(&name, c, &out, &err.captured);
    }
    say_excluded(&excluded);
    let total = inputs.files.len() - excluded.len();
    code = worse(code, say_skipped(&skipped, total));
    let several = inputs.files.len() > 1 || batch.paths.iter().any(|p| p.is_dir());
    if several && batch.format == Format::Text && !super::render::options().quiet {
        let fix = !batch.separate_sections;
        let _ = writeln!(stderr, "{}", super::render::summary(&done, fix));
    }
    write_out(batch, report, code)
}

/// Finishes the report (stdout, or `--output`'s file); returns the exit code, worse when the
/// report file cannot be written.
fn write_out(batch: &Batch, report: Report, code: i32) -> i32 {
    let buffer = report.finish(code);
    if let (Some(path), Some(buffer)) = (batch.output, buffer) {
        if let Err(e) = write_report(path, &buffer) {
            let _ = writeln!(
                std::io::stderr(),
                "{}:1:1: error: cannot write the report: {e}",
                path.to_string_lossy()
            );
            return worse(code, EXIT_INPUT);
        }
    }
    code
}

/// The files to process: standard input's name, or the paths expanded.
fn inputs_of(batch: &Batch) -> files::Inputs {
    match &batch.stdin {
        Some(name) => files::Inputs {
            files: vec![name.clone()],
            errors: Vec::new(),
            named: std::collections::HashSet::from([name.clone()]),
        },
        None => files::collect(batch.paths),
    }
}

/// Whether `--output` names an input (said on stderr): the report must never replace a
/// program it is about.
fn output_is_input(batch: &Batch, inputs: &files::Inputs) -> bool {
    let Some(output) = batch.output else {
        return false;
    };
    let target = output.canonicalize().ok();
    if target.is_some() && inputs.files.iter().any(|f| f.canonicalize().ok() == target) {
        let _ = writeln!(
            std::io::stderr(),
            "{}:1:1: error: --output names an input file; the report would replace it",
            output.to_string_lossy()
        );
        return true;
    }
    false
}

/// The one-file arguments of `file` under its merged `settings`.
fn file_args(
    batch: &Batch,
    file: &Path,
    settings: &Settings,
    compdbs: &mut compdb::Databases,
) -> FileArgs {
    FileArgs {
        file: file.to_path_buf(),
        stdin: batch.stdin.is_some(),
        lang: settings.lang,
        model: settings.model,
        format: batch.format,
        max_executions: settings.max_executions,
        timeout: settings.timeout,
        unroll: settings.unroll,
        accept_bound: settings.accept_bound,
        spurious_cas: settings.spurious_cas,
        leaks: settings.leaks,
        liveness: settings.liveness,
        equiv: settings.equiv,
        jobs: settings.jobs,
        defines: settings.defines.clone(),
        pp: compdb::options_for(file, settings, compdbs),
    }
}

/// The report of one call, assembled file by file.
struct Report {
    format: Format,
    separate_sections: bool,
    sink: Sink,
    /// `json`: the files' objects, in order.
    json_items: Vec<String>,
    /// `sarif`: the files' parts.
    sarif_runs: Vec<sarif::FileRun>,
    /// Text sections written so far.
    sections: usize,
}

impl Report {
    fn new(batch: &Batch) -> Report {
        Report {
            format: batch.format,
            separate_sections: batch.separate_sections,
            sink: Sink {
                buffer: batch.output.map(|_| Vec::new()),
            },
            json_items: Vec::new(),
            sarif_runs: Vec::new(),
            sections: 0,
        }
    }

    /// A file not analysed because its configuration is invalid.
    fn bad_config(&mut self, name: &str, e: &config::ConfigError) {
        let said = format!(
            "{name}:1:1: error: not analysed: its configuration is invalid: {}:{}:{}: {}",
            e.path, e.line, e.column, e.message
        );
        self.json_items.push(error_entry(name, "input", &said));
        self.sarif_runs.push(sarif::FileRun {
            results: Vec::new(),
            notifications: vec![sarif::notification(
                "error",
                &e.path,
                e.line,
                e.column,
                e.message.clone(),
            )],
        });
    }

    /// What the one-file command on `name` wrote (`out`; `said`: its stderr) and its code.
    fn add(&mut self, name: &str, code: i32, out: &[u8], said: &[u8]) {
        let failed = code == EXIT_INPUT || code == EXIT_INTERNAL;
        match self.format {
            Format::Text | Format::Dot => {
                if !out.is_empty() {
                    let text = self.format == Format::Text;
                    if self.sections > 0 && self.separate_sections && text {
                        self.sink.write(b"\n");
                    }
                    self.sink.write(out);
                    self.sections += 1;
                }
            }
            Format::Json => {
                let text = String::from_utf8_lossy(out);
                let text = text.trim_end();
                if !text.is_empty() {
                    self.json_items.push(text.to_string());
                } else if failed {
                    let kind = if code == EXIT_INPUT {
                        "input"
                    } else {
                        "internal"
                    };
                    let said = String::from_utf8_lossy(said);
                    self.json_items.push(error_entry(name, kind, &said));
                }
            }
            Format::Sarif => {
                let mut run: sarif::FileRun = serde_json::from_slice(out).unwrap_or_default();
                if failed {
                    let said = String::from_utf8_lossy(said);
                    let (line, column, text) = super::render::rendered_error(name, &said)
                        .unwrap_or_else(|| (1, 1, said.trim_end().to_string()));
                    let n = sarif::notification("error", name, line, column, text);
                    run.notifications.push(n);
                }
                self.sarif_runs.push(run);
            }
        }
    }

    /// Writes the JSON or SARIF document (`code`: the call's exit code so far); returns the
    /// buffer for `--output`.
    fn finish(mut self, code: i32) -> Option<Vec<u8>> {
        match self.format {
            Format::Json => {
                let items: Vec<String> = self
                    .json_items
                    .iter()
                    .map(|item| {
                        item.lines()
                            .map(|l| format!("  {l}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .collect();
                let doc = if items.is_empty() {
                    "[]\n".to_string()
                } else {
                    format!("[\n{}\n]\n", items.join(",\n"))
                };
                self.sink.write(doc.as_bytes());
            }
            Format::Sarif => {
                let root = std::env::current_dir().ok().map(|d| {
                    format!(
                        "{}/",
                        sarif::uri(&d.to_string_lossy()).trim_end_matches('/')
                    )
                });
                let successful = severity(code) < severity(EXIT_INTERNAL);
                let doc = sarif::log(self.sarif_runs, root, successful);
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
                self.sink.write(text.as_bytes());
                self.sink.write(b"\n");
            }
            Format::Text | Format::Dot => {}
        }
        self.sink.buffer
    }
}

/// Whether the file found in a directory is a translation unit (defines `main` or
/// `user_main` after preprocessing with its options); an unreadable file counts as one, so
/// that its error is reported.
fn translation_unit(args: &FileArgs) -> bool {
    let Ok(text) = std::fs::read_to_string(&args.file) else {
        return true;
    };
    let name = args.file.to_string_lossy();
    let lang = args.lang.resolve_with(&args.file, args.pp.std);
    let loader = crate::frontend::preprocess::Disk;
    crate::frontend::is_translation_unit(&name, &text, lang, &args.defines, &args.pp, &loader)
}

/// The note on stderr about the files an `exclude` of fensyn.toml skipped (a count, then
/// their names): an excluded file is not checked, and the run says so.
fn say_excluded(excluded: &[String]) {
    if excluded.is_empty() {
        return;
    }
    let n = excluded.len();
    let _ = writeln!(
        std::io::stderr(),
        "note: {n} file{} excluded by `exclude` in fensyn.toml: {}",
        if n == 1 { "" } else { "s" },
        excluded.join(", ")
    );
}

/// The note on stderr about the files of directories that are not translation units (a
/// count, then their names); an input error when they were all the files there were.
fn say_skipped(skipped: &[String], total: usize) -> i32 {
    if skipped.is_empty() {
        return 0;
    }
    let n = skipped.len();
    let files = if n == 1 { "file" } else { "files" };
    let mut stderr = std::io::stderr();
    let _ = writeln!(
        stderr,
        "note: {n} {files} without `main` skipped (not translation units: they are read \
         through the files that include them): {}",
        skipped.join(", ")
    );
    if n < total || total == 0 {
        return 0;
    }
    let _ = writeln!(
        stderr,
        "error: no translation units to check (no file defines `main` or `user_main`)"
    );
    EXIT_INPUT
}

/// Writes a report file atomically (through a temporary file and a rename, the one atomic
/// write: [`super::write::replace`]), so a reader never sees half a report.
fn write_report(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    super::write::replace(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_severe_code_wins() {
        assert_eq!(worse(0, 1), 1);
        assert_eq!(worse(1, 4), 4);
        assert_eq!(worse(4, 2), 2);
        assert_eq!(worse(2, 5), 5);
        assert_eq!(worse(5, 3), 3);
        assert_eq!(worse(3, 0), 3);
        assert_eq!(worse(1, 0), 1);
        assert_eq!([0, 1, 4, 2, 5, 3].into_iter().fold(0, worse), 3);
        assert_eq!([1, 2, 4].into_iter().fold(0, worse), 2);
    }

    #[test]
    fn diagnostics_give_their_position() {
        use super::super::render::rendered_error;
        let t = "d/a.c:3:7: note: x\nd/a.c:4:5: unsupported: goto\n";
        assert_eq!(
            rendered_error("d/a.c", t),
            Some((4, 5, "d/a.c:4:5: unsupported: goto".into()))
        );
        let t = "error[unsupported]: computed goto\n --> d/a.c:4:5\n  |\n";
        assert_eq!(
            rendered_error("d/a.c", t),
            Some((4, 5, "error[unsupported]: computed goto".into()))
        );
        assert_eq!(rendered_error("d/a.c", "d/a.c: error\n"), None);
    }
}
