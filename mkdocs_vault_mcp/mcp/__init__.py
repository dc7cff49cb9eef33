"""The MCP side: the tools, their schemas, the server and its transports."""
