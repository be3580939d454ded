//! Building the host of a command: where the plugins come from (directories, or a signed
//! bundle with its policy), the workspace, the settings and how approvals are decided.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::frontends::{open_workspace, FrontendError};
use crate::permissions::{ApprovalMode, CommandPermissions, Workspace};
use crate::plugins::bundle::Opened;
use crate::plugins::discovery::{plugin_dirs, searched};
use crate::plugins::isolation::Placement;
use crate::settings::ToolSet;
use crate::settings::{Isolation, Settings};
use crate::ui::{StderrUi, TerminalUi, Ui};
use crate::RootSpec;
use crate::{Host, HostConfig};

/// The workspace of `toolhost policy`: the roots given, else the settings' (see
/// [`open_workspace`]).
pub(super) fn policy_workspace(
    args: &crate::frontends::WorkspaceArgs,
    settings: Option<&Path>,
) -> Result<Workspace, FrontendError> {
    let settings = Settings::load(settings)?;
    open_workspace(&args.roots(), &settings)
}

pub(super) fn build_host(
    plugins: &PluginSource,
    settings: Option<&Path>,
    roots: &[RootSpec],
    approval: ApprovalMode,
) -> Result<Arc<Host>, FrontendError> {
    let ui: Box<dyn Ui> = match approval {
        ApprovalMode::Ask => Box::new(TerminalUi),
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => Box::new(StderrUi),
    };
    build_host_with_ui(plugins, settings, roots, approval, ui)
}

pub(super) fn build_host_with_ui(
    plugins: &PluginSource,
    settings: Option<&Path>,
    roots: &[RootSpec],
    approval: ApprovalMode,
    ui: Box<dyn Ui>,
) -> Result<Arc<Host>, FrontendError> {
    let settings = Settings::load(settings)?;
    let workspace = open_workspace(roots, &settings)?;
    Ok(plugins.host(HostConfig {
        plugin_dirs: plugins.dirs.clone(),
        workspace,
        settings,
        approval,
        command_permissions: plugins.command_permissions.clone(),
        ui,
        task_id: new_task_id(),
        placement: plugins.placement(),
    }))
}

/// Where the plugins come from: the plugin directories, or a signed bundle.
#[derive(Default)]
pub(super) struct PluginSource {
    dirs: Vec<PathBuf>,
    /// The `--plugins` directories given (for saying where plugins were looked for).
    explicit: Vec<PathBuf>,
    bundle: Option<Opened>,
    /// The bundle's command permissions, else `CLINE_COMMAND_PERMISSIONS`'s.
    command_permissions: CommandPermissions,
    /// `--isolation`.
    isolation: Option<Isolation>,
    /// `--tools`.
    tool_set: Option<ToolSet>,
}

impl PluginSource {
    /// Checks the bundle's signature and, before anything reads them, applies its command
    /// permissions.
    pub(super) fn new(
        plugins: &[PathBuf],
        bundle: Option<&Path>,
        trusted_key: Option<&Path>,
        isolation: Option<Isolation>,
    ) -> Result<Self, FrontendError> {
        let bundle = match (bundle, trusted_key) {
            (Some(dir), Some(key)) => Opened::open(dir, key)?,
            (Some(_), None) => return Err(FrontendError::BundleNeedsKey),
            (None, Some(_)) => return Err(FrontendError::KeyWithoutBundle),
            (None, None) => {
                return Ok(Self {
                    dirs: plugin_dirs(plugins),
                    explicit: plugins.to_vec(),
                    bundle: None,
                    command_permissions: CommandPermissions::from_env(),
                    isolation,
                    tool_set: None,
                })
            }
        };
        let command_permissions = bundle
            .command_permissions()
            .unwrap_or_else(CommandPermissions::from_env);
        Ok(Self {
            dirs: Vec::new(),
            explicit: Vec::new(),
            bundle: Some(bundle),
            command_permissions,
            isolation,
            tool_set: None,
        })
    }

    /// The same source serving `tool_set` (`--tools`; none: the settings').
    pub(super) fn with_tool_set(mut self, tool_set: Option<ToolSet>) -> Self {
        self.tool_set = tool_set;
        self
    }

    /// Where the plugins run: `--isolation`, and what the bundle requires.
    fn placement(&self) -> Placement {
        Placement {
            default: self.isolation,
            tool_set: self.tool_set.clone(),
            required: self
                .bundle
                .as_ref()
                .map(Opened::required_isolation)
                .unwrap_or_default(),
            bundle_grants: self.bundle.as_ref().map(Opened::grants).unwrap_or_default(),
            ..Placement::default()
        }
    }

    /// Loads the plugins (a bundle's admitted ones, with its approval defaults) and builds the
    /// host.
    /// The command permissions of the hosts this source builds.
    pub(super) fn command_permissions(&self) -> &CommandPermissions {
        &self.command_permissions
    }

    pub(super) fn host(&self, mut config: HostConfig) -> Arc<Host> {
        let Some(bundle) = &self.bundle else {
            if config.plugin_dirs.is_empty() {
                tracing::warn!(
                    "no plugin directory found: pass --plugins DIR or set TOOLHOST_PLUGIN_PATH"
                );
            }
            return Host::new(config);
        };
        bundle.apply_approvals(&mut config.settings);
        Host::complete_placement(&mut config);
        let registry = bundle.load(&config.placement);
        Host::with_registry(config, registry)
    }
}

fn new_task_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{millis}-{}", std::process::id())
}

/// Approvals: `--yes`, else ask on a terminal, else deny what is not auto-approved.
pub(super) fn approval_mode(yes: bool) -> ApprovalMode {
    if yes {
        ApprovalMode::ApproveAll
    } else if TerminalUi::detect().is_some() {
        ApprovalMode::Ask
    } else {
        ApprovalMode::DenyUnlessAuto
    }
}

/// The host of a long-running frontend: with `--watch`, one that loads private copies and
/// swaps in replaced libraries. A host without any plugin is refused: a server with nothing
/// to serve would look to its client like one that works. `ui` is the frontend's.
pub(super) fn serving_host(
    plugins: &PluginSource,
    settings: Option<&Path>,
    roots: &[RootSpec],
    approval: ApprovalMode,
    hot_swap: &crate::frontends::HotSwapArgs,
    ui: Box<dyn Ui>,
) -> Result<Arc<Host>, FrontendError> {
    let host = loaded_serving_host(plugins, settings, roots, approval, hot_swap, ui)?;
    let registry = host.registry();
    if registry.tools().next().is_none() && registry.dynamic_handlers().is_empty() {
        return Err(match &plugins.bundle {
            Some(_) => FrontendError::BundleAdmittedNothing,
            None => FrontendError::NoPlugins {
                searched: searched(&plugins.explicit),
            },
        });
    }
    Ok(host)
}

fn loaded_serving_host(
    plugins: &PluginSource,
    settings: Option<&Path>,
    roots: &[RootSpec],
    approval: ApprovalMode,
    hot_swap: &crate::frontends::HotSwapArgs,
    ui: Box<dyn Ui>,
) -> Result<Arc<Host>, FrontendError> {
    if !hot_swap.watch {
        return build_host_with_ui(plugins, settings, roots, approval, ui);
    }
    if plugins.bundle.is_some() {
        return Err(FrontendError::WatchWithBundle);
    }
    let settings = Settings::load(settings)?;
    let host = Host::new_for_hot_swap(HostConfig {
        plugin_dirs: plugins.dirs.clone(),
        workspace: open_workspace(roots, &settings)?,
        settings,
        approval,
        command_permissions: plugins.command_permissions.clone(),
        ui,
        task_id: new_task_id(),
        placement: plugins.placement(),
    });
    host.watch(&plugins.dirs, hot_swap.allow_downgrade)
        .map_err(FrontendError::Watch)?;
    Ok(host)
}
