; Calls to pthread_create, used to find the thread functions: the third
; argument of each match (src/frontend/mod.rs picks it out of @args,
; skipping comments) names a function to lower as a thread body.

(call_expression
  function: (identifier) @callee
  arguments: (argument_list) @args
  (#eq? @callee "pthread_create")) @call
