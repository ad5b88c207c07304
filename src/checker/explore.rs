//! Exhaustive exploration of the consistent execution graphs of a program, each exactly once.
//!
//! # How every graph is visited once
//!
//! A consistent graph has an acyclic `po ∪ rf` (no thin air), so its events can be added one by
//! one, each after its po-predecessor. Graphs are explored by **TruSt** (Kokologiannakis et al.,
//! POPL 2022; see `revisit`): the lowest thread with an enabled event adds it; a read branches
//! on every write it may read now, a write on its mo positions and on **backward revisits** of
//! earlier reads of its location, allowed only when the events the revisit deletes were
//! maximally added. Nothing is remembered between branches (memory is the current path), and
//! no branch is a dead end: every leaf is a consistent complete graph, blocked or cut ones
//! included.
//!
//! Under `--equiv rf|value` (and with [`Limits::canonical`]) the explorer runs in **canonical
//! order** instead, which the SC witness of `witness` needs (a witness is extended event by
//! event and never shrinks): at every step the enabled event of the lowest-numbered thread is
//! added (an event is enabled when its po-predecessor, its rf source and, for a join, the
//! joined thread's last event are present). It branches on
//!
//! * which thread moves next — a thread may only move if no lower thread has an enabled event;
//!   a lower thread whose next event is a read may wait, but then its read must later read from
//!   a write added after this step (the per-thread `bound`), otherwise the read would have been
//!   enabled when the higher thread moved and the order would not be canonical;
//! * the write each read reads from (any write to the location allowed by the bound);
//! * the mo position of each new write among the existing writes to its location.
//!
//! Each choice sequence yields a different graph, and every consistent graph's canonical order
//! is one of the sequences, so every graph is produced exactly once; a waiting read whose write
//! never comes is a dead end (`Stats::dead_ends`). In both modes partial graphs are checked
//! for consistency after every memory event: RC11 and SC consistency are preserved by taking
//! po ∪ rf-prefixes, so an inconsistent prefix can be cut without losing graphs.
//!
//! Thread-local instructions (assignments, branches, asserts, slot markers) are executed
//! eagerly; they create no events. A failed assertion stops its thread (the graph records the
//! bug); the other threads run to completion, and a join on the failed thread waits forever.

use super::deps::{DepState, Deps};
use super::future::Future;
use super::graph::INIT_THREAD;
use super::graph::{
    Bug, BugKind, Event, EventId, EventKind, ExecutionGraph, ThreadEnd, ThreadTrace,
};
use super::incremental::Views;
use super::model::{MemoryModel, Model, Relations};
use super::witness::Witness;
use crate::ir::spin::SpinInfo;
use crate::ir::{Instr, Loc, MemOrder, Program, SyncKind, SyncRole};
use smallvec::smallvec;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

mod liveness;
mod memory;
mod revisit;
mod wait;

/// Local instructions a thread may execute between two events before the explorer gives up
/// (guards against a non-terminating local loop).
const LOCAL_STEP_LIMIT: usize = 1_000_000;

/// Why the explorer stopped before covering every graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incomplete {
    MaxExecutions(u64),
    Timeout,
    /// Loops reached the unroll bound in `cut` executions and no bug was found.
    LoopBound {
        unroll: u32,
        cut: u64,
    },
    /// A thread ran a local loop without touching memory for too long.
    LocalLoop {
        thread: usize,
        func: String,
    },
}

/// What a visitor wants the explorer to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// Limits of one exploration.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub max_executions: Option<u64>,
    pub deadline: Option<Instant>,
    /// How many iterations a loop may run each time a thread enters it ([`DEFAULT_UNROLL`]
    /// when `None`); the thread is cut when it would start one more. (Counting `for` loops
    /// have no bound: the front end emits no `LoopIter` for them.)
    pub unroll: Option<u32>,
    /// Let weak compare-exchanges fail spuriously: a weak CAS that reads the expected value
    /// may also fail (a read with its failure order, `ok` = 0), as C11 allows. Off by default
    /// (weak CASes then behave like strong ones, which explores fewer executions).
    pub spurious_cas: bool,
    /// Test aid: after every step, also check the graph with the full (non-incremental)
    /// axioms and panic if the incremental check disagrees; and remember every complete graph
    /// (by its canonical key) and panic if one is visited twice.
    pub verify_incremental: bool,
    /// Called with the running totals (executions of every kind, buggy ones) every
    /// [`PROGRESS_EVERY`] complete executions: how the CLI draws its progress bar.
    pub progress: Option<Progress>,
    /// What counts as a bug of a complete execution (assertion failures and races by default;
    /// with [`Goal::Sc`] only not being sequentially consistent).
    pub goal: Goal,
    /// Let events carry their address, data and control dependencies (see `deps`); always
    /// on under `armv8`. Costs time; needed by `--on-hardware armv8`.
    pub dependencies: bool,
    /// Which executions count as one (see [`Equiv`]). The coarser equivalences are
    /// implemented for the `sc` model; under any other model the explorer uses graphs
    /// (callers resolve the choice with [`crate::checker::resolve_equiv`]).
    pub equiv: Equiv,
    /// Exploration threads for [`crate::checker::check`] (0 or 1: this thread only; see
    /// [`explore_parallel`]). Ignored by [`explore`] itself.
    pub jobs: usize,
    /// Explore graphs in canonical order with waiting reads (the explorer used before TruSt;
    /// it is how `--equiv rf|value` runs) instead of TruSt. A test and benchmark aid: both
    /// visit the same graphs.
    pub canonical: bool,
    /// Give up ([`Stats::gave_up`]) once the canonical explorer's dead ends exceed this many
    /// plus ten per execution visited: its redundant work is then growing out of proportion
    /// (see `cli`'s `--equiv` default, which explores graphs instead).
    pub give_up_after: Option<u64>,
    /// Report heap objects a complete execution never freed ([`MemoryError::Leak`]): off by
    /// default (`--leaks`), as a test harness rarely frees what it allocated.
    pub leaks: bool,
    /// Report a thread that spins forever in an await or spin loop ([`BugKind::Liveness`],
    /// see `explore/liveness.rs`). Off in the library's default; `check` and `fix` turn it on
    /// unless `--no-liveness`.
    pub liveness: bool,
    /// Explore waits on locks as plain reads (no lock-aware exploration, see `explore/wait.rs`):
    /// the blocked executions on a lock released later are visited too. A measurement and test
    /// aid (the oracle's size check); the complete executions are the same.
    pub plain_waits: bool,
    /// Silenced bugs (`fensyn: ignore` comments, see `crate::suppress`): a complete
    /// execution's bugs for which it returns true are dropped before the execution is
    /// counted, so an execution whose every bug is silenced counts as correct.
    pub suppress: Option<Suppress>,
}

/// A bug filter ([`Limits::suppress`]): true for a bug to drop.
#[derive(Clone)]
pub struct Suppress(pub std::sync::Arc<dyn Fn(&Bug) -> bool + Send + Sync>);

impl std::fmt::Debug for Suppress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Suppress")
    }
}

/// The equivalence between executions the explorer visits one representative of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Equiv {
    /// One execution per consistent execution graph (po, rf, mo): what synthesis needs.
    #[default]
    Graph,
    /// One execution per reads-from class (po, rf) that has an SC witness.
    Rf,
    /// One execution per vector of values read (per thread, in program order). Reads whose
    /// source decides happens-before (when the program has non-atomic accesses) keep one
    /// execution per source, so every race is still found.
    Value,
}

impl Equiv {
    pub fn as_str(self) -> &'static str {
        match self {
            Equiv::Graph => "graph",
            Equiv::Rf => "rf",
            Equiv::Value => "value",
        }
    }
}

/// What the explorer reports as the bugs of an execution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// Failed assertions, data races, undefined behaviour and deadlocks.
    #[default]
    Bugs,
    /// Robustness against SC: an execution is buggy iff it is not SC-consistent (a cycle in
    /// `po ∪ rf ∪ mo ∪ fr`); assertions and races are ignored.
    Sc,
}

/// How often [`Limits::progress`] is called, in complete executions.
pub const PROGRESS_EVERY: u64 = 256;

/// A progress callback: `(executions so far, buggy so far)`.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// The default loop bound: iterations of a loop per entry.
pub const DEFAULT_UNROLL: u32 = 8;

impl Limits {
    pub fn unroll(&self) -> u32 {
        self.unroll.unwrap_or(DEFAULT_UNROLL)
    }

    /// Whether the explorer runs `equiv` rf or value (no mo branching, SC witnesses): only
    /// under `sc`; any other model explores graphs.
    fn coarse(&self, model: Model) -> bool {
        self.equiv != Equiv::Graph && model == Model::Sc
    }
}

/// Counters of one exploration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Complete consistent executions visited.
    pub executions: u64,
    /// Executions in which a thread blocked forever (a false `assume`, an await loop whose
    /// condition never changes). Not counted in `executions`.
    pub blocked: u64,
    /// Executions cut because a loop reached the unroll bound. Not counted in `executions`;
    /// when non-zero the exploration is not a proof.
    pub bounded: u64,
    /// Executions cut only at loops whose bound the source accepts (`// fensyn: unroll N`,
    /// [`Program::loop_bounds`]). Not counted in `executions` nor in `bounded`: the
    /// exploration is a proof up to those bounds.
    pub bounded_accepted: u64,
    /// Executions with at least one bug (including blocked or cut ones: the bug's prefix is
    /// real whatever happens after it).
    pub buggy: u64,
    /// Set when the exploration stopped early.
    pub incomplete: Option<Incomplete>,
    /// Set when a visitor asked to stop.
    pub stopped: bool,
    /// Partial graphs explored (each a consistent prefix of some execution).
    pub states: u64,
    /// Prefixes dropped because no thread could move in canonical order (they are explored
    /// as other prefixes already): the canonical explorer's redundant work. Always 0 under
    /// TruSt, which has no dead ends.
    pub dead_ends: u64,
    /// Backward revisits (TruSt): restricted graphs rebuilt by replay, each the root of a
    /// subtree of new graphs.
    pub revisits: u64,
    /// The exploration stopped because its dead ends passed [`Limits::give_up_after`].
    pub gave_up: bool,
}

impl Stats {
    /// Every execution visited: complete, blocked, and cut at a bound (accepted or not).
    pub fn visited(&self) -> u64 {
        self.executions + self.blocked + self.bounded + self.bounded_accepted
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Done,
}

/// A thread's registers, shared by the states forked from one another until one of them
/// writes (copy on write, `Arc::make_mut`): a fork copies a pointer, and only the thread that
/// runs on after it copies its registers. A thread function with its calls inlined can have
/// tens of thousands of registers (CDSChecker's cliffc-hashtable: 49,125 instructions per
/// thread), which every fork used to copy for every thread.
#[derive(Clone, Debug, PartialEq)]
struct Regs(std::sync::Arc<Vec<i64>>);

impl Regs {
    fn new(n: usize) -> Regs {
        Regs(std::sync::Arc::new(vec![0; n]))
    }
}

impl std::ops::Deref for Regs {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        &self.0
    }
}

impl std::ops::DerefMut for Regs {
    fn deref_mut(&mut self) -> &mut [i64] {
        std::sync::Arc::<Vec<i64>>::make_mut(&mut self.0).as_mut_slice()
    }
}

#[derive(Clone, Debug)]
struct ThreadState {
    pc: usize,
    regs: Regs,
    status: Status,
    /// A read of this thread must read from a write with id ≥ bound (see module docs).
    bound: usize,
    /// Iterations started by each loop since control last entered it.
    loops: LoopMap<u32>,
    /// Per loop entered: the head pc, the strongly live registers' values there and the
    /// thread's event count at its last arrival at the loop's head (the spin rule, `ir::spin`).
    spins: LoopMap<(usize, Vec<i64>, usize)>,
    /// Set when the thread blocked in a loop (the spin rule, or an await loop's `assume`): the
    /// loop's head pc and the index (in the thread's events) where its last pass began.
    spin_block: Option<(usize, usize)>,
    /// The last pass through a loop that came back to its head with the strongly live
    /// registers as they were but was no spin (it wrote): the loop's id, its head pc and the
    /// index where the pass began (liveness of loops cut at the bound, `liveness.rs`). Once
    /// the thread is cut at a loop's bound, it is that loop's pass or `None`.
    repeat: Option<(usize, usize, usize)>,
    /// `run_local` stopped at the thread's next event (an access, fence or spawn, already
    /// validated): running it again would change nothing. Cleared when the thread moves.
    at_event: bool,
    /// Dependency tracking (see `deps`), when on.
    dep: Option<DepState>,
}

/// Per loop id, a value: a thread is inside few loops at a time, and its state is copied at
/// every branch of the exploration, so a short vector (one allocation, linear search) serves
/// better than a tree.
#[derive(Clone, Debug)]
struct LoopMap<V>(Vec<(usize, V)>);

impl<V> Default for LoopMap<V> {
    fn default() -> Self {
        LoopMap(Vec::new())
    }
}

impl<V> LoopMap<V> {
    fn get(&self, id: &usize) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, v)| v)
    }

    fn remove(&mut self, id: &usize) {
        if let Some(i) = self.0.iter().position(|(k, _)| k == id) {
            self.0.swap_remove(i);
        }
    }

    fn insert(&mut self, id: usize, v: V) {
        match self.0.iter_mut().find(|(k, _)| *k == id) {
            Some(slot) => slot.1 = v,
            None => self.0.push((id, v)),
        }
    }

    fn get_or_insert(&mut self, id: usize, v: V) -> &mut V {
        let i = match self.0.iter().position(|(k, _)| *k == id) {
            Some(i) => i,
            None => {
                self.0.push((id, v));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
}

/// The next event a running thread wants to add.
enum Pending {
    Read,
    /// Write, fence or spawn: always enabled.
    Other,
    /// Join of a thread that finished (enabled) or not yet (waiting).
    Join {
        ready: bool,
    },
}

#[derive(Clone)]
struct State {
    g: ExecutionGraph,
    th: Vec<ThreadState>,
    /// hb clocks and coherence bookkeeping of `g` (see `incremental`).
    views: Views,
    /// Every event added so far is a seq_cst access: then RC11 consistency is SC consistency
    /// (Lahav et al., PLDI 2017: programs with only SC accesses have SC semantics), which is
    /// checked incrementally and exactly, without psc.
    all_sc: bool,
    /// Under `--equiv rf|value`: an SC interleaving of `g` (see `witness`).
    witness: Option<Witness>,
    /// When each event of `g` was added (TruSt's order, see `revisit`).
    added: revisit::Added,
}

impl State {
    /// A copy to be extended by about `more` events, with room for them (`clone` leaves none:
    /// every per-event vector would be reallocated by the copy's first event).
    fn fork(&self, more: usize) -> State {
        State {
            g: self.g.fork(more),
            th: self.th.clone(),
            views: self.views.fork(more),
            all_sc: self.all_sc,
            witness: self.witness.clone(),
            added: self.added.fork(more),
        }
    }

    /// Room for `n` events in every per-event vector.
    fn reserve(&mut self, n: usize) {
        let more = n.saturating_sub(self.g.len());
        self.g.events.reserve(more);
        self.g.rf.reserve(more);
        self.views.reserve(more);
        self.added.reserve(more);
    }

    /// Appends `ev` to `g` as the latest event; `alt`: a read that took the second outcome of
    /// its source (a weak CAS failing spuriously).
    fn push(&mut self, ev: Event, alt: bool) -> EventId {
        let id = self.g.push(ev);
        self.added.push(alt);
        id
    }
}

struct Explorer<'a, F: FnMut(&ExecutionGraph) -> Control> {
    prog: &'a Program,
    /// What each thread may still write (to avoid waiting for writes that cannot come): only
    /// the canonical-order explorer waits, so it is computed on first use (shared by workers).
    future: &'a OnceLock<Future>,
    model: Model,
    /// The model's consistency checks (`model.semantics()`).
    sem: &'static dyn MemoryModel,
    limits: Limits,
    visit: F,
    stats: Stats,
    /// With `Limits::verify_incremental`: the canonical keys of the graphs visited so far.
    seen: std::collections::HashSet<String>,
    /// Whether events carry their dependencies (`armv8`, or `Limits::dependencies`).
    track_deps: bool,
    /// `--equiv rf|value` under `sc`: no mo branching, consistency by SC witness.
    coarse: bool,
    /// Graphs are explored by TruSt (reads take every source, writes revisit earlier reads),
    /// not in canonical order (see the module docs).
    trust: bool,
    /// Under `--equiv value`: which reads are constrained by their value only.
    by_value: ValuePolicy,
    /// Under `--equiv value`: the value classes visited so far.
    seen_values: std::collections::HashSet<String>,
    /// When splitting the exploration for [`explore_parallel`]: the subtrees found, in the
    /// order a sequential run would explore them. `run` below depth 0 and `complete` push
    /// their state here instead of exploring it.
    tasks: Option<Vec<Task>>,
    /// Nesting of `run` calls (for splitting).
    depth: usize,
    /// Set by [`explore_parallel`] when the tasks after a stopping one are not needed.
    cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// In a parallel `--equiv value` worker: every visit's value class, kind and bugginess, so
    /// that classes found by several workers are counted once, in sequential order.
    visits: Option<Vec<Visit>>,
    /// TruSt: states this path branched from (before a read with several sources), by graph
    /// length; each is the state of an id-prefix of the current graph, which a revisit copies
    /// instead of replaying that prefix (see `revisit`).
    snapshots: Vec<(usize, Rc<State>)>,
    /// The spin rule's facts about the program (`ir::spin`); `None` under [`Goal::Sc`], where
    /// deleting a spin's reads could hide a non-SC execution.
    spin: Option<Rc<SpinInfo>>,
    /// Whether stale waits are skipped (lock-aware exploration, see `wait`).
    waits: bool,
}

/// One way a pending read can go: its source, its event (and its RMW write), whether it goes
/// by value, and the registers it sets.
struct ReadChoice {
    w: usize,
    ev: Event,
    wev: Option<Event>,
    by_value: bool,
    sets: Sets,
    /// Not the first outcome for this source (a weak CAS failing spuriously).
    alt: bool,
    /// False for an RMW reading a write another RMW read (TruSt only): the graph is
    /// inconsistent and only its write part's revisits are explored.
    forward: bool,
}

/// A subtree of the exploration: a partial graph to explore, or a complete one to visit.
enum Task {
    Run(State),
    Complete(State),
}

/// One visited execution of a parallel `--equiv value` worker.
struct Visit {
    key: String,
    kind: VisitKind,
    buggy: bool,
}

#[derive(Clone, Copy)]
enum VisitKind {
    Execution,
    Blocked,
    Bounded,
    BoundAccepted,
}

/// Explores every consistent execution graph of `prog` under `model`, calling `visit` on each
/// complete one (with its bugs filled in).
pub fn explore<F>(prog: &Program, model: Model, limits: Limits, visit: F) -> Stats
where
    F: FnMut(&ExecutionGraph) -> Control,
{
    let state = initial_state(prog, model, &limits);
    let future = OnceLock::new();
    let mut ex = Explorer::new(prog, &future, model, limits, visit);
    ex.run(state);
    ex.stats
}

/// The explorer goes down the tree of partial graphs by recursion, one level per read with more
/// than one choice, so a thread that polls a flag a few thousand times (a counting loop runs
/// to the end) goes deeper than a thread's stack allows. Every `STACK_CHECK_EVERY` levels it
/// checks that at least `STACK_RED_ZONE` bytes are left and otherwise continues on a new
/// `STACK_SEGMENT` bytes (`stacker`, as rustc does for deep recursion); the red zone covers
/// the levels in between (tens of KB each in a debug build).
const STACK_CHECK_EVERY: usize = 16;
const STACK_RED_ZONE: usize = 1024 * 1024;
const STACK_SEGMENT: usize = 64 * 1024 * 1024;

/// The partial graph every exploration starts from: the initialisation writes and `main`.
fn initial_state(prog: &Program, model: Model, limits: &Limits) -> State {
    let init: Vec<i64> = prog.globals.iter().map(|g| g.init).collect();
    let mut g = ExecutionGraph::with_init(&init);
    g.threads.push(ThreadTrace {
        func: prog.main,
        spawned_by: None,
        events: Vec::new(),
        slots: Vec::new(),
        end: None,
    });
    let main = &prog.functions[prog.main];
    // What the model's incremental check keeps (RC11: psc, from the start when the program
    // has an access or fence that is not a seq_cst access). The SC witness needs nothing.
    let mut views = Views::new(&g, model.release_sequence());
    if !limits.coarse(model) {
        let may_leave_sc = prog.functions.iter().flat_map(|f| &f.body).any(|ins| {
            ins.seq_cst() == Some(false) || matches!(ins, crate::ir::Instr::Fence { .. })
        });
        model.semantics().init_views(&mut views, may_leave_sc);
    }
    let track_deps = limits.dependencies || model.needs_dependencies();
    State {
        views,
        all_sc: true,
        witness: limits.coarse(model).then(|| Witness::new(&g)),
        added: revisit::Added::new(g.len()),
        g,
        th: vec![ThreadState {
            pc: 0,
            regs: Regs::new(main.reg_names.len()),
            status: Status::Running,
            bound: 0,
            loops: Default::default(),
            spins: Default::default(),
            spin_block: None,
            repeat: None,
            at_event: false,
            dep: track_deps.then(|| DepState::new(main.reg_names.len())),
        }],
    }
}

impl<'a, F: FnMut(&ExecutionGraph) -> Control> Explorer<'a, F> {
    fn new(
        prog: &'a Program,
        future: &'a OnceLock<Future>,
        model: Model,
        limits: Limits,
        visit: F,
    ) -> Self {
        let track_deps = limits.dependencies || model.needs_dependencies();
        let coarse = limits.coarse(model);
        let trust = !coarse && !limits.canonical;
        let by_value = ValuePolicy::new(prog, limits.equiv == Equiv::Value && coarse);
        let spin = (limits.goal != Goal::Sc).then(|| Rc::new(SpinInfo::new(prog)));
        let waits = !limits.plain_waits && wait::applies(prog, limits.goal == Goal::Sc, coarse);
        Explorer {
            prog,
            future,
            model,
            sem: model.semantics(),
            limits,
            visit,
            stats: Stats::default(),
            seen: Default::default(),
            track_deps,
            coarse,
            trust,
            by_value,
            seen_values: Default::default(),
            tasks: None,
            depth: 0,
            cancel: None,
            visits: None,
            snapshots: Vec::new(),
            spin,
            waits,
        }
    }
}

impl<'a, F: FnMut(&ExecutionGraph) -> Control> Explorer<'a, F> {
    fn should_stop(&mut self) -> bool {
        if self.stats.stopped || self.stats.incomplete.is_some() {
            return true;
        }
        if let Some(budget) = self.limits.give_up_after {
            let visited = self.stats.visited();
            if self.stats.dead_ends > budget.saturating_add(visited.saturating_mul(10)) {
                self.stats.gave_up = true;
                self.stats.stopped = true;
                return true;
            }
        }
        if let Some(c) = &self.cancel {
            if c.load(std::sync::atomic::Ordering::Relaxed) {
                self.stats.stopped = true;
                return true;
            }
        }
        if let Some(d) = self.limits.deadline {
            if Instant::now() >= d {
                self.stats.incomplete = Some(Incomplete::Timeout);
                return true;
            }
        }
        false
    }

    fn run(&mut self, st: State) {
        if self.depth > 0 {
            if let Some(tasks) = &mut self.tasks {
                tasks.push(Task::Run(st));
                return;
            }
        }
        if self.depth % STACK_CHECK_EVERY == STACK_CHECK_EVERY - 1
            && stacker::remaining_stack().is_some_and(|left| left < STACK_RED_ZONE)
        {
            return self.run_on_new_stack(st);
        }
        self.depth += 1;
        self.run_here(st);
        self.depth -= 1;
    }

    /// [`Self::run`] on a new stack segment (out of line, so that `run_here` stays inlined
    /// into `run`: a second call site of it cost 7 % of a litmus check).
    #[cold]
    #[inline(never)]
    fn run_on_new_stack(&mut self, st: State) {
        stacker::grow(STACK_SEGMENT, || self.run(st));
    }

    fn run_here(&mut self, mut st: State) {
        if self.should_stop() {
            return;
        }
        self.stats.states += 1;
        if !self.run_locals(&mut st) {
            return;
        }
        if self.trust {
            return self.step_trust(st);
        }
        // Collect the canonical choices. A write, fence, spawn or ready join ends the scan; it
        // is added after it, from the state itself (no copy when it is the only choice).
        let mut moved = false;
        let mut waiting = false;
        let mut other = None;
        let mut read_now = None;
        for t in 0..st.th.len() {
            if st.th[t].status != Status::Running {
                continue;
            }
            match self.pending(&st, t) {
                Pending::Other => {
                    other = Some(t);
                    moved = true;
                    break;
                }
                Pending::Join { ready: true } => {
                    // A ready join of a lower thread pre-empts every higher thread. If a higher
                    // thread moved while it was ready, this state is not canonical.
                    if self.join_source(&st, t) >= st.th[t].bound {
                        other = Some(t);
                        moved = true;
                    } else {
                        waiting = true;
                    }
                    break;
                }
                Pending::Join { ready: false } => waiting = true,
                Pending::Read => {
                    // The read may wait for a later write only if another thread may still
                    // write its location; otherwise it must read now, and no higher thread
                    // may move first (it is then the last choice: added after the scan, from
                    // the state itself).
                    if !self.write_may_come(&st, t) {
                        read_now = Some(t);
                        break;
                    }
                    if self.add_read(std::borrow::Cow::Borrowed(&st), t) {
                        moved = true;
                    }
                    waiting = true;
                }
            }
            if self.should_stop() {
                return;
            }
        }
        if let Some(t) = other {
            self.add_other(st, t);
        } else if let Some(t) = read_now {
            // A read that cannot wait: if neither it nor an earlier read could move, the
            // prefix is a duplicate.
            if !self.add_read(std::borrow::Cow::Owned(st), t) && !moved {
                self.stats.dead_ends += 1;
            }
        } else if !moved && !waiting {
            self.complete(st);
        } else if !moved {
            self.stats.dead_ends += 1;
        }
        // Otherwise: nothing could move canonically; this prefix is a duplicate. Drop it.
    }

    /// TruSt's step: the lowest thread with an enabled event adds it (a read branches on its
    /// sources, a write on its mo positions and on the reads it revisits); with none, the
    /// graph is complete.
    fn step_trust(&mut self, st: State) {
        // Lock-aware (see `wait`): a thread that would wait on the latest value of a lock
        // moves only when no other thread can.
        let mut waiting = None;
        for t in 0..st.th.len() {
            if st.th[t].status != Status::Running {
                continue;
            }
            match self.pending(&st, t) {
                Pending::Other | Pending::Join { ready: true } => return self.add_other(st, t),
                Pending::Join { ready: false } => {}
                Pending::Read if self.waiting(&st, t) => {
                    waiting.get_or_insert(t);
                }
                Pending::Read => {
                    self.add_read(std::borrow::Cow::Owned(st), t);
                    return;
                }
            }
        }
        match waiting {
            Some(t) => {
                self.add_read(std::borrow::Cow::Owned(st), t);
            }
            None => self.complete(st),
        }
    }

    /// Runs every thread up to its next event. A thread that stops can make another stop too
    /// (a join of a failed thread waits forever), so it repeats until nothing changes. False
    /// when the exploration must stop (a local loop that never reaches an event).
    fn run_locals(&mut self, st: &mut State) -> bool {
        loop {
            // A thread's end only goes from None to Some: counting them tells a change.
            let ended = |st: &State| st.g.threads.iter().filter(|t| t.end.is_some()).count();
            let before = ended(st);
            for t in 0..st.th.len() {
                if let Err(inc) = self.run_local(st, t) {
                    self.stats.incomplete = Some(inc);
                    return false;
                }
            }
            if ended(st) == before {
                return true;
            }
        }
    }

    /// Executes thread-local instructions of `t` until it is at an event or done.
    fn run_local(&mut self, st: &mut State, t: usize) -> Result<(), Incomplete> {
        let func_id = st.g.threads[t].func;
        let func = &self.prog.functions[func_id];
        if st.th[t].at_event {
            return Ok(());
        }
        let mut steps = 0usize;
        loop {
            if st.th[t].status != Status::Running {
                return Ok(());
            }
            let pc = st.th[t].pc;
            let Some(ins) = func.body.get(pc) else {
                self.finish(st, t, ThreadEnd::Finished);
                return Ok(());
            };
            steps += 1;
            if steps > LOCAL_STEP_LIMIT {
                return Err(Incomplete::LocalLoop {
                    thread: t,
                    func: func.name.clone(),
                });
            }
            let regs = &st.th[t].regs;
            match ins {
                Instr::Assign { dst, val } => match val.eval(regs) {
                    Ok(v) => {
                        st.th[t].regs[*dst] = v;
                        if let Some(d) = &mut st.th[t].dep {
                            d.regs[*dst] = d.of_expr(val);
                        }
                        st.th[t].pc += 1;
                    }
                    Err(_) => {
                        self.fail_ub(st, t, pc);
                        return Ok(());
                    }
                },
                Instr::Assert { cond, .. } | Instr::Check { cond, .. } => match cond.eval(regs) {
                    Ok(0) => {
                        let (kind, message) = failure(ins);
                        let stmt = func.stmt_of[pc];
                        let witness = self.last_event(&st.g, t).into_iter().collect();
                        let idx = st.g.bugs.len();
                        st.g.bugs.push(Bug {
                            kind,
                            stmt,
                            thread: t,
                            message,
                            witness,
                            race: None,
                            related: None,
                        });
                        self.finish(st, t, ThreadEnd::Failed(idx));
                        return Ok(());
                    }
                    Ok(_) => {
                        if let Some(d) = &mut st.th[t].dep {
                            d.branch(cond);
                        }
                        st.th[t].pc += 1
                    }
                    Err(_) => {
                        self.fail_ub(st, t, pc);
                        return Ok(());
                    }
                },
                Instr::BranchIfZero { cond, target } => match cond.eval(regs) {
                    Ok(v) => {
                        if let Some(d) = &mut st.th[t].dep {
                            d.branch(cond);
                        }
                        if v != 0 {
                            st.th[t].pc += 1
                        } else {
                            st.th[t].pc = *target;
                            if self.spun(st, t) {
                                self.finish(st, t, ThreadEnd::Blocked);
                                return Ok(());
                            }
                        }
                    }
                    Err(_) => {
                        self.fail_ub(st, t, pc);
                        return Ok(());
                    }
                },
                Instr::Jump { target } => {
                    st.th[t].pc = *target;
                    if self.spun(st, t) {
                        self.finish(st, t, ThreadEnd::Blocked);
                        return Ok(());
                    }
                }
                Instr::ThreadId { dst } => {
                    st.th[t].regs[*dst] = t as i64;
                    if let Some(d) = &mut st.th[t].dep {
                        d.regs[*dst] = Vec::new();
                    }
                    st.th[t].pc += 1;
                }
                Instr::Slot(s) => {
                    let n = st.g.threads[t].events.len();
                    st.g.threads[t].slots.push((*s, n));
                    st.th[t].pc += 1;
                }
                Instr::Return => {
                    self.finish(st, t, ThreadEnd::Finished);
                    return Ok(());
                }
                Instr::Exit => {
                    self.finish(st, t, ThreadEnd::Exited);
                    return Ok(());
                }
                // A call past the recursion bound: cut, as a loop past `--unroll` is.
                Instr::Cut => {
                    self.finish(st, t, ThreadEnd::Bounded);
                    return Ok(());
                }
                Instr::Join { tid, .. } => {
                    // A join of a thread that stopped on a bug waits forever.
                    let child = match tid.eval(regs) {
                        Ok(c) => c,
                        Err(_) => {
                            self.fail_ub(st, t, pc);
                            return Ok(());
                        }
                    };
                    match usize::try_from(child)
                        .ok()
                        .filter(|&c| c < st.th.len() && c != t)
                    {
                        None => {
                            self.fail_ub(st, t, pc);
                            return Ok(());
                        }
                        Some(c) => {
                            // Anything but a normal return means the join never returns.
                            if st.g.threads[c]
                                .end
                                .is_some_and(|e| e != ThreadEnd::Finished)
                            {
                                self.finish(st, t, ThreadEnd::Stuck);
                            }
                            return Ok(());
                        }
                    }
                }
                Instr::Fence { .. } | Instr::Nondet { .. } => {
                    st.th[t].at_event = true;
                    return Ok(());
                }
                Instr::Alloc { .. } | Instr::Free { .. } | Instr::ObjectCells { .. } => {
                    if self.memory_step(st, t, pc) {
                        return Ok(());
                    }
                }
                // A memory access becomes pending; a bad address or a division by zero in its
                // operands stops the thread before it (see `check_access`).
                Instr::Load { .. }
                | Instr::Rmw { .. }
                | Instr::Cas { .. }
                | Instr::Store { .. } => {
                    self.check_access(st, t, pc);
                    st.th[t].at_event = true;
                    return Ok(());
                }
                Instr::Assume { cond } => match cond.eval(regs) {
                    Ok(0) => {
                        self.note_await(st, t, pc);
                        self.finish(st, t, ThreadEnd::Blocked);
                        return Ok(());
                    }
                    Ok(_) => {
                        if let Some(d) = &mut st.th[t].dep {
                            d.branch(cond);
                        }
                        st.th[t].pc += 1
                    }
                    Err(_) => {
                        self.fail_ub(st, t, pc);
                        return Ok(());
                    }
                },
                Instr::LoopEnter { id } => {
                    st.th[t].loops.remove(id);
                    st.th[t].spins.remove(id);
                    if st.th[t].repeat.is_some_and(|r| r.0 == *id) {
                        st.th[t].repeat = None;
                    }
                    st.th[t].pc += 1;
                    self.spun(st, t);
                }
                Instr::LoopIter { id } => {
                    let (unroll, end) = match self.prog.loop_bounds.get(id) {
                        Some(&n) => (n, ThreadEnd::BoundAccepted),
                        None => (self.limits.unroll(), ThreadEnd::Bounded),
                    };
                    let count = st.th[t].loops.get_or_insert(*id, 0);
                    *count += 1;
                    if *count > unroll {
                        st.th[t].repeat = st.th[t].repeat.filter(|r| r.0 == *id);
                        self.finish(st, t, end);
                        return Ok(());
                    }
                    st.th[t].pc += 1;
                }
                Instr::Spawn { arg, .. } => {
                    if arg.eval(regs).is_err() {
                        self.fail_ub(st, t, pc);
                        return Ok(());
                    }
                    st.th[t].at_event = true;
                    return Ok(());
                }
            }
        }
    }

    /// The spin rule (`ir::spin`), when thread `t` has just arrived at its pc: if that is a
    /// loop head, did the pass through the loop since its last arrival there leave the
    /// strongly live registers as they were, adding only fences and reads that may be deleted (then the
    /// thread must block)? Otherwise the arrival is recorded.
    fn spun(&self, st: &mut State, t: usize) -> bool {
        let Some(spin) = &self.spin else {
            return false;
        };
        let pc = st.th[t].pc;
        let Some((id, live)) = spin.head(st.g.threads[t].func, pc) else {
            return false;
        };
        let regs = &st.th[t].regs;
        let live: Vec<i64> = live.iter().map(|&r| regs[r]).collect();
        let events = &st.g.threads[t].events;
        let mut repeat = None;
        if let Some((at, before, n)) = st.th[t].spins.get(&id) {
            let zne = matches!(self.model, Model::Rc11 | Model::Sc);
            if *at == pc && *before == live {
                if pass_deletable(&st.g, &events[*n..], spin, zne) {
                    let start = *n;
                    st.th[t].spin_block = Some((pc, start));
                    return true;
                }
                repeat = Some((id, pc, *n));
            }
        }
        let n = events.len();
        let th = &mut st.th[t];
        if repeat.is_some() || th.repeat.is_some_and(|r| r.0 == id) {
            th.repeat = repeat;
        }
        th.spins.insert(id, (pc, live, n));
        false
    }

    fn last_event(&self, g: &ExecutionGraph, t: usize) -> Option<usize> {
        g.threads[t]
            .events
            .last()
            .copied()
            .or(g.threads[t].spawned_by)
    }

    /// Stops thread `t` at the access at `pc` with undefined behaviour if its address is invalid
    /// or one of its operands divides by zero (evaluated now, before the access is added).
    fn check_access(&self, st: &mut State, t: usize, pc: usize) {
        let ins = &self.prog.functions[st.g.threads[t].func].body[pc];
        let regs = &st.th[t].regs;
        if let Some((addr, _)) = ins.access() {
            if let Err(e) = self.resolve(&st.g, regs, addr) {
                let (kind, msg) = self.address_error(&st.g, e);
                self.fail_kind(st, t, pc, kind, msg);
                return;
            }
        }
        let operands_ok = match ins {
            Instr::Store { val, .. } | Instr::Rmw { val, .. } => val.eval(regs).is_ok(),
            Instr::Cas {
                expected, desired, ..
            } => expected.eval(regs).is_ok() && desired.eval(regs).is_ok(),
            _ => true,
        };
        if !operands_ok {
            self.fail_ub(st, t, pc);
        }
    }

    fn fail_ub(&self, st: &mut State, t: usize, pc: usize) {
        self.fail_ub_msg(
            st,
            t,
            pc,
            "division by zero or invalid thread handle".into(),
        )
    }

    fn fail_ub_msg(&self, st: &mut State, t: usize, pc: usize, message: String) {
        self.fail_kind(st, t, pc, BugKind::Ub, message)
    }

    /// Thread `t` stops at `pc` on a bug of `kind`.
    fn fail_kind(&self, st: &mut State, t: usize, pc: usize, kind: BugKind, message: String) {
        let func = &self.prog.functions[st.g.threads[t].func];
        let witness = self.last_event(&st.g, t).into_iter().collect();
        let idx = st.g.bugs.len();
        st.g.bugs.push(Bug {
            kind,
            stmt: func.stmt_of[pc],
            thread: t,
            message,
            witness,
            race: None,
            related: None,
        });
        self.finish(st, t, ThreadEnd::Failed(idx));
    }

    fn finish(&self, st: &mut State, t: usize, end: ThreadEnd) {
        st.th[t].status = Status::Done;
        st.g.threads[t].end = Some(end);
    }

    /// The coherence frontier of thread `t`'s next access to `loc` (see `incremental`; 0 for
    /// the hardware models, whose full axioms decide in `consistent`).
    fn frontier(&self, st: &State, t: usize, loc: usize) -> usize {
        let sc_step = st.all_sc && self.pending_is_sc(st, t);
        self.sem.frontier(&st.views, &st.g, t, loc, sc_step)
    }

    /// Records that the event just added to `next` is (`sc`) or is not a seq_cst access: the
    /// first one that is not ends [`State::all_sc`] (and under RC11 starts keeping psc).
    fn leave_sc(&self, next: &mut State, sc: bool) {
        if next.all_sc && !sc {
            next.all_sc = false;
            if next.witness.is_none() {
                self.sem.left_sc(&mut next.views, &next.g);
            }
        }
    }

    /// Whether `next` — a consistent graph extended by the event `e` (and, for an RMW, its read
    /// part just before it) that passed the coherence and atomicity checks — is consistent
    /// (the model's [`MemoryModel::step_consistent`]: for RC11 the kept psc, for SC nothing
    /// beyond the frontier, for hardware the full axioms).
    fn consistent(&self, next: &mut State, e: usize) -> bool {
        if let Some(w) = &mut next.witness {
            let (g, views) = (&next.g, &next.views);
            return w.extend(g, e, &|a, b| views.hb_eq(g, a, b));
        }
        let verdict = self.sem.step_consistent(&next.views, &next.g, next.all_sc);
        if self.limits.verify_incremental {
            assert_eq!(
                verdict,
                self.sem.prefix_violation(&next.g).is_none(),
                "incremental consistency disagrees with the axioms"
            );
        }
        verdict
    }

    /// Whether a thread other than `t` may still write the location of `t`'s pending read.
    fn write_may_come(&self, st: &State, t: usize) -> bool {
        let Some(loc) = self.pending_loc(st, t) else {
            return true;
        };
        (0..st.th.len()).any(|u| {
            u != t
                && st.th[u].status == Status::Running
                && self
                    .future
                    .get_or_init(|| Future::new(self.prog))
                    .may_write_now(
                        self.prog,
                        st.g.threads[u].func,
                        st.th[u].pc,
                        &st.th[u].regs,
                        loc,
                    )
        })
    }

    /// Whether thread `t`'s pending memory instruction is a seq_cst access (all of its parts,
    /// for an RMW or CAS).
    fn pending_is_sc(&self, st: &State, t: usize) -> bool {
        let ins = self.instr(st, t);
        ins.access().is_some() && ins.seq_cst() == Some(true)
    }

    /// The location of thread `t`'s pending access, already validated by `run_local` (which
    /// stops the thread on an invalid address before it becomes pending).
    fn pending_loc(&self, st: &State, t: usize) -> Option<usize> {
        let (addr, _) = self.instr(st, t).access()?;
        Some(
            self.resolve(&st.g, &st.th[t].regs, addr)
                .unwrap_or_else(|e| unreachable!("unvalidated address: {e}")),
        )
    }

    /// The location `addr` designates for an access with registers `regs` in graph `g`: one
    /// that exists (a global, or an allocated cell whose allocation is in `g`), in the bounds of
    /// the address (of either atomicity: atomicity belongs to the access).
    fn resolve(
        &self,
        g: &ExecutionGraph,
        regs: &[i64],
        addr: &crate::ir::Addr,
    ) -> Result<usize, crate::ir::AddrError> {
        let loc = addr.resolve(regs, g.num_locs())?;
        if g.mo[loc].is_empty() {
            // An allocation a revisit removed: no object is there.
            let ptr = crate::ir::pointer_to(loc);
            return Err(crate::ir::AddrError::OutOfBounds {
                ptr,
                lo: 0,
                hi: usize::MAX,
            });
        }
        Ok(loc)
    }

    /// Thread `t`'s next instruction (borrowed from the program, not from the explorer).
    fn instr(&self, st: &State, t: usize) -> &'a Instr {
        let prog: &'a Program = self.prog;
        &prog.functions[st.g.threads[t].func].body[st.th[t].pc]
    }

    fn pending(&self, st: &State, t: usize) -> Pending {
        match self.instr(st, t) {
            Instr::Load { .. } | Instr::Rmw { .. } | Instr::Cas { .. } => Pending::Read,
            Instr::Join { tid, .. } => {
                let c = tid.eval(&st.th[t].regs).unwrap_or(0) as usize;
                Pending::Join {
                    ready: st.g.threads[c].end == Some(ThreadEnd::Finished),
                }
            }
            _ => Pending::Other,
        }
    }

    /// The event a join waits for: the joined thread's last event (or its spawn).
    fn join_source(&self, st: &State, t: usize) -> usize {
        let Instr::Join { tid, .. } = self.instr(st, t) else {
            return 0;
        };
        let c = tid.eval(&st.th[t].regs).unwrap_or(0) as usize;
        self.last_event(&st.g, c).unwrap_or(0)
    }

    fn event(
        &self,
        st: &State,
        t: usize,
        kind: EventKind,
        loc: Option<usize>,
        order: MemOrder,
        value: i64,
    ) -> Event {
        let func = &self.prog.functions[st.g.threads[t].func];
        Event {
            thread: t,
            kind,
            loc,
            order,
            value,
            stmt: Some(func.stmt_of[st.th[t].pc]),
            slot: None,
            deps: None,
        }
    }

    /// The dependencies of thread `t`'s pending access (its write part when `write`), when
    /// dependencies are tracked: address, data (the value written) and control.
    fn access_deps(&self, st: &State, t: usize, write: bool) -> Option<Arc<Deps>> {
        let d = st.th[t].dep.as_ref()?;
        let ins = self.instr(st, t);
        let addr = ins.access().map(|(a, _)| d.of_addr(a)).unwrap_or_default();
        let data = match (ins, write) {
            (Instr::Store { val, .. } | Instr::Rmw { val, .. }, true) => d.of_expr(val),
            (Instr::Cas { desired, .. }, true) => d.of_expr(desired),
            _ => Vec::new(),
        };
        let deps = Deps {
            addr,
            data,
            ctrl: d.ctrl.clone(),
        };
        (!deps.is_empty()).then(|| Arc::new(deps))
    }

    /// Records that thread `t` moved: every lower thread that waits now needs a later source.
    fn note_move(st: &mut State, t: usize, new_event: usize) {
        for lower in 0..t {
            if st.th[lower].status == Status::Running {
                st.th[lower].bound = new_event;
            }
        }
        st.th[t].bound = 0;
        st.th[t].pc += 1;
        st.th[t].at_event = false;
    }

    fn add_other(&mut self, st: State, t: usize) {
        if let Instr::Nondet { lo, hi, .. } = *self.instr(&st, t) {
            // One branch per value; the first is the one a revisit may delete (`alt`).
            let mut st = Some(std::borrow::Cow::Owned(st));
            for v in lo..=hi {
                let mut next = take_last(&mut st, v == hi);
                self.apply_choice(&mut next, t, v, v != lo);
                self.run(next);
                if self.should_stop() {
                    return;
                }
            }
            return;
        }
        let Instr::Store { .. } = self.instr(&st, t) else {
            // A fence, spawn or join: one way to add it.
            let mut next = st;
            let (id, check) = self.apply_other(&mut next, t);
            if !check || self.consistent(&mut next, id) {
                self.run(next);
            }
            return;
        };
        let Some(loc) = self.pending_loc(&st, t) else {
            unreachable!("a store has an address")
        };
        let chosen = self.store_positions(&st, t, loc);
        // TruSt: the reads this write may revisit, found on the graph before the write (its
        // porf-prefix is its thread's).
        let (revisits, porf) = if self.trust {
            let roots: Vec<EventId> = self.last_event(&st.g, t).into_iter().collect();
            revisit::candidates(&st.g, &st.added, loc, &roots, None)
        } else {
            (Vec::new(), Vec::new())
        };
        // Revisits first, from the graph before the write (no copy of it is kept).
        for r in revisits {
            let writer = revisit::Writer::Store { thread: t };
            self.revisit(&st.g, &st.added, &porf, r, writer);
            if self.should_stop() {
                return;
            }
        }
        let mut st = Some(std::borrow::Cow::Owned(st));
        for (k, &pos) in chosen.iter().enumerate() {
            let mut next = take_last(&mut st, k + 1 == chosen.len());
            let id = self.apply_store(&mut next, t, loc, pos);
            if self.consistent(&mut next, id) {
                self.run(next);
            }
            if self.should_stop() {
                return;
            }
        }
    }

    /// The mo positions thread `t`'s pending store to `loc` may take: after every write its
    /// hb-prefix has seen (coherence), never between an RMW and its source. Under `--equiv
    /// rf|value` mo is not branched on: the witness decides it at the end.
    fn store_positions(&self, st: &State, t: usize, loc: usize) -> Vec<usize> {
        let positions = st.g.mo[loc].len();
        let first = if self.coarse {
            positions
        } else {
            self.frontier(st, t, loc) + 1
        };
        if self.limits.verify_incremental && !self.coarse {
            // Positions skipped by the incremental check must be inconsistent.
            let Instr::Store { val, order, .. } = self.instr(st, t) else {
                unreachable!("store_positions of a store")
            };
            let v = val.eval(&st.th[t].regs).unwrap_or(0);
            for pos in 1..=positions {
                if pos >= first && st.views.may_insert_at(&st.g, loc, pos) {
                    continue;
                }
                let mut next = st.clone();
                let ev = self.event(st, t, EventKind::Write, Some(loc), *order, v);
                let id = next.push(ev, false);
                next.g.mo[loc].insert(pos, id);
                assert!(
                    self.sem.prefix_violation(&next.g).is_some(),
                    "incremental check skipped a consistent mo position"
                );
            }
        }
        (first..=positions)
            .filter(|&pos| st.views.may_insert_at(&st.g, loc, pos))
            .collect()
    }

    /// Adds thread `t`'s pending store to `loc` at mo position `pos`; returns its id.
    fn apply_store(&self, next: &mut State, t: usize, loc: usize, pos: usize) -> EventId {
        let Instr::Store { val, order, .. } = self.instr(next, t) else {
            unreachable!("apply_store of a store")
        };
        let order = *order;
        let v = val.eval(&next.th[t].regs).unwrap_or(0);
        let mut ev = self.event(next, t, EventKind::Write, Some(loc), order, v);
        ev.deps = self.access_deps(next, t, true);
        let id = next.push(ev, false);
        if let Some(w) = &mut next.witness {
            w.note(id, false);
        }
        next.g.mo[loc].insert(pos, id);
        next.views.add(&next.g, id);
        self.leave_sc(next, order.is_sc());
        Self::note_move(next, t, id);
        id
    }

    /// Thread `t`'s pending [`Instr::Nondet`] chooses `value` (`alt`: not its first value).
    pub(super) fn apply_choice(&self, next: &mut State, t: usize, value: i64, alt: bool) {
        let Instr::Nondet { dst, .. } = *self.instr(next, t) else {
            unreachable!("apply_choice of a choice")
        };
        let ev = self.event(next, t, EventKind::Choice, None, MemOrder::NonAtomic, value);
        let id = next.push(ev, alt);
        next.views.add(&next.g, id);
        next.th[t].regs[dst] = value;
        if let Some(dep) = &mut next.th[t].dep {
            dep.regs[dst] = Vec::new();
        }
        Self::note_move(next, t, id);
    }

    /// Adds thread `t`'s pending fence, spawn or join; returns its id and whether the graph's
    /// consistency must be checked (a fence may add an edge; spawns and joins add none).
    fn apply_other(&self, next: &mut State, t: usize) -> (EventId, bool) {
        let ins = self.instr(next, t);
        match *ins {
            Instr::Fence { order } => {
                let ev = self.event(next, t, EventKind::Fence, None, order, 0);
                let id = next.push(ev, false);
                next.views.add(&next.g, id);
                self.leave_sc(next, false);
                Self::note_move(next, t, id);
                (id, true)
            }
            // A new object's first writes relate to nothing yet: always consistent.
            Instr::Alloc { .. } => (self.apply_alloc(next, t, None), false),
            Instr::Free { ref ptr, .. } => (self.apply_free(next, t, ptr), false),
            Instr::Spawn { func, ref arg, dst } => {
                let child = next.th.len();
                let child_dep = self
                    .track_deps
                    .then(|| DepState::new(self.prog.functions[func].reg_names.len()));
                let ev = self.event(
                    next,
                    t,
                    EventKind::Spawn { child },
                    None,
                    MemOrder::NonAtomic,
                    0,
                );
                let f = &self.prog.functions[func];
                let mut regs = Regs::new(f.reg_names.len());
                if let Some(p) = f.param {
                    regs[p] = arg.eval(&next.th[t].regs).unwrap_or(0);
                }
                let id = next.push(ev, false);
                next.views.add(&next.g, id);
                if let Some(d) = dst {
                    next.th[t].regs[d] = child as i64;
                    if let Some(dep) = &mut next.th[t].dep {
                        dep.regs[d] = Vec::new();
                    }
                }
                next.g.threads.push(ThreadTrace {
                    func,
                    spawned_by: Some(id),
                    events: Vec::new(),
                    slots: Vec::new(),
                    end: None,
                });
                next.th.push(ThreadState {
                    pc: 0,
                    regs,
                    status: Status::Running,
                    bound: 0,
                    loops: Default::default(),
                    spins: Default::default(),
                    spin_block: None,
                    repeat: None,
                    at_event: false,
                    dep: child_dep,
                });
                Self::note_move(next, t, id);
                if let Some(w) = &mut next.witness {
                    w.extend(&next.g, id, &|_, _| false);
                }
                (id, false)
            }
            Instr::Join { ref tid, dst } => {
                let child = tid.eval(&next.th[t].regs).unwrap_or(0) as usize;
                if let Some(d) = dst {
                    let f = &self.prog.functions[next.g.threads[child].func];
                    let result = f.result.map_or(0, |r| next.th[child].regs[r]);
                    next.th[t].regs[d] = result;
                    if let Some(dep) = &mut next.th[t].dep {
                        dep.regs[d] = Vec::new();
                    }
                }
                let ev = self.event(
                    next,
                    t,
                    EventKind::Join { child },
                    None,
                    MemOrder::NonAtomic,
                    0,
                );
                let id = next.push(ev, false);
                next.views.add(&next.g, id);
                Self::note_move(next, t, id);
                if let Some(w) = &mut next.witness {
                    w.extend(&next.g, id, &|_, _| false);
                }
                (id, false)
            }
            _ => unreachable!("apply_other called on a non-event instruction"),
        }
    }

    /// Branches on the rf source of thread `t`'s pending read (a load, or the read part of an
    /// RMW or CAS). Returns whether any source was allowed by the canonical-order bound.
    fn add_read(&mut self, state: std::borrow::Cow<'_, State>, t: usize) -> bool {
        let st: &State = &state;
        let Some(loc) = self.pending_loc(st, t) else {
            unreachable!("add_read called on a non-read")
        };
        // TruSt has no bound: a read takes every source now, later writes revisit it.
        let bound = if self.trust { 0 } else { st.th[t].bound };
        let sources: Vec<usize> = st.g.mo[loc]
            .iter()
            .copied()
            .filter(|&w| w >= bound)
            .collect();
        let any = !sources.is_empty();
        let choices = self.read_choices(st, t, loc, sources);
        let sc_pending = self.pending_is_sc(st, t);
        let n = choices.len();
        // TruSt: the state before the read is kept for the revisits below it. The last choice
        // takes it back, unless the latest state kept is SNAPSHOT_EVERY or more events behind
        // (a checkpoint): then the last choice copies it too, and it stays for the revisits
        // below that choice as well.
        let mark = self.snapshots.len();
        let checkpoint = st.g.len() >= self.snapshots.last().map_or(0, |s| s.0) + SNAPSHOT_EVERY;
        let mut state = match state {
            std::borrow::Cow::Owned(st) if self.trust && (n > 1 || checkpoint) => {
                let st = Rc::new(st);
                self.snapshots.push((st.g.len(), Rc::clone(&st)));
                Err(Some(st))
            }
            state => Ok(Some(state)),
        };
        for (k, choice) in choices.into_iter().enumerate() {
            let last = k + 1 == n;
            let mut next = match &mut state {
                Ok(slot) => take_last(slot, last),
                Err(kept) if last && !checkpoint => {
                    self.snapshots.truncate(mark);
                    let kept = kept.take().expect("the state is kept until the last");
                    Rc::try_unwrap(kept).unwrap_or_else(|kept| kept.fork(FORK_ROOM))
                }
                Err(kept) => kept
                    .as_ref()
                    .expect("the state is kept until the last")
                    .fork(FORK_ROOM),
            };
            let (_, last) = self.apply_read(&mut next, t, loc, &choice, sc_pending);
            if !choice.forward {
                self.after_rmw(next, last, false);
            } else if self.consistent(&mut next, last) {
                if self.trust && choice.wev.is_some() {
                    self.after_rmw(next, last, true);
                } else {
                    self.run(next);
                }
            }
            if self.should_stop() {
                break;
            }
        }
        self.snapshots.truncate(mark);
        any
    }

    /// Every allowed way thread `t`'s pending read of `loc` can read from one of `sources`
    /// (a weak CAS that may fail spuriously has two per source), prepared from the state
    /// before any is explored.
    fn read_choices(
        &self,
        st: &State,
        t: usize,
        loc: usize,
        mut sources: Vec<usize>,
    ) -> Vec<ReadChoice> {
        let ins = self.instr(st, t);
        // Under `--equiv rf|value`: a source with another write to the location hb-between it
        // and this read can never be read (the witness would refute it after a clone).
        let exact = !self.by_value.instr(ins);
        let clock = self.coarse.then(|| st.views.pre_clock(&st.g, t));
        let hidden = |w: usize| {
            clock.as_ref().is_some_and(|c| {
                st.g.mo[loc].iter().any(|&x| {
                    x != w && st.views.hb_eq(&st.g, w, x) && st.views.hb_before_clock(&st.g, x, c)
                })
            })
        };
        if !exact {
            // One source per value: the witness may pick any write of that value.
            let mut values = std::collections::HashSet::new();
            sources.retain(|&w| !hidden(w) && values.insert(st.g.events[w].value));
        }
        // Coherence: only writes at or after the frontier can be read (under `--equiv
        // rf|value` the witness checks instead).
        let frontier = if self.coarse {
            0
        } else {
            self.frontier(st, t, loc)
        };
        let allowed = &st.g.mo[loc][frontier..];
        let regs = &st.th[t].regs;
        let mut choices = Vec::new();
        for w in sources {
            let value = st.g.events[w].value;
            let coherent = if self.coarse {
                !hidden(w)
            } else {
                allowed.contains(&w)
            };
            for (k, (read_order, write, sets)) in
                read_effects(ins, regs, value, self.limits.spurious_cas)
                    .into_iter()
                    .enumerate()
            {
                // Atomicity: no two RMWs read from the same write (the witness checks it
                // under `--equiv rf|value`, where the source may stand for others).
                let free = write.is_none() || (self.coarse && !exact) || st.views.free_for_rmw(w);
                // Under TruSt an RMW may read a write another RMW read: that graph is
                // inconsistent, but its write part may still revisit the other RMW's read.
                let ok = coherent && (free || self.trust);
                if !ok && !self.limits.verify_incremental {
                    continue;
                }
                let (ev, wev) = self.read_events(st, t, loc, read_order, value, write);
                let by_value = self.coarse && self.by_value.event(read_order, write.is_some());
                let choice = ReadChoice {
                    w,
                    ev,
                    wev,
                    by_value,
                    sets,
                    alt: k > 0,
                    forward: free,
                };
                if ok && self.stale_wait_choice(st, t, loc, &choice) {
                    // Lock-aware: a wait on an older value is never explored (see `wait`).
                    continue;
                }
                if ok {
                    choices.push(choice);
                    continue;
                }
                // Only reached when verifying: the skipped choice must be inconsistent (under
                // `--equiv rf|value`: have no SC witness, found with no hints). A read that
                // goes by value (a relaxed failed CAS) may be satisfied by another write of
                // the value: that choice is explored from its own source.
                let mut next = st.clone();
                let (id, last) = Self::push_read(&mut next, loc, &choice, false);
                let refuted = match &mut next.witness {
                    Some(_) if by_value => true,
                    Some(wit) => !wit.extend(&next.g, last, &|_, _| false),
                    None => self.sem.prefix_violation(&next.g).is_some(),
                };
                assert!(
                    refuted,
                    "incremental check skipped a consistent rf choice (read {id}):\n{}",
                    next.g.canonical_key()
                );
            }
        }
        choices
    }

    /// The events of thread `t`'s pending read of `loc` reading `value` with `read_order`, and
    /// of its RMW write part (`write`: order and value), with their dependencies.
    fn read_events(
        &self,
        st: &State,
        t: usize,
        loc: usize,
        read_order: MemOrder,
        value: i64,
        write: Option<(MemOrder, i64)>,
    ) -> (Event, Option<Event>) {
        let mut ev = self.event(st, t, EventKind::Read, Some(loc), read_order, value);
        ev.deps = self.access_deps(st, t, false);
        let wev = write.map(|(wo, v)| {
            let mut wev = self.event(st, t, EventKind::Write, Some(loc), wo, v);
            wev.deps = self.access_deps(st, t, true);
            wev
        });
        (ev, wev)
    }

    /// Adds the read (and RMW write) of `choice` as thread `t`'s next event and sets the
    /// registers it reads into; returns the read's id and the last event added.
    fn apply_read(
        &self,
        next: &mut State,
        t: usize,
        loc: usize,
        choice: &ReadChoice,
        sc_pending: bool,
    ) -> (EventId, EventId) {
        let (id, last) = Self::push_read(next, loc, choice, true);
        self.leave_sc(next, sc_pending);
        for &(r, v) in &choice.sets {
            next.th[t].regs[r] = v;
            if let Some(d) = &mut next.th[t].dep {
                d.regs[r] = vec![id];
            }
        }
        Self::note_move(next, t, id);
        (id, last)
    }

    /// Adds the read of `choice` (and the write of an RMW, immediately mo-after the write it
    /// read from) to `next`; `views`: record them in the hb views. Returns the read's id and
    /// the last event added.
    fn push_read(next: &mut State, loc: usize, c: &ReadChoice, views: bool) -> (EventId, EventId) {
        let id = next.push(c.ev.clone(), c.alt);
        // A read that goes by value contributes no hb through its source (which is only a
        // representative): hb stays within the real po ∪ rf.
        next.g.rf[id] = (!c.by_value).then_some(c.w);
        if let Some(wit) = &mut next.witness {
            wit.note(id, c.by_value);
        }
        let mut last = id;
        if views {
            next.views.add(&next.g, id);
        }
        if let Some(wev) = &c.wev {
            let wid = next.push(wev.clone(), false);
            let pos = next.g.mo[loc].iter().position(|&x| x == c.w).unwrap_or(0) + 1;
            next.g.mo[loc].insert(pos, wid);
            next.g.rmw.push((id, wid));
            if views {
                next.views.add(&next.g, wid);
            }
            last = wid;
        }
        next.g.rf[id] = Some(c.w);
        (id, last)
    }

    fn complete(&mut self, mut st: State) {
        if let Some(tasks) = &mut self.tasks {
            tasks.push(Task::Complete(st));
            return;
        }
        let mut key = None;
        if let Some(w) = &st.witness {
            w.apply(&mut st.g);
            if self.limits.equiv == Equiv::Value {
                let k = value_key(&st.g, w);
                if !self.seen_values.insert(k.clone()) {
                    // Another execution of this value class was visited already.
                    return;
                }
                key = Some(k);
            }
        }
        self.complete_graph(st, key);
    }

    fn complete_graph(&mut self, mut st: State, key: Option<String>) {
        if self.stale_wait(&st.g) {
            return;
        }
        if self.limits.verify_incremental && !(self.coarse && self.limits.equiv == Equiv::Value) {
            let mut key = st.g.canonical_key();
            if self.coarse {
                // A reads-from class: its mo is whatever its witness chose.
                key.truncate(key.find("mo0:").unwrap_or(key.len()));
            }
            assert!(
                self.seen.insert(key.clone()),
                "the explorer visited a graph twice:\n{key}"
            );
        }
        if !self.sem.prefix_closed() && self.sem.violation(&st.g).is_some() {
            // Partial graphs were pruned by the prefix-closed axioms only (C11: the SC order
            // is checked here); this execution does not exist under the model.
            return;
        }
        if self.limits.goal == Goal::Sc {
            st.g.bugs = self.non_sc_bug(&st.g).into_iter().collect();
            return self.count_and_visit(st, key);
        }
        self.find_deadlocks(&mut st.g);
        if self.limits.liveness {
            self.find_liveness(&mut st.g, &st.th);
        }
        // Hardware models run the mapped program: plain accesses are machine loads and
        // stores, and a data race is a C-level notion they do not report.
        let races = if self.sem.has_races() {
            st.views.races(&st.g)
        } else {
            Vec::new()
        };
        // Only objects allocated at run time end or start indeterminate.
        if !st.g.dynamic.is_empty() {
            if self.sem.has_races() {
                self.find_lifetime_bugs(&mut st.g, &st.views);
            }
            self.find_double_frees(&mut st.g);
            self.find_indeterminate_reads(&mut st.g);
            let finished =
                st.g.threads
                    .iter()
                    .all(|t| t.end == Some(ThreadEnd::Finished));
            if self.limits.leaks && finished {
                self.find_leaks(&mut st.g);
            }
        }
        for (a, b) in races {
            let (ea, eb) = (&st.g.events[a], &st.g.events[b]);
            let loc = ea.loc.unwrap_or(0);
            let name = st.g.loc_name(self.prog, loc);
            let number = |e: &Event| e.stmt.map(|s| self.prog.stmt_line(s)).unwrap_or(0);
            // Named `12`, or `ring.h:12` in a header; in the order of their line numbers.
            let line = |e: &Event| e.stmt.map_or("0".into(), |s| self.prog.stmt_ref(s));
            let (la, lb) = (line(ea), line(eb));
            let a_first = number(ea) <= number(eb);
            let (first, second) = if a_first { (&la, &lb) } else { (&lb, &la) };
            // Report the race at the later source line, whatever order the events came in.
            let at = if a_first { eb } else { ea };
            // An object's allocation is a write of the allocating statement: say so.
            let allocation = st.g.object_of(loc).map(|(_, d)| d.event);
            let message = match allocation {
                Some(w) if w == a || w == b => {
                    let (l, other) = if w == a { (la, lb) } else { (lb, la) };
                    format!("race on `{name}` between its allocation (line {l}) and line {other}")
                }
                _ => format!("race on `{name}` between line {first} and line {second}"),
            };
            st.g.bugs.push(Bug {
                kind: BugKind::Race,
                stmt: at.stmt.unwrap_or(0),
                thread: at.thread,
                message,
                witness: vec![a, b],
                race: Some((a, b)),
                related: None,
            });
        }
        self.count_and_visit(st, key);
    }

    /// Counts a complete execution (with its bugs filled in) and hands it to the visitor.
    fn count_and_visit(&mut self, mut st: State, key: Option<String>) {
        if let Some(s) = &self.limits.suppress {
            st.g.bugs.retain(|b| !(s.0)(b));
        }
        if let Some(max) = self.limits.max_executions {
            if self.stats.visited() >= max {
                self.stats.incomplete = Some(Incomplete::MaxExecutions(max));
                return;
            }
        }
        let ends = || st.g.threads.iter().map(|t| t.end);
        // After an `exit` the program is over: threads still blocked do not matter.
        let exited = ends().any(|e| e == Some(ThreadEnd::Exited));
        let kind = if ends().any(|e| e == Some(ThreadEnd::Bounded)) {
            self.stats.bounded += 1;
            VisitKind::Bounded
        } else if ends().any(|e| e == Some(ThreadEnd::BoundAccepted)) {
            self.stats.bounded_accepted += 1;
            VisitKind::BoundAccepted
        } else if !exited && ends().any(|e| e == Some(ThreadEnd::Blocked)) {
            self.stats.blocked += 1;
            VisitKind::Blocked
        } else {
            self.stats.executions += 1;
            VisitKind::Execution
        };
        if !st.g.bugs.is_empty() {
            self.stats.buggy += 1;
        }
        if let (Some(v), Some(key)) = (&mut self.visits, key) {
            v.push(Visit {
                key,
                kind,
                buggy: !st.g.bugs.is_empty(),
            });
        }
        if let Some(p) = &self.limits.progress {
            let total = self.stats.visited();
            if total % PROGRESS_EVERY == 0 {
                (p.0)(total, self.stats.buggy);
            }
        }
        if (self.visit)(&st.g) == Control::Stop {
            self.stats.stopped = true;
        }
    }
}

impl<F: FnMut(&ExecutionGraph) -> Control> Explorer<'_, F> {
    /// With [`Goal::Sc`]: the bug of a complete execution that is not sequentially consistent,
    /// witnessed by a shortest cycle of `po ∪ rf ∪ mo ∪ fr` (its events and their po ∪ rf
    /// prefix are a non-SC prefix of every execution that contains them).
    fn non_sc_bug(&self, g: &ExecutionGraph) -> Option<Bug> {
        // Only po, rf, mo and fr are read: the release-sequence rule does not matter.
        let r = Relations::compute(g, super::ReleaseSeq::Rmw);
        let cycle = r.po.union(&r.rf).union(&r.mo).union(&r.fr).find_cycle()?;
        let witness: Vec<usize> = cycle
            .iter()
            .copied()
            .filter(|&e| g.events[e].thread != INIT_THREAD)
            .collect();
        let last = witness
            .iter()
            .copied()
            .filter(|&e| g.events[e].stmt.is_some())
            .max()?;
        let mut lines: Vec<String> = Vec::new();
        for &e in &cycle {
            let ev = &g.events[e];
            let line = ev.stmt.map_or("0".into(), |s| self.prog.stmt_ref(s));
            let who = if ev.thread == INIT_THREAD {
                "init".to_string()
            } else {
                format!("T{} line {line}", ev.thread)
            };
            lines.push(who);
        }
        lines.push(lines[0].clone());
        Some(Bug {
            kind: BugKind::NonSc,
            stmt: g.events[last].stmt.unwrap_or(0),
            thread: g.events[last].thread,
            message: format!(
                "execution is not sequentially consistent (po ∪ rf ∪ mo ∪ fr cycle: {})",
                lines.join(" → ")
            ),
            witness,
            race: None,
            related: None,
        })
    }

    /// Marks deadlocks in a complete, settled graph (see [`Explorer::settled`] and
    /// [`crate::ir::SyncRole`]): a thread blocked
    /// on a read of a [`SyncRole::Wait`] cell (a held lock, an unfinished barrier round) that
    /// read the cell's mo-last write — nobody writes it any more — and a wait on a condition
    /// variable registered (an `Acquire` load of its [`SyncRole::Signals`] cell) after its
    /// last signal — a lost wake-up. (A blocked read of an older write is not a deadlock:
    /// another execution reads the newer one.)
    fn find_deadlocks(&self, g: &mut ExecutionGraph) {
        if self.excluded(g) || !self.settled(g) {
            return;
        }
        let has_signals = self
            .prog
            .globals
            .iter()
            .chain(self.prog.layouts.iter().flat_map(|l| l.cells.iter()))
            .any(|c| c.sync.as_ref().is_some_and(|c| c.role == SyncRole::Signals));
        let mut found = Vec::new();
        for t in 0..g.threads.len() {
            if g.threads[t].end == Some(ThreadEnd::Blocked) {
                if let Some(&last) = g.threads[t].events.last() {
                    if self.reads_last(g, last, SyncRole::Wait) {
                        found.push((t, last, false));
                    }
                }
            }
            // A thread that failed does not sleep.
            let failed = matches!(g.threads[t].end, Some(ThreadEnd::Failed(_)));
            if !has_signals || failed {
                continue;
            }
            // The first wait of the thread that nothing wakes (a later one is no news).
            let lost = g.threads[t].events.iter().copied().find(|&e| {
                g.events[e].order == MemOrder::Acquire
                    && self.reads_last(g, e, SyncRole::Signals)
                    && !g.rmw.iter().any(|p| p.0 == e)
            });
            if let Some(e) = lost {
                found.push((t, e, true));
            }
        }
        for (t, e, lost) in found {
            let ev = &g.events[e];
            let Some(cell) = ev.loc.and_then(|l| g.loc_info(self.prog, l)?.sync.as_ref()) else {
                continue;
            };
            let message = deadlock_message(t, cell, lost);
            // The whole graph is the witness: whether a deadlock remains depends on every
            // write to the object, not only on the blocked thread's past.
            let witness = g
                .threads
                .iter()
                .filter_map(|tr| tr.events.last().copied())
                .collect();
            let stmt = ev.stmt.unwrap_or(0);
            g.bugs.push(Bug {
                kind: BugKind::Deadlock,
                stmt,
                thread: t,
                message,
                witness,
                race: None,
                related: None,
            });
        }
    }

    /// Whether the program excluded this execution, so that nobody waits in it: a thread
    /// called `exit` (the program ended), or a thread is blocked by an `assume` of the program
    /// (GenMC discards such an execution) rather than waiting on a synchronisation object —
    /// a thread whose last read outside a read-modify-write is of a [`SyncRole::Wait`] cell
    /// (a lock, a barrier round) or of a [`SyncRole::Signals`] cell (a condition wait's
    /// registration before it sleeps, see `frontend/lower/cond.rs`).
    fn excluded(&self, g: &ExecutionGraph) -> bool {
        g.threads.iter().any(|tr| match tr.end {
            Some(ThreadEnd::Exited) => true,
            Some(ThreadEnd::Blocked) => {
                let last_read = deciding_read(g, &tr.events);
                !last_read.is_some_and(|e| {
                    g.events[e]
                        .loc
                        .is_some_and(|l| self.sync_role(g, l).is_some_and(|r| r != SyncRole::State))
                })
            }
            _ => false,
        })
    }

    /// Whether the graph shows where its threads end up: no thread was cut at the loop bound
    /// (it could still release anything), and every blocked thread's last read that is not
    /// part of a read-modify-write (the read its blocking depends on) read the mo-last write
    /// of its location. A thread blocked on an older write stands for the executions in which
    /// it reads a newer one — other graphs — and while it is stuck here, the threads waiting
    /// for it are too: no deadlock is reported in such a graph.
    fn settled(&self, g: &ExecutionGraph) -> bool {
        g.threads.iter().all(|tr| match tr.end {
            Some(ThreadEnd::Bounded | ThreadEnd::BoundAccepted) => false,
            Some(ThreadEnd::Blocked) => {
                let last_read = deciding_read(g, &tr.events);
                last_read.is_none_or(|e| g.events[e].loc.is_none_or(|_| read_latest(g, e)))
            }
            _ => true,
        })
    }

    /// Whether event `e` is a read of a synchronisation cell of role `role` that read the
    /// cell's mo-last write.
    fn reads_last(&self, g: &ExecutionGraph, e: EventId, role: SyncRole) -> bool {
        let ev = &g.events[e];
        ev.is_read()
            && ev.loc.is_some_and(|l| self.sync_role(g, l) == Some(role))
            && read_latest(g, e)
    }

    /// The synchronisation role of location `loc`'s cell (a lock word, a barrier round, a
    /// condition variable's signals, an object's state), if it is one.
    fn sync_role(&self, g: &ExecutionGraph, loc: usize) -> Option<SyncRole> {
        g.loc_info(self.prog, loc)
            .and_then(|c| c.sync.as_ref())
            .map(|c| c.role)
    }
}

/// Whether read `e` (of a location) read the mo-latest write of its location.
fn read_latest(g: &ExecutionGraph, e: EventId) -> bool {
    g.events[e]
        .loc
        .is_some_and(|l| g.rf[e] == g.mo[l].last().copied())
}

/// The last read among `events` (a thread's) outside a read-modify-write: the read a blocked
/// thread's blocking depends on.
fn deciding_read(g: &ExecutionGraph, events: &[EventId]) -> Option<EventId> {
    events
        .iter()
        .rev()
        .copied()
        .find(|&e| g.events[e].is_read() && !g.rmw.iter().any(|p| p.0 == e))
}

/// The message of a deadlock of thread `t` on `cell` (`lost`: a lost wake-up).
fn deadlock_message(t: usize, cell: &crate::ir::SyncCell, lost: bool) -> String {
    let (noun, object) = (cell.kind.noun(), &cell.object);
    if lost {
        format!(
            "T{t} waits on {noun} `{object}` after its last signal or broadcast: without a \
             spurious wake-up it sleeps forever (lost wake-up)"
        )
    } else if cell.kind == SyncKind::Barrier {
        format!(
            "T{t} waits forever at {noun} `{object}`: fewer threads than its count arrive in \
             this round"
        )
    } else {
        format!("T{t} waits forever for {noun} `{object}`, which no thread releases any more")
    }
}

/// The kind and message of the bug of a failing `Assert` or `Check`.
fn failure(ins: &Instr) -> (BugKind, String) {
    use crate::ir::CheckKind;
    match ins {
        Instr::Assert { text, .. } => (BugKind::Assertion, format!("assertion `{text}` failed")),
        Instr::Check { kind, message, .. } => {
            let kind = match kind {
                CheckKind::Abort => BugKind::Assertion,
                CheckKind::Misuse => BugKind::Misuse,
                CheckKind::Ub => BugKind::Ub,
            };
            (kind, message.clone())
        }
        _ => unreachable!("failure of an instruction that cannot fail"),
    }
}

/// What a reading instruction does when it reads `value`: the order of its read event, the
/// write part of an RMW (order and value) if it writes, and the registers it sets.
type ReadEffect = (MemOrder, Option<(MemOrder, i64)>, Sets);

/// The registers a read sets, with their values (one, or a CAS's two), kept inline: a read
/// branches on every source it may read, and each choice carries them.
type Sets = smallvec::SmallVec<[(usize, i64); 2]>;

/// A read's effects: one, or two for a weak CAS that may also fail spuriously.
type ReadEffects = smallvec::SmallVec<[ReadEffect; 1]>;

/// How many events a copy of a state has room for before its vectors grow.
const FORK_ROOM: usize = 16;

/// TruSt keeps a copy of the state before a read at least every this many events of a path,
/// so that a revisit replays at most this many events before the first one it changes.
const SNAPSHOT_EVERY: usize = 8;

/// The state for one of several choices made from `slot`: a copy, or for the `last` choice the
/// state itself (no copy when the caller gave it away).
fn take_last(slot: &mut Option<std::borrow::Cow<'_, State>>, last: bool) -> State {
    if last {
        slot.take().expect("the state is used once").into_owned()
    } else {
        slot.as_ref()
            .expect("the state is kept until the last")
            .fork(FORK_ROOM)
    }
}

/// The identity of a value class: per thread (named by its spawn path, so that thread numbers
/// given in different orders compare equal), its function and the values it read, with the
/// source of every read that is not constrained by value only (its source decides hb), and
/// which reads are the read of an RMW (a weak CAS that fails spuriously reads the same value).
fn value_key(g: &ExecutionGraph, w: &Witness) -> String {
    // Each thread's spawn path, computed once (a child is spawned by a lower-numbered thread).
    let mut paths: Vec<Vec<usize>> = Vec::with_capacity(g.threads.len());
    for tr in &g.threads {
        let p = match tr.spawned_by {
            Some(sp) => {
                let mut p = paths[g.events[sp].thread].clone();
                p.push(g.index_in_thread(sp).unwrap_or(0));
                p
            }
            None => Vec::new(),
        };
        paths.push(p);
    }
    let name = |e: EventId| {
        let ev = &g.events[e];
        if ev.thread == INIT_THREAD {
            format!("i{}", ev.loc.unwrap_or(0))
        } else {
            format!(
                "{:?}.{}",
                paths[ev.thread],
                g.index_in_thread(e).unwrap_or(0)
            )
        }
    };
    let mut threads: Vec<String> = g
        .threads
        .iter()
        .enumerate()
        .map(|(t, tr)| {
            let mut s = format!("{:?}f{}:", paths[t], tr.func);
            for &e in tr.events.iter().filter(|&&e| g.events[e].is_read()) {
                s.push_str(&g.events[e].value.to_string());
                // A weak CAS may fail spuriously: the same value, another outcome.
                if g.rmw.iter().any(|&(r, _)| r == e) {
                    s.push('+');
                }
                if !w.by_value(e) {
                    s.push('<');
                    s.push_str(&g.rf[e].map(name).unwrap_or_default());
                }
                s.push(',');
            }
            s
        })
        .collect();
    threads.sort();
    threads.join(";")
}

/// Which reads `--equiv value` constrains by their value only. A read's source decides
/// happens-before (and so which accesses race) when it is atomic and acquire, or the read of
/// an RMW (release sequences), or any atomic read when the program has an acquire fence; when
/// the program has non-atomic accesses such reads keep their source (without non-atomic
/// accesses there are no races to find, and every read goes by value).
#[derive(Clone, Copy, Debug)]
struct ValuePolicy {
    on: bool,
    non_atomic: bool,
    acquire_fence: bool,
}

impl ValuePolicy {
    fn new(prog: &Program, on: bool) -> ValuePolicy {
        let instrs = || prog.functions.iter().flat_map(|f| f.body.iter());
        ValuePolicy {
            on,
            non_atomic: instrs().any(|i| i.access().is_some_and(|(_, atomic)| !atomic)),
            acquire_fence: instrs()
                .any(|i| matches!(i, Instr::Fence { order } if order.is_acquire())),
        }
    }

    /// Whether a read event with `order` (`rmw`: the read of an RMW) goes by value.
    fn event(&self, order: MemOrder, rmw: bool) -> bool {
        let synchronising = order.is_atomic() && (order.is_acquire() || rmw || self.acquire_fence);
        self.on && !(self.non_atomic && synchronising)
    }

    /// Whether every read event the instruction `ins` can produce goes by value (its sources
    /// may then be grouped by value before branching).
    fn instr(&self, ins: &Instr) -> bool {
        match ins {
            Instr::Load { order, .. } => self.event(*order, false),
            Instr::Rmw { order, .. } => self.event(*order, true),
            Instr::Cas {
                order, fail_order, ..
            } => self.event(*order, true) && self.event(*fail_order, false),
            _ => false,
        }
    }
}

/// The possible effects of a pending read that reads `value`: one, except for a weak CAS that
/// reads the expected value when spurious failures are enabled (success, then failure).
fn read_effects(ins: &Instr, regs: &[i64], value: i64, spurious_cas: bool) -> ReadEffects {
    let mut effects: ReadEffects = smallvec![read_effect(ins, regs, value)];
    if let Instr::Cas {
        ok,
        old,
        weak: true,
        fail_order,
        ..
    } = ins
    {
        if spurious_cas && effects[0].1.is_some() {
            effects.push((*fail_order, None, smallvec![(*old, value), (*ok, 0)]));
        }
    }
    effects
}

fn read_effect(ins: &Instr, regs: &[i64], value: i64) -> ReadEffect {
    match ins {
        Instr::Load { dst, order, .. } => (*order, None, smallvec![(*dst, value)]),
        Instr::Rmw {
            dst,
            op,
            val,
            order,
            width,
            ..
        } => {
            let (r, w) = split_rmw_order(*order);
            let new = width.wrap(op.apply(value, val.eval(regs).unwrap_or(0)));
            (r, Some((w, new)), smallvec![(*dst, value)])
        }
        Instr::Cas {
            ok,
            old,
            expected,
            desired,
            order,
            fail_order,
            ..
        } => {
            if expected.eval(regs).unwrap_or(0) == value {
                let (r, w) = split_rmw_order(*order);
                let d = desired.eval(regs).unwrap_or(0);
                (r, Some((w, d)), smallvec![(*old, value), (*ok, 1)])
            } else {
                (*fail_order, None, smallvec![(*old, value), (*ok, 0)])
            }
        }
        _ => unreachable!("read_effect of a non-read"),
    }
}

/// The orders of the read and write parts of an RMW of order `o`: the read part carries the
/// acquire half, the write part the release half, and both parts of a seq_cst RMW are sc.
pub fn split_rmw_order(o: MemOrder) -> (MemOrder, MemOrder) {
    match o {
        MemOrder::Acquire => (MemOrder::Acquire, MemOrder::Relaxed),
        MemOrder::Release => (MemOrder::Relaxed, MemOrder::Release),
        MemOrder::AcqRel => (MemOrder::Acquire, MemOrder::Release),
        MemOrder::SeqCst => (MemOrder::SeqCst, MemOrder::SeqCst),
        other => (other, other),
    }
}

/// How many subtrees per thread [`explore_parallel`] aims for: enough that threads finishing
/// early find more work (the subtrees' sizes vary a lot).
const TASKS_PER_JOB: usize = 32;

/// What a worker of [`explore_parallel`] found in one subtree.
struct TaskResult {
    stats: Stats,
    /// Its buggy graphs, in visiting order (at most `keep_buggy`; all under `--equiv value`).
    buggy: Vec<ExecutionGraph>,
    /// Under `--equiv value`: every visit, to count each class once across subtrees.
    visits: Option<Vec<Visit>>,
    /// Every buggy graph met, counted per error (unused under `--equiv value`, where the merge
    /// counts the classes it keeps).
    tally: super::Tally,
}

/// [`crate::checker::check`] on `limits.jobs` threads: the exploration tree is split into
/// subtrees (in the order a sequential run explores them), threads take subtrees as they
/// become free, and the results are merged in subtree order. The counts, the buggy graphs and
/// their order are those of the sequential run; with `first`, the bug reported is the first
/// one the sequential run would find (later subtrees are cancelled). Not for
/// `max_executions` (where the cut falls depends on the order; `check` runs those on one
/// thread).
pub fn explore_parallel(
    prog: &Program,
    model: Model,
    limits: Limits,
    first: bool,
    keep_buggy: usize,
) -> (Stats, Vec<ExecutionGraph>, super::Tally) {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::sync::{mpsc, Mutex};
    let jobs = limits.jobs.max(1);
    let progress = limits.progress.clone();
    let worker_limits = Limits {
        progress: None,
        verify_incremental: false,
        ..limits
    };
    let value = worker_limits.equiv == Equiv::Value && worker_limits.coarse(model);
    let future = OnceLock::new();
    // Split: expand subtrees level by level until there are enough.
    let mut total = Stats::default();
    let mut tasks = vec![Task::Run(initial_state(prog, model, &worker_limits))];
    {
        let mut splitter = Explorer::new(
            prog,
            &future,
            model,
            worker_limits.clone(),
            |_: &ExecutionGraph| Control::Continue,
        );
        while tasks.len() < TASKS_PER_JOB * jobs && tasks.iter().any(|t| matches!(t, Task::Run(_)))
        {
            let mut next = Vec::new();
            for t in tasks {
                match t {
                    Task::Run(st) => {
                        splitter.tasks = Some(Vec::new());
                        splitter.run(st);
                        next.extend(splitter.tasks.take().unwrap_or_default());
                    }
                    done => next.push(done),
                }
                if splitter.stats.incomplete.is_some() {
                    total.states = splitter.stats.states;
                    total.revisits = splitter.stats.revisits;
                    total.revisits = splitter.stats.revisits;
                    total.dead_ends = splitter.stats.dead_ends;
                    total.incomplete = splitter.stats.incomplete.clone();
                    return (total, Vec::new(), super::Tally::default());
                }
            }
            tasks = next;
        }
        total.states = splitter.stats.states;
        total.revisits = splitter.stats.revisits;
        total.dead_ends = splitter.stats.dead_ends;
    }
    let n = tasks.len();
    let slots: Vec<Mutex<Option<Task>>> = tasks.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next_task = AtomicUsize::new(0);
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<(usize, TaskResult)>();
    let keep_per_task = if value { usize::MAX } else { keep_buggy };
    // Buggy graphs each subtree met so far: once the subtrees before one have `keep_buggy`
    // between them, it need not copy any (the merge takes the first `keep_buggy` in order).
    let buggy_met: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    let mut buggy_out = Vec::new();
    let mut tally = super::Tally::default();
    // Executions (and buggy ones) the workers have visited, unmerged: what the progress hook
    // is told every PROGRESS_EVERY of them, so that a display moves while the tasks run (the
    // merge, in task order, may wait long for the first one).
    let live = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(n) {
            let tx = tx.clone();
            let (slots, next_task, cancel, buggy_met) = (&slots, &next_task, &cancel, &buggy_met);
            let (future, worker_limits) = (&future, &worker_limits);
            let (live, progress) = (&live, &progress);
            scope.spawn(move || loop {
                let i = next_task.fetch_add(1, Ordering::Relaxed);
                if i >= n || cancel.load(Ordering::Relaxed) {
                    break;
                }
                let Some(task) = slots[i].lock().ok().and_then(|mut s| s.take()) else {
                    break;
                };
                let mut kept = Vec::new();
                let mut task_tally = super::Tally::default();
                let mut enough_before = false;
                let (stats, visits) = {
                    let mut ex = Explorer::new(
                        prog,
                        future,
                        model,
                        worker_limits.clone(),
                        |g: &ExecutionGraph| {
                            let done = live.0.fetch_add(1, Ordering::Relaxed) + 1;
                            if !g.bugs.is_empty() {
                                live.1.fetch_add(1, Ordering::Relaxed);
                            }
                            if let Some(p) =
                                progress.as_ref().filter(|_| done % PROGRESS_EVERY == 0)
                            {
                                (p.0)(done, live.1.load(Ordering::Relaxed));
                            }
                            if g.bugs.is_empty() {
                                return Control::Continue;
                            }
                            buggy_met[i].fetch_add(1, Ordering::Relaxed);
                            if !value {
                                task_tally.add(prog, g);
                            }
                            if !value && !enough_before {
                                let before: usize = buggy_met[..i]
                                    .iter()
                                    .map(|c| c.load(Ordering::Relaxed))
                                    .sum();
                                enough_before = before >= keep_buggy;
                            }
                            if !enough_before && kept.len() < keep_per_task {
                                kept.push(g.clone());
                            }
                            if first {
                                Control::Stop
                            } else {
                                Control::Continue
                            }
                        },
                    );
                    ex.cancel = Some(cancel.clone());
                    if value {
                        ex.visits = Some(Vec::new());
                    }
                    match task {
                        // The state's views share nothing with other workers' (flat
                        // clock arrays, no reference counts), so it runs as it is.
                        Task::Run(st) => ex.run(st),
                        Task::Complete(st) => ex.complete(st),
                    }
                    (ex.stats, ex.visits)
                };
                let result = TaskResult {
                    stats,
                    buggy: kept,
                    visits,
                    tally: task_tally,
                };
                if tx.send((i, result)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Merge in subtree order.
        let mut pending: std::collections::BTreeMap<usize, TaskResult> = Default::default();
        let mut seen: std::collections::HashSet<String> = Default::default();
        let mut at = 0;
        'merge: while at < n {
            let Ok((i, r)) = rx.recv() else { break };
            pending.insert(i, r);
            while let Some(r) = pending.remove(&at) {
                at += 1;
                total.states += r.stats.states;
                total.dead_ends += r.stats.dead_ends;
                total.revisits += r.stats.revisits;
                match r.visits {
                    Some(visits) => {
                        let mut graphs = r.buggy.into_iter();
                        for v in visits {
                            let graph = if v.buggy { graphs.next() } else { None };
                            if !seen.insert(v.key) {
                                continue;
                            }
                            match v.kind {
                                VisitKind::Execution => total.executions += 1,
                                VisitKind::Blocked => total.blocked += 1,
                                VisitKind::Bounded => total.bounded += 1,
                                VisitKind::BoundAccepted => total.bounded_accepted += 1,
                            }
                            if v.buggy {
                                total.buggy += 1;
                                if let Some(g) = &graph {
                                    tally.add(prog, g);
                                }
                                if buggy_out.len() < keep_buggy {
                                    buggy_out.extend(graph);
                                }
                                if first {
                                    total.stopped = true;
                                }
                            }
                            if total.stopped {
                                break;
                            }
                        }
                    }
                    None => {
                        total.executions += r.stats.executions;
                        total.blocked += r.stats.blocked;
                        total.bounded += r.stats.bounded;
                        total.bounded_accepted += r.stats.bounded_accepted;
                        total.buggy += r.stats.buggy;
                        tally.merge(prog, r.tally);
                        let room = keep_buggy.saturating_sub(buggy_out.len());
                        buggy_out.extend(r.buggy.into_iter().take(room));
                        total.stopped |= r.stats.stopped;
                    }
                }
                if r.stats.incomplete.is_some() {
                    total.incomplete = r.stats.incomplete;
                }
                if total.stopped || total.incomplete.is_some() {
                    cancel.store(true, Ordering::Relaxed);
                    break 'merge;
                }
            }
        }
    });
    (total, buggy_out, tally)
}

/// Whether a pass's events (`ir::spin`) may be deleted from any execution: fences, reads of
/// spin-safe globals, and — when `zne` (zero-net-effect passes, RC11 and SC) — RMW writes
/// that leave each location they write as the pass found it: per location, the pass's writes
/// are RMWs, each after the first reads the one before it, the last writes the value the
/// first read, and the location is `SpinInfo::zne_safe` (no non-atomic access; with several
/// writes, no read but an RMW's).
fn pass_deletable(g: &ExecutionGraph, pass: &[EventId], spin: &SpinInfo, zne: bool) -> bool {
    let mut writes: Vec<(Loc, Vec<(EventId, EventId)>)> = Vec::new();
    for (i, &e) in pass.iter().enumerate() {
        let ev = &g.events[e];
        if ev.is_fence() {
            continue;
        }
        let Some(l) = ev.loc else {
            return false;
        };
        if ev.is_read() {
            if !spin.spin_safe(l, ev.order.is_atomic()) {
                return false;
            }
            continue;
        }
        // A write: only an RMW's, whose read is the event before it in the pass.
        let read = i.checked_sub(1).map(|j| pass[j]);
        let Some(r) = read.filter(|&r| zne && ev.is_write() && g.rmw.contains(&(r, e))) else {
            return false;
        };
        match writes.iter_mut().find(|(x, _)| *x == l) {
            Some((_, ws)) => ws.push((r, e)),
            None => writes.push((l, vec![(r, e)])),
        }
    }
    writes.iter().all(|(l, ws)| {
        let chained = ws.windows(2).all(|p| g.rf[p[1].0] == Some(p[0].1));
        let (first, last) = (ws[0].0, ws[ws.len() - 1].1);
        chained && g.events[first].value == g.events[last].value && spin.zne_safe(*l, ws.len() > 1)
    })
}
