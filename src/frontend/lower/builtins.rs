//! The GCC/Clang atomic builtins, the way most portable lock-free C is written: `__atomic_*`
//! (C11's memory model with `__ATOMIC_*` orders) and the legacy `__sync_*` (full barriers).
//!
//! They operate on ordinary objects (`int x; __atomic_load_n(&x, __ATOMIC_ACQUIRE)`) as well as
//! on `_Atomic` ones: atomicity belongs to the access. A local whose address a builtin's first
//! argument takes is an object in memory (`lower/locals.rs`, which leaves the `&local` value
//! pointers of the `__atomic_*` calls in registers); a parameter, which stays a register, is
//! refused. Each lowers to the instruction of the C11 function it corresponds to:
//!
//! * `__atomic_load_n(p, mo)`, `__atomic_store_n(p, v, mo)`, `__atomic_exchange_n(p, v, mo)`
//!   and `__atomic_compare_exchange_n(p, &e, d, weak, s, f)` are C11's load, store, exchange
//!   and compare-exchange (weak when `weak` is a non-zero constant); the generic
//!   `__atomic_load(p, &r, mo)`, `__atomic_store(p, &v, mo)`, `__atomic_exchange(p, &v, &r, mo)`
//!   and `__atomic_compare_exchange(p, &e, &d, weak, s, f)` take their values through pointers,
//!   which must be `&local` (the local's register is read or written, as for C11's
//!   `expected`);
//! * `__atomic_fetch_OP(p, v, mo)` returns the old value, `__atomic_OP_fetch(p, v, mo)` the new
//!   one (`OP(old, v)`), for `add sub and or xor nand` (nand: `~(old & v)`);
//! * `__atomic_test_and_set(p, mo)` is an exchange of 1 whose value is `old != 0`,
//!   `__atomic_clear(p, mo)` a store of 0 (both on `bool` / `char` objects only: GCC sets a
//!   byte);
//! * `__atomic_thread_fence(mo)` is a program fence (a fix may strengthen its order);
//!   `__atomic_signal_fence(mo)` orders a thread only with a signal handler running in that same
//!   thread, and fensyn's programs have no signal handlers: it has no effect (no instruction;
//!   its statement stays, of kind `Local`), and so have C11's `atomic_signal_fence(mo)` and
//!   C++'s `std::atomic_signal_fence(mo)`;
//! * memory orders are `__ATOMIC_RELAXED CONSUME ACQUIRE RELEASE ACQ_REL SEQ_CST` (GCC's
//!   predefined macros, usable wherever a constant is: their values are 0..5), any integer
//!   constant expression of value 0..5, or C's `memory_order_*`; consume is acquire. Orders GCC
//!   documents as invalid (an acquire store, a release load, a release failure order) are errors.
//!
//! `__sync_*` (GCC documents each as a full barrier) are seq_cst RMWs or CASes **between two
//! seq_cst fences** of the same statement: `__sync_fetch_and_OP` / `__sync_OP_and_fetch` (old /
//! new value), `__sync_bool_compare_and_swap(p, old, new)` (value: success) and
//! `__sync_val_compare_and_swap(p, old, new)` (value: the value read). Those fences are already
//! seq_cst, so a fix never offers to strengthen them. `__sync_synchronize()` is a seq_cst
//! fence, `__sync_lock_test_and_set(p, v)` an acquire exchange and `__sync_lock_release(p)` a
//! release store of 0, as GCC documents them (no full barrier).

use super::{bin, promote, strip_parens, un, FnLower, Name, Place, TExpr, R};
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{BinOp, Expr, Instr, MemOrder, Reg, RmwOp, UnOp};
use tree_sitter::Node;

/// GCC's predefined memory-order macros, with their values and orders.
pub(crate) const ORDER_MACROS: [(&str, i64, MemOrder); 6] = [
    ("__ATOMIC_RELAXED", 0, MemOrder::Relaxed),
    ("__ATOMIC_CONSUME", 1, MemOrder::Acquire),
    ("__ATOMIC_ACQUIRE", 2, MemOrder::Acquire),
    ("__ATOMIC_RELEASE", 3, MemOrder::Release),
    ("__ATOMIC_ACQ_REL", 4, MemOrder::AcqRel),
    ("__ATOMIC_SEQ_CST", 5, MemOrder::SeqCst),
];

/// A call that only reads memory and has no other effect, by name: C11's `atomic_load[_explicit]`
/// and GCC's `__atomic_load_n` (what an await loop's condition may call).
pub(super) fn is_load_call(name: &str) -> bool {
    matches!(
        name,
        "atomic_load" | "atomic_load_explicit" | "__atomic_load_n"
    )
}

/// What a builtin's memory order is used for (which orders GCC allows).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Load,
    Store,
    /// A read-modify-write, a fence, or a compare-exchange's success order: every order.
    Any,
    /// A compare-exchange's failure order.
    Failure,
}

/// A value computed by a builtin, or `None` for one that returns `void`.
type Value = Option<TExpr>;

/// The RMW operation of `fetch_OP` / `OP_fetch` / `fetch_and_OP` / `OP_and_fetch`.
fn rmw_op(op: &str) -> Option<RmwOp> {
    Some(match op {
        "add" => RmwOp::Add,
        "sub" => RmwOp::Sub,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        "nand" => RmwOp::Nand,
        _ => return None,
    })
}

impl FnLower<'_, '_> {
    /// A call of a GCC/Clang atomic builtin (`None` when `name` is not `__atomic_*` or
    /// `__sync_*`); `used` says whether its value is used (a `void` builtin's cannot be).
    pub(super) fn builtin_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
        used: bool,
    ) -> R<Option<TExpr>> {
        let value = if name == "atomic_signal_fence" {
            // C11's (and C++'s `std::`) signal fence: no effect, as `__atomic_signal_fence`.
            self.arity(call, name, args, 1)?;
            self.mem_order(args[0])?;
            None
        } else if let Some(base) = name.strip_prefix("__atomic_") {
            self.atomic_builtin(call, name, base, args)?
        } else if let Some(base) = name.strip_prefix("__sync_") {
            self.sync_builtin(call, name, base, args)?
        } else {
            return Ok(None);
        };
        match value {
            Some(v) => Ok(Some(v)),
            None if used => Err(self.src.error(
                call,
                &format!("`{name}` returns void: its value cannot be used"),
            )),
            None => Ok(Some((Expr::Const(0), IntTy::I32))),
        }
    }

    /// `__atomic_X` (`base` is `X`).
    fn atomic_builtin(&mut self, call: Node, name: &str, base: &str, args: &[Node]) -> R<Value> {
        let (arity, fetch) = match base {
            "load_n" | "test_and_set" | "clear" => (2, None),
            "store_n" | "exchange_n" | "load" | "store" => (3, None),
            "exchange" => (4, None),
            "compare_exchange_n" | "compare_exchange" => (6, None),
            "thread_fence" | "signal_fence" => (1, None),
            _ => match base
                .strip_prefix("fetch_")
                .map(|op| (op, false))
                .or_else(|| base.strip_suffix("_fetch").map(|op| (op, true)))
                .and_then(|(op, new)| rmw_op(op).map(|op| (op, new)))
            {
                Some(op) => (3, Some(op)),
                None => return Err(self.unknown_builtin(call, name)),
            },
        };
        self.arity(call, name, args, arity)?;
        if let Some((op, new)) = fetch {
            let cell = self.builtin_place(args[0], name)?;
            let order = self.builtin_order(args[2], Use::Any)?;
            return self
                .fetch_op(call, name, &cell, op, args[1], order, new)
                .map(Some);
        }
        match base {
            "thread_fence" => {
                let order = self.builtin_order(args[0], Use::Any)?;
                self.emit(Instr::Fence { order });
                let span = self.src.span(args[0]);
                if let Some(s) = self.cx.stmts.get_mut(self.cur_stmt) {
                    s.order_span = Some(span);
                }
                Ok(None)
            }
            "signal_fence" => {
                // No inter-thread effect (see the module doc); its order is still checked.
                self.builtin_order(args[0], Use::Any)?;
                Ok(None)
            }
            "test_and_set" | "clear" => self.flag_builtin(call, name, base, args),
            "compare_exchange_n" | "compare_exchange" => self.cas_builtin(name, base, args),
            _ => self.access_builtin(name, base, args),
        }
    }

    /// `__atomic_load_n`, `__atomic_store_n`, `__atomic_exchange_n` and the generic
    /// `__atomic_load`, `__atomic_store`, `__atomic_exchange`.
    fn access_builtin(&mut self, name: &str, base: &str, args: &[Node]) -> R<Value> {
        let cell = self.builtin_place(args[0], name)?;
        let ty = cell.ty.int_ty();
        let value = |l: &mut Self, n: Node| -> R<Expr> {
            if base.ends_with("_n") {
                l.builtin_operand(&cell, n)
            } else {
                l.local_arg(n, &cell, name, "value").map(Expr::Reg)
            }
        };
        match base {
            "load_n" | "load" => {
                let order = self.builtin_order(args[1 + usize::from(base == "load")], Use::Load)?;
                let v = self.load_place(&cell, order);
                if base == "load_n" {
                    return Ok(Some((v, promote(ty))));
                }
                let ret = self.local_arg(args[1], &cell, name, "result")?;
                self.emit(Instr::Assign { dst: ret, val: v });
                Ok(None)
            }
            "store_n" | "store" => {
                let v = value(self, args[1])?;
                let order = self.builtin_order(args[2], Use::Store)?;
                let val = self.convert(v, ty);
                self.emit(Instr::Store {
                    loc: cell.addr.clone(),
                    val,
                    order,
                });
                Ok(None)
            }
            _ => {
                self.check_rmw_type(args[0], &cell, RmwOp::Xchg, &format!("`{name}`"))?;
                let v = value(self, args[1])?;
                let order_arg = if base == "exchange" { args[3] } else { args[2] };
                let order = self.builtin_order(order_arg, Use::Any)?;
                let (old, old_ty) = self.emit_rmw(&cell, RmwOp::Xchg, v, order);
                if base == "exchange_n" {
                    return Ok(Some((old, old_ty)));
                }
                let ret = self.local_arg(args[2], &cell, name, "result")?;
                self.emit(Instr::Assign { dst: ret, val: old });
                Ok(None)
            }
        }
    }

    /// `__atomic_fetch_OP` (`new` false: the old value) and `__atomic_OP_fetch` (the new one).
    #[allow(clippy::too_many_arguments)]
    fn fetch_op(
        &mut self,
        call: Node,
        name: &str,
        cell: &Place,
        op: RmwOp,
        operand: Node,
        order: MemOrder,
        new: bool,
    ) -> R<TExpr> {
        self.check_rmw_type(call, cell, op, &format!("`{name}`"))?;
        let v = self.builtin_operand(cell, operand)?;
        let ty = cell.ty.int_ty();
        let (old, old_ty) = self.emit_rmw(cell, op, v.clone(), order);
        if !new {
            return Ok((old, old_ty));
        }
        Ok((self.new_value(op, old, v, ty), promote(ty)))
    }

    /// The value an RMW `op` with operand `v` writes over `old`, converted to `ty` (what
    /// `OP_fetch` returns).
    fn new_value(&self, op: RmwOp, old: Expr, v: Expr, ty: IntTy) -> Expr {
        let v = self.convert(v, ty);
        let e = match op {
            RmwOp::Xchg => v,
            RmwOp::Add => bin(BinOp::Add, old, v),
            RmwOp::Sub => bin(BinOp::Sub, old, v),
            RmwOp::And => bin(BinOp::BitAnd, old, v),
            RmwOp::Or => bin(BinOp::BitOr, old, v),
            RmwOp::Xor => bin(BinOp::BitXor, old, v),
            RmwOp::Nand => un(UnOp::BitNot, bin(BinOp::BitAnd, old, v)),
        };
        self.convert(e, ty)
    }

    /// `__atomic_test_and_set(p, mo)` (an exchange of 1; value: `old != 0`) and
    /// `__atomic_clear(p, mo)` (a store of 0), on `bool` and `char` objects.
    fn flag_builtin(&mut self, call: Node, name: &str, base: &str, args: &[Node]) -> R<Value> {
        let cell = self.builtin_place(args[0], name)?;
        let ty = cell.ty.int_ty();
        if !matches!(ty, IntTy::Bool | IntTy::I8 | IntTy::U8) || matches!(cell.ty, Ty::Ptr { .. }) {
            let what = cell.ty.describe(&self.cx.types);
            return Err(self.src.unsupported(
                call,
                &format!(
                    "`{name}` on an object of type {what} (it sets or clears one byte: only \
                     bool and char objects are supported)"
                ),
            ));
        }
        if base == "clear" {
            let order = self.builtin_order(args[1], Use::Store)?;
            self.emit(Instr::Store {
                loc: cell.addr.clone(),
                val: Expr::Const(0),
                order,
            });
            return Ok(None);
        }
        let order = self.builtin_order(args[1], Use::Any)?;
        let (old, _) = self.emit_rmw(&cell, RmwOp::Xchg, Expr::Const(1), order);
        Ok(Some((self.truth(old), IntTy::I32)))
    }

    /// `__atomic_compare_exchange_n(p, &e, d, weak, s, f)` and the generic
    /// `__atomic_compare_exchange(p, &e, &d, weak, s, f)`: C11's compare-exchange.
    fn cas_builtin(&mut self, name: &str, base: &str, args: &[Node]) -> R<Value> {
        let cell = self.builtin_place(args[0], name)?;
        let e = self.local_arg(args[1], &cell, name, "expected value")?;
        let d = if base == "compare_exchange_n" {
            self.builtin_operand(&cell, args[2])?
        } else {
            Expr::Reg(self.local_arg(args[2], &cell, name, "desired value")?)
        };
        let weak = self.constant(args[3], "the weak flag of a compare-exchange")? != 0;
        let order = self.builtin_order(args[4], Use::Any)?;
        let fail = self.builtin_order(args[5], Use::Failure)?;
        Ok(Some(self.emit_cas(&cell, e, d, order, fail, weak)))
    }

    /// `__sync_X` (`base` is `X`): seq_cst RMWs and CASes between seq_cst fences, the lock
    /// pair, and `__sync_synchronize`.
    fn sync_builtin(&mut self, call: Node, name: &str, base: &str, args: &[Node]) -> R<Value> {
        let rmw = base
            .strip_prefix("fetch_and_")
            .map(|op| (op, false))
            .or_else(|| base.strip_suffix("_and_fetch").map(|op| (op, true)))
            .and_then(|(op, new)| rmw_op(op).map(|op| (op, new)));
        let arity = match base {
            "synchronize" => 0,
            "lock_release" => 1,
            "bool_compare_and_swap" | "val_compare_and_swap" => 3,
            "lock_test_and_set" => 2,
            _ if rmw.is_some() => 2,
            _ => return Err(self.unknown_builtin(call, name)),
        };
        self.arity(call, name, args, arity)?;
        let sc = MemOrder::SeqCst;
        match base {
            "synchronize" => {
                self.emit(Instr::Fence { order: sc });
                return Ok(None);
            }
            "lock_release" => {
                let cell = self.builtin_place(args[0], name)?;
                self.emit(Instr::Store {
                    loc: cell.addr.clone(),
                    val: Expr::Const(0),
                    order: MemOrder::Release,
                });
                return Ok(None);
            }
            "lock_test_and_set" => {
                let cell = self.builtin_place(args[0], name)?;
                self.check_rmw_type(call, &cell, RmwOp::Xchg, &format!("`{name}`"))?;
                let v = self.builtin_operand(&cell, args[1])?;
                return Ok(Some(self.emit_rmw(
                    &cell,
                    RmwOp::Xchg,
                    v,
                    MemOrder::Acquire,
                )));
            }
            _ => {}
        }
        let cell = self.builtin_place(args[0], name)?;
        let value = match rmw {
            Some((op, new)) => {
                // The operand is evaluated before the barrier (it may read memory).
                self.check_rmw_type(call, &cell, op, &format!("`{name}`"))?;
                let v = self.builtin_operand(&cell, args[1])?;
                self.emit(Instr::Fence { order: sc });
                let ty = cell.ty.int_ty();
                let (old, old_ty) = self.emit_rmw(&cell, op, v.clone(), sc);
                if new {
                    (self.new_value(op, old, v, ty), promote(ty))
                } else {
                    (old, old_ty)
                }
            }
            None => self.builtin_sync_cas(&cell, base == "bool_compare_and_swap", args)?,
        };
        self.emit(Instr::Fence { order: sc });
        Ok(Some(value))
    }

    /// The fence and CAS of `__sync_{bool,val}_compare_and_swap(p, old, new)` (the caller adds
    /// the closing fence); value: success (`bool_`) or the value read.
    fn builtin_sync_cas(&mut self, cell: &Place, bool_: bool, args: &[Node]) -> R<TExpr> {
        let ty = cell.ty.int_ty();
        let expected = self.builtin_operand(cell, args[1])?;
        let desired = self.builtin_operand(cell, args[2])?;
        let (expected, desired) = (self.convert(expected, ty), self.convert(desired, ty));
        self.emit(Instr::Fence {
            order: MemOrder::SeqCst,
        });
        let ok = self.new_temp(IntTy::Bool);
        let old = self.new_temp(ty);
        if let Ty::Ptr { to, .. } = &cell.ty {
            self.set_pointee(old, (**to).clone());
        }
        self.emit(Instr::Cas {
            ok,
            old,
            loc: cell.addr.clone(),
            expected,
            desired,
            order: MemOrder::SeqCst,
            fail_order: MemOrder::SeqCst,
            weak: false,
        });
        Ok(if bool_ {
            (Expr::Reg(ok), IntTy::I32)
        } else {
            (Expr::Reg(old), promote(ty))
        })
    }

    /// A value operand of a builtin on `cell`: a pointer for a pointer cell, else an integer.
    fn builtin_operand(&mut self, cell: &Place, n: Node) -> R<Expr> {
        if matches!(cell.ty, Ty::Ptr { .. }) {
            Ok(self.ptr_value(n)?.0)
        } else {
            self.expr(n)
        }
    }

    /// The object a builtin's first argument points to: `&place` or any pointer value, to an
    /// integer or pointer object, atomic or not.
    pub(super) fn builtin_place(&mut self, arg: Node, name: &str) -> R<Place> {
        let src = self.src;
        let a = strip_parens(arg);
        let is_addr = a.kind() == "pointer_expression"
            && a.child_by_field_name("operator").map(|o| src.text(o)) == Some("&");
        let place = if is_addr {
            let inner = a.child_by_field_name("argument").unwrap_or(a);
            match self.place_of(inner)? {
                Some(p) => p,
                None => {
                    let text = src.text(inner);
                    return Err(src.unsupported(
                        arg,
                        &format!(
                            "`{name}` on `{text}`, which is not in memory (a parameter lives \
                             in a register: copy it to a local variable)"
                        ),
                    ));
                }
            }
        } else {
            if let Some(Name::Global(loc) | Name::Mutex(loc)) =
                (a.kind() == "identifier").then(|| self.lookup(src.text(a)))
            {
                if !matches!(self.cell_ty(loc), Ty::Ptr { .. }) {
                    let text = src.text(a);
                    return Err(src.error(
                        arg,
                        &format!("`{name}` takes a pointer: pass the address `&{text}`"),
                    ));
                }
            }
            let (p, pointee) = self.ptr_value(arg)?;
            Place {
                addr: self.deref_addr(p),
                ty: pointee,
            }
        };
        match &place.ty {
            Ty::Int { .. } | Ty::Ptr { .. } => Ok(place),
            Ty::Mutex => Err(src.error(
                arg,
                &format!("`{name}` on a mutex (a mutex is not an integer)"),
            )),
            other => {
                let what = other.describe(&self.cx.types);
                Err(src.unsupported(
                    arg,
                    &format!("`{name}` on an object of type {what} (not an integer or pointer)"),
                ))
            }
        }
    }

    /// The register of the local variable `&v` given as the `role` argument of builtin `name`
    /// on `cell` (the result, value, expected or desired value): it must have the object's
    /// type.
    fn local_arg(&self, arg: Node, cell: &Place, name: &str, role: &str) -> R<Reg> {
        let src = self.src;
        let must = format!(
            "the {role} of `{name}` must be given as `&local` (the address of a local variable \
             of the object's type)"
        );
        let Some(id) = super::address_of(&src, arg) else {
            return Err(src.unsupported(arg, &must));
        };
        let var = src.text(id);
        match self.lookup(var) {
            Name::Local(r) if Some(r) != self.param => {
                let ty = self.reg_tys.get(r).copied().unwrap_or(IntTy::I64);
                if ty != cell.ty.int_ty() {
                    let want = cell.ty.describe(&self.cx.types);
                    return Err(src.unsupported(
                        id,
                        &format!(
                            "`{var}` has type {}, not {want} (the type of the object of \
                             `{name}`)",
                            ty.c_name()
                        ),
                    ));
                }
                Ok(r)
            }
            Name::Unknown => Err(src.error(id, &format!("undeclared identifier `{var}`"))),
            _ => Err(src.unsupported(arg, &must)),
        }
    }

    /// The memory order of a builtin used as `what` (see [`Use`]).
    fn builtin_order(&mut self, n: Node, what: Use) -> R<MemOrder> {
        let src = self.src;
        let n = strip_parens(n);
        let text = src.text(n);
        let (order, label) =
            if let Some(&(m, _, o)) = ORDER_MACROS.iter().find(|(m, _, _)| *m == text) {
                (o, m.to_string())
            } else if text.starts_with("memory_order") || text.starts_with("std::") {
                let (o, name) = self.mem_order(n)?;
                (o, name.to_string())
            } else {
                let v = self.constant(n, "a memory order")?;
                match ORDER_MACROS.iter().find(|(_, value, _)| *value == v) {
                    Some(&(m, _, o)) => (o, format!("`{text}` ({m})")),
                    None => {
                        return Err(src.error(
                            n,
                            &format!("{v} is not a memory order (__ATOMIC_* values are 0 to 5)"),
                        ))
                    }
                }
            };
        let bad = match what {
            Use::Load => order.is_release() && order != MemOrder::SeqCst,
            Use::Store => order.is_acquire() && order != MemOrder::SeqCst,
            Use::Failure => matches!(order, MemOrder::Release | MemOrder::AcqRel),
            Use::Any => false,
        };
        if bad {
            let role = match what {
                Use::Load => "a load",
                Use::Store => "a store",
                _ => "the failure order of a compare-exchange",
            };
            return Err(src.error(n, &format!("{label} is not valid for {role}")));
        }
        Ok(order)
    }

    /// The value of the integer constant expression `n` (`what` it is, for messages).
    fn constant(&mut self, n: Node, what: &str) -> R<i64> {
        let src = self.src;
        let not_constant =
            || src.unsupported(n, &format!("{what} that is not an integer constant"));
        if self.may_access(n) {
            return Err(not_constant());
        }
        match self.expr(n)? {
            Expr::Const(v) => Ok(v),
            _ => Err(not_constant()),
        }
    }

    fn unknown_builtin(&self, call: Node, name: &str) -> crate::frontend::Diagnostic {
        self.src.unsupported(
            call,
            &format!(
                "call to `{name}` (not a supported atomic builtin: the __atomic_* and __sync_* \
                 operations GCC documents for integers and pointers are)"
            ),
        )
    }
}
