//! Lowering of function bodies (statements and expressions) and of constant initialisers.

use super::literal::{self, LitError};
use super::types::{self, BaseTy, IntTy, Ty};
use super::{function_declarator, named_children, Ctx, Src, R};
use crate::ir::{
    Addr, BinOp, Expr, FuncId, Function, Instr, Loc, MemOrder, Reg, Slot, SlotPlace, Stmt, StmtId,
    StmtKind, UnOp,
};
use tree_sitter::Node;

mod atomics;
mod builtins;
mod class;
mod closure;
mod cond;
mod control;
mod cpp;
mod cpp_sync;
pub(crate) mod dialect;
mod effects;
pub(crate) mod funptr;
mod goto;
mod heap;
mod heap_cpp;
mod inline;
pub(crate) mod locals;
mod memory;
mod mutex;
mod reference;
mod relacy;
mod rwlock;
mod sizeof;
pub(crate) mod sync;
mod threads;
mod unique_ptr;

pub(crate) use builtins::ORDER_MACROS;
pub(crate) use goto::syntax_error as goto_syntax_error;
use memory::Place;
pub(crate) use sizeof::size_align;
use threads::HandleRef;
pub(crate) use threads::{NONDET_HI, NONDET_LO};

/// Maximum nesting of blocks and expressions; deeper programs are rejected (this bounds the
/// recursion of the lowering, so adversarial inputs cannot overflow the stack).
pub(crate) const MAX_DEPTH: usize = 100;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Main,
    Thread,
    /// Evaluating a global's initialiser: no registers, no memory, no instructions.
    Const,
}

#[derive(Clone, Copy, Debug)]
enum Binding {
    /// An integer local (or the thread parameter).
    Var(Reg),
    /// A `pthread_t` / `thrd_t` of `main`.
    Handle(Reg),
    /// An array of `n` thread handles of `main` in registers `first .. first + n`.
    HandleArray(Reg, usize),
    /// A `static` local scalar (a memory cell).
    Cell(Loc),
    /// A `static` local array or struct (an index into `Ctx::objects`).
    Object(usize),
    /// A local object in memory (an array, a struct, an atomic, a variable whose address is
    /// taken): the register holding its address and its type (`FnLower::local_tys`).
    LocalObject(Reg, usize),
    /// A parameter of `main` (`argc`, `argv`).
    Forbidden,
}

#[derive(Clone, Copy, Debug)]
enum Name {
    Local(Reg),
    Handle(Reg),
    HandleArray(Reg, usize),
    Global(Loc),
    /// An array or struct in memory (an index into `Ctx::objects`).
    Object(usize),
    /// A local object in memory (see [`Binding::LocalObject`]).
    LocalObject(Reg, usize),
    /// A global `pthread_mutex_t`: not an integer; only `&m` in `pthread_mutex_*` calls.
    Mutex(Loc),
    Forbidden,
    HandleOutsideMain,
    Function,
    Unknown,
}

struct FnLower<'c, 'a> {
    cx: &'c mut Ctx<'a>,
    src: Src<'a>,
    fid: FuncId,
    mode: Mode,
    regs: Vec<String>,
    reg_tys: Vec<IntTy>,
    /// For registers holding pointers: the type they point to.
    reg_ptr: Vec<Option<Ty>>,
    /// Handle registers that a `pthread_create` has written.
    created: Vec<bool>,
    scopes: Vec<Vec<(String, Binding)>>,
    body: Vec<Instr>,
    stmt_of: Vec<StmtId>,
    cur_stmt: StmtId,
    temps: usize,
    depth: usize,
    param: Option<Reg>,
    param_used: bool,
    /// The register holding the thread's result (see [`Function::result`]), made by the first
    /// `return v;` / `pthread_exit(v)` that sets it.
    result: Option<Reg>,
    /// The function being lowered is a thread function (not the main thread's): its
    /// `return v;` and `pthread_exit(v)` set the result a join receives.
    root_thread: bool,
    /// The registers holding the local objects of the function being lowered (not of the
    /// calls inlined into it), whose lifetime ends at its return (see `locals.rs`).
    root_objects: Vec<Reg>,
    /// Enclosing loops and switches, innermost last (targets of `break` / `continue`).
    jumps: Vec<control::JumpCtx>,
    /// The top-level function being lowered (main or a thread function) and the start byte of
    /// its definition: callees must be defined before it.
    root_name: String,
    root_start: usize,
    /// Globals declared at or after this byte are not visible (the start of the definition of
    /// the function whose body is being lowered, when it is an inlined callee).
    visible_before: usize,
    /// The calls being inlined, innermost last.
    inlines: Vec<inline::Frame>,
    /// Lowering an await loop's condition: the functions it calls get no fence slots (a fence
    /// there would make the loop an ordinary one; the slot after the loop orders the same).
    in_await: bool,
    /// C++ lock guards and loops in scope (`src/frontend/lower/cpp.rs`).
    cpp: cpp::State,
    /// Labels of the bodies being lowered and loops made by gotos (`src/frontend/lower/goto.rs`).
    goto: goto::State,
    /// The types of the local objects in memory ([`Binding::LocalObject`]).
    local_tys: Vec<Ty>,
    /// The names whose address the function being lowered takes (innermost inlined function
    /// last): its local variables of these names live in memory.
    taken: Vec<std::rc::Rc<std::collections::HashSet<String>>>,
    /// This thread's copies of the thread-local variables (see `locals.rs`), visible in the
    /// function and every function inlined into it.
    thread_locals: Vec<(String, Binding)>,
    /// The pointee types allocations are used as (`src/frontend/lower/heap.rs`).
    heap: heap::State,
}

/// Evaluates the initialiser of a global: a constant integer expression.
pub(crate) fn const_eval(cx: &mut Ctx, node: Node) -> R<i64> {
    let src = cx.src;
    let mut l = FnLower::new(cx, usize::MAX, Mode::Const);
    let e = l.expr(node)?;
    if !l.body.is_empty() || !l.regs.is_empty() {
        return Err(src.internal("constant expression produced instructions"));
    }
    if has_reg(&e) {
        return Err(src.internal("constant expression uses registers"));
    }
    e.eval(&[])
        .map_err(|_| src.error(node, "division by zero in constant expression"))
}

impl FnLower<'_, '_> {
    /// `n` as a constant expression inside this function. [`const_eval`] sees no locals, so a
    /// local that shadows a global constant (`const int n = 2;` then `int n = 3; int a[n];`)
    /// is refused here rather than read as the global.
    pub(super) fn const_here(&mut self, n: Node) -> R<i64> {
        if let Some(local) = self.local_name_in(n) {
            let name = self.src.text(local);
            return Err(self.src.error(
                local,
                &format!("`{name}` is a variable, not a constant expression"),
            ));
        }
        const_eval(self.cx, n)
    }

    /// The first identifier in `n` that names a variable of this function.
    fn local_name_in<'n>(&self, n: Node<'n>) -> Option<Node<'n>> {
        if n.kind() == "identifier" {
            let local = !matches!(
                self.lookup(self.src.text(n)),
                Name::Global(_) | Name::Object(_) | Name::Mutex(_) | Name::Function | Name::Unknown
            );
            return local.then_some(n);
        }
        let mut c = n.walk();
        let children: Vec<Node<'n>> = n.named_children(&mut c).collect();
        children.into_iter().find_map(|ch| self.local_name_in(ch))
    }
}

fn has_reg(e: &Expr) -> bool {
    match e {
        Expr::Const(_) => false,
        Expr::Reg(_) => true,
        Expr::Unary(_, a) => has_reg(a),
        Expr::Binary(_, a, b) => has_reg(a) || has_reg(b),
    }
}

/// Lowers the definition `def` of `main` or of a thread function.
pub(crate) fn lower_function(cx: &mut Ctx, def: Node, fid: FuncId, is_main: bool) -> R<Function> {
    let src = cx.src;
    let mode = if is_main { Mode::Main } else { Mode::Thread };
    let fdecl = def
        .child_by_field_name("declarator")
        .and_then(function_declarator)
        .ok_or_else(|| src.unsupported(def, "function definition"))?;
    let name = fdecl
        .child_by_field_name("declarator")
        .map(|n| src.text(n))
        .unwrap_or("")
        .to_string();
    let mut l = FnLower::new(cx, fid, mode);
    l.root_name = name.clone();
    l.root_start = def.start_byte();
    let taken = l.cx.taken_names(def);
    l.taken.push(taken);
    l.bind_thread_locals(def)?;
    l.scopes.push(Vec::new());
    if is_main {
        l.main_signature(fdecl)?;
        let handles = l.cx.handles.clone();
        for (h, len) in handles {
            let b = l.handle_regs(&h, len);
            l.bind(&h, b);
        }
        l.construct_globals()?;
    } else {
        l.thread_signature(def, fdecl, &name)?;
    }
    let body = def
        .child_by_field_name("body")
        .ok_or_else(|| src.unsupported(def, "function without a body"))?;
    let returned = l.block(body, None)?;
    if !returned {
        l.emit_return();
    }
    l.finish_goto_loops();
    Ok(Function {
        name,
        span: src.span(def),
        param: if l.param_used { l.param } else { None },
        result: l.result,
        reg_names: l.regs,
        body: l.body,
        stmt_of: l.stmt_of,
    })
}

/// `a op b`, folding constants and the identities `x * 1`, `1 * x`, `x + 0`, `0 + x`.
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    if let (Expr::Const(x), Expr::Const(y)) = (&a, &b) {
        let folded = Expr::Binary(op, Box::new(Expr::Const(*x)), Box::new(Expr::Const(*y)));
        if let Ok(v) = folded.eval(&[]) {
            return Expr::Const(v);
        }
    }
    match (op, &a, &b) {
        (BinOp::Mul, _, Expr::Const(1)) | (BinOp::Add, _, Expr::Const(0)) => return a,
        (BinOp::Mul, Expr::Const(1), _) | (BinOp::Add, Expr::Const(0), _) => return b,
        _ => {}
    }
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn un(op: UnOp, a: Expr) -> Expr {
    if let Expr::Const(x) = a {
        if let Ok(v) = Expr::Unary(op, Box::new(Expr::Const(x))).eval(&[]) {
            return Expr::Const(v);
        }
    }
    Expr::Unary(op, Box::new(a))
}

/// May evaluating `e` fail (division or remainder by a non-constant or zero divisor)?
fn risky(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Reg(_) => false,
        Expr::Unary(_, a) => risky(a),
        Expr::Binary(op, a, b) => {
            (matches!(op, BinOp::Div | BinOp::Rem) && !matches!(**b, Expr::Const(c) if c != 0))
                || risky(a)
                || risky(b)
        }
    }
}

/// A lowered expression with its C type (after integer promotion where C applies it).
type TExpr = (Expr, IntTy);

/// C's integer promotions.
fn promote(t: IntTy) -> IntTy {
    match t {
        IntTy::I64 | IntTy::U64 | IntTy::U32 => t,
        _ => IntTy::I32,
    }
}

/// C's usual arithmetic conversions (on promoted types).
fn common(a: IntTy, b: IntTy) -> IntTy {
    let (a, b) = (promote(a), promote(b));
    if a == IntTy::U64 || b == IntTy::U64 {
        IntTy::U64
    } else if a == IntTy::I64 || b == IntTy::I64 {
        IntTy::I64
    } else if a == IntTy::U32 || b == IntTy::U32 {
        IntTy::U32
    } else {
        IntTy::I32
    }
}

fn binop(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        _ => return None,
    })
}

fn mem_order_name(name: &str) -> Option<MemOrder> {
    Some(match name {
        "memory_order_relaxed" => MemOrder::Relaxed,
        "memory_order_consume" | "memory_order_acquire" => MemOrder::Acquire,
        "memory_order_release" => MemOrder::Release,
        "memory_order_acq_rel" => MemOrder::AcqRel,
        "memory_order_seq_cst" => MemOrder::SeqCst,
        _ => return None,
    })
}

/// `&x` (through parentheses): the identifier `x`.
pub(super) fn address_of<'t>(src: &super::Src, n: Node<'t>) -> Option<Node<'t>> {
    let a = strip_parens(n);
    (a.kind() == "pointer_expression"
        && a.child_by_field_name("operator").map(|o| src.text(o)) == Some("&"))
    .then(|| a.child_by_field_name("argument").map(strip_parens))
    .flatten()
    .filter(|id| id.kind() == "identifier")
}

/// `(e)` → `e`, repeatedly.
/// The function named by a thread-creation argument: `f`, `&f`, `(thrd_start_t)&f`, ...
pub(crate) fn thread_fn_node<'t>(src: &Src, n: Node<'t>) -> Node<'t> {
    let mut n = n;
    for _ in 0..8 {
        n = strip_parens(n);
        match n.kind() {
            "cast_expression" => match n.child_by_field_name("value") {
                Some(v) => n = v,
                None => break,
            },
            "pointer_expression"
                if n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&") =>
            {
                match n.child_by_field_name("argument") {
                    Some(v) => n = v,
                    None => break,
                }
            }
            // `(thrd_start_t)&f` with an unknown type name parses as `(thrd_start_t) & f`.
            "binary_expression"
                if n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&")
                    && n.child_by_field_name("left").is_some_and(|l| {
                        l.kind() == "parenthesized_expression"
                            && named_children(l)
                                .first()
                                .is_some_and(|t| t.kind() == "identifier")
                    }) =>
            {
                match n.child_by_field_name("right") {
                    Some(v) => n = v,
                    None => break,
                }
            }
            _ => break,
        }
    }
    n
}

pub(crate) fn strip_parens(n: Node) -> Node {
    let mut n = n;
    for _ in 0..MAX_DEPTH {
        if n.kind() != "parenthesized_expression" {
            break;
        }
        match named_children(n).first() {
            Some(inner) => n = *inner,
            None => break,
        }
    }
    n
}

impl<'c, 'a> FnLower<'c, 'a> {
    fn new(cx: &'c mut Ctx<'a>, fid: FuncId, mode: Mode) -> Self {
        let src = cx.src;
        FnLower {
            cx,
            src,
            fid,
            mode,
            regs: Vec::new(),
            reg_tys: Vec::new(),
            reg_ptr: Vec::new(),
            created: Vec::new(),
            scopes: Vec::new(),
            body: Vec::new(),
            stmt_of: Vec::new(),
            cur_stmt: 0,
            temps: 0,
            depth: 0,
            param: None,
            param_used: false,
            result: None,
            root_thread: mode == Mode::Thread,
            root_objects: Vec::new(),
            jumps: Vec::new(),
            root_name: String::new(),
            root_start: usize::MAX,
            visible_before: usize::MAX,
            inlines: Vec::new(),
            in_await: false,
            cpp: cpp::State::default(),
            goto: goto::State::default(),
            local_tys: Vec::new(),
            taken: Vec::new(),
            thread_locals: Vec::new(),
            heap: heap::State::default(),
        }
    }

    // ----- infrastructure -------------------------------------------------------------------

    fn enter(&mut self, n: Node) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self
                .src
                .unsupported(n, &format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn emit(&mut self, i: Instr) -> usize {
        self.body.push(i);
        self.stmt_of.push(self.cur_stmt);
        self.body.len() - 1
    }

    fn patch(&mut self, pc: usize, to: usize) {
        match self.body.get_mut(pc) {
            Some(Instr::BranchIfZero { target, .. }) | Some(Instr::Jump { target }) => *target = to,
            _ => {}
        }
    }

    fn new_reg(&mut self, name: &str, ty: IntTy) -> Reg {
        self.regs.push(name.to_string());
        self.reg_tys.push(ty);
        self.reg_ptr.push(None);
        self.created.push(false);
        self.regs.len() - 1
    }

    fn new_temp(&mut self, ty: IntTy) -> Reg {
        let name = format!("%t{}", self.temps);
        self.temps += 1;
        self.new_reg(&name, ty)
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), b));
        }
    }

    fn lookup(&self, name: &str) -> Name {
        let scopes = self.scopes.iter().rev();
        for scope in scopes.chain(std::iter::once(&self.thread_locals)) {
            if let Some((_, b)) = scope.iter().rev().find(|(n, _)| n == name) {
                return match *b {
                    Binding::Var(r) => Name::Local(r),
                    Binding::Handle(r) => Name::Handle(r),
                    Binding::HandleArray(r, n) => Name::HandleArray(r, n),
                    Binding::Cell(loc) if self.cell_ty(loc) == Ty::Mutex => Name::Mutex(loc),
                    Binding::Cell(loc) => Name::Global(loc),
                    Binding::Object(i) => Name::Object(i),
                    Binding::LocalObject(r, i) => Name::LocalObject(r, i),
                    Binding::Forbidden => Name::Forbidden,
                };
            }
        }
        let visible = |loc: &&Loc| {
            self.cx
                .globals
                .get(**loc)
                .is_some_and(|g| g.span.start < self.visible_before)
        };
        if let Some(&loc) = self.cx.global_index.get(name).filter(visible) {
            if self.cell_ty(loc) == Ty::Mutex {
                return Name::Mutex(loc);
            }
            return Name::Global(loc);
        }
        if let Some(&i) = self.cx.object_index.get(name) {
            if self
                .cx
                .objects
                .get(i)
                .is_some_and(|o| o.start < self.visible_before)
            {
                return Name::Object(i);
            }
        }
        if self.cx.handles.iter().any(|(h, _)| h == name) {
            return Name::HandleOutsideMain;
        }
        if self.cx.fn_names.contains(name) {
            return Name::Function;
        }
        Name::Unknown
    }

    /// The statement of source node `n`: a new one, except in an inlined body, where every
    /// copy of a source statement shares the `Stmt` made for the first (its `func` is the
    /// function of that first copy).
    fn new_stmt(&mut self, n: Node) -> StmtId {
        if !self.inlines.is_empty() {
            if let Some(&sid) = self.cx.inline_stmts.get(&n.id()) {
                return sid;
            }
            self.cx.inline_stmts.insert(n.id(), self.cx.stmts.len());
        }
        self.cx.stmts.push(Stmt {
            func: self.fid,
            kind: StmtKind::Local,
            span: self.src.span(n),
            order_span: None,
        });
        self.cx.stmts.len() - 1
    }

    fn slot(&mut self, place: SlotPlace) {
        if self.in_await {
            return;
        }
        self.cx.slots.push(Slot {
            func: self.fid,
            place,
        });
        let id = self.cx.slots.len() - 1;
        self.emit(Instr::Slot(id));
    }

    /// The place of the global scalar (or mutex) at `loc`.
    fn fixed_place(&self, loc: Loc) -> Place {
        Place {
            addr: Addr::Fixed(loc),
            ty: self.cell_ty(loc),
        }
    }

    fn global_atomic(&self, loc: Loc) -> bool {
        self.cx.globals.get(loc).is_some_and(|g| g.atomic)
    }

    /// The range of values `e` can take, as far as cheaply known.
    fn value_ty(&self, e: &Expr) -> IntTy {
        match e {
            Expr::Const(0 | 1) => IntTy::Bool,
            Expr::Reg(r) => self.reg_tys.get(*r).copied().unwrap_or(IntTy::I64),
            Expr::Unary(UnOp::Not, _) => IntTy::Bool,
            Expr::Binary(
                BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::And
                | BinOp::Or,
                _,
                _,
            ) => IntTy::Bool,
            _ => IntTy::I64,
        }
    }

    /// C's conversion of `e` to `ty` (on assignment, initialisation, casts). Constants are
    /// converted exactly; computed values are not truncated to (signed) `int`, since `int`
    /// overflow is undefined in C anyway (this keeps the common case free of masking noise).
    fn convert(&self, e: Expr, ty: IntTy) -> Expr {
        match e {
            Expr::Const(c) => Expr::Const(ty.wrap(c)),
            e if ty == IntTy::I32 || self.value_ty(&e).fits_in(ty) => e,
            e => ty.wrap_expr(e),
        }
    }

    /// `e != 0` as a 0/1 value.
    fn truth(&self, e: Expr) -> Expr {
        if self.value_ty(&e) == IntTy::Bool {
            e
        } else {
            bin(BinOp::Ne, e, Expr::Const(0))
        }
    }

    /// Could lowering `n` emit an instruction (a memory access or a call)?
    fn may_access(&self, n: Node) -> bool {
        let mut cursor = n.walk();
        let mut depth = 0usize;
        loop {
            let node = cursor.node();
            match node.kind() {
                "call_expression"
                | "assignment_expression"
                | "update_expression"
                | "subscript_expression"
                | "field_expression" => return true,
                "pointer_expression"
                    if node
                        .child_by_field_name("operator")
                        .map(|o| self.src.text(o))
                        == Some("*") =>
                {
                    return true
                }
                "identifier" => {
                    let name = self.lookup(self.src.text(node));
                    if matches!(name, Name::Global(_) | Name::LocalObject(..)) {
                        return true;
                    }
                }
                _ => {}
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return false;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return false;
                }
                depth -= 1;
            }
        }
    }

    // ----- signatures -----------------------------------------------------------------------

    fn main_signature(&mut self, fdecl: Node) -> R<()> {
        let src = self.src;
        let Some(params) = fdecl.child_by_field_name("parameters") else {
            return Ok(());
        };
        for (i, p) in named_children(params).into_iter().enumerate() {
            if p.kind() != "parameter_declaration" {
                return Err(src.unsupported(p, "this parameter of `main`"));
            }
            let Some(mut d) = p.child_by_field_name("declarator") else {
                continue; // `int main(void)`
            };
            // CDSChecker's harness calls `user_main(argc, argv)` with the program's own
            // arguments: none, so `argc` is 1 (it is a local like any other).
            if i == 0
                && self.cx.main_name == "user_main"
                && d.kind() == "identifier"
                && dialect::body_mentions(&src, fdecl, src.text(d))
                && !self.taken.iter().any(|t| t.contains(src.text(d)))
            {
                let r = self.new_reg(src.text(d), IntTy::I32);
                self.emit(Instr::Assign {
                    dst: r,
                    val: Expr::Const(1),
                });
                self.bind(src.text(d), Binding::Var(r));
                continue;
            }
            // `char **argv`, `char *argv[]`
            for _ in 0..MAX_DEPTH {
                match d.kind() {
                    "pointer_declarator" | "array_declarator" => {
                        match d.child_by_field_name("declarator") {
                            Some(inner) => d = inner,
                            None => break,
                        }
                    }
                    _ => break,
                }
            }
            if d.kind() == "identifier" {
                let name = src.text(d).to_string();
                self.bind(&name, Binding::Forbidden);
            }
        }
        Ok(())
    }

    fn thread_signature(&mut self, def: Node, fdecl: Node, name: &str) -> R<()> {
        let src = self.src;
        let by = self.cx.spawned.get(name).copied().unwrap_or_default();
        if by.cpp {
            return self.cpp_thread_signature(def, fdecl, name, by);
        }
        if by.pthread && by.c11 {
            return Err(src.unsupported(
                def,
                &format!(
                    "thread function `{name}` passed to both pthread_create and thrd_create \
                     (their thread functions have different signatures)"
                ),
            ));
        }
        let bad = || {
            let signature = if by.c11 {
                format!(
                    "`int {name}(void *)` or `void {name}(void *)` (it is passed to thrd_create)"
                )
            } else {
                format!("`void *{name}(void *)`")
            };
            src.unsupported(
                def,
                &format!("thread function `{name}` must have the signature {signature}"),
            )
        };
        let spec = types::decl_spec(&src, &self.cx.types, def).map_err(|_| bad())?;
        let returns_pointer = def.child_by_field_name("declarator").is_some_and(|d| {
            d.kind() == "pointer_declarator" && d.child_by_field_name("declarator") == Some(fdecl)
        });
        // C11's thrd_start_t is `int (*)(void *)`; CDSChecker's is `void (*)(void *)`.
        // Through a cast, CDSChecker's harnesses also pass `void *f(void *)` (fib_bench): its
        // result is not read (their `thrd_join(t)` takes none).
        let ret_ok = if by.c11 {
            (matches!(spec.ty, BaseTy::Int(IntTy::I32) | BaseTy::Void) && !returns_pointer)
                || (by.cast && spec.ty == BaseTy::Void && returns_pointer)
        } else {
            spec.ty == BaseTy::Void && returns_pointer
        };
        if spec.atomic || !ret_ok {
            return Err(bad());
        }
        let Some(params) = fdecl.child_by_field_name("parameters") else {
            return Ok(());
        };
        let params = named_children(params);
        match params.as_slice() {
            [] => Ok(()),
            [p] if p.kind() == "parameter_declaration" => {
                let pspec = types::decl_spec(&src, &self.cx.types, *p).map_err(|_| bad())?;
                let void = pspec.ty == BaseTy::Void && !pspec.atomic;
                let Some(d) = p.child_by_field_name("declarator") else {
                    return if void { Ok(()) } else { Err(bad()) }; // `(void)`
                };
                if d.kind() == "abstract_pointer_declarator" && d.named_child_count() == 0 {
                    return if void { Ok(()) } else { Err(bad()) };
                }
                if d.kind() != "pointer_declarator" {
                    return Err(bad());
                }
                // `void *arg`, or a pointer to another type (`void threadA(struct q *queue)`
                // passed as `(thrd_start_t)&threadA`, as the thesis's mpmc-queue does): the
                // argument, a pointer, is read as the parameter's type.
                let decl = types::declarator(&src, &pspec, d, &mut |n| self.const_here(n))
                    .map_err(|_| bad())?;
                let Ty::Ptr { to, atomic: false } = decl.ty else {
                    return Err(bad());
                };
                let pname = src.text(decl.name).to_string();
                let r = self.new_reg(&pname, IntTy::I64);
                self.set_pointee(r, *to);
                self.param = Some(r);
                self.bind(&pname, Binding::Var(r));
                Ok(())
            }
            _ => Err(bad()),
        }
    }

    // ----- statements -----------------------------------------------------------------------

    /// Lowers a `{ ... }` block; returns whether its last statement diverts control (see
    /// [`FnLower::stmt`]), in which case no block-end slot is emitted.
    fn block(&mut self, n: Node, block_stmt: Option<StmtId>) -> R<bool> {
        self.enter(n)?;
        self.goto_enter_body(n)?;
        self.scopes.push(Vec::new());
        let mut last = None;
        let mut returned = false;
        for s in named_children(n) {
            let Some(s) = self.take_labels(s)? else {
                returned = false; // `L:;` — a label is a jump target
                continue;
            };
            let sid = self.new_stmt(s);
            self.cur_stmt = sid;
            self.slot(SlotPlace::Before { stmt: sid });
            let start = self.body.len();
            returned = self.stmt(s, sid)?;
            self.classify(sid, start);
            last = Some(sid);
        }
        if !returned {
            let owner = match last.or(block_stmt) {
                Some(s) => s,
                None => self.new_stmt(n),
            };
            self.cur_stmt = owner;
            let close = self.src.close_span(n);
            self.slot(SlotPlace::BlockEnd { after: last, close });
        }
        self.cpp_block_end(returned)?;
        self.scopes.pop();
        self.goto_leave_body(n)?;
        self.depth -= 1;
        Ok(returned)
    }

    /// Sets the kind of statement `sid` from its instructions (from `start` on).
    fn classify(&mut self, sid: StmtId, start: usize) {
        let (mut fence, mut access, mut thread) = (false, false, false);
        for (pc, ins) in self.body.iter().enumerate().skip(start) {
            if self.stmt_of.get(pc) != Some(&sid) {
                continue;
            }
            match ins {
                Instr::Fence { .. } => fence = true,
                Instr::Load { .. }
                | Instr::Store { .. }
                | Instr::Rmw { .. }
                | Instr::Cas { .. } => access = true,
                Instr::Spawn { .. } | Instr::Join { .. } => thread = true,
                _ => {}
            }
        }
        let kind = if fence {
            StmtKind::Fence
        } else if access {
            StmtKind::Access
        } else if thread {
            StmtKind::Thread
        } else {
            StmtKind::Local
        };
        if let Some(s) = self.cx.stmts.get_mut(sid) {
            s.kind = kind;
        }
    }

    /// Lowers one statement; returns whether control never falls through it: `return`,
    /// `pthread_exit`, `break`, `continue`, a block ending with one, or an `if`/`else` both of
    /// whose branches do (loops and `switch` are conservatively assumed to fall through).
    fn stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        if let Some(diverts) = self.cpp_stmt(s, sid)? {
            return Ok(diverts);
        }
        let src = self.src;
        let unsupported = |what: &str| Err(src.unsupported(s, what));
        match s.kind() {
            "compound_statement" => self.block(s, Some(sid)),
            "declaration" => self.local_decl(s).map(|_| false),
            "expression_statement" => self.expr_stmt(s),
            "return_statement" if !self.inlines.is_empty() => self.inline_return(s),
            "return_statement" => {
                self.end_thread(named_children(s).first().copied())?;
                Ok(true)
            }
            "if_statement" => self.if_stmt(s, sid),
            "while_statement" => self.while_stmt(s, sid),
            "do_statement" => self.do_stmt(s, sid),
            "for_statement" => self.for_stmt(s, sid),
            "switch_statement" => self.switch_stmt(s, sid),
            "break_statement" => self.break_stmt(s),
            "continue_statement" => self.continue_stmt(s),
            "case_statement" => {
                if self.jumps.iter().any(|j| !j.is_loop) {
                    if s.child_by_field_name("value").is_none() {
                        unsupported("'default' label nested inside a statement of the switch body")
                    } else {
                        unsupported("'case' label nested inside a statement of the switch body")
                    }
                } else if s.child_by_field_name("value").is_none() {
                    Err(src.error(s, "'default' label not within a switch statement"))
                } else {
                    Err(src.error(s, "'case' label not within a switch statement"))
                }
            }
            "goto_statement" => self.goto_stmt(s),
            // Labels in blocks and under `case`s are taken off by `take_labels`.
            "labeled_statement" => unsupported(
                "label on the unbraced body of an `if`, `else` or loop (put the body in braces)",
            ),
            "type_definition" => unsupported("typedef inside a function"),
            "struct_specifier" if s.child_by_field_name("body").is_some() => {
                self.cx.define_struct(s).map(|_| false)
            }
            "struct_specifier" => Ok(false), // `struct S;`
            "union_specifier" if s.child_by_field_name("body").is_some() => {
                self.cx.define_struct(s).map(|_| false)
            }
            "union_specifier" => Ok(false), // `union U;`
            "enum_specifier" => {
                unsupported("enum definition inside a function (define it at file scope)")
            }
            "function_definition" => unsupported("nested function definition"),
            "attributed_statement" => unsupported("attribute"),
            k if k.starts_with("preproc") => {
                unsupported("preprocessor directive inside a function")
            }
            k => unsupported(&format!("statement `{k}`")),
        }
    }

    fn local_decl(&mut self, n: Node) -> R<()> {
        let src = self.src;
        self.cx.define_inline_struct(n)?;
        let spec = types::decl_spec(&src, &self.cx.types, n)?;
        let mut is_static = false;
        if let Some((storage, at)) = &spec.storage {
            match storage.as_str() {
                "register" | "auto" => {}
                "static" => is_static = true,
                _ => return Err(src.unsupported(*at, &format!("`{storage}` local variable"))),
            }
        }
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            if matches!(spec.ty, BaseTy::Struct(_)) {
                return Ok(()); // a local struct definition
            }
            return Err(src.unsupported(n, "declaration that declares no variable"));
        }
        for d in decls {
            if let (BaseTy::Struct(id), false) = (&spec.ty, is_static) {
                if self.class_local(d, &Ty::Struct(*id))? {
                    continue;
                }
            } else if let BaseTy::Struct(id) = &spec.ty {
                if self.destructs(&Ty::Struct(*id)) {
                    return Err(src.unsupported(
                        d,
                        "`static` local object of a class with a destructor (it would run at \
                         exit)",
                    ));
                }
                if self.constructs(&Ty::Struct(*id)).is_some() {
                    return Err(src.unsupported(
                        d,
                        "`static` local object of a class with a constructor or default member \
                         initialisers",
                    ));
                }
            }
            if let Some(f) = function_declarator(d) {
                if super::function_name(&src, f).is_none() {
                    return Err(src
                        .unsupported(d, "function pointer (function pointers are not supported)"));
                }
                return Err(src.unsupported(d, "function declaration inside a function"));
            }
            if !is_static && self.reference_local(d, &spec)? {
                continue;
            }
            let decl = types::declarator(&src, &spec, d, &mut |n| self.const_here(n))?;
            let name = src.text(decl.name).to_string();
            self.heap.declaring.push((name.clone(), decl.ty.clone()));
            let declared = self.local_declarator(d, &spec, is_static, decl, &name);
            self.heap.declaring.pop();
            declared?;
        }
        Ok(())
    }

    /// One declarator `d` of a local declaration (see [`Self::local_decl`]).
    fn local_declarator(
        &mut self,
        d: Node,
        spec: &types::DeclSpec,
        is_static: bool,
        decl: types::Declared,
        name: &str,
    ) -> R<()> {
        let src = self.src;
        let (name_node, init) = (decl.name, decl.init);
        let name = name.to_string();
        let redefined = self
            .scopes
            .last()
            .is_some_and(|s| s.iter().any(|(n, _)| *n == name));
        if redefined {
            return Err(src.error(name_node, &format!("redefinition of `{name}`")));
        }
        if is_static {
            let b = self.static_local(d, name_node, &name, &decl.ty, init)?;
            self.bind(&name, b);
            return Ok(());
        }
        let ty = match decl.ty {
            Ty::Int { ty, .. } if spec.atomic => Ty::Int { ty, atomic: true },
            ref t => t.clone(),
        };
        if self.local_in_memory(&name, &ty) {
            let b = self.local_object(name_node, &name, &ty, init)?;
            self.bind(&name, b);
            return Ok(());
        }
        match decl.ty {
            Ty::Thread | Ty::Array(..)
                if matches!(&decl.ty, Ty::Array(t, _) if **t == Ty::Thread)
                    || decl.ty == Ty::Thread =>
            {
                if let Some(v) = init {
                    if decl.ty != Ty::Thread {
                        return Err(
                            src.unsupported(v, "initialiser for an array of thread handles")
                        );
                    }
                    // `thrd_t curr = thrd_current();`: a handle holding that id.
                    let id = self.handle_expr(v)?;
                    let r = self.new_reg(&name, IntTy::I64);
                    self.emit(Instr::Assign { dst: r, val: id });
                    self.bind(&name, Binding::Handle(r));
                    return Ok(());
                }
                let len = match decl.ty {
                    Ty::Array(_, n) => Some(n),
                    _ => None,
                };
                let b = self.handle_regs(&name, len);
                self.bind(&name, b);
            }
            Ty::Int { ty, atomic } => {
                if atomic || spec.atomic {
                    return Err(
                        src.unsupported(name_node, &format!("atomic local variable `{name}`"))
                    );
                }
                let val = match init {
                    Some(v) => self.expr(v)?,
                    None => Expr::Const(0),
                };
                let val = self.convert(val, ty);
                let r = self.new_reg(&name, ty);
                self.emit(Instr::Assign { dst: r, val });
                self.bind(&name, Binding::Var(r));
            }
            Ty::Ptr { to, atomic } => {
                if atomic {
                    return Err(
                        src.unsupported(name_node, &format!("atomic local variable `{name}`"))
                    );
                }
                let val = match init {
                    Some(v) => {
                        self.expect_pointee(v, &to);
                        self.ptr_value(v)?.0
                    }
                    None => Expr::Const(0),
                };
                let r = self.new_reg(&name, IntTy::I64);
                self.set_pointee(r, *to);
                self.emit(Instr::Assign { dst: r, val });
                self.bind(&name, Binding::Var(r));
            }
            Ty::Mutex | Ty::Sync(_) | Ty::Array(..) | Ty::Struct(_) => {
                // `local_in_memory` puts these in memory.
                return Err(src.internal("aggregate local not in memory"));
            }
            Ty::Void | Ty::Thread => {
                return Err(src.error(name_node, &format!("variable `{name}` has type void")));
            }
        }
        Ok(())
    }

    /// A `static` local: memory cells allocated once per source declaration (shared by every
    /// thread running the function and every inlined copy), initialised like a global.
    fn static_local(
        &mut self,
        d: Node,
        name_node: Node,
        name: &str,
        ty: &Ty,
        init: Option<Node>,
    ) -> R<Binding> {
        let src = self.src;
        let binding = |(base, object): (Loc, Option<usize>)| match object {
            Some(i) => Binding::Object(i),
            None => Binding::Cell(base),
        };
        if let Some(&b) = self.cx.statics.get(&d.id()) {
            return Ok(binding(b));
        }
        if matches!(ty, Ty::Thread) || matches!(ty, Ty::Array(t, _) if **t == Ty::Thread) {
            return Err(src.unsupported(name_node, "static thread handle"));
        }
        if matches!(ty, Ty::Void) {
            return Err(src.error(name_node, &format!("variable `{name}` has type void")));
        }
        let func = self
            .inlines
            .last()
            .map(|f| f.name().to_string())
            .unwrap_or_else(|| self.root_name.clone());
        let cell_name = format!("{func}::{name}");
        let b = self.cx.alloc(&cell_name, name_node, ty, init)?;
        self.cx.statics.insert(d.id(), b);
        Ok(binding(b))
    }

    /// Registers for a thread handle (`len` = `None`) or an array of `len` handles of `main`.
    fn handle_regs(&mut self, name: &str, len: Option<usize>) -> Binding {
        match len {
            None => Binding::Handle(self.new_reg(name, IntTy::I64)),
            Some(n) => {
                let first = self.regs.len();
                for i in 0..n {
                    self.new_reg(&format!("{name}[{i}]"), IntTy::I64);
                }
                Binding::HandleArray(first, n)
            }
        }
    }

    fn expr_stmt(&mut self, s: Node) -> R<bool> {
        let Some(e) = named_children(s).first().copied() else {
            return Ok(false); // `;`
        };
        match e.kind() {
            "assignment_expression" => self.assign(e).map(|_| false),
            "update_expression" => self.update(e).map(|_| false),
            "call_expression" => self.call_stmt(e),
            "comma_expression" => self.for_clause(e).map(|_| false),
            _ => self.expr(e).map(|_| false),
        }
    }

    /// `lhs op= rhs` where `op` is `None` for plain `=`. `rhs` is lowered by `rhs`. Returns
    /// the value of the assignment expression: the target's new value, converted to its type
    /// (a local's register, or the expression stored).
    fn write(
        &mut self,
        target: Node,
        op: Option<(BinOp, &str)>,
        rhs: &mut dyn FnMut(&mut Self) -> R<TExpr>,
    ) -> R<TExpr> {
        let src = self.src;
        let target = strip_parens(target);
        if target.kind() != "identifier" {
            return match self.place_of(target)? {
                Some(p) => self.write_place(target, &p, op, rhs),
                None => Err(src.unsupported(target, "assignment to this expression")),
            };
        }
        let name = src.text(target);
        match self.lookup(name) {
            Name::Local(r) => {
                let ty = self.reg_tys.get(r).copied().unwrap_or(IntTy::I64);
                let pointee = self.reg_ptr.get(r).cloned().flatten();
                self.set_pending_pointee(pointee.clone());
                let rhs = rhs(self);
                self.set_pending_pointee(None);
                let (v, tv) = rhs?;
                let v = match (op, pointee) {
                    (Some((op @ (BinOp::Add | BinOp::Sub), _)), Some(to)) => {
                        // Pointer arithmetic moves by whole elements.
                        let size = self.cx.types.size(&to).max(1) as i64;
                        bin(op, Expr::Reg(r), bin(BinOp::Mul, v, Expr::Const(size)))
                    }
                    (Some((_, text)), Some(_)) => {
                        return Err(
                            src.unsupported(target, &format!("`{text}` on pointer `{name}`"))
                        )
                    }
                    (Some((op, _)), None) => self.arith(op, Expr::Reg(r), ty, v, tv).0,
                    (None, _) => v,
                };
                let val = self.convert(v, ty);
                self.emit(Instr::Assign { dst: r, val });
                Ok((Expr::Reg(r), promote(ty)))
            }
            Name::Global(loc) => {
                let p = Place {
                    addr: Addr::Fixed(loc),
                    ty: self.cell_ty(loc),
                };
                self.write_place(target, &p, op, rhs)
            }
            Name::Object(i) => match self.cx.objects.get(i).map(|o| o.ty.clone()) {
                Some(Ty::Sync(k)) => {
                    Err(mutex::object_misuse(&src, target, name, k.c_name(), true))
                }
                ty => Err(self.object_write_error(target, ty.as_ref(), name)),
            },
            Name::LocalObject(..) => match self.place_of(target)? {
                Some(p) => self.write_place(target, &p, op, rhs),
                None => Err(src.internal("local object without a place")),
            },
            other => Err(self.name_error(target, name, other, true)),
        }
    }

    /// The refusal of a write to the array or struct `text` of type `ty`: for an object of a
    /// class with overloaded operators, that their calls are not supported.
    fn object_write_error(&self, at: Node, ty: Option<&Ty>, text: &str) -> super::Diagnostic {
        ty.and_then(|t| self.operator_use_error(at, t))
            .unwrap_or_else(|| {
                self.src
                    .unsupported(at, &format!("assignment to array or struct `{text}`"))
            })
    }

    /// When `ty` is a class with overloaded operators: the refusal of using an object of it
    /// (at `at`) as a value, which could call one of them.
    fn operator_use_error(&self, at: Node, ty: &Ty) -> Option<super::Diagnostic> {
        let Ty::Struct(id) = ty else { return None };
        let c = self.cx.class_of(*id).filter(|c| !c.operators.is_empty())?;
        Some(self.src.unsupported(
            at,
            &format!(
                "object of class `{}` used as a value (calls of its overloaded operators are \
                 not supported)",
                c.name
            ),
        ))
    }

    /// `p op= rhs` on the scalar place `p` (written as `target`); returns the value stored
    /// (see [`Self::write`]).
    fn write_place(
        &mut self,
        target: Node,
        p: &Place,
        op: Option<(BinOp, &str)>,
        rhs: &mut dyn FnMut(&mut Self) -> R<TExpr>,
    ) -> R<TExpr> {
        let src = self.src;
        let ty = p.ty.int_ty();
        match &p.ty {
            Ty::Mutex => return Err(mutex::misuse(&src, target, src.text(target), true)),
            Ty::Sync(k) => {
                let text = src.text(target);
                return Err(mutex::object_misuse(&src, target, text, k.c_name(), true));
            }
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => {}
            _ => return Err(self.object_write_error(target, Some(&p.ty), src.text(target))),
        }
        if let (Ty::Ptr { .. }, Some((_, text))) = (&p.ty, op) {
            let name = src.text(target);
            return Err(src.unsupported(target, &format!("`{text}` on pointer `{name}`")));
        }
        if let (Ty::Ptr { to, .. }, None) = (&p.ty, op) {
            self.set_pending_pointee(Some((**to).clone()));
        }
        if p.ty.is_atomic() {
            if let Some((op, text)) = op {
                return self.atomic_compound(target, p, op, text, false, rhs);
            }
            let v = rhs(self);
            self.set_pending_pointee(None);
            let (v, _) = v?;
            let val = self.convert(v, ty);
            self.emit(Instr::Store {
                loc: p.addr.clone(),
                val: val.clone(),
                order: MemOrder::SeqCst,
            });
            Ok((val, promote(ty)))
        } else {
            let old = op.map(|_| self.load_place(p, MemOrder::NonAtomic));
            let v = rhs(self);
            self.set_pending_pointee(None);
            let (v, tv) = v?;
            let v = match (op, old) {
                (Some((op, _)), Some(old)) => self.arith(op, old, ty, v, tv).0,
                _ => v,
            };
            let val = self.convert(v, ty);
            self.emit(Instr::Store {
                loc: p.addr.clone(),
                val: val.clone(),
                order: MemOrder::NonAtomic,
            });
            Ok((val, promote(ty)))
        }
    }

    /// An assignment (`=` or compound); returns its value (see [`Self::write`]).
    fn assign(&mut self, e: Node) -> R<TExpr> {
        let src = self.src;
        let (Some(left), Some(right), Some(op)) = (
            e.child_by_field_name("left"),
            e.child_by_field_name("right"),
            e.child_by_field_name("operator"),
        ) else {
            return Err(src.unsupported(e, "assignment"));
        };
        let op_text = src.text(op);
        let op = if op_text == "=" {
            None
        } else {
            let Some(b) = binop(op_text.trim_end_matches('=')) else {
                return Err(src.unsupported(op, &format!("operator `{op_text}`")));
            };
            Some((b, op_text))
        };
        // A struct assignment copies every cell (its value, a struct, is not an integer).
        let place_target = strip_parens(left).kind() != "identifier";
        if op.is_none()
            && (place_target || matches!(self.peek_place_type(left), Some(Ty::Struct(_))))
        {
            let Some(dst) = self.place_of(left)? else {
                return Err(src.unsupported(left, "assignment to this expression"));
            };
            if !matches!(dst.ty, Ty::Struct(_)) {
                return self.write_place(left, &dst, op, &mut |l: &mut Self| {
                    l.expect_pending(right);
                    l.texpr(right)
                });
            }
            self.struct_copy(e, &dst, right)?;
            return Ok((Expr::Const(0), IntTy::I32));
        }
        self.write(left, op, &mut |l: &mut Self| {
            l.expect_pending(right);
            l.texpr(right)
        })
    }

    /// `++x` / `x++` / `--x` / `x--` as `x += 1` / `x -= 1`; returns the new value.
    fn update(&mut self, e: Node) -> R<TExpr> {
        let src = self.src;
        let (Some(arg), Some(op)) = (
            e.child_by_field_name("argument"),
            e.child_by_field_name("operator"),
        ) else {
            return Err(src.unsupported(e, "increment"));
        };
        let op = match src.text(op) {
            "++" => (BinOp::Add, "++"),
            "--" => (BinOp::Sub, "--"),
            t => return Err(src.unsupported(op, &format!("operator `{t}`"))),
        };
        self.write(arg, Some(op), &mut |_: &mut Self| {
            Ok((Expr::Const(1), IntTy::I32))
        })
    }

    /// The value of the macro `n` (an identifier naming a macro defined before it).
    fn macro_value(&self, n: Node) -> R<TExpr> {
        let src = self.src;
        let name = src.text(n);
        match self.cx.macro_value_of(name) {
            Some(v) => Ok((Expr::Const(v), super::macros::macro_ty(v))),
            None => Err(src.internal("macro_value of a name that is not a macro")),
        }
    }

    fn name_error(&self, n: Node, name: &str, what: Name, write: bool) -> super::Diagnostic {
        let src = self.src;
        match what {
            Name::Unknown if self.cx.macro_value_of(name).is_some() => src.error(
                n,
                &format!("`{name}` is a macro (the preprocessor replaces it by its value)"),
            ),
            Name::Unknown if self.cx.enumerator_at(name, n.start_byte()).is_some() => src.error(
                n,
                &format!("`{name}` is an enumeration constant, not a variable"),
            ),
            Name::Unknown if self.mode == Mode::Const => {
                src.error(n, "initialiser of a global must be a constant expression")
            }
            Name::Unknown if name.starts_with("memory_order_") => {
                src.unsupported(n, &format!("memory order `{name}` used as a value"))
            }
            Name::Unknown => src.error(n, &format!("undeclared identifier `{name}`")),
            Name::Mutex(_) => mutex::misuse(&src, n, name, write),
            Name::Forbidden => src.unsupported(
                n,
                &format!("use of `{name}` (parameters of main are not supported)"),
            ),
            Name::HandleOutsideMain => src.unsupported(
                n,
                &format!("thread handle `{name}` can only be used in main"),
            ),
            Name::Handle(_) | Name::HandleArray(..) if write => {
                src.unsupported(n, &format!("assignment to thread handle `{name}`"))
            }
            Name::Handle(_) | Name::HandleArray(..) => {
                src.unsupported(n, &format!("thread handle `{name}` used in an expression"))
            }
            Name::Function => src.unsupported(
                n,
                &format!("function `{name}` used as a value (function pointers are not supported)"),
            ),
            Name::Object(_) | Name::LocalObject(..) if write => {
                src.unsupported(n, &format!("assignment to array or struct `{name}`"))
            }
            Name::Local(_) | Name::Global(_) | Name::Object(_) | Name::LocalObject(..) => {
                src.error(n, "initialiser of a global must be a constant expression")
            }
        }
    }

    // ----- calls ----------------------------------------------------------------------------

    fn callee<'t>(&self, call: Node<'t>) -> R<(&'a str, Vec<Node<'t>>)> {
        let src = self.src;
        let f = call
            .child_by_field_name("function")
            .ok_or_else(|| src.unsupported(call, "call"))?;
        let f = self.std_callee(f);
        // `(*f)(...)` and `(f)(...)` of a function `f` are calls of `f`.
        let f = match funptr::pointer_callee(call) {
            Some(g) if f.kind() != "identifier" && g.kind() == "identifier" => g,
            _ => f,
        };
        if f.kind() != "identifier" {
            return Err(src.unsupported(call, "call through a function pointer"));
        }
        let mut args = call
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let name = src.text(f);
        // The thesis's instrumented dialect: `__FILE__, __LINE__` before the arguments.
        self.strip_location(name, &mut args);
        // The CDSChecker test dialect passes `__FILE__, __LINE__` to its atomic and thread
        // calls: they locate the call and have no effect.
        let api = ["atomic_", "pthread_", "thrd_", "MODEL_ASSERT"]
            .iter()
            .any(|p| name.starts_with(p));
        if api {
            while args
                .last()
                .is_some_and(|a| matches!(src.user_text(*a), "__FILE__" | "__LINE__"))
            {
                args.pop();
            }
        }
        Ok((name, args))
    }

    fn arity(&self, call: Node, name: &str, args: &[Node], n: usize) -> R<()> {
        if args.len() != n {
            let s = if n == 1 { "" } else { "s" };
            return Err(self.src.error(
                call,
                &format!("`{name}` expects {n} argument{s}, got {}", args.len()),
            ));
        }
        Ok(())
    }

    fn mem_order(&self, n: Node) -> R<(MemOrder, &'a str)> {
        let n = strip_parens(n);
        if let Some(o) = super::cpp::mem_order_c_name(&self.src, n) {
            if let Some(o) = mem_order_name(&o) {
                return Ok((o, self.src.text(n)));
            }
        }
        if n.kind() == "identifier" {
            let name = self.src.text(n);
            if let Some(o) = mem_order_name(name) {
                return Ok((o, name));
            }
        }
        Err(self.src.unsupported(
            n,
            "memory order argument must be a `memory_order_*` constant",
        ))
    }

    fn is_null(&self, n: Node) -> bool {
        let mut n = n;
        for _ in 0..MAX_DEPTH {
            n = strip_parens(n);
            match n.kind() {
                "null" => return true,
                "number_literal" => return literal::parse_number(self.src.text(n)) == Ok(0),
                "cast_expression" => match n.child_by_field_name("value") {
                    Some(v) => n = v,
                    None => return false,
                },
                _ => return false,
            }
        }
        false
    }

    /// A call in statement position; returns whether it ends the thread.
    fn call_stmt(&mut self, call: Node) -> R<bool> {
        if self.relacy_read(call)?.is_some() {
            return Ok(false);
        }
        if self.is_indirect_call(call) {
            return self.indirect_call(call, false).map(|_| false);
        }
        if self.cpp_call(call, false)?.is_some() {
            return Ok(false);
        }
        let src = self.src;
        let (name, args) = self.callee(call)?;
        match self.lookup(name) {
            Name::Local(_) | Name::Global(_) | Name::Mutex(_) | Name::Handle(_) => {
                return self.call_value(call).map(|_| false);
            }
            Name::Function if self.cx.fn_defs.contains_key(name) => {
                return self.inline_call(call, name, &args, false).map(|_| false)
            }
            _ => {}
        }
        if let Some((_, diverts)) = self.thread_call(call, name, &args)? {
            return Ok(diverts);
        }
        if self.builtin_call(call, name, &args, false)?.is_some() {
            return Ok(false);
        }
        if self.heap_call(call, name, &args, false)?.is_some() {
            return Ok(false);
        }
        if self.librace_call(call, name, &args, false)?.is_some() {
            return Ok(false);
        }
        match name {
            "atomic_store" | "atomic_store_explicit" => {
                let explicit = name == "atomic_store_explicit";
                self.arity(call, name, &args, if explicit { 3 } else { 2 })?;
                let cell = self.atomic_place(args[0])?;
                if let Ty::Ptr { to, .. } = &cell.ty {
                    self.expect_pointee(args[1], to);
                }
                let v = self.expr(args[1])?;
                let order = if explicit {
                    let (o, oname) = self.mem_order(args[2])?;
                    if o.is_acquire() && o != MemOrder::SeqCst {
                        return Err(
                            src.error(args[2], &format!("{oname} is not valid for a store"))
                        );
                    }
                    o
                } else {
                    MemOrder::SeqCst
                };
                let val = self.convert(v, cell.ty.int_ty());
                self.emit(Instr::Store {
                    loc: cell.addr,
                    val,
                    order,
                });
                Ok(false)
            }
            "atomic_init" => {
                // Initialisation is modelled as a relaxed store (see the module doc).
                self.arity(call, name, &args, 2)?;
                let cell = self.atomic_place(args[0])?;
                let v = self.expr(args[1])?;
                let val = self.convert(v, cell.ty.int_ty());
                self.emit(Instr::Store {
                    loc: cell.addr,
                    val,
                    order: MemOrder::Relaxed,
                });
                Ok(false)
            }
            "__VERIFIER_assume" | "assume" => {
                self.arity(call, name, &args, 1)?;
                let cond = self.expr(args[0])?;
                self.emit(Instr::Assume { cond });
                Ok(false)
            }
            "atomic_thread_fence" => {
                self.arity(call, name, &args, 1)?;
                let (order, _) = self.mem_order(args[0])?;
                self.emit(Instr::Fence { order });
                let span = src.span(args[0]);
                if let Some(s) = self.cx.stmts.get_mut(self.cur_stmt) {
                    s.order_span = Some(span);
                }
                Ok(false)
            }
            "assert" | "MODEL_ASSERT" => {
                self.arity(call, name, &args, 1)?;
                let cond = self.expr(args[0])?;
                let text = src.user_text(args[0]).to_string();
                self.emit(Instr::Assert { cond, text });
                Ok(false)
            }
            n if sync::is_sync_call(n) => self.sync_call(call, name, &args).map(|_| false),
            "atomic_flag_clear" | "atomic_flag_clear_explicit" => {
                let explicit = name.ends_with("_explicit");
                self.arity(call, name, &args, if explicit { 2 } else { 1 })?;
                let cell = self.atomic_place(args[0])?;
                let order = if explicit {
                    let (o, oname) = self.mem_order(args[1])?;
                    if o.is_acquire() && o != MemOrder::SeqCst {
                        return Err(
                            src.error(args[1], &format!("{oname} is not valid for a clear"))
                        );
                    }
                    o
                } else {
                    MemOrder::SeqCst
                };
                self.emit(Instr::Store {
                    loc: cell.addr,
                    val: Expr::Const(0),
                    order,
                });
                Ok(false)
            }
            "printf" | "fprintf" | "puts" | "fputs" | "putchar" | "fputc" | "fflush" | "perror" => {
                self.output_call(call, name, &args)?;
                Ok(false)
            }
            _ => self.call_value(call).map(|_| false),
        }
    }

    /// An output call (`printf`, `puts`, ...) in statement position: it has no effect on shared
    /// memory, so it is ignored with a note; its arguments are still evaluated for their
    /// effects (a load in an argument is a real access), except format strings and the
    /// `stdout` / `stderr` streams.
    fn output_call(&mut self, call: Node, name: &str, args: &[Node]) -> R<()> {
        let src = self.src;
        for a in args {
            let a = strip_parens(*a);
            match a.kind() {
                "string_literal" | "concatenated_string" => continue,
                "identifier" if matches!(src.text(a), "stdout" | "stderr") => continue,
                _ => {
                    self.expr(a)?;
                }
            }
        }
        let span = src.span(call);
        if !self.cx.notes.iter().any(|n| n.span == span) {
            self.cx.notes.push(crate::ir::Note {
                span,
                message: format!("`{name}` ignored: output has no effect on shared memory"),
                warning: false,
                file: None,
            });
        }
        Ok(())
    }

    /// Records a warning about `n` (once per position: an inlined function is lowered once per
    /// call).
    fn warn(&mut self, n: Node, message: String) {
        let span = self.src.span(n);
        if !self
            .cx
            .notes
            .iter()
            .any(|x| x.span == span && x.message == message)
        {
            self.cx.notes.push(crate::ir::Note {
                span,
                message,
                warning: true,
                file: None,
            });
        }
    }

    /// C++'s `T()` and `T(v)` for a type name `T` of an integer type (a typedef, a bound
    /// template parameter): the value-initialised 0, or `v` converted to `T`.
    fn functional_cast(&mut self, name: &str, args: &[Node]) -> R<Option<TExpr>> {
        if self.src.lang != super::Lang::Cpp || !matches!(self.lookup(name), Name::Unknown) {
            return Ok(None);
        }
        let ty = match self.cx.types.typedefs.get(name) {
            Some(&(BaseTy::Int(t), false)) => t,
            _ => match types::plain_typedef(name) {
                Some(BaseTy::Int(t)) => t,
                _ => return Ok(None),
            },
        };
        match args {
            [] => Ok(Some((Expr::Const(0), promote(ty)))),
            [a] => {
                let v = self.expr(*a)?;
                Ok(Some((self.convert(v, ty), promote(ty))))
            }
            [_, extra, ..] => Err(self.src.unsupported(
                *extra,
                &format!("`{name}(...)` with more than one argument"),
            )),
        }
    }

    /// `p->N` / `o.N` naming a `static const` member `N` of the object's class (C++ allows
    /// reaching a static member through an object: concurrent-hashmap's
    /// `table->CONCURRENCY_LEVEL`): its value. The object is not evaluated (it is not read).
    fn static_member_of_object(&self, n: Node) -> Option<i64> {
        if self.src.lang != super::Lang::Cpp {
            return None;
        }
        let arg = n.child_by_field_name("argument")?;
        let field = self.src.text(n.child_by_field_name("field")?);
        let arrow = n
            .child_by_field_name("operator")
            .is_some_and(|o| self.src.text(o) == "->");
        let ty = match (self.static_type(arg).ok()?, arrow) {
            (Ty::Ptr { to, .. }, true) => *to,
            (t, false) => t,
            _ => return None,
        };
        let Ty::Struct(id) = ty else { return None };
        if self.cx.types.field(id, field).is_some() {
            return None;
        }
        self.cx.class_of(id)?.constant(field)
    }

    /// A call whose value is used (or an expression-only call in statement position).
    fn call_value(&mut self, call: Node) -> R<TExpr> {
        if let Some(v) = self.relacy_read(call)? {
            return Ok(v);
        }
        if self.is_indirect_call(call) {
            return self.indirect_call(call, true);
        }
        if let Some(v) = self.cpp_call(call, true)? {
            return Ok(v);
        }
        let src = self.src;
        let (name, args) = self.callee(call)?;
        if let Some(v) = self.functional_cast(name, &args)? {
            return Ok(v);
        }
        match self.lookup(name) {
            Name::Local(_)
            | Name::Global(_)
            | Name::Object(_)
            | Name::LocalObject(..)
            | Name::Mutex(_)
            | Name::Handle(_)
            | Name::HandleArray(..)
            | Name::Forbidden => {
                return Err(src.unsupported(call, &format!("call of non-function `{name}`")));
            }
            Name::Function if self.cx.fn_defs.contains_key(name) => {
                return self.inline_call(call, name, &args, true)
            }
            Name::Function | Name::HandleOutsideMain | Name::Unknown => {}
        }
        if self.mode == Mode::Const && name != "ATOMIC_VAR_INIT" {
            return Err(src.error(
                call,
                "initialiser of a global must be a constant expression",
            ));
        }
        if let Some((value, _)) = self.thread_call(call, name, &args)? {
            return Ok(value);
        }
        if let Some(v) = self.builtin_call(call, name, &args, true)? {
            return Ok(v);
        }
        if let Some(v) = self.heap_call(call, name, &args, true)? {
            return Ok(v);
        }
        if let Some(v) = self.librace_call(call, name, &args, true)? {
            return Ok(v);
        }
        match name {
            "ATOMIC_VAR_INIT" => {
                self.arity(call, name, &args, 1)?;
                self.texpr(args[0])
            }
            "atomic_load" | "atomic_load_explicit" => {
                let explicit = name == "atomic_load_explicit";
                self.arity(call, name, &args, if explicit { 2 } else { 1 })?;
                let cell = self.atomic_place(args[0])?;
                let order = if explicit {
                    let (o, oname) = self.mem_order(args[1])?;
                    if o.is_release() && o != MemOrder::SeqCst {
                        return Err(src.error(args[1], &format!("{oname} is not valid for a load")));
                    }
                    o
                } else {
                    MemOrder::SeqCst
                };
                Ok((self.load_place(&cell, order), promote(cell.ty.int_ty())))
            }
            "atomic_exchange"
            | "atomic_exchange_explicit"
            | "atomic_fetch_add"
            | "atomic_fetch_add_explicit"
            | "atomic_fetch_sub"
            | "atomic_fetch_sub_explicit"
            | "atomic_fetch_and"
            | "atomic_fetch_and_explicit"
            | "atomic_fetch_or"
            | "atomic_fetch_or_explicit"
            | "atomic_fetch_xor"
            | "atomic_fetch_xor_explicit" => self.rmw_call(call, name, &args),
            "atomic_compare_exchange_strong"
            | "atomic_compare_exchange_strong_explicit"
            | "atomic_compare_exchange_weak"
            | "atomic_compare_exchange_weak_explicit" => self.cas_call(call, name, &args),
            n if sync::is_sync_call(n) => self.sync_call(call, name, &args),
            "atomic_flag_test_and_set" | "atomic_flag_test_and_set_explicit" => {
                // An exchange of 1; the value is the old one.
                let explicit = name.ends_with("_explicit");
                self.arity(call, name, &args, if explicit { 2 } else { 1 })?;
                let cell = self.atomic_place(args[0])?;
                let order = if explicit {
                    self.mem_order(args[1])?.0
                } else {
                    MemOrder::SeqCst
                };
                let dst = self.new_temp(IntTy::Bool);
                self.emit(Instr::Rmw {
                    dst,
                    loc: cell.addr,
                    op: crate::ir::RmwOp::Xchg,
                    val: Expr::Const(1),
                    order,
                    width: crate::ir::Width::FULL,
                });
                Ok((Expr::Reg(dst), IntTy::I32))
            }
            "atomic_flag_clear" | "atomic_flag_clear_explicit" => {
                Err(src.unsupported(call, &format!("`{name}` used as a value")))
            }
            "printf" | "fprintf" | "puts" | "fputs" | "putchar" | "fputc" | "fflush" | "perror" => {
                Err(src.unsupported(
                    call,
                    &format!("`{name}` used as a value (its result is not modelled)"),
                ))
            }
            "atomic_store"
            | "atomic_store_explicit"
            | "atomic_init"
            | "atomic_thread_fence"
            | "assert"
            | "MODEL_ASSERT"
            | "__VERIFIER_assume"
            | "assume" => Err(src.unsupported(call, &format!("`{name}` used as a value"))),
            _ => Err(src.unsupported(
                call,
                &format!(
                    "call to `{name}`, which is not defined in this file and not a supported \
                     library function (if another source file of the program defines it, pass \
                     that file with `--link FILE`)"
                ),
            )),
        }
    }

    // ----- expressions ----------------------------------------------------------------------

    fn expr(&mut self, n: Node) -> R<Expr> {
        self.texpr(n).map(|(e, _)| e)
    }

    fn texpr(&mut self, n: Node) -> R<TExpr> {
        self.enter(n)?;
        let r = self.expr_inner(n);
        self.depth -= 1;
        r
    }

    /// The C type of an integer literal (C11 6.4.4.1, for 32-bit `int`, 64-bit `long`).
    fn literal_ty(text: &str, v: i64) -> IntTy {
        let lower = text.to_ascii_lowercase();
        let digits = lower.trim_start_matches(['-', '+']);
        let suffix_start = digits.trim_end_matches(['u', 'l']).len();
        let suffix = &digits[suffix_start..];
        let (has_u, has_l) = (suffix.contains('u'), suffix.contains('l'));
        let decimal = !digits.starts_with('0') || digits.len() == 1 + suffix.len();
        let fits_u32 = (0..=i64::from(u32::MAX)).contains(&v);
        let fits_i32 = (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v);
        match (has_u, has_l) {
            (true, true) => IntTy::U64,
            (false, true) => IntTy::I64,
            (true, false) if fits_u32 => IntTy::U32,
            (true, false) => IntTy::U64,
            _ if fits_i32 => IntTy::I32,
            _ if !decimal && fits_u32 => IntTy::U32,
            _ => IntTy::I64,
        }
    }

    fn expr_inner(&mut self, n: Node) -> R<TExpr> {
        let src = self.src;
        let field = |f: &str| {
            n.child_by_field_name(f)
                .ok_or_else(|| src.unsupported(n, &format!("expression `{}`", n.kind())))
        };
        match n.kind() {
            "number_literal" => {
                let text = src.text(n);
                let v = literal::parse_number(text).map_err(|e| self.lit_error(n, e))?;
                Ok((Expr::Const(v), Self::literal_ty(text, v)))
            }
            "char_literal" => literal::parse_char(src.text(n))
                .map(|v| (Expr::Const(v), IntTy::I32))
                .map_err(|e| self.lit_error(n, e)),
            "true" => Ok((Expr::Const(1), IntTy::I32)),
            "false" | "null" => Ok((Expr::Const(0), IntTy::I32)),
            "parenthesized_expression" => {
                let inner = named_children(n);
                match inner.as_slice() {
                    [e] if e.kind() == "compound_statement" => {
                        Err(src.unsupported(n, "statement expression"))
                    }
                    [e] => self.texpr(*e),
                    _ => Err(src.unsupported(n, "parenthesized expression")),
                }
            }
            "identifier" if src.text(n) == "ATOMIC_FLAG_INIT" => Ok((Expr::Const(0), IntTy::I32)),
            "identifier" if self.cx.macro_value_of(src.text(n)).is_some() => self.macro_value(n),
            "identifier" if self.sync_constant(n).is_some() => self
                .sync_constant(n)
                .ok_or_else(|| src.internal("library constant")),
            // A type identifier: a name `C c(x);` parsed as a declaration (`ctor_args`).
            "identifier" | "type_identifier" => {
                let name = src.text(n);
                match self.lookup(name) {
                    Name::Local(r) if self.mode != Mode::Const => {
                        if Some(r) == self.param {
                            self.param_used = true;
                        }
                        let ty = self.reg_tys.get(r).copied().unwrap_or(IntTy::I64);
                        Ok((Expr::Reg(r), promote(ty)))
                    }
                    Name::Global(loc) if self.mode != Mode::Const => {
                        let p = Place {
                            addr: Addr::Fixed(loc),
                            ty: self.cell_ty(loc),
                        };
                        self.read_place(n, &p)
                    }
                    Name::Handle(r) if self.mode != Mode::Const => Ok((Expr::Reg(r), IntTy::I64)),
                    // `const int kThreads = 2;` in an array size or another constant.
                    Name::Global(loc) if self.cx.const_globals.contains(&loc) => {
                        let init = self.cx.globals.get(loc).map_or(0, |g| g.init);
                        Ok((Expr::Const(init), promote(self.cell_ty(loc).int_ty())))
                    }
                    Name::Function if self.cx.fn_defs.contains_key(name) => {
                        let v = self.function_value(name).unwrap_or(0);
                        Ok((Expr::Const(v), IntTy::I64))
                    }
                    Name::LocalObject(..) if self.mode != Mode::Const => {
                        let p = self
                            .place_of(n)?
                            .ok_or_else(|| src.internal("local object without a place"))?;
                        self.read_place(n, &p)
                    }
                    Name::Object(i) if self.mode != Mode::Const => {
                        let p = self
                            .cx
                            .objects
                            .get(i)
                            .map(|o| Place {
                                addr: Addr::Fixed(o.base),
                                ty: o.ty.clone(),
                            })
                            .ok_or_else(|| src.internal("object index"))?;
                        self.read_place(n, &p)
                    }
                    // A value parameter of a class template (`templates.rs`).
                    Name::Unknown if self.cx.types.template_values.contains_key(name) => {
                        let v = self.cx.types.template_values.get(name).copied();
                        Ok((Expr::Const(v.unwrap_or(0)), IntTy::I64))
                    }
                    Name::Unknown if self.cx.enumerator_at(name, n.start_byte()).is_some() => {
                        let (v, ty) = self
                            .cx
                            .enumerator_typed_at(name, n.start_byte())
                            .unwrap_or((0, IntTy::I32));
                        Ok((Expr::Const(v), ty))
                    }
                    other => Err(self.name_error(n, name, other, false)),
                }
            }
            "unary_expression" => {
                let op = field("operator")?;
                let arg = field("argument")?;
                let op_text = src.text(op);
                let op = match op_text {
                    "-" => Some(UnOp::Neg),
                    "!" => Some(UnOp::Not),
                    "~" => Some(UnOp::BitNot),
                    "+" => None,
                    t => return Err(src.unsupported(op, &format!("operator `{t}`"))),
                };
                if op == Some(UnOp::Not) {
                    let e = self.truth_operand(arg)?;
                    return Ok((un(UnOp::Not, e), IntTy::I32));
                }
                let (e, ty) = self.texpr(arg)?;
                let ty = promote(ty);
                Ok(match op {
                    Some(op) => (self.convert_arith(un(op, e), ty), ty),
                    None => (e, ty),
                })
            }
            "binary_expression" => {
                let left = field("left")?;
                let right = field("right")?;
                let op = field("operator")?;
                match src.text(op) {
                    "&&" => Ok((self.logical(true, left, right)?, IntTy::I32)),
                    "||" => Ok((self.logical(false, left, right)?, IntTy::I32)),
                    t => {
                        let Some(op) = binop(t) else {
                            return Err(src.unsupported(op, &format!("operator `{t}`")));
                        };
                        let (a, ta) = self.texpr(left)?;
                        let (b, tb) = self.texpr(right)?;
                        Ok(self.arith(op, a, ta, b, tb))
                    }
                }
            }
            "conditional_expression" => {
                let cond = field("condition")?;
                let Some(cons) = n.child_by_field_name("consequence") else {
                    return Err(src.unsupported(n, "`?:` without a middle operand"));
                };
                let alt = field("alternative")?;
                self.ternary(n, cond, cons, alt)
            }
            "cast_expression" if self.mode != Mode::Const && self.is_pointer_cast(n) => {
                self.ptr_value(n).map(|(e, _)| (e, IntTy::I64))
            }
            "cast_expression" => {
                let ty = field("type")?;
                let value = field("value")?;
                let target = self.cast_type(ty)?;
                let (e, ety) = self.texpr(value)?;
                Ok(match target {
                    Some(t) => (self.convert(e, t), t),
                    None => (e, promote(ety)),
                })
            }
            "call_expression" => self.call_value(n),
            "assignment_expression" | "update_expression" | "comma_expression"
                if self.mode == Mode::Const =>
            {
                Err(src.error(n, "initialiser of a global must be a constant expression"))
            }
            "assignment_expression" => match self.atomic_compound_value(n)? {
                Some(v) => Ok(v),
                None => self.assign_value(n),
            },
            "update_expression" => match self.atomic_compound_value(n)? {
                Some(v) => Ok(v),
                None => self.update_value(n),
            },
            "comma_expression" => self.comma_value(n),
            "pointer_expression" | "subscript_expression" | "field_expression"
                if self.mode == Mode::Const =>
            {
                Err(src.error(n, "initialiser of a global must be a constant expression"))
            }
            "pointer_expression"
                if n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&") =>
            {
                let (e, _) = self.ptr_value(n)?;
                Ok((e, IntTy::I64))
            }
            "field_expression" if self.is_handle_member(n) => self
                .handle_member(n)?
                .ok_or_else(|| src.internal("handle member")),
            "field_expression" if self.static_member_of_object(n).is_some() => self
                .static_member_of_object(n)
                .map(|v| (Expr::Const(v), IntTy::I32))
                .ok_or_else(|| src.internal("static member")),
            "pointer_expression" | "subscript_expression" | "field_expression" => {
                match self.place_of(n)? {
                    Some(p) => self.read_place(n, &p),
                    None => Err(src.unsupported(n, &format!("expression `{}`", n.kind()))),
                }
            }
            "sizeof_expression" => self.sizeof_value(n),
            "alignof_expression" => Err(src.unsupported(n, "alignof")),
            "offsetof_expression" => Err(src.unsupported(n, "offsetof")),
            "compound_literal_expression" => Err(src.unsupported(n, "compound literal")),
            "generic_expression" => Err(src.unsupported(n, "_Generic")),
            "gnu_asm_expression" => Err(src.unsupported(n, "inline assembly")),
            "string_literal" | "concatenated_string" => Err(src.unsupported(
                n,
                "string literal (strings are accepted as the operand of `&&`, `||` and `!`, \
                 and as arguments of output calls)",
            )),
            "initializer_list" => Err(src.unsupported(n, "initializer list")),
            _ if self.src.lang == super::Lang::Cpp => self.cpp_expr(n),
            k => Err(src.unsupported(n, &format!("expression `{k}`"))),
        }
    }

    /// The result of arithmetic in (promoted) type `ty`: unsigned `int` arithmetic wraps
    /// modulo 2^32.
    fn convert_arith(&self, e: Expr, ty: IntTy) -> Expr {
        if ty == IntTy::U32 {
            self.convert(e, ty)
        } else {
            e
        }
    }

    /// A binary arithmetic / comparison operator with C's usual arithmetic conversions.
    fn arith(&self, op: BinOp, a: Expr, ta: IntTy, b: Expr, tb: IntTy) -> TExpr {
        let shift = matches!(op, BinOp::Shl | BinOp::Shr);
        let compare = matches!(
            op,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        );
        let ty = if shift { promote(ta) } else { common(ta, tb) };
        let (a, b) = if ty == IntTy::U32 && !shift {
            (self.convert(a, ty), self.convert(b, ty))
        } else {
            (a, b)
        };
        let e = bin(op, a, b);
        if compare {
            (e, IntTy::I32)
        } else {
            (self.convert_arith(e, ty), ty)
        }
    }

    fn lit_error(&self, n: Node, e: LitError) -> super::Diagnostic {
        match e {
            LitError::Unsupported(m) => self.src.unsupported(n, &m),
            LitError::Invalid(m) => self.src.error(n, &m),
        }
    }

    /// The integer type of a cast (`None` for identity casts to `void *` / `void`).
    fn cast_type(&self, ty: Node) -> R<Option<IntTy>> {
        let src = self.src;
        let spec = types::decl_spec(&src, &self.cx.types, ty)?;
        let declarator = ty.child_by_field_name("declarator");
        match (spec.ty, declarator) {
            (BaseTy::Int(t), None) if !spec.atomic => Ok(Some(t)),
            (BaseTy::Void, None) => Ok(None),
            (BaseTy::Void, Some(d))
                if d.kind() == "abstract_pointer_declarator" && d.named_child_count() == 0 =>
            {
                Ok(None)
            }
            _ => {
                let text = src.text(ty);
                Err(src.unsupported(ty, &format!("cast to `{text}`")))
            }
        }
    }

    /// `a && b` (`is_and`) or `a || b`, short-circuiting memory accesses in `b`.
    /// An operand whose truth value is used (of `&&`, `||`, `!`): a string literal is true
    /// (its address is not null: `assert(0 && "why")`), anything else an expression.
    fn truth_operand(&mut self, n: Node) -> R<Expr> {
        match strip_parens(n).kind() {
            "string_literal" | "concatenated_string" => Ok(Expr::Const(1)),
            _ => self.expr(n),
        }
    }

    fn logical(&mut self, is_and: bool, left: Node, right: Node) -> R<Expr> {
        let a = self.truth_operand(left)?;
        if let Expr::Const(c) = a {
            let decided = if is_and { c == 0 } else { c != 0 };
            if decided {
                return Ok(Expr::Const(i64::from(!is_and)));
            }
            let b = self.truth_operand(right)?;
            return Ok(self.truth(b));
        }
        let op = if is_and { BinOp::And } else { BinOp::Or };
        if !self.may_access(right) {
            let before = self.body.len();
            let b = self.truth_operand(right)?;
            if self.body.len() != before {
                return Err(self.src.internal("pure operand emitted instructions"));
            }
            if self.mode == Mode::Const || !risky(&b) {
                return Ok(bin(op, a, b));
            }
            return self.short_circuit(is_and, a, &mut |_: &mut Self| Ok(b.clone()));
        }
        self.short_circuit(is_and, a, &mut |l: &mut Self| l.expr(right))
    }

    fn short_circuit(
        &mut self,
        is_and: bool,
        a: Expr,
        b: &mut dyn FnMut(&mut Self) -> R<Expr>,
    ) -> R<Expr> {
        let t = self.new_temp(IntTy::Bool);
        let va = self.truth(a);
        self.emit(Instr::Assign { dst: t, val: va });
        let cond = if is_and {
            Expr::Reg(t)
        } else {
            Expr::Unary(UnOp::Not, Box::new(Expr::Reg(t)))
        };
        let br = self.emit(Instr::BranchIfZero { cond, target: 0 });
        let vb = b(self)?;
        let vb = self.truth(vb);
        self.emit(Instr::Assign { dst: t, val: vb });
        let end = self.body.len();
        self.patch(br, end);
        Ok(Expr::Reg(t))
    }

    /// Rejects `?:` whose operands have different signedness (the conversion of the signed
    /// operand is not modelled when the operands are lowered on separate branches).
    fn check_ternary_types(&self, n: Node, ta: IntTy, tb: IntTy) -> R<IntTy> {
        let (ta, tb) = (promote(ta), promote(tb));
        let unsigned = |t| matches!(t, IntTy::U32 | IntTy::U64);
        if ta != tb && (unsigned(ta) || unsigned(tb)) {
            return Err(self
                .src
                .unsupported(n, "`?:` mixing signed and unsigned operands"));
        }
        Ok(common(ta, tb))
    }

    fn ternary(&mut self, n: Node, cond: Node, cons: Node, alt: Node) -> R<TExpr> {
        let c = self.expr(cond)?;
        if let Expr::Const(v) = c {
            return self.texpr(if v != 0 { cons } else { alt });
        }
        if !self.may_access(cons) && !self.may_access(alt) {
            let before = self.body.len();
            let (a, ta) = self.texpr(cons)?;
            let (b, tb) = self.texpr(alt)?;
            if self.body.len() != before {
                return Err(self.src.internal("pure operand emitted instructions"));
            }
            let ty = self.check_ternary_types(n, ta, tb)?;
            if self.mode == Mode::Const || (!risky(&a) && !risky(&b)) {
                // c ? a : b  ==  (c != 0) * a + (c == 0) * b, with c evaluated once.
                let c = match c {
                    Expr::Reg(_) => c,
                    c if self.mode == Mode::Const => c,
                    c => {
                        let t = self.new_temp(IntTy::Bool);
                        let val = self.truth(c);
                        self.emit(Instr::Assign { dst: t, val });
                        Expr::Reg(t)
                    }
                };
                let yes = bin(BinOp::Ne, c.clone(), Expr::Const(0));
                let no = bin(BinOp::Eq, c, Expr::Const(0));
                let e = bin(BinOp::Add, bin(BinOp::Mul, yes, a), bin(BinOp::Mul, no, b));
                return Ok((e, ty));
            }
            let e = self.ternary_branch(
                n,
                c,
                &mut |_: &mut Self| Ok((a.clone(), ta)),
                &mut |_: &mut Self| Ok((b.clone(), tb)),
            )?;
            return Ok((e, ty));
        }
        let mut ta = IntTy::I32;
        let mut tb = IntTy::I32;
        let e = self.ternary_branch(
            n,
            c,
            &mut |l: &mut Self| {
                let r = l.texpr(cons)?;
                ta = r.1;
                Ok(r)
            },
            &mut |l: &mut Self| {
                let r = l.texpr(alt)?;
                tb = r.1;
                Ok(r)
            },
        )?;
        let ty = self.check_ternary_types(n, ta, tb)?;
        Ok((e, ty))
    }

    pub(super) fn ternary_branch(
        &mut self,
        n: Node,
        c: Expr,
        a: &mut dyn FnMut(&mut Self) -> R<TExpr>,
        b: &mut dyn FnMut(&mut Self) -> R<TExpr>,
    ) -> R<Expr> {
        let t = self.new_temp(IntTy::I64);
        let br = self.emit(Instr::BranchIfZero { cond: c, target: 0 });
        let (va, ta) = a(self)?;
        self.emit(Instr::Assign { dst: t, val: va });
        let j = self.emit(Instr::Jump { target: 0 });
        let else_pc = self.body.len();
        self.patch(br, else_pc);
        let (vb, tb) = b(self)?;
        self.check_ternary_types(n, ta, tb)?;
        self.emit(Instr::Assign { dst: t, val: vb });
        let end = self.body.len();
        self.patch(j, end);
        Ok(Expr::Reg(t))
    }
}
