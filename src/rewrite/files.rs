//! The files of a translation unit as the rewriter sees them, and the patch of several files.
//!
//! A program read through `#include` has its spans numbered across files ([`Sources`]): the
//! main file's are byte ranges of it, header `k`'s are `base + offset`. The rewriter works on
//! one file at a time: a [`Frame`] is a file's text and base, and every edit it makes is a byte
//! range of *that file's* text (**invariant:** edits are per file; offsets are relative to
//! that file). A fence lands in the file that holds its statement; the system headers fensyn
//! knows are never read, so no span points into them and they never get edits.
//!
//! File indices: 0 is the main file, `k` is header `k - 1` of [`Sources::headers`] (the order
//! in which the preprocessor first read them, i.e. include order). The patch
//! ([`unified_diff`]) has one section per changed file in that order: the main file first,
//! then the headers in include order.

use super::Edit;
use crate::ir::{MemOrder, Program, Sources, Span};
use crate::trace::Site;
use std::path::{Path, PathBuf};

/// One file of the unit: its text and the offset its spans start at.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// 0 for the main file, `k` for header `k - 1`.
    pub index: usize,
    pub text: &'a str,
    pub base: usize,
    /// The system headers the unit had included when this file was read (the main file:
    /// none).
    pub system_before: &'a [String],
}

impl Frame<'_> {
    /// `span` (of this file) as a span of this file's text.
    pub fn local(&self, span: Span) -> Span {
        Span {
            start: span.start.saturating_sub(self.base),
            end: span.end.saturating_sub(self.base),
            ..span
        }
    }
}

/// Every file of `prog`'s unit, the main file's text being `src`.
pub fn frames<'a>(src: &'a str, prog: &'a Program) -> Vec<Frame<'a>> {
    let mut v = vec![Frame {
        index: 0,
        text: src,
        base: 0,
        system_before: &[],
    }];
    v.extend(prog.sources.headers.iter().enumerate().map(|(k, h)| Frame {
        index: k + 1,
        text: h.text.as_str(),
        base: h.base,
        system_before: &h.system_before,
    }));
    v
}

/// The unit's files with their trees (parsed as the front end parses, offsets kept).
pub struct Parsed<'a> {
    pub frames: Vec<Frame<'a>>,
    trees: Vec<Option<tree_sitter::Tree>>,
}

impl<'a> Parsed<'a> {
    pub fn new(src: &'a str, prog: &'a Program) -> Parsed<'a> {
        let frames = frames(src, prog);
        let trees = frames
            .iter()
            .map(|f| super::parse_tree(f.text, prog.lang))
            .collect();
        Parsed { frames, trees }
    }

    /// The tree of file `k`.
    pub fn root(&self, k: usize) -> Option<tree_sitter::Node<'_>> {
        self.trees.get(k)?.as_ref().map(|t| t.root_node())
    }

    /// The last component of file `k`'s name (`ring.h`), for comments.
    pub fn short_name(&self, prog: &Program, k: usize) -> String {
        let main = "the main file";
        let name = prog.sources.name_of(k, main);
        name.rsplit(['/', '\\']).next().unwrap_or(name).to_string()
    }

    /// The function definition around the unit offset `at` (a span offset): its start (a
    /// unit offset) and its name.
    pub fn function_at(&self, prog: &Program, at: usize) -> Option<(usize, String)> {
        let k = prog.sources.file_index(&Span {
            start: at,
            end: at,
            line: 0,
            column: 0,
        });
        let frame = self.frames.get(k)?;
        let (start, name) = super::reason::enclosing_function(
            frame.text,
            self.root(k)?,
            at.checked_sub(frame.base)?,
        )?;
        Some((frame.base + start, name))
    }

    /// The spelling of fences in file `k`: its own, or, when it has no fence, atomic operation
    /// or memory order of its own, builtins exactly when the whole unit's atomics are
    /// ([`super::Spelling::detect_unit`]).
    fn spelling(&self, prog: &Program, k: usize) -> super::Spelling {
        let files: Vec<(&str, Option<tree_sitter::Node>)> = self
            .frames
            .iter()
            .map(|f| (f.text, self.root(f.index)))
            .collect();
        super::Spelling::detect_unit(&files, k, prog.lang)
    }

    /// The edits of `fences` grouped by the file that holds each fence's statement (with
    /// `notes[i]` as fence `i`'s comment), and where each fence lands (in the order given).
    pub fn build(
        &self,
        prog: &Program,
        fences: &[(Site, MemOrder)],
        notes: &[Option<String>],
    ) -> Result<(Vec<FileEdits>, Vec<super::Position>), super::RewriteError> {
        let file_of = |site: Site| {
            super::reason::site_offset(prog, site).map_or(0, |at| {
                prog.sources.file_index(&Span {
                    start: at,
                    end: at,
                    line: 0,
                    column: 0,
                })
            })
        };
        let mut positions = vec![None; fences.len()];
        let mut out = Vec::new();
        for frame in &self.frames {
            let mine: Vec<usize> = (0..fences.len())
                .filter(|&i| file_of(fences[i].0) == frame.index)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let chosen: Vec<(Site, MemOrder)> = mine.iter().map(|&i| fences[i]).collect();
            let own: Vec<Option<&str>> = mine
                .iter()
                .map(|&i| notes.get(i).and_then(|n| n.as_deref()))
                .collect();
            let spelling = self.spelling(prog, frame.index);
            let root = self.root(frame.index);
            let (edits, pos) = super::build(frame, prog, (root, &spelling), &chosen, &own)?;
            for (&i, p) in mine.iter().zip(pos) {
                positions[i] = Some(p);
            }
            out.push(FileEdits {
                file: frame.index,
                edits,
            });
        }
        let positions = positions
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        Ok((out, positions))
    }
}

/// The edits of one file (offsets of that file's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdits {
    pub file: usize,
    pub edits: Vec<Edit>,
}

/// One rewritten file: its new text and the edits that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRewrite {
    pub file: usize,
    pub text: String,
    pub edits: Vec<Edit>,
}

/// Applies each file's edits to its text; files without edits are left out.
pub fn apply_all(
    src: &str,
    prog: &Program,
    edits: &[FileEdits],
) -> Result<Vec<FileRewrite>, super::RewriteError> {
    let frames = frames(src, prog);
    let mut out = Vec::new();
    for fe in edits.iter().filter(|fe| !fe.edits.is_empty()) {
        let Some(frame) = frames.get(fe.file) else {
            continue;
        };
        out.push(FileRewrite {
            file: fe.file,
            text: super::apply(frame.text, &fe.edits)?,
            edits: fe.edits.clone(),
        });
    }
    out.sort_by_key(|f| f.file);
    Ok(out)
}

/// The rewritten text of the main file (`src` when it is unchanged).
pub fn main_text<'a>(src: &'a str, files: &'a [FileRewrite]) -> &'a str {
    files
        .iter()
        .find(|f| f.file == 0)
        .map_or(src, |f| f.text.as_str())
}

/// The rewritten headers, by the path they were read from (an overlay for re-parsing).
pub fn header_texts(prog: &Program, files: &[FileRewrite]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .filter_map(|f| {
            let h = prog.sources.headers.get(f.file.checked_sub(1)?)?;
            Some((h.path.clone(), f.text.clone()))
        })
        .collect()
}

/// The name of file `index` as messages show it (`main`: the main file's).
pub fn name<'a>(sources: &'a Sources, main: &'a str, index: usize) -> &'a str {
    sources.name_of(index, main)
}

/// The path a patch names for a file called `name` (as messages show it), given the main
/// file's name `main` and the working directory `cwd`: relative paths stay as they are; when
/// the main file is named relative, an absolute header path under `cwd` is made relative to
/// it (else it keeps its absolute path, rooted at `/`); when the main file is absolute, a
/// relative header path is joined to `cwd`. `a/` and `b/` then prefix it without its leading
/// `/` or `./` ([`super::unified_diff`]), so every section is relative to the same root.
pub fn patch_path(name: &str, main: &str, cwd: Option<&Path>) -> String {
    let p = Path::new(name);
    let main_abs = Path::new(main).is_absolute();
    let shown = match (main_abs, p.is_absolute(), cwd) {
        (false, true, Some(cwd)) => p
            .strip_prefix(cwd)
            .map_or(p.to_path_buf(), Path::to_path_buf),
        (true, false, Some(cwd)) => cwd.join(p),
        _ => p.to_path_buf(),
    };
    shown.to_string_lossy().into_owned()
}

/// One patch of every changed file: a `--- a/PATH` / `+++ b/PATH` section per file, the main
/// file first, then the headers in include order ([`patch_path`] names them). `git apply`
/// and `patch -p1` take it as is.
pub fn unified_diff(
    src: &str,
    main: &str,
    prog: &Program,
    files: &[FileRewrite],
    cwd: Option<&Path>,
) -> String {
    let frames = frames(src, prog);
    let mut sorted: Vec<&FileRewrite> = files.iter().collect();
    sorted.sort_by_key(|f| f.file);
    let mut out = String::new();
    for f in sorted {
        let Some(frame) = frames.get(f.file) else {
            continue;
        };
        let path = patch_path(name(&prog.sources, main, f.file), main, cwd);
        out.push_str(&super::unified_diff(frame.text, &f.text, &path));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_paths_share_one_root() {
        let cwd = Path::new("/work/p");
        assert_eq!(patch_path("inc/a.h", "src/m.c", Some(cwd)), "inc/a.h");
        assert_eq!(
            patch_path("/work/p/inc/a.h", "src/m.c", Some(cwd)),
            "inc/a.h"
        );
        assert_eq!(patch_path("/usr/x/a.h", "src/m.c", Some(cwd)), "/usr/x/a.h");
        assert_eq!(
            patch_path("inc/a.h", "/work/p/m.c", Some(cwd)),
            "/work/p/inc/a.h"
        );
        assert_eq!(patch_path("/i/a.h", "/work/p/m.c", Some(cwd)), "/i/a.h");
    }
}
