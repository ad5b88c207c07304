//! The instrumented dialect of the FenSying/CDSChecker test programs.
//!
//! * **Leading location arguments.** The thesis's model checker takes every atomic operation
//!   with two leading arguments `__FILE__, __LINE__`:
//!   `atomic_store_explicit(__FILE__, __LINE__, &x, 1, memory_order_relaxed)`,
//!   `atomic_thread_fence(__FILE__, __LINE__, memory_order_seq_cst)`,
//!   `x.store(__FILE__, __LINE__, 1, std::memory_order_relaxed)`. After preprocessing the pair
//!   is a string literal and an integer literal; [`FnLower::strip_location`] drops it from a
//!   call of a C atomic function (`atomic_load/store/exchange/fetch_*/compare_exchange_*`,
//!   plain and `_explicit`, `atomic_init`, `atomic_thread_fence`, `atomic_signal_fence`,
//!   `atomic_flag_*`; `std::`-qualified too) when the call has exactly the function's own
//!   arity plus two, and [`strip_member_location`] from a member call on a `std::atomic` when
//!   what remains is a valid argument count for the member. The pair is recognised by the
//!   kinds of the parsed arguments, not by their text, so a macro that expands to it (or a
//!   literal pair written by hand) is recognised too; any other shape is left alone and
//!   reported by the function's own arity check. A user's own definition of a function with
//!   one of these names takes its arguments as written.
//! * **librace.h.** `store_8/16/32/64(addr, v)` and `load_8/16/32/64(addr)` are CDSChecker's
//!   instrumented *plain* accesses: a non-atomic store of `v` converted to `uintN_t`, and a
//!   non-atomic load whose value is a `uintN_t` (so a race on them is a data race). `addr` is
//!   `&place` or a pointer expression; the cell it addresses must be an integer of `N` bits
//!   (atomic or not: the access is plain either way); other widths and pointer cells are
//!   refused, since a partial or pointer-typed access is not modelled.
//! * **Thread handles.** CDSChecker's `thrd_t` is a struct whose one member `priv` identifies
//!   the thread: `h.priv` (of a handle variable, a handle array's element or a handle in
//!   memory) is the handle's id, so `curr.priv == ts[i].priv` compares two threads as
//!   `thrd_equal` does ([`FnLower::handle_member`]); `thrd_t curr = thrd_current();` (any
//!   handle as the initialiser) declares a handle holding that id.

use super::memory::Place;
use super::{promote, strip_parens, FnLower, TExpr, R};
use crate::frontend::literal;
use crate::frontend::types::{IntTy, Ty};
use crate::frontend::Src;
use crate::ir::{Instr, MemOrder};
use tree_sitter::Node;

/// CDSChecker's name of the one member of its `thrd_t`.
const HANDLE_MEMBER: &str = "priv";

/// The C atomic functions and their arity without the location pair.
const C_ARITY: &[(&str, usize)] = &[
    ("atomic_load", 1),
    ("atomic_load_explicit", 2),
    ("atomic_store", 2),
    ("atomic_store_explicit", 3),
    ("atomic_exchange", 2),
    ("atomic_exchange_explicit", 3),
    ("atomic_fetch_add", 2),
    ("atomic_fetch_add_explicit", 3),
    ("atomic_fetch_sub", 2),
    ("atomic_fetch_sub_explicit", 3),
    ("atomic_fetch_and", 2),
    ("atomic_fetch_and_explicit", 3),
    ("atomic_fetch_or", 2),
    ("atomic_fetch_or_explicit", 3),
    ("atomic_fetch_xor", 2),
    ("atomic_fetch_xor_explicit", 3),
    ("atomic_compare_exchange_strong", 3),
    ("atomic_compare_exchange_strong_explicit", 5),
    ("atomic_compare_exchange_weak", 3),
    ("atomic_compare_exchange_weak_explicit", 5),
    ("atomic_init", 2),
    ("atomic_thread_fence", 1),
    ("atomic_signal_fence", 1),
    ("atomic_flag_test_and_set", 1),
    ("atomic_flag_test_and_set_explicit", 2),
    ("atomic_flag_clear", 1),
    ("atomic_flag_clear_explicit", 2),
];

/// The member functions of `std::atomic` and the range of their argument counts.
const MEMBER_ARITY: &[(&str, usize, usize)] = &[
    ("load", 0, 1),
    ("store", 1, 2),
    ("exchange", 1, 2),
    ("fetch_add", 1, 2),
    ("fetch_sub", 1, 2),
    ("fetch_and", 1, 2),
    ("fetch_or", 1, 2),
    ("fetch_xor", 1, 2),
    ("compare_exchange_strong", 2, 4),
    ("compare_exchange_weak", 2, 4),
    ("test_and_set", 0, 1),
    ("clear", 0, 1),
];

/// The standard arity of the C atomic function `name`, if it is one.
pub(crate) fn c_arity(name: &str) -> Option<usize> {
    C_ARITY.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
}

/// Whether `args` starts with a location pair: a string literal (`__FILE__`) and an integer
/// literal (`__LINE__`).
pub(crate) fn has_location_pair(src: &Src, args: &[Node]) -> bool {
    let [file, line, ..] = args else {
        return false;
    };
    let (file, line) = (strip_parens(*file), strip_parens(*line));
    matches!(
        file.kind(),
        "string_literal" | "concatenated_string" | "raw_string_literal"
    ) && line.kind() == "number_literal"
        && literal::parse_number(src.text(line)).is_ok()
}

/// Drops the location pair of the member call `x.method(__FILE__, __LINE__, ...)` on a
/// `std::atomic` (see the module doc).
pub(super) fn strip_member_location<'t>(
    src: &Src,
    method: &str,
    args: &[Node<'t>],
) -> Vec<Node<'t>> {
    let fits = MEMBER_ARITY
        .iter()
        .find(|(m, _, _)| *m == method)
        .is_some_and(|&(_, lo, hi)| (lo + 2..=hi + 2).contains(&args.len()));
    if fits && has_location_pair(src, args) {
        args[2..].to_vec()
    } else {
        args.to_vec()
    }
}

impl FnLower<'_, '_> {
    /// Drops the location pair of a call of the C atomic function `name` (see the module doc).
    pub(super) fn strip_location(&self, name: &str, args: &mut Vec<Node>) {
        if self.cx.fn_defs.contains_key(name) {
            return;
        }
        if c_arity(name).is_some_and(|k| args.len() == k + 2) && has_location_pair(&self.src, args)
        {
            args.drain(..2);
        }
    }

    /// `load_N(addr)` / `store_N(addr, v)` of librace.h: `Some(value)` when `name` is one
    /// (the value of a store is 0 and refused when used).
    pub(super) fn librace_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
        used: bool,
    ) -> R<Option<TExpr>> {
        let Some((store, bits)) = librace_name(name) else {
            return Ok(None);
        };
        if self.cx.fn_defs.contains_key(name) {
            return Ok(None);
        }
        let ty = match bits {
            8 => IntTy::U8,
            16 => IntTy::U16,
            32 => IntTy::U32,
            _ => IntTy::U64,
        };
        self.arity(call, name, args, if store { 2 } else { 1 })?;
        let cell = self.race_place(args[0], name, bits)?;
        let cell_ty = cell.ty.int_ty();
        if store {
            if used {
                return Err(self
                    .src
                    .unsupported(call, &format!("`{name}` used as a value")));
            }
            let v = self.expr(args[1])?;
            let v = self.convert(v, ty);
            let val = self.convert(v, cell_ty);
            self.emit(Instr::Store {
                loc: cell.addr,
                val,
                order: MemOrder::NonAtomic,
            });
            return Ok(Some((crate::ir::Expr::Const(0), IntTy::I32)));
        }
        let v = self.load_place(&cell, MemOrder::NonAtomic);
        Ok(Some((self.convert(v, ty), promote(ty))))
    }

    /// The integer cell of `bits` bits that the first argument of `name` addresses.
    fn race_place(&mut self, arg: Node, name: &str, bits: usize) -> R<Place> {
        let src = self.src;
        let place = self.builtin_place(arg, name)?;
        let size = match &place.ty {
            Ty::Int { ty, .. } => int_bits(*ty),
            _ => 0,
        };
        if size != bits {
            let what = match &place.ty {
                Ty::Int { .. } => format!("an integer of {size} bits"),
                Ty::Ptr { .. } => "a pointer".to_string(),
                Ty::Void => "void (cast it to the integer type it holds)".to_string(),
                _ => "not an integer".to_string(),
            };
            return Err(src.unsupported(
                arg,
                &format!(
                    "`{name}` on `{}`, which is {what} (librace's `{name}` accesses a {bits}-bit integer)",
                    src.text(arg)
                ),
            ));
        }
        Ok(place)
    }
}

/// Whether the body of the function declared by `fdecl` names `name` (an identifier).
pub(super) fn body_mentions(src: &Src, fdecl: Node, name: &str) -> bool {
    let mut def = fdecl;
    while def.kind() != "function_definition" {
        match def.parent() {
            Some(p) => def = p,
            None => return false,
        }
    }
    let Some(body) = def.child_by_field_name("body") else {
        return false;
    };
    let mut found = false;
    crate::frontend::walk_nodes(body, &mut |n| {
        found |= n.kind() == "identifier" && src.text(n) == name;
    });
    found
}

/// `(store, bits)` of librace's `store_N` / `load_N`.
fn librace_name(name: &str) -> Option<(bool, usize)> {
    let (store, n) = match (name.strip_prefix("store_"), name.strip_prefix("load_")) {
        (Some(n), _) => (true, n),
        (_, Some(n)) => (false, n),
        _ => return None,
    };
    let bits = match n {
        "8" => 8,
        "16" => 16,
        "32" => 32,
        "64" => 64,
        _ => return None,
    };
    Some((store, bits))
}

/// The width of an integer type in bits (LP64).
fn int_bits(ty: IntTy) -> usize {
    match ty {
        IntTy::Bool | IntTy::I8 | IntTy::U8 => 8,
        IntTy::I16 | IntTy::U16 => 16,
        IntTy::I32 | IntTy::U32 => 32,
        IntTy::I64 | IntTy::U64 => 64,
    }
}

impl FnLower<'_, '_> {
    /// Whether `n` is `h.priv` of a thread handle `h` (see [`Self::handle_member`]).
    pub(super) fn is_handle_member(&self, n: Node) -> bool {
        let src = self.src;
        n.kind() == "field_expression"
            && n.child_by_field_name("operator").map(|o| src.text(o)) == Some(".")
            && n.child_by_field_name("field").map(|f| src.text(f)) == Some(HANDLE_MEMBER)
            && n.child_by_field_name("argument")
                .is_some_and(|h| self.is_handle(h))
    }

    /// `h.priv` of a thread handle `h` (CDSChecker's `thrd_t`): the handle's id. `None` for
    /// any other expression.
    pub(super) fn handle_member(&mut self, n: Node) -> R<Option<TExpr>> {
        if !self.is_handle_member(n) {
            return Ok(None);
        }
        let Some(h) = n.child_by_field_name("argument") else {
            return Ok(None);
        };
        Ok(Some((self.handle_expr(h)?, IntTy::I64)))
    }
}
