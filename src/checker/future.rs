//! Which locations a thread may still write: a backward data-flow analysis over each
//! function's control flow, computed once per exploration.
//!
//! The explorer lets a thread's pending read wait for a write that a later step adds (see
//! `explore`'s canonical order). Waiting is pointless — every state reached that way is a dead
//! end — when no other running thread can write the location any more; [`Future::may_write`]
//! answers that question conservatively (a computed address may write anything, and a spawn
//! brings in everything the spawned function may write).

use crate::ir::{Addr, FuncId, Instr, Program};

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
    writes: Vec<Vec<LocSet>>,
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
                            Addr::Computed { .. } => set.all = true,
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
                    let succs: Vec<usize> = match ins {
                        Instr::Jump { target } => vec![*target],
                        Instr::BranchIfZero { target, .. } => vec![pc + 1, *target],
                        Instr::Return => vec![],
                        _ => vec![pc + 1],
                    };
                    for s in succs {
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
        Future { writes }
    }

    /// Whether function `func`, at `pc`, may still write location `x`.
    pub fn may_write(&self, func: FuncId, pc: usize, x: usize) -> bool {
        self.writes
            .get(func)
            .and_then(|w| w.get(pc))
            .is_some_and(|s| s.contains(x))
    }
}
