//! Integration with a project (issue 24): `exclude` and `[[per-file]]` in fensyn.toml,
//! `--pre-commit` (library files without `main`, excluded files), `--format sarif`'s
//! related locations, code flows and fingerprints validated against the SARIF 2.1.0 schema,
//! and the DOT drawing of a failing execution.

mod common;

use common::*;
use std::path::Path;

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap()
}

const LIBRARY: &str =
    "#include <stdatomic.h>\natomic_int l;\nvoid lock(void) { while (atomic_exchange(&l, 1)) ; }\n";

#[test]
fn exclude_skips_files_in_directories_and_in_pre_commit_mode() {
    let dir = tree(&[
        ("fensyn.toml", "exclude = [\"vendor\", \"src/*_gen.c\"]\n"),
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
    let files = [
        "--pre-commit",
        "src/ok.c",
        "src/bad_gen.c",
        "vendor/lib/sb.c",
    ];
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

/// `accept-bound = true`: executions cut at the bound do not make `check` or `fix` of the
/// files the table matches incomplete (a pre-commit hook passes), and the run says so; a buggy
/// file stays buggy, and other files keep exit 4.
#[test]
fn an_accepted_bound_is_not_incomplete() {
    let dir = tree(&[
        (
            "fensyn.toml",
            "[[per-file]]\npath = \"ok/*.c\"\nunroll = 1\naccept-bound = true\n",
        ),
        ("ok/treiber.c", "fixtures/algorithms/treiber.c"),
        ("ok/sb.c", "fixtures/litmus/sb.c"),
        ("other/treiber.c", "fixtures/algorithms/treiber.c"),
    ]);
    for cmd in ["check", "fix"] {
        let out = fensyn_in(dir.path(), &[cmd, "ok/treiber.c"]);
        assert_eq!(code(&out), 0, "{cmd}: {}", stderr(&out));
        assert!(stderr(&out).contains("(accept-bound)"), "{}", stderr(&out));
        assert!(
            stdout(&out).is_empty() || cmd == "check",
            "{}",
            stdout(&out)
        );
    }
    let out = fensyn_in(dir.path(), &["check", "ok/sb.c"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "other/treiber.c", "--unroll", "1"]);
    assert_eq!(code(&out), 4, "{}", stdout(&out));
    // A bad value is an error at its position.
    std::fs::write(
        dir.path().join("fensyn.toml"),
        "[[per-file]]\npath = \"ok/*.c\"\naccept-bound = 1\n",
    )
    .unwrap();
    let out = fensyn_in(dir.path(), &["check", "ok/treiber.c"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("fensyn.toml:3:"), "{}", stderr(&out));
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

// SARIF

/// The validator of the SARIF 2.1.0 schema (tests/data/sarif-schema-2.1.0.json, the OASIS
/// schema as serde-sarif bundles it, kept verbatim). One erratum of the published schema is
/// corrected here: the pattern of the `language` properties (of `run` and `toolComponent`) has
/// a stray `]` that is not a valid regular expression, which the validator refuses; the
/// intended pattern is a two-letter language with an optional two-letter region.
fn sarif_validator() -> jsonschema::Validator {
    const BAD: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    fn fix(v: &mut serde_json::Value, fixed: &mut usize) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k == "pattern" && x == BAD {
                        *x = serde_json::json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
                        *fixed += 1;
                    } else {
                        fix(x, fixed);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| fix(x, fixed)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(root().join("tests/data/sarif-schema-2.1.0.json")).unwrap();
    let mut schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut fixed = 0;
    fix(&mut schema, &mut fixed);
    assert!(fixed > 0, "the erratum is gone: drop the correction");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// Validates `log` against the SARIF 2.1.0 schema (tests/data/sarif-schema-2.1.0.json, the
/// OASIS schema as serde-sarif bundles it).
fn assert_valid_sarif(log: &serde_json::Value) {
    let validator = sarif_validator();
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}\n{log:#}", errors.join("\n"));
}

fn sarif_of(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = fensyn_in(dir, args);
    let log: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    assert_valid_sarif(&log);
    log
}

fn results(log: &serde_json::Value) -> Vec<serde_json::Value> {
    log["runs"][0]["results"].as_array().unwrap().clone()
}

#[test]
fn the_schema_rejects_what_is_not_sarif() {
    // The validation can fail: a result without its message, a level not in the enumeration.
    let bad = serde_json::json!({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"level": "fatal"}]}]
    });
    assert!(sarif_validator().iter_errors(&bad).count() >= 2);
}

#[test]
fn sarif_race_has_the_other_access_a_code_flow_per_thread_and_a_fingerprint() {
    let dir = tree(&[("mp_plain.c", "fixtures/litmus/mp_plain.c")]);
    let log = sarif_of(dir.path(), &["check", "mp_plain.c", "--format", "sarif"]);
    let rs = results(&log);
    let race = rs.iter().find(|r| r["ruleId"] == "race").expect("a race");
    let line = |l: &serde_json::Value| l["physicalLocation"]["region"]["startLine"].as_i64();
    let primary = line(&race["locations"][0]).unwrap();
    let related = &race["relatedLocations"][0];
    assert_eq!(related["message"]["text"], "the other access of the race");
    let mut pair = [primary, line(related).unwrap()];
    pair.sort();
    assert_eq!(pair, [13, 20], "data = 42; and r2 = data;");
    // One thread flow per thread, in thread order, each in program order.
    let flows = race["codeFlows"][0]["threadFlows"].as_array().unwrap();
    let ids: Vec<&str> = flows.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["T0", "T1", "T2"], "{flows:#?}");
    for f in flows {
        let orders: Vec<i64> = f["locations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["executionOrder"].as_i64().unwrap())
            .collect();
        assert!(orders.windows(2).all(|w| w[0] < w[1]), "{orders:?}");
    }
    let essential: Vec<i64> = flows
        .iter()
        .flat_map(|f| f["locations"].as_array().unwrap().clone())
        .filter(|l| l["importance"] == "essential")
        .map(|l| line(&l["location"]).unwrap())
        .collect();
    let mut essential = essential;
    essential.sort();
    assert_eq!(essential, [13, 20]);
    let fp = race["partialFingerprints"]["fensyn/v1"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fp.ends_with(":1"), "{fp}");

    // The same file with lines added above: same fingerprints, lines moved.
    let text = std::fs::read_to_string(dir.path().join("mp_plain.c")).unwrap();
    std::fs::write(
        dir.path().join("mp_plain.c"),
        format!("// A comment added above.\n\n{text}"),
    )
    .unwrap();
    let again = results(&sarif_of(
        dir.path(),
        &["check", "mp_plain.c", "--format", "sarif"],
    ));
    let fps = |rs: &[serde_json::Value]| -> Vec<String> {
        rs.iter()
            .map(|r| {
                r["partialFingerprints"]["fensyn/v1"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(fps(&again), fps(&rs));
    let moved = again.iter().find(|r| r["ruleId"] == "race").unwrap();
    assert_eq!(line(&moved["locations"][0]), Some(primary + 2));
}

#[test]
fn sarif_of_check_fix_and_bad_files_validates_against_the_schema() {
    let dir = tree(&[
        ("sb.c", "fixtures/litmus/sb.c"),
        ("mp.c", "fixtures/litmus/mp.c"),
        (
            "bad.c",
            "int main(void) {\n    void *p = 0;\n    goto *p;\n}\n",
        ),
        ("unfixable.c", "fixtures/litmus/race_final.c"),
    ]);
    let check = sarif_of(dir.path(), &["check", ".", "--format", "sarif"]);
    let rs = results(&check);
    assert!(rs.iter().all(|r| r["codeFlows"].is_array()), "{rs:#?}");
    let fix = sarif_of(dir.path(), &["fix", ".", "--format", "sarif"]);
    let fix_results = results(&fix);
    let fixed: Vec<&serde_json::Value> = fix_results
        .iter()
        .filter(|r| r["fixes"].is_array())
        .collect();
    assert!(!fixed.is_empty());
    for r in fixed {
        let fences: Vec<&serde_json::Value> = r["relatedLocations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| {
                l["message"]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("the fix's fence: insert")
            })
            .collect();
        assert!(!fences.is_empty(), "{r:#}");
    }
}

// Suppression comments

/// `text` with `comment` appended to (or, when `alone`, inserted above) each line containing
/// `needle`.
fn annotate(text: &str, needle: &str, comment: &str, alone: bool) -> String {
    let mut out = String::new();
    for l in text.lines() {
        if l.contains(needle) {
            if alone {
                out.push_str(&format!("    {comment}\n{l}\n"));
            } else {
                out.push_str(&format!("{l} {comment}\n"));
            }
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[test]
fn ignore_comments_silence_the_errors_of_their_line_and_say_so() {
    let race = std::fs::read_to_string(root().join("fixtures/litmus/mp_plain.c")).unwrap();
    let sb = std::fs::read_to_string(root().join("fixtures/litmus/sb.c")).unwrap();
    let dir = tree(&[]);
    let run = |file: &str, text: &str| {
        std::fs::write(dir.path().join(file), text).unwrap();
        fensyn_in(dir.path(), &["check", file])
    };
    // The race's accesses are `data = 42;` and `r2 = data;`.
    let silenced = annotate(&race, "data", "// fensyn: ignore[race]", false);
    let out = run("race.c", &silenced);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains(
            "race.c: note: 1 error silenced by `fensyn: ignore` comments (not reported, not \
             counted as buggy): race at "
        ),
        "{}",
        stderr(&out)
    );
    // Another kind named: the race is still reported.
    let other = annotate(
        &race,
        "data",
        "// fensyn: ignore[assertion, deadlock]",
        false,
    );
    let out = run("race.c", &other);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(!stderr(&out).contains("silenced"), "{}", stderr(&out));
    // A comment alone on its line silences the next code line.
    let above = annotate(&sb, "assert(!(", "// fensyn: ignore", true);
    let out = run("sb.c", &above);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("assertion at 29:"),
        "{}",
        stderr(&out)
    );
    // ... and only that line: on the line before, nothing is silenced.
    let misplaced = annotate(
        &sb,
        "assert(!(",
        "// fensyn: ignore\n    int unused = 0;",
        true,
    );
    let out = run("sb.c", &misplaced);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    // An unknown kind is an input error at its position.
    let bad = annotate(&race, "r2 = data", "// fensyn: ignore[rase]", false);
    let out = run("race.c", &bad);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "race.c:20:34: error: `fensyn: ignore[...]` names an unknown error kind \"rase\""
        ),
        "{}",
        stderr(&out)
    );
}

/// `fix` honours `fensyn: ignore` comments: it repairs the other bugs, re-checks the fixed
/// program with the same silencing (a fence written between a lone comment and its line does
/// not take the comment's place), says what it silenced, and the written file checks clean.
#[test]
fn fix_leaves_silenced_errors_alone_and_the_written_file_checks_clean() {
    // Not a fixture: its expectations hold only with the comments read (the library-level
    // fixture campaigns explore without them).
    let text = include_str!("data/ignored_stats_race.c");
    let dir = tree(&[("s.c", text)]);
    let out = fensyn_in(dir.path(), &["fix", "s.c", "--prove-optimal"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stdout(&out).contains("+\tatomic_thread_fence(memory_order_acquire);"));
    assert!(
        stderr(&out).contains("silenced by `fensyn: ignore`"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("no fence of the fix can be dropped"),
        "{}",
        stderr(&out)
    );
    let out = fensyn_in(dir.path(), &["fix", "s.c", "--write"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = fensyn_in(dir.path(), &["check", "s.c"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("1 error silenced"),
        "{}",
        stderr(&out)
    );
}

/// `explain` reads `fensyn: ignore` comments as `check` does: it explains the bug that is left,
/// never a silenced one, and a program whose only bug is silenced has nothing to explain.
#[test]
fn explain_honours_ignore_comments() {
    let text = include_str!("data/ignored_stats_race.c");
    let dir = tree(&[("s.c", text)]);
    let out = fensyn_in(dir.path(), &["explain", "s.c"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("silenced by `fensyn: ignore`"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("assert"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("race on hits"), "{}", stdout(&out));
    let race = std::fs::read_to_string(root().join("fixtures/litmus/mp_plain.c")).unwrap();
    let silenced = annotate(&race, "data", "// fensyn: ignore[race]", false);
    std::fs::write(dir.path().join("race.c"), silenced).unwrap();
    let out = fensyn_in(dir.path(), &["explain", "race.c"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("nothing to explain"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("1 error silenced"),
        "{}",
        stderr(&out)
    );
}

/// `// fensyn: unroll N` on a loop bounds it and accepts the bound: the check is complete
/// (exit 0, `bounded_accepted` in JSON) where it is incomplete without the comment (exit 4);
/// a malformed comment or one that is not on a loop is an input error at its position.
#[test]
fn an_unroll_comment_bounds_its_loop_and_accepts_the_bound() {
    let text = std::fs::read_to_string(root().join("fixtures/loops/unroll_accepted.c")).unwrap();
    let directive = "// fensyn: unroll 3 (reviewed: later rounds repeat the same increment)";
    assert!(text.contains(directive));
    let dir = tree(&[
        ("accepted.c", text.as_str()),
        ("plain.c", &text.replace(directive, "")),
        ("bad.c", &text.replace("unroll 3", "unroll three")),
        (
            "off.c",
            &text
                .replace(directive, "")
                .replace("(void)arg;", "(void)arg; // fensyn: unroll 2"),
        ),
    ]);
    let out = fensyn_in(dir.path(), &["check", "accepted.c"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("1 cut at a bound the source accepts (`fensyn: unroll`)"),
        "{}",
        stdout(&out)
    );
    let j = json(&fensyn_in(
        dir.path(),
        &["check", "accepted.c", "--format", "json"],
    ));
    assert_eq!(j["complete"], true);
    assert_eq!(j["bounded_accepted"], 1);
    // The bound is the comment's, whatever --unroll says.
    let out = fensyn_in(dir.path(), &["check", "accepted.c", "--unroll", "1"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "plain.c"]);
    assert_eq!(code(&out), 4, "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "bad.c"]);
    assert_eq!(code(&out), 3);
    assert!(stderr(&out).contains("--> bad.c:18:20"), "{}", stderr(&out));
    assert!(stderr(&out).contains("got `three`"), "{}", stderr(&out));
    let out = fensyn_in(dir.path(), &["check", "off.c"]);
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("is not on a loop"),
        "{}",
        stderr(&out)
    );
}

/// A loop cut at the bound is a liveness bug only when its last pass shows it can never end:
/// here its exit depends on the value its RMW returns, so at a bound below that value the cut
/// is only a cut (exit 4), and at the default bound the loop ends (exit 0).
#[test]
fn a_cut_loop_whose_rmw_result_decides_its_exit_is_not_a_liveness_bug() {
    let text = "#include <pthread.h>\n#include <stdatomic.h>\n#include <stdlib.h>\n\
                atomic_int stop;\natomic_int rounds;\n\
                void *worker(void *arg)\n{\n\
                \twhile (!atomic_load_explicit(&stop, memory_order_acquire)) {\n\
                \t\tif (atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed) == 5)\n\
                \t\t\tatomic_store_explicit(&stop, 1, memory_order_release);\n\
                \t}\n\treturn NULL;\n}\n\
                int main(void)\n{\n\tpthread_t t;\n\
                \tif (pthread_create(&t, NULL, worker, NULL))\n\t\tabort();\n\
                \tpthread_join(t, NULL);\n\treturn 0;\n}\n";
    let dir = tree(&[("counted.c", text)]);
    let out = fensyn_in(dir.path(), &["check", "counted.c", "--unroll", "3"]);
    assert_eq!(code(&out), 4, "{}{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("liveness"), "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["check", "counted.c"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
}
