//! The command line: argument parsing, file IO, output and exit codes.
//!
//! This is the only layer that touches the file system or the process exit code. Exit codes
//! (the CLI contract in README.md):
//!
//! | code | `check`            | `fix`                                        |
//! |------|--------------------|----------------------------------------------|
//! | 0    | no bug             | nothing to fix, or fixed and written         |
//! | 1    | bug found          | a fix was found and not written              |
//! | 2    | —                  | not fixable with fences                      |
//! | 3    | input error        | input error                                  |
//! | 4    | incomplete         | incomplete (a limit was hit)                 |
//! | 5    | internal error     | internal error (a fix failed its re-check)   |
//!
//! `explain` uses `check`'s codes 0, 1, 3, 4 and `fix`'s 2 (see `cli/explain.rs`).
//! With several files the code is the most severe of theirs ([`batch::SEVERITY`]).
//! `batch` runs a command over every input, `files` expands directories, `config` reads
//! `fensyn.toml`, `man` writes the manual pages.

mod batch;
mod compdb;
pub mod config;
pub mod files;
mod man;

mod clock;
mod progress;
mod prove;
pub mod render;
mod robust;
mod write;

pub use write::{write_atomically, WriteError};

use crate::checker::{self, CheckOptions, Equiv, Goal, Limits, Model};
use crate::frontend;
use crate::ir::{Lang, MemOrder, Program};
use crate::report::{self, sarif, CheckJson, FixJson, Timings, Verified};
use crate::rewrite::{self, Position};
use crate::synth::{self, Cost, Mode, Outcome};
use crate::trace;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod explain;

pub const EXIT_OK: i32 = 0;
pub const EXIT_BUG: i32 = 1;
pub const EXIT_UNFIXABLE: i32 = 2;
pub const EXIT_INPUT: i32 = 3;
pub const EXIT_INCOMPLETE: i32 = 4;
pub const EXIT_INTERNAL: i32 = 5;

#[derive(Parser, Debug)]
#[command(
    name = "fensyn",
    version,
    about = "Repairs concurrent C and C++ programs with the fewest, weakest C11 fences",
    long_about = "fensyn explores every execution of a C or C++ program with threads and \
                  atomics (<stdatomic.h>, std::atomic) under a weak memory model (RC11 by \
                  default), finds the executions that fail an assertion or race, and inserts \
                  the cheapest set of fences (atomic_thread_fence, std::atomic_thread_fence) \
                  that removes them all. The fix is re-checked and shown as a unified diff.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// The first buggy execution as a Graphviz graph (`check` and `explain`).
    Dot,
    /// SARIF 2.1.0, for code scanning; `fix` adds the fences as SARIF fixes.
    Sarif,
}

const EXAMPLES: &str = "Examples:
  fensyn check litmus/sb.c
      explore every execution, report the bugs
  fensyn fix litmus/sb.c | git apply
      print the fences as a patch and apply it
  fensyn fix --write src/ tests/
      fix every C and C++ file under two directories
  fensyn check --format sarif -o fensyn.sarif .
      a SARIF report for code scanning

Defaults come from the nearest fensyn.toml (see --config); options given here win.";

const CHECK_EXAMPLES: &str = "Examples:
  fensyn check sb.c
      report assertion failures and data races
  fensyn check --model sc --first sb.c
      under sequential consistency, stop at the first bug
  fensyn check a.c b.cpp dir/
      several files; the exit code is the most severe one
  fensyn check --format json -o report.json dir/
      a JSON array, one object per file

Exit codes: 0 no bug, 1 bug found, 3 input error, 4 incomplete, 5 internal error.";

const FIX_EXAMPLES: &str = "Examples:
  fensyn fix sb.c | git apply
      print the fences as a unified diff and apply it
  fensyn fix --write sb.c
      rewrite the file (atomically, after a re-check)
  fensyn fix --cost armv8 --mode optimal sb.c
      minimise the price of the fences on ARMv8
  fensyn fix --write --exit-non-zero-on-fix src/
      as a pre-commit hook: fail when a file was written

Exit codes: 0 nothing to fix, or fixed and written; 1 fix found and not written (or written,
with --exit-non-zero-on-fix); 2 not fixable with fences; 3 input error; 4 incomplete;
5 internal error.";

/// The `--lang` option: the source language, or `auto` to go by the file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// C++ for `.cpp .cc .cxx .c++ .hpp .hh .C`, C otherwise.
    Auto,
    C,
    #[value(name = "c++")]
    Cpp,
}

impl LangArg {
    /// The language to parse `path` as.
    pub fn resolve(self, path: &Path) -> Lang {
        match self {
            LangArg::Auto => Lang::from_path(path),
            LangArg::C => Lang::C,
            LangArg::Cpp => Lang::Cpp,
        }
    }

    /// The language of `path`: `--lang` when given, else the standard's (`--std`,
    /// compile_commands.json), else the extension's.
    pub fn resolve_with(self, path: &Path, std: Option<crate::ir::LangStd>) -> Lang {
        match (self, std) {
            (LangArg::Auto, Some(s)) => s.lang,
            _ => self.resolve(path),
        }
    }
}

/// The options given on the command line. The per-file settings are `Option`s: `None` when
/// not given, so that `fensyn.toml` can supply them (see [`config::Settings::resolve`]); the
/// defaults are said in the help text.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// C or C++ files, or directories: searched recursively for .c .cc .cpp .cxx .c++ .C files
    /// (not headers), skipping hidden files and what .gitignore or .ignore exclude.
    #[arg(required = true, value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Source language (auto: by the file extension) [default: auto]
    #[arg(long, value_enum)]
    pub lang: Option<LangArg>,
    /// Memory model to check against [default: rc11]
    #[arg(long, value_enum)]
    pub model: Option<Model>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report (what goes to stdout) to FILE instead.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Take the settings from FILE instead of the nearest fensyn.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Ignore every fensyn.toml.
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,
    /// Stop after this many executions (the result is then incomplete, exit code 4).
    #[arg(long, value_name = "N")]
    pub max_executions: Option<u64>,
    /// Stop after this many seconds (the result is then incomplete, exit code 4).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Loop bound: iterations a loop may run each time a thread enters it (counting `for`
    /// loops with constant bounds run to the end). Executions that need more are cut and
    /// reported [default: 8]
    #[arg(long, value_name = "N")]
    pub unroll: Option<u32>,
    /// Let `compare_exchange_weak` fail spuriously (as C11 allows) even when it reads the
    /// expected value. Off by default: weak CASes then behave like strong ones.
    #[arg(long)]
    pub spurious_cas: bool,
    /// Also report heap objects (`malloc`, `new`) that an execution never frees: memory
    /// error `leak`, at the allocation. Off by default (test harnesses rarely free).
    #[arg(long)]
    pub leaks: bool,
    /// Report a thread that spins forever in an await or spin loop (a flag never set, a lock
    /// never released, a lost wake-up) as error `liveness`, at the loop. On by default in
    /// `check` and `explain`; `fix` looks for them only with this flag (fences cannot make a
    /// flag be set: a liveness bug found is reported as not fixable with fences).
    #[arg(long, overrides_with = "no_liveness")]
    pub liveness: bool,
    /// Do not look for liveness errors (spinning threads end their executions as blocked).
    #[arg(long, overrides_with = "liveness")]
    pub no_liveness: bool,
    /// Which executions count as one when checking (`check`, and `fix`'s re-check of the
    /// fixed program; synthesis always uses graphs): `graph` one per execution graph, `rf` one
    /// per reads-from class, `value` one per vector of values read. rf and value need
    /// sequential consistency (`--model sc`, or an rc11 program whose accesses are all
    /// seq_cst) [default: rf where it applies, else graph]
    #[arg(long, value_enum)]
    pub equiv: Option<checker::Equiv>,
    /// Exploration threads; results and their order do not depend on it [default: the
    /// available cores]
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Define the macro NAME as the integer VALUE (1 when omitted) before the first line, as
    /// a C compiler's -D does (repeatable): sets the parameters of a test written with
    /// `#ifndef N` / `#define N 2` / `#endif`
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]", value_parser = parse_define)]
    pub define: Vec<(String, i64)>,
    /// Search DIR for `#include "..."` and `<...>` headers after the including file's
    /// directory (repeatable; before the `include` directories of fensyn.toml)
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dir: Vec<PathBuf>,
    /// Undefine the macro NAME (after -D and the predefined macros), as a C compiler's -U
    #[arg(short = 'U', long = "undefine", value_name = "NAME")]
    pub undefine: Vec<String>,
    /// The language standard, as a compiler's -std= (c11, gnu17, c++20, ...): the language
    /// (over the file extension and compile_commands.json's) and the value of
    /// __STDC_VERSION__ or __cplusplus
    #[arg(long = "std", value_name = "STD", value_parser = parse_std)]
    pub std: Option<crate::ir::LangStd>,
    /// Take each file's -I, -D, -U from this compile_commands.json (default: the first found
    /// in the file's directory or its parents, or in their build/ subdirectory); files not
    /// in it get the command line's
    #[arg(long, value_name = "PATH")]
    pub compile_commands: Option<PathBuf>,
    /// The values `__VERIFIER_nondet_int()` and the other `__VERIFIER_nondet_*` calls may
    /// return (every one is explored; `__VERIFIER_nondet_bool()` needs none), e.g. `0..2`
    #[arg(long, value_name = "LO..HI", value_parser = parse_nondet)]
    pub nondet: Option<(i64, i64)>,
    /// When to colour the diagnostics: auto (when the output is a terminal and NO_COLOR is
    /// not set), always, never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = render::ColorChoice::Auto)]
    pub color: render::ColorChoice,
    /// Print only the diagnostics (and a fix's patch): no failing execution, no counts, no
    /// summaries, no progress display
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print each exploration's statistics and time on stderr
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// A `--nondet LO..HI` domain (inclusive; at most 4096 values).
fn parse_nondet(arg: &str) -> Result<(i64, i64), String> {
    let (lo, hi) = arg
        .split_once("..")
        .ok_or_else(|| format!("`{arg}` is not a domain `LO..HI`"))?;
    let int = |t: &str| signed_literal(t).map_err(|e| format!("`{}` in --nondet: {e}", t.trim()));
    let (lo, hi) = (int(lo)?, int(hi)?);
    if lo > hi || hi.saturating_sub(lo) >= 4096 {
        return Err(format!(
            "--nondet {arg}: give LO <= HI and at most 4096 values"
        ));
    }
    Ok((lo, hi))
}

/// A `-D NAME[=VALUE]` argument: NAME a C identifier, VALUE an integer literal (decimal, hex,
/// octal or binary, optionally negative; 1 when omitted).
fn parse_define(arg: &str) -> Result<(String, i64), String> {
    let (name, value) = arg.split_once('=').unwrap_or((arg, "1"));
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(format!("`{name}` is not a macro name (a C identifier)"));
    }
    let v = signed_literal(value)
        .map_err(|e| format!("the value of `{name}` must be an integer literal: {e}"))?;
    Ok((name.to_string(), v))
}

/// `--std NAME`: a standard GCC and Clang know.
fn parse_std(arg: &str) -> Result<crate::ir::LangStd, String> {
    crate::ir::LangStd::from_name(arg).ok_or_else(|| {
        format!(
            "`{arg}` is not a C or C++ standard (c99, c11, c17, gnu11, c++11, c++17, c++20, ...)"
        )
    })
}

/// An integer literal of C (decimal, hex, octal, binary, with suffixes), optionally negative.
fn signed_literal(text: &str) -> Result<i64, String> {
    let (negative, digits) = match text.trim().strip_prefix('-') {
        Some(d) => (true, d.trim_start()),
        None => (false, text.trim()),
    };
    let v = frontend::integer_literal(digits)?;
    Ok(if negative { v.wrapping_neg() } else { v })
}

impl CommonArgs {
    /// The settings the command line gives (`None`: not given).
    fn given(&self) -> config::Config {
        config::Config {
            lang: self.lang,
            model: self.model,
            unroll: self.unroll,
            max_executions: self.max_executions,
            timeout: self.timeout,
            spurious_cas: self.spurious_cas.then_some(true),
            leaks: self.leaks.then_some(true),
            liveness: match (self.liveness, self.no_liveness) {
                (_, true) => Some(false),
                (true, _) => Some(true),
                _ => None,
            },
            equiv: self.equiv,
            defines: self
                .define
                .iter()
                .cloned()
                .chain(self.nondet.into_iter().flat_map(frontend::nondet_defines))
                .collect(),
            jobs: self.jobs.map(|j| j as usize),
            include: self.include_dir.clone(),
            undefs: self.undefine.clone(),
            compile_commands: self.compile_commands.clone(),
            std: self.std,
            ..config::Config::default()
        }
    }

    fn batch(&self, separate_sections: bool) -> batch::Batch<'_> {
        batch::Batch {
            paths: &self.files,
            format: self.format,
            output: self.output.as_deref(),
            config: self.config.as_deref(),
            no_config: self.no_config,
            separate_sections,
        }
    }
}

/// The settings of one run on one file, after merging the command line with `fensyn.toml`.
#[derive(Debug, Clone)]
pub struct FileArgs {
    pub file: PathBuf,
    pub lang: LangArg,
    pub model: Model,
    pub format: Format,
    pub max_executions: Option<u64>,
    pub timeout: Option<f64>,
    pub unroll: u32,
    pub spurious_cas: bool,
    pub leaks: bool,
    /// `--liveness` / `--no-liveness` (`None`: on for `check` and `explain`, off for `fix`).
    pub liveness: Option<bool>,
    /// `None`: rf where it is sound, else graph.
    pub equiv: Option<checker::Equiv>,
    pub jobs: usize,
    /// `-D NAME=VALUE` macros.
    pub defines: Vec<(String, i64)>,
    /// `-I`, `-D NAME=TEXT` (from compile_commands.json), `-U`.
    pub pp: crate::ir::PpOptions,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Explore every execution and report assertion failures and data races.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        #[command(flatten)]
        common: CommonArgs,
        /// Stop at the first buggy execution.
        #[arg(long)]
        first: bool,
        /// For each bug, say whether the program, compiled for this machine, can show it
        /// (ranks and explains; hides nothing and keeps the exit code).
        #[arg(long, value_enum, value_name = "MACHINE")]
        on_hardware: Option<report::hardware::Hardware>,
    },
    /// Find the cheapest fences that remove every bug; print them as a diff or write them.
    #[command(after_help = FIX_EXAMPLES)]
    Fix {
        #[command(flatten)]
        common: CommonArgs,
        /// optimal: exact minimum over all buggy executions (FenSyng); fast: one buggy execution
        /// at a time (fastFenSyng: explore up to the first bug, fix it, repeat; never holds
        /// every buggy execution); lazy: the exact minimum again, found in rounds like fast
        /// but re-solved over every round's execution (holds only the executions it met);
        /// auto: optimal, falling back to fast (and saying so) when collecting and solving
        /// take longer than --optimal-timeout [default: auto]
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// Write the fixed program back to FILE (atomically, after it was re-checked).
        #[arg(long)]
        write: bool,
        /// With --write: exit with 1 when a file was written (what pre-commit hooks expect).
        #[arg(long, requires = "write")]
        exit_non_zero_on_fix: bool,
        /// What to minimise: count (new fences, then weight; the thesis's default), weight,
        /// or the price of the instructions compilers emit on x86 or ARMv8 [default: count]
        #[arg(long, value_enum)]
        cost: Option<Cost>,
        /// After a fix, re-check every variant with one fence removed or weakened by one step
        /// and print the evidence that each still has a bug.
        #[arg(long)]
        prove_optimal: bool,
        /// With --mode auto: seconds the optimal search may take before the fast mode is used
        /// [default: 20]
        #[arg(long, value_name = "SECONDS")]
        optimal_timeout: Option<f64>,
        /// Optimal mode: past N distinct requirements (or 10·N buggy executions) stop
        /// collecting them and find the rest in rounds, as --mode lazy does (same minimum,
        /// bounded memory) [default: 1000]
        #[arg(long, value_name = "N")]
        collect_limit: Option<usize>,
        /// What to remove: bugs (failed assertions, races, ...), or sc: every execution that
        /// is not sequentially consistent (robustness; assertions are not needed).
        #[arg(long, value_enum, default_value_t = Goal::Bugs)]
        goal: Goal,
        /// Add the seconds spent in each stage to the JSON output (`timings`; they vary from
        /// run to run, so they are left out unless asked for).
        #[arg(long)]
        timings: bool,
        /// Write inserted fences without the `/* fensyn: orders line A before line B */`
        /// comment.
        #[arg(long)]
        no_comments: bool,
    },
    /// Write the manual pages (roff): fensyn.1 to stdout, or with --dir every page into DIR.
    #[command(hide = true)]
    Man {
        /// Write fensyn.1 and one page per subcommand (fensyn-check.1, ...) into DIR.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Robustness against SC: is every execution under --model sequentially consistent? If
    /// not, show the smallest execution that is not.
    Robust {
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Show the first buggy execution, the fences a fix adds and the cycle each one closes.
    Explain(explain::ExplainArgs),
}

/// Runs the CLI and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    if let Some(common) = cli.command.common() {
        render::init(common);
    }
    match cli.command {
        Command::Check {
            common,
            first,
            on_hardware,
        } => batch::run(
            &common.batch(true),
            &common.given(),
            &mut |file, _, out, err| cmd_check(file, first, on_hardware, out, err),
        ),
        Command::Fix {
            common,
            mode,
            write,
            exit_non_zero_on_fix,
            cost,
            prove_optimal,
            optimal_timeout,
            goal,
            timings,
            no_comments,
            collect_limit,
        } => {
            let given = config::Config {
                mode,
                cost,
                optimal_timeout,
                collect_limit,
                ..common.given()
            };
            batch::run(&common.batch(false), &given, &mut |file, s, out, err| {
                let t = s.optimal_timeout;
                let opts = FixOptions {
                    mode: s.mode,
                    write,
                    exit_non_zero_on_fix,
                    cost: s.cost,
                    prove: prove_optimal,
                    comments: s.comments && !no_comments,
                    goal,
                    timings,
                    optimal_limit: Duration::from_secs_f64(if t.is_finite() && t >= 0.0 {
                        t
                    } else {
                        0.0
                    }),
                    collect_limit: s.collect_limit,
                };
                cmd_fix(file, opts, out, err)
            })
        }
        Command::Robust { common } => batch::run(
            &common.batch(true),
            &common.given(),
            &mut |file, _, out, err| robust::cmd_robust(file, out, err),
        ),
        Command::Explain(args) => batch::run(
            &args.common.batch(true),
            &args.common.given(),
            &mut |file, _, out, err| explain::cmd_explain(&args, file, out, err),
        ),
        Command::Man { dir } => man::run(dir.as_deref()),
    }
}

type Out<'a> = &'a mut dyn std::io::Write;

fn display_path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Reads and parses the input; on failure prints the diagnostic.
fn load(
    path: &Path,
    lang: LangArg,
    (defines, pp): (&[(String, i64)], &crate::ir::PpOptions),
    err: Out,
) -> Result<(String, Program), i32> {
    let name = display_path(path);
    let src = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                let bytes = e.as_bytes();
                let at = e.utf8_error().valid_up_to();
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                let column = at
                    - bytes[..at]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1)
                    + 1;
                let text = String::from_utf8_lossy(bytes);
                let msg = "the file is not valid UTF-8";
                render::input_error(err, (&name, Some(&text)), (line, column), "input", msg);
                return Err(EXIT_INPUT);
            }
        },
        Err(e) => {
            let msg = format!("cannot read file: {e}");
            render::input_error(err, (&name, None), (1, 1), "input", &msg);
            return Err(EXIT_INPUT);
        }
    };
    let loader = frontend::preprocess::Disk;
    let lang = lang.resolve_with(path, pp.std);
    match frontend::parse_unit(&name, &src, lang, defines, pp, &loader) {
        Ok(p) => {
            for n in &p.notes {
                let kind = if n.warning { "warning" } else { "note" };
                let file = n.file.as_deref().unwrap_or(&name);
                let _ = writeln!(
                    err,
                    "{file}:{}:{}: {kind}: {}",
                    n.span.line, n.span.column, n.message
                );
            }
            Ok((src, p))
        }
        Err(d) => {
            render::frontend_error(err, &name, &src, &d);
            Err(EXIT_INPUT)
        }
    }
}

fn limits(common: &FileArgs) -> Limits {
    Limits {
        max_executions: common.max_executions,
        deadline: common
            .timeout
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(|t| Instant::now() + Duration::from_secs_f64(t)),
        unroll: Some(common.unroll),
        spurious_cas: common.spurious_cas,
        leaks: common.leaks,
        liveness: common.liveness.unwrap_or(true),
        progress: Some(progress::start(&display_path(&common.file))),
        jobs: common.jobs,
        ..Limits::default()
    }
}

/// For a command that needs every execution graph (`why` says what it does): an error (exit 3)
/// when `--equiv rf|value` was asked for.
fn needs_graphs(common: &FileArgs, why: &str, err: Out) -> Result<(), i32> {
    match common.equiv {
        Some(e @ (checker::Equiv::Rf | checker::Equiv::Value)) => {
            let _ = writeln!(
                err,
                "{}:1:1: error: {why}: it needs every execution graph; use --equiv graph, not {}",
                display_path(&common.file),
                e.as_str()
            );
            Err(EXIT_INPUT)
        }
        _ => Ok(()),
    }
}

/// The equivalence and model a check explores with (`asked`: `--equiv`, `None` for the
/// rf where it is sound, else graph); an equivalence the model cannot use is an input error (exit 3).
fn explored_as(
    prog: &Program,
    common: &FileArgs,
    asked: Option<checker::Equiv>,
    name: &str,
    err: Out,
) -> Result<report::ExploredAs, i32> {
    match checker::resolve_equiv(prog, common.model, asked) {
        Ok((model, equiv)) => Ok(report::ExploredAs { equiv, model }),
        Err(e) => {
            let (line, column) = e
                .stmt
                .map(|s| (prog.stmts[s].span.line, prog.stmts[s].span.column))
                .unwrap_or((1, 1));
            let _ = writeln!(err, "{name}:{line}:{column}: error: {}", e.message);
            Err(EXIT_INPUT)
        }
    }
}

/// Removes the progress display of the exploration that ended, if one was drawn.
fn clear_progress() {
    progress::finish();
}

fn cmd_check(
    common: &FileArgs,
    first: bool,
    on_hardware: Option<report::hardware::Hardware>,
    out: Out,
    err: Out,
) -> i32 {
    if on_hardware.is_some() && common.model.is_hardware() {
        let _ = writeln!(
            err,
            "{}:1:1: error: --on-hardware asks which C11 executions a machine can show: use it \
             with --model rc11 or c11, not {}",
            display_path(&common.file),
            common.model
        );
        return EXIT_INPUT;
    }
    let (src, prog) = match load(
        &common.file,
        common.lang,
        (&common.defines, &common.pp),
        err,
    ) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let name = display_path(&common.file);
    let asked = if on_hardware.is_some() {
        if let Err(code) = needs_graphs(common, "--on-hardware ranks the C11 executions", err) {
            return code;
        }
        Some(checker::Equiv::Graph)
    } else {
        common.equiv
    };
    let mut scope = match explored_as(&prog, common, asked, &name, err) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut opts = CheckOptions {
        model: scope.model,
        limits: Limits {
            dependencies: on_hardware.is_some_and(|h| h.needs_dependencies()),
            equiv: scope.equiv,
            ..limits(common)
        },
        first,
        keep_buggy: 1000,
    };
    let started = Instant::now();
    let res = if asked.is_none() && scope.equiv == checker::Equiv::Rf {
        match probe_rf(&prog, &opts) {
            Probe::Done(res) => res,
            Probe::Continue => checker::check(&prog, &opts),
            Probe::GaveUp(dead_ends) => {
                let _ = writeln!(
                    err,
                    "{name}: note: the reads-from exploration gave up after {dead_ends} dead \
                     ends; exploring execution graphs instead (--equiv graph)"
                );
                scope = report::ExploredAs {
                    equiv: checker::Equiv::Graph,
                    model: common.model,
                };
                opts.model = common.model;
                opts.limits.equiv = checker::Equiv::Graph;
                checker::check(&prog, &opts)
            }
        }
    } else {
        checker::check(&prog, &opts)
    };
    clear_progress();
    let stats = &res.stats;
    render::verbose_stats(err, &name, stats, started.elapsed());
    match common.format {
        Format::Json => {
            let j = CheckJson {
                file: &name,
                model: common.model,
                equiv: scope.equiv,
                explored_as: (scope.model != common.model).then_some(scope.model),
                complete: stats.incomplete.is_none() && !stats.stopped && stats.bounded == 0,
                executions: stats.executions,
                blocked: stats.blocked,
                bounded: stats.bounded,
                buggy: stats.buggy,
                errors: report::error_entries(&prog, &res.buggy),
                on_hardware: on_hardware
                    .map(|h| report::hardware::on_hardware(&prog, &res.buggy, h)),
            };
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&j).unwrap_or_default()
            );
        }
        Format::Text => {
            let _ = write!(
                out,
                "{}",
                report::check_text(
                    &name,
                    &prog,
                    &src,
                    common.model,
                    &scope,
                    stats,
                    &res.buggy,
                    &render::text_style()
                )
            );
            if let Some(h) = on_hardware.filter(|_| !res.buggy.is_empty()) {
                let j = report::hardware::on_hardware(&prog, &res.buggy, h);
                let _ = write!(out, "{}", report::hardware::on_hardware_text(&name, &j));
            }
        }
        Format::Sarif => {
            let errors = report::error_entries(&prog, &res.buggy);
            let why = match &stats.incomplete {
                Some(why) => Some(report::incomplete_text(why)),
                None if stats.bounded > 0 => Some(format!(
                    "{} executions cut at the loop bound (--unroll {})",
                    stats.bounded, common.unroll
                )),
                None => None,
            };
            let unit = sarif::UnitFiles {
                main: &name,
                src: &src,
                sources: &prog.sources,
            };
            let run = sarif::check_run(&unit, &errors, why);
            let _ = writeln!(out, "{}", serde_json::to_string(&run).unwrap_or_default());
        }
        Format::Dot => match res.buggy.first() {
            Some(g) => {
                let _ = write!(out, "{}", report::execution_dot(&prog, g, common.model));
            }
            None => {
                let _ = writeln!(err, "{name}: no buggy execution to draw");
            }
        },
    }
    if !res.buggy.is_empty() {
        EXIT_BUG
    } else if stats.incomplete.is_some() || stats.bounded > 0 {
        EXIT_INCOMPLETE
    } else {
        EXIT_OK
    }
}

/// Executions a default `--equiv rf` check first explores on one thread, watching its dead
/// ends (see [`probe_rf`]).
const RF_PROBE_EXECUTIONS: u64 = 20_000;

/// Dead ends (beyond ten per execution) after which that first part gives up on rf.
const RF_DEAD_END_BUDGET: u64 = 10_000;

/// What the first part of a default `--equiv rf` check found.
enum Probe {
    /// It explored everything (or reached the user's own limit): the result.
    Done(checker::CheckResult),
    /// It explored [`RF_PROBE_EXECUTIONS`] executions without trouble: explore as asked.
    Continue,
    /// Its dead ends grew out of proportion (this many): explore graphs instead.
    GaveUp(u64),
}

/// The default equivalence is rf where it applies, and rf runs the canonical-order explorer,
/// whose reads wait for writes: on some programs its dead ends grow exponentially where
/// TruSt's graphs have none (indexer(12): no end with rf, 8 graphs in 2 ms). So a default rf
/// check first explores on one thread with a dead-end budget; past it, `check` explores
/// graphs instead and says so. Sequential and counted, so the choice is deterministic.
fn probe_rf(prog: &Program, opts: &CheckOptions) -> Probe {
    let cap = opts
        .limits
        .max_executions
        .map_or(RF_PROBE_EXECUTIONS, |m| m.min(RF_PROBE_EXECUTIONS));
    let probe = CheckOptions {
        limits: Limits {
            jobs: 1,
            max_executions: Some(cap),
            give_up_after: Some(RF_DEAD_END_BUDGET),
            ..opts.limits.clone()
        },
        ..opts.clone()
    };
    let res = checker::check(prog, &probe);
    if res.stats.gave_up {
        return Probe::GaveUp(res.stats.dead_ends);
    }
    let probe_cap_hit = matches!(
        res.stats.incomplete,
        Some(checker::Incomplete::MaxExecutions(_))
    ) && opts.limits.max_executions != Some(cap);
    if probe_cap_hit {
        Probe::Continue
    } else {
        Probe::Done(res)
    }
}

/// The result of repairing one file in memory.
pub enum Repair {
    Clean {
        executions: u64,
    },
    Fixed {
        solution: synth::Solution,
        positions: Vec<Position>,
        /// The changed files (main file first, then headers in include order), each
        /// rewritten in full.
        files: Vec<rewrite::FileRewrite>,
        verified: Verified,
        executions: u64,
        buggy: u64,
        /// Seconds spent checking, synthesising and re-checking (`prove` and `total` are 0:
        /// the caller fills them in).
        timings: Timings,
        /// The distinct errors the fix removes.
        errors: Vec<report::ErrorEntry>,
    },
    Unfixable {
        unfixable: synth::Unfixable,
        executions: u64,
        buggy: u64,
    },
    Incomplete {
        why: checker::Incomplete,
        executions: u64,
    },
    /// Fences were found, but one belongs where fensyn does not write (inside a macro use):
    /// the reason.
    NotWritable(String),
    /// The fix did not re-parse or did not re-check clean: never shown as a fix.
    Internal(String),
}

/// What `fensyn fix` was asked for besides the common arguments.
#[derive(Clone, Copy, Debug)]
struct FixOptions {
    goal: Goal,
    mode: Mode,
    write: bool,
    /// With `write`: exit with [`EXIT_BUG`] when the file was written.
    exit_non_zero_on_fix: bool,
    cost: Cost,
    prove: bool,
    timings: bool,
    optimal_limit: Duration,
    /// `--collect-limit` ([`synth::SynthOptions::collect_limit`]).
    collect_limit: usize,
    /// Comment each fence (`fix --no-comments` turns it off).
    comments: bool,
}

/// Checks, synthesises, rewrites and re-checks one program. Pure apart from the clock.
pub fn repair(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    mode: Mode,
    lim: Limits,
) -> Repair {
    let opts = synth::SynthOptions {
        mode,
        ..synth::SynthOptions::default()
    };
    repair_with(name, src, prog, model, lim, &opts)
}

/// Every variant of a fix with one fence removed, or weakened by one lattice step (never
/// below the order a strengthened program fence had), re-checked: the evidence that the fix
/// is minimal (each variant should still have a buggy execution). One buggy execution refutes
/// a variant, so each exploration stops at its first one; a variant without bug is explored
/// in full.
pub fn prove_minimal(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: &Limits,
    solution: &synth::Solution,
    positions: &[Position],
) -> Result<Vec<report::ProofEntry>, String> {
    let chosen: Vec<(trace::Site, MemOrder)> =
        solution.fences.iter().map(|f| (f.site, f.order)).collect();
    let mut entries = Vec::new();
    for (i, f) in solution.fences.iter().enumerate() {
        let floor = f.previous;
        let weaker: Vec<MemOrder> = match f.order {
            MemOrder::SeqCst => vec![MemOrder::AcqRel],
            MemOrder::AcqRel => vec![MemOrder::Acquire, MemOrder::Release],
            _ => vec![],
        };
        let mut variants: Vec<Option<MemOrder>> = vec![None];
        variants.extend(
            weaker
                .into_iter()
                .filter(|o| floor.is_none_or(|p| p.le(*o) && p != *o))
                .map(Some),
        );
        for v in variants {
            let mut set = chosen.clone();
            match (v, floor) {
                (Some(o), _) => set[i].1 = o,
                // Removing a strengthening restores the program fence's own order.
                (None, Some(p)) => set[i].1 = p,
                (None, None) => {
                    set.remove(i);
                }
            }
            let (edits, _) = rewrite::fence_edits(src, prog, &set)
                .map_err(|e| format!("cannot place the fences of a variant: {e}"))?;
            let files = rewrite::files::apply_all(src, prog, &edits)
                .map_err(|e| format!("cannot apply the edits of a variant: {e}"))?;
            let variant = reparse(name, src, prog, &files)
                .map_err(|d| format!("a variant does not parse: {d}"))?;
            let res = checker::check(
                &variant,
                &CheckOptions {
                    model,
                    limits: lim.clone(),
                    first: true,
                    keep_buggy: 1,
                },
            );
            let pos = positions.get(i).copied().unwrap_or_default();
            entries.push(report::ProofEntry {
                line: pos.line,
                column: pos.column,
                variant: if v.is_some() { "weakened" } else { "removed" },
                order: v.map(|o| o.c_name()),
                executions: res.stats.executions + res.stats.blocked + res.stats.bounded,
                buggy: res.stats.buggy,
                first_bug: prove::first_bug(prog, &variant, &edits, &res),
            });
        }
    }
    Ok(entries)
}

/// [`repair`] with the synthesis options `opts`.
pub fn repair_with(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: Limits,
    opts: &synth::SynthOptions,
) -> Repair {
    repair_commented(name, src, prog, model, lim, opts, true)
}

/// [`repair_with`], with or without the comment next to each fence.
pub fn repair_commented(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: Limits,
    opts: &synth::SynthOptions,
    comments: bool,
) -> Repair {
    let started = clock::cpu_seconds();
    let graphs = Limits {
        equiv: Equiv::Graph,
        ..lim.clone()
    };
    // CPU seconds spent exploring the input (the rest until `synthesised` is synthesis).
    let mut explore_seconds = 0.0;
    // `--mode auto`: the optimal pipeline (collection and solver) runs until this instant;
    // past it the fast loop runs instead.
    let optimal_until = (opts.mode == Mode::Auto).then(|| Instant::now() + opts.optimal_limit);
    let mut optimal = None;
    // The rounds of the lazy and fast searches write their fences into the source and
    // re-check it there before exploring the program in memory: the round that ends the
    // search is then checked once, by the re-check every fix gets, not twice.
    let mut checked: Option<(Vec<rewrite::FileRewrite>, Vec<Position>, Verified)> = None;
    let mut failure: Option<Repair> = None;
    let mut verify_seconds = 0.0;
    let mut hook = |candidate: &synth::Solution| {
        let started = clock::cpu_seconds();
        let verdict = match write_and_recheck(name, src, prog, model, &lim, candidate, comments) {
            Ok(done) => {
                checked = Some(done);
                synth::fast::Verdict::Clean
            }
            Err(Recheck::Buggy) => synth::fast::Verdict::Buggy,
            Err(Recheck::Incomplete(why, executions)) => {
                failure = Some(Repair::Incomplete { why, executions });
                synth::fast::Verdict::Stop
            }
            Err(Recheck::Internal(why)) => {
                failure = Some(Repair::Internal(why));
                synth::fast::Verdict::Stop
            }
            Err(Recheck::NotWritable(why)) => {
                failure = Some(Repair::NotWritable(why));
                synth::fast::Verdict::Stop
            }
        };
        verify_seconds += clock::cpu_seconds() - started;
        verdict
    };
    if !matches!(opts.mode, Mode::Fast | Mode::Lazy) {
        // Synthesis needs every buggy graph: buggy graphs become requirements as they are found
        // (memory: the distinct requirements).
        let deadline = match (optimal_until, lim.deadline) {
            (Some(ours), Some(user)) => Some(ours.min(user)),
            (ours, user) => ours.or(user),
        };
        // Whether a timeout of the collection is the optimal limit's, not `--timeout`'s.
        let ours = optimal_until.is_some_and(|d| lim.deadline.is_none_or(|u| d < u));
        let within = Limits {
            deadline,
            ..graphs.clone()
        };
        let (res, capped) = trace::collect::explore_within(
            prog,
            model,
            within.clone(),
            clock::cpu_seconds,
            opts.collect_limit,
        );
        explore_seconds += clock::cpu_seconds() - started - res.collect_seconds;
        let (executions, buggy) = (res.stats.executions, res.stats.buggy);
        match res.stats.incomplete {
            // Out of time while collecting: fall back to the fast loop below.
            Some(checker::Incomplete::Timeout) if ours => {}
            Some(why) => return Repair::Incomplete { why, executions },
            // Past the collection limit: the requirements left are found in rounds, from the
            // cheapest fences for those collected (the same minimum).
            None if capped => {
                let collected = res.requirements.len();
                let seed = synth::fast::Seed {
                    requirements: res.requirements,
                    bugs: res.bugs,
                    executions,
                    graphs: buggy as usize,
                };
                let search = synth::fast::Search {
                    lazy: true,
                    seed: Some(seed),
                    verify: Some(&mut hook),
                };
                let run =
                    synth::fast::run(prog, model, &within, opts.cost, clock::cpu_seconds, search);
                explore_seconds += run.explore_seconds;
                match run.outcome {
                    synth::fast::FastOutcome::Fixed { mut solution, bugs } => {
                        solution.mode = Mode::Optimal;
                        solution.lazy_after = Some(collected);
                        let errors = report::bug_entries(prog, &bugs);
                        optimal = Some((solution, executions, buggy, errors));
                    }
                    synth::fast::FastOutcome::Unfixable(unfixable) => {
                        return Repair::Unfixable {
                            unfixable,
                            executions,
                            buggy,
                        }
                    }
                    // Out of time in the rounds: fall back to the fast loop below.
                    synth::fast::FastOutcome::Incomplete {
                        why: checker::Incomplete::Timeout,
                        ..
                    } if ours => {}
                    synth::fast::FastOutcome::Incomplete { why, executions } => {
                        return Repair::Incomplete { why, executions }
                    }
                    // The collection found a bug, so the rounds cannot end clean.
                    synth::fast::FastOutcome::Clean { .. } => {
                        return Repair::Internal("the collected bugs disappeared".into())
                    }
                }
            }
            None => {
                if res.requirements.is_empty() {
                    if res.stats.bounded > 0 {
                        return Repair::Incomplete {
                            why: checker::Incomplete::LoopBound {
                                unroll: lim.unroll(),
                                cut: res.stats.bounded,
                            },
                            executions,
                        };
                    }
                    return Repair::Clean { executions };
                }
                let errors = report::bug_entries(prog, &res.bugs);
                let reqs = res.requirements;
                let outcome = match optimal_until {
                    None => Some(synth::synthesize_requirements(prog, reqs, model, opts)),
                    Some(d) => synth::synthesize_optimal_until(prog, reqs, model, opts.cost, d),
                };
                match outcome {
                    Some(Outcome::Fixed(s)) => optimal = Some((s, executions, buggy, errors)),
                    Some(Outcome::Unfixable(u)) => {
                        return Repair::Unfixable {
                            unfixable: u,
                            executions,
                            buggy,
                        }
                    }
                    // Out of time in the solver: fall back to the fast loop below.
                    None => {}
                }
            }
        }
    }
    let (solution, executions, buggy, errors) = match optimal {
        Some(found) => found,
        None => {
            // One buggy execution at a time; `executions` and `buggy` then describe the first
            // exploration of the input (stopped at its first buggy execution).
            let search = synth::fast::Search {
                lazy: opts.mode == Mode::Lazy,
                seed: None,
                verify: Some(&mut hook),
            };
            let run = synth::fast::run(prog, model, &graphs, opts.cost, clock::cpu_seconds, search);
            explore_seconds += run.explore_seconds;
            let executions = run.rounds.first().map_or(0, |r| r.executions);
            match run.outcome {
                synth::fast::FastOutcome::Clean { executions } => {
                    return Repair::Clean { executions }
                }
                synth::fast::FastOutcome::Incomplete { why, executions } => {
                    return Repair::Incomplete { why, executions }
                }
                synth::fast::FastOutcome::Unfixable(unfixable) => {
                    return Repair::Unfixable {
                        unfixable,
                        executions,
                        buggy: 1,
                    }
                }
                synth::fast::FastOutcome::Fixed { solution, bugs } => {
                    (solution, executions, 1, report::bug_entries(prog, &bugs))
                }
            }
        }
    };
    if let Some(stopped) = failure {
        return stopped;
    }
    let synthesised = clock::cpu_seconds();
    let (files, positions, verified) = match checked.take() {
        Some(done) => done,
        None => match write_and_recheck(name, src, prog, model, &lim, &solution, comments) {
            Ok(done) => done,
            Err(Recheck::Internal(why)) => return Repair::Internal(why),
            Err(Recheck::NotWritable(why)) => return Repair::NotWritable(why),
            Err(Recheck::Incomplete(why, executions)) => {
                return Repair::Incomplete { why, executions }
            }
            Err(Recheck::Buggy) => {
                return Repair::Internal(
                    "the fixed program still has a buggy execution; no fix is shown".into(),
                )
            }
        },
    };
    // The sites as written (a fence inside a macro use moved after its statement).
    let solution = rewrite::placement::relocate(prog, &solution).unwrap_or(solution);
    Repair::Fixed {
        solution,
        positions,
        files,
        verified,
        executions,
        buggy,
        timings: Timings {
            // Building the requirements happens during exploration but is synthesis work;
            // checking the rounds' fences in the source (`Verify`) is re-checking.
            check: explore_seconds,
            synth: synthesised - started - explore_seconds - verify_seconds,
            recheck: clock::cpu_seconds() - synthesised + verify_seconds,
            ..Timings::default()
        },
        errors,
    }
}

/// Why [`write_and_recheck`] gives no fix.
enum Recheck {
    /// The written program still has a buggy execution.
    Buggy,
    /// Its re-check hit `--timeout` or `--max-executions`.
    Incomplete(checker::Incomplete, u64),
    /// It could not be written or parsed.
    Internal(String),
    /// A fence belongs inside a macro use (`rewrite::placement`).
    NotWritable(String),
}

/// Writes `solution`'s fences into `src`, re-parses the result and re-checks it (stopping at
/// its first buggy execution): the written source, where each fence went, and the re-check.
fn write_and_recheck(
    name: &str,
    src: &str,
    prog: &Program,
    model: Model,
    lim: &Limits,
    solution: &synth::Solution,
    comments: bool,
) -> Result<(Vec<rewrite::FileRewrite>, Vec<Position>, Verified), Recheck> {
    // A fence inside a macro use goes before or after the use's statement, or is not written.
    let planned = rewrite::placement::relocate_planned(prog, &rewrite::plan(solution))
        .map_err(Recheck::NotWritable)?;
    let (files, positions) = match rewrite::rewrite(src, prog, &planned, comments) {
        Ok(r) => (r.files, r.positions),
        Err(e) => return Err(Recheck::Internal(format!("cannot write the fences: {e}"))),
    };
    let fixed_prog = match reparse(name, src, prog, &files) {
        Ok(p) => p,
        Err(d) => {
            return Err(Recheck::Internal(format!(
                "the fixed program does not parse: {d}"
            )))
        }
    };
    // The re-check only asks whether a bug is left: the equivalence asked for (`lim.equiv`)
    // where it applies to the fixed program, else graphs.
    let (recheck_model, recheck_equiv) =
        checker::resolve_equiv(&fixed_prog, model, Some(lim.equiv))
            .unwrap_or((model, Equiv::Graph));
    let re = checker::check(
        &fixed_prog,
        &CheckOptions {
            model: recheck_model,
            limits: Limits {
                equiv: recheck_equiv,
                ..lim.clone()
            },
            first: true,
            keep_buggy: 1,
        },
    );
    if !re.buggy.is_empty() {
        return Err(Recheck::Buggy);
    }
    if let Some(why) = re.stats.incomplete {
        return Err(Recheck::Incomplete(why, re.stats.executions));
    }
    let verified = Verified {
        executions: re.stats.executions,
        buggy: re.stats.buggy,
        bounded: re.stats.bounded,
        equiv: recheck_equiv,
    };
    Ok((files, positions, verified))
}

fn cmd_fix(common: &FileArgs, opts: FixOptions, out: Out, err: Out) -> i32 {
    let FixOptions {
        goal,
        mode,
        write,
        exit_non_zero_on_fix,
        cost,
        prove,
        timings: want_timings,
        optimal_limit,
        collect_limit,
        comments,
    } = opts;
    let started = clock::cpu_seconds();
    let (src, prog) = match load(
        &common.file,
        common.lang,
        (&common.defines, &common.pp),
        err,
    ) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let name = display_path(&common.file);
    // JSON and SARIF: nothing but the document on stdout, no summary on stderr.
    let json = matches!(common.format, Format::Json | Format::Sarif);
    let mut sarif_errors: Vec<report::ErrorEntry> = Vec::new();
    let mut sarif_edits: Option<Vec<rewrite::FileRewrite>> = None;
    let mut j = FixJson {
        file: &name,
        model: common.model,
        mode,
        status: "clean",
        fences: Vec::new(),
        inserted: 0,
        strengthened: 0,
        weight: 0,
        verified: None,
        executions: 0,
        buggy: 0,
        errors: Vec::new(),
        reason: None,
        diff: None,
        files: Vec::new(),
        cost: cost.name(),
        price: None,
        proof: None,
        fell_back: false,
        suggestion: None,
        iterations: None,
        lazy_after: None,
        timings: None,
    };
    let synth_opts = synth::SynthOptions {
        mode,
        cost,
        optimal_limit,
        collect_limit,
    };
    // The equivalence of the re-check of the fixed program (`--equiv`, default: rf
    // where it applies); an explicit one that does not apply to the input is an input error.
    let recheck = match explored_as(&prog, common, common.equiv, &name, err) {
        Ok(s) => s.equiv,
        Err(code) => return code,
    };
    // Liveness bugs are not what fences fix: `fix` looks for them only when asked.
    let fix_limits = || Limits {
        goal,
        equiv: recheck,
        liveness: common.liveness.unwrap_or(false),
        ..limits(common)
    };
    let repair = repair_commented(
        &name,
        &src,
        &prog,
        common.model,
        fix_limits(),
        &synth_opts,
        comments,
    );
    clear_progress();
    let code = match repair {
        Repair::Clean { executions } => {
            j.executions = executions;
            j.verified = Some(Verified {
                executions,
                buggy: 0,
                bounded: 0,
                equiv: checker::Equiv::Graph,
            });
            if !json {
                let what = match goal {
                    Goal::Bugs => "no bugs in",
                    Goal::Sc => "robust: sequentially consistent in all",
                };
                let _ = writeln!(
                    err,
                    "{name}: {what} {} under {}; nothing to fix",
                    report::executions(executions),
                    common.model
                );
            }
            EXIT_OK
        }
        Repair::Incomplete { why, executions } => {
            j.status = "incomplete";
            j.executions = executions;
            j.reason = Some(report::incomplete_text(&why));
            if !json {
                let _ = writeln!(
                    err,
                    "{name}: exploration incomplete: {}",
                    report::incomplete_text(&why)
                );
            }
            EXIT_INCOMPLETE
        }
        Repair::Unfixable {
            unfixable,
            executions,
            buggy,
        } => {
            j.status = "unfixable";
            j.executions = executions;
            j.buggy = buggy;
            let b = &unfixable.requirement.bug;
            j.errors = report::bug_entries(&prog, [b]);
            j.reason = Some(unfixable.reason.clone());
            sarif_errors = j.errors.clone();
            j.suggestion = unfixable.suggestion.map(|sg| {
                let span = prog.stmts[sg.stmt].span;
                report::SuggestionJson {
                    line: span.line,
                    column: span.column,
                    order: sg.order.c_name(),
                    previous: sg.previous.c_name(),
                }
            });
            if !json {
                let mut g = unfixable.requirement.graph.clone();
                g.bugs = vec![b.clone()];
                let _ = writeln!(
                    out,
                    "{}",
                    report::unfixable_text(
                        &name,
                        (&prog, &src),
                        &g,
                        b,
                        (&unfixable.reason, render::options().color_out)
                    )
                );
                if let Some(sg) = &j.suggestion {
                    let _ = writeln!(
                        out,
                        "suggestion (not a fence fix): make the access at {name}:{}:{} \
                         memory_order_{} (it is memory_order_{}); with seq_cst fences this \
                         execution is then forbidden",
                        sg.line, sg.column, sg.order, sg.previous
                    );
                }
            }
            EXIT_UNFIXABLE
        }
        Repair::Internal(msg) => {
            let _ = writeln!(err, "{name}: internal error: {msg}");
            return EXIT_INTERNAL;
        }
        Repair::NotWritable(msg) => {
            let _ = writeln!(err, "{name}: fix not written: {msg}");
            j.status = "not_written";
            EXIT_UNFIXABLE
        }
        Repair::Fixed {
            solution,
            positions,
            files,
            verified,
            executions,
            buggy,
            timings,
            errors,
        } => {
            j.status = "fixed";
            if common.format == Format::Sarif {
                // The same edits `--write` applies: fences, comments and a missing include.
                sarif_edits = Some(files.clone());
                sarif_errors = errors;
            }
            j.iterations = Some(solution.iterations);
            let mut timings = timings;
            j.mode = solution.mode;
            j.fell_back = mode == Mode::Auto && solution.mode == Mode::Fast;
            j.lazy_after = solution.lazy_after;
            if let (Some(n), false) = (solution.lazy_after, json) {
                let rounds = solution.iterations.saturating_sub(1);
                let rest = match rounds {
                    0 => "the cheapest fences for those re-checked clean".to_string(),
                    1 => "one more buggy execution was found as --mode lazy finds them".into(),
                    k => format!("{k} more buggy executions were found as --mode lazy finds them"),
                };
                let _ = writeln!(
                    err,
                    "{name}: note: stopped collecting at {n} requirement{} (--collect-limit); \
                     {rest}: the fix is still the minimum",
                    if n == 1 { "" } else { "s" }
                );
            }
            if j.fell_back && !json {
                let _ = writeln!(
                    err,
                    "{name}: note: the optimal search did not finish within {} s; this fix \
                     comes from the fast mode ({} round{}) and may use more fences than the \
                     optimum (--mode optimal waits for it)",
                    optimal_limit.as_secs_f64(),
                    solution.iterations,
                    if solution.iterations == 1 { "" } else { "s" }
                );
            }
            j.fences = report::fence_entries(&solution, &positions, &prog.sources);
            j.files = files
                .iter()
                .map(|f| prog.sources.name_of(f.file, &name).to_string())
                .collect();
            if let Some(m) = common.model.machine() {
                for (f, fj) in solution.fences.iter().zip(&mut j.fences) {
                    fj.instruction = Some(m.fence_instruction(f.order).unwrap_or("none"));
                }
            }
            j.inserted = solution.inserted;
            j.strengthened = solution.strengthened;
            j.weight = solution.weight;
            if matches!(cost, Cost::X86 | Cost::Armv8) {
                j.price = Some(solution.price);
            }
            j.verified = Some(verified);
            j.executions = executions;
            j.buggy = buggy;
            let cwd = std::env::current_dir().ok();
            let diff = rewrite::files::unified_diff(&src, &name, &prog, &files, cwd.as_deref());
            if !json && !render::options().quiet {
                let _ = write!(
                    err,
                    "{}",
                    report::fix_summary((&name, &prog.sources), &solution, &positions, verified)
                );
                if let Some(m) = common.model.machine() {
                    for fj in &j.fences {
                        let _ = writeln!(
                            err,
                            "  {}:{}:{}: memory_order_{} fence = {} on {}",
                            fj.file.as_deref().unwrap_or(&name),
                            fj.line,
                            fj.column,
                            fj.order,
                            fj.instruction.unwrap_or("none"),
                            m.name()
                        );
                    }
                }
                if matches!(cost, Cost::X86 | Cost::Armv8) {
                    let _ = writeln!(
                        err,
                        "{name}: price under the {} cost model: {}",
                        cost.name(),
                        solution.price
                    );
                }
            }
            if prove {
                let proving = clock::cpu_seconds();
                let lim = fix_limits();
                let entries = prove_minimal(
                    &name,
                    &src,
                    &prog,
                    common.model,
                    &lim,
                    &solution,
                    &positions,
                );
                clear_progress();
                timings.prove = clock::cpu_seconds() - proving;
                match entries {
                    Ok(entries) => {
                        if !json {
                            let _ = write!(err, "{}", report::proof_text(&name, &entries));
                        }
                        let minimal = entries.iter().all(|e| e.buggy > 0);
                        j.proof = Some(entries);
                        timings.total = clock::cpu_seconds() - started;
                        j.timings = want_timings.then_some(timings);
                        if !minimal {
                            if common.format == Format::Json {
                                let _ = writeln!(
                                    out,
                                    "{}",
                                    serde_json::to_string_pretty(&j).unwrap_or_default()
                                );
                            } else if json {
                                let _ = write!(
                                    err,
                                    "{}",
                                    report::proof_text(
                                        &name,
                                        j.proof.as_deref().unwrap_or_default()
                                    )
                                );
                            }
                            return EXIT_INTERNAL;
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(err, "{name}: internal error: {e}");
                        return EXIT_INTERNAL;
                    }
                }
            }
            timings.total = clock::cpu_seconds() - started;
            j.timings = want_timings.then_some(timings);
            if write {
                match write_fix(&common.file, &src, &prog, &files) {
                    Ok(()) => {
                        if !json {
                            for f in &j.files {
                                let _ = writeln!(err, "{f}: written");
                            }
                        }
                        j.diff = Some(diff);
                        if exit_non_zero_on_fix {
                            EXIT_BUG
                        } else {
                            EXIT_OK
                        }
                    }
                    Err(e) => {
                        let none = if files.len() > 1 {
                            "; no file was written"
                        } else {
                            ""
                        };
                        let at = display_path(&e.path);
                        let _ = writeln!(err, "{at}:1:1: error: not written: {}{none}", e.error);
                        return EXIT_INPUT;
                    }
                }
            } else {
                if !json {
                    let _ = write!(out, "{diff}");
                }
                j.diff = Some(diff);
                EXIT_BUG
            }
        }
    };
    match common.format {
        Format::Json => {
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&j).unwrap_or_default()
            );
        }
        Format::Sarif => {
            let unit = sarif::UnitFiles {
                main: &name,
                src: &src,
                sources: &prog.sources,
            };
            let run = sarif::fix_run(&unit, &j, &sarif_errors, sarif_edits.as_deref());
            let _ = writeln!(out, "{}", serde_json::to_string(&run).unwrap_or_default());
        }
        Format::Text | Format::Dot => {}
    }
    code
}

/// Writes the rewritten `files` of `prog`'s unit (main file `path`, read as `src`), all or
/// none ([`write::write_all`]).
pub fn write_fix(
    path: &Path,
    src: &str,
    prog: &Program,
    files: &[rewrite::FileRewrite],
) -> Result<(), write::WriteError> {
    let changes: Vec<write::Change> = files
        .iter()
        .filter_map(|f| match f.file.checked_sub(1) {
            None => Some(write::Change {
                path,
                old: src,
                new: &f.text,
            }),
            Some(k) => prog.sources.headers.get(k).map(|h| write::Change {
                path: &h.path,
                old: &h.text,
                new: &f.text,
            }),
        })
        .collect();
    let _no_interrupt = progress::writing();
    write::write_all(&changes)
}

/// Parses the rewritten `files` of `prog`'s unit (main file `name`, originally `src`) as
/// `prog` was parsed, the rewritten headers read from memory.
pub fn reparse(
    name: &str,
    src: &str,
    prog: &Program,
    files: &[rewrite::FileRewrite],
) -> Result<Program, frontend::Diagnostic> {
    let text = rewrite::files::main_text(src, files);
    let headers = rewrite::files::header_texts(prog, files);
    frontend::reparse(name, text, prog, &headers)
}
