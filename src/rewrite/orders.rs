//! Memory-order edits of atomic accesses (`fix --by orders|both`, `relax`): the order argument
//! of the access's call replaced in the file's own spelling, or an explicit order added to a
//! call that has none.
//!
//! The access is the one atomic operation call inside its statement's span (the candidates of
//! `trace::orders` hold exactly one atomic access). Its order arguments are found by the call's
//! form, counted from the end (so the instrumented dialect's leading `__FILE__, __LINE__` do not
//! matter):
//!
//! | form | order arguments |
//! |---|---|
//! | `atomic_X_explicit(...)`, `std::atomic_X_explicit(...)` | the last; a compare-exchange: the last two (success, failure) |
//! | `__atomic_X(...)` builtins | the same |
//! | `x.load(o)`, `x.store(v, o)`, `x.fetch_add(v, o)`, ... | the last when present |
//! | `x.compare_exchange_strong(e, d, s, f)` / `(e, d, o)` | `s` / the single `o` |
//! | `atomic_X(...)`, `x.store(v)` (implicit seq_cst) | none: the call gets one |
//!
//! A replaced argument is spelled like the argument it replaces (`memory_order_X`,
//! `std::memory_order_X`, `std::memory_order::X`, `__ATOMIC_X`, GCC's number). An implicit C
//! call becomes its `_explicit` form with `memory_order_X` (and, for a compare-exchange, the
//! failure order the single-order form implies) appended; an implicit C++ member call gets
//! the file's most frequent C++ order spelling (default `std::memory_order_X`).
//! Only the success order of a compare-and-swap changes (its failure order stays; with the
//! single-order C++ form the failure order follows the success order, stronger only).

use super::files::{FileEdits, Parsed};
use super::{Edit, RewriteError};
use crate::ir::{Lang, MemOrder, Program, StmtId};

/// One access whose order is changed: its statement (a candidate of `trace::orders`) and the new
/// order (a compare-and-swap: the success order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderChange {
    pub stmt: StmtId,
    pub order: MemOrder,
}

/// The edits of `changes`, per file (offsets of that file's text).
pub fn order_edits(
    src: &str,
    prog: &Program,
    changes: &[OrderChange],
) -> Result<Vec<FileEdits>, RewriteError> {
    let unit = Parsed::new(src, prog);
    let mut out: Vec<FileEdits> = Vec::new();
    for c in changes {
        let (file, edit) = access_edit(&unit, prog, c)?;
        push(&mut out, file, edit);
    }
    Ok(out)
}

/// The order changes of a fix's accesses.
pub fn changes(sol: &crate::synth::Solution) -> Vec<OrderChange> {
    sol.accesses
        .iter()
        .map(|a| OrderChange {
            stmt: a.stmt,
            order: a.order,
        })
        .collect()
}

/// Adds `edit` to file `file`'s edits.
fn push(edits: &mut Vec<FileEdits>, file: usize, edit: Edit) {
    match edits.iter_mut().find(|e| e.file == file) {
        Some(e) => e.edits.push(edit),
        None => edits.push(FileEdits {
            file,
            edits: vec![edit],
        }),
    }
}

/// Adds `extra`'s edits to `edits`, file by file.
pub fn merge(edits: &mut Vec<FileEdits>, extra: &[FileEdits]) {
    for fe in extra {
        match edits.iter_mut().find(|e| e.file == fe.file) {
            Some(e) => e.edits.extend(fe.edits.iter().cloned()),
            None => edits.push(fe.clone()),
        }
    }
}

/// The rewritten files of a fix with fences and order changes (see [`super::rewrite`]).
pub fn rewrite_fix(
    src: &str,
    prog: &Program,
    fences: &[super::Planned],
    changes: &[OrderChange],
    comments: bool,
) -> Result<super::Rewritten, RewriteError> {
    let extra = order_edits(src, prog, changes)?;
    super::rewrite_with(src, prog, fences, &extra, comments)
}

/// What an atomic call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Form {
    cas: bool,
    /// A C++ member call (`x.store(v)`).
    member: bool,
    /// A GCC `__atomic_*` builtin.
    builtin: bool,
    /// Arguments before the order arguments (the value arguments).
    values: usize,
}

/// The atomic operation named `name` (the last component of the callee), if it is one.
fn form(name: &str, member: bool) -> Option<Form> {
    let cas = name.contains("compare_exchange");
    let values = |op: &str| -> Option<usize> {
        Some(match op {
            "load" | "flag_test_and_set" | "flag_clear" | "test_and_set" | "clear" => 1,
            "store" | "exchange" => 2,
            _ if op.starts_with("fetch_") || op.ends_with("_fetch") => 2,
            _ if op.starts_with("compare_exchange") => 3,
            _ => return None,
        })
    };
    if member {
        let v = values(name)? - 1;
        return Some(Form {
            cas,
            member,
            builtin: false,
            values: v,
        });
    }
    if let Some(op) = name.strip_prefix("__atomic_") {
        // `__atomic_load(p, ret, o)` / `__atomic_load_n(p, o)`, `__atomic_exchange(p, v, ret,
        // o)` / `__atomic_exchange_n(p, v, o)`.
        let v = match op {
            "load_n" => 1,
            "load" | "store" | "store_n" | "exchange_n" => 2,
            "exchange" => 3,
            "compare_exchange" | "compare_exchange_n" => 4,
            _ => values(op)?,
        };
        return Some(Form {
            cas,
            member,
            builtin: true,
            values: v,
        });
    }
    let op = name.strip_prefix("atomic_")?;
    let op = op.strip_suffix("_explicit").unwrap_or(op);
    Some(Form {
        cas,
        member,
        builtin: false,
        values: values(op)?,
    })
}

/// The failure order the single-order compare-exchange implies for success order `o`.
fn implied_failure(o: MemOrder) -> MemOrder {
    match o {
        MemOrder::AcqRel => MemOrder::Acquire,
        MemOrder::Release => MemOrder::Relaxed,
        other => other,
    }
}

/// The one atomic call of statement `stmt`: its file, the call, its form, its arguments
/// (comments left out).
fn access_call<'u>(
    unit: &'u Parsed,
    prog: &Program,
    stmt: StmtId,
) -> Result<(usize, AccessCall<'u>), RewriteError> {
    let s = &prog.stmts[stmt];
    let no_call = || RewriteError::NoAccessCall { line: s.span.line };
    let k = prog.sources.file_index(&s.span);
    let frame = unit.frames.get(k).ok_or_else(no_call)?;
    let span = frame.local(s.span);
    let root = unit.root(k).ok_or_else(no_call)?;
    let mut calls = Vec::new();
    atomic_calls(frame.text, root, (span.start, span.end), &mut calls);
    // A compound statement's span holds its body's statements (an `if` condition's span is
    // the whole `if`): their calls are theirs.
    let inner = inner_spans(prog, frame, k, stmt);
    calls.retain(|(call, _)| {
        !inner
            .iter()
            .any(|&(a, b)| a <= call.start_byte() && call.end_byte() <= b)
    });
    let [(call, form)] = calls.as_slice() else {
        return Err(no_call());
    };
    let args_node = call.child_by_field_name("arguments").ok_or_else(no_call)?;
    let mut cursor = args_node.walk();
    let args: Vec<tree_sitter::Node> = args_node
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let found = AccessCall {
        text: frame.text,
        call: *call,
        form: *form,
        args_node,
        args,
    };
    Ok((k, found))
}

/// How many atomic operation calls statement `stmt` holds itself (not in the statements
/// nested in it): what an order edit needs to be exactly one.
pub fn atomic_call_count(src: &str, prog: &Program, stmt: StmtId) -> usize {
    let unit = Parsed::new(src, prog);
    let s = &prog.stmts[stmt];
    let k = prog.sources.file_index(&s.span);
    let (Some(frame), Some(root)) = (unit.frames.get(k), unit.root(k)) else {
        return 0;
    };
    let span = frame.local(s.span);
    let mut calls = Vec::new();
    atomic_calls(frame.text, root, (span.start, span.end), &mut calls);
    let inner = inner_spans(prog, frame, k, stmt);
    calls
        .iter()
        .filter(|(call, _)| {
            !inner
                .iter()
                .any(|&(a, b)| a <= call.start_byte() && call.end_byte() <= b)
        })
        .count()
}

/// The spans (of `frame`'s text) of the statements nested in statement `stmt` of file `k`.
fn inner_spans(
    prog: &Program,
    frame: &super::Frame,
    k: usize,
    stmt: StmtId,
) -> Vec<(usize, usize)> {
    let span = frame.local(prog.stmts[stmt].span);
    prog.stmts
        .iter()
        .filter(|o| prog.sources.file_index(&o.span) == k)
        .map(|o| frame.local(o.span))
        .filter(|o| {
            span.start <= o.start && o.end <= span.end && (o.start, o.end) != (span.start, span.end)
        })
        .map(|o| (o.start, o.end))
        .collect()
}

/// An atomic call found in a statement.
struct AccessCall<'t> {
    /// Its file's text.
    text: &'t str,
    call: tree_sitter::Node<'t>,
    form: Form,
    args_node: tree_sitter::Node<'t>,
    args: Vec<tree_sitter::Node<'t>>,
}

/// The edit changing the order of the access of `c.stmt`, and its file.
fn access_edit(
    unit: &Parsed,
    prog: &Program,
    c: &OrderChange,
) -> Result<(usize, Edit), RewriteError> {
    let no_call = || RewriteError::NoAccessCall {
        line: prog.stmts[c.stmt].span.line,
    };
    let (k, a) = access_call(unit, prog, c.stmt)?;
    let edit = if a.args.len() > a.form.values {
        // The success order: the first order argument.
        let arg = a.args[a.form.values];
        Edit {
            start: arg.start_byte(),
            end: arg.end_byte(),
            text: super::order_like(
                &a.text[arg.start_byte()..arg.end_byte()],
                c.order,
                a.form.builtin,
            ),
        }
    } else {
        implicit_edit(a.text, prog.lang, &a.call, &a.args_node, &a.form, c.order)
            .ok_or_else(no_call)?
    };
    Ok((k, edit))
}

/// The edits of compare-and-swap failure orders (`relax` keeps a failure order no stronger
/// than its success order): `changes` name the CAS statements and their new failure orders.
/// A call whose failure order is not written (an implicit call, the single-order C++ form)
/// needs none — its failure order follows the success order — and gets none.
pub fn failure_edits(
    src: &str,
    prog: &Program,
    changes: &[OrderChange],
) -> Result<Vec<FileEdits>, RewriteError> {
    let unit = Parsed::new(src, prog);
    let mut out: Vec<FileEdits> = Vec::new();
    for c in changes {
        let (k, a) = access_call(&unit, prog, c.stmt)?;
        let Some(arg) = a.args.get(a.form.values + 1).filter(|_| a.form.cas) else {
            continue;
        };
        let edit = Edit {
            start: arg.start_byte(),
            end: arg.end_byte(),
            text: super::order_like(
                &a.text[arg.start_byte()..arg.end_byte()],
                c.order,
                a.form.builtin,
            ),
        };
        push(&mut out, k, edit);
    }
    Ok(out)
}

/// The edit giving an implicit (seq_cst) call the explicit order `o`.
fn implicit_edit(
    text: &str,
    lang: Lang,
    call: &tree_sitter::Node,
    args: &tree_sitter::Node,
    form: &Form,
    o: MemOrder,
) -> Option<Edit> {
    let close = args.end_byte().checked_sub(1)?;
    let func = call.child_by_field_name("function")?;
    let spell = |o: MemOrder| {
        if form.member || lang == Lang::Cpp {
            cpp_spelling(text, o)
        } else {
            format!("memory_order_{}", o.c_name())
        }
    };
    let mut orders = spell(o);
    if form.cas && !form.member {
        orders = format!("{orders}, {}", spell(implied_failure(o)));
    }
    let sep = if form.values == 0 { "" } else { ", " };
    if form.member {
        return Some(Edit {
            start: close,
            end: close,
            text: format!("{sep}{orders}"),
        });
    }
    // `atomic_store(&x, v)` → `atomic_store_explicit(&x, v, order)`: one edit from the end
    // of the callee's name to the closing parenthesis.
    let name_end = func.end_byte();
    Some(Edit {
        start: name_end,
        end: args.end_byte(),
        text: format!(
            "_explicit{}{sep}{orders})",
            &text[name_end..close].trim_end()
        ),
    })
}

/// `o` in the file's most frequent C++ spelling (`std::memory_order_X` by default).
fn cpp_spelling(text: &str, o: MemOrder) -> String {
    let scoped = text.matches("memory_order::").count();
    let flat = text.matches("memory_order_").count();
    let name = o.c_name();
    let std = text.contains("std::memory_order") || !text.contains("using namespace std");
    let prefix = if std { "std::" } else { "" };
    if scoped > flat {
        format!("{prefix}memory_order::{name}")
    } else {
        format!("{prefix}memory_order_{name}")
    }
}

/// The atomic operation calls inside `range` (byte offsets of `text`), innermost last.
fn atomic_calls<'t>(
    text: &str,
    node: tree_sitter::Node<'t>,
    range: (usize, usize),
    out: &mut Vec<(tree_sitter::Node<'t>, Form)>,
) {
    if node.end_byte() <= range.0 || node.start_byte() >= range.1 {
        return;
    }
    if node.kind() == "call_expression"
        && node.start_byte() >= range.0
        && node.end_byte() <= range.1
    {
        if let Some(f) = node
            .child_by_field_name("function")
            .and_then(|f| callee_form(text, f))
        {
            out.push((node, f));
        }
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        atomic_calls(text, child, range, out);
    }
}

/// The form of a callee expression: a member call's field, or the last name of a (qualified)
/// identifier.
fn callee_form(text: &str, f: tree_sitter::Node) -> Option<Form> {
    let slice = |n: tree_sitter::Node| &text[n.start_byte()..n.end_byte()];
    match f.kind() {
        "field_expression" => form(slice(f.child_by_field_name("field")?), true),
        "identifier" => form(slice(f), false),
        "qualified_identifier" => {
            let whole = slice(f);
            let last = whole.rsplit("::").next()?.trim();
            form(last, false)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let f = form("atomic_store_explicit", false).unwrap();
        assert_eq!((f.values, f.cas, f.builtin), (2, false, false));
        assert_eq!(form("atomic_load", false).unwrap().values, 1);
        assert_eq!(form("__atomic_load_n", false).unwrap().values, 1);
        assert_eq!(form("__atomic_store_n", false).unwrap().values, 2);
        assert_eq!(form("__atomic_fetch_add", false).unwrap().values, 2);
        assert_eq!(form("__atomic_exchange_n", false).unwrap().values, 2);
        assert_eq!(form("__atomic_exchange", false).unwrap().values, 3);
        assert_eq!(
            form("__atomic_compare_exchange_n", false).unwrap().values,
            4
        );
        let m = form("compare_exchange_strong", true).unwrap();
        assert_eq!((m.values, m.cas, m.member), (2, true, true));
        assert_eq!(form("store", true).unwrap().values, 1);
        assert_eq!(form("load", true).unwrap().values, 0);
        assert!(form("printf", false).is_none());
        assert!(form("push", true).is_none());
    }

    #[test]
    fn cpp_spellings() {
        let o = MemOrder::Release;
        assert_eq!(cpp_spelling("", o), "std::memory_order_release");
        assert_eq!(
            cpp_spelling("x.load(std::memory_order::relaxed)", o),
            "std::memory_order::release"
        );
        assert_eq!(
            cpp_spelling("using namespace std; x.load(memory_order_relaxed)", o),
            "memory_order_release"
        );
    }
}
