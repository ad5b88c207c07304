//! `fensyn relax`: the weakest orders that keep a correct program correct (fixtures in
//! `fixtures/relax/`). Every fixture's result is pinned (its patch, `NAME.relax.diff`; bless
//! with `FENSYN_BLESS=1`), re-checked from the written file, and tested maximal without the
//! search's memo: every item weakened one more step, written and re-parsed, has a bug.

mod common;

use common::*;
use fensyn::api::{self, Options, RelaxOptions, Relaxation, Relaxed, Source, Unit};
use fensyn::checker::Model;
use serde_json::Value;
use std::path::Path;

/// The relax fixtures with the extra arguments each is relaxed with.
const FIXTURES: &[(&str, &[&str])] = &[
    ("mp.c", &[]),
    ("mp_fences.c", &[]),
    ("mp.cpp", &[]),
    ("ticket_lock.c", &[]),
    ("seqlock.c", &[]),
    ("peterson.c", &[]),
    ("dekker.c", &[]),
    ("treiber.c", &[]),
    ("chase_lev.c", &[]),
    ("spsc_ring.c", &[]),
    ("spinlock_builtin.c", &[]),
];

fn path(name: &str) -> String {
    format!("fixtures/relax/{name}")
}

/// `relax --format json FILE ARGS`.
fn relax_json(file: &str, args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["relax", file, "--format", "json"];
    all.extend_from_slice(args);
    let out = fensyn(&all);
    (json(&out), out.status.code())
}

/// The rows of a relax JSON as `(kind, line, before, after)`.
fn rows(j: &Value) -> Vec<(String, u64, String, String)> {
    j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().into(),
                r["line"].as_u64().unwrap(),
                r["before"].as_str().unwrap().into(),
                r["after"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn row(kind: &str, line: u64, before: &str, after: &str) -> (String, u64, String, String) {
    (kind.into(), line, before.into(), after.into())
}

fn unit(name: &str) -> Unit {
    let src = Source::read(&root().join(path(name))).unwrap();
    let mut src = Source {
        name: path(name),
        ..src
    };
    src.lang = fensyn::ir::Lang::from_path(Path::new(name));
    src.parse().unwrap()
}

fn relaxed(u: &Unit, opts: &Options) -> Relaxed {
    match api::relax(u, opts, &RelaxOptions::default()).unwrap() {
        Relaxation::Relaxed(r) => *r,
        other => panic!("{}: not relaxed: {other:?}", u.source.name),
    }
}

/// Whether the program written as `files` has a bug (checked to its first one, completely).
fn written_is_buggy(u: &Unit, files: &[fensyn::rewrite::FileRewrite], opts: &Options) -> bool {
    let prog = api::reparse(&u.source.name, &u.source.text, &u.program, files).unwrap();
    let w = Unit {
        source: u.source.clone(),
        program: prog,
    };
    let first = Options {
        first: true,
        keep_buggy: 1,
        ..opts.clone()
    };
    let r = api::check(&w, &first).unwrap();
    assert!(
        r.is_buggy() || !r.is_incomplete(),
        "{}: incomplete",
        u.source.name
    );
    r.is_buggy()
}

/// Every item one lattice step below its relaxed order, written, has a bug.
fn assert_maximal(u: &Unit, rel: &Relaxed, opts: &Options) {
    for (i, it) in rel.items.iter().enumerate() {
        for step in it.item.steps(it.after) {
            let files = rel.written_with(u, i, step).unwrap();
            let line = u.program.stmts[it.stmt].span.line;
            assert!(
                written_is_buggy(u, &files, opts),
                "{}:{line}: {} can be weakened to {step:?}: not maximal",
                u.source.name,
                it.item.name()
            );
        }
    }
}

#[test]
fn every_fixture_is_relaxed_as_pinned_rechecked_and_maximal() {
    let bless = std::env::var_os("FENSYN_BLESS").is_some();
    let mut problems = Vec::new();
    for (name, args) in FIXTURES {
        let file = path(name);
        let mut all = vec!["relax", file.as_str()];
        all.extend_from_slice(args);
        let out = fensyn(&all);
        let diff = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("re-checked: no bugs"),
            "{}",
            stderr(&out)
        );
        let snap = root().join(format!("fixtures/relax/{name}.relax.diff"));
        if bless {
            std::fs::write(&snap, &diff).unwrap();
        } else if std::fs::read_to_string(&snap).ok().as_deref() != Some(diff.as_str()) {
            problems.push(format!(
                "{file}: patch differs from {}:\n{diff}",
                rel(&snap)
            ));
        }
        // The written file checks clean, from the command line.
        let (dir, copy) = copy_fixture(&file);
        let w = fensyn_in(dir.path(), &["relax", "--write", copy.to_str().unwrap()]);
        assert_eq!(w.status.code(), Some(0), "{file}: {}", stderr(&w));
        let c = fensyn_in(dir.path(), &["check", copy.to_str().unwrap()]);
        assert_eq!(c.status.code(), Some(0), "{file}: written: {}", stderr(&c));
        // Maximal, tested without the memo.
        let u = unit(name);
        let opts = Options::default();
        assert_maximal(&u, &relaxed(&u, &opts), &opts);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn message_passing_needs_a_release_store_and_an_acquire_load() {
    let (j, code) = relax_json(&path("mp.c"), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(j["status"], "relaxed");
    assert_eq!(
        rows(&j),
        vec![
            row("store", 12, "seq_cst", "release"),
            row("load", 18, "seq_cst", "acquire")
        ]
    );
    // seq_cst → release (clean) → relaxed (buggy), for each: 4 checks; the confirming pass is
    // answered by monotonicity.
    assert_eq!(
        (j["checks"].as_u64(), j["implied"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(j["checks_per_access"], 2.0);
}

#[test]
fn store_buffering_keeps_seq_cst_where_it_is_needed() {
    let (p, _) = relax_json(&path("peterson.c"), &[]);
    assert_eq!(
        rows(&p),
        vec![
            row("store", 14, "seq_cst", "seq_cst"),
            row("store", 15, "seq_cst", "seq_cst"),
            row("store", 19, "seq_cst", "release"),
        ]
    );
    // The await loop's condition holds two loads: left as written, and said.
    assert_eq!(p["not_relaxed"][0]["line"], 16);
    assert_eq!(p["not_relaxed"][0]["calls"], 2);
    let (d, _) = relax_json(&path("dekker.c"), &[]);
    let fences: Vec<_> = rows(&d).into_iter().filter(|r| r.0 == "fence").collect();
    assert_eq!(
        fences,
        vec![
            row("fence", 13, "seq_cst", "seq_cst"),
            row("fence", 16, "seq_cst", "none"),
            row("fence", 24, "seq_cst", "seq_cst"),
            row("fence", 27, "seq_cst", "none"),
        ]
    );
    let (c, _) = relax_json(&path("chase_lev.c"), &[]);
    let kept: Vec<u64> = rows(&c)
        .into_iter()
        .filter(|r| r.3 == "seq_cst")
        .map(|r| r.1)
        .collect();
    // take()'s store of bottom and load of top, steal()'s load of bottom and its CAS.
    assert_eq!(kept, vec![23, 24, 42, 46]);
}

#[test]
fn fences_are_weakened_or_deleted_with_their_line() {
    let out = fensyn(&["relax", &path("mp_fences.c")]);
    let diff = stdout(&out);
    assert!(diff.contains("-\tatomic_thread_fence(memory_order_seq_cst);\n \tpayload = 1;"));
    assert!(diff.contains("+\tatomic_thread_fence(memory_order_release);"));
    assert!(diff.contains("+\tatomic_thread_fence(memory_order_acquire);"));
    assert!(
        !diff.contains("+\n"),
        "a deleted fence leaves no blank line:\n{diff}"
    );
}

#[test]
fn cas_failure_orders_follow_the_success_order_down() {
    let (j, _) = relax_json(&path("treiber.c"), &[]);
    let cas: Vec<(&str, &str, &str, &str)> = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "cas")
        .map(|r| {
            (
                r["before"].as_str().unwrap(),
                r["failure_before"].as_str().unwrap(),
                r["after"].as_str().unwrap(),
                r["failure_after"].as_str().unwrap(),
            )
        })
        .collect();
    // push's CAS publishes the node (release; its failure order cannot stay seq_cst nor be
    // release: relaxed); pop's reads the next node's fields (acquire).
    assert_eq!(
        cas,
        vec![
            ("seq_cst", "seq_cst", "release", "relaxed"),
            ("seq_cst", "seq_cst", "acquire", "acquire")
        ]
    );
    let diff = j["diff"].as_str().unwrap();
    assert!(diff.contains("atomic_compare_exchange_weak_explicit(&top, &old, n, memory_order_release, memory_order_relaxed)"));
    let (b, _) = relax_json(&path("spinlock_builtin.c"), &[]);
    assert!(b["diff"].as_str().unwrap().contains(
        "__atomic_compare_exchange_n(l, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)"
    ));
}

#[test]
fn cpp_implicit_orders_get_an_explicit_argument() {
    let out = fensyn(&["relax", &path("mp.cpp")]);
    let diff = stdout(&out);
    assert!(
        diff.contains("+    ready.store(1, std::memory_order_release);"),
        "{diff}"
    );
    assert!(
        diff.contains("+    if (ready.load(std::memory_order_acquire) == 1)"),
        "{diff}"
    );
}

#[test]
fn a_buggy_program_is_not_relaxed_and_fix_is_suggested() {
    let out = fensyn(&["relax", "fixtures/litmus/mp.c"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains("error: assertion"), "{err}");
    assert!(
        err.contains("run `fensyn fix fixtures/litmus/mp.c` first"),
        "{err}"
    );
    let (j, _) = relax_json("fixtures/litmus/mp.c", &[]);
    assert_eq!(j["status"], "buggy");
}

/// Over several files, relax's summary tells a relaxation to apply from a bug (both exit 1),
/// and a program already minimal from one relaxed in place (both exit 0).
#[test]
fn the_summary_tells_a_relaxation_from_a_bug() {
    let dir = tree(&[
        ("a_mp.c", "fixtures/relax/mp.c"),
        ("b_buggy.c", "fixtures/litmus/mp.c"),
        ("c_mp.c", "fixtures/relax/mp.c"),
    ]);
    let out = fensyn_in(dir.path(), &["relax", "."]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.ends_with("3 files: 2 with a relaxation, 1 buggy\n"),
        "{err}"
    );
    let out = fensyn_in(dir.path(), &["relax", "a_mp.c", "c_mp.c", "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with("2 files: 2 relaxed in place\n"),
        "{}",
        stderr(&out)
    );
    let out = fensyn_in(dir.path(), &["relax", "a_mp.c", "c_mp.c"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).ends_with("2 files: 2 already minimal\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_incomplete_check_weakens_nothing() {
    // A limit.
    let out = fensyn(&["relax", &path("seqlock.c"), "--max-executions", "3"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("relax weakens nothing"),
        "{}",
        stderr(&out)
    );
    // A loop cut at its bound.
    let (j, code) = relax_json(&path("treiber.c"), &["--unroll", "1"]);
    assert_eq!(code, Some(4));
    assert_eq!(j["status"], "incomplete");
    assert!(j["reason"].as_str().unwrap().contains("loop bound"));
    assert!(j.get("diff").is_none());
}

#[test]
fn hardware_models_relax_what_the_compiled_code_may_drop() {
    // x86-TSO keeps store→load order only: message passing needs no fence at all.
    let (t, _) = relax_json(&path("mp_fences.c"), &["--model", "tso"]);
    let fences: Vec<String> = rows(&t)
        .into_iter()
        .filter(|r| r.0 == "fence")
        .map(|r| r.3)
        .collect();
    assert_eq!(fences, vec!["none", "none", "none"]);
    // ... but store buffering does: Dekker's first fences stay.
    let (d, _) = relax_json(&path("dekker.c"), &["--model", "tso"]);
    assert_eq!(rows(&d)[1], row("fence", 13, "seq_cst", "seq_cst"));
    for (name, model) in [
        ("dekker.c", Model::Tso),
        ("treiber.c", Model::Armv8),
        ("seqlock.c", Model::C11),
        ("mp_fences.c", Model::Sc),
    ] {
        let u = unit(name);
        let opts = Options {
            model,
            ..Options::default()
        };
        assert_maximal(&u, &relaxed(&u, &opts), &opts);
    }
}

#[test]
fn optimal_finds_the_least_weight_and_price() {
    // On message passing the greedy relaxation is the cheapest one: same patch, more checks.
    let greedy = fensyn(&["relax", &path("mp.c")]);
    for cost in ["weight", "armv8", "x86"] {
        let out = fensyn(&["relax", "--optimal", "--cost", cost, &path("mp.c")]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(stdout(&out), stdout(&greedy), "--cost {cost}");
    }
    let (j, _) = relax_json(&path("treiber.c"), &["--optimal"]);
    let (g, _) = relax_json(&path("treiber.c"), &[]);
    assert_eq!(rows(&j), rows(&g));
    assert!(j["checks"].as_u64() > g["checks"].as_u64());
    // Every configuration the optimum is chosen from was checked clean: re-checked and
    // maximal as well.
    let u = unit("spsc_ring.c");
    let opts = Options::default();
    let o = match api::relax(
        &u,
        &opts,
        &RelaxOptions {
            optimal: true,
            ..RelaxOptions::default()
        },
    )
    .unwrap()
    {
        Relaxation::Relaxed(r) => *r,
        other => panic!("{other:?}"),
    };
    assert_maximal(&u, &o, &opts);
}

#[test]
fn greedy_needs_fewer_checks_than_the_naive_scheme_and_finds_the_same() {
    for name in ["mp.c", "ticket_lock.c", "seqlock.c", "spsc_ring.c"] {
        let u = unit(name);
        let opts = Options::default();
        let greedy = relaxed(&u, &opts);
        let naive = match api::relax(
            &u,
            &opts,
            &RelaxOptions {
                naive: true,
                ..RelaxOptions::default()
            },
        )
        .unwrap()
        {
            Relaxation::Relaxed(r) => *r,
            other => panic!("{other:?}"),
        };
        let after = |r: &Relaxed| r.items.iter().map(|i| i.after).collect::<Vec<_>>();
        assert_eq!(after(&greedy), after(&naive), "{name}");
        assert!(greedy.checks() < naive.checks(), "{name}");
    }
}

/// Not a test of behaviour: prints the measurements of docs/performance.md (checks of the
/// greedy search and of the naive scheme, and the time of `relax`, per fixture).
#[test]
#[ignore = "measurement: cargo test --release --test suite relax::measure -- --ignored --nocapture"]
fn measure() {
    for (name, _) in FIXTURES {
        let u = unit(name);
        let opts = Options::default();
        let t = std::time::Instant::now();
        let g = relaxed(&u, &opts);
        let secs = t.elapsed().as_secs_f64();
        let naive = RelaxOptions {
            naive: true,
            ..RelaxOptions::default()
        };
        let n = match api::relax(&u, &opts, &naive).unwrap() {
            Relaxation::Relaxed(r) => r.checks(),
            _ => 0,
        };
        let optimal = RelaxOptions {
            optimal: true,
            ..RelaxOptions::default()
        };
        let t = std::time::Instant::now();
        let o = match api::relax(&u, &opts, &optimal).unwrap() {
            Relaxation::Relaxed(r) => r.checks(),
            _ => 0,
        };
        let osecs = t.elapsed().as_secs_f64();
        println!(
            "| {name} | {} | {} | {:.2} | {} | {:.3} | {o} | {osecs:.3} |",
            g.items.len(),
            g.checks(),
            g.checks() as f64 / g.items.len().max(1) as f64,
            n,
            secs
        );
    }
}

#[test]
fn a_fence_that_is_a_body_becomes_an_empty_statement() {
    let text = "#include <stdatomic.h>\n#include <pthread.h>\n\natomic_int f;\n\n\
                void *t(void *arg)\n{\n\tint r = atomic_load_explicit(&f, memory_order_relaxed);\n\
                \tif (r)\n\t\tatomic_thread_fence(memory_order_acquire);\n\tr = 0; atomic_thread_fence(memory_order_seq_cst);\n\
                \treturn NULL;\n}\n\nint main(void)\n{\n\tpthread_t a;\n\tpthread_create(&a, NULL, t, NULL);\n\
                \tatomic_store_explicit(&f, 1, memory_order_relaxed);\n\tpthread_join(a, NULL);\n\treturn 0;\n}\n";
    let u = Source::new("body.c", text).parse().unwrap();
    let rel = relaxed(&u, &Options::default());
    let new = &rel.files[0].text;
    assert!(new.contains("\tif (r)\n\t\t;\n\tr = 0;\n"), "{new}");
    assert!(!written_is_buggy(&u, &rel.files, &Options::default()));
}

#[test]
fn usage_errors_and_standard_input() {
    for args in [
        &["relax", "--format", "sarif", "fixtures/relax/mp.c"][..],
        &["relax", "--format", "dot", "fixtures/relax/mp.c"],
        &["relax", "--write", "-"],
        &["relax", "--cost", "x86", "fixtures/relax/mp.c"],
    ] {
        let out = fensyn(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
    }
    let text = std::fs::read(root().join(path("mp.c"))).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fensyn"))
        .args(["relax", "--stdin-filename", "fixtures/relax/mp.c", "-"])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let snap = std::fs::read_to_string(root().join("fixtures/relax/mp.c.relax.diff")).unwrap();
    assert_eq!(stdout(&out), snap);
}

#[test]
fn a_fence_in_a_macro_use_is_left_and_said() {
    let text = "#include <stdatomic.h>\n#include <pthread.h>\natomic_int f;\nint x;\n\
                #define FENCE_AND_SET() do { atomic_thread_fence(memory_order_seq_cst); x = 0; } while (0)\n\
                void *t(void *a) { FENCE_AND_SET(); return NULL; }\n\
                int main(void) { pthread_t a; pthread_create(&a, NULL, t, NULL); pthread_join(a, NULL); return x; }\n";
    let u = Source::new("macro.c", text).parse().unwrap();
    let rel = relaxed(&u, &Options::default());
    assert!(rel.items.is_empty() && rel.files.is_empty());
    assert_eq!(rel.skipped.len(), 1);
    assert!(rel.skipped[0].fence);
}
