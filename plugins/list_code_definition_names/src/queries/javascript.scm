; JavaScript and JSX: classes, functions, methods other than constructors, and variables bound
; to arrow functions or function expressions. Comments directly above a definition are part of
; its span for the separators.

((comment)* @doc
  .
  [(class_declaration name: (_) @name)
   (class name: (_) @name)] @definition)

((comment)* @doc
  .
  [(function_declaration name: (identifier) @name)
   (generator_function_declaration name: (identifier) @name)] @definition)

((comment)* @doc
  .
  (method_definition name: (property_identifier) @name) @definition
  (#not-eq? @name "constructor"))

((comment)* @doc
  .
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition))

((comment)* @doc
  .
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition))
