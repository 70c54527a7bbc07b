"""tinyllm: the course's small LLM inference engine (contract stubs)."""
