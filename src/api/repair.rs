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
