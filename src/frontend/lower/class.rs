//! C++ classes in function bodies (the definitions are recorded by `frontend/classes.rs`): a
//! class is its struct plus functions taking `this`.
//!
//! * **Member calls** `obj.f(a)`, `p->f(a)`, `this->f(a)` and, inside a member function,
//!   `f(a)` are inlined like calls of the file's functions (`inline.rs`), with `this` the
//!   object's address (`&obj`, `p`). The member function is chosen by name and number of
//!   arguments; it must be defined before the top-level function being lowered. Inside it,
//!   `this` is a pointer register, and every data member `m` is bound, below the parameters
//!   (which hide members, as in C++) and above the globals (which members hide), to the place
//!   `this + offset(m)`: `m`, `m[i]`, `m.load()`, `&m` are accesses to the object's cells.
//!   Static constants are registers holding their value (`C::N` is the constant anywhere).
//! * **Static member functions** have no `this`: `f(a)` in a member function of the class or
//!   of a class nested in it, `C::f(a)` (the scope resolved by [`FnLower::scope_class`]:
//!   a class name, a template's injected name, `q<int>`), or `obj.f(a)` / `p->f(a)`, whose
//!   object is still evaluated. Their body sees the static members of the class and of the
//!   enclosing classes ([`FnLower::static_bindings`]: constants as registers, other static
//!   data members as their global cells); a non-static member function called
//!   from one, or as `C::f(a)` outside a member of `C`, is an error (no object).
//! * **Construction** ([`FnLower::construct`]): every member in declaration order is
//!   initialised from the constructor's member initialiser list (`m(v)`, `m{v}`, `m()`), else
//!   from its default member initialiser, else (a member of a class type that constructs)
//!   by its default constructor, else left as allocated; then the constructor's body runs.
//!   A scalar member's initialisation is a store (relaxed for an atomic, like `atomic_init`).
//!   The constructor is chosen by the number of arguments. Objects are constructed where
//!   they are created: a local `C c(a);` / `C c{a};` / `C c;` after its allocation, `new C(a)`
//!   after the allocation, a global `C g(a);` at the start of the main thread (C++'s dynamic
//!   initialisation before `main`), in declaration order.
//!   A static data member's initialiser that is not a constant runs at the start of the main
//!   thread too, in the class's scope (`construct_globals`).
//! * **Destruction**: `delete p` runs the destructor (inlined, `this` = `p`) before the free.
//!   A local or global object of a class whose destructor does something is refused (the
//!   destructor would have to run at every exit of its scope); an empty destructor is fine.
//!
//! Refused: arrays of objects of classes that construct, copying objects, `C c = ...`,
//! constructor arguments parsed as declarations (`C c(n);` with a name `n`: write `C c{n};`),
//! pointers to members.

use super::{named_children, strip_parens, Binding, FnLower, Name, TExpr, R};
use crate::frontend::classes::ClassDef;
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{BinOp, Expr, Instr, MemOrder};
use tree_sitter::Node;

/// The member function a call resolves to.
pub(super) struct Method<'t> {
    /// `C::f`, for messages and recursion detection.
    pub(super) name: String,
    pub(super) def: Node<'t>,
    pub(super) class: usize,
    /// A constructor or destructor (no return type; a constructor's initialisers run first).
    pub(super) special: Special,
    /// A `static` member function: called without an object.
    pub(super) is_static: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    None,
    Ctor,
    Dtor,
}

impl<'a> FnLower<'_, 'a> {
    /// The class of struct `id`, cloned (its nodes outlive the lowering).
    fn class(&self, id: usize) -> Option<ClassDef<'a>> {
        self.cx.class_of(id).cloned()
    }

    /// The register holding `this` and its class, inside an inlined member function.
    pub(super) fn this_ctx(&self) -> Option<(usize, usize)> {
        self.inlines.last().and_then(|f| f.this)
    }

    /// The class of the member function (static or not) being inlined.
    fn class_ctx(&self) -> Option<usize> {
        self.inlines.last().and_then(|f| f.class)
    }

    /// Class `id` and the classes it is nested in, innermost first (`a::b` is nested in `a`).
    fn class_chain(&self, id: usize) -> Vec<usize> {
        let mut out = vec![id];
        let mut name = self
            .cx
            .class_of(id)
            .map(|c| c.name.clone())
            .unwrap_or_default();
        // `a<int>::b` is nested in `a<int>` (a `::` inside template arguments does not split).
        while let Some((outer, _)) = crate::frontend::classes::split_qualified(&name) {
            match self.cx.class_named(outer) {
                Some(c) => out.push(c.id),
                None => break,
            }
            name = outer.to_string();
        }
        out
    }

    /// `this`: the pointer register of the member function being inlined.
    pub(super) fn this_value(&mut self, n: Node) -> R<TExpr> {
        match self.this_ctx() {
            Some((r, _)) => Ok((Expr::Reg(r), IntTy::I64)),
            None => Err(self.src.error(n, "`this` outside a member function")),
        }
    }

    /// `C::N` for a static constant `N` of class `C`.
    pub(super) fn class_constant(&self, n: Node) -> Option<i64> {
        let src = self.src;
        let scope = n.child_by_field_name("scope")?;
        let name = n.child_by_field_name("name")?;
        let class = self.class(self.scope_class(scope)?)?;
        class.constant(src.text(name))
    }

    /// Whether `n` (`C::x`) names a static data member that is not a constant.
    pub(super) fn names_static_var(&self, n: Node) -> bool {
        let src = self.src;
        let (Some(scope), Some(name)) = (
            n.child_by_field_name("scope"),
            n.child_by_field_name("name"),
        ) else {
            return false;
        };
        let name = src.text(name);
        self.scope_class(scope)
            .and_then(|id| self.class(id))
            .is_some_and(|c| c.static_vars.iter().any(|v| v.name == name))
    }

    /// The class the scope of a qualified name designates: `C` (a class's name, or inside a
    /// class template's instance its injected name), `q<int>`, a typedef of a class.
    fn scope_class(&self, scope: Node) -> Option<usize> {
        let src = self.src;
        let text = src.text(scope);
        if let Some(c) = self.cx.class_named(text) {
            return Some(c.id);
        }
        let key = match scope.kind() {
            "template_type" => {
                crate::frontend::templates::instance_key(&src, &self.cx.types, scope)
                    .ok()
                    .flatten()?
                    .0
            }
            _ => text.to_string(),
        };
        match self.cx.types.typedefs.get(&key) {
            Some((crate::frontend::types::BaseTy::Struct(id), _)) => {
                self.cx.class_of(*id).map(|c| c.id)
            }
            _ => None,
        }
    }

    /// The class of the object `arg` designates in `arg.f` (`op` `.`) or `arg->f` (`->`),
    /// found without emitting anything.
    fn peek_class(&self, arg: Node, op: &str) -> Option<usize> {
        let src = self.src;
        let arg = strip_parens(arg);
        let ty = if op == "->" {
            match arg.kind() {
                "this" => return self.this_ctx().map(|(_, c)| c),
                "identifier" => match self.lookup(src.text(arg)) {
                    Name::Local(r) => self.reg_ptr.get(r).cloned().flatten()?,
                    _ => match self.peek_place_type(arg)? {
                        Ty::Ptr { to, .. } => *to,
                        _ => return None,
                    },
                },
                _ => match self.peek_place_type(arg)? {
                    Ty::Ptr { to, .. } => *to,
                    _ => return None,
                },
            }
        } else {
            self.peek_place_type(arg)?
        };
        match ty {
            Ty::Struct(id) if self.cx.class_of(id).is_some() => Some(id),
            _ => None,
        }
    }

    /// The member function `name` of class `id` taking `nargs` arguments, for call `call`.
    fn find_method(&self, call: Node, id: usize, name: &str, nargs: usize) -> R<Method<'a>> {
        let src = self.src;
        let class = self
            .class(id)
            .ok_or_else(|| src.internal("member call of a non-class"))?;
        let full = format!("{}::{name}", class.name);
        let defs: Vec<Node<'a>> = class
            .methods
            .iter()
            .filter(|(m, _)| m == name)
            .map(|(_, d)| *d)
            .collect();
        let found = defs
            .iter()
            .find(|d| crate::frontend::classes::accepts(&src, **d, nargs));
        match found {
            Some(&def) => Ok(Method {
                name: full,
                def,
                class: id,
                special: Special::None,
                is_static: class.is_static(&src, name, def),
            }),
            None if defs.is_empty() && class.declared.iter().any(|m| m == name) => Err(src
                .unsupported(
                    call,
                    &format!("call to `{full}`, which is declared but not defined in this file"),
                )),
            None if defs.is_empty() => Err(src.error(
                call,
                &format!("class `{}` has no member function `{name}`", class.name),
            )),
            None => Err(src.error(
                call,
                &format!("no member function `{full}` taking {nargs} arguments"),
            )),
        }
    }

    /// Calls of member functions (see the module doc): `Some(value)` when `call` is one.
    pub(super) fn class_call(&mut self, call: Node, used: bool) -> R<Option<TExpr>> {
        if self.cx.classes.is_empty() {
            return Ok(None);
        }
        let src = self.src;
        let Some(f) = call.child_by_field_name("function") else {
            return Ok(None);
        };
        let args = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let (method, this) = match f.kind() {
            "field_expression" => {
                let (Some(arg), Some(field), Some(op)) = (
                    f.child_by_field_name("argument"),
                    f.child_by_field_name("field"),
                    f.child_by_field_name("operator"),
                ) else {
                    return Ok(None);
                };
                let op = src.text(op);
                let Some(id) = self.peek_class(arg, op) else {
                    return Ok(None);
                };
                let method = self.find_method(call, id, src.text(field), args.len())?;
                // The object is evaluated, static member function or not.
                let this = if op == "->" {
                    self.ptr_value(arg)?.0
                } else {
                    match self.place_of(arg)? {
                        Some(p) => super::memory::addr_value(&p.addr),
                        None => return Err(src.internal("object without a place")),
                    }
                };
                let this = (!method.is_static).then_some(this);
                (method, this)
            }
            "identifier" => {
                let Some(scope) = self.class_ctx() else {
                    return Ok(None);
                };
                let name = src.text(f);
                let chain = self.class_chain(scope);
                let Some(&id) = chain.iter().find(|&&c| {
                    self.cx
                        .class_of(c)
                        .is_some_and(|c| c.methods.iter().any(|(m, _)| m == name))
                }) else {
                    return Ok(None);
                };
                if !matches!(self.lookup(name), Name::Unknown | Name::Function) {
                    return Ok(None);
                }
                let method = self.find_method(call, id, name, args.len())?;
                let this = self.implicit_this(call, &method)?;
                (method, this)
            }
            "qualified_identifier" => {
                let (Some(scope), Some(name)) = (
                    f.child_by_field_name("scope"),
                    f.child_by_field_name("name"),
                ) else {
                    return Ok(None);
                };
                // `A::B::f`: the grammar nests `B::f` in the name; the scope is `A::B`.
                let (id, name) = match name.kind() {
                    "qualified_identifier" => {
                        let Some((outer, last)) =
                            crate::frontend::classes::split_qualified(src.text(f))
                        else {
                            return Ok(None);
                        };
                        (self.cx.class_named(outer).map(|c| c.id), last)
                    }
                    _ => (self.scope_class(scope), src.text(name)),
                };
                let Some(id) = id else {
                    return Ok(None);
                };
                let method = self.find_method(call, id, name, args.len())?;
                let this = self.implicit_this(call, &method)?;
                (method, this)
            }
            _ => return Ok(None),
        };
        self.inline_method(call, &method, this, &args, used)
            .map(Some)
    }

    /// The object of a call of `method` written without one (`f(a)` or `C::f(a)` in a
    /// member function): none for a static member function, else `this`, which must be an
    /// object of the method's class.
    fn implicit_this(&self, call: Node, method: &Method) -> R<Option<Expr>> {
        if method.is_static {
            return Ok(None);
        }
        match self.this_ctx() {
            Some((r, c)) if c == method.class => Ok(Some(Expr::Reg(r))),
            _ => Err(self.src.error(
                call,
                &format!(
                    "call to non-static member function `{}` without an object",
                    method.name
                ),
            )),
        }
    }

    /// The bindings of a static member function of class `id`: the static members of the
    /// class and of the classes it is nested in (inner ones hide outer ones): each constant a
    /// register holding it, each other static data member its global cell.
    pub(super) fn static_bindings(&mut self, id: usize) -> Vec<(String, Binding)> {
        let mut out = Vec::new();
        for c in self.class_chain(id).into_iter().rev() {
            let Some(class) = self.class(c) else { continue };
            for (name, v) in class.statics {
                let r = self.new_reg(&name, IntTy::I64);
                self.emit(Instr::Assign {
                    dst: r,
                    val: Expr::Const(v),
                });
                out.push((name, Binding::Var(r)));
            }
            for v in class.static_vars {
                out.push((v.name, Binding::Cell(v.base)));
            }
        }
        out
    }

    /// The bindings of the members of class `id` for a member function whose `this` is in
    /// register `this`: the static constants ([`Self::static_bindings`]), then each data
    /// member, a place at `this + offset`.
    pub(super) fn member_bindings(&mut self, this: usize, id: usize) -> Vec<(String, Binding)> {
        let mut out = self.static_bindings(id);
        let fields = self.cx.types.fields_of(id);
        let mut off = 0;
        for (name, ty) in fields {
            let size = self.cx.types.size(&ty);
            let r = self.new_reg(&name, IntTy::I64);
            self.emit(Instr::Assign {
                dst: r,
                val: super::bin(BinOp::Add, Expr::Reg(this), Expr::Const(off as i64)),
            });
            self.local_tys.push(ty);
            out.push((name, Binding::LocalObject(r, self.local_tys.len() - 1)));
            off += size;
        }
        out
    }

    /// Constructs an object of class `id` at the address `this` (created at `at`) with
    /// constructor arguments `args` (see the module doc).
    pub(super) fn construct(&mut self, at: Node, id: usize, this: Expr, args: &[Node]) -> R<()> {
        let src = self.src;
        let Some(class) = self.class(id) else {
            return Err(src.internal("construction of a non-class"));
        };
        if let [a] = args {
            if self.peek_place_type(*a) == Some(Ty::Struct(id)) {
                return Err(src.unsupported(
                    *a,
                    &format!(
                        "copy of an object of class `{}` (copying objects is not supported)",
                        class.name
                    ),
                ));
            }
        }
        let ctor = class
            .ctors
            .iter()
            .find(|d| crate::frontend::classes::accepts(&src, **d, args.len()));
        let method = match ctor {
            Some(&def) => Method {
                name: format!("{}::{}", class.name, class.name),
                def,
                class: id,
                special: Special::Ctor,
                is_static: false,
            },
            None if class.declares_ctor => {
                let n = args.len();
                return Err(src.error(
                    at,
                    &format!(
                        "no constructor of class `{}` defined in this file takes {n} arguments",
                        class.name
                    ),
                ));
            }
            None if !args.is_empty() => {
                return Err(src.unsupported(
                    at,
                    &format!(
                        "arguments for class `{}`, which has no constructor (aggregate \
                         initialisation of a class is not supported)",
                        class.name
                    ),
                ));
            }
            None => {
                // The implicit default constructor: the members' default initialisers, in the
                // scope of the class (its members and constants).
                let r = self.new_temp(IntTy::I64);
                self.emit(Instr::Assign { dst: r, val: this });
                let members = self.member_bindings(r, id);
                let saved = std::mem::replace(&mut self.scopes, vec![members]);
                let done = self.with_class_bindings(Some(id), |l| l.member_inits(at, id, r, None));
                self.scopes = saved;
                return done;
            }
        };
        self.inline_method(at, &method, Some(this), args, false)
            .map(|_| ())
    }

    /// Initialises the members of the object of class `id` at `this` (a register) in
    /// declaration order, from the member initialiser list `list` of a constructor (see the
    /// module doc). Run in the constructor's scope.
    pub(super) fn member_inits(
        &mut self,
        at: Node,
        id: usize,
        this: usize,
        list: Option<Node>,
    ) -> R<()> {
        let src = self.src;
        let class = self.class(id);
        let inits: Vec<Node> = list.map(named_children).unwrap_or_default();
        for i in &inits {
            let name = named_children(*i)
                .first()
                .map(|n| src.text(*n))
                .unwrap_or("");
            if self.cx.types.field(id, name).is_none() {
                return Err(src.error(*i, &format!("`{name}` is not a member of this class")));
            }
        }
        let mut off = 0;
        for (name, ty) in self.cx.types.fields_of(id) {
            let size = self.cx.types.size(&ty);
            let place = super::Place {
                addr: crate::ir::Addr::Within {
                    ptr: super::bin(BinOp::Add, Expr::Reg(this), Expr::Const(off as i64)),
                    base: Expr::Reg(this),
                    len: off + size.max(1),
                },
                ty: ty.clone(),
            };
            off += size;
            let init = inits.iter().find(|i| {
                named_children(**i)
                    .first()
                    .is_some_and(|n| src.text(*n) == name)
            });
            let default = class
                .as_ref()
                .and_then(|c| c.defaults.iter().find(|(m, _)| *m == name).map(|(_, v)| *v));
            let zeroed = class.as_ref().is_some_and(|c| c.zeroed.contains(&name));
            match (init, default) {
                (Some(i), _) => self.member_init(*i, &place)?,
                (None, Some(v)) => self.member_default(v, &place)?,
                (None, None) if zeroed => {
                    let start = self.begin_init_stmt(at);
                    self.zero_store(&place);
                    self.end_init_stmt(start);
                }
                (None, None) => self.member_default_ctor(at, &place)?,
            }
        }
        Ok(())
    }

    /// One member initialiser `m(v)` / `m{v}` / `m()` of a constructor's list, into `place`.
    fn member_init(&mut self, i: Node, place: &super::Place) -> R<()> {
        let src = self.src;
        let Some(vals) = named_children(i).get(1).copied() else {
            return Err(src.unsupported(i, "member initialiser"));
        };
        let args = named_children(vals);
        let start = self.begin_init_stmt(i);
        match (&place.ty, args.as_slice()) {
            (Ty::Struct(cid), _) if self.class(*cid).is_some() => {
                let this = super::memory::addr_value(&place.addr);
                self.construct(i, *cid, this, &args)?;
            }
            (Ty::Int { .. } | Ty::Ptr { .. }, []) => self.zero_store(place),
            (Ty::Int { .. } | Ty::Ptr { .. }, [v]) => self.init_stores(place, *v)?,
            (Ty::Array(..) | Ty::Struct(_), []) => {
                let n = self.cx.types.size(&place.ty);
                for k in 0..n {
                    let p = super::Place {
                        addr: super::memory::offset(&place.addr, k),
                        ty: Ty::Int {
                            ty: IntTy::I64,
                            atomic: false,
                        },
                    };
                    self.zero_store(&p);
                }
            }
            (Ty::Array(..) | Ty::Struct(_), _) if vals.kind() == "initializer_list" => {
                self.init_stores(place, vals)?
            }
            _ => {
                let text = src.text(i);
                return Err(src.unsupported(i, &format!("member initialiser `{text}`")));
            }
        }
        self.end_init_stmt(start);
        Ok(())
    }

    /// A default member initialiser `= v` / `{v}` into `place`.
    fn member_default(&mut self, v: Node, place: &super::Place) -> R<()> {
        let src = self.src;
        let start = self.begin_init_stmt(v);
        let scalar = matches!(place.ty, Ty::Int { .. } | Ty::Ptr { .. });
        match named_children(v).as_slice() {
            [] if v.kind() == "initializer_list" && scalar => self.zero_store(place),
            [e] if v.kind() == "initializer_list" && scalar => self.init_stores(place, *e)?,
            _ if v.kind() == "argument_list" => {
                return Err(src.unsupported(v, "default member initialiser in parentheses"))
            }
            _ => self.init_stores(place, v)?,
        }
        self.end_init_stmt(start);
        Ok(())
    }

    /// A member without an initialiser: a member object of a class that constructs is
    /// constructed by its default constructor; anything else keeps its allocated value.
    fn member_default_ctor(&mut self, at: Node, place: &super::Place) -> R<()> {
        let mut t = &place.ty;
        while let Ty::Array(inner, _) = t {
            t = inner;
        }
        let Ty::Struct(cid) = t else {
            return Ok(());
        };
        let constructs = self.class(*cid).is_some_and(|c| c.constructs());
        if !constructs {
            return Ok(());
        }
        if matches!(place.ty, Ty::Array(..)) {
            return Err(self.src.unsupported(
                at,
                "array member of a class type with a constructor or default member initialisers",
            ));
        }
        let this = super::memory::addr_value(&place.addr);
        self.construct(at, *cid, this, &[])
    }

    /// A store of 0 into scalar `place` (relaxed for an atomic).
    fn zero_store(&mut self, place: &super::Place) {
        let order = if place.ty.is_atomic() {
            MemOrder::Relaxed
        } else {
            MemOrder::NonAtomic
        };
        self.emit(Instr::Store {
            loc: place.addr.clone(),
            val: Expr::Const(0),
            order,
        });
    }

    /// Starts the statement of an initialiser node `n` (no fence slot: a fence cannot be
    /// written between member initialisers). Returns the first pc, for
    /// [`Self::end_init_stmt`].
    fn begin_init_stmt(&mut self, n: Node) -> (usize, crate::ir::StmtId, crate::ir::StmtId) {
        let saved = self.cur_stmt;
        let sid = self.new_stmt(n);
        self.cur_stmt = sid;
        (self.body.len(), sid, saved)
    }

    fn end_init_stmt(
        &mut self,
        (start, sid, saved): (usize, crate::ir::StmtId, crate::ir::StmtId),
    ) {
        self.classify(sid, start);
        self.cur_stmt = saved;
    }

    /// Whether objects of type `ty` run code when created (a class that constructs, or an
    /// array of one).
    pub(super) fn constructs(&self, ty: &Ty) -> Option<usize> {
        struct_id(ty).filter(|&id| self.cx.class_of(id).is_some_and(|c| c.constructs()))
    }

    /// Whether the class of `ty` has a destructor that does something.
    pub(super) fn destructs(&self, ty: &Ty) -> bool {
        struct_id(ty)
            .and_then(|id| self.cx.class_of(id))
            .and_then(|c| c.dtor)
            .is_some_and(|d| !crate::frontend::classes::empty_body(d))
    }

    /// The destructor of the object at pointer `this` whose pointee is `ty`, before a `delete`.
    pub(super) fn destroy(&mut self, at: Node, ty: &Ty, this: Expr) -> R<()> {
        let Ty::Struct(id) = ty else {
            return Ok(());
        };
        let Some(def) = self.cx.class_of(*id).and_then(|c| c.dtor) else {
            return Ok(());
        };
        if crate::frontend::classes::empty_body(def) {
            return Ok(());
        }
        let class = self.class(*id).map(|c| c.name).unwrap_or_default();
        let method = Method {
            name: format!("{class}::~{class}"),
            def,
            class: *id,
            special: Special::Dtor,
            is_static: false,
        };
        self.inline_method(at, &method, Some(this), &[], false)
            .map(|_| ())
    }

    /// A local declarator `d` of a class type that constructs or destructs (`spec`'s type
    /// `ty`): allocated, bound, constructed with its arguments, and destroyed where control
    /// leaves its block (a [`Release::Dtor`] guard). `false` when `d` is not such a declarator
    /// (a pointer, ...), which the C code then lowers.
    pub(super) fn class_local(&mut self, d: Node, ty: &Ty) -> R<bool> {
        let src = self.src;
        // `C *p = ...`: a pointer, not an object.
        let inner = d.child_by_field_name("declarator").map(|n| n.kind());
        if d.kind() == "init_declarator" && inner != Some("identifier") {
            return Ok(false);
        }
        let dtor = self.destructs(ty);
        let ctor = self.constructs(ty);
        let Some(id) = ctor.or_else(|| dtor.then(|| struct_id(ty)).flatten()) else {
            return Ok(false);
        };
        match d.kind() {
            "identifier" | "init_declarator" | "function_declarator" => {}
            "array_declarator" => {
                return Err(src.unsupported(
                    d,
                    "array of objects of a class with a constructor, a destructor or default \
                     member initialisers",
                ))
            }
            _ => return Ok(false),
        }
        if dtor {
            self.check_scope_dtor(d)?;
        }
        let (name, args) = self.ctor_arg_nodes(d)?;
        let text = src.text(name).to_string();
        let b = self.local_object(name, &text, &Ty::Struct(id), None)?;
        self.bind(&text, b);
        let Binding::LocalObject(r, _) = b else {
            return Err(src.internal("class local not in memory"));
        };
        if ctor.is_some() {
            self.construct(d, id, Expr::Reg(r), &args)?;
        } else if let Some(a) = args.first() {
            return Err(src.unsupported(
                *a,
                "arguments for a class with a destructor and no constructor",
            ));
        }
        if dtor {
            self.cpp.guards.push(super::cpp::Guard {
                depth: self.scopes.len(),
                inline: self.inlines.len(),
                stmt: self.cur_stmt,
                name: text,
                release: super::cpp::Release::Dtor {
                    at: (d.start_byte(), d.end_byte()),
                    class: id,
                    this: r,
                },
            });
        }
        Ok(true)
    }

    /// The construction of the global objects of classes, at the start of the main thread.
    pub(super) fn construct_globals(&mut self) -> R<()> {
        let ctors = self.cx.global_ctors.clone();
        for g in ctors {
            let sid = self.new_stmt(g.at);
            self.cur_stmt = sid;
            let start = self.body.len();
            match &g.value {
                Some((v, ty)) => self.static_init(g.id, g.base, ty, *v)?,
                None => {
                    let this = Expr::Const(crate::ir::pointer_to(g.base));
                    self.construct(g.at, g.id, this, &g.args)?;
                }
            }
            self.classify(sid, start);
        }
        Ok(())
    }

    /// The dynamic initialisation of static data member cell `base` (type `ty`) of class `id`
    /// by `v`, evaluated in the class's scope (its static members, its template parameters).
    fn static_init(&mut self, id: usize, base: crate::ir::Loc, ty: &Ty, v: Node) -> R<()> {
        let members = self.static_bindings(id);
        let saved = std::mem::replace(&mut self.scopes, vec![members]);
        let place = super::Place {
            addr: crate::ir::Addr::Fixed(base),
            ty: ty.clone(),
        };
        let done = self.with_class_bindings(Some(id), |l| l.init_stores(&place, v));
        self.scopes = saved;
        done
    }

    /// The destructor of the local object of class `class` at register `this`, where control
    /// leaves its scope; errors are reported at its declarator (bytes `at`).
    pub(super) fn scope_dtor(
        &mut self,
        at: (usize, usize),
        class: usize,
        this: crate::ir::Reg,
    ) -> R<()> {
        let Some(def) = self.cx.class_of(class).and_then(|c| c.dtor) else {
            return Ok(());
        };
        // The declarator, found again from the root of the tree both belong to.
        let mut root = def;
        while let Some(p) = root.parent() {
            root = p;
        }
        let site = root.descendant_for_byte_range(at.0, at.1).unwrap_or(def);
        self.destroy(site, &Ty::Struct(class), Expr::Reg(this))
    }

    /// An object whose destructor runs at the end of its scope must be declared directly in
    /// a block (where the scope's exits are known), and is not `static`.
    fn check_scope_dtor(&self, d: Node) -> R<()> {
        let decl = d.parent().unwrap_or(d);
        if super::cpp::directly_in_block(decl) {
            return Ok(());
        }
        Err(self.src.unsupported(
            d,
            "object of a class with a destructor declared outside a block (put it in braces)",
        ))
    }

    /// The declared name and constructor arguments of declarator `d` (`c`, `c(a)`, `c{a}`).
    fn ctor_arg_nodes<'t>(&self, d: Node<'t>) -> R<(Node<'t>, Vec<Node<'t>>)> {
        let src = self.src;
        let (name, args) = crate::frontend::cpp::ctor_args(&src, d)?;
        let mut out = Vec::new();
        for a in args {
            match a {
                // A name parsed as a parameter's type (`g(m)`): lowered as the name.
                crate::frontend::cpp::CtorArg::Expr(e) | crate::frontend::cpp::CtorArg::Name(e) => {
                    out.push(e)
                }
                other => {
                    let text = src.text(other.node());
                    return Err(src.unsupported(
                        other.node(),
                        &format!(
                            "constructor argument `{text}` parsed as a declaration (write the \
                             object with braces: `{}{{...}}`)",
                            src.text(name)
                        ),
                    ));
                }
            }
        }
        Ok((name, out))
    }
}

/// The struct id of `ty`, or of its innermost element type.
fn struct_id(ty: &Ty) -> Option<usize> {
    let mut t = ty;
    while let Ty::Array(inner, _) = t {
        t = inner;
    }
    match t {
        Ty::Struct(id) => Some(*id),
        _ => None,
    }
}
