//! `--equiv rf|value` and `--jobs`: the published class counts of the reads-from SMC paper's
//! and the thesis's programs (written from their descriptions in `tests/common/families.rs`),
//! and, on every fixture, the same verdict with every equivalence and every number of jobs.
//! (The classes themselves are checked against the brute-force oracle in
//! `tests/bruteforce.rs`, `coarse_equivalences_and_jobs_agree_with_the_oracle`.)

mod common;

use common::families::*;
use common::*;
use fensyn::checker::{self, Equiv, Limits, Model};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// (executions, blocked) of `src` under `model` with `equiv` on `jobs` threads.
fn classes(src: &str, model: Model, equiv: Equiv, jobs: usize, unroll: u32) -> (u64, u64) {
    let prog = parse_family(src);
    let (model, equiv) = checker::resolve_equiv(&prog, model, Some(equiv)).expect("resolves");
    let limits = Limits {
        equiv,
        jobs,
        ..unrolled(unroll)
    };
    let res = check_program(&prog, model, limits, false);
    assert!(res.complete(), "incomplete: {:?}", res.stats);
    assert_eq!(res.stats.bounded, 0);
    assert_eq!(res.stats.buggy, 0, "the families have no bugs");
    (res.stats.executions, res.stats.blocked)
}

fn factorial(n: u64) -> u64 {
    (1..=n).product()
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// Executions (ignoring blocked ones) for each equivalence, under `sc` and — for the programs
/// whose accesses are all seq_cst — `rc11`, on one and on two threads.
fn counts(src: &str, all_sc: bool, unroll: u32) -> [u64; 3] {
    let mut out = [0; 3];
    for (i, e) in [Equiv::Graph, Equiv::Rf, Equiv::Value]
        .into_iter()
        .enumerate()
    {
        let one = classes(src, Model::Sc, e, 1, unroll);
        assert_eq!(
            classes(src, Model::Sc, e, 2, unroll),
            one,
            "{e:?} on two threads"
        );
        if all_sc {
            assert_eq!(
                classes(src, Model::Rc11, e, 1, unroll),
                one,
                "{e:?} under rc11"
            );
        }
        out[i] = one.0;
    }
    out
}

#[test]
fn lastwrite_has_n_reads_from_classes() {
    for n in 1..=6u64 {
        let [graph, rf, value] = counts(&lastwrite(n as usize), true, 2);
        assert_eq!((graph, rf, value), (factorial(n), n, n), "lastwrite({n})");
    }
}

#[test]
fn sigma_has_n_factorial_reads_from_classes() {
    for n in 1..=5u64 {
        let [graph, rf, value] = counts(&sigma(n as usize), true, n as u32 + 1);
        let double_factorial: u64 = (1..=n).map(|i| 2 * i - 1).product();
        assert_eq!(
            (graph, rf, value),
            (double_factorial, factorial(n), factorial(n)),
            "sigma({n})"
        );
    }
}

#[test]
fn floating_read_has_n_plus_one_reads_from_classes() {
    for n in 1..=6u64 {
        let [graph, rf, value] = counts(&floating_read(n as usize), true, 2);
        assert_eq!(
            (graph, rf, value),
            (factorial(n + 1), n + 1, n + 1),
            "floating-read({n})"
        );
    }
}

#[test]
fn readers_has_two_to_the_n_reads_from_classes() {
    for n in 1..=8u32 {
        let [graph, rf, value] = counts(&readers(n as usize), true, 2);
        assert_eq!((graph, rf, value), (1 << n, 1 << n, 1 << n), "readers({n})");
    }
}

#[test]
fn circular_buffer_has_2n_choose_n_classes() {
    // A mutex is an acquire CAS and a release store: only `sc` applies.
    for n in 1..=4u64 {
        let want = binomial(2 * n, n);
        let [graph, rf, value] = counts(&circular_buffer(n as usize), false, n as u32 + 1);
        assert_eq!((graph, rf), (want, want), "circular-buffer({n})");
        assert!(value <= rf, "circular-buffer({n}): {value} value classes");
    }
}

#[test]
fn thesis_figure_4_1_has_27_graphs_8_reads_from_and_4_value_classes() {
    assert_eq!(counts(&vieq_fig41(), true, 2), [27, 8, 4]);
}

#[test]
fn equiv_rf_is_refused_where_it_is_not_implemented() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mp.c");
    std::fs::write(
        &f,
        "#include <stdatomic.h>\natomic_int x;\nint main(void) {\n    atomic_store_explicit(&x, 1, memory_order_relaxed);\n    return 0;\n}\n",
    )
    .unwrap();
    let path = f.to_str().unwrap();
    let out = fensyn(&["check", "--equiv", "rf", path]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("mp.c:4:5: error: --equiv rf needs sequential consistency"),
        "{}",
        stderr(&out)
    );
    let out = fensyn(&["check", "--model", "tso", "--equiv", "value", path]);
    assert_eq!(out.status.code(), Some(3));
    // Graphs work everywhere, and the default picks them where rf/value do not apply.
    let out = fensyn(&["check", "--format", "json", path]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["equiv"], "graph");
    let out = fensyn(&["check", "--format", "json", "--model", "sc", path]);
    let j = json(&out);
    assert_eq!(j["equiv"], "rf");
}

/// The fixtures with expectations, outside `fixtures/bench`, with the extra arguments their
/// expectations ask for.
fn expected_fixtures() -> Vec<(PathBuf, Vec<String>)> {
    fixtures()
        .into_iter()
        .filter(|p| !rel(p).starts_with("fixtures/bench/"))
        .filter_map(|p| expect_of(&p).map(|e| (p.clone(), expect_args(&e))))
        .collect()
}

/// (exit code, buggy count > 0, sorted error kinds) of `check --format json`.
fn verdict(file: &Path, args: &[String], extra: &[&str]) -> (Option<i32>, bool, Vec<String>) {
    let (v, _) = verdict_cut(file, args, extra);
    v
}

/// [`verdict`] and whether executions were cut at the loop bound.
fn verdict_cut(
    file: &Path,
    args: &[String],
    extra: &[&str],
) -> ((Option<i32>, bool, Vec<String>), bool) {
    let mut all: Vec<&str> = vec!["check", "--format", "json"];
    all.extend(args.iter().map(String::as_str));
    all.extend(extra);
    all.push(file.to_str().unwrap());
    let out = fensyn(&all);
    let j: Value = one_file(&stdout(&out))
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", file.display(), stderr(&out)));
    let mut kinds: Vec<String> = j["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}:{}", e["kind"], e["line"]))
        .collect();
    kinds.sort();
    kinds.dedup();
    let cut = j["bounded"].as_u64() > Some(0);
    (
        (out.status.code(), j["buggy"].as_u64() > Some(0), kinds),
        cut,
    )
}

/// Whether `v`, from a run cut at the loop bound, agrees with the complete verdict `full` as
/// far as it went: the same exit code and buggy flag, and no error `full` lacks (errors past
/// the bound — a liveness bug only a zero-net-effect pass reveals, which `--equiv value` does
/// not prune — may be missing).
fn agrees_up_to_the_bound(
    v: &(Option<i32>, bool, Vec<String>),
    full: &(Option<i32>, bool, Vec<String>),
) -> bool {
    v.0 == full.0 && v.1 == full.1 && v.2.iter().all(|k| full.2.contains(k))
}

/// Whether `--equiv e` (rf or value) refuses `file` because it allocates objects or chooses
/// values (documented as not implemented: `--equiv graph` is used for such programs).
fn coarse_refused(file: &Path, args: &[String], e: &str) -> bool {
    let mut all: Vec<&str> = vec!["check", "--model", "sc", "--equiv", e];
    all.extend(args.iter().map(String::as_str));
    all.push(file.to_str().unwrap());
    let out = fensyn(&all);
    out.status.code() == Some(3)
        && stderr(&out).contains("is not implemented for programs that allocate objects")
}

#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn every_fixture_has_the_same_verdict_with_every_equivalence_and_every_jobs() {
    let mut problems = Vec::new();
    for (file, args) in expected_fixtures() {
        let name = rel(&file);
        let own_model = args.iter().any(|a| a == "--model");
        // Under its own model (rc11 unless the fixture says otherwise): graphs on 1 and 2
        // threads, and the default equivalence.
        let base = verdict(&file, &args, &["--equiv", "graph", "-j", "1"]);
        for extra in [&["--equiv", "graph", "-j", "2"][..], &[][..]] {
            let v = verdict(&file, &args, extra);
            if v != base {
                problems.push(format!("{name} {extra:?}: {v:?} != {base:?}"));
            }
        }
        if own_model {
            continue;
        }
        // Under sc: every equivalence on 1 and 2 threads.
        let sc = verdict(
            &file,
            &args,
            &["--model", "sc", "--equiv", "graph", "-j", "1"],
        );
        for e in ["rf", "value", "graph"] {
            if e != "graph" && coarse_refused(&file, &args, e) {
                continue;
            }
            for j in ["1", "2"] {
                let (v, cut) = verdict_cut(&file, &args, &["--model", "sc", "--equiv", e, "-j", j]);
                if v != sc && !(cut && agrees_up_to_the_bound(&v, &sc)) {
                    problems.push(format!("{name} sc --equiv {e} -j {j}: {v:?} != {sc:?}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Executions explored until the first bug (`check --first`).
fn executions_to_first_bug(src: &str, equiv: Equiv) -> u64 {
    let limits = Limits {
        equiv,
        ..Limits::default()
    };
    let res = check_family(src, Model::Sc, limits, true);
    assert_eq!(res.buggy.len(), 1, "reorder has a bug");
    res.stats.executions
}

/// The reads-from SMC paper hits reorder_N_bad's bug on its second trace; so do we, in every
/// equivalence: the explorer tries the initial value first, and the second execution already
/// lets the checker read `a` from a setter and `b` from the initialisation.
#[test]
fn first_finds_the_reorder_bug_on_the_second_execution() {
    for setters in 1..=5 {
        for checkers in 1..=2 {
            let src = reorder(setters, checkers);
            for equiv in [Equiv::Graph, Equiv::Rf, Equiv::Value] {
                let n = executions_to_first_bug(&src, equiv);
                assert_eq!(n, 2, "reorder({setters}, {checkers}) {equiv:?}");
            }
        }
    }
}

/// Writes the families at benchmark sizes to `$FENSYN_FAMILIES_DIR` (used by
/// `scripts/bench equiv`; does nothing without the variable).
#[test]
fn write_benchmark_families() {
    let Ok(dir) = std::env::var("FENSYN_FAMILIES_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let files = [
        ("lastwrite-8.c", lastwrite(8)),
        ("sigma-6.c", sigma(6)),
        ("floating-read-7.c", floating_read(7)),
        ("readers-10.c", readers(10)),
        ("circular-buffer-6.c", circular_buffer(6)),
        ("lastzero-6.c", lastzero(6)),
        ("reorder-4-2.c", reorder(4, 2)),
        ("fib_bench-3.c", fib_bench(3)),
    ];
    for (name, src) in files {
        std::fs::write(dir.join(name), src).unwrap();
    }
}

/// `fix` explores graphs for synthesis and re-checks the fixed program with the coarsest
/// equivalence that applies to it (or the one asked for, where it applies).
#[test]
fn fix_rechecks_with_the_equivalence_that_applies() {
    let sb = root().join("fixtures/litmus/sb.c");
    let sb = sb.to_str().unwrap();
    let run = |args: &[&str]| -> Value {
        let mut all = vec!["fix", "--format", "json"];
        all.extend(args);
        all.push(sb);
        let out = fensyn(&all);
        one_file(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)))
    };
    // rc11: relaxed accesses and the fences added keep graphs.
    let j = run(&[]);
    assert_eq!(j["status"], "fixed");
    assert_eq!(j["verified"]["equiv"], "graph");
    // sc: nothing to fix, whatever the equivalence.
    for e in ["graph", "rf", "value"] {
        let j = run(&["--model", "sc", "--equiv", e]);
        assert_eq!(j["status"], "clean", "--equiv {e}");
    }
}

/// The whole text report (counts, errors, the failing execution shown) is the same on one and
/// on three threads, with and without `--first`.
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn every_fixture_reports_the_same_text_on_any_number_of_jobs() {
    let mut problems = Vec::new();
    for (file, args) in expected_fixtures() {
        for first in [&[][..], &["--first"][..]] {
            let text = |jobs: &str| {
                let mut all: Vec<&str> = vec!["check", "-j", jobs];
                all.extend(args.iter().map(String::as_str));
                all.extend(first);
                all.push(file.to_str().unwrap());
                let out = fensyn(&all);
                (out.status.code(), stdout(&out))
            };
            if text("1") != text("3") {
                problems.push(format!("{} {first:?}", rel(&file)));
            }
        }
    }
    assert!(problems.is_empty(), "differ: {}", problems.join(", "));
}

/// Issue 5's acceptance, on every fixture: `fix --prove-optimal` proves every fix minimal —
/// each variant with one fence removed or weakened one step still has a buggy execution (a
/// variant without one is exit 5; a fix found and not written is exit 1).
#[test]
fn every_fixture_fix_is_proved_minimal() {
    let mut problems = Vec::new();
    let mut proved = 0;
    for (file, args) in expected_fixtures() {
        let mut all: Vec<&str> = vec![
            "fix",
            "--prove-optimal",
            "--mode",
            "optimal",
            "--format",
            "json",
        ];
        all.extend(args.iter().map(String::as_str));
        all.push(file.to_str().unwrap());
        let out = fensyn(&all);
        let name = rel(&file);
        let Ok(j) = one_file(&stdout(&out)) else {
            problems.push(format!(
                "{name}: no JSON ({:?}): {}",
                out.status.code(),
                stderr(&out)
            ));
            continue;
        };
        if j["status"] != "fixed" {
            continue;
        }
        let proof = j["proof"].as_array().cloned().unwrap_or_default();
        if out.status.code() != Some(1) || proof.is_empty() {
            problems.push(format!(
                "{name}: exit {:?}, {} proof entries",
                out.status.code(),
                proof.len()
            ));
            continue;
        }
        if let Some(e) = proof.iter().find(|e| e["buggy"].as_u64() < Some(1)) {
            problems.push(format!("{name}: a variant has no bug: {e}"));
        }
        proved += 1;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("{proved} fixes proved minimal");
    assert!(proved >= 30, "only {proved} fixtures were fixed");
}

/// The commands that need every graph refuse `--equiv rf|value` (exit 3) rather than ignore it.
#[test]
fn commands_that_need_graphs_refuse_coarser_equivalences() {
    let sb = root().join("fixtures/litmus/sb.c");
    let sb = sb.to_str().unwrap();
    for args in [
        &["robust", "--equiv", "rf"][..],
        &["explain", "--equiv", "value"][..],
        &["check", "--on-hardware", "x86", "--equiv", "value"][..],
    ] {
        let mut all = args.to_vec();
        all.push(sb);
        let out = fensyn(&all);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(
            stderr(&out).contains("use --equiv graph"),
            "{args:?}: {}",
            stderr(&out)
        );
        let graph: Vec<&str> = args
            .iter()
            .map(|a| {
                if *a == "rf" || *a == "value" {
                    "graph"
                } else {
                    a
                }
            })
            .chain([sb])
            .collect();
        assert_ne!(fensyn(&graph).status.code(), Some(3), "{graph:?}");
    }
}
