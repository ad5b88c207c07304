//! Execution graphs: events, program order, reads-from and modification order
//! (shared/docs/memory-models.md §1).
//!
//! Event ids are indices into [`ExecutionGraph::events`]. The initialisation writes come first
//! (one per location, id = location), then the events in the order the explorer added them,
//! which is always a linearisation of po ∪ rf.

use super::deps::Deps;
use crate::ir::{FuncId, Loc, MemOrder, SlotId, StmtId};
use std::fmt::Write as _;
use std::sync::Arc;

pub type EventId = usize;

/// The thread id used for initialisation writes.
pub const INIT_THREAD: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The initialisation write of a location.
    Init,
    Read,
    Write,
    Fence,
    /// Thread creation; the child's events are po-after it.
    Spawn {
        child: usize,
    },
    /// Thread join; the child's events are po-before it.
    Join {
        child: usize,
    },
    /// A nondeterministic value the thread chose (its `value`): no memory effect.
    Choice,
    /// The end of the lifetime of the object in locations `first .. first + len`
    /// ([`crate::ir::Instr::Free`]).
    Free {
        first: Loc,
        len: usize,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    pub thread: usize,
    pub kind: EventKind,
    pub loc: Option<Loc>,
    pub order: MemOrder,
    /// Value read (reads) or written (writes, init).
    pub value: i64,
    /// The source statement that produced the event (None for init writes and candidate fences).
    pub stmt: Option<StmtId>,
    /// For a candidate fence placed by synthesis: the slot it stands for.
    pub slot: Option<SlotId>,
    /// The reads of its thread the event depends on (address, data, control), when the
    /// explorer tracks dependencies (model `armv8`, `--on-hardware armv8`).
    pub deps: Option<Arc<Deps>>,
}

impl Event {
    pub fn is_read(&self) -> bool {
        self.kind == EventKind::Read
    }
    pub fn is_write(&self) -> bool {
        matches!(self.kind, EventKind::Write | EventKind::Init)
    }
    pub fn is_fence(&self) -> bool {
        self.kind == EventKind::Fence
    }
    pub fn is_access(&self) -> bool {
        self.is_read() || self.is_write()
    }
}

/// How a thread's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadEnd {
    /// Returned normally.
    Finished,
    /// Stopped by a failed assertion or undefined behaviour (index into `bugs`).
    Failed(usize),
    /// Waiting forever (joining a thread that failed, blocked or was cut).
    Stuck,
    /// Blocked forever by a false `assume` (or an await loop that would spin forever).
    Blocked,
    /// Cut at the loop unroll bound.
    Bounded,
    /// Cut at the bound of a loop the source accepts (`// fensyn: unroll N`).
    BoundAccepted,
    /// Called `exit`: the program ended (the other threads' ends do not matter).
    Exited,
}

/// One thread of an execution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadTrace {
    pub func: FuncId,
    /// The spawn event that created this thread (None for main).
    pub spawned_by: Option<EventId>,
    /// The thread's events in program order.
    pub events: Vec<EventId>,
    /// Fence slots the thread passed: `(slot, n)` means the slot was passed after the thread's
    /// first `n` events. A fence at that slot sits between events `n-1` and `n`.
    pub slots: Vec<(SlotId, usize)>,
    pub end: Option<ThreadEnd>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BugKind {
    Assertion,
    Race,
    /// Undefined behaviour other than a race (division by zero).
    Ub,
    /// A thread waits forever: for a lock nobody releases, at a barrier whose round never
    /// completes, or on a condition variable signalled only before its wait (lost wake-up).
    Deadlock,
    /// A synchronisation object used against its contract (locking a destroyed mutex,
    /// unlocking a mutex the thread does not hold, waiting on an uninitialised barrier, ...).
    Misuse,
    /// The execution is not sequentially consistent (`fensyn robust`, `fix --goal sc`).
    NonSc,
    /// A memory-safety error: an object used outside its lifetime or bounds, freed wrongly,
    /// or read before it was written.
    Memory(MemoryError),
    /// A thread spins forever in an await or spin loop: every other thread finished or waits,
    /// and the loop's last pass read the latest write of every location it reads, so no fair
    /// continuation changes what it reads (`check --liveness`, on by default).
    Liveness,
}

/// The memory-safety errors ([`BugKind::Memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryError {
    /// An access to a heap object after (or racing with) its `free` / `delete`.
    UseAfterFree,
    /// An access to a function's local object after (or racing with) the function's return.
    UseAfterReturn,
    /// A second `free` of one object.
    DoubleFree,
    /// `free` / `delete` of a pointer that is not the start of a live heap object allocated
    /// by the matching function.
    InvalidFree,
    /// A read of a cell never written (`malloc`ed memory, a C local without initialiser).
    UninitialisedRead,
    /// An access outside the object the pointer or index addresses (or through a pointer
    /// that addresses no object at all).
    OutOfBounds,
    /// An access through the null pointer.
    NullDereference,
    /// A heap object never freed (reported only when asked: `--leaks`).
    Leak,
}

impl MemoryError {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryError::UseAfterFree => "use-after-free",
            MemoryError::UseAfterReturn => "use-after-return",
            MemoryError::DoubleFree => "double-free",
            MemoryError::InvalidFree => "invalid-free",
            MemoryError::UninitialisedRead => "uninitialised-read",
            MemoryError::OutOfBounds => "out-of-bounds",
            MemoryError::NullDereference => "null-dereference",
            MemoryError::Leak => "leak",
        }
    }
}

impl BugKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BugKind::Assertion => "assertion",
            BugKind::Race => "race",
            BugKind::Ub => "ub",
            BugKind::Deadlock => "deadlock",
            BugKind::Misuse => "misuse",
            BugKind::NonSc => "non_sc",
            BugKind::Memory(_) => "memory",
            BugKind::Liveness => "liveness",
        }
    }

    /// For a memory error, which one (`use-after-free`, ...).
    pub fn detail(self) -> Option<&'static str> {
        match self {
            BugKind::Memory(m) => Some(m.as_str()),
            _ => None,
        }
    }

    /// A distinct number per kind and detail (for keys and hashes).
    pub fn code(self) -> i64 {
        match self {
            BugKind::Assertion => 0,
            BugKind::Race => 1,
            BugKind::Ub => 2,
            BugKind::Deadlock => 3,
            BugKind::Misuse => 4,
            BugKind::NonSc => 5,
            BugKind::Memory(m) => 6 + m as i64,
            BugKind::Liveness => 6 + MemoryError::Leak as i64 + 1,
        }
    }
}

/// An error found in an execution.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bug {
    pub kind: BugKind,
    /// The statement where the error shows (the assertion; for a race, the later access).
    pub stmt: StmtId,
    pub thread: usize,
    pub message: String,
    /// The error depends only on these events and their po ∪ rf predecessors: the bug exists in
    /// any consistent execution containing this prefix.
    pub witness: Vec<EventId>,
    /// For a race: the two racing accesses. For an access racing with the end of its object's
    /// lifetime ([`MemoryError::UseAfterFree`] / [`MemoryError::UseAfterReturn`] with no hb
    /// between them): `(access, end)`, fixed only by ordering the access before the end.
    pub race: Option<(EventId, EventId)>,
    /// A second statement the error names (the `free` of a use after free, the first `free`
    /// of a double free): reports show its position too.
    pub related: Option<StmtId>,
}

/// A (possibly partial) execution graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExecutionGraph {
    pub events: Vec<Event>,
    pub threads: Vec<ThreadTrace>,
    /// `rf[r]` is the write read by read `r`.
    pub rf: Vec<Option<EventId>>,
    /// Per location, its writes in modification order (init first).
    pub mo: Vec<Vec<EventId>>,
    /// `(read part, write part)` pairs of read-modify-writes.
    pub rmw: Vec<(EventId, EventId)>,
    pub bugs: Vec<Bug>,
    /// How many initialisation writes the graph starts with (events `0..inits`, one per
    /// location of the program's globals, id = location).
    pub inits: usize,
    /// The locations allocated while the program ran ([`crate::ir::Instr::Alloc`]): location
    /// `inits + i` is `dynamic[i]`. Their first write in mo is the allocation's own (a
    /// non-atomic write of the cell's initial value by the allocating thread); a location
    /// whose allocation a revisit removed stays as an empty `mo` entry.
    pub dynamic: Vec<DynLoc>,
}

/// A location allocated at run time: cell `cell` of an object of layout `layout`
/// ([`crate::ir::Program::layouts`]), `offset` cells after the object's first and in an object
/// of `len` cells (an array allocation repeats the layout's cells), allocated by event `event`
/// (its first write; `usize::MAX` when not allocated: removed by a revisit, or an object's
/// red zone, see [`DynLoc::red_zone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DynLoc {
    pub layout: usize,
    pub cell: usize,
    pub offset: usize,
    pub len: usize,
    pub event: EventId,
}

impl DynLoc {
    /// The location just past an allocated object (local or heap): never allocated, so that an
    /// access one past its end (or through a pointer running off it) is out of bounds instead
    /// of reaching the next object. `offset == len`.
    pub fn red_zone(self) -> bool {
        self.offset == self.len
    }
}

/// A copy of `v` with room for `more` elements: a copy the explorer goes on extending would
/// otherwise be reallocated (and moved) by its first push, `Vec::clone` leaving no room.
pub(crate) fn with_room<T: Clone>(v: &[T], more: usize) -> Vec<T> {
    let mut c = Vec::with_capacity(v.len() + more);
    c.extend_from_slice(v);
    c
}

/// `v` cleared and refilled with `n` copies of `x`, keeping its allocation (working buffers
/// reused from one call to the next).
pub(crate) fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

impl ExecutionGraph {
    /// A copy of the graph to be extended by about `more` events (see [`with_room`]).
    pub(crate) fn fork(&self, more: usize) -> ExecutionGraph {
        ExecutionGraph {
            events: with_room(&self.events, more),
            threads: self
                .threads
                .iter()
                .map(|t| ThreadTrace {
                    func: t.func,
                    spawned_by: t.spawned_by,
                    events: with_room(&t.events, more),
                    slots: with_room(&t.slots, more),
                    end: t.end,
                })
                .collect(),
            rf: with_room(&self.rf, more),
            mo: self.mo.iter().map(|m| with_room(m, more)).collect(),
            rmw: with_room(&self.rmw, more),
            bugs: self.bugs.clone(),
            inits: self.inits,
            dynamic: self.dynamic.clone(),
        }
    }

    /// A graph holding only the initialisation writes.
    /// Test aid: the initialisation writes of `locs` zeroed locations and `threads` empty
    /// threads running function 0.
    #[cfg(test)]
    pub(crate) fn for_tests(locs: usize, threads: usize) -> ExecutionGraph {
        let mut g = ExecutionGraph::with_init(&vec![0; locs]);
        for _ in 0..threads {
            g.threads.push(ThreadTrace {
                func: 0,
                spawned_by: None,
                events: Vec::new(),
                slots: Vec::new(),
                end: None,
            });
        }
        g
    }

    pub fn with_init(init_values: &[i64]) -> ExecutionGraph {
        let events = init_values
            .iter()
            .enumerate()
            .map(|(loc, &v)| Event {
                thread: INIT_THREAD,
                kind: EventKind::Init,
                loc: Some(loc),
                order: MemOrder::NonAtomic,
                value: v,
                stmt: None,
                slot: None,
                deps: None,
            })
            .collect::<Vec<_>>();
        ExecutionGraph {
            rf: vec![None; events.len()],
            mo: (0..events.len()).map(|l| vec![l]).collect(),
            inits: events.len(),
            events,
            threads: Vec::new(),
            rmw: Vec::new(),
            bugs: Vec::new(),
            dynamic: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The number of locations: the program's globals and the cells allocated so far.
    pub fn num_locs(&self) -> usize {
        self.mo.len()
    }

    /// The allocated locations with their allocation events renamed by `map` (an event not
    /// in it, or removed, becomes `usize::MAX`).
    fn dynamic_renamed(&self, map: &[EventId]) -> Vec<DynLoc> {
        self.dynamic
            .iter()
            .map(|d| DynLoc {
                event: map.get(d.event).copied().unwrap_or(usize::MAX),
                ..*d
            })
            .collect()
    }

    /// The number of initialisation writes (the id of the first event of a thread).
    pub fn num_inits(&self) -> usize {
        self.inits
    }

    /// The name of location `x` in messages: a global's, or for an allocated cell its
    /// object's cell name (e.g. `main::args[1].tid`).
    pub fn loc_name(&self, prog: &crate::ir::Program, x: Loc) -> String {
        if let Some((_, d)) = self.object_of(x) {
            let layout = &prog.layouts[d.layout];
            let n = layout.cells.len();
            if d.len > n && !d.red_zone() {
                // An element of an array allocation: `malloc@12[3].next`.
                let cell = &layout.cells[d.cell].name;
                let rest = cell.strip_prefix(layout.name.as_str()).unwrap_or("");
                return format!("{}[{}]{rest}", layout.name, d.offset / n);
            }
        }
        self.loc_info(prog, x)
            .map(|g| g.name.clone())
            .unwrap_or_else(|| format!("loc{x}"))
    }

    /// What the program says of location `x`: a global, or the cell of an allocated object.
    pub fn loc_info<'p>(
        &self,
        prog: &'p crate::ir::Program,
        x: Loc,
    ) -> Option<&'p crate::ir::Global> {
        match x.checked_sub(self.inits) {
            None => prog.globals.get(x),
            Some(i) => {
                let d = self.dynamic.get(i).filter(|d| !d.red_zone())?;
                prog.layouts.get(d.layout)?.cells.get(d.cell)
            }
        }
    }

    /// The allocated object location `x` lies in (or is the red zone of): its first location
    /// and entry.
    pub fn object_of(&self, x: Loc) -> Option<(Loc, DynLoc)> {
        let d = *self.dynamic.get(x.checked_sub(self.inits)?)?;
        Some((x - d.offset, d))
    }

    /// The name of an allocated object in messages (`malloc@12`, `main::buf`).
    pub fn object_name(&self, prog: &crate::ir::Program, x: Loc) -> String {
        match self.object_of(x) {
            Some((_, d)) => prog.layouts[d.layout].name.clone(),
            None => self.loc_name(prog, x),
        }
    }

    /// Appends an event to `thread` and returns its id.
    pub fn push(&mut self, ev: Event) -> EventId {
        let id = self.events.len();
        if ev.thread != INIT_THREAD {
            self.threads[ev.thread].events.push(id);
        }
        self.events.push(ev);
        self.rf.push(None);
        id
    }

    /// Index of `e` within its thread.
    pub fn index_in_thread(&self, e: EventId) -> Option<usize> {
        let t = self.events[e].thread;
        if t == INIT_THREAD {
            return None;
        }
        self.threads[t].events.iter().position(|&x| x == e)
    }

    /// Every event's [`index_in_thread`](Self::index_in_thread) at once (0 for init events
    /// and events in no thread's list): one pass instead of a search per event.
    fn thread_indices(&self) -> Vec<usize> {
        let mut index = vec![0; self.len()];
        for tr in &self.threads {
            for (i, &e) in tr.events.iter().enumerate() {
                index[e] = i;
            }
        }
        index
    }

    /// The events that `roots` depend on: their downward closure under po ∪ rf (including the
    /// spawn/join edges between threads), plus the initialisation writes. Each thread's part
    /// is a po-prefix, so it is grown per thread (its events are in increasing id order).
    pub fn porf_prefix(&self, roots: &[EventId]) -> Vec<bool> {
        let mut keep = Vec::new();
        self.porf_prefix_into(roots, &mut keep, &mut Vec::new(), &mut Vec::new());
        keep
    }

    /// [`ExecutionGraph::porf_prefix`] into `keep`, with working buffers `upto` and `stack`
    /// (a caller asking many times keeps them).
    pub(crate) fn porf_prefix_into(
        &self,
        roots: &[EventId],
        keep: &mut Vec<bool>,
        upto: &mut Vec<usize>,
        stack: &mut Vec<EventId>,
    ) {
        reset(keep, self.len(), false);
        keep[..self.inits].fill(true);
        // How many of each thread's events are in the prefix so far.
        reset(upto, self.threads.len(), 0);
        stack.clear();
        stack.extend_from_slice(roots);
        while let Some(e) = stack.pop() {
            let t = self.events[e].thread;
            if t == INIT_THREAD {
                continue;
            }
            let tr = &self.threads[t];
            let Ok(idx) = tr.events.binary_search(&e) else {
                // Not in its thread's list (no graph the explorer builds has one): itself and
                // its source.
                if !keep[e] {
                    keep[e] = true;
                    stack.extend(self.rf[e]);
                }
                continue;
            };
            if idx < upto[t] {
                continue;
            }
            if upto[t] == 0 {
                if let Some(sp) = tr.spawned_by {
                    stack.push(sp);
                }
            }
            for &x in &tr.events[upto[t]..=idx] {
                keep[x] = true;
                if let Some(w) = self.rf[x] {
                    if !keep[w] {
                        stack.push(w);
                    }
                }
                if let EventKind::Join { child } = self.events[x].kind {
                    if let Some(&last) = self.threads[child].events.last() {
                        stack.push(last);
                    } else if let Some(sp) = self.threads[child].spawned_by {
                        stack.push(sp);
                    }
                }
            }
            upto[t] = idx + 1;
        }
    }

    /// [`ExecutionGraph::restrict`], and `bug` (of `self`) with its witness and racing pair
    /// renamed to the sub-graph's event ids.
    pub fn restrict_with_bug(&self, keep: &[bool], bug: &Bug) -> (ExecutionGraph, Bug) {
        let mut map = vec![usize::MAX; self.len()];
        let mut next = 0;
        for (e, &k) in keep.iter().enumerate() {
            if k {
                map[e] = next;
                next += 1;
            }
        }
        let bug = Bug {
            witness: bug.witness.iter().map(|&e| map[e]).collect(),
            race: bug.race.map(|(x, y)| (map[x], map[y])),
            related: None,
            ..bug.clone()
        };
        (self.restrict(keep), bug)
    }

    /// The sub-graph on the events with `keep[e]` (which must be a po ∪ rf prefix). Fence slots
    /// passed after a thread's last kept event are kept only if they are at that boundary.
    pub fn restrict(&self, keep: &[bool]) -> ExecutionGraph {
        let mut map = vec![usize::MAX; self.len()];
        let mut events = Vec::new();
        for (e, ev) in self.events.iter().enumerate() {
            if keep[e] {
                map[e] = events.len();
                events.push(ev.clone());
            }
        }
        for ev in &mut events {
            if let Some(d) = &ev.deps {
                ev.deps = Some(Arc::new(d.renamed(&map)));
            }
        }
        let threads = self
            .threads
            .iter()
            .map(|t| {
                let evs: Vec<EventId> = t
                    .events
                    .iter()
                    .filter(|&&e| keep[e])
                    .map(|&e| map[e])
                    .collect();
                let kept = evs.len();
                ThreadTrace {
                    func: t.func,
                    spawned_by: t.spawned_by.and_then(|s| keep[s].then(|| map[s])),
                    slots: t
                        .slots
                        .iter()
                        .copied()
                        .filter(|&(_, k)| k <= kept)
                        .collect(),
                    events: evs,
                    end: if kept == t.events.len() { t.end } else { None },
                }
            })
            .collect();
        let rf = self
            .rf
            .iter()
            .enumerate()
            .filter(|(e, _)| keep[*e])
            .map(|(_, w)| w.map(|w| map[w]))
            .collect();
        let mo = self
            .mo
            .iter()
            .map(|ws| ws.iter().filter(|&&w| keep[w]).map(|&w| map[w]).collect())
            .collect();
        let rmw = self
            .rmw
            .iter()
            .filter(|(r, w)| keep[*r] && keep[*w])
            .map(|&(r, w)| (map[r], map[w]))
            .collect();
        ExecutionGraph {
            events,
            threads,
            rf,
            mo,
            rmw,
            bugs: Vec::new(),
            inits: self.inits,
            dynamic: self.dynamic_renamed(&map),
        }
    }

    /// A copy with fences inserted at passed slots (`slot_order`) and with the orders of existing
    /// fence statements raised (`stmt_order`; a fence never gets weaker). Returns the new graph and the map from old to new
    /// event ids. Inserted fences carry `slot: Some(..)` and no statement.
    pub fn with_fences(
        &self,
        slot_order: &dyn Fn(SlotId) -> Option<MemOrder>,
        stmt_order: &dyn Fn(StmtId) -> Option<MemOrder>,
    ) -> (ExecutionGraph, Vec<EventId>) {
        // New events are placed right after the event they follow in their thread; we rebuild
        // the event list in the old order with insertions.
        let n = self.len();
        let mut after: Vec<Vec<(SlotId, MemOrder)>> = vec![Vec::new(); n];
        let mut at_start: Vec<Vec<(SlotId, MemOrder)>> = vec![Vec::new(); self.threads.len()];
        for (t, tr) in self.threads.iter().enumerate() {
            for &(slot, k) in &tr.slots {
                if let Some(o) = slot_order(slot) {
                    if k == 0 {
                        at_start[t].push((slot, o));
                    } else {
                        after[tr.events[k - 1]].push((slot, o));
                    }
                }
            }
        }
        let mut g = ExecutionGraph {
            events: Vec::with_capacity(n),
            threads: self
                .threads
                .iter()
                .map(|t| ThreadTrace {
                    func: t.func,
                    spawned_by: None,
                    events: Vec::new(),
                    slots: Vec::new(),
                    end: t.end,
                })
                .collect(),
            rf: Vec::new(),
            mo: Vec::new(),
            rmw: Vec::new(),
            bugs: Vec::new(),
            inits: self.inits,
            dynamic: Vec::new(),
        };
        let mut map = vec![usize::MAX; n];
        let fence = |t: usize, slot: SlotId, order: MemOrder| Event {
            thread: t,
            kind: EventKind::Fence,
            loc: None,
            order,
            value: 0,
            stmt: None,
            slot: Some(slot),
            deps: None,
        };
        let mut started = vec![false; self.threads.len()];
        for e in 0..n {
            let mut ev = self.events[e].clone();
            let t = ev.thread;
            if t != INIT_THREAD && !started[t] {
                started[t] = true;
                for &(slot, o) in &at_start[t] {
                    g.push(fence(t, slot, o));
                }
            }
            if ev.kind == EventKind::Fence {
                if let Some(o) = ev.stmt.and_then(stmt_order) {
                    ev.order = ev.order.join(o);
                }
            }
            map[e] = g.push(ev);
            for &(slot, o) in &after[e] {
                g.push(fence(t, slot, o));
            }
        }
        // Threads without events still get their start fences (they cannot matter, but keep the
        // graph faithful).
        for (t, fences) in at_start.iter().enumerate() {
            if !started[t] {
                for &(slot, o) in fences {
                    g.push(fence(t, slot, o));
                }
            }
        }
        for (t, tr) in self.threads.iter().enumerate() {
            g.threads[t].spawned_by = tr.spawned_by.map(|s| map[s]);
        }
        for ev in &mut g.events {
            if let Some(d) = &ev.deps {
                ev.deps = Some(Arc::new(d.renamed(&map)));
            }
        }
        for e in 0..n {
            if let Some(w) = self.rf[e] {
                g.rf[map[e]] = Some(map[w]);
            }
        }
        g.mo = self
            .mo
            .iter()
            .map(|ws| ws.iter().map(|&w| map[w]).collect())
            .collect();
        g.rmw = self.rmw.iter().map(|&(r, w)| (map[r], map[w])).collect();
        g.dynamic = self.dynamic_renamed(&map);
        g.bugs = self
            .bugs
            .iter()
            .map(|b| Bug {
                witness: b.witness.iter().map(|&e| map[e]).collect(),
                race: b.race.map(|(x, y)| (map[x], map[y])),
                related: None,
                ..b.clone()
            })
            .collect();
        (g, map)
    }

    /// A canonical text key of the graph (events per thread, rf, mo), independent of the order in
    /// which the events were added. Two graphs are the same execution iff their keys are equal.
    pub fn canonical_key(&self) -> String {
        let index = self.thread_indices();
        let name = |e: EventId| -> String {
            let ev = &self.events[e];
            if ev.thread == INIT_THREAD {
                format!("init{}", ev.loc.unwrap_or(0))
            } else {
                format!("{}.{}", ev.thread, index[e])
            }
        };
        let mut s = String::new();
        for (t, tr) in self.threads.iter().enumerate() {
            let _ = write!(s, "T{t}[f{}]:", tr.func);
            for &e in &tr.events {
                let ev = &self.events[e];
                let _ = match ev.kind {
                    EventKind::Read => write!(
                        s,
                        " R{}({},{})<-{}",
                        ev.order.short(),
                        ev.loc.unwrap_or(0),
                        ev.value,
                        self.rf[e].map(name).unwrap_or_default()
                    ),
                    EventKind::Write | EventKind::Init => write!(
                        s,
                        " W{}({},{})",
                        ev.order.short(),
                        ev.loc.unwrap_or(0),
                        ev.value
                    ),
                    EventKind::Fence => write!(s, " F{}", ev.order.short()),
                    EventKind::Spawn { child } => write!(s, " spawn{child}"),
                    EventKind::Join { child } => write!(s, " join{child}"),
                    EventKind::Choice => write!(s, " choose{}", ev.value),
                    EventKind::Free { first, len } => write!(s, " free{first}+{len}"),
                };
            }
            s.push('\n');
        }
        for (l, ws) in self.mo.iter().enumerate() {
            let _ = write!(s, "mo{l}:");
            for &w in ws {
                let _ = write!(s, " {}", name(w));
            }
            s.push('\n');
        }
        s
    }
}
