//! Syntactic dependencies for the ARMv8 model: which reads of its own thread an event's
//! address, data or control flow depends on.
//!
//! The interpreter (with [`crate::checker::Limits::dependencies`], or under `armv8`) lets every
//! register carry the set of reads its value was computed from: a load sets its destination to
//! itself, an assignment to the union over the registers it uses. An access's **address**
//! dependencies are those of the registers in its computed address, a store's (or an RMW
//! write part's) **data** dependencies those of the value it writes, and every event's
//! **control** dependencies the reads any earlier branch, `assume` (await loop) or passed
//! `assert` of its thread depended on. These are the source's dependencies; fensyn assumes the
//! compiler keeps them (a compiler is not obliged to: C11 orders nothing by dependencies), and
//! leaves out the ones compilers do not create: a compare-and-swap adds no control dependency
//! (ARMv8.1's `cas` has no branch). Fewer dependencies mean more executions, never fewer.

use super::graph::EventId;
use crate::ir::{Addr, Expr, Reg};

/// The dependency sets of one event (sorted, without duplicates).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Deps {
    pub addr: Vec<EventId>,
    pub data: Vec<EventId>,
    pub ctrl: Vec<EventId>,
}

impl Deps {
    pub fn is_empty(&self) -> bool {
        self.addr.is_empty() && self.data.is_empty() && self.ctrl.is_empty()
    }

    /// The same sets with every event renamed by `map` (events mapped to `usize::MAX` are
    /// dropped).
    pub fn renamed(&self, map: &[usize]) -> Deps {
        let f = |v: &[EventId]| -> Vec<EventId> {
            let mut out: Vec<EventId> = v
                .iter()
                .filter_map(|&e| map.get(e).copied().filter(|&m| m != usize::MAX))
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        };
        Deps {
            addr: f(&self.addr),
            data: f(&self.data),
            ctrl: f(&self.ctrl),
        }
    }
}

/// Per-thread dependency state of the interpreter.
#[derive(Clone, Debug, Default)]
pub struct DepState {
    /// The reads each register's value depends on.
    pub regs: Vec<Vec<EventId>>,
    /// The reads every later event is control dependent on.
    pub ctrl: Vec<EventId>,
}

/// `a ∪ b` of sorted sets.
pub fn union(a: &[EventId], b: &[EventId]) -> Vec<EventId> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out.sort_unstable();
    out.dedup();
    out
}

fn collect(e: &Expr, out: &mut Vec<Reg>) {
    match e {
        Expr::Const(_) => {}
        Expr::Reg(r) => out.push(*r),
        Expr::Unary(_, a) => collect(a, out),
        Expr::Binary(_, a, b) => {
            collect(a, out);
            collect(b, out);
        }
    }
}

impl DepState {
    pub fn new(nregs: usize) -> DepState {
        DepState {
            regs: vec![Vec::new(); nregs],
            ctrl: Vec::new(),
        }
    }

    /// The reads the value of `e` depends on.
    pub fn of_expr(&self, e: &Expr) -> Vec<EventId> {
        let mut regs = Vec::new();
        collect(e, &mut regs);
        let mut out: Vec<EventId> = Vec::new();
        for r in regs {
            if let Some(d) = self.regs.get(r) {
                out.extend_from_slice(d);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The reads a memory access's address depends on.
    pub fn of_addr(&self, a: &Addr) -> Vec<EventId> {
        match a {
            Addr::Fixed(_) => Vec::new(),
            Addr::Computed { ptr, .. } => self.of_expr(ptr),
            Addr::Within { ptr, base, .. } => union(&self.of_expr(ptr), &self.of_expr(base)),
        }
    }

    /// A branch on `cond`: every later event depends on its reads.
    pub fn branch(&mut self, cond: &Expr) {
        let d = self.of_expr(cond);
        if !d.is_empty() {
            self.ctrl = union(&self.ctrl, &d);
        }
    }
}
