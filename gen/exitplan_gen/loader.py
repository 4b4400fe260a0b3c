# SPDX-License-Identifier: GPL-2.0-only
"""YAML loading that remembers where every value came from.

PyYAML's CSafeLoader (libyaml) composes the node tree; we convert the nodes
ourselves so that every value keeps its start mark, and so that a mapping
with a duplicate key is an error instead of silently keeping the last value.

Scalars resolve as in YAML 1.2's core schema for booleans: only true/false
are booleans, so `statistics: off` is the string "off", not False (YAML 1.1
also reads on/off/yes/no/y/n as booleans).  Dates stay strings.
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


def load_text(path, text, int_keys=False):
    """Parse text (the contents of the file named path) into a Document.
    int_keys: integers may also be mapping keys (the statistics document's
    breakdowns by MSR index, port and leaf); profiles allow strings only."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "syntax error"
        if e.context and e.problem:
            # libyaml says "while scanning X" / "found Y", or "expected X" /
            # "but found Y": put them in reading order.
            if e.problem.startswith("but "):
                problem = f"{e.context}, {e.problem}"
            else:
                problem = f"{e.problem} ({e.context})"
        if mark is None:
            raise GenError(path, None, None, f"invalid YAML: {problem}") from None
        raise GenError(path, mark.line + 1, mark.column + 1, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise GenError(path, None, None, f"invalid YAML: {e}") from None
    marks, key_marks = {}, {}
    if node is None:
        return Document(path, text, None, {(): (1, 1)}, key_marks)
    value = _convert(node, (), path, marks, key_marks, int_keys)
    return Document(path, text, value, marks, key_marks)


def read_source(path):
    """The bytes of an input file, as a GenError when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise GenError(path, None, None, f"cannot read: {e.strerror}") from None


def load_file(path):
    """(Document, raw bytes) of the YAML file path."""
    raw = read_source(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GenError(path, None, None, f"not UTF-8 (byte {e.start})") from None
    return load_text(path, text), raw
