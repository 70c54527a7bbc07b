"""tinyllm: the course's small LLM inference engine (reference workspace)."""
