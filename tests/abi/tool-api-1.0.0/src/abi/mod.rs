//! The frozen v1 ABI: every type that crosses the boundary between the host and a plugin library.
//!
//! Only `abi_stable` types appear here. Payloads cross as JSON text (parameters, context, specs,
//! results), so adding a parameter or a context field never changes the ABI. The vtables of the
//! traits and the root module are *prefix types*, and abi_stable refuses to load a library whose
//! prefix types have fewer fields than the loader's. So nothing here ever grows: a new capability
//! goes into a new, separately named type (`ToolPluginV2`, ...) which the host tries before this one.

mod types;

pub use types::*;

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    package_version_strings, sabi_trait,
    sabi_types::VersionStrings,
    std_types::{RBox, ROption, RResult, RStr, RString, RVec},
    StableAbi,
};

/// The root module every plugin library exports (through [`crate::export_plugin!`]).
///
/// Frozen: `missing_field(panic)` is safe because v1 never gains fields.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ToolPluginV1Ref)))]
#[sabi(missing_field(panic))]
pub struct ToolPluginV1 {
    /// Who the plugin is: name, version, the tool-api version it was built with.
    pub manifest: extern "C" fn() -> PluginManifest,
    /// Builds the plugin's handlers. Called once per load; each handler serves one or more names.
    pub handlers: extern "C" fn() -> RResult<RVec<ToolHandlerBox>, ToolError>,
    /// Escape hatch for plugin-level requests added after v1 (`method`, JSON payload).
    pub call_extension:
        extern "C" fn(method: RStr<'_>, payload_json: RStr<'_>) -> RResult<RString, ToolError>,
    /// Stops the plugin's threads and runtimes. The code stays mapped: libraries are never unloaded.
    #[sabi(last_prefix_field)]
    pub shutdown: extern "C" fn(),
}

impl RootModule for ToolPluginV1Ref {
    declare_root_module_statics! {ToolPluginV1Ref}
    const BASE_NAME: &'static str = "tool_plugin";
    const NAME: &'static str = "toolhost plugin (tool-api v1)";
    // The tool-api crate version: abi_stable refuses a library whose major differs.
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Identity of a plugin library, returned by [`ToolPluginV1::manifest`].
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct PluginManifest {
    /// The plugin's name (its crate name).
    pub name: RString,
    /// The plugin's own version, semver.
    pub version: RString,
    /// The tool-api version the plugin was built against, semver.
    pub abi_version: RString,
    /// A JSON array of capability strings; unknown ones are ignored by the host.
    pub capabilities_json: RString,
    /// `cfg!(panic = "unwind")` in the plugin: without unwinding no panic can be caught.
    pub panic_unwind: bool,
}

/// A tool handler implemented by a plugin. One handler may serve several tool names
/// (write_to_file, replace_in_file and new_rule share one).
///
/// Every method is called on a host thread that is not an async worker; implementations
/// must not panic across the boundary (the SDK adapter catches every panic).
#[sabi_trait]
pub trait ToolHandler: Send + Sync {
    /// A JSON array of `ToolSpec`: one entry per name this handler serves.
    fn specs_json(&self) -> RString;

    /// The short description that prefixes results, e.g. `[read_file for 'src/a.rs']`.
    fn describe(&self, call: ToolCall<'_>) -> RString;

    /// Runs a complete tool call.
    fn execute(&self, call: ToolCall<'_>, host: HostRef<'_>) -> RResult<ToolOutput, ToolError>;

    /// Handles a tool call that is still streaming: UI updates only, never a result or a side effect.
    fn handle_partial(&self, call: ToolCall<'_>, host: HostRef<'_>) -> RResult<(), ToolError>;

    /// Escape hatch for handler-level requests added after v1.
    #[sabi(last_prefix_field)]
    fn call_extension(
        &self,
        method: RStr<'_>,
        payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError>;
}

/// Services the host offers to a handler during one call. Built fresh by the host for each call.
#[sabi_trait]
pub trait HostServices: Send + Sync {
    /// A progress or UI event (`kind` is a Cline say type), possibly a partial update.
    fn say(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool);

    /// Asks the user (`kind` is a Cline ask type). Returns an `AskReply` as JSON, or
    /// `UNAVAILABLE` when nobody can answer.
    fn ask(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) -> RResult<RString, ToolError>;

    /// Applies the approval policy to an `ApprovalRequest` (JSON); returns an `ApprovalDecision` (JSON).
    fn request_approval(&self, request_json: RStr<'_>) -> RResult<RString, ToolError>;

    /// Resolves a path against the workspace and reports a `PathVerdict` (JSON): where it leads,
    /// whether it is inside the workspace and whether `.clineignore` blocks it.
    fn check_path(&self, path: RStr<'_>) -> RString;

    /// Records a successful read of `absolute_path` (modified at `mtime_ms`) in the task's read
    /// cache and returns how many times it has now been read unchanged (1 for a fresh read).
    fn record_file_read(&self, absolute_path: RStr<'_>, mtime_ms: u64) -> u32;

    /// Drops one path from the task's read cache, or all of them when `absolute_path` is empty.
    fn forget_file_reads(&self, absolute_path: RStr<'_>);

    /// The task's current count of consecutive mistakes.
    fn mistake_count(&self) -> u32;

    /// A setting from the host's settings, as JSON, by dotted key (`"model.supports_images"`).
    fn setting(&self, key: RStr<'_>) -> ROption<RString>;

    /// Writes a log record through the host's logger (`level`: 1 error .. 5 trace).
    fn log(&self, level: u8, target: RStr<'_>, message: RStr<'_>);

    /// Whether this call has been cancelled (timeout, user, shutdown).
    fn is_cancelled(&self) -> bool;

    /// Sleeps up to `timeout_ms`, waking early on cancellation; returns whether it was cancelled.
    fn wait_cancelled(&self, timeout_ms: u64) -> bool;

    /// Calls another tool by name through the host's full dispatch (policy, approval, hooks).
    fn invoke_tool(&self, name: RStr<'_>, params_json: RStr<'_>) -> RResult<ToolOutput, ToolError>;

    /// Escape hatch for host services added after v1 (`service`, `method`, JSON payload).
    #[sabi(last_prefix_field)]
    fn call_service(
        &self,
        service: RStr<'_>,
        method: RStr<'_>,
        payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError>;
}

/// An owned handler, as a plugin returns it.
pub type ToolHandlerBox = ToolHandler_TO<'static, RBox<()>>;

/// The host services for one call, borrowed for the duration of that call.
pub type HostRef<'a> = HostServices_TO<'a, abi_stable::sabi_types::RRef<'a, ()>>;
