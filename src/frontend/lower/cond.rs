//! Condition variables (`pthread_cond_*`, C11 `cnd_*`, and C++ `std::condition_variable`
//! through `cpp_sync.rs`) over the cells of `sync.rs`: the number of threads inside a wait,
//! and the number of signals and broadcasts so far.
//!
//! # The model
//!
//! POSIX lets a wait return spuriously at any time, so a wait may return at any point after
//! it released the mutex, whether or not a signal came: `pthread_cond_wait(&c, &m)` is
//! lowered as
//!
//! 1. the waiter count is incremented (relaxed; a misuse on an uninitialised or destroyed
//!    condition variable),
//! 2. the wait **registers**: an `Acquire` load of the signal counter, while the mutex is
//!    still held,
//! 3. `m` is unlocked (the owner-checked unlock of `mutex.rs`: waiting with a mutex the thread
//!    does not hold, or holds more than once, is a misuse),
//! 4. `m` is locked again (a deadlock if it is never released),
//! 5. the waiter count is decremented.
//!
//! Signals and broadcasts increment the signal counter (relaxed read-modify-writes): a wake-up
//! is never forced, so a signal orders nothing by itself — what the waiter sees is ordered by
//! the mutex, as in every correct use. A signal that wakes every waiter is one POSIX allows
//! ("at least one"), so signal and broadcast are the same. What signals decide is whether a
//! waiter can sleep forever: if its registration read the last write of the signal counter, no
//! signal or broadcast comes after its wait began, and a waiter that is not woken spuriously
//! (POSIX promises no spurious wake-up) sleeps forever. The checker reports that as a deadlock
//! (a lost wake-up: see `ir::SyncRole::Signals`), in the execution where the waiter, woken
//! spuriously, goes on.
//!
//! A timed wait is the same without the registration: it reads the signal counter (relaxed)
//! before unlocking and again after, and returns `ETIMEDOUT` (`thrd_timedout`) when the two
//! reads saw the same count — no signal observed — else 0. It never sleeps forever, so it is
//! never a lost wake-up. Its spurious wake-ups are its time-outs but for one case: a timed
//! wait that returns 0 although no signal comes after it began is not modelled (when no signal
//! comes, the timed wait times out; the IR has no choice that is not a read, and the second
//! read has only one value to read then). A program that takes a 0 from a timed wait as proof
//! of a signal is not caught when no signal is ever sent.
//!
//! # Wait loops
//!
//! `while (C) pthread_cond_wait(&c, &m);` (also braced, with a timed wait, `cnd_wait`, or the
//! C++ `cv.wait(lk)` and `cv.wait(lk, pred)`; `C` without effects, see
//! `FnLower::reads_only`) is lowered as
//!
//! ```text
//! if (C) { wait; if (C) sleep; }
//! ```
//!
//! where *sleep* is the first half of a wait — the waiter count incremented, a registration,
//! the mutex released — followed by `assume(false)`: no loop, no unroll bound.
//!
//! **Why this explores every behaviour of the loop.** Take any execution of the loop in which
//! the waiter waits `k ≥ 1` times. Each of the first `k − 1` waits ends with `C` still true
//! and starts the next one having changed nothing but the mutex — released and locked again —
//! and the waiter count — incremented and decremented —, and having read the signal counter.
//! Dropping those iterations leaves an execution of `if (C) { wait; }` that ends the same: the
//! critical sections the other threads ran during the dropped waits can run during the last
//! one (its unlock and relock bracket them all, and the mutex's chain of read-modify-writes
//! orders them the same way through the waiter as without it), and nothing else the waiter
//! did is visible. Since a wait may return at any time (spurious wake-ups), the last wait's
//! relock can come after any of the other threads' critical sections: every way the loop can
//! exit is an execution of the lowered form — the argument of GenMC's spin-assume, with the
//! mutex as the only effect of a failing iteration. Conversely every execution of the lowered
//! form is one of the loop's.
//!
//! **The executions in which the waiter finds `C` still true** after its wait stand for those
//! in which it woke later: they are blocked, not explored further. The waiter goes to sleep
//! rather than blocking where it is, holding the mutex: a thread blocked while holding it
//! would make every thread that needs the mutex look deadlocked. Its sleep registers again
//! before it releases the mutex. Such an execution is not *settled* (see the checker's
//! deadlock detection) when a signal comes after that registration — the waiter would be
//! woken, and the graph stands for another one —, so no deadlock is reported in it; when no
//! signal comes, the waiter sleeps forever unless woken spuriously: a lost wake-up, reported.
//! So the lost wake-ups of a predicate loop are found at its first wait and after a wake-up
//! that found the predicate still true.
//!
//! Any other loop around a wait is an ordinary loop whose iterations may all wake spuriously:
//! it runs into the unroll bound. A wait under `if` is the plain wait: its spurious wake-up
//! lets the waiter go on with its predicate false, the classic bug.

use super::sync::{DESTROYED, ETIMEDOUT, THRD_TIMEDOUT};
use super::{bin, named_children, strip_parens, FnLower, Name, Place, TExpr, R};
use crate::frontend::types::{IntTy, SyncTy, Ty};
use crate::ir::{BinOp, Expr, Instr, MemOrder, RmwOp, StmtId};
use tree_sitter::Node;

/// The signal counter: the second cell of a condition variable.
fn signals(c: &Place) -> crate::ir::Addr {
    super::sync::cell(&c.addr, 1)
}

/// The types a condition wait accepts as its mutex.
pub(super) const WAIT_MUTEXES: [Ty; 2] = [Ty::Mutex, Ty::Sync(SyncTy::RecursiveMutex)];

impl FnLower<'_, '_> {
    /// `pthread_cond_{init,signal,broadcast,wait,timedwait,destroy}` and
    /// `cnd_{init,signal,broadcast,wait,timedwait,destroy}`; `None` for the other functions.
    pub(super) fn cond_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<Option<TExpr>> {
        let c11 = name.starts_with("cnd_");
        let op = name
            .strip_prefix("pthread_cond_")
            .or_else(|| name.strip_prefix("cnd_"))
            .unwrap_or("");
        let arity = match op {
            "signal" | "broadcast" | "destroy" => 1,
            "init" if c11 => 1,
            "init" | "wait" => 2,
            "timedwait" => 3,
            _ => return Ok(None),
        };
        self.arity(call, name, args, arity)?;
        let c = self.sync_target(name, args[0], &[Ty::Sync(SyncTy::Cond)])?;
        let what = format!("condition variable `{}`", c.name);
        let v = match op {
            // thrd_success is 0, like the pthread functions' success.
            "init" => {
                if !c11 {
                    self.null_attr(args[1], name, "condition variable attributes")?;
                }
                self.cond_init(&c.place, name, &what);
                Expr::Const(0)
            }
            "signal" | "broadcast" => {
                self.cond_signal(&c.place, name, &what);
                Expr::Const(0)
            }
            "destroy" => {
                self.cond_destroy(&c.place, name, &what);
                Expr::Const(0)
            }
            _ => {
                let m = self.sync_target(name, args[1], &WAIT_MUTEXES)?;
                let mwhat = format!("mutex `{}`", m.name);
                let timed = op == "timedwait";
                if timed {
                    self.deadline_arg(args[2])?;
                }
                let out = self.cond_wait(&c.place, &m.place, name, &what, &mwhat, timed);
                let code = if c11 { THRD_TIMEDOUT } else { ETIMEDOUT };
                bin(BinOp::Mul, out, Expr::Const(code))
            }
        };
        Ok(Some((v, IntTy::I32)))
    }

    /// A wait on the condition variable at `c` with the mutex at `m` (see the module doc); the
    /// value is 1 when a timed wait timed out, else 0.
    pub(super) fn cond_wait(
        &mut self,
        c: &Place,
        m: &Place,
        func: &str,
        what: &str,
        mwhat: &str,
        timed: bool,
    ) -> Expr {
        let old = self.sync_rmw(
            c.addr.clone(),
            RmwOp::Add,
            Expr::Const(1),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        let order = if timed {
            MemOrder::Relaxed
        } else {
            MemOrder::Acquire
        };
        let before = self.sync_load(signals(c), order);
        self.check_alive(&before, None, func, what);
        self.unlock_word(m, func, mwhat, true);
        let out = if timed {
            let after = self.sync_load(signals(c), MemOrder::Relaxed);
            self.sync_temp(bin(BinOp::Eq, before, after))
        } else {
            Expr::Const(0)
        };
        self.lock_word(m, func, mwhat);
        self.sync_rmw(
            c.addr.clone(),
            RmwOp::Sub,
            Expr::Const(1),
            MemOrder::Relaxed,
        );
        out
    }

    /// A waiter that woke (spuriously) and found its condition still true goes back to
    /// sleep: it registers again (while it holds the mutex), releases the mutex and blocks for
    /// good. The execution stands for those in which it wakes later (the spin-assume argument
    /// of the module doc), unless no signal comes after this registration: then the waiter
    /// sleeps forever, a lost wake-up.
    pub(super) fn cond_sleep(&mut self, c: &Place, m: &Place, func: &str, what: &str, mwhat: &str) {
        let old = self.sync_rmw(
            c.addr.clone(),
            RmwOp::Add,
            Expr::Const(1),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        self.sync_load(signals(c), MemOrder::Acquire);
        self.unlock_word(m, func, mwhat, true);
        self.emit(Instr::Assume {
            cond: Expr::Const(0),
        });
    }

    /// [`FnLower::cond_sleep`] for the wait call `call` of a wait loop (its objects are
    /// evaluated again).
    fn sleep_again(&mut self, call: Node) -> R<()> {
        let src = self.src;
        let f = call
            .child_by_field_name("function")
            .ok_or_else(|| src.internal("wait call"))?;
        if f.kind() == "field_expression" {
            return self.cv_sleep_again(call, f);
        }
        let (name, args) = self.callee(call)?;
        let c = self.sync_target(name, args[0], &[Ty::Sync(SyncTy::Cond)])?;
        let m = self.sync_target(name, args[1], &WAIT_MUTEXES)?;
        let what = format!("condition variable `{}`", c.name);
        let mwhat = format!("mutex `{}`", m.name);
        self.cond_sleep(&c.place, &m.place, name, &what, &mwhat);
        Ok(())
    }

    /// A signal or broadcast: one more on the signal counter.
    pub(super) fn cond_signal(&mut self, c: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(signals(c), RmwOp::Add, Expr::Const(1), MemOrder::Relaxed);
        self.check_alive(&old, None, func, what);
    }

    /// Initialises the condition variable: a misuse while threads wait on it.
    pub(super) fn cond_init(&mut self, c: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            c.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(0),
            MemOrder::Relaxed,
        );
        self.misuse_check(
            bin(BinOp::Le, old, Expr::Const(0)),
            format!("`{func}` re-initialises {what} while threads wait on it"),
        );
        self.emit(Instr::Store {
            loc: signals(c),
            val: Expr::Const(0),
            order: MemOrder::Relaxed,
        });
    }

    /// Destroys the condition variable: a misuse if it is not initialised or threads wait on
    /// it.
    pub(super) fn cond_destroy(&mut self, c: &Place, func: &str, what: &str) {
        let destroyed = Expr::Const(DESTROYED);
        let old = self.sync_rmw(
            c.addr.clone(),
            RmwOp::Xchg,
            destroyed.clone(),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        self.misuse_check(
            bin(BinOp::Eq, old, Expr::Const(0)),
            format!("`{func}` of {what} while threads wait on it"),
        );
        self.emit(Instr::Store {
            loc: signals(c),
            val: destroyed,
            order: MemOrder::Relaxed,
        });
    }

    /// `while (C) WAIT;` where `WAIT` is a condition wait (see [`wait_call`]) and `C` has no
    /// effect: `if (C) { WAIT; assume(!C); }` (see the module doc). `None` for other loops.
    pub(super) fn cond_wait_loop(&mut self, s: Node, sid: StmtId) -> R<Option<bool>> {
        let (Some(cond), Some(body)) = (
            s.child_by_field_name("condition"),
            s.child_by_field_name("body"),
        ) else {
            return Ok(None);
        };
        if self.wait_call(body).is_none() || self.reads_only(cond).is_none() {
            return Ok(None);
        }
        self.enter(s)?;
        let c = self.expr(cond)?;
        let exit = self.branch_unless(c);
        self.sub_body(body, sid)?;
        self.cur_stmt = sid;
        let again = self.expr(cond)?;
        let exit2 = self.branch_unless(again);
        // Still waiting: the wait's arguments again (lowered as the body statement's).
        let call = self
            .wait_call(body)
            .ok_or_else(|| self.src.internal("wait call"))?;
        self.sleep_again(call)?;
        let end = self.body.len();
        self.patch(exit, end);
        self.patch(exit2, end);
        self.depth -= 1;
        Ok(Some(false))
    }

    /// The call of a loop body that is only a condition wait (`pthread_cond_wait(...)`,
    /// `pthread_cond_timedwait(...)`, `cnd_wait(...)`, `cnd_timedwait(...)`, C++
    /// `x.wait(lock)`), possibly in braces with empty statements.
    pub(super) fn wait_call<'t>(&self, body: Node<'t>) -> Option<Node<'t>> {
        let stmt = match body.kind() {
            "compound_statement" => {
                let mut inner = named_children(body).into_iter().filter(|n| {
                    !(n.kind() == "expression_statement" && n.named_child_count() == 0)
                });
                let one = inner.next()?;
                if inner.next().is_some() {
                    return None;
                }
                one
            }
            _ => body,
        };
        if stmt.kind() != "expression_statement" {
            return None;
        }
        let call = strip_parens(*named_children(stmt).first()?);
        let f = call.child_by_field_name("function")?;
        let nargs = call
            .child_by_field_name("arguments")
            .map(named_children)?
            .len();
        let src = self.src;
        let is_wait = match f.kind() {
            "identifier" => {
                matches!(
                    src.text(f),
                    "pthread_cond_wait" | "pthread_cond_timedwait" | "cnd_wait" | "cnd_timedwait"
                ) && matches!(self.lookup(src.text(f)), Name::Unknown)
            }
            "field_expression" => {
                f.child_by_field_name("field").map(|m| src.text(m)) == Some("wait") && nargs == 1
            }
            _ => false,
        };
        (call.kind() == "call_expression" && is_wait).then_some(call)
    }
}
