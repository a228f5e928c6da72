"""Cooked records for the exporters: cook what is stale, read the .vda, remember what went wrong.

The asset an export is about (the model, the world) must exist and cook: otherwise a
:class:`~veduta.base.errors.VedutaError` names the problem. Assets it merely refers to (materials,
textures, level-of-detail models, the models of a world's entities) may be missing or broken: the
export then goes on without them and reports a warning finding
(``{"code", "severity", "message"}``, codes ``EXPORT_<KIND>_MISSING`` and
``EXPORT_<KIND>_INVALID``). With ``finite`` (:data:`GLTF`, :data:`PREVIEW`: a consumer whose
numbers must be finite), a cooked file holding a NaN or an infinity in a float (the container spec
allows any f32 bit pattern, so ``veduta verify`` calls such a file whole) counts as broken, naming
the file and the value.
"""

from __future__ import annotations

from typing import Any

from veduta.base.errors import VedutaError
from veduta.base.findings import WARNING, finding
from veduta.base.project import no_such_asset

FAILED_TEXT = "has errors"
#: Consumers that take finite numbers only: (what a record holding a NaN or an infinity cannot
#: be, why), for ``Cooked(project, finite=...)``
GLTF = ("exported", "glTF takes finite numbers only")
PREVIEW = ("drawn", "a preview draws finite numbers only")


class Cooked:
    """Cooked records of one project by (kind, name), each cooked at most once per export."""

    def __init__(self, project, finite: tuple[str, str] | None = None):
        self.project = project
        self.finite = finite
        #: the assets whose cooked file holds a non-finite float (when *finite*)
        self._not_finite: set[tuple[str, str]] = set()
        #: the cook's own lines (warnings and errors in the sources), in the order they came
        self.messages: list[str] = []
        #: warning findings about referenced assets that are missing or do not cook
        self.findings: list[dict[str, Any]] = []
        self._records: dict[tuple[str, str], Any] = {}
        self._reported: set[tuple[str, str]] = set()
        self._index = None  # the game's assets as they are at the first record read

    def require(self, kind: str, name: str):
        """The record of an asset the export cannot do without (VedutaError when missing or broken)."""
        rec, problem = self._get(kind, name)
        if rec is None:
            if FAILED_TEXT not in problem and (kind, name) not in self._not_finite:
                raise no_such_asset(self.project, kind, name)
            raise VedutaError(problem + _tail(self.messages))
        return rec

    def get(self, kind: str, name: str, used_by: str = ""):
        """The record of a referenced asset, or None with a warning finding (once per asset)."""
        rec, problem = self._get(kind, name)
        if rec is None and (kind, name) not in self._reported:
            self._reported.add((kind, name))
            broken = FAILED_TEXT in problem or (kind, name) in self._not_finite
            code = "INVALID" if broken else "MISSING"
            tail = f" (used by {used_by})" if used_by else ""
            self.findings.append(finding(f"EXPORT_{kind.upper()}_{code}", WARNING, problem + tail, **{kind: name}))
        return rec

    def _get(self, kind: str, name: str):
        key = (kind, name)
        if key in self._records:
            return self._records[key]
        from veduta.base.errors import VdaError
        from veduta.cook.cooked import cook_and_read

        try:
            if self._index is None:
                self._index = self.project.index()
            got = cook_and_read(self.project, kind, name, self._index)
        except VdaError as exc:
            result: tuple[Any, str] = (None, f"{kind} {name} {FAILED_TEXT}: {exc}")
        else:
            self.messages.extend(got.messages)
            if got.status == "missing":
                result = (None, str(no_such_asset(self.project, kind, name)))
            elif got.status == "invalid":
                result = (None, f"{kind} {name} {FAILED_TEXT}")
            else:
                result = (got.record, self._why_not_finite(kind, name, got.record))
                if result[1]:
                    result = (None, result[1])
                    self._not_finite.add(key)
        self._records[key] = result
        return result

    def _why_not_finite(self, kind: str, name: str, record) -> str:
        """Why *record* cannot be used (a non-finite float, when they count), or ""."""
        if self.finite is None:
            return ""
        from veduta.formats.codec import first_non_finite

        bad = first_non_finite(record)
        if bad is None:
            return ""
        import os

        from veduta.base.errors import shown_path

        path = shown_path(os.path.relpath(self.project.cooked_path(kind, name), self.project.root))
        cannot, why = self.finite
        return (
            f"{kind} {name} cannot be {cannot}: its cooked file {path} holds a non-finite number "
            f"({record.CHUNK} {bad}; {why})"
        )


def _tail(messages: list[str]) -> str:
    return "".join("\n" + m for m in messages)
