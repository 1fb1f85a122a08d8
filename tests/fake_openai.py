"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers every chat completion with
the same text: the stuck model of seed 000, reached through `--lm openai/NAME --api-base URL`.
`delay` makes each completion slow (seconds); `status` makes each one fail with that HTTP status
(401: a rejected key; 429: rate-limited, with `Retry-After: 0` so the client's retries are quick),
or, as a function of the request, only some of them.

deltaseek's start-up structured-output probe (`programs/lm/server.py`) is recorded apart, in
`probes`, so `requests` holds the program's own calls. By default the server accepts a JSON schema
and ignores it, as a stuck model would; `enforces="json_schema"` (or `"json_object_schema"`) makes
it answer a probe in that form as a schema-held decoder does, and refuse the other form (a
question in the other form gets HTTP 500, as llama-cpp-python's server answers OpenAI's)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from deltaseek.programs.lm.server import PROBE_SCHEMA, PROBE_WORD


def probe_dialect(request: dict) -> str | None:
    """The dialect of a structured-output probe, or None for any other request."""
    form = request.get("response_format") or {}
    if form.get("schema") == PROBE_SCHEMA:
        return "json_object_schema"
    if (form.get("json_schema") or {}).get("schema") == PROBE_SCHEMA:
        return "json_schema"
    return None


def schema_form(request: dict) -> str | None:
    """The dialect a request's schema is written in, or None when it carries no schema."""
    form = request.get("response_format") or {}
    if "schema" in form:
        return "json_object_schema"
    if "json_schema" in form:
        return "json_schema"
    return None


class FakeOpenAIServer:
    def __init__(self, reply: str, delay: float = 0.0, status: int | Callable[[dict], int] = 200,
                 enforces: str | None = None):
        self.reply = reply
        self.delay = delay
        self.status = status
        self.enforces = enforces
        self.requests: list[dict] = []
        self.probes: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, payload: dict, status: int = 200) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send({"object": "list", "data": [{"id": "stuck", "object": "model"}]})

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                dialect = probe_dialect(request)
                (server.probes if dialect else server.requests).append(request)
                time.sleep(server.delay)
                reply = server.reply
                if dialect and server.enforces:
                    if dialect != server.enforces:
                        self._send({"error": {"message": f"response_format {dialect} is not supported"}}, 400)
                        return
                    reply = json.dumps({"probe": PROBE_WORD})
                if not dialect and server.enforces and schema_form(request) not in (None, server.enforces):
                    # as llama-cpp-python's server answers OpenAI's form
                    self._send({"error": {"message": "Internal Server Error"}}, 500)
                    return
                status = server.status(request) if callable(server.status) else server.status
                if status == 429:
                    self._send({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                          "code": "rate_limit_exceeded"}}, status)
                    return
                if status in (401, 403):
                    self._send({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                          "code": "invalid_api_key"}}, status)
                    return
                if status != 200:
                    self._send({"error": {"message": f"HTTP {status}", "type": "invalid_request_error"}}, status)
                    return
                self._send({
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0,
                    "model": request.get("model", "stuck"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                })

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
