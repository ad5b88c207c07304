//! Places in memory: globals, array elements, struct members and pointer dereferences, and the
//! pointer values that address them.
//!
//! A [`Place`] is an lvalue in memory: an [`Addr`] and the front-end [`Ty`] of what is there. A
//! place whose address is known from the text (`x`, `s.f`, `a[2]`) is [`Addr::Fixed`]; an
//! element with a computed index (`a[i]`) is [`Addr::Computed`] bounded by the array, and a
//! dereference (`*p`, `p->f`, `p[i]`) is computed over every location (the interpreter reports
//! a null or out-of-bounds access as undefined behaviour; an access is atomic or not by its
//! order, whatever the cell was declared).
//!
//! Pointer values are integers ([`crate::ir::pointer_to`]); their pointee types travel with the
//! registers that hold them (`FnLower::reg_ptr`): a pointer variable, a temporary loaded from a
//! pointer cell, the old value of an RMW on one.

use super::{bin, strip_parens, FnLower, Name, R};
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{pointer_to, Addr, BinOp, Expr, Instr, MemOrder};
use tree_sitter::Node;

/// The upper bound of a dereference's range before the number of globals is known (clamped to
/// it at the end of the front end).
pub(crate) const ALL_LOCATIONS: usize = usize::MAX;

/// An lvalue in memory.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) addr: Addr,
    pub(crate) ty: Ty,
}

/// The pointer value of an address.
pub(crate) fn addr_value(a: &Addr) -> Expr {
    match a {
        Addr::Fixed(l) => Expr::Const(pointer_to(*l)),
        Addr::Computed { ptr, .. } | Addr::Within { ptr, .. } => ptr.clone(),
    }
}

/// `a` moved by `k` cells (within the same bounds).
pub(super) fn offset(a: &Addr, k: usize) -> Addr {
    if k == 0 {
        return a.clone();
    }
    match a {
        Addr::Fixed(l) => Addr::Fixed(l + k),
        Addr::Computed { ptr, lo, hi } => Addr::Computed {
            ptr: bin(BinOp::Add, ptr.clone(), Expr::Const(k as i64)),
            lo: *lo,
            hi: *hi,
        },
        Addr::Within { ptr, base, len } => Addr::Within {
            ptr: bin(BinOp::Add, ptr.clone(), Expr::Const(k as i64)),
            base: base.clone(),
            len: *len,
        },
    }
}

impl FnLower<'_, '_> {
    /// The place `n` denotes, or `None` if it is not in memory (a local variable, a value).
    pub(super) fn place_of(&mut self, n: Node) -> R<Option<Place>> {
        let src = self.src;
        let n = strip_parens(n);
        match n.kind() {
            // A type identifier: a name `C c(x);` parsed as a declaration (`ctor_args`).
            "identifier" | "type_identifier" => Ok(match self.lookup(src.text(n)) {
                Name::Global(loc) | Name::Mutex(loc) => Some(Place {
                    addr: Addr::Fixed(loc),
                    ty: self.cell_ty(loc),
                }),
                Name::Object(i) => self.cx.objects.get(i).map(|o| Place {
                    addr: Addr::Fixed(o.base),
                    ty: o.ty.clone(),
                }),
                Name::LocalObject(r, i) => Some(self.local_place(r, i)),
                Name::Unknown => {
                    let name = src.text(n);
                    return Err(src.error(n, &format!("undeclared identifier `{name}`")));
                }
                _ => None,
            }),
            "subscript_expression" => {
                let Some(arr) = n.child_by_field_name("argument") else {
                    return Err(src.unsupported(n, "subscript"));
                };
                let index = crate::frontend::cpp::subscript_index(&src, n)?;
                let index = match strip_parens(index).kind() {
                    // `a[(i)]` is fine; `a[i, j]` is not.
                    "comma_expression" => return Err(src.unsupported(index, "comma operator")),
                    _ => index,
                };
                if let Some(base) = self.place_of(arr)? {
                    if let Ty::Array(elem, len) = &base.ty {
                        let size = self.cx.types.size(elem);
                        let (i, ity) = self.texpr(index)?;
                        let _ = ity;
                        return self.element(n, &base.addr, elem, *len, size, i).map(Some);
                    }
                    if !matches!(base.ty, Ty::Ptr { .. }) {
                        let text = src.text(arr);
                        return Err(src.error(arr, &format!("`{text}` is not an array or pointer")));
                    }
                }
                let (p, pointee) = self.ptr_value(arr)?;
                let size = self.pointee_size(arr, &pointee)?;
                let i = self.expr(index)?;
                let ptr = bin(BinOp::Add, p, bin(BinOp::Mul, i, Expr::Const(size as i64)));
                Ok(Some(Place {
                    addr: Addr::Computed {
                        ptr,
                        lo: 0,
                        hi: ALL_LOCATIONS,
                    },
                    ty: pointee,
                }))
            }
            "field_expression" => {
                let (Some(arg), Some(field), Some(op)) = (
                    n.child_by_field_name("argument"),
                    n.child_by_field_name("field"),
                    n.child_by_field_name("operator"),
                ) else {
                    return Err(src.unsupported(n, "member access"));
                };
                let base = if src.text(op) == "->" {
                    let (p, pointee) = self.ptr_value(arg)?;
                    Place {
                        addr: Addr::Computed {
                            ptr: p,
                            lo: 0,
                            hi: ALL_LOCATIONS,
                        },
                        ty: pointee,
                    }
                } else {
                    match self.place_of(arg)? {
                        Some(p) => p,
                        None => {
                            let text = src.text(arg);
                            return Err(
                                src.error(arg, &format!("`{text}` is not a struct in memory"))
                            );
                        }
                    }
                };
                let Ty::Struct(id) = base.ty else {
                    let text = src.text(arg);
                    let what = if src.text(op) == "->" {
                        "a pointer to a struct"
                    } else {
                        "a struct"
                    };
                    return Err(src.error(arg, &format!("`{text}` is not {what}")));
                };
                let fname = src.text(field);
                let Some((off, ty)) = self.cx.types.field(id, fname) else {
                    let sname = Ty::Struct(id).describe(&self.cx.types);
                    return Err(src.error(field, &format!("{sname} has no member `{fname}`")));
                };
                Ok(Some(Place {
                    addr: offset(&base.addr, off),
                    ty,
                }))
            }
            "compound_literal_expression" => self.compound_literal(n).map(Some),
            "pointer_expression"
                if n.child_by_field_name("operator").map(|o| src.text(o)) == Some("*") =>
            {
                let Some(arg) = n.child_by_field_name("argument") else {
                    return Err(src.unsupported(n, "dereference"));
                };
                let (p, pointee) = self.ptr_value(arg)?;
                if matches!(pointee, Ty::Void) {
                    return Err(src.error(n, "dereference of a `void *` (cast it first)"));
                }
                Ok(Some(Place {
                    addr: Addr::Computed {
                        ptr: p,
                        lo: 0,
                        hi: ALL_LOCATIONS,
                    },
                    ty: pointee,
                }))
            }
            _ => Ok(None),
        }
    }

    /// The place of local object `i` whose address is in register `r`.
    pub(super) fn local_place(&self, r: usize, i: usize) -> Place {
        let ty = self.local_tys.get(i).cloned().unwrap_or(Ty::Void);
        self.local_place_of(r, ty)
    }

    /// The place of an object of type `ty` in memory whose address register `r` holds.
    pub(super) fn local_place_of(&self, r: usize, ty: Ty) -> Place {
        Place {
            addr: Addr::Within {
                ptr: Expr::Reg(r),
                base: Expr::Reg(r),
                len: self.cx.types.size(&ty).max(1),
            },
            ty,
        }
    }

    /// Element `i` of the array of `len` elements of `size` cells at `base`.
    pub(super) fn element(
        &mut self,
        at: Node,
        base: &Addr,
        elem: &Ty,
        len: usize,
        size: usize,
        i: Expr,
    ) -> R<Place> {
        let addr = match (&i, base) {
            (Expr::Const(k), _) if *k < 0 || *k as u64 >= len as u64 => {
                return Err(self.src.error(
                    at,
                    &format!("index {k} is out of bounds of an array of {len} elements"),
                ));
            }
            (Expr::Const(k), b) => offset(b, *k as usize * size),
            (_, Addr::Fixed(b)) => Addr::Computed {
                ptr: bin(
                    BinOp::Add,
                    Expr::Const(pointer_to(*b)),
                    bin(BinOp::Mul, i, Expr::Const(size as i64)),
                ),
                lo: *b,
                hi: b + len * size,
            },
            (_, Addr::Computed { ptr, lo, hi }) => Addr::Computed {
                ptr: bin(
                    BinOp::Add,
                    ptr.clone(),
                    bin(BinOp::Mul, i, Expr::Const(size as i64)),
                ),
                lo: *lo,
                hi: *hi,
            },
            // An array in an allocated object: bounded by the object.
            (_, Addr::Within { ptr, base, len }) => Addr::Within {
                ptr: bin(
                    BinOp::Add,
                    ptr.clone(),
                    bin(BinOp::Mul, i, Expr::Const(size as i64)),
                ),
                base: base.clone(),
                len: *len,
            },
        };
        Ok(Place {
            addr,
            ty: elem.clone(),
        })
    }

    fn pointee_size(&self, at: Node, pointee: &Ty) -> R<usize> {
        match self.cx.types.size(pointee) {
            0 => Err(self.src.error(
                at,
                "arithmetic on a `void *` (cast it to a typed pointer first)",
            )),
            n => Ok(n),
        }
    }

    /// The front-end type of memory cell `loc`.
    pub(super) fn cell_ty(&self, loc: usize) -> Ty {
        self.cx.cell_tys.get(loc).cloned().unwrap_or(Ty::Int {
            ty: IntTy::I64,
            atomic: false,
        })
    }

    /// Loads the scalar at `p` with `order` into a fresh temporary (which carries the pointee
    /// type when the cell holds a pointer).
    pub(super) fn load_place(&mut self, p: &Place, order: MemOrder) -> Expr {
        let t = self.new_temp(p.ty.int_ty());
        if let Ty::Ptr { to, .. } = &p.ty {
            self.set_pointee(t, (**to).clone());
        }
        self.emit(Instr::Load {
            dst: t,
            loc: p.addr.clone(),
            order,
        });
        Expr::Reg(t)
    }

    /// Reads place `p` in an expression: a plain load of a plain scalar, a seq_cst load of an
    /// atomic one; an array decays to a pointer to its first element.
    pub(super) fn read_place(&mut self, n: Node, p: &Place) -> R<(Expr, IntTy)> {
        let src = self.src;
        match &p.ty {
            Ty::Thread => Ok((self.load_place(p, MemOrder::NonAtomic), IntTy::I64)),
            Ty::Int { atomic, .. } | Ty::Ptr { atomic, .. } => {
                let order = if *atomic {
                    MemOrder::SeqCst
                } else {
                    MemOrder::NonAtomic
                };
                Ok((self.load_place(p, order), super::promote(p.ty.int_ty())))
            }
            Ty::Array(..) => Ok((addr_value(&p.addr), IntTy::I64)),
            Ty::Mutex => Err(super::mutex::misuse(&src, n, src.text(n), false)),
            Ty::Sync(k) => Err(super::mutex::object_misuse(
                &src,
                n,
                src.text(n),
                k.c_name(),
                false,
            )),
            Ty::Struct(_) => Err(self
                .operator_use_error(n, &p.ty)
                .unwrap_or_else(|| src.unsupported(n, "struct used as a value"))),
            Ty::Void => Err(src.unsupported(n, "this value")),
        }
    }

    pub(super) fn set_pointee(&mut self, r: usize, to: Ty) {
        if let Some(slot) = self.reg_ptr.get_mut(r) {
            *slot = Some(to);
        }
    }

    /// Whether `&x` of an `x` of type `ty` calls a class's own `operator&`.
    fn overloads_address_of(&self, ty: &Ty) -> bool {
        matches!(ty, Ty::Struct(id)
            if self.cx.class_of(*id).is_some_and(|c| c.defines_operator("operator&")))
    }

    /// A pointer-valued expression and the type it points to: `&place`, an array name, a
    /// pointer variable or a value loaded from a pointer cell, a cast to a pointer type,
    /// `p + i` / `p - i`, `NULL`.
    pub(super) fn ptr_value(&mut self, n: Node) -> R<(Expr, Ty)> {
        let src = self.src;
        let n = strip_parens(n);
        match n.kind() {
            "pointer_expression"
                if n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&") =>
            {
                let Some(arg) = n.child_by_field_name("argument") else {
                    return Err(src.unsupported(n, "address-of"));
                };
                if let Some(v) = self.named_function(arg) {
                    return Ok((Expr::Const(v), Ty::Void));
                }
                match self.place_of(arg)? {
                    Some(p) if self.overloads_address_of(&p.ty) => Err(src.unsupported(
                        n,
                        "address of an object whose class defines `operator&` (calls of \
                         overloaded operators are not supported)",
                    )),
                    Some(p) => Ok((addr_value(&p.addr), p.ty)),
                    None => {
                        let text = src.text(arg);
                        Err(src.unsupported(
                            n,
                            &format!(
                                "address of `{text}` (only objects in memory — globals, static \
                                 locals, their elements and members — have addresses)"
                            ),
                        ))
                    }
                }
            }
            "identifier" | "subscript_expression" | "field_expression"
                if matches!(self.peek_place_ty(n), Some(Ty::Array(..))) =>
            {
                let p = self
                    .place_of(n)?
                    .ok_or_else(|| src.internal("array place"))?;
                match p.ty {
                    Ty::Array(elem, _) => Ok((addr_value(&p.addr), *elem)),
                    _ => Err(src.internal("array place")),
                }
            }
            "cast_expression" => {
                let (Some(ty), Some(value)) = (
                    n.child_by_field_name("type"),
                    n.child_by_field_name("value"),
                ) else {
                    return Err(src.unsupported(n, "cast"));
                };
                let Some(to) = self.pointer_cast_type(ty)? else {
                    let text = src.text(ty);
                    return Err(src.error(n, &format!("cast to `{text}` is not a pointer")));
                };
                self.expect_pointee(value, &to);
                let e = match self.ptr_value(value) {
                    Ok((e, _)) => e,
                    Err(_) => self.expr(value)?,
                };
                Ok((e, to))
            }
            "binary_expression" => {
                let (Some(l), Some(r), Some(op)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                    n.child_by_field_name("operator"),
                ) else {
                    return Err(src.unsupported(n, "expression"));
                };
                let op = match src.text(op) {
                    "+" => BinOp::Add,
                    "-" => BinOp::Sub,
                    t => return Err(src.unsupported(n, &format!("operator `{t}` on a pointer"))),
                };
                let (p, pointee) = self.ptr_value(l)?;
                let size = self.pointee_size(n, &pointee)?;
                let i = self.expr(r)?;
                Ok((
                    bin(op, p, bin(BinOp::Mul, i, Expr::Const(size as i64))),
                    pointee,
                ))
            }
            "identifier" if self.named_function(n).is_some() => {
                Ok((Expr::Const(self.named_function(n).unwrap_or(0)), Ty::Void))
            }
            "compound_literal_expression" => {
                let p = self.compound_literal(n)?;
                match p.ty {
                    Ty::Array(elem, _) => Ok((addr_value(&p.addr), *elem)),
                    _ => Err(src.error(
                        n,
                        "a compound literal that is not an array is not a pointer",
                    )),
                }
            }
            // `c ? p : new T(...)`: each arm a pointer, evaluated only when chosen.
            "conditional_expression" if self.mode != super::Mode::Const => {
                let (Some(c), Some(a), Some(b)) = (
                    n.child_by_field_name("condition"),
                    n.child_by_field_name("consequence"),
                    n.child_by_field_name("alternative"),
                ) else {
                    return Err(src.unsupported(n, "`?:` without a middle operand"));
                };
                let c = self.expr(c)?;
                let (mut ta, mut tb) = (Ty::Void, Ty::Void);
                let e = self.ternary_branch(
                    n,
                    c,
                    &mut |l: &mut Self| {
                        let (e, to) = l.ptr_value(a)?;
                        ta = to;
                        Ok((e, IntTy::I64))
                    },
                    &mut |l: &mut Self| {
                        let (e, to) = l.ptr_value(b)?;
                        tb = to;
                        Ok((e, IntTy::I64))
                    },
                )?;
                let to = if ta == Ty::Void { tb } else { ta };
                if let Expr::Reg(r) = e {
                    self.set_pointee(r, to.clone());
                }
                Ok((e, to))
            }
            "null" => Ok((Expr::Const(0), Ty::Void)),
            "number_literal" if src.text(n) == "0" => Ok((Expr::Const(0), Ty::Void)),
            _ => {
                let (e, _) = self.texpr(n)?;
                if let Expr::Reg(r) = e {
                    if let Some(Some(to)) = self.reg_ptr.get(r) {
                        return Ok((e, to.clone()));
                    }
                }
                let text = src.text(n);
                Err(src.error(n, &format!("`{text}` is not a pointer")))
            }
        }
    }

    /// The value of the function `n` names (a function of the file, not shadowed by a
    /// variable), if it names one.
    fn named_function(&self, n: Node) -> Option<i64> {
        let n = strip_parens(n);
        let name = self.src.text(n);
        let function = n.kind() == "identifier"
            && matches!(self.lookup(name), Name::Function)
            && self.cx.fn_defs.contains_key(name);
        function.then(|| self.function_value(name)).flatten()
    }

    /// [`Self::peek_place_ty`] for other modules.
    pub(super) fn peek_place_type(&self, n: Node) -> Option<Ty> {
        self.peek_place_ty(n)
    }

    /// The type of the place `n` names, without emitting anything (only for names and
    /// constant-index elements / members of named objects).
    fn peek_place_ty(&self, n: Node) -> Option<Ty> {
        let src = self.src;
        let n = strip_parens(n);
        match n.kind() {
            "identifier" | "type_identifier" => match self.lookup(src.text(n)) {
                Name::Object(i) => self.cx.objects.get(i).map(|o| o.ty.clone()),
                Name::LocalObject(_, i) => self.local_tys.get(i).cloned(),
                Name::Global(loc) => Some(self.cell_ty(loc)),
                _ => None,
            },
            "subscript_expression" => {
                match self.peek_place_ty(n.child_by_field_name("argument")?)? {
                    Ty::Array(elem, _) => Some(*elem),
                    _ => None,
                }
            }
            "field_expression" => {
                let op = n.child_by_field_name("operator")?;
                if src.text(op) != "." {
                    return None;
                }
                let Ty::Struct(id) = self.peek_place_ty(n.child_by_field_name("argument")?)? else {
                    return None;
                };
                let f = n.child_by_field_name("field")?;
                self.cx.types.field(id, src.text(f)).map(|(_, t)| t)
            }
            _ => None,
        }
    }

    /// Whether `n` is a cast to a pointer type (`(T *)e`).
    pub(super) fn is_pointer_cast(&self, n: Node) -> bool {
        n.child_by_field_name("type")
            .is_some_and(|t| matches!(self.pointer_cast_type(t), Ok(Some(_))))
    }

    /// The pointee of a cast's type name if it is a pointer type (`(T *)`), else `None`.
    pub(super) fn pointer_cast_type(&self, ty: Node) -> R<Option<Ty>> {
        let src = self.src;
        let spec = crate::frontend::types::decl_spec(&src, &self.cx.types, ty)?;
        let Some(d) = ty.child_by_field_name("declarator") else {
            return Ok(None);
        };
        let base = Ty::of_base(spec.ty, spec.atomic);
        // `(T (*)[N])`: a pointer to arrays of N `T`.
        if d.kind() == "abstract_array_declarator" {
            let inner = d
                .child_by_field_name("declarator")
                .filter(|p| p.kind() == "abstract_parenthesized_declarator")
                .and_then(|p| super::named_children(p).first().copied())
                .filter(|p| {
                    p.kind() == "abstract_pointer_declarator" && p.named_child_count() == 0
                });
            return match (inner, d.child_by_field_name("size")) {
                (Some(_), Some(size)) => {
                    Ok(Some(Ty::Array(Box::new(base), self.const_size(size)?)))
                }
                _ => Ok(None),
            };
        }
        if d.kind() != "abstract_pointer_declarator" {
            return Ok(None);
        }
        match d.child_by_field_name("declarator") {
            None => Ok(Some(base)),
            Some(inner) if inner.kind() == "abstract_pointer_declarator" => Ok(Some(Ty::Ptr {
                to: Box::new(base),
                atomic: false,
            })),
            Some(_) => {
                let text = src.text(ty);
                Err(src.unsupported(ty, &format!("cast to `{text}`")))
            }
        }
    }

    /// The address a pointer value points to: fixed when it is a constant pointer to an
    /// existing location, else computed over every location.
    pub(super) fn deref_addr(&self, p: Expr) -> Addr {
        match p {
            Expr::Const(v) if v > 0 && ((v - 1) as u64) < self.cx.globals.len() as u64 => {
                Addr::Fixed(v as usize - 1)
            }
            p => Addr::Computed {
                ptr: p,
                lo: 0,
                hi: ALL_LOCATIONS,
            },
        }
    }

    /// The scalar cell that the first argument of an atomic operation addresses: `&place`, or
    /// any pointer expression. It must be atomic (and not a mutex).
    pub(super) fn atomic_place(&mut self, arg: Node) -> R<Place> {
        let src = self.src;
        let a = strip_parens(arg);
        let is_addr = a.kind() == "pointer_expression"
            && a.child_by_field_name("operator").map(|o| src.text(o)) == Some("&");
        if !is_addr {
            if let Some(Name::Mutex(_)) =
                (a.kind() == "identifier").then(|| self.lookup(src.text(a)))
            {
                let name = src.text(a);
                return Err(src.error(
                    a,
                    &format!(
                        "atomic operation on mutex `{name}` (a mutex is not an atomic integer)"
                    ),
                ));
            }
            if a.kind() == "identifier" {
                if let Name::Global(loc) = self.lookup(src.text(a)) {
                    if !matches!(self.cell_ty(loc), Ty::Ptr { .. }) {
                        let name = src.text(a);
                        return Err(src.unsupported(
                            arg,
                            &format!("atomic operation on `{name}` (pass its address: `&{name}`)"),
                        ));
                    }
                }
            }
        }
        let (addr, pointee) = if is_addr {
            let inner = a.child_by_field_name("argument").unwrap_or(a);
            match self.place_of(inner)? {
                Some(pl) => (pl.addr, pl.ty),
                None => {
                    let text = src.text(inner);
                    return Err(
                        src.error(inner, &format!("atomic operation on non-atomic `{text}`"))
                    );
                }
            }
        } else {
            let (p, pointee) = self.ptr_value(arg)?;
            (self.deref_addr(p), pointee)
        };
        let at = if is_addr {
            a.child_by_field_name("argument").unwrap_or(arg)
        } else {
            arg
        };
        let text = src.text(at);
        let arg = at;
        match &pointee {
            Ty::Int { atomic: true, .. } | Ty::Ptr { atomic: true, .. } => {
                Ok(Place { addr, ty: pointee })
            }
            Ty::Mutex => Err(src.error(
                arg,
                &format!("atomic operation on mutex `{text}` (a mutex is not an atomic integer)"),
            )),
            Ty::Int { .. } | Ty::Ptr { .. } => Err(src.error(
                arg,
                &format!(
                    "atomic operation on non-atomic `{}`",
                    text.trim_start_matches('&')
                ),
            )),
            _ => Err(src.error(
                arg,
                &format!("atomic operation on `{text}`, which is not an atomic scalar"),
            )),
        }
    }
}
