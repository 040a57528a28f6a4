#!/usr/bin/env bash
# The fairpolicy Action's step (action.yml), runnable on its own with the environment
# GitHub sets: GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP, and the INPUT_* variables.
#
# 1. a venv of its own under $RUNNER_TEMP (never the model's environment), fairpolicy
#    installed into it from INPUT_VERSION (default: FAIRPOLICY_SOURCE, the action's checkout);
# 2. `fairpolicy check` with the JSON, HTML and Markdown reports in INPUT_REPORTS, the
#    GitHub annotations on stdout and INPUT_OUTPUTS;
# 3. the Markdown report appended to the job summary (or the error, on exit 2), and the
#    outputs gate, exit-code, counts, results, reports written to GITHUB_OUTPUT;
# 4. exit with the check's exit code.
set -uo pipefail

fail_usage() {  # a bad input: exit 2 with the message in the log, the summary and the outputs
    echo "::error title=fairpolicy::$1"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        printf '## ⛔ ERROR — fairpolicy could not run\n\n%s\n' "$1" >> "$GITHUB_STEP_SUMMARY"
    fi
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
        { echo "gate=error"; echo "exit-code=2"; } >> "$GITHUB_OUTPUT"
    fi
    exit 2
}

[ -n "${INPUT_POLICY:-}" ] || fail_usage "the input 'policy' is required (the policy file)."
[ -n "${INPUT_DATA:-}" ] || fail_usage "the input 'data' is required (the predictions file)."
case "${INPUT_FAIL_ON:-error}" in
    error|warning|never) ;;
    *) fail_usage "fail-on must be error, warning or never, got '${INPUT_FAIL_ON}'." ;;
esac
temp="${RUNNER_TEMP:-$(mktemp -d)}"
reports="${INPUT_REPORTS:-fairpolicy-reports}"
mkdir -p "$reports" || fail_usage "cannot create the reports folder '$reports'."
python="${FAIRPOLICY_PYTHON:-python3}"
venv="$temp/fairpolicy-venv"

# --- 1. install into a venv of its own
if [ ! -x "$venv/bin/fairpolicy" ]; then
    "$python" -m venv "$venv" || fail_usage "cannot create a virtual environment with $python."
    spec="${INPUT_VERSION:-}"
    [ -n "$spec" ] || spec="${FAIRPOLICY_SOURCE:?FAIRPOLICY_SOURCE or INPUT_VERSION is needed}"
    # FAIRPOLICY_PIP_ARGS: extra pip arguments (the offline test passes --no-index …)
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install -q --disable-pip-version-check ${FAIRPOLICY_PIP_ARGS:-} \
        "$spec" || fail_usage "pip could not install fairpolicy from '$spec'."
fi

# --- 2. the check
cmd=("$venv/bin/fairpolicy" check "$INPUT_POLICY" "$INPUT_DATA"
    -o "json=$reports/results.json" -o "html=$reports/report.html"
    -o "markdown=$reports/report.md" -o github --fail-on "${INPUT_FAIL_ON:-error}")
while IFS= read -r item; do
    item="${item#"${item%%[![:space:]]*}"}"; item="${item%"${item##*[![:space:]]}"}"
    [ -n "$item" ] && cmd+=(-o "$item")
done <<< "${INPUT_OUTPUTS:-}"
while IFS= read -r item; do
    item="${item#"${item%%[![:space:]]*}"}"; item="${item%"${item##*[![:space:]]}"}"
    [ -n "$item" ] && cmd+=("$item")
done <<< "${INPUT_ARGS:-}"
"${cmd[@]}" 2> "$temp/fairpolicy-stderr.txt"
code=$?
cat "$temp/fairpolicy-stderr.txt" >&2

# --- 3. summary and outputs
results="$reports/results.json"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -s "$reports/report.md" ] && [ "$code" -ne 2 ] || [ -s "$results" ]; then
        cat "$reports/report.md" >> "$GITHUB_STEP_SUMMARY"
    else
        {
            printf '## ⛔ ERROR — fairpolicy could not evaluate the policy (exit %s)\n\n' "$code"
            printf '```text\n'; cat "$temp/fairpolicy-stderr.txt"; printf '```\n'
        } >> "$GITHUB_STEP_SUMMARY"
    fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "exit-code=$code"
        echo "reports=$reports"
        if [ -s "$results" ]; then
            echo "results=$results"
            "$venv/bin/python" - "$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(f"gate={s['gate']}")
for out, key in (("controls", "total"), ("passed", "pass"), ("failed", "fail"),
                 ("warned", "warn"), ("inconclusive", "inconclusive"), ("errors", "error")):
    print(f"{out}={s[key]}")
PY
        else
            echo "gate=error"
        fi
    } >> "$GITHUB_OUTPUT"
fi

# --- 4. the check's verdict is the step's
exit "$code"
