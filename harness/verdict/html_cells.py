"""The HTML page's cell text: escaped, and where a long id or golden key may wrap. A table cell's words never
break inside (the page's style lets no column squeeze them); an id, a leaf path or a comparison's label breaks
after a `/`, `[`, `-`, `_` or `:` (a <wbr> there), and only a run too long for the page's width breaks inside."""

from __future__ import annotations

import re
from html import escape

_AFTER = re.compile(r"([/\[_:-])")


def breakable(text: str) -> str:
    """`text` escaped, with a line-break opportunity after each /, [, -, _ and :."""
    return _AFTER.sub(r"\1<wbr>", escape(text))
