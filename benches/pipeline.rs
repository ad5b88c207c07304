//! Criterion benchmarks of the pipeline stages on the bundled litmus fixtures, and of the
//! explorer on parametric programs (`explore-MODEL/FAMILY-N`, with their execution counts as
//! criterion throughput, so `scripts/bench` can print executions per second).
//!
//! `scripts/bench` runs these and prints each figure as a ratio to the `check/sb` baseline
//! measured in the same run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fensyn::checker::{self, CheckOptions, Limits, Model};
use fensyn::synth::Mode;
use std::hint::black_box;

// The allocator the `fensyn` binary runs with (src/main.rs): the explorer allocates per
// event, so measuring with the system allocator would understate the tool by a third.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FIXTURES: &[&str] = &["sb", "mp", "wrc", "isa2", "iriw"];

fn source(name: &str) -> (String, String) {
    let path = format!("{}/fixtures/litmus/{name}.c", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("fixture");
    (path, src)
}

fn bench(c: &mut Criterion) {
    for name in FIXTURES {
        let (path, src) = source(name);
        let prog = fensyn::frontend::parse_c(&path, &src).expect("parses");
        c.bench_function(&format!("parse/{name}"), |b| {
            b.iter(|| fensyn::frontend::parse_c(black_box(&path), black_box(&src)).unwrap())
        });
        c.bench_function(&format!("check/{name}"), |b| {
            b.iter(|| checker::check(black_box(&prog), &CheckOptions::default()))
        });
        for mode in [Mode::Optimal, Mode::Fast] {
            c.bench_function(&format!("fix-{}/{name}", mode.name()), |b| {
                b.iter(|| {
                    fensyn::api::repair(&path, &src, &prog, Model::Rc11, mode, Limits::default())
                })
            });
        }
    }
}

/// A translation unit of about 2,000 lines: `tu.c` (threads, `main`) including `lib.h` (macros,
/// `#if` variants, guarded, with many helper functions), the way library harnesses are written.
fn translation_unit() -> (String, String) {
    let mut h = String::from(
        "#ifndef LIB_H\n#define LIB_H\n#include <stdatomic.h>\n#include <pthread.h>\n\
         #if defined(STRONG) && STRONG > 1\n#define MO memory_order_seq_cst\n#elif defined(STRONG)\n\
         #define MO memory_order_acq_rel\n#else\n#define MO memory_order_relaxed\n#endif\n\
         #define LOAD(p) atomic_load_explicit((p), MO)\n#define STORE(p, v) atomic_store_explicit((p), (v), MO)\n\
         #define CAT(a, b) a ## b\n#define HELPER(n) static inline int CAT(helper_, n)(int a, int b)\n\
         atomic_int x, y;\n",
    );
    for i in 0..180 {
        h += &format!(
            "HELPER({i})\n{{\n\tint r = a + {i};\n#if {i} % 2\n\tr = r * b;\n#else\n\tr = r - b;\n#endif\n\treturn r;\n}}\n"
        );
    }
    h += "#endif\n";
    let mut c = String::from("#include \"lib.h\"\nint a, b;\n");
    for t in 0..2 {
        c += &format!("void *t{t}(void *arg)\n{{\n");
        for k in 0..100 {
            c += &format!("\tSTORE(&x, {k});\n\tif (LOAD(&y) == {k})\n\t\ta = {k};\n");
        }
        c += "\treturn NULL;\n}\n";
    }
    c += "int main(void)\n{\n\tpthread_t p, q;\n\tpthread_create(&p, NULL, t0, NULL);\n\
          \tpthread_create(&q, NULL, t1, NULL);\n\tpthread_join(p, NULL);\n\tpthread_join(q, NULL);\n\treturn 0;\n}\n";
    (c, h)
}

/// Preprocessing and parsing `translation_unit()` against parsing its preprocessed text alone.
fn preprocess(c: &mut Criterion) {
    use fensyn::frontend::{self, preprocess as pp, Lang, PpOptions};
    let (main, header) = translation_unit();
    let dir = std::env::temp_dir();
    let loader = pp::Overlay {
        files: [(pp::normalize(&dir.join("lib.h")), header.clone())].into(),
        fallback: &pp::Disk,
    };
    let name = dir.join("tu.c").display().to_string();
    let opts = PpOptions::default();
    let lines = main.lines().count() + header.lines().count();
    assert!(lines >= 2000, "{lines} lines");
    let unit = pp::preprocess(&name, &main, Lang::C, &[], &opts, &loader).expect("preprocesses");
    frontend::parse_unit(&name, &main, Lang::C, &[], &opts, &loader).expect("parses");
    let mut group = c.benchmark_group("preprocess");
    group.bench_function("tu-2000-lines", |b| {
        b.iter(|| {
            frontend::parse_unit(black_box(&name), &main, Lang::C, &[], &opts, &loader).unwrap()
        })
    });
    group.bench_function("tu-2000-lines-preprocessed-text", |b| {
        b.iter(|| frontend::parse(black_box(&name), &unit.text, Lang::C).unwrap())
    });
    group.finish();
}

#[path = "../tests/common/families.rs"]
mod families;

fn explore_families(c: &mut Criterion) {
    let cases: Vec<(String, String, u32, u64)> = vec![
        (
            "readers-6".into(),
            families::readers(6),
            2,
            families::readers_count(6),
        ),
        (
            "readers-9".into(),
            families::readers(9),
            2,
            families::readers_count(9),
        ),
        (
            "lastzero-5".into(),
            families::lastzero(5),
            7,
            families::lastzero_count(5),
        ),
        (
            "lastzero-8".into(),
            families::lastzero(8),
            10,
            families::lastzero_count(8),
        ),
        (
            "fib_bench-2".into(),
            families::fib_bench(2),
            3,
            families::FIB_BENCH_COUNTS[0].1,
        ),
        (
            "casrot-8".into(),
            families::casrot(8),
            1,
            families::CASROT_COUNTS[0].1,
        ),
        (
            "indexer-4".into(),
            families::indexer(4),
            5,
            families::indexer_count(4),
        ),
        // No closed form: the counts pinned by tests/families.rs.
        ("peterson-2".into(), families::peterson(2), 3, 48),
        ("dekker-1".into(), families::dekker(1), 2, 4),
    ];
    // The bundled algorithm fixtures, with the counts their expectation files pin.
    let fixture = |dir: &str, name: &str| {
        let dir = format!("{}/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(format!("{dir}.c")).expect("fixture");
        let expect: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}.expect.json")).unwrap())
                .unwrap();
        let count = expect["check"]["executions"].as_u64().expect("executions");
        (src, count)
    };
    let mut cases = cases;
    for name in ["bakery", "szymanski"] {
        let (src, count) = fixture("algorithms", name);
        cases.push((name.into(), src, checker::DEFAULT_UNROLL, count));
    }
    // The litmus fixtures, whole checks of a few executions each (setup included): their
    // expectation files pin rc11 counts, so they run in the rc11 groups only.
    let litmus: Vec<(String, String, u32, u64)> = ["sb", "mp", "lb", "wrc", "isa2", "iriw", "2+2w"]
        .iter()
        .map(|name| {
            let (src, count) = fixture("litmus", name);
            (
                format!("litmus-{name}"),
                src,
                checker::DEFAULT_UNROLL,
                count,
            )
        })
        .collect();
    // TruSt (the explorer) and, as the baseline measured in the same run, the canonical-order
    // explorer it replaced (`Limits::canonical`), which waits for writes and has dead ends
    // (indexer-12 is left out of the canonical group: exponential there; the larger members
    // below too, to keep the run short).
    cases.push((
        "indexer-12".into(),
        families::indexer(12),
        13,
        families::indexer_count(12),
    ));
    // Larger members of two families, for the cost per execution as programs grow (lastzero
    // 20 -> 30 -> 41 events per execution, readers 14 -> 20 -> 26): TruSt only.
    cases.push((
        "lastzero-11".into(),
        families::lastzero(11),
        13,
        families::lastzero_count(11),
    ));
    cases.push((
        "readers-12".into(),
        families::readers(12),
        2,
        families::readers_count(12),
    ));
    let trust_only = ["indexer-12", "lastzero-11", "readers-12"];
    for (model, canonical) in [
        (Model::Sc, false),
        (Model::Rc11, false),
        (Model::Sc, true),
        (Model::Rc11, true),
    ] {
        let suffix = if canonical { "-canonical" } else { "" };
        let mut group = c.benchmark_group(format!("explore-{model}{suffix}"));
        let extra = if model == Model::Rc11 {
            &litmus[..]
        } else {
            &[]
        };
        for (name, src, unroll, count) in cases.iter().chain(extra) {
            if canonical && trust_only.contains(&name.as_str()) {
                continue;
            }
            let prog = fensyn::frontend::parse_c("family.c", src).expect("parses");
            let opts = CheckOptions {
                model,
                limits: Limits {
                    unroll: Some(*unroll),
                    canonical,
                    ..Limits::default()
                },
                ..CheckOptions::default()
            };
            let stats = checker::check(&prog, &opts).stats;
            assert_eq!(stats.executions, *count, "{name}");
            // Throughput counts every execution explored, blocked and cut ones included.
            group.throughput(Throughput::Elements(
                stats.executions + stats.blocked + stats.bounded,
            ));
            group.bench_function(name.as_str(), |b| {
                b.iter(|| checker::check(black_box(&prog), &opts))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench, explore_families, preprocess
}
criterion_main!(benches);
