//! `fensyn explain`: the first buggy execution, the fences of the fix and the cycles they close,
//! and its Graphviz drawing (`--dot`), checked with `dot -Tsvg` when Graphviz is installed.

mod common;

use common::*;
use std::process::Command;

/// Runs `dot -Tsvg` on `text`; `None` (after printing why) when `dot` is not on PATH.
fn dot_accepts(text: &str) -> Option<Result<(), String>> {
    use std::io::Write as _;
    let child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        println!("graphviz `dot` is not installed: the DOT syntax check is skipped");
        return None;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let svg = String::from_utf8_lossy(&out.stdout);
    Some(if out.status.success() && svg.contains("<svg") {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
fn explains_message_passing() {
    let out = fensyn(&["explain", "fixtures/litmus/mp.c"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "fixtures/litmus/mp.c:28:5: assertion:",
        "first failing execution (under rc11):",
        "T1 (writer)",
        "T2 (reader)",
        "Rrlx data = 0 ← init",
        "the fix adds 2 fences (2 inserted, 0 strengthened):",
        "fixtures/litmus/mp.c:12:5: insert a release fence before\n       | atomic_store_explicit(&flag, 1, memory_order_relaxed);\n",
        "fixtures/litmus/mp.c:18:5: insert an acquire fence before",
        "orders line 11 before line 12",
        "orders line 17 before line 18",
        "closes a weak cycle (coherence",
        "T1:11 Wrlx data = 42\n        -po-> T1:12 Frel (new)\n        -sw-> T2:18 Facq (new)\n        -po-> T2:18 Rrlx data = 0\n        -fr-> T1:11 Wrlx data = 42\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn explains_a_strong_cycle() {
    let out = fensyn(&["explain", "fixtures/litmus/sb.c"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("insert a seq_cst fence"), "{text}");
    assert!(
        text.contains("closes a strong cycle (the SC order psc must be acyclic)"),
        "{text}"
    );
    // The psc cycle is spelled through the accesses: each fence, its read, the other thread's
    // write by fr.
    assert!(
        text.contains("-po-> T1:12 Rrlx y = 0\n        -fr-> T2:17 Wrlx y = 1"),
        "{text}"
    );
    assert!(text.contains("orders line 11 before line 12"), "{text}");
}

#[test]
fn explains_a_strengthened_fence_and_cpp() {
    let out = fensyn(&["explain", "fixtures/litmus/sb_fence_rel.c"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("strengthen the fence release -> seq_cst"),
        "{text}"
    );
    assert!(text.contains("T1:12 Fsc"), "{text}");
    let out = fensyn(&["explain", "fixtures/cpp/mp.cpp"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("closes a weak cycle"));
}

#[test]
fn explains_a_race_the_fences_order() {
    let out = fensyn(&["explain", "fixtures/data/array_mp.c"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("creates a happens-before path that orders the racing accesses against the race at line 27"),
        "{text}"
    );
}

#[test]
fn clean_unfixable_and_refused_forms() {
    let out = fensyn(&["explain", "fixtures/litmus/mp_relacq.c"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("no bugs in 3 executions under rc11; nothing to explain"));

    let out = fensyn(&["explain", "fixtures/litmus/mp_relacq.c", "--format", "dot"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("nothing to explain"));

    let out = fensyn(&["explain", "fixtures/litmus/race_final.c"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("not fixable with fences: the execution stays consistent"),
        "{text}"
    );
    assert!(
        text.contains("the execution no fence set can forbid:"),
        "{text}"
    );

    let out = fensyn(&["explain", "fixtures/litmus/mp.c", "--format", "json"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("'--format json' cannot be used with 'explain'"),
        "{}",
        stderr(&out)
    );

    let out = fensyn(&["explain", "no/such/file.c"]);
    assert_eq!(out.status.code(), Some(3));

    // The common flags work as for check: a loop bound too low for the bug is incomplete.
    let out = fensyn(&["explain", "fixtures/litmus/mp.c", "--max-executions", "1"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}

#[test]
fn dot_draws_the_fences_and_the_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mp.dot");
    let out = fensyn(&[
        "explain",
        "fixtures/litmus/mp.c",
        "--dot",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let dot = std::fs::read_to_string(&path).unwrap();
    assert!(dot.starts_with("digraph execution {"), "{dot}");
    for want in [
        "subgraph cluster_t1 { label=\"T1 writer\";",
        "label=\"Frel\\nline 12\", color=blue",
        "label=rf",
        "label=mo",
        "label=sw",
        "[label=\"fr\", color=red",
        "[label=\"sw\", color=red",
        "weak cycle",
    ] {
        assert!(dot.contains(want), "missing {want:?} in\n{dot}");
    }
    // --format dot prints the same drawing.
    let out = fensyn(&["explain", "fixtures/litmus/mp.c", "--format", "dot"]);
    assert_eq!(stdout(&out), dot);
    if let Some(res) = dot_accepts(&dot) {
        res.unwrap_or_else(|e| panic!("dot rejects the graph: {e}\n{dot}"));
    }
}

#[test]
fn every_dot_output_is_valid_graphviz() {
    let mut graphs = Vec::new();
    for (args, code) in [
        (
            vec!["explain", "fixtures/litmus/sb.c", "--format", "dot"],
            1,
        ),
        (
            vec!["explain", "fixtures/litmus/iriw.c", "--format", "dot"],
            1,
        ),
        (
            vec!["explain", "fixtures/data/array_mp.c", "--format", "dot"],
            1,
        ),
        (vec!["explain", "fixtures/cpp/sb.cpp", "--format", "dot"], 1),
        (
            vec!["explain", "fixtures/litmus/race_final.c", "--format", "dot"],
            2,
        ),
        (vec!["check", "fixtures/litmus/mp.c", "--format", "dot"], 1),
    ] {
        let out = fensyn(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let dot = stdout(&out);
        assert!(
            dot.starts_with("digraph execution {") && dot.ends_with("}\n"),
            "{dot}"
        );
        graphs.push((args, dot));
    }
    // A strong cycle is drawn through the accesses too.
    assert!(
        graphs[0].1.contains("[label=\"fr\", color=red"),
        "{}",
        graphs[0].1
    );
    for (args, dot) in graphs {
        match dot_accepts(&dot) {
            None => return,
            Some(Err(e)) => panic!("{args:?}: dot rejects the graph: {e}\n{dot}"),
            Some(Ok(())) => {}
        }
    }
}
