//! What the tools that run commands share: the host's verdict on a command ([`policy`]: its
//! permissions, `.clineignore`, the plan preset's guard) and the sandbox it runs in
//! ([`sandbox`]: what goes before the shell, how to describe it, and what the model is told
//! when it seems to have refused something).

pub mod policy;
pub mod sandbox;
