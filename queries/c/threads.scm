; Calls to pthread_create and C11 thrd_create, used to find the thread functions: the
; function argument of each match (src/frontend/mod.rs picks it out of @args, skipping
; comments: the third argument of pthread_create, the second of thrd_create) names a function
; to lower as a thread body; @callee tells which API spawned it (and so which signature the
; function must have).

(call_expression
  function: (identifier) @callee
  arguments: (argument_list) @args
  (#any-of? @callee "pthread_create" "thrd_create")) @call
