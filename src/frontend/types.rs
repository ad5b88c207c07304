//! C types the front end understands: integer types (plain or atomic), `pthread_t`, `thrd_t`,
//! `pthread_mutex_t` and `void`.

use super::{Src, R};
use crate::ir::{BinOp, Expr};
use tree_sitter::Node;

/// An integer type, by the range of values it holds. Values are kept in `i64` registers; a value
/// stored into a variable of a narrower type is converted to it (see [`IntTy::wrap`]).
///
/// Computed values are not truncated to (signed) `int` (overflow is undefined in C); constants
/// are. `U64` is represented like `I64` (two's complement), so unsigned 64-bit values above
/// `i64::MAX` compare as negative; arithmetic is otherwise evaluated in `i64`, without C's
/// unsigned promotions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntTy {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl IntTy {
    fn range(self) -> (i64, i64) {
        match self {
            IntTy::Bool => (0, 1),
            IntTy::I8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
            IntTy::U8 => (0, i64::from(u8::MAX)),
            IntTy::I16 => (i64::from(i16::MIN), i64::from(i16::MAX)),
            IntTy::U16 => (0, i64::from(u16::MAX)),
            IntTy::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            IntTy::U32 => (0, i64::from(u32::MAX)),
            IntTy::I64 | IntTy::U64 => (i64::MIN, i64::MAX),
        }
    }

    /// Every value of `self` is a value of `other`.
    pub(crate) fn fits_in(self, other: IntTy) -> bool {
        let (a, b) = self.range();
        let (c, d) = other.range();
        c <= a && b <= d
    }

    /// C's conversion of an integer value to this type (modulo 2^n; implementation-defined for
    /// signed targets, two's complement everywhere in practice).
    pub(crate) fn wrap(self, v: i64) -> i64 {
        match self {
            IntTy::Bool => i64::from(v != 0),
            IntTy::I8 => i64::from(v as i8),
            IntTy::U8 => i64::from(v as u8),
            IntTy::I16 => i64::from(v as i16),
            IntTy::U16 => i64::from(v as u16),
            IntTy::I32 => i64::from(v as i32),
            IntTy::U32 => i64::from(v as u32),
            IntTy::I64 | IntTy::U64 => v,
        }
    }

    /// The conversion [`IntTy::wrap`] as a pure expression over `e` (no folding).
    pub(crate) fn wrap_expr(self, e: Expr) -> Expr {
        let bin = |op, a, b| Expr::Binary(op, Box::new(a), Box::new(b));
        let sext = |bits: i64, e| {
            bin(
                BinOp::Shr,
                bin(BinOp::Shl, e, Expr::Const(64 - bits)),
                Expr::Const(64 - bits),
            )
        };
        match self {
            IntTy::Bool => bin(BinOp::Ne, e, Expr::Const(0)),
            IntTy::I8 => sext(8, e),
            IntTy::I16 => sext(16, e),
            IntTy::I32 => sext(32, e),
            IntTy::U8 => bin(BinOp::BitAnd, e, Expr::Const(0xff)),
            IntTy::U16 => bin(BinOp::BitAnd, e, Expr::Const(0xffff)),
            IntTy::U32 => bin(BinOp::BitAnd, e, Expr::Const(0xffff_ffff)),
            IntTy::I64 | IntTy::U64 => e,
        }
    }
}

/// The base type of a declaration or type name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BaseTy {
    Int(IntTy),
    /// `pthread_t` or C11 `thrd_t`: a thread handle.
    Thread,
    /// `pthread_mutex_t`: a mutex (only as a global; see the module docs of the front end).
    Mutex,
    Void,
}

/// The specifiers of a declaration (or of a type name in a cast / parameter).
#[derive(Clone, Debug)]
pub(crate) struct DeclSpec<'t> {
    pub ty: BaseTy,
    pub atomic: bool,
    /// `static`, `extern`, `register`, ... if present, with its node.
    pub storage: Option<(String, Node<'t>)>,
}

pub(super) fn atomic_typedef(name: &str) -> Option<IntTy> {
    Some(match name {
        "atomic_bool" => IntTy::Bool,
        "atomic_char" | "atomic_schar" | "atomic_int8_t" | "atomic_int_least8_t" => IntTy::I8,
        "atomic_uchar" | "atomic_uint8_t" | "atomic_uint_least8_t" => IntTy::U8,
        "atomic_short" | "atomic_int16_t" | "atomic_int_least16_t" => IntTy::I16,
        "atomic_ushort" | "atomic_uint16_t" | "atomic_uint_least16_t" => IntTy::U16,
        "atomic_int" | "atomic_int32_t" | "atomic_int_least32_t" => IntTy::I32,
        "atomic_uint" | "atomic_uint32_t" | "atomic_uint_least32_t" => IntTy::U32,
        "atomic_long"
        | "atomic_llong"
        | "atomic_intptr_t"
        | "atomic_ptrdiff_t"
        | "atomic_intmax_t"
        | "atomic_int64_t"
        | "atomic_int_least64_t" => IntTy::I64,
        "atomic_ulong"
        | "atomic_ullong"
        | "atomic_uintptr_t"
        | "atomic_size_t"
        | "atomic_uintmax_t"
        | "atomic_uint64_t"
        | "atomic_uint_least64_t" => IntTy::U64,
        _ => return None,
    })
}

pub(super) fn plain_typedef(name: &str) -> Option<BaseTy> {
    Some(BaseTy::Int(match name {
        "bool" | "_Bool" => IntTy::Bool,
        "char" | "int8_t" | "int_least8_t" | "int_fast8_t" => IntTy::I8,
        "uint8_t" | "uint_least8_t" | "uint_fast8_t" => IntTy::U8,
        "int16_t" | "int_least16_t" => IntTy::I16,
        "uint16_t" | "uint_least16_t" => IntTy::U16,
        "int" | "int32_t" | "int_least32_t" => IntTy::I32,
        "uint32_t" | "uint_least32_t" => IntTy::U32,
        "int64_t" | "int_least64_t" | "int_fast16_t" | "int_fast32_t" | "int_fast64_t"
        | "intptr_t" | "ptrdiff_t" | "ssize_t" | "intmax_t" => IntTy::I64,
        "uint64_t" | "uint_least64_t" | "uint_fast16_t" | "uint_fast32_t" | "uint_fast64_t"
        | "uintptr_t" | "size_t" | "uintmax_t" => IntTy::U64,
        "void" => return Some(BaseTy::Void),
        "pthread_t" | "thrd_t" => return Some(BaseTy::Thread),
        "pthread_mutex_t" => return Some(BaseTy::Mutex),
        _ => return None,
    }))
}

/// Classifies the specifiers of `node` (a `declaration`, `parameter_declaration`,
/// `type_descriptor` or `function_definition`).
pub(crate) fn decl_spec<'t>(src: &Src, node: Node<'t>) -> R<DeclSpec<'t>> {
    let mut atomic = false;
    let mut storage = None;
    let mut ty_node = None;
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        if node.field_name_for_child(i as u32) == Some("type") {
            ty_node = Some(child);
            continue;
        }
        match child.kind() {
            "type_qualifier" if src.text(child) == "_Atomic" => atomic = true,
            "storage_class_specifier" if storage.is_none() => {
                storage = Some((src.text(child).to_string(), child));
            }
            "attribute_specifier" | "attribute_declaration" | "ms_declspec_modifier" => {
                return Err(src.unsupported(child, "attribute"));
            }
            _ => {}
        }
    }
    let Some(ty_node) = ty_node else {
        return Err(src.unsupported(node, "declaration without a type"));
    };
    if let Some((ty, a)) = super::cpp::std_type(src, ty_node)? {
        let atomic = atomic || a;
        return Ok(DeclSpec {
            ty,
            atomic,
            storage,
        });
    }
    let ty = match ty_node.kind() {
        "primitive_type" => {
            let name = src.text(ty_node);
            match plain_typedef(name) {
                Some(t) => t,
                None => {
                    return Err(src.unsupported(ty_node, &format!("type `{name}`")));
                }
            }
        }
        "type_identifier" => {
            let name = src.text(ty_node);
            if let Some(t) = atomic_typedef(name) {
                atomic = true;
                BaseTy::Int(t)
            } else if let Some(t) = plain_typedef(name) {
                t
            } else {
                return Err(src.unsupported(ty_node, &format!("type `{name}`")));
            }
        }
        "sized_type_specifier" => {
            let (t, a) = sized_type(src, ty_node)?;
            atomic |= a;
            BaseTy::Int(t)
        }
        "struct_specifier" => return Err(src.unsupported(ty_node, "struct type")),
        "union_specifier" => return Err(src.unsupported(ty_node, "union type")),
        "enum_specifier" => return Err(src.unsupported(ty_node, "enum type")),
        _ => {
            let text = src.text(ty_node);
            return Err(src.unsupported(ty_node, &format!("type `{text}`")));
        }
    };
    if atomic && !matches!(ty, BaseTy::Int(_)) {
        return Err(src.unsupported(ty_node, "atomic non-integer type"));
    }
    Ok(DeclSpec {
        ty,
        atomic,
        storage,
    })
}

/// `unsigned`, `long long`, `unsigned char`, `short int`, ...
fn sized_type(src: &Src, node: Node) -> R<(IntTy, bool)> {
    let (mut unsigned, mut signed, mut long, mut short) = (false, false, 0, false);
    let mut atomic = false;
    let mut base: Option<Node> = None;
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        if node.field_name_for_child(i as u32) == Some("type") {
            base = Some(child);
            continue;
        }
        match child.kind() {
            "unsigned" => unsigned = true,
            "signed" => signed = true,
            "long" => long += 1,
            "short" => short = true,
            "type_qualifier" => atomic |= src.text(child) == "_Atomic",
            _ => {}
        }
    }
    let base_name = base.map(|b| src.text(b)).unwrap_or("int");
    let bad = || {
        let text = src.text(node);
        src.unsupported(node, &format!("type `{text}`"))
    };
    if unsigned && signed {
        return Err(bad());
    }
    let ty = match base_name {
        "char" if long == 0 && !short => {
            if unsigned {
                IntTy::U8
            } else {
                IntTy::I8
            }
        }
        "int" => match (short, long, unsigned) {
            (true, 0, false) => IntTy::I16,
            (true, 0, true) => IntTy::U16,
            (false, 0, false) => IntTy::I32,
            (false, 0, true) => IntTy::U32,
            (false, 1 | 2, false) => IntTy::I64,
            (false, 1 | 2, true) => IntTy::U64,
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    };
    Ok((ty, atomic))
}
