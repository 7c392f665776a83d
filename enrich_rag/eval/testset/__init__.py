"""Synthetic test sets over the user's own graph: candidate facts, LLM-written questions, filters."""
