#!/usr/bin/env bash
# Build the wheel and the sdist, check them (twine), install each into a fresh virtual
# environment (no site packages: a missing dependency or package-data file shows), and run
# the README's first command from the installed package, outside the source tree.
# Used by .ci/run; needs network access to PyPI for build, twine and the dependencies.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check build twine
"$work/tools/bin/python" -m build --sdist --wheel --outdir "$work/dist" "$root" >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2; exit 1; }
# a build that warns (a deprecated pyproject field, a file left out) fails the check
if grep -n "Warning\|WARNING" "$work/build.log" | grep -v "Location 'file://" >&2; then
    echo "the build printed warnings (above)" >&2; exit 1
fi
"$work/tools/bin/twine" check --strict "$work"/dist/*
wheel=("$work"/dist/fairpolicy-*.whl)
# listed to a file first: `zipfile -l | grep -q` under pipefail fails at random once the
# listing outgrows the pipe (grep -q exits at the first match, zipfile gets EPIPE)
python -m zipfile -l "${wheel[0]}" > "$work/wheel.txt"
grep -q "licenses/LICENSE" "$work/wheel.txt" || { echo "the wheel lacks LICENSE" >&2; exit 1; }
sdist=("$work"/dist/fairpolicy-*.tar.gz)
# the sdist carries what a rebuild needs: sources, package data, README, licence
tar -tzf "${sdist[0]}" > "$work/sdist.txt"
for need in pyproject.toml README.md LICENSE src/fairpolicy/cli.py \
    src/fairpolicy/schemas_nist/oscal_complete_schema.json; do
    grep -q "/$need\$" "$work/sdist.txt" || { echo "sdist lacks $need" >&2; exit 1; }
done
for artefact in "${wheel[0]}" "${sdist[0]}"; do
    env="$work/env-$(basename "$artefact" | tr -c 'A-Za-z0-9\n' _)"
    python -m venv "$env"
    "$env/bin/pip" install -q --disable-pip-version-check "$artefact"
    # the README's first command, from the installed package, in a folder without src/
    cp -r "$root/examples" "$work/examples"
    (cd "$work" && "$env/bin/fairpolicy" check examples/credit/policy.yaml \
        examples/credit/predictions.csv -o "oscal=$work/ar.json" >/dev/null) || {
        code=$?
        [ "$code" -eq 1 ] || { echo "check from $(basename "$artefact") exited $code" >&2; exit 1; }
    }
    # the vendored NIST schema is package data: validate the assessment results with it
    (cd "$work" && "$env/bin/python" -c "
import json, sys
from fairpolicy.oscal_schema import check_document, schema_path
assert 'site-packages' in str(schema_path()), schema_path()
check_document(json.load(open('ar.json')), 'assessment-results', 'ar.json')
")
    rm -rf "$work/examples" "$work/ar.json"
    echo "ok: $(basename "$artefact") installs, runs the Quickstart and validates its OSCAL"
done
