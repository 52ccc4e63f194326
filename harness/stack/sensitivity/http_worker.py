"""cosmic-ray's HTTP worker, listening on 127.0.0.1 only: `cosmic-ray http-worker --port` listens on every
interface, and a worker runs whatever test command a request names. Same handler, same protocol; run
inside the disposable environment as `python -m harness.stack.sensitivity.http_worker PORT`."""

from __future__ import annotations

import sys

from aiohttp import web
from cosmic_ray.distribution.http import handle_mutate_and_test


def main(argv: list[str]) -> None:
    app = web.Application()
    app.add_routes([web.post("/", handle_mutate_and_test)])
    web.run_app(app, host="127.0.0.1", port=int(argv[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
