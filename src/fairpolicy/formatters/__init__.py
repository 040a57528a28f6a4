"""Output formats. One module per format, each with ``render(results, opts) -> str``.

Formatters only read :class:`~fairpolicy.results.Results`; none knows a
metric. ``FORMATS`` maps a format name to its module (imported on use).
An unknown name is an error listing the valid ones, never a fallback.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.records import lean

if TYPE_CHECKING:
    from fairpolicy.gate_settings import VerifiedPlan
    from fairpolicy.results import Results

FORMATS: dict[str, str] = {
    "text": "fairpolicy.formatters.text",
    "json": "fairpolicy.formatters.json_",
    "junit": "fairpolicy.formatters.junit",
    "sarif": "fairpolicy.formatters.sarif",
    "github": "fairpolicy.formatters.github",
    "markdown": "fairpolicy.formatters.markdown",
    "html": "fairpolicy.formatters.html",
    "oscal": "fairpolicy.formatters.oscal",  # assessment results
    "oscal-ap": "fairpolicy.formatters.oscal_ap",  # assessment plan
    "oscal-ssp": "fairpolicy.formatters.oscal_ssp",  # system security plan
    "ll144-csv": "fairpolicy.formatters.ll144_csv",  # LL144 summary of results
}


@lean
class RenderOptions:
    color: bool = False
    verbose: bool = False
    #: show only what did not pass
    quiet: bool = False
    #: where the output goes (None = stdout); formats pick JSON/YAML by its extension
    path: str | None = None
    #: title of the assessed system/model (OSCAL subject); default: the data file name
    subject: str | None = None
    #: embed the results JSON (base64) in OSCAL back-matter
    embed_evidence: bool = False
    #: reproducible output: v5 UUIDs from content, fixed timestamps
    deterministic: bool = False
    #: href of the assessment plan written beside the assessment results (``-o oscal-ap``)
    #: or verified against (``--plan``), and the SHA-256 of the plan written beside them
    ap_href: str | None = None
    ap_sha256: str | None = None
    #: the approved plan the run was verified against (``check --plan``, ``export
    #: --plan``): only :func:`fairpolicy.plan.verify` builds one
    plan: VerifiedPlan | None = None
    #: href of the results JSON written by the same run (``-o json``), for the AR's evidence
    results_href: str | None = None
    #: href of the system security plan the assessment plan imports (``--ssp`` / ``-o
    #: oscal-ssp``); without one the plan describes the system in its back-matter
    ssp_href: str | None = None
    #: SHA-256 of that SSP, when known
    ssp_sha256: str | None = None
    #: href of the profile an SSP written by ``-o oscal-ssp`` imports
    profile_href: str | None = None
    #: SHA-256 of that profile when fairpolicy generates it (a catalog's or a simple
    #: policy's profile, written beside the SSP); the SSP's back-matter carries it
    profile_sha256: str | None = None
    #: the assessors (``Name <email>``) and their organization; never invented
    assessors: tuple[str, ...] = ()
    organization: str | None = None
    #: the people approving an assessment plan (``fairpolicy plan --approver``)
    approvers: tuple[str, ...] = ()


class Formatter(Protocol):
    def __call__(self, results: Results, opts: RenderOptions) -> str: ...


def get(name: str) -> Formatter:
    if name not in FORMATS:
        raise UsageError(
            f"unknown output format '{name}'.{did_you_mean(name, FORMATS)} "
            f"Valid formats: {', '.join(FORMATS)}."
        )
    module = importlib.import_module(FORMATS[name])
    render: Formatter = module.render
    return render
