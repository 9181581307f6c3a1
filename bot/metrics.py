"""A small Prometheus text-format registry, one per app (so tests never share counters)."""

from __future__ import annotations

import bisect
from collections import defaultdict

Labels = tuple[tuple[str, str], ...]

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _fmt_labels(labels: Labels, extra: str = "") -> str:
    parts = [f'{k}="{v}"' for k, v in labels]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


class Metrics:
    def __init__(self) -> None:
        self._help: dict[str, tuple[str, str]] = {}
        self._counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._gauges: dict[str, dict[Labels, float]] = defaultdict(dict)
        self._hist: dict[str, dict[Labels, list[float]]] = defaultdict(dict)

    def describe(self, name: str, kind: str, help_text: str) -> None:
        self._help[name] = (kind, help_text)

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        self._counters[name][tuple(sorted(labels.items()))] += amount

    def set(self, name: str, value: float, **labels: str) -> None:
        self._gauges[name][tuple(sorted(labels.items()))] = value

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        # one count per bucket (the last is +Inf), then the sum, then the count
        row = self._hist[name].setdefault(key, [0.0] * (len(BUCKETS) + 3))
        row[bisect.bisect_left(BUCKETS, seconds)] += 1
        row[-2] += seconds
        row[-1] += 1

    def render(self) -> str:
        out: list[str] = []
        for name, series in sorted(self._counters.items()):
            out += self._header(name, "counter")
            out += [f"{name}{_fmt_labels(k)} {v:g}" for k, v in sorted(series.items())]
        for name, series in sorted(self._gauges.items()):
            out += self._header(name, "gauge")
            out += [f"{name}{_fmt_labels(k)} {v:g}" for k, v in sorted(series.items())]
        for name, hist in sorted(self._hist.items()):
            out += self._header(name, "histogram")
            for key, row in sorted(hist.items()):
                cumulative = 0.0
                for bound, count in zip((*BUCKETS, float("inf")), row[:-2], strict=True):
                    cumulative += count
                    le = "+Inf" if bound == float("inf") else f"{bound:g}"
                    bucket = _fmt_labels(key, 'le="' + le + '"')
                    out.append(f"{name}_bucket{bucket} {cumulative:g}")
                out.append(f"{name}_sum{_fmt_labels(key)} {row[-2]:g}")
                out.append(f"{name}_count{_fmt_labels(key)} {row[-1]:g}")
        return "\n".join(out) + "\n"

    def _header(self, name: str, kind: str) -> list[str]:
        kind_, help_text = self._help.get(name, (kind, name.replace("_", " ")))
        return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind_}"]
