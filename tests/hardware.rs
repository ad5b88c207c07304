//! The hardware models on the command line: `--model tso|pso`, `fix --model`, `robust`,
//! `fix --goal sc` and `check --on-hardware`, on the seeds' programs (docs/hardware-models.md).
//!
//! Expected results come from the seed papers: the TSO/PSO paper's Table 1 (dekker, lamport,
//! peterson and szymanski fail under TSO and PSO without fences; fences for TSO fix TSO only,
//! fences for PSO fix both) and the MoCA paper's IRIW example (a C11 violation no
//! multi-copy-atomic machine shows).

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn copy_to(dir: &Path, fixture: &str, name: &str) -> PathBuf {
    let dst = dir.join(name);
    std::fs::copy(root().join(fixture), &dst).unwrap();
    dst
}

fn run(args: &[&str]) -> (Option<i32>, Value, String) {
    let out = fensyn(args);
    let text = stdout(&out);
    let json = one_file(&text).unwrap_or(Value::Null);
    (out.status.code(), json, format!("{text}{}", stderr(&out)))
}

/// `check FILE --model M` (JSON): (buggy executions, exit code). Safety only
/// (`--no-liveness`): the seeds' szymanski reads the other flag twice in its exit wait, a
/// liveness bug under SC too (see fixtures/algorithms/szymanski.c) that no fence fixes.
fn buggy_under(file: &str, model: &str, extra: &[&str]) -> (u64, Option<i32>) {
    let mut args = vec![
        "check",
        file,
        "--model",
        model,
        "--format",
        "json",
        "--no-liveness",
    ];
    args.extend(extra);
    let (code, j, text) = run(&args);
    let buggy = j["buggy"]
        .as_u64()
        .unwrap_or_else(|| panic!("{file} under {model}: {text}"));
    (buggy, code)
}

/// The TSO/PSO seed paper's Table 1 pattern, with fences found by `fix --model`.
#[test]
fn table_1_fences_for_tso_fix_tso_only_and_fences_for_pso_fix_both() {
    let dir = tempfile::tempdir().unwrap();
    for (prog, extra) in [
        ("dekker", &["--unroll", "2"][..]),
        ("lamport", &[][..]),
        ("peterson", &[][..]),
        ("szymanski", &[][..]),
    ] {
        let fixture = format!("fixtures/hardware/{prog}.c");
        // Correct under SC, broken under TSO and PSO without fences.
        assert_eq!(buggy_under(&fixture, "sc", extra).0, 0, "{prog} under sc");
        for model in ["tso", "pso"] {
            let (b, code) = buggy_under(&fixture, model, extra);
            assert!(b > 0, "{prog} has no bug under {model}");
            assert_eq!(code, Some(1), "{prog} under {model}");
        }
        // Fences for TSO: seq_cst fences (mfence) only; they fix TSO, not PSO.
        let tso = copy_to(dir.path(), &fixture, &format!("{prog}_tso.c"));
        let tso = tso.to_str().unwrap();
        let mut args = vec!["fix", tso, "--model", "tso", "--write", "--format", "json"];
        args.extend(extra);
        let (code, j, text) = run(&args);
        assert_eq!(code, Some(0), "fix {prog} --model tso: {text}");
        let fences = j["fences"].as_array().unwrap();
        assert!(!fences.is_empty());
        for f in fences {
            assert_eq!(f["order"], "seq_cst", "{prog}: {f}");
            assert_eq!(f["instruction"], "mfence", "{prog}: {f}");
        }
        assert_eq!(buggy_under(tso, "tso", extra).0, 0, "{prog} fixed for tso");
        assert!(
            buggy_under(tso, "pso", extra).0 > 0,
            "{prog}: the TSO fences already fix PSO"
        );
        // Fences for PSO fix both.
        let pso = copy_to(dir.path(), &fixture, &format!("{prog}_pso.c"));
        let pso = pso.to_str().unwrap();
        let mut args = vec!["fix", pso, "--model", "pso", "--write", "--format", "json"];
        args.extend(extra);
        let (code, j, text) = run(&args);
        assert_eq!(code, Some(0), "fix {prog} --model pso: {text}");
        assert!(
            j["fences"].as_array().unwrap().len() > fences.len(),
            "{prog}: PSO needs more fences than TSO"
        );
        assert_eq!(buggy_under(pso, "pso", extra).0, 0, "{prog} fixed for pso");
        assert_eq!(
            buggy_under(pso, "tso", extra).0,
            0,
            "{prog} fixed for pso, on tso"
        );
    }
}

/// Under PSO a release fence is `stbar` and fixes MP; the text output names the instruction.
#[test]
fn fix_names_the_machine_instruction() {
    let out = fensyn(&["fix", "fixtures/hardware/mp_pso.c", "--model", "pso"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("memory_order_release fence = stbar (store-store) on PSO"),
        "{err}"
    );
    let out = fensyn(&["fix", "fixtures/hardware/sb_tso.c", "--model", "tso"]);
    assert!(stderr(&out).contains("memory_order_seq_cst fence = mfence on x86-TSO"));
}

/// The MoCA seed's example: RC11 reports the assertion, x86 cannot show it; SB's bug can
/// happen on x86. The flag never changes the exit code or hides an error.
#[test]
fn on_hardware_ranks_c11_only_bugs_without_hiding_them() {
    let (code, j, text) = run(&[
        "check",
        "fixtures/hardware/moca_iriw.c",
        "--on-hardware",
        "x86",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(j["errors"].as_array().unwrap().len(), 1);
    let e = &j["on_hardware"]["entries"][0];
    assert_eq!(e["verdict"], "c11-only", "{text}");
    assert_eq!(e["possible"], 0);
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.contains("(R x) → T3 line"), "{reason}");

    let out = fensyn(&[
        "check",
        "fixtures/hardware/moca_iriw.c",
        "--on-hardware",
        "x86",
    ]);
    let text = stdout(&out);
    assert!(text.contains("x86 cannot show it"), "{text}");
    assert!(text.contains("still a bug in the source"), "{text}");

    let (code, j, _) = run(&[
        "check",
        "fixtures/litmus/sb.c",
        "--on-hardware",
        "x86",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(j["on_hardware"]["entries"][0]["verdict"], "possible");

    // A race is a C-level bug on every machine.
    let (_, j, _) = run(&[
        "check",
        "fixtures/litmus/mp_plain.c",
        "--on-hardware",
        "x86",
        "--format",
        "json",
    ]);
    assert_eq!(j["on_hardware"]["entries"][0]["verdict"], "source");

    // Asking a hardware model about hardware is a usage error.
    let out = fensyn(&[
        "check",
        "fixtures/litmus/sb.c",
        "--model",
        "tso",
        "--on-hardware",
        "x86",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("--on-hardware"));
}

#[test]
fn robust_reports_the_smallest_non_sc_execution() {
    // SB is not robust under rc11 or tso: its smallest non-SC execution is the 4 accesses and
    // the 2 thread creations.
    for model in ["rc11", "tso", "pso"] {
        let (code, j, text) = run(&[
            "robust",
            "fixtures/litmus/sb.c",
            "--model",
            model,
            "--format",
            "json",
        ]);
        assert_eq!(code, Some(1), "{text}");
        assert_eq!(j["robust"], false);
        assert_eq!(j["non_sc"], 1);
        assert_eq!(j["smallest"]["events"], 6, "{text}");
    }
    // MP with plain accesses is robust under TSO, not under PSO.
    let (code, j, _) = run(&[
        "robust",
        "fixtures/hardware/mp_tso.c",
        "--model",
        "tso",
        "--format",
        "json",
    ]);
    assert_eq!((code, j["robust"].clone()), (Some(0), Value::Bool(true)));
    let (code, _, _) = run(&["robust", "fixtures/hardware/mp_pso.c", "--model", "pso"]);
    assert_eq!(code, Some(1));
    // Release/acquire MP is robust under RC11.
    let out = fensyn(&["robust", "fixtures/litmus/mp_relacq.c"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("robust: every execution is sequentially consistent"));
    // The text shows the execution and the cycle.
    let out = fensyn(&["robust", "fixtures/litmus/sb.c"]);
    let text = stdout(&out);
    assert!(
        text.contains("smallest non-SC execution (6 events)"),
        "{text}"
    );
    assert!(text.contains("T1 line 11 → T1 line 12"), "{text}");
}

#[test]
fn fix_goal_sc_makes_the_program_robust() {
    let dir = tempfile::tempdir().unwrap();
    // MP without assertions: release/acquire fences make every execution SC under RC11.
    let src = std::fs::read_to_string(root().join("fixtures/litmus/mp.c"))
        .unwrap()
        .replace("    assert(!(r1 == 1 && r2 == 0));\n", "");
    let file = dir.path().join("mp_noassert.c");
    std::fs::write(&file, src).unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(fensyn(&["check", f]).status.code(), Some(0));
    assert_eq!(fensyn(&["robust", f]).status.code(), Some(1));
    let (code, j, text) = run(&["fix", f, "--goal", "sc", "--write", "--format", "json"]);
    assert_eq!(code, Some(0), "{text}");
    let mut orders: Vec<&str> = j["fences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["order"].as_str().unwrap())
        .collect();
    orders.sort();
    assert_eq!(orders, ["acquire", "release"]);
    assert_eq!(fensyn(&["robust", f]).status.code(), Some(0));

    // SB under TSO needs an mfence in each thread to be robust.
    let sb = copy_to(dir.path(), "fixtures/litmus/sb.c", "sb.c");
    let sb = sb.to_str().unwrap();
    let (code, j, text) = run(&[
        "fix", sb, "--goal", "sc", "--model", "tso", "--write", "--format", "json",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(j["inserted"], 2);
    assert_eq!(
        fensyn(&["robust", sb, "--model", "tso"]).status.code(),
        Some(0)
    );
    // An already robust program has nothing to fix.
    let out = fensyn(&["fix", "fixtures/litmus/mp_relacq.c", "--goal", "sc"]);
    assert_eq!(out.status.code(), Some(0));
}

/// ARMv8: the address dependencies of IRIW+addrs make its C11 bug impossible there, the
/// control dependencies of the MoCA example do not; fixes name `dmb` instructions.
#[test]
fn armv8_on_hardware_and_fixes() {
    let verdict = |file: &str| {
        let (code, j, text) = run(&["check", file, "--on-hardware", "armv8", "--format", "json"]);
        assert_eq!(code, Some(1), "{text}");
        j["on_hardware"]["entries"][0]["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(verdict("fixtures/hardware/iriw_addrs.c"), "c11-only");
    assert_eq!(verdict("fixtures/hardware/moca_iriw.c"), "possible");
    assert_eq!(verdict("fixtures/litmus/iriw.c"), "possible");
    // The same program is clean when checked under armv8 itself.
    assert_eq!(
        buggy_under("fixtures/hardware/iriw_addrs.c", "armv8", &[]),
        (0, Some(0))
    );
    // MP on ARMv8: a release fence (dmb ish) in the writer, an acquire fence (dmb ishld) in
    // the reader.
    let (code, j, text) = run(&[
        "fix",
        "fixtures/litmus/mp.c",
        "--model",
        "armv8",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{text}");
    let mut got: Vec<(String, String)> = j["fences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["order"].as_str().unwrap().to_string(),
                f["instruction"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("acquire".to_string(), "dmb ishld".to_string()),
            ("release".to_string(), "dmb ish".to_string())
        ]
    );
    // Robustness under ARMv8: MP with release/acquire is robust, relaxed MP is not.
    assert_eq!(
        fensyn(&["robust", "fixtures/litmus/mp_relacq.c", "--model", "armv8"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        fensyn(&["robust", "fixtures/litmus/mp.c", "--model", "armv8"])
            .status
            .code(),
        Some(1)
    );
}
