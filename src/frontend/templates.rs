//! C++ class templates (`template <typename T, int N> class ring { ... };`): each distinct
//! argument list the file uses (`ring<int, 4>`, found by a walk of every top-level item before
//! it is lowered, and of every instance's own body) is an ordinary class (`classes.rs`) of its
//! own, defined from the template's one `class_specifier` with the parameters bound:
//!
//! * a type parameter `T` is a typedef of its argument (`types::TypeEnv::typedefs`, or
//!   `full_typedefs` for a pointer type) and a value parameter `N` an integer constant
//!   (`TypeEnv::template_values` for array sizes and nested arguments, and a static constant
//!   of the instance's class for member function bodies); the class's own name without
//!   arguments (the injected class name) names the instance;
//! * the bindings hold while the instance's members are defined and whenever one of its member
//!   functions is inlined (`lower/inline.rs`, `lower/class.rs`), and are undone after;
//! * `name<args>` in a type resolves by its arguments' canonical key (`instance_key`) to the
//!   instance's struct, registered under that key in `TypeEnv::typedefs` (a name no
//!   identifier can spell).
//!
//! Member functions are defined in the class or out of line
//! (`template <typename T> void q<T>::push(T v) { ... }`, with the class's parameter names):
//! an out-of-line member is attached to every instance, those made before it and after.
//!
//! Arguments are types (integer, pointer, class types) and integer constants (literals,
//! `true`/`false`, the enclosing template's value parameters, negated). Refused, each at its
//! position with a message naming the construct: partial and explicit specialisations,
//! default template arguments, template template parameters, variadic templates, function,
//! variable and alias templates, member templates, constraints (`requires`, concepts) and
//! anything SFINAE is built from (`typename X<T>::type` is a type this front end does not
//! know).

use super::types::{self, BaseTy, IntTy, Ty, TypeEnv};
use super::{named_children, Ctx, Src, R};
use std::collections::HashMap;
use tree_sitter::Node;

/// How deep instantiations may nest (an instance whose body uses another instance).
const MAX_DEPTH: usize = 16;

/// A template argument, as bound to its parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TemplateArg {
    Type(Ty),
    Value(i64),
}

/// A class template: its definition, parameters (name; `None` for a type parameter, the
/// integer type of a value parameter), the member functions defined out of line so far and
/// the struct ids of its instances.
#[derive(Clone, Debug)]
pub(crate) struct ClassTemplate<'a> {
    name: String,
    node: Node<'a>,
    params: Vec<(String, Option<IntTy>)>,
    members: Vec<Node<'a>>,
    /// Definitions of its static data members (`template <...> T q<T>::x = v;`).
    statics: Vec<Node<'a>>,
    instances: Vec<usize>,
}

/// What a definition outside a class template's body defines.
#[derive(Clone, Copy)]
enum OutOfLine {
    /// A member function (`template <...> R q<T>::f(...) { ... }`).
    Member,
    /// A static data member (`template <...> T q<T>::x = v;`).
    Static,
}

/// What a name meant before a template parameter was bound to it: its typedef, full typedef
/// and value parameter.
type Before = (String, Option<(BaseTy, bool)>, Option<Ty>, Option<i64>);

/// What binding template parameters replaced, to be put back by [`restore`].
#[derive(Default)]
pub(crate) struct Saved {
    names: Vec<Before>,
}

/// Binds `bindings` in `env` (see the module doc); [`restore`] undoes it.
pub(crate) fn bind(env: &mut TypeEnv, bindings: &[(String, TemplateArg)]) -> Saved {
    let mut saved = Saved::default();
    for (name, arg) in bindings {
        saved.names.push((
            name.clone(),
            env.typedefs.remove(name),
            env.full_typedefs.remove(name),
            env.template_values.remove(name),
        ));
        match arg {
            TemplateArg::Value(v) => {
                env.template_values.insert(name.clone(), *v);
            }
            TemplateArg::Type(t) => match t {
                Ty::Int { ty, atomic } => {
                    env.typedefs
                        .insert(name.clone(), (BaseTy::Int(*ty), *atomic));
                }
                Ty::Struct(id) => {
                    env.typedefs
                        .insert(name.clone(), (BaseTy::Struct(*id), false));
                }
                other => {
                    env.full_typedefs.insert(name.clone(), other.clone());
                }
            },
        }
    }
    saved
}

/// Undoes [`bind`] (bindings undone in reverse order).
pub(crate) fn restore(env: &mut TypeEnv, saved: Saved) {
    for (name, t, f, v) in saved.names.into_iter().rev() {
        env.typedefs.remove(&name);
        env.full_typedefs.remove(&name);
        env.template_values.remove(&name);
        if let Some(t) = t {
            env.typedefs.insert(name.clone(), t);
        }
        if let Some(f) = f {
            env.full_typedefs.insert(name.clone(), f);
        }
        if let Some(v) = v {
            env.template_values.insert(name, v);
        }
    }
}

/// The key under which instance `name<args>` is registered, its C++ spelling and its
/// arguments, for template type `tt` (a `template_type` naming a class template), evaluated
/// in `env`. `None` when `tt` names no class template.
pub(crate) fn instance_key(
    src: &Src,
    env: &TypeEnv,
    tt: Node,
) -> R<Option<(String, String, Vec<TemplateArg>)>> {
    let Some(name) = tt.child_by_field_name("name").map(|n| src.text(n)) else {
        return Ok(None);
    };
    let Some(params) = env.templates.get(name) else {
        return Ok(None);
    };
    let args = tt
        .child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default();
    let args: Vec<Node> = args.into_iter().filter(|a| a.kind() != "comment").collect();
    if args.len() != params.len() {
        let (n, text) = (params.len(), src.text(tt));
        return Err(src.error(
            tt,
            &format!("`{text}`: class template `{name}` takes {n} arguments"),
        ));
    }
    let mut out = Vec::new();
    let (mut key, mut shown) = (Vec::new(), Vec::new());
    for (a, p) in args.iter().zip(params) {
        let arg = template_arg(src, env, *a, *p)?;
        match &arg {
            TemplateArg::Type(t) => {
                key.push(format!("{t:?}"));
                shown.push(t.describe(env).replace("struct ", ""));
            }
            TemplateArg::Value(v) => {
                key.push(v.to_string());
                shown.push(v.to_string());
            }
        }
        out.push(arg);
    }
    let key = format!("{name}<{}>", key.join(","));
    let shown = format!("{name}<{}>", shown.join(", "));
    Ok(Some((key, shown, out)))
}

/// Template argument `a` for a parameter of kind `p` (see [`ClassTemplate`]).
fn template_arg(src: &Src, env: &TypeEnv, a: Node, p: Option<IntTy>) -> R<TemplateArg> {
    let text = src.text(a);
    match (a.kind(), p) {
        ("type_descriptor", None) => type_arg(src, env, a).map(TemplateArg::Type),
        // `ring<T, N>`, `ring<n>`: a name the grammar took for a type.
        ("type_descriptor", Some(t)) if named_children(a).len() == 1 => {
            match env.template_values.get(text.trim()) {
                Some(&v) => Ok(TemplateArg::Value(t.wrap(v))),
                None => Err(bad_value(src, a)),
            }
        }
        ("type_descriptor", Some(_)) => Err(src.error(
            a,
            &format!("template argument `{text}` is a type where a value is expected"),
        )),
        (_, None) => Err(src.error(
            a,
            &format!("template argument `{text}` is a value where a type is expected"),
        )),
        (_, Some(t)) => Ok(TemplateArg::Value(t.wrap(value_arg(src, env, a)?))),
    }
}

/// A type argument: a type name with `*`s.
fn type_arg(src: &Src, env: &TypeEnv, a: Node) -> R<Ty> {
    let spec = types::decl_spec(src, env, a)?;
    let mut ty = spec.base();
    let mut d = a.child_by_field_name("declarator");
    while let Some(n) = d {
        if n.kind() != "abstract_pointer_declarator" {
            let text = src.text(n);
            return Err(src.unsupported(n, &format!("template argument `{text}`")));
        }
        ty = spec.pointer_to(src, n, ty, false);
        d = n.child_by_field_name("declarator");
    }
    if matches!(ty, Ty::Void) {
        return Err(src.unsupported(a, "template argument `void`"));
    }
    Ok(ty)
}

/// A value argument: an integer literal, `true`/`false`, a value parameter of the template
/// being instantiated, `sizeof` of a type name, negated or parenthesised.
fn value_arg(src: &Src, env: &TypeEnv, a: Node) -> R<i64> {
    let text = src.text(a);
    match a.kind() {
        "number_literal" => super::integer_literal(text).map_err(|e| src.error(a, &e)),
        "true" => Ok(1),
        "false" => Ok(0),
        "identifier" if env.template_values.contains_key(text) => {
            Ok(env.template_values.get(text).copied().unwrap_or(0))
        }
        "parenthesized_expression" => match named_children(a).as_slice() {
            [e] => value_arg(src, env, *e),
            _ => Err(bad_value(src, a)),
        },
        "unary_expression" if a.child(0).is_some_and(|o| src.text(o) == "-") => {
            let e = a
                .child_by_field_name("argument")
                .ok_or_else(|| bad_value(src, a))?;
            Ok(value_arg(src, env, e)?.wrapping_neg())
        }
        // `sizeof(int32_t)` (the thesis's mpmc-queue): the LP64 size of a type name.
        "sizeof_expression" => {
            let t = a
                .child_by_field_name("type")
                .ok_or_else(|| bad_value(src, a))?;
            let ty = type_arg(src, env, t)?;
            Ok(super::lower::size_align(env, &ty).0 as i64)
        }
        _ => Err(bad_value(src, a)),
    }
}

fn bad_value(src: &Src, a: Node) -> super::Diagnostic {
    let text = src.text(a);
    src.unsupported(
        a,
        &format!(
            "template argument `{text}` (a value argument must be an integer literal, a value \
             parameter of the enclosing template or `sizeof` of a type)"
        ),
    )
}

/// The struct of instance `tt` (a `template_type`), if it names a class template.
pub(crate) fn instance(src: &Src, env: &TypeEnv, tt: Node) -> R<Option<usize>> {
    let Some((key, shown, _)) = instance_key(src, env, tt)? else {
        return Ok(None);
    };
    match env.typedefs.get(&key) {
        Some(&(BaseTy::Struct(id), _)) => Ok(Some(id)),
        _ => Err(src.unsupported(
            tt,
            &format!(
                "`{shown}` here (a class template instance is made where a top-level item uses it)"
            ),
        )),
    }
}

/// The parameters of template declaration `node`, refusing what is not a plain `typename T`,
/// `class T` or integer `int N`.
fn parameters(src: &Src, env: &TypeEnv, node: Node) -> R<Vec<(String, Option<IntTy>)>> {
    let Some(list) = node.child_by_field_name("parameters") else {
        return Err(src.unsupported(node, "template"));
    };
    let mut out = Vec::new();
    for p in named_children(list) {
        let param = match p.kind() {
            "comment" => continue,
            "type_parameter_declaration" => match named_children(p).as_slice() {
                [n] if n.kind() == "type_identifier" => (src.text(*n).to_string(), None),
                _ => return Err(src.unsupported(p, "unnamed template parameter")),
            },
            "parameter_declaration" => value_parameter(src, env, p)?,
            "optional_type_parameter_declaration" | "optional_parameter_declaration" => {
                return Err(src.unsupported(p, "default template argument"));
            }
            "variadic_type_parameter_declaration" | "variadic_parameter_declaration" => {
                return Err(src.unsupported(p, "variadic template (parameter pack)"));
            }
            "template_template_parameter_declaration" => {
                return Err(src.unsupported(p, "template template parameter"));
            }
            k => return Err(src.unsupported(p, &format!("template parameter `{k}`"))),
        };
        if out.iter().any(|(n, _)| *n == param.0) {
            let name = &param.0;
            return Err(src.error(p, &format!("duplicate template parameter `{name}`")));
        }
        out.push(param);
    }
    Ok(out)
}

/// A value template parameter `int N`: its name and integer type.
fn value_parameter(src: &Src, env: &TypeEnv, p: Node) -> R<(String, Option<IntTy>)> {
    let spec = types::decl_spec(src, env, p)?;
    let d = p.child_by_field_name("declarator");
    match (spec.ty, spec.atomic, spec.full, d) {
        (BaseTy::Int(t), false, None, Some(d)) if d.kind() == "identifier" => {
            Ok((src.text(d).to_string(), Some(t)))
        }
        _ => Err(src.unsupported(
            p,
            "template parameter of this kind (a value parameter must be an integer)",
        )),
    }
}

impl<'a> Ctx<'a> {
    /// A top-level `template <...> ...` (see the module doc).
    pub(crate) fn template_item(&mut self, node: Node<'a>) -> R<()> {
        let src = self.src;
        let params = parameters(&src, &self.types, node)?;
        let inner: Vec<Node<'a>> = named_children(node)
            .into_iter()
            .filter(|c| c.kind() != "comment" && c.kind() != "template_parameter_list")
            .collect();
        let [item] = inner.as_slice() else {
            return Err(src.unsupported(node, "template"));
        };
        let item = *item;
        let class = match item.kind() {
            "class_specifier" | "struct_specifier" => Some(item),
            "declaration" => item
                .child_by_field_name("type")
                .filter(|t| matches!(t.kind(), "class_specifier" | "struct_specifier")),
            _ => None,
        };
        match class {
            Some(c) if c.child_by_field_name("body").is_some() => {
                self.class_template(node, c, params)
            }
            // `template <typename T> class q;`: a declaration, no effect (a use of `q<...>`
            // needs the definition, which must come before it).
            Some(c) if item.kind() != "declaration" && c.child_by_field_name("name").is_some() => {
                Ok(())
            }
            _ if item.kind() == "function_definition" => self.template_member(node, item, params),
            _ if item.kind() == "declaration"
                && item
                    .child_by_field_name("declarator")
                    .and_then(super::classes::qualified_name)
                    .is_some() =>
            {
                self.template_static(item, params)
            }
            _ => Err(self.refuse_template(node, item)),
        }
    }

    /// Why template `node` declaring `item` is refused.
    fn refuse_template(&self, node: Node, item: Node) -> super::Diagnostic {
        let src = self.src;
        let what = match item.kind() {
            "class_specifier" | "struct_specifier" => {
                "declaration of a class template without its definition"
            }
            "union_specifier" => "union template",
            "declaration"
                if item
                    .child_by_field_name("declarator")
                    .is_some_and(|d| super::function_declarator(d).is_some()) =>
            {
                "function template declaration (function templates are not supported)"
            }
            "declaration" => "variable template",
            "alias_declaration" => "alias template",
            "concept_definition" => "concept",
            "requires_clause" => "template constraint (`requires`)",
            "template_declaration" => "member template (a template inside a template)",
            _ => "template",
        };
        src.unsupported(node, what)
    }

    /// `template <params> class name { ... };`: recorded; instances are made at their uses.
    fn class_template(
        &mut self,
        node: Node<'a>,
        class: Node<'a>,
        params: Vec<(String, Option<IntTy>)>,
    ) -> R<()> {
        let src = self.src;
        let Some(name) = class.child_by_field_name("name") else {
            return Err(src.unsupported(class, "anonymous class template"));
        };
        if name.kind() == "template_type" {
            let what = if params.is_empty() {
                "explicit specialisation of a class template"
            } else {
                "partial specialisation of a class template"
            };
            return Err(src.unsupported(node, what));
        }
        if params.is_empty() {
            return Err(src.unsupported(node, "template without parameters"));
        }
        let name = src.text(name).to_string();
        let taken = self.types.templates.contains_key(&name)
            || self.types.typedefs.contains_key(&name)
            || self
                .types
                .structs
                .iter()
                .any(|s| s.name.as_deref() == Some(&name));
        if taken {
            return Err(src.error(class, &format!("redefinition of `{name}`")));
        }
        self.types
            .templates
            .insert(name.clone(), params.iter().map(|p| p.1).collect());
        self.class_templates.push(ClassTemplate {
            name,
            node: class,
            params,
            members: Vec::new(),
            statics: Vec::new(),
            instances: Vec::new(),
        });
        Ok(())
    }
}

impl<'a> Ctx<'a> {
    /// Makes the instances of class templates that `root` uses (see the module doc), innermost
    /// first (`q<node<int>>` needs `node<int>`).
    pub(crate) fn instantiate_uses(&mut self, root: Node<'a>) -> R<()> {
        if self.class_templates.is_empty() {
            return Ok(());
        }
        let src = self.src;
        let mut uses = Vec::new();
        super::walk_nodes(root, &mut |n| {
            let named = n
                .child_by_field_name("name")
                .is_some_and(|t| self.types.templates.contains_key(src.text(t)));
            if n.kind() == "template_type" && named {
                uses.push(n);
            }
        });
        uses.sort_by_key(|n| (n.end_byte(), std::cmp::Reverse(n.start_byte())));
        for tt in uses {
            let Some((key, shown, args)) = instance_key(&src, &self.types, tt)? else {
                continue;
            };
            if self.types.typedefs.contains_key(&key) || self.instantiating.contains(&key) {
                continue;
            }
            let name = tt
                .child_by_field_name("name")
                .map(|n| src.text(n))
                .unwrap_or("");
            let Some(t) = self.class_templates.iter().position(|t| t.name == name) else {
                continue;
            };
            if self.instantiating.len() >= MAX_DEPTH {
                return Err(src.unsupported(
                    tt,
                    &format!("class template instances nested deeper than {MAX_DEPTH} levels"),
                ));
            }
            self.instantiating.push(key.clone());
            let made = self.instantiate(t, &key, &shown, args);
            self.instantiating.pop();
            made?;
        }
        Ok(())
    }

    /// Defines instance `shown` (registered under `key`) of class template `t` with `args`.
    fn instantiate(&mut self, t: usize, key: &str, shown: &str, args: Vec<TemplateArg>) -> R<()> {
        let tmpl = self.class_templates[t].clone();
        let mut bindings: Vec<(String, TemplateArg)> =
            tmpl.params.iter().map(|p| p.0.clone()).zip(args).collect();
        // The types nested in the class, then the injected class name (last), bound once
        // their structs exist.
        let src = self.src;
        if let Some(body) = tmpl.node.child_by_field_name("body") {
            for m in named_children(body) {
                // `struct node { ... };` and `struct node { ... } n;`.
                let name = m
                    .child_by_field_name("type")
                    .filter(|t| t.child_by_field_name("body").is_some())
                    .and_then(|t| t.child_by_field_name("name"))
                    .map(|n| src.text(n).to_string());
                if let Some(n) = name {
                    bindings.push((n, TemplateArg::Type(Ty::Void)));
                }
            }
        }
        bindings.push((tmpl.name.clone(), TemplateArg::Type(Ty::Void)));
        let saved = bind(&mut self.types, &bindings);
        let made = self.define_instance(&tmpl, key, shown, &mut bindings);
        restore(&mut self.types, saved);
        let id = made?;
        if let Some(tm) = self.class_templates.get_mut(t) {
            tm.instances.push(id);
        }
        Ok(())
    }

    /// [`Self::instantiate`] with the parameters bound: the nested instances its body uses,
    /// its class, then the members defined out of line so far. Returns its struct id.
    fn define_instance(
        &mut self,
        tmpl: &ClassTemplate<'a>,
        key: &str,
        shown: &str,
        bindings: &mut [(String, TemplateArg)],
    ) -> R<usize> {
        self.instantiate_uses(tmpl.node)?;
        for m in tmpl.members.iter().chain(&tmpl.statics) {
            self.instantiate_uses(*m)?;
        }
        let inst = Instance {
            key: key.to_string(),
            shown: shown.to_string(),
            base: tmpl.name.clone(),
        };
        let outer = self.class_scope.replace(shown.to_string());
        let made = self.struct_body(tmpl.node, Some(&inst));
        self.class_scope = outer;
        let (id, class) = made?;
        if let Some(last) = bindings.last_mut() {
            last.1 = TemplateArg::Type(Ty::Struct(id));
        }
        let params = tmpl.params.len();
        let n = bindings.len();
        for (name, arg) in bindings.iter_mut().take(n - 1).skip(params) {
            if let Some(&(BaseTy::Struct(s), _)) = self.types.typedefs.get(name.as_str()) {
                *arg = TemplateArg::Type(Ty::Struct(s));
            }
        }
        let Some(mut class) = class else {
            return Ok(id);
        };
        for (name, arg) in bindings.iter() {
            if let TemplateArg::Value(v) = arg {
                class.statics.push((name.clone(), *v));
            }
        }
        class.bindings = bindings.to_vec();
        self.push_class(class);
        let i = self.classes.len() - 1;
        for m in &tmpl.members {
            self.attach_template_member(i, *m)?;
        }
        for s in &tmpl.statics {
            self.static_definition(i, *s)?;
        }
        Ok(id)
    }

    /// The definition of a static data member of a class template,
    /// `template <typename T> T *const q<T>::x = v;` (parameters `params`): applied to every
    /// instance made so far and recorded for those made later.
    fn template_static(&mut self, item: Node<'a>, params: Vec<(String, Option<IntTy>)>) -> R<()> {
        let src = self.src;
        let mut c = item.walk();
        let q = item
            .children_by_field_name("declarator", &mut c)
            .find_map(super::classes::qualified_name);
        let scope = q
            .and_then(|q| q.child_by_field_name("scope"))
            .filter(|s| s.kind() == "template_type");
        let Some(scope) = scope else {
            return Err(src.unsupported(item, "variable template"));
        };
        self.out_of_line(scope, &params, item, OutOfLine::Static)
    }

    /// An out-of-line member function `def` of a class template,
    /// `template <typename T> R name<T>::f(...) { ... }` (parameters `params`): attached to
    /// every instance made so far and recorded for those made later.
    fn template_member(
        &mut self,
        node: Node,
        def: Node<'a>,
        params: Vec<(String, Option<IntTy>)>,
    ) -> R<()> {
        let src = self.src;
        let fdecl = def
            .child_by_field_name("declarator")
            .and_then(super::function_declarator);
        let scope = fdecl
            .and_then(|f| f.child_by_field_name("declarator"))
            .filter(|d| d.kind() == "qualified_identifier")
            .and_then(|d| d.child_by_field_name("scope"));
        let Some(scope) = scope.filter(|s| s.kind() == "template_type") else {
            let name = fdecl
                .and_then(|f| super::function_name(&src, f))
                .unwrap_or("?");
            return Err(src.unsupported(
                node,
                &format!("function template `{name}` (only class templates are supported)"),
            ));
        };
        self.out_of_line(scope, &params, def, OutOfLine::Member)
    }

    /// Records `item`, defined out of class template `scope` (`name<T>::...`, the template's
    /// parameters `params`), and applies it to every instance made so far, with the
    /// instance's parameters bound; `define_instance` applies it to those made later.
    fn out_of_line(
        &mut self,
        scope: Node,
        params: &[(String, Option<IntTy>)],
        item: Node<'a>,
        kind: OutOfLine,
    ) -> R<()> {
        let src = self.src;
        let name = scope
            .child_by_field_name("name")
            .map(|n| src.text(n))
            .unwrap_or("");
        let Some(t) = self.class_templates.iter().position(|t| t.name == name) else {
            return Err(src.unsupported(
                scope,
                &format!("member of `{name}`, which is not a class template defined before it"),
            ));
        };
        self.check_member_scope(t, scope, params)?;
        if let Some(tm) = self.class_templates.get_mut(t) {
            match kind {
                OutOfLine::Member => tm.members.push(item),
                OutOfLine::Static => tm.statics.push(item),
            }
        }
        for id in self.class_templates[t].instances.clone() {
            if let Some(i) = self.classes.iter().rposition(|c| c.id == id) {
                let saved = bind(&mut self.types, &self.classes[i].bindings.clone());
                let done = self.instantiate_uses(item).and_then(|()| match kind {
                    OutOfLine::Member => self.attach_template_member(i, item),
                    OutOfLine::Static => self.static_definition(i, item),
                });
                restore(&mut self.types, saved);
                done?;
            }
        }
        Ok(())
    }

    /// Checks that `scope` (`name<T, N>` in `name<T, N>::f`) names class template `t` with its
    /// own parameters, declared as `params` (else it is a member of a specialisation).
    fn check_member_scope(
        &self,
        t: usize,
        scope: Node,
        params: &[(String, Option<IntTy>)],
    ) -> R<()> {
        let src = self.src;
        let tmpl = &self.class_templates[t];
        let args: Vec<&str> = scope
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default()
            .into_iter()
            .map(|a| src.text(a).trim())
            .collect();
        let own: Vec<&str> = tmpl.params.iter().map(|p| p.0.as_str()).collect();
        let same_params = params.len() == tmpl.params.len()
            && params.iter().zip(&tmpl.params).all(|(a, b)| a == b);
        if args != own || !same_params {
            let text = src.text(scope);
            return Err(src.unsupported(
                scope,
                &format!(
                    "member of `{text}` (an out-of-line member must repeat its class template's \
                     parameters with their names, `template <{}> ... {}<{}>::f`; \
                     specialisations are not supported)",
                    own.iter()
                        .zip(&tmpl.params)
                        .map(|(n, p)| match p.1 {
                            None => format!("typename {n}"),
                            Some(t) => format!("{} {n}", t.c_name()),
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    tmpl.name,
                    own.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// The name of an instance being defined (see [`Ctx::struct_body`]): its registration key,
/// its C++ spelling and its template's name.
pub(crate) struct Instance {
    pub(crate) key: String,
    pub(crate) shown: String,
    pub(crate) base: String,
}

/// Template parameter kinds by template name, as recorded in [`TypeEnv::templates`].
pub(crate) type TemplateKinds = HashMap<String, Vec<Option<IntTy>>>;
