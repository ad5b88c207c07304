//! The command-line contract: exit codes, error format, `--write`, formats.

mod common;

use common::*;

#[test]
fn missing_file_is_an_input_error() {
    let out = fensyn(&["check", "no/such/file.c"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        has_diagnostic(&err, "no/such/file.c:1:1: error: cannot read file"),
        "{err}"
    );
}

#[test]
fn syntax_and_unsupported_errors_have_positions() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "syntax.c",
            "int main(void) {\n    int x = ;\n    return 0;\n}\n",
            " --> syntax.c:2:",
            "error[syntax]",
        ),
        (
            "goto.c",
            "#include <stdatomic.h>\natomic_int x;\nint main(void) {\n    goto *x;\nend:\n    return 0;\n}\n",
            " --> goto.c:4:5\n",
            "computed goto",
        ),
        (
            "call.c",
            "#include <stdlib.h>\nint main(void) {\n    srand(1);\n    return 0;\n}\n",
            " --> call.c:3:5\n",
            "srand",
        ),
    ];
    for (name, text, prefix, needle) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        for cmd in ["check", "fix"] {
            let out = fensyn_in(dir.path(), &[cmd, name]);
            assert_eq!(out.status.code(), Some(3), "{cmd} {name}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains(prefix), "{cmd} {name}: {err}");
            assert!(err.contains(needle), "{cmd} {name}: {err}");
            assert!(stdout(&out).is_empty());
        }
    }
}

#[test]
fn check_exit_codes_and_json() {
    let out = fensyn(&["check", "fixtures/litmus/sb.c"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("assertion `!(a == 0 && b == 0)` failed"),
        "{text}"
    );
    assert!(text.contains("shortest failing execution"), "{text}");

    let out = fensyn(&["check", "fixtures/litmus/sb_sc.c", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    for key in [
        "file",
        "model",
        "complete",
        "executions",
        "blocked",
        "buggy",
        "errors",
    ] {
        assert!(j.get(key).is_some(), "missing {key} in {j}");
    }
    assert_eq!(j["model"], "rc11");
}

#[test]
fn limits_make_the_result_incomplete() {
    let out = fensyn(&[
        "check",
        "fixtures/litmus/sb_sc.c",
        "--max-executions",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["complete"], false);
    let out = fensyn(&[
        "fix",
        "fixtures/litmus/sb.c",
        "--max-executions",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(4));
    let j = json(&out);
    assert_eq!(j["status"], "incomplete");
}

#[test]
fn fix_prints_a_patch_that_git_apply_accepts() {
    let (dir, path) = copy_fixture("fixtures/litmus/mp.c");
    let out = fensyn_in(dir.path(), &["fix", "mp.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(diff.starts_with("--- a/mp.c\n+++ b/mp.c\n"), "{diff}");
    assert!(
        diff.contains("+    atomic_thread_fence(memory_order_release);"),
        "{diff}"
    );
    assert!(
        diff.contains("+    atomic_thread_fence(memory_order_acquire);"),
        "{diff}"
    );
    // patch -p1 / git apply semantics: apply the diff with `git apply` when git is present.
    std::fs::write(dir.path().join("fix.diff"), &diff).unwrap();
    let applied = std::process::Command::new("git")
        .args(["apply", "--unsafe-paths", "fix.diff"])
        .current_dir(dir.path())
        .status();
    if let Ok(st) = applied {
        assert!(st.success(), "git apply failed");
        let out = fensyn_in(dir.path(), &["check", "mp.c"]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
    drop(path);
}

#[test]
fn write_replaces_the_file_and_keeps_permissions() {
    let (dir, path) = copy_fixture("fixtures/litmus/sb.c");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let before = std::fs::read_to_string(&path).unwrap();
    let out = fensyn_in(dir.path(), &["fix", "sb.c", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = std::fs::read_to_string(&path).unwrap();
    assert_ne!(before, after);
    assert_eq!(
        after
            .matches("atomic_thread_fence(memory_order_seq_cst);")
            .count(),
        2
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // The written program is clean: fixing again changes nothing.
    let out = fensyn_in(dir.path(), &["fix", "sb.c", "--write"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
}

#[test]
fn write_refuses_a_file_that_changed() {
    let (dir, path) = copy_fixture("fixtures/litmus/sb.c");
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{original}// edited\n")).unwrap();
    let res = fensyn::cli::write_atomically(&path, &original, "replacement");
    assert!(res.is_err());
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .ends_with("// edited\n"));
    drop(dir);
}

#[test]
fn unfixable_program_exits_2_and_shows_the_execution() {
    let out = fensyn(&["fix", "fixtures/litmus/race_final.c"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // The execution is prose: on stderr, stdout (the patch) stays empty.
    assert_eq!(stdout(&out), "");
    let text = stderr(&out);
    assert!(text.contains("not fixable with fences"), "{text}");
    assert!(
        text.contains("T1 (t1)") || text.contains("T2 (t2)"),
        "{text}"
    );
}

#[test]
fn dot_output_is_a_graph() {
    let out = fensyn(&["check", "fixtures/litmus/mp.c", "--format", "dot"]);
    assert_eq!(out.status.code(), Some(1));
    let dot = stdout(&out);
    assert!(dot.starts_with("digraph execution {"), "{dot}");
    assert!(dot.contains("label=rf"));
}

#[test]
fn output_is_deterministic() {
    let a = fensyn(&["fix", "fixtures/litmus/isa2.c", "--format", "json"]);
    let b = fensyn(&["fix", "fixtures/litmus/isa2.c", "--format", "json"]);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn timings_are_reported_only_when_asked_for() {
    let j = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["fix", "fixtures/litmus/sb.c", "--format", "json"];
        args.extend_from_slice(extra);
        let out = fensyn(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        json(&out)
    };
    let plain = j(&[]);
    assert!(plain.get("timings").is_none(), "{plain}");
    assert!(
        plain["iterations"].as_u64().is_some_and(|n| n >= 1),
        "{plain}"
    );
    let timed = j(&["--timings", "--prove-optimal"]);
    let t = &timed["timings"];
    for key in ["check", "synth", "recheck", "prove", "total"] {
        assert!(t[key].as_f64().is_some_and(|s| s >= 0.0), "{key}: {t}");
    }
    let parts = ["check", "synth", "recheck", "prove"]
        .iter()
        .map(|k| t[k].as_f64().unwrap())
        .sum::<f64>();
    assert!(t["total"].as_f64().unwrap() + 1e-6 >= parts, "{t}");
}

#[test]
fn lang_follows_the_extension_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("fixtures/cpp/sb.cpp")).unwrap();
    std::fs::write(dir.path().join("sb.txt"), &text).unwrap();
    std::fs::write(dir.path().join("sb.cc"), &text).unwrap();
    // By extension: .cc is C++; .txt is C, where `std::atomic<int>` is not understood.
    let out = fensyn_in(dir.path(), &["check", "sb.cc"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = fensyn_in(dir.path(), &["check", "sb.txt"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    // Told: the fix is re-parsed as C++ and its fences are spelled in C++.
    let out = fensyn_in(dir.path(), &["fix", "sb.txt", "--lang", "c++"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("+    std::atomic_thread_fence(std::memory_order_seq_cst);"),
        "{}",
        stdout(&out)
    );
    let out = fensyn_in(dir.path(), &["check", "sb.cc", "--lang", "c"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let out = fensyn_in(dir.path(), &["fix", "sb.cc", "--lang", "c++", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(dir.path().join("sb.cc")).unwrap();
    assert_eq!(written.matches("std::atomic_thread_fence").count(), 2);
}

/// The c11 model (the thesis's, with C++11's fence rules) differs from rc11 where the thesis
/// says it does: seq_cst fences repair store buffering and 2+2W under both (2+2W through
/// C++11 §29.3p7 under c11), but cannot forbid the IRIW or RWC outcomes of relaxed accesses
/// under c11 (thesis Figure 6.14), which RC11's psc_F does forbid.
#[test]
fn c11_and_rc11_differ_on_iriw_and_rwc() {
    for (file, c11, rc11) in [
        ("fixtures/litmus/sb.c", 1, 1),
        ("fixtures/litmus/2+2w.c", 1, 1),
        ("fixtures/litmus/iriw.c", 2, 1),
        ("fixtures/litmus/rwc_c11.c", 2, 1),
    ] {
        for (model, want) in [("c11", c11), ("rc11", rc11)] {
            let out = fensyn(&["fix", file, "--model", model, "--format", "json"]);
            assert_eq!(
                out.status.code(),
                Some(want),
                "{file} {model}: {}",
                stderr(&out)
            );
        }
    }
    let out = fensyn(&[
        "check",
        "fixtures/litmus/iriw.c",
        "--model",
        "c11",
        "--format",
        "json",
    ]);
    let j = json(&out);
    assert_eq!(j["executions"], 16);
    assert_eq!(j["model"], "c11");
}

/// The failing execution is drawn as one column per thread, one row per event (in the order
/// they were added), with the rf source or mo position of each event and the source lines.
#[test]
fn failing_execution_is_drawn_in_thread_columns() {
    let out = fensyn(&["check", "fixtures/litmus/sb.c"]);
    let text = stdout(&out);
    let header = text
        .lines()
        .find(|l| l.contains("T1 (t1)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains("│ T2 (t2)"), "{text}");
    // T1's relaxed load of y reads the initial value, in T1's column only.
    let row = text.lines().find(|l| l.contains("Rrlx y = 0")).unwrap();
    assert!(row.contains("← init"), "{row}");
    assert_eq!(
        row.find("Rrlx").map(|i| i > header.find("T1").unwrap()),
        Some(true)
    );
    assert!(
        text.contains("| a = atomic_load_explicit(&y, memory_order_relaxed);"),
        "{text}"
    );
    // Too wide for columns (a long source line, many threads): thread by thread.
    let out = fensyn(&["check", "fixtures/algorithms/szymanski_relaxed.c"]);
    assert!(stdout(&out).contains("shortest failing execution:"));
}

/// `--prove-optimal` re-checks every variant of the fix with one fence removed or weakened by
/// one step: each must still have a buggy execution.
#[test]
fn prove_optimal_shows_every_variant_still_buggy() {
    for file in [
        "fixtures/litmus/isa2.c",
        "fixtures/litmus/sb_fence_rel.c",
        "fixtures/data/array_mp.c",
        "fixtures/cpp/mp.cpp",
    ] {
        let out = fensyn(&["fix", file, "--prove-optimal", "--format", "json"]);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        let j = json(&out);
        let proof = j["proof"].as_array().unwrap();
        assert!(
            proof.len() >= j["fences"].as_array().unwrap().len(),
            "{file}"
        );
        for v in proof {
            // Each variant's exploration stops at its first buggy execution, the evidence.
            assert_eq!(v["buggy"].as_u64(), Some(1), "{file}: {v}");
            let bug = &v["first_bug"];
            assert!(bug["kind"].is_string(), "{file}: {v}");
            assert!(bug["line"].as_u64().is_some(), "{file}: {v}");
            assert!(v["executions"].as_u64().unwrap() >= 1, "{file}: {v}");
        }
    }
    let out = fensyn(&["fix", "fixtures/litmus/isa2.c", "--prove-optimal"]);
    assert!(
        stderr(&out).contains("fence weakened to acquire"),
        "{}",
        stderr(&out)
    );
    // The failed assertion of isa2.c (line 37), located in the input, not in the variant.
    assert!(
        stderr(&out)
            .contains("still buggy (execution 7: failed assertion at fixtures/litmus/isa2.c:37:5)"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no fence of the fix can be dropped or weakened"));
}

/// The hardware cost models price fences by the instructions compilers emit: on x86 only
/// seq_cst fences cost (mfence); on ARMv8 acquire is dmb ishld (1), the rest dmb ish (2).
#[test]
fn cost_models_price_fences_by_instructions() {
    for (file, cost, price) in [
        ("fixtures/litmus/mp.c", "x86", 0),
        ("fixtures/litmus/sb.c", "x86", 2),
        ("fixtures/litmus/mp.c", "armv8", 3),
        ("fixtures/litmus/sb.c", "armv8", 4),
    ] {
        let out = fensyn(&["fix", file, "--cost", cost, "--format", "json"]);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        let j = json(&out);
        assert_eq!(j["cost"], cost);
        assert_eq!(j["price"], price, "{file} {cost}");
    }
    let out = fensyn(&["fix", "fixtures/litmus/sb.c", "--format", "json"]);
    let j = json(&out);
    assert_eq!(j["cost"], "count");
    assert!(j.get("price").is_none());
}

/// The default mode is optimal with a time limit, after which the fast mode is used and the
/// user is told so.
#[test]
fn auto_mode_falls_back_to_fast_and_says_so() {
    let out = fensyn(&["fix", "fixtures/litmus/isa2.c", "--format", "json"]);
    let j = json(&out);
    assert_eq!(j["mode"], "optimal");
    assert!(j.get("fell_back").is_none());
    let out = fensyn(&[
        "fix",
        "fixtures/litmus/isa2.c",
        "--optimal-timeout",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j = json(&out);
    assert_eq!(j["mode"], "fast");
    assert_eq!(j["fell_back"], true);
    assert_eq!(j["verified"]["buggy"], 0);
    let out = fensyn(&["fix", "fixtures/litmus/isa2.c", "--optimal-timeout", "0"]);
    assert!(
        stderr(&out).contains("did not finish within 0 s"),
        "{}",
        stderr(&out)
    );
}

/// Past `--collect-limit` the optimal mode finds the rest of the requirements in rounds: the
/// same fences, the same written fix, and it says so.
#[test]
fn collect_limit_switches_to_rounds_with_the_same_fix() {
    let run = |extra: &[&str]| {
        let mut args = vec!["fix", "fixtures/litmus/isa2.c", "--mode", "optimal"];
        args.extend_from_slice(extra);
        fensyn(&args)
    };
    let full = run(&["--format", "json"]);
    let capped = run(&["--collect-limit", "0", "--format", "json"]);
    let j = json(&full);
    let k = json(&capped);
    assert!(j.get("lazy_after").is_none(), "{j}");
    assert_eq!(k["lazy_after"], 1, "{k}");
    assert_eq!(k["mode"], "optimal");
    assert_eq!(k["status"], j["status"]);
    assert_eq!(k["fences"], j["fences"]);
    assert_eq!(k["diff"], j["diff"]);
    assert_eq!(k["verified"]["buggy"], 0);
    let text = run(&["--collect-limit", "0"]);
    assert!(
        stderr(&text).contains("stopped collecting at 1 requirement (--collect-limit)"),
        "{}",
        stderr(&text)
    );
}

/// An unfixable program may come with a suggestion outside the fence-only fix: one access to
/// strengthen. RWC with relaxed accesses under c11 needs T1's store of x seq_cst (line 16); a
/// data race on plain variables gets none (no order on one access orders it).
#[test]
fn unfixable_results_suggest_an_access_to_strengthen_when_one_helps() {
    let out = fensyn(&[
        "fix",
        "fixtures/litmus/rwc_c11.c",
        "--model",
        "c11",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let j = json(&out);
    assert_eq!(j["suggestion"]["order"], "seq_cst");
    assert_eq!(j["suggestion"]["previous"], "relaxed");
    assert_eq!(j["suggestion"]["line"], 16);
    let out = fensyn(&["fix", "fixtures/litmus/rwc_c11.c", "--model", "c11"]);
    assert!(
        stderr(&out).contains("suggestion (not a fence fix)"),
        "{}",
        stderr(&out)
    );
    let out = fensyn(&["fix", "fixtures/litmus/race_final.c", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let j = json(&out);
    assert!(j.get("suggestion").is_none());
}

/// A spin on a helper that only reads is an await loop, and the helper gets no fence slot: the
/// fence goes after the loop (a fence inside would make the loop an ordinary one, explored up
/// to the loop bound). Two statements on one line are ordered without "a later pass".
#[test]
fn await_loop_helpers_get_no_fences() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spin.cpp"),
        "#include <atomic>\n#include <thread>\n#include <cassert>\n\
         std::atomic<int> x{0};\nint data = 0;\n\
         bool ready(int v) { return v == 1; }\n\
         void t() { while (!ready(x.load(std::memory_order_relaxed))) ; assert(data == 1); }\n\
         int main() { std::thread a(t); data = 1; x.store(1, std::memory_order_relaxed); \
         a.join(); return 0; }\n",
    )
    .unwrap();
    let out = fensyn_in(dir.path(), &["fix", "spin.cpp", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let j = json(&out);
    let diff = j["diff"].as_str().unwrap();
    assert!(
        diff.contains("+void t() { while (!ready(x.load(std::memory_order_relaxed))) ; std::atomic_thread_fence(std::memory_order_acquire); /* fensyn: read x before data; pairs with the release fence in main() */ assert(data == 1); }"),
        "{diff}"
    );
    assert!(!diff.contains("+bool ready"), "{diff}");
    // The fixed program is verified in full: no execution cut by the loop bound.
    assert_eq!(j["verified"]["buggy"], 0, "{j}");
    assert_eq!(j["verified"]["bounded"], 0, "{j}");
}

/// The default equivalence (rf, for a program whose accesses are all seq_cst) runs the
/// canonical-order explorer, whose dead ends are exponential on indexer(12); `check` notices
/// and explores graphs instead (TruSt: 8 executions), saying so. Asked for explicitly, graphs
/// give the same count; a program where rf works keeps it.
#[test]
fn default_rf_gives_way_to_graphs_when_its_dead_ends_explode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("indexer.c");
    std::fs::write(&path, families::indexer(12)).unwrap();
    let file = path.to_str().unwrap();
    // (Without the fallback the check would not end: the timeout makes that a failure.)
    let out = fensyn(&[
        "check",
        file,
        "--unroll",
        "13",
        "--timeout",
        "60",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["equiv"], "graph", "{j}");
    assert_eq!(j["executions"], families::indexer_count(12));
    assert!(
        stderr(&out).contains("gave up after") && stderr(&out).contains("--equiv graph"),
        "{}",
        stderr(&out)
    );
    let lastzero = dir.path().join("lastzero.c");
    std::fs::write(&lastzero, families::lastzero(6)).unwrap();
    let out = fensyn(&[
        "check",
        lastzero.to_str().unwrap(),
        "--unroll",
        "8",
        "--format",
        "json",
    ]);
    let j = json(&out);
    assert_eq!(j["equiv"], "rf", "{j}");
    assert_eq!(j["executions"], families::lastzero_count(6));
    assert!(!stderr(&out).contains("gave up"), "{}", stderr(&out));
}

/// `--unroll N` bounds each loop's iterations every time a thread enters it, not their sum over
/// the thread, and counting `for` loops run to the end without a bound: three calls of a CAS
/// retry loop from a counting loop, two threads. A CAS fails at most three times in a row (once
/// per increment of the other thread), so `--unroll 3` explores everything and `--unroll 2`
/// cuts; counted across calls, three iterations would not even cover the calls.
#[test]
fn unroll_bounds_each_entry_of_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.c");
    std::fs::write(
        &path,
        r#"#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;

void bump(void) {
    int e = atomic_load_explicit(&x, memory_order_relaxed);
    while (!atomic_compare_exchange_strong_explicit(&x, &e, e + 1, memory_order_relaxed,
                                                    memory_order_relaxed))
        ;
}

void *t(void *arg) {
    for (int i = 0; i < 3; i++)
        bump();
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, t, NULL);
    pthread_create(&b, NULL, t, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(atomic_load_explicit(&x, memory_order_relaxed) == 6);
    return 0;
}
"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let run = |unroll: &str| {
        let out = fensyn(&["check", file, "--unroll", unroll, "--format", "json"]);
        let j = json(&out);
        (out.status.code(), j)
    };
    let (code, j) = run("3");
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(
        (j["complete"].as_bool(), j["bounded"].as_u64()),
        (Some(true), Some(0))
    );
    assert_eq!(j["buggy"], 0);
    let all = j["executions"].as_u64().unwrap();
    // More iterations change nothing.
    assert_eq!(run("8").1["executions"], all);
    let (code, j) = run("2");
    assert_eq!(code, Some(4), "{j}");
    assert!(j["bounded"].as_u64().unwrap() > 0, "{j}");
    assert!(j["executions"].as_u64().unwrap() < all, "{j}");
}

/// A counting loop that polls a flag a thousand times runs to the end without a bound (1,001
/// executions: the flag is first seen after k polls, or never). The explorer goes down one
/// level per poll with two writes to read, so this also runs it a thousand levels deep
/// (tests/robustness.rs does the same inside a test thread's 2 MB stack).
#[test]
fn a_thousand_polls_run_to_the_end_without_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("polls.c");
    std::fs::write(
        &path,
        r#"#include <pthread.h>
#include <stdatomic.h>

atomic_int f;

void *t(void *arg) {
    int k;
    for (k = 0; k < 1000 && atomic_load_explicit(&f, memory_order_relaxed) == 0; k++)
        ;
    return NULL;
}

int main(void) {
    pthread_t a;
    pthread_create(&a, NULL, t, NULL);
    atomic_store_explicit(&f, 1, memory_order_relaxed);
    pthread_join(a, NULL);
    return 0;
}
"#,
    )
    .unwrap();
    for jobs in ["1", "2"] {
        let out = fensyn(&[
            "check",
            path.to_str().unwrap(),
            "--jobs",
            jobs,
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let j = json(&out);
        assert_eq!(
            (j["executions"].as_u64(), j["bounded"].as_u64()),
            (Some(1001), Some(0)),
            "{j}"
        );
    }
}

/// `-D NAME=VALUE` defines a macro before the first line, like a C compiler's: it overrides
/// an `#ifndef` default, and `fix` re-parses the patched source (re-check, `--prove-optimal`
/// variants) with the same macros.
#[test]
fn define_sets_macros_for_check_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter.c");
    std::fs::write(
        &counter,
        "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n#ifndef N\n#define N 2\n#endif\n\
         atomic_int c;\nvoid *inc(void *arg) {\n    for (int i = 0; i < N; i++)\n        \
         atomic_fetch_add_explicit(&c, 1, memory_order_relaxed);\n    return NULL;\n}\n\
         int main(void) {\n    pthread_t a, b;\n    pthread_create(&a, NULL, inc, NULL);\n    \
         pthread_create(&b, NULL, inc, NULL);\n    pthread_join(a, NULL);\n    pthread_join(b, NULL);\n    \
         assert(atomic_load_explicit(&c, memory_order_relaxed) == 2 * N);\n    return 0;\n}\n",
    )
    .unwrap();
    let file = counter.to_str().unwrap();
    let executions = |extra: &[&str]| {
        let mut args = vec!["check", file, "--format", "json"];
        args.extend_from_slice(extra);
        let out = fensyn(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let j = json(&out);
        j["executions"].as_u64().unwrap()
    };
    // The interleavings of the two threads' N increments: C(2N, N).
    assert_eq!(executions(&[]), 6);
    assert_eq!(executions(&["-DN=3"]), 20);
    assert_eq!(executions(&["--define", "N=0x4"]), 70);
    assert_eq!(executions(&["-D", "N"]), 2);
    let out = fensyn(&["check", file, "-D", "3N=1"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("not a macro name"),
        "{}",
        stderr(&out)
    );
    // Store buffering over N threads in a ring, N only on the command line.
    let ring = dir.path().join("ring.c");
    std::fs::write(
        &ring,
        "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
         atomic_int x[N];\nint r[N];\n\
         void *t(void *arg) {\n    int me = (int)(long)arg;\n    \
         atomic_store_explicit(&x[me], 1, memory_order_relaxed);\n    \
         r[me] = atomic_load_explicit(&x[(me + 1) % N], memory_order_relaxed);\n    return NULL;\n}\n\
         int main(void) {\n    pthread_t th[N];\n    for (int i = 0; i < N; i++)\n        \
         pthread_create(&th[i], NULL, t, (void *)(long)i);\n    for (int i = 0; i < N; i++)\n        \
         pthread_join(th[i], NULL);\n    assert(r[0] == 1 || r[1] == 1);\n    return 0;\n}\n",
    )
    .unwrap();
    let ring = ring.to_str().unwrap();
    assert_eq!(fensyn(&["check", ring]).status.code(), Some(3));
    let out = fensyn(&["fix", ring, "-DN=2", "--prove-optimal", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["status"], "fixed", "{j}");
    assert_eq!(j["verified"]["buggy"], 0, "{j}");
    assert_eq!(j["inserted"], 1, "{j}");
}

/// Every distinct error is listed with its exact count, however many executions fail (more
/// than the 1,000 buggy graphs `check` keeps), sequentially and on several threads.
#[test]
fn check_counts_every_buggy_execution() {
    for jobs in ["1", "2"] {
        let out = fensyn(&[
            "check",
            "fixtures/control/snapshot_counts.c",
            "--jobs",
            jobs,
        ]);
        assert_eq!(out.status.code(), Some(1));
        let text = stdout(&out);
        assert!(
            text.contains(
                "error[assertion]: assertion `seen == 0 || seen == 10` failed\n  --> \
                 fixtures/control/snapshot_counts.c:39:5"
            ) && text.contains("in 4088 of 4096 explored executions"),
            "{text}"
        );
        assert!(
            text.contains(
                "error[assertion]: assertion `r == 0 || p == 42` failed\n  --> \
                 fixtures/control/snapshot_counts.c:47:5"
            ) && text.contains("in 1024 of 4096 explored executions"),
            "{text}"
        );
        let out = fensyn(&[
            "check",
            "fixtures/control/snapshot_counts.c",
            "--format",
            "json",
            "--jobs",
            jobs,
        ]);
        let j = json(&out);
        let counts: Vec<u64> = j["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["executions"].as_u64().unwrap())
            .collect();
        assert_eq!(counts, [4088, 1024], "{j}");
        assert_eq!(j["buggy"], 4090, "{j}");
    }
}

/// The failing execution shown is the one with the fewest events, not the first found (here
/// the first found takes the slow path and reads three more variables).
#[test]
fn check_shows_the_shortest_failing_execution() {
    for jobs in ["1", "2"] {
        let out = fensyn(&[
            "check",
            "fixtures/control/shortest_failing.c",
            "--jobs",
            jobs,
        ]);
        let text = stdout(&out);
        assert!(text.contains("shortest failing execution:"), "{text}");
        assert!(text.contains("Rrlx x = 1"), "{text}");
        assert!(!text.contains("Rrlx a"), "{text}");
        let out = fensyn(&[
            "check",
            "fixtures/control/shortest_failing.c",
            "--format",
            "dot",
        ]);
        assert!(!stdout(&out).contains("Rrlx a"), "{}", stdout(&out));
    }
}

/// Recursion is inlined `--recursion` calls deep (1 by default); an execution that needs a
/// deeper call is cut like one past the loop bound: incomplete, exit 4, with a warning naming
/// both bounds. Within the bound the verdict is the program's.
#[test]
fn recursion_is_inlined_to_its_bound_and_cut_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.c");
    // Mutual recursion in a thread, direct recursion in main: sum(2) needs 2 nested calls.
    std::fs::write(
        &path,
        "#include <stdatomic.h>\n#include <pthread.h>\n#include <assert.h>\natomic_int x;\n\
         int odd(int n);\nint even(int n) { return n == 0 ? 1 : odd(n - 1); }\n\
         int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n\
         int sum(int n) { if (n == 0) return 0; return n + sum(n - 1); }\n\
         void *t(void *a) { atomic_store_explicit(&x, even(2), memory_order_relaxed); return NULL; }\n\
         int main(void) {\n    pthread_t h;\n    pthread_create(&h, NULL, t, NULL);\n\
         \x20   assert(sum(2) == 3);\n    pthread_join(h, NULL);\n\
         \x20   assert(atomic_load_explicit(&x, memory_order_relaxed) == 1);\n    return 0;\n}\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let out = fensyn(&["check", file, "--format", "json"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(
        (j["complete"].as_bool(), j["buggy"].as_u64()),
        (Some(false), Some(0))
    );
    let out = fensyn(&["check", file]);
    assert!(
        stdout(&out).contains("cut at the loop or recursion bound; raise --unroll or --recursion"),
        "{}",
        stdout(&out)
    );
    // Two nested calls are enough for both; the assertions hold.
    let out = fensyn(&["check", file, "--recursion", "2", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["executions"].as_u64(), Some(1));
    // A wrong claim about the recursion's result is found within the bound.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("== 3", "== 4"),
    )
    .unwrap();
    let out = fensyn(&["check", file, "--recursion", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}
