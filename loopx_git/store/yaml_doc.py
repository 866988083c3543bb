"""Documents are YAML for people and pull requests; they are written, never read back on the
read path (reads fold the JSON events)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML


def _dumper() -> YAML:
    """A new dumper per call: a ruamel YAML object keeps emitter state between dumps, so one
    shared instance breaks when two threads write documents at once (and stays broken)."""
    from ruamel.yaml import YAML  # lazy: only writes and verify render documents

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096  # one field per line: diffs in pull requests stay readable
    yaml.representer.add_representer(type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def render(data: dict[str, Any]) -> bytes:
    """Stable YAML: keys in the order given (the model's field order), UTF-8, trailing newline."""
    out = io.StringIO()
    _dumper().dump(data, out)
    return out.getvalue().encode("utf-8")
