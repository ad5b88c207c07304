//! C++ classes (and structs with members beyond data): what a class definition holds, recorded
//! when the class is defined (`Ctx::define_struct`) and when a member function is defined out
//! of line (`T::f(...) { ... }`). The data members are the class's struct (`types::StructDef`,
//! laid out like a C struct); everything else is a [`ClassDef`]: constructors (with their member
//! initialiser lists), the destructor, member functions (defined in the class or out of line),
//! default member initialisers, `static const` integer members (constants), other `static`
//! data members ([`StaticVar`]: a global cell each, defined out of the class by
//! [`Ctx::static_definition`]) and which member functions are `static`
//! ([`ClassDef::static_fns`]: called without `this`).
//!
//! A class is lowered to its struct plus functions taking `this` (`lower/class.rs`): a member
//! function is inlined at each call like any function of the file, with `this` the object's
//! address and the members bound as places at `this + offset`.
//!
//! Overloaded operators ([`ClassDef::operators`]) and copy constructors are recorded and never
//! called: every use that would call one (an object as a value, a copy) is refused where it
//! is written (`lower/memory.rs`, `lower/class.rs`).
//!
//! Refused, each at its position with a message naming the construct: base classes
//! (inheritance), `virtual` functions, class-specific `operator new` / `operator delete`, a
//! `friend` function defined in
//! the class (a `friend` declaration is accepted: access is not modelled), member templates,
//! type members other than nested structs and classes, `static` data members of array,
//! struct or synchronisation types, bit-fields. A struct of data members nested in a class
//! (`struct node { ... };`) is a struct named by its own name (in a class template's instance:
//! `q<int>::node`, named `node` inside it only, `templates.rs`). An instance of a class template (`templates.rs`) is
//! a class named `name<args>` whose [`ClassDef::bindings`] are its parameters. Access specifiers (`public:`,
//! `private:`, `protected:`) are accepted and have no effect on the lowering.

use super::types::{self, Ty};
use super::{lower, named_children, Ctx, Lang, R};
use tree_sitter::Node;

/// A class's members other than its data (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct ClassDef<'a> {
    pub(crate) name: String,
    /// The struct of its data members.
    pub(crate) id: usize,
    /// Member function definitions (in the class or out of line): name and definition.
    pub(crate) methods: Vec<(String, Node<'a>)>,
    /// Member functions declared in the class (their definitions may follow out of line).
    pub(crate) declared: Vec<String>,
    /// Constructor definitions.
    pub(crate) ctors: Vec<Node<'a>>,
    /// Whether the class declares a constructor (defined in it or out of line).
    pub(crate) declares_ctor: bool,
    /// The destructor's definition.
    pub(crate) dtor: Option<Node<'a>>,
    /// Default member initialisers: member name and the initialiser (`= v`'s `v` or `{v}`).
    pub(crate) defaults: Vec<(String, Node<'a>)>,
    /// Members declared `rl::var<T>` (`relacy.rs`): without an initialiser they start at 0,
    /// as the header's default constructor stores.
    pub(crate) zeroed: Vec<String>,
    /// `static const` / `static constexpr` integer members.
    pub(crate) statics: Vec<(String, i64)>,
    /// `static` member functions, by name and number of parameters (a static and a
    /// non-static member may share a name with different counts).
    pub(crate) static_fns: Vec<(String, usize)>,
    /// `static` data members other than integer constants: one global cell each (per
    /// instance of a class template).
    pub(crate) static_vars: Vec<StaticVar>,
    /// Overloaded operators it declares (`operator==`): accepted, never called — every use
    /// of an object with an operator is refused where it is written (an object is not a
    /// value), so the definitions change nothing.
    pub(crate) operators: Vec<String>,
    /// Whether it declares a copy constructor (`P(const P &o)`), never called: a copy that
    /// would call it (`P a(b)`, `Q a = b` with a `P` member, `new Q(a)`) is refused.
    pub(crate) copy_ctor: bool,
    /// For an instance of a class template: its parameters' bindings, bound while one of its
    /// member functions is lowered (`templates.rs`); empty for other classes.
    pub(crate) bindings: Vec<(String, super::templates::TemplateArg)>,
    /// Classes with members beyond data defined in this one (`class guard { ... };` in
    /// `class mutex`: named `mutex::guard`, and `guard` as well), registered with it.
    pub(crate) nested: Vec<ClassDef<'a>>,
}

impl ClassDef<'_> {
    /// Whether creating an object runs code: a constructor, default member initialisers, or a
    /// member of a class type that does.
    pub(crate) fn constructs(&self) -> bool {
        self.declares_ctor || !self.defaults.is_empty() || !self.zeroed.is_empty()
    }

    /// The class's name without template arguments and enclosing classes (a constructor's
    /// name: `node` for `q<int>::node`).
    pub(crate) fn base_name(&self) -> &str {
        let own = split_qualified(&self.name).map_or(self.name.as_str(), |(_, n)| n);
        own.split('<').next().unwrap_or(own)
    }

    /// Whether the class defines operator `op` (`"operator="`, `"operator&"`; spaces in the
    /// definition's spelling do not count).
    pub(crate) fn defines_operator(&self, op: &str) -> bool {
        self.operators
            .iter()
            .any(|o| o.split_whitespace().collect::<String>() == op)
    }

    /// Whether member function definition `def` of `name` was declared `static`.
    pub(crate) fn is_static(&self, src: &super::Src, name: &str, def: Node) -> bool {
        let n = param_count(src, def);
        self.static_fns.iter().any(|(m, k)| m == name && *k == n)
    }

    /// The value of static constant `name`.
    pub(crate) fn constant(&self, name: &str) -> Option<i64> {
        self.statics
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }
}

/// A `static` data member that is not an integer constant (`static slot *const TOMBSTONE;`,
/// `static std::atomic<int> live;`): a global cell named `C::name`, zero until its
/// definition's initialiser (`slot *const C::TOMBSTONE = new slot(...);`) gives it a value
/// (a constant one at once, another at the start of the main thread).
#[derive(Clone, Debug)]
pub(crate) struct StaticVar {
    /// Its name in the class (`TOMBSTONE`).
    pub(crate) name: String,
    pub(crate) base: crate::ir::Loc,
    pub(crate) ty: Ty,
}

/// The kind of a member function definition or declaration.
enum MemberFn {
    Ctor,
    Dtor,
    Method(String),
    /// An overloaded operator (`operator==`, a conversion `operator bool`).
    Operator(String),
}

/// The operator a member function definition `m` defines, found in its declarator.
fn operator_of(m: Node) -> Option<Node> {
    let mut op = None;
    if let Some(d) = m.child_by_field_name("declarator") {
        super::walk_nodes(d, &mut |n| {
            if op.is_none() && matches!(n.kind(), "operator_name" | "operator_cast") {
                op = Some(n);
            }
        });
    }
    op
}

/// Whether constructor `def` of `class` is its copy (or move) constructor: one parameter, a
/// reference to the class (`P(P &o)`, `P(const P &o)`).
fn is_copy_ctor(src: &super::Src, class: &ClassDef, def: Node) -> bool {
    let params = def
        .child_by_field_name("declarator")
        .and_then(super::function_declarator)
        .and_then(|f| f.child_by_field_name("parameters"))
        .map(named_children)
        .unwrap_or_default();
    let [p] = params.as_slice() else {
        return false;
    };
    let by_ref = p
        .child_by_field_name("declarator")
        .is_some_and(|d| d.kind() == "reference_declarator");
    let ty = p.child_by_field_name("type").map(|t| src.text(t).trim());
    by_ref && ty == Some(class.base_name())
}

/// Whether a function body does nothing (`{}`, comments only).
pub(crate) fn empty_body(def: Node) -> bool {
    def.child_by_field_name("body")
        .is_some_and(|b| named_children(b).is_empty())
}

/// The struct, class or union a class member `m` defines without declaring a member of it
/// (`struct node { ... };` in a class: a nested type).
pub(crate) fn nested_type(m: Node) -> Option<Node> {
    let t = m.child_by_field_name("type")?;
    let defines = matches!(
        t.kind(),
        "struct_specifier" | "class_specifier" | "union_specifier"
    ) && t.child_by_field_name("body").is_some()
        && t.child_by_field_name("name").is_some();
    (defines && m.child_by_field_name("declarator").is_none()).then_some(t)
}

/// Whether function definition `def` can be called with `n` arguments: as many as it has
/// parameters, or fewer by the ones with default arguments (`f(int a, int b = 0)`).
pub(crate) fn accepts(src: &super::Src, def: Node, n: usize) -> bool {
    let max = param_count(src, def);
    let defaults = def
        .child_by_field_name("declarator")
        .and_then(super::function_declarator)
        .and_then(|f| f.child_by_field_name("parameters"))
        .map(named_children)
        .unwrap_or_default()
        .iter()
        .filter(|p| p.kind() == "optional_parameter_declaration")
        .count();
    n <= max && n + defaults >= max
}

/// The number of parameters of function definition `def` (`(void)` has none).
pub(crate) fn param_count(src: &super::Src, def: Node) -> usize {
    let Some(f) = def
        .child_by_field_name("declarator")
        .and_then(super::function_declarator)
    else {
        return 0;
    };
    let params = f
        .child_by_field_name("parameters")
        .map(named_children)
        .unwrap_or_default();
    match params.as_slice() {
        [p] if src.text(*p).trim() == "void" => 0,
        ps => ps.len(),
    }
}

impl<'a> Ctx<'a> {
    /// The class whose data members are struct `id`, if it is one.
    pub(crate) fn class_of(&self, id: usize) -> Option<&ClassDef<'a>> {
        self.classes.iter().find(|c| c.id == id)
    }

    /// The class named `name`.
    pub(crate) fn class_named(&self, name: &str) -> Option<&ClassDef<'a>> {
        self.classes.iter().rev().find(|c| c.name == name)
    }

    /// Rejects what a class may not have: base classes and anything between the name and the
    /// body (`final`, attributes).
    pub(crate) fn check_class_head(&self, node: Node) -> R<()> {
        let src = self.src;
        if let Some(n) = node.child_by_field_name("name") {
            if n.kind() != "type_identifier" {
                let text = src.text(n);
                return Err(src.unsupported(n, &format!("class named `{text}`")));
            }
        }
        let mut c = node.walk();
        for (i, child) in node.children(&mut c).enumerate() {
            if !child.is_named()
                || child.kind() == "comment"
                || node.field_name_for_child(i as u32).is_some()
            {
                continue;
            }
            let what = match child.kind() {
                "base_class_clause" => {
                    "class with a base class (inheritance is not supported)".to_string()
                }
                _ => format!("`{}` on a class", src.text(child)),
            };
            return Err(src.unsupported(child, &what));
        }
        Ok(())
    }

    /// A member of class body `m` that is not a plain data member (C++ only): records it in
    /// `class`, or refuses it. Returns `true` when `m` was a data member left to the caller.
    pub(crate) fn class_member<'t>(&mut self, class: &mut ClassDef<'t>, m: Node<'t>) -> R<bool> {
        let src = self.src;
        let fdecl = m
            .child_by_field_name("declarator")
            .and_then(super::function_declarator);
        match m.kind() {
            "access_specifier" => Ok(false),
            "field_declaration" if nested_type(m).is_some() => {
                // `struct node { ... };` inside the class: a struct of data members, or a
                // class of its own (registered with this one).
                if let Some(t) = nested_type(m) {
                    let outer = self.class_scope.replace(class.name.clone());
                    let made = self.struct_body(t, None);
                    self.class_scope = outer;
                    if let (_, Some(inner)) = made? {
                        class.nested.push(inner);
                    }
                }
                Ok(false)
            }
            "field_declaration" | "declaration" => {
                let is_static = self.check_member_specifiers(m)?;
                if let Some(f) = fdecl {
                    if let Some(v) = m.child_by_field_name("default_value") {
                        return Err(src.unsupported(v, "pure virtual function"));
                    }
                    match self.member_fn_kind(class, f)? {
                        MemberFn::Ctor => class.declares_ctor = true,
                        MemberFn::Dtor => {}
                        MemberFn::Operator(o) => class.operators.push(o),
                        MemberFn::Method(n) => {
                            if is_static {
                                class.static_fns.push((n.clone(), param_count(&src, m)));
                            }
                            class.declared.push(n)
                        }
                    }
                    return Ok(false);
                }
                if m.kind() == "declaration" {
                    return Err(src.unsupported(m, "this class member"));
                }
                if self.static_member(class, m)? {
                    return Ok(false);
                }
                Ok(true)
            }
            "function_definition" => {
                let is_static = self.check_member_specifiers(m)?;
                let Some(f) = fdecl else {
                    // `P &operator=(const P &o) { ... }`: an operator returning a reference.
                    if let Some(o) = operator_of(m) {
                        class.operators.push(self.operator_name(o)?);
                        return Ok(false);
                    }
                    return Err(self.odd_member_fn(m));
                };
                if is_static {
                    match self.member_fn_kind(class, f)? {
                        MemberFn::Method(n) => class.static_fns.push((n, param_count(&src, m))),
                        _ => {
                            return Err(
                                src.error(f, "a constructor or destructor cannot be `static`")
                            )
                        }
                    }
                }
                self.add_member_fn(class, f, m)?;
                Ok(false)
            }
            "template_declaration" => Err(src.unsupported(m, "member template")),
            // `friend class B;`, `friend void f(C *);`: access control, which the lowering
            // ignores. A friend *defined* here is a function outside the class.
            "friend_declaration" => match named_children(m)
                .into_iter()
                .find(|c| c.kind() == "function_definition")
            {
                Some(d) => Err(src.unsupported(d, "friend function defined in a class")),
                None => Ok(false),
            },
            "type_definition" | "alias_declaration" | "using_declaration" => {
                Err(src.unsupported(m, "type declaration in a class"))
            }
            "static_assert_declaration" => Err(src.unsupported(m, "static_assert")),
            k if k.starts_with("preproc") => {
                Err(src.unsupported(m, "preprocessor directive inside a class"))
            }
            k => Err(src.unsupported(m, &format!("class member `{k}`"))),
        }
    }

    /// The name of overloaded operator `o` (an `operator_name` or `operator_cast` node);
    /// class-specific allocation (`operator new`, `operator delete`) is refused: `new C`
    /// would call it.
    fn operator_name(&self, o: Node) -> R<String> {
        let src = self.src;
        let text: String = src.text(o).split_whitespace().collect();
        if text.starts_with("operatornew") || text.starts_with("operatordelete") {
            return Err(src.unsupported(
                o,
                &format!(
                    "class-specific `{}` (allocation is not customisable)",
                    src.text(o)
                ),
            ));
        }
        Ok(src.text(o).to_string())
    }

    /// The refusal of member function definition `m` whose declarator is not a plain function
    /// declarator: an operator, or a function returning a reference.
    fn odd_member_fn(&self, m: Node) -> super::Diagnostic {
        let src = self.src;
        let mut op = None;
        if let Some(d) = m.child_by_field_name("declarator") {
            super::walk_nodes(d, &mut |n| {
                if op.is_none() && matches!(n.kind(), "operator_name" | "operator_cast") {
                    op = Some(n);
                }
            });
        }
        match (op, m.child_by_field_name("declarator")) {
            (Some(o), _) => src.unsupported(
                o,
                &format!("operator overloading (`{}` is not supported)", src.text(o)),
            ),
            (None, Some(d)) if d.kind() == "reference_declarator" => {
                src.unsupported(d, "member function returning a reference")
            }
            _ => src.unsupported(m, "this class member"),
        }
    }

    /// Refuses `virtual` and storage classes other than `static` and `inline` (`explicit` is
    /// fine). Returns whether `m` declares or defines a `static` member function.
    fn check_member_specifiers(&self, m: Node) -> R<bool> {
        let src = self.src;
        let is_fn = m
            .child_by_field_name("declarator")
            .and_then(super::function_declarator)
            .is_some();
        let mut is_static = false;
        let mut c = m.walk();
        for ch in m.children(&mut c) {
            match ch.kind() {
                "virtual" => {
                    return Err(src.unsupported(ch, "virtual function (not supported)"));
                }
                "storage_class_specifier" if src.text(ch) == "static" => is_static = is_fn,
                "storage_class_specifier" if src.text(ch) != "inline" => {
                    let text = src.text(ch);
                    return Err(src.unsupported(ch, &format!("`{text}` class member")));
                }
                _ => {}
            }
        }
        Ok(is_static)
    }

    /// What function declarator `f` declares in `class`.
    fn member_fn_kind(&self, class: &ClassDef, f: Node) -> R<MemberFn> {
        let src = self.src;
        let Some(name) = f.child_by_field_name("declarator") else {
            return Err(src.unsupported(f, "member function"));
        };
        let name = match name.kind() {
            "qualified_identifier" => name.child_by_field_name("name").unwrap_or(name),
            _ => name,
        };
        match name.kind() {
            "destructor_name" => Ok(MemberFn::Dtor),
            "operator_name" | "operator_cast" => self.operator_name(name).map(MemberFn::Operator),
            "identifier" | "field_identifier" if src.text(name) == class.base_name() => {
                Ok(MemberFn::Ctor)
            }
            "field_identifier" | "identifier" => Ok(MemberFn::Method(src.text(name).to_string())),
            _ => Err(src.unsupported(name, &format!("member function `{}`", src.text(name)))),
        }
    }

    /// Records the definition `def` (declarator `f`) of a member function of `class`.
    fn add_member_fn<'t>(&self, class: &mut ClassDef<'t>, f: Node, def: Node<'t>) -> R<()> {
        let src = self.src;
        match self.member_fn_kind(class, f)? {
            MemberFn::Ctor if is_copy_ctor(&src, class, def) => {
                // `P(const P &o)`: objects are never copied by it (a copy that would call it
                // is refused where it is written), so it is never called.
                class.declares_ctor = true;
                class.copy_ctor = true;
            }
            MemberFn::Ctor => {
                let n = param_count(&src, def);
                if class.ctors.iter().any(|c| param_count(&src, *c) == n) {
                    return Err(src.unsupported(
                        f,
                        &format!(
                            "overloaded constructors with {n} parameters (constructors are \
                             chosen by their number of arguments)"
                        ),
                    ));
                }
                class.declares_ctor = true;
                class.ctors.push(def);
            }
            MemberFn::Dtor => {
                if class.dtor.is_some() {
                    return Err(src.error(f, "redefinition of the destructor"));
                }
                class.dtor = Some(def);
            }
            MemberFn::Operator(o) => class.operators.push(o),
            MemberFn::Method(name) => {
                let n = param_count(&src, def);
                let same = class
                    .methods
                    .iter()
                    .any(|(m, d)| *m == name && param_count(&src, *d) == n);
                if same {
                    return Err(src.unsupported(
                        f,
                        &format!(
                            "overloaded member function `{name}` with {n} parameters (member \
                             functions are chosen by their number of arguments)"
                        ),
                    ));
                }
                class.methods.push((name, def));
            }
        }
        Ok(())
    }

    /// A `static` data member `m`: a `static const` / `constexpr` integer with a constant
    /// initialiser is recorded as a constant (`true`); other static members are refused.
    /// `false` for a member that is not static.
    fn static_member(&mut self, class: &mut ClassDef, m: Node) -> R<bool> {
        let src = self.src;
        let mut c = m.walk();
        let is_static = m
            .children(&mut c)
            .any(|ch| ch.kind() == "storage_class_specifier" && src.text(ch) == "static");
        if !is_static {
            return Ok(false);
        }
        let spec = types::decl_spec(&src, &self.types, m)?;
        // `const` or `constexpr` among the declaration's own qualifiers (not a substring of a
        // name: `static inline int constructed;` is a variable).
        let mut qc = m.walk();
        let constant = m.children(&mut qc).any(|ch| {
            matches!(src.text(ch), "const" | "constexpr")
                && (!ch.is_named() || ch.kind() == "type_qualifier")
        });
        let (Some(d), Some(v), types::BaseTy::Int(t), true) = (
            m.child_by_field_name("declarator"),
            m.child_by_field_name("default_value"),
            spec.ty,
            constant && !spec.atomic,
        ) else {
            self.static_var(class, m)?;
            return Ok(true);
        };
        if d.kind() != "field_identifier" {
            self.static_var(class, m)?;
            return Ok(true);
        }
        let v = match v.kind() {
            "initializer_list" => match named_children(v).as_slice() {
                [e] => *e,
                _ => return Err(src.unsupported(v, "initialiser of a static constant")),
            },
            _ => v,
        };
        let value = self.class_const_eval(class, v)?;
        class.statics.push((src.text(d).to_string(), t.wrap(value)));
        Ok(true)
    }

    /// The `static` data members declared by `m` that are not integer constants: a global cell
    /// each ([`StaticVar`]), initialised by `m`'s own initialiser if it has one (a constant).
    /// Integers, atomics and pointers only.
    fn static_var(&mut self, class: &mut ClassDef, m: Node) -> R<()> {
        let src = self.src;
        let spec = types::decl_spec(&src, &self.types, m)?;
        let mut c = m.walk();
        let decls: Vec<Node> = m.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let cls: &ClassDef = class;
            let decl = types::declarator(&src, &spec, d, &mut |n| self.class_const_eval(cls, n))?;
            let fname = src.text(decl.name).to_string();
            if !matches!(decl.ty, Ty::Int { .. } | Ty::Ptr { .. }) {
                return Err(src.unsupported(
                    d,
                    "static data member of this type (integers, atomics and pointers are \
                     supported)",
                ));
            }
            let name = format!("{}::{fname}", class.name);
            let (base, _) = self.alloc(&name, decl.name, &decl.ty, None)?;
            if let Some(v) = m.child_by_field_name("default_value") {
                self.initialised.insert(name);
                let value = single_initialiser(v)
                    .and_then(|e| self.static_constant(class, &decl.ty, e))
                    .ok_or_else(|| {
                        src.unsupported(
                            v,
                            "in-class initialiser of a static data member that is not a constant \
                             (define the member out of the class with it)",
                        )
                    })?;
                self.set_initial(base, &decl.ty, value);
            }
            class.static_vars.push(StaticVar {
                name: fname,
                base,
                ty: decl.ty,
            });
        }
        Ok(())
    }

    /// The class (its index in `classes`) whose static data member top-level declaration
    /// `node` defines (`int C::count = 0;`), if it is such a definition.
    pub(crate) fn static_member_class(&self, node: Node) -> Option<usize> {
        let src = self.src;
        let q = node
            .child_by_field_name("declarator")
            .and_then(qualified_name)?;
        let (scope, _) = split_qualified(src.text(q))?;
        self.classes.iter().rposition(|c| c.name == scope)
    }

    /// The definition `node` (a top-level declaration, `T C::name = v;`) of static data
    /// members of class `self.classes[i]`: a constant initialiser is the cell's initial
    /// value; another one (`new slot(false, NULL)`) is evaluated at the start of the main
    /// thread, in the class's scope, in the order of the definitions and of the global
    /// objects' constructions.
    pub(crate) fn static_definition(&mut self, i: usize, node: Node<'a>) -> R<()> {
        let src = self.src;
        let Some(class) = self.classes.get(i).cloned() else {
            return Err(src.internal("static member of no class"));
        };
        let mut c = node.walk();
        let decls: Vec<Node<'a>> = node.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (target, init) = match d.kind() {
                "init_declarator" => (
                    d.child_by_field_name("declarator"),
                    d.child_by_field_name("value"),
                ),
                _ => (Some(d), None),
            };
            let Some(q) = target.and_then(qualified_name) else {
                return Err(src.unsupported(d, "declaration of a static data member with others"));
            };
            let member = split_qualified(src.text(q)).map_or("", |(_, m)| m);
            if class.constant(member).is_some() && init.is_none() {
                // `const int C::N;`: the definition of a constant initialised in the class.
                continue;
            }
            let Some(var) = class.static_vars.iter().find(|v| v.name == member) else {
                return Err(src.error(
                    q,
                    &format!(
                        "class `{}` has no static data member `{member}`",
                        class.name
                    ),
                ));
            };
            // `T C::x;` and `T C::x{};` leave the cell zero.
            let Some(init) = init.filter(|v| !is_empty_list(*v)) else {
                continue;
            };
            let full = format!("{}::{member}", class.name);
            if !self.initialised.insert(full.clone()) {
                return Err(src.error(q, &format!("redefinition of `{full}`")));
            }
            let Some(v) = single_initialiser(init) else {
                return Err(src.unsupported(init, "initialiser of a static data member"));
            };
            let (base, ty) = (var.base, var.ty.clone());
            self.static_initial(&class, base, &ty, d, v);
        }
        Ok(())
    }

    /// The value of static data member initialiser `v` (type `ty`) of `class` if it is a
    /// constant: an integer constant expression evaluated in the class's scope (its constants
    /// hide the file's names), or a null pointer literal.
    fn static_constant(&mut self, class: &ClassDef, ty: &Ty, v: Node) -> Option<i64> {
        match ty {
            Ty::Int { .. } => self.class_const_eval(class, v).ok(),
            Ty::Ptr { .. } => matches!(
                self.src.text(lower::strip_parens(v)).trim(),
                "NULL" | "nullptr" | "0"
            )
            .then_some(0),
            _ => None,
        }
    }

    /// Makes `value` the initial value of the global cell `base` of type `ty`.
    fn set_initial(&mut self, base: crate::ir::Loc, ty: &Ty, value: i64) {
        if let Some(g) = self.globals.get_mut(base) {
            g.init = ty.int_ty().wrap(value);
        }
    }

    /// Gives static data member cell `base` (type `ty`) of `class` the value of initialiser
    /// `v` (declarator `d`): a constant one, evaluated in the class's scope (its constants
    /// hide the file's names), is its initial value; any other is evaluated at the start of
    /// the main thread, in the class's scope too ([`GlobalCtor::value`]).
    fn static_initial(
        &mut self,
        class: &ClassDef<'a>,
        base: crate::ir::Loc,
        ty: &Ty,
        d: Node<'a>,
        v: Node<'a>,
    ) {
        match self.static_constant(class, ty, v) {
            Some(value) => self.set_initial(base, ty, value),
            None => self.global_ctors.push(GlobalCtor {
                at: d,
                base,
                id: class.id,
                args: Vec::new(),
                value: Some((v, ty.clone())),
            }),
        }
    }

    /// A constant expression in the body of `class`: its static constants by their name, else
    /// any constant expression of the file.
    pub(crate) fn class_const_eval(&mut self, class: &ClassDef, n: Node) -> R<i64> {
        let n = lower::strip_parens(n);
        if n.kind() == "identifier" {
            let name = self.src.text(n);
            if let Some(v) = class.constant(name) {
                return Ok(v);
            }
            if let Some(&v) = self.types.template_values.get(name) {
                return Ok(v);
            }
        }
        // An expression of them (`CONCURRENCY_LEVEL - 1`): the class's constants are bound
        // like a template's value parameters while it is evaluated.
        let constants: Vec<(String, super::templates::TemplateArg)> = class
            .statics
            .iter()
            .map(|(k, v)| (k.clone(), super::templates::TemplateArg::Value(*v)))
            .collect();
        let saved = super::templates::bind(&mut self.types, &constants);
        let value = lower::const_eval(self, n);
        super::templates::restore(&mut self.types, saved);
        value
    }

    /// A top-level function definition `def` whose declarator `fdecl` names `T::f`, `T::T`
    /// or `T::~T`: a member function of class `T` defined out of line.
    pub(crate) fn out_of_line_member(&mut self, def: Node<'a>, fdecl: Node) -> R<()> {
        let src = self.src;
        let name = fdecl.child_by_field_name("declarator");
        let scope = name.and_then(|n| n.child_by_field_name("scope"));
        let class = scope
            .filter(|s| src.lang == Lang::Cpp && s.kind() == "namespace_identifier")
            .and_then(|s| self.classes.iter().rposition(|c| c.name == src.text(s)));
        let Some(i) = class else {
            let at = name.unwrap_or(fdecl);
            let text = src.text(at);
            let what = if scope.is_some_and(|s| s.kind() == "template_type") {
                format!("member function `{text}` of a class template")
            } else {
                format!("function `{text}` (a member of no class defined before it)")
            };
            return Err(src.unsupported(at, &what));
        };
        self.attach_member(i, def, fdecl)
    }

    /// Out-of-line member function `def` of a class template's instance `self.classes[i]`
    /// (`templates.rs`), with the instance's parameters bound.
    pub(crate) fn attach_template_member(&mut self, i: usize, def: Node<'a>) -> R<()> {
        let src = self.src;
        let Some(fdecl) = def
            .child_by_field_name("declarator")
            .and_then(super::function_declarator)
        else {
            return Err(src.unsupported(def, "member function definition"));
        };
        self.attach_member(i, def, fdecl)
    }

    /// Records `def` (declarator `fdecl`), defined out of line, as a member function of
    /// `self.classes[i]`.
    fn attach_member(&mut self, i: usize, def: Node<'a>, fdecl: Node) -> R<()> {
        let src = self.src;
        self.check_member_specifiers(def)?;
        let mut class = self.classes[i].clone();
        let kind = self.member_fn_kind(&class, fdecl)?;
        if let MemberFn::Method(n) = &kind {
            if !class.declared.contains(n) && !class.methods.iter().any(|(m, _)| m == n) {
                return Err(src.error(
                    fdecl,
                    &format!(
                        "no member function `{n}` declared in class `{}`",
                        class.name
                    ),
                ));
            }
        }
        self.add_member_fn(&mut class, fdecl, def)?;
        self.classes[i] = class;
        Ok(())
    }

    /// Checks a default member initialiser `v` of member `name` of type `ty`.
    pub(crate) fn check_default(&self, name: &str, ty: &Ty, v: Node) -> R<()> {
        let src = self.src;
        if matches!(ty, Ty::Mutex | Ty::Sync(_) | Ty::Thread) {
            return Err(src.unsupported(
                v,
                &format!("default member initialiser of `{name}` (a synchronisation object)"),
            ));
        }
        Ok(())
    }
}

/// A global object of a class that constructs: constructed at the start of the main thread
/// (`lower/class.rs`).
#[derive(Clone, Debug)]
pub(crate) struct GlobalCtor<'a> {
    /// The declarator (where the construction's instructions belong).
    pub(crate) at: Node<'a>,
    /// The object's first cell.
    pub(crate) base: crate::ir::Loc,
    /// Its class (struct id).
    pub(crate) id: usize,
    /// The constructor's arguments.
    pub(crate) args: Vec<Node<'a>>,
    /// Instead of a construction: the initialiser of a static data member of class `id`
    /// (evaluated in the class's scope) and the member's type.
    pub(crate) value: Option<(Node<'a>, Ty)>,
}

/// `A::B::x` as its scope `A::B` and name `x` (a `::` inside template arguments does not
/// split).
pub(crate) fn split_qualified(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    let mut last = None;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0
                && bytes.get(i + 1) == Some(&b':')
                && i > 0
                && bytes[i - 1] != b':' =>
            {
                last = Some(i)
            }
            _ => {}
        }
    }
    let i = last?;
    Some((text[..i].trim(), text[i + 2..].trim()))
}

/// Whether initialiser `v` is an empty list (`{}`, `()`).
fn is_empty_list(v: Node) -> bool {
    matches!(v.kind(), "initializer_list" | "argument_list") && named_children(v).is_empty()
}

/// The one expression of an initialiser (`= v`, `(v)`, `{v}`); `None` for an empty or longer
/// list.
fn single_initialiser(v: Node) -> Option<Node> {
    match v.kind() {
        "initializer_list" | "argument_list" => match named_children(v).as_slice() {
            [e] => Some(*e),
            _ => None,
        },
        _ => Some(v),
    }
}

/// The qualified name (`C::x`, `q<T>::x`) declarator `d` declares, through initialised,
/// pointer, reference and array declarators (each names its inner one `declarator`).
pub(crate) fn qualified_name(d: Node) -> Option<Node> {
    let mut n = Some(d);
    while let Some(x) = n {
        if x.kind() == "qualified_identifier" {
            return Some(x);
        }
        n = x.child_by_field_name("declarator");
    }
    None
}

impl<'a> Ctx<'a> {
    /// Declarator `d` of a global of class type `id` (a class that constructs or destructs):
    /// allocated with zeros and recorded for construction at the start of the main thread.
    pub(crate) fn global_class_object(&mut self, d: Node<'a>, id: usize) -> R<()> {
        let src = self.src;
        let dtor = self
            .class_of(id)
            .and_then(|c| c.dtor)
            .is_some_and(|d| !empty_body(d));
        if dtor {
            return Err(src.unsupported(
                d,
                "global object of a class with a non-empty destructor (it would run after \
                 `main` returns; destructors run at `delete` and where a local's block ends)",
            ));
        }
        if d.kind() == "function_declarator" {
            return Err(src.unsupported(
                d,
                "declaration that is a function prototype or an object constructed from names \
                 (write the object with braces: `C c{x};`)",
            ));
        }
        if d.kind() == "array_declarator" {
            return Err(src.unsupported(
                d,
                "array of objects of a class with a constructor or default member initialisers",
            ));
        }
        let (name, args) = super::cpp::ctor_args(&src, d)?;
        let mut exprs = Vec::new();
        for a in args {
            match a {
                super::cpp::CtorArg::Expr(e) => exprs.push(e),
                other => {
                    return Err(src.unsupported(other.node(), "constructor argument"));
                }
            }
        }
        let text = src.text(name).to_string();
        if self.is_variable(&text) || self.fn_first.contains_key(&text) {
            return Err(src.error(name, &format!("redefinition of `{text}`")));
        }
        let (base, _) = self.alloc(&text, name, &Ty::Struct(id), None)?;
        self.object_index
            .insert(text, self.objects.len().saturating_sub(1));
        self.global_ctors.push(GlobalCtor {
            at: d,
            base,
            id,
            args: exprs,
            value: None,
        });
        Ok(())
    }
}
