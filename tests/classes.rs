//! C++ classes end to end: objects whose destructors run where their scope ends, classes
//! nested in classes, default arguments and value-initialisation (`T()`). Single-threaded
//! programs whose assertions hold only if the lowering is right, each with a variant whose
//! assertion must fail.

use fensyn::checker::{explore, Control, Limits, Model};
use fensyn::frontend::parse_cpp;

/// (executions, buggy) of the C++ program `src` under RC11.
fn counts(src: &str) -> [u64; 2] {
    let prog = parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let stats = explore(&prog, Model::Rc11, Limits::default(), |_| Control::Continue);
    assert!(stats.incomplete.is_none(), "{:?}", stats.incomplete);
    [stats.executions, stats.buggy]
}

/// A destructor runs wherever control leaves the object's block: its end, `continue`,
/// `break`, `return` (after the value), `goto`, and once per pass of a loop; in reverse order
/// of declaration. The counter of live objects is back at 0 at the end only if each ran once.
#[test]
fn destructors_run_at_every_exit_of_their_block() {
    let prog = |extra: &str| {
        format!(
            "#include <atomic>\n#include <cassert>\n\
std::atomic<int> live(0); int order = 0;
struct tracker {{ int id; tracker(int i) : id(i) {{ live.fetch_add(1); }}
  ~tracker() {{ order = order * 10 + id; live.fetch_sub(1); }} }};
int early(int x) {{ tracker t(7); if (x) return live.load(); return 0; }}
int main() {{
  for (int i = 0; i < 3; i++) {{ tracker t(1); if (i == 0) continue; if (i == 1) break; }}
  {{ tracker a(2); tracker b(3); }}
  {{ tracker c(4); goto out; }}
out:
  int seen = early(1);
  assert(seen == 1);
  assert(order == 113247);
  {extra}
  assert(live.load() == 0);
  return 0;
}}\n"
        )
    };
    assert_eq!(counts(&prog("")), [1, 0]);
    // An object left in scope at the assertion: the counter is not back at 0.
    assert_eq!(counts(&prog("tracker left(5);")), [1, 1]);
}

/// A class nested in a class (`outer::inner`), a constructor argument that parses as a type
/// (`g(m)`), default arguments (`T v = T()`), `T()` of a template parameter, and a static
/// constant defined by an expression of another (`M = L - 1`), reached through an object
/// (`sp->M`).
#[test]
fn nested_classes_default_arguments_and_value_initialisation() {
    let src = "#include <cassert>
template <typename T> struct box {
  struct cell { T v; cell(T x = T()) : v(x) {} };
  cell c;
  T get() { return c.v; }
};
struct counter { int n; counter() : n(0) {}
  class bump { counter *c; public: bump(counter &k) : c(&k) { c->n += 1; } ~bump() { c->n += 10; } };
};
int scaled(int a, int b = 3) { return a * b; }
struct sizes { static const int L = 16; static const int M = L - 1; int a[L]; int mask() { return M; } };
counter k;
sizes s;
int main() {
  box<int> b;
  assert(b.get() == 0);
  { counter::bump g(k); assert(k.n == 1); }
  assert(k.n == 11);
  assert(scaled(2) == 6 && scaled(2, 5) == 10);
  assert(s.mask() == 15);
  sizes *sp = &s;
  assert(sp->M == 15 && s.L == 16);
  return 0;
}
";
    assert_eq!(counts(src), [1, 0]);
    assert_eq!(
        counts(&src.replace("assert(k.n == 11);", "assert(k.n == 1);")),
        [1, 1]
    );
}

/// A struct nested in a class is `outer::node`, and also `node`: `struct node` (C's
/// elaborated spelling, inside and outside its own body) names it.
#[test]
fn nested_structs_by_their_elaborated_name() {
    let src = "#include <cassert>
class stack {
public:
  struct node { struct node *next; int v; };
  struct node *head;
  stack() : head(nullptr) {}
  void push(struct node *n) { n->next = head; head = n; }
};
stack s;
int main() {
  stack::node a;
  struct node b;
  a.v = 1;
  b.v = 2;
  s.push(&a);
  s.push(&b);
  assert(s.head->v == 2 && s.head->next->v == 1);
  return 0;
}
";
    assert_eq!(counts(src), [1, 0]);
    assert_eq!(
        counts(&src.replace("s.head->v == 2", "s.head->v == 1")),
        [1, 1]
    );
}
