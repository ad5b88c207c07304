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
                loc: Addr::Fixed(0),
                val: Expr::Const(1),
                order: MemOrder::Relaxed
            },
            Instr::Load {
                dst: 1,
                loc: Addr::Fixed(1),
                order: MemOrder::Relaxed
            },
            Instr::Store {
                loc: Addr::Fixed(2),
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
            tid: Expr::Reg(reg(main, "p1")),
            dst: None,
        }
    );
    assert_eq!(
        body[3],
        Instr::Join {
            tid: Expr::Reg(reg(main, "p2")),
            dst: None,
        }
    );
    // `a == 0 && b == 0`: b is only read when a == 0.
    assert!(matches!(
        body[4],
        Instr::Load {
            loc: Addr::Fixed(2),
            order: MemOrder::NonAtomic,
            ..
        }
    ));
    assert!(matches!(body[6], Instr::BranchIfZero { .. }));
    assert!(matches!(
        body[7],
        Instr::Load {
            loc: Addr::Fixed(3),
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
                loc: Addr::Fixed(0),
                order: NonAtomic
            },
            Instr::Assign {
                dst: r,
                val: b(BinOp::Add, Expr::Reg(r), Expr::Reg(t(0)))
            },
            Instr::Load {
                dst: t(1),
                loc: Addr::Fixed(0),
                order: NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: b(BinOp::Add, Expr::Reg(t(1)), Expr::Const(1)),
                order: NonAtomic
            },
            Instr::Load {
                dst: t(2),
                loc: Addr::Fixed(0),
                order: NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: b(BinOp::Sub, Expr::Reg(t(2)), Expr::Const(1)),
                order: NonAtomic
            },
            Instr::Load {
                dst: t(3),
                loc: Addr::Fixed(0),
                order: NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: b(BinOp::Sub, Expr::Reg(t(3)), Expr::Reg(r)),
                order: NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(1),
                val: Expr::Const(3),
                order: SeqCst
            },
            Instr::Load {
                dst: t(4),
                loc: Addr::Fixed(1),
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
            loc: Addr::Fixed(0),
            val: Expr::Const(1),
            order: SeqCst
        }
    );
    assert_eq!(
        body[1],
        Instr::Store {
            loc: Addr::Fixed(0),
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
            tid: Expr::Reg(reg(m, "h")),
            dst: None,
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
    assert!(matches!(
        or[2],
        Instr::Load {
            loc: Addr::Fixed(0),
            ..
        }
    ));
    // Division on the right of && is only evaluated when r != 0.
    let div = of(3);
    assert!(div.iter().any(|i| matches!(i, Instr::BranchIfZero { .. })));
    let pure_ternary = of(4);
    assert_eq!(pure_ternary.len(), 1);
    let tern = of(5);
    assert!(matches!(tern[0], Instr::BranchIfZero { cond: Expr::Reg(x), .. } if x == r));
    assert!(matches!(
        tern[1],
        Instr::Load {
            loc: Addr::Fixed(0),
            ..
        }
    ));
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
            "atomic_int x;\nint main() { x *= 2; }",
            (2, 14, Unsupported, "`*=` on atomic `x` (only +=, -=, &=, |=, ^=, ++ and -- are supported on atomics)"),
        ),
        ("extern int e;\nint main() { return e; }", (1, 12, Error, "`extern` variable `e` is used but never defined in this program (give the file that defines it with `--link FILE`)")),
        ("register int e;\nint main() { }", (1, 1, Unsupported, "`register` declaration")),
        ("const int n = 2;\nint main() { int n = 3; int a[n]; }", (2, 31, Error, "`n` is a variable, not a constant expression")),
        ("typedef _Atomic struct { int a; } *ref;\nref r;\nint main() { }", (2, 1, Unsupported, "atomic non-integer type (the typedef of `ref` at line 1:17)")),
        ("int y = 1;\nint x = y;\nint main() { }", (2, 9, Error, "initialiser of a global must be a constant expression")),
        ("int x = 1 / 0;\nint main() { }", (1, 9, Error, "division by zero in constant expression")),
        ("double d;\nint main() { }", (1, 1, Unsupported, "type `double`")),
        ("int main() { int r = 1.5; }", (1, 22, Unsupported, "floating-point literal `1.5`")),
        ("int g;\nint main() { int r = *g; }", (2, 23, Error, "`g` is not a pointer")),
        ("int main() { long r = sizeof(void); }", (1, 23, Error, "sizeof of `void` (an incomplete type)")),
        ("atomic_int x;\nint main() { atomic_exchange(&x); }", (2, 14, Error, "`atomic_exchange` expects 2 arguments, got 1")),
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
        ("int main() { int a = \"s\"; }", (1, 22, Unsupported, "string literal (strings are accepted as the operand of `&&`, `||` and `!`, and as arguments of output calls)")),
        ("union u { int a; short b; };\nint main() { }", (1, 24, Unsupported, "union member `b` whose storage does not overlap `a` value for value (type punning between different layouts is not supported: every member of a union must have the same cells, e.g. `int` and `atomic_int`)")),
        ("struct s v;\nint main() { }", (1, 1, Error, "`struct s` is not defined (define a struct before using it)")),
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
    let e = parse_c(
        "dir/x.c",
        "int main() {\n  int r = 0;\n  while (r) { goto x; }\n}",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "dir/x.c:3:20: error: label `x` used but not defined"
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
        .position(|i| {
            matches!(
                i,
                Instr::Load {
                    loc: Addr::Fixed(1),
                    ..
                }
            )
        })
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

// ----- control flow, await loops, read-modify-writes ------------------------------------------

/// The instructions of `f` without slot markers, with jump targets renumbered to index this
/// list (a target on a slot marker points at the next real instruction).
fn code(f: &Function) -> Vec<Instr> {
    let mut index = Vec::with_capacity(f.body.len() + 1);
    let mut n = 0;
    for i in &f.body {
        index.push(n);
        if !matches!(i, Instr::Slot(_)) {
            n += 1;
        }
    }
    index.push(n);
    f.body
        .iter()
        .filter(|i| !matches!(i, Instr::Slot(_)))
        .map(|i| match i {
            Instr::BranchIfZero { cond, target } => Instr::BranchIfZero {
                cond: cond.clone(),
                target: index[*target],
            },
            Instr::Jump { target } => Instr::Jump {
                target: index[*target],
            },
            other => other.clone(),
        })
        .collect()
}

fn main_code(src: &str) -> (Program, Vec<Instr>) {
    let p = ok(src);
    let c = code(&p.functions[p.main]);
    (p, c)
}

fn r(n: Reg) -> Expr {
    Expr::Reg(n)
}

fn k(v: i64) -> Expr {
    Expr::Const(v)
}

fn not(e: Expr) -> Expr {
    Expr::Unary(UnOp::Not, Box::new(e))
}

fn biz(cond: Expr, target: usize) -> Instr {
    Instr::BranchIfZero { cond, target }
}

fn jump(target: usize) -> Instr {
    Instr::Jump { target }
}

fn load(dst: Reg, loc: Loc, order: MemOrder) -> Instr {
    Instr::Load {
        dst,
        loc: Addr::Fixed(loc),
        order,
    }
}

fn store(loc: Loc, val: Expr, order: MemOrder) -> Instr {
    Instr::Store {
        loc: Addr::Fixed(loc),
        val,
        order,
    }
}

fn assign(dst: Reg, val: Expr) -> Instr {
    Instr::Assign { dst, val }
}

fn rmw(dst: Reg, loc: Loc, op: RmwOp, val: Expr, order: MemOrder) -> Instr {
    Instr::Rmw {
        dst,
        loc: Addr::Fixed(loc),
        op,
        val,
        order,
        width: crate::ir::Width {
            bits: 32,
            signed: true,
        },
    }
}

/// [`rmw`] on a location of another integer type.
fn rmw_of(bits: u8, signed: bool, dst: Reg, loc: Loc, op: RmwOp, val: Expr) -> Instr {
    match rmw(dst, loc, op, val, MemOrder::SeqCst) {
        Instr::Rmw {
            dst,
            loc,
            op,
            val,
            order,
            ..
        } => Instr::Rmw {
            dst,
            loc,
            op,
            val,
            order,
            width: crate::ir::Width { bits, signed },
        },
        _ => unreachable!(),
    }
}

/// The loops of `f` that iterate (an await loop is entered but never starts an iteration:
/// it has a `LoopEnter` and no `LoopIter`).
fn loop_heads(f: &Function) -> Vec<usize> {
    let iterates = |id: usize| f.body.contains(&Instr::LoopIter { id });
    f.body
        .iter()
        .filter_map(|i| match i {
            Instr::LoopEnter { id } if iterates(*id) => Some(*id),
            _ => None,
        })
        .collect()
}

fn stmt_kinds(p: &Program, fid: FuncId) -> Vec<StmtKind> {
    p.stmts
        .iter()
        .filter(|s| s.func == fid)
        .map(|s| s.kind)
        .collect()
}

use MemOrder::{Acquire, NonAtomic, Relaxed, Release, SeqCst};

#[test]
fn if_else() {
    let src = "atomic_int x; int g;\nint main() {\n  if (x == 1) { g = 1; } else { g = 2; }\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        c,
        vec![
            load(0, 0, SeqCst),
            biz(b(BinOp::Eq, r(0), k(1)), 4),
            store(1, k(1), NonAtomic),
            jump(5),
            store(1, k(2), NonAtomic),
            Instr::Return,
        ]
    );
    // The if statement owns its condition's load (Access) and the jump; the bodies have their
    // own statements.
    use StmtKind::*;
    assert_eq!(stmt_kinds(&p, p.main), vec![Access, Access, Access]);
    let m = &p.functions[p.main];
    let owner_of = |pred: &dyn Fn(&Instr) -> bool| m.stmt_of[m.body.iter().position(pred).unwrap()];
    assert_eq!(owner_of(&|i| matches!(i, Instr::Jump { .. })), 0);
    assert_eq!(owner_of(&|i| matches!(i, Instr::BranchIfZero { .. })), 0);
    assert_eq!(p.stmts[0].span.line, 3);
    assert_eq!(p.stmts[0].span.column, 3);
}

#[test]
fn else_if_chain() {
    let src = "atomic_int x; int g;\nint main() {\n  int r = x;\n  if (r == 1) g = 1;\n  else if (r == 2) g = 2;\n  else g = 3;\n}\n";
    let (p, c) = main_code(src);
    let rr = reg(&p.functions[p.main], "r");
    assert_eq!(rr, 1);
    assert_eq!(
        c,
        vec![
            load(0, 0, SeqCst),
            assign(1, r(0)),
            biz(b(BinOp::Eq, r(1), k(1)), 5),
            store(1, k(1), NonAtomic),
            jump(9),
            biz(b(BinOp::Eq, r(1), k(2)), 8),
            store(1, k(2), NonAtomic),
            jump(9),
            store(1, k(3), NonAtomic),
            Instr::Return,
        ]
    );
    // Statements: decl, outer if, g = 1, inner if (the unbraced else body), g = 2, g = 3. The
    // ifs test a local only.
    use StmtKind::*;
    assert_eq!(
        stmt_kinds(&p, p.main),
        vec![Access, Local, Access, Local, Access, Access]
    );
    assert_eq!((p.stmts[3].span.line, p.stmts[3].span.column), (5, 8));
}

#[test]
fn while_with_break_and_continue() {
    let src = "atomic_int x; int g;\nint main() {\n  int i = 0;\n  while (i < 10) {\n    i++;\n    if (i == 2) continue;\n    if (x) break;\n    g = i;\n  }\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(p.functions[p.main].reg_names, vec!["i", "%t0"]);
    assert_eq!(
        c,
        vec![
            assign(0, k(0)),
            Instr::LoopEnter { id: 0 },
            biz(b(BinOp::Lt, r(0), k(10)), 12),
            Instr::LoopIter { id: 0 },
            assign(0, b(BinOp::Add, r(0), k(1))),
            biz(b(BinOp::Eq, r(0), k(2)), 7),
            jump(2), // continue: back to the condition
            load(1, 0, SeqCst),
            biz(r(1), 10),
            jump(12), // break
            store(1, r(0), NonAtomic),
            jump(2),
            Instr::Return,
        ]
    );
    // The loop entry is after the while's Before slot: the slot is passed once, not per
    // iteration.
    let m = &p.functions[p.main];
    let head = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::LoopEnter { .. }))
        .unwrap();
    assert!(
        matches!(m.body[head - 1], Instr::Slot(s) if p.slots[s].place == SlotPlace::Before { stmt: 1 })
    );
}

#[test]
fn do_while() {
    let src = "atomic_int x;\nint main() {\n  int n = 0;\n  do {\n    n++;\n    if (n > 5) break;\n  } while (atomic_load_explicit(&x, memory_order_acquire) == 0);\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        c,
        vec![
            assign(0, k(0)),
            Instr::LoopEnter { id: 0 },
            Instr::LoopIter { id: 0 },
            assign(0, b(BinOp::Add, r(0), k(1))),
            biz(b(BinOp::Gt, r(0), k(5)), 6),
            jump(8),
            load(1, 0, Acquire),
            biz(not(b(BinOp::Eq, r(1), k(0))), 2),
            Instr::Return,
        ]
    );
    // The condition's load belongs to the do statement.
    let m = &p.functions[p.main];
    let ld = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::Load { .. }))
        .unwrap();
    assert_eq!(m.stmt_of[ld], 1);
    assert_eq!(p.stmts[1].kind, StmtKind::Access);
}

#[test]
fn for_with_continue_and_empty_clauses() {
    let src = "atomic_int c;\nint main() {\n  for (int i = 0; i < 4; i++) {\n    if (i == 1) continue;\n    atomic_fetch_add_explicit(&c, i, memory_order_relaxed);\n  }\n  for (;;) break;\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(p.functions[p.main].reg_names, vec!["i", "%t0"]);
    assert_eq!(
        c,
        vec![
            // A counting loop: no iteration count (see `counting_for_loops_have_no_bound`).
            assign(0, k(0)),
            biz(b(BinOp::Lt, r(0), k(4)), 7),
            biz(b(BinOp::Eq, r(0), k(1)), 4),
            jump(5), // continue: to the update
            rmw(1, 0, RmwOp::Add, r(0), Relaxed),
            assign(0, b(BinOp::Add, r(0), k(1))),
            jump(1),
            Instr::LoopEnter { id: 0 },
            Instr::LoopIter { id: 0 },
            jump(11), // break
            jump(8),
            Instr::Return,
        ]
    );
    // The loop variable is scoped to the loop.
    assert_eq!(
        diag("int main() {\n  for (int i = 0; i < 1; i++) ;\n  return i;\n}"),
        (
            3,
            10,
            DiagKind::Error,
            "undeclared identifier `i`".to_string()
        )
    );
    // ... and may be redeclared in the body's block.
    ok("int main() { for (int i = 0; i < 1; i++) { int i = 2; } }");
    // An expression initialiser.
    let (_, c) = main_code("int main() { int i; for (i = 3; i; i--) ; }");
    assert_eq!(c[1], assign(0, k(3)));
}

#[test]
fn switch_with_fall_through_and_default() {
    let src = "atomic_int x; int g;\nint main() {\n  switch (x) {\n  case 1:\n    g = 1;\n  case 2:\n    g = 2;\n    break;\n  default:\n    g = 3;\n  }\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        c,
        vec![
            load(0, 0, SeqCst),
            biz(b(BinOp::Ne, r(0), k(1)), 4),
            biz(b(BinOp::Ne, r(0), k(2)), 5),
            jump(7), // no label matched: default
            store(1, k(1), NonAtomic),
            store(1, k(2), NonAtomic), // case 1 falls through
            jump(8),                   // break
            store(1, k(3), NonAtomic),
            Instr::Return,
        ]
    );
    assert_eq!(p.stmts[0].kind, StmtKind::Access);
    // One BlockEnd slot for the switch body, before its `}`, after `g = 3;`.
    let ends: Vec<SlotPlace> = p
        .slots
        .iter()
        .filter(|s| matches!(s.place, SlotPlace::BlockEnd { .. }))
        .map(|s| s.place.clone())
        .collect();
    let brace = src.find("  }\n}").unwrap() + 2;
    assert_eq!(
        ends[0],
        SlotPlace::BlockEnd {
            after: Some(4),
            close: Span {
                start: brace,
                end: brace + 1,
                line: 11,
                column: 3
            }
        }
    );
    // No default: unmatched values skip the switch; a computed controlling value is evaluated
    // once into a temporary; labels are constant expressions converted to its type.
    let (p, c) = main_code(
        "int g;\nint main() {\n  unsigned u = 1;\n  switch (u + 1) { case -1: g = 1; break; case 'a' + 1: { g = 2; } }\n}\n",
    );
    let u = reg(&p.functions[p.main], "u");
    assert_eq!(
        c,
        vec![
            assign(u, k(1)),
            assign(
                1,
                b(BinOp::BitAnd, b(BinOp::Add, r(u), k(1)), k(0xffff_ffff))
            ),
            biz(b(BinOp::Ne, r(1), k(4294967295)), 5),
            biz(b(BinOp::Ne, r(1), k(98)), 7),
            jump(8),
            store(0, k(1), NonAtomic),
            jump(8),
            store(0, k(2), NonAtomic),
            Instr::Return,
        ]
    );
    // `break` in a switch inside a loop leaves the switch; `continue` continues the loop.
    let (_, c) = main_code(
        "int main() { int i = 0; while (i < 3) { switch (i) { case 0: i = 5; continue; default: break; } i++; } }",
    );
    assert_eq!(
        c,
        vec![
            assign(0, k(0)),
            Instr::LoopEnter { id: 0 },
            biz(b(BinOp::Lt, r(0), k(3)), 11),
            Instr::LoopIter { id: 0 },
            biz(b(BinOp::Ne, r(0), k(0)), 6),
            jump(8),
            assign(0, k(5)),
            jump(2),
            jump(9),
            assign(0, b(BinOp::Add, r(0), k(1))),
            jump(2),
            Instr::Return,
        ]
    );
}

#[test]
fn counting_for_loops_have_no_bound() {
    // Each case is one loop in `main`; `true` when it must run without an iteration count.
    let cases: &[(&str, bool)] = &[
        ("for (int i = 0; i < 4; i++) x = i;", true),
        ("for (int i = 0; 4 > i; ++i) x = i;", true),
        ("for (int i = 10; i > 0; i -= 3) x = i;", true),
        ("for (int i = 10; i >= 0; i--) x = i;", true),
        ("for (n = 0; n != 6; n += 2) x = n;", true),
        (
            "for (int i = 0; i < 2 * 3; i++) { if (x) break; continue; }",
            true,
        ),
        ("for (unsigned char c = 0; c < 255; c++) x = c;", true),
        ("for (int i = 0; i < 0; i++) x = i;", true),
        // A counting test as an operand of `&&` bounds the loop too.
        (
            "for (int i = 0; i < 10 && atomic_load(&x) == 0; i++) ;",
            true,
        ),
        ("for (int i = 0; x != 1 && (i < 3); i++) ;", true),
        ("for (int i = 0; i < 3 || x; i++) ;", false),
        // The body writes the counter, or may (through its address).
        ("for (int i = 0; i < 4; i++) i = x;", false),
        (
            "for (int i = 0; i < 4; i++) { int j = i; j++; i += j; }",
            false,
        ),
        ("for (int i = 0; i < 4; i++) atomic_store(&x, i) ;", true),
        // The bound is not a constant, or the counter is not a local.
        ("for (int i = 0; i < x; i++) ;", false),
        ("for (g = 0; g < 4; g++) ;", false),
        // A bound held in a local the loop leaves alone, approached one step at a time.
        ("for (int i = 0; i < n; i++) x = i;", true),
        ("for (int i = 10; n < i; i--) x = i;", true),
        ("for (int i = 0; i < n; i++) n++;", false),
        ("for (int i = 0; i < n; i++) { n = x; }", false),
        ("for (int i = 0; i <= n; i++) ;", false),
        ("for (int i = 0; i < n; i += 2) ;", false),
        ("for (char c = 0; c < n; c++) ;", false),
        ("for (int i = 0; i < i; i++) ;", false),
        // The counter skips the bound, wraps around, or moves away from it.
        ("for (int i = 0; i != 5; i += 2) x = i;", false),
        ("for (unsigned char c = 0; c <= 255; c++) x = c;", false),
        ("for (int i = 0; i < 4; i--) x = i;", false),
        ("for (int i = 0; i < 4; i += 0) x = i;", false),
        // No test or no update: an ordinary loop.
        ("for (int i = 0; ; i++) if (x) break;", false),
        ("for (int i = 0; i < 4;) i++;", false),
        // Too many iterations to run them all.
        ("for (long i = 0; i < 1001; i++) x = 1;", false),
        ("for (long i = 0; i < 1000; i++) x = 1;", true),
    ];
    for (lp, counted) in cases {
        let src = format!("atomic_int x; int g;\nint main() {{\n  int n = 0;\n  {lp}\n}}\n");
        let p = ok(&src);
        let heads = loop_heads(&p.functions[p.main]);
        assert_eq!(heads.is_empty(), *counted, "{lp}: loop entries {heads:?}");
    }
}

#[test]
fn nested_loops_get_distinct_loop_ids() {
    let src = "atomic_int x;\nvoid *t(void *a) { for (int i = 0; x < 2; i++) x = i; return NULL; }\nint main() {\n  pthread_t p; pthread_create(&p, 0, t, 0);\n  int i = 0, j = 0;\n  while (i < 2) { do { j++; } while (j < 3); i++; }\n  pthread_join(p, 0);\n}\n";
    let p = ok(src);
    assert_eq!(loop_heads(func(&p, "t")), vec![0]);
    assert_eq!(loop_heads(&p.functions[p.main]), vec![1, 2]);
    // The inner loop's back edge goes to its own head (the top of the `do` body), the outer
    // to the outer head (the `while` condition, after the loop's entry).
    let c = code(&p.functions[p.main]);
    let outer = c
        .iter()
        .position(|i| *i == Instr::LoopEnter { id: 1 })
        .unwrap()
        + 1;
    let inner = c
        .iter()
        .position(|i| *i == Instr::LoopIter { id: 2 })
        .unwrap();
    assert!(c.contains(&biz(not(b(BinOp::Lt, r(2), k(3))), inner)));
    assert!(c.contains(&jump(outer)));
}

#[test]
fn await_loops_become_assume() {
    let src = "atomic_int f; int d;\nvoid *t(void *a) {\n  while (atomic_load_explicit(&f, memory_order_acquire) == 0) ;\n  while (!f) { }\n  do { ; { } } while (f != 1);\n  for (; d == 0;) ;\n  return NULL;\n}\nint main() { pthread_t p; pthread_create(&p, 0, t, 0); }\n";
    let p = ok(src);
    let t = func(&p, "t");
    assert_eq!(
        code(t),
        vec![
            // Register 0 is the parameter `a`. Each await loop is entered (where its only
            // pass starts, for liveness) and never iterates.
            Instr::LoopEnter { id: 0 },
            load(1, 0, Acquire),
            Instr::Assume {
                cond: not(b(BinOp::Eq, r(1), k(0)))
            },
            Instr::LoopEnter { id: 1 },
            load(2, 0, SeqCst),
            Instr::Assume {
                cond: not(not(r(2)))
            },
            Instr::LoopEnter { id: 2 },
            load(3, 0, SeqCst),
            Instr::Assume {
                cond: not(b(BinOp::Ne, r(3), k(1)))
            },
            Instr::LoopEnter { id: 3 },
            load(4, 1, NonAtomic),
            Instr::Assume {
                cond: not(b(BinOp::Eq, r(4), k(0)))
            },
            Instr::Return,
        ]
    );
    assert!(loop_heads(t).is_empty());
    // The empty bodies have no statements and no slots: 4 loops + return, one slot each.
    use StmtKind::*;
    assert_eq!(
        stmt_kinds(&p, 0),
        vec![Access, Access, Access, Access, Local]
    );
    assert_eq!(p.slots.iter().filter(|s| s.func == 0).count(), 5);

    // Not await loops: a body with an effect, a condition without memory, a condition with an
    // effect, a for with an update clause.
    let src = "atomic_int f;\nint main() {\n  int r = 0;\n  while (f == 0) { r = 1; }\n  while (r == 0) ;\n  while (atomic_fetch_add(&f, 1) < 3) ;\n  for (; f == 0; r++) ;\n  do r = 2; while (f);\n}\n";
    let p = ok(src);
    let m = &p.functions[p.main];
    assert_eq!(loop_heads(m), vec![0, 1, 2, 3, 4]);
    assert!(!m.body.iter().any(|i| matches!(i, Instr::Assume { .. })));
}

#[test]
fn await_loops_may_call_functions_that_only_read() {
    // A condition calling a function of the file whose body only reads memory and computes
    // (locals, parameters, if/else, return, nested calls of the same kind) is an await loop.
    let src = "atomic_int f; int d;\n\
        int later(int a, int b) { return a > b; }\n\
        int pending(int t, int me) { int k = t; k++; if (k == 1) return 0; \
          return later(k, me) && d == 0; }\n\
        int flag(atomic_int *p) { return atomic_load_explicit(p, memory_order_acquire); }\n\
        void *t(void *a) {\n  while (pending(atomic_load(&f), 2)) ;\n  while (!flag(&f)) ;\n  return NULL;\n}\n\
        int main() { pthread_t p; pthread_create(&p, 0, t, 0); }\n";
    let p = ok(src);
    let t = func(&p, "t");
    assert!(loop_heads(t).is_empty(), "{:?}", code(t));
    assert_eq!(
        code(t)
            .iter()
            .filter(|i| matches!(i, Instr::Assume { .. }))
            .count(),
        2
    );
    // The called functions get no fence slots: two loops and the return, one slot each.
    let ti = p.functions.iter().position(|f| f.name == "t").unwrap();
    assert_eq!(p.slots.iter().filter(|s| s.func == ti).count(), 3);

    // Not await loops: the called function writes a global, writes through a pointer, has a
    // loop, asserts, stores, has a static local, or calls a function that does; a parameter
    // named like a global (scopes would be needed to tell them apart).
    for body in [
        "d = 1; return f;",
        "*q = 1; return f;",
        "int i = 0; while (i < 2) i++; return f;",
        "assert(d == 0); return f;",
        "atomic_store(&f, 1); return 0;",
        "static int n; n++; return f;",
        "return g2(q);",
        "return atomic_fetch_add(&f, 0);",
    ] {
        let src = format!(
            "atomic_int f; int d; int z;\nint g2(int *q) {{ *q = 0; return f; }}\n\
             int g(int *q) {{ {body} }}\n\
             int main() {{ while (g(&z)) ; }}\n"
        );
        let p = ok(&src);
        let m = &p.functions[p.main];
        assert!(!loop_heads(m).is_empty(), "{body}");
        assert!(
            !m.body.iter().any(|i| matches!(i, Instr::Assume { .. })),
            "{body}"
        );
    }
    let p =
        ok("atomic_int f; int d;\nint g(int d) { return d + f; }\nint main() { while (g(1)) ; }\n");
    assert_eq!(loop_heads(&p.functions[p.main]).len(), 1);
}

#[test]
fn verifier_assume() {
    let (p, c) =
        main_code("atomic_int x;\nint main() { int r = x; __VERIFIER_assume(r == 1); assume(r); }");
    assert_eq!(
        c,
        vec![
            load(0, 0, SeqCst),
            assign(1, r(0)),
            Instr::Assume {
                cond: b(BinOp::Eq, r(1), k(1))
            },
            Instr::Assume { cond: r(1) },
            Instr::Return,
        ]
    );
    assert_eq!(stmt_kinds(&p, p.main)[1], StmtKind::Local);
    assert_eq!(
        diag("int main() { int r = assume(1); }"),
        (
            1,
            22,
            DiagKind::Unsupported,
            "`assume` used as a value".to_string()
        )
    );
}

#[test]
fn fetch_and_exchange() {
    let src = "atomic_int c; int out;\nint main() {\n  int old = atomic_fetch_add(&c, 2);\n  out = old + atomic_fetch_sub_explicit(&c, 1, memory_order_release);\n  atomic_exchange_explicit(&c, 7, memory_order_consume);\n  atomic_fetch_or(&c, 4); atomic_fetch_and_explicit(&c, 1, memory_order_acq_rel);\n  atomic_fetch_xor_explicit(&c, 3, memory_order_seq_cst); atomic_exchange(&c, 0);\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        p.functions[p.main].reg_names,
        vec!["%t0", "old", "%t1", "%t2", "%t3", "%t4", "%t5", "%t6"]
    );
    assert_eq!(
        c,
        vec![
            rmw(0, 0, RmwOp::Add, k(2), SeqCst),
            assign(1, r(0)),
            rmw(2, 0, RmwOp::Sub, k(1), Release),
            store(1, b(BinOp::Add, r(1), r(2)), NonAtomic),
            rmw(3, 0, RmwOp::Xchg, k(7), Acquire),
            rmw(4, 0, RmwOp::Or, k(4), SeqCst),
            rmw(5, 0, RmwOp::And, k(1), MemOrder::AcqRel),
            rmw(6, 0, RmwOp::Xor, k(3), SeqCst),
            rmw(7, 0, RmwOp::Xchg, k(0), SeqCst),
            Instr::Return,
        ]
    );
    assert!(stmt_kinds(&p, p.main)
        .iter()
        .all(|k| *k == StmtKind::Access));
    // Exchange on narrow types converts the operand; fetch_add on them is rejected.
    let (_, c) = main_code("atomic_bool b;\nint main() { atomic_exchange(&b, 5); }");
    assert_eq!(c[0], rmw_of(8, false, 0, 0, RmwOp::Xchg, k(1)));
    // Arithmetic on unsigned and narrow atomics wraps to their type (the RMW's width).
    for (decl, bits, signed) in [
        ("atomic_uint", 32, false),
        ("atomic_ushort", 16, false),
        ("atomic_schar", 8, true),
        ("atomic_ullong", 64, false),
    ] {
        let (_, c) = main_code(&format!(
            "{decl} u;\nint main() {{ atomic_fetch_add(&u, 1); }}"
        ));
        assert_eq!(c[0], rmw_of(bits, signed, 0, 0, RmwOp::Add, k(1)), "{decl}");
    }
}

#[test]
fn compare_exchange_strong_and_weak() {
    let src = "atomic_int l;\nint main() {\n  int e = 0;\n  if (atomic_compare_exchange_strong(&l, &e, 1)) e = 5;\n  int w = atomic_compare_exchange_weak_explicit(&l, &e, e + 1, memory_order_release, memory_order_relaxed);\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        p.functions[p.main].reg_names,
        vec!["e", "%t0", "%t1", "%t2", "%t3", "w"]
    );
    assert_eq!(
        c,
        vec![
            assign(0, k(0)),
            Instr::Cas {
                ok: 1,
                old: 2,
                loc: Addr::Fixed(0),
                expected: r(0),
                desired: k(1),
                order: SeqCst,
                fail_order: SeqCst,
                weak: false,
            },
            assign(0, r(2)), // expected := old
            biz(r(1), 5),
            assign(0, k(5)),
            Instr::Cas {
                ok: 3,
                old: 4,
                loc: Addr::Fixed(0),
                expected: r(0),
                desired: b(BinOp::Add, r(0), k(1)),
                order: Release,
                fail_order: Relaxed,
                weak: true,
            },
            assign(0, r(4)),
            assign(5, r(3)),
            Instr::Return,
        ]
    );
    assert_eq!(stmt_kinds(&p, p.main)[1], StmtKind::Access);
    // A CAS loop with a body is an ordinary loop.
    let (_, c) = main_code(
        "atomic_int l;\nint main() { int e = 0; while (!atomic_compare_exchange_strong_explicit(&l, &e, 1, memory_order_acquire, memory_order_relaxed)) e = 0; }",
    );
    assert_eq!(
        c,
        vec![
            assign(0, k(0)),
            Instr::LoopEnter { id: 0 },
            Instr::Cas {
                ok: 1,
                old: 2,
                loc: Addr::Fixed(0),
                expected: r(0),
                desired: k(1),
                order: Acquire,
                fail_order: Relaxed,
                weak: false,
            },
            assign(0, r(2)),
            biz(not(r(1)), 8),
            Instr::LoopIter { id: 0 },
            assign(0, k(0)),
            jump(2),
            Instr::Return,
        ]
    );
}

#[test]
fn atomic_compound_assignment_is_rmw() {
    let src = "atomic_int x; atomic_long y;\nint main() {\n  x++;\n  ++x;\n  x -= 2;\n  y |= 4;\n  y &= 1;\n  y ^= 3;\n  int a = x++;\n  int b = --x;\n  long c = (y += 5);\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(
        p.functions[p.main].reg_names,
        vec!["%t0", "%t1", "%t2", "%t3", "%t4", "%t5", "%t6", "a", "%t7", "b", "%t8", "c"]
    );
    assert_eq!(
        c,
        vec![
            rmw(0, 0, RmwOp::Add, k(1), SeqCst),
            rmw(1, 0, RmwOp::Add, k(1), SeqCst),
            rmw(2, 0, RmwOp::Sub, k(2), SeqCst),
            rmw_of(64, true, 3, 1, RmwOp::Or, k(4)),
            rmw_of(64, true, 4, 1, RmwOp::And, k(1)),
            rmw_of(64, true, 5, 1, RmwOp::Xor, k(3)),
            rmw(6, 0, RmwOp::Add, k(1), SeqCst),
            assign(7, r(6)), // x++: the old value
            rmw(8, 0, RmwOp::Sub, k(1), SeqCst),
            // --x: the new value, wrapped to `int` as the atomic holds it.
            assign(
                9,
                b(
                    BinOp::Shr,
                    b(BinOp::Shl, b(BinOp::Sub, r(8), k(1)), k(32)),
                    k(32)
                )
            ),
            rmw_of(64, true, 10, 1, RmwOp::Add, k(5)),
            assign(11, b(BinOp::Add, r(10), k(5))),
            Instr::Return,
        ]
    );
    // Plain globals and locals used as values: `expr_tests.rs`.
}

#[test]
fn atomic_init_is_a_relaxed_store() {
    let (_, c) = main_code("atomic_char x;\nint main() { atomic_init(&x, 300); }");
    assert_eq!(c, vec![store(0, k(44), Relaxed), Instr::Return]);
}

#[test]
fn unbraced_body_slots() {
    let src = "int g;\nint main() {\n  int r = 0;\n  if (r) g = 1;\n  else { }\n  while (r) g = 2;\n  if (r) return 1;\n}\n";
    let p = ok(src);
    let m = &p.functions[p.main];
    let places: Vec<SlotPlace> = m
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Slot(s) => Some(p.slots[*s].place.clone()),
            _ => None,
        })
        .collect();
    let end_of = |text: &str| {
        let e = src.find(text).unwrap() + text.len();
        let line = src[..e].matches('\n').count() + 1;
        let column = e - src[..e].rfind('\n').unwrap();
        Span {
            start: e,
            end: e,
            line,
            column,
        }
    };
    let brace = |text: &str, line: usize, column: usize| {
        let s = src.find(text).unwrap() + text.len() - 1;
        Span {
            start: s,
            end: s + 1,
            line,
            column,
        }
    };
    assert_eq!(
        end_of("g = 1;"),
        Span {
            start: 48,
            end: 48,
            line: 4,
            column: 16
        }
    );
    // Statements: 0 decl, 1 if, 2 `g = 1;`, 3 while, 4 `g = 2;`, 5 if, 6 `return 1;`.
    assert_eq!(
        places,
        vec![
            SlotPlace::Before { stmt: 0 },
            SlotPlace::Before { stmt: 1 },
            SlotPlace::Before { stmt: 2 },
            SlotPlace::BlockEnd {
                after: Some(2),
                close: end_of("g = 1;")
            },
            SlotPlace::BlockEnd {
                after: None,
                close: brace("else { }", 5, 10)
            },
            SlotPlace::Before { stmt: 3 },
            SlotPlace::Before { stmt: 4 },
            SlotPlace::BlockEnd {
                after: Some(4),
                close: end_of("g = 2;")
            },
            SlotPlace::Before { stmt: 5 },
            SlotPlace::Before { stmt: 6 },
            // No block end after `return 1;`; the function's block end follows the if.
            SlotPlace::BlockEnd {
                after: Some(5),
                close: brace("\n}", 8, 1)
            },
        ]
    );
    let owners: Vec<StmtId> = m
        .body
        .iter()
        .zip(&m.stmt_of)
        .filter(|(i, _)| matches!(i, Instr::Slot(_)))
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(owners, vec![0, 1, 2, 2, 1, 3, 4, 4, 5, 6, 5]);
    let s2 = &p.stmts[2];
    assert_eq!(
        (s2.span.line, s2.span.column, s2.kind),
        (4, 10, StmtKind::Access)
    );
    // Loop-body slots are the same ids every iteration: the while body's Before slot appears
    // once in the code.
    let before4 = m
        .body
        .iter()
        .filter(
            |i| matches!(i, Instr::Slot(s) if p.slots[*s].place == SlotPlace::Before { stmt: 4 }),
        )
        .count();
    assert_eq!(before4, 1);
    // Both branches return: no block end after the if/else and no implicit return.
    let p = ok("int main() { int r = 0; if (r) return 1; else { return 2; } }");
    let m = &p.functions[p.main];
    assert!(!m.body.iter().any(|i| matches!(i, Instr::Slot(s) if matches!(p.slots[*s].place, SlotPlace::BlockEnd { after: Some(1), .. }))));
    assert_eq!(code(m).iter().filter(|i| **i == Instr::Return).count(), 2);
}

#[test]
fn control_flow_and_rmw_diagnostics() {
    use DiagKind::*;
    type Case<'s> = (&'s str, (usize, usize, DiagKind, &'s str));
    let cases: Vec<Case> = vec![
        (
            "atomic_int x; int e;\nint main() { atomic_compare_exchange_strong(&x, &e, 1); }",
            (2, 49, Unsupported, "the expected value of a compare-exchange must be given as `&local` (the address of a local integer variable); `e` is a global"),
        ),
        (
            "atomic_int x;\nint main() { atomic_compare_exchange_weak(&x, 0, 1); }",
            (2, 47, Unsupported, "the expected value of a compare-exchange must be given as `&local` (the address of a local integer variable)"),
        ),
        (
            "atomic_int x;\nint main() { long e = 0; atomic_compare_exchange_weak(&x, &e, 1); }",
            (2, 60, Unsupported, "the type of `e` differs from the type of the atomic object of the compare-exchange"),
        ),
        (
            "atomic_int x;\nint main() { atomic_compare_exchange_strong(&x, &e, 1); }",
            (2, 50, Error, "undeclared identifier `e`"),
        ),
        (
            "atomic_bool f;\nint main() { f |= 1; }",
            (2, 14, Unsupported, "`|=` on `f` of an atomic_bool"),
        ),
        (
            "int x;\nint main() { atomic_fetch_add(&x, 1); }",
            (2, 32, Error, "atomic operation on non-atomic `x`"),
        ),
        ("int main() { break; }", (1, 14, Error, "'break' statement not within a loop or switch")),
        ("int main() { continue; }", (1, 14, Error, "'continue' statement not within a loop")),
        ("int main() {\n  case 1: ;\n}", (2, 3, Error, "'case' label not within a switch statement")),
        ("int main() {\n  default: ;\n}", (2, 3, Error, "'default' label not within a switch statement")),
        (
            "int main() { int r = 0; switch (r) { case 0: continue; } }",
            (1, 46, Error, "'continue' statement not within a loop"),
        ),
        (
            "int main() { int r = 0; switch (r) { case 1: case 1: ; } }",
            (1, 51, Error, "duplicate case value"),
        ),
        (
            "int main() { int r = 0; switch (r) { case r: ; } }",
            (1, 43, Error, "case label must be an integer constant expression"),
        ),
        (
            "int g;\nint main() { int r = 0; switch (r) { case g: ; } }",
            (2, 43, Error, "case label must be an integer constant expression"),
        ),
        (
            "int main() { int r = 0; switch (r) { default: ; default: ; } }",
            (1, 49, Error, "multiple default labels in one switch"),
        ),
        (
            "int main() { int r = 0; switch (r) { r = 1; case 1: ; } }",
            (1, 38, Unsupported, "statement in a switch body that is not under a case label"),
        ),
        (
            "int main() { int r = 0; switch (r) { case 1: int q = 1; } }",
            (1, 46, Unsupported, "declaration directly under a case label (put the case body in braces)"),
        ),
        (
            "int main() { int r = 0; switch (r) { case 0: if (r) { case 1: ; } } }",
            (1, 55, Unsupported, "'case' label nested inside a statement of the switch body"),
        ),
        (
            "atomic_int x;\nint main() { if (x) { int r = undefined_v; } }",
            (2, 31, Error, "undeclared identifier `undefined_v`"),
        ),
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
fn deep_control_flow_is_rejected_not_crashing() {
    let chain = |n: usize| {
        let mut s = String::from("int main() { int r = 0; if (r == 0) r = 1;");
        for i in 0..n {
            s += &format!(" else if (r == {i}) r = 2;");
        }
        s += " }";
        s
    };
    // Just below the nesting limit (the depth also counts the function body and expressions).
    ok(&chain(90));
    ok(&format!(
        "int main() {{ int r = 0; {} r = 1; }}",
        "if (r) ".repeat(90)
    ));
    assert_eq!(err(&chain(5000)).kind, DiagKind::Unsupported);
    let whiles = format!(
        "int main() {{ int r = 0; {} r = 1; {} }}",
        "while (r) {".repeat(3000),
        "}".repeat(3000)
    );
    assert_eq!(err(&whiles).kind, DiagKind::Unsupported);
    let ifs = format!("int main() {{ int r = 0; {} ; }}", "if (r) ".repeat(3000));
    assert_eq!(err(&ifs).kind, DiagKind::Unsupported);
    let dos = format!(
        "int main() {{ int r = 0; {} r = 1; {} }}",
        "do ".repeat(3000),
        " while (r);".repeat(3000)
    );
    assert_eq!(err(&dos).kind, DiagKind::Unsupported);
    let switches = format!(
        "int main() {{ int r = 0; {} r = 1; {} }}",
        "switch (r) { case 1: ".repeat(3000),
        "}".repeat(3000)
    );
    assert_eq!(err(&switches).kind, DiagKind::Unsupported);
    // A deeply nested empty await body is fine (checked iteratively).
    let empty = format!(
        "atomic_int f;\nint main() {{ while (!f) {}{} }}",
        "{".repeat(3000),
        "}".repeat(3000)
    );
    let p = ok(&empty);
    assert!(loop_heads(&p.functions[p.main]).is_empty());
}

const CONTROL: &str = r#"#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
atomic_int lock, flag, c;
int counter;
void *worker(void *arg) {
    int e = 0;
    while (!atomic_compare_exchange_strong_explicit(&lock, &e, 1, memory_order_acquire,
                                                    memory_order_relaxed))
        e = 0;
    counter++;
    atomic_store_explicit(&lock, 0, memory_order_release);
    for (int i = 0; i < 2; i++) {
        if (i == 1) continue;
        atomic_fetch_add_explicit(&c, 1, memory_order_relaxed);
    }
    return NULL;
}
void *waiter(void *arg) {
    while (atomic_load_explicit(&flag, memory_order_acquire) == 0) ;
    switch (counter) { case 0: break; case 1: c++; default: c -= 1; }
    do { int r = c; if (r > 3) break; } while (0);
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, waiter, NULL);
    atomic_init(&flag, 1);
    __VERIFIER_assume(atomic_exchange(&flag, 1) == 1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    if (counter != 1) assert(0); else { assert(c >= 0); }
    return 0;
}
"#;

#[test]
fn control_program_lowers_and_survives_mutation() {
    let p = ok(CONTROL);
    assert_eq!(p, ok(CONTROL));
    let check = |s: &str| {
        if let Ok(p) = parse_c("t.c", s) {
            p.validate().unwrap();
        }
    };
    for end in 0..=CONTROL.len() {
        if let Some(prefix) = CONTROL.get(..end) {
            check(prefix);
        }
    }
    let bytes = CONTROL.as_bytes();
    for i in (0..bytes.len()).step_by(5) {
        let mut v = bytes.to_vec();
        v.remove(i);
        if let Ok(s) = String::from_utf8(v) {
            check(&s);
        }
        for ch in [b'(', b'}', b'{', b';', b'&', b'!', b'0'] {
            let mut v = bytes.to_vec();
            v[i] = ch;
            if let Ok(s) = String::from_utf8(v) {
                check(&s);
            }
        }
    }
}

// ----- pthread mutexes (their lowering: sync_tests.rs) -----------------------------------------

#[test]
fn mutex_globals() {
    let p = ok("#include <pthread.h>\nint c;\npthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, n;\nstatic pthread_mutex_t o = (PTHREAD_MUTEX_INITIALIZER);\nint main() { return 0; }\n");
    assert_eq!(
        p.globals
            .iter()
            .map(|g| (g.name.as_str(), g.atomic, g.init, g.sync.is_some()))
            .collect::<Vec<_>>(),
        vec![
            ("c", false, 0, false),
            ("m", true, 0, true),
            ("m#kind", true, 0, true),
            ("n", true, 0, true),
            ("n#kind", true, 0, true),
            ("o", true, 0, true),
            ("o#kind", true, 0, true),
        ]
    );
    assert_eq!((p.globals[1].span.line, p.globals[1].span.column), (3, 17));
}

#[test]
fn mutex_program_survives_mutation() {
    const SRC: &str = "pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\nint c;\nvoid *t(void *a) {\n  pthread_mutex_lock(&m);\n  c++;\n  pthread_mutex_unlock(&m);\n  if (pthread_mutex_trylock(&m) == 0) pthread_mutex_unlock(&m);\n  return NULL;\n}\nint main() {\n  pthread_mutex_init(&m, NULL);\n  pthread_t h;\n  pthread_create(&h, NULL, t, NULL);\n  pthread_join(h, NULL);\n  pthread_mutex_destroy(&m);\n}\n";
    ok(SRC);
    let check = |s: &str| {
        if let Ok(p) = parse_c("t.c", s) {
            p.validate().unwrap();
        }
    };
    for end in 0..=SRC.len() {
        if let Some(prefix) = SRC.get(..end) {
            check(prefix);
        }
    }
    let bytes = SRC.as_bytes();
    for i in 0..bytes.len() {
        let mut v = bytes.to_vec();
        v.remove(i);
        if let Ok(s) = String::from_utf8(v) {
            check(&s);
        }
        for ch in [b'(', b'&', b'm', b'0', b' '] {
            let mut v = bytes.to_vec();
            v[i] = ch;
            if let Ok(s) = String::from_utf8(v) {
                check(&s);
            }
        }
    }
}

// ----- C11 <threads.h> and the CDSChecker test dialect ---------------------------------------

const THRD: &str = r#"#include <threads.h>
#include <stdatomic.h>
atomic_int x;
thrd_t g;
int t1(void *arg) {
    atomic_store_explicit(&x, 1, memory_order_relaxed);
    return 0;
}
int t2(void *arg) {
    thrd_exit(arg);
}
int main(void) {
    thrd_t l;
    thrd_create(&g, t1, NULL);
    thrd_create(&l, t2, 5);
    thrd_join(g, NULL);
    thrd_join(l, 0);
    return 0;
}
"#;

#[test]
fn c11_threads_lower_like_pthreads() {
    let p = ok(THRD);
    assert_eq!(p.functions.len(), 3);
    assert_eq!(p.functions[p.main].name, "main");
    let t1 = func(&p, "t1");
    assert_eq!(t1.param, None);
    assert_eq!(
        instrs(t1),
        vec![
            Instr::Store {
                loc: Addr::Fixed(0),
                val: Expr::Const(1),
                order: MemOrder::Relaxed
            },
            Instr::Return,
        ]
    );
    let t2 = func(&p, "t2");
    // `thrd_exit(arg)` ends the thread with result `arg`: no implicit return after it.
    let result = t2.result.expect("thrd_exit sets the result");
    assert_eq!(
        instrs(t2),
        vec![
            Instr::Assign {
                dst: result,
                val: Expr::Reg(0)
            },
            Instr::Return
        ]
    );
    let main = &p.functions[p.main];
    let (g, l) = (reg(main, "g"), reg(main, "l"));
    let t1_id = p.functions.iter().position(|f| f.name == "t1").unwrap();
    let t2_id = p.functions.iter().position(|f| f.name == "t2").unwrap();
    assert_eq!(
        instrs(main),
        vec![
            Instr::Spawn {
                func: t1_id,
                arg: Expr::Const(0),
                dst: Some(g)
            },
            Instr::Spawn {
                func: t2_id,
                arg: Expr::Const(5),
                dst: Some(l)
            },
            Instr::Join {
                tid: Expr::Reg(g),
                dst: None
            },
            Instr::Join {
                tid: Expr::Reg(l),
                dst: None
            },
            Instr::Return,
        ]
    );
    let kinds: Vec<StmtKind> = p
        .stmts
        .iter()
        .filter(|s| s.func == p.main)
        .map(|s| s.kind)
        .collect();
    use StmtKind::*;
    assert_eq!(kinds, vec![Local, Thread, Thread, Thread, Thread, Local]);
}

const USER_MAIN: &str = r#"#include <threads.h>
#include <stdatomic.h>
#include "model-assert.h"
atomic_int flag;
int data;
static int writer(void *obj) {
    data = 1;
    atomic_store_explicit(&flag, 1, memory_order_release);
    return 0;
}
int user_main(int argc, char **argv) {
    thrd_t w;
    thrd_create(&w, (writer), NULL);
    int r = atomic_load_explicit(&flag, memory_order_acquire);
    MODEL_ASSERT(r == 0 || data == 1);
    thrd_join(w, NULL);
    return 0;
}
"#;

#[test]
fn user_main_and_model_assert() {
    let p = ok(USER_MAIN);
    assert_eq!(p.functions.len(), 2);
    let main = &p.functions[p.main];
    assert_eq!(main.name, "user_main");
    let w = reg(main, "w");
    let r = reg(main, "r");
    let writer = p.functions.iter().position(|f| f.name == "writer").unwrap();
    let body = instrs(main);
    assert_eq!(
        body[..3],
        [
            Instr::Spawn {
                func: writer,
                arg: Expr::Const(0),
                dst: Some(w)
            },
            Instr::Load {
                dst: reg(main, "%t0"),
                loc: Addr::Fixed(0),
                order: MemOrder::Acquire
            },
            Instr::Assign {
                dst: r,
                val: Expr::Reg(reg(main, "%t0"))
            },
        ]
    );
    // `r == 0 || data == 1`: data is read only when r != 0.
    assert!(body.iter().any(|i| matches!(i, Instr::BranchIfZero { .. })));
    assert!(body.iter().any(|i| matches!(
        i,
        Instr::Load {
            loc: Addr::Fixed(1),
            order: MemOrder::NonAtomic,
            ..
        }
    )));
    let n = body.len();
    match &body[n - 3] {
        Instr::Assert { text, .. } => assert_eq!(text, "r == 0 || data == 1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        body[n - 2],
        Instr::Join {
            tid: Expr::Reg(w),
            dst: None
        }
    );
    assert_eq!(body[n - 1], Instr::Return);
    assert_eq!(
        instrs(func(&p, "writer")),
        vec![
            Instr::Store {
                loc: Addr::Fixed(1),
                val: Expr::Const(1),
                order: MemOrder::NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: Expr::Const(1),
                order: MemOrder::Release
            },
            Instr::Return,
        ]
    );
    // `main` wins over `user_main`, which is then an ordinary (unlowered) function.
    let both = "int user_main(void) { return 0; }\nint main(void) { MODEL_ASSERT(1); }";
    let p = ok(both);
    assert_eq!(p.functions.len(), 1);
    assert_eq!(p.functions[p.main].name, "main");
    // `user_main(void)` is accepted too.
    let p = ok("int user_main(void) { return 0; }");
    assert_eq!(p.functions[p.main].name, "user_main");
}

#[test]
fn c11_thread_errors() {
    use DiagKind::*;
    type Case<'s> = (&'s str, (usize, usize, DiagKind, &'s str));
    let cases: Vec<Case> = vec![
        (
            "#include <threads.h>\nvoid *t(void *a) { return 0; }\nint main() { thrd_t p; thrd_create(&p, t, 0); }",
            (2, 1, Unsupported, "thread function `t` must have the signature `int t(void *)` or `void t(void *)` (it is passed to thrd_create)"),
        ),
        (
            "int t(int a) { return 0; }\nint main() { thrd_t p; thrd_create(&p, t, 0); }",
            (1, 1, Unsupported, "thread function `t` must have the signature `int t(void *)` or `void t(void *)` (it is passed to thrd_create)"),
        ),
        (
            "int t(void *a) { return 0; }\nint main() { thrd_t p, q; thrd_create(&p, t, 0);\n  pthread_create(&q, 0, t, 0); }",
            (1, 1, Unsupported, "thread function `t` passed to both pthread_create and thrd_create (their thread functions have different signatures)"),
        ),
        (
            "int main() { thrd_t p; thrd_join(p, 0); }",
            (1, 34, Error, "thread handle `p` is joined before a thread was created with it"),
        ),
        (
            "int t(void *a) { return 0; }\nint main() { thrd_t p; thrd_create(p, t, 0); }",
            (2, 36, Unsupported, "first argument `p` of thrd_create (expected a pointer to a pthread_t)"),
        ),
        (
            "int main() { thrd_t p; thrd_create(&p, 0); }",
            (1, 24, Error, "`thrd_create` expects 3 arguments, got 2"),
        ),
        (
            "int t(void *a) { return 0; }\nint user_main(void) { thrd_t p; thrd_create(&p, user_main, 0); }",
            (2, 49, Unsupported, "`user_main` used as a thread function"),
        ),
        ("int main() { MODEL_ASSERT(1, 2); }", (1, 14, Error, "`MODEL_ASSERT` expects 1 argument, got 2")),
        ("int user_mainx(void) { }", (1, 1, Error, "no `main` function")),
    ];
    for (src, (line, column, kind, message)) in cases {
        assert_eq!(
            diag(src),
            (line, column, kind, message.to_string()),
            "{src}"
        );
    }
}

// ----- inlined calls --------------------------------------------------------------------------

#[test]
fn inline_call_as_statement() {
    let p = ok("atomic_int x;\nvoid set(int v) { atomic_store_explicit(&x, v, memory_order_release); }\nint main() { set(2); }");
    let m = func(&p, "main");
    let v = reg(m, "v");
    assert_eq!(
        instrs(m),
        vec![
            Instr::Assign {
                dst: v,
                val: Expr::Const(2)
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: Expr::Reg(v),
                order: MemOrder::Release
            },
            Instr::Return,
        ],
        "{}",
        dump(&p)
    );
    // The store's statement is the callee's source statement, in main.
    let pc = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::Store { .. }))
        .unwrap();
    let st = &p.stmts[m.stmt_of[pc]];
    assert_eq!(
        (st.span.line, st.span.column, st.kind),
        (2, 19, StmtKind::Access)
    );
    assert_eq!(st.func, p.main);
}

#[test]
fn inline_call_in_expression() {
    let p = ok("int g;\nint get(int a) { return g + a; }\nint main() { int r = get(3) + 1; }");
    let m = func(&p, "main");
    let (a, t0, t1, r) = (reg(m, "a"), reg(m, "%t0"), reg(m, "%t1"), reg(m, "r"));
    let end = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::Assign { dst, .. } if *dst == r))
        .unwrap();
    assert_eq!(
        instrs(m),
        vec![
            Instr::Assign {
                dst: a,
                val: Expr::Const(3)
            },
            Instr::Load {
                dst: t1,
                loc: Addr::Fixed(0),
                order: MemOrder::NonAtomic
            },
            Instr::Assign {
                dst: t0,
                val: b(BinOp::Add, Expr::Reg(t1), Expr::Reg(a))
            },
            Instr::Jump { target: end },
            Instr::Assign {
                dst: r,
                val: b(BinOp::Add, Expr::Reg(t0), Expr::Const(1))
            },
            Instr::Return,
        ],
        "{}",
        dump(&p)
    );
    // The jump of the `return` lands right after the inlined body.
    assert!(
        matches!(m.body[end - 1], Instr::Jump { .. }),
        "{}",
        dump(&p)
    );
}

#[test]
fn inline_early_return_in_if() {
    let p =
        ok("int f(int a) {\n  if (a) { return 1; }\n  return 2;\n}\nint main() { int r = f(0); }");
    let m = func(&p, "main");
    let (a, t0, r) = (reg(m, "a"), reg(m, "%t0"), reg(m, "r"));
    let end = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::Assign { dst, .. } if *dst == r))
        .unwrap();
    let is = instrs(m);
    assert_eq!(
        is[0],
        Instr::Assign {
            dst: a,
            val: Expr::Const(0)
        }
    );
    assert!(matches!(is[1], Instr::BranchIfZero { cond: Expr::Reg(c), .. } if c == a));
    assert_eq!(
        is[2],
        Instr::Assign {
            dst: t0,
            val: Expr::Const(1)
        }
    );
    assert_eq!(is[3], Instr::Jump { target: end });
    assert_eq!(
        is[4],
        Instr::Assign {
            dst: t0,
            val: Expr::Const(2)
        }
    );
    assert_eq!(is[5], Instr::Jump { target: end });
    assert_eq!(
        is[6],
        Instr::Assign {
            dst: r,
            val: Expr::Reg(t0)
        }
    );
    assert_eq!(is[7], Instr::Return);
    assert_eq!(is.len(), 8, "{}", dump(&p));
    // The branch skips the then-block to the second `return`.
    let Instr::BranchIfZero { target, .. } = m.body[m
        .body
        .iter()
        .position(|i| matches!(i, Instr::BranchIfZero { .. }))
        .unwrap()]
    else {
        unreachable!()
    };
    assert!(
        matches!(
            &m.body[target..],
            [
                Instr::Slot(_),
                Instr::Assign {
                    val: Expr::Const(2),
                    ..
                },
                ..
            ]
        ),
        "{}",
        dump(&p)
    );
}

#[test]
fn inline_nested_calls() {
    let p = ok("int inc(int a) { return a + 1; }\nint twice(int b) { return inc(inc(b)); }\nint main() { int r = twice(5); }");
    let m = func(&p, "main");
    assert_eq!(
        m.reg_names,
        vec!["b", "%t0", "a", "%t1", "a", "%t2", "r"],
        "{}",
        dump(&p)
    );
    let is = instrs(m);
    let j = |i: usize| m.body.iter().position(|x| *x == is[i]).unwrap() + 1;
    assert_eq!(
        is,
        vec![
            Instr::Assign {
                dst: 0,
                val: Expr::Const(5)
            },
            Instr::Assign {
                dst: 2,
                val: Expr::Reg(0)
            },
            Instr::Assign {
                dst: 3,
                val: b(BinOp::Add, Expr::Reg(2), Expr::Const(1))
            },
            Instr::Jump { target: j(3) },
            Instr::Assign {
                dst: 4,
                val: Expr::Reg(3)
            },
            Instr::Assign {
                dst: 5,
                val: b(BinOp::Add, Expr::Reg(4), Expr::Const(1))
            },
            Instr::Jump { target: j(6) },
            Instr::Assign {
                dst: 1,
                val: Expr::Reg(5)
            },
            Instr::Jump { target: j(8) },
            Instr::Assign {
                dst: 6,
                val: Expr::Reg(1)
            },
            Instr::Return,
        ],
        "{}",
        dump(&p)
    );
}

const TWO_THREADS: &str = r#"#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
atomic_int flag;
int data;
void publish(int v) {
    data = v;
    atomic_store_explicit(&flag, 1, memory_order_relaxed);
}
void *t1(void *arg) {
    publish(1);
    return NULL;
}
void *t2(void *arg) {
    publish(2);
    publish(3);
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, t1, NULL);
    pthread_create(&b, NULL, t2, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
"#;

#[test]
fn inline_from_two_threads_shares_statements() {
    let p = ok(TWO_THREADS);
    let (t1, t2) = (func(&p, "t1"), func(&p, "t2"));
    let v1 = reg(t1, "v");
    assert_eq!(
        instrs(t1),
        vec![
            Instr::Assign {
                dst: v1,
                val: Expr::Const(1)
            },
            Instr::Store {
                loc: Addr::Fixed(1),
                val: Expr::Reg(v1),
                order: MemOrder::NonAtomic
            },
            Instr::Store {
                loc: Addr::Fixed(0),
                val: Expr::Const(1),
                order: MemOrder::Relaxed
            },
            Instr::Return,
        ]
    );
    assert_eq!(instrs(t2).len(), 7, "{}", dump(&p));
    // Every copy of `data = v;` belongs to the same Stmt, and the slots before it have the
    // same place (one slot per copy).
    let store_stmts: Vec<StmtId> = [t1, t2]
        .iter()
        .flat_map(|f| {
            f.body
                .iter()
                .zip(&f.stmt_of)
                .filter(|(i, _)| {
                    matches!(
                        i,
                        Instr::Store {
                            loc: Addr::Fixed(1),
                            ..
                        }
                    )
                })
                .map(|(_, s)| *s)
        })
        .collect();
    assert_eq!(store_stmts.len(), 3);
    assert!(store_stmts.iter().all(|s| *s == store_stmts[0]));
    assert_eq!(p.stmts[store_stmts[0]].span.line, 7);
    let before: Vec<SlotId> = [t1, t2]
        .iter()
        .flat_map(|f| {
            f.body.iter().filter_map(|i| match i {
                Instr::Slot(s)
                    if p.slots[*s].place
                        == SlotPlace::Before {
                            stmt: store_stmts[0],
                        } =>
                {
                    Some(*s)
                }
                _ => None,
            })
        })
        .collect();
    assert_eq!(before.len(), 3);
    // One source place, one slot: every copy's marker is the first copy's slot (merged by
    // `Program::merge_duplicate_slots`), so a fence there is one fence in every copy.
    assert!(before.iter().all(|s| *s == before[0]), "{before:?}");
    let fid = |n: &str| p.functions.iter().position(|f| f.name == n).unwrap();
    assert_eq!(p.slots[before[0]].func, fid("t1"));
}

#[test]
fn recursion_is_inlined_to_its_bound() {
    // Direct and mutual recursion: calls nested `--recursion` deep are inlined, the next one
    // is a cut (the thread stops there, reported as cut at the bound).
    let cuts = |src: &str, depth: Option<u32>| {
        let pp = PpOptions {
            recursion: depth,
            ..PpOptions::default()
        };
        let p = parse_unit("t.c", src, Lang::C, &[], &pp, &preprocess::Disk)
            .unwrap_or_else(|d| panic!("{d}\n{src}"));
        p.validate().unwrap();
        let main = &p.functions[p.main];
        let calls = main.body.iter().filter(|i| matches!(i, Instr::Cut)).count();
        let bodies = main
            .body
            .iter()
            .filter(|i| matches!(i, Instr::BranchIfZero { .. }))
            .count();
        (calls, bodies)
    };
    let direct =
        "int g(int n) { if (n > 0) return g(n - 1); return 0; }\nint main() { return g(2); }";
    // Default 1: g, g inside it, then a cut; each inlined body has one branch.
    assert_eq!(cuts(direct, None), (1, 2));
    assert_eq!(cuts(direct, Some(0)), (1, 1));
    assert_eq!(cuts(direct, Some(3)), (1, 4));
    let mutual = "int g(int n);\nint f(int n) { if (n > 0) return g(n - 1); return 0; }\n\
                  int g(int n) { return f(n); }\nint main() { return g(3); }";
    assert_eq!(cuts(mutual, None).0, 1);
}

#[test]
fn inline_diagnostics() {
    use DiagKind::*;
    type Case<'s> = (&'s str, (usize, usize, DiagKind, &'s str));
    let cases: Vec<Case> = vec![
        (
            "void f(void);\nint main() { f(); }\nvoid f(void) { }",
            (2, 14, Unsupported, "call to `f`, which is defined after `main` (define called functions before their callers)"),
        ),
        (
            "void f(void) { }\nint main() { int r = f(); }",
            (2, 22, Error, "void function `f` used as a value"),
        ),
        (
            "int f(int a) { return; }\nint main() { int r = f(1); }",
            (1, 16, Unsupported, "`return` without a value in function `f` returning an integer"),
        ),
        (
            "int f(int a) { return a; }\nint main() { int r = f(1, 2); }",
            (2, 22, Error, "`f` expects 1 argument, got 2"),
        ),
        (
            "int f(void) { return x; }\nint x;\nint main() { int r = f(); }",
            (1, 22, Error, "undeclared identifier `x`"),
        ),
        (
            "int f(void) { int r = 1; return r; }\nint main() { int r = 0; f(); return q; }",
            (2, 37, Error, "undeclared identifier `q`"),
        ),
        (
            "int main() { int r = 0; }\nint g = f();",
            (2, 9, Error, "initialiser of a global must be a constant expression"),
        ),
    ];
    for (src, (line, col, kind, msg)) in cases {
        assert_eq!(diag(src), (line, col, kind, msg.to_string()), "{src}");
    }
    // A caller's locals are not visible in the callee.
    assert_eq!(
        diag("int f(void) { return r; }\nint main() { int r = 1; int s = f(); }"),
        (1, 22, Error, "undeclared identifier `r`".to_string())
    );
}

#[test]
fn inline_depth_is_capped() {
    let mut src = String::from("int f0(int a) { return a; }\n");
    for i in 1..=40 {
        src += &format!("int f{i}(int a) {{ return f{}(a); }}\n", i - 1);
    }
    src += "int main() { int r = f40(1); }";
    let (_, _, kind, msg) = diag(&src);
    assert_eq!(
        (kind, msg.as_str()),
        (DiagKind::Unsupported, "calls nested deeper than 32 levels")
    );
}

#[test]
fn inline_fixture_like_program_validates() {
    let src = r#"#include <stdatomic.h>
#include <pthread.h>
#include <assert.h>
atomic_int lk;
int counter;
void lock(void) {
    while (1) {
        int e = 0;
        if (atomic_compare_exchange_strong_explicit(&lk, &e, 1, memory_order_acquire, memory_order_relaxed))
            return;
    }
}
void unlock(void) { atomic_store_explicit(&lk, 0, memory_order_release); }
int add(int a, int b) { return a + b; }
void *worker(void *arg) {
    lock();
    counter = add(counter, 1);
    unlock();
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    lock();
    assert(counter == 2);
    unlock();
    return 0;
}
"#;
    let p = ok(src);
    p.validate().unwrap();
    let w = func(&p, "worker");
    assert!(w.body.iter().any(|i| matches!(i, Instr::Cas { .. })));
    assert!(w.body.iter().any(|i| matches!(i, Instr::LoopEnter { .. })));
    // main's copy of lock() has its own loop id.
    let heads: Vec<usize> = p
        .functions
        .iter()
        .flat_map(|f| {
            f.body.iter().filter_map(|i| match i {
                Instr::LoopEnter { id } => Some(*id),
                _ => None,
            })
        })
        .collect();
    assert_eq!(heads.len(), 2);
    assert_ne!(heads[0], heads[1]);
}

#[test]
fn object_like_macros_are_integer_constants() {
    // In an expression, as an array size, as a `case` label, referring to an earlier macro.
    let src = "#define N 3\n#define M ((N) * 2 + (1 << 2) - '\\0') // six plus four\natomic_int x;\nint a[N];\n\
               int main() {\n  int r = N + M;\n  switch (x) { case M: r = 1; }\n  a[N - 1] = r;\n}\n";
    let (p, c) = main_code(src);
    assert_eq!(p.globals.len(), 4);
    assert_eq!(c[0], assign(0, k(13)));
    assert!(c.contains(&biz(b(BinOp::Ne, r(1), k(10)), 4)), "{c:?}");
    // A macro is `int` when it fits, else `long`: `B + B` does not wrap to 32 bits.
    let (_, c) =
        main_code("#define B 0x7fffffff\n#define L (B + 1)\nint main() { long l = L; l = B + B; }");
    assert_eq!(c[0], assign(0, k(1 << 31)));
    // Every operator of an integer constant expression, with short-circuits.
    let (_, c) = main_code(
        "#define Z 0\n#define V (!Z ? -(~1 ^ 6 | 8 & 12) % 5 + (1 && 2 || 0) * (3 >= 3) + (16 >> 2) : 1 / Z)\n\
         #define W (Z && 1 / Z) + (1 || 1 % Z) + (2 != 2) + (1 <= 0) + (1 < 2) + (2 > 1) + (1 == 1)\n\
         int main() { int r = V; r = W; }",
    );
    // ~1 ^ 6 = -8, | (8 & 12) = -8 | 8 = -8, -(-8) % 5 = 3, + 1 * 1 + 4 = 8.
    assert_eq!(c[0], assign(0, k(8)));
    assert_eq!(c[1], assign(0, k(4)));
    // Before its `#define` the name is an ordinary identifier.
    assert_eq!(
        diag("int main() { return N; }\n#define N 2\n"),
        (
            1,
            21,
            DiagKind::Error,
            "undeclared identifier `N`".to_string()
        )
    );
    // Redefinition with the same value is allowed (as in C).
    ok("#define N 2\n#define N 2\n#define E\n#define E\nint main() { return N; }");
}

#[test]
fn macro_bounds_make_counting_loops() {
    let src = "#define N 4\natomic_int x;\nint main() {\n  for (int i = 0; i < N; i++) x = i;\n  for (int i = N; i > 0; i--) x = i;\n}\n";
    let p = ok(src);
    assert!(loop_heads(&p.functions[p.main]).is_empty());
    assert!(!p.functions[p.main]
        .body
        .iter()
        .any(|i| matches!(i, Instr::LoopEnter { .. })));
}

#[test]
fn ifdef_and_ifndef_choose_defines() {
    let value = |src: &str| {
        let (_, c) = main_code(&format!("{src}\nint main() {{ int r = N; }}\n"));
        c[0].clone()
    };
    // The default of `#ifndef` after an earlier `#define`, and without one.
    assert_eq!(
        value("#define N 3\n#ifndef N\n#define N 2\n#endif"),
        assign(0, k(3))
    );
    assert_eq!(
        value("#ifndef N\n// the default\n#define N 2\n#endif"),
        assign(0, k(2))
    );
    // `#ifdef` with `#else`; the branch not taken is ignored entirely.
    let two = "#ifdef FAST\n#define N 1\n#else\n#define N 2\n#endif";
    assert_eq!(value(two), assign(0, k(2)));
    assert_eq!(value(&format!("#define FAST\n{two}")), assign(0, k(1)));
    assert_eq!(
        value("#ifdef FAST\n#define N 5\nint ignored;\n#else\n#define N 6\n#endif"),
        assign(0, k(6))
    );
    assert_eq!(value("#ifndef N\n#endif\n#define N 7"), assign(0, k(7)));
}
