//! `sizeof` and the heap (`lower/sizeof.rs`, `lower/heap.rs`, `lower/heap_cpp.rs`): each form
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

/// `(line, column, kind, message)` of the diagnostic for `src` (C, or C++ with `cpp`).
fn diag(src: &str, cpp: bool) -> (usize, usize, DiagKind, String) {
    let r = if cpp {
        parse_cpp("t.cpp", src)
    } else {
        parse_c("t.c", src)
    };
    match r {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// The value `main` assigns last to local `name` (straight-line code).
fn local_value(p: &Program, name: &str) -> i64 {
    let m = &p.functions[p.main];
    let r = m.reg_names.iter().position(|n| n == name).unwrap();
    m.body
        .iter()
        .rev()
        .find_map(|i| match i {
            Instr::Assign {
                dst,
                val: Expr::Const(v),
            } if *dst == r => Some(*v),
            _ => None,
        })
        .unwrap()
}

/// An allocation of `main`: layout name, kind, cell names, indeterminate, count.
type Alloc = (String, ObjectKind, Vec<String>, bool, Option<Expr>);

/// The allocations of `main`.
fn allocs(p: &Program) -> Vec<Alloc> {
    p.functions[p.main]
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Alloc { layout, count, .. } => {
                let l = &p.layouts[*layout];
                let cells = l.cells.iter().map(|c| c.name.clone()).collect();
                Some((
                    l.name.clone(),
                    l.kind,
                    cells,
                    l.indeterminate,
                    count.clone(),
                ))
            }
            _ => None,
        })
        .collect()
}

fn frees(p: &Program) -> Vec<Dealloc> {
    p.functions[p.main]
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Free { by, .. } => Some(*by),
            _ => None,
        })
        .collect()
}

const NODE: &str = "#include <stdlib.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\
                    struct node { int val; struct node *next; };\n";

#[test]
fn sizeof_gives_lp64_byte_sizes_with_padding() {
    let cases = [
        ("sizeof(int)", 4),
        ("sizeof(char)", 1),
        ("sizeof(long)", 8),
        ("sizeof(short)", 2),
        ("sizeof(int *)", 8),
        ("sizeof(struct node)", 16),
        ("sizeof(struct pad)", 24),
        ("sizeof(struct node *[3])", 24),
        ("sizeof(int[5])", 20),
        ("sizeof(pthread_mutex_t)", 40),
        ("sizeof(pthread_cond_t)", 48),
        ("sizeof(pthread_t)", 8),
        ("sizeof(atomic_int)", 4),
        ("sizeof(_Bool)", 1),
        ("sizeof(size_t)", 8),
        ("sizeof g", 16),
        ("sizeof arr", 12),
        ("sizeof arr[1]", 4),
        ("sizeof *gp", 16),
        ("sizeof gp->next", 8),
        ("sizeof(gp->val)", 4),
        ("sizeof 1L", 8),
        ("sizeof(1 + 2)", 4),
        ("sizeof(x)", 4),
    ];
    for (e, want) in cases {
        let src = format!(
            "{NODE}struct pad {{ char c; long l; int i; }};\nstruct node g; struct node *gp; \
             int arr[3];\nint main(void) {{ int x = 1; long s = {e}; return 0; }}\n"
        );
        assert_eq!(local_value(&ok(&src), "s"), want, "{e}");
    }
    // A constant: it sizes a global array, and the unevaluated operand emits nothing.
    let p = ok("int a[sizeof(long) / sizeof(int)];\nint main(void) { a[1] = 1; return 0; }\n");
    assert_eq!(p.globals.len(), 2);
    let p = ok(&format!(
        "{NODE}struct node *gp;\nint main(void) {{ long s = sizeof gp->next->val; return 0; }}\n"
    ));
    assert!(!p.functions[p.main]
        .body
        .iter()
        .any(|i| matches!(i, Instr::Load { .. })));
}

#[test]
fn sizeof_refusals() {
    let d = diag(
        "int main(void) { long s = sizeof(void); return 0; }\n",
        false,
    );
    assert_eq!((d.0, d.1, d.2), (1, 27, DiagKind::Error), "{}", d.3);
    assert!(d.3.contains("void"), "{}", d.3);
    let d = diag(
        "int f(void);\nint main(void) { long s = sizeof(f()); return 0; }\n",
        false,
    );
    assert_eq!((d.0, d.1, d.2), (2, 34, DiagKind::Unsupported), "{}", d.3);
}

#[test]
fn malloc_lays_the_object_out_by_the_pointer_it_is_used_as() {
    let p = ok(&format!(
        "{NODE}_Atomic(struct node *) top;\nstruct node *mk(void) {{ return malloc(sizeof(struct node)); }}\n\
         int main(void) {{\n  struct node *a = malloc(sizeof *a);\n  struct node *b;\n  \
         b = (struct node *)malloc(sizeof(struct node));\n  \
         atomic_store(&top, malloc(sizeof(struct node)));\n  struct node *c = mk();\n  \
         a->next = malloc(sizeof *a);\n  free(a); free(b); free(c);\n  return 0;\n}}\n"
    ));
    let a = allocs(&p);
    let names: Vec<&str> = a.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "malloc@8",
            "malloc@10",
            "malloc@11",
            "malloc@6",
            "malloc@13"
        ]
    );
    for (_, kind, cells, indeterminate, count) in &a {
        assert_eq!(*kind, ObjectKind::Malloc);
        assert!(*indeterminate);
        assert_eq!(count, &None);
        assert_eq!(cells.len(), 2);
    }
    assert_eq!(a[0].2, ["malloc@8.val", "malloc@8.next"]);
    assert_eq!(frees(&p), [Dealloc::Free; 3]);
}

#[test]
fn allocation_sizes_become_element_counts() {
    // A constant number of elements, a run-time one (visibly a multiple: no check), one
    // that needs a check, calloc (zeroed), aligned_alloc, and 0 bytes (the null pointer).
    let p = ok(&format!(
        "{NODE}int main(void) {{\n  int n = 3;\n  int *a = malloc(4 * sizeof(int));\n  \
         int *b = malloc(n * sizeof(int));\n  char *c = malloc(n);\n  \
         long *d = malloc(n + 1);\n  int *e = calloc(n, sizeof *e);\n  \
         int *f = aligned_alloc(64, 64);\n  int *z = malloc(0);\n  return 0;\n}}\n"
    ));
    let a = allocs(&p);
    assert_eq!(a[0].4, Some(Expr::Const(4)));
    assert_eq!(a[0].2, ["malloc@7"]);
    assert!(matches!(a[1].4, Some(Expr::Reg(_))), "{:?}", a[1].4);
    assert!(matches!(a[2].4, Some(Expr::Reg(_))), "{:?}", a[2].4);
    assert!(matches!(a[3].4, Some(Expr::Binary(BinOp::Div, _, _))));
    assert_eq!((a[4].0.as_str(), a[4].3), ("calloc@11", false));
    assert_eq!(a[5].4, Some(Expr::Const(16)));
    assert_eq!(a[6].4, Some(Expr::Const(0)));
    let checks: Vec<&Instr> = p.functions[p.main]
        .body
        .iter()
        .filter(|i| matches!(i, Instr::Check { .. }))
        .collect();
    assert_eq!(checks.len(), 1, "{checks:?}");
    // A constant size that is not a whole number of elements: the cells that fit.
    let p = ok(&format!(
        "{NODE}int main(void) {{\n  struct node *m = malloc(sizeof(int));\n  \
         struct node *k = malloc(sizeof(struct node) + 4);\n  return 0;\n}}\n"
    ));
    let a = allocs(&p);
    assert_eq!(a[0].2, ["malloc@6[0].val"]);
    assert_eq!(
        a[1].2,
        ["malloc@7[0].val", "malloc@7[0].next", "malloc@7[1].val"]
    );
}

#[test]
fn realloc_copies_and_frees() {
    let p = ok(&format!(
        "{NODE}int main(void) {{\n  int *a = malloc(2 * sizeof(int));\n  \
         a = realloc(a, 4 * sizeof(int));\n  free(a);\n  return 0;\n}}\n"
    ));
    let body = &p.functions[p.main].body;
    let cells = body
        .iter()
        .filter(|i| matches!(i, Instr::ObjectCells { .. }))
        .count();
    assert_eq!(cells, 2);
    assert!(body.iter().any(|i| matches!(
        i,
        Instr::Load {
            order: MemOrder::NonAtomic,
            ..
        }
    )));
    assert_eq!(allocs(&p).len(), 2);
    assert_eq!(frees(&p), [Dealloc::Free, Dealloc::Free]);
}

#[test]
fn heap_refusals_name_what_to_write() {
    let cases = [
        (
            "int main(void) { void *p = malloc(8); return 0; }",
            (1, 28, DiagKind::Unsupported, "used as a `void *`"),
        ),
        (
            "int main(void) { long x = (long)malloc(8); return 0; }",
            (1, 33, DiagKind::Unsupported, "not used as a typed pointer"),
        ),
        (
            "int main(void) { int *p = malloc(-4); return 0; }",
            (1, 27, DiagKind::Error, "negative size"),
        ),
        (
            "int main(void) { char *p = malloc(1); int x = free(p); return 0; }",
            (1, 47, DiagKind::Error, "`free` has no value"),
        ),
    ];
    for (src, (line, col, kind, msg)) in cases {
        let src = format!("#include <stdlib.h>\n{src}\n");
        let d = diag(&src, false);
        assert_eq!((d.0, d.1, d.2), (line + 1, col, kind), "{src}: {}", d.3);
        assert!(d.3.contains(msg), "{src}: {}", d.3);
    }
}

#[test]
fn new_and_delete() {
    let p = ok_cpp(
        "#include <atomic>\nstruct Node { int val; Node *next; };\n\
         std::atomic<Node *> top{nullptr};\nint main() {\n  Node *a = new Node{1, nullptr};\n  \
         Node *b = new Node;\n  int *c = new int(5);\n  int *d = new int[4]();\n  \
         int n = 2;\n  Node *e = new Node[n];\n  top.store(new Node());\n  \
         delete a; delete b; delete c; delete[] d; delete[] e;\n  return 0;\n}\n",
    );
    let a = allocs(&p);
    let got: Vec<(&str, ObjectKind, bool)> = a.iter().map(|x| (x.0.as_str(), x.1, x.3)).collect();
    assert_eq!(
        got,
        [
            ("new@5", ObjectKind::New, false),
            ("new@6", ObjectKind::New, true),
            ("new@7", ObjectKind::New, false),
            ("new@8", ObjectKind::NewArray, false),
            ("new@10", ObjectKind::NewArray, true),
            ("new@11", ObjectKind::New, false),
        ]
    );
    assert_eq!(a[3].4, Some(Expr::Const(4)));
    assert!(matches!(a[4].4, Some(Expr::Reg(_))));
    use Dealloc::*;
    assert_eq!(
        frees(&p),
        [Delete, Delete, Delete, DeleteArray, DeleteArray]
    );
}

#[test]
fn new_refusals() {
    let cases = [
        (
            "struct S { int a; int b; };\nint main() { S *p = new S(1, 2); return 0; }",
            (2, 21, DiagKind::Unsupported, "new T{a, b, ...}"),
        ),
        (
            "#include <mutex>\nint main() { std::mutex *m = new std::mutex[2]; return 0; }",
            (2, 30, DiagKind::Unsupported, "non-trivial"),
        ),
        (
            "int g;\nint main() { int *p = new (&g) int(1); return 0; }",
            (2, 27, DiagKind::Unsupported, "placement"),
        ),
    ];
    for (src, (line, col, kind, msg)) in cases {
        let d = diag(src, true);
        assert_eq!((d.0, d.1, d.2), (line, col, kind), "{src}: {}", d.3);
        assert!(d.3.contains(msg), "{src}: {}", d.3);
    }
}
