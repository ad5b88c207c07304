//! Object-like integer macros (`#define N 3`) and the `#ifdef` / `#ifndef` conditionals that
//! test them, at the top level of a file.
//!
//! A `#define NAME VALUE` is accepted when `VALUE` is an integer constant expression over
//! integer and character literals and the macros defined before it (parentheses, unary
//! `- + ~ !`, the binary arithmetic, shift, comparison, bitwise and logical operators, `?:`),
//! evaluated here once, in 64-bit arithmetic (overflow, a shift out of range and division by
//! zero are errors). A later use of `NAME` in an expression is that constant, of type `int` when
//! it fits and `long` otherwise. `#define NAME` without a value defines `NAME` for `#ifdef` only.
//! Since the preprocessor would replace `NAME` everywhere after its `#define`, a declaration,
//! field, type or assignment target spelled `NAME` after it is an error, and so is a `#define`
//! of a name already declared. Everything else (function-like macros, other values, `#if`,
//! `#undef`, `#elif`) is unsupported.

use super::literal::{self, LitError};
use super::lower::MAX_DEPTH;
use super::types::IntTy;
use super::{named_children, Ctx, Src, R};
use tree_sitter::Node;

/// A macro defined by `#define`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Macro {
    /// Its value; `None` for `#define NAME` without one.
    pub(crate) value: Option<i64>,
    /// The start byte of its (first) `#define`: it replaces the uses after it.
    pub(crate) start: usize,
}

/// The C type of a macro's value: `int` if it fits, else `long`.
pub(crate) fn macro_ty(v: i64) -> IntTy {
    if i32::try_from(v).is_ok() {
        IntTy::I32
    } else {
        IntTy::I64
    }
}

impl Ctx<'_> {
    /// The macro `name` as seen at byte `at` of the source: defined by a `#define` before it.
    pub(crate) fn macro_at(&self, name: &str, at: usize) -> Option<Macro> {
        self.macros.get(name).copied().filter(|m| m.start < at)
    }

    /// A top-level `#define NAME [VALUE]` (a `preproc_def` node).
    pub(crate) fn define_macro(&mut self, node: Node) -> R<()> {
        let src = self.src;
        let Some(name_node) = node.child_by_field_name("name") else {
            return Err(src.unsupported(node, "`#define` without a name"));
        };
        let name = src.text(name_node);
        let declared_before = self.global_index.contains_key(name)
            || self.object_index.contains_key(name)
            || self.handles.iter().any(|(h, _)| h == name)
            || self
                .fn_first
                .get(name)
                .is_some_and(|&b| b < node.start_byte());
        if declared_before {
            return Err(src.unsupported(
                node,
                &format!(
                    "`#define {name}` of a name declared before it (a macro may not be named \
                     like a variable or function)"
                ),
            ));
        }
        let value = match node.child_by_field_name("value") {
            None => None,
            Some(v) => Some(eval_value(
                &src,
                node,
                name,
                src.text(v),
                &self.macros_view(),
            )?),
        };
        if let Some(old) = self.macros.get(name) {
            if old.value != value {
                return Err(src.error(node, &format!("`{name}` redefined")));
            }
            return Ok(());
        }
        self.macros.insert(
            name.to_string(),
            Macro {
                value,
                start: node.start_byte(),
            },
        );
        Ok(())
    }

    /// The macros defined so far, for evaluating a `#define`'s value.
    fn macros_view(&self) -> impl Fn(&str) -> Option<Option<i64>> + '_ {
        move |name: &str| self.macros.get(name).map(|m| m.value)
    }

    /// A top-level `#ifdef NAME` / `#ifndef NAME` (a `preproc_ifdef` node): the branch chosen by
    /// whether a `#define` before it defined `NAME`, which may hold only `#define`s; the other
    /// branch is ignored.
    pub(crate) fn ifdef(&mut self, node: Node) -> R<()> {
        let src = self.src;
        let mut c = node.walk();
        let mut negated = None;
        let mut name = None;
        let mut alternative = None;
        let mut body = Vec::new();
        if c.goto_first_child() {
            loop {
                let n = c.node();
                match c.field_name() {
                    Some("name") => name = Some(n),
                    Some("alternative") => alternative = Some(n),
                    _ if n.kind() == "#ifdef" => negated = Some(false),
                    _ if n.kind() == "#ifndef" => negated = Some(true),
                    _ if n.is_named() && n.kind() != "comment" => body.push(n),
                    _ => {}
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        let (Some(negated), Some(name)) = (negated, name) else {
            return Err(src.unsupported(node, "preprocessor conditional"));
        };
        let else_branch =
            match alternative {
                None => Vec::new(),
                Some(a) if a.kind() == "preproc_else" => named_children(a),
                Some(a) => return Err(src.unsupported(
                    a,
                    "`#elif` (only `#ifdef` / `#ifndef` with an optional `#else` are supported)",
                )),
            };
        let defined = self.macros.contains_key(src.text(name));
        let chosen = if defined != negated {
            body
        } else {
            else_branch
        };
        for n in chosen {
            if n.kind() != "preproc_def" {
                return Err(src.unsupported(n, "only #define is supported inside #ifdef/#ifndef"));
            }
            self.define_macro(n)?;
        }
        Ok(())
    }

    /// Rejects, in top-level item `item`, the names that the preprocessor would have replaced by
    /// a macro's value where a value cannot stand: declared names (variables, parameters,
    /// functions, typedefs, fields), types, struct tags, called functions, and the targets of
    /// assignments, increments and `&`.
    pub(crate) fn check_macro_names(&self, item: Node) -> R<()> {
        if self.macros.is_empty() {
            return Ok(());
        }
        let src = self.src;
        let mut c = item.walk();
        loop {
            let n = c.node();
            let flagged = match n.kind() {
                "field_identifier" | "type_identifier" => true,
                "identifier" => {
                    let parent = n.parent();
                    let parent_kind = parent.map(|p| p.kind()).unwrap_or("");
                    match c.field_name() {
                        Some("declarator") | Some("name") => true,
                        Some("function") => parent_kind == "call_expression",
                        Some("left") => parent_kind == "assignment_expression",
                        Some("argument") => {
                            parent_kind == "update_expression"
                                || (parent_kind == "pointer_expression"
                                    && parent
                                        .and_then(|p| p.child_by_field_name("operator"))
                                        .is_some_and(|o| src.text(o) == "&"))
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if flagged {
                let name = src.text(n);
                if self.macro_at(name, n.start_byte()).is_some() {
                    return Err(src.error(
                        n,
                        &format!("`{name}` is a macro (the preprocessor replaces it by its value)"),
                    ));
                }
            }
            if c.goto_first_child() {
                continue;
            }
            loop {
                if c.node() == item {
                    return Ok(());
                }
                if c.goto_next_sibling() {
                    break;
                }
                if !c.goto_parent() {
                    return Ok(());
                }
            }
        }
    }
}

/// Why a `#define`'s value was not accepted.
enum ValueError {
    /// Not an integer constant expression over earlier macros: unsupported, with a detail.
    NotConstant(Option<String>),
    /// An invalid value (division by zero, overflow, a macro without a value).
    Invalid(String),
}

/// A token of a macro value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'s> {
    Num(i64),
    Ident(&'s str),
    Op(&'static str),
}

/// Operators, longest first.
const OPS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^",
    "|", "!", "~", "?", ":", "(", ")",
];

/// Evaluates the value `text` of `#define name` (node `def`) with the earlier macros `macros`.
fn eval_value(
    src: &Src,
    def: Node,
    name: &str,
    text: &str,
    macros: &dyn Fn(&str) -> Option<Option<i64>>,
) -> R<i64> {
    let result = tokenize(text).and_then(|toks| {
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            depth: 0,
            macros,
        };
        let v = p.cond(true)?;
        if p.pos != toks.len() {
            return Err(ValueError::NotConstant(None));
        }
        Ok(v)
    });
    result.map_err(|e| match e {
        ValueError::NotConstant(detail) => {
            let mut msg = format!(
                "`#define {name}` whose value is not an integer constant expression (only those \
                 macros are supported)"
            );
            if let Some(d) = detail {
                msg += ": ";
                msg += &d;
            }
            src.unsupported(def, &msg)
        }
        ValueError::Invalid(m) => src.error(def, &format!("{m} in the value of `#define {name}`")),
    })
}

/// Splits a macro value into tokens (comments and line continuations are white space).
fn tokenize(text: &str) -> Result<Vec<Tok<'_>>, ValueError> {
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let Some(rest) = text.get(i..) else {
            return Err(ValueError::NotConstant(None));
        };
        if b.is_ascii_whitespace() {
            i += 1;
        } else if rest.starts_with("\\\n") || rest.starts_with("\\\r\n") {
            i += 1; // a line continuation: the line break is skipped next
        } else if rest.starts_with("//") {
            break;
        } else if let Some(comment) = rest.strip_prefix("/*") {
            match comment.find("*/") {
                Some(k) => i += k + 4,
                None => break,
            }
        } else if b.is_ascii_digit() {
            let mut j = i;
            while j < bytes.len() && (is_ident(bytes[j]) || matches!(bytes[j], b'.' | b'\'')) {
                j += 1;
            }
            let lit = &text[i..j];
            let v = literal::parse_number(lit).map_err(|e| match e {
                LitError::Unsupported(m) => ValueError::NotConstant(Some(m)),
                LitError::Invalid(m) => ValueError::Invalid(m),
            })?;
            toks.push(Tok::Num(v));
            i = j;
        } else if b == b'\'' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'\'' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let lit = text.get(i..(j + 1).min(bytes.len())).unwrap_or("");
            let v = literal::parse_char(lit).map_err(|e| match e {
                LitError::Unsupported(m) | LitError::Invalid(m) => ValueError::NotConstant(Some(m)),
            })?;
            toks.push(Tok::Num(v));
            i = j + 1;
        } else if is_ident(b) {
            let mut j = i;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            if matches!(bytes.get(j), Some(b'\'' | b'"')) {
                return Err(ValueError::NotConstant(Some(format!(
                    "prefixed literal `{}`",
                    short(&text[i..])
                ))));
            }
            toks.push(Tok::Ident(&text[i..j]));
            i = j;
        } else if b == b'"' {
            return Err(ValueError::NotConstant(Some(
                "a string literal".to_string(),
            )));
        } else if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            toks.push(Tok::Op(op));
            i += op.len();
        } else {
            return Err(ValueError::NotConstant(Some(format!(
                "unexpected `{}`",
                short(rest)
            ))));
        }
    }
    Ok(toks)
}

/// The first few characters of `s`, for a message.
fn short(s: &str) -> String {
    s.split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take(16)
        .collect()
}

/// Recursive-descent parser and evaluator of a macro value (C's precedence and
/// associativity). Each method evaluates what it parses in 64-bit arithmetic when `live`; the
/// operands that `&&`, `||` and `?:` do not use are parsed with `live == false`, so that their
/// division by zero or overflow is no error (as in C), and their value is 0.
struct Parser<'t, 's, 'm> {
    toks: &'t [Tok<'s>],
    pos: usize,
    depth: usize,
    macros: &'m dyn Fn(&str) -> Option<Option<i64>>,
}

/// The binary operators of each precedence level, loosest first (`?:` is above them).
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_, '_, '_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), ValueError> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(ValueError::NotConstant(None))
        }
    }

    /// Bounds the nesting of parentheses, `?:` and unary operators (the only recursion that
    /// grows with the value's length).
    fn enter(&mut self) -> Result<(), ValueError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ValueError::NotConstant(Some(format!(
                "nesting deeper than {MAX_DEPTH} levels"
            ))));
        }
        Ok(())
    }

    /// `a ? b : c` (right-associative) or a binary expression.
    fn cond(&mut self, live: bool) -> Result<i64, ValueError> {
        self.enter()?;
        let c = self.binary(0, live)?;
        let r = if self.peek_op() == Some("?") {
            self.pos += 1;
            let a = self.cond(live && c != 0)?;
            self.expect(":")?;
            let b = self.cond(live && c == 0)?;
            if c != 0 {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    /// The binary operators of `LEVELS[level..]`, left-associative.
    fn binary(&mut self, level: usize, live: bool) -> Result<i64, ValueError> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary(live);
        };
        let mut left = self.binary(level + 1, live)?;
        while let Some(op) = self.peek_op().filter(|op| ops.contains(op)) {
            self.pos += 1;
            left = match op {
                "&&" => {
                    let right = self.binary(level + 1, live && left != 0)?;
                    i64::from(left != 0 && right != 0)
                }
                "||" => {
                    let right = self.binary(level + 1, live && left == 0)?;
                    i64::from(left != 0 || right != 0)
                }
                _ => {
                    let right = self.binary(level + 1, live)?;
                    match apply(op, left, right) {
                        Ok(v) => v,
                        Err(e) if live => return Err(e),
                        Err(_) => 0,
                    }
                }
            };
        }
        Ok(left)
    }

    fn unary(&mut self, live: bool) -> Result<i64, ValueError> {
        match self.toks.get(self.pos).copied() {
            Some(Tok::Op(op @ ("-" | "+" | "~" | "!"))) => {
                self.pos += 1;
                self.enter()?;
                let a = self.unary(live)?;
                self.depth -= 1;
                Ok(match op {
                    "-" => match a.checked_neg() {
                        Some(v) => v,
                        None if live => return Err(overflow()),
                        None => 0,
                    },
                    "~" => !a,
                    "!" => i64::from(a == 0),
                    _ => a,
                })
            }
            Some(Tok::Op("(")) => {
                self.pos += 1;
                let v = self.cond(live)?;
                self.expect(")")?;
                Ok(v)
            }
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Ident(id)) => match (self.macros)(id) {
                Some(Some(v)) => {
                    self.pos += 1;
                    Ok(v)
                }
                Some(None) => Err(ValueError::Invalid(format!(
                    "macro `{id}` (defined without a value) used"
                ))),
                None => Err(ValueError::NotConstant(Some(format!(
                    "`{id}` is not a macro defined before it"
                )))),
            },
            _ => Err(ValueError::NotConstant(None)),
        }
    }
}

fn overflow() -> ValueError {
    ValueError::Invalid("overflow".to_string())
}

/// `a op b` for a binary operator other than `&&` and `||`, in 64-bit arithmetic.
fn apply(op: &str, a: i64, b: i64) -> Result<i64, ValueError> {
    let shift = || {
        u32::try_from(b)
            .ok()
            .filter(|s| *s < 64)
            .ok_or_else(|| ValueError::Invalid(format!("shift by {b}")))
    };
    Ok(match op {
        "*" => a.checked_mul(b).ok_or_else(overflow)?,
        "/" | "%" if b == 0 => return Err(ValueError::Invalid("division by zero".to_string())),
        "/" => a.checked_div(b).ok_or_else(overflow)?,
        "%" => a.checked_rem(b).ok_or_else(overflow)?,
        "+" => a.checked_add(b).ok_or_else(overflow)?,
        "-" => a.checked_sub(b).ok_or_else(overflow)?,
        "<<" => {
            let s = shift()?;
            let v = a.checked_shl(s).ok_or_else(overflow)?;
            if a < 0 || v >> s != a {
                return Err(overflow());
            }
            v
        }
        ">>" => a >> shift()?,
        "<" => i64::from(a < b),
        "<=" => i64::from(a <= b),
        ">" => i64::from(a > b),
        ">=" => i64::from(a >= b),
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        _ => return Err(ValueError::NotConstant(None)),
    })
}
