//! How fensyn is invoked and what it writes: several files and directories, `--format sarif`,
//! `--output`, `fensyn.toml`, the pre-commit hooks, `--help` and the manual page.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

// ---------------------------------------------------------------------------------------------
// SARIF

/// Checks the parts of a SARIF 2.1.0 log that code-scanning consumers require, and returns
/// the run.
fn sarif_run(log: &Value) -> &Value {
    // The types generated from the SARIF 2.1.0 schema (serde-sarif) take the log, and give it
    // back unchanged: no required property is missing, none has the wrong type, and no
    // property is unknown to the schema (it would be dropped).
    let typed: serde_sarif::sarif::Sarif = serde_json::from_value(log.clone())
        .unwrap_or_else(|e| panic!("not SARIF 2.1.0: {e}\n{log:#}"));
    assert_eq!(
        &serde_json::to_value(&typed).unwrap(),
        log,
        "unknown SARIF properties"
    );
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "fensyn");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for kind in [
        "assertion",
        "race",
        "deadlock",
        "liveness",
        "misuse",
        "memory",
        "ub",
    ] {
        assert!(ids.contains(&kind), "{ids:?}");
    }
    for r in rules {
        assert!(r["shortDescription"]["text"].is_string());
    }
    for res in run["results"].as_array().unwrap() {
        let id = res["ruleId"].as_str().unwrap();
        let index = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(ids[index], id, "ruleIndex points at the rule");
        assert_eq!(res["level"], "error");
        assert!(!res["message"]["text"].as_str().unwrap().is_empty());
        let loc = &res["locations"][0]["physicalLocation"];
        assert!(loc["artifactLocation"]["uri"].is_string());
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
    }
    assert!(run["invocations"][0]["executionSuccessful"].is_boolean());
    run
}

/// The byte offset of a SARIF line and code-point column in `src`.
fn offset(src: &str, line: u64, column: u64) -> usize {
    let start: usize = src
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    let rest = &src[start..];
    start
        + rest
            .char_indices()
            .nth(column as usize - 1)
            .map_or(rest.len(), |(i, _)| i)
}

/// Applies the replacements of `fix` to `src` twice — by byte offsets and by lines and
/// columns — checks that both agree and returns the result.
fn apply_fix(src: &str, fix: &Value) -> String {
    let changes = fix["artifactChanges"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    let mut by_bytes = Vec::new();
    for r in changes[0]["replacements"].as_array().unwrap() {
        let d = &r["deletedRegion"];
        let start = d["byteOffset"].as_u64().unwrap() as usize;
        let end = start + d["byteLength"].as_u64().unwrap() as usize;
        let from_lines = (
            offset(
                src,
                d["startLine"].as_u64().unwrap(),
                d["startColumn"].as_u64().unwrap(),
            ),
            offset(
                src,
                d["endLine"].as_u64().unwrap(),
                d["endColumn"].as_u64().unwrap(),
            ),
        );
        assert_eq!(from_lines, (start, end), "lines/columns and bytes agree");
        by_bytes.push((start, end, r["insertedContent"]["text"].as_str().unwrap()));
    }
    // Replacements are listed in file order and apply to the original text.
    let mut out = String::new();
    let mut cursor = 0;
    for (start, end, text) in by_bytes {
        assert!(start >= cursor, "replacements in order, not overlapping");
        out.push_str(&src[cursor..start]);
        out.push_str(text);
        cursor = end;
    }
    out.push_str(&src[cursor..]);
    out
}

#[test]
fn sarif_check_reports_each_error_at_its_statement() {
    for file in ["fixtures/litmus/sb.c", "fixtures/litmus/mp_plain.c"] {
        let out = fensyn(&["check", file, "--format", "sarif"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let log = json(&out);
        let run = sarif_run(&log);
        let plain = json(&fensyn(&["check", file, "--format", "json"]));
        let errors = plain["errors"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), errors.len(), "one result per distinct error");
        assert!(!results.is_empty());
        for (r, e) in results.iter().zip(errors) {
            assert_eq!(r["ruleId"], e["kind"]);
            assert_eq!(r["message"]["text"], e["message"]);
            let loc = &r["locations"][0]["physicalLocation"];
            assert_eq!(loc["artifactLocation"]["uri"], file, "the path as given");
            assert_eq!(loc["region"]["startLine"], e["line"]);
            assert_eq!(loc["region"]["startColumn"], e["column"]);
            assert!(r.get("fixes").is_none(), "check proposes no fix");
        }
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    }
    // A race is a result of rule `race`.
    let log = json(&fensyn(&[
        "check",
        "fixtures/litmus/mp_plain.c",
        "--format",
        "sarif",
    ]));
    let kinds: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"race"), "{kinds:?}");

    // A clean program: no results, a successful run.
    let out = fensyn(&["check", "fixtures/litmus/sb_sc.c", "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(0));
    let log = json(&out);
    assert_eq!(sarif_run(&log)["results"].as_array().unwrap().len(), 0);
}

#[test]
fn sarif_fixes_are_the_edits_fix_writes() {
    // Inserted fences (C and C++), a fence written with the statement of an unbraced `if`
    // inside new braces, a strengthened fence, and an inline fence after a non-ASCII comment.
    let sb = read(&root().join("fixtures/litmus/sb.c")).replace(
        "    a = atomic_load_explicit(&y, memory_order_relaxed);",
        "    /* é → ü */ a = atomic_load_explicit(&y, memory_order_relaxed);",
    );
    assert!(sb.contains('é'));
    let dir = tree(&[
        ("litmus/mp.c", "fixtures/litmus/mp.c"),
        ("cpp/2+2w.cpp", "fixtures/cpp/2+2w.cpp"),
        ("control/if_unbraced.c", "fixtures/control/if_unbraced.c"),
        ("litmus/sb_fence_rel.c", "fixtures/litmus/sb_fence_rel.c"),
        ("unicode/sb.c", &sb),
    ]);
    let files = [
        "litmus/mp.c",
        "cpp/2+2w.cpp",
        "control/if_unbraced.c",
        "litmus/sb_fence_rel.c",
        "unicode/sb.c",
    ];
    for file in files {
        let original = read(&dir.path().join(file));
        let out = fensyn_in(dir.path(), &["fix", file, "--format", "sarif"]);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{file}: {}", stderr(&out));
        let log = json(&out);
        let run = sarif_run(&log);
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{file}");
        let fix = &results[0]["fixes"][0];
        assert!(fix["description"]["text"]
            .as_str()
            .unwrap()
            .contains("fence"));
        assert_eq!(
            fix["artifactChanges"][0]["artifactLocation"]["uri"],
            file.replace('+', "%2B")
        );
        for r in results {
            assert_eq!(&r["fixes"][0], fix, "{file}: every result carries the fix");
        }
        let via_sarif = apply_fix(&original, fix);
        assert_ne!(via_sarif, original, "{file}");

        let out = fensyn_in(dir.path(), &["fix", file, "--write"]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        assert_eq!(via_sarif, read(&dir.path().join(file)), "{file}");
    }
    assert!(read(&dir.path().join("litmus/sb_fence_rel.c")).contains("memory_order_seq_cst"));
}

#[test]
fn sarif_reports_unfixable_incomplete_and_bad_files_as_notifications() {
    let dir = tree(&[
        ("a/race_final.c", "fixtures/litmus/race_final.c"),
        ("b/bad.c", "int main(void) {\n    int x = ;\n}\n"),
        ("c/sb.c", "fixtures/litmus/sb.c"),
    ]);
    let out = fensyn_in(dir.path(), &["fix", ".", "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let log = json(&out);
    let run = sarif_run(&log);
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let about = |uri: &str| {
        notes
            .iter()
            .find(|n| n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri)
            .unwrap_or_else(|| panic!("no notification about {uri}: {notes:?}"))
    };
    let bad = about("b/bad.c");
    assert_eq!(bad["level"], "error");
    assert_eq!(
        bad["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert!(bad["message"]["text"].as_str().unwrap().contains("syntax"));
    let unfixable = about("a/race_final.c");
    assert!(unfixable["message"]["text"]
        .as_str()
        .unwrap()
        .contains("not fixable"));
    // The unfixable error is a result without a fix; sb.c's has one.
    let results = run["results"].as_array().unwrap();
    let of = |uri: &str| -> Vec<&Value> {
        results
            .iter()
            .filter(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri)
            .collect()
    };
    assert!(of("a/race_final.c")
        .iter()
        .all(|r| r.get("fixes").is_none()));
    assert!(!of("a/race_final.c").is_empty());
    assert!(of("c/sb.c").iter().all(|r| r["fixes"].is_array()));

    let out = fensyn(&[
        "check",
        "fixtures/litmus/sb_sc.c",
        "--max-executions",
        "1",
        "--format",
        "sarif",
    ]);
    assert_eq!(out.status.code(), Some(4));
    let log = json(&out);
    let notes = &sarif_run(&log)["invocations"][0]["toolExecutionNotifications"];
    assert!(notes[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("incomplete"));
}

// ---------------------------------------------------------------------------------------------
// --output

#[test]
fn output_writes_the_report_to_a_file() {
    let dir = tree(&[
        ("sb.c", "fixtures/litmus/sb.c"),
        ("mp.c", "fixtures/litmus/mp.c"),
    ]);
    let cases: [&[&str]; 5] = [
        &["check", "sb.c", "mp.c"],
        &["check", "sb.c", "mp.c", "--format", "json"],
        &["check", "sb.c", "--format", "sarif"],
        &["fix", "sb.c", "mp.c"],
        &["fix", "sb.c", "--format", "sarif"],
    ];
    for args in cases {
        let plain = fensyn_in(dir.path(), args);
        assert!(!stdout(&plain).is_empty(), "{args:?}");
        let mut with = args.to_vec();
        with.extend(["--output", "out/report"]);
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        let out = fensyn_in(dir.path(), &with);
        assert_eq!(out.status.code(), plain.status.code(), "{args:?}");
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
        let written = read(&dir.path().join("out/report"));
        let expected = stdout(&plain).replace(&dir.path().to_string_lossy().to_string(), "");
        assert_eq!(
            written.replace(&dir.path().to_string_lossy().to_string(), ""),
            expected,
            "{args:?}"
        );
    }
    // The report never replaces an input.
    let before = read(&dir.path().join("sb.c"));
    let out = fensyn_in(dir.path(), &["fix", "sb.c", "mp.c", "-o", "./sb.c"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("--output names an input file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&dir.path().join("sb.c")), before);

    let out = fensyn_in(dir.path(), &["check", "sb.c", "-o", "no/such/dir/r.txt"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("no/such/dir/r.txt:1:1: error: cannot write the report"),
        "{}",
        stderr(&out)
    );
}

// ---------------------------------------------------------------------------------------------
// Several files and directories

#[test]
fn directories_are_searched_like_ripgrep_in_sorted_order() {
    let dir = tree(&[
        ("src/b/sb.c", "fixtures/litmus/sb.c"),
        ("src/a/mp.cc", "fixtures/cpp/2+2w.cpp"),
        ("src/a/sc.cpp", "fixtures/cpp/2+2w.cpp"),
        ("src/z.c", "fixtures/litmus/sb_sc.c"),
        ("src/lock.h", "int x;\n"),
        ("src/lock.hpp", "int x;\n"),
        ("src/notes.txt", "not C\n"),
        ("src/.hidden/sb.c", "fixtures/litmus/sb.c"),
        ("src/ignored/sb.c", "fixtures/litmus/sb.c"),
        ("src/gitignored/sb.c", "fixtures/litmus/sb.c"),
        ("src/.ignore", "ignored/\n"),
        ("src/.gitignore", "gitignored/\n"),
        ("other.c", "fixtures/litmus/sb_sc.c"),
    ]);
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status();
    let has_git = git.is_ok_and(|s| s.success());
    let out = fensyn_in(dir.path(), &["check", "src", "other.c", "--format", "json"]);
    let j = json(&out);
    let files: Vec<&str> = j
        .as_array()
        .expect("several inputs give an array")
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    let mut expected = vec![
        "other.c",
        "src/a/mp.cc",
        "src/a/sc.cpp",
        "src/b/sb.c",
        "src/z.c",
    ];
    if !has_git {
        expected.insert(3, "src/gitignored/sb.c");
    }
    assert_eq!(files, expected);
    assert_eq!(out.status.code(), Some(1), "the worst code: a bug");

    // The order does not depend on the order of the arguments; a file reached twice is
    // processed once.
    let again = fensyn_in(
        dir.path(),
        &["check", "other.c", "src", "./src/z.c", "--format", "json"],
    );
    assert_eq!(stdout(&again), stdout(&out));

    // A file named explicitly is taken even if hidden; one directory and one file both give
    // an array.
    let j = json_doc(&fensyn_in(
        dir.path(),
        &["check", "src/.hidden/sb.c", "--format", "json"],
    ));
    assert_eq!(j.as_array().unwrap().len(), 1);
    assert_eq!(j[0]["file"], "src/.hidden/sb.c");
    let j = json_doc(&fensyn_in(
        dir.path(),
        &["check", "src/b", "--format", "json"],
    ));
    assert_eq!(j.as_array().unwrap().len(), 1);

    // Text: one section per file, as for one file.
    let out = fensyn_in(dir.path(), &["check", "src/z.c", "other.c"]);
    let text = stdout(&out);
    assert!(text.contains("other.c: no bugs in 3 executions under rc11\n\nsrc/z.c: no bugs in 3"));
    assert_eq!(out.status.code(), Some(0));

    // A directory without programs is an input error; the other inputs still run.
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    let out = fensyn_in(dir.path(), &["check", "empty", "other.c"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("empty: error: no C or C++ files"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("other.c: no bugs in 3 executions"),
        "{}",
        stdout(&out)
    );
}

/// In a directory only translation units are checked: a `.c` without `main` (a library
/// file the harness includes, a `main` only under `#ifdef`) is skipped with a note, as are
/// headers; `user_main` (CDSChecker's) counts; a file named on the command line is checked.
#[test]
fn directories_check_only_translation_units() {
    let dir = tree(&[
        ("t/harness.c", "#include <assert.h>\n#include \"spin.c\"\n#define ENTRY main\nint ENTRY(void) {\n    lock();\n    unlock();\n    assert(1);\n    return 0;\n}\n"),
        ("t/spin.c", "#include <stdatomic.h>\natomic_int l;\nvoid lock(void) { while (atomic_exchange(&l, 1)) ; }\nvoid unlock(void) { atomic_store(&l, 0); }\nint main(void);\n"),
        ("t/selftest.c", "#ifdef SELFTEST\nint main(void) { return 0; }\n#endif\nint helper(void) { return main(); }\n"),
        ("t/cds.c", "fixtures/dialect/mp_user_main.c"),
        ("t/spin.h", "void lock(void);\n"),
    ]);
    let out = fensyn_in(dir.path(), &["check", "t", "--format", "json"]);
    let files: Vec<String> = json(&out)
        .as_array()
        .expect("a directory gives an array")
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["t/cds.c", "t/harness.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "note: 2 files without `main` skipped (not translation units: they are read \
             through the files that include them): t/selftest.c, t/spin.c"
        ),
        "{}",
        stderr(&out)
    );
    // -D SELFTEST makes selftest.c one.
    let out = fensyn_in(dir.path(), &["check", "t", "-D", "SELFTEST"]);
    assert!(
        stdout(&out).contains("t/selftest.c: no bugs in 1 execution"),
        "{}",
        stdout(&out)
    );
    // Named, a file is checked (and refused for its missing main).
    let out = fensyn_in(dir.path(), &["check", "t/spin.c"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("no `main` function"),
        "{}",
        stderr(&out)
    );
    // A directory of library files only: nothing to check is an input error.
    std::fs::remove_file(dir.path().join("t/harness.c")).unwrap();
    std::fs::remove_file(dir.path().join("t/cds.c")).unwrap();
    let out = fensyn_in(dir.path(), &["check", "t"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("error: no translation units to check"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_exit_code_of_several_files_is_the_most_severe() {
    let dir = tree(&[
        ("clean.c", "fixtures/litmus/sb_sc.c"),
        ("buggy.c", "fixtures/litmus/sb.c"),
        ("unfixable.c", "fixtures/litmus/race_final.c"),
        (
            "bad.c",
            "int main(void) {\n    void *p = 0;\n    goto *p;\n}\n",
        ),
        ("loop.c", "fixtures/control/while_counter.c"),
    ]);
    let code = |args: &[&str]| fensyn_in(dir.path(), args).status.code().unwrap();
    assert_eq!(code(&["check", "clean.c", "buggy.c"]), 1);
    // while_counter is cut at --unroll 1: incomplete (4) beats a bug (1).
    assert_eq!(code(&["check", "clean.c", "loop.c", "--unroll", "1"]), 4);
    assert_eq!(code(&["check", "buggy.c", "loop.c", "--unroll", "1"]), 4);
    // Unfixable (2) beats incomplete and fix-found.
    assert_eq!(
        code(&["fix", "buggy.c", "unfixable.c", "loop.c", "--unroll", "1"]),
        2
    );
    // An input error beats everything; the other files still ran.
    let out = fensyn_in(dir.path(), &["check", "bad.c", "buggy.c", "clean.c"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        has_diagnostic(&stderr(&out), "bad.c:3:5: unsupported: computed goto"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("buggy.c: 1 of 4 executions"));
    assert!(stdout(&out).contains("clean.c: no bugs in 3 executions"));
    let out = fensyn_in(dir.path(), &["check", "missing.c", "clean.c"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(has_diagnostic(
        &stderr(&out),
        "missing.c:1:1: error: cannot read file"
    ));
}

#[test]
fn write_applies_to_each_file_and_the_patch_to_all() {
    let files = [
        ("t/sb.c", "fixtures/litmus/sb.c"),
        ("t/mp.c", "fixtures/litmus/mp.c"),
        ("t/sb_sc.c", "fixtures/litmus/sb_sc.c"),
        ("t/x.cpp", "fixtures/cpp/2+2w.cpp"),
    ];
    // Without --write: one patch for every file, which git apply takes.
    let dir = tree(&files);
    let out = fensyn_in(dir.path(), &["fix", "t"]);
    assert_eq!(out.status.code(), Some(1));
    let patch = stdout(&out);
    assert_eq!(patch.matches("--- a/").count(), 3, "{patch}");
    let check = Command::new("git")
        .args(["apply", "--check", "-"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(patch.as_bytes())?;
            c.wait()
        });
    if let Ok(status) = check {
        assert!(status.success(), "git apply --check failed on:\n{patch}");
    }

    // With --write every buggy file is rewritten and then checks clean.
    let out = fensyn_in(dir.path(), &["fix", "--write", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read(&dir.path().join("t/sb_sc.c")),
        read(&root().join("fixtures/litmus/sb_sc.c"))
    );
    let out = fensyn_in(dir.path(), &["check", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

// ---------------------------------------------------------------------------------------------
// fensyn.toml

#[test]
fn configuration_is_found_upwards_and_flags_win() {
    let dir = tree(&[
        ("proj/fensyn.toml", "model = \"sc\"\n"),
        ("proj/deep/er/sb.c", "fixtures/litmus/sb.c"),
        ("proj/own/fensyn.toml", "model = \"c11\"\nunroll = 3\n"),
        ("proj/own/sb.c", "fixtures/litmus/sb.c"),
        ("free/sb.c", "fixtures/litmus/sb.c"),
        ("alt.toml", "model = \"sc\"\n"),
    ]);
    let model_of = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["check", "--format", "json"];
        all.extend(args);
        let out = fensyn_in(dir.path(), &all);
        let j = json(&out);
        let list = match j {
            Value::Array(v) => v,
            one => vec![one],
        };
        list.iter()
            .map(|f| {
                (
                    f["file"].as_str().unwrap().to_string(),
                    f["model"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let got = model_of(&["proj", "free/sb.c"]);
    let got: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    // free/ has no configuration above it inside the temporary directory (rc11, the default),
    // deep/er/ uses proj's (the nearest), own/ its own (nearest wins, files are not merged).
    assert_eq!(
        got,
        [
            ("free/sb.c", "rc11"),
            ("proj/deep/er/sb.c", "sc"),
            ("proj/own/sb.c", "c11")
        ]
    );
    // A flag beats the file.
    assert_eq!(model_of(&["--model", "rc11", "proj/own/sb.c"])[0].1, "rc11");
    // --config names the file for every input; --no-config ignores them all.
    assert_eq!(model_of(&["--config", "alt.toml", "free/sb.c"])[0].1, "sc");
    assert_eq!(model_of(&["--no-config", "proj/own/sb.c"])[0].1, "rc11");

    // The unroll bound of own/fensyn.toml is used: sb has no loop, so check it through fix's
    // mode and cost instead, which the same file can set.
    std::fs::write(
        dir.path().join("proj/own/fensyn.toml"),
        "mode = \"fast\"\ncost = \"x86\"\noptimal_timeout = 5\n",
    )
    .unwrap();
    let j = json(&fensyn_in(
        dir.path(),
        &["fix", "proj/own/sb.c", "--format", "json"],
    ));
    assert_eq!(j["mode"], "fast");
    assert_eq!(j["cost"], "x86");
    let j = json(&fensyn_in(
        dir.path(),
        &[
            "fix",
            "proj/own/sb.c",
            "--format",
            "json",
            "--cost",
            "weight",
        ],
    ));
    assert_eq!(j["cost"], "weight");

    // collect_limit: the optimal mode stops collecting after the file's limit (0: at once) and
    // finds the rest in rounds; the flag beats it.
    std::fs::write(
        dir.path().join("proj/own/fensyn.toml"),
        "mode = \"optimal\"\ncollect_limit = 0\n",
    )
    .unwrap();
    let fix = |extra: &[&str]| {
        let mut args = vec!["fix", "proj/own/sb.c", "--format", "json"];
        args.extend_from_slice(extra);
        json(&fensyn_in(dir.path(), &args))
    };
    assert_eq!(fix(&[])["lazy_after"], 1);
    assert!(fix(&["--collect-limit", "1000"])
        .get("lazy_after")
        .is_none());
}

#[test]
fn configuration_limits_apply() {
    let dir = tree(&[
        ("fensyn.toml", "max_executions = 1\n"),
        ("sb_sc.c", "fixtures/litmus/sb_sc.c"),
        ("loop/fensyn.toml", "unroll = 1\n"),
        ("loop/l.c", "fixtures/control/while_counter.c"),
    ]);
    let out = fensyn_in(dir.path(), &["check", "sb_sc.c"]);
    assert_eq!(out.status.code(), Some(4), "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "sb_sc.c", "--max-executions", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "loop/l.c", "--format", "json"]);
    assert!(json(&out)["bounded"].as_u64().unwrap() > 0);
    let out = fensyn_in(
        dir.path(),
        &["check", "loop/l.c", "--unroll", "50", "--format", "json"],
    );
    assert_eq!(json(&out)["bounded"], 0);
}

#[test]
fn bad_configuration_is_an_input_error_at_its_position() {
    let dir = tree(&[
        ("p/fensyn.toml", "model = \"rc11\"\nunrol = 3\n"),
        ("p/sb.c", "fixtures/litmus/sb.c"),
        ("p/mp.c", "fixtures/litmus/mp.c"),
        ("q/fensyn.toml", "cost = \"cheap\"\n"),
        ("q/sb.c", "fixtures/litmus/sb.c"),
        ("ok/sb_sc.c", "fixtures/litmus/sb_sc.c"),
    ]);
    let out = fensyn_in(dir.path(), &["check", "p", "ok"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.starts_with("p/fensyn.toml:2:1: error: unknown field `unrol`"),
        "{err}"
    );
    assert_eq!(
        err.matches("p/fensyn.toml:2:1").count(),
        1,
        "said once: {err}"
    );
    assert!(
        stdout(&out).contains("ok/sb_sc.c: no bugs in 3 executions"),
        "the others still run"
    );
    assert!(!stdout(&out).contains("p/sb.c"));

    let out = fensyn_in(dir.path(), &["fix", "q/sb.c"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.starts_with("q/fensyn.toml:1:8: error: `cost` must be one of"),
        "{err}"
    );

    let out = fensyn_in(dir.path(), &["check", "--config", "nope.toml", "ok"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).starts_with("nope.toml:1:1: error: cannot read"),
        "{}",
        stderr(&out)
    );
    let out = fensyn_in(
        dir.path(),
        &["check", "--config", "p/fensyn.toml", "--no-config", "ok"],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "conflicting flags are a usage error"
    );
}

// ---------------------------------------------------------------------------------------------
// pre-commit

/// The hooks of `.pre-commit-hooks.yaml`: id → (entry split into words, args, the keys).
fn hooks() -> Vec<yaml_rust2::Yaml> {
    let text = read(&root().join(".pre-commit-hooks.yaml"));
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    docs[0].as_vec().unwrap().clone()
}

/// Runs hook `id` the way pre-commit does: `entry` (split on spaces), `args`, the file names.
fn run_hook(id: &str, dir: &Path, files: &[&str]) -> Output {
    let hooks = hooks();
    let hook = hooks
        .iter()
        .find(|h| h["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("no hook {id}"));
    assert_eq!(hook["pass_filenames"].as_bool(), Some(true));
    let types: Vec<&str> = hook["types_or"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(types, ["c", "c++"]);
    let entry: Vec<&str> = hook["entry"].as_str().unwrap().split_whitespace().collect();
    assert_eq!(entry[0], "fensyn");
    let mut args: Vec<String> = entry[1..].iter().map(|s| s.to_string()).collect();
    if let Some(extra) = hook["args"].as_vec() {
        args.extend(extra.iter().map(|a| a.as_str().unwrap().to_string()));
    }
    args.extend(files.iter().map(|f| f.to_string()));
    Command::new(env!("CARGO_BIN_EXE_fensyn"))
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn pre_commit_hooks_fail_when_they_change_or_find_something() {
    let dir = tree(&[
        ("src/sb.c", "fixtures/litmus/sb.c"),
        ("src/mp.c", "fixtures/litmus/mp.c"),
        ("src/ok.cpp", "fixtures/cpp/2+2w.cpp"),
        ("src/clean.c", "fixtures/litmus/sb_sc.c"),
    ]);
    let before_clean = read(&dir.path().join("src/clean.c"));
    let out = run_hook("fensyn-check", dir.path(), &["src/clean.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_hook("fensyn-check", dir.path(), &["src/sb.c", "src/clean.c"]);
    assert_eq!(out.status.code(), Some(1));

    let files = ["src/sb.c", "src/mp.c", "src/ok.cpp", "src/clean.c"];
    let out = run_hook("fensyn-fix", dir.path(), &files);
    assert_eq!(
        out.status.code(),
        Some(1),
        "changed files fail the hook: {}",
        stderr(&out)
    );
    for f in ["src/sb.c", "src/mp.c", "src/ok.cpp"] {
        assert!(
            read(&dir.path().join(f)).contains("atomic_thread_fence"),
            "{f}"
        );
    }
    assert_eq!(read(&dir.path().join("src/clean.c")), before_clean);
    // Second run: nothing left to change, the hook passes and so does the check.
    let out = run_hook("fensyn-fix", dir.path(), &files);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_hook("fensyn-check", dir.path(), &files);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // `fix --write` without the flag keeps exit code 0 when it wrote.
    let dir = tree(&[("sb.c", "fixtures/litmus/sb.c")]);
    let out = fensyn_in(dir.path(), &["fix", "--write", "sb.c"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn pre_commit_hooks_file_is_complete() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["fensyn-fix", "fensyn-check"]);
    for h in &hooks {
        for key in ["name", "entry", "language"] {
            assert!(h[key].as_str().is_some(), "{key} of {:?}", h["id"]);
        }
        assert!(matches!(h["language"].as_str(), Some("rust" | "system")));
        let files = h["files"].as_str().unwrap();
        for ext in ["c", "cc", "cpp", "cxx", "c++", "C"] {
            assert!(files.contains(&regex_escape(ext)), "{files} lacks {ext}");
        }
    }
}

fn regex_escape(s: &str) -> String {
    s.replace('+', "\\+")
}

// ---------------------------------------------------------------------------------------------
// --help, usage errors and the manual

#[test]
fn help_has_examples_and_defaults() {
    // The defaults the help text states are the ones used.
    let unroll = format!("[default: {}]", fensyn::checker::DEFAULT_UNROLL);
    let optimal = format!("[default: {}]", fensyn::synth::AUTO_OPTIMAL_SECONDS);
    for (args, needles) in [
        (
            vec!["--help"],
            vec!["Examples:", "fensyn fix", "fensyn.toml"],
        ),
        (
            vec!["check", "--help"],
            vec![
                "Examples:",
                "[default: rc11]",
                &unroll,
                "--output",
                "--config",
                "sarif",
            ],
        ),
        (
            vec!["fix", "--help"],
            vec![
                "Examples:",
                "[default: auto]",
                "[default: count]",
                &optimal,
                "--exit-non-zero-on-fix",
            ],
        ),
    ] {
        let out = fensyn(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = stdout(&out);
        for n in needles {
            assert!(text.contains(n), "{args:?} lacks {n}:\n{text}");
        }
    }
    assert!(
        !stdout(&fensyn(&["--help"])).contains("  man "),
        "man is hidden"
    );
}

#[test]
fn usage_errors_exit_3() {
    for args in [
        vec!["check"],
        vec!["check", "--model", "tso", "a.c"],
        vec!["fix", "--exit-non-zero-on-fix", "a.c"],
        vec!["frobnicate"],
    ] {
        let out = fensyn(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
}

#[test]
fn man_pages_are_roff_naming_every_subcommand() {
    let out = fensyn(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") || page.contains(".TH fensyn"),
        "{page}"
    );
    for sub in ["check", "fix", "robust", "explain", "relax"] {
        assert!(page.contains(sub), "fensyn.1 lacks {sub}");
    }
    assert!(
        !page.contains("fensyn\\-man"),
        "the hidden man command is not listed"
    );
    assert!(!page.contains("fensyn\\-help"), "no page for help");

    let dir = tempfile::tempdir().unwrap();
    let out = fensyn(&["man", "--dir", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let names: Vec<String> = names
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "fensyn-check.1",
            "fensyn-explain.1",
            "fensyn-fix.1",
            "fensyn-relax.1",
            "fensyn-robust.1",
            "fensyn.1"
        ]
    );
    let check = read(&dir.path().join("fensyn-check.1"));
    assert!(
        check.contains(".TH fensyn-check 1"),
        "{}",
        &check[..check.len().min(400)]
    );
    for opt in ["\\-\\-format", "\\-\\-config", "\\-\\-output"] {
        assert!(check.contains(opt), "fensyn-check.1 lacks {opt}");
    }
}

#[test]
fn the_examples_in_help_are_valid_commands() {
    use clap::Parser;
    let mut seen = 0;
    for args in [
        vec!["--help"],
        vec!["check", "--help"],
        vec!["fix", "--help"],
    ] {
        let text = stdout(&fensyn(&args));
        for line in text.lines().filter(|l| l.starts_with("  fensyn ")) {
            let command = line.split('|').next().unwrap();
            let words: Vec<&str> = command.split_whitespace().collect();
            if let Err(e) = fensyn::cli::Cli::try_parse_from(&words) {
                panic!("example `{line}` does not parse: {e}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 12, "{seen} examples");
}
