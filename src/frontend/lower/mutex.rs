//! Mutexes (`pthread_mutex_*`, C11 `mtx_*`), spinlocks (`pthread_spin_*`) and mutex
//! attributes (`pthread_mutexattr_*`), over the lock word of `sync.rs`, the way GenMC models
//! a lock — an acquire compare-and-swap from unlocked, followed by `assume(ok)` (a thread
//! that finds it held blocks; the checker tells a deadlock from a blocked execution) — with the
//! owner recorded (the thread id + 1 instead of 1), so that an unlock is a release
//! compare-and-swap from the thread's own value: unlocking a mutex the thread does not hold is
//! a misuse. A lock, trylock or unlock of a mutex costs the events it cost with the 0/1 word:
//! one CAS (the unlock's reads only the lock's own write: the counts are those of a release
//! store). The kind of the mutex (recursive, `mtx_timed`) is a second cell, read only when
//! the owner locks it again (and by `mtx_timedlock`): a recursive relock adds a level to the
//! word, a recursive unlock of a level takes one off.

use super::sync::{
    cell, not, DEPTH, DEPTH_UNIT, DESTROYED, EBUSY, ETIMEDOUT, MTX_RECURSIVE, MTX_TIMED,
    MUTEX_RECURSIVE_TYPE, OWNER, RECURSIVE, THRD_BUSY, THRD_SUCCESS, THRD_TIMEDOUT, TIMED,
};
use super::{bin, FnLower, Place, TExpr, R};
use crate::frontend::types::{IntTy, SyncTy, Ty};
use crate::frontend::{Diagnostic, Src};
use crate::ir::{Addr, BinOp, Expr, Instr, MemOrder, RmwOp};
use tree_sitter::Node;

/// The diagnostic for the mutex `name` used by name (`write`: as the target of an assignment)
/// rather than as `&name` in a `pthread_mutex_*` call.
pub(super) fn misuse(src: &Src, n: Node, name: &str, write: bool) -> Diagnostic {
    object_misuse(src, n, name, "pthread_mutex_t", write)
}

/// The diagnostic for the synchronisation object `name` of type `ty` (its C spelling) used by
/// name rather than through its functions.
pub(super) fn object_misuse(src: &Src, n: Node, name: &str, ty: &str, write: bool) -> Diagnostic {
    let what = if write {
        format!("assignment to {ty} `{name}`")
    } else {
        format!("{ty} `{name}` used as a value")
    };
    src.error(
        n,
        &format!(
            "{what} (a {ty} is not an integer: it can only be passed as `&{name}` to its \
             functions)"
        ),
    )
}

/// The kind cell of the lock word at `m` (none for a spinlock: never recursive).
fn kind_cell(m: &Place) -> Option<Addr> {
    matches!(m.ty, Ty::Mutex | Ty::Sync(SyncTy::RecursiveMutex)).then(|| cell(&m.addr, 1))
}

/// `(1 - ok) * code`: 0 when `ok`, else the error `code`.
fn unless_ok(ok: Expr, code: i64) -> Expr {
    bin(
        BinOp::Mul,
        bin(BinOp::Sub, Expr::Const(1), ok),
        Expr::Const(code),
    )
}

impl FnLower<'_, '_> {
    /// `pthread_mutex_{lock,trylock,timedlock,unlock,init,destroy}` and
    /// `pthread_spin_{lock,trylock,unlock,init,destroy}`; `None` for the other functions.
    pub(super) fn mutex_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<Option<TExpr>> {
        let (spin, op) = match (
            name.strip_prefix("pthread_mutex_"),
            name.strip_prefix("pthread_spin_"),
        ) {
            (Some(op), _) => (false, op),
            (_, Some(op)) => (true, op),
            _ => return Ok(None),
        };
        let arity = match op {
            "lock" | "trylock" | "unlock" | "destroy" => 1,
            "init" => 2,
            "timedlock" if !spin => 2,
            _ => return Ok(None),
        };
        self.arity(call, name, args, arity)?;
        let want = if spin {
            Ty::Sync(SyncTy::Spinlock)
        } else {
            Ty::Mutex
        };
        let m = self.sync_target(name, args[0], &[want])?;
        let what = format!("{} `{}`", if spin { "spinlock" } else { "mutex" }, m.name);
        match op {
            "lock" => self.lock_word(&m.place, name, &what),
            "unlock" => self.unlock_word(&m.place, name, &what, false),
            "trylock" => {
                let ok = self.try_word(&m.place, name, &what, false);
                return Ok(Some((unless_ok(ok, EBUSY), IntTy::I32)));
            }
            "timedlock" => {
                self.deadline_arg(args[1])?;
                let ok = self.try_word(&m.place, name, &what, false);
                return Ok(Some((unless_ok(ok, ETIMEDOUT), IntTy::I32)));
            }
            "init" if spin => {
                // The process-shared flag changes nothing within one process.
                self.expr(args[1])?;
                self.init_word(&m.place, Expr::Const(0), name, &what)
            }
            "init" => {
                let flags = self.attr_flags(name, args[1])?;
                self.init_word(&m.place, flags, name, &what)
            }
            _ => self.destroy_word(&m.place, name, &what),
        }
        Ok(Some((Expr::Const(0), IntTy::I32)))
    }

    /// C11 `mtx_init(&m, type)`, `mtx_lock`, `mtx_trylock`, `mtx_timedlock(&m, &deadline)`,
    /// `mtx_unlock`, `mtx_destroy`: `thrd_success` unless said otherwise.
    pub(super) fn mtx_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<Option<TExpr>> {
        let arity = match name {
            "mtx_lock" | "mtx_trylock" | "mtx_unlock" | "mtx_destroy" => 1,
            "mtx_init" | "mtx_timedlock" => 2,
            _ => return Ok(None),
        };
        self.arity(call, name, args, arity)?;
        let m = self.sync_target(name, args[0], &[Ty::Mutex])?;
        let what = format!("mutex `{}`", m.name);
        let success = (Expr::Const(THRD_SUCCESS), IntTy::I32);
        match name {
            "mtx_init" => {
                let t = self.expr(args[1])?;
                let t = self.sync_temp(t);
                let flag = |bit: i64, flag: i64| {
                    bin(
                        BinOp::Mul,
                        bin(
                            BinOp::Ne,
                            bin(BinOp::BitAnd, t.clone(), Expr::Const(bit)),
                            Expr::Const(0),
                        ),
                        Expr::Const(flag),
                    )
                };
                let flags = bin(
                    BinOp::Add,
                    flag(MTX_RECURSIVE, RECURSIVE),
                    flag(MTX_TIMED, TIMED),
                );
                self.init_word(&m.place, flags, name, &what);
            }
            "mtx_lock" => self.lock_word(&m.place, name, &what),
            "mtx_unlock" => self.unlock_word(&m.place, name, &what, false),
            "mtx_trylock" => {
                let ok = self.try_word(&m.place, name, &what, false);
                return Ok(Some((unless_ok(ok, THRD_BUSY), IntTy::I32)));
            }
            "mtx_timedlock" => {
                self.deadline_arg(args[1])?;
                let ok = self.try_word(&m.place, name, &what, true);
                return Ok(Some((unless_ok(ok, THRD_TIMEDOUT), IntTy::I32)));
            }
            _ => self.destroy_word(&m.place, name, &what),
        }
        Ok(Some(success))
    }

    /// `pthread_mutexattr_init(&a)`, `pthread_mutexattr_settype(&a, type)` (normal, default,
    /// error-checking, recursive), `pthread_mutexattr_setpshared(&a, v)` (no effect within one
    /// process), `pthread_mutexattr_destroy(&a)`. The other attributes (robustness, protocol,
    /// priority ceiling) change what a mutex does and are refused.
    pub(super) fn mutexattr_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
    ) -> R<Option<TExpr>> {
        let arity = match name {
            "pthread_mutexattr_init" | "pthread_mutexattr_destroy" => 1,
            "pthread_mutexattr_settype" | "pthread_mutexattr_setpshared" => 2,
            _ => return Ok(None),
        };
        self.arity(call, name, args, arity)?;
        let a = self.sync_target(name, args[0], &[Ty::Sync(SyncTy::MutexAttr)])?;
        let addr = a.place.addr.clone();
        let store = |l: &mut Self, val: Expr| {
            l.emit(Instr::Store {
                loc: addr.clone(),
                val,
                order: MemOrder::Relaxed,
            });
        };
        if name == "pthread_mutexattr_init" {
            store(self, Expr::Const(1));
            return Ok(Some((Expr::Const(0), IntTy::I32)));
        }
        let t = self.sync_load(a.place.addr.clone(), MemOrder::Relaxed);
        self.misuse_check(
            bin(BinOp::Ne, t, Expr::Const(0)),
            format!("`{name}` on uninitialised mutex attribute `{}`", a.name),
        );
        match name {
            "pthread_mutexattr_settype" => {
                let ty = self.expr(args[1])?;
                let ty = self.sync_temp(ty);
                let valid = bin(
                    BinOp::And,
                    bin(BinOp::Ge, ty.clone(), Expr::Const(0)),
                    bin(BinOp::Le, ty.clone(), Expr::Const(2)),
                );
                self.misuse_check(
                    valid,
                    format!("`{name}` with an invalid mutex type for `{}`", a.name),
                );
                store(self, bin(BinOp::Add, ty, Expr::Const(1)));
            }
            "pthread_mutexattr_setpshared" => {
                self.expr(args[1])?;
            }
            _ => store(self, Expr::Const(0)),
        }
        Ok(Some((Expr::Const(0), IntTy::I32)))
    }

    /// The flags a mutex gets from the attribute argument `arg` of `func`: none for `NULL`,
    /// [`RECURSIVE`] for an attribute whose type is `PTHREAD_MUTEX_RECURSIVE`.
    fn attr_flags(&mut self, func: &str, arg: Node) -> R<Expr> {
        if self.is_null(arg) {
            return Ok(Expr::Const(0));
        }
        let a = self.sync_target(func, arg, &[Ty::Sync(SyncTy::MutexAttr)])?;
        let t = self.sync_load(a.place.addr, MemOrder::Relaxed);
        let t = self.sync_temp(t);
        self.misuse_check(
            bin(BinOp::Ne, t.clone(), Expr::Const(0)),
            format!("`{func}` with uninitialised mutex attribute `{}`", a.name),
        );
        let recursive = bin(BinOp::Eq, t, Expr::Const(1 + MUTEX_RECURSIVE_TYPE));
        Ok(bin(BinOp::Mul, recursive, Expr::Const(RECURSIVE)))
    }

    /// Locks the lock word at `m` (`what` names it in messages, `func` is the call): an
    /// acquire CAS from 0 to the thread's value. If it fails, a mutex another thread holds
    /// blocks the thread (a deadlock when the CAS read the word's last write); one the thread
    /// holds itself gets one more level if its kind is recursive, and otherwise blocks the
    /// thread for good (after reading its own word again, so that the checker sees a thread
    /// waiting for the word).
    pub(super) fn lock_word(&mut self, m: &Place, func: &str, what: &str) {
        let me = self.owner_value();
        let (ok, old) = self.sync_cas(
            m.addr.clone(),
            Expr::Const(0),
            me.clone(),
            MemOrder::Acquire,
        );
        let done = self.branch_unless(not(ok));
        self.check_alive(&old, None, func, what);
        let owner = bin(BinOp::BitAnd, old, Expr::Const(OWNER));
        let other = self.branch_unless(bin(BinOp::Eq, owner, me));
        let mut relocked = None;
        if let Some(kind) = kind_cell(m) {
            let k = self.sync_load(kind, MemOrder::Relaxed);
            let recursive = bin(BinOp::BitAnd, k, Expr::Const(RECURSIVE));
            let not_recursive = self.branch_unless(recursive);
            self.sync_rmw(
                m.addr.clone(),
                RmwOp::Add,
                Expr::Const(DEPTH_UNIT),
                MemOrder::Relaxed,
            );
            relocked = Some(self.emit(Instr::Jump { target: 0 }));
            let here = self.body.len();
            self.patch(not_recursive, here);
        }
        // Locking again a mutex it holds, not recursive: it waits for itself.
        self.sync_load(m.addr.clone(), MemOrder::Relaxed);
        let here = self.body.len();
        self.patch(other, here);
        self.emit(Instr::Assume {
            cond: Expr::Const(0),
        });
        let end = self.body.len();
        self.patch(done, end);
        if let Some(j) = relocked {
            self.patch(j, end);
        }
    }

    /// Tries to lock the lock word at `m` without blocking (`pthread_mutex_trylock`, and the
    /// timed locks, which time out exactly when a trylock would fail: when the mutex is held
    /// at the time the lock reads it); the value is 1 on success, 0 when it is held (by
    /// another thread, or by this one and not recursive). With `timed`, the mutex must be a
    /// C11 `mtx_timed` one.
    pub(super) fn try_word(&mut self, m: &Place, func: &str, what: &str, timed: bool) -> Expr {
        let kind = kind_cell(m);
        let k = match (&kind, timed) {
            (Some(kind), true) => {
                let k = self.sync_load(kind.clone(), MemOrder::Relaxed);
                let k = self.sync_temp(k);
                let flagged = bin(BinOp::BitAnd, k.clone(), Expr::Const(TIMED));
                self.misuse_check(
                    bin(BinOp::Ne, flagged, Expr::Const(0)),
                    format!("`{func}` on {what}, which is not initialised with mtx_timed"),
                );
                Some(k)
            }
            _ => None,
        };
        let me = self.owner_value();
        let (ok, old) = self.sync_cas(
            m.addr.clone(),
            Expr::Const(0),
            me.clone(),
            MemOrder::Acquire,
        );
        let res = self.new_temp(IntTy::Bool);
        self.emit(Instr::Assign {
            dst: res,
            val: ok.clone(),
        });
        let done = self.branch_unless(not(ok));
        self.check_alive(&old, None, func, what);
        let owner = bin(BinOp::BitAnd, old, Expr::Const(OWNER));
        let other = self.branch_unless(bin(BinOp::Eq, owner, me));
        let mut skips = vec![done, other];
        if let Some(kind) = kind {
            let k = match k {
                Some(k) => k,
                None => self.sync_load(kind, MemOrder::Relaxed),
            };
            skips.push(self.branch_unless(bin(BinOp::BitAnd, k, Expr::Const(RECURSIVE))));
            self.sync_rmw(
                m.addr.clone(),
                RmwOp::Add,
                Expr::Const(DEPTH_UNIT),
                MemOrder::Relaxed,
            );
            self.emit(Instr::Assign {
                dst: res,
                val: Expr::Const(1),
            });
        }
        let end = self.body.len();
        for pc in skips {
            self.patch(pc, end);
        }
        Expr::Reg(res)
    }

    /// Unlocks the lock word at `m`: a release CAS from the thread's value to 0. If it fails,
    /// the thread must hold the mutex (a misuse otherwise), and then it holds it more than
    /// once: a level goes. With `full` (a condition wait), the mutex must be held exactly
    /// once.
    pub(super) fn unlock_word(&mut self, m: &Place, func: &str, what: &str, full: bool) {
        let me = self.owner_value();
        let (ok, old) = self.sync_cas(
            m.addr.clone(),
            me.clone(),
            Expr::Const(0),
            MemOrder::Release,
        );
        let done = self.branch_unless(not(ok));
        self.check_alive(&old, None, func, what);
        let owner = bin(BinOp::BitAnd, old.clone(), Expr::Const(OWNER));
        self.misuse_check(
            bin(BinOp::Eq, owner, me),
            format!("`{func}` of {what}, which this thread does not hold"),
        );
        if full {
            let depth = bin(BinOp::BitAnd, old, Expr::Const(DEPTH));
            self.misuse_check(
                bin(BinOp::Eq, depth, Expr::Const(0)),
                format!("`{func}` with {what} locked more than once (a wait releases it once)"),
            );
        }
        self.sync_rmw(
            m.addr.clone(),
            RmwOp::Sub,
            Expr::Const(DEPTH_UNIT),
            MemOrder::Relaxed,
        );
        let end = self.body.len();
        self.patch(done, end);
    }

    /// Initialises the lock word at `m` (unlocked: a relaxed exchange of 0, like
    /// `atomic_init`; a misuse while the mutex is locked — an unlocked one cannot be told from
    /// a zero-initialised global, which may be initialised) and its kind to `flags`.
    pub(super) fn init_word(&mut self, m: &Place, flags: Expr, func: &str, what: &str) {
        let old = self.sync_rmw(
            m.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(0),
            MemOrder::Relaxed,
        );
        let unlocked = bin(
            BinOp::Or,
            bin(BinOp::Lt, old.clone(), Expr::Const(0)),
            bin(
                BinOp::Eq,
                bin(BinOp::BitAnd, old, Expr::Const(OWNER)),
                Expr::Const(0),
            ),
        );
        self.misuse_check(
            unlocked,
            format!("`{func}` re-initialises {what} while it is locked"),
        );
        if let Some(kind) = kind_cell(m) {
            self.emit(Instr::Store {
                loc: kind,
                val: flags,
                order: MemOrder::Relaxed,
            });
        }
    }

    /// Destroys the lock word at `m`: a misuse if it is not initialised or still locked.
    pub(super) fn destroy_word(&mut self, m: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            m.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(DESTROYED),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        self.misuse_check(
            bin(
                BinOp::Eq,
                bin(BinOp::BitAnd, old, Expr::Const(OWNER)),
                Expr::Const(0),
            ),
            format!("`{func}` of {what} while it is locked"),
        );
    }
}
