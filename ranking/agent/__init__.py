"""The agent API (issue 38): search, read, cached and context over the engine's own index,
for AI agents. :mod:`.tools` implements the four tools over :mod:`.documents` (ids, crawl
dates, the text offsets address); :mod:`.mcp_server` serves them as an MCP server and
:mod:`.views` as JSON endpoints, both behind :mod:`.access`; :mod:`.errors` are what a
caller is told."""
