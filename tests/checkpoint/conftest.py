"""Fixtures for the checkpoint tests."""

import pytest
from ckpt_helpers import make_cnn, train_steps

import simdist as tf
from simdist import train


@pytest.fixture
def trained(tmp_path):
    """(model, optimizer, checkpoint, directory) after three training steps."""
    model = make_cnn()
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    train_steps(model, optimizer)
    checkpoint = train.Checkpoint(optimizer=optimizer, model=model)
    return model, optimizer, checkpoint, tmp_path
