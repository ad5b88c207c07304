//! Tests of the C++ front end (see `tests.rs` for the C front end): every C++ construct lowers
//! to the same IR as its C counterpart, and every refused construct is `unsupported` at the
//! right line and column.

use super::*;
use crate::ir::*;

const HEAD_C: &str = "#include <stdatomic.h>\n#include <pthread.h>\n#include <assert.h>\n";
const HEAD_CPP: &str =
    "#include <atomic>\n#include <thread>\n#include <mutex>\n#include <cassert>\n";

fn ok_c(src: &str) -> Program {
    let p = parse_c("t.c", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn ok(src: &str) -> Program {
    let p = parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    assert_eq!(p.lang, Lang::Cpp);
    p
}

/// `(line, column, kind, message)` of the diagnostic for the C++ program `src`.
fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_cpp("t.cpp", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// Checks that `src` is refused as unsupported at `line:col` with a message containing `what`;
/// returns the mismatch otherwise.
fn refusal(src: &str, line: usize, col: usize, what: &str) -> Option<String> {
    let (l, c, k, m) = match parse_cpp("t.cpp", src) {
        Ok(_) => return Some(format!("accepted:\n{src}")),
        Err(e) => (e.line, e.column, e.kind, e.message),
    };
    ((l, c, k) != (line, col, DiagKind::Unsupported) || !m.contains(what)).then(|| {
        format!("got {l}:{c}: {k}: {m}\n  want {line}:{col}: unsupported: …{what}…\n{src}")
    })
}

fn func<'p>(p: &'p Program, name: &str) -> &'p Function {
    p.functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The memory instructions of `f` and their kinds, orders and locations (by name), without
/// registers: what must agree between a C++ construct and its C counterpart.
fn shape(p: &Program, f: &Function) -> Vec<String> {
    let g = |loc: &Addr| match loc {
        Addr::Fixed(l) => p.globals[*l].name.clone(),
        Addr::Computed { .. } => "<computed>".to_string(),
    };
    f.body
        .iter()
        .filter_map(|i| {
            Some(match i {
                Instr::Load { loc, order, .. } => format!("load {} {order}", g(loc)),
                Instr::Store { loc, val, order } => {
                    let v = match val {
                        Expr::Const(c) => c.to_string(),
                        _ => "e".into(),
                    };
                    format!("store {} {v} {order}", g(loc))
                }
                Instr::Rmw { loc, op, order, .. } => format!("rmw {} {op:?} {order}", g(loc)),
                Instr::Cas {
                    loc,
                    order,
                    fail_order,
                    ..
                } => format!("cas {} {order} {fail_order}", g(loc)),
                Instr::Fence { order } => format!("fence {order}"),
                Instr::Assume { .. } => "assume".into(),
                Instr::Assert { .. } => "assert".into(),
                Instr::Spawn { func, .. } => format!("spawn {}", p.functions[*func].name),
                Instr::Join { .. } => "join".into(),
                Instr::Return => "return".into(),
                Instr::BranchIfZero { .. } => "branch".into(),
                Instr::Jump { .. } => "jump".into(),
                Instr::LoopHead { .. } => "loop".into(),
                Instr::Assign { .. } | Instr::Slot(_) => return None,
            })
        })
        .collect()
}

/// The shape of thread function `t` in a C program with globals `globals` and body `c_body`,
/// and in a C++ program with globals `cpp_globals` and body `cpp_body`.
fn both(
    c_globals: &str,
    c_body: &str,
    cpp_globals: &str,
    cpp_body: &str,
) -> (Vec<String>, Vec<String>) {
    let c = format!(
        "{HEAD_C}{c_globals}\nvoid *t(void *arg) {{\n{c_body}\nreturn NULL;\n}}\nint main(void) {{ pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL); return 0; }}\n"
    );
    let cpp = format!(
        "{HEAD_CPP}{cpp_globals}\nvoid t() {{\n{cpp_body}\nreturn;\n}}\nint main() {{ std::thread h(t); h.join(); return 0; }}\n"
    );
    let (pc, pcpp) = (ok_c(&c), ok(&cpp));
    (shape(&pc, func(&pc, "t")), shape(&pcpp, func(&pcpp, "t")))
}

#[track_caller]
fn same(c_globals: &str, c_body: &str, cpp_globals: &str, cpp_body: &str) {
    let (a, b) = both(c_globals, c_body, cpp_globals, cpp_body);
    assert_eq!(a, b, "C: {c_body}\nC++: {cpp_body}");
    assert!(a.len() > 1, "nothing lowered: {a:?}");
}

const ATOMIC_C: &str = "atomic_int x; int g;";
const ATOMIC_CPP: &str = "std::atomic<int> x; int g;";

#[test]
fn lang_from_path() {
    use std::path::Path;
    for f in [
        "a.cpp",
        "a.cc",
        "a.cxx",
        "a.c++",
        "a.hpp",
        "a.hh",
        "a.C",
        "d/x.y.cpp",
    ] {
        assert_eq!(Lang::from_path(Path::new(f)), Lang::Cpp, "{f}");
    }
    for f in ["a.c", "a.h", "a", "a.txt", "a.CPP.c"] {
        assert_eq!(Lang::from_path(Path::new(f)), Lang::C, "{f}");
    }
}

#[test]
fn member_loads_and_stores_lower_like_the_c_calls() {
    same(
        ATOMIC_C,
        "atomic_store_explicit(&x, 1, memory_order_release); g = atomic_load_explicit(&x, memory_order_acquire); atomic_store(&x, 2); g = atomic_load(&x);",
        ATOMIC_CPP,
        "x.store(1, std::memory_order_release); g = x.load(std::memory_order::acquire); x.store(2); g = x.load();",
    );
    // Unqualified orders (using namespace std) and `memory_order::x`; consume is acquire.
    same(
        ATOMIC_C,
        "atomic_store_explicit(&x, 1, memory_order_relaxed); g = atomic_load_explicit(&x, memory_order_acquire);",
        &format!("using namespace std;\n{ATOMIC_CPP}"),
        "x.store(1, memory_order_relaxed); g = x.load(memory_order::consume);",
    );
    // Implicit conversions: seq_cst loads and stores, as for C atomics read by name.
    same(
        ATOMIC_C,
        "x = 3; g = x; if (x == 1) g = 2;",
        ATOMIC_CPP,
        "x = 3; g = x; if (x == 1) g = 2;",
    );
}

#[test]
fn member_rmws_lower_like_the_c_calls() {
    same(
        ATOMIC_C,
        "g = atomic_exchange_explicit(&x, 1, memory_order_acq_rel); atomic_fetch_add(&x, 2); atomic_fetch_sub_explicit(&x, 1, memory_order_release); atomic_fetch_and(&x, 3); atomic_fetch_or(&x, 4); g = atomic_fetch_xor_explicit(&x, 5, memory_order_relaxed); x++; ++x; x--; x += 2; x -= 1; x |= 8;",
        ATOMIC_CPP,
        "g = x.exchange(1, std::memory_order_acq_rel); x.fetch_add(2); x.fetch_sub(1, std::memory_order::release); x.fetch_and(3); x.fetch_or(4); g = x.fetch_xor(5, std::memory_order_relaxed); x++; ++x; x--; x += 2; x -= 1; x |= 8;",
    );
    // The std:: free functions are the C functions.
    same(
        ATOMIC_C,
        "atomic_fetch_add_explicit(&x, 1, memory_order_relaxed); g = atomic_load(&x);",
        ATOMIC_CPP,
        "std::atomic_fetch_add_explicit(&x, 1, std::memory_order_relaxed); g = std::atomic_load(&x);",
    );
}

#[test]
fn compare_exchange_orders() {
    let cas = |c_args: &str, cpp_args: &str, want: &str| {
        let (a, b) = both(
            ATOMIC_C,
            &format!("int e = 0; g = atomic_compare_exchange_strong_explicit(&x, &e, 1{c_args});"),
            ATOMIC_CPP,
            &format!("int e = 0; g = x.compare_exchange_weak(e, 1{cpp_args});"),
        );
        assert_eq!(a, b, "{cpp_args}");
        assert!(b.contains(&want.to_string()), "{b:?} lacks {want}");
    };
    cas(
        ", memory_order_seq_cst, memory_order_seq_cst",
        "",
        "cas x sc sc",
    );
    // One order: the failure order drops the release part (C++ [atomics.types.operations]).
    cas(
        ", memory_order_acq_rel, memory_order_acquire",
        ", std::memory_order_acq_rel",
        "cas x acq_rel acq",
    );
    cas(
        ", memory_order_release, memory_order_relaxed",
        ", std::memory_order_release",
        "cas x rel rlx",
    );
    cas(
        ", memory_order_acquire, memory_order_acquire",
        ", std::memory_order_acquire",
        "cas x acq acq",
    );
    cas(
        ", memory_order_release, memory_order_acquire",
        ", std::memory_order_release, std::memory_order::acquire",
        "cas x rel acq",
    );
    // The expected variable gets the old value, as in C.
    let p = ok(&format!(
        "{HEAD_CPP}{ATOMIC_CPP}\nvoid t() {{ int e = 0; bool ok = x.compare_exchange_strong(e, 1); g = e + ok; }}\nint main() {{ std::thread h(t); h.join(); }}\n"
    ));
    let f = func(&p, "t");
    let cas_at = f
        .body
        .iter()
        .position(|i| matches!(i, Instr::Cas { .. }))
        .unwrap();
    let Instr::Cas { old, .. } = f.body[cas_at] else {
        unreachable!()
    };
    assert!(matches!(
        &f.body[cas_at + 1],
        Instr::Assign { val: Expr::Reg(r), .. } if *r == old
    ));
}

#[test]
fn fences_and_their_order_span() {
    same(
        ATOMIC_C,
        "atomic_thread_fence(memory_order_release); g = 1; atomic_thread_fence(memory_order_seq_cst);",
        ATOMIC_CPP,
        "std::atomic_thread_fence(std::memory_order_release); g = 1; std::atomic_thread_fence(std::memory_order::seq_cst);",
    );
    let src = format!(
        "{HEAD_CPP}void t() {{\n    std::atomic_thread_fence(std::memory_order::acquire);\n}}\nint main() {{ std::thread h(t); h.join(); }}\n"
    );
    let p = ok(&src);
    let s = p.stmts.iter().find(|s| s.kind == StmtKind::Fence).unwrap();
    let span = s.order_span.unwrap();
    assert_eq!(&src[span.start..span.end], "std::memory_order::acquire");
}

#[test]
fn mutex_members_lower_like_pthread_mutexes() {
    same(
        "pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; int g;",
        "pthread_mutex_lock(&m); g = 1; pthread_mutex_unlock(&m); if (pthread_mutex_trylock(&m) == 0) pthread_mutex_unlock(&m);",
        "std::mutex m; int g;",
        "m.lock(); g = 1; m.unlock(); if (m.try_lock()) m.unlock();",
    );
    let (_, b) = both(
        "int g;",
        "g = 1;",
        "std::mutex m; int g;",
        "m.lock(); g = 1; m.unlock();",
    );
    assert_eq!(
        b,
        [
            "cas m acq rlx",
            "assume",
            "store g 1 na",
            "store m 0 rel",
            "return"
        ]
    );
}

#[test]
fn lock_guards_unlock_at_every_exit() {
    // End of block, inner block, break and continue: every exit from the guarded scope unlocks.
    same(
        "pthread_mutex_t m; int g;",
        "pthread_mutex_lock(&m); g = 1; { pthread_mutex_lock(&m); g = 2; pthread_mutex_unlock(&m); } pthread_mutex_unlock(&m);",
        "std::mutex m; int g;",
        "{ std::lock_guard<std::mutex> l(m); g = 1; { std::unique_lock<std::mutex> u{m}; g = 2; } }",
    );
    same(
        "pthread_mutex_t m; int g;",
        "for (int i = 0; i < 3; i++) { pthread_mutex_lock(&m); if (i == 1) { pthread_mutex_unlock(&m); break; } if (i == 0) { pthread_mutex_unlock(&m); continue; } g = i; pthread_mutex_unlock(&m); }",
        "std::mutex m; int g;",
        "for (int i = 0; i < 3; i++) { std::scoped_lock l(m); if (i == 1) break; if (i == 0) { continue; } g = i; }",
    );
    // A break of a switch inside the guarded block unlocks nothing: the guard is outside it.
    same(
        "pthread_mutex_t m; int g;",
        "pthread_mutex_lock(&m); switch (g) { case 1: g = 2; break; default: break; } g = 3; pthread_mutex_unlock(&m);",
        "std::mutex m; int g;",
        "{ std::lock_guard g2(m); switch (g) { case 1: g = 2; break; default: break; } g = 3; }",
    );
}

#[test]
fn lock_guards_unlock_on_return() {
    // In a thread function: after the returned value's loads, before the return.
    let (_, b) = both(
        "int g;",
        "g = 1;",
        "std::mutex m; int g;",
        "std::lock_guard<std::mutex> l(m); if (g == 1) return; g = 2;",
    );
    assert_eq!(
        b,
        [
            "cas m acq rlx",
            "assume",
            "load g na",
            "branch",
            "store m 0 rel",
            "return",
            "store g 2 na",
            "store m 0 rel",
            "return",
        ]
    );
    // In an inlined function: the value first, then the unlock, then the jump to the end.
    let p = ok(&format!(
        "{HEAD_CPP}std::mutex m; int c;\nint bump() {{ std::lock_guard<std::mutex> l(m); c = c + 1; return c; }}\nvoid t() {{ int r = bump(); c = r; }}\nint main() {{ std::thread h(t); h.join(); }}\n"
    ));
    assert_eq!(
        shape(&p, func(&p, "t")),
        [
            "cas m acq rlx",
            "assume",
            "load c na",
            "store c e na",
            "load c na",
            "store m 0 rel",
            "jump",
            "store c e na",
            "return"
        ]
    );
    // The unlocks belong to the guard's declaration (its destructor).
    let f = func(&p, "t");
    let unlock = f
        .body
        .iter()
        .position(|i| {
            matches!(
                i,
                Instr::Store {
                    val: Expr::Const(0),
                    order: MemOrder::Release,
                    ..
                }
            )
        })
        .unwrap();
    let lock = f
        .body
        .iter()
        .position(|i| matches!(i, Instr::Cas { .. }))
        .unwrap();
    assert_eq!(f.stmt_of[unlock], f.stmt_of[lock]);
}

#[test]
fn threads_lower_like_pthreads() {
    let c = format!(
        "{HEAD_C}atomic_int x;\nvoid *f(void *arg) {{ atomic_store(&x, 1); return NULL; }}\nvoid *k(void *arg) {{ int v = (int)(long)arg; atomic_store(&x, v); return NULL; }}\nint main(void) {{ pthread_t a, b, c, d; pthread_create(&a, NULL, f, NULL); pthread_create(&b, NULL, f, NULL); pthread_create(&c, NULL, k, (void *)3); int one = 1; pthread_create(&d, NULL, k, (void *)(long)one); pthread_join(a, NULL); pthread_join(b, NULL); pthread_join(c, NULL); pthread_join(d, NULL); return 0; }}\n"
    );
    let cpp = format!(
        "{HEAD_CPP}std::atomic<int> x;\nvoid f() {{ x.store(1); }}\nvoid k(int v) {{ x.store(v); }}\nint main() {{ std::thread a(f); std::thread b{{f}}; std::thread c(k, 3); int one = 1; std::thread d(k, one); a.join(); b.join(); c.join(); d.join(); return 0; }}\n"
    );
    let (pc, pcpp) = (ok_c(&c), ok(&cpp));
    let main_c = &pc.functions[pc.main];
    let main_cpp = &pcpp.functions[pcpp.main];
    assert_eq!(shape(&pc, main_c), shape(&pcpp, main_cpp));
    assert!(func(&pcpp, "k").param.is_some());
    // The arguments: 0 for f, 3 and `one` for k.
    let args: Vec<&Expr> = main_cpp
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Spawn { arg, .. } => Some(arg),
            _ => None,
        })
        .collect();
    assert_eq!(
        args[..3],
        [&Expr::Const(0), &Expr::Const(0), &Expr::Const(3)]
    );
    assert!(matches!(args[3], Expr::Reg(_)));
}

#[test]
fn lambdas_are_thread_functions() {
    let p = ok(&format!(
        "{HEAD_CPP}std::atomic<int> x;\nint main() {{\n    int v = 2;\n    std::thread a([] {{ x.store(1); }});\n    std::thread b([&]() {{ x.store(2); }});\n    std::thread c([v] {{ x.store(v); }});\n    std::thread d([=]() mutable {{ x.store(v + 1); }});\n    std::thread e([](int k) -> void {{ x.store(k); }}, 5);\n    a.join(); b.join(); c.join(); d.join(); e.join();\n}}\n"
    ));
    let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "main",
            "lambda@8:19",
            "lambda@9:19",
            "lambda@10:19",
            "lambda@11:19",
            "lambda@12:19"
        ]
    );
    let main = &p.functions[p.main];
    let spawns: Vec<(FuncId, &Expr)> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Spawn { func, arg, .. } => Some((*func, arg)),
            _ => None,
        })
        .collect();
    assert_eq!(spawns.len(), 5);
    assert_eq!(spawns[0].1, &Expr::Const(0));
    assert!(matches!(spawns[2].1, Expr::Reg(_)), "captured v is passed");
    assert!(matches!(spawns[3].1, Expr::Reg(_)), "[=] captures v");
    assert_eq!(spawns[4].1, &Expr::Const(5));
    for (i, (fid, _)) in spawns.iter().enumerate() {
        let f = &p.functions[*fid];
        assert_eq!(f.param.is_some(), i >= 2, "{}", f.name);
        assert_eq!(shape(&p, f)[0].split(' ').next(), Some("store"));
        // The lambda's statements and slots belong to it.
        for s in &f.stmt_of {
            assert_eq!(p.stmts[*s].func, *fid);
        }
    }
}

#[test]
fn globals_and_initialisers() {
    let p = ok(&format!(
        "{HEAD_CPP}using namespace std;\nstd::atomic<int> a;\nstd::atomic<int> b{{1}};\nstd::atomic<int> c(2);\nstd::atomic<int> d = 3;\nstd::atomic_int e{{}};\natomic<bool> f{{true}};\nstd::atomic<long> g(-4);\nstd::atomic<unsigned> h = -1;\nint i = 5;\nint j{{6}};\nbool k = true;\nstd::mutex m;\nmutex n;\nstd::size_t s{{7}};\nint main() {{ return 0; }}\n"
    ));
    let got: Vec<(&str, bool, i64, bool)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.atomic, g.init, g.mutex))
        .collect();
    assert_eq!(
        got,
        [
            ("a", true, 0, false),
            ("b", true, 1, false),
            ("c", true, 2, false),
            ("d", true, 3, false),
            ("e", true, 0, false),
            ("f", true, 1, false),
            ("g", true, -4, false),
            ("h", true, 4294967295, false),
            ("i", false, 5, false),
            ("j", false, 6, false),
            ("k", false, 1, false),
            ("m", true, 0, true),
            ("n", true, 0, true),
            ("s", false, 7, false),
        ]
    );
}

#[test]
fn await_loops_on_member_loads() {
    // `while (f.load(...) == 0);` is an await loop (an assume, no loop head), as in C.
    same(
        "atomic_int f; int g;",
        "while (atomic_load_explicit(&f, memory_order_acquire) == 0); g = 1;",
        "std::atomic<int> f; int g;",
        "while (f.load(std::memory_order_acquire) == 0); g = 1;",
    );
    let (_, b) = both(
        "int g;",
        "g = 1;",
        "std::atomic<int> f; int g;",
        "while (std::atomic_load(&f) == 0) {} g = 1;",
    );
    assert!(!b.contains(&"loop".to_string()), "{b:?}");
}

#[test]
fn cpp_fences_are_rewritten_in_cpp() {
    use crate::rewrite::{apply, fence_edits};
    use crate::trace::Site;
    let src = format!(
        "{HEAD_CPP}std::atomic<int> x;\nvoid t() {{\n    x.store(1, std::memory_order_relaxed);\n    if (x.load() == 1)\n        x.store(2);\n    std::atomic_thread_fence(std::memory_order::acquire);\n}}\nint main() {{ std::thread h(t); h.join(); }}\n"
    );
    let p = ok(&src);
    let slot = |want: &str| {
        p.slots
            .iter()
            .position(|s| match s.place {
                SlotPlace::Before { stmt } => src[p.stmts[stmt].span.start..].starts_with(want),
                _ => false,
            })
            .unwrap()
    };
    let fence = p
        .stmts
        .iter()
        .position(|s| s.kind == StmtKind::Fence)
        .unwrap();
    let fences = [
        (Site::Slot(slot("if (x")), MemOrder::Release),
        (Site::Slot(slot("x.store(2)")), MemOrder::SeqCst),
        (Site::Existing(fence), MemOrder::SeqCst),
    ];
    let (edits, _) = fence_edits(&src, &p, &fences).unwrap();
    let out = apply(&src, &edits).unwrap();
    assert!(out.contains(
        "    std::atomic_thread_fence(std::memory_order_release);\n    if (x.load() == 1)\n        { std::atomic_thread_fence(std::memory_order_seq_cst); x.store(2); }\n    std::atomic_thread_fence(std::memory_order::seq_cst);\n"
    ), "{out}");
    assert_eq!(ok(&out).lang, Lang::Cpp);
}

#[test]
fn c_sources_are_unaffected() {
    // C++-only forms stay errors in C.
    assert!(parse_c("t.c", "std::atomic<int> x;\nint main(void) { return 0; }\n").is_err());
    assert!(parse_c("t.c", "int x{0};\nint main(void) { return 0; }\n").is_err());
    assert!(parse_c("t.c", "int main(void) { int x = {0}; return x; }\n").is_err());
}

#[test]
fn refused_constructs() {
    let mut failures = Vec::new();
    let mut refused = |src: &str, line, col, what| failures.extend(refusal(src, line, col, what));
    let main = "int main() { return 0; }\n";
    refused(
        &format!("class C {{ public: void m(); }};\n{main}"),
        1,
        1,
        "class",
    );
    refused(
        &format!("struct S {{ int a; void m(); }};\n{main}"),
        1,
        1,
        "struct",
    );
    refused(
        &format!("template <class T> T id(T a) {{ return a; }}\n{main}"),
        1,
        1,
        "template",
    );
    refused(
        &format!("namespace foo {{ int x; }}\n{main}"),
        1,
        1,
        "namespace",
    );
    refused(
        &format!("using std::atomic;\n{main}"),
        1,
        1,
        "using namespace std",
    );
    refused(
        &format!("using namespace foo;\n{main}"),
        1,
        1,
        "using namespace std",
    );
    refused(
        "int main() {\n    int *p = new int;\n    return 0;\n}\n",
        2,
        14,
        "`new`",
    );
    refused(
        "int main() {\n    int r = 1 + new int;\n    return 0;\n}\n",
        2,
        17,
        "`new`",
    );
    refused("int g;\nint main() {\n    delete g;\n}\n", 3, 5, "`delete`");
    refused(
        "int g;\nint main() {\n    int &r = g;\n}\n",
        3,
        9,
        "reference",
    );
    refused(
        "int main() {\n    try { } catch (...) { }\n}\n",
        2,
        5,
        "exceptions",
    );
    refused("int main() {\n    throw 1;\n}\n", 2, 5, "exceptions");
    refused(
        "int main() {\n    std::atomic_signal_fence(std::memory_order_seq_cst);\n}\n",
        2,
        5,
        "signal fence",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread t(f);\n    t.detach();\n}\n",
        4,
        5,
        "detach",
    );
    refused(
        "void f() {}\nint main() {\n    auto r = std::async(f);\n}\n",
        3,
        5,
        "auto",
    );
    refused(
        "void f() {}\nint main() {\n    std::async(f);\n}\n",
        3,
        5,
        "std::async",
    );
    refused(
        &format!("std::condition_variable cv;\n{main}"),
        1,
        1,
        "std::condition_variable",
    );
    refused(
        "int main() {\n    std::condition_variable cv;\n}\n",
        2,
        5,
        "std::condition_variable",
    );
    refused(
        "int main() {\n    int i = 0;\n    std::thread t([&i] { });\n    t.join();\n}\n",
        3,
        21,
        "by reference",
    );
    refused(
        "std::atomic<int> x;\nint main() {\n    int i = 0;\n    std::thread t([&] { x.store(i); });\n    t.join();\n}\n",
        4,
        33,
        "by reference",
    );
    refused(
        "int main() {\n    int i = 0, j = 1;\n    std::thread t([i, j] { });\n    t.join();\n}\n",
        3,
        19,
        "more than one value",
    );
    refused(
        "void f() {}\nstd::thread t(f);\nint main() { }\n",
        2,
        1,
        "global std::thread",
    );
    refused(
        "void f() {}\nvoid g() {\n    std::thread t(f);\n    t.join();\n}\nint main() { g(); }\n",
        3,
        5,
        "outside main",
    );
    refused(
        "int main() {\n    std::thread t;\n}\n",
        2,
        17,
        "without a thread function",
    );
    refused(
        "void f(int *p) {}\nint main() {\n    std::thread t(f, 1);\n    t.join();\n}\n",
        1,
        1,
        "void f(int)",
    );
    refused(
        "std::mutex m;\nint main() {\n    std::lock_guard<std::mutex> g(m);\n    g.unlock();\n}\n",
        4,
        5,
        "lock guard `g`",
    );
    refused(
        "std::mutex m;\nint main() {\n    std::unique_lock<std::mutex> g(m, std::defer_lock);\n}\n",
        3,
        39,
        "options",
    );
    refused(
        "std::mutex m, n;\nint main() {\n    std::scoped_lock g(m, n);\n}\n",
        3,
        27,
        "several mutexes",
    );
    refused(
        "std::mutex m;\nint g;\nint main() {\n    if (g)\n        std::lock_guard<std::mutex> l(m);\n}\n",
        5,
        9,
        "`std::lock_guard`",
    );
    refused(
        "std::atomic<int> x;\nint main() {\n    x.wait(0);\n}\n",
        3,
        5,
        "wait",
    );
    refused(
        "std::atomic<int *> p;\nint main() { }\n",
        1,
        1,
        "integer types only",
    );
    refused(
        "std::vector<int> v;\nint main() { }\n",
        1,
        1,
        "std::vector<int>",
    );
    refused(
        "int main() {\n    for (int v : {1, 2}) { }\n}\n",
        2,
        5,
        "range-based",
    );
    refused(
        "int main() {\n    if (int k = 1) { }\n}\n",
        2,
        9,
        "declaration in a condition",
    );
    refused(
        "int g;\nint main() {\n    g = static_cast<int>(1);\n}\n",
        3,
        9,
        "static_cast",
    );
    refused("int main() {\n    auto f = [] { };\n}\n", 2, 5, "auto");
    refused(
        "int g;\nint main() {\n    g = [] { return 1; }();\n}\n",
        3,
        9,
        "lambda",
    );
    refused(
        "int main() {\n    std::this_thread::yield();\n}\n",
        2,
        5,
        "std::this_thread::yield",
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_in_cpp_forms() {
    let e = |src: &str| {
        let (l, c, k, m) = diag(src);
        assert_eq!(k, DiagKind::Error, "{m}");
        (l, c, m)
    };
    let (l, c, m) = e("int x;\nint main() {\n    x.store(1);\n}\n");
    assert_eq!((l, c), (3, 5));
    assert!(m.contains("not atomic"), "{m}");
    let (l, c, m) =
        e("std::atomic<int> x;\nint main() {\n    x.store(1, std::memory_order_acquire);\n}\n");
    assert_eq!((l, c), (3, 16));
    assert!(m.contains("not valid for a store"), "{m}");
    let (_, _, m) =
        e("std::atomic<int> x;\nint main() {\n    x.load(std::memory_order_release);\n}\n");
    assert!(m.contains("not valid for a load"), "{m}");
    let (_, _, m) = e("std::atomic<int> x;\nint main() {\n    int e = 0;\n    x.compare_exchange_strong(e, 1, std::memory_order_seq_cst, std::memory_order_release);\n}\n");
    assert!(m.contains("failure order"), "{m}");
    let (_, _, m) = e("void f(int a) {}\nint main() {\n    std::thread t(f);\n    t.join();\n}\n");
    assert!(m.contains("expects one argument"), "{m}");
    let (_, _, m) = e("void f() {}\nint main() {\n    std::thread t(f, 1);\n    t.join();\n}\n");
    assert!(m.contains("takes no argument"), "{m}");
    let (_, _, m) = e("int main() {\n    std::thread t(nothing);\n}\n");
    assert!(m.contains("undeclared"), "{m}");
    let (_, _, m) = e("int g;\nint main() {\n    std::lock_guard<std::mutex> l(g);\n}\n");
    assert!(m.contains("not a std::mutex"), "{m}");
    let (l, c, m) = e("std::atomic<int> x;\nint y = x.load();\nint main() { }\n");
    assert_eq!((l, c), (2, 9));
    assert!(m.contains("constant expression"), "{m}");
    let (_, _, m) = e("std::atomic<int> x;\nint main() {\n    x.store(1, 2, 3);\n}\n");
    assert!(m.contains("expects 1 to 2 arguments"), "{m}");
}
