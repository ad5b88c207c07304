//! Criterion benchmarks of the pipeline stages on the bundled litmus fixtures.
//!
//! `scripts/bench` runs these and prints each figure as a ratio to the `check/sb` baseline
//! measured in the same run.

use criterion::{criterion_group, criterion_main, Criterion};
use fensyn::checker::{self, CheckOptions, Limits, Model};
use fensyn::synth::Mode;
use std::hint::black_box;

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
                    fensyn::cli::repair(&path, &src, &prog, Model::Rc11, mode, Limits::default())
                })
            });
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
