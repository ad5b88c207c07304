//! The constant expression of `#if` / `#elif` (C11 §6.10.1), after `defined` and macro
//! replacement: integer and character constants, identifiers (0; `true` is 1 in C++), and
//! every operator of C's constant expressions with its precedence, evaluated in `intmax_t`
//! (64 bits). As in C, the operands `&&`, `||` and `?:` do not evaluate may divide by zero.

use super::lex::Kind;
use super::PTok;
use crate::frontend::literal::{self, LitError};

/// The binary operators by precedence, loosest first.
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

/// Deepest nesting of parentheses and unary operators.
const MAX_NESTING: usize = 256;

/// Evaluates `toks`; `cpp` makes `true` 1.
pub(crate) fn eval(toks: &[PTok], cpp: bool) -> Result<i64, String> {
    if toks.is_empty() {
        return Err("`#if` with no expression".to_string());
    }
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        cpp,
    };
    let v = p.comma(true)?;
    match toks.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected `{}` in `#if`", t.text)),
    }
}

struct Parser<'t> {
    toks: &'t [PTok],
    pos: usize,
    depth: usize,
    cpp: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks
            .get(self.pos)
            .filter(|t| t.kind == Kind::Punct)
            .map(|t| t.text.as_str())
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.peek() == Some(p) {
            self.pos += 1;
            return Ok(());
        }
        Err(match self.toks.get(self.pos) {
            Some(t) => format!("expected `{p}` in `#if`, found `{}`", t.text),
            None => format!("expected `{p}` at the end of `#if`"),
        })
    }

    fn comma(&mut self, live: bool) -> Result<i64, String> {
        let mut v = self.cond(live)?;
        while self.peek() == Some(",") {
            self.pos += 1;
            v = self.cond(live)?;
        }
        Ok(v)
    }

    fn cond(&mut self, live: bool) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!("`#if` nested deeper than {MAX_NESTING} levels"));
        }
        let c = self.binary(0, live)?;
        let v = if self.peek() == Some("?") {
            self.pos += 1;
            let a = self.comma(live && c != 0)?;
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
        Ok(v)
    }

    fn binary(&mut self, level: usize, live: bool) -> Result<i64, String> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary(live);
        };
        let mut left = self.binary(level + 1, live)?;
        while let Some(op) = self.peek().filter(|op| ops.contains(op)) {
            let op = op.to_string();
            self.pos += 1;
            let short = match op.as_str() {
                "&&" => Some(left != 0),
                "||" => Some(left == 0),
                _ => None,
            };
            let right = self.binary(level + 1, live && short != Some(false))?;
            left = match op.as_str() {
                "&&" => i64::from(left != 0 && right != 0),
                "||" => i64::from(left != 0 || right != 0),
                _ => match apply(&op, left, right) {
                    Ok(v) => v,
                    Err(e) if live => return Err(e),
                    Err(_) => 0,
                },
            };
        }
        Ok(left)
    }

    fn unary(&mut self, live: bool) -> Result<i64, String> {
        let Some(t) = self.toks.get(self.pos) else {
            return Err("`#if` expression ends early".to_string());
        };
        self.pos += 1;
        match (t.kind, t.text.as_str()) {
            (Kind::Punct, op @ ("-" | "+" | "~" | "!")) => {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(format!("`#if` nested deeper than {MAX_NESTING} levels"));
                }
                let a = self.unary(live)?;
                self.depth -= 1;
                Ok(match op {
                    "-" => a.wrapping_neg(),
                    "~" => !a,
                    "!" => i64::from(a == 0),
                    _ => a,
                })
            }
            (Kind::Punct, "(") => {
                let v = self.comma(live)?;
                self.expect(")")?;
                Ok(v)
            }
            (Kind::Number, text) => literal::parse_number(text).map_err(lit_error),
            (Kind::Char, text) => literal::parse_char(text).map_err(lit_error),
            (Kind::Ident, "true") if self.cpp => Ok(1),
            // C11 6.10.1p4: identifiers left after macro replacement are 0.
            (Kind::Ident, _) => Ok(0),
            (_, text) => Err(format!("unexpected `{text}` in `#if`")),
        }
    }
}

fn lit_error(e: LitError) -> String {
    match e {
        LitError::Unsupported(m) | LitError::Invalid(m) => format!("{m} in `#if`"),
    }
}

/// `a op b` in 64-bit arithmetic; overflow wraps (unsigned arithmetic is not distinguished).
fn apply(op: &str, a: i64, b: i64) -> Result<i64, String> {
    let shift = || {
        u32::try_from(b)
            .ok()
            .filter(|s| *s < 64)
            .ok_or_else(|| format!("shift by {b} in `#if`"))
    };
    Ok(match op {
        "*" => a.wrapping_mul(b),
        "/" | "%" if b == 0 => return Err("division by zero in `#if`".to_string()),
        "/" => a.wrapping_div(b),
        "%" => a.wrapping_rem(b),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "<<" => a.wrapping_shl(shift()?),
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
        _ => return Err(format!("unexpected `{op}` in `#if`")),
    })
}
