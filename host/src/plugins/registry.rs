//! The registry: tool name → handler, built from every plugin directory at startup.
//!
//! Duplicate names: the first registration wins. Directories are searched in the order given,
//! the libraries of a directory in file-name order, so the winner is predictable; the loser's
//! other names still register, and one warning names both libraries. A second library with the
//! same plugin name is skipped whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_api::abi::ToolHandlerBox;
use tool_api::model::ToolSpec;

use super::discovery::library_files;
use super::loader::{self, PluginInfo};

/// One handler of a plugin. Several names may share it.
pub struct Handler {
    /// Stable within one host run: `<plugin>/<index>`. Equal for names sharing a handler.
    pub id: String,
    /// The plugin that provides it.
    pub plugin: Arc<PluginInfo>,
    /// The handler object.
    pub handler: ToolHandlerBox,
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
    tools: BTreeMap<String, RegisteredTool>,
    plugins: Vec<Arc<PluginInfo>>,
    warnings: Vec<LoadWarning>,
}

impl Registry {
    /// Loads every library in `dirs`.
    pub fn load(dirs: &[PathBuf]) -> Self {
        Self::load_dirs(dirs, false)
    }

    /// Loads a private copy of every library in `dirs`, so that the files may be replaced
    /// while the host runs (hot swap).
    pub fn load_copies(dirs: &[PathBuf]) -> Self {
        Self::load_dirs(dirs, true)
    }

    fn load_dirs(dirs: &[PathBuf], copies: bool) -> Self {
        let mut registry = Self::default();
        for dir in dirs {
            match library_files(dir) {
                Ok(files) => {
                    for file in files {
                        let loaded = if copies {
                            loader::load_copy(&file)
                        } else {
                            loader::load(&file)
                        };
                        match loaded {
                            Ok((info, handlers)) => registry.add_plugin(&file, info, handlers),
                            Err(e) => registry.warn(&file, e.to_string()),
                        }
                    }
                }
                Err(e) => registry.warn(dir, format!("cannot read plugin directory: {e}")),
            }
        }
        registry
    }

    /// Loads exactly `files`, in the order given (a curated bundle's list), with the duplicate
    /// rules of [`Registry::load`]. `earlier` are warnings about files the caller refused before
    /// loading; they come first. `admit` sees each loaded plugin and may refuse it: its message
    /// becomes the warning and no name registers (the library stays mapped, as every library
    /// does). Only tool names for which `enabled` is true stay registered.
    pub fn load_files(
        files: &[PathBuf],
        earlier: Vec<LoadWarning>,
        admit: impl Fn(&Path, &PluginInfo) -> Result<(), String>,
        enabled: impl Fn(&str) -> bool,
    ) -> Self {
        let mut registry = Self::default();
        for warning in earlier {
            registry.warn(&warning.file, warning.message);
        }
        for file in files {
            match loader::load(file) {
                Ok((info, handlers)) => match admit(file, &info) {
                    Ok(()) => registry.add_plugin(file, info, handlers),
                    Err(message) => registry.warn(file, message),
                },
                Err(e) => registry.warn(file, e.to_string()),
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
    pub fn with_replaced(
        &self,
        file: &Path,
        info: PluginInfo,
        handlers: Vec<ToolHandlerBox>,
    ) -> Self {
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
            warnings: Vec::new(),
        };
        next.add_plugin(file, info, handlers);
        next
    }

    /// The loaded plugin named `name`.
    pub fn plugin(&self, name: &str) -> Option<&Arc<PluginInfo>> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// The loaded plugin that came from `file` (its original path, not a loading copy).
    pub fn plugin_from(&self, file: &Path) -> Option<&Arc<PluginInfo>> {
        self.plugins.iter().find(|p| p.path == file)
    }

    fn add_plugin(&mut self, file: &Path, info: PluginInfo, handlers: Vec<ToolHandlerBox>) {
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
        for (index, handler) in handlers.into_iter().enumerate() {
            let specs: Vec<ToolSpec> = match serde_json::from_str(handler.specs_json().as_str()) {
                Ok(specs) => specs,
                Err(e) => {
                    self.warn(file, format!("handler {index} has invalid tool specs: {e}"));
                    continue;
                }
            };
            let handler = Arc::new(Handler {
                id: format!("{}/{index}", plugin.name),
                plugin: plugin.clone(),
                handler,
            });
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
            RegisteredTool {
                spec,
                handler: handler.clone(),
            },
        );
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Every registered tool, by name.
    pub fn tools(&self) -> impl Iterator<Item = (&str, &RegisteredTool)> {
        self.tools.iter().map(|(name, tool)| (name.as_str(), tool))
    }

    /// The loaded plugins, in load order.
    pub fn plugins(&self) -> &[Arc<PluginInfo>] {
        &self.plugins
    }

    /// The warnings collected while loading.
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// Asks every plugin to stop its threads.
    pub fn shutdown(&self) {
        for plugin in &self.plugins {
            plugin.shutdown();
        }
    }
}
