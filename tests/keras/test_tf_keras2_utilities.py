"""Differential tests against TF 2.21 + tf_keras of Keras 2's utilities: pad_sequences,
timeseries_dataset_from_array, the F1/F-beta, R2 and mean-IoU metrics (also summed over 2
replicas of a MirroredStrategy), CosineDecayRestarts, and the configs of each."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

_UTILS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        out = {}
        pad = tf.keras.preprocessing.sequence.pad_sequences
        seqs = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
        out["pad_default"] = tf.keras.utils.pad_sequences(seqs)
        out["pad_post"] = pad(seqs, maxlen=3, padding="post", truncating="post", value=-1)
        out["pad_float"] = pad([[0.5, 1.5], [2.5]], dtype="float32", maxlen=4)
        out["pad_items"] = pad([[[1, 2], [3, 4]], [[5, 6]]], maxlen=3)
        data = np.arange(40, dtype="float32").reshape(20, 2)
        targets = np.arange(20) * 10
        for name, kwargs in {
            "ts": dict(sequence_length=4, batch_size=3),
            "ts_strided": dict(sequence_length=3, sequence_stride=2, sampling_rate=2,
                               batch_size=2),
            "ts_range": dict(sequence_length=3, start_index=2, end_index=15, batch_size=4),
        }.items():
            ds = tf.keras.utils.timeseries_dataset_from_array(data, targets, **kwargs)
            xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
            out[name + "_x"], out[name + "_y"] = list(xs), list(ys)
        single = tf.keras.preprocessing.timeseries_dataset_from_array(
            data[:, 0], None, 5, sequence_stride=3, batch_size=None)
        out["ts_single"] = [x.numpy() for x in single]
        shuffled = tf.keras.utils.timeseries_dataset_from_array(
            data, targets, 3, batch_size=None, shuffle=True, seed=7)
        out["ts_shuffled_pairs"] = np.array(sorted(
            (float(x.numpy()[0, 0]), float(y.numpy())) for x, y in shuffled))
        sched = tf.keras.optimizers.schedules
        for name, schedule in {
            "sgdr": sched.CosineDecayRestarts(0.1, 10),
            "sgdr_t1": sched.CosineDecayRestarts(0.05, 7, t_mul=1.0, m_mul=0.5, alpha=0.1),
            "sgdr_t3": sched.CosineDecayRestarts(1.0, 4, t_mul=3.0, m_mul=0.8),
        }.items():
            out[name] = np.array([float(schedule(s)) for s in range(0, 120, 3)])
        return out
    """
)

_METRICS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng(2)
        labels = (rng.random((12, 3)) > 0.5).astype("float32")
        probs = rng.random((12, 3)).astype("float32")
        values = rng.standard_normal((12, 2)).astype("float32")
        noisy = (values + 0.5 * rng.standard_normal((12, 2))).astype("float32")
        classes, predicted = rng.integers(0, 4, 12), rng.integers(0, 4, 12)
        sw = rng.random(12).astype("float32")
        M = tf.keras.metrics
        made = {
            "f1": (M.F1Score(), labels, probs),
            "f1_macro_t": (M.F1Score(average="macro", threshold=0.4), labels, probs),
            "f1_micro": (M.F1Score(average="micro", threshold=0.6), labels, probs),
            "fbeta_weighted": (M.FBetaScore(average="weighted", beta=2.0), labels, probs),
            "r2": (M.R2Score(), values, noisy),
            "r2_raw": (M.R2Score(class_aggregation=None), values, noisy),
            "r2_variance_adjusted": (
                M.R2Score(class_aggregation="variance_weighted_average", num_regressors=2),
                values, noisy),
            "miou": (M.MeanIoU(4), classes, predicted),
            "miou_ignore": (M.MeanIoU(4, ignore_class=2), classes, predicted),
            "miou_dense": (M.MeanIoU(3, sparse_y_true=False, sparse_y_pred=False),
                           labels, probs),
        }
        if len(devices) > 1:
            strategy = tf.distribute.MirroredStrategy(
                devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        else:
            strategy = tf.distribute.get_strategy()
        out = {}
        for name, (metric_, y_true, y_pred) in made.items():
            with strategy.scope():
                metric = type(metric_).from_config(metric_.get_config())
            weighted = name in ("f1", "r2", "miou")
            for half in (slice(0, 6), slice(6, 12)):
                t, p, w = y_true[half], y_pred[half], sw[half]
                if len(devices) == 1:
                    metric.update_state(t, p, sample_weight=w if weighted else None)
                    continue
                parts = [np.split(a, 2) for a in (t, p, w)]
                def fn(ctx, parts=parts):
                    r = ctx.replica_id_in_sync_group
                    return tuple(tf.constant(a[r]) for a in parts)
                args = strategy.experimental_distribute_values_from_function(fn)
                def step(a, b, c):
                    metric.update_state(a, b, sample_weight=c if weighted else None)
                strategy.run(step, args=args)
            out[name] = np.asarray(metric.result())
            config = json.dumps(metric.get_config(), default=str)
            out[name + "_config"] = np.frombuffer(config.encode(), np.uint8)
        return out
    """
).replace("def case(", "import json\\ndef case(", 1)


def test_pad_sequences_timeseries_and_schedule_match_tf():
    ours = tf_oracle.run_simdist(_UTILS)
    theirs, failures = tf_oracle.run_tf({"utils": (_UTILS, ours, 1)})
    assert not failures, failures
    tf_oracle.assert_match("utils", ours, theirs["utils"], rtol=1e-6, atol=1e-7)
    assert ours["pad_default"][0].dtype == theirs["utils"]["pad_default"][0].dtype


@pytest.mark.parametrize("devices", [1, 2])
def test_score_metrics_match_tf(devices):
    source = _METRICS.replace("import json\\n", "import json\n")
    ours = tf_oracle.run_simdist(source, devices)
    theirs, failures = tf_oracle.run_tf({"metrics": (source, ours, devices)})
    assert not failures, failures
    theirs = theirs["metrics"]
    for key, values in ours.items():
        if key.endswith("_config"):
            mine = json.loads(bytes(values[0]).decode())
            tf_config = json.loads(bytes(theirs[key][0]).decode())
            assert mine == tf_config, key
        else:
            np.testing.assert_allclose(values[0], theirs[key][0], rtol=1e-5, atol=1e-6,
                                       err_msg=key)  # fmt: skip
