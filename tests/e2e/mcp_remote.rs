//! MCP servers reached over HTTP: streamable HTTP and the legacy SSE transport.
