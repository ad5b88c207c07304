//! Expressions with side effects whose value is used: assignments (`(r = f()) == 1`,
//! `a = b = 0`), compound assignments and increments (`x++`, `--x`, `r += 2`) on locals and
//! plain memory, and the comma operator (see the module doc of [`crate::frontend`]).
//!
//! Each is lowered exactly as the statement it would be on its own, at the point of the
//! expression where C evaluates it (operands left to right, as everywhere in the front end);
//! its value is then the target's new value (an assignment, a prefix increment), the old
//! value kept in a temporary (a postfix increment), or the right operand (a comma). Atomic
//! targets are lowered by `atomics.rs` (read-modify-writes) before these are reached.
//!
//! C leaves an expression undefined when it modifies a variable twice, or modifies it and
//! reads it elsewhere, without a sequence point in between (`i = i++`, `a[i] = i++`, `f(i++,
//! i)`): the left-to-right lowering would pick one of the meanings. Such an expression is
//! refused; [`FnLower::check_sequencing`] looks at the whole full expression, by the names of
//! the variables (a modification through an element or a pointer is not compared with other
//! accesses to the same object).

use super::{named_children, strip_parens, FnLower, IntTy, Name, Place, TExpr, MAX_DEPTH, R};
use crate::frontend::types::Ty;
use crate::ir::{BinOp, Expr, Instr, MemOrder};
use tree_sitter::Node;

/// The variables an expression reads and modifies, by name.
#[derive(Default)]
struct Access<'a> {
    reads: Vec<&'a str>,
    writes: Vec<&'a str>,
}

impl<'a> Access<'a> {
    /// Both, evaluated in either order (sequenced or exclusive): no conflict possible.
    fn join(mut self, other: Access<'a>) -> Access<'a> {
        self.reads.extend(other.reads);
        self.writes.extend(other.writes);
        self
    }

    /// A variable one side modifies and the other reads or modifies (unsequenced operands).
    fn conflict(&self, other: &Access<'a>) -> Option<&'a str> {
        let hit = |w: &[&'a str], a: &Access<'a>| {
            w.iter()
                .copied()
                .find(|v| a.reads.contains(v) || a.writes.contains(v))
        };
        hit(&self.writes, other).or_else(|| hit(&other.writes, self))
    }
}

/// Node kinds through which a full expression extends upwards.
fn inside_expression(kind: &str) -> bool {
    kind.ends_with("_expression") || kind == "argument_list"
}

impl<'a> FnLower<'_, 'a> {
    /// The operands of a comma operator whose value is not used, each for its effects.
    pub(super) fn comma_effects(&mut self, e: Node) -> R<()> {
        self.enter(e)?;
        let src = self.src;
        let (Some(left), Some(right)) = (
            e.child_by_field_name("left"),
            e.child_by_field_name("right"),
        ) else {
            return Err(src.unsupported(e, "comma operator"));
        };
        self.for_clause(left)?;
        self.for_clause(right)?;
        self.depth -= 1;
        Ok(())
    }

    /// `a, b` used as a value: `a` for its effects, then the value of `b`.
    pub(super) fn comma_value(&mut self, e: Node) -> R<TExpr> {
        let src = self.src;
        let (Some(left), Some(right)) = (
            e.child_by_field_name("left"),
            e.child_by_field_name("right"),
        ) else {
            return Err(src.unsupported(e, "comma operator"));
        };
        self.for_clause(left)?;
        self.texpr(right)
    }

    /// An assignment used as a value: the target's new value.
    pub(super) fn assign_value(&mut self, e: Node) -> R<TExpr> {
        self.check_sequencing(e)?;
        let (v, ty) = self.assign(e)?;
        Ok((self.materialise(v, ty), ty))
    }

    /// `++x` / `--x` (the new value) or `x++` / `x--` (the old value) used as a value, on a
    /// local or a plain scalar in memory.
    pub(super) fn update_value(&mut self, e: Node) -> R<TExpr> {
        self.check_sequencing(e)?;
        let src = self.src;
        let (Some(arg), Some(op)) = (
            e.child_by_field_name("argument"),
            e.child_by_field_name("operator"),
        ) else {
            return Err(src.unsupported(e, "increment"));
        };
        if op.start_byte() < arg.start_byte() {
            let (v, ty) = self.update(e)?;
            return Ok((self.materialise(v, ty), ty));
        }
        let bop = match src.text(op) {
            "++" => BinOp::Add,
            "--" => BinOp::Sub,
            t => return Err(src.unsupported(op, &format!("operator `{t}`"))),
        };
        let target = strip_parens(arg);
        if target.kind() == "identifier" {
            let name = src.text(target);
            match self.lookup(name) {
                Name::Local(r) => {
                    let ty = self.reg_tys.get(r).copied().unwrap_or(IntTy::I64);
                    let old = self.new_temp(ty);
                    if let Some(to) = self.reg_ptr.get(r).cloned().flatten() {
                        self.set_pointee(old, to);
                    }
                    self.emit(Instr::Assign {
                        dst: old,
                        val: Expr::Reg(r),
                    });
                    self.update(e)?;
                    return Ok((Expr::Reg(old), super::promote(ty)));
                }
                Name::Global(loc) => {
                    let p = self.fixed_place(loc);
                    return self.postfix_place(target, &p, bop, src.text(op));
                }
                Name::LocalObject(..) => {} // a place in memory, below
                other => return Err(self.name_error(target, name, other, true)),
            }
        }
        match self.place_of(target)? {
            Some(p) => self.postfix_place(target, &p, bop, src.text(op)),
            None => Err(src.unsupported(target, "assignment to this expression")),
        }
    }

    /// `x++` / `x--` on the plain scalar place `p`: a load of the old value (the value of the
    /// expression) and a store of the new one.
    fn postfix_place(&mut self, target: Node, p: &Place, op: BinOp, text: &str) -> R<TExpr> {
        let src = self.src;
        match &p.ty {
            Ty::Int { atomic: false, .. } => {}
            Ty::Ptr { .. } => {
                let name = src.text(target);
                return Err(src.unsupported(target, &format!("`{text}` on pointer `{name}`")));
            }
            // `atomic_compound_value` lowers atomics before this is reached; the same
            // read-modify-write, whose value is the old one.
            Ty::Int { atomic: true, .. } => {
                return self.atomic_compound(target, p, op, text, true, &mut |_: &mut Self| {
                    Ok((Expr::Const(1), IntTy::I32))
                });
            }
            _ => {
                // Mutexes and aggregates: refused as for the statement.
                return self.write_place(target, p, Some((op, text)), &mut |_: &mut Self| {
                    Ok((Expr::Const(1), IntTy::I32))
                });
            }
        }
        let ty = p.ty.int_ty();
        let old = self.load_place(p, MemOrder::NonAtomic);
        let (new, _) = self.arith(op, old.clone(), ty, Expr::Const(1), IntTy::I32);
        self.write_place(target, p, None, &mut |_: &mut Self| Ok((new.clone(), ty)))?;
        Ok((old, super::promote(ty)))
    }

    /// The value `v` in a register or constant: an expression over registers is copied into a
    /// temporary, so that its uses do not repeat the computation.
    fn materialise(&mut self, v: Expr, ty: IntTy) -> Expr {
        match v {
            Expr::Const(_) | Expr::Reg(_) => v,
            v => {
                let t = self.new_temp(ty);
                self.emit(Instr::Assign { dst: t, val: v });
                Expr::Reg(t)
            }
        }
    }

    /// Refuses the full expression around `n` when it modifies a variable and reads or
    /// modifies it elsewhere without a sequence point in between (undefined in C).
    pub(super) fn check_sequencing(&self, n: Node) -> R<()> {
        let mut full = n;
        while let Some(p) = full.parent() {
            if !inside_expression(p.kind()) {
                break;
            }
            full = p;
        }
        self.accesses(full, 0).map(|_| ())
    }

    /// What `n` reads and modifies; an error at the first operator whose unsequenced operands
    /// conflict.
    fn accesses(&self, n: Node, depth: usize) -> R<Access<'a>> {
        let src = self.src;
        if depth > MAX_DEPTH {
            return Ok(Access::default()); // the lowering refuses such depths anyway
        }
        let field = |f: &str| n.child_by_field_name(f);
        let op = field("operator").map(|o| src.text(o)).unwrap_or("");
        let sequenced = match n.kind() {
            "identifier" => {
                return Ok(Access {
                    reads: vec![src.text(n)],
                    writes: vec![],
                })
            }
            "assignment_expression" | "update_expression" => return self.modification(n, depth),
            "binary_expression" => matches!(op, "&&" | "||"),
            "conditional_expression" | "comma_expression" => true,
            _ => false,
        };
        let mut acc = Access::default();
        for c in named_children(n) {
            let a = self.accesses(c, depth + 1)?;
            if !sequenced {
                if let Some(v) = acc.conflict(&a) {
                    return Err(unsequenced(self, n, v));
                }
            }
            acc = acc.join(a);
        }
        Ok(acc)
    }

    /// An assignment or increment: the target is modified after both operands are computed,
    /// but unsequenced with the side effects of the right operand.
    fn modification(&self, n: Node, depth: usize) -> R<Access<'a>> {
        let src = self.src;
        let compound = n.kind() == "update_expression"
            || n.child_by_field_name("operator")
                .is_some_and(|o| src.text(o) != "=");
        let target = n
            .child_by_field_name("left")
            .or_else(|| n.child_by_field_name("argument"))
            .map(strip_parens);
        let Some(target) = target else {
            return Ok(Access::default());
        };
        // The target's own computation (`a[i]`, `*p`): its parts are read.
        let (mut lhs, name) = if target.kind() == "identifier" {
            (Access::default(), Some(src.text(target)))
        } else {
            (self.accesses(target, depth + 1)?, None)
        };
        let rhs = match n.child_by_field_name("right") {
            Some(r) => self.accesses(r, depth + 1)?,
            None => Access::default(),
        };
        if let Some(v) = lhs.conflict(&rhs) {
            return Err(unsequenced(self, n, v));
        }
        if let Some(v) = name {
            if rhs.writes.contains(&v) {
                return Err(unsequenced(self, n, v));
            }
            lhs.writes.push(v);
            if compound {
                lhs.reads.push(v);
            }
        }
        Ok(lhs.join(rhs))
    }
}

fn unsequenced(l: &FnLower, at: Node, var: &str) -> crate::frontend::Diagnostic {
    l.src.error(
        at,
        &format!(
            "`{var}` is modified and also read or modified elsewhere in this expression, with \
             no sequence point in between (undefined behaviour in C)"
        ),
    )
}
