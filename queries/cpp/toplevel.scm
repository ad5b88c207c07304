; Top-level items of a C++ translation unit, classified by the front end
; (src/frontend/mod.rs) exactly like C's (queries/c/toplevel.scm). Every direct
; child of the translation unit is captured as @item; the more specific
; captures below name the items the front end understands. Anything captured
; only as @item is rejected as unsupported at its position (with a C++ message
; from src/frontend/cpp.rs for namespaces, templates, classes, ...).
;
; `using namespace std;` is ignored like an #include: the front end accepts the
; std:: names with or without their `std::` qualification anyway. Any other
; `using` (another namespace, `using std::atomic;`, an alias) is unsupported.

; Directives never reach the parse (the preprocessor blanks them: src/frontend/preprocess/).
(translation_unit (preproc_include) @include)
((translation_unit
  (using_declaration) @include)
  (#match? @include "^using[ \t\r\n]+namespace[ \t\r\n]+std[ \t\r\n]*;$"))
(translation_unit (comment) @comment)
(translation_unit (declaration) @declaration)
(translation_unit (function_definition) @function)
; `struct S { ... };` and `typedef struct { ... } S;`: plain structs of data members (the
; front end refuses methods, constructors, base classes, access specifiers, ... with a
; C++ message from src/frontend/cpp.rs). A struct's name is a type name, as in C++.
(translation_unit (struct_specifier) @struct)
(translation_unit (union_specifier) @struct)
; `class C { ... };`: a class (src/frontend/classes.rs).
(translation_unit (class_specifier) @struct)
; `enum E { A, B };` (enumerators are integer constants: src/frontend/enums.rs).
(translation_unit (enum_specifier) @enum)
(translation_unit (type_definition) @typedef)
(translation_unit (_) @item)
