//! tool-api: the stable ABI between the toolhost host and its tool plugins, and the plugin
//! author's SDK.
//!
//! - [`abi`]: the frozen v1 boundary types (`ToolPluginV1`, `ToolHandler`, `HostServices`, ...).
//!   Only this module knows abi_stable; the host converts at one place.
//! - [`js`]: JavaScript's string semantics (trimming, UTF-16 lengths), which Cline's texts and
//!   tools follow; also reachable as `sdk::js`.
//! - [`model`]: the JSON payloads carried inside the ABI's strings (specs, context, results).
//! - [`sdk`]: what a plugin author uses: the [`sdk::Tool`] trait, [`sdk::Params`], [`sdk::Ctx`],
//!   and the [`submit_tool!`] / [`export_plugin!`] macros.
//! - [`texts`]: the model-visible texts shared by host and plugins.
//! - [`workspace`]: the workspace capability: roots, `.clineignore`, and file access whose
//!   checks hold for the file really reached (shared by the host's checks and the plugins).
//!
//! A minimal plugin:
//!
//! ```no_run
//! use tool_api::sdk::prelude::*;
//!
//! struct Echo;
//!
//! impl Tool for Echo {
//!     fn specs(&self) -> Vec<ToolSpec> {
//!         vec![ToolSpec::simple("echo", "Echoes `text`.", &[("text", "The text.", true)])]
//!     }
//!     fn execute(&self, call: &Call, _ctx: &Ctx<'_>) -> ToolResult {
//!         Ok(ToolContent::text(call.params.required("text")?))
//!     }
//! }
//!
//! tool_api::submit_tool!(Echo);
//! tool_api::export_plugin!();
//! ```
#![deny(missing_docs)]
// `#[sabi_trait]` expands to impls that rustc 1.95 flags as non-local definitions.
#![allow(non_local_definitions)]

pub mod abi;
pub mod js;
pub mod model;
pub mod sdk;
pub mod texts;
pub mod workspace;

/// The ABI version: this crate's version, recorded in every plugin's manifest and checked by
/// abi_stable when a plugin loads.
///
/// The compatibility rule: a host loads every plugin built against a tool-api of the same
/// major version. Within a major version, published boundary types never change and never
/// grow (abi_stable refuses a plugin whose types have fewer fields than the host's); a new
/// capability arrives as a new, separately named type (`ToolPluginV2`, ...) that newer hosts try
/// before falling back to v1, and plugins keep exporting the oldest type that has what they use.
/// New parameters, context fields and result blocks travel as JSON and change nothing here.
/// A new major version (or a new abi_stable minor version) is a break: plugins must be rebuilt.
pub const ABI_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Registers a tool inside its plugin library; [`export_plugin!`] gathers every registration.
///
/// The argument is an expression building the tool; it runs when the host loads the plugin.
#[macro_export]
macro_rules! submit_tool {
    ($tool:expr) => {
        $crate::__private::inventory::submit! {
            $crate::sdk::ToolRegistration { build: || $crate::sdk::handler_box($tool) }
        }
    };
}

/// Exports the plugin's root module, built from the crate's name and version and every tool
/// registered with [`submit_tool!`]. Use it once, in the plugin's `lib.rs`.
///
/// `export_plugin!(capabilities: [tool_api::model::DYNAMIC_TOOLS_CAPABILITY])` also declares
/// capabilities (the constants of [`model`]), and
/// `export_plugin!(capabilities: [], shutdown: my_crate::close_everything)` names a function the
/// plugin's `shutdown` runs first (before the SDK's runtime stops), to close what the plugin
/// keeps open across calls.
#[macro_export]
macro_rules! export_plugin {
    () => {
        $crate::export_plugin!(capabilities: []);
    };
    (capabilities: [$($capability:expr),* $(,)?]) => {
        $crate::export_plugin!(capabilities: [$($capability),*], shutdown: $crate::__private::nothing_to_close);
    };
    (capabilities: [$($capability:expr),* $(,)?], shutdown: $shutdown:path) => {
        extern "C" fn __toolhost_shutdown() {
            // Contained: no panic (nor a panicking payload's destructor) may leave the library.
            let _ = $crate::sdk::contain($shutdown);
            $crate::__private::stop_runtime();
        }

        extern "C" fn __toolhost_manifest() -> $crate::abi::PluginManifest {
            $crate::__private::manifest(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
                &[$($capability),*],
            )
        }

        fn __toolhost_root_module() -> $crate::abi::ToolPluginV1Ref {
            $crate::__private::root_module(__toolhost_manifest, __toolhost_shutdown)
        }

        // This is what abi_stable's `#[export_root_module]` expands to. It is written out here
        // because that attribute names `::abi_stable` by absolute path, which would make every
        // plugin depend on abi_stable directly; this way plugins depend on tool-api alone and the
        // abi_stable version is pinned in one place. A tool-api test checks the symbol name.
        #[doc(hidden)]
        #[no_mangle]
        #[allow(non_upper_case_globals)]
        pub static _1as_0lib_1header_0root_bmodule_bloader: $crate::__private::abi_stable::library::LibHeader = {
            extern "C" fn erased_root_module() -> $crate::__private::abi_stable::library::RootModuleResult {
                $crate::__private::abi_stable::library::__call_root_module_loader(__toolhost_root_module)
            }
            // SAFETY: the constructor returns the module type named here, as the attribute's
            // expansion guarantees with the same call.
            unsafe {
                $crate::__private::abi_stable::library::LibHeader::from_constructor::<$crate::abi::ToolPluginV1Ref>(
                    erased_root_module,
                    $crate::__private::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

/// Support for the macros. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use abi_stable;
    pub use inventory;

    use abi_stable::prefix_type::PrefixTypeTrait;
    use abi_stable::std_types::{RErr, RResult, RStr, RString, RVec};

    use crate::abi::{
        PluginManifest, ToolError, ToolErrorKind, ToolHandlerBox, ToolPluginV1, ToolPluginV1Ref,
    };
    use crate::sdk::{guard, ToolRegistration};

    /// The symbol abi_stable looks up; must equal `abi_stable::library::ROOT_MODULE_LOADER_NAME`.
    pub const ROOT_MODULE_SYMBOL: &str = "_1as_0lib_1header_0root_bmodule_bloader";

    /// Builds a manifest for a plugin built with this tool-api.
    pub fn manifest(name: &str, version: &str, capabilities: &[&str]) -> PluginManifest {
        PluginManifest {
            name: RString::from(name),
            version: RString::from(version),
            abi_version: RString::from(crate::ABI_VERSION),
            capabilities_json: RString::from(
                serde_json::to_string(capabilities).unwrap_or_else(|_| "[]".to_string()),
            ),
            panic_unwind: cfg!(panic = "unwind"),
        }
    }

    /// Builds the root module of a plugin library.
    pub fn root_module(
        manifest: extern "C" fn() -> PluginManifest,
        shutdown: extern "C" fn(),
    ) -> ToolPluginV1Ref {
        ToolPluginV1 {
            manifest,
            handlers,
            call_extension,
            shutdown,
        }
        .leak_into_prefix()
    }

    /// The default plugin-specific shutdown step: nothing.
    pub fn nothing_to_close() {}

    /// Every handler registered in this library image, built now.
    extern "C" fn handlers() -> RResult<RVec<ToolHandlerBox>, ToolError> {
        let built = guard(|| {
            Ok(inventory::iter::<ToolRegistration>
                .into_iter()
                .map(|registration| (registration.build)())
                .collect::<RVec<_>>())
        });
        built.into()
    }

    extern "C" fn call_extension(
        method: RStr<'_>,
        _payload: RStr<'_>,
    ) -> RResult<RString, ToolError> {
        RErr(ToolError::new(
            ToolErrorKind::UNAVAILABLE,
            format!("unknown plugin extension '{method}'"),
        ))
    }

    /// Stops the SDK's runtime, if this plugin uses it.
    pub fn stop_runtime() {
        #[cfg(feature = "runtime")]
        {
            let _ = crate::sdk::contain(crate::sdk::runtime::shutdown);
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_exported_symbol_is_the_one_abi_stable_looks_up() {
            assert_eq!(
                super::ROOT_MODULE_SYMBOL,
                abi_stable::library::ROOT_MODULE_LOADER_NAME
            );
        }
    }
}
