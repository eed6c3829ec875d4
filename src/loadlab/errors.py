"""Exceptions with messages a user can act on."""

from __future__ import annotations

from collections.abc import Iterable


class LoadlabError(Exception):
    """Base class: every error loadlab raises on purpose."""


class ParameterError(LoadlabError, ValueError):
    """A parameter is wrong. Raised before any container starts.

    The message names the parameter, the value given and what is allowed;
    `where` (a file) comes first when the parameter is a field of a file.
    """

    def __init__(self, parameter: str, value: object, allowed: str | Iterable[str], where: str | None = None,
                 missing: bool = False):
        if not isinstance(allowed, str):
            allowed = "one of " + ", ".join(str(a) for a in allowed)
        self.parameter = parameter
        self.value = value
        self.allowed = allowed
        self.where = where
        self.missing = missing
        message = (f"the field {parameter} is missing: {parameter} must be {allowed}" if missing
                   else f"{parameter}={value!r} is not allowed: {parameter} must be {allowed}")
        super().__init__(f"{where}: {message}" if where else message)


class DockerUnavailableError(LoadlabError):
    """No Docker engine answers; the message says how to start one."""


class EngineLost(DockerUnavailableError):
    """The engine stopped answering mid-run; the message says which trial and how to resume."""


class BuildError(LoadlabError):
    """An image build failed; the message carries the tail of the build log."""


class BuildInputUnavailable(BuildError):
    """An optional image cannot be built here: an input it needs cannot be had.

    Raised only when the server declares the input (`build_inputs` in its
    loadlab.yaml), none was given, and the Dockerfile said so itself. Callers
    leave such a server out and say why; every other BuildError is a failure.
    """

    def __init__(self, image: str, reason: str):
        self.image = image
        self.reason = reason
        super().__init__(f"{image} cannot be built here: {reason}")


class TrialFailure(LoadlabError):
    """A trial failed for a recorded reason (crash, OOM, health timeout, ...)."""

    def __init__(self, reason: str, detail: str = "", logs: str = "", ended_utc: str | None = None):
        self.reason = reason
        self.detail = detail
        self.logs = logs
        # When the server's process ended, as the engine reports it (ISO 8601), for a crash or an OOM kill.
        self.ended_utc = ended_utc
        super().__init__(f"{reason}: {detail}" if detail else reason)
