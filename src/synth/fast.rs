//! The fast mode (fastFenSyng, thesis §6.5): fix one buggy execution at a time, on the program.
//!
//! The optimal mode needs the requirements of *every* buggy execution, and on large programs
//! collecting them alone exhausts memory. The fast mode never holds more than one buggy graph:
//!
//! 1. explore the current program — the input with the fences chosen so far inserted *in
//!    memory* — only up to its first buggy execution;
//! 2. turn that graph into its requirement(s) (one per bug) and choose the cheapest change of
//!    the current program's fences that fixes them: new fences at slots its threads passed, or
//!    stronger orders for fences already there (program fences and the ones earlier rounds
//!    chose; strengthening adds no fence, as in thesis §6.6). Earlier fences are always kept;
//! 3. apply the change and repeat until an exploration finds no bug.
//!
//! Each such round is one *iteration* ([`Solution::iterations`]). The fences are applied at
//! the IR level: a chosen slot's markers ([`Instr::Slot`]) become [`Instr::Fence`]
//! instructions of a new fence statement appended to [`Program::stmts`], and a strengthened
//! fence's instructions get the new order. Statements, slots and jump targets of the input keep
//! their ids, so every choice maps back to a site of the input program: the final
//! [`Solution`] — and each round's requirement, with the inserted fences taken out again — is
//! expressed on the input, for the rewriter and the reports. The caller (`api::repair`) writes
//! the fences into the source, re-parses and re-checks it in full as for the optimal mode.
//!
//! Termination: every round raises the assignment in the finite lattice of fence orders (a
//! requirement is a consistent buggy prefix, so no fix leaves its graph's fences unchanged).
//! Unfixable: a round whose buggy graph stays buggy with seq_cst fences everywhere is reported
//! exactly like the optimal mode reports it — and since removing fences keeps an execution
//! consistent, that execution (fences taken out) is an execution of the input that no fence
//! set removes. Deterministic: the explorer's first buggy graph and the solver are.

use super::oracle::{Answers, Oracle};
use super::NoFix;
use super::{unfixable, Cost, Mode, Outcome, Problem, Solution};
use crate::checker::{self, Bug, CheckOptions, Equiv, ExecutionGraph, Incomplete, Limits, Model};
use crate::ir::{Instr, MemOrder, Program, SlotId, SlotPlace, Span, Stmt, StmtId, StmtKind};
use crate::trace::collect::Collector;
use crate::trace::{candidate_sites, Assignment, Candidate, Requirement, Site};
use std::collections::BTreeMap;

/// One exploration of the fast loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    /// Executions explored (complete ones; up to and including the first buggy one).
    pub executions: u64,
    /// Buggy graphs turned into requirements: 1, or 0 in the last (clean) exploration.
    pub graphs: usize,
    /// The requirements of that graph (one per bug).
    pub requirements: usize,
}

/// What the fast loop ended with.
#[derive(Clone, Debug)]
pub enum FastOutcome {
    /// The input program has no buggy execution.
    Clean { executions: u64 },
    /// The fences fix every round's execution and the last exploration found no bug; `bugs` are
    /// the distinct bugs of the rounds' executions (the errors the fix removes).
    Fixed { solution: Solution, bugs: Vec<Bug> },
    /// A round's execution is not fixable with fences (given on the input program).
    Unfixable(super::Unfixable),
    /// An exploration hit a limit before finding a bug (or, on the input, finished with
    /// executions cut at the loop bound and no bug).
    Incomplete { why: Incomplete, executions: u64 },
}

/// The fast loop's outcome and its explorations.
#[derive(Clone, Debug)]
pub struct FastRun {
    pub outcome: FastOutcome,
    /// Every exploration in order: the buggy ones (the iterations) and the last one.
    pub rounds: Vec<Round>,
    /// Seconds spent exploring (on the clock given to [`fix`]); the rest is synthesis.
    pub explore_seconds: f64,
}

impl FastRun {
    /// The outcome as the optimal synthesis gives it (`None`: clean or incomplete).
    pub fn into_outcome(self) -> Option<Outcome> {
        match self.outcome {
            FastOutcome::Fixed { solution, .. } => Some(Outcome::Fixed(solution)),
            FastOutcome::Unfixable(u) => Some(Outcome::Unfixable(u)),
            FastOutcome::Clean { .. } | FastOutcome::Incomplete { .. } => None,
        }
    }
}

/// Repairs `input` one buggy execution at a time (see the module doc), minimising `cost` in
/// each round. `limits` apply to every exploration (`equiv` is always graphs: a requirement
/// is a graph); explorations are timed on `clock`.
pub fn fix(
    input: &Program,
    model: Model,
    limits: &Limits,
    cost: Cost,
    clock: fn() -> f64,
) -> FastRun {
    let search = Search {
        lazy: false,
        seed: None,
        verify: None,
    };
    run(input, model, limits, cost, clock, search)
}

/// Requirements of the input already known when the lazy loop starts: what the optimal mode
/// collected before its collection limit (`trace::collect::explore_within`).
#[derive(Debug)]
pub struct Seed {
    /// Requirements on the input program.
    pub requirements: Vec<Requirement>,
    /// Their distinct bugs.
    pub bugs: Vec<Bug>,
    /// Executions explored, and buggy ones, while collecting them.
    pub executions: u64,
    pub graphs: usize,
}

/// What a [`Verify`] hook found on a round's fences, written into the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The written program has no buggy execution: the loop ends with these fences.
    Clean,
    /// It has one: the loop explores the program in memory for a buggy execution, as usual.
    Buggy,
    /// The hook failed (the caller keeps why): the loop ends with these fences.
    Stop,
}

/// A hook that writes a round's fences into the source and checks the result: when the
/// caller re-checks the written fix anyway, checking each round's fences that way replaces
/// the loop's own exploration of the last round (the same program explored twice).
pub type Verify<'a> = &'a mut dyn FnMut(&Solution) -> Verdict;

/// How [`run`] searches.
pub struct Search<'a> {
    /// `--mode lazy`: each round solves the 0/1 program over the requirements of *every*
    /// round so far on the input (earlier fences are not kept, they may move or go). The
    /// result is optimal: it is the cheapest fence set fixing the requirements found, every
    /// fix must fix those, and it fixes all (the last check finds no bug). Each round adds a
    /// requirement the current fences do not fix, so the loop ends. Otherwise (the fast mode,
    /// [`fix`]) earlier fences are kept and only strengthened.
    pub lazy: bool,
    /// With `lazy`: start from the cheapest fences for these requirements instead of none;
    /// the first round is the collection that found them. Exact for the same reason.
    pub seed: Option<Seed>,
    /// Asked about every round's fences before the program is explored with them.
    pub verify: Option<Verify<'a>>,
}

/// The cheapest change of `prog`'s fences fixing every requirement of `reqs` (given on `prog`),
/// or the index of one no fence set fixes.
fn solve(
    prog: &Program,
    reqs: &[Requirement],
    model: Model,
    cost: Cost,
    answers: Option<&Answers>,
) -> Result<Assignment, usize> {
    let sites = candidate_sites(prog, reqs);
    let p = Problem {
        cost,
        reqs,
        acc: &crate::trace::orders::NO_ACCESSES,
        oracle: Oracle::new(model, reqs, &sites, &crate::trace::orders::NO_ACCESSES)
            .sharing(answers),
        sites,
    };
    match p.solve_optimal(None) {
        Ok(Some((a, _))) => Ok(a),
        Ok(None) => unreachable!("a search without deadline finishes"),
        Err(NoFix) => Err(p
            .first_unfixable()
            .expect("a requirement the search found unfixable")),
    }
}

/// The rounds of the fast and lazy modes, as `search` says (see [`Search`]).
pub fn run(
    input: &Program,
    model: Model,
    limits: &Limits,
    cost: Cost,
    clock: fn() -> f64,
    search: Search,
) -> FastRun {
    let Search { lazy, seed, verify } = search;
    let opts = CheckOptions {
        model,
        limits: Limits {
            equiv: Equiv::Graph,
            ..limits.clone()
        },
        first: true,
        keep_buggy: 1,
    };
    let mut l = Rounds {
        input,
        model,
        cost,
        lazy,
        verify,
        kept: Answers::default(),
        f: Fenced::new(input),
        rounds: Vec::new(),
        explore_seconds: 0.0,
        reqs: Vec::new(),
        bugs: Vec::new(),
    };
    if let Some(seed) = seed {
        if let Some(done) = l.seeded(seed).or_else(|| l.verified()) {
            return l.finish(done);
        }
    }
    loop {
        let started = clock();
        let res = checker::check(&l.f.prog, &opts);
        l.explore_seconds += clock() - started;
        let executions = res.stats.executions;
        let done = match res.buggy.first() {
            None => Some(l.clean(res.stats, executions, opts.limits.unroll())),
            Some(g) => l.round(g, executions),
        };
        if let Some(done) = done {
            return l.finish(done);
        }
    }
}

/// What [`run`]'s rounds carry from one to the next.
struct Rounds<'p, 'v> {
    input: &'p Program,
    model: Model,
    cost: Cost,
    lazy: bool,
    verify: Option<Verify<'v>>,
    /// The lazy rounds' 0/1 programs are all on the input, over a growing list of the same
    /// requirements: their `fixed_by` answers carry over (see `oracle`). Unused when fast.
    kept: Answers,
    f: Fenced<'p>,
    rounds: Vec<Round>,
    explore_seconds: f64,
    /// Every round's requirements on the input program.
    reqs: Vec<Requirement>,
    /// The distinct bugs of the rounds' executions.
    bugs: Vec<Bug>,
}

impl Rounds<'_, '_> {
    fn finish(self, outcome: FastOutcome) -> FastRun {
        FastRun {
            outcome,
            rounds: self.rounds,
            explore_seconds: self.explore_seconds,
        }
    }

    fn mode(&self) -> Mode {
        if self.lazy {
            Mode::Lazy
        } else {
            Mode::Fast
        }
    }

    /// The shared oracle answers, when the rounds' programs are all the input.
    fn answers(&self) -> Option<&Answers> {
        self.lazy.then_some(&self.kept)
    }

    fn unfixable_input(&self, r: &Requirement) -> FastOutcome {
        let no_sites = candidate_sites(self.input, std::slice::from_ref(r)).is_empty();
        FastOutcome::Unfixable(unfixable(r, no_sites, self.model))
    }

    /// The current fences, described for `iterations` rounds, with every requirement so far.
    fn solution(&mut self, iterations: usize) -> Solution {
        let reqs = std::mem::take(&mut self.reqs);
        let answers = self.answers();
        self.f.solution(
            self.model,
            self.cost,
            reqs,
            iterations,
            self.mode(),
            answers,
        )
    }

    /// Starts from the cheapest fences for `seed`'s requirements; `Some` when one is
    /// unfixable.
    fn seeded(&mut self, seed: Seed) -> Option<FastOutcome> {
        self.rounds.push(Round {
            executions: seed.executions,
            graphs: seed.graphs,
            requirements: seed.requirements.len(),
        });
        self.reqs = seed.requirements;
        self.bugs = seed.bugs;
        match solve(
            self.input,
            &self.reqs,
            self.model,
            self.cost,
            self.answers(),
        ) {
            Ok(change) => {
                for (site, order) in change.orders {
                    self.f.apply(site, order);
                }
                None
            }
            Err(ri) => Some(self.unfixable_input(&self.reqs[ri])),
        }
    }

    /// Asks the hook about the current fences: `Some` ends the loop with them.
    fn verified(&mut self) -> Option<FastOutcome> {
        self.verify.as_ref()?;
        let answers = self.answers();
        let candidate = self.f.solution(
            self.model,
            self.cost,
            self.reqs.clone(),
            self.rounds.len(),
            self.mode(),
            answers,
        );
        match (self.verify.as_mut()?)(&candidate) {
            Verdict::Buggy => None,
            Verdict::Clean | Verdict::Stop => Some(FastOutcome::Fixed {
                solution: candidate,
                bugs: self.bugs.clone(),
            }),
        }
    }

    /// The outcome of an exploration that found no bug (`stats`).
    fn clean(&mut self, stats: checker::Stats, executions: u64, unroll: u32) -> FastOutcome {
        self.rounds.push(Round {
            executions,
            graphs: 0,
            requirements: 0,
        });
        if let Some(why) = stats.incomplete {
            FastOutcome::Incomplete { why, executions }
        } else if self.rounds.len() > 1 {
            let solution = self.solution(self.rounds.len() - 1);
            let bugs = std::mem::take(&mut self.bugs);
            FastOutcome::Fixed { solution, bugs }
        } else if stats.bounded > 0 {
            FastOutcome::Incomplete {
                why: Incomplete::LoopBound {
                    unroll,
                    cut: stats.bounded,
                },
                executions,
            }
        } else {
            FastOutcome::Clean { executions }
        }
    }

    /// One round on the buggy graph `g` (found among `executions`): its requirements, the
    /// cheapest change of fences for them, applied. `Some` ends the loop.
    fn round(&mut self, g: &ExecutionGraph, executions: u64) -> Option<FastOutcome> {
        for b in &g.bugs {
            let known = |o: &Bug| (o.kind, o.stmt, &o.message) == (b.kind, b.stmt, &b.message);
            if !self.bugs.iter().any(known) {
                self.bugs.push(b.clone());
            }
        }
        let mut c = Collector::new(self.model);
        c.add(g);
        let round_reqs = c.into_requirements();
        self.rounds.push(Round {
            executions,
            graphs: 1,
            requirements: round_reqs.len(),
        });
        let index = self.rounds.len() - 1;
        let first_new = self.reqs.len();
        let on_input: Vec<_> = round_reqs
            .iter()
            .map(|r| self.f.on_input(r, index))
            .collect();
        self.reqs.extend(on_input);
        // The round's 0/1 program: fast — this round's requirements on the current program
        // (earlier fences kept, only strengthened); lazy — every round's, on the input.
        let (prog, problem_reqs) = if self.lazy {
            (self.input, &self.reqs[..])
        } else {
            (&self.f.prog, &round_reqs[..])
        };
        let change = match solve(prog, problem_reqs, self.model, self.cost, self.answers()) {
            Ok(a) => a,
            Err(ri) => {
                // Earlier rounds' requirements are fixable (all seq_cst fixes them), so the
                // unfixable one is this round's; `reqs` has it on the input.
                let ri = if self.lazy { ri } else { first_new + ri };
                return Some(self.unfixable_input(&self.reqs[ri]));
            }
        };
        if std::env::var_os("FENSYN_DEBUG").is_some() {
            eprintln!(
                "fast round {}: {executions} executions, {} requirements, change {:?}",
                index + 1,
                round_reqs.len(),
                change.orders
            );
        }
        let ended = if self.lazy {
            self.apply_lazy(change)
        } else {
            self.apply_fast(change)
        };
        ended.or_else(|| self.verified())
    }

    /// Lazy: the round's optimum for every requirement so far replaces the fences.
    fn apply_lazy(&mut self, change: Assignment) -> Option<FastOutcome> {
        let mut next = Fenced::new(self.input);
        for (site, order) in change.orders {
            next.apply(site, order);
        }
        // The round's execution is not fixed by the fences it ran with, so the new
        // optimum differs from them (and the loop ends: finitely many requirements).
        debug_assert!(
            next.chosen != self.f.chosen,
            "a lazy round changed no fence"
        );
        if next.chosen == self.f.chosen {
            let solution = self.solution(self.rounds.len());
            let bugs = std::mem::take(&mut self.bugs);
            return Some(FastOutcome::Fixed { solution, bugs });
        }
        self.f = next;
        None
    }

    /// Fast: the round's change (on the current program) is applied to the fences kept.
    fn apply_fast(&mut self, change: Assignment) -> Option<FastOutcome> {
        let before = self.f.chosen.clone();
        for (site, order) in change.orders {
            self.f.apply(self.f.input_site(site), order);
        }
        if self.f.chosen != before {
            return None;
        }
        // Cannot happen (a requirement is a consistent buggy prefix, so its fix changes a
        // fence of its graph). Stop rather than loop: the caller's full re-check of the
        // written fix reports the execution that is left.
        debug_assert!(false, "a fast round changed no fence");
        let solution = self.solution(self.rounds.len());
        let bugs = std::mem::take(&mut self.bugs);
        Some(FastOutcome::Fixed { solution, bugs })
    }
}

/// The input program with the fences chosen so far inserted.
struct Fenced<'a> {
    input: &'a Program,
    prog: Program,
    /// The chosen fences, on the input's sites.
    chosen: Assignment,
    /// The slot each appended fence statement stands for (statement `input.stmts.len() + i`
    /// is the fence inserted at slot `inserted[i]`).
    inserted: Vec<SlotId>,
    /// The statement of the fence inserted at a slot.
    stmt_of_slot: BTreeMap<SlotId, StmtId>,
    /// The input's own fence statements and their orders.
    base: BTreeMap<StmtId, MemOrder>,
}

impl<'a> Fenced<'a> {
    fn new(input: &'a Program) -> Self {
        let mut base = BTreeMap::new();
        for func in &input.functions {
            for (pc, ins) in func.body.iter().enumerate() {
                if let Instr::Fence { order } = ins {
                    base.insert(func.stmt_of[pc], *order);
                }
            }
        }
        Fenced {
            input,
            prog: input.clone(),
            chosen: Assignment::default(),
            inserted: Vec::new(),
            stmt_of_slot: BTreeMap::new(),
            base,
        }
    }

    /// The slot an inserted fence statement stands for.
    fn slot_of(&self, stmt: StmtId) -> Option<SlotId> {
        stmt.checked_sub(self.input.stmts.len())
            .and_then(|i| self.inserted.get(i).copied())
    }

    /// A site of the current program as a site of the input: an inserted fence is its slot.
    fn input_site(&self, site: Site) -> Site {
        match site {
            Site::Existing(st) => self.slot_of(st).map_or(site, Site::Slot),
            Site::Slot(_) => site,
        }
    }

    /// Gives the input site `site` a fence of at least `order` in the current program.
    fn apply(&mut self, site: Site, order: MemOrder) {
        let order = self.chosen.get(site).map_or(order, |o| o.join(order));
        self.chosen.set(site, order);
        let stmt = match site {
            Site::Existing(st) => st,
            Site::Slot(s) => match self.stmt_of_slot.get(&s) {
                Some(&st) => st,
                None => {
                    let st = self.prog.stmts.len();
                    let slot = &self.input.slots[s];
                    let span = match slot.place {
                        SlotPlace::Before { stmt } => {
                            let at = self.input.stmts[stmt].span;
                            Span {
                                end: at.start,
                                ..at
                            }
                        }
                        SlotPlace::BlockEnd { close, .. } => Span {
                            end: close.start,
                            ..close
                        },
                    };
                    self.prog.stmts.push(Stmt {
                        func: slot.func,
                        kind: StmtKind::Fence,
                        span,
                        order_span: None,
                    });
                    self.inserted.push(s);
                    self.stmt_of_slot.insert(s, st);
                    // Every marker of the slot (an inlined body has copies) becomes the fence:
                    // one instruction for one, so no jump target moves.
                    for func in &mut self.prog.functions {
                        for (pc, ins) in func.body.iter_mut().enumerate() {
                            if *ins == Instr::Slot(s) {
                                *ins = Instr::Fence { order };
                                func.stmt_of[pc] = st;
                            }
                        }
                    }
                    debug_assert!(self.prog.validate().is_ok());
                    return;
                }
            },
        };
        for func in &mut self.prog.functions {
            for (pc, ins) in func.body.iter_mut().enumerate() {
                if func.stmt_of[pc] == stmt {
                    if let Instr::Fence { order: o } = ins {
                        *o = order;
                    }
                }
            }
        }
    }

    /// Requirement `r` of the current program as a requirement of the input (from round
    /// `round`): the inserted fences' events become the slots they stand for again, and the
    /// program fences get back their own orders. With the chosen fences put back by
    /// [`crate::checker::ExecutionGraph::with_fences`] it is `r`'s graph again.
    fn on_input(&self, r: &Requirement, round: usize) -> Requirement {
        let g = &r.graph;
        let slot_of_event = |e: usize| {
            let ev = &g.events[e];
            if ev.is_fence() {
                ev.stmt.and_then(|st| self.slot_of(st))
            } else {
                None
            }
        };
        let keep: Vec<bool> = (0..g.len()).map(|e| slot_of_event(e).is_none()).collect();
        let (mut sub, bug) = g.restrict_with_bug(&keep, &r.bug);
        for (t, tr) in g.threads.iter().enumerate() {
            // Kept events among the thread's first i events.
            let mut kept_before = Vec::with_capacity(tr.events.len() + 1);
            kept_before.push(0);
            for &e in &tr.events {
                kept_before.push(kept_before.last().copied().unwrap_or(0) + keep[e] as usize);
            }
            // A slot passed after k events comes before the thread's event k; an inserted
            // fence is its event i. Sorted by that place (stably: equal places keep their order).
            let mut slots: Vec<((usize, u8), (SlotId, usize))> = tr
                .slots
                .iter()
                .map(|&(s, k)| ((k, 0), (s, kept_before[k])))
                .collect();
            for (i, &e) in tr.events.iter().enumerate() {
                if let Some(s) = slot_of_event(e) {
                    slots.push(((i, 1), (s, kept_before[i])));
                }
            }
            slots.sort_by_key(|&(place, _)| place);
            sub.threads[t].slots = slots.into_iter().map(|(_, s)| s).collect();
            // Removing fences does not end a thread earlier.
            sub.threads[t].end = tr.end;
        }
        for ev in &mut sub.events {
            if let (true, Some(o)) = (ev.is_fence(), ev.stmt.and_then(|st| self.base.get(&st))) {
                ev.order = *o;
            }
        }
        Requirement {
            graph_index: round,
            graph: sub,
            bug,
        }
    }

    /// The chosen fences as a solution on the input program, fixing `reqs` (the rounds'
    /// requirements, on the input).
    fn solution(
        &self,
        model: Model,
        cost: Cost,
        reqs: Vec<Requirement>,
        iterations: usize,
        mode: Mode,
        answers: Option<&Answers>,
    ) -> Solution {
        let sites: Vec<Candidate> = self
            .chosen
            .orders
            .keys()
            .map(|&site| Candidate {
                site,
                base: match site {
                    Site::Existing(st) => self.base.get(&st).copied(),
                    Site::Slot(_) => None,
                },
                orders: MemOrder::FENCE_ORDERS.to_vec(),
            })
            .collect();
        let p = Problem {
            cost,
            reqs: &reqs,
            acc: &crate::trace::orders::NO_ACCESSES,
            oracle: Oracle::new(model, &reqs, &sites, &crate::trace::orders::NO_ACCESSES)
                .sharing(answers),
            sites,
        };
        let mut sol = p.describe(self.chosen.clone(), iterations);
        debug_assert!((0..reqs.len()).all(|ri| p.oracle.fixes(ri, &self.chosen)));
        sol.mode = mode;
        drop(p);
        sol.requirements = reqs;
        sol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Store buffering, looped in the first thread, with a release fence in the second: one
    /// seq_cst fence per thread is needed.
    const SB: &str = "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
        atomic_int x;\natomic_int y;\nint a, b;\n\
        void *t1(void *arg) {\n    for (int i = 0; i < 2; i++) {\n        \
        atomic_store_explicit(&x, 1, memory_order_relaxed);\n    }\n    \
        a = atomic_load_explicit(&y, memory_order_relaxed);\n    return NULL;\n}\n\
        void *t2(void *arg) {\n    atomic_store_explicit(&y, 1, memory_order_relaxed);\n    \
        atomic_thread_fence(memory_order_release);\n    \
        b = atomic_load_explicit(&x, memory_order_relaxed);\n    return NULL;\n}\n\
        int main(void) {\n    pthread_t p1, p2;\n    pthread_create(&p1, NULL, t1, NULL);\n    \
        pthread_create(&p2, NULL, t2, NULL);\n    pthread_join(p1, NULL);\n    \
        pthread_join(p2, NULL);\n    assert(!(a == 0 && b == 0));\n    return 0;\n}\n";

    fn first_buggy(prog: &Program) -> crate::checker::ExecutionGraph {
        let res = checker::check(
            prog,
            &CheckOptions {
                first: true,
                keep_buggy: 1,
                ..CheckOptions::default()
            },
        );
        res.buggy.into_iter().next().expect("a buggy execution")
    }

    /// A round's requirement, taken back to the input and given the chosen fences again, is
    /// the round's graph; the inserted fences stand at their slots, the program fence has its
    /// own order, and the input's ids are untouched.
    #[test]
    fn requirements_map_back_to_the_input() {
        let input = crate::frontend::parse_c("sb.c", SB).unwrap();
        let t1 = input.functions.iter().position(|f| f.name == "t1").unwrap();
        let (fence_stmt, base) = input
            .functions
            .iter()
            .flat_map(|f| f.body.iter().zip(&f.stmt_of))
            .find_map(|(ins, &st)| match ins {
                Instr::Fence { order } => Some((st, *order)),
                _ => None,
            })
            .unwrap();
        assert_eq!(base, MemOrder::Release);
        let mut f = Fenced::new(&input);
        // Every slot of the first thread (inside the loop too) and the program fence raised
        // to acq_rel: still not enough for store buffering.
        let slots: Vec<SlotId> = (0..input.slots.len())
            .filter(|&s| input.slots[s].func == t1)
            .collect();
        assert!(slots.len() >= 3);
        for &s in &slots {
            f.apply(Site::Slot(s), MemOrder::SeqCst);
        }
        f.apply(Site::Existing(fence_stmt), MemOrder::AcqRel);
        assert!(f.prog.validate().is_ok());
        assert_eq!(f.prog.stmts[..input.stmts.len()], input.stmts[..]);
        assert_eq!(
            f.input_site(Site::Existing(input.stmts.len())),
            Site::Slot(slots[0])
        );
        let g = first_buggy(&f.prog);
        let inserted = g
            .events
            .iter()
            .filter(|e| e.stmt.is_some_and(|st| st >= input.stmts.len()))
            .count();
        // The loop passes the slot inside it twice.
        assert!(inserted > slots.len(), "{inserted} inserted fence events");
        let mut c = Collector::new(Model::Rc11);
        c.add(&g);
        let reqs = c.into_requirements();
        assert_eq!(reqs.len(), 1);
        let r = f.on_input(&reqs[0], 0);
        assert!(r
            .graph
            .events
            .iter()
            .all(|e| e.stmt.is_none_or(|st| st < input.stmts.len())));
        let program_fence = r.graph.events.iter().find(|e| e.is_fence()).unwrap();
        assert_eq!(program_fence.order, MemOrder::Release);
        let (back, _) = r
            .graph
            .with_fences(&|s| f.chosen.get(Site::Slot(s)), &|st| {
                f.chosen.get(Site::Existing(st))
            });
        assert_eq!(back.canonical_key(), reqs[0].graph.canonical_key());
        // On the input, with no fence, it is a buggy execution; with the chosen ones, not yet
        // fixed; a seq_cst fence at the second thread's fence fixes it.
        assert!(r.fixed_by(&Assignment::default(), Model::Rc11).is_none());
        assert!(r.fixed_by(&f.chosen, Model::Rc11).is_none());
        let mut more = f.chosen.clone();
        more.set(Site::Existing(fence_stmt), MemOrder::SeqCst);
        assert!(r.fixed_by(&more, Model::Rc11).is_some());
    }

    #[test]
    fn the_loop_fixes_store_buffering_with_one_fence_per_thread() {
        let input = crate::frontend::parse_c("sb.c", SB).unwrap();
        let limits = Limits::default();
        let run = fix(&input, Model::Rc11, &limits, Cost::Count, || 0.0);
        let FastOutcome::Fixed { solution, bugs } = run.outcome else {
            panic!("not fixed: {:?}", run.outcome);
        };
        assert_eq!(bugs.len(), 1);
        assert_eq!((solution.inserted, solution.strengthened), (1, 1));
        assert!(solution.fences.iter().all(|f| f.order == MemOrder::SeqCst));
        assert_eq!(solution.iterations, run.rounds.len() - 1);
        assert_eq!(solution.mode, Mode::Fast);
    }

    /// The lazy rounds share their oracles' answers: a growing requirement list solved again
    /// gives what it gives with fresh oracles, with fewer `fixed_by` checks, and the shared
    /// answers describe the final fences as a fresh oracle does.
    #[test]
    fn shared_answers_change_no_result_and_save_checks() {
        let src = include_str!("../../fixtures/bench/burns_1.c");
        let input = crate::frontend::parse_c("burns_1.c", src).unwrap();
        let res = checker::check(
            &input,
            &CheckOptions {
                keep_buggy: usize::MAX,
                ..CheckOptions::default()
            },
        );
        let mut c = Collector::new(Model::Rc11);
        for g in &res.buggy {
            c.add(g);
        }
        let reqs = c.into_requirements();
        assert!(reqs.len() >= 10, "{} requirements", reqs.len());
        let kept = Answers::default();
        let (mut fresh_checks, mut shared_checks) = (0, 0);
        for n in [reqs.len() - 2, reqs.len() - 1, reqs.len()] {
            let sites = candidate_sites(&input, &reqs[..n]);
            let solve_with = |answers| {
                let p = Problem {
                    cost: Cost::Count,
                    reqs: &reqs[..n],
                    acc: &crate::trace::orders::NO_ACCESSES,
                    oracle: Oracle::new(
                        Model::Rc11,
                        &reqs[..n],
                        &sites,
                        &crate::trace::orders::NO_ACCESSES,
                    )
                    .sharing(answers),
                    sites: sites.clone(),
                };
                let Ok(Some((a, _))) = p.solve_optimal(None) else {
                    panic!("no fix")
                };
                let described = p.describe(a.clone(), 0);
                (a, described, p.oracle.checks.get())
            };
            let (a, d, checks) = solve_with(None);
            let (b, e, shared) = solve_with(Some(&kept));
            assert_eq!(a, b);
            let needs = |d: &Solution| {
                d.fences
                    .iter()
                    .map(|f| (f.site, f.order, f.needed_by.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(needs(&d), needs(&e));
            fresh_checks += checks;
            shared_checks += shared;
        }
        assert!(
            shared_checks < fresh_checks,
            "{shared_checks} checks shared, {fresh_checks} fresh"
        );
    }
}
