//! Spin passes (issue 23): which passes through a loop cannot matter, as a property of the IR.
//!
//! **The rule** (part of the IR's semantics: the explorer and the brute-force oracle both
//! apply it). The *head* of a loop is the instruction after one of its [`Instr::LoopEnter`]s
//! (its condition for `while` and `for`, its `LoopIter` for `do` and `goto` loops): control
//! falls into it from the `LoopEnter` and comes back to it by jumps. A thread that arrives at
//! a head remembers the pc, the values of the registers *strongly live* there
//! ([`SpinInfo::head`]) and how many events it has; the loop's `LoopEnter` forgets that.
//! When it arrives at the same head again by a jump and
//!
//! 1. the strongly live registers hold the same values as at the previous arrival, and
//! 2. every event the thread added since that arrival is a fence or a read of a global
//!    location that no write can race with ([`SpinInfo::spin_safe`]) — a failed
//!    compare-and-swap is such a read; a store, a successful RMW, an allocation, a free, a
//!    spawn, a join or a nondeterministic choice is not —,
//!
//! the pass through the loop that just ended is a *spin*: the thread blocks (as a false
//! `assume` would, GenMC's spin-assume), whatever the unroll bound. The first pass of a
//! `while (!atomic_load(&f)) backoff++;` that reads 0 is one (`backoff` is not strongly live:
//! it only feeds its own increment); so is a failed `while (!cas(&x, &r, 1)) r = 0;` attempt
//! (`r` is 0 again at the head) and a `do { v = load(&x); } while (v != 1);` poll (`v` is dead
//! at the head). A loop whose strongly live state changes in every pass (a counter the code
//! after the loop reads, `while (!cas(&x, &r, r + 1));`) or that writes in every pass is
//! unrolled up to `--unroll` as before; a bounded counter (`if (n < 4) n++;`) spins once it
//! stops changing.
//!
//! **Why it loses nothing.** Take any execution in which some pass through the loop is a
//! spin by this rule, and delete that pass's events (reads and fences). What remains is an
//! execution of the program: the thread is back at the same head with the same
//! strongly live registers, so it goes on exactly as it did (a register that is not strongly
//! live never reaches an event, a branch, an assertion, a check, an assume or the thread's
//! result: its value cannot change what the thread does). It is consistent (deleting reads
//! and fences only removes `rf`, `fr`, `sw`, `hb`, `psc` and hardware-order edges, and every
//! axiom is an acyclicity or an emptiness), its assertion and check failures are the same
//! (the same values reach them), and its races and memory errors are a superset of those of the other events (hb only
//! shrank). The deleted reads had no race and no memory error of their own: they read global
//! locations (never freed) that no write racing with them exists for (an atomic read: no
//! non-atomic write after main's first spawn; a plain read: no write at all after it).
//! Repeating, every execution maps to one without spins, which the explorer visits (within
//! the unroll bound for the passes that are not spins); a spin pass itself is
//! explored before the thread blocks, so a bug found *inside* it (an assertion on a value it
//! read, an out-of-bounds address) is found there. The same argument holds after fences are
//! added (synthesis): the fenced execution minus the spin's events is a fenced execution.
//! Robustness (`Goal::Sc`) is the exception: deleting reads can make a non-SC execution SC,
//! so the explorer does not apply the rule there.
//!
//! **Zero-net-effect passes** (ZNE, as in GenMC's SAVer; models `rc11` and `sc` only). Condition
//! 2 also admits RMW writes (a successful `fetch_op`, exchange or compare-and-swap) when, for
//! every location `x` the pass writes, with `w1 … wk` the pass's writes to `x` in program order:
//!
//! a. each `wi` is an RMW's write, and for `i ≥ 2` the RMW of `wi` reads `wi-1` (rf);
//! b. `wk` writes the value the RMW of `w1` read (the pass gives `x` back as it found it);
//! c. no non-atomic access to `x` may happen after main's first spawn, and when `k ≥ 2` no
//!    read but an RMW's may either (no load, no compare-and-swap: [`SpinInfo::zne_safe`]).
//!
//! A `fetch_add(&x, 1); fetch_sub(&x, 1);` retry whose `fetch_sub` reads its own `fetch_add`
//! qualifies; one that another thread's RMW came between does not (a.), nor does an exchange
//! writing another value (b.). Condition a. depends on rf, which a backward revisit of a read
//! of the pass changes — that read's later events are deleted and the arrival is judged
//! again, as for a spin.
//!
//! *Why deleting such a pass loses nothing.* Let `s` be what `w1`'s RMW read (`s` is
//! immediately mo-before `w1`, and by a. `w1 … wk` are consecutive in mo). By c. and
//! atomicity, the only events outside the pass that read a `wi` read `wk` (an intermediate
//! `wi` is read by `wi+1`'s RMW, and no load exists that could read it). Delete the pass and
//! let every reader of `wk` read `s` instead: the same value (b.), so every remaining event
//! computes what it did. The graph stays consistent: mo restricted stays total and an RMW
//! that read `wk` now reads `s`, its new immediate mo-predecessor (atomicity); `s` was
//! `eco`-before those readers already (`s mo wk rf r`), and their `fr` targets are the same
//! writes (those mo-after `wk`), so `eco` only shrinks; `wk` continued `s`'s release
//! sequences (an RMW chain), so `sw` from them is kept while `sw` from the pass's own
//! releases is lost: `hb` only shrinks. Coherence, atomicity, RC11's psc (built from `hb`,
//! `mo`, `fr`, `po`), SC's `po ∪ rf ∪ mo ∪ fr` (the new `s rf r` is implied by
//! `s mo wk rf r`) and `po ∪ rf` acyclicity all survive. Assertions see the same values; the
//! other events' races are a superset (hb shrank); the pass's own accesses race with nothing
//! (c.: every access to `x` is atomic, its reads are spin-safe) and touch no freed memory
//! (globals only). The final value of `x` is the same (`s` has `wk`'s value). The c11 model
//! (its total order on seq_cst events) and the hardware models are left out: the argument
//! above was not made for their axioms. So, as for spins, every execution maps to one without
//! zero-net-effect passes and with every bug it had; the pass itself was explored before the
//! thread blocked. What condition c. excludes: a load that could read an intermediate value
//! (`x` at 2 between `fetch_add` and `fetch_sub`) sees something no execution without the
//! pass shows — such a pass is a real observation, explored on (fixtures/loops/zne_observed.c
//! shows one through an RMW, which breaks a.).

use super::{Addr, Expr, FuncId, Instr, Loc, MemOrder, Program, Reg};
use std::collections::BTreeMap;

/// What the spin rule needs to know of a program (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct SpinInfo {
    /// Per function, the loop heads: head pc → (loop id, its strongly live registers).
    heads: Vec<BTreeMap<usize, (usize, Vec<Reg>)>>,
    /// Per function, the `Assume` of each await loop → the loop's id (see [`SpinInfo::awaits`]).
    awaits: Vec<BTreeMap<usize, usize>>,
    /// Per global location: some write may reach it after main's first spawn.
    written: Vec<bool>,
    /// Per global location: some non-atomic write may reach it after main's first spawn.
    na_written: Vec<bool>,
    /// Per global location: some non-atomic read may reach it after main's first spawn.
    na_read: Vec<bool>,
    /// Per global location: some read that is not an RMW's (a load, or a compare-and-swap,
    /// which reads when it fails) may reach it after main's first spawn.
    observed: Vec<bool>,
    /// Statements with a read whose value may matter: a load or RMW whose destination is
    /// strongly live after it (in some function the statement's code is in), or a
    /// compare-and-swap (its outcome decides what it writes).
    used_reads: std::collections::BTreeSet<super::StmtId>,
}

impl SpinInfo {
    pub fn new(prog: &Program) -> SpinInfo {
        let lives: Vec<Vec<Vec<Reg>>> = prog
            .functions
            .iter()
            .map(|f| strongly_live(&f.body, f.result))
            .collect();
        let heads = prog
            .functions
            .iter()
            .zip(&lives)
            .map(|(f, all)| {
                f.body
                    .iter()
                    .enumerate()
                    .filter_map(|(pc, i)| match i {
                        Instr::LoopEnter { id } if pc + 1 < f.body.len() => {
                            Some((pc + 1, (*id, all[pc + 1].clone())))
                        }
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let awaits = prog
            .functions
            .iter()
            .map(|f| await_loops(&f.body))
            .collect();
        let n = prog.globals.len();
        let mut info = SpinInfo {
            heads,
            awaits,
            written: vec![false; n],
            na_written: vec![false; n],
            na_read: vec![false; n],
            observed: vec![false; n],
            used_reads: used_reads(prog, &lives),
        };
        for (fid, f) in prog.functions.iter().enumerate() {
            let after_spawn = if fid == prog.main {
                after_spawn(&f.body)
            } else {
                vec![true; f.body.len()]
            };
            for (pc, ins) in f.body.iter().enumerate() {
                if after_spawn[pc] {
                    info.note_write(ins);
                    info.note_read(ins);
                }
            }
        }
        info
    }

    /// When `pc` of `func` is a loop head: the loop's id and the registers strongly live
    /// there (sorted).
    pub fn head(&self, func: FuncId, pc: usize) -> Option<(usize, &[Reg])> {
        let (id, live) = self.heads.get(func)?.get(&pc)?;
        Some((*id, live.as_slice()))
    }

    /// When the `Assume` at `pc` of `func` is an await loop's (`while (!flag);` lowered to a
    /// `LoopEnter`, the condition's reads and an `Assume` of its exit condition): the loop's id.
    /// A thread blocked there spins forever in that loop, as one blocked by the spin rule; a
    /// false `assume` of the program's own is not a loop.
    pub fn awaits(&self, func: FuncId, pc: usize) -> Option<usize> {
        self.awaits.get(func)?.get(&pc).copied()
    }

    /// May a spin pass's read of `loc` (atomic or not) be deleted: `loc` is a global
    /// (never freed) and no write that could race with the read may reach it after main's
    /// first spawn (a non-atomic one for an atomic read, any for a plain read).
    pub fn spin_safe(&self, loc: Loc, atomic: bool) -> bool {
        let racy = if atomic {
            self.na_written.get(loc)
        } else {
            self.written.get(loc)
        };
        racy == Some(&false)
    }

    /// May a zero-net-effect pass's writes to `loc` be deleted (see the module doc): `loc` is
    /// a global that no non-atomic access may reach after main's first spawn (nothing races
    /// with the pass's RMWs), and, for a pass with several writes to it (`chain`), no read
    /// but an RMW's may reach it then either (nobody can read an intermediate value).
    pub fn zne_safe(&self, loc: Loc, chain: bool) -> bool {
        let flag = |v: &Vec<bool>| v.get(loc) == Some(&false);
        flag(&self.na_written) && flag(&self.na_read) && (!chain || flag(&self.observed))
    }

    /// Whether some read of statement `stmt` may matter to what its thread does (see
    /// `used_reads`): when not, the values its reads return are never used.
    pub fn read_value_used(&self, stmt: super::StmtId) -> bool {
        self.used_reads.contains(&stmt)
    }

    /// Records the global locations instruction `ins` may read other than as an RMW.
    fn note_read(&mut self, ins: &Instr) {
        let (addr, na) = match ins {
            Instr::Load { loc, order, .. } => (loc, *order == MemOrder::NonAtomic),
            Instr::Cas { loc, .. } => (loc, false),
            _ => return,
        };
        for l in global_range(addr, self.observed.len()) {
            self.observed[l] = true;
            self.na_read[l] |= na;
        }
    }

    /// Records the global locations instruction `ins` may write.
    fn note_write(&mut self, ins: &Instr) {
        let (addr, na) = match ins {
            Instr::Store { loc, order, .. } => (loc, *order == MemOrder::NonAtomic),
            Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => (loc, false),
            _ => return,
        };
        for l in global_range(addr, self.written.len()) {
            self.written[l] = true;
            self.na_written[l] |= na;
        }
    }
}

/// The statements with a read whose value may matter (`SpinInfo::used_reads`), given each
/// function's strong liveness per pc.
fn used_reads(
    prog: &Program,
    lives: &[Vec<Vec<Reg>>],
) -> std::collections::BTreeSet<super::StmtId> {
    let mut out = std::collections::BTreeSet::new();
    for (f, live) in prog.functions.iter().zip(lives) {
        for (pc, ins) in f.body.iter().enumerate() {
            let dst = match ins {
                Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => *dst,
                Instr::Cas { .. } => {
                    out.insert(f.stmt_of[pc]);
                    continue;
                }
                _ => continue,
            };
            let after = match live.get(pc + 1) {
                Some(l) => l.contains(&dst),
                None => f.result == Some(dst),
            };
            if after {
                out.insert(f.stmt_of[pc]);
            }
        }
    }
    out
}

/// The global locations (of `n`) an address may reach.
fn global_range(addr: &Addr, n: usize) -> std::ops::Range<usize> {
    match addr {
        Addr::Fixed(l) => (*l).min(n)..(*l + 1).min(n),
        Addr::Computed { lo, hi, .. } => (*lo).min(n)..(*hi).min(n),
        // Objects allocated at run time: never a global.
        Addr::Within { .. } => 0..0,
    }
}

/// The await loops of a body: a loop entered (`LoopEnter`) that never starts an iteration
/// (no `LoopIter` of its id) is an await loop, whose `Assume` is the first one after its
/// entry (the condition between them only reads, computes and branches forward).
fn await_loops(body: &[Instr]) -> BTreeMap<usize, usize> {
    let iterated: std::collections::BTreeSet<usize> = body
        .iter()
        .filter_map(|i| match i {
            Instr::LoopIter { id } => Some(*id),
            _ => None,
        })
        .collect();
    let mut out = BTreeMap::new();
    for (pc, ins) in body.iter().enumerate() {
        let Instr::LoopEnter { id } = ins else {
            continue;
        };
        if iterated.contains(id) {
            continue;
        }
        let assume = (pc + 1..body.len()).find(|&a| matches!(body[a], Instr::Assume { .. }));
        if let Some(a) = assume {
            out.insert(a, *id);
        }
    }
    out
}

/// The successors of the instruction at `pc`; `body.len()` (past the last instruction) is the
/// thread's end, as a `Return` is. Empty after `Exit` (the program ends).
fn successors(body: &[Instr], pc: usize) -> Vec<usize> {
    let end = body.len();
    match &body[pc] {
        Instr::Jump { target } => vec![(*target).min(end)],
        Instr::BranchIfZero { target, .. } => vec![pc + 1, (*target).min(end)],
        Instr::Return => vec![end],
        Instr::Exit | Instr::Cut => vec![],
        _ => vec![pc + 1],
    }
}

/// Per pc of main, whether a path from the start to it passes a `Spawn` (another thread may
/// then run). A write at a pc that none does is hb-before every other thread's events.
fn after_spawn(body: &[Instr]) -> Vec<bool> {
    let mut seen = vec![false; body.len()];
    let mut stack: Vec<usize> = (0..body.len())
        .filter(|&pc| matches!(body[pc], Instr::Spawn { .. }))
        .flat_map(|pc| successors(body, pc))
        .collect();
    while let Some(pc) = stack.pop() {
        if pc < body.len() && !seen[pc] {
            seen[pc] = true;
            stack.extend(successors(body, pc));
        }
    }
    seen
}

/// The registers an expression reads.
fn uses(e: &Expr, out: &mut Vec<Reg>) {
    match e {
        Expr::Const(_) => {}
        Expr::Reg(r) => out.push(*r),
        Expr::Unary(_, a) => uses(a, out),
        Expr::Binary(_, a, b) => {
            uses(a, out);
            uses(b, out);
        }
    }
}

/// Can evaluating `e` fail (a division or remainder by a value that is not a constant other
/// than zero)? Its failure is observable even when its value is not.
fn may_fail(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Reg(_) => false,
        Expr::Unary(_, a) => may_fail(a),
        Expr::Binary(op, a, b) => {
            let div = matches!(op, super::BinOp::Div | super::BinOp::Rem)
                && !matches!(**b, Expr::Const(k) if k != 0);
            div || may_fail(a) || may_fail(b)
        }
    }
}

/// What an address reads (its pointer and bounds expressions).
fn addr_uses(a: &Addr, out: &mut Vec<Reg>) {
    match a {
        Addr::Fixed(_) => {}
        Addr::Computed { ptr, .. } => uses(ptr, out),
        Addr::Within { ptr, base, .. } => {
            uses(ptr, out);
            uses(base, out);
        }
    }
}

/// The registers instruction `ins` defines and those it needs whatever happens to its
/// definitions (`None` for an `Assign`, whose operands are needed only when its destination
/// is live or its evaluation may fail).
fn def_use(ins: &Instr) -> (Vec<Reg>, Option<Vec<Reg>>) {
    let mut u = Vec::new();
    let defs = match ins {
        Instr::Assign { dst, val } => {
            if may_fail(val) {
                uses(val, &mut u);
                return (vec![*dst], Some(u));
            }
            return (vec![*dst], None);
        }
        Instr::Load { dst, loc, .. } => {
            addr_uses(loc, &mut u);
            vec![*dst]
        }
        Instr::Store { loc, val, .. } => {
            addr_uses(loc, &mut u);
            uses(val, &mut u);
            vec![]
        }
        Instr::Rmw { dst, loc, val, .. } => {
            addr_uses(loc, &mut u);
            uses(val, &mut u);
            vec![*dst]
        }
        Instr::Cas {
            ok,
            old,
            loc,
            expected,
            desired,
            ..
        } => {
            addr_uses(loc, &mut u);
            uses(expected, &mut u);
            uses(desired, &mut u);
            vec![*ok, *old]
        }
        Instr::Assume { cond }
        | Instr::Assert { cond, .. }
        | Instr::Check { cond, .. }
        | Instr::BranchIfZero { cond, .. } => {
            uses(cond, &mut u);
            vec![]
        }
        Instr::Spawn { arg, dst, .. } => {
            uses(arg, &mut u);
            dst.iter().copied().collect()
        }
        Instr::Join { tid, dst } => {
            uses(tid, &mut u);
            dst.iter().copied().collect()
        }
        Instr::Alloc { dst, count, .. } => {
            if let Some(c) = count {
                uses(c, &mut u);
            }
            vec![*dst]
        }
        Instr::Free { ptr, .. } => {
            uses(ptr, &mut u);
            vec![]
        }
        Instr::ObjectCells { dst, ptr } => {
            uses(ptr, &mut u);
            vec![*dst]
        }
        Instr::Nondet { dst, .. } | Instr::ThreadId { dst } => vec![*dst],
        Instr::LoopEnter { .. }
        | Instr::LoopIter { .. }
        | Instr::Fence { .. }
        | Instr::Jump { .. }
        | Instr::Slot(_)
        | Instr::Return
        | Instr::Exit
        | Instr::Cut => vec![],
    };
    (defs, Some(u))
}

/// Strong liveness (faint-variable analysis) of every pc of a body: a register is strongly
/// live at a pc when some path from there uses its value in something the thread does — an
/// address, a written or compared value, a branch, an assertion, a check, an assume, a spawn
/// or join argument, an allocation count, a free, the thread's `result` at its end — directly
/// or through assignments to registers that are themselves strongly live. A counter that
/// only feeds its own increments is not.
fn strongly_live(body: &[Instr], result: Option<Reg>) -> Vec<Vec<Reg>> {
    let info: Vec<_> = body.iter().map(def_use).collect();
    let mut live: Vec<std::collections::BTreeSet<Reg>> = vec![Default::default(); body.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..body.len()).rev() {
            let mut out = std::collections::BTreeSet::new();
            for s in successors(body, pc) {
                match live.get(s) {
                    Some(l) => out.extend(l.iter().copied()),
                    // The thread's end: a join may read its result.
                    None => out.extend(result),
                }
            }
            let (defs, u) = &info[pc];
            let needed = match (u, &body[pc]) {
                (Some(u), _) => Some(u.clone()),
                (None, Instr::Assign { dst, val }) if out.contains(dst) => {
                    let mut v = Vec::new();
                    uses(val, &mut v);
                    Some(v)
                }
                _ => None,
            };
            for d in defs {
                out.remove(d);
            }
            out.extend(needed.into_iter().flatten());
            if out != live[pc] {
                live[pc] = out;
                changed = true;
            }
        }
    }
    live.into_iter().map(|s| s.into_iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(i: Reg) -> Expr {
        Expr::Reg(i)
    }

    #[test]
    fn a_counter_that_only_feeds_itself_is_not_strongly_live() {
        // 0: LoopIter; 1: r0 := r0 + 1; 2: r1 := load x; 3: if r1 == 0 goto 0; 4: return
        let body = vec![
            Instr::LoopIter { id: 0 },
            Instr::Assign {
                dst: 0,
                val: Expr::Binary(
                    super::super::BinOp::Add,
                    Box::new(r(0)),
                    Box::new(Expr::Const(1)),
                ),
            },
            Instr::Load {
                dst: 1,
                loc: Addr::Fixed(0),
                order: MemOrder::Relaxed,
            },
            Instr::BranchIfZero {
                cond: r(1),
                target: 0,
            },
            Instr::Return,
        ];
        assert_eq!(strongly_live(&body, None)[0], Vec::<Reg>::new());
        // Returned as the thread's result, it is live.
        assert_eq!(strongly_live(&body, Some(0))[0], vec![0]);
    }

    #[test]
    fn an_entered_loop_that_never_iterates_is_an_await_and_a_lone_assume_is_not() {
        let load = |dst| Instr::Load {
            dst,
            loc: Addr::Fixed(0),
            order: MemOrder::Acquire,
        };
        // 0: enter 3; 1: r0 := load; 2: assume r0; 3: r1 := load; 4: assume r1 (the
        // program's own); 5: enter 4; 6: iter 4; 7: assume r1; 8: jump 6
        let body = vec![
            Instr::LoopEnter { id: 3 },
            load(0),
            Instr::Assume { cond: r(0) },
            load(1),
            Instr::Assume { cond: r(1) },
            Instr::LoopEnter { id: 4 },
            Instr::LoopIter { id: 4 },
            Instr::Assume { cond: r(1) },
            Instr::Jump { target: 6 },
        ];
        assert_eq!(await_loops(&body), BTreeMap::from([(2, 3)]));
    }
}
