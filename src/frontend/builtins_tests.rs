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
