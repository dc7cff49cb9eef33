# A hosted /mcp for one documentation site: the MCP tools and resources over Streamable HTTP, stateless, so any
# number of replicas can stand behind a load balancer.
#
#   docker build -t vault-mcp .
#   docker run --read-only --tmpfs /tmp -p 8000:8000 -e VAULT_MCP_SITE=https://docs.example.com/ \
#       -e VAULT_MCP_ALLOWED_HOSTS=docs.example.com vault-mcp
#   docker run --read-only -p 8000:8000 -v "$PWD/site:/site:ro" -e VAULT_MCP_ALLOWED_HOSTS=mcp.example.com vault-mcp
#
# Settings are environment variables (VAULT_MCP_SITE, VAULT_MCP_PATH, VAULT_MCP_ALLOWED_HOSTS, VAULT_MCP_TOKEN,
# VAULT_MCP_CORS_ORIGINS, VAULT_MCP_REFRESH, ...); WEB_CONCURRENCY sets uvicorn's worker processes.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /build
COPY pyproject.toml README.md LICENSE MANIFEST.in ./
COPY mkdocs_vault_mcp ./mkdocs_vault_mcp
RUN pip install . && rm -rf /build

# The root filesystem may be read-only: a downloaded index goes to /tmp (mount a tmpfs or an emptyDir there), and
# a site folder is mounted read-only at /site.
ENV VAULT_MCP_SITE=/site \
    VAULT_MCP_CACHE=/tmp/vault-mcp-cache \
    HOME=/tmp

RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin vault
USER 10001
WORKDIR /tmp

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# --http runs the app's slow-connection guard and connection cap, which live in the HTTP protocol and not in the app.
CMD ["uvicorn", "--factory", "mkdocs_vault_mcp.asgi:create_app", "--http", "mkdocs_vault_mcp.asgi:GuardedH11Protocol", "--host", "0.0.0.0", "--port", "8000", "--no-access-log"]
