"""The raw OpenAI loop under Langtrace's SDK (`langtrace-openai`, `-stream`): the set-up of
`langtrace_agent`, without an agent (its turns name none)."""

from __future__ import annotations

import sys

from tests.ingest.instrumented.stacks.common import main
from tests.ingest.instrumented.stacks.langtrace_agent import ENV, run

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], ENV, run))
