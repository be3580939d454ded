//! The model-visible texts: Cline's exact messages, and the tools' descriptions in our words.

/// Cline's error for a settings file that is not JSON.
pub const INVALID_SETTINGS_FORMAT: &str =
    "Invalid MCP settings format. Please ensure your settings follow the correct JSON format.";

/// Cline's error for a settings file that does not fit the schema.
pub const INVALID_SETTINGS_SCHEMA: &str = "Invalid MCP settings schema.";

/// The result of a resource read that returned no text.
pub const EMPTY_RESPONSE: &str = "(Empty response)";

/// Shown in the documentation when no server is connected.
pub const NONE_RUNNING: &str = "(None running currently)";

/// Cline's `invalidMcpToolArgumentError`.
pub fn invalid_arguments(server: &str, tool: &str) -> String {
    format!("Invalid JSON argument used with {server} for {tool}. Please retry with a properly formatted JSON argument.")
}

/// The UI notice for invalid arguments.
pub fn invalid_arguments_notice(tool: &str) -> String {
    format!("Cline tried to use {tool} with an invalid JSON argument. Retrying...")
}

/// Cline's McpHub error for a server name it does not know.
pub fn no_connection(server: &str) -> String {
    format!("No connection found for server: {server}. Please make sure to use MCP servers available under 'Connected MCP Servers'.")
}

/// Cline's McpHub error for a disabled server.
pub fn disabled(server: &str) -> String {
    format!("Server \"{server}\" is disabled and cannot be used")
}

/// The message of a failed `use_mcp_tool` (a tool error; Cline returns it as plain text).
pub fn tool_call_failed(message: &str) -> String {
    format!("Error executing MCP tool: {message}")
}

/// The message of a failed `access_mcp_resource` (wrapped as a tool error).
pub fn resource_failed(message: &str) -> String {
    format!("Error executing access_mcp_resource: {message}")
}

/// The message of a failed `load_mcp_documentation`.
pub fn documentation_failed(message: &str) -> String {
    format!("Error loading MCP documentation: {message}")
}

/// The server needed an answer (its `method` request) before its result, and nobody gave one.
pub fn unanswered(server: &str, method: &str) -> String {
    format!(
        "the MCP server \"{server}\" needs an answer to its {method} request first, and nobody \
         answered it (no user or client to ask: answer from a terminal, `serve --ask` or an MCP \
         client in front of `toolhost mcp`)"
    )
}

/// The server kept asking for input.
pub fn too_many_rounds(server: &str, rounds: usize) -> String {
    format!(
        "the MCP server \"{server}\" asked for input {rounds} times in one call without a \
         result; the call was stopped"
    )
}

/// The note appended when the model cannot see the images a tool returned.
pub fn images_not_viewable(count: usize) -> String {
    format!("\n\n[{count} images were provided in the response, and while they are displayed to the user, you do not have the ability to view them.]")
}

/// use_mcp_tool's description.
pub const USE_MCP_TOOL_DESCRIPTION: &str = "Call a tool offered by one of the connected MCP \
servers. MCP servers add capabilities such as access to outside services, databases or APIs; \
each tool takes the input its own schema describes. Name the server, the tool, and pass the \
tool's input as a JSON object.";

/// access_mcp_resource's description.
pub const ACCESS_MCP_RESOURCE_DESCRIPTION: &str = "Read a resource (a file, a record, live \
data...) that a connected MCP server exposes, by the server's name and the resource's URI.";

/// load_mcp_documentation's description.
pub const LOAD_MCP_DOCUMENTATION_DESCRIPTION: &str = "Get the guide to writing and installing \
a new MCP server. Use it when the user asks to add a capability through an MCP server (for \
example \"add a tool that looks up the weather\").";

/// The server name parameter.
pub const SERVER_NAME_PARAM: &str = "The name of the MCP server, as configured.";
/// The tool name parameter.
pub const TOOL_NAME_PARAM: &str = "The name of the server's tool to call.";
/// The arguments parameter.
pub const ARGUMENTS_PARAM: &str =
    "The tool's input as a JSON object matching its input schema, e.g. {\"city\": \"Oslo\"}.";
/// The URI parameter.
pub const URI_PARAM: &str = "The URI of the resource to read.";

/// The guide `load_mcp_documentation` returns, with its three insertions.
pub fn documentation(servers_dir: &str, settings_file: &str, connected: &str) -> String {
    format!(
        "# Building an MCP server

The Model Context Protocol (MCP) lets a local program offer tools and resources to you. A server
is a process started by the client that speaks JSON-RPC on its standard input and output (stdio
transport). Its tools appear to you under the server's name and are called with `use_mcp_tool`;
its resources are read with `access_mcp_resource`.

## Where things go

- Create new servers under `{servers_dir}` (one directory per server) unless the user asks for
  another place.
- Register each server in the MCP settings file `{settings_file}`. Keep the servers already listed
  there; add yours as a new entry of `mcpServers`.
- Servers connected right now: {connected}

## Writing a server

1. Create the project with the official SDK of your language (for TypeScript
   `@modelcontextprotocol/sdk`, for Python `mcp`, for Rust `rmcp`).
2. Declare each tool with a name, a short description and a JSON Schema of its input. Validate the
   input and answer with text content; report failures as results with `isError: true` rather
   than by crashing.
3. Expose read-only data that the user may want to look at as resources (static URIs) or resource
   templates (URIs with parameters).
4. Never print anything but protocol messages on standard output; write logs to standard error.
5. Take secrets such as API keys from environment variables, which the settings entry provides.
6. Build the server (for example `npm run build`) before registering it.

## Registering a server

Add an entry like this to `mcpServers` in the settings file:

```json
{{
  \"mcpServers\": {{
    \"weather\": {{
      \"command\": \"node\",
      \"args\": [\"/path/to/weather-server/build/index.js\"],
      \"env\": {{ \"WEATHER_API_KEY\": \"...\" }},
      \"disabled\": false,
      \"autoApprove\": []
    }}
  }}
}}
```

A new server must start with `\"disabled\": false` and `\"autoApprove\": []`; the user decides later
which tools may run without asking. `timeout` (seconds, default 60) limits each tool call, and
`${{env:NAME}}` in any string is replaced by the environment variable NAME.

## After registering

The server is started on its first use. Ask the user for any credentials it needs instead of
inventing them, then try one of its tools with `use_mcp_tool` to check that it works.
"
    )
}
