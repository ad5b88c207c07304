use super::*;
use crate::ir::*;

const SB: &str = r#"#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
atomic_int x, y;
int a, b;
void *t1(void *arg) {
    atomic_store_explicit(&x, 1, memory_order_relaxed);
    a = atomic_load_explicit(&y, memory_order_relaxed);
    return NULL;
}
void *t2(void *arg) {
    atomic_store_explicit(&y, 1, memory_order_relaxed);
    b = atomic_load_explicit(&x, memory_order_relaxed);
    return NULL;
}
int main(void) {
    pthread_t p1, p2;
    pthread_create(&p1, NULL, t1, NULL);
    pthread_create(&p2, NULL, t2, NULL);
    pthread_join(p1, NULL);
    pthread_join(p2, NULL);
    assert(!(a == 0 && b == 0));
    return 0;
}
"#;

fn dump(p: &Program) -> String {
    let mut out = String::new();
    for g in &p.globals {
        out += &format!("global {} atomic={} init={}\n", g.name, g.atomic, g.init);
    }
    for (i, f) in p.functions.iter().enumerate() {
        out += &format!(
            "fn {} #{} param={:?} regs={:?}\n",
            f.name, i, f.param, f.reg_names
        );
        for (pc, ins) in f.body.iter().enumerate() {
            out += &format!("  {pc:2} [s{}] {:?}\n", f.stmt_of[pc], ins);
        }
    }
    for (i, s) in p.stmts.iter().enumerate() {
        out += &format!(
            "stmt {i} f{} {:?} {}:{} {:?}\n",
            s.func, s.kind, s.span.line, s.span.column, s.order_span
        );
    }
    for (i, s) in p.slots.iter().enumerate() {
        out += &format!("slot {i} f{} {:?}\n", s.func, s.place);
    }
    out
}

fn ok(src: &str) -> Program {
    let p = parse_c("t.c", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn err(src: &str) -> Diagnostic {
    match parse_c("t.c", src) {
        Ok(p) => panic!("expected a diagnostic for\n{src}\ngot\n{}", dump(&p)),
        Err(e) => e,
    }
}

/// `(line, column, kind, message)` of the diagnostic for `src`.
fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    let e = err(src);
    (e.line, e.column, e.kind, e.message)
}

fn func<'p>(p: &'p Program, name: &str) -> &'p Function {
    p.functions.iter().find(|f| f.name == name).unwrap()
}

/// The instructions of `f` without slot markers.
fn instrs(f: &Function) -> Vec<Instr> {
    f.body
        .iter()
        .filter(|i| !matches!(i, Instr::Slot(_)))
        .cloned()
        .collect()
}

fn reg(f: &Function, name: &str) -> Reg {
    f.reg_names.iter().position(|n| n == name).unwrap()
}

fn b(op: BinOp, a: Expr, c: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(c))
}

#[test]
fn store_buffering() {
    let p = ok(SB);
    assert_eq!(
        p.globals
            .iter()
            .map(|g| (g.name.as_str(), g.atomic, g.init))
            .collect::<Vec<_>>(),
        vec![
            ("x", true, 0),
            ("y", true, 0),
            ("a", false, 0),
            ("b", false, 0)
        ]
    );
    assert_eq!(p.globals[0].span.line, 4);
    assert_eq!(p.functions.len(), 3);
    assert_eq!(p.functions[p.main].name, "main");
    let t1 = func(&p, "t1");
    assert_eq!(t1.param, None);
    assert_eq!(
        instrs(t1),
        vec![
            Instr::Store {
                loc: 0,
                val: Expr::Const(1),
                order: MemOrder::Relaxed
            },
            Instr::Load {
                dst: 1,
                loc: 1,
                order: MemOrder::Relaxed
            },
            Instr::Store {
                loc: 2,
                val: Expr::Reg(1),
                order: MemOrder::NonAtomic
            },
            Instr::Return,
        ]
    );
    assert_eq!(t1.reg_names[1], "%t0");
    let main = &p.functions[p.main];
    let body = instrs(main);
    assert_eq!(
        body[0],
        Instr::Spawn {
            func: 0,
            arg: Expr::Const(0),
            dst: Some(reg(main, "p1"))
        }
    );
    assert_eq!(
        body[1],
        Instr::Spawn {
            func: 1,
            arg: Expr::Const(0),
            dst: Some(reg(main, "p2"))
        }
    );
    assert_eq!(
        body[2],
        Instr::Join {
            tid: Expr::Reg(reg(main, "p1"))
        }
    );
    assert_eq!(
        body[3],
        Instr::Join {
            tid: Expr::Reg(reg(main, "p2"))
        }
    );
    // `a == 0 && b == 0`: b is only read when a == 0.
    assert!(matches!(
        body[4],
        Instr::Load {
            loc: 2,
            order: MemOrder::NonAtomic,
            ..
        }
    ));
    assert!(matches!(body[6], Instr::BranchIfZero { .. }));
    assert!(matches!(
        body[7],
        Instr::Load {
            loc: 3,
            order: MemOrder::NonAtomic,
            ..
        }
    ));
    match &body[9] {
        Instr::Assert { text, .. } => assert_eq!(text, "!(a == 0 && b == 0)"),
        other => panic!("{other:?}"),
    }
    assert_eq!(body[10], Instr::Return);
    assert_eq!(body.len(), 11);
    // Statement kinds.
    let kinds: Vec<StmtKind> = p
        .stmts
        .iter()
        .filter(|s| s.func == p.main)
        .map(|s| s.kind)
        .collect();
    use StmtKind::*;
    assert_eq!(
        kinds,
        vec![Local, Thread, Thread, Thread, Thread, Access, Local]
    );
    let t1_kinds: Vec<StmtKind> = p
        .stmts
        .iter()
        .filter(|s| s.func == 0)
        .map(|s| s.kind)
        .collect();
    assert_eq!(t1_kinds, vec![Access, Access, Local]);
}

#[test]
fn global_declarations() {
    let p = ok("#include <stdatomic.h>\n\
        atomic_int x, y = 1;\n\
        _Atomic int z = -3;\n\
        _Atomic(int) w = ATOMIC_VAR_INIT(0x10);\n\
        atomic_bool ab = 5;\n\
        atomic_long al = 1L << 40; atomic_uint au = 7u;\n\
        int p = 1 + 2 * 3; long q = 'a'; unsigned u = -1; char c = 300; short s;\n\
        bool t = true, f = false; static int st = (2 > 1) ? 010 : 3; int neg = -(4 - 6) % 3;\n\
        int prototype(int);\n\
        int main(void) { return 0; }\n");
    let g: Vec<(&str, bool, i64)> = p
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.atomic, g.init))
        .collect();
    assert_eq!(
        g,
        vec![
            ("x", true, 0),
            ("y", true, 1),
            ("z", true, -3),
            ("w", true, 16),
            ("ab", true, 1),
            ("al", true, 1 << 40),
            ("au", true, 7),
            ("p", false, 7),
            ("q", false, 97),
            ("u", false, 4294967295),
            ("c", false, 44),
            ("s", false, 0),
            ("t", false, 1),
            ("f", false, 0),
            ("st", false, 8),
            ("neg", false, 2),
        ]
    );
    assert_eq!(p.globals[3].span.line, 4);
    assert_eq!(p.globals[3].span.column, 14);
}

#[test]
fn assignments_locals_and_plain_globals() {
    let p = ok("int g; atomic_int x;\n\
        int main() { int r = 1, q; long l; r += g; g++; --g; g -= r; x = 3; q = x; r = r * 2 + q; }");
    let m = &p.functions[p.main];
    let (r, q, l) = (reg(m, "r"), reg(m, "q"), reg(m, "l"));
    let t = |n: usize| reg(m, &format!("%t{n}"));
    use MemOrder::*;
    assert_eq!(
        instrs(m),
        vec![
            Instr::Assign {
                dst: r,
                val: Expr::Const(1)
            },
            Instr::Assign {
                dst: q,
                val: Expr::Const(0)
            },
            Instr::Assign {
                dst: l,
                val: Expr::Const(0)
            },
            Instr::Load {
                dst: t(0),
                loc: 0,
                order: NonAtomic
            },
            Instr::Assign {
                dst: r,
                val: b(BinOp::Add, Expr::Reg(r), Expr::Reg(t(0)))
            },
            Instr::Load {
                dst: t(1),
                loc: 0,
                order: NonAtomic
            },
            Instr::Store {
                loc: 0,
                val: b(BinOp::Add, Expr::Reg(t(1)), Expr::Const(1)),
                order: NonAtomic
            },
            Instr::Load {
                dst: t(2),
                loc: 0,
                order: NonAtomic
            },
            Instr::Store {
                loc: 0,
                val: b(BinOp::Sub, Expr::Reg(t(2)), Expr::Const(1)),
                order: NonAtomic
            },
            Instr::Load {
                dst: t(3),
                loc: 0,
                order: NonAtomic
            },
            Instr::Store {
                loc: 0,
                val: b(BinOp::Sub, Expr::Reg(t(3)), Expr::Reg(r)),
                order: NonAtomic
            },
            Instr::Store {
                loc: 1,
                val: Expr::Const(3),
                order: SeqCst
            },
            Instr::Load {
                dst: t(4),
                loc: 1,
                order: SeqCst
            },
            Instr::Assign {
                dst: q,
                val: Expr::Reg(t(4))
            },
            Instr::Assign {
                dst: r,
                val: b(
                    BinOp::Add,
                    b(BinOp::Mul, Expr::Reg(r), Expr::Const(2)),
                    Expr::Reg(q)
                )
            },
            Instr::Return,
        ]
    );
}

#[test]
fn atomic_calls_and_orders() {
    let p = ok("atomic_int x; int main() {\n\
        atomic_store(&x, 1);\n\
        atomic_store_explicit(&x, 2, memory_order_release);\n\
        int r = atomic_load(&x) + atomic_load_explicit(&x, memory_order_consume);\n\
        atomic_load_explicit(&x, memory_order_relaxed);\n\
        atomic_thread_fence(memory_order_relaxed);\n\
        atomic_thread_fence(memory_order_acq_rel);\n\
        }");
    let m = &p.functions[p.main];
    let body = instrs(m);
    use MemOrder::*;
    assert_eq!(
        body[0],
        Instr::Store {
            loc: 0,
            val: Expr::Const(1),
            order: SeqCst
        }
    );
    assert_eq!(
        body[1],
        Instr::Store {
            loc: 0,
            val: Expr::Const(2),
            order: Release
        }
    );
    assert!(matches!(body[2], Instr::Load { order: SeqCst, .. }));
    assert!(matches!(body[3], Instr::Load { order: Acquire, .. }));
    assert!(matches!(body[5], Instr::Load { order: Relaxed, .. }));
    assert_eq!(body[6], Instr::Fence { order: Relaxed });
    assert_eq!(body[7], Instr::Fence { order: AcqRel });
    let fences: Vec<&Stmt> = p
        .stmts
        .iter()
        .filter(|s| s.kind == StmtKind::Fence)
        .collect();
    assert_eq!(fences.len(), 2);
    let src = "atomic_thread_fence(memory_order_acq_rel)";
    let os = fences[1].order_span.unwrap();
    assert_eq!(os.end - os.start, "memory_order_acq_rel".len());
    assert_eq!(os.line, 7);
    assert_eq!(os.column, "atomic_thread_fence(".len() + 1);
    assert_eq!(fences[1].span.end - fences[1].span.start, src.len() + 1);
}

#[test]
fn threads_and_parameters() {
    let p = ok("int out; pthread_t h;\n\
        void *f(void *arg) { int r = (int)(long)arg; out = r; }\n\
        void *g(void *unused) { return NULL; }\n\
        void *k(void *) { pthread_exit(NULL); }\n\
        void never(void) { while (1) {} }\n\
        int main(int argc, char **argv) {\n\
          pthread_t p, q;\n\
          int i = 5;\n\
          pthread_create(&h, NULL, f, (void *)(long)i);\n\
          pthread_create(&p, 0, g, (void *)1);\n\
          pthread_create(&q, (void *)0, k, 0);\n\
          pthread_join(h, NULL); pthread_join(p, 0); pthread_join(q, NULL);\n\
          return out;\n\
        }");
    let f = func(&p, "f");
    assert_eq!(f.param, Some(reg(f, "arg")));
    assert_eq!(func(&p, "g").param, None);
    assert_eq!(func(&p, "k").param, None);
    assert_eq!(*func(&p, "k").body.last().unwrap(), Instr::Return);
    // f falls off its end: implicit return after the block-end slot.
    assert_eq!(*f.body.last().unwrap(), Instr::Return);
    assert!(matches!(f.body[f.body.len() - 2], Instr::Slot(_)));
    let m = &p.functions[p.main];
    let body = instrs(m);
    let fid = |n: &str| p.functions.iter().position(|f| f.name == n).unwrap();
    assert_eq!(
        body[1],
        Instr::Spawn {
            func: fid("f"),
            arg: Expr::Reg(reg(m, "i")),
            dst: Some(reg(m, "h"))
        }
    );
    assert_eq!(
        body[2],
        Instr::Spawn {
            func: fid("g"),
            arg: Expr::Const(1),
            dst: Some(reg(m, "p"))
        }
    );
    assert_eq!(
        body[4],
        Instr::Join {
            tid: Expr::Reg(reg(m, "h"))
        }
    );
    assert!(!p.functions.iter().any(|f| f.name == "never"));
}

#[test]
fn short_circuit_pure_and_branching() {
    let p = ok("int g;\n\
        int main() { int r = 1, s = 2, t;\n\
          t = r && s;\n\
          t = r || g;\n\
          t = r != 0 && 10 / r > 1;\n\
          t = r ? s : 3;\n\
          t = r ? g : 3;\n\
          t = 0 && g;\n\
          t = 1 || g;\n\
        }");
    let m = &p.functions[p.main];
    let (r, s, t) = (reg(m, "r"), reg(m, "s"), reg(m, "t"));
    // Statement by statement (skip the declaration).
    let stmts: Vec<StmtId> = (0..p.stmts.len())
        .filter(|&i| p.stmts[i].func == p.main)
        .collect();
    let of = |k: usize| -> Vec<Instr> {
        m.body
            .iter()
            .zip(&m.stmt_of)
            .filter(|(i, s)| **s == stmts[k] && !matches!(i, Instr::Slot(_)))
            .map(|(i, _)| i.clone())
            .collect()
    };
    assert_eq!(
        of(1),
        vec![Instr::Assign {
            dst: t,
            val: b(BinOp::And, Expr::Reg(r), Expr::Reg(s))
        }]
    );
    let or = of(2);
    assert_eq!(or.len(), 5);
    assert!(matches!(
        or[1],
        Instr::BranchIfZero {
            cond: Expr::Unary(UnOp::Not, _),
            ..
        }
    ));
    assert!(matches!(or[2], Instr::Load { loc: 0, .. }));
    // Division on the right of && is only evaluated when r != 0.
    let div = of(3);
    assert!(div.iter().any(|i| matches!(i, Instr::BranchIfZero { .. })));
    let pure_ternary = of(4);
    assert_eq!(pure_ternary.len(), 1);
    let tern = of(5);
    assert!(matches!(tern[0], Instr::BranchIfZero { cond: Expr::Reg(x), .. } if x == r));
    assert!(matches!(tern[1], Instr::Load { loc: 0, .. }));
    assert!(matches!(tern[3], Instr::Jump { .. }));
    assert_eq!(
        of(6),
        vec![Instr::Assign {
            dst: t,
            val: Expr::Const(0)
        }]
    );
    // The implicit return belongs to the last statement.
    assert_eq!(
        of(7),
        vec![
            Instr::Assign {
                dst: t,
                val: Expr::Const(1)
            },
            Instr::Return
        ]
    );
    // Branch targets are absolute pcs inside the function and land on the right instruction.
    for (pc, i) in m.body.iter().enumerate() {
        if let Instr::BranchIfZero { target, .. } | Instr::Jump { target } = i {
            assert!(*target > pc && *target < m.body.len());
        }
    }
}

#[test]
fn narrow_and_unsigned_types() {
    let p =
        ok("int main() { bool b = 2; unsigned u = 0; u = u - 1; char c = 'a'; int big = u > -1; }");
    let m = &p.functions[p.main];
    let body = instrs(m);
    assert_eq!(
        body[0],
        Instr::Assign {
            dst: reg(m, "b"),
            val: Expr::Const(1)
        }
    );
    // u - 1 wraps modulo 2^32.
    let mut regs = vec![0i64; m.reg_names.len()];
    for i in &body {
        if let Instr::Assign { dst, val } = i {
            regs[*dst] = val.eval(&regs).unwrap();
        }
    }
    assert_eq!(regs[reg(m, "u")], 4294967295);
    assert_eq!(regs[reg(m, "c")], 97);
    // `u > -1` compares as unsigned: UINT_MAX > UINT_MAX is false.
    assert_eq!(regs[reg(m, "big")], 0);
}

#[test]
fn slots_and_blocks() {
    let src = "int g;\nint main() {\n  g = 1;\n  {\n    g = 2;\n  }\n  { }\n}\n";
    let p = ok(src);
    let m = &p.functions[p.main];
    // Statements: g = 1; {block}; g = 2; { }.
    assert_eq!(p.stmts.len(), 4);
    let places: Vec<SlotPlace> = m
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Slot(s) => Some(p.slots[*s].place.clone()),
            _ => None,
        })
        .collect();
    let close = |line: usize, column: usize, start: usize| Span {
        start,
        end: start + 1,
        line,
        column,
    };
    assert_eq!(
        places,
        vec![
            SlotPlace::Before { stmt: 0 },
            SlotPlace::Before { stmt: 1 },
            SlotPlace::Before { stmt: 2 },
            SlotPlace::BlockEnd {
                after: Some(2),
                close: close(6, 3, src.find("  }").unwrap() + 2)
            },
            SlotPlace::Before { stmt: 3 },
            SlotPlace::BlockEnd {
                after: None,
                close: close(7, 5, src.find("{ }").unwrap() + 2)
            },
            SlotPlace::BlockEnd {
                after: Some(3),
                close: close(8, 1, src.len() - 2)
            },
        ]
    );
    // Slot ownership: Before slots belong to their statement, BlockEnd to the last statement
    // (or the empty block's own statement).
    let owners: Vec<StmtId> = m
        .body
        .iter()
        .zip(&m.stmt_of)
        .filter(|(i, _)| matches!(i, Instr::Slot(_)))
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(owners, vec![0, 1, 2, 2, 3, 3, 3]);
    assert!(p.slots.iter().all(|s| s.func == p.main));
    assert_eq!(p.stmts[1].span.line, 4);
    assert_eq!(p.stmts[1].kind, StmtKind::Local);
    assert_eq!(*m.body.last().unwrap(), Instr::Return);
}

#[test]
fn no_block_end_after_return_and_empty_bodies() {
    let p = ok("void *t(void *a) { }\nint main() { pthread_t p; pthread_create(&p, 0, t, 0); { return 0; } }");
    let t = func(&p, "t");
    // Empty body: a Local statement for the block owns the block-end slot and the return.
    assert_eq!(t.body.len(), 2);
    let Instr::Slot(s) = t.body[0] else { panic!() };
    assert_eq!(
        p.slots[s].place,
        SlotPlace::BlockEnd {
            after: None,
            close: Span {
                start: 19,
                end: 20,
                line: 1,
                column: 20
            }
        }
    );
    assert_eq!(p.stmts[t.stmt_of[0]].kind, StmtKind::Local);
    assert_eq!(p.stmts[t.stmt_of[0]].func, 0);
    let m = &p.functions[p.main];
    let ends = m
        .body
        .iter()
        .filter(|i| matches!(i, Instr::Slot(s) if matches!(p.slots[*s].place, SlotPlace::BlockEnd { .. })))
        .count();
    assert_eq!(ends, 0, "{}", dump(&p));
    assert_eq!(*m.body.last().unwrap(), Instr::Return);
}

#[test]
fn diagnostics_positions() {
    use DiagKind::*;
    type Case<'s> = (&'s str, (usize, usize, DiagKind, &'s str));
    let cases: Vec<Case> = vec![
        ("int main() {\n  int r = 1\n}", (2, 12, Syntax, "missing `;`")),
        ("int main() { int r = (1)); }", (1, 25, Syntax, "unexpected `)`")),
        (
            "int main() {\n  int r = 0;\n  while (r) { }\n}",
            (3, 3, Unsupported, "'while' loop (control flow is not supported yet)"),
        ),
        (
            "int main() { if (1) { } }",
            (1, 14, Unsupported, "'if' statement (control flow is not supported yet)"),
        ),
        (
            "atomic_int x;\nint main() {\n    atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);\n}",
            (3, 5, Unsupported, "call to 'atomic_fetch_add_explicit'"),
        ),
        (
            "int main() { printf(\"%d\", 1); }",
            (1, 14, Unsupported, "call to 'printf'"),
        ),
        (
            "int g(void) { return 1; }\nint main() { int r = g(); }",
            (2, 22, Unsupported, "call to user function `g` (function calls are not supported yet)"),
        ),
        ("int main() {\n  int r = z + 1;\n}", (2, 11, Error, "undeclared identifier `z`")),
        (
            "atomic_int x;\nint main() { atomic_store_explicit(&x, 1, memory_order_acquire); }",
            (2, 43, Error, "memory_order_acquire is not valid for a store"),
        ),
        (
            "atomic_int x;\nint main() { atomic_store_explicit(&x, 1, memory_order_consume); }",
            (2, 43, Error, "memory_order_consume is not valid for a store"),
        ),
        (
            "atomic_int x;\nint main() { int r = atomic_load_explicit(&x, memory_order_release); }",
            (2, 47, Error, "memory_order_release is not valid for a load"),
        ),
        (
            "atomic_int x;\nint main() { int r = atomic_load_explicit(&x, memory_order_acq_rel); }",
            (2, 47, Error, "memory_order_acq_rel is not valid for a load"),
        ),
        (
            "int x;\nint main() { atomic_store_explicit(&x, 1, memory_order_relaxed); }",
            (2, 37, Error, "atomic operation on non-atomic `x`"),
        ),
        (
            "int x;\nint main() { int r = atomic_load(&x); }",
            (2, 35, Error, "atomic operation on non-atomic `x`"),
        ),
        ("", (1, 1, Error, "no `main` function")),
        ("void *t(void *a) { return NULL; }\n", (1, 1, Error, "no `main` function")),
        ("int main(void);\n", (1, 1, Error, "no `main` function")),
        (
            "atomic_int x;\nint main() { x += 1; }",
            (2, 14, Unsupported, "atomic read-modify-write (`+=` on atomic `x`)"),
        ),
        (
            "atomic_int x;\nint main() { x++; }",
            (2, 14, Unsupported, "atomic read-modify-write (`++` on atomic `x`)"),
        ),
        ("#define N 2\nint main() { }", (1, 1, Unsupported, "`#define` (macros are not supported)")),
        ("struct s { int a; };\nint main() { }", (1, 1, Unsupported, "struct definition")),
        ("typedef int T;\nint main() { }", (1, 1, Unsupported, "typedef")),
        ("int *p;\nint main() { }", (1, 5, Unsupported, "pointer variable (pointers are not supported)")),
        ("int a[2];\nint main() { }", (1, 5, Unsupported, "array (arrays are not supported)")),
        ("extern int e;\nint main() { }", (1, 1, Unsupported, "`extern` declaration")),
        ("int y = 1;\nint x = y;\nint main() { }", (2, 9, Error, "initialiser of a global must be a constant expression")),
        ("int x = 1 / 0;\nint main() { }", (1, 9, Error, "division by zero in constant expression")),
        ("double d;\nint main() { }", (1, 1, Unsupported, "type `double`")),
        ("int main() { int r = 1.5; }", (1, 22, Unsupported, "floating-point literal `1.5`")),
        ("int g;\nint main() { int *p = &g; }", (2, 18, Unsupported, "pointer variable (pointers are not supported)")),
        ("int g;\nint main() { int r = *g; }", (2, 22, Unsupported, "pointer dereference (pointers are not supported)")),
        ("int main() { int r = sizeof(int); }", (1, 22, Unsupported, "sizeof")),
        ("int main() { int r = 1, q = (r = 2); }", (1, 30, Unsupported, "assignment used as a value")),
        ("atomic_int x;\nint main() { atomic_exchange(&x, 1); }", (2, 14, Unsupported, "call to 'atomic_exchange'")),
        (
            "atomic_int x; int r;\nint main() { atomic_compare_exchange_strong(&x, &r, 1); }",
            (2, 14, Unsupported, "call to 'atomic_compare_exchange_strong'"),
        ),
        (
            "void *t(void *a) { pthread_t p; return NULL; }\nint main() { pthread_t p; pthread_create(&p, 0, t, 0); }",
            (1, 20, Unsupported, "pthread_t variable outside main (threads can only be created in main)"),
        ),
        (
            "pthread_t h;\nvoid *t(void *a) { pthread_join(h, 0); return NULL; }\nint main() { pthread_create(&h, 0, t, 0); }",
            (2, 20, Unsupported, "pthread_join outside main (threads can only be joined in main)"),
        ),
        (
            "int main() { pthread_t p; pthread_join(p, 0); }",
            (1, 40, Error, "thread handle `p` is joined before a thread was created with it"),
        ),
        (
            "int t(int a) { return 0; }\nint main() { pthread_t p; pthread_create(&p, 0, t, 0); }",
            (1, 1, Unsupported, "thread function `t` must have the signature `void *t(void *)`"),
        ),
        (
            "int main() { pthread_t p; pthread_create(&p, 0, nothere, 0); }",
            (1, 49, Error, "undeclared identifier `nothere`"),
        ),
        ("int main() { int r; int r; }", (1, 25, Error, "redefinition of `r`")),
        ("int main(int argc, char **argv) { int r = argc; }", (1, 43, Unsupported, "use of `argc` (parameters of main are not supported)")),
        ("atomic_int x;\nint main() { atomic_thread_fence(1); }", (2, 34, Unsupported, "memory order argument must be a `memory_order_*` constant")),
        ("int main() { assert(1, 2); }", (1, 14, Error, "`assert` expects 1 argument, got 2")),
        ("int main() { int r; r = 1, r = 2; }", (1, 21, Unsupported, "comma operator")),
        ("int main() { goto end; end: return 0; }", (1, 14, Unsupported, "'goto' statement (control flow is not supported yet)")),
        ("int main() { int a = \"s\"; }", (1, 22, Unsupported, "string literal")),
        ("int main() { atomic_int l; }", (1, 25, Unsupported, "atomic local variable `l`")),
        ("union u { int a; };\nint main() { }", (1, 1, Unsupported, "union definition")),
        ("struct s v;\nint main() { }", (1, 1, Unsupported, "struct type")),
    ];
    for (src, (line, column, kind, message)) in cases {
        let got = diag(src);
        assert_eq!(
            got,
            (line, column, kind, message.to_string()),
            "for:\n{src}"
        );
    }
}

#[test]
fn display_format() {
    let e = parse_c("dir/x.c", "int main() {\n  int r = 0;\n  while (r) { }\n}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "dir/x.c:3:3: unsupported: 'while' loop (control flow is not supported yet)"
    );
    let e = parse_c("x.c", "int main() { int r = 1 }").unwrap_err();
    assert_eq!(e.to_string(), "x.c:1:23: syntax error: missing `;`");
    let e = parse_c("x.c", "").unwrap_err();
    assert_eq!(e.to_string(), "x.c:1:1: error: no `main` function");
    let _: &dyn std::error::Error = &e;
}

#[test]
fn deterministic() {
    assert_eq!(parse_c("a.c", SB), parse_c("b.c", SB));
}

const MP: &str = r#"#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
/* message passing */
atomic_int flag = ATOMIC_VAR_INIT(0);
_Atomic(int) data;
int r1, r2;
void *writer(void *arg) {
    atomic_store_explicit(&data, 42, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&flag, 1, memory_order_relaxed);
    return NULL;
}
void *reader(void *arg) {
    int f = atomic_load_explicit(&flag, memory_order_relaxed);
    // read data only when the flag is set
    int d = f ? atomic_load_explicit(&data, memory_order_relaxed) : -1;
    r1 = f; r2 = d;
    { int local = (int)(long)arg + 1; (void)local; }
    return NULL;
}
int main(int argc, char **argv) {
    pthread_t a, b;
    pthread_create(&a, NULL, writer, NULL);
    pthread_create(&b, NULL, reader, (void *)3);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(r1 == 0 || r2 == 42);
    return 0;
}
"#;

#[test]
fn message_passing_example() {
    let p = ok(MP);
    let reader = func(&p, "reader");
    assert!(reader.param.is_some());
    // The data load happens on the taken branch only.
    let body = &reader.body;
    let br = body
        .iter()
        .position(|i| matches!(i, Instr::BranchIfZero { .. }))
        .unwrap();
    let ld = body
        .iter()
        .position(|i| matches!(i, Instr::Load { loc: 1, .. }))
        .unwrap();
    assert!(ld > br);
}

#[test]
fn deep_nesting_is_rejected_not_crashing() {
    let deep_paren = format!(
        "int main() {{ int r = {}1{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert_eq!(err(&deep_paren).kind, DiagKind::Unsupported);
    let deep_block = format!("int main() {{ {} {} }}", "{".repeat(5000), "}".repeat(5000));
    assert_eq!(err(&deep_block).kind, DiagKind::Unsupported);
    let deep_neg = format!("int main() {{ int r = {}1; }}", "-".repeat(5000));
    let _ = parse_c("t.c", &deep_neg);
    let deep_not = format!("int main() {{ int r = {}1; }}", "!".repeat(20000));
    let _ = parse_c("t.c", &deep_not);
    let deep_add = format!("int main() {{ int r = 1{}; }}", "+1".repeat(20000));
    let _ = parse_c("t.c", &deep_add);
    let nested_ok = format!(
        "int main() {{ int r = {}1{}; }}",
        "(".repeat(50),
        ")".repeat(50)
    );
    ok(&nested_ok);
}

/// Every prefix of realistic programs (and some byte-level mutations) parses without panicking,
/// and whatever is accepted validates.
#[test]
fn no_panic_on_truncated_or_mutated_input() {
    let check = |s: &str| {
        if let Ok(p) = parse_c("t.c", s) {
            p.validate().unwrap();
        }
    };
    for src in [SB, MP] {
        let step = if src.len() > 2000 { 3 } else { 1 };
        for end in (0..=src.len()).step_by(step) {
            if let Some(prefix) = src.get(..end) {
                check(prefix);
            }
        }
        // Delete one byte / replace one byte by a nasty character.
        let bytes = src.as_bytes();
        for i in (0..bytes.len()).step_by(7) {
            let mut v = bytes.to_vec();
            v.remove(i);
            if let Ok(s) = String::from_utf8(v) {
                check(&s);
            }
            for c in [b'(', b'}', b'{', b';', b'&', b'#', b'\'', b'"'] {
                let mut v = bytes.to_vec();
                v[i] = c;
                if let Ok(s) = String::from_utf8(v) {
                    check(&s);
                }
            }
        }
    }
    // Pseudo-random garbage.
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let alphabet = b"(){};,&*=+-!~?:<>|^/%'\" \n\tabcxyz019_#atomic_int main void pthread_create";
    for _ in 0..300 {
        let len = (seed % 200) as usize;
        let mut s = String::new();
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push(alphabet[(seed % alphabet.len() as u64) as usize] as char);
        }
        check(&s);
        check(&format!("int main() {{ {s} }}"));
    }
    check("\u{0}\u{1}\u{ffff}é漢字");
    check("int main() { int r = '\\777'; int q = 0x; }");
    check("_Atomic(");
    check("_Atomic((((int");
    check("int main() { _Atomic(int) q; }");
}
