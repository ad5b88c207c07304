//! `check` and `fensyn: ignore` comments: reads them (a malformed one is an input error at its
//! position), hands their filter to the exploration, and says on stderr how many errors they
//! silenced and where, so that a silenced bug never goes unmentioned.

use crate::checker::Suppress;
use crate::ir::Program;
use crate::suppress::{Silenced, Suppressions};
use std::io::Write;

/// The suppression comments of one translation unit, ready for an exploration.
pub struct Silencing {
    filter: Option<(Suppress, Silenced)>,
}

/// Scans the unit (`name`, text `src`) for suppression comments; a malformed one is reported
/// on `err` at its `file:line:column` and gives exit code 3.
pub fn load(name: &str, src: &str, prog: &Program, err: &mut dyn Write) -> Result<Silencing, i32> {
    match Suppressions::of_unit(name, src, prog) {
        Ok(s) => Ok(Silencing {
            filter: s.filter(prog),
        }),
        Err((file, e)) => {
            let _ = writeln!(err, "{file}:{}:{}: error: {}", e.line, e.column, e.message);
            Err(super::EXIT_INPUT)
        }
    }
}

impl Silencing {
    /// The filter for [`crate::checker::Limits::suppress`].
    pub fn filter(&self) -> Option<Suppress> {
        self.filter.as_ref().map(|(f, _)| f.clone())
    }

    /// After the exploration: a note naming the errors silenced (kind and position), if any.
    pub fn note(&self, name: &str, prog: &Program, err: &mut dyn Write) {
        let Some((_, silenced)) = &self.filter else {
            return;
        };
        let Ok(set) = silenced.lock() else { return };
        if set.is_empty() {
            return;
        }
        let mut at: Vec<(usize, usize, String)> = set
            .iter()
            .map(|&(kind, st)| {
                let span = prog.stmts[st].span;
                let file = prog.sources.name_of(prog.sources.file_index(&span), name);
                let shown = if file == name {
                    String::new()
                } else {
                    format!("{file}:")
                };
                (
                    span.line,
                    span.column,
                    format!("{kind} at {shown}{}:{}", span.line, span.column),
                )
            })
            .collect();
        at.sort();
        let n = at.len();
        let list: Vec<String> = at.into_iter().map(|(_, _, s)| s).collect();
        let _ = writeln!(
            err,
            "{name}: note: {n} error{} silenced by `fensyn: ignore` comments (not reported, not \
             counted as buggy): {}",
            if n == 1 { "" } else { "s" },
            list.join(", ")
        );
    }
}
