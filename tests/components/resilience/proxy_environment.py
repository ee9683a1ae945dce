"""The environment variables that name a proxy (both spellings), cleared by the proxy tests so the machine's own
settings cannot route their requests."""

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)
