//! The command line: argument parsing, file IO, output and exit codes.
//!
//! This is the only layer that touches the file system or the process exit code. Exit codes
//! (the CLI contract in docs/cli.md):
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
mod check;
mod compdb;
pub mod config;
pub mod files;
mod fix;
mod man;
mod relax;

mod progress;
pub mod render;
mod robust;
mod suppress;
mod usage;
mod write;

pub use fix::write_fix;
pub use write::{write_atomically, WriteError};

use crate::api::{self, Unit};
use crate::checker::{self, Goal, Limits, Model};
use crate::frontend;
use crate::ir::{Lang, Program};
use crate::report;
use crate::synth::{Cost, Mode};
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
  fensyn check fixtures/litmus/sb.c
      explore every execution, report the bugs
  fensyn fix fixtures/litmus/sb.c | git apply
      print the fences as a patch and apply it
  fensyn fix --write fixtures/litmus/ fixtures/cpp/
      fix every C and C++ file under two directories
  fensyn check --format sarif -o fensyn.sarif fixtures/litmus/
      a SARIF report for code scanning

Defaults come from the nearest fensyn.toml (see --config); options given here win.";

const CHECK_EXAMPLES: &str = "Examples:
  fensyn check fixtures/litmus/sb.c
      report assertion failures and data races
  fensyn check --model sc --first fixtures/litmus/sb.c
      under sequential consistency, stop at the first bug
  fensyn check fixtures/litmus/mp.c fixtures/cpp/mp.cpp fixtures/sync/
      several files; the exit code is the most severe one
  fensyn check --format json -o report.json fixtures/litmus/
      a JSON array, one object per file
  fensyn check --stdin-filename fixtures/litmus/mp.c - < fixtures/litmus/mp.c
      the source on standard input (as an editor passes an unsaved buffer)

Exit codes: 0 no bug, 1 bug found, 3 input error, 4 incomplete, 5 internal error.";

const FIX_EXAMPLES: &str = "Examples:
  fensyn fix fixtures/litmus/sb.c | git apply
      print the fences as a unified diff and apply it
  fensyn fix fixtures/litmus/ > fences.patch
      stdout is only the patch; the summary goes to stderr
  fensyn fix --write fixtures/litmus/sb.c
      rewrite the file (atomically, after a re-check)
  fensyn fix --cost armv8 --mode optimal fixtures/litmus/sb.c
      minimise the price of the fences on ARMv8
  fensyn fix --diff --stdin-filename fixtures/litmus/mp.c - < fixtures/litmus/mp.c
      the patch of an editor's buffer, exit 1 when there is one
  fensyn fix --write --exit-non-zero-on-fix fixtures/litmus/
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
    /// Treat the named files as a directory search finds them (what a pre-commit hook, which
    /// passes every staged file, needs): fensyn.toml's `exclude` applies to them and a file
    /// without `main` is skipped with a note instead of being an error.
    #[arg(long)]
    pub pre_commit: bool,
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
    /// Recursion bound: calls of a function that may be nested inside a call of it (calls
    /// are inlined). Executions that need a deeper call are cut and reported [default: 1]
    #[arg(long, value_name = "N")]
    pub recursion: Option<u32>,
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
    /// Another source file of the same program (repeatable), as a linker would join it: read
    /// before each FILE, so the functions and globals it defines are the program's (a fence
    /// it needs is added to it)
    #[arg(long = "link", value_name = "FILE")]
    pub link: Vec<PathBuf>,
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
    /// With `-` as the path (the source on standard input, as editors pass it): the file's
    /// name, for messages and the patch header; its directory is where `#include "..."` and
    /// fensyn.toml are looked for [default: <stdin>]
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<PathBuf>,
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
            recursion: self.recursion,
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
            link: self.link.clone(),
            compile_commands: self.compile_commands.clone(),
            std: self.std,
            ..config::Config::default()
        }
    }

    fn batch(&self, separate_sections: bool) -> batch::Batch<'_> {
        let stdin = usage::reads_stdin(self).then(|| {
            self.stdin_filename
                .clone()
                .unwrap_or_else(|| PathBuf::from("<stdin>"))
        });
        batch::Batch {
            paths: &self.files,
            stdin,
            format: self.format,
            output: self.output.as_deref(),
            config: self.config.as_deref(),
            no_config: self.no_config,
            separate_sections,
            pre_commit: self.pre_commit,
        }
    }
}

/// The settings of one run on one file, after merging the command line with `fensyn.toml`.
#[derive(Debug, Clone)]
pub struct FileArgs {
    /// The file, or with `stdin` the name standard input is given (`--stdin-filename`).
    pub file: PathBuf,
    /// Read the source from standard input.
    pub stdin: bool,
    pub lang: LangArg,
    pub model: Model,
    pub format: Format,
    pub max_executions: Option<u64>,
    pub timeout: Option<f64>,
    pub unroll: u32,
    /// fensyn.toml accepts the loop bound for this file (`[[per-file]] accept-bound`):
    /// executions cut at it do not make the run incomplete.
    pub accept_bound: bool,
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
        /// Print the fix as a unified diff and write nothing (the default, said explicitly):
        /// exit 1 when there is a patch, 0 when there is nothing to fix.
        #[arg(long, conflicts_with = "write")]
        diff: bool,
        /// What to minimise: count (new fences, then weight; the thesis's default), weight,
        /// or the price of the instructions compilers emit on x86 or ARMv8 [default: count]
        #[arg(long, value_enum)]
        cost: Option<Cost>,
        /// What a fix changes: fences (insert fences, strengthen program fences), orders
        /// (strengthen the memory orders of atomic accesses and program fences, insert
        /// nothing) or both (whichever is cheaper) [default: fences]
        #[arg(long, value_enum)]
        by: Option<crate::synth::orders::By>,
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
    /// The weakest memory orders that keep a correct program correct: every access and fence
    /// weakened as far as it stays clean; print them as a diff or write them.
    #[command(after_help = relax::RELAX_EXAMPLES)]
    Relax(relax::RelaxArgs),
}

/// Runs the CLI and returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    if let Err(e) = usage::validate(&cli) {
        let _ = e.print();
        return EXIT_INPUT;
    }
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
            &mut |file, _, out, err| check::cmd_check(file, first, on_hardware, out, err).into(),
        ),
        Command::Fix {
            common,
            mode,
            write,
            exit_non_zero_on_fix,
            cost,
            by,
            prove_optimal,
            optimal_timeout,
            goal,
            timings,
            no_comments,
            collect_limit,
            diff: _,
        } => {
            let given = config::Config {
                mode,
                cost,
                by,
                optimal_timeout,
                collect_limit,
                ..common.given()
            };
            batch::run(&common.batch(false), &given, &mut |file, s, out, err| {
                let t = s.optimal_timeout;
                let opts = fix::FixOptions {
                    mode: s.mode,
                    write,
                    exit_non_zero_on_fix,
                    cost: s.cost,
                    by: s.by,
                    prove: prove_optimal,
                    comments: s.comments && !no_comments,
                    goal,
                    timings,
                    optimal_limit: seconds(t),
                    collect_limit: s.collect_limit,
                };
                fix::cmd_fix(file, opts, out, err).into()
            })
        }
        Command::Robust { common } => batch::run(
            &common.batch(true),
            &common.given(),
            &mut |file, _, out, err| robust::cmd_robust(file, out, err).into(),
        ),
        Command::Explain(args) => batch::run(
            &args.common.batch(true),
            &args.common.given(),
            &mut |file, _, out, err| explain::cmd_explain(&args, file, out, err).into(),
        ),
        Command::Man { dir } => man::run(dir.as_deref()),
        Command::Relax(args) => batch::run(
            &args.common.batch(false),
            &args.common.given(),
            &mut |file, _, out, err| relax::cmd_relax(&args, file, out, err),
        ),
    }
}

/// A duration of `t` seconds (0 for a negative or non-finite `t`).
fn seconds(t: f64) -> Duration {
    Duration::from_secs_f64(if t.is_finite() && t >= 0.0 { t } else { 0.0 })
}

type Out<'a> = &'a mut dyn std::io::Write;

fn display_path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Reads and parses the input (standard input when `common.stdin`); prints the notes of the
/// parse, or the diagnostic and returns the exit code.
fn load_unit(common: &FileArgs, err: Out) -> Result<Unit, i32> {
    let name = display_path(&common.file);
    let read = if common.stdin {
        let mut bytes = Vec::new();
        match std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes) {
            Ok(_) => api::Source::from_bytes(name.clone(), bytes),
            Err(e) => {
                let msg = format!("cannot read standard input: {e}");
                render::input_error(err, (&name, None), (1, 1), "input", &msg);
                return Err(EXIT_INPUT);
            }
        }
    } else {
        api::Source::read(&common.file)
    };
    let mut source = match read {
        Ok(s) => s,
        Err(d) => {
            render::input_error(
                err,
                (&d.file, None),
                (d.line, d.column),
                "input",
                &d.message,
            );
            return Err(EXIT_INPUT);
        }
    };
    source.lang = common.lang.resolve_with(&common.file, common.pp.std);
    source.defines = common.defines.clone();
    source.pp = common.pp.clone();
    // Kept for the snippet of a diagnostic (parsing consumes the source).
    let text = source.text.clone();
    match source.parse() {
        Ok(u) => {
            for n in &u.program.notes {
                let kind = if n.warning { "warning" } else { "note" };
                let file = n.file.as_deref().unwrap_or(&name);
                let (line, column) = (n.span.line, n.span.column);
                let _ = writeln!(err, "{file}:{line}:{column}: {kind}: {}", n.message);
            }
            Ok(u)
        }
        Err(d) => {
            render::frontend_error(err, &name, &text, &d);
            Err(EXIT_INPUT)
        }
    }
}

/// [`load_unit`] as the source text and the program.
fn load(common: &FileArgs, err: Out) -> Result<(String, Program), i32> {
    load_unit(common, err).map(|u| (u.source.text, u.program))
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

/// Removes the progress display of the exploration that ended, if one was drawn.
fn clear_progress() {
    progress::finish();
}
