//! `enum` definitions at file scope (see the module doc of [`crate::frontend`]): on their own
//! (`enum state { IDLE, BUSY };`), in a declaration or `typedef` (`typedef enum { A, B } E;`,
//! also anonymous), or as the type of a struct member.
//!
//! An enumerator is an integer constant of type `int`, visible from its own definition on (so
//! `B = A + 1` may use an earlier one): usable wherever a constant is (case labels, array
//! sizes, initialisers, counting-loop bounds); a local variable of the same name hides it. A
//! value given must be an integer constant expression that fits `int` (as in C17; in C++ a
//! wider value makes the enum's type `unsigned int` or `long`, and every enumerator of that enum
//! has it); the others count up from the previous one (from 0). An enumerated type is an integer type: `unsigned
//! int` when no enumerator is negative, else `int` (what GCC and Clang choose; C leaves it to
//! the implementation). Refused: an enum defined inside a function (its enumerators would be
//! local), a reference to an enum tag that is not defined above, and C++ scoped enums (`enum
//! class`) and enums with an underlying type (`enum E : int`).

use super::types::{BaseTy, EnumDef, IntTy};
use super::{lower, named_children, Ctx, Lang, R};
use tree_sitter::Node;

/// An enumeration constant: its value and where it is defined (visible after that byte).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Enumerator {
    pub(crate) value: i64,
    pub(crate) start: usize,
    /// Its type as an operand: `int`, or in C++ the enum's type when a value does not fit
    /// `int` (`enum { MAX_TICKET = INTPTR_MAX }`).
    pub(crate) ty: IntTy,
}

impl Ctx<'_> {
    /// The value of the enumerator `name` if one is defined before byte `at`.
    pub(crate) fn enumerator_at(&self, name: &str, at: usize) -> Option<i64> {
        self.enumerator_typed_at(name, at).map(|(v, _)| v)
    }

    /// The value and operand type of the enumerator `name` if one is defined before byte `at`.
    pub(crate) fn enumerator_typed_at(&self, name: &str, at: usize) -> Option<(i64, IntTy)> {
        self.enumerators
            .get(name)
            .filter(|e| e.start < at)
            .map(|e| (e.value, e.ty))
    }

    /// A top-level `enum E { ... };` item.
    pub(crate) fn enum_item(&mut self, node: Node) -> R<()> {
        if node.child_by_field_name("body").is_none() {
            return Err(self.src.unsupported(
                node,
                "enum declaration without its enumerators (define the enum here)",
            ));
        }
        self.define_enum(node)
    }

    /// Registers the enum defined by `node` (an `enum_specifier` with a body): its tag, type
    /// and enumerators.
    pub(crate) fn define_enum(&mut self, node: Node) -> R<()> {
        let src = self.src;
        let mut up = node.parent();
        while let Some(p) = up {
            if matches!(p.kind(), "function_definition" | "compound_statement") {
                return Err(src.unsupported(
                    node,
                    "enum definition inside a function (define it at file scope)",
                ));
            }
            up = p.parent();
        }
        let mut c = node.walk();
        if node
            .children(&mut c)
            .any(|k| matches!(k.kind(), "class" | "struct"))
        {
            return Err(src.unsupported(node, "scoped enum (`enum class`)"));
        }
        if let Some(base) = node.child_by_field_name("base") {
            return Err(src.unsupported(base, "enum with an underlying type"));
        }
        let name = node
            .child_by_field_name("name")
            .map(|n| src.text(n).to_string());
        if let Some(n) = &name {
            if self.types.enums.iter().any(|e| e.name.as_ref() == Some(n)) {
                return Err(src.error(node, &format!("redefinition of `enum {n}`")));
            }
        }
        let Some(body) = node.child_by_field_name("body") else {
            return Err(src.internal("define_enum of an enum without a body"));
        };
        let mut next = 0i64;
        let mut negative = false;
        let mut wide = false;
        let mut names: Vec<String> = Vec::new();
        for e in named_children(body) {
            if e.kind() != "enumerator" {
                return Err(src.unsupported(e, "this enum member"));
            }
            let Some(id) = e.child_by_field_name("name") else {
                return Err(src.unsupported(e, "enumerator without a name"));
            };
            let value = match e.child_by_field_name("value") {
                Some(v) => lower::const_eval(self, v)?,
                None => next,
            };
            let at = e.child_by_field_name("value").unwrap_or(e);
            if i32::try_from(value).is_err() && src.lang == Lang::C {
                return Err(src.unsupported(
                    at,
                    &format!("enumerator value {value} is outside the range of `int`"),
                ));
            }
            self.declare_enumerator(id, value)?;
            negative |= value < 0;
            wide |= i32::try_from(value).is_err();
            names.push(src.text(id).to_string());
            next = value.saturating_add(1);
        }
        let ty = match (negative, wide) {
            (true, false) => IntTy::I32,
            (false, false) => IntTy::U32,
            // C++: the underlying type is one that holds every value (only C++ gets here).
            (false, true) if names.iter().all(|n| self.enumerator_fits_u32(n)) => IntTy::U32,
            (_, true) => IntTy::I64,
        };
        if wide {
            for n in &names {
                if let Some(e) = self.enumerators.get_mut(n) {
                    e.ty = ty;
                }
            }
        }
        if let (Some(n), Lang::Cpp) = (&name, src.lang) {
            // In C++ the tag is a type name.
            self.types
                .typedefs
                .insert(n.clone(), (BaseTy::Int(ty), false));
        }
        self.types.enums.push(EnumDef {
            name,
            start: node.start_byte(),
            ty,
        });
        Ok(())
    }

    /// The enumerator named by `id` with `value`, unless the name is taken at file scope.
    fn declare_enumerator(&mut self, id: Node, value: i64) -> R<()> {
        let src = self.src;
        let name = src.text(id);
        let taken = self.is_variable(name)
            || self.enumerators.contains_key(name)
            || self.fn_names.contains(name)
            || self.handles.iter().any(|(h, _)| h == name)
            || self.types.typedefs.contains_key(name);
        if taken {
            return Err(src.error(id, &format!("redefinition of `{name}`")));
        }
        self.enumerators.insert(
            name.to_string(),
            Enumerator {
                value,
                start: id.start_byte(),
                ty: IntTy::I32,
            },
        );
        Ok(())
    }

    fn enumerator_fits_u32(&self, name: &str) -> bool {
        self.enumerators
            .get(name)
            .is_some_and(|e| u32::try_from(e.value).is_ok())
    }
}
