//! list_code_definition_names through the real plugin (tests to be written).
