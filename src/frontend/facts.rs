//! What the lowering asks of whole function definitions and of the whole tree, collected in
//! one walk before lowering starts.
//!
//! Each top-level function definition gets its [`DefFacts`]: the identifiers it uses (which
//! functions other than `main` name — `Ctx::outside_main` —, what a thread function reaches
//! for its thread-locals), the functions it calls by name and the thread creations in its body
//! (the search for thread functions, `reachable_spawns`), the names it declares (a thread
//! function named like one of them is given by a pointer), and the names whose address it
//! takes (`lower/locals.rs`'s `taken_names`, looked up at every inlined call of the function
//! instead of being recomputed). The whole tree gives the defined functions whose address is
//! taken (`lower/funptr.rs`).
//!
//! **Invariant:** every fact is the one the per-definition scans it replaces would compute: the
//! walk calls the same per-node steps (`locals::TakenScan`, [`declared_in`]) in the same
//! preorder, so the lowering is unchanged; a definition the walk did not see (a class member,
//! a lambda) is scanned on demand and cached ([`super::Ctx::taken_names`]).

use super::{Node, Src};
use crate::frontend::lower::locals::TakenScan;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// The facts of one function definition (its whole subtree).
#[derive(Default)]
pub(crate) struct DefFacts<'a> {
    /// Every identifier in the definition.
    pub(crate) identifiers: HashSet<&'a str>,
    /// The names called directly (`f(...)` with an identifier callee), in document order.
    pub(crate) callees: Vec<&'a str>,
    /// The names declared (parameters and local variables).
    pub(crate) declared: HashSet<&'a str>,
    /// The names whose address the definition takes (see `locals::taken_names`).
    pub(crate) taken: Rc<HashSet<String>>,
    /// The argument lists of the `pthread_create` / `thrd_create` calls in its body, with
    /// whether the call is C11's.
    pub(crate) spawns: Vec<(Node<'a>, bool)>,
}

/// The facts of a translation unit.
pub(crate) struct Facts<'a> {
    /// By the tree-sitter id of each top-level function definition.
    pub(crate) defs: HashMap<usize, DefFacts<'a>>,
    /// The functions defined in the file whose address the program takes: named anywhere
    /// (function bodies, global initialisers) other than as the callee of a call or as the
    /// name in their own declarator. Sorted.
    pub(crate) fn_taken: BTreeSet<String>,
    /// [`super::Ctx::taken_names`]' cache for the other definitions (class members, lambdas).
    pub(crate) other_taken: HashMap<usize, Rc<HashSet<String>>>,
}

/// The facts of the tree under `root`, whose top-level function definitions are `defs` and
/// whose defined functions are `defined`.
pub(crate) fn collect<'a>(
    src: &Src<'a>,
    root: Node<'a>,
    defs: &[(&str, Node<'a>)],
    defined: &HashSet<String>,
) -> Facts<'a> {
    let mut facts = Facts {
        defs: HashMap::new(),
        fn_taken: BTreeSet::new(),
        other_taken: HashMap::new(),
    };
    let def_ids: HashSet<usize> = defs.iter().map(|(_, d)| d.id()).collect();
    let mut scan: Option<Scan<'a>> = None;
    walk_with_parent(root, &mut |n, parent| {
        if parent.is_some_and(|p| p.id() == root.id()) {
            // A new top-level item: close the definition before it, open this one's.
            if let Some(done) = scan.take() {
                facts.defs.insert(done.id, done.finish());
            }
            if def_ids.contains(&n.id()) {
                scan = Some(Scan::new(n));
            }
        }
        let kind = n.kind();
        if kind == "identifier" && defined.contains(src.text(n)) {
            let callee = parent.is_some_and(|p| {
                p.kind() == "call_expression"
                    && p.child_by_field_name("function")
                        .is_some_and(|f| f.id() == n.id())
            });
            let declared = parent.is_some_and(|p| p.kind() == "function_declarator");
            if !callee && !declared {
                facts.fn_taken.insert(src.text(n).to_string());
            }
        }
        if let Some(s) = scan.as_mut() {
            s.visit(src, n, kind);
        }
    });
    if let Some(done) = scan.take() {
        facts.defs.insert(done.id, done.finish());
    }
    facts
}

/// A definition being scanned.
struct Scan<'a> {
    id: usize,
    /// The byte range of its body (thread creations are looked for there).
    body: Option<(usize, usize)>,
    facts: DefFacts<'a>,
    taken: TakenScan,
}

impl<'a> Scan<'a> {
    fn new(def: Node<'a>) -> Self {
        Scan {
            id: def.id(),
            body: def
                .child_by_field_name("body")
                .map(|b| (b.start_byte(), b.end_byte())),
            facts: DefFacts::default(),
            taken: TakenScan::default(),
        }
    }

    fn visit(&mut self, src: &Src<'a>, n: Node<'a>, kind: &str) {
        self.taken.visit(src, n, kind);
        match kind {
            "identifier" => {
                self.facts.identifiers.insert(src.text(n));
            }
            "declaration" | "parameter_declaration" => {
                declared_in(src, n, &mut self.facts.declared)
            }
            "call_expression" => self.call(src, n),
            _ => {}
        }
    }

    fn call(&mut self, src: &Src<'a>, n: Node<'a>) {
        let Some(f) = n.child_by_field_name("function") else {
            return;
        };
        if f.kind() != "identifier" {
            return;
        }
        let name = src.text(f);
        self.facts.callees.push(name);
        let in_body = self
            .body
            .is_some_and(|(s, e)| s <= n.start_byte() && n.end_byte() <= e);
        if !in_body || !matches!(name, "pthread_create" | "thrd_create") {
            return;
        }
        if let Some(args) = n
            .child_by_field_name("arguments")
            .filter(|a| a.kind() == "argument_list")
        {
            self.facts.spawns.push((args, name == "thrd_create"));
        }
    }

    fn finish(self) -> DefFacts<'a> {
        DefFacts {
            taken: Rc::new(self.taken.out),
            ..self.facts
        }
    }
}

/// Adds the names `n` declares to `out` when it is a declaration or a parameter declaration.
pub(crate) fn declared_in<'a>(src: &Src<'a>, n: Node<'a>, out: &mut HashSet<&'a str>) {
    if !matches!(n.kind(), "declaration" | "parameter_declaration") {
        return;
    }
    let mut c = n.walk();
    for mut d in n.children_by_field_name("declarator", &mut c) {
        // Down to the declared name: `*x`, `x[2]`, `x = v`, `(*x)(...)`.
        for _ in 0..64 {
            if d.kind() == "identifier" {
                out.insert(src.text(d));
                break;
            }
            let mut cc = d.walk();
            let inner = d
                .child_by_field_name("declarator")
                .or_else(|| d.named_children(&mut cc).find(|x| x.kind() != "comment"));
            match inner {
                Some(i) => d = i,
                None => break,
            }
        }
    }
}

/// Calls `f` on every node under `root` (preorder, iteratively) with its parent (`None` for
/// `root`).
fn walk_with_parent<'t>(root: Node<'t>, f: &mut dyn FnMut(Node<'t>, Option<Node<'t>>)) {
    let mut cursor = root.walk();
    let mut parents: Vec<Node<'t>> = Vec::new();
    loop {
        let n = cursor.node();
        f(n, parents.last().copied());
        if cursor.goto_first_child() {
            parents.push(n);
            continue;
        }
        loop {
            if parents.is_empty() {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            parents.pop();
        }
    }
}

impl<'a> super::Ctx<'a> {
    /// The names whose address the function definition (or lambda) `def` takes: the walk's
    /// for a top-level definition, else scanned once and cached.
    pub(crate) fn taken_names(&mut self, def: Node) -> Rc<HashSet<String>> {
        if let Some(f) = self.facts.defs.get(&def.id()) {
            return f.taken.clone();
        }
        let src = self.src;
        self.facts
            .other_taken
            .entry(def.id())
            .or_insert_with(|| Rc::new(crate::frontend::lower::locals::taken_names(&src, def)))
            .clone()
    }

    /// The identifiers used in the function definition `def` (the walk's for a top-level
    /// definition).
    pub(crate) fn identifiers_in(&self, def: Node) -> HashSet<&'a str> {
        if let Some(f) = self.facts.defs.get(&def.id()) {
            return f.identifiers.clone();
        }
        let mut out = HashSet::new();
        super::walk_nodes(def, &mut |n| {
            if n.kind() == "identifier" {
                out.insert(self.src.text(n));
            }
        });
        out
    }
}
