"""Adapters to other training libraries (imported on demand: each needs its library's extra)."""
