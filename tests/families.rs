//! Published execution counts of parametric programs (see `tests/common/families.rs`):
//! the explorer must find exactly the closed-form number of executions, under `sc` and under
//! `rc11` (the programs use only seq_cst accesses).

mod common;

use common::families::*;
use fensyn::checker::{self, CheckOptions, Limits, Model};

fn count(src: &str, model: Model, unroll: u32) -> u64 {
    let prog = fensyn::frontend::parse_c("family.c", src).expect("family parses");
    let opts = CheckOptions {
        model,
        limits: Limits {
            unroll: Some(unroll),
            ..Limits::default()
        },
        ..CheckOptions::default()
    };
    let res = checker::check(&prog, &opts);
    assert!(res.complete(), "incomplete: {:?}", res.stats);
    assert_eq!(res.stats.blocked + res.stats.bounded, 0);
    res.stats.executions
}

#[test]
fn readers_has_two_to_the_n_executions() {
    for n in 1..=9 {
        for model in [Model::Sc, Model::Rc11] {
            assert_eq!(
                count(&readers(n), model, 2),
                readers_count(n),
                "readers({n}) {model}"
            );
        }
    }
}

#[test]
fn lastzero_has_n_plus_3_times_two_to_the_n_minus_2_executions() {
    for n in 2..=8 {
        for model in [Model::Sc, Model::Rc11] {
            let unroll = n as u32 + 2;
            assert_eq!(
                count(&lastzero(n), model, unroll),
                lastzero_count(n),
                "lastzero({n}) {model}"
            );
        }
    }
}

/// Not a test of correctness: prints how much redundant work the explorer does on the
/// families (run with `--nocapture`).
#[test]
fn explorer_work_on_families() {
    for (name, src, unroll) in [
        ("readers(8)", readers(8), 2),
        ("lastzero(7)", lastzero(7), 9),
        ("lastzero(9)", lastzero(9), 11),
        ("lastzero(10)", lastzero(10), 12),
    ] {
        let prog = fensyn::frontend::parse_c("family.c", &src).unwrap();
        let opts = CheckOptions {
            model: Model::Sc,
            limits: Limits {
                unroll: Some(unroll),
                ..Limits::default()
            },
            ..CheckOptions::default()
        };
        let st = checker::check(&prog, &opts).stats;
        eprintln!(
            "{name}: {} executions, {} states, {} dead ends",
            st.executions, st.states, st.dead_ends
        );
        assert!(st.states >= st.executions);
    }
}
