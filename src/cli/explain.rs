//! `fensyn explain FILE`: why the program is buggy and why each fence of its fix is there.
//!
//! Exit codes: 0 no bug, 1 bug found (and explained), 2 not fixable with fences (the reason is
//! printed), 3 input or usage error (also `--format json`, which explain does not have),
//! 4 incomplete.

use super::{
    clear_progress, display_path, limits, load, CommonArgs, FileArgs, Format, Out, EXIT_BUG,
    EXIT_INCOMPLETE, EXIT_INPUT, EXIT_OK, EXIT_UNFIXABLE,
};
use crate::checker::{self, CheckOptions, ExecutionGraph};
use crate::report::{self, explain};
use crate::rewrite;
use crate::synth::{self, Cost, Mode, Outcome};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Also write the execution graph, with the fix's fences and the cycle they close, as
    /// Graphviz DOT to this file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,
    /// The synthesis mode, as for `fix`.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub mode: Mode,
    /// The cost minimised, as for `fix`.
    #[arg(long, value_enum, default_value_t = Cost::Count)]
    pub cost: Cost,
}

/// Writes `dot` to `path` (`-`: `out`); on failure prints an error and returns the exit code.
fn write_dot(path: &Path, dot: &str, out: Out, err: Out) -> Result<(), i32> {
    if path.as_os_str() == "-" {
        let _ = write!(out, "{dot}");
        return Ok(());
    }
    std::fs::write(path, dot).map_err(|e| {
        let _ = writeln!(err, "{}:1:1: error: cannot write: {e}", display_path(path));
        EXIT_INPUT
    })
}

pub(super) fn cmd_explain(args: &ExplainArgs, common: &FileArgs, out: Out, err: Out) -> i32 {
    let name = display_path(&common.file);
    if let Err(code) = super::needs_graphs(
        common,
        "explain shows a buggy execution graph and its fix",
        err,
    ) {
        return code;
    }
    let (src, prog) = match load(common, err) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let silencing = match super::suppress::load(&name, &src, &prog, err) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let lim = checker::Limits {
        suppress: silencing.filter(),
        ..limits(common)
    };
    let res = checker::check(
        &prog,
        &CheckOptions {
            model: common.model,
            limits: lim.clone(),
            first: false,
            keep_buggy: usize::MAX,
        },
    );
    clear_progress();
    silencing.note(&name, &prog, err);
    let stats = &res.stats;
    if let Some(why) = &stats.incomplete {
        let _ = writeln!(
            err,
            "{name}: exploration incomplete: {}",
            report::incomplete_text(why)
        );
        return EXIT_INCOMPLETE;
    }
    let Some(first) = res.buggy.first() else {
        return nothing_to_explain(common, stats, lim.unroll(), out, err);
    };
    let opts = synth::SynthOptions {
        mode: args.mode,
        cost: args.cost,
        ..synth::SynthOptions::default()
    };
    let shown = Shown {
        common,
        name: &name,
        src: &src,
        prog: &prog,
    };
    let (dot, code) = match synth::synthesize_opts(&prog, &res.buggy, common.model, &opts) {
        Outcome::Unfixable(u) => (shown.unfixable(&u, out), EXIT_UNFIXABLE),
        Outcome::Fixed(sol) => match shown.fixed(first, &sol, out, err) {
            Ok(dot) => (dot, EXIT_BUG),
            Err(code) => return code,
        },
    };
    if let Some(path) = &args.dot {
        if let Err(code) = write_dot(path, &dot, out, err) {
            return code;
        }
    }
    code
}

/// What `explain` shows about one program.
struct Shown<'a> {
    common: &'a FileArgs,
    name: &'a str,
    src: &'a str,
    prog: &'a crate::ir::Program,
}

impl Shown<'_> {
    /// Not fixable with fences: the execution and the reason (or its drawing with `--format
    /// dot`); returns the drawing.
    fn unfixable(&self, u: &synth::Unfixable, out: Out) -> String {
        let (name, prog, src) = (self.name, self.prog, self.src);
        let b = &u.requirement.bug;
        let mut g: ExecutionGraph = u.requirement.graph.clone();
        g.bugs = vec![b.clone()];
        let dot = explain::explain_dot(prog, &g, None, self.common.model);
        if self.common.format == Format::Dot {
            let _ = write!(out, "{dot}");
        } else {
            let color = super::render::options().color_out;
            let text = report::unfixable_text(name, (prog, src), &g, b, (&u.reason, color));
            let _ = writeln!(out, "{text}");
        }
        dot
    }

    /// The first buggy execution, the fences and the cycle each closes (or their drawing with
    /// `--format dot`); returns the drawing, or the exit code when the fences cannot be placed.
    fn fixed(
        &self,
        first: &ExecutionGraph,
        sol: &synth::Solution,
        out: Out,
        err: Out,
    ) -> Result<String, i32> {
        let (name, prog, src, model) = (self.name, self.prog, self.src, self.common.model);
        let chosen: Vec<_> = sol.fences.iter().map(|f| (f.site, f.order)).collect();
        let positions = match rewrite::fence_edits(src, prog, &chosen) {
            Ok((_, p)) => p,
            Err(e) => {
                let _ = writeln!(err, "{name}: internal error: cannot place the fences: {e}");
                return Err(super::EXIT_INTERNAL);
            }
        };
        let dot = explain::explain_dot(prog, first, Some(sol), model);
        if self.common.format == Format::Dot {
            let _ = write!(out, "{dot}");
        } else {
            let text = explain::explain_text(name, prog, src, model, first, sol, &positions);
            let _ = write!(out, "{text}");
        }
        Ok(dot)
    }
}

/// No buggy execution: incomplete when loops were cut at the bound (`unroll`), else clean.
fn nothing_to_explain(
    common: &FileArgs,
    stats: &checker::Stats,
    unroll: u32,
    out: Out,
    err: Out,
) -> i32 {
    let name = display_path(&common.file);
    if stats.bounded > 0 {
        let why = checker::Incomplete::LoopBound {
            unroll,
            cut: stats.bounded,
        };
        let _ = writeln!(
            err,
            "{name}: exploration incomplete: {}",
            report::incomplete_text(&why)
        );
        return EXIT_INCOMPLETE;
    }
    let msg = format!(
        "{name}: no bugs in {} under {}; nothing to explain",
        crate::report::executions(stats.executions),
        common.model
    );
    // With --format dot, standard output is for DOT only.
    let _ = if common.format == Format::Dot {
        writeln!(err, "{msg}")
    } else {
        writeln!(out, "{msg}")
    };
    EXIT_OK
}
