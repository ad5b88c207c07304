//! Tests of the ordinary C expressions and declarations of `lower/effects.rs`, `enums.rs` and
//! `initializers.rs`: assignments, increments and commas used as values (and the unsequenced
//! modifications refused), enums, a stray `;` at file scope, designated initialisers.

use super::*;
use crate::checker::{explore, Control, Limits, Model};
use crate::ir::*;

fn ok(src: &str) -> Program {
    let p = parse_c("t.c", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn diag_in(lang: Lang, src: &str) -> (usize, usize, DiagKind, String) {
    match parse("t", src, lang) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// The instructions of `main` without slot markers.
fn main_instrs(p: &Program) -> Vec<Instr> {
    p.functions[p.main]
        .body
        .iter()
        .filter(|i| !matches!(i, Instr::Slot(_)))
        .cloned()
        .collect()
}

fn reg(p: &Program, name: &str) -> Reg {
    let m = &p.functions[p.main];
    m.reg_names.iter().position(|n| n == name).unwrap()
}

fn r(n: Reg) -> Expr {
    Expr::Reg(n)
}

fn k(v: i64) -> Expr {
    Expr::Const(v)
}

fn b(op: BinOp, a: Expr, c: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(c))
}

fn assign(dst: Reg, val: Expr) -> Instr {
    Instr::Assign { dst, val }
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

/// Runs `main`'s assertions (a program without threads has one execution): `true` when none
/// fails.
fn holds(src: &str) -> bool {
    let p = ok(src);
    let st = explore(&p, Model::Rc11, Limits::default(), |_| Control::Continue);
    assert_eq!(st.executions, 1, "{src}");
    st.buggy == 0
}

fn globals(p: &Program) -> Vec<(String, i64)> {
    p.globals.iter().map(|g| (g.name.clone(), g.init)).collect()
}

#[test]
fn assignments_used_as_values() {
    use MemOrder::*;
    let p = ok("atomic_int x;\nint main() {\n  int r;\n  if ((r = atomic_load(&x)) == 1) r = 2;\n  return r;\n}\n");
    let (rr, t0) = (reg(&p, "r"), reg(&p, "%t0"));
    let c = main_instrs(&p);
    assert_eq!(
        c[..3],
        [assign(rr, k(0)), load(t0, 0, SeqCst), assign(rr, r(t0))]
    );
    assert!(
        matches!(&c[3], Instr::BranchIfZero { cond, .. } if *cond == b(BinOp::Eq, r(rr), k(1))),
        "{c:?}"
    );
    // Chains: `a = b = 0` on locals and on plain globals (the value is the one stored).
    let p = ok(
        "int g, h;\nint main() {\n  int a, c;\n  a = c = 7;\n  g = h = a + 1;\n  return a;\n}\n",
    );
    let (a, c) = (reg(&p, "a"), reg(&p, "c"));
    let t0 = reg(&p, "%t0");
    assert_eq!(
        main_instrs(&p),
        vec![
            assign(a, k(0)),
            assign(c, k(0)),
            assign(c, k(7)),
            assign(a, r(c)),
            store(1, b(BinOp::Add, r(a), k(1)), NonAtomic),
            assign(t0, b(BinOp::Add, r(a), k(1))),
            store(0, r(t0), NonAtomic),
            Instr::Return,
        ]
    );
    // Conversions: the value is the target's value after the assignment.
    assert!(holds("#include <assert.h>\nint main() { unsigned char c; int v = (c = 300); assert(v == 44 && c == 44); }"));
    // In a loop condition, with an inlined call.
    assert!(holds(
        "#include <assert.h>\nint next(int v) { return v - 1; }\nint main() {\n  int v = 3, n = 0;\n  while ((v = next(v)) != 0) n++;\n  assert(n == 2 && v == 0);\n}\n"
    ));
}

#[test]
fn increments_used_as_values() {
    use MemOrder::*;
    let p = ok("int g;\nint main() {\n  int r = 5;\n  int a = r++;\n  int c = --r;\n  int q = g++;\n  return a + c + q;\n}\n");
    let (rr, a, c, q) = (reg(&p, "r"), reg(&p, "a"), reg(&p, "c"), reg(&p, "q"));
    let (t0, t1) = (reg(&p, "%t0"), reg(&p, "%t1"));
    assert_eq!(
        main_instrs(&p)[..9],
        [
            assign(rr, k(5)),
            assign(t0, r(rr)), // the old value
            assign(rr, b(BinOp::Add, r(rr), k(1))),
            assign(a, r(t0)),
            assign(rr, b(BinOp::Sub, r(rr), k(1))),
            assign(c, r(rr)), // the new value
            load(t1, 0, NonAtomic),
            store(0, b(BinOp::Add, r(t1), k(1)), NonAtomic),
            assign(q, r(t1)),
        ]
    );
    assert!(holds(
        "#include <assert.h>\nunsigned char c = 255; int a[3];\nint main() {\n  int v = c++;\n  int w = ++c;\n  int i = 0;\n  a[i++] = 4;\n  a[i++] = 5;\n  int e = a[1]--;\n  assert(v == 255 && c == 1 && w == 1 && i == 2 && a[0] == 4 && e == 5 && a[1] == 4);\n}\n"
    ));
}

/// Locals in memory (their address is taken, or they are atomic): the same values; reading
/// one is a load, so an operand of `&&` that does is evaluated only when C evaluates it.
#[test]
fn increments_of_locals_in_memory() {
    assert!(holds(
        "#include <assert.h>\n#include <stdatomic.h>\nint main() {\n  int x = 1;\n  int *p = &x;\n  int y = x++;\n  int z = ++x;\n  atomic_int c = 5;\n  int old = c++;\n  int now = --c;\n  int w = (x = 7);\n  assert(y == 1 && z == 3 && *p == 7 && w == 7 && old == 5 && now == 5 && c == 5);\n}\n"
    ));
}

#[test]
fn comma_operator() {
    // As a statement and in `for` clauses: each operand as the statement it would be.
    let two = ok("int x, y;\nint main() { x = 1, y = 2; }\n");
    let one = ok("int x, y;\nint main() { x = 1; y = 2; }\n");
    assert_eq!(main_instrs(&two), main_instrs(&one));
    assert!(holds(
        "#include <assert.h>\nint main() {\n  int i, j, n = 0;\n  for (i = 0, j = 4; i < j; i++, j--) n++;\n  assert(n == 2);\n}\n"
    ));
    // As a value: the right operand, after the left one's effects.
    assert!(holds(
        "#include <assert.h>\nint g;\nint main() {\n  int r = (g++, g + 1);\n  int n = 0;\n  while (n++, n < 3) ;\n  assert(r == 2 && n == 3);\n}\n"
    ));
    // A void call on the left.
    assert!(holds(
        "#include <assert.h>\nint g;\nvoid set(void) { g = 4; }\nint main() { int r = (set(), g); assert(r == 4); }\n"
    ));
}

#[test]
fn refusals() {
    use DiagKind::*;
    type Case<'s> = (Lang, &'s str, (usize, usize, DiagKind, &'s str));
    let c = Lang::C;
    let ub = |v: &str| {
        format!(
            "`{v}` is modified and also read or modified elsewhere in this expression, with no \
             sequence point in between (undefined behaviour in C)"
        )
    };
    let ub_i = ub("i");
    let cases: Vec<Case> = vec![
        (
            c,
            "int main() { int i = 0; i = i++; }",
            (1, 25, Error, &ub_i),
        ),
        (
            c,
            "int a[2];\nint main() { int i = 0; a[i] = i++; }",
            (2, 25, Error, &ub_i),
        ),
        (
            c,
            "int main() { int i = 0; int r = i++ + i; }",
            (1, 33, Error, &ub_i),
        ),
        (
            c,
            "int f(int a, int b) { return a; }\nint main() { int i = 0; int r = f(i++, i++); }",
            (2, 34, Error, &ub_i),
        ),
        (
            c,
            "int main() { int i = 0; i = (i = 1) + 1; }",
            (1, 25, Error, &ub_i),
        ),
        (
            c,
            "int g = (1, 2);\nint main() { }",
            (
                1,
                10,
                Error,
                "initialiser of a global must be a constant expression",
            ),
        ),
        (
            c,
            "int h;\nint g = (h = 1);\nint main() { }",
            (
                2,
                10,
                Error,
                "initialiser of a global must be a constant expression",
            ),
        ),
        (
            c,
            "enum E { A, B };\nint main() { A = 1; }",
            (
                2,
                14,
                Error,
                "`A` is an enumeration constant, not a variable",
            ),
        ),
        (
            c,
            "enum E { A, A };\nint main() { }",
            (1, 13, Error, "redefinition of `A`"),
        ),
        (
            c,
            "int A;\nenum E { A };\nint main() { }",
            (2, 10, Error, "redefinition of `A`"),
        ),
        (
            c,
            "enum E { A };\nint A;\nint main() { }",
            (2, 5, Error, "redefinition of `A`"),
        ),
        (
            c,
            "enum E { A };\nenum E { B };\nint main() { }",
            (2, 1, Error, "redefinition of `enum E`"),
        ),
        (
            c,
            "enum E e;\nint main() { }",
            (
                1,
                1,
                Error,
                "`enum E` is not defined (define an enum before using it)",
            ),
        ),
        (
            c,
            "enum E;\nint main() { }",
            (
                1,
                1,
                Unsupported,
                "enum declaration without its enumerators (define the enum here)",
            ),
        ),
        (
            c,
            "enum E { A = 3000000000 };\nint main() { }",
            (
                1,
                14,
                Unsupported,
                "enumerator value 3000000000 is outside the range of `int`",
            ),
        ),
        (
            c,
            "int main() {\n  enum E { A, B } e = A;\n}",
            (
                2,
                3,
                Unsupported,
                "enum definition inside a function (define it at file scope)",
            ),
        ),
        (
            c,
            "int main() {\n  enum { A };\n}",
            (
                2,
                3,
                Unsupported,
                "enum definition inside a function (define it at file scope)",
            ),
        ),
        (
            Lang::Cpp,
            "enum class E { A };\nint main() { }",
            (1, 1, Unsupported, "scoped enum (`enum class`)"),
        ),
        (
            Lang::Cpp,
            "enum E : long { A };\nint main() { }",
            (1, 10, Unsupported, "enum with an underlying type"),
        ),
        (
            c,
            "int a[2] = { [2] = 1 };\nint main() { }",
            (
                1,
                15,
                Error,
                "array index 2 in initialiser is out of bounds of an array of 2 elements",
            ),
        ),
        (
            c,
            "int a[2] = { [1] = 1, 2 };\nint main() { }",
            (1, 23, Error, "too many initialisers for the array"),
        ),
        (
            c,
            "int a[4] = { [0 ... 2] = 1 };\nint main() { }",
            (
                1,
                14,
                Unsupported,
                "designator range `[a ... b]` (a GNU extension)",
            ),
        ),
        (
            c,
            "int a[4] = { .x = 1 };\nint main() { }",
            (
                1,
                14,
                Error,
                "designator `.x` does not name an array element",
            ),
        ),
        (
            c,
            "struct S { int x; };\nstruct S s = { .y = 1 };\nint main() { }",
            (2, 16, Error, "no member named `y` in the struct"),
        ),
        (
            c,
            "struct S { int x; };\nstruct S s = { [0] = 1 };\nint main() { }",
            (
                2,
                16,
                Error,
                "designator `[0]` does not name a struct member",
            ),
        ),
        (
            c,
            "struct S { int x; };\nstruct S s = { .x = 1, 2 };\nint main() { }",
            (2, 24, Error, "too many initialisers for the struct"),
        ),
        (
            c,
            "struct S { int x; };\nstruct S s = { .x.y = 1 };\nint main() { }",
            (2, 18, Error, "designator `.y` for a scalar"),
        ),
    ];
    let mut bad = Vec::new();
    for (lang, src, (line, column, kind, message)) in cases {
        let got = diag_in(lang, src);
        if got != (line, column, kind, message.to_string()) {
            bad.push(format!("{src}\n  got {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Sequenced or separate modifications are fine.
    ok("int main() { int i = 0, j = 0; i = i + 1; i = j = 2; i++, i++; int r = i++ && i++; r = i ? i++ : i--; }");
}

#[test]
fn enums() {
    let src = "enum state { IDLE, BUSY = 5, DONE, NEG = -2, AFTER };\ntypedef enum { RED, GREEN } colour;\nint slots[DONE] = { [BUSY] = GREEN };\nenum state s = DONE;\nstruct S { enum state st; colour c; } obj = { AFTER, GREEN };\nint main() {\n  colour c = GREEN;\n  int IDLE = 9;\n  switch (s) { case DONE: return IDLE + c; default: return 0; }\n}\n";
    let p = ok(src);
    let g = globals(&p);
    assert_eq!(g[5], ("slots[5]".to_string(), 1));
    assert_eq!(g[6], ("s".to_string(), 6));
    assert_eq!(g[7], ("obj.st".to_string(), -1));
    assert_eq!(g[8], ("obj.c".to_string(), 1));
    // An enum type without negative enumerators is unsigned (GCC's and Clang's choice).
    assert!(holds(
        "#include <assert.h>\nenum e { A, B };\nenum f { M = -1, N };\nint main() { enum e x = A; enum f y = M; assert(x - 1 > 0 && y - 1 < 0 && B == 1 && N == 0); }\n"
    ));
    // A local hides an enumerator; an enumerator is visible from its definition on.
    assert!(holds(
        "#include <assert.h>\nenum { ONE = 1, TWO = ONE + 1 };\nint main() { int ONE = 7; assert(ONE == 7 && TWO == 2); }\n"
    ));
    // In C++ the tag is a type name.
    let p = parse_cpp(
        "t.cpp",
        "enum E { A, B };\nE e = B;\nint main() { E f = A; return f; }\n",
    )
    .unwrap();
    assert_eq!(p.globals[0].init, 1);
}

#[test]
fn stray_semicolons_at_file_scope() {
    let src = "#include <stdatomic.h>\natomic_int flag;;\n;\nint main() { return 0; };\n";
    ok(src);
    parse_cpp(
        "t.cpp",
        "#include <atomic>\nstd::atomic<int> flag;;\nint main() { return 0; }\n",
    )
    .unwrap();
}

#[test]
fn designated_initialisers() {
    let p = ok("struct N { int v; struct N *next; };\nstruct N n0;\nstruct N n1 = { .next = &n0, .v = 2 };\nint a[] = { [3] = 1, 5, [1] = 2 };\nstruct P { int x; int y[2]; } ps[2] = { [1].y[1] = 7, [0] = { 1, { 2 } }, [0].x = 3 };\nint main() { }\n");
    let g = globals(&p);
    let n0 = p.global_by_name("n0.v").unwrap();
    assert_eq!(g[2], ("n1.v".to_string(), 2));
    assert_eq!(g[3], ("n1.next".to_string(), pointer_to(n0)));
    let a: Vec<i64> = g[4..9].iter().map(|(_, v)| *v).collect();
    assert_eq!(a, [0, 2, 0, 1, 5]);
    let ps: Vec<(String, i64)> = g[9..15].to_vec();
    assert_eq!(
        ps,
        [
            ("ps[0].x".to_string(), 3),
            ("ps[0].y[0]".to_string(), 2),
            ("ps[0].y[1]".to_string(), 0),
            ("ps[1].x".to_string(), 0),
            ("ps[1].y[0]".to_string(), 0),
            ("ps[1].y[1]".to_string(), 7),
        ]
    );
    // A whole subobject initialised again starts from zero; a chain changes what it names.
    let p = ok("struct P { int x, y; } q[1] = { [0] = { 1, 2 }, [0] = { 5 } }, w[1] = { [0] = { 1, 2 }, [0].x = 5 };\nint main() { }\n");
    let v: Vec<i64> = p.globals.iter().map(|g| g.init).collect();
    assert_eq!(v, [5, 0, 5, 2]);
    // Static locals too.
    assert!(holds(
        "#include <assert.h>\nint main() { static int t[3] = { [2] = 9 }; assert(t[2] == 9 && t[0] == 0); }\n"
    ));
}
