//! Braces around an unbraced `if`/`else`/loop body that gets a fence.
//!
//! A fence next to the unbraced body of an `if`, `else`, `while`, `for` or `do` must go inside
//! new braces together with that statement, or it would change what the branch or loop holds.
//! The new block is written the way the file writes blocks: its `{` on the line of the `if`
//! (K&R) or on a line of its own (Allman), whichever the file's braced control statements use
//! more ([`allman`]; K&R when there are none or as many of each); the fences and the statement
//! each on their own line, indented one level deeper than the line of the `if`/`else`/loop (with
//! the file's unit: a tab or its width of spaces, [`super::indent_unit`]), or as deep as the
//! statement already is when it sits on its own line; the `}` on a line of its own at the
//! indentation of the `if`/`else`/loop's line. A comment that follows the statement on its line stays on it.
//! Code that followed the statement on its line (` else …`, a `do` loop's ` while (c);`)
//! follows the `}`.

use super::{check_range, indent_before, indent_unit, line_start, newline, Edit, RewriteError};
use std::collections::BTreeMap;

/// An unbraced body: what the rewriter needs to know of the text around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Body {
    /// Where the text before the body (the `if (c)`, `else`, loop header, or a comment after
    /// it) ends.
    pub header_end: usize,
    /// Where the statement that owns the body (`if`, `else`, loop) starts: its line gives the
    /// block's indentation (a multi-line condition's last line would not).
    pub owner_start: usize,
    /// A comment stands between the header and the body.
    pub comment_before: bool,
    /// Where the body's line part ends: after a comment that follows it on its line, else the
    /// body's end.
    pub tail_end: usize,
}

/// The unbraced bodies of `if`, `else`, `while`, `for` and `do` statements under `root`, by
/// byte range.
pub(crate) fn unbraced_bodies(
    src: &str,
    root: tree_sitter::Node,
) -> BTreeMap<(usize, usize), Body> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let bodies: Vec<tree_sitter::Node> = match n.kind() {
            "if_statement" => n.child_by_field_name("consequence").into_iter().collect(),
            "else_clause" => n.named_child(0).into_iter().collect(),
            "while_statement" | "for_statement" | "do_statement" => {
                n.child_by_field_name("body").into_iter().collect()
            }
            _ => Vec::new(),
        };
        for b in bodies {
            if b.kind() != "compound_statement" {
                out.insert((b.start_byte(), b.end_byte()), body(src, b));
            }
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}

fn body(src: &str, b: tree_sitter::Node) -> Body {
    let prev = b.prev_sibling();
    Body {
        header_end: prev.map_or(b.start_byte(), |p| p.end_byte()),
        owner_start: b.parent().map_or(b.start_byte(), |p| p.start_byte()),
        comment_before: prev.is_some_and(|p| p.kind() == "comment"),
        tail_end: comment_after(src, b.end_byte()),
    }
}

/// The end of a comment that follows `at` on its line (after blanks), else `at`.
fn comment_after(src: &str, at: usize) -> usize {
    let Some(rest) = src.get(at..) else {
        return at;
    };
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let blank = line.len() - line.trim_start_matches([' ', '\t']).len();
    let text = &line[blank..];
    if text.starts_with("//") {
        at + line.trim_end_matches('\r').len()
    } else if let Some(body) = text.strip_prefix("/*") {
        body.find("*/").map_or(at, |k| at + blank + 2 + k + 2)
    } else {
        at
    }
}

/// Whether the file's braced control statements mostly open their block on a line of its own.
pub(crate) fn allman(root: tree_sitter::Node) -> bool {
    let (mut own, mut same) = (0usize, 0usize);
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let control = matches!(
            n.kind(),
            "if_statement" | "else_clause" | "while_statement" | "for_statement" | "do_statement"
        );
        let mut cursor = n.walk();
        for c in n.named_children(&mut cursor) {
            if control && c.kind() == "compound_statement" {
                if let Some(p) = c.prev_sibling() {
                    if p.end_position().row < c.start_position().row {
                        own += 1;
                    } else {
                        same += 1;
                    }
                }
            }
            stack.push(c);
        }
    }
    own > same
}

/// The edits that wrap each body of `wrapped` (by byte range: the fences before and after
/// it) in a block, as the module documentation says: the openings, then the closings.
///
/// A closing `}` shares its position with whatever is inserted after the statement that owns
/// the body (a fence after the loop, before the next statement, or an enclosing body's own
/// `}`), and must come first there: the caller puts the closings ahead of every other edit
/// ([`super::apply`] keeps the given order among insertions at one point), innermost first.
pub(crate) fn wrap_edits(
    src: &str,
    bodies: &BTreeMap<(usize, usize), Body>,
    allman: bool,
    wrapped: BTreeMap<(usize, usize), (Vec<String>, Vec<String>)>,
) -> Result<(Vec<Edit>, Vec<Edit>), RewriteError> {
    let nl = newline(src);
    let unit = indent_unit(src);
    let mut edits = Vec::new();
    let mut closings = Vec::new();
    for ((start, end), (before, after)) in wrapped {
        check_range(src, start)?;
        check_range(src, end)?;
        let Some(b) = bodies.get(&(start, end)) else {
            continue;
        };
        check_range(src, b.header_end)?;
        check_range(src, b.tail_end)?;
        // The line of the statement that owns the block, and its indentation.
        check_range(src, b.owner_start)?;
        let opener = line_start(src, b.owner_start);
        let outer: String = src[opener..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let own_line = indent_before(src, start);
        let inner = own_line.map_or_else(|| format!("{outer}{unit}"), str::to_string);
        let lines = |fences: &[String]| -> String {
            fences.iter().map(|f| format!("{inner}{f}{nl}")).collect()
        };
        // The opening brace and the fences before the statement.
        if own_line.is_some() {
            let ls = line_start(src, start);
            let brace = if allman || b.comment_before {
                format!("{outer}{{{nl}")
            } else {
                edits.push(Edit {
                    start: b.header_end,
                    end: b.header_end,
                    text: " {".into(),
                });
                String::new()
            };
            edits.push(Edit {
                start: ls,
                end: ls,
                text: format!("{brace}{}", lines(&before)),
            });
        } else {
            let open = if allman || b.comment_before {
                format!("{nl}{outer}{{{nl}")
            } else {
                format!(" {{{nl}")
            };
            edits.push(Edit {
                start: b.header_end,
                end: start,
                text: format!("{open}{}{inner}", lines(&before)),
            });
        }
        // The fences after the statement and the closing brace.
        let line_end = src[b.tail_end..]
            .find('\n')
            .map_or(src.len(), |i| b.tail_end + i);
        let rest = src[b.tail_end..line_end].trim_end_matches('\r');
        let close = format!("{}{outer}}}", lines(&after));
        if rest.trim().is_empty() {
            let (at, lead) = if line_end < src.len() {
                (line_end + 1, "")
            } else {
                (src.len(), nl)
            };
            let trail = if line_end < src.len() { nl } else { "" };
            closings.push(Edit {
                start: at,
                end: at,
                text: format!("{lead}{close}{trail}"),
            });
        } else {
            let ws = rest.len() - rest.trim_start().len();
            closings.push(Edit {
                start: b.tail_end,
                end: b.tail_end + ws,
                text: format!("{nl}{close} "),
            });
        }
    }
    // Innermost first: nested bodies that end together close inside out.
    closings.reverse();
    Ok((edits, closings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Lang;

    /// `src` with `F;` wrapped before (and `G;` after) the unbraced body starting at `body`.
    fn wrap(src: &str, body: &str, after: bool) -> String {
        let tree = super::super::parse_tree(src, Lang::C).unwrap();
        let bodies = unbraced_bodies(src, tree.root_node());
        let start = src.find(body).unwrap();
        let key = *bodies
            .keys()
            .find(|(s, _)| *s == start)
            .expect("an unbraced body");
        let mut wrapped = BTreeMap::new();
        let later = if after {
            vec!["G;".to_string()]
        } else {
            vec![]
        };
        wrapped.insert(key, (vec!["F;".to_string()], later));
        let (opens, mut edits) =
            wrap_edits(src, &bodies, allman(tree.root_node()), wrapped).unwrap();
        edits.extend(opens);
        super::super::apply(src, &edits).unwrap()
    }

    #[test]
    fn knr_and_allman_blocks() {
        // K&R (no braced statement to learn from), body on its own line, trailing comment.
        let src = "void f() {\n    if (c)\n        x = 1; // one\n    y = 2;\n}\n";
        assert_eq!(
            wrap(src, "x = 1", false),
            "void f() {\n    if (c) {\n        F;\n        x = 1; // one\n    }\n    y = 2;\n}\n"
        );
        // Allman learnt from the file, tabs, body on the `if`'s line.
        let src = "void f()\n{\n\tif (a)\n\t{\n\t\tb();\n\t}\n\tif (c) x = 1; /* one */\n}\n";
        assert_eq!(
            wrap(src, "x = 1", true),
            "void f()\n{\n\tif (a)\n\t{\n\t\tb();\n\t}\n\tif (c)\n\t{\n\t\tF;\n\t\tx = 1; /* one */\n\t\tG;\n\t}\n}\n"
        );
    }

    #[test]
    fn code_after_the_body_follows_the_brace() {
        let src = "void f() {\n  if (c) x = 1; else y = 2;\n  do z++; while (c);\n}\n";
        assert_eq!(
            wrap(src, "x = 1", false),
            "void f() {\n  if (c) {\n    F;\n    x = 1;\n  } else y = 2;\n  do z++; while (c);\n}\n"
        );
        assert_eq!(
            wrap(src, "z++", true),
            "void f() {\n  if (c) x = 1; else y = 2;\n  do {\n    F;\n    z++;\n    G;\n  } while (c);\n}\n"
        );
        // A comment between the header and the body: the brace gets its own line.
        let src = "void f() {\n  while (c) // spin\n    x++;\n}";
        assert_eq!(
            wrap(src, "x++", false),
            "void f() {\n  while (c) // spin\n  {\n    F;\n    x++;\n  }\n}"
        );
        // CRLF.
        let src = "void f() {\r\n  else_free(); if (c)\r\n    x = 1;\r\n}\r\n";
        assert_eq!(
            wrap(src, "x = 1", false),
            "void f() {\r\n  else_free(); if (c) {\r\n    F;\r\n    x = 1;\r\n  }\r\n}\r\n"
        );
    }
}
