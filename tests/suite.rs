//! The integration tests, linked into one binary (`cargo test --release --test suite`): one
//! link instead of one per file, and one process whose test threads share the slow tests with
//! the quick ones. Each `tests/NAME.rs` is a module of this crate, loaded by `#[path]` so that
//! its own `mod common;` still finds `tests/common/mod.rs`; filter one file's tests by its
//! module path, e.g. `cargo test --release --test suite fixtures::`.
//!
//! Cargo does not discover test files on its own (`autotests = false` in Cargo.toml): a new
//! `tests/NAME.rs` is declared below, and `every_test_file_is_in_the_suite` fails until it is.

// Each file keeps its own `mod common;` (and bruteforce.rs its `mod families;`), as when it was a
// test crate of its own: the shared helpers are compiled once per file that uses them.
#![allow(clippy::duplicate_mod)]

#[path = "bench.rs"]
mod bench;
#[path = "bruteforce.rs"]
mod bruteforce;
#[path = "classes.rs"]
mod classes;
#[path = "cli.rs"]
mod cli;
#[path = "contract.rs"]
mod contract;
#[path = "diagnostics.rs"]
mod diagnostics;
#[path = "equiv.rs"]
mod equiv;
#[path = "explain.rs"]
mod explain;
#[path = "families.rs"]
mod families;
#[path = "fast.rs"]
mod fast;
#[path = "fixtures.rs"]
mod fixtures;
#[path = "golden.rs"]
mod golden;
#[path = "hardware.rs"]
mod hardware;
#[path = "heap.rs"]
mod heap;
#[path = "integration.rs"]
mod integration;
#[path = "invocation.rs"]
mod invocation;
#[path = "locals.rs"]
mod locals;
#[path = "orders.rs"]
mod orders;
#[path = "preprocessor.rs"]
mod preprocessor;
#[path = "refused.rs"]
mod refused;
#[path = "relax.rs"]
mod relax;
#[path = "robustness.rs"]
mod robustness;
#[path = "synthesis.rs"]
mod synthesis;
#[path = "write.rs"]
mod write;

/// Every `tests/*.rs` file other than this one is a module above: a file cargo would once have
/// run on its own is never silently left out of the suite.
#[test]
fn every_test_file_is_in_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = std::fs::read_to_string(dir.join("suite.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".rs") && name != "suite.rs" {
            let decl = format!(
                "#[path = \"{name}\"]\nmod {};",
                name.trim_end_matches(".rs")
            );
            if !root.contains(&decl) {
                missing.push(name);
            }
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "tests/suite.rs does not declare {missing:?}"
    );
}
