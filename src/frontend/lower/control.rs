//! Lowering of control flow: `if`/`else`, `while`, `do … while`, `for`, `switch`, `break`,
//! `continue`, and the spin-assume transformation of await loops (see the module doc of
//! [`crate::frontend`]).

use super::{bin, named_children, promote, un, FnLower, Name, R};
use crate::ir::{BinOp, Expr, Instr, SlotPlace, Span, StmtId, UnOp};
use tree_sitter::Node;

/// An enclosing loop or `switch`: where its `break`s (and, for loops, `continue`s) jump. The
/// jumps are emitted with target 0 and patched when the construct is finished.
pub(super) struct JumpCtx {
    pub(super) is_loop: bool,
    breaks: Vec<usize>,
    continues: Vec<usize>,
}

impl JumpCtx {
    fn new(is_loop: bool) -> Self {
        JumpCtx {
            is_loop,
            breaks: Vec::new(),
            continues: Vec::new(),
        }
    }
}

/// At most this many nodes are inspected when deciding whether a loop body is empty.
const MAX_EMPTY_BODY_NODES: usize = 10_000;

/// A counting `for` loop of more iterations than this keeps the unroll bound (see
/// `FnLower::counted`). The explorer keeps a state per read with several choices on its
/// current path, so a loop that polls shared memory costs memory quadratic in its iterations
/// (about 170 MB for a thousand polls); past this, the user chooses with `--unroll`.
const MAX_COUNTED_TRIPS: u64 = 1_000;

/// Might the subtree `n` change the local `name`: assign or increment it, take its address,
/// bind a C++ reference or a lambda (either could write it), or, in C++, pass it to a call (a
/// reference parameter, `lower/reference.rs`, would be the local itself)? Conservative: a
/// local of the same name declared inside `n` counts too. (Nothing else can: the front end
/// refuses the address of a local, and inlined callees see only their own locals.)
fn writes_local(src: &super::Src, name: &str, n: Node) -> bool {
    let is_counter =
        |n: Option<Node>| n.is_some_and(|n| n.kind() == "identifier" && src.text(n) == name);
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        let hit = match n.kind() {
            "assignment_expression" => is_counter(n.child_by_field_name("left")),
            "update_expression" => is_counter(n.child_by_field_name("argument")),
            "pointer_expression" => {
                n.child_by_field_name("operator").map(|o| src.text(o)) == Some("&")
                    && is_counter(n.child_by_field_name("argument"))
            }
            "reference_declarator" | "lambda_expression" => true,
            "argument_list" if src.lang == crate::frontend::Lang::Cpp => {
                named_children(n).into_iter().any(|a| is_counter(Some(a)))
                    && n.parent().is_some_and(|call| binds_reference(src, call))
            }
            _ => false,
        };
        if hit {
            return true;
        }
        stack.extend(named_children(n));
    }
    false
}

/// Might `call` bind an argument to a reference parameter: is a function of its name (a free
/// function, or a member function called as `o.f(...)` / `p->f(...)`) defined in the file with
/// an lvalue reference parameter? (`std::` functions and templates take their arguments by
/// value here.)
fn binds_reference(src: &super::Src, call: Node) -> bool {
    let Some(f) = call.child_by_field_name("function") else {
        return false;
    };
    let name = match f.kind() {
        "identifier" => Some(f),
        "field_expression" => f.child_by_field_name("field"),
        _ => None,
    };
    let Some(name) = name.map(|n| src.text(n)) else {
        return false;
    };
    let mut root = call;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() != "function_definition" {
            stack.extend(named_children(n));
            continue;
        }
        let Some(fd) = n
            .child_by_field_name("declarator")
            .and_then(crate::frontend::function_declarator)
        else {
            continue;
        };
        let named = fd.child_by_field_name("declarator").is_some_and(|d| {
            let last = match d.kind() {
                "qualified_identifier" => d.child_by_field_name("name").unwrap_or(d),
                _ => d,
            };
            src.text(last) == name
        });
        let by_ref = fd.child_by_field_name("parameters").is_some_and(|ps| {
            named_children(ps).into_iter().any(|p| {
                p.child_by_field_name("declarator")
                    .is_some_and(|d| d.kind() == "reference_declarator")
            })
        });
        if named && by_ref {
            return true;
        }
    }
    false
}

impl<'a> FnLower<'_, 'a> {
    fn required<'t>(&self, n: Node<'t>, field: &str) -> R<Node<'t>> {
        n.child_by_field_name(field).ok_or_else(|| {
            self.src
                .unsupported(n, &format!("`{}` without its {field}", n.kind()))
        })
    }

    /// Emits the entry of a new loop (a program-wide fresh id) and returns the id.
    pub(super) fn loop_enter(&mut self) -> usize {
        let id = self.cx.loops;
        self.cx.loops += 1;
        self.emit(Instr::LoopEnter { id });
        id
    }

    /// Patches the pending jumps of a finished loop or switch.
    fn close_jumps(&mut self, ctx: JumpCtx, brk: usize, cont: usize) {
        for pc in ctx.breaks {
            self.patch(pc, brk);
        }
        for pc in ctx.continues {
            self.patch(pc, cont);
        }
    }

    fn pop_jumps(&mut self) -> R<JumpCtx> {
        self.jumps
            .pop()
            .ok_or_else(|| self.src.internal("unbalanced loop/switch contexts"))
    }

    /// The body of an `if`/`else`/`while`/`do`/`for` (owned by the construct's statement
    /// `owner`). A `{ … }` body is an ordinary block. An unbraced body is lowered like a block
    /// with that one statement: its own [`Stmt`](crate::ir::Stmt), a `Before` slot, and — unless
    /// it diverts control — a `BlockEnd { after: Some(stmt), close }` slot whose `close` is the
    /// zero-length span at the statement's end. Returns whether control never falls through.
    pub(super) fn sub_body(&mut self, n: Node, owner: StmtId) -> R<bool> {
        if n.kind() == "compound_statement" {
            let r = self.block(n, Some(owner))?;
            self.cur_stmt = owner;
            return Ok(r);
        }
        self.scopes.push(Vec::new());
        let sid = self.new_stmt(n);
        self.cur_stmt = sid;
        self.slot(SlotPlace::Before { stmt: sid });
        let start = self.body.len();
        let diverts = self.stmt(n, sid)?;
        self.classify(sid, start);
        if !diverts {
            self.cur_stmt = sid;
            let p = n.end_position();
            let close = Span {
                start: n.end_byte(),
                end: n.end_byte(),
                line: p.row + 1,
                column: p.column + 1,
            };
            self.slot(SlotPlace::BlockEnd {
                after: Some(sid),
                close,
            });
        }
        self.scopes.pop();
        self.cur_stmt = owner;
        Ok(diverts)
    }

    pub(super) fn if_stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        self.enter(s)?;
        let cond = self.required(s, "condition")?;
        let cons = self.required(s, "consequence")?;
        let c = self.expr(cond)?;
        let br = self.emit(Instr::BranchIfZero { cond: c, target: 0 });
        let then_diverts = self.sub_body(cons, sid)?;
        let diverts = match s.child_by_field_name("alternative") {
            None => {
                let end = self.body.len();
                self.patch(br, end);
                false
            }
            Some(alt) => {
                let Some(alt_body) = named_children(alt).first().copied() else {
                    return Err(self.src.unsupported(alt, "`else` without a statement"));
                };
                let skip = (!then_diverts).then(|| self.emit(Instr::Jump { target: 0 }));
                let else_pc = self.body.len();
                self.patch(br, else_pc);
                let else_diverts = self.sub_body(alt_body, sid)?;
                let end = self.body.len();
                if let Some(j) = skip {
                    self.patch(j, end);
                }
                then_diverts && else_diverts
            }
        };
        self.depth -= 1;
        Ok(diverts)
    }

    /// Is this loop an await loop: an empty body (only `;` and `{}`), and a condition that
    /// reads memory and has no other effect? Then it is lowered by spin-assume.
    fn is_await(&self, cond: Node, body: Node) -> bool {
        let mut stack = vec![body];
        let mut seen = 0usize;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > MAX_EMPTY_BODY_NODES {
                return false;
            }
            match n.kind() {
                "expression_statement" if named_children(n).is_empty() => {}
                "compound_statement" => stack.extend(named_children(n)),
                _ => return false,
            }
        }
        self.reads_only(cond) == Some(true)
    }

    /// `Some(reads)` when evaluating `n` has no effect other than reading memory (reads of
    /// globals, `atomic_load*` and `__atomic_load_n` calls); `reads` says whether it reads memory at all. `None`
    /// when it may do anything else (assignments, increments, other calls, statement
    /// expressions). Iterative, so any depth is fine.
    pub(super) fn reads_only(&self, n: Node) -> Option<bool> {
        let src = self.src;
        let mut reads = false;
        let mut cursor = n.walk();
        let mut depth = 0usize;
        loop {
            let node = cursor.node();
            match node.kind() {
                "assignment_expression"
                | "update_expression"
                | "compound_statement"
                | "comma_expression" => return None,
                "call_expression" if self.cpp_is_load_call(node) => reads = true,
                "call_expression" => {
                    let f = node.child_by_field_name("function")?;
                    let name = src.text(f);
                    if f.kind() != "identifier" {
                        return None;
                    }
                    match self.lookup(name) {
                        Name::Unknown if super::builtins::is_load_call(name) => reads = true,
                        // A call to a function of the file that only reads (its arguments
                        // are walked below).
                        Name::Function => reads |= self.pure_function(name, &mut Vec::new())?,
                        _ => return None,
                    }
                }
                "identifier" => {
                    // A global, or a local object in memory (a member of the object of a
                    // member function among them).
                    if matches!(
                        self.lookup(src.text(node)),
                        Name::Global(_) | Name::LocalObject(..)
                    ) {
                        reads = true;
                    }
                }
                // Elements, members and dereferences read memory.
                "subscript_expression" | "field_expression" => reads = true,
                "pointer_expression"
                    if node.child_by_field_name("operator").map(|o| src.text(o)) == Some("*") =>
                {
                    reads = true
                }
                _ => {}
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return Some(reads);
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return Some(reads);
                }
                depth -= 1;
            }
        }
    }

    /// `Some(reads)` when calling the function `name` defined in this file has no effect but
    /// reading memory (`reads`: it may read some): its body has only declarations of locals,
    /// assignments and increments of its parameters and locals, `if`/`else`, `return`, and
    /// expressions that read (globals, `*p`, elements, `atomic_load*`) or call such functions —
    /// no loop, store, read-modify-write, fence, assertion or other call. `None` otherwise
    /// (also for a recursive call: `active` holds the functions being looked into, and for a
    /// local or parameter named like a global, where telling the two apart needs scopes).
    fn pure_function(&self, name: &str, active: &mut Vec<String>) -> Option<bool> {
        let def = *self.cx.fn_defs.get(name)?;
        if active.iter().any(|f| f == name) || active.len() >= super::inline::MAX_INLINE_DEPTH {
            return None;
        }
        let src = self.src;
        // Its parameters and locals: every declarator name in the definition.
        let mut locals: Vec<&str> = Vec::new();
        let mut stack = vec![def.child_by_field_name("declarator")?];
        stack.extend(def.child_by_field_name("body"));
        while let Some(n) = stack.pop() {
            if matches!(
                n.kind(),
                "parameter_declaration" | "declaration" | "init_declarator"
            ) || n.kind().ends_with("_declarator")
            {
                if let Some(d) = n.child_by_field_name("declarator") {
                    if d.kind() == "identifier" {
                        locals.push(src.text(d));
                    }
                }
            }
            stack.extend(named_children(n));
        }
        if locals.iter().any(|l| self.cx.global_index.contains_key(*l)) {
            return None;
        }
        let is_local = |n: Node| n.kind() == "identifier" && locals.contains(&src.text(n));
        active.push(name.to_string());
        let mut reads = false;
        let mut stack = vec![def.child_by_field_name("body")?];
        let mut seen = 0usize;
        let verdict = loop {
            let Some(n) = stack.pop() else {
                break Some(reads);
            };
            seen += 1;
            if seen > MAX_EMPTY_BODY_NODES {
                break None;
            }
            let ok = match n.kind() {
                "compound_statement"
                | "declaration"
                | "init_declarator"
                | "expression_statement"
                | "return_statement"
                | "if_statement"
                | "else_clause"
                | "condition_clause"
                | "parenthesized_expression"
                | "binary_expression"
                | "conditional_expression"
                | "cast_expression"
                | "type_descriptor"
                | "primitive_type"
                | "sized_type_specifier"
                | "type_qualifier"
                | "type_identifier"
                | "abstract_pointer_declarator"
                | "pointer_declarator"
                | "number_literal"
                | "char_literal"
                | "true"
                | "false"
                | "null"
                | "comment"
                | "argument_list"
                | "unary_expression" => true,
                // `&x` names an address (to load from), `*p` reads.
                "pointer_expression" => {
                    reads |= n.child_by_field_name("operator").map(|o| src.text(o)) == Some("*");
                    true
                }
                "subscript_expression" | "field_expression" => {
                    reads = true;
                    true
                }
                "identifier" => {
                    reads |= !is_local(n) && self.cx.global_index.contains_key(src.text(n));
                    true
                }
                "assignment_expression" => n.child_by_field_name("left").is_some_and(is_local),
                "update_expression" => n.child_by_field_name("argument").is_some_and(is_local),
                "call_expression" => match n.child_by_field_name("function") {
                    Some(f) if f.kind() == "identifier" && !is_local(f) => {
                        let callee = src.text(f);
                        if super::builtins::is_load_call(callee) {
                            reads = true;
                            true
                        } else {
                            self.pure_function(callee, active)
                                .map(|r| reads |= r)
                                .is_some()
                        }
                    }
                    _ => false,
                },
                _ => false,
            };
            if !ok {
                break None;
            }
            // A called function's name is not a variable: only its arguments are looked at.
            // (A `static` or `extern` local, a global, has a `storage_class_specifier`: no.)
            match n.kind() {
                "call_expression" => stack.extend(n.child_by_field_name("arguments")),
                _ => stack.extend(named_children(n)),
            }
        };
        active.pop();
        verdict
    }

    /// An await loop: its entry (a `LoopEnter` that no `LoopIter` follows: no unroll bound,
    /// but the checker knows where the loop starts, for liveness), the condition's loads, then
    /// `assume(!cond)` (no body, no back jump; see `ir::spin::SpinInfo::awaits`).
    fn await_loop(&mut self, cond: Node) -> R<()> {
        self.loop_enter();
        let outer = std::mem::replace(&mut self.in_await, true);
        let c = self.expr(cond);
        self.in_await = outer;
        let c = c?;
        self.emit(Instr::Assume {
            cond: un(UnOp::Not, c),
        });
        Ok(())
    }

    pub(super) fn while_stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        if let Some(r) = self.cond_wait_loop(s, sid)? {
            return Ok(r);
        }
        self.enter(s)?;
        let cond = self.required(s, "condition")?;
        let body = self.required(s, "body")?;
        if self.is_await(cond, body) {
            self.await_loop(cond)?;
            self.depth -= 1;
            return Ok(false);
        }
        let id = self.loop_enter();
        let head = self.body.len();
        let c = self.expr(cond)?;
        let exit = self.emit(Instr::BranchIfZero { cond: c, target: 0 });
        self.emit(Instr::LoopIter { id });
        self.jumps.push(JumpCtx::new(true));
        self.sub_body(body, sid)?;
        let ctx = self.pop_jumps()?;
        self.emit(Instr::Jump { target: head });
        let end = self.body.len();
        self.patch(exit, end);
        self.close_jumps(ctx, end, head);
        self.depth -= 1;
        Ok(false)
    }

    pub(super) fn do_stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        self.enter(s)?;
        let cond = self.required(s, "condition")?;
        let body = self.required(s, "body")?;
        if self.is_await(cond, body) {
            self.await_loop(cond)?;
            self.depth -= 1;
            return Ok(false);
        }
        let id = self.loop_enter();
        let head = self.emit(Instr::LoopIter { id });
        self.jumps.push(JumpCtx::new(true));
        self.sub_body(body, sid)?;
        let ctx = self.pop_jumps()?;
        let cont = self.body.len();
        let c = self.expr(cond)?;
        // Back to the head when the condition holds.
        self.emit(Instr::BranchIfZero {
            cond: un(UnOp::Not, c),
            target: head,
        });
        let end = self.body.len();
        self.close_jumps(ctx, end, cont);
        self.depth -= 1;
        Ok(false)
    }

    /// Does the `for` loop `s` (its initialiser already lowered) end within a number of
    /// iterations known before it starts, whatever memory holds? Then it needs no unroll
    /// bound. That is the counting loop `for (i = A; i OP B; i += K)`, whose test may also be
    /// one operand of `&&` (`i < B && atomic_load(&f) == 0`): `i` a local integer variable
    /// (declared by the initialiser or assigned there), `A`, `B`, `K` integer constant
    /// expressions (`B` may also be a local that the loop does not write, of a type that fits
    /// `i`'s, when `OP` is `<` with `i++` or `>` with `i--`: `for (r = 0; r < rounds; r++)`),
    /// `OP` one of `<`, `<=`, `>`, `>=`, `!=` (either side), the update `i++`, `++i`, `i--`, `--i`,
    /// `i += K` or `i -= K` moving `i` towards `B`, and `i` neither assigned, incremented nor
    /// addressed in the condition or the body (C++ references and lambdas in the body count
    /// as a possible write). The count must be at most [`MAX_COUNTED_TRIPS`] and every value
    /// of `i` up to the one that ends the loop must fit its type (no wrap-around).
    fn counted(&mut self, s: Node) -> bool {
        self.trip_count(s).is_some_and(|n| n <= MAX_COUNTED_TRIPS)
    }

    /// The iterations of a counting loop (see [`Self::counted`]); 0 when the bound is a local.
    fn trip_count(&mut self, s: Node) -> Option<u64> {
        let src = self.src;
        let init = s.child_by_field_name("initializer")?;
        let mut cond = s.child_by_field_name("condition")?;
        let update = s.child_by_field_name("update")?;
        let body = s.child_by_field_name("body")?;
        while cond.kind() == "condition_clause" {
            cond = *named_children(cond).first()?;
        }
        // The counter and its first value.
        let (counter, start) = match init.kind() {
            "declaration" => {
                let mut c = init.walk();
                let decls: Vec<Node> = init.children_by_field_name("declarator", &mut c).collect();
                let [d] = decls[..] else { return None };
                if d.kind() != "init_declarator" {
                    return None;
                }
                let name = d.child_by_field_name("declarator")?;
                (name, d.child_by_field_name("value")?)
            }
            "assignment_expression" => {
                let op = init.child_by_field_name("operator")?;
                if src.text(op) != "=" {
                    return None;
                }
                (
                    init.child_by_field_name("left")?,
                    init.child_by_field_name("right")?,
                )
            }
            _ => return None,
        };
        if counter.kind() != "identifier" {
            return None;
        }
        let name = src.text(counter);
        let Name::Local(r) = self.lookup(name) else {
            return None;
        };
        let ty = *self.reg_tys.get(r)?;
        let is_counter = |n: Node| n.kind() == "identifier" && src.text(n) == name;
        let start = ty.wrap(self.const_here(start).ok()?);
        // The test: `i OP B` or `B OP i`, alone or as an operand of `&&` (the loop then stops
        // no later than the test alone would make it).
        let mut tests = vec![cond];
        let mut test = None;
        while let Some(mut t) = tests.pop() {
            while t.kind() == "parenthesized_expression" {
                t = *named_children(t).first()?;
            }
            if t.kind() != "binary_expression" {
                continue;
            }
            let op = src.text(t.child_by_field_name("operator")?);
            let (l, r) = (
                t.child_by_field_name("left")?,
                t.child_by_field_name("right")?,
            );
            if op == "&&" {
                tests.extend([r, l]);
            } else if test.is_none() && (is_counter(l) || is_counter(r)) {
                test = Some((l, op, r));
            }
        }
        let (l, op, r) = test?;
        let (op, bound) = if is_counter(l) {
            (op, r)
        } else if is_counter(r) {
            let mirrored = match op {
                "<" => ">",
                "<=" => ">=",
                ">" => "<",
                ">=" => "<=",
                o => o,
            };
            (mirrored, l)
        } else {
            return None;
        };
        // The step.
        let step: i64 = match update.kind() {
            "update_expression" => {
                if !is_counter(update.child_by_field_name("argument")?) {
                    return None;
                }
                match src.text(update.child_by_field_name("operator")?) {
                    "++" => 1,
                    "--" => -1,
                    _ => return None,
                }
            }
            "assignment_expression" => {
                if !is_counter(update.child_by_field_name("left")?) {
                    return None;
                }
                let k = self.const_here(update.child_by_field_name("right")?).ok()?;
                match src.text(update.child_by_field_name("operator")?) {
                    "+=" => k,
                    "-=" => k.checked_neg()?,
                    _ => return None,
                }
            }
            _ => return None,
        };
        let unchanged =
            |local: &str| !writes_local(&src, local, cond) && !writes_local(&src, local, body);
        if step == 0 || !unchanged(name) {
            return None;
        }
        let Ok(bound) = self.const_here(bound) else {
            // A bound held in another local that the loop leaves alone, approached one step at
            // a time: reached whatever its value (it fits the counter's type).
            let unit = (op == "<" && step == 1) || (op == ">" && step == -1);
            let b = src.text(bound);
            let held = bound.kind() == "identifier"
                && b != name
                && matches!(self.lookup(b), Name::Local(r) if self.reg_tys.get(r).is_some_and(|t| t.fits_in(ty)))
                && unchanged(b);
            return (unit && held).then_some(0);
        };
        // The iterations, in exact arithmetic; the value that ends the loop must fit `ty`.
        let (start, bound, step) = (i128::from(start), i128::from(bound), i128::from(step));
        // Steps of `by` (> 0) needed to cover `gap` (no steps when it is not positive).
        let steps = |gap: i128, by: i128| (gap.max(0) + by - 1) / by;
        let trips = match op {
            "<" if step > 0 => steps(bound - start, step),
            "<=" if step > 0 => steps(bound - start + 1, step),
            ">" if step < 0 => steps(start - bound, -step),
            ">=" if step < 0 => steps(start - bound + 1, -step),
            "!=" if (bound - start) % step == 0 && (bound - start) / step >= 0 => {
                (bound - start) / step
            }
            _ => return None,
        };
        let last = start + trips * step;
        let (lo, hi) = ty.range();
        if last < i128::from(lo) || last > i128::from(hi) {
            return None;
        }
        u64::try_from(trips).ok()
    }

    /// The initialiser or update clause of a `for`, or an operand of a comma operator whose
    /// value is not used: an expression evaluated for its effects.
    pub(super) fn for_clause(&mut self, e: Node) -> R<()> {
        match e.kind() {
            "assignment_expression" => self.assign(e).map(|_| ()),
            "update_expression" => self.update(e).map(|_| ()),
            "call_expression" => self.call_stmt(e).map(|_| ()),
            "comma_expression" => self.comma_effects(e),
            _ => self.expr(e).map(|_| ()),
        }
    }

    pub(super) fn for_stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        self.enter(s)?;
        let body = self.required(s, "body")?;
        let cond = s.child_by_field_name("condition");
        let update = s.child_by_field_name("update");
        // The loop is a block: a declaration in its initialiser is scoped to it.
        self.scopes.push(Vec::new());
        if let Some(init) = s.child_by_field_name("initializer") {
            if init.kind() == "declaration" {
                self.local_decl(init)?;
            } else {
                self.for_clause(init)?;
            }
        }
        if let Some(c) = cond {
            if update.is_none() && self.is_await(c, body) {
                self.await_loop(c)?;
                self.scopes.pop();
                self.depth -= 1;
                return Ok(false);
            }
        }
        let id = (!self.counted(s)).then(|| self.loop_enter());
        let head = self.body.len();
        let exit = match cond {
            Some(c) => {
                let c = self.expr(c)?;
                Some(self.emit(Instr::BranchIfZero { cond: c, target: 0 }))
            }
            None => None,
        };
        if let Some(id) = id {
            self.emit(Instr::LoopIter { id });
        }
        self.jumps.push(JumpCtx::new(true));
        self.sub_body(body, sid)?;
        let ctx = self.pop_jumps()?;
        let cont = self.body.len();
        if let Some(u) = update {
            self.for_clause(u)?;
        }
        self.emit(Instr::Jump { target: head });
        let end = self.body.len();
        if let Some(exit) = exit {
            self.patch(exit, end);
        }
        self.close_jumps(ctx, end, cont);
        self.scopes.pop();
        self.depth -= 1;
        Ok(false)
    }

    pub(super) fn break_stmt(&mut self, s: Node) -> R<bool> {
        if self.jumps.is_empty() {
            return Err(self
                .src
                .error(s, "'break' statement not within a loop or switch"));
        }
        let pc = self.emit(Instr::Jump { target: 0 });
        if let Some(ctx) = self.jumps.last_mut() {
            ctx.breaks.push(pc);
        }
        Ok(true)
    }

    pub(super) fn continue_stmt(&mut self, s: Node) -> R<bool> {
        if !self.jumps.iter().any(|j| j.is_loop) {
            return Err(self.src.error(s, "'continue' statement not within a loop"));
        }
        let pc = self.emit(Instr::Jump { target: 0 });
        if let Some(ctx) = self.jumps.iter_mut().rev().find(|j| j.is_loop) {
            ctx.continues.push(pc);
        }
        Ok(true)
    }

    /// The value of a `case` label: an integer constant expression, converted to the
    /// (promoted) type of the controlling expression.
    fn case_value(&mut self, v: Node, ty: super::IntTy) -> R<i64> {
        let bad = |l: &Self| {
            l.src
                .error(v, "case label must be an integer constant expression")
        };
        if self.may_access(v) {
            return Err(bad(self));
        }
        let before = self.body.len();
        let e = self.expr(v)?;
        match e {
            Expr::Const(k) if self.body.len() == before => Ok(ty.wrap(k)),
            _ => Err(bad(self)),
        }
    }

    /// `switch (e) { case k: … default: … }`: the controlling value is compared with each label
    /// in order (`BranchIfZero (e != k)` jumps to the case), then a jump to `default` or past the
    /// switch; the case bodies follow in source order, so they fall through. The statements
    /// under the labels are the statements of the switch's block (`Before` slots, one
    /// `BlockEnd` slot before its `}`).
    pub(super) fn switch_stmt(&mut self, s: Node, sid: StmtId) -> R<bool> {
        let src = self.src;
        self.enter(s)?;
        let cond = self.required(s, "condition")?;
        let body = self.required(s, "body")?;
        let (c, ty) = self.texpr(cond)?;
        let ty = promote(ty);
        let v = match c {
            Expr::Reg(_) | Expr::Const(_) => c,
            c => {
                let t = self.new_temp(ty);
                self.emit(Instr::Assign { dst: t, val: c });
                Expr::Reg(t)
            }
        };
        // Labels, in source order.
        let cases = named_children(body);
        let mut tests: Vec<(usize, usize)> = Vec::new(); // (branch pc, case index)
        let mut values: Vec<i64> = Vec::new();
        let mut default: Option<usize> = None;
        for (i, case) in cases.iter().enumerate() {
            if case.kind() != "case_statement" {
                return Err(src.unsupported(
                    *case,
                    "statement in a switch body that is not under a case label",
                ));
            }
            match case.child_by_field_name("value") {
                Some(value) => {
                    let k = self.case_value(value, ty)?;
                    if values.contains(&k) {
                        return Err(src.error(value, "duplicate case value"));
                    }
                    values.push(k);
                    let pc = self.emit(Instr::BranchIfZero {
                        cond: bin(BinOp::Ne, v.clone(), Expr::Const(k)),
                        target: 0,
                    });
                    tests.push((pc, i));
                }
                None => {
                    if default.is_some() {
                        return Err(src.error(*case, "multiple default labels in one switch"));
                    }
                    default = Some(i);
                }
            }
        }
        let no_match = self.emit(Instr::Jump { target: 0 });
        // Bodies.
        self.enter(body)?;
        self.scopes.push(Vec::new());
        self.jumps.push(JumpCtx::new(false));
        let mut case_pc = Vec::with_capacity(cases.len());
        let mut last = None;
        let mut diverts = false;
        for case in &cases {
            case_pc.push(self.body.len());
            diverts = false; // a label is a jump target
            let value = case.child_by_field_name("value").map(|v| v.id());
            for st in named_children(*case) {
                if Some(st.id()) == value {
                    continue;
                }
                let Some(st) = self.take_labels(st)? else {
                    diverts = false; // `L:;`
                    continue;
                };
                if st.kind() == "declaration" {
                    return Err(src.unsupported(
                        st,
                        "declaration directly under a case label (put the case body in braces)",
                    ));
                }
                let stmt = self.new_stmt(st);
                self.cur_stmt = stmt;
                self.slot(SlotPlace::Before { stmt });
                let start = self.body.len();
                diverts = self.stmt(st, stmt)?;
                self.classify(stmt, start);
                last = Some(stmt);
            }
        }
        if !diverts {
            self.cur_stmt = last.unwrap_or(sid);
            let close = src.close_span(body);
            self.slot(SlotPlace::BlockEnd { after: last, close });
        }
        self.cur_stmt = sid;
        let ctx = self.pop_jumps()?;
        self.scopes.pop();
        self.depth -= 1;
        let end = self.body.len();
        for (pc, i) in tests {
            let to = case_pc.get(i).copied().unwrap_or(end);
            self.patch(pc, to);
        }
        let dflt = default.and_then(|i| case_pc.get(i).copied()).unwrap_or(end);
        self.patch(no_match, dflt);
        self.close_jumps(ctx, end, end);
        self.depth -= 1;
        Ok(false)
    }
}
