//! Liveness (issue 23): a thread that spins forever in an await or spin loop.
//!
//! A thread blocks in a loop in two ways: the spin rule (`ir::spin`: a pass that read only and
//! left the strongly live state as it was) or the false `assume` of an await loop
//! (`while (!flag);`, [`crate::ir::spin::SpinInfo::awaits`]). Either way the execution stops
//! there, and either way the thread's *last pass* is the events it added since it last
//! arrived at the loop's head: reads (and fences) only.
//!
//! **The rule** (GenMC's `--check-liveness`, AMC / VSync's await termination). Under fair
//! scheduling a complete graph shows a thread that spins forever when
//!
//! 1. every thread ended finished, waiting for a join, or blocked — none was cut at the loop
//!    bound, failed (an assertion aborts the program) or called `exit`;
//! 2. every blocked thread is *settled*: each read of a looping thread's last pass, and the
//!    deciding read of a thread waiting on a synchronisation object, read the mo-latest write
//!    of its location; a thread blocked by an `assume` of the program's own excludes the
//!    execution (as for deadlocks);
//! 3. the looping thread's last pass reads no synchronisation cell (a wait on a lock, barrier
//!    or condition variable is the deadlock rules' business).
//!
//! Then no thread is left to write anything new, and coherence makes every later pass read
//! the same writes (a read po-after a read of the mo-latest write reads it again), so every
//! pass is the same spin: the loop never exits. Each looping thread of such a graph is a
//! [`BugKind::Liveness`] at its loop, naming what it keeps reading.
//!
//! **Loops that write** (cut at the bound, never blocked by the spin rule). A thread cut at
//! the bound of loop `L` loops forever too when its last pass through `L` (from its previous
//! arrival at the head, `ThreadState::repeat`, to the cut) came back to the head with the
//! strongly live registers as they were, holds only reads, writes and fences, reads no
//! synchronisation cell, and each of its reads either read the mo-latest write of a location
//! the pass does not write, or is a read whose value nothing uses (`SpinInfo::read_value_used`:
//! an RMW's unused result); and every other thread is as in 1.–2., with no blocked thread
//! reading a location such a pass writes (else the pass's writes could wake it). Then the next
//! pass reads the same writes where its values matter, takes the same branches and writes
//! again what nobody reads: every later pass is the same, so the loop never ends. A loop that
//! reads back what it writes (a counter deciding its exit) is not reported: it is only cut.
//!
//! **Why a stale read is not reported.** A looping (or waiting) thread whose last pass read
//! an older write would, in a fair continuation, pass again and read a newer one — which may
//! let it leave the loop, and then write what another thread waits for. That continuation is
//! another graph, which TruSt visits too (it is the same prefix with the read reading the
//! newer write: consistent, since the read's po-successors are none and only reads follow it
//! in the pass), so the stale graph is only a duplicate and is not reported; the graph where
//! every blocked thread reads the latest writes is reported once.

use super::{deciding_read, read_latest, Explorer, State, ThreadState};
use crate::checker::graph::{Bug, BugKind, EventId, ExecutionGraph, ThreadEnd};
use crate::checker::Control;
use crate::ir::{Loc, SyncRole};

/// A thread cut in a loop that repeats forever: (thread, head pc, start of its last pass).
type CutLoop = (usize, usize, usize);

impl<F: FnMut(&ExecutionGraph) -> Control> Explorer<'_, F> {
    /// Thread `t` blocks at the false `Assume` at `pc`: if it is an await loop's, records the
    /// loop's head and where its (only) pass began, as the spin rule does when it blocks.
    pub(super) fn note_await(&self, st: &mut State, t: usize, pc: usize) {
        let Some(spin) = &self.spin else {
            return;
        };
        let Some(id) = spin.awaits(st.g.threads[t].func, pc) else {
            return;
        };
        let pass = st.th[t]
            .spins
            .get(&id)
            .map(|(head, _, from)| (*head, *from));
        if pass.is_some() {
            st.th[t].spin_block = pass;
        }
    }

    /// Marks the liveness bugs of a complete graph (see the module doc); `th`: its threads'
    /// final states.
    pub(super) fn find_liveness(&self, g: &mut ExecutionGraph, th: &[ThreadState]) {
        let ended = g.threads.iter().all(|tr| {
            matches!(
                tr.end,
                Some(
                    ThreadEnd::Finished
                        | ThreadEnd::Stuck
                        | ThreadEnd::Blocked
                        | ThreadEnd::Bounded
                        | ThreadEnd::BoundAccepted
                )
            )
        });
        if !ended {
            return;
        }
        let Some((cut, written)) = self.cut_repeating(g, th) else {
            return;
        };
        let untouched = |e: EventId| g.events[e].loc.is_none_or(|l| !written.contains(&l));
        let mut looping = Vec::new();
        for (t, tr) in g.threads.iter().enumerate() {
            if tr.end != Some(ThreadEnd::Blocked) {
                continue;
            }
            match th[t].spin_block {
                Some((head, from)) => {
                    let pass = &tr.events[from.min(tr.events.len())..];
                    let reads = pass.iter().copied().filter(|&e| g.events[e].is_read());
                    if !reads
                        .clone()
                        .all(|e| reads_latest_but(g, e, pass) && untouched(e))
                    {
                        return;
                    }
                    if !reads.clone().any(|e| self.sync_read(g, e)) {
                        looping.push((t, head, from, false));
                    }
                }
                // Blocked by an `assume` outside a loop: a wait on a synchronisation object
                // (settled when it read the latest write), or the program's own (excluded).
                None => match deciding_read(g, &tr.events) {
                    Some(e) if self.sync_read(g, e) && reads_latest(g, e) && untouched(e) => {}
                    _ => return,
                },
            }
        }
        looping.extend(cut.into_iter().map(|(t, head, from)| (t, head, from, true)));
        // The whole graph is the witness: that nothing changes any more depends on every
        // thread's end, not only on the looping thread's past.
        let witness: Vec<EventId> = g
            .threads
            .iter()
            .filter_map(|tr| tr.events.last().copied())
            .collect();
        for (t, head, from, writes) in looping {
            let func = &self.prog.functions[g.threads[t].func];
            let message = self.liveness_message(g, t, from, writes);
            g.bugs.push(Bug {
                kind: BugKind::Liveness,
                stmt: func.stmt_of[head],
                thread: t,
                message,
                witness: witness.clone(),
                race: None,
                related: None,
            });
        }
    }

    /// The threads cut at the loop bound in a loop that would repeat forever (see the module
    /// doc): `(thread, head pc, start of the last pass)` each, and every location their passes
    /// write. `None` when a cut thread's loop may still end (then nothing is reported).
    fn cut_repeating(
        &self,
        g: &ExecutionGraph,
        th: &[ThreadState],
    ) -> Option<(Vec<CutLoop>, Vec<Loc>)> {
        let mut cut = Vec::new();
        let mut written = Vec::new();
        for (t, tr) in g.threads.iter().enumerate() {
            if matches!(tr.end, Some(ThreadEnd::Bounded | ThreadEnd::BoundAccepted)) {
                let (head, from, w) = self.repeating(g, t, &th[t])?;
                cut.push((t, head, from));
                written.extend(w);
            }
        }
        Some((cut, written))
    }

    /// Thread `t`, cut at a loop's bound: when its last pass through that loop came back to the head
    /// with the strongly live registers as they were, touched memory only by reads, writes and
    /// fences, read no synchronisation cell, and each of its reads either read the mo-latest
    /// write of a location the pass does not write or has a value nothing uses (an RMW's
    /// unused result), every later pass is the same: the head pc, where the pass began and
    /// the locations it writes.
    fn repeating(
        &self,
        g: &ExecutionGraph,
        t: usize,
        ts: &ThreadState,
    ) -> Option<(usize, usize, Vec<Loc>)> {
        // Set at the cut only for the loop that was cut (`ThreadState::repeat`).
        let (_, head, from) = ts.repeat?;
        let spin = self.spin.as_ref()?;
        let events = &g.threads[t].events;
        let pass = &events[from.min(events.len())..];
        let mut written = Vec::new();
        for &e in pass {
            let ev = &g.events[e];
            if !(ev.is_read() || ev.is_write() || ev.is_fence()) {
                return None;
            }
            if ev.is_write() {
                written.push(ev.loc?);
            }
        }
        for &e in pass.iter().filter(|&&e| g.events[e].is_read()) {
            let ev = &g.events[e];
            if self.sync_read(g, e) {
                return None;
            }
            let settled = if written.contains(&ev.loc?) {
                ev.stmt.is_some_and(|s| !spin.read_value_used(s))
            } else {
                reads_latest(g, e)
            };
            if !settled {
                return None;
            }
        }
        Some((head, from, written))
    }

    /// What looping thread `t` keeps reading (its last pass, from its event `from`); `writes`:
    /// the loop was cut at the bound and its passes write (what they write is named too).
    fn liveness_message(&self, g: &ExecutionGraph, t: usize, from: usize, writes: bool) -> String {
        let events = &g.threads[t].events;
        let pass = &events[from.min(events.len())..];
        let written: Vec<String> = if writes {
            let mut names: Vec<String> = Vec::new();
            for &e in pass.iter().filter(|&&e| g.events[e].is_write()) {
                let name = g.events[e].loc.map(|l| g.loc_name(self.prog, l));
                if let Some(n) = name.filter(|n| !names.contains(n)) {
                    names.push(n);
                }
            }
            names
        } else {
            Vec::new()
        };
        let mut seen: Vec<(String, i64)> = Vec::new();
        for &e in pass {
            let ev = &g.events[e];
            if let (true, Some(l)) = (ev.is_read(), ev.loc) {
                let item = (g.loc_name(self.prog, l), ev.value);
                if !written.contains(&item.0) && !seen.contains(&item) {
                    seen.push(item);
                }
            }
        }
        let each = if written.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = written.iter().map(|n| format!("`{n}`")).collect();
            format!("each pass writes {} but ", names.join(", "))
        };
        if seen.is_empty() && each.is_empty() {
            return format!(
                "T{t} loops forever: its loop changes nothing and reads no shared memory"
            );
        }
        if seen.is_empty() {
            return format!(
                "T{t} loops forever: {each}reads nothing another thread could change, and \
                 every other thread has finished or waits"
            );
        }
        let reads: Vec<String> = seen.iter().map(|(n, v)| format!("`{n}` = {v}")).collect();
        let (latest, them) = if seen.len() == 1 {
            ("the latest write", "it")
        } else {
            ("each the latest write", "them")
        };
        let verb = if each.is_empty() { "spins" } else { "loops" };
        format!(
            "T{t} {verb} forever: {each}its loop keeps reading {} ({latest}), and every other \
             thread has finished or waits, so nothing writes {them} again",
            reads.join(", ")
        )
    }

    /// Whether read `e` is of a synchronisation object's cell that waits are made on (a lock
    /// word, a barrier round, a condition variable's signals).
    fn sync_read(&self, g: &ExecutionGraph, e: EventId) -> bool {
        g.events[e]
            .loc
            .is_some_and(|l| self.sync_role(g, l).is_some_and(|r| r != SyncRole::State))
    }
}

/// Whether read `e` read the mo-latest write of its location (a write, not nothing).
fn reads_latest(g: &ExecutionGraph, e: EventId) -> bool {
    g.rf[e].is_some() && read_latest(g, e)
}

/// Whether read `e` of a looping thread's last pass read the mo-latest write of its location
/// once the pass's own writes (a zero-net-effect pass's RMWs, which leave the location as
/// they found it) are set aside: every write mo-after its source is one of `pass`.
fn reads_latest_but(g: &ExecutionGraph, e: EventId, pass: &[EventId]) -> bool {
    let (Some(src), Some(l)) = (g.rf[e], g.events[e].loc) else {
        return false;
    };
    let mo = &g.mo[l];
    mo.iter()
        .position(|&w| w == src)
        .is_some_and(|i| mo[i + 1..].iter().all(|w| pass.contains(w)))
}
