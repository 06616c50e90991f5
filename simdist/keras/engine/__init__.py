"""Keras's engine: the Layer base class, Model for subclassing, Sequential, InputLayer."""
