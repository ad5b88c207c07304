//! Heap memory: `malloc`, `calloc`, `aligned_alloc`, `realloc`, `free` (C++ `new` / `delete`
//! are in `heap_cpp.rs`).
//!
//! **Objects.** Each allocation is an [`Instr::Alloc`] of a fresh object ([`ObjectKind`] says
//! who may free it), laid out as the cells of the type the result is *used as*: the pointee of
//! the declared pointer (`struct node *n = malloc(...)`), of the assignment's target, of a
//! cast (`(struct node *)malloc(...)`), of the parameter it is passed to or of the return type
//! of an inlined function. C gives `malloc`'s result no type; fensyn needs one to know which
//! cells are pointers and which are atomic, so a result used only as a `void *` is refused
//! with a message saying what to write. The object is named after its allocation site:
//! `malloc@12` (the function called and its line; `malloc@12:9` when another allocation on the
//! same line already has that name), its cells like a local object's (`malloc@12.next`, and
//! `malloc@12[3].next` for element 3 of an array).
//!
//! **Sizes.** The size in bytes (`sizeof` gives LP64 sizes, `sizeof.rs`) divided by the size of
//! the pointee is the number of elements: a constant, or an expression evaluated when the
//! allocation runs (`malloc(n * sizeof(int))`: `n` elements). A constant size that is not a
//! whole number of elements allocates the whole elements and the leading cells of the last
//! one that fit (`malloc(sizeof(int))` for a `struct node *` of an `int` and a pointer gives
//! the `int` only, so the pointer is out of bounds); a run-time size that is not a multiple is
//! undefined behaviour reported by a check. A size of 0 gives the null pointer.
//!
//! **Contents.** `malloc`, `aligned_alloc` and the new part of `realloc` are indeterminate
//! ([`Layout::indeterminate`]: reading a cell never written is a memory error); `calloc` is
//! zeroed. `realloc(p, size)` allocates a new object, copies the cells the two have in
//! common (counted at run time with [`Instr::ObjectCells`]) by a loop of plain loads and
//! stores, and frees `p`; `realloc(NULL, size)` is `malloc(size)`. Allocation never fails in
//! the model (as thread creation does not), so a null check of the result is always passed.
//! `free(p)` is an [`Instr::Free`]; the checker reports double, invalid and mismatched frees.

use super::sizeof::{cell_extents, size_align};
use super::{bin, strip_parens, FnLower, TExpr, R};
use crate::frontend::lower::sync::Initial;
use crate::frontend::types::{IntTy, Ty};
use crate::ir::{
    Addr, BinOp, CheckKind, Dealloc, Expr, Global, Instr, Layout, MemOrder, ObjectKind, Reg,
};
use tree_sitter::Node;

/// What the value being lowered is used as (see the module doc).
#[derive(Default)]
pub(super) struct State {
    /// The node (id) of an allocation's call and the pointee type its result is used as.
    expect: Option<(usize, Ty)>,
    /// The pointee type of an assignment's target, for its right-hand side.
    pending: Option<Ty>,
    /// Locals whose declaration is being lowered: in scope in their own initialiser
    /// (`struct node *n = malloc(sizeof *n)`), for `sizeof` only.
    pub(super) declaring: Vec<(String, Ty)>,
}

/// How a heap object starts.
#[derive(Clone, Copy)]
pub(super) struct Fill {
    pub(super) kind: ObjectKind,
    /// Its cells are indeterminate until written ([`Layout::indeterminate`]); else zero.
    pub(super) indeterminate: bool,
    /// How its synchronisation objects start.
    pub(super) how: Initial,
}

/// The number of elements an allocation has.
pub(super) enum Count {
    /// A constant number of whole elements, and then the number of leading cells of one more
    /// element that fit in the bytes left over.
    Const(i64, usize),
    /// Evaluated when the allocation runs.
    Runtime(Expr),
}

impl FnLower<'_, '_> {
    /// Records that the value `value` is used as a pointer to `to` (an allocation there takes
    /// `to` as its layout).
    pub(super) fn expect_pointee(&mut self, value: Node, to: &Ty) {
        self.heap.expect = Some((strip_parens(value).id(), to.clone()));
    }

    /// Sets (or clears) the pointee type of the assignment target being written, for
    /// [`Self::expect_pending`].
    pub(super) fn set_pending_pointee(&mut self, to: Option<Ty>) {
        self.heap.pending = to;
    }

    /// The right-hand side `value` of an assignment is used as its target's pointer type.
    pub(super) fn expect_pending(&mut self, value: Node) {
        if let Some(to) = self.heap.pending.take() {
            self.expect_pointee(value, &to);
        }
    }

    /// The C heap functions, in statement (`used` false) and expression position.
    pub(super) fn heap_call(
        &mut self,
        call: Node,
        name: &str,
        args: &[Node],
        used: bool,
    ) -> R<Option<TExpr>> {
        let src = self.src;
        let malloc = Fill {
            kind: ObjectKind::Malloc,
            indeterminate: true,
            how: Initial::Indeterminate,
        };
        let value = match name {
            "malloc" => {
                self.arity(call, name, args, 1)?;
                let to = self.alloc_type(call, name)?;
                let size = self.expr(args[0])?;
                self.heap_alloc(call, name, &to, size, malloc)?
            }
            "aligned_alloc" => {
                self.arity(call, name, args, 2)?;
                let to = self.alloc_type(call, name)?;
                self.expr(args[0])?;
                let size = self.expr(args[1])?;
                self.heap_alloc(call, name, &to, size, malloc)?
            }
            "calloc" => {
                self.arity(call, name, args, 2)?;
                let to = self.alloc_type(call, name)?;
                let n = self.expr(args[0])?;
                let size = self.expr(args[1])?;
                let zero = Fill {
                    indeterminate: false,
                    how: Initial::Zero,
                    ..malloc
                };
                self.heap_alloc(call, name, &to, bin(BinOp::Mul, n, size), zero)?
            }
            "realloc" => self.realloc(call, args, malloc)?,
            "free" if used => return Err(src.error(call, "`free` has no value")),
            "free" => {
                self.arity(call, name, args, 1)?;
                let (ptr, _) = self.ptr_value(args[0])?;
                self.emit(Instr::Free {
                    ptr,
                    by: Dealloc::Free,
                });
                return Ok(Some((Expr::Const(0), IntTy::I32)));
            }
            _ => return Ok(None),
        };
        Ok(Some((Expr::Reg(value), IntTy::I64)))
    }

    /// The pointee type the result of allocation `call` (of function `name`) is used as.
    fn alloc_type(&mut self, call: Node, name: &str) -> R<Ty> {
        let src = self.src;
        let expected = self.heap.expect.take().filter(|(id, _)| *id == call.id());
        let hint = "the objects' type: declare the pointer with it (`struct node *p = \
                    malloc(sizeof *p);`), assign the result to such a pointer, or cast it \
                    (`(struct node *)malloc(...)`)";
        match expected {
            Some((_, Ty::Void)) => Err(src.unsupported(
                call,
                &format!(
                    "`{name}` whose result is used as a `void *` (fensyn lays the object out \
                     by {hint})"
                ),
            )),
            Some((_, ty)) => Ok(ty),
            None => Err(src.unsupported(
                call,
                &format!(
                    "`{name}` whose result is not used as a typed pointer (fensyn lays the \
                     object out by {hint})"
                ),
            )),
        }
    }

    /// Allocates a heap object of elements of type `to` for `size` bytes (see the module
    /// doc); returns the register holding its address.
    pub(super) fn heap_alloc(
        &mut self,
        at: Node,
        func: &str,
        to: &Ty,
        size: Expr,
        fill: Fill,
    ) -> R<Reg> {
        let src = self.src;
        let elem = size_align(&self.cx.types, to).0;
        if elem == 0 || self.cx.types.size(to) == 0 {
            let t = to.describe(&self.cx.types);
            return Err(src.error(at, &format!("`{func}` of objects of `{t}`, which is empty")));
        }
        let count = match size {
            Expr::Const(s) if s < 0 => {
                return Err(src.error(at, &format!("`{func}` of a negative size ({s})")));
            }
            Expr::Const(s) => {
                Count::Const(s / elem as i64, self.cells_fitting(to, s % elem as i64))
            }
            size => Count::Runtime(self.runtime_count(func, to, size, elem)),
        };
        self.alloc_elements(at, func, to, count, fill)
    }

    /// Allocates `count` elements of type `to` (see [`Count`]).
    pub(super) fn alloc_elements(
        &mut self,
        at: Node,
        func: &str,
        to: &Ty,
        count: Count,
        fill: Fill,
    ) -> R<Reg> {
        let src = self.src;
        let name = self.heap_object_name(at, func);
        let mut cells = Vec::new();
        let count = match count {
            Count::Const(0, 0) => Some(Expr::Const(0)),
            Count::Const(k, 0) => {
                self.cx.flatten(&name, to, at, fill.how, &mut cells)?;
                (k != 1).then_some(Expr::Const(k))
            }
            Count::Const(k, part) => {
                let Ok(k) = usize::try_from(k) else {
                    return Err(src.error(at, "allocation too large"));
                };
                let whole = k.saturating_mul(self.cx.types.size(to));
                if whole > 1 << 16 {
                    return Err(src.unsupported(at, "object with more than 65536 cells"));
                }
                let arr = Ty::Array(Box::new(to.clone()), k + 1);
                self.cx.flatten(&name, &arr, at, fill.how, &mut cells)?;
                cells.truncate(whole + part);
                None
            }
            Count::Runtime(e) => {
                self.cx.flatten(&name, to, at, fill.how, &mut cells)?;
                Some(e)
            }
        };
        if cells.is_empty() {
            // A constant size of 0: the null pointer (the layout is never allocated).
            self.cx.flatten(&name, to, at, fill.how, &mut cells)?;
        }
        let span = src.span(at);
        let layout = Layout {
            name,
            kind: fill.kind,
            cells: cells
                .into_iter()
                .map(|c| Global {
                    name: c.name,
                    atomic: c.ty.is_atomic(),
                    init: c.init,
                    sync: c.sync,
                    span,
                })
                .collect(),
            indeterminate: fill.indeterminate,
        };
        self.cx.layouts.push(layout);
        let r = self.new_temp(IntTy::I64);
        self.set_pointee(r, to.clone());
        self.emit(Instr::Alloc {
            dst: r,
            layout: self.cx.layouts.len() - 1,
            count,
        });
        Ok(r)
    }

    /// `malloc@12`, or `malloc@12:9` when another allocation site on line 12 has that name.
    fn heap_object_name(&self, at: Node, func: &str) -> String {
        let pos = at.start_position();
        let name = format!("{func}@{}", pos.row + 1);
        let span = self.src.span(at);
        let other_site = self
            .cx
            .layouts
            .iter()
            .any(|l| l.name == name && l.cells.first().is_some_and(|c| c.span != span));
        if other_site {
            format!("{name}:{}", pos.column + 1)
        } else {
            name
        }
    }

    /// The number of leading cells of a `to` that lie within its first `bytes` bytes.
    fn cells_fitting(&self, to: &Ty, bytes: i64) -> usize {
        let mut ext = Vec::new();
        cell_extents(&self.cx.types, to, 0, &mut ext);
        ext.iter()
            .take_while(|(off, size)| (off + size) as i64 <= bytes)
            .count()
    }

    /// `size / elem` for a size known at run time, with a check that it is a whole number of
    /// elements (none when it is visibly so: `n * sizeof(T)`).
    fn runtime_count(&mut self, func: &str, to: &Ty, size: Expr, elem: usize) -> Expr {
        let e = elem as i64;
        if e == 1 {
            return size;
        }
        if let Expr::Binary(BinOp::Mul, a, b) = &size {
            match (&**a, &**b) {
                (x, Expr::Const(k)) | (Expr::Const(k), x) if k % e == 0 => {
                    return bin(BinOp::Mul, x.clone(), Expr::Const(k / e));
                }
                _ => {}
            }
        }
        let t = to.describe(&self.cx.types);
        self.emit(Instr::Check {
            cond: bin(
                BinOp::Eq,
                bin(BinOp::Rem, size.clone(), Expr::Const(e)),
                Expr::Const(0),
            ),
            kind: CheckKind::Ub,
            message: format!(
                "`{func}` of a size that is not a multiple of sizeof({t}) ({elem} bytes)"
            ),
        });
        bin(BinOp::Div, size, Expr::Const(e))
    }

    /// `realloc(p, size)` (see the module doc): the new object's register.
    fn realloc(&mut self, call: Node, args: &[Node], fill: Fill) -> R<Reg> {
        self.arity(call, "realloc", args, 2)?;
        let to = self.alloc_type(call, "realloc")?;
        let p = self.any_value(args[0])?;
        let old = self.new_temp(IntTy::I64);
        self.emit(Instr::Assign { dst: old, val: p });
        let size = self.expr(args[1])?;
        let new = self.heap_alloc(call, "realloc", &to, size, fill)?;
        let [have, want, n, i, v] = [(); 5].map(|_| self.new_temp(IntTy::I64));
        self.emit(Instr::ObjectCells {
            dst: have,
            ptr: Expr::Reg(old),
        });
        self.emit(Instr::ObjectCells {
            dst: want,
            ptr: Expr::Reg(new),
        });
        // n = min(have, want)
        let less = bin(BinOp::Lt, Expr::Reg(have), Expr::Reg(want));
        let not_less = bin(BinOp::Ge, Expr::Reg(have), Expr::Reg(want));
        let val = bin(
            BinOp::Add,
            bin(BinOp::Mul, less, Expr::Reg(have)),
            bin(BinOp::Mul, not_less, Expr::Reg(want)),
        );
        self.emit(Instr::Assign { dst: n, val });
        self.emit(Instr::Assign {
            dst: i,
            val: Expr::Const(0),
        });
        let top = self.body.len();
        let exit = self.emit(Instr::BranchIfZero {
            cond: bin(BinOp::Lt, Expr::Reg(i), Expr::Reg(n)),
            target: 0,
        });
        let at = |r: Reg| Addr::Computed {
            ptr: bin(BinOp::Add, Expr::Reg(r), Expr::Reg(i)),
            lo: 0,
            hi: super::memory::ALL_LOCATIONS,
        };
        self.emit(Instr::Load {
            dst: v,
            loc: at(old),
            order: MemOrder::NonAtomic,
        });
        self.emit(Instr::Store {
            loc: at(new),
            val: Expr::Reg(v),
            order: MemOrder::NonAtomic,
        });
        self.emit(Instr::Assign {
            dst: i,
            val: bin(BinOp::Add, Expr::Reg(i), Expr::Const(1)),
        });
        self.emit(Instr::Jump { target: top });
        let end = self.body.len();
        self.patch(exit, end);
        self.emit(Instr::Free {
            ptr: Expr::Reg(old),
            by: Dealloc::Free,
        });
        Ok(new)
    }
}
