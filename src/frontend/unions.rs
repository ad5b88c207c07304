//! C `union` types (also C++'s), for lock words such as `typedef union { atomic_int lock; }
//! rwlock_t;`.
//!
//! The members of a union share storage. fensyn's memory is cells holding whole values, so a
//! union is accepted when its members overlap **cell for cell with the same value type**:
//! every member flattens to the same sequence of cells, each an integer of the same type
//! (`_Atomic` may differ: atomicity belongs to the access) or a pointer (any pointee: every
//! pointer has one representation). Then writing one member and reading another reads exactly
//! the value written, which the cells express. The union is laid out as its first member
//! ([`types::StructDef::fields`]); the other members are aliases at offset 0
//! ([`types::StructDef::aliases`]); `sizeof` is the first member's; a `{ ... }` initialiser
//! initialises the first member (C11 6.7.9p17). Refused, at the member: members whose cells
//! differ (type punning between `int` and `short[2]`, between `int` and `unsigned`, or between
//! integers and pointers, which the cell model cannot express), synchronisation objects and
//! thread handles in a union, bit-fields, anonymous members, and C++ unions with member
//! functions.

use super::types::{self, Ty};
use super::{lower, named_children, Ctx, Lang, R};
use tree_sitter::Node;

/// The value type of one cell of a union member, as far as overlapping is concerned.
#[derive(PartialEq, Eq, Debug)]
enum Shape {
    Int(types::IntTy),
    Ptr,
}

impl Ctx<'_> {
    /// Registers union definition `node` (a `union_specifier` with a body); returns its id.
    pub(crate) fn define_union(&mut self, node: Node) -> R<usize> {
        let src = self.src;
        let name = node
            .child_by_field_name("name")
            .map(|n| src.text(n).to_string());
        let Some(body) = node.child_by_field_name("body") else {
            return Ok(usize::MAX);
        };
        self.check_new_tag(node, name.as_deref(), "union")?;
        let mut members: Vec<(String, Ty, Node)> = Vec::new();
        for fd in named_children(body) {
            if fd.kind() != "field_declaration" {
                let what = if src.lang == Lang::Cpp {
                    "this union member (unions of data members only)"
                } else {
                    "this union member"
                };
                return Err(src.unsupported(fd, what));
            }
            self.union_member(fd, &mut members)?;
        }
        let Some((first, first_ty, first_at)) = members.first().cloned() else {
            return Err(src.unsupported(node, "empty union"));
        };
        let shape = self.shape(&first_ty, first_at)?;
        for (m, t, at) in &members[1..] {
            if self.shape(t, *at)? != shape {
                return Err(src.unsupported(
                    *at,
                    &format!(
                        "union member `{m}` whose storage does not overlap `{first}` value for \
                         value (type punning between different layouts is not supported: every \
                         member of a union must have the same cells, e.g. `int` and \
                         `atomic_int`)"
                    ),
                ));
            }
        }
        let id = self.types.structs.len();
        self.types.structs.push(types::StructDef {
            name: name.clone(),
            start: node.start_byte(),
            fields: vec![(first, first_ty)],
            aliases: members[1..]
                .iter()
                .map(|(m, t, _)| (m.clone(), t.clone()))
                .collect(),
        });
        if let (Some(n), Lang::Cpp) = (&name, src.lang) {
            self.types
                .typedefs
                .insert(n.clone(), (types::BaseTy::Struct(id), false));
        }
        Ok(id)
    }

    /// The members declared by `fd`, appended to `members`.
    fn union_member<'t>(
        &mut self,
        fd: Node<'t>,
        members: &mut Vec<(String, Ty, Node<'t>)>,
    ) -> R<()> {
        let src = self.src;
        self.define_inline_struct(fd)?;
        let spec = types::decl_spec(&src, &self.types, fd)?;
        if let Some((storage, at)) = &spec.storage {
            return Err(src.unsupported(*at, &format!("`{storage}` union member")));
        }
        if let Some(v) = fd.child_by_field_name("default_value") {
            return Err(src.unsupported(v, "default member initialiser in a union"));
        }
        let mut c = fd.walk();
        let decls: Vec<Node> = fd.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            return Err(src.unsupported(fd, "anonymous union member"));
        }
        for d in decls {
            if d.kind() == "bitfield_clause" {
                return Err(src.unsupported(d, "bit-field"));
            }
            let decl = types::declarator(&src, &spec, d, &mut |n| lower::const_eval(self, n))?;
            let m = src.text(decl.name).to_string();
            if members.iter().any(|(f, _, _)| *f == m) {
                return Err(src.error(decl.name, &format!("duplicate member `{m}`")));
            }
            members.push((m, decl.ty, decl.name));
        }
        Ok(())
    }

    /// The cells of a union member of type `ty` (see [`Shape`]).
    fn shape(&self, ty: &Ty, at: Node) -> R<Vec<Shape>> {
        let src = self.src;
        let mut cells = Vec::new();
        self.flatten("", ty, at, lower::sync::Initial::Zero, &mut cells)?;
        cells
            .iter()
            .map(|c| match &c.ty {
                Ty::Int { ty, .. } => Ok(Shape::Int(*ty)),
                Ty::Ptr { .. } => Ok(Shape::Ptr),
                _ => Err(src.unsupported(
                    at,
                    "union member holding a synchronisation object or a thread handle",
                )),
            })
            .collect()
    }
}
