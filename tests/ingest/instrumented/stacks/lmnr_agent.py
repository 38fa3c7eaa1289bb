"""Laminar's SDK (`lmnr`): `Laminar.initialize` makes its own tracer and logger providers
and instruments every library it finds installed (its forks of OpenLLMetry's
instrumentations and its own, each span stamped with `lmnr.*` attributes by its span
processor). Laminar exports only through its own OTLP exporters, so here they post to a
loopback OTLP/HTTP receiver (`otlp_receiver`) that writes the harness's files. The raw
OpenAI loop (`lmnr-openai`, `-stream`: `driver.converse`, run by `lmnr_loop`) or
LangGraph's prebuilt ReAct agent on `ChatOpenAI` (`lmnr-langgraph`, `-stream`:
`langgraph_agent.converse`)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.ingest.instrumented.stacks.common import main, openai_or_langgraph
from tests.ingest.instrumented.stacks.otlp_receiver import receiver


def run(stack: str, scenario: str, base_url: str, out: Path) -> None:
    with receiver(out, scenario) as url:
        port = urlsplit(url).port
        from lmnr import Laminar

        Laminar.initialize(project_api_key="test-key", base_url="http://127.0.0.1",
                           http_port=port, force_http=True)  # fmt: skip
        try:
            openai_or_langgraph(base_url, stack, scenario)
        finally:
            Laminar.shutdown()


ENV = {"LMNR_BASE_URL": "http://127.0.0.1"}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
