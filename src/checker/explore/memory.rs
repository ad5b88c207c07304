//! Objects allocated at run time: allocation and deallocation steps, and the memory errors
//! found on them (see ARCHITECTURE.md, "Allocated locations"). Local objects (a function's
//! arrays, structs, address-taken variables) and heap objects (`malloc`, `new`) alike: every
//! object is followed by a red zone, a deallocation must be valid when it runs, and a complete
//! graph's accesses are judged against the frees hb-before or unordered with them.

use super::{Explorer, State};
use crate::checker::graph::{Bug, BugKind, DynLoc, EventId, EventKind, ExecutionGraph};
use crate::checker::graph::{MemoryError, INIT_THREAD};
use crate::checker::incremental::Views;
use crate::checker::Control;
use crate::ir::{Expr, Instr, MemOrder};

impl<F: FnMut(&ExecutionGraph) -> Control> Explorer<'_, F> {
    /// Runs thread `t`'s allocation, deallocation or object-size instruction at `pc` as far
    /// as it is local: true when the thread stops there (an event is pending, or it failed),
    /// false when it went on. An allocation of no cells gives the null pointer; a null pointer
    /// frees nothing; a deallocation that cannot be valid is a memory error here.
    pub(super) fn memory_step(&self, st: &mut State, t: usize, pc: usize) -> bool {
        let regs = &st.th[t].regs;
        let stop = match self.instr(st, t) {
            Instr::Alloc { dst, layout, count } => {
                let n = match count.as_ref().map(|c| c.eval(regs)) {
                    None => Ok(1),
                    Some(Ok(n)) => Ok(n),
                    Some(Err(_)) => Err("division by zero".to_string()),
                };
                let cells = self.prog.layouts[*layout].cells.len() as i64;
                match n {
                    Ok(0) => {
                        st.th[t].regs[*dst] = 0;
                        false
                    }
                    Ok(n) if n > 0 && n.saturating_mul(cells) <= crate::ir::MAX_OBJECT_CELLS => {
                        true
                    }
                    Ok(n) => {
                        let msg = format!(
                            "allocation of {n} elements of {} cells: not a size fensyn can model \
                             (at most {} cells)",
                            cells,
                            crate::ir::MAX_OBJECT_CELLS
                        );
                        self.fail_ub_msg(st, t, pc, msg);
                        return true;
                    }
                    Err(msg) => {
                        self.fail_ub_msg(st, t, pc, msg);
                        return true;
                    }
                }
            }
            Instr::Free { ptr, by } => match ptr.eval(regs) {
                Ok(0) => false,
                Ok(p) => match self.invalid_free(&st.g, p, *by) {
                    None => true,
                    Some(msg) => {
                        self.fail_kind(st, t, pc, BugKind::Memory(MemoryError::InvalidFree), msg);
                        return true;
                    }
                },
                Err(_) => {
                    self.fail_ub(st, t, pc);
                    return true;
                }
            },
            Instr::ObjectCells { dst, ptr } => {
                let n = ptr.eval(regs).ok().and_then(|p| {
                    let loc = usize::try_from(p - 1).ok()?;
                    let (first, d) = st.g.object_of(loc)?;
                    Some((first + d.len).saturating_sub(loc) as i64)
                });
                let dst = *dst;
                st.th[t].regs[dst] = n.unwrap_or(0);
                if let Some(d) = &mut st.th[t].dep {
                    d.regs[dst] = Vec::new();
                }
                false
            }
            _ => unreachable!("memory_step on a memory instruction"),
        };
        if stop {
            st.th[t].at_event = true;
        } else {
            st.th[t].pc += 1;
        }
        stop
    }

    /// Why `free`/`delete` (`by`) of pointer value `p` (not null) is invalid, if it is: `p`
    /// must be the start of a live object of the matching kind. (Whether it is still live is
    /// judged on the complete graph: a second free is a double free however the two are
    /// ordered.)
    pub(super) fn invalid_free(
        &self,
        g: &ExecutionGraph,
        p: i64,
        by: crate::ir::Dealloc,
    ) -> Option<String> {
        if by == crate::ir::Dealloc::ScopeEnd {
            return None;
        }
        let loc = usize::try_from(p - 1).ok();
        let Some((first, d)) = loc
            .and_then(|l| g.object_of(l))
            .filter(|(_, d)| !d.red_zone())
        else {
            let what = match loc.filter(|&l| l < g.num_inits()) {
                Some(l) => format!("`{}`, which is not a heap object", g.loc_name(self.prog, l)),
                None => "a pointer to no heap object".to_string(),
            };
            return Some(format!("{} of {what}", by.as_str()));
        };
        let layout = &self.prog.layouts[d.layout];
        let name = &layout.name;
        if !layout.kind.is_heap() {
            return Some(format!(
                "{} of `{name}`, which is not a heap object",
                by.as_str()
            ));
        }
        if loc != Some(first) {
            return Some(format!(
                "{} of a pointer {} cells into `{name}` (not its start)",
                by.as_str(),
                d.offset
            ));
        }
        if layout.kind != by.ends() {
            return Some(format!(
                "{} of `{name}`, which was allocated by {} (mismatched deallocation)",
                by.as_str(),
                layout.kind.allocator()
            ));
        }
        None
    }

    /// The bug an invalid address is: out of bounds (of an array, past a heap object's end,
    /// or nowhere) and null are memory errors (as other checkers report them: an access to
    /// memory not allocated); a division by zero in the address is undefined behaviour.
    pub(super) fn address_error(
        &self,
        g: &ExecutionGraph,
        e: crate::ir::AddrError,
    ) -> (BugKind, String) {
        use crate::ir::AddrError;
        let oob = BugKind::Memory(MemoryError::OutOfBounds);
        match e {
            AddrError::OutOfBounds { ptr, .. } => {
                let zone = usize::try_from(ptr - 1)
                    .ok()
                    .and_then(|l| g.object_of(l))
                    .filter(|(_, d)| d.red_zone() && d.layout < self.prog.layouts.len());
                match zone {
                    Some((first, d)) => {
                        let name = g.object_name(self.prog, first);
                        let msg = format!(
                            "out-of-bounds access (just past the end of `{name}`, {} cells)",
                            d.len
                        );
                        (oob, msg)
                    }
                    // Outside a known array, or an address of no object at all (made from an
                    // integer, run off a local object): memory that is not allocated.
                    None => (oob, e.to_string()),
                }
            }
            AddrError::Null => (BugKind::Memory(MemoryError::NullDereference), e.to_string()),
            AddrError::DivisionByZero => (BugKind::Ub, e.to_string()),
        }
    }

    /// Adds thread `t`'s pending [`Instr::Alloc`]: one location per cell of its layout (times
    /// its count), each with a first (non-atomic) write of the cell's initial value by `t`,
    /// numbered from `at` (a replay keeps the locations the replayed graph had) or after the
    /// last location; every object is followed by its red zone ([`DynLoc::red_zone`]).
    /// Returns the id of the last write.
    pub(super) fn apply_alloc(&self, next: &mut State, t: usize, at: Option<usize>) -> EventId {
        let Instr::Alloc {
            dst,
            layout,
            ref count,
        } = *self.instr(next, t)
        else {
            unreachable!("apply_alloc of an allocation")
        };
        let regs = &next.th[t].regs;
        let n = count.as_ref().map_or(1, |c| c.eval(regs).unwrap_or(1)) as usize;
        let lay = &self.prog.layouts[layout];
        let len = n * lay.cells.len();
        let first = at.unwrap_or(next.g.num_locs());
        let mut last = 0;
        for offset in 0..len {
            let cell = offset % lay.cells.len();
            let ev = self.event(
                next,
                t,
                EventKind::Write,
                Some(first + offset),
                MemOrder::NonAtomic,
                lay.cells[cell].init,
            );
            let id = next.push(ev, false);
            let d = DynLoc {
                layout,
                cell,
                offset,
                len,
                event: id,
            };
            Self::place_location(next, first + offset, d, vec![id]);
            next.views.add(&next.g, id);
            last = id;
        }
        {
            let zone = DynLoc {
                layout,
                cell: 0,
                offset: len,
                len,
                event: usize::MAX,
            };
            Self::place_location(next, first + len, zone, Vec::new());
        }
        next.th[t].regs[dst] = crate::ir::pointer_to(first);
        if let Some(dep) = &mut next.th[t].dep {
            dep.regs[dst] = Vec::new();
        }
        self.leave_sc(next, false);
        Self::note_move(next, t, last);
        last
    }

    /// Records allocated location `loc` (its entry `d` and modification order `mo`), leaving
    /// any location between the last one and it (a replay) not allocated (yet).
    pub(super) fn place_location(next: &mut State, loc: usize, d: DynLoc, mo: Vec<EventId>) {
        let inits = next.g.num_inits();
        if next.g.mo.len() <= loc {
            next.g.mo.resize(loc + 1, Vec::new());
        }
        next.g.mo[loc] = mo;
        if next.g.dynamic.len() <= loc - inits {
            let hole = DynLoc {
                event: usize::MAX,
                ..d
            };
            next.g.dynamic.resize(loc - inits + 1, hole);
        }
        next.g.dynamic[loc - inits] = d;
    }

    /// Adds thread `t`'s pending [`Instr::Free`] of the object `ptr` points to: an event
    /// ending the lifetime of every cell of its allocation. Relates to no location, so it is
    /// always consistent; [`Explorer::find_lifetime_bugs`] judges the accesses around it.
    pub(super) fn apply_free(&self, next: &mut State, t: usize, ptr: &Expr) -> EventId {
        let p = ptr.eval(&next.th[t].regs).unwrap_or(0);
        let loc = usize::try_from(p - 1).unwrap_or(usize::MAX);
        let (first, len) = match next.g.object_of(loc) {
            Some((first, d)) => (first, d.len),
            None => (loc, 0),
        };
        let ev = self.event(
            next,
            t,
            EventKind::Free { first, len },
            None,
            MemOrder::NonAtomic,
            0,
        );
        let id = next.push(ev, false);
        next.views.add(&next.g, id);
        self.leave_sc(next, false);
        Self::note_move(next, t, id);
        id
    }

    /// Marks the reads of a cell of an indeterminate object ([`crate::ir::Layout`]) that read
    /// its allocation's first write: the cell was never written before (undefined behaviour
    /// for a C local without initialiser, and for `malloc`ed memory). Synchronisation cells
    /// are left to their own misuse checks.
    pub(super) fn find_indeterminate_reads(&self, g: &mut ExecutionGraph) {
        let inits = g.num_inits();
        let mut bugs = Vec::new();
        for (e, ev) in g.events.iter().enumerate() {
            let Some(l) = ev.loc.filter(|&l| ev.is_read() && l >= inits) else {
                continue;
            };
            let Some(d) = g.dynamic.get(l - inits) else {
                continue;
            };
            let layout = &self.prog.layouts[d.layout];
            let cell = &layout.cells[d.cell];
            if !layout.indeterminate || cell.sync.is_some() || g.rf[e] != Some(d.event) {
                continue;
            }
            let name = g.loc_name(self.prog, l);
            let message = if layout.kind.is_heap() {
                format!(
                    "read of `{name}`, which was never written since {} allocated it",
                    layout.kind.allocator()
                )
            } else {
                format!("read of `{name}`, which was never initialised")
            };
            bugs.push(Bug {
                kind: BugKind::Memory(MemoryError::UninitialisedRead),
                stmt: ev.stmt.unwrap_or(0),
                thread: ev.thread,
                message,
                witness: vec![e],
                race: None,
                related: None,
            });
        }
        g.bugs.extend(bugs);
    }

    /// Marks the accesses to objects whose lifetime ended ([`EventKind::Free`]) in a complete
    /// graph: an access hb-after the end uses the object after it; an access unordered with
    /// the end by hb races with it (fixed only by ordering the access before the end: the
    /// bug's `race`). (The end's own thread accessed the object before it, in program order.)
    pub(super) fn find_lifetime_bugs(&self, g: &mut ExecutionGraph, views: &Views) {
        let mut bugs = Vec::new();
        for (f, fev) in g.events.iter().enumerate() {
            let EventKind::Free { first, len } = fev.kind else {
                continue;
            };
            let (what, end, detail) = match g.object_of(first) {
                Some((_, d)) if self.prog.layouts[d.layout].kind.is_heap() => {
                    ("it was freed", "its free", MemoryError::UseAfterFree)
                }
                _ => (
                    "the end of its lifetime",
                    "the end of its lifetime",
                    MemoryError::UseAfterReturn,
                ),
            };
            for (e, ev) in g.events.iter().enumerate() {
                let inside = ev.loc.is_some_and(|l| l >= first && l < first + len);
                if !inside || ev.thread == INIT_THREAD || views.hb_eq(g, e, f) {
                    continue;
                }
                // The allocation's own first writes are not accesses of the program: a free
                // unordered with them is judged by the accesses that follow them.
                if g.object_of(ev.loc.unwrap_or(first))
                    .is_some_and(|(_, d)| d.event == e)
                {
                    continue;
                }
                let name = g.loc_name(self.prog, ev.loc.unwrap_or(first));
                let (message, race) = if views.hb_eq(g, f, e) {
                    (format!("access to `{name}` after {what}"), None)
                } else {
                    (format!("access to `{name}` races with {end}"), Some((e, f)))
                };
                bugs.push(Bug {
                    kind: BugKind::Memory(detail),
                    stmt: ev.stmt.unwrap_or(0),
                    thread: ev.thread,
                    message,
                    witness: vec![f, e],
                    race,
                    related: fev.stmt,
                });
            }
        }
        g.bugs.extend(bugs);
    }

    /// Marks every free of an object freed before (in event order) as a double free. (Under
    /// every model: it needs no hb.)
    pub(super) fn find_double_frees(&self, g: &mut ExecutionGraph) {
        let mut first_free: std::collections::HashMap<usize, EventId> = Default::default();
        let mut bugs = Vec::new();
        for (e, ev) in g.events.iter().enumerate() {
            if let EventKind::Free { first, len } = ev.kind {
                if len == 0 {
                    continue;
                }
                match first_free.get(&first) {
                    Some(&f) => bugs.push(self.double_free(g, f, e)),
                    None => {
                        first_free.insert(first, e);
                    }
                }
            }
        }
        g.bugs.extend(bugs);
    }

    /// The second of two frees `f1` < `f2` (event ids) of one object.
    pub(super) fn double_free(&self, g: &ExecutionGraph, f1: EventId, f2: EventId) -> Bug {
        let (e1, e2) = (&g.events[f1], &g.events[f2]);
        let EventKind::Free { first, .. } = e1.kind else {
            unreachable!("double_free of frees")
        };
        Bug {
            kind: BugKind::Memory(MemoryError::DoubleFree),
            stmt: e2.stmt.unwrap_or(0),
            thread: e2.thread,
            message: format!("double free of `{}`", g.object_name(self.prog, first)),
            witness: vec![f1, f2],
            race: None,
            related: e1.stmt,
        }
    }

    /// With `Limits::leaks`: the heap objects of a complete execution that no `free` or
    /// `delete` ended (reported at their allocation). Not after `exit` (the program stopped
    /// its threads wherever they were).
    pub(super) fn find_leaks(&self, g: &mut ExecutionGraph) {
        let freed: std::collections::HashSet<usize> = g
            .events
            .iter()
            .filter_map(|ev| match ev.kind {
                EventKind::Free { first, .. } => Some(first),
                _ => None,
            })
            .collect();
        let inits = g.num_inits();
        let mut bugs = Vec::new();
        for (i, d) in g.dynamic.iter().enumerate() {
            let layout = &self.prog.layouts[d.layout];
            if d.offset != 0 || d.red_zone() || !layout.kind.is_heap() || d.event == usize::MAX {
                continue;
            }
            if freed.contains(&(inits + i)) {
                continue;
            }
            let ev = &g.events[d.event];
            bugs.push(Bug {
                kind: BugKind::Memory(MemoryError::Leak),
                stmt: ev.stmt.unwrap_or(0),
                thread: ev.thread,
                message: format!("`{}` is never freed (leak)", layout.name),
                witness: vec![d.event],
                race: None,
                related: None,
            });
        }
        g.bugs.extend(bugs);
    }
}
