//! `sizeof`: the byte sizes of the types fensyn knows, as on x86-64 Linux with glibc (LP64:
//! `int` 4, `long` and pointers 8, `pthread_mutex_t` 40, ...), with the C ABI's struct
//! padding and alignment, and the static type of an expression (`sizeof *p`, `sizeof a`).
//!
//! The model itself counts cells, not bytes (one cell per scalar, see
//! [`crate::frontend::types::TypeEnv::size`]); byte sizes matter only where the program
//! computes with them: `sizeof` as a value, and the sizes given to `malloc` & co., which
//! `heap.rs` turns back into cells with [`cell_extents`]. `sizeof` never evaluates its operand
//! (no variable-length arrays), so it is always a constant.

use super::{promote, strip_parens, FnLower, Name, TExpr, R};
use crate::frontend::types::{self, IntTy, SyncTy, Ty, TypeEnv};
use crate::ir::Expr;
use tree_sitter::Node;

/// The size in bytes and the alignment of an object of type `ty` (LP64, glibc).
pub(crate) fn size_align(env: &TypeEnv, ty: &Ty) -> (usize, usize) {
    match ty {
        Ty::Int { ty, .. } => {
            let n = match ty {
                IntTy::Bool | IntTy::I8 | IntTy::U8 => 1,
                IntTy::I16 | IntTy::U16 => 2,
                IntTy::I32 | IntTy::U32 => 4,
                IntTy::I64 | IntTy::U64 => 8,
            };
            (n, n)
        }
        Ty::Ptr { .. } | Ty::Thread => (8, 8),
        // glibc's `pthread_mutex_t` (and libstdc++'s `std::mutex`, which wraps it).
        Ty::Mutex => (40, 8),
        Ty::Sync(k) => match k {
            SyncTy::RecursiveMutex => (40, 8),
            SyncTy::Spinlock | SyncTy::MutexAttr => (4, 4),
            SyncTy::RwLock => (56, 8),
            SyncTy::Barrier => (32, 8),
            SyncTy::Cond => (48, 8),
        },
        // GNU C's `sizeof(void)`; callers refuse it where it matters.
        Ty::Void => (1, 1),
        Ty::Array(t, n) => {
            let (s, a) = size_align(env, t);
            (s.saturating_mul(*n), a)
        }
        Ty::Struct(id) => {
            let (mut off, mut align) = (0usize, 1usize);
            for (_, t) in env.fields_of(*id) {
                let (s, a) = size_align(env, &t);
                off = off.next_multiple_of(a) + s;
                align = align.max(a);
            }
            (off.next_multiple_of(align), align)
        }
    }
}

/// The byte extent (offset, size) of every cell of an object of type `ty` at byte `base`, in
/// the order of its cells (`Ctx::flatten`); the cells of a synchronisation object each span
/// the whole object.
pub(crate) fn cell_extents(env: &TypeEnv, ty: &Ty, base: usize, out: &mut Vec<(usize, usize)>) {
    match ty {
        Ty::Array(t, n) => {
            let s = size_align(env, t).0;
            for i in 0..*n {
                cell_extents(env, t, base + i * s, out);
            }
        }
        Ty::Struct(id) => {
            let mut off = 0usize;
            for (_, t) in env.fields_of(*id) {
                let (s, a) = size_align(env, &t);
                off = off.next_multiple_of(a);
                cell_extents(env, &t, base + off, out);
                off += s;
            }
        }
        Ty::Void => {}
        _ => {
            let s = size_align(env, ty).0;
            out.extend(std::iter::repeat_n((base, s), env.size(ty)));
        }
    }
}

impl FnLower<'_, '_> {
    /// `sizeof(T)` / `sizeof e`: a `size_t` constant.
    pub(super) fn sizeof_value(&mut self, n: Node) -> R<TExpr> {
        let src = self.src;
        let ty = match (
            n.child_by_field_name("type"),
            n.child_by_field_name("value"),
        ) {
            (Some(t), _) => self.sizeof_type_name(t)?,
            (None, Some(v)) => self.static_type(v)?,
            _ => return Err(src.unsupported(n, "sizeof")),
        };
        if matches!(ty, Ty::Void) {
            return Err(src.error(n, "sizeof of `void` (an incomplete type)"));
        }
        let bytes = size_align(&self.cx.types, &ty).0;
        Ok((Expr::Const(bytes as i64), IntTy::U64))
    }

    /// The type a `sizeof(...)` type name denotes; `sizeof(x)` of a variable `x` (which the
    /// grammar may read as a type name) is the type of `x`.
    fn sizeof_type_name(&self, t: Node) -> R<Ty> {
        let src = self.src;
        if let Some(tn) = t.child_by_field_name("type") {
            let lone = t.child_by_field_name("declarator").is_none()
                && tn.kind() == "type_identifier"
                && !matches!(self.lookup(src.text(tn)), Name::Unknown);
            if lone {
                return self.static_type(tn);
            }
            if t.child_by_field_name("declarator").is_none() {
                if let Some(ty) = self.typedef_type(src.text(tn)) {
                    return Ok(ty);
                }
            }
        }
        self.type_name(t)
    }

    /// The type a typedef name denotes (`sizeof(pthread_mutex_t)` parses as an expression
    /// when the grammar does not know the name).
    fn typedef_type(&self, name: &str) -> Option<Ty> {
        let env = &self.cx.types;
        if name == "pthread_attr_t" {
            // An integer in the model (attributes have no effect); glibc's is 56 bytes.
            let long = Ty::Int {
                ty: IntTy::I64,
                atomic: false,
            };
            return Some(Ty::Array(Box::new(long), 7));
        }
        if let Some(t) = types::atomic_typedef(name) {
            return Some(Ty::Int {
                ty: t,
                atomic: true,
            });
        }
        if let Some(b) = types::plain_typedef(name) {
            return Some(Ty::of_base(b, false));
        }
        if let Some(&(b, a)) = env.typedefs.get(name) {
            return Some(Ty::of_base(b, a));
        }
        if let Some(id) = env.forward_struct(name) {
            return Some(Ty::Struct(id));
        }
        env.full_typedefs.get(name).cloned()
    }

    /// The type a type name (`type_descriptor`) denotes: its specifiers and an abstract
    /// declarator of pointers and arrays (`struct node *`, `int[4]`, `int *[2]`).
    pub(super) fn type_name(&self, t: Node) -> R<Ty> {
        let src = self.src;
        let spec = types::decl_spec(&src, &self.cx.types, t)?;
        let mut ty = spec.base();
        let mut first_pointer = true;
        let mut d = t.child_by_field_name("declarator");
        while let Some(node) = d {
            match node.kind() {
                "abstract_pointer_declarator" => {
                    ty = spec.pointer_to(&src, node, ty, first_pointer);
                    first_pointer = false;
                }
                "abstract_array_declarator" => {
                    let Some(size) = node.child_by_field_name("size") else {
                        return Err(src.error(node, "array type without a size"));
                    };
                    let len = self.const_size(size)?;
                    ty = Ty::Array(Box::new(ty), len);
                }
                _ => {
                    let text = src.text(t);
                    return Err(src.unsupported(t, &format!("type `{text}`")));
                }
            }
            d = node.child_by_field_name("declarator");
        }
        Ok(ty)
    }

    /// A constant array length in `1..=65536`.
    pub(super) fn const_size(&self, size: Node) -> R<usize> {
        let src = self.src;
        let text = src.text(size);
        let v = match crate::frontend::literal::parse_number(text) {
            Ok(v) => v,
            Err(_) => match self.cx.macro_value_of(text) {
                Some(v) => v,
                None => {
                    return Err(
                        src.unsupported(size, "array size in a type name (only a number or macro)")
                    )
                }
            },
        };
        if !(1..=65536).contains(&v) {
            return Err(src.error(size, &format!("array size {v} is not in 1..=65536")));
        }
        Ok(v as usize)
    }

    /// The C type of expression `n`, without evaluating it (the operand of `sizeof`).
    pub(super) fn static_type(&self, n: Node) -> R<Ty> {
        let src = self.src;
        let n = strip_parens(n);
        let int = |ty| Ty::Int { ty, atomic: false };
        let field = |f: &str| {
            n.child_by_field_name(f)
                .ok_or_else(|| src.unsupported(n, "this operand of sizeof"))
        };
        match n.kind() {
            "identifier" | "type_identifier" => self.name_type(n),
            "number_literal" => {
                let text = src.text(n);
                let v = crate::frontend::literal::parse_number(text).unwrap_or(0);
                Ok(int(Self::literal_ty(text, v)))
            }
            "char_literal" | "true" | "false" => Ok(int(IntTy::I32)),
            "sizeof_expression" => Ok(int(IntTy::U64)),
            "null" => Ok(Ty::Ptr {
                to: Box::new(Ty::Void),
                atomic: false,
            }),
            "cast_expression" => self.type_name(field("type")?),
            "pointer_expression" => {
                let arg = self.static_type(field("argument")?)?;
                if src.text(field("operator")?) == "&" {
                    return Ok(Ty::Ptr {
                        to: Box::new(arg),
                        atomic: false,
                    });
                }
                self.pointee_of(n, arg)
            }
            "subscript_expression" => {
                let arg = self.static_type(field("argument")?)?;
                self.pointee_of(n, arg)
            }
            "field_expression" => self.field_type(n),
            "unary_expression" if src.text(field("operator")?) == "!" => Ok(int(IntTy::I32)),
            "unary_expression" => match self.static_type(field("argument")?)? {
                Ty::Int { ty, .. } => Ok(int(promote(ty))),
                _ => Err(src.error(n, "unary operator on a non-integer")),
            },
            "binary_expression" => self.binary_type(n),
            _ => Err(src.unsupported(n, "this operand of sizeof (use a type or a name)")),
        }
    }

    /// The type of the object a name denotes.
    fn name_type(&self, n: Node) -> R<Ty> {
        let src = self.src;
        let name = src.text(n);
        if let Some((_, ty)) = self.heap.declaring.iter().rev().find(|(d, _)| d == name) {
            return Ok(ty.clone());
        }
        Ok(match self.lookup(name) {
            Name::Local(r) => match self.reg_ptr.get(r).cloned().flatten() {
                Some(to) => Ty::Ptr {
                    to: Box::new(to),
                    atomic: false,
                },
                None => Ty::Int {
                    ty: self.reg_tys.get(r).copied().unwrap_or(IntTy::I64),
                    atomic: false,
                },
            },
            Name::Global(loc) | Name::Mutex(loc) => self.cell_ty(loc),
            Name::Object(i) => self.cx.objects.get(i).map_or(Ty::Void, |o| o.ty.clone()),
            Name::LocalObject(_, i) => self.local_tys.get(i).cloned().unwrap_or(Ty::Void),
            Name::Handle(_) | Name::HandleOutsideMain => Ty::Thread,
            Name::HandleArray(_, len) => Ty::Array(Box::new(Ty::Thread), len),
            Name::Unknown if self.cx.enumerator_at(name, n.start_byte()).is_some() => Ty::Int {
                ty: self
                    .cx
                    .enumerator_typed_at(name, n.start_byte())
                    .map_or(IntTy::I32, |(_, t)| t),
                atomic: false,
            },
            Name::Unknown if self.cx.macro_value_of(name).is_some() => {
                let v = self.macro_value(n)?.1;
                Ty::Int {
                    ty: v,
                    atomic: false,
                }
            }
            Name::Unknown if self.typedef_type(name).is_some() => {
                self.typedef_type(name).unwrap_or(Ty::Void)
            }
            Name::Unknown => {
                return Err(src.error(n, &format!("undeclared identifier `{name}`")));
            }
            other => return Err(self.name_error(n, name, other, false)),
        })
    }

    /// What `*e` / `e[i]` has when `e` has type `ty`.
    fn pointee_of(&self, n: Node, ty: Ty) -> R<Ty> {
        match ty {
            Ty::Ptr { to, .. } if *to != Ty::Void => Ok(*to),
            Ty::Array(t, _) => Ok(*t),
            _ => {
                let text = self.src.text(n);
                Err(self
                    .src
                    .error(n, &format!("`{text}` dereferences a non-pointer")))
            }
        }
    }

    fn field_type(&self, n: Node) -> R<Ty> {
        let src = self.src;
        let (Some(arg), Some(f), Some(op)) = (
            n.child_by_field_name("argument"),
            n.child_by_field_name("field"),
            n.child_by_field_name("operator"),
        ) else {
            return Err(src.unsupported(n, "member access"));
        };
        let base = self.static_type(arg)?;
        let base = if src.text(op) == "->" {
            self.pointee_of(arg, base)?
        } else {
            base
        };
        let fname = src.text(f);
        match base {
            Ty::Struct(id) => match self.cx.types.field(id, fname) {
                Some((_, t)) => Ok(t),
                None => {
                    let s = Ty::Struct(id).describe(&self.cx.types);
                    Err(src.error(f, &format!("{s} has no member `{fname}`")))
                }
            },
            _ => {
                let text = src.text(arg);
                Err(src.error(arg, &format!("`{text}` is not a struct")))
            }
        }
    }

    fn binary_type(&self, n: Node) -> R<Ty> {
        let src = self.src;
        let (Some(l), Some(r), Some(op)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
            n.child_by_field_name("operator"),
        ) else {
            return Err(src.unsupported(n, "expression"));
        };
        let op = src.text(op);
        let int = |ty| Ty::Int { ty, atomic: false };
        if matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=" | "&&" | "||") {
            return Ok(int(IntTy::I32));
        }
        let (a, b) = (self.static_type(l)?, self.static_type(r)?);
        let decay = |t: Ty| match t {
            Ty::Array(e, _) => Ty::Ptr {
                to: e,
                atomic: false,
            },
            t => t,
        };
        match (decay(a), decay(b)) {
            (Ty::Int { ty: x, .. }, Ty::Int { .. }) if matches!(op, "<<" | ">>") => {
                Ok(int(promote(x)))
            }
            (Ty::Int { ty: x, .. }, Ty::Int { ty: y, .. }) => Ok(int(super::common(x, y))),
            (Ty::Ptr { .. }, Ty::Ptr { .. }) if op == "-" => Ok(int(IntTy::I64)),
            (p @ Ty::Ptr { .. }, Ty::Int { .. }) | (Ty::Int { .. }, p @ Ty::Ptr { .. }) => Ok(p),
            _ => Err(src.unsupported(n, "this operand of sizeof (use a type or a name)")),
        }
    }
}
