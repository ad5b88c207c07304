; Top-level items of a C translation unit, classified by the front end
; (src/frontend/mod.rs). Every direct child of the translation unit is
; captured as @item; the more specific captures below name the items the
; front end understands. Anything captured only as @item is rejected as
; unsupported at its position.

; Directives never reach the parse (the preprocessor blanks them: src/frontend/preprocess/).
(translation_unit (preproc_include) @include)
(translation_unit (comment) @comment)
(translation_unit (declaration) @declaration)
(translation_unit (function_definition) @function)
(translation_unit (struct_specifier) @struct)
(translation_unit (union_specifier) @struct)
; `enum E { A, B };` (enumerators are integer constants: src/frontend/enums.rs).
(translation_unit (enum_specifier) @enum)
(translation_unit (type_definition) @typedef)
(translation_unit (_) @item)
