"""The page in a real headless Chromium: ask a bundled question, wait for answer and drawn subgraph.

Needs the Debian `chromium` + `chromium-driver` packages (.ci/run installs them when missing).
"""

import dataclasses
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.serve.conftest import free_port, serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="chromium + chromium-driver not installed (.ci/run installs them)")
CHAIN_PLAN = '{"hops": ["Who directed Inception?", "Where was #1 born?"]}'


def _chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def _ask_scripted(driver, config, session, question: str, read_only: bool = True) -> None:
    """Serve `session`'s app, ask `question` on the page (the page's writes off when `read_only`) and wait
    for its answer."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from enrich_rag.serve.app import create_app

    with serving(create_app(config, session)) as url:
        driver.get(url)
        WebDriverWait(driver, 60).until(lambda d: "nodes" in d.find_element(By.ID, "stats").text)
        if read_only:
            driver.find_element(By.ID, "allow-enrich").click()
        driver.find_element(By.ID, "question").send_keys(question)
        driver.find_element(By.ID, "ask").click()
        WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "answer").get_attribute("data-state") in ("done", "error"))


@pytest.fixture
def server(gap_config, tmp_path):
    import httpx

    params = tmp_path / "serve-params.yaml"
    params.write_text(
        yaml.safe_dump(
            {"paths": dict(gap_config.paths.__dict__), "corpus": dict(gap_config.corpus.__dict__), "llm": {"backend": "embedded"}}
        )
    )
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("enrich-rag")), "serve", "--params", str(params), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            if process.poll() is not None:
                pytest.fail(f"server exited: {(tmp_path / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/api/graph/stats", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.mark.slow  # a served app with the real model, in Chromium
def test_ask_in_browser_renders_answer_subgraph_and_trace(server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = _chromium()
    try:
        driver.get(server)
        WebDriverWait(driver, 60).until(lambda d: "nodes" in d.find_element(By.ID, "stats").text)
        driver.find_element(By.ID, "allow-enrich").click()  # off: answer from the built graph only
        driver.find_element(By.ID, "question").send_keys("Who directed Inception?")
        driver.find_element(By.ID, "ask").click()
        WebDriverWait(driver, 300).until(lambda d: d.find_element(By.ID, "answer").get_attribute("data-state") in ("done", "error"))
        assert driver.find_element(By.ID, "answer").get_attribute("data-state") == "done", driver.find_element(By.ID, "status").text
        assert "Nolan" in driver.find_element(By.ID, "answer").text
        # Streamed: let in at once, then every step on the page while the answer was still pending, then the answer.
        log = driver.execute_script("return window.streamLog")
        kinds = [e["event"] for e in log]
        assert kinds[:2] == ["admitted", "step"] and kinds[-1] == "answer" and set(kinds[1:-1]) == {"step"}, kinds
        assert all(e["answerState"] == "pending" for e in log[:-1]) and log[0]["ms"] < log[-1]["ms"]
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return window.cy && window.cy.nodes().length") > 0)
        assert driver.execute_script("return window.cy.nodes().length") == int(
            driver.find_element(By.ID, "graph").get_attribute("data-nodes")
        )
        tools = [li.find_element(By.CLASS_NAME, "tool").text for li in driver.find_elements(By.CSS_SELECTOR, "#timeline li")]
        assert "GraphRank" in tools and "EnrichContext" in tools and "CheckSufficiency" in tools
        # The drawn passages are exactly the passages the reader read (its cited passages), structural edges
        # carry no label, and a passage node opens its text.
        passages = driver.execute_script("return window.cy.nodes('[passage = 1]').map((n) => n.data('chunk'))")
        read = driver.execute_script("return Array.from(document.querySelectorAll('#citations a')).map((a) => a.dataset.chunk)")
        facts = driver.execute_script("return window.lastAnswer.subgraph.fact_lines")
        context = driver.execute_script("return window.lastAnswer.subgraph.context")
        assert passages and sorted(passages) == sorted(context)
        assert set(read) == set(context) | {c for c in read if c not in context}  # the rest of the citations are fact lines
        assert len(read) == len(context) + len(facts)
        assert driver.execute_script("return window.cy.edges('[structural = 1]').filter((e) => e.data('label')).length") == 0
        driver.execute_script("window.cy.nodes('[passage = 1]')[0].emit('tap')")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "chunk-view").get_attribute("data-chunk") == passages[0])
        link = driver.find_element(By.CSS_SELECTOR, "#citations a")
        link.click()
        shown = link.get_attribute("data-chunk")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "chunk-view").get_attribute("data-chunk") == shown)
        assert "Inception" in driver.find_element(By.ID, "chunk-view").text
        shot = tmp_path / "answer.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        driver.quit()


@pytest.mark.slow  # a served app in Chromium
def test_the_page_lists_a_planned_questions_hops_and_draws_their_passages(gap_config, spacy_extractor):
    """The reader is scripted (a plan, then two sub-answers) so the question is planned whatever a model
    would say; the server, page, graph and indexes are real."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from enrich_rag.api import EnrichRAG
    from tests.scripted_llm import ScriptedLLM

    plan = CHAIN_PLAN
    plans_first = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, plan_when="always"))
    session = EnrichRAG(plans_first, llm=ScriptedLLM([(plan, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]), extractor=spacy_extractor)
    driver = _chromium()
    try:
        _ask_scripted(driver, plans_first, session, "Where was the director of Inception born?")
        assert driver.find_element(By.ID, "answer").text == "London", driver.find_element(By.ID, "status").text
        hops = driver.find_elements(By.CSS_SELECTOR, "#chain li")
        assert [h.get_attribute("data-hop") for h in hops] == ["1", "2"] and "Christopher Nolan" in hops[0].text
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return window.cy && window.cy.nodes().length") > 0)
        drawn = set(driver.execute_script("return window.cy.nodes('[passage = 1]').map((n) => n.data('chunk'))"))
        read = [a.get_attribute("data-chunk") for hop in hops for a in hop.find_elements(By.TAG_NAME, "a")]
        assert read and set(read) <= drawn  # every hop's passages are nodes of the drawn subgraph
    finally:
        driver.quit()
        session.close()


@pytest.mark.slow  # a served app in Chromium
def test_the_page_marks_a_hop_answered_from_a_learned_fact(gap_config, spacy_extractor):
    """A first session learns the chain's facts (written before the answer returns, `enrich="now"`); the
    page's question shares the first hop, which is shown as learned. Readers scripted as above."""
    from selenium.webdriver.common.by import By

    from enrich_rag.api import EnrichRAG
    from tests.scripted_llm import ScriptedLLM

    config = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, plan_when="always", enrich_when="now"))
    first = EnrichRAG(config, llm=ScriptedLLM([(CHAIN_PLAN, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]), extractor=spacy_extractor)
    with first:
        assert first.ask("Where was the director of Inception born?").answer == "London"
        learned = {f["question"]: f["id"] for f in first.graph.learned()}
    plan = '{"hops": ["Who directed Inception?", "When was #1 born?"]}'
    session = EnrichRAG(config, llm=ScriptedLLM([(plan, 2.0), ("1970", 1.1)]), extractor=spacy_extractor)
    driver = _chromium()
    try:
        _ask_scripted(driver, config, session, "When was the director of Inception born?", read_only=False)
        assert driver.find_element(By.ID, "answer").text == "1970", driver.find_element(By.ID, "status").text
        hops = driver.find_elements(By.CSS_SELECTOR, "#chain li")
        assert f"learned earlier: fact {learned['Who directed Inception?']}" in hops[0].text and "learned" not in hops[1].text
    finally:
        driver.quit()
        session.close()


@pytest.mark.slow  # a served app in Chromium
def test_the_page_highlights_the_line_that_states_the_answer_inside_its_passage(gap_config, spacy_extractor):
    """The reader is scripted (one answer, which the search's first read states); the server, page, search
    and indexes are real."""
    from selenium.webdriver.common.by import By

    from enrich_rag.api import EnrichRAG
    from tests.scripted_llm import ScriptedLLM

    config = dataclasses.replace(gap_config, agent=dataclasses.replace(gap_config.agent, first_read=5, hops=False))
    session = EnrichRAG(config, llm=ScriptedLLM([("London", 1.1)]), extractor=spacy_extractor)
    driver = _chromium()
    try:
        _ask_scripted(driver, config, session, "Where was Christopher Nolan born?")
        assert driver.find_element(By.ID, "answer").text == "London", driver.find_element(By.ID, "status").text
        marked = driver.find_element(By.CSS_SELECTOR, "#quote mark")
        assert marked.text == "Nolan was born in London in 1970."
        assert "Christopher Nolan is a British-American film director." in driver.find_element(By.ID, "quote").text  # inside its passage
    finally:
        driver.quit()
        session.close()


@pytest.mark.slow  # a served app in Chromium
@pytest.mark.integration  # builds two folders
def test_the_page_picks_a_workspace_and_asks_it(tmp_path):
    """Two built folders in one server: the page lists both, and a question asked after picking the
    second is answered from the second's documents. Reader scripted; builds, indexes, server and page real."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from enrich_rag.api import EnrichRAG
    from enrich_rag.config import load_config
    from enrich_rag.serve.app import create_app
    from tests.scripted_llm import ScriptedLLM
    from tests.serve.conftest import PROJECT_ROOT, build_two_workspaces

    overlays = build_two_workspaces(tmp_path)
    reader = ScriptedLLM([("Varno", 1.1)])
    projects = {n: EnrichRAG(load_config(PROJECT_ROOT / "params.yaml", o), llm=reader) for n, o in overlays.items()}
    driver = _chromium()
    try:
        app = create_app(projects["bridges"].config, projects["bridges"], name="bridges", others={"towers": projects["towers"]})
        with serving(app) as url:
            driver.get(url)
            WebDriverWait(driver, 60).until(lambda d: "nodes" in d.find_element(By.ID, "stats").text)
            picker = Select(driver.find_element(By.ID, "workspace"))
            assert driver.find_element(By.ID, "workspace").is_displayed()
            assert [o.text for o in picker.options] == ["bridges", "towers"] and picker.first_selected_option.text == "bridges"
            first_stats = driver.find_element(By.ID, "stats").text
            picker.select_by_visible_text("towers")
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "stats").text not in ("", first_stats))
            driver.find_element(By.ID, "question").send_keys("Where does the Plimsoll Tower stand?")
            driver.find_element(By.ID, "ask").click()
            WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "answer").get_attribute("data-state") in ("done", "error"))
            assert driver.find_element(By.ID, "answer").text == "Varno", driver.find_element(By.ID, "status").text
            cited = driver.execute_script("return window.lastAnswer.citations.map((c) => c.doc_id)")
            assert cited and set(cited) == {"plimsoll.md"}
            driver.refresh()  # the pick is remembered
            WebDriverWait(driver, 60).until(lambda d: "nodes" in d.find_element(By.ID, "stats").text)
            assert Select(driver.find_element(By.ID, "workspace")).first_selected_option.text == "towers"
    finally:
        driver.quit()
        for project in projects.values():
            project.close()
