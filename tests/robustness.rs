//! No panic on any input: every fixture truncated at every 7th byte (and a few byte-level
//! corruptions) goes through the front end, and whatever parses through a bounded check;
//! every fixture truncated at every byte goes through the front end alone.

mod common;

use common::*;
use fensyn::checker::{self, CheckOptions, Limits};
use std::path::Path;

#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
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
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
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

/// Parses the prefixes of every fixture ending at `cuts(source)` with the front end alone
/// (split between threads): it never panics, a successful parse validates, and every
/// diagnostic has a position ≥ 1:1 and renders as `FILE:LINE:COL: ...` with the fixture's
/// name (or the name of a header it includes). A panic is caught and reported with the fixture and the cut. Returns the number of
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
                            let head = format!("{}:{}:{}: ", d.file, d.line, d.column);
                            let ok = d.line >= 1
                                && d.column >= 1
                                // A diagnostic in a header names the header.
                                && (d.file == *name || std::path::Path::new(&d.file).is_file())
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

/// Literally every byte (char boundary) of every fixture: about 90,000 front-end runs, a few
/// seconds in release mode (the queries are compiled once per process).
#[test]
fn every_byte_prefix_of_every_fixture_parses_or_is_refused() {
    all_prefixes_parse_or_are_refused(every_cut);
}
