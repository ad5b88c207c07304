//! Lowering of atomic read-modify-writes: `atomic_exchange` / `atomic_fetch_*` calls, the
//! compare-exchange family, and compound assignment / `++` / `--` on atomic globals.

use super::{address_of, bin, promote, strip_parens, FnLower, Name, Place, TExpr, R};
use crate::frontend::types::{BaseTy, IntTy, Ty};
use crate::ir::{BinOp, Expr, Instr, MemOrder, Reg, RmwOp};
use tree_sitter::Node;

impl FnLower<'_, '_> {
    /// Rejects the read-modify-writes C does not define on the cell's type: arithmetic and
    /// bitwise operations on pointers (only exchange) and on `atomic_bool`. On every integer
    /// type the new value wraps to the type ([`crate::ir::Width`]), as C's atomic arithmetic
    /// does.
    pub(super) fn check_rmw_type(&self, at: Node, cell: &Place, op: RmwOp, what: &str) -> R<()> {
        let name = match cell.addr.fixed() {
            Some(loc) => self.cx.globals.get(loc).map_or("", |g| g.name.as_str()),
            None => self.src.text(at),
        };
        if op == RmwOp::Xchg {
            return Ok(());
        }
        let why = if matches!(cell.ty, Ty::Ptr { .. }) {
            format!("{what} on pointer `{name}` (only exchange)")
        } else if cell.ty.int_ty() == IntTy::Bool {
            format!("{what} on `{name}` of an atomic_bool")
        } else {
            return Ok(());
        };
        Err(self.src.unsupported(at, &why))
    }

    /// `atomic_exchange[_explicit]` and `atomic_fetch_{add,sub,and,or,xor}[_explicit]`: an
    /// [`Instr::Rmw`]; the value of the call is the old value.
    pub(super) fn rmw_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<TExpr> {
        let base = name.strip_suffix("_explicit").unwrap_or(name);
        let explicit = base != name;
        let op = match base {
            "atomic_exchange" => RmwOp::Xchg,
            "atomic_fetch_add" => RmwOp::Add,
            "atomic_fetch_sub" => RmwOp::Sub,
            "atomic_fetch_and" => RmwOp::And,
            "atomic_fetch_or" => RmwOp::Or,
            "atomic_fetch_xor" => RmwOp::Xor,
            _ => return Err(self.src.unsupported(call, &format!("call to `{name}`, which is not defined in this file and not a supported library function"))),
        };
        self.arity(call, name, args, if explicit { 3 } else { 2 })?;
        let cell = self.atomic_place(args[0])?;
        self.check_rmw_type(call, &cell, op, &format!("`{name}`"))?;
        let v = if matches!(cell.ty, Ty::Ptr { .. }) {
            self.ptr_value(args[1])?.0
        } else {
            self.expr(args[1])?
        };
        let order = if explicit {
            self.mem_order(args[2])?.0
        } else {
            MemOrder::SeqCst
        };
        Ok(self.emit_rmw(&cell, op, v, order))
    }

    /// The [`Instr::Rmw`] of an exchange / fetch-op on `cell` with operand `v` (converted to
    /// the atomic's type); its value is the old value.
    pub(super) fn emit_rmw(&mut self, cell: &Place, op: RmwOp, v: Expr, order: MemOrder) -> TExpr {
        let ty = cell.ty.int_ty();
        let val = self.convert(v, ty);
        let dst = self.new_temp(ty);
        if let Ty::Ptr { to, .. } = &cell.ty {
            self.set_pointee(dst, (**to).clone());
        }
        let width = if matches!(cell.ty, Ty::Ptr { .. }) {
            crate::ir::Width::FULL
        } else {
            ty.width()
        };
        self.emit(Instr::Rmw {
            dst,
            loc: cell.addr.clone(),
            op,
            val,
            order,
            width,
        });
        (Expr::Reg(dst), promote(ty))
    }

    /// The register of the local variable `e` in a compare-exchange's `&e` argument, which must
    /// have the atomic's (non-atomic) type.
    fn expected_local(&self, arg: Node, cell: &Place) -> R<Reg> {
        let src = self.src;
        let must = "the expected value of a compare-exchange must be given as `&local` (the \
                    address of a local integer variable)";
        if let Some(id) = self.punned_expected(arg) {
            return self.expected_reg(arg, id, cell, must, true);
        }
        let Some(id) = address_of(&src, arg) else {
            return Err(src.unsupported(arg, must));
        };
        self.expected_var(arg, id, cell, must)
    }

    /// `(uintptr_t *)&e`: the address of local `e` cast to a pointer to a 64-bit integer
    /// type, as a lock-free queue passes a node pointer `e` as the expected value of a
    /// compare-exchange on an `atomic_uintptr_t`. Its identifier `e`.
    fn punned_expected<'t>(&self, arg: Node<'t>) -> Option<Node<'t>> {
        let src = self.src;
        let cast = strip_parens(arg);
        if cast.kind() != "cast_expression" {
            return None;
        }
        let td = cast.child_by_field_name("type")?;
        let d = td.child_by_field_name("declarator")?;
        if d.kind() != "abstract_pointer_declarator" || d.named_child_count() != 0 {
            return None;
        }
        let spec = crate::frontend::types::decl_spec(&src, &self.cx.types, td).ok()?;
        let wide = matches!(spec.ty, BaseTy::Int(t) if t.width().bits == 64);
        (wide && !spec.atomic).then_some(())?;
        address_of(&src, cast.child_by_field_name("value")?)
    }

    /// The register of the local variable named by `id` (in argument `arg`) holding the
    /// expected value of a compare-exchange on `cell`; `must` says how it must be given.
    pub(super) fn expected_var(&self, arg: Node, id: Node, cell: &Place, must: &str) -> R<Reg> {
        self.expected_reg(arg, id, cell, must, false)
    }

    /// [`Self::expected_var`]; with `punned` (given through a [`Self::punned_expected`] cast)
    /// the local and the cell need only both be 64 bits wide, integers or pointers (one
    /// representation: the bits are compared and copied back as they are).
    fn expected_reg(&self, arg: Node, id: Node, cell: &Place, must: &str, punned: bool) -> R<Reg> {
        let src = self.src;
        let name = src.text(id);
        match self.lookup(name) {
            Name::Local(r) if Some(r) != self.param => {
                let ty = self.reg_tys.get(r).copied().unwrap_or(IntTy::I64);
                let wide = |t: IntTy| t.width().bits == 64;
                if punned && !(wide(ty) && wide(cell.ty.int_ty())) {
                    return Err(src.unsupported(
                        arg,
                        &format!(
                            "`{name}` given through a cast: the variable and the atomic object \
                             of the compare-exchange must both be 64-bit integers or pointers"
                        ),
                    ));
                }
                if !punned && ty != cell.ty.int_ty() {
                    return Err(src.unsupported(
                        id,
                        &format!(
                            "the type of `{name}` differs from the type of the atomic object \
                             of the compare-exchange"
                        ),
                    ));
                }
                Ok(r)
            }
            Name::Global(_) => Err(src.unsupported(arg, &format!("{must}; `{name}` is a global"))),
            Name::Unknown => Err(src.error(id, &format!("undeclared identifier `{name}`"))),
            _ => Err(src.unsupported(arg, must)),
        }
    }

    /// `atomic_compare_exchange_{strong,weak}[_explicit](&x, &e, desired[, succ, fail])`: an
    /// [`Instr::Cas`] into fresh `ok` / `old` temporaries, then `e := old` (a no-op on success,
    /// where `old == e`). The value of the call is `ok`. Weak is lowered like strong.
    pub(super) fn cas_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<TExpr> {
        let explicit = name.ends_with("_explicit");
        self.arity(call, name, args, if explicit { 5 } else { 3 })?;
        let cell = self.atomic_place(args[0])?;
        let e = self.expected_local(args[1], &cell)?;
        let d = if matches!(cell.ty, Ty::Ptr { .. }) {
            self.ptr_value(args[2])?.0
        } else {
            self.expr(args[2])?
        };
        let (order, fail_order) = if explicit {
            let (order, _) = self.mem_order(args[3])?;
            (order, self.failure_order(args[4])?)
        } else {
            (MemOrder::SeqCst, MemOrder::SeqCst)
        };
        Ok(self.emit_cas(&cell, e, d, order, fail_order, name.contains("_weak")))
    }

    /// The failure order of a compare-exchange, written `n`. `release` and `acq_rel` are not
    /// valid there (C11 7.17.7.4, C++ [atomics.types.operations]): a failed compare-exchange
    /// only reads, so the order's release part has no meaning. They are accepted with a
    /// warning and read as the order without its release part — `acq_rel` as `acquire`,
    /// `release` as `relaxed` —, the rule by which C++ derives the failure order of the
    /// one-order form (compilers differ: GCC makes both orders `seq_cst`, Clang reads the
    /// failure as `relaxed`).
    pub(super) fn failure_order(&mut self, n: Node) -> R<MemOrder> {
        let (fail, fname) = self.mem_order(n)?;
        let read_as = match fail {
            MemOrder::AcqRel => MemOrder::Acquire,
            MemOrder::Release => MemOrder::Relaxed,
            o => return Ok(o),
        };
        let message = format!(
            "{fname} is not valid as the failure order of a compare-exchange (a failed \
             compare-exchange writes nothing); read as memory_order_{}, the order without its \
             release part",
            read_as.c_name()
        );
        self.warn(n, message);
        Ok(read_as)
    }

    /// The [`Instr::Cas`] on `cell` expecting the value of local `e` and writing `d`, then
    /// `e := old`; its value is `ok`.
    pub(super) fn emit_cas(
        &mut self,
        cell: &Place,
        e: Reg,
        d: Expr,
        order: MemOrder,
        fail_order: MemOrder,
        weak: bool,
    ) -> TExpr {
        let ty = cell.ty.int_ty();
        let desired = self.convert(d, ty);
        let ok = self.new_temp(IntTy::Bool);
        let old = self.new_temp(ty);
        if let Ty::Ptr { to, .. } = &cell.ty {
            self.set_pointee(old, (**to).clone());
        }
        self.emit(Instr::Cas {
            ok,
            old,
            loc: cell.addr.clone(),
            expected: Expr::Reg(e),
            desired,
            order,
            fail_order,
            weak,
        });
        self.emit(Instr::Assign {
            dst: e,
            val: Expr::Reg(old),
        });
        (Expr::Reg(ok), IntTy::I32)
    }

    /// `x op= v`, `x++`, `++x`, `x--`, `--x` on the atomic global `x` (`target`, at `loc`): a
    /// seq_cst [`Instr::Rmw`]. Returns the value of the expression: the old value for a postfix
    /// `x++` / `x--` (`postfix`), else the new one.
    pub(super) fn atomic_compound(
        &mut self,
        target: Node,
        cell: &Place,
        op: BinOp,
        op_text: &str,
        postfix: bool,
        rhs: &mut dyn FnMut(&mut Self) -> R<TExpr>,
    ) -> R<TExpr> {
        let name = self.src.text(target);
        let rmw = match op {
            BinOp::Add => RmwOp::Add,
            BinOp::Sub => RmwOp::Sub,
            BinOp::BitAnd => RmwOp::And,
            BinOp::BitOr => RmwOp::Or,
            BinOp::BitXor => RmwOp::Xor,
            _ => {
                return Err(self.src.unsupported(
                    target,
                    &format!(
                        "`{op_text}` on atomic `{name}` (only +=, -=, &=, |=, ^=, ++ and -- are \
                         supported on atomics)"
                    ),
                ))
            }
        };
        self.check_rmw_type(target, cell, rmw, &format!("`{op_text}`"))?;
        let ty = cell.ty.int_ty();
        let (v, _) = rhs(self)?;
        let val = self.convert(v, ty);
        let dst = self.new_temp(ty);
        self.emit(Instr::Rmw {
            dst,
            loc: cell.addr.clone(),
            op: rmw,
            val: val.clone(),
            order: MemOrder::SeqCst,
            width: ty.width(),
        });
        let value = if postfix {
            Expr::Reg(dst)
        } else {
            // The new value, as the atomic holds it.
            ty.wrap_expr(bin(op, Expr::Reg(dst), val))
        };
        Ok((value, promote(ty)))
    }

    /// An update or compound assignment whose value is used: lowered when its target is an
    /// atomic global (`None` otherwise: the caller reports it as unsupported).
    pub(super) fn atomic_compound_value(&mut self, n: Node) -> R<Option<TExpr>> {
        let src = self.src;
        let (target, op, op_node, postfix, operand) = match n.kind() {
            "update_expression" => {
                let (Some(arg), Some(op)) = (
                    n.child_by_field_name("argument"),
                    n.child_by_field_name("operator"),
                ) else {
                    return Ok(None);
                };
                let bop = match src.text(op) {
                    "++" => BinOp::Add,
                    "--" => BinOp::Sub,
                    _ => return Ok(None),
                };
                (arg, bop, op, op.start_byte() > arg.start_byte(), None)
            }
            "assignment_expression" => {
                let (Some(left), Some(right), Some(op)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                    n.child_by_field_name("operator"),
                ) else {
                    return Ok(None);
                };
                let text = src.text(op);
                if text == "=" {
                    return Ok(None);
                }
                let Some(bop) = super::binop(text.trim_end_matches('=')) else {
                    return Ok(None);
                };
                (left, bop, op, false, Some(right))
            }
            _ => return Ok(None),
        };
        let target = strip_parens(target);
        let cell = if target.kind() == "identifier" {
            match self.lookup(src.text(target)) {
                Name::Global(loc) if self.global_atomic(loc) => Place {
                    addr: crate::ir::Addr::Fixed(loc),
                    ty: self.cell_ty(loc),
                },
                m @ Name::Mutex(_) => {
                    return Err(self.name_error(target, src.text(target), m, true));
                }
                _ => return Ok(None),
            }
        } else {
            match self.place_of(target)? {
                Some(p) if p.ty.is_atomic() && !matches!(p.ty, Ty::Mutex | Ty::Sync(_)) => p,
                _ => return Ok(None),
            }
        };
        let op_text = src.text(op_node);
        let v =
            self.atomic_compound(target, &cell, op, op_text, postfix, &mut |l: &mut Self| {
                match operand {
                    Some(r) => l.texpr(r),
                    None => Ok((Expr::Const(1), IntTy::I32)),
                }
            })?;
        Ok(Some(v))
    }
}
