//! Inlining of calls to user-defined functions (see the module doc of [`crate::frontend`]).
//!
//! A call `f(a, b)` to a function defined in the file is lowered in place: the arguments are
//! evaluated left to right, each converted to its parameter's type and assigned to a fresh
//! register named after the parameter; then `f`'s body is lowered as a block of the caller's
//! function in a fresh scope that holds only the parameters (the caller's locals are not
//! visible, globals resolve as usual but only those declared before `f`). `return e;` in the
//! body assigns `e` (converted to `f`'s return type) to the call's result register (a fresh
//! temporary) and jumps to the end of the inlined body; the value of the call is that register.
//!
//! The statements and slots of the inlined body are new [`Stmt`](crate::ir::Stmt)s and
//! [`Slot`](crate::ir::Slot)s of the **caller's** function whose spans and places point into
//! `f`'s source text: every call site has its own copies, so several slots (one per call site)
//! can share one [`SlotPlace`](crate::ir::SlotPlace).

use super::class::{Method, Special};
use super::{named_children, types, BaseTy, FnLower, IntTy, Mode, TExpr, Ty, R};
use crate::ir::{Expr, Instr};
use tree_sitter::Node;

/// Maximum number of nested inlined calls.
pub(crate) const MAX_INLINE_DEPTH: usize = 32;

/// Maximum number of instructions of a function with its calls inlined: past it, a call is
/// refused (recursion inlined `--recursion` levels deep grows the code exponentially with
/// the number of recursive call sites, and the analyses after lowering are superlinear).
pub(crate) const MAX_BODY: usize = 200_000;

/// A call being inlined.
pub(super) struct Frame {
    name: String,
    /// Where its definition starts: a call of the same definition inside it is recursive
    /// (overloads share a name, not a definition).
    def_start: usize,
    /// The register receiving the value of `return e;` (`None` for a `void` function).
    result: Option<crate::ir::Reg>,
    /// The return type (`None` for `void`).
    ret: Option<IntTy>,
    /// For a function returning a pointer: the type it points to.
    ret_pointee: Option<Ty>,
    /// The jumps of the `return`s, patched to the end of the inlined body.
    returns: Vec<usize>,
    /// The registers holding the call's local objects in memory, whose lifetime ends when it
    /// returns ([`Instr::Free`](crate::ir::Instr::Free)).
    pub(super) objects: Vec<crate::ir::Reg>,
    /// For a member function (`lower/class.rs`): the register holding `this` and the class.
    pub(super) this: Option<(crate::ir::Reg, usize)>,
    /// For a member function, static or not: its class (whose static members it names).
    pub(super) class: Option<usize>,
}

/// The signature of an inlinable function: return type (`None` = `void`), parameters, and for
/// a function returning a pointer the type it points to. A pointer parameter has the pointee
/// type.
type Signature<'t> = (Option<IntTy>, Vec<Param<'t>>, Option<Ty>);

/// A parameter of an inlinable function: its name, its register type and, for a pointer, the
/// pointee type; or, for a C++ reference `T &name`, the referenced type (`lower/reference.rs`).
pub(super) struct Param<'t> {
    name: String,
    ty: IntTy,
    pointee: Option<Ty>,
    by_ref: Option<Ty>,
    /// Its default argument (`int b = 0`), evaluated at a call that leaves it out.
    default: Option<Node<'t>>,
}

impl Frame {
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

impl<'a> FnLower<'_, 'a> {
    /// Inlines the call `call` of user function `name` with arguments `args`; `value` says
    /// whether the call's value is used. Returns the call's value (`0` for a `void` function
    /// called as a statement).
    pub(super) fn inline_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
        value: bool,
    ) -> R<TExpr> {
        let src = self.src;
        let Some(def) = self.cx.fn_defs.get(name).copied() else {
            return Err(src.unsupported(
                call,
                &format!("call to `{name}`, which is not defined in this file"),
            ));
        };
        self.inline_def(call, name, def, args, value, None)
    }

    /// Inlines member function `m` (`lower/class.rs`) called at `call` on the object at
    /// `this` (`None` for a static member function).
    pub(super) fn inline_method(
        &mut self,
        call: Node,
        m: &Method,
        this: Option<Expr>,
        args: &[Node],
        value: bool,
    ) -> R<TExpr> {
        self.inline_def(
            call,
            &m.name,
            m.def,
            args,
            value,
            Some((this, m.class, m.special)),
        )
    }

    /// How many calls of definition `def` the call being lowered is nested in (the thread's
    /// own function counts).
    fn recursion_depth(&self, name: &str, def: Node) -> usize {
        let inlined = self
            .inlines
            .iter()
            .filter(|f| f.def_start == def.start_byte())
            .count();
        inlined + usize::from(name == self.root_name)
    }

    /// The checks of a call of `name` (definition `def`) before it is inlined.
    fn inline_checks(&self, call: Node, name: &str, def: Node) -> R<()> {
        let src = self.src;
        if self.mode == Mode::Const {
            return Err(src.error(
                call,
                "initialiser of a global must be a constant expression",
            ));
        }
        if name == self.cx.main_name {
            return Err(src.unsupported(call, &format!("call to `{name}`")));
        }
        if self.body.len() > MAX_BODY {
            return Err(src.unsupported(
                call,
                &format!(
                    "call to `{name}`: `{}` with its calls inlined has more than {MAX_BODY} \
                     instructions (recursive calls are inlined {} deep: lower --recursion)",
                    self.root_name, self.cx.recursion
                ),
            ));
        }
        if self.inlines.len() >= MAX_INLINE_DEPTH {
            return Err(src.unsupported(
                call,
                &format!("calls nested deeper than {MAX_INLINE_DEPTH} levels"),
            ));
        }
        if def.start_byte() >= self.root_start {
            return Err(src.unsupported(
                call,
                &format!(
                    "call to `{name}`, which is defined after `{}` (define called functions \
                     before their callers)",
                    self.root_name
                ),
            ));
        }
        Ok(())
    }

    /// Inlines definition `def` of `name` (see [`Self::inline_call`]); `this` is the object
    /// (`None` for a static member function), class and kind of a member function's call. A member function of a class template's
    /// instance is lowered with the instance's template parameters bound (`templates.rs`).
    fn inline_def(
        &mut self,
        call: Node,
        name: &str,
        def: Node,
        args: &[Node],
        value: bool,
        this: Option<(Option<Expr>, usize, Special)>,
    ) -> R<TExpr> {
        let class = this.as_ref().map(|t| t.1);
        self.with_class_bindings(class, |l| {
            l.inline_bound(call, name, def, args, value, this)
        })
    }

    /// Runs `f` with the template parameters of class `class` (struct id) bound, if it is an
    /// instance of a class template.
    pub(super) fn with_class_bindings<T>(
        &mut self,
        class: Option<usize>,
        f: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let bindings = class
            .and_then(|c| self.cx.class_of(c))
            .map(|c| c.bindings.clone())
            .unwrap_or_default();
        if bindings.is_empty() {
            return f(self);
        }
        let saved = crate::frontend::templates::bind(&mut self.cx.types, &bindings);
        let out = f(self);
        crate::frontend::templates::restore(&mut self.cx.types, saved);
        out
    }

    /// [`Self::inline_def`] with the bindings in place.
    fn inline_bound(
        &mut self,
        call: Node,
        name: &str,
        def: Node,
        args: &[Node],
        value: bool,
        this: Option<(Option<Expr>, usize, Special)>,
    ) -> R<TExpr> {
        let src = self.src;
        self.inline_checks(call, name, def)?;
        let class = this.as_ref().map(|t| t.1);
        let special = this.as_ref().map_or(Special::None, |t| t.2);
        let (ret, params, ret_pointee) = self.inline_signature(call, name, def, special)?;
        if value && ret.is_none() {
            return Err(src.error(call, &format!("void function `{name}` used as a value")));
        }
        if self.recursion_depth(name, def) > self.cx.recursion as usize {
            // Past the recursion bound: the thread is cut here, before the arguments (a cut
            // thread does nothing more). The value is a register of the function's type
            // that nothing reads at run time.
            self.emit(Instr::Cut);
            return Ok(match ret {
                Some(t) => {
                    let r = self.new_temp(t);
                    if let Some(to) = ret_pointee {
                        self.set_pointee(r, to);
                    }
                    (Expr::Reg(r), super::promote(t))
                }
                None => (Expr::Const(0), IntTy::I32),
            });
        }
        let required = params.iter().filter(|p| p.default.is_none()).count();
        if args.len() < required || args.len() > params.len() {
            self.arity(call, name, args, params.len())?;
        }
        let body = def
            .child_by_field_name("body")
            .ok_or_else(|| src.unsupported(call, &format!("call to `{name}` without a body")))?;

        // `this` (evaluated before the arguments), then the arguments, left to right, into
        // fresh parameter registers.
        let this_reg = this
            .and_then(|(e, class, _)| Some((e?, class)))
            .map(|(e, class)| {
                let r = self.new_reg("this", IntTy::I64);
                self.set_pointee(r, Ty::Struct(class));
                self.emit(Instr::Assign { dst: r, val: e });
                (r, class)
            });
        let mut bound = Vec::with_capacity(params.len());
        for (i, p) in params.iter().enumerate() {
            let Some(a) = args.get(i).or(p.default.as_ref()) else {
                return Err(src.internal("missing argument"));
            };
            let (pname, ty, pointee) = (&p.name, &p.ty, &p.pointee);
            if let Some(rty) = &p.by_ref {
                let b = self.reference_binding(*a, pname, rty)?;
                bound.push((pname.clone(), b));
                continue;
            }
            let val = match pointee {
                Some(to) => {
                    self.expect_pointee(*a, to);
                    self.ptr_value(*a)?.0
                }
                None => {
                    let v = self.expr(*a)?;
                    self.convert(v, *ty)
                }
            };
            let r = self.new_reg(pname, *ty);
            if let Some(to) = pointee {
                self.set_pointee(r, to.clone());
            }
            self.emit(Instr::Assign { dst: r, val });
            bound.push((pname.clone(), super::Binding::Var(r)));
        }
        if let Some(class) = class {
            // Members below the parameters, which hide them (a static member function sees
            // the static ones only).
            let mut scope = match this_reg {
                Some((r, _)) => self.member_bindings(r, class),
                None => self.static_bindings(class),
            };
            scope.append(&mut bound);
            bound = scope;
        }
        let result = ret.map(|t| self.new_temp(t));
        if let (Some(r), Some(to)) = (result, &ret_pointee) {
            self.set_pointee(r, to.clone());
        }

        // The body, in a fresh scope of the caller's function.
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![bound]);
        let saved_jumps = std::mem::take(&mut self.jumps);
        let saved_mode = self.mode;
        // Threads can only be created and joined in main's own body.
        self.mode = Mode::Thread;
        let saved_visible = std::mem::replace(&mut self.visible_before, def.start_byte());
        let saved_stmt = self.cur_stmt;
        let taken = self.cx.taken_names(def);
        self.taken.push(taken);
        self.inlines.push(Frame {
            name: name.to_string(),
            def_start: def.start_byte(),
            result,
            ret,
            ret_pointee,
            returns: Vec::new(),
            objects: Vec::new(),
            this: this_reg,
            class,
        });
        let lowered = match this_reg {
            Some((r, class)) if special == Special::Ctor => {
                let mut c = def.walk();
                let list = def
                    .children(&mut c)
                    .find(|ch| ch.kind() == "field_initializer_list");
                self.member_inits(def, class, r, list)
                    .and_then(|()| self.block(body, None))
            }
            _ => self.block(body, None),
        };
        let frame = self.inlines.pop();
        self.taken.pop();
        self.scopes = saved_scopes;
        self.jumps = saved_jumps;
        self.mode = saved_mode;
        self.visible_before = saved_visible;
        self.cur_stmt = saved_stmt;
        lowered?;
        let end = self.body.len();
        let (returns, objects) = frame.map(|f| (f.returns, f.objects)).unwrap_or_default();
        for pc in returns {
            self.patch(pc, end);
        }
        self.end_lifetimes(objects);
        Ok(match (result, ret) {
            (Some(r), Some(t)) => (Expr::Reg(r), super::promote(t)),
            _ => (Expr::Const(0), IntTy::I32),
        })
    }

    /// `return [e];` inside an inlined body: the result register, then a jump to the end.
    pub(super) fn inline_return(&mut self, s: Node) -> R<bool> {
        let src = self.src;
        let Some(frame) = self.inlines.last() else {
            return Err(src.internal("return outside an inlined call"));
        };
        let (name, result, ret) = (frame.name.clone(), frame.result, frame.ret);
        let pointer = frame.ret_pointee.clone();
        match (named_children(s).first().copied(), result, ret) {
            (Some(e), Some(r), Some(_)) if pointer.is_some() => {
                if let Some(to) = &pointer {
                    self.expect_pointee(e, to);
                }
                let val = self.any_value(e)?;
                self.emit(Instr::Assign { dst: r, val });
            }
            (Some(e), Some(r), Some(ty)) => {
                let v = self.expr(e)?;
                let val = self.convert(v, ty);
                self.emit(Instr::Assign { dst: r, val });
            }
            (None, None, None) => {}
            (Some(e), _, _) if ret.is_none() => {
                return Err(src.error(
                    e,
                    &format!("`return` with a value in void function `{name}`"),
                ));
            }
            _ => {
                return Err(src.unsupported(
                    s,
                    &format!("`return` without a value in function `{name}` returning an integer"),
                ));
            }
        }
        self.cpp_release_guards_on_return()?;
        let j = self.emit(Instr::Jump { target: 0 });
        if let Some(f) = self.inlines.last_mut() {
            f.returns.push(j);
        }
        Ok(true)
    }

    /// The signature of user function `name` (definition `def`) called at `call`: it must
    /// return an integer or `void` and take integer parameters by value.
    fn inline_signature<'t>(
        &self,
        call: Node,
        name: &str,
        def: Node<'t>,
        special: Special,
    ) -> R<Signature<'t>> {
        let src = self.src;
        let bad = |what: &str| Err(src.unsupported(call, &format!("call to `{name}`, {what}")));
        let Some(mut declarator) = def.child_by_field_name("declarator") else {
            return bad("whose definition is not supported");
        };
        if special != Special::None {
            if declarator.kind() != "function_declarator" {
                return bad("whose definition is not supported");
            }
            let params = self.inline_params(call, name, declarator)?;
            return Ok((None, params, None));
        }
        let spec = types::decl_spec(&src, &self.cx.types, def)?;
        // `T *f(...)`, `T **f(...)`: a pointer to `T` (to `T *`, ...).
        let mut ret_pointee = None;
        while declarator.kind() == "pointer_declarator" {
            let to = ret_pointee.take().map_or_else(
                || spec.base(),
                |t| Ty::Ptr {
                    to: Box::new(t),
                    atomic: false,
                },
            );
            ret_pointee = Some(to);
            let Some(inner) = declarator.child_by_field_name("declarator") else {
                return bad("whose definition is not supported");
            };
            declarator = inner;
        }
        if declarator.kind() != "function_declarator" {
            return bad("whose definition is not supported");
        }
        if let Some((storage, _)) = &spec.storage {
            if !matches!(storage.as_str(), "static" | "inline") {
                return bad(&format!("which is declared `{storage}`"));
            }
        }
        let ret = match spec.ty {
            _ if ret_pointee.is_some() => Some(IntTy::I64),
            BaseTy::Int(t) if !spec.atomic => Some(t),
            BaseTy::Void if !spec.atomic => None,
            _ => return bad("whose return type is not an integer or void"),
        };
        let params = self.inline_params(call, name, declarator)?;
        Ok((ret, params, ret_pointee))
    }

    /// The parameters of function declarator `declarator` of `name` called at `call`:
    /// integers and pointers by value, C++ lvalue references to objects.
    fn inline_params<'t>(&self, call: Node, name: &str, declarator: Node<'t>) -> R<Vec<Param<'t>>> {
        let src = self.src;
        let bad = |what: &str| Err(src.unsupported(call, &format!("call to `{name}`, {what}")));
        let mut params = Vec::new();
        let Some(plist) = declarator.child_by_field_name("parameters") else {
            return Ok(params);
        };
        let plist = named_children(plist);
        for p in &plist {
            if !matches!(
                p.kind(),
                "parameter_declaration" | "optional_parameter_declaration"
            ) {
                return bad("whose parameters are not supported (only integers by value)");
            }
            let pspec = types::decl_spec(&src, &self.cx.types, *p)?;
            let Some(d) = p.child_by_field_name("declarator") else {
                if pspec.ty == BaseTy::Void && plist.len() == 1 {
                    continue; // `(void)`
                }
                let text = src.text(*p);
                return bad(&format!("whose parameter `{text}` has no name"));
            };
            let unsupported = || {
                let text = src.text(*p);
                bad(&format!(
                    "whose parameter `{text}` is not supported (only integers and pointers by \
                     value)"
                ))
            };
            if d.kind() == "abstract_pointer_declarator" || pspec.storage.is_some() {
                return unsupported();
            }
            if let Some(inner) = super::reference::referenced(&src, d)? {
                let decl = types::declarator(&src, &pspec, inner, &mut |_| Ok(1))?;
                let rty = match decl.ty {
                    Ty::Int { ty, .. } if pspec.atomic => Ty::Int { ty, atomic: true },
                    t => t,
                };
                params.push(Param {
                    name: src.text(decl.name).to_string(),
                    ty: IntTy::I64,
                    pointee: None,
                    by_ref: Some(rty),
                    default: p.child_by_field_name("default_value"),
                });
                continue;
            }
            let decl = match types::declarator(&src, &pspec, d, &mut |_| Ok(1)) {
                Ok(decl) => decl,
                Err(_) => return unsupported(),
            };
            let name = src.text(decl.name).to_string();
            let (ty, pointee) = match decl.ty {
                Ty::Int { ty, atomic: false } => (ty, None),
                Ty::Ptr { to, atomic: false } if *to != Ty::Thread => (IntTy::I64, Some(*to)),
                _ => return unsupported(),
            };
            params.push(Param {
                name,
                ty,
                pointee,
                by_ref: None,
                default: p.child_by_field_name("default_value"),
            });
        }
        Ok(params)
    }
}
