//! The fast mode (`fix --mode fast`, fastFenSyng): one buggy execution per round, fences
//! applied to the program in memory, until an exploration finds no bug.
//!
//! * it fixes every fixture the optimal mode fixes, the fix re-checks clean, and it never costs
//!   less than the optimum;
//! * `iterations` is the number of buggy rounds, each of which turned exactly one buggy graph
//!   into requirements, and the first round stops at the first buggy execution;
//! * on a program whose buggy executions form one requirement it gives the optimal fences;
//! * an unfixable execution is reported as the optimal mode reports it, on the input program;
//! * the same input gives the same fences and diff.

mod common;

use common::*;
use fensyn::api::{repair, repair_with, Repair};
use fensyn::checker::{self, CheckOptions, Limits, Model};
use fensyn::ir::Program;
use fensyn::synth::fast::{self, FastOutcome};
use fensyn::synth::{Cost, Mode, Solution, SynthOptions};
use std::path::Path;

/// Parses fixture `path` with the `-I` and `-D` its expectations give.
fn load(path: &Path) -> (String, String, Program) {
    parse_fixture(path).unwrap_or_else(|d| panic!("{d}"))
}

/// The model and limits a fixture's expectations ask for (`--model`, `--unroll`,
/// `--spurious-cas`, and `fix_args`' `--liveness`), and its expected status of `fix`.
fn settings(path: &Path) -> (Model, Limits, String) {
    let exp = expect_of(path).unwrap_or_default();
    let args = expect_args(&exp);
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let model = value("--model")
        .map(|m| <Model as clap::ValueEnum>::from_str(&m, false).unwrap())
        .unwrap_or(Model::Rc11);
    let limits = Limits {
        unroll: value("--unroll").map(|u| u.parse().unwrap()),
        spurious_cas: args.iter().any(|a| a == "--spurious-cas"),
        leaks: args.iter().any(|a| a == "--leaks"),
        liveness: exp["fix_args"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "--liveness")),
        jobs: 1,
        ..Limits::default()
    };
    let status = exp["fix"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (model, limits, status)
}

/// The fixtures whose fix by fences has `status` (an expectation for `fix --by orders|both`
/// says nothing about the fences: such fixtures are left out).
fn fixtures_with(status: &str) -> Vec<std::path::PathBuf> {
    let by_orders = |p: &std::path::PathBuf| {
        let exp = expect_of(p).unwrap_or_default();
        exp["fix_args"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "--by"))
    };
    fixtures()
        .into_iter()
        .filter(|p| settings(p).2 == status && !by_orders(p))
        .collect()
}

fn cost(s: &Solution) -> (usize, u32) {
    (s.inserted, s.weight)
}

fn no_clock() -> f64 {
    0.0
}

/// On every fixture the optimal mode fixes: the fast mode's fix re-checks clean and costs no
/// less than the optimum (more on some), its rounds are its iterations and hold one graph each;
/// the lazy mode's fix re-checks clean and costs exactly the optimum.
#[test]
fn fast_and_lazy_modes_fix_every_fixture_optimal_fixes() {
    let mut fixed = 0;
    let mut dearer = 0;
    let mut fewer_requirements = 0;
    let mut capped = 0;
    for path in fixtures_with("fixed") {
        let (name, src, prog) = load(&path);
        let (model, limits, _) = settings(&path);
        // The fix under `opts`, whose written form re-checks clean.
        let fixed_with = |opts: &SynthOptions| {
            let Repair::Fixed {
                solution, verified, ..
            } = repair_with(&name, &src, &prog, model, limits.clone(), opts)
            else {
                panic!("{name}: {opts:?} does not fix it");
            };
            assert_eq!(verified.buggy, 0, "{name}: {opts:?}");
            solution
        };
        let in_mode = |mode| SynthOptions {
            mode,
            ..SynthOptions::default()
        };
        let opt = fixed_with(&in_mode(Mode::Optimal));
        let fast = fixed_with(&in_mode(Mode::Fast));
        assert_eq!(fast.mode, Mode::Fast, "{name}");
        // `--mode lazy`: the same rounds, re-solved over all of them: the optimum, holding
        // only the requirements it met.
        let lazy = fixed_with(&in_mode(Mode::Lazy));
        assert_eq!(lazy.mode, Mode::Lazy, "{name}");
        assert_eq!(cost(&lazy), cost(&opt), "{name}: lazy is not optimal");
        if lazy.requirements.len() < opt.requirements.len() {
            fewer_requirements += 1;
        }
        // `--mode optimal` past its collection limit: the requirements collected seed the
        // lazy rounds; the same minimum, reported as the optimal mode's.
        for limit in [0, 1, 3] {
            let seeded = fixed_with(&SynthOptions {
                collect_limit: limit,
                ..in_mode(Mode::Optimal)
            });
            assert_eq!(seeded.mode, Mode::Optimal, "{name}");
            assert_eq!(
                cost(&seeded),
                cost(&opt),
                "{name}: limit {limit} is not optimal"
            );
            match seeded.lazy_after {
                Some(n) => {
                    // Stopped past `limit` requirements or 10·limit buggy executions.
                    assert!(n >= 1, "{name}: stopped with no requirement");
                    assert!(seeded.iterations >= 1, "{name}");
                    capped += 1;
                }
                None => assert!(opt.requirements.len() <= limit, "{name}: not capped"),
            }
        }
        assert!(
            cost(&fast) >= cost(&opt),
            "{name}: fast {:?} is cheaper than the optimum {:?}",
            cost(&fast),
            cost(&opt)
        );
        if cost(&fast) > cost(&opt) {
            dearer += 1;
        }
        // Iterations are the buggy rounds; each turned one buggy graph into requirements.
        let run = fast::fix(&prog, model, &limits, Cost::Count, no_clock);
        let FastOutcome::Fixed { solution, .. } = &run.outcome else {
            panic!("{name}: fast::fix does not fix it");
        };
        assert!(solution.iterations >= 1, "{name}");
        assert_eq!(solution.iterations, run.rounds.len() - 1, "{name}");
        assert_eq!(solution.iterations, fast.iterations, "{name}");
        let (last, buggy) = run.rounds.split_last().unwrap();
        assert_eq!(last.graphs, 0, "{name}");
        assert!(buggy.iter().all(|r| r.graphs == 1 && r.requirements >= 1));
        // The requirements of the rounds are the solution's, given on the input program.
        assert_eq!(
            solution.requirements.len(),
            buggy.iter().map(|r| r.requirements).sum::<usize>(),
            "{name}"
        );
        for r in &solution.requirements {
            assert!(r
                .graph
                .events
                .iter()
                .all(|e| e.stmt.is_none_or(|s| s < prog.stmts.len())));
        }
        fixed += 1;
    }
    assert!(fixed >= 50, "only {fixed} fixtures fixed");
    assert!(
        capped >= 100,
        "the collection limit stopped only {capped} collections"
    );
    // The fast mode is not the optimal one: some fixture costs it more.
    assert!(dearer >= 1, "the fast mode matched the optimum everywhere");
    // The lazy mode holds fewer requirements than the optimal one somewhere.
    assert!(fewer_requirements >= 10, "only {fewer_requirements}");
}

/// Where the buggy executions form a single requirement, fixing the first one optimally is
/// fixing them all optimally.
#[test]
fn fast_agrees_with_optimal_on_a_single_buggy_class() {
    let mut compared = 0;
    for path in fixtures_with("fixed") {
        let (name, src, prog) = load(&path);
        let (model, limits, _) = settings(&path);
        let Repair::Fixed { solution: opt, .. } =
            repair(&name, &src, &prog, model, Mode::Optimal, limits.clone())
        else {
            panic!("{name}: no optimal fix");
        };
        if opt.requirements.len() != 1 {
            continue;
        }
        let Repair::Fixed {
            solution: fast,
            files: fixed_source,
            ..
        } = repair(&name, &src, &prog, model, Mode::Fast, limits.clone())
        else {
            panic!("{name}: no fast fix");
        };
        let fences =
            |s: &Solution| -> Vec<_> { s.fences.iter().map(|f| (f.site, f.order)).collect() };
        assert_eq!(fences(&fast), fences(&opt), "{name}");
        assert_eq!(fast.iterations, 1, "{name}");
        let Repair::Fixed {
            files: opt_source, ..
        } = repair(&name, &src, &prog, model, Mode::Optimal, limits)
        else {
            unreachable!()
        };
        assert_eq!(fixed_source, opt_source, "{name}");
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} single-class fixtures");
}

/// A round never holds more than the first buggy graph: the first exploration stops there,
/// long before the end of a program whose full exploration (and requirement collection) is
/// large.
#[test]
fn fast_rounds_stop_at_the_first_buggy_execution() {
    let path = root().join("fixtures/bench/peterson_2_3.c");
    let (name, _, prog) = load(&path);
    let limits = Limits {
        jobs: 1,
        ..Limits::default()
    };
    let full = checker::check(
        &prog,
        &CheckOptions {
            limits: limits.clone(),
            keep_buggy: 0,
            ..CheckOptions::default()
        },
    );
    assert!(full.stats.buggy > 100, "{name}: {} buggy", full.stats.buggy);
    let collected = fensyn::trace::collect::explore(&prog, Model::Rc11, limits.clone(), no_clock);
    let run = fast::fix(&prog, Model::Rc11, &limits, Cost::Count, no_clock);
    let FastOutcome::Fixed { solution, .. } = &run.outcome else {
        panic!("{name}: not fixed");
    };
    let (_, buggy) = run.rounds.split_last().unwrap();
    assert!(buggy.iter().all(|r| r.graphs == 1));
    assert!(
        run.rounds[0].executions < full.stats.executions,
        "{name}: the first round explored everything"
    );
    // Far fewer requirements than the collection holds.
    assert!(
        solution.requirements.len() * 4 < collected.requirements.len(),
        "{name}: {} requirements in fast mode, {} collected",
        solution.requirements.len(),
        collected.requirements.len()
    );
}

/// An execution no fence set removes is reported as the optimal mode reports it, on the
/// input program.
#[test]
fn fast_reports_unfixable_like_optimal() {
    let mut seen = 0;
    for path in fixtures_with("unfixable") {
        let (name, src, prog) = load(&path);
        let (model, limits, _) = settings(&path);
        let Repair::Unfixable { unfixable: opt, .. } =
            repair(&name, &src, &prog, model, Mode::Optimal, limits.clone())
        else {
            panic!("{name}: optimal does not call it unfixable");
        };
        let Repair::Unfixable {
            unfixable: fast, ..
        } = repair(&name, &src, &prog, model, Mode::Fast, limits.clone())
        else {
            panic!("{name}: fast does not call it unfixable");
        };
        assert_eq!(
            fast.requirement.bug.kind, opt.requirement.bug.kind,
            "{name}"
        );
        assert_eq!(fast.reason, opt.reason, "{name}");
        assert!(fast.requirement.bug.stmt < prog.stmts.len());
        assert!(fast
            .requirement
            .graph
            .events
            .iter()
            .all(|e| e.stmt.is_none_or(|s| s < prog.stmts.len())));
        seen += 1;
    }
    assert!(seen >= 3, "only {seen} unfixable fixtures");
    let out = fensyn(&["fix", "--mode", "fast", "fixtures/locks/deadlock.c"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn fast_mode_is_deterministic() {
    for f in [
        "fixtures/bench/store_buffer_4.c",
        "fixtures/bench/peterson_2_2.c",
        "fixtures/litmus/isa2.c",
    ] {
        let a = fensyn(&["fix", "--mode", "fast", "--format", "json", "-j", "2", f]);
        let b = fensyn(&["fix", "--mode", "fast", "--format", "json", "-j", "1", f]);
        assert_eq!(a.status.code(), Some(1), "{f}: {}", stderr(&a));
        assert_eq!(stdout(&a), stdout(&b), "{f}");
    }
}

/// `--mode auto` out of time (here at once, while collecting) runs the fast loop: the same fix
/// as `--mode fast`, said to be a fallback.
#[test]
fn auto_falls_back_to_the_fast_loop() {
    let f = "fixtures/bench/store_buffer_4.c";
    let json = |args: &[&str]| -> serde_json::Value { one_file(&stdout(&fensyn(args))).unwrap() };
    let auto = json(&["fix", "--optimal-timeout", "0", "--format", "json", f]);
    let fast = json(&["fix", "--mode", "fast", "--format", "json", f]);
    assert_eq!(auto["fell_back"], true);
    assert_eq!(auto["mode"], "fast");
    assert!(fast.get("fell_back").is_none());
    assert_eq!(auto["fences"], fast["fences"]);
    assert_eq!(auto["diff"], fast["diff"]);
    assert_eq!(auto["iterations"], fast["iterations"]);
    let optimal = json(&["fix", "--format", "json", f]);
    assert_eq!(optimal["mode"], "optimal");
    assert!(optimal["inserted"].as_u64() < fast["inserted"].as_u64());
}

/// Only the optimal limit's timeout falls back: `--timeout` (the user's limit on the whole
/// run) passing first during the collection is an incomplete result (exit code 4).
#[test]
fn the_user_timeout_is_not_a_fallback() {
    let f = "fixtures/bench/peterson_2_3.c";
    let out = fensyn(&[
        "fix",
        "--timeout",
        "0",
        "--optimal-timeout",
        "5",
        "--format",
        "json",
        f,
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["status"], "incomplete");
    let out = fensyn(&[
        "fix",
        "--timeout",
        "100",
        "--optimal-timeout",
        "0",
        "--format",
        "json",
        f,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["fell_back"], true);
    assert_eq!(j["status"], "fixed");
    assert_eq!(j["verified"]["buggy"], 0);
}
