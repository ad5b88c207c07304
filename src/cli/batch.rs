//! Runs `check` or `fix` over every input of one call and assembles the report.
//!
//! Per input file: find its configuration ([`config::Finder`]), merge it with the command line
//! into [`Settings`], run the one-file command into a buffer, and add the buffer to the report:
//!
//! * `text`, `dot`: the buffers one after the other (for `check` text, a blank line between
//!   two files' sections); streamed to stdout file by file;
//! * `json`: the file's object when the call named exactly one file (not a directory), else a
//!   JSON array of the files' objects, in processing order;
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
    pub format: Format,
    pub output: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub no_config: bool,
    /// Separate text sections by a blank line (`check`; `fix` prints diffs, which concatenate).
    pub separate_sections: bool,
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

/// The one-file command: its arguments, its merged settings, stdout (a buffer) and stderr;
/// returns its exit code.
pub type OneFile<'a> = dyn FnMut(&FileArgs, &Settings, &mut dyn Write, &mut dyn Write) -> i32 + 'a;

/// Runs `one` on every input; `cli` holds the settings given on the command line. Returns
/// the exit code.
pub fn run(batch: &Batch, cli: &Config, one: &mut OneFile) -> i32 {
    let mut stderr = std::io::stderr();
    let mut code = 0;
    let inputs = files::collect(batch.paths);
    for e in &inputs.errors {
        let _ = writeln!(stderr, "{}: error: {}", e.path, e.message);
        code = worse(code, EXIT_INPUT);
    }
    if let Some(output) = batch.output {
        // The report must never replace a program it is about.
        let target = output.canonicalize().ok();
        if target.is_some() && inputs.files.iter().any(|f| f.canonicalize().ok() == target) {
            let _ = writeln!(
                stderr,
                "{}:1:1: error: --output names an input file; the report would replace it",
                output.to_string_lossy()
            );
            return EXIT_INPUT;
        }
    }
    let mut finder = config::Finder::new(batch.config, batch.no_config);
    let single = batch.paths.len() == 1 && !batch.paths[0].is_dir();
    let mut sink = Sink {
        buffer: batch.output.map(|_| Vec::new()),
    };
    let mut json_items: Vec<String> = Vec::new();
    let mut sarif_runs: Vec<sarif::FileRun> = Vec::new();
    let mut reported_configs: Vec<PathBuf> = Vec::new();
    let mut compdbs = compdb::Databases::default();
    let mut sections = 0usize;
    let mut skipped: Vec<String> = Vec::new();
    let mut codes: Vec<i32> = Vec::new();
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
                    sarif_runs.push(sarif::FileRun {
                        results: Vec::new(),
                        notifications: vec![sarif::notification(
                            "error",
                            &e.path,
                            e.line,
                            e.column,
                            e.message.clone(),
                        )],
                    });
                    continue;
                }
            },
        };
        let settings = Settings::resolve(cli, cfg);
        let args = FileArgs {
            file: file.clone(),
            lang: settings.lang,
            model: settings.model,
            format: batch.format,
            max_executions: settings.max_executions,
            timeout: settings.timeout,
            unroll: settings.unroll,
            spurious_cas: settings.spurious_cas,
            leaks: settings.leaks,
            liveness: settings.liveness,
            equiv: settings.equiv,
            jobs: settings.jobs,
            defines: settings.defines.clone(),
            pp: compdb::options_for(file, &settings, &mut compdbs),
        };
        if inputs.walked(file) && !translation_unit(&args) {
            skipped.push(name);
            continue;
        }
        let mut out = Vec::new();
        let mut err = Tee {
            captured: Vec::new(),
        };
        let c = one(&args, &settings, &mut out, &mut err);
        super::progress::next_file();
        codes.push(c);
        code = worse(code, c);
        match batch.format {
            Format::Text | Format::Dot => {
                if !out.is_empty() {
                    if sections > 0 && batch.separate_sections && batch.format == Format::Text {
                        sink.write(b"\n");
                    }
                    sink.write(&out);
                    sections += 1;
                }
            }
            Format::Json => {
                let text = String::from_utf8_lossy(&out);
                let text = text.trim_end();
                if !text.is_empty() {
                    json_items.push(text.to_string());
                }
            }
            Format::Sarif => {
                let mut run: sarif::FileRun = serde_json::from_slice(&out).unwrap_or_default();
                if c == EXIT_INPUT || c == EXIT_INTERNAL {
                    let said = String::from_utf8_lossy(&err.captured);
                    let (line, column, text) = super::render::rendered_error(&name, &said)
                        .unwrap_or_else(|| (1, 1, said.trim_end().to_string()));
                    run.notifications
                        .push(sarif::notification("error", &name, line, column, text));
                }
                sarif_runs.push(run);
            }
        }
    }
    code = worse(code, say_skipped(&skipped, inputs.files.len()));
    let several = inputs.files.len() > 1 || batch.paths.iter().any(|p| p.is_dir());
    if several && batch.format == Format::Text && !super::render::options().quiet {
        let fix = !batch.separate_sections;
        let _ = writeln!(stderr, "{}", super::render::summary(&codes, fix));
    }
    match batch.format {
        Format::Json => {
            let doc = if single && json_items.len() <= 1 {
                json_items.pop().map(|s| s + "\n").unwrap_or_default()
            } else {
                let items: Vec<String> = json_items
                    .iter()
                    .map(|item| {
                        item.lines()
                            .map(|l| format!("  {l}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .collect();
                if items.is_empty() {
                    "[]\n".to_string()
                } else {
                    format!("[\n{}\n]\n", items.join(",\n"))
                }
            };
            sink.write(doc.as_bytes());
        }
        Format::Sarif => {
            let root = std::env::current_dir().ok().map(|d| {
                format!(
                    "{}/",
                    sarif::uri(&d.to_string_lossy()).trim_end_matches('/')
                )
            });
            let successful = severity(code) < severity(EXIT_INTERNAL);
            let doc = sarif::log(sarif_runs, root, successful);
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            sink.write(text.as_bytes());
            sink.write(b"\n");
        }
        Format::Text | Format::Dot => {}
    }
    if let (Some(path), Some(buffer)) = (batch.output, sink.buffer) {
        if let Err(e) = write_report(path, &buffer) {
            let _ = writeln!(
                stderr,
                "{}:1:1: error: cannot write the report: {e}",
                path.to_string_lossy()
            );
            code = worse(code, EXIT_INPUT);
        }
    }
    code
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
    if n < total {
        return 0;
    }
    let _ = writeln!(
        stderr,
        "error: no translation units to check (no file defines `main` or `user_main`)"
    );
    EXIT_INPUT
}

/// Writes a report file through a temporary file in the same directory and a rename, so a
/// reader never sees half a report.
fn write_report(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = super::write::temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
