//! Lowering of the C++-only forms in function bodies (see the C++ section of the module doc of
//! [`crate::frontend`]): member calls on `std::atomic` (integer and pointer) and `std::mutex`
//! objects anywhere in memory (`x`, `a[i]`, `s.f`, `p->f`, `p->load()`) and on `std::thread`
//! handles (`t.join()`, `t[i].join()`), `std::thread` declarations (named functions and
//! lambdas, with an integer or pointer argument; single handles and arrays of handles without a
//! thread) and assignments (`t[i] = std::thread(f, i)`), lock guards (`std::lock_guard`,
//! `std::unique_lock`, `std::scoped_lock`, on any mutex place) with their unlock at every exit
//! from the guarded scope, `std::`-qualified C functions and memory orders, and C++ conditions.
//!
//! Everything is mapped onto the C lowering: the receiver of a member call is a [`Place`]
//! (`FnLower::place_of`, or the dereference of `ptr_value` for `->`); loads with
//! [`FnLower::load_place`], read-modify-writes with [`FnLower::emit_rmw`], compare-exchanges
//! with [`FnLower::emit_cas`], mutexes with [`FnLower::mutex_cas`] (acquire CAS 0 → 1 +
//! assume) and a release store of 0, threads with [`Instr::Spawn`] / [`Instr::Join`] exactly
//! as `pthread_create` / `pthread_join` (`FnLower::spawn_into`, `FnLower::handle`: an element
//! of a handle array with a computed index is selected arithmetically, as for `pthread_t
//! t[N]`).
//!
//! The hooks in the C code are: [`FnLower::cpp_stmt`] (first thing in `stmt`),
//! [`FnLower::cpp_call`] (first thing in `call_stmt` / `call_value`), [`FnLower::std_callee`]
//! (in `callee`), [`FnLower::cpp_expr`] (the last arm of `expr_inner`, C++ only),
//! [`FnLower::cpp_block_end`] (end of `block`), [`FnLower::cpp_release_guards_on_return`]
//! (`inline_return`), [`FnLower::cpp_is_load_call`] (`reads_only`, for await loops) and
//! [`FnLower::cpp_thread_signature`] (`thread_signature`). All of them do nothing for C.

use super::closure::{Capture, DefaultCapture};
use super::{
    named_children, strip_parens, Binding, FnLower, HandleRef, Mode, Name, Place, TExpr, R,
};
use crate::frontend::cpp::{ctor_args, std_name, CtorArg};
use crate::frontend::types::{self, BaseTy, IntTy, Ty};
use crate::frontend::{Lang, SpawnedBy, Src};
use crate::ir::{Addr, Expr, FuncId, Function, Instr, MemOrder, Reg, RmwOp, StmtId};
use tree_sitter::Node;

/// At most this many nodes of a lambda body are scanned for the locals it captures.
const MAX_CAPTURE_SCAN: usize = 100_000;

/// The C atomic functions that C++ also has as `std::` functions (with the same pointer
/// arguments): `std::atomic_load(&x)` is lowered like C's `atomic_load(&x)`.
const STD_C_FUNCTIONS: &[&str] = &[
    "atomic_load",
    "atomic_load_explicit",
    "atomic_store",
    "atomic_store_explicit",
    "atomic_exchange",
    "atomic_exchange_explicit",
    "atomic_fetch_add",
    "atomic_fetch_add_explicit",
    "atomic_fetch_sub",
    "atomic_fetch_sub_explicit",
    "atomic_fetch_and",
    "atomic_fetch_and_explicit",
    "atomic_fetch_or",
    "atomic_fetch_or_explicit",
    "atomic_fetch_xor",
    "atomic_fetch_xor_explicit",
    "atomic_compare_exchange_strong",
    "atomic_compare_exchange_strong_explicit",
    "atomic_compare_exchange_weak",
    "atomic_compare_exchange_weak_explicit",
    "atomic_init",
    "atomic_thread_fence",
    "atomic_signal_fence",
    // <cstdlib>: the program's end and failure (see `lower/threads.rs`).
    "abort",
    "exit",
    "_Exit",
    "quick_exit",
    // <cstdlib>: the heap (see `lower/heap.rs`).
    "malloc",
    "calloc",
    "realloc",
    "aligned_alloc",
    "free",
];

/// The message for a `std::thread` that no handle holds.
const TEMPORARY_THREAD: &str = "temporary std::thread (a thread must be held by a handle: \
                                `std::thread t(f);` or `t = std::thread(f);`)";

/// Standard library types that are refused with a specific message.
const UNSUPPORTED_STD_TYPES: &[&str] = &[
    "condition_variable_any",
    "future",
    "shared_future",
    "promise",
    "packaged_task",
    "jthread",
    "timed_mutex",
    "recursive_timed_mutex",
    "shared_timed_mutex",
    "atomic_flag",
    "atomic_ref",
    "counting_semaphore",
    "binary_semaphore",
    "latch",
    "barrier",
    "once_flag",
];

/// The C++ state of one function being lowered.
#[derive(Default)]
pub(super) struct State {
    /// Lock guards, `std::unique_ptr`s and objects with destructors in scope, in declaration
    /// order (innermost last).
    pub(super) guards: Vec<Guard>,
    /// Enclosing loops and switches, innermost last: where `break` / `continue` leave to.
    marks: Vec<Mark>,
    /// The `rl::` backoff locals declared so far (`lower/relacy.rs`).
    pub(super) backoffs: Vec<String>,
}

/// A lock guard, a `std::unique_ptr` or an object of a class with a destructor in scope: its
/// destructor (the mutex unlocked, the owned object deleted, the class's destructor inlined)
/// runs wherever control leaves the block that declares it.
pub(super) struct Guard {
    /// `scopes.len()` in the declaring block.
    pub(super) depth: usize,
    /// `inlines.len()` where it was declared (guards of an inlined body are its own).
    pub(super) inline: usize,
    /// The declaration: the destructor's instructions belong to it.
    pub(super) stmt: StmtId,
    pub(super) name: String,
    pub(super) release: Release,
}

/// What a [`Guard`]'s destructor does.
#[derive(Clone)]
pub(super) enum Release {
    /// A lock guard's unlock.
    Unlock {
        /// The mutex (a computed address is held in a register of its own, so that it still
        /// names the locked mutex at the unlock).
        addr: Addr,
        /// What it locked, and how (see `cpp_sync.rs`).
        held: super::cpp_sync::Held,
        /// A `std::unique_lock` (the guard a `std::condition_variable` waits with).
        unique: bool,
        /// The locked object, for messages (`mutex `m``).
        what: String,
    },
    /// A `std::unique_ptr`'s delete of the pointer in register `reg` (null: nothing),
    /// `delete[]` for an array (`unique_ptr.rs`).
    Delete { reg: Reg, array: bool },
    /// The destructor of the local object of class `class` (struct id) whose address is in
    /// register `this`, declared by the declarator spanning bytes `at` (`lower/class.rs`).
    Dtor {
        at: (usize, usize),
        class: usize,
        this: Reg,
    },
}

/// An enclosing loop or switch.
struct Mark {
    /// `scopes.len()` before the statement: guards deeper than this are left by its `break`.
    depth: usize,
    inline: usize,
    is_loop: bool,
}

/// The type of the value passed to a thread: an integer, or a pointer (whose pointee type
/// the thread's parameter register carries).
#[derive(Clone, Debug)]
struct ParamTy {
    ty: IntTy,
    pointee: Option<Ty>,
}

/// The parameter of a `std::thread` function: `None` for `void f()`, else the parameter's
/// name (if named) and type.
type ThreadParam<'t> = Option<(Option<Node<'t>>, ParamTy)>;

impl<'a> FnLower<'_, 'a> {
    fn is_cpp(&self) -> bool {
        self.src.lang == Lang::Cpp
    }

    // ----- hooks ----------------------------------------------------------------------------

    /// C++ statements: `Some(diverts)` when handled here, `None` to lower `s` as C.
    pub(super) fn cpp_stmt(&mut self, s: Node, sid: StmtId) -> R<Option<bool>> {
        if !self.is_cpp() {
            return Ok(None);
        }
        let src = self.src;
        let unsupported = |what: &str| Err(src.unsupported(s, what));
        match s.kind() {
            "declaration" => self.cpp_decl(s, sid),
            "while_statement" | "do_statement" | "for_statement" | "switch_statement" => {
                self.cpp.marks.push(Mark {
                    depth: self.scopes.len(),
                    inline: self.inlines.len(),
                    is_loop: s.kind() != "switch_statement",
                });
                let r = match s.kind() {
                    "while_statement" => self.while_stmt(s, sid),
                    "do_statement" => self.do_stmt(s, sid),
                    "for_statement" => self.for_stmt(s, sid),
                    _ => self.switch_stmt(s, sid),
                };
                self.cpp.marks.pop();
                r.map(Some)
            }
            "break_statement" | "continue_statement" => {
                let is_break = s.kind() == "break_statement";
                let level = self.inlines.len();
                let target = self
                    .cpp
                    .marks
                    .iter()
                    .rev()
                    .filter(|m| m.inline == level)
                    .find(|m| is_break || m.is_loop)
                    .map(|m| m.depth);
                if let Some(depth) = target {
                    self.release_guards(|g| g.inline == level && g.depth > depth)?;
                }
                let r = if is_break {
                    self.break_stmt(s)
                } else {
                    self.continue_stmt(s)
                };
                r.map(Some)
            }
            "return_statement" if self.inlines.is_empty() && !self.cpp.guards.is_empty() => {
                // The value is computed before the guards' destructors run.
                if let Some(e) = named_children(s).first() {
                    self.expr(*e)?;
                }
                self.release_guards(|_| true)?;
                self.emit_return();
                Ok(Some(true))
            }
            "expression_statement" => {
                let Some(e) = named_children(s).first().copied() else {
                    return Ok(None);
                };
                let (Some(left), Some(right), Some(op)) = (
                    e.child_by_field_name("left"),
                    e.child_by_field_name("right"),
                    e.child_by_field_name("operator"),
                ) else {
                    return Ok(None);
                };
                if e.kind() != "assignment_expression" || src.text(op) != "=" {
                    return Ok(None);
                }
                if let Some(owner) = self.owner_node(left) {
                    return self.unique_assign(e, owner, right).map(|_| Some(false));
                }
                match self.thread_ctor(right) {
                    Some(args) => self.thread_assign(e, left, &args).map(|_| Some(false)),
                    None => Ok(None),
                }
            }
            "using_declaration" if is_using_namespace_std(src.text(s)) => Ok(Some(false)),
            "using_declaration" => {
                unsupported("`using` declaration (only `using namespace std;` is supported)")
            }
            "alias_declaration" => unsupported("type alias"),
            "namespace_alias_definition" => unsupported("namespace alias"),
            "static_assert_declaration" => unsupported("static_assert"),
            "try_statement" => unsupported("exceptions (`try`/`catch` is not supported)"),
            "throw_statement" => unsupported("exceptions (`throw` is not supported)"),
            "for_range_loop" => unsupported("range-based `for`"),
            "co_return_statement" | "co_yield_statement" => unsupported("coroutines"),
            _ => Ok(None),
        }
    }

    /// Calls with a C++ callee (member calls, `std::` functions): `Some(value)` when handled
    /// here (`value` is `0` for a call without a value), `None` to lower `call` as C. `used`
    /// says whether the call's value is used.
    pub(super) fn cpp_call(&mut self, call: Node, used: bool) -> R<Option<TExpr>> {
        if !self.is_cpp() {
            return Ok(None);
        }
        if let Some(v) = self.class_call(call, used)? {
            return Ok(Some(v));
        }
        let src = self.src;
        let Some(f) = call.child_by_field_name("function") else {
            return Ok(None);
        };
        let args = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let text = src.text(f);
        if let Some(what) = smart_pointer_call(&src, call, f) {
            return Err(src.unsupported(call, &what));
        }
        match f.kind() {
            "field_expression" => self.member_call(call, f, &args, used).map(Some),
            "qualified_identifier" | "identifier" => match std_name(&src, f) {
                Some("thread") if self.thread_ctor(call).is_some() => {
                    Err(src.unsupported(call, TEMPORARY_THREAD))
                }
                Some(name) if f.kind() == "qualified_identifier" => {
                    if STD_C_FUNCTIONS.contains(&name) {
                        Ok(None)
                    } else {
                        Err(src.unsupported(call, &format!("call to `{text}`")))
                    }
                }
                _ if f.kind() == "qualified_identifier" => {
                    Err(src.unsupported(call, &format!("call to `{text}`")))
                }
                _ => Ok(None),
            },
            "lambda_expression" => Err(src.unsupported(
                call,
                "lambda (a lambda is supported only as the function of a std::thread)",
            )),
            "template_function" => Err(src.unsupported(call, &template_call(&src, call, f))),
            _ => Ok(None),
        }
    }

    /// `std::atomic_load` (and the other C atomic functions, see [`STD_C_FUNCTIONS`]): the
    /// name node `atomic_load`, so that the C code lowers the call. Anything else is returned
    /// unchanged.
    pub(super) fn std_callee<'t>(&self, f: Node<'t>) -> Node<'t> {
        if !self.is_cpp() || f.kind() != "qualified_identifier" {
            return f;
        }
        match crate::frontend::cpp::unqualify(&self.src, f) {
            Some(id)
                if id.kind() == "identifier" && STD_C_FUNCTIONS.contains(&self.src.text(id)) =>
            {
                id
            }
            _ => f,
        }
    }

    /// C++ expression kinds the C code does not know (reached for C++ only).
    pub(super) fn cpp_expr(&mut self, n: Node) -> R<TExpr> {
        let src = self.src;
        let unsupported = |what: &str| Err(src.unsupported(n, what));
        match n.kind() {
            // `if (c)`, `while (c)`, `switch (c)`.
            "condition_clause" => {
                if n.child_by_field_name("initializer").is_some() {
                    return unsupported("init-statement in a condition");
                }
                match n.child_by_field_name("value") {
                    Some(v) if v.kind() == "declaration" => {
                        Err(src.unsupported(v, "declaration in a condition"))
                    }
                    Some(v) if v.kind() == "comma_expression" => {
                        Err(src.unsupported(v, "comma operator"))
                    }
                    Some(v) => self.texpr(v),
                    None => unsupported("condition"),
                }
            }
            "new_expression" => self.new_expr(n),
            "delete_expression" => self.delete_expr(n),
            "lambda_expression" => {
                unsupported("lambda (a lambda is supported only as the function of a std::thread)")
            }
            "this" => self.this_value(n),
            "throw_expression" => unsupported("exceptions (`throw` is not supported)"),
            "co_await_expression" => unsupported("coroutines"),
            "qualified_identifier" if self.class_constant(n).is_some() => {
                Ok((Expr::Const(self.class_constant(n).unwrap_or(0)), IntTy::I32))
            }
            "qualified_identifier" if self.names_static_var(n) => unsupported(&format!(
                "`{}`: a static data member named through its class (name it in a member \
                 function of the class, where it is in scope)",
                src.text(n)
            )),
            "qualified_identifier" => {
                let text = src.text(n);
                if crate::frontend::cpp::mem_order_c_name(&src, n).is_some() {
                    unsupported(&format!("memory order `{text}` used as a value"))
                } else {
                    unsupported(&format!("`{text}`"))
                }
            }
            "user_defined_literal" | "raw_string_literal" => unsupported("string literal"),
            k => unsupported(&format!("expression `{k}`")),
        }
    }

    /// The end of a block: the guards it declared go out of scope; their mutexes are unlocked
    /// (in reverse declaration order) unless control never gets here (`returned`: the
    /// `return` / `break` / `continue` that left already unlocked them).
    pub(super) fn cpp_block_end(&mut self, returned: bool) -> R<()> {
        let (depth, level) = (self.scopes.len(), self.inlines.len());
        while let Some(g) = self.cpp.guards.last() {
            if g.depth != depth || g.inline != level {
                break;
            }
            let Some(g) = self.cpp.guards.pop() else {
                break;
            };
            if !returned {
                self.emit_release(g.stmt, &g.release)?;
            }
        }
        Ok(())
    }

    /// `goto` (to the labeled statement spanning the bytes `label`): unlocks the guards of the
    /// current body whose scope the jump leaves — declared in a block that does not contain
    /// the label, or after the label in the block that does — innermost first.
    pub(super) fn cpp_release_guards_for_goto(
        &mut self,
        goto: Node,
        label: (usize, usize),
    ) -> R<()> {
        let level = self.inlines.len();
        let leaving: Vec<StmtId> = self
            .cpp
            .guards
            .iter()
            .filter(|g| g.inline == level)
            .map(|g| g.stmt)
            .filter(|&s| {
                let decl = self.cx.stmts.get(s).map(|st| st.span);
                !decl.is_some_and(|d| super::goto::in_scope_at(goto, (d.start, d.end), label))
            })
            .collect();
        self.release_guards(|g| g.inline == level && leaving.contains(&g.stmt))
    }

    /// `return` in an inlined body: unlocks the guards of that body (after the value was
    /// computed, before the jump to the end of the body).
    pub(super) fn cpp_release_guards_on_return(&mut self) -> R<()> {
        let level = self.inlines.len();
        self.release_guards(|g| g.inline == level)
    }

    /// `x.load(...)` on an atomic global, `a[i].load(...)`, `s.f.load(...)`, `p->load(...)`
    /// (the receiver is not a name: the lowering checks that it is an atomic; the await-loop
    /// test also scans it for effects) and `std::atomic_load[_explicit](...)`: reads with no
    /// other effect (for the await-loop test).
    pub(super) fn cpp_is_load_call(&self, call: Node) -> bool {
        if !self.is_cpp() {
            return false;
        }
        let Some(f) = call.child_by_field_name("function") else {
            return false;
        };
        match f.kind() {
            "field_expression" => {
                let method = f.child_by_field_name("field").map(|m| self.src.text(m));
                let obj = f.child_by_field_name("argument").map(strip_parens);
                method == Some("load")
                    && obj.is_some_and(|o| {
                        o.kind() != "identifier"
                            || match self.lookup(self.src.text(o)) {
                                Name::Global(loc) => self.global_atomic(loc),
                                // A local object or a member of the object of a member
                                // function (`lower/class.rs`).
                                Name::LocalObject(_, i) => {
                                    self.local_tys.get(i).is_some_and(|t| t.is_atomic())
                                }
                                _ => false,
                            }
                    })
            }
            "qualified_identifier" => {
                matches!(
                    std_name(&self.src, f),
                    Some("atomic_load" | "atomic_load_explicit")
                ) && matches!(self.lookup("atomic_load"), Name::Unknown)
            }
            _ => false,
        }
    }

    /// The signature of a function passed to `std::thread`: `void f()`, `void f(void)`,
    /// `void f(T x)` for an integer type `T` or `void f(T *p)` for a (non-atomic) pointer
    /// (`x` / `p` receives the thread's argument).
    pub(super) fn cpp_thread_signature(
        &mut self,
        def: Node,
        fdecl: Node,
        name: &str,
        by: SpawnedBy,
    ) -> R<()> {
        let src = self.src;
        if by.pthread || by.c11 {
            return Err(src.unsupported(
                def,
                &format!(
                    "thread function `{name}` passed to both std::thread and \
                     pthread_create/thrd_create (their thread functions have different \
                     signatures)"
                ),
            ));
        }
        let param = self.thread_param(def, fdecl, name)?;
        if let Some((Some(pname), ty)) = param {
            let pname = src.text(pname).to_string();
            self.bind_param(&pname, ty);
        }
        Ok(())
    }

    /// Binds the thread parameter `name` of type `ty` to a fresh register.
    fn bind_param(&mut self, name: &str, ty: ParamTy) {
        let r = self.new_reg(name, ty.ty);
        if let Some(to) = ty.pointee {
            self.set_pointee(r, to);
        }
        self.param = Some(r);
        self.bind(name, Binding::Var(r));
    }

    /// The one parameter `p` of a thread function or lambda: `Some(None)` for `void`,
    /// `Some(Some(..))` for an integer by value or a non-atomic pointer, `None` for anything
    /// else (the caller says what is supported).
    fn param_decl<'t>(&self, p: Node<'t>) -> Option<ThreadParam<'t>> {
        let src = self.src;
        if p.kind() != "parameter_declaration" {
            return None;
        }
        let pspec = types::decl_spec(&src, &self.cx.types, p).ok()?;
        if pspec.storage.is_some() {
            return None;
        }
        let d = p.child_by_field_name("declarator");
        match (pspec.ty, d) {
            (BaseTy::Void, None) if !pspec.atomic => Some(None),
            (BaseTy::Int(t), None) if !pspec.atomic => Some(Some((
                None,
                ParamTy {
                    ty: t,
                    pointee: None,
                },
            ))),
            (_, Some(d)) => {
                let decl = types::declarator(&src, &pspec, d, &mut |_| Ok(1)).ok()?;
                let ty = match decl.ty {
                    Ty::Int { ty, atomic: false } => ParamTy { ty, pointee: None },
                    Ty::Ptr { to, atomic: false } if *to != Ty::Thread => ParamTy {
                        ty: IntTy::I64,
                        pointee: Some(*to),
                    },
                    _ => return None,
                };
                Some(Some((Some(decl.name), ty)))
            }
            _ => None,
        }
    }

    // ----- threads --------------------------------------------------------------------------

    /// The parameter of the `std::thread` function `name` (definition `def`, declarator
    /// `fdecl`), checking its signature.
    fn thread_param<'t>(&self, def: Node<'t>, fdecl: Node<'t>, name: &str) -> R<ThreadParam<'t>> {
        let src = self.src;
        let bad = || {
            src.unsupported(
                def,
                &format!(
                    "thread function `{name}` of a std::thread must be `void {name}()`, \
                     `void {name}(int)` or `void {name}(T *)` (one integer or pointer \
                     parameter)"
                ),
            )
        };
        let spec = types::decl_spec(&src, &self.cx.types, def).map_err(|_| bad())?;
        let direct = def.child_by_field_name("declarator") == Some(fdecl);
        if spec.ty != BaseTy::Void || spec.atomic || !direct {
            return Err(bad());
        }
        let params = fdecl
            .child_by_field_name("parameters")
            .map(named_children)
            .unwrap_or_default();
        match params.as_slice() {
            [] => Ok(None),
            [p] => self.param_decl(*p).ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    /// A declaration in a function body whose type is a C++ class: `std::thread`, the lock
    /// guards, and refused library types. `None` for other declarations (lowered as C).
    fn cpp_decl(&mut self, s: Node, sid: StmtId) -> R<Option<bool>> {
        let src = self.src;
        let Some(ty) = s.child_by_field_name("type") else {
            return Ok(None);
        };
        if let Some(done) = self.backoff_decl(s)? {
            return Ok(Some(done));
        }
        match std_name(&src, ty) {
            Some("thread") => self.thread_decl(s).map(|_| Some(false)),
            Some("lock_guard" | "unique_lock" | "scoped_lock" | "shared_lock") => {
                self.guard_decl(s, ty, sid).map(|_| Some(false))
            }
            Some("unique_ptr") => self.unique_decl(s, Some(ty), sid).map(|_| Some(false)),
            Some(name @ ("shared_ptr" | "weak_ptr" | "auto_ptr")) => {
                Err(src.unsupported(ty, &format!("`std::{name}` {}", super::unique_ptr::SHARED)))
            }
            _ if src.text(ty) == "auto" => self.auto_decl(s, sid),
            Some(name) if UNSUPPORTED_STD_TYPES.contains(&name) => {
                let text = src.text(ty);
                Err(src.unsupported(ty, &format!("`{text}` is not supported")))
            }
            _ => Ok(None),
        }
    }

    /// `auto p = std::make_unique<T>(...)` / `auto q = std::move(p)` declare a
    /// `std::unique_ptr`; `auto` with `std::make_shared` is refused by name; other `auto`
    /// declarations are lowered (and refused) as C.
    fn auto_decl(&mut self, s: Node, sid: StmtId) -> R<Option<bool>> {
        let src = self.src;
        let mut c = s.walk();
        let values: Vec<Node> = s
            .children_by_field_name("declarator", &mut c)
            .filter_map(|d| d.child_by_field_name("value"))
            .collect();
        let Some(&v) = values.first() else {
            return Ok(None);
        };
        if let Some(name) = shared_maker(&src, v) {
            return Err(src.unsupported(
                v,
                &format!(
                    "`std::{name}` (`std::shared_ptr`) {}",
                    super::unique_ptr::SHARED
                ),
            ));
        }
        let owning = super::unique_ptr::make_unique_parts(&src, v).is_some()
            || super::unique_ptr::moved_owner(&src, v)
                .is_some_and(|q| self.owner_node(q).is_some())
            || self.owner_node(v).is_some();
        if owning {
            return self.unique_decl(s, None, sid).map(|_| Some(false));
        }
        let callee = strip_parens(v)
            .child_by_field_name("function")
            .and_then(|f| self.cx.fn_defs.get(src.text(f)))
            .and_then(|def| def.child_by_field_name("type"));
        if callee.is_some_and(|t| std_name(&src, t) == Some("unique_ptr")) {
            return Err(src.unsupported(
                v,
                "a std::unique_ptr returned from a function (return `p.release()` as a raw \
                 pointer and own it with `std::unique_ptr<T> q(f());`)",
            ));
        }
        Ok(None)
    }

    /// Rejects a redefinition of `name` in the innermost scope.
    pub(super) fn check_redefinition(&self, name_node: Node, name: &str) -> R<()> {
        let redefined = self
            .scopes
            .last()
            .is_some_and(|s| s.iter().any(|(n, _)| n == name));
        if redefined
            || self
                .cpp
                .guards
                .iter()
                .any(|g| g.name == name && g.depth == self.scopes.len())
        {
            return Err(self
                .src
                .error(name_node, &format!("redefinition of `{name}`")));
        }
        Ok(())
    }

    /// Threads are created only in the main thread's function.
    fn threads_in_main(&self, at: Node) -> R<()> {
        if self.mode == Mode::Main {
            return Ok(());
        }
        let main_name = self.cx.main_name;
        Err(self.src.unsupported(
            at,
            &format!(
                "std::thread outside {main_name} (threads can only be created in {main_name})"
            ),
        ))
    }

    /// `std::thread t(f);`, `std::thread t{f};`, `std::thread t(f, arg);`, `std::thread
    /// t([...]{ ... });`, `std::thread t = std::thread(f, ...);`: a [`Instr::Spawn`] whose
    /// thread id goes to the handle `t`. `std::thread t;` and `std::thread t[N];` declare
    /// handles without a thread (`t = std::thread(f)` / `t[i] = std::thread(f, i)` starts one).
    fn thread_decl(&mut self, s: Node) -> R<()> {
        let src = self.src;
        self.threads_in_main(s)?;
        let mut c = s.walk();
        let decls: Vec<Node> = s.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            return Err(src.unsupported(s, "declaration that declares no variable"));
        }
        for d in decls {
            if d.kind() == "array_declarator"
                || (d.kind() == "init_declarator"
                    && d.child_by_field_name("declarator")
                        .is_some_and(|a| a.kind() == "array_declarator"))
            {
                self.thread_array_decl(s, d)?;
                continue;
            }
            let (name_node, args) = match self.thread_copy_init(d)? {
                Some(v) => v,
                None => ctor_args(&src, d)?,
            };
            let name = src.text(name_node).to_string();
            self.check_redefinition(name_node, &name)?;
            let h = self.new_reg(&name, IntTy::I64);
            if !args.is_empty() {
                let (func, arg) = self.thread_function(d, &args)?;
                self.spawn_into(HandleRef::One(h), func, arg);
            }
            self.bind(&name, Binding::Handle(h));
        }
        Ok(())
    }

    /// `std::thread t = std::thread(f, ...);` (or `= std::thread{...}`): the name and the
    /// arguments of the constructed thread. `None` for the other declarators.
    fn thread_copy_init<'t>(&self, d: Node<'t>) -> R<Option<(Node<'t>, Vec<CtorArg<'t>>)>> {
        let src = self.src;
        if d.kind() != "init_declarator" {
            return Ok(None);
        }
        let mut c = d.walk();
        if !d.children(&mut c).any(|ch| ch.kind() == "=") {
            return Ok(None);
        }
        let (Some(name), Some(value)) = (
            d.child_by_field_name("declarator")
                .filter(|n| n.kind() == "identifier"),
            d.child_by_field_name("value"),
        ) else {
            return Ok(None);
        };
        match self.thread_ctor(value) {
            Some(args) => Ok(Some((name, args))),
            None => Err(src.unsupported(
                value,
                "initialisation of a std::thread with something other than `std::thread(f, ...)`",
            )),
        }
    }

    /// `std::thread t[N];` in main: an array of handles without threads, like `pthread_t
    /// t[N];` (an initialiser is unsupported: assign the elements).
    fn thread_array_decl(&mut self, s: Node, d: Node) -> R<()> {
        let src = self.src;
        if d.kind() == "init_declarator" {
            let at = d.child_by_field_name("value").unwrap_or(d);
            return Err(src.unsupported(
                at,
                "initialiser for an array of std::thread (assign the elements: `t[i] = \
                 std::thread(f, i);`)",
            ));
        }
        let spec = types::decl_spec(&src, &self.cx.types, s)?;
        let decl = types::declarator(&src, &spec, d, &mut |n| self.const_here(n))?;
        let name = src.text(decl.name).to_string();
        self.check_redefinition(decl.name, &name)?;
        match decl.ty {
            Ty::Array(t, n) if *t == Ty::Thread => {
                let b = self.handle_regs(&name, Some(n));
                self.bind(&name, b);
                Ok(())
            }
            _ => Err(src.unsupported(
                d,
                "this array of std::thread (only one-dimensional arrays of handles are supported)",
            )),
        }
    }

    /// The arguments of a thread constructed by the expression `e`: `std::thread(f, ...)`,
    /// `std::thread{f, ...}` (or unqualified `thread`); `None` for any other expression.
    fn thread_ctor<'t>(&self, e: Node<'t>) -> Option<Vec<CtorArg<'t>>> {
        let src = self.src;
        let e = strip_parens(e);
        let (ty, args) = match e.kind() {
            "call_expression" => (
                e.child_by_field_name("function")?,
                e.child_by_field_name("arguments")?,
            ),
            "compound_literal_expression" => (
                e.child_by_field_name("type")?,
                e.child_by_field_name("value")?,
            ),
            _ => return None,
        };
        // An unqualified `thread(...)` is a std::thread unless `thread` names something else.
        let shadowed = ty.kind() == "identifier" && !matches!(self.lookup("thread"), Name::Unknown);
        let is_thread = std_name(&src, ty) == Some("thread") && !shadowed;
        is_thread.then(|| {
            named_children(args)
                .into_iter()
                .map(CtorArg::Expr)
                .collect()
        })
    }

    /// The thread function and argument of a thread constructed with `args` (written at `d`):
    /// a function defined in the file (`f, arg`) or a lambda.
    fn thread_function(&mut self, d: Node, args: &[CtorArg]) -> R<(FuncId, Expr)> {
        let src = self.src;
        let Some((first, rest)) = args.split_first() else {
            return Err(src.unsupported(
                d,
                "std::thread without a thread function (it runs no thread)",
            ));
        };
        let f = strip_parens(first.node());
        match (first, f.kind()) {
            (CtorArg::Element(..), _) => Err(src.unsupported(
                first.node(),
                "thread function must be given by name or as a lambda",
            )),
            (_, "lambda_expression") => self.lambda_thread(f, rest),
            (_, "identifier" | "type_identifier") => self.named_thread(f, rest),
            _ => Err(src.unsupported(
                first.node(),
                "thread function must be given by name or as a lambda",
            )),
        }
    }

    /// `h = std::thread(f, ...);` in main, for a handle `h` declared `std::thread h;` or an
    /// element `t[i]` of a `std::thread t[N];`: starts the thread into the handle. (Assigning
    /// to a handle whose thread was not joined calls `std::terminate` in C++; that is not
    /// modelled: the old thread keeps running and can no longer be joined.)
    fn thread_assign(&mut self, e: Node, left: Node, args: &[CtorArg]) -> R<()> {
        let src = self.src;
        self.threads_in_main(e)?;
        let target = strip_parens(left);
        let id = match target.kind() {
            "subscript_expression" => target
                .child_by_field_name("argument")
                .map(strip_parens)
                .unwrap_or(target),
            _ => target,
        };
        if id.kind() != "identifier"
            || !matches!(
                self.lookup(src.text(id)),
                Name::Handle(_) | Name::HandleArray(..)
            )
        {
            let text = src.text(target);
            let main_name = self.cx.main_name;
            return Err(src.unsupported(
                target,
                &format!(
                    "assignment of a std::thread to `{text}` (only to a std::thread variable of \
                     {main_name} or an element of an array of them)"
                ),
            ));
        }
        // C++17: the right operand of `=` is evaluated first.
        let (func, arg) = self.thread_function(e, args)?;
        let h = self.handle_ref(target)?;
        self.spawn_into(h, func, arg);
        Ok(())
    }

    /// The place a constructor argument names, if it is in memory: an expression's place, a
    /// name the grammar parsed as a type (`std::lock_guard<std::mutex> g(m);`) or an array
    /// element it parsed as an abstract array declarator (`g(locks[i])`).
    fn ctor_place(&mut self, a: CtorArg) -> R<Option<Place>> {
        let src = self.src;
        match a {
            CtorArg::Expr(n) => self.place_of(n),
            CtorArg::Name(n) => {
                let name = src.text(n);
                Ok(match self.lookup(name) {
                    Name::Global(loc) | Name::Mutex(loc) => Some(self.fixed_place(loc)),
                    Name::Object(i) => self.cx.objects.get(i).map(|o| Place {
                        addr: Addr::Fixed(o.base),
                        ty: o.ty.clone(),
                    }),
                    Name::LocalObject(r, i) => Some(self.local_place(r, i)),
                    Name::Unknown => {
                        return Err(src.error(n, &format!("undeclared identifier `{name}`")))
                    }
                    _ => None,
                })
            }
            CtorArg::Element(arr, index) => {
                let name = src.text(arr);
                let base = match self.lookup(name) {
                    Name::Object(i) => self.cx.objects.get(i).cloned(),
                    Name::Unknown => {
                        return Err(src.error(arr, &format!("undeclared identifier `{name}`")))
                    }
                    _ => None,
                };
                let Some(o) = base.filter(|o| matches!(o.ty, Ty::Array(..))) else {
                    return Err(src.unsupported(
                        arr,
                        &format!(
                            "argument `{name}[...]` (only elements of a global or static \
                             array are supported here)"
                        ),
                    ));
                };
                let Ty::Array(elem, len) = &o.ty else {
                    return Err(src.internal("array object"));
                };
                let size = self.cx.types.size(elem);
                let i = self.expr(index)?;
                let at = index.parent().unwrap_or(index);
                self.element(at, &Addr::Fixed(o.base), elem, *len, size, i)
                    .map(Some)
            }
        }
    }

    /// The integer value of a constructor argument: an expression, or a name / element the
    /// grammar parsed as a type (`std::thread t(f, x);`), read like the identifier `x`.
    fn ctor_arg_value(&mut self, a: CtorArg) -> R<Expr> {
        let src = self.src;
        match a {
            CtorArg::Expr(n) => self.expr(n),
            CtorArg::Name(n) => {
                if n.kind() != "type_identifier" {
                    let text = src.text(n);
                    return Err(src.unsupported(n, &format!("argument `{text}`")));
                }
                let name = src.text(n);
                match self.lookup(name) {
                    Name::Local(r) => Ok(Expr::Reg(r)),
                    Name::Global(loc) => {
                        let p = self.fixed_place(loc);
                        Ok(self.read_place(n, &p)?.0)
                    }
                    other => Err(self.name_error(n, name, other, false)),
                }
            }
            CtorArg::Element(..) => {
                let p = self
                    .ctor_place(a)?
                    .ok_or_else(|| src.internal("element place"))?;
                Ok(self.read_place(a.node(), &p)?.0)
            }
        }
    }

    /// The pointer value of a constructor argument passed to a pointer parameter: a pointer
    /// expression (`&x`, `a`, `p`, `nullptr`, ...), or a name / element the grammar parsed as
    /// a type (a pointer variable, an array name, a pointer cell).
    fn ctor_arg_pointer(&mut self, a: CtorArg) -> R<Expr> {
        let src = self.src;
        let not_pointer = |n: Node| {
            let text = src.text(n);
            Err(src.error(n, &format!("`{text}` is not a pointer")))
        };
        match a {
            CtorArg::Expr(n) => Ok(self.ptr_value(n)?.0),
            CtorArg::Name(n) if n.kind() == "type_identifier" => {
                let name = src.text(n);
                match self.lookup(name) {
                    Name::Local(r) if self.reg_ptr.get(r).is_some_and(|p| p.is_some()) => {
                        Ok(Expr::Reg(r))
                    }
                    Name::Local(_) => not_pointer(n),
                    _ => match self.ctor_place(a)? {
                        Some(p) => self.pointer_of_place(n, &p),
                        None => {
                            let other = self.lookup(name);
                            Err(self.name_error(n, name, other, false))
                        }
                    },
                }
            }
            CtorArg::Name(n) => {
                let text = src.text(n);
                Err(src.unsupported(n, &format!("argument `{text}`")))
            }
            CtorArg::Element(..) => {
                let p = self
                    .ctor_place(a)?
                    .ok_or_else(|| src.internal("element place"))?;
                self.pointer_of_place(a.node(), &p)
            }
        }
    }

    /// The pointer value of place `p` used as a value: an array decays to its first element, a
    /// pointer cell is read.
    fn pointer_of_place(&mut self, n: Node, p: &Place) -> R<Expr> {
        match &p.ty {
            Ty::Array(..) => Ok(super::memory::addr_value(&p.addr)),
            Ty::Ptr { .. } => Ok(self.read_place(n, p)?.0),
            _ => {
                let text = self.src.text(n);
                Err(self.src.error(n, &format!("`{text}` is not a pointer")))
            }
        }
    }

    /// The thread argument for a thread function with parameter `param` and the remaining
    /// constructor arguments `rest` (`at` names the function in messages).
    fn thread_arg(
        &mut self,
        at: Node,
        fname: &str,
        param: Option<ParamTy>,
        rest: &[CtorArg],
    ) -> R<Expr> {
        let src = self.src;
        match (param, rest) {
            (None, []) => Ok(Expr::Const(0)),
            (
                Some(ParamTy {
                    pointee: Some(_), ..
                }),
                [a],
            ) => self.ctor_arg_pointer(*a),
            (Some(t), [a]) => {
                let v = self.ctor_arg_value(*a)?;
                Ok(self.convert(v, t.ty))
            }
            (None, [a, ..]) => Err(src.error(
                a.node(),
                &format!("thread function `{fname}` takes no argument"),
            )),
            (Some(_), []) => Err(src.error(
                at,
                &format!("thread function `{fname}` expects one argument"),
            )),
            (Some(_), [_, b, ..]) => {
                Err(src.unsupported(b.node(), "more than one argument for a thread function"))
            }
        }
    }

    /// `std::thread t(f, args...)` for a function `f` defined in the file.
    fn named_thread(&mut self, f: Node, rest: &[CtorArg]) -> R<(FuncId, Expr)> {
        let src = self.src;
        let main_name = self.cx.main_name;
        let fname = src.text(f);
        let func = match self.cx.func_ids.get(fname) {
            Some(&fid) if fid != self.cx.main => fid,
            _ => {
                return Err(match self.lookup(fname) {
                    Name::Unknown => src.error(f, &format!("undeclared identifier `{fname}`")),
                    Name::Function if fname == main_name => {
                        src.unsupported(f, &format!("`{main_name}` used as a thread function"))
                    }
                    Name::Function => src.unsupported(
                        f,
                        &format!("thread function `{fname}` is not defined in this file"),
                    ),
                    _ => src.error(f, &format!("`{fname}` is not a function")),
                })
            }
        };
        let def = self.cx.fn_defs.get(fname).copied();
        let fdecl = def
            .and_then(|d| d.child_by_field_name("declarator"))
            .and_then(crate::frontend::function_declarator);
        let (Some(def), Some(fdecl)) = (def, fdecl) else {
            return Err(src.internal("thread function without a definition"));
        };
        let param = self.thread_param(def, fdecl, fname)?.map(|(_, t)| t);
        let arg = self.thread_arg(f, fname, param, rest)?;
        Ok((func, arg))
    }

    /// `std::thread t([captures](params) { body }, args...)`: the body becomes a new thread
    /// function (lowered here, in the scope of its captures); at most one value is passed: one
    /// int or pointer local captured by value, or the argument of one int or pointer
    /// parameter.
    fn lambda_thread(&mut self, lambda: Node, rest: &[CtorArg]) -> R<(FuncId, Expr)> {
        let src = self.src;
        let body = lambda
            .child_by_field_name("body")
            .ok_or_else(|| src.unsupported(lambda, "lambda without a body"))?;
        let param = self.lambda_param(lambda)?;
        let captured = self.lambda_captures(lambda, body)?;
        // Several captures, or one by reference, travel in a closure object (`closure.rs`).
        let closure =
            captured.len() > 1 || !matches!(captured.first(), None | Some(Capture::Value(..)));
        if closure && param.is_some() {
            return Err(src.unsupported(
                lambda,
                "thread lambda with a parameter that also captures locals by reference or \
                 several locals (capture the parameter's value instead)",
            ));
        }
        let p = lambda.start_position();
        let name = format!("lambda@{}:{}", p.row + 1, p.column + 1);
        let mut cells = Vec::new();
        // The value passed to the thread, and the binding it gets there.
        let (arg, binding) = if closure {
            if !rest.is_empty() {
                return Err(src.error(rest[0].node(), "this lambda takes no argument"));
            }
            let (obj, c) = self.closure_object(lambda, &name, &captured)?;
            cells = c;
            (obj, None)
        } else if let Some(&Capture::Value(cname, r)) = captured.first() {
            if !rest.is_empty() {
                return Err(src.error(rest[0].node(), "this lambda takes no argument"));
            }
            let ty = ParamTy {
                ty: self.reg_tys.get(r).copied().unwrap_or(IntTy::I64),
                pointee: self.reg_ptr.get(r).cloned().flatten(),
            };
            (Expr::Reg(r), Some((cname.to_string(), ty)))
        } else {
            let arg = self.thread_arg(lambda, "lambda", param.clone().map(|(_, t)| t), rest)?;
            let binding = param.and_then(|(n, t)| n.map(|n| (src.text(n).to_string(), t)));
            (arg, binding)
        };
        let fid = self.cx.functions.len();
        self.cx.functions.push(None);
        let root_start = self.root_start;
        let f = {
            let mut l = FnLower::new(&mut *self.cx, fid, Mode::Thread);
            l.root_name = name.clone();
            l.root_start = root_start;
            l.scopes.push(Vec::new());
            let taken = l.cx.taken_names(lambda);
            l.taken.push(taken);
            l.bind_thread_locals(lambda)?;
            if let Some((pname, ty)) = binding {
                l.bind_param(&pname, ty);
            }
            if closure {
                l.bind_closure(&cells);
            }
            let returned = l.block(body, None)?;
            if !returned {
                l.emit_return();
            }
            l.finish_goto_loops();
            Function {
                name,
                span: src.span(lambda),
                param: if l.param_used { l.param } else { None },
                result: l.result,
                reg_names: l.regs,
                body: l.body,
                stmt_of: l.stmt_of,
            }
        };
        if let Some(slot) = self.cx.functions.get_mut(fid) {
            *slot = Some(f);
        }
        Ok((fid, arg))
    }

    /// The parameter of a thread lambda (`[](int k) { ... }`), checking its declarator: no
    /// parameter or one integer or pointer parameter, `-> void` and `mutable` allowed.
    fn lambda_param<'t>(&self, lambda: Node<'t>) -> R<ThreadParam<'t>> {
        let src = self.src;
        let Some(d) = lambda.child_by_field_name("declarator") else {
            return Ok(None);
        };
        let bad = |n: Node, what: &str| Err(src.unsupported(n, what));
        let mut param = None;
        for part in named_children(d) {
            match part.kind() {
                "parameter_list" => {
                    let params = named_children(part);
                    match params.as_slice() {
                        [] => {}
                        [p] => {
                            match self.param_decl(*p) {
                                Some(x) => param = x,
                                None => return bad(
                                    *p,
                                    "lambda parameter (only one integer or pointer parameter by \
                                     value is supported)",
                                ),
                            }
                        }
                        _ => {
                            return bad(
                                part,
                                "lambda parameters (only one integer or pointer parameter by \
                                 value is supported)",
                            )
                        }
                    }
                }
                "trailing_return_type" => {
                    let void = named_children(part).first().is_some_and(|t| {
                        types::decl_spec(&src, &self.cx.types, *t)
                            .is_ok_and(|s| s.ty == BaseTy::Void)
                            && t.child_by_field_name("declarator").is_none()
                    });
                    if !void {
                        return bad(part, "thread lambda returning a value");
                    }
                }
                "type_qualifier" if src.text(part) == "mutable" => {}
                _ => {
                    let text = src.text(part);
                    return bad(part, &format!("`{text}` in a lambda"));
                }
            }
        }
        Ok(param)
    }

    /// The locals of the enclosing function that a thread lambda captures by value (name and
    /// register, in order of first use). By-reference captures of locals, `this` and init
    /// captures are unsupported.
    fn lambda_captures(&self, lambda: Node, body: Node) -> R<Vec<Capture<'a>>> {
        let src = self.src;
        let (default, names) = super::closure::capture_list(&src, lambda)?;
        let mut out: Vec<Capture<'a>> = Vec::new();
        let captured = |n: Node, out: &mut Vec<Capture<'a>>, by_ref: bool| -> R<()> {
            let name = src.text(n);
            let seen = |out: &Vec<Capture<'a>>| {
                out.iter().any(|c| match c {
                    Capture::Value(m, _) | Capture::Ref(m, ..) | Capture::Copy(m, ..) => *m == name,
                })
            };
            match self.lookup(name) {
                Name::Local(r) => {
                    if by_ref {
                        return Err(
                            src.internal(&format!("`{name}` captured by reference in a register"))
                        );
                    }
                    if !seen(out) {
                        out.push(Capture::Value(name, r));
                    }
                    Ok(())
                }
                Name::LocalObject(r, i) => {
                    let ty = self.local_tys.get(i).cloned().unwrap_or(Ty::Void);
                    if !by_ref && !matches!(ty, Ty::Int { .. } | Ty::Ptr { .. }) {
                        return Err(src.unsupported(
                            n,
                            &format!(
                                "capture of array or struct `{name}` by value (capture it by \
                                 reference)"
                            ),
                        ));
                    }
                    if !seen(out) {
                        out.push(if by_ref {
                            Capture::Ref(name, r, ty)
                        } else {
                            Capture::Copy(name, r, ty)
                        });
                    }
                    Ok(())
                }
                Name::Handle(_) => Err(src.unsupported(
                    n,
                    &format!("thread handle `{name}` captured by a thread lambda"),
                )),
                Name::Forbidden => Err(src.unsupported(
                    n,
                    &format!("use of `{name}` (parameters of main are not supported)"),
                )),
                Name::Unknown => Err(src.error(n, &format!("undeclared identifier `{name}`"))),
                _ => Err(src.unsupported(
                    n,
                    &format!("capture of `{name}` (only int and pointer locals can be captured)"),
                )),
            }
        };
        for &(n, by_ref) in &names {
            captured(n, &mut out, by_ref)?;
        }
        if default != DefaultCapture::None {
            // The locals of the enclosing function that the body uses.
            let mut cursor = body.walk();
            let mut depth = 0usize;
            let mut seen = 0usize;
            loop {
                let node = cursor.node();
                seen += 1;
                if seen > MAX_CAPTURE_SCAN {
                    return Err(src.unsupported(lambda, "lambda body too large"));
                }
                // `g(m)` of a lock guard parses as a declarator with a parameter type `m`.
                if matches!(node.kind(), "identifier" | "type_identifier")
                    && matches!(
                        self.lookup(src.text(node)),
                        Name::Local(_) | Name::LocalObject(..) | Name::Handle(_) | Name::Forbidden
                    )
                {
                    captured(node, &mut out, default == DefaultCapture::Ref)?;
                }
                if cursor.goto_first_child() {
                    depth += 1;
                    continue;
                }
                let mut done = false;
                loop {
                    if depth == 0 {
                        done = true;
                        break;
                    }
                    if cursor.goto_next_sibling() {
                        break;
                    }
                    if !cursor.goto_parent() {
                        done = true;
                        break;
                    }
                    depth -= 1;
                }
                if done {
                    break;
                }
            }
        }
        Ok(out)
    }

    // ----- lock guards ----------------------------------------------------------------------

    /// `std::lock_guard<std::mutex> g(m);`, `std::unique_lock<std::mutex> g(m);`,
    /// `std::scoped_lock g(m);` (also with `{m}` and without template arguments) on a
    /// `std::mutex`, `std::recursive_mutex` or `std::shared_mutex` (its write lock), and
    /// `std::shared_lock<std::shared_mutex> g(m);` (a read lock): locks `m` like `m.lock()`
    /// (`m.lock_shared()`); the block's exits unlock it.
    fn guard_decl(&mut self, s: Node, ty: Node, sid: StmtId) -> R<()> {
        let src = self.src;
        let kind = std_name(&src, ty).unwrap_or("lock_guard");
        if !directly_in_block(s) {
            return Err(src.unsupported(
                s,
                &format!("std::{kind} that is not directly in a block (put it in braces)"),
            ));
        }
        let shared = kind == "shared_lock";
        let template = self.guard_template(ty, shared)?;
        let mut c = s.walk();
        let decls: Vec<Node> = s.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            return Err(src.unsupported(s, "declaration that declares no variable"));
        }
        for d in decls {
            let (name_node, args) = ctor_args(&src, d)?;
            let name = src.text(name_node).to_string();
            self.check_redefinition(name_node, &name)?;
            let m = match args.as_slice() {
                [m] => *m,
                [] => {
                    return Err(src.unsupported(
                        d,
                        &format!("std::{kind} without a mutex (it locks nothing)"),
                    ))
                }
                [_, extra, ..] => {
                    let what = if kind == "scoped_lock" {
                        "std::scoped_lock of several mutexes"
                    } else {
                        "lock guard options (std::defer_lock, std::adopt_lock, ...)"
                    };
                    return Err(src.unsupported(extra.node(), what));
                }
            };
            let mut place = self.guard_mutex(m, shared, template.as_ref())?;
            if let Addr::Computed { ptr, lo, hi } = &place.addr {
                if !matches!(ptr, Expr::Const(_)) {
                    let t = self.new_temp(IntTy::I64);
                    self.emit(Instr::Assign {
                        dst: t,
                        val: ptr.clone(),
                    });
                    place.addr = Addr::Computed {
                        ptr: Expr::Reg(t),
                        lo: *lo,
                        hi: *hi,
                    };
                }
            }
            let what = format!("`{}`", src.text(strip_parens(m.node())));
            self.guard_lock(&place, shared, &format!("std::{kind}"), &what);
            self.cpp.guards.push(Guard {
                depth: self.scopes.len(),
                inline: self.inlines.len(),
                stmt: sid,
                name,
                release: Release::Unlock {
                    addr: place.addr,
                    held: super::cpp_sync::Held {
                        ty: place.ty,
                        shared,
                    },
                    unique: kind == "unique_lock",
                    what,
                },
            });
        }
        Ok(())
    }

    /// The lockable type named by the template arguments of a guard's type `ty`, if it has
    /// any: exactly one of `std::mutex`, `std::recursive_mutex`, `std::shared_mutex` (only
    /// the last for a `std::shared_lock`).
    fn guard_template(&self, ty: Node, shared: bool) -> R<Option<Ty>> {
        let src = self.src;
        let inner = crate::frontend::cpp::unqualify(&src, ty).unwrap_or(ty);
        if inner.kind() != "template_type" {
            return Ok(None);
        }
        let args = inner
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let lockable = |a: &Node| {
            if a.kind() != "type_descriptor" || a.child_by_field_name("declarator").is_some() {
                return None;
            }
            let t = a.child_by_field_name("type")?;
            match std_name(&src, t)? {
                "mutex" if !shared => Some(Ty::Mutex),
                "recursive_mutex" if !shared => Some(Ty::Sync(types::SyncTy::RecursiveMutex)),
                "shared_mutex" => Some(Ty::Sync(types::SyncTy::RwLock)),
                _ => None,
            }
        };
        match args.as_slice() {
            [a] => match lockable(a) {
                Some(t) => Ok(Some(t)),
                None => {
                    let text = src.text(ty);
                    let which = if shared {
                        "std::shared_lock is supported for one std::shared_mutex only"
                    } else {
                        "lock guards are supported for one std::mutex, std::recursive_mutex or \
                         std::shared_mutex only"
                    };
                    Err(src.unsupported(ty, &format!("`{text}` ({which})")))
                }
            },
            _ => {
                let text = src.text(ty);
                Err(src.unsupported(ty, &format!("`{text}` (a lock guard of one object only)")))
            }
        }
    }

    /// The object a lock guard locks: a global or static one, an array element or a struct
    /// member (`m`, `locks[i]`, `s.m`, `*p`, `p->m`), of the guard's template type if it has
    /// one, else a `std::mutex`, `std::recursive_mutex` or `std::shared_mutex` (with `shared`,
    /// a `std::shared_mutex`).
    fn guard_mutex(&mut self, m: CtorArg, shared: bool, template: Option<&Ty>) -> R<Place> {
        let src = self.src;
        let n = strip_parens(m.node());
        let text = src.text(n);
        let want = match template {
            Some(t) => format!("a {}", super::cpp_sync::class_name(t)),
            None if shared => "a std::shared_mutex".to_string(),
            None => "a std::mutex, std::recursive_mutex or std::shared_mutex".to_string(),
        };
        let fits = |t: &Ty| match template {
            Some(want) => t == want,
            None => {
                matches!(t, Ty::Sync(types::SyncTy::RwLock))
                    || (!shared && matches!(t, Ty::Mutex | Ty::Sync(types::SyncTy::RecursiveMutex)))
            }
        };
        match self.ctor_place(m)? {
            Some(p) if fits(&p.ty) => Ok(p),
            Some(_) => Err(src.error(n, &format!("`{text}` is not {want}"))),
            None if matches!(n.kind(), "identifier" | "type_identifier") => {
                match self.lookup(text) {
                    Name::Unknown => Err(src.error(n, &format!("undeclared identifier `{text}`"))),
                    _ => Err(src.error(n, &format!("`{text}` is not {want}"))),
                }
            }
            None => Err(src.unsupported(
                n,
                &format!("lock guard on `{text}` (only an object in memory can be locked)"),
            )),
        }
    }

    /// Emits the unlocks of the guards selected by `which`, innermost first, without taking
    /// them out of scope.
    fn release_guards(&mut self, which: impl Fn(&Guard) -> bool) -> R<()> {
        let selected: Vec<usize> = (0..self.cpp.guards.len())
            .rev()
            .filter(|&i| which(&self.cpp.guards[i]))
            .collect();
        for i in selected {
            let (stmt, release) = (self.cpp.guards[i].stmt, self.cpp.guards[i].release.clone());
            self.emit_release(stmt, &release)?;
        }
        Ok(())
    }

    /// A guard's destructor (the unlock of its mutex, the delete of its object, the class's
    /// destructor), as instructions of its declaration `stmt`.
    fn emit_release(&mut self, stmt: StmtId, release: &Release) -> R<()> {
        let saved = self.cur_stmt;
        self.cur_stmt = stmt;
        let done = match release {
            Release::Unlock {
                addr, held, what, ..
            } => {
                self.guard_unlock(addr.clone(), held, what);
                Ok(())
            }
            Release::Delete { reg, array } => {
                self.unique_delete(*reg, *array);
                Ok(())
            }
            Release::Dtor { at, class, this } => self.scope_dtor(*at, *class, *this),
        };
        self.cur_stmt = saved;
        done
    }

    /// The mutex and its type held by the `std::unique_lock` guard `name` in scope (the
    /// innermost of that name).
    pub(super) fn unique_guard(&self, name: &str) -> Option<(Addr, Ty)> {
        let g = self.cpp.guards.iter().rev().find(|g| g.name == name)?;
        match &g.release {
            Release::Unlock {
                addr,
                held,
                unique: true,
                ..
            } if !held.shared => Some((addr.clone(), held.ty.clone())),
            _ => None,
        }
    }

    // ----- member calls ---------------------------------------------------------------------

    /// `obj.method(args)` and `ptr->method(args)`: on a `std::thread` handle (a register of
    /// `main`, or an element of an array of them), or on an object in memory — any place the
    /// C code can address (`x`, `a[i]`, `s.f`, `p->f`, `*p`, a `static` local) — that is a
    /// `std::atomic` (integer or pointer) or a `std::mutex`.
    fn member_call(&mut self, call: Node, f: Node, args: &[Node], used: bool) -> R<TExpr> {
        let src = self.src;
        if self.mode == Mode::Const {
            return Err(src.error(
                call,
                "initialiser of a global must be a constant expression",
            ));
        }
        let (Some(obj), Some(field)) = (
            f.child_by_field_name("argument"),
            f.child_by_field_name("field"),
        ) else {
            return Err(src.unsupported(call, "member call"));
        };
        let op = f
            .child_by_field_name("operator")
            .map(|o| src.text(o))
            .unwrap_or(".");
        let method = src.text(field);
        let obj = strip_parens(obj);
        if let Some(v) = self.backoff_call(obj, method, args) {
            return Ok(v);
        }
        let name = src.text(obj);
        if self.thread_ctor(obj).is_some() {
            return Err(src.unsupported(obj, TEMPORARY_THREAD));
        }
        if let Some(owner) = self.owner_node(obj).filter(|_| op == ".") {
            return self.unique_member(call, owner, method, args, used);
        }
        if op == "." {
            // Thread handles, lock guards and locals are not in memory: by name.
            let named = match obj.kind() {
                "identifier" => Some(obj),
                "subscript_expression" => obj
                    .child_by_field_name("argument")
                    .map(strip_parens)
                    .filter(|a| a.kind() == "identifier"),
                _ => None,
            };
            if let Some(id) = named {
                let idname = src.text(id);
                match self.lookup(idname) {
                    Name::Handle(_) | Name::HandleArray(..) => {
                        let h = self.handle_ref(obj)?;
                        return self.thread_member(call, obj, h, method, args, used);
                    }
                    Name::Unknown if self.cpp.guards.iter().any(|g| g.name == idname) => {
                        return Err(src.unsupported(
                            call,
                            &format!(
                                "member call on lock guard `{idname}` (a guard holds its mutex \
                                 until the end of its block)"
                            ),
                        ))
                    }
                    Name::Local(_) if id.id() == obj.id() => {
                        return Err(src.error(
                            obj,
                            &format!("`{name}` is a local variable: it has no member `{method}`"),
                        ))
                    }
                    Name::Global(_)
                    | Name::Mutex(_)
                    | Name::Object(_)
                    | Name::LocalObject(..)
                    | Name::Local(_) => {}
                    other => return Err(self.name_error(id, idname, other, false)),
                }
            }
        }
        let place = match op {
            "." => match self.place_of(obj)? {
                Some(p) => p,
                None => {
                    return Err(src.error(
                        obj,
                        &format!(
                            "`{name}` is not an object in memory (`.{method}()` needs a \
                             std::atomic or a std::mutex)"
                        ),
                    ))
                }
            },
            "->" => {
                let (p, pointee) = self.ptr_value(obj)?;
                Place {
                    addr: self.deref_addr(p),
                    ty: pointee,
                }
            }
            _ => {
                return Err(src.unsupported(
                    f,
                    &format!("`{op}` (pointers to members are not supported)"),
                ))
            }
        };
        match &place.ty {
            Ty::Int { atomic: true, .. } | Ty::Ptr { atomic: true, .. } => {
                self.atomic_member(call, obj, &place, method, args, used)
            }
            Ty::Mutex | Ty::Sync(_) => self.sync_member(call, obj, &place, method, args, used),
            Ty::Int { .. } | Ty::Ptr { .. } => Err(src.error(
                obj,
                &format!("`{name}` is not atomic (`{op}{method}()` needs a std::atomic)"),
            )),
            Ty::Array(..) => Err(src.error(
                obj,
                &format!("`{name}` is an array: index it (`{name}[i]{op}{method}()`)"),
            )),
            Ty::Struct(_) => {
                let what = if op == "->" { "points to" } else { "is" };
                Err(src.error(
                    obj,
                    &format!(
                        "`{name}` {what} a struct: it has no member function `{method}` (structs \
                         with member functions are not supported)"
                    ),
                ))
            }
            Ty::Void => Err(src.error(obj, &format!("`{name}` points to void"))),
            Ty::Thread => Err(src.internal("thread handle in memory")),
        }
    }

    /// Checks the number of arguments of `x.method(...)`: between `min` and `max`.
    pub(super) fn member_arity(
        &self,
        call: Node,
        method: &str,
        args: &[Node],
        min: usize,
        max: usize,
    ) -> R<()> {
        if args.len() < min || args.len() > max {
            let expected = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            let s = if max == 1 { "" } else { "s" };
            return Err(self.src.error(
                call,
                &format!(
                    "`{method}` expects {expected} argument{s}, got {}",
                    args.len()
                ),
            ));
        }
        Ok(())
    }

    /// A member call without a value (`store`, `lock`, `join`, ...) used as a value.
    pub(super) fn void_member(&self, call: Node, method: &str, used: bool) -> R<TExpr> {
        if used {
            return Err(self
                .src
                .unsupported(call, &format!("`{method}` used as a value")));
        }
        Ok((Expr::Const(0), IntTy::I32))
    }

    /// The memory order of `x.store(v, mo)` (`seq_cst` when absent).
    fn store_order(&self, arg: Option<&Node>) -> R<MemOrder> {
        let Some(a) = arg else {
            return Ok(MemOrder::SeqCst);
        };
        let (o, oname) = self.mem_order(*a)?;
        if o.is_acquire() && o != MemOrder::SeqCst {
            return Err(self
                .src
                .error(*a, &format!("{oname} is not valid for a store")));
        }
        Ok(o)
    }

    /// The memory order of `x.load(mo)` (`seq_cst` when absent).
    fn load_order(&self, arg: Option<&Node>) -> R<MemOrder> {
        let Some(a) = arg else {
            return Ok(MemOrder::SeqCst);
        };
        let (o, oname) = self.mem_order(*a)?;
        if o.is_release() && o != MemOrder::SeqCst {
            return Err(self
                .src
                .error(*a, &format!("{oname} is not valid for a load")));
        }
        Ok(o)
    }

    /// The operand `a` of a store, exchange or compare-exchange on `place`: a pointer value
    /// for an atomic pointer (`nullptr`, `&x`, `p`, ...), else an integer.
    fn operand(&mut self, place: &Place, a: Node) -> R<Expr> {
        if matches!(place.ty, Ty::Ptr { .. }) {
            Ok(self.ptr_value(a)?.0)
        } else {
            self.expr(a)
        }
    }

    /// Member functions of `std::atomic<T>` for the atomic integer or pointer at `place`
    /// (written `obj`).
    fn atomic_member(
        &mut self,
        call: Node,
        obj: Node,
        place: &Place,
        method: &str,
        args: &[Node],
        used: bool,
    ) -> R<TExpr> {
        let src = self.src;
        let ty = place.ty.int_ty();
        let located = super::dialect::strip_member_location(&src, method, args);
        let args = located.as_slice();
        match method {
            "load" => {
                self.member_arity(call, method, args, 0, 1)?;
                let order = self.load_order(args.first())?;
                Ok((self.load_place(place, order), super::promote(ty)))
            }
            "store" => {
                self.member_arity(call, method, args, 1, 2)?;
                let v = self.operand(place, args[0])?;
                let order = self.store_order(args.get(1))?;
                let val = self.convert(v, ty);
                self.emit(Instr::Store {
                    loc: place.addr.clone(),
                    val,
                    order,
                });
                self.void_member(call, method, used)
            }
            "exchange" | "fetch_add" | "fetch_sub" | "fetch_and" | "fetch_or" | "fetch_xor" => {
                let op = match method {
                    "exchange" => RmwOp::Xchg,
                    "fetch_add" => RmwOp::Add,
                    "fetch_sub" => RmwOp::Sub,
                    "fetch_and" => RmwOp::And,
                    "fetch_or" => RmwOp::Or,
                    _ => RmwOp::Xor,
                };
                self.member_arity(call, method, args, 1, 2)?;
                self.check_rmw_type(obj, place, op, &format!("`{method}`"))?;
                let v = self.operand(place, args[0])?;
                let order = match args.get(1) {
                    Some(a) => self.mem_order(*a)?.0,
                    None => MemOrder::SeqCst,
                };
                Ok(self.emit_rmw(place, op, v, order))
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                self.member_arity(call, method, args, 2, 4)?;
                let must = "the expected value of a compare-exchange must be a local variable \
                            of the atomic's type";
                let id = strip_parens(args[0]);
                if id.kind() != "identifier" {
                    return Err(src.unsupported(args[0], must));
                }
                let e = self.expected_var(args[0], id, place, must)?;
                let is_ptr = self.reg_ptr.get(e).is_some_and(|p| p.is_some());
                if is_ptr != matches!(place.ty, Ty::Ptr { .. }) {
                    let name = src.text(id);
                    return Err(src.error(
                        id,
                        &format!(
                            "the type of `{name}` differs from the type of the atomic object of \
                             the compare-exchange"
                        ),
                    ));
                }
                let d = self.operand(place, args[1])?;
                let (order, fail_order) = match (args.get(2), args.get(3)) {
                    (None, _) => (MemOrder::SeqCst, MemOrder::SeqCst),
                    (Some(o), None) => {
                        // C++ [atomics.types.operations]: the failure order of the
                        // one-order form is the order without its release part.
                        let (o, _) = self.mem_order(*o)?;
                        let fail = match o {
                            MemOrder::AcqRel => MemOrder::Acquire,
                            MemOrder::Release => MemOrder::Relaxed,
                            o => o,
                        };
                        (o, fail)
                    }
                    (Some(o), Some(f)) => {
                        let (o, _) = self.mem_order(*o)?;
                        (o, self.failure_order(*f)?)
                    }
                };
                let weak = method == "compare_exchange_weak";
                Ok(self.emit_cas(place, e, d, order, fail_order, weak))
            }
            "is_lock_free" | "wait" | "notify_one" | "notify_all" => {
                Err(src.unsupported(call, &format!("std::atomic member `{method}`")))
            }
            _ => Err(src.unsupported(call, &format!("member `{method}` of std::atomic"))),
        }
    }

    /// `t.join()` on the `std::thread` handle `h` (`t` or `t[i]`, written `obj`).
    fn thread_member(
        &mut self,
        call: Node,
        obj: Node,
        h: HandleRef,
        method: &str,
        args: &[Node],
        used: bool,
    ) -> R<TExpr> {
        let src = self.src;
        match method {
            "join" => {
                self.member_arity(call, method, args, 0, 0)?;
                if used {
                    return self.void_member(call, method, used);
                }
                if self.mode != Mode::Main {
                    let main_name = self.cx.main_name;
                    return Err(src.unsupported(
                        call,
                        &format!(
                            "join outside {main_name} (threads can only be joined in {main_name})"
                        ),
                    ));
                }
                if !self.handle_created(&h) {
                    let name = src.text(obj);
                    return Err(src.error(
                        obj,
                        &format!("thread `{name}` is joined before a thread was created with it"),
                    ));
                }
                let tid = self.handle_value(&h);
                self.emit(Instr::Join { tid, dst: None });
                self.void_member(call, method, used)
            }
            "detach" => Err(src.unsupported(
                call,
                "`detach` (detached threads are not supported: join every thread)",
            )),
            _ => Err(src.unsupported(call, &format!("member `{method}` of std::thread"))),
        }
    }
}

/// `using namespace std;` (whitespace-insensitive).
fn is_using_namespace_std(text: &str) -> bool {
    let words: Vec<&str> = text.trim_end_matches(';').split_whitespace().collect();
    words == ["using", "namespace", "std"]
}

/// Whether declaration `s` is directly in a block, possibly behind labels (`again:
/// std::lock_guard<...> g(m);`): where a destructor at the block's exits is well placed.
pub(super) fn directly_in_block(s: Node) -> bool {
    let mut parent = s.parent();
    while parent.is_some_and(|p| p.kind() == "labeled_statement") {
        parent = parent.and_then(|p| p.parent());
    }
    parent.map(|p| p.kind()) == Some("compound_statement")
}

/// `make_shared` / `allocate_shared` if `n` is a call to one.
fn shared_maker<'a>(src: &crate::frontend::Src<'a>, n: Node) -> Option<&'a str> {
    let f = strip_parens(n).child_by_field_name("function")?;
    let inner = crate::frontend::cpp::unqualify(src, f).unwrap_or(f);
    let name = match inner.kind() {
        "template_function" => inner.child_by_field_name("name")?,
        _ => inner,
    };
    let name = src.text(name);
    matches!(name, "make_shared" | "allocate_shared").then_some(name)
}

/// The refusal of a call of `f` that is a smart-pointer function in a place it is not
/// supported: `std::make_unique` and `std::move` outside a `std::unique_ptr`'s initialiser or
/// assignment, `std::make_shared`.
fn smart_pointer_call(src: &crate::frontend::Src, call: Node, f: Node) -> Option<String> {
    if let Some(name) = shared_maker(src, call) {
        return Some(format!(
            "`std::{name}` (`std::shared_ptr`) {}",
            super::unique_ptr::SHARED
        ));
    }
    if super::unique_ptr::make_unique_parts(src, call).is_some() {
        return Some(
            "`std::make_unique` whose result does not initialise or is not assigned to a \
             std::unique_ptr local (`auto p = std::make_unique<T>(...);`, \
             `p = std::make_unique<T>(...);`)"
                .to_string(),
        );
    }
    (std_name(src, f) == Some("move") && f.kind() == "qualified_identifier").then(|| {
        "`std::move` other than of a std::unique_ptr local into another \
         (`auto q = std::move(p);`, `q = std::move(p);`): moving into a thread's argument \
         or a function is not supported"
            .to_string()
    })
}

/// Why a call of a template function `f` is refused: a named cast left as written (see
/// `named_casts.rs`), `dynamic_cast`, or any other template.
fn template_call(src: &Src, call: Node, f: Node) -> String {
    let text = src.text(f);
    let name = f.child_by_field_name("name").map_or("", |n| src.text(n));
    if name == "dynamic_cast" {
        return "dynamic_cast (it needs the run-time type of a class with virtual functions; \
                classes with virtual functions are not supported)"
            .to_string();
    }
    let casts = crate::frontend::named_casts::NAMED_CASTS;
    if casts.contains(&name) && crate::frontend::named_casts::named_cast(src.text, call).is_none() {
        return format!("`{name}` whose argument is not one type and one operand");
    }
    if casts.contains(&name) {
        return format!(
            "`{name}` of an operand with a binary operator, followed by `->`, `.`, `[`, `(` or \
             `++`/`--` (write the operand in a local first, or use a C cast)"
        );
    }
    format!(
        "call to `{text}` (templates other than std::atomic and the lock guards are not supported)"
    )
}
