"""The headless Chromium the harness's own tests render the HTML verdict in (`nox -s tests`)."""

from __future__ import annotations

import os
import shutil


def ensure_chromium(session) -> None:
    """The HTML report is checked in headless Chromium: install Debian's package when it is missing."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", "-qq", external=True, env=env)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True, env=env)
    else:
        session.warn("headless Chromium is missing and cannot be installed here (needs root and apt-get): "
                     "the HTML rendering check will fail. Install Debian's `chromium` package and run again.")
