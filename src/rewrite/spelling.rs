//! How a file spells fences and memory orders, so that inserted fences look like its own code.
//!
//! **Builtins or the library.** A file whose atomics are GCC/Clang builtins gets
//! `__atomic_thread_fence(__ATOMIC_X);` (and no `#include` for it: builtins need none), in C
//! and C++ alike. The rule, from the parsed tree: the file's own fence calls decide — builtin
//! fences (`__atomic_thread_fence`, `__sync_synchronize`) against library ones
//! (`atomic_thread_fence`, `std::atomic_thread_fence`), the more frequent winning, ties going to
//! the spelling that occurs first; a file without fence calls follows its atomic operations the
//! same way — `__atomic_*` / `__sync_*` calls against `atomic_*` / `std::atomic_*` calls and
//! C++'s member calls on atomics (`x.load(...)`, `x.fetch_add(...)`, ...); a file with neither
//! uses the library.
//!
//! The library spelling in C is always `atomic_thread_fence(memory_order_X);`. For C++ the rule
//! is:
//!
//! * **memory orders** follow the spelling the file uses most often among its own memory-order
//!   names — `std::memory_order_X`, `memory_order_X`, `std::memory_order::X` or
//!   `memory_order::X` — ties going to the spelling that occurs first. A file that names no
//!   order uses `memory_order_X` when it has a top-level `using namespace std;` and
//!   `std::memory_order_X` otherwise;
//! * **the fence function** follows the file's own `atomic_thread_fence` calls the same way
//!   (`std::atomic_thread_fence` or unqualified); without any, it is unqualified when the file
//!   has a top-level `using namespace std;` or names its orders unqualified (`memory_order_X`
//!   without `std::` means such a `using` or the C names of `<stdatomic.h>`, as in the
//!   thesis's `.cc` benchmarks: either way the unqualified fence is declared).
//!
//! **The instrumented dialect.** A file whose atomic calls take the thesis's leading location
//! arguments (`atomic_store_explicit(__FILE__, __LINE__, &x, 1, mo)`, see
//! `frontend/lower/dialect.rs`) gets its fences spelled the same way:
//! `atomic_thread_fence(__FILE__, __LINE__, memory_order_release);`. The file's own library
//! fence calls decide — with the pair against without, the more frequent winning, ties going
//! to the first —, else its library atomic operations (functions and `std::atomic` members)
//! the same way. The pair is `__FILE__, __LINE__` as written, or a string literal and an
//! integer literal. Builtin fences never take it.
//!
//! A strengthened fence keeps the spelling of the order it replaces (see `order_like` in the
//! rewriter): `__ATOMIC_X` stays `__ATOMIC_Y`, a number in a builtin fence stays a number.

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
    /// GCC's builtins: `__atomic_thread_fence(__ATOMIC_X)` (the other fields are then unused).
    pub builtin: bool,
    /// The instrumented dialect: `atomic_thread_fence(__FILE__, __LINE__, memory_order_X)`.
    pub located: bool,
}

/// The C orders a program can name (`consume` counts as a spelling although fensyn never
/// writes it).
const ORDER_NAMES: [&str; 6] = [
    "relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst",
];

/// The member functions of C++'s `std::atomic` / `std::atomic_flag` (library atomics).
const MEMBER_OPS: [&str; 12] = [
    "load",
    "store",
    "exchange",
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "compare_exchange_strong",
    "compare_exchange_weak",
    "test_and_set",
    "clear",
];

/// GCC's name of `order`: `__ATOMIC_SEQ_CST`.
pub fn builtin_order(order: MemOrder) -> String {
    format!("__ATOMIC_{}", order.c_name().to_ascii_uppercase())
}

/// The value of GCC's `__ATOMIC_X` for `order` (0 relaxed .. 5 seq_cst).
pub fn builtin_value(order: MemOrder) -> i64 {
    match order {
        MemOrder::NonAtomic | MemOrder::Relaxed => 0,
        MemOrder::Acquire => 2,
        MemOrder::Release => 3,
        MemOrder::AcqRel => 4,
        MemOrder::SeqCst => 5,
    }
}

/// What one traversal of a file counts: `(key, count, first occurrence)` per spelling.
#[derive(Default)]
struct Census {
    using_std: bool,
    /// Memory-order names by `(std::, scoped)`.
    orders: Vec<((bool, bool), usize, usize)>,
    /// Library fence calls by `std::`.
    fences: Vec<(bool, usize, usize)>,
    /// Fence calls by builtin (true) or library (false).
    fence_kinds: Vec<(bool, usize, usize)>,
    /// Atomic operations by builtin (true) or library (false).
    ops: Vec<(bool, usize, usize)>,
    /// Library fence calls by whether they take the location pair.
    located_fences: Vec<(bool, usize, usize)>,
    /// Library atomic operations by whether they take the location pair.
    located_ops: Vec<(bool, usize, usize)>,
}

impl Census {
    fn take(src: &str, root: tree_sitter::Node) -> Census {
        let mut c = Census::default();
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
                    c.using_std = true;
                }
                "qualified_identifier" | "identifier"
                    if n.parent()
                        .is_none_or(|p| p.kind() != "qualified_identifier") =>
                {
                    if let Some(style) = order_style(&text()) {
                        bump(&mut c.orders, style, seen);
                    }
                }
                "call_expression" => c.call(src, n, seen),
                _ => {}
            }
            let mut cursor = n.walk();
            let children: Vec<_> = n.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        c
    }

    /// Counts the call `n` (the `seen`-th node) if it is a fence or an atomic operation.
    fn call(&mut self, src: &str, n: tree_sitter::Node, seen: usize) {
        let Some(f) = n.child_by_field_name("function") else {
            return;
        };
        let located = has_location_pair(src, n);
        if f.kind() == "field_expression" {
            let member = f.child_by_field_name("field").map(|m| &src[m.byte_range()]);
            if member.is_some_and(|m| MEMBER_OPS.contains(&m)) {
                bump(&mut self.ops, false, seen);
                bump(&mut self.located_ops, located, seen);
            }
            return;
        }
        let name = compact(&src[f.byte_range()]);
        match name.as_str() {
            "std::atomic_thread_fence" | "atomic_thread_fence" => {
                bump(&mut self.fences, name.starts_with("std::"), seen);
                bump(&mut self.fence_kinds, false, seen);
                bump(&mut self.located_fences, located, seen);
            }
            "__atomic_thread_fence" | "__sync_synchronize" => {
                bump(&mut self.fence_kinds, true, seen);
            }
            _ => {}
        }
        let unqualified = name.strip_prefix("std::").unwrap_or(&name);
        if name.starts_with("__atomic_") || name.starts_with("__sync_") {
            bump(&mut self.ops, true, seen);
        } else if unqualified.starts_with("atomic_") {
            bump(&mut self.ops, false, seen);
            bump(&mut self.located_ops, located, seen);
        }
    }

    /// The dialect wins by the library fences, else by the library operations.
    fn located(&self) -> bool {
        most_used(&self.located_fences)
            .or_else(|| most_used(&self.located_ops))
            .unwrap_or(false)
    }

    /// Builtins win by the fences, else by the operations (see the module doc).
    fn builtin(&self) -> bool {
        most_used(&self.fence_kinds)
            .or_else(|| most_used(&self.ops))
            .unwrap_or(false)
    }
}

impl Spelling {
    /// C's spelling (and C++'s without `std::`).
    pub const C: Spelling = Spelling {
        fence_fn: "atomic_thread_fence",
        order_std: false,
        order_scoped: false,
        builtin: false,
        located: false,
    };

    /// C++'s spelling for a file that says nothing: fully qualified.
    pub const CPP_QUALIFIED: Spelling = Spelling {
        fence_fn: "std::atomic_thread_fence",
        order_std: true,
        order_scoped: false,
        builtin: false,
        located: false,
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
        let c = Census::take(src, root);
        let builtin = c.builtin();
        Spelling::of(&c, builtin, !builtin && c.located(), lang)
    }

    /// The spelling of file `k` of a translation unit (`files`: each file's text and tree, the
    /// main file first): its own ([`Spelling::detect`]), except that a file with no fence,
    /// atomic operation or memory order of its own (a harness calling a header's functions)
    /// uses builtins exactly when the unit's files together do. The qualification of C++
    /// names still follows the file alone (a `using namespace std;` elsewhere may not reach it).
    pub fn detect_unit(
        files: &[(&str, Option<tree_sitter::Node>)],
        k: usize,
        lang: Lang,
    ) -> Spelling {
        let census = |(src, root): &(&str, Option<tree_sitter::Node>)| {
            root.map_or_else(Census::default, |r| Census::take(src, r))
        };
        let Some(own) = files.get(k).map(census) else {
            return Spelling::default_for(lang);
        };
        if files[k].1.is_none() {
            return Spelling::default_for(lang);
        }
        let silent = own.fence_kinds.is_empty() && own.ops.is_empty() && own.orders.is_empty();
        // A silent file follows the unit in the dialect too.
        let located = if silent {
            files.iter().any(|f| census(f).located())
        } else {
            own.located()
        };
        let builtin = if silent {
            // The unit's counts, occurrences ordered by file, then position.
            let (mut kinds, mut ops) = (Vec::new(), Vec::new());
            for (i, f) in files.iter().enumerate() {
                let c = census(f);
                let at = |n: usize| i * (1 << 40) + n;
                kinds.extend(
                    c.fence_kinds
                        .iter()
                        .map(|&(key, n, first)| (key, n, at(first))),
                );
                ops.extend(c.ops.iter().map(|&(key, n, first)| (key, n, at(first))));
            }
            let merged = |v: Vec<(bool, usize, usize)>| {
                let mut out: Vec<(bool, usize, usize)> = Vec::new();
                for (key, n, first) in v {
                    match out.iter_mut().find(|e| e.0 == key) {
                        Some(e) => e.1 += n,
                        None => out.push((key, n, first)),
                    }
                }
                out
            };
            most_used(&merged(kinds))
                .or_else(|| most_used(&merged(ops)))
                .unwrap_or(false)
        } else {
            own.builtin()
        };
        Spelling::of(&own, builtin, !builtin && located, lang)
    }

    /// The spelling a file's census gives, builtins or not as `builtin` says, with the
    /// dialect's `__FILE__, __LINE__` pair as `located` says.
    fn of(c: &Census, builtin: bool, located: bool, lang: Lang) -> Spelling {
        if lang == Lang::C {
            return Spelling {
                builtin,
                located,
                ..Spelling::C
            };
        }
        let (order_std, order_scoped) = most_used(&c.orders).unwrap_or((!c.using_std, false));
        // A file without fences names the fence as it names the orders: `memory_order_*`
        // unqualified means `using namespace std;` or `<stdatomic.h>`'s C names.
        let fence_std = most_used(&c.fences).unwrap_or(order_std && !c.using_std);
        Spelling {
            fence_fn: if fence_std {
                "std::atomic_thread_fence"
            } else {
                "atomic_thread_fence"
            },
            order_std,
            order_scoped,
            builtin,
            located,
        }
    }

    /// `order` in this spelling.
    pub fn order(&self, order: MemOrder) -> String {
        if self.builtin {
            return builtin_order(order);
        }
        let std = if self.order_std { "std::" } else { "" };
        let sep = if self.order_scoped { "::" } else { "_" };
        format!("{std}memory_order{sep}{}", order.c_name())
    }

    /// A fence statement of `order` in this spelling.
    pub fn fence(&self, order: MemOrder) -> String {
        let f = if self.builtin {
            "__atomic_thread_fence"
        } else {
            self.fence_fn
        };
        let at = if self.located && !self.builtin {
            "__FILE__, __LINE__, "
        } else {
            ""
        };
        format!("{f}({at}{});", self.order(order))
    }
}

/// Whether the call `n` starts with the dialect's location pair: `__FILE__, __LINE__` as
/// written, or a string literal and an integer literal.
fn has_location_pair(src: &str, n: tree_sitter::Node) -> bool {
    let Some(args) = n.child_by_field_name("arguments") else {
        return false;
    };
    let mut cursor = args.walk();
    let mut named = args.named_children(&mut cursor);
    let (Some(file), Some(line)) = (named.next(), named.next()) else {
        return false;
    };
    let text = |m: tree_sitter::Node| &src[m.byte_range()];
    let file_ok = text(file) == "__FILE__"
        || matches!(
            file.kind(),
            "string_literal" | "concatenated_string" | "raw_string_literal"
        );
    let line_ok = text(line) == "__LINE__"
        || (line.kind() == "number_literal" && text(line).bytes().all(|b| b.is_ascii_digit()));
    file_ok && line_ok
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
        detect_in(src, Lang::Cpp)
    }

    fn detect_in(src: &str, lang: Lang) -> Spelling {
        let tree = super::super::parse_tree(src, lang).unwrap();
        Spelling::detect(src, tree.root_node(), lang)
    }

    #[test]
    fn builtin_spelling_follows_the_fences_then_the_operations() {
        let fence = |src: &str, lang| detect_in(src, lang).fence(MemOrder::Release);
        let builtin = "__atomic_thread_fence(__ATOMIC_RELEASE);";
        let c11 = "atomic_thread_fence(memory_order_release);";
        // Operations decide when there is no fence.
        let ops = "int x;\nvoid f(void) { __atomic_store_n(&x, 1, __ATOMIC_RELAXED); \
                   int r = __sync_fetch_and_add(&x, 1); }\n";
        assert_eq!(fence(ops, Lang::C), builtin);
        assert_eq!(fence(ops, Lang::Cpp), builtin);
        let mixed = "atomic_int y; int x;\nvoid f(void) { __atomic_store_n(&x, 1, 0); \
                     atomic_store(&y, 1); atomic_load(&y); }\n";
        assert_eq!(fence(mixed, Lang::C), c11);
        // A tie goes to the first; fences outweigh operations.
        let tie = "int x;\nvoid f(void) { __atomic_load_n(&x, 0); atomic_load(&x); }\n";
        assert_eq!(fence(tie, Lang::C), builtin);
        let fenced = "int x;\nvoid f(void) { __atomic_store_n(&x, 1, 0); __atomic_load_n(&x, 0); \
                      atomic_thread_fence(memory_order_acquire); }\n";
        assert_eq!(fence(fenced, Lang::C), c11);
        let sync = "atomic_int x;\nvoid f(void) { atomic_store(&x, 1); atomic_load(&x); \
                    __sync_synchronize(); }\n";
        assert_eq!(fence(sync, Lang::C), builtin);
        // C++ member calls are library operations.
        let members = "#include <atomic>\nstd::atomic<int> x; int y;\nvoid f() { x.store(1); \
                       x.load(std::memory_order_acquire); __atomic_load_n(&y, 0); }\n";
        assert_eq!(
            fence(members, Lang::Cpp),
            "std::atomic_thread_fence(std::memory_order_release);"
        );
        // Nothing atomic: the library.
        assert_eq!(fence("int x;\n", Lang::C), c11);
        assert_eq!(builtin_order(MemOrder::AcqRel), "__ATOMIC_ACQ_REL");
        assert_eq!(builtin_value(MemOrder::SeqCst), 5);
    }

    #[test]
    fn the_instrumented_dialect_spells_its_fences_with_the_location_pair() {
        let fence = |src: &str, lang| detect_in(src, lang).fence(MemOrder::Release);
        let ops = "atomic_int x;\nvoid f(void) { atomic_store_explicit(__FILE__, __LINE__, &x, 1, \
                   memory_order_relaxed); atomic_load_explicit(__FILE__, __LINE__, &x, \
                   memory_order_relaxed); }\n";
        assert_eq!(
            fence(ops, Lang::C),
            "atomic_thread_fence(__FILE__, __LINE__, memory_order_release);"
        );
        // Fences decide over operations; a tie goes to the first.
        let fenced = "atomic_int x;\nvoid f(void) { atomic_store_explicit(__FILE__, __LINE__, &x, \
                      1, memory_order_relaxed); atomic_thread_fence(memory_order_acquire); }\n";
        assert_eq!(
            fence(fenced, Lang::C),
            "atomic_thread_fence(memory_order_release);"
        );
        let tie = "atomic_int x;\nvoid f(void) { atomic_load_explicit(\"t.c\", 3, &x, \
                   memory_order_relaxed); atomic_load_explicit(&x, memory_order_relaxed); }\n";
        assert_eq!(
            fence(tie, Lang::C),
            "atomic_thread_fence(__FILE__, __LINE__, memory_order_release);"
        );
        // C++ members and std:: fences.
        let members = "#include <atomic>\nstd::atomic<int> x;\nvoid f() { x.store(__FILE__, \
                       __LINE__, 1, std::memory_order_relaxed); \
                       std::atomic_thread_fence(__FILE__, __LINE__, std::memory_order_seq_cst); }\n";
        assert_eq!(
            fence(members, Lang::Cpp),
            "std::atomic_thread_fence(__FILE__, __LINE__, std::memory_order_release);"
        );
        // Builtins never take the pair.
        let builtin = "int x;\nvoid f(void) { __atomic_store_n(&x, 1, 0); __atomic_load_n(&x, 0); \
                       atomic_load_explicit(__FILE__, __LINE__, &x, memory_order_relaxed); }\n";
        assert_eq!(
            fence(builtin, Lang::C),
            "__atomic_thread_fence(__ATOMIC_RELEASE);"
        );
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
        // A `.cc` file written with <stdatomic.h>'s C names (the thesis's benchmarks).
        let c_names = "#include <stdatomic.h>\natomic_int x;\nvoid f() { atomic_store_explicit(&x, 1, memory_order_relaxed); }\n";
        assert_eq!(
            detect(c_names).fence(MemOrder::Release),
            "atomic_thread_fence(memory_order_release);"
        );
        // A tie goes to the spelling seen first; existing fence calls decide the function.
        let tie = "std::atomic<int> x;\nvoid f() { x.store(1, memory_order::relaxed); atomic_thread_fence(std::memory_order_acquire); }\n";
        assert_eq!(
            detect(tie).fence(MemOrder::Release),
            "atomic_thread_fence(memory_order::release);"
        );
    }
}
