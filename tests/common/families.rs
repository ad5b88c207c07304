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
