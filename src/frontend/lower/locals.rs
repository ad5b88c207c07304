//! Local objects in memory: the local variables of a function that cannot live in a register.
//!
//! A local array, struct, atomic, mutex or pthread_t in memory, or a scalar whose address the
//! function takes (`&x` anywhere in its body, except as the value pointers of the calls that
//! read or write a local directly: the `expected` of a compare-exchange, the result of a join,
//! the handle of a thread creation), is an **object allocated when its declaration runs**
//! ([`Instr::Alloc`]): every run of the declaration (each iteration of a loop around it, each
//! thread running the function, each inlined call) makes a new object, whose cells start with
//! a write of their initial value by the declaring thread. Its address is in a register; its
//! places are [`Addr::Within`] the object, so an index out of its bounds is undefined
//! behaviour. The initialiser: a constant one is the cells' initial value; any other is
//! written after the allocation (an atomic cell's initialisation is a relaxed store, like
//! `atomic_init`; a plain one is a plain store), element by element for `{ ... }` lists
//! (missing elements are zero). An object lives on after its function returns (accessing it
//! then is not reported: lifetimes are not modelled yet).

use super::memory::Place;
use super::sync::Initial;
use super::{named_children, strip_parens, Binding, FnLower, R};
use crate::frontend::types::{IntTy, Ty};
use crate::frontend::Src;
use crate::ir::{Expr, Global, Instr, Layout, MemOrder};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Calls whose `&local` arguments (all but the first) read or write the local directly.
fn reads_or_writes_locals(callee: &str) -> bool {
    callee.starts_with("atomic_compare_exchange")
        || callee.starts_with("__atomic_")
        || matches!(callee, "pthread_join" | "thrd_join")
}

/// Calls whose first `&handle` argument only receives a thread id.
fn creates_threads(callee: &str) -> bool {
    matches!(callee, "pthread_create" | "thrd_create")
}

/// The names whose address the function definition `def` takes (`&x`), except as arguments
/// of the calls above. The lowering asks `Ctx::taken_names`, which has those of the top-level
/// definitions from the walk before lowering (`facts.rs`) and caches the others.
pub(crate) fn taken_names(src: &Src, def: Node) -> HashSet<String> {
    let mut scan = TakenScan::default();
    crate::frontend::walk_nodes(def, &mut |n| scan.visit(src, n, n.kind()));
    scan.out
}

/// [`taken_names`] node by node, in preorder.
#[derive(Default)]
pub(crate) struct TakenScan {
    pub(crate) out: HashSet<String>,
    /// The `&x` arguments of calls that do not need `x` in memory, found at their call (a
    /// preorder walk meets the call first), so that no `&x` has to look for its parents.
    exempt: HashSet<usize>,
}

impl TakenScan {
    /// Visits `n`, whose kind is `kind`.
    pub(crate) fn visit(&mut self, src: &Src, n: Node, kind: &str) {
        match kind {
            "lambda_expression" => {
                self.out.extend(captured_by_reference(src, n));
                return;
            }
            "call_expression" => {
                self.exempt.extend(exempt_arguments(src, n));
                return;
            }
            _ => {}
        }
        let is_addr = kind == "pointer_expression"
            && n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&");
        if !is_addr || self.exempt.contains(&n.id()) {
            return;
        }
        let Some(id) = n.child_by_field_name("argument").map(strip_parens) else {
            return;
        };
        if id.kind() == "identifier" {
            self.out.insert(src.text(id).to_string());
        }
    }
}

/// The names a C++ lambda captures by reference (they must be in memory: the lambda's thread
/// reaches them through their address, see `closure.rs`): `&x` in its captures, and with a
/// `&` default capture every name its body uses that it does not declare.
fn captured_by_reference(src: &Src, lambda: Node) -> HashSet<String> {
    use super::closure::{capture_list, DefaultCapture};
    // A list the lowering refuses (`this`, init captures) needs nothing in memory.
    let (default, names) = capture_list(src, lambda).unwrap_or((DefaultCapture::None, Vec::new()));
    let mut out: HashSet<String> = names
        .iter()
        .filter(|(_, by_ref)| *by_ref)
        .map(|(n, _)| src.text(*n).to_string())
        .collect();
    let default_ref = default == DefaultCapture::Ref;
    let Some(body) = lambda.child_by_field_name("body").filter(|_| default_ref) else {
        return out;
    };
    let mut used = HashSet::new();
    let mut declared = HashSet::new();
    crate::frontend::walk_nodes(body, &mut |n| {
        // `g(m)` of a lock guard parses as a declarator with a parameter type `m`.
        if !matches!(n.kind(), "identifier" | "type_identifier") {
            return;
        }
        let name = src.text(n).to_string();
        let declarator = n.parent().is_some_and(|p| {
            matches!(
                p.kind(),
                "init_declarator" | "declaration" | "array_declarator"
            ) && p
                .child_by_field_name("declarator")
                .is_some_and(|d| d.id() == n.id())
        });
        if declarator {
            declared.insert(name);
        } else {
            used.insert(name);
        }
    });
    out.extend(used.difference(&declared).cloned());
    out
}

/// The `&x` arguments (node ids, parentheses stripped) of `call` that do not need `x` in
/// memory: the handle of a thread creation, the arguments of the calls that only read or
/// write through them.
fn exempt_arguments(src: &Src, call: Node) -> Vec<usize> {
    let Some(callee) = call.child_by_field_name("function").map(|f| src.text(f)) else {
        return Vec::new();
    };
    let Some(list) = call
        .child_by_field_name("arguments")
        .filter(|l| l.kind() == "argument_list")
    else {
        return Vec::new();
    };
    named_children(list)
        .into_iter()
        .enumerate()
        .filter(|&(k, _)| {
            if k == 0 {
                creates_threads(callee)
            } else {
                reads_or_writes_locals(callee)
            }
        })
        .map(|(_, a)| {
            let mut a = a;
            loop {
                let inner = match a.kind() {
                    "parenthesized_expression" => named_children(a).first().copied(),
                    // `(uintptr_t *)&expected` (see `atomics.rs`'s `punned_expected`).
                    "cast_expression" => a.child_by_field_name("value"),
                    _ => None,
                };
                match inner {
                    Some(inner) => a = inner,
                    None => break,
                }
            }
            a.id()
        })
        .collect()
}

impl FnLower<'_, '_> {
    /// Gives the function being lowered (a thread's or main's) its own copy of every
    /// thread-local variable declared before it: a register when the program never takes the
    /// address of a variable of that name (initialised here, at the thread's start), else an
    /// object allocated here when the thread's code names it.
    pub(super) fn bind_thread_locals(&mut self, def: Node) -> R<()> {
        let vars: Vec<_> = self
            .cx
            .thread_locals
            .iter()
            .filter(|v| v.start < def.start_byte())
            .cloned()
            .collect();
        if vars.is_empty() {
            return Ok(());
        }
        let defs: Vec<Node> = self.cx.fn_defs.values().copied().collect();
        let mut taken: HashSet<String> = HashSet::new();
        for d in defs {
            taken.extend(self.cx.taken_names(d).iter().cloned());
        }
        let used = self.names_reachable(def);
        for v in vars {
            let binding = match &v.ty {
                Ty::Int { ty, atomic: false } if !taken.contains(&v.name) => {
                    let r = self.new_reg(&v.name, *ty);
                    let val = Expr::Const(ty.wrap(v.values[0]));
                    self.emit(Instr::Assign { dst: r, val });
                    Binding::Var(r)
                }
                Ty::Ptr { to, atomic: false } if !taken.contains(&v.name) => {
                    let r = self.new_reg(&v.name, IntTy::I64);
                    self.set_pointee(r, (**to).clone());
                    let val = Expr::Const(v.values[0]);
                    self.emit(Instr::Assign { dst: r, val });
                    Binding::Var(r)
                }
                _ if !used.contains(&v.name) => continue,
                ty => {
                    let mut cells = Vec::new();
                    self.cx
                        .flatten(&v.name, ty, def, Initial::Zero, &mut cells)?;
                    self.allocate((&v.name, ty), cells, &v.values, false, v.span)
                }
            };
            self.thread_locals.push((v.name.clone(), binding));
        }
        Ok(())
    }

    /// The identifiers used in definition `def` and in the functions it calls, transitively.
    fn names_reachable(&self, def: Node) -> HashSet<String> {
        let mut names = HashSet::new();
        let mut seen = HashSet::from([def.id()]);
        let mut work = vec![def];
        while let Some(d) = work.pop() {
            names.extend(self.cx.identifiers_in(d).into_iter().map(str::to_string));
            for name in names.iter() {
                if let Some(&callee) = self.cx.fn_defs.get(name) {
                    if seen.insert(callee.id()) {
                        work.push(callee);
                    }
                }
            }
        }
        names
    }

    /// Allocates an object named `name` of type `ty`, whose `cells` (named, typed) start with
    /// `values` (`indeterminate`: see [`Layout::indeterminate`]): its binding.
    pub(super) fn allocate(
        &mut self,
        (name, ty): (&str, &Ty),
        cells: Vec<crate::frontend::CellSpec>,
        values: &[i64],
        indeterminate: bool,
        span: crate::ir::Span,
    ) -> Binding {
        let object = cells.first().map_or(name, |c| {
            let end = c.name.find(['.', '[']).unwrap_or(c.name.len());
            &c.name[..end]
        });
        let layout = Layout {
            name: object.to_string(),
            kind: crate::ir::ObjectKind::Local,
            cells: cells
                .into_iter()
                .zip(values.iter().copied().chain(std::iter::repeat(0)))
                .map(|(cell, value)| Global {
                    name: cell.name,
                    atomic: cell.ty.is_atomic(),
                    init: cell.ty.int_ty().wrap(value),
                    sync: cell.sync,
                    span,
                })
                .collect(),
            indeterminate,
        };
        self.cx.layouts.push(layout);
        let r = self.new_reg(name, IntTy::I64);
        self.emit(Instr::Alloc {
            dst: r,
            layout: self.cx.layouts.len() - 1,
            count: None,
        });
        self.local_tys.push(ty.clone());
        Binding::LocalObject(r, self.local_tys.len() - 1)
    }

    /// Whether a local variable `name` of type `ty` (declared `atomic` by its specifiers)
    /// must live in memory (see the module doc).
    pub(super) fn local_in_memory(&self, name: &str, ty: &Ty) -> bool {
        match ty {
            Ty::Array(elem, _) => **elem != Ty::Thread,
            Ty::Struct(_) | Ty::Mutex | Ty::Sync(_) => true,
            Ty::Int { atomic, .. } | Ty::Ptr { atomic, .. } if *atomic => true,
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => {
                self.taken.last().is_some_and(|t| t.contains(name))
            }
            Ty::Void => false,
        }
    }

    /// Declares the local object `name` (declarator name node `at`) of type `ty` with
    /// initialiser `init`: allocates it and initialises it.
    pub(super) fn local_object(
        &mut self,
        at: Node,
        name: &str,
        ty: &Ty,
        init: Option<Node>,
    ) -> R<Binding> {
        let src = self.src;
        let func = self
            .inlines
            .last()
            .map(|f| f.name().to_string())
            .unwrap_or_else(|| self.root_name.clone());
        // A C object starts indeterminate (a synchronisation object must be initialised by
        // its init function or a static initialiser); a C++ one was constructed.
        let how = if src.lang == crate::ir::Lang::Cpp {
            Initial::Constructed
        } else {
            Initial::Indeterminate
        };
        let mut cells = Vec::new();
        self.cx
            .flatten(&format!("{func}::{name}"), ty, at, how, &mut cells)?;
        if cells.is_empty() {
            return Err(src.unsupported(at, &format!("`{name}` has no memory cells")));
        }
        let defaults: Vec<i64> = cells.iter().map(|c| c.init).collect();
        let mut values = defaults.clone();
        let constant = match init {
            None => true,
            Some(v) if !self.may_access(v) => self.cx.init_values(ty, v, &mut values, 0).is_ok(),
            Some(_) => false,
        };
        if !constant {
            values = defaults;
        }
        // A C scalar without initialiser is indeterminate (C11 6.7.9p10). Arrays and structs are
        // left out (copying a struct with indeterminate members is no error, and the copy's
        // reads look like any other), and so is C++ (`std::atomic` is zero since C++20).
        let indeterminate = init.is_none()
            && ty.is_scalar()
            && !matches!(ty, Ty::Mutex)
            && src.lang == crate::ir::Lang::C;
        let binding = self.allocate((name, ty), cells, &values, indeterminate, src.span(at));
        if let Binding::LocalObject(r, _) = binding {
            match self.inlines.last_mut() {
                Some(frame) => frame.objects.push(r),
                None => self.root_objects.push(r),
            }
        }
        if let (Some(v), false, Binding::LocalObject(r, i)) = (init, constant, binding) {
            let place = self.local_place(r, i);
            self.init_stores(&place, v)?;
        }
        Ok(binding)
    }

    /// Ends the lifetime of the local objects whose pointers are in `objects` (a returning
    /// function's): an [`Instr::Free`] of each, and the register cleared, so that an object not
    /// allocated on the path taken (its register still 0), or already ended, is not ended
    /// again.
    pub(super) fn end_lifetimes(&mut self, objects: Vec<crate::ir::Reg>) {
        for r in objects {
            self.emit(Instr::Free {
                ptr: Expr::Reg(r),
                by: crate::ir::Dealloc::ScopeEnd,
            });
            self.emit(Instr::Assign {
                dst: r,
                val: Expr::Const(0),
            });
        }
    }

    /// A thread function's return: the end of its local objects' lifetimes, then
    /// [`Instr::Return`]. (`main`'s objects live until the program ends.)
    pub(super) fn emit_return(&mut self) {
        if self.root_thread {
            self.end_lifetimes(self.root_objects.clone());
        }
        self.emit(Instr::Return);
    }

    /// Writes the initialiser `v` into `place`, allocated with zeros: a scalar's value, a
    /// struct copied from another, or a `{ ... }` list (with designators, by C's rules as for
    /// globals, `frontend/initializers.rs`): every scalar it names is evaluated and stored, in
    /// the order of the cells.
    pub(super) fn init_stores(&mut self, place: &Place, v: Node) -> R<()> {
        let src = self.src;
        match &place.ty {
            Ty::Array(..) | Ty::Struct(_) if v.kind() == "initializer_list" => {
                let mut plan = vec![0i64; self.cx.types.size(&place.ty)];
                self.cx.init_leaves = Some(Vec::new());
                let planned = self.cx.init_values(&place.ty, v, &mut plan, 0);
                let leaves = self.cx.init_leaves.take().unwrap_or_default();
                planned?;
                let mut nodes = HashMap::new();
                crate::frontend::walk_nodes(v, &mut |n| {
                    nodes.insert(n.id(), n);
                });
                let mut cells = Vec::new();
                self.cx
                    .flatten("", &place.ty, v, Initial::Zero, &mut cells)?;
                for (k, (leaf, cell)) in plan.into_iter().zip(cells).enumerate() {
                    let item = usize::try_from(leaf - 1)
                        .ok()
                        .and_then(|i| leaves.get(i))
                        .and_then(|id| nodes.get(id));
                    let Some(&item) = item else {
                        continue;
                    };
                    let p = Place {
                        addr: super::memory::offset(&place.addr, k),
                        ty: cell.ty,
                    };
                    self.init_stores(&p, item)?;
                }
                Ok(())
            }
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => {
                if let Ty::Ptr { to, .. } = &place.ty {
                    self.expect_pointee(v, to);
                }
                let val = self.any_value(v)?;
                let val = self.convert(val, place.ty.int_ty());
                let order = if place.ty.is_atomic() {
                    MemOrder::Relaxed
                } else {
                    MemOrder::NonAtomic
                };
                self.emit(Instr::Store {
                    loc: place.addr.clone(),
                    val,
                    order,
                });
                Ok(())
            }
            Ty::Struct(_) => {
                if let Some(class) = self.copies_by_ctor(&place.ty) {
                    return Err(src.unsupported(
                        v,
                        &format!(
                            "copy of an object of class `{class}`, which has a copy constructor \
                             (copy constructors are not called: copying objects is not supported)"
                        ),
                    ));
                }
                self.struct_copy(v, place, v)
            }
            _ => Err(src.unsupported(
                v,
                "initialiser of this local object (only constants, or `{ ... }` lists of \
                 values for arrays and structs)",
            )),
        }
    }

    /// The class whose own `operator=` a copy of a `ty` would call: `ty`'s, or that of a
    /// member or array element's class (memberwise copy calls theirs).
    fn assigns_by_operator(&self, ty: &Ty) -> Option<String> {
        self.class_in(ty, &|c| c.defines_operator("operator="))
    }

    /// The class whose copy constructor initialising a `ty` from another would call: `ty`'s,
    /// or that of a member or array element's class.
    fn copies_by_ctor(&self, ty: &Ty) -> Option<String> {
        self.class_in(ty, &|c| c.copy_ctor)
    }

    /// The name of the first class satisfying `has` among `ty`'s and its members' and
    /// elements' classes.
    fn class_in(
        &self,
        ty: &Ty,
        has: &dyn Fn(&crate::frontend::classes::ClassDef) -> bool,
    ) -> Option<String> {
        match ty {
            Ty::Array(t, _) => self.class_in(t, has),
            Ty::Struct(id) => match self.cx.class_of(*id).filter(|c| has(c)) {
                Some(c) => Some(c.name.clone()),
                None => self
                    .cx
                    .types
                    .fields_of(*id)
                    .iter()
                    .find_map(|(_, t)| self.class_in(t, has)),
            },
            _ => None,
        }
    }

    /// `dst = rhs` for a struct: a plain load of every cell of `rhs` (an object in memory, a
    /// compound literal included), then a plain store of each into `dst`, as C copies a struct
    /// member by member. Structs with atomic or synchronisation members are refused (copying
    /// one is not an atomic operation, and C gives it no order).
    pub(super) fn struct_copy(&mut self, at: Node, dst: &Place, rhs: Node) -> R<()> {
        let src = self.src;
        if let Some(class) = self.assigns_by_operator(&dst.ty) {
            return Err(src.unsupported(
                at,
                &format!(
                    "assignment of an object of class `{class}`, which defines `operator=` \
                     (calls of overloaded operators are not supported)"
                ),
            ));
        }
        let Some(from) = self.place_of(rhs)? else {
            let text = src.text(rhs);
            return Err(src.unsupported(rhs, &format!("struct value `{text}` (not an object)")));
        };
        if from.ty != dst.ty {
            return Err(src.error(at, "assignment between different struct types"));
        }
        let mut cells = Vec::new();
        self.cx
            .flatten("", &dst.ty, at, Initial::Zero, &mut cells)?;
        let plain = |t: &Ty| {
            matches!(
                t,
                Ty::Int { atomic: false, .. } | Ty::Ptr { atomic: false, .. }
            )
        };
        if cells.iter().any(|c| c.sync.is_some() || !plain(&c.ty)) {
            return Err(src.unsupported(
                at,
                "copy of a struct with atomic or synchronisation members",
            ));
        }
        let values: Vec<Expr> = (cells.iter().enumerate())
            .map(|(k, c)| {
                let cell = Place {
                    addr: super::memory::offset(&from.addr, k),
                    ty: c.ty.clone(),
                };
                self.load_place(&cell, MemOrder::NonAtomic)
            })
            .collect();
        for (k, val) in values.into_iter().enumerate() {
            self.emit(Instr::Store {
                loc: super::memory::offset(&dst.addr, k),
                val,
                order: MemOrder::NonAtomic,
            });
        }
        Ok(())
    }

    /// The compound literal `(T){ ... }` (node `n`): an unnamed object of type `T` allocated
    /// where the literal is evaluated, like a local object, and initialised by its list. An
    /// array type without a size takes the list's length.
    pub(super) fn compound_literal(&mut self, n: Node) -> R<Place> {
        let src = self.src;
        let (Some(tn), Some(value)) = (
            n.child_by_field_name("type"),
            n.child_by_field_name("value"),
        ) else {
            return Err(src.unsupported(n, "compound literal"));
        };
        let spec = crate::frontend::types::decl_spec(&src, &self.cx.types, tn)?;
        let base = Ty::of_base(spec.ty, spec.atomic);
        let ty = match tn.child_by_field_name("declarator") {
            None => base,
            Some(d) if d.kind() == "abstract_array_declarator" && d.named_child_count() <= 1 => {
                let len = match d.child_by_field_name("size") {
                    Some(size) => self.const_here(size)?,
                    None => crate::frontend::initializers::list_length(&src, value, &mut |x| {
                        self.const_here(x)
                    })?,
                };
                if !(1..=65536).contains(&len) {
                    return Err(src.error(d, &format!("array size {len} is not in 1..=65536")));
                }
                Ty::Array(Box::new(base), len as usize)
            }
            Some(d) => {
                let text = src.text(d);
                return Err(src.unsupported(d, &format!("compound literal of type `{text}`")));
            }
        };
        let pos = n.start_position();
        let name = format!("(literal@{}:{})", pos.row + 1, pos.column + 1);
        match self.local_object(n, &name, &ty, Some(value))? {
            Binding::LocalObject(r, i) => Ok(self.local_place(r, i)),
            _ => Err(src.internal("compound literal not in memory")),
        }
    }
}
