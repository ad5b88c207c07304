//! The header a new fence needs: `<stdatomic.h>` in C, `<atomic>` in C++.
//!
//! When a fix inserts a fence and the file includes no such header (anywhere, also inside
//! `#if`), one `#include` line is added as its own edit: after the last top-level `#include`
//! directive, or on the first line of a file that has none. The line ends in the file's line
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
/// already includes it.
pub fn include_edit(src: &str, root: tree_sitter::Node, lang: Lang, nl: &str) -> Option<Edit> {
    let want = header(lang);
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "preproc_include" && included(src, n).as_deref() == Some(want) {
            return None;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    let line = format!("#include <{want}>");
    let mut cursor = root.walk();
    let last = root
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "preproc_include")
        .last();
    Some(match last {
        None => Edit {
            start: 0,
            end: 0,
            text: format!("{line}{nl}"),
        },
        Some(inc) => {
            // The end of the directive's line (the node may or may not hold its newline).
            let from = inc
                .child_by_field_name("path")
                .map_or(inc.start_byte(), |p| p.end_byte());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(src: &str, lang: Lang) -> Option<String> {
        let tree = super::super::parse_tree(src, lang).unwrap();
        let nl = if src.contains("\r\n") { "\r\n" } else { "\n" };
        include_edit(src, tree.root_node(), lang, nl)
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
    fn an_included_header_is_left_alone() {
        assert_eq!(edit("#include <stdatomic.h>\nint x;\n", Lang::C), None);
        assert_eq!(edit("#include \"stdatomic.h\"\nint x;\n", Lang::C), None);
        assert_eq!(
            edit("#ifdef X\n#include <atomic>\n#endif\nint x;\n", Lang::Cpp),
            None
        );
        // C++ wants <atomic>, C wants <stdatomic.h>.
        assert!(edit("#include <stdatomic.h>\nint x;\n", Lang::Cpp).is_some());
    }
}
