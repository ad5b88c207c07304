//! `relax`: the weakest memory orders that keep a correct program correct.
//!
//! The program as written must check clean and completely (else [`Relaxation::Buggy`] or
//! [`Relaxation::Incomplete`]: nothing is weakened on a check that is not a proof). Its
//! *items* are the atomic accesses `rewrite::orders` can write (the candidates of
//! [`crate::trace::orders::AccessSites`] whose call it finds) and the program fences (a
//! statement that is a fence call of its own, holding no atomic access); the other statements
//! with atomic operations are [`Relaxed::skipped`]. The search ([`crate::synth::relax`])
//! runs on the IR: each candidate configuration is the program with the items' orders changed
//! in its instructions (every copy of an inlined statement alike; a removed fence becomes a
//! jump to the next instruction), checked with the same model, limits and equivalence choice
//! as `check`, up to its first bug. A compare-and-swap's failure order follows its success
//! order down (never stronger than it, never release: the failure order is lowered to the
//! strongest valid one when needed). The chosen configuration is then written once through
//! `rewrite` (order arguments in the file's spelling, CAS failure arguments, fence
//! deletions), re-parsed and re-checked: [`Relaxed::recheck`] is the check of the written
//! program, clean and complete (else [`Relaxation::Incomplete`] — a `--timeout` that ran out
//! —, or [`Relaxation::Internal`]).
//!
//! **Invariants:** deterministic (items in source order, steps in a fixed order, one check
//! per question); no item is ever made stronger than written.

use super::{check, Options, Report, Unit};
use crate::frontend::Diagnostic;
use crate::ir::{Instr, MemOrder, Program, StmtId};
use crate::rewrite::{self, orders::OrderChange, FileEdits, FileRewrite};
use crate::synth::relax::{self as search, Item, Level, Verdict};
use crate::synth::Cost;
use crate::trace::orders::{AccessKind, AccessSites};
use crate::trace::Site;
use std::collections::BTreeMap;

/// What `relax` minimises and how it searches.
#[derive(Clone, Copy, Debug, Default)]
pub struct RelaxOptions {
    /// The relaxation of least total weight (or instruction price, with `cost` x86|armv8)
    /// instead of the greedy maximal one ([`crate::synth::relax::optimal`]).
    pub optimal: bool,
    pub cost: Cost,
    /// Search with the naive scheme (every one-step weakening of every item checked each
    /// round, no memo) — for measuring the greedy search against it (docs/performance.md).
    pub naive: bool,
}

/// The result of [`relax`].
#[derive(Clone, Debug)]
pub enum Relaxation {
    /// The program as written has a bug (the check up to its first bug): fix it first.
    Buggy(Box<Report>),
    /// The check of the program as written, or of the written relaxation, is not a proof (a
    /// limit, a loop cut at its bound): nothing is weakened.
    Incomplete(Box<Report>),
    Relaxed(Box<Relaxed>),
    /// The chosen relaxation could not be written, or its written program did not re-check
    /// clean and complete (a bug of fensyn).
    Internal(String),
}

/// A maximal relaxation, written and re-checked.
#[derive(Clone, Debug)]
pub struct Relaxed {
    /// Every item in source order, with its order before and after.
    pub items: Vec<RelaxedItem>,
    /// The rewritten files (none when nothing could be weakened).
    pub files: Vec<FileRewrite>,
    /// The check of the written program (clean and complete).
    pub recheck: Report,
    /// Verdicts monotonicity gave without a check.
    pub implied: usize,
    /// Checks that were not a proof (their weakening was not taken).
    pub inconclusive: usize,
    /// The check of the program as written.
    pub original: Report,
    /// Statements with atomic operations that `relax` leaves as written (see [`Skipped`]).
    pub skipped: Vec<Skipped>,
}

/// A statement whose atomic operations `relax` leaves as written: it holds several (an
/// order is changed per statement, as `fix --by orders` changes it), or its one order cannot
/// be written (a call through a macro, a wrapper function); or a fence that is not a fence
/// call statement of its own (a macro use that expands to a fence, and maybe more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub stmt: StmtId,
    /// The atomic operation calls the statement holds (a fence: 0).
    pub calls: usize,
    /// A fence statement.
    pub fence: bool,
}

impl Relaxed {
    /// The rewritten files of this relaxation with item `i` at `level` instead (its CAS
    /// failure order following it down): the variants a maximality test re-checks.
    pub fn written_with(
        &self,
        unit: &Unit,
        i: usize,
        level: Level,
    ) -> Result<Vec<FileRewrite>, String> {
        let mut items = self.items.clone();
        let it = &mut items[i];
        it.after = level;
        it.failure = it
            .failure
            .map(|(f, _)| (f, level.map_or(f, |o| failure_for(f, o))));
        write(unit, &items)
    }

    /// Exhaustive checks of the search (the check of the program as written and the re-check
    /// of the written result not counted).
    pub fn checks(&self) -> usize {
        self.items.iter().map(|i| i.checks).sum()
    }

    /// Whether some order changed.
    pub fn changed(&self) -> bool {
        self.items.iter().any(|i| Some(i.before) != i.after)
    }
}

/// One access or fence and what `relax` did to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelaxedItem {
    /// Its statement (the first of an inlined statement's copies).
    pub stmt: StmtId,
    pub item: Item,
    pub before: MemOrder,
    /// `None`: a removed fence.
    pub after: Level,
    /// A compare-and-swap's failure order before and after.
    pub failure: Option<(MemOrder, MemOrder)>,
    /// Exhaustive checks made while weakening it.
    pub checks: usize,
}

/// One item of the program: its statement, what it is, its order and (a CAS) failure order.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    stmt: StmtId,
    item: Item,
    order: MemOrder,
    failure: Option<MemOrder>,
}

/// The items of `unit` in source order, and which item every statement (copies included)
/// belongs to.
fn candidates(unit: &Unit) -> (Vec<Candidate>, BTreeMap<StmtId, usize>) {
    let prog = &unit.program;
    let src = &unit.source.text;
    let sites = AccessSites::of(prog);
    let mut found: Vec<Candidate> = Vec::new();
    for a in sites.candidates() {
        let change = OrderChange {
            stmt: a.stmt,
            order: MemOrder::Relaxed,
        };
        if rewrite::orders::order_edits(src, prog, &[change]).is_err() {
            continue;
        }
        found.push(Candidate {
            stmt: a.stmt,
            item: Item::Access(a.kind),
            order: a.order,
            failure: (a.kind == AccessKind::Cas).then(|| cas_failure(prog, a.stmt)),
        });
    }
    found.extend(fences(unit));
    found.sort_by_key(|c| {
        let s = prog.stmts[c.stmt].span;
        (prog.sources.file_index(&s), s.start, s.end)
    });
    let mut by_stmt = BTreeMap::new();
    for (i, c) in found.iter().enumerate() {
        by_stmt.insert(c.stmt, i);
    }
    for (st, s) in prog.stmts.iter().enumerate() {
        if let Some(canon) = sites.get(st).map(|a| a.stmt) {
            if let Some(&i) = by_stmt.get(&canon) {
                by_stmt.insert(st, i);
            }
            continue;
        }
        let same = found.iter().position(|c| {
            matches!(c.item, Item::Fence { .. }) && prog.stmts[c.stmt].span == s.span
        });
        if let Some(i) = same {
            by_stmt.insert(st, i);
        }
    }
    (found, by_stmt)
}

/// The statements with atomic accesses that are not items, one per span, in source order
/// (statements whose atomic accesses come from no atomic call of theirs — a lock, a
/// condition variable — are not listed).
fn skipped(unit: &Unit, cands: &[Candidate]) -> Vec<Skipped> {
    let prog = &unit.program;
    let mut spans: Vec<(usize, usize)> = cands
        .iter()
        .map(|c| (prog.stmts[c.stmt].span.start, prog.stmts[c.stmt].span.end))
        .collect();
    let mut out = Vec::new();
    for (st, s) in prog.stmts.iter().enumerate() {
        let atomic = instrs_of(prog, st).any(|i| i.access().is_some_and(|(_, a)| a));
        let fence = instrs_of(prog, st).any(|i| matches!(i, Instr::Fence { .. }));
        if !(atomic || fence) || spans.contains(&(s.span.start, s.span.end)) {
            continue;
        }
        spans.push((s.span.start, s.span.end));
        if !atomic {
            out.push(Skipped {
                stmt: st,
                calls: 0,
                fence: true,
            });
            continue;
        }
        let calls = rewrite::orders::atomic_call_count(&unit.source.text, prog, st);
        if calls > 0 {
            out.push(Skipped {
                stmt: st,
                calls,
                fence: false,
            });
        }
    }
    out.sort_by_key(|k| prog.stmts[k.stmt].span.start);
    out
}

/// The failure order of the compare-and-swap of statement `st`.
fn cas_failure(prog: &Program, st: StmtId) -> MemOrder {
    instrs_of(prog, st)
        .find_map(|ins| match ins {
            Instr::Cas { fail_order, .. } => Some(*fail_order),
            _ => None,
        })
        .unwrap_or(MemOrder::SeqCst)
}

fn instrs_of(prog: &Program, st: StmtId) -> impl Iterator<Item = &Instr> {
    prog.functions.iter().flat_map(move |f| {
        f.body
            .iter()
            .zip(&f.stmt_of)
            .filter(move |(_, &s)| s == st)
            .map(|(ins, _)| ins)
    })
}

/// The program fences `relax` can weaken or delete: statements holding one fence (every copy
/// alike) and no atomic access, deletable by `rewrite::removal`.
fn fences(unit: &Unit) -> Vec<Candidate> {
    let prog = &unit.program;
    let mut per_stmt: BTreeMap<StmtId, (Vec<MemOrder>, bool)> = BTreeMap::new();
    for f in &prog.functions {
        for (ins, &st) in f.body.iter().zip(&f.stmt_of) {
            let e = per_stmt.entry(st).or_default();
            match ins {
                Instr::Fence { order } if !e.0.contains(order) => e.0.push(*order),
                _ if ins.access().is_some_and(|(_, atomic)| atomic) => e.1 = true,
                _ => {}
            }
        }
    }
    let mut seen: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for (st, (orders, access)) in per_stmt {
        let ([order], false) = (orders.as_slice(), access) else {
            continue;
        };
        let s = &prog.stmts[st];
        if seen.contains(&(s.span.start, s.span.end)) {
            continue;
        }
        seen.push((s.span.start, s.span.end));
        if rewrite::removal::fence_removals(&unit.source.text, prog, &[st]).is_err() {
            continue;
        }
        out.push(Candidate {
            stmt: st,
            item: Item::Fence {
                argument: s.order_span.is_some(),
            },
            order: *order,
            failure: None,
        });
    }
    out
}

/// The failure order a compare-and-swap with failure order `fail` keeps when its success order
/// becomes `success`: the weaker of `fail` and the strongest failure order valid with it.
fn failure_for(fail: MemOrder, success: MemOrder) -> MemOrder {
    let cap = match success {
        MemOrder::AcqRel => MemOrder::Acquire,
        MemOrder::Release => MemOrder::Relaxed,
        o => o,
    };
    if fail.le(cap) {
        fail
    } else if cap.le(fail) {
        cap
    } else {
        MemOrder::Relaxed
    }
}

/// `prog` with the items at `levels`.
fn variant(
    prog: &Program,
    cands: &[Candidate],
    by_stmt: &BTreeMap<StmtId, usize>,
    levels: &[Level],
) -> Program {
    let mut p = prog.clone();
    for f in &mut p.functions {
        for pc in 0..f.body.len() {
            let Some(&i) = by_stmt.get(&f.stmt_of[pc]) else {
                continue;
            };
            let c = &cands[i];
            let level = levels[i];
            match (&mut f.body[pc], level) {
                (Instr::Fence { .. }, None) => f.body[pc] = Instr::Jump { target: pc + 1 },
                (Instr::Fence { order }, Some(o)) => *order = o,
                (Instr::Load { order, .. } | Instr::Store { order, .. }, Some(o))
                    if order.is_atomic() =>
                {
                    *order = o
                }
                (Instr::Rmw { order, .. }, Some(o)) => *order = o,
                (
                    Instr::Cas {
                        order, fail_order, ..
                    },
                    Some(o),
                ) => {
                    *order = o;
                    *fail_order = failure_for(c.failure.unwrap_or(*fail_order), o);
                }
                _ => {}
            }
        }
    }
    p
}

/// The verdict of a check of `prog` (`unit`'s source) under `opts`, up to its first bug.
fn verify(unit: &Unit, opts: &Options, prog: Program) -> Verdict {
    let u = Unit {
        source: unit.source.clone(),
        program: prog,
    };
    match check(&u, &first_bug(opts)) {
        Ok(r) if r.is_buggy() => Verdict::Buggy,
        Ok(r) if !r.is_incomplete() => Verdict::Clean,
        // An equivalence the weaker program cannot use, or a check that is not a proof.
        _ => Verdict::Inconclusive,
    }
}

fn first_bug(opts: &Options) -> Options {
    Options {
        first: true,
        keep_buggy: 1,
        ..opts.clone()
    }
}

/// Weakens the orders of `unit` as far as it stays correct (see the module documentation).
pub fn relax(unit: &Unit, opts: &Options, ropts: &RelaxOptions) -> Result<Relaxation, Diagnostic> {
    let original = check(unit, &first_bug(opts))?;
    if original.is_buggy() {
        return Ok(Relaxation::Buggy(Box::new(original)));
    }
    if original.is_incomplete() {
        return Ok(Relaxation::Incomplete(Box::new(original)));
    }
    let (cands, by_stmt) = candidates(unit);
    let start: Vec<Level> = cands.iter().map(|c| Some(c.order)).collect();
    let items: Vec<Item> = cands.iter().map(|c| c.item).collect();
    let prog = &unit.program;
    let mut verifier =
        |levels: &[Level]| verify(unit, opts, variant(prog, &cands, &by_stmt, levels));
    let price = |i: usize, l: Level| price(ropts.cost, cands[i].item, l);
    let outcome = if ropts.naive {
        search::naive(&items, &start, &mut verifier)
    } else if ropts.optimal {
        search::optimal(&items, &start, &mut verifier, &price)
    } else {
        search::greedy(&items, &start, &mut verifier)
    };
    let relaxed: Vec<RelaxedItem> = cands
        .iter()
        .zip(&outcome.levels)
        .zip(&outcome.checks)
        .map(|((c, &after), &checks)| RelaxedItem {
            stmt: c.stmt,
            item: c.item,
            before: c.order,
            after,
            failure: c
                .failure
                .map(|f| (f, after.map_or(f, |o| failure_for(f, o)))),
            checks,
        })
        .collect();
    let files = match write(unit, &relaxed) {
        Ok(f) => f,
        Err(e) => return Ok(Relaxation::Internal(e)),
    };
    let recheck = match recheck(unit, opts, &files) {
        Ok(r) => r,
        Err(not) => return Ok(not),
    };
    Ok(Relaxation::Relaxed(Box::new(Relaxed {
        items: relaxed,
        files,
        recheck,
        implied: outcome.implied,
        inconclusive: outcome.inconclusive,
        original,
        skipped: skipped(unit, &cands),
    })))
}

/// What `relax --optimal` minimises for an item at a level: under `--cost x86|armv8` the
/// instruction price (an access's [`crate::synth::orders::access_price`], a fence's
/// [`Cost::price`]; a removed fence costs nothing), then the weight; otherwise the weight.
fn price(cost: Cost, item: Item, level: Level) -> (u32, u32) {
    let weight = Item::weight(level);
    let Some(o) = level else {
        return (0, 0);
    };
    match (cost, item) {
        (Cost::Count | Cost::Weight, _) => (weight, 0),
        (_, Item::Access(kind)) => (crate::synth::orders::access_price(cost, kind, o), weight),
        (_, Item::Fence { .. }) => (cost.price(o), weight),
    }
}

/// The rewritten files of the relaxation `items` (none when nothing changed).
fn write(unit: &Unit, items: &[RelaxedItem]) -> Result<Vec<FileRewrite>, String> {
    let (src, prog) = (&unit.source.text, &unit.program);
    let changed = |i: &&RelaxedItem| Some(i.before) != i.after;
    let mut accesses = Vec::new();
    let mut failures = Vec::new();
    let mut weaker_fences = Vec::new();
    let mut removed = Vec::new();
    for i in items.iter().filter(changed) {
        match (i.item, i.after) {
            (Item::Access(_), Some(o)) => {
                accesses.push(OrderChange {
                    stmt: i.stmt,
                    order: o,
                });
                if let Some((_, after)) = i.failure.filter(|(b, a)| b != a) {
                    failures.push(OrderChange {
                        stmt: i.stmt,
                        order: after,
                    });
                }
            }
            (Item::Fence { .. }, Some(o)) => weaker_fences.push((Site::Existing(i.stmt), o)),
            (_, None) => removed.push(i.stmt),
        }
    }
    let what = |e: rewrite::RewriteError| format!("cannot write the relaxation: {e}");
    let (mut edits, _): (Vec<FileEdits>, _) =
        rewrite::fence_edits(src, prog, &weaker_fences).map_err(what)?;
    for extra in [
        rewrite::orders::order_edits(src, prog, &accesses).map_err(what)?,
        rewrite::orders::failure_edits(src, prog, &failures).map_err(what)?,
        rewrite::removal::fence_removals(src, prog, &removed).map_err(what)?,
    ] {
        rewrite::orders::merge(&mut edits, &extra);
    }
    edits.retain(|fe| !fe.edits.is_empty());
    rewrite::files::apply_all(src, prog, &edits).map_err(what)
}

/// The check of the written relaxation: clean and complete, or what `relax` answers instead
/// (incomplete — a `--timeout` that ran out during the search —, or an internal error).
fn recheck(unit: &Unit, opts: &Options, files: &[FileRewrite]) -> Result<Report, Relaxation> {
    let src = &unit.source;
    let internal = |m: String| Relaxation::Internal(m);
    let program = if files.is_empty() {
        unit.program.clone()
    } else {
        super::reparse(&src.name, &src.text, &unit.program, files)
            .map_err(|d| internal(format!("the relaxed program does not parse: {d}")))?
    };
    let written = Unit {
        source: src.clone(),
        program,
    };
    let report = check(&written, &first_bug(opts)).map_err(|d| internal(d.to_string()))?;
    if report.is_buggy() {
        return Err(internal(
            "the relaxed program has a bug when re-checked".into(),
        ));
    }
    if report.is_incomplete() {
        return Err(Relaxation::Incomplete(Box::new(report)));
    }
    Ok(report)
}
