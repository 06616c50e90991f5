"""The cached ``trainable_weights`` list of a layer: it follows every change of what the
layer tracks (``base_layer.Layer.trainable_weights``, ``tracking.note_tracking_change``)."""

import numpy as np

import simdist as tf
from simdist.keras.layers import Dense, Layer


def _ids(weights) -> list[int]:
    return [id(w) for w in weights]


def _fresh(model) -> list[int]:
    """What the uncached walk gives (the cache dropped first)."""
    model.__dict__.pop("_trainable_weights_cache", None)
    return _ids(model.trainable_weights)


class Holder(Layer):
    def __init__(self):
        super().__init__()
        self.blocks = [Dense(2)]
        self.table = {"a": Dense(2)}

    def call(self, x):
        for block in [*self.blocks, *self.table.values()]:
            x = block(x)
        return x


def _built() -> Holder:
    holder = Holder()
    holder(np.ones((1, 2), np.float32))
    return holder


def test_repeated_reads_give_equal_fresh_lists():
    holder = _built()
    first = holder.trainable_weights
    first.append("not a weight")  # the caller's list is its own
    assert _ids(holder.trainable_weights) == _ids(first[:-1])
    assert len(holder.trainable_weights) == 4


def test_a_layer_appended_to_a_tracked_list_is_seen():
    extra = Dense(2)
    extra.build((1, 2))  # built first: the append below is the only change
    holder = _built()
    before = holder.trainable_weights
    holder.blocks.append(extra)
    after = holder.trainable_weights
    assert len(after) == len(before) + 2
    assert _ids(after) == _fresh(holder)


def test_a_layer_put_in_a_tracked_dict_is_seen():
    extra = Dense(2)
    extra.build((1, 2))
    holder = _built()
    assert len(holder.trainable_weights) == 4  # cached now
    holder.table["b"] = extra
    assert _ids(holder.trainable_weights[-2:]) == _ids(extra.trainable_weights)


def test_a_weight_added_later_and_an_attribute_reassigned_are_seen():
    holder = _built()
    assert len(holder.trainable_weights) == 4  # cached now
    w = holder.add_weight("late", shape=(3,))
    assert holder.trainable_weights[0] is w
    holder.blocks = []
    assert _ids(holder.trainable_weights) == _fresh(holder)
    assert len(holder.trainable_weights) == 3
    holder.own = tf.Variable(1.0)
    assert any(v is holder.own for v in holder.trainable_weights)


def test_a_sub_layer_built_later_is_seen():
    model = tf.keras.Sequential([Dense(3), Dense(1)])
    assert model.trainable_weights == []
    model(np.ones((2, 4), np.float32))
    assert len(model.trainable_weights) == 4


def test_trainable_flags_of_sub_layers_are_followed():
    model = tf.keras.Sequential([Dense(3), Dense(1)])
    model(np.ones((2, 4), np.float32))
    assert len(model.trainable_weights) == 4
    model.layers[0].trainable = False
    assert _ids(model.trainable_weights) == _ids(model.layers[1].trainable_weights)
    model.layers[0].trainable = True
    assert len(model.trainable_weights) == 4


def test_a_sub_layer_that_overrides_trainable_weights_is_always_asked():
    class Shifting(Dense):
        calls = 0

        @property
        def trainable_weights(self):
            Shifting.calls += 1
            return super().trainable_weights[: Shifting.calls % 2 + 1]

    model = tf.keras.Sequential([Shifting(2)])
    model(np.ones((1, 2), np.float32))
    lengths = {len(model.trainable_weights) for _ in range(4)}
    assert lengths == {1, 2}
