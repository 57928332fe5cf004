"""The token layout both games' ``tokens`` modules share, so one network reads every game (training/learner/net.py).

A token is ``NUM_IDS`` integer id columns (``TYPE``, ``CARD``, ``SEAT``, ``POS``, each
looked up in its own embedding of the vocabulary size below) followed by
``NUM_DENSE`` float columns. Action tokens have the same width; their second
id column is a second card (``CARD2``) where a seat would be.
"""

TYPE, CARD, SEAT, POS = 0, 1, 2, 3
CARD2 = 2  # action tokens: the second card column takes the seat column's place
NUM_IDS = 4
NUM_DENSE = 32
TOKEN_DIM = NUM_IDS + NUM_DENSE
ACTION_DIM = NUM_IDS + NUM_DENSE
TYPE_VOCAB, CARD_VOCAB, SEAT_VOCAB, POS_VOCAB = 8, 64, 8, 16
NO_CARD = 0  # card column: 0 = none, a card (or Gnoming kind) c is c + 1

__all__ = ["ACTION_DIM", "CARD", "CARD2", "CARD_VOCAB", "NO_CARD", "NUM_DENSE", "NUM_IDS", "POS", "POS_VOCAB", "SEAT", "SEAT_VOCAB",
           "TOKEN_DIM", "TYPE", "TYPE_VOCAB"]
