//! The repair pipeline of one translation unit: check → synthesise → rewrite → re-check.
//!
//! [`repair_commented`] is the whole of `fensyn fix` on a parsed program, in memory: it explores
//! the program, synthesises the cheapest fences, writes them into the source (never to disk),
//! re-parses the rewritten text and re-checks it. A fix that does not re-parse or re-check
//! clean is [`Repair::Internal`], never a [`Repair::Fixed`].
//!
//! **Invariants:** pure apart from the clock ([`super::clock`]) and the exploration's progress
//! callback; the rewritten files of a `Fixed` are those whose re-check found no bug.

use super::clock;
use crate::checker::{self, CheckOptions, Equiv, Limits, Model};
use crate::frontend;
use crate::ir::Program;
use crate::report::{self, Timings, Verified};
use crate::rewrite::{self, Position};
use crate::synth::{self, Mode, Outcome};
use crate::trace;
use std::ops::ControlFlow::{self, Break, Continue};
use std::time::Instant;

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
    let mut run = Pipeline {
        started,
        prog,
        model,
        opts,
        graphs: Limits {
            equiv: Equiv::Graph,
            ..lim.clone()
        },
        explore_seconds: 0.0,
        optimal_until: (opts.mode == Mode::Auto).then(|| Instant::now() + opts.optimal_limit),
        verifier: Verifier {
            input: (name, src, prog),
            model,
            lim: &lim,
            comments,
            checked: None,
            failure: None,
            seconds: 0.0,
        },
    };
    let mut optimal = None;
    if !matches!(opts.mode, Mode::Fast | Mode::Lazy) {
        optimal = match run.optimal() {
            Continue(found) => found,
            Break(stopped) => return stopped,
        };
    }
    let found = match optimal {
        Some(found) => found,
        None => match run.fast() {
            Continue(found) => found,
            Break(stopped) => return stopped,
        },
    };
    run.finish(found)
}

/// A fix found by synthesis: the solution, the executions and buggy executions explored, and
/// the distinct errors it removes.
type Found = (synth::Solution, u64, u64, Vec<report::ErrorEntry>);

/// What the fast and lazy rounds verified in the source ([`Verifier::verify`]).
type Checked = (Vec<rewrite::FileRewrite>, Vec<Position>, Verified);

/// The state of one [`repair_commented`] run.
struct Pipeline<'a> {
    /// The CPU clock when the run started.
    started: f64,
    prog: &'a Program,
    model: Model,
    opts: &'a synth::SynthOptions,
    /// The caller's limits, exploring graphs (synthesis needs every graph).
    graphs: Limits,
    /// CPU seconds spent exploring the input (the rest until synthesis ends is synthesis).
    explore_seconds: f64,
    /// `--mode auto`: the optimal pipeline (collection and solver) runs until this instant;
    /// past it the fast loop runs instead.
    optimal_until: Option<Instant>,
    verifier: Verifier<'a>,
}

/// The `fast::Verify` hook of the lazy and fast rounds: they write their fences into the
/// source and re-check it there before exploring the program in memory, so the round that
/// ends the search is checked once, by the re-check every fix gets, not twice.
struct Verifier<'a> {
    /// The unit's name, source and program.
    input: (&'a str, &'a str, &'a Program),
    model: Model,
    lim: &'a Limits,
    comments: bool,
    /// The last candidate that re-checked clean, written.
    checked: Option<Checked>,
    /// Why the search was stopped by a re-check.
    failure: Option<Repair>,
    /// CPU seconds spent re-checking.
    seconds: f64,
}

impl Verifier<'_> {
    fn verify(&mut self, candidate: &synth::Solution) -> synth::fast::Verdict {
        let started = clock::cpu_seconds();
        let (name, src, prog) = self.input;
        let result = write_and_recheck(
            name,
            src,
            prog,
            self.model,
            self.lim,
            candidate,
            self.comments,
        );
        let verdict = match result {
            Ok(done) => {
                self.checked = Some(done);
                synth::fast::Verdict::Clean
            }
            Err(Recheck::Buggy) => synth::fast::Verdict::Buggy,
            Err(Recheck::Incomplete(why, executions)) => {
                self.failure = Some(Repair::Incomplete { why, executions });
                synth::fast::Verdict::Stop
            }
            Err(Recheck::Internal(why)) => {
                self.failure = Some(Repair::Internal(why));
                synth::fast::Verdict::Stop
            }
            Err(Recheck::NotWritable(why)) => {
                self.failure = Some(Repair::NotWritable(why));
                synth::fast::Verdict::Stop
            }
        };
        self.seconds += clock::cpu_seconds() - started;
        verdict
    }
}

impl Pipeline<'_> {
    /// The optimal search: buggy graphs become requirements as they are found (memory: the
    /// distinct requirements), then the solver. `Continue(None)`: out of the optimal limit's time,
    /// the fast loop runs instead; `Break`: the result without fix.
    fn optimal(&mut self) -> ControlFlow<Repair, Option<Found>> {
        let user = self.graphs.deadline;
        let deadline = match (self.optimal_until, user) {
            (Some(ours), Some(user)) => Some(ours.min(user)),
            (ours, user) => ours.or(user),
        };
        // Whether a timeout of the collection is the optimal limit's, not `--timeout`'s.
        let ours = self
            .optimal_until
            .is_some_and(|d| user.is_none_or(|u| d < u));
        let within = Limits {
            deadline,
            ..self.graphs.clone()
        };
        let (res, capped) = trace::collect::explore_within(
            self.prog,
            self.model,
            within.clone(),
            clock::cpu_seconds,
            self.opts.collect_limit,
        );
        self.explore_seconds += clock::cpu_seconds() - self.started - res.collect_seconds;
        match res.stats.incomplete {
            // Out of time while collecting: fall back to the fast loop.
            Some(checker::Incomplete::Timeout) if ours => Continue(None),
            Some(why) => Break(Repair::Incomplete {
                why,
                executions: res.stats.executions,
            }),
            // Past the collection limit: the requirements left are found in rounds, from the
            // cheapest fences for those collected (the same minimum).
            None if capped => self.capped_rounds(res, &within, ours),
            None => self.solve(res),
        }
    }

    /// The optimal search past `--collect-limit`: the rounds of the lazy mode, seeded with
    /// the requirements collected.
    fn capped_rounds(
        &mut self,
        res: trace::collect::Explored,
        within: &Limits,
        ours: bool,
    ) -> ControlFlow<Repair, Option<Found>> {
        let (executions, buggy) = (res.stats.executions, res.stats.buggy);
        let collected = res.requirements.len();
        let seed = synth::fast::Seed {
            requirements: res.requirements,
            bugs: res.bugs,
            executions,
            graphs: buggy as usize,
        };
        let verifier = &mut self.verifier;
        let mut hook = |c: &synth::Solution| verifier.verify(c);
        let search = synth::fast::Search {
            lazy: true,
            seed: Some(seed),
            verify: Some(&mut hook),
        };
        let (prog, model, cost) = (self.prog, self.model, self.opts.cost);
        let run = synth::fast::run(prog, model, within, cost, clock::cpu_seconds, search);
        self.explore_seconds += run.explore_seconds;
        match run.outcome {
            synth::fast::FastOutcome::Fixed { mut solution, bugs } => {
                solution.mode = Mode::Optimal;
                solution.lazy_after = Some(collected);
                let errors = report::bug_entries(prog, &bugs);
                Continue(Some((solution, executions, buggy, errors)))
            }
            synth::fast::FastOutcome::Unfixable(unfixable) => Break(Repair::Unfixable {
                unfixable,
                executions,
                buggy,
            }),
            // Out of time in the rounds: fall back to the fast loop.
            synth::fast::FastOutcome::Incomplete {
                why: checker::Incomplete::Timeout,
                ..
            } if ours => Continue(None),
            synth::fast::FastOutcome::Incomplete { why, executions } => {
                Break(Repair::Incomplete { why, executions })
            }
            // The collection found a bug, so the rounds cannot end clean.
            synth::fast::FastOutcome::Clean { .. } => {
                Break(Repair::Internal("the collected bugs disappeared".into()))
            }
        }
    }

    /// The solver over every requirement collected (none: the program is clean, or only
    /// cut at the loop bound).
    fn solve(&mut self, res: trace::collect::Explored) -> ControlFlow<Repair, Option<Found>> {
        let (executions, buggy) = (res.stats.executions, res.stats.buggy);
        if res.requirements.is_empty() {
            if res.stats.bounded > 0 {
                return Break(Repair::Incomplete {
                    why: checker::Incomplete::LoopBound {
                        unroll: self.graphs.unroll(),
                        cut: res.stats.bounded,
                    },
                    executions,
                });
            }
            return Break(Repair::Clean { executions });
        }
        let (prog, model, opts) = (self.prog, self.model, self.opts);
        let errors = report::bug_entries(prog, &res.bugs);
        let reqs = res.requirements;
        let outcome = match self.optimal_until {
            None => Some(synth::synthesize_requirements(prog, reqs, model, opts)),
            Some(d) => synth::synthesize_optimal_until(prog, reqs, model, opts.cost, d),
        };
        match outcome {
            Some(Outcome::Fixed(s)) => Continue(Some((s, executions, buggy, errors))),
            Some(Outcome::Unfixable(u)) => Break(Repair::Unfixable {
                unfixable: u,
                executions,
                buggy,
            }),
            // Out of time in the solver: fall back to the fast loop.
            None => Continue(None),
        }
    }

    /// The fast or lazy loop: one buggy execution at a time; `executions` and `buggy` then
    /// describe the first exploration of the input (stopped at its first buggy execution).
    fn fast(&mut self) -> ControlFlow<Repair, Found> {
        let verifier = &mut self.verifier;
        let mut hook = |c: &synth::Solution| verifier.verify(c);
        let search = synth::fast::Search {
            lazy: self.opts.mode == Mode::Lazy,
            seed: None,
            verify: Some(&mut hook),
        };
        let (prog, model, cost) = (self.prog, self.model, self.opts.cost);
        let run = synth::fast::run(prog, model, &self.graphs, cost, clock::cpu_seconds, search);
        self.explore_seconds += run.explore_seconds;
        let executions = run.rounds.first().map_or(0, |r| r.executions);
        match run.outcome {
            synth::fast::FastOutcome::Clean { executions } => Break(Repair::Clean { executions }),
            synth::fast::FastOutcome::Incomplete { why, executions } => {
                Break(Repair::Incomplete { why, executions })
            }
            synth::fast::FastOutcome::Unfixable(unfixable) => Break(Repair::Unfixable {
                unfixable,
                executions,
                buggy: 1,
            }),
            synth::fast::FastOutcome::Fixed { solution, bugs } => {
                Continue((solution, executions, 1, report::bug_entries(prog, &bugs)))
            }
        }
    }

    /// The fix found, written and re-checked (unless the last round already was), with the
    /// stage timings.
    fn finish(self, found: Found) -> Repair {
        let started = self.started;
        let (solution, executions, buggy, errors) = found;
        let mut verifier = self.verifier;
        if let Some(stopped) = verifier.failure.take() {
            return stopped;
        }
        let synthesised = clock::cpu_seconds();
        let (files, positions, verified) = match verifier.checked.take() {
            Some(done) => done,
            None => {
                let (name, src, prog) = verifier.input;
                let (model, lim, comments) = (verifier.model, verifier.lim, verifier.comments);
                match write_and_recheck(name, src, prog, model, lim, &solution, comments) {
                    Ok(done) => done,
                    Err(why) => return why.into_repair(),
                }
            }
        };
        // The sites as written (a fence inside a macro use moved after its statement).
        let solution = rewrite::placement::relocate(self.prog, &solution).unwrap_or(solution);
        let (explore, verify) = (self.explore_seconds, verifier.seconds);
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
                check: explore,
                synth: synthesised - started - explore - verify,
                recheck: clock::cpu_seconds() - synthesised + verify,
                ..Timings::default()
            },
            errors,
        }
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

impl Recheck {
    /// The result of a fix whose final re-check failed.
    fn into_repair(self) -> Repair {
        match self {
            Recheck::Internal(why) => Repair::Internal(why),
            Recheck::NotWritable(why) => Repair::NotWritable(why),
            Recheck::Incomplete(why, executions) => Repair::Incomplete { why, executions },
            Recheck::Buggy => Repair::Internal(
                "the fixed program still has a buggy execution; no fix is shown".into(),
            ),
        }
    }
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
    let planned = rewrite::placement::relocate_planned(prog, &rewrite::plan(solution, prog))
        .map_err(Recheck::NotWritable)?;
    let changes = rewrite::orders::changes(solution);
    let written = rewrite::orders::rewrite_fix(src, prog, &planned, &changes, comments);
    let (files, positions) = match written {
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
                ..super::prove::limits_for_variant(prog, &fixed_prog, &edits_of(&files), lim)
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

/// The edits of each rewritten file.
fn edits_of(files: &[rewrite::FileRewrite]) -> Vec<rewrite::FileEdits> {
    files
        .iter()
        .map(|f| rewrite::FileEdits {
            file: f.file,
            edits: f.edits.clone(),
        })
        .collect()
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
