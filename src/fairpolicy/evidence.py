"""The evidence chain of one check, before and after the run (issue 14's documents, moved
out of the command line by issue 17): the team's SSP (``--ssp``) and the approved
assessment plan (``--plan``) are read and checked before any work, and the results are
tied to them after it — the SSP's hash recorded, the run verified against the plan (or
nothing is written). The command line only parses and dispatches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fairpolicy.errors import UsageError
from fairpolicy.records import lean

if TYPE_CHECKING:
    from fairpolicy.gate_settings import VerifiedPlan
    from fairpolicy.results import Results


@lean
class Chain:
    """What a check's outputs link to: the team's SSP (path and document) and the plan."""

    ssp_path: str | None
    #: the team's SSP as checked: (its SHA-256, the UUID of the model's component)
    ssp: tuple[str, str] | None
    plan: str | None
    #: the run's ``--subject``: as given, else the one the plan pins (subject continuity)
    subject: str | None = None

    @property
    def given_ssp(self) -> tuple[str, str] | None:
        """(path, SHA-256) of the team's SSP for the writers, or None."""
        if self.ssp is None or self.ssp_path is None:
            return None
        return self.ssp_path, self.ssp[0]


def prepare(
    outputs: Sequence[tuple[str, str | None]],
    ssp_path: str | None,
    plan: str | None,
    subject: str | None,
    data_name: str,
) -> Chain:
    """Read and check the plan and the SSP before the data is read: a bad document, or a
    plan given together with ``-o oscal-ap``, stops the run before any work. Without
    ``--subject`` (``subject`` None), a run with a plan assesses the subject the plan pins
    (``Chain.subject``); ``data_name`` is the title otherwise."""
    if plan is not None:
        from fairpolicy.plan import planned_subject, read_plan

        if any(n == "oscal-ap" for n, _ in outputs):
            raise UsageError(
                "--plan names the approved assessment plan, and -o oscal-ap would write "
                "another one.",
                hint="leave out -o oscal-ap: the results import the plan given with --plan.",
            )
        body, _ = read_plan(plan)  # a readable, valid plan that pins its settings
        if subject is None:
            subject = planned_subject(body)
    ssp = None
    if ssp_path is not None:  # fairpolicy.ssp imported only then
        from fairpolicy.ssp import given_ssp

        writes = "-o oscal-ssp" if any(n == "oscal-ssp" for n, _ in outputs) else None
        # the subject's title as the outputs write it: --subject, else the data file's name
        ssp = given_ssp(ssp_path, writes, subject or data_name)
    return Chain(ssp_path, ssp, plan, subject)


def attach(results: Results, chain: Chain) -> tuple[Results, VerifiedPlan | None]:
    """The results tied to the chain: the SSP's hash recorded; the run verified against
    the plan (exit 2 naming each difference, before anything is written)."""
    if chain.ssp is not None and chain.ssp_path is not None:
        from fairpolicy.ssp import with_ssp

        results = with_ssp(results, chain.ssp_path, chain.ssp[0])
    if chain.plan is not None:
        from fairpolicy.plan import verify

        return results, verify(chain.plan, results)
    return results, None
