"""``tf.keras.applications.resnet50``: ResNet50 and its preprocessing (re-exports of ``resnet``)."""

from simdist.keras.applications.resnet import ResNet50 as ResNet50
from simdist.keras.applications.resnet import decode_predictions as decode_predictions
from simdist.keras.applications.resnet import preprocess_input as preprocess_input
