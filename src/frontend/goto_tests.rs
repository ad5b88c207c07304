//! Tests of labels and `goto` (`lower/goto.rs`): forward jumps, loops made by backward
//! jumps and their bound, where the slots around a label are, labels in `switch`es, inlined
//! bodies and thread lambdas, C++ lock guards left by a `goto`, and every refusal.

use super::*;
use crate::checker::{explore, Control, Limits, Model, Stats};
use crate::ir::*;

const HEAD: &str = "#include <stdatomic.h>\n#include <pthread.h>\n#include <assert.h>\n";

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

fn diag_in(lang: Lang, src: &str) -> (usize, usize, DiagKind, String) {
    match parse("t", src, lang) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
}

/// The instructions of `f` without slot markers, jump targets renumbered to index this list.
fn code(f: &Function) -> Vec<Instr> {
    let mut index = Vec::with_capacity(f.body.len() + 1);
    let mut n = 0;
    for i in &f.body {
        index.push(n);
        n += usize::from(!matches!(i, Instr::Slot(_)));
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

fn main_fn(p: &Program) -> &Function {
    &p.functions[p.main]
}

fn func<'p>(p: &'p Program, name: &str) -> &'p Function {
    p.functions.iter().find(|f| f.name == name).unwrap()
}

fn jump(target: usize) -> Instr {
    Instr::Jump { target }
}

fn biz(cond: Expr, target: usize) -> Instr {
    Instr::BranchIfZero { cond, target }
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

/// The place of the slot whose marker is at `pc` of `f`, if there is one.
fn slot_at(p: &Program, f: &Function, pc: usize) -> Option<SlotPlace> {
    match f.body.get(pc) {
        Some(Instr::Slot(s)) => Some(p.slots[*s].place.clone()),
        _ => None,
    }
}

/// The (line, column) of the statement a `Before` slot stands before.
fn before_at(p: &Program, place: &SlotPlace) -> (usize, usize) {
    match place {
        SlotPlace::Before { stmt } => (p.stmts[*stmt].span.line, p.stmts[*stmt].span.column),
        other => panic!("not a Before slot: {other:?}"),
    }
}

fn stats(p: &Program, unroll: u32) -> Stats {
    let limits = Limits {
        unroll: Some(unroll),
        ..Limits::default()
    };
    explore(p, Model::Rc11, limits, |_| Control::Continue)
}

const LITMUS_THREAD: &str = "atomic_int x, y;
int main() {
label_1:;
  int r0 = atomic_load_explicit(&x, memory_order_relaxed);
  if (r0) goto lbl_after; else goto lbl_after;
lbl_after:;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return 0;
}
";

#[test]
fn forward_gotos_are_jumps_to_the_label() {
    let p = ok(LITMUS_THREAD);
    let m = main_fn(&p);
    let (t0, r0) = (0, 1);
    assert_eq!(m.reg_names, vec!["%t0", "r0"]);
    assert_eq!(
        code(m),
        vec![
            Instr::Load {
                dst: t0,
                loc: Addr::Fixed(0),
                order: MemOrder::Relaxed
            },
            Instr::Assign {
                dst: r0,
                val: r(t0)
            },
            biz(r(r0), 4),
            jump(5),
            jump(5),
            Instr::Store {
                loc: Addr::Fixed(1),
                val: k(1),
                order: MemOrder::Relaxed
            },
            Instr::Return,
        ]
    );
    // No loop, and the labels have no statements or slots of their own: `label_1:;` and
    // `lbl_after:;` only carry their labels.
    assert!(!m.body.iter().any(|i| matches!(i, Instr::LoopEnter { .. })));
    let lines: Vec<usize> = p.stmts.iter().map(|s| s.span.line).collect();
    assert!(!lines.contains(&3) && !lines.contains(&6), "{lines:?}");
    // Both gotos land on the slot before the store: a fence written on the line after
    // `lbl_after:;` runs on every path.
    let targets: Vec<usize> = m
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::Jump { target } => Some(*target),
            _ => None,
        })
        .collect();
    assert_eq!(targets.len(), 2);
    for t in targets {
        let place = slot_at(&p, m, t).expect("a goto lands on a slot marker");
        assert_eq!(before_at(&p, &place), (7, 3));
    }
    // The gotos are unbraced bodies that divert: no block-end slot after them.
    let ends = p
        .slots
        .iter()
        .filter(|s| matches!(s.place, SlotPlace::BlockEnd { .. }))
        .count();
    assert_eq!(ends, 0);
}

#[test]
fn a_backward_goto_makes_a_bounded_loop() {
    let src = "atomic_int x;\nint main() {\n  int r = 0;\nagain:\n  r = atomic_load(&x);\n  if (r == 0) goto again;\n  return r;\n}\n";
    let p = ok(src);
    let m = main_fn(&p);
    let (t0, rr) = (1, 0);
    assert_eq!(m.reg_names, vec!["r", "%t0"]);
    assert_eq!(
        code(m),
        vec![
            Instr::Assign { dst: rr, val: k(0) },
            Instr::LoopEnter { id: 0 },
            Instr::LoopIter { id: 0 },
            Instr::Load {
                dst: t0,
                loc: Addr::Fixed(0),
                order: MemOrder::SeqCst
            },
            Instr::Assign {
                dst: rr,
                val: r(t0)
            },
            biz(b(BinOp::Eq, r(rr), k(0)), 7),
            jump(2),
            Instr::Return,
        ]
    );
    // The markers belong to a statement of the labeled statement (line 4), which has no slot;
    // the slot before `r = ...` comes after the LoopIter, so a fence there runs every time.
    let iter = m
        .body
        .iter()
        .position(|i| matches!(i, Instr::LoopIter { .. }))
        .unwrap();
    let owner = &p.stmts[m.stmt_of[iter]];
    assert_eq!((owner.span.line, owner.span.column), (4, 1));
    assert!(!p.slots.iter().any(|s| s.place
        == SlotPlace::Before {
            stmt: m.stmt_of[iter]
        }));
    let place = slot_at(&p, m, iter + 1).unwrap();
    assert_eq!(before_at(&p, &place), (5, 3));
}

/// Every pass through a loop label counts, the first included: the bound of a goto loop is
/// the bound of the `do … while` it spells, at every `--unroll`.
#[test]
fn a_goto_loop_is_bounded_like_its_do_while() {
    let goto = "#include <assert.h>\nint main() {\n  int i = 0;\nL:\n  i++;\n  if (i < 5) goto L;\n  assert(i == 5);\n}\n";
    let dowhile =
        "#include <assert.h>\nint main() {\n  int i = 0;\n  do {\n    i++;\n  } while (i < 5);\n  assert(i == 5);\n}\n";
    let (g, d) = (ok(goto), ok(dowhile));
    for unroll in 1..=6 {
        let (sg, sd) = (stats(&g, unroll), stats(&d, unroll));
        assert_eq!(
            (sg.executions, sg.bounded, sg.buggy),
            (sd.executions, sd.bounded, sd.buggy),
            "--unroll {unroll}"
        );
        // Five passes: cut below five, complete from five on.
        let want = if unroll < 5 { (0, 1) } else { (1, 0) };
        assert_eq!((sg.executions, sg.bounded), want, "--unroll {unroll}");
    }
}

/// Each entry into a goto loop starts its count again: the loop inside an outer loop runs
/// its full bound on every outer iteration.
#[test]
fn each_entry_into_a_goto_loop_is_bounded_apart() {
    let src = "#include <assert.h>\nint main() {\n  int n = 0;\n  for (int k = 0; k < 3; k++) {\n    int i = 0;\n  L:\n    i++;\n    n++;\n    if (i < 2) goto L;\n  }\n  assert(n == 6);\n}\n";
    let p = ok(src);
    let s = stats(&p, 2);
    assert_eq!((s.executions, s.bounded, s.buggy), (1, 0, 0));
    let s = stats(&p, 1);
    assert_eq!((s.executions, s.bounded), (0, 1));
}

/// A jump from outside a goto loop into its middle (here: the `else` branch of the `if`
/// that holds the label) passes a `LoopEnter` on its way.
#[test]
fn entries_into_the_middle_of_a_goto_loop_pass_a_loop_enter() {
    let src = "atomic_int x;\nint main() {\n  int r = atomic_load(&x);\n  if (r) {\n  L:\n    r = r - 1;\n  } else {\n    r = 2;\n  }\n  if (r > 0) goto L;\n  return 0;\n}\n";
    let p = ok(src);
    let m = main_fn(&p);
    let c = code(m);
    // The if's branch to `else` goes to a trampoline after the function's code.
    let else_target = c
        .iter()
        .find_map(|i| match i {
            Instr::BranchIfZero { target, .. } => Some(*target),
            _ => None,
        })
        .unwrap();
    let ret = c.iter().rposition(|i| *i == Instr::Return).unwrap();
    assert!(else_target > ret, "{c:?}");
    assert!(
        matches!(c[else_target], Instr::LoopEnter { id: 0 }),
        "{c:?}"
    );
    let Instr::Jump { target } = c[else_target + 1] else {
        panic!("{c:?}")
    };
    assert_eq!(c[target], Instr::Assign { dst: 1, val: k(2) });
    // Bounded per entry: with r = 2 the loop passes the label twice.
    let s = stats(&p, 2);
    assert_eq!((s.executions, s.bounded), (1, 0));
    let s = stats(&p, 1);
    assert_eq!((s.executions, s.bounded), (0, 1));
}

/// A forward goto to a later label inside a goto loop enters it too; a jump that stays
/// inside the loop does not get a trampoline.
#[test]
fn forward_goto_into_a_goto_loop() {
    let src = "int main() {\n  int i = 0;\n  goto M;\nL:\n  i++;\nM:\n  i++;\n  if (i < 6) goto L;\n  return i;\n}\n";
    let p = ok(src);
    let c = code(main_fn(&p));
    let inc = Instr::Assign {
        dst: 0,
        val: b(BinOp::Add, r(0), k(1)),
    };
    assert_eq!(
        c,
        vec![
            Instr::Assign { dst: 0, val: k(0) },
            jump(9), // `goto M`: through the trampoline
            Instr::LoopEnter { id: 0 },
            Instr::LoopIter { id: 0 },
            inc.clone(),
            inc, // M
            biz(b(BinOp::Lt, r(0), k(6)), 8),
            jump(3), // `goto L`: stays inside, to the LoopIter
            Instr::Return,
            Instr::LoopEnter { id: 0 },
            jump(5),
        ]
    );
    let s = stats(&p, 3);
    assert_eq!((s.executions, s.bounded), (1, 0));
    let s = stats(&p, 2);
    assert_eq!((s.executions, s.bounded), (0, 1));
}

#[test]
fn labels_in_switch_cases_and_nested_loops() {
    let src = "int main() {\n  int r = 0, n = 0;\n  switch (r) {\n  case 0:\n  top:\n    n++;\n    if (n < 3) goto top;\n    break;\n  case 1: done:;\n  }\n  return n;\n}\n";
    let p = ok(src);
    let s = stats(&p, 3);
    assert_eq!((s.executions, s.bounded), (1, 0));
    // A backward goto from a later case into an earlier one: the switch's test for the later
    // case enters the loop in its middle and goes through a trampoline.
    let src = "int main() {\n  int r = 1, n = 0;\n  switch (r) {\n  case 0:\n  again:\n    n++;\n    break;\n  case 1:\n    if (n == 0) goto again;\n  }\n  return n;\n}\n";
    let p = ok(src);
    let m = main_fn(&p);
    assert_eq!(
        m.body
            .iter()
            .filter(|i| matches!(i, Instr::LoopEnter { .. }))
            .count(),
        2
    );
    let s = stats(&p, 2);
    assert_eq!((s.executions, s.bounded), (1, 0));
}

#[test]
fn a_label_on_a_statement_has_its_slot_after_the_label() {
    let src = "atomic_int x;\nint main() {\n  int r = 0;\n  goto L;\n  r = 5;\nL: atomic_store(&x, r);\n  return 0;\n}\n";
    let p = ok(src);
    let m = main_fn(&p);
    let target = m
        .body
        .iter()
        .find_map(|i| match i {
            Instr::Jump { target } => Some(*target),
            _ => None,
        })
        .unwrap();
    // The store's statement starts after `L: ` and its slot is the goto's target.
    let place = slot_at(&p, m, target).unwrap();
    assert_eq!(before_at(&p, &place), (6, 4));
    // A jump past a declaration without an initialiser is allowed.
    ok("int main() {\n  goto L;\n  int q;\nL:\n  q = 1;\n  return q;\n}\n");
    // A declaration under a label (C23) is lowered as a statement.
    ok("int main() {\n  int n = 0;\nL: int q = n;\n  n++;\n  if (n < 2) goto L;\n  return q;\n}\n");
    // `static` locals are initialised before the program starts.
    ok("int main() {\n  goto L;\n  static int s = 1;\nL:\n  return s;\n}\n");
}

/// Labels are per function body: each inlined copy has its own labels and loop, and the
/// copies share their statements and slots.
#[test]
fn labels_in_inlined_functions_and_threads() {
    let src = format!(
        "{HEAD}atomic_int x;\nint spin(int n) {{\n  int i = 0;\nagain:\n  i++;\n  if (i < n) goto again;\n  return i;\n}}\nvoid *t(void *a) {{\n  int s = spin(2) + spin(3);\n  atomic_store(&x, s);\nL: return NULL;\n}}\nint main() {{\n  pthread_t h;\n  pthread_create(&h, NULL, t, NULL);\n  pthread_join(h, NULL);\n  assert(x == 5);\n  return 0;\n}}\n"
    );
    let p = ok(&src);
    let t = func(&p, "t");
    let enters: Vec<usize> = t
        .body
        .iter()
        .filter_map(|i| match i {
            Instr::LoopEnter { id } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(enters.len(), 2);
    assert_ne!(enters[0], enters[1]);
    let s = stats(&p, 3);
    assert_eq!((s.executions, s.bounded, s.buggy), (1, 0, 0));
    // The same label names in two functions, and in a thread and main.
    ok(&format!("{HEAD}int f(void) {{ L: return 1; }}\nint g(void) {{ L: return 2; }}\nint main() {{ int r = f() + g(); L:; return r; }}\n"));
}

#[test]
fn cpp_labels_lambdas_and_lock_guards() {
    let head = "#include <atomic>\n#include <thread>\n#include <mutex>\n#include <cassert>\n";
    // A goto in a thread lambda: its labels are its own.
    let src = format!(
        "{head}std::atomic<int> x;\nint main() {{\n  std::thread t([] {{\n  again:\n    if (x.load() == 0) goto again;\n  }});\n  x.store(1);\n  t.join();\nagain:\n  return 0;\n}}\n"
    );
    let p = ok_cpp(&src);
    assert!(p.functions.iter().any(|f| f.name.starts_with("lambda@")
        && f.body.iter().any(|i| matches!(i, Instr::LoopIter { .. }))));
    // A goto out of a guard's block unlocks its mutex (a release CAS to 0) before jumping;
    // a goto inside the guard's scope does not.
    let unlocks = |f: &Function| {
        f.body
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::Cas {
                        desired: Expr::Const(0),
                        order: MemOrder::Release,
                        ..
                    }
                )
            })
            .count()
    };
    let src = format!(
        "{head}std::mutex m;\nint n;\nint main() {{\n  {{\n    std::lock_guard<std::mutex> g(m);\n    n++;\n    if (n < 2) goto out;\n    n++;\n  inside:\n    if (n < 3) goto inside;\n  }}\nout:\n  return n;\n}}\n"
    );
    let p = ok_cpp(&src);
    // One unlock on the goto out, one at the end of the block.
    assert_eq!(unlocks(main_fn(&p)), 2);
    let s = stats(&p, 3);
    assert_eq!((s.executions, s.bounded, s.buggy), (1, 0, 0));
    // A goto back to before the guard in its own block leaves its scope: unlock, then the
    // declaration locks again.
    let src = format!(
        "{head}std::mutex m;\nint n;\nint main() {{\n  {{\n  again:\n    std::lock_guard<std::mutex> g(m);\n    n++;\n    if (n < 3) goto again;\n  }}\n  m.lock();\n  return n;\n}}\n"
    );
    let p = ok_cpp(&src);
    assert_eq!(unlocks(main_fn(&p)), 2);
    let s = stats(&p, 3);
    assert_eq!((s.executions, s.bounded, s.buggy, s.blocked), (1, 0, 0, 0));
}

#[test]
fn refusals() {
    use DiagKind::*;
    type Case<'s> = (Lang, &'s str, (usize, usize, DiagKind, &'s str));
    let c = Lang::C;
    let cases: Vec<Case> = vec![
        (c, "int main() {\nL:;\nL:;\n}", (3, 1, Error, "duplicate label `L`")),
        (c, "int main() {\n  goto nowhere;\n}", (2, 8, Error, "label `nowhere` used but not defined")),
        (c, "int main() {\n  void *p = 0;\n  goto *p;\n}", (3, 3, Unsupported, "computed goto (`goto *p`)")),
        (
            c,
            "int main() {\nL:;\n  long p = (long)&&L;\n}",
            (3, 18, Unsupported, "address of a label (`&&label`, a GNU extension for computed goto)"),
        ),
        (
            c,
            "int main() {\n  int r = 0;\n  if (r) { r = 1; L: }\n}",
            (3, 19, Unsupported, "label at the end of a block (`L: }`, allowed from C23 on): write `L: ;`"),
        ),
        (
            c,
            "int main() {\n  int r = 0;\n  goto in;\n  while (r) {\n  in:\n    r--;\n  }\n}",
            (3, 3, Unsupported, "`goto in` jumps into the loop on line 4 from outside it (a loop can only be entered through its start)"),
        ),
        (
            c,
            "int main() {\n  int r = 0;\n  for (int i = 0; i < 2; i++) {\n  in:\n    r++;\n  }\n  if (r < 4) goto in;\n}",
            (7, 14, Unsupported, "`goto in` jumps into the loop on line 3 from outside it (a loop can only be entered through its start)"),
        ),
        (
            c,
            "int main() {\n  goto L;\n  int r = 1;\nL:\n  return r;\n}",
            (2, 3, Unsupported, "`goto L` jumps past the initialisation of `r` on line 3 into its scope (C leaves `r` indeterminate there, C++ forbids the jump): declare `r` before the goto"),
        ),
        (
            c,
            "int main() {\n  int n = 0;\n  {\n    int r = n;\n  in:\n    n++;\n  }\n  if (n < 3) goto in;\n}",
            (8, 14, Unsupported, "`goto in` jumps past the initialisation of `r` on line 4 into its scope (C leaves `r` indeterminate there, C++ forbids the jump): declare `r` before the goto"),
        ),
        (
            c,
            "int main() {\n  goto L;\n  int a[2];\nL:\n  a[0] = 1;\n  return a[0];\n}",
            (2, 3, Unsupported, "`goto L` jumps past the declaration of `a` on line 3 into its scope (a local object in memory is allocated when its declaration runs): declare `a` before the goto"),
        ),
        (
            c,
            "int main() {\n  goto L;\n  int x;\nL:;\n  int *p = &x;\n  return *p;\n}",
            (2, 3, Unsupported, "`goto L` jumps past the declaration of `x` on line 3 into its scope (a local object in memory is allocated when its declaration runs): declare `x` before the goto"),
        ),
        (
            c,
            "int main() {\n  int r = 0;\n  if (r) L: r = 1;\n}",
            (3, 10, Unsupported, "label on the unbraced body of an `if`, `else` or loop (put the body in braces)"),
        ),
        (
            Lang::Cpp,
            "#include <mutex>\nstd::mutex m;\nint main() {\n  goto in;\n  {\n    std::lock_guard<std::mutex> g(m);\n  in:\n    return 0;\n  }\n}",
            (4, 3, Unsupported, "`goto in` jumps past the initialisation of `g` on line 6 into its scope (C leaves `g` indeterminate there, C++ forbids the jump): declare `g` before the goto"),
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
}
