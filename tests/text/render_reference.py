#!/usr/bin/env python3
"""Renders a chat template with Python's jinja2 exactly as Hugging Face transformers does.

Usage: render_reference.py TEMPLATE.jinja CONTEXT.json [--now 2025-01-15T10:30:00]
       render_reference.py --batch CASES.json [--now ...]

The environment is transformers' (utils/chat_template_utils.py): an
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loopcontrols, a tojson
filter that is json.dumps(..., ensure_ascii=False), and the raise_exception and
strftime_now globals. The context's keys become the template's variables.

Prints the rendered text byte-exact on stdout (no newline added), exit 0. When the template
raises, prints "raise: MESSAGE" (raise_exception) or "error: TYPE: MESSAGE" (anything else)
on stderr and exits 1. Exits 77 when jinja2 is not installed, so callers can skip.

--batch renders many small templates in one process: CASES.json is a list of
{"template": str, "context": object}; stdout gets a JSON list of {"ok": bool, "out": str}
(out is the rendered text, or the error as above).
"""
import argparse
import datetime
import json
import sys

try:
    import jinja2
    import jinja2.ext
    import jinja2.sandbox
except ImportError:
    print("python3-jinja2 is not installed", file=sys.stderr)
    sys.exit(77)


class TemplateRaised(Exception):
    pass


def make_environment(now):
    def raise_exception(message):
        raise TemplateRaised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


_compiled = {}


def render(env, source, context):
    """(True, text) or (False, "raise: ..." / "error: TYPE: ...")."""
    try:
        if source not in _compiled:
            _compiled[source] = env.from_string(source)
        return True, _compiled[source].render(**context)
    except TemplateRaised as e:
        return False, f"raise: {e}"
    except Exception as e:  # the template failed; report it like a test expects
        return False, f"error: {type(e).__name__}: {e}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("template", nargs="?")
    parser.add_argument("context", nargs="?")
    parser.add_argument("--batch", default=None)
    parser.add_argument("--now", default=None)
    args = parser.parse_args()
    now = datetime.datetime.fromisoformat(args.now) if args.now else datetime.datetime.now()
    env = make_environment(now)

    if args.batch:
        with open(args.batch, encoding="utf-8") as f:
            cases = json.load(f)
        results = []
        for case in cases:
            ok, out = render(env, case["template"], case["context"])
            results.append({"ok": ok, "out": out})
        sys.stdout.buffer.write(json.dumps(results, ensure_ascii=True).encode("ascii"))
        return 0

    with open(args.template, encoding="utf-8", newline="") as f:
        source = f.read()
    with open(args.context, encoding="utf-8") as f:
        context = json.load(f)
    ok, out = render(env, source, context)
    if not ok:
        print(out, file=sys.stderr)
        return 1
    sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
