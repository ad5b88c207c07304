//! The system headers fensyn knows. They are never read from disk: what they declare is
//! built into the front end (types in `types.rs`, functions in the lowering), so including one
//! adds no text. The macros they define that the front end reads as identifiers (`NULL`,
//! `assert`, `ATOMIC_VAR_INIT`, ...) are *pass-through* macros: `defined`/`#ifdef` see them,
//! but they are not replaced, so the lowering still sees the name it knows.

use crate::ir::{Lang, LangStd};

/// The C headers, and the pass-through macros each defines.
const C_HEADERS: &[(&str, &[&str])] = &[
    (
        "stdatomic.h",
        &["ATOMIC_VAR_INIT", "ATOMIC_FLAG_INIT", "kill_dependency"],
    ),
    (
        "pthread.h",
        &[
            "PTHREAD_MUTEX_INITIALIZER",
            "PTHREAD_COND_INITIALIZER",
            "PTHREAD_RWLOCK_INITIALIZER",
            "PTHREAD_BARRIER_SERIAL_THREAD",
            "PTHREAD_MUTEX_NORMAL",
            "PTHREAD_MUTEX_RECURSIVE",
            "PTHREAD_MUTEX_ERRORCHECK",
            "PTHREAD_MUTEX_DEFAULT",
            "PTHREAD_CREATE_JOINABLE",
            "PTHREAD_CREATE_DETACHED",
        ],
    ),
    (
        "threads.h",
        &[
            "thrd_success",
            "thrd_error",
            "thrd_busy",
            "thrd_nomem",
            "thrd_timedout",
            "mtx_plain",
            "mtx_recursive",
            "mtx_timed",
        ],
    ),
    ("assert.h", &["assert", "static_assert"]),
    ("stdlib.h", &["NULL", "EXIT_SUCCESS", "EXIT_FAILURE"]),
    ("stdio.h", &["NULL", "stdout", "stderr", "EOF"]),
    ("stddef.h", &["NULL", "offsetof"]),
    ("string.h", &["NULL"]),
    (
        "stdbool.h",
        &["bool", "true", "false", "__bool_true_false_are_defined"],
    ),
    ("stdint.h", &[]),
    ("inttypes.h", &[]),
    ("limits.h", &[]),
    ("stdalign.h", &["alignas", "alignof"]),
    ("stdnoreturn.h", &["noreturn"]),
    ("unistd.h", &["NULL"]),
    ("sched.h", &[]),
    ("time.h", &["NULL"]),
    ("errno.h", &[]),
    ("uchar.h", &[]),
    ("stdarg.h", &[]),
    ("sys/types.h", &[]),
    // GenMC's header: the `__VERIFIER_*` functions fensyn knows are built into the lowering,
    // its macros are `GENMC_H` below, and what fensyn cannot model is `GENMC_REFUSED`.
    ("genmc.h", &[]),
];

/// The macros of GenMC's `<genmc.h>` that keep their meaning in fensyn, read as if the header
/// held them. Every annotation is a hint by which GenMC explores fewer executions; without it
/// fensyn explores all of them, which is what the program means when compiled (the hints are
/// functions that do nothing there). `__VERIFIER_optional(x)` runs `x` or not, and blocks the
/// executions that ran it, as GenMC's does. `__VERIFIER_loop_begin`, `__VERIFIER_spin_start`,
/// `__VERIFIER_spin_end` and `__VERIFIER_annotate_*` are functions with no effect in the
/// lowering (so the file may declare them); `__VERIFIER_assume` and `__VERIFIER_nondet_*`
/// are built in there too.
const GENMC_H: &str = "\
#define GENMC_ATTR_LOCAL 0x00000001
#define GENMC_ATTR_FINAL 0x00000002
#define GENMC_KIND_NONVR 0x00010000
#define GENMC_KIND_HELPED 0x00020000
#define GENMC_KIND_HELPING 0x00040000
#define GENMC_KIND_SPECUL 0x00080000
#define GENMC_KIND_CONFIRM 0x00100000
#define __VERIFIER_local_write(s) do { s; } while (0)
#define __VERIFIER_final_write(s) do { s; } while (0)
#define __VERIFIER_helped_CAS(c) do { c; } while (0)
#define __VERIFIER_helping_CAS(c) do { c; } while (0)
#define __VERIFIER_speculative_read(c) (c)
#define __VERIFIER_confirming_read(c) (c)
#define __VERIFIER_confirming_CAS(c) (c)
#define __VERIFIER_final_CAS(c) (c)
#define __VERIFIER_optional(x) do { if (__VERIFIER_opt_begin()) { x; __VERIFIER_assume(0); } } while (0)
";

/// The limits of `<limits.h>` for the LP64 types fensyn models (`int` 32, `long` 64 bits).
/// The unsigned 64-bit maxima (`ULONG_MAX`, `ULLONG_MAX`) are not defined: no value of the
/// IR holds them, so a use is an unknown name, refused at its position.
const LIMITS_H: &str = "\
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define LLONG_MIN LONG_MIN
#define LLONG_MAX LONG_MAX
";

/// The limits of `<stdint.h>`'s exact-width types (as [`LIMITS_H`], without `UINT64_MAX`).
const STDINT_H: &str = "\
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807L - 1)
#define INT64_MAX 9223372036854775807L
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
";

/// The names `<genmc.h>` declares that fensyn does not model, and why: a use is refused at
/// its position.
const GENMC_REFUSED: &[(&str, &str)] = &[
    ("__VERIFIER_hp_t", HAZARD),
    ("__VERIFIER_hp_alloc", HAZARD),
    ("__VERIFIER_hp_protect", HAZARD),
    ("__VERIFIER_hp_clear", HAZARD),
    ("__VERIFIER_hp_free", HAZARD),
    ("__VERIFIER_hp_retire", HAZARD),
    ("__VERIFIER_hazptr_t", HAZARD),
    ("__VERIFIER_spawn", THREADS),
    ("__VERIFIER_spawn_symmetric", THREADS),
    ("__VERIFIER_join", THREADS),
    ("__VERIFIER_join_symmetric", THREADS),
    ("__VERIFIER_thread_t", THREADS),
    ("__VERIFIER_persistent_storage", PERSIST),
    ("__VERIFIER_palloc", PERSIST),
    ("__VERIFIER_recovery_routine", PERSIST),
    ("__VERIFIER_pbarrier", PERSIST),
];

const HAZARD: &str = "GenMC's hazard pointers (their deferred reclamation is not modelled)";
const THREADS: &str = "GenMC's thread functions (use pthread_create and pthread_join)";
const PERSIST: &str = "GenMC's persistency checking (file systems and recovery are not modelled)";

/// The text of definitions fensyn reads for the system header `name` (never from disk).
pub(crate) fn definitions(name: &str) -> Option<&'static str> {
    match name {
        "genmc.h" => Some(GENMC_H),
        "unrelacy.h" => Some(UNRELACY_H),
        "limits.h" | "climits" => Some(LIMITS_H),
        "stdint.h" | "cstdint" | "inttypes.h" | "cinttypes" => Some(STDINT_H),
        _ => None,
    }
}

/// The names the system header `name` declares that fensyn refuses, with the reason.
pub(crate) fn refused(name: &str) -> &'static [(&'static str, &'static str)] {
    if name == "genmc.h" {
        GENMC_REFUSED
    } else {
        &[]
    }
}

/// The C++ headers (every `<cxxx>` form of a C header above is known too).
const CPP_HEADERS: &[&str] = &[
    "atomic",
    "thread",
    "mutex",
    "shared_mutex",
    "condition_variable",
    "iostream",
    "functional",
    "memory",
    "new",
    "utility",
];

/// Headers of the test dialects fensyn reads (CDSChecker's): included with quotes or `<>`, known when
/// no such file exists; `MODEL_ASSERT` and the `load_32` family are built in.
const DIALECT_HEADERS: &[&str] = &["model-assert.h", "librace.h", "unrelacy.h"];

/// CDSChecker's `<unrelacy.h>`, the shim that lets Relacy tests (mcs-lock, spsc-queue,
/// mpmc-queue) run under CDSChecker: its macros, as that header defines them. `$` (Relacy's
/// debug-info argument, `head($)`) is nothing; `mo_seqcst` is `memory_order_relaxed`, as in
/// CDSChecker's header (the programs are checked as they run there). Its C++ types
/// (`rl::var<T>`, `rl::backoff`) are built into the lowering (`frontend/relacy.rs`).
const UNRELACY_H: &str = "\
#define $
#define ASSERT(expr) MODEL_ASSERT(expr)
#define RL_ASSERT(expr) MODEL_ASSERT(expr)
#define RL_NEW new
#define RL_DELETE(expr) delete expr
#define mo_seqcst memory_order_relaxed
#define mo_release memory_order_release
#define mo_acquire memory_order_acquire
#define mo_acq_rel memory_order_acq_rel
#define mo_relaxed memory_order_relaxed
";

/// The pass-through macros of the system header `name` if fensyn knows it.
pub(crate) fn known(name: &str) -> Option<&'static [&'static str]> {
    if let Some((_, m)) = C_HEADERS.iter().find(|(h, _)| *h == name) {
        return Some(m);
    }
    if CPP_HEADERS.contains(&name) {
        return Some(&[]);
    }
    // `<cstdlib>` is `<stdlib.h>`.
    let c = name.strip_prefix('c').map(|n| format!("{n}.h"))?;
    C_HEADERS.iter().find(|(h, _)| *h == c).map(|(_, m)| *m)
}

/// Whether `name`, included and not found, is a test-dialect header.
pub(crate) fn dialect(name: &str) -> bool {
    DIALECT_HEADERS.contains(&name)
}

/// The names of the known headers, for the message about an unknown one.
pub(crate) fn names() -> String {
    let mut v: Vec<&str> = C_HEADERS.iter().map(|(h, _)| *h).collect();
    v.extend(CPP_HEADERS);
    v.join(", ")
}

/// GCC's predefined memory-order macros: the front end reads them as names (see
/// `lower/builtins.rs`); `#if` sees their values.
pub(crate) const ORDER_VALUES: [(&str, i64); 6] = [
    ("__ATOMIC_RELAXED", 0),
    ("__ATOMIC_CONSUME", 1),
    ("__ATOMIC_ACQUIRE", 2),
    ("__ATOMIC_RELEASE", 3),
    ("__ATOMIC_ACQ_REL", 4),
    ("__ATOMIC_SEQ_CST", 5),
];

/// The predefined macros of an LP64 Linux target with GCC's atomics, for C or C++, with
/// `__STDC_VERSION__` or `__cplusplus` of `std` when it is a standard of that language
/// (GCC ignores one of the other language), else C17's or C++17's.
pub(crate) fn predefined(cpp: bool, std: Option<LangStd>) -> Vec<(&'static str, String)> {
    let v = [
        ("__STDC__", "1"),
        ("__STDC_HOSTED__", "1"),
        ("__GNUC__", "4"),
        ("__GNUC_MINOR__", "2"),
        ("__LP64__", "1"),
        ("_LP64", "1"),
        ("__x86_64__", "1"),
        ("__linux__", "1"),
        ("__CHAR_BIT__", "8"),
        ("__SIZEOF_INT__", "4"),
        ("__SIZEOF_LONG__", "8"),
        ("__SIZEOF_POINTER__", "8"),
        ("__fensyn__", "1"),
    ];
    let lang = if cpp { Lang::Cpp } else { Lang::C };
    let version = match std {
        Some(s) if s.lang == lang => s.version,
        _ => LangStd::default_for(lang).version,
    };
    let mut v: Vec<(&str, String)> = v.into_iter().map(|(n, t)| (n, t.to_string())).collect();
    match (cpp, version) {
        (true, Some(n)) => v.push(("__cplusplus", format!("{n}L"))),
        (false, Some(n)) => v.push(("__STDC_VERSION__", format!("{n}L"))),
        (_, None) => {}
    }
    v
}
