//! Read-write locks (`pthread_rwlock_*`, and C++ `std::shared_mutex` through `cpp_sync.rs`)
//! over the rwlock word of `sync.rs`: the readers holding or waiting for the lock in the low
//! bits, the writer's thread id + 1 above them (a writer also counts as one reader).
//!
//! * A reader adds itself (an acquire fetch-add); if a writer held the lock, it then waits
//!   (acquire load + assume) until no writer does. No compare-and-swap, so no retry: a reader
//!   blocked on the word that read its last write waits for a writer that never leaves, which
//!   the checker reports as a deadlock. Readers are preferred: a waiting writer does not stop
//!   new readers (POSIX lets readers in unless the threads are real-time).
//! * A writer takes the word from 0 (an acquire CAS to `writer + 1`) and waits (assume) when it
//!   finds readers or a writer — a failed CAS that read the last write is a deadlock.
//! * `pthread_rwlock_unlock` is one release fetch-sub of 1; when the thread was the writer (the
//!   value read says so), a second one clears the writer field, which lets the readers that
//!   arrived meanwhile in. A reader unlock of a lock no thread holds is a misuse (which reader
//!   holds it is not recorded).
//! * `tryrdlock` is the reader's fetch-add, taken back (a fetch-sub) when a writer holds the
//!   lock; `trywrlock` the writer's CAS without the wait; the timed locks are the try locks
//!   (they time out exactly when a try lock would fail, when the lock is busy at the time they
//!   read it). Between a failing tryrdlock's two read-modify-writes a writer can find the lock
//!   busy although the writer that held it has left: a behaviour POSIX does not have, so a
//!   trywrlock's failure there is an over-approximation (no behaviour is missing).

use super::sync::{not, DESTROYED, EBUSY, ETIMEDOUT, READERS, WRITER_SHIFT};
use super::{bin, FnLower, Place, TExpr, R};
use crate::frontend::types::{IntTy, SyncTy, Ty};
use crate::ir::{BinOp, Expr, Instr, MemOrder, RmwOp};
use tree_sitter::Node;

/// Which lock a `pthread_rwlock_unlock` (or a C++ unlock) releases.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Release {
    /// Whichever the thread holds (`pthread_rwlock_unlock`).
    Any,
    /// The write lock (`std::shared_mutex::unlock`).
    Exclusive,
    /// A read lock (`std::shared_mutex::unlock_shared`).
    Shared,
}

/// `old >> WRITER_SHIFT`: the writer field of a word.
fn writer(old: Expr) -> Expr {
    bin(BinOp::Shr, old, Expr::Const(WRITER_SHIFT))
}

impl FnLower<'_, '_> {
    /// `pthread_rwlock_{init,rdlock,wrlock,tryrdlock,trywrlock,timedrdlock,timedwrlock,unlock,
    /// destroy}`; `None` for the other functions.
    pub(super) fn rwlock_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
    ) -> R<Option<TExpr>> {
        let op = name.strip_prefix("pthread_rwlock_").unwrap_or("");
        let arity = match op {
            "rdlock" | "wrlock" | "tryrdlock" | "trywrlock" | "unlock" | "destroy" => 1,
            "init" | "timedrdlock" | "timedwrlock" => 2,
            _ => return Ok(None),
        };
        self.arity(call, name, args, arity)?;
        let rw = self.sync_target(name, args[0], &[Ty::Sync(SyncTy::RwLock)])?;
        let what = format!("rwlock `{}`", rw.name);
        let (p, w) = (&rw.place, what.as_str());
        let v = match op {
            "init" => {
                self.null_attr(args[1], name, "rwlock attributes")?;
                self.rwlock_init(p, name, w);
                Expr::Const(0)
            }
            "rdlock" => {
                self.read_lock(p, name, w);
                Expr::Const(0)
            }
            "wrlock" => {
                self.write_lock(p, name, w);
                Expr::Const(0)
            }
            "tryrdlock" | "timedrdlock" | "trywrlock" | "timedwrlock" => {
                if arity == 2 {
                    self.deadline_arg(args[1])?;
                }
                let ok = if op.ends_with("rdlock") {
                    self.try_read_lock(p, name, w)
                } else {
                    self.try_write_lock(p, name, w)
                };
                let code = if op.starts_with("try") {
                    EBUSY
                } else {
                    ETIMEDOUT
                };
                bin(
                    BinOp::Mul,
                    bin(BinOp::Sub, Expr::Const(1), ok),
                    Expr::Const(code),
                )
            }
            "unlock" => {
                self.rwlock_unlock(p, name, w, Release::Any);
                Expr::Const(0)
            }
            _ => {
                self.rwlock_destroy(p, name, w);
                Expr::Const(0)
            }
        };
        Ok(Some((v, IntTy::I32)))
    }

    /// Takes a read lock: adds the thread to the readers, then waits while a writer holds it.
    pub(super) fn read_lock(&mut self, rw: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Add,
            Expr::Const(1),
            MemOrder::Acquire,
        );
        self.check_alive(&old, None, func, what);
        let done = self.branch_unless(bin(BinOp::Ne, writer(old), Expr::Const(0)));
        let v = self.sync_load(rw.addr.clone(), MemOrder::Acquire);
        self.emit(Instr::Assume {
            cond: bin(BinOp::Eq, writer(v), Expr::Const(0)),
        });
        let end = self.body.len();
        self.patch(done, end);
    }

    /// The CAS of a writer from a free lock to `(me << 32) + 1`: `(ok, old)`.
    fn writer_cas(&mut self, rw: &Place, func: &str, what: &str) -> Expr {
        let me = self.owner_value();
        let desired = bin(
            BinOp::Add,
            bin(BinOp::Shl, me, Expr::Const(WRITER_SHIFT)),
            Expr::Const(1),
        );
        let (ok, old) = self.sync_cas(rw.addr.clone(), Expr::Const(0), desired, MemOrder::Acquire);
        self.check_alive(&old, Some(&ok), func, what);
        ok
    }

    /// Takes the write lock: waits until the lock is free.
    pub(super) fn write_lock(&mut self, rw: &Place, func: &str, what: &str) {
        let ok = self.writer_cas(rw, func, what);
        self.emit(Instr::Assume { cond: ok });
    }

    /// Tries to take the write lock; the value is 1 on success.
    pub(super) fn try_write_lock(&mut self, rw: &Place, func: &str, what: &str) -> Expr {
        self.writer_cas(rw, func, what)
    }

    /// Tries to take a read lock: the reader's fetch-add, taken back when a writer holds the
    /// lock; the value is 1 on success.
    pub(super) fn try_read_lock(&mut self, rw: &Place, func: &str, what: &str) -> Expr {
        let old = self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Add,
            Expr::Const(1),
            MemOrder::Acquire,
        );
        self.check_alive(&old, None, func, what);
        let free = self.sync_temp(bin(BinOp::Eq, writer(old), Expr::Const(0)));
        let done = self.branch_unless(not(free.clone()));
        self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Sub,
            Expr::Const(1),
            MemOrder::Relaxed,
        );
        let end = self.body.len();
        self.patch(done, end);
        free
    }

    /// Releases the lock the thread holds (`mode` says which it must be).
    pub(super) fn rwlock_unlock(&mut self, rw: &Place, func: &str, what: &str, mode: Release) {
        let me = self.owner_value();
        let old = self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Sub,
            Expr::Const(1),
            MemOrder::Release,
        );
        self.check_alive(&old, None, func, what);
        let w = self.sync_temp(writer(old.clone()));
        let not_held = format!("`{func}` of {what}, which this thread does not hold");
        match mode {
            Release::Exclusive => self.misuse_check(
                bin(BinOp::Eq, w.clone(), me.clone()),
                format!("`{func}` of {what}, which this thread does not hold exclusively"),
            ),
            Release::Shared => self.misuse_check(
                bin(BinOp::Eq, w.clone(), Expr::Const(0)),
                format!("`{func}` of {what}, which is locked exclusively"),
            ),
            Release::Any => {}
        }
        let reader = self.branch_unless(bin(BinOp::Ne, w.clone(), Expr::Const(0)));
        self.misuse_check(bin(BinOp::Eq, w, me.clone()), not_held.clone());
        let mine = bin(BinOp::Shl, me, Expr::Const(WRITER_SHIFT));
        self.sync_rmw(rw.addr.clone(), RmwOp::Sub, mine, MemOrder::Release);
        let done = self.emit(Instr::Jump { target: 0 });
        let here = self.body.len();
        self.patch(reader, here);
        let readers = bin(BinOp::BitAnd, old, Expr::Const(READERS));
        self.misuse_check(bin(BinOp::Ne, readers, Expr::Const(0)), not_held);
        let end = self.body.len();
        self.patch(done, end);
    }

    /// Initialises the rwlock (free): a misuse while it is held.
    pub(super) fn rwlock_init(&mut self, rw: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(0),
            MemOrder::Relaxed,
        );
        self.misuse_check(
            bin(BinOp::Le, old, Expr::Const(0)),
            format!("`{func}` re-initialises {what} while it is held"),
        );
    }

    /// Destroys the rwlock: a misuse if it is not initialised, or held.
    pub(super) fn rwlock_destroy(&mut self, rw: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            rw.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(DESTROYED),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        self.misuse_check(
            bin(BinOp::Eq, old, Expr::Const(0)),
            format!("`{func}` of {what} while it is held"),
        );
    }
}
