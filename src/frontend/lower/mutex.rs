//! Lowering of pthread mutexes, the way GenMC models them: a `pthread_mutex_t` global is an
//! atomic lock word (0 = unlocked, 1 = locked); `pthread_mutex_lock` is an acquire
//! compare-and-swap 0 → 1 followed by `assume(ok)` (a failed acquire blocks the thread),
//! `pthread_mutex_trylock` the same CAS without the assume, `pthread_mutex_unlock` a release
//! store of 0, `pthread_mutex_init` a relaxed store of 0 and `pthread_mutex_destroy` nothing.

use super::{address_of, bin, strip_parens, FnLower, Name, Place, TExpr, R};
use crate::frontend::types::{IntTy, Ty};
use crate::frontend::{Diagnostic, Src};
use crate::ir::{BinOp, Expr, Instr, MemOrder, Reg};
use tree_sitter::Node;

/// `EBUSY`: the value of a `pthread_mutex_trylock` that failed (Linux).
const EBUSY: i64 = 16;

/// The diagnostic for the mutex `name` used by name (`write`: as the target of an assignment)
/// rather than as `&name` in a `pthread_mutex_*` call.
pub(super) fn misuse(src: &Src, n: Node, name: &str, write: bool) -> Diagnostic {
    let what = if write {
        format!("assignment to mutex `{name}`")
    } else {
        format!("mutex `{name}` used as a value")
    };
    src.error(
        n,
        &format!(
            "{what} (a pthread_mutex_t is not an integer: it can only be passed as `&{name}` to \
             the pthread_mutex_* functions)"
        ),
    )
}

impl FnLower<'_, '_> {
    /// The mutex addressed by the first argument `arg` of the `pthread_mutex_*` function
    /// `func`: `&m` for a global (or static, array element, struct member) `pthread_mutex_t`,
    /// or a `pthread_mutex_t *` value.
    fn mutex_target(&mut self, func: &str, arg: Node) -> R<Place> {
        let src = self.src;
        let a = strip_parens(arg);
        if a.kind() == "identifier" {
            let name = src.text(a);
            match self.lookup(name) {
                Name::Mutex(_) => {
                    return Err(src.error(
                        arg,
                        &format!(
                            "`{func}` expects the address of the mutex: write `&{name}`, not \
                             `{name}`"
                        ),
                    ))
                }
                Name::Unknown => {
                    return Err(src.error(a, &format!("undeclared identifier `{name}`")))
                }
                _ => {}
            }
        }
        if address_of(&src, arg)
            .is_some_and(|id| matches!(self.lookup(src.text(id)), Name::Unknown))
        {
            let id = address_of(&src, arg).unwrap_or(arg);
            let name = src.text(id);
            return Err(src.error(id, &format!("undeclared identifier `{name}`")));
        }
        let (p, pointee) = match self.ptr_value(arg) {
            Ok(v) => v,
            Err(_) => {
                let text = src.text(arg);
                return Err(src.unsupported(
                    arg,
                    &format!("`{func}` on `{text}` (expected `&m` for a pthread_mutex_t `m`)"),
                ));
            }
        };
        if pointee != Ty::Mutex {
            let at = address_of(&src, arg).unwrap_or(arg);
            let text = src.text(at).to_string();
            return Err(src.error(
                at,
                &format!(
                    "`{text}` is not a mutex (`{func}` expects the address of a pthread_mutex_t)"
                ),
            ));
        }
        Ok(Place {
            addr: self.deref_addr(p),
            ty: pointee,
        })
    }

    /// The acquire CAS 0 → 1 on mutex `m` into fresh `ok` / `old` temporaries; returns `ok`.
    pub(super) fn mutex_cas(&mut self, m: &Place) -> Reg {
        let ok = self.new_temp(IntTy::Bool);
        let old = self.new_temp(IntTy::I32);
        self.emit(Instr::Cas {
            ok,
            old,
            loc: m.addr.clone(),
            expected: Expr::Const(0),
            desired: Expr::Const(1),
            order: MemOrder::Acquire,
            fail_order: MemOrder::Relaxed,
            weak: false,
        });
        ok
    }

    /// `pthread_mutex_{lock,unlock,init,destroy}(&m[, NULL])` in statement position.
    pub(super) fn mutex_stmt(&mut self, call: Node, name: &str, args: &[Node]) -> R<()> {
        let src = self.src;
        let arity = if name == "pthread_mutex_init" { 2 } else { 1 };
        self.arity(call, name, args, arity)?;
        let m = self.mutex_target(name, args[0])?;
        match name {
            "pthread_mutex_lock" => {
                let ok = self.mutex_cas(&m);
                self.emit(Instr::Assume {
                    cond: Expr::Reg(ok),
                });
            }
            "pthread_mutex_unlock" => {
                self.emit(Instr::Store {
                    loc: m.addr,
                    val: Expr::Const(0),
                    order: MemOrder::Release,
                });
            }
            "pthread_mutex_init" => {
                if !self.is_null(args[1]) {
                    return Err(src.unsupported(
                        args[1],
                        "mutex attributes (the second argument of pthread_mutex_init must be NULL)",
                    ));
                }
                // Initialisation is modelled as a relaxed store (see the module doc).
                self.emit(Instr::Store {
                    loc: m.addr,
                    val: Expr::Const(0),
                    order: MemOrder::Relaxed,
                });
            }
            "pthread_mutex_destroy" => {}
            _ => return Err(src.unsupported(call, &format!("call to `{name}`, which is not defined in this file and not a supported library function"))),
        }
        Ok(())
    }

    /// `pthread_mutex_trylock(&m)`: the acquire CAS 0 → 1 without blocking; its value is 0 on
    /// success and `EBUSY` (16) on failure.
    pub(super) fn trylock_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<TExpr> {
        self.arity(call, name, args, 1)?;
        let m = self.mutex_target(name, args[0])?;
        let ok = self.mutex_cas(&m);
        let value = bin(
            BinOp::Mul,
            bin(BinOp::Sub, Expr::Const(1), Expr::Reg(ok)),
            Expr::Const(EBUSY),
        );
        Ok((value, IntTy::I32))
    }
}
