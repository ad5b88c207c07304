//! Fixes re-checked by the oracle: for every buggy program within its reach, `fensyn::fix`'s
//! fixed program must have no buggy execution by the oracle (soundness, independently of the
//! explorer that verified it), and every variant with one inserted fence removed or weakened
//! by one step must still have one (minimality). The verdict on the input is compared first.
//!
//! By default the programs are the buggy fixtures of the directories below; with
//! `BRUTEFORCE_DIR=path` they are every C and C++ file under `path` instead (the thesis's own
//! benchmark programs, say: `docs/performance.md`, *The thesis's programs*), with
//! `BRUTEFORCE_MAX_VISITS` (default 60) the most executions a program may have at loop bound
//! 2 to be enumerated, and `BRUTEFORCE_SHRINK=K` lowering each program's integer `#define`s
//! above `K` to `K` first (the same code at smaller sizes).

use super::{
    beyond_the_oracle, compare_with, env_number, explorer_size_upto, with_budget, MAX_ORACLE_EVENTS,
};
use fensyn::checker::Model;
use fensyn::ir::Program;
use fensyn::rewrite::{self, Edit, FileRewrite};
use fensyn::{FixOptions, Options, Repair, Source};
use std::path::{Path, PathBuf};

/// The loop bound of every exploration here (as in the fixture comparisons).
const UNROLL: u32 = 2;

/// What the campaign found, file by file.
#[derive(Default, Debug)]
struct Tally {
    files: usize,
    refused: usize,
    beyond: usize,
    clean: usize,
    fixed: usize,
    /// Variants (a fence removed or weakened) the oracle found a bug in.
    variants_refuted: usize,
    /// Fixed programs or variants too big for the oracle.
    unverified: usize,
    unfixable: usize,
    failures: Vec<String>,
}

/// Whether the oracle may enumerate `prog`: at most `max_visits` executions, or why not.
fn within_reach(prog: &Program, max_visits: u64) -> Result<(), &'static str> {
    if let Some(why) = beyond_the_oracle(prog) {
        return Err(why);
    }
    let (st, events) = explorer_size_upto(prog, Model::Rc11, UNROLL, max_visits + 1);
    if st.visited() > max_visits || events > MAX_ORACLE_EVENTS {
        return Err("too many executions or events");
    }
    Ok(())
}

/// `BRUTEFORCE_SHRINK=K`: programs run with every integer `#define` of their main file above
/// `K` lowered to `K` (their loop counts and thread counts: the same code at a size the oracle
/// can enumerate).
fn shrink() -> Option<i64> {
    env_number("BRUTEFORCE_SHRINK")
}

/// `text` with each line `#define NAME N` (an integer `N > k`, perhaps a comment after it)
/// defining `k` instead.
fn shrunk(text: &str, k: i64) -> String {
    let line = |l: &str| {
        let code = l.split("//").next().unwrap_or(l);
        let words: Vec<&str> = code.split_whitespace().collect();
        match words[..] {
            ["#define", name, n]
                if name.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && n.parse::<i64>().is_ok_and(|n| n > k) =>
            {
                format!("#define {name} {k}")
            }
            _ => l.to_string(),
        }
    };
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// The oracle's work limit per program (`BRUTEFORCE_BUDGET`: thread runs, their combinations
/// and candidate graphs).
fn budget() -> u64 {
    env_number("BRUTEFORCE_BUDGET").unwrap_or(5_000_000)
}

/// What the oracle says of a program.
enum Verdict {
    /// Its buggy executions, the explorer agreeing.
    Buggy(u64),
    /// It disagrees with the explorer: how.
    Disagrees(String),
    /// It ran out of its work budget.
    TooBig,
}

/// The oracle's buggy-execution count of `prog` after checking that the explorer agrees with
/// it.
fn oracle_buggy(name: &str, prog: &Program) -> Verdict {
    match with_budget(budget(), || compare_with(name, prog, Model::Rc11, UNROLL)) {
        None => Verdict::TooBig,
        Some(Ok(c)) => Verdict::Buggy(c[3]),
        Some(Err(e)) => Verdict::Disagrees(e),
    }
}

/// Compares the input at `path`, fixes it when buggy and re-checks the fix and its variants.
fn fix_agrees_with_the_oracle(path: &Path, max_visits: u64, t: &mut Tally) {
    let name = path.display().to_string();
    t.files += 1;
    let source = Source::read(path).map(|mut s| {
        if let Some(k) = shrink() {
            s.text = shrunk(&s.text, k);
        }
        s
    });
    let unit = match source.and_then(|s| s.parse()) {
        Ok(u) => u,
        Err(d) => {
            eprintln!("refused: {d}");
            t.refused += 1;
            return;
        }
    };
    if let Err(why) = within_reach(&unit.program, max_visits) {
        eprintln!("not compared: {name}: {why}");
        t.beyond += 1;
        return;
    }
    match oracle_buggy(&name, &unit.program) {
        Verdict::Disagrees(e) => t.failures.push(e),
        Verdict::TooBig => {
            eprintln!("not compared: {name}: over the oracle's budget");
            t.beyond += 1;
        }
        Verdict::Buggy(0) => {
            eprintln!("{name}: no bug; the oracle agrees");
            t.clean += 1;
        }
        Verdict::Buggy(_) => recheck_fix(&name, &unit, max_visits, t),
    }
}

/// Fixes the buggy `unit` and has the oracle re-check the fix and its variants.
fn recheck_fix(name: &str, unit: &fensyn::Unit, max_visits: u64, t: &mut Tally) {
    let mut opts = Options::default();
    opts.limits.unroll = Some(UNROLL);
    let files = match fensyn::fix(unit, &opts, &FixOptions::default()) {
        Ok(Repair::Fixed { files, .. }) => files,
        Ok(Repair::Unfixable { .. }) => {
            eprintln!("{name}: no fence set fixes it");
            t.unfixable += 1;
            return;
        }
        Ok(Repair::Incomplete { .. } | Repair::NotWritable(_) | Repair::Clean { .. }) => {
            t.failures
                .push(format!("{name}: the oracle finds bugs, fix did not fix it"));
            return;
        }
        Ok(Repair::Internal(e)) => {
            t.failures.push(format!("{name}: {e}"));
            return;
        }
        Err(d) => {
            t.failures.push(format!("{name}: {d}"));
            return;
        }
    };
    let fixed = match program_of(unit, &files) {
        Ok(p) => p,
        Err(e) => {
            t.failures.push(format!("{name}: the fix {e}"));
            return;
        }
    };
    if within_reach(&fixed, max_visits).is_err() {
        eprintln!("{name}: fixed, but the fixed program is too big for the oracle");
        t.unverified += 1;
        return;
    }
    match oracle_buggy(name, &fixed) {
        Verdict::Disagrees(e) => return t.failures.push(format!("the fix of {e}")),
        Verdict::TooBig => {
            eprintln!("{name}: fixed, but the fixed program is over the oracle's budget");
            t.unverified += 1;
            return;
        }
        Verdict::Buggy(0) => t.fixed += 1,
        Verdict::Buggy(n) => {
            let diff = unit.patch(&files, None);
            t.failures.push(format!(
                "{name}: the fixed program has {n} buggy executions by the oracle:\n{diff}"
            ));
            return;
        }
    }
    for (what, variant) in variants(&unit.source.text, &files) {
        let prog = match program_of(unit, &variant) {
            Ok(p) => p,
            Err(e) => return t.failures.push(format!("{name}: {what} {e}")),
        };
        if within_reach(&prog, max_visits).is_err() {
            t.unverified += 1;
            continue;
        }
        match oracle_buggy(name, &prog) {
            Verdict::Disagrees(e) => t.failures.push(format!("{what}: {e}")),
            Verdict::TooBig => t.unverified += 1,
            Verdict::Buggy(0) => t.failures.push(format!(
                "{name}: {what} leaves no buggy execution by the oracle: the fix is not minimal"
            )),
            Verdict::Buggy(_) => t.variants_refuted += 1,
        }
    }
    eprintln!("{name}: fixed; the oracle agrees, and with its variants");
}

/// The program of `unit`'s files rewritten as `files`, or why it does not parse.
fn program_of(unit: &fensyn::Unit, files: &[FileRewrite]) -> Result<Program, String> {
    let src = &unit.source;
    let text = rewrite::files::main_text(&src.text, files);
    let headers = rewrite::files::header_texts(&unit.program, files);
    fensyn::frontend::reparse(&src.name, text, &unit.program, &headers)
        .map_err(|d| format!("does not parse: {d}"))
}

/// The one-step-weaker orders of a fence written with order `name`'s C spelling.
const WEAKER: &[(&str, &[&str])] = &[
    ("memory_order_seq_cst", &["memory_order_acq_rel"]),
    (
        "memory_order_acq_rel",
        &["memory_order_acquire", "memory_order_release"],
    ),
];

/// Every variant of a fix of the main file `src` (`files`) with one inserted fence left out or
/// written one order weaker, described; the fix's own text for everything else. Fences a fix
/// writes into headers, and strengthened program fences, have no variant here.
fn variants(src: &str, files: &[FileRewrite]) -> Vec<(String, Vec<FileRewrite>)> {
    let Some(main) = files.iter().find(|f| f.file == 0) else {
        return Vec::new();
    };
    let is_fence = |e: &Edit| e.start == e.end && e.text.contains("thread_fence");
    let mut out = Vec::new();
    for (i, e) in main.edits.iter().enumerate().filter(|(_, e)| is_fence(e)) {
        let line = src[..e.start].matches('\n').count() + 1;
        let mut edits: Vec<Vec<Edit>> = vec![without(&main.edits, i)];
        let mut names = vec![format!("without the fence inserted at line {line}")];
        for (order, weaker) in WEAKER {
            if e.text.contains(order) {
                for w in *weaker {
                    let mut v = main.edits.clone();
                    v[i].text = e.text.replace(order, w);
                    edits.push(v);
                    names.push(format!("with the fence at line {line} {w}"));
                }
            }
        }
        for (what, edits) in names.into_iter().zip(edits) {
            let text = rewrite::apply(src, &edits).expect("a subset of a fix's edits applies");
            let mut variant = files.to_vec();
            let k = files.iter().position(|f| f.file == 0).unwrap_or(0);
            variant[k] = FileRewrite {
                file: 0,
                text,
                edits,
            };
            out.push((what, variant));
        }
    }
    out
}

fn without(edits: &[Edit], i: usize) -> Vec<Edit> {
    let mut v = edits.to_vec();
    v.remove(i);
    v
}

/// The C and C++ files of `dir` (and of its subdirectories, with `deep`), sorted.
fn sources_in(dir: &Path, deep: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            let source = p
                .extension()
                .is_some_and(|x| ["c", "cc", "cpp"].iter().any(|s| x == *s));
            if p.is_dir() && deep {
                stack.push(p);
            } else if source {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The fixtures the default campaign fixes: litmus tests and the thesis's dialect.
const FIXTURE_DIRS: &[&str] = &["litmus", "dialect", "dialect/c", "control", "orders"];

/// Every buggy program within the oracle's reach is fixed soundly and minimally by the
/// oracle's judgement (see the module documentation).
#[test]
#[ignore = "slow campaign: `cargo test --release -- --ignored` (CI runs it)"]
fn fixes_are_sound_and_minimal_by_the_oracle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let external = std::env::var_os("BRUTEFORCE_DIR").map(PathBuf::from);
    let max_visits = env_number("BRUTEFORCE_MAX_VISITS").unwrap_or(60);
    let files: Vec<PathBuf> = match &external {
        Some(dir) => sources_in(dir, true),
        None => FIXTURE_DIRS
            .iter()
            .flat_map(|d| sources_in(&root.join(d), false))
            .filter(|p| !super::too_slow_for_the_oracle(&p.display().to_string()))
            .collect(),
    };
    let mut t = Tally::default();
    for path in &files {
        fix_agrees_with_the_oracle(path, max_visits, &mut t);
    }
    eprintln!("{t:?}");
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
    if external.is_none() {
        assert!(t.fixed >= 10, "only {} fixes re-checked: {t:?}", t.fixed);
        assert!(t.variants_refuted >= 10, "{t:?}");
    }
}

#[test]
fn shrinking_lowers_integer_defines_only() {
    let text =
        "#define LOOP 5 // outer loop\n#define N 1\n#define S \"x\"\n  #define M(x) 9\nint a;";
    assert_eq!(
        shrunk(text, 2),
        "#define LOOP 2\n#define N 1\n#define S \"x\"\n  #define M(x) 9\nint a;"
    );
}
