//! Every construct the front end does not handle is refused, never skipped: `fensyn check`
//! exits with 3 and prints `FILE:LINE:COL: KIND: MESSAGE` at the construct.
//!
//! One table row per refused construct: a small complete C program, the expected position,
//! the diagnostic kind and a distinctive part of the message. All rows are run and every
//! mismatch is collected, so one failing run lists every problem.
//!

mod common;

use common::*;

const UNSUPPORTED: &str = "unsupported";
const ERROR: &str = "error";
const SYNTAX: &str = "syntax error";

struct Case {
    /// File name (without `.c`); unique. A name starting with `cpp_` is a C++ file (`.cpp`).
    name: &'static str,
    src: &'static str,
    /// Expected 1-based line and column.
    at: (usize, usize),
    kind: &'static str,
    /// Must occur in the message (after `FILE:LINE:COL: KIND: `).
    msg: &'static str,
}

const fn case(
    name: &'static str,
    src: &'static str,
    at: (usize, usize),
    kind: &'static str,
    msg: &'static str,
) -> Case {
    Case {
        name,
        src,
        at,
        kind,
        msg,
    }
}

fn cases() -> Vec<Case> {
    vec![
        // ---- goto and labels ------------------------------------------------------------
        case(
            "duplicate_label",
            "\
int main(void) {
again:;
again:;
    return 0;
}
",
            (3, 1),
            ERROR,
            "duplicate label `again`",
        ),
        case(
            "goto_undefined_label",
            "\
int main(void) {
    goto end;
}
",
            (2, 10),
            ERROR,
            "label `end` used but not defined",
        ),
        case(
            "computed_goto",
            "\
int main(void) {
    void *p = 0;
    goto *p;
}
",
            (3, 5),
            UNSUPPORTED,
            "computed goto",
        ),
        case(
            "label_address",
            "\
int main(void) {
out:;
    long p = (long)&&out;
    return 0;
}
",
            (3, 20),
            UNSUPPORTED,
            "address of a label",
        ),
        case(
            "label_at_block_end",
            "\
int main(void) {
    int r = 0;
    if (r) {
        r = 1;
    done:
    }
    return r;
}
",
            (5, 5),
            UNSUPPORTED,
            "label at the end of a block (`done: }`, allowed from C23 on): write `done: ;`",
        ),
        case(
            "goto_into_loop",
            "\
#include <pthread.h>
int x;
void *t(void *arg) {
    goto inside;
    while (x) {
    inside:
        x--;
    }
    return NULL;
}
int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, t, NULL);
    pthread_join(h, NULL);
    return 0;
}
",
            (4, 5),
            UNSUPPORTED,
            "`goto inside` jumps into the loop on line 5 from outside it",
        ),
        case(
            "goto_past_initialiser",
            "\
int f(void) {
    goto out;
    int r = 1;
out:
    return r;
}
int main(void) {
    return f();
}
",
            (2, 5),
            UNSUPPORTED,
            "`goto out` jumps past the initialisation of `r` on line 3 into its scope",
        ),
        case(
            "label_on_unbraced_body",
            "\
int x;
int main(void) {
    if (x)
    again:
        x--;
    return 0;
}
",
            (4, 5),
            UNSUPPORTED,
            "label on the unbraced body",
        ),
        // ---- function pointers ------------------------------------------------------------
        // ---- dynamic memory ---------------------------------------------------------------
        case(
            "malloc_as_void_pointer",
            "\
#include <stdlib.h>
int main(void) {
    void *p = malloc(4);
    return 0;
}
",
            (3, 15),
            UNSUPPORTED,
            "`malloc` whose result is used as a `void *`",
        ),
        case(
            "calloc_untyped",
            "\
#include <stdlib.h>
int main(void) {
    calloc(1, 4);
    return 0;
}
",
            (3, 5),
            UNSUPPORTED,
            "`calloc` whose result is not used as a typed pointer",
        ),
        // ---- inline assembly --------------------------------------------------------------
        case(
            "asm_gnu",
            "\
int main(void) {
    __asm__ volatile(\"mfence\" ::: \"memory\");
    return 0;
}
",
            (2, 5),
            UNSUPPORTED,
            "inline assembly",
        ),
        case(
            "asm_plain",
            "\
int x;
int main(void) {
    if (x)
        asm(\"nop\");
    return 0;
}
",
            (4, 9),
            UNSUPPORTED,
            "inline assembly",
        ),
        case(
            "asm_in_thread",
            "\
#include <pthread.h>
void *t(void *arg) {
    __asm__ __volatile__(\"\" ::: \"memory\");
    return NULL;
}
int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, t, NULL);
    pthread_join(h, NULL);
    return 0;
}
",
            (3, 5),
            UNSUPPORTED,
            "inline assembly",
        ),
        case(
            "asm_file_scope",
            "__asm__(\"nop\");\nint main(void) {\n    return 0;\n}\n",
            (1, 1),
            UNSUPPORTED,
            "inline assembly",
        ),
        // ---- floating point ---------------------------------------------------------------
        case(
            "float_literal",
            "\
int x;
int main(void) {
    x = 1.5;
    return 0;
}
",
            (3, 9),
            UNSUPPORTED,
            "floating-point literal `1.5`",
        ),
        case(
            "float_literal_exponent",
            "\
int x;
int main(void) {
    if (x < 1e3)
        x = 1;
    return 0;
}
",
            (3, 13),
            UNSUPPORTED,
            "floating-point literal `1e3`",
        ),
        case(
            "float_literal_global_initialiser",
            "\
int x = 2.5f;
int main(void) {
    return 0;
}
",
            (1, 9),
            UNSUPPORTED,
            "floating-point literal `2.5f`",
        ),
        case(
            "float_local",
            "\
int main(void) {
    float f = 0;
    return 0;
}
",
            (2, 5),
            UNSUPPORTED,
            "type `float`",
        ),
        case(
            "double_global",
            "\
double d;
int main(void) {
    return 0;
}
",
            (1, 1),
            UNSUPPORTED,
            "type `double`",
        ),
        case(
            "long_double_local",
            "\
int main(void) {
    long double d;
    return 0;
}
",
            (2, 5),
            UNSUPPORTED,
            "type `long double`",
        ),
        case(
            "double_cast",
            "\
int x;
int main(void) {
    x = (int)(double)x;
    return 0;
}
",
            (3, 15),
            UNSUPPORTED,
            "type `double`",
        ),
        case(
            "float_cast",
            "\
int x;
int main(void) {
    x = (float)1;
    return 0;
}
",
            (3, 10),
            UNSUPPORTED,
            "type `float`",
        ),
        case(
            "double_parameter",
            "\
int f(double d) { return 0; }
int main(void) {
    return f(1);
}
",
            (1, 7),
            UNSUPPORTED,
            "type `double`",
        ),
        case(
            "call_to_main",
            "\
int x;
int main(void) {
    if (x)
        main();
    return 0;
}
",
            (4, 9),
            UNSUPPORTED,
            "call to `main`",
        ),
        // ---- unknown library calls ----------------------------------------------------------
        case(
            "rand",
            "\
#include <stdlib.h>
int x;
int main(void) {
    x = rand();
    return 0;
}
",
            (4, 9),
            UNSUPPORTED,
            "call to `rand`",
        ),
        case(
            "rand_in_thread_condition",
            "\
#include <pthread.h>
#include <stdlib.h>
int x;
void *t(void *arg) {
    if (rand())
        x = 1;
    return NULL;
}
int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, t, NULL);
    pthread_join(h, NULL);
    return 0;
}
",
            (5, 9),
            UNSUPPORTED,
            "call to `rand`",
        ),
        case(
            "prototype_without_definition",
            "\
int foo(void);
int main(void) {
    foo();
    return 0;
}
",
            (3, 5),
            UNSUPPORTED,
            "call to `foo`, which is not defined in this file",
        ),
        // ---- preprocessor -------------------------------------------------------------------
        case(
            "pp_line_name",
            "\
int x;
#line 10 other.c
int main(void) {
    return 0;
}
",
            (2, 1),
            ERROR,
            "#line: expects a file name in double quotes",
        ),
        case(
            "pp_linemarker_flag",
            "\
# 1 \"pp_linemarker_flag.c\" 7
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "linemarker: unexpected `7`",
        ),
        case(
            "genmc_hazard_pointer",
            "\
#include <stdatomic.h>
#include <genmc.h>
atomic_int x;
int main(void) {
    __VERIFIER_hp_t *hp = __VERIFIER_hp_alloc();
    return 0;
}
",
            (5, 5),
            UNSUPPORTED,
            "`__VERIFIER_hp_t`: GenMC's hazard pointers (their deferred reclamation is not modelled)",
        ),
        case(
            "genmc_spawn",
            "\
#include <genmc.h>
void *worker(void *arg) { return arg; }
int main(void) {
    int t = __VERIFIER_spawn(worker, 0);
    return t;
}
",
            (4, 13),
            UNSUPPORTED,
            "`__VERIFIER_spawn`: GenMC's thread functions (use pthread_create and pthread_join)",
        ),
        case(
            "genmc_recovery_routine",
            "\
#include <genmc.h>
void __VERIFIER_recovery_routine(void) {
}
int main(void) {
    return 0;
}
",
            (2, 6),
            UNSUPPORTED,
            "`__VERIFIER_recovery_routine`: GenMC's persistency checking",
        ),
        case(
            "verifier_atomic_begin",
            "\
int x;
int main(void) {
    __VERIFIER_atomic_begin();
    x = 1;
    __VERIFIER_atomic_end();
    return 0;
}
",
            (3, 5),
            UNSUPPORTED,
            "call to `__VERIFIER_atomic_begin`, which is not defined in this file",
        ),
        case(
            "pp_include_next",
            "\
#include_next <stdio.h>
int main(void) {
    return 0;
}
",
            (1, 1),
            UNSUPPORTED,
            "`#include_next` directive",
        ),
        case(
            "pp_va_opt",
            "\
#define LOG(fmt, ...) f(fmt __VA_OPT__(,) __VA_ARGS__)
int main(void) {
    return 0;
}
",
            (1, 29),
            UNSUPPORTED,
            "`__VA_OPT__`",
        ),
        case(
            "pp_named_variadic",
            "\
#define LOG(fmt, args...) f(fmt, args)
int main(void) {
    return 0;
}
",
            (1, 22),
            UNSUPPORTED,
            "named variadic parameter",
        ),
        case(
            "pp_directive_in_arguments",
            "\
#define ID(a) a
int main(void) {
    int r = ID(
#ifdef X
        1
#else
        2
#endif
    );
    return r;
}
",
            (3, 13),
            UNSUPPORTED,
            "a directive inside the arguments of macro `ID`",
        ),
        case(
            "pp_error",
            "\
#ifndef N
#error N must be given with -DN=...
#endif
int main(void) {
    return 0;
}
",
            (2, 1),
            ERROR,
            "#error N must be given with -DN=...",
        ),
        case(
            "pp_missing_header",
            "\
#include \"queue_impl.h\"
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "cannot find header \"queue_impl.h\"",
        ),
        case(
            "pp_unknown_system_header",
            "\
#include <sys/mman.h>
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "unknown system header <sys/mman.h>",
        ),
        case(
            "pp_unterminated_if",
            "\
#if defined(FAST)
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "unterminated `#if`",
        ),
        // ---- unions and enums ---------------------------------------------------------------
        case(
            "union_punning",
            "\
union U { int a; long b; };
int main(void) {
    return 0;
}
",
            (1, 23),
            UNSUPPORTED,
            "union member `b` whose storage does not overlap `a`",
        ),
        case(
            "union_local_punning",
            "\
int main(void) {
    union { int a; unsigned b; } u;
    return 0;
}
",
            (2, 29),
            UNSUPPORTED,
            "type punning between different layouts is not supported",
        ),
        case(
            "union_member_punning",
            "\
struct S { union { int a; short b[2]; } u; };
int main(void) {
    return 0;
}
",
            (1, 33),
            UNSUPPORTED,
            "union member `b` whose storage does not overlap `a`",
        ),
        case(
            "union_of_mutex",
            "\
#include <pthread.h>
union U { pthread_mutex_t m; int a; };
int main(void) {
    return 0;
}
",
            (2, 27),
            UNSUPPORTED,
            "union member holding a synchronisation object",
        ),
        // ---- C++ classes ------------------------------------------------------------------
        case(
            "cpp_class_inheritance",
            "\
class Base { int b; };
class Derived : public Base { int d; };
int main() { return 0; }
",
            (2, 15),
            UNSUPPORTED,
            "class with a base class (inheritance is not supported)",
        ),
        case(
            "cpp_class_virtual",
            "\
class Shape {
    int sides;
public:
    virtual int area() { return 0; }
};
int main() { return 0; }
",
            (4, 5),
            UNSUPPORTED,
            "virtual function (not supported)",
        ),
        case(
            "cpp_class_operator_call",
            "\
class Counter {
    int n;
public:
    Counter &operator++() { n++; return *this; }
};
Counter c;
int main() { ++c; return 0; }
",
            (7, 16),
            UNSUPPORTED,
            "object of class `Counter` used as a value (calls of its overloaded operators",
        ),
        case(
            "cpp_class_operator_new",
            "\
class Pool {
    int n;
public:
    void *operator new(unsigned long size);
};
int main() { return 0; }
",
            (4, 11),
            UNSUPPORTED,
            "class-specific `operator new`",
        ),
        case(
            "cpp_class_friend_function",
            "\
class Lock {
    int word;
    friend int peek(Lock *l) { return l->word; }
};
int main() { return 0; }
",
            (3, 12),
            UNSUPPORTED,
            "friend function defined in a class",
        ),
        case(
            "cpp_template_partial_specialisation",
            "\
template <typename T> class box { T slot; };
template <typename T> class box<T *> { T *slot; };
int main() { return 0; }
",
            (2, 1),
            UNSUPPORTED,
            "partial specialisation of a class template",
        ),
        case(
            "cpp_template_explicit_specialisation",
            "\
template <typename T> class box { T slot; };
template <> class box<int> { long slot; };
int main() { return 0; }
",
            (2, 1),
            UNSUPPORTED,
            "explicit specialisation of a class template",
        ),
        case(
            "cpp_template_template_parameter",
            "\
template <template <typename> class C> struct holder { int v; };
int main() { return 0; }
",
            (1, 11),
            UNSUPPORTED,
            "template template parameter",
        ),
        case(
            "cpp_template_variadic",
            "\
template <typename... Ts> struct tuple { int v; };
int main() { return 0; }
",
            (1, 11),
            UNSUPPORTED,
            "variadic template (parameter pack)",
        ),
        case(
            "cpp_template_default_argument",
            "\
template <typename T = int> struct box { T v; };
int main() { return 0; }
",
            (1, 11),
            UNSUPPORTED,
            "default template argument",
        ),
        case(
            "cpp_template_sfinae",
            "\
template <typename T> struct box {
    typename std::enable_if<sizeof(T) == 4, int>::type v;
};
box<int> b;
int main() { return 0; }
",
            (2, 5),
            UNSUPPORTED,
            "type `typename std::enable_if",
        ),
        case(
            "cpp_function_template",
            "\
#include <atomic>
template <typename T> T load(std::atomic<T> &a) { return a.load(); }
int main() { return 0; }
",
            (2, 1),
            UNSUPPORTED,
            "function template `load` (only class templates are supported)",
        ),
        case(
            "cpp_template_member_template",
            "\
template <typename T> struct box {
    T v;
    template <typename U> void put(U u) { v = u; }
};
box<int> b;
int main() { return 0; }
",
            (3, 5),
            UNSUPPORTED,
            "member template",
        ),
        case(
            "cpp_template_value_argument",
            "\
template <int N> struct ring { int buf[N]; };
int n = 2;
ring<n> r;
int main() { return 0; }
",
            (3, 6),
            UNSUPPORTED,
            "template argument `n` (a value argument must be an integer literal",
        ),
        case(
            "cpp_template_member_renamed_parameter",
            "\
template <typename T> struct box { T v; void put(T x); };
template <typename U> void box<U>::put(U x) { v = x; }
int main() { return 0; }
",
            (2, 28),
            UNSUPPORTED,
            "an out-of-line member must repeat its class template's parameters",
        ),
        case(
            "cpp_dynamic_cast",
            "\
struct node { int v; };
int main() {
    node n;
    void *p = &n;
    node *q = dynamic_cast<node *>(p);
    return 0;
}
",
            (5, 15),
            UNSUPPORTED,
            "dynamic_cast (it needs the run-time type",
        ),
        case(
            "cpp_named_cast_postfix",
            "\
struct node { int v; };
node nodes[2];
int main() {
    char *base = (char *)nodes;
    int v = static_cast<node *>(base + 0)->v;
    return v;
}
",
            (5, 13),
            UNSUPPORTED,
            "`static_cast` of an operand with a binary operator, followed by",
        ),
        case(
            "cpp_reference_global",
            "int g;\nint &r = g;\nint main() {\n    return r;\n}\n",
            (2, 5),
            UNSUPPORTED,
            "reference here (a reference is supported as a parameter of a called function",
        ),
        case(
            "cpp_reference_to_temporary",
            "\
static int twice(const int &x) { return 2 * x; }
int main() {
    int v = twice(21);
    return v;
}
",
            (3, 19),
            UNSUPPORTED,
            "reference `x` bound to a value that is not a variable or an object in memory",
        ),
        case(
            "cpp_reference_other_type",
            "\
long g;
static void set(int &x) { x = 1; }
int main() {
    set(g);
    return 0;
}
",
            (4, 9),
            UNSUPPORTED,
            "reference `x` bound to `g` of another type",
        ),
        case(
            "cpp_rvalue_reference",
            "\
static void take(int &&x) { x = 1; }
int main() {
    take(1);
    return 0;
}
",
            (1, 22),
            UNSUPPORTED,
            "rvalue reference (`T &&`)",
        ),
        case(
            "cpp_class_destructor_scope",
            "\
class Log {
    int lines;
public:
    Log() : lines(0) {}
    ~Log() { lines = 0; }
};
int main() {
    for (Log log; ;) {
        break;
    }
    return 0;
}
",
            (8, 14),
            UNSUPPORTED,
            "class with a destructor declared outside a block (put it in braces)",
        ),
        case(
            "cpp_class_destructor_static",
            "\
class Log {
    int lines;
public:
    ~Log() { lines = 0; }
};
int main() {
    static Log log;
    return 0;
}
",
            (7, 16),
            UNSUPPORTED,
            "`static` local object of a class with a destructor",
        ),
        case(
            "extern_never_defined",
            "\
#include <stdatomic.h>
extern atomic_int ready;
int main(void) {
    return atomic_load(&ready);
}
",
            (2, 19),
            ERROR,
            "`extern` variable `ready` is used but never defined in this program (give the file that defines it with `--link FILE`)",
        ),
        case(
            "enum_local",
            "\
int main(void) {
    enum E { A, B } e = A;
    return 0;
}
",
            (2, 5),
            UNSUPPORTED,
            "enum definition inside a function (define it at file scope)",
        ),
        case(
            "enum_undefined_tag",
            "\
enum colour c;
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "`enum colour` is not defined",
        ),
        case(
            "enum_definition_inside_function",
            "int main(void) {\n    enum E { A };\n    return 0;\n}\n",
            (2, 5),
            UNSUPPORTED,
            "enum definition inside a function",
        ),
        case(
            "enumerator_out_of_int",
            "enum big { HUGE = 0x100000000 };\nint main(void) {\n    return 0;\n}\n",
            (1, 19),
            UNSUPPORTED,
            "enumerator value 4294967296 is outside the range of `int`",
        ),
        // ---- local aggregates, atomics and addresses ----------------------------------------
        case(
            "copy_of_a_struct_with_atomics",
            "#include <stdatomic.h>\nstruct S { atomic_int a; };\nstruct S g, h;\nint main(void) {\n    g = h;\n    return 0;\n}\n",
            (5, 5),
            UNSUPPORTED,
            "copy of a struct with atomic or synchronisation members",
        ),
        case(
            "address_of_parameter",
            "\
int f(int a) {
    int *p = &a;
    return 0;
}
int main(void) {
    return f(1);
}
",
            (2, 14),
            UNSUPPORTED,
            "address of `a`",
        ),
        // ---- threads ------------------------------------------------------------------------
        // ---- mutexes ------------------------------------------------------------------------
        case(
            "mutex_attribute_argument",
            "\
#include <pthread.h>
pthread_mutex_t m;
int x;
int main(void) {
    pthread_mutex_init(&m, &x);
    return 0;
}
",
            (5, 28),
            ERROR,
            "`x` is not a pthread_mutexattr_t (`pthread_mutex_init` expects the address of one)",
        ),
        // ---- sizeof, string literals, unsequenced ---------------------------------------------
        case(
            "sizeof_of_an_assignment",
            "\
int x;
int main(void) {
    x = sizeof(x = 1);
    return 0;
}
",
            (3, 16),
            UNSUPPORTED,
            "this operand of sizeof",
        ),
        case(
            "sizeof_expression_in_array_size",
            "\
int a[sizeof a];
int main(void) {
    return 0;
}
",
            (1, 14),
            ERROR,
            "undeclared identifier `a`",
        ),
        case(
            "string_literal_subscript",
            "\
int x;
int main(void) {
    x = \"abc\"[0];
    return 0;
}
",
            (3, 9),
            UNSUPPORTED,
            "string literal",
        ),
        case(
            "string_literal_argument",
            "\
int f(int a) { return a; }
int main(void) {
    f(\"x\");
    return 0;
}
",
            (3, 7),
            UNSUPPORTED,
            "string literal",
        ),
        case(
            "unsequenced_increment",
            "\
int main(void) {
    int i = 0;
    i = i++ + 1;
    return i;
}
",
            (3, 5),
            ERROR,
            "`i` is modified and also read or modified elsewhere in this expression, with no sequence point in between",
        ),
        case(
            "unsequenced_index",
            "\
int a[4];
int main(void) {
    int i = 0;
    a[i] = i++;
    return 0;
}
",
            (4, 5),
            ERROR,
            "`i` is modified and also read or modified elsewhere",
        ),
        case(
            "designator_range",
            "\
int a[4] = { [0 ... 3] = 1 };
int main(void) {
    return 0;
}
",
            (1, 14),
            UNSUPPORTED,
            "designator range",
        ),
        // ---- switch -------------------------------------------------------------------------
        case(
            "duffs_device",
            "\
int x;
int main(void) {
    int n = 5;
    int count = (n + 3) / 4;
    switch (n % 4) {
    case 0: do { x++;
    case 3:      x++;
    case 2:      x++;
    case 1:      x++;
            } while (--count > 0);
    }
    return 0;
}
",
            (7, 5),
            UNSUPPORTED,
            "'case' label nested inside a statement of the switch body",
        ),
        case(
            "case_inside_if_in_switch",
            "\
int x;
int main(void) {
    switch (x) {
    case 0:
        if (x) {
    case 1:
            x = 2;
        }
    }
    return 0;
}
",
            (6, 5),
            UNSUPPORTED,
            "'case' label nested inside a statement of the switch body",
        ),
        case(
            "default_inside_loop_in_switch",
            "int x;\nint main(void) {\n    switch (x) {\n    case 0:\n        while (x) {\n    default:\n            x = 2;\n        }\n    }\n    return 0;\n}\n",
            (6, 5),
            UNSUPPORTED,
            "'default' label nested inside a statement of the switch body",
        ),
        case(
            "case_outside_switch",
            "\
int x;
int main(void) {
    if (x) {
    case 1:
        x = 2;
    }
    return 0;
}
",
            (4, 5),
            ERROR,
            "'case' label not within a switch statement",
        ),
        // ---- memory orders ------------------------------------------------------------------
        case(
            "store_acquire",
            "\
#include <stdatomic.h>
atomic_int x;
int main(void) {
    atomic_store_explicit(&x, 1, memory_order_acquire);
    return 0;
}
",
            (4, 34),
            ERROR,
            "memory_order_acquire is not valid for a store",
        ),
        case(
            "load_release",
            "\
#include <stdatomic.h>
atomic_int x;
int main(void) {
    return atomic_load_explicit(&x, memory_order_release);
}
",
            (4, 37),
            ERROR,
            "memory_order_release is not valid for a load",
        ),
        case(
            "librace_width",
            "\
#include <threads.h>
#include \"librace.h\"
int count;
int user_main(int argc, char **argv) {
    store_64(&count, 1);
    return 0;
}
",
            (5, 14),
            UNSUPPORTED,
            "`store_64` on `&count`, which is an integer of 32 bits (librace's `store_64` accesses a 64-bit integer)",
        ),
        case(
            "librace_store_as_value",
            "\
#include \"librace.h\"
unsigned int v;
int main(void) {
    int r = store_32(&v, 1);
    return r;
}
",
            (4, 13),
            UNSUPPORTED,
            "`store_32` used as a value",
        ),
        case(
            "cpp_relacy_var_of_struct",
            "\
#include <unrelacy.h>
struct pair { int a; int b; };
rl::var<pair> cell;
int main() {
    return 0;
}
",
            (3, 1),
            UNSUPPORTED,
            "rl::var is supported for integer and pointer types",
        ),
        case(
            "cpp_relacy_backoff_member",
            "\
#include <unrelacy.h>
struct spinner {
    int turns;
    rl::backoff bo;
};
spinner s;
int main() {
    return 0;
}
",
            (4, 5),
            UNSUPPORTED,
            "an rl:: backoff is supported as a local variable",
        ),
        case(
            "memory_order_not_a_constant",
            "\
#include <stdatomic.h>
atomic_int x;
int main(void) {
    atomic_store_explicit(&x, 1, 5);
    return 0;
}
",
            (4, 34),
            UNSUPPORTED,
            "memory order argument must be a `memory_order_*` constant",
        ),
        // ---- undeclared and redefined names ------------------------------------------------
        case(
            "undeclared_identifier",
            "\
int main(void) {
    y = 1;
    return 0;
}
",
            (2, 5),
            ERROR,
            "undeclared identifier `y`",
        ),
        case(
            "undeclared_identifier_in_thread",
            "\
#include <pthread.h>
void *t(void *arg) {
    z++;
    return NULL;
}
int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, t, NULL);
    pthread_join(h, NULL);
    return 0;
}
",
            (3, 5),
            ERROR,
            "undeclared identifier `z`",
        ),
        case(
            "undeclared_thread_function",
            "\
#include <pthread.h>
int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, nothere, NULL);
    pthread_join(h, NULL);
    return 0;
}
",
            (4, 30),
            ERROR,
            "undeclared identifier `nothere`",
        ),
        case(
            "undeclared_atomic",
            "#include <stdatomic.h>\nint main(void) {\n    atomic_store(&q, 1);\n    return 0;\n}\n",
            (3, 19),
            ERROR,
            "undeclared identifier `q`",
        ),
        case(
            "undeclared_address",
            "int main(void) {\n    int *p = &q;\n    return 0;\n}\n",
            (2, 15),
            ERROR,
            "undeclared identifier `q`",
        ),
        // Two initialised definitions: a real C error (tentative definitions without a second
        // initialiser, `int x; int x = 1;`, are accepted).
        case(
            "redefinition_of_global",
            "\
int x = 2;
int x = 1;
int main(void) {
    return 0;
}
",
            (2, 5),
            ERROR,
            "redefinition of `x`",
        ),
        case(
            "redefinition_with_another_type",
            "\
#include <stdatomic.h>
int x;
atomic_long x;
int main(void) {
    return 0;
}
",
            (3, 13),
            ERROR,
            "conflicting types for `x`",
        ),
        case(
            "redefinition_of_function",
            "\
int f(void) { return 0; }
int f(void) { return 1; }
int main(void) {
    return f();
}
",
            (2, 5),
            ERROR,
            "redefinition of `f`",
        ),
        case(
            "redefinition_of_local",
            "\
int main(void) {
    int a = 1;
    int a = 2;
    return a;
}
",
            (3, 9),
            ERROR,
            "redefinition of `a`",
        ),
        case(
            "function_redefining_global",
            "int f;\nint f(void) { return 1; }\nint main(void) {\n    return 0;\n}\n",
            (2, 5),
            ERROR,
            "redefinition of `f`",
        ),
        // ---- structs and arrays -------------------------------------------------------------
        case(
            "undefined_struct",
            "\
struct S s;
int main(void) {
    return 0;
}
",
            (1, 1),
            ERROR,
            "`struct S` is not defined",
        ),
        case(
            "undefined_struct_member",
            "\
struct T { int a; struct S s; };
int main(void) {
    return 0;
}
",
            (1, 19),
            ERROR,
            "`struct S` is not defined",
        ),
        case(
            "constant_index_out_of_bounds",
            "\
int a[2];
int main(void) {
    a[5] = 1;
    return 0;
}
",
            (3, 5),
            ERROR,
            "index 5 is out of bounds of an array of 2 elements",
        ),
        case(
            "constant_index_out_of_bounds_read",
            "\
int a[2];
int x;
int main(void) {
    x = a[1 + 1];
    return 0;
}
",
            (4, 9),
            ERROR,
            "index 2 is out of bounds of an array of 2 elements",
        ),
        case(
            "negative_constant_index",
            "\
#include <stdatomic.h>
atomic_int a[2];
int main(void) {
    atomic_store(&a[-1], 1);
    return 0;
}
",
            (4, 19),
            ERROR,
            "index -1 is out of bounds of an array of 2 elements",
        ),
        case(
            "constant_index_out_of_bounds_inner_dimension",
            "\
int a[2][3];
int main(void) {
    a[1][3] = 1;
    return 0;
}
",
            (3, 5),
            ERROR,
            "index 3 is out of bounds of an array of 3 elements",
        ),
        // ---- whole program ------------------------------------------------------------------
        case(
            "missing_main",
            "\
int x;
void *t(void *arg) {
    x = 1;
    return 0;
}
",
            (1, 1),
            ERROR,
            "no `main` function",
        ),
        case("empty_file", "", (1, 1), ERROR, "no `main` function"),
        case(
            "main_only_declared",
            "\
int main(void);
",
            (1, 1),
            ERROR,
            "no `main` function",
        ),
        // ---- syntax errors ------------------------------------------------------------------
        case(
            "missing_semicolon",
            "\
int x;
int main(void) {
    x = 1
    return 0;
}
",
            (3, 10),
            SYNTAX,
            "missing `;`",
        ),
        case(
            "missing_semicolon_global",
            "\
int x
int main(void) {
    return 0;
}
",
            (1, 6),
            SYNTAX,
            "missing `;`",
        ),
        case(
            "missing_parenthesis",
            "\
int x;
int main(void) {
    if (x == 1 {
        x = 2;
    }
    return 0;
}
",
            (3, 15),
            SYNTAX,
            "missing `)`",
        ),
        case(
            "missing_brace",
            "\
int x;
int main(void) {
    x = 1;
    return 0;
",
            (4, 14),
            SYNTAX,
            "missing `}`",
        ),
    ]
}

#[test]
fn refused_constructs_are_reported_at_their_position() {
    let cases = cases();
    assert!(cases.len() >= 25, "{} rows", cases.len());
    assert_refused(&cases);
}

/// Runs `fensyn check` on every case and asserts exit 3 and the diagnostic at its position.
fn assert_refused(cases: &[Case]) {
    let mut names = std::collections::HashSet::new();
    for c in cases {
        assert!(names.insert(c.name), "duplicate row name {}", c.name);
    }

    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for c in cases {
        let ext = if c.name.starts_with("cpp_") {
            "cpp"
        } else {
            "c"
        };
        let path = dir.path().join(format!("{}.{ext}", c.name));
        std::fs::write(&path, c.src).unwrap();
        let file = path.to_str().unwrap();
        let out = fensyn(&["check", file]);
        let err = stderr(&out);
        // `error[KIND]: message` then ` --> file:line:col` (the diagnostic's position).
        let code_of = match c.kind {
            "syntax error" => "syntax",
            "unsupported" => "unsupported",
            _ => "input",
        };
        let title = format!("error[{code_of}]: ");
        let at = format!("--> {file}:{}:{}", c.at.0, c.at.1);
        let lines: Vec<&str> = err.lines().collect();
        let found = lines.windows(2).any(|w| {
            w[0].strip_prefix(&title).is_some_and(|m| m.contains(c.msg)) && w[1].trim_start() == at
        });
        let code = out.status.code();
        if code != Some(3) || !found {
            failures.push(format!(
                "{}: expected exit 3 and `{}.{ext}:{}:{}: {}: ...{}...`\n    got exit {:?}, stderr: {}",
                c.name,
                c.name,
                c.at.0,
                c.at.1,
                c.kind,
                c.msg,
                code,
                err.trim_end().replace(file, &format!("{}.{ext}", c.name)),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} refused constructs are not reported as expected:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// docs/supported.md lists every refusal of this file with its message, in a section
/// generated from the table above (`FENSYN_BLESS=1` rewrites it).
#[test]
fn every_refusal_is_documented() {
    const BEGIN: &str = "<!-- refusals:begin";
    const END: &str = "<!-- refusals:end -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/supported.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let mut table = String::from("\n| construct | kind | message (part) |\n|---|---|---|\n");
    for c in cases().into_iter().chain(builtin_cases()) {
        let msg = c.msg.replace('|', "\\|");
        let what = c.name.replace('_', " ");
        table.push_str(&format!("| {what} | {} | {msg} |\n", c.kind));
    }
    let start = doc
        .find(BEGIN)
        .expect("the refusals section's start marker");
    let start = start + doc[start..].find('\n').expect("a line after the marker") + 1;
    let end = doc.find(END).expect("the refusals section's end marker");
    if std::env::var_os("FENSYN_BLESS").is_some() {
        let new = format!("{}{}{}", &doc[..start], &table[1..], &doc[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..end],
        &table[1..],
        "docs/supported.md does not list the refusals of tests/refused.rs: regenerate it with \
         FENSYN_BLESS=1 cargo test --release --test suite refused::"
    );
}

/// The GCC/Clang builtins and attributes fensyn refuses (see src/frontend/lower/builtins.rs
/// and src/frontend/attributes.rs).
#[test]
fn refused_builtins_and_attributes_are_reported_at_their_position() {
    assert_refused(&builtin_cases());
}

fn builtin_cases() -> Vec<Case> {
    vec![
        case(
            "builtin_fetch_max",
            "\
int x;
int main(void) {
    int r = __atomic_fetch_max(&x, 5, __ATOMIC_RELAXED);
    return r;
}
",
            (3, 13),
            UNSUPPORTED,
            "call to `__atomic_fetch_max` (not a supported atomic builtin",
        ),
        case(
            "builtin_on_parameter",
            "\
static void set(int flag) {
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}
int main(void) {
    set(0);
    return 0;
}
",
            (2, 22),
            UNSUPPORTED,
            "`__atomic_store_n` on `flag`, which is not in memory (a parameter lives in a register",
        ),
        case(
            "builtin_acquire_store",
            "\
int flag;
int main(void) {
    __atomic_store_n(&flag, 1, __ATOMIC_ACQUIRE);
    return 0;
}
",
            (3, 32),
            ERROR,
            "__ATOMIC_ACQUIRE is not valid for a store",
        ),
        case(
            "builtin_order_out_of_range",
            "\
int flag;
int main(void) {
    return __atomic_load_n(&flag, 7);
}
",
            (3, 35),
            ERROR,
            "7 is not a memory order (__ATOMIC_* values are 0 to 5)",
        ),
        case(
            "builtin_test_and_set_on_int",
            "\
int lock;
int main(void) {
    while (__atomic_test_and_set(&lock, __ATOMIC_ACQUIRE))
        ;
    return 0;
}
",
            (3, 12),
            UNSUPPORTED,
            "only bool and char objects are supported",
        ),
        case(
            "builtin_generic_result_global",
            "\
int x, y;
int main(void) {
    __atomic_load(&x, &y, __ATOMIC_RELAXED);
    return 0;
}
",
            (3, 23),
            UNSUPPORTED,
            "the result of `__atomic_load` must be given as `&local`",
        ),
        case(
            "builtin_void_value",
            "\
_Bool x;
int main(void) {
    int r = __atomic_clear(&x, __ATOMIC_RELEASE);
    return r;
}
",
            (3, 13),
            ERROR,
            "`__atomic_clear` returns void: its value cannot be used",
        ),
        case(
            "attribute_cleanup",
            "\
void release(int *p) { }
int main(void) {
    int v __attribute__((cleanup(release))) = 1;
    return v;
}
",
            (3, 26),
            UNSUPPORTED,
            "attribute `cleanup`",
        ),
        case(
            "attribute_constructor",
            "\
int x;
[[gnu::constructor]] void init(void) { x = 1; }
int main(void) {
    return x;
}
",
            (2, 8),
            UNSUPPORTED,
            "attribute `constructor`",
        ),
    ]
}
