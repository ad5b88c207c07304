//! The output contract of issue 24: stdout of `fix` is only a patch, JSON is always an array
//! of per-file results (with an entry for a file that could not be analysed), options that
//! make no sense are usage errors, `--diff`, standard input, and the library API.

mod common;

use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `fensyn ARGS` in `dir` with `input` on standard input.
fn with_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fensyn"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fensyn");
    // A usage error exits before reading: a closed pipe is no failure here.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes());
    child.wait_with_output().expect("wait")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

/// A directory with a fixable, an unfixable and a clean program: `fix dir > p.patch` is a
/// patch `git apply` takes, and the prose (summary, unfixable execution) is on stderr.
#[test]
fn fix_of_a_directory_prints_only_a_patch() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["sb.c", "race_final.c", "sb_sc.c"] {
        std::fs::copy(root().join("fixtures/litmus").join(f), dir.path().join(f)).unwrap();
    }
    let out = fensyn_in(dir.path(), &["fix", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let patch = stdout(&out);
    assert!(patch.starts_with("--- a/sb.c\n+++ b/sb.c\n@@ "), "{patch}");
    assert!(
        patch.lines().all(|l| l.starts_with(['-', '+', ' ', '@'])),
        "{patch}"
    );
    let err = stderr(&out);
    assert!(err.contains("not fixable with fences"), "{err}");
    assert!(err.contains("sb.c: fixed with 2 fences"), "{err}");
    assert!(err.contains("nothing to fix"), "{err}");
    std::fs::write(dir.path().join("p.patch"), &patch).unwrap();
    let git = Command::new("git")
        .args(["apply", "--unsafe-paths", "p.patch"])
        .current_dir(dir.path())
        .output();
    if let Ok(git) = git {
        assert!(
            git.status.success(),
            "{}",
            String::from_utf8_lossy(&git.stderr)
        );
        let fixed = std::fs::read_to_string(dir.path().join("sb.c")).unwrap();
        assert_eq!(fixed.matches("atomic_thread_fence").count(), 2);
    }
}

#[test]
fn json_is_an_array_also_for_one_file() {
    for cmd in ["check", "fix"] {
        let out = fensyn(&[cmd, "--format", "json", "fixtures/litmus/sb.c"]);
        let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let items = j.as_array().unwrap_or_else(|| panic!("{cmd}: {j}"));
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["file"], "fixtures/litmus/sb.c");
    }
    let out = fensyn(&["robust", "--format", "json", "fixtures/litmus/sb.c"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(j.as_array().map(Vec::len), Some(1), "{j}");
}

/// A file that could not be analysed is an entry with its error, beside the others.
#[test]
fn json_has_an_entry_for_a_file_that_could_not_be_analysed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.c"),
        "int main(void) {\n  int x = ;\n}\n",
    )
    .unwrap();
    std::fs::copy(root().join("fixtures/litmus/sb.c"), dir.path().join("sb.c")).unwrap();
    for cmd in ["check", "fix"] {
        let out = fensyn_in(
            dir.path(),
            &[cmd, "--format", "json", "bad.c", "sb.c", "gone.c"],
        );
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let items = j.as_array().unwrap();
        assert_eq!(items.len(), 3, "{j}");
        let gone = items.iter().find(|i| i["file"] == "gone.c").unwrap();
        assert_eq!(gone["error"]["kind"], "input");
        assert!(gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot read"));
        let bad = items.iter().find(|i| i["file"] == "bad.c").unwrap();
        assert_eq!(bad["error"]["kind"], "input", "{bad}");
        assert_eq!(bad["error"]["line"], 2, "{bad}");
        assert!(bad["error"]["column"].as_u64().unwrap() > 1, "{bad}");
        assert!(!bad["error"]["message"].as_str().unwrap().is_empty());
        let sb = items.iter().find(|i| i["file"] == "sb.c").unwrap();
        assert!(sb.get("error").is_none() && sb["buggy"].as_u64().unwrap() > 0);
    }
    let out = fensyn_in(dir.path(), &["check", "--format", "json", "bad.c"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(j[0]["file"], "bad.c");
    assert_eq!(j[0]["error"]["kind"], "input");
}

/// Each pair is refused before anything runs, in clap's form, with the usage-error code.
#[test]
fn options_that_make_no_sense_are_usage_errors() {
    let sb = "fixtures/litmus/sb.c";
    let cases: &[&[&str]] = &[
        &["fix", "--format", "dot", sb],
        &["fix", "--timings", sb],
        &["fix", "--diff", "--format", "json", sb],
        &["fix", "--diff", "--write", sb],
        &["explain", "--format", "sarif", sb],
        &["explain", "--format", "json", sb],
        &["robust", "--format", "sarif", sb],
        &["check", "--on-hardware", "x86", "--format", "dot", sb],
        &["check", "-", sb],
        &["check", "--stdin-filename", "x.c", sb],
        &["fix", "--write", "-"],
    ];
    for args in cases {
        let out = with_stdin(&root(), args, "int main(void) { return 0; }\n");
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?}");
        let err = stderr(&out);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains("Usage: fensyn"), "{args:?}: {err}");
    }
}

#[test]
fn man_dir_creates_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("share/man/man1");
    let out = fensyn(&["man", "--dir", target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(target.join("fensyn.1").is_file());
    assert!(target.join("fensyn-fix.1").is_file());
}

/// Every path the help examples name exists in the repository.
#[test]
fn help_examples_name_paths_that_exist() {
    let mut seen = 0;
    for args in [&["--help"][..], &["check", "--help"], &["fix", "--help"]] {
        let help = stdout(&fensyn(args));
        for word in help.split_whitespace() {
            if word.starts_with("fixtures/") {
                seen += 1;
                assert!(root().join(word).exists(), "{args:?}: {word}");
            }
        }
        assert!(!help.contains(" sb.c") && !help.contains(" src/"), "{help}");
    }
    assert!(seen >= 10, "{seen}");
}

#[test]
fn diff_prints_the_patch_and_exits_1_or_0() {
    let out = fensyn(&["fix", "--diff", "fixtures/litmus/sb.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), read("fixtures/litmus/sb.fixed.diff"));
    let out = fensyn(&["fix", "--diff", "fixtures/litmus/sb_sc.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

/// `-` reads the source from stdin; `--stdin-filename` names it in the patch header and
/// messages, and `#include "..."` is resolved from its directory.
#[test]
fn stdin_is_named_by_stdin_filename() {
    let sb = read("fixtures/litmus/sb.c");
    let args = [
        "fix",
        "--diff",
        "--stdin-filename",
        "fixtures/litmus/sb.c",
        "-",
    ];
    let out = with_stdin(&root(), &args, &sb);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), read("fixtures/litmus/sb.fixed.diff"));
    // Unnamed: `<stdin>`, in messages too.
    let out = with_stdin(
        &root(),
        &["check", "-"],
        "int main(void) {\n  int x = ;\n}\n",
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("--> <stdin>:2:"), "{}", stderr(&out));
    // Includes are found next to the named file, not the working directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/flags.h"), "#define SET 1\n").unwrap();
    let text = sb.replace(
        "#include <assert.h>",
        "#include <assert.h>\n#include \"flags.h\"",
    );
    let text = text.replace(
        "atomic_store_explicit(&x, 1,",
        "atomic_store_explicit(&x, SET,",
    );
    let args = [
        "check",
        "--format",
        "json",
        "--stdin-filename",
        "src/sb.c",
        "-",
    ];
    let out = with_stdin(dir.path(), &args, &text);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(j[0]["file"], "src/sb.c");
}

/// The library: a fix's edits, applied to the source, give the rewritten text, and the patch
/// is the command line's.
#[test]
fn library_fix_gives_its_edits_as_data() {
    let text = read("fixtures/litmus/mp.c");
    let unit = fensyn::Source::new("fixtures/litmus/mp.c", text.clone())
        .parse()
        .unwrap();
    let opts = fensyn::Options::default();
    assert!(fensyn::check(&unit, &opts).unwrap().is_buggy());
    let fensyn::Repair::Fixed { files, .. } =
        fensyn::fix(&unit, &opts, &fensyn::FixOptions::default()).unwrap()
    else {
        panic!("mp is fixable");
    };
    let mut edits = files[0].edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut applied = text.clone();
    for e in &edits {
        applied.replace_range(e.start..e.end, &e.text);
    }
    assert_eq!(applied, files[0].text);
    let cwd = std::env::current_dir().ok();
    assert_eq!(
        unit.patch(&files, cwd.as_deref()),
        read("fixtures/litmus/mp.fixed.diff")
    );
}
