"""A client nobody here wrote, generated from the served OpenAPI document: openapi-python-client
(PyPI) turns GET /openapi.yaml into a Python package, which must hold a function for every
operation the document describes (a generator that ignores what it cannot read drops operations
without failing), and each of them is called once against the live server and must succeed.

Usage: python scripts/openapi_client_check.py BASE_URL WORK_DIR   (an admin's token in $TOKEN)
Exit status 0 when every check holds; each failure is printed with what was seen.
"""

import importlib
import inspect
import os
import pathlib
import re
import subprocess
import sys
import typing

import attrs
import httpx
from ruamel.yaml import YAML

METHODS = ("get", "put", "post", "patch", "delete")
failures = []


def check(condition, what, seen=None):
    print(("ok    " if condition else "FAIL  ") + what + ("" if condition or seen is None else f": {seen!r}"))
    if not condition:
        failures.append(what)


def documented(document):
    """(method, path) of every operation, and whether every path item stands whole in `paths`."""
    operations = set()
    for path, item in document["paths"].items():
        check("$ref" not in item, f"{path}: the path item is in `paths`, not a $ref", item.get("$ref"))
        if "$ref" in item:  # `#/components/pathItems/Name`: its operations are documented too
            node = document
            for part in item["$ref"].lstrip("#/").split("/"):
                node = node[part]
            item = node
        operations |= {(method, path) for method in METHODS if method in item}
    return operations


def generated(package):
    """(method, path) of every function the generator made, from the request each one builds."""
    found = {}
    pattern = re.compile(r'"method": "(\w+)",\s*"url": "([^"]+)"')
    for module in sorted((package / "api").rglob("*.py")):
        for method, url in pattern.findall(module.read_text()):
            found[(method, url)] = ".".join(module.relative_to(package.parent).with_suffix("").parts)
    return found


def body_for(annotation):
    """A request body of the generated model `annotation` (or the first model of a union): a
    title, or an erasure's reason."""
    model = next(member for member in (typing.get_args(annotation) or (annotation,)) if attrs.has(member))
    names = {field.name for field in attrs.fields(model)}
    return model(title="From the generated client") if "title" in names else model(reason="asked by its author")


def main():
    base, work = sys.argv[1], pathlib.Path(sys.argv[2])
    text = httpx.get(f"{base}/openapi.yaml").text
    (work / "openapi.yaml").write_text(text)
    operations = documented(YAML(typ="safe").load(text))

    # No formatter runs on the generated code: nothing here needs it, and it is one tool less.
    (work / "generator.yaml").write_text("post_hooks: []\n")
    run = subprocess.run(
        ["openapi-python-client", "generate", "--path", str(work / "openapi.yaml"), "--meta", "none",
         "--config", str(work / "generator.yaml"), "--output-path", str(work / "announcements_client")],
        capture_output=True, text=True,
    )
    check(run.returncode == 0, "openapi-python-client generates a client", run.stdout[-2000:] + run.stderr[-2000:])
    if run.returncode != 0:
        return
    functions = generated(work / "announcements_client")
    missing = sorted(operations - set(functions))
    check(not missing, f"the generated client has a function for each of the {len(operations)} documented operations", missing)

    sys.path.insert(0, str(work))
    client_module = importlib.import_module("announcements_client")
    client = client_module.AuthenticatedClient(base_url=base, token=os.environ["TOKEN"])
    create = importlib.import_module(functions[("post", "/announcements")])
    model = importlib.import_module("announcements_client.models")

    for (method, path), name in sorted(functions.items()):
        function = importlib.import_module(name).sync_detailed
        arguments = {"client": client}
        parameters = inspect.signature(function).parameters
        if "id" in parameters:
            # A change is made to an announcement of its own, so that each call finds one to change.
            made = create.sync_detailed(client=client, body=model.NewAnnouncement(title=f"For {method} {path}"))
            arguments["id"] = made.parsed.id if made.status_code == 201 else 0
        if "body" in parameters:
            arguments["body"] = body_for(parameters["body"].annotation)
        try:
            response = function(**arguments)
            check(200 <= response.status_code < 300, f"{name.rsplit('.', 1)[-1]}: {method.upper()} {path} answers {response.status_code}",
                  response.content[:300])
        except Exception as error:  # an undocumented answer, or one the client cannot read
            check(False, f"{name.rsplit('.', 1)[-1]}: {method.upper()} {path}", repr(error)[:300])


if __name__ == "__main__":
    main()
    print(f"{len(failures)} failure(s)" if failures else "every check holds")
    sys.exit(1 if failures else 0)
