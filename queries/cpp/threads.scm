; Thread creation in C++, used to find the thread functions (src/frontend/mod.rs
; and src/frontend/cpp.rs).
;
; pthread_create and C11 thrd_create work in C++ as in C (same captures as
; queries/c/threads.scm: the function argument of each match names a thread
; function, @callee tells which API spawned it).
(call_expression
  function: (identifier) @callee
  arguments: (argument_list) @args
  (#any-of? @callee "pthread_create" "thrd_create")) @call

; `std::thread t(f);` (a function declaration to the grammar: the most vexing
; parse), `std::thread t{f};`, `std::thread t(f, arg);` and the same with
; `thread` under `using namespace std;`: the first argument of each declarator
; of @thread_decl names a thread function (a lambda is lowered where it stands).
((declaration
  type: (_) @thread_type) @thread_decl
  (#match? @thread_type "^(std[ \t]*::[ \t]*)?thread$"))

; `t = std::thread(f, arg);`, `t[i] = std::thread{f, i};`, `std::thread t =
; std::thread(f);` (and `thread(...)` under `using namespace std;`): the first
; argument of @thread_ctor_args names a thread function.
(call_expression
  function: (_) @thread_ctor
  arguments: (argument_list) @thread_ctor_args
  (#match? @thread_ctor "^(std[ \t]*::[ \t]*)?thread$"))
(compound_literal_expression
  type: (_) @thread_ctor
  value: (initializer_list) @thread_ctor_args
  (#match? @thread_ctor "^(std[ \t]*::[ \t]*)?thread$"))
