"""A ``--mine`` suite of probes (issue #24's acceptance tests copy it as ``test_probe.py`` beside
``olsnoop.py`` and ``olv_config.py``, and ``mine_cheat.py`` as ``test_cheat.py``). Its one test
always fails, with what the probes found as its message, which the acceptance test reads back from
``ol tests --mine --json``: one test only, since every test costs its time once per
implementation (71 of them); the cheating test rides along in the same run for the same reason
(it is judged on its own entry of the report, and shares olsnoop's search for the checkout)."""

import secrets

import olsnoop
import tinyllm.prob.rejection  # noqa: F401 - imported as a student's test would
from olv_config import CONFIG


def test_probe():
    seen = olsnoop.look(CONFIG["token"])  # what earlier runs left, before leaving our own
    left = olsnoop.leave(CONFIG["token"] + secrets.token_hex(3), daemon=False)
    olsnoop.report({"view": olsnoop.view(CONFIG),
                    "exfiltrate": olsnoop.exfiltrate(CONFIG["rels"]),
                    "identity": olsnoop.identity({**CONFIG, "acts": False}),
                    "cross_run": {"found": seen["found"], "left": left["left"]}}, limit=2300)
