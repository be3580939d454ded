//! What read_file refuses to read: files beyond a size, images beyond a side.

/// Files larger than this are refused (Cline's 20 × 1000 × 1024 bytes).
pub const MAX_FILE_BYTES: u64 = 20 * 1000 * 1024;

/// Images wider or taller than this are refused.
pub const MAX_IMAGE_SIDE: usize = 7500;
