//! `#define` and macro replacement (C11 §6.10.3) with hide sets (Prosser's algorithm): a token
//! produced by expanding macro M carries M in its hide set and is never expanded as M again,
//! also when the rescan takes a function-like macro's arguments from the text after the use.

use super::lex::{self, Kind, Tok};
use super::{DiagKind, Expansion, Macro, MacroKind, PTok, Pp, R};
use std::collections::VecDeque;
use std::rc::Rc;

/// Deepest nesting of argument pre-expansion.
const MAX_DEPTH: usize = 200;
/// Most tokens all expansions of a translation unit may produce.
const MAX_PRODUCED: usize = 4_000_000;

/// The tokens of a file after a macro use, from which a function-like macro's arguments may
/// be taken.
pub(super) struct FileSource {
    pub(super) toks: Rc<Vec<Tok>>,
    pub(super) file: u32,
    /// The next token.
    pub(super) next: usize,
    /// The end of the last token taken.
    pub(super) end: usize,
}

impl FileSource {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.next).filter(|t| !(t.bol && t.is("#")))
    }
}

/// The next token of a macro call: from `input`, else from the file.
fn next_tok(input: &mut VecDeque<PTok>, src: &mut Option<&mut FileSource>) -> Option<PTok> {
    if let Some(t) = input.pop_front() {
        return Some(t);
    }
    let s = src.as_mut()?;
    let t = s.peek()?.clone();
    s.next += 1;
    s.end = t.end;
    Some(PTok::of(&t, s.file))
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl Pp<'_> {
    /// `#define` with the tokens `args` after `define`.
    pub(super) fn define(&mut self, fid: u32, args: &[Tok], at: usize) -> R<()> {
        let err = |p: &Pp, t: Option<&Tok>, m: &str| {
            p.diag(fid, t.map_or(at, |t| t.start), DiagKind::Error, m)
        };
        let Some(name) = args.first().filter(|t| t.kind == Kind::Ident) else {
            return Err(err(self, args.first(), "`#define` needs a macro name"));
        };
        if matches!(
            name.text.as_str(),
            "defined" | "__LINE__" | "__FILE__" | "__VA_ARGS__"
        ) {
            return Err(err(
                self,
                Some(name),
                &format!("`{}` cannot be defined", name.text),
            ));
        }
        let mut i = 1;
        let mut params = None;
        let mut variadic = false;
        if args.get(1).is_some_and(|t| t.is("(") && !t.space) {
            let mut ps = Vec::new();
            i = 2;
            loop {
                match args.get(i) {
                    Some(t) if t.is(")") && (ps.is_empty() || variadic) => break,
                    Some(t) if t.is("...") => variadic = true,
                    Some(t) if t.kind == Kind::Ident && !variadic => ps.push(t.text.clone()),
                    t => return Err(err(self, t, "malformed parameter list of `#define`")),
                }
                i += 1;
                match args.get(i) {
                    Some(t) if t.is(")") => break,
                    Some(t) if t.is(",") && !variadic => i += 1,
                    Some(t) if t.kind == Kind::Ident || t.is("...") => {
                        let m = "named variadic parameter (`args...`)";
                        return Err(self.diag(fid, t.start, DiagKind::Unsupported, m));
                    }
                    t => return Err(err(self, t, "malformed parameter list of `#define`")),
                }
            }
            i += 1;
            params = Some(ps);
        }
        let body: Vec<PTok> = args[i..]
            .iter()
            .enumerate()
            .map(|(k, t)| PTok {
                space: k > 0 && t.space,
                ..PTok::of(t, fid)
            })
            .collect();
        self.check_body(fid, &body, params.as_deref(), variadic)?;
        let m = Macro {
            kind: MacroKind::User,
            params,
            variadic,
            body,
            def: Some((fid, at)),
        };
        if let Some(old) = self.macros.get(&name.text) {
            let builtin = old.def.is_some_and(|(f, _)| self.files[f as usize].builtin);
            if old.kind == MacroKind::User && !builtin && !old.same_definition(&m) {
                let first = match old.def {
                    Some((f, o)) => {
                        let (l, c) = self.files[f as usize].line_col(o);
                        format!("first defined at {}:{l}:{c}", self.files[f as usize].name)
                    }
                    None => "first defined on the command line".to_string(),
                };
                // GCC warns and takes the later definition; so do we.
                let msg = format!(
                    "`{}` redefined differently ({first}); this later definition is used, as \
                     by GCC",
                    name.text
                );
                let w = self.diag(fid, name.start, DiagKind::Warning, &msg);
                self.warnings.push(w);
            }
        }
        self.macros.insert(name.text.clone(), m);
        Ok(())
    }

    /// `#` before a parameter, `##` not at either end, `__VA_ARGS__` only in variadic macros.
    fn check_body(
        &self,
        fid: u32,
        body: &[PTok],
        params: Option<&[String]>,
        variadic: bool,
    ) -> R<()> {
        let is_param = |t: Option<&PTok>| {
            t.is_some_and(|t| {
                params.is_some_and(|p| p.contains(&t.text)) || (variadic && t.text == "__VA_ARGS__")
            })
        };
        for (k, t) in body.iter().enumerate() {
            let bad = |m: &str| Err(self.diag(fid, t.at, DiagKind::Error, m));
            if t.is("##") && (k == 0 || k + 1 == body.len()) {
                return bad("`##` at either end of a macro's replacement");
            }
            if params.is_some() && t.is("#") && !is_param(body.get(k + 1)) {
                return bad("`#` is not followed by a macro parameter");
            }
            if t.text == "__VA_ARGS__" && !variadic {
                return bad("`__VA_ARGS__` outside a variadic macro");
            }
            if t.text == "__VA_OPT__" {
                return Err(self.diag(fid, t.at, DiagKind::Unsupported, "`__VA_OPT__`"));
            }
        }
        Ok(())
    }

    /// Replaces the macros in `input` (Prosser's algorithm); a function-like macro's
    /// arguments may continue in `src`. In `#if` (`in_if`), pass-through macros are replaced
    /// too.
    pub(super) fn expand(
        &mut self,
        input: &mut VecDeque<PTok>,
        mut src: Option<&mut FileSource>,
        in_if: bool,
        depth: usize,
    ) -> R<Vec<PTok>> {
        if depth > MAX_DEPTH {
            let t = input.front().map_or((0, 0), |t| (t.file, t.at));
            return Err(self.diag(
                t.0,
                t.1,
                DiagKind::Unsupported,
                &format!("macro arguments nested deeper than {MAX_DEPTH}"),
            ));
        }
        let mut out = Vec::new();
        while let Some(t) = input.pop_front() {
            let candidate = t.kind == Kind::Ident && self.macros.contains_key(&t.text);
            let id = if candidate { self.name_id(&t.text) } else { 0 };
            let m = match self.macros.get(&t.text) {
                Some(m) if candidate && !t.hide.contains(&id) => m.clone(),
                _ => {
                    out.push(t);
                    continue;
                }
            };
            let record = |name: &str| Expansion {
                name: name.to_string(),
                def: m.def,
            };
            let replacement = match m.kind {
                MacroKind::PassThrough if !in_if => {
                    out.push(t);
                    continue;
                }
                MacroKind::Refused(why) if !in_if => {
                    let m = format!("`{}`: {why}", t.text);
                    return Err(self.diag(t.file, t.at, DiagKind::Unsupported, &m));
                }
                MacroKind::Refused(_) => {
                    out.push(t);
                    continue;
                }
                MacroKind::Line | MacroKind::File => {
                    self.exps.push(record(&t.text));
                    vec![self.builtin(&t, m.kind)]
                }
                _ if m.params.is_none() => {
                    self.exps.push(record(&t.text));
                    let hs = union(&t.hide, &[id]);
                    self.substitute(&m, &[], &hs, &t, depth)?
                }
                _ => {
                    let paren = match input.front() {
                        Some(n) => n.is("("),
                        None => src
                            .as_ref()
                            .and_then(|s| s.peek())
                            .is_some_and(|n| n.is("(")),
                    };
                    if !paren {
                        out.push(t);
                        continue;
                    }
                    next_tok(input, &mut src);
                    let (args, rparen) = self.arguments(&m, &t, input, &mut src)?;
                    self.exps.push(record(&t.text));
                    let common: Vec<u32> = t
                        .hide
                        .iter()
                        .filter(|h| rparen.hide.contains(h))
                        .copied()
                        .collect();
                    let hs = union(&common, &[id]);
                    self.substitute(&m, &args, &hs, &t, depth)?
                }
            };
            self.produced += replacement.len();
            if self.produced > MAX_PRODUCED {
                let m = format!("macro expansion produces more than {MAX_PRODUCED} tokens");
                return Err(self.diag(t.file, t.at, DiagKind::Unsupported, &m));
            }
            for r in replacement.into_iter().rev() {
                input.push_front(r);
            }
        }
        Ok(out)
    }

    /// `__LINE__` (the line of the use in the user's file) or `__FILE__`, as `#line` sets them.
    fn builtin(&self, t: &PTok, kind: MacroKind) -> PTok {
        let file = &self.files[t.file as usize];
        let (name, line, _) = file.presumed(t.at);
        let text = match kind {
            MacroKind::Line => line.to_string(),
            _ => format!("{name:?}"),
        };
        PTok {
            kind: if kind == MacroKind::Line {
                Kind::Number
            } else {
                Kind::Str
            },
            text,
            ..t.clone()
        }
    }

    /// The arguments of a call of `m` (the `(` taken), split at top-level commas, and the `)`.
    fn arguments(
        &self,
        m: &Macro,
        name: &PTok,
        input: &mut VecDeque<PTok>,
        src: &mut Option<&mut FileSource>,
    ) -> R<(Vec<Vec<PTok>>, PTok)> {
        let n = m.params.as_ref().map_or(0, Vec::len);
        let mut args: Vec<Vec<PTok>> = vec![Vec::new()];
        let mut depth = 0usize;
        let rparen = loop {
            let Some(t) = next_tok(input, src) else {
                let stopped_at_directive =
                    src.as_ref().is_some_and(|s| s.toks.get(s.next).is_some());
                let (kind, what) = if stopped_at_directive {
                    (DiagKind::Unsupported, "a directive inside the arguments of")
                } else {
                    (DiagKind::Error, "unterminated call of")
                };
                let msg = format!("{what} macro `{}`", name.text);
                return Err(self.diag(name.file, name.at, kind, &msg));
            };
            if t.is("(") {
                depth += 1;
            } else if t.is(")") {
                if depth == 0 {
                    break t;
                }
                depth -= 1;
            } else if t.is(",") && depth == 0 && !(m.variadic && args.len() > n) {
                args.push(Vec::new());
                continue;
            }
            if let Some(a) = args.last_mut() {
                a.push(t);
            }
        };
        if n == 0 && !m.variadic && args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        if m.variadic && args.len() == n {
            args.push(Vec::new());
        }
        let wanted = n + usize::from(m.variadic);
        if args.len() != wanted && !(m.variadic && args.len() >= wanted) {
            let s = if n == 1 { "" } else { "s" };
            let at_least = if m.variadic { "at least " } else { "" };
            let msg = format!(
                "macro `{}` expects {at_least}{n} argument{s}, given {}",
                name.text,
                args.len()
            );
            return Err(self.diag(name.file, name.at, DiagKind::Error, &msg));
        }
        Ok((args, rparen))
    }

    /// The parameter of `m` that `t` names (`__VA_ARGS__` is the last).
    fn param(m: &Macro, t: &PTok) -> Option<usize> {
        let ps = m.params.as_ref()?;
        if t.kind != Kind::Ident {
            return None;
        }
        if m.variadic && t.text == "__VA_ARGS__" {
            return Some(ps.len());
        }
        ps.iter().position(|p| *p == t.text)
    }

    /// `m`'s replacement list with the arguments substituted (`#`, `##`), every token
    /// carrying the hide set `hs`.
    fn substitute(
        &mut self,
        m: &Macro,
        args: &[Vec<PTok>],
        hs: &[u32],
        use_tok: &PTok,
        depth: usize,
    ) -> R<Vec<PTok>> {
        let body = &m.body;
        let mut expanded: Vec<Option<Vec<PTok>>> = vec![None; args.len()];
        let mut res: Vec<PTok> = Vec::new();
        let mut lhs_start = 0;
        let mut i = 0;
        let from_body = |b: &PTok| PTok {
            hide: Vec::new(),
            ..b.clone()
        };
        while i < body.len() {
            let b = &body[i];
            if b.is("##") {
                let r = &body[i + 1];
                let rhs: Vec<PTok> = match Self::param(m, r) {
                    Some(p) => args[p].clone(),
                    None => vec![from_body(r)],
                };
                let va = m.variadic && r.text == "__VA_ARGS__";
                if va && res.len() > lhs_start && res.last().is_some_and(|t| t.is(",")) {
                    // GNU: `, ## __VA_ARGS__` drops the comma when there are no arguments.
                    if rhs.is_empty() {
                        res.pop();
                    }
                    res.extend(rhs);
                } else if res.len() == lhs_start {
                    res.extend(rhs);
                } else if let Some(first) = rhs.first() {
                    let l = res.pop().unwrap_or_else(|| first.clone());
                    let joined = format!("{}{}", l.text, first.text);
                    let Some(kind) = lex::single_token(&joined) else {
                        let msg = format!(
                            "pasting `{}` and `{}` does not give a valid token",
                            l.text, first.text
                        );
                        return Err(self.diag(use_tok.file, use_tok.at, DiagKind::Error, &msg));
                    };
                    res.push(PTok {
                        kind,
                        text: joined,
                        ..l
                    });
                    res.extend(rhs.into_iter().skip(1));
                }
                i += 2;
                continue;
            }
            lhs_start = res.len();
            let pasted = body.get(i + 1).is_some_and(|t| t.is("##"));
            if m.params.is_some() && b.is("#") {
                if let Some(p) = body.get(i + 1).and_then(|t| Self::param(m, t)) {
                    res.push(PTok {
                        kind: Kind::Str,
                        text: stringify(&args[p]),
                        ..from_body(b)
                    });
                    i += 2;
                    continue;
                }
            }
            match Self::param(m, b) {
                Some(p) if pasted => res.extend(args[p].iter().cloned()),
                Some(p) => {
                    if expanded[p].is_none() {
                        let mut input: VecDeque<PTok> = args[p].iter().cloned().collect();
                        expanded[p] = Some(self.expand(&mut input, None, false, depth + 1)?);
                    }
                    let mut toks = expanded[p].clone().unwrap_or_default();
                    if let Some(f) = toks.first_mut() {
                        f.space = b.space;
                    }
                    res.extend(toks);
                }
                None => res.push(from_body(b)),
            }
            i += 1;
        }
        for t in &mut res {
            t.hide = union(&t.hide, hs);
        }
        Ok(res)
    }
}

/// `#param`: the argument's spelling as a string literal (C11 §6.10.3.2).
fn stringify(arg: &[PTok]) -> String {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if matches!(t.kind, Kind::Str | Kind::Char) {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}
