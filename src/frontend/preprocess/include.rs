//! `#include`: finding a header, include guards, `#pragma once`, cycles.

use super::lex::{self, Kind, Tok};
use super::{normalize, system, DiagKind, Macro, MacroKind, Pp, SourceFile, MAX_INCLUDE_DEPTH, R};
use std::path::{Path, PathBuf};
use std::rc::Rc;

impl Pp<'_> {
    /// `#include "name"` / `<name>` (or a macro expanding to one) at `line` of file `fid`.
    pub(super) fn include(&mut self, fid: u32, line: &[Tok], pos: &mut usize) -> R<()> {
        let at = line[0].start;
        let (name, quoted) = self.header_name(fid, &line[2..], at)?;
        // The header's text starts on the line after the directive.
        let text = &self.files[fid as usize].text;
        let eol = text
            .get(*pos..)
            .and_then(|r| r.find('\n'))
            .map_or(text.len(), |k| *pos + k + 1);
        self.copy_to(fid, pos, eol);
        let found = if quoted || system::known(&name).is_none() {
            self.find_header(fid, &name, quoted)
        } else {
            None
        };
        let Some((path, text)) = found else {
            if let Some(macros) = system::known(&name) {
                if let Err(k) = self.system_seen.binary_search(&name) {
                    self.system_seen.insert(k, name.clone());
                }
                for m in macros {
                    self.macros.entry(m.to_string()).or_insert(Macro {
                        kind: MacroKind::PassThrough,
                        params: None,
                        variadic: false,
                        body: Vec::new(),
                        def: None,
                    });
                }
                return self.system_definitions(&name);
            }
            if system::dialect(&name) {
                // Quoted or not (CDSChecker passes its include directory with -I: the thesis's
                // mpmc-queue writes `<librace.h>`). librace.h includes <stdint.h> (its
                // accesses take `uint32_t`): the tests use INTPTR_MAX with no other include.
                // unrelacy.h has macros of its own (`$`, `mo_relaxed`, `ASSERT`).
                self.system_definitions(&name)?;
                return self.system_definitions("stdint.h");
            }
            let msg = if quoted {
                format!(
                    "cannot find header \"{name}\" (searched the including file's directory{})",
                    self.dirs_said()
                )
            } else {
                format!(
                    "unknown system header <{name}> (fensyn knows {}; a header of yours is found through -I{})",
                    system::names(),
                    self.dirs_said()
                )
            };
            return Err(self.diag(fid, at, DiagKind::Error, &msg));
        };
        if self.once.contains(&path) {
            return Ok(());
        }
        if let Some(g) = self.guards.get(&path) {
            if self.macros.contains_key(g) {
                return Ok(());
            }
        }
        if let Some(k) = self
            .stack
            .iter()
            .position(|&f| self.files[f as usize].path == path)
        {
            let chain: Vec<&str> = self.stack[k..]
                .iter()
                .map(|&f| self.files[f as usize].name.as_str())
                .chain([self.files[self.stack[k] as usize].name.as_str()])
                .collect();
            let msg = format!("include cycle: {}", chain.join(" -> "));
            return Err(self.diag(fid, at, DiagKind::Error, &msg));
        }
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(self.diag(
                fid,
                at,
                DiagKind::Error,
                &format!("includes nested deeper than {MAX_INCLUDE_DEPTH}"),
            ));
        }
        let hid = self.read_header(path, text)?;
        self.stack.push(hid);
        self.run_file(hid)?;
        self.stack.pop();
        let seen = &self.system_seen;
        self.files[hid as usize]
            .system_after
            .get_or_insert_with(|| seen.clone());
        self.end_line_after(hid);
        Ok(())
    }

    /// After the text of included file `fid`: a line break if it did not end with one (the
    /// includer's next line starts on a line of its own), mapped to the file's end.
    fn end_line_after(&mut self, fid: u32) {
        if !self.out.ends_with('\n') {
            let end = self.files[fid as usize].text.len();
            self.push_seg(fid, end, 0);
            self.out.push('\n');
        }
    }

    /// The macros fensyn defines for system header `name` (read once, as the file `<name>`),
    /// and the names it refuses.
    fn system_definitions(&mut self, name: &str) -> R<()> {
        for (n, why) in system::refused(name) {
            self.macros.entry(n.to_string()).or_insert(Macro {
                kind: MacroKind::Refused(why),
                params: None,
                variadic: false,
                body: Vec::new(),
                def: None,
            });
        }
        let Some(text) = system::definitions(name) else {
            return Ok(());
        };
        let path = PathBuf::from(format!("<{name}>"));
        if self.files.iter().any(|f| f.builtin && f.path == path) {
            return Ok(());
        }
        let mut file = SourceFile::new(path.display().to_string(), path, text.to_string());
        file.builtin = true;
        let toks = lex::lex(&file.text).map_err(|e| self.unterminated(&file, e.0))?;
        self.files.push(file);
        let fid = self.files.len() as u32 - 1;
        let mut i = 0;
        while i < toks.len() {
            let end = (i + 1..toks.len())
                .find(|&k| toks[k].bol)
                .unwrap_or(toks.len());
            // Only `#define` lines (see `system.rs`); the user's definition of a name stays.
            let args = &toks[i + 2..end];
            if !args
                .first()
                .is_some_and(|n| self.macros.contains_key(&n.text))
            {
                self.define(fid, args, toks[i].start)?;
            }
            i = end;
        }
        self.toks.push(Rc::new(toks));
        Ok(())
    }

    /// ` -I dirs` for messages.
    fn dirs_said(&self) -> String {
        let dirs: Vec<String> = self
            .opts
            .include_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        if dirs.is_empty() {
            String::new()
        } else {
            format!(" and -I {}", dirs.join(", "))
        }
    }

    /// The header an `#include` names, and whether it was quoted.
    fn header_name(&mut self, fid: u32, args: &[Tok], at: usize) -> R<(String, bool)> {
        let text = &self.files[fid as usize].text;
        let spelled = match (args.first(), args.last()) {
            (Some(a), Some(b)) if a.kind == Kind::Str || a.is("<") => {
                text.get(a.start..b.end).unwrap_or("").to_string()
            }
            (Some(_), Some(_)) => {
                // `#include HEADER`: the macro's expansion names the header.
                let toks: Vec<_> = args.iter().map(|t| super::PTok::of(t, fid)).collect();
                let mut input = toks.into();
                let e = self.expand(&mut input, None, false, 0)?;
                e.iter()
                    .map(|t| t.text.as_str())
                    .collect::<Vec<_>>()
                    .join("")
            }
            _ => String::new(),
        };
        let spelled = spelled.trim();
        if let Some(q) = spelled.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            return Ok((q.to_string(), true));
        }
        if let Some(a) = spelled.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            return Ok((a.trim().to_string(), false));
        }
        Err(self.diag(
            fid,
            at,
            DiagKind::Error,
            "`#include` expects \"FILE\" or <FILE>",
        ))
    }

    /// The path and text of header `name`: next to file `fid` (quoted only), then in the
    /// `-I` directories in order.
    pub(super) fn find_header(
        &self,
        fid: u32,
        name: &str,
        quoted: bool,
    ) -> Option<(PathBuf, String)> {
        let here = self.files[fid as usize]
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let candidates = quoted
            .then(|| here.join(name))
            .into_iter()
            .chain(self.opts.include_dirs.iter().map(|d| d.join(name)));
        for c in candidates {
            let c = normalize(&c);
            if let Some(f) = self.files.iter().find(|f| f.path == c) {
                return Some((c, f.text.clone()));
            }
            if let Ok(text) = self.loader.load(&c) {
                return Some((c, text));
            }
        }
        None
    }

    /// Another source file of the program (`PpOptions::link`), read before the main file's
    /// text as if the main file included it first: its functions and globals come before the
    /// main file's (which may call them), its macros stay defined, and a header it includes is
    /// not read again by the units after it. Errors are reported at the main file's start.
    pub(super) fn link_unit(&mut self, path: &Path) -> R<()> {
        let path = normalize(path);
        if path == self.files[0].path {
            let msg = format!("--link {} names the file being checked", path.display());
            return Err(self.diag(0, 0, DiagKind::Error, &msg));
        }
        if self.files.iter().any(|f| f.path == path) {
            return Ok(()); // linked twice
        }
        let text = self.loader.load(&path).map_err(|e| {
            let msg = format!("cannot read linked file {}: {e}", path.display());
            self.diag(0, 0, DiagKind::Error, &msg)
        })?;
        let first_new = self.files.len();
        let fid = self.read_header(path, text)?;
        self.stack.push(fid);
        self.run_file(fid)?;
        self.stack.pop();
        // A header this unit read is the same definitions in every unit: read once per
        // program, as if guarded (types and `static inline` functions are not defined twice).
        let read: Vec<PathBuf> = self.files[first_new..]
            .iter()
            .filter(|f| !f.builtin)
            .map(|f| f.path.clone())
            .collect();
        self.once.extend(read);
        self.end_line_after(fid);
        Ok(())
    }

    /// Adds a header to the files (once per path), with its tokens and include guard.
    fn read_header(&mut self, path: PathBuf, text: String) -> R<u32> {
        if let Some(k) = self.files.iter().position(|f| f.path == path) {
            return Ok(k as u32);
        }
        let mut file = SourceFile::new(path.display().to_string(), path.clone(), text);
        file.system_before = self.system_seen.clone();
        let toks = lex::lex(&file.text).map_err(|e| self.unterminated(&file, e.0))?;
        if let Some(g) = guard(&toks) {
            self.guards.insert(path, g);
        }
        self.files.push(file);
        self.toks.push(Rc::new(toks));
        Ok(self.files.len() as u32 - 1)
    }
}

/// The include-guard macro of a file whose tokens are `#ifndef G` `#define G` ... `#endif`
/// with nothing outside the group.
fn guard(toks: &[Tok]) -> Option<String> {
    let directive = |i: usize| {
        toks.get(i)
            .filter(|t| t.bol && t.is("#"))
            .and_then(|_| toks.get(i + 1))
            .map(|t| t.text.as_str())
    };
    if directive(0) != Some("ifndef") {
        return None;
    }
    let g = toks.get(2).filter(|t| t.kind == Kind::Ident)?;
    let mut depth = 0usize;
    for i in 0..toks.len() {
        match directive(i) {
            Some("if" | "ifdef" | "ifndef") => depth += 1,
            Some("endif") => {
                depth -= 1;
                if depth == 0 {
                    let last_line = toks[i + 2..].iter().all(|t| !t.bol);
                    return last_line.then(|| g.text.clone());
                }
            }
            _ => {}
        }
    }
    None
}
