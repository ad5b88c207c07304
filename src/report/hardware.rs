//! `fensyn check --on-hardware MACHINE`: which C11 bugs the mapped program can show on a
//! machine (the MoCA seed's question), ranked and explained, never hidden.
//!
//! A bug depends only on the po ∪ rf-prefix of its witness events; the compiled program can show
//! it on the machine iff that prefix is consistent under the machine's model (a consistent
//! prefix extends to a complete execution, and the machine's executions of the mapped program
//! are C11 executions, so no other bug is missed). A data race is undefined behaviour of the
//! source whatever the machine does.

use crate::checker::hardware::{self, Machine};
use crate::checker::{BugKind, ExecutionGraph, INIT_THREAD};
use crate::ir::Program;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `--on-hardware` values: the machines a C11 program is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Hardware {
    /// x86-64 (x86-TSO).
    X86,
    /// AArch64 (ARMv8, multicopy atomic; Pulte et al., POPL 2018).
    Armv8,
}

impl Hardware {
    pub fn machine(self) -> Machine {
        match self {
            Hardware::X86 => Machine::Tso,
            Hardware::Armv8 => Machine::Armv8,
        }
    }
    /// Whether the C11 exploration must record dependencies for this machine's model.
    pub fn needs_dependencies(self) -> bool {
        self == Hardware::Armv8
    }

    pub fn name(self) -> &'static str {
        match self {
            Hardware::X86 => "x86",
            Hardware::Armv8 => "armv8",
        }
    }
}

/// One error of `check`, with what the machine can do about it.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct HardwareEntry {
    pub kind: &'static str,
    pub message: String,
    pub line: usize,
    pub column: usize,
    /// "possible" (some buggy execution can happen on the machine), "c11-only" (none can),
    /// or "source" (a data race: undefined behaviour whatever the machine).
    pub verdict: &'static str,
    /// Buggy executions (of those kept) the machine can show.
    pub possible: usize,
    /// Buggy executions the machine cannot show.
    pub impossible: usize,
    /// For "c11-only": why, as the cycle of the machine's order in one of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The `on_hardware` part of `check --format json`.
#[derive(Serialize, Clone, Debug)]
pub struct OnHardwareJson {
    pub machine: Hardware,
    pub model: &'static str,
    pub entries: Vec<HardwareEntry>,
}

/// Classifies the bugs of `buggy` (C11 executions) on `hw`, ranked: bugs the machine can show
/// first, then C-level races, then bugs only C11 allows; in source order within each rank.
pub fn on_hardware(prog: &Program, buggy: &[ExecutionGraph], hw: Hardware) -> OnHardwareJson {
    let machine = hw.machine();
    let mut by_error: BTreeMap<(usize, usize, String, &'static str), HardwareEntry> =
        BTreeMap::new();
    for g in buggy {
        for bug in &g.bugs {
            let span = prog.stmts[bug.stmt].span;
            let key = (
                span.line,
                span.column,
                bug.message.clone(),
                bug.kind.as_str(),
            );
            let entry = by_error.entry(key).or_insert_with(|| HardwareEntry {
                kind: bug.kind.as_str(),
                message: bug.message.clone(),
                line: span.line,
                column: span.column,
                verdict: "",
                possible: 0,
                impossible: 0,
                reason: None,
            });
            if bug.kind == BugKind::Race {
                entry.verdict = "source";
                continue;
            }
            let prefix = g.restrict(&g.porf_prefix(&bug.witness));
            match hardware::forbidding_cycle(machine, &prefix) {
                None => entry.possible += 1,
                Some(cycle) => {
                    entry.impossible += 1;
                    if entry.reason.is_none() {
                        entry.reason = Some(describe_cycle(prog, &prefix, &cycle));
                    }
                }
            }
        }
    }
    let mut entries: Vec<HardwareEntry> = by_error
        .into_values()
        .map(|mut e| {
            if e.verdict.is_empty() {
                e.verdict = if e.possible > 0 {
                    "possible"
                } else {
                    "c11-only"
                };
            }
            if e.possible > 0 {
                e.reason = None;
            }
            e
        })
        .collect();
    let rank = |v: &str| match v {
        "possible" => 0,
        "source" => 1,
        _ => 2,
    };
    entries.sort_by_key(|e| (rank(e.verdict), e.line, e.column));
    OnHardwareJson {
        machine: hw,
        model: machine.name(),
        entries,
    }
}

/// A cycle of events as `T1 line 11 (W x) → …`.
fn describe_cycle(prog: &Program, g: &ExecutionGraph, cycle: &[usize]) -> String {
    let name = |e: usize| {
        let ev = &g.events[e];
        let what = match (ev.is_read(), ev.is_write(), ev.is_fence(), ev.loc) {
            (true, _, _, Some(l)) => format!("R {}", prog.globals[l].name),
            (_, true, _, Some(l)) => format!("W {}", prog.globals[l].name),
            (_, _, true, _) => format!("F {}", ev.order.c_name()),
            _ => "thread start/end".into(),
        };
        if ev.thread == INIT_THREAD {
            format!("init ({what})")
        } else {
            let line = ev.stmt.map_or("0".into(), |s| prog.stmt_ref(s));
            format!("T{} line {line} ({what})", ev.thread)
        }
    };
    let mut parts: Vec<String> = cycle.iter().map(|&e| name(e)).collect();
    if let Some(first) = parts.first().cloned() {
        parts.push(first);
    }
    parts.join(" → ")
}

/// The text section `check --on-hardware` appends to the report.
pub fn on_hardware_text(file: &str, j: &OnHardwareJson) -> String {
    let mut out = String::new();
    let hw = j.machine.name();
    let _ = writeln!(
        out,
        "\non {hw} ({}, the program as compilers map it; see docs/hardware-models.md):",
        j.model
    );
    for e in &j.entries {
        let total = e.possible + e.impossible;
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let what = match e.verdict {
            "possible" => format!(
                "can happen on {hw} ({} of {total} buggy execution{})",
                e.possible,
                plural(total)
            ),
            "source" => "a data race: undefined behaviour in the source on every machine".into(),
            _ => format!(
                "{hw} cannot show it (none of {total} buggy execution{}): {}",
                plural(total),
                e.reason
                    .as_deref()
                    .map(|r| format!("the machine's order has a cycle, e.g. {r}"))
                    .unwrap_or_default()
            ),
        };
        let _ = writeln!(
            out,
            "  {file}:{}:{}: {}: {}: {what}",
            e.line, e.column, e.kind, e.message
        );
    }
    if j.entries.iter().any(|e| e.verdict == "c11-only") {
        let _ = writeln!(
            out,
            "note: a bug {hw} cannot show is still a bug in the source: a compiler may reorder \
             or merge relaxed and plain accesses before the hardware runs them, and another \
             compiler or machine may show it. --on-hardware ranks and explains; it hides nothing \
             and does not change the exit code."
        );
    }
    out
}
