"""A streamable-HTTP MCP server (the official Python SDK) with large and deep results, for the
proxy's limit tests over HTTP.

Usage:
  http_server.py PORT

Tools: `big` answers a log of `bytes` bytes; `deep` answers a structuredContent nested `depth`
levels deep; `echo` answers "echo: <text>".
"""

import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent

import faulty_server

server = FastMCP("limits", port=int(sys.argv[1]), log_level="WARNING")


@server.tool()
def big(bytes: int) -> str:
    """Answers a log of the given size."""
    return faulty_server.log_text(bytes)


@server.tool()
def deep(depth: int) -> CallToolResult:
    """Answers a structured result nested `depth` levels deep."""
    nested = "leaf"
    for _ in range(depth):
        nested = {"level": nested}
    return CallToolResult(content=[TextContent(type="text", text="deep")], structuredContent=nested)


@server.tool()
def echo(text: str) -> str:
    """Answers with its text."""
    return f"echo: {text}"


if __name__ == "__main__":
    server.run(transport="streamable-http")
