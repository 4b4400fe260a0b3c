# SPDX-License-Identifier: GPL-2.0-only
"""The one error the generator reports: a position in an input file and a
message, printed as a single `file:line:col: message` line."""

import difflib
import unicodedata

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text):
    """text with every control, format or separator character escaped
    (\\n, \\x01, \\u202e), so that a message is one line whatever the
    input file held."""
    out = []
    for c in str(text):
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                       if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return "".join(out)


class GenError(Exception):
    """An error in an input file.  line and col are 1-based; None when the
    error concerns the whole file."""

    def __init__(self, path, line, col, message):
        super().__init__(message)
        self.path = path
        self.line = line
        self.col = col
        self.message = message

    def __str__(self):
        if self.line is None:
            return f"{one_line(self.path)}: {one_line(self.message)}"
        return f"{one_line(self.path)}:{self.line}:{self.col}: {one_line(self.message)}"


def suggest(word, candidates):
    """' (did you mean X?)' for the closest candidate, or ''."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    if not close:
        # Case slips ("msr_write") are common and difflib scores them low.
        folded = {c.lower(): c for c in candidates}
        if word.lower() in folded:
            close = [folded[word.lower()]]
    return f" (did you mean {close[0]}?)" if close else ""
