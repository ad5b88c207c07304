//! Tests of the synchronisation objects (`lower/sync.rs`, `mutex.rs`, `rwlock.rs`,
//! `cond.rs`, `cpp_sync.rs`): the memory operations and misuse checks of each form, the cells
//! of each object, the C++ classes against their C counterparts, and every refusal.

use super::lower::sync::{self, Initial};
use super::types::{SyncTy, Ty};
use super::*;
use crate::ir::*;

const HEAD: &str = "#include <pthread.h>\n#include <threads.h>\n";

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

/// `(line, column, kind, message)` of the diagnostic for `src` (C or C++).
fn diag(lang: Lang, src: &str) -> (usize, usize, DiagKind, String) {
    match parse("t", src, lang) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

fn expr(e: &Expr) -> String {
    match e {
        Expr::Const(c) => c.to_string(),
        Expr::Reg(_) => "_".into(),
        Expr::Unary(op, a) => format!("{op:?}({})", expr(a)),
        Expr::Binary(op, a, b) => format!("({} {op:?} {})", expr(a), expr(b)),
    }
}

/// The memory operations of `f`, with locations by name (registers as `_`): `cas m 0 ->
/// (_ Add 1) acq`, `rmw b Add 1 acq_rel`, `load b#round acq`, `store a 1 rlx`.
fn accesses(p: &Program, f: &Function) -> Vec<String> {
    let g = |loc: &Addr| match loc {
        Addr::Fixed(l) => p.globals[*l].name.clone(),
        Addr::Computed { .. } | Addr::Within { .. } => "<computed>".to_string(),
    };
    f.body
        .iter()
        .filter_map(|i| {
            Some(match i {
                Instr::Load { loc, order, .. } => format!("load {} {order}", g(loc)),
                Instr::Store { loc, val, order } => {
                    format!("store {} {} {order}", g(loc), expr(val))
                }
                Instr::Rmw {
                    loc,
                    op,
                    val,
                    order,
                    ..
                } => format!("rmw {} {op:?} {} {order}", g(loc), expr(val)),
                Instr::Cas {
                    loc,
                    expected,
                    desired,
                    order,
                    ..
                } => format!(
                    "cas {} {} -> {} {order}",
                    g(loc),
                    expr(expected),
                    expr(desired)
                ),
                _ => return None,
            })
        })
        .collect()
}

/// The messages of the misuse checks of `f`, in order.
fn checks(f: &Function) -> Vec<String> {
    f.body
        .iter()
        .filter_map(|i| match i {
            Instr::Check {
                kind: CheckKind::Misuse,
                message,
                ..
            } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn main_of(p: &Program) -> &Function {
    &p.functions[p.main]
}

/// `main` of the C program with `globals` and `body`.
fn c_main(globals: &str, body: &str) -> Program {
    ok(&format!(
        "{HEAD}{globals}\nint main(void) {{\n{body}\nreturn 0;\n}}\n"
    ))
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Locking the mutex `m` (see `lower/mutex.rs`): a CAS from 0 to the thread's id + 1; when it
/// fails and the thread holds the mutex, its kind is read: a recursive relock adds a level,
/// else the thread reads its word again and waits for itself.
fn lock(m: &str) -> Vec<String> {
    vec![
        format!("cas {m} 0 -> (_ Add 1) acq"),
        format!("load {m}#kind rlx"),
        format!("rmw {m} Add 65536 rlx"),
        format!("load {m} rlx"),
    ]
}

/// Unlocking the mutex `m`: a release CAS from the thread's id + 1 to 0; when it fails (and
/// the thread holds the mutex), a level goes.
fn unlock(m: &str) -> Vec<String> {
    vec![
        format!("cas {m} (_ Add 1) -> 0 rel"),
        format!("rmw {m} Sub 65536 rlx"),
    ]
}

#[test]
fn mutex_operations() {
    let p = c_main(
        "pthread_mutex_t m;",
        "pthread_mutex_init(&m, NULL);\npthread_mutex_lock(&m);\nint r = pthread_mutex_trylock(&m);\npthread_mutex_unlock(&m);\npthread_mutex_destroy(&m);",
    );
    let main = main_of(&p);
    let want = [
        v(&["rmw m Xchg 0 rlx", "store m#kind 0 rlx"]),
        lock("m"),
        // trylock: the lock without the wait.
        v(&[
            "cas m 0 -> (_ Add 1) acq",
            "load m#kind rlx",
            "rmw m Add 65536 rlx",
        ]),
        unlock("m"),
        vec![format!("rmw m Xchg {} rlx", sync::DESTROYED)],
    ]
    .concat();
    assert_eq!(accesses(&p, main), want);
    assert_eq!(
        checks(main),
        [
            "`pthread_mutex_init` re-initialises mutex `m` while it is locked",
            "`pthread_mutex_lock` on uninitialised mutex `m`",
            "`pthread_mutex_lock` on destroyed mutex `m`",
            "`pthread_mutex_trylock` on uninitialised mutex `m`",
            "`pthread_mutex_trylock` on destroyed mutex `m`",
            "`pthread_mutex_unlock` on uninitialised mutex `m`",
            "`pthread_mutex_unlock` on destroyed mutex `m`",
            "`pthread_mutex_unlock` of mutex `m`, which this thread does not hold",
            "`pthread_mutex_destroy` on uninitialised mutex `m`",
            "`pthread_mutex_destroy` on destroyed mutex `m`",
            "`pthread_mutex_destroy` of mutex `m` while it is locked",
        ]
    );
    // The value of trylock: 0 on success, EBUSY (16) on failure; of the others: 0.
    let r = main.reg_names.iter().position(|n| n == "r").unwrap();
    let set_r = main
        .body
        .iter()
        .find_map(|i| match i {
            Instr::Assign { dst, val } if *dst == r => Some(expr(val)),
            _ => None,
        })
        .unwrap();
    assert_eq!(set_r, "((1 Sub _) Mul 16)");
}

#[test]
fn mutex_calls_are_values_and_statements() {
    // `if (pthread_mutex_lock(&m)) abort();`-style checks of the API's result: always 0.
    let p = c_main(
        "pthread_mutex_t m; int e;",
        "e = pthread_mutex_lock(&m) + pthread_mutex_unlock(&m);\ne = pthread_mutex_timedlock(&m, NULL);",
    );
    let main = main_of(&p);
    assert_eq!(accesses(&p, main)[..4], lock("m")[..]);
    let stores: Vec<String> = accesses(&p, main)
        .into_iter()
        .filter(|a| a.starts_with("store e"))
        .collect();
    assert_eq!(stores, ["store e 0 na", "store e ((1 Sub _) Mul 110) na"]);
}

#[test]
fn recursive_mutexes_through_attributes() {
    let p = c_main(
        "pthread_mutex_t m; pthread_mutexattr_t a;",
        "pthread_mutexattr_init(&a);\npthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);\npthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE);\npthread_mutex_init(&m, &a);\npthread_mutexattr_destroy(&a);",
    );
    let main = main_of(&p);
    assert_eq!(
        accesses(&p, main),
        [
            "store a 1 rlx",
            "load a rlx",
            "store a (_ Add 1) rlx",
            "load a rlx",
            "load a rlx",
            "rmw m Xchg 0 rlx",
            "store m#kind (_ Eq 2) rlx",
            "load a rlx",
            "store a 0 rlx",
        ]
    );
    assert!(checks(main)
        .contains(&"`pthread_mutexattr_settype` with an invalid mutex type for `a`".to_string()));
    assert!(checks(main)
        .contains(&"`pthread_mutex_init` with uninitialised mutex attribute `a`".to_string()));
    // A static initialiser for a recursive mutex.
    let p = c_main(
        "pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;",
        "",
    );
    assert_eq!((p.globals[0].init, p.globals[1].init), (0, sync::RECURSIVE));
}

#[test]
fn spinlocks() {
    let p = c_main(
        "pthread_spinlock_t s;",
        "pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);\npthread_spin_lock(&s);\nif (pthread_spin_trylock(&s) == 0) {}\npthread_spin_unlock(&s);\npthread_spin_destroy(&s);",
    );
    let main = main_of(&p);
    let acc = accesses(&p, main);
    // A spinlock has no kind: a lock that finds it held by the thread itself waits.
    assert_eq!(
        acc,
        [
            "rmw s Xchg 0 rlx".to_string(),
            "cas s 0 -> (_ Add 1) acq".into(),
            "load s rlx".into(),
            "cas s 0 -> (_ Add 1) acq".into(),
            "cas s (_ Add 1) -> 0 rel".into(),
            "rmw s Sub 65536 rlx".into(),
            format!("rmw s Xchg {} rlx", sync::DESTROYED),
        ]
    );
    assert!(checks(main)
        .iter()
        .any(|c| c == "`pthread_spin_unlock` of spinlock `s`, which this thread does not hold"));
    let cell = p.globals[0].sync.as_ref().unwrap();
    assert_eq!((cell.kind, cell.role), (SyncKind::Spinlock, SyncRole::Wait));
}

#[test]
fn c11_mutexes() {
    let p = c_main(
        "mtx_t m; int r;",
        "mtx_init(&m, mtx_timed | mtx_recursive);\nr = mtx_lock(&m);\nr = mtx_trylock(&m);\nr = mtx_timedlock(&m, NULL);\nr = mtx_unlock(&m);\nmtx_destroy(&m);",
    );
    let main = main_of(&p);
    let acc = accesses(&p, main);
    // mtx_timed | mtx_recursive = 3: both kinds.
    assert_eq!(
        acc[..2],
        [
            "rmw m Xchg 0 rlx",
            "store m#kind (((_ BitAnd 1) Ne 0) Add (((_ BitAnd 2) Ne 0) Mul 2)) rlx"
        ]
    );
    let stores: Vec<String> = acc
        .into_iter()
        .filter(|a| a.starts_with("store r"))
        .collect();
    assert_eq!(
        stores,
        [
            "store r 0 na",
            "store r (1 Sub _) na",
            "store r ((1 Sub _) Mul 4) na",
            "store r 0 na"
        ]
    );
    let not_timed = "`mtx_timedlock` on mutex `m`, which is not initialised with mtx_timed";
    assert_eq!(checks(main).iter().filter(|c| *c == not_timed).count(), 1);
    // The C11 constants are expressions.
    let p = c_main(
        "int r;",
        "r = thrd_success + thrd_busy * 10 + thrd_timedout * 100 + mtx_recursive * 1000;",
    );
    assert_eq!(accesses(&p, main_of(&p)), ["store r 1410 na"]);
}

#[test]
fn rwlocks() {
    let p = c_main(
        "pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER; int r;",
        "pthread_rwlock_rdlock(&rw);\npthread_rwlock_unlock(&rw);\npthread_rwlock_wrlock(&rw);\npthread_rwlock_unlock(&rw);\nr = pthread_rwlock_tryrdlock(&rw);\nr = pthread_rwlock_trywrlock(&rw);\nr = pthread_rwlock_timedwrlock(&rw, NULL);\npthread_rwlock_destroy(&rw);\npthread_rwlock_init(&rw, NULL);",
    );
    let main = main_of(&p);
    let unlock = v(&["rmw rw Sub 1 rel", "rmw rw Sub ((_ Add 1) Shl 32) rel"]);
    let want = [
        v(&["rmw rw Add 1 acq", "load rw acq"]),
        unlock.clone(),
        v(&["cas rw 0 -> (((_ Add 1) Shl 32) Add 1) acq"]),
        unlock,
        v(&[
            "rmw rw Add 1 acq",
            "rmw rw Sub 1 rlx",
            "store r ((1 Sub _) Mul 16) na",
        ]),
        v(&[
            "cas rw 0 -> (((_ Add 1) Shl 32) Add 1) acq",
            "store r ((1 Sub _) Mul 16) na",
        ]),
        v(&[
            "cas rw 0 -> (((_ Add 1) Shl 32) Add 1) acq",
            "store r ((1 Sub _) Mul 110) na",
        ]),
        vec![format!("rmw rw Xchg {} rlx", sync::DESTROYED)],
        v(&["rmw rw Xchg 0 rlx"]),
    ]
    .concat();
    assert_eq!(accesses(&p, main), want);
    let c = checks(main);
    for m in [
        "`pthread_rwlock_unlock` of rwlock `rw`, which this thread does not hold",
        "`pthread_rwlock_destroy` of rwlock `rw` while it is held",
        "`pthread_rwlock_init` re-initialises rwlock `rw` while it is held",
        "`pthread_rwlock_wrlock` on destroyed rwlock `rw`",
    ] {
        assert!(c.contains(&m.to_string()), "{m}");
    }
    // The writer blocks after its CAS, the reader after its load: the checker's Wait cell.
    let cell = p.globals[0].sync.as_ref().unwrap();
    assert_eq!((cell.kind, cell.role), (SyncKind::RwLock, SyncRole::Wait));
}

#[test]
fn barriers() {
    let p = c_main(
        "pthread_barrier_t b; int r;",
        "pthread_barrier_init(&b, NULL, 2);\nr = pthread_barrier_wait(&b);\npthread_barrier_destroy(&b);",
    );
    let names: Vec<&str> = p.globals.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["b", "b#round", "r"]);
    let roles: Vec<Option<SyncRole>> = p
        .globals
        .iter()
        .map(|g| g.sync.as_ref().map(|c| c.role))
        .collect();
    assert_eq!(roles, [Some(SyncRole::State), Some(SyncRole::Wait), None]);
    assert_eq!(p.globals[1].sync.as_ref().unwrap().object, "b");
    let main = main_of(&p);
    assert_eq!(
        accesses(&p, main),
        [
            "rmw b Xchg (_ Shl 32) rlx",
            "store b#round 0 rlx",
            "rmw b Add 1 acq_rel",
            "rmw b#round Add 1 rel",
            "load b#round acq",
            "store r _ na",
            &format!("rmw b Xchg {} rlx", sync::DESTROYED),
        ]
    );
    assert_eq!(
        checks(main),
        [
            "`pthread_barrier_init` of barrier `b` with a count outside 1..=65535",
            "`pthread_barrier_init` re-initialises barrier `b`, which is initialised and not destroyed",
            "`pthread_barrier_wait` on uninitialised barrier `b`",
            "`pthread_barrier_wait` on destroyed barrier `b`",
            "`pthread_barrier_wait` on uninitialised barrier `b`",
            "`pthread_barrier_destroy` on uninitialised barrier `b`",
            "`pthread_barrier_destroy` on destroyed barrier `b`",
            "`pthread_barrier_destroy` on uninitialised barrier `b`",
            "`pthread_barrier_destroy` of barrier `b` while threads wait at it",
        ]
    );
    // The serial thread gets PTHREAD_BARRIER_SERIAL_THREAD (-1), the others 0.
    let consts: Vec<i64> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Assign {
                val: Expr::Const(c),
                ..
            } => Some(*c),
            _ => None,
        })
        .collect();
    // (The count, evaluated once, then the two results.)
    assert_eq!(consts, [2, -1, 0]);
}

#[test]
fn condition_variables() {
    let p = c_main(
        "pthread_mutex_t m; pthread_cond_t c = PTHREAD_COND_INITIALIZER; int r;",
        "pthread_mutex_lock(&m);\npthread_cond_wait(&c, &m);\nr = pthread_cond_timedwait(&c, &m, NULL);\npthread_mutex_unlock(&m);\npthread_cond_signal(&c);\npthread_cond_broadcast(&c);\npthread_cond_destroy(&c);\npthread_cond_init(&c, NULL);",
    );
    let names: Vec<&str> = p.globals.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["m", "m#kind", "c", "c#signals", "r"]);
    assert_eq!(
        p.globals[3].sync.as_ref().map(|c| c.role),
        Some(SyncRole::Signals)
    );
    let main = main_of(&p);
    let acc = accesses(&p, main);
    let wait = [
        v(&["rmw c Add 1 rlx", "load c#signals acq"]),
        unlock("m"),
        lock("m"),
        v(&["rmw c Sub 1 rlx"]),
    ]
    .concat();
    let start = lock("m").len();
    assert_eq!(acc[start..start + wait.len()], wait[..]);
    let timed = [
        v(&["rmw c Add 1 rlx", "load c#signals rlx"]),
        unlock("m"),
        v(&["load c#signals rlx"]),
        lock("m"),
        v(&["rmw c Sub 1 rlx", "store r (_ Mul 110) na"]),
    ]
    .concat();
    let at = start + wait.len();
    assert_eq!(acc[at..at + timed.len()], timed[..]);
    let tail = &acc[at + timed.len() + unlock("m").len()..];
    assert_eq!(
        tail,
        [
            "rmw c#signals Add 1 rlx".to_string(),
            "rmw c#signals Add 1 rlx".into(),
            format!("rmw c Xchg {} rlx", sync::DESTROYED),
            format!("store c#signals {} rlx", sync::DESTROYED),
            "rmw c Xchg 0 rlx".into(),
            "store c#signals 0 rlx".into(),
        ]
    );
    let c = checks(main);
    for m in [
        "`pthread_cond_wait` of mutex `m`, which this thread does not hold",
        "`pthread_cond_wait` with mutex `m` locked more than once (a wait releases it once)",
        "`pthread_cond_signal` on destroyed condition variable `c`",
        "`pthread_cond_destroy` of condition variable `c` while threads wait on it",
        "`pthread_cond_init` re-initialises condition variable `c` while threads wait on it",
    ] {
        assert!(c.contains(&m.to_string()), "{m}");
    }
}

/// `while (C) wait;` is `if (C) { wait; if (C) sleep; }`: no loop, and the sleep registers
/// again, releases the mutex and blocks for good.
#[test]
fn condition_wait_loops() {
    let src = "pthread_mutex_t m; pthread_cond_t c; int ready; atomic_int f;";
    for body in [
        "while (!ready) pthread_cond_wait(&c, &m);",
        "while (!ready) { pthread_cond_wait(&c, &m); }",
        "while (ready == 0) { ; pthread_cond_wait(&c, &m); }",
        "while (!ready) pthread_cond_timedwait(&c, &m, NULL);",
    ] {
        let p = c_main(
            src,
            &format!("pthread_mutex_lock(&m);\n{body}\npthread_mutex_unlock(&m);"),
        );
        let main = main_of(&p);
        assert!(
            !main
                .body
                .iter()
                .any(|i| matches!(i, Instr::LoopEnter { .. } | Instr::LoopIter { .. })),
            "{body}"
        );
        let acc = accesses(&p, main);
        let reads_ready = acc.iter().filter(|a| *a == "load ready na").count();
        assert_eq!(reads_ready, 2, "{body}");
        let sleep_at = acc.iter().rposition(|a| a == "load ready na").unwrap() + 1;
        assert_eq!(
            acc[sleep_at..sleep_at + 3],
            [
                "rmw c Add 1 rlx",
                "load c#signals acq",
                "cas m (_ Add 1) -> 0 rel"
            ],
            "{body}"
        );
        let registrations = acc.iter().filter(|a| *a == "load c#signals acq").count();
        let timed = body.contains("timedwait");
        assert_eq!(registrations, if timed { 1 } else { 2 }, "{body}");
    }
    // Anything else is an ordinary loop: `if`, a body with more, a condition with effects.
    for body in [
        "if (!ready) pthread_cond_wait(&c, &m);",
        "while (!ready) { pthread_cond_wait(&c, &m); ready++; }",
        "while (!atomic_exchange(&f, 0)) pthread_cond_wait(&c, &m);",
        "do pthread_cond_wait(&c, &m); while (!ready);",
    ] {
        let p = c_main(
            src,
            &format!("pthread_mutex_lock(&m);\n{body}\npthread_mutex_unlock(&m);"),
        );
        let main = main_of(&p);
        let acc = accesses(&p, main);
        let registrations = acc.iter().filter(|a| *a == "load c#signals acq").count();
        assert_eq!(registrations, 1, "{body}");
        let looped = main
            .body
            .iter()
            .any(|i| matches!(i, Instr::LoopEnter { .. }));
        assert_eq!(looped, !body.starts_with("if"), "{body}");
    }
}

#[test]
fn c11_condition_variables() {
    let p = c_main(
        "mtx_t m; cnd_t c; int r;",
        "cnd_init(&c);\nmtx_lock(&m);\nr = cnd_wait(&c, &m);\nr = cnd_timedwait(&c, &m, NULL);\nmtx_unlock(&m);\ncnd_signal(&c);\ncnd_broadcast(&c);\ncnd_destroy(&c);",
    );
    let stores: Vec<String> = accesses(&p, main_of(&p))
        .into_iter()
        .filter(|a| a.starts_with("store r"))
        .collect();
    assert_eq!(stores, ["store r 0 na", "store r (_ Mul 4) na"]);
}

#[test]
fn cells_and_initial_values() {
    use Initial::*;
    // The type, and its cells when zero, indeterminate, constructed.
    type Case = (Ty, Vec<i64>, Vec<i64>, Vec<i64>);
    let cases: [Case; 7] = [
        (Ty::Mutex, vec![0, 0], vec![sync::UNINIT; 2], vec![0, 0]),
        (
            Ty::Sync(SyncTy::RecursiveMutex),
            vec![0, sync::RECURSIVE],
            vec![0, sync::RECURSIVE],
            vec![0, sync::RECURSIVE],
        ),
        (
            Ty::Sync(SyncTy::Spinlock),
            vec![0],
            vec![sync::UNINIT],
            vec![sync::UNINIT],
        ),
        (
            Ty::Sync(SyncTy::RwLock),
            vec![0],
            vec![sync::UNINIT],
            vec![0],
        ),
        (
            Ty::Sync(SyncTy::Barrier),
            vec![0, 0],
            vec![sync::UNINIT; 2],
            vec![sync::UNINIT; 2],
        ),
        (
            Ty::Sync(SyncTy::Cond),
            vec![0, 0],
            vec![sync::UNINIT; 2],
            vec![0, 0],
        ),
        (
            Ty::Sync(SyncTy::MutexAttr),
            vec![0],
            vec![sync::UNINIT],
            vec![sync::UNINIT],
        ),
    ];
    for (ty, zero, indeterminate, constructed) in cases {
        assert_eq!(sync::initial_cells(&ty, Zero), Some(zero), "{ty:?}");
        assert_eq!(
            sync::initial_cells(&ty, Indeterminate),
            Some(indeterminate),
            "{ty:?}"
        );
        assert_eq!(
            sync::initial_cells(&ty, Constructed),
            Some(constructed),
            "{ty:?}"
        );
    }
    assert_eq!(sync::initial_cells(&Ty::Thread, Zero), None);
    // Every valid value is below 2^48; the unusable ones are negative and tell themselves
    // apart by `v >> 48`.
    assert_eq!(sync::UNINIT >> 48, -1);
    assert_eq!(sync::DESTROYED >> 48, -2);
}

#[test]
fn cells_of_objects_in_arrays_and_structs() {
    // Their cells are named after the element.
    let p = c_main(
        "struct Q { pthread_mutex_t lock; pthread_cond_t nonempty; int n; }; struct Q qs[2];",
        "",
    );
    let names: Vec<&str> = p.globals.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "qs[0].lock",
            "qs[0].lock#kind",
            "qs[0].nonempty",
            "qs[0].nonempty#signals",
            "qs[0].n",
            "qs[1].lock",
            "qs[1].lock#kind",
            "qs[1].nonempty",
            "qs[1].nonempty#signals",
            "qs[1].n"
        ]
    );
    assert_eq!(p.globals[3].sync.as_ref().unwrap().object, "qs[0].nonempty");
}

#[test]
fn objects_through_pointers_and_elements() {
    let p = c_main(
        "pthread_barrier_t bs[2]; pthread_cond_t c; pthread_cond_t *pc = &c; int i;",
        "pthread_barrier_wait(&bs[i]);\npthread_cond_signal(pc);",
    );
    let main = main_of(&p);
    let locs: Vec<&Addr> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Rmw { loc, .. } => Some(loc),
            _ => None,
        })
        .collect();
    // The arrival and the round of bs[i] (bounded by the array), the signal counter of *pc.
    assert!(matches!(locs[0], Addr::Computed { lo: 0, hi: 4, .. }));
    assert!(
        matches!(locs[1], Addr::Computed { lo: 0, hi: 4, ptr } if expr(ptr).ends_with("Add 1)"))
    );
    assert!(matches!(locs[2], Addr::Computed { ptr, .. } if expr(ptr) == "(_ Add 1)"));
    assert!(checks(main)
        .contains(&"`pthread_cond_signal` on destroyed condition variable `*pc`".to_string()));
}

#[test]
fn cpp_classes_lower_like_their_c_counterparts() {
    let c = |globals: &str, body: &str| {
        let p = ok(&format!(
            "{HEAD}{globals}\nvoid *t(void *a) {{\n{body}\nreturn NULL;\n}}\nint main(void) {{ pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL); }}\n"
        ));
        let f = p.functions.iter().find(|f| f.name == "t").unwrap();
        accesses(&p, f)
    };
    let cpp = |globals: &str, body: &str| {
        let p = ok_cpp(&format!(
            "#include <mutex>\n#include <shared_mutex>\n#include <condition_variable>\n#include <thread>\n{globals}\nvoid t() {{\n{body}\n}}\nint main() {{ std::thread h(t); h.join(); }}\n"
        ));
        let f = p.functions.iter().find(|f| f.name == "t").unwrap();
        accesses(&p, f)
    };
    assert_eq!(
        c(
            "pthread_mutex_t m = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP; int g;",
            "pthread_mutex_lock(&m); pthread_mutex_lock(&m); g = 1; pthread_mutex_unlock(&m); pthread_mutex_unlock(&m); if (pthread_mutex_trylock(&m) == 0) pthread_mutex_unlock(&m);"
        ),
        cpp(
            "std::recursive_mutex m; int g;",
            "m.lock(); { std::lock_guard<std::recursive_mutex> l(m); g = 1; } m.unlock(); if (m.try_lock()) m.unlock();"
        )
    );
    assert_eq!(
        c(
            "pthread_rwlock_t m; int g;",
            "pthread_rwlock_rdlock(&m); g = g + 0; pthread_rwlock_unlock(&m); pthread_rwlock_wrlock(&m); g = 1; pthread_rwlock_unlock(&m);"
        ),
        cpp(
            "std::shared_mutex m; int g;",
            "{ std::shared_lock<std::shared_mutex> r(m); g = g + 0; } { std::unique_lock<std::shared_mutex> w(m); g = 1; }"
        )
    );
    assert_eq!(
        c(
            "pthread_mutex_t m; pthread_cond_t cv; int ready;",
            "pthread_mutex_lock(&m); while (!ready) pthread_cond_wait(&cv, &m); pthread_mutex_unlock(&m); pthread_cond_signal(&cv); pthread_cond_broadcast(&cv);"
        ),
        cpp(
            "std::mutex m; std::condition_variable cv; int ready;",
            "{ std::unique_lock<std::mutex> lk(m); cv.wait(lk, [] { return ready != 0; }); } cv.notify_one(); cv.notify_all();"
        )
    );
    assert_eq!(
        c(
            "pthread_mutex_t m; pthread_cond_t cv; int ready;",
            "pthread_mutex_lock(&m); while (!ready) pthread_cond_wait(&cv, &m); pthread_mutex_unlock(&m);"
        ),
        cpp(
            "std::mutex m; std::condition_variable cv; int ready;",
            "std::unique_lock<std::mutex> lk(m); while (!ready) cv.wait(lk);"
        )
    );
}

#[test]
fn refusals() {
    use DiagKind::*;
    let c = Lang::C;
    let cpp = Lang::Cpp;
    type Case<'s> = (Lang, &'s str, (usize, usize, DiagKind, &'s str));
    let cases: Vec<Case> = vec![
        (c, "pthread_barrier_t b;\nint main() {\n  pthread_barrier_init(&b, &b, 2);\n}\n", (3, 28, Unsupported, "barrier attributes (the attribute argument of `pthread_barrier_init` must be NULL)")),
        (c, "pthread_cond_t c; int a;\nint main() {\n  pthread_cond_init(&c, &a);\n}\n", (3, 25, Unsupported, "condition variable attributes (the attribute argument of `pthread_cond_init` must be NULL)")),
        (c, "pthread_rwlock_t r; int a;\nint main() {\n  pthread_rwlock_init(&r, &a);\n}\n", (3, 27, Unsupported, "rwlock attributes (the attribute argument of `pthread_rwlock_init` must be NULL)")),
        (c, "pthread_mutex_t m; int a;\nint main() {\n  pthread_mutex_init(&m, &a);\n}\n", (3, 26, Error, "`a` is not a pthread_mutexattr_t (`pthread_mutex_init` expects the address of one)")),
        (c, "pthread_mutex_t m;\nint main() {\n  pthread_mutex_consistent(&m);\n}\n", (3, 3, Unsupported, "call to `pthread_mutex_consistent` (this synchronisation function is not supported)")),
        (c, "pthread_mutexattr_t a;\nint main() {\n  pthread_mutexattr_setrobust(&a, 1);\n}\n", (3, 3, Unsupported, "call to `pthread_mutexattr_setrobust` (this synchronisation function is not supported)")),
        (c, "pthread_mutexattr_t a; int t;\nint main() {\n  pthread_mutexattr_gettype(&a, &t);\n}\n", (3, 3, Unsupported, "call to `pthread_mutexattr_gettype` (this synchronisation function is not supported)")),
        (c, "pthread_mutex_t m;\nint main() {\n  pthread_barrier_wait(&m);\n}\n", (3, 24, Error, "`m` is not a pthread_barrier_t (`pthread_barrier_wait` expects the address of one)")),
        (c, "pthread_barrier_t b;\nint main() {\n  pthread_barrier_wait(b);\n}\n", (3, 24, Error, "`pthread_barrier_wait` expects the address of the object: write `&b`")),
        (c, "pthread_mutex_t m;\nint main() {\n  pthread_mutex_lock(m);\n}\n", (3, 22, Error, "`pthread_mutex_lock` expects the address of the object: write `&m`")),
        (c, "int main() {\n  pthread_mutex_unlock(&q);\n}\n", (2, 25, Error, "undeclared identifier `q`")),
        (c, "pthread_mutex_t m;\nint main() {\n  pthread_mutex_lock(&m, 1);\n}\n", (3, 3, Error, "`pthread_mutex_lock` expects 1 argument, got 2")),
        (c, "pthread_barrier_t b = PTHREAD_MUTEX_INITIALIZER;\nint main() {}\n", (1, 23, Unsupported, "initialiser for a pthread_barrier_t (supported: none: call its init function)")),
        (c, "pthread_mutex_t m = 0;\nint main() {}\n", (1, 21, Unsupported, "initialiser for a pthread_mutex_t (supported: PTHREAD_MUTEX_INITIALIZER or PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP)")),
        (c, "pthread_cond_t c;\nint main() {\n  int x = c;\n}\n", (3, 11, Error, "pthread_cond_t `c` used as a value (a pthread_cond_t is not an integer: it can only be passed as `&c` to its functions)")),
        (c, "pthread_barrier_t b;\nint main() {\n  b = 1;\n}\n", (3, 3, Error, "assignment to pthread_barrier_t `b` (a pthread_barrier_t is not an integer: it can only be passed as `&b` to its functions)")),
        (c, "pthread_mutex_t m;\nint main() {\n  m = 1;\n}\n", (3, 3, Error, "assignment to pthread_mutex_t `m` (a pthread_mutex_t is not an integer: it can only be passed as `&m` to its functions)")),
        (c, "pthread_mutex_t m;\nint main() {\n  atomic_store(&m, 1);\n}\n", (3, 17, Error, "atomic operation on mutex `m` (a mutex is not an atomic integer)")),
        (c, "pthread_spinlock_t s;\nint main() {\n  atomic_store(&s, 1);\n}\n", (3, 17, Error, "atomic operation on `s`, which is not an atomic scalar")),
        (c, "pthread_cond_t c; pthread_mutex_t m; int f(void) { return 0; }\nint main() {\n  pthread_cond_timedwait(&c, &m, f());\n}\n", (3, 34, Unsupported, "deadline of a timed wait")),
        (c, "pthread_mutex_t m; int x;\nint main() {\n  pthread_mutex_lock(x);\n}\n", (3, 22, Unsupported, "`pthread_mutex_lock` on `x` (expected the address of a pthread_mutex_t)")),
        (cpp, "int main() {\n    std::timed_mutex m;\n}\n", (2, 5, Unsupported, "`std::timed_mutex` is not supported")),
        (cpp, "std::mutex m; std::condition_variable cv;\nint main() {\n    std::unique_lock<std::mutex> lk(m);\n    cv.wait_for(lk, 1);\n}\n", (4, 5, Unsupported, "`std::condition_variable::wait_for` (timed waits of std::condition_variable need std::chrono)")),
        (cpp, "std::mutex m; std::condition_variable cv;\nint main() {\n    std::lock_guard<std::mutex> lk(m);\n    cv.wait(lk);\n}\n", (4, 13, Unsupported, "`std::condition_variable::wait` with `lk` (the argument must be a std::unique_lock<std::mutex> declared in an enclosing block, or a std::mutex)")),
        (cpp, "std::mutex m; std::condition_variable cv; int r;\nint main() {\n    std::unique_lock<std::mutex> lk(m);\n    cv.wait(lk, [](int x) { return r; });\n}\n", (4, 19, Unsupported, "predicate of `std::condition_variable::wait`")),
        (cpp, "std::mutex m; std::condition_variable cv; int r;\nint main() {\n    std::unique_lock<std::mutex> lk(m);\n    cv.wait(lk, [] { return r++; });\n}\n", (4, 22, Unsupported, "predicate of `std::condition_variable::wait`")),
        (cpp, "std::mutex m;\nint main() {\n    std::shared_lock<std::mutex> l(m);\n}\n", (3, 5, Unsupported, "`std::shared_lock<std::mutex>` (std::shared_lock is supported for one std::shared_mutex only)")),
        (cpp, "std::recursive_mutex m;\nint main() {\n    std::shared_lock l(m);\n}\n", (3, 24, Error, "`m` is not a std::shared_mutex")),
        (cpp, "std::shared_mutex m;\nint main() {\n    m.lock_upgrade();\n}\n", (3, 5, Unsupported, "member `lock_upgrade` of std::shared_mutex")),
        (cpp, "std::condition_variable cv;\nint main() {\n    int x = cv.notify_one();\n}\n", (3, 13, Unsupported, "`notify_one` used as a value")),
    ];
    let mut failures = Vec::new();
    for (lang, src, (line, col, kind, msg)) in cases {
        let got = diag(lang, src);
        let same_place = (got.0, got.1, got.2) == (line, col, kind);
        if !same_place || !got.3.starts_with(msg) {
            failures.push(format!(
                "{src}\n  got  {got:?}\n  want {:?}",
                (line, col, kind, msg)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
