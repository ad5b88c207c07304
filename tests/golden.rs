//! Rewriting, end to end: the diff `fensyn fix` prints for small dedicated inputs
//! (`tests/golden/NAME.c|cpp`) against its golden file `tests/golden/NAME.diff`, and every
//! expected diff — these and the fixtures' `fixtures/**/NAME.fixed.diff` — applied with
//! `git apply` and with `patch -p1` to a copy of its file.
//!
//! Regenerate the golden diffs with `FENSYN_BLESS=1 cargo test --release --test suite golden::` (or
//! `UPDATE_SNAPSHOTS=1`, which also regenerates the fixtures' diffs in `tests/fixtures.rs`).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bless() -> bool {
    std::env::var_os("FENSYN_BLESS").is_some() || std::env::var_os("UPDATE_SNAPSHOTS").is_some()
}

/// The golden inputs, sorted.
fn golden_inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/golden"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c" || e == "cpp"))
        .collect();
    v.sort();
    v
}

/// Every expected diff: the golden ones and the fixtures' snapshots.
fn expected_diffs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = golden_inputs()
        .iter()
        .map(|p| p.with_extension("diff"))
        .collect();
    v.extend(
        fixtures()
            .iter()
            .map(|p| p.with_extension("fixed.diff"))
            .filter(|p| p.exists()),
    );
    v
}

fn read(p: &Path) -> String {
    String::from_utf8(std::fs::read(p).unwrap()).unwrap()
}

/// The added lines of a diff, without their `+`.
fn added(diff: &str) -> Vec<&str> {
    diff.split_inclusive('\n')
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect()
}

#[test]
fn golden_diffs_match() {
    let mut problems = Vec::new();
    let inputs = golden_inputs();
    assert!(inputs.len() >= 10, "golden inputs: {inputs:?}");
    for input in inputs {
        let name = rel(&input);
        let out = fensyn(&["fix", &name]);
        if out.status.code() != Some(1) {
            problems.push(format!(
                "{name}: fix exit {:?}: {}",
                out.status.code(),
                stderr(&out)
            ));
            continue;
        }
        let diff = stdout(&out);
        let golden = input.with_extension("diff");
        if bless() {
            std::fs::write(&golden, &diff).unwrap();
        } else if !golden.exists() {
            problems.push(format!("{name}: no {} (FENSYN_BLESS=1)", rel(&golden)));
        } else if read(&golden) != diff {
            problems.push(format!(
                "{name}: the diff differs from {}:\n--- expected\n{}\n--- got\n{diff}",
                rel(&golden),
                read(&golden)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What each golden input is about, checked on its diff (not only by the snapshot).
#[test]
fn golden_diffs_show_what_they_are_about() {
    let diff = |name: &str| read(&root().join("tests/golden").join(name));
    let fences = |d: &str| -> Vec<String> {
        added(d)
            .into_iter()
            .filter(|l| l.contains("atomic_thread_fence"))
            .map(String::from)
            .collect()
    };

    let d = diff("tabs.diff");
    assert!(!fences(&d).is_empty());
    for l in fences(&d) {
        assert!(l.starts_with('\t') && !l.starts_with("\t "), "{l:?}");
    }

    let d = diff("crlf.diff");
    assert!(!added(&d).is_empty());
    for l in added(&d) {
        assert!(l.ends_with("\r\n"), "added line without CRLF: {l:?}");
    }

    let d = diff("no_newline.diff");
    assert!(d.contains("\n\\ No newline at end of file\n"), "{d}");

    let d = diff("missing_include.diff");
    assert_eq!(added(&d)[0], "#include <stdatomic.h>\n", "{d}");
    assert!(
        d.contains("\n #include <pthread.h>\n+#include <stdatomic.h>\n"),
        "{d}"
    );
    let d = diff("missing_include_cpp.diff");
    assert!(
        d.contains("\n #include <thread>\n+#include <atomic>\n"),
        "{d}"
    );
    // A file that includes the header gets no second one.
    for name in ["tabs.diff", "using_std.diff", "strengthen.diff"] {
        assert!(!diff(name).contains("+#include"), "{name}");
    }

    let d = diff("using_std.diff");
    assert!(!fences(&d).is_empty());
    for l in fences(&d) {
        assert!(
            l.trim_start()
                .starts_with("atomic_thread_fence(memory_order_")
                && !l.contains("std::"),
            "{l:?}"
        );
    }

    let d = diff("scoped_order.diff");
    for l in fences(&d) {
        assert!(
            l.trim_start()
                .starts_with("std::atomic_thread_fence(std::memory_order::"),
            "{l:?}"
        );
    }

    let d = diff("strengthen.diff");
    assert!(d.contains("\n-    atomic_thread_fence(memory_order_release);\n+    atomic_thread_fence(memory_order_seq_cst); /* fensyn: was release; write x before reading y; pairs with the seq_cst fence in t2() */\n"), "{d}");
    // A fence sharing its line with the next statement keeps it there, after the comment.
    assert!(d.contains("/* fensyn: was release; write y before reading x; pairs with the seq_cst fence in t1() */ b = atomic_load_explicit(&x, memory_order_relaxed);\n"), "{d}");
    let d = diff("strengthen_cpp.diff");
    assert!(
        d.contains(
            "+    std::atomic_thread_fence(std::memory_order::seq_cst); /* fensyn: was release;"
        ),
        "{d}"
    );
    assert!(
        d.contains(
            "+    std::atomic_thread_fence(std::memory_order::seq_cst); /* fensyn: write y before reading x; pairs with the seq_cst fence in t1() */\n"
        ),
        "{d}"
    );

    // Comments in fixture snapshots (compared with the real output by tests/fixtures.rs) name
    // accesses and partners in words, never line numbers: an RMW is an update, a pair whose
    // second access comes earlier in the source is ordered for the next pass (a loop), and a
    // location of an allocated object is named by its field.
    let snap = |f: &str| read(&root().join("fixtures").join(f));
    let d = snap("algorithms/rwlock_relaxed.fixed.diff");
    assert!(
        d.contains("memory_order_relaxed)) {\n+            atomic_thread_fence(memory_order_acquire); /* fensyn: update rw before reading a; pairs with the release fence in writer() */\n             break;\n+        }\n"),
        "{d}"
    );
    let d = snap("cpp/chase_lev_relaxed.fixed.diff");
    assert!(
        d.contains("/* fensyn: update top before reading bottom (next pass); pairs with the seq_cst fence in take() */"),
        "{d}"
    );
    let d = snap("algorithms/treiber_relaxed.fixed.diff");
    assert!(
        d.contains(
            "/* fensyn: read top before pool[1].next; pairs with the release fence in push() */"
        ),
        "{d}"
    );
    assert!(d.contains("\n     } while (!atomic_compare_exchange_weak_explicit(&top, &old, n, memory_order_relaxed,\n"), "{d}");

    // A file written with GCC builtins gets builtin fences and no header; a builtin fence is
    // strengthened in its own spelling (a name stays a name, a number a number).
    for name in ["builtins_mp.diff", "builtins_sb_cpp.diff"] {
        let d = diff(name);
        assert!(!fences(&d).is_empty(), "{name}");
        for l in fences(&d) {
            assert!(
                l.trim_start()
                    .starts_with("__atomic_thread_fence(__ATOMIC_"),
                "{name}: {l:?}"
            );
        }
        assert!(!d.contains("+#include"), "{name}: {d}");
    }
    let d = diff("builtins_strengthen.diff");
    assert!(
        d.contains("\n-    __atomic_thread_fence(__ATOMIC_RELEASE);\n+    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* fensyn: was release;"),
        "{d}"
    );
    assert!(
        d.contains("\n-    __atomic_thread_fence(3);\n+    __atomic_thread_fence(5); /* fensyn: was release;"),
        "{d}"
    );
    assert!(!d.contains("+#include"), "{d}");

    // An unbraced body with a fence opens a block on its own lines (K&R here, as the file
    // writes its blocks): `{` ends the header's line, `}` stands alone at its indentation.
    for name in ["unbraced.diff", "unbraced_else.diff"] {
        let d = diff(name);
        let lines = added(&d);
        let opens = lines
            .iter()
            .filter(|l| l.trim_end().ends_with(") {") || l.trim() == "else {");
        let closes = lines.iter().filter(|l| l.trim() == "}");
        assert!(opens.count() > 0, "{name}: no block opened:\n{d}");
        assert!(closes.count() > 0, "{name}: no block closed:\n{d}");
        for l in &lines {
            assert!(
                !l.trim_start().starts_with("{ "),
                "{name}: inline block {l:?}"
            );
        }
    }
}

/// A golden diff is named after its input's stem, so a C and a C++ input may not share one.
#[test]
fn golden_stems_are_distinct() {
    let mut stems: Vec<String> = golden_inputs()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let n = stems.len();
    stems.sort();
    stems.dedup();
    assert_eq!(stems.len(), n, "two golden inputs share a stem: {stems:?}");
}

/// The files a diff patches (its `--- a/PATH` headers, each followed by `+++ b/PATH`), in
/// the order of its sections (a fix in a header has one section per file).
fn patched_paths(diff: &str) -> Vec<String> {
    let lines: Vec<&str> = diff.lines().collect();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("--- a/")),
        "no a/ prefix: {diff}"
    );
    let mut files = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(path) = l.strip_prefix("--- a/") {
            let next = lines.get(i + 1).copied().unwrap_or("");
            assert_eq!(next, format!("+++ b/{path}"), "section of {path}");
            files.push(path.to_string());
        }
    }
    files
}

/// Copies `files` (paths relative to the crate root) into a new temporary directory at the
/// same relative paths.
fn tree_with(files: &[String]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let dst = dir.path().join(file);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(root().join(file), &dst).unwrap();
    }
    dir
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn every_expected_diff_applies_with_git_apply_and_patch() {
    let diffs = expected_diffs();
    assert!(diffs.len() >= 40, "expected diffs: {}", diffs.len());
    let patch = have("patch");
    if !patch {
        println!("`patch` is not installed: only `git apply` is checked");
    }
    let mut problems = Vec::new();
    for d in &diffs {
        let text = read(d);
        let files = patched_paths(&text);
        // git apply (outside any repository it patches the working tree like patch -p1).
        let dir = tree_with(&files);
        std::fs::write(dir.path().join("fix.diff"), &text).unwrap();
        let out = Command::new("git")
            .args(["apply", "--whitespace=nowarn", "fix.diff"])
            .current_dir(dir.path())
            .output()
            .expect("run git");
        if !out.status.success() {
            problems.push(format!(
                "{}: git apply failed: {}",
                rel(d),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let by_git: Vec<String> = files.iter().map(|f| read(&dir.path().join(f))).collect();
        for (f, new) in files.iter().zip(&by_git) {
            if *new == read(&root().join(f)) {
                problems.push(format!("{}: git apply changed nothing in {f}", rel(d)));
            }
        }
        // Every added line is in the result, and the fences are there.
        let all = by_git.concat();
        for l in added(&text) {
            if !all.contains(l.trim_end_matches(['\n', '\r'])) {
                problems.push(format!("{}: added line missing after apply: {l:?}", rel(d)));
            }
        }
        if patch {
            let dir2 = tree_with(&files);
            let out = Command::new("patch")
                .args(["-p1", "--batch", "--silent", "-i"])
                .arg(dir.path().join("fix.diff"))
                .current_dir(dir2.path())
                .output()
                .expect("run patch");
            let by_patch: Vec<String> = files.iter().map(|f| read(&dir2.path().join(f))).collect();
            if !out.status.success() {
                problems.push(format!(
                    "{}: patch -p1 failed: {}{}",
                    rel(d),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            } else if by_patch != by_git {
                problems.push(format!("{}: patch -p1 and git apply disagree", rel(d)));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The patched golden inputs are what `--write` writes, and they check clean.
#[test]
fn applied_golden_diffs_equal_write_and_check_clean() {
    for input in golden_inputs() {
        let file = rel(&input);
        let diff = read(&input.with_extension("diff"));
        let a = tree_with(std::slice::from_ref(&file));
        std::fs::write(a.path().join("fix.diff"), &diff).unwrap();
        let st = Command::new("git")
            .args(["apply", "--whitespace=nowarn", "fix.diff"])
            .current_dir(a.path())
            .status()
            .unwrap();
        assert!(st.success(), "{file}: git apply");
        let b = tree_with(std::slice::from_ref(&file));
        let out = fensyn_in(b.path(), &["fix", &file, "--write"]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let patched = read(&a.path().join(&file));
        assert_eq!(patched, read(&b.path().join(&file)), "{file}");
        let out = fensyn_in(a.path(), &["check", &file]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stdout(&out));
    }
}

#[test]
fn no_comments_leaves_the_fences_bare() {
    let with = stdout(&fensyn(&["fix", "fixtures/litmus/mp.c"]));
    let out = fensyn(&["fix", "fixtures/litmus/mp.c", "--no-comments"]);
    assert_eq!(out.status.code(), Some(1));
    let without = stdout(&out);
    assert!(
        with.contains(
            "/* fensyn: publish data before flag; pairs with the acquire fence in reader() */"
        ),
        "{with}"
    );
    assert!(!without.contains("fensyn:"), "{without}");
    assert!(without.contains("+    atomic_thread_fence(memory_order_release);\n"));
    assert!(without.contains("+    atomic_thread_fence(memory_order_acquire);\n"));
    // Same fences, same places: only the comments differ.
    let strip = |s: &str| {
        s.lines()
            .map(|l| l.split(" /* fensyn:").next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&with), strip(&without));
}
