; C: structs with a body, unions declared with a name, function declarators (definitions and
; prototypes alike) and typedef names.

(struct_specifier
  name: (type_identifier) @name
  body: (_)) @definition

(declaration
  type: (union_specifier name: (type_identifier) @name)) @definition

(function_declarator
  declarator: (identifier) @name) @definition

(type_definition
  declarator: (type_identifier) @name) @definition
