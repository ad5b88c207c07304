//! `fensyn check FILE`: calls [`api::check`] and renders its report as text, JSON, SARIF or
//! DOT (the report to `out`, notes and errors to `err`).

use super::{
    clear_progress, display_path, limits, load_unit, needs_graphs, FileArgs, Format, Out, EXIT_BUG,
    EXIT_INCOMPLETE, EXIT_INPUT, EXIT_OK,
};
use crate::api::{self, Report, Unit};
use crate::checker::{self, Limits};
use crate::report::{self, hardware::Hardware, sarif, CheckJson};

pub(super) fn cmd_check(
    common: &FileArgs,
    first: bool,
    on_hardware: Option<Hardware>,
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
    let unit = match load_unit(common, err) {
        Ok(u) => u,
        Err(code) => return code,
    };
    let (name, text) = (&unit.source.name, &unit.source.text);
    let silencing = match super::suppress::load(name, text, &unit.program, err) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let equiv = if on_hardware.is_some() {
        if let Err(code) = needs_graphs(common, "--on-hardware ranks the C11 executions", err) {
            return code;
        }
        Some(checker::Equiv::Graph)
    } else {
        common.equiv
    };
    let opts = api::Options {
        model: common.model,
        equiv,
        limits: Limits {
            dependencies: on_hardware.is_some_and(|h| h.needs_dependencies()),
            suppress: silencing.filter(),
            ..limits(common)
        },
        first,
        keep_buggy: 1000,
    };
    let started = std::time::Instant::now();
    let rep = match api::check(&unit, &opts) {
        Ok(r) => r,
        Err(d) => {
            let _ = writeln!(err, "{d}");
            return EXIT_INPUT;
        }
    };
    clear_progress();
    super::render::verbose_stats(err, name, &rep.result.stats, started.elapsed());
    silencing.note(name, &unit.program, err);
    if let Some(dead_ends) = rep.rf_gave_up {
        let _ = writeln!(
            err,
            "{}: note: the reads-from exploration gave up after {dead_ends} dead ends; \
             exploring execution graphs instead (--equiv graph)",
            unit.source.name
        );
    }
    render(common, &unit, &rep, on_hardware, out, err);
    if rep.is_buggy() {
        EXIT_BUG
    } else if rep.is_incomplete() && !bound_accepted(common, &rep.result.stats, err) {
        EXIT_INCOMPLETE
    } else {
        EXIT_OK
    }
}

/// Writes the report in `common.format`.
fn render(
    common: &FileArgs,
    unit: &Unit,
    rep: &Report,
    on_hardware: Option<Hardware>,
    out: Out,
    err: Out,
) {
    let (name, prog, src) = (&unit.source.name, &unit.program, &unit.source.text);
    let (stats, buggy) = (&rep.result.stats, &rep.result.buggy);
    match common.format {
        Format::Json => {
            let j = CheckJson {
                file: name,
                model: common.model,
                equiv: rep.explored_as.equiv,
                explored_as: (rep.explored_as.model != common.model)
                    .then_some(rep.explored_as.model),
                complete: stats.incomplete.is_none() && !stats.stopped && stats.bounded == 0,
                executions: stats.executions,
                blocked: stats.blocked,
                bounded: stats.bounded,
                bounded_accepted: stats.bounded_accepted,
                buggy: stats.buggy,
                errors: report::counted_entries(prog, &rep.result.tally),
                on_hardware: on_hardware.map(|h| report::hardware::on_hardware(prog, buggy, h)),
            };
            let text = serde_json::to_string_pretty(&j).unwrap_or_default();
            let _ = writeln!(out, "{text}");
        }
        Format::Text => {
            let scope = &rep.explored_as;
            let style = super::render::text_style();
            let text =
                report::check_text(name, prog, src, common.model, scope, &rep.result, &style);
            let _ = write!(out, "{text}");
            if let Some(h) = on_hardware.filter(|_| !buggy.is_empty()) {
                let j = report::hardware::on_hardware(prog, buggy, h);
                let _ = write!(out, "{}", report::hardware::on_hardware_text(name, &j));
            }
        }
        Format::Sarif => {
            let errors = report::counted_entries(prog, &rep.result.tally);
            let why = match &stats.incomplete {
                Some(why) => Some(report::incomplete_text(why)),
                None if stats.bounded > 0 => Some(format!(
                    "{} executions cut at the loop bound (--unroll {})",
                    stats.bounded, common.unroll
                )),
                None => None,
            };
            let files = sarif::UnitFiles {
                main: name,
                src,
                prog,
            };
            // The code flow of an error: its shortest execution among those kept.
            let graphs: Vec<_> = rep.result.tally.shortest.iter().chain(buggy).collect();
            let run = sarif::check_run(&files, &errors, &graphs, why);
            let _ = writeln!(out, "{}", serde_json::to_string(&run).unwrap_or_default());
        }
        Format::Dot => match rep.result.tally.shortest.as_ref().or(buggy.first()) {
            Some(g) => {
                let _ = write!(out, "{}", report::execution_dot(prog, g, common.model));
            }
            None => {
                let _ = writeln!(err, "{name}: no buggy execution to draw");
            }
        },
    }
}

/// Whether the only cut of an exploration is the loop bound and fensyn.toml accepts it for the
/// file (`[[per-file]] accept-bound = true`); then a note says what was not explored.
pub(super) fn bound_accepted(common: &FileArgs, stats: &checker::Stats, err: Out) -> bool {
    let only_bound = stats.incomplete.is_none() && !stats.stopped && stats.bounded > 0;
    if !(only_bound && common.accept_bound) {
        return false;
    }
    let _ = writeln!(
        err,
        "{}: note: {} cut at the loop bound {}, which fensyn.toml accepts for this file \
         (accept-bound): not reported as incomplete",
        display_path(&common.file),
        report::executions(stats.bounded),
        common.unroll
    );
    true
}
