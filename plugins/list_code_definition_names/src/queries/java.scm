; Java: classes, interfaces and methods.

[(class_declaration name: (identifier) @name)
 (interface_declaration name: (identifier) @name)
 (method_declaration name: (identifier) @name)] @definition
