//! The Table 6.4 benchmarks (`fixtures/bench/`, written by `scripts/gen-bench`): every row of
//! the thesis's table has a program that says what it models, and the rows small enough for a
//! debug build (`in_tests` in `fixtures/bench/index.csv`) are fixed in optimal mode, re-checked
//! clean, and proved locally minimal through the library — the check `fix --prove-optimal`
//! runs. The other rows run in `scripts/bench thesis` (release build, with a time and memory
//! limit per row; figures in docs/performance.md).

mod common;

use common::*;
use fensyn::api::{prove_minimal, repair_with, Repair};
use fensyn::checker::{Limits, Model};
use fensyn::frontend::parse;
use fensyn::ir::Lang;
use fensyn::synth::{Mode, SynthOptions};
use std::collections::BTreeMap;

/// The records of a CSV file (after `#` comment lines), each a map from the header's names.
/// Fields may be quoted (`"peterson(2,2)"`); quotes inside fields are not used by these files.
fn read_csv(path: &str) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let split = |line: &str| -> Vec<String> {
        let mut fields = vec![String::new()];
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => fields.push(String::new()),
                _ => fields.last_mut().unwrap().push(c),
            }
        }
        fields
    };
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head = split(lines.next().expect("a header"));
    lines
        .map(|l| {
            let f = split(l);
            assert_eq!(f.len(), head.len(), "{path}: {l}");
            head.iter().cloned().zip(f).collect()
        })
        .collect()
}

struct Row {
    id: u32,
    benchmark: String,
    file: String,
    args: Vec<String>,
    in_tests: bool,
}

fn index() -> Vec<Row> {
    read_csv("fixtures/bench/index.csv")
        .into_iter()
        .map(|r| Row {
            id: r["id"].parse().unwrap(),
            benchmark: r["benchmark"].clone(),
            file: r["file"].clone(),
            args: r["args"].split_whitespace().map(String::from).collect(),
            in_tests: r["in_tests"] == "1",
        })
        .collect()
}

fn unroll_of(args: &[String]) -> Option<u32> {
    args.windows(2)
        .find(|w| w[0] == "--unroll")
        .map(|w| w[1].parse().unwrap())
}

#[test]
fn every_row_of_table_6_4_has_a_described_program() {
    let thesis = read_csv("fixtures/bench/thesis-table-6.4.csv");
    let rows = index();
    assert_eq!(thesis.len(), 38, "Table 6.4 has 38 rows");
    assert_eq!(rows.len(), thesis.len());
    for (t, r) in thesis.iter().zip(&rows) {
        assert_eq!(t["id"], r.id.to_string());
        assert_eq!(t["benchmark"], r.benchmark, "row {}", r.id);
        let path = root().join("fixtures/bench").join(&r.file);
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", r.file));
        let header: String = src
            .lines()
            .take_while(|l| l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            header.starts_with(&format!("// {}: Table 6.4", r.benchmark)),
            "{}: header names another benchmark",
            r.file
        );
        for part in ["Models:", "Source:", "Weak orders:", "Parameter"] {
            assert!(header.contains(part), "{}: header lacks {part}", r.file);
        }
        let run = format!(
            "Table 6.4 row {}. Run: fensyn fix fixtures/bench/{}{}",
            r.id,
            r.file,
            r.args.iter().map(|a| format!(" {a}")).collect::<String>()
        );
        assert!(header.contains(&run), "{}: header lacks `{run}`", r.file);
        // Only the rows run by `cargo test` have expectations: tests/fixtures.rs and
        // tests/synthesis.rs pick up every fixture with a NAME.expect.json.
        assert_eq!(
            path.with_extension("expect.json").exists(),
            r.in_tests,
            "{}: an expect.json exactly for the rows in cargo test",
            r.file
        );
    }
}

/// Fixes row `r` in optimal mode, re-checks it and proves it minimal; returns a description
/// of what went wrong, if anything.
fn fix_and_prove(r: &Row) -> Result<(), String> {
    let name = format!("fixtures/bench/{}", r.file);
    let src = std::fs::read_to_string(root().join(&name)).unwrap();
    let prog = parse(&name, &src, Lang::C).map_err(|d| d.to_string())?;
    let limits = Limits {
        unroll: unroll_of(&r.args),
        ..Limits::default()
    };
    let opts = SynthOptions {
        mode: Mode::Optimal,
        ..SynthOptions::default()
    };
    let Repair::Fixed {
        solution,
        positions,
        verified,
        buggy,
        ..
    } = repair_with(&name, &src, &prog, Model::Rc11, limits.clone(), &opts)
    else {
        return Err(format!("{name}: not fixed"));
    };
    if buggy == 0 || verified.buggy != 0 {
        return Err(format!(
            "{name}: {buggy} buggy executions before, {} after",
            verified.buggy
        ));
    }
    if solution.mode != Mode::Optimal {
        return Err(format!("{name}: the fix is not the optimal mode's"));
    }
    let proof = prove_minimal(
        &name,
        &src,
        &prog,
        Model::Rc11,
        &limits,
        &solution,
        &positions,
    )?;
    if proof.is_empty() {
        return Err(format!("{name}: no variant was checked"));
    }
    for e in &proof {
        if e.buggy == 0 {
            return Err(format!(
                "{name}: the fix is not minimal: the fence at {}:{} {} has no bug",
                e.line, e.column, e.variant
            ));
        }
    }
    Ok(())
}

#[test]
fn small_rows_are_fixed_optimally_and_proved_minimal() {
    let rows: Vec<Row> = index().into_iter().filter(|r| r.in_tests).collect();
    assert!(
        rows.len() >= 5,
        "too few rows in cargo test: {}",
        rows.len()
    );
    let problems: Vec<String> = rows.iter().filter_map(|r| fix_and_prove(r).err()).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `fixtures/bench/thesis-sources.csv` (what `scripts/bench thesis-src DIR` runs): one line per
/// row of the thesis's table, in order; a path is relative to a checkout of the thesis's
/// repository and names a C++ test of it; `set` is `NAME=integer` pairs (the file's own
/// `#define`s, given those values); a row without a path says why in its note.
#[test]
fn every_row_of_table_6_4_has_a_thesis_source_or_a_reason() {
    let thesis = read_csv("fixtures/bench/thesis-table-6.4.csv");
    let sources = read_csv("fixtures/bench/thesis-sources.csv");
    let ids = |rows: &[BTreeMap<String, String>]| -> Vec<String> {
        rows.iter().map(|r| r["id"].clone()).collect()
    };
    assert_eq!(ids(&sources), ids(&thesis));
    let mut reason = false;
    for r in &sources {
        let path = &r["path"];
        if path.is_empty() {
            // A run of rows without a file shares the first one's note.
            reason |= !r["note"].is_empty();
            assert!(
                reason && r["set"].is_empty(),
                "row {}: no file and no note",
                r["id"]
            );
            continue;
        }
        reason = false;
        assert!(
            path.starts_with("tests/benchmarks/") && path.ends_with(".cc"),
            "row {}: {path}",
            r["id"]
        );
        for item in r["set"].split_whitespace() {
            let (name, value) = item.split_once('=').unwrap_or(("", ""));
            assert!(
                !name.is_empty()
                    && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                    && value.parse::<i64>().is_ok(),
                "row {}: `{item}` is not NAME=integer",
                r["id"]
            );
        }
        assert!(
            ["name", "family", "inferred"].contains(&r["basis"].as_str()),
            "row {}: basis `{}`",
            r["id"],
            r["basis"]
        );
    }
}
