; Go: functions and methods (with the comments directly above them), and type specs (structs,
; interfaces and other named types).

((comment)* @doc
  .
  [(function_declaration name: (identifier) @name)
   (method_declaration name: (field_identifier) @name)] @definition)

(type_spec
  name: (type_identifier) @name) @definition
