"""The pages in a real browser: Debian's chromium, driven by selenium through chromedriver.

A paused run made by another process waits in a SQLite store; ``python -m runner.web``
serves it (a third process); the test opens the inbox with the address it printed,
approves one request and rejects the other, and follows the link to the trace page until
the run has finished there. Screenshots of each page are kept under
``test-artifacts/web/`` at the repository's root (gitignored).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.subprocess

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = ROOT / "test-artifacts" / "web"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,900",
)
WAIT = 60.0  # seconds a page may take to show what the test waits for (a bound, not a check)


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless chromium with a fresh profile, quit after the test; a machine without
    chromium or its driver fails the test saying what to install."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(
            f"the browser tests need {' and '.join(missing)}: "
            "apt-get install -y chromium chromium-driver (make setup does it as root)"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the browser tests need selenium: pip install -e '.[dev]'")
    profile = tempfile.mkdtemp(prefix="hookline-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def pause_in_another_process(database: Path) -> str:
    """The id of a janitor run a process of its own paused in the store at ``database``."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.web_pause", str(database)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def paused_elsewhere(tmp_path: Path) -> tuple[Path, str]:
    """A store file holding a run another process paused, and that run's id."""
    database = tmp_path / "sessions.db"
    return database, pause_in_another_process(database)


@pytest.fixture
def server(paused_elsewhere: tuple[Path, str]) -> Iterator[str]:
    """``python -m runner.web --capture`` over that store on 127.0.0.1 at a free port: the
    address it printed (with the token); stopped after the test."""
    database, _ = paused_elsewhere
    command = [
        sys.executable,
        "-m",
        "runner.web",
        "--store",
        str(database),
        "--agent",
        "examples.web_inbox:make_runner",
        "--capture",
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("hookline inbox: http://127.0.0.1:"), line
        yield line.split(": ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def decide_all(base: str, token: str, run_id: str) -> None:
    """Approve every request of ``run_id`` over the JSON API, as a script would."""
    bearer = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    asked = urllib.request.Request(base + "/api/paused", headers=bearer)
    with urllib.request.urlopen(asked, timeout=30) as response:
        (run,) = [each for each in json.load(response)["runs"] if each["run_id"] == run_id]
    body = {"decisions": {request["id"]: {"kind": "approve"} for request in run["pending"]}}
    decided = urllib.request.Request(
        f"{base}/api/runs/{run_id}/decide", json.dumps(body).encode(), bearer
    )
    with urllib.request.urlopen(decided, timeout=30) as response:
        assert response.status == 202


def shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / name))


def test_a_person_approves_and_rejects_and_watches_the_run_finish(
    browser: Any, server: str, paused_elsewhere: tuple[Path, str]
) -> None:
    """Approve one deletion, reject the other, follow the link: the trace shows the run
    completed with the approved call's result and the hook decisions of the resume. A
    run another process pauses meanwhile shows up in the open inbox; once someone else
    decided it, the inbox says so and takes no second decision."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    database, run_id = paused_elsewhere
    wait = WebDriverWait(browser, WAIT)
    base, token = server.split("/?token=")
    browser.get(server)
    mine = f'section[data-run="{run_id}"] [data-request]'
    cards = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, mine) or None)
    assert [c.find_element(By.CLASS_NAME, "reason").text for c in cards] == [
        "delete old.log?",
        "delete notes.txt?",
    ]
    assert token not in browser.current_url
    assert "AskBeforeDeleting" in cards[0].text
    later = pause_in_another_process(database)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'section[data-run="{later}"]') or None)
    shot(browser, "inbox-paused.png")

    first, second = (c.get_attribute("data-request") for c in cards)
    browser.find_element(
        By.CSS_SELECTOR, f'input[name="decision-{first}"][value="approve"]'
    ).click()
    browser.find_element(
        By.CSS_SELECTOR, f'input[name="decision-{second}"][value="reject"]'
    ).click()
    message = browser.find_element(By.CSS_SELECTOR, f'[data-request="{second}"] [data-message]')
    message.send_keys("keep the notes")
    browser.find_element(By.CSS_SELECTOR, f'button[data-submit="{run_id}"]').click()
    link = wait.until(shown.element_to_be_clickable((By.CSS_SELECTOR, "a.trace-link")))
    shot(browser, "inbox-decided.png")

    link.click()
    wait.until(shown.text_to_be_present_in_element((By.ID, "status"), "finished"))
    status = browser.find_element(By.ID, "status")
    assert "completed" in status.get_attribute("class")
    assert "Done: deleted old.log; keep the notes" in status.text
    tree = browser.find_element(By.ID, "tree").text
    assert "tool delete_file (call c1)" in tree
    assert "before_tool" in tree
    shot(browser, "trace-finished.png")

    browser.get(base + "/")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'section[data-run="{later}"]') or None)
    assert [
        section.get_attribute("data-run")
        for section in browser.find_elements(By.CSS_SELECTOR, "section[data-run]")
    ] == [later]
    decide_all(base, token, later)  # another person, elsewhere
    wait.until(
        shown.text_to_be_present_in_element(
            (By.CSS_SELECTOR, f'section[data-run="{later}"] .result'), "decided elsewhere"
        )
    )
    assert not browser.find_element(By.CSS_SELECTOR, f'button[data-submit="{later}"]').is_enabled()


def test_the_trace_draws_a_sub_agent_inside_the_call_that_ran_it(
    browser: Any, tmp_path: Path
) -> None:
    """A finished run with a sub-agent, drawn from the store's records: the sub-agent's
    turn sits inside the parent's tool call that ran it, and the run's answer shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    from runner import (
        Agent,
        ModelResponse,
        Runner,
        ScriptedModel,
        SessionStore,
        SQLiteSessionStore,
        ToolCall,
    )
    from runner.web import serve_in_thread

    helper = Agent("helper", ScriptedModel([ModelResponse("two")]))
    asks = ModelResponse(tool_calls=(ToolCall("k1", "helper", {"request": "1 + 1?"}),))
    root = Agent("root", ScriptedModel([asks, ModelResponse("it is two")]), sub_agents=[helper])

    def make(store: SessionStore) -> Runner:
        return Runner(root, sessions=store)

    with SQLiteSessionStore(tmp_path / "s.db") as store:
        with make(store) as runner:
            run_id = runner.run("ask the helper").run_id
        with serve_in_thread(make, store, capture=True) as server:
            browser.get(server.url(f"/trace/{run_id}?token={server.token}"))
            wait = WebDriverWait(browser, WAIT)
            wait.until(shown.text_to_be_present_in_element((By.ID, "status"), "it is two"))
            nested = browser.find_element(
                By.CSS_SELECTOR, '[data-call="k1"] [data-branch="root/helper"]'
            )
            assert "answered: two" in nested.text
            shot(browser, "trace-sub-agent.png")
