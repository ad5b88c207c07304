//! C types the front end understands: integer types (plain or atomic), `pthread_t`, `thrd_t`,
//! `pthread_mutex_t`, the other synchronisation objects ([`SyncTy`]), `void`, structs, arrays
//! and pointers ([`Ty`]).

use super::{Src, R};
use crate::ir::{BinOp, Expr, Width};
use std::collections::HashMap;
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
    /// The width an RMW on an atomic of this type wraps to (`Bool` never takes arithmetic).
    pub(crate) fn width(self) -> Width {
        let (bits, signed) = match self {
            IntTy::Bool | IntTy::U8 => (8, false),
            IntTy::I8 => (8, true),
            IntTy::I16 => (16, true),
            IntTy::U16 => (16, false),
            IntTy::I32 => (32, true),
            IntTy::U32 => (32, false),
            IntTy::I64 => (64, true),
            IntTy::U64 => (64, false),
        };
        Width { bits, signed }
    }

    pub(crate) fn range(self) -> (i64, i64) {
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

    /// The C spelling, for messages.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            IntTy::Bool => "bool",
            IntTy::I8 => "char",
            IntTy::U8 => "unsigned char",
            IntTy::I16 => "short",
            IntTy::U16 => "unsigned short",
            IntTy::I32 => "int",
            IntTy::U32 => "unsigned",
            IntTy::I64 => "long",
            IntTy::U64 => "unsigned long",
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
    /// `pthread_mutex_t`, C11 `mtx_t`, `std::mutex`: a mutex (see `lower/sync.rs`).
    Mutex,
    /// Another synchronisation object.
    Sync(SyncTy),
    Void,
    /// `struct S` (an index into [`TypeEnv::structs`]).
    Struct(usize),
    /// C++ `std::atomic<T *>`: an atomic pointer, whose full type is [`DeclSpec::full`] (no
    /// integer, void or struct check accepts it by mistake).
    AtomicPointer,
}

/// The synchronisation objects other than the plain mutex. Each is an object of one or more
/// atomic cells (laid out by `lower::sync::layout`), used only through its functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncTy {
    /// C++ `std::recursive_mutex`: a mutex that is recursive from its construction.
    RecursiveMutex,
    /// `pthread_spinlock_t`.
    Spinlock,
    /// `pthread_rwlock_t`, C++ `std::shared_mutex`.
    RwLock,
    /// `pthread_barrier_t`.
    Barrier,
    /// `pthread_cond_t`, C11 `cnd_t`, C++ `std::condition_variable`.
    Cond,
    /// `pthread_mutexattr_t`: the mutex type set by `pthread_mutexattr_settype`.
    MutexAttr,
}

impl SyncTy {
    /// The C spelling, for messages.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            SyncTy::RecursiveMutex => "std::recursive_mutex",
            SyncTy::Spinlock => "pthread_spinlock_t",
            SyncTy::RwLock => "pthread_rwlock_t",
            SyncTy::Barrier => "pthread_barrier_t",
            SyncTy::Cond => "pthread_cond_t",
            SyncTy::MutexAttr => "pthread_mutexattr_t",
        }
    }
}

/// The full type of an object, a struct field or a pointee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// An integer cell, plain or atomic.
    Int {
        ty: IntTy,
        atomic: bool,
    },
    /// A pointer cell (its value is a pointer, see [`crate::ir::pointer_to`]), plain or
    /// atomic (`_Atomic(T *)`); `to` is [`Ty::Void`] for `void *`.
    Ptr {
        to: Box<Ty>,
        atomic: bool,
    },
    /// A `pthread_mutex_t`: its lock word and its kind (see `lower/sync.rs`); named like a
    /// scalar (`Name::Mutex`), although it has two cells.
    Mutex,
    /// A synchronisation object of several cells, or of one that is not a plain mutex (never
    /// a scalar: it lives in `Ctx::objects`).
    Sync(SyncTy),
    /// A `pthread_t` / `thrd_t`: a thread id. A plain handle variable of a function is a
    /// register; a handle in memory (a global used outside `main`, an array element, a struct
    /// member, a pointer's target) is a non-atomic cell holding the id.
    Thread,
    /// Only as a pointee.
    Void,
    Array(Box<Ty>, usize),
    Struct(usize),
}

impl Ty {
    /// The type of a declaration's base (before its declarator).
    pub(crate) fn of_base(ty: BaseTy, atomic: bool) -> Ty {
        match ty {
            BaseTy::Int(ty) => Ty::Int { ty, atomic },
            BaseTy::Thread => Ty::Thread,
            BaseTy::Mutex => Ty::Mutex,
            BaseTy::Sync(k) => Ty::Sync(k),
            BaseTy::Void => Ty::Void,
            BaseTy::Struct(id) => Ty::Struct(id),
            // Only a placeholder: the type is in `DeclSpec::full` (see `DeclSpec::base`).
            BaseTy::AtomicPointer => Ty::Void,
        }
    }

    /// A cell holding one value (integer, pointer), or a mutex (named by its lock word).
    pub(crate) fn is_scalar(&self) -> bool {
        matches!(
            self,
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Mutex | Ty::Thread
        )
    }

    /// The integer type of the values a scalar cell holds (pointers: 64-bit).
    pub(crate) fn int_ty(&self) -> IntTy {
        match self {
            Ty::Int { ty, .. } => *ty,
            _ => IntTy::I64,
        }
    }

    pub(crate) fn is_atomic(&self) -> bool {
        match self {
            Ty::Int { atomic, .. } | Ty::Ptr { atomic, .. } => *atomic,
            Ty::Mutex | Ty::Sync(_) => true,
            _ => false,
        }
    }

    /// The C spelling, for messages.
    pub(crate) fn describe(&self, env: &TypeEnv) -> String {
        match self {
            Ty::Int { ty, atomic } => {
                let base = ty.c_name();
                if *atomic {
                    format!("_Atomic {base}")
                } else {
                    base.to_string()
                }
            }
            Ty::Ptr { to, atomic } => {
                let inner = format!("{} *", to.describe(env));
                if *atomic {
                    format!("_Atomic({inner})")
                } else {
                    inner
                }
            }
            Ty::Mutex => "pthread_mutex_t".into(),
            Ty::Sync(k) => k.c_name().into(),
            Ty::Thread => "pthread_t".into(),
            Ty::Void => "void".into(),
            Ty::Array(t, n) => format!("{}[{n}]", t.describe(env)),
            Ty::Struct(id) => match env.structs.get(*id).and_then(|s| s.name.as_deref()) {
                Some(n) => format!("struct {n}"),
                None => "struct <anonymous>".into(),
            },
        }
    }
}

/// A struct definition.
#[derive(Clone, Debug)]
pub(crate) struct StructDef {
    /// The tag (`struct node`), if any.
    pub name: Option<String>,
    /// The start byte of the `struct` specifier that defines it (finds anonymous structs).
    pub start: usize,
    pub fields: Vec<(String, Ty)>,
    /// For a union: its members after the first, which occupy the first member's cells with
    /// the same layout (`unions.rs`); empty for a struct. `fields` holds the first member.
    pub aliases: Vec<(String, Ty)>,
}

/// An enum definition (`src/frontend/enums.rs`).
#[derive(Clone, Debug)]
pub(crate) struct EnumDef {
    /// The tag (`enum state`), if any.
    pub name: Option<String>,
    /// The start byte of the `enum` specifier that defines it (finds anonymous enums).
    pub start: usize,
    /// The integer type of its objects.
    pub ty: IntTy,
}

/// The struct and enum definitions and typedefs seen so far, and where `_Atomic(T *)` was
/// written.
#[derive(Clone, Debug, Default)]
pub(crate) struct TypeEnv {
    pub structs: Vec<StructDef>,
    pub enums: Vec<EnumDef>,
    /// `typedef` names: the base type and whether it is atomic.
    pub typedefs: HashMap<String, (BaseTy, bool)>,
    /// `typedef` names of pointer and array types (`typedef struct node *link;`, function
    /// pointer types `typedef void *(*start_fn)(void *);`): their full type.
    pub full_typedefs: HashMap<String, Ty>,
    /// `typedef struct tag name;` written before `struct tag` is defined (the C idiom for a
    /// struct that points to itself): `name` → `tag`, resolved at each use to the struct
    /// defined by then.
    pub forward_typedefs: HashMap<String, String>,
    /// `typedef` names whose type fensyn cannot represent (`typedef _Atomic node_t *ref;`,
    /// an atomic struct): the typedef alone changes nothing, so it is refused where a
    /// declaration uses it, with the typedef's own error.
    pub refused_typedefs: HashMap<String, super::Diagnostic>,
    /// C++ class templates by name: the kinds of their parameters (`templates.rs`).
    pub templates: super::templates::TemplateKinds,
    /// The value parameters of the class template instance being defined or whose member
    /// function is being lowered (`templates.rs`).
    pub template_values: HashMap<String, i64>,
    /// Start bytes of `_Atomic(...)` specifiers whose parentheses contain a `*`: the atomic
    /// qualifier applies to the pointer, not to the pointee (the parentheses are blanked
    /// before parsing, see `prepare_source`).
    pub atomic_pointer_at: Vec<usize>,
    /// The names of variables and members declared `rl::var<T>` (`relacy.rs`): a call of one
    /// with no arguments reads it.
    pub relacy_vars: std::cell::RefCell<std::collections::HashSet<String>>,
}

/// The structs of the C library that programs use without defining them (`<time.h>`'s
/// `struct timespec`, the deadline of the timed waits). A definition in the file replaces one.
pub(crate) fn library_structs() -> Vec<StructDef> {
    let long = Ty::Int {
        ty: IntTy::I64,
        atomic: false,
    };
    vec![StructDef {
        name: Some("timespec".into()),
        start: usize::MAX,
        fields: vec![("tv_sec".into(), long.clone()), ("tv_nsec".into(), long)],
        aliases: Vec::new(),
    }]
}

impl TypeEnv {
    /// The number of memory cells of an object of type `ty`.
    pub(crate) fn size(&self, ty: &Ty) -> usize {
        match ty {
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => 1,
            Ty::Mutex => super::lower::sync::layout(ty).len(),
            Ty::Sync(k) => super::lower::sync::sync_cells(*k),
            Ty::Void => 0,
            Ty::Array(t, n) => self.size(t).saturating_mul(*n),
            Ty::Struct(id) => self
                .structs
                .get(*id)
                .map(|s| s.fields.iter().map(|(_, t)| self.size(t)).sum())
                .unwrap_or(0),
        }
    }

    /// The members of struct `id`, in order (none for an unknown id).
    pub(crate) fn fields_of(&self, id: usize) -> Vec<(String, Ty)> {
        self.structs
            .get(id)
            .map(|s| s.fields.clone())
            .unwrap_or_default()
    }

    /// Field `name` of struct `id`: its offset in cells and its type.
    pub(crate) fn field(&self, id: usize, name: &str) -> Option<(usize, Ty)> {
        let s = self.structs.get(id)?;
        let mut off = 0;
        for (f, t) in &s.fields {
            if f == name {
                return Some((off, t.clone()));
            }
            off += self.size(t);
        }
        s.aliases
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, t)| (0, t.clone()))
    }

    /// The struct a forward typedef `name` (`typedef struct tag name;` above the struct's
    /// definition) names, once that struct is defined.
    pub(crate) fn forward_struct(&self, name: &str) -> Option<usize> {
        let tag = self.forward_typedefs.get(name)?;
        self.struct_by(Some(tag), usize::MAX)
    }

    fn struct_by(&self, name: Option<&str>, start: usize) -> Option<usize> {
        match name {
            Some(n) => self
                .structs
                .iter()
                .rposition(|s| s.name.as_deref() == Some(n))
                .or_else(|| {
                    // `struct node` naming a struct nested in a class (`outer::node`), by the
                    // bare name it is also registered under.
                    let suffix = format!("::{n}");
                    match self.typedefs.get(n) {
                        Some(&(BaseTy::Struct(id), _))
                            if self
                                .structs
                                .get(id)
                                .and_then(|s| s.name.as_deref())
                                .is_some_and(|full| full.ends_with(&suffix)) =>
                        {
                            Some(id)
                        }
                        _ => None,
                    }
                }),
            None => self.structs.iter().position(|s| s.start == start),
        }
    }
}

/// The specifiers of a declaration (or of a type name in a cast / parameter).
#[derive(Clone, Debug)]
pub(crate) struct DeclSpec<'t> {
    pub ty: BaseTy,
    pub atomic: bool,
    /// `_Atomic(T *)`: the first pointer level of the declarator is atomic.
    pub atomic_pointer: bool,
    /// `static`, `extern`, `register`, ... if present, with its node.
    pub storage: Option<(String, Node<'t>)>,
    /// `_Thread_local`, `__thread` or C++ `thread_local`, if present: one object per thread.
    pub thread_local: Option<Node<'t>>,
    /// The complete type of the specifier when it is not a [`BaseTy`]: C++ `std::atomic<T *>`
    /// (then `ty` is [`BaseTy::AtomicPointer`]).
    pub full: Option<Ty>,
}

impl DeclSpec<'_> {
    /// The type of the specifier, before the declarator.
    pub(crate) fn base(&self) -> Ty {
        match &self.full {
            Some(t) => t.clone(),
            None => Ty::of_base(self.ty, self.atomic),
        }
    }
}

/// The `<stdatomic.h>` typedefs (and C++'s `std::atomic_*` aliases), for an LP64 target with
/// glibc's `<stdint.h>` (the `fast` types of 16 bits and more are `long`; `wchar_t` is `int`,
/// `char16_t` / `char32_t` are `uint_least16_t` / `uint_least32_t`).
pub(super) fn atomic_typedef(name: &str) -> Option<IntTy> {
    let plain = name.strip_prefix("atomic_")?;
    Some(match plain {
        "bool" | "flag" => IntTy::Bool,
        "char" | "schar" => IntTy::I8,
        "uchar" | "char8_t" => IntTy::U8,
        "short" => IntTy::I16,
        "ushort" => IntTy::U16,
        "int" => IntTy::I32,
        "uint" => IntTy::U32,
        "long" | "llong" => IntTy::I64,
        "ulong" | "ullong" => IntTy::U64,
        // The `<stdint.h>` / `<stddef.h>` / `<uchar.h>` / `<wchar.h>` names (the exact-width
        // ones are C++'s; POSIX's `ssize_t` has none).
        _ => match plain_typedef(plain) {
            Some(BaseTy::Int(t)) if plain.ends_with("_t") && plain != "ssize_t" => t,
            _ => return None,
        },
    })
}

pub(super) fn plain_typedef(name: &str) -> Option<BaseTy> {
    Some(BaseTy::Int(match name {
        "bool" | "_Bool" => IntTy::Bool,
        "char" | "int8_t" | "int_least8_t" | "int_fast8_t" => IntTy::I8,
        "uint8_t" | "uint_least8_t" | "uint_fast8_t" | "char8_t" => IntTy::U8,
        "int16_t" | "int_least16_t" => IntTy::I16,
        "uint16_t" | "uint_least16_t" | "char16_t" => IntTy::U16,
        "int" | "int32_t" | "int_least32_t" | "wchar_t" => IntTy::I32,
        "uint32_t" | "uint_least32_t" | "char32_t" => IntTy::U32,
        "int64_t" | "int_least64_t" | "int_fast16_t" | "int_fast32_t" | "int_fast64_t"
        | "intptr_t" | "ptrdiff_t" | "ssize_t" | "intmax_t" => IntTy::I64,
        "uint64_t" | "uint_least64_t" | "uint_fast16_t" | "uint_fast32_t" | "uint_fast64_t"
        | "uintptr_t" | "size_t" | "uintmax_t" => IntTy::U64,
        "void" => return Some(BaseTy::Void),
        "pthread_t" | "thrd_t" => return Some(BaseTy::Thread),
        // Thread attributes have no effect in the model (see `lower/threads.rs`).
        "pthread_attr_t" => IntTy::I64,
        "pthread_mutex_t" | "mtx_t" => return Some(BaseTy::Mutex),
        "pthread_spinlock_t" => return Some(BaseTy::Sync(SyncTy::Spinlock)),
        "pthread_rwlock_t" => return Some(BaseTy::Sync(SyncTy::RwLock)),
        "pthread_barrier_t" => return Some(BaseTy::Sync(SyncTy::Barrier)),
        "pthread_cond_t" | "cnd_t" => return Some(BaseTy::Sync(SyncTy::Cond)),
        "pthread_mutexattr_t" => return Some(BaseTy::Sync(SyncTy::MutexAttr)),
        _ => return None,
    }))
}

/// Classifies the specifiers of `node` (a `declaration`, `parameter_declaration`,
/// `type_descriptor` or `function_definition`).
impl DeclSpec<'_> {
    /// A pointer to `ty` made by declarator `node` (`*` or its abstract form): atomic when
    /// `node` says `* _Atomic`, or for the first pointer of `_Atomic(T *)` (`first`).
    pub(crate) fn pointer_to(&self, src: &Src, node: Node, ty: Ty, first: bool) -> Ty {
        let mut c = node.walk();
        let qualified = node
            .children(&mut c)
            .any(|q| q.kind() == "type_qualifier" && src.text(q) == "_Atomic");
        Ty::Ptr {
            to: Box::new(ty),
            atomic: qualified || (first && self.atomic_pointer),
        }
    }
}

/// The error of a use (`at`) of typedef `name`, whose definition was refused with `e`.
fn refused_typedef(src: &Src, at: Node, name: &str, e: &super::Diagnostic) -> super::Diagnostic {
    let mut d = src.unsupported(at, &format!("type `{name}`"));
    d.kind = e.kind;
    d.message = format!(
        "{} (the typedef of `{name}` at line {}:{})",
        e.message, e.line, e.column
    );
    d
}

/// Declaration `node` is `const` (or C++ `constexpr`) qualified: `const int kThreads = 2;`.
pub(crate) fn is_const(src: &Src, node: Node) -> bool {
    let mut c = node.walk();
    let constant = node
        .children(&mut c)
        .any(|q| q.kind() == "type_qualifier" && matches!(src.text(q), "const" | "constexpr"));
    constant
}

pub(crate) fn decl_spec<'t>(src: &Src, env: &TypeEnv, node: Node<'t>) -> R<DeclSpec<'t>> {
    let mut atomic = false;
    let mut atomic_pointer = false;
    let mut storage = None;
    let mut thread_local = None;
    let mut ty_node = None;
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        if node.field_name_for_child(i as u32) == Some("type") {
            ty_node = Some(child);
            continue;
        }
        match child.kind() {
            "type_qualifier" if src.text(child) == "_Atomic" => {
                if env.atomic_pointer_at.contains(&child.start_byte()) {
                    atomic_pointer = true;
                } else {
                    atomic = true;
                }
            }
            // `_Thread_local` is parsed as `thread_local` followed by a space (see
            // `prepare_source`): its node covers `_Thread_loca` of the text.
            "storage_class_specifier"
                if matches!(
                    src.text(child),
                    "_Thread_loca" | "__thread" | "thread_local"
                ) =>
            {
                thread_local = Some(child);
            }
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
    let std = match super::relacy::var_type(src, env, node, ty_node)? {
        Some(t) => Some(t),
        None => super::cpp::std_type(src, env, ty_node)?,
    };
    match std {
        Some(super::cpp::StdTy::Base(ty, a)) => {
            let atomic = atomic || a;
            return Ok(DeclSpec {
                ty,
                atomic,
                atomic_pointer: false,
                storage,
                thread_local,
                full: None,
            });
        }
        Some(super::cpp::StdTy::Full(t)) => {
            if atomic || atomic_pointer {
                return Err(src.unsupported(ty_node, "`_Atomic` on a std::atomic"));
            }
            return Ok(DeclSpec {
                ty: BaseTy::AtomicPointer,
                atomic: false,
                atomic_pointer: false,
                storage,
                thread_local,
                full: Some(t),
            });
        }
        None => {}
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
            } else if let Some(&(t, a)) = env.typedefs.get(name) {
                atomic |= a;
                t
            } else if let Some(tag) = env.forward_typedefs.get(name) {
                match env.struct_by(Some(tag), usize::MAX) {
                    Some(id) => BaseTy::Struct(id),
                    None => {
                        return Err(src.error(
                            ty_node,
                            &format!(
                                "`{name}` names `struct {tag}`, which is not defined (define the \
                                 struct before using it)"
                            ),
                        ))
                    }
                }
            } else if let Some(t) = env.full_typedefs.get(name) {
                if atomic || atomic_pointer {
                    return Err(src.unsupported(ty_node, "`_Atomic` on a pointer or array typedef"));
                }
                return Ok(DeclSpec {
                    ty: BaseTy::AtomicPointer,
                    atomic: false,
                    atomic_pointer: false,
                    storage,
                    thread_local,
                    full: Some(t.clone()),
                });
            } else if let Some(e) = env.refused_typedefs.get(name) {
                return Err(refused_typedef(src, ty_node, name, e));
            } else {
                return Err(src.unsupported(ty_node, &format!("type `{name}`")));
            }
        }
        "sized_type_specifier" => {
            let (t, a) = sized_type(src, ty_node)?;
            atomic |= a;
            BaseTy::Int(t)
        }
        // `struct q<int, 4>` (C++): the instance of class template `q`.
        "struct_specifier" | "class_specifier"
            if ty_node
                .child_by_field_name("name")
                .is_some_and(|n| n.kind() == "template_type") =>
        {
            let tt = ty_node.child_by_field_name("name").unwrap_or(ty_node);
            match super::templates::instance(src, env, tt)? {
                Some(id) => BaseTy::Struct(id),
                None => return Err(other_type(src, tt)),
            }
        }
        "struct_specifier" => {
            let name = ty_node.child_by_field_name("name").map(|n| src.text(n));
            match env.struct_by(name, ty_node.start_byte()) {
                Some(id) => BaseTy::Struct(id),
                None => {
                    let what =
                        name.map_or("anonymous struct".to_string(), |n| format!("`struct {n}`"));
                    return Err(src.error(
                        ty_node,
                        &format!("{what} is not defined (define a struct before using it)"),
                    ));
                }
            }
        }
        "class_specifier" | "union_specifier" => {
            let name = ty_node.child_by_field_name("name").map(|n| src.text(n));
            match env.struct_by(name, ty_node.start_byte()) {
                Some(id) => BaseTy::Struct(id),
                None => {
                    let kw = if ty_node.kind() == "union_specifier" {
                        "union"
                    } else {
                        "class"
                    };
                    let what = name.map_or(format!("anonymous {kw}"), |n| format!("`{kw} {n}`"));
                    return Err(src.error(
                        ty_node,
                        &format!("{what} is not defined (define it before using it)"),
                    ));
                }
            }
        }
        "enum_specifier" => {
            let name = ty_node.child_by_field_name("name").map(|n| src.text(n));
            let found = match name {
                Some(n) => env
                    .enums
                    .iter()
                    .rev()
                    .find(|e| e.name.as_deref() == Some(n)),
                None => env.enums.iter().find(|e| e.start == ty_node.start_byte()),
            };
            match found {
                Some(e) => BaseTy::Int(e.ty),
                None => {
                    let what = name.map_or("anonymous enum".to_string(), |n| format!("`enum {n}`"));
                    return Err(src.error(
                        ty_node,
                        &format!("{what} is not defined (define an enum before using it)"),
                    ));
                }
            }
        }
        // `mutex::guard`: a class nested in a class (registered under that name).
        "qualified_identifier" => {
            let name: String = src.text(ty_node).split_whitespace().collect();
            match env.typedefs.get(name.as_str()) {
                Some(&(t, a)) => {
                    atomic |= a;
                    t
                }
                None => return Err(other_type(src, ty_node)),
            }
        }
        "template_type" => match super::templates::instance(src, env, ty_node)? {
            Some(id) => BaseTy::Struct(id),
            None => return Err(other_type(src, ty_node)),
        },
        _ => return Err(other_type(src, ty_node)),
    };
    if atomic && !matches!(ty, BaseTy::Int(_)) {
        return Err(src.unsupported(ty_node, "atomic non-integer type"));
    }
    // `atomic` qualifies the base type and `atomic_pointer` the first pointer level, so
    // `_Atomic(atomic_int *)` is an atomic pointer to an atomic int.
    Ok(DeclSpec {
        ty,
        atomic,
        atomic_pointer,
        storage,
        thread_local,
        full: None,
    })
}

/// The refusal of type `ty_node`, which names no type this front end knows.
fn other_type(src: &Src, ty_node: Node) -> crate::frontend::Diagnostic {
    let text = src.text(ty_node);
    let what = match crate::frontend::cpp::std_name(src, ty_node) {
        Some("unique_ptr") => format!(
            "`{text}`: a std::unique_ptr is supported only as a local variable of a \
                     block (not as a global, struct member, parameter or return type)"
        ),
        Some(name @ ("shared_ptr" | "weak_ptr" | "auto_ptr")) => format!(
            "`std::{name}` is not supported: use `new`/`delete` or `std::unique_ptr` \
                     (plain ownership)"
        ),
        _ => format!("type `{text}`"),
    };
    src.unsupported(ty_node, &what)
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

/// A declarator split into its name node, the declared type and the initialiser.
pub(crate) struct Declared<'t> {
    pub name: Node<'t>,
    pub ty: Ty,
    pub init: Option<Node<'t>>,
}

/// Builds the type a declarator gives its name: `x`, `*p`, `a[N]`, `*a[N]`, `a[N][M]` over the
/// base type of `spec` (`array_len` evaluates array sizes, which must be positive constants).
/// Function, parenthesised and size-less array declarators are unsupported.
pub(crate) fn declarator<'t>(
    src: &Src,
    spec: &DeclSpec,
    d: Node<'t>,
    array_len: &mut dyn FnMut(Node) -> R<i64>,
) -> R<Declared<'t>> {
    let whole = d;
    let (mut d, init) = match d.kind() {
        "init_declarator" => (
            d.child_by_field_name("declarator")
                .ok_or_else(|| src.unsupported(d, "declarator"))?,
            d.child_by_field_name("value"),
        ),
        _ => (d, None),
    };
    let mut ty = spec.base();
    let mut first_pointer = true;
    for _ in 0..64 {
        match d.kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                if spec.atomic_pointer && first_pointer {
                    return Err(src.unsupported(d, "`_Atomic(...)` of a non-pointer type here"));
                }
                // C++ direct initialisation `x{v}` / `x(v)` initialises like `x = v`.
                let init = super::cpp::direct_init(src, whole, init, &ty)?;
                return Ok(Declared { name: d, ty, init });
            }
            "pointer_declarator" => {
                ty = spec.pointer_to(src, d, ty, first_pointer);
                first_pointer = false;
                d = d
                    .child_by_field_name("declarator")
                    .ok_or_else(|| src.unsupported(d, "abstract pointer declarator"))?;
            }
            "array_declarator" => {
                let n = match d.child_by_field_name("size") {
                    Some(size) => array_len(size)?,
                    // `a[] = {...}`: the first dimension (the innermost declarator node, around
                    // the name) comes from the initialiser.
                    None => match init {
                        Some(v)
                            if v.kind() == "initializer_list"
                                && d.child_by_field_name("declarator")
                                    .is_some_and(|i| i.kind() == "identifier") =>
                        {
                            super::initializers::list_length(src, v, array_len)?
                        }
                        _ => return Err(src.unsupported(d, "array without a size")),
                    },
                };
                let size = d.child_by_field_name("size").unwrap_or(d);
                // `thrd_t extra[0];` (a GNU zero-length array): thread handles are not in
                // memory, so an empty array of them is an array no thread is created in.
                let empty_handles = n == 0 && matches!(ty, Ty::Thread);
                if (n <= 0 && !empty_handles) || n > 1 << 16 {
                    return Err(src.error(size, &format!("array size {n} is not in 1..=65536")));
                }
                if matches!(ty, Ty::Void) {
                    return Err(src.error(d, "array of void"));
                }
                ty = Ty::Array(Box::new(ty), n as usize);
                d = d
                    .child_by_field_name("declarator")
                    .ok_or_else(|| src.unsupported(d, "array declarator"))?;
            }
            // `R (*fp)(P)`: a function pointer. Its value is a function's (see
            // `lower/funptr.rs`); its cell is typed `void *` (calls go by value).
            "function_declarator" if super::function_pointer(d).is_some() => {
                ty = Ty::Void;
                d = super::function_pointer(d)
                    .ok_or_else(|| src.internal("function pointer declarator"))?;
                first_pointer = false;
            }
            "function_declarator" => {
                return Err(src.unsupported(d, "function declarator in a variable declaration"));
            }
            "reference_declarator" => {
                return Err(src.unsupported(
                    d,
                    "reference here (a reference is supported as a parameter of a called function \
                 and as a local variable bound to an object)",
                ))
            }
            // `T (*p)[N]`: a pointer to arrays of N `T` (the array part came first).
            "parenthesized_declarator"
                if matches!(ty, Ty::Array(..))
                    && super::named_children(d)
                        .first()
                        .is_some_and(|i| i.kind() == "pointer_declarator") =>
            {
                d = super::named_children(d)
                    .first()
                    .copied()
                    .ok_or_else(|| src.internal("parenthesised declarator"))?;
            }
            "parenthesized_declarator" => {
                return Err(src.unsupported(
                    d,
                    "parenthesised declarator (pointers to functions here, and other \
                     parenthesised forms than a pointer to arrays `T (*p)[N]`, are not supported)",
                ))
            }
            _ => {
                let text = src.text(d);
                return Err(src.unsupported(d, &format!("declarator `{text}`")));
            }
        }
    }
    Err(src.unsupported(d, "declarator nested too deeply"))
}
