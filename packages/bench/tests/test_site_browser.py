"""The Rosetta page in a real headless Chromium (Selenium with chromedriver), opened from
file://: it loads without console errors, the menus change the code shown (and keep the same
step on the same line), a column's heading sorts the rows, and a screenshot is taken.

Needs `chromium` and `chromium-driver` (Debian: `apt-get install chromium chromium-driver`;
.ci/run installs them) and selenium (`pip install -e 'packages/bench[test]'`); skipped, saying
which is missing, without them."""

import os
import re
import shutil
import subprocess
import sys

import pytest
from sitepage import write_results, write_verify

from bench.run import system

CHROMIUM = next(
    filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
)
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:  # the test extra is not installed
    webdriver = None

pytestmark = [
    pytest.mark.skipif(
        webdriver is None, reason="selenium is not installed: pip install -e 'packages/bench[test]'"
    ),
    pytest.mark.skipif(
        CHROMIUM is None or DRIVER is None,
        reason=system.missing("chromium") or "no Chromium on PATH",
    ),
]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page `python -m bench report ... --html` writes from fixture results and a verify
    file, with the orchestrator's own conf/ and checkout."""
    tmp = tmp_path_factory.mktemp("page")
    out = tmp / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "report",
            str(write_results(tmp / "results")),
            "--html",
            str(out),
            "--verify",
            str(write_verify(tmp / "verify")),
            "--out",
            str(tmp / "md"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env={k: v for k, v in os.environ.items() if not k.startswith("BENCH_")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "index.html"


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def loaded(browser, page):
    browser.get(page.as_uri())
    return browser


def test_page_loads_without_console_errors(loaded):
    assert loaded.title == "Rosetta Bench"
    problems = [e for e in loaded.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert problems == []
    # the script ran: the sortable headings became buttons
    assert loaded.find_elements(By.CSS_SELECTOR, "table.results thead th button")


# one script per query: a WebDriver round trip per element (is_displayed, text) cost a minute
# over the page's thousands of code lines
VISIBLE = (
    "return Array.from(arguments[0].querySelectorAll(arguments[1]))"
    ".filter(e => e.getClientRects().length > 0)"
)


def _visible(browser, root, selector):
    return browser.execute_script(VISIBLE, root, selector)


def _visible_code(browser, section):
    """The displayed column headings and code cells' texts of a code section."""
    texts = VISIBLE + ".map(e => e.innerText)"
    return (
        browser.execute_script(texts, section, "table.rosetta-code th"),
        browser.execute_script(texts, section, "table.rosetta-code td"),
    )


def _definition_line(browser, cell_row, name):
    """The displayed `def name` lines of a row, one per visible column: their (x, y)."""
    return browser.execute_script(
        VISIBLE + ".filter(e => e.innerText.replace(/^[0-9 ]*/, '').startsWith(arguments[2]))"
        ".map(e => [e.getBoundingClientRect().x, e.getBoundingClientRect().y])",
        cell_row,
        "span.line",
        f"def {name}",
    )


def test_menus_switch_the_code_and_keep_steps_on_one_line(loaded):
    section = loaded.find_element(By.ID, "code-cnn")
    left, right = (Select(s) for s in section.find_elements(By.CSS_SELECTOR, "select"))
    left.select_by_value("torch")
    right.select_by_value("tensorflow")
    heads, cells = _visible_code(loaded, section)
    assert len(heads) == 2 and "PyTorch" in heads[0] and "TensorFlow" in heads[1]
    shown = "\n".join(cells)
    assert "nn.Sequential" in shown and "GradientTape" in shown
    assert "HybridSequential" not in shown
    row = section.find_element(By.CSS_SELECTOR, 'tr[data-key="build_model"]')
    lines = _definition_line(loaded, row, "build_model")
    assert len(lines) == 2 and lines[0][1] == lines[1][1]
    assert lines[0][0] < lines[1][0]  # PyTorch on the left

    right.select_by_value("gluon")
    heads, cells = _visible_code(loaded, section)
    shown = "\n".join(cells)
    assert "MXNet (Gluon)" in heads[1] and "HybridSequential" in shown
    assert "GradientTape" not in shown
    # a switch line of each framework is marked with its reason
    reasons = [w.text for w in _visible(loaded, section, ".why")]
    assert any(r.startswith("⚑ channels_last:") for r in reasons)
    assert any(r.startswith("⚑ hybridize:") for r in reasons)
    switches = [s.get_attribute("data-fw") for s in _visible(loaded, section, ".switches")]
    assert sorted(switches) == ["gluon", "torch"]

    left.select_by_value("gluon")  # the other side's framework: the two swap
    assert (
        left.first_selected_option.get_attribute("value"),
        right.first_selected_option.get_attribute("value"),
    ) == ("gluon", "torch")
    heads, _ = _visible_code(loaded, section)
    assert "MXNet (Gluon)" in heads[0] and "PyTorch" in heads[1]
    # whatever is shown fits the window's width (wide code and tables wrap or scroll inside)
    assert loaded.execute_script(
        "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def _framework_order(browser):
    return [
        r.find_element(By.CSS_SELECTOR, "th").text
        for r in browser.find_elements(By.CSS_SELECTOR, "table.results tbody tr")
    ]


def test_sorting_a_column_reorders_the_rows(loaded):
    assert _framework_order(loaded) == ["MXNet (Gluon)", "PyTorch", "TensorFlow"]
    heading = loaded.find_element(
        By.CSS_SELECTOR, 'table.results th[data-sort-index="1"] button'
    )  # CNN time
    heading.click()  # TensorFlow 57, PyTorch 51, MXNet 43: ascending
    assert _framework_order(loaded) == ["MXNet (Gluon)", "PyTorch", "TensorFlow"]
    heading.click()
    assert _framework_order(loaded) == ["TensorFlow", "PyTorch", "MXNet (Gluon)"]
    th = loaded.find_element(By.CSS_SELECTOR, 'table.results th[data-sort-index="1"]')
    assert th.get_attribute("aria-sort") == "descending"
    # RNN accuracy: only PyTorch has one; failed and unsupported stay below either way
    rnn_accuracy = loaded.find_elements(By.CSS_SELECTOR, "table.results thead tr")[
        -1
    ].find_elements(By.TAG_NAME, "th")[-1]
    rnn_accuracy.find_element(By.TAG_NAME, "button").click()
    assert _framework_order(loaded)[0] == "PyTorch"
    rnn_accuracy.find_element(By.TAG_NAME, "button").click()
    assert _framework_order(loaded)[0] == "PyTorch"


def test_screenshot(loaded, tmp_path):
    path = tmp_path / "rosetta-page.png"
    assert loaded.save_screenshot(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    loaded.execute_script("document.getElementById('code-rnn').scrollIntoView()")
    assert loaded.save_screenshot(str(tmp_path / "rosetta-code-rnn.png"))


def test_a_results_only_page_with_every_comparison_loads_without_errors(browser, tmp_path):
    """--no-code with a baseline, the 2018 figures and a history: the sections a comparison
    adds render and the sort script runs, with nothing in the console."""
    results = write_results(tmp_path / "results")
    older = write_results(tmp_path / "older")
    for path in older.rglob("result.json"):  # the same configurations, another commit
        import json

        result = json.loads(path.read_text())
        result["host"]["git_commit"] = "0" * 40
        result["finished"] = "2026-01-01T00:00:00+00:00"
        path.write_text(json.dumps(result))
    out = tmp_path / "lean"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "report",
            str(results),
            str(older),
            "--baseline",
            str(older),
            "--reference",
            "--history",
            "--html",
            str(out),
            "--no-code",
            "--out",
            str(tmp_path / "md"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("BENCH_")},
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    browser.get((out / "index.html").as_uri())
    problems = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert problems == []
    for anchor in ("results", "baseline", "reference", "history", "history-charts"):
        assert browser.find_elements(By.ID, anchor), anchor
    assert not browser.find_elements(By.ID, "code")
    assert browser.find_elements(By.CSS_SELECTOR, "table.results thead th button")
    browser.save_screenshot(str(tmp_path / "results-only.png"))


def test_a_legend_entry_hides_and_shows_its_learning_curve(browser, tmp_path):
    """The learning curves are SVG in the page: every point has its values in a <title>, and a
    legend button hides its line in both charts, then shows it again."""
    import json

    results = write_results(tmp_path / "results")
    for path in results.rglob("result.json"):
        result = json.loads(path.read_text())
        if result["status"] == "ok" and result["config"]["task"]["kind"] == "train":
            # a point at each of its timed epochs' ends (as the worker evaluates), the last its
            # accuracy; the target reached at the first (bench.run.evidence re-derives them)
            epochs = result["timings"]["epoch"]
            result["curve"] = [
                {
                    "epoch": e,
                    "step": e * result["batches_per_epoch"],
                    "train_seconds": sum(epochs[:e]),
                    "accuracy": result["accuracy"] - 0.1 * (len(epochs) - e),
                    "loss": 1.0 / e,
                }
                for e in range(1, len(epochs) + 1)
            ]
            result["quality_target"] = 0.5
            result["stats"].update(
                quality_target=0.5,
                target_reached=True,
                time_to_target_s=epochs[0],
                target_epoch=1,
            )
            path.write_text(json.dumps(result))
    out = tmp_path / "curves"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "report",
            str(results),
            "--html",
            str(out),
            "--no-code",
            "--out",
            str(tmp_path / "md"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("BENCH_")},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    browser.get((out / "index.html").as_uri())
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    figure = browser.find_element(By.CSS_SELECTOR, 'figure.curves[data-task="cnn"]')
    series = 'g.series[data-series="0"]'
    assert len(_visible(browser, figure, series)) == 2  # accuracy and loss
    titles = browser.execute_script(
        "return Array.from(arguments[0].querySelectorAll('.point > title'))"
        ".map(t => t.textContent)",
        figure,
    )
    assert titles and all(
        re.search(r": epoch \d, [\d.]+ s.*, test (accuracy|loss) ", t) for t in titles
    ), titles
    button = figure.find_element(By.CSS_SELECTOR, 'button[data-series="0"]')
    button.click()
    assert button.get_attribute("aria-pressed") == "false"
    assert _visible(browser, figure, series) == []
    button.click()
    assert len(_visible(browser, figure, series)) == 2
