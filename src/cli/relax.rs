//! `fensyn relax FILE`: calls [`api::relax`] and renders the [`Relaxation`]: the patch on `out`
//! (nothing else), the table of orders before and after and the summary on `err`; with
//! `--format json` one object per file on `out` (the batch makes the array) and no prose.
//! `--write` writes through the same all-or-nothing path as `fix --write`.
//!
//! Exit codes: 0 nothing to weaken, or weakened and written; 1 a patch was printed, or the
//! program has a bug (as `check`: relax needs a correct program, `fix` first); 3 input error;
//! 4 the check is incomplete (nothing is weakened on a check that is not a proof); 5 internal
//! error (the relaxation did not re-check clean).

use super::batch::Done;
use super::{
    clear_progress, display_path, limits, load_unit, write_fix, CommonArgs, FileArgs, Format, Out,
    EXIT_BUG, EXIT_INCOMPLETE, EXIT_INPUT, EXIT_INTERNAL, EXIT_OK,
};
use crate::api::{self, Relaxation, Relaxed, Report, Unit};
use crate::report::{self, orders::RelaxRow};
use crate::synth::relax::Item;
use crate::synth::Cost;
use serde::Serialize;

pub(super) const RELAX_EXAMPLES: &str = "Examples:
  fensyn relax fixtures/relax/mp.c | git apply
      weaken every access and fence as far as the program stays correct
  fensyn relax --write fixtures/relax/
      rewrite the files (atomically, after a re-check)
  fensyn relax --model armv8 --format json fixtures/relax/mp.c
      what the code compiled for ARMv8 may drop, as JSON

Exit codes: 0 nothing to weaken, or weakened and written; 1 a patch was printed, or the
program has a bug (fix it first); 3 input error; 4 incomplete (nothing weakened);
5 internal error.";

#[derive(clap::Args, Debug, Clone)]
pub struct RelaxArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Write the relaxed program back to FILE (atomically, after it was re-checked).
    #[arg(long)]
    pub write: bool,
    /// The relaxation of least total weight (or instruction price, with --cost x86|armv8)
    /// instead of a maximal one found greedily: a branch and bound that may need many more
    /// checks (exponentially many in the worst case).
    #[arg(long)]
    pub optimal: bool,
    /// With --optimal: what to minimise: the weight (count and weight: rel = acq = 1,
    /// acq_rel = 2, seq_cst = 3), or the instructions' price on x86 or ARMv8, then the weight
    /// [default: weight]
    #[arg(long, value_enum, requires = "optimal")]
    pub cost: Option<Cost>,
}

/// `fensyn relax --format json`: one file.
#[derive(Serialize)]
struct RelaxJson<'a> {
    file: &'a str,
    model: crate::checker::Model,
    /// `relaxed` (some order weakened), `minimal` (none can be), `buggy`, `incomplete`.
    status: &'static str,
    rows: Vec<RelaxRow>,
    /// Exhaustive checks of the search, and per access or fence.
    checks: usize,
    checks_per_access: f64,
    /// Verdicts monotonicity gave without a check.
    implied: usize,
    /// Checks that were not a proof (their weakening was not taken).
    inconclusive: usize,
    /// Executions of the re-check of the relaxed program (the program as written when
    /// buggy or incomplete).
    executions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    errors: Vec<report::ErrorEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
    /// Statements with atomic operations left as written (`line`, `column`, `calls`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_relaxed: Vec<SkippedJson>,
}

#[derive(Serialize)]
struct SkippedJson {
    line: usize,
    column: usize,
    /// `access` or `fence`.
    kind: &'static str,
    calls: usize,
}

/// `fensyn relax` on one file: its exit code and, for the summary across files, what exit 0
/// or 1 meant (`relaxed in place` or `already minimal`; `with a relaxation` or `buggy`).
pub(super) fn cmd_relax(args: &RelaxArgs, common: &FileArgs, out: Out, err: Out) -> Done {
    let mut status = "";
    let code = relax_file(args, common, &mut status, out, err);
    let outcome = match (code, status) {
        (EXIT_OK, "relaxed") => Some("relaxed in place"),
        (EXIT_OK, "minimal") => Some("already minimal"),
        (EXIT_BUG, "relaxed") => Some("with a relaxation"),
        (EXIT_BUG, "buggy") => Some("buggy"),
        _ => None,
    };
    Done { code, outcome }
}

/// Relaxes one file; `status` receives the JSON status of the result.
fn relax_file(
    args: &RelaxArgs,
    common: &FileArgs,
    status: &mut &'static str,
    out: Out,
    err: Out,
) -> i32 {
    let unit = match load_unit(common, err) {
        Ok(u) => u,
        Err(code) => return code,
    };
    let opts = api::Options {
        model: common.model,
        equiv: common.equiv,
        limits: limits(common),
        ..api::Options::default()
    };
    let ropts = api::RelaxOptions {
        optimal: args.optimal,
        cost: args.cost.unwrap_or_default(),
        naive: false,
    };
    let result = api::relax(&unit, &opts, &ropts);
    clear_progress();
    let r = match result {
        Ok(r) => r,
        Err(d) => {
            let _ = writeln!(err, "{d}");
            return EXIT_INPUT;
        }
    };
    let json = common.format == Format::Json;
    let mut j = RelaxJson {
        file: &unit.source.name,
        model: common.model,
        status: "minimal",
        rows: Vec::new(),
        checks: 0,
        checks_per_access: 0.0,
        implied: 0,
        inconclusive: 0,
        executions: 0,
        reason: None,
        errors: Vec::new(),
        diff: None,
        not_relaxed: Vec::new(),
    };
    let code = match r {
        Relaxation::Buggy(report) => buggy(&unit, common, &report, &mut j, err),
        Relaxation::Incomplete(report) => incomplete(&unit, common, &report, &mut j, err),
        Relaxation::Internal(msg) => {
            let _ = writeln!(err, "{}: internal error: {msg}", unit.source.name);
            return EXIT_INTERNAL;
        }
        Relaxation::Relaxed(rel) => match relaxed(args, common, &unit, &rel, &mut j, out, err) {
            Ok(code) => code,
            Err(code) => return code,
        },
    };
    if json {
        let text = serde_json::to_string_pretty(&j).unwrap_or_default();
        let _ = writeln!(out, "{text}");
    }
    *status = j.status;
    code
}

/// The program has a bug: say so (prose unless JSON) and suggest `fix`.
fn buggy(unit: &Unit, common: &FileArgs, report: &Report, j: &mut RelaxJson, err: Out) -> i32 {
    let (prog, name) = (&unit.program, unit.source.name.as_str());
    j.status = "buggy";
    j.executions = report.result.stats.executions;
    if let Some(g) = report.result.buggy.first() {
        j.errors = report::bug_entries(prog, &g.bugs);
    }
    let reason = format!(
        "the program has a bug under {}: relax needs a correct program; run `fensyn fix {name}` \
         first",
        common.model
    );
    if common.format != Format::Json {
        for e in &j.errors {
            let file = e.file.as_deref().unwrap_or(name);
            let _ = writeln!(err, "{file}:{}:{}: error: {}", e.line, e.column, e.message);
        }
        let _ = writeln!(err, "{name}: {reason}");
    }
    j.reason = Some(reason);
    EXIT_BUG
}

/// The check of the program as written is not a proof: nothing is weakened.
fn incomplete(unit: &Unit, common: &FileArgs, report: &Report, j: &mut RelaxJson, err: Out) -> i32 {
    let stats = &report.result.stats;
    j.status = "incomplete";
    j.executions = stats.executions;
    let why = match &stats.incomplete {
        Some(why) => report::incomplete_text(why),
        None => format!(
            "{} cut at the loop bound (--unroll)",
            report::executions(stats.bounded)
        ),
    };
    let reason = format!(
        "the check is incomplete: {why}; relax weakens nothing on a check that is not a proof"
    );
    if common.format != Format::Json {
        let _ = writeln!(err, "{}: {reason}", unit.source.name);
    }
    j.reason = Some(reason);
    EXIT_INCOMPLETE
}

/// A relaxation: the table and summary on `err`, the patch on `out` or the files written.
/// `Err`: the run ends with that code and no document.
fn relaxed(
    args: &RelaxArgs,
    common: &FileArgs,
    unit: &Unit,
    rel: &Relaxed,
    j: &mut RelaxJson,
    out: Out,
    err: Out,
) -> Result<i32, i32> {
    let prog = &unit.program;
    j.rows = rel
        .items
        .iter()
        .map(|i| {
            let row = RelaxRow::new(prog, i.stmt, i.item.name(), (i.before, i.after), i.checks);
            match i.failure {
                Some(f) => row.with_failure(f),
                None => row,
            }
        })
        .collect();
    j.checks = rel.checks();
    j.checks_per_access = if rel.items.is_empty() {
        0.0
    } else {
        (rel.checks() as f64 / rel.items.len() as f64 * 100.0).round() / 100.0
    };
    j.implied = rel.implied;
    j.not_relaxed = rel
        .skipped
        .iter()
        .map(|k| {
            let span = prog.stmts[k.stmt].span;
            SkippedJson {
                line: span.line,
                column: span.column,
                kind: if k.fence { "fence" } else { "access" },
                calls: k.calls,
            }
        })
        .collect();
    j.inconclusive = rel.inconclusive;
    j.executions = rel.recheck.result.stats.executions;
    j.status = if rel.changed() { "relaxed" } else { "minimal" };
    let json = common.format == Format::Json;
    if !json {
        summary(unit, common, rel, j, err);
    }
    if !rel.changed() {
        return Ok(EXIT_OK);
    }
    let cwd = std::env::current_dir().ok();
    let diff = unit.patch(&rel.files, cwd.as_deref());
    j.diff = Some(diff.clone());
    if !args.write {
        if !json {
            let _ = write!(out, "{diff}");
        }
        return Ok(EXIT_BUG);
    }
    match write_fix(&common.file, &unit.source.text, prog, &rel.files) {
        Ok(()) => {
            if !json {
                for f in &rel.files {
                    let file = prog.sources.name_of(f.file, &unit.source.name);
                    let _ = writeln!(err, "{file}: written");
                }
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            let at = display_path(&e.path);
            let _ = writeln!(err, "{at}:1:1: error: not written: {}", e.error);
            Err(EXIT_INPUT)
        }
    }
}

/// The table and the summary lines (prose, on `err`).
fn summary(unit: &Unit, common: &FileArgs, rel: &Relaxed, j: &RelaxJson, err: Out) {
    let name = unit.source.name.as_str();
    if !j.rows.is_empty() {
        let _ = write!(err, "{}", report::orders::relax_table(name, &j.rows));
    }
    let weakened = rel
        .items
        .iter()
        .filter(|i| i.after.is_some() && Some(i.before) != i.after)
        .count();
    let removed = rel.items.iter().filter(|i| i.after.is_none()).count();
    let fences = rel
        .items
        .iter()
        .filter(|i| matches!(i.item, Item::Fence { .. }))
        .count();
    let _ = writeln!(
        err,
        "{name}: {weakened} of {} order{} weakened, {removed} of {fences} fence{} removed under {}; \
         {} checks ({:.2} per access or fence), {} answered by monotonicity{}",
        rel.items.len(),
        if rel.items.len() == 1 { "" } else { "s" },
        if fences == 1 { "" } else { "s" },
        common.model,
        j.checks,
        j.checks_per_access,
        rel.implied,
        match rel.inconclusive {
            0 => String::new(),
            n => format!(", {n} inconclusive (kept the stronger order)"),
        }
    );
    for k in &rel.skipped {
        let span = unit.program.stmts[k.stmt].span;
        let _ = writeln!(
            err,
            "{name}:{}:{}: note: not relaxed: {}",
            span.line,
            span.column,
            if k.fence {
                "the fence is not a fence call of its own statement (a macro use, which may \
                 hold more than the fence)"
                    .to_string()
            } else if k.calls > 1 {
                format!(
                    "the statement holds {} atomic operations (relax changes one per statement)",
                    k.calls
                )
            } else {
                "its order cannot be written here (a macro or wrapper around the call)".into()
            }
        );
    }
    let _ = writeln!(
        err,
        "{name}: re-checked: no bugs in {}",
        report::executions(rel.recheck.result.stats.executions)
    );
    if let Some(m) = common.model.machine() {
        let _ = writeln!(
            err,
            "{name}: note: relaxed for {} (the orders the compiled code may drop there; \
             under rc11 some of them may be needed)",
            m.name()
        );
    }
}
