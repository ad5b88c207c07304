//! No panic on any input: every fixture truncated at every 7th byte (and a few byte-level
//! corruptions) goes through the front end, and whatever parses through a bounded check.

mod common;

use common::*;
use fensyn::checker::{self, CheckOptions, Limits};

#[test]
fn truncated_fixtures_never_panic() {
    let mut parsed = 0;
    let mut rejected = 0;
    for path in fixtures() {
        let src = std::fs::read_to_string(&path).unwrap();
        let lang = fensyn::ir::Lang::from_path(&path);
        let bytes = src.as_bytes();
        let mut cut = 0;
        while cut <= bytes.len() {
            // Truncate at a char boundary at or before `cut`.
            let mut end = cut;
            while !src.is_char_boundary(end) {
                end -= 1;
            }
            let text = &src[..end];
            match fensyn::frontend::parse("t.c", text, lang) {
                Ok(prog) => {
                    parsed += 1;
                    prog.validate().unwrap();
                    let opts = CheckOptions {
                        limits: Limits {
                            max_executions: Some(50),
                            ..Limits::default()
                        },
                        ..CheckOptions::default()
                    };
                    let _ = checker::check(&prog, &opts);
                }
                Err(d) => {
                    rejected += 1;
                    let msg = d.to_string();
                    assert!(msg.starts_with("t.c:"), "{msg}");
                    assert!(d.line >= 1 && d.column >= 1, "{msg}");
                }
            }
            cut += 7;
        }
    }
    assert!(
        parsed > 0 && rejected > 0,
        "parsed {parsed}, rejected {rejected}"
    );
}

#[test]
fn corrupted_bytes_never_panic() {
    for path in fixtures() {
        let src = std::fs::read_to_string(&path).unwrap();
        let lang = fensyn::ir::Lang::from_path(&path);
        for (i, repl) in [(0usize, "}"), (1, "("), (2, "/*"), (3, "\"")]
            .iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            let at = (i * 131) % src.len().max(1);
            let mut at = at;
            while !src.is_char_boundary(at) {
                at -= 1;
            }
            let text = format!("{}{}{}", &src[..at], repl.1, &src[at..]);
            let _ = fensyn::frontend::parse("c.c", &text, lang);
        }
    }
}
