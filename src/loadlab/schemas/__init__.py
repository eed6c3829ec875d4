"""The declared shapes of loadlab's input files, as JSON Schemas shipped with the package.

    server.schema.json      servers/<name>/loadlab.yaml           (loadlab.servers)
    experiment.schema.json  experiments/*.yaml, and the same as
                            Python objects (loadlab.experiment)

`check(document, "experiment")` raises a ParameterError for the first thing
wrong, named by its path (`load.conections`, `servers[1].settings`,
`knobs.WORKERS.integer`) with what is allowed there: an unknown key names the
known ones, a missing required key names what it must be. The schemas say
what a document may hold; the code that reads it still checks what a schema
cannot (a knob against the server's own knobs, CPU sets against the host).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources

import jsonschema
import jsonschema.validators

from loadlab.errors import ParameterError

SCHEMA_NAMES = ("server", "experiment")
# What a whole document is called in a message.
_DOCUMENT_NAMES = {"server": "manifest", "experiment": "experiment"}

# Python objects reach the schema through dataclasses.asdict, which keeps tuples: they are arrays too.
_TYPE_CHECKER = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "array", lambda checker, instance: isinstance(instance, (list, tuple))
)
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPE_CHECKER)


@cache
def schema(name: str) -> dict:
    """The JSON Schema `name` (one of SCHEMA_NAMES) as a dict."""
    if name not in SCHEMA_NAMES:
        raise ParameterError("schema", name, SCHEMA_NAMES)
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text())


def check(document, name: str, where: str | None = None) -> None:
    """Raise ParameterError for the first place `document` breaks schema `name`; return None when it fits.

    `where` names the file in the message (`servers/x/loadlab.yaml: ...`).
    The outermost error is reported (an unknown or missing key before a
    wrong value inside another field); among equals, the schema's order.
    """
    errors = list(_Validator(schema(name)).iter_errors(document))
    if not errors:
        return
    first = min(errors, key=lambda error: len(error.absolute_path))
    raise _parameter_error(first, name, schema(name), document, where)


def path_text(parts: Sequence) -> str:
    """['servers', 1, 'settings', 'X'] -> 'servers[1].settings.X'."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _parameter_error(error: jsonschema.ValidationError, name: str, root: dict, document,
                     where: str | None) -> ParameterError:
    path = list(error.absolute_path)
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = [key for key in error.instance if key not in known]
        allowed = "one of the known fields: " + ", ".join(known) if known else error.schema.get("description", error.message)
        return ParameterError(path_text(path + [unknown[0]]), error.instance[unknown[0]], allowed, where=where)
    if error.validator == "required":
        missing = [key for key in error.validator_value if key not in error.instance][0]
        described = error.schema.get("properties", {}).get(missing, {})
        described = _resolve(root, described)
        return ParameterError(path_text(path + [missing]), None, described.get("description", "present"), where=where,
                              missing=True)
    if not path:
        return ParameterError(_DOCUMENT_NAMES[name], type(document).__name__, "a mapping of fields", where=where)
    if isinstance(path[-1], int) and _resolve(root, error.schema).get("type") != "object":
        # A wrong element of a list of plain values (connections: [0]): the list is the field a reader wrote.
        parent = _schema_at(root, list(error.absolute_schema_path)[:-2])
        if parent.get("type") == "array" or "items" in parent:
            return ParameterError(path_text(path[:-1]), _instance_at(document, path[:-1]),
                                  parent.get("description", error.message), where=where)
    if "description" in error.schema:
        allowed = error.schema["description"]
    elif error.validator == "enum":
        allowed = [str(value) for value in error.validator_value]
    else:
        allowed = error.message
    return ParameterError(path_text(path), error.instance, allowed, where=where)


def _resolve(root: dict, node: dict) -> dict:
    reference = node.get("$ref") if isinstance(node, dict) else None
    if reference is None:
        return node
    target = root
    for part in reference.removeprefix("#/").split("/"):
        target = target[part]
    return target


def _schema_at(root: dict, schema_path: list) -> dict:
    """The subschema at a validator's schema path, following local $refs."""
    node = root
    for part in schema_path:
        node = _resolve(root, node)  # (a path may or may not name the "$ref" it went through)
        if part != "$ref":
            node = node[part]
    return _resolve(root, node)


def _instance_at(document, path: list):
    for part in path:
        document = document[part]
    return document
