//! Tests of class templates (`templates.rs`): an instance lowers exactly like the class it
//! spells out, instances are made once per distinct argument list, members defined out of line
//! reach every instance, and what is not supported is refused at its position.

use super::*;

fn ok(src: &str) -> Program {
    let p = parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn refused(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_cpp("t.cpp", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// Every function's instructions, for comparing two programs that must lower alike.
fn bodies(p: &Program) -> Vec<String> {
    p.functions
        .iter()
        .map(|f| format!("{}: {:?}", f.name, f.body))
        .collect()
}

const THREADS: &str = "
void producer() { r.push(5); }
void consumer() { int v; if (r.pop(&v)) assert(v == 5); }
int main() {
    std::thread a(producer), b(consumer);
    a.join(); b.join();
    return 0;
}
";

const RING_BODY: &str = "
public:
    ring() : head(0), tail(0) {}
    bool push(T v) {
        int h = head.load(std::memory_order_relaxed);
        if (h - tail.load(std::memory_order_acquire) == N) return false;
        buf[h % N].store(v, std::memory_order_relaxed);
        head.store(h + 1, std::memory_order_release);
        return true;
    }
    bool pop(T *v);
private:
    std::atomic<T> buf[N];
    std::atomic<int> head;
    std::atomic<int> tail;
";

const POP: &str = "{
    int t = tail.load(std::memory_order_relaxed);
    if (head.load(std::memory_order_acquire) == t) return false;
    *v = buf[t % N].load(std::memory_order_relaxed);
    tail.store(t + 1, std::memory_order_release);
    return true;
}";

#[test]
fn an_instance_lowers_like_the_class_it_spells_out() {
    let head = "#include <atomic>\n#include <thread>\n#include <cassert>\n";
    let template = format!(
        "{head}template <typename T, int N>\nclass ring {{{RING_BODY}}};\n\
         template <typename T, int N>\nbool ring<T, N>::pop(T *v) {POP}\nring<int, 2> r;\n{THREADS}"
    );
    let plain = format!(
        "{head}typedef int T;\nclass ring {{\n    static const int N = 2;{RING_BODY}}};\n\
         bool ring::pop(T *v) {POP}\nring r;\n{THREADS}"
    );
    let (a, b) = (ok(&template), ok(&plain));
    assert_eq!(bodies(&a), bodies(&b));
    assert_eq!(a.globals.len(), b.globals.len());
    assert_eq!(a.globals.len(), 4);
}

#[test]
fn one_instance_per_distinct_argument_list() {
    let src = "#include <atomic>
template <typename T, int N> struct ring { std::atomic<T> buf[N]; int n; };
ring<int, 2> a;
ring<int, 2> b;
ring<char, 4> c;
ring<long, 1 + 0> d;
int main() { a.n = 1; b.n = 2; c.n = 3; return 0; }
";
    // `1 + 0` is not a value argument this front end evaluates.
    let (l, c, k, m) = refused(src);
    assert_eq!((l, c, k), (6, 12, DiagKind::Unsupported), "{m}");
    let src = src.replace("ring<long, 1 + 0> d;\n", "");
    let p = ok(&src);
    let size = |name: &str| {
        p.globals
            .iter()
            .filter(|g| g.name.starts_with(name))
            .count()
    };
    assert_eq!((size("a."), size("b."), size("c.")), (3, 3, 5));
}

#[test]
fn members_defined_out_of_line_reach_instances_made_before_them() {
    let src = "#include <atomic>
template <typename T>
class cell {
public:
    void put(T v);
    T get() { return x.load(std::memory_order_acquire); }
private:
    std::atomic<T> x;
};
cell<int> a;
cell<long> b;
template <typename T>
void cell<T>::put(T v) { x.store(v, std::memory_order_release); }
int main() { a.put(1); b.put(2); return a.get() + (int)b.get(); }
";
    let p = ok(src);
    let stores = p.functions[p.main]
        .body
        .iter()
        .filter(|i| matches!(i, crate::ir::Instr::Store { .. }))
        .count();
    assert_eq!(stores, 2);
}

#[test]
fn nested_instances_and_the_injected_class_name() {
    // `node<T>` inside `stack<T>`'s members is made for each instance; `node *next` inside
    // `node` names the instance; `std::atomic<T>` with `T` a pointer is an atomic pointer.
    let src = "#include <atomic>
template <typename T>
struct node { T value; node *next; };
template <typename T>
class stack {
public:
    stack() : top(nullptr) {}
    void push(T v) {
        node<T> *n = new node<T>;
        n->value = v;
        n->next = top.load(std::memory_order_relaxed);
        top.store(n, std::memory_order_release);
    }
private:
    std::atomic<node<T> *> top;
};
template <typename P>
struct slot { std::atomic<P> p; };
stack<int> s;
stack<char> t;
slot<int *> q;
int main() { s.push(1); t.push(2); return 0; }
";
    ok(src);
}

#[test]
fn wrong_arguments_are_errors_at_the_type() {
    let src = "template <typename T, int N> struct ring { T buf[N]; };
ring<int> r;
int main() { return 0; }
";
    let (l, c, k, m) = refused(src);
    assert_eq!((l, c, k), (2, 1, DiagKind::Error), "{m}");
    assert!(m.contains("takes 2 arguments"), "{m}");
    let src = "template <typename T, int N> struct ring { T buf[N]; };
ring<2, int> r;
int main() { return 0; }
";
    let (l, c, k, m) = refused(src);
    assert_eq!((l, c, k), (2, 6, DiagKind::Error), "{m}");
    assert!(m.contains("is a value where a type is expected"), "{m}");
}

#[test]
fn a_struct_nested_in_an_instance_is_one_per_instance() {
    // `node` is `q<int>::node` in `q<int>` and `q<long>::node` in `q<long>`, named `node`
    // inside each and nowhere else (the global `node` below is another struct).
    let src = "#include <atomic>
template <typename T>
class q {
public:
    void put(T v) { node *n = new node; n->data = v; head.store(n, std::memory_order_release); }
private:
    struct node { T data; node *next; };
    std::atomic<node *> head;
};
q<int> a;
q<long> b;
struct node { char c; };
node g;
int main() { a.put(1); b.put(2); g.c = 3; return 0; }
";
    ok(src);
    // A nested struct with member functions is a class of each instance, its members seeing
    // the instance's parameters.
    let src = "template <typename T>
class q {
    struct node { T data; T get() { return data + 1; } };
    node n;
public:
    T peek() { return n.get(); }
};
q<int> a;
int main() { return a.peek(); }
";
    parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_struct_nested_in_a_class() {
    let src = "#include <atomic>
class stack {
public:
    void push(int v) { node *n = new node; n->v = v; top.store(n, std::memory_order_release); }
private:
    struct node { int v; node *next; };
    std::atomic<node *> top;
};
stack s;
int main() { s.push(1); return 0; }
";
    ok(src);
}
