//! The thread IR: what the front end produces and every later stage consumes.
//!
//! A [`Program`] is a set of globals (shared memory locations) and functions. Each function is a
//! flat list of [`Instr`]uctions executed by a per-thread interpreter with local registers. Memory
//! is touched only by [`Instr::Load`], [`Instr::Store`], [`Instr::Rmw`], [`Instr::Cas`] and
//! [`Instr::Fence`]; expressions
//! ([`Expr`]) are pure and act on registers only, so the front end lowers every memory access in
//! an expression to a `Load` into a temporary register first.
//!
//! Every instruction belongs to a source statement ([`Stmt`]) whose [`Span`] the rewriter and the
//! reports use. Fence **slots** are explicit: the front end emits an [`Instr::Slot`] marker at every
//! point where a fence could be written in the source (before each statement and at the end of each
//! block). The interpreter records where each marker was passed, so a later stage can place a
//! candidate fence at exactly the point a source edit would put it — the rewriter never guesses.
//!
//! **Architecture invariant:** one slot per source place (`merge_duplicate_slots`); the IR knows
//! nothing about tree-sitter; spans are plain byte and
//! line/column positions into the original source text.

use std::fmt;

/// A source range: bytes `[start, end)` plus the 1-based line and column of `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub column: usize,
}

/// C11 memory orders, plus `NonAtomic` for plain accesses.
///
/// The lattice of shared/docs/memory-models.md §1: `na ⊏ rlx ⊏ {acq, rel} ⊏ acq_rel ⊏ sc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemOrder {
    NonAtomic,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemOrder {
    /// `self ⊒ rel`.
    pub fn is_release(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    /// `self ⊒ acq`.
    pub fn is_acquire(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    pub fn is_sc(self) -> bool {
        self == MemOrder::SeqCst
    }
    pub fn is_atomic(self) -> bool {
        self != MemOrder::NonAtomic
    }
    /// The partial order of the lattice: `self ⊑ other`.
    pub fn le(self, other: MemOrder) -> bool {
        use MemOrder::*;
        match (self, other) {
            (a, b) if a == b => true,
            (NonAtomic, _) => true,
            (Relaxed, b) => b != NonAtomic,
            (Acquire | Release, AcqRel | SeqCst) => true,
            (AcqRel, SeqCst) => true,
            _ => false,
        }
    }
    /// The least upper bound in the lattice (`acq ⊔ rel = acq_rel`).
    pub fn join(self, other: MemOrder) -> MemOrder {
        if self.le(other) {
            other
        } else if other.le(self) {
            self
        } else {
            MemOrder::AcqRel
        }
    }
    /// Weight of a fence of this order (thesis Definition 9): rel = acq = 1, acq_rel = 2, sc = 3.
    pub fn fence_weight(self) -> u32 {
        match self {
            MemOrder::NonAtomic | MemOrder::Relaxed => 0,
            MemOrder::Acquire | MemOrder::Release => 1,
            MemOrder::AcqRel => 2,
            MemOrder::SeqCst => 3,
        }
    }
    /// The suffix used in C spellings: `memory_order_<name>`.
    pub fn c_name(self) -> &'static str {
        match self {
            MemOrder::NonAtomic => "non_atomic",
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }
    /// The short name used in reports: `na`, `rlx`, `acq`, `rel`, `acq_rel`, `sc`.
    pub fn short(self) -> &'static str {
        match self {
            MemOrder::NonAtomic => "na",
            MemOrder::Relaxed => "rlx",
            MemOrder::Acquire => "acq",
            MemOrder::Release => "rel",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "sc",
        }
    }
    /// Fence orders, weakest first (the values a fence slot can take).
    pub const FENCE_ORDERS: [MemOrder; 4] = [
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
        MemOrder::SeqCst,
    ];
}

impl fmt::Display for MemOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}

/// Index into [`Program::globals`].
pub mod spin;

pub type Loc = usize;
/// Index into [`Function::reg_names`]: a local register of one function activation.
pub type Reg = usize;
/// Index into [`Program::functions`].
pub type FuncId = usize;
/// Index into [`Program::stmts`].
pub type StmtId = usize;
/// Index into [`Program::slots`].
pub type SlotId = usize;

/// The pointer value that addresses location `loc`: `loc + 1`, so that the null pointer is 0.
///
/// Pointers are plain integers in registers and in memory; `&x` in the source is the constant
/// `pointer_to(x)`, and `a + i` on an array pointer moves by `i` cells.
pub fn pointer_to(loc: Loc) -> i64 {
    loc as i64 + 1
}

/// The location a memory instruction accesses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    /// A location known from the program text (a global, a struct field, `a[2]`).
    Fixed(Loc),
    /// A location computed when the instruction runs (an element `a[i]`, a dereference `*p`):
    /// `ptr` evaluates to a pointer value (see [`pointer_to`]); the location it addresses must
    /// lie in `[lo, hi)` (the array, or every location for a pointer: `hi` is then
    /// `usize::MAX`, which also reaches the locations allocated at run time). Anything else
    /// (null, out of bounds) is undefined behaviour, reported as a bug of kind `Ub`. Whether
    /// the access is atomic is the instruction's business, not the location's (see
    /// [`Global::atomic`]).
    Computed { ptr: Expr, lo: Loc, hi: Loc },
    /// A location inside an object allocated at run time ([`Instr::Alloc`]): `ptr` must
    /// address one of the `len` cells starting at the pointer value `base` (the object, or the
    /// array of it being indexed); the same checks as [`Addr::Computed`] otherwise.
    Within { ptr: Expr, base: Expr, len: usize },
}

/// Why a computed address is invalid (undefined behaviour in C).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrError {
    DivisionByZero,
    Null,
    OutOfBounds { ptr: i64, lo: Loc, hi: Loc },
}

impl fmt::Display for AddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrError::DivisionByZero => f.write_str("division by zero"),
            AddrError::Null => f.write_str("null pointer dereference"),
            AddrError::OutOfBounds { ptr, lo, hi } if *hi < usize::MAX / 2 => {
                let index = ptr - pointer_to(*lo);
                write!(
                    f,
                    "out-of-bounds access (index {index} of {} elements)",
                    hi - lo
                )
            }
            AddrError::OutOfBounds { .. } => {
                f.write_str("invalid pointer (it addresses no object of the program)")
            }
        }
    }
}

impl From<Loc> for Addr {
    fn from(loc: Loc) -> Addr {
        Addr::Fixed(loc)
    }
}

impl Addr {
    /// The location, given the registers of the accessing thread and the number of locations
    /// that exist (`nlocs`: the globals and the cells allocated so far). Any access may go to
    /// any location: atomicity belongs to the access.
    pub fn resolve(&self, regs: &[i64], nlocs: usize) -> Result<Loc, AddrError> {
        let (p, lo, hi) = match self {
            Addr::Fixed(l) => return Ok(*l),
            Addr::Computed { ptr, lo, hi } => {
                let p = ptr.eval(regs).map_err(|_| AddrError::DivisionByZero)?;
                (p, *lo as i64, (*hi).min(i64::MAX as usize) as i64)
            }
            Addr::Within { ptr, base, len } => {
                let p = ptr.eval(regs).map_err(|_| AddrError::DivisionByZero)?;
                let b = base.eval(regs).map_err(|_| AddrError::DivisionByZero)?;
                (p, b - 1, (b - 1).saturating_add(*len as i64))
            }
        };
        if p == 0 {
            return Err(AddrError::Null);
        }
        let l = p - 1;
        if l < lo.max(0) || l >= hi || l >= nlocs as i64 {
            return Err(AddrError::OutOfBounds {
                ptr: p,
                lo: lo.max(0) as Loc,
                hi: hi.max(0) as Loc,
            });
        }
        Ok(l as Loc)
    }

    /// The location if it is fixed.
    pub fn fixed(&self) -> Option<Loc> {
        match self {
            Addr::Fixed(l) => Some(*l),
            Addr::Computed { .. } | Addr::Within { .. } => None,
        }
    }
}

/// A shared memory location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    pub name: String,
    /// Declared `_Atomic`/`atomic_*` (true) or plain (false). Informative only: atomicity
    /// belongs to the access, as in RC11 — a plain access to an atomic object is non-atomic
    /// (it races if it races), and an atomic access (a GCC builtin) to a plain one is atomic.
    pub atomic: bool,
    /// Initial value (C zero-initialises globals without an initialiser).
    pub init: i64,
    /// A cell of a synchronisation object (mutex, rwlock, barrier, condition variable, ...):
    /// what the checker needs to tell a deadlock from a merely blocked execution. The values
    /// the front end keeps in it are documented in `frontend/lower/sync.rs`.
    pub sync: Option<SyncCell>,
    pub span: Span,
}

/// The kind of synchronisation object a cell belongs to (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncKind {
    /// `pthread_mutex_t`, C11 `mtx_t`, `std::mutex`, `std::recursive_mutex`.
    Mutex,
    /// `pthread_spinlock_t`.
    Spinlock,
    /// `pthread_rwlock_t`, `std::shared_mutex`.
    RwLock,
    /// `pthread_barrier_t`.
    Barrier,
    /// `pthread_cond_t`, C11 `cnd_t`, `std::condition_variable`.
    CondVar,
}

impl SyncKind {
    /// How messages name the kind: `mutex`, `barrier`, `condition variable`, ...
    pub fn noun(self) -> &'static str {
        match self {
            SyncKind::Mutex => "mutex",
            SyncKind::Spinlock => "spinlock",
            SyncKind::RwLock => "rwlock",
            SyncKind::Barrier => "barrier",
            SyncKind::CondVar => "condition variable",
        }
    }
}

/// What a thread's accesses to a synchronisation cell mean for deadlock detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncRole {
    /// A thread waits on it: a thread blocked (false `Assume`) whose last event is a read of
    /// this cell (a load or a failed compare-and-swap) that read the cell's mo-last write
    /// waits forever — no thread writes it any more — which is a deadlock. The front end only
    /// blocks on such a read when the value read keeps the thread waiting (a held lock word, an
    /// unfinished barrier round), never to retry.
    Wait,
    /// The signal counter of a condition variable: signals and broadcasts increment it
    /// (read-modify-writes). An `Acquire` **load** of it registers an untimed wait (the
    /// waiter reads it while it still holds the mutex): if that load read the mo-last write,
    /// no signal or broadcast comes after the wait began, and without a spurious wake-up the
    /// waiter sleeps forever — a lost wake-up, reported as a deadlock whether or not the
    /// execution goes on (the model lets the waiter wake spuriously). Timed waits read it
    /// `Relaxed`; since no write to it is a release, the `Acquire` only tags the read.
    Signals,
    /// Any other cell (state, counters): no rule.
    State,
}

/// A cell of a synchronisation object: see [`Global::sync`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SyncCell {
    pub kind: SyncKind,
    pub role: SyncRole,
    /// The object as the source names it (`m`, `locks[1]`, `s.cv`), for messages.
    pub object: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical and/or on pure operands (no short-circuit needed: operands have no effects).
    And,
    Or,
}

/// A pure integer expression over registers. Evaluation can fail only by division by zero.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(i64),
    Reg(Reg),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// Why evaluating an expression failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    DivisionByZero,
}

impl Expr {
    /// Evaluates with C `int` semantics widened to i64 (wrapping arithmetic).
    pub fn eval(&self, regs: &[i64]) -> Result<i64, EvalError> {
        Ok(match self {
            Expr::Const(c) => *c,
            Expr::Reg(r) => regs[*r],
            Expr::Unary(op, e) => {
                let v = e.eval(regs)?;
                match op {
                    UnOp::Neg => v.wrapping_neg(),
                    UnOp::Not => (v == 0) as i64,
                    UnOp::BitNot => !v,
                }
            }
            Expr::Binary(op, a, b) => {
                let x = a.eval(regs)?;
                let y = b.eval(regs)?;
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div => {
                        if y == 0 {
                            return Err(EvalError::DivisionByZero);
                        }
                        x.wrapping_div(y)
                    }
                    BinOp::Rem => {
                        if y == 0 {
                            return Err(EvalError::DivisionByZero);
                        }
                        x.wrapping_rem(y)
                    }
                    BinOp::Shl => x.wrapping_shl((y & 63) as u32),
                    BinOp::Shr => x.wrapping_shr((y & 63) as u32),
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    BinOp::Eq => (x == y) as i64,
                    BinOp::Ne => (x != y) as i64,
                    BinOp::Lt => (x < y) as i64,
                    BinOp::Le => (x <= y) as i64,
                    BinOp::Gt => (x > y) as i64,
                    BinOp::Ge => (x >= y) as i64,
                    BinOp::And => (x != 0 && y != 0) as i64,
                    BinOp::Or => (x != 0 || y != 0) as i64,
                }
            }
        })
    }
}

/// The integer type an RMW's new value is reduced to: C's atomic arithmetic wraps silently
/// (C11 7.17.7.5: two's complement, no undefined overflow), so `fetch_add` on an `unsigned`
/// at `UINT_MAX` writes 0 and on an `int` at `INT_MAX` writes `INT_MIN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Width {
    /// 1 to 64.
    pub bits: u8,
    pub signed: bool,
}

impl Width {
    /// 64-bit values: no reduction beyond the machine's own.
    pub const FULL: Width = Width {
        bits: 64,
        signed: true,
    };

    /// `v` reduced modulo 2^bits into the type's range.
    pub fn wrap(self, v: i64) -> i64 {
        if self.bits >= 64 {
            return v;
        }
        let shift = 64 - u32::from(self.bits);
        if self.signed {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }
}

/// The operation of a read-modify-write: the new value is `op(old, operand)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// `atomic_exchange`: the new value is the operand.
    Xchg,
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// GCC's `__atomic_fetch_nand` / `__sync_fetch_and_nand`: the new value is
    /// `~(old & operand)`.
    Nand,
}

impl RmwOp {
    /// The value an RMW writes when it read `old`.
    pub fn apply(self, old: i64, operand: i64) -> i64 {
        match self {
            RmwOp::Xchg => operand,
            RmwOp::Add => old.wrapping_add(operand),
            RmwOp::Sub => old.wrapping_sub(operand),
            RmwOp::And => old & operand,
            RmwOp::Or => old | operand,
            RmwOp::Xor => old ^ operand,
            RmwOp::Nand => !(old & operand),
        }
    }
}

/// One IR instruction. `pc` values in jumps are indices into [`Function::body`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// `dst := load(loc, order)`; `order` is `NonAtomic` for a plain read of a global.
    Load {
        dst: Reg,
        loc: Addr,
        order: MemOrder,
    },
    /// `store(loc, val, order)`; `order` is `NonAtomic` for a plain write of a global.
    Store {
        loc: Addr,
        val: Expr,
        order: MemOrder,
    },
    /// Atomic read-modify-write (`atomic_exchange`, `atomic_fetch_add`, …): reads the old
    /// value into `dst` and writes `op(old, val)`, atomically (RC11 atomicity).
    Rmw {
        dst: Reg,
        loc: Addr,
        op: RmwOp,
        val: Expr,
        order: MemOrder,
        /// The location's integer type: the new value wraps to it.
        width: Width,
    },
    /// Compare-and-swap: reads the old value into `old`; if it equals `expected`, writes
    /// `desired` (an RMW with `order`) and sets `ok` to 1, else it is only a read with
    /// `fail_order` and `ok` is 0. The front end copies `old` into C's `expected` variable
    /// (a no-op on success, where they are equal).
    Cas {
        ok: Reg,
        old: Reg,
        loc: Addr,
        expected: Expr,
        desired: Expr,
        order: MemOrder,
        fail_order: MemOrder,
        /// `compare_exchange_weak`: may fail spuriously when the checker is asked to model
        /// that (`Limits::spurious_cas`).
        weak: bool,
    },
    /// `assume(cond)` / the exit condition of an await loop: when false, the thread blocks
    /// forever (the execution is reported as blocked, not as a bug).
    Assume { cond: Expr },
    /// Control enters loop `id` (an index unique in the program) from outside: its iteration
    /// count starts again at zero, so `--unroll` bounds each execution of the loop, not the
    /// iterations summed over every time the thread runs it.
    LoopEnter { id: usize },
    /// An iteration of loop `id` starts (after its condition held, or at the top of a
    /// `do` body): past the unroll bound the thread is cut and the bound is reported.
    LoopIter { id: usize },
    /// A fence written in the program (`atomic_thread_fence`). Its statement is what a fix may
    /// strengthen.
    Fence { order: MemOrder },
    /// `dst := val` on registers only.
    Assign { dst: Reg, val: Expr },
    /// `assert(cond)`; `text` is the source text of `cond`, for messages.
    Assert { cond: Expr, text: String },
    /// A check the front end adds for the user's program (not an `assert` the user wrote):
    /// when `cond` evaluates to zero the thread stops with a bug of `kind` saying `message`
    /// (`abort()`, misuse of a synchronisation object, ...).
    Check {
        cond: Expr,
        kind: CheckKind,
        message: String,
    },
    /// Start a thread running `func` with `arg` in its parameter register (if it has one); the new
    /// thread's id is written to `dst` when present (the `pthread_t` handle).
    Spawn {
        func: FuncId,
        arg: Expr,
        dst: Option<Reg>,
    },
    /// Wait for the thread whose id `tid` evaluates to; `dst` receives the value it returned
    /// (its [`Function::result`] register, 0 if it has none): `pthread_join(t, &res)`.
    Join { tid: Expr, dst: Option<Reg> },
    /// `exit(n)`: the program ends. The thread stops here; the other threads may still have
    /// run any part of their code before, which the explorer covers by letting them run on (no
    /// event of theirs is hb-after an exit), and an execution with an exit is complete however
    /// its other threads ended (blocked, waiting for a join).
    Exit,
    /// Allocates a fresh object of layout `layout` ([`Program::layouts`]), `count` times its
    /// cells (an array of `count` elements, evaluated when the instruction runs; `None`: one):
    /// new locations, one per cell, each starting with a non-atomic write of the cell's
    /// initial value by this thread (an event: other threads see the object only through what
    /// this thread publishes). `dst :=` the pointer to its first cell. Used for the local
    /// objects of a function that must be in memory (arrays, structs, variables whose address
    /// is taken): each time the declaration runs, a new object; and for heap objects
    /// (`malloc`, `new`: [`Layout::kind`]). A count of 0 gives the null pointer (C allows
    /// `malloc(0)` to), a negative one or more than [`MAX_OBJECT_CELLS`] cells is an error of
    /// the execution.
    Alloc {
        dst: Reg,
        layout: usize,
        count: Option<Expr>,
    },
    /// Ends the lifetime of the object allocated by an [`Instr::Alloc`] that `ptr` points to
    /// the start of (nothing when `ptr` is 0): an event after which any access to the
    /// object's cells is a bug — an access hb-after it uses the object after its end, an access
    /// unordered with it races with its end. `by` says who ends it: a function's local objects
    /// going out of scope (its return), or `free`/`delete`/`delete[]`, which must be given the
    /// start of a live heap object allocated by the matching function (a memory error
    /// otherwise: invalid free, double free).
    Free { ptr: Expr, by: Dealloc },
    /// `dst :=` the number of cells from the location `ptr` points to up to the end of its
    /// allocated object (0 for the null pointer or a location not allocated at run time):
    /// what `realloc` copies. Local: no event.
    ObjectCells { dst: Reg, ptr: Expr },
    /// `dst :=` any value in `lo ..= hi` (`__VERIFIER_nondet_int()`): every value is
    /// explored, each an event of its own (a choice the execution records, so that a revisit
    /// replays it).
    Nondet { dst: Reg, lo: i64, hi: i64 },
    /// `dst :=` the id of the running thread (`pthread_self()`; main is 0, a spawned thread
    /// the value [`Instr::Spawn`] gave its handle). Local: no event.
    ThreadId { dst: Reg },
    /// Continue at `target` when `cond` evaluates to zero.
    BranchIfZero { cond: Expr, target: usize },
    /// Continue at `target`.
    Jump { target: usize },
    /// Fence slot marker: a point where a fence may be inserted in the source. No effect.
    Slot(SlotId),
    /// A call nested deeper than the recursion bound ([`PpOptions::recursion`]): the thread
    /// stops here, cut at the bound like a loop past `--unroll` (the execution is reported
    /// as cut, and the exploration as incomplete).
    Cut,
    /// End this thread.
    Return,
}

impl Instr {
    /// For a memory access or fence: whether every order it has (both of a CAS) is seq_cst;
    /// `None` for other instructions.
    pub fn seq_cst(&self) -> Option<bool> {
        match self {
            Instr::Load { order, .. }
            | Instr::Store { order, .. }
            | Instr::Rmw { order, .. }
            | Instr::Fence { order } => Some(order.is_sc()),
            Instr::Cas {
                order, fail_order, ..
            } => Some(order.is_sc() && fail_order.is_sc()),
            // An allocation's first writes are plain.
            Instr::Alloc { .. } => Some(false),
            _ => None,
        }
    }

    /// The address of a memory access and whether the access is atomic (an RMW or CAS always
    /// is; a load or store when its order is not `NonAtomic`); `None` for other instructions.
    pub fn access(&self) -> Option<(&Addr, bool)> {
        match self {
            Instr::Load { loc, order, .. } | Instr::Store { loc, order, .. } => {
                Some((loc, order.is_atomic()))
            }
            Instr::Rmw { loc, .. } | Instr::Cas { loc, .. } => Some((loc, true)),
            _ => None,
        }
    }
}

/// The kind of bug an [`Instr::Check`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// The program says it failed: `abort()`, `__VERIFIER_error()`, an always-false
    /// assertion-like call. Reported like a failed assertion.
    Abort,
    /// A synchronisation object used against its contract (locking a destroyed mutex,
    /// unlocking one the thread does not hold, ...).
    Misuse,
    /// Undefined behaviour found by a check (an invalid thread handle, ...).
    Ub,
}

/// What kind of source statement a [`Stmt`] is (for reports and slot placement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// Touches shared memory (an atomic or plain access of a global).
    Access,
    /// An `atomic_thread_fence` written by the user.
    Fence,
    /// Thread creation or join.
    Thread,
    /// Only local computation, `assert`s on locals, `return`, declarations.
    Local,
}

/// A source statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub func: FuncId,
    pub kind: StmtKind,
    pub span: Span,
    /// For a user fence: the span of its memory-order argument (what strengthening replaces).
    pub order_span: Option<Span>,
}

/// Where in the source a slot is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotPlace {
    /// Immediately before statement `stmt`.
    Before { stmt: StmtId },
    /// At the end of a block, after its last statement `after` (if any), before the closing
    /// brace whose span is `close`.
    BlockEnd { after: Option<StmtId>, close: Span },
}

/// A program point where a fence can be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The function whose body first holds a marker of this slot (an inlined callee's slots
    /// are also passed in its callers, see [`Program::merge_duplicate_slots`]).
    pub func: FuncId,
    pub place: SlotPlace,
}

/// A function: a thread body, `main`, or (later) an inlined helper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub span: Span,
    /// The register that receives the thread argument, if the function uses it.
    pub param: Option<Reg>,
    /// The register holding the thread's result when it ends (`return v;`,
    /// `pthread_exit(v)`), read by a [`Instr::Join`] with a `dst`; `None` when the function
    /// never sets it.
    pub result: Option<Reg>,
    /// Names of the registers (locals and front-end temporaries such as `%t3`).
    pub reg_names: Vec<String>,
    pub body: Vec<Instr>,
    /// `stmt_of[pc]` is the statement instruction `pc` belongs to.
    pub stmt_of: Vec<StmtId>,
}

/// The source language a program was written in. The IR itself is the same for both; the
/// rewriter needs it to spell fences and to re-parse the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Lang {
    #[default]
    C,
    Cpp,
}

impl Lang {
    /// By file extension: `.cpp .cc .cxx .c++ .hpp .hh .C` are C++, everything else is C.
    pub fn from_path(path: &std::path::Path) -> Lang {
        match path.extension().and_then(|e| e.to_str()) {
            Some("cpp" | "cc" | "cxx" | "c++" | "hpp" | "hh" | "C") => Lang::Cpp,
            _ => Lang::C,
        }
    }
}

/// A language standard (`-std=c11`, `-std=gnu++17`): the language, and the value of
/// `__STDC_VERSION__` (C; `None` for C90, which has none) or `__cplusplus` (C++).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LangStd {
    pub lang: Lang,
    pub version: Option<i64>,
}

impl LangStd {
    /// fensyn's default standard of `lang`: C17 or C++17.
    pub fn default_for(lang: Lang) -> LangStd {
        LangStd {
            lang,
            version: Some(if lang == Lang::Cpp { 201_703 } else { 201_710 }),
        }
    }

    /// The standard GCC and Clang name `name` (`c11`, `gnu17`, `c++20`, `iso9899:1999`, ...).
    pub fn from_name(name: &str) -> Option<LangStd> {
        let cpp = |v| LangStd {
            lang: Lang::Cpp,
            version: Some(v),
        };
        let c = |v| LangStd {
            lang: Lang::C,
            version: v,
        };
        let base = name
            .strip_prefix("gnu")
            .map_or_else(|| name.strip_prefix('c'), Some)
            .filter(|_| !name.starts_with("iso"));
        Some(match (name, base) {
            ("ansi" | "iso9899:1990", _) | (_, Some("89" | "90")) => c(None),
            ("iso9899:199409", _) => c(Some(199_409)),
            ("iso9899:1999" | "iso9899:199x", _) | (_, Some("99" | "9x")) => c(Some(199_901)),
            ("iso9899:2011", _) | (_, Some("11" | "1x")) => c(Some(201_112)),
            ("iso9899:2017" | "iso9899:2018", _) | (_, Some("17" | "18")) => c(Some(201_710)),
            ("iso9899:2024", _) | (_, Some("2x" | "23")) => c(Some(202_311)),
            (_, Some("2y" | "2c")) => c(Some(202_400)),
            (_, Some("++98" | "++03")) => cpp(199_711),
            (_, Some("++11" | "++0x")) => cpp(201_103),
            (_, Some("++14" | "++1y")) => cpp(201_402),
            (_, Some("++17" | "++1z")) => cpp(201_703),
            (_, Some("++20" | "++2a")) => cpp(202_002),
            (_, Some("++23" | "++2b")) => cpp(202_302),
            (_, Some("++26" | "++2c")) => cpp(202_400),
            _ => return None,
        })
    }
}

/// A whole program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Program {
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
    pub main: FuncId,
    pub stmts: Vec<Stmt>,
    pub slots: Vec<Slot>,
    /// Things the front end accepted but wants the user to know (e.g. an ignored `printf`).
    pub notes: Vec<Note>,
    /// The language of the source (how the rewriter spells fences).
    pub lang: Lang,
    /// Macros given on the command line (`-D NAME=VALUE`), in order: a source rewritten with
    /// fences is parsed again with the same ones.
    pub defines: Vec<(String, i64)>,
    /// The objects [`Instr::Alloc`] allocates, by layout index.
    pub layouts: Vec<Layout>,
    /// How the source was preprocessed, and the headers and macro uses its spans point into.
    pub sources: Sources,
    /// Loops whose bound the source sets and accepts (`// fensyn: unroll N`), by loop id: the
    /// loop is cut after N iterations whatever `--unroll` says, and an execution cut there
    /// does not make the exploration incomplete.
    pub loop_bounds: std::collections::BTreeMap<usize, u32>,
}

/// The preprocessor's options for a translation unit (`-I`, `-D NAME=TEXT`, `-U`); a source
/// rewritten with fences is preprocessed again with the same ones.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PpOptions {
    pub include_dirs: Vec<std::path::PathBuf>,
    /// Macros with any replacement text (the integer `-D`s are [`Program::defines`]).
    pub defines: Vec<(String, String)>,
    pub undefs: Vec<String>,
    /// `-std=` (and `-x c|c++`): the language and version macro; `None`: by the file's
    /// extension, with the default versions.
    pub std: Option<LangStd>,
    /// Other source files of the same program (`--link FILE`): read before the main file, as
    /// if it began by including them, so their functions and globals are the program's.
    pub link: Vec<std::path::PathBuf>,
    /// The recursion bound (`--recursion N`): how many calls of a function may be nested
    /// inside a call of it on one path (calls are inlined); a deeper one is an
    /// [`Instr::Cut`]. `None`: [`DEFAULT_RECURSION`].
    pub recursion: Option<u32>,
}

/// The default recursion bound ([`PpOptions::recursion`]).
pub const DEFAULT_RECURSION: u32 = 1;

/// Where a program's spans point when it was read from several files or through macros.
///
/// A span in the main file is a byte range of it; a span in header `h` is `h.base` plus a
/// byte range of `h.text` (bases lie past the end of the main file, in the order the headers
/// were first included), with the line and column of that header.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Sources {
    pub options: PpOptions,
    pub headers: Vec<Header>,
    /// The top-level macro uses of every file: byte ranges and what they expand.
    pub macro_uses: Vec<MacroUse>,
}

/// A header of the user's, read through `#include` (never a system header fensyn knows:
/// those are not read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// As shown in messages (the path as it was found).
    pub name: String,
    /// The path it was read from (lexically normalised), for writing it and for re-parses.
    pub path: std::path::PathBuf,
    pub base: usize,
    pub text: String,
    /// The system headers (`stdatomic.h`, `atomic`, ...) the translation unit had included
    /// when this header was first read: what its code may use without including it.
    pub system_before: Vec<String>,
    /// The system headers the translation unit had included when the first reading of this
    /// header ended (its own and those before it): what a file that includes it has after
    /// the `#include`.
    pub system_after: Vec<String>,
}

/// A macro use `start..end` of a file of the unit (offsets as [`Span`]s number them: a
/// header's past its base).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroUse {
    pub start: usize,
    pub end: usize,
    /// `in expansion of LOAD, defined at algo.h:7:1`.
    pub note: String,
}

impl Sources {
    /// The header holding `span`, if it is not in the main file.
    pub fn header(&self, span: &Span) -> Option<&Header> {
        self.headers.iter().rev().find(|h| span.start >= h.base)
    }

    /// The file holding `span`: 0 for the main file, `k` for header `k - 1`.
    pub fn file_index(&self, span: &Span) -> usize {
        self.headers
            .iter()
            .rposition(|h| span.start >= h.base)
            .map_or(0, |k| k + 1)
    }

    /// The base offset of file `index` ([`Sources::file_index`]).
    pub fn base_of(&self, index: usize) -> usize {
        index
            .checked_sub(1)
            .and_then(|k| self.headers.get(k))
            .map_or(0, |h| h.base)
    }

    /// The name of file `index`, with `main` the main file's.
    pub fn name_of<'a>(&'a self, index: usize, main: &'a str) -> &'a str {
        index
            .checked_sub(1)
            .and_then(|k| self.headers.get(k))
            .map_or(main, |h| h.name.as_str())
    }

    /// The macro use that strictly contains `offset` (an edit there would
    /// land inside the use, not before or after it).
    pub fn macro_use_around(&self, offset: usize) -> Option<&MacroUse> {
        self.macro_uses
            .iter()
            .find(|u| u.start < offset && offset < u.end)
    }
}

/// The most cells one allocation may have: a larger (or negative) size is an error of the
/// execution, not a model the explorer can hold.
pub const MAX_OBJECT_CELLS: i64 = 1 << 16;

/// Who allocated an object, and so who may end its lifetime ([`Instr::Free`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A function's local object (or a compound literal, a closure object): ends at the
    /// function's return; never freed by the program.
    Local,
    /// `malloc`, `calloc`, `aligned_alloc`, `realloc`: ended by `free`.
    Malloc,
    /// C++ `new T`: ended by `delete`.
    New,
    /// C++ `new T[n]`: ended by `delete[]`.
    NewArray,
}

impl ObjectKind {
    /// Whether the program allocated it on the heap (it must free it itself).
    pub fn is_heap(self) -> bool {
        self != ObjectKind::Local
    }

    /// The function that allocates such an object, in messages.
    pub fn allocator(self) -> &'static str {
        match self {
            ObjectKind::Local => "a declaration",
            ObjectKind::Malloc => "malloc",
            ObjectKind::New => "new",
            ObjectKind::NewArray => "new[]",
        }
    }
}

/// Who ends an object's lifetime ([`Instr::Free`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dealloc {
    /// The return of the function whose local object it is.
    ScopeEnd,
    /// `free(p)` (and the old object of `realloc`).
    Free,
    /// `delete p`.
    Delete,
    /// `delete[] p`.
    DeleteArray,
}

impl Dealloc {
    /// The kind of object this deallocation may end.
    pub fn ends(self) -> ObjectKind {
        match self {
            Dealloc::ScopeEnd => ObjectKind::Local,
            Dealloc::Free => ObjectKind::Malloc,
            Dealloc::Delete => ObjectKind::New,
            Dealloc::DeleteArray => ObjectKind::NewArray,
        }
    }

    /// Its spelling in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Dealloc::ScopeEnd => "the end of its scope",
            Dealloc::Free => "free",
            Dealloc::Delete => "delete",
            Dealloc::DeleteArray => "delete[]",
        }
    }
}

/// The cells of an object allocated at run time, in memory order: each like a [`Global`]
/// (name, atomicity, initial value, mutex), named as in messages (`main::args[1].tid`).
/// An [`Instr::Alloc`] with a count repeats them (`malloc@12[3].next`: see `name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The object's name in messages (`main::x`, `malloc@12`). When the layout is allocated
    /// with a count, every cell's name starts with it (`malloc@12.next`), so that element `k`
    /// of the array is named by putting `[k]` after it (`malloc@12[3].next`).
    pub name: String,
    pub kind: ObjectKind,
    pub cells: Vec<Global>,
    /// A C scalar declared without an initialiser: its value is indeterminate until written,
    /// so reading an allocation's first write of one of its cells (other than a
    /// synchronisation object's, which have misuse checks of their own) is a bug.
    pub indeterminate: bool,
}

/// A remark about the source that does not stop the analysis: a note (something ignored
/// because it cannot matter), or a warning (something invalid that is accepted with the
/// meaning compilers give it, see the message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub span: Span,
    pub message: String,
    pub warning: bool,
    /// The file the position is in when it is not the main file's program text (a
    /// preprocessor warning: `span` then holds only its line and column).
    pub file: Option<String>,
}

impl Program {
    /// Whether some call is past the recursion bound ([`Instr::Cut`]): executions cut at
    /// "the loop bound" may then be cut at that one.
    pub fn has_recursion_cut(&self) -> bool {
        self.functions
            .iter()
            .any(|f| f.body.iter().any(|i| matches!(i, Instr::Cut)))
    }

    pub fn global_by_name(&self, name: &str) -> Option<Loc> {
        self.globals.iter().position(|g| g.name == name)
    }

    /// The line of a statement (1-based).
    pub fn stmt_line(&self, s: StmtId) -> usize {
        self.stmts[s].span.line
    }

    /// Statement `s`'s line as messages name it: `12`, or `ring.h:12` in a header (its file
    /// name without directories).
    pub fn stmt_ref(&self, s: StmtId) -> String {
        let span = self.stmts[s].span;
        match self.sources.header(&span) {
            Some(h) => {
                let base = h.name.rsplit(['/', '\\']).next().unwrap_or(&h.name);
                format!("{base}:{}", span.line)
            }
            None => span.line.to_string(),
        }
    }

    /// Makes every source place have one slot: markers of slots whose [`SlotPlace`] equals an
    /// earlier slot's are renumbered to that slot. Inlining a function copies its body, and
    /// with it its slot markers; a fence written at that place in the source runs in every
    /// copy, so all copies must be one slot for the synthesis (one fence, counted once).
    pub fn merge_duplicate_slots(&mut self) {
        let mut first: Vec<SlotId> = (0..self.slots.len()).collect();
        for i in 0..self.slots.len() {
            if let Some(j) = (0..i).find(|&j| self.slots[j].place == self.slots[i].place) {
                first[i] = first[j];
            }
        }
        for f in &mut self.functions {
            for ins in &mut f.body {
                if let Instr::Slot(s) = ins {
                    *s = first[*s];
                }
            }
        }
    }

    /// Checks the structural invariants the interpreter relies on; the front end must only ever
    /// produce programs for which this returns `Ok`.
    pub fn validate(&self) -> Result<(), String> {
        if self.main >= self.functions.len() {
            return Err("main function index out of range".into());
        }
        for f in self.functions.iter() {
            if f.body.len() != f.stmt_of.len() {
                return Err(format!("{}: stmt_of length mismatch", f.name));
            }
            let nregs = f.reg_names.len();
            let check_expr = |e: &Expr| -> Result<(), String> {
                fn walk(e: &Expr, n: usize) -> bool {
                    match e {
                        Expr::Const(_) => true,
                        Expr::Reg(r) => *r < n,
                        Expr::Unary(_, a) => walk(a, n),
                        Expr::Binary(_, a, b) => walk(a, n) && walk(b, n),
                    }
                }
                if walk(e, nregs) {
                    Ok(())
                } else {
                    Err(format!("{}: register out of range", f.name))
                }
            };
            let nlocs = self.globals.len();
            let check_addr = |a: &Addr| -> Result<bool, String> {
                Ok(match a {
                    Addr::Fixed(l) => *l < nlocs,
                    Addr::Computed { ptr, lo, hi } => {
                        check_expr(ptr)?;
                        lo < hi && (*hi <= nlocs || *hi == usize::MAX)
                    }
                    Addr::Within { ptr, base, len } => {
                        check_expr(ptr)?;
                        check_expr(base)?;
                        *len > 0
                    }
                })
            };
            for (pc, ins) in f.body.iter().enumerate() {
                if f.stmt_of[pc] >= self.stmts.len() {
                    return Err(format!("{}: statement index out of range", f.name));
                }
                match ins {
                    Instr::Load { dst, loc, .. } => {
                        if *dst >= nregs || !check_addr(loc)? {
                            return Err(format!("{}: bad load", f.name));
                        }
                    }
                    Instr::Store { loc, val, .. } => {
                        if !check_addr(loc)? {
                            return Err(format!("{}: bad store", f.name));
                        }
                        check_expr(val)?;
                    }
                    Instr::Assign { dst, val } => {
                        if *dst >= nregs {
                            return Err(format!("{}: bad assign", f.name));
                        }
                        check_expr(val)?;
                    }
                    Instr::ThreadId { dst } => {
                        if *dst >= nregs {
                            return Err(format!("{}: bad thread id", f.name));
                        }
                    }
                    Instr::Nondet { dst, lo, hi } => {
                        if *dst >= nregs || lo > hi {
                            return Err(format!("{}: bad nondet", f.name));
                        }
                    }
                    Instr::Alloc { dst, layout, count } => {
                        let ok = self.layouts.get(*layout).is_some_and(|l| {
                            !l.cells.is_empty()
                                && (count.is_none()
                                    || l.cells.iter().all(|c| c.name.starts_with(&l.name)))
                        });
                        if *dst >= nregs || !ok {
                            return Err(format!("{}: bad alloc", f.name));
                        }
                        if let Some(c) = count {
                            check_expr(c)?;
                        }
                    }
                    Instr::ObjectCells { dst, ptr } => {
                        if *dst >= nregs {
                            return Err(format!("{}: bad object size", f.name));
                        }
                        check_expr(ptr)?;
                    }
                    Instr::Assert { cond, .. } | Instr::Check { cond, .. } => check_expr(cond)?,
                    Instr::Free { ptr, .. } => check_expr(ptr)?,
                    Instr::Spawn { func, arg, dst } => {
                        if *func >= self.functions.len() || dst.is_some_and(|d| d >= nregs) {
                            return Err(format!("{}: bad spawn", f.name));
                        }
                        check_expr(arg)?;
                    }
                    Instr::Join { tid, dst } => {
                        check_expr(tid)?;
                        if dst.is_some_and(|d| d >= nregs) {
                            return Err(format!("{}: bad join", f.name));
                        }
                    }
                    Instr::BranchIfZero { cond, target } => {
                        check_expr(cond)?;
                        if *target > f.body.len() {
                            return Err(format!("{}: bad branch target", f.name));
                        }
                    }
                    Instr::Jump { target } => {
                        if *target > f.body.len() {
                            return Err(format!("{}: bad jump target", f.name));
                        }
                    }
                    Instr::Slot(s) => {
                        if *s >= self.slots.len() {
                            return Err(format!("{}: bad slot", f.name));
                        }
                    }
                    Instr::Rmw { dst, loc, val, .. } => {
                        if *dst >= nregs || !check_addr(loc)? {
                            return Err(format!("{}: bad rmw", f.name));
                        }
                        check_expr(val)?;
                    }
                    Instr::Cas {
                        ok,
                        old,
                        loc,
                        expected,
                        desired,
                        ..
                    } => {
                        if *ok >= nregs || *old >= nregs || !check_addr(loc)? {
                            return Err(format!("{}: bad cas", f.name));
                        }
                        check_expr(expected)?;
                        check_expr(desired)?;
                    }
                    Instr::Assume { cond } => check_expr(cond)?,
                    Instr::LoopEnter { .. }
                    | Instr::LoopIter { .. }
                    | Instr::Fence { .. }
                    | Instr::Exit
                    | Instr::Return
                    | Instr::Cut => {}
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_slots_are_merged_into_the_first() {
        let place = SlotPlace::Before { stmt: 0 };
        let f = |body: Vec<Instr>| Function {
            name: "f".into(),
            span: Span::default(),
            param: None,
            result: None,
            reg_names: vec![],
            stmt_of: vec![0; body.len()],
            body,
        };
        let mut p = Program {
            notes: vec![],
            globals: vec![],
            functions: vec![
                f(vec![Instr::Slot(0)]),
                f(vec![Instr::Slot(1), Instr::Slot(2)]),
            ],
            main: 0,
            stmts: vec![Stmt {
                func: 0,
                kind: StmtKind::Local,
                span: Span::default(),
                order_span: None,
            }],
            slots: vec![
                Slot {
                    func: 0,
                    place: place.clone(),
                },
                Slot {
                    func: 1,
                    place: place.clone(),
                },
                Slot {
                    func: 1,
                    place: SlotPlace::BlockEnd {
                        after: Some(0),
                        close: Span::default(),
                    },
                },
            ],
            lang: Lang::C,
            defines: vec![],
            layouts: vec![],
            sources: Default::default(),
            loop_bounds: Default::default(),
        };
        p.merge_duplicate_slots();
        assert_eq!(p.functions[1].body, vec![Instr::Slot(0), Instr::Slot(2)]);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn order_lattice() {
        use MemOrder::*;
        assert!(Acquire.le(AcqRel) && Release.le(SeqCst) && !Acquire.le(Release));
        assert_eq!(Acquire.join(Release), AcqRel);
        assert_eq!(Relaxed.join(Acquire), Acquire);
        assert_eq!(SeqCst.join(Release), SeqCst);
    }
}
