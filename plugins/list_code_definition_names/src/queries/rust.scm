; Rust: structs and functions (free functions, methods, trait default methods, nested fns).

(struct_item
  name: (type_identifier) @name) @definition

(function_item
  name: (identifier) @name) @definition

; An impl, trait or mod body that holds functions: no line of its own, but the separator goes
; before the block rather than before its first function.
(declaration_list
  (function_item)) @body
