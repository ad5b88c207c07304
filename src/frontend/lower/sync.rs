//! Synchronisation objects: the encoding of their cells (this is the one place that documents
//! it), the dispatch of their library calls, the checks they share, the library constants
//! (`EBUSY`, `PTHREAD_BARRIER_SERIAL_THREAD`, `thrd_busy`, ...) and barriers. Mutexes,
//! spinlocks and mutex attributes are in `mutex.rs`, rwlocks in `rwlock.rs`, condition
//! variables in `cond.rs`, the C++ classes in `cpp_sync.rs`.
//!
//! # Cells and values
//!
//! Every object is one or more atomic cells ([`layout`]); every operation is lowered through
//! the object's [`Place`] (a global, `locks[i]`, `s.m`, `*p`), so it works wherever the object
//! lives. In every cell a negative value means the object is not usable: [`UNINIT`] (and the
//! values a misused read-modify-write made of it, `UNINIT + k`) is a local object whose init
//! function has not run, [`DESTROYED`] (`+ k`) one whose destroy function ran. Valid values
//! are below 2^48, so `v >> 48` is `-1` for the first, `-2` for the second.
//!
//! | object | cells | values |
//! |---|---|---|
//! | `pthread_mutex_t`, `mtx_t`, `std::mutex`, `std::recursive_mutex` | lock word, `#kind` | word: bits 0–15 the owner (thread id + 1, 0 = unlocked), bits 16–31 the recursion depth − 1; kind: [`RECURSIVE`], [`TIMED`] (`mtx_timed`), set by the init function |
//! | `pthread_spinlock_t` | lock word | as a mutex's (never recursive) |
//! | `pthread_rwlock_t`, `std::shared_mutex` | lock word | bits 0–31: readers holding or waiting (a writer counts one too); bits 32–47: writer (thread id + 1) |
//! | `pthread_barrier_t` | arrivals, `#round` | arrivals: count << 32 \| threads arrived so far (all rounds); round: rounds completed |
//! | `pthread_cond_t`, `cnd_t`, `std::condition_variable` | waiters, `#signals` | waiters: threads inside a wait; signals: signals and broadcasts so far |
//! | `pthread_mutexattr_t` | type | 0 = not initialised, else 1 + the mutex type |
//!
//! A global or `static` object without initialiser is zero: an unlocked mutex, a free rwlock,
//! a condition variable without waiters — what their static initialisers are in practice —
//! but an uninitialised barrier (count 0) and mutex attribute. [`initial_cells`] gives the
//! initial cells of each kind, also for local objects (indeterminate until their init
//! function runs) and C++ objects (constructed).

use super::{bin, strip_parens, un, FnLower, Name, Place, TExpr, R};
use crate::frontend::types::{IntTy, SyncTy, Ty};
use crate::ir::{
    Addr, BinOp, CheckKind, Expr, Instr, MemOrder, RmwOp, SyncCell, SyncKind, SyncRole, UnOp,
};
use tree_sitter::Node;

/// A local object before its init function ran.
pub(crate) const UNINIT: i64 = -(1 << 48);
/// An object after its destroy function ran.
pub(crate) const DESTROYED: i64 = -(2 << 48);
/// `v >> STATE_SHIFT` tells [`UNINIT`] (-1) and [`DESTROYED`] (-2) from valid values (≥ 0).
const STATE_SHIFT: i64 = 48;

/// Mutex word: the owner field (thread id + 1; 0 when unlocked).
pub(crate) const OWNER: i64 = 0xffff;
/// Mutex word: one more level of recursion (bits 16–31 hold the depth − 1).
pub(crate) const DEPTH_UNIT: i64 = 1 << 16;
pub(crate) const DEPTH: i64 = 0xffff << 16;
/// Mutex kind: a recursive mutex (`PTHREAD_MUTEX_RECURSIVE`, `mtx_recursive`,
/// `std::recursive_mutex`). The kind is a cell of its own, read only when the owner locks the
/// mutex again (and by `mtx_timedlock`): a lock from unlocked stays one compare-and-swap from
/// 0, whatever the kind.
pub(crate) const RECURSIVE: i64 = 1;
/// Mutex kind: a C11 `mtx_timed` mutex (the only kind `mtx_timedlock` may be used on).
pub(crate) const TIMED: i64 = 2;

/// Rwlock word: the readers field.
pub(crate) const READERS: i64 = 0xffff_ffff;
/// Rwlock word: the writer field starts here.
pub(crate) const WRITER_SHIFT: i64 = 32;

/// Barrier arrivals: the count starts here, the arrivals below.
pub(crate) const COUNT_SHIFT: i64 = 32;
pub(crate) const ARRIVED: i64 = 0xffff_ffff;
/// The largest barrier count.
const MAX_COUNT: i64 = 0xffff;

/// POSIX error numbers and C11 results (glibc's values).
pub(crate) const EBUSY: i64 = 16;
pub(crate) const ETIMEDOUT: i64 = 110;
pub(crate) const THRD_SUCCESS: i64 = 0;
pub(crate) const THRD_BUSY: i64 = 1;
pub(crate) const THRD_TIMEDOUT: i64 = 4;
/// The mutex types of `pthread_mutexattr_settype` (glibc's values).
pub(crate) const MUTEX_RECURSIVE_TYPE: i64 = 1;
/// C11 `mtx_init` types.
pub(crate) const MTX_RECURSIVE: i64 = 1;
pub(crate) const MTX_TIMED: i64 = 2;

/// Library constants usable in expressions (glibc's values).
pub(crate) fn library_constant(name: &str) -> Option<i64> {
    Some(match name {
        "EBUSY" => EBUSY,
        "ETIMEDOUT" => ETIMEDOUT,
        "EPERM" => 1,
        "EINVAL" => 22,
        "EDEADLK" => 35,
        "PTHREAD_BARRIER_SERIAL_THREAD" => -1,
        "PTHREAD_MUTEX_NORMAL" | "PTHREAD_MUTEX_DEFAULT" | "PTHREAD_MUTEX_TIMED_NP" => 0,
        "PTHREAD_MUTEX_RECURSIVE" | "PTHREAD_MUTEX_RECURSIVE_NP" => MUTEX_RECURSIVE_TYPE,
        "PTHREAD_MUTEX_ERRORCHECK" | "PTHREAD_MUTEX_ERRORCHECK_NP" => 2,
        "PTHREAD_PROCESS_PRIVATE" => 0,
        "PTHREAD_PROCESS_SHARED" => 1,
        "thrd_success" => THRD_SUCCESS,
        "thrd_busy" => THRD_BUSY,
        "thrd_error" => 2,
        "thrd_nomem" => 3,
        "thrd_timedout" => THRD_TIMEDOUT,
        "mtx_plain" => 0,
        "mtx_recursive" => MTX_RECURSIVE,
        "mtx_timed" => MTX_TIMED,
        _ => return None,
    })
}

/// How an object's cells start. (Globals and `static` locals are [`Initial::Zero`]; the
/// other cases are for objects declared in function bodies.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Initial {
    /// A global or `static` C object without initialiser: zero.
    Zero,
    /// A local C object without initialiser: indeterminate until its init function runs.
    Indeterminate,
    /// A C++ object (`std::mutex`, `std::condition_variable`, ...): its constructor ran.
    Constructed,
}

/// The cells of a synchronisation object of type `ty`: the suffix of each cell's name (the
/// object's name for the first) and, except for attributes, its kind and role.
pub(crate) fn layout(ty: &Ty) -> Vec<(&'static str, Option<(SyncKind, SyncRole)>)> {
    use SyncRole::*;
    match ty {
        Ty::Mutex | Ty::Sync(SyncTy::RecursiveMutex) => vec![
            ("", Some((SyncKind::Mutex, Wait))),
            ("#kind", Some((SyncKind::Mutex, State))),
        ],
        Ty::Sync(SyncTy::Spinlock) => vec![("", Some((SyncKind::Spinlock, Wait)))],
        Ty::Sync(SyncTy::RwLock) => vec![("", Some((SyncKind::RwLock, Wait)))],
        Ty::Sync(SyncTy::Barrier) => vec![
            ("", Some((SyncKind::Barrier, State))),
            ("#round", Some((SyncKind::Barrier, Wait))),
        ],
        Ty::Sync(SyncTy::Cond) => vec![
            ("", Some((SyncKind::CondVar, State))),
            ("#signals", Some((SyncKind::CondVar, Signals))),
        ],
        Ty::Sync(SyncTy::MutexAttr) => vec![("", None)],
        _ => Vec::new(),
    }
}

/// The number of cells of a [`SyncTy`].
pub(crate) fn sync_cells(k: SyncTy) -> usize {
    layout(&Ty::Sync(k)).len()
}

/// The cells of the object `name` of type `ty`: name, and the [`SyncCell`] of each.
pub(crate) fn cells(name: &str, ty: &Ty) -> Vec<(String, Option<SyncCell>)> {
    layout(ty)
        .into_iter()
        .map(|(suffix, sync)| {
            let cell = sync.map(|(kind, role)| SyncCell {
                kind,
                role,
                object: name.to_string(),
            });
            (format!("{name}{suffix}"), cell)
        })
        .collect()
}

/// The initial values of the cells of an object of type `ty` (`None` if `ty` is not a
/// synchronisation object). A static initialiser replaces them ([`static_initializer`]).
pub(crate) fn initial_cells(ty: &Ty, how: Initial) -> Option<Vec<i64>> {
    let n = layout(ty).len();
    if n == 0 {
        return None;
    }
    let cxx_class = matches!(ty, Ty::Mutex | Ty::Sync(SyncTy::RwLock | SyncTy::Cond));
    Some(match (ty, how) {
        (Ty::Sync(SyncTy::RecursiveMutex), _) => vec![0, RECURSIVE],
        (_, Initial::Zero) => vec![0; n],
        (_, Initial::Constructed) if cxx_class => vec![0; n],
        _ => vec![UNINIT; n],
    })
}

/// The cells set by the static initialiser `name` (`PTHREAD_MUTEX_INITIALIZER`, ...) of an
/// object of type `ty`, or `None` if it is not one for `ty`.
pub(crate) fn static_initializer(ty: &Ty, name: &str) -> Option<Vec<i64>> {
    Some(match (ty, name) {
        (Ty::Mutex, "PTHREAD_MUTEX_INITIALIZER" | "PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP") => {
            vec![0, 0]
        }
        (Ty::Mutex, "PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP") => vec![0, RECURSIVE],
        (Ty::Sync(SyncTy::RwLock), "PTHREAD_RWLOCK_INITIALIZER") => vec![0],
        (Ty::Sync(SyncTy::Cond), "PTHREAD_COND_INITIALIZER") => vec![0, 0],
        _ => return None,
    })
}

/// The static initialisers that exist for `ty`, for messages.
pub(crate) fn initializer_names(ty: &Ty) -> &'static str {
    match ty {
        Ty::Mutex => "PTHREAD_MUTEX_INITIALIZER or PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP",
        Ty::Sync(SyncTy::RwLock) => "PTHREAD_RWLOCK_INITIALIZER",
        Ty::Sync(SyncTy::Cond) => "PTHREAD_COND_INITIALIZER",
        _ => "none: call its init function",
    }
}

/// `a` moved by `k` cells (the `k`-th cell of the object at `a`).
pub(super) use super::memory::offset as cell;

/// The library functions lowered by this module and its siblings.
pub(super) fn is_sync_call(name: &str) -> bool {
    [
        "pthread_mutex",
        "pthread_spin_",
        "pthread_rwlock_",
        "pthread_barrier_",
        "pthread_cond_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || matches!(
            name,
            "mtx_init"
                | "mtx_lock"
                | "mtx_trylock"
                | "mtx_timedlock"
                | "mtx_unlock"
                | "mtx_destroy"
                | "cnd_init"
                | "cnd_signal"
                | "cnd_broadcast"
                | "cnd_wait"
                | "cnd_timedwait"
                | "cnd_destroy"
        )
}

/// What a synchronisation call refers to: the object and how messages name it.
pub(super) struct Target {
    pub(super) place: Place,
    /// `m` for `&m`, `locks[i]` for `&locks[i]`, `*p` for `p`.
    pub(super) name: String,
}

impl FnLower<'_, '_> {
    /// A call to a synchronisation function (see [`is_sync_call`]); `used` says whether its
    /// value is used. Every such call has a value: 0 (or `thrd_success`) unless said otherwise.
    pub(super) fn sync_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<TExpr> {
        let src = self.src;
        let r = if name.starts_with("pthread_mutexattr_") {
            self.mutexattr_call(call, name, args)?
        } else if name.starts_with("pthread_mutex_") || name.starts_with("pthread_spin_") {
            self.mutex_call(call, name, args)?
        } else if name.starts_with("mtx_") {
            self.mtx_call(call, name, args)?
        } else if name.starts_with("pthread_rwlock_") {
            self.rwlock_call(call, name, args)?
        } else if name.starts_with("pthread_barrier_") {
            self.barrier_call(call, name, args)?
        } else if name.starts_with("pthread_cond_") || name.starts_with("cnd_") {
            self.cond_call(call, name, args)?
        } else {
            None
        };
        r.ok_or_else(|| {
            src.unsupported(
                call,
                &format!("call to `{name}` (this synchronisation function is not supported)"),
            )
        })
    }

    /// The object the argument `arg` of `func` addresses: `&x` for an object `x` in memory of
    /// one of the types `want` (a global, `static`, element or member), or a pointer to one.
    pub(super) fn sync_target(&mut self, func: &str, arg: Node, want: &[Ty]) -> R<Target> {
        let src = self.src;
        let expected = want
            .iter()
            .map(|t| t.describe(&self.cx.types))
            .collect::<Vec<_>>()
            .join(" or ");
        let a = strip_parens(arg);
        if a.kind() == "identifier" {
            let name = src.text(a);
            match self.lookup(name) {
                Name::Unknown => {
                    return Err(src.error(a, &format!("undeclared identifier `{name}`")))
                }
                Name::Mutex(_) | Name::Object(_) => {
                    return Err(src.error(
                        arg,
                        &format!("`{func}` expects the address of the object: write `&{name}`"),
                    ))
                }
                _ => {}
            }
        }
        if let Some(id) = super::address_of(&src, arg) {
            if matches!(self.lookup(src.text(id)), Name::Unknown) {
                let name = src.text(id);
                return Err(src.error(id, &format!("undeclared identifier `{name}`")));
            }
        }
        // `&x`: the place itself (an element keeps the bounds of its array).
        let is_addr = a.kind() == "pointer_expression"
            && a.child_by_field_name("operator").map(|o| src.text(o)) == Some("&");
        let inner = a.child_by_field_name("argument").filter(|_| is_addr);
        let place = match inner.map(|x| self.place_of(x)).transpose()?.flatten() {
            Some(p) => Some(p),
            None => match self.ptr_value(arg) {
                Ok((p, ty)) => Some(Place {
                    addr: self.deref_addr(p),
                    ty,
                }),
                Err(_) => None,
            },
        };
        let Some(place) = place else {
            let text = src.text(arg);
            return Err(src.unsupported(
                arg,
                &format!("`{func}` on `{text}` (expected the address of a {expected})"),
            ));
        };
        let text = src.text(a);
        let name = match (inner, text.strip_prefix('&')) {
            (Some(x), _) => src.text(x).to_string(),
            (None, _) => format!("*{text}"),
        };
        if !want.contains(&place.ty) {
            return Err(src.error(
                arg,
                &format!("`{name}` is not a {expected} (`{func}` expects the address of one)"),
            ));
        }
        Ok(Target { place, name })
    }

    /// A check that stops the thread with a misuse bug saying `message` when `cond` is 0.
    pub(super) fn misuse_check(&mut self, cond: Expr, message: String) {
        self.emit(Instr::Check {
            cond,
            kind: CheckKind::Misuse,
            message,
        });
    }

    /// Checks that the value `old` read from a cell of `what` (`mutex `m``) is not that of an
    /// uninitialised or destroyed object (unless `ok`, e.g. a CAS that succeeded).
    pub(super) fn check_alive(&mut self, old: &Expr, ok: Option<&Expr>, func: &str, what: &str) {
        let state = bin(BinOp::Shr, old.clone(), Expr::Const(STATE_SHIFT));
        for (v, adj) in [(-1, "uninitialised"), (-2, "destroyed")] {
            let mut cond = bin(BinOp::Ne, state.clone(), Expr::Const(v));
            if let Some(ok) = ok {
                cond = bin(BinOp::Or, ok.clone(), cond);
            }
            self.misuse_check(cond, format!("`{func}` on {adj} {what}"));
        }
    }

    /// The lock-word value of the running thread: its id + 1 (main is 1).
    pub(super) fn owner_value(&mut self) -> Expr {
        let t = self.new_temp(IntTy::I64);
        self.emit(Instr::ThreadId { dst: t });
        bin(BinOp::Add, Expr::Reg(t), Expr::Const(1))
    }

    /// A read-modify-write on `loc` into a fresh temporary: the old value.
    pub(super) fn sync_rmw(&mut self, loc: Addr, op: RmwOp, val: Expr, order: MemOrder) -> Expr {
        let dst = self.new_temp(IntTy::I64);
        self.emit(Instr::Rmw {
            dst,
            loc,
            op,
            val,
            order,
            width: crate::ir::Width::FULL,
        });
        Expr::Reg(dst)
    }

    /// A compare-and-swap on `loc` (failure order relaxed) into fresh temporaries: `(ok,
    /// old)`.
    pub(super) fn sync_cas(
        &mut self,
        loc: Addr,
        expected: Expr,
        desired: Expr,
        order: MemOrder,
    ) -> (Expr, Expr) {
        let ok = self.new_temp(IntTy::Bool);
        let old = self.new_temp(IntTy::I64);
        self.emit(Instr::Cas {
            ok,
            old,
            loc,
            expected,
            desired,
            order,
            fail_order: MemOrder::Relaxed,
            weak: false,
        });
        (Expr::Reg(ok), Expr::Reg(old))
    }

    /// A load of `loc` into a fresh temporary.
    pub(super) fn sync_load(&mut self, loc: Addr, order: MemOrder) -> Expr {
        let dst = self.new_temp(IntTy::I64);
        self.emit(Instr::Load { dst, loc, order });
        Expr::Reg(dst)
    }

    /// `dst := val` into a fresh temporary (so that an expression is evaluated once).
    pub(super) fn sync_temp(&mut self, val: Expr) -> Expr {
        let dst = self.new_temp(IntTy::I64);
        self.emit(Instr::Assign { dst, val });
        Expr::Reg(dst)
    }

    /// Emits a branch to a later pc taken when `cond` is 0; patch it with [`FnLower::patch`].
    pub(super) fn branch_unless(&mut self, cond: Expr) -> usize {
        self.emit(Instr::BranchIfZero { cond, target: 0 })
    }

    /// The identifier of a library constant ([`library_constant`]) used as a value, unless a
    /// declaration or a macro of the file gives the name another meaning.
    pub(super) fn sync_constant(&self, n: Node) -> Option<TExpr> {
        let name = self.src.text(n);
        let v = library_constant(name)?;
        if !matches!(self.lookup(name), Name::Unknown) {
            return None;
        }
        Some((Expr::Const(v), IntTy::I32))
    }

    /// An argument that must be a null pointer (attributes): `what` says which.
    pub(super) fn null_attr(&self, arg: Node, func: &str, what: &str) -> R<()> {
        if self.is_null(arg) {
            return Ok(());
        }
        Err(self.src.unsupported(
            arg,
            &format!("{what} (the attribute argument of `{func}` must be NULL)"),
        ))
    }

    /// The time argument of a timed wait: not evaluated (any wait may time out whatever the
    /// deadline), so it must have no effect: a name, `&name`, a member or `NULL`.
    pub(super) fn deadline_arg(&self, arg: Node) -> R<()> {
        let src = self.src;
        let mut n = strip_parens(arg);
        for _ in 0..super::MAX_DEPTH {
            match n.kind() {
                "identifier" | "null" | "number_literal" => return Ok(()),
                "pointer_expression" | "field_expression" | "cast_expression" => {
                    match n
                        .child_by_field_name("argument")
                        .or_else(|| n.child_by_field_name("value"))
                    {
                        Some(a) => n = strip_parens(a),
                        None => break,
                    }
                }
                _ => break,
            }
        }
        Err(src.unsupported(
            arg,
            "deadline of a timed wait (it must be a variable, `&variable`, a member or NULL: \
             its value is not used, any timed wait may time out)",
        ))
    }

    // ----- barriers -------------------------------------------------------------------------

    /// `pthread_barrier_init(&b, NULL, n)`, `pthread_barrier_wait(&b)`,
    /// `pthread_barrier_destroy(&b)`.
    fn barrier_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<Option<TExpr>> {
        let want = [Ty::Sync(SyncTy::Barrier)];
        let arity = if name == "pthread_barrier_init" { 3 } else { 1 };
        if !matches!(
            name,
            "pthread_barrier_init" | "pthread_barrier_wait" | "pthread_barrier_destroy"
        ) {
            return Ok(None);
        }
        self.arity(call, name, args, arity)?;
        let b = self.sync_target(name, args[0], &want)?;
        let what = format!("barrier `{}`", b.name);
        let v = match name {
            "pthread_barrier_init" => {
                self.null_attr(args[1], name, "barrier attributes")?;
                let n = self.expr(args[2])?;
                self.barrier_init(&b.place, n, name, &what);
                Expr::Const(0)
            }
            "pthread_barrier_wait" => self.barrier_wait(&b.place, name, &what),
            _ => {
                self.barrier_destroy(&b.place, name, &what);
                Expr::Const(0)
            }
        };
        Ok(Some((v, IntTy::I32)))
    }

    /// The barrier's count is `n` (1 ..= 65535), no thread has arrived, no round completed.
    fn barrier_init(&mut self, b: &Place, n: Expr, func: &str, what: &str) {
        let n = self.sync_temp(n);
        let positive = bin(
            BinOp::And,
            bin(BinOp::Ge, n.clone(), Expr::Const(1)),
            bin(BinOp::Le, n.clone(), Expr::Const(MAX_COUNT)),
        );
        self.misuse_check(
            positive,
            format!("`{func}` of {what} with a count outside 1..={MAX_COUNT}"),
        );
        let word = bin(BinOp::Shl, n, Expr::Const(COUNT_SHIFT));
        let old = self.sync_rmw(b.addr.clone(), RmwOp::Xchg, word, MemOrder::Relaxed);
        // Zero (never initialised), or negative (uninitialised local, destroyed): fine.
        self.misuse_check(
            bin(BinOp::Le, old, Expr::Const(0)),
            format!("`{func}` re-initialises {what}, which is initialised and not destroyed"),
        );
        self.emit(Instr::Store {
            loc: cell(&b.addr, 1),
            val: Expr::Const(0),
            order: MemOrder::Relaxed,
        });
    }

    /// Arrives (an acq_rel fetch-add): the last thread of the round completes it (a release
    /// increment of the rounds) and gets `PTHREAD_BARRIER_SERIAL_THREAD` (-1); the others
    /// wait (acquire load + assume) until the round is complete and get 0.
    fn barrier_wait(&mut self, b: &Place, func: &str, what: &str) -> Expr {
        let old = self.sync_rmw(b.addr.clone(), RmwOp::Add, Expr::Const(1), MemOrder::AcqRel);
        self.check_alive(&old, None, func, what);
        let n = self.sync_temp(bin(BinOp::Shr, old.clone(), Expr::Const(COUNT_SHIFT)));
        self.misuse_check(
            bin(BinOp::Ne, n.clone(), Expr::Const(0)),
            format!("`{func}` on uninitialised {what}"),
        );
        let k = bin(BinOp::BitAnd, old, Expr::Const(ARRIVED));
        let round = self.sync_temp(bin(BinOp::Div, k.clone(), n.clone()));
        let last = bin(
            BinOp::Eq,
            bin(BinOp::Rem, k, n.clone()),
            bin(BinOp::Sub, n, Expr::Const(1)),
        );
        let res = self.new_temp(IntTy::I32);
        let waiter = self.branch_unless(last);
        self.sync_rmw(
            cell(&b.addr, 1),
            RmwOp::Add,
            Expr::Const(1),
            MemOrder::Release,
        );
        self.emit(Instr::Assign {
            dst: res,
            val: Expr::Const(-1),
        });
        let done = self.emit(Instr::Jump { target: 0 });
        let here = self.body.len();
        self.patch(waiter, here);
        let v = self.sync_load(cell(&b.addr, 1), MemOrder::Acquire);
        self.emit(Instr::Assume {
            cond: bin(BinOp::Gt, v, round),
        });
        self.emit(Instr::Assign {
            dst: res,
            val: Expr::Const(0),
        });
        let end = self.body.len();
        self.patch(done, end);
        Expr::Reg(res)
    }

    /// Destroys the barrier: a misuse if it is not initialised, or while threads wait at it
    /// (some arrived in a round that is not complete).
    fn barrier_destroy(&mut self, b: &Place, func: &str, what: &str) {
        let old = self.sync_rmw(
            b.addr.clone(),
            RmwOp::Xchg,
            Expr::Const(DESTROYED),
            MemOrder::Relaxed,
        );
        self.check_alive(&old, None, func, what);
        let n = self.sync_temp(bin(BinOp::Shr, old.clone(), Expr::Const(COUNT_SHIFT)));
        self.misuse_check(
            bin(BinOp::Ne, n.clone(), Expr::Const(0)),
            format!("`{func}` on uninitialised {what}"),
        );
        let k = bin(BinOp::BitAnd, old, Expr::Const(ARRIVED));
        self.misuse_check(
            bin(BinOp::Eq, bin(BinOp::Rem, k, n), Expr::Const(0)),
            format!("`{func}` of {what} while threads wait at it"),
        );
    }
}

/// `!e` (for conditions).
pub(super) fn not(e: Expr) -> Expr {
    un(UnOp::Not, e)
}
