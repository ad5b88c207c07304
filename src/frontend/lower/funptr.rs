//! Function pointers: functions as values, calls and thread creations through them.
//!
//! A function's value is a constant (`FN_BASE` + the function's rank among the names of the
//! file's function definitions, in sorted order): a pointer that addresses no memory cell, so a
//! data access through it is invalid. `f` and `&f` in an expression, a global initialiser
//! (`void *(*fns[])(void *) = {t1, t2};`), a variable, array element or struct member of
//! function-pointer type (`R (*fp)(P)`, or a `typedef` of one) hold such values like any
//! pointer.
//!
//! A call through a pointer (`fp(x)`, `(*fp)(x)`, `ops->get()`, `fns[i](x)`) evaluates the
//! pointer, then compares it with each **candidate** — a function of the file whose address the
//! program takes (named other than as a callee), with as many parameters as the call has
//! arguments, defined before the function being lowered — and runs the matching one, inlined
//! as a direct call would be (its arguments evaluated then). A value that is none of them
//! (null, a data pointer, a function not among the candidates) is undefined behaviour, reported
//! as `ub`. `pthread_create` / `thrd_create` with a function-pointer argument likewise spawn the
//! matching thread function; the thread functions such a call may start are found with the
//! others (see `reachable_spawns`): every function whose address is taken and whose signature
//! fits the API.

use super::{bin, strip_parens, FnLower, TExpr, R};
use crate::frontend::named_children;
use crate::frontend::types::IntTy;
use crate::ir::{BinOp, CheckKind, Expr, FuncId, Instr};
use std::collections::BTreeSet;
use tree_sitter::Node;

/// The value of the first function (no location is this far: a function's value never
/// addresses a cell).
pub(crate) const FN_BASE: i64 = 1 << 40;

/// Whether each parameter of function definition `def` is a pointer (`(void)` has none).
fn parameter_kinds(def: Node) -> Option<Vec<bool>> {
    let fdecl = def
        .child_by_field_name("declarator")
        .and_then(crate::frontend::function_declarator)?;
    let params = named_children(fdecl.child_by_field_name("parameters")?);
    let void = |p: &Node| p.kind() == "parameter_declaration" && p.named_child_count() == 1;
    if let [p] = params.as_slice() {
        if void(p) && p.child_by_field_name("declarator").is_none() {
            return Some(Vec::new());
        }
    }
    Some(
        params
            .iter()
            .map(|p| {
                p.child_by_field_name("declarator")
                    .is_some_and(|d| d.kind().contains("pointer_declarator"))
            })
            .collect(),
    )
}

impl FnLower<'_, '_> {
    /// The value of function `name` (defined in the file).
    pub(super) fn function_value(&self, name: &str) -> Option<i64> {
        let rank = self.cx.fn_order.iter().position(|f| f == name)?;
        Some(FN_BASE + rank as i64)
    }

    /// Whether `call` goes through a pointer: its callee is not a name, or names a variable.
    pub(super) fn is_indirect_call(&self, call: Node) -> bool {
        let Some(f) = pointer_callee(call) else {
            return false;
        };
        if f.kind() != "identifier" {
            // C++ member calls and qualified names are the C++ lowering's, except a call
            // through a data member.
            return match (self.src.lang, f.kind()) {
                (crate::ir::Lang::C, _) => true,
                (_, "field_expression") => self.member_is_data(f),
                (_, "subscript_expression" | "call_expression") => true,
                _ => false,
            };
        }
        matches!(
            self.lookup(self.src.text(f)),
            super::Name::Local(_)
                | super::Name::Global(_)
                | super::Name::Object(_)
                | super::Name::LocalObject(..)
        )
    }
}

impl FnLower<'_, '_> {
    /// Whether the member `f` (`o.m` / `p->m`, of a struct whose type is known without
    /// evaluating anything) is a data member (a function pointer), not a member function.
    fn member_is_data(&self, f: Node) -> bool {
        let (Some(obj), Some(field), Some(op)) = (
            f.child_by_field_name("argument"),
            f.child_by_field_name("field"),
            f.child_by_field_name("operator"),
        ) else {
            return false;
        };
        let ty = if self.src.text(op) == "->" {
            match self.lookup(self.src.text(strip_parens(obj))) {
                super::Name::Local(r) => self.reg_ptr.get(r).cloned().flatten(),
                _ => None,
            }
        } else {
            self.peek_place_type(obj)
        };
        match ty {
            Some(crate::frontend::types::Ty::Struct(id)) => {
                self.cx.types.field(id, self.src.text(field)).is_some()
            }
            _ => false,
        }
    }
}

/// The callee node of a call through a pointer: `fp` for `fp(..)`, `(*fp)(..)`.
pub(super) fn pointer_callee(call: Node) -> Option<Node> {
    let mut f = strip_parens(call.child_by_field_name("function")?);
    while f.kind() == "pointer_expression"
        && f.child_by_field_name("operator").map(|o| o.kind()) == Some("*")
    {
        f = strip_parens(f.child_by_field_name("argument")?);
    }
    Some(f)
}

impl FnLower<'_, '_> {
    /// The candidates of a call through a pointer with arguments `args` (see the module doc):
    /// as many parameters as arguments, and no argument that is surely an integer for a
    /// pointer parameter or the converse (a well-typed call cannot reach those).
    fn call_candidates(&self, args: &[Node]) -> Vec<String> {
        let root = self.root_start;
        let kinds: Vec<Option<bool>> = args.iter().map(|a| self.arg_kind(*a)).collect();
        let fits = |def: Node| {
            parameter_kinds(def).is_some_and(|ps| {
                ps.len() == kinds.len()
                    && ps
                        .iter()
                        .zip(&kinds)
                        .all(|(p, a)| a.is_none_or(|a| a == *p))
            })
        };
        self.cx
            .fn_taken
            .iter()
            .filter(|name| {
                self.cx.fn_defs.get(*name).is_some_and(|d| {
                    d.start_byte() < root && **name != self.cx.main_name && fits(*d)
                })
            })
            .cloned()
            .collect()
    }

    /// Whether argument `n` is surely a pointer (`Some(true)`), surely an integer
    /// (`Some(false)`), or either (`None`: null, unknown).
    fn arg_kind(&self, n: Node) -> Option<bool> {
        let n = strip_parens(n);
        let src = self.src;
        match n.kind() {
            "number_literal" => (src.text(n) != "0").then_some(false),
            "char_literal" | "true" | "false" => Some(false),
            "string_literal" => Some(true),
            "pointer_expression" => n
                .child_by_field_name("operator")
                .is_some_and(|o| src.text(o) == "&")
                .then_some(true),
            "identifier" => match self.lookup(src.text(n)) {
                super::Name::Local(r) => Some(self.reg_ptr.get(r).is_some_and(|p| p.is_some())),
                _ => None,
            },
            _ => None,
        }
    }

    /// `call` through a function pointer (as a value when `value`): the pointer's value
    /// selects one of the candidates, inlined.
    pub(super) fn indirect_call(&mut self, call: Node, value: bool) -> R<TExpr> {
        let src = self.src;
        let f = pointer_callee(call).ok_or_else(|| src.unsupported(call, "call"))?;
        let target = self.any_value(f)?;
        let args = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let candidates = self.call_candidates(&args);
        let result = self.new_temp(IntTy::I64);
        let mut ends = Vec::new();
        for name in candidates {
            let v = self.function_value(&name).unwrap_or(0);
            let test = self.emit(Instr::BranchIfZero {
                cond: bin(BinOp::Eq, target.clone(), Expr::Const(v)),
                target: 0,
            });
            let (e, _) = self.inline_call(call, &name, &args, value)?;
            self.emit(Instr::Assign {
                dst: result,
                val: e,
            });
            ends.push(self.emit(Instr::Jump { target: 0 }));
            let next = self.body.len();
            self.patch(test, next);
        }
        self.no_function_here(call);
        let end = self.body.len();
        for j in ends {
            self.patch(j, end);
        }
        Ok((Expr::Reg(result), IntTy::I64))
    }

    /// The thread creation of `api` with a function-pointer argument `f`: one
    /// [`Instr::Spawn`] per thread function the pointer may hold (`spawn` is called with
    /// each), else undefined behaviour.
    pub(super) fn indirect_spawn(
        &mut self,
        f: Node,
        spawn: &mut dyn FnMut(&mut Self, FuncId),
    ) -> R<()> {
        let target = self.any_value(f)?;
        let mut threads: Vec<(String, FuncId)> = self
            .cx
            .fn_taken
            .iter()
            .filter_map(|name| {
                let fid = *self.cx.func_ids.get(name)?;
                (fid != self.cx.main).then(|| (name.clone(), fid))
            })
            .collect();
        threads.sort();
        let mut ends = Vec::new();
        for (name, fid) in threads {
            let v = self.function_value(&name).unwrap_or(0);
            let test = self.emit(Instr::BranchIfZero {
                cond: bin(BinOp::Eq, target.clone(), Expr::Const(v)),
                target: 0,
            });
            spawn(self, fid);
            ends.push(self.emit(Instr::Jump { target: 0 }));
            let next = self.body.len();
            self.patch(test, next);
        }
        self.no_function_here(f);
        let end = self.body.len();
        for j in ends {
            self.patch(j, end);
        }
        Ok(())
    }

    /// The undefined behaviour of calling through a pointer that holds none of the
    /// candidates.
    fn no_function_here(&mut self, at: Node) {
        let text = self.src.text(at).to_string();
        self.emit(Instr::Check {
            cond: Expr::Const(0),
            kind: CheckKind::Ub,
            message: format!(
                "call through `{text}`, which points to no function it can call here (a function \
                 of the file whose address is taken, defined before, with this many parameters)"
            ),
        });
    }
}

/// The sorted names of the functions defined in the file (their ranks are their values).
pub(crate) fn function_order(defs: &[(&str, Node)]) -> Vec<String> {
    let set: BTreeSet<String> = defs.iter().map(|(n, _)| n.to_string()).collect();
    set.into_iter().collect()
}
