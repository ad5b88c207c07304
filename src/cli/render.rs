//! How the CLI draws its text output: colour (`--color`, `NO_COLOR`), `--quiet`,
//! `--verbose`, input errors as diagnostics with the source line and a caret, and the summary
//! across files.
//!
//! The options are process-wide: [`init`] sets them once from the command line, before any
//! file is processed; the one-file commands read them with [`options`]. The renderings
//! themselves are in `report::diagnostic`; this module only decides where they go and how.

use super::{CommonArgs, Out};
use crate::checker::Stats;
use crate::frontend::{DiagKind, Diagnostic};
use crate::report::diagnostic::{self, Files};
use clap::ValueEnum;
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::Duration;

impl super::Command {
    /// The options shared by the commands that take files (not `man`).
    pub fn common(&self) -> Option<&CommonArgs> {
        match self {
            super::Command::Check { common, .. }
            | super::Command::Fix { common, .. }
            | super::Command::Robust { common } => Some(common),
            super::Command::Explain(args) => Some(&args.common),
            super::Command::Relax(args) => Some(&args.common),
            super::Command::Man { .. } => None,
        }
    }
}

/// `--color`: when to colour the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When the output is a terminal and `NO_COLOR` is not set.
    Auto,
    Always,
    Never,
}

/// The drawing options of this run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Colour the report (stdout, or `--output`).
    pub color_out: bool,
    /// Colour the diagnostics on stderr.
    pub color_err: bool,
    pub quiet: bool,
    pub verbose: bool,
}

static OPTIONS: OnceLock<Options> = OnceLock::new();

/// Whether `NO_COLOR` asks for no colour (set and not empty, as no-color.org says).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// The options of `common`, given whether stdout and stderr are terminals.
pub fn decide(common: &CommonArgs, out_tty: bool, err_tty: bool) -> Options {
    let colour = |tty: bool| match common.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => tty && !no_color(),
    };
    Options {
        color_out: colour(out_tty && common.output.is_none()),
        color_err: colour(err_tty),
        quiet: common.quiet,
        verbose: common.verbose,
    }
}

/// Sets this run's options from the command line and installs the progress display and the
/// Ctrl-C handler. Called once, before the first file.
pub fn init(common: &CommonArgs) {
    let err_tty = std::io::stderr().is_terminal();
    let o = decide(common, std::io::stdout().is_terminal(), err_tty);
    let _ = OPTIONS.set(o);
    super::progress::install(err_tty && !o.quiet);
}

/// This run's options (plain, not quiet, not verbose when [`init`] was not called, as in the
/// library's tests).
pub fn options() -> Options {
    OPTIONS.get().copied().unwrap_or_default()
}

/// The report style of `check` and the other text reports.
pub fn text_style() -> crate::report::TextStyle {
    let o = options();
    crate::report::TextStyle {
        color: o.color_out,
        quiet: o.quiet,
    }
}

/// An input error (exit code 3) on stderr: `error[KIND]: message`, `--> file:line:col`, and
/// the source line with a caret when `src` is the file's text.
pub fn input_error(
    err: Out,
    (file, src): (&str, Option<&str>),
    at: (usize, usize),
    kind: &str,
    message: &str,
) {
    let d = diagnostic::input_error(file, src, at, kind, message);
    let files = Files {
        files: src.map(|s| (file, s)).into_iter().collect(),
    };
    let _ = write!(
        err,
        "{}",
        diagnostic::render(&[d], &files, options().color_err)
    );
}

/// A front-end diagnostic (syntax error, unsupported construct, invalid program) of the file
/// `name` whose text is `src`.
pub fn frontend_error(err: Out, name: &str, src: &str, d: &Diagnostic) {
    let kind = match d.kind {
        DiagKind::Syntax => "syntax",
        DiagKind::Unsupported => "unsupported",
        DiagKind::Error | DiagKind::Warning => "input",
    };
    // A diagnostic about a header names it: its text is not at hand here.
    let text = (d.file == name).then_some(src);
    input_error(err, (&d.file, text), (d.line, d.column), kind, &d.message);
}

/// `--verbose`: what the exploration of `file` did and how long it took, on stderr.
pub fn verbose_stats(err: Out, file: &str, stats: &Stats, elapsed: Duration) {
    if !options().verbose {
        return;
    }
    let secs = elapsed.as_secs_f64();
    let total = crate::report::explored(stats);
    let _ = writeln!(
        err,
        "{file}: explored {total} executions ({} complete, {} pruned at a wait, {} cut at the \
         loop bound) through {} partial graphs, {} revisits, {} dead ends in {secs:.3} s \
         ({:.0} executions/s)",
        stats.executions,
        stats.blocked,
        stats.bounded,
        stats.states,
        stats.revisits,
        stats.dead_ends,
        total as f64 / secs.max(1e-6)
    );
}

/// What one file's exit code says about it, for the summary across files.
fn outcome(code: i32, fix: bool) -> &'static str {
    use super::*;
    match code {
        EXIT_OK if fix => "clean or fixed in place",
        EXIT_OK => "clean",
        EXIT_BUG if fix => "with a fix",
        EXIT_BUG => "buggy",
        EXIT_UNFIXABLE => "not fixable with fences",
        EXIT_INPUT => "not analysed",
        EXIT_INCOMPLETE => "incomplete",
        _ => "internal error",
    }
}

/// The end-of-run summary of a command over several files: `3 files checked: 1 buggy, 1
/// clean, 1 not analysed` (`fix`: `3 files: 1 with a fix, ...`), the outcomes that need
/// attention first; a file whose run named its outcome is counted under that name.
pub fn summary(done: &[super::batch::Done], fix: bool) -> String {
    use super::*;
    let order = [
        EXIT_BUG,
        EXIT_UNFIXABLE,
        EXIT_INCOMPLETE,
        EXIT_OK,
        EXIT_INPUT,
        EXIT_INTERNAL,
    ];
    let rank = |code: i32| order.iter().position(|&c| c == code).unwrap_or(order.len());
    // (rank of the code, outcome, files), in the order outcomes first appear.
    let mut parts: Vec<(usize, &str, usize)> = Vec::new();
    for d in done {
        let label = d.outcome.unwrap_or_else(|| outcome(d.code, fix));
        match parts.iter_mut().find(|p| p.1 == label) {
            Some(p) => p.2 += 1,
            None => parts.push((rank(d.code), label, 1)),
        }
    }
    parts.sort_by_key(|p| p.0);
    let parts: Vec<String> = parts.iter().map(|(_, l, n)| format!("{n} {l}")).collect();
    let files = if done.len() == 1 { "file" } else { "files" };
    let verb = if fix { "" } else { " checked" };
    format!("{} {files}{verb}: {}", done.len(), parts.join(", "))
}

/// The position and message of a diagnostic rendered on stderr about `file` (the first
/// error, not a note): from `error[KIND]: message` and its `--> file:line:col`, or from a
/// plain `file:line:col: kind: message` line.
pub fn rendered_error(file: &str, text: &str) -> Option<(usize, usize, String)> {
    let plain = |l: &str| {
        let rest = l.strip_prefix(file)?.strip_prefix(':')?;
        let mut it = rest.splitn(3, ':');
        let line = it.next()?.parse().ok()?;
        let column = it.next()?.parse().ok()?;
        Some((line, column))
    };
    let mut lines = text.lines().filter(|l| !l.contains(": note: "));
    while let Some(l) = lines.next() {
        if let Some((line, column)) = plain(l) {
            return Some((line, column, l.to_string()));
        }
        if l.starts_with("error[") {
            let at = lines
                .next()
                .map(|l| l.trim_start().trim_start_matches("--> "));
            if let Some((line, column)) = at.and_then(plain) {
                return Some((line, column, l.to_string()));
            }
        }
    }
    None
}
