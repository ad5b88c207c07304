//! The C front end: parses a litmus-style C11 program with tree-sitter and lowers it to the thread
//! IR of [`crate::ir`]. C++ programs (tree-sitter-cpp) go through the same lowering, with the
//! additions of the section *C++* below.
//!
//! # Contract
//!
//! [`parse_c`] (and [`parse_cpp`], [`parse`]) returns either a [`Program`] that satisfies [`Program::validate`] or exactly one
//! [`Diagnostic`] (the first problem found, in document order as far as practical). It never
//! panics, whatever the input: syntax errors are reported from tree-sitter's `ERROR`/`MISSING`
//! nodes, every recursive walk is bounded by a nesting limit (deeper programs are rejected as
//! unsupported), and source text is only ever sliced with checked accessors. Nothing is skipped
//! silently: every construct that is not lowered faithfully is an `unsupported` diagnostic at the
//! construct's position.
//!
//! # What is lowered
//!
//! * **Top level** (classified with `queries/c/toplevel.scm`): `#include`s and comments are
//!   ignored; function prototypes are ignored; struct definitions (`struct S { ... };`, also
//!   inside a declaration) and `typedef`s of integer and struct types are recorded; global
//!   variables become [`Global`] memory cells: integers (plain or atomic: `atomic_int`,
//!   `_Atomic int`, `_Atomic(int)`, `atomic_bool`, `atomic_flag`, ...), pointers (plain, or
//!   atomic with `_Atomic(T *)`), synchronisation objects (`pthread_mutex_t`, `mtx_t`,
//!   `pthread_spinlock_t`, `pthread_rwlock_t`, `pthread_barrier_t`, `pthread_cond_t`,
//!   `cnd_t`, `pthread_mutexattr_t`: atomic cells with their [`SyncCell`](crate::ir::SyncCell),
//!   zero or set by a static initialiser, see *Synchronisation objects* below), and arrays and
//!   structs of these, laid out as consecutive cells named `a[1]`, `s.f`, `pool[0].next`
//!   (see `types::Ty`). Initialisers are constants (`ATOMIC_VAR_INIT(c)`,
//!   `ATOMIC_FLAG_INIT`), `{ ... }` lists for aggregates (missing elements are zero;
//!   designators `[i]`, `.f` and chains of them with C's rules, `initializers.rs`; GNU ranges
//!   `[a ... b]` and brace elision are unsupported), and `NULL`, `&global` or an array name
//!   for pointers; no initialiser means 0. Global `pthread_t` / `thrd_t` variables and arrays
//!   of them become registers of `main`. A stray `;` at file scope is skipped. Everything
//!   else is unsupported.
//! * **Types** (`types.rs`), for an LP64 target with glibc: the integer types of C in any
//!   spelling of their specifiers; every `<stdatomic.h>` typedef (`atomic_char` ...
//!   `atomic_ullong`, `atomic_char16_t`, `atomic_char32_t`, `atomic_wchar_t`,
//!   `atomic_int_least8_t` ... `atomic_uint_fast64_t`, `atomic_intptr_t`, `atomic_uintptr_t`,
//!   `atomic_size_t`, `atomic_ptrdiff_t`, `atomic_intmax_t`, `atomic_uintmax_t`, and C++'s
//!   exact-width `atomic_int8_t` ...); the `<stdint.h>` / `<stddef.h>` / `<uchar.h>` names
//!   (`int8_t` ... `uint64_t`, least and fast, `intptr_t`, `uintptr_t`, `size_t`, `ssize_t`,
//!   `ptrdiff_t`, `intmax_t`, `uintmax_t`, `wchar_t`, `char16_t`, `char32_t`; the `fast` types
//!   of 16 bits and more are `long`). `_Atomic` is a qualifier in any position (`_Atomic
//!   unsigned long`, `unsigned _Atomic`, `long _Atomic unsigned`); on a pointer level it makes
//!   that pointer atomic (`int * _Atomic p`, `_Atomic(struct node *)`), whose pointee keeps its
//!   own atomicity (`_Atomic(atomic_int *)`, `_Atomic(_Atomic int *)`). `volatile` (and
//!   `const`, `restrict`) are accepted everywhere and ignored: **volatile is not atomic in
//!   C11**, a volatile access is a plain access. `_Atomic` on a struct, union or `void` is
//!   unsupported (`atomic non-integer type`).
//! * **Attributes** (`attributes.rs`): GNU `__attribute__((...))` and standard `[[...]]` on
//!   declarations, members, functions and statements are blanked before parsing (tree-sitter-c
//!   cannot parse one after a variable's declarator), byte offsets kept, and ignored when they
//!   cannot change what runs (`aligned`, `packed`, `unused`, `used`, `noinline`,
//!   `always_inline`, `noreturn`, `fallthrough`, `section`, `visibility`, ... with or without
//!   `__`/`gnu::`); any other is refused at its name: `attribute `cleanup` (only attributes
//!   without effect on what the program executes are accepted and ignored: ...)` (so are
//!   `constructor`, `destructor`, `mode`, `vector_size`, ...). Attributes inside `#define`
//!   lines are left to the `#define`, which refuses them.
//! * **Enums** (`enums.rs`): `enum` definitions at file scope (alone, in a declaration or
//!   `typedef`, anonymous, as a member's type) make their enumerators `int` constants visible
//!   from their definition on (usable wherever a constant is; a local of the same name hides
//!   one) and their type an integer type: `unsigned int` when no enumerator is negative, else
//!   `int` (GCC's and Clang's choice). An enumerator's value must fit `int`. Enums defined
//!   inside a function, tags used before their definition and C++ `enum class` / `enum E :
//!   T` are unsupported.
//! * **Preprocessing** (`preprocess/`): the file is preprocessed first (macros of every kind,
//!   conditionals, includes searched next to the file and in `-I` directories, the system
//!   headers fensyn knows never read, `#error` an error at its line); the lowering sees the
//!   expanded text, and every span and diagnostic is mapped back to the user's files (see
//!   `preprocess/mod.rs`). `-D NAME=VALUE` integers also reach the lowering as constants
//!   (`macros.rs`, with GCC's `__ATOMIC_*`), which only fensyn's own names still use.
//! * **Functions**: `main` and the thread functions — those passed to `pthread_create` or
//!   `thrd_create` in `main`, in the functions it calls, and transitively in the thread
//!   functions found (threads may create threads), found with `queries/c/threads.scm`; a
//!   function given by a pointer may be any function whose address the program takes and whose
//!   return type fits the API — are lowered, in source order, to [`Function`]s; other function
//!   definitions are only lowered where they are called (see *Calls* below). A thread function
//!   passed to `pthread_create` must be `void *f(void *)`, one passed to `thrd_create` `int
//!   f(void *)` or `void f(void *)` (CDSChecker's `thrd_start_t`) (or any of these with `(void)`
//!   / `()`). The function argument may be written `f`, `&f` or `(thrd_start_t)&f`, and
//!   CDSChecker's one-argument `thrd_join(t)` is accepted. **CDSChecker/FenSying test
//!   dialect:** when there is no `main`, `int user_main(int argc, char **argv)` (or `(void)`) is
//!   the main thread, with everything said here of `main` (its parameters cannot be used,
//!   except `argc`, which is 1: the harness runs the program without arguments), and
//!   `MODEL_ASSERT(c)` is `assert(c)` everywhere.
//! * **Threads** (`src/frontend/lower/threads.rs`, whose module doc has the details): the
//!   pthread and C11 thread calls, in statement or expression position, with C's values
//!   (creation never fails in the model: `if (pthread_create(...)) abort();` takes the success
//!   branch); handles in registers (`pthread_t` variables and arrays of a function: `&t`,
//!   `&t[i]`, `t + i`) or in memory (globals used outside `main`, struct members, any
//!   `pthread_t *`); threads created and joined by any thread; join results (the value returned
//!   or passed to `pthread_exit`, [`Function::result`]); `pthread_self`, `pthread_equal`,
//!   `pthread_detach`, yields and sleeps (no effect), `pthread_attr_*` setters (no effect;
//!   getters refused); `exit` ([`Instr::Exit`](crate::ir::Instr::Exit)), `abort`,
//!   `__VERIFIER_error` and `reach_error` (a bug like a failed assertion).
//! * **Local objects in memory** (`src/frontend/lower/locals.rs`): local arrays, structs,
//!   atomics, mutexes and variables whose address is taken are objects allocated each time
//!   their declaration runs ([`Instr::Alloc`](crate::ir::Instr::Alloc)), so every thread and
//!   every iteration has its own; their initialisers are their cells' initial values when
//!   constant, stores otherwise. Their lifetime ends when the function returns (a thread
//!   function or an inlined call; not `main`): an [`Instr::Free`](crate::ir::Instr::Free) of
//!   each, after which an access is a bug. **Thread-local variables** (`_Thread_local`, `__thread`,
//!   `thread_local`) are copied per thread: a register of each thread function when the program
//!   never takes their address, else an object allocated at the thread's start.
//! * **Function pointers** (`src/frontend/lower/funptr.rs`): functions are values; a call or a
//!   thread creation through a pointer runs the function of the file the pointer holds among
//!   those whose address is taken (undefined behaviour for any other value).
//! * **Statements**: nested blocks, local integer declarations, assignments and compound
//!   assignments / `++` / `--` (on locals and globals), `atomic_store[_explicit]`,
//!   `atomic_load[_explicit]`, `atomic_init` (modelled as a **relaxed store**: C's non-atomic
//!   initialisation is weaker only in that racing with it would be undefined, which the model
//!   does not report), the read-modify-writes below, `atomic_thread_fence`, `assert`,
//!   `__VERIFIER_assume` / `assume` ([`Instr::Assume`](crate::ir::Instr::Assume): the thread
//!   blocks when the condition is false), the thread calls above (`pthread_*`, `thrd_*`),
//!   `return` (anywhere), the synchronisation calls below, calls to user functions (below), and the
//!   control flow below, `atomic_flag_test_and_set[_explicit]` (an exchange of 1; its value is
//!   the old one) and `atomic_flag_clear[_explicit]` (a store of 0), labels and `goto` (see
//!   *Labels and goto* below). Calls to undefined functions are unsupported.
//!   `atomic_signal_fence(mo)` (also `__atomic_signal_fence`, C++'s
//!   `std::atomic_signal_fence`) emits no instruction: it orders a thread only with a signal
//!   handler running in that thread, and these programs have none. **Output calls** (`printf`, `fprintf` to
//!   `stdout`/`stderr`, `puts`, `fputs`, `putchar`, `fputc`, `fflush`), as statements, are
//!   ignored with a [`Note`](crate::ir::Note): their arguments (except format strings and the
//!   stream) are evaluated for their effects and the values discarded. The CDSChecker
//!   dialect's trailing `__FILE__, __LINE__` arguments of `atomic_*`, `pthread_*` and `thrd_*`
//!   calls and `MODEL_ASSERT` are dropped, and so are the FenSying dialect's *leading* ones
//!   and librace's `load_N` / `store_N` are plain accesses (`lower/dialect.rs`). A
//!   compare-exchange's failure order `acq_rel` / `release` is read as `acquire` / `relaxed`
//!   with a warning ([`Note::warning`](crate::ir::Note)).
//! * **Data** (`src/frontend/lower/memory.rs`): an lvalue in memory is a `Place` — an
//!   [`Addr`](crate::ir::Addr) and a type: a global scalar or `s.f` / `a[2]` is fixed; `a[i]`
//!   with a non-constant index is computed and bounded by the array (a constant index out of
//!   bounds is an error); `*p`, `p->f` and `p[i]` are computed over every location. Pointer
//!   values are integers ([`pointer_to`](crate::ir::pointer_to)): `&place`, an array name
//!   (its first element), `NULL`/`0`, casts to pointer types, `p ± i` (scaled by the pointee's
//!   size in cells), pointer variables, and values loaded from pointer cells (including by
//!   `atomic_load` / `exchange` / compare-exchange on an atomic pointer). The pointee type of a
//!   pointer value travels with the register that holds it, so `p->f` resolves `f` statically;
//!   at run time the interpreter checks that the target cell exists and lies in the bounds
//!   (undefined behaviour otherwise). **Atomicity belongs to the access, not to the object**
//!   (as in RC11): a plain access to an atomic object through a pointer (`*(int *)&a[i]`) is
//!   a non-atomic access — a data race if it races, nothing otherwise —, and a GCC builtin on
//!   a plain object is an atomic access (see *GCC/Clang atomic builtins*); reading an atomic
//!   by name is still a seq_cst load, as C says. Local integer and pointer variables
//!   whose address is not taken are registers; other locals are objects in memory (see *Local
//!   objects in memory* above). A **`static` local** is a global object allocated once per
//!   declaration (named `f::x`), shared by every thread and every inlined copy.
//! * **Calls to user functions are inlined** (`src/frontend/lower/inline.rs`), as statements
//!   or in expressions, in `main`, threads and inlined functions. The callee must be defined in
//!   the file **before** the top-level function being lowered (a call to a function defined
//!   later, e.g. after a prototype, is unsupported), return an integer type, a pointer (the
//!   call's value keeps its pointee type) or `void`, and take only named integer or
//!   (non-atomic) pointer parameters by value (a
//!   pointer parameter keeps its pointee type, so `void lock(atomic_int *l)` works on any
//!   atomic int it is given). The arguments are evaluated left to right, converted to
//!   the parameter types and assigned to fresh registers named after the parameters; the body
//!   is lowered in the caller's [`Function`] in a fresh scope (only the parameters; the
//!   caller's locals are invisible; only globals declared before the callee are visible; its
//!   locals get fresh registers). `return e;` assigns `e` (converted to the return type) to the
//!   call's result register (a fresh temporary `%tN`, the call's value) and jumps to the end of
//!   the inlined body — also when it is the body's last statement (a jump to the next pc).
//!   Falling off the end of an integer function leaves the result register unchanged (C: the
//!   value is undefined). `return;` in an integer function is unsupported; `return e;` in a
//!   `void` function and a `void` call used as a value are errors. Recursion (direct or
//!   mutual, detected with the stack of calls being inlined) is unsupported at the recursive
//!   call, as are calls to `main` and calls nested deeper than 32 levels. Inside an inlined
//!   body threads cannot be created or joined (as outside `main`). Every loop of every inlined
//!   copy gets its own loop id.
//! * **Control flow** is lowered to [`Instr::BranchIfZero`](crate::ir::Instr::BranchIfZero) /
//!   [`Instr::Jump`](crate::ir::Instr::Jump) (no unrolling: loops are back-jumps, and the
//!   instructions, statements and slots of a loop body are the same every iteration):
//!   `if`/`else` (and else-if chains), `while`, `do … while`, `for` (the initialiser may be a
//!   declaration, scoped to the loop; any clause may be empty; a clause may be a comma
//!   expression), `break`, `continue` (in a `for`, it jumps to the update clause), and `switch`
//!   on integers: the controlling value is compared with each `case` label in source order,
//!   then control jumps to `default` (or past the switch), and the bodies follow each other so
//!   that they fall through. Case labels are integer constant expressions (converted to the
//!   promoted type of the controlling expression; duplicates are an error); a label nested
//!   inside another statement of the switch body (Duff's device), a statement before the first
//!   label and a declaration directly under a label are unsupported. Conditions are ordinary
//!   expressions (their loads come first, short-circuits are preserved). A loop is entered
//!   through an [`Instr::LoopEnter`](crate::ir::Instr::LoopEnter) and starts each iteration
//!   with an [`Instr::LoopIter`](crate::ir::Instr::LoopIter) (after the condition held in
//!   `while`/`for`, at the top of the body of `do`), both with an id unique in the program, so
//!   `--unroll` bounds the iterations of each entry. A counting `for` loop gets neither and
//!   runs to the end: `for (i = A; i OP B; i += K)` (the test alone or as an operand of `&&`)
//!   with `A`, `B`, `K` integer constant expressions (or `B` a local of the loop's function
//!   that the loop does not write, with `<` and `i++` or `>` and `i--`), `OP` one of `<`, `<=`, `>`, `>=`, `!=`, the update `i++`, `++i`, `i--`,
//!   `--i`, `i += K` or `i -= K` moving `i` towards `B` without wrapping around, `i` a local
//!   integer not assigned, incremented or addressed in the condition or body, and at most a
//!   thousand iterations.
//! * **Await loops** (GenMC's spin-assume transformation): a `while`, `do … while` or `for`
//!   (without an update clause) whose body consists only of empty statements and empty blocks
//!   and whose condition reads memory (a global, `atomic_load*` or `__atomic_load_n`) but has
//!   no other effect (no
//!   assignment, increment, or other call, except calls of functions of the file that only
//!   read and compute: their bodies hold only local declarations, assignments and increments
//!   of their own locals and parameters, `if`/`else`, `return` and such calls — no loop,
//!   store, read-modify-write, fence, assertion, `static` local or write through a pointer;
//!   GenMC's spin-assume allows the same) is lowered to the condition's loads followed by
//!   `Assume { cond: !cond }` — no loop, no loop markers, and no statements or slots for the empty
//!   body. Executions in which the loop would spin forever are thereby blocked; the iterations
//!   that fail have no effect, so only the final one needs to be explored. Any other loop,
//!   including one whose body has an assignment or a call, is an ordinary loop (whose passes
//!   the explorer may still block as spins: see [`crate::ir::spin`]).
//! * **Read-modify-writes** ([`Instr::Rmw`](crate::ir::Instr::Rmw)):
//!   `atomic_exchange[_explicit]` and `atomic_fetch_{add,sub,and,or,xor}[_explicit]` (value: the
//!   old value; the implicit forms are `seq_cst`; every order is valid, `consume` is
//!   `acquire`), and compound assignment `+= -= &= |= ^=` / `++` / `--` on an atomic global,
//!   which C defines as `seq_cst` read-modify-writes (value of `x++`/`x--`: the old value; of
//!   `++x`, `x += v`, ...: the new one).
//!   The written value wraps to the atomic's integer type ([`Width`](crate::ir::Width): C's
//!   atomic arithmetic is two's complement without overflow), so every integer atomic takes
//!   every operation; only exchange on `atomic_bool` and on pointers.
//! * **Compare-and-swap**: `atomic_compare_exchange_{strong,weak}[_explicit](&x, &e, d[, s, f])`
//!   becomes [`Instr::Cas`](crate::ir::Instr::Cas) into fresh temporaries `ok` and `old`,
//!   followed by `e := old` (correct because on success `old == e`); the value of the call is
//!   `ok`. `e` must be a local variable of the atomic's type (a global is unsupported). The
//!   failure order must not be `release` or `acq_rel` (an error). **The weak forms are lowered
//!   like the strong ones: spurious failures are not modelled** (every execution of a weak CAS
//!   is one a strong CAS could have; the extra failing executions are not explored) unless
//!   the checker is asked to (`Limits::spurious_cas`, `--spurious-cas`): the `Cas` is marked
//!   `weak`.
//! * **GCC/Clang atomic builtins** (`src/frontend/lower/builtins.rs`), in statements and
//!   expressions, on plain and `_Atomic` integer and pointer objects alike (the first argument
//!   is `&place` — a local so addressed is an object in memory — or any pointer value):
//!   `__atomic_load_n(p, mo)` (a load; value: the object's),
//!   `__atomic_store_n(p, v, mo)` (a store), `__atomic_exchange_n(p, v, mo)` (an exchange;
//!   value: the old one), `__atomic_compare_exchange_n(p, &e, d, weak, s, f)` (the C11
//!   compare-and-swap above, weak when the constant `weak` is non-zero; value: success), the
//!   generic `__atomic_load(p, &r, mo)`, `__atomic_store(p, &v, mo)`,
//!   `__atomic_exchange(p, &v, &r, mo)` and `__atomic_compare_exchange(p, &e, &d, weak, s, f)`,
//!   whose value pointers must be `&local` of the object's type (the local's register is read
//!   or written), `__atomic_fetch_OP(p, v, mo)` (value: the old one) and
//!   `__atomic_OP_fetch(p, v, mo)` (the new one, `OP(old, v)` converted to the object's type)
//!   for `add sub and or xor nand` (`nand` writes `~(old & v)`: [`RmwOp::Nand`](crate::ir::RmwOp::Nand);
//!   the type restrictions of the read-modify-writes above apply, and `nand` only on signed
//!   and 64-bit unsigned types), `__atomic_test_and_set(p, mo)` (an exchange of 1; value:
//!   `old != 0`) and `__atomic_clear(p, mo)` (a store of 0), on `bool` and `char` objects
//!   only, `__atomic_thread_fence(mo)` (a program fence, strengthened in its own spelling) and
//!   `__atomic_signal_fence(mo)` (nothing, as above). Orders: `__ATOMIC_RELAXED`,
//!   `__ATOMIC_CONSUME` (= acquire), `__ATOMIC_ACQUIRE`, `__ATOMIC_RELEASE`,
//!   `__ATOMIC_ACQ_REL`, `__ATOMIC_SEQ_CST` — predefined macros of values 0 to 5, so they are
//!   integers anywhere and `#define MO __ATOMIC_ACQUIRE` works — or any integer constant
//!   expression of value 0 to 5, or `memory_order_*`. The `__sync_*` builtins, which GCC
//!   documents as full barriers, are a seq_cst RMW or CAS **between two seq_cst fences** in
//!   the call's statement (already seq_cst, so never strengthened by a fix):
//!   `__sync_fetch_and_OP(p, v)` / `__sync_OP_and_fetch(p, v)` (old / new value, same
//!   operations), `__sync_bool_compare_and_swap(p, old, new)` (value: success) and
//!   `__sync_val_compare_and_swap(p, old, new)` (value: the value read); as GCC documents them,
//!   `__sync_lock_test_and_set(p, v)` is an acquire exchange, `__sync_lock_release(p)` a
//!   release store of 0 and `__sync_synchronize()` a seq_cst fence. Refused, at the call or
//!   argument: other builtins (`call to `__atomic_fetch_max` (not a supported atomic builtin:
//!   ...)`), an order GCC calls invalid (`__ATOMIC_ACQUIRE is not valid for a store`, `... for
//!   a load`, `... for the failure order of a compare-exchange`; `6 is not a memory order`),
//!   an order or weak flag that is not a constant, a first argument that is not a pointer
//!   (`takes a pointer: pass the address `&x``) or is the address of a parameter (`which is not in
//!   memory`), a mutex or a struct, a value pointer that is not `&local` of the object's type
//!   (`the result of `__atomic_load` must be given as `&local` ...`), test-and-set / clear on
//!   a wider object (`it sets or clears one byte`), and the value of a `void` builtin
//!   (`returns void: its value cannot be used`).
//! * **Synchronisation objects** (`src/frontend/lower/sync.rs` documents the encoding of
//!   their cells; `mutex.rs`, `rwlock.rs`, `cond.rs`), in threads and in `main`, on any object
//!   in memory: `&m` for a global or `static` object, an array element `&locks[i]`, a member
//!   `&s.m`, or a pointer to one (an argument of another type is an error; `m` for `&m` too).
//!   Every call has a value (0, or `thrd_success`, unless said otherwise), so
//!   `if (pthread_mutex_lock(&m) != 0) ...` is accepted. Using an object against its contract
//!   is a bug of kind `misuse` ([`Instr::Check`](crate::ir::Instr::Check)): waiting on,
//!   locking, signalling or destroying an uninitialised or destroyed object, unlocking a lock
//!   the thread does not hold, destroying a locked mutex or rwlock, a barrier or condition
//!   variable in use, re-initialising a locked mutex, a held rwlock, an initialised barrier,
//!   a condition variable with waiters. A zero global mutex, rwlock or condition variable is
//!   initialised (their static initialisers are zeros in practice), a zero barrier or mutex
//!   attribute is not. A thread that waits forever is a `deadlock` (see
//!   [`SyncRole`](crate::ir::SyncRole)).
//!   * **Mutexes** (GenMC's model with the owner recorded; `pthread_mutex_t`, C11 `mtx_t`):
//!     `pthread_mutex_lock(&m)` / `mtx_lock` is an acquire `Cas` from 0 to the thread's id + 1
//!     followed by `Assume { cond: ok }` when it fails (a thread that finds the mutex held
//!     blocks; relocking a non-recursive mutex one holds waits for oneself, a deadlock);
//!     `pthread_mutex_unlock` / `mtx_unlock` a release `Cas` from the thread's id + 1 to 0
//!     (a misuse when it fails and the thread does not hold the mutex);
//!     `pthread_mutex_trylock` / `mtx_trylock` the lock's CAS without the assume (0 or
//!     `EBUSY` = 16; `thrd_success` or `thrd_busy`); `pthread_mutex_timedlock(&m, deadline)`
//!     / `mtx_timedlock` the same with `ETIMEDOUT` (110) / `thrd_timedout` (a timed lock times
//!     out exactly when a trylock fails: when the mutex is held at the time it reads it);
//!     `pthread_mutex_init(&m, attr)` / `mtx_init(&m, type)` a relaxed exchange of 0 and a
//!     store of the mutex's kind; `pthread_mutex_destroy` / `mtx_destroy` an exchange with
//!     the destroyed value. Recursive mutexes — `pthread_mutexattr_settype(&a,
//!     PTHREAD_MUTEX_RECURSIVE)` then `pthread_mutex_init(&m, &a)`,
//!     `PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP`, `mtx_init(&m, mtx_plain | mtx_recursive)` —
//!     count the owner's relocks. Mutex attributes (`pthread_mutexattr_t`:
//!     `pthread_mutexattr_init`, `_settype` (normal, default, error-checking, recursive),
//!     `_setpshared` (no effect in one process), `_destroy`) are objects of their own; the
//!     other attributes (robustness, protocol, priority ceiling) are unsupported, as are the
//!     other `pthread_mutex*` functions. An error-checking mutex is a normal one: the misuse
//!     it would report as `EPERM` or `EDEADLK` is reported as a misuse or a deadlock.
//!   * **Spinlocks** (`pthread_spinlock_t`): `pthread_spin_lock`, `_trylock`, `_unlock`,
//!     `_init(&s, pshared)`, `_destroy`, lowered like a plain mutex.
//!   * **Read-write locks** (`pthread_rwlock_t`, `PTHREAD_RWLOCK_INITIALIZER`):
//!     `pthread_rwlock_rdlock`, `_wrlock`, `_tryrdlock`, `_trywrlock`, `_timedrdlock`,
//!     `_timedwrlock`, `_unlock`, `_init(&rw, NULL)`, `_destroy` (see `rwlock.rs`).
//!   * **Barriers** (`pthread_barrier_t`): `pthread_barrier_init(&b, NULL, n)` (a count of
//!     1..=65535), `pthread_barrier_wait` — an acq_rel fetch-add of the arrivals; the last
//!     thread of the round completes it (a release increment of the rounds) and gets
//!     `PTHREAD_BARRIER_SERIAL_THREAD` (-1), the others wait (acquire load + assume) and get
//!     0 — and `pthread_barrier_destroy`. A barrier is reusable: each round waits for its own
//!     arrivals. The explorer counts every order of a round's arrivals, as GenMC does without
//!     its barrier-aware reduction (`-disable-bam`).
//!   * **Condition variables** (`pthread_cond_t`, `PTHREAD_COND_INITIALIZER`, C11 `cnd_t`):
//!     `pthread_cond_wait(&c, &m)`, `_timedwait(&c, &m, deadline)` (0 or `ETIMEDOUT`),
//!     `_signal`, `_broadcast`, `_init(&c, NULL)`, `_destroy` and the `cnd_*` functions (see
//!     `cond.rs`: a wait may return spuriously at any time; a wait registered after the last
//!     signal is a lost wake-up; `while (C) pthread_cond_wait(&c, &m);` needs no loop bound).
//!   * The **deadline** of a timed function is not evaluated (any timed wait may time out):
//!     it must be a variable, `&variable`, a member or `NULL` (`<time.h>`'s `struct timespec`
//!     is known without being defined). Attribute arguments other than `NULL` (of barriers,
//!     rwlocks, condition variables) are unsupported. A local synchronisation object
//!     (an object in memory, see `lower/locals.rs`) starts indeterminate in C (its init
//!     function must run first) and constructed in C++. Other initialisers than the static
//!     initialisers above are unsupported. The library constants `EBUSY`, `ETIMEDOUT`, `EPERM`,
//!     `EINVAL`, `EDEADLK`, `PTHREAD_BARRIER_SERIAL_THREAD`, `PTHREAD_MUTEX_*`,
//!     `PTHREAD_PROCESS_*`, `thrd_*` and `mtx_*` are their glibc values.
//!   * Synchronisation objects are not integers: reading, assigning or doing arithmetic on
//!     one by name is an error, and so is `atomic_*` on one.
//! * **Expressions** are pure [`Expr`](crate::ir::Expr)s over registers: every read of a global (a plain read is a
//!   `NonAtomic` load, a read of an atomic by name a `SeqCst` load, `atomic_load*` uses its order)
//!   becomes an [`Instr::Load`](crate::ir::Instr::Load) into a fresh temporary `%tN`, emitted left to right. Integer literals
//!   take C's suffixes in any case and order (`0u`, `0UL`, `0llu`, `017u`, `0x1Ful`, `0b1LLU`;
//!   the suffix is taken off before the radix is read). `&&`, `||` and
//!   `?:` whose conditionally evaluated operand reads memory (or may divide by zero) are lowered
//!   with [`Instr::BranchIfZero`](crate::ir::Instr::BranchIfZero)/[`Instr::Jump`](crate::ir::Instr::Jump) so that the access happens only when C would
//!   perform it; otherwise they stay pure expressions. Integer types follow C where it matters
//!   for defined behaviour: values stored into `bool`, `char`, `short` and unsigned variables are
//!   converted to the variable's type, and `unsigned int` arithmetic and comparisons use C's
//!   usual arithmetic conversions (wrapping modulo 2^32). Signed `int` arithmetic is evaluated in
//!   `i64` without truncation (its overflow is undefined in C); 64-bit unsigned values above
//!   `i64::MAX` are not modelled exactly.
//!   **Side effects in expressions** (`lower/effects.rs`): an assignment, compound assignment
//!   or `++`/`--` on a local or a plain scalar in memory may be used as a value
//!   (`if ((r = atomic_load(&x)) == 1)`, `a = b = 0`, `int old = n++;`); it is lowered where C
//!   evaluates it, exactly as the statement it would be, and its value is the target's new
//!   value (converted to its type), or for `x++`/`x--` the old one kept in a temporary. The
//!   comma operator evaluates its left operand for its effects, then its right one (the
//!   value). An expression that modifies a variable and reads or modifies it elsewhere without
//!   a sequence point in between (`i = i++`, `a[i] = i++`, `f(i++, i)`) is undefined in C and
//!   an error; variables are compared by name, so a modification through an element or a
//!   pointer is not compared with other accesses to the same object. Assignments, increments
//!   and commas are errors in constant expressions (global initialisers, array sizes).
//! * **Labels and goto** (`lower/goto.rs`): labels belong to the function body they are in
//!   (each inlined copy and each thread lambda has its own). A `goto` to a later label is a
//!   [`Instr::Jump`](crate::ir::Instr::Jump). A `goto` to an earlier label makes a loop — the
//!   code from the label to the last such `goto` —, bounded like any loop: the label is an
//!   [`Instr::LoopEnter`](crate::ir::Instr::LoopEnter) (passed by control arriving from before
//!   the label) followed by an [`Instr::LoopIter`](crate::ir::Instr::LoopIter) (where the
//!   backward gotos jump), so every pass through the label is an iteration, the first
//!   included, as at the top of a `do` body, and `--unroll N` lets control pass the label N
//!   times per entry into the loop. A jump from outside the loop's code into its middle (a
//!   forward `goto` to a later label inside it, the `else` of an `if` that holds the label, a
//!   later `case`) is redirected through the loop's `LoopEnter` (instructions appended after
//!   the function's code), so every entry starts the count again. A `goto` leaving the scope
//!   of a C++ lock guard unlocks it. Jumping past `int r;` (no initialiser) leaves `r`'s
//!   register as it was (C: indeterminate, like an uninitialised local, which fensyn models
//!   as 0). Refused: a label defined twice or never defined, `goto *p` and `&&label`, a label
//!   at the end of a block (`L: }`, C23) or on the unbraced body of an `if`, `else` or loop, a
//!   `goto` into a loop (`while`, `do`, `for`) from outside it, and a `goto` into the scope of
//!   a declaration past it when the declaration has an initialiser (or a C++ constructor
//!   call, such as a lock guard: C leaves the variable indeterminate there and C++ forbids the
//!   jump) or declares a local object in memory (`lower/locals.rs`: it would not be
//!   allocated).
//!
//! tree-sitter does not expand macros, so `assert`, `MODEL_ASSERT`, `atomic_*`, `pthread_*` and
//! `thrd_*` are recognised as ordinary calls by name (and `PTHREAD_MUTEX_INITIALIZER` as an
//! identifier); it also cannot parse `_Atomic(T)`, which is rewritten to `_Atomic T` before parsing by blanking the parentheses (byte offsets, hence spans, are
//! unchanged), nor attributes after declarators, which are blanked (see *Attributes*). Blocks, control statements and expressions nested deeper than 100 levels (counted
//! together; an else-if chain nests one level per `else if`) are rejected as unsupported.
//!
//! # C++
//!
//! [`parse_cpp`] (or [`parse`] with [`Lang::Cpp`]; the CLI picks it for `.cpp .cc .cxx .c++
//! .hpp .hh .C` files) parses with tree-sitter-cpp and lowers everything the two languages share
//! with the C code above: statements, control flow, expressions, the C `atomic_*` functions
//! (which C++23's `<stdatomic.h>` also has), the GCC/Clang builtins, attributes (and
//! `alignas`), `assert`, pthreads and C11 threads, inlining. The
//! C++-only forms are mapped onto the same lowering (`src/frontend/cpp.rs` for types,
//! initialisers and top-level items, `src/frontend/lower/cpp.rs` for function bodies,
//! `queries/cpp/*.scm`); the resulting [`Program`] has `lang: Lang::Cpp`, which is all that
//! differs in the IR. **Every `std::` name below may also be written unqualified** (as after
//! `using namespace std;`), whether or not the file says `using namespace std;` — fensyn does
//! not check that the program compiles, only that it means what is lowered.
//!
//! * **Top level**: `#include`s are ignored (`<atomic>`, `<thread>`, `<mutex>`, `<cassert>`,
//!   ...), and so is `using namespace std;` (`queries/cpp/toplevel.scm`). Globals:
//!   `std::atomic<T>` for the integer types `T` of C (`int`, `bool`, `long`, `unsigned`,
//!   `unsigned long`, `char`, `std::size_t`, `std::uint64_t`, `char16_t`, ...), the `std::atomic_int`-style names
//!   (`std::atomic_uint_fast64_t`, ...), plain
//!   integers and `bool` (`true`/`false` are 1/0), and `std::mutex`, `std::recursive_mutex`,
//!   `std::shared_mutex`, `std::condition_variable` (constructed: unlocked, free, without
//!   waiters; the recursive mutex recursive); `std::atomic<T *>` for any pointer type the C code accepts is an atomic pointer
//!   cell (C's `_Atomic(T *)`). Initialisers: `x = v`, `x{v}`, `x(v)`, `x{}` (zero), and for
//!   arrays and structs `a{...}` like `a = {...}`; copy-initialising an atomic (`std::atomic<int>
//!   x = 1;`, ill-formed before C++17) is accepted; `nullptr` is the null pointer. **Data** is
//!   C's (arrays, structs, pointers, `static` locals); struct definitions (also at the top
//!   level, `queries/cpp/toplevel.scm`) make the struct's name a type name (`node *next;`).
//!   **Classes** (`class` or a `struct` with members beyond data, `classes.rs` and
//!   `lower/class.rs`) are a struct plus functions taking `this`: constructors, default member
//!   initialisers, member functions (in the class or out of line), `this`, static constants,
//!   destructors at `delete`; **class templates** (`templates.rs`) are one class per distinct
//!   argument list; inheritance, `virtual`, operators, `friend`, function templates and
//!   specialisations are unsupported. **Unions** (`unions.rs`) whose members share the same cells are accepted.
//! * **Memory orders**: `std::memory_order_X`, `std::memory_order::X`, `memory_order::X` and
//!   `memory_order_X`; `consume` is `acquire`, as in C.
//! * **Atomics** (the object `x` is any atomic integer or pointer place: `x`, `a[i]`, `s.f`,
//!   `p->f`, a `static` local, or `p->load()` through a pointer): `x.load([mo])` is a
//!   load, `x.store(v[, mo])` a store (statement only), `x.exchange(v[, mo])` and
//!   `x.fetch_{add,sub,and,or,xor}(v[, mo])` read-modify-writes (the C `atomic_fetch_*`
//!   lowering, same type restrictions: only `exchange` on a pointer),
//!   `x.compare_exchange_{strong,weak}(e, d[, mo[, fail]])` the C compare-and-swap (`e` a local
//!   of the atomic's type, by reference, e.g. `node *old`; weak = strong; with one order the
//!   failure order is derived as C++ says: `acq_rel` → `acquire`, `release` → `relaxed`,
//!   others unchanged); `x = v`, `x++`, `x += v`, ... and reading `x` by
//!   name are the seq_cst accesses C already lowers. The `std::atomic_*` free functions,
//!   `std::atomic_thread_fence(mo)` and `std::atomic_signal_fence(mo)` are the C functions.
//! * **Threads** (created and joined in `main` only, like pthreads): `std::thread t(f);` (which
//!   tree-sitter parses as a function declaration — the most vexing parse), `std::thread
//!   t{f};` and `std::thread t(f, arg);` declare the handle `t` and are an
//!   [`Instr::Spawn`](crate::ir::Instr::Spawn) of `f`; `t.join()` is an
//!   [`Instr::Join`](crate::ir::Instr::Join). A thread function is `void f()` or `void f(T p)`
//!   for an integer type `T`, or `void f(T *p)` for a non-atomic pointer (`&x`, an array name,
//!   a pointer variable, ...); the one argument is converted to `T` and passed like pthread's
//!   argument. **Arrays of handles**: `std::thread t[N];` (and `std::thread t;`) declare
//!   handles without threads; `t[i] = std::thread(f, arg);` (also `std::thread{...}` and
//!   `std::thread t = std::thread(...)`) spawns into the element like `pthread_create(&t[i],
//!   ...)` and `t[i].join()` joins it, so threads can be created and joined in loops; a
//!   temporary `std::thread` and an initialiser for an array of them are unsupported.
//!   A **lambda** `std::thread t([captures](params) { ... }, args)` is lowered as a
//!   thread function of its own, named `lambda@LINE:COL`, at the declaration (its statements
//!   and slots are its own; the functions it calls must be defined before `main`). It may pass
//!   one value: an int or pointer local of `main` captured by value (`[v]`, or used under `[=]`)
//!   or one int or pointer parameter with its argument. Several captures, or any capture by
//!   reference (`[&]`, `[&x]`), travel in a closure object instead (`lower/closure.rs`): a
//!   local captured by reference is an object in memory and the thread reaches it through its
//!   address; such a lambda takes no parameter. `-> void` and `mutable` are allowed. The `std::terminate` of the
//!   `std::thread` destructor on a thread that was never joined, and of an assignment to a
//!   handle whose thread was not joined, are not modelled.
//! * **Synchronisation classes** (`src/frontend/lower/cpp_sync.rs`; any object in memory:
//!   `m`, `locks[i]`, `s.m`, `*p`): `std::mutex` and `std::recursive_mutex` — `m.lock()`,
//!   `m.unlock()` are `pthread_mutex_lock(&m)` / `pthread_mutex_unlock(&m)` on a plain /
//!   recursive mutex, `m.try_lock()` is the trylock, but its value is `ok` (true on success:
//!   the opposite convention of `pthread_mutex_trylock`); `std::shared_mutex` — `lock()`,
//!   `try_lock()`, `unlock()` for the write lock and `lock_shared()`, `try_lock_shared()`,
//!   `unlock_shared()` for a read lock, the rwlock of C (each unlock a misuse when the thread
//!   does not hold that lock); `std::condition_variable` — `notify_one()` / `notify_all()` are
//!   a signal / broadcast, `cv.wait(lk)` a `pthread_cond_wait` with the mutex of the
//!   `std::unique_lock<std::mutex>` guard `lk`, and `cv.wait(lk, pred)` its predicate loop
//!   (for a lambda `pred` without parameters whose body is `return P;`, `P` without effects);
//!   `wait_for` / `wait_until` are unsupported. **Lock guards**
//!   `std::lock_guard<T> g(m);`, `std::unique_lock<T> g(m);` and `std::scoped_lock g(m);` for
//!   `T` one of `std::mutex`, `std::recursive_mutex`, `std::shared_mutex` (its write lock), and
//!   `std::shared_lock<std::shared_mutex> g(m);` (a read lock) — also `{m}`, without template
//!   arguments, and `g(locks[i])`, which the grammar takes for a declaration of an array
//!   parameter — lock `m` at the declaration (a computed address is kept in a register of its
//!   own) and unlock it (the unlock of the object, as instructions of the declaration's
//!   statement: its destructor) at **every exit from the enclosing block**: its end (after the
//!   block-end slot, so a fence written before the `}` runs before the unlock), `return` (in a
//!   thread function after the returned expression is evaluated, in an inlined function after
//!   the result is assigned), and `break` / `continue` that leave the block (the guards
//!   declared inside the loop or switch they leave), and a `goto` whose label is outside the
//!   guard's scope. A guard must be declared directly in a block (possibly behind labels);
//!   guard member calls (`g.unlock()`), `std::defer_lock`-style options and a
//!   `std::scoped_lock` of several mutexes are unsupported.
//! * **Conditions**: C++'s `condition_clause` (`if (c)`, `while (c)`, `switch (c)`) is its
//!   expression; a declaration or init-statement in a condition is unsupported.
//! * **Refused** (`unsupported` at the construct's position): classes, structs with methods
//!   (and the other members above), templates other than class templates (`templates.rs`),
//!   `std::atomic` and the lock guards,
//!   namespaces (other than `using namespace std;`), other `using`s and type aliases,
//!   references other than parameters and locals (`lower/reference.rs`),
//!   exceptions (`try`, `throw`), lambdas other than a `std::thread`'s function, `auto`,
//!   `dynamic_cast` (the other named casts are C casts, `named_casts.rs`), range-based `for`, coroutines, `std::atomic_signal_fence`,
//!   `t.detach()` and other `std::thread` members, `std::async`, the other synchronisation
//!   types of the library (`std::timed_mutex`, `std::condition_variable_any`, semaphores,
//!   latches, `std::barrier`, ...), global `std::thread`s and lock guards,
//!   any other `std::` function and anything else the C front end refuses.
//!
//! # Statements and slots
//!
//! Every source statement (including a nested block, a declaration and a control statement) gets
//! one [`Stmt`]; every instruction's `stmt_of` is the statement it was lowered from. A control
//! statement's own `Stmt` owns the instructions of its condition (so it is
//! [`StmtKind::Access`](crate::ir::StmtKind::Access) when the condition touches memory), of a
//! `for`'s clauses, its loop markers and jumps; the statements of its bodies have their own.
//! Before each statement of each block an [`Instr::Slot`](crate::ir::Instr::Slot) with [`SlotPlace::Before`](crate::ir::SlotPlace::Before) is emitted (owned by that statement), and
//! after the last statement a [`SlotPlace::BlockEnd`](crate::ir::SlotPlace::BlockEnd) slot (owned by the last statement, or by the
//! block's own statement when the block is empty — for the braces of an `if`/loop/`switch` body,
//! that is the control statement), unless the block's last statement diverts control (`return`,
//! `pthread_exit`, `thrd_exit`, `break`, `continue`, `goto`, or an `if`/`else` whose branches all
//! do; a label after it makes control reach the end again). The body of a `switch` is one block
//! whose statements are those under its labels.
//!
//! **Labels.** A label is a point, not a statement: `L: S` lowers `S` as the statement of the
//! block, whose `Stmt` span and `Before` slot start at `S`, after the label, where the gotos to
//! `L` land — the rewriter writes a fence there on the line before `S` when `S` starts its
//! line, else inline after `L: `, so the fence runs on every path to `S`. There is no slot
//! between the previous statement and the label: a fence there would run on fewer paths at
//! the same place. The empty statement of `L:;` only carries its label: no `Stmt`, no slot. The
//! `LoopEnter` / `LoopIter` of a label that a backward `goto` targets belong to a `Stmt` of the
//! labeled statement, which has no slot.
//!
//! **Unbraced bodies.** A body of `if`/`else`/`while`/`do`/`for` written without braces
//! (`if (c) x = 1;`, and the `if` of an `else if`) is treated exactly like a braced block
//! holding that one statement: the statement gets its `Stmt` and a `Before` slot, and (unless it
//! diverts control) a `BlockEnd { after: Some(stmt), close }` slot where `close` is the
//! **zero-length span at the end of the statement** (start = end = its end byte, with the
//! line/column of that position), since there is no closing brace. A fence written at either
//! slot needs braces added around the body.
//!
//! **Inlined bodies.** The statements of an inlined body are the callee's source statements:
//! all inlined copies of one source statement share **one** [`Stmt`] (created at the first
//! copy; its `func` is the function of that copy), so the slots of every copy have equal
//! [`SlotPlace`](crate::ir::SlotPlace)s. Each copy emits its **own** [`Slot`] entries, whose
//! `func` is the function containing the marker (the caller). A fence written at such a place
//! is written once in the callee's source and applies to every call; the synthesis must treat
//! slots with equal places as one (see `Program::merge_duplicate_slots`). The call statement
//! itself owns only the argument evaluation and the result's use (so its kind reflects only
//! those instructions).
//!
//! Functions that fall off their end get an implicit [`Instr::Return`](crate::ir::Instr::Return). The output
//! is deterministic.

mod attributes;
mod classes;
pub mod comments;
mod cpp;
mod enums;
mod facts;
mod initializers;
mod literal;
mod lower;
mod macros;
mod named_casts;
pub mod preprocess;
mod relacy;
mod templates;
mod types;
mod unions;

#[cfg(test)]
mod builtins_tests;
#[cfg(test)]
mod cpp_tests;
#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod dialect_tests;
#[cfg(test)]
mod expr_tests;
#[cfg(test)]
mod goto_tests;
#[cfg(test)]
mod heap_tests;
#[cfg(test)]
mod sync_tests;
#[cfg(test)]
mod templates_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unique_ptr_tests;

pub use crate::ir::{Lang, PpOptions};

use crate::ir::{Function, Global, Loc, Program, Slot, Span, Stmt};
use std::collections::{HashMap, HashSet};
use std::fmt;
use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator};
use types::IntTy;

const TOPLEVEL_QUERY: &str = include_str!("../../queries/c/toplevel.scm");
const THREADS_QUERY: &str = include_str!("../../queries/c/threads.scm");
const CPP_TOPLEVEL_QUERY: &str = include_str!("../../queries/cpp/toplevel.scm");
const CPP_THREADS_QUERY: &str = include_str!("../../queries/cpp/threads.scm");

/// What kind of problem a [`Diagnostic`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagKind {
    /// The input is not syntactically valid C.
    Syntax,
    /// Valid C that the tool does not handle (yet).
    Unsupported,
    /// Invalid program (undeclared identifier, bad memory order, no `main`...).
    Error,
    /// Accepted as a compiler accepts it (never returned as an error).
    Warning,
}

impl DiagKind {
    fn label(self) -> &'static str {
        match self {
            DiagKind::Syntax => "syntax error",
            DiagKind::Unsupported => "unsupported",
            DiagKind::Error => "error",
            DiagKind::Warning => "warning",
        }
    }
}

impl fmt::Display for DiagKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A front-end error at a 1-based line and (byte) column of `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub kind: DiagKind,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file,
            self.line,
            self.column,
            self.kind.label(),
            self.message
        )
    }
}

impl std::error::Error for Diagnostic {}

pub(crate) type R<T> = Result<T, Diagnostic>;

/// The source being lowered: file name (for messages) and original text.
#[derive(Clone, Copy)]
pub(crate) struct Src<'a> {
    file: &'a str,
    /// The text tree-sitter parsed (the preprocessed text).
    text: &'a str,
    lang: Lang,
    /// Where that text came from, when it is not the file's own text.
    unit: Option<&'a preprocess::Unit>,
}

impl<'a> Src<'a> {
    /// The original source text of `n` ("" if the range is somehow not a valid slice).
    pub(crate) fn text(&self, n: Node) -> &'a str {
        self.text.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    /// The line and column (1-based) of `n`'s start in the file the user wrote (the parsed
    /// text's own when it was not preprocessed into something else).
    pub(crate) fn user_position(&self, n: Node) -> (usize, usize) {
        match self.unit {
            Some(unit) => {
                let (file, offset) = unit.start(n.start_byte());
                unit.files[file as usize].line_col(offset)
            }
            None => {
                let p = n.start_position();
                (p.row + 1, p.column + 1)
            }
        }
    }

    pub(crate) fn span(&self, n: Node) -> Span {
        let p = n.start_position();
        Span {
            start: n.start_byte(),
            end: n.end_byte(),
            line: p.row + 1,
            column: p.column + 1,
        }
    }

    /// The span of block `n`'s closing `}`, or an empty span at its end if it has none (an
    /// unbraced body, or a block cut short by a syntax error).
    pub(crate) fn close_span(&self, n: Node) -> Span {
        let mut c = n.walk();
        let brace = n.children(&mut c).filter(|c| c.kind() == "}").last();
        match brace {
            Some(b) => self.span(b),
            None => {
                let p = n.end_position();
                Span {
                    start: n.end_byte(),
                    end: n.end_byte(),
                    line: p.row + 1,
                    column: p.column + 1,
                }
            }
        }
    }

    /// The text of `n` as the user wrote it: the macro uses rather than their expansions
    /// (for messages quoting the source, and the dialect's `__FILE__, __LINE__`).
    pub(crate) fn user_text(&self, n: Node) -> &'a str {
        let Some(unit) = self.unit else {
            return self.text(n);
        };
        let (f, start) = unit.start(n.start_byte());
        let (g, end) = unit.end(n.end_byte());
        match unit.files.get(f as usize) {
            Some(file) if f == g && start <= end => file.text.get(start..end).unwrap_or(""),
            _ => self.text(n),
        }
    }

    pub(crate) fn diag(&self, n: Node, kind: DiagKind, message: &str) -> Diagnostic {
        let p = n.start_position();
        let Some(unit) = self.unit else {
            return Diagnostic {
                file: self.file.to_string(),
                line: p.row + 1,
                column: p.column + 1,
                kind,
                message: message.to_string(),
            };
        };
        let (f, at) = unit.diag_position(n.start_byte());
        let file = &unit.files[f as usize];
        let message = match unit.expansion_note(n.start_byte()) {
            Some(note) => format!("{message} ({note})"),
            None => message.to_string(),
        };
        let mut d = file.diagnostic(at, kind, &message);
        if f == 0 && d.file == file.name {
            d.file = self.file.to_string();
        }
        d
    }

    pub(crate) fn unsupported(&self, n: Node, message: &str) -> Diagnostic {
        self.diag(n, DiagKind::Unsupported, message)
    }

    pub(crate) fn error(&self, n: Node, message: &str) -> Diagnostic {
        self.diag(n, DiagKind::Error, message)
    }

    /// An error not attached to a node (reported at 1:1).
    pub(crate) fn error_at_start(&self, message: &str) -> Diagnostic {
        Diagnostic {
            file: self.file.to_string(),
            line: 1,
            column: 1,
            kind: DiagKind::Error,
            message: message.to_string(),
        }
    }

    pub(crate) fn internal(&self, message: &str) -> Diagnostic {
        self.error_at_start(&format!("internal front-end error: {message}"))
    }
}

/// The `function_declarator` inside a declarator (through pointer and parenthesised
/// declarators), if the declarator declares a function.
pub(crate) fn function_declarator(d: Node) -> Option<Node> {
    let mut d = d;
    for _ in 0..64 {
        match d.kind() {
            "function_declarator" => match function_pointer(d) {
                // `R (*f(P1))(P2)`: a function returning a function pointer.
                Some(inner) => d = inner,
                None => return Some(d),
            },
            "pointer_declarator" | "attributed_declarator" => {
                d = d.child_by_field_name("declarator")?;
            }
            "parenthesized_declarator" => {
                let mut c = d.walk();
                let inner = d.named_children(&mut c).find(|n| n.kind() != "comment")?;
                d = inner;
            }
            _ => return None,
        }
    }
    None
}

/// For the declarator `(*X)(params)` of a function pointer: the declarator inside the
/// parentheses (`*X`, whose pointer level is the function pointer itself); `None` for a
/// function's own declarator `f(params)`. A function returning a function pointer
/// (`(*f(P1))(P2)`) is a function, not a pointer: `None`.
pub(crate) fn function_pointer(fdecl: Node) -> Option<Node> {
    let paren = fdecl.child_by_field_name("declarator")?;
    if paren.kind() != "parenthesized_declarator" {
        return None;
    }
    let mut c = paren.walk();
    let inner = paren
        .named_children(&mut c)
        .find(|n| n.kind() != "comment")?;
    // Under the pointer levels: a name or array (a variable) or a function declarator.
    let mut d = inner;
    for _ in 0..64 {
        match d.kind() {
            "pointer_declarator" | "parenthesized_declarator" | "array_declarator" => {
                let mut c = d.walk();
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_children(&mut c).find(|n| n.kind() != "comment"))?;
            }
            "function_declarator" => return None,
            _ => return (inner.kind() == "pointer_declarator").then_some(inner),
        }
    }
    None
}

/// The declared name of a function declarator, if it is a plain identifier.
pub(crate) fn function_name<'a>(src: &Src<'a>, fdecl: Node) -> Option<&'a str> {
    let name = fdecl.child_by_field_name("declarator")?;
    (name.kind() == "identifier").then(|| src.text(name))
}

/// Named children of `n`, without comments.
pub(crate) fn named_children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// Program-wide lowering state.
pub(crate) struct Ctx<'a> {
    pub(crate) src: Src<'a>,
    pub(crate) globals: Vec<Global>,
    pub(crate) global_tys: Vec<IntTy>,
    pub(crate) global_index: HashMap<String, Loc>,
    /// Global scalars declared `const` (`const int kThreads = 2;`): constant expressions, as
    /// in C++ (and GCC's C, which folds them in array sizes).
    pub(crate) const_globals: HashSet<Loc>,
    /// Variables declared `extern` and not (yet) defined, with each declaration's name node.
    pub(crate) externs: Vec<(String, Node<'a>)>,
    /// Identifiers used in the functions other than the main thread's (a global thread handle
    /// named there lives in memory, not in registers of `main`).
    pub(crate) outside_main: HashSet<String>,
    /// Global `pthread_t` / `thrd_t` variables (registers of `main`), in declaration order,
    /// with their array length (`None` for a single handle).
    pub(crate) handles: Vec<(String, Option<usize>)>,
    /// The front-end type of every memory cell (parallel to `globals`).
    pub(crate) cell_tys: Vec<types::Ty>,
    /// Arrays and structs in memory (globals and `static` locals); scalars are in
    /// `global_index`.
    pub(crate) objects: Vec<Object>,
    /// Global aggregates by name (static locals are found through their scope).
    pub(crate) object_index: HashMap<String, usize>,
    /// Struct definitions, typedefs, `_Atomic(T *)` positions.
    pub(crate) types: types::TypeEnv,
    /// Notes for the user (ignored output calls), in source order.
    pub(crate) notes: Vec<crate::ir::Note>,
    /// `static` locals by the tree-sitter id of their declarator: first cell and object index.
    pub(crate) statics: HashMap<usize, (Loc, Option<usize>)>,
    pub(crate) functions: Vec<Option<Function>>,
    /// Functions being lowered (main and thread functions) by name.
    pub(crate) func_ids: HashMap<String, usize>,
    /// Every function defined or declared in the file.
    pub(crate) fn_names: HashSet<String>,
    /// The start byte of the first declaration or definition of every function.
    pub(crate) fn_first: HashMap<String, usize>,
    /// Globals that have had an initialiser (C allows several tentative definitions of a
    /// global, but only one with an initialiser).
    pub(crate) initialised: HashSet<String>,
    /// The first definition of every function defined in the file (what a call inlines).
    pub(crate) fn_defs: HashMap<String, Node<'a>>,
    /// While planning a non-constant initialiser (`lower/locals.rs`): the scalar leaves of the
    /// `{ ... }` list (their node ids), whose cells [`Ctx::init_values`] marks with their
    /// index + 1 instead of evaluating them (0: the cell is zero).
    pub(crate) init_leaves: Option<Vec<usize>>,
    /// The statements of inlined function bodies, by tree-sitter node id: every inlined copy
    /// of a source statement shares one [`Stmt`] (so that the slots of all copies have equal
    /// [`SlotPlace`](crate::ir::SlotPlace)s).
    pub(crate) inline_stmts: HashMap<usize, usize>,
    pub(crate) stmts: Vec<Stmt>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) main: usize,
    /// The name of the main thread's function: `main`, or `user_main` when there is no `main`.
    pub(crate) main_name: &'static str,
    /// The recursion bound: calls of a function nested inside a call of it that are inlined
    /// ([`crate::ir::PpOptions::recursion`]).
    pub(crate) recursion: u32,
    /// The thread functions, with the API(s) that spawn them (which fixes their signature).
    pub(crate) spawned: HashMap<String, SpawnedBy>,
    /// Loops lowered so far: the next loop id ([`Instr::LoopEnter`](crate::ir::Instr::LoopEnter)).
    pub(crate) loops: usize,
    /// The integer constants known by name: `__ATOMIC_*` and `-D` (see `macros.rs`).
    pub(crate) macros: HashMap<String, i64>,
    /// The enumeration constants defined so far, by name (see `enums.rs`).
    pub(crate) enumerators: HashMap<String, enums::Enumerator>,
    /// The layouts of the objects allocated at run time (local objects in memory).
    pub(crate) layouts: Vec<crate::ir::Layout>,
    /// Thread-local variables (`_Thread_local`, `__thread`, `thread_local`), in declaration
    /// order: every thread has its own (see `lower/locals.rs`).
    pub(crate) thread_locals: Vec<ThreadLocal>,
    /// The names of the functions defined in the file, sorted (a function's value is its
    /// rank, see `lower/funptr.rs`).
    pub(crate) fn_order: Vec<String>,
    /// The functions whose address the program takes (what a call through a pointer may
    /// reach).
    pub(crate) fn_taken: std::collections::BTreeSet<String>,
    /// What the walk before lowering found in each top-level function definition.
    pub(crate) facts: facts::Facts<'a>,
    /// The C++ classes defined so far (`classes.rs`).
    pub(crate) classes: Vec<classes::ClassDef<'a>>,
    /// Global objects of a class type whose construction runs at the start of the main
    /// thread (`lower/class.rs`), in declaration order.
    pub(crate) global_ctors: Vec<classes::GlobalCtor<'a>>,
    /// The C++ class templates defined so far (`templates.rs`).
    pub(crate) class_templates: Vec<templates::ClassTemplate<'a>>,
    /// The keys of the class template instances being defined, innermost last.
    pub(crate) instantiating: Vec<String>,
    /// While a class template's instance is defined: its name, which prefixes the structs
    /// defined in it (`ring<int, 2>::slot`: one per instance, `templates.rs`).
    pub(crate) class_scope: Option<String>,
}

/// A thread-local variable: its type, the constant initial values of its cells, and where it
/// is declared (visible after that).
#[derive(Clone, Debug)]
pub(crate) struct ThreadLocal {
    pub(crate) name: String,
    pub(crate) ty: types::Ty,
    pub(crate) values: Vec<i64>,
    pub(crate) start: usize,
    pub(crate) span: Span,
}

/// A memory cell of an object being allocated.
pub(crate) struct CellSpec {
    pub(crate) name: String,
    /// The type of the cell (of the whole object for a synchronisation object's cells).
    pub(crate) ty: types::Ty,
    /// Its value when the object has no initialiser.
    pub(crate) init: i64,
    pub(crate) sync: Option<crate::ir::SyncCell>,
}

/// An array or struct in memory: cells `base .. base + size(ty)`.
#[derive(Clone, Debug)]
pub(crate) struct Object {
    pub(crate) base: Loc,
    pub(crate) ty: types::Ty,
    /// Where it is declared (globals are visible only after their declaration).
    pub(crate) start: usize,
}

/// How a thread function is spawned in the main thread's function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SpawnedBy {
    /// Passed to `pthread_create`: must be `void *f(void *)`.
    pub(crate) pthread: bool,
    /// Passed to C11 `thrd_create`: must be `int f(void *)`.
    pub(crate) c11: bool,
    /// Passed to a C++ `std::thread`: must be `void f()` or `void f(int)`.
    pub(crate) cpp: bool,
    /// Passed to `thrd_create` through a cast (`(thrd_start_t)&f`, CDSChecker's harnesses):
    /// `void *f(void *)` is taken too, its result unused.
    pub(crate) cast: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Item {
    Include,
    Comment,
    Declaration,
    Function,
    Struct,
    /// `enum E { ... };`
    Enum,
    Typedef,
    Other,
}

/// Parses the C program `source` (named `file` in messages) and lowers it to the IR.
///
/// Returns the first problem found as a [`Diagnostic`]; never panics.
pub fn parse_c(file: &str, source: &str) -> Result<Program, Diagnostic> {
    parse(file, source, Lang::C)
}

/// Parses the C++ program `source` (named `file` in messages) and lowers it to the IR.
pub fn parse_cpp(file: &str, source: &str) -> Result<Program, Diagnostic> {
    parse(file, source, Lang::Cpp)
}

/// Parses `source` (named `file` in messages) as `lang` and lowers it to the IR.
///
/// Returns the first problem found as a [`Diagnostic`]; never panics.
pub fn parse(file: &str, source: &str, lang: Lang) -> Result<Program, Diagnostic> {
    parse_with(file, source, lang, &[])
}

/// The macros by which `--nondet LO..HI` gives the values `__VERIFIER_nondet_*()` may return
/// (passed to [`parse_with`] with the `-D` macros).
pub fn nondet_defines((lo, hi): (i64, i64)) -> [(String, i64); 2] {
    [
        (lower::NONDET_LO.to_string(), lo),
        (lower::NONDET_HI.to_string(), hi),
    ]
}

/// The value of an integer literal as C writes it (`42`, `0x2a`, `052`, `0b101`, suffixes
/// allowed), for `-D NAME=VALUE`.
pub fn integer_literal(text: &str) -> Result<i64, String> {
    literal::parse_number(text).map_err(|e| match e {
        literal::LitError::Unsupported(m) | literal::LitError::Invalid(m) => m,
    })
}

/// [`parse`] with macros defined before the first line, as `-D NAME=VALUE` does for a C
/// compiler (each visible everywhere in the file; a `#define` of one of them with another
/// value is an error, `#ifndef NAME` skips its default). Recorded in [`Program::defines`].
pub fn parse_with(
    file: &str,
    source: &str,
    lang: Lang,
    defines: &[(String, i64)],
) -> Result<Program, Diagnostic> {
    parse_unit(
        file,
        source,
        lang,
        defines,
        &PpOptions::default(),
        &preprocess::Disk,
    )
}

/// [`parse_with`] with the preprocessor's options (`-I`, `-D NAME=TEXT`, `-U`) and the loader
/// of the headers `#include` names (the disk, or edited texts). The program's spans are those
/// of the user's files ([`Program::sources`]); the options are recorded there for re-parses.
pub fn parse_unit(
    file: &str,
    source: &str,
    lang: Lang,
    defines: &[(String, i64)],
    pp: &PpOptions,
    loader: &dyn preprocess::Loader,
) -> Result<Program, Diagnostic> {
    let unit = preprocess::preprocess(file, source, lang, defines, pp, loader)?;
    let identity = unit.is_identity();
    let recursion = pp.recursion.unwrap_or(crate::ir::DEFAULT_RECURSION);
    let mut program = lower_text(file, &unit, lang, defines, recursion)?;
    if !identity {
        preprocess::spans::map_program(&mut program, &unit);
    }
    // The preprocessor's warnings, at their own file's position (after the mapping).
    program.notes.splice(
        0..0,
        unit.warnings.iter().map(|d| crate::ir::Note {
            span: crate::ir::Span {
                start: 0,
                end: 0,
                line: d.line,
                column: d.column,
            },
            message: d.message.clone(),
            warning: true,
            file: Some(d.file.clone()),
        }),
    );
    program.sources.options = pp.clone();
    comments::apply_loop_bounds(file, source, &mut program)?;
    Ok(program)
}

/// Parses a rewritten version of `prog`'s unit as `prog` was parsed (same language, `-D`s and
/// preprocessor options): the main file `name` with text `text`, and the headers in
/// `headers` (path as read, lexically normalised → new text) instead of their text on disk.
pub fn reparse(
    name: &str,
    text: &str,
    prog: &crate::ir::Program,
    headers: &[(std::path::PathBuf, String)],
) -> Result<crate::ir::Program, Diagnostic> {
    let loader = preprocess::Overlay {
        files: headers
            .iter()
            .map(|(p, t)| (preprocess::normalize(p), t.clone()))
            .collect(),
        fallback: &preprocess::Disk,
    };
    let pp = &prog.sources.options;
    parse_unit(name, text, prog.lang, &prog.defines, pp, &loader)
}

/// Whether `source` is a translation unit fensyn checks: after preprocessing, it defines
/// `main` (or the test dialect's `user_main`), the entry points [`parse_unit`] accepts. A
/// file that does not preprocess counts as one (checking it reports why). Directory mode
/// uses this to skip library files, which are read through the files that include them.
pub fn is_translation_unit(
    file: &str,
    source: &str,
    lang: Lang,
    defines: &[(String, i64)],
    pp: &PpOptions,
    loader: &dyn preprocess::Loader,
) -> bool {
    let Ok(unit) = preprocess::preprocess(file, source, lang, defines, pp, loader) else {
        return true;
    };
    let Ok(toks) = preprocess::lex::lex(&unit.text) else {
        return true;
    };
    // `main ( ... )` followed by `{` (after a trailing return type, `noexcept`, ...) before
    // any `;`, `,`, `=` or `)`: a definition, not a declaration or a call.
    (0..toks.len()).any(|i| {
        let named = matches!(toks[i].text.as_str(), "main" | "user_main");
        if !named || !toks.get(i + 1).is_some_and(|t| t.is("(")) {
            return false;
        }
        let mut depth = 0usize;
        let mut k = i + 1;
        while let Some(t) = toks.get(k) {
            if t.is("(") {
                depth += 1;
            } else if t.is(")") {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            k += 1;
        }
        toks.get(k + 1..)
            .unwrap_or(&[])
            .iter()
            .find(|t| ["{", ";", ",", "=", ")"].iter().any(|p| t.is(p)))
            .is_some_and(|t| t.is("{"))
    })
}

/// Parses and lowers the preprocessed text of `unit` (spans of that text).
fn lower_text(
    file: &str,
    unit: &preprocess::Unit,
    lang: Lang,
    defines: &[(String, i64)],
    recursion: u32,
) -> Result<Program, Diagnostic> {
    let source = unit.text.as_str();
    let src = Src {
        file,
        text: source,
        lang,
        unit: (!unit.is_identity()).then_some(unit),
    };
    let (prepared, atomic_pointer_at) = prepare_source(source);
    let (prepared, refused) = attributes::blank(&prepared);
    let prepared = match lang {
        Lang::Cpp => named_casts::rewrite(&prepared),
        Lang::C => prepared,
    };
    let (language, toplevel_query, threads_query): (Language, _, _) = match lang {
        Lang::C => (
            tree_sitter_c::LANGUAGE.into(),
            TOPLEVEL_QUERY,
            THREADS_QUERY,
        ),
        Lang::Cpp => (
            tree_sitter_cpp::LANGUAGE.into(),
            CPP_TOPLEVEL_QUERY,
            CPP_THREADS_QUERY,
        ),
    };
    let mut parser = Parser::new();
    parser
        .set_language(&language)
        .map_err(|e| src.internal(&format!("cannot load the grammar: {e}")))?;
    let tree = parser
        .parse(prepared.as_bytes(), None)
        .ok_or_else(|| src.internal("the parser gave up"))?;
    let root = tree.root_node();
    if let Some(bad) = first_syntax_error(root) {
        return Err(syntax_error(&src, bad));
    }
    if let Some((at, name)) = refused {
        return Err(attributes::refused(&src, at, &name));
    }
    let (top, threads) = match compiled_queries(lang, &language, toplevel_query, threads_query) {
        Ok(q) => q,
        Err(e) => return Err(src.internal(&e)),
    };

    let items = classify_items(root, top, prepared.as_bytes());

    // Pre-pass: function names, `main`, and the thread functions it spawns.
    let mut fn_names = HashSet::new();
    let mut fn_first: HashMap<String, usize> = HashMap::new();
    let mut defs: Vec<(&str, Node)> = Vec::new();
    for &(node, item) in &items {
        match item {
            Item::Function => {
                if let Some(name) = node
                    .child_by_field_name("declarator")
                    .and_then(function_declarator)
                    .and_then(|f| function_name(&src, f))
                {
                    fn_names.insert(name.to_string());
                    fn_first
                        .entry(name.to_string())
                        .or_insert(node.start_byte());
                    defs.push((name, node));
                }
            }
            Item::Declaration => {
                let mut c = node.walk();
                for d in node.children_by_field_name("declarator", &mut c) {
                    if let Some(name) = function_declarator(d).and_then(|f| function_name(&src, f))
                    {
                        fn_names.insert(name.to_string());
                        fn_first
                            .entry(name.to_string())
                            .or_insert(node.start_byte());
                    }
                }
            }
            _ => {}
        }
    }
    // The main thread: `main`, or (CDSChecker's test dialect) `user_main` when there is no
    // `main`.
    let main_name = if defs.iter().any(|(name, _)| *name == "main") {
        "main"
    } else {
        "user_main"
    };
    let Some(&(_, main_def)) = defs.iter().find(|(name, _)| *name == main_name) else {
        return Err(src.error_at_start("no `main` function"));
    };
    let fn_order = lower::funptr::function_order(&defs);
    let defined: HashSet<String> = fn_order.iter().cloned().collect();
    let facts = facts::collect(&src, root, &defs, &defined);
    let mut spawned = HashMap::new();
    cpp::std_thread_functions(&src, main_def, threads, prepared.as_bytes(), &mut spawned);
    reachable_spawns(&src, &defs, main_def, &facts, &mut spawned);
    let mut func_ids = HashMap::new();
    let mut lowered_defs = Vec::new();
    for &(name, node) in &defs {
        let wanted = if name == main_name {
            node.id() == main_def.id()
        } else {
            spawned.contains_key(name)
        };
        if wanted && !func_ids.contains_key(name) {
            func_ids.insert(name.to_string(), lowered_defs.len());
            lowered_defs.push(node.id());
        }
    }
    let main = func_ids.get(main_name).copied().unwrap_or(0);
    let mut fn_defs = HashMap::new();
    for &(name, node) in &defs {
        fn_defs.entry(name.to_string()).or_insert(node);
    }

    let mut cx = Ctx {
        src,
        globals: Vec::new(),
        global_tys: Vec::new(),
        global_index: HashMap::new(),
        handles: Vec::new(),
        outside_main: identifiers_outside(&facts, main_def),
        recursion,
        cell_tys: Vec::new(),
        objects: Vec::new(),
        object_index: HashMap::new(),
        statics: HashMap::new(),
        notes: Vec::new(),
        types: types::TypeEnv {
            atomic_pointer_at,
            structs: types::library_structs(),
            ..Default::default()
        },
        functions: vec![None; lowered_defs.len()],
        func_ids,
        fn_names,
        fn_first,
        initialised: HashSet::new(),
        fn_defs,
        init_leaves: None,
        inline_stmts: HashMap::new(),
        stmts: Vec::new(),
        slots: Vec::new(),
        main,
        main_name,
        spawned,
        loops: 0,
        layouts: Vec::new(),
        thread_locals: Vec::new(),
        fn_order,
        fn_taken: facts.fn_taken.clone(),
        facts,
        // GCC's predefined `__ATOMIC_*` orders, then `-D` (which may redefine them).
        macros: lower::ORDER_MACROS
            .iter()
            .map(|&(name, v, _)| (name.to_string(), v))
            .chain(defines.iter().cloned())
            .collect(),
        enumerators: HashMap::new(),
        const_globals: HashSet::new(),
        externs: Vec::new(),
        classes: Vec::new(),
        global_ctors: Vec::new(),
        class_templates: Vec::new(),
        instantiating: Vec::new(),
        class_scope: None,
    };

    // Main pass, in document order.
    let mut defined: HashSet<&str> = HashSet::new();
    for &(node, item) in &items {
        if lang == Lang::Cpp && node.kind() == "template_declaration" {
            cx.template_item(node)?;
            continue;
        }
        if !matches!(item, Item::Include | Item::Comment) {
            cx.instantiate_uses(node)?;
        }
        match item {
            Item::Include | Item::Comment => {}
            Item::Declaration => cx.global_decl(node)?,
            Item::Struct => {
                cx.define_class(node)?;
            }
            Item::Enum => cx.enum_item(node)?,
            Item::Typedef => cx.typedef(node)?,
            Item::Function => {
                let Some(fdecl) = node
                    .child_by_field_name("declarator")
                    .and_then(function_declarator)
                else {
                    return Err(src.unsupported(node, "function definition"));
                };
                let qualified = fdecl
                    .child_by_field_name("declarator")
                    .is_some_and(|d| d.kind() == "qualified_identifier");
                if qualified && lang == Lang::Cpp {
                    cx.out_of_line_member(node, fdecl)?;
                    continue;
                }
                let Some(name) = function_name(&src, fdecl) else {
                    return Err(src.unsupported(fdecl, "function declarator"));
                };
                if !defined.insert(name) {
                    let at = fdecl.child_by_field_name("declarator").unwrap_or(fdecl);
                    return Err(src.error(at, &format!("redefinition of `{name}`")));
                }
                if cx.global_index.contains_key(name)
                    || cx.object_index.contains_key(name)
                    || cx.handles.iter().any(|(h, _)| h == name)
                {
                    let at = fdecl.child_by_field_name("declarator").unwrap_or(fdecl);
                    return Err(src.error(at, &format!("redefinition of `{name}`")));
                }
                if let Some(&fid) = cx.func_ids.get(name) {
                    if lowered_defs.get(fid) == Some(&node.id()) {
                        let f = lower::lower_function(&mut cx, node, fid, fid == main)?;
                        if let Some(slot) = cx.functions.get_mut(fid) {
                            *slot = Some(f);
                        }
                    }
                }
            }
            // A stray `;` at file scope (`atomic_int flag;;`).
            Item::Other
                if node.kind() == "expression_statement" && named_children(node).is_empty() => {}
            Item::Other => return Err(unsupported_item(&src, node)),
        }
    }

    cx.check_externs(root)?;
    let mut functions = Vec::with_capacity(cx.functions.len());
    for f in cx.functions {
        functions.push(f.ok_or_else(|| src.internal("a thread function was not lowered"))?);
    }
    let mut program = Program {
        notes: cx.notes,
        globals: cx.globals,
        functions,
        main: cx.main,
        stmts: cx.stmts,
        slots: cx.slots,
        lang,
        defines: defines.to_vec(),
        layouts: cx.layouts,
        sources: Default::default(),
        loop_bounds: Default::default(),
    };
    // Inlined copies of a function share its source places: one slot each.
    program.merge_duplicate_slots();
    program
        .validate()
        .map_err(|e| src.internal(&format!("invalid IR: {e}")))?;
    Ok(program)
}

/// The two queries of a language, compiled once per process (compiling them costs about a
/// millisecond, more than parsing a litmus test).
fn compiled_queries(
    lang: Lang,
    language: &Language,
    toplevel: &str,
    threads: &str,
) -> Result<&'static (Query, Query), String> {
    use std::sync::OnceLock;
    static C: OnceLock<Result<(Query, Query), String>> = OnceLock::new();
    static CPP: OnceLock<Result<(Query, Query), String>> = OnceLock::new();
    let cell = match lang {
        Lang::C => &C,
        Lang::Cpp => &CPP,
    };
    let compiled = cell.get_or_init(|| {
        let top =
            Query::new(language, toplevel).map_err(|e| format!("bad query toplevel.scm: {e}"))?;
        let thr =
            Query::new(language, threads).map_err(|e| format!("bad query threads.scm: {e}"))?;
        Ok((top, thr))
    });
    compiled.as_ref().map_err(Clone::clone)
}

impl<'a> Ctx<'a> {
    /// Rejects a second definition of the struct or union tag `name` (`keyword` says which
    /// the new one is; both share the one table of record types).
    pub(crate) fn check_new_tag(&self, node: Node, name: Option<&str>, keyword: &str) -> R<()> {
        let taken = |n: &str| {
            self.types
                .structs
                .iter()
                .any(|s| s.name.as_deref() == Some(n))
        };
        match name {
            Some(n) if taken(n) => Err(self
                .src
                .error(node, &format!("redefinition of `{keyword} {n}`"))),
            _ => Ok(()),
        }
    }

    /// A top-level declaration: prototypes (ignored), global variables, global thread handles.
    fn global_decl(&mut self, node: Node<'a>) -> R<()> {
        let src = self.src;
        if let Some(i) = self.static_member_class(node) {
            return self.static_definition(i, node);
        }
        cpp::check_global_decl(&src, node)?;
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        let is_prototype = |d: Node| function_declarator(d).is_some();
        let class_type = node
            .child_by_field_name("type")
            .filter(|t| t.kind() == "type_identifier" && src.lang == Lang::Cpp)
            .and_then(|t| self.class_named(src.text(t)))
            .is_some_and(|c| c.constructs());
        if !class_type && !decls.is_empty() && decls.iter().all(|d| is_prototype(*d)) {
            for d in &decls {
                if let Some(f) = function_declarator(*d) {
                    let Some(name) = function_name(&src, f) else {
                        return Err(src.unsupported(f, "function pointer"));
                    };
                    if self.is_variable(name) {
                        let at = f.child_by_field_name("declarator").unwrap_or(f);
                        return Err(src.error(at, &format!("redefinition of `{name}`")));
                    }
                }
            }
            return Ok(());
        }
        self.define_inline_class(node)?;
        let spec = types::decl_spec(&src, &self.types, node)?;
        let constant = types::is_const(&src, node);
        let is_extern = matches!(&spec.storage, Some((s, _)) if s == "extern");
        if let Some((storage, n)) = &spec.storage {
            if storage != "static" && !is_extern {
                return Err(src.unsupported(*n, &format!("`{storage}` declaration")));
            }
        }
        if spec.thread_local.is_some() {
            return self.thread_local_decl(node, &spec, &decls);
        }
        if decls.is_empty() {
            // `struct S { ... };` written as a declaration: the definition was registered above.
            if matches!(spec.ty, types::BaseTy::Struct(_)) {
                return Ok(());
            }
            return Err(src.unsupported(node, "declaration that declares no variable"));
        }
        for d in decls {
            if let types::BaseTy::Struct(id) = spec.ty {
                let special = self
                    .class_of(id)
                    .is_some_and(|c| c.constructs() || c.dtor.is_some());
                let object = !matches!(d.kind(), "pointer_declarator" | "reference_declarator");
                if special && object {
                    self.global_class_object(d, id)?;
                    continue;
                }
            }
            if let Some(f) = function_declarator(d) {
                if function_name(&src, f).is_none() {
                    return Err(src.unsupported(f, "function pointer"));
                }
                continue;
            }
            let decl = types::declarator(&src, &spec, d, &mut |n| lower::const_eval(self, n))?;
            let name = src.text(decl.name);
            if is_extern && decl.init.is_none() {
                self.extern_decl(name, decl.name, &decl.ty)?;
                continue;
            }
            self.externs.retain(|(n, _)| n != name);
            let function_before = self
                .fn_first
                .get(name)
                .is_some_and(|&b| b < node.start_byte());
            if function_before
                || self.handles.iter().any(|(h, _)| h == name)
                || self.enumerators.contains_key(name)
            {
                return Err(src.error(decl.name, &format!("redefinition of `{name}`")));
            }
            if self.is_variable(name) {
                self.tentative(name, decl.name, &decl.ty, decl.init)?;
                continue;
            }
            if decl.init.is_some() {
                self.initialised.insert(name.to_string());
            }
            self.global_object(name, decl.name, &decl.ty, decl.init)?;
            if constant && matches!(decl.ty, types::Ty::Int { atomic: false, .. }) {
                if let Some(&loc) = self.global_index.get(name) {
                    self.const_globals.insert(loc);
                }
            }
        }
        Ok(())
    }

    /// `extern T name;`: the object is declared here (so that functions before its definition
    /// can name it) and defined by a later declaration, possibly in a `--link`ed file. One
    /// still undefined at the end is refused if the program names it ([`Ctx::check_externs`]).
    fn extern_decl(&mut self, name: &str, at: Node<'a>, ty: &types::Ty) -> R<()> {
        let src = self.src;
        if self.is_variable(name) {
            // A repeated `extern` still counts among the declarations (not the uses).
            if self.externs.iter().any(|(n, _)| n == name) {
                self.externs.push((name.to_string(), at));
            }
            return self.tentative(name, at, ty, None);
        }
        if thread_array_len(ty).is_some() || matches!(ty, types::Ty::Void) {
            return Err(src.unsupported(at, "`extern` declaration of this type"));
        }
        if let types::Ty::Struct(id) = ty {
            if self
                .class_of(*id)
                .is_some_and(|c| c.constructs() || c.dtor.is_some())
            {
                return Err(src.unsupported(at, "`extern` object of a class with a constructor"));
            }
        }
        self.global_object(name, at, ty, None)?;
        self.externs.push((name.to_string(), at));
        Ok(())
    }

    /// Refuses a variable declared `extern`, never defined, and named elsewhere in the tree
    /// under `root`: the program is incomplete (its value lives in a file not given).
    fn check_externs(&self, root: Node<'a>) -> R<()> {
        let src = self.src;
        if self.externs.is_empty() {
            return Ok(());
        }
        // Occurrences of each name in the tree, in one walk; its `extern` declarations are
        // among them.
        let mut named: HashMap<&str, usize> =
            self.externs.iter().map(|(n, _)| (n.as_str(), 0)).collect();
        walk_nodes(root, &mut |n| {
            if n.kind() == "identifier" {
                if let Some(k) = named.get_mut(src.text(n)) {
                    *k += 1;
                }
            }
        });
        for (name, at) in &self.externs {
            let declared = self.externs.iter().filter(|(n, _)| n == name).count();
            if named.get(name.as_str()).copied().unwrap_or(0) > declared {
                return Err(src.error(
                    *at,
                    &format!(
                        "`extern` variable `{name}` is used but never defined in this program \
                         (give the file that defines it with `--link FILE`)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A global variable (not a thread handle) of this name exists.
    pub(crate) fn is_variable(&self, name: &str) -> bool {
        self.global_index.contains_key(name)
            || self.object_index.contains_key(name)
            || self.thread_locals.iter().any(|v| v.name == name)
    }

    /// A thread-local declaration: records each variable with its constant initial values.
    fn thread_local_decl(&mut self, node: Node, spec: &types::DeclSpec, decls: &[Node]) -> R<()> {
        let src = self.src;
        for &d in decls {
            let decl = types::declarator(&src, spec, d, &mut |n| lower::const_eval(self, n))?;
            let name = src.text(decl.name).to_string();
            if self.is_variable(&name) || self.fn_first.contains_key(&name) {
                return Err(src.error(decl.name, &format!("redefinition of `{name}`")));
            }
            if matches!(decl.ty, types::Ty::Void | types::Ty::Thread) {
                return Err(src.unsupported(decl.name, "thread-local variable of this type"));
            }
            let mut cells = Vec::new();
            self.flatten(
                &name,
                &decl.ty,
                decl.name,
                lower::sync::Initial::Zero,
                &mut cells,
            )?;
            let mut values: Vec<i64> = cells.iter().map(|c| c.init).collect();
            if let Some(v) = decl.init {
                self.init_values(&decl.ty, v, &mut values, 0)?;
            }
            self.thread_locals.push(ThreadLocal {
                name,
                ty: decl.ty,
                values,
                start: node.start_byte(),
                span: src.span(decl.name),
            });
        }
        Ok(())
    }

    /// A second declaration of global `name`: C's tentative definitions (`int x; int x = 1;`)
    /// are one object, provided the types agree and at most one has an initialiser.
    fn tentative(&mut self, name: &str, at: Node, ty: &types::Ty, init: Option<Node>) -> R<()> {
        let src = self.src;
        let (base, existing) = match (self.global_index.get(name), self.object_index.get(name)) {
            (Some(&loc), _) => (loc, self.cell_tys.get(loc).cloned()),
            (None, Some(&i)) => match self.objects.get(i) {
                Some(o) => (o.base, Some(o.ty.clone())),
                None => return Err(src.internal("object index")),
            },
            (None, None) => return Err(src.internal("tentative definition of nothing")),
        };
        if existing.as_ref() != Some(ty) {
            return Err(src.error(at, &format!("conflicting types for `{name}`")));
        }
        let Some(v) = init else {
            return Ok(());
        };
        if !self.initialised.insert(name.to_string()) {
            return Err(src.error(at, &format!("redefinition of `{name}`")));
        }
        let mut values = vec![0i64; self.types.size(ty)];
        self.init_values(ty, v, &mut values, 0)?;
        for (k, value) in values.into_iter().enumerate() {
            let cell_ty = self.global_tys.get(base + k).copied().unwrap_or(IntTy::I64);
            if let Some(g) = self.globals.get_mut(base + k) {
                g.init = cell_ty.wrap(value);
            }
        }
        Ok(())
    }

    /// Declares global `name` (declarator name node `at`) of type `ty`.
    fn global_object(&mut self, name: &str, at: Node, ty: &types::Ty, init: Option<Node>) -> R<()> {
        use types::Ty;
        let src = self.src;
        match ty {
            Ty::Thread | Ty::Array(..)
                if thread_array_len(ty).is_some() && !self.outside_main.contains(name) =>
            {
                if let Some(v) = init {
                    return Err(src.unsupported(v, "initialiser for a thread handle"));
                }
                let len = match ty {
                    Ty::Array(_, n) => Some(*n),
                    _ => None,
                };
                self.handles.push((name.to_string(), len));
                Ok(())
            }
            Ty::Void => Err(src.error(at, &format!("variable `{name}` has type void"))),
            _ => {
                let (base, _) = self.alloc(name, at, ty, init)?;
                if ty.is_scalar() {
                    self.global_index.insert(name.to_string(), base);
                } else {
                    self.object_index
                        .insert(name.to_string(), self.objects.len() - 1);
                }
                Ok(())
            }
        }
    }

    /// Allocates the cells of an object of type `ty` named `name` (a global or a `static`
    /// local) with initialiser `init`; returns its first cell and records aggregates in
    /// `objects`.
    pub(crate) fn alloc(
        &mut self,
        name: &str,
        at: Node,
        ty: &types::Ty,
        init: Option<Node>,
    ) -> R<(Loc, Option<usize>)> {
        let src = self.src;
        let mut cells = Vec::new();
        self.flatten(name, ty, at, lower::sync::Initial::Zero, &mut cells)?;
        if cells.is_empty() {
            return Err(src.unsupported(at, &format!("`{name}` has no memory cells")));
        }
        let mut values: Vec<i64> = cells.iter().map(|c| c.init).collect();
        if let Some(v) = init {
            self.init_values(ty, v, &mut values, 0)?;
        }
        let base = self.globals.len();
        for (cell, value) in cells.into_iter().zip(values) {
            let cty = cell.ty;
            self.globals.push(Global {
                name: cell.name,
                atomic: cty.is_atomic(),
                init: cty.int_ty().wrap(value),
                sync: cell.sync,
                span: src.span(at),
            });
            self.global_tys.push(cty.int_ty());
            self.cell_tys.push(cty);
        }
        if ty.is_scalar() {
            return Ok((base, None));
        }
        self.objects.push(Object {
            base,
            ty: ty.clone(),
            start: at.start_byte(),
        });
        Ok((base, Some(self.objects.len() - 1)))
    }

    /// The scalar cells of an object, in memory order, with their names (`a[1].next`; the
    /// internal cells of a synchronisation object are named `b#round`, see
    /// `lower::sync::layout`).
    pub(crate) fn flatten(
        &self,
        name: &str,
        ty: &types::Ty,
        at: Node,
        how: lower::sync::Initial,
        out: &mut Vec<CellSpec>,
    ) -> R<()> {
        use types::Ty;
        let src = self.src;
        if out.len() > 1 << 16 {
            return Err(src.unsupported(at, "object with more than 65536 cells"));
        }
        match ty {
            Ty::Int { .. } | Ty::Ptr { .. } | Ty::Thread => out.push(CellSpec {
                name: name.to_string(),
                ty: ty.clone(),
                init: 0,
                sync: None,
            }),
            Ty::Mutex | Ty::Sync(_) => {
                let init = lower::sync::initial_cells(ty, how).unwrap_or_default();
                for ((cell, sync), init) in lower::sync::cells(name, ty).into_iter().zip(init) {
                    out.push(CellSpec {
                        name: cell,
                        ty: ty.clone(),
                        init,
                        sync,
                    });
                }
            }
            Ty::Array(t, n) => {
                for i in 0..*n {
                    self.flatten(&format!("{name}[{i}]"), t, at, how, out)?;
                }
            }
            Ty::Struct(id) => {
                let fields = self.types.fields_of(*id);
                for (f, t) in fields {
                    self.flatten(&format!("{name}.{f}"), &t, at, how, out)?;
                }
            }
            Ty::Void => return Err(src.error(at, "object of type void")),
        }
        Ok(())
    }

    /// Fills `values[off..]` from the initialiser `v` of an object of type `ty`: a constant for a
    /// scalar (for a pointer: `NULL`, `&global`, or an array name), a `{ ... }` list for an
    /// aggregate (missing elements are zero; designators are unsupported).
    pub(crate) fn init_values(
        &mut self,
        ty: &types::Ty,
        v: Node,
        values: &mut [i64],
        off: usize,
    ) -> R<()> {
        use types::Ty;
        let src = self.src;
        if let (Some(leaves), Ty::Int { .. } | Ty::Ptr { .. }) = (&mut self.init_leaves, ty) {
            leaves.push(v.id());
            if let Some(slot) = values.get_mut(off) {
                *slot = leaves.len() as i64;
            }
            return Ok(());
        }
        match ty {
            Ty::Mutex | Ty::Sync(_) if self.init_leaves.is_some() => Err(src.unsupported(
                v,
                "synchronisation object in an initialiser with non-constant values",
            )),
            Ty::Int { .. } => {
                let c = lower::const_eval(self, v)?;
                if let Some(slot) = values.get_mut(off) {
                    *slot = c;
                }
                Ok(())
            }
            Ty::Ptr { .. } => {
                let c = self.const_pointer(v)?;
                if let Some(slot) = values.get_mut(off) {
                    *slot = c;
                }
                Ok(())
            }
            Ty::Mutex | Ty::Sync(_) => {
                let v = lower::strip_parens(v);
                let cells = (v.kind() == "identifier")
                    .then(|| lower::sync::static_initializer(ty, src.text(v)))
                    .flatten();
                let Some(cells) = cells else {
                    let what = ty.describe(&self.types);
                    let names = lower::sync::initializer_names(ty);
                    return Err(src.unsupported(
                        v,
                        &format!("initialiser for a {what} (supported: {names})"),
                    ));
                };
                for (k, c) in cells.into_iter().enumerate() {
                    if let Some(slot) = values.get_mut(off + k) {
                        *slot = c;
                    }
                }
                Ok(())
            }
            Ty::Array(t, n) => {
                if v.kind() != "initializer_list" {
                    return Err(
                        src.unsupported(v, "array initialiser that is not a `{ ... }` list")
                    );
                }
                self.init_array(t, *n, v, values, off)
            }
            Ty::Struct(id) => {
                if v.kind() != "initializer_list" {
                    return Err(
                        src.unsupported(v, "struct initialiser that is not a `{ ... }` list")
                    );
                }
                self.init_struct(*id, v, values, off)
            }
            Ty::Thread | Ty::Void => Err(src.unsupported(v, "initialiser")),
        }
    }

    /// A constant pointer initialiser: `NULL`/`0`, `&x` of a global scalar, or an array name.
    fn const_pointer(&mut self, v: Node) -> R<i64> {
        let src = self.src;
        let v = lower::strip_parens(v);
        let v = if v.kind() == "cast_expression" {
            v.child_by_field_name("value")
                .map(lower::strip_parens)
                .unwrap_or(v)
        } else {
            v
        };
        let text = src.text(v);
        if v.kind() == "null" || text == "0" {
            return Ok(0);
        }
        let target = lower::address_of(&src, v)
            .map(|n| (n, true))
            .or_else(|| (v.kind() == "identifier").then_some((v, false)));
        if let Some((id, addr)) = target {
            let name = src.text(id);
            if let Some(rank) = self.fn_order.iter().position(|f| f == name) {
                if self.fn_defs.contains_key(name) && !self.is_variable(name) {
                    return Ok(lower::funptr::FN_BASE + rank as i64);
                }
            }
            if addr {
                if let Some(&loc) = self.global_index.get(name) {
                    return Ok(crate::ir::pointer_to(loc));
                }
            }
            if let Some(o) = self
                .object_index
                .get(name)
                .and_then(|&i| self.objects.get(i))
            {
                if addr || matches!(o.ty, types::Ty::Array(..)) {
                    return Ok(crate::ir::pointer_to(o.base));
                }
            }
        }
        Err(src.unsupported(
            v,
            "pointer initialiser (only NULL, `&global`, an array name or a function are \
             supported)",
        ))
    }

    /// Registers the struct or enum defined by the type of declaration `node`, if its type is
    /// a `struct { ... }` or an `enum { ... }` with a body (inside a function: a struct with
    /// member functions is refused).
    pub(crate) fn define_inline_struct(&mut self, node: Node) -> R<()> {
        if let Some(t) = node.child_by_field_name("type") {
            let defines = t.child_by_field_name("body").is_some();
            match t.kind() {
                "struct_specifier" | "class_specifier" | "union_specifier" if defines => {
                    self.define_struct(t)?;
                }
                "enum_specifier" if defines => self.define_enum(t)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// [`Self::define_inline_struct`] at file scope, where a class may have member functions.
    pub(crate) fn define_inline_class(&mut self, node: Node<'a>) -> R<()> {
        match node.child_by_field_name("type") {
            Some(t)
                if matches!(t.kind(), "struct_specifier" | "class_specifier")
                    && t.child_by_field_name("body").is_some() =>
            {
                self.define_class(t).map(|_| ())
            }
            _ => self.define_inline_struct(node),
        }
    }

    /// A struct or class defined at file scope (`struct_specifier` / `class_specifier` with a
    /// body): its id; a C++ class's members beyond data are recorded (`classes.rs`).
    pub(crate) fn define_class(&mut self, node: Node<'a>) -> R<usize> {
        let (id, class) = self.struct_body(node, None)?;
        if let Some(c) = class {
            self.push_class(c);
        }
        Ok(id)
    }

    /// Registers class `c` and the classes nested in it (which share its template bindings).
    pub(crate) fn push_class(&mut self, mut c: classes::ClassDef<'a>) {
        for mut inner in std::mem::take(&mut c.nested) {
            inner.bindings = c.bindings.clone();
            self.push_class(inner);
        }
        self.classes.push(c);
    }

    /// A struct defined inside a function (or a member's type): a class with members beyond
    /// data is refused there.
    pub(crate) fn define_struct(&mut self, node: Node) -> R<usize> {
        match self.struct_body(node, None)? {
            (_, Some(_)) => Err(self.src.unsupported(
                node,
                "class with member functions, constructors or static members defined inside a \
                 function or another class (define it at file scope)",
            )),
            (id, None) => Ok(id),
        }
    }

    /// Registers struct definition `node` (a `struct_specifier` with a body, or C++'s
    /// `class_specifier`); returns its id and, for a C++ class with members beyond data, its
    /// [`classes::ClassDef`].
    /// An instance of a class template (`inst`) is named by its C++ spelling, registered
    /// under its key and under its template's name (the injected class name, bound while the
    /// instance is defined: `templates.rs`).
    pub(crate) fn struct_body<'t>(
        &mut self,
        node: Node<'t>,
        inst: Option<&templates::Instance>,
    ) -> R<(usize, Option<classes::ClassDef<'t>>)> {
        let src = self.src;
        if node.kind() == "union_specifier" {
            return self.define_union(node).map(|id| (id, None));
        }
        let bare = node
            .child_by_field_name("name")
            .map(|n| src.text(n).to_string());
        let name = match (inst, &self.class_scope, &bare) {
            (Some(i), _, _) => Some(i.shown.clone()),
            (None, Some(outer), Some(b)) => Some(format!("{outer}::{b}")),
            _ => bare.clone(),
        };
        let Some(body) = node.child_by_field_name("body") else {
            // `struct S;` — a forward declaration: nothing to record.
            return Ok((usize::MAX, None));
        };
        if src.lang == Lang::Cpp {
            self.check_class_head(node)?;
        }
        self.check_new_tag(node, name.as_deref(), "struct")?;
        let id = self.types.structs.len();
        self.types.structs.push(types::StructDef {
            name: name.clone(),
            start: node.start_byte(),
            fields: Vec::new(),
            aliases: Vec::new(),
        });
        // In C++ the tag is a type name (`node *next;`), from the start of the body on.
        if let (Some(n), Lang::Cpp) = (&name, src.lang) {
            // A struct nested in an instance is also its bare name (bound with the
            // instance's parameters, `templates.rs`).
            let names = match (inst, &bare) {
                (Some(i), _) => vec![i.key.clone(), i.base.clone()],
                (None, Some(b)) if b != n => vec![n.clone(), b.clone()],
                _ => vec![n.clone()],
            };
            for n in names {
                self.types
                    .typedefs
                    .insert(n, (types::BaseTy::Struct(id), false));
            }
        }
        let mut class = classes::ClassDef {
            name: name.clone().unwrap_or_default(),
            id,
            methods: Vec::new(),
            declared: Vec::new(),
            ctors: Vec::new(),
            declares_ctor: false,
            dtor: None,
            defaults: Vec::new(),
            zeroed: Vec::new(),
            statics: Vec::new(),
            static_fns: Vec::new(),
            static_vars: Vec::new(),
            operators: Vec::new(),
            copy_ctor: false,
            bindings: Vec::new(),
            nested: Vec::new(),
        };
        let mut fields: Vec<(String, types::Ty)> = Vec::new();
        for fd in named_children(body) {
            if src.lang == Lang::Cpp && !self.class_member(&mut class, fd)? {
                continue;
            }
            if fd.kind() != "field_declaration" {
                return Err(src.unsupported(fd, "this struct member"));
            }
            self.data_member(id, &mut class, fd, &mut fields)?;
        }
        if fields.is_empty() {
            let what = if node.kind() == "class_specifier" {
                "empty class (a class needs a data member)"
            } else {
                "empty struct"
            };
            return Err(src.unsupported(node, what));
        }
        for (f, v) in &class.defaults {
            if let Some((_, t)) = fields.iter().find(|(n, _)| n == f) {
                self.check_default(f, t, *v)?;
            }
        }
        if let Some(s) = self.types.structs.get_mut(id) {
            s.fields = fields;
        }
        let is_class = node.kind() == "class_specifier"
            || class.constructs()
            || !class.methods.is_empty()
            || !class.declared.is_empty()
            || class.dtor.is_some()
            || !class.statics.is_empty()
            || !class.static_vars.is_empty()
            || !class.operators.is_empty()
            || !class.nested.is_empty();
        if src.lang == Lang::Cpp && is_class {
            if name.is_none() {
                return Err(src.unsupported(node, "anonymous class with member functions"));
            }
            return Ok((id, Some(class)));
        }
        Ok((id, None))
    }

    /// The data members declared by `fd` (a `field_declaration` of struct `id`), appended to
    /// `fields`; a C++ default member initialiser is recorded in `class`.
    fn data_member<'t>(
        &mut self,
        id: usize,
        class: &mut classes::ClassDef<'t>,
        fd: Node<'t>,
        fields: &mut Vec<(String, types::Ty)>,
    ) -> R<()> {
        use types::Ty;
        let src = self.src;
        self.define_inline_struct(fd)?;
        let spec = types::decl_spec(&src, &self.types, fd)?;
        if let Some((storage, at)) = &spec.storage {
            return Err(src.unsupported(*at, &format!("`{storage}` struct member")));
        }
        let mut c = fd.walk();
        let decls: Vec<Node> = fd.children_by_field_name("declarator", &mut c).collect();
        if decls.is_empty() {
            return Err(src.unsupported(fd, "anonymous struct member"));
        }
        for d in decls {
            if d.kind() == "bitfield_clause" {
                return Err(src.unsupported(d, "bit-field"));
            }
            let cls: &classes::ClassDef = class;
            let decl = types::declarator(&src, &spec, d, &mut |n| self.class_const_eval(cls, n))?;
            let fname = src.text(decl.name).to_string();
            if fields.iter().any(|(f, _)| *f == fname) {
                return Err(src.error(decl.name, &format!("duplicate member `{fname}`")));
            }
            let mut t = &decl.ty;
            while let Ty::Array(inner, _) = t {
                t = inner;
            }
            match t {
                Ty::Struct(s) if *s == id => {
                    return Err(src.error(
                        decl.name,
                        &format!("member `{fname}` has the incomplete type of its own struct"),
                    ))
                }
                Ty::Void => {
                    return Err(src.error(decl.name, &format!("member `{fname}` has type void")))
                }
                _ => {}
            }
            if relacy::zero_initialised(&src, fd) {
                class.zeroed.push(fname.clone());
            }
            fields.push((fname, decl.ty));
        }
        if let Some(v) = fd.child_by_field_name("default_value") {
            let mut c = fd.walk();
            let n = fd.children_by_field_name("declarator", &mut c).count();
            let Some((fname, _)) = fields.last().filter(|_| n == 1) else {
                return Err(src.unsupported(v, "default member initialiser of several members"));
            };
            class.defaults.push((fname.clone(), v));
        }
        Ok(())
    }

    /// `typedef T name;` for an integer or struct type `T` (pointer and array typedefs are
    /// unsupported).
    fn typedef(&mut self, node: Node<'a>) -> R<()> {
        let src = self.src;
        self.define_inline_class(node)?;
        if let Some((name, tag)) = self.forward_typedef(node) {
            self.types.forward_typedefs.insert(name, tag);
            return Ok(());
        }
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        if let Err(e) = self.typedef_names(node, &decls) {
            // The names it would define are refused where used (`TypeEnv::refused_typedefs`).
            let names: Vec<Node> = decls
                .iter()
                .filter_map(|d| declared_type_name(*d))
                .collect();
            if names.is_empty() || e.kind != DiagKind::Unsupported {
                return Err(e);
            }
            for n in names {
                let name = src.text(n).to_string();
                self.types.refused_typedefs.insert(name, e.clone());
            }
        }
        Ok(())
    }

    /// The names a `typedef` declares (`decls`, its declarators), with their types.
    fn typedef_names(&mut self, node: Node<'a>, decls: &[Node<'a>]) -> R<()> {
        let src = self.src;
        let spec = types::decl_spec(&src, &self.types, node)?;
        for &d in decls {
            if d.kind() != "type_identifier" {
                // A pointer or array type: its full type, by the declarator it names.
                let decl = types::declarator(&src, &spec, d, &mut |n| lower::const_eval(self, n))?;
                let name = src.text(decl.name).to_string();
                self.types.full_typedefs.insert(name, decl.ty);
                continue;
            }
            if spec.atomic_pointer {
                return Err(src.unsupported(d, "typedef of an atomic pointer"));
            }
            let name = src.text(d).to_string();
            if !matches!(spec.ty, types::BaseTy::Int(_) | types::BaseTy::Struct(_)) {
                return Err(src.unsupported(d, "typedef of this type"));
            }
            self.types.typedefs.insert(name, (spec.ty, spec.atomic));
        }
        Ok(())
    }
}

/// The name a typedef's declarator `d` declares (`name` in `* name`, `name[4]`, `(*name)(int)`).
fn declared_type_name(d: Node) -> Option<Node> {
    if d.kind() == "type_identifier" {
        return Some(d);
    }
    declared_type_name(d.child_by_field_name("declarator")?)
}

impl<'a> Ctx<'a> {
    /// `typedef struct tag name;` (one plain name, no qualifiers) where `struct tag` has no
    /// definition yet: the typedef's name and the tag.
    fn forward_typedef(&self, node: Node<'a>) -> Option<(String, String)> {
        let src = self.src;
        let ty = node.child_by_field_name("type")?;
        let tag = ty.child_by_field_name("name")?;
        let mut c = node.walk();
        let decls: Vec<Node> = node.children_by_field_name("declarator", &mut c).collect();
        let simple = ty.kind() == "struct_specifier"
            && ty.child_by_field_name("body").is_none()
            && named_children(node).len() == 2
            && matches!(decls.as_slice(), [d] if d.kind() == "type_identifier");
        let tag = src.text(tag);
        let defined = self
            .types
            .structs
            .iter()
            .any(|s| s.name.as_deref() == Some(tag));
        (simple && !defined).then(|| (src.text(decls[0]).to_string(), tag.to_string()))
    }
}

/// The length of a thread-handle array type (`Some(1)` for a single handle), if `ty` is one.
fn thread_array_len(ty: &types::Ty) -> Option<usize> {
    match ty {
        types::Ty::Thread => Some(1),
        types::Ty::Array(t, n) if matches!(**t, types::Ty::Thread) => Some(*n),
        _ => None,
    }
}

/// Classifies the direct children of the translation unit with `toplevel.scm`, in document order.
fn classify_items<'t>(root: Node<'t>, query: &Query, text: &[u8]) -> Vec<(Node<'t>, Item)> {
    let names = query.capture_names();
    let mut kinds: HashMap<usize, Item> = HashMap::new();
    let mut cursor = QueryCursor::new();
    // Every pattern starts at the translation unit: the cursor need not go below its children
    // (it would otherwise visit the whole tree).
    cursor.set_max_start_depth(Some(0));
    let mut matches = cursor.matches(query, root, text);
    while let Some(m) = matches.next() {
        for cap in m.captures() {
            let item = match names.get(cap.index as usize).copied() {
                Some("include") => Item::Include,
                Some("comment") => Item::Comment,
                Some("declaration") => Item::Declaration,
                Some("function") => Item::Function,
                Some("struct") => Item::Struct,
                Some("enum") => Item::Enum,
                Some("typedef") => Item::Typedef,
                _ => Item::Other,
            };
            let entry = kinds.entry(cap.node.id()).or_insert(item);
            if *entry == Item::Other {
                *entry = item;
            }
        }
    }
    let mut c = root.walk();
    root.named_children(&mut c)
        .map(|n| (n, kinds.get(&n.id()).copied().unwrap_or(Item::Other)))
        .collect()
}

/// The thread functions of the program: those passed to `pthread_create` or `thrd_create` in
/// the main thread's function, in the functions it calls (inlined), and, transitively, in the
/// thread functions found and the functions they call; with the API(s) they are passed to.
fn reachable_spawns(
    src: &Src,
    defs: &[(&str, Node)],
    main_def: Node,
    facts: &facts::Facts,
    out: &mut HashMap<String, SpawnedBy>,
) {
    let def_of = |name: &str| defs.iter().find(|(n, _)| *n == name).map(|&(_, d)| d);
    let mut seen: HashSet<usize> = HashSet::from([main_def.id()]);
    let mut work = vec![main_def];
    while let Some(def) = work.pop() {
        let Some(f) = facts.defs.get(&def.id()) else {
            continue;
        };
        let before: HashSet<String> = out.keys().cloned().collect();
        spawned_functions(src, f, out);
        // A thread function given by a pointer: any function whose address is taken and
        // whose return type fits the API (a pointer for pthreads, else C11's).
        if let Some(by) = out.remove(DYNAMIC_SPAWN) {
            for name in &facts.fn_taken {
                let Some(d) = def_of(name) else { continue };
                let returns_pointer = d
                    .child_by_field_name("declarator")
                    .is_some_and(|x| x.kind() == "pointer_declarator");
                let e = out.entry(name.clone()).or_default();
                e.pthread |= by.pthread && returns_pointer;
                e.c11 |= by.c11 && !returns_pointer;
                if !e.pthread && !e.c11 && !e.cpp {
                    out.remove(name);
                }
            }
        }
        let mut next: Vec<&str> = out
            .keys()
            .filter(|k| !before.contains(*k))
            .map(|k| k.as_str())
            .collect();
        next.extend(f.callees.iter().copied());
        next.sort_unstable();
        for name in next {
            if let Some(d) = def_of(name) {
                if seen.insert(d.id()) {
                    work.push(d);
                }
            }
        }
    }
}

/// The key of [`spawned_functions`]' output for threads created through a function pointer.
const DYNAMIC_SPAWN: &str = "\0function pointer";

/// Adds to `out` the functions passed to `pthread_create` (third argument) or `thrd_create`
/// (second argument) in the body of the function definition whose facts are `def`, with the
/// API(s) they are passed to; a function given by a pointer (not by its name, or by the name
/// of one of the definition's variables) is recorded as [`DYNAMIC_SPAWN`].
fn spawned_functions(src: &Src, def: &facts::DefFacts, out: &mut HashMap<String, SpawnedBy>) {
    for &(args, c11) in &def.spawns {
        let args = named_children(args);
        let Some(f) = args.get(if c11 { 1 } else { 2 }) else {
            continue;
        };
        // `(thrd_start_t)&f`, which C++ parses as `(thrd_start_t) & f` (`thread_fn_node`).
        let cast = matches!(
            lower::strip_parens(*f).kind(),
            "cast_expression" | "binary_expression"
        );
        let f = lower::thread_fn_node(src, *f);
        let named = f.kind() == "identifier" && !def.declared.contains(src.text(f));
        let key = if named {
            src.text(f).to_string()
        } else {
            DYNAMIC_SPAWN.to_string()
        };
        let by = out.entry(key).or_default();
        if c11 {
            by.c11 = true;
            by.cast |= cast;
        } else {
            by.pthread = true;
        }
    }
}

/// The identifiers used in the function definitions other than `main_def`.
fn identifiers_outside(facts: &facts::Facts, main_def: Node) -> HashSet<String> {
    let mut out = HashSet::new();
    for (_, f) in facts.defs.iter().filter(|(id, _)| **id != main_def.id()) {
        out.extend(f.identifiers.iter().map(|s| s.to_string()));
    }
    out
}

/// Calls `f` on every node of the tree under `root` (preorder, iteratively: no recursion).
pub(crate) fn walk_nodes<'t>(root: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

fn unsupported_item(src: &Src, node: Node) -> Diagnostic {
    let what = match node.kind() {
        "preproc_function_def" => "function-like macro (only object-like integer macros such as \
                                   `#define N 3` are supported)"
            .to_string(),
        "preproc_def" => "`#define` (only object-like integer macros are supported)".to_string(),
        "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_else" => {
            "preprocessor conditional `#if` (only `#ifdef` / `#ifndef` holding `#define`s are \
             supported)"
                .to_string()
        }
        "preproc_call" => {
            let directive = node
                .child_by_field_name("directive")
                .map(|d| src.text(d))
                .unwrap_or("#");
            format!("preprocessor directive `{directive}`")
        }
        "type_definition" => "typedef".to_string(),
        "struct_specifier" => "struct definition".to_string(),
        "union_specifier" => "union definition".to_string(),
        "enum_specifier" => "enum definition".to_string(),
        "linkage_specification" => "linkage specification".to_string(),
        "expression_statement"
            if named_children(node)
                .first()
                .is_some_and(|e| e.kind() == "gnu_asm_expression") =>
        {
            "inline assembly".to_string()
        }
        k if k.ends_with("_statement") => "statement outside a function".to_string(),
        k => cpp::unsupported_toplevel(k).unwrap_or_else(|| format!("top-level `{k}`")),
    };
    src.unsupported(node, &what)
}

/// The text tree-sitter parses for `source`: `_Atomic(T)` written `_Atomic T`, attributes
/// blanked (see `attributes.rs`) and, in C++, named casts written as C casts
/// (`named_casts.rs`), every byte offset unchanged — for the rewriter, whose edits are computed
/// on a tree of the same text the front end parsed.
pub(crate) fn parse_text(source: &str, lang: Lang) -> String {
    let text = attributes::blank(&prepare_source(source).0).0;
    match lang {
        Lang::Cpp => named_casts::rewrite(&text),
        Lang::C => text,
    }
}

/// tree-sitter C does not parse the `_Atomic(T)` type specifier; rewrite it to `_Atomic T`
/// by blanking the parentheses (keeping every byte offset, so spans stay exact).
fn prepare_source(src: &str) -> (String, Vec<usize>) {
    const KW: &[u8] = b"_Atomic";
    let mut pointer_at = Vec::new();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut bytes = src.as_bytes().to_vec();
    let mut i = 0;
    while i + KW.len() <= bytes.len() {
        let whole_word = bytes[i..].starts_with(KW)
            && (i == 0 || !is_ident(bytes[i - 1]))
            && bytes.get(i + KW.len()).is_none_or(|b| !is_ident(*b));
        if !whole_word {
            i += 1;
            continue;
        }
        let mut j = i + KW.len();
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t') {
            j += 1;
        }
        if bytes.get(j) == Some(&b'(') {
            let mut depth = 0usize;
            let mut close = None;
            for (k, b) in bytes.iter().enumerate().skip(j) {
                match b {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                    b';' | b'{' | b'}' | b'\n' => break,
                    _ => {}
                }
            }
            if let Some(k) = close {
                if bytes[j..k].contains(&b'*') {
                    pointer_at.push(i);
                }
                bytes[j] = b' ';
                bytes[k] = b' ';
            }
        }
        i += KW.len();
    }
    // tree-sitter-c knows `thread_local` and `__thread` but not C11's `_Thread_local`: the
    // same length with a space.
    const TLS: &[u8] = b"_Thread_local";
    let mut i = 0;
    while i + TLS.len() <= bytes.len() {
        let whole_word = bytes[i..].starts_with(TLS)
            && (i == 0 || !is_ident(bytes[i - 1]))
            && !bytes.get(i + TLS.len()).is_some_and(|&b| is_ident(b));
        if whole_word {
            bytes[i..i + TLS.len()].copy_from_slice(b"thread_local ");
        }
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII bytes, so this cannot fail.
    let text = String::from_utf8(bytes).unwrap_or_else(|_| src.to_string());
    (text, pointer_at)
}

/// The first `ERROR` or `MISSING` node in document order (iterative: no recursion).
fn first_syntax_error(root: Node) -> Option<Node> {
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

fn syntax_error(src: &Src, n: Node) -> Diagnostic {
    if let Some(d) = lower::goto_syntax_error(src, n) {
        return d;
    }
    let message = if n.is_missing() {
        let kind = n.kind();
        if kind.chars().any(|c| c.is_ascii_alphanumeric()) && n.is_named() {
            format!("missing {}", kind.replace('_', " "))
        } else {
            format!("missing `{kind}`")
        }
    } else {
        // The first token inside the error node.
        let mut leaf = n;
        while let Some(c) = leaf.child(0) {
            leaf = c;
        }
        let text = src.text(leaf).trim();
        let at_eof = n.end_byte() >= src.text.trim_end().len() && n.child_count() > 1;
        if text.is_empty() || at_eof {
            "unexpected end of file (unterminated construct starts here)".to_string()
        } else {
            let short: String = text.chars().take(24).collect();
            let ellipsis = if short.len() < text.len() { "..." } else { "" };
            format!("unexpected `{short}{ellipsis}`")
        }
    };
    src.diag(n, DiagKind::Syntax, &message)
}
