; C++: what the C query finds, plus classes, member functions declared in a class and
; functions defined as `namespace_or_class::name`.

[(struct_specifier
   name: (type_identifier) @name
   body: (_))
 (class_specifier
   name: (type_identifier) @name)] @definition

(declaration
  type: (union_specifier name: (type_identifier) @name)) @definition

(function_declarator
  declarator: [(identifier) (field_identifier)] @name) @definition

(function_declarator
  declarator: (qualified_identifier
    scope: (namespace_identifier)
    name: (identifier) @name)) @definition

(type_definition
  declarator: (type_identifier) @name) @definition
