; Python: classes and functions, at any depth (methods and nested functions included).

[(class_definition name: (identifier) @name)
 (function_definition name: (identifier) @name)] @definition
