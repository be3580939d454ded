//! execute_command through the real plugin (tests to be written).
