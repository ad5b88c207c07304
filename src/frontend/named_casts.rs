//! C++'s named casts `static_cast<T>(e)`, `reinterpret_cast<T>(e)` and `const_cast<T>(e)`:
//! on the scalars and pointers fensyn models they convert exactly as the C cast `(T)e` does
//! (a value to `T`'s width and signedness, a pointer to another pointer type), so the text
//! is rewritten to that cast before parsing — like `_Atomic(T)` and attributes, every byte
//! offset unchanged, so spans, lines and columns stay those the user wrote:
//!
//! ```text
//! static_cast<int*>(obj)      →            ((int*) obj)
//! static_cast<long>(a + b)    →            (long)(a + b)
//! ```
//!
//! The name gives the opening parenthesis of the whole cast, `<` and `>` become the type's
//! parentheses and the call's parentheses close the whole cast (first form). An operand whose
//! own operator binds looser than a cast (binary, `?:`, assignment, comma) keeps the call's
//! parentheses (second form); with such an operand and a postfix operator after the cast
//! (`static_cast<T *>(p + 1)->x`) no offset-keeping spelling exists and the cast is left as
//! written, refused at the call (as is `dynamic_cast`, which needs the run-time types of
//! classes with virtual functions, refused anyway). Only the C++ grammar is rewritten: in C
//! these names are ordinary identifiers.

use tree_sitter::{Node, Parser};

/// The C++ casts that mean what a C cast means on fensyn's values.
pub(crate) const NAMED_CASTS: &[&str] = &["static_cast", "reinterpret_cast", "const_cast"];

/// `text` with every named cast written as a C cast (see the module doc); `text` itself when
/// it has none.
pub(crate) fn rewrite(text: &str) -> String {
    if !NAMED_CASTS.iter().any(|c| text.contains(c)) {
        return text.to_string();
    }
    let mut parser = Parser::new();
    let language: tree_sitter::Language = tree_sitter_cpp::LANGUAGE.into();
    if parser.set_language(&language).is_err() {
        return text.to_string();
    }
    let Some(tree) = parser.parse(text.as_bytes(), None) else {
        return text.to_string();
    };
    let mut edits: Vec<(usize, u8)> = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if let Some(e) = cast_edits(text, n) {
            edits.extend(e);
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let mut bytes = text.as_bytes().to_vec();
    for (at, b) in edits {
        bytes[at] = b;
    }
    // Only ASCII bytes of ASCII tokens were replaced, so this cannot fail.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())
}

/// The name, type argument and operand of a named cast call `name<T>(e)`.
pub(crate) fn named_cast<'t>(
    text: &str,
    call: Node<'t>,
) -> Option<(&'static str, Node<'t>, Node<'t>)> {
    if call.kind() != "call_expression" {
        return None;
    }
    let f = call.child_by_field_name("function")?;
    if f.kind() != "template_function" {
        return None;
    }
    let name = f.child_by_field_name("name")?;
    let name = NAMED_CASTS
        .iter()
        .find(|c| text.get(name.byte_range()) == Some(**c))?;
    let targs = f.child_by_field_name("arguments")?;
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    let operands: Vec<Node> = args.named_children(&mut c).collect();
    let mut c = targs.walk();
    let types: Vec<Node> = targs.named_children(&mut c).collect();
    match (types.as_slice(), operands.as_slice()) {
        ([t], [e]) if t.kind() == "type_descriptor" && !e.is_extra() => Some((name, *t, *e)),
        _ => None,
    }
}

/// The byte replacements that turn the named cast `n` into a C cast, if `n` is one that can be
/// written so.
fn cast_edits(text: &str, n: Node) -> Option<Vec<(usize, u8)>> {
    let (_, _, operand) = named_cast(text, n)?;
    let f = n.child_by_field_name("function")?;
    let name = f.child_by_field_name("name")?;
    let targs = f.child_by_field_name("arguments")?;
    let args = n.child_by_field_name("arguments")?;
    let (lt, gt) = (targs.start_byte(), targs.end_byte() - 1);
    let (open, close) = (args.start_byte(), args.end_byte() - 1);
    let bytes = text.as_bytes();
    let at = |i: usize, b: u8| bytes.get(i) == Some(&b);
    if !(at(lt, b'<') && at(gt, b'>') && at(open, b'(') && at(close, b')')) {
        return None;
    }
    let loose = matches!(
        operand.kind(),
        "binary_expression"
            | "conditional_expression"
            | "assignment_expression"
            | "comma_expression"
    );
    let mut edits: Vec<(usize, u8)> = name.byte_range().map(|i| (i, b' ')).collect();
    // Anything between the name and `<` (spaces, a comment) is left alone.
    edits.extend([(lt, b'('), (gt, b')')]);
    if !loose {
        // `((T) e)`: the name's first byte opens the cast, the call's `)` closes it.
        edits[0].1 = b'(';
        edits.push((open, b' '));
    } else if followed_by_postfix(n) {
        return None;
    }
    Some(edits)
}

/// Whether a postfix operator applies to the result of `n` (`n->f`, `n.f`, `n[i]`, `n(...)`,
/// `n++`): a C cast written in `n`'s place would take that operator into its operand.
fn followed_by_postfix(n: Node) -> bool {
    let Some(p) = n.parent() else {
        return false;
    };
    let first = |field: &str| p.child_by_field_name(field).map(|c| c.id()) == Some(n.id());
    match p.kind() {
        "field_expression" => first("argument"),
        "subscript_expression" => first("argument"),
        "call_expression" => first("function"),
        "update_expression" => p.start_byte() == n.start_byte(),
        _ => false,
    }
}
