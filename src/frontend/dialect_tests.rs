//! Tests of the FenSying/CDSChecker instrumented dialect (`lower/dialect.rs`): the leading
//! `__FILE__, __LINE__` arguments, librace.h's plain accesses, `user_main`'s `argc`, and the
//! invalid compare-exchange failure orders accepted with a warning.

use super::*;
use crate::ir::*;

fn ok_in(lang: Lang, src: &str) -> Program {
    let p =
        parse("t.cc", src, lang).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn ok(src: &str) -> Program {
    ok_in(Lang::C, src)
}

fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_c("t.c", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// The instructions of every function (spans and positions differ between two spellings of
/// one program; the instructions must not).
fn bodies(p: &Program) -> Vec<Vec<Instr>> {
    p.functions.iter().map(|f| f.body.clone()).collect()
}

const C_PRELUDE: &str =
    "#include <stdatomic.h>\natomic_int x; atomic_flag f;\nint main(void) {\n  int e = 0, r = 0;\n";

/// `call` with the location pair after its `(`.
fn located(call: &str) -> String {
    if call.contains("()") {
        call.replacen("()", "(__FILE__, __LINE__)", 1)
    } else {
        call.replacen('(', "(__FILE__, __LINE__, ", 1)
    }
}

#[test]
fn every_c_atomic_operation_takes_the_location_pair() {
    let calls = [
        "r = atomic_load(&x);",
        "r = atomic_load_explicit(&x, memory_order_acquire);",
        "atomic_store(&x, 1);",
        "atomic_store_explicit(&x, 1, memory_order_release);",
        "r = atomic_exchange(&x, 2);",
        "r = atomic_exchange_explicit(&x, 2, memory_order_acq_rel);",
        "r = atomic_fetch_add(&x, 1);",
        "r = atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);",
        "r = atomic_fetch_sub_explicit(&x, 1, memory_order_release);",
        "r = atomic_fetch_and_explicit(&x, 1, memory_order_relaxed);",
        "r = atomic_fetch_or_explicit(&x, 1, memory_order_relaxed);",
        "r = atomic_fetch_xor_explicit(&x, 1, memory_order_relaxed);",
        "r = atomic_fetch_sub(&x, 1);",
        "r = atomic_fetch_and(&x, 1);",
        "r = atomic_fetch_or(&x, 1);",
        "r = atomic_fetch_xor(&x, 1);",
        "r = atomic_compare_exchange_strong(&x, &e, 1);",
        "r = atomic_compare_exchange_weak(&x, &e, 1);",
        "r = atomic_compare_exchange_strong_explicit(&x, &e, 1, memory_order_acq_rel, memory_order_acquire);",
        "r = atomic_compare_exchange_weak_explicit(&x, &e, 1, memory_order_release, memory_order_relaxed);",
        "atomic_init(&x, 3);",
        "atomic_thread_fence(memory_order_seq_cst);",
        "atomic_signal_fence(memory_order_seq_cst);",
        "r = atomic_flag_test_and_set(&f);",
        "r = atomic_flag_test_and_set_explicit(&f, memory_order_acquire);",
        "atomic_flag_clear(&f);",
        "atomic_flag_clear_explicit(&f, memory_order_release);",
    ];
    for call in calls {
        let plain = format!("{C_PRELUDE}  {call}\n  return r;\n}}\n");
        let dialect = format!("{C_PRELUDE}  {}\n  return r;\n}}\n", located(call));
        assert_eq!(bodies(&ok(&plain)), bodies(&ok(&dialect)), "{call}");
    }
    // A macro that expands to the pair, and a pair written as literals, are the pair too.
    let at = "#define AT __FILE__, __LINE__\n";
    let a = ok(&format!(
        "{at}{C_PRELUDE}  atomic_store_explicit(AT, &x, 1, memory_order_release);\n  return r;\n}}\n"
    ));
    let b = ok(&format!(
        "{at}{C_PRELUDE}  atomic_store_explicit(\"t.c\", 12, &x, 1, memory_order_release);\n  return r;\n}}\n"
    ));
    assert_eq!(bodies(&a), bodies(&b));
}

#[test]
fn only_the_exact_shape_is_the_dialect() {
    // One argument too many after the pair: the function's own arity check.
    let (_, _, _, m) = diag("#include <stdatomic.h>\natomic_int x;\nint main(void) { atomic_store_explicit(__FILE__, __LINE__, &x, 1, memory_order_relaxed, 0); }\n");
    assert_eq!(m, "`atomic_store_explicit` expects 3 arguments, got 6");
    // Not a string and an integer: not the pair.
    let (_, _, _, m) = diag("#include <stdatomic.h>\natomic_int x;\nint main(void) { atomic_store_explicit(1, 2, &x, 1, memory_order_relaxed); }\n");
    assert_eq!(m, "`atomic_store_explicit` expects 3 arguments, got 5");
    // A user's own function of that name takes its arguments as written (here the string,
    // which a value cannot be; dropped, the call would have 2 arguments for 4 parameters).
    let (l, c, _, m) = diag(
        "int n;\nvoid atomic_init(const char *f, int l, int *p, int v) { n = v; }\n\
                int main(void) { atomic_init(__FILE__, __LINE__, &n, 4); return 0; }\n",
    );
    assert_eq!((l, c), (3, 30));
    assert!(m.starts_with("string literal"), "{m}");
}

#[test]
fn std_atomic_members_and_std_functions_take_the_location_pair() {
    let prelude = "#include <atomic>\nstd::atomic<int> x;\nint main() {\n  int e = 0, r = 0;\n";
    let calls = [
        "r = x.load();",
        "r = x.load(std::memory_order_acquire);",
        "x.store(1);",
        "x.store(1, std::memory_order_release);",
        "r = x.exchange(2, std::memory_order_acq_rel);",
        "r = x.fetch_add(1);",
        "r = x.fetch_sub(1, std::memory_order_relaxed);",
        "r = x.compare_exchange_strong(e, 1);",
        "r = x.compare_exchange_strong(e, 1, std::memory_order_relaxed);",
        "r = x.compare_exchange_weak(e, 1, std::memory_order_acq_rel, std::memory_order_acquire);",
        "std::atomic_thread_fence(std::memory_order_release);",
        "r = std::atomic_load_explicit(&x, std::memory_order_acquire);",
        "std::atomic_init(&x, 2);",
    ];
    for call in calls {
        let plain = format!("{prelude}  {call}\n  return r;\n}}\n");
        let dialect = format!("{prelude}  {}\n  return r;\n}}\n", located(call));
        assert_eq!(
            bodies(&ok_in(Lang::Cpp, &plain)),
            bodies(&ok_in(Lang::Cpp, &dialect)),
            "{call}"
        );
    }
}

#[test]
fn librace_accesses_are_plain() {
    let p = ok(
        "#include \"librace.h\"\nunsigned int v; unsigned char c; long w; atomic_int a;\n\
                int main(void) {\n  store_32(&v, 7);\n  int r = load_32(&v);\n  store_8(&c, 300);\n\
                  unsigned long q = load_64(&w);\n  store_32(&a, 1);\n  return r;\n}\n",
    );
    let body = &p.functions[p.main].body;
    let plain: Vec<(bool, Option<Expr>)> = body
        .iter()
        .filter_map(|i| match i {
            Instr::Store { val, order, .. } => {
                Some((*order == MemOrder::NonAtomic, Some(val.clone())))
            }
            Instr::Load { order, .. } => Some((*order == MemOrder::NonAtomic, None)),
            _ => None,
        })
        .collect();
    // Every access is plain, the atomic `a` included; `store_8` keeps the low byte.
    assert_eq!(
        plain,
        [
            (true, Some(Expr::Const(7))),
            (true, None),
            (true, Some(Expr::Const(44))),
            (true, None),
            (true, Some(Expr::Const(1))),
        ]
    );
    // A width that is not the cell's, a pointer cell, a store used as a value.
    let (l, c, k, m) =
        diag("#include \"librace.h\"\nint v;\nint main(void) { store_64(&v, 1); }\n");
    assert_eq!((l, c, k), (3, 27, DiagKind::Unsupported));
    assert!(m.contains("an integer of 32 bits"), "{m}");
    let (_, _, _, m) =
        diag("#include \"librace.h\"\nint *p;\nint main(void) { store_64(&p, 0); }\n");
    assert!(m.contains("a pointer"), "{m}");
    let (_, _, _, m) =
        diag("#include \"librace.h\"\nunsigned v;\nint main(void) { int r = store_32(&v, 1); }\n");
    assert!(m.contains("used as a value"), "{m}");
    let (_, _, _, m) =
        diag("#include \"librace.h\"\nunsigned v;\nint main(void) { store_32(&v); }\n");
    assert_eq!(m, "`store_32` expects 2 arguments, got 1");
}

#[test]
fn librace_race_is_a_data_race() {
    use crate::checker::{explore, BugKind, Control, Limits, Model};
    let p = ok("#include <threads.h>\n#include \"librace.h\"\nunsigned x;\n\
                static void t(void *a) { store_32(&x, 1); }\n\
                int user_main(int argc, char **argv) { thrd_t h; thrd_create(&h, (thrd_start_t)&t, NULL);\n\
                  unsigned r = load_32(&x); thrd_join(h); return 0; }\n");
    let mut kinds = Vec::new();
    explore(&p, Model::Rc11, Limits::default(), |g| {
        kinds.extend(g.bugs.iter().map(|b| b.kind));
        Control::Continue
    });
    assert!(kinds.contains(&BugKind::Race), "{kinds:?}");
}

#[test]
fn user_main_argc_is_one() {
    let p = ok("#include <stdatomic.h>\natomic_int x;\n\
                int user_main(int argc, char **argv) { atomic_store(&x, argc); return 0; }\n");
    let body = &p.functions[p.main].body;
    assert!(body.iter().any(|i| matches!(
        i,
        Instr::Assign {
            val: Expr::Const(1),
            ..
        }
    )));
    // argv stays refused, and so does main's argc.
    let (_, _, _, m) = diag("int user_main(int argc, char **argv) { return argv != 0; }\n");
    assert_eq!(m, "use of `argv` (parameters of main are not supported)");
    let (_, _, _, m) = diag("int main(int argc, char **argv) { return argc; }\n");
    assert_eq!(m, "use of `argc` (parameters of main are not supported)");
}

#[test]
fn invalid_failure_orders_are_read_without_their_release_part() {
    let src = "#include <stdatomic.h>\natomic_int x;\nint main(void) {\n  int e = 0;\n  \
               atomic_compare_exchange_strong_explicit(__FILE__, __LINE__, &x, &e, 1, memory_order_acq_rel,\n      memory_order_acq_rel);\n  \
               atomic_compare_exchange_weak_explicit(&x, &e, 1, memory_order_release, memory_order_release);\n  return 0;\n}\n";
    let p = ok(src);
    let fails: Vec<MemOrder> = p.functions[p.main]
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Cas { fail_order, .. } => Some(*fail_order),
            _ => None,
        })
        .collect();
    assert_eq!(fails, [MemOrder::Acquire, MemOrder::Relaxed]);
    let warnings: Vec<(usize, usize, bool)> = p
        .notes
        .iter()
        .map(|n| (n.span.line, n.span.column, n.warning))
        .collect();
    assert_eq!(warnings, [(6, 7, true), (7, 74, true)]);
    assert!(p.notes[0].message.starts_with(
        "memory_order_acq_rel is not valid as the failure order of a compare-exchange"
    ));
    assert!(p.notes[0].message.contains("read as memory_order_acquire"));
    assert!(p.notes[1].message.contains("read as memory_order_relaxed"));
    // C++'s member form says the same.
    let p = ok_in(
        Lang::Cpp,
        "#include <atomic>\nstd::atomic<int> x;\nint main() {\n  int e = 0;\n  \
         x.compare_exchange_strong(e, 1, std::memory_order_seq_cst, std::memory_order_acq_rel);\n}\n",
    );
    assert_eq!(p.notes.len(), 1);
    assert!(p.notes[0].warning);
    assert!(
        p.notes[0]
            .message
            .starts_with("std::memory_order_acq_rel is not valid"),
        "{}",
        p.notes[0].message
    );
}

#[test]
fn librace_h_brings_stdint_limits() {
    // CDSChecker's librace.h includes <stdint.h>: the thesis's hehner_c11 uses INTPTR_MAX with
    // no other include.
    let p = ok("#include \"librace.h\"\nlong m;\nint main() { m = INTPTR_MAX; return 0; }\n");
    let stored = p.functions[p.main].body.iter().find_map(|i| match i {
        Instr::Store { val, .. } => Some(val.clone()),
        _ => None,
    });
    assert_eq!(stored, Some(Expr::Const(i64::MAX)));
}

#[test]
fn dialect_headers_may_be_included_with_angle_brackets() {
    // CDSChecker's include directory is on the compiler's -I path: `<librace.h>` is its header.
    let p = ok("#include <librace.h>\n#include <model-assert.h>\nint g;\nint main() { store_32(&g, 1); MODEL_ASSERT(load_32(&g) == 1); return 0; }\n");
    assert!(!p.functions[p.main].body.is_empty());
}

/// Through CDSChecker's `(thrd_start_t)` cast a `void *f(void *)` thread function is taken
/// (fib_bench), in C and in C++ (which parses the cast as `(thrd_start_t) & f`); without the
/// cast it is still refused: C11's thrd_create takes an `int (*)(void *)`.
#[test]
fn pointer_returning_thread_functions_through_the_cast() {
    let prog = |arg: &str| {
        format!(
            "#include <threads.h>\n#include <stdatomic.h>\natomic_int x;\n\
             void *t(void *a) {{ atomic_store_explicit(&x, 1, memory_order_relaxed); return 0; }}\n\
             int user_main(int argc, char **argv) {{ thrd_t h; thrd_create(&h, {arg}, 0); \
             thrd_join(h); return 0; }}\n"
        )
    };
    for lang in [Lang::C, Lang::Cpp] {
        let p = ok_in(lang, &prog("(thrd_start_t)&t"));
        assert_eq!(p.functions.len(), 2);
    }
    let (l, c, k, m) = diag(&prog("t"));
    assert_eq!((l, c, k), (4, 1, DiagKind::Unsupported), "{m}");
    assert!(m.contains("must have the signature"), "{m}");
}

/// `h.priv` of a handle in a `malloc`ed array reached through a pointer, with an index that
/// is not a constant (treiber-stack's `get_thread_num`: `curr.priv == threads[i].priv`).
#[test]
fn handle_ids_through_a_pointer_to_handles() {
    let src = "#include <threads.h>\n#include <stdlib.h>\n#include <stdatomic.h>\n\
               static thrd_t *threads;\nstatic int n = 2;\natomic_int seen;\n\
               static int me(void) { thrd_t c = thrd_current(); for (int i = 0; i < n; i++) \
               if (c.priv == threads[i].priv) return i; return -1; }\n\
               static void t(void *a) { atomic_store_explicit(&seen, me(), memory_order_relaxed); }\n\
               int user_main(int argc, char **argv) { threads = malloc(n * sizeof(thrd_t)); \
               for (int i = 0; i < n; i++) thrd_create(&threads[i], (thrd_start_t)&t, NULL); \
               for (int i = 0; i < n; i++) thrd_join(threads[i]); return 0; }\n";
    ok(src);
}

/// A `const int` global is a constant expression: the size of a handle array (VSync's
/// `thrd_t threads[kNumThreads]`) and of a global array, and a loop bound.
#[test]
fn const_globals_size_arrays() {
    let p = ok("#include <threads.h>\n#include <stdatomic.h>\nconst int kN = 2;\n\
                atomic_int hits[kN + 1];\n\
                void *t(void *a) { atomic_fetch_add_explicit(&hits[kN], 1, memory_order_relaxed); return 0; }\n\
                int user_main(int argc, char **argv) { thrd_t ts[kN];\n\
                for (int i = 0; i < kN; i++) thrd_create(&ts[i], (thrd_start_t)&t, NULL);\n\
                for (int i = 0; i < kN; i++) thrd_join(ts[i]); return 0; }\n");
    // `hits` has three cells, plus `kN` itself.
    assert_eq!(p.globals.len(), 4, "{:?}", p.globals);
    // A global not declared `const` is no constant expression.
    let (l, c, k, m) = diag("int n = 2;\nint main(void) { int a[n]; return 0; }\n");
    assert_eq!((l, c, k), (2, 24, DiagKind::Error), "{m}");
}

/// `extern` declares an object defined later (twa_lock's waiting array, defined after the
/// functions that use it): one object, with the definition's initial value; an `extern`
/// never defined is refused only when the program names it.
#[test]
fn extern_declarations_name_a_later_definition() {
    let p = ok(
        "#include <stdatomic.h>\nextern atomic_int slots[4];\nextern int base;\n\
                static int peek(void) { return atomic_load(&slots[1]) + base; }\n\
                atomic_int slots[4];\nint base = 5;\nextern int unused;\n\
                int main(void) { return peek(); }\n",
    );
    let base = p.globals.iter().find(|g| g.name == "base").expect("base");
    assert_eq!(base.init, 5);
    // `slots` (4 cells), `base`, and the never-named `unused` (a cell nothing accesses).
    assert_eq!(p.globals.len(), 6, "{:?}", p.globals);
    let (l, c, k, m) =
        diag("extern int e[2];\nint f(void) { return e[1]; }\nint main(void) { return f(); }\n");
    assert_eq!((l, c, k), (1, 12, DiagKind::Error), "{m}");
    assert!(m.contains("--link"), "{m}");
    let (l, c, _, m) = diag("extern int e;\nlong e;\nint main(void) { return 0; }\n");
    assert_eq!((l, c), (2, 6), "{m}");
    assert!(m.contains("conflicting types"), "{m}");
}

/// A node pointer given as the expected value of a compare-exchange on an `atomic_uintptr_t`
/// through `(uintptr_t *)&expected` (VSync's qspinlock) is the same program as with a
/// `uintptr_t` local; a narrower integer through such a cast is refused.
#[test]
fn punned_expected_values_of_a_uintptr_compare_exchange() {
    let prog = |decl: &str, arg: &str| {
        format!(
            "#include <stdatomic.h>\n#include <stdint.h>\nint node;\natomic_uintptr_t tail;\n\
             int main(void) {{ {decl} = 0; int ok = atomic_compare_exchange_strong(&tail, {arg}, \
             (uintptr_t)&node); return ok; }}\n"
        )
    };
    let punned = ok(&prog("int *e", "(uintptr_t *)&e"));
    let plain = ok(&prog("uintptr_t e", "&e"));
    assert_eq!(bodies(&punned), bodies(&plain));
    let (_, _, k, m) = diag(&prog("int e", "(uintptr_t *)&e"));
    assert_eq!(k, DiagKind::Unsupported, "{m}");
    assert!(m.contains("64-bit"), "{m}");
}

/// A typedef fensyn cannot represent (an atomic struct) is refused where it is used, not
/// where it is written: VSync's clh_lock declares `typedef _Atomic clh_node_t *atomic_ptr;`
/// and never uses it.
#[test]
fn unrepresentable_typedefs_are_refused_at_their_use() {
    let def = "#include <stdatomic.h>\ntypedef struct node { atomic_int locked; struct node *prev; } node_t;\n\
               typedef _Atomic node_t *atomic_ptr;\n";
    ok(&format!(
        "{def}int main(void) {{ node_t n; n.prev = 0; return 0; }}\n"
    ));
    let (l, c, k, m) = diag(&format!(
        "{def}int main(void) {{ atomic_ptr p = 0; return 0; }}\n"
    ));
    assert_eq!((l, c, k), (4, 18, DiagKind::Unsupported), "{m}");
    assert!(m.contains("typedef of `atomic_ptr` at line 3"), "{m}");
}
