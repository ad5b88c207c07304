//! Integration with a project (issue 24): `exclude` and `[[per-file]]` in fensyn.toml,
//! `--pre-commit` (library files without `main`, excluded files), `--format sarif`'s
//! related locations, code flows and fingerprints validated against the SARIF 2.1.0 schema,
//! and the DOT drawing of a failing execution.

mod common;

use common::*;
use std::path::Path;

/// A temporary directory with `files` (path relative to it, fixture path or literal text).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, from) in files {
        let dst = dir.path().join(path);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        if from.starts_with("fixtures/") {
            std::fs::copy(root().join(from), &dst).unwrap();
        } else {
            std::fs::write(&dst, from).unwrap();
        }
    }
    dir
}

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap()
}

const LIBRARY: &str = "#include <stdatomic.h>\natomic_int l;\nvoid lock(void) { while (atomic_exchange(&l, 1)) ; }\n";

#[test]
fn exclude_skips_files_in_directories_and_in_pre_commit_mode() {
    let dir = tree(&[
        (
            "fensyn.toml",
            "exclude = [\"vendor\", \"src/*_gen.c\"]\n",
        ),
        ("src/ok.c", "fixtures/litmus/sb_sc.c"),
        ("src/bad_gen.c", "fixtures/litmus/sb.c"),
        ("vendor/lib/sb.c", "fixtures/litmus/sb.c"),
    ]);
    // A directory search skips both buggy files and says so.
    let out = fensyn_in(dir.path(), &["check", "."]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    let note = err
        .lines()
        .find(|l| l.starts_with("note: 2 files excluded by `exclude` in fensyn.toml: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(note.ends_with("src/bad_gen.c, ./vendor/lib/sb.c"), "{note}");
    // Named on the command line, an excluded file is still checked ...
    let out = fensyn_in(dir.path(), &["check", "vendor/lib/sb.c"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    // ... unless in pre-commit mode, where every staged file is named.
    let files = ["--pre-commit", "src/ok.c", "src/bad_gen.c", "vendor/lib/sb.c"];
    let out = fensyn_in(dir.path(), &[&["check"][..], &files].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = fensyn_in(dir.path(), &[&["fix", "--write"][..], &files].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        std::fs::read(dir.path().join("vendor/lib/sb.c")).unwrap(),
        std::fs::read(root().join("fixtures/litmus/sb.c")).unwrap()
    );
}

#[test]
fn a_library_file_is_skipped_in_pre_commit_mode_and_an_error_when_named() {
    let dir = tree(&[("spin.c", LIBRARY), ("sb.c", "fixtures/litmus/sb_sc.c")]);
    let out = fensyn_in(dir.path(), &["check", "spin.c", "sb.c"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let out = fensyn_in(dir.path(), &["check", "--pre-commit", "spin.c", "sb.c"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("note: 1 file without `main` skipped"),
        "{}",
        stderr(&out)
    );
    // Only library files: nothing to check is still an input error.
    let out = fensyn_in(dir.path(), &["check", "--pre-commit", "spin.c"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
}

#[test]
fn per_file_unroll_sets_the_loop_bound_of_the_files_it_matches() {
    let dir = tree(&[
        (
            "fensyn.toml",
            "[[per-file]]\npath = \"loops/*.c\"\nunroll = 1\n",
        ),
        ("loops/loop.c", "fixtures/control/while_counter.c"),
        ("other/loop.c", "fixtures/control/while_counter.c"),
    ]);
    // Cut at the bound of 1 (incomplete: exit 4); the same file elsewhere is complete.
    let out = fensyn_in(dir.path(), &["check", "loops/loop.c"]);
    assert_eq!(code(&out), 4, "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "other/loop.c"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // The command line beats the table.
    let out = fensyn_in(dir.path(), &["check", "loops/loop.c", "--unroll", "8"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn the_pre_commit_hooks_pass_pre_commit() {
    let text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    let entries: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("entry: "))
        .collect();
    assert_eq!(entries.len(), 2);
    for e in entries {
        assert!(e.ends_with(" --pre-commit"), "{e}");
    }
    let _ = Path::new(".");
}
