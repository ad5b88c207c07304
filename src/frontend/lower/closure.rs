//! The captures of a C++ thread lambda that cannot travel as the thread's one value: several
//! locals, or any captured by reference (`std::thread t([&] { ... });`). The creating thread
//! allocates a closure object — one 64-bit cell per capture, like the lambda object C++
//! copies into the new thread — and stores in it each value captured by value and the address
//! of each object captured by reference; the object's address is the thread's argument. The
//! new thread loads every cell first and binds the names: a value to a register, an address to
//! the object it points to, so that the lambda's accesses are the enclosing function's object's
//! (a local captured by reference is in memory: `locals::taken_names` counts it as
//! address-taken). The closure object is not ended when its creator returns: the thread owns
//! its copy.

use super::{bin, Binding, FnLower, R};
use crate::frontend::types::{IntTy, Ty};
use crate::frontend::{CellSpec, Src};
use crate::ir::{Addr, BinOp, Expr, Instr, MemOrder, Reg};
use tree_sitter::Node;

/// How a lambda captures the enclosing locals by default.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum DefaultCapture {
    None,
    Copy,
    Ref,
}

/// The capture list `[...]` of `lambda`: its default capture and the names it captures
/// explicitly, each with whether by reference (`&x`). `this` and init captures are refused.
pub(super) fn capture_list<'t>(
    src: &Src,
    lambda: Node<'t>,
) -> R<(DefaultCapture, Vec<(Node<'t>, bool)>)> {
    let mut default = DefaultCapture::None;
    let mut names = Vec::new();
    let Some(spec) = lambda.child_by_field_name("captures") else {
        return Ok((default, names));
    };
    let mut by_ref = false;
    let mut c = spec.walk();
    for part in spec.children(&mut c) {
        match part.kind() {
            "[" | "]" | "," | "comment" => {}
            "&" => by_ref = true,
            "lambda_default_capture" => {
                default = if src.text(part).trim() == "&" {
                    DefaultCapture::Ref
                } else {
                    DefaultCapture::Copy
                };
            }
            "identifier" => {
                names.push((part, by_ref));
                by_ref = false;
            }
            "this" => {
                return Err(src.unsupported(part, "capture of `this` (classes are not supported)"))
            }
            "lambda_capture_initializer" => {
                return Err(src.unsupported(part, "init capture"));
            }
            _ => {
                let text = src.text(part);
                return Err(src.unsupported(part, &format!("lambda capture `{text}`")));
            }
        }
    }
    Ok((default, names))
}

/// A local of the enclosing function that a thread lambda captures.
#[derive(Clone)]
pub(super) enum Capture<'a> {
    /// By value, from a register.
    Value(&'a str, Reg),
    /// By reference: the register holding the address of the object in memory, and its type.
    Ref(&'a str, Reg, Ty),
    /// By value, of a scalar in memory (its address and type): its value at the creation.
    Copy(&'a str, Reg, Ty),
}

/// How the new thread binds a closure cell's name.
pub(super) enum ClosureCell {
    /// A value of this type (pointing to this type, for a pointer).
    Value(String, IntTy, Option<Ty>),
    /// The address of an object of this type.
    Ref(String, Ty),
}

/// The address of cell `k` of the `n`-cell closure object whose address `obj` holds.
fn cell(obj: Reg, k: usize, n: usize) -> Addr {
    Addr::Within {
        ptr: bin(BinOp::Add, Expr::Reg(obj), Expr::Const(k as i64)),
        base: Expr::Reg(obj),
        len: n,
    }
}

impl<'a> FnLower<'_, 'a> {
    /// In the creating thread: allocates and fills the closure object of `lambda` (thread
    /// function `name`) for `caps`; its address and how the new thread binds each cell.
    pub(super) fn closure_object(
        &mut self,
        lambda: Node,
        name: &str,
        caps: &[Capture<'a>],
    ) -> R<(Expr, Vec<ClosureCell>)> {
        let src = self.src;
        let n = caps.len();
        let word = Ty::Int {
            ty: IntTy::I64,
            atomic: false,
        };
        let specs =
            caps.iter()
                .map(|c| {
                    let (Capture::Value(cname, _)
                    | Capture::Ref(cname, ..)
                    | Capture::Copy(cname, ..)) = c;
                    CellSpec {
                        name: format!("{name}::{cname}"),
                        ty: word.clone(),
                        init: 0,
                        sync: None,
                    }
                })
                .collect();
        let ty = Ty::Array(Box::new(word), n);
        let span = src.span(lambda);
        let Binding::LocalObject(obj, _) =
            self.allocate((&format!("{name}::captures"), &ty), specs, &[], false, span)
        else {
            return Err(src.internal("closure object"));
        };
        let mut cells = Vec::new();
        for (k, c) in caps.iter().enumerate() {
            let (val, bind) = match c {
                Capture::Value(cname, r) => {
                    let ty = self.reg_tys.get(*r).copied().unwrap_or(IntTy::I64);
                    let to = self.reg_ptr.get(*r).cloned().flatten();
                    (Expr::Reg(*r), ClosureCell::Value(cname.to_string(), ty, to))
                }
                Capture::Ref(cname, r, ty) => (
                    Expr::Reg(*r),
                    ClosureCell::Ref(cname.to_string(), ty.clone()),
                ),
                Capture::Copy(cname, r, ty) => {
                    let place = self.local_place_of(*r, ty.clone());
                    let v = self.load_place(&place, MemOrder::NonAtomic);
                    let to = match ty {
                        Ty::Ptr { to, .. } => Some((**to).clone()),
                        _ => None,
                    };
                    (v, ClosureCell::Value(cname.to_string(), ty.int_ty(), to))
                }
            };
            self.emit(Instr::Store {
                loc: cell(obj, k, n),
                val,
                order: MemOrder::NonAtomic,
            });
            cells.push(bind);
        }
        Ok((Expr::Reg(obj), cells))
    }

    /// In the new thread, first: its parameter is the closure object's address; loads every
    /// cell and binds its name.
    pub(super) fn bind_closure(&mut self, cells: &[ClosureCell]) {
        let p = self.new_reg("%closure", IntTy::I64);
        self.param = Some(p);
        self.param_used = true;
        let n = cells.len();
        for (k, c) in cells.iter().enumerate() {
            let (cname, ty) = match c {
                ClosureCell::Value(cname, ty, _) => (cname, *ty),
                ClosureCell::Ref(cname, _) => (cname, IntTy::I64),
            };
            let r = self.new_reg(cname, ty);
            self.emit(Instr::Load {
                dst: r,
                loc: cell(p, k, n),
                order: MemOrder::NonAtomic,
            });
            let binding = match c {
                ClosureCell::Value(_, _, to) => {
                    if let Some(to) = to {
                        self.set_pointee(r, to.clone());
                    }
                    Binding::Var(r)
                }
                ClosureCell::Ref(_, ty) => {
                    self.local_tys.push(ty.clone());
                    Binding::LocalObject(r, self.local_tys.len() - 1)
                }
            };
            self.bind(cname, binding);
        }
    }
}
