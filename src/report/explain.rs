//! `fensyn explain`: the first buggy execution, the fences a fix adds, and the cycle each fence
//! closes — as text, and as a Graphviz drawing.
//!
//! A cycle is found in the requirement's graph with the whole solution's fences inserted (so it
//! is the cycle the fix actually closes), in the relation the model then violates:
//!
//! * **weak** (coherence): a cycle of `hb ∪ hb ; eco`, each step spelled out in the base
//!   relations — an `hb` step as a shortest `po`/`sw` path, an `eco` step as a shortest
//!   `rf`/`mo`/`fr` path;
//! * **strong** (RC11's psc, or C11's SC order): a cycle of `psc` between seq_cst events;
//! * **race-ordered**: the `po`/`sw` path that now orders the two racing accesses;
//! * other axioms (the `sc` model): a cycle of `po ∪ rf ∪ mo ∪ fr`.

use super::{event_label, render_execution, source_line};
use crate::checker::relation::Rel;
use crate::checker::{Axiom, EventId, EventKind, ExecutionGraph, Model, Relations, INIT_THREAD};
use crate::ir::{Program, SlotPlace};
use crate::rewrite::reason::{self, Reason};
use crate::rewrite::Position;
use crate::synth::Solution;
use crate::trace::{Site, Violation};
use std::collections::VecDeque;
use std::fmt::Write as _;

/// One step of a cycle: `from -label-> to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: EventId,
    pub to: EventId,
    pub label: &'static str,
}

/// A shortest path from `a` to `b` in the union of `rels` (each with its label), `None` if
/// there is none.
fn path(a: EventId, b: EventId, rels: &[(&'static str, &Rel)]) -> Option<Vec<Step>> {
    let n = rels.first()?.1.len();
    let mut prev: Vec<Option<(EventId, &'static str)>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[a] = true;
    let mut queue = VecDeque::from([a]);
    while let Some(u) = queue.pop_front() {
        for &(label, r) in rels {
            for v in r.succs(u) {
                if seen[v] {
                    continue;
                }
                seen[v] = true;
                prev[v] = Some((u, label));
                if v == b {
                    let mut steps = Vec::new();
                    let mut cur = b;
                    while let Some((p, l)) = prev[cur] {
                        steps.push(Step {
                            from: p,
                            to: cur,
                            label: l,
                        });
                        if p == a {
                            break;
                        }
                        cur = p;
                    }
                    steps.reverse();
                    return Some(steps);
                }
                queue.push_back(v);
            }
        }
    }
    None
}

/// Program order between consecutive events of a thread (and spawn/join), not transitive.
fn po_immediate(g: &ExecutionGraph) -> Rel {
    let mut po = Rel::new(g.len());
    for tr in &g.threads {
        for w in tr.events.windows(2) {
            po.add(w[0], w[1]);
        }
        if let (Some(sp), Some(&first)) = (tr.spawned_by, tr.events.first()) {
            po.add(sp, first);
        }
    }
    for (e, ev) in g.events.iter().enumerate() {
        if let EventKind::Join { child } = ev.kind {
            if let Some(&last) = g.threads[child].events.last() {
                po.add(last, e);
            }
        }
    }
    po
}

/// The steps of `cycle` (a cycle of `hb ∪ hb ; eco`), spelled in po, sw, rf, mo and fr.
fn weak_steps(g: &ExecutionGraph, r: &Relations, cycle: &[EventId]) -> Vec<Step> {
    let po = po_immediate(g);
    let hb_base = [("po", &po), ("sw", &r.sw)];
    let eco_base = [("rf", &r.rf), ("mo", &r.mo), ("fr", &r.fr)];
    let mut out = Vec::new();
    for (i, &a) in cycle.iter().enumerate() {
        let b = cycle[(i + 1) % cycle.len()];
        if r.hb.has(a, b) {
            out.extend(path(a, b, &hb_base).unwrap_or_else(|| {
                vec![Step {
                    from: a,
                    to: b,
                    label: "hb",
                }]
            }));
            continue;
        }
        // hb ; eco: through the first event m with hb?(a, m) and eco(m, b).
        let m = (0..g.len()).find(|&m| (m == a || r.hb.has(a, m)) && r.eco.has(m, b));
        match m {
            Some(m) => {
                if m != a {
                    out.extend(path(a, m, &hb_base).unwrap_or_else(|| {
                        vec![Step {
                            from: a,
                            to: m,
                            label: "hb",
                        }]
                    }));
                }
                out.extend(path(m, b, &eco_base).unwrap_or_else(|| {
                    vec![Step {
                        from: m,
                        to: b,
                        label: "eco",
                    }]
                }));
            }
            None => out.push(Step {
                from: a,
                to: b,
                label: "hb;eco",
            }),
        }
    }
    out
}

/// The steps of a psc cycle: a step between seq_cst fences that is `hb` or `hb ; eco ; hb` is
/// spelled in po, sw, rf, mo and fr; any other psc step stays one `psc` step.
fn strong_steps(g: &ExecutionGraph, r: &Relations, cycle: &[EventId]) -> Vec<Step> {
    let po = po_immediate(g);
    let hb_base = [("po", &po), ("sw", &r.sw)];
    let eco_base = [("rf", &r.rf), ("mo", &r.mo), ("fr", &r.fr)];
    let hb_opt = |a: EventId, b: EventId| a == b || r.hb.has(a, b);
    let hb_path = |a: EventId, b: EventId| {
        if a == b {
            Some(Vec::new())
        } else {
            path(a, b, &hb_base)
        }
    };
    let mut out = Vec::new();
    for (i, &a) in cycle.iter().enumerate() {
        let b = cycle[(i + 1) % cycle.len()];
        let fences = g.events[a].is_fence() && g.events[b].is_fence();
        let spelled = if !fences {
            None
        } else if r.hb.has(a, b) {
            path(a, b, &hb_base)
        } else {
            // hb? ; eco ; hb? through the first pair (m1, m2) in event order.
            (0..g.len())
                .filter(|&m1| hb_opt(a, m1))
                .find_map(|m1| {
                    (0..g.len())
                        .find(|&m2| r.eco.has(m1, m2) && hb_opt(m2, b))
                        .map(|m2| (m1, m2))
                })
                .and_then(|(m1, m2)| {
                    let mut p = hb_path(a, m1)?;
                    p.extend(path(m1, m2, &eco_base)?);
                    p.extend(hb_path(m2, b)?);
                    Some(p)
                })
        };
        out.extend(spelled.unwrap_or_else(|| {
            vec![Step {
                from: a,
                to: b,
                label: "psc",
            }]
        }));
    }
    out
}

/// The cycle (or, for a race, the ordering path) that makes `g` forbidden under `model`, as
/// steps; `how` says which kind to look for first.
pub fn violated_cycle(
    g: &ExecutionGraph,
    model: Model,
    how: Option<Violation>,
    race: Option<(EventId, EventId)>,
) -> Option<(Violation, Vec<Step>)> {
    let r = model.relations(g);
    let weak = || {
        r.hb.union(&r.hb.seq(&r.eco))
            .find_cycle()
            .map(|c| (Violation::Weak, weak_steps(g, &r, &c)))
    };
    let strong = || {
        r.psc(g)
            .find_cycle()
            .map(|c| (Violation::Strong, strong_steps(g, &r, &c)))
    };
    let ordered = || {
        let (x, y) = race?;
        let (x, y) = if r.hb.has(y, x) { (y, x) } else { (x, y) };
        let po = po_immediate(g);
        path(x, y, &[("po", &po), ("sw", &r.sw)]).map(|p| (Violation::RaceOrdered, p))
    };
    let how = how.or_else(|| match model.violation_with(g, &r) {
        Some(Axiom::Coherence) => Some(Violation::Weak),
        Some(Axiom::Psc | Axiom::ScOrder) => Some(Violation::Strong),
        Some(_) => Some(Violation::Other),
        None => race.map(|_| Violation::RaceOrdered),
    })?;
    match how {
        Violation::Weak => weak().or_else(strong),
        Violation::Strong => strong().or_else(weak),
        Violation::RaceOrdered => ordered(),
        Violation::Other => {
            let base = r.po.union(&r.rf).union(&r.mo).union(&r.fr);
            base.find_cycle().map(|c| {
                let po = po_immediate(g);
                let rels = [("po", &po), ("rf", &r.rf), ("mo", &r.mo), ("fr", &r.fr)];
                let steps = (0..c.len())
                    .flat_map(|i| {
                        let (a, b) = (c[i], c[(i + 1) % c.len()]);
                        path(a, b, &rels).unwrap_or_default()
                    })
                    .collect();
                (Violation::Other, steps)
            })
        }
    }
}

/// The source line of an event: its statement's, or for a fence fensyn inserts, its slot's
/// (`12`, or `ring.h:12` in a header).
fn line_of(prog: &Program, g: &ExecutionGraph, e: EventId) -> String {
    let ev = &g.events[e];
    if let Some(s) = ev.stmt {
        return super::stmt_ref(prog, s);
    }
    match ev.slot.and_then(|s| prog.slots.get(s)).map(|s| &s.place) {
        Some(SlotPlace::Before { stmt }) => super::stmt_ref(prog, *stmt),
        Some(SlotPlace::BlockEnd { close, .. }) => match prog.sources.header(close) {
            Some(h) => {
                let base = h.name.rsplit(['/', '\\']).next().unwrap_or(&h.name);
                format!("{base}:{}", close.line)
            }
            None => close.line.to_string(),
        },
        None => "0".into(),
    }
}

/// `T1:13 Wrlx x = 1`, `T1:14 Frel (new)`, `init x = 0`.
fn event_name(prog: &Program, g: &ExecutionGraph, e: EventId) -> String {
    let ev = &g.events[e];
    if ev.thread == INIT_THREAD {
        return event_label(prog, g, e);
    }
    let new = if ev.slot.is_some() { " (new)" } else { "" };
    format!(
        "T{}:{} {}{new}",
        ev.thread,
        line_of(prog, g, e),
        event_label(prog, g, e)
    )
}

fn cycle_text(prog: &Program, g: &ExecutionGraph, steps: &[Step]) -> String {
    let mut out = String::new();
    if let Some(first) = steps.first() {
        out.push_str(&event_name(prog, g, first.from));
    }
    for s in steps {
        let _ = write!(
            out,
            "\n        -{}-> {}",
            s.label,
            event_name(prog, g, s.to)
        );
    }
    out
}

fn violation_text(v: Violation) -> &'static str {
    match v {
        Violation::Weak => "weak cycle (coherence: hb ; eco? must be irreflexive)",
        Violation::Strong => "strong cycle (the SC order psc must be acyclic)",
        Violation::RaceOrdered => "happens-before path that orders the racing accesses",
        Violation::Other => "cycle the memory model forbids",
    }
}

/// Distinct cycles shown per fence before the rest are only counted.
const MAX_CYCLES_PER_FENCE: usize = 3;
/// Requirements looked at per fence (each costs a relation computation).
const MAX_REQUIREMENTS_PER_FENCE: usize = 24;

/// `fensyn explain` as text, for a program with a fix.
pub fn explain_text(
    file: &str,
    prog: &Program,
    src: &str,
    model: Model,
    first: &ExecutionGraph,
    sol: &Solution,
    positions: &[Position],
) -> String {
    let mut out = String::new();
    for b in &first.bugs {
        let span = prog.stmts[b.stmt].span;
        let _ = writeln!(
            out,
            "{}:{}:{}: {}: {}",
            prog.sources.name_of(prog.sources.file_index(&span), file),
            span.line,
            span.column,
            b.kind.as_str(),
            b.message
        );
    }
    let _ = writeln!(out, "\nfirst failing execution (under {model}):");
    out.push_str(&render_execution(prog, src, first));
    let n = sol.fences.len();
    let _ = writeln!(
        out,
        "\nthe fix adds {n} fence{} ({} inserted, {} strengthened):",
        if n == 1 { "" } else { "s" },
        sol.inserted,
        sol.strengthened
    );
    let unit = crate::rewrite::files::Parsed::new(src, prog);
    for (f, p) in sol.fences.iter().zip(positions) {
        let action = match (f.site, f.previous) {
            (Site::Existing(_), Some(prev)) => format!(
                "strengthen the fence {} -> {}",
                prev.c_name(),
                f.order.c_name()
            ),
            _ => {
                let o = f.order.c_name();
                let article = if o.starts_with('a') { "an" } else { "a" };
                format!("insert {article} {o} fence before")
            }
        };
        let at = prog.sources.name_of(p.file, file);
        let _ = writeln!(out, "\n  {at}:{}:{}: {action}", p.line, p.column);
        let text = unit.frames.get(p.file).map_or(src, |f| f.text);
        let _ = writeln!(out, "       | {}", source_line(text, p.line, 90));
        match reason::reason(sol, f) {
            Some(Reason::Orders { before, after }) => {
                let _ = writeln!(
                    out,
                    "    {}",
                    reason::orders_text(
                        prog,
                        &|at| unit.function_at(prog, at),
                        f.site,
                        before,
                        after,
                        &|st| {
                            let k = prog.sources.file_index(&prog.stmts[st].span);
                            let other = (k != p.file).then(|| unit.short_name(prog, k));
                            (prog.stmt_line(st), other)
                        }
                    )
                );
            }
            Some(Reason::Bug { stmt }) => {
                let _ = writeln!(out, "    needed for line {}", super::stmt_ref(prog, stmt));
            }
            None => {}
        }
        // Distinct cycles, each with the bugs it stands against (requirements often share one).
        let mut cycles: Vec<((String, String), Vec<String>)> = Vec::new();
        for &(ri, v) in f.needed_by.iter().take(MAX_REQUIREMENTS_PER_FENCE) {
            let Some(r) = sol.requirements.get(ri) else {
                continue;
            };
            let (g, map) = reason::fenced_graph(r, sol);
            let race = r.bug.race.map(|(x, y)| (map[x], map[y]));
            let bug = format!(
                "the {} at line {}",
                r.bug.kind.as_str(),
                super::stmt_ref(prog, r.bug.stmt)
            );
            let text = match violated_cycle(&g, model, Some(v), race) {
                Some((kind, steps)) => (
                    format!(
                        "{} a {}",
                        if kind == Violation::RaceOrdered {
                            "creates"
                        } else {
                            "closes"
                        },
                        violation_text(kind)
                    ),
                    format!(":\n      {}", cycle_text(prog, &g, &steps)),
                ),
                None => (
                    format!("forbids the execution ({})", v.as_str()),
                    String::new(),
                ),
            };
            match cycles.iter_mut().find(|(t, _)| *t == text) {
                Some((_, bugs)) => {
                    if !bugs.contains(&bug) {
                        bugs.push(bug)
                    }
                }
                None => cycles.push((text, vec![bug])),
            }
        }
        for ((head, rest), bugs) in cycles.iter().take(MAX_CYCLES_PER_FENCE) {
            let _ = writeln!(out, "    {head} against {}{rest}", bugs.join(", "));
        }
        if cycles.len() > MAX_CYCLES_PER_FENCE {
            let _ = writeln!(
                out,
                "    and {} more cycle{}",
                cycles.len() - MAX_CYCLES_PER_FENCE,
                if cycles.len() - MAX_CYCLES_PER_FENCE == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
    }
    out
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The failing events of `g0`'s bugs as `explain_dot` draws them (`map`: `g0`'s events in the
/// drawn graph): the events to mark (the statement where a bug shows, both accesses of a
/// race) and, per thread, the DOT lines of one octagon per bug that names it (`assertion:
/// message`, with its line), linked from the event where it fails.
fn failure_marks(
    prog: &Program,
    g0: &ExecutionGraph,
    map: &[EventId],
) -> (Vec<EventId>, Vec<(usize, String)>) {
    let mut failing = Vec::new();
    let mut lines = Vec::new();
    for (i, b) in g0.bugs.iter().enumerate() {
        let events = g0.threads.get(b.thread).map_or(&[][..], |t| &t.events[..]);
        let at = events
            .iter()
            .rev()
            .find(|&&e| g0.events[e].stmt == Some(b.stmt))
            .or(events.last())
            .map(|&e| map[e]);
        match b.race {
            Some((x, y)) => failing.extend([map[x], map[y]]),
            None => failing.extend(at),
        }
        let label = format!(
            "{}: {}\\nline {}",
            b.kind.as_str(),
            dot_escape(&b.message),
            super::stmt_ref(prog, b.stmt)
        );
        let mut dot = format!(
            "    bug{i} [label=\"{label}\", shape=octagon, color=red, fontcolor=red, penwidth=2.5, style=bold];\n"
        );
        if let Some(e) = at {
            let _ = writeln!(dot, "    e{e} -> bug{i} [color=red, style=bold];");
        }
        lines.push((b.thread, dot));
    }
    (failing, lines)
}

/// Keeps the thread clusters left to right in thread order: the first events of the threads
/// on one rank, chained by invisible edges.
fn thread_order(g: &ExecutionGraph) -> String {
    let firsts: Vec<String> = g
        .threads
        .iter()
        .filter_map(|t| t.events.first())
        .map(|e| format!("e{e}"))
        .collect();
    if firsts.len() < 2 {
        return String::new();
    }
    format!(
        "  {{ rank=same; {} [style=invis]; }}\n",
        firsts.join(" -> ")
    )
}

/// The first buggy execution `g` as Graphviz DOT: one cluster per thread (left to right in
/// thread order), po, rf, mo and sw edges, each bug's failing events in bold red with an
/// octagon naming the bug; with a solution, its fences inserted (blue) and the cycle they
/// close in bold red.
pub fn explain_dot(
    prog: &Program,
    g0: &ExecutionGraph,
    sol: Option<&Solution>,
    model: Model,
) -> String {
    let (g, map) = match sol {
        Some(s) => {
            let a = &s.assignment;
            g0.with_fences(&|sl| a.get(Site::Slot(sl)), &|st| a.get(Site::Existing(st)))
        }
        None => (g0.clone(), (0..g0.len()).collect()),
    };
    let r = model.relations(&g);
    let race = g0
        .bugs
        .iter()
        .find_map(|b| b.race)
        .map(|(x, y)| (map[x], map[y]));
    let cycle = sol.and_then(|_| violated_cycle(&g, model, None, race));
    let on_cycle = |e: EventId| {
        cycle
            .as_ref()
            .is_some_and(|(_, st)| st.iter().any(|s| s.from == e || s.to == e))
    };
    let (failing, failures) = failure_marks(prog, g0, &map);
    let mut out = String::from(
        "digraph execution {\n  rankdir=TB;\n  newrank=true;\n  node [shape=box, fontname=monospace];\n",
    );
    if let Some((v, _)) = &cycle {
        let _ = writeln!(
            out,
            "  label=\"bold red: the {} the fix's fences make\";\n  labelloc=b;",
            violation_text(*v)
        );
    }
    let id = |e: usize| format!("e{e}");
    let node = |e: EventId| {
        let ev = &g.events[e];
        let mut label = event_label(prog, &g, e);
        if ev.thread != INIT_THREAD {
            let _ = write!(label, "\\nline {}", line_of(prog, &g, e));
        }
        let mut attrs = format!("label=\"{}\"", dot_escape(&label).replace("\\\\n", "\\n"));
        if ev.slot.is_some() {
            attrs.push_str(", color=blue, fontcolor=blue, style=dashed");
        } else if ev.is_fence()
            && ev.stmt.is_some_and(|st| {
                sol.is_some_and(|s| s.assignment.get(Site::Existing(st)).is_some())
            })
        {
            attrs.push_str(", color=blue, fontcolor=blue");
        }
        if on_cycle(e) {
            attrs.push_str(", color=red, penwidth=2.5");
        }
        if failing.contains(&e) {
            attrs.push_str(", color=red, fontcolor=red, penwidth=2.5, style=bold");
        }
        format!("{} [{attrs}];", id(e))
    };
    out.push_str("  subgraph cluster_init { label=\"init\";\n");
    for e in 0..g.len() {
        if g.events[e].thread == INIT_THREAD {
            let _ = writeln!(out, "    {}", node(e));
        }
    }
    out.push_str("  }\n");
    for (t, tr) in g.threads.iter().enumerate() {
        let _ = writeln!(
            out,
            "  subgraph cluster_t{t} {{ label=\"T{t} {}\";",
            dot_escape(&prog.functions[tr.func].name)
        );
        for &e in &tr.events {
            let _ = writeln!(out, "    {}", node(e));
        }
        for w in tr.events.windows(2) {
            let new = g.events[w[0]].slot.is_some() || g.events[w[1]].slot.is_some();
            let style = if new { ", color=blue" } else { "" };
            let _ = writeln!(out, "    {} -> {} [label=po{style}];", id(w[0]), id(w[1]));
        }
        for (_, lines) in failures.iter().filter(|(th, _)| *th == t) {
            out.push_str(lines);
        }
        out.push_str("  }\n");
    }
    out.push_str(&thread_order(&g));
    for (rd, w) in g.rf.iter().enumerate() {
        if let Some(w) = w {
            let _ = writeln!(
                out,
                "  {} -> {} [label=rf, color=darkgreen, constraint=false];",
                id(*w),
                id(rd)
            );
        }
    }
    for ws in &g.mo {
        for p in ws.windows(2) {
            let _ = writeln!(
                out,
                "  {} -> {} [label=mo, color=orange, constraint=false];",
                id(p[0]),
                id(p[1])
            );
        }
    }
    for (a, b) in r.sw.pairs() {
        let _ = writeln!(
            out,
            "  {} -> {} [label=sw, color=blue, style=dashed, constraint=false];",
            id(a),
            id(b)
        );
    }
    if let Some((_, steps)) = &cycle {
        for s in steps {
            let _ = writeln!(
                out,
                "  {} -> {} [label=\"{}\", color=red, fontcolor=red, penwidth=2.5, style=bold, constraint=false];",
                id(s.from),
                id(s.to),
                dot_escape(s.label)
            );
        }
    }
    out.push_str("}\n");
    out
}
