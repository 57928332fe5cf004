"""Training, evaluation and tournaments for grinch_env agents."""
