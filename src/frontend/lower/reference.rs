//! C++ lvalue references (`T &r`): a reference parameter of an inlined function and a local
//! reference `T &r = x;` are another name for the object they are bound to, fixed when bound.
//!
//! Bound to a variable, the reference takes the variable's own binding (the same register, the
//! same global cell, the same object): reads and writes through it are those of the variable;
//! so does one bound to a scalar at a fixed cell (`a[1]`, `g.f`). Bound to any other lvalue in
//! memory (`a[i]`, `p->next`, `*p`, an aggregate), the object's address is computed once, into a
//! register, and the reference is a local object at that address (as a class's members are
//! bound inside its member functions, `lower/class.rs`). The referenced type must be the
//! object's type. Refused: a reference bound to a value that is not an object (a `const T &`
//! bound to a temporary such as `f(1)`), to an object of another type (a converted temporary),
//! rvalue references (`T &&`), references outside function bodies, reference members and
//! functions returning a reference (`classes.rs`), and references to thread handles.

use super::memory::addr_value;
use super::{strip_parens, types, Binding, FnLower, IntTy, Name, R};
use crate::frontend::types::{DeclSpec, Ty};
use crate::ir::{Addr, Instr};
use tree_sitter::Node;

/// The declarator inside `T &d` if `d` is an lvalue reference declarator (`None` for any other
/// declarator); an rvalue reference `T &&d` is refused.
pub(super) fn referenced<'t>(src: &super::Src, d: Node<'t>) -> R<Option<Node<'t>>> {
    if d.kind() != "reference_declarator" {
        return Ok(None);
    }
    let mut c = d.walk();
    let rvalue = d
        .children(&mut c)
        .any(|k| !k.is_named() && src.text(k) == "&&");
    if rvalue {
        return Err(src.unsupported(d, "rvalue reference (`T &&`)"));
    }
    let inner = super::named_children(d).last().copied();
    inner
        .map(Some)
        .ok_or_else(|| src.unsupported(d, "reference declarator"))
}

impl<'a> FnLower<'_, 'a> {
    /// The binding of a reference to `ty` named `name` bound to the lvalue `arg` (see the module
    /// doc).
    pub(super) fn reference_binding(&mut self, arg: Node, name: &str, ty: &Ty) -> R<Binding> {
        let src = self.src;
        let a = strip_parens(arg);
        if matches!(a.kind(), "identifier" | "type_identifier") {
            let (b, of) = match self.lookup(src.text(a)) {
                Name::Local(r) => (
                    Some(Binding::Var(r)),
                    match self.reg_ptr.get(r).cloned().flatten() {
                        Some(to) => Ty::Ptr {
                            to: Box::new(to),
                            atomic: false,
                        },
                        None => Ty::Int {
                            ty: self.reg_tys.get(r).copied().unwrap_or(IntTy::I32),
                            atomic: false,
                        },
                    },
                ),
                Name::Global(loc) | Name::Mutex(loc) => {
                    (Some(Binding::Cell(loc)), self.cell_ty(loc))
                }
                Name::Object(i) => (
                    Some(Binding::Object(i)),
                    self.cx.objects.get(i).map_or(Ty::Void, |o| o.ty.clone()),
                ),
                Name::LocalObject(r, i) => (
                    Some(Binding::LocalObject(r, i)),
                    self.local_tys.get(i).cloned().unwrap_or(Ty::Void),
                ),
                _ => (None, Ty::Void),
            };
            if let Some(b) = b {
                self.same_type(arg, name, ty, &of)?;
                return Ok(b);
            }
        }
        let Some(p) = self.place_of(a)? else {
            return Err(src.unsupported(
                arg,
                &format!(
                    "reference `{name}` bound to a value that is not a variable or an object in \
                     memory (a temporary)"
                ),
            ));
        };
        self.same_type(arg, name, ty, &p.ty)?;
        if let Addr::Fixed(loc) = p.addr {
            if matches!(p.ty, Ty::Int { .. } | Ty::Ptr { .. }) && self.cell_ty(loc) == p.ty {
                // A scalar at a fixed cell (`a[1]`, `g.f`): that cell, as a global's name is.
                return Ok(Binding::Cell(loc));
            }
        }
        let r = self.new_reg(name, IntTy::I64);
        self.emit(Instr::Assign {
            dst: r,
            val: addr_value(&p.addr),
        });
        self.local_tys.push(p.ty);
        Ok(Binding::LocalObject(r, self.local_tys.len() - 1))
    }

    /// A reference to `ty` binds only an object of type `ty` (C++ would bind a `const T &` to
    /// a converted temporary).
    fn same_type(&self, arg: Node, name: &str, ty: &Ty, of: &Ty) -> R<()> {
        let strip = |t: &Ty| match t {
            Ty::Int { ty, .. } => Ty::Int {
                ty: *ty,
                atomic: false,
            },
            t => t.clone(),
        };
        let atomic = |t: &Ty| matches!(t, Ty::Int { atomic: true, .. });
        if strip(ty) == strip(of) && atomic(ty) == atomic(of) && *ty != Ty::Thread {
            return Ok(());
        }
        let src = self.src;
        let text = src.text(arg);
        Err(src.unsupported(
            arg,
            &format!(
                "reference `{name}` bound to `{text}` of another type (a converted temporary); \
                 a reference binds an object of its own type"
            ),
        ))
    }

    /// `T &r = x;` in a function body: binds `r` (see the module doc). `Ok(false)` when `d` is
    /// not a reference declarator.
    pub(super) fn reference_local(&mut self, d: Node, spec: &DeclSpec) -> R<bool> {
        let src = self.src;
        let (target, init) = match d.kind() {
            "init_declarator" => (
                d.child_by_field_name("declarator"),
                d.child_by_field_name("value"),
            ),
            _ => (Some(d), None),
        };
        let Some(target) = target else {
            return Ok(false);
        };
        let Some(inner) = referenced(&src, target)? else {
            return Ok(false);
        };
        let decl = types::declarator(&src, spec, inner, &mut |_| Ok(1))?;
        let name = src.text(decl.name).to_string();
        let Some(init) = init else {
            return Err(src.error(d, &format!("reference `{name}` without an initialiser")));
        };
        let init = match init.kind() {
            "initializer_list" | "argument_list" => match super::named_children(init).as_slice() {
                [one] => *one,
                _ => return Err(src.unsupported(init, "reference initialiser")),
            },
            _ => init,
        };
        let ty = match decl.ty {
            Ty::Int { ty, .. } if spec.atomic => Ty::Int { ty, atomic: true },
            t => t,
        };
        let b = self.reference_binding(init, &name, &ty)?;
        self.bind(&name, b);
        Ok(true)
    }
}
