#!/usr/bin/env python3
"""Trims a scratch copy of the hashicorp/aws provider's source to the AWS services our Terraform uses.

Called by .ci/aws-provider.sh on its copy of the module (never on the Go module cache):

  aws-provider-trim.py SOURCE_DIR SERVICES_FILE MANIFEST_OUT

1. internal/provider/sdkv2/service_packages_gen.go, the generated list through which the provider
   registers every service package (each one's resources, data sources and API client factory), keeps
   only the packages SERVICES_FILE names. The packages it drops are neither compiled nor in the schema.
2. internal/conns/awsclient_gen.go, the generated API client getters (one per service, each importing
   that service's AWS SDK for Go package), keeps only the getters that some compiled package still
   names: without this, all ~260 SDK service packages would still be downloaded and compiled.
3. MANIFEST_OUT (JSON) records the services built and every resource, data source, ephemeral resource
   and action type of the whole provider with its service package, so that `npm run tf:check` can name
   the service to add when the Terraform uses a type this build lacks (scripts/tf-check/provider-services.ts).

A service package may still be compiled without being registered, because a registered one imports it
(lambda and meta import ec2, s3 imports s3control): its resources stay out of the schema, and a code
path that asks for its API client fails with "unknown service package". None of ours takes such a path
(lambda's needs replace_security_groups_on_destroy, s3's a directory bucket).
"""

import json
import os
import re
import sys

MODULE = "github.com/hashicorp/terraform-provider-aws"


class TrimError(Exception):
    pass


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def services_in(services_file):
    """The service package names of the list: one a line, '#' starts a comment."""
    names = []
    for number, line in enumerate(read(services_file).splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if not re.fullmatch(r"[a-z0-9]+", name):
            raise TrimError(f"{services_file}:{number}: '{name}' is not a service package name (lower-case letters and digits, e.g. sqs)")
        names.append(name)
    if not names:
        raise TrimError(f"{services_file} lists no service")
    return sorted(set(names))


def type_map(src):
    """Every Terraform type of the provider (resource, data source, ephemeral, action) -> its service package."""
    types = {}
    service_dir = os.path.join(src, "internal", "service")
    for service in sorted(os.listdir(service_dir)):
        gen = os.path.join(service_dir, service, "service_package_gen.go")
        if not os.path.isfile(gen):
            continue
        for type_name in re.findall(r'TypeName:\s+"(aws_[a-z0-9_]+)"', read(gen)):
            types.setdefault(type_name, service)
    return types


def keep_service_packages(src, services):
    path = os.path.join(src, "internal", "provider", "sdkv2", "service_packages_gen.go")
    text = read(path)
    available = set(re.findall(r'"' + re.escape(MODULE) + r'/internal/service/([a-z0-9]+)"', text))
    unknown = [s for s in services if s not in available]
    if unknown:
        raise TrimError(
            "not a service package that the provider registers: " + ", ".join(unknown)
            + " (the names are the directories of internal/service in its source, e.g. sqs, logs, meta)"
        )
    kept_import = re.compile(r'^\t"' + re.escape(MODULE) + r'/internal/service/([a-z0-9]+)"\n', re.M)
    text = kept_import.sub(lambda m: m.group(0) if m.group(1) in services else "", text)
    registration = re.compile(r"^\t\t([a-z0-9]+)\.ServicePackage\(ctx\),\n", re.M)
    registered = registration.findall(text)
    if sorted(set(registered)) != sorted(available):
        raise TrimError(f"{path}: its registrations do not match its imports; the generated file's layout has changed")
    text = registration.sub(lambda m: m.group(0) if m.group(1) in services else "", text)
    write(path, text)


def compiled_packages(src, services):
    """The provider's own packages that the trimmed build compiles: main's imports, followed (over-approximate:
    every non-test file, whatever its build tags)."""
    importer = re.compile(r'"(' + re.escape(MODULE) + r'/[A-Za-z0-9_./-]+)"')
    seen = set()
    todo = [""]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        directory = os.path.join(src, rel)
        for name in os.listdir(directory):
            if name.endswith(".go") and not name.endswith("_test.go"):
                for path in importer.findall(read(os.path.join(directory, name))):
                    todo.append(path[len(MODULE) + 1 :])
    return seen


def keep_used_client_getters(src, services):
    path = os.path.join(src, "internal", "conns", "awsclient_gen.go")
    text = read(path)
    words = set()
    for rel in compiled_packages(src, services):
        directory = os.path.join(src, rel)
        for name in os.listdir(directory):
            full = os.path.join(directory, name)
            if name.endswith(".go") and not name.endswith("_test.go") and full != path:
                words.update(re.findall(r"\b[A-Za-z0-9_]+Client\b", read(full)))
    getter = re.compile(r"^func \(c \*AWSClient\) ([A-Za-z0-9_]+)\(ctx context\.Context\) [^\n]*\{\n.*?^\}\n\n?", re.M | re.S)
    if len(getter.findall(text)) < 100:
        raise TrimError(f"{path}: too few client getters found; the generated file's layout has changed")
    text = getter.sub(lambda m: m.group(0) if m.group(1) in words else "", text)
    header, sep, body = text.partition("\n)\n")
    if not sep:
        raise TrimError(f"{path}: no import block")

    def used_import(m):
        package = m.group(1).rsplit("/", 1)[-1]
        return m.group(0) if re.search(r"\b" + re.escape(package) + r"\.", body) else ""

    header = re.sub(r'^\t"([^"]+)"\n', used_import, header, flags=re.M)
    write(path, header + sep + body)


def main(argv):
    if len(argv) != 4:
        raise TrimError("usage: aws-provider-trim.py SOURCE_DIR SERVICES_FILE MANIFEST_OUT")
    src, services_file, manifest_out = argv[1:]
    services = services_in(services_file)
    types = type_map(src)
    keep_service_packages(src, services)
    keep_used_client_getters(src, services)
    manifest = {"services": services, "types": dict(sorted(types.items()))}
    write(manifest_out, json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except TrimError as error:
        print(f"aws-provider-trim: {error}", file=sys.stderr)
        sys.exit(1)
