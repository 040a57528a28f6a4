#!/usr/bin/env bash
# The fairpolicy Action's step (action.yml), runnable on its own with the environment
# GitHub sets: GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP, and the INPUT_* variables.
#
# 0. every input validated (exit 2 naming it): policy and data required, one line, not an
#    option; fail-on one of error, warning, never; reports and version one line; each
#    `outputs` line FORMAT=PATH; no carriage return anywhere. Text from an input that
#    reaches a workflow command (`::error`) is escaped by GitHub's rules (% \r \n), and
#    nothing from an input reaches GITHUB_OUTPUT unvalidated;
# 1. a venv of its own under $RUNNER_TEMP (never the model's environment), fairpolicy
#    installed into it from INPUT_VERSION (default: FAIRPOLICY_SOURCE, the action's checkout);
# 2. every report this step writes (results.json, report.html, report.md in INPUT_REPORTS
#    and each FORMAT=PATH of INPUT_OUTPUTS) is removed first (emptied through a symlink;
#    a device such as /dev/null is left alone), so whatever is there after the check
#    comes from this run: an earlier run's "pass" can never be read as this one's. An
#    output that is one of the run's input files (the policy, the data, a file an `args`
#    item names) is refused, exit 2 naming both, before anything is removed;
# 3. `fairpolicy check` with the JSON, HTML and Markdown reports in INPUT_REPORTS, the
#    GitHub annotations on stdout and INPUT_OUTPUTS. The check runs without
#    GITHUB_STEP_SUMMARY: this step writes the job summary, once — the Markdown report of
#    this run, or the error (stderr) when the check wrote none;
# 4. the outputs: gate from this run's exit code (0 pass, 1 fail, else error), the counts
#    from this run's results.json, results, reports and artifact-paths (the reports folder
#    and every FORMAT=PATH file, all uploaded);
# 5. exit with the check's exit code.
set -uo pipefail

escape_data() {  # a workflow-command message, escaped as @actions/core does: % \r \n
    local s=$1
    s=${s//%/%25}
    s=${s//$'\r'/%0D}
    s=${s//$'\n'/%0A}
    printf '%s' "$s"
}

set_output() {  # NAME VALUE: one line, refused otherwise (never a second output or command)
    [ -n "${GITHUB_OUTPUT:-}" ] || return 0
    case "$2" in
        *$'\n'* | *$'\r'*) echo "::error title=fairpolicy::output $1 has a line break; not set" ;;
        *) printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT" ;;
    esac
}

set_output_lines() {  # NAME LINE...: a multi-line output in GitHub's delimiter form
    [ -n "${GITHUB_OUTPUT:-}" ] || return 0
    local name=$1 delim line
    shift
    delim="fairpolicy_$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
    {
        printf '%s<<%s\n' "$name" "$delim"
        for line in "$@"; do printf '%s\n' "$line"; done
        printf '%s\n' "$delim"
    } >> "$GITHUB_OUTPUT"
}

fail_usage() {  # a bad input: exit 2 with the message in the log, the summary and the outputs
    echo "::error title=fairpolicy::$(escape_data "$1")"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        printf '## ⛔ ERROR — fairpolicy could not run\n\n%s\n' "$1" >> "$GITHUB_STEP_SUMMARY"
    fi
    set_output gate error
    set_output exit-code 2
    exit 2
}

shown() {  # an input's value for a message: line breaks made visible
    local s=$1
    s=${s//$'\r'/\\r}
    s=${s//$'\n'/\\n}
    printf '%s' "$s"
}

one_line() {  # NAME VALUE: the input must be a single line
    case "$2" in
        *$'\n'* | *$'\r'*)
            fail_usage "the input '$1' must be one line, got '$(shown "$2")'." ;;
    esac
}

# --- 0. the inputs
[ -n "${INPUT_POLICY:-}" ] || fail_usage "the input 'policy' is required (the policy file)."
[ -n "${INPUT_DATA:-}" ] || fail_usage "the input 'data' is required (the predictions file)."
one_line policy "$INPUT_POLICY"
one_line data "$INPUT_DATA"
case "${INPUT_FAIL_ON:-error}" in
    error | warning | never) ;;
    *) fail_usage "the input 'fail-on' must be error, warning or never, got '$(shown "${INPUT_FAIL_ON}")'." ;;
esac
fail_on="${INPUT_FAIL_ON:-error}"
for pair in "policy=$INPUT_POLICY" "data=$INPUT_DATA"; do
    case "${pair#*=}" in
        -*) fail_usage "the input '${pair%%=*}' is a path, not an option: '${pair#*=}' starts with '-' (write ./${pair#*=})." ;;
    esac
done
one_line reports "${INPUT_REPORTS:-}"
one_line version "${INPUT_VERSION:-}"
reports="${INPUT_REPORTS:-fairpolicy-reports}"
case "${INPUT_OUTPUTS:-}${INPUT_ARGS:-}" in
    *$'\r'*) fail_usage "the inputs 'outputs' and 'args' take one item per line; a carriage return is not allowed." ;;
esac
extra=()  # the FORMAT=PATH outputs
while IFS= read -r item; do
    item="${item#"${item%%[![:space:]]*}"}"; item="${item%"${item##*[![:space:]]}"}"
    [ -n "$item" ] || continue
    if [ "$item" = mlflow ]; then extra+=("$item"); continue; fi
    format="${item%%=*}"
    path="${item#*=}"
    if [ "$format" = "$item" ] || ! [[ "$format" =~ ^[a-z][a-z0-9-]*$ ]] || [ -z "$path" ] || [ "$path" = - ]; then
        fail_usage "the input 'outputs' takes one FORMAT=PATH per line (e.g. sarif=fairpolicy.sarif), got '$item'."
    fi
    extra+=("$item")
done <<< "${INPUT_OUTPUTS:-}"
args=()
while IFS= read -r item; do
    item="${item#"${item%%[![:space:]]*}"}"; item="${item%"${item##*[![:space:]]}"}"
    [ -n "$item" ] && args+=("$item")
done <<< "${INPUT_ARGS:-}"

for item in "${args[@]}"; do  # every report goes through `outputs`, so none is stale
    case "$item" in
        -o* | --ou*) fail_usage "the input 'args' names an output ('$item'); list outputs in the input 'outputs', one FORMAT=PATH per line." ;;
    esac
done

# the run's input files: policy, data, and every file an `args` item names (--baseline,
# --plan, --config, --ssp, however abbreviated; `--flag=value` or the next item)
inputs=("$INPUT_POLICY" "$INPUT_DATA")
for item in "${args[@]}"; do
    inputs+=("$item")
    case "$item" in --*=*) inputs+=("${item#*=}") ;; esac
done

temp="${RUNNER_TEMP:-$(mktemp -d)}"
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

# --- 2. no report of an earlier run survives into this one
results="$reports/results.json"
own=("$results" "$reports/report.html" "$reports/report.md")
files=("${own[@]}")
for item in "${extra[@]}"; do
    [ "$item" = mlflow ] || files+=("${item#*=}")
done
for file in "${files[@]}"; do
    for input in "${inputs[@]}"; do
        if [ -e "$file" ] && [ "$file" -ef "$input" ]; then
            fail_usage "the report '$file' is the input file '$input'; the check would overwrite it. Choose another output path."
        fi
    done
done
for file in "${files[@]}"; do
    if [ -d "$file" ]; then
        fail_usage "the report path '$file' is a folder."
    fi
    # a regular file is removed; through a symlink it is emptied (the link stays a link);
    # a device or a FIFO (/dev/null) is left alone — it holds no earlier report
    if [ -L "$file" ] && [ -f "$file" ]; then
        : > "$file" || fail_usage "cannot empty the earlier report '$file'."
    elif [ -f "$file" ] && [ ! -L "$file" ]; then
        rm -f -- "$file" || fail_usage "cannot remove the earlier report '$file'."
    fi
done

# --- 3. the check (the summary is this step's to write, once)
cmd=("$venv/bin/fairpolicy" check "$INPUT_POLICY" "$INPUT_DATA"
    -o "json=$results" -o "html=$reports/report.html"
    -o "markdown=$reports/report.md" -o github --fail-on "$fail_on")
for item in "${extra[@]}"; do cmd+=(-o "$item"); done
cmd+=("${args[@]}")
env -u GITHUB_STEP_SUMMARY "${cmd[@]}" 2> "$temp/fairpolicy-stderr.txt"
code=$?
cat "$temp/fairpolicy-stderr.txt" >&2

# --- 4. summary and outputs, from this run only
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -s "$reports/report.md" ]; then
        cat "$reports/report.md" >> "$GITHUB_STEP_SUMMARY"
    else
        {
            printf '## ⛔ ERROR — fairpolicy could not evaluate the policy (exit %s)\n\n' "$code"
            printf '~~~~text\n'; cat "$temp/fairpolicy-stderr.txt"; printf '~~~~\n'
        } >> "$GITHUB_STEP_SUMMARY"
    fi
fi
case "$code" in
    0) gate=pass ;;
    1) gate=fail ;;
    *) gate=error ;;
esac
set_output exit-code "$code"
set_output gate "$gate"
set_output reports "$reports"
artifact=("$reports")
for item in "${extra[@]}"; do
    [ "$item" = mlflow ] || { [ -f "${item#*=}" ] && artifact+=("${item#*=}"); }
done
set_output_lines artifact-paths "${artifact[@]}"
if [ -s "$results" ]; then
    set_output results "$results"
    counts=$("$venv/bin/python" - "$results" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
for out, key in (("controls", "total"), ("passed", "pass"), ("failed", "fail"),
                 ("warned", "warn"), ("inconclusive", "inconclusive"), ("errors", "error")):
    print(f"{out}={int(s[key])}")
PY
) || counts=""
    while IFS= read -r line; do
        [ -n "$line" ] && set_output "${line%%=*}" "${line#*=}"
    done <<< "$counts"
fi

# --- 5. the check's verdict is the step's
exit "$code"
