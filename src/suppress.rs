//! Suppression comments: `// fensyn: ignore` and `// fensyn: ignore[race, assertion]`.
//!
//! A suppression comment silences the errors whose primary location (the statement an error is
//! reported at: the failing assertion, the later access of a race) is on its target line:
//!
//! * a comment on a line holding code targets that line (as ruff's `# noqa`);
//! * a comment alone on its line targets the next line that holds code, skipping blank lines,
//!   lines holding only comments (as eslint's `disable-next-line`) and lines holding only a
//!   fence statement (a fence has no error; `fix` may write one between the comment and the
//!   line it silences).
//!
//! Without a list every kind is silenced; `ignore[k1, k2]` silences only the kinds named
//! (`assertion`, `race`, `deadlock`, `liveness`, `misuse`, `memory`, `ub`). A kind that is not
//! one of these is an error at the comment (exit code 3), never ignored. Other comments that
//! start with `fensyn:` (the ones `fix` writes next to its fences) are not directives.
//!
//! The scan is lexical: comments inside string and character literals are not comments, and a
//! `/* ... */` comment may span lines (it targets like a comment on its first line).
//! **Invariant:** the scan depends on the text only, so a file gives the same suppressions
//! however it is reached (named, found in a directory, included as a header).

use crate::checker::Bug;
use crate::ir::Program;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The distinct errors a filter silenced: (kind, statement).
pub type Silenced = Arc<Mutex<BTreeSet<(&'static str, usize)>>>;

/// The error kinds a suppression may name (the SARIF rules, the JSON `kind`s).
pub const KINDS: &[&str] = &[
    "assertion",
    "race",
    "deadlock",
    "liveness",
    "misuse",
    "memory",
    "ub",
];

/// One suppression comment: the line it silences and the kinds (`None`: all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// 1-based line of the comment.
    pub comment_line: usize,
    /// 1-based line whose errors it silences.
    pub target: usize,
    pub kinds: Option<Vec<String>>,
}

/// A malformed suppression comment, at 1-based `line:column` of its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuppressError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A comment of the text: where it starts, its text (without `//`, `/*`, `*/`), and whether
/// code precedes it on its line.
struct Comment {
    line: usize,
    column: usize,
    text: String,
    after_code: bool,
}

/// The comments of `text` and, per line (index 0 = line 1), whether the line holds code.
fn lex(text: &str) -> (Vec<Comment>, Vec<bool>) {
    let b = text.as_bytes();
    let mut comments = Vec::new();
    let mut code = vec![false];
    let (mut i, mut line, mut line_start) = (0, 1usize, 0usize);
    let newline = |code: &mut Vec<bool>, line: &mut usize| {
        *line += 1;
        code.push(false);
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                newline(&mut code, &mut line);
                i += 1;
                line_start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |k| i + k);
                comments.push(Comment {
                    line,
                    column: i - line_start + 1,
                    text: text[i + 2..end].to_string(),
                    after_code: code[line - 1],
                });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k);
                comments.push(Comment {
                    line,
                    column: i - line_start + 1,
                    text: text[i + 2..end].to_string(),
                    after_code: code[line - 1],
                });
                for &c in &b[i..end] {
                    if c == b'\n' {
                        newline(&mut code, &mut line);
                    }
                }
                if let Some(k) = text[i..end].rfind('\n') {
                    line_start = i + k + 1;
                }
                i = (end + 2).min(b.len());
            }
            q @ (b'"' | b'\'') => {
                code[line - 1] = true;
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    code[line - 1] = true;
                }
                i += 1;
            }
        }
    }
    (comments, code)
}

/// The directive of a comment's text, if it is one: `Ok(None)` for a plain `ignore`,
/// `Ok(Some(kinds))` for `ignore[...]`; `Err` (the offset in the text and a message) for a
/// bad kind. `None`: not a suppression comment.
type Parsed = Option<Result<Option<Vec<String>>, (usize, String)>>;

fn parse(text: &str) -> Parsed {
    let rest = text.trim_start().strip_prefix("fensyn:")?.trim_start();
    let rest_at = text.len() - rest.len();
    let after = rest.strip_prefix("ignore")?;
    if after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-') {
        return None;
    }
    let Some(list) = after.strip_prefix('[') else {
        return Some(Ok(None));
    };
    let Some(close) = list.find(']') else {
        return Some(Err((rest_at, "`fensyn: ignore[` without its `]`".into())));
    };
    let mut kinds = Vec::new();
    for k in list[..close].split(',').map(str::trim) {
        if !KINDS.contains(&k) {
            let at = rest_at + "ignore[".len() + list.find(k).unwrap_or(0);
            return Some(Err((
                at,
                format!(
                    "`fensyn: ignore[...]` names an unknown error kind \"{k}\" (the kinds: {})",
                    KINDS.join(", ")
                ),
            )));
        }
        kinds.push(k.to_string());
    }
    Some(Ok(Some(kinds)))
}

/// Whether a line holds only a fence statement (and maybe a comment after it):
/// `atomic_thread_fence(...);`, `std::atomic_thread_fence(...);`, `__atomic_thread_fence(...);`.
fn fence_only(line: &str) -> bool {
    let code = line.split("/*").next().unwrap_or("");
    let code = code.split("//").next().unwrap_or("").trim();
    let call = code.trim_start_matches("std::");
    (call.starts_with("atomic_thread_fence(") || call.starts_with("__atomic_thread_fence("))
        && code.ends_with(");")
        && code.matches(';').count() == 1
}

/// The suppression comments of `text` (one file).
pub fn scan(text: &str) -> Result<Vec<Suppression>, SuppressError> {
    let (comments, code) = lex(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for c in comments {
        let kinds = match parse(&c.text) {
            None => continue,
            Some(Ok(k)) => k,
            Some(Err((at, message))) => {
                return Err(SuppressError {
                    line: c.line,
                    // The comment's opening `//` or `/*` is two columns.
                    column: c.column + 2 + at,
                    message,
                });
            }
        };
        // A comment on a line holding code (before or after it) targets that line.
        // Alone on its line: the next line holding code that is not only a fence, which
        // never has an error (so a fence `fix` writes between the comment and its line does
        // not take the comment's place).
        let target = if c.after_code || code[c.line - 1] {
            Some(c.line)
        } else {
            (c.line + 1..=code.len())
                .find(|&l| code[l - 1] && !lines.get(l - 1).is_some_and(|t| fence_only(t)))
        };
        if let Some(target) = target {
            out.push(Suppression {
                comment_line: c.line,
                target,
                kinds,
            });
        }
    }
    Ok(out)
}

/// The suppressions of a translation unit: per file (0: the main file, `k`: header `k - 1`).
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    files: Vec<Vec<Suppression>>,
}

impl Suppressions {
    /// Scans the main file's `src` and the headers of `prog`. An error names its file (the
    /// main file as `main`).
    pub fn of_unit(
        main: &str,
        src: &str,
        prog: &Program,
    ) -> Result<Suppressions, (String, SuppressError)> {
        let mut files = vec![scan(src).map_err(|e| (main.to_string(), e))?];
        for h in &prog.sources.headers {
            files.push(scan(&h.text).map_err(|e| (h.name.clone(), e))?);
        }
        Ok(Suppressions { files })
    }

    pub fn is_empty(&self) -> bool {
        self.files.iter().all(Vec::is_empty)
    }

    /// Whether bug `b` of `prog` is silenced: a suppression targets the line of its statement
    /// in its file and names its kind (or names none).
    pub fn silences(&self, prog: &Program, b: &Bug) -> bool {
        let span = prog.stmts[b.stmt].span;
        let file = prog.sources.file_index(&span);
        let kind = b.kind.as_str();
        self.files.get(file).is_some_and(|sups| {
            sups.iter().any(|s| {
                s.target == span.line
                    && s.kinds
                        .as_ref()
                        .is_none_or(|ks| ks.iter().any(|k| k == kind))
            })
        })
    }

    /// The kinds silenced at each statement of `prog` (`None`: every kind).
    fn by_statement(&self, prog: &Program) -> HashMap<usize, Option<Vec<String>>> {
        let mut out: HashMap<usize, Option<Vec<String>>> = HashMap::new();
        for (st, stmt) in prog.stmts.iter().enumerate() {
            let file = prog.sources.file_index(&stmt.span);
            let Some(sups) = self.files.get(file) else {
                continue;
            };
            for s in sups.iter().filter(|s| s.target == stmt.span.line) {
                let entry = out.entry(st).or_insert_with(|| Some(Vec::new()));
                match (&s.kinds, entry.as_mut()) {
                    (None, _) => *entry = None,
                    (Some(ks), Some(all)) => all.extend(ks.iter().cloned()),
                    (Some(_), None) => {}
                }
            }
        }
        out
    }

    /// The bug filter of the exploration ([`crate::checker::Limits::suppress`]) for `prog`,
    /// and the distinct errors it silenced (kind, statement), filled in as it runs. `None`
    /// when nothing is silenced.
    pub fn filter(&self, prog: &Program) -> Option<(crate::checker::Suppress, Silenced)> {
        let at = self.by_statement(prog);
        if at.is_empty() {
            return None;
        }
        let silenced: Silenced = Default::default();
        let record = silenced.clone();
        let f = move |b: &Bug| {
            let kind = b.kind.as_str();
            let hit = at
                .get(&b.stmt)
                .is_some_and(|ks| ks.as_ref().is_none_or(|ks| ks.iter().any(|k| k == kind)));
            if hit {
                if let Ok(mut set) = record.lock() {
                    set.insert((kind, b.stmt));
                }
            }
            hit
        };
        Some((crate::checker::Suppress(Arc::new(f)), silenced))
    }

    /// Removes the silenced bugs of each graph of `buggy` and the graphs left without bugs;
    /// returns the distinct errors silenced (by kind and statement).
    pub fn apply(
        &self,
        prog: &Program,
        buggy: &mut Vec<crate::checker::ExecutionGraph>,
    ) -> BTreeSet<(&'static str, usize)> {
        let mut silenced = BTreeSet::new();
        for g in buggy.iter_mut() {
            g.bugs.retain(|b| {
                let s = self.silences(prog, b);
                if s {
                    silenced.insert((b.kind.as_str(), b.stmt));
                }
                !s
            });
        }
        buggy.retain(|g| !g.bugs.is_empty());
        silenced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<(usize, Option<Vec<String>>)> {
        scan(text)
            .unwrap()
            .into_iter()
            .map(|s| (s.target, s.kinds))
            .collect()
    }

    #[test]
    fn a_lone_comment_skips_fence_lines() {
        let text = "// fensyn: ignore[race]\n\
                    \tatomic_thread_fence(memory_order_acquire); /* fensyn: read ready */\n\
                    \thits++;\n\
                    // fensyn: ignore\n\
                    std::atomic_thread_fence(std::memory_order_seq_cst); f();\n";
        assert_eq!(
            targets(text),
            vec![(3, Some(vec!["race".to_string()])), (5, None)]
        );
        assert!(fence_only(
            "  __atomic_thread_fence(__ATOMIC_RELEASE); // x"
        ));
        assert!(!fence_only(
            "atomic_thread_fence(memory_order_release); x++;"
        ));
    }

    #[test]
    fn a_trailing_comment_targets_its_line_a_lone_one_the_next_code_line() {
        let text = "int x;\n\
                    x = 1; // fensyn: ignore\n\
                    // fensyn: ignore[race]\n\
                    \n\
                    // why: a benign counter\n\
                    y++;\n\
                    /* fensyn: ignore[race, assertion] */ z = 2;\n";
        assert_eq!(
            targets(text),
            [
                (2, None),
                (6, Some(vec!["race".to_string()])),
                (7, Some(vec!["race".to_string(), "assertion".to_string()])),
            ]
        );
    }

    #[test]
    fn strings_and_fence_comments_are_not_directives() {
        let text = "char *s = \"// fensyn: ignore\";\n\
                    atomic_thread_fence(memory_order_release); /* fensyn: publish data before flag */\n\
                    x = 1; // fensyn: ignored\n";
        assert!(targets(text).is_empty());
    }

    #[test]
    fn an_unknown_kind_is_an_error_at_its_column() {
        let e = scan("x = 1;\ny = 2; // fensyn: ignore[rase]\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 26), "{e:?}");
        assert!(e.message.contains("\"rase\""), "{e:?}");
        assert!(scan("x; // fensyn: ignore[race\n").is_err());
    }

    #[test]
    fn block_comments_count_their_lines() {
        let text = "/* one\n   two */\n// fensyn: ignore\nx = 1;\n";
        assert_eq!(targets(text), [(4, None)]);
    }
}
