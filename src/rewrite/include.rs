//! The header a new fence needs: `<stdatomic.h>` in C, `<atomic>` in C++.
//!
//! When a fix inserts a fence and the file includes no such header (in C++ also
//! `<stdatomic.h>`, which declares it as well) (anywhere, also inside
//! `#if`), nor had it before being read (a header read after the unit included it), nor
//! includes at its top level a user header that brings it, one `#include` line is added as
//! its own edit: after the last top-level `#include` directive, or on the first line of a
//! file that has none; in a header that is one include guard, the same inside the guard
//! (after `#define GUARD` when it has no `#include`). The line ends in the file's line
//! ending; a last `#include` without a newline (end of file) gets one before the new line, and
//! the file then still ends without one.

use super::Edit;
use crate::ir::Lang;

/// The header that declares `atomic_thread_fence` in `lang`.
pub fn header(lang: Lang) -> &'static str {
    match lang {
        Lang::C => "stdatomic.h",
        Lang::Cpp => "atomic",
    }
}

/// The name an `#include` directive names, without `<>` or quotes.
fn included(src: &str, inc: tree_sitter::Node) -> Option<String> {
    let path = inc.child_by_field_name("path")?;
    let text = src[path.byte_range()].trim();
    Some(
        text.trim_start_matches(['<', '"'])
            .trim_end_matches(['>', '"'])
            .trim()
            .to_string(),
    )
}

/// The edit adding `#include <header>` to `src` (parsed as `root`), or `None` when the file
/// already includes it, or includes at its top level a header that brings it (`provides`
/// says which: a user header that includes it, directly or not). A header whose whole text is
/// an include guard gets the line inside the guard.
pub fn include_edit(
    src: &str,
    root: tree_sitter::Node,
    lang: Lang,
    nl: &str,
    provides: &dyn Fn(&str) -> bool,
) -> Option<Edit> {
    let want = header(lang);
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        // In C++, `<stdatomic.h>` declares the fence too (C++23's includes `<atomic>`;
        // CDSChecker's, which the thesis's `.cc` benchmarks include, declares the C names).
        let declares = |h: &str| h == want || (lang == Lang::Cpp && h == "stdatomic.h");
        if n.kind() == "preproc_include" && included(src, n).is_some_and(|h| declares(&h)) {
            return None;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    let guard = guard_define(src, root);
    let top = guard.and_then(|d| d.parent()).unwrap_or(root);
    let mut cursor = top.walk();
    let includes: Vec<_> = top
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "preproc_include")
        .collect();
    if includes
        .iter()
        .any(|&inc| included(src, inc).is_some_and(|name| provides(&name)))
    {
        return None;
    }
    let line = format!("#include <{want}>");
    let after = includes.last().copied().or(guard);
    Some(match after {
        None => Edit {
            start: 0,
            end: 0,
            text: format!("{line}{nl}"),
        },
        Some(dir) => {
            // The end of the directive's line (the node may or may not hold its newline).
            let from = dir
                .child_by_field_name("path")
                .or_else(|| dir.child_by_field_name("name"))
                .map_or(dir.start_byte(), |p| p.end_byte());
            match src[from..].find('\n') {
                Some(i) => {
                    let at = from + i + 1;
                    Edit {
                        start: at,
                        end: at,
                        text: format!("{line}{nl}"),
                    }
                }
                None => Edit {
                    start: src.len(),
                    end: src.len(),
                    text: format!("{nl}{line}"),
                },
            }
        }
    })
}

/// The `#define G` of a file that is one include guard, `#ifndef G` / `#define G` ... `#endif`
/// (comments around it allowed).
fn guard_define<'t>(src: &str, root: tree_sitter::Node<'t>) -> Option<tree_sitter::Node<'t>> {
    let mut cursor = root.walk();
    let items: Vec<_> = root
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let [group] = items[..] else { return None };
    if group.kind() != "preproc_ifdef" || !src[group.byte_range()].starts_with("#ifndef") {
        return None;
    }
    let name = group.child_by_field_name("name")?;
    let mut c = group.walk();
    let first = group
        .named_children(&mut c)
        .find(|n| n.id() != name.id() && n.kind() != "comment")?;
    let defined = first.child_by_field_name("name")?;
    (first.kind() == "preproc_def" && src[defined.byte_range()] == src[name.byte_range()])
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(src: &str, lang: Lang) -> Option<String> {
        let tree = super::super::parse_tree(src, lang).unwrap();
        let nl = if src.contains("\r\n") { "\r\n" } else { "\n" };
        include_edit(src, tree.root_node(), lang, nl, &|name| name == "ring.h")
            .map(|e| super::super::apply(src, &[e]).unwrap())
    }

    #[test]
    fn adds_the_header_after_the_last_include() {
        assert_eq!(
            edit(
                "#include <stdio.h>\n#include <pthread.h>\nint x;\n",
                Lang::C
            )
            .unwrap(),
            "#include <stdio.h>\n#include <pthread.h>\n#include <stdatomic.h>\nint x;\n"
        );
        assert_eq!(
            edit("#include <thread>\r\nint x;\r\n", Lang::Cpp).unwrap(),
            "#include <thread>\r\n#include <atomic>\r\nint x;\r\n"
        );
        assert_eq!(
            edit("int x;\n", Lang::C).unwrap(),
            "#include <stdatomic.h>\nint x;\n"
        );
        assert_eq!(
            edit("#include <thread>", Lang::Cpp).unwrap(),
            "#include <thread>\n#include <atomic>"
        );
    }

    #[test]
    fn a_guarded_header_gets_it_inside_its_guard() {
        assert_eq!(
            edit(
                "/* q */\n#ifndef Q_H\n#define Q_H\nint x;\n#endif\n",
                Lang::C
            )
            .unwrap(),
            "/* q */\n#ifndef Q_H\n#define Q_H\n#include <stdatomic.h>\nint x;\n#endif\n"
        );
        assert_eq!(
            edit("#ifndef Q_H\n#define Q_H\n#include <stdio.h>\nint x;\n#endif\n", Lang::C)
                .unwrap(),
            "#ifndef Q_H\n#define Q_H\n#include <stdio.h>\n#include <stdatomic.h>\nint x;\n#endif\n"
        );
        // Not a guard: the `#define` names another macro.
        assert_eq!(
            edit("#ifndef Q_H\n#define N 1\n#endif\nint x;\n", Lang::C).unwrap(),
            "#include <stdatomic.h>\n#ifndef Q_H\n#define N 1\n#endif\nint x;\n"
        );
    }

    #[test]
    fn an_included_header_is_left_alone() {
        assert_eq!(edit("#include <stdatomic.h>\nint x;\n", Lang::C), None);
        assert_eq!(edit("#include \"stdatomic.h\"\nint x;\n", Lang::C), None);
        assert_eq!(
            edit("#ifdef X\n#include <atomic>\n#endif\nint x;\n", Lang::Cpp),
            None
        );
        // A header that brings it (here: `ring.h`), included at the top level.
        assert_eq!(edit("#include \"ring.h\"\nint x;\n", Lang::C), None);
        assert!(edit("#ifdef R\n#include \"ring.h\"\n#endif\nint x;\n", Lang::C).is_some());
        // C wants <stdatomic.h>; C++ takes <atomic> or <stdatomic.h> (which declares the
        // fence too), and gets <atomic> when it has neither.
        assert!(edit("#include <atomic>\nint x;\n", Lang::C).is_some());
        assert_eq!(edit("#include <stdatomic.h>\nint x;\n", Lang::Cpp), None);
        assert!(edit("#include <threads.h>\nint x;\n", Lang::Cpp).is_some());
    }
}
