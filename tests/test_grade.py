"""tools/grade.py (`make grade`) on a made-up class: the issue's eleven learners and a few more, in small
synthetic notebooks graded two at a time, each scenario a test of what grades.csv, the report and the
executed copies say."""
import csv
import html
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from helpers.checks import lesson01

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import grade  # noqa: E402
import grade_report  # noqa: E402
import notebooks as nbtool  # noqa: E402

CELL_TIMEOUT = 10      # seconds per cell in the main batch: only the endless loop reaches it

IMPORTS = "from helpers.checks import check_hand_trace, check_firing_units"
TRACE = "def hand_trace():\n    \"\"\"z, h and y for x = [2, 3].\"\"\"\n    ### BEGIN SOLUTION\n" \
        "    return {z}, {h}, {y}\n    ### END SOLUTION".format(**lesson01._TRACE)
FIRING = '''def firing_units(x, W1, b1):
    """Indices of the hidden units whose pre-activation is above 0."""
    ### BEGIN SOLUTION
    import numpy as np
    x_row = np.asarray(x, dtype=float).reshape(1, -1)
    weights = np.asarray(W1, dtype=float)
    biases = np.asarray(b1, dtype=float).reshape(1, -1)
    z = (x_row @ weights + biases).ravel()
    fired = [int(unit) for unit, value in enumerate(z) if value > 0]
    return sorted(fired)
    ### END SOLUTION'''
# Right answers in a learner's own words (the solution's code would be flagged).
OWN_TRACE = "def hand_trace():\n    z = [2 + 3 - 1, 2 - 3]\n    h = [max(0, v) for v in z]\n" \
            "    return z, h, [h[0] + 1, h[1] - 1]"
OWN_FIRING = ("def firing_units(x, W1, b1):\n    fired = []\n    for k in range(len(b1)):\n"
              "        z = sum(x[i] * W1[i][k] for i in range(len(x))) + b1[k]\n"
              "        if z > 0:\n            fired.append(k)\n    return fired")
# The course shows a check failing on purpose: no attempt of the learner's, whatever it says.
DEMO = "ok = check_hand_trace(lambda: ([0, 0], [0, 0], [0, 0]))   # what a failing check prints"
TRACE_WRONG = "def hand_trace():\n    return {z}, {h}, {y}   # b1 left out".format(**lesson01._TRACE_MISTAKES[0][1])
FIRING_WRONG = FIRING.replace("value > 0", "value >= 0").replace("    ### BEGIN SOLUTION\n", "").replace(
    "\n    ### END SOLUTION", "")
FIRING_LOOPS = "def firing_units(x, W1, b1):\n    while True:\n        pass"
# Lesson 99 imports the course's gelu above its own exercise, as lesson 04 does, and has it in "Going further".
IMPORTS_99 = IMPORTS + "\nfrom helpers.checks import check_gelu\nfrom helpers.ffn import gelu"
GELU = ("def gelu(z):\n    \"\"\"Exact GELU.\"\"\"\n    ### BEGIN SOLUTION\n    import math\n"
        "    import numpy as np\n    z = np.asarray(z, dtype=float)\n"
        "    return z * 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))\n    ### END SOLUTION")
OWN_GELU = "def gelu(z):\n    from scipy.special import ndtr\n    return z * ndtr(z)"


def lesson_notebook(*cells, title="A synthetic lesson"):
    """A notebook of these cells: markdown where a cell starts with '## ' or '### ', code otherwise."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nWhat this lesson is about.")]
    nb.cells += [nbformat.v4.new_markdown_cell(c) if c.startswith(("## ", "### ")) else nbformat.v4.new_code_cell(c)
                 for c in cells]
    return nb


SOLUTION_01 = lesson_notebook(IMPORTS, "### Exercise 1 · Trace by hand\n\n**Difficulty:** ● ○ ○", TRACE,
                              "check_hand_trace(hand_trace)", "### Exercise 2 · Which units fire?", FIRING,
                              "check_firing_units(firing_units)", DEMO, "print('the end of the lesson')",
                              title="Lesson 01 · The hand trace")
SOLUTION_99 = lesson_notebook(IMPORTS_99, "### Exercise 1 · The trace again", TRACE, "check_hand_trace(hand_trace)",
                              "## Going further", "### Exercise 2 · GELU", GELU, "check_gelu(gelu)", title="Extra")


def learner_copy(solution, name, replace=None):
    """What `make notebooks` hands out, with the learner's cells: replace={cell position: new source};
    a list value inserts cells after that position."""
    nb = nbtool.learner_version(solution, name)
    replace = replace or {}
    for position in sorted(replace, reverse=True):
        value = replace[position]
        if isinstance(value, list):
            nb.cells[position + 1:position + 1] = [nbformat.v4.new_code_cell(v) for v in value]
        else:
            nb.cells[position].source = value
    return nb


def write(path, nb):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


# positions of cells in the lesson: 1 imports, 3 hand_trace, 4 its check, 6 firing_units, 7 its check, 8 demo
HT, HT_CHECK, FU, FU_CHECK = 3, 4, 6, 7
GE = 7                  # lesson 99's gelu (optional)


def make_class(base: Path) -> Path:
    solutions, submissions = base / "solutions", base / "submissions"
    write(solutions / "01_hand_trace.ipynb", SOLUTION_01)
    write(solutions / "99_extra.ipynb", SOLUTION_99)
    answers = {HT: OWN_TRACE, FU: OWN_FIRING}
    lesson = "01_hand_trace.ipynb"

    def hand_in(learner, nb, name=lesson):
        write(submissions / learner / name, nb)

    # all correct, handed in as a flat export: <learner>_<NN_lesson>.ipynb at the top, either separator
    write(submissions / "ana_01_hand_trace.ipynb", learner_copy(SOLUTION_01, lesson, answers))
    write(submissions / "ana-99_extra.ipynb",
          learner_copy(SOLUTION_99, "99_extra.ipynb", {HT: OWN_TRACE, GE: OWN_GELU}))
    hand_in("ben", learner_copy(SOLUTION_01, lesson, {HT: OWN_TRACE}))                      # partly done
    hand_in("cal", learner_copy(SOLUTION_01, lesson, {HT: TRACE_WRONG, FU: FIRING_WRONG}))   # mistakes
    hand_in("dee", learner_copy(SOLUTION_01, lesson))                                     # untouched stubs
    hand_in("eve", learner_copy(SOLUTION_01, lesson, {HT: OWN_TRACE, FU: FIRING_LOOPS}))    # an endless loop
    hand_in("fay", learner_copy(SOLUTION_01, lesson, {1: ["import torch"], **answers}))  # a failing import
    hand_in("gus", learner_copy(SOLUTION_01, lesson, {                                  # kills the kernel
        HT: "def hand_trace():\n    import os\n    os._exit(3)", FU: OWN_FIRING}))
    nb_text = nbformat.writes(learner_copy(SOLUTION_01, lesson, answers))
    (submissions / "hal").mkdir(parents=True)
    (submissions / "hal" / lesson).write_text(nb_text[: len(nb_text) // 2])              # truncated JSON
    hand_in("ivy", learner_copy(SOLUTION_01, lesson, {HT: TRACE, FU: FIRING}))         # solutions/' code
    hand_in("jon", learner_copy(SOLUTION_01, lesson, {                                 # the reference
        HT: "def hand_trace():\n    from helpers.checks import lesson01\n"
            "    return lesson01._TRACE['z'], lesson01._TRACE['h'], lesson01._TRACE['y']",
        FU: "from helpers.checks.lesson01 import _reference_firing as firing_units"}))
    hand_in("kim", learner_copy(SOLUTION_01, lesson, {                                 # a fix below
        HT: TRACE_WRONG, FU: OWN_FIRING, HT_CHECK: [OWN_TRACE, "check_hand_trace(hand_trace)   # fixed it"]}))
    hand_in("lem", learner_copy(SOLUTION_99, "99_extra.ipynb", {                       # one lesson; a syntax
        HT: OWN_TRACE, GE: "def gelu(z)\n    return z"}), "99_extra.ipynb")               # error under an import
    hand_in("max", learner_copy(SOLUTION_01, lesson, {                                 # a first error...
        HT: "def hand_trace()\n    return 1", FU: OWN_FIRING}))                             # ... and its echo
    write(submissions / "ned.ipynb", learner_copy(SOLUTION_01, lesson, {               # a file, not a folder
        HT: OWN_TRACE, HT_CHECK: "print('check deleted')", FU: OWN_FIRING}))
    (submissions / "oli").mkdir()                                                         # an empty folder
    hand_in("pam", learner_copy(SOLUTION_01, lesson, {                                 # hidden cases run
        HT: OWN_TRACE, FU: OWN_FIRING, 8: "import os\nprint('FFN_GRADING =', os.environ.get('FFN_GRADING'))"}))
    hand_in("quin", learner_copy(SOLUTION_01, lesson, {                                # an experiment after a
        HT: OWN_TRACE, HT_CHECK: ["def try_relu_after():\n    return [4, -1], [4, 0], [5, 0]",   # pass; and
                                  "check_hand_trace(try_relu_after)"],                 # a course function
        FU: "from helpers.explorer import zeroed_units as firing_units"}))            # under the name
    stubborn = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)"
    hand_in("zed", learner_copy(SOLUTION_01, lesson, {                                   # ignores interrupts
        HT: OWN_TRACE, FU: OWN_FIRING, HT_CHECK: [stubborn]}))
    return submissions


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the class once, from the command line as `make grade` does, two notebooks at a time."""
    base = tmp_path_factory.mktemp("grading")
    submissions, out = make_class(base), base / "grades"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "grade.py"), str(submissions), "--out", str(out),
                           "--jobs", "2", "--cell-timeout", str(CELL_TIMEOUT), "--solutions", str(base / "solutions")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "FFN_GRADE_PROBE_TIMEOUT": "3"})   # zed's kernel is replaced sooner
    assert done.returncode == 0, done.stderr
    with open(out / "grades.csv", newline="") as f:
        rows = {r["learner"]: r for r in csv.DictReader(f)}
    return {"rows": rows, "out": out, "stdout": done.stdout, "stderr": done.stderr, "base": base,
            "model": json.loads((out / "grades.json").read_text())}


def verdicts(row, *exercises):
    return tuple(row[e] for e in exercises)


EXERCISES = ("01:hand_trace", "01:firing_units", "99:hand_trace")
OPTIONAL = "99:gelu"


def test_every_row_has_the_same_columns_and_denominators(graded):
    rows = graded["rows"]
    assert sorted(rows) == ["ana", "ben", "cal", "dee", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lem",
                            "max", "ned", "oli", "pam", "quin", "zed"]      # ana's two flat files: one learner
    header = list(next(iter(rows.values())))
    assert header[:6] == ["learner", "01:hand_trace", "01:hand_trace score", "01:hand_trace mistake",
                          "01:hand_trace detail", "01:hand_trace flags"]
    assert header[-5:] == ["passed", "exercises", "score", "lessons handed in", "notes"]
    assert {r["exercises"] for r in rows.values()} == {"3"}                # the optional gelu is not counted
    assert all(r[e] in grade.VERDICTS for r in rows.values() for e in (*EXERCISES, OPTIONAL))


def test_all_correct(graded):
    ana = graded["rows"]["ana"]
    assert verdicts(ana, *EXERCISES, OPTIONAL) == ("pass", "pass", "pass", "pass")
    assert (ana["passed"], ana["score"], ana["lessons handed in"], ana["notes"]) == ("3", "3.00", "2 of 2", "")


def test_partly_done_is_not_attempted_not_fail(graded):
    ben = graded["rows"]["ben"]
    assert verdicts(ben, *EXERCISES) == ("pass", "not attempted", "not handed in")
    assert ben["01:firing_units score"] == "0.00" and ben["01:firing_units mistake"] == ""


def test_each_fail_records_the_named_mistake_and_a_partial_score(graded):
    cal = graded["rows"]["cal"]
    assert verdicts(cal, *EXERCISES[:2]) == ("fail", "fail")
    assert cal["01:hand_trace mistake"] == "b1 left out"
    assert cal["01:firing_units mistake"] == "counting a unit whose pre-activation is exactly 0 as firing"
    assert 0 < float(cal["01:firing_units score"]) < 1                    # some cases pass, some fail
    entry = graded["model"]["learners"]["cal"]["exercises"]["01:firing_units"]
    assert f"{entry['passed'] / entry['total']:.2f}" == cal["01:firing_units score"]


def test_untouched_stubs_are_not_attempted(graded):
    dee = graded["rows"]["dee"]
    assert verdicts(dee, *EXERCISES[:2]) == ("not attempted", "not attempted")
    assert (dee["passed"], dee["score"], dee["notes"]) == ("0", "0.00", "")


def test_an_endless_loop_costs_only_its_exercise(graded):
    eve = graded["rows"]["eve"]
    assert verdicts(eve, *EXERCISES[:2]) == ("pass", "fail")
    assert eve["01:firing_units mistake"] == f"did not finish within {CELL_TIMEOUT} s: an endless loop?"
    assert f"the code cell starting `check_firing_units(firing_units)` ran past {CELL_TIMEOUT} s and was " \
           "interrupted" in eve["notes"]
    copy = nbformat.read(graded["out"] / "eve" / "01_hand_trace.ipynb", as_version=4)
    assert "the end of the lesson" in "".join(o.get("text", "") for o in copy.cells[-1].outputs)   # went on


def test_a_failing_import_is_one_note_naming_the_module(graded):
    fay = graded["rows"]["fay"]
    assert verdicts(fay, *EXERCISES[:2]) == ("pass", "pass")
    assert fay["notes"] == "01_hand_trace.ipynb: the code cell starting `import torch` raised " \
                           "ModuleNotFoundError: No module named 'torch'"


def test_a_kernel_that_dies_costs_only_its_exercise(graded):
    gus = graded["rows"]["gus"]
    assert verdicts(gus, *EXERCISES[:2]) == ("fail", "pass")
    assert gus["01:hand_trace mistake"] == "the kernel died while it was checked"
    assert "the code cell starting `check_hand_trace(hand_trace)`: the kernel died (exit code 3); the grader " \
           "skipped it and ran the rest" in gus["notes"]


def test_truncated_json_is_a_note_and_its_lesson_not_run(graded):
    hal = graded["rows"]["hal"]
    assert hal["notes"].startswith("01_hand_trace.ipynb: not a valid notebook (")
    assert verdicts(hal, *EXERCISES) == ("not run", "not run", "not handed in")


def test_a_copy_of_the_solutions_is_flagged_not_failed(graded):
    ivy = graded["rows"]["ivy"]
    assert verdicts(ivy, *EXERCISES[:2]) == ("pass", "pass")
    # firing_units' solution is distinctive (tools/grade.COPY_MIN_NODES); hand_trace's is three lists of numbers,
    # which every honest learner writes the same way: no flag.
    assert ivy["01:firing_units flags"] == "same code as solutions/" and ivy["01:hand_trace flags"] == ""


def test_the_reference_from_helpers_is_flagged(graded):
    jon = graded["rows"]["jon"]
    assert verdicts(jon, *EXERCISES[:2]) == ("pass", "pass")
    assert jon["01:hand_trace flags"] == "uses helpers.checks.lesson01 (the solution does not)"
    flagged = {(learner, key) for learner, row in graded["rows"].items() for key in (*EXERCISES, OPTIONAL)
               if row[f"{key} flags"]}
    # Not quin's firing_units nor lem's gelu: the course's own function, refused by the check, a fail that says so.
    assert flagged == {("ivy", "01:firing_units"), ("jon", "01:hand_trace"),
                       ("jon", "01:firing_units")}
    assert jon["01:firing_units flags"] == "uses helpers.checks.lesson01._reference_firing (the solution does not)"


def test_the_learners_last_call_counts_not_the_courses_demonstration(graded):
    kim = graded["rows"]["kim"]
    assert verdicts(kim, *EXERCISES[:2]) == ("pass", "pass")        # the fix below the failing check
    assert kim["01:hand_trace mistake"] == ""
    # Everyone ran the course's own `ok = check_hand_trace(...)` demonstration after their check: ignored.
    assert graded["rows"]["ana"]["01:hand_trace"] == "pass"


def test_a_lesson_not_handed_in_is_marked_so_for_everyone(graded):
    lem, oli = graded["rows"]["lem"], graded["rows"]["oli"]
    assert verdicts(lem, *EXERCISES) == ("not handed in", "not handed in", "pass")
    assert lem["lessons handed in"] == "1 of 2" and lem["exercises"] == "3"
    assert verdicts(oli, *EXERCISES) == ("not handed in",) * 3 and oli["notes"] == "no notebooks found"


def test_one_note_per_failure_the_first_cause_with_its_message(graded):
    max_ = graded["rows"]["max"]
    assert verdicts(max_, *EXERCISES[:2]) == ("not run", "pass")
    assert max_["notes"].startswith("01_hand_trace.ipynb: the code of Exercise 1 · Trace by hand raised SyntaxError: ")
    assert max_["notes"].endswith(" (and 1 later cell(s) raised errors, probably because of it)")
    assert max_["notes"].count("raised") == 2


def test_a_deleted_check_is_not_run_and_a_file_is_a_learner(graded):
    ned = graded["rows"]["ned"]
    assert verdicts(ned, *EXERCISES[:2]) == ("not run", "pass")


def test_the_kernel_holds_no_grading_switch_and_the_copy_shows_the_clean_check(graded):
    copy = nbformat.read(graded["out"] / "pam" / "01_hand_trace.ipynb", as_version=4)
    assert "FFN_GRADING = None" in "".join(o.get("text", "") for o in copy.cells[8].outputs)
    assert "_ffn_install" not in "".join(c.source for c in copy.cells)      # the grader's own cells are gone
    assert "_ffn_dump" not in "".join(c.source for c in copy.cells)
    shown = "".join(o.get("text", "") for o in copy.cells[HT_CHECK].outputs)
    assert shown.startswith("[grader] checked again in a clean process") and "hand_trace: " in shown


def test_csv_files_report_and_summary_agree(graded):
    out = graded["out"]
    with open(out / "verdicts.csv", newline="") as f:
        long = list(csv.DictReader(f))
    assert len(long) == 18 * 4
    cal = {r["exercise"]: r for r in long if r["learner"] == "cal" and r["lesson"] == "01_hand_trace"}
    assert cal["hand_trace"]["mistake"] == "b1 left out" and cal["hand_trace"]["verdict"] == "fail"
    summary = (out / "summary.txt").read_text()
    assert summary == graded["stdout"]
    assert "hand_trace: 1 of 16: b1 left out" in summary             # 16 handed lesson 01 in (hal's broken file too)
    report = (out / "report.html").read_text()
    assert '<td>firing_units</td><td class="n">1 of 16</td><td>counting a unit whose pre-activation is ' \
           'exactly 0 as firing</td>' in report


def test_report_is_accessible_chart_alt_text_and_table_headers(graded):
    report = (graded["out"] / "report.html").read_text()
    assert '<html lang="en">' in report
    assert report.count('role="img"') == 2 and report.count("<desc id=") == 2      # one chart per lesson
    assert "Lesson 01: The hand trace: share of the 16 learner(s) who handed it in passing each exercise. " \
           "hand_trace: 10 of 16 pass; firing_units: 10 of 16 pass." in report           # the chart's alt text
    assert '<th scope="col">not handed in</th>' in report and "<caption>" in report
    assert "<td>ivy</td><td>firing_units</td><td>same code as solutions/</td>" in report


def test_progress_bar_and_no_kernel_warning_spam(graded):
    lines = graded["stderr"].splitlines()
    assert lines and all(line.startswith("grading [") for line in lines), graded["stderr"][-2000:]
    assert lines[-1].startswith("grading [##############################] 18/18 notebooks")


def test_a_cell_that_ignores_interrupts_is_skipped_and_the_rest_still_runs(graded):
    zed = graded["rows"]["zed"]
    assert verdicts(zed, *EXERCISES[:2]) == ("pass", "pass")      # the cells above re-ran in a new kernel
    assert zed["notes"] == f"01_hand_trace.ipynb: the code cell starting `import signal, time`: ran past " \
                           f"{CELL_TIMEOUT} s and did not stop when interrupted; the grader skipped it and ran the rest"


# ---- shards, and merging them -----------------------------------------------------------------------------
def test_shards_partition_the_learners_deterministically():
    learners = {name: [] for name in ["dan", "ann", "cat", "bob", "eli"]}
    shards = [grade.shard_of(learners, (i, 2)) for i in (1, 2)]
    assert [sorted(s) for s in shards] == [["ann", "cat", "eli"], ["bob", "dan"]]
    assert grade.parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "x"):
        with pytest.raises(Exception):
            grade.parse_shard(bad)


def test_shard_runs_merge_into_the_whole_class(tmp_path, capsys):
    write(tmp_path / "solutions" / "99_extra.ipynb", SOLUTION_99)
    for learner, answer in (("amy", TRACE), ("bea", TRACE_WRONG), ("cy", None)):
        nb = learner_copy(SOLUTION_99, "99_extra.ipynb", ({HT: answer} if answer else {}))
        write(tmp_path / "sub" / learner / "99_extra.ipynb", nb)
    common = ["--solutions", str(tmp_path / "solutions"), "--quiet"]
    for i in (1, 2):
        assert grade.main([str(tmp_path / "sub"), "--shard", f"{i}/2", "--out", str(tmp_path / f"shard{i}"),
                           *common]) == 0
    shard_rows = [list(csv.DictReader(open(tmp_path / f"shard{i}" / "grades.csv"))) for i in (1, 2)]
    assert [[r["learner"] for r in rows] for rows in shard_rows] == [["amy", "cy"], ["bea"]]
    capsys.readouterr()
    assert grade.main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"),
                       "--out", str(tmp_path / "all")]) == 0
    assert "merged from shards 1/2, 2/2" in capsys.readouterr().out
    merged = list(csv.DictReader(open(tmp_path / "all" / "grades.csv")))
    assert [(r["learner"], r["99:hand_trace"]) for r in merged] == [
        ("amy", "pass"), ("bea", "fail"), ("cy", "not attempted")]
    assert merged[1]["99:hand_trace mistake"] == "b1 left out"
    assert "<td>hand_trace</td><td class=\"n\">1 of 3</td><td>b1 left out</td>" in \
        (tmp_path / "all" / "report.html").read_text()
    # One shard short: said loudly, with a failing status (a CI matrix notices), and what it has is merged.
    assert grade.main(["merge", str(tmp_path / "shard1"), "--out", str(tmp_path / "part")]) == 1
    said = capsys.readouterr()
    assert "MISSING shards: 2/2" in said.out
    assert "grade.py merge: incomplete: missing shard(s) 2/2: their learners are not in these files" in said.err
    assert [r["learner"] for r in csv.DictReader(open(tmp_path / "part" / "grades.csv"))] == ["amy", "cy"]
    # A shard whose run never wrote its grades.json: the others are merged, and the status fails.
    (tmp_path / "shard3").mkdir()
    assert grade.main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard3"), "--out",
                       str(tmp_path / "part")]) == 1
    said = capsys.readouterr()
    assert f"no grades.json in {tmp_path / 'shard3'}" in said.err and "INCOMPLETE MERGE" in said.out
    # The same shard twice: refused.
    with pytest.raises(SystemExit, match="again"):
        grade.main(["merge", str(tmp_path / "shard1"), str(tmp_path / "shard1"), "--out", str(tmp_path / "x")])


# ---- pieces ------------------------------------------------------------------------------------------------
def test_lesson_from_file_name_then_metadata_then_the_checks_called():
    expected = {"01_hand_trace": ["check_hand_trace", "check_firing_units"], "02_pure_python": ["check_matvec"]}
    nb = lesson_notebook()
    nb.metadata["ffn_course"] = {"generated_from": "solutions/02_pure_python.ipynb"}
    assert grade.lesson_of(Path("alice-01_hand_trace.ipynb"), nb, expected) == "01_hand_trace"
    assert grade.lesson_of(Path("homework.ipynb"), nb, expected) == "02_pure_python"
    assert grade.lesson_of(Path("homework.ipynb"), None, expected) is None
    anonymous = lesson_notebook(IMPORTS, "check_firing_units(f)")
    assert grade.lesson_of(Path("homework.ipynb"), anonymous, expected) == "01_hand_trace"
    del anonymous.cells[-1]
    assert grade.lesson_of(Path("homework.ipynb"), anonymous, expected) is None


def test_same_code_ignores_comments_docstrings_and_layout():
    solution = grade.normalised(FIRING, "firing_units")
    retyped = textwrap.dedent('''
        def firing_units(x, W1, b1):
            import numpy as np   # the same, retyped
            x_row = np.asarray(x,
                               dtype=float).reshape(1, -1)
            weights = np.asarray(W1, dtype=float)
            biases = np.asarray(b1, dtype=float).reshape(1, -1)
            z = (x_row @ weights
                 + biases).ravel()
            fired = [int(unit) for unit, value in enumerate(z) if value > 0]   # the same
            return sorted(fired)''')
    assert grade.normalised(retyped, "firing_units") == solution
    assert grade.normalised(FIRING_WRONG, "firing_units") != solution
    assert grade.normalised("def other(): pass", "firing_units") is None


def test_course_calls_other_than_the_check_cell_do_not_count(tmp_path):
    write(tmp_path / "01_hand_trace.ipynb", SOLUTION_01)
    lesson = grade.load_lesson(tmp_path / "01_hand_trace.ipynb")
    assert lesson.checks == ["check_hand_trace", "check_firing_units"]
    assert grade.counts(lesson, "check_hand_trace(hand_trace)", "check_hand_trace")
    assert not grade.counts(lesson, DEMO, "check_hand_trace")                      # the course's demonstration
    assert grade.counts(lesson, "ok = check_hand_trace(my_new_try)", "check_hand_trace")   # the learner's cell
    assert set(lesson.solutions) == {"hand_trace", "firing_units"} and lesson.allowed["firing_units"] == set()


def test_progress_bar_redraws_on_a_terminal_and_prints_tenths_elsewhere():
    log = io.StringIO()
    bar = grade.Progress(20, stream=log)
    for _ in range(20):
        bar.step()
    assert len(log.getvalue().splitlines()) == 10
    assert log.getvalue().splitlines()[-1].startswith("grading [##############################] 20/20")

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    screen = Terminal()
    bar = grade.Progress(3, stream=screen)
    for _ in range(3):
        bar.step()
    assert screen.getvalue().count("\r") == 3 and " left\r" in screen.getvalue()
    assert screen.getvalue().split("\r")[-1].startswith("grading [##############################] 3/3 notebooks")
    assert " s each, done in " in screen.getvalue() and screen.getvalue().endswith("\n")


def test_command_line_refuses_a_missing_folder(tmp_path, capsys):
    assert grade.main([str(tmp_path / "nowhere")]) == 2
    assert "No such folder" in capsys.readouterr().err
    assert grade.main(["merge", str(tmp_path)]) == 2


def test_make_grade_passes_shard_lessons_and_limits_to_the_tool():
    done = subprocess.run(["make", "-n", "grade", "SUBMISSIONS=class", "SHARD=2/4", "LESSONS=01 02", "JOBS=2",
                           "TIMEOUT=30"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    command = " ".join(done.stdout.replace("\\\n", " ").split())
    assert "tools/grade.py \"class\" --cell-timeout 30 --timeout 600 --jobs 2 --lessons 01 02 --shard 2/4 " \
           "--out grades/shard-2-of-4" in command
    done = subprocess.run(["make", "-n", "grade", "SUBMISSIONS=class"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert "--out grades" in done.stdout and "--shard" not in done.stdout


def test_only_the_lessons_set_are_graded_and_in_every_row(tmp_path):
    write(tmp_path / "solutions" / "01_hand_trace.ipynb", SOLUTION_01)
    write(tmp_path / "solutions" / "99_extra.ipynb", SOLUTION_99)
    write(tmp_path / "sub" / "amy" / "01_hand_trace.ipynb", learner_copy(SOLUTION_01, "01_hand_trace.ipynb"))
    write(tmp_path / "sub" / "amy" / "99_extra.ipynb",
          learner_copy(SOLUTION_99, "99_extra.ipynb", {HT: OWN_TRACE}))
    header, rows, _ = grade.grade(tmp_path / "sub", tmp_path / "out", solutions=tmp_path / "solutions",
                                  lessons=["99"], progress=False)
    assert [h for h in header if ":" in h and " " not in h] == ["99:hand_trace", "99:gelu"]
    assert rows[0]["99:hand_trace"] == "pass" and rows[0]["exercises"] == "1"
    assert rows[0]["notes"] == "01_hand_trace.ipynb: not graded: lesson 01_hand_trace is not among the lessons set"
    with pytest.raises(SystemExit, match="No lessons 42"):
        grade.grade(tmp_path / "sub", tmp_path / "out", solutions=tmp_path / "solutions", lessons=["42"])


def test_going_further_exercises_have_columns_but_do_not_count_in_the_totals():
    entry = {"passed": 1, "total": 2, "mistake": "", "named": True, "flags": [], "notebook": "01_x.ipynb"}
    model = {"format": grade.FORMAT, "lessons": {"01_x": ["check_a", "check_b"]}, "optional": ["01:b"],
             "settings": {}, "notebooks": 1, "seconds": 1.0,
             "learners": {"amy": {"exercises": {"01:a": {**entry, "verdict": "pass", "score": 1.0},
                                                "01:b": {**entry, "verdict": "fail", "score": 0.5}},
                                  "notes": [], "handed_in": ["01_x"]}}}
    header, rows = grade_report.rows_of(model)
    assert rows[0]["01:b"] == "fail" and rows[0]["01:b score"] == "0.50"
    assert (rows[0]["passed"], rows[0]["exercises"], rows[0]["score"]) == ("1", "1", "1.00")
    assert "<th scope=\"row\">b (optional)</th>" in grade_report.report_html(model)


def test_an_experiment_after_a_pass_does_not_count_and_the_courses_own_function_does_not_pass(graded):
    # The last check of the learner's own function counts: a later check of another function (an experiment)
    # does not replace it. A course function under the exercise's name (what a failed or deleted exercise
    # cell leaves when the lesson imported the reference above) is refused by the check itself.
    quin = graded["rows"]["quin"]
    assert verdicts(quin, *EXERCISES[:2]) == ("pass", "fail")
    assert quin["01:firing_units mistake"] == "the course's reference was checked, not the learner's function"


# ---- the instructor's view: lists, optional exercises, flat exports, who failed what ------------------------
def test_a_syntax_error_under_an_import_of_the_courses_function_fails_naming_why(graded):
    # Lesson 04 imports the course's gelu at the top; a learner's gelu cell that does not run leaves the name
    # meaning the course's function, which the check refuses: a fail that says why, not a pass.
    lem = graded["rows"]["lem"]
    assert (lem[OPTIONAL], lem[f"{OPTIONAL} score"]) == ("fail", "0.00")
    assert lem[f"{OPTIONAL} mistake"] == "the course's reference was checked, not the learner's function"
    assert lem[f"{OPTIONAL} flags"] == ""                        # the verdict says it; no "uses helpers.ffn.gelu"
    assert "99_extra.ipynb: the code of Exercise 2 · GELU raised SyntaxError: " in lem["notes"]
    summary = (graded["out"] / "summary.txt").read_text()
    # Listed apart from the learners' mistakes: a fail for handing in the reference, not a slip in the computation.
    assert "the course's reference was checked" not in summary.split("Handed in the course's reference")[0]
    assert "Handed in the course's reference instead of their own code (a fail, not a mistake in the " \
           "computation):\n  01:firing_units: quin\n  99:gelu (optional): lem\n" in summary


def test_optional_exercises_are_marked_in_summary_and_verdicts_csv(graded):
    out = graded["out"]
    with open(out / "verdicts.csv", newline="") as f:
        long = list(csv.DictReader(f))
    marks = {(r["lesson"], r["exercise"]): r["optional"] for r in long if r["learner"] == "ana"}
    assert marks == {("01_hand_trace", "hand_trace"): "no", ("01_hand_trace", "firing_units"): "no",
                     ("99_extra", "hand_trace"): "no", ("99_extra", "gelu"): "yes"}
    table = [line for line in (out / "summary.txt").read_text().splitlines() if line.startswith(("99:", "01:"))]
    assert [line.split("  ")[0].strip() for line in table] == ["01:hand_trace", "01:firing_units", "99:hand_trace",
                                                              "99:gelu (optional)"]
    assert '(optional): in a "Going further" section; not counted in grades.csv\'s totals.' in graded["stdout"]
    report = (out / "report.html").read_text()
    assert '<th scope="row">gelu (optional)</th>' in report
    brief = report.split("<h2>Before the next session</h2>")[1].split("<h2>")[0]
    assert "<li>hand_trace (Lesson 01: The hand trace): 10 of 16 passed" in brief
    assert "gelu (optional) (" not in brief              # fewest passed: of the core exercises (gelu: 1 of 2)


def test_a_flat_export_is_grouped_by_learner_and_said_so(graded):
    # ana_01_hand_trace.ipynb and ana-99_extra.ipynb, side by side with the other learners' folders: one learner
    # (test_all_correct: both lessons in one row), named in the summary and the report.
    said = "2 notebook(s) directly in the folder, named <learner>_<NN_lesson>.ipynb, were grouped by learner: " \
           "ana (2)."
    assert said in graded["stdout"] and html.escape(said) in (graded["out"] / "report.html").read_text()
    assert (graded["out"] / "ana" / "ana-99_extra.ipynb").exists()          # the executed copy, in ana's folder
    assert graded["model"]["settings"]["grouped"] == {"ana": ["ana-99_extra.ipynb", "ana_01_hand_trace.ipynb"]}


def test_flat_names_group_by_learner_and_other_files_stay_learners(tmp_path):
    for name in ("alice_01_hand_trace.ipynb", "alice_02_pure_python.ipynb", "bob_01_hand_trace.ipynb",
                 "mary_ann-03_numpy_position_wise (1).ipynb", "ned.ipynb", "01_hand_trace.ipynb", "carl_01.ipynb"):
        (tmp_path / name).write_text("{}")
    write(tmp_path / "bob" / "02_pure_python.ipynb", lesson_notebook())
    learners = grade.find_submissions(tmp_path)
    assert {k: [p.name for p in v] for k, v in learners.items()} == {
        "alice": ["alice_01_hand_trace.ipynb", "alice_02_pure_python.ipynb"],
        "bob": ["02_pure_python.ipynb", "bob_01_hand_trace.ipynb"],           # a folder and a flat file
        "mary_ann": ["mary_ann-03_numpy_position_wise (1).ipynb"], "ned": ["ned.ipynb"],
        "01_hand_trace": ["01_hand_trace.ipynb"], "carl_01": ["carl_01.ipynb"]}
    assert grade.grouped_by_name(learners, tmp_path) == {
        "alice": ["alice_01_hand_trace.ipynb", "alice_02_pure_python.ipynb"], "bob": ["bob_01_hand_trace.ipynb"],
        "mary_ann": ["mary_ann-03_numpy_position_wise (1).ipynb"]}


def _model(lessons: dict[str, dict[str, list[tuple[str, str]]]]) -> dict:
    """A graded class as data: lessons = {lesson: {check: [(learner, mistake or "" for a pass)]}}."""
    model = {"format": grade.FORMAT, "lessons": {lesson: list(checks) for lesson, checks in lessons.items()},
             "optional": [], "settings": {"submissions": "class", "cell_timeout": 60, "timeout": 600},
             "notebooks": 0, "seconds": 0.0, "learners": {}}
    learners = sorted({learner for checks in lessons.values() for done in checks.values() for learner, _ in done})
    for learner in learners:
        model["learners"][learner] = {"exercises": {}, "notes": [], "handed_in": list(lessons)}
        for lesson, checks in lessons.items():
            for check, done in checks.items():
                mistake = dict(done).get(learner)
                verdict = "not attempted" if mistake is None else "fail" if mistake else "pass"
                model["learners"][learner]["exercises"][grade_report.column(lesson, check)] = {
                    "verdict": verdict, "passed": None, "total": None, "score": 1.0 if verdict == "pass" else 0.0,
                    "mistake": mistake or "", "named": True, "flags": [], "notebook": ""}
    return model


def test_every_lessons_commonest_mistakes_are_listed_and_a_cut_list_says_so(tmp_path):
    # Lesson 01: 20 different mistakes, each made by two learners, more than lesson 02's single one.
    many = {"check_a": [(f"l{k:02d}", f"mistake {k // 2}") for k in range(40)]}
    model = _model({"01_x": many, "02_y": {"check_b": [("l00", "the rare one"), ("l01", "")]}})
    summary = grade_report.summary_text(model, tmp_path)
    assert "  Lesson 02: y\n    b: 1 of 40: the rare one\n" in summary           # not crowded out by lesson 01
    lesson_01 = summary.split("  Lesson 01: x\n")[1].split("  Lesson 02")[0].splitlines()
    assert len(lesson_01) == 5 + 1 and lesson_01[0] == "    a: 2 of 40: mistake 0"
    assert lesson_01[-1] == "    ... and 15 more named mistakes in this lesson, made 30 times in all: report.html " \
                            "lists every one"
    report = grade_report.report_html(model)
    assert report.count("<td>a</td><td class=\"n\">2 of 40</td>") == 20             # the report lists every one
    brief = report.split("<h2>Before the next session</h2>")[1].split("<h2>")[0]
    assert brief.count("<li>Lesson 01: x, a: 2 of 40:") == 2 and "<li>Lesson 02: y, b: 1 of 40: the rare one.</li>" \
        in brief
    assert "18 more named mistakes not shown here: each lesson's section below lists every one" in brief


def test_report_says_who_did_not_pass_each_exercise(graded):
    report = (graded["out"] / "report.html").read_text()
    lesson_01 = report.split("<h2>Lesson 01: The hand trace</h2>")[1].split("<h2>")[0]
    assert "<caption>Lesson 01: who did not pass, per exercise</caption>" in lesson_01
    assert '<th scope="col">verdict and mistake</th>' in lesson_01
    assert '<tr><th scope="row">hand_trace</th><td>fail: b1 left out</td><td class="n">1</td><td>cal</td></tr>' \
        in lesson_01
    assert '<tr><th scope="row">hand_trace</th><td>not attempted (the stub)</td><td class="n">1</td><td>dee</td>' \
        '</tr>' in lesson_01
    assert '<tr><th scope="row">hand_trace</th><td>not run</td><td class="n">3</td><td>hal, max, ned</td></tr>' \
        in lesson_01
    assert '<tr><th scope="row">firing_units</th><td>not attempted (the stub)</td><td class="n">2</td>' \
        '<td>ben, dee</td></tr>' in lesson_01
    assert "<p>Did not hand lesson 01 in (2): lem, oli.</p>" in lesson_01
    rows = lesson_01.split("who did not pass")[1].count("<tr><th scope=\"row\">")
    not_passed = sum(row[key] != "pass" for row in graded["rows"].values() for key in EXERCISES[:2]
                     if row[key] != "not handed in")
    assert rows <= not_passed and rows > 0


def test_no_right_answer_in_the_course_banks_is_flagged_as_a_copy():
    """"same code as solutions/" is a flag only where the solution is distinctive: no function in the course's
    own banks of right answers (tests/test_lessonNN_checks.py), written without looking at solutions/, has the
    syntax tree of a distinctive solution; and the natural one-liners and the answers that are numbers are not
    distinctive."""
    import ast
    course = grade.load_course()
    flagged = []
    for name, lesson in course.items():
        bank = ROOT / "tests" / f"test_lesson{name[:2]}_checks.py"
        for node in ast.walk(ast.parse(bank.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for exercise in lesson.distinctive:
                renamed = ast.parse(ast.unparse(node)).body[0]
                renamed.name = exercise
                if grade.normalised(ast.unparse(renamed), exercise) == lesson.solutions[exercise]:
                    flagged.append((name, exercise, node.name))
    assert flagged == []
    not_distinctive = {"hand_trace", "detector", "relu_backward", "count_ffn_params", "ffn_batched", "gelu", "silu",
                       "collapse", "residual_block", "detector_weights", "ffn_backward"}
    assert not any(not_distinctive & lesson.distinctive for lesson in course.values())
    assert any("ffn_forward" in lesson.distinctive for lesson in course.values())


def test_report_titles_totals_and_reference_use_apart(graded):
    report = (graded["out"] / "report.html").read_text()
    assert "<h2>Lesson 01: The hand trace</h2>" in report and "<h2>Lesson 99: Extra</h2>" in report
    ana = graded["rows"]["ana"]
    assert f'<tr><th scope="row">ana</th><td>{ana["passed"]} of {ana["exercises"]} passed, score {ana["score"]}' \
           '</td></tr>' in report
    lesson_01 = report.split("<h2>Lesson 01: The hand trace</h2>")[1].split("<h2>")[0]
    assert "<caption>Lesson 01: handed in the course's reference instead of their own code" in lesson_01
    assert "<tr><td>firing_units</td><td>quin</td></tr>" in lesson_01
    mistakes = lesson_01.split("every named mistake")[1].split("</table>")[0]
    assert "reference" not in mistakes
    assert "Every exercise was checked again in a clean process, with hidden cases drawn from a new secret (id " \
        in report


def test_a_lesson_nobody_handed_in_has_no_empty_chart(tmp_path):
    model = {"format": grade_report.FORMAT, "lessons": {"01_hand_trace": ["check_hand_trace"],
                                                        "02_pure_python": ["check_matvec"]},
             "titles": {}, "optional": [], "settings": {"submissions": "s", "cell_timeout": 60, "timeout": 600},
             "notebooks": 1, "seconds": 1.0, "learners": {"ann": {"notes": [], "handed_in": ["01_hand_trace"],
                "exercises": {"01:hand_trace": {"verdict": "pass", "passed": 3, "total": 3, "score": 1.0,
                                                "mistake": "", "named": False, "flags": [], "notebook": "x"},
                              "02:matvec": {"verdict": "not handed in", "passed": None, "total": None, "score": 0.0,
                                            "mistake": "", "named": False, "flags": [], "notebook": ""}}}}}
    report = grade_report.report_html(model)
    assert "Nobody handed lesson 02 in." in report and "0 of 0" not in report
    assert report.count('role="img"') == 1
