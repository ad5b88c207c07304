//! Function bodies using CDSChecker's `<unrelacy.h>` types (see `frontend/relacy.rs`):
//! `v($)` of an `rl::var` is a read of it, an `rl::` backoff local declares nothing and its
//! `yield()` does nothing.

use super::{named_children, strip_parens, FnLower, Name, TExpr, R};
use crate::frontend::relacy;
use crate::frontend::types::IntTy;
use crate::ir::Expr;
use tree_sitter::Node;

impl FnLower<'_, '_> {
    /// `v()` — Relacy's `v($)` once `$` is expanded — where `v` (a variable, or a member
    /// reached by name or through `.` / `->`) was declared `rl::var<T>`: the value of `v`, read
    /// like any plain `T`. `None` for every other call.
    pub(super) fn relacy_read(&mut self, call: Node) -> R<Option<TExpr>> {
        if self.cx.types.relacy_vars.borrow().is_empty() {
            return Ok(None);
        }
        let src = self.src;
        let Some(f) = call.child_by_field_name("function").map(strip_parens) else {
            return Ok(None);
        };
        let no_args = call
            .child_by_field_name("arguments")
            .is_some_and(|a| named_children(a).is_empty());
        let name = match f.kind() {
            "identifier" => {
                let name = src.text(f);
                if matches!(self.lookup(name), Name::Function | Name::Unknown) {
                    return Ok(None);
                }
                name
            }
            "field_expression" => match f.child_by_field_name("field") {
                Some(field) => src.text(field),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        if !no_args || !self.cx.types.relacy_vars.borrow().contains(name) {
            return Ok(None);
        }
        self.texpr(f).map(Some)
    }

    /// A local declaration of an `rl::` backoff (`rl::linear_backoff bo;`): nothing to
    /// allocate; its names are remembered for `bo.yield()`. `None` for other declarations.
    pub(super) fn backoff_decl(&mut self, s: Node) -> R<Option<bool>> {
        let src = self.src;
        let Some(ty) = s.child_by_field_name("type") else {
            return Ok(None);
        };
        if !relacy::is_backoff(&src, ty) {
            return Ok(None);
        }
        let mut c = s.walk();
        for d in s.children_by_field_name("declarator", &mut c) {
            if d.kind() != "identifier" {
                return Err(src.unsupported(
                    d,
                    "this declaration of an rl:: backoff (write `rl::backoff name;`)",
                ));
            }
            self.cpp.backoffs.push(src.text(d).to_string());
        }
        Ok(Some(false))
    }

    /// `bo.yield()` on an `rl::` backoff local: nothing (the header's `yield` is empty).
    pub(super) fn backoff_call(&self, obj: Node, method: &str, args: &[Node]) -> Option<TExpr> {
        let name = self.src.text(obj);
        let known = obj.kind() == "identifier" && self.cpp.backoffs.iter().any(|b| b == name);
        (known && method == "yield" && args.is_empty()).then_some((Expr::Const(0), IntTy::I32))
    }
}
