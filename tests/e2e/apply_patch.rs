//! apply_patch through the real plugin (tests to be written).
