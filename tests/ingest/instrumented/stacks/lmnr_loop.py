"""The raw OpenAI loop under Laminar's SDK (`lmnr-openai`, `-stream`): the set-up of
`lmnr_agent`, without an agent (its turns name none)."""

from __future__ import annotations

import sys

from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.lmnr_agent import ENV, run

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
