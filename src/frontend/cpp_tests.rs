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
        Addr::Within { len, .. } => format!("<object of {len}>"),
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
                Instr::Check { kind, .. } => format!("check {kind:?}"),
                Instr::ThreadId { .. } => "thread id".into(),
                Instr::Nondet { lo, hi, .. } => format!("nondet {lo}..{hi}"),
                Instr::Alloc { layout, .. } => format!("alloc {}", p.layouts[*layout].cells.len()),
                Instr::Free { by, .. } => format!("free {}", by.as_str()),
                Instr::ObjectCells { .. } => "cells".into(),
                Instr::Spawn { func, .. } => format!("spawn {}", p.functions[*func].name),
                Instr::Join { .. } => "join".into(),
                Instr::Return => "return".into(),
                Instr::Exit => "exit".into(),
                Instr::Cut => "cut".into(),
                Instr::BranchIfZero { .. } => "branch".into(),
                Instr::Jump { .. } => "jump".into(),
                Instr::LoopEnter { .. } => "loop".into(),
                Instr::Assign { .. } | Instr::Slot(_) | Instr::LoopIter { .. } => return None,
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
        [LOCK_M, &["store g 1 na"], UNLOCK_M, &["return"]].concat()
    );
}

/// The shape of locking the mutex `m` (see `lower/mutex.rs`): a CAS from 0 to the thread's
/// id + 1, and when it fails the checks, then (the owner locking again) a recursive relock or
/// a wait for itself, or (another thread holds it) a wait.
const LOCK_M: &[&str] = &[
    "thread id",
    "cas m acq rlx",
    "branch",
    "check Misuse",
    "check Misuse",
    "branch",
    "load m#kind rlx",
    "branch",
    "rmw m Add rlx",
    "jump",
    "load m rlx",
    "assume",
];

/// The shape of unlocking the mutex `m`: a release CAS from the thread's id + 1 to 0, and
/// when it fails the checks (the owner's among them) and a recursive unlock of a level.
const UNLOCK_M: &[&str] = &[
    "thread id",
    "cas m rel rlx",
    "branch",
    "check Misuse",
    "check Misuse",
    "check Misuse",
    "rmw m Sub rlx",
];

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
            LOCK_M,
            &["load g na", "branch"],
            UNLOCK_M,
            &["return", "store g 2 na"],
            UNLOCK_M,
            &["return"],
        ]
        .concat()
    );
    // In an inlined function: the value first, then the unlock, then the jump to the end.
    let p = ok(&format!(
        "{HEAD_CPP}std::mutex m; int c;\nint bump() {{ std::lock_guard<std::mutex> l(m); c = c + 1; return c; }}\nvoid t() {{ int r = bump(); c = r; }}\nint main() {{ std::thread h(t); h.join(); }}\n"
    ));
    assert_eq!(
        shape(&p, func(&p, "t")),
        [
            LOCK_M,
            &["load c na", "store c e na", "load c na"],
            UNLOCK_M,
            &["jump", "store c e na", "return"],
        ]
        .concat()
    );
    // The unlocks belong to the guard's declaration (its destructor).
    let f = func(&p, "t");
    let unlock = f
        .body
        .iter()
        .position(|i| {
            matches!(
                i,
                Instr::Cas {
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
        .map(|g| (g.name.as_str(), g.atomic, g.init, g.sync.is_some()))
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
            ("m#kind", true, 0, true),
            ("n", true, 0, true),
            ("n#kind", true, 0, true),
            ("s", false, 7, false),
        ]
    );
}

#[test]
fn await_loops_on_member_loads() {
    // `while (f.load(...) == 0);` is an await loop (an entry, an assume, no iteration), as in C.
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
    // An await loop: its entry, the load and an assume; no branch, no back jump.
    assert!(
        b.contains(&"assume".to_string()) && !b.contains(&"jump".to_string()),
        "{b:?}"
    );
}

#[test]
fn cpp_fences_are_rewritten_in_cpp() {
    use crate::rewrite::{fence_edits, files};
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
    let changed = files::apply_all(&src, &p, &edits).unwrap();
    let out = files::main_text(&src, &changed).to_string();
    assert!(out.contains(
        "    std::atomic_thread_fence(std::memory_order_release);\n    if (x.load() == 1) {\n        std::atomic_thread_fence(std::memory_order_seq_cst);\n        x.store(2);\n    }\n    std::atomic_thread_fence(std::memory_order::seq_cst);\n"
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
fn static_member_functions() {
    // Called unqualified in a member, as `C::f`, through an object (which is still
    // evaluated: the load of `p`), and from a nested class; they see the static constants
    // of their class and of the enclosing one. `friend` and a forward-declared class
    // template change nothing.
    let src = format!(
        "{HEAD_CPP}template <typename T> class box;\n\
         class C {{\n    friend class D;\n    static const int K = 3;\n    std::atomic<int> a;\n\
         public:\n    static int twice(int v) {{ return 2 * v + K - K; }}\n\
         \x20   static void put(C *c, int v) {{ c->a.store(twice(v), std::memory_order_relaxed); }}\n\
         \x20   void set(int v) {{ put(this, v); }}\n\
         \x20   struct N {{ int k; int get() {{ return C::twice(k) + K; }} }};\n}};\n\
         C c;\nC *p = &c;\nstd::atomic<int> y;\n\
         int main() {{\n    c.set(1);\n    C::put(&c, 2);\n\
         \x20   y.store(p->twice(4), std::memory_order_relaxed);\n\
         \x20   C::N n;\n    n.k = 5;\n    y.store(n.get(), std::memory_order_relaxed);\n    return 0;\n}}\n"
    );
    let p = ok(&src);
    let shape = shape(&p, func(&p, "main")).join("\n");
    // `c.set(1)` and `C::put(&c, 2)` store to the object; `p->twice(4)` reads `p` before
    // the store to `y`.
    assert_eq!(
        shape.matches("store <computed> e rlx").count(),
        2,
        "{shape}"
    );
    let read_p = shape.find("load p na").unwrap_or(usize::MAX);
    assert!(read_p < shape.find("store y").unwrap_or(0), "{shape}");
}

#[test]
fn static_data_members() {
    // A global cell per member (per instance of a class template), named `C::x`: a constant
    // initialiser is its initial value, another one runs at the start of main, in the
    // class's scope; member functions name it unqualified.
    let src = format!(
        "{HEAD_CPP}struct node {{ int v; node(int x) : v(x) {{}} }};\n\
         class C {{\n    int pad;\n    static int n;\n    static std::atomic<int> hits;\n\
         public:\n    static int get() {{ hits.fetch_add(1, std::memory_order_relaxed); return n; }}\n}};\n\
         int C::n = 3;\nstd::atomic<int> C::hits(0);\n\
         template <typename T> class q {{\n    T pad;\npublic:\n    static node *const END;\n\
         \x20   bool at_end(node *p) {{ return p == END; }}\n}};\n\
         template <typename T> node *const q<T>::END = new node(-1);\n\
         q<int> a;\n\
         int main() {{\n    assert(a.at_end(0) == false && C::get() == 3);\n    return 0;\n}}\n"
    );
    let p = ok(&src);
    let g = |name: &str| {
        p.globals
            .iter()
            .find(|g| g.name == name)
            .unwrap_or_else(|| panic!("no global {name}"))
    };
    assert_eq!(g("C::n").init, 3);
    assert!(g("C::hits").atomic && g("C::hits").init == 0);
    assert_eq!(g("q<int>::END").init, 0);
    let shape = shape(&p, func(&p, "main")).join("\n");
    // `END`'s `new node(-1)` runs in main before the assertion's reads.
    let store_end = shape.find("store q<int>::END").unwrap_or(usize::MAX);
    assert!(
        store_end < shape.find("load q<int>::END").unwrap_or(0),
        "{shape}"
    );
    let (l, c, _, m) =
        diag("struct C { int a; static int n; };\nint C::m = 3;\nint main() { return 0; }\n");
    assert_eq!((l, c), (2, 5));
    assert!(m.contains("no static data member `m`"), "{m}");
    let (l, c, _, m) = diag("struct C { int a; static int n; };\nint C::n = 3;\nint C::n = 4;\nint main() { return 0; }\n");
    assert_eq!((l, c), (3, 5));
    assert!(m.contains("redefinition of `C::n`"), "{m}");
    let (l, c, k, m) =
        diag("struct C { int a; static int n; };\nint C::n = 3;\nint main() { return C::n; }\n");
    assert_eq!((l, c, k), (3, 21, DiagKind::Unsupported));
    assert!(
        m.contains("static data member named through its class"),
        "{m}"
    );
}

#[test]
fn operators_and_copy_constructors_are_defined_but_never_called() {
    // CDSChecker's IntWrapper: a copy constructor beside `IntWrapper(int)` and an
    // `operator==`, both unused; objects are used through pointers. Accepted, and the
    // constructor of one `int` argument is the one `new IntWrapper(3)` runs.
    let src = format!(
        "{HEAD_CPP}class IntWrapper {{\npublic:\n    int _val;\n    IntWrapper(int val) : _val(val) {{}}\n\
         \x20   IntWrapper() : _val(0) {{}}\n    IntWrapper(IntWrapper &copy) : _val(copy._val) {{}}\n\
         \x20   bool operator==(const IntWrapper &rhs) {{ return false; }}\n\
         \x20   IntWrapper &operator=(const IntWrapper &o) {{ _val = o._val; return *this; }}\n\
         \x20   explicit operator bool() const {{ return _val != 0; }}\n}};\n\
         IntWrapper *k;\nint main() {{\n    k = new IntWrapper(3);\n    assert(k->_val == 3);\n    return 0;\n}}\n"
    );
    let p = ok(&src);
    let shape = shape(&p, func(&p, "main")).join("\n");
    assert!(shape.contains("store <object of 1> e na"), "{shape}");
    // A copy is refused where it is written, and so is a use of an operator.
    let copy = src
        .replace("int main() {", "IntWrapper w;\nint main() {")
        .replace("return 0;", "IntWrapper v(w);\n    return 0;");
    let (l, c, k, m) = diag(&copy);
    assert_eq!((l, c, k), (20, 18, DiagKind::Unsupported), "{m}");
    assert!(m.contains("copy of an object of class `IntWrapper`"), "{m}");
    // An assignment would call the class's `operator=` (also as a member of another struct):
    // refused, where a class without one is copied member by member.
    let assign = src
        .replace(
            "int main() {",
            "IntWrapper w;\nstruct holder { IntWrapper x; } h1, h2;\nint main() {",
        )
        .replace("return 0;", "h1 = h2;\n    return 0;");
    let (l, c, k, m) = diag(&assign);
    assert_eq!((l, c, k), (21, 5, DiagKind::Unsupported), "{m}");
    assert!(m.contains("which defines `operator=`"), "{m}");
    let plain =
        "struct P {\n    int v;\n    bool operator==(const P &o) { return v == o.v; }\n};\n\
                 P g;\nint main() {\n    P a;\n    a = g;\n    return a.v;\n}\n";
    ok(plain);
}

#[test]
fn review_cases_of_static_members_and_implicit_calls() {
    // A static member's initialiser is evaluated in the class's scope: `N` is `C::N` (5),
    // not the file's enumerator (1).
    let p = ok("enum { N = 1 };\nstruct C {\n    static const int N = 5;\n    static int x;\n    int d;\n\
                \x20   static int get() { return x; }\n};\nint C::x = N;\nint main() { return C::get(); }\n");
    assert_eq!(
        p.globals.iter().find(|g| g.name == "C::x").map(|g| g.init),
        Some(5)
    );
    // `static inline int constructed` is a variable (its name contains "const"), and
    // `const int C::K;` defines a constant initialised in the class.
    let p = ok("struct C {\n    static inline int constructed = 0;\n    static const int K = 2;\n    int d;\n\
                \x20   C() : d(0) { constructed++; }\n};\nconst int C::K;\nint main() { C a; C b; return 0; }\n");
    assert!(p.globals.iter().any(|g| g.name == "C::constructed"));
    // A static member of a nested class, defined and called as `A::B::...`.
    ok("struct A {\n    static int n;\n    int d;\n    struct B {\n        static int m;\n        int d;\n\
        \x20       static int get() { return n + m; }\n    };\n};\nint A::n = 1;\nint A::B::m = 2;\n\
        int main() { return A::B::get(); }\n");
    // Copies that would call a copy constructor, also a member's, are refused; so is `&x`
    // of an object whose class defines `operator&`.
    let (_, _, k, m) = diag("struct P {\n    int x;\n    P() : x(0) {}\n    P(const P &o) : x(o.x + 100) {}\n};\n\
                             struct Q { P p; int y; };\nint main() {\n    Q b;\n    Q a = b;\n    return a.p.x;\n}\n");
    assert_eq!(k, DiagKind::Unsupported, "{m}");
    assert!(m.contains("which has a copy constructor"), "{m}");
    let (_, _, k, m) = diag(
        "struct P {\n    int x;\n    P *operator&() { return 0; }\n};\nP g;\n\
                             int main() {\n    P *q = &g;\n    return q != 0;\n}\n",
    );
    assert_eq!(k, DiagKind::Unsupported, "{m}");
    assert!(m.contains("defines `operator&`"), "{m}");
}

#[test]
fn refused_constructs() {
    let mut failures = Vec::new();
    let mut refused = |src: &str, line, col, what| failures.extend(refusal(src, line, col, what));
    let main = "int main() { return 0; }\n";
    // Classes (`classes.rs`, `lower/class.rs`): what stays refused.
    refused(
        &format!("class C {{ public: void m(); }};\n{main}"),
        1,
        1,
        "empty class",
    );
    refused(
        &format!("struct B {{ int b; }};\nstruct S : B {{ int a; }};\n{main}"),
        2,
        10,
        "inheritance",
    );
    refused(
        &format!("class B {{ int b; }};\nclass S : public B {{ int a; }};\n{main}"),
        2,
        9,
        "inheritance",
    );
    refused(
        &format!("class S {{ int a; public: virtual int get() {{ return a; }} }};\n{main}"),
        1,
        26,
        "virtual function",
    );
    refused(
        &format!("class S {{ int a; virtual void m() = 0; }};\n{main}"),
        1,
        18,
        "virtual function",
    );
    refused(
        "class S { int a; public: int operator+(int x) { return a + x; } };\nS s;\nint main() { return s + 1; }\n",
        3,
        21,
        "calls of its overloaded operators are not supported",
    );
    refused(
        &format!("class S {{ int a; friend int f(S *s) {{ return s->a; }} }};\n{main}"),
        1,
        25,
        "friend function defined in a class",
    );
    refused(
        &format!("struct S {{ int b; static int a[2]; }};\n{main}"),
        1,
        30,
        "static data member of this type",
    );
    refused(
        &format!("struct S {{ int a; template <class T> void m(T x) {{ }} }};\n{main}"),
        1,
        19,
        "member template",
    );
    refused(
        &format!("struct S final {{ int a; }};\n{main}"),
        1,
        10,
        "`final` on a class",
    );
    refused(
        "int main() {\n    struct L { int a; void m(); };\n}\n",
        2,
        5,
        "define it at file scope",
    );
    refused(
        &format!("template <class T> T id(T x) {{ return x; }}\n{main}"),
        1,
        1,
        "function template",
    );
    refused(
        "class C { int a; public: ~C() { a = 0; } };\nC c;\nint main() { return 0; }\n",
        2,
        3,
        "non-empty destructor",
    );
    refused(
        "class C { int a; public: C() : a(0) {} };\nint main() {\n    C c[2];\n}\n",
        3,
        7,
        "array of objects",
    );

    refused(
        "class C { int a; public: void f(); };\nC c;\nint main() {\n    c.f();\n}\n",
        4,
        5,
        "declared but not defined",
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
    // Heap forms are in `heap_tests.rs`; these stay refused.
    refused(
        "int g;\nint main() {\n    int *p = new (&g) int;\n    return 0;\n}\n",
        3,
        18,
        "placement `new`",
    );
    refused(
        "int main() {\n    int *p = new int(1, 2);\n    return 0;\n}\n",
        2,
        14,
        "constructors",
    );
    refused(
        "int g;\nint &r = g;\nint main() {\n    return r;\n}\n",
        2,
        5,
        "reference here",
    );
    refused(
        "int main() {\n    try { } catch (...) { }\n}\n",
        2,
        5,
        "exceptions",
    );
    refused("int main() {\n    throw 1;\n}\n", 2, 5, "exceptions");
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
        &format!("std::condition_variable_any cv;\n{main}"),
        1,
        1,
        "std::condition_variable_any",
    );
    refused(
        "int main() {\n    std::timed_mutex m;\n}\n",
        2,
        5,
        "std::timed_mutex",
    );
    refused(
        "int main() {\n    int i = 0;\n    std::thread t([&i](int k) { }, 1);\n    t.join();\n}\n",
        3,
        19,
        "thread lambda with a parameter that also captures",
    );
    refused(
        "int main() {\n    int a[2] = {0, 0};\n    std::thread t([a] { });\n    t.join();\n}\n",
        3,
        20,
        "capture of array or struct `a` by value",
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
        "int main() {\n    std::thread t;\n    t = std::thread();\n}\n",
        3,
        5,
        "without a thread function",
    );
    refused(
        "void f(int a, int b) {}\nint main() {\n    std::thread t(f, 1, 2);\n    t.join();\n}\n",
        1,
        1,
        "`void f(T *)` (one integer or pointer parameter)",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread t[2] = {std::thread(f), std::thread(f)};\n}\n",
        3,
        24,
        "initialiser for an array of std::thread",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread t[2][2];\n}\n",
        3,
        17,
        "one-dimensional",
    );
    refused(
        "void f() {}\nint x;\nint main() {\n    x = std::thread(f);\n}\n",
        4,
        5,
        "assignment of a std::thread to `x`",
    );
    refused(
        "void f() {}\nvoid g() {\n    std::thread t[2];\n}\nint main() { g(); }\n",
        3,
        5,
        "outside main",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread(f).join();\n}\n",
        3,
        5,
        "temporary std::thread",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread(f);\n}\n",
        3,
        5,
        "temporary std::thread",
    );
    refused(
        "void f() {}\nint main() {\n    std::thread t = f;\n}\n",
        3,
        21,
        "initialisation of a std::thread",
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
        "struct S { int a; };\nstd::atomic<S> s;\nint main() { }\n",
        2,
        1,
        "integer and pointer types only",
    );
    refused(
        "std::atomic<int[2]> s;\nint main() { }\n",
        1,
        1,
        "integer and pointer types only",
    );
    refused(
        "int a[2][2];\nint main() {\n    a[0, 1] = 1;\n}\n",
        3,
        10,
        "several indices",
    );
    refused(
        "std::mutex m[2];\nint main() {\n    std::lock_guard<std::mutex> g(m[0] + 1);\n}\n",
        3,
        35,
        "lock guard on `m[0] + 1`",
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
        "struct S { int a; };\nS s;\nint main() {\n    S *p = dynamic_cast<S *>(&s);\n}\n",
        4,
        12,
        "dynamic_cast",
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
    // A non-static member function needs an object: not from a static one, not as `C::f()`
    // outside the class.
    let (l, c, m) = e("struct A {\n    int v;\n    int get() { return v; }\n    static int bad() { return get(); }\n};\nint main() { return A::bad(); }\n");
    assert_eq!((l, c), (4, 31));
    assert!(
        m.contains("non-static member function `A::get` without an object"),
        "{m}"
    );
    let (l, c, m) = e("struct A {\n    int v;\n    int get() { return v; }\n};\nA a;\nint main() {\n    return A::get();\n}\n");
    assert_eq!((l, c), (7, 12));
    assert!(m.contains("without an object"), "{m}");
    let (l, c, m) =
        e("std::atomic<int> x;\nint main() {\n    x.store(1, std::memory_order_acquire);\n}\n");
    assert_eq!((l, c), (3, 16));
    assert!(m.contains("not valid for a store"), "{m}");
    let (_, _, m) =
        e("std::atomic<int> x;\nint main() {\n    x.load(std::memory_order_release);\n}\n");
    assert!(m.contains("not valid for a load"), "{m}");
    let (_, _, m) = e("void f(int a) {}\nint main() {\n    std::thread t(f);\n    t.join();\n}\n");
    assert!(m.contains("expects one argument"), "{m}");
    let (_, _, m) = e("void f() {}\nint main() {\n    std::thread t(f, 1);\n    t.join();\n}\n");
    assert!(m.contains("takes no argument"), "{m}");
    let (l, c, m) =
        e("void f(std::atomic<int> *p) {}\nint main() {\n    std::thread t(f, 1);\n}\n");
    assert_eq!((l, c), (3, 22));
    assert!(m.contains("`1` is not a pointer"), "{m}");
    let (l, c, m) = e("void f() {}\nint main() {\n    std::thread t;\n    t.join();\n}\n");
    assert_eq!((l, c), (4, 5));
    assert!(m.contains("joined before a thread was created"), "{m}");
    let (l, c, m) = e("void f() {}\nint main() {\n    std::thread t[2];\n    t[0] = std::thread(f);\n    t.join();\n}\n");
    assert_eq!((l, c), (5, 5));
    assert!(m.contains("array of thread handles"), "{m}");
    let (l, c, m) = e("struct S { int a; };\nS s;\nint main() {\n    s.load();\n}\n");
    assert_eq!((l, c), (4, 5));
    assert!(m.contains("is a struct"), "{m}");
    let (l, c, m) = e("std::atomic<int> a[2];\nint main() {\n    a.load();\n}\n");
    assert_eq!((l, c), (3, 5));
    assert!(m.contains("is an array: index it"), "{m}");
    let (l, c, m) = e("int a[2];\nint main() {\n    a[1].store(1);\n}\n");
    assert_eq!((l, c), (3, 5));
    assert!(m.contains("`a[1]` is not atomic"), "{m}");
    let (l, c, m) = e("int main() {\n    int k = 0;\n    k.load();\n}\n");
    assert_eq!((l, c), (3, 5));
    assert!(m.contains("local variable"), "{m}");
    let (l, c, m) = e("int g;\nstd::mutex m[2];\nint main() {\n    std::lock_guard<std::mutex> l(m[g]);\n    std::lock_guard<std::mutex> k(g);\n}\n");
    assert_eq!((l, c), (5, 35));
    assert!(m.contains("not a std::mutex"), "{m}");
    let (l, c, m) = e("struct node { int v; };\nstd::atomic<node *> top;\nint main() {\n    long e = 0;\n    top.compare_exchange_strong(e, nullptr);\n}\n");
    assert_eq!((l, c), (5, 33));
    assert!(m.contains("the type of `e` differs"), "{m}");
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

#[test]
fn arrays_of_atomics_and_plain_integers() {
    same(
        "atomic_int a[4]; int data[2]; int g;",
        "for (int i = 0; i < 2; i++) data[i] = i; atomic_store_explicit(&a[g], 1, memory_order_relaxed); g = atomic_load_explicit(&a[1], memory_order_acquire); atomic_fetch_add(&a[2], 1); a[3] = 2; g = a[g % 4] + data[1]; atomic_fetch_sub_explicit(&a[g], 1, memory_order_release);",
        "std::atomic<int> a[4]; int data[2]; int g;",
        "for (int i = 0; i < 2; i++) data[i] = i; a[g].store(1, std::memory_order_relaxed); g = a[1].load(std::memory_order_acquire); a[2].fetch_add(1); a[3] = 2; g = a[g % 4] + data[1]; a[(g)].fetch_sub(1, std::memory_order_release);",
    );
    // Two dimensions, and braced initialisers with or without `=`.
    same(
        "atomic_int m[2][3]; int init[3] = {1, 2, 3}; int g;",
        "atomic_store(&m[1][g], init[2]); g = atomic_load(&m[g][0]);",
        "std::atomic<int> m[2][3]; int init[3]{1, 2, 3}; int g;",
        "m[1][g].store(init[2]); g = m[g][0].load();",
    );
    let p = ok(&format!(
        "{HEAD_CPP}int a[3]{{1, 2}};\nint b[2] = {{3}};\nstd::atomic<int> c[2]{{}};\nint main() {{ return 0; }}\n"
    ));
    let init: Vec<(&str, i64, bool)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.init, g.atomic))
        .collect();
    assert_eq!(
        init,
        [
            ("a[0]", 1, false),
            ("a[1]", 2, false),
            ("a[2]", 0, false),
            ("b[0]", 3, false),
            ("b[1]", 0, false),
            ("c[0]", 0, true),
            ("c[1]", 0, true),
        ]
    );
}

#[test]
fn structs_are_type_names() {
    same(
        "struct S { atomic_int flag; int payload; }; struct S s; struct node { int value; struct node *next; }; struct node pool[2]; typedef struct { int a; atomic_int b; } T; T tt; int g;",
        "s.payload = 1; atomic_store_explicit(&s.flag, 1, memory_order_release); g = atomic_load_explicit(&s.flag, memory_order_acquire); pool[0].next = &pool[1]; g = pool[1].value; struct node *n = pool[0].next; n->value = 3; tt.a = atomic_fetch_add(&tt.b, 1);",
        "struct S { std::atomic<int> flag; int payload; }; S s; struct node { int value; node *next; }; node pool[2]; typedef struct { int a; std::atomic<int> b; } T; T tt; int g;",
        "s.payload = 1; s.flag.store(1, std::memory_order_release); g = s.flag.load(std::memory_order_acquire); pool[0].next = &pool[1]; g = pool[1].value; node *n = pool[0].next; n->value = 3; tt.a = tt.b.fetch_add(1);",
    );
    // The elaborated `struct node` still works, and so does a struct defined with a variable.
    let p = ok(&format!(
        "{HEAD_CPP}struct node {{ int v; struct node *next; }};\nstruct node a{{1, nullptr}};\nnode b = {{2, &a}};\nstruct P {{ int x; }} pt{{7}};\nint main() {{ return 0; }}\n"
    ));
    let init: Vec<(&str, i64)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.init))
        .collect();
    assert_eq!(
        init,
        [
            ("a.v", 1),
            ("a.next", 0),
            ("b.v", 2),
            ("b.next", pointer_to(0)),
            ("pt.x", 7),
        ]
    );
}

#[test]
fn atomic_pointers() {
    let c_globals = "struct node { int value; struct node *next; }; struct node pool[2]; _Atomic(struct node *) top; _Atomic(int *) p; int g;";
    let cpp_globals = "struct node { int value; node *next; }; node pool[2]; std::atomic<node *> top{nullptr}; std::atomic<int*> p; int g;";
    same(
        c_globals,
        "struct node *old = atomic_load_explicit(&top, memory_order_relaxed); struct node *n = &pool[0]; n->next = old; g = atomic_compare_exchange_weak_explicit(&top, &old, n, memory_order_release, memory_order_relaxed); atomic_store(&p, &g); atomic_store(&top, NULL); old = atomic_exchange(&top, n); g = old->value; g = atomic_load(&p) != NULL; g = atomic_compare_exchange_strong(&top, &old, pool + 1);",
        cpp_globals,
        "node *old = top.load(std::memory_order_relaxed); node *n = &pool[0]; n->next = old; g = top.compare_exchange_weak(old, n, std::memory_order_release, std::memory_order_relaxed); p.store(&g); top.store(nullptr); old = top.exchange(n); g = old->value; g = p.load() != nullptr; g = top.compare_exchange_strong(old, pool + 1);",
    );
    // Read and written by name (seq_cst), and loaded pointers keep their pointee type.
    same(
        c_globals,
        "top = &pool[1]; struct node *t = top; t->value = 2; g = atomic_load(&top)->value;",
        cpp_globals,
        "top = &pool[1]; node *t = top; t->value = 2; g = top.load()->value;",
    );
    let p = ok(&format!(
        "{HEAD_CPP}{cpp_globals}\nstd::atomic<int *> second{{&g}};\nstd::atomic<std::atomic<int> *> pp;\nint main() {{ return 0; }}\n"
    ));
    let cells: Vec<(&str, bool, i64)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.atomic, g.init))
        .collect();
    assert_eq!(
        cells[4..],
        [
            ("top", true, 0),
            ("p", true, 0),
            ("g", false, 0),
            ("second", true, pointer_to(6)),
            ("pp", true, 0),
        ]
    );
    // Only exchange is a read-modify-write on a pointer.
    assert!(refusal(
        &format!("{cpp_globals}\nint main() {{\n    top.fetch_add(1);\n}}\n"),
        3,
        5,
        "`fetch_add` on pointer `top`"
    )
    .is_none());
}

#[test]
fn member_calls_through_pointers() {
    same(
        "atomic_int x, y; int r[2];\nvoid st(atomic_int *m, atomic_int *o, int *out) { atomic_store_explicit(m, 1, memory_order_relaxed); *out = atomic_load_explicit(o, memory_order_relaxed); atomic_fetch_add(m, 2); }",
        "st(&x, &y, &r[0]); st(&y, &x, &r[1]);",
        "std::atomic<int> x, y; int r[2];\nvoid st(std::atomic<int> *m, std::atomic<int> *o, int *out) { m->store(1, std::memory_order_relaxed); *out = o->load(std::memory_order_relaxed); (*m).fetch_add(2); }",
        "st(&x, &y, &r[0]); st(&y, &x, &r[1]);",
    );
    // A pointer to a struct with atomic members.
    same(
        "struct S { atomic_int f; int v; }; struct S s[2]; int g;",
        "struct S *p = &s[g]; atomic_store_explicit(&p->f, 1, memory_order_release); g = atomic_load(&s[1].f);",
        "struct S { std::atomic<int> f; int v; }; S s[2]; int g;",
        "S *p = &s[g]; p->f.store(1, std::memory_order_release); g = s[1].f.load();",
    );
}

#[test]
fn static_locals() {
    same(
        "atomic_int total;\nint next_id(void) { static atomic_int calls; static int plain = 3; plain++; return atomic_fetch_add(&calls, 1) + plain; }",
        "atomic_fetch_add_explicit(&total, next_id(), memory_order_relaxed);",
        "std::atomic<int> total;\nint next_id() { static std::atomic<int> calls; static int plain{3}; plain++; return calls.fetch_add(1) + plain; }",
        "total.fetch_add(next_id(), std::memory_order_relaxed);",
    );
}

#[test]
fn mutex_arrays_and_members() {
    same(
        "pthread_mutex_t locks[2]; struct B { pthread_mutex_t m; int v; }; struct B b; int g;",
        "int i = g; pthread_mutex_lock(&locks[i]); g = 1; pthread_mutex_unlock(&locks[i]); pthread_mutex_lock(&b.m); b.v = 2; pthread_mutex_unlock(&b.m); if (pthread_mutex_trylock(&locks[1]) == 0) pthread_mutex_unlock(&locks[1]);",
        "std::mutex locks[2]; struct B { std::mutex m; int v; }; B b; int g;",
        "int i = g; locks[i].lock(); g = 1; locks[i].unlock(); b.m.lock(); b.v = 2; b.m.unlock(); if (locks[1].try_lock()) locks[1].unlock();",
    );
    // Lock guards on elements (the grammar parses `l(locks[i])` as a declaration) and members.
    same(
        "pthread_mutex_t locks[2]; struct B { pthread_mutex_t m; int v; }; struct B b; int g;",
        "int i = g; pthread_mutex_lock(&locks[i]); g = 1; pthread_mutex_lock(&b.m); b.v = 2; pthread_mutex_unlock(&b.m); pthread_mutex_unlock(&locks[i]);",
        "std::mutex locks[2]; struct B { std::mutex m; int v; }; B b; int g;",
        "int i = g; { std::lock_guard<std::mutex> l(locks[i]); i = 0; g = 1; { std::scoped_lock k{b.m}; b.v = 2; } }",
    );
    // The guard unlocks the element it locked, even if the index changed since.
    let p = ok(&format!(
        "{HEAD_CPP}std::mutex locks[2];\nvoid t() {{ int i = 1; {{ std::lock_guard<std::mutex> l(locks[i]); i = 0; }} }}\nint main() {{ std::thread h(t); h.join(); }}\n"
    ));
    let f = func(&p, "t");
    let addrs: Vec<&Addr> = f
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Cas { loc, .. } | Instr::Rmw { loc, .. } => Some(loc),
            _ => None,
        })
        .collect();
    // Lock: a CAS and a relock RMW; unlock: a CAS and an RMW.
    assert_eq!(addrs.len(), 4);
    assert!(addrs.iter().all(|a| *a == addrs[0]));
    assert_eq!(
        addrs[0], addrs[1],
        "lock and unlock address the same element"
    );
    assert!(matches!(
        addrs[0],
        Addr::Computed {
            ptr: Expr::Reg(_),
            ..
        }
    ));
}

#[test]
fn threads_in_loops_lower_like_pthread_arrays() {
    let c = format!(
        "{HEAD_C}atomic_int x[3];\nvoid *w(void *arg) {{ long i = (long)arg; atomic_store(&x[i], 1); return NULL; }}\nint main(void) {{ pthread_t t[3]; for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, w, (void *)i); for (int i = 0; i < 3; i++) pthread_join(t[i], NULL); return 0; }}\n"
    );
    let cpp = format!(
        "{HEAD_CPP}std::atomic<int> x[3];\nvoid w(long i) {{ x[i].store(1); }}\nint main() {{ std::thread t[3]; for (long i = 0; i < 3; i++) t[i] = std::thread(w, i); for (int i = 0; i < 3; i++) t[i].join(); return 0; }}\n"
    );
    let (pc, pcpp) = (ok_c(&c), ok(&cpp));
    assert_eq!(
        shape(&pc, &pc.functions[pc.main]),
        shape(&pcpp, &pcpp.functions[pcpp.main])
    );
    assert_eq!(shape(&pc, func(&pc, "w")), shape(&pcpp, func(&pcpp, "w")));
    // Every form: a default-constructed handle assigned later, `= std::thread(...)`,
    // `std::thread{...}`, constant indices, lambdas capturing the loop variable.
    let p = ok(&format!(
        "{HEAD_CPP}using namespace std;\nstd::atomic<int> x[4];\nvoid f() {{ x[0].store(1); }}\nvoid k(int v) {{ x[v].store(2); }}\nint main() {{\n    std::thread a;\n    a = std::thread(f);\n    std::thread b = std::thread(k, 1);\n    std::thread c[2];\n    c[0] = std::thread{{k, 2}};\n    c[1] = thread([] {{ x[3].store(3); }});\n    thread d[2];\n    for (int i = 0; i < 2; i++)\n        d[i] = std::thread([i] {{ x[i].store(4); }});\n    a.join(); b.join(); c[0].join(); c[1].join();\n    for (int i = 0; i < 2; i++) d[i].join();\n}}\n"
    ));
    let main = &p.functions[p.main];
    let spawned: Vec<&str> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Spawn { func, .. } => Some(p.functions[*func].name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(spawned, ["f", "k", "k", "lambda@15:19", "lambda@18:28"]);
    let joins = main
        .body
        .iter()
        .filter(|i| matches!(i, Instr::Join { .. }))
        .count();
    assert_eq!(joins, 5);
}

#[test]
fn pointer_arguments_of_threads() {
    let p = ok(&format!(
        "{HEAD_CPP}std::atomic<int> x, y;\nint vals[2];\nvoid w(std::atomic<int> *p) {{ p->store(1); }}\nvoid k(int v) {{ x.store(v); }}\nvoid s(int *out) {{ *out = 5; }}\nint main() {{\n    std::atomic<int> *py = &y;\n    std::thread a(w, &x);\n    std::thread b(w, py);\n    std::thread c(k, vals[1]);\n    std::thread d(s, vals);\n    std::thread e([py] {{ py->store(2); }});\n    std::thread f([](int *q) {{ q[1] = 3; }}, &vals[0]);\n    a.join(); b.join(); c.join(); d.join(); e.join(); f.join();\n}}\n"
    ));
    let main = &p.functions[p.main];
    let args: Vec<&Expr> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Spawn { arg, .. } => Some(arg),
            _ => None,
        })
        .collect();
    assert_eq!(args.len(), 6);
    assert_eq!(args[0], &Expr::Const(pointer_to(0)), "&x");
    assert!(matches!(args[1], Expr::Reg(_)), "py");
    assert!(matches!(args[2], Expr::Reg(_)), "vals[1] is loaded");
    assert_eq!(args[3], &Expr::Const(pointer_to(2)), "vals decays");
    assert!(matches!(args[4], Expr::Reg(_)), "captured py");
    assert_eq!(args[5], &Expr::Const(pointer_to(2)), "&vals[0]");
    assert!(shape(&p, main).contains(&"load vals[1] na".to_string()));
    // The threads dereference their parameter.
    for name in ["w", "s", "lambda@16:19", "lambda@17:19"] {
        let f = func(&p, name);
        assert!(f.param.is_some(), "{name}");
        assert!(
            f.body.iter().any(|i| matches!(
                i,
                Instr::Store {
                    loc: Addr::Computed { .. },
                    ..
                }
            )),
            "{name}"
        );
    }
}

#[test]
fn await_loops_on_element_and_member_loads() {
    same(
        "atomic_int f[2]; struct S { atomic_int r; }; struct S s; int g;",
        "while (atomic_load_explicit(&f[g], memory_order_acquire) == 0); while (!atomic_load(&s.r)); g = 1;",
        "std::atomic<int> f[2]; struct S { std::atomic<int> r; }; S s; int g;",
        "while (f[g].load(std::memory_order_acquire) == 0); while (!s.r.load()); g = 1;",
    );
    let (_, b) = both(
        "int g;",
        "g = 1;",
        "std::atomic<int> f[2]; int g;",
        "while (f[1].load() == 0) {} g = 1;",
    );
    // An await loop: its entry, the load and an assume; no branch, no back jump.
    assert!(
        b.contains(&"assume".to_string()) && !b.contains(&"jump".to_string()),
        "{b:?}"
    );
}

#[test]
fn macros_and_ifndef_in_cpp() {
    // A thread count and loop bound from a macro with an `#ifndef` default: the same IR as the
    // literals, and the counting loops need no bound.
    let with_macros = ok(&format!(
        "{HEAD_CPP}#define N 2\n#ifndef N\n#define N 5\n#endif\n#ifndef ROUNDS\n#define ROUNDS (N + 1)\n#endif\n\
         std::atomic<int> x;\nint a[N];\nvoid t() {{ for (int i = 0; i < ROUNDS; i++) x.fetch_add(1); }}\n\
         int main() {{\n  std::thread th[N];\n  for (int i = 0; i < N; i++) th[i] = std::thread(t);\n  \
         for (int i = 0; i < N; i++) th[i].join();\n  a[N - 1] = x.load();\n}}\n"
    ));
    let literal = ok(&format!(
        "{HEAD_CPP}\n\n\n\n\n\n\n\
         std::atomic<int> x;\nint a[2];\nvoid t() {{ for (int i = 0; i < 3; i++) x.fetch_add(1); }}\n\
         int main() {{\n  std::thread th[2];\n  for (int i = 0; i < 2; i++) th[i] = std::thread(t);\n  \
         for (int i = 0; i < 2; i++) th[i].join();\n  a[2 - 1] = x.load();\n}}\n"
    ));
    for f in &with_macros.functions {
        assert!(
            !f.body.iter().any(|i| matches!(i, Instr::LoopEnter { .. })),
            "{}",
            f.name
        );
        assert_eq!(f.body, func(&literal, &f.name).body, "{}", f.name);
    }
    assert_eq!(
        diag("#define N 2\nstd::atomic<int> N;\nint main() { }"),
        (
            2,
            18,
            DiagKind::Syntax,
            "unexpected `2` (in expansion of N, defined at t.cpp:1:1)".to_string()
        )
    );
}

#[test]
fn named_casts_lower_like_c_casts() {
    // static_cast / reinterpret_cast / const_cast (`named_casts.rs`): the C cast they mean,
    // in both spellings (`((T) e)` and, for an operand with a binary operator, `(T)(e)`).
    same(
        "atomic_int x; int g; long h; int *p;",
        "g = (int)(h + 1); p = (int *)&g; g = *((int *)p) + (int)h; h = (long)atomic_load(&x);",
        "std::atomic<int> x; int g; long h; int *p;",
        "g = static_cast<int>(h + 1); p = reinterpret_cast<int *>(&g); \
         g = *(const_cast<int *>(p)) + static_cast<int>(h); h = static_cast<long>(x.load());",
    );
}

#[test]
fn references_lower_like_pointers_to_their_object() {
    // A reference parameter bound to a global is the global, one bound to an element is that
    // element (its address computed once): the accesses of the C functions that name them.
    same(
        "atomic_int x; int g; int a[2]; \
         static void set_g(int v) { g = v; } \
         static void set_a1(int v) { a[1] = v; } \
         static int get(void) { return atomic_load(&x); }",
        "set_g(1); set_a1(2); g = get();",
        "std::atomic<int> x; int g; int a[2]; \
         static void set(int &r, int v) { r = v; } \
         static int get(std::atomic<int> &f) { return f.load(); }",
        "set(g, 1); set(a[1], 2); g = get(x);",
    );
}

#[test]
fn a_counter_passed_by_reference_keeps_the_loop_bound() {
    // `skip(i)` may change the counter when `skip` takes it by reference: the loop is then not
    // a counting loop (it keeps its LoopEnter and the unroll bound); by value it is one.
    let prog = |param: &str| {
        ok(&format!(
            "static void skip({param}) {{ i = i + 1; }}\nint main() {{ int n = 0; for (int i = 0; i < 3; i++) {{ skip(i); n++; }} return n; }}\n"
        ))
    };
    let (by_ref, by_value) = (prog("int &i"), prog("int i"));
    let has_loop = |p: &Program| shape(p, &p.functions[p.main]).iter().any(|s| s == "loop");
    assert!(has_loop(&by_ref));
    assert!(!has_loop(&by_value));
}

#[test]
fn a_cpp_enumerator_may_be_wider_than_int() {
    // C++ gives the enum a type that holds every value (C keeps C17's refusal, expr_tests.rs);
    // the enumerator keeps its 64-bit value as an operand.
    let p = ok("enum { MAX_TICKET = 9223372036854775807 };\nlong t;\nint main() { t = MAX_TICKET; return 0; }\n");
    let stored = p.functions[p.main].body.iter().find_map(|i| match i {
        Instr::Store { val, .. } => Some(val.clone()),
        _ => None,
    });
    assert_eq!(stored, Some(Expr::Const(i64::MAX)));
}

/// A fence after a loop whose unbraced body gets braces lands after the new `}`, not inside it
/// (both are inserted where the body ends).
#[test]
fn a_fence_after_a_wrapped_loop_goes_after_its_brace() {
    use crate::rewrite::{fence_edits, files};
    use crate::trace::Site;
    let src = "#include <stdatomic.h>\n#include <pthread.h>\natomic_int l;\nvoid *t(void *a) {\n\twhile (atomic_exchange_explicit(&l, 1, memory_order_relaxed))\n\t\twhile (atomic_load_explicit(&l, memory_order_relaxed))\n\t\t\t;\n\treturn 0;\n}\nint main() { pthread_t h; pthread_create(&h, 0, t, 0); pthread_join(h, 0); }\n";
    let p = crate::frontend::parse_c("t.c", src).unwrap();
    let is_loop = |stmt: usize, text: &str| src[p.stmts[stmt].span.start..].starts_with(text);
    let slot = |text: &str, before: bool| {
        p.slots
            .iter()
            .position(|s| match s.place {
                SlotPlace::Before { stmt } => before && is_loop(stmt, text),
                SlotPlace::BlockEnd {
                    after: Some(stmt), ..
                } => !before && is_loop(stmt, text),
                _ => false,
            })
            .unwrap()
    };
    let fences = [
        (
            Site::Slot(slot("while (atomic_load", false)),
            MemOrder::Acquire,
        ),
        (Site::Slot(slot("return", true)), MemOrder::Release),
    ];
    let (edits, _) = fence_edits(src, &p, &fences).unwrap();
    let changed = files::apply_all(src, &p, &edits).unwrap();
    let out = files::main_text(src, &changed).to_string();
    assert!(out.contains(
        "\t\t\t;\n\t\tatomic_thread_fence(memory_order_acquire);\n\t}\n\tatomic_thread_fence(memory_order_release);\n\treturn 0;\n"
    ), "{out}");
}
