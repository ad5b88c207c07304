//! Runs the real binary on every fixture that has a `NAME.expect.json` and compares:
//!
//! * `check --format json`: executions, buggy count, error kinds (and, with `details`, the
//!   `detail` of memory errors: `use-after-free`, ...; with `error_counts`, the exact number of
//!   executions of the error at a line), exit code, and (`warnings`) texts its stderr must
//!   contain;
//! * `fix --format json` (plus the expectation's `fix_args`, e.g. `--liveness`): status,
//!   fence orders (as a sorted multiset), counts, weight, that the
//!   fix was re-checked clean, and exit code;
//! * that the diff has one section per file the JSON's `files` lists (a fence in a header
//!   changes the header: `fixtures/preprocessor/header_fence.c`, `spsc_harness.c`), in that
//!   order, and that every fence's `file` is one of them;
//! * the text diff of `fix` against the snapshot `NAME.fixed.diff` (regenerate with
//!   `UPDATE_SNAPSHOTS=1` or `FENSYN_BLESS=1 cargo test --release --test suite fixtures::`;
//!   `tests/golden.rs` applies every snapshot with `git apply` and `patch -p1`).
//!
//! Expected values come from published litmus results and hand derivations, not from fensyn.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn check_one(c: &Path, exp: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = rel(c);
    let mut fail = |msg: String| problems.push(format!("{name}: {msg}"));

    // Extra arguments for both commands (e.g. `--unroll`).
    let extra = expect_args(exp);
    let with = |mut base: Vec<&'static str>| -> Vec<String> {
        let mut v: Vec<String> = base.drain(..).map(String::from).collect();
        v.extend(extra.iter().cloned());
        v
    };
    let run = |args: Vec<String>, name: &str| {
        let mut all = vec![args[0].clone(), name.to_string()];
        all.extend(args[1..].iter().cloned());
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        fensyn(&refs)
    };

    // check
    let out = run(with(vec!["check", "--format", "json"]), &name);
    let j: Value = one_file(&stdout(&out))
        .unwrap_or_else(|e| panic!("{name}: check JSON: {e}\n{}", stderr(&out)));
    let ec = &exp["check"];
    if let Some(n) = ec["executions"].as_u64() {
        if j["executions"].as_u64() != Some(n) {
            fail(format!("executions {} != expected {n}", j["executions"]));
        }
    }
    let buggy = ec["buggy"].as_u64().expect("expect.check.buggy");
    if j["buggy"].as_u64() != Some(buggy) {
        fail(format!("buggy {} != expected {buggy}", j["buggy"]));
    }
    let complete = ec["complete"].as_bool().unwrap_or(true);
    let want_code = match (buggy > 0, complete) {
        (true, _) => 1,
        (false, true) => 0,
        (false, false) => 4,
    };
    if out.status.code() != Some(want_code) {
        fail(format!("check exit {:?} != {want_code}", out.status.code()));
    }
    // `warnings`: texts the check's stderr must contain (e.g. `5:7: warning: ...`).
    if let Some(ws) = exp["warnings"].as_array() {
        let err = stderr(&out);
        for w in ws {
            let w = w.as_str().expect("expect.warnings holds strings");
            if !err.contains(w) {
                fail(format!("stderr lacks warning {w:?}: {err}"));
            }
        }
    }
    if j["complete"] != Value::Bool(complete) {
        fail(format!("check complete {} != {complete}", j["complete"]));
    }
    for key in ["blocked", "bounded", "bounded_accepted"] {
        if let Some(n) = ec[key].as_u64() {
            if j[key].as_u64() != Some(n) {
                fail(format!("{key} {} != expected {n}", j[key]));
            }
        }
    }
    if let Some(kinds) = ec["errors"].as_array() {
        let got: Vec<&str> = j["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        for k in kinds {
            if !got.contains(&k.as_str().unwrap()) {
                fail(format!("missing error kind {k}; got {got:?}"));
            }
        }
    }
    // `error_counts` (optional): for errors at these lines, the exact number of executions
    // that show each (every buggy execution counts, not only the graphs a check keeps).
    if let Some(counts) = ec["error_counts"].as_array() {
        let errors = j["errors"].as_array().unwrap();
        for c in counts {
            let line = c["line"].as_u64().expect("error_counts: line");
            let want = c["executions"].as_u64().expect("error_counts: executions");
            let got: Vec<Option<u64>> = errors
                .iter()
                .filter(|e| e["line"].as_u64() == Some(line))
                .map(|e| e["executions"].as_u64())
                .collect();
            if got != [Some(want)] {
                fail(format!(
                    "error at line {line}: executions {got:?} != [{want}]"
                ));
            }
        }
    }
    // `details` (optional): the `detail` of memory errors (`use-after-free`, ...), each of
    // which must be reported; like `errors`, a list of what must be there, not of all.
    if let Some(details) = ec["details"].as_array() {
        let got: Vec<&str> = j["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["detail"].as_str())
            .collect();
        for d in details {
            if !got.contains(&d.as_str().unwrap()) {
                fail(format!("missing error detail {d}; got {got:?}"));
            }
        }
    }

    // fix (`fix_args`: arguments for `fix` only, e.g. `--liveness`)
    let fix_with = |base: Vec<&'static str>| {
        let mut args = with(base);
        if let Some(a) = exp["fix_args"].as_array() {
            args.extend(a.iter().map(|v| v.as_str().unwrap().to_string()));
        }
        args
    };
    let out = run(fix_with(vec!["fix", "--format", "json"]), &name);
    let j: Value = one_file(&stdout(&out))
        .unwrap_or_else(|e| panic!("{name}: fix JSON: {e}\n{}", stderr(&out)));
    let ef = &exp["fix"];
    let status = ef["status"].as_str().unwrap();
    if j["status"] != status {
        fail(format!("fix status {} != {status}", j["status"]));
    }
    let want_code = match status {
        "clean" => 0,
        "fixed" => 1,
        "unfixable" => 2,
        _ => 4,
    };
    if out.status.code() != Some(want_code) {
        fail(format!(
            "fix exit {:?} != {want_code}: {}",
            out.status.code(),
            stderr(&out)
        ));
    }
    if status == "fixed" {
        let mut got: Vec<String> = j["fences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["order"].as_str().unwrap().to_string())
            .collect();
        got.sort();
        // `orders` is optional: for larger programs the counts and weight pin the fix down and
        // the diff snapshot shows where the fences go.
        if let Some(orders) = ef["orders"].as_array() {
            let mut want: Vec<String> = orders
                .iter()
                .map(|o| o.as_str().unwrap().to_string())
                .collect();
            want.sort();
            if got != want {
                fail(format!("fence orders {got:?} != {want:?}"));
            }
        }
        for key in ["inserted", "strengthened", "weight"] {
            if let Some(n) = ef[key].as_u64() {
                if j[key].as_u64() != Some(n) {
                    fail(format!("{key} {} != {n}", j[key]));
                }
            }
        }
        if j["verified"]["buggy"].as_u64() != Some(0) {
            fail(format!("fix not verified clean: {}", j["verified"]));
        }
        // The text diff, against its snapshot.
        let out = run(fix_with(vec!["fix"]), &name);
        let diff = stdout(&out);
        // One section per changed file, in the order of the JSON's `files` (the checked file
        // first, then headers in include order), and every fence in one of them.
        let sections: Vec<&str> = diff
            .lines()
            .filter_map(|l| l.strip_prefix("+++ b/"))
            .collect();
        let files: Vec<&str> = j["files"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if sections != files {
            fail(format!(
                "diff sections {sections:?} != JSON files {files:?}"
            ));
        }
        for f in j["fences"].as_array().unwrap() {
            let file = f["file"].as_str().unwrap_or(&name);
            if !files.contains(&file) {
                fail(format!("a fence in {file}, which the fix does not change"));
            }
        }
        let snap = c.with_extension("fixed.diff");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some()
            || std::env::var_os("FENSYN_BLESS").is_some()
        {
            std::fs::write(&snap, &diff).unwrap();
        } else {
            match std::fs::read_to_string(&snap) {
                Ok(s) if s == diff => {}
                Ok(s) => fail(format!(
                    "diff differs from {}:\n--- expected\n{s}\n--- got\n{diff}",
                    rel(&snap)
                )),
                Err(_) => fail(format!(
                    "missing snapshot {} (UPDATE_SNAPSHOTS=1)",
                    rel(&snap)
                )),
            }
        }
    }
    problems
}

#[test]
fn fixtures_match_expectations() {
    let mut problems = Vec::new();
    let mut n = 0;
    for c in fixtures() {
        if let Some(exp) = expect_of(&c) {
            n += 1;
            problems.extend(check_one(&c, &exp));
        }
    }
    assert!(
        n >= 10,
        "expected at least 10 fixtures with expectations, found {n}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The C fixture a C++ fixture translates, named in its leading comment (`C++ version of
/// fixtures/….c` or `C twin: fixtures/….c`).
fn c_twin(cpp: &Path) -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string(cpp).ok()?;
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .filter(|l| l.contains("C++ version of") || l.contains("C twin:"))
        .flat_map(|l| l.split_whitespace())
        .map(|w| w.trim_end_matches([':', ',', '.', ')']))
        .find(|w| w.starts_with("fixtures/") && w.ends_with(".c"))
        .map(|w| root().join(w))
}

/// The counts of `check` and the cost of `fix` (JSON), for comparing a C++ fixture with its C
/// twin.
fn summary(file: &Path, extra: &[String]) -> Value {
    let name = rel(file);
    let run = |cmd: &str| -> Value {
        let mut args = vec![
            cmd.to_string(),
            name.clone(),
            "--format".into(),
            "json".into(),
        ];
        args.extend(extra.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fensyn(&refs);
        one_file(&stdout(&out))
            .unwrap_or_else(|e| panic!("{name}: {cmd} JSON: {e}\n{}", stderr(&out)))
    };
    let c = run("check");
    let f = run("fix");
    let mut kinds: Vec<String> = c["errors"]
        .as_array()
        .map(|a| a.iter().map(|e| e["kind"].to_string()).collect())
        .unwrap_or_default();
    kinds.sort();
    kinds.dedup();
    let mut details: Vec<String> = c["errors"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["detail"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    details.sort();
    details.dedup();
    let mut orders: Vec<String> = f["fences"]
        .as_array()
        .map(|a| a.iter().map(|e| e["order"].to_string()).collect())
        .unwrap_or_default();
    orders.sort();
    serde_json::json!({
        "executions": c["executions"], "blocked": c["blocked"], "bounded": c["bounded"],
        "buggy": c["buggy"], "complete": c["complete"], "kinds": kinds, "details": details,
        "status": f["status"], "inserted": f["inserted"], "strengthened": f["strengthened"],
        "weight": f["weight"], "orders": orders,
    })
}

/// Every C++ fixture is the same program as a C fixture (its twin), so it must have the same
/// executions, bugs and fix cost: the C++ front end lowers the same constructs to the same IR.
#[test]
fn cpp_fixtures_match_their_c_twins() {
    let mut problems = Vec::new();
    let mut n = 0;
    for cpp in fixtures()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
    {
        let Some(c) = c_twin(&cpp) else {
            problems.push(format!("{}: names no C twin in its header", rel(&cpp)));
            continue;
        };
        assert!(c.exists(), "{}: twin {} does not exist", rel(&cpp), rel(&c));
        let extra: Vec<String> = expect_of(&cpp)
            .and_then(|e| e["args"].as_array().cloned())
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let (a, b) = (summary(&cpp, &extra), summary(&c, &extra));
        if a != b {
            problems.push(format!(
                "{}: {a}\n  differs from {}: {b}",
                rel(&cpp),
                rel(&c)
            ));
        }
        n += 1;
    }
    assert!(n >= 20, "expected at least 20 C++ fixtures, found {n}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The spin-loop fixtures (`fixtures/loops`, issue 23) need no unroll bound: with `--unroll 2`
/// they have the counts of their expectations (taken at the default bound), nothing cut, and
/// the same exit code — their spinning passes block by the spin rule instead of unrolling.
#[test]
fn spin_loop_fixtures_need_no_unroll_bound() {
    let dir = root().join("fixtures/loops");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "only {} spin-loop fixtures", files.len());
    let mut problems = Vec::new();
    for c in &files {
        let name = rel(c);
        let exp = expect_of(c).unwrap_or_else(|| panic!("{name}: no expectation"));
        assert!(expect_args(&exp).is_empty(), "{name}: takes no arguments");
        let ec = &exp["check"];
        // A fixture whose loop writes in every pass is cut by design (`"complete": false`):
        // its counts depend on the bound.
        if ec["complete"].as_bool() == Some(false) {
            continue;
        }
        let out = fensyn(&["check", &name, "--format", "json", "--unroll", "2"]);
        let j: Value = one_file(&stdout(&out)).unwrap();
        for key in ["executions", "blocked", "buggy"] {
            if j[key] != ec[key] {
                problems.push(format!(
                    "{name}: --unroll 2: {key} {} != {}",
                    j[key], ec[key]
                ));
            }
        }
        if j["bounded"].as_u64() != Some(0) {
            problems.push(format!(
                "{name}: --unroll 2 cut {} executions",
                j["bounded"]
            ));
        }
        let want = if ec["buggy"].as_u64() == Some(0) {
            0
        } else {
            1
        };
        if out.status.code() != Some(want) {
            problems.push(format!("{name}: --unroll 2: exit {:?}", out.status.code()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
