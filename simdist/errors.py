"""TensorFlow's error classes, with TF's names, raised by simdist where TF raises them.

``simdist.errors.InvalidArgumentError`` is what ``tf.errors.InvalidArgumentError`` is in
TensorFlow: an ``OpError`` subclass carrying an error code. Code that catches TF's errors by
name catches simdist's with ``import simdist as tf``.
"""

from __future__ import annotations

__all__ = [
    "OpError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "UnauthenticatedError",
]

# Error codes as in tensorflow/core/protobuf/error_codes.proto.
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """An operation failed at run time; ``message`` says why, ``error_code`` says what kind."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message: str = "", *args) -> None:
        # TF's signature is (node_def, op, message); simdist code passes the message alone.
        if op is None and not message and isinstance(node_def, str):
            node_def, message = None, node_def
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


def _error(name: str, code: int, doc: str) -> type[OpError]:
    return type(name, (OpError,), {"error_code": code, "__doc__": doc, "__module__": __name__})


CancelledError = _error("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _error("UnknownError", UNKNOWN, "An error of no other kind.")
InvalidArgumentError = _error(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument."
)
DeadlineExceededError = _error(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation finished."
)
NotFoundError = _error("NotFoundError", NOT_FOUND, "A requested entity (a file) was not found.")
AlreadyExistsError = _error("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _error(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run this operation."
)
ResourceExhaustedError = _error(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource (memory) has been exhausted."
)
FailedPreconditionError = _error(
    "FailedPreconditionError",
    FAILED_PRECONDITION,
    "The system is not in a state to run the operation (an uninitialized variable).",
)
AbortedError = _error("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _error(
    "OutOfRangeError", OUT_OF_RANGE, "An iterator or index ran past the valid range."
)
UnimplementedError = _error(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or not supported."
)
InternalError = _error("InternalError", INTERNAL, "An invariant of the system broke.")
UnavailableError = _error("UnavailableError", UNAVAILABLE, "The runtime is currently unavailable.")
DataLossError = _error("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _error(
    "UnauthenticatedError", UNAUTHENTICATED, "The request lacks valid credentials."
)
