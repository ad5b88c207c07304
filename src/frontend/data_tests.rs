//! Front-end tests for data: arrays, structs, pointers, static locals, handle arrays, and the
//! smaller additions (atomic_flag, output calls, the CDSChecker `__FILE__, __LINE__` arguments).

use super::*;
use crate::ir::*;

fn ok(src: &str) -> Program {
    let p = parse_c("t.c", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_c("t.c", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

fn func<'p>(p: &'p Program, name: &str) -> &'p Function {
    p.functions.iter().find(|f| f.name == name).unwrap()
}

/// The memory instructions of `f`, as (kind, addr, order).
fn accesses(f: &Function) -> Vec<(&'static str, Addr, MemOrder)> {
    f.body
        .iter()
        .filter_map(|i| match i {
            Instr::Load { loc, order, .. } => Some(("load", loc.clone(), *order)),
            Instr::Store { loc, order, .. } => Some(("store", loc.clone(), *order)),
            Instr::Rmw { loc, order, .. } => Some(("rmw", loc.clone(), *order)),
            Instr::Cas { loc, order, .. } => Some(("cas", loc.clone(), *order)),
            _ => None,
        })
        .collect()
}

fn names(p: &Program) -> Vec<String> {
    p.globals.iter().map(|g| g.name.clone()).collect()
}

#[test]
fn arrays_and_structs_are_laid_out_as_cells() {
    let p = ok("struct node { atomic_int next; int val[2]; };\n\
                struct node pool[2] = {{1, {2, 3}}, {4}};\n\
                int m[2][2];\n\
                int main() { return 0; }\n");
    assert_eq!(
        names(&p),
        [
            "pool[0].next",
            "pool[0].val[0]",
            "pool[0].val[1]",
            "pool[1].next",
            "pool[1].val[0]",
            "pool[1].val[1]",
            "m[0][0]",
            "m[0][1]",
            "m[1][0]",
            "m[1][1]"
        ]
    );
    let inits: Vec<i64> = p.globals.iter().map(|g| g.init).collect();
    assert_eq!(inits[..6], [1, 2, 3, 4, 0, 0]);
    let atomic: Vec<bool> = p.globals.iter().map(|g| g.atomic).collect();
    assert_eq!(atomic[..6], [true, false, false, true, false, false]);
}

#[test]
fn constant_indices_and_members_are_fixed_computed_indices_are_bounded() {
    let p = ok("struct s { int a; atomic_int b; };\n\
                struct s v[3];\n\
                int main() { int i = 2; v[1].a = 5; atomic_store(&v[i].b, 1); return v[i].a; }\n");
    let acc = accesses(func(&p, "main"));
    assert_eq!(acc[0], ("store", Addr::Fixed(2), MemOrder::NonAtomic));
    match &acc[1] {
        ("store", Addr::Computed { lo, hi, .. }, MemOrder::SeqCst) => {
            assert_eq!((*lo, *hi), (0, 6));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        acc[2],
        (
            "load",
            Addr::Computed { lo: 0, hi: 6, .. },
            MemOrder::NonAtomic
        )
    ));
}

#[test]
fn pointers_carry_their_pointee_through_registers_and_parameters() {
    let p = ok("struct node { int value; struct node *next; };\n\
                struct node pool[2];\n\
                _Atomic(struct node *) top;\n\
                atomic_int flag;\n\
                void set(atomic_int *f, int v) { atomic_store_explicit(f, v, memory_order_release); }\n\
                void *t(void *arg) {\n\
                  struct node *n = atomic_load_explicit(&top, memory_order_acquire);\n\
                  if (n != NULL) n->next->value = 1;\n\
                  set(&flag, 2);\n\
                  return NULL;\n\
                }\n\
                int main() { pthread_t h; pthread_create(&h, NULL, t, NULL); return 0; }\n");
    // `top` is an atomic pointer cell; `value` and `next` plain.
    let top = p.global_by_name("top").unwrap();
    assert!(p.globals[top].atomic);
    let acc = accesses(func(&p, "t"));
    assert_eq!(acc[0], ("load", Addr::Fixed(top), MemOrder::Acquire));
    // n->next (a load through n), then ->value (a store through the loaded pointer).
    assert!(matches!(
        acc[1],
        ("load", Addr::Computed { .. }, MemOrder::NonAtomic)
    ));
    assert!(matches!(
        acc[2],
        ("store", Addr::Computed { .. }, MemOrder::NonAtomic)
    ));
    // set(&flag, 2): a release store through the parameter `f`, which holds &flag.
    let flag = p.global_by_name("flag").unwrap();
    let t = func(&p, "t");
    let f = t.reg_names.iter().position(|n| n == "f").unwrap();
    assert!(t.body.contains(&Instr::Assign {
        dst: f,
        val: Expr::Const(pointer_to(flag)),
    }));
    assert_eq!(
        acc[3],
        (
            "store",
            Addr::Computed {
                ptr: Expr::Reg(f),
                lo: 0,
                hi: usize::MAX
            },
            MemOrder::Release
        )
    );
}

#[test]
fn static_locals_are_one_object_for_every_call() {
    let p = ok(
        "int next(void) { static atomic_int n; return atomic_fetch_add(&n, 1); }\n\
                void *t(void *arg) { next(); next(); return NULL; }\n\
                int main() { pthread_t h; pthread_create(&h, NULL, t, NULL); return next(); }\n",
    );
    let n = p.global_by_name("next::n").expect("static cell");
    for f in &p.functions {
        for (kind, addr, _) in accesses(f) {
            assert_eq!((kind, addr), ("rmw", Addr::Fixed(n)));
        }
    }
    assert_eq!(p.globals.len(), 1);
}

#[test]
fn handle_arrays_let_threads_be_created_and_joined_in_loops() {
    let p = ok("void *w(void *arg) { return NULL; }\n\
                int main() { pthread_t t[3];\n\
                  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, w, (void *)(long)i);\n\
                  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);\n\
                  pthread_join(t[1], NULL); return 0; }\n");
    let main = func(&p, "main");
    assert_eq!(main.reg_names[..3], ["t[0]", "t[1]", "t[2]"]);
    let spawns = main
        .body
        .iter()
        .filter(|i| matches!(i, Instr::Spawn { .. }))
        .count();
    let joins: Vec<&Expr> = main
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Join { tid, .. } => Some(tid),
            _ => None,
        })
        .collect();
    assert_eq!(spawns, 1);
    assert_eq!(joins.len(), 2);
    assert_eq!(joins[1], &Expr::Reg(1)); // t[1]: a constant index is the register itself
}

#[test]
fn atomic_flag_output_calls_and_dialect_arguments() {
    let p = ok("#include <stdio.h>\n\
                atomic_flag f = ATOMIC_FLAG_INIT;\n\
                atomic_int x;\n\
                int main() {\n\
                  while (atomic_flag_test_and_set_explicit(&f, memory_order_acquire)) ;\n\
                  printf(\"%d\\n\", atomic_load_explicit(&x, memory_order_relaxed, __FILE__, __LINE__));\n\
                  atomic_flag_clear_explicit(&f, memory_order_release);\n\
                  return 0; }\n");
    let acc = accesses(func(&p, "main"));
    let kinds: Vec<&str> = acc.iter().map(|a| a.0).collect();
    assert_eq!(kinds, ["rmw", "load", "store"]);
    assert_eq!(acc[1].2, MemOrder::Relaxed);
    assert_eq!(acc[2].2, MemOrder::Release);
    assert_eq!(p.notes.len(), 1);
    assert_eq!((p.notes[0].span.line, p.notes[0].span.column), (6, 1));
    assert!(p.notes[0].message.contains("`printf` ignored"));
}

#[test]
fn data_diagnostics() {
    use DiagKind::*;
    type Case = (&'static str, (usize, usize, DiagKind, &'static str));
    let cases: Vec<Case> = vec![
        (
            "int a[2];\nint main() { a[2] = 1; }",
            (2, 14, Error, "index 2 is out of bounds of an array of 2 elements"),
        ),
        (
            "struct s { int a; };\nstruct s v;\nint main() { v.b = 1; }",
            (3, 16, Error, "struct s has no member `b`"),
        ),
        (
            "int x;\nint main() { x.a = 1; }",
            (2, 14, Error, "`x` is not a struct"),
        ),
        (
            "struct s { struct s inner; };\nint main() { }",
            (1, 21, Error, "member `inner` has the incomplete type of its own struct"),
        ),
        (
            "int x;\nint main() { atomic_store(&x, 1); }",
            (2, 28, Error, "atomic operation on non-atomic `x`"),
        ),
        (
            "atomic_int x;\nint main() { atomic_store(x, 1); }",
            (2, 27, Unsupported, "atomic operation on `x` (pass its address: `&x`)"),
        ),
        (
            "void *t(void *arg) { int r = *arg; return NULL; }\nint main() { pthread_t h; pthread_create(&h, NULL, t, NULL); }",
            (1, 30, Error, "dereference of a `void *` (cast it first)"),
        ),
        (
            "int a[2] = {1, 2, 3};\nint main() { }",
            (1, 19, Error, "too many initialisers for the array"),
        ),
        (
            "int a[0];\nint main() { }",
            (1, 7, Error, "array size 0 is not in 1..=65536"),
        ),
        (
            "int main() { static pthread_t t; }",
            (1, 31, Unsupported, "static thread handle"),
        ),
        (
            "void *w(void *a) { return NULL; }\nint main() { pthread_t t[2]; pthread_create(&t[2], NULL, w, NULL); }",
            (2, 46, Error, "index 2 is out of bounds of an array of 2 elements"),
        ),
    ];
    let mut bad = Vec::new();
    for (src, (line, column, kind, message)) in cases {
        let got = diag(src);
        if got != (line, column, kind, message.to_string()) {
            bad.push(format!("{src}\n  got {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn tentative_definitions_are_one_object() {
    let p =
        ok("int x;\nint x = 3;\nint x;\nint a[2];\nint a[2] = {4, 5};\nint main() { return x; }\n");
    assert_eq!(names(&p), ["x", "a[0]", "a[1]"]);
    let inits: Vec<i64> = p.globals.iter().map(|g| g.init).collect();
    assert_eq!(inits, [3, 4, 5]);
    assert_eq!(
        diag("int x = 1;\nint x = 2;\nint main() { }"),
        (2, 5, DiagKind::Error, "redefinition of `x`".to_string())
    );
    assert_eq!(
        diag("int x;\nlong x;\nint main() { }"),
        (
            2,
            6,
            DiagKind::Error,
            "conflicting types for `x`".to_string()
        )
    );
    // A size-less array takes its size from its initialiser.
    let p = ok("int a[] = {1, 2, 3};\nint main() { return a[2]; }\n");
    assert_eq!(p.globals.len(), 3);
}

#[test]
fn a_struct_typedef_may_come_before_the_struct() {
    // `typedef struct tag name;` above `struct tag { ... }` (a node pointing to itself): the
    // name is the struct wherever it is used after the definition, `sizeof` included.
    let p = ok("typedef struct node node_t;\n\
                struct node { int v; node_t *next; };\n\
                node_t pool[2];\n\
                int main() { node_t *n = (node_t *)calloc(1, sizeof(node_t)); pool[0].next = n; return 0; }\n");
    assert_eq!(
        names(&p),
        ["pool[0].v", "pool[0].next", "pool[1].v", "pool[1].next"]
    );
    let (line, col, kind, msg) =
        diag("typedef struct node node_t;\nnode_t n;\nint main() { return 0; }\n");
    assert_eq!((line, col, kind), (2, 1, DiagKind::Error));
    assert!(
        msg.contains("`node_t` names `struct node`, which is not defined"),
        "{msg}"
    );
}
