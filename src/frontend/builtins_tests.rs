//! The GCC/Clang atomic builtins (`__atomic_*`, `__sync_*`), the spellings of types and
//! qualifiers real harnesses use, attributes, and integer literals with suffixes: each form
//! against the IR it must lower to, each refusal with its position and message.

use super::*;
use crate::ir::*;

fn ok(src: &str) -> Program {
    let p = parse_c("t.c", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn ok_cpp(src: &str) -> Program {
    let p = parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

/// `(line, column, kind, message)` of the diagnostic for `src`.
fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_c("t.c", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// The instructions of `main` without slot markers.
fn main_instrs(p: &Program) -> Vec<Instr> {
    p.functions[p.main]
        .body
        .iter()
        .filter(|i| !matches!(i, Instr::Slot(_)))
        .cloned()
        .collect()
}

/// Runs the straight-line register code of `main` (assignments only) and returns the value of
/// local `name`.
fn local_value(p: &Program, name: &str) -> i64 {
    let m = &p.functions[p.main];
    let mut regs = vec![0i64; m.reg_names.len()];
    for i in &m.body {
        if let Instr::Assign { dst, val } = i {
            regs[*dst] = val.eval(&regs).unwrap();
        }
    }
    let r = m.reg_names.iter().position(|n| n == name).unwrap();
    regs[r]
}

#[test]
fn suffixed_zero_literals_are_decimal_zero() {
    for lit in [
        "0u", "0U", "0ul", "0UL", "0lu", "0llu", "0LLU", "0ull", "0l", "0LL",
    ] {
        let p = ok(&format!(
            "unsigned long long g = {lit};\nint main(void) {{ unsigned long long x = {lit}; \
             unsigned y = {lit} - 1; return 0; }}\n"
        ));
        assert_eq!(p.globals[0].init, 0, "{lit}");
        assert_eq!(local_value(&p, "x"), 0, "{lit}");
    }
    // `0u - 1` is unsigned arithmetic: UINT_MAX.
    let p = ok("int main(void) { unsigned y = 0u - 1; long z = 0u - 1; return 0; }");
    assert_eq!(local_value(&p, "y"), 4294967295);
    assert_eq!(local_value(&p, "z"), 4294967295);
    // Octal, hex and binary literals with suffixes.
    let p = ok("int main(void) { long a = 017u; long b = 0x1Ful; long c = 0b101LLU; return 0; }");
    assert_eq!(
        (
            local_value(&p, "a"),
            local_value(&p, "b"),
            local_value(&p, "c")
        ),
        (15, 31, 5)
    );
    let (line, col, kind, msg) = diag("int main(void) {\n  int x = 08u;\n  return 0;\n}\n");
    assert_eq!(
        (line, col, kind, msg.as_str()),
        (2, 11, DiagKind::Error, "invalid integer literal `08u`")
    );
}

/// `(wrap(0x1ffff), wrap(-1))` of every integer type: tells width and signedness apart.
fn fingerprint(ty: &str, atomic: bool) -> (i64, i64) {
    let p = ok(&format!(
        "{ty} x = 0x1ffff;\n{ty} y = -1;\nint main(void) {{ return 0; }}\n"
    ));
    assert_eq!(
        (p.globals[0].atomic, p.globals[1].atomic),
        (atomic, atomic),
        "{ty}"
    );
    (p.globals[0].init, p.globals[1].init)
}

const I8: (i64, i64) = (-1, -1);
const U8: (i64, i64) = (255, 255);
const I16: (i64, i64) = (-1, -1);
const U16: (i64, i64) = (65535, 65535);
const I32: (i64, i64) = (131071, -1);
const U32: (i64, i64) = (131071, 4294967295);
const I64: (i64, i64) = (131071, -1);

#[test]
fn every_stdatomic_typedef() {
    for (ty, want) in [
        ("atomic_char", I8),
        ("atomic_schar", I8),
        ("atomic_uchar", U8),
        ("atomic_short", I16),
        ("atomic_ushort", U16),
        ("atomic_int", I32),
        ("atomic_uint", U32),
        ("atomic_long", I64),
        ("atomic_ulong", I64),
        ("atomic_llong", I64),
        ("atomic_ullong", I64),
        ("atomic_char16_t", U16),
        ("atomic_char32_t", U32),
        ("atomic_wchar_t", I32),
        ("atomic_int_least8_t", I8),
        ("atomic_uint_least8_t", U8),
        ("atomic_int_least16_t", I16),
        ("atomic_uint_least16_t", U16),
        ("atomic_int_least32_t", I32),
        ("atomic_uint_least32_t", U32),
        ("atomic_int_least64_t", I64),
        ("atomic_uint_least64_t", I64),
        ("atomic_int_fast8_t", I8),
        ("atomic_uint_fast8_t", U8),
        ("atomic_int_fast16_t", I64),
        ("atomic_uint_fast16_t", I64),
        ("atomic_int_fast32_t", I64),
        ("atomic_uint_fast32_t", I64),
        ("atomic_int_fast64_t", I64),
        ("atomic_uint_fast64_t", I64),
        ("atomic_intptr_t", I64),
        ("atomic_uintptr_t", I64),
        ("atomic_size_t", I64),
        ("atomic_ptrdiff_t", I64),
        ("atomic_intmax_t", I64),
        ("atomic_uintmax_t", I64),
    ] {
        assert_eq!(fingerprint(ty, true), want, "{ty}");
    }
    assert_eq!(fingerprint("atomic_bool", true), (1, 1));
    let (line, col, kind, msg) = diag("atomic_ssize_t x;\nint main(void) { return 0; }\n");
    assert_eq!(
        (line, col, kind, msg.as_str()),
        (1, 1, DiagKind::Unsupported, "type `atomic_ssize_t`")
    );
}

#[test]
fn every_stdint_and_stddef_typedef() {
    for (ty, want) in [
        ("int8_t", I8),
        ("uint8_t", U8),
        ("int16_t", I16),
        ("uint16_t", U16),
        ("int32_t", I32),
        ("uint32_t", U32),
        ("int64_t", I64),
        ("uint64_t", I64),
        ("int_least8_t", I8),
        ("uint_least8_t", U8),
        ("int_least16_t", I16),
        ("uint_least16_t", U16),
        ("int_least32_t", I32),
        ("uint_least32_t", U32),
        ("int_least64_t", I64),
        ("uint_least64_t", I64),
        ("int_fast8_t", I8),
        ("uint_fast8_t", U8),
        ("int_fast16_t", I64),
        ("uint_fast16_t", I64),
        ("int_fast32_t", I64),
        ("uint_fast32_t", I64),
        ("int_fast64_t", I64),
        ("uint_fast64_t", I64),
        ("intptr_t", I64),
        ("uintptr_t", I64),
        ("size_t", I64),
        ("ssize_t", I64),
        ("ptrdiff_t", I64),
        ("intmax_t", I64),
        ("uintmax_t", I64),
        ("wchar_t", I32),
        ("char16_t", U16),
        ("char32_t", U32),
    ] {
        assert_eq!(fingerprint(ty, false), want, "{ty}");
    }
}

#[test]
fn atomic_qualifier_in_any_position() {
    for ty in [
        "_Atomic unsigned long",
        "unsigned long _Atomic",
        "long _Atomic unsigned",
        "unsigned _Atomic long",
        "_Atomic(unsigned long)",
        "volatile _Atomic unsigned long",
        "_Atomic volatile unsigned long",
        "volatile atomic_ulong",
    ] {
        assert_eq!(fingerprint(ty, true), I64, "{ty}");
    }
    for ty in [
        "int _Atomic",
        "_Atomic(int)",
        "_Atomic int",
        "const _Atomic int",
    ] {
        assert_eq!(fingerprint(ty, true), I32, "{ty}");
    }
    assert_eq!(fingerprint("unsigned _Atomic", true), U32);
    assert_eq!(fingerprint("short _Atomic unsigned", true), U16);
    assert_eq!(fingerprint("volatile int", false), I32);
    assert_eq!(fingerprint("int volatile", false), I32);
    assert_eq!(fingerprint("volatile unsigned char", false), U8);
}

/// Atomic pointers however written, including to atomic pointees: the pointer cell is atomic
/// (read by name: a seq_cst load), and what it points to keeps its own atomicity.
#[test]
fn atomic_pointers_to_atomic_pointees() {
    let src = "#include <stdatomic.h>\n\
               struct node { int v; struct node *next; };\n\
               atomic_int cell;\n\
               _Atomic(atomic_int *) a = &cell;\n\
               _Atomic(_Atomic int *) b;\n\
               atomic_int * _Atomic c;\n\
               _Atomic(struct node *) top;\n\
               struct node * _Atomic top2;\n\
               int * _Atomic d;\n\
               int main(void) {\n\
                 atomic_int *p = a;\n\
                 atomic_store_explicit(p, 1, memory_order_release);\n\
                 atomic_store_explicit(a, 2, memory_order_relaxed);\n\
                 b = &cell;\n\
                 return 0;\n\
               }\n";
    let p = ok(src);
    let atomic: Vec<(&str, bool)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.atomic))
        .collect();
    assert_eq!(
        atomic,
        [
            ("cell", true),
            ("a", true),
            ("b", true),
            ("c", true),
            ("top", true),
            ("top2", true),
            ("d", true)
        ]
    );
    assert_eq!(p.globals[1].init, pointer_to(0));
    let code = main_instrs(&p);
    // `p = a`: a seq_cst load of the atomic pointer; the stores go through pointers to the
    // atomic int `cell`; `b = &cell` is a seq_cst store of the pointer.
    assert!(
        matches!(
            &code[0],
            Instr::Load {
                loc: Addr::Fixed(1),
                order: MemOrder::SeqCst,
                ..
            }
        ),
        "{code:?}"
    );
    let stores: Vec<(Option<Loc>, MemOrder)> = code
        .iter()
        .filter_map(|i| match i {
            Instr::Store { loc, order, .. } => Some((loc.fixed(), *order)),
            _ => None,
        })
        .collect();
    assert_eq!(
        stores,
        [
            (None, MemOrder::Release),
            (None, MemOrder::Relaxed),
            (Some(2), MemOrder::SeqCst)
        ]
    );
}

/// `volatile` is not atomic in C11: accesses through volatile objects and pointers are plain.
#[test]
fn volatile_accesses_are_plain() {
    let p = ok("atomic_int a;\nvolatile int v;\n\
                int main(void) {\n\
                  v = 1;\n\
                  volatile int *q = &v;\n\
                  *q = 2;\n\
                  *(volatile int *)&a = 3;\n\
                  int r = *(int volatile *)&a;\n\
                  return 0;\n\
                }\n");
    let orders: Vec<MemOrder> = main_instrs(&p)
        .iter()
        .filter_map(|i| match i {
            Instr::Store { order, .. } | Instr::Load { order, .. } => Some(*order),
            _ => None,
        })
        .collect();
    assert_eq!(orders, [MemOrder::NonAtomic; 4]);
}

/// A plain read of an `_Atomic` element through a cast is a plain load (atomicity belongs to
/// the access); reading the atomic by name stays a seq_cst load.
#[test]
fn plain_access_to_an_atomic_object() {
    let p = ok("atomic_int a[2];\n\
                int main(void) {\n\
                  int i = 1;\n\
                  int r = *(int *)&a[i];\n\
                  int s = a[0];\n\
                  return 0;\n\
                }\n");
    let loads: Vec<(bool, MemOrder)> = main_instrs(&p)
        .iter()
        .filter_map(|i| match i {
            Instr::Load { loc, order, .. } => Some((loc.fixed().is_some(), *order)),
            _ => None,
        })
        .collect();
    assert_eq!(
        loads,
        [(false, MemOrder::NonAtomic), (true, MemOrder::SeqCst)]
    );
}

/// Attributes on variables, fields, functions, prototypes and statements are ignored: the
/// program lowers to the IR of the same program without them.
#[test]
fn attributes_are_accepted_and_ignored() {
    let with = "#include <stdatomic.h>\n\
                atomic_int x __attribute__((aligned(64)));\n\
                struct s { int v __attribute__((__aligned__(8))); } __attribute__((packed));\n\
                __attribute__((unused)) static int data[2] __attribute__((aligned(64)));\n\
                static int get(void) __attribute__((noinline));\n\
                __attribute__((noinline, always_inline)) static int get(void) { return data[0]; }\n\
                [[maybe_unused]] int y;\n\
                int main(void) {\n\
                  int r __attribute__((unused)) = get();\n\
                  switch (r) { case 0: r = 1; __attribute__((fallthrough)); default: break; }\n\
                  [[gnu::unused]] int z = atomic_load(&x);\n\
                  return 0;\n\
                }\n";
    let without = "#include <stdatomic.h>\n\
                   atomic_int x;\n\
                   struct s { int v; };\n\
                   static int data[2];\n\
                   static int get(void);\n\
                   static int get(void) { return data[0]; }\n\
                   int y;\n\
                   int main(void) {\n\
                     int r = get();\n\
                     switch (r) { case 0: r = 1; ; default: break; }\n\
                     int z = atomic_load(&x);\n\
                     return 0;\n\
                   }\n";
    let (a, b) = (ok(with), ok(without));
    let names = |p: &Program| -> Vec<(String, bool, i64)> {
        p.globals
            .iter()
            .map(|g| (g.name.clone(), g.atomic, g.init))
            .collect()
    };
    assert_eq!(names(&a), names(&b));
    assert_eq!(main_instrs(&a), main_instrs(&b));
}

#[test]
fn attributes_with_effects_are_refused() {
    let (line, col, kind, msg) = diag(
        "int x;\n\
         int main(void) {\n\
           int v __attribute__((unused, cleanup(release))) = 1;\n\
           return 0;\n\
         }\n",
    );
    assert_eq!((line, col, kind), (3, 30, DiagKind::Unsupported));
    assert!(
        msg.starts_with("attribute `cleanup` (only attributes without effect"),
        "{msg}"
    );
    let (line, col, _, msg) =
        diag("__attribute__((constructor)) void init(void) {}\nint main(void) { return 0; }\n");
    assert_eq!((line, col), (1, 16));
    assert!(msg.starts_with("attribute `constructor`"), "{msg}");
}

/// The C++ spellings of the same types and attributes.
#[test]
fn cpp_atomic_types_and_attributes() {
    let p = ok_cpp(
        "#include <atomic>\n#include <cstdint>\n\
         std::atomic<std::uint64_t> a{0x1ffff};\n\
         std::atomic_uint_fast64_t b = 0x1ffff;\n\
         std::atomic<std::uint_least8_t> c{0x1ffff};\n\
         std::atomic_uint_fast8_t d{0x1ffff};\n\
         std::atomic<char16_t> e{-1};\n\
         std::atomic<wchar_t> f{-1};\n\
         volatile std::atomic<int> g;\n\
         alignas(64) std::atomic<int> h;\n\
         [[maybe_unused]] std::atomic<long> i __attribute__((aligned(64)));\n\
         std::uint32_t j = -1;\n\
         [[gnu::noinline]] static int get() { return j; }\n\
         int main() { return get(); }\n",
    );
    let got: Vec<(&str, bool, i64)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.atomic, g.init))
        .collect();
    assert_eq!(
        got,
        [
            ("a", true, 0x1ffff),
            ("b", true, 0x1ffff),
            ("c", true, 255),
            ("d", true, 255),
            ("e", true, 65535),
            ("f", true, -1),
            ("g", true, 0),
            ("h", true, 0),
            ("i", true, 0),
            ("j", false, 4294967295)
        ]
    );
}

// ----- GCC/Clang atomic builtins -------------------------------------------------------------

/// Lowers `body` as main's body twice: with builtins over plain objects (`builtin`) and with
/// C11 calls over atomic ones (`c11`), and checks that both give the same instructions.
fn same_ir(builtin: &str, c11: &str) {
    let decls = |atomic: bool| {
        let (i, p, b) = if atomic {
            ("atomic_int", "_Atomic(int *)", "atomic_bool")
        } else {
            ("int", "int *", "bool")
        };
        format!("#include <stdatomic.h>\n#include <stdbool.h>\n{i} x, y;\n{p} p;\n{b} f;\n")
    };
    let locals = "int r = 0, v = 1, e = 0, d = 2; bool ok = 0, set = 0; int *q = 0; \
                  (void)0;\n";
    let a = ok(&format!(
        "{}int main(void) {{\n{locals}{builtin}\nreturn 0;\n}}\n",
        decls(false)
    ));
    let b = ok(&format!(
        "{}int main(void) {{\n{locals}{c11}\nreturn 0;\n}}\n",
        decls(true)
    ));
    assert_eq!(main_instrs(&a), main_instrs(&b), "{builtin}\n  vs\n{c11}");
}

#[test]
fn atomic_builtins_lower_like_the_c11_functions() {
    for (builtin, c11) in [
        (
            "r = __atomic_load_n(&x, __ATOMIC_ACQUIRE);",
            "r = atomic_load_explicit(&x, memory_order_acquire);",
        ),
        (
            "r = __atomic_load_n(&x, __ATOMIC_CONSUME) + __atomic_load_n(&y, __ATOMIC_SEQ_CST);",
            "r = atomic_load_explicit(&x, memory_order_consume) + atomic_load(&y);",
        ),
        (
            "__atomic_store_n(&x, r + 1, __ATOMIC_RELEASE);",
            "atomic_store_explicit(&x, r + 1, memory_order_release);",
        ),
        (
            "r = __atomic_exchange_n(&x, 2, __ATOMIC_ACQ_REL);",
            "r = atomic_exchange_explicit(&x, 2, memory_order_acq_rel);",
        ),
        (
            "ok = __atomic_compare_exchange_n(&x, &e, 3, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);",
            "ok = atomic_compare_exchange_strong_explicit(&x, &e, 3, memory_order_seq_cst, \
             memory_order_relaxed);",
        ),
        (
            "ok = __atomic_compare_exchange_n(&x, &e, d, true, __ATOMIC_ACQUIRE, \
             __ATOMIC_ACQUIRE);",
            "ok = atomic_compare_exchange_weak_explicit(&x, &e, d, memory_order_acquire, \
             memory_order_acquire);",
        ),
        (
            "__atomic_load(&x, &r, __ATOMIC_RELAXED);",
            "r = atomic_load_explicit(&x, memory_order_relaxed);",
        ),
        (
            "__atomic_store(&x, &v, __ATOMIC_SEQ_CST);",
            "atomic_store(&x, v);",
        ),
        (
            "__atomic_exchange(&x, &v, &r, __ATOMIC_RELEASE);",
            "r = atomic_exchange_explicit(&x, v, memory_order_release);",
        ),
        (
            "ok = __atomic_compare_exchange(&x, &e, &d, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED);",
            "ok = atomic_compare_exchange_weak_explicit(&x, &e, d, memory_order_release, \
             memory_order_relaxed);",
        ),
        (
            "r = __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED); r = __atomic_fetch_sub(&x, v, 2); \
             r = __atomic_fetch_and(&x, 6, 3); r = __atomic_fetch_or(&x, 1, 4); \
             r = __atomic_fetch_xor(&x, 1, 5);",
            "r = atomic_fetch_add_explicit(&x, 1, memory_order_relaxed); \
             r = atomic_fetch_sub_explicit(&x, v, memory_order_acquire); \
             r = atomic_fetch_and_explicit(&x, 6, memory_order_release); \
             r = atomic_fetch_or_explicit(&x, 1, memory_order_acq_rel); \
             r = atomic_fetch_xor(&x, 1);",
        ),
        (
            "__atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);",
            "atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);",
        ),
        (
            "set = __atomic_test_and_set(&f, __ATOMIC_ACQUIRE); __atomic_clear(&f, \
             __ATOMIC_RELEASE);",
            "set = atomic_exchange_explicit(&f, 1, memory_order_acquire); \
             atomic_store_explicit(&f, 0, memory_order_release);",
        ),
        (
            "__atomic_thread_fence(__ATOMIC_ACQ_REL);",
            "atomic_thread_fence(memory_order_acq_rel);",
        ),
        (
            "q = __atomic_load_n(&p, __ATOMIC_ACQUIRE); __atomic_store_n(&p, &y, \
             __ATOMIC_RELEASE); q = __atomic_exchange_n(&p, 0, __ATOMIC_RELAXED);",
            "q = atomic_load_explicit(&p, memory_order_acquire); atomic_store_explicit(&p, &y, \
             memory_order_release); q = atomic_exchange_explicit(&p, 0, memory_order_relaxed);",
        ),
        // The lock pair of `__sync`: an acquire exchange and a release store of 0.
        (
            "r = __sync_lock_test_and_set(&x, 1); __sync_lock_release(&x);",
            "r = atomic_exchange_explicit(&x, 1, memory_order_acquire); \
             atomic_store_explicit(&x, 0, memory_order_release);",
        ),
        (
            "__sync_synchronize();",
            "atomic_thread_fence(memory_order_seq_cst);",
        ),
    ] {
        same_ir(builtin, c11);
    }
}

/// `(executions, buggy)` of `src` under RC11.
fn run(src: &str) -> (u64, u64) {
    let p = ok(src);
    let r = crate::checker::check(&p, &crate::checker::CheckOptions::default());
    (r.stats.executions, r.stats.buggy)
}

/// The values builtins compute, asserted by a one-thread program (a wrong value fails an
/// assertion, which the same program with one expectation changed shows).
#[test]
fn builtin_values() {
    let src = "#include <stdbool.h>\n\
        int x = 12;\nunsigned long u;\nbool f;\n\
        int main(void) {\n\
          int a = __atomic_fetch_nand(&x, 10, __ATOMIC_RELAXED);\n\
          int b = __atomic_nand_fetch(&x, 3, __ATOMIC_RELAXED);\n\
          assert(a == 12 && b == -4 && x == -4);\n\
          int c1 = __atomic_add_fetch(&x, 10, __ATOMIC_SEQ_CST);\n\
          int c2 = __atomic_sub_fetch(&x, 1, __ATOMIC_SEQ_CST);\n\
          int c3 = __atomic_and_fetch(&x, 4, __ATOMIC_SEQ_CST);\n\
          int c4 = __atomic_or_fetch(&x, 3, __ATOMIC_SEQ_CST);\n\
          int c5 = __atomic_xor_fetch(&x, 2, __ATOMIC_SEQ_CST);\n\
          assert(c1 == 6 && c2 == 5 && c3 == 4 && c4 == 7 && c5 == 5);\n\
          unsigned long w = __atomic_sub_fetch(&u, 1, __ATOMIC_RELAXED);\n\
          assert(w == 18446744073709551615UL && u == w);\n\
          bool was = __atomic_test_and_set(&f, __ATOMIC_ACQUIRE);\n\
          bool now = __atomic_test_and_set(&f, __ATOMIC_ACQUIRE);\n\
          __atomic_clear(&f, __ATOMIC_RELEASE);\n\
          assert(!was && now && !f);\n\
          int e = 99;\n\
          bool okc = __atomic_compare_exchange_n(&x, &e, 1, 0, 5, 0);\n\
          assert(!okc && e == 5);\n\
          okc = __atomic_compare_exchange_n(&x, &e, 1, 0, 5, 0);\n\
          assert(okc && x == 1);\n\
          int old = __sync_val_compare_and_swap(&x, 1, 7);\n\
          bool s = __sync_bool_compare_and_swap(&x, 1, 8);\n\
          assert(old == 1 && !s && x == 7);\n\
          int g = __sync_fetch_and_add(&x, 3);\n\
          int h = __sync_add_and_fetch(&x, 3);\n\
          int k = __sync_nand_and_fetch(&x, 5);\n\
          int m = __sync_lock_test_and_set(&x, 1);\n\
          __sync_lock_release(&x);\n\
          assert(g == 7 && h == 13 && k == -6 && m == -6 && x == 0);\n\
          int r = 0, v = 4, z = 9, prev = 0;\n\
          __atomic_store(&x, &v, __ATOMIC_RELAXED);\n\
          __atomic_load(&x, &r, __ATOMIC_RELAXED);\n\
          __atomic_exchange(&x, &z, &prev, __ATOMIC_RELAXED);\n\
          assert(r == 4 && prev == 4 && x == 9);\n\
          int d = 10, e2 = 9;\n\
          bool ok2 = __atomic_compare_exchange(&x, &e2, &d, 0, __ATOMIC_SEQ_CST, 5);\n\
          assert(ok2 && x == 10 && __atomic_load_n(&x, 0) == 10);\n\
          return 0;\n\
        }\n";
    assert_eq!(run(src), (1, 0));
    for (good, bad) in [
        ("a == 12 && b == -4", "a == 12 && b == -3"),
        ("h == 13 && k == -6", "h == 13 && k == -5"),
        ("!okc && e == 5", "!okc && e == 99"),
        ("old == 1 && !s", "old == 7 && !s"),
        ("!was && now", "!was && !now"),
    ] {
        assert_eq!(run(&src.replace(good, bad)), (1, 1), "{bad}");
    }
}

/// `__sync_*` read-modify-writes are full barriers: seq_cst fences around a seq_cst RMW or
/// CAS, in the call's own statement (which a fix never strengthens: they are seq_cst).
#[test]
fn sync_builtins_are_full_barriers() {
    let p = ok("int x;\nint main(void) {\n\
                int r = __sync_fetch_and_sub(&x, 1);\n\
                if (__sync_bool_compare_and_swap(&x, r, 0)) r = 1;\n\
                return 0;\n}\n");
    let m = &p.functions[p.main];
    let kinds: Vec<String> = m
        .body
        .iter()
        .zip(&m.stmt_of)
        .filter_map(|(i, s)| {
            let what = match i {
                Instr::Fence { order } => format!("F{order}"),
                Instr::Rmw { op, order, .. } => format!("{op:?}{order}"),
                Instr::Cas {
                    order, fail_order, ..
                } => format!("Cas{order}/{fail_order}"),
                _ => return None,
            };
            Some(format!("{what}@{}", p.stmts[*s].span.line))
        })
        .collect();
    assert_eq!(
        kinds,
        ["Fsc@3", "Subsc@3", "Fsc@3", "Fsc@4", "Cassc/sc@4", "Fsc@4"]
    );
    assert!(p.stmts.iter().all(|s| s.order_span.is_none()));
}

#[test]
fn signal_fences_have_no_effect() {
    for call in [
        "__atomic_signal_fence(__ATOMIC_SEQ_CST);",
        "atomic_signal_fence(memory_order_seq_cst);",
    ] {
        let p = ok(&format!(
            "#include <stdatomic.h>\nint main(void) {{\n{call}\nreturn 0;\n}}\n"
        ));
        let code = main_instrs(&p);
        assert_eq!(code, [Instr::Return], "{call}");
        assert!(p.stmts.iter().all(|s| s.kind == StmtKind::Local), "{call}");
    }
    let p = ok_cpp("#include <atomic>\nint main() {\n    std::atomic_signal_fence(std::memory_order_seq_cst);\n}\n");
    assert_eq!(main_instrs(&p), [Instr::Return]);
}

/// Memory orders: `__ATOMIC_*`, their values 0..5 (also through a macro), C's names.
#[test]
fn builtin_memory_order_spellings() {
    let order_of = |mo: &str| -> MemOrder {
        let p = ok(&format!(
            "#include <stdatomic.h>\n#define MO_ACQ __ATOMIC_ACQUIRE\n#define TWO 2\nint x;\n\
             int main(void) {{ int r = __atomic_load_n(&x, {mo}); return 0; }}\n"
        ));
        match main_instrs(&p).as_slice() {
            [Instr::Load { order, .. }, ..] => *order,
            other => panic!("{other:?}"),
        }
    };
    for (mo, want) in [
        ("__ATOMIC_RELAXED", MemOrder::Relaxed),
        ("(__ATOMIC_ACQUIRE)", MemOrder::Acquire),
        ("__ATOMIC_CONSUME", MemOrder::Acquire),
        ("5", MemOrder::SeqCst),
        ("0", MemOrder::Relaxed),
        ("1 + 1", MemOrder::Acquire),
        ("MO_ACQ", MemOrder::Acquire),
        ("TWO", MemOrder::Acquire),
        ("memory_order_acquire", MemOrder::Acquire),
        ("memory_order_seq_cst", MemOrder::SeqCst),
    ] {
        assert_eq!(order_of(mo), want, "{mo}");
    }
    // The macros are integers wherever a constant is.
    let p =
        ok("int a[__ATOMIC_SEQ_CST];\nint main(void) { int r = __ATOMIC_RELEASE; return 0; }\n");
    assert_eq!(p.globals.len(), 5);
}

#[test]
fn invalid_builtin_orders_are_errors() {
    use DiagKind::*;
    let at = |body: &str| {
        diag(&format!(
            "int x;\nint main(void) {{\n  int e = 0, o = 2;\n  {body}\n  return 0;\n}}\n"
        ))
    };
    let cases: &[(&str, usize, &str, DiagKind)] = &[
        (
            "__atomic_store_n(&x, 1, __ATOMIC_ACQUIRE);",
            27,
            "__ATOMIC_ACQUIRE is not valid for a store",
            Error,
        ),
        (
            "__atomic_store_n(&x, 1, __ATOMIC_CONSUME);",
            27,
            "__ATOMIC_CONSUME is not valid for a store",
            Error,
        ),
        (
            "__atomic_load_n(&x, __ATOMIC_RELEASE);",
            23,
            "__ATOMIC_RELEASE is not valid for a load",
            Error,
        ),
        (
            "__atomic_load_n(&x, 4);",
            23,
            "`4` (__ATOMIC_ACQ_REL) is not valid for a load",
            Error,
        ),
        (
            "__atomic_clear(&x, __ATOMIC_ACQUIRE);",
            3,
            "`__atomic_clear` on an object of type int (it sets or clears one byte: only bool \
             and char objects are supported)",
            Unsupported,
        ),
        (
            "__atomic_compare_exchange_n(&x, &e, 1, 0, 5, __ATOMIC_RELEASE);",
            48,
            "__ATOMIC_RELEASE is not valid for the failure order of a compare-exchange",
            Error,
        ),
        (
            "__atomic_load_n(&x, 6);",
            23,
            "6 is not a memory order (__ATOMIC_* values are 0 to 5)",
            Error,
        ),
        (
            "__atomic_load_n(&x, o);",
            23,
            "a memory order that is not an integer constant",
            Unsupported,
        ),
        (
            "__atomic_load_n(&x, memory_order_bogus);",
            23,
            "memory order argument must be a `memory_order_*` constant",
            Unsupported,
        ),
    ];
    for &(body, col, msg, kind) in cases {
        assert_eq!(at(body), (4, col, kind, msg.to_string()), "{body}");
    }
}

#[test]
fn builtin_refusals() {
    use DiagKind::*;
    let at = |body: &str| {
        diag(&format!(
            "#include <pthread.h>\nstruct s {{ int a; }} st;\nint x;\nunsigned char uc;\n\
             pthread_mutex_t m;\nint g;\nint main(void) {{\n  int e = 0; long l = 0;\n  {body}\n  \
             return 0;\n}}\n"
        ))
    };
    let cases: &[(&str, usize, &str, DiagKind)] = &[
        (
            "__atomic_load_n(x, 0);",
            19,
            "`__atomic_load_n` takes a pointer: pass the address `&x`",
            Error,
        ),
        (
            "__atomic_load(&x, &g, 0);",
            21,
            "the result of `__atomic_load` must be given as `&local` (the address of a local \
             variable of the object's type)",
            Unsupported,
        ),
        (
            "__atomic_load(&x, &l, 0);",
            22,
            "`l` has type long, not int (the type of the object of `__atomic_load`)",
            Unsupported,
        ),
        (
            "__atomic_compare_exchange_n(&x, e, 1, 0, 5, 5);",
            35,
            "the expected value of `__atomic_compare_exchange_n` must be given as `&local` (the \
             address of a local variable of the object's type)",
            Unsupported,
        ),
        (
            "__atomic_compare_exchange_n(&x, &e, 1, g, 5, 5);",
            42,
            "the weak flag of a compare-exchange that is not an integer constant",
            Unsupported,
        ),
        (
            "__atomic_store_n(&m, 1, 0);",
            20,
            "`__atomic_store_n` on a mutex (a mutex is not an integer)",
            Error,
        ),
        (
            "__atomic_store_n(&st, 1, 0);",
            20,
            "`__atomic_store_n` on an object of type struct s (not an integer or pointer)",
            Unsupported,
        ),
        (
            "int r = __atomic_fetch_max(&x, 1, 0);",
            11,
            "call to `__atomic_fetch_max` (not a supported atomic builtin: the __atomic_* and \
             __sync_* operations GCC documents for integers and pointers are)",
            Unsupported,
        ),
        (
            "__atomic_always_lock_free(4, 0);",
            3,
            "call to `__atomic_always_lock_free` (not a supported atomic builtin: the \
             __atomic_* and __sync_* operations GCC documents for integers and pointers are)",
            Unsupported,
        ),
        (
            "int r = __atomic_store_n(&x, 1, 0);",
            11,
            "`__atomic_store_n` returns void: its value cannot be used",
            Error,
        ),
        (
            "e = __sync_synchronize();",
            7,
            "`__sync_synchronize` returns void: its value cannot be used",
            Error,
        ),
        (
            "__atomic_load_n(&x);",
            3,
            "`__atomic_load_n` expects 2 arguments, got 1",
            Error,
        ),
        (
            "__sync_fetch_and_add(&x, 1, x);",
            3,
            "`__sync_fetch_and_add` expects 2 arguments, got 3",
            Error,
        ),
    ];
    for &(body, col, msg, kind) in cases {
        assert_eq!(at(body), (9, col, kind, msg.to_string()), "{body}");
    }
}

/// A builtin on a parameter (a register) is refused; on a local it makes the local an object
/// in memory (its address is taken), which the builtin accesses.
#[test]
fn builtins_on_locals_and_parameters() {
    let (line, col, kind, msg) = diag(
        "static int get(int v) {\n  return __atomic_load_n(&v, __ATOMIC_RELAXED);\n}\n\
         int main(void) { return get(1); }\n",
    );
    assert_eq!(
        (line, col, kind, msg.as_str()),
        (
            2,
            26,
            DiagKind::Unsupported,
            "`__atomic_load_n` on `v`, which is not in memory (a parameter lives in a register: \
             copy it to a local variable)"
        )
    );
    let src = "int main(void) {\n  int flag = 0, e = 0;\n  __atomic_store_n(&flag, 1, 3);\n  \
               bool ok = __atomic_compare_exchange_n(&flag, &e, 2, 0, 5, 5);\n  \
               assert(!ok && e == 1 && __atomic_load_n(&flag, 2) == 1);\n  return 0;\n}\n";
    let p = ok(src);
    assert!(main_instrs(&p).iter().any(|i| matches!(
        i,
        Instr::Store {
            loc: Addr::Within { .. },
            order: MemOrder::Release,
            ..
        }
    )));
    assert_eq!(run(src), (1, 0));
    assert_eq!(run(&src.replace("e == 1", "e == 0")), (1, 1));
}

/// C++ has the same builtins, lowered the same way.
#[test]
fn builtins_in_cpp() {
    let body = "int r = __atomic_load_n(&x, __ATOMIC_ACQUIRE);\n\
                __atomic_store_n(&x, r + 1, __ATOMIC_RELEASE);\n\
                r = __sync_fetch_and_add(&x, 1);\n\
                __atomic_thread_fence(std::memory_order_seq_cst);\n";
    let c = ok(&format!("int x;\nint main(void) {{\n{body}return 0;\n}}\n").replace("std::", ""));
    let cpp = ok_cpp(&format!(
        "#include <atomic>\nint x;\nint main() {{\n{body}return 0;\n}}\n"
    ));
    assert_eq!(main_instrs(&c), main_instrs(&cpp));
}

/// A spin on `__atomic_load_n` is an await loop (GenMC's spin-assume), like one on
/// `atomic_load_explicit`; a loop whose condition is an RMW is an ordinary loop.
#[test]
fn await_loops_on_builtin_loads() {
    let p = ok("int flag;\nint main(void) {\n\
                while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))\n    ;\n\
                return 0;\n}\n");
    let code = main_instrs(&p);
    assert!(
        matches!(
            code.as_slice(),
            [
                Instr::LoopEnter { .. },
                Instr::Load {
                    order: MemOrder::Acquire,
                    ..
                },
                Instr::Assume { .. },
                Instr::Return
            ]
        ),
        "{code:?}"
    );
    let p = ok("int flag;\nint main(void) {\n\
                while (__sync_lock_test_and_set(&flag, 1))\n    ;\n\
                return 0;\n}\n");
    let code = main_instrs(&p);
    assert!(
        code.iter().any(|i| matches!(i, Instr::LoopIter { .. })),
        "{code:?}"
    );
}
