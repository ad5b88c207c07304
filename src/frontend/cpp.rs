//! The C++ parts of the front end that are not about function bodies: `std::` types
//! (`std::atomic<T>` for integers and — as an atomic pointer cell, C's `_Atomic(T *)` —
//! pointers, `std::mutex`, `std::thread`, `std::size_t`, ...), C++ initialisers (`x{v}`,
//! `x(v)`, `a{1, 2}` for arrays and structs), C++'s subscript syntax, the thread
//! functions passed to `std::thread` (declared or assigned: `t[i] = std::thread(f, i)`), and
//! messages for C++-only top-level constructs. Function bodies are in
//! `src/frontend/lower/cpp.rs`; everything the two languages share is lowered by the C code
//! (see the module doc of [`crate::frontend`]).

use super::lower::strip_parens;
use super::types::{self, BaseTy, SyncTy, Ty};
use super::{named_children, Lang, SpawnedBy, Src, R};
use std::collections::HashMap;
use tree_sitter::{Node, Query, QueryCursor, StreamingIterator};

/// `std::X` (a qualified name whose scope is exactly `std`) or an unqualified `X`: the node of
/// `X` (an identifier, type identifier, template type or qualified name). Everything else, e.g.
/// `foo::X` or `std::chrono::X`, is `None`.
pub(crate) fn unqualify<'t>(src: &Src, n: Node<'t>) -> Option<Node<'t>> {
    match n.kind() {
        "qualified_identifier" => {
            let scope = n.child_by_field_name("scope")?;
            if scope.kind() != "namespace_identifier" || src.text(scope) != "std" {
                return None;
            }
            n.child_by_field_name("name")
        }
        "identifier" | "type_identifier" | "template_type" | "field_identifier" => Some(n),
        _ => None,
    }
}

/// The name of a (possibly `std::`-qualified, possibly template) type or identifier: `thread`
/// for `std::thread`, `lock_guard` for `std::lock_guard<std::mutex>`.
pub(crate) fn std_name<'a>(src: &Src<'a>, n: Node) -> Option<&'a str> {
    let inner = unqualify(src, n)?;
    match inner.kind() {
        "template_type" => inner.child_by_field_name("name").map(|t| src.text(t)),
        "qualified_identifier" => None,
        _ => Some(src.text(inner)),
    }
}

/// A C++ type recognised by [`std_type`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StdTy {
    /// A base type and whether it is atomic (`std::atomic<int>`, `std::mutex`, ...).
    Base(BaseTy, bool),
    /// A complete type that is not a [`BaseTy`]: `std::atomic<T *>`, an atomic pointer cell.
    Full(Ty),
}

/// The C++ types of a declaration: `std::atomic<T>` / `atomic<T>` for an integer type `T`
/// or a pointer type `T *` (any pointee the C code accepts: `std::atomic<node *>` is an atomic
/// pointer cell, like C's `_Atomic(struct node *)`), `std::atomic_int` and the other
/// `std::atomic_*` names, `std::mutex` / `mutex`, `std::thread` / `thread`, and `std::`
/// integer names (`std::size_t`, `std::int32_t`, ...). `None` for C and for anything else
/// (which the C code then classifies or rejects).
pub(crate) fn std_type(src: &Src, env: &types::TypeEnv, ty: Node) -> R<Option<StdTy>> {
    if src.lang != Lang::Cpp {
        return Ok(None);
    }
    let Some(inner) = unqualify(src, ty) else {
        return Ok(None);
    };
    let qualified = inner.id() != ty.id();
    match inner.kind() {
        "template_type" => {
            let name = inner
                .child_by_field_name("name")
                .map(|n| src.text(n))
                .unwrap_or("");
            if name != "atomic" {
                return Ok(None);
            }
            let args = inner
                .child_by_field_name("arguments")
                .map(named_children)
                .unwrap_or_default();
            let text = src.text(ty);
            let bad = || {
                src.unsupported(
                    ty,
                    &format!(
                        "type `{text}` (std::atomic is supported for integer and pointer types \
                         only)"
                    ),
                )
            };
            let [arg] = args.as_slice() else {
                return Err(bad());
            };
            if arg.kind() != "type_descriptor" {
                return Err(bad());
            }
            let spec = types::decl_spec(src, env, *arg)?;
            if spec.storage.is_some() {
                return Err(bad());
            }
            let Some(mut d) = arg.child_by_field_name("declarator") else {
                return match (spec.ty, &spec.full) {
                    (BaseTy::Int(t), None) if !spec.atomic => {
                        Ok(Some(StdTy::Base(BaseTy::Int(t), true)))
                    }
                    // A pointer typedef or a class template's type parameter bound to a
                    // pointer type (`std::atomic<T>` with `T` = `node *`).
                    (_, Some(Ty::Ptr { to, atomic: false })) => Ok(Some(StdTy::Full(Ty::Ptr {
                        to: to.clone(),
                        atomic: true,
                    }))),
                    _ => Err(bad()),
                };
            };
            // `T *`, `T **`, ...: every level is a plain pointer but the outermost, which is
            // the atomic cell.
            let mut t = spec.base();
            for _ in 0..64 {
                if d.kind() != "abstract_pointer_declarator" {
                    return Err(bad());
                }
                t = Ty::Ptr {
                    to: Box::new(t),
                    atomic: false,
                };
                match d.child_by_field_name("declarator") {
                    Some(inner) => d = inner,
                    None => {
                        if let Ty::Ptr { atomic, .. } = &mut t {
                            *atomic = true;
                        }
                        return Ok(Some(StdTy::Full(t)));
                    }
                }
            }
            Err(bad())
        }
        "type_identifier" => {
            let name = src.text(inner);
            if let Some(t) = types::atomic_typedef(name) {
                return Ok(Some(StdTy::Base(BaseTy::Int(t), true)));
            }
            match name {
                "mutex" => Ok(Some(StdTy::Base(BaseTy::Mutex, false))),
                "recursive_mutex" => Ok(Some(StdTy::Base(
                    BaseTy::Sync(SyncTy::RecursiveMutex),
                    false,
                ))),
                "shared_mutex" => Ok(Some(StdTy::Base(BaseTy::Sync(SyncTy::RwLock), false))),
                "condition_variable" => Ok(Some(StdTy::Base(BaseTy::Sync(SyncTy::Cond), false))),
                "thread" => Ok(Some(StdTy::Base(BaseTy::Thread, false))),
                _ if qualified => match types::plain_typedef(name) {
                    Some(t @ BaseTy::Int(_)) => Ok(Some(StdTy::Base(t, false))),
                    _ => Ok(None),
                },
                _ => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

/// C++ direct initialisation of a variable of type `ty`: `x{v}`, `x{}` and `x(v)` (`value`
/// of the `init_declarator` `d`) initialise a scalar like `x = v` (`x{}` like no initialiser:
/// zero, as for a global); an array or struct's `a{1, 2}` is its `{ ... }` list, as after
/// `=`. Other initialisers are returned unchanged. Several values in parentheses are
/// unsupported.
pub(crate) fn direct_init<'t>(
    src: &Src,
    d: Node<'t>,
    init: Option<Node<'t>>,
    ty: &Ty,
) -> R<Option<Node<'t>>> {
    let Some(v) = init else {
        return Ok(None);
    };
    let mut c = d.walk();
    let has_eq = d.children(&mut c).any(|ch| ch.kind() == "=");
    let direct = match v.kind() {
        "argument_list" => true,
        // `x = {v}` is C's braced scalar initialiser (unsupported there); only C++'s `x{v}`
        // has no `=`.
        "initializer_list" => src.lang == Lang::Cpp && !has_eq,
        _ => false,
    };
    if !direct {
        return Ok(Some(v));
    }
    if !ty.is_scalar() {
        if v.kind() == "initializer_list" {
            return Ok(Some(v));
        }
        return Err(src.unsupported(
            v,
            "parenthesised initialiser of an array or struct (write it with braces: `x{...}`)",
        ));
    }
    match named_children(v).as_slice() {
        [] => Ok(None),
        [e] if e.kind() != "initializer_list" => Ok(Some(*e)),
        _ => Err(src.unsupported(v, "initialiser with several values")),
    }
}

/// The index of a subscript `a[i]`: C's `index` field, or the one expression of C++'s
/// `indices` list (`a[i, j]` is a comma operator before C++23 and a multidimensional
/// subscript after: unsupported either way).
pub(crate) fn subscript_index<'t>(src: &Src, n: Node<'t>) -> R<Node<'t>> {
    if let Some(i) = n.child_by_field_name("index") {
        return Ok(i);
    }
    let Some(list) = n.child_by_field_name("indices") else {
        return Err(src.unsupported(n, "subscript"));
    };
    match named_children(list).as_slice() {
        [i] => Ok(*i),
        [] => Err(src.unsupported(n, "subscript")),
        [_, second, ..] => {
            Err(src.unsupported(*second, "subscript with several indices (comma operator)"))
        }
    }
}

/// Messages for C++-only top-level items (used for the `unsupported` diagnostic).
pub(crate) fn unsupported_toplevel(kind: &str) -> Option<String> {
    Some(match kind {
        "namespace_definition" => {
            "namespace (only `using namespace std;` is supported)".to_string()
        }
        "using_declaration" => {
            "`using` declaration (only `using namespace std;` is supported)".to_string()
        }
        "alias_declaration" => "type alias".to_string(),
        "namespace_alias_definition" => "namespace alias".to_string(),
        "template_instantiation" => "explicit template instantiation (class templates are \
                                     instantiated where they are used)"
            .to_string(),
        "static_assert_declaration" => "static_assert".to_string(),
        "concept_definition" => "concept".to_string(),
        "friend_declaration" => "friend declaration".to_string(),
        _ => return None,
    })
}

/// One argument of a `std::thread` or lock guard constructor: an expression, or (in the most
/// vexing parse `std::thread t(f, x);`) a name or an array element the grammar took for a
/// parameter declaration.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CtorArg<'t> {
    Expr(Node<'t>),
    /// An identifier parsed as the type of a parameter declaration.
    Name(Node<'t>),
    /// `a[i]` parsed as a parameter of type `a` with an abstract array declarator of size `i`:
    /// the array's name and the index expression.
    Element(Node<'t>, Node<'t>),
}

impl<'t> CtorArg<'t> {
    /// The node to report the argument at (for an element, its array's name).
    pub(crate) fn node(self) -> Node<'t> {
        match self {
            CtorArg::Expr(n) | CtorArg::Name(n) | CtorArg::Element(n, _) => n,
        }
    }
}

/// The declared name and the constructor arguments of one declarator of a class-type variable:
/// `v(a, b)` (an `init_declarator` with an argument list, or a `function_declarator` when every
/// argument is a plain name), `v{a, b}`, or `v` (no arguments). `Err` for other forms
/// (`v = ...`, pointers, arrays) and for arguments that are declarations.
pub(crate) fn ctor_args<'t>(src: &Src, d: Node<'t>) -> R<(Node<'t>, Vec<CtorArg<'t>>)> {
    match d.kind() {
        "identifier" => Ok((d, Vec::new())),
        "function_declarator" => {
            let name = d
                .child_by_field_name("declarator")
                .filter(|n| n.kind() == "identifier")
                .ok_or_else(|| src.unsupported(d, "declarator"))?;
            let params = d
                .child_by_field_name("parameters")
                .map(named_children)
                .unwrap_or_default();
            let mut args = Vec::new();
            for p in params {
                let ty = p.child_by_field_name("type");
                let decl = p.child_by_field_name("declarator");
                match ty {
                    Some(t)
                        if p.kind() == "parameter_declaration"
                            && decl.is_none()
                            && p.named_child_count() == 1 =>
                    {
                        args.push(CtorArg::Name(t));
                    }
                    // `a[i]`: an element of the array `a`.
                    Some(t)
                        if p.kind() == "parameter_declaration"
                            && t.kind() == "type_identifier"
                            && p.named_child_count() == 2 =>
                    {
                        let index = decl
                            .filter(|d| {
                                d.kind() == "abstract_array_declarator"
                                    && d.child_by_field_name("declarator").is_none()
                            })
                            .and_then(|d| d.child_by_field_name("size"));
                        let Some(index) = index else {
                            let text = src.text(p);
                            return Err(
                                src.unsupported(p, &format!("constructor argument `{text}`"))
                            );
                        };
                        args.push(CtorArg::Element(t, index));
                    }
                    _ => {
                        let text = src.text(p);
                        let why = if text.starts_with("std::move(") || text.starts_with("move(") {
                            " (moving a std::unique_ptr into a thread or a function is not \
                             supported: pass `p.get()` and keep `p` alive until the join)"
                        } else {
                            ""
                        };
                        return Err(
                            src.unsupported(p, &format!("constructor argument `{text}`{why}"))
                        );
                    }
                }
            }
            Ok((name, args))
        }
        "init_declarator" => {
            let name = d
                .child_by_field_name("declarator")
                .filter(|n| n.kind() == "identifier")
                .ok_or_else(|| src.unsupported(d, "declarator"))?;
            let value = d
                .child_by_field_name("value")
                .ok_or_else(|| src.unsupported(d, "declarator"))?;
            let mut c = d.walk();
            let has_eq = d.children(&mut c).any(|ch| ch.kind() == "=");
            if has_eq || !matches!(value.kind(), "argument_list" | "initializer_list") {
                return Err(src.unsupported(
                    value,
                    "initialisation with `=` (write the constructor arguments directly: `v(...)`)",
                ));
            }
            let args = named_children(value)
                .into_iter()
                .map(CtorArg::Expr)
                .collect();
            Ok((name, args))
        }
        "reference_declarator" => Err(src.unsupported(
            d,
            "reference here (a reference is supported as a parameter of a called function \
                 and as a local variable bound to an object)",
        )),
        "pointer_declarator" => {
            Err(src.unsupported(d, "pointer variable (pointers are not supported)"))
        }
        "array_declarator" => Err(src.unsupported(d, "array (arrays are not supported)")),
        _ => {
            let text = src.text(d);
            Err(src.unsupported(d, &format!("declarator `{text}`")))
        }
    }
}

/// Adds to `out` the functions named as the first argument of a `std::thread` declared or
/// constructed in `main_def` (the `@thread_decl` and `@thread_ctor_args` matches of
/// `queries/cpp/threads.scm`). Malformed declarations are skipped here and reported when
/// `main` is lowered.
pub(crate) fn std_thread_functions(
    src: &Src,
    main_def: Node,
    query: &Query,
    text: &[u8],
    out: &mut HashMap<String, SpawnedBy>,
) {
    if src.lang != Lang::Cpp {
        return;
    }
    let Some(decl_idx) = query.capture_index_for_name("thread_decl") else {
        return;
    };
    let Some(body) = main_def.child_by_field_name("body") else {
        return;
    };
    let ctor_idx = query.capture_index_for_name("thread_ctor_args");
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, body, text);
    while let Some(m) = matches.next() {
        for cap in m.captures().iter().filter(|c| Some(c.index) == ctor_idx) {
            if let Some(f) = named_children(cap.node).first() {
                let f = strip_parens(*f);
                if f.kind() == "identifier" {
                    out.entry(src.text(f).to_string()).or_default().cpp = true;
                }
            }
        }
        for cap in m.captures().iter().filter(|c| c.index == decl_idx) {
            let mut c = cap.node.walk();
            for d in cap.node.children_by_field_name("declarator", &mut c) {
                let Ok((_, args)) = ctor_args(src, d) else {
                    continue;
                };
                let Some(first) = args.first() else {
                    continue;
                };
                let f = strip_parens(first.node());
                if matches!(f.kind(), "identifier" | "type_identifier") {
                    out.entry(src.text(f).to_string()).or_default().cpp = true;
                }
            }
        }
    }
}

/// `std::memory_order_X`, `std::memory_order::X` and `memory_order::X` (whitespace ignored): the
/// C name `memory_order_X` of the order, for [`super::lower`]'s table.
pub(crate) fn mem_order_c_name(src: &Src, n: Node) -> Option<String> {
    if src.lang != Lang::Cpp || n.kind() != "qualified_identifier" {
        return None;
    }
    let text: String = src.text(n).chars().filter(|c| !c.is_whitespace()).collect();
    let rest = text.strip_prefix("std::").unwrap_or(&text);
    if let Some(order) = rest.strip_prefix("memory_order::") {
        return Some(format!("memory_order_{order}"));
    }
    (rest.starts_with("memory_order_") && rest != text).then(|| rest.to_string())
}

/// Rejects global declarations of C++ class types that only make sense in a function (threads,
/// lock guards) before the C code could take `std::thread t(f);` for a function prototype.
pub(crate) fn check_global_decl(src: &Src, node: Node) -> R<()> {
    if src.lang != Lang::Cpp {
        return Ok(());
    }
    let Some(ty) = node.child_by_field_name("type") else {
        return Ok(());
    };
    match std_name(src, ty) {
        Some("thread") => Err(src.unsupported(
            node,
            "global std::thread (threads can only be created in main)",
        )),
        Some(kind @ ("lock_guard" | "unique_lock" | "scoped_lock")) => Err(src.unsupported(
            node,
            &format!("global std::{kind} (lock guards are supported in functions only)"),
        )),
        _ => Ok(()),
    }
}
