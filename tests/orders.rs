//! `fix --by orders|both`: fixes by memory orders (fixtures in `fixtures/orders/`), the choice
//! `both` makes, the proof of optimality, the configuration key, and the exactness of the
//! abstraction (an access order evaluated on a requirement's graph agrees with re-checking the
//! program with that order written).

mod common;

use common::*;
use fensyn::checker::{self, CheckOptions, Equiv, Limits, Model};
use fensyn::ir::MemOrder;
use fensyn::rewrite::orders::{order_edits, OrderChange};
use fensyn::trace::orders::AccessSites;
use fensyn::trace::{Assignment, Site};
use serde_json::Value;

/// `fix --format json ARGS FILE`.
fn fix(file: &str, args: &[&str]) -> Value {
    let mut all = vec!["fix", file, "--format", "json"];
    all.extend_from_slice(args);
    json(&fensyn(&all))
}

/// The `accesses` of a fix as `(kind, line, previous, order)`.
fn accesses(j: &Value) -> Vec<(String, u64, String, String)> {
    j["accesses"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["kind"].as_str().unwrap().to_string(),
                        x["line"].as_u64().unwrap(),
                        x["previous"].as_str().unwrap().to_string(),
                        x["order"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn a(kind: &str, line: u64, previous: &str, order: &str) -> (String, u64, String, String) {
    (kind.into(), line, previous.into(), order.into())
}

fn fences(j: &Value) -> Vec<String> {
    let mut v: Vec<String> = j["fences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["order"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn message_passing_is_fixed_by_a_release_store_and_an_acquire_load() {
    let j = fix("fixtures/orders/mp_flag.c", &["--by", "orders"]);
    assert_eq!(j["status"], "fixed");
    assert!(fences(&j).is_empty());
    assert_eq!(
        accesses(&j),
        vec![
            a("store", 15, "relaxed", "release"),
            a("load", 22, "relaxed", "acquire")
        ]
    );
    assert_eq!(j["verified"]["buggy"], 0);
    assert_eq!(j["by"], "orders");
    // `both`: two order changes against two fences of the same weight; the tie goes to orders.
    let both = fix("fixtures/orders/mp_flag.c", &["--by", "both"]);
    assert_eq!(accesses(&both), accesses(&j));
    assert!(fences(&both).is_empty());
    // The default is unchanged: fences.
    let default = fix("fixtures/orders/mp_flag.c", &[]);
    assert_eq!(fences(&default), vec!["acquire", "release"]);
    assert!(default.get("accesses").is_none() && default.get("by").is_none());
}

#[test]
fn store_buffering_needs_four_seq_cst_accesses_and_both_picks_two_fences() {
    let f = "fixtures/orders/sb_orders.c";
    let orders = fix(f, &["--by", "orders"]);
    let got = accesses(&orders);
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().all(|x| x.3 == "seq_cst"), "{got:?}");
    assert_eq!(orders["weight"], 12);
    // By the objective (changes + new fences first): 2 fences beat 4 changed accesses.
    let both = fix(f, &["--by", "both"]);
    assert_eq!(fences(&both), vec!["seq_cst", "seq_cst"]);
    assert!(accesses(&both).is_empty());
    assert_eq!(both["verified"]["buggy"], 0);
}

#[test]
fn a_cas_lock_gets_acquire_on_the_cas_and_release_on_the_unlock() {
    let j = fix("fixtures/orders/cas_lock.c", &["--by", "orders"]);
    assert_eq!(
        accesses(&j),
        vec![
            a("cas", 16, "relaxed", "acquire"),
            a("store", 24, "relaxed", "release")
        ]
    );
    let diff = j["diff"].as_str().unwrap();
    // Only the success order changes; the failure order stays relaxed.
    assert!(diff.contains("+                                                  memory_order_acquire,\n                                                   memory_order_relaxed))"), "{diff}");
    let cpp = fix("fixtures/orders/spinlock_member.cpp", &["--by", "orders"]);
    let diff = cpp["diff"].as_str().unwrap();
    assert!(
        diff.contains(
            "+    while (!busy.compare_exchange_weak(expected, true, std::memory_order_acquire)) {"
        ),
        "{diff}"
    );
    assert!(diff.contains("+    busy.store(false, std::memory_order_release);"));
}

#[test]
fn orders_are_written_in_the_files_own_spelling() {
    let b = fix("fixtures/orders/mp_builtin.c", &["--by", "orders"]);
    let diff = b["diff"].as_str().unwrap();
    assert!(
        diff.contains("+\t__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);"),
        "{diff}"
    );
    assert!(diff.contains("+\tif (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) == 1)"));
    let m = fix("fixtures/orders/mp_member.cpp", &["--by", "orders"]);
    let diff = m["diff"].as_str().unwrap();
    assert!(
        diff.contains("+    ready.store(true, std::memory_order::release);"),
        "{diff}"
    );
    assert!(diff.contains("+    if (ready.load(std::memory_order::acquire)) {"));
}

#[test]
fn plain_accesses_are_never_made_atomic() {
    // The payload stays plain; the flag's orders order the racing accesses.
    let j = fix("fixtures/orders/mp_plain_data.c", &["--by", "orders"]);
    assert_eq!(
        accesses(&j),
        vec![
            a("store", 13, "relaxed", "release"),
            a("load", 18, "relaxed", "acquire")
        ]
    );
    assert!(!j["diff"].as_str().unwrap().contains("+    payload"));
    // A race between plain accesses only: nothing to strengthen, reported.
    let u = fix("fixtures/orders/plain_race.c", &["--by", "orders"]);
    assert_eq!(u["status"], "unfixable");
    assert_eq!(u["errors"][0]["kind"], "race");
}

#[test]
fn prove_optimal_weakens_each_changed_access_one_step() {
    let j = fix(
        "fixtures/orders/sb_orders.c",
        &["--by", "orders", "--prove-optimal"],
    );
    let proof = j["proof"].as_array().unwrap();
    // Each seq_cst access one step weaker: a store release, a load acquire.
    assert_eq!(proof.len(), 4);
    for e in proof {
        assert_eq!(e["variant"], "access-weakened");
        assert!(e["buggy"].as_u64().unwrap() > 0, "{e}");
    }
    let orders: Vec<&str> = proof.iter().map(|e| e["order"].as_str().unwrap()).collect();
    assert_eq!(orders, vec!["release", "acquire", "release", "acquire"]);
    let out = fensyn(&[
        "fix",
        "fixtures/orders/mp_flag.c",
        "--by",
        "orders",
        "--prove-optimal",
    ]);
    let err = stderr(&out);
    assert!(
        err.contains("access weakened to relaxed: still buggy"),
        "{err}"
    );
}

#[test]
fn by_orders_refuses_the_fast_modes_and_reads_the_configuration() {
    let out = fensyn(&[
        "fix",
        "fixtures/orders/mp_flag.c",
        "--by",
        "orders",
        "--mode",
        "fast",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("--by orders needs the optimal search"));
    let (dir, file) = copy_fixture("fixtures/orders/mp_flag.c");
    std::fs::write(dir.path().join("fensyn.toml"), "by = \"orders\"\n").unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    let out = fensyn_in(dir.path(), &["fix", name, "--format", "json"]);
    assert_eq!(accesses(&json(&out)).len(), 2);
    std::fs::write(dir.path().join("fensyn.toml"), "by = \"sideways\"\n").unwrap();
    let out = fensyn_in(dir.path(), &["fix", name]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("`by` must be one of \"fences\", \"orders\", \"both\""));
}

/// Every assignment of orders to the candidate accesses of `fixture`: the requirements say it
/// fixes the program exactly when the program with those orders written checks clean.
fn exact_on(fixture: &str) -> usize {
    let path = root().join(fixture);
    let (name, src, prog) = parse_fixture(&path).unwrap();
    let opts = CheckOptions {
        model: Model::Rc11,
        limits: Limits {
            equiv: Equiv::Graph,
            ..Limits::default()
        },
        ..CheckOptions::default()
    };
    let res = checker::check(&prog, &opts);
    let reqs = fensyn::trace::requirements(&res.buggy, Model::Rc11);
    let acc = AccessSites::of(&prog);
    let sites: Vec<(usize, Vec<MemOrder>)> = acc
        .candidates()
        .map(|c| (c.stmt, c.kind.stronger(c.order)))
        .collect();
    assert!(!sites.is_empty());
    // Odometer over (none | each stronger order) per candidate.
    let mut idx = vec![0usize; sites.len()];
    let mut compared = 0;
    loop {
        let mut a = Assignment::default();
        let mut changes = Vec::new();
        for ((st, orders), &k) in sites.iter().zip(&idx) {
            if k > 0 {
                a.set(Site::Existing(*st), orders[k - 1]);
                changes.push(OrderChange {
                    stmt: *st,
                    order: orders[k - 1],
                });
            }
        }
        let predicted = reqs
            .iter()
            .all(|r| r.fixed_by_with(&a, Model::Rc11, &acc).is_some());
        let edits = order_edits(&src, &prog, &changes).unwrap();
        let files = fensyn::rewrite::files::apply_all(&src, &prog, &edits).unwrap();
        let written = fensyn::api::reparse(&name, &src, &prog, &files).unwrap();
        let clean = checker::check(&written, &opts).buggy.is_empty();
        assert_eq!(predicted, clean, "{fixture}: {changes:?}");
        // The relations-based reference agrees with the incremental check.
        for r in &reqs {
            assert_eq!(
                r.fixed_by_with(&a, Model::Rc11, &acc).is_some(),
                r.fixed_by_relations_with(&a, Model::Rc11, &acc).is_some()
            );
        }
        compared += 1;
        let mut i = 0;
        loop {
            if i == idx.len() {
                return compared;
            }
            idx[i] += 1;
            if idx[i] <= sites[i].1.len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn access_orders_on_requirements_agree_with_rechecking_the_written_program() {
    assert_eq!(exact_on("fixtures/orders/mp_flag.c"), 81);
    assert_eq!(exact_on("fixtures/orders/sb_orders.c"), 81);
    assert!(exact_on("fixtures/orders/cas_lock.c") >= 15);
}
