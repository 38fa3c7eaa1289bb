"""The bundled demo: simulated research-assistant agents emitting real OTel GenAI spans.

`generate_demo` writes OTLP/JSON-lines trace files (one per UTC day) and a labels file;
`turnscore demo` ingests and scores them. The world (documents, tools), the labelled
questions and the agent policies are plain data and functions, deterministic per seed.
"""

from turnscore.demo.generate import DemoFiles, generate_demo
from turnscore.demo.policies import POLICIES
from turnscore.demo.questions import QUESTIONS, SPECIAL_REQUESTS, Question

__all__ = ["POLICIES", "QUESTIONS", "SPECIAL_REQUESTS", "DemoFiles", "Question", "generate_demo"]
