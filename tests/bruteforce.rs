//! An independent brute-force oracle for the model checker (`fensyn::checker::explore`).
//!
//! The oracle shares nothing with `src/checker` except the data types used to print a graph
//! (`ExecutionGraph::canonical_key`), and `Expr::eval` of the IR for thread-local arithmetic.
//! It works in three steps, straight from shared/docs/memory-models.md §1–2:
//!
//! 1. **Values.** For every location a finite set of values that a read of it can return: start
//!    with the initial value; run every thread function with its reads returning every value of
//!    the current sets; add every value written; repeat until nothing new appears or, for a
//!    loop-free program, for as many rounds as an execution can have writes. (Sound: a
//!    consistent graph has an acyclic po ∪ rf, so a write's value depends on a chain of distinct
//!    earlier writes, and round k covers every write whose chain has length ≤ k.)
//! 2. **Thread runs.** Every thread's complete local runs: its event sequence with values (reads
//!    take every value of the set), ending by finishing, failing (assertion or division by zero),
//!    or getting stuck at a `Join` of a thread that failed (each `Join` branches on "child
//!    finished" and "child did not finish"; the combination step keeps only runs that agree).
//! 3. **Graphs.** Every combination of runs, every rf choice (read → same-location write with the
//!    same value, init included) and every mo permutation per location (init first) is built and
//!    kept if the oracle's own RC11 (or SC) axioms accept it. Its key is
//!    `ExecutionGraph::canonical_key()` and it is buggy if a thread failed or it has a data race.
//!
//! The relations are bit matrices with a hand-written transitive closure; the axioms are written
//! from the doc, not from `src/checker/model.rs`. The explorer's own axioms are only ever called
//! to explain a disagreement in a failure message.

// Relations are indexed by event id throughout.
#![allow(clippy::needless_range_loop)]

use fensyn::checker::graph::ThreadTrace;
use fensyn::checker::{
    explore, Control, Event, EventKind, ExecutionGraph, Limits, Model, Stats, ThreadEnd,
    DEFAULT_UNROLL, INIT_THREAD,
};
use fensyn::ir::{
    BinOp, Expr, FuncId, Function, Global, Instr, MemOrder, Program, RmwOp, Slot, SlotPlace, Span,
    Stmt, StmtKind,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::time::Instant;

// ---------------------------------------------------------------------------------------------
// Relations: rows of bits, at most 128 events.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, PartialEq, Eq)]
struct Rel {
    rows: Vec<u128>,
}

impl Rel {
    fn empty(n: usize) -> Rel {
        assert!(n <= 128, "the oracle handles at most 128 events (got {n})");
        Rel { rows: vec![0; n] }
    }
    fn n(&self) -> usize {
        self.rows.len()
    }
    fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= 1u128 << b;
    }
    fn has(&self, a: usize, b: usize) -> bool {
        (self.rows[a] >> b) & 1 == 1
    }
    fn union(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a | b).collect(),
        }
    }
    /// Relational composition `self ; o`.
    fn seq(&self, o: &Rel) -> Rel {
        let mut out = Rel::empty(self.n());
        for a in 0..self.n() {
            let mut bits = self.rows[a];
            let mut acc = 0u128;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                acc |= o.rows[b];
            }
            out.rows[a] = acc;
        }
        out
    }
    /// Transitive closure (Warshall).
    fn plus(&self) -> Rel {
        let mut r = self.clone();
        let n = r.n();
        for k in 0..n {
            let rk = r.rows[k];
            for i in 0..n {
                if r.has(i, k) {
                    r.rows[i] |= rk;
                }
            }
        }
        r
    }
    fn acyclic(&self) -> bool {
        let c = self.plus();
        (0..c.n()).all(|i| !c.has(i, i))
    }
    fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for a in 0..self.n() {
            for b in 0..self.n() {
                if self.has(a, b) {
                    v.push((a, b));
                }
            }
        }
        v
    }
}

// ---------------------------------------------------------------------------------------------
// Event classification (own definitions of the order lattice, §1).
// ---------------------------------------------------------------------------------------------

fn is_read(e: &Event) -> bool {
    e.kind == EventKind::Read
}
fn is_write(e: &Event) -> bool {
    matches!(e.kind, EventKind::Write | EventKind::Init)
}
fn is_fence(e: &Event) -> bool {
    e.kind == EventKind::Fence
}
fn is_access(e: &Event) -> bool {
    is_read(e) || is_write(e)
}
/// The location of a memory access (fences, spawns and joins have none).
fn access_loc(e: &Event) -> Option<usize> {
    if is_access(e) {
        e.loc
    } else {
        None
    }
}
fn same_loc(a: &Event, b: &Event) -> bool {
    access_loc(a).is_some() && access_loc(a) == access_loc(b)
}
fn ord_rel(o: MemOrder) -> bool {
    matches!(o, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
}
fn ord_acq(o: MemOrder) -> bool {
    matches!(o, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst)
}
fn ord_atomic(o: MemOrder) -> bool {
    o != MemOrder::NonAtomic
}
/// `E^sc`: seq_cst accesses and fences.
fn is_sc(e: &Event) -> bool {
    e.order == MemOrder::SeqCst && (is_access(e) || is_fence(e))
}
fn is_sc_fence(e: &Event) -> bool {
    is_fence(e) && e.order == MemOrder::SeqCst
}

// ---------------------------------------------------------------------------------------------
// Derived relations and the axioms.
// ---------------------------------------------------------------------------------------------

/// po: init before everything, per-thread order, spawn → child, child → join; closed.
fn program_order(g: &ExecutionGraph) -> Rel {
    let n = g.events.len();
    let mut po = Rel::empty(n);
    for i in 0..n {
        if g.events[i].thread == INIT_THREAD {
            for j in 0..n {
                if g.events[j].thread != INIT_THREAD {
                    po.add(i, j);
                }
            }
        }
    }
    for tr in &g.threads {
        for w in tr.events.windows(2) {
            po.add(w[0], w[1]);
        }
        if let (Some(sp), Some(&first)) = (tr.spawned_by, tr.events.first()) {
            po.add(sp, first);
        }
    }
    for j in 0..n {
        if let EventKind::Join { child } = g.events[j].kind {
            if let Some(&last) = g.threads[child].events.last() {
                po.add(last, j);
            }
        }
    }
    po.plus()
}

struct Derived {
    po: Rel,
    rf: Rel,
    mo: Rel,
    rmw: Rel,
    fr: Rel,
    eco: Rel,
    hb: Rel,
}

fn derive(g: &ExecutionGraph, po: &Rel) -> Derived {
    let n = g.events.len();
    let ev = &g.events;
    let mut rf = Rel::empty(n);
    for (r, w) in g.rf.iter().enumerate() {
        if let Some(w) = *w {
            rf.add(w, r);
        }
    }
    let mut mo = Rel::empty(n);
    for ws in &g.mo {
        for i in 0..ws.len() {
            for j in i + 1..ws.len() {
                mo.add(ws[i], ws[j]);
            }
        }
    }
    // fr = rf⁻¹ ; mo \ id
    let mut fr = Rel::empty(n);
    for (w, r) in rf.pairs() {
        for w2 in 0..n {
            if mo.has(w, w2) && r != w2 {
                fr.add(r, w2);
            }
        }
    }
    let eco = rf.union(&mo).union(&fr).plus();
    let mut rmw = Rel::empty(n);
    for &(r, w) in &g.rmw {
        rmw.add(r, w);
    }
    // rs = [W] ; po|loc? ; [W ⊒ rlx] ; (rf ; rmw)*
    let mut rs = Rel::empty(n);
    for h in 0..n {
        for w in 0..n {
            if is_write(&ev[h])
                && is_write(&ev[w])
                && ord_atomic(ev[w].order)
                && (h == w || (po.has(h, w) && same_loc(&ev[h], &ev[w])))
            {
                rs.add(h, w);
            }
        }
    }
    let rf_rmw = rf.seq(&rmw);
    // (rf ; rmw)* = id ∪ (rf ; rmw)+
    let rs = rs.union(&rs.seq(&rf_rmw.plus()));
    // sw = [E ⊒ rel] ; ([F] ; po)? ; rs ; rf ; [R ⊒ rlx] ; (po ; [F])? ; [E ⊒ acq]
    let mut sw = Rel::empty(n);
    for r in 0..n {
        if !is_read(&ev[r]) || !ord_atomic(ev[r].order) {
            continue;
        }
        let Some(w) = g.rf[r] else { continue };
        // Heads of release sequences ending in w.
        let heads: Vec<usize> = (0..n).filter(|&h| rs.has(h, w)).collect();
        let mut sources = BTreeSet::new();
        for &h in &heads {
            if ord_rel(ev[h].order) {
                sources.insert(h);
            }
            for f in 0..n {
                if is_fence(&ev[f]) && ord_rel(ev[f].order) && po.has(f, h) {
                    sources.insert(f);
                }
            }
        }
        let mut targets = BTreeSet::new();
        if ord_acq(ev[r].order) {
            targets.insert(r);
        }
        for f in 0..n {
            if is_fence(&ev[f]) && ord_acq(ev[f].order) && po.has(r, f) {
                targets.insert(f);
            }
        }
        for &a in &sources {
            for &b in &targets {
                sw.add(a, b);
            }
        }
    }
    let hb = po.union(&sw).plus();
    Derived {
        po: po.clone(),
        rf,
        mo,
        rmw,
        fr,
        eco,
        hb,
    }
}

/// Atomicity (§2, axiom 2; also required by `sc`): `rmw ∩ (fr ; mo) = ∅`.
fn atomicity_holds(d: &Derived) -> bool {
    let fr_mo = d.fr.seq(&d.mo);
    d.rmw.pairs().into_iter().all(|(r, w)| !fr_mo.has(r, w))
}

/// The first RC11 axiom (§2) that fails, if any.
fn rc11_violation(g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    let n = g.events.len();
    let ev = &g.events;
    // 4. No thin air.
    if !d.po.union(&d.rf).acyclic() {
        return Some("no-thin-air");
    }
    // 1. Coherence: hb ; eco? irreflexive.
    for a in 0..n {
        for b in 0..n {
            if d.hb.has(a, b) && (a == b || d.eco.has(b, a)) {
                return Some("coherence");
            }
        }
    }
    // 2. Atomicity.
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    // 3. psc acyclic.
    let mut po_nloc = Rel::empty(n);
    let mut hb_loc = Rel::empty(n);
    for a in 0..n {
        for b in 0..n {
            if d.po.has(a, b) && !same_loc(&ev[a], &ev[b]) {
                po_nloc.add(a, b);
            }
            if d.hb.has(a, b) && same_loc(&ev[a], &ev[b]) {
                hb_loc.add(a, b);
            }
        }
    }
    let scb =
        d.po.union(&po_nloc.seq(&d.hb).seq(&po_nloc))
            .union(&hb_loc)
            .union(&d.mo)
            .union(&d.fr);
    // ([E^sc] ∪ [F^sc] ; hb?)  and  ([E^sc] ∪ hb? ; [F^sc])
    let mut left = Rel::empty(n);
    let mut right = Rel::empty(n);
    for a in 0..n {
        if is_sc(&ev[a]) {
            left.add(a, a);
            right.add(a, a);
        }
        if is_sc_fence(&ev[a]) {
            for b in 0..n {
                if d.hb.has(a, b) {
                    left.add(a, b);
                }
                if d.hb.has(b, a) {
                    right.add(b, a);
                }
            }
        }
    }
    let psc_base = left.seq(&scb).seq(&right);
    let hb_eco_hb = d.hb.seq(&d.eco).seq(&d.hb);
    let mut psc = psc_base;
    for a in 0..n {
        for b in 0..n {
            if is_sc_fence(&ev[a]) && is_sc_fence(&ev[b]) && (d.hb.has(a, b) || hb_eco_hb.has(a, b))
            {
                psc.add(a, b);
            }
        }
    }
    if !psc.acyclic() {
        return Some("psc");
    }
    None
}

/// SC (§3): acyclic(po ∪ rf ∪ mo ∪ fr), and atomicity.
fn sc_violation(_g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    if !atomicity_holds(d) {
        return Some("atomicity");
    }
    if !d.po.union(&d.rf).union(&d.mo).union(&d.fr).acyclic() {
        return Some("sc");
    }
    None
}

fn violation(model: Model, g: &ExecutionGraph, d: &Derived) -> Option<&'static str> {
    match model {
        Model::Rc11 => rc11_violation(g, d),
        Model::Sc => sc_violation(g, d),
    }
}

/// Data races: accesses to the same location from different non-init threads, at least one a
/// write, at least one non-atomic, unordered by hb.
fn races(g: &ExecutionGraph, d: &Derived) -> Vec<(usize, usize)> {
    let ev = &g.events;
    let n = ev.len();
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let (x, y) = (&ev[a], &ev[b]);
            if is_access(x)
                && is_access(y)
                && x.thread != INIT_THREAD
                && y.thread != INIT_THREAD
                && x.thread != y.thread
                && x.loc == y.loc
                && (is_write(x) || is_write(y))
                && (!ord_atomic(x.order) || !ord_atomic(y.order))
                && !d.hb.has(a, b)
                && !d.hb.has(b, a)
            {
                out.push((a, b));
            }
        }
    }
    out
}

fn failed_threads(g: &ExecutionGraph) -> Vec<usize> {
    (0..g.threads.len())
        .filter(|&t| matches!(g.threads[t].end, Some(ThreadEnd::Failed(_))))
        .collect()
}

/// The oracle's verdict on any graph: `Err(axiom)` or `Ok(buggy)`.
fn judge(model: Model, g: &ExecutionGraph) -> Result<bool, &'static str> {
    let po = program_order(g);
    let d = derive(g, &po);
    if let Some(v) = violation(model, g, &d) {
        return Err(v);
    }
    Ok(!failed_threads(g).is_empty() || !races(g, &d).is_empty())
}

// ---------------------------------------------------------------------------------------------
// Thread runs.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Finished,
    Failed,
    Stuck,
}

#[derive(Clone, Debug)]
struct OEvent {
    kind: EventKind,
    loc: Option<usize>,
    order: MemOrder,
    value: i64,
}

#[derive(Clone, Debug)]
struct Run {
    events: Vec<OEvent>,
    end: End,
    /// Joins met: (child, whether the child must have finished).
    joins: Vec<(usize, bool)>,
    /// Threads spawned (main only): (function, argument), thread ids 1, 2, ... in this order.
    spawns: Vec<(FuncId, i64)>,
}

const STEP_CAP: usize = 100_000;
const EVENT_CAP: usize = 60;

struct Walker<'a> {
    prog: &'a Program,
    func: FuncId,
    is_main: bool,
    dom: &'a [BTreeSet<i64>],
    out: Vec<Run>,
}

impl Walker<'_> {
    fn stop(&mut self, mut run: Run, end: End) {
        run.end = end;
        self.out.push(run);
    }

    fn go(&mut self, mut pc: usize, mut regs: Vec<i64>, mut run: Run, mut steps: usize) {
        let prog = self.prog;
        let dom = self.dom;
        let f = &prog.functions[self.func];
        loop {
            steps += 1;
            assert!(
                steps < STEP_CAP,
                "oracle: local loop in `{}` (more than {STEP_CAP} steps)",
                f.name
            );
            assert!(
                run.events.len() <= EVENT_CAP,
                "oracle: `{}` has runs with more than {EVENT_CAP} events",
                f.name
            );
            let Some(ins) = f.body.get(pc) else {
                return self.stop(run, End::Finished);
            };
            match ins {
                Instr::Assign { dst, val } => match val.eval(&regs) {
                    Ok(v) => {
                        regs[*dst] = v;
                        pc += 1;
                    }
                    Err(_) => return self.stop(run, End::Failed),
                },
                Instr::Assert { cond, .. } => match cond.eval(&regs) {
                    Ok(0) | Err(_) => return self.stop(run, End::Failed),
                    Ok(_) => pc += 1,
                },
                Instr::BranchIfZero { cond, target } => match cond.eval(&regs) {
                    Ok(0) => pc = *target,
                    Ok(_) => pc += 1,
                    Err(_) => return self.stop(run, End::Failed),
                },
                Instr::Jump { target } => pc = *target,
                Instr::Slot(_) => pc += 1,
                Instr::Return => return self.stop(run, End::Finished),
                Instr::Load { dst, loc, order } => {
                    for &v in &dom[*loc] {
                        let mut regs2 = regs.clone();
                        regs2[*dst] = v;
                        let mut run2 = run.clone();
                        run2.events.push(OEvent {
                            kind: EventKind::Read,
                            loc: Some(*loc),
                            order: *order,
                            value: v,
                        });
                        self.go(pc + 1, regs2, run2, steps);
                    }
                    return;
                }
                Instr::Store { loc, val, order } => {
                    let Ok(v) = val.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    run.events.push(OEvent {
                        kind: EventKind::Write,
                        loc: Some(*loc),
                        order: *order,
                        value: v,
                    });
                    pc += 1;
                }
                Instr::Fence { order } => {
                    run.events.push(OEvent {
                        kind: EventKind::Fence,
                        loc: None,
                        order: *order,
                        value: 0,
                    });
                    pc += 1;
                }
                Instr::Spawn { func, arg, dst } => {
                    assert!(self.is_main, "oracle: only main may spawn threads");
                    let Ok(a) = arg.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    let child = run.spawns.len() + 1;
                    run.spawns.push((*func, a));
                    run.events.push(OEvent {
                        kind: EventKind::Spawn { child },
                        loc: None,
                        order: MemOrder::NonAtomic,
                        value: 0,
                    });
                    if let Some(d) = dst {
                        regs[*d] = child as i64;
                    }
                    pc += 1;
                }
                Instr::Join { tid } => {
                    assert!(self.is_main, "oracle: only main may join threads");
                    let Ok(c) = tid.eval(&regs) else {
                        return self.stop(run, End::Failed);
                    };
                    if c < 0 || c as usize > run.spawns.len() {
                        // Not a thread handle: undefined behaviour.
                        return self.stop(run, End::Failed);
                    }
                    assert!(c != 0, "oracle: main joins itself");
                    let c = c as usize;
                    // The child did not finish: this thread waits forever.
                    let mut stuck = run.clone();
                    stuck.joins.push((c, false));
                    self.stop(stuck, End::Stuck);
                    // The child finished.
                    run.joins.push((c, true));
                    run.events.push(OEvent {
                        kind: EventKind::Join { child: c },
                        loc: None,
                        order: MemOrder::NonAtomic,
                        value: 0,
                    });
                    pc += 1;
                }
            }
        }
    }
}

fn thread_runs(
    prog: &Program,
    func: FuncId,
    arg: Option<i64>,
    is_main: bool,
    dom: &[BTreeSet<i64>],
) -> Vec<Run> {
    let f = &prog.functions[func];
    let mut regs = vec![0i64; f.reg_names.len()];
    if let (Some(p), Some(a)) = (f.param, arg) {
        regs[p] = a;
    }
    let mut w = Walker {
        prog,
        func,
        is_main,
        dom,
        out: Vec::new(),
    };
    let run = Run {
        events: Vec::new(),
        end: End::Finished,
        joins: Vec::new(),
        spawns: Vec::new(),
    };
    w.go(0, regs, run, 0);
    w.out
}

struct AllRuns {
    main: Vec<Run>,
    children: HashMap<(FuncId, i64), Vec<Run>>,
}

/// An upper bound on the number of write events of any execution, when no function has a
/// backward jump (every instruction then runs at most once per thread).
fn write_bound(prog: &Program) -> Option<usize> {
    let loop_free = prog.functions.iter().all(|f| {
        f.body.iter().enumerate().all(|(pc, i)| match i {
            Instr::Jump { target } | Instr::BranchIfZero { target, .. } => *target > pc,
            _ => true,
        })
    });
    let count = |f: &Function, pred: fn(&Instr) -> bool| f.body.iter().filter(|i| pred(i)).count();
    let stores = |f: &Function| count(f, |i| matches!(i, Instr::Store { .. }));
    let main = &prog.functions[prog.main];
    let max_child = prog.functions.iter().map(stores).max().unwrap_or(0);
    loop_free.then(|| stores(main) + count(main, |i| matches!(i, Instr::Spawn { .. })) * max_child)
}

/// Runs of every thread, with read values from the per-location value sets.
///
/// Round k's sets hold every value a write can have when its chain of value dependencies
/// (po ∪ rf paths between writes) has length ≤ k. The rounds stop at a fixpoint, or, for a
/// loop-free program, after as many rounds as an execution can have writes (a dependency chain
/// visits distinct writes because po ∪ rf is acyclic): e.g. `x = x + 1` never reaches a
/// fixpoint, but its real values have short chains.
fn all_runs(prog: &Program) -> AllRuns {
    let mut dom: Vec<BTreeSet<i64>> = prog
        .globals
        .iter()
        .map(|g| BTreeSet::from([g.init]))
        .collect();
    let rounds = write_bound(prog);
    for round in 0..=rounds.unwrap_or(8) {
        let main = thread_runs(prog, prog.main, None, true, &dom);
        let mut children = HashMap::new();
        for r in &main {
            for &(f, a) in &r.spawns {
                children
                    .entry((f, a))
                    .or_insert_with(|| thread_runs(prog, f, Some(a), false, &dom));
            }
        }
        let mut next = dom.clone();
        for r in main.iter().chain(children.values().flatten()) {
            for e in &r.events {
                if e.kind == EventKind::Write {
                    next[e.loc.unwrap()].insert(e.value);
                }
            }
        }
        if next == dom || Some(round) == rounds {
            return AllRuns { main, children };
        }
        dom = next;
    }
    panic!("oracle: the value sets of a program with loops do not converge");
}

// ---------------------------------------------------------------------------------------------
// Graph enumeration.
// ---------------------------------------------------------------------------------------------

/// All permutations of `v`.
fn permutations(v: &[usize]) -> Vec<Vec<usize>> {
    if v.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..v.len() {
        let mut rest = v.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// Advances an odometer with the given digit bases; false when it wrapped around.
fn advance(digits: &mut [usize], bases: &[usize]) -> bool {
    for i in 0..digits.len() {
        digits[i] += 1;
        if digits[i] < bases[i] {
            return true;
        }
        digits[i] = 0;
    }
    false
}

/// The graph skeleton (events and threads, no rf/mo yet) of one combination of runs.
fn skeleton(prog: &Program, main: &Run, kids: &[&Run]) -> ExecutionGraph {
    let init: Vec<i64> = prog.globals.iter().map(|g| g.init).collect();
    let mut g = ExecutionGraph::with_init(&init);
    let funcs: Vec<FuncId> = std::iter::once(prog.main)
        .chain(main.spawns.iter().map(|s| s.0))
        .collect();
    let runs: Vec<&Run> = std::iter::once(main).chain(kids.iter().copied()).collect();
    for (t, r) in runs.iter().enumerate() {
        g.threads.push(ThreadTrace {
            func: funcs[t],
            spawned_by: None,
            events: Vec::new(),
            slots: Vec::new(),
            end: Some(match r.end {
                End::Finished => ThreadEnd::Finished,
                End::Failed => ThreadEnd::Failed(0),
                End::Stuck => ThreadEnd::Stuck,
            }),
        });
    }
    let mut spawn_ev = vec![None; runs.len()];
    for (t, r) in runs.iter().enumerate() {
        for e in &r.events {
            let id = g.push(Event {
                thread: t,
                kind: e.kind,
                loc: e.loc,
                order: e.order,
                value: e.value,
                stmt: None,
                slot: None,
            });
            if let EventKind::Spawn { child } = e.kind {
                spawn_ev[child] = Some(id);
            }
        }
    }
    for (t, s) in spawn_ev.into_iter().enumerate() {
        g.threads[t].spawned_by = s;
    }
    g
}

/// Every consistent execution of `prog` under `model`: canonical key → (buggy, graph).
fn oracle(prog: &Program, model: Model) -> BTreeMap<String, (bool, ExecutionGraph)> {
    let runs = all_runs(prog);
    let mut out: BTreeMap<String, (bool, ExecutionGraph)> = BTreeMap::new();
    for main in &runs.main {
        // Candidate runs of each child, agreeing with main's joins.
        let mut cands: Vec<Vec<&Run>> = Vec::new();
        for (i, spawn) in main.spawns.iter().enumerate() {
            let c = i + 1;
            let list: Vec<&Run> = runs.children[spawn]
                .iter()
                .filter(|r| {
                    main.joins
                        .iter()
                        .filter(|j| j.0 == c)
                        .all(|&(_, fin)| (r.end == End::Finished) == fin)
                })
                .collect();
            cands.push(list);
        }
        if cands.iter().any(|l| l.is_empty()) {
            continue;
        }
        let bases: Vec<usize> = cands.iter().map(|l| l.len()).collect();
        let mut digits = vec![0; bases.len()];
        loop {
            let kids: Vec<&Run> = digits
                .iter()
                .enumerate()
                .map(|(i, &d)| cands[i][d])
                .collect();
            graphs_of_combination(prog, model, main, &kids, &mut out);
            if !advance(&mut digits, &bases) {
                break;
            }
        }
    }
    out
}

fn graphs_of_combination(
    prog: &Program,
    model: Model,
    main: &Run,
    kids: &[&Run],
    out: &mut BTreeMap<String, (bool, ExecutionGraph)>,
) {
    let mut g = skeleton(prog, main, kids);
    let n = g.events.len();
    let po = program_order(&g);
    let nlocs = prog.globals.len();
    let reads: Vec<usize> = (0..n).filter(|&e| is_read(&g.events[e])).collect();
    let sources: Vec<Vec<usize>> = reads
        .iter()
        .map(|&r| {
            (0..n)
                .filter(|&w| {
                    is_write(&g.events[w])
                        && g.events[w].loc == g.events[r].loc
                        && g.events[w].value == g.events[r].value
                })
                .collect()
        })
        .collect();
    if sources.iter().any(|s| s.is_empty()) {
        return;
    }
    let mo_perms: Vec<Vec<Vec<usize>>> = (0..nlocs)
        .map(|l| {
            let ws: Vec<usize> = (0..n)
                .filter(|&w| g.events[w].kind == EventKind::Write && g.events[w].loc == Some(l))
                .collect();
            permutations(&ws)
        })
        .collect();
    let rf_bases: Vec<usize> = sources.iter().map(|s| s.len()).collect();
    let mo_bases: Vec<usize> = mo_perms.iter().map(|p| p.len()).collect();
    let mut rf_digits = vec![0; reads.len()];
    loop {
        for (i, &r) in reads.iter().enumerate() {
            g.rf[r] = Some(sources[i][rf_digits[i]]);
        }
        // Cheap pre-filter: po ∪ rf must be acyclic under both models.
        let mut porf = po.clone();
        for &r in &reads {
            porf.add(g.rf[r].unwrap(), r);
        }
        if porf.acyclic() {
            let mut mo_digits = vec![0; nlocs];
            loop {
                for l in 0..nlocs {
                    let mut ws = vec![l];
                    ws.extend(&mo_perms[l][mo_digits[l]]);
                    g.mo[l] = ws;
                }
                let d = derive(&g, &po);
                if violation(model, &g, &d).is_none() {
                    let buggy = !failed_threads(&g).is_empty() || !races(&g, &d).is_empty();
                    let key = g.canonical_key();
                    if let Some((b, _)) = out.get(&key) {
                        assert_eq!(*b, buggy, "oracle produced one key twice:\n{key}");
                    }
                    out.insert(key, (buggy, g.clone()));
                }
                if !advance(&mut mo_digits, &mo_bases) {
                    break;
                }
            }
        }
        if !advance(&mut rf_digits, &rf_bases) {
            break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The explorer side and the comparison.
// ---------------------------------------------------------------------------------------------

struct Explored {
    graphs: BTreeMap<String, (bool, ExecutionGraph)>,
    duplicates: Vec<String>,
    executions: u64,
}

fn explorer(prog: &Program, model: Model) -> Explored {
    let mut graphs = BTreeMap::new();
    let mut duplicates = Vec::new();
    let stats = explore(prog, model, Limits::default(), |g| {
        let key = g.canonical_key();
        if graphs
            .insert(key.clone(), (!g.bugs.is_empty(), g.clone()))
            .is_some()
        {
            duplicates.push(key);
        }
        Control::Continue
    });
    assert!(
        stats.incomplete.is_none(),
        "explorer incomplete: {:?}",
        stats.incomplete
    );
    Explored {
        graphs,
        duplicates,
        executions: stats.executions,
    }
}

fn describe_bugs_oracle(g: &ExecutionGraph) -> String {
    let po = program_order(g);
    let d = derive(g, &po);
    format!(
        "failed threads {:?}, races {:?}",
        failed_threads(g),
        races(g, &d)
    )
}

/// Compares the oracle and the explorer on one program and model; returns the number of
/// executions, or a description of every disagreement.
fn compare(name: &str, prog: &Program, model: Model) -> Result<usize, String> {
    let want = oracle(prog, model);
    let got = explorer(prog, model);
    let mut msg = String::new();
    if !got.duplicates.is_empty() {
        let _ = writeln!(
            msg,
            "{} graph(s) visited more than once, e.g.:\n{}",
            got.duplicates.len(),
            got.duplicates[0]
        );
    }
    if got.executions as usize != got.graphs.len() + got.duplicates.len() {
        let _ = writeln!(
            msg,
            "stats.executions = {} but {} visits",
            got.executions,
            got.graphs.len() + got.duplicates.len()
        );
    }
    let missing: Vec<&String> = want
        .keys()
        .filter(|k| !got.graphs.contains_key(*k))
        .collect();
    let extra: Vec<&String> = got
        .graphs
        .keys()
        .filter(|k| !want.contains_key(*k))
        .collect();
    for k in missing.iter().take(4) {
        let g = &want[*k].1;
        let _ = writeln!(
            msg,
            "MISSING from the explorer (oracle: consistent, buggy = {}; explorer's own axioms \
             say {:?}):\n{k}",
            want[*k].0,
            model.violation(g)
        );
    }
    for k in extra.iter().take(4) {
        let g = &got.graphs[*k].1;
        let _ = writeln!(
            msg,
            "EXTRA in the explorer (oracle's axioms on it: {:?}; thread ends {:?}):\n{k}",
            judge(model, g),
            g.threads.iter().map(|t| t.end).collect::<Vec<_>>()
        );
    }
    let mut mismatched = 0;
    for (k, (b, g)) in &want {
        if let Some((b2, g2)) = got.graphs.get(k) {
            if b != b2 {
                mismatched += 1;
                if mismatched <= 4 {
                    let _ = writeln!(
                        msg,
                        "BUGGY MISMATCH: oracle {b} ({}), explorer {b2} ({:?}):\n{k}",
                        describe_bugs_oracle(g),
                        g2.bugs.iter().map(|b| &b.message).collect::<Vec<_>>()
                    );
                }
            }
        }
    }
    if msg.is_empty() {
        Ok(want.len())
    } else {
        Err(format!(
            "== {name} under {model}: oracle {} executions, explorer {} ({} missing, {} extra, {} \
             buggy mismatches)\n{msg}",
            want.len(),
            got.graphs.len(),
            missing.len(),
            extra.len(),
            mismatched
        ))
    }
}

fn parse(name: &str, src: &str) -> Program {
    match fensyn::frontend::parse_c(name, src) {
        Ok(p) => p,
        Err(d) => panic!("{name} does not parse: {d}"),
    }
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/litmus")
}

fn fixture(file: &str) -> Program {
    let path = fixture_dir().join(file);
    let src = std::fs::read_to_string(&path).unwrap();
    parse(&path.display().to_string(), &src)
}

/// Runs `compare` on each program under both models; fails with every disagreement at once.
fn check_all(progs: &[(String, Program)]) {
    let mut failures = Vec::new();
    for (name, prog) in progs {
        for model in [Model::Rc11, Model::Sc] {
            let t = Instant::now();
            match compare(name, prog, model) {
                Ok(n) => eprintln!("{name} [{model}]: {n} executions agree ({:?})", t.elapsed()),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests over the C front end.
// ---------------------------------------------------------------------------------------------

#[test]
fn litmus_fixtures_agree_with_the_oracle() {
    let mut files: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".c"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let progs: Vec<(String, Program)> = files.iter().map(|f| (f.clone(), fixture(f))).collect();
    check_all(&progs);
}

#[test]
fn published_counts() {
    for (file, n) in [
        ("sb.c", 4),
        ("sb_sc.c", 3),
        ("lb.c", 3),
        ("iriw.c", 16),
        ("2+2w.c", 4),
    ] {
        let prog = fixture(file);
        assert_eq!(
            oracle(&prog, Model::Rc11).len(),
            n,
            "oracle count of {file}"
        );
        let got = explorer(&prog, Model::Rc11);
        assert_eq!(got.executions, n as u64, "explorer count of {file}");
        assert_eq!(got.graphs.len(), n, "explorer distinct graphs of {file}");
    }
}

/// Textbook outcomes (execution counts) of litmus variants, from the oracle and the explorer.
#[test]
fn known_litmus_counts() {
    let inline = |name: &str| {
        inline_programs()
            .into_iter()
            .find(|p| p.0 == name)
            .unwrap()
            .1
    };
    let file = |f: &str| std::fs::read_to_string(fixture_dir().join(f)).unwrap();
    let cases: Vec<(&str, String, Model, usize)> = vec![
        // A release fence before the flag and an acquire fence after it synchronise.
        (
            "mp rel/acq fences",
            mp_fences("release", "acquire"),
            Model::Rc11,
            3,
        ),
        (
            "mp acq_rel fences",
            mp_fences("acq_rel", "acq_rel"),
            Model::Rc11,
            3,
        ),
        // Fences on the wrong sides do not.
        (
            "mp acq/rel fences",
            mp_fences("acquire", "release"),
            Model::Rc11,
            4,
        ),
        // SB needs a seq_cst fence on both sides (psc_F).
        (
            "sb sc/sc fences",
            sb_fences("seq_cst", "seq_cst"),
            Model::Rc11,
            3,
        ),
        (
            "sb sc/rel fences",
            sb_fences("seq_cst", "release"),
            Model::Rc11,
            4,
        ),
        (
            "sb acq_rel fences",
            sb_fences("acq_rel", "acq_rel"),
            Model::Rc11,
            4,
        ),
        // RC11 allows SB with seq_cst stores and relaxed loads.
        (
            "sb sc stores, rlx loads",
            sb_orders("seq_cst", "relaxed"),
            Model::Rc11,
            4,
        ),
        (
            "sb rel/acq",
            sb_orders("release", "acquire"),
            Model::Rc11,
            4,
        ),
        (
            "iriw + sc fences",
            inline("iriw_sc_fences"),
            Model::Rc11,
            15,
        ),
        ("rwc + sc fences", inline("rwc_sc_fences"), Model::Rc11, 7),
        ("lb with three threads", inline("lb3_cycle"), Model::Rc11, 7),
        ("wrc relaxed", file("wrc.c"), Model::Rc11, 8),
        ("wrc rel/acq", inline("wrc_relacq"), Model::Rc11, 7),
        ("sb under sc", file("sb.c"), Model::Sc, 3),
        ("iriw under sc", file("iriw.c"), Model::Sc, 15),
        ("2+2w under sc", file("2+2w.c"), Model::Sc, 3),
        ("mp under sc", file("mp.c"), Model::Sc, 3),
    ];
    for (name, src, model, n) in cases {
        let prog = parse(&format!("{name}.c"), &src);
        assert_eq!(
            oracle(&prog, model).len(),
            n,
            "oracle count of {name} under {model}"
        );
        let got = explorer(&prog, model);
        assert_eq!(
            got.executions, n as u64,
            "explorer count of {name} under {model}"
        );
    }
}

const HEADER: &str = "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n";

fn order_name(o: &str) -> String {
    format!("memory_order_{o}")
}

/// Message passing through relaxed accesses with a fence on each side.
fn mp_fences(fw: &str, fr: &str) -> String {
    format!(
        "{HEADER}atomic_int data;\natomic_int flag;\nint r1, r2;\n\
         void *writer(void *arg) {{\n\
             atomic_store_explicit(&data, 42, memory_order_relaxed);\n\
             atomic_thread_fence({fw});\n\
             atomic_store_explicit(&flag, 1, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         void *reader(void *arg) {{\n\
             r1 = atomic_load_explicit(&flag, memory_order_relaxed);\n\
             atomic_thread_fence({fr});\n\
             r2 = atomic_load_explicit(&data, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t w, r;\n\
             pthread_create(&w, NULL, writer, NULL);\n\
             pthread_create(&r, NULL, reader, NULL);\n\
             pthread_join(w, NULL);\n\
             pthread_join(r, NULL);\n\
             assert(!(r1 == 1 && r2 == 0));\n\
             return 0;\n}}\n",
        fw = order_name(fw),
        fr = order_name(fr)
    )
}

/// Store buffering with a fence between each thread's store and load.
fn sb_fences(f1: &str, f2: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
         void *t1(void *arg) {{\n\
             atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
             atomic_thread_fence({f1});\n\
             a = atomic_load_explicit(&y, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         void *t2(void *arg) {{\n\
             atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
             atomic_thread_fence({f2});\n\
             b = atomic_load_explicit(&x, memory_order_relaxed);\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t p1, p2;\n\
             pthread_create(&p1, NULL, t1, NULL);\n\
             pthread_create(&p2, NULL, t2, NULL);\n\
             pthread_join(p1, NULL);\n\
             pthread_join(p2, NULL);\n\
             assert(!(a == 0 && b == 0));\n\
             return 0;\n}}\n",
        f1 = order_name(f1),
        f2 = order_name(f2)
    )
}

/// Store buffering with the given store and load orders in both threads.
fn sb_orders(st: &str, ld: &str) -> String {
    format!(
        "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
         void *t1(void *arg) {{\n\
             atomic_store_explicit(&x, 1, {st});\n\
             a = atomic_load_explicit(&y, {ld});\n\
             return NULL;\n}}\n\
         void *t2(void *arg) {{\n\
             atomic_store_explicit(&y, 1, memory_order_seq_cst);\n\
             b = atomic_load_explicit(&x, {ld});\n\
             return NULL;\n}}\n\
         int main(void) {{\n\
             pthread_t p1, p2;\n\
             pthread_create(&p1, NULL, t1, NULL);\n\
             pthread_create(&p2, NULL, t2, NULL);\n\
             pthread_join(p1, NULL);\n\
             pthread_join(p2, NULL);\n\
             assert(!(a == 0 && b == 0));\n\
             return 0;\n}}\n",
        st = order_name(st),
        ld = order_name(ld)
    )
}

const FENCE_ORDERS: [&str; 4] = ["acquire", "release", "acq_rel", "seq_cst"];

#[test]
fn fences_of_every_order_agree_with_the_oracle() {
    let mut progs = Vec::new();
    for fw in FENCE_ORDERS {
        for fr in FENCE_ORDERS {
            progs.push((
                format!("mp_fence_{fw}_{fr}"),
                parse("mp.c", &mp_fences(fw, fr)),
            ));
            progs.push((
                format!("sb_fence_{fw}_{fr}"),
                parse("sb.c", &sb_fences(fw, fr)),
            ));
        }
    }
    for st in ["relaxed", "release", "seq_cst"] {
        for ld in ["relaxed", "acquire", "seq_cst"] {
            progs.push((format!("sb_{st}_{ld}"), parse("sb.c", &sb_orders(st, ld))));
        }
    }
    check_all(&progs);
}

/// Small programs exercising plain races, joins, three threads, `&&` and failures.
fn inline_programs() -> Vec<(&'static str, String)> {
    vec![
        (
            "plain_race",
            format!(
                "{HEADER}int x;\nint r;\n\
                 void *t1(void *arg) {{ x = 1; return NULL; }}\n\
                 void *t2(void *arg) {{ r = x; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "plain_ordered_by_join",
            format!(
                "{HEADER}int x = 5;\n\
                 void *t1(void *arg) {{ x = x + 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n x = 7;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n\
                 assert(x == 8);\n return 0;\n}}\n"
            ),
        ),
        (
            "plain_read_before_join",
            format!(
                "{HEADER}int x;\n\
                 void *t1(void *arg) {{ x = 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n int v = x;\n pthread_join(p1, NULL);\n\
                 assert(v == 0 || v == 1);\n return 0;\n}}\n"
            ),
        ),
        (
            "mp_plain_data_relacq",
            format!(
                "{HEADER}int data;\natomic_int flag;\nint r;\n\
                 void *w(void *arg) {{ data = 42; atomic_store_explicit(&flag, 1, memory_order_release); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   int f = atomic_load_explicit(&flag, memory_order_acquire);\n\
                   r = f && data == 42;\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, rd, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "mp_plain_data_relaxed",
            format!(
                "{HEADER}int data;\natomic_int flag;\nint r;\n\
                 void *w(void *arg) {{ data = 42; atomic_store_explicit(&flag, 1, memory_order_relaxed); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   int f = atomic_load_explicit(&flag, memory_order_relaxed);\n\
                   r = f && data == 42;\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, w, NULL);\n pthread_create(&p2, NULL, rd, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "and_with_loads",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\n\
                 void *t1(void *arg) {{\n\
                   atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_release);\n return NULL; }}\n\
                 void *t2(void *arg) {{\n\
                   assert(!(atomic_load_explicit(&y, memory_order_acquire) == 1 && \
                 atomic_load_explicit(&x, memory_order_relaxed) == 0));\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "three_writers_one_reader",
            format!(
                "{HEADER}atomic_int x;\nint a, b;\n\
                 void *w1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *w2(void *arg) {{ atomic_store_explicit(&x, 2, memory_order_release); return NULL; }}\n\
                 void *rd(void *arg) {{\n\
                   a = atomic_load_explicit(&x, memory_order_acquire);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed);\n return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, w1, NULL);\n pthread_create(&p2, NULL, w2, NULL);\n\
                 pthread_create(&p3, NULL, rd, NULL);\n atomic_store_explicit(&x, 3, memory_order_seq_cst);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 int f = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 assert(f != 1 || a != 2);\n return 0;\n}}\n"
            ),
        ),
        (
            "wrc_relacq",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_acquire);\n\
                   atomic_store_explicit(&y, 1, memory_order_release); return NULL; }}\n\
                 void *t3(void *arg) {{ b = atomic_load_explicit(&y, memory_order_acquire);\n\
                   c = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 assert(!(a == 1 && b == 1 && c == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "release_sequence",
            format!(
                "{HEADER}atomic_int x;\nint data;\nint r;\n\
                 void *t1(void *arg) {{ data = 1;\n\
                   atomic_store_explicit(&x, 1, memory_order_release);\n\
                   atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_acquire);\n\
                   r = v == 2 && data == 1; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "failed_child_main_stuck",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\n\
                 void *t1(void *arg) {{ assert(atomic_load_explicit(&x, memory_order_relaxed) == 1);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   int v = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p2, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "seq_cst_by_default",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store(&x, 1); a = atomic_load(&y); return NULL; }}\n\
                 void *t2(void *arg) {{ y = 1; b = x; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 0 && b == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "sc_fence_and_sc_access",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_seq_cst);\n\
                   a = atomic_load_explicit(&y, memory_order_seq_cst); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 0 && b == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "iriw_sc_fences",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c, d;\n\
                 void *w1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *w2(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *r1(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 void *r2(void *arg) {{ c = atomic_load_explicit(&y, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   d = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3, p4;\n\
                 pthread_create(&p1, NULL, w1, NULL);\n pthread_create(&p2, NULL, w2, NULL);\n\
                 pthread_create(&p3, NULL, r1, NULL);\n pthread_create(&p4, NULL, r2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 pthread_join(p3, NULL);\n pthread_join(p4, NULL);\n\
                 assert(!(a == 1 && b == 0 && c == 1 && d == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "lb3_cycle",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\natomic_int z;\n\
                 void *t1(void *arg) {{ int a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int b = atomic_load_explicit(&y, memory_order_relaxed);\n\
                   atomic_store_explicit(&z, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t3(void *arg) {{ int c = atomic_load_explicit(&z, memory_order_relaxed);\n\
                   atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 return 0;\n}}\n"
            ),
        ),
        (
            "main_runs_alongside",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ a = atomic_load_explicit(&y, memory_order_acquire);\n\
                   atomic_store_explicit(&x, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 2, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 atomic_store_explicit(&y, 1, memory_order_release);\n\
                 int m = atomic_load_explicit(&x, memory_order_acquire);\n\
                 pthread_join(p2, NULL);\n int m2 = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n assert(!(m == 1 && a == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "spawn_after_write",
            format!(
                "{HEADER}int data;\natomic_int x;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ int d = data;\n\
                   int v = atomic_load_explicit(&x, memory_order_relaxed);\n assert(d == 1); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n data = 1;\n\
                 pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p2, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "thread_without_events",
            format!(
                "{HEADER}atomic_int x;\n\
                 void *t1(void *arg) {{ int k = 3;\n assert(k == 3); return NULL; }}\n\
                 void *t2(void *arg) {{ int k = 4;\n assert(k == 3); return NULL; }}\n\
                 void *t3(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p3, NULL, t3, NULL);\n\
                 atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "or_and_conditional_with_loads",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{\n\
                   a = atomic_load_explicit(&x, memory_order_relaxed) || atomic_load_explicit(&y, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed) ? atomic_load_explicit(&x, memory_order_relaxed) : 5;\n\
                   return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n assert(b != 0);\n return 0;\n}}\n"
            ),
        ),
        (
            "rwc_sc_fences",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b, c;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_relaxed); return NULL; }}\n\
                 void *t3(void *arg) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);\n\
                   atomic_thread_fence(memory_order_seq_cst);\n\
                   c = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2, p3;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_create(&p3, NULL, t3, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n pthread_join(p3, NULL);\n\
                 assert(!(a == 1 && b == 0 && c == 0));\n return 0;\n}}\n"
            ),
        ),
        (
            "w_rw_sc_mixed",
            format!(
                "{HEADER}atomic_int x;\natomic_int y;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_seq_cst);\n\
                   atomic_store_explicit(&y, 1, memory_order_release); return NULL; }}\n\
                 void *t2(void *arg) {{ atomic_store_explicit(&y, 2, memory_order_seq_cst);\n\
                   atomic_thread_fence(memory_order_acq_rel);\n\
                   a = atomic_load_explicit(&x, memory_order_seq_cst);\n\
                   b = atomic_load_explicit(&y, memory_order_acquire); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 int fy = atomic_load_explicit(&y, memory_order_relaxed);\n return 0;\n}}\n"
            ),
        ),
        (
            "corr_same_thread",
            format!(
                "{HEADER}atomic_int x;\nint a, b;\n\
                 void *t1(void *arg) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);\n\
                   atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }}\n\
                 void *t2(void *arg) {{ a = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   b = atomic_load_explicit(&x, memory_order_relaxed); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1, p2;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_create(&p2, NULL, t2, NULL);\n\
                 int m = atomic_load_explicit(&x, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n pthread_join(p2, NULL);\n\
                 assert(!(a == 2 && b == 1));\n return 0;\n}}\n"
            ),
        ),
    ]
}

#[test]
fn inline_programs_agree_with_the_oracle() {
    let progs: Vec<(String, Program)> = inline_programs()
        .into_iter()
        .map(|(n, src)| (n.to_string(), parse(&format!("{n}.c"), &src)))
        .collect();
    check_all(&progs);
}

// ---------------------------------------------------------------------------------------------
// Hand-built IR (independent of the front end): thread arguments, loops, division by zero in a
// stored value.
// ---------------------------------------------------------------------------------------------

fn c(v: i64) -> Expr {
    Expr::Const(v)
}
fn r(i: usize) -> Expr {
    Expr::Reg(i)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn function(name: &str, nregs: usize, param: Option<usize>, body: Vec<Instr>) -> Function {
    Function {
        name: name.to_string(),
        span: Span::default(),
        param,
        reg_names: (0..nregs).map(|i| format!("r{i}")).collect(),
        stmt_of: vec![0; body.len()],
        body,
    }
}

fn ir_program(globals: &[(&str, bool, i64)], functions: Vec<Function>, main: FuncId) -> Program {
    let prog = Program {
        globals: globals
            .iter()
            .map(|&(name, atomic, init)| Global {
                name: name.to_string(),
                atomic,
                init,
                span: Span::default(),
            })
            .collect(),
        functions,
        main,
        stmts: vec![Stmt {
            func: main,
            kind: StmtKind::Local,
            span: Span::default(),
            order_span: None,
        }],
        slots: vec![Slot {
            func: main,
            place: SlotPlace::BlockEnd {
                after: None,
                close: Span::default(),
            },
        }],
    };
    prog.validate().unwrap();
    prog
}

fn ir_programs() -> Vec<(String, Program)> {
    use MemOrder::*;
    let load = |dst, loc, order| Instr::Load { dst, loc, order };
    let store = |loc, val, order| Instr::Store { loc, val, order };
    let spawn = |func, arg, dst| Instr::Spawn {
        func,
        arg,
        dst: Some(dst),
    };
    let join = |reg| Instr::Join { tid: r(reg) };
    let mut out = Vec::new();
    // One function run by two threads, told apart by their argument; main reads after joins.
    {
        let worker = function(
            "worker",
            2,
            Some(0),
            vec![
                store(0, r(0), Relaxed),
                load(1, 1, Acquire),
                store(1, bin(BinOp::Add, r(0), c(10)), Release),
            ],
        );
        let main = function(
            "main",
            4,
            None,
            vec![
                spawn(0, c(1), 0),
                spawn(0, c(2), 1),
                join(0),
                join(1),
                load(2, 0, Relaxed),
                load(3, 1, SeqCst),
                Instr::Assert {
                    cond: bin(BinOp::Ne, r(2), c(0)),
                    text: "r2 != 0".into(),
                },
                Instr::Slot(0),
            ],
        );
        out.push((
            "ir_thread_args".to_string(),
            ir_program(&[("x", true, 0), ("y", true, 0)], vec![worker, main], 1),
        ));
    }
    // A bounded loop with a branch on a loaded value and a Return in the middle.
    {
        let looper = function(
            "looper",
            2,
            None,
            vec![
                // r0 = 0; while (r0 < 2) { r1 = load x; if (r1 == 5) return; store x r0+1; r0++ }
                Instr::Assign { dst: 0, val: c(0) },
                Instr::BranchIfZero {
                    cond: bin(BinOp::Lt, r(0), c(2)),
                    target: 9,
                },
                load(1, 0, Relaxed),
                Instr::BranchIfZero {
                    cond: bin(BinOp::Eq, r(1), c(5)),
                    target: 5,
                },
                Instr::Return,
                store(0, bin(BinOp::Add, r(0), c(1)), Relaxed),
                Instr::Assign {
                    dst: 0,
                    val: bin(BinOp::Add, r(0), c(1)),
                },
                Instr::Jump { target: 1 },
                Instr::Return,
                Instr::Fence { order: AcqRel },
            ],
        );
        let main = function(
            "main",
            2,
            None,
            vec![
                spawn(0, c(0), 0),
                store(0, c(5), Release),
                join(0),
                load(1, 0, NonAtomic),
            ],
        );
        out.push((
            "ir_loop".to_string(),
            ir_program(&[("x", false, 0)], vec![looper, main], 1),
        ));
    }
    // Division by zero inside a stored value: the thread must fail (IR: "Evaluation can fail
    // only by division by zero"; the thread stops).
    {
        let t = function(
            "t",
            1,
            None,
            vec![
                load(0, 0, Relaxed),
                store(1, bin(BinOp::Div, c(10), r(0)), Relaxed),
            ],
        );
        let main = function(
            "main",
            1,
            None,
            vec![spawn(0, c(0), 0), store(0, c(2), Relaxed)],
        );
        out.push((
            "ir_div_zero_in_store".to_string(),
            ir_program(&[("x", true, 0), ("y", true, 0)], vec![t, main], 1),
        ));
    }
    // Division by zero in a spawn argument (when main reads x = 0) and a join handle that is
    // not a thread (undefined behaviour).
    {
        let t = function("t", 1, Some(0), vec![store(0, r(0), Relaxed)]);
        let main = function(
            "main",
            3,
            None,
            vec![
                spawn(0, c(1), 0),
                load(1, 0, Relaxed),
                spawn(0, bin(BinOp::Div, c(6), r(1)), 2),
                join(2),
                Instr::Join { tid: c(7) },
            ],
        );
        out.push((
            "ir_bad_spawn_and_join".to_string(),
            ir_program(&[("x", true, 0)], vec![t, main], 1),
        ));
    }
    out
}

#[test]
fn hand_built_ir_agrees_with_the_oracle() {
    let progs: Vec<(String, Program)> = ir_programs()
        .into_iter()
        .filter(|p| p.0 != "ir_div_zero_in_store")
        .collect();
    check_all(&progs);
}

/// Division by zero in the value of a store: the C statement `q = 10 / v;` lowers to
/// `Store { q, 10 / %t }`; when `v == 0` the thread must fail (undefined behaviour), as it does
/// when the division sits in an `Assign` (see `division_by_zero_in_a_local`). Main does not join
/// the thread, so this is independent of `a_failing_child_joined_by_main_is_visited`.
#[test]
fn division_by_zero_in_a_stored_value_fails_the_thread() {
    let src = format!(
        "{HEADER}atomic_int x;\nint q;\n\
         void *t1(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed);\n\
           q = 10 / v; return NULL; }}\n\
         int main(void) {{\n pthread_t p1;\n\
         pthread_create(&p1, NULL, t1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
         return 0;\n}}\n"
    );
    let mut progs = vec![(
        "division_by_zero_in_store.c".to_string(),
        parse("division_by_zero_in_store.c", &src),
    )];
    progs.extend(
        ir_programs()
            .into_iter()
            .filter(|p| p.0 == "ir_div_zero_in_store"),
    );
    check_all(&progs);
}

/// A child that fails (assertion or division by zero) while main waits in `pthread_join` for
/// it: main must get stuck and the execution must be visited (it is buggy).
fn failing_child_programs() -> Vec<(&'static str, String)> {
    vec![
        (
            "child_assert_fails_on_a_load",
            format!(
                "{HEADER}atomic_int x;\n\
                 void *t1(void *arg) {{ assert(atomic_load_explicit(&x, memory_order_relaxed) == 1); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "child_assert_fails_without_events",
            format!(
                "{HEADER}\n\
                 void *t1(void *arg) {{ int k = 0;\n assert(k); return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n pthread_join(p1, NULL);\n return 0;\n}}\n"
            ),
        ),
        (
            "division_by_zero_in_a_local",
            format!(
                "{HEADER}atomic_int x;\nint q;\n\
                 void *t1(void *arg) {{ int v = atomic_load_explicit(&x, memory_order_relaxed);\n\
                   int w = 10 / v;\n q = w; return NULL; }}\n\
                 int main(void) {{\n pthread_t p1;\n\
                 pthread_create(&p1, NULL, t1, NULL);\n atomic_store_explicit(&x, 2, memory_order_relaxed);\n\
                 pthread_join(p1, NULL);\n int f = q;\n return 0;\n}}\n"
            ),
        ),
    ]
}

#[test]
fn a_failing_child_joined_by_main_is_visited() {
    let progs: Vec<(String, Program)> = failing_child_programs()
        .into_iter()
        .map(|(n, src)| (n.to_string(), parse(&format!("{n}.c"), &src)))
        .collect();
    check_all(&progs);
}

// ---------------------------------------------------------------------------------------------
// Random small IR programs (deterministic generator).
// ---------------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// A random loop-free program: 1–4 children of 1–4 memory instructions each (loads, stores of
/// constants or of a loaded value or the thread argument plus one, fences), spawned and joined
/// (in a random order) by main, which also accesses memory between them and may assert on what
/// it read. Some children assert on what they read; those are not joined.
fn random_program(rng: &mut Rng) -> Program {
    use MemOrder::*;
    let nlocs = 2 + rng.below(2);
    let atomic: Vec<bool> = (0..nlocs).map(|l| l == 0 || rng.below(3) != 0).collect();
    let access = |rng: &mut Rng, regs: &mut usize, loaded: &mut Vec<usize>| -> Instr {
        let loc = rng.below(nlocs);
        let k = rng.below(9);
        if k < 4 {
            let order = if atomic[loc] {
                rng.pick(&[Relaxed, Acquire, SeqCst])
            } else {
                NonAtomic
            };
            let dst = *regs;
            *regs += 1;
            loaded.push(dst);
            Instr::Load { dst, loc, order }
        } else if k < 8 {
            let order = if atomic[loc] {
                rng.pick(&[Relaxed, Release, SeqCst])
            } else {
                NonAtomic
            };
            let val = if !loaded.is_empty() && rng.below(3) == 0 {
                bin(BinOp::Add, r(rng.pick(loaded)), c(1))
            } else {
                c(1 + rng.below(2) as i64)
            };
            Instr::Store { loc, val, order }
        } else {
            Instr::Fence {
                order: rng.pick(&[Acquire, Release, AcqRel, SeqCst]),
            }
        }
    };
    let nthreads = 1 + rng.below(4);
    let mut functions = Vec::new();
    let mut may_fail = Vec::new();
    let mut args = Vec::new();
    for t in 0..nthreads {
        let len = 1 + rng.below([4, 4, 3, 2][nthreads - 1]);
        // Some children take their argument (register 0) and may store it plus one.
        let param = rng.below(3) == 0;
        let (mut regs, mut loaded) = if param { (1, vec![0]) } else { (0, Vec::new()) };
        let mut body: Vec<Instr> = (0..len)
            .map(|_| access(rng, &mut regs, &mut loaded))
            .collect();
        // Some children assert on a value they read; main never joins those (a failing child
        // that main joins is covered by `a_failing_child_joined_by_main_is_visited`).
        let fails = loaded.len() > usize::from(param) && rng.below(4) == 0;
        if fails {
            let reg = *loaded.last().unwrap();
            let at = body.len() - rng.below(2).min(body.len() - 1);
            let at = at.max(
                body.iter()
                    .position(|i| matches!(i, Instr::Load { dst, .. } if *dst == reg))
                    .unwrap()
                    + 1,
            );
            body.insert(
                at,
                Instr::Assert {
                    cond: bin(BinOp::Ne, r(reg), c(rng.below(2) as i64)),
                    text: "child".into(),
                },
            );
        }
        may_fail.push(fails);
        args.push(5 + t as i64);
        functions.push(function(
            &format!("t{t}"),
            regs.max(1),
            param.then_some(0),
            body,
        ));
    }
    // Main: registers 0..nthreads hold the handles.
    let (mut regs, mut loaded) = (nthreads, Vec::new());
    let mut body = Vec::new();
    let mut main_accesses = rng.below(4);
    for t in 0..nthreads {
        body.push(Instr::Spawn {
            func: t,
            arg: c(args[t]),
            dst: Some(t),
        });
        if main_accesses > 0 && rng.below(2) == 0 {
            body.push(access(rng, &mut regs, &mut loaded));
            main_accesses -= 1;
        }
    }
    let mut order: Vec<usize> = (0..nthreads).filter(|&t| !may_fail[t]).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    for t in order {
        body.push(Instr::Join { tid: r(t) });
        if main_accesses > 0 && rng.below(2) == 0 {
            body.push(access(rng, &mut regs, &mut loaded));
            main_accesses -= 1;
        }
    }
    if !loaded.is_empty() && rng.below(2) == 0 {
        let at = rng.below(body.len() + 1).max(
            body.iter()
                .position(|i| matches!(i, Instr::Load { dst, .. } if *dst == loaded[0]))
                .unwrap()
                + 1,
        );
        body.insert(
            at,
            Instr::Assert {
                cond: bin(BinOp::Ne, r(loaded[0]), c(rng.below(3) as i64)),
                text: "random".into(),
            },
        );
    }
    functions.push(function("main", regs, None, body));
    let globals: Vec<(String, bool, i64)> = (0..nlocs)
        .map(|l| (format!("g{l}"), atomic[l], 0))
        .collect();
    let globals: Vec<(&str, bool, i64)> =
        globals.iter().map(|g| (g.0.as_str(), g.1, g.2)).collect();
    ir_program(&globals, functions, nthreads)
}

#[test]
fn random_programs_agree_with_the_oracle() {
    // BRUTEFORCE_RANDOM=<count> and BRUTEFORCE_SEED=<n> run a longer campaign.
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut rng = Rng(env("BRUTEFORCE_SEED").unwrap_or(0x5eed_f00d_1234_5678) | 1);
    let count = env("BRUTEFORCE_RANDOM").unwrap_or(400);
    let t = Instant::now();
    let mut failures = Vec::new();
    let mut total = 0;
    for i in 0..count {
        let prog = random_program(&mut rng);
        for model in [Model::Rc11, Model::Sc] {
            match compare(&format!("random #{i}"), &prog, model) {
                Ok(n) => total += n,
                Err(e) => failures.push(format!("{e}program: {:#?}", prog.functions)),
            }
        }
    }
    eprintln!(
        "{count} random programs, {total} executions agree ({:?})",
        t.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} disagreement(s):\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
