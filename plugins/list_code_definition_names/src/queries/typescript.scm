; TypeScript and TSX: classes (abstract too), functions and their overload signatures, methods
; and method signatures (interfaces, abstract members), and `module` blocks.

[(class_declaration name: (type_identifier) @name)
 (abstract_class_declaration name: (type_identifier) @name)] @definition

[(function_declaration name: (identifier) @name)
 (function_signature name: (identifier) @name)] @definition

[(method_definition name: (property_identifier) @name)
 (method_signature name: (property_identifier) @name)
 (abstract_method_signature name: (property_identifier) @name)] @definition

(module
  name: (identifier) @name) @definition
