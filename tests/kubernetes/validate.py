"""Validates Kubernetes manifests and prints them as JSON.

Run by tests/suite/kubernetes.rs with the python of scripts/k8s-env.sh:

    python validate.py VERSION[,VERSION...] FILE...

Every document of every FILE is checked against the API schemas of each
Kubernetes VERSION (kubernetes-validate, strict: an unknown field is an
error, so a misspelt setting cannot pass as ignored). The SandboxTemplate
of the kubernetes-sigs agent-sandbox project is checked against the
fields of its CRD's schema (extensions.agents.x-k8s.io/v1beta1) written
out below, with its pod spec and network rules checked against the same
API schemas as a Pod's and a NetworkPolicy's (the CRD generates them from
those types). On success, prints [{"file": ..., "doc": ...}, ...] for the
test's own checks; on failure, every problem on stderr and exit status 1.
"""

import json
import sys

import jsonschema
import kubernetes_validate
import kubernetes_validate.utils as kv
import yaml
from referencing import Registry, Resource

DEFS = "/api/_definitions.json#/$defs/"


def strict_object(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


# The SandboxTemplate fields this project uses, as the CRD's
# openAPIV3Schema (v1beta1) has them. Strict at every level written here.
SANDBOX_TEMPLATE = dict(
    strict_object(
    {
        "apiVersion": {"const": "extensions.agents.x-k8s.io/v1beta1"},
        "kind": {"const": "SandboxTemplate"},
        "metadata": {"$ref": DEFS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": strict_object(
            {
                "envVarsInjectionPolicy": {"enum": ["Allowed", "Overrides", "Disallowed"]},
                "networkPolicyManagement": {"enum": ["Managed", "Unmanaged"]},
                "networkPolicy": strict_object(
                    {
                        "ingress": {"type": "array", "items": {"$ref": DEFS + "io.k8s.api.networking.v1.NetworkPolicyIngressRule"}},
                        "egress": {"type": "array", "items": {"$ref": DEFS + "io.k8s.api.networking.v1.NetworkPolicyEgressRule"}},
                    }
                ),
                "podTemplate": strict_object(
                    {
                        "metadata": strict_object(
                            {
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                            }
                        ),
                        "spec": {"$ref": DEFS + "io.k8s.api.core.v1.PodSpec"},
                    },
                    required=["spec"],
                ),
            },
            required=["podTemplate"],
        ),
    },
        required=["apiVersion", "kind", "spec"],
    ),
    # The API schemas' base, so DEFS resolves as in their own files.
    **{"$id": "https://kubernetes.io/api/sandboxtemplate/v1beta1"},
)


def validate_sandbox_template(doc, version):
    """The template against SANDBOX_TEMPLATE, its references resolved in
    the strict API schemas of `version`."""
    schema_dir = "v%s-local-strict" % [v for v in kv.all_versions() if kv.major_minor(v) <= version][-1]
    defs = kv.schema_contents("kubernetes-json-schema/%s/_definitions.json" % schema_dir, version)
    registry = Resource.from_contents(defs) @ Registry()
    validator = jsonschema.validators.Draft202012Validator(SANDBOX_TEMPLATE, registry=registry)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in errors]


def main():
    versions = sys.argv[1].split(",")
    out, problems = [], []
    for path in sys.argv[2:]:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        if not docs:
            problems.append("%s: no document" % path)
        for doc in docs:
            name = "%s %s/%s" % (path, doc.get("kind"), doc.get("metadata", {}).get("name"))
            for version in versions:
                if doc.get("kind") == "SandboxTemplate":
                    problems += ["%s (Kubernetes %s): %s" % (name, version, p) for p in validate_sandbox_template(doc, version)]
                    continue
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                except kubernetes_validate.ValidationError as e:
                    path_ = "/".join(map(str, e.absolute_path))
                    problems.append("%s (Kubernetes %s): %s: %s" % (name, version, path_, e.message))
                except kubernetes_validate.SchemaNotFoundError as e:
                    problems.append("%s (Kubernetes %s): no schema: %s" % (name, version, e))
            out.append({"file": path, "doc": doc})
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
