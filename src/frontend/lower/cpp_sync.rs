//! The C++ synchronisation classes, lowered like their C counterparts (`mutex.rs`,
//! `rwlock.rs`, `cond.rs`): member calls on `std::mutex`, `std::recursive_mutex`,
//! `std::shared_mutex` and `std::condition_variable` objects anywhere in memory, and what the
//! lock guards of `cpp.rs` lock and unlock.
//!
//! * `std::mutex` / `std::recursive_mutex`: `lock()`, `unlock()`, `try_lock()` (true on
//!   success) are `pthread_mutex_lock` / `_unlock` / `_trylock` on a plain / recursive mutex.
//! * `std::shared_mutex`: `lock()` / `try_lock()` take the write lock, `lock_shared()` /
//!   `try_lock_shared()` a read lock, `unlock()` releases the write lock and `unlock_shared()`
//!   a read lock (each a misuse when the thread does not hold that lock).
//! * `std::condition_variable`: `notify_one()` / `notify_all()` are a signal / broadcast;
//!   `cv.wait(lk)` waits with the mutex of the `std::unique_lock<std::mutex>` guard `lk`; and
//!   `cv.wait(lk, pred)`, which the standard defines as `while (!pred()) wait(lk);`, is that
//!   wait loop (lowered as `if (!P) { wait; assume(P); }`, see `cond.rs`) for a lambda `pred`
//!   without parameters whose body is `return P;` with `P` without effects (its captures
//!   refer to the same variables, so `P` is lowered in place). The timed waits (`wait_for`,
//!   `wait_until`) are refused: they need `std::chrono`.

use super::cond::WAIT_MUTEXES;
use super::rwlock::Release;
use super::sync::not;
use super::{named_children, strip_parens, FnLower, Place, TExpr, R};
use crate::frontend::types::{IntTy, SyncTy, Ty};
use crate::ir::{Addr, Expr};
use tree_sitter::Node;

/// What a lock guard holds: the type of the object it locked and whether it holds it shared
/// (`std::shared_lock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Held {
    pub(super) ty: Ty,
    pub(super) shared: bool,
}

/// The C++ name of a lockable type, for messages.
pub(super) fn class_name(ty: &Ty) -> &'static str {
    match ty {
        Ty::Sync(SyncTy::RecursiveMutex) => "std::recursive_mutex",
        Ty::Sync(SyncTy::RwLock) => "std::shared_mutex",
        Ty::Sync(SyncTy::Cond) => "std::condition_variable",
        _ => "std::mutex",
    }
}

impl FnLower<'_, '_> {
    /// `obj.method(args)` on the synchronisation object at `place` (written `obj`).
    pub(super) fn sync_member(
        &mut self,
        call: Node,
        obj: Node,
        place: &Place,
        method: &str,
        args: &[Node],
        used: bool,
    ) -> R<TExpr> {
        let src = self.src;
        let class = class_name(&place.ty);
        let func = format!("{class}::{method}");
        let what = format!("{} `{}`", class.trim_start_matches("std::"), src.text(obj));
        let ty = place.ty.clone();
        let bad = || src.unsupported(call, &format!("member `{method}` of {class}"));
        let arity = match (&ty, method) {
            (Ty::Sync(SyncTy::Cond), "wait") => (1, 2),
            (Ty::Sync(SyncTy::Cond), "wait_for" | "wait_until") => {
                return Err(src.unsupported(
                    call,
                    &format!("`{func}` (timed waits of std::condition_variable need std::chrono)"),
                ))
            }
            _ => (0, 0),
        };
        self.member_arity(call, method, args, arity.0, arity.1)?;
        let valued = matches!(method, "try_lock" | "try_lock_shared");
        if used && !valued {
            return self.void_member(call, method, used);
        }
        match (&ty, method) {
            (Ty::Sync(SyncTy::Cond), "notify_one" | "notify_all") => {
                self.cond_signal(place, &func, &what)
            }
            (Ty::Sync(SyncTy::Cond), "wait") => self.cv_wait(place, args, &func, &what)?,
            (Ty::Sync(SyncTy::RwLock), "lock") => self.write_lock(place, &func, &what),
            (Ty::Sync(SyncTy::RwLock), "lock_shared") => self.read_lock(place, &func, &what),
            (Ty::Sync(SyncTy::RwLock), "unlock") => {
                self.rwlock_unlock(place, &func, &what, Release::Exclusive)
            }
            (Ty::Sync(SyncTy::RwLock), "unlock_shared") => {
                self.rwlock_unlock(place, &func, &what, Release::Shared)
            }
            (Ty::Sync(SyncTy::RwLock), "try_lock") => {
                return Ok((self.try_write_lock(place, &func, &what), IntTy::I32))
            }
            (Ty::Sync(SyncTy::RwLock), "try_lock_shared") => {
                return Ok((self.try_read_lock(place, &func, &what), IntTy::I32))
            }
            (Ty::Mutex | Ty::Sync(SyncTy::RecursiveMutex), "lock") => {
                self.lock_word(place, &func, &what)
            }
            (Ty::Mutex | Ty::Sync(SyncTy::RecursiveMutex), "unlock") => {
                self.unlock_word(place, &func, &what, false)
            }
            (Ty::Mutex | Ty::Sync(SyncTy::RecursiveMutex), "try_lock") => {
                return Ok((self.try_word(place, &func, &what, false), IntTy::I32))
            }
            _ => return Err(bad()),
        }
        Ok((Expr::Const(0), IntTy::I32))
    }

    /// The mutex of the `std::unique_lock<std::mutex>` guard `lk` a condition wait `func` is
    /// given, and how messages name it. CDSChecker's `std::condition_variable::wait(std::mutex&)`
    /// (its `<condition_variable>`) is taken too: `lk` is then the locked `std::mutex` itself.
    fn wait_guard(&mut self, lk: Node, func: &str) -> R<(Place, String)> {
        let src = self.src;
        let bare = strip_parens(lk);
        let name = src.text(bare);
        let held = (bare.kind() == "identifier")
            .then(|| self.unique_guard(name))
            .flatten();
        let Some((addr, ty)) = held else {
            let known =
                bare.kind() != "identifier" || !matches!(self.lookup(name), super::Name::Unknown);
            let mutex = match known {
                true => self.place_of(lk)?.filter(|p| p.ty == WAIT_MUTEXES[0]),
                false => None,
            };
            if let Some(p) = mutex {
                return Ok((p, format!("mutex `{name}`")));
            }
            return Err(src.unsupported(
                lk,
                &format!(
                    "`{func}` with `{name}` (the argument must be a std::unique_lock<std::mutex> \
                     declared in an enclosing block, or a std::mutex)"
                ),
            ));
        };
        if ty != WAIT_MUTEXES[0] {
            return Err(src.error(
                lk,
                &format!(
                    "`{func}` needs a std::unique_lock<std::mutex>: `{name}` holds a {}",
                    class_name(&ty)
                ),
            ));
        }
        Ok((Place { addr, ty }, format!("mutex of `{name}`")))
    }

    /// `cv.wait(lk)` and `cv.wait(lk, pred)` on the condition variable at `cv`.
    fn cv_wait(&mut self, cv: &Place, args: &[Node], func: &str, what: &str) -> R<()> {
        let (m, mwhat) = self.wait_guard(args[0], func)?;
        let Some(&pred) = args.get(1) else {
            self.cond_wait(cv, &m, func, what, &mwhat, false);
            return Ok(());
        };
        // while (!pred()) wait(lk);  ==  if (!P) { wait(lk); if (!P) sleep; }  (cond.rs)
        let p = self.lambda_predicate(pred, func)?;
        let c = self.expr(p)?;
        let exit = self.branch_unless(not(c));
        self.cond_wait(cv, &m, func, what, &mwhat, false);
        let again = self.expr(p)?;
        let exit2 = self.branch_unless(not(again));
        self.cond_sleep(cv, &m, func, what, &mwhat);
        let end = self.body.len();
        self.patch(exit, end);
        self.patch(exit2, end);
        Ok(())
    }

    /// `cond_sleep` for the wait `cv.wait(lk)` (the call `call`, its callee `f`) of a wait
    /// loop: its objects are evaluated again.
    pub(super) fn cv_sleep_again(&mut self, call: Node, f: Node) -> R<()> {
        let src = self.src;
        let (Some(obj), Some(lk)) = (
            f.child_by_field_name("argument").map(strip_parens),
            call.child_by_field_name("arguments")
                .and_then(|a| named_children(a).first().copied()),
        ) else {
            return Err(src.internal("wait call"));
        };
        let cv = if f.child_by_field_name("operator").map(|o| src.text(o)) == Some("->") {
            let (p, ty) = self.ptr_value(obj)?;
            Place {
                addr: self.deref_addr(p),
                ty,
            }
        } else {
            self.place_of(obj)?
                .ok_or_else(|| src.internal("condition variable place"))?
        };
        let func = "std::condition_variable::wait";
        let what = format!("condition_variable `{}`", src.text(obj));
        let (m, mwhat) = self.wait_guard(lk, func)?;
        self.cond_sleep(&cv, &m, func, &what, &mwhat);
        Ok(())
    }

    /// The expression `P` of a predicate lambda `[...] { return P; }` (no parameters, `P`
    /// without effects).
    fn lambda_predicate<'t>(&self, pred: Node<'t>, func: &str) -> R<Node<'t>> {
        let src = self.src;
        let bad = |n: Node| {
            src.unsupported(
                n,
                &format!(
                    "predicate of `{func}` (supported: a lambda without parameters whose body \
                     is `return P;` with an expression `P` that only reads)"
                ),
            )
        };
        let lambda = strip_parens(pred);
        if lambda.kind() != "lambda_expression" {
            return Err(bad(pred));
        }
        if let Some(d) = lambda.child_by_field_name("declarator") {
            let params = named_children(d)
                .into_iter()
                .find(|n| n.kind() == "parameter_list")
                .map(named_children)
                .unwrap_or_default();
            if !params.is_empty() {
                return Err(bad(d));
            }
        }
        if let Some(c) = lambda.child_by_field_name("captures") {
            if src.text(c).contains("this") {
                return Err(src.unsupported(c, "capture of `this` (classes are not supported)"));
            }
        }
        let body = lambda
            .child_by_field_name("body")
            .ok_or_else(|| bad(lambda))?;
        let stmts = named_children(body);
        let [ret] = stmts.as_slice() else {
            return Err(bad(body));
        };
        let e = named_children(*ret).first().copied();
        match e {
            Some(e) if ret.kind() == "return_statement" && self.reads_only(e).is_some() => Ok(e),
            _ => Err(bad(*ret)),
        }
    }

    /// Locks the object at `place` for a lock guard (`shared`: a `std::shared_lock`).
    pub(super) fn guard_lock(&mut self, place: &Place, shared: bool, func: &str, what: &str) {
        match (&place.ty, shared) {
            (Ty::Sync(SyncTy::RwLock), true) => self.read_lock(place, func, what),
            (Ty::Sync(SyncTy::RwLock), false) => self.write_lock(place, func, what),
            _ => self.lock_word(place, func, what),
        }
    }

    /// Unlocks what a lock guard holds at `addr`.
    pub(super) fn guard_unlock(&mut self, addr: Addr, held: &Held, what: &str) {
        let place = Place {
            addr,
            ty: held.ty.clone(),
        };
        let func = format!("the destructor of the lock guard of {what}");
        match (&held.ty, held.shared) {
            (Ty::Sync(SyncTy::RwLock), true) => {
                self.rwlock_unlock(&place, &func, what, Release::Shared)
            }
            (Ty::Sync(SyncTy::RwLock), false) => {
                self.rwlock_unlock(&place, &func, what, Release::Exclusive)
            }
            _ => self.unlock_word(&place, &func, what, false),
        }
    }
}
