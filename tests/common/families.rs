//! Parametric benchmark programs from the stateless model checking literature, written from
//! their published descriptions, with their closed-form execution counts under SC.
//!
//! * `readers(n)` (Abdulla et al., "Optimal dynamic partial order reduction", POPL 2014): one
//!   thread writes `x`, `n` threads read it. Each read sees the initial value or the write:
//!   2^n executions.
//! * `lastzero(n)` (same paper): `array[0..=n]` is zero; thread 0 scans from `array[n]`
//!   downwards for the last zero, thread `j` (1 ≤ j ≤ n) sets `array[j] = array[j-1] + 1`.
//!   (n + 3)·2^(n-2) executions under SC (for n ≥ 2), as the reads-from SMC paper's Table 1
//!   reports (lastzero(9) = 1536).
//!
//! The programs use `seq_cst` accesses, so RC11 gives them SC semantics and the same counts.

#![allow(dead_code)]

use fensyn::checker::{self, CheckOptions, CheckResult, Limits, Model};
use fensyn::ir::Program;

/// Parses the family program `src` (C).
pub fn parse_family(src: &str) -> Program {
    fensyn::frontend::parse_c("family.c", src).expect("family parses")
}

/// Parses the family program `src` and checks it under `model` with `limits` (stopping at the
/// first bug when `first`).
pub fn check_family(src: &str, model: Model, limits: Limits, first: bool) -> CheckResult {
    check_program(&parse_family(src), model, limits, first)
}

/// [`check_family`] on a parsed program.
pub fn check_program(prog: &Program, model: Model, limits: Limits, first: bool) -> CheckResult {
    let opts = CheckOptions {
        model,
        limits,
        first,
        ..CheckOptions::default()
    };
    checker::check(prog, &opts)
}

/// `Limits` with a loop bound.
pub fn unrolled(unroll: u32) -> Limits {
    Limits {
        unroll: Some(unroll),
        ..Limits::default()
    }
}

/// `readers(n)`.
pub fn readers(n: usize) -> String {
    let mut s = String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n\natomic_int x;\n\n\
         void *writer(void *arg) {\n    atomic_store(&x, 42);\n    return NULL;\n}\n\n\
         void *reader(void *arg) {\n    int r = atomic_load(&x);\n    return NULL;\n}\n\n\
         int main(void) {\n    pthread_t w;\n",
    );
    for i in 0..n {
        s += &format!("    pthread_t r{i};\n");
    }
    s += "    pthread_create(&w, NULL, writer, NULL);\n";
    for i in 0..n {
        s += &format!("    pthread_create(&r{i}, NULL, reader, NULL);\n");
    }
    s += "    return 0;\n}\n";
    s
}

pub fn readers_count(n: usize) -> u64 {
    1 << n
}

/// `lastzero(n)`; run it with a loop bound of at least `n + 2` (the scan's `for` loop reaches
/// its head up to `n + 2` times).
pub fn lastzero(n: usize) -> String {
    let mut s = format!(
        "#include <pthread.h>\n#include <stdatomic.h>\n\natomic_int array[{}];\n\n\
         void *zero(void *arg) {{\n    for (int i = {n}; atomic_load(&array[i]) != 0; i--)\n        ;\n    return NULL;\n}}\n\n\
         void *writer(void *arg) {{\n    long j = (long)arg;\n    atomic_store(&array[j], atomic_load(&array[j - 1]) + 1);\n    return NULL;\n}}\n\n\
         int main(void) {{\n    pthread_t z;\n",
        n + 1
    );
    for j in 1..=n {
        s += &format!("    pthread_t t{j};\n");
    }
    s += "    pthread_create(&z, NULL, zero, NULL);\n";
    for j in 1..=n {
        s += &format!("    pthread_create(&t{j}, NULL, writer, (void *){j});\n");
    }
    s += "    return 0;\n}\n";
    s
}

pub fn lastzero_count(n: usize) -> u64 {
    assert!(n >= 2);
    (n as u64 + 3) << (n - 2)
}

/// The `main` that creates `n` threads running `func` with arguments `0..n`, then joins them
/// when `join` is set.
fn spawn_main(func: &str, n: usize, join: bool) -> String {
    let mut s = String::from("int main(void) {\n");
    for k in 0..n {
        s += &format!("    pthread_t t{k};\n");
    }
    for k in 0..n {
        s += &format!("    pthread_create(&t{k}, NULL, {func}, (void *)(intptr_t){k});\n");
    }
    if join {
        for k in 0..n {
            s += &format!("    pthread_join(t{k}, NULL);\n");
        }
    }
    s += "    return 0;\n}\n";
    s
}

/// `fib_bench(n)` (SV-COMP `pthread/fib_bench`, in the SC-atomic form of the reads-from SMC
/// paper's Table 2): `i = j = 1`; one thread runs `i += j` n times, the other `j += i`; the
/// main thread does not join them and checks `i` and `j` against the n-th Fibonacci bound.
/// `i += j` is compiled as a load of `j`, a load of `i` and a store of `i` (clang's order).
/// Published: fib_bench(2) = 140, fib_bench(4) = 19605, fib_bench(6) = 2364418 under SC.
/// Run it with a loop bound of at least `n + 1`.
pub fn fib_bench(n: usize) -> String {
    format!(
        "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\n\
         atomic_int i = 1, j = 1;\n\n\
         void *t1(void *arg) {{\n    for (int k = 0; k < {n}; k++) {{\n        int a = atomic_load(&j);\n        int b = atomic_load(&i);\n        atomic_store(&i, a + b);\n    }}\n    return NULL;\n}}\n\n\
         void *t2(void *arg) {{\n    for (int k = 0; k < {n}; k++) {{\n        int a = atomic_load(&i);\n        int b = atomic_load(&j);\n        atomic_store(&j, a + b);\n    }}\n    return NULL;\n}}\n\n\
         int main(void) {{\n    pthread_t a, b;\n    pthread_create(&a, NULL, t1, NULL);\n    pthread_create(&b, NULL, t2, NULL);\n    \
         if (atomic_load(&i) > {bound} || atomic_load(&j) > {bound})\n        assert(0);\n    return 0;\n}}\n",
        bound = fib(2 * n + 2)
    )
}

/// The k-th Fibonacci number (fib(1) = fib(2) = 1): the largest value `i` or `j` can reach
/// after n rounds each is fib(2n + 2), so the assertion of [`fib_bench`] holds.
fn fib(k: usize) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..k {
        (a, b) = (b, a + b);
    }
    a
}

/// Published SC execution counts of [`fib_bench`] (reads-from SMC paper, Table 2).
pub const FIB_BENCH_COUNTS: [(usize, u64); 2] = [(2, 140), (4, 19605)];

/// `casrot(n)` (CAS rotation, reads-from SMC paper's Table 2): `n` threads; thread `k` does
/// one strong CAS of `x` from `k` to `k + 1`, so the successful CASes form a chain from 0 and
/// every failed CAS reads some write of the chain. Published: casrot(8) = 2048,
/// casrot(9) = 8597, casrot(10) = 38486 under SC.
pub fn casrot(n: usize) -> String {
    String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n#include <stdint.h>\n\natomic_int x;\n\n\
         void *rot(void *arg) {\n    int k = (int)(intptr_t)arg;\n    int expected = k;\n    \
         atomic_compare_exchange_strong(&x, &expected, k + 1);\n    return NULL;\n}\n\n",
    ) + &spawn_main("rot", n, false)
}

/// Published SC execution counts of [`casrot`].
pub const CASROT_COUNTS: [(usize, u64); 3] = [(8, 2048), (9, 8597), (10, 38486)];

/// `indexer(n)` (Flanagan and Godefroid, POPL 2005; the optimal DPOR paper's Table 1): `n`
/// threads insert 4 values each into a 128-entry hash table with open addressing, claiming an
/// entry with a CAS from 0. Threads collide only from n = 12 on: indexer(n) has one execution
/// for n ≤ 11, and 8, 64, 512, 4096 for n = 12..15 under SC.
pub fn indexer(n: usize) -> String {
    String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n#include <stdint.h>\n\n\
         atomic_int table[128];\n\n\
         void *insert(void *arg) {\n    int tid = (int)(intptr_t)arg;\n    \
         for (int m = 1; m <= 4; m++) {\n        int w = m * 11 + tid;\n        int h = (w * 7) % 128;\n        int zero = 0;\n        \
         while (!atomic_compare_exchange_strong(&table[h], &zero, w)) {\n            zero = 0;\n            h = (h + 1) % 128;\n        }\n    }\n    return NULL;\n}\n\n",
    ) + &spawn_main("insert", n, false)
}

pub fn indexer_count(n: usize) -> u64 {
    if n <= 11 {
        1
    } else {
        8u64.pow(n as u32 - 11)
    }
}

/// `peterson(n)`: Peterson's lock for two threads (Peterson, IPL 1981) with seq_cst accesses;
/// each thread enters the critical section `n` times and increments a non-atomic counter,
/// which `main` checks after joining. The wait is an await loop (`while (c);`), so an
/// execution where a thread waits forever is blocked, not cut by the loop bound. Correct under
/// SC and RC11.
pub fn peterson(n: usize) -> String {
    let thread = |me: usize| {
        let other = 1 - me;
        format!(
            "void *p{me}(void *arg) {{\n    for (int round = 0; round < {n}; round++) {{\n        \
             atomic_store(&flag{me}, 1);\n        atomic_store(&turn, {other});\n        \
             while (atomic_load(&flag{other}) == 1 && atomic_load(&turn) == {other})\n            ;\n        \
             counter = counter + 1;\n        atomic_store(&flag{me}, 0);\n    }}\n    return NULL;\n}}\n\n"
        )
    };
    two_thread_main(&["flag0", "flag1", "turn"], &thread(0), &thread(1), 2 * n)
}

/// A two-thread program: atomic globals `atomics`, a non-atomic `counter`, threads `p0` and
/// `p1`, and a `main` that joins both and asserts `counter == expected`.
fn two_thread_main(atomics: &[&str], p0: &str, p1: &str, expected: usize) -> String {
    let mut s =
        String::from("#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\n");
    for a in atomics {
        s += &format!("atomic_int {a};\n");
    }
    s += "int counter;\n\n";
    s += p0;
    s += p1;
    s += &format!(
        "int main(void) {{\n    pthread_t a, b;\n    pthread_create(&a, NULL, p0, NULL);\n    \
         pthread_create(&b, NULL, p1, NULL);\n    pthread_join(a, NULL);\n    pthread_join(b, NULL);\n    \
         assert(counter == {expected});\n    return 0;\n}}\n"
    );
    s
}

/// `dekker(n)`: Dekker's algorithm (Dijkstra, EWD 35) for two threads with seq_cst accesses;
/// each thread enters the critical section `n` times and increments a non-atomic counter.
/// Correct under SC and RC11.
pub fn dekker(n: usize) -> String {
    let thread = |me: usize| {
        let other = 1 - me;
        format!(
            "void *p{me}(void *arg) {{\n    for (int round = 0; round < {n}; round++) {{\n        \
             atomic_store(&wants{me}, 1);\n        while (atomic_load(&wants{other})) {{\n            \
             if (atomic_load(&turn) != {me}) {{\n                atomic_store(&wants{me}, 0);\n                \
             while (atomic_load(&turn) != {me})\n                    ;\n                atomic_store(&wants{me}, 1);\n            }}\n        }}\n        \
             counter = counter + 1;\n        atomic_store(&turn, {other});\n        atomic_store(&wants{me}, 0);\n    }}\n    return NULL;\n}}\n\n"
        )
    };
    two_thread_main(&["wants0", "wants1", "turn"], &thread(0), &thread(1), 2 * n)
}

// ---------------------------------------------------------------------------------------------
// Programs whose reads-from or value classes are far fewer than their graphs (`--equiv`), from
// the reads-from SMC paper (Abdulla et al., OOPSLA 2019, Table 3) and the thesis's Figure 4.1.
// ---------------------------------------------------------------------------------------------

/// `lastwrite(n)`: `n` threads each write their number to `x`; `main` joins them all and
/// reads `x`. n! graphs (every coherence order), n reads-from classes (which write was last).
pub fn lastwrite(n: usize) -> String {
    let mut s = String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n#include <assert.h>\n\natomic_int x;\n\n\
         void *writer(void *arg) {\n    atomic_store(&x, (int)(long)arg);\n    return NULL;\n}\n\n\
         int main(void) {\n",
    );
    s += &numbered_writers(n);
    for i in 0..n {
        s += &format!("    pthread_join(t{i}, NULL);\n");
    }
    s += &format!("    int last = atomic_load(&x);\n    assert(last >= 1 && last <= {n});\n    return 0;\n}}\n");
    s
}

/// `sigma(n)` (SV-COMP's `sigma`, with seq_cst accesses as the paper converted it): `main`
/// increments `array_index` and spawns a thread, `n` times; each thread reads `array_index`
/// and sets that element of `array`. Thread i (from 0) can read any of the increments i..n-1:
/// n! reads-from (and value) classes; (2n-1)!! graphs (the writes to a shared element are
/// also ordered). The original's final sum check is left out: the paper's counts are the
/// threads' reads only.
pub fn sigma(n: usize) -> String {
    let mut s = format!(
        "#include <pthread.h>\n#include <stdatomic.h>\n\natomic_int array[{n}];\natomic_int array_index = -1;\n\n\
         void *thread(void *arg) {{\n    int i = atomic_load(&array_index);\n    atomic_store(&array[i], 1);\n    return NULL;\n}}\n\n\
         int main(void) {{\n    pthread_t t[{n}];\n\
         for (int tid = 0; tid < {n}; tid++) {{\n        atomic_store(&array_index, atomic_load(&array_index) + 1);\n        pthread_create(&t[tid], NULL, thread, NULL);\n    }}\n\
         for (int tid = 0; tid < {n}; tid++)\n        pthread_join(t[tid], NULL);\n    return 0;\n}}\n"
    );
    s.shrink_to_fit();
    s
}

/// `floating-read(n)`: `n` threads each write their number to `x` while one more thread reads
/// it. (n+1)! graphs, n+1 reads-from classes (the read sees the initial value or one write).
pub fn floating_read(n: usize) -> String {
    let mut s = String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n\natomic_int x;\n\n\
         void *writer(void *arg) {\n    atomic_store(&x, (int)(long)arg);\n    return NULL;\n}\n\n\
         void *reader(void *arg) {\n    int r = atomic_load(&x);\n    return NULL;\n}\n\n\
         int main(void) {\n    pthread_t r;\n",
    );
    s += &numbered_writers(n);
    s += "    pthread_create(&r, NULL, reader, NULL);\n    return 0;\n}\n";
    s
}

/// `circular-buffer(n)` (SV-COMP's `circular_buffer_ok`): a producer and a consumer each run
/// `n` critical sections on one mutex; the producer inserts when `send` is set, the consumer
/// removes (and checks the element is the one expected) when `receive` is set. Every
/// interleaving of the 2n critical sections is one execution: C(2n, n), in graphs and in
/// reads-from classes alike (the paper's Table 1).
pub fn circular_buffer(n: usize) -> String {
    format!(
        "#include <pthread.h>\n#include <assert.h>\n\n\
         pthread_mutex_t m;\nint buffer[{n}];\nint first, next, value;\nint send = 1, receive = 0;\n\n\
         void *producer(void *arg) {{\n    for (int i = 0; i < {n}; i++) {{\n        pthread_mutex_lock(&m);\n        if (send) {{\n\
         \x20           buffer[next] = value;\n            next = (next + 1) % {n};\n            value++;\n            send = 0;\n            receive = 1;\n        }}\n\
         \x20       pthread_mutex_unlock(&m);\n    }}\n    return NULL;\n}}\n\n\
         void *consumer(void *arg) {{\n    for (int i = 0; i < {n}; i++) {{\n        pthread_mutex_lock(&m);\n        if (receive) {{\n\
         \x20           assert(buffer[first] == value - 1);\n            first = (first + 1) % {n};\n            receive = 0;\n            send = 1;\n        }}\n\
         \x20       pthread_mutex_unlock(&m);\n    }}\n    return NULL;\n}}\n\n\
         int main(void) {{\n    pthread_t p, c;\n    pthread_create(&p, NULL, producer, NULL);\n    pthread_create(&c, NULL, consumer, NULL);\n    return 0;\n}}\n"
    )
}

/// The thesis's Figure 4.1 (ViEqui's motivating example): `a: x = 1 ‖ b: r = y; c: x = 1 ‖
/// d: s = x; e: y = 1 ‖ f: y = 1`. 27 graphs; 4 value classes (each read sees 0 or 1); 8
/// reads-from classes: each read has three sources, and of the nine pairs only "d reads c
/// while b reads e" is impossible (it needs c before d before e before b before c). The
/// thesis counts "6 equivalence classes under the reads-from equivalence" as three sources
/// per read added (3 + 3), not as classes of executions; brute force over the graphs gives 8.
pub fn vieq_fig41() -> String {
    "#include <pthread.h>\n#include <stdatomic.h>\n\natomic_int x, y;\n\n\
     void *t1(void *arg) { atomic_store(&x, 1); return NULL; }\n\
     void *t2(void *arg) { int b = atomic_load(&y); atomic_store(&x, 1); return NULL; }\n\
     void *t3(void *arg) { int d = atomic_load(&x); atomic_store(&y, 1); return NULL; }\n\
     void *t4(void *arg) { atomic_store(&y, 1); return NULL; }\n\n\
     int main(void) {\n    pthread_t a, b, c, d;\n    pthread_create(&a, NULL, t1, NULL);\n    pthread_create(&b, NULL, t2, NULL);\n\
     \x20   pthread_create(&c, NULL, t3, NULL);\n    pthread_create(&d, NULL, t4, NULL);\n    return 0;\n}\n"
        .to_string()
}

/// `reorder(s, c)` (SCTBench's `reorder_N_bad`, used by the reads-from SMC paper's Table 5 to
/// measure how soon a bug is hit): `s` setter threads write `a = 1; b = -1`, `c` checker
/// threads read `a` then `b` and assert they saw both writes or neither. A checker that reads
/// `a = 1` and `b = 0` fails.
pub fn reorder(setters: usize, checkers: usize) -> String {
    let mut s = String::from(
        "#include <pthread.h>\n#include <stdatomic.h>\n#include <assert.h>\n\natomic_int a, b;\n\n\
         void *set(void *arg) {\n    atomic_store(&a, 1);\n    atomic_store(&b, -1);\n    return NULL;\n}\n\n\
         void *check(void *arg) {\n    int x = atomic_load(&a);\n    int y = atomic_load(&b);\n\
         \x20   assert((x == 0 && y == 0) || (x == 1 && y == -1));\n    return NULL;\n}\n\n\
         int main(void) {\n",
    );
    for i in 0..setters {
        s += &format!("    pthread_t s{i};\n    pthread_create(&s{i}, NULL, set, NULL);\n");
    }
    for i in 0..checkers {
        s += &format!("    pthread_t c{i};\n    pthread_create(&c{i}, NULL, check, NULL);\n");
    }
    s += "    return 0;\n}\n";
    s
}

/// Declares `pthread_t t0..t{n-1}` and creates each as `writer` with argument i + 1.
fn numbered_writers(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s += &format!("    pthread_t t{i};\n");
    }
    for i in 0..n {
        s += &format!(
            "    pthread_create(&t{i}, NULL, writer, (void *){});\n",
            i + 1
        );
    }
    s
}
