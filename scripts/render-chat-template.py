#!/usr/bin/env python3
"""Render a chat template as transformers' apply_chat_template does.

Reads one JSON object on stdin, {"template", "messages",
"add_generation_prompt", "bos_token", "eos_token"}, and writes the rendered
text to stdout; or a JSON list of such objects, and writes the JSON list of
their texts (one Python start for hundreds of contexts). The environment is transformers': a sandboxed Jinja with
trim_blocks and lstrip_blocks, loop controls, raise_exception and a tojson
that keeps non-ASCII text. feedrun's tests compare this rendering of a
checkpoint's own template with what feedrun renders through llama.cpp.
"""
import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


# Compiled templates by their text: a list of requests usually holds one
# template, compiled once.
COMPILED = {}


def render(env, req):
    if req["template"] not in COMPILED:
        COMPILED[req["template"]] = env.from_string(req["template"])
    return COMPILED[req["template"]].render(
        messages=req["messages"],
        add_generation_prompt=req["add_generation_prompt"],
        bos_token=req.get("bos_token", ""),
        eos_token=req.get("eos_token", ""),
    )


def main():
    req = json.load(sys.stdin)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    if isinstance(req, list):
        json.dump([render(env, r) for r in req], sys.stdout, ensure_ascii=False)
    else:
        sys.stdout.write(render(env, req))


if __name__ == "__main__":
    main()
