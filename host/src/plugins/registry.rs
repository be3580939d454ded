//! The registry: tool name → handler, built from every plugin directory at startup.
//!
//! Duplicate names: the first registration wins. Directories are searched in the order given,
//! the libraries of a directory in file-name order, so the winner is predictable; the loser's
//! other names still register, and one warning names both libraries. A second library with the
//! same plugin name is skipped whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_api::model::{ToolSpec, DYNAMIC_TOOLS_CAPABILITY, SPECS_FROM_ENVIRONMENT_CAPABILITY};

use super::discovery::library_files;
use crate::error::{CallError, ErrorKind};
use serde_json::Value;

use super::handler::{CallServices, HandlerApi};
use super::handler_call::{HandlerCall, Ran, Watch};
use super::index::PluginIndex;
use super::isolation::Placement;
use super::loader::{self, PluginInfo};
use crate::settings::Isolation;
use crate::settings::ToolSet;

/// One handler of a plugin. Several names may share it.
pub struct Handler {
    /// Stable within one host run: `<plugin>/<index>`. Equal for names sharing a handler.
    pub id: String,
    /// The plugin that provides it.
    pub plugin: Arc<PluginInfo>,
    /// The handler object.
    pub handler: HandlerRef,
}

/// A handler of a plugin, reached through the plugin: the library of a plugin known from the
/// index is opened by the first call that needs it. When it cannot be opened then, every method
/// answers with the reason as an error (`describe` with the bare tool name).
pub struct HandlerRef {
    plugin: Arc<PluginInfo>,
    index: usize,
}

impl HandlerRef {
    /// The handler at `index` of `plugin`.
    pub fn new(plugin: Arc<PluginInfo>, index: usize) -> Self {
        Self { plugin, index }
    }

    /// Whether the plugin's library is open: notifications go only to handlers that have run.
    pub fn is_open(&self) -> bool {
        self.plugin.is_loaded()
    }

    fn handler(&self) -> Result<Arc<dyn HandlerApi>, CallError> {
        self.plugin
            .handler(self.index)
            .map_err(|why| CallError::new(ErrorKind::Unavailable, why))
    }

    /// See [`HandlerApi::describe`].
    pub fn describe(&self, call: &HandlerCall<'_>) -> String {
        match self.handler() {
            Ok(handler) => handler.describe(call),
            Err(_) => format!("[{}]", call.tool_name),
        }
    }

    /// See [`HandlerApi::run`]; a library that cannot be opened ends the call with why.
    pub fn run(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
        timeout: std::time::Duration,
        watch: &dyn Watch,
    ) -> Ran {
        match self.handler() {
            Ok(handler) => handler.run(call, services, timeout, watch),
            Err(e) => Ran::Ended(Err(e), None),
        }
    }

    /// See [`HandlerApi::partial`].
    pub fn partial(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
    ) -> Result<(), CallError> {
        self.handler()?.partial(call, services)
    }

    /// Sends the handler extension `method` with a JSON payload and reads its JSON answer.
    pub fn request(&self, method: &str, payload: &Value) -> Result<Value, CallError> {
        self.handler()?.extension(method, payload)
    }
}

/// A registered tool name.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The tool's spec.
    pub spec: ToolSpec,
    /// Its handler.
    pub handler: Arc<Handler>,
}

/// Something wrong with one plugin file; the host carries on without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The library file.
    pub file: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

/// Every registered tool, and what went wrong while loading.
///
/// A registry is an immutable snapshot: hot swap builds a new one beside it
/// ([`Registry::with_replaced`]) while calls in flight keep the old one alive.
#[derive(Default, Clone)]
pub struct Registry {
    /// Shared, so that a call takes its tool without copying the spec and its schema.
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// The handlers of plugins declaring [`DYNAMIC_TOOLS_CAPABILITY`], asked for their run-time
    /// tools by [`crate::Host::lookup`] and [`crate::Host::tools`].
    dynamic: Vec<Arc<Handler>>,
    plugins: Vec<Arc<PluginInfo>>,
    warnings: Vec<LoadWarning>,
    /// The tool set served: a plugin of another set is not registered.
    tool_set: ToolSet,
}

impl Registry {
    /// Loads every library in `dirs`, each where `placement` says it runs.
    pub fn load(dirs: &[PathBuf], placement: &Placement) -> Self {
        Self::load_dirs(dirs, placement, false)
    }

    /// Loads a private copy of every library in `dirs`, so that the files may be replaced
    /// while the host runs (hot swap).
    pub fn load_copies(dirs: &[PathBuf], placement: &Placement) -> Self {
        Self::load_dirs(dirs, placement, true)
    }

    fn load_dirs(dirs: &[PathBuf], placement: &Placement, copies: bool) -> Self {
        // Private copies exist to load a file again; the index would skip the loading.
        let mut index = if copies {
            PluginIndex::default()
        } else {
            PluginIndex::open()
        };
        let mut registry = Self {
            tool_set: placement.tool_set.clone().unwrap_or_default(),
            ..Self::default()
        };
        for dir in dirs {
            match library_files(dir) {
                Ok(files) => {
                    for file in files {
                        registry.add_library(&file, placement, copies, &mut index);
                    }
                }
                Err(e) => registry.warn(dir, format!("cannot read plugin directory: {e}")),
            }
        }
        index.save();
        registry
    }

    /// Registers one library: from its index entry when it has a current one, else by loading
    /// it (and indexing it when it loaded cleanly).
    fn add_library(
        &mut self,
        file: &Path,
        placement: &Placement,
        copy: bool,
        index: &mut PluginIndex,
    ) {
        if let Some(entry) = index.lookup(file) {
            if let Some((info, handlers)) = entry.plugin(file) {
                let info = match placement.isolation(file, Some(&info.name)) {
                    Isolation::InProcess => info,
                    Isolation::Process => {
                        match placement.launch(file, Some((&info.name, &info.capabilities))) {
                            Ok(launch) => info.isolated(launch),
                            Err(e) => return self.warn(file, e.to_string()),
                        }
                    }
                };
                return self.add_plugin(file, info, handlers);
            }
        }
        let loaded = loader::load_placed(file, placement, copy);
        match loaded.map_err(|e| e.to_string()).and_then(|info| {
            let specs = info.handler_specs()?;
            Ok((info, specs))
        }) {
            Ok((info, specs)) => {
                let warnings = self.warnings.len();
                let indexable = !info.has_capability(SPECS_FROM_ENVIRONMENT_CAPABILITY);
                if indexable {
                    index.record(file, &info, &specs);
                }
                self.add_plugin(file, info, specs);
                if !indexable || self.warnings.len() > warnings {
                    // Its specs may change, or something about it was refused: load it (and
                    // warn) every time.
                    index.forget(file);
                }
            }
            Err(message) => {
                index.forget(file);
                self.warn(file, message);
            }
        }
    }

    /// Loads exactly `files`, in the order given (a curated bundle's list), with the duplicate
    /// rules of [`Registry::load`]. `earlier` are warnings about files the caller refused before
    /// loading; they come first. `admit` sees each loaded plugin and may refuse it: its message
    /// becomes the warning and no name registers (the library stays mapped, as every library
    /// does). Only tool names for which `enabled` is true stay registered.
    pub fn load_files<Refusal: std::fmt::Display>(
        files: &[PathBuf],
        placement: &Placement,
        earlier: Vec<LoadWarning>,
        admit: impl Fn(&Path, &PluginInfo) -> Result<(), Refusal>,
        enabled: impl Fn(&str) -> bool,
    ) -> Self {
        let mut registry = Self {
            tool_set: placement.tool_set.clone().unwrap_or_default(),
            ..Self::default()
        };
        for warning in earlier {
            registry.warn(&warning.file, warning.message);
        }
        for file in files {
            let loaded = loader::load_placed(file, placement, false)
                .map_err(|e| e.to_string())
                .and_then(|info| {
                    admit(file, &info)
                        .map(|()| info)
                        .map_err(|refusal| refusal.to_string())
                })
                .and_then(|info| Ok((info.handler_specs()?, info)));
            match loaded {
                Ok((specs, info)) => registry.add_plugin(file, info, specs),
                Err(message) => registry.warn(file, message),
            }
        }
        registry.tools.retain(|name, _| enabled(name));
        registry
    }

    fn warn(&mut self, file: &Path, message: String) {
        tracing::warn!(target: "toolhost::plugins", "{}: {message}", file.display());
        self.warnings.push(LoadWarning {
            file: file.to_path_buf(),
            message,
        });
    }

    /// A registry in which the plugin named like `info` (if any) is replaced by `info` and its
    /// handlers; every other plugin's registrations stay as they are.
    pub fn with_replaced(&self, file: &Path, info: PluginInfo) -> Self {
        let mut next = Self {
            tools: self
                .tools
                .iter()
                .filter(|(_, tool)| tool.handler.plugin.name != info.name)
                .map(|(name, tool)| (name.clone(), tool.clone()))
                .collect(),
            plugins: self
                .plugins
                .iter()
                .filter(|p| p.name != info.name)
                .cloned()
                .collect(),
            dynamic: self
                .dynamic
                .iter()
                .filter(|h| h.plugin.name != info.name)
                .cloned()
                .collect(),
            tool_set: self.tool_set.clone(),
            warnings: Vec::new(),
        };
        match info.handler_specs() {
            Ok(specs) => next.add_plugin(file, info, specs),
            Err(message) => next.warn(file, message),
        }
        next
    }

    /// The tool set this registry serves.
    pub fn tool_set(&self) -> &ToolSet {
        &self.tool_set
    }

    /// The loaded plugin named `name`.
    pub fn plugin(&self, name: &str) -> Option<&Arc<PluginInfo>> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// The loaded plugin that came from `file` (its original path, not a loading copy).
    pub fn plugin_from(&self, file: &Path) -> Option<&Arc<PluginInfo>> {
        self.plugins.iter().find(|p| p.path == file)
    }

    /// Registers a plugin's names; `handlers` holds each handler's specs.
    fn add_plugin(&mut self, file: &Path, info: PluginInfo, handlers: Vec<Vec<ToolSpec>>) {
        if !self.tool_set.admits(&info.capabilities) {
            tracing::debug!(
                "{}: plugin '{}' is not in the tool set {}",
                file.display(),
                info.name,
                self.tool_set
            );
            return;
        }
        if let Some(other) = self.plugins.iter().find(|p| p.name == info.name) {
            let message = format!(
                "plugin '{}' is already loaded from {}; this copy is skipped",
                info.name,
                other.path.display()
            );
            return self.warn(file, message);
        }
        let plugin = Arc::new(info);
        self.plugins.push(plugin.clone());
        let dynamic = plugin.has_capability(DYNAMIC_TOOLS_CAPABILITY);
        for (index, specs) in handlers.into_iter().enumerate() {
            let handler = Arc::new(Handler {
                id: format!("{}/{index}", plugin.name),
                plugin: plugin.clone(),
                handler: HandlerRef::new(plugin.clone(), index),
            });
            if dynamic {
                self.dynamic.push(handler.clone());
            }
            for spec in specs {
                self.register(file, spec, &handler);
            }
        }
    }

    fn register(&mut self, file: &Path, spec: ToolSpec, handler: &Arc<Handler>) {
        if spec.name.is_empty() || !spec.input_schema.is_object() {
            return self.warn(
                file,
                format!("a tool spec is invalid (name '{}')", spec.name),
            );
        }
        if let Some(existing) = self.tools.get(&spec.name) {
            let message = format!(
                "tool '{}' is already provided by plugin '{}' ({}); this plugin's '{}' is not registered",
                spec.name,
                existing.handler.plugin.name,
                existing.handler.plugin.path.display(),
                spec.name
            );
            return self.warn(file, message);
        }
        self.tools.insert(
            spec.name.clone(),
            Arc::new(RegisteredTool {
                spec,
                handler: handler.clone(),
            }),
        );
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.tools.get(name)
    }

    /// Every registered tool, by name.
    pub fn tools(&self) -> impl Iterator<Item = (&str, &RegisteredTool)> {
        self.tools
            .iter()
            .map(|(name, tool)| (name.as_str(), tool.as_ref()))
    }

    /// The handlers that serve run-time tools, in load order.
    pub fn dynamic_handlers(&self) -> &[Arc<Handler>] {
        &self.dynamic
    }

    /// The loaded plugins, in load order.
    pub fn plugins(&self) -> &[Arc<PluginInfo>] {
        &self.plugins
    }

    /// The warnings collected while loading.
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// The first loaded plugin declaring `capability`, and its first handler.
    pub fn plugin_with(&self, capability: &str) -> Option<HandlerRef> {
        self.plugins_with(capability).next()
    }

    /// Every loaded plugin declaring `capability` (its first handler), in load order.
    pub fn plugins_with<'a>(
        &'a self,
        capability: &'a str,
    ) -> impl Iterator<Item = HandlerRef> + 'a {
        self.plugins
            .iter()
            .filter(move |p| p.has_capability(capability) && p.failure().is_none())
            .map(|p| HandlerRef::new(p.clone(), 0))
    }

    /// Asks every plugin to stop its threads.
    pub fn shutdown(&self) {
        for plugin in &self.plugins {
            plugin.shutdown();
        }
    }
}
