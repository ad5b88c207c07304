//! `{ ... }` initialisers of arrays and structs in memory (globals and `static` locals),
//! with C's designators: `{ [2] = 1, [0] = 5 }`, `{ .next = &n, .value = 2 }`, chains such
//! as `[1].x = 3` and `.a[2] = 1`, mixed with positional elements.
//!
//! As C says (C11 6.7.9): a positional element initialises the element (or member) after the
//! previous one initialised at the same level, a designator moves that position, a later
//! initialiser of a subobject overrides an earlier one (a whole subobject initialised again
//! starts from zero; a designator chain changes only what it names), and whatever is not
//! initialised is zero. The size of `a[] = { ... }` is one past the largest index
//! initialised. Brace elision (`{1, 2, 3, 4}` for two structs of two members) is not
//! supported, nor GNU's ranges `[0 ... 3] = v`.

use super::types::Ty;
use super::{lower, named_children, Ctx, Src, R};
use tree_sitter::Node;

/// The designators of an `initializer_pair`, in order, and its value.
fn pair<'t>(src: &Src, item: Node<'t>) -> R<(Vec<Node<'t>>, Node<'t>)> {
    let mut c = item.walk();
    let ds: Vec<Node> = item.children_by_field_name("designator", &mut c).collect();
    match (ds.is_empty(), item.child_by_field_name("value")) {
        (false, Some(v)) => Ok((ds, v)),
        _ => Err(src.unsupported(item, "designated initialiser")),
    }
}

/// The index expression of a `[i]` designator (refusing GNU ranges and other designators).
fn subscript<'t>(src: &Src, d: Node<'t>) -> R<Node<'t>> {
    match d.kind() {
        "subscript_designator" => named_children(d)
            .first()
            .copied()
            .ok_or_else(|| src.unsupported(d, "designator")),
        "subscript_range_designator" => {
            Err(src.unsupported(d, "designator range `[a ... b]` (a GNU extension)"))
        }
        _ => Err(src.error(
            d,
            &format!(
                "designator `{}` does not name an array element",
                src.text(d)
            ),
        )),
    }
}

/// The number of elements of `a[] = { ... }`: one past the largest index initialised.
pub(crate) fn list_length(src: &Src, v: Node, eval: &mut dyn FnMut(Node) -> R<i64>) -> R<i64> {
    let (mut next, mut len) = (0i64, 0i64);
    for item in named_children(v) {
        if item.kind() == "initializer_pair" {
            let (ds, _) = pair(src, item)?;
            next = eval(subscript(src, ds[0])?)?;
        }
        next = next.saturating_add(1);
        len = len.max(next);
    }
    Ok(len)
}

impl Ctx<'_> {
    /// The index designated by `[i]` in an array of `n` elements.
    fn designated_index(&mut self, d: Node, n: usize) -> R<usize> {
        let src = self.src;
        let e = subscript(&src, d)?;
        let i = lower::const_eval(self, e)?;
        match usize::try_from(i) {
            Ok(i) if i < n => Ok(i),
            _ => Err(src.error(
                e,
                &format!(
                    "array index {i} in initialiser is out of bounds of an array of {n} elements"
                ),
            )),
        }
    }

    /// The offset in cells and the type of the member designated by `.f` in struct `id`, and
    /// its position among the members.
    fn designated_member(&self, d: Node, id: usize) -> R<(usize, usize, Ty)> {
        let src = self.src;
        let name = named_children(d)
            .first()
            .filter(|_| d.kind() == "field_designator")
            .map(|f| src.text(*f));
        let Some(name) = name else {
            return Err(src.error(
                d,
                &format!("designator `{}` does not name a struct member", src.text(d)),
            ));
        };
        let fields = self.types.fields_of(id);
        let pos = fields.iter().position(|(f, _)| f == name);
        match (pos, self.types.field(id, name)) {
            (Some(k), Some((off, ty))) => Ok((k, off, ty)),
            _ => Err(src.error(d, &format!("no member named `{name}` in the struct"))),
        }
    }

    /// Initialises the subobject of type `ty` at cell `off` from `value`, after following the
    /// designator chain `ds` into it; a whole subobject starts from zero.
    fn init_designated(
        &mut self,
        ty: &Ty,
        ds: &[Node],
        value: Node,
        values: &mut [i64],
        off: usize,
    ) -> R<()> {
        let Some((d, rest)) = ds.split_first() else {
            let size = self.types.size(ty);
            for cell in values.iter_mut().skip(off).take(size) {
                *cell = 0;
            }
            return self.init_values(ty, value, values, off);
        };
        match ty {
            Ty::Array(t, n) => {
                let i = self.designated_index(*d, *n)?;
                let size = self.types.size(t);
                self.init_designated(t, rest, value, values, off + i * size)
            }
            Ty::Struct(id) => {
                let (_, at, t) = self.designated_member(*d, *id)?;
                self.init_designated(&t, rest, value, values, off + at)
            }
            _ => Err(self.src.error(
                *d,
                &format!("designator `{}` for a scalar", self.src.text(*d)),
            )),
        }
    }

    /// `{ ... }` for an array of `n` elements of type `t` at cell `off`.
    pub(crate) fn init_array(
        &mut self,
        t: &Ty,
        n: usize,
        v: Node,
        values: &mut [i64],
        off: usize,
    ) -> R<()> {
        let src = self.src;
        let size = self.types.size(t);
        let mut next = 0usize;
        for item in named_children(v) {
            let (index, ds, value) = if item.kind() == "initializer_pair" {
                let (ds, value) = pair(&src, item)?;
                (self.designated_index(ds[0], n)?, ds[1..].to_vec(), value)
            } else {
                (next, Vec::new(), item)
            };
            if index >= n {
                return Err(src.error(item, "too many initialisers for the array"));
            }
            self.init_designated(t, &ds, value, values, off + index * size)?;
            next = index + 1;
        }
        Ok(())
    }

    /// `{ ... }` for struct `id` at cell `off`.
    pub(crate) fn init_struct(
        &mut self,
        id: usize,
        v: Node,
        values: &mut [i64],
        off: usize,
    ) -> R<()> {
        let src = self.src;
        let fields = self.types.fields_of(id);
        let mut next = 0usize;
        for item in named_children(v) {
            let (k, ds, value) = if item.kind() == "initializer_pair" {
                let (ds, value) = pair(&src, item)?;
                let (k, _, _) = self.designated_member(ds[0], id)?;
                (k, ds[1..].to_vec(), value)
            } else {
                (next, Vec::new(), item)
            };
            let Some((_, t)) = fields.get(k) else {
                return Err(src.error(item, "too many initialisers for the struct"));
            };
            let at: usize = fields[..k].iter().map(|(_, t)| self.types.size(t)).sum();
            self.init_designated(t, &ds, value, values, off + at)?;
            next = k + 1;
        }
        Ok(())
    }
}
