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
//! The comments and their targets are found by [`crate::frontend::comments`] (lexical: the
//! same suppressions however a file is reached), which also reads `fensyn: unroll N`.

use crate::checker::Bug;
use crate::frontend::comments::{directive_args, directives};
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

/// The directive of a comment's text, if it is one: `Ok(None)` for a plain `ignore`,
/// `Ok(Some(kinds))` for `ignore[...]`; `Err` (the offset in the text and a message) for a
/// bad kind. `None`: not a suppression comment.
type Parsed = Option<Result<Option<Vec<String>>, (usize, String)>>;

fn parse(text: &str) -> Parsed {
    let (after, after_at) = directive_args(text, "ignore")?;
    let Some(list) = after.strip_prefix('[') else {
        return Some(Ok(None));
    };
    let rest_at = after_at - "ignore".len();
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

/// The suppression comments of `text` (one file).
pub fn scan(text: &str) -> Result<Vec<Suppression>, SuppressError> {
    let mut out = Vec::new();
    for d in directives(text) {
        let kinds = match parse(&d.text) {
            None => continue,
            Some(Ok(k)) => k,
            Some(Err((at, message))) => {
                return Err(SuppressError {
                    line: d.line,
                    // The comment's opening `//` or `/*` is two columns.
                    column: d.column + 2 + at,
                    message,
                });
            }
        };
        if let Some(target) = d.target {
            out.push(Suppression {
                comment_line: d.line,
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
