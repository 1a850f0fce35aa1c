"""The library's conventions, in one place: special token ids and the pointer network's start.

Every tokenizer, data task, decoder and serving function of keras-adl reads these names; none
writes the numbers itself.

Token ids shared by every vocabulary (text pairs, dates, captions, documents):

- `PAD` = 0: padding. Masks are ``ids != PAD``, and ``Embedding(mask_zero=True)`` relies on
  it being 0.
- `START` = 1: ``<s>``, the decoder input of the first step (teacher forcing and decoding).
- `END` = 2: ``</s>``, the token a target ends with; decoding stops after emitting it.
- `UNK` = 3: ``<unk>``, any token outside the vocabulary.
- `NUM_SPECIAL_TOKENS` = 4: the ids the specials take; vocabulary entry ``i`` has id
  ``i + NUM_SPECIAL_TOKENS``, so a vocabulary of ``n`` entries gives ``n + NUM_SPECIAL_TOKENS``
  ids (an ``Embedding``'s ``input_dim``).
- `SPECIAL_TOKENS`: the display strings of ids 0-3, ``("<pad>", "<s>", "</s>", "<unk>")``.

A vocabulary that has no use for some special (a classifier's documents never hold ``<s>``)
still leaves its id free, so an id means the same thing everywhere.

The pointer network (sorting task): its decoder input of the first step is `START_VALUE` =
-1.0, a value outside the ``[0, 1)`` range the numbers are drawn from.

Example:

>>> SPECIAL_TOKENS[PAD], SPECIAL_TOKENS[START], SPECIAL_TOKENS[END], SPECIAL_TOKENS[UNK]
('<pad>', '<s>', '</s>', '<unk>')
>>> len(SPECIAL_TOKENS) == NUM_SPECIAL_TOKENS
True
"""

__all__ = ["PAD", "START", "END", "UNK", "NUM_SPECIAL_TOKENS", "SPECIAL_TOKENS", "START_VALUE"]


PAD = 0
START = 1
END = 2
UNK = 3
NUM_SPECIAL_TOKENS = 4
SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")

START_VALUE = -1.0
