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
