# SPDX-License-Identifier: GPL-2.0-only
"""The one error the generator reports: a position in an input file and a
message, printed as a single `file:line:col: message` line."""

import difflib


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
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}:{self.col}: {self.message}"


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
