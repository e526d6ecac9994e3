"""The pytest side of the kit: settings from options, one item per (tool, check), outcomes shown.

Everything here translates between pytest and the engine; what an item reports is what
:func:`axm_conformance.check_tool` returns for the same tool.
"""

from __future__ import annotations

import base64
import os
import pickle
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from axm_conformance._api import LoadError, import_engine, item_keys
from axm_conformance._certificate import (
    KnownFailure,
    baseline_of,
    call_terms,
    calls_said,
    certificate,
    item_record,
    spoken,
    summary_markdown,
    unloadable_record,
    verdict_line,
    write_json,
)
from axm_conformance._checks import CHECKS, Check, checks_for, load_check_plugins
from axm_conformance._clients import portability, portability_table
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import Status
from axm_conformance._process._containment import containment
from axm_conformance._process.parent._pool import WorkersAhead, inspect_tools
from axm_conformance._process.system import _platform
from axm_conformance._pytest_config import (
    SEED_INPUT,
    SUBJECTS_INPUT,
    baseline_of_run,
    inspect_published,
    inspected_by_controller,
    published_refs,
    settings_from_config,
)
from axm_conformance._pytest_shared import CheckFailed, KitItem, add_items, flag, read_setting
from axm_conformance._report import ToolReport
from axm_conformance._settings import (
    Settings,
    SettingsError,
)
from axm_conformance._version import __version__
from axm_conformance.protocols import RegistryError, profiles

if TYPE_CHECKING:
    from axm_conformance._validation._pytest import ValidatorPlugin

__all__ = ["ConformanceItem", "ConformancePlugin", "ConformanceWarning", "register"]

CONTRACT = Path(__file__).resolve().parents[2] / "conformance" / "README.md"


class ConformanceWarning(UserWarning):
    """A finding that does not fail the run unless it is strict: one the protocol's runtime
    absorbs (a tool that accepts invalid input, an exception turned into a failed result)."""


# Identity, not equality: pytest keeps its plugins in sets.
@dataclass(eq=False)
class ConformancePlugin:
    """Collects the items, certifies each tool once (on its first item), writes the outputs."""

    config: pytest.Config
    settings: Settings
    subjects: list[SubjectInfo]
    keys: list[str]
    baseline: dict[tuple[str, str], KnownFailure]
    # Published references that cannot be loaded, with why: each fails as an item of its own.
    unloadable: dict[str, str] = field(default_factory=dict)
    reports: dict[str, ToolReport] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    workers: WorkersAhead | None = None
    # What the end of the run produced: the certificate, the files written, and why the
    # --axm-require-certified gate failed the run ("" when it did not).
    document: dict[str, Any] | None = None
    written: list[str] = field(default_factory=list)
    gate: str = ""

    @property
    def seed(self) -> int | None:
        return self.settings.seed

    @classmethod
    def from_config(
        cls, config: pytest.Config, settings: Settings, *, tools_optional: bool = False
    ) -> ConformancePlugin:
        """The plugin for the tools named, or else those the project publishes; with
        ``tools_optional``, naming none certifies none."""
        refs, _ = read_setting(config, "axm_tools")
        if not refs and tools_optional:
            return cls(config, settings, [], [], baseline_of_run(config, []))
        published = not refs
        if published:
            refs, looked_for = published_refs(config.rootpath)
            if not refs:
                raise pytest.UsageError(
                    f"axm-conformance found no tools to certify: it looked for {looked_for}. "
                    "Name one with --axm-tool=module:attr, or install the project "
                    "(pip install -e .)"
                )
        # The controller of an xdist run certifies nothing itself: no worker is kept for it.
        controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(
            config, "workerinput"
        )
        workers = None if controller else WorkersAhead(settings)
        try:
            described = inspected_by_controller(config)
            if described is not None:
                subjects, unloadable = described
            elif published:
                subjects, unloadable = inspect_published(refs, settings, workers)
            else:
                subjects = inspect_tools(refs, settings, workers, meanwhile=import_engine)
                unloadable = {}
        except LoadError as exc:
            raise pytest.UsageError(f"--axm-tool {exc}") from None
        except SettingsError as exc:
            raise pytest.UsageError(f"--axm-worker-user: {exc}") from None
        try:
            settings.check_exemptions([subject.name for subject in subjects])
        except SettingsError as exc:
            where = (
                "--axm-network"
                if exc.setting == "network"
                else f"the axm_{exc.setting} ini setting"
            )
            raise pytest.UsageError(f"{where}: {exc}") from None
        keys = item_keys(subjects)
        baseline = baseline_of_run(config, keys)
        return cls(config, settings, subjects, keys, baseline, unloadable, workers=workers)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        seed = (
            f"seed {self.seed} (--axm-seed={self.seed} reproduces)"
            if self.seed is not None
            else "seeds derived from each tool's key and input schema (the Hypothesis profile "
            "derandomizes), printed per tool"
        )
        # A server is certified as a subject of its own, beside the tools it lists.
        kinds = Counter(subject.kind for subject in self.subjects)
        counted = ", ".join(
            f"{kinds[kind]} {kind}{'' if kinds[kind] == 1 else 's'}"
            for kind in ("server", "tool")
            if kinds[kind] or kind == "tool"
        )
        lines = [
            f"axm-conformance {__version__}: {counted}, {seed}, "
            f"{self.settings.examples} examples per tool, {self.settings.timeout:g} s per call",
        ]
        if CONTRACT.exists():
            lines.append(f"axm-conformance contract: {CONTRACT}")
        lines.append(f"axm-conformance sandbox: {containment(self.settings)}")
        if _platform.PLATFORM.portable:
            missing = "".join(f"; {what}" for what in _platform.PLATFORM.missing())
            lines.append(
                f"axm-conformance platform: {_platform.PLATFORM.system}, portable process watch "
                f"(psutil), file polling and spawned workers{missing} "
                "(see conformance/platforms.md)"
            )
        return lines

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        collected: list[pytest.Item] = [
            ConformanceItem.from_parent(
                session,
                name=f"{key}::{check.id}",
                nodeid=f"{key}::{check.id}",
                plugin=self,
                key=key,
                subject=subject,
                check=check,
            )
            for subject, key in zip(self.subjects, self.keys, strict=True)
            for check in checks_for(subject.kind, self.settings.checks)
        ]
        collected += [
            UnloadableItem.from_parent(
                session, name=f"{ref}::load", nodeid=f"{ref}::load", ref=ref, error=error
            )
            for ref, error in self.unloadable.items()
        ]
        add_items(config, items, collected)

    def report_for(self, item: ConformanceItem) -> ToolReport:
        """The tool's report, certifying it (for the checks still selected) on first use."""
        if item.key not in self.reports:
            # Imported here, not at plugin start: Hypothesis warns about work done while pytest
            # configures plugins, and a run that only collects never needs it.
            from axm_conformance._engine import certify

            selected = [
                other.check.id
                for other in item.session.items
                if isinstance(other, ConformanceItem) and other.key == item.key
            ]
            progress = _LineProgress.on(self.config)
            try:
                self.reports[item.key] = certify(
                    item.subject,
                    item.key,
                    self.settings,
                    self.seed,
                    self.subjects,
                    selected,
                    callers=self.workers or WorkersAhead(self.settings),
                    progress=progress,
                )
            finally:
                if progress is not None:
                    progress.close()
        return self.reports[item.key]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start the first tool's worker ahead; each next one starts as the one before is used.

        An xdist worker does not know which tools it will be sent: it only prepares to start
        their workers quickly. A run that only collects calls none.
        """
        if self.workers is None:
            return
        if hasattr(self.config, "workerinput"):
            self.workers.expect(len(self.subjects))
            return
        if self.config.option.collectonly:
            self.workers.close()
            return
        order = {
            item.key: item.subject
            for item in session.items
            if isinstance(item, ConformanceItem) and item.check.per_call
        }
        self.workers.plan(list(order.values()))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        record = getattr(item, "axm_record", None)
        if record is not None and call.when == "call":
            report = outcome.get_result()
            # Travels with the report, so pytest-xdist brings it back to the controller.
            report.axm_record = record
            if "check" in record:
                # A tool is certified on its first item: each item is charged what its own
                # check spent (for --durations), not the first one all of it.
                report.duration = record["check"]["duration"]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "axm_record", None)
        if record is not None:
            self.records.append(record)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.workers is not None:
            self.workers.close()  # started ahead for tools the run did not get to (-x, Ctrl-C)
        if hasattr(self.config, "workerinput") or not self.records:
            return  # an xdist worker: its records went to the controller
        self.document = document = certificate(self.records, self.settings, self.seed)
        written = self.written
        report_path, _ = read_setting(self.config, "axm_report")
        if report_path:
            write_json(self._path(report_path), document)
            written.append(f"certificate: {report_path}")
        summary_path, _ = read_setting(self.config, "axm_summary")
        markdown = summary_markdown(document)
        if summary_path:
            self._path(summary_path).write_text(markdown, encoding="utf-8")
            written.append(f"summary: {summary_path}")
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as step:
                step.write(markdown)
        baseline_path, _ = read_setting(self.config, "axm_baseline_write")
        if baseline_path:
            write_json(self._path(baseline_path), baseline_of(self.records))
            written.append(f"baseline: {baseline_path}")
        uncertified = [tool["key"] for tool in document["tools"] if not tool["certified"]]
        uncertified += [tool["ref"] for tool in document["unloadable"]]
        if uncertified and flag(self.config, "axm_require_certified"):
            everything = len(document["tools"]) + len(document["unloadable"])
            self.gate = (
                f"axm-conformance: {len(uncertified)} of {everything} tools not "
                f"certified ({', '.join(uncertified)}), and --axm-require-certified requires "
                "every tool to be"
            )
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _path(self, text: str) -> Path:
        return self.config.invocation_params.dir / text

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        document = self.document
        if document is None:
            return
        terminalreporter.section("axm-conformance")
        stats = flag(self.config, "axm_stats")
        for tool in document["tools"]:
            counts: dict[str, int] = {}
            for check in tool["checks"]:
                counts[check["outcome"]] = counts.get(check["outcome"], 0) + 1
            tally = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
            failed = [c["id"] for c in tool["checks"] if c["outcome"] == "failed"]
            seed = f", seed {tool['seed']}" if document["seed"] is None else ""
            seconds = sum(check["duration"] for check in tool["checks"])
            terminalreporter.write_line(
                f"{tool['key']} ({spoken(tool)}): {verdict_line(tool)} "
                f"({tally}{seed}, {seconds:.2f} s{calls_said(tool.get('calls'))})"
                + (f": {', '.join(failed)}" if failed else "")
            )
            if stats:
                for line in _stats(tool["checks"]):
                    terminalreporter.write_line(line)
        for line in call_terms(document["tools"]):
            terminalreporter.write_line(line)
        for tool in document["unloadable"]:
            terminalreporter.write_line(f"{tool['ref']}: NOT certified: {tool['error']}")
        for line in self._portability(document):
            terminalreporter.write_line(line)
        for line in self.written:
            terminalreporter.write_line(f"axm-conformance wrote the {line}")
        if CONTRACT.exists():
            terminalreporter.write_line(f"What each check requires and why: {CONTRACT}")
        if self.gate:
            terminalreporter.write_line(self.gate, red=True, bold=True)

    def _portability(self, document: dict[str, Any]) -> list[str]:
        """The table of tools by client: "ok", or the first rule the tool breaks; none when no
        client check ran."""
        judged = {
            tool["key"]
            for tool in document["tools"]
            for check in tool["checks"]
            if CHECKS[check["id"]].group == "clients" and check["outcome"] != "skipped"
        }
        rows = [
            [key, *(b.rule.id if b else "ok" for b in portability(s.name, s.input_schema).values())]
            for s, key in zip(self.subjects, self.keys, strict=True)
            if key in judged
        ]
        return portability_table(rows)


class _LineProgress:
    """What a tool's certification is doing ("invalid inputs, 240 calls"), shown at the end of
    the terminal line pytest is writing, and taken back when it is done.

    pytest's terminal writer keeps the line it is writing, to place the ``[ 42%]`` column; it
    is read and restored, since a rewritten line would otherwise count as part of it. Output is
    captured while an item runs: the writes are made with capturing off, as pytest's live
    logging makes its own.
    """

    def __init__(self, reporter: Any, capturing: Any) -> None:
        self.reporter = reporter
        self.capturing = capturing
        self.writer = reporter._tw
        self.line: str = self.writer._current_line
        self.shown = False

    @classmethod
    def on(cls, config: pytest.Config) -> _LineProgress | None:
        """Progress for this run: on a terminal, not under ``-q``, and not in an xdist worker
        (whose output no terminal shows)."""
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if (
            reporter is None
            or not reporter.isatty()
            or config.getoption("verbose") < 0
            or hasattr(config, "workerinput")
            or not isinstance(getattr(getattr(reporter, "_tw", None), "_current_line", None), str)
        ):
            return None
        return cls(reporter, config.pluginmanager.get_plugin("capturemanager"))

    def _rewrite(self, line: str, *, erase: bool) -> None:
        if self.capturing is None:
            self.reporter.rewrite(line, erase=erase)
            return
        with self.capturing.global_and_fixture_disabled():
            self.reporter.rewrite(line, erase=erase)

    def __call__(self, status: str) -> None:
        shown = f"{self.line.rstrip()} [{status}]"
        self._rewrite(shown[: self.writer.fullwidth - 1], erase=True)
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self._rewrite(self.line, erase=True)
            self._rewrite(self.line, erase=False)
        self.writer._current_line = self.line


def _stats(checks: list[dict[str, Any]]) -> list[str]:
    """``--axm-stats`` for one tool: the schema keywords most of its checks' inputs exercised,
    once, then per check its examples, and its keywords only where they differ."""
    judged = [check for check in checks if check["examples"] is not None]
    if not judged:
        return []
    shared = Counter(tuple(check["keywords"]) for check in judged).most_common(1)[0][0]
    lines = ["    keywords exercised: " + (", ".join(shared) or "none")]
    for check in judged:
        keywords = tuple(check["keywords"])
        lines.append(
            f"    {check['id']}: {check['examples']} examples"
            + _by_source(check["sources"])
            + f", {check['invalid_inputs']} invalid inputs, {check['discarded']} discarded"
            + ("" if keywords == shared else "; keywords: " + (", ".join(keywords) or "none"))
        )
    return lines


def _by_source(sources: dict[str, int]) -> str:
    """How many examples came from each source, in parentheses ("" when none is known)."""
    if not sources:
        return ""
    return " (" + ", ".join(f"{count} {source}" for source, count in sources.items()) + ")"


class XdistHooks:
    """pytest-xdist's hooks, registered only when it is installed (its hooks exist only then)."""

    def __init__(self, plugin: ConformancePlugin) -> None:
        self.plugin = plugin
        described = pickle.dumps((plugin.subjects, plugin.unloadable), pickle.HIGHEST_PROTOCOL)
        self.described = base64.b64encode(described).decode("ascii")

    def pytest_configure_node(self, node: Any) -> None:
        """Every worker uses the controller's seed and its description of the tools."""
        node.workerinput[SEED_INPUT] = self.plugin.seed
        node.workerinput[SUBJECTS_INPUT] = self.described


def register(config: pytest.Config) -> None:
    """Turn the kit on for this pytest run: the tools' plugin, and the validators' when any is
    named (then no tool need be)."""
    try:
        profiles()
        load_check_plugins()
    except RegistryError as exc:
        raise pytest.UsageError(f"axm-conformance: {exc}") from None
    settings = settings_from_config(config)
    validators = _validator_plugin(config, settings)
    plugin = ConformancePlugin.from_config(config, settings, tools_optional=validators is not None)
    if validators is not None:
        # Registered first: pytest calls the hooks of the plugin registered last first, and the
        # tools' items come before the validators'.
        config.pluginmanager.register(validators, "axm-conformance-validators")
    config.pluginmanager.register(plugin, "axm-conformance-kit")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(plugin), "axm-conformance-xdist")
        # Keep each tool's items on one worker, so that it is certified once: loadscope groups
        # items by the first part of their id, which for the kit's items is the tool.
        if getattr(config.option, "dist", "no") == "load":
            config.option.dist = "loadscope"


def _validator_plugin(config: pytest.Config, settings: Settings) -> ValidatorPlugin | None:
    """The validators' plugin, None when no validator is named (its imports are then spared)."""
    if not read_setting(config, "axm_validators")[0]:
        return None
    from axm_conformance._validation._pytest import ValidatorPlugin

    return ValidatorPlugin.from_config(config, settings)


# How an outcome shows in pytest: not a pass where the check did not judge, a failure where
# the run could not finish it because of the tool.


class ConformanceItem(KitItem):
    """One check of one tool."""

    def __init__(
        self,
        *,
        plugin: ConformancePlugin,
        key: str,
        subject: SubjectInfo,
        check: Check,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin
        self.key = key
        self.subject = subject
        self.check = check
        self.axm_record: dict[str, Any] | None = None
        # Recorded as properties in --junitxml.
        self.user_properties += [
            ("axm_tool", key),
            ("axm_check", check.id),
        ]

    def runtest(self) -> None:
        plugin = self.plugin
        report = plugin.report_for(self)
        outcome = report.outcome(self.check.id)
        self.user_properties.append(("axm_seed", str(report.seed)))
        self.axm_record = item_record(report, outcome, plugin.settings)
        known = plugin.baseline.get((self.key, self.check.id))
        # The record formatted the failure or warning once, for the certificate too.
        failure = self.axm_record["check"]["failure"]
        if known is not None:
            if outcome.status.failing and known.is_among(outcome.findings):
                pytest.xfail(f"known failure (baseline): {known.reason}")
            if outcome.status.unjudged:
                # Not judged is neither the known failure again nor a fix of it.
                pytest.skip(
                    f"{self.check.id}: " + "; ".join(outcome.messages) + "; the baseline's "
                    f"known failure ({known.reason}) was not judged in this run"
                )
            if outcome.status.failing:
                raise CheckFailed(
                    f"{failure['report']}\nNot the failure the baseline knows of this check "
                    f"({known.wanted}): a new one"
                )
            raise CheckFailed(
                f"{self.check.id}: stale baseline entry: the baseline lists this check of "
                f"{self.key} as a known failure ({known.reason}), but it is now "
                f"{outcome.status}; remove the entry"
            )
        if outcome.status.unjudged:
            pytest.skip(f"{self.check.id}: " + "; ".join(outcome.messages))
        if outcome.status.failing:
            raise CheckFailed(failure["report"])
        if outcome.status is Status.WARNING:
            warnings.warn(ConformanceWarning(failure["report"]), stacklevel=1)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.key}::{self.check.id}"


class UnloadableItem(KitItem):
    """A published entry point that cannot be loaded: it fails, the other tools run."""

    def __init__(self, *, ref: str, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.error = error
        self.axm_record: dict[str, Any] | None = None

    def runtest(self) -> None:
        self.axm_record = unloadable_record(self.ref, self.error)
        raise CheckFailed(f"cannot load the published tool {self.error}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name
