# SPDX-License-Identifier: GPL-2.0-only
"""JSON-Schema validation of a profile, with every error mapped to the
position of the offending node and said in plain words."""

import json
import re

import jsonschema

from .errors import GenError, suggest

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}

# What a name in a mapping of names must look like, by the mapping's key.
_NAME_HINTS = {
    "reasons": "exit reason names are upper case, like MSR_WRITE",
    "msrs": "MSR names are upper case, like IA32_EFER",
    "prefer": "feature names are lower case, like vpid",
}

# Plain words for pattern mismatches, by the last key of the path.
_PATTERN_WORDS = {
    "profile": "must be lower-case letters, digits and dashes, starting with a letter",
    "date": "must be a date written YYYY-MM-DD",
    "unexpected_handler": "must be a C function name in lower case",
}


def where(path):
    """'exit_mix.source', 'execution.io.grant[2]', or 'the profile'."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "the profile"


def describe(value):
    """A value as a reader would write it in YAML, with its kind."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string '{value}'"
    if isinstance(value, int):
        return f"the number {value}"
    if isinstance(value, float):
        return f"the number {value!r}"		# 1000000.0, not 1e+06: visibly a float
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def literal(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# A number as YAML 1.2 writes it that YAML 1.1 (PyYAML) reads as a string:
# an exponent without a decimal point or without a sign (1e3, 2.5e3).
_NUMBER_LIKE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)$")


def _number_hint(value, types):
    """Why a string that looks like a number is one, and how to write it."""
    if not (isinstance(value, str) and _NUMBER_LIKE.match(value)) or \
            not {"number", "integer"} & set(types):
        return ""
    x = float(value)
    if x.is_integer() and abs(x) < 1e18:
        spelt = f"write {int(x)}"
    elif "number" in types:
        spelt = repr(x)		# 0.001, 1.5e-07, 1e-07: YAML 1.1 needs 1.0e-07
        if "e" in spelt and "." not in spelt:
            spelt = spelt.replace("e", ".0e")
        spelt = f"write {spelt}"
    else:
        spelt = "and it is not a whole number"
    return (f" (YAML 1.1 reads an exponent without a decimal point and a sign as a string; "
            f"{spelt})")


# "integer" is a whole number as written: 1000.0 is a float (JSON Schema
# would take it, and the C it reached would say 1000.0u).
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, v: isinstance(v, int) and not isinstance(v, bool)))


def load_schema(path):
    try:
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
    except OSError as e:
        raise GenError(path, None, None, f"cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise GenError(path, e.lineno, e.colno, f"invalid JSON: {e.msg}") from None
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise GenError(path, None, None, f"invalid schema: {e.message}") from None
    return schema


def _extra_keys(error):
    schema = error.schema
    props = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [k for k in error.instance
            if k not in props and not any(p.search(k) for p in patterns)]


# dispatch.direct's mutually exclusive keys.
DIRECT_MODES = ("count", "coverage", "order", "auto")
DIRECT_MODES_WORDS = "count, coverage, order, auto"


def _explain(doc, error):
    """(line, col, message) for one jsonschema error."""
    path = tuple(error.absolute_path)
    at = where(path)
    line, col = doc.mark(path)
    for explain_kind in (_explain_keys, _explain_value, _explain_direct):
        found = explain_kind(doc, error, path, at, line, col)
        if found is not None:
            return found
    return line, col, f"{at}: {error.message}"


def _explain_keys(doc, error, path, at, line, col):
    """A missing, unknown or misnamed key; None for other errors."""
    kind, value, schema = error.validator, error.instance, error.schema
    if kind == "required":
        missing = [k for k in error.validator_value if k not in value]
        key = missing[0]
        if path:
            return line, col, f"{at}: missing required key '{key}'"
        return line, col, f"the profile is missing required key '{key}'"
    if kind == "additionalProperties":
        extras = sorted(_extra_keys(error), key=lambda k: doc.key_mark(path + (k,)))
        key = extras[0]
        line, col = doc.key_mark(path + (key,))
        props = schema.get("properties", {})
        if schema.get("patternProperties"):
            hint = _NAME_HINTS.get(path[-1] if path else "", "")
            names = "default" if props else ""
            msg = f"'{key}' in {at} is not a valid name"
            if hint:
                msg += f" ({hint})"
            if names and suggest(key, props):
                msg += suggest(key, props)
            return line, col, msg
        return line, col, f"unknown key '{key}' in {at}{suggest(key, props)}"
    if kind == "maxProperties":
        return line, col, f"{at} has too many keys"
    return None


def _explain_value(doc, error, path, at, line, col):
    """A value of the wrong kind, type, size or form; None for other errors."""
    kind, value = error.validator, error.instance
    if kind == "enum":
        options = ", ".join(str(o) for o in error.validator_value)
        hint = suggest(value, [str(o) for o in error.validator_value])
        return line, col, f"{at} must be one of {options}, not {literal(value)}{hint}"
    if kind == "type":
        types = error.validator_value
        if isinstance(types, str):
            types = [types]
        wanted = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        if not path:
            return line, col, f"a profile must be a mapping, not {describe(value)}"
        return line, col, f"{at} must be {wanted}, not {describe(value)}{_number_hint(value, types)}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        bound = literal(error.validator_value)
        words = {"minimum": "at least", "exclusiveMinimum": "more than",
                 "maximum": "at most", "exclusiveMaximum": "less than"}[kind]
        return line, col, f"{at} must be {words} {bound}, not {literal(value)}"
    if kind == "pattern":
        words = _PATTERN_WORDS.get(path[-1] if path else "", f"must match {error.validator_value}")
        return line, col, f"{at} {literal(value)} {words}"
    if kind == "minLength":
        return line, col, f"{at} must not be empty"
    if kind == "minItems":
        return line, col, f"{at} must list at least {error.validator_value} item" + \
            ("s" if error.validator_value != 1 else "")
    if kind == "uniqueItems":
        seen = set()
        for i, item in enumerate(value):
            k = json.dumps(item, sort_keys=True)
            if k in seen:
                line, col = doc.mark(path + (i,))
                return line, col, f"{at} lists {literal(item)} twice"
            seen.add(k)
    return None


def _explain_direct(doc, error, path, at, line, col):
    """dispatch.direct's one mode (and an empty mapping anywhere); None
    for other errors."""
    kind, value = error.validator, error.instance
    if kind == "minProperties":
        if path and path[-1] == "direct":
            return line, col, f"{at} needs one of {DIRECT_MODES_WORDS}"
        return line, col, f"{at} must not be empty"
    if kind == "oneOf" and path and path[-1] == "direct" and not isinstance(value, dict):
        return line, col, f"{at} must be a mapping, not {describe(value)}"
    if kind == "oneOf" and path and path[-1] == "direct":
        modes = sorted((k for k in value if k in DIRECT_MODES), key=lambda k: doc.key_mark(path + (k,)))
        if not modes:
            return line, col, f"{at} needs one of {DIRECT_MODES_WORDS}"
        line, col = doc.key_mark(path + (modes[1],))
        if "auto" in modes:
            other = next(k for k in modes if k != "auto")
            return line, col, (f"{at}: auto chooses the chain by itself, so it cannot be combined "
                               f"with {other} (max: N caps it)")
        return line, col, (f"{at} takes only one of count, coverage, order, "
                           f"not both {modes[0]} and {modes[1]}")
    if kind == "dependentRequired" and path and path[-1] == "direct":
        line, col = doc.key_mark(path + ("max",))
        return line, col, f"{at}.max caps the chain auto: true chooses; it needs auto: true"
    if kind == "const" and path and path[-1] == "auto":
        return line, col, (f"{at} can only be true, not {literal(value)} (for a chain of "
                           "your own choosing use count, coverage or order)")
    return None


def validate(doc, schema):
    """Raise a GenError for the first schema violation in document order."""
    validator = _Validator(schema)
    found = []
    for error in validator.iter_errors(doc.value):
        line, col, msg = _explain(doc, error)
        found.append((line, col, msg))
    if found:
        line, col, msg = min(found)
        raise GenError(doc.path, line, col, msg)
