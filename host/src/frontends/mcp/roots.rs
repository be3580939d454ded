//! The workspace of a `toolhost mcp` session: the command line's roots, the settings', or the
//! client's (`roots/list`), and never `/` by default.

use rmcp::service::Peer;
use rmcp::RoleServer;

use crate::{Host, RootSpec};

/// Whether a session's workspace is the client's roots: no root was given on the command line
/// and the settings name none.
pub(super) fn follows_client_roots(given: &[RootSpec], host: &Host) -> bool {
    given.is_empty()
        && host
            .settings()
            .workspace
            .root_specs()
            .is_ok_and(|configured| configured.is_empty())
}

/// The roots of `workspace`, to open another workspace over the same directories (a new
/// session's); a single root stays unnamed, as it was opened.
pub(super) fn root_specs(workspace: &crate::permissions::Workspace) -> Vec<RootSpec> {
    let roots = workspace.roots();
    let single = roots.len() == 1;
    roots
        .into_iter()
        .map(|root| RootSpec {
            name: (!single).then_some(root.name),
            path: root.path.into(),
        })
        .collect()
}

/// Why a call does not run when the workspace would be `/`.
pub(super) const ROOT_REFUSED: &str = "The workspace would be / (the whole file system): toolhost mcp was started in / without --cwd, and the client offers no other root. Start it with --cwd DIR, or from the project's directory, or use a client that sends its workspace roots.";

/// The directories of the client's roots (`file://` URIs; others are skipped), when it
/// offers roots.
#[allow(deprecated)] // MCP roots: rmcp marks them deprecated (SEP-2577); clients still send them.
pub(super) async fn client_roots(
    peer: &Peer<RoleServer>,
) -> Result<Vec<std::path::PathBuf>, String> {
    let offers = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !offers {
        return Ok(Vec::new());
    }
    let listed = peer
        .list_roots()
        .await
        .map_err(|e| format!("cannot list the client's roots: {e}"))?;
    Ok(listed
        .roots
        .iter()
        .filter_map(|root| {
            let path = root.uri.strip_prefix("file://")?;
            let decoded = percent_encoding::percent_decode_str(path)
                .decode_utf8()
                .ok()?;
            Some(std::path::PathBuf::from(decoded.into_owned()))
        })
        .collect())
}
