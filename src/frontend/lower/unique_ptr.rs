//! `std::unique_ptr` as plain ownership of a heap object (`heap_cpp.rs` lowers `new`).
//!
//! A `std::unique_ptr<T>` local (`T` an integer, a pointer or a plain struct; `T[]` for an
//! array) is a pointer register like a `T *` local, so `p->f`, `*p`, `p[i]`, `if (p)` and
//! `p == nullptr` are lowered by the C code. Its destructor is a lock guard's
//! ([`super::cpp::Guard`]): wherever control leaves the declaring block (its end, `break`,
//! `continue`, `return`, `goto`) the object is deleted — an [`Instr::Free`] by `delete`
//! (`delete[]` for `T[]`) of the register, nothing when it is null — and the register
//! cleared. Ownership moves are exact because they are register moves: `p.release()` and
//! `std::move(p)` clear `p`'s register, so its scope end deletes nothing.
//!
//! Supported: `std::unique_ptr<T> p;` / `p(nullptr)` / `p(new T...)` / `p = std::make_unique<T>(...)`
//! (also `auto p = std::make_unique<T>(...)`), `std::make_unique<T[]>(n)`,
//! `std::unique_ptr<T> q = std::move(p)` (and `auto`), `p.get()`, `p.release()`, `p.reset()`,
//! `p.reset(ptr)`, `p = nullptr`, `p = std::make_unique<T>(...)`, `p = std::move(q)`.
//! `std::make_unique<T>()` value-initialises (zero); `std::make_unique<T>(v)` is `new T(v)`
//! and `std::make_unique<S>(a, b)` initialises the aggregate's members in order (as `new
//! S{a, b}`). Refused with a message naming the construct: custom deleters, `std::unique_ptr`
//! anywhere but a block's local (globals, members, parameters, return values, arrays of
//! them), its address, other member functions, `std::make_unique` and `std::move` elsewhere
//! (into a thread's argument included), and `std::shared_ptr` / `std::weak_ptr`.

use super::cpp::{Guard, Release};
use super::heap::{Count, Fill};
use super::{named_children, strip_parens, Binding, FnLower, Name, TExpr, R};
use crate::frontend::cpp::{std_name, unqualify};
use crate::frontend::lower::sync::Initial;
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{Dealloc, Expr, Instr, ObjectKind, Reg, StmtId};
use tree_sitter::Node;

/// The message for `std::shared_ptr` and its relatives.
pub(super) const SHARED: &str =
    "is not supported: use `new`/`delete` or `std::unique_ptr` (plain ownership)";

/// What a `std::unique_ptr` owns: objects of `elem`, an array (`T[]`) or one.
#[derive(Clone, PartialEq)]
struct Owned {
    elem: Ty,
    array: bool,
}

/// The initial value of a `std::unique_ptr` being declared, and what it owns.
struct Init {
    value: Expr,
    owned: Option<Owned>,
}

impl FnLower<'_, '_> {
    /// The register and array-ness of the `std::unique_ptr` local `name` names, if it names one.
    pub(super) fn owner(&self, name: &str) -> Option<(Reg, bool)> {
        let Name::Local(r) = self.lookup(name) else {
            return None;
        };
        self.cpp.guards.iter().find_map(|g| match g.release {
            Release::Delete { reg, array } if reg == r => Some((reg, array)),
            _ => None,
        })
    }

    /// The `std::unique_ptr` local `n` is (an identifier), if it is one.
    pub(super) fn owner_node(&self, n: Node) -> Option<(Reg, bool)> {
        let n = strip_parens(n);
        (n.kind() == "identifier")
            .then(|| self.owner(self.src.text(n)))
            .flatten()
    }

    /// The destructor: `delete` (`delete[]`) of the owned pointer, then the register cleared.
    pub(super) fn unique_delete(&mut self, reg: Reg, array: bool) {
        let by = if array {
            Dealloc::DeleteArray
        } else {
            Dealloc::Delete
        };
        self.emit(Instr::Free {
            ptr: Expr::Reg(reg),
            by,
        });
        self.emit(Instr::Assign {
            dst: reg,
            val: Expr::Const(0),
        });
    }

    /// `std::unique_ptr<T> p ...;` (`ty` the type node) or `auto p = std::make_unique<T>(...)`
    /// / `auto p = std::move(q)` (`ty` `None`), in statement `s`.
    pub(super) fn unique_decl(&mut self, s: Node, ty: Option<Node>, sid: StmtId) -> R<()> {
        let src = self.src;
        if !super::cpp::directly_in_block(s) {
            return Err(src.unsupported(
                s,
                "std::unique_ptr that is not directly in a block (put it in braces)",
            ));
        }
        let declared = ty.map(|t| self.owned_type(t, true)).transpose()?;
        let mut c = s.walk();
        let decls: Vec<Node> = s.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            return Err(src.unsupported(s, "declaration that declares no variable"));
        }
        for d in decls {
            let (name_node, init) = self.unique_declarator(d)?;
            let name = src.text(name_node).to_string();
            self.check_redefinition(name_node, &name)?;
            if self.taken.last().is_some_and(|t| t.contains(&name)) {
                return Err(src.unsupported(
                    name_node,
                    &format!("address of std::unique_ptr `{name}` (use `{name}.get()`)"),
                ));
            }
            let init = self.unique_init(init, declared.as_ref())?;
            let Some(owned) = declared.clone().or(init.owned) else {
                return Err(src.internal("unique_ptr type"));
            };
            let r = self.new_reg(&name, IntTy::I64);
            self.set_pointee(r, owned.elem.clone());
            self.emit(Instr::Assign {
                dst: r,
                val: init.value,
            });
            self.bind(&name, Binding::Var(r));
            self.cpp.guards.push(Guard {
                depth: self.scopes.len(),
                inline: self.inlines.len(),
                stmt: sid,
                name,
                release: Release::Delete {
                    reg: r,
                    array: owned.array,
                },
            });
        }
        Ok(())
    }

    /// The name of declarator `d` and the node initialising it: its only constructor argument
    /// or `= value` (`None` for `p`, `p{}`).
    fn unique_declarator<'t>(&self, d: Node<'t>) -> R<(Node<'t>, Option<Node<'t>>)> {
        let src = self.src;
        let unsupported = || {
            let text = src.text(d);
            src.unsupported(
                d,
                &format!("declarator `{text}` of a std::unique_ptr (pointers to it and arrays of it are not supported)"),
            )
        };
        match d.kind() {
            "identifier" => Ok((d, None)),
            "init_declarator" => {
                let name = d
                    .child_by_field_name("declarator")
                    .filter(|n| n.kind() == "identifier")
                    .ok_or_else(unsupported)?;
                let Some(v) = d.child_by_field_name("value") else {
                    return Ok((name, None));
                };
                if !matches!(v.kind(), "argument_list" | "initializer_list") {
                    return Ok((name, Some(v)));
                }
                match named_children(v).as_slice() {
                    [] => Ok((name, None)),
                    [a] => Ok((name, Some(*a))),
                    [_, extra, ..] => {
                        Err(src.unsupported(*extra, "std::unique_ptr with a custom deleter"))
                    }
                }
            }
            // `p(q)`: the grammar's function declarator of a parameter type `q`.
            "function_declarator" => {
                let (name, args) = crate::frontend::cpp::ctor_args(&src, d).map_err(|e| {
                    let text = src.text(d);
                    let hint = format!(
                        "; C++ parses `{text}` as a function declaration: write it with braces"
                    );
                    crate::frontend::Diagnostic {
                        message: e.message + &hint,
                        ..e
                    }
                })?;
                match args.as_slice() {
                    [] => Ok((name, None)),
                    [crate::frontend::cpp::CtorArg::Name(a)] => Ok((name, Some(*a))),
                    _ => Err(unsupported()),
                }
            }
            _ => Err(unsupported()),
        }
    }

    /// The value a `std::unique_ptr` (owning `declared` if its type is written) starts with.
    fn unique_init(&mut self, v: Option<Node>, declared: Option<&Owned>) -> R<Init> {
        let src = self.src;
        let Some(v) = v.map(strip_parens) else {
            return match declared {
                Some(_) => Ok(Init {
                    value: Expr::Const(0),
                    owned: None,
                }),
                None => Err(src.internal("auto without initialiser")),
            };
        };
        let init = self.owning_value(v)?;
        match (declared, &init.owned) {
            (None, None) => Err(src.unsupported(
                v,
                "`auto` initialised by this (a std::unique_ptr is declared with \
                 `std::unique_ptr<T>` or `auto p = std::make_unique<T>(...)`)",
            )),
            (Some(d), Some(o)) if d != o => Err(src.error(
                v,
                &format!(
                    "`{}` does not own objects of the declared std::unique_ptr's type",
                    src.text(v)
                ),
            )),
            _ => Ok(init),
        }
    }

    /// A value a `std::unique_ptr` takes ownership of: `std::make_unique<...>(...)`,
    /// `std::move(q)` (clearing `q`), null, or a raw pointer (`new T`).
    fn owning_value(&mut self, v: Node) -> R<Init> {
        let src = self.src;
        if let Some((targs, args)) = make_unique_parts(&src, v) {
            let owned = self.owned_type(targs, false)?;
            let r = self.make_unique(v, &owned, &args)?;
            return Ok(Init {
                value: Expr::Reg(r),
                owned: Some(owned),
            });
        }
        if let Some(q) = moved_owner(&src, v) {
            let Some((reg, array)) = self.owner_node(q) else {
                let text = src.text(q);
                return Err(src.unsupported(
                    v,
                    &format!("`std::move` of `{text}` (only of a std::unique_ptr local)"),
                ));
            };
            let elem = self.reg_ptr.get(reg).cloned().flatten().unwrap_or(Ty::Void);
            let t = self.new_temp(IntTy::I64);
            self.emit(Instr::Assign {
                dst: t,
                val: Expr::Reg(reg),
            });
            self.emit(Instr::Assign {
                dst: reg,
                val: Expr::Const(0),
            });
            return Ok(Init {
                value: Expr::Reg(t),
                owned: Some(Owned { elem, array }),
            });
        }
        if self.owner_node(v).is_some() {
            let text = src.text(v);
            return Err(src.error(
                v,
                &format!("a std::unique_ptr cannot be copied (write `std::move({text})`)"),
            ));
        }
        let (value, _) = self.ptr_value(v)?;
        Ok(Init { value, owned: None })
    }

    /// The objects a `std::unique_ptr<T>` type (`decl`) or `std::make_unique<T>` (the
    /// template function or its arguments) owns.
    fn owned_type(&mut self, t: Node, decl: bool) -> R<Owned> {
        let src = self.src;
        let inner = unqualify(&src, t).unwrap_or(t);
        let args = inner
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let what = if decl {
            "std::unique_ptr"
        } else {
            "std::make_unique"
        };
        let a = match args.as_slice() {
            [a] if a.kind() == "type_descriptor" => *a,
            [_, extra, ..] if decl => {
                return Err(src.unsupported(*extra, "std::unique_ptr with a custom deleter"))
            }
            _ => {
                let text = src.text(t);
                return Err(src.unsupported(t, &format!("`{text}` (write `{what}<T>`)")));
            }
        };
        let unsized_array = a.child_by_field_name("declarator").filter(|d| {
            d.kind() == "abstract_array_declarator"
                && d.child_by_field_name("size").is_none()
                && d.child_by_field_name("declarator").is_none()
        });
        let (elem, array) = match unsized_array {
            Some(_) => {
                let spec = crate::frontend::types::decl_spec(&src, &self.cx.types, a)?;
                (spec.base(), true)
            }
            None => (self.type_name(a)?, false),
        };
        let text = src.text(a);
        match &elem {
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Struct(_) => Ok(Owned { elem, array }),
            Ty::Array(..) => Err(src.unsupported(
                a,
                &format!("{what} of the array type `{text}` (write `{what}<T[]>`)"),
            )),
            _ => Err(src.unsupported(
                a,
                &format!("{what} of `{text}` (integers, pointers and plain structs only)"),
            )),
        }
    }

    /// `std::make_unique<T>(args)` (one object, see the module doc) or
    /// `std::make_unique<T[]>(n)` (`n` zeroed elements): the register of the new object.
    fn make_unique(&mut self, call: Node, owned: &Owned, args: &[Node]) -> R<Reg> {
        let src = self.src;
        let func = "make_unique";
        if owned.array {
            let [len] = args else {
                return Err(src.error(call, "`std::make_unique<T[]>` takes one length"));
            };
            let count = self.array_count(*len, "std::make_unique<T[]>")?;
            let fill = Fill {
                kind: ObjectKind::NewArray,
                indeterminate: false,
                how: Initial::Zero,
            };
            return self.alloc_elements(call, func, &owned.elem, count, fill);
        }
        let fill = Fill {
            kind: ObjectKind::New,
            indeterminate: false,
            how: Initial::Zero,
        };
        let r = self.alloc_elements(call, func, &owned.elem, Count::Const(1, 0), fill)?;
        let place = self.local_place_of(r, owned.elem.clone());
        match (&owned.elem, args) {
            (_, []) => {}
            (Ty::Struct(id), [v]) if self.peek_place_type(*v) == Some(Ty::Struct(*id)) => {
                self.init_stores(&place, *v)?
            }
            (Ty::Struct(id), _) => {
                let fields = self.cx.types.fields_of(*id);
                if args.len() > fields.len() {
                    return Err(src.error(args[fields.len()], "too many initialisers"));
                }
                for ((fname, _), v) in fields.iter().zip(args) {
                    let Some((off, ty)) = self.cx.types.field(*id, fname) else {
                        return Err(src.internal("struct member"));
                    };
                    let p = super::Place {
                        addr: super::memory::offset(&place.addr, off),
                        ty,
                    };
                    self.init_stores(&p, *v)?;
                }
            }
            (_, [v]) => self.init_stores(&place, *v)?,
            (_, [_, extra, ..]) => {
                return Err(src.error(*extra, "too many initialisers for a scalar"))
            }
        }
        Ok(r)
    }

    /// `p.get()`, `p.release()`, `p.reset()`, `p.reset(ptr)` on the `std::unique_ptr` in
    /// register `reg` (`used`: the call's value is used).
    pub(super) fn unique_member(
        &mut self,
        call: Node,
        (reg, array): (Reg, bool),
        method: &str,
        args: &[Node],
        used: bool,
    ) -> R<TExpr> {
        let src = self.src;
        let elem = self.reg_ptr.get(reg).cloned().flatten().unwrap_or(Ty::Void);
        match (method, args) {
            ("get", []) => Ok((Expr::Reg(reg), IntTy::I64)),
            ("release", []) => {
                let t = self.new_temp(IntTy::I64);
                self.set_pointee(t, elem);
                self.emit(Instr::Assign {
                    dst: t,
                    val: Expr::Reg(reg),
                });
                self.emit(Instr::Assign {
                    dst: reg,
                    val: Expr::Const(0),
                });
                Ok((Expr::Reg(t), IntTy::I64))
            }
            ("reset", _) if used => Err(src.error(call, "`reset` has no value")),
            ("reset", []) => {
                self.unique_delete(reg, array);
                Ok((Expr::Const(0), IntTy::I32))
            }
            ("reset", [v]) => {
                self.expect_pointee(*v, &elem);
                let (value, _) = self.ptr_value(*v)?;
                self.unique_replace(reg, array, value);
                Ok((Expr::Const(0), IntTy::I32))
            }
            _ => Err(src.unsupported(
                call,
                &format!(
                    "`{method}` on a std::unique_ptr (supported: `get()`, `release()`, \
                     `reset()`, `reset(p)`)"
                ),
            )),
        }
    }

    /// `p = nullptr`, `p = std::make_unique<T>(...)`, `p = std::move(q)` (statement `e`) on
    /// the `std::unique_ptr` `owner`: the old object deleted after the new value is stored.
    pub(super) fn unique_assign(&mut self, e: Node, owner: (Reg, bool), right: Node) -> R<()> {
        let src = self.src;
        let right = strip_parens(right);
        let null = matches!(right.kind(), "null" | "nullptr")
            || (right.kind() == "number_literal" && src.text(right) == "0");
        if null {
            self.unique_delete(owner.0, owner.1);
            return Ok(());
        }
        if make_unique_parts(&src, right).is_none() && moved_owner(&src, right).is_none() {
            return Err(src.unsupported(
                e,
                "assignment to a std::unique_ptr (supported: `p = nullptr`, \
                 `p = std::make_unique<T>(...)`, `p = std::move(q)`)",
            ));
        }
        let init = self.owning_value(right)?;
        let elem = self.reg_ptr.get(owner.0).cloned().flatten();
        match init.owned {
            Some(o) if Some(&o.elem) == elem.as_ref() && o.array == owner.1 => {
                self.unique_replace(owner.0, owner.1, init.value);
                Ok(())
            }
            _ => Err(src.error(
                right,
                "the value does not own objects of the std::unique_ptr's type",
            )),
        }
    }

    /// The `std::unique_ptr` in `reg` takes `value`; the object it owned is deleted.
    fn unique_replace(&mut self, reg: Reg, array: bool, value: Expr) {
        let old = self.new_temp(IntTy::I64);
        self.emit(Instr::Assign {
            dst: old,
            val: Expr::Reg(reg),
        });
        self.emit(Instr::Assign {
            dst: reg,
            val: value,
        });
        self.unique_delete(old, array);
    }
}

/// The template argument list node and the call arguments of `std::make_unique<...>(...)`
/// (also without `std::`).
pub(super) fn make_unique_parts<'t>(
    src: &crate::frontend::Src,
    n: Node<'t>,
) -> Option<(Node<'t>, Vec<Node<'t>>)> {
    let n = strip_parens(n);
    if n.kind() != "call_expression" {
        return None;
    }
    let f = n.child_by_field_name("function")?;
    let tf = match f.kind() {
        "qualified_identifier" => unqualify(src, f)?,
        _ => f,
    };
    let name = tf.child_by_field_name("name")?;
    if tf.kind() != "template_function" || src.text(name) != "make_unique" {
        return None;
    }
    let args = n
        .child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default();
    Some((tf, args))
}

/// The argument of `std::move(q)`, if `n` is such a call.
pub(super) fn moved_owner<'t>(src: &crate::frontend::Src, n: Node<'t>) -> Option<Node<'t>> {
    let n = strip_parens(n);
    let f = n.child_by_field_name("function")?;
    if n.kind() != "call_expression" || std_name(src, f) != Some("move") {
        return None;
    }
    match n
        .child_by_field_name("arguments")
        .map(named_children)?
        .as_slice()
    {
        [q] => Some(*q),
        _ => None,
    }
}
