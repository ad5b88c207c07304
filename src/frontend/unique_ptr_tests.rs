//! `std::unique_ptr` and `std::make_unique` (`lower/unique_ptr.rs`): the IR of the supported
//! forms, each refusal with its position and a message naming the construct.

use super::*;
use crate::ir::*;

fn ok_cpp(src: &str) -> Program {
    let p = parse_cpp("t.cpp", src).unwrap_or_else(|e| panic!("unexpected diagnostic: {e}\n{src}"));
    p.validate().unwrap();
    p
}

fn diag(src: &str) -> (usize, usize, DiagKind, String) {
    match parse_cpp("t.cpp", src) {
        Ok(_) => panic!("expected a diagnostic for\n{src}"),
        Err(e) => (e.line, e.column, e.kind, e.message),
    }
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

const HEAD: &str = "#include <memory>\nstruct Node { int v; Node *next; };\n";

#[test]
fn scope_end_deletes_once_per_exit() {
    // The block end deletes `p`; `return` inside deletes it on that path too.
    let p = ok_cpp(&format!(
        "{HEAD}int main() {{ int k = 1;\n{{ auto p = std::make_unique<Node>(); if (k) return 1; }}\nreturn 0; }}"
    ));
    assert_eq!(frees(&p), vec![Dealloc::Delete, Dealloc::Delete]);
    let p = ok_cpp(&format!(
        "{HEAD}int main() {{ std::unique_ptr<int[]> a = std::make_unique<int[]>(4); a[1] = 2; return 0; }}"
    ));
    assert_eq!(frees(&p), vec![Dealloc::DeleteArray]);
    let names: Vec<&str> = p.layouts.iter().map(|l| l.name.as_str()).collect();
    assert!(names.contains(&"make_unique@3"), "{names:?}");
}

#[test]
fn refusals_name_the_construct() {
    let cases: &[(&str, usize, usize, &str)] = &[
        ("int main() { std::shared_ptr<Node> p; return 0; }", 3, 14, "`std::shared_ptr` is not supported"),
        ("int main() { auto p = std::make_shared<Node>(); return 0; }", 3, 23, "`std::make_shared`"),
        ("std::unique_ptr<Node> g;\nint main() { return 0; }", 3, 1, "only as a local variable"),
        ("struct S { std::unique_ptr<Node> p; };\nint main() { return 0; }", 3, 12, "only as a local variable"),
        ("int main() { auto p = std::make_unique<Node>(); p.swap(p); return 0; }", 3, 49, "`swap` on a std::unique_ptr"),
        ("int main() { auto p = std::make_unique<Node>(); auto q = &p; return 0; }", 3, 19, "address of std::unique_ptr"),
        ("int main() { std::unique_ptr<Node> p; auto q = p; return 0; }", 3, 48, "cannot be copied"),
        ("int main() { std::make_unique<Node>(); return 0; }", 3, 14, "`std::make_unique` whose result"),
        ("void d(Node *n) {}\nint main() { std::unique_ptr<Node, void (*)(Node *)> p(nullptr, d); return 0; }", 4, 36, "custom deleter"),
        ("int main() { std::unique_ptr<Node> p; p = new Node; return 0; }", 3, 39, "assignment to a std::unique_ptr"),
        ("std::unique_ptr<Node> mk() { return nullptr; }\nint main() { auto p = mk(); return 0; }", 4, 23, "returned from a function"),
    ];
    for &(body, line, col, msg) in cases {
        let (l, c, kind, m) = diag(&format!("{HEAD}{body}"));
        assert_ne!(kind, DiagKind::Syntax, "{body}");
        assert!(m.contains(msg), "{body}: {m}");
        assert_eq!((l, c), (line, col), "{body}: {m}");
    }
}
