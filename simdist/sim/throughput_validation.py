"""The step model against one published training-throughput table: ResNet-50 v1.5 on DGX A100.

NVIDIA's DeepLearningExamples publishes ResNet-50 v1.5 training throughput for TensorFlow on
a DGX A100 (8x A100 40GB), batch 256 per GPU, images per second averaged over an epoch,
TensorFlow 20.06-tf1 NGC container, with XLA (:data:`PUBLISHED`). simdist prices the same
step with :func:`simdist.cost.price_step`: the ResNet-50 v1.5 graph built by
:func:`resnet50` (25,557,032 weights, as Keras' ResNet50), each layer by its compute
description, TF32 (``float32``) or mixed precision (``float16``), SGD with momentum, NCCL's
model for the gradient all-reduce, on the ``dgx-a100`` preset with the 40GB part's HBM
bandwidth (1,555 GB/s, NVIDIA A100 datasheet). Nothing is fitted: the error is reported as
it comes out.

``python -m simdist.sim.throughput_validation`` prints the table docs/cost-model.md holds.
"""

from __future__ import annotations

import dataclasses
import functools

import simdist as tf
from simdist.cost import price_step
from simdist.topology import get_topology

__all__ = ["PUBLISHED", "ThroughputRow", "resnet50", "validate", "throughput_markdown"]

GB = 1e9
A100_40GB_HBM = 1555 * GB  # NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM: 1,555 GB/s
SOURCE = (
    "https://github.com/NVIDIA/DeepLearningExamples/blob/master/TensorFlow/Classification/"
    "ConvNets/resnet50v1.5/README.md (Training performance: NVIDIA DGX A100 (8x A100 40GB), "
    "TensorFlow 20.06-tf1-py3 NGC container, training_perf.sh)"
)


@dataclasses.dataclass(frozen=True)
class ThroughputRow:
    """One published throughput: GPUs, precision and images per second."""

    gpus: int
    precision: str  # "TF32 + XLA" or "mixed precision + XLA"
    dtype: str  # the dtype simdist prices it at
    batch_per_gpu: int
    images_per_second: float
    source: str = SOURCE


PUBLISHED: tuple[ThroughputRow, ...] = (
    ThroughputRow(1, "TF32 + XLA", "float32", 256, 909.0),
    ThroughputRow(8, "TF32 + XLA", "float32", 256, 7000.0),
    ThroughputRow(1, "mixed precision + XLA", "float16", 256, 2375.0),
    ThroughputRow(8, "mixed precision + XLA", "float16", 256, 17400.0),
)


def _conv_bn(x, filters: int, kernel: int, strides: int = 1, relu: bool = True):
    layers = tf.keras.layers
    x = layers.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.ReLU()(x) if relu else x


def _bottleneck(x, filters: int, strides: int, project: bool):
    shortcut = _conv_bn(x, 4 * filters, 1, strides, relu=False) if project else x
    y = _conv_bn(x, filters, 1)
    y = _conv_bn(y, filters, 3, strides)  # v1.5: the stride is on the 3x3, not the first 1x1
    y = _conv_bn(y, 4 * filters, 1, relu=False)
    return tf.keras.layers.ReLU()(tf.keras.layers.Add()([y, shortcut]))


def resnet50(input_shape=(224, 224, 3), classes: int = 1000, stages=(3, 4, 6, 3)):
    """ResNet-50 v1.5 as a Functional model (``stages``: bottleneck blocks per stage)."""
    inputs = tf.keras.Input(input_shape)
    x = _conv_bn(inputs, 64, 7, 2)
    x = tf.keras.layers.MaxPooling2D(3, 2, padding="same")(x)
    for stage, blocks in enumerate(stages):
        filters = 64 * 2**stage
        for i in range(blocks):
            x = _bottleneck(x, filters, (1 if stage == 0 else 2) if i == 0 else 1, i == 0)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(classes)(x), name="resnet50")


def _dgx_a100_40gb():
    topology = get_topology("dgx-a100")
    devices = tuple(
        dataclasses.replace(d, memory_bandwidth=A100_40GB_HBM) for d in topology.devices
    )
    return dataclasses.replace(topology, name="dgx-a100 (A100 40GB HBM)", devices=devices)


@dataclasses.dataclass(frozen=True)
class Validation:
    row: ThroughputRow
    predicted: float  # images per second
    step_time: float
    exposed_comm_time: float

    @property
    def error(self) -> float:
        return self.predicted / self.row.images_per_second - 1


@functools.lru_cache(maxsize=2)
def _model(input_shape: tuple[int, ...], stages: tuple[int, ...]):
    return resnet50(input_shape, stages=stages)


def validate(
    rows=PUBLISHED, input_shape=(224, 224, 3), stages=(3, 4, 6, 3)
) -> tuple[Validation, ...]:
    """Price each row's step (other ``input_shape``/``stages`` only for quick checks)."""
    model, topology = _model(tuple(input_shape), tuple(stages)), _dgx_a100_40gb()
    results = []
    for row in rows:
        step = price_step(
            model, tuple(input_shape), row.batch_per_gpu * row.gpus, topology, row.gpus,
            dtype=row.dtype, optimizer="momentum",
        )  # fmt: skip
        images = row.batch_per_gpu * row.gpus / step.step_time
        results.append(Validation(row, images, step.step_time, step.exposed_comm_time))
    return tuple(results)


def throughput_markdown(results=None) -> str:
    """The table docs/cost-model.md prints: published and predicted images/s, the error."""
    results = validate() if results is None else results
    lines = [
        "| GPUs | precision (published) | simdist dtype | batch/GPU | published img/s "
        "| predicted img/s | error | predicted step | exposed all-reduce |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r.row.gpus} | {r.row.precision} | {r.row.dtype} | {r.row.batch_per_gpu} | "
            f"{r.row.images_per_second:.0f} | {r.predicted:.0f} | {r.error * 100:+.0f}% | "
            f"{r.step_time * 1e3:.1f} ms | {r.exposed_comm_time * 1e3:.2f} ms |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(throughput_markdown())
