//! CDSChecker's `<unrelacy.h>` (C++ only): the Relacy types its tests are written with,
//! as that header defines them. Its macros (`$`, `ASSERT`, `mo_relaxed`, ...) are the
//! header's definitions in `preprocess/system.rs`.
//!
//! * `rl::var<T>` is a plain `T` (the header's `var` wraps one `T value` and reads and writes
//!   it with ordinary, race-checked accesses): `v = x`, `v += x` and `v == w` are those of a
//!   `T`, and `v($)` — `v()` once `$` is expanded, the header's `operator()` — reads it. The
//!   names declared with that type are recorded ([`TypeEnv::relacy_vars`]) when the
//!   declaration's type is built, and a call with no arguments of a variable or member of such
//!   a name is that read ([`crate::frontend::lower`]'s `relacy_read`). Its default constructor
//!   stores 0, so such a variable or member without an initialiser starts at 0
//!   ([`zero_initialised`]).
//! * `rl::backoff`, `rl::linear_backoff`, `rl::exp_backoff` are the header's empty class
//!   with `yield()` doing nothing: a local of that type declares nothing and `bo.yield()`
//!   does nothing. Anything else done with one is refused.
//!
//! **Invariant:** an `rl::var<T>` lowers to exactly the IR of the `T` it wraps, initialised
//! to 0 (`fixtures/dialect/relacy_mailbox.cpp` and its C twin in `fixtures/dialect/c/`).

use super::cpp::StdTy;
use super::types::{self, BaseTy, Ty, TypeEnv};
use super::{named_children, Lang, Src, R};
use tree_sitter::Node;

/// The names of the empty backoff classes of `rl::`.
const BACKOFFS: &[&str] = &["backoff", "linear_backoff", "exp_backoff"];

/// `rl::X` (a qualified name whose scope is exactly `rl`): the node of `X`.
fn rl_name<'t>(src: &Src, n: Node<'t>) -> Option<Node<'t>> {
    if src.lang != Lang::Cpp || n.kind() != "qualified_identifier" {
        return None;
    }
    let scope = n.child_by_field_name("scope")?;
    if scope.kind() != "namespace_identifier" || src.text(scope) != "rl" {
        return None;
    }
    n.child_by_field_name("name")
}

/// Whether type node `ty` is one of `rl::`'s backoff classes.
pub(crate) fn is_backoff(src: &Src, ty: Node) -> bool {
    rl_name(src, ty)
        .is_some_and(|n| n.kind() == "type_identifier" && BACKOFFS.contains(&src.text(n)))
}

/// The type `rl::var<T>` stands for: `T`, plain. `decl` is the declaration whose type it is:
/// the names it declares are recorded as Relacy variables. `None` for any other type.
pub(crate) fn var_type(src: &Src, env: &TypeEnv, decl: Node, ty: Node) -> R<Option<StdTy>> {
    let Some(inner) = rl_name(src, ty) else {
        return Ok(None);
    };
    if is_backoff(src, ty) {
        return Err(src.unsupported(
            ty,
            &format!(
                "`{}` here (an rl:: backoff is supported as a local variable, whose `yield()` \
                 does nothing)",
                src.text(ty)
            ),
        ));
    }
    let name = match inner.kind() {
        "template_type" => inner.child_by_field_name("name").map(|n| src.text(n)),
        _ => None,
    };
    if name != Some("var") {
        return Err(src.unsupported(
            ty,
            &format!(
                "type `{}` (of <unrelacy.h>, only rl::var<T> and the rl:: backoffs are supported)",
                src.text(ty)
            ),
        ));
    }
    let bad = || {
        src.unsupported(
            ty,
            &format!(
                "type `{}` (rl::var is supported for integer and pointer types)",
                src.text(ty)
            ),
        )
    };
    let args = inner
        .child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default();
    let [arg] = args.as_slice() else {
        return Err(bad());
    };
    if arg.kind() != "type_descriptor" {
        return Err(bad());
    }
    let spec = types::decl_spec(src, env, *arg)?;
    if spec.storage.is_some() || spec.atomic {
        return Err(bad());
    }
    let mut t = spec.base();
    let mut d = arg.child_by_field_name("declarator");
    while let Some(p) = d {
        if p.kind() != "abstract_pointer_declarator" {
            return Err(bad());
        }
        t = Ty::Ptr {
            to: Box::new(t),
            atomic: false,
        };
        d = p.child_by_field_name("declarator");
    }
    let ty = match t {
        Ty::Int { ty, atomic: false } => StdTy::Base(BaseTy::Int(ty), false),
        Ty::Ptr { atomic: false, .. } => StdTy::Full(t),
        _ => return Err(bad()),
    };
    record_names(src, env, decl);
    Ok(Some(ty))
}

/// Records the names `decl` declares (through pointer and init declarators) as Relacy
/// variables.
fn record_names(src: &Src, env: &TypeEnv, decl: Node) {
    let mut cursor = decl.walk();
    for d in decl.children_by_field_name("declarator", &mut cursor) {
        let mut n = d;
        while let Some(inner) = n.child_by_field_name("declarator") {
            n = inner;
        }
        if matches!(n.kind(), "identifier" | "field_identifier") {
            env.relacy_vars.borrow_mut().insert(src.text(n).to_string());
        }
    }
}

/// Whether declaration `decl` (of a local, a global or a member) has type `rl::var<T>`: its
/// objects start at 0 when it gives no initialiser (the header's default constructor).
pub(crate) fn zero_initialised(src: &Src, decl: Node) -> bool {
    decl.child_by_field_name("type")
        .and_then(|t| rl_name(src, t))
        .is_some_and(|n| n.kind() == "template_type")
}
