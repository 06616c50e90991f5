"""``tf.random.Generator``: an explicit random stream with its own state, deterministic.

A generator's state is TF's Philox layout, three int64 words ``[counter_lo, counter_hi,
key]``, kept as TF keeps it: ``from_seed(s)`` is ``[s, 0, 0]``, and a draw of ``n`` values
advances the 128-bit counter by ``256 * n`` (TF's Philox kernel's accounting), so ``g.state``
reads as TF's (``from_seed(1234)`` after a 2x3 ``normal``: ``[2770, 0, 0]``). The values of a
draw are a fresh NumPy ``Philox`` generator keyed by ``(counter, key)``: they depend on the
state alone, never on the global seed, thread order or NumPy's global state, and a
generator rebuilt ``from_state`` (or ``from_key_counter``) continues exactly where the
original was, and so does one restored from a ``tf.train.Checkpoint`` (the state is saved
under TF's name, ``_state_var``). As in TF, the state *is* the stream: two generators whose
states meet draw the same values from there on. ``split(n)`` draws ``n`` keys (advancing
the counter as a draw of ``n`` values) and gives children ``[0, 0, key_i]``, as TF does.
The numbers are simdist's own: they do not equal TF's.

Where TF is nondeterministic, simdist is not (docs/determinism.md):
``from_non_deterministic_state()`` gives the ``n``-th such generator of a process (each
worker of a virtual cluster is one) the key ``hash(n)``, so a program gets the same streams
on every run, and ``get_global_generator()`` is one of them, made on first use (until
``set_global_generator``).

Distribution strategies, as TF: a generator created in a strategy's scope (or inside
``strategy.run``) holds one state per replica (TF's mirrored state variable). Inside
``strategy.run`` replica ``r`` draws from its own state with the key hashed with ``r``, so
the replicas get different, reproducible streams; a draw in cross-replica context uses the
unhashed key and advances every replica's state (TF's ``extended.update``), and ``state``
there is replica 0's. A generator created outside any strategy and drawn from inside
``strategy.run`` is refused (NotImplementedError): TF serialises the replicas' draws there,
so which replica gets which numbers depends on the order they arrive in, which simdist's
determinism contract does not allow (docs/differences.md).
"""

from __future__ import annotations

import weakref

import numpy as np

from simdist import errors
from simdist.core import dtypes, trackable
from simdist.core import random as core_random
from simdist.core.context import process_state
from simdist.core.context import state as thread_state
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "Generator",
    "Algorithm",
    "get_global_generator",
    "set_global_generator",
]

_MASK64 = (1 << 64) - 1
_DRAW, _SPLIT, _NON_DETERMINISTIC, _REPLICA = 0x47454E, 0x53504C, 0x4E4454, 0x524550  # tags
COUNTER_STEPS_PER_VALUE = 256  # TF's Philox kernel advances its counter by 256 per value
PHILOX = 1  # TF's Algorithm.PHILOX value; the only algorithm simdist has


class _ProcessGenerators:
    """Per process (a virtual cluster's worker is one): fresh generators made, the global one."""

    def __init__(self) -> None:
        self.made = 0
        self.global_generator: Generator | None = None


_per_process: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _process() -> _ProcessGenerators:
    key = process_state()
    found = _per_process.get(key)
    if found is None:
        found = _per_process[key] = _ProcessGenerators()
    return found


class Algorithm:
    """TF's RNG algorithm names (``tf.random.Algorithm``): simdist runs Philox for all."""

    PHILOX = PHILOX
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg) -> int:
    if alg is None:
        return PHILOX
    names = {"philox": PHILOX, "threefry": 2, "auto_select": 3}
    value = names.get(alg.lower()) if isinstance(alg, str) else getattr(alg, "value", alg)
    if value != PHILOX:
        raise errors.InvalidArgumentError(
            f"simdist's tf.random.Generator implements the Philox algorithm only, got alg="
            f"{alg!r}; pass alg='philox' (or leave it out)."
        )
    return PHILOX


def _seed(seed) -> int:
    checked = core_random._check_seed(seed)
    if checked is None:
        raise TypeError("a Generator seed must be an integer, got None.")
    return checked


def _words_of(state) -> np.ndarray:
    words = np.asarray(convert_to_tensor(state)._value).reshape(-1)
    if words.shape != (3,):
        raise errors.InvalidArgumentError(
            f"a Philox generator state has 3 int64 words, got shape {list(words.shape)}."
        )
    return words.astype(np.int64)


def _advance(words: np.ndarray, count: int) -> None:
    """Move the 128-bit counter ``words[0:2]`` past ``count`` values (TF's accounting)."""
    counter = (int(words[0]) & _MASK64) + ((int(words[1]) & _MASK64) << 64)
    counter = (counter + COUNTER_STEPS_PER_VALUE * count) & ((1 << 128) - 1)
    words[0], words[1] = _int64(counter), _int64(counter >> 64)


def _int64(value: int) -> int:
    """A 64-bit word as a signed int64 (how TF's state variable holds it)."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def _count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


class _StateVar(trackable.Trackable):
    """The generator's state as a checkpoint holds it: TF's ``_state_var`` child, an int64
    ``VARIABLE_VALUE`` (replica 0's under a strategy, as TF saves the first replica's)."""

    def __init__(self, generator: Generator) -> None:
        self._generator = generator

    def _serialize_to_tensors(self) -> dict[str, np.ndarray]:
        return {trackable.VARIABLE_VALUE: self._generator._state.copy()}

    def _validate_restore(self, tensors: dict[str, np.ndarray]) -> None:
        value = tensors[trackable.VARIABLE_VALUE]
        if value.shape != (3,) or value.dtype != np.int64:
            raise ValueError(
                f"the checkpoint holds a generator state of shape {value.shape} and dtype "
                f"{value.dtype}; a Philox generator's is 3 int64 words."
            )

    def _restore_from_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        self._generator._set_all(tensors[trackable.VARIABLE_VALUE])


class Generator(trackable.Trackable):
    """A random stream with explicit state (``tf.random.Generator``).

    >>> import simdist as tf
    >>> g = tf.random.Generator.from_seed(1)
    >>> a = g.normal([2])
    >>> tf.random.Generator.from_seed(1).normal([2]).numpy().tolist() == a.numpy().tolist()
    True
    """

    def __init__(self, copy_from=None, state=None, alg=None) -> None:
        if copy_from is not None:
            if state is not None:
                raise ValueError("Generator takes copy_from or state, not both.")
            words = copy_from._state.copy()
            self._alg = copy_from._alg
        else:
            if state is None:
                raise ValueError("Generator needs copy_from or state; use Generator.from_seed.")
            words = _words_of(state)
            self._alg = _algorithm(alg)
        self._state = np.asarray(words, dtype=np.int64).copy()  # replica 0's, or the only one
        context, scopes = thread_state.replica_context, thread_state.strategy_stack
        if context is not None:
            self._strategy = context.strategy
        else:
            self._strategy = scopes[-1] if scopes else None
        replicas = 1 if self._strategy is None else self._strategy.num_replicas_in_sync
        self._replica_states = {r: self._state.copy() for r in range(1, replicas)}

    def _trackable_children(self) -> dict:
        """A checkpoint saves the state under ``_state_var``, TF's name for it."""
        return {"_state_var": _StateVar(self)}

    def _components(self) -> list[np.ndarray]:
        return [self._state, *self._replica_states.values()]

    def _replica(self) -> int | None:
        """The replica id when drawing inside ``strategy.run``, else None."""
        context = thread_state.replica_context
        return None if context is None else int(context.replica_id_in_sync_group)

    def _words(self) -> np.ndarray:
        replica = self._replica()
        if replica is None or replica == 0:
            return self._state
        return self._replica_states.setdefault(replica, self._state.copy())

    def _set_all(self, words: np.ndarray) -> None:
        for component in self._components():
            component[:] = words

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        """A generator whose stream is named by the integer ``seed``."""
        return cls(state=[_int64(_seed(seed)), 0, 0], alg=alg)

    @classmethod
    def from_state(cls, state, alg) -> Generator:
        """A generator continuing from a ``state`` read off another (``g.state``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> Generator:
        """A generator with the given Philox ``key`` (scalar) and ``counter`` (two words)."""
        counter_words = np.asarray(convert_to_tensor(counter)._value).reshape(-1)
        key_word = int(np.asarray(convert_to_tensor(key)._value).reshape(()))
        return cls(state=[int(counter_words[0]), int(counter_words[1]), key_word], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        """The program's next "fresh" generator; deterministic in simdist (module docstring)."""
        counts = _process()
        n, counts.made = counts.made, counts.made + 1
        key = int(core_random._generator(_NON_DETERMINISTIC, n).integers(0, 1 << 63))
        return cls(state=[0, 0, key], alg=alg)

    # --- state --------------------------------------------------------------------------
    @property
    def state(self) -> Tensor:
        """The int64 state ``[counter, 0, key]`` (a copy, as a tensor; TF's is a variable);
        inside ``strategy.run``, this replica's."""
        return make_tensor(self._words().copy(), dtypes.int64)

    @property
    def key(self) -> Tensor:
        return make_tensor(np.asarray(self._words()[2]), dtypes.int64)

    @property
    def algorithm(self) -> int:
        return self._alg

    def reset(self, state) -> None:
        """Replace the state with ``state`` (three int64 words; every replica's)."""
        self._set_all(_words_of(state))

    def reset_from_seed(self, seed) -> None:
        """Restart as ``Generator.from_seed(seed)`` would."""
        self._set_all(_words_of([_int64(_seed(seed)), 0, 0]))

    def reset_from_key_counter(self, key, counter) -> None:
        self._set_all(Generator.from_key_counter(key, counter, self._alg)._state)

    def skip(self, delta) -> None:
        """Advance the stream as if ``delta`` values had been drawn."""
        for words in self._components() if self._replica() is None else [self._words()]:
            _advance(words, int(delta))

    def _next(self, tag: int, count: int) -> np.random.Generator:
        """The NumPy generator for a draw of ``count`` values; the state advances past it."""
        replica = self._replica()
        if replica is None:  # cross-replica (or no strategy): every replica's state advances
            low, high, key = (int(w) & _MASK64 for w in self._state)
            for words in self._components():
                _advance(words, count)
            return core_random._generator(tag, low, high, key)
        if self._strategy is None:
            raise NotImplementedError(
                "this tf.random.Generator was created outside any strategy, and is drawn from "
                "inside strategy.run: TF then hands the replicas consecutive draws in the order "
                "they arrive, which simdist does not imitate (it would make results depend on "
                "thread order). Create the generator inside strategy.scope(): each replica then "
                "gets its own reproducible stream, as in TF."
            )
        words = self._words()
        low, high, key = (int(w) & _MASK64 for w in words)
        _advance(words, count)
        return core_random._generator(tag, _REPLICA, low, high, key, replica)

    # --- draws --------------------------------------------------------------------------
    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None) -> Tensor:
        """Normal values (the counter advances by 256 per value)."""
        dtype = core_random._float_dtype(dtype, "Generator.normal")
        shape = core_random._shape(shape)
        z = core_random._std_normal(self._next(_DRAW, _count(shape)), shape, dtype)
        return core_random._sample_normal(z, mean, stddev, dtype)

    def truncated_normal(
        self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None
    ) -> Tensor:
        """Normal values redrawn beyond 2 stddev from the mean."""
        dtype = core_random._float_dtype(dtype, "Generator.truncated_normal")
        shape = core_random._shape(shape)
        z = core_random._truncated(self._next(_DRAW, _count(shape)), shape, dtype)
        return core_random._sample_normal(z, mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None) -> Tensor:
        """Uniform values in ``[minval, maxval)``; integers need both bounds or neither.

        Raises:
            ValueError: an integer dtype with only one of ``minval``/``maxval`` given
                (``minval`` counts as given unless it is ``None``).
        """
        dtype = dtypes.as_dtype(dtype)
        shape = core_random._shape(shape)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(
                    f"For integer dtype {dtype!r}, minval and maxval must be both `None` or "
                    f"both non-`None`; got minval={minval} and maxval={maxval}"
                )
            if minval is None:
                info = np.iinfo(dtype.as_numpy_dtype)
                rng = self._next(_DRAW, _count(shape))
                values = rng.integers(info.min, info.max, size=shape, endpoint=True)
                return make_tensor(values.astype(info.dtype), dtype)
        rng = self._next(_DRAW, _count(shape))
        return core_random._sample_uniform(rng, shape, minval, maxval, dtype, "Generator.uniform")

    def uniform_full_int(self, shape, dtype=dtypes.int64, name=None) -> Tensor:
        """Integers over the dtype's whole range."""
        return self.uniform(shape, minval=None, maxval=None, dtype=dtype)

    def make_seeds(self, count=1) -> Tensor:
        """An int64 ``[2, count]`` tensor of seed pairs for the ``stateless_*`` ops."""
        keys = self._next(_DRAW, int(count)).integers(-(1 << 63), (1 << 63) - 1, size=int(count))
        return make_tensor(np.stack([keys, np.zeros_like(keys)]).astype(np.int64), dtypes.int64)

    def split(self, count=1) -> list[Generator]:
        """``count`` new, independent generators ``[0, 0, key_i]``; this one's counter
        advances as for a draw of ``count`` values."""
        count = int(count)
        if count < 0:
            raise ValueError(f"split needs count >= 0, got {count}.")
        keys = self._next(_SPLIT, count).integers(0, 1 << 63, size=count)
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]


def get_global_generator() -> Generator:
    """The global generator: the process's first non-deterministic one (made on first use)."""
    here = _process()
    if here.global_generator is None:
        here.global_generator = Generator.from_non_deterministic_state()
    return here.global_generator


def set_global_generator(generator: Generator) -> None:
    """Replace the global generator (``tf.random.set_global_generator``)."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator needs a tf.random.Generator, got {generator!r}.")
    _process().global_generator = generator
