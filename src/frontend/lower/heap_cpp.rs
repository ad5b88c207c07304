//! C++ `new` and `delete` (the heap objects and their names are those of `heap.rs`).
//!
//! `new T` allocates one `T` (an [`ObjectKind::New`] object named `new@12`): indeterminate
//! without an initialiser for a scalar or a plain struct (C++ default initialisation), zeroed
//! by `new T()` / `new T{}`, and then written by `new T(v)` (one scalar, or a struct copied)
//! and `new T{a, b}` (the aggregate's members in order, missing ones zero). `new T[n]`
//! allocates `n` elements (`n` evaluated at run time; an [`ObjectKind::NewArray`] object),
//! indeterminate or zeroed by `new T[n]()`. `delete p` and `delete[] p` are
//! [`Instr::Free`]s the checker matches against the allocation. Placement `new`, arrays of
//! synchronisation objects or threads and multi-dimensional `new` are refused. Structs are
//! plain data (C++ classes are refused by `frontend/cpp.rs`), so no constructor runs.

use super::heap::{Count, Fill};
use super::{named_children, FnLower, TExpr, R};
use crate::frontend::lower::sync::Initial;
use crate::frontend::types::{self, IntTy, Ty};
use crate::ir::{Dealloc, Expr, Instr, ObjectKind};
use tree_sitter::Node;

impl FnLower<'_, '_> {
    /// `new T`, `new T(args)`, `new T{...}`, `new T[n]`: the new object's address.
    pub(super) fn new_expr(&mut self, n: Node) -> R<TExpr> {
        let src = self.src;
        if let Some(p) = n.child_by_field_name("placement") {
            return Err(src.unsupported(p, "placement `new`"));
        }
        let spec = types::decl_spec(&src, &self.cx.types, n)?;
        let to = spec.base();
        if matches!(to, Ty::Void) {
            return Err(src.error(n, "`new` of `void`"));
        }
        let args = n.child_by_field_name("arguments");
        let r = match n.child_by_field_name("declarator") {
            Some(d) => self.new_array(n, d, &to, args)?,
            None => self.new_object(n, &to, args)?,
        };
        Ok((Expr::Reg(r), IntTy::I64))
    }

    /// `new T`, `new T(...)`, `new T{...}`.
    fn new_object(&mut self, n: Node, to: &Ty, args: Option<Node>) -> R<usize> {
        let src = self.src;
        let items = args.map(named_children).unwrap_or_default();
        let sync = matches!(to, Ty::Mutex | Ty::Sync(_) | Ty::Thread);
        if sync && !items.is_empty() {
            let t = to.describe(&self.cx.types);
            return Err(src.unsupported(n, &format!("`new` of a `{t}` with arguments")));
        }
        if let Some(id) = self.constructs(to) {
            if matches!(to, Ty::Struct(_)) {
                return self.new_class_object(n, id, to, &items);
            }
        }
        let list = args.is_some_and(|a| a.kind() == "initializer_list");
        let aggregate = matches!(to, Ty::Struct(_) | Ty::Array(..));
        if !list && items.len() > 1 {
            return Err(src.unsupported(
                n,
                "`new T(a, b, ...)` (constructors are not supported; for an aggregate write \
                 `new T{a, b, ...}`)",
            ));
        }
        if list && !aggregate && items.len() > 1 {
            return Err(src.error(n, "too many initialisers for a scalar"));
        }
        let fill = Fill {
            kind: ObjectKind::New,
            indeterminate: args.is_none() && !sync,
            how: Initial::Constructed,
        };
        let r = self.alloc_elements(n, "new", to, Count::Const(1, 0), fill)?;
        let place = self.local_place_of(r, to.clone());
        match (args, items.as_slice()) {
            (Some(list), [_, ..]) if list.kind() == "initializer_list" && aggregate => {
                self.init_stores(&place, list)?
            }
            (_, [v]) => self.init_stores(&place, *v)?,
            _ => {}
        }
        Ok(r)
    }

    /// `new C(args)` / `new C{args}` / `new C` of a class that constructs: the object, then
    /// its constructor (`lower/class.rs`). The members the constructor leaves alone are
    /// indeterminate, as C++ leaves them.
    fn new_class_object(&mut self, n: Node, id: usize, to: &Ty, args: &[Node]) -> R<usize> {
        let fill = Fill {
            kind: ObjectKind::New,
            indeterminate: true,
            how: Initial::Constructed,
        };
        let r = self.alloc_elements(n, "new", to, Count::Const(1, 0), fill)?;
        self.construct(n, id, Expr::Reg(r), args)?;
        Ok(r)
    }

    /// `new T[n]`, `new T[n]()`, `new T[n]{}`.
    fn new_array(&mut self, n: Node, d: Node, to: &Ty, args: Option<Node>) -> R<usize> {
        let src = self.src;
        if named_children(d)
            .iter()
            .any(|c| c.kind() == "new_declarator")
        {
            return Err(src.unsupported(d, "multi-dimensional `new`"));
        }
        if matches!(to, Ty::Mutex | Ty::Sync(_) | Ty::Thread)
            || self.constructs(to).is_some()
            || self.destructs(to)
        {
            let t = to.describe(&self.cx.types);
            return Err(src.unsupported(
                n,
                &format!("`new[]` of `{t}` objects (arrays of non-trivial types)"),
            ));
        }
        if args.is_some_and(|a| !named_children(a).is_empty()) {
            return Err(src.unsupported(
                n,
                "`new T[n]` with initialisers (only `new T[n]` and `new T[n]()` are supported)",
            ));
        }
        let Some(len) = d.child_by_field_name("length") else {
            return Err(src.unsupported(d, "`new[]` without a length"));
        };
        let count = self.array_count(len, "new[]")?;
        let fill = Fill {
            kind: ObjectKind::NewArray,
            indeterminate: args.is_none(),
            how: Initial::Constructed,
        };
        self.alloc_elements(n, "new", to, count, fill)
    }

    /// The number of elements `len` of an array allocation by `func` (`new[]`).
    pub(super) fn array_count(&mut self, len: Node, func: &str) -> R<Count> {
        Ok(match self.expr(len)? {
            Expr::Const(k) if k < 0 => {
                let msg = format!("`{func}` of a negative length ({k})");
                return Err(self.src.error(len, &msg));
            }
            Expr::Const(k) => Count::Const(k, 0),
            e => Count::Runtime(e),
        })
    }

    /// `delete p` / `delete[] p`.
    pub(super) fn delete_expr(&mut self, n: Node) -> R<TExpr> {
        let src = self.src;
        let Some(arg) = named_children(n).last().copied() else {
            return Err(src.unsupported(n, "delete"));
        };
        let mut c = n.walk();
        let array = n.children(&mut c).any(|t| t.kind() == "[");
        let (ptr, pointee) = self.ptr_value(arg)?;
        let ptr = if self.destructs(&pointee) && !array {
            // The pointer, once: the destructor's `this`, then the free.
            let r = self.new_temp(IntTy::I64);
            self.emit(Instr::Assign { dst: r, val: ptr });
            self.destroy(n, &pointee, Expr::Reg(r))?;
            Expr::Reg(r)
        } else {
            ptr
        };
        let by = if array {
            Dealloc::DeleteArray
        } else {
            Dealloc::Delete
        };
        self.emit(Instr::Free { ptr, by });
        Ok((Expr::Const(0), IntTy::I32))
    }
}
