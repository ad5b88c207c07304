//! The C preprocessor in front of the tree-sitter parse (translation phases 1–4), with
//! provenance.
//!
//! [`preprocess`] turns a file (and the headers it includes) into one text, the
//! [`Unit`], that tree-sitter parses, and keeps for every byte of it where it came from: a
//! byte of a file copied as is maps to that byte; a token produced by a macro expansion maps
//! to its spelling in the macro's definition (or, for a macro argument, in the user's code),
//! and lies in the *region* of the top-level macro use that produced it. A span of the parsed
//! text maps back to the user's file through [`Unit::start`] / [`Unit::end`]: a statement
//! holding `LOAD(&x)` spans the use `LOAD(&x)` as written.
//!
//! Layout of the text: every file is copied byte for byte, except that directives and the
//! lines of skipped `#if` groups are blanked (each byte a space, line breaks kept), a macro
//! use is replaced by its expansion (tokens separated by one space), and an `#include` line is
//! followed by the included file's text. So a file without directives and macro uses is its
//! own text, and the byte offsets of the main file's text before its first include or macro
//! use are unchanged.
//!
//! **Invariants:** every byte of [`Unit::text`] maps to a file position; a directive is either
//! carried out or an error at its position (file:line:col), never skipped; system headers are
//! never read (see `system.rs`); the result depends only on the files' texts and the options.
//!
//! Why not a crate: rucc-pp (MIT OR Apache-2.0) keeps a macro chain per token, but comes
//! with its compiler's session, diagnostics, lexer and target crates pinned to one version,
//! searches headers on disk in GCC's order (fensyn's system headers must not be read), and
//! gives tokens rather than a text with a byte map, which is what tree-sitter and the rewriter
//! need.

mod expand;
mod expr;
mod include;
pub(crate) mod lex;
pub(crate) mod spans;
mod system;
#[cfg(test)]
mod tests;

use super::{DiagKind, Diagnostic};
use crate::ir::Lang;
use lex::{Kind, Tok};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

pub use crate::ir::PpOptions;

/// Reads the user's files (the disk, or edited texts for a re-check).
pub trait Loader {
    fn load(&self, path: &Path) -> std::io::Result<String>;
}

/// Reads files from the disk.
pub struct Disk;

impl Loader for Disk {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
}

/// Files given by their text (tests, and sources being rewritten), then another loader.
pub struct Overlay<'a> {
    pub files: HashMap<PathBuf, String>,
    pub fallback: &'a dyn Loader,
}

impl Loader for Overlay<'_> {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        match self.files.get(&normalize(path)) {
            Some(t) => Ok(t.clone()),
            None => self.fallback.load(path),
        }
    }
}

/// A file of the translation unit: the main file (index 0) or a header.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// As shown in messages (the main file as given; a header as its path was found).
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    /// The known system headers included before this file was read (see
    /// [`crate::ir::Header::system_before`]).
    pub system_before: Vec<String>,
    /// The known system headers included when the first reading of this header ended (see
    /// [`crate::ir::Header::system_after`]).
    pub system_after: Option<Vec<String>>,
    /// Start offset of every line.
    lines: Vec<usize>,
    /// `#line` directives and linemarkers, in the order of the lines they follow.
    marks: Vec<LineMark>,
    /// Definitions fensyn reads for a system header (`system::definitions`), not a file.
    pub(crate) builtin: bool,
}

/// `#line N "name"` (or the linemarker `# N "name"`) on the line before `line`: from `line`
/// on, the file's lines are numbered from `presumed`, under `name` if given (C11 6.10.4).
#[derive(Clone, Debug)]
struct LineMark {
    line: usize,
    presumed: usize,
    name: Option<String>,
}

impl SourceFile {
    fn new(name: String, path: PathBuf, text: String) -> SourceFile {
        let mut lines = vec![0];
        lines.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name,
            path,
            text,
            system_before: Vec::new(),
            system_after: None,
            lines,
            marks: Vec::new(),
            builtin: false,
        }
    }

    /// The 1-based line and byte column of `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.lines.partition_point(|&s| s <= offset).max(1);
        (line, offset - self.lines[line - 1] + 1)
    }

    /// The *presumed* name, line and column of `offset` (what `__FILE__` and `__LINE__` say
    /// there): its own without `#line` directives or linemarkers before it.
    pub fn presumed(&self, offset: usize) -> (&str, usize, usize) {
        let (line, column) = self.line_col(offset);
        let k = self.marks.partition_point(|m| m.line <= line);
        let Some(m) = k.checked_sub(1).map(|k| &self.marks[k]) else {
            return (&self.name, line, column);
        };
        let name = self.marks[..k]
            .iter()
            .rev()
            .find_map(|m| m.name.as_deref())
            .unwrap_or(&self.name);
        (name, m.presumed + (line - m.line), column)
    }

    /// A diagnostic at `offset`: at the file's own position (the text fensyn read, where
    /// traces, fences and SARIF point too), naming the presumed position when a `#line` or
    /// linemarker moved it: a generator's or `gcc -E`'s file names may not exist here, or be
    /// a system header whose text is not the one read.
    pub(crate) fn diagnostic(&self, offset: usize, kind: DiagKind, message: &str) -> Diagnostic {
        let (presumed, p_line, column) = self.presumed(offset);
        let (line, _) = self.line_col(offset);
        let name = self.name.as_str();
        let message = if presumed == name && p_line == line {
            message.to_string()
        } else {
            format!("{message} (presumed {presumed}:{p_line}:{column})")
        };
        Diagnostic {
            file: name.to_string(),
            line,
            column,
            kind,
            message,
        }
    }
}

/// A preprocessing token being expanded: its spelling, its origin (file and offset: a macro's
/// definition or the user's text) and its hide set (the macros it must not expand again).
#[derive(Clone, Debug)]
pub(crate) struct PTok {
    pub(crate) kind: Kind,
    pub(crate) text: String,
    pub(crate) space: bool,
    pub(crate) file: u32,
    pub(crate) at: usize,
    pub(crate) hide: Vec<u32>,
}

impl PTok {
    fn of(t: &Tok, file: u32) -> PTok {
        PTok {
            kind: t.kind,
            text: t.text.clone(),
            space: t.space,
            file,
            at: t.start,
            hide: Vec::new(),
        }
    }

    pub(crate) fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.text == p
    }
}

/// One macro expansion: the macro and where it is defined.
#[derive(Clone, Debug)]
pub(crate) struct Expansion {
    pub(crate) name: String,
    /// The `#define` (file, offset); `None` for a built-in macro.
    pub(crate) def: Option<(u32, usize)>,
}

/// Bytes `out..` of the text come from bytes `src..src + len` of `file` (past `len`, a byte
/// maps to `src + len`).
#[derive(Clone, Copy, Debug)]
struct Seg {
    out: usize,
    file: u32,
    src: usize,
    len: usize,
}

/// The text produced by one top-level macro use `file[use_start..use_end]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub(crate) out_start: usize,
    pub(crate) out_end: usize,
    pub(crate) file: u32,
    pub(crate) use_start: usize,
    pub(crate) use_end: usize,
    pub(crate) exp: u32,
}

/// A preprocessed translation unit.
#[derive(Debug)]
pub struct Unit {
    /// What tree-sitter parses.
    pub text: String,
    /// The main file, then every header read, in the order first included.
    pub files: Vec<SourceFile>,
    segs: Vec<Seg>,
    pub(crate) regions: Vec<Region>,
    pub(crate) exps: Vec<Expansion>,
    /// What a compiler accepts with a warning (a macro redefined differently), in order.
    pub warnings: Vec<Diagnostic>,
}

impl Unit {
    /// The text is the main file's own text (no header, no macro use, no directive).
    pub fn is_identity(&self) -> bool {
        self.files.len() == 1 && self.regions.is_empty() && self.text == self.files[0].text
    }

    /// The file position the byte `out` of the text was spelled at.
    pub fn origin(&self, out: usize) -> (u32, usize) {
        let k = self.segs.partition_point(|s| s.out <= out).max(1) - 1;
        match self.segs.get(k) {
            Some(s) => (s.file, s.src + (out - s.out).min(s.len)),
            None => (0, 0),
        }
    }

    /// The top-level macro use whose expansion holds byte `out`.
    pub(crate) fn region(&self, out: usize) -> Option<&Region> {
        let k = self.regions.partition_point(|r| r.out_start <= out);
        let r = self.regions.get(k.checked_sub(1)?)?;
        (out < r.out_end).then_some(r)
    }

    /// Where a span starting at byte `out` starts in the user's files: inside a macro
    /// expansion, at the macro use.
    pub fn start(&self, out: usize) -> (u32, usize) {
        match self.region(out) {
            Some(r) => (r.file, r.use_start),
            None => self.origin(out),
        }
    }

    /// Where a span ending at byte `out_end` (exclusive) ends in the user's files.
    pub fn end(&self, out_end: usize) -> (u32, usize) {
        let Some(last) = out_end.checked_sub(1) else {
            return self.origin(0);
        };
        match self.region(last) {
            Some(r) => (r.file, r.use_end),
            None => {
                let (f, o) = self.origin(last);
                (f, o + 1)
            }
        }
    }

    /// `in expansion of LOAD, defined at algo.h:7:1` for a byte inside a macro expansion.
    pub fn expansion_note(&self, out: usize) -> Option<String> {
        let r = self.region(out)?;
        let e = self.exps.get(r.exp as usize)?;
        Some(match e.def {
            Some((f, _)) if self.files[f as usize].builtin => {
                format!(
                    "in expansion of {}, defined by fensyn's {}",
                    e.name, self.files[f as usize].name
                )
            }
            Some((f, at)) => {
                let file = &self.files[f as usize];
                let (l, c) = file.line_col(at);
                format!(
                    "in expansion of {}, defined at {}:{l}:{c}",
                    e.name, file.name
                )
            }
            None => format!("in expansion of {}", e.name),
        })
    }

    /// The file, line and column a diagnostic at byte `out` names: the token's own position
    /// when it was spelled in the macro use (an argument), else the use.
    pub fn diag_position(&self, out: usize) -> (u32, usize) {
        let (f, o) = self.origin(out);
        match self.region(out) {
            Some(r) if !(f == r.file && (r.use_start..r.use_end).contains(&o)) => {
                (r.file, r.use_start)
            }
            _ => (f, o),
        }
    }
}

/// Preprocesses `text`, the file `name` (read from `path` for relative includes), with the
/// integer macros `defines` (`-D` and fensyn's own) and `opts`.
pub fn preprocess(
    name: &str,
    text: &str,
    lang: Lang,
    defines: &[(String, i64)],
    opts: &PpOptions,
    loader: &dyn Loader,
) -> Result<Unit, Diagnostic> {
    let mut pp = Pp::new(lang, opts, loader);
    let main = SourceFile::new(
        name.to_string(),
        normalize(Path::new(name)),
        text.to_string(),
    );
    let toks = lex::lex(text).map_err(|e| pp.unterminated(&main, e.0))?;
    pp.files.push(main);
    pp.toks.push(Rc::new(toks));
    pp.predefine(defines)?;
    pp.stack.push(0);
    for path in &opts.link {
        pp.link_unit(path)?;
    }
    pp.run_file(0)?;
    Ok(Unit {
        text: pp.out,
        files: pp.files,
        segs: pp.segs,
        regions: pp.regions,
        exps: pp.exps,
        warnings: pp.warnings,
    })
}

/// The lexical normal form of a path (`a/./b/../c` is `a/c`), for `#pragma once`, cycles
/// and the overlay.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The characters of a string literal `"..."` (simple escapes only: a file name).
fn unquote(lit: &str) -> String {
    let inner = lit
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(lit);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// What a macro is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MacroKind {
    /// `#define` or `-D`.
    User,
    /// Known to the front end by name: only `#if` replaces it (see `system.rs`).
    PassThrough,
    Line,
    File,
    /// Declared by a system header but not modelled: a use is refused, saying why.
    Refused(&'static str),
}

#[derive(Clone, Debug)]
pub(crate) struct Macro {
    pub(crate) kind: MacroKind,
    /// `Some` for a function-like macro (without `...`).
    pub(crate) params: Option<Vec<String>>,
    pub(crate) variadic: bool,
    pub(crate) body: Vec<PTok>,
    /// Where it is defined (`None`: predefined or on the command line).
    pub(crate) def: Option<(u32, usize)>,
}

impl Macro {
    fn same_definition(&self, other: &Macro) -> bool {
        self.params == other.params
            && self.variadic == other.variadic
            && self.body.len() == other.body.len()
            && self
                .body
                .iter()
                .zip(&other.body)
                .enumerate()
                .all(|(i, (a, b))| a.text == b.text && (i == 0 || a.space == b.space))
    }
}

/// An open `#if` group.
struct Cond {
    file: u32,
    at: usize,
    /// The enclosing group is active.
    parent: bool,
    /// A branch was taken.
    taken: bool,
    active: bool,
    seen_else: bool,
}

/// The preprocessor's state.
pub(crate) struct Pp<'a> {
    pub(crate) cpp: bool,
    opts: &'a PpOptions,
    loader: &'a dyn Loader,
    pub(crate) files: Vec<SourceFile>,
    toks: Vec<Rc<Vec<Tok>>>,
    pub(crate) macros: HashMap<String, Macro>,
    /// Macro names as numbers, for hide sets.
    pub(crate) names: HashMap<String, u32>,
    out: String,
    segs: Vec<Seg>,
    regions: Vec<Region>,
    pub(crate) exps: Vec<Expansion>,
    conds: Vec<Cond>,
    /// The files being read, outermost first (an include of one of them is a cycle).
    stack: Vec<u32>,
    once: HashSet<PathBuf>,
    /// The include-guard macro of a file whose whole text is `#ifndef G` ... `#endif`.
    guards: HashMap<PathBuf, String>,
    /// Tokens produced by expansions so far (bounded).
    pub(crate) produced: usize,
    /// The known system headers included so far, sorted.
    system_seen: Vec<String>,
    /// Diagnostics of kind [`DiagKind::Warning`]: accepted as GCC accepts them.
    pub(crate) warnings: Vec<Diagnostic>,
}

/// Deepest include nesting.
const MAX_INCLUDE_DEPTH: usize = 200;

type R<T> = Result<T, Diagnostic>;

impl<'a> Pp<'a> {
    fn new(lang: Lang, opts: &'a PpOptions, loader: &'a dyn Loader) -> Pp<'a> {
        Pp {
            cpp: lang == Lang::Cpp,
            opts,
            loader,
            files: Vec::new(),
            toks: Vec::new(),
            macros: HashMap::new(),
            names: HashMap::new(),
            out: String::new(),
            segs: Vec::new(),
            regions: Vec::new(),
            exps: Vec::new(),
            conds: Vec::new(),
            stack: Vec::new(),
            once: HashSet::new(),
            guards: HashMap::new(),
            produced: 0,
            system_seen: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub(crate) fn diag(&self, file: u32, at: usize, kind: DiagKind, message: &str) -> Diagnostic {
        self.files[file as usize].diagnostic(at, kind, message)
    }

    fn unterminated(&self, f: &SourceFile, at: usize) -> Diagnostic {
        let (line, column) = f.line_col(at);
        Diagnostic {
            file: f.name.clone(),
            line,
            column,
            kind: DiagKind::Syntax,
            message: "unterminated comment".to_string(),
        }
    }

    /// The predefined macros, GCC's memory orders, `-D` (integers, then texts) and `-U`.
    fn predefine(&mut self, defines: &[(String, i64)]) -> R<()> {
        let builtin = |kind| Macro {
            kind,
            params: None,
            variadic: false,
            body: Vec::new(),
            def: None,
        };
        self.macros
            .insert("__LINE__".into(), builtin(MacroKind::Line));
        self.macros
            .insert("__FILE__".into(), builtin(MacroKind::File));
        let mut texts: Vec<(String, String, MacroKind)> =
            system::predefined(self.cpp, self.opts.std)
                .into_iter()
                .map(|(n, v)| (n.to_string(), v, MacroKind::User))
                .collect();
        for (n, v) in system::ORDER_VALUES {
            texts.push((n.to_string(), v.to_string(), MacroKind::PassThrough));
        }
        for (n, v) in defines {
            texts.push((n.clone(), v.to_string(), MacroKind::User));
        }
        for (n, v) in &self.opts.defines {
            texts.push((n.clone(), v.clone(), MacroKind::User));
        }
        for (name, value, kind) in texts {
            let body = lex::lex(&value)
                .map_err(|_| {
                    self.diag(0, 0, DiagKind::Error, &format!("bad -D value for `{name}`"))
                })?
                .iter()
                .map(|t| PTok::of(t, 0))
                .collect();
            let m = Macro {
                kind,
                params: None,
                variadic: false,
                body,
                def: None,
            };
            self.macros.insert(name, m);
        }
        for n in &self.opts.undefs {
            self.macros.remove(n);
        }
        Ok(())
    }

    /// The number of a macro name in hide sets.
    pub(crate) fn name_id(&mut self, name: &str) -> u32 {
        let n = self.names.len() as u32;
        *self.names.entry(name.to_string()).or_insert(n)
    }

    fn active(&self) -> bool {
        self.conds.last().is_none_or(|c| c.active)
    }

    /// Appends `file[*pos..end]` as is.
    fn copy_to(&mut self, file: u32, pos: &mut usize, end: usize) {
        if end <= *pos {
            return;
        }
        let Some(s) = self.files[file as usize].text.get(*pos..end) else {
            return;
        };
        let s = s.to_string();
        self.push_seg(file, *pos, end - *pos);
        self.out.push_str(&s);
        *pos = end;
    }

    /// Appends `file[*pos..start]` as is and `file[start..end]` blanked.
    fn blank_to(&mut self, file: u32, pos: &mut usize, start: usize, end: usize) {
        self.copy_to(file, pos, start);
        let text = &self.files[file as usize].text;
        let Some(s) = text.get(*pos..end) else {
            return;
        };
        let blank: String = s
            .bytes()
            .map(|b| {
                if b == b'\n' || b == b'\r' {
                    b as char
                } else {
                    ' '
                }
            })
            .collect();
        // Multi-byte characters become as many spaces as bytes: offsets are kept.
        self.push_seg(file, *pos, end - *pos);
        self.out.push_str(&blank);
        *pos = end;
    }

    fn push_seg(&mut self, file: u32, src: usize, len: usize) {
        let out = self.out.len();
        if let Some(last) = self.segs.last_mut() {
            if last.file == file && last.src + last.len == src && last.out + last.len == out {
                last.len += len;
                return;
            }
        }
        self.segs.push(Seg {
            out,
            file,
            src,
            len,
        });
    }

    /// Preprocesses file `fid` into the output.
    fn run_file(&mut self, fid: u32) -> R<()> {
        let toks = Rc::clone(&self.toks[fid as usize]);
        let base = self.conds.len();
        let mut pos = 0;
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t.bol && t.is("#") {
                let end = (i + 1..toks.len())
                    .find(|&k| toks[k].bol)
                    .unwrap_or(toks.len());
                self.blank_to(fid, &mut pos, t.start, toks[end - 1].end);
                self.directive(fid, &toks[i..end], &mut pos)?;
                i = end;
            } else if !self.active() {
                self.blank_to(fid, &mut pos, t.start, t.end);
                i += 1;
            } else if t.kind == Kind::Ident && self.expands(&t.text) {
                i = self.expand_use(fid, &toks, i, &mut pos)?;
            } else {
                self.copy_to(fid, &mut pos, t.end);
                i += 1;
            }
        }
        let len = self.files[fid as usize].text.len();
        self.copy_to(fid, &mut pos, len);
        if let Some(c) = self.conds.get(base) {
            return Err(self.diag(
                c.file,
                c.at,
                DiagKind::Error,
                "unterminated `#if` (no `#endif`)",
            ));
        }
        Ok(())
    }

    /// Whether an identifier in the text is replaced.
    fn expands(&self, name: &str) -> bool {
        self.macros
            .get(name)
            .is_some_and(|m| m.kind != MacroKind::PassThrough)
    }

    /// Expands the macro use starting at token `i` of file `fid`; returns the next token.
    fn expand_use(&mut self, fid: u32, toks: &Rc<Vec<Tok>>, i: usize, pos: &mut usize) -> R<usize> {
        let t = &toks[i];
        self.copy_to(fid, pos, t.start);
        let first_exp = self.exps.len();
        let mut src = expand::FileSource {
            toks: Rc::clone(toks),
            file: fid,
            next: i + 1,
            end: t.end,
        };
        let mut input = std::collections::VecDeque::from([PTok::of(t, fid)]);
        let result = self.expand(&mut input, Some(&mut src), false, 0)?;
        if self.exps.len() == first_exp {
            // A function-like macro's name without arguments: not a use.
            self.copy_to(fid, pos, t.end);
            return Ok(i + 1);
        }
        let out_start = self.out.len();
        for (k, tok) in result.iter().enumerate() {
            if k > 0 {
                self.out.push(' ');
            }
            let flen = self.files[tok.file as usize].text.len();
            let len = tok.text.len().min(flen.saturating_sub(tok.at));
            self.segs.push(Seg {
                out: self.out.len(),
                file: tok.file,
                src: tok.at,
                len,
            });
            self.out.push_str(&tok.text);
        }
        self.regions.push(Region {
            out_start,
            out_end: self.out.len(),
            file: fid,
            use_start: t.start,
            use_end: src.end,
            exp: first_exp as u32,
        });
        // The bytes after the use are copied from its end on.
        *pos = src.end;
        self.segs.push(Seg {
            out: self.out.len(),
            file: fid,
            src: src.end,
            len: 0,
        });
        Ok(src.next)
    }

    /// Carries out the directive `line` (`#` first) of file `fid`.
    fn directive(&mut self, fid: u32, line: &[Tok], pos: &mut usize) -> R<()> {
        let Some(name) = line.get(1) else {
            return Ok(()); // the null directive
        };
        let args = &line[2..];
        let at = line[0].start;
        match name.text.as_str() {
            "if" | "ifdef" | "ifndef" => return self.open_if(fid, &name.text, args, at),
            "elif" | "elifdef" | "elifndef" | "else" | "endif" => {
                return self.continue_if(fid, &name.text, args, at)
            }
            _ if !self.active() => return Ok(()),
            _ if name.kind == Kind::Number => return self.line_directive(fid, line, false),
            _ => {}
        }
        match name.text.as_str() {
            "line" => self.line_directive(fid, line, true),
            "define" => self.define(fid, args, at),
            "undef" => {
                let n = self.macro_name(fid, args, at, "#undef")?;
                if matches!(n.as_str(), "__LINE__" | "__FILE__" | "defined") {
                    return Err(self.diag(fid, at, DiagKind::Error, &format!("`#undef {n}`")));
                }
                self.macros.remove(&n);
                Ok(())
            }
            "include" => self.include(fid, line, pos),
            "error" => {
                let text = self.rest_text(fid, args);
                Err(self.diag(
                    fid,
                    line[0].start,
                    DiagKind::Error,
                    &format!("#error {text}"),
                ))
            }
            "warning" => Ok(()),
            "pragma" => {
                if args.first().is_some_and(|t| t.text == "once") {
                    self.once.insert(self.files[fid as usize].path.clone());
                }
                Ok(())
            }
            d @ ("include_next" | "import" | "ident" | "sccs" | "assert" | "unassert") => {
                Err(self.diag(fid, at, DiagKind::Unsupported, &format!("`#{d}` directive")))
            }
            d => Err(self.diag(
                fid,
                at,
                DiagKind::Error,
                &format!("unknown directive `#{d}`"),
            )),
        }
    }

    /// `#line N "name"` (`hash_line`; its tokens are macro-replaced) or GCC's linemarker
    /// `# N "name" flags...` (what `cpp` writes): numbers the following lines from `N`, in
    /// file `name` if given, for messages, `__LINE__` and `__FILE__`.
    fn line_directive(&mut self, fid: u32, line: &[Tok], hash_line: bool) -> R<()> {
        let at = line[0].start;
        let what = if hash_line { "#line" } else { "linemarker" };
        let toks: Vec<PTok> = line[if hash_line { 2 } else { 1 }..]
            .iter()
            .map(|t| PTok::of(t, fid))
            .collect();
        let toks = if hash_line {
            self.expand(&mut toks.into(), None, false, 0)?
        } else {
            toks
        };
        let bad = |p: &Pp, m: &str| p.diag(fid, at, DiagKind::Error, &format!("{what}: {m}"));
        let number = toks
            .first()
            .filter(|t| t.kind == Kind::Number && t.text.bytes().all(|b| b.is_ascii_digit()));
        let Some(number) = number else {
            return Err(bad(self, "expects a line number (decimal digits)"));
        };
        let presumed = match number.text.parse::<usize>() {
            Ok(n) if n <= 2_147_483_647 => n,
            _ => return Err(bad(self, "line number out of range (at most 2147483647)")),
        };
        let name = match toks.get(1) {
            Some(t) if t.kind == Kind::Str && t.text.starts_with('"') => Some(unquote(&t.text)),
            Some(_) => return Err(bad(self, "expects a file name in double quotes")),
            None => None,
        };
        let flags = toks.get(2..).unwrap_or(&[]);
        let flag_ok = |t: &PTok| matches!(t.text.as_str(), "1" | "2" | "3" | "4");
        if !flags.is_empty() && (hash_line || name.is_none() || !flags.iter().all(flag_ok)) {
            return Err(bad(self, &format!("unexpected `{}`", flags[0].text)));
        }
        let last = line.last().map_or(at, |t| t.start);
        let next_line = self.files[fid as usize].line_col(last).0 + 1;
        self.files[fid as usize].marks.push(LineMark {
            line: next_line,
            presumed,
            name,
        });
        Ok(())
    }

    /// The text of a directive's tokens as written (for `#error`).
    fn rest_text(&self, fid: u32, args: &[Tok]) -> String {
        match (args.first(), args.last()) {
            (Some(a), Some(b)) => self.files[fid as usize]
                .text
                .get(a.start..b.end)
                .unwrap_or("")
                .to_string(),
            _ => String::new(),
        }
    }

    /// The identifier a directive names (`#undef X`, `#ifdef X`).
    fn macro_name(&self, fid: u32, args: &[Tok], at: usize, what: &str) -> R<String> {
        match args {
            [t] if t.kind == Kind::Ident => Ok(t.text.clone()),
            [t, ..] if t.kind == Kind::Ident => Err(self.diag(
                fid,
                args[1].start,
                DiagKind::Error,
                &format!("extra tokens after `{what} {}`", t.text),
            )),
            _ => Err(self.diag(
                fid,
                at,
                DiagKind::Error,
                &format!("`{what}` needs a macro name"),
            )),
        }
    }

    fn open_if(&mut self, fid: u32, d: &str, args: &[Tok], at: usize) -> R<()> {
        let parent = self.active();
        let value = parent && self.condition(fid, d, args, at)?;
        self.conds.push(Cond {
            file: fid,
            at,
            parent,
            taken: value,
            active: value,
            seen_else: false,
        });
        Ok(())
    }

    fn continue_if(&mut self, fid: u32, d: &str, args: &[Tok], at: usize) -> R<()> {
        let Some(c) = self.conds.last().filter(|c| c.file == fid) else {
            return Err(self.diag(fid, at, DiagKind::Error, &format!("`#{d}` without `#if`")));
        };
        if d == "endif" {
            self.conds.pop();
            return Ok(());
        }
        if c.seen_else {
            return Err(self.diag(fid, at, DiagKind::Error, &format!("`#{d}` after `#else`")));
        }
        let (parent, taken) = (c.parent, c.taken);
        let value = if d == "else" {
            parent && !taken
        } else if parent && !taken {
            let kind = d.strip_prefix("el").unwrap_or(d);
            self.condition(fid, kind, args, at)?
        } else {
            false
        };
        if let Some(c) = self.conds.last_mut() {
            c.active = value;
            c.taken |= value;
            c.seen_else = d == "else";
        }
        Ok(())
    }

    /// The value of `#if EXPR`, `#ifdef X` or `#ifndef X`.
    fn condition(&mut self, fid: u32, d: &str, args: &[Tok], at: usize) -> R<bool> {
        match d {
            "ifdef" | "ifndef" => {
                let n = self.macro_name(fid, args, at, &format!("#{d}"))?;
                Ok(self.macros.contains_key(&n) == (d == "ifdef"))
            }
            _ => {
                let toks = self.resolve_defined(fid, args, at)?;
                let mut input: std::collections::VecDeque<PTok> = toks.into();
                let expanded = self.expand(&mut input, None, true, 0)?;
                expr::eval(&expanded, self.cpp)
                    .map(|v| v != 0)
                    .map_err(|m| self.diag(fid, at, DiagKind::Error, &m))
            }
        }
    }

    /// `#if`'s tokens with `defined X`, `defined(X)` and `__has_include(...)` replaced by 1 or 0.
    fn resolve_defined(&mut self, fid: u32, args: &[Tok], at: usize) -> R<Vec<PTok>> {
        let mut out = Vec::new();
        let mut i = 0;
        let bad = |p: &Pp, what: &str| {
            p.diag(
                fid,
                at,
                DiagKind::Error,
                &format!("malformed `{what}` in `#if`"),
            )
        };
        while i < args.len() {
            let t = &args[i];
            let value = match t.text.as_str() {
                "defined" => {
                    let paren = args.get(i + 1).is_some_and(|t| t.is("("));
                    let name = args
                        .get(i + 1 + usize::from(paren))
                        .filter(|t| t.kind == Kind::Ident);
                    let Some(name) = name else {
                        return Err(bad(self, "defined"));
                    };
                    if paren && !args.get(i + 3).is_some_and(|t| t.is(")")) {
                        return Err(bad(self, "defined"));
                    }
                    i += if paren { 4 } else { 2 };
                    self.macros.contains_key(&name.text)
                }
                "__has_include" => {
                    let close = (i..args.len()).find(|&k| args[k].is(")"));
                    let (Some(open), Some(close)) = (args.get(i + 1).filter(|t| t.is("(")), close)
                    else {
                        return Err(bad(self, "__has_include"));
                    };
                    let spelled = self.files[fid as usize]
                        .text
                        .get(open.end..args[close].start)
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    i = close + 1;
                    self.has_include(fid, &spelled)
                }
                _ => {
                    out.push(PTok::of(t, fid));
                    i += 1;
                    continue;
                }
            };
            let mut one = PTok::of(t, fid);
            one.kind = Kind::Number;
            one.text = if value { "1" } else { "0" }.to_string();
            out.push(one);
        }
        Ok(out)
    }

    fn has_include(&self, fid: u32, spelled: &str) -> bool {
        let (name, quoted) = match (spelled.strip_prefix('"'), spelled.strip_prefix('<')) {
            (Some(q), _) => (q.trim_end_matches('"'), true),
            (_, Some(a)) => (a.trim_end_matches('>'), false),
            _ => return false,
        };
        system::known(name).is_some() || self.find_header(fid, name, quoted).is_some()
    }
}
