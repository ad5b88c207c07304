//! Labels and `goto` (see *Labels and goto* in the module doc of [`crate::frontend`]).
//!
//! Labels belong to the function body they are written in: the body of `main`, of a thread
//! function, of each inlined copy of a callee and of a thread lambda has its own. When the
//! lowering of such a body starts ([`FnLower::goto_enter_body`]) its labels and gotos are
//! scanned, and everything that cannot be lowered is refused before any code is emitted: a
//! duplicate label, a `goto` to a label the body does not define, a label address (`&&L`), a
//! `goto` into a loop from outside it, and a `goto` into the scope of a local past its
//! initialiser or past the declaration of a local object in memory (it would not be
//! allocated).
//!
//! A `goto` whose label comes earlier in the source (its *backward* gotos) makes a loop: the
//! code from the label to the last such `goto`. The label is lowered to
//! [`Instr::LoopEnter`] followed by [`Instr::LoopIter`]: control arriving from before the label
//! (falling through, or a forward `goto`) passes both, a backward `goto` jumps to the
//! `LoopIter`. Every pass through the label is one iteration, the first included (like the top
//! of a `do … while` body), so `--unroll N` lets control pass the label N times per entry
//! into the loop. Control that enters the loop's code elsewhere from outside it (a jump to a
//! later label inside it, the `else` branch of an `if` the label is in, a later `case` of a
//! `switch`) passes a `LoopEnter` on the way: [`FnLower::finish_goto_loops`] redirects each
//! such jump through a few instructions appended to the function (`LoopEnter`s, then a jump
//! to the original target), so the count starts again at every entry.
//!
//! A label is a point, not a statement: `L: S` lowers `S` as the statement (its `Stmt` span and
//! its `Before` slot start at `S`, after the label, where the rewriter writes a fence: on the
//! line before `S` when it starts its line, else inline after `L:`), so a fence there runs on
//! every path to `S`, gotos included. There is no slot between the previous statement and the
//! label (a fence there would run on fewer paths at the same place). The empty statement of
//! `L:;` only carries the label: it gets no `Stmt` and no slot. The `LoopEnter` / `LoopIter`
//! of a loop label belong to a `Stmt` of the labeled statement (no slot of its own).

use super::{named_children, types, FnLower, R};
use crate::ir::Instr;
use std::collections::HashMap;
use tree_sitter::Node;

/// At most this many nodes of a function body are scanned for labels and gotos (a larger body
/// is refused; the nesting limit bounds everything else the lowering does).
const MAX_SCAN_NODES: usize = 1_000_000;

/// The labels of the function bodies being lowered, innermost (inlined) last, and the loops
/// made by backward gotos.
#[derive(Default)]
pub(super) struct State {
    frames: Vec<Frame>,
    loops: Vec<GotoLoop>,
}

/// The labels of one function body, by name.
struct Frame {
    body: usize,
    labels: HashMap<String, Label>,
}

struct Label {
    /// Byte range of the labeled statement.
    start: usize,
    end: usize,
    /// A later `goto` jumps back to it: the label heads a loop.
    backward: bool,
    /// Once lowered: where forward gotos jump (the loop's `LoopEnter`) and where backward ones
    /// do (its `LoopIter`), and the loop's index in [`State::loops`].
    at: Option<(usize, usize, Option<usize>)>,
    /// Forward gotos lowered before the label, patched when it is.
    pending: Vec<usize>,
}

/// A loop made by backward gotos: its id, the pc of its `LoopEnter` and of its last backward
/// jump.
struct GotoLoop {
    id: usize,
    enter: usize,
    end: usize,
}

/// The diagnostic for a syntax error that tree-sitter reports inside a goto or a label: a
/// computed goto (`goto *p;`) and a label at the end of a block (`L: }`, C23).
pub(crate) fn syntax_error(
    src: &crate::frontend::Src,
    n: Node,
) -> Option<crate::frontend::Diagnostic> {
    let parent = n.parent()?;
    if n.is_error() && parent.kind() == "goto_statement" && src.text(n).starts_with('*') {
        return Some(src.unsupported(parent, "computed goto (`goto *p`)"));
    }
    let grand = parent.parent()?;
    let closes_block = grand
        .next_sibling()
        .is_some_and(|s| s.kind() == "}" && !s.is_missing());
    if n.is_missing()
        && parent.kind() == "expression_statement"
        && grand.kind() == "labeled_statement"
        && closes_block
    {
        let name = label_of(grand).map(|l| src.text(l)).unwrap_or("L");
        return Some(src.unsupported(
            grand,
            &format!(
                "label at the end of a block (`{name}: }}`, allowed from C23 on): write `{name}: ;`"
            ),
        ));
    }
    None
}

/// Is `n` the body of a function definition or of a lambda?
fn is_function_body(n: Node) -> bool {
    n.parent().is_some_and(|p| {
        matches!(p.kind(), "function_definition" | "lambda_expression")
            && p.child_by_field_name("body")
                .is_some_and(|b| b.id() == n.id())
    })
}

/// Does `outer` contain `inner` (byte ranges)?
fn contains(outer: Node, inner: Node) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// Is the labeled statement spanning the bytes `label` in the scope of the declaration
/// spanning `decl`, whose scope `goto` is in: after the declaration, inside its block (the
/// innermost block around `goto` that holds the declaration)?
pub(super) fn in_scope_at(goto: Node, decl: (usize, usize), label: (usize, usize)) -> bool {
    let mut a = goto.parent();
    while let Some(b) = a {
        if b.kind() == "compound_statement" && b.start_byte() <= decl.0 && decl.1 <= b.end_byte() {
            return decl.1 <= label.0 && label.1 <= b.end_byte();
        }
        a = b.parent();
    }
    false
}

/// The label a labeled statement or `goto` names.
fn label_of<'t>(n: Node<'t>) -> Option<Node<'t>> {
    n.child_by_field_name("label")
}

/// The statement a labeled statement labels (`None` when the grammar found none).
fn labeled<'t>(n: Node<'t>) -> Option<Node<'t>> {
    named_children(n)
        .into_iter()
        .find(|c| c.kind() != "statement_identifier")
}

/// `;` alone.
fn is_empty_statement(n: Node) -> bool {
    n.kind() == "expression_statement" && named_children(n).is_empty()
}

/// Does the declaration `d` run code when control passes it: an initialiser, a C++
/// constructor call (a lock guard, `std::thread t(f)`), or an object of a class type? A
/// `static` local is initialised before the program starts.
fn initialises(d: Node) -> bool {
    let mut c = d.walk();
    let is_static = d
        .children(&mut c)
        .any(|s| s.kind() == "storage_class_specifier");
    if is_static {
        return false;
    }
    let class_type = d
        .child_by_field_name("type")
        .is_some_and(|t| matches!(t.kind(), "qualified_identifier" | "template_type"));
    let mut c = d.walk();
    let init = d
        .children_by_field_name("declarator", &mut c)
        .any(|x| matches!(x.kind(), "init_declarator" | "function_declarator"));
    class_type || init
}

/// The name a declaration declares first (for messages).
fn declared_name<'t>(d: Node<'t>) -> Node<'t> {
    let mut n = match d.child_by_field_name("declarator") {
        Some(x) => x,
        None => return d,
    };
    for _ in 0..64 {
        match n.child_by_field_name("declarator") {
            Some(inner) => n = inner,
            None => break,
        }
    }
    n
}

impl<'a> FnLower<'_, 'a> {
    /// At the start of a block: when it is a function body, scans its labels and gotos (see
    /// the module doc) and makes them the current labels.
    pub(super) fn goto_enter_body(&mut self, n: Node) -> R<()> {
        if !is_function_body(n) {
            return Ok(());
        }
        let frame = self.scan_labels(n)?;
        self.goto.frames.push(frame);
        Ok(())
    }

    /// At the end of a block: when it is a function body, its labels go out of scope.
    pub(super) fn goto_leave_body(&mut self, n: Node) -> R<()> {
        if self.goto.frames.last().is_none_or(|f| f.body != n.id()) {
            return Ok(());
        }
        let frame = self.goto.frames.pop();
        if frame.is_some_and(|f| f.labels.values().any(|l| !l.pending.is_empty())) {
            return Err(self.src.internal("a goto was not patched"));
        }
        Ok(())
    }

    /// The labels and gotos of function body `body`, checked.
    fn scan_labels(&self, body: Node) -> R<Frame> {
        let src = self.src;
        let (mut labels, mut gotos) = (Vec::new(), Vec::new());
        let mut stack = vec![body];
        let mut seen = 0usize;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > MAX_SCAN_NODES {
                return Err(src.unsupported(body, "function body too large"));
            }
            match n.kind() {
                // Their labels are their own.
                "lambda_expression" | "function_definition" if n.id() != body.id() => continue,
                "labeled_statement" => labels.push(n),
                "goto_statement" => gotos.push(n),
                "pointer_expression" if src.text(n).starts_with("&&") => {
                    return Err(src.unsupported(
                        n,
                        "address of a label (`&&label`, a GNU extension for computed goto)",
                    ));
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        labels.sort_by_key(|n| n.start_byte());
        gotos.sort_by_key(|n| n.start_byte());
        let mut map: HashMap<String, Label> = HashMap::new();
        let mut nodes: HashMap<String, Node> = HashMap::new();
        for l in labels {
            let Some(id) = label_of(l) else {
                return Err(src.unsupported(l, "label"));
            };
            let name = src.text(id).to_string();
            if map.contains_key(&name) {
                return Err(src.error(id, &format!("duplicate label `{name}`")));
            }
            let label = Label {
                start: l.start_byte(),
                end: l.end_byte(),
                backward: false,
                at: None,
                pending: Vec::new(),
            };
            map.insert(name.clone(), label);
            nodes.insert(name, l);
        }
        for g in gotos {
            let Some(id) = label_of(g) else {
                return Err(src.unsupported(g, "computed goto (`goto *p`)"));
            };
            let name = src.text(id);
            let (Some(label), Some(&node)) = (map.get_mut(name), nodes.get(name)) else {
                return Err(src.error(id, &format!("label `{name}` used but not defined")));
            };
            label.backward |= g.start_byte() > label.start;
            self.check_goto(g, name, node, body)?;
        }
        Ok(Frame {
            body: body.id(),
            labels: map,
        })
    }

    /// Refuses a `goto` into a loop from outside it, and one into the scope of a local past
    /// its initialiser.
    fn check_goto(&self, goto: Node, name: &str, label: Node, body: Node) -> R<()> {
        let src = self.src;
        let mut child = label;
        while let Some(scope) = child.parent() {
            match scope.kind() {
                "while_statement" | "do_statement" | "for_statement" | "for_range_loop"
                    if !contains(scope, goto) =>
                {
                    let line = scope.start_position().row + 1;
                    return Err(src.unsupported(
                        goto,
                        &format!(
                            "`goto {name}` jumps into the loop on line {line} from outside it \
                             (a loop can only be entered through its start)"
                        ),
                    ));
                }
                "compound_statement" => {
                    self.check_skipped_declarations(goto, name, scope, child)?
                }
                _ => {}
            }
            if scope.id() == body.id() {
                break;
            }
            child = scope;
        }
        Ok(())
    }

    /// Refuses a `goto` (to label `name`) that jumps, from outside or from before them, past
    /// declarations of block `scope` that come before its child `child` holding the label:
    /// one that initialises its variable (C leaves it indeterminate, C++ forbids the jump) or
    /// allocates a local object in memory (the object would not exist).
    fn check_skipped_declarations(
        &self,
        goto: Node,
        name: &str,
        scope: Node,
        child: Node,
    ) -> R<()> {
        let src = self.src;
        for d in named_children(scope) {
            if d.end_byte() > child.start_byte() {
                break;
            }
            let mut d = d;
            while d.kind() == "labeled_statement" {
                match labeled(d) {
                    Some(s) => d = s,
                    None => break,
                }
            }
            let in_scope = contains(scope, goto) && d.end_byte() <= goto.start_byte();
            if d.kind() != "declaration" || in_scope {
                continue;
            }
            let line = d.start_position().row + 1;
            if initialises(d) {
                let var = src.text(declared_name(d));
                return Err(src.unsupported(
                    goto,
                    &format!(
                        "`goto {name}` jumps past the initialisation of `{var}` on line {line} \
                         into its scope (C leaves `{var}` indeterminate there, C++ forbids the \
                         jump): declare `{var}` before the goto"
                    ),
                ));
            }
            if let Some(var) = self.allocated(d) {
                return Err(src.unsupported(
                    goto,
                    &format!(
                        "`goto {name}` jumps past the declaration of `{var}` on line {line} into \
                         its scope (a local object in memory is allocated when its declaration \
                         runs): declare `{var}` before the goto"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The name of a local object in memory that declaration `d` (without initialisers)
    /// allocates, if any (see `locals.rs`). A declaration the front end cannot type is left
    /// to its own diagnostic.
    fn allocated(&self, d: Node) -> Option<&'a str> {
        let src = self.src;
        let spec = types::decl_spec(&src, &self.cx.types, d).ok()?;
        if spec.storage.is_some() {
            return None;
        }
        let mut c = d.walk();
        let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
        decls.into_iter().find_map(|x| {
            let decl = types::declarator(&src, &spec, x, &mut |_| Ok(1)).ok()?;
            let name = src.text(decl.name);
            self.local_in_memory(name, &decl.ty).then_some(name)
        })
    }

    /// The labels in front of statement `s` (of a block or a `case`) are defined here;
    /// returns the statement they label, or `None` when that is the empty statement of
    /// `L:;` (no statement of its own).
    pub(super) fn take_labels<'t>(&mut self, s: Node<'t>) -> R<Option<Node<'t>>> {
        let mut s = s;
        let mut any = false;
        while s.kind() == "labeled_statement" {
            self.define_label(s)?;
            any = true;
            match labeled(s) {
                Some(inner) => s = inner,
                None => return Ok(None),
            }
        }
        Ok((!any || !is_empty_statement(s)).then_some(s))
    }

    /// Defines the label of labeled statement `s` at the current pc (behind a `LoopEnter` and
    /// a `LoopIter` when a later `goto` jumps back to it) and patches the gotos waiting for it.
    fn define_label(&mut self, s: Node) -> R<()> {
        let src = self.src;
        let name = label_of(s).map(|n| src.text(n)).unwrap_or("");
        let backward = self
            .goto
            .frames
            .last()
            .and_then(|f| f.labels.get(name))
            .map(|l| l.backward)
            .ok_or_else(|| src.internal("a label was not scanned"))?;
        let at = if backward {
            let saved = self.cur_stmt;
            self.cur_stmt = self.new_stmt(s);
            let enter = self.body.len();
            let id = self.loop_enter();
            let iter = self.emit(Instr::LoopIter { id });
            self.cur_stmt = saved;
            self.goto.loops.push(GotoLoop {
                id,
                enter,
                end: iter,
            });
            (enter, iter, Some(self.goto.loops.len() - 1))
        } else {
            (self.body.len(), self.body.len(), None)
        };
        let pending = match self
            .goto
            .frames
            .last_mut()
            .and_then(|f| f.labels.get_mut(name))
        {
            Some(l) => {
                l.at = Some(at);
                std::mem::take(&mut l.pending)
            }
            None => return Err(src.internal("a label was not scanned")),
        };
        for pc in pending {
            self.patch(pc, at.0);
        }
        Ok(())
    }

    /// `goto L;`: a jump (behind the unlocks of the C++ lock guards whose scope it leaves);
    /// to a label already lowered it goes to the label's `LoopIter`.
    pub(super) fn goto_stmt(&mut self, s: Node) -> R<bool> {
        let src = self.src;
        let name = label_of(s).map(|n| src.text(n)).unwrap_or("");
        let label = self.goto.frames.last().and_then(|f| f.labels.get(name));
        let Some(&Label { start, end, at, .. }) = label else {
            return Err(src.internal("a goto was not scanned"));
        };
        self.cpp_release_guards_for_goto(s, (start, end))?;
        match at {
            Some((_, iter, Some(lp))) => {
                let pc = self.emit(Instr::Jump { target: iter });
                if let Some(l) = self.goto.loops.get_mut(lp) {
                    l.end = pc;
                }
            }
            Some(_) => return Err(src.internal("a backward goto to a label without a loop")),
            None => {
                let pc = self.emit(Instr::Jump { target: 0 });
                if let Some(l) = self
                    .goto
                    .frames
                    .last_mut()
                    .and_then(|f| f.labels.get_mut(name))
                {
                    l.pending.push(pc);
                }
            }
        }
        Ok(true)
    }

    /// At the end of a function: every jump from outside a goto loop's code into its middle
    /// is redirected through `LoopEnter`s of the loops it enters (appended after the
    /// function's code, which ends in a `Return` or a jump).
    pub(super) fn finish_goto_loops(&mut self) {
        let loops = std::mem::take(&mut self.goto.loops);
        if loops.is_empty() {
            return;
        }
        let n = self.body.len();
        let target_of = |i: &Instr| match i {
            Instr::Jump { target } | Instr::BranchIfZero { target, .. } => Some(*target),
            _ => None,
        };
        let falls_off = !matches!(self.body.last(), Some(Instr::Return | Instr::Jump { .. }))
            || self.body.iter().any(|i| target_of(i) == Some(n));
        let mut trampolines: HashMap<(Vec<usize>, usize), usize> = HashMap::new();
        for p in 0..n {
            let Some(t) = self.body.get(p).and_then(target_of) else {
                continue;
            };
            let entered: Vec<usize> = loops
                .iter()
                .filter(|l| l.enter < t && t <= l.end && !(l.enter <= p && p <= l.end))
                .map(|l| l.id)
                .collect();
            if entered.is_empty() {
                continue;
            }
            if falls_off && self.body.len() == n {
                self.cur_stmt = self.stmt_of.last().copied().unwrap_or(0);
                self.emit_return();
            }
            self.cur_stmt = self.stmt_of.get(p).copied().unwrap_or(0);
            let key = (entered, t);
            let pc = match trampolines.get(&key) {
                Some(&pc) => pc,
                None => {
                    let pc = self.body.len();
                    for &id in &key.0 {
                        self.emit(Instr::LoopEnter { id });
                    }
                    self.emit(Instr::Jump { target: t });
                    trampolines.insert(key, pc);
                    pc
                }
            };
            self.patch(p, pc);
        }
    }
}
