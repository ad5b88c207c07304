//! Soundness and optimality of synthesised fixes.
//!
//! * Soundness: every fix re-checks clean (the rewritten source is parsed and explored again).
//! * Local optimality: removing any inserted fence, or weakening any chosen order by one step of
//!   the lattice (sc → acq_rel → acq | rel → none; a strengthened fence back towards its
//!   original order), leaves a buggy execution.
//! * Global optimality on small fixtures: no fence set of lexicographically smaller cost (fewer
//!   fences, or as many with less weight) over the candidate sites fixes every requirement.

mod common;

use common::*;
use fensyn::api::{repair, Repair};
use fensyn::checker::{self, CheckOptions, Limits, Model};
use fensyn::ir::{MemOrder, Program};
use fensyn::rewrite;
use fensyn::synth::{self, Mode, Outcome};
use fensyn::trace::{candidate_sites, requirements, Assignment, Candidate, Site};

fn load(path: &std::path::Path) -> (String, String, Program) {
    parse_fixture(path).unwrap_or_else(|d| panic!("{d}"))
}

/// The loop bound a fixture's expectations ask for (`"args": ["--unroll", "N"]`), if any, and
/// liveness when its `fix_args` hold `--liveness`.
fn limits_of(path: &std::path::Path) -> Limits {
    let exp: serde_json::Value = std::fs::read_to_string(path.with_extension("expect.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let args: Vec<&str> = exp["args"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let unroll = args
        .windows(2)
        .find(|w| w[0] == "--unroll")
        .and_then(|w| w[1].parse().ok());
    Limits {
        unroll,
        liveness: exp["fix_args"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "--liveness")),
        ..Limits::default()
    }
}

/// The memory model a fixture's expectations ask for (`"args": ["--model", "M"]`; rc11
/// otherwise).
fn model_of(path: &std::path::Path) -> Model {
    let exp: serde_json::Value = std::fs::read_to_string(path.with_extension("expect.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let args: Vec<&str> = exp["args"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    args.windows(2)
        .find(|w| w[0] == "--model")
        .map(|w| <Model as clap::ValueEnum>::from_str(w[1], false).unwrap())
        .unwrap_or(Model::Rc11)
}

/// Writes `fences` into the source and counts the buggy executions of the result.
fn buggy_with(
    name: &str,
    src: &str,
    prog: &Program,
    fences: &[(Site, MemOrder)],
    limits: &Limits,
    model: Model,
) -> u64 {
    let (edits, _) = rewrite::fence_edits(src, prog, fences).unwrap();
    let files = rewrite::files::apply_all(src, prog, &edits).unwrap();
    let p =
        fensyn::api::reparse(name, src, prog, &files).unwrap_or_else(|d| panic!("{d}\n{files:?}"));
    let opts = CheckOptions {
        model,
        limits: limits.clone(),
        ..CheckOptions::default()
    };
    let res = checker::check(&p, &opts);
    assert!(res.stats.incomplete.is_none());
    res.stats.buggy
}

/// One-step weakenings of a chosen order; `None` means "no fence".
fn weaker(o: MemOrder) -> Vec<Option<MemOrder>> {
    match o {
        MemOrder::SeqCst => vec![Some(MemOrder::AcqRel)],
        MemOrder::AcqRel => vec![Some(MemOrder::Acquire), Some(MemOrder::Release)],
        _ => vec![None],
    }
}

fn fixed_fixtures() -> Vec<std::path::PathBuf> {
    fixtures()
        .into_iter()
        .filter(|c| {
            std::fs::read_to_string(c.with_extension("expect.json"))
                .is_ok_and(|s| s.contains("\"fixed\""))
        })
        .collect()
}

#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn every_fix_is_sound_and_locally_minimal() {
    let mut checked = 0;
    for path in fixed_fixtures() {
        for mode in [Mode::Optimal, Mode::Fast] {
            let (name, src, prog) = load(&path);
            let limits = limits_of(&path);
            let model = model_of(&path);
            let Repair::Fixed {
                solution, verified, ..
            } = repair(&name, &src, &prog, model, mode, limits.clone())
            else {
                panic!("{name}: expected a fix");
            };
            assert_eq!(verified.buggy, 0, "{name}");
            if mode == Mode::Fast {
                continue;
            }
            let chosen: Vec<(Site, MemOrder)> =
                solution.fences.iter().map(|f| (f.site, f.order)).collect();
            for (i, f) in solution.fences.iter().enumerate() {
                for w in weaker(f.order) {
                    // A strengthened program fence can only go back down to its original order.
                    let w = match (w, f.previous) {
                        (None, Some(prev)) => Some(prev),
                        (Some(o), Some(prev)) if !prev.le(o) => continue,
                        (w, _) => w,
                    };
                    let mut variant = chosen.clone();
                    match w {
                        Some(o) if Some(o) != f.previous => variant[i].1 = o,
                        _ => {
                            variant.remove(i);
                        }
                    }
                    let bugs = buggy_with(&name, &src, &prog, &variant, &limits, model);
                    assert!(
                        bugs > 0,
                        "{name}: weakening fence {i} ({:?} {}) to {w:?} still fixes the program",
                        f.site,
                        f.order
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 10, "only {checked} variants checked");
}

/// All assignments over `sites` using at most `k` sites.
/// Gives `check` a sample of the assignments over `sites`: every one with at most two fences
/// (one where there are many sites: the number of pairs grows fast), and each fence order at
/// every site that allows it.
fn sample_assignments(sites: &[Candidate], check: &mut dyn FnMut(&Assignment)) {
    let k = if sites.len() <= 12 { 2 } else { 1 };
    assignments(sites, k, 0, &mut Assignment::default(), check);
    for o in [
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
        MemOrder::SeqCst,
    ] {
        let mut every = Assignment::default();
        for c in sites {
            if c.orders.contains(&o) {
                every.set(c.site, o);
            }
        }
        check(&every);
    }
}

fn assignments(
    sites: &[Candidate],
    k: usize,
    start: usize,
    cur: &mut Assignment,
    out: &mut dyn FnMut(&Assignment),
) {
    out(cur);
    if k == 0 {
        return;
    }
    for i in start..sites.len() {
        for &o in &sites[i].orders {
            cur.set(sites[i].site, o);
            assignments(sites, k - 1, i + 1, cur, out);
            cur.orders.remove(&sites[i].site);
        }
    }
}

#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn no_cheaper_fence_set_exists_on_small_fixtures() {
    let mut compared = 0;
    for path in fixed_fixtures() {
        let (name, _src, prog) = load(&path);
        let model = model_of(&path);
        let opts = CheckOptions {
            model,
            limits: limits_of(&path),
            ..CheckOptions::default()
        };
        let res = checker::check(&prog, &opts);
        let Outcome::Fixed(sol) = synth::synthesize(&prog, &res.buggy, model, Mode::Optimal) else {
            panic!("{name}: expected a fix");
        };
        if sol.fences.len() > 2 {
            continue; // the exhaustive search below grows too fast beyond two fences
        }
        assert_no_cheaper_fix(&name, &prog, &res.buggy, &sol, model);
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} fixtures compared");
}

/// Exhaustively: no assignment over the candidate sites with at most as many fences as `sol`
/// is cheaper (count, then weight) and fixes every requirement.
fn assert_no_cheaper_fix(
    name: &str,
    prog: &fensyn::ir::Program,
    buggy: &[fensyn::checker::ExecutionGraph],
    sol: &synth::Solution,
    model: Model,
) {
    let reqs = requirements(buggy, model);
    let sites = candidate_sites(prog, &reqs);
    let cost = |a: &Assignment| -> (usize, u32) {
        let mut total = (0, 0);
        for cand in &sites {
            if let Some(o) = a.get(cand.site) {
                match cand.base {
                    None => {
                        total.0 += 1;
                        total.1 += o.fence_weight();
                    }
                    Some(b) => total.1 += o.fence_weight() - b.fence_weight(),
                }
            }
        }
        total
    };
    let best = (sol.inserted, sol.weight);
    let mut cheaper_fix = None;
    assignments(
        &sites,
        sites.len().min(sol.fences.len()),
        0,
        &mut Assignment::default(),
        &mut |a| {
            if cheaper_fix.is_none()
                && cost(a) < best
                && reqs.iter().all(|r| r.fixed_by(a, model).is_some())
            {
                cheaper_fix = Some(a.clone());
            }
        },
    );
    assert!(
        cheaper_fix.is_none(),
        "{name}: {cheaper_fix:?} is cheaper than the chosen fix {best:?}"
    );
}

/// Random two-thread litmus programs (relaxed stores and loads of `x` and `y`, a forbidden
/// outcome asserted in main): whenever one is buggy and fixable, the optimal fix is checked
/// against every smaller fence set, and the fixed program re-checks clean.
#[test]
fn random_litmus_programs_are_fixed_optimally() {
    let mut seed: u64 = 0x0005_eed0_f0b7;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut fixed, mut clean) = (0, 0);
    for round in 0..1200 {
        let mut loads = Vec::new();
        let mut threads = String::new();
        for t in 0..2 {
            let mut body = String::new();
            // Stores first and loads after, mostly: the shapes (SB, MP, 2+2W, ...) where
            // weak memory shows.
            for i in 0..1 + next(3) {
                let var = ["x", "y"][next(2) as usize];
                let store = if i == 0 { next(4) != 0 } else { next(4) == 0 };
                if store {
                    body += &format!(
                        "    atomic_store_explicit(&{var}, {}, memory_order_relaxed);\n",
                        1 + next(2)
                    );
                } else {
                    let r = format!("r{}", loads.len());
                    body +=
                        &format!("    {r} = atomic_load_explicit(&{var}, memory_order_relaxed);\n");
                    loads.push(r);
                }
            }
            threads += &format!("void *t{t}(void *arg) {{\n{body}    return NULL;\n}}\n");
        }
        if loads.is_empty() {
            continue;
        }
        let globals: String = loads.iter().map(|r| format!("int {r};\n")).collect();
        let source = |values: &[u64]| {
            let cond: Vec<String> = loads
                .iter()
                .zip(values)
                .map(|(r, v)| format!("{r} == {v}"))
                .collect();
            format!(
                "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
                 atomic_int x, y;\n{globals}{threads}\
                 int main(void) {{\n    pthread_t a, b;\n\
                 pthread_create(&a, NULL, t0, NULL);\n    pthread_create(&b, NULL, t1, NULL);\n\
                 pthread_join(a, NULL);\n    pthread_join(b, NULL);\n    assert(!({}));\n    return 0;\n}}\n",
                cond.join(" && ")
            )
        };
        let name = format!("random #{round}");
        // The first outcome (values of the loads) that only weak memory allows: the program
        // asserting it never happens is buggy under rc11 and clean under sc.
        let k = loads.len() as u32;
        let mut found = None;
        for code in 0..3u64.pow(k) {
            let values: Vec<u64> = (0..k).map(|i| code / 3u64.pow(i) % 3).collect();
            let src = source(&values);
            let prog =
                fensyn::frontend::parse_c(&name, &src).unwrap_or_else(|d| panic!("{d}\n{src}"));
            let sc = checker::check(
                &prog,
                &CheckOptions {
                    model: Model::Sc,
                    first: true,
                    ..CheckOptions::default()
                },
            );
            if !sc.buggy.is_empty() {
                continue;
            }
            let res = checker::check(&prog, &CheckOptions::default());
            if !res.buggy.is_empty() {
                found = Some((src, prog, res));
                break;
            }
        }
        let Some((src, prog, res)) = found else {
            clean += 1;
            continue;
        };
        // Buggy only under weak memory: seq_cst fences everywhere restore SC, so a fix exists.
        let Outcome::Fixed(sol) = synth::synthesize(&prog, &res.buggy, Model::Rc11, Mode::Optimal)
        else {
            panic!("{name}: buggy under rc11 only, but no fix\n{src}");
        };
        if sol.fences.len() <= 3 {
            assert_no_cheaper_fix(&name, &prog, &res.buggy, &sol, Model::Rc11);
        }
        let r = fensyn::api::repair(
            &name,
            &src,
            &prog,
            Model::Rc11,
            Mode::Optimal,
            Limits::default(),
        );
        assert!(
            matches!(r, fensyn::api::Repair::Fixed { .. }),
            "{name}: the fix did not re-check clean\n{src}"
        );
        fixed += 1;
    }
    eprintln!("{fixed} random programs fixed optimally, {clean} without a weak-only outcome");
    assert!(fixed >= 20 && clean >= 5, "fixed {fixed}, clean {clean}");
}

/// Every fixture checked under rc11 (outside `fixtures/bench/`) that has buggy executions and
/// was explored in full: its name, program and check result.
fn buggy_rc11_fixtures() -> Vec<(String, Program, checker::CheckResult)> {
    let mut out = Vec::new();
    for path in fixtures() {
        if model_of(&path) != Model::Rc11 || rel(&path).starts_with("fixtures/bench/") {
            continue;
        }
        // A fixture of an input error (`fixtures/preprocessor/`) has no expectations.
        let (name, _src, prog) = match parse_fixture(&path) {
            Ok(p) => p,
            Err(_) if expect_of(&path).is_none() => continue,
            Err(d) => panic!("{d}"),
        };
        let opts = CheckOptions {
            model: Model::Rc11,
            limits: limits_of(&path),
            ..CheckOptions::default()
        };
        let res = checker::check(&prog, &opts);
        if res.buggy.is_empty() || res.stats.incomplete.is_some() {
            continue;
        }
        out.push((name, prog, res));
    }
    out
}

/// `Requirement::fixed_by` under rc11 (the explorer's incremental check: vector clocks, the
/// coherence frontier, psc on the seq_cst rows) gives the verdict of the recomputed relations
/// (`fixed_by_relations`) — fixed or not, and how — for every requirement of every fixture
/// buggy under rc11 (its first 24), under every assignment of one candidate site (two where a
/// fixture has at most 12 sites), all orders, and under each order at every site at once.
#[test]
fn fast_rc11_verdicts_match_the_relations() {
    let mut compared = 0u64;
    let mut fixed = 0u64;
    for (name, prog, res) in buggy_rc11_fixtures() {
        let reqs = requirements(&res.buggy, Model::Rc11);
        let sites = candidate_sites(&prog, &reqs);
        let mut check = |a: &Assignment| {
            for r in reqs.iter().take(24) {
                let fast = r.fixed_by(a, Model::Rc11);
                let slow = r.fixed_by_relations(a, Model::Rc11);
                assert_eq!(fast, slow, "{name}: {:?} under {:?}", r.bug, a.orders);
                compared += 1;
                fixed += u64::from(fast.is_some());
            }
        };
        sample_assignments(&sites, &mut check);
    }
    eprintln!("{fixed} of {compared} verdicts were fixes");
    assert!(compared > 50_000, "only {compared} verdicts compared");
    assert!(
        fixed > 1_000 && fixed < compared,
        "{fixed} of {compared} fixed"
    );
}

/// Dropping the requirements another bug of the same execution implies (`trace/subsume.rs`) is
/// exact: on every rc11 fixture an assignment fixes every kept requirement iff it fixes every
/// requirement of every bug, and the optimal fix is the same.
#[test]
fn implied_requirements_change_no_fix() {
    let (mut compared, mut fixing, mut dropped) = (0u64, 0u64, 0usize);
    for (name, prog, res) in buggy_rc11_fixtures() {
        let all = fensyn::trace::all_requirements(&res.buggy, Model::Rc11);
        let kept = requirements(&res.buggy, Model::Rc11);
        assert!(kept.len() <= all.len(), "{name}");
        dropped += all.len() - kept.len();
        let sites = candidate_sites(&prog, &all);
        let mut check = |a: &Assignment| {
            let fixes_kept = kept.iter().all(|r| r.fixed_by(a, Model::Rc11).is_some());
            if fixes_kept {
                fixing += 1;
                for r in &all {
                    assert!(
                        r.fixed_by(a, Model::Rc11).is_some(),
                        "{name}: {:?} fixes every kept requirement but not {:?}",
                        a.orders,
                        r.bug
                    );
                }
            }
            compared += 1;
        };
        sample_assignments(&sites, &mut check);
        let optimal = |reqs| {
            let opts = synth::SynthOptions {
                mode: Mode::Optimal,
                ..synth::SynthOptions::default()
            };
            match synth::synthesize_requirements(&prog, reqs, Model::Rc11, &opts) {
                Outcome::Fixed(s) => Some((s.inserted, s.strengthened, s.weight, s.assignment)),
                Outcome::Unfixable(_) => None,
            }
        };
        // The same cost; among fixes of equal cost the 0/1 program may pick another one, but
        // the one chosen from the kept requirements fixes every requirement.
        let (from_kept, from_all) = (optimal(kept), optimal(all.clone()));
        let cost = |o: &Option<(usize, usize, u32, Assignment)>| {
            o.as_ref().map(|(i, s, w, _)| (*i, *s, *w))
        };
        assert_eq!(cost(&from_kept), cost(&from_all), "{name}: optimal fix");
        if let Some((.., a)) = &from_kept {
            assert!(
                all.iter().all(|r| r.fixed_by(a, Model::Rc11).is_some()),
                "{name}: the optimal fix of the kept requirements leaves one of all"
            );
        }
    }
    eprintln!("{dropped} requirements dropped; {fixing} of {compared} assignments fix");
    assert!(dropped > 100, "only {dropped} requirements dropped");
    assert!(fixing > 20 && compared > 1_000, "{fixing} of {compared}");
}
