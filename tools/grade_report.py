"""The class's grades as data, and the files made from them: grades.csv, verdicts.csv, summary.txt, report.html
and grades.json; `merge` combines shards' grades.json. tools/grade.py runs the notebooks and builds the data
(build_model); nothing here runs anything.

The data (grades.json) is plain JSON: {"format", "lessons": {lesson: [check names]}, "optional": [columns],
"settings", "notebooks", "seconds", "learners": {learner: {"exercises": {column: entry}, "notes": [...],
"handed_in": [...]}}, "titles": {lesson: the notebook's title}}, an entry being {"verdict", "passed", "total",
"score", "mistake", "detail", "named", "flags", "notebook"}. "settings" may also hold "grouped" ({learner: [file names]}: top-level notebooks grouped by their
names) and, after a merge, "shards", "missing_shards", "mixed_shards" and "unreadable".
"""
from __future__ import annotations

import csv
import html
import json
from pathlib import Path

PASS, FAIL, NOT_ATTEMPTED, NOT_RUN, NOT_HANDED_IN = "pass", "fail", "not attempted", "not run", "not handed in"
VERDICTS = (PASS, FAIL, NOT_ATTEMPTED, NOT_RUN, NOT_HANDED_IN)
RANK_OF = {v: k for k, v in enumerate(VERDICTS)}      # the order verdicts are listed in
FORMAT = 1                # of grades.json
SUMMARY_MISTAKES = 5      # summary.txt: the commonest named mistakes of each lesson
BRIEF_MISTAKES = 2        # the report's "Before the next session": the commonest of each lesson
BRIEF_HARDEST = 3         # ... and the exercises passed by the fewest
OPTIONAL = " (optional)"  # after an optional exercise's name (one in a "Going further" section)


def column(lesson: str, check: str) -> str:
    """CSV column of an exercise: '01:hand_trace' for check_hand_trace in 01_hand_trace."""
    return f"{lesson.split('_', 1)[0]}:{check.removeprefix('check_')}"


def _columns(model: dict) -> list[str]:
    return [column(lesson, check) for lesson, checks in model["lessons"].items() for check in checks]


def rows_of(model: dict) -> tuple[list[str], list[dict[str, str]]]:
    """grades.csv: its header and rows."""
    columns = _columns(model)
    header = ["learner"]
    for c in columns:
        header += [c, f"{c} score", f"{c} mistake", f"{c} detail", f"{c} flags"]
    header += ["passed", "exercises", "score", "lessons handed in", "notes"]   # totals: the core exercises
    rows = []
    for learner, data in sorted(model["learners"].items()):
        row = {"learner": learner}
        for c in columns:
            e = data["exercises"][c]
            row.update({c: e["verdict"], f"{c} score": f"{e['score']:.2f}", f"{c} mistake": e["mistake"],
                        f"{c} detail": e.get("detail", ""), f"{c} flags": "; ".join(e["flags"])})
        core = [c for c in columns if c not in model.get("optional", [])]   # Going further ones do not count
        verdicts = [data["exercises"][c] for c in core]
        row.update({"passed": str(sum(e["verdict"] == PASS for e in verdicts)), "exercises": str(len(core)),
                    "score": f"{sum(e['score'] for e in verdicts):.2f}",
                    "lessons handed in": f"{len(data['handed_in'])} of {len(model['lessons'])}",
                    "notes": "; ".join(data["notes"])})
        rows.append(row)
    return header, rows


def long_rows(model: dict) -> tuple[list[str], list[dict[str, str]]]:
    """verdicts.csv: one row per learner and exercise."""
    header = ["learner", "lesson", "exercise", "optional", "verdict", "cases passed", "cases", "score", "mistake",
              "detail", "flags", "notebook"]
    optional = set(model.get("optional", []))
    rows = []
    for learner, data in sorted(model["learners"].items()):
        for lesson, checks in model["lessons"].items():
            for check in checks:
                key = column(lesson, check)
                e = data["exercises"][key]
                rows.append({"learner": learner, "lesson": lesson, "exercise": check.removeprefix("check_"),
                             "optional": "yes" if key in optional else "no", "verdict": e["verdict"],
                             "cases passed": "" if e["passed"] is None else str(e["passed"]),
                             "cases": "" if e["total"] is None else str(e["total"]), "score": f"{e['score']:.2f}",
                             "mistake": e["mistake"], "detail": e.get("detail", ""), "flags": "; ".join(e["flags"]),
                             "notebook": e["notebook"]})
    return header, rows


def _label(model: dict, key: str, exercise: str) -> str:
    return exercise + (OPTIONAL if key in model.get("optional", []) else "")


def _outcome(verdict: str, mistake: str) -> str:
    """How the who-did-not-pass table names a verdict: 'fail: b1 left out', 'not attempted (the stub)'."""
    if verdict == FAIL:
        return f"fail: {mistake}" if mistake else "fail (no mistake named)"
    return {NOT_ATTEMPTED: "not attempted (the stub)"}.get(verdict, verdict)


def class_stats(model: dict) -> dict:
    """Per exercise: counts of each verdict, the named mistakes with their counts (most common first), and who
    did not pass: (outcome, learners) for each fail's mistake, not attempted and not run."""
    stats = {}
    for lesson, checks in model["lessons"].items():
        for check in checks:
            key = column(lesson, check)
            entries = [data["exercises"][key] for data in model["learners"].values()]
            counts = {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS}
            mistakes: dict[str, int] = {}
            reference = sorted(learner for learner, data in model["learners"].items()
                               if data["exercises"][key]["verdict"] == FAIL
                               and is_reference_use(data["exercises"][key]["mistake"]))
            for e in entries:
                if e["verdict"] == FAIL and e["mistake"] and e.get("named", True) \
                        and not is_reference_use(e["mistake"]):
                    mistakes[e["mistake"]] = mistakes.get(e["mistake"], 0) + 1
            flagged = sorted((learner, flag) for learner, data in model["learners"].items()
                             for flag in data["exercises"][key]["flags"])
            who: dict[tuple[str, str], list[str]] = {}
            for learner, data in sorted(model["learners"].items()):
                e = data["exercises"][key]
                if e["verdict"] in (FAIL, NOT_ATTEMPTED, NOT_RUN):
                    who.setdefault((e["verdict"], e["mistake"] if e["verdict"] == FAIL else ""), []).append(learner)
            not_passed = [(_outcome(verdict, mistake), learners) for (verdict, mistake), learners in
                          sorted(who.items(), key=lambda w: (RANK_OF[w[0][0]], -len(w[1]), w[0][1]))]
            stats[key] = {"lesson": lesson, "exercise": _label(model, key, check.removeprefix("check_")),
                          "optional": key in model.get("optional", []), "counts": counts,
                          "handed_in": len(entries) - counts[NOT_HANDED_IN],
                          "mistakes": sorted(mistakes.items(), key=lambda m: (-m[1], m[0])), "flags": flagged,
                          "not_passed": not_passed, "reference": reference}
    return stats


def _by_lesson(model: dict, stats: dict) -> dict[str, list[tuple[dict, str, int]]]:
    """lesson -> its named mistakes as (exercise's stats, mistake, learners), the commonest first."""
    return {lesson: sorted(((stats[column(lesson, c)], m, n) for c in checks
                            for m, n in stats[column(lesson, c)]["mistakes"]), key=lambda t: -t[2])
            for lesson, checks in model["lessons"].items()}


def _plural(n: int, word: str) -> str:
    """'1 time', '3 times'; 'more named mistake' -> '18 more named mistakes'."""
    return f"{n} {word}{'s' * (n != 1)}"


def _grouped_text(settings: dict) -> str:
    grouped = settings.get("grouped") or {}
    if not grouped:
        return ""
    files = sum(len(names) for names in grouped.values())
    return (f"{files} notebook(s) directly in the folder, named <learner>_<NN_lesson>.ipynb, were grouped by "
            f"learner: " + ", ".join(f"{learner} ({len(names)})" for learner, names in sorted(grouped.items()))
            + ". If these are not learners' names, put each learner's notebooks in a folder of their own.")


def merge_problems(settings: dict) -> list[str]:
    """What makes a merge incomplete (shards missing, of different splits, or unreadable): [] when whole."""
    problems = []
    if settings.get("unreadable"):
        problems.append(f"no grades.json in {', '.join(settings['unreadable'])} (did that shard's run finish?)")
    if settings.get("missing_shards"):
        problems.append(f"missing shard(s) {settings['missing_shards']}: their learners are not in these files")
    if settings.get("mixed_shards"):
        problems.append(f"shards of different splits ({settings['mixed_shards']}): learners may be missing or "
                        "graded twice; merge the shards of one run")
    return problems


def summary_text(model: dict, out: Path) -> str:
    _TITLES.clear()
    _TITLES.update(model.get("titles") or {})
    stats = class_stats(model)
    settings = model["settings"]
    shards = settings.get("shards")
    lines = [f"Graded {len(model['learners'])} learner(s), {model['notebooks']} notebook(s) from "
             f"{settings.get('submissions', '?')} (time limit {settings.get('cell_timeout', '?'):g} s per cell, "
             f"{settings.get('timeout', '?'):g} s per notebook)"
             + (f", merged from shards {shards}" if shards else "") + ".",
             f"Files: {out / 'grades.csv'}, {out / 'report.html'}"]
    if settings.get("hidden cases"):
        lines.append(f"Hidden cases: {settings['hidden cases']}; each exercise was checked in a clean process.")
    lines.append("")
    if settings.get("missing_shards"):
        lines += [f"MISSING shards: {settings['missing_shards']}: their learners are not in these files.", ""]
    lines += [f"INCOMPLETE MERGE: {problem}." for problem in merge_problems(settings)
              if not problem.startswith("missing shard")]
    if _grouped_text(settings):
        lines += [_grouped_text(settings), ""]
    if stats:
        names = {key: key + (OPTIONAL if s["optional"] else "") for key, s in stats.items()}
        width = max(len(name) for name in names.values())
        lines.append(f"{'exercise':<{width}}  passed   fail  not attempted  not run  not handed in")
        for key, s in stats.items():
            c = s["counts"]
            lines.append(f"{names[key]:<{width}}  {c[PASS]:>3} of {s['handed_in']:<3} {c[FAIL]:>4}  "
                         f"{c[NOT_ATTEMPTED]:>13}  {c[NOT_RUN]:>7}  {c[NOT_HANDED_IN]:>13}")
        if any(s["optional"] for s in stats.values()):
            lines.append("(optional): in a \"Going further\" section; not counted in grades.csv's totals.")
        lines.append("")
        by_lesson = {lesson: m for lesson, m in _by_lesson(model, stats).items() if m}
        if by_lesson:
            lines.append(f"Most common named mistakes, per lesson (the {SUMMARY_MISTAKES} commonest of each; "
                         "report.html lists every one, verdicts.csv has each learner's):")
            for lesson, mistakes in by_lesson.items():
                lines.append(f"  {_title(lesson)}")
                for s, mistake, n in mistakes[:SUMMARY_MISTAKES]:
                    lines.append(f"    {s['exercise']}: {n} of {s['handed_in']}: {mistake}")
                if len(mistakes) > SUMMARY_MISTAKES:
                    rest = mistakes[SUMMARY_MISTAKES:]
                    made = _plural(sum(n for _, _, n in rest), "time")
                    lines.append(f"    ... and {_plural(len(rest), 'more named mistake')} in this lesson, made {made} "
                                 "in all: report.html lists every one")
            lines.append("")
        reference = [(key, s) for key, s in stats.items() if s["reference"]]
        if reference:
            lines.append("Handed in the course's reference instead of their own code (a fail, not a mistake in "
                         "the computation):")
            lines += [f"  {names[key]}: {', '.join(s['reference'])}" for key, s in reference]
            lines.append("")
        flags = [(s["exercise"], learner, flag) for s in stats.values() for learner, flag in s["flags"]]
        if flags:
            lines.append(f"Flagged (not verdicts; look at these): {len(flags)}")
            lines += [f"  {learner}, {exercise}: {flag}" for exercise, learner, flag in flags]
            lines.append("")
    problems = [(learner, data["notes"]) for learner, data in sorted(model["learners"].items()) if data["notes"]]
    lines.append(f"Learners with a problem to look at: {len(problems)}")
    lines += [f"  {learner}: {'; '.join(notes)}" for learner, notes in problems]
    return "\n".join(lines) + "\n"


# ---- the HTML report ------------------------------------------------------------------------------------
_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #999; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.25rem; }
figure { margin: 0.5rem 0; } figcaption { font-style: italic; }
.note { color: #444; }
"""


_TITLES: dict[str, str] = {}      # lesson -> the notebook's own title, from the model being written


def _title(lesson: str) -> str:
    """'Lesson 01: Trace an FFN by hand' (the notebook's title) for 01_hand_trace, else from the file name."""
    number, _, name = lesson.partition("_")
    if _TITLES.get(lesson):
        return f"Lesson {number}: {_TITLES[lesson]}"
    return f"Lesson {number}: {name.replace('_', ' ')}" if name else f"Lesson {number}"


REFERENCE_USE = ("calls the course's own", "the course's reference was checked",
                 "a copy of the course's reference was checked")


def is_reference_use(mistake: str) -> bool:
    """A fail for using the course's reference, not a mistake in the learner's own computation."""
    return mistake.startswith(REFERENCE_USE)


def learner_totals(model: dict) -> dict[str, str]:
    """learner -> "5 of 8 passed, score 5.50": the core exercises, as in grades.csv."""
    header, rows = rows_of(model)
    return {row["learner"]: f"{row['passed']} of {row['exercises']} passed, score {row['score']}" for row in rows}


def _rate(s: dict) -> float:
    return s["counts"][PASS] / s["handed_in"] if s["handed_in"] else 0.0


def _chart(lesson: str, items: list[dict]) -> tuple[str, str]:
    """An SVG bar chart of pass rates among those who handed the lesson in, with its alt text: one bar per
    exercise, the count written beside it (so nothing rests on the bar's colour or length alone)."""
    label_width, bar_width, row, top = 170, 360, 28, 34
    height = top + row * len(items) + 36
    number = lesson.split("_", 1)[0]
    handed = items[0]["handed_in"] if items else 0
    alt = (f"{_title(lesson)}: share of the {handed} learner(s) who handed it in passing each exercise. "
           + "; ".join(f"{s['exercise']}: {s['counts'][PASS]} of {s['handed_in']} pass" for s in items) + ".")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_width + bar_width + 150}" '
             f'height="{height}" aria-labelledby="t{number} d{number}">',
             f'<title id="t{number}">{html.escape(_title(lesson))}: pass rate per exercise</title>',
             f'<desc id="d{number}">{html.escape(alt)}</desc>',
             f'<text x="0" y="18" font-size="14" font-weight="bold">{html.escape(_title(lesson))}: learners '
             'passing each exercise</text>']
    for k, s in enumerate(items):
        y = top + k * row
        rate = _rate(s)
        parts += [f'<text x="{label_width - 6}" y="{y + 16}" font-size="13" text-anchor="end">'
                  f'{html.escape(s["exercise"])}</text>',
                  f'<rect x="{label_width}" y="{y + 4}" width="{bar_width}" height="{row - 10}" fill="#eee" '
                  'stroke="#999"/>',
                  f'<rect x="{label_width}" y="{y + 4}" width="{bar_width * rate:.1f}" height="{row - 10}" '
                  'fill="#2b6cb0"/>',
                  f'<text x="{label_width + bar_width + 6}" y="{y + 16}" font-size="13">'
                  f'{s["counts"][PASS]} of {s["handed_in"]} ({100 * rate:.0f} %)</text>']
    axis = top + row * len(items) + 4
    for tick in (0, 50, 100):
        x = label_width + bar_width * tick / 100
        parts.append(f'<text x="{x:.0f}" y="{axis + 12}" font-size="11" text-anchor="middle">{tick} %</text>')
    parts.append(f'<text x="{label_width + bar_width / 2:.0f}" y="{axis + 28}" font-size="12" '
                 'text-anchor="middle">learners who passed (% of those who handed the lesson in)</text></svg>')
    return "\n".join(parts), alt


def report_html(model: dict) -> str:
    _TITLES.clear()
    _TITLES.update(model.get("titles") or {})
    stats = class_stats(model)
    totals = learner_totals(model)
    n = len(model["learners"])
    settings = model["settings"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Class report: the FFN course</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>Class report</h1>",
           f"<p>{n} learner(s), {model['notebooks']} notebook(s) graded, {len(stats)} exercises in "
           f"{len(model['lessons'])} lesson(s). Each learner's row is in <a href=\"grades.csv\">grades.csv</a>; "
           "one row per learner and exercise in <a href=\"verdicts.csv\">verdicts.csv</a>. Rates and counts "
           "are of the learners who handed the lesson in.</p>"]
    if settings.get("hidden cases"):
        out.append(f"<p>Every exercise was checked again in a clean process, with hidden cases "
                   f"{html.escape(settings['hidden cases'])}.</p>")
    if settings.get("missing_shards"):
        out.append(f"<p><strong>Missing shards: {html.escape(str(settings['missing_shards']))}.</strong> "
                   "Their learners are not in this report.</p>")
    out += [f"<p><strong>Incomplete merge: {html.escape(problem)}.</strong></p>"
            for problem in merge_problems(settings) if not problem.startswith("missing shard")]
    if _grouped_text(settings):
        out.append(f"<p>{html.escape(_grouped_text(settings))}</p>")
    # Before the next session: the core exercises fewest passed, and each lesson's commonest mistakes.
    not_all = sorted((s for s in stats.values() if s["handed_in"] and _rate(s) < 1 and not s["optional"]),
                     key=_rate)
    hardest = not_all[:BRIEF_HARDEST]
    by_lesson = _by_lesson(model, stats)
    common = [(lesson, t) for lesson, mistakes in by_lesson.items() for t in mistakes[:BRIEF_MISTAKES]]
    left_out = sum(max(0, len(m) - BRIEF_MISTAKES) for m in by_lesson.values())
    out.append("<h2>Before the next session</h2>")
    if hardest:
        out.append("<p>Passed by the fewest (core exercises):</p><ul>")
        out += [f"<li>{html.escape(s['exercise'])} ({html.escape(_title(s['lesson']))}): {s['counts'][PASS]} of "
                f"{s['handed_in']} passed ({100 * _rate(s):.0f} %).</li>" for s in hardest]
        out.append("</ul>")
        if len(not_all) > len(hardest):
            out.append(f'<p class="note">{_plural(len(not_all) - len(hardest), "more exercise")} not passed by '
                       "everyone: see each lesson's tables below.</p>")
    if common:
        out.append(f"<p>The most common named mistakes (the {BRIEF_MISTAKES} commonest of each lesson):</p><ul>")
        out += [f"<li>{html.escape(_title(lesson))}, {html.escape(s['exercise'])}: {c} of {s['handed_in']}: "
                f"{html.escape(m)}.</li>" for lesson, (s, m, c) in common]
        out.append("</ul>")
        if left_out:
            out.append(f'<p class="note">{_plural(left_out, "more named mistake")} not shown here: each '
                       "lesson's section below lists every one, with who made it; verdicts.csv has each "
                       "learner's.</p>")
    if not hardest and not common:
        out.append('<p class="note">Every exercise handed in passed.</p>')
    out.append("<h2>Learners</h2><table><caption>Each learner's total (core exercises, as in grades.csv)"
               "</caption><thead><tr><th scope=\"col\">learner</th><th scope=\"col\">total</th></tr></thead><tbody>")
    out += [f"<tr><th scope=\"row\">{html.escape(learner)}</th><td>{html.escape(total)}</td></tr>"
            for learner, total in totals.items()]
    out.append("</tbody></table>")
    for lesson, checks in model["lessons"].items():
        items = [stats[column(lesson, c)] for c in checks]
        number = lesson.split("_", 1)[0]
        if not any(s["handed_in"] for s in items):
            out += [f"<h2>{html.escape(_title(lesson))}</h2>",
                    f'<p class="note">Nobody handed lesson {number} in.</p>']
            continue
        chart, alt = _chart(lesson, items)
        out += [f"<h2>{html.escape(_title(lesson))}</h2>", "<figure>", chart,
                f"<figcaption>{html.escape(alt)}</figcaption>", "</figure>",
                f"<table><caption>Lesson {number}: verdicts per exercise (all {n} learners)"
                "</caption><thead><tr><th scope=\"col\">exercise</th>"
                + "".join(f'<th scope="col">{v}</th>' for v in VERDICTS) + "</tr></thead><tbody>"]
        for s in items:
            out.append(f"<tr><th scope=\"row\">{html.escape(s['exercise'])}</th>"
                       + "".join(f'<td class="n">{s["counts"][v]}</td>' for v in VERDICTS) + "</tr>")
        out.append("</tbody></table>")
        if any(s["optional"] for s in items):
            out.append('<p class="note">(optional): in a "Going further" section; not counted in the totals of '
                       "grades.csv.</p>")
        mistakes = by_lesson[lesson]
        if mistakes:
            out.append(f"<table><caption>Lesson {number}: every named mistake, the commonest first"
                       "</caption><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\">learners</th>"
                       "<th scope=\"col\">mistake</th></tr></thead><tbody>")
            for s, m, c in mistakes:
                out.append(f"<tr><td>{html.escape(s['exercise'])}</td><td class=\"n\">{c} of {s['handed_in']}</td>"
                           f"<td>{html.escape(m)}</td></tr>")
            out.append("</tbody></table>")
        else:
            out.append('<p class="note">No named mistakes in this lesson.</p>')
        reference = [(s, s["reference"]) for s in items if s["reference"]]
        if reference:
            out.append(f"<table><caption>Lesson {number}: handed in the course's reference instead of their own "
                       "code (a fail, not a mistake in the computation)</caption><thead><tr>"
                       "<th scope=\"col\">exercise</th><th scope=\"col\">who</th></tr></thead><tbody>")
            out += [f"<tr><td>{html.escape(s['exercise'])}</td><td>{html.escape(', '.join(who))}</td></tr>"
                    for s, who in reference]
            out.append("</tbody></table>")
        out += _who_did_not_pass(model, lesson, items)
    flags = [(s, learner, flag) for s in stats.values() for learner, flag in s["flags"]]
    out.append("<h2>Flags (not verdicts)</h2>")
    if flags:
        out.append("<p>The code is the reference solution's; it uses or wraps the course's reference from "
                   "helpers; the notebook tampered with the checks (its grade comes from a clean run all the "
                   "same); or it passes every public case and no fresh hidden one (memorised cases, scored 0). "
                   "Look before you grade.</p><table><caption>Flagged exercises</caption><thead><tr>"
                   "<th scope=\"col\">learner</th><th scope=\"col\">exercise</th><th scope=\"col\">flag</th>"
                   "</tr></thead><tbody>")
        out += [f"<tr><td>{html.escape(learner)}</td><td>{html.escape(s['exercise'])}</td>"
                f"<td>{html.escape(flag)}</td></tr>" for s, learner, flag in flags]
        out.append("</tbody></table>")
    else:
        out.append('<p class="note">None.</p>')
    problems = [(learner, data["notes"]) for learner, data in sorted(model["learners"].items()) if data["notes"]]
    out.append("<h2>Learners with a problem to look at</h2>")
    if problems:
        out.append("<table><caption>Notes (the first cause of each failure)</caption><thead><tr>"
                   "<th scope=\"col\">learner</th><th scope=\"col\">notes</th></tr></thead><tbody>")
        out += [f"<tr><td>{html.escape(learner)} ({html.escape(totals.get(learner, ''))})</td>"
                f"<td>{'<br>'.join(html.escape(n) for n in notes)}</td></tr>" for learner, notes in problems]
        out.append("</tbody></table>")
    else:
        out.append('<p class="note">None.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _who_did_not_pass(model: dict, lesson: str, items: list[dict]) -> list[str]:
    """Per exercise, who did not pass it and why (a fail's mistake, the stub, not run), then who did not hand
    the lesson in: who to sit with, and whom to pair, in the next session."""
    number = lesson.split("_", 1)[0]
    rows = [(s, outcome, learners) for s in items for outcome, learners in s["not_passed"]]
    absent = sorted(learner for learner, data in model["learners"].items() if lesson not in data["handed_in"])
    out = []
    if rows:
        out.append(f"<table><caption>Lesson {number}: who did not pass, per exercise</caption><thead><tr>"
                   "<th scope=\"col\">exercise</th><th scope=\"col\">verdict and mistake</th>"
                   "<th scope=\"col\">learners</th><th scope=\"col\">who</th></tr></thead><tbody>")
        out += [f"<tr><th scope=\"row\">{html.escape(s['exercise'])}</th><td>{html.escape(outcome)}</td>"
                f"<td class=\"n\">{len(learners)}</td><td>{html.escape(', '.join(learners))}</td></tr>"
                for s, outcome, learners in rows]
        out.append("</tbody></table>")
    elif len(absent) < len(model["learners"]):
        out.append('<p class="note">Everyone who handed this lesson in passed every exercise.</p>')
    if absent:
        out.append(f'<p>Did not hand lesson {number} in ({len(absent)}): {html.escape(", ".join(absent))}.</p>')
    return out


def write_outputs(model: dict, out: Path) -> tuple[list[str], list[dict[str, str]], str]:
    out.mkdir(parents=True, exist_ok=True)
    header, rows = rows_of(model)
    for name, (head, body) in (("grades.csv", (header, rows)), ("verdicts.csv", long_rows(model))):
        with open(out / name, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=head)
            writer.writeheader()
            writer.writerows(body)
    summary = summary_text(model, out)
    (out / "summary.txt").write_text(summary)
    (out / "report.html").write_text(report_html(model))
    (out / "grades.json").write_text(json.dumps(model, indent=1, sort_keys=True))
    return header, rows, summary


def merge(folders: list[Path], out: Path):
    """Combine the shards' grades.json (from `--shard i/n` runs) into one set of files in `out`."""
    return write_outputs(merged_model(folders), out)


def merged_model(folders: list[Path], unreadable: list[Path] = ()) -> dict:
    """The shards' grades.json combined; settings say which shards are missing (`merge_problems`)."""
    models = [json.loads((folder / "grades.json").read_text()) for folder in folders]
    if not models:
        raise SystemExit("merge: no shard folders given")
    lessons = models[0]["lessons"]
    for folder, model in zip(folders, models):
        if model.get("format") != FORMAT or model["lessons"] != lessons:
            raise SystemExit(f"merge: {folder} was graded against other lessons or exercises; re-grade it")
    merged = {**models[0], "learners": {}, "notebooks": sum(m["notebooks"] for m in models),
              "seconds": round(sum(m["seconds"] for m in models), 1)}
    for folder, model in zip(folders, models):
        clash = set(model["learners"]) & set(merged["learners"])
        if clash:
            raise SystemExit(f"merge: {folder} grades {', '.join(sorted(clash))} again (the same shard twice?)")
        merged["learners"].update(model["learners"])
    shards = sorted(tuple(m["settings"]["shard"]) for m in models if m["settings"].get("shard"))
    settings = {**models[0]["settings"], "shard": None, "shards": ", ".join(f"{i}/{n}" for i, n in shards)}
    grouped = {}
    for model in models:
        grouped.update(model["settings"].get("grouped") or {})
    settings["grouped"] = grouped
    if unreadable:
        settings["unreadable"] = [str(folder) for folder in unreadable]
    counts = {n for _, n in shards}
    if len(counts) == 1:
        n = counts.pop()
        missing = sorted(set(range(1, n + 1)) - {i for i, _ in shards})
        if missing:
            settings["missing_shards"] = ", ".join(f"{i}/{n}" for i in missing)
    elif len(counts) > 1:
        settings["mixed_shards"] = settings["shards"]
    merged["settings"] = settings
    return merged
