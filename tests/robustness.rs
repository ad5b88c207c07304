//! No panic on any input: every fixture truncated at every 7th byte (and a few byte-level
//! corruptions) goes through the front end, and whatever parses through a bounded check;
//! every fixture truncated at every distinct place (every byte, with runs of equivalent cuts
//! reduced to representatives; `--ignored` runs literally every byte) goes through the front
//! end alone.

mod common;

use common::*;
use fensyn::checker::{self, CheckOptions, Limits};
use std::path::Path;

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

/// The front end for a fixture, by its extension (`Lang::from_path`).
fn parse_for(
    path: &Path,
) -> fn(&str, &str) -> Result<fensyn::ir::Program, fensyn::frontend::Diagnostic> {
    match fensyn::frontend::Lang::from_path(path) {
        fensyn::frontend::Lang::C => fensyn::frontend::parse_c,
        fensyn::frontend::Lang::Cpp => fensyn::frontend::parse_cpp,
    }
}

/// Every char boundary of `src`: the end of every prefix.
fn every_cut(src: &str) -> Vec<usize> {
    (0..=src.len())
        .filter(|&end| src.is_char_boundary(end))
        .collect()
}

const KEYWORDS: &[&str] = &[
    "_Atomic", "_Bool", "asm", "auto", "bool", "break", "case", "char", "const", "continue",
    "default", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline",
    "int", "long", "register", "restrict", "return", "short", "signed", "sizeof", "static",
    "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
];

/// The ends of the prefixes of `src` that can lex differently: every char boundary except
/// those strictly inside a run whose prefixes all look alike to the front end. Kept: every
/// token boundary; in a run of whitespace, only the cut after its first char; in a word
/// (identifier, keyword, number), the cut after its first char, before every `_` (so that
/// `atomic_load` in `atomic_load_explicit` and `pthread_mutex` are tried) and after every
/// prefix that is a keyword (`do` in `double`, `int` in `int64_t`); in a comment, the cuts
/// before it, after `/`, `//` and `//x`, and before and after its last char. This
/// keeps about a third of all cuts (the front end compiles its queries on every call, so
/// every byte of every fixture takes over a minute; see the ignored test below).
fn representative_cuts(src: &str) -> Vec<usize> {
    const OTHER: u8 = 0;
    const WORD: u8 = 1;
    const SPACE: u8 = 2;
    let b = src.as_bytes();
    let n = b.len();
    let class = |c: u8| {
        if c.is_ascii_alphanumeric() || c == b'_' {
            WORD
        } else if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            SPACE
        } else {
            OTHER
        }
    };
    // Cuts strictly inside comments (string and char literals are skipped over so that a
    // `//` in them does not count; an approximation is enough: it only chooses cuts).
    let mut in_comment = vec![false; n + 1];
    let mut i = 0;
    while i < n {
        match (b[i], b.get(i + 1)) {
            (b'/', Some(b'/')) | (b'/', Some(b'*')) => {
                let end = if b[i + 1] == b'/' {
                    src[i..].find('\n').map_or(n, |k| i + k)
                } else {
                    src[i + 2..].find("*/").map_or(n, |k| i + 2 + k + 2)
                };
                for inside in in_comment
                    .iter_mut()
                    .take(end.saturating_sub(1))
                    .skip(i + 4)
                {
                    *inside = true;
                }
                i = end;
            }
            (q @ (b'"' | b'\''), _) => {
                i += 1;
                while i < n && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    let mut cuts = Vec::new();
    let mut run_start = 0;
    for end in 0..=n {
        if end >= 1 && (end == 1 || class(b[end - 1]) != class(b[end - 2])) {
            run_start = end - 1;
        }
        if !src.is_char_boundary(end) || in_comment[end] {
            continue;
        }
        if end > 0 && end < n && end - run_start >= 2 && class(b[end - 1]) == class(b[end]) {
            match class(b[end]) {
                SPACE => continue,
                WORD if b[end] != b'_' && !KEYWORDS.contains(&&src[run_start..end]) => continue,
                _ => {}
            }
        }
        cuts.push(end);
    }
    cuts
}

/// Parses the prefixes of every fixture ending at `cuts(source)` with the front end alone
/// (split between threads): it never panics, a successful parse validates, and every
/// diagnostic has a position ≥ 1:1 and renders as `FILE:LINE:COL: ...` with the fixture's
/// name. A panic is caught and reported with the fixture and the cut. Returns the number of
/// prefixes.
fn all_prefixes_parse_or_are_refused(cuts: fn(&str) -> Vec<usize>) -> usize {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    let files: Vec<_> = fixtures()
        .into_iter()
        .map(|p| {
            let src = std::fs::read_to_string(&p).unwrap();
            (rel(&p), parse_for(&p), src)
        })
        .collect();
    assert!(!files.is_empty());
    // One job per (file, cut); threads take them in chunks.
    let jobs: Vec<(usize, usize)> = files
        .iter()
        .enumerate()
        .flat_map(|(i, (_, _, src))| cuts(src).into_iter().map(move |end| (i, end)))
        .collect();
    let next = AtomicUsize::new(0);
    let parsed = AtomicUsize::new(0);
    let rejected = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::<String>::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    const CHUNK: usize = 64;
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                if start >= jobs.len() {
                    break;
                }
                for &(i, end) in &jobs[start..(start + CHUNK).min(jobs.len())] {
                    let (name, parse, src) = &files[i];
                    let text = &src[..end];
                    let result =
                        catch_unwind(AssertUnwindSafe(|| parse(name, text).map(|p| p.validate())));
                    let problem = match result {
                        Err(_) => Some("panicked".to_string()),
                        Ok(Ok(Ok(()))) => {
                            parsed.fetch_add(1, Ordering::Relaxed);
                            None
                        }
                        Ok(Ok(Err(e))) => Some(format!("parsed but does not validate: {e}")),
                        Ok(Err(d)) => {
                            rejected.fetch_add(1, Ordering::Relaxed);
                            let msg = d.to_string();
                            let head = format!("{name}:{}:{}: ", d.line, d.column);
                            let ok = d.line >= 1
                                && d.column >= 1
                                && d.file == *name
                                && msg.starts_with(&head);
                            (!ok).then(|| format!("bad diagnostic: {msg}"))
                        }
                    };
                    if let Some(p) = problem {
                        let mut f = failures.lock().unwrap();
                        f.push(format!("{name} cut at byte {end}: {p}"));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    let parsed = parsed.into_inner();
    let rejected = rejected.into_inner();
    assert!(
        failures.is_empty(),
        "{} of {} prefixes fail:\n{}",
        failures.len(),
        jobs.len(),
        failures[..failures.len().min(50)].join("\n")
    );
    assert_eq!(parsed + rejected, jobs.len());
    assert!(
        parsed > 0 && rejected > 0,
        "parsed {parsed}, rejected {rejected}"
    );
    jobs.len()
}

#[test]
fn every_prefix_of_every_fixture_parses_or_is_refused() {
    let n = all_prefixes_parse_or_are_refused(representative_cuts);
    eprintln!("{n} prefixes parsed or refused");
    assert!(n > 10_000, "only {n} prefixes");
}

/// Literally every byte (char boundary) of every fixture: ~75,000 front-end runs, about
/// 75 s of CPU in release mode today (each `parse_c` call compiles its tree-sitter queries),
/// hence ignored by default: `cargo test --release --test robustness -- --ignored`.
#[test]
#[ignore]
fn every_byte_prefix_of_every_fixture_parses_or_is_refused() {
    all_prefixes_parse_or_are_refused(every_cut);
}

#[test]
fn representative_cuts_keep_token_boundaries() {
    let src = "int  x; // c\natomic_load_explicit(&x)";
    let cuts = representative_cuts(src);
    let at = |s: &str| src.find(s).unwrap();
    // Token boundaries and the cut after the first char of each run.
    for end in [
        0,
        1,
        3,
        4,
        5,
        6,
        7,
        8,
        at("atomic"),
        at("atomic") + 1,
        src.len(),
    ] {
        assert!(cuts.contains(&end), "{end} missing from {cuts:?}");
    }
    // Before each `_` of a word, and after a keyword prefix (`do` of `double`).
    for end in [at("_load"), at("_explicit")] {
        assert!(cuts.contains(&end), "{end} missing from {cuts:?}");
    }
    assert_eq!(representative_cuts("double"), [0, 1, 2, 6]);
    // A comment keeps its first four and last two cuts.
    assert_eq!(representative_cuts("/* abc */"), [0, 1, 2, 3, 8, 9]);
    // Not strictly inside whitespace, words or comments.
    for end in [2, at("omic"), at("xplicit") + 1] {
        assert!(!cuts.contains(&end), "{end} in {cuts:?}");
    }
    assert!(cuts.len() < every_cut(src).len());
    assert_eq!(every_cut("aé").len(), 3);
}
