//! `fensyn fix FILE`: calls [`api::fix`] and renders the [`Repair`]: the patch on `out` (and
//! nothing else: `fensyn fix dir/ > p.patch` is a clean patch), every prose report — the
//! summary, an unfixable execution, notes — on `err`; with `--format json|sarif` the document
//! on `out` and no prose. `--write` writes the fixed files ([`write_fix`]).

use super::{
    clear_progress, display_path, limits, load_unit, write, FileArgs, Format, Out, EXIT_BUG,
    EXIT_INCOMPLETE, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_UNFIXABLE,
};
use crate::api::{self, clock, Repair, Unit};
use crate::checker::{self, Goal, Limits};
use crate::ir::Program;
use crate::report::{self, sarif, FixJson, Timings, Verified};
use crate::rewrite::{self, FileRewrite, Position};
use crate::synth::{self, Cost, Mode, Solution};
use std::path::Path;
use std::time::Duration;

/// What `fensyn fix` was asked for besides the common arguments.
#[derive(Clone, Copy, Debug)]
pub(super) struct FixOptions {
    pub goal: Goal,
    pub mode: Mode,
    pub write: bool,
    /// With `write`: exit with [`EXIT_BUG`] when the file was written.
    pub exit_non_zero_on_fix: bool,
    pub cost: Cost,
    /// `--by` ([`synth::orders::By`]).
    pub by: synth::orders::By,
    pub prove: bool,
    pub timings: bool,
    pub optimal_limit: Duration,
    /// `--collect-limit` ([`synth::SynthOptions::collect_limit`]).
    pub collect_limit: usize,
    /// Comment each fence (`fix --no-comments` turns it off).
    pub comments: bool,
}

/// One `fix` run on one file: what the renderers need.
struct Run<'a> {
    common: &'a FileArgs,
    opts: FixOptions,
    unit: &'a Unit,
    /// The CPU clock when the run started (`--timings`' total).
    started: f64,
    /// JSON or SARIF: nothing but the document on stdout, no prose on stderr.
    json: bool,
    j: FixJson<'a>,
    sarif_errors: Vec<report::ErrorEntry>,
    sarif_edits: Option<Vec<FileRewrite>>,
    /// The `fensyn: ignore` comments' bug filter (also for `--prove-optimal`'s re-checks).
    suppress: Option<checker::Suppress>,
}

pub(super) fn cmd_fix(common: &FileArgs, opts: FixOptions, out: Out, err: Out) -> i32 {
    let started = clock::cpu_seconds();
    let unit = match load_unit(common, err) {
        Ok(u) => u,
        Err(code) => return code,
    };
    let asked = synth::SynthOptions {
        mode: opts.mode,
        cost: opts.cost,
        optimal_limit: opts.optimal_limit,
        collect_limit: opts.collect_limit,
        by: opts.by,
    };
    let fix_opts = match synth::orders::options_for(opts.by, asked) {
        Ok(synth) => api::FixOptions {
            synth,
            comments: opts.comments,
        },
        Err(msg) => {
            let _ = writeln!(err, "{}: error: {msg}", unit.source.name);
            return EXIT_INPUT;
        }
    };
    let (name, text) = (&unit.source.name, &unit.source.text);
    let silencing = match super::suppress::load(name, text, &unit.program, err) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let suppress = silencing.filter();
    let explore = explore_options(common, opts.goal, suppress.clone());
    let repair = match api::fix(&unit, &explore, &fix_opts) {
        Ok(r) => r,
        Err(d) => {
            let _ = writeln!(err, "{d}");
            return EXIT_INPUT;
        }
    };
    clear_progress();
    let mut run = Run {
        common,
        opts,
        unit: &unit,
        started,
        json: matches!(common.format, Format::Json | Format::Sarif),
        j: empty_json(&unit.source.name, common, opts),
        sarif_errors: Vec::new(),
        sarif_edits: None,
        suppress,
    };
    silencing.note(&unit.source.name, &unit.program, err);
    let code = match repair {
        Repair::Fixed { .. } => match run.fixed(repair, out, err) {
            Ok(code) => code,
            Err(code) => return code,
        },
        Repair::Internal(msg) => {
            let _ = writeln!(err, "{}: internal error: {msg}", unit.source.name);
            return EXIT_INTERNAL;
        }
        other => run.not_fixed(other, err),
    };
    run.document(out);
    code
}

/// The exploration options of `fix` (and of `--prove-optimal`'s re-checks): liveness bugs
/// are not what fences fix, so `fix` looks for them only when asked.
fn explore_options(
    common: &FileArgs,
    goal: Goal,
    suppress: Option<checker::Suppress>,
) -> api::Options {
    api::Options {
        model: common.model,
        equiv: common.equiv,
        limits: Limits {
            goal,
            liveness: common.liveness.unwrap_or(false),
            suppress,
            ..limits(common)
        },
        ..api::Options::default()
    }
}

fn empty_json<'a>(name: &'a str, common: &FileArgs, opts: FixOptions) -> FixJson<'a> {
    FixJson {
        file: name,
        model: common.model,
        mode: opts.mode,
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
        cost: opts.cost.name(),
        price: None,
        proof: None,
        fell_back: false,
        suggestion: None,
        iterations: None,
        lazy_after: None,
        timings: None,
        by: opts.by.orders().then(|| opts.by.name()),
        accesses: Vec::new(),
    }
}

impl Run<'_> {
    fn name(&self) -> &str {
        &self.unit.source.name
    }

    /// A clean, incomplete, unfixable or not writable result: its JSON fields and its prose.
    fn not_fixed(&mut self, repair: Repair, err: Out) -> i32 {
        let name = self.unit.source.name.as_str();
        match repair {
            Repair::Clean { executions } => {
                self.j.executions = executions;
                self.j.verified = Some(Verified {
                    executions,
                    buggy: 0,
                    bounded: 0,
                    equiv: checker::Equiv::Graph,
                });
                if !self.json {
                    let what = match self.opts.goal {
                        Goal::Bugs => "no bugs in",
                        Goal::Sc => "robust: sequentially consistent in all",
                    };
                    let _ = writeln!(
                        err,
                        "{name}: {what} {} under {}; nothing to fix",
                        report::executions(executions),
                        self.common.model
                    );
                }
                EXIT_OK
            }
            Repair::Incomplete {
                why: checker::Incomplete::LoopBound { unroll, cut },
                executions,
            } if self.common.accept_bound => {
                // Clean up to a bound fensyn.toml accepts: nothing to fix.
                self.j.executions = executions;
                if !self.json {
                    let _ = writeln!(
                        err,
                        "{name}: note: {} cut at the loop bound {unroll}, which fensyn.toml \
                         accepts for this file (accept-bound): nothing to fix up to it",
                        report::executions(cut)
                    );
                }
                EXIT_OK
            }
            Repair::Incomplete { why, executions } => {
                self.j.status = "incomplete";
                self.j.executions = executions;
                self.j.reason = Some(report::incomplete_text(&why));
                if !self.json {
                    let why = report::incomplete_text(&why);
                    let _ = writeln!(err, "{name}: exploration incomplete: {why}");
                }
                EXIT_INCOMPLETE
            }
            Repair::Unfixable {
                unfixable,
                executions,
                buggy,
            } => self.unfixable(unfixable, executions, buggy, err),
            Repair::NotWritable(msg) => {
                let _ = writeln!(err, "{name}: fix not written: {msg}");
                self.j.status = "not_written";
                EXIT_UNFIXABLE
            }
            Repair::Fixed { .. } | Repair::Internal(_) => EXIT_INTERNAL,
        }
    }

    /// Not fixable with fences: the reason and the execution (prose, on `err`).
    fn unfixable(
        &mut self,
        unfixable: synth::Unfixable,
        executions: u64,
        buggy: u64,
        err: Out,
    ) -> i32 {
        let unit = self.unit;
        let (name, prog, src) = (unit.source.name.as_str(), &unit.program, &unit.source.text);
        self.j.status = "unfixable";
        self.j.executions = executions;
        self.j.buggy = buggy;
        let b = &unfixable.requirement.bug;
        self.j.errors = report::bug_entries(prog, [b]);
        self.j.reason = Some(unfixable.reason.clone());
        self.sarif_errors = self.j.errors.clone();
        self.j.suggestion = unfixable.suggestion.map(|sg| {
            let span = prog.stmts[sg.stmt].span;
            report::SuggestionJson {
                line: span.line,
                column: span.column,
                order: sg.order.c_name(),
                previous: sg.previous.c_name(),
            }
        });
        if !self.json {
            let mut g = unfixable.requirement.graph.clone();
            g.bugs = vec![b.clone()];
            let color = super::render::options().color_err;
            let text = report::unfixable_text(name, (prog, src), &g, b, (&unfixable.reason, color));
            let _ = writeln!(err, "{text}");
            if let Some(sg) = &self.j.suggestion {
                let _ = writeln!(
                    err,
                    "suggestion (not a fence fix): make the access at {name}:{}:{} \
                     memory_order_{} (it is memory_order_{}); with seq_cst fences this \
                     execution is then forbidden",
                    sg.line, sg.column, sg.order, sg.previous
                );
            }
        }
        EXIT_UNFIXABLE
    }

    /// A fix: its JSON fields, the summary (on `err`), the proof when asked for, then the
    /// patch (on `out`) or the written files. `Err`: the run ends with that code and no
    /// document.
    fn fixed(&mut self, repair: Repair, out: Out, err: Out) -> Result<i32, i32> {
        let Repair::Fixed {
            solution,
            positions,
            files,
            verified,
            executions,
            buggy,
            mut timings,
            errors,
        } = repair
        else {
            return Err(EXIT_INTERNAL);
        };
        self.j.status = "fixed";
        if self.common.format == Format::Sarif {
            // The same edits `--write` applies: fences, comments and a missing include.
            self.sarif_edits = Some(files.clone());
            self.sarif_errors = errors;
        }
        self.fixed_json(&solution, &positions, &files, verified, (executions, buggy));
        if !self.json {
            self.notes(&solution, err);
            if !super::render::options().quiet {
                self.summary(&solution, &positions, verified, err);
            }
        }
        if self.opts.prove {
            self.prove(&solution, &positions, &mut timings, out, err)?;
        }
        timings.total = clock::cpu_seconds() - self.started;
        self.j.timings = self.opts.timings.then_some(timings);
        let cwd = std::env::current_dir().ok();
        let diff = self.unit.patch(&files, cwd.as_deref());
        if !self.opts.write {
            if !self.json {
                let _ = write!(out, "{diff}");
            }
            self.j.diff = Some(diff);
            return Ok(EXIT_BUG);
        }
        self.write(&files, err)?;
        self.j.diff = Some(diff);
        Ok(if self.opts.exit_non_zero_on_fix {
            EXIT_BUG
        } else {
            EXIT_OK
        })
    }

    /// The JSON fields of a fix.
    fn fixed_json(
        &mut self,
        solution: &Solution,
        positions: &[Position],
        files: &[FileRewrite],
        verified: Verified,
        (executions, buggy): (u64, u64),
    ) {
        let (name, prog) = (self.unit.source.name.as_str(), &self.unit.program);
        let j = &mut self.j;
        j.iterations = Some(solution.iterations);
        j.mode = solution.mode;
        j.fell_back = self.opts.mode == Mode::Auto && solution.mode == Mode::Fast;
        j.lazy_after = solution.lazy_after;
        j.fences = report::fence_entries(solution, positions, &prog.sources);
        j.accesses = report::orders::access_entries(prog, &solution.accesses);
        j.files = files
            .iter()
            .map(|f| prog.sources.name_of(f.file, name).to_string())
            .collect();
        if let Some(m) = self.common.model.machine() {
            for (f, fj) in solution.fences.iter().zip(&mut j.fences) {
                fj.instruction = Some(m.fence_instruction(f.order).unwrap_or("none"));
            }
        }
        j.inserted = solution.inserted;
        j.strengthened = solution.strengthened;
        j.weight = solution.weight;
        if matches!(self.opts.cost, Cost::X86 | Cost::Armv8) {
            j.price = Some(solution.price);
        }
        j.verified = Some(verified);
        j.executions = executions;
        j.buggy = buggy;
    }

    /// The notes on how a fix was found (`--collect-limit` reached, `--mode auto` fell back).
    fn notes(&self, solution: &Solution, err: Out) {
        let name = self.name();
        if let Some(n) = solution.lazy_after {
            let rest = match solution.iterations.saturating_sub(1) {
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
        if self.j.fell_back {
            let _ = writeln!(
                err,
                "{name}: note: the optimal search did not finish within {} s; this fix \
                 comes from the fast mode ({} round{}) and may use more fences than the \
                 optimum (--mode optimal waits for it)",
                self.opts.optimal_limit.as_secs_f64(),
                solution.iterations,
                if solution.iterations == 1 { "" } else { "s" }
            );
        }
    }

    /// The fences, their instructions on a hardware model and the price (prose, on `err`).
    fn summary(&self, solution: &Solution, positions: &[Position], verified: Verified, err: Out) {
        let (name, prog) = (self.name(), &self.unit.program);
        let text = report::fix_summary((name, &prog.sources), solution, positions, verified);
        let _ = write!(err, "{text}");
        let accesses = report::orders::access_lines(name, prog, &solution.accesses);
        let _ = write!(err, "{accesses}");
        if let Some(m) = self.common.model.machine() {
            for fj in &self.j.fences {
                let _ = writeln!(
                    err,
                    "  {}:{}:{}: memory_order_{} fence = {} on {}",
                    fj.file.as_deref().unwrap_or(name),
                    fj.line,
                    fj.column,
                    fj.order,
                    fj.instruction.unwrap_or("none"),
                    m.name()
                );
            }
        }
        let cost = self.opts.cost;
        if matches!(cost, Cost::X86 | Cost::Armv8) {
            let price = solution.price;
            let _ = writeln!(
                err,
                "{name}: price under the {} cost model: {price}",
                cost.name()
            );
        }
    }

    /// `--prove-optimal`: re-checks every weaker variant. `Err`: a variant without bug (the
    /// fix is not minimal) or a variant that could not be built — an internal error.
    fn prove(
        &mut self,
        solution: &Solution,
        positions: &[Position],
        timings: &mut Timings,
        out: Out,
        err: Out,
    ) -> Result<(), i32> {
        let proving = clock::cpu_seconds();
        let opts = explore_options(self.common, self.opts.goal, self.suppress.clone());
        let entries = api::prove(self.unit, &opts, solution, positions);
        clear_progress();
        timings.prove = clock::cpu_seconds() - proving;
        let name = self.unit.source.name.as_str();
        let entries = match entries {
            Ok(entries) => entries,
            Err(e) => {
                let _ = writeln!(err, "{name}: internal error: {e}");
                return Err(EXIT_INTERNAL);
            }
        };
        if !self.json {
            let _ = write!(err, "{}", report::proof_text(name, &entries));
        }
        let minimal = entries.iter().all(|e| e.buggy > 0);
        if minimal {
            self.j.proof = Some(entries);
            return Ok(());
        }
        if self.common.format == Format::Json {
            self.j.proof = Some(entries);
            timings.total = clock::cpu_seconds() - self.started;
            self.j.timings = self.opts.timings.then_some(*timings);
            let text = serde_json::to_string_pretty(&self.j).unwrap_or_default();
            let _ = writeln!(out, "{text}");
        } else if self.json {
            let _ = write!(err, "{}", report::proof_text(name, &entries));
        }
        Err(EXIT_INTERNAL)
    }

    /// `--write`: the fixed files, all or none. `Err`: none was written (exit 3).
    fn write(&self, files: &[FileRewrite], err: Out) -> Result<(), i32> {
        let unit = self.unit;
        match write_fix(&self.common.file, &unit.source.text, &unit.program, files) {
            Ok(()) => {
                if !self.json {
                    for f in &self.j.files {
                        let _ = writeln!(err, "{f}: written");
                    }
                }
                Ok(())
            }
            Err(e) => {
                let none = if files.len() > 1 {
                    "; no file was written"
                } else {
                    ""
                };
                let at = display_path(&e.path);
                let _ = writeln!(err, "{at}:1:1: error: not written: {}{none}", e.error);
                Err(EXIT_INPUT)
            }
        }
    }

    /// The JSON or SARIF document (text and DOT have none).
    fn document(&self, out: Out) {
        let unit = self.unit;
        match self.common.format {
            Format::Json => {
                let text = serde_json::to_string_pretty(&self.j).unwrap_or_default();
                let _ = writeln!(out, "{text}");
            }
            Format::Sarif => {
                let files = sarif::UnitFiles {
                    main: &unit.source.name,
                    src: &unit.source.text,
                    prog: &unit.program,
                };
                let edits = self.sarif_edits.as_deref();
                let run = sarif::fix_run(&files, &self.j, &self.sarif_errors, edits);
                let _ = writeln!(out, "{}", serde_json::to_string(&run).unwrap_or_default());
            }
            Format::Text | Format::Dot => {}
        }
    }
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
    // An interrupt waits until every file is written (or none is).
    let _no_interrupt = super::progress::writing();
    write::write_all(&changes)
}
