//! fensyn as a library: check a C or C++ translation unit, or repair it, in memory.
//!
//! The API is three steps, each returning data the caller renders as it likes (the `fensyn`
//! command line is one such caller, `src/cli`):
//!
//! 1. a [`Source`] — a file's name and text (read with [`Source::read`], or given, e.g. from
//!    an editor's buffer) with its language and preprocessor options — is parsed into a
//!    [`Unit`] ([`Source::parse`]);
//! 2. [`check`] explores every execution of the unit under [`Options`] and returns a
//!    [`Report`] (the statistics and the buggy execution graphs);
//! 3. [`fix`] runs the whole repair pipeline (check → synthesise → rewrite → re-check) and
//!    returns a [`Repair`]: for a fix, the fences chosen and every changed file's new text
//!    with the [`Edit`](crate::rewrite::Edit)s that made it ([`FileRewrite`]). Nothing is
//!    written to disk; [`Unit::patch`] renders the edits as a unified diff.
//!
//! Errors in the input (unreadable file, syntax error, unsupported construct, an
//! equivalence the model cannot use) are a [`Diagnostic`] with the file, line and column.
//!
//! **Invariants:** no function here writes a file, prints, or exits; results are deterministic
//! (apart from the timings of [`Repair::Fixed`]); a [`Repair::Fixed`] has been re-parsed and
//! re-checked clean.

mod check;
pub mod clock;
mod prove;
mod prove_orders;
mod relax;
mod repair;

pub use check::{explored_as, Report};
pub use prove::prove_minimal;
pub use relax::{relax, RelaxOptions, Relaxation, Relaxed, RelaxedItem};
pub use repair::{repair, repair_commented, repair_with, reparse, Repair};

use crate::checker::{Equiv, Limits, Model};
use crate::frontend::{self, DiagKind, Diagnostic};
use crate::ir::{Lang, PpOptions, Program};
use crate::report::ProofEntry;
use crate::rewrite::{FileRewrite, Position};
use crate::synth::{self, Solution};
use std::path::Path;

/// One translation unit's main file, before parsing.
#[derive(Clone, Debug)]
pub struct Source {
    /// The name used in messages and patch headers; `#include "..."` is searched from its
    /// directory.
    pub name: String,
    /// The file's text.
    pub text: String,
    pub lang: Lang,
    /// `-D NAME=VALUE` integer macros.
    pub defines: Vec<(String, i64)>,
    /// `-I`, `-D NAME=TEXT`, `-U` and the language standard.
    pub pp: PpOptions,
}

impl Source {
    /// `text` named `name`, its language by `name`'s extension, no macros or include paths.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        let name = name.into();
        Source {
            lang: Lang::from_path(Path::new(&name)),
            name,
            text: text.into(),
            defines: Vec::new(),
            pp: PpOptions::default(),
        }
    }

    /// The source of the file at `path` (named by it), or why it cannot be read.
    pub fn read(path: &Path) -> Result<Source, Diagnostic> {
        let name = path.to_string_lossy().into_owned();
        match std::fs::read(path) {
            Ok(bytes) => Source::from_bytes(name, bytes),
            Err(e) => Err(input_error(name, 1, 1, format!("cannot read file: {e}"))),
        }
    }

    /// The source `bytes` named `name` (e.g. standard input), or where they are not UTF-8.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<Source, Diagnostic> {
        let name = name.into();
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Source::new(name, text)),
            Err(e) => {
                let bytes = e.as_bytes();
                let at = e.utf8_error().valid_up_to();
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                let start = bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let message = "the file is not valid UTF-8".to_string();
                Err(input_error(name, line, at - start + 1, message))
            }
        }
    }

    /// Preprocesses and parses the source (headers read from disk) into a [`Unit`]. Notes and
    /// warnings about accepted code are in the program's `notes`.
    pub fn parse(self) -> Result<Unit, Diagnostic> {
        let loader = frontend::preprocess::Disk;
        let program = frontend::parse_unit(
            &self.name,
            &self.text,
            self.lang,
            &self.defines,
            &self.pp,
            &loader,
        )?;
        Ok(Unit {
            source: self,
            program,
        })
    }
}

fn input_error(file: String, line: usize, column: usize, message: String) -> Diagnostic {
    Diagnostic {
        file,
        line,
        column,
        kind: DiagKind::Error,
        message,
    }
}

/// A parsed translation unit: its source and its program.
#[derive(Clone, Debug)]
pub struct Unit {
    pub source: Source,
    pub program: Program,
}

impl Unit {
    /// The unified diff from the unit's files to `files` (a [`Repair::Fixed`]'s), headers'
    /// paths relative to `cwd` when given.
    pub fn patch(&self, files: &[FileRewrite], cwd: Option<&Path>) -> String {
        let src = &self.source;
        crate::rewrite::files::unified_diff(&src.text, &src.name, &self.program, files, cwd)
    }
}

/// How to explore: the memory model, the equivalence of executions, the limits.
#[derive(Clone, Debug)]
pub struct Options {
    pub model: Model,
    /// `None`: rf where it is sound, else graph (see [`check`]). [`fix`] synthesises from
    /// graphs and uses this for the re-check of the fixed program.
    pub equiv: Option<Equiv>,
    /// Execution and time limits, loop bound, progress callback, `jobs`, the goal of a fix.
    /// Its `equiv` is set from [`Options::equiv`].
    pub limits: Limits,
    /// [`check`]: stop at the first buggy execution.
    pub first: bool,
    /// [`check`]: keep at most this many buggy graphs (all are counted).
    pub keep_buggy: usize,
}

impl Default for Options {
    /// RC11, the default equivalence, no limits, every buggy graph up to 1,000 kept.
    fn default() -> Self {
        Options {
            model: Model::Rc11,
            equiv: None,
            limits: Limits::default(),
            first: false,
            keep_buggy: 1000,
        }
    }
}

/// What [`fix`] minimises and how it searches.
#[derive(Clone, Debug)]
pub struct FixOptions {
    /// Mode, cost, the optimal search's time limit, the collection limit.
    pub synth: synth::SynthOptions,
    /// Write a comment next to each fence.
    pub comments: bool,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            synth: synth::SynthOptions::default(),
            comments: true,
        }
    }
}

/// Explores every execution of `unit` (see [`Report`]).
pub fn check(unit: &Unit, opts: &Options) -> Result<Report, Diagnostic> {
    check::check(unit, opts)
}

/// Repairs `unit` in memory: the fences, the rewritten files and the re-check ([`Repair`]).
/// An explicit [`Options::equiv`] the model cannot use on the input is an input error.
pub fn fix(unit: &Unit, opts: &Options, fix: &FixOptions) -> Result<Repair, Diagnostic> {
    let recheck = explored_as(unit, opts.model, opts.equiv)?.equiv;
    let lim = Limits {
        equiv: recheck,
        ..opts.limits.clone()
    };
    let src = &unit.source;
    Ok(repair_commented(
        &src.name,
        &src.text,
        &unit.program,
        opts.model,
        lim,
        &fix.synth,
        fix.comments,
    ))
}

/// The evidence that a fix of `unit` is minimal ([`prove_minimal`]): every variant with one
/// fence removed or weakened, re-checked under `opts`.
pub fn prove(
    unit: &Unit,
    opts: &Options,
    solution: &Solution,
    positions: &[Position],
) -> Result<Vec<ProofEntry>, String> {
    let recheck = explored_as(unit, opts.model, opts.equiv)
        .map_err(|d| d.to_string())?
        .equiv;
    let lim = Limits {
        equiv: recheck,
        ..opts.limits.clone()
    };
    let src = &unit.source;
    prove_minimal(
        &src.name,
        &src.text,
        &unit.program,
        opts.model,
        &lim,
        solution,
        positions,
    )
}
