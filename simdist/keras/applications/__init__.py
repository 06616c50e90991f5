"""``tf.keras.applications``: Keras 2's standard image models, built layer by layer as Keras 2
builds them (re-exports only).

``ResNet50``/``101``/``152``, ``ResNet50V2``/``101V2``/``152V2``, ``MobileNetV2`` and
``VGG16``/``VGG19``, with their modules (``resnet``, ``resnet50``, ``resnet_v2``,
``mobilenet_v2``, ``vgg16``, ``vgg19``, ``imagenet_utils``) and each module's
``preprocess_input`` / ``decode_predictions``. ``weights=None`` gives a randomly initialised
model and a path loads weights saved by simdist; ``weights="imagenet"`` raises
``ConnectionError`` (simdist downloads nothing). docs/keras-models.md has the details.
"""

from simdist.keras._missing import missing_name
from simdist.keras.applications import imagenet_utils as imagenet_utils
from simdist.keras.applications import mobilenet_v2 as mobilenet_v2
from simdist.keras.applications import resnet as resnet
from simdist.keras.applications import resnet50 as resnet50
from simdist.keras.applications import resnet_v2 as resnet_v2
from simdist.keras.applications import vgg16 as vgg16
from simdist.keras.applications import vgg19 as vgg19
from simdist.keras.applications.mobilenet_v2 import MobileNetV2 as MobileNetV2
from simdist.keras.applications.resnet import ResNet50 as ResNet50
from simdist.keras.applications.resnet import ResNet101 as ResNet101
from simdist.keras.applications.resnet import ResNet152 as ResNet152
from simdist.keras.applications.resnet_v2 import ResNet50V2 as ResNet50V2
from simdist.keras.applications.resnet_v2 import ResNet101V2 as ResNet101V2
from simdist.keras.applications.resnet_v2 import ResNet152V2 as ResNet152V2
from simdist.keras.applications.vgg16 import VGG16 as VGG16
from simdist.keras.applications.vgg19 import VGG19 as VGG19


def __getattr__(name: str):
    raise missing_name("tf.keras.applications", name)
