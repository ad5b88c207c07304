//! Lock-aware exploration: a thread waiting on a synchronisation object (a held lock, an
//! unfinished barrier round — a read of an [`ir::SyncRole::Wait`] cell whose value blocks it)
//! is only explored waiting on the *latest* value of the cell.
//!
//! # The rule
//!
//! A **stale wait** is a thread that ended blocked with, as its last event, a read (not the
//! read part of an RMW) of a `Wait` cell that did not read the cell's mo-last write: a lock
//! acquisition that found the mutex held by an owner who, in the same graph, releases it later.
//! Such a graph is neither complete (the thread is blocked) nor a deadlock (`settled` fails: it
//! stands for the graphs where the thread reads the newer write), and the explorer no longer
//! visits it: [`Explorer::stale_wait`] drops it where `complete_graph` would count it as blocked
//! (or bounded), and [`Explorer::stale_wait_choice`] does not even start the subtree of a wait
//! that is stale when it is added — a read of a blocking value that is not the mo-latest write
//! of its cell. That read was not maximally added, so no backward revisit ever deletes or
//! changes it (`revisit::candidates` stops at it): the thread stays blocked on it and every
//! leaf of the subtree is a stale wait. A wait on the mo-latest write is still explored: it is
//! how the unlock's backward revisit reaches the executions where the waiter takes the lock
//! after it (TruSt), and it is the deadlock when nothing writes the cell again.
//!
//! # Why nothing is lost
//!
//! Complete executions are untouched (a stale wait is blocked). Every bug of a dropped graph
//! `G` with stale wait `r` is in a graph that is kept: `r` has no po-, rf- or hb-successor, so
//! `G` minus `r` is consistent with the same hb among the other events; adding back the waiting
//! reads at the end, each reading the mo-latest write of its cell (a blocked thread is then a
//! settled waiter, an unblocked one continues), gives a kept graph containing every event of
//! `G` but `r`, with the same races, failed checks and assertions (no new event is hb-before an
//! old one). Deadlocks and lost wake-ups are only reported in settled graphs, which `G` is not.
//!
//! Not applied under `Goal::Sc` (the stale read's fr edges may be a non-SC cycle of its own),
//! under `--equiv rf|value` (mo is the witness's, known only at the end), nor in a program that
//! can call `exit` (after an `exit`, a graph with a stale wait is a complete execution).

use super::{Explorer, ReadChoice, State};
use crate::checker::graph::{ExecutionGraph, ThreadEnd};
use crate::checker::Control;
use crate::ir::{Instr, Program, SyncRole};

/// Local instructions the dry run of a failed wait follows before giving up (a lock's failure
/// path is a handful).
const DRY_RUN_STEPS: usize = 64;

/// Whether the lock-aware rule applies to explorations of `prog` with these settings.
pub(super) fn applies(prog: &Program, sc_goal: bool, coarse: bool) -> bool {
    !sc_goal
        && !coarse
        && !prog
            .functions
            .iter()
            .any(|f| f.body.iter().any(|i| matches!(i, Instr::Exit)))
}

impl<F: FnMut(&ExecutionGraph) -> Control> Explorer<'_, F> {
    /// Whether `choice`, thread `t`'s pending read of `loc`, would be a stale wait from the
    /// start: a read of a `Wait` cell, not of its mo-latest write, with no write part, after
    /// which the thread's local code blocks (a false `assume`) before any other event or bug.
    pub(super) fn stale_wait_choice(
        &self,
        st: &State,
        t: usize,
        loc: usize,
        choice: &ReadChoice,
    ) -> bool {
        self.waits
            && choice.wev.is_none()
            && st.g.mo[loc].last() != Some(&choice.w)
            && self.sync_role(&st.g, loc) == Some(SyncRole::Wait)
            && self.blocks_after(st, t, &choice.sets)
    }

    /// Whether thread `t`'s pending read is a wait on the mo-latest write of a `Wait` cell:
    /// read now, it would block (TruSt then schedules every other thread first).
    pub(super) fn waiting(&self, st: &State, t: usize) -> bool {
        if !self.waits {
            return false;
        }
        let Some(loc) = self.pending_loc(st, t) else {
            return false;
        };
        let Some(&w) = st.g.mo[loc].last() else {
            return false;
        };
        if self.sync_role(&st.g, loc) != Some(SyncRole::Wait) {
            return false;
        }
        let ins = self.instr(st, t);
        let (_, write, sets) = super::read_effect(ins, &st.th[t].regs, st.g.events[w].value);
        write.is_none() && self.blocks_after(st, t, &sets)
    }

    /// Whether thread `t`, its pending read done with the registers `sets`, blocks by local
    /// steps alone: a false `assume` reached through assignments, branches, jumps and checks
    /// that hold. Anything else (an event, a failing check, a loop marker) is not a block.
    fn blocks_after(&self, st: &State, t: usize, sets: &[(usize, i64)]) -> bool {
        let body = &self.prog.functions[st.g.threads[t].func].body;
        let mut regs = st.th[t].regs.clone();
        for &(r, v) in sets {
            regs[r] = v;
        }
        let mut pc = st.th[t].pc + 1;
        for _ in 0..DRY_RUN_STEPS {
            match body.get(pc) {
                Some(Instr::Assign { dst, val }) => match val.eval(&regs) {
                    Ok(v) => regs[*dst] = v,
                    Err(_) => return false,
                },
                Some(Instr::Check { cond, .. } | Instr::Assert { cond, .. }) => {
                    if cond.eval(&regs).unwrap_or(0) == 0 {
                        return false;
                    }
                }
                Some(Instr::BranchIfZero { cond, target }) => match cond.eval(&regs) {
                    Ok(0) => {
                        pc = *target;
                        continue;
                    }
                    Ok(_) => {}
                    Err(_) => return false,
                },
                Some(Instr::Jump { target }) => {
                    pc = *target;
                    continue;
                }
                Some(Instr::Slot(_)) => {}
                Some(Instr::Assume { cond }) => match cond.eval(&regs) {
                    Ok(0) => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                },
                _ => return false,
            }
            pc += 1;
        }
        false
    }

    /// Whether the complete graph `g` has a stale wait (see the module docs): it is not
    /// visited.
    pub(super) fn stale_wait(&self, g: &ExecutionGraph) -> bool {
        self.waits
            && g.threads.iter().any(|tr| {
                tr.end == Some(ThreadEnd::Blocked)
                    && tr.events.last().is_some_and(|&e| {
                        let ev = &g.events[e];
                        ev.is_read()
                            && !g.rmw.iter().any(|p| p.0 == e)
                            && ev.loc.is_some_and(|l| {
                                !super::read_latest(g, e)
                                    && self.sync_role(g, l) == Some(SyncRole::Wait)
                            })
                    })
            })
    }
}
