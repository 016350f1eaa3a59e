"""The description of the C ABI, c_api/ember_api.json: the source of the binding's constants, enum values, struct
layouts and function signatures (ember/_lib.py, ember/errors.py), as of the Rust, C# and LuaJIT bindings. The
c_api_description test keeps it in step with ember.h. Read next to the package when installed (meson install copies
it there), else from the source checkout."""
import json
import os


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    for candidate in (os.path.join(here, "ember_api.json"), os.path.join(repo, "c_api", "ember_api.json")):
        if os.path.exists(candidate):
            with open(candidate, encoding="utf-8") as f:
                api = json.load(f)
            if api.get("schema") != 1:
                raise ImportError("ember: %s has schema %r, this binding reads schema 1" % (candidate,
                                                                                             api.get("schema")))
            return api
    raise ImportError("ember: ember_api.json (the description of the C ABI) is neither next to the package nor in "
                      "a source checkout's c_api/")


API = _load()
CONSTANTS = {c["name"]: c["value"] for c in API["constants"]}
ENUMS = {e["name"]: {v["name"]: v["value"] for v in e["values"]} for e in API["enums"]}
