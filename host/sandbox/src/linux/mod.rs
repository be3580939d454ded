//! The Linux implementation.

pub mod caps;
pub mod cgroup;
pub mod confine;
pub mod egress_link;
pub mod landlock_rules;
pub mod limits;
pub mod mounts;
pub mod namespaces;
pub mod net_filter;
pub mod probe;
pub mod reap;
pub mod signals;
pub mod supervisor;
