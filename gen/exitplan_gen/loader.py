# SPDX-License-Identifier: GPL-2.0-only
"""YAML loading that remembers where every value came from.

PyYAML's CSafeLoader (libyaml) composes the node tree; we convert the nodes
ourselves so that every value keeps its start mark, and so that a mapping
with a duplicate key is an error instead of silently keeping the last value.

Scalars resolve as in YAML 1.2's core schema for booleans: only true/false
are booleans, so `statistics: off` is the string "off", not False (YAML 1.1
also reads on/off/yes/no/y/n as booleans).  Dates stay strings.

Inputs are bounded before anything is built from them: at most
MAX_INPUT_BYTES, UTF-8, nesting at most MAX_DEPTH deep, and no aliases
(`*name`): an alias makes a node reachable twice, so a few hundred bytes
of nested aliases expand to billions of values ("billion laughs").  Each
is checked on libyaml's event stream, which is flat (nothing recurses on
the depth of the input), so a hostile file costs one linear pass.
"""

import re

import yaml

from .errors import GenError

TAG_STR = "tag:yaml.org,2002:str"
TAG_INT = "tag:yaml.org,2002:int"
TAG_FLOAT = "tag:yaml.org,2002:float"
TAG_BOOL = "tag:yaml.org,2002:bool"
TAG_NULL = "tag:yaml.org,2002:null"
TAG_MAP = "tag:yaml.org,2002:map"
TAG_SEQ = "tag:yaml.org,2002:seq"
TAG_TIMESTAMP = "tag:yaml.org,2002:timestamp"
TAG_MERGE = "tag:yaml.org,2002:merge"

_SCALAR_TAGS = (TAG_STR, TAG_INT, TAG_FLOAT, TAG_BOOL, TAG_NULL)

# A profile is a few KiB and nests five levels; spec/ files and statistics
# documents are within the same bounds with room to spare.
# A profile of 256 KiB parses in about a second.  A serial log holding a
# statistics document may be larger, but the document in it may not.
MAX_INPUT_BYTES = 256 << 10
MAX_LOG_BYTES = 64 << 20
MAX_DEPTH = 32


class _Loader(yaml.CSafeLoader):
    """CSafeLoader with YAML 1.2 booleans and no implicit timestamps."""


_Loader.yaml_implicit_resolvers = {}
for _first, _resolvers in sorted(yaml.resolver.Resolver.yaml_implicit_resolvers.items(),
                                 key=lambda kv: str(kv[0])):
    for _tag, _regexp in _resolvers:
        if _tag in (TAG_BOOL, TAG_TIMESTAMP):
            continue
        _Loader.yaml_implicit_resolvers.setdefault(_first, []).append((_tag, _regexp))
_Loader.add_implicit_resolver(TAG_BOOL, re.compile(r"^(?:true|false)$"), list("tf"))

_constructor = yaml.constructor.SafeConstructor()


class Document:
    """A loaded YAML file: its value, and the 1-based (line, column) of
    every node, keyed by path (a tuple of mapping keys and list indices).
    key_marks holds the marks of mapping keys, by the path of their value."""

    def __init__(self, path, text, value, marks, key_marks):
        self.path = path
        self.text = text
        self.value = value
        self.marks = marks
        self.key_marks = key_marks

    def mark(self, path):
        """The mark of the node at path, or of its nearest ancestor."""
        path = tuple(path)
        while path not in self.marks and path:
            path = path[:-1]
        return self.marks.get(path, (1, 1))

    def key_mark(self, path):
        path = tuple(path)
        if path in self.key_marks:
            return self.key_marks[path]
        return self.mark(path)

    def error(self, path, message, key=False):
        line, col = self.key_mark(path) if key else self.mark(path)
        return GenError(self.path, line, col, message)


def _mark(node):
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _convert(node, path, doc_path, marks, key_marks, int_keys=False):
    marks[path] = _mark(node)
    if isinstance(node, yaml.ScalarNode):
        if node.tag not in _SCALAR_TAGS:
            line, col = _mark(node)
            raise GenError(doc_path, line, col, f"unsupported YAML tag '{node.tag}'")
        try:
            return _constructor.construct_object(node, deep=True)
        except yaml.YAMLError as e:
            line, col = _mark(node)
            raise GenError(doc_path, line, col, f"invalid value: {e}") from None
    if isinstance(node, yaml.SequenceNode):
        if node.tag != TAG_SEQ:
            line, col = _mark(node)
            raise GenError(doc_path, line, col, f"unsupported YAML tag '{node.tag}'")
        return [_convert(item, path + (i,), doc_path, marks, key_marks, int_keys)
                for i, item in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        if node.tag != TAG_MAP:
            line, col = _mark(node)
            raise GenError(doc_path, line, col, f"unsupported YAML tag '{node.tag}'")
        result = {}
        first_seen = {}
        for key_node, value_node in node.value:
            line, col = _mark(key_node)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == TAG_MERGE:
                what = "merge keys (<<)" if key_node.tag == TAG_MERGE else "complex keys"
                raise GenError(doc_path, line, col, f"{what} are not supported")
            key = _convert(key_node, path + ("<key>",), doc_path, {}, {})
            if not (isinstance(key, str) or (int_keys and type(key) is int)):
                raise GenError(doc_path, line, col,
                               f"mapping key {key_node.value!r} must be a string")
            if key in first_seen:
                raise GenError(doc_path, line, col,
                               f"duplicate key '{key}' (first defined at line {first_seen[key]})")
            first_seen[key] = line
            key_marks[path + (key,)] = (line, col)
            result[key] = _convert(value_node, path + (key,), doc_path, marks, key_marks, int_keys)
        return result
    raise GenError(doc_path, *_mark(node), "unsupported YAML node")


def _yaml_error(path, text, e):
    """The GenError of a libyaml error (reader, scanner, parser or composer)."""
    if isinstance(e, yaml.reader.ReaderError):
        # A character YAML does not allow (C0 controls but tab and line
        # ends, DEL, C1 controls, surrogates, U+FFFE/U+FFFF).
        line, col = _position(text, min(e.position, len(text)))
        c = e.character if isinstance(e.character, int) else ord(e.character)
        return GenError(path, line, col, f"invalid YAML: character U+{c:04X} is not allowed")
    if not isinstance(e, yaml.MarkedYAMLError):
        return GenError(path, 1, 1, "invalid YAML: " + " ".join(str(e).split()))
    mark = e.problem_mark or e.context_mark
    problem = e.problem or e.context or "syntax error"
    if e.context and e.problem:
        # libyaml says "while scanning X" / "found Y", or "expected X" /
        # "but found Y": put them in reading order.
        if e.problem.startswith("but "):
            problem = f"{e.context}, {e.problem}"
        else:
            problem = f"{e.problem} ({e.context})"
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    # At the end of a text without a final line end, libyaml's mark is on
    # the line after the last: point at the end of the last line instead.
    last = text.count("\n") + 1
    if line > last:
        line, col = _position(text, len(text))
    return GenError(path, line, col, f"invalid YAML: {problem}")


def _check_events(path, text):
    """Refuse aliases and nesting deeper than MAX_DEPTH, in one pass over
    the event stream (before yaml.compose, whose C code recurses on the
    depth, and before _convert, which would expand every alias)."""
    # One entry per open collection: [is a mapping, nodes seen in it].
    open_nodes = []
    after_merge_key = None
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionEndEvent):
            open_nodes.pop()
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        is_key = False
        if open_nodes:
            parent = open_nodes[-1]
            is_key = parent[0] and parent[1] % 2 == 0
            parent[1] += 1
        line, col = event.start_mark.line + 1, event.start_mark.column + 1
        if isinstance(event, yaml.AliasEvent):
            if after_merge_key is not None:
                # `<<: *base`: say what the construct is, not how it is spelt.
                raise GenError(path, *after_merge_key, "merge keys (<<) are not supported")
            raise GenError(path, line, col,
                           f"YAML aliases (*{event.anchor}) are not supported: write the value out")
        after_merge_key = None
        if isinstance(event, yaml.ScalarEvent):
            if is_key and event.value == "<<" and event.implicit[0]:
                after_merge_key = (line, col)
            continue
        if len(open_nodes) == MAX_DEPTH:
            raise GenError(path, line, col,
                           f"nested more than {MAX_DEPTH} levels deep")
        open_nodes.append([isinstance(event, yaml.MappingStartEvent), 0])


def load_text(path, text, int_keys=False):
    """Parse text (the contents of the file named path) into a Document.
    int_keys: integers may also be mapping keys (the statistics document's
    breakdowns by MSR index, port and leaf); profiles allow strings only."""
    # Leading blank lines (from-stats pads a document cut from a log with
    # them, to keep the log's line numbers) cost nothing and do not count.
    start = len(text) - len(text.lstrip("\n"))
    if len(text) - start > MAX_INPUT_BYTES:
        line, col = _position(text, start + MAX_INPUT_BYTES)
        raise GenError(path, line, col, _too_large("a YAML document"))
    try:
        _check_events(path, text)
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as e:
        raise _yaml_error(path, text, e) from None
    marks, key_marks = {}, {}
    if node is None:
        return Document(path, text, None, {(): (1, 1)}, key_marks)
    value = _convert(node, (), path, marks, key_marks, int_keys)
    return Document(path, text, value, marks, key_marks)


def _position(text, offset):
    """1-based (line, column) of character offset in text."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _too_large(what, limit=MAX_INPUT_BYTES):
    return f"{what} is larger than {limit >> 10} KiB ({limit} bytes), the most an input may hold"


def read_source(path, limit=MAX_INPUT_BYTES):
    """The bytes of an input file, as a GenError when it cannot be read or
    holds more than limit bytes (only limit + 1 are read, so /dev/zero or a
    huge file costs nothing)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise GenError(path, None, None, f"cannot read: {e.strerror}") from None
    if len(raw) > limit:
        head = raw[:limit].decode("utf-8", "replace")
        line, col = _position(head, len(head))
        raise GenError(path, line, col, _too_large("the file", limit))
    return raw


def decode_source(path, raw):
    """raw decoded as UTF-8, or a GenError at the first byte that is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        head = raw[:e.start].decode("utf-8")
        line, col = _position(head, len(head))
        raise GenError(path, line, col,
                       f"the file is not UTF-8 (byte 0x{raw[e.start]:02x}: {e.reason})") from None


def load_file(path):
    """(Document, raw bytes) of the YAML file path."""
    raw = read_source(path)
    return load_text(path, decode_source(path, raw)), raw
