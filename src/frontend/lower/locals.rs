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
use std::collections::HashSet;
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
/// of the calls above.
pub(crate) fn taken_names(src: &Src, def: Node) -> HashSet<String> {
    let mut out = HashSet::new();
    crate::frontend::walk_nodes(def, &mut |n| {
        let is_addr = n.kind() == "pointer_expression"
            && n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&");
        if !is_addr {
            return;
        }
        let Some(id) = n.child_by_field_name("argument").map(strip_parens) else {
            return;
        };
        if id.kind() != "identifier" || exempt_argument(src, n) {
            return;
        }
        out.insert(src.text(id).to_string());
    });
    out
}

/// Whether `&x` (the node `addr`) is an argument of a call that does not need `x` in memory.
fn exempt_argument(src: &Src, addr: Node) -> bool {
    let mut arg = addr;
    while let Some(p) = arg
        .parent()
        .filter(|p| p.kind() == "parenthesized_expression")
    {
        arg = p;
    }
    let Some(list) = arg.parent().filter(|p| p.kind() == "argument_list") else {
        return false;
    };
    let Some(callee) = list
        .parent()
        .and_then(|c| c.child_by_field_name("function"))
        .map(|f| src.text(f))
    else {
        return false;
    };
    let position = named_children(list).iter().position(|a| a.id() == arg.id());
    match position {
        Some(0) => creates_threads(callee),
        Some(_) => reads_or_writes_locals(callee),
        None => false,
    }
}

impl FnLower<'_, '_> {
    /// Gives the function being lowered (a thread's or main's) its own copy of every
    /// thread-local variable declared before it: a register when the program never takes the
    /// address of a variable of that name (initialised here, at the thread's start), else an
    /// object allocated here when the thread's code names it.
    pub(super) fn bind_thread_locals(&mut self, def: Node) -> R<()> {
        let src = self.src;
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
        let taken: HashSet<String> = defs.iter().flat_map(|d| taken_names(&src, *d)).collect();
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
                    self.allocate(&v.name, ty, cells, &v.values, v.span)
                }
            };
            self.thread_locals.push((v.name.clone(), binding));
        }
        Ok(())
    }

    /// The identifiers used in definition `def` and in the functions it calls, transitively.
    fn names_reachable(&self, def: Node) -> HashSet<String> {
        let src = self.src;
        let mut names = HashSet::new();
        let mut seen = HashSet::from([def.id()]);
        let mut work = vec![def];
        while let Some(d) = work.pop() {
            crate::frontend::walk_nodes(d, &mut |n| {
                if n.kind() == "identifier" {
                    names.insert(src.text(n).to_string());
                }
            });
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
    /// `values`: its binding.
    fn allocate(
        &mut self,
        name: &str,
        ty: &Ty,
        cells: Vec<crate::frontend::CellSpec>,
        values: &[i64],
        span: crate::ir::Span,
    ) -> Binding {
        let layout = Layout {
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
        };
        self.cx.layouts.push(layout);
        let r = self.new_reg(name, IntTy::I64);
        self.emit(Instr::Alloc {
            dst: r,
            layout: self.cx.layouts.len() - 1,
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
        let binding = self.allocate(name, ty, cells, &values, src.span(at));
        if let (Some(v), false, Binding::LocalObject(r, i)) = (init, constant, binding) {
            let place = self.local_place(r, i);
            self.init_stores(&place, v)?;
        }
        Ok(binding)
    }

    /// Writes the initialiser `v` into `place`: a scalar's value, or a `{ ... }` list element
    /// by element (positionally; missing elements keep the zero the object was allocated
    /// with).
    fn init_stores(&mut self, place: &Place, v: Node) -> R<()> {
        let src = self.src;
        match &place.ty {
            Ty::Array(elem, len) if v.kind() == "initializer_list" => {
                let items = named_children(v);
                if items.len() > *len {
                    return Err(src.error(v, "too many initialisers for the array"));
                }
                let size = self.cx.types.size(elem);
                for (i, item) in items.into_iter().enumerate() {
                    self.no_designator(item)?;
                    let k = Expr::Const(i as i64);
                    let p = self.element(item, &place.addr, elem, *len, size, k)?;
                    self.init_stores(&p, item)?;
                }
                Ok(())
            }
            Ty::Struct(id) if v.kind() == "initializer_list" => {
                let fields = self.cx.types.fields_of(*id);
                let items = named_children(v);
                if items.len() > fields.len() {
                    return Err(src.error(v, "too many initialisers for the struct"));
                }
                let mut off = 0;
                for (item, (_, t)) in items.into_iter().zip(fields) {
                    self.no_designator(item)?;
                    let p = Place {
                        addr: super::memory::offset(&place.addr, off),
                        ty: t.clone(),
                    };
                    off += self.cx.types.size(&t);
                    self.init_stores(&p, item)?;
                }
                Ok(())
            }
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => {
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
            _ => Err(src.unsupported(
                v,
                "initialiser of this local object (only constants, or `{ ... }` lists of \
                 values for arrays and structs)",
            )),
        }
    }

    fn no_designator(&self, item: Node) -> R<()> {
        if item.kind() == "initializer_pair" {
            return Err(self.src.unsupported(
                item,
                "designated initialiser of a local object with non-constant values",
            ));
        }
        Ok(())
    }
}
