//! How a file spells fences and memory orders, so that inserted fences look like its own code.
//!
//! C is always `atomic_thread_fence(memory_order_X);`. For C++ the rule, from the parsed tree:
//!
//! * **memory orders** follow the spelling the file uses most often among its own memory-order
//!   names — `std::memory_order_X`, `memory_order_X`, `std::memory_order::X` or
//!   `memory_order::X` — ties going to the spelling that occurs first. A file that names no
//!   order uses `memory_order_X` when it has a top-level `using namespace std;` and
//!   `std::memory_order_X` otherwise;
//! * **the fence function** follows the file's own `atomic_thread_fence` calls the same way
//!   (`std::atomic_thread_fence` or unqualified); without any, it is unqualified exactly when the
//!   file has a top-level `using namespace std;`.

use crate::ir::{Lang, MemOrder};

/// The spelling of fence statements in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spelling {
    /// `atomic_thread_fence` or `std::atomic_thread_fence`.
    pub fence_fn: &'static str,
    /// `std::` or nothing, before `memory_order`.
    pub order_std: bool,
    /// `memory_order::X` (C++20 scoped enumerators) instead of `memory_order_X`.
    pub order_scoped: bool,
}

/// The C orders a program can name (`consume` counts as a spelling although fensyn never
/// writes it).
const ORDER_NAMES: [&str; 6] = [
    "relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst",
];

impl Spelling {
    /// C's spelling (and C++'s without `std::`).
    pub const C: Spelling = Spelling {
        fence_fn: "atomic_thread_fence",
        order_std: false,
        order_scoped: false,
    };

    /// C++'s spelling for a file that says nothing: fully qualified.
    pub const CPP_QUALIFIED: Spelling = Spelling {
        fence_fn: "std::atomic_thread_fence",
        order_std: true,
        order_scoped: false,
    };

    /// The default spelling of `lang` (for a file whose tree is not available).
    pub fn default_for(lang: Lang) -> Spelling {
        match lang {
            Lang::C => Spelling::C,
            Lang::Cpp => Spelling::CPP_QUALIFIED,
        }
    }

    /// The spelling `src` (parsed as `root`) uses; see the module documentation for the rule.
    pub fn detect(src: &str, root: tree_sitter::Node, lang: Lang) -> Spelling {
        if lang == Lang::C {
            return Spelling::C;
        }
        let mut using_std = false;
        // (std, scoped) -> (count, first occurrence)
        let mut orders: Vec<((bool, bool), usize, usize)> = Vec::new();
        // std:: -> (count, first occurrence)
        let mut fences: Vec<(bool, usize, usize)> = Vec::new();
        let mut seen = 0usize;
        let mut stack = vec![root];
        // Pre-order, children in source order: occurrences are counted in source order.
        while let Some(n) = stack.pop() {
            seen += 1;
            let text = || compact(&src[n.byte_range()]);
            match n.kind() {
                "using_declaration"
                    if text() == "usingnamespacestd;"
                        && n.parent().is_some_and(|p| p.kind() == "translation_unit") =>
                {
                    using_std = true;
                }
                "qualified_identifier" | "identifier"
                    if n.parent()
                        .is_none_or(|p| p.kind() != "qualified_identifier") =>
                {
                    if let Some(style) = order_style(&text()) {
                        bump(&mut orders, style, seen);
                    }
                }
                "call_expression" => {
                    if let Some(f) = n.child_by_field_name("function") {
                        match compact(&src[f.byte_range()]).as_str() {
                            "std::atomic_thread_fence" => bump(&mut fences, true, seen),
                            "atomic_thread_fence" => bump(&mut fences, false, seen),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            let mut cursor = n.walk();
            let children: Vec<_> = n.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        let (order_std, order_scoped) = most_used(&orders).unwrap_or((!using_std, false));
        let fence_std = most_used(&fences).unwrap_or(!using_std);
        Spelling {
            fence_fn: if fence_std {
                "std::atomic_thread_fence"
            } else {
                "atomic_thread_fence"
            },
            order_std,
            order_scoped,
        }
    }

    /// `order` in this spelling.
    pub fn order(&self, order: MemOrder) -> String {
        let std = if self.order_std { "std::" } else { "" };
        let sep = if self.order_scoped { "::" } else { "_" };
        format!("{std}memory_order{sep}{}", order.c_name())
    }

    /// A fence statement of `order` in this spelling.
    pub fn fence(&self, order: MemOrder) -> String {
        format!("{}({});", self.fence_fn, self.order(order))
    }
}

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `(std::, scoped)` of a memory-order name, or `None` if `name` is not one.
fn order_style(name: &str) -> Option<(bool, bool)> {
    let (std, rest) = match name.strip_prefix("std::") {
        Some(r) => (true, r),
        None => (false, name),
    };
    let (scoped, order) = if let Some(o) = rest.strip_prefix("memory_order::") {
        (true, o)
    } else {
        (false, rest.strip_prefix("memory_order_")?)
    };
    ORDER_NAMES.contains(&order).then_some((std, scoped))
}

fn bump<K: PartialEq>(counts: &mut Vec<(K, usize, usize)>, key: K, at: usize) {
    match counts.iter_mut().find(|(k, _, _)| *k == key) {
        Some(entry) => entry.1 += 1,
        None => counts.push((key, 1, at)),
    }
}

/// The key counted most often; ties go to the one seen first.
fn most_used<K: Copy>(counts: &[(K, usize, usize)]) -> Option<K> {
    counts
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
        .map(|(k, _, _)| *k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(src: &str) -> Spelling {
        let tree = super::super::parse_tree(src, Lang::Cpp).unwrap();
        Spelling::detect(src, tree.root_node(), Lang::Cpp)
    }

    #[test]
    fn order_names_are_recognised() {
        assert_eq!(
            order_style("std::memory_order_acquire"),
            Some((true, false))
        );
        assert_eq!(order_style("memory_order::seq_cst"), Some((false, true)));
        assert_eq!(
            order_style("std::memory_order::relaxed"),
            Some((true, true))
        );
        assert_eq!(order_style("memory_order_relaxed"), Some((false, false)));
        assert_eq!(order_style("memory_order"), None);
        assert_eq!(order_style("std::memory_order_bogus"), None);
    }

    #[test]
    fn cpp_spelling_follows_the_file() {
        let plain = "#include <atomic>\nstd::atomic<int> x;\nint main() { return 0; }\n";
        assert_eq!(detect(plain), Spelling::CPP_QUALIFIED);
        let using =
            "#include <atomic>\nusing namespace std;\natomic<int> x;\nint main() { return 0; }\n";
        let s = detect(using);
        assert_eq!(
            s.fence(MemOrder::Release),
            "atomic_thread_fence(memory_order_release);"
        );
        let scoped = "using namespace std;\nstd::atomic<int> x;\nvoid f() { x.store(1, std::memory_order::relaxed); x.load(memory_order_relaxed); x.load(std::memory_order::acquire); }\n";
        let s = detect(scoped);
        assert_eq!(
            s.fence(MemOrder::SeqCst),
            "atomic_thread_fence(std::memory_order::seq_cst);"
        );
        // A tie goes to the spelling seen first; existing fence calls decide the function.
        let tie = "std::atomic<int> x;\nvoid f() { x.store(1, memory_order::relaxed); atomic_thread_fence(std::memory_order_acquire); }\n";
        assert_eq!(
            detect(tie).fence(MemOrder::Release),
            "atomic_thread_fence(memory_order::release);"
        );
    }
}
