//! The thread API: pthreads and C11 `<threads.h>` calls as statements and as values, thread
//! handles wherever C puts them, thread results, and the calls that end a thread or the program.
//!
//! * `pthread_create(h, attr, f, arg)` / `thrd_create(h, f, arg)` are an [`Instr::Spawn`] of
//!   thread function `f`; their value is 0 (`thrd_success`): **creation never fails in the
//!   model**, so `if (pthread_create(...)) abort();` and `assert(pthread_create(...) == 0)`
//!   take the success branch. `h` is `&t` for a handle variable (a register of the function),
//!   `&t[i]` / `t + i` / `t` for an array of them, or any other pointer to a `pthread_t` in
//!   memory (a global used outside `main`, a struct member, `&args[i].tid`): the id is then
//!   stored there (a non-atomic write). `attr` is `NULL` or a `pthread_attr_t` (ignored: the
//!   attributes fensyn accepts change nothing the model sees).
//! * `pthread_join(t, res)` / `thrd_join(t, res)` are an [`Instr::Join`]; `res` is `NULL` or
//!   a pointer that receives the thread's result: `&v` of a local gets it directly, any other
//!   pointer by a non-atomic store. The result is the value the thread returned or passed to
//!   `pthread_exit` / `thrd_exit` (0 when it ended otherwise). Value 0 (`thrd_success`).
//! * `pthread_exit(v)` / `thrd_exit(v)` end the thread with result `v` (also from an inlined
//!   function); `pthread_self()` / `thrd_current()` are the thread's id ([`Instr::ThreadId`]),
//!   `pthread_equal` / `thrd_equal` compare ids, `pthread_detach` / `thrd_detach` and
//!   `pthread_yield` / `sched_yield` / `thrd_yield` have no effect in the model (value 0), nor
//!   do `sleep` / `usleep` (the model has every interleaving already), nor GenMC's hints
//!   `__VERIFIER_loop_begin()`, `__VERIFIER_spin_start()`, `__VERIFIER_spin_end(c)` and
//!   `__VERIFIER_annotate_*(mask)` (their argument is evaluated); `__VERIFIER_opt_begin()` is
//!   0 or 1 (GenMC's optional blocks, see `preprocess/system.rs`).
//! * `exit(n)` / `_Exit(n)` / `quick_exit(n)` end the program ([`Instr::Exit`]); `abort()`,
//!   `__VERIFIER_error()` and `reach_error()` (unless the file defines them) are bugs reported
//!   like a failed assertion ([`Instr::Check`] with [`CheckKind::Abort`]); glibc's
//!   `__assert_fail("e", ...)` (what `assert(e)` becomes in `cpp`'s output) is a failed
//!   `assert(e)`.
//! * `pthread_attr_*` setters (`init`, `destroy`, `setdetachstate`, `setstacksize`, ...) are
//!   accepted and have no effect; the getters are refused (the model has no attribute values).

use super::memory::Place;
use super::{bin, strip_parens, thread_fn_node, FnLower, Name, TExpr, R};
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{Addr, BinOp, CheckKind, Expr, FuncId, Instr, MemOrder, Reg};
use tree_sitter::Node;

/// A thread handle: one register, an element of a register array of handles with a computed
/// index, or a `pthread_t` cell in memory.
#[derive(Clone)]
pub(super) enum HandleRef {
    One(Reg),
    Indexed { first: Reg, len: usize, index: Expr },
    Memory(Addr),
}

/// The macros (`-D`) by which `--nondet LO..HI` gives the domain of `__VERIFIER_nondet_*()`:
/// kept with the program's other command-line macros, so a re-parsed fix has them too.
pub(crate) const NONDET_LO: &str = "__fensyn_nondet_lo";
pub(crate) const NONDET_HI: &str = "__fensyn_nondet_hi";

/// The value of a thread-API call and whether control never comes back from it.
type ThreadCall = Option<(TExpr, bool)>;

impl FnLower<'_, '_> {
    /// Lowers a call of the thread API (see the module doc) in statement or expression
    /// position; `None` when `name` is not one of its functions.
    pub(super) fn thread_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<ThreadCall> {
        let zero = |diverts| Ok(Some(((Expr::Const(0), IntTy::I32), diverts)));
        match name {
            "pthread_create" => {
                self.arity(call, name, args, 4)?;
                self.thread_attr(args[1], "pthread_create")?;
                self.spawn(name, args[0], args[2], args[3])?;
                zero(false)
            }
            "thrd_create" => {
                self.arity(call, name, args, 3)?;
                self.spawn(name, args[0], args[1], args[2])?;
                zero(false)
            }
            "pthread_join" | "thrd_join" => {
                // CDSChecker's `thrd_join(t)` has no result argument.
                if !(name == "thrd_join" && args.len() == 1) {
                    self.arity(call, name, args, 2)?;
                }
                self.join(name, args[0], args.get(1).copied())?;
                zero(false)
            }
            "pthread_exit" | "thrd_exit" => {
                self.arity(call, name, args, 1)?;
                self.end_thread(Some(args[0]))?;
                zero(true)
            }
            "pthread_self" | "thrd_current" => {
                self.arity(call, name, args, 0)?;
                let dst = self.new_temp(IntTy::I64);
                self.emit(Instr::ThreadId { dst });
                Ok(Some(((Expr::Reg(dst), IntTy::I64), false)))
            }
            "pthread_equal" | "thrd_equal" => {
                self.arity(call, name, args, 2)?;
                let a = self.handle_expr(args[0])?;
                let b = self.handle_expr(args[1])?;
                Ok(Some(((bin(BinOp::Eq, a, b), IntTy::I32), false)))
            }
            "pthread_detach" | "thrd_detach" => {
                self.arity(call, name, args, 1)?;
                self.handle_expr(args[0])?;
                zero(false)
            }
            "__VERIFIER_loop_begin" | "__VERIFIER_spin_start" => {
                // GenMC's spin-loop markers: hints, no effect on what runs (see `system.rs`).
                self.arity(call, name, args, 0)?;
                zero(false)
            }
            "__VERIFIER_spin_end"
            | "__VERIFIER_annotate_begin"
            | "__VERIFIER_annotate_end"
            | "__VERIFIER_annotate_read"
            | "__VERIFIER_annotate_write"
            | "__VERIFIER_annotate_CAS"
            | "__VERIFIER_annotate_FAI" => {
                self.arity(call, name, args, 1)?;
                self.expr(args[0])?;
                zero(false)
            }
            "__VERIFIER_opt_begin" => {
                // Whether an optional block runs: either (GenMC's `__VERIFIER_optional`).
                self.arity(call, name, args, 0)?;
                self.nondet(call, "__VERIFIER_nondet_bool")
                    .map(|v| Some((v, false)))
            }
            "pthread_yield" | "sched_yield" | "thrd_yield" => {
                self.arity(call, name, args, 0)?;
                zero(false)
            }
            "sleep" | "usleep" => {
                self.arity(call, name, args, 1)?;
                self.expr(args[0])?;
                zero(false)
            }
            "exit" | "_Exit" | "quick_exit" => {
                self.arity(call, name, args, 1)?;
                self.expr(args[0])?;
                self.emit(Instr::Exit);
                zero(true)
            }
            "abort" | "__VERIFIER_error" | "reach_error" => {
                self.arity(call, name, args, 0)?;
                self.emit(Instr::Check {
                    cond: Expr::Const(0),
                    kind: CheckKind::Abort,
                    message: format!("`{name}()` called"),
                });
                zero(true)
            }
            "__assert_fail" => {
                // glibc's `assert(e)` as `cpp` writes it: `__assert_fail("e", file, line, f)`.
                self.arity(call, name, args, 4)?;
                let lit = self.src.text(args[0]);
                let text = lit.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
                self.emit(Instr::Assert {
                    cond: Expr::Const(0),
                    text: text.unwrap_or(lit).to_string(),
                });
                zero(true)
            }
            _ if name.starts_with("pthread_attr_") => self.attr_call(call, name, args),
            _ if name.starts_with("__VERIFIER_nondet_") => {
                self.arity(call, name, args, 0)?;
                self.nondet(call, name).map(|v| Some((v, false)))
            }
            _ => Ok(None),
        }
    }

    /// `__VERIFIER_nondet_T()`: any value of `T` in the domain `--nondet LO..HI` gives (see
    /// [`NONDET_LO`]); `bool` needs no domain.
    fn nondet(&mut self, call: Node, name: &str) -> R<TExpr> {
        let src = self.src;
        let ty = match name.trim_start_matches("__VERIFIER_nondet_") {
            "bool" | "_Bool" => IntTy::Bool,
            "char" => IntTy::I8,
            "uchar" => IntTy::U8,
            "short" => IntTy::I16,
            "ushort" => IntTy::U16,
            "int" => IntTy::I32,
            "uint" | "unsigned" => IntTy::U32,
            "long" | "longlong" => IntTy::I64,
            "ulong" | "ulonglong" | "size_t" => IntTy::U64,
            other => {
                return Err(src.unsupported(
                    call,
                    &format!("`{name}` (nondeterministic values of type `{other}`)"),
                ))
            }
        };
        let (tlo, thi) = ty.range();
        let domain = |m: &str| self.cx.macro_value_of(m);
        let (lo, hi) = match (ty, domain(NONDET_LO), domain(NONDET_HI)) {
            (IntTy::Bool, _, _) => (0, 1),
            (_, Some(lo), Some(hi)) => (lo.max(tlo), hi.min(thi)),
            _ => {
                return Err(src.unsupported(
                    call,
                    &format!(
                        "`{name}()` without a domain: give `--nondet LO..HI` (every value in it \
                         is explored)"
                    ),
                ))
            }
        };
        if lo > hi {
            return Err(src.error(
                call,
                &format!("no value of `{name}()` lies in the --nondet domain"),
            ));
        }
        let dst = self.new_temp(ty);
        self.emit(Instr::Nondet { dst, lo, hi });
        Ok((Expr::Reg(dst), super::promote(ty)))
    }

    /// `pthread_attr_*(&attr, ...)`: the setters have no effect; the getters are refused.
    fn attr_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<ThreadCall> {
        let src = self.src;
        let setter = name.starts_with("pthread_attr_set")
            || matches!(name, "pthread_attr_init" | "pthread_attr_destroy");
        if !setter {
            return Err(src.unsupported(
                call,
                &format!("`{name}` (thread attributes have no values in the model)"),
            ));
        }
        let Some(&first) = args.first() else {
            return Err(src.error(call, &format!("`{name}` expects arguments")));
        };
        self.thread_attr(first, name)?;
        // The other arguments are constants or sizes: evaluated only for their effects.
        for &a in &args[1..] {
            if self.may_access(a) {
                self.expr(a)?;
            }
        }
        Ok(Some(((Expr::Const(0), IntTy::I32), false)))
    }

    /// The attribute argument of `api`: `NULL` or the address of a `pthread_attr_t`.
    fn thread_attr(&mut self, a: Node, api: &str) -> R<()> {
        let src = self.src;
        if self.is_null(a) {
            return Ok(());
        }
        let inner = strip_parens(a);
        let named = super::address_of(&src, inner).filter(|id| id.kind() == "identifier");
        if let Some(id) = named {
            if matches!(self.lookup(src.text(id)), Name::Local(_) | Name::Global(_)) {
                return Ok(());
            }
        }
        if self.ptr_value(a).is_ok() {
            return Ok(());
        }
        let text = src.text(a);
        Err(src.unsupported(
            a,
            &format!(
                "attribute argument `{text}` of `{api}` (expected NULL or `&attr` for a \
                 pthread_attr_t `attr`)"
            ),
        ))
    }

    /// `return v;` in the thread function or `pthread_exit(v)` anywhere in its code: sets the
    /// thread's result (not for the main thread, whose result nobody joins) and ends it.
    pub(super) fn end_thread(&mut self, value: Option<Node>) -> R<()> {
        if let Some(v) = value {
            let val = self.any_value(v)?;
            // The result register starts at 0 and is written only right before a return, so
            // returning 0 needs no write.
            if self.root_thread && val != Expr::Const(0) {
                let r = match self.result {
                    Some(r) => r,
                    None => {
                        let r = self.new_reg("%result", IntTy::I64);
                        self.result = Some(r);
                        r
                    }
                };
                self.emit(Instr::Assign { dst: r, val });
            }
        }
        self.emit_return();
        Ok(())
    }

    /// The value of an integer or pointer expression (a thread's result, a handle).
    pub(super) fn any_value(&mut self, n: Node) -> R<Expr> {
        match self.texpr(n) {
            Ok((e, _)) => Ok(e),
            Err(first) => match self.ptr_value(n) {
                Ok((e, _)) => Ok(e),
                Err(_) => Err(first),
            },
        }
    }

    /// The handle named by `n` (the first argument of a join, detach or comparison): a handle
    /// variable, an element of an array of them, or any expression whose value is a thread
    /// id (a `pthread_t` in memory, `pthread_self()`).
    pub(super) fn handle_ref(&mut self, n: Node) -> R<HandleRef> {
        let src = self.src;
        let n = strip_parens(n);
        if let Some((first, len, index)) = self.handle_array_element(n)? {
            return Ok(match index {
                Expr::Const(k) => HandleRef::One(first + k as usize),
                index => HandleRef::Indexed { first, len, index },
            });
        }
        if n.kind() == "identifier" {
            let name = src.text(n);
            match self.lookup(name) {
                Name::Handle(r) => return Ok(HandleRef::One(r)),
                Name::HandleArray(..) => {
                    return Err(src.error(
                        n,
                        &format!("`{name}` is an array of thread handles: index it"),
                    ))
                }
                Name::Unknown => {
                    return Err(src.error(n, &format!("undeclared identifier `{name}`")))
                }
                _ => {}
            }
        }
        match self.place_of(n)? {
            Some(Place {
                addr,
                ty: Ty::Thread,
            }) => Ok(HandleRef::Memory(addr)),
            _ => {
                let text = src.text(n);
                Err(src.error(n, &format!("`{text}` is not a pthread_t")))
            }
        }
    }

    /// The thread id held by `n` (see [`Self::handle_ref`]) as an expression.
    pub(super) fn handle_expr(&mut self, n: Node) -> R<Expr> {
        let inner = strip_parens(n);
        let is_handle_name = inner.kind() == "identifier"
            && matches!(
                self.lookup(self.src.text(inner)),
                Name::Handle(_) | Name::HandleArray(..)
            );
        if is_handle_name || self.is_handle_array_element(inner) {
            let h = self.handle_ref(n)?;
            return Ok(self.handle_value(&h));
        }
        self.any_value(n)
    }

    /// Whether `n` denotes a thread handle: a handle variable, an element of an array of
    /// handle registers, or a `pthread_t` / `thrd_t` in memory (nothing is evaluated).
    pub(super) fn is_handle(&self, n: Node) -> bool {
        let inner = strip_parens(n);
        let named = inner.kind() == "identifier"
            && matches!(
                self.lookup(self.src.text(inner)),
                Name::Handle(_) | Name::HandleArray(..)
            );
        named
            || self.is_handle_array_element(inner)
            || matches!(self.peek_place_type(inner), Some(Ty::Thread))
            || (inner.kind() == "subscript_expression"
                && matches!(self.static_type(inner), Ok(Ty::Thread)))
    }

    /// Whether `n` is `t[i]` for an array `t` of handle registers (nothing is evaluated).
    fn is_handle_array_element(&self, n: Node) -> bool {
        n.kind() == "subscript_expression"
            && n.child_by_field_name("argument")
                .map(strip_parens)
                .is_some_and(|a| {
                    a.kind() == "identifier"
                        && matches!(self.lookup(self.src.text(a)), Name::HandleArray(..))
                })
    }

    /// `t[i]` for an array `t` of handle registers: its first register, length and index.
    fn handle_array_element(&mut self, n: Node) -> R<Option<(Reg, usize, Expr)>> {
        let src = self.src;
        if n.kind() != "subscript_expression" {
            return Ok(None);
        }
        let Some(arr) = n.child_by_field_name("argument").map(strip_parens) else {
            return Ok(None);
        };
        if arr.kind() != "identifier" {
            return Ok(None);
        }
        let Name::HandleArray(first, len) = self.lookup(src.text(arr)) else {
            return Ok(None);
        };
        let index = crate::frontend::cpp::subscript_index(&src, n)?;
        let i = self.expr(index)?;
        Ok(Some((first, len, self.checked_index(n, i, len)?)))
    }

    /// A constant index out of bounds is an error; any other index is kept.
    fn checked_index(&self, at: Node, i: Expr, len: usize) -> R<Expr> {
        match i {
            Expr::Const(k) if k < 0 || k as u64 >= len as u64 => Err(self.src.error(
                at,
                &format!("index {k} is out of bounds of an array of {len} elements"),
            )),
            i => Ok(i),
        }
    }

    /// Stops the thread (undefined behaviour) unless `0 <= index < len`: a division by zero
    /// when the index is out of bounds.
    fn index_guard(&mut self, index: &Expr, len: usize) {
        let inside = bin(
            BinOp::And,
            bin(BinOp::Ge, index.clone(), Expr::Const(0)),
            bin(BinOp::Lt, index.clone(), Expr::Const(len as i64)),
        );
        let t = self.new_temp(IntTy::I32);
        self.emit(Instr::Assign {
            dst: t,
            val: bin(BinOp::Div, Expr::Const(1), inside),
        });
    }

    /// The thread id held by a handle, as an expression.
    pub(super) fn handle_value(&mut self, h: &HandleRef) -> Expr {
        match h {
            HandleRef::One(r) => Expr::Reg(*r),
            HandleRef::Indexed { first, len, index } => {
                self.index_guard(index, *len);
                (0..*len).fold(Expr::Const(0), |acc, k| {
                    bin(
                        BinOp::Add,
                        acc,
                        bin(
                            BinOp::Mul,
                            bin(BinOp::Eq, index.clone(), Expr::Const(k as i64)),
                            Expr::Reg(first + k),
                        ),
                    )
                })
            }
            HandleRef::Memory(addr) => {
                let p = Place {
                    addr: addr.clone(),
                    ty: Ty::Thread,
                };
                self.load_place(&p, MemOrder::NonAtomic)
            }
        }
    }

    /// Whether a thread was created with the register handle `h` earlier in this function
    /// (handles in memory are not tracked, and an empty array's element is never valid:
    /// true).
    pub(super) fn handle_created(&self, h: &HandleRef) -> bool {
        let r = match h {
            HandleRef::One(r) => *r,
            // An element of an empty array (`thrd_t t[0]`) is out of bounds wherever it is
            // used: the index guard stops the thread there.
            HandleRef::Indexed { len: 0, .. } => return true,
            HandleRef::Indexed { first, .. } => *first,
            HandleRef::Memory(_) => return true,
        };
        self.created.get(r).copied().unwrap_or(false)
    }

    /// `pthread_join(t, res)` / `thrd_join(t, res)`.
    fn join(&mut self, api: &str, h: Node, res: Option<Node>) -> R<()> {
        let src = self.src;
        let handle = self.handle_ref(h)?;
        if !self.handle_created(&handle) {
            let hname = src.text(h);
            return Err(src.error(
                h,
                &format!("thread handle `{hname}` is joined before a thread was created with it"),
            ));
        }
        let tid = self.handle_value(&handle);
        let Some(res) = res.filter(|r| !self.is_null(*r)) else {
            self.emit(Instr::Join { tid, dst: None });
            return Ok(());
        };
        // `&v` of a local: the result goes straight into its register.
        let local = super::address_of(&src, strip_parens(res))
            .filter(|id| id.kind() == "identifier")
            .and_then(|id| match self.lookup(src.text(id)) {
                Name::Local(r) => Some(r),
                _ => None,
            });
        if let Some(r) = local {
            self.emit(Instr::Join { tid, dst: Some(r) });
            return Ok(());
        }
        let (p, pointee) = self.ptr_value(res).map_err(|_| {
            let text = src.text(res);
            src.unsupported(
                res,
                &format!("result argument `{text}` of `{api}` (expected NULL or a pointer)"),
            )
        })?;
        let cell = match pointee {
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Void => Place {
                addr: self.deref_addr(p),
                ty: Ty::Int {
                    ty: IntTy::I64,
                    atomic: false,
                },
            },
            _ => {
                let text = src.text(res);
                return Err(src.error(
                    res,
                    &format!("result argument `{text}` of `{api}` does not point to a scalar"),
                ));
            }
        };
        let dst = self.new_temp(IntTy::I64);
        self.emit(Instr::Join {
            tid,
            dst: Some(dst),
        });
        self.emit(Instr::Store {
            loc: cell.addr,
            val: Expr::Reg(dst),
            order: MemOrder::NonAtomic,
        });
        Ok(())
    }

    /// Where `pthread_create` / `thrd_create` (`api`) puts the new thread's id: its first
    /// argument `h`, a pointer to a handle.
    fn spawn_target(&mut self, api: &str, h: Node) -> R<HandleRef> {
        let src = self.src;
        let inner = strip_parens(h);
        let operand = (inner.kind() == "pointer_expression"
            && inner.child_by_field_name("operator").map(|o| src.text(o)) == Some("&"))
        .then(|| inner.child_by_field_name("argument").map(strip_parens))
        .flatten();
        if let Some(id) = operand {
            let register = match id.kind() {
                "identifier" => matches!(self.lookup(src.text(id)), Name::Handle(_)),
                _ => self.is_handle_array_element(id),
            };
            if register {
                return self.handle_ref(id);
            }
        }
        // `t + i` or `t` for an array `t` of handle registers.
        let (arr, index) = match inner.kind() {
            "binary_expression"
                if inner.child_by_field_name("operator").map(|o| src.text(o)) == Some("+") =>
            {
                (
                    inner.child_by_field_name("left"),
                    inner.child_by_field_name("right"),
                )
            }
            "identifier" => (Some(inner), None),
            _ => (None, None),
        };
        if let Some(arr) = arr.map(strip_parens).filter(|a| a.kind() == "identifier") {
            if let Name::HandleArray(first, len) = self.lookup(src.text(arr)) {
                let i = match index {
                    Some(i) => self.expr(i)?,
                    None => Expr::Const(0),
                };
                return Ok(match self.checked_index(inner, i, len)? {
                    Expr::Const(k) => HandleRef::One(first + k as usize),
                    index => HandleRef::Indexed { first, len, index },
                });
            }
        }
        let bad = || {
            let text = src.text(h);
            src.unsupported(
                h,
                &format!("first argument `{text}` of {api} (expected a pointer to a pthread_t)"),
            )
        };
        let (p, pointee) = self.ptr_value(h).map_err(|_| bad())?;
        if pointee != Ty::Thread {
            return Err(bad());
        }
        Ok(HandleRef::Memory(self.deref_addr(p)))
    }

    /// `pthread_create(&h, attr, f, arg)` / `thrd_create(&h, f, arg)` (`api` is the callee's
    /// name): a [`Instr::Spawn`] of thread function `f` with `arg`, the thread id into `h`.
    fn spawn(&mut self, api: &str, h: Node, f: Node, arg: Node) -> R<()> {
        let src = self.src;
        let main_name = self.cx.main_name;
        let dst = self.spawn_target(api, h)?;
        let fnode = f;
        let f = thread_fn_node(&src, f);
        let by_pointer = f.kind() != "identifier"
            || matches!(
                self.lookup(src.text(f)),
                Name::Local(_) | Name::Global(_) | Name::Object(_) | Name::LocalObject(..)
            );
        if by_pointer {
            let arg = self.any_value(arg)?;
            return self.indirect_spawn(fnode, &mut |l, func| {
                l.spawn_into(dst.clone(), func, arg.clone())
            });
        }
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
        let arg = self.any_value(arg)?;
        self.spawn_into(dst, func, arg);
        Ok(())
    }

    /// A [`Instr::Spawn`] of thread function `func` with `arg`, its thread id into handle
    /// `dst` (an element with a computed index: checked in bounds, then every element of the
    /// array is updated arithmetically; a handle in memory: stored there).
    pub(super) fn spawn_into(&mut self, dst: HandleRef, func: FuncId, arg: Expr) {
        match dst {
            HandleRef::One(r) => {
                self.emit(Instr::Spawn {
                    func,
                    arg,
                    dst: Some(r),
                });
                if let Some(c) = self.created.get_mut(r) {
                    *c = true;
                }
            }
            HandleRef::Indexed { first, len, index } => {
                self.index_guard(&index, len);
                let tid = self.new_temp(IntTy::I64);
                self.emit(Instr::Spawn {
                    func,
                    arg,
                    dst: Some(tid),
                });
                // t[k] := index == k ? tid : t[k], for every k.
                for k in 0..len {
                    let r = first + k;
                    let hit = bin(BinOp::Eq, index.clone(), Expr::Const(k as i64));
                    let delta = bin(BinOp::Sub, Expr::Reg(tid), Expr::Reg(r));
                    self.emit(Instr::Assign {
                        dst: r,
                        val: bin(BinOp::Add, Expr::Reg(r), bin(BinOp::Mul, hit, delta)),
                    });
                    if let Some(c) = self.created.get_mut(r) {
                        *c = true;
                    }
                }
            }
            HandleRef::Memory(addr) => {
                let tid = self.new_temp(IntTy::I64);
                self.emit(Instr::Spawn {
                    func,
                    arg,
                    dst: Some(tid),
                });
                self.emit(Instr::Store {
                    loc: addr,
                    val: Expr::Reg(tid),
                    order: MemOrder::NonAtomic,
                });
            }
        }
    }
}
