//! Heap memory end to end (`malloc` & co., `new` / `delete`): small programs whose verdicts
//! and counts are derived by hand, explored with every step of the incremental check verified
//! against the axioms. Each bug kind of issue 20 has a program here.

use fensyn::checker::{explore, BugKind, Control, Limits, MemoryError, Model};
use fensyn::frontend::{parse_c, parse_cpp};
use std::collections::HashSet;

const HEAD: &str = "#include <stdlib.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
                    #include <assert.h>\nstruct node { int val; struct node *next; };\n";

/// The kinds of the bugs of every execution of `src` and (executions, buggy).
fn verdict(name: &str, src: &str, cpp: bool) -> (HashSet<BugKind>, [u64; 2]) {
    let prog = if cpp {
        parse_cpp(name, src)
    } else {
        parse_c(name, &format!("{HEAD}{src}"))
    };
    let prog = prog.unwrap_or_else(|e| panic!("{name}: {e}"));
    let limits = Limits {
        verify_incremental: true,
        ..Limits::default()
    };
    let mut kinds = HashSet::new();
    let stats = explore(&prog, Model::Rc11, limits, |g| {
        kinds.extend(g.bugs.iter().map(|b| b.kind));
        Control::Continue
    });
    assert!(stats.incomplete.is_none(), "{name}: {:?}", stats.incomplete);
    (kinds, [stats.executions, stats.buggy])
}

fn memory(e: MemoryError) -> BugKind {
    BugKind::Memory(e)
}

const PUBLISH: &str = "_Atomic(struct node *) top;
void *producer(void *arg) {
  struct node *n = malloc(sizeof *n);
  if (!n) abort();
  n->val = 42; n->next = NULL;
  atomic_store_explicit(&top, n, memory_order_ORDER);
  return NULL; }
void *consumer(void *arg) {
  struct node *n = atomic_load_explicit(&top, memory_order_LOAD);
  if (n != NULL) assert(n->val == 42);
  return NULL; }
int main(void) { pthread_t a, b;
  pthread_create(&a, NULL, producer, NULL); pthread_create(&b, NULL, consumer, NULL);
  pthread_join(a, NULL); pthread_join(b, NULL);
  free(atomic_load(&top)); return 0; }";

/// A node published by a relaxed store: the reader sees no value (1 execution), or the node
/// with its `val` never written (uninitialised read, failed assertion, race) or written (a
/// race): 3 executions, 2 buggy. With release / acquire: 2 executions, no bug.
#[test]
fn publishing_a_malloced_node() {
    let relaxed = PUBLISH
        .replace("ORDER", "relaxed")
        .replace("LOAD", "relaxed");
    let (k, c) = verdict("relaxed", &relaxed, false);
    assert_eq!(c, [3, 2]);
    let want = [
        BugKind::Assertion,
        BugKind::Race,
        memory(MemoryError::UninitialisedRead),
    ];
    assert_eq!(k, want.into_iter().collect());
    let fixed = PUBLISH
        .replace("ORDER", "release")
        .replace("LOAD", "acquire");
    assert_eq!(verdict("fixed", &fixed, false), (HashSet::new(), [2, 0]));
}

/// The reader got the pointer (published before its creation) and reads through it while
/// main frees it without joining first: a use after free (racing with the free), 1 execution.
#[test]
fn a_stale_pointer_is_used_after_free() {
    let src = "_Atomic(int *) shared;
void *reader(void *arg) {
  int *p = atomic_load_explicit(&shared, memory_order_acquire);
  if (p) assert(*p == 1);
  return NULL; }
int main(void) { int *p = malloc(sizeof *p); *p = 1;
  atomic_store_explicit(&shared, p, memory_order_release);
  pthread_t t; pthread_create(&t, NULL, reader, NULL);
  free(p); pthread_join(t, NULL); return 0; }";
    let (k, c) = verdict("stale", src, false);
    assert_eq!(c, [1, 1]);
    assert!(k.contains(&memory(MemoryError::UseAfterFree)), "{k:?}");
    // Joined before the free: no bug.
    let joined = src.replace(
        "free(p); pthread_join(t, NULL);",
        "pthread_join(t, NULL); free(p);",
    );
    assert_eq!(verdict("joined", &joined, false), (HashSet::new(), [1, 0]));
}

/// One program per wrong free, each 1 execution.
#[test]
fn wrong_frees() {
    let cases = [
        (
            "double",
            "int main(void) { int *p = malloc(sizeof *p); free(p); free(p); return 0; }",
            MemoryError::DoubleFree,
        ),
        (
            "global",
            "int g;\nint main(void) { int *p = &g; free(p); return 0; }",
            MemoryError::InvalidFree,
        ),
        (
            "interior",
            "int main(void) { int *a = malloc(4 * sizeof(int)); free(a + 1); return 0; }",
            MemoryError::InvalidFree,
        ),
        (
            "after_free",
            "int main(void) { struct node *n = malloc(sizeof *n); n->val = 1; free(n);\n\
             n->val = 2; return 0; }",
            MemoryError::UseAfterFree,
        ),
        (
            "one_past",
            "int main(void) { int *a = malloc(3 * sizeof(int)); a[2] = 1; a[3] = 1; free(a);\n\
             return 0; }",
            MemoryError::OutOfBounds,
        ),
        (
            "runtime_length",
            "int main(void) { int n = 2; int *a = malloc(n * sizeof(int)); a[1] = 1; a[n] = 1;\n\
             free(a); return 0; }",
            MemoryError::OutOfBounds,
        ),
        (
            "too_small",
            "int main(void) { struct node *m = malloc(sizeof(int)); m->val = 1; m->next = 0;\n\
             free(m); return 0; }",
            MemoryError::OutOfBounds,
        ),
        (
            "after_realloc",
            "int main(void) { int *a = malloc(sizeof(int)); *a = 1; int *b = realloc(a, 8);\n\
             *a = 2; free(b); return 0; }",
            MemoryError::UseAfterFree,
        ),
    ];
    for (name, src, e) in cases {
        let (k, c) = verdict(name, src, false);
        assert_eq!(c, [1, 1], "{name}");
        assert!(k.contains(&memory(e)), "{name}: {k:?}");
    }
}

/// calloc is zeroed; realloc keeps what was written; neither is a bug.
#[test]
fn calloc_and_realloc_keep_values() {
    let src = "int main(void) { int *a = calloc(4, sizeof(int)); assert(a[3] == 0);
  a[0] = 1; a[1] = 2; a[2] = 3; a[3] = 4;
  a = realloc(a, 6 * sizeof(int)); assert(a[1] == 2 && a[3] == 4);
  a = realloc(a, 2 * sizeof(int)); assert(a[0] == 1 && a[1] == 2);
  free(a); a = realloc(NULL, sizeof(int)); *a = 5; free(a); return 0; }";
    assert_eq!(verdict("calloc", src, false), (HashSet::new(), [1, 0]));
    let src = "int main(void) { int *a = malloc(2 * sizeof(int)); a[0] = 1; assert(a[1] == 0);
  free(a); return 0; }";
    let (k, c) = verdict("uninit", src, false);
    assert_eq!(c, [1, 1]);
    assert!(k.contains(&memory(MemoryError::UninitialisedRead)), "{k:?}");
}

const CPP_STACK: &str = "#include <atomic>
#include <thread>
#include <cassert>
struct Node { int val; Node *next; };
std::atomic<Node *> top{nullptr};
void push(int v) {
  Node *n = new Node{v, nullptr};
  Node *old = top.load(std::memory_order_relaxed);
  do { n->next = old; } while (!top.compare_exchange_weak(old, n, std::memory_order_PUB,
    std::memory_order_relaxed));
}
void t1() { push(1); }
void t2() {
  Node *n = top.load(std::memory_order_READ);
  if (n != nullptr) assert(n->val == 1);
}
int main() {
  std::thread a(t1), b(t2);
  a.join(); b.join();
  Node *n = top.load();
  DELETE
  return 0;
}";

/// A C++ Treiber push with `new`, read by another thread: clean with release / acquire (2
/// executions), racy with relaxed (3, 2 buggy); `free` of a `new`ed node and `delete[]` of
/// one are invalid frees.
#[test]
fn cpp_new_and_delete() {
    let clean = CPP_STACK
        .replace("PUB", "release")
        .replace("READ", "acquire")
        .replace("DELETE", "delete n;");
    assert_eq!(verdict("clean", &clean, true), (HashSet::new(), [2, 0]));
    let relaxed = CPP_STACK
        .replace("PUB", "relaxed")
        .replace("READ", "relaxed")
        .replace("DELETE", "delete n;");
    let (k, c) = verdict("relaxed", &relaxed, true);
    assert_eq!(c, [3, 2]);
    assert!(k.contains(&BugKind::Race), "{k:?}");
    for wrong in ["free(n);", "delete[] n;"] {
        let src = CPP_STACK
            .replace("PUB", "release")
            .replace("READ", "acquire")
            .replace("DELETE", wrong)
            .replace("#include <atomic>", "#include <atomic>\n#include <cstdlib>");
        let (k, c) = verdict(wrong, &src, true);
        assert_eq!(c, [2, 2], "{wrong}");
        assert_eq!(k, [memory(MemoryError::InvalidFree)].into_iter().collect());
    }
    let src = "int main() { int *a = new int[3]; a[0] = 1; int x = a[0]; delete[] a;
  int *b = new int; int y = *b; delete b; return x + y; }";
    let (k, c) = verdict("arrays", src, true);
    assert_eq!(c, [1, 1]);
    assert_eq!(
        k,
        [memory(MemoryError::UninitialisedRead)]
            .into_iter()
            .collect()
    );
}

const UNIQUE: &str = "#include <memory>
#include <atomic>
#include <thread>
struct Node { int v; int w; };
std::atomic<Node *> pub{nullptr};
void reader() {
  Node *n = pub.load(std::memory_order_acquire);
  if (n) { int x = n->v; (void)x; } }
int main() {
  std::thread t(reader);
  JOIN_FIRST
  { auto p = std::make_unique<Node>(1, 2);
    pub.store(p.get(), std::memory_order_release); }
  JOIN_LAST
  return 0; }";

/// A `std::make_unique`d node's raw pointer published to a reader while its owner's scope
/// ends: the reader misses it (1 execution) or reads it, racing with the delete of the
/// owner's scope end (1 buggy). Joined before the scope ends: the reader sees null, clean.
#[test]
fn a_unique_ptr_is_deleted_at_its_scope_end() {
    let racy = UNIQUE
        .replace("JOIN_FIRST", "")
        .replace("JOIN_LAST", "t.join();");
    let (kinds, counts) = verdict("unique_racy.cpp", &racy, true);
    assert_eq!(counts, [2, 1]);
    assert!(
        kinds.contains(&memory(MemoryError::UseAfterFree)),
        "{kinds:?}"
    );
    let joined = UNIQUE
        .replace("JOIN_FIRST", "t.join();")
        .replace("JOIN_LAST", "");
    assert_eq!(
        verdict("unique_joined.cpp", &joined, true),
        (HashSet::new(), [1, 0])
    );
}

/// `release()` gives ownership up (the scope end deletes nothing; the explicit `delete` is
/// the only one); a second `delete` is a double free. `reset`, move and `make_unique<T[]>`
/// delete exactly once.
#[test]
fn unique_ptr_ownership_moves_are_exact() {
    let body = |extra: &str| {
        format!(
            "#include <memory>\n#include <cassert>\nstruct Node {{ int v; Node *next; }};
int main() {{ Node *r;
  {{ auto p = std::make_unique<Node>(); r = p.release(); assert(!p); }}
  delete r; {extra}
  std::unique_ptr<Node> a(new Node{{3, nullptr}});
  std::unique_ptr<Node> b = std::move(a);
  assert(!a && b->v == 3);
  b.reset(new Node{{4, nullptr}}); b = std::make_unique<Node>(5); assert(b->v == 5);
  auto arr = std::make_unique<int[]>(3); arr[2] = 1; assert(arr[0] == 0);
  return 0; }}"
        )
    };
    assert_eq!(
        verdict("release.cpp", &body(""), true),
        (HashSet::new(), [1, 0])
    );
    let (kinds, _) = verdict("release_twice.cpp", &body("delete r;"), true);
    assert!(
        kinds.contains(&memory(MemoryError::DoubleFree)),
        "{kinds:?}"
    );
}

/// A pointer to arrays (`unsigned (*lists)[4]`, treiber-stack's per-thread free lists), given
/// a `malloc`ed block through the cast `(unsigned (*)[4])`: `lists[i][j]` is element `j` of
/// the `i`-th array, 16 bytes further per `i`. Reading past what was written is uninitialised.
#[test]
fn pointers_to_arrays_index_rows_of_a_malloced_block() {
    let prog = |read: &str| {
        format!(
            "static unsigned int (*lists)[4];
int main(void) {{
  lists = (unsigned int (*)[4])malloc(2 * sizeof(*lists));
  if (!lists) abort();
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      lists[i][j] = 10 * i + j;
  assert(sizeof(*lists) == 16 && {read} == 13 && (unsigned int *)(lists + 1) == &lists[1][0]);
  free(lists);
  return 0; }}"
        )
    };
    assert_eq!(
        verdict("rows", &prog("lists[1][3]"), false),
        (HashSet::new(), [1, 0])
    );
    assert_eq!(verdict("wrong", &prog("lists[0][3]"), false).1, [1, 1]);
}
