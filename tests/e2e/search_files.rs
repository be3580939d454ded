//! search_files through the real plugin (tests to be written).
