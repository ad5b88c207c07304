//! Local objects in memory (`Instr::Alloc`): every program here is explored with the
//! incremental check verified against the axioms at every step, no graph may be visited twice,
//! and its counts and verdict must equal those of a twin written with global objects instead
//! (the brute-force oracle has no allocation; a global stands for the local of each thread
//! that runs it, which is what the allocation models).

use fensyn::checker::{explore, Control, Limits, Model, Stats};
use fensyn::frontend::parse_c;
use std::collections::BTreeSet;

const HEAD: &str = "#include <pthread.h>\n#include <stdatomic.h>\n#include <assert.h>\n";

/// (executions, blocked, bounded, buggy) of `src` under `model`, exploring with every step
/// verified; panics if a graph is visited twice.
fn counts(name: &str, src: &str, model: Model) -> [u64; 4] {
    let prog = parse_c(name, &format!("{HEAD}{src}")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let limits = Limits {
        verify_incremental: true,
        ..Limits::default()
    };
    let mut seen = BTreeSet::new();
    let stats: Stats = explore(&prog, model, limits, |g| {
        assert!(seen.insert(g.canonical_key()), "{name}: a graph twice");
        Control::Continue
    });
    assert!(stats.incomplete.is_none(), "{name}: {:?}", stats.incomplete);
    [stats.executions, stats.blocked, stats.bounded, stats.buggy]
}

/// Programs with local objects and their twins with globals.
const PAIRS: &[(&str, &str, &str)] = &[
    (
        "message_in_a_local_struct",
        "struct msg { int data; atomic_int ready; };
void *writer(void *p) { struct msg *m = p; m->data = 42;
  atomic_store_explicit(&m->ready, 1, memory_order_release); return NULL; }
void *reader(void *p) { struct msg *m = p;
  if (atomic_load_explicit(&m->ready, memory_order_acquire)) assert(m->data == 42); return NULL; }
int main(void) { struct msg m = {0, 0}; pthread_t a, b;
  pthread_create(&a, NULL, writer, &m); pthread_create(&b, NULL, reader, &m);
  pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
        "struct msg { int data; atomic_int ready; };
struct msg g;
void *writer(void *p) { struct msg *m = p; m->data = 42;
  atomic_store_explicit(&m->ready, 1, memory_order_release); return NULL; }
void *reader(void *p) { struct msg *m = p;
  if (atomic_load_explicit(&m->ready, memory_order_acquire)) assert(m->data == 42); return NULL; }
int main(void) { pthread_t a, b;
  pthread_create(&a, NULL, writer, &g); pthread_create(&b, NULL, reader, &g);
  pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
    ),
    (
        "relaxed_message_in_a_local_struct",
        "struct msg { int data; atomic_int ready; };
void *writer(void *p) { struct msg *m = p; m->data = 42;
  atomic_store_explicit(&m->ready, 1, memory_order_relaxed); return NULL; }
void *reader(void *p) { struct msg *m = p;
  if (atomic_load_explicit(&m->ready, memory_order_relaxed)) assert(m->data == 42); return NULL; }
int main(void) { struct msg m = {0, 0}; pthread_t a, b;
  pthread_create(&a, NULL, writer, &m); pthread_create(&b, NULL, reader, &m);
  pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
        "struct msg { int data; atomic_int ready; };
struct msg g;
void *writer(void *p) { struct msg *m = p; m->data = 42;
  atomic_store_explicit(&m->ready, 1, memory_order_relaxed); return NULL; }
void *reader(void *p) { struct msg *m = p;
  if (atomic_load_explicit(&m->ready, memory_order_relaxed)) assert(m->data == 42); return NULL; }
int main(void) { pthread_t a, b;
  pthread_create(&a, NULL, writer, &g); pthread_create(&b, NULL, reader, &g);
  pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
    ),
    (
        "thread_local_arrays_in_two_threads",
        "atomic_int x;
void *t(void *arg) { int buf[2]; buf[0] = atomic_load(&x); atomic_store(&x, buf[0] + 1);
  buf[1] = atomic_load(&x); assert(buf[1] > buf[0]); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, NULL);
  pthread_create(&b, NULL, t, NULL); pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
        "atomic_int x;
int buf[2][2];
void *t(void *arg) { long me = (long) arg; buf[me][0] = atomic_load(&x);
  atomic_store(&x, buf[me][0] + 1); buf[me][1] = atomic_load(&x);
  assert(buf[me][1] > buf[me][0]); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, (void *) 0);
  pthread_create(&b, NULL, t, (void *) 1); pthread_join(a, NULL); pthread_join(b, NULL);
  return 0; }",
    ),
    (
        "allocation_after_a_revisited_read",
        "atomic_int x, y;
void *t1(void *a) { int v = atomic_load_explicit(&x, memory_order_relaxed); int arr[2] = {0, 0};
  arr[v] = 1; atomic_store_explicit(&y, arr[0] * 10 + arr[1], memory_order_relaxed);
  return NULL; }
void *t2(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed);
  int r = atomic_load_explicit(&y, memory_order_relaxed); assert(r != 1); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL); pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
        "atomic_int x, y;
int arr[2];
void *t1(void *a) { int v = atomic_load_explicit(&x, memory_order_relaxed);
  arr[v] = 1; atomic_store_explicit(&y, arr[0] * 10 + arr[1], memory_order_relaxed);
  return NULL; }
void *t2(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed);
  int r = atomic_load_explicit(&y, memory_order_relaxed); assert(r != 1); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL); pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
    ),
    (
        "address_taken_scalar_and_atomic_local",
        "atomic_int x;
void *t(void *arg) { atomic_int mine = 0; int r = 0; int *p = &r;
  *p = atomic_fetch_add(&x, 1); atomic_store(&mine, r); assert(atomic_load(&mine) < 2);
  return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, NULL);
  pthread_create(&b, NULL, t, NULL); pthread_join(a, NULL); pthread_join(b, NULL); return 0; }",
        "atomic_int x;
atomic_int mine[2];
int r[2];
void *t(void *arg) { long me = (long) arg; int *p = &r[me];
  *p = atomic_fetch_add(&x, 1); atomic_store(&mine[me], r[me]);
  assert(atomic_load(&mine[me]) < 2); return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, (void *) 0);
  pthread_create(&b, NULL, t, (void *) 1); pthread_join(a, NULL); pthread_join(b, NULL);
  return 0; }",
    ),
    (
        "objects_declared_in_a_loop",
        "atomic_int x;
void *t(void *arg) { for (int i = 0; i < 2; i++) { int cell[1]; cell[0] = atomic_load(&x);
  atomic_store(&x, cell[0] + 1); } return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, NULL);
  pthread_create(&b, NULL, t, NULL); pthread_join(a, NULL); pthread_join(b, NULL);
  assert(atomic_load(&x) == 4); return 0; }",
        "atomic_int x;
int cell[2][1];
void *t(void *arg) { long me = (long) arg; for (int i = 0; i < 2; i++) {
  cell[me][0] = atomic_load(&x); atomic_store(&x, cell[me][0] + 1); } return NULL; }
int main(void) { pthread_t a, b; pthread_create(&a, NULL, t, (void *) 0);
  pthread_create(&b, NULL, t, (void *) 1); pthread_join(a, NULL); pthread_join(b, NULL);
  assert(atomic_load(&x) == 4); return 0; }",
    ),
    (
        "mutex_in_a_local_struct",
        "struct shared { pthread_mutex_t lock; int count; };
void *worker(void *arg) { struct shared *s = arg; pthread_mutex_lock(&s->lock); s->count++;
  pthread_mutex_unlock(&s->lock); return NULL; }
int main(void) { struct shared s; s.count = 0; pthread_mutex_init(&s.lock, NULL);
  pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &s);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL); assert(s.count == 2);
  pthread_mutex_destroy(&s.lock); return 0; }",
        "struct shared { pthread_mutex_t lock; int count; };
struct shared g;
void *worker(void *arg) { struct shared *s = arg; pthread_mutex_lock(&s->lock); s->count++;
  pthread_mutex_unlock(&s->lock); return NULL; }
int main(void) { g.count = 0; pthread_mutex_init(&g.lock, NULL);
  pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &g);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL); assert(g.count == 2);
  pthread_mutex_destroy(&g.lock); return 0; }",
    ),
    (
        "local_barrier_and_condition_variable",
        "atomic_int x, y; pthread_barrier_t *bp; pthread_mutex_t m; pthread_cond_t *cv; int done;
void *t1(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); pthread_barrier_wait(bp);
  assert(atomic_load_explicit(&y, memory_order_relaxed) == 1);
  pthread_mutex_lock(&m); done = 1; pthread_cond_signal(cv); pthread_mutex_unlock(&m);
  return NULL; }
void *t2(void *a) { atomic_store_explicit(&y, 1, memory_order_relaxed); pthread_barrier_wait(bp);
  pthread_mutex_lock(&m); while (!done) pthread_cond_wait(cv, &m); pthread_mutex_unlock(&m);
  return NULL; }
int main(void) { pthread_barrier_t b; pthread_cond_t c; pthread_barrier_init(&b, NULL, 2);
  pthread_cond_init(&c, NULL); bp = &b; cv = &c; pthread_t a, d;
  pthread_create(&a, NULL, t1, NULL); pthread_create(&d, NULL, t2, NULL);
  pthread_join(a, NULL); pthread_join(d, NULL); pthread_barrier_destroy(&b);
  pthread_cond_destroy(&c); return 0; }",
        "atomic_int x, y; pthread_barrier_t *bp; pthread_mutex_t m; pthread_cond_t *cv; int done;
pthread_barrier_t b; pthread_cond_t c;
void *t1(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); pthread_barrier_wait(bp);
  assert(atomic_load_explicit(&y, memory_order_relaxed) == 1);
  pthread_mutex_lock(&m); done = 1; pthread_cond_signal(cv); pthread_mutex_unlock(&m);
  return NULL; }
void *t2(void *a) { atomic_store_explicit(&y, 1, memory_order_relaxed); pthread_barrier_wait(bp);
  pthread_mutex_lock(&m); while (!done) pthread_cond_wait(cv, &m); pthread_mutex_unlock(&m);
  return NULL; }
int main(void) { pthread_barrier_init(&b, NULL, 2);
  pthread_cond_init(&c, NULL); bp = &b; cv = &c; pthread_t a, d;
  pthread_create(&a, NULL, t1, NULL); pthread_create(&d, NULL, t2, NULL);
  pthread_join(a, NULL); pthread_join(d, NULL); pthread_barrier_destroy(&b);
  pthread_cond_destroy(&c); return 0; }",
    ),
    (
        "compound_literals_and_struct_copies",
        "struct pair { int a, b; }; struct pair shared; atomic_int flag;
void *t(void *p) { int *v = p; struct pair mine = { v[0], v[1] }; shared = mine;
  atomic_store_explicit(&flag, 1, memory_order_release); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, (int[]){ 3, 4 });
  if (atomic_load_explicit(&flag, memory_order_acquire)) {
    struct pair got = shared; assert(got.a + got.b == 7); }
  pthread_join(h, NULL); return 0; }",
        "struct pair { int a, b; }; struct pair shared; atomic_int flag;
int lit[2] = { 3, 4 }; struct pair mine; struct pair got;
void *t(void *p) { int *v = p; mine.a = v[0]; mine.b = v[1];
  shared.a = mine.a; shared.b = mine.b;
  atomic_store_explicit(&flag, 1, memory_order_release); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, lit);
  if (atomic_load_explicit(&flag, memory_order_acquire)) {
    got.a = shared.a; got.b = shared.b; assert(got.a + got.b == 7); }
  pthread_join(h, NULL); return 0; }",
    ),
];

#[test]
fn local_objects_explore_like_their_global_twins() {
    let mut problems = Vec::new();
    for (name, local, global) in PAIRS {
        for model in [Model::Rc11, Model::Sc, Model::Tso] {
            let got = counts(name, local, model);
            let want = counts(&format!("{name}_twin"), global, model);
            if got != want {
                problems.push(format!("{name} under {model}: {got:?}, twin {want:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn hand_derived_counts_of_local_objects() {
    // MP through a local struct: the reader sees the flag or not (2 executions); relaxed, it
    // may also read the allocation's 0 after seeing the flag (3 executions), and both
    // executions in which it sees the flag race on the data.
    assert_eq!(counts("mp", PAIRS[0].1, Model::Rc11), [2, 0, 0, 0]);
    assert_eq!(counts("mp_rlx", PAIRS[1].1, Model::Rc11), [3, 0, 0, 2]);
    // Two increments by load/store: each thread's second load reads its own store or the
    // other's later one; its assertion holds in every execution.
    assert_eq!(counts("arrays", PAIRS[2].1, Model::Sc)[3], 0);
}

#[test]
fn an_index_out_of_a_local_array_is_undefined_behaviour() {
    let src = "void *t(void *arg) { int a[2]; int i = 2; a[i] = 1; return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL); return 0; }";
    let prog = parse_c("oob.c", &format!("{HEAD}{src}")).unwrap();
    let mut messages = Vec::new();
    explore(&prog, Model::Rc11, Limits::default(), |g| {
        messages.extend(g.bugs.iter().map(|b| b.message.clone()));
        Control::Continue
    });
    // Index 2 of a 2-element local array is its red zone.
    assert_eq!(
        messages,
        ["out-of-bounds access (just past the end of `t::a`, 2 cells)"]
    );
}

/// Running off a local array through a pointer reaches its red zone, never the object
/// allocated after it (found by the brute-force oracle, which numbers objects differently).
#[test]
fn a_pointer_running_off_a_local_array_is_out_of_bounds() {
    let (m, c) = bug_messages(
        "red_zone",
        "void *t(void *arg) { int *p = arg; p[1] = 5; return NULL; }
int main(void) { int a[1] = { 0 }; int b[1] = { 0 }; pthread_t h;
  pthread_create(&h, NULL, t, a); pthread_join(h, NULL); assert(b[0] == 0); return 0; }",
    );
    assert_eq!(c, [1, 0, 0, 1]);
    assert_eq!(
        m,
        ["out-of-bounds access (just past the end of `main::a`, 1 cells)"]
    );
}

/// The messages of the bugs of every execution of `src` (with every step verified).
fn bug_messages(name: &str, src: &str) -> (Vec<String>, [u64; 4]) {
    let prog = parse_c(name, &format!("{HEAD}{src}")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let limits = Limits {
        verify_incremental: true,
        ..Limits::default()
    };
    let mut messages = Vec::new();
    let stats = explore(&prog, Model::Rc11, limits, |g| {
        messages.extend(g.bugs.iter().map(|b| b.message.clone()));
        Control::Continue
    });
    messages.sort();
    messages.dedup();
    let c = [stats.executions, stats.blocked, stats.bounded, stats.buggy];
    (messages, c)
}

/// A local object's lifetime ends when its function returns: an access after that (hb-after
/// the end) is undefined behaviour, one unordered with it races with it; `main`'s objects live
/// until the program ends. Counts derived by hand: the end adds no execution.
#[test]
fn accesses_after_a_local_object_s_lifetime_are_bugs() {
    // The parent hands its local to a child it does not join, and returns: the child's write
    // is unordered with the end (1 execution, buggy).
    let (m, c) = bug_messages(
        "race_with_end",
        "void *child(void *arg) { int *p = arg; *p = 2; return NULL; }
void *parent(void *arg) { int local = 1; pthread_t c; pthread_create(&c, NULL, child, &local);
  return NULL; }
int main(void) { pthread_t t; pthread_create(&t, NULL, parent, NULL); pthread_join(t, NULL);
  return 0; }",
    );
    assert_eq!(c, [1, 0, 0, 1]);
    assert_eq!(
        m,
        ["access to `parent::local` races with the end of its lifetime"]
    );
    // A helper returns the address of its local; the caller reads through it after the
    // helper returned (1 execution, buggy).
    let (m, c) = bug_messages(
        "after_end",
        "static int *leak(void) { int x = 5; return &x; }
void *t(void *a) { int *p = leak(); int v = *p; return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL);
  return 0; }",
    );
    assert_eq!(c, [1, 0, 0, 1]);
    assert_eq!(m, ["access to `leak::x` after the end of its lifetime"]);
    // Joined before the return, and main's own object passed to a thread: no bug.
    let (m, c) = bug_messages(
        "joined",
        "void *child(void *arg) { int *p = arg; *p = 2; return NULL; }
void *parent(void *arg) { int local = 1; pthread_t c; pthread_create(&c, NULL, child, &local);
  pthread_join(c, NULL); assert(local == 2); return NULL; }
int main(void) { int mine[2] = {0, 0}; pthread_t t, u; pthread_create(&t, NULL, parent, NULL);
  pthread_create(&u, NULL, child, mine); pthread_join(t, NULL); pthread_join(u, NULL);
  return mine[0] - 2; }",
    );
    assert_eq!((m, c), (Vec::<String>::new(), [1, 0, 0, 0]));
    // A local declared in a loop body of a helper called twice: each call's object ends at
    // its return, and the second call allocates a new one (no bug).
    let (m, _) = bug_messages(
        "helper_twice",
        "atomic_int x;
static int bump(void) { int tmp[1]; tmp[0] = atomic_fetch_add(&x, 1); return tmp[0]; }
void *t(void *a) { for (int i = 0; i < 2; i++) bump(); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL);
  assert(atomic_load(&x) == 2); return 0; }",
    );
    assert!(m.is_empty(), "{m:?}");
}

/// A C scalar local without initialiser is indeterminate: reading it before any write is a
/// bug; written first, or an aggregate copied with members never written, it is not.
#[test]
fn reads_of_never_initialised_locals_are_bugs() {
    let (m, c) = bug_messages(
        "uninit",
        "void *t(void *a) { int x; int *p = &x; int y = *p; return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL);
  return 0; }",
    );
    assert_eq!(c, [1, 0, 0, 1]);
    assert_eq!(m, ["read of `t::x`, which was never initialised"]);
    // Another thread initialises it, unordered: read before the write (buggy) or after it
    // (a race with the write: buggy too) — 2 executions, both buggy, one of them uninitialised.
    let (m, c) = bug_messages(
        "uninit_shared",
        "void *w(void *a) { int *p = a; *p = 1; return NULL; }
void *t(void *a) { int x; int *p = &x; pthread_t h; pthread_create(&h, NULL, w, p);
  int y = *p; pthread_join(h, NULL); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL);
  return 0; }",
    );
    assert_eq!(c, [2, 0, 0, 2]);
    assert!(
        m.contains(&"read of `t::x`, which was never initialised".to_string()),
        "{m:?}"
    );
    let (m, _) = bug_messages(
        "initialised",
        "struct s { int a, b; };
void *t(void *arg) { int x; int *p = &x; *p = 3; struct s one; one.a = *p;
  struct s two = one; assert(two.a == 3); return NULL; }
int main(void) { pthread_t h; pthread_create(&h, NULL, t, NULL); pthread_join(h, NULL);
  return 0; }",
    );
    assert!(m.is_empty(), "{m:?}");
}
