//! Which locations a thread may still write: a backward data-flow analysis over each
//! function's control flow, computed once per exploration.
//!
//! The explorer lets a thread's pending read wait for a write that a later step adds (see
//! `explore`'s canonical order). Waiting is pointless — every state reached that way is a dead
//! end — when no other running thread can write the location any more; [`Future::may_write_now`]
//! answers that question conservatively: a spawn brings in everything the spawned function may
//! write, and a computed address (`a[i]`, `*p`) anything in its array's range — unless the
//! registers it is computed from are never assigned again from the thread's current pc on
//! (`flag[me]` with `me` the thread's argument): then the address is evaluated with the
//! thread's current registers and only that location counts.

use crate::ir::{Addr, Expr, FuncId, Instr, Program, Reg};

/// A set of locations, or every location.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LocSet {
    all: bool,
    bits: Vec<u64>,
}

impl LocSet {
    fn empty(nlocs: usize) -> LocSet {
        LocSet {
            all: false,
            bits: vec![0; nlocs.div_ceil(64)],
        }
    }
    fn contains(&self, x: usize) -> bool {
        self.all
            || self
                .bits
                .get(x / 64)
                .is_some_and(|w| w >> (x % 64) & 1 == 1)
    }
    fn insert(&mut self, x: usize) {
        if let Some(w) = self.bits.get_mut(x / 64) {
            *w |= 1 << (x % 64);
        }
    }
    fn insert_range(&mut self, lo: usize, hi: usize) {
        for x in lo..hi {
            self.insert(x);
        }
    }
    /// `self ∪= other`; returns whether `self` grew.
    fn union(&mut self, other: &LocSet) -> bool {
        let mut grew = other.all && !self.all;
        self.all |= other.all;
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            let n = *a | *b;
            grew |= n != *a;
            *a = n;
        }
        grew
    }
}

/// Per function and pc: the locations the function may write from that pc on (its own
/// stores, RMWs and CASes, and those of the threads it may spawn).
#[derive(Clone, Debug)]
pub struct Future {
    /// What the function may write from a pc on, except its own computed-address writes: its
    /// fixed-address writes and everything the threads it may spawn may write (their computed
    /// addresses counted by range).
    fixed: Vec<Vec<LocSet>>,
    /// The function's computed-address writes reachable from a pc (their pcs).
    computed: Vec<Vec<Vec<usize>>>,
    /// The registers the function may assign from a pc on.
    assigned: Vec<Vec<LocSet>>,
}

/// The registers an expression reads.
fn regs_of(e: &Expr, out: &mut Vec<Reg>) {
    match e {
        Expr::Const(_) => {}
        Expr::Reg(r) => out.push(*r),
        Expr::Unary(_, a) => regs_of(a, out),
        Expr::Binary(_, a, b) => {
            regs_of(a, out);
            regs_of(b, out);
        }
    }
}

/// The register an instruction assigns, if any (a CAS assigns two).
fn assigns(ins: &Instr) -> Vec<Reg> {
    match ins {
        Instr::Load { dst, .. }
        | Instr::Rmw { dst, .. }
        | Instr::Assign { dst, .. }
        | Instr::ThreadId { dst } => vec![*dst],
        Instr::Cas { ok, old, .. } => vec![*ok, *old],
        Instr::Spawn { dst: Some(d), .. } => vec![*d],
        _ => vec![],
    }
}

fn successors(ins: &Instr, pc: usize) -> Vec<usize> {
    match ins {
        Instr::Jump { target } => vec![*target],
        Instr::BranchIfZero { target, .. } => vec![pc + 1, *target],
        Instr::Return => vec![],
        _ => vec![pc + 1],
    }
}

/// A write instruction's address.
fn written(ins: &Instr) -> Option<&Addr> {
    match ins {
        Instr::Store { loc, .. } | Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => Some(loc),
        _ => None,
    }
}

impl Future {
    pub fn new(prog: &Program) -> Future {
        let nlocs = prog.globals.len();
        let mut writes: Vec<Vec<LocSet>> = prog
            .functions
            .iter()
            .map(|f| vec![LocSet::empty(nlocs); f.body.len() + 1])
            .collect();
        // Iterate to a fixpoint: within a function (loops) and across spawns.
        loop {
            let mut changed = false;
            for (fid, f) in prog.functions.iter().enumerate() {
                for pc in (0..f.body.len()).rev() {
                    let mut set = LocSet::empty(nlocs);
                    let ins = &f.body[pc];
                    match ins {
                        Instr::Store { loc, .. }
                        | Instr::Rmw { loc, .. }
                        | Instr::Cas { loc, .. } => match loc {
                            Addr::Fixed(l) => set.insert(*l),
                            Addr::Computed { lo, hi, .. } => {
                                set.insert_range(*lo, (*hi).min(nlocs))
                            }
                            // A cell of an allocated object: beyond the globals.
                            Addr::Within { .. } => {}
                        },
                        Instr::Spawn { func, .. } => {
                            let child: FuncId = *func;
                            if let Some(entry) = writes.get(child).and_then(|w| w.first()) {
                                let entry = entry.clone();
                                set.union(&entry);
                            }
                        }
                        _ => {}
                    }
                    for s in successors(ins, pc) {
                        if let Some(next) = writes[fid].get(s) {
                            let next = next.clone();
                            set.union(&next);
                        }
                    }
                    changed |= writes[fid][pc].union(&set);
                }
            }
            if !changed {
                break;
            }
        }
        let mut fixed = Vec::new();
        let mut computed = Vec::new();
        let mut assigned = Vec::new();
        for f in &prog.functions {
            let n = f.body.len();
            let nregs = f.reg_names.len();
            let mut fx = vec![LocSet::empty(nlocs); n + 1];
            let mut cw: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
            let mut asg = vec![LocSet::empty(nregs); n + 1];
            loop {
                let mut changed = false;
                for pc in (0..n).rev() {
                    let ins = &f.body[pc];
                    let mut set = LocSet::empty(nlocs);
                    let mut regs = LocSet::empty(nregs);
                    let mut pcs: Vec<usize> = Vec::new();
                    match written(ins) {
                        Some(Addr::Fixed(l)) => set.insert(*l),
                        Some(Addr::Computed { .. } | Addr::Within { .. }) => pcs.push(pc),
                        None => {}
                    }
                    if let Instr::Spawn { func, .. } = ins {
                        set.union(&writes[*func][0]);
                    }
                    for r in assigns(ins) {
                        regs.insert(r);
                    }
                    for s in successors(ins, pc) {
                        set.union(&fx[s]);
                        regs.union(&asg[s]);
                        pcs.extend(cw[s].iter().copied());
                    }
                    pcs.sort_unstable();
                    pcs.dedup();
                    changed |= fx[pc].union(&set) | asg[pc].union(&regs);
                    if pcs != cw[pc] {
                        cw[pc] = pcs;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            fixed.push(fx);
            computed.push(cw);
            assigned.push(asg);
        }
        Future {
            fixed,
            computed,
            assigned,
        }
    }

    /// Whether a thread running `func` at `pc` with registers `regs` may still write `x`: its
    /// fixed-address writes and spawned threads' writes from `pc` on, and each computed write
    /// address — evaluated now when its registers keep their current values from `pc` on,
    /// else counted by its array's range.
    pub fn may_write_now(
        &self,
        prog: &Program,
        func: FuncId,
        pc: usize,
        regs: &[i64],
        x: usize,
    ) -> bool {
        if self.fixed[func].get(pc).is_some_and(|s| s.contains(x)) {
            return true;
        }
        let Some(pcs) = self.computed[func].get(pc) else {
            return false;
        };
        let assigned = &self.assigned[func][pc];
        let body = &prog.functions[func].body;
        let mut used = Vec::new();
        pcs.iter().any(|&w| {
            let Some(Addr::Computed { ptr, lo, hi }) = written(&body[w]) else {
                return true; // an allocated object's cell: anything
            };
            used.clear();
            regs_of(ptr, &mut used);
            if used.iter().any(|&r| assigned.contains(r)) {
                (*lo..*hi).contains(&x)
            } else {
                // Evaluates as the access will: an invalid address writes nothing (the thread
                // fails with undefined behaviour instead).
                ptr.eval(regs)
                    .is_ok_and(|p| p >= 1 && (p - 1) as usize == x && (*lo..*hi).contains(&x))
            }
        })
    }
}
