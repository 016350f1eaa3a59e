"""Loads c_api/ember_api.json, the machine-readable description of Ember's C ABI (schema in c_api/README.md).

Standard library only: every binding generator (Rust, C#, LuaJIT, Python) and the checker import it.
"""
import json
import os

SCHEMA = 1
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "c_api", "ember_api.json")


def load(path=DEFAULT_PATH):
    """The description as a dict; refuses a schema this loader does not know (the schema only grows: a newer
    minor addition keeps the same number, a breaking one would bump it)."""
    with open(path, encoding="utf-8") as f:
        api = json.load(f)
    if api.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {api.get('schema')!r}, this loader reads schema {SCHEMA}")
    return api


def by_name(items):
    """{name: item} for one of the description's lists (enums, structs, functions, ...)."""
    return {item["name"]: item for item in items}


def enum_values(api):
    """{value name: int} over every enum, plus every constant."""
    values = {v["name"]: v["value"] for e in api["enums"] for v in e["values"]}
    values.update({c["name"]: c["value"] for c in api["constants"]})
    return values
